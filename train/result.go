package train

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Result is the outcome of a training run as the launcher reports it,
// mirroring ray.train.Result.
type Result struct {
	// Metrics are the last metrics reported by rank 0.
	Metrics map[string]any `json:"metrics,omitempty"`
	// Checkpoint is the path of the latest checkpoint, if any.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Path is the run directory on storage.
	Path string `json:"path,omitempty"`
	// BestCheckpoints are the checkpoints kept, with their metrics.
	BestCheckpoints []CheckpointResult `json:"best_checkpoints,omitempty"`
	// Error is set when the run failed.
	Error *RunError `json:"error,omitempty"`
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

func (e *RunError) Error() string { return fmt.Sprintf("train: %s: %s", e.Type, e.Message) }

// Is reports ErrTrainingFailed.
func (e *RunError) Is(target error) bool { return target == ErrTrainingFailed }

// ParseResult decodes the launcher's outcome (the JSON after RAYTPU_RESULT).
// A failed run returns the Result and its *RunError.
func ParseResult(raw []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("train: decoding launcher result: %w", err)
	}
	if r.Error != nil {
		return &r, r.Error
	}
	return &r, nil
}

// Step returns an integer metric (such as "step"), and whether it is present.
func (r *Result) Step(name string) (int, bool) {
	v, ok := r.Metrics[name].(float64)
	return int(v), ok
}
