package train

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Host is a Ray node as the launcher saw it: a TPU host when Slice is set.
type Host struct {
	NodeID string `json:"node_id"`
	IP     string `json:"ip,omitempty"`
	// Slice is the host's TPU slice (ray.io/tpu-slice-name) and
	// TPUWorkerID its index in the slice (ray.io/tpu-worker-id); both ""
	// for a node that is not a TPU host.
	Slice       string `json:"slice,omitempty"`
	TPUWorkerID string `json:"tpu_worker_id,omitempty"`
	// Rank is the worker's world rank, on a worker's host.
	Rank int `json:"rank,omitempty"`
}

// Name is the host's name in the simulator's terms, <slice>-w<worker id>
// (v4-16-0-w1), or its node id when it is not a TPU host.
func (h Host) Name() string {
	if h.Slice == "" {
		return h.NodeID
	}
	return h.Slice + "-w" + h.TPUWorkerID
}

// Attempt is one start of the worker group: where its workers ran and the
// checkpoint it started from.
type Attempt struct {
	// At is when the group started, in seconds after fit() began.
	At float64 `json:"at_s"`
	// Workers are the group's hosts by rank.
	Workers []Host `json:"workers"`
	// Slices are the TPU slices the workers ran on, in rank order.
	Slices []string `json:"slices,omitempty"`
	// ResumedFrom is the checkpoint the group started from; nil for a
	// fresh start.
	ResumedFrom *CheckpointResult `json:"resumed_from,omitempty"`
}

// Event is one step of Ray Train's controller as the launcher recorded
// it: a state change (Kind "state": SCHEDULING, RUNNING, RESTARTING,
// RESCHEDULING, RESIZING, ERRORED, FINISHED, with the error that caused
// it), a failure decision (RETRY or RAISE) or a resize decision.
type Event struct {
	At         float64 `json:"at_s"`
	Kind       string  `json:"kind"`
	State      string  `json:"state,omitempty"`
	Error      string  `json:"error,omitempty"`
	Decision   string  `json:"decision,omitempty"`
	NumWorkers int     `json:"num_workers,omitempty"`
}

// Recovery sums up how a run got past a failure: the hosts that died, the
// slices the group ran on before and after, and the checkpoint it resumed
// from.
type Recovery struct {
	LostHosts []Host
	// LostSlices are the slices lost as a whole (see Result.LostSlices).
	LostSlices  []string
	FromSlices  []string
	ToSlices    []string
	ResumedFrom *CheckpointResult
	// Restarts is how many times the group started again.
	Restarts int
}

// Recovery returns the run's recovery, or nil when the group started only
// once and no host died.
func (r *Result) Recovery() *Recovery {
	if r == nil {
		return nil
	}
	if len(r.Attempts) < 2 && len(r.LostHosts) == 0 && len(r.LostSlices) == 0 {
		return nil
	}
	rec := &Recovery{LostHosts: r.LostHosts, LostSlices: r.LostSlices, Restarts: max(len(r.Attempts)-1, 0)}
	if n := len(r.Attempts); n > 0 {
		last := r.Attempts[n-1]
		rec.ToSlices, rec.ResumedFrom = last.Slices, last.ResumedFrom
		if n > 1 {
			rec.FromSlices = r.Attempts[n-2].Slices
		}
	}
	return rec
}

// String says what was lost, where the group moved and from which
// checkpoint it resumed, in one line.
func (rec *Recovery) String() string {
	if rec == nil {
		return "no recovery: the group started once and lost no host"
	}
	var b strings.Builder
	for _, s := range rec.LostSlices {
		var hosts []string
		for _, h := range rec.LostHosts {
			if h.Slice == s {
				hosts = append(hosts, h.Name())
			}
		}
		fmt.Fprintf(&b, "lost slice %s (hosts %s); ", s, strings.Join(hosts, ", "))
	}
	var names []string
	for _, h := range rec.LostHosts {
		if !slices.Contains(rec.LostSlices, h.Slice) {
			names = append(names, h.Name())
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(&b, "lost host %s; ", strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, "%d restart(s); group moved from slice %s to %s", rec.Restarts, dashList(rec.FromSlices), dashList(rec.ToSlices))
	if rec.ResumedFrom != nil {
		fmt.Fprintf(&b, "; resumed from %s", rec.ResumedFrom.Path)
		if step, ok := rec.ResumedFrom.Metrics["step"].(float64); ok {
			fmt.Fprintf(&b, " (step %d)", int(step))
		}
	} else {
		b.WriteString("; started over without a checkpoint")
	}
	return b.String()
}

func dashList(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, "+")
}

// ErrHostLost matches every *HostLossError with errors.Is.
var ErrHostLost = errors.New("TPU host lost")

// HostLossError is a run that failed after it lost TPU hosts, with what it
// needed and what was left. It wraps the run's *RunError, so errors.Is
// also matches ErrTrainingFailed.
type HostLossError struct {
	// LostHosts are the hosts that died during the run.
	LostHosts []Host
	// PodType is the slices' pod type (v4-16); NeedSlices how many intact
	// slices the group needs (its minimum when elastic), and IntactSlices
	// how many Ray counted at the end (-1 if unknown).
	PodType      string
	NeedSlices   int
	IntactSlices int
	// Err is the launcher's account of the failure.
	Err *RunError
}

func (e *HostLossError) Error() string {
	if e == nil {
		return "train: lost a TPU host"
	}
	names := make([]string, len(e.LostHosts))
	for i, h := range e.LostHosts {
		names[i] = h.Name()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "train: lost TPU host %s", strings.Join(names, ", "))
	switch {
	case e.NeedSlices > 0 && e.IntactSlices >= e.NeedSlices:
		// Room was left: the run ran out of retries.
		fmt.Fprintf(&b, "; %d intact %s slice(s) were left for the %d the group needs, but the run was out of retries: raise run_config.failure_config.max_failures (a host that dies counts as a worker failure, not a preemption)", e.IntactSlices, e.PodType, e.NeedSlices)
	case e.NeedSlices > 0:
		if e.IntactSlices >= 0 {
			fmt.Fprintf(&b, "; the worker group needs %d intact %s slice(s) and %d are left", e.NeedSlices, e.PodType, e.IntactSlices)
		}
		fmt.Fprintf(&b, ": keep a spare %s slice (%d in the cluster), make the group elastic (scaling_config.min_workers) so it can shrink, or bring the host back", e.PodType, e.NeedSlices+1)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, " (%s: %s)", e.Err.Type, firstLine(e.Err.Message))
	}
	return b.String()
}

// Is reports ErrHostLost.
func (e *HostLossError) Is(target error) bool { return target == ErrHostLost }

// Unwrap returns the run's *RunError.
func (e *HostLossError) Unwrap() error {
	if e == nil || e.Err == nil {
		return nil
	}
	return e.Err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// hostLossError turns a failed run that lost TPU hosts into a
// *HostLossError; it returns err unchanged otherwise.
func hostLossError(res *Result, err error, podType string, needSlices int) error {
	var re *RunError
	if res == nil || !errors.As(err, &re) || !slices.ContainsFunc(res.LostHosts, func(h Host) bool { return h.Slice != "" }) {
		return err
	}
	intact := -1
	if res.IntactSlices != nil {
		intact = *res.IntactSlices
	}
	return &HostLossError{LostHosts: res.LostHosts, PodType: podType, NeedSlices: needSlices, IntactSlices: intact, Err: re}
}
