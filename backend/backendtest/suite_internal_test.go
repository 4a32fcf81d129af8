package backendtest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

// faults break one rule each of the contract in the fake backend.
type faults struct {
	skipCheck, leakRefused, ignoreCtx, wrongID, quiet, forgetRuns, bareErrors, statusOfUnknown, deleteAll bool
}

// fake is the smallest backend that keeps the contract, unless a fault
// breaks it: runs kept by id, applications by name, in memory.
type fake struct {
	faults
	mu   sync.Mutex
	runs map[string]string
	apps map[string]bool
}

func newFake(f faults) *fake {
	return &fake{faults: f, runs: map[string]string{}, apps: map[string]bool{}}
}

func (f *fake) check(p *placement.Plan, kinds ...placement.Kind) error {
	if f.skipCheck {
		if p == nil {
			return errors.New("fake: no plan")
		}
		return nil
	}
	err := backend.CheckPlan("fake", p, kinds...)
	if err != nil && f.bareErrors {
		return errors.New("fake: refused")
	}
	return err
}

func (f *fake) Run(ctx context.Context, p *placement.Plan, opts backend.RunOptions) (*backend.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.leakRefused {
		f.runs[opts.SubmissionID] = "refused"
	}
	if err := f.check(p, backend.RunKinds()...); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil && !f.ignoreCtx {
		return nil, err
	}
	raw, err := p.MarshalIndent()
	if err != nil {
		return nil, err
	}
	digest := string(raw)
	if prev, ok := f.runs[opts.SubmissionID]; ok && prev != digest && !f.forgetRuns {
		return nil, fmt.Errorf("fake: run %s: %w", opts.SubmissionID, backend.ErrAlreadyExists)
	}
	f.runs[opts.SubmissionID] = digest
	out := &backend.Outcome{Backend: "fake", Ran: true, ID: opts.SubmissionID, State: backend.StateSucceeded}
	if f.wrongID {
		out.ID = p.Name
	}
	if opts.OnStatus != nil && !f.quiet {
		opts.OnStatus(backend.Status{ID: out.ID, State: out.State})
	}
	return out, nil
}

func (f *fake) Deploy(ctx context.Context, p *placement.Plan) (*backend.ServiceStatus, error) {
	if err := f.check(p, placement.KindApplication); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil && !f.ignoreCtx {
		return nil, err
	}
	f.mu.Lock()
	f.apps[p.Name] = true
	f.mu.Unlock()
	return f.Status(ctx, p.Name)
}

func (f *fake) Status(_ context.Context, name string) (*backend.ServiceStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.apps[name] && !f.statusOfUnknown {
		return nil, fmt.Errorf("fake: application %q: %w", name, backend.ErrNotFound)
	}
	return &backend.ServiceStatus{Backend: "fake", Name: name, Ran: true, State: backend.ServiceRunning}, nil
}

func (f *fake) Wait(ctx context.Context, name string, opts backend.WaitOptions) (*backend.ServiceStatus, error) {
	st, err := f.Status(ctx, name)
	if err == nil && opts.OnStatus != nil && !f.quiet {
		opts.OnStatus(st)
	}
	return st, err
}

func (f *fake) Delete(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.apps[name] {
		return fmt.Errorf("fake: application %q: %w", name, backend.ErrNotFound)
	}
	if f.deleteAll {
		clear(f.apps)
	}
	delete(f.apps, name)
	return nil
}

func fakeBackend(f faults) Backend {
	b := newFake(f)
	return Backend{Name: "fake", Runner: b, Server: b, KeepsRuns: true}
}

// The fake keeps the contract: the whole suite passes on it.
func TestFakePasses(t *testing.T) {
	t.Parallel()
	Run(t, func(*testing.T) Backend { return fakeBackend(faults{}) })
}

// recorder is a reporter that collects failures; Fatalf ends the rule's goroutine.
type recorder struct {
	ctx      context.Context
	mu       sync.Mutex
	failures []string
	cleanups []func()
}

