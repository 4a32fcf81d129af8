package backendtest

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// observed is what a Run reported on the side: its statuses and its log.
type observed struct {
	mu       sync.Mutex
	statuses []backend.Status
	logs     []byte
}

func (o *observed) onStatus(s backend.Status) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.statuses = append(o.statuses, s)
}

func (o *observed) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.logs = append(o.logs, p...)
	return len(p), nil
}

func (o *observed) seen() ([]backend.Status, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.statuses), string(o.logs)
}

// run runs p under id on ctx, observing its statuses and log.
func run(ctx context.Context, b *Backend, p *placement.Plan, id string) (*backend.Outcome, *observed, error) {
	o := &observed{}
	out, err := b.Runner.Run(ctx, p, backend.RunOptions{SubmissionID: id, Logs: o, OnStatus: o.onStatus})
	return out, o, err
}

// checkOutcome checks the Run of a valid plan under id.
func checkOutcome(t reporter, b *Backend, id string, out *backend.Outcome, err error, o *observed) {
	t.Helper()
	if out == nil {
		t.Fatalf("Run(%s) = no outcome, %v; the Run of a valid plan reports an *Outcome", id, err)
	}
	if out.Backend != b.Name || out.ID != id {
		t.Errorf("Run(%s): outcome of backend %q, id %q; want backend %q and the RunOptions.SubmissionID %q", id, out.Backend, out.ID, b.Name, id)
	}
	if out.Ran == (out.State == backend.StateSimulated) {
		t.Errorf("Run(%s): outcome Ran %v in state %s; Ran is false exactly when the state is SIMULATED", id, out.Ran, out.State)
	}
	var re *backend.RunError
	switch {
	case b.ControlPlaneOnly:
		if out.State != backend.StateFailed && out.State != backend.StateStopped || !errors.As(err, &re) || re.Outcome == nil || re.Outcome.ID != id || re.Outcome.State != out.State {
			t.Errorf("Run(%s) = state %s, %v; with nothing running in the cluster, want FAILED or STOPPED and a *backend.RunError holding that outcome", id, out.State, err)
		}
	case err != nil || out.State != backend.StateSucceeded && out.State != backend.StateSimulated:
		t.Errorf("Run(%s) = state %s (%s), %v; want SUCCEEDED (or SIMULATED) and no error", id, out.State, out.Message, err)
	}
	statuses, _ := o.seen()
	if len(statuses) == 0 {
		t.Errorf("Run(%s): RunOptions.OnStatus was never called; it sees every state, the last one included", id)
	} else if last := statuses[len(statuses)-1]; last.State != out.State || last.ID != out.ID {
		t.Errorf("Run(%s): the last status seen is %s of %q; want the outcome's %s of %q", id, last.State, last.ID, out.State, out.ID)
	}
}

// runsValidPlans: a valid plan of every kind the Runner runs ends with an
// outcome; a retried Run (same id, same plan) reports the same run.
func runsValidPlans(t reporter, b *Backend, n namer) {
	for _, k := range b.RunKinds {
		// The run's id differs from the plan's name: the outcome's ID is
		// the id.
		plan, id := n.name(kindTag(k)), n.name("id-"+kindTag(k))
		out, o, err := run(t.Context(), b, b.JobPlan(plan, k), id)
		checkOutcome(t, b, id, out, err, o)
		again, _, err2 := run(t.Context(), b, b.JobPlan(plan, k), id)
		if again == nil || again.ID != id || again.State != out.State || (err == nil) != (err2 == nil) {
			t.Errorf("retried Run(%s) of the same plan = %+v, %v; want the same run again: id %s, state %s, error %v", id, again, err2, id, out.State, err)
		}
	}
}

