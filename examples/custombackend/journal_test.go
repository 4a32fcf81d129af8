package main

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/backend/backendtest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

func mustCluster(t *testing.T, spec string) *sim.Cluster {
	t.Helper()
	c, err := newCluster(spec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The journal keeps the backend contract: it passes the conformance
// suite over a fresh simulated cluster per rule, as a backend that keeps
// its runs by id (which the simulator alone does not).
func TestConformance(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, func(t *testing.T) backendtest.Backend {
		j, err := Open(t.TempDir(), mustCluster(t, "v4-8,cpu:1"))
		if err != nil {
			t.Fatal(err)
		}
		return backendtest.Backend{Name: Name, Runner: j, Server: j, KeepsRuns: true}
	})
}

// counting counts the runs that reach the wrapped backend.
type counting struct {
	backend.Runner
	runs atomic.Int32
}

func (c *counting) Run(ctx context.Context, p *placement.Plan, opts backend.RunOptions) (*backend.Outcome, error) {
	c.runs.Add(1)
	return c.Runner.Run(ctx, p, opts)
}

// A retried run is answered from the record, also by a journal opened
// again on the same directory: the wrapped backend runs it once.
func TestRetriesRunOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inner := &counting{Runner: mustCluster(t, "v4-8,cpu:1")}
	j, err := Open(dir, inner)
	if err != nil {
		t.Fatal(err)
	}
	plan := backendtest.JobPlan("nightly", placement.KindJaxTrainer)
	opts := backend.RunOptions{SubmissionID: "nightly-1"}
	first, err := j.Run(t.Context(), plan, opts)
	if err != nil || first.Backend != Name || first.ID != "nightly-1" || first.State != backend.StateSimulated || len(first.Landings) != 1 {
		t.Fatalf("Run = %+v, %v; want a SIMULATED outcome of nightly-1 from the journal with its landing", first, err)
	}
	reopened, err := Open(dir, inner)
	if err != nil {
		t.Fatal(err)
	}
	for _, jj := range []*Journal{j, reopened} {
		var seen []backend.State
		again, err := jj.Run(t.Context(), backendtest.JobPlan("nightly", placement.KindJaxTrainer), backend.RunOptions{
			SubmissionID: "nightly-1", OnStatus: func(s backend.Status) { seen = append(seen, s.State) },
		})
		if err != nil || again.ID != first.ID || again.State != first.State || len(again.Landings) != len(first.Landings) {
			t.Errorf("retried Run = %+v, %v; want the recorded outcome %+v", again, err, first)
		}
		if len(seen) != 1 || seen[0] != backend.StateSimulated {
			t.Errorf("a retry answered from the record reported statuses %v; want its one final state", seen)
		}
	}
	if n := inner.runs.Load(); n != 1 {
		t.Errorf("the wrapped backend ran %d times, want once", n)
	}
	if _, err := reopened.Run(t.Context(), backendtest.JobPlan("weekly", placement.KindJaxTrainer), opts); !errors.Is(err, backend.ErrAlreadyExists) {
		t.Errorf("another plan under a recorded id, after reopening = %v; want backend.ErrAlreadyExists", err)
	}
	if got := reopened.Runs(); len(got) != 1 || got[0] != "nightly-1" {
		t.Errorf("Runs() = %v, want [nightly-1]", got)
	}
}

// A run that ended without an outcome (its context ended) is not
// recorded: a retry runs it.
func TestRunWithoutOutcomeIsNotRecorded(t *testing.T) {
	t.Parallel()
	inner := &counting{Runner: mustCluster(t, "v4-8,cpu:1")}
	j, err := Open(t.TempDir(), inner)
	if err != nil {
		t.Fatal(err)
	}
	plan := backendtest.JobPlan("nightly", placement.KindJaxTrainer)
	ctx, cancel := context.WithCancel(t.Context())
	stopAtRun := &cancelling{Runner: inner, cancel: cancel}
	j.runner = stopAtRun
	if out, err := j.Run(ctx, plan, backend.RunOptions{SubmissionID: "a"}); !errors.Is(err, context.Canceled) || out != nil {
		t.Fatalf("Run whose context ends = %+v, %v; want context.Canceled", out, err)
	}
	if got := j.Runs(); len(got) != 0 {
		t.Errorf("Runs() = %v after a run without outcome, want none", got)
	}
	j.runner = inner
	if out, err := j.Run(t.Context(), plan, backend.RunOptions{SubmissionID: "a"}); err != nil || out == nil {
		t.Errorf("retry = %+v, %v; want it run", out, err)
	}
}

// cancelling cancels the context as the run reaches the wrapped backend.
type cancelling struct {
	backend.Runner
	cancel context.CancelFunc
}

func (c *cancelling) Run(ctx context.Context, p *placement.Plan, opts backend.RunOptions) (*backend.Outcome, error) {
	c.cancel()
	return c.Runner.Run(ctx, p, opts)
}

// The program's tour on the embedded default.
func TestTour(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	if err := run(t.Context(), &out, config{Dir: t.TempDir(), Cluster: "2*v4-16,cpu:1"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"fit nightly-1 on journal: simulated true, 4 workers placed",
		"retried nightly-1: answered from the journal, which holds 1 run(s)",
		"another plan under nightly-1: journal: run nightly-1: already exists",
		"deployed chat on journal: SIMULATED, 2 bundles placed",
		"replayed nightly-1-replay on a fresh sim cluster: SIMULATED, 4 bundles placed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