func (r *recorder) Helper()                  {}
func (r *recorder) Context() context.Context { return r.ctx }
func (r *recorder) Logf(string, ...any)      {}
func (r *recorder) Cleanup(f func())         { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// failures runs one rule on b and returns what it reported.
func failures(t *testing.T, name string, b Backend) []string {
	t.Helper()
	b, err := b.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rules() {
		if r.name != name {
			continue
		}
		rec := &recorder{ctx: t.Context()}
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.check(rec, &b, namer{prefix: "btfake", rule: i})
		}()
		<-done
		for _, f := range rec.cleanups {
			f()
		}
		return rec.failures
	}
	t.Fatalf("no rule %s", name)
	return nil
}

// Each rule catches the backend that breaks it, and says how.
func TestRulesCatchBrokenBackends(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fault faults
		rule  string
		says  string
	}{
		{faults{skipCheck: true}, "Runner/RefusesBeforeDoingAnything", "backend.ErrInvalidPlan"},
		{faults{bareErrors: true}, "Runner/RefusesBeforeDoingAnything", "backend.ErrInvalidPlan"},
		{faults{bareErrors: true}, "Server/RefusesBeforeDoingAnything", "backend.ErrUnsupported"},
		{faults{leakRefused: true}, "Runner/RefusesBeforeDoingAnything", "left a run under the id"},
		{faults{ignoreCtx: true}, "Runner/ContextDone", "context.Canceled"},
		{faults{ignoreCtx: true}, "Server/ContextDone", "context.Canceled"},
		{faults{wrongID: true}, "Runner/RunsValidPlans", "RunOptions.SubmissionID"},
		{faults{quiet: true}, "Runner/RunsValidPlans", "OnStatus was never called"},
		{faults{quiet: true}, "Server/DeployFollowDelete", "WaitOptions.OnStatus"},
		{faults{forgetRuns: true}, "Runner/SubmissionIDTaken", "backend.ErrAlreadyExists"},
		{faults{statusOfUnknown: true}, "Server/UnknownNames", "backend.ErrNotFound"},
		{faults{deleteAll: true}, "Server/DeployFollowDelete", "Status (after deleting another application)"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%+v", c.rule, c.fault), func(t *testing.T) {
			t.Parallel()
			got := failures(t, c.rule, fakeBackend(c.fault))
			if !strings.Contains(strings.Join(got, "\n"), c.says) {
				t.Errorf("failures %q; want one saying %q", got, c.says)
			}
			if none := failures(t, c.rule, fakeBackend(faults{})); len(none) > 0 {
				t.Errorf("the unbroken fake fails %s: %q", c.rule, none)
			}
		})
	}
}

// ControlPlaneOnly and KeepsRuns change what is required, not whether it
// is checked: a backend whose runs succeed fails as a control plane only,
// and one that keeps no runs must run a second plan under a taken id.
func TestBackendSettingsAreChecked(t *testing.T) {
	t.Parallel()
	b := fakeBackend(faults{})
	b.ControlPlaneOnly = true
	if got := failures(t, "Runner/RunsValidPlans", b); !strings.Contains(strings.Join(got, "\n"), "FAILED or STOPPED") {
		t.Errorf("a control plane only whose runs succeed: failures %q", got)
	}
	if got := failures(t, "Server/DeployFollowDelete", b); !strings.Contains(strings.Join(got, "\n"), "once the context ends") {
		t.Errorf("a control plane only whose applications run: failures %q", got)
	}
	b = fakeBackend(faults{})
	b.KeepsRuns = false
	if got := failures(t, "Runner/SubmissionIDTaken", b); !strings.Contains(strings.Join(got, "\n"), "keeps no runs") {
		t.Errorf("a backend said to keep no runs that refuses a taken id: failures %q", got)
	}
	if _, err := (Backend{Name: "x"}).withDefaults(); err == nil {
		t.Error("a Backend with neither Runner nor Server was accepted")
	}
	if _, err := (Backend{Runner: newFake(faults{})}).withDefaults(); err == nil {
		t.Error("a Backend without a name was accepted")
	}
}