// submissionIDTaken: a second plan under a taken id is ErrAlreadyExists
// on a backend that keeps its runs, and runs on one that keeps nothing.
func submissionIDTaken(t reporter, b *Backend, n namer) {
	k, id := b.RunKinds[0], n.name("taken")
	out, o, err := run(t.Context(), b, b.JobPlan(n.name("first"), k), id)
	checkOutcome(t, b, id, out, err, o)
	other := b.JobPlan(n.name("other"), k)
	out, o, err = run(t.Context(), b, other, id)
	switch {
	case b.KeepsRuns && (!errors.Is(err, backend.ErrAlreadyExists) || out != nil):
		t.Errorf("Run of another plan under the taken id %s = %+v, %v; want no outcome and an error matching backend.ErrAlreadyExists", id, out, err)
	case !b.KeepsRuns && errors.Is(err, backend.ErrAlreadyExists):
		t.Errorf("Run of another plan under id %s = %v; a backend that keeps no runs (Backend.KeepsRuns false) runs it", id, err)
	case !b.KeepsRuns:
		checkOutcome(t, b, id, out, err, o)
	}
}

// refused checks a Run or a Deploy refused with want: no result, nothing
// reported, and the field error when want is ErrInvalidPlan.
func refused(t reporter, what string, gotResult bool, err, want error, ref field.Ref) bool {
	t.Helper()
	if !errors.Is(err, want) || gotResult {
		t.Errorf("%s: got a result: %v, error %v; want none and an error matching backend.%s", what, gotResult, err, sentinelName(want))
		return false
	}
	if want == backend.ErrInvalidPlan && !slices.ContainsFunc(field.Errors(err), func(e *field.Error) bool { return e.Field == ref.Field && e.Type == ref.Type }) {
		t.Errorf("%s: %v; want it to carry the field error %s %s (field.Errors)", what, err, ref.Field, ref.Type)
		return false
	}
	return true
}

// runnerRefuses: invalid plans are ErrInvalidPlan and plans of kinds the
// Runner does not run ErrUnsupported, each before anything is done: no
// outcome, status or log, and nothing left under the run id, which a valid
// plan then takes.
func runnerRefuses(t reporter, b *Backend, n namer) {
	k, id := b.RunKinds[0], n.name("refused")
	check := func(what string, p *placement.Plan, want error, ref field.Ref) {
		out, o, err := run(t.Context(), b, p, id)
		if refused(t, "Run of "+what, out != nil, err, want, ref) {
			if statuses, logs := o.seen(); len(statuses) > 0 || logs != "" {
				t.Errorf("Run of %s: refused, yet it reported statuses %v and log %q", what, statuses, logs)
			}
		}
	}
	for _, c := range invalidPlans(k, func(name string) *placement.Plan { return b.JobPlan(name, k) }, n.name) {
		check(c.what, c.plan, backend.ErrInvalidPlan, c.want)
	}
	for _, u := range placement.Kinds() {
		if !b.runs(u) {
			check("a plan of kind "+string(u), planOf(b, n.name("u-"+kindTag(u)), u), backend.ErrUnsupported, field.Ref{})
		}
	}
	out, o, err := run(t.Context(), b, b.JobPlan(n.name("after"), k), id)
	if errors.Is(err, backend.ErrAlreadyExists) {
		t.Fatalf("Run of a valid plan under id %s after the refusals = %v: a refused plan left a run under the id", id, err)
	}
	checkOutcome(t, b, id, out, err, o)
}

// runnerContextDone: a Run whose context has ended returns the context's
// error and no outcome.
func runnerContextDone(t reporter, b *Backend, n namer) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	id := n.name("ctx")
	out, o, err := run(ctx, b, b.JobPlan(id, b.RunKinds[0]), id)
	if !errors.Is(err, context.Canceled) || out != nil {
		t.Errorf("Run with a canceled context = %+v, %v; want no outcome and an error matching context.Canceled", out, err)
	}
	if statuses, _ := o.seen(); len(statuses) > 0 {
		t.Errorf("Run with a canceled context reported statuses %v", statuses)
	}
}

// sentinelName is the Go name of a sentinel of the contract.
func sentinelName(err error) string {
	switch err {
	case backend.ErrInvalidPlan:
		return "ErrInvalidPlan"
	case backend.ErrUnsupported:
		return "ErrUnsupported"
	}
	return err.Error()
}
