package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

// Result is the outcome of a training run, mirroring ray.train.Result,
// plus what the backend reports about the run.
type Result struct {
	// Metrics are the metrics attached to the latest checkpoint, as Ray
	// Train 2.60's Result.metrics holds them (not simply the last report
	// of rank 0: a report without a checkpoint does not replace them).
	Metrics map[string]any `json:"metrics,omitempty"`
	// Checkpoint is the path of the latest checkpoint, if any.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Path is the run directory on storage.
	Path string `json:"path,omitempty"`
	// BestCheckpoints are the checkpoints kept, with their metrics.
	BestCheckpoints []CheckpointResult `json:"best_checkpoints,omitempty"`
	// Error is set when the run failed.
	Error *RunError `json:"error,omitempty"`

	// Attempts lists every start of the worker group in order: its hosts
	// and the checkpoint it started from. More than one means Ray Train
	// restarted (or resized) the group; see Recovery.
	Attempts []Attempt `json:"attempts,omitempty"`
	// LostHosts are the Ray nodes alive when fit() began and dead when it
	// ended: hosts that were lost during the run.
	LostHosts []Host `json:"lost_hosts,omitempty"`
	// LostSlices are the TPU slices that lost every host they had when
	// fit() began (ray.io/tpu-slice-name), in name order: a slice
	// preempted as a whole. Their hosts are among LostHosts; a slice that
	// came back under the same name (GKE recreating the node pool, KubeRay
	// the pods) is still listed, its new hosts are not.
	LostSlices []string `json:"lost_slices,omitempty"`
	// Timeline is what Ray Train's controller did, in order.
	Timeline []Event `json:"timeline,omitempty"`
	// FitStartedAt is when fit() began on the cluster, in Unix seconds by
	// the cluster's clock; every At of Attempts and Timeline counts from it.
	FitStartedAt float64 `json:"fit_started_at,omitempty"`
	// IntactSlices is how many slices of the group's shape Ray counted as
	// intact (every host alive) when the run ended; nil without TPU.
	IntactSlices *int `json:"intact_slices,omitempty"`

	// Simulated is true when the backend only placed the workers (the
	// simulator): no training ran, and Metrics, Checkpoint and Path are
	// empty.
	Simulated bool `json:"simulated,omitempty"`
	// Backend names the backend that ran (or placed) the plan, and JobID
	// the run's id there.
	Backend string `json:"backend,omitempty"`
	JobID   string `json:"jobId,omitempty"`
	// Workers says where every worker landed (the worker's rank is its
	// Bundle), and Diagnosis what the placement means. Reported by the
	// simulator.
	Workers   []placement.Landing `json:"workers,omitempty"`
	Diagnosis placement.Diagnosis `json:"diagnosis,omitempty"`
	// Warnings are the compile warnings (see JaxTrainer.CompileWithWarnings),
	// then the problems the launcher worked around inside Ray (a record of
	// the run it could not complete, a profiler report it could not
	// print; code RuntimeWarning), each also logged with its traceback in
	// the job's log.
	Warnings placement.Diagnosis `json:"warnings,omitempty"`
}

// CheckpointResult is one kept checkpoint.
type CheckpointResult struct {
	Path    string         `json:"path"`
	Metrics map[string]any `json:"metrics,omitempty"`
}

// RunError is a failed run: Ray's error type (TrainingFailedError,
// WorkerGroupError, ...) and message.
type RunError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// ErrTrainingFailed matches every *RunError with errors.Is.
var ErrTrainingFailed = errors.New("training failed")

func (e *RunError) Error() string {
	if e == nil {
		return "train: training failed"
	}
	return fmt.Sprintf("train: %s: %s", e.Type, e.Message)
}

// Is reports ErrTrainingFailed.
func (e *RunError) Is(target error) bool { return target == ErrTrainingFailed }

// ParseResult decodes the launcher's outcome (the JSON after RAYTPU_RESULT).
// A failed run returns the Result and its *RunError.
func ParseResult(raw []byte) (*Result, error) {
	if len(raw) == 0 {
		return nil, errors.New("train: ParseResult: no launcher result; pass the JSON the launcher printed after RAYTPU_RESULT")
	}
	var r Result
	// The launcher's warnings are strings; the result's are findings.
	wire := struct {
		*Result
		Warnings []string `json:"warnings"`
	}{Result: &r}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, fmt.Errorf("train: decoding launcher result: %w", err)
	}
	r.Warnings = rayruntime.WarningFindings(wire.Warnings)
	if r.Error != nil {
		return &r, r.Error
	}
	return &r, nil
}

// Step returns an integer metric (such as "step"), and whether it is present.
func (r *Result) Step(name string) (int, bool) {
	if r == nil {
		return 0, false
	}
	v, ok := r.Metrics[name].(float64)
	return int(v), ok
}

// String summarises the result in a line or, for a simulated run, one
// line per worker and finding, starting with "simulated: no training ran".
func (r *Result) String() string {
	if r == nil {
		return "<nil>"
	}
	var b strings.Builder
	switch {
	case r.Simulated:
		fmt.Fprintf(&b, "simulated: no training ran; %d workers placed\n", len(r.Workers))
		for _, w := range r.Workers {
			fmt.Fprintf(&b, "worker %d  slice %d  %-8s  node %-12s  %s\n", w.Bundle, w.Slice, w.State, dash(w.Node), dash(w.SliceName))
		}
		for _, f := range r.Diagnosis {
			b.WriteString(f.String())
			b.WriteByte('\n')
		}
	case r.Error != nil:
		fmt.Fprintf(&b, "failed: %s: %s\n", r.Error.Type, r.Error.Message)
	default:
		fmt.Fprintf(&b, "done: checkpoint %s metrics %v\n", dash(r.Checkpoint), r.Metrics)
	}
	if rec := r.Recovery(); rec != nil {
		fmt.Fprintf(&b, "recovery: %s\n", rec)
	}
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
