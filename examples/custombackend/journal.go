package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

// Name is the name the journal gives itself in outcomes and statuses.
const Name = "journal"

// Journal is a backend a platform team might write: it runs every plan on
// another backend (the one it wraps) and records the plan and its outcome
// in a directory, one JSON file per run, for audit and for Replay on
// another cluster. The record makes it keep its runs by submission id even
// over a backend that keeps none: a Run retried with the same id and plan
// returns the recorded outcome without running again, and another plan
// under a taken id is backend.ErrAlreadyExists. Applications are deployed
// through the wrapped backend, when it is a Server too.
//
// It keeps the backend contract (backendtest passes): every plan goes
// through backend.CheckPlan first, and its errors are the wrapped
// backend's, which match the neutral sentinels already. It is safe for
// concurrent use.
type Journal struct {
	runner backend.Runner
	server backend.Server
	dir    string

	mu   sync.Mutex
	runs map[string]*entry // by submission id
	seq  int
}

// entry is one recorded run.
type entry struct {
	Seq     int              `json:"seq"`
	ID      string           `json:"id"`
	Plan    *placement.Plan  `json:"plan"`
	Outcome *backend.Outcome `json:"outcome,omitempty"`

	digest string
	done   chan struct{} // closed when the run ended; nil when loaded
}

