package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/raytpu/raytpu/placement"
)

// Runner runs a plan that runs to completion (placement.Kind.RunsToCompletion:
// a training run, a data pipeline) and reports how it ended.
//
// Run returns an *Outcome whenever the backend learned something about
// the run, also together with an error:
//   - a run that ended but did not succeed: a *RunError (errors.Is
//     ErrRunFailed), with the Outcome;
//   - a simulated placement whose diagnosis has errors: a *PlacementError
//     (errors.Is ErrPlacement), with the Outcome;
//   - a plan of a kind the backend does not run: ErrUnsupported; a
//     malformed plan: an *InvalidPlanError (ErrInvalidPlan); both before
//     anything is done (see CheckPlan);
//   - another plan under a SubmissionID the backend already keeps a run
//     of: ErrAlreadyExists;
//   - transport and context errors as they come.
//
// A Run with the same RunOptions.SubmissionID as an earlier one finds that
// run instead of starting it again, where the backend can tell.
type Runner interface {
	Run(ctx context.Context, p *placement.Plan, opts RunOptions) (*Outcome, error)
}

// RunOptions tune one Run. The zero value is valid.
type RunOptions struct {
	// SubmissionID names the run on the backend (a Ray job's
	// submission_id). Optional. Default: a fresh id. Pass a stable id so a
	// retried Run (after a crash, say) finds the run it already started.
	SubmissionID string
	// Logs, if set, receives the driver's log as it is written. Optional.
	Logs io.Writer
	// OnStatus, if set, is called on every state transition. Optional.
	OnStatus func(Status)
}

// State is a run's state, in Ray job terms.
type State string

// The states.
const (
	StatePending   State = "PENDING"
	StateRunning   State = "RUNNING"
	StateSucceeded State = "SUCCEEDED"
	StateFailed    State = "FAILED"
	StateStopped   State = "STOPPED"
	// StateSimulated: the simulator placed the plan; nothing ran.
	StateSimulated State = "SIMULATED"
)

// Status is one observed state of a run.
type Status struct {
	ID      string
	State   State
	Message string
	Time    time.Time
}

// Outcome is what a backend reports about a run.
type Outcome struct {
	// Backend names the backend: "sim", "ray", "kuberay".
	Backend string `json:"backend"`
	// Ran is false when nothing ran: the simulator only places.
	Ran bool `json:"ran"`
	// ID is the run's id on the backend (the Ray job's submission_id).
	ID string `json:"id,omitempty"`
	// State is the final state; Message the backend's explanation.
	State   State  `json:"state"`
	Message string `json:"message,omitempty"`
	// Output is the launcher's outcome document, which the front end
	// decodes (train.Result). Nil when nothing ran or the run ended before
	// the launcher reported.
	Output json.RawMessage `json:"output,omitempty"`
	// Landings say where every worker bundle of the plan landed, group by
	// group, and Diagnosis what the placement means. Reported by the
	// simulator; empty from backends that do not observe placement.
	Landings  []placement.Landing `json:"landings,omitempty"`
	Diagnosis placement.Diagnosis `json:"diagnosis,omitempty"`
}

// Succeeded reports whether the run ended SUCCEEDED.
func (o *Outcome) Succeeded() bool { return o != nil && o.State == StateSucceeded }

// RunError is a run that ended, but not in success.
type RunError struct {
	Outcome *Outcome
}

func (e *RunError) Error() string {
	if e == nil || e.Outcome == nil {
		return "run did not succeed (no outcome reported)"
	}
	msg := e.Outcome.Message
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("%s: run %s ended %s: %s", e.Outcome.Backend, e.Outcome.ID, e.Outcome.State, msg)
}

// Is reports ErrRunFailed.
func (e *RunError) Is(target error) bool { return target == ErrRunFailed }

// PlacementError is a simulated placement whose diagnosis has errors: on a
// real cluster the run would hang or fail to start, or a replica would
// wait in DEPLOYING for ever.
type PlacementError struct {
	// Backend and Name say which backend placed which plan.
	Backend, Name string
	// Diagnosis holds every finding; at least one is an error, or a
	// Pending warning for a live application found stuck waiting.
	Diagnosis placement.Diagnosis
}

func (e *PlacementError) Error() string {
	if e == nil {
		return "plan cannot be placed (no diagnosis reported)"
	}
	var codes []string
	for _, f := range e.Diagnosis {
		if f.Severity == placement.SeverityError {
			codes = append(codes, f.String())
		}
	}
	if len(codes) == 0 { // a placement that waits: its warnings say for what
		for _, f := range e.Diagnosis {
			codes = append(codes, f.String())
		}
	}
	return fmt.Sprintf("%s: plan %q cannot be placed as it needs: %s", e.Backend, e.Name, strings.Join(codes, "; "))
}

// Is reports ErrPlacement.
func (e *PlacementError) Is(target error) bool { return target == ErrPlacement }