// Open opens the journal in dir (created if missing), reading the runs it
// recorded before, over the backend b: its Runner runs plans, its Server
// (if it is one) deploys applications.
func Open(dir string, b backend.Runner) (*Journal, error) {
	if b == nil {
		return nil, errors.New("journal: Open: a backend to run the plans is required")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	j := &Journal{runner: b, dir: dir, runs: map[string]*entry{}}
	j.server, _ = b.(backend.Server)
	files, err := filepath.Glob(filepath.Join(dir, "run-*.json"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		e := &entry{}
		if err := json.Unmarshal(raw, e); err != nil {
			return nil, fmt.Errorf("journal: %s: %w", f, err)
		}
		if e.digest, err = digest(e.Plan); err != nil {
			return nil, err
		}
		j.runs[e.ID] = e
		j.seq = max(j.seq, e.Seq)
	}
	return j, nil
}

func digest(p *placement.Plan) (string, error) {
	raw, err := p.MarshalIndent()
	return string(raw), err
}

// Run runs the plan on the wrapped backend under opts.SubmissionID (the
// plan's name when empty) and records it. A run of that id already
// recorded, or in progress, for the same plan is followed: its outcome is
// returned and nothing runs again.
func (j *Journal) Run(ctx context.Context, p *placement.Plan, opts backend.RunOptions) (*backend.Outcome, error) {
	if err := backend.CheckPlan(Name, p, backend.RunKinds()...); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := opts.SubmissionID
	if id == "" {
		id = p.Name
	}
	d, err := digest(p)
	if err != nil {
		return nil, err
	}
	e, recorded, err := j.reserve(id, d, p)
	if err != nil {
		return nil, err
	}
	if recorded {
		return j.follow(ctx, e, opts)
	}
	opts.SubmissionID = id
	out, runErr := j.runner.Run(ctx, p, opts)
	return j.finish(e, out, runErr)
}

// reserve finds the run id (recorded reports so) or reserves it for p.
func (j *Journal) reserve(id, d string, p *placement.Plan) (*entry, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if e, ok := j.runs[id]; ok {
		if e.digest != d {
			return nil, false, fmt.Errorf("journal: run %s: %w: it ran plan %q; choose another submission id", id, backend.ErrAlreadyExists, e.Plan.Name)
		}
		return e, true, nil
	}
	j.seq++
	e := &entry{Seq: j.seq, ID: id, Plan: p, digest: d, done: make(chan struct{})}
	j.runs[id] = e
	return e, false, nil
}

// follow waits for a run in progress and returns its recorded outcome.
func (j *Journal) follow(ctx context.Context, e *entry, opts backend.RunOptions) (*backend.Outcome, error) {
	if e.done != nil {
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	j.mu.Lock()
	out := e.Outcome
	j.mu.Unlock()
	if out == nil { // the run it followed ended without one; run it again
		return j.Run(ctx, e.Plan, opts)
	}
	out = j.own(out)
	if opts.OnStatus != nil {
		opts.OnStatus(backend.Status{ID: out.ID, State: out.State, Message: out.Message})
	}
	return out, outcomeError(e.Plan.Name, out)
}

// finish records the run's outcome, or forgets a run that ended without
// one (a context that ended, a transport error) so that a retry runs it.
func (j *Journal) finish(e *entry, out *backend.Outcome, runErr error) (*backend.Outcome, error) {
	j.mu.Lock()
	defer func() {
		close(e.done)
		j.mu.Unlock()
	}()
	if out == nil {
		delete(j.runs, e.ID)
		return nil, runErr
	}
	e.Outcome = out
	if err := j.write(e); err != nil {
		return nil, errors.Join(err, runErr)
	}
	own := j.own(out)
	if runErr == nil {
		return own, nil
	}
	if err := outcomeError(e.Plan.Name, own); err != nil {
		return own, err
	}
	return own, runErr
}

// own is the outcome as the journal reports it: under its own name.
func (j *Journal) own(out *backend.Outcome) *backend.Outcome {
	cp := *out
	cp.Backend = Name
	return &cp
}

// outcomeError is the error a run of that outcome returns: a
// *backend.RunError for a run that did not succeed, a
// *backend.PlacementError for a simulated placement that would not work.
func outcomeError(plan string, out *backend.Outcome) error {
	switch {
	case out.State == backend.StateFailed || out.State == backend.StateStopped:
		return &backend.RunError{Outcome: out}
	case out.Diagnosis.HasErrors():
		return &backend.PlacementError{Backend: out.Backend, Name: plan, Diagnosis: out.Diagnosis}
	}
	return nil
}

// write records e as run-<seq>.json, through a temporary file.
func (j *Journal) write(e *entry) error {
	raw, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(j.dir, fmt.Sprintf("run-%06d.json", e.Seq))
	if err := os.WriteFile(path+".tmp", raw, 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// Runs lists the recorded runs' ids, oldest first.
func (j *Journal) Runs() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var es []*entry
	for _, e := range j.runs {
		if e.Outcome != nil {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b *entry) int { return a.Seq - b.Seq })
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	return ids
}

// Replay runs every recorded plan again on another backend, oldest first,
// each under its recorded id with suffix appended, and returns their
// outcomes; it stops at the first run that returns no outcome.
func (j *Journal) Replay(ctx context.Context, to backend.Runner, suffix string) ([]*backend.Outcome, error) {
	var outs []*backend.Outcome
	for _, id := range j.Runs() {
		j.mu.Lock()
		p := j.runs[id].Plan
		j.mu.Unlock()
		out, err := to.Run(ctx, p, backend.RunOptions{SubmissionID: id + suffix})
		if out == nil {
			return outs, fmt.Errorf("journal: replaying run %s: %w", id, err)
		}
		outs = append(outs, out)
	}
	return outs, nil
}

// Deploy deploys the application plan through the wrapped Server.
func (j *Journal) Deploy(ctx context.Context, p *placement.Plan) (*backend.ServiceStatus, error) {
	if err := backend.CheckPlan(Name, p, j.serves()...); err != nil {
		return nil, err
	}
	st, err := j.server.Deploy(ctx, p)
	return j.status(st), err
}

// serves lists the kinds Deploy takes: none over a backend that is no
// Server.
func (j *Journal) serves() []placement.Kind {
	if j.server == nil {
		return nil
	}
	return []placement.Kind{placement.KindApplication}
}

// Status reads the application's status from the wrapped Server.
func (j *Journal) Status(ctx context.Context, name string) (*backend.ServiceStatus, error) {
	if j.server == nil {
		return nil, fmt.Errorf("journal: application %q: %w", name, backend.ErrNotFound)
	}
	st, err := j.server.Status(ctx, name)
	return j.status(st), err
}

// Wait follows the application on the wrapped Server.
func (j *Journal) Wait(ctx context.Context, name string, opts backend.WaitOptions) (*backend.ServiceStatus, error) {
	if j.server == nil {
		return nil, fmt.Errorf("journal: application %q: %w", name, backend.ErrNotFound)
	}
	if on := opts.OnStatus; on != nil {
		opts.OnStatus = func(st *backend.ServiceStatus) { on(j.status(st)) }
	}
	st, err := j.server.Wait(ctx, name, opts)
	var se *backend.ServiceError
	if errors.As(err, &se) && se.Status != nil {
		se.Status = j.status(se.Status)
	}
	return j.status(st), err
}

// Delete deletes the application on the wrapped Server.
func (j *Journal) Delete(ctx context.Context, name string) error {
	if j.server == nil {
		return fmt.Errorf("journal: application %q: %w", name, backend.ErrNotFound)
	}
	return j.server.Delete(ctx, name)
}

// status is a status as the journal reports it: under its own name.
func (j *Journal) status(st *backend.ServiceStatus) *backend.ServiceStatus {
	if st == nil {
		return nil
	}
	cp := *st
	cp.Backend = Name
	cp.Deployments = slices.Clone(st.Deployments)
	return &cp
}

var (
	_ backend.Runner = (*Journal)(nil)
	_ backend.Server = (*Journal)(nil)
)
