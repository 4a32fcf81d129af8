// Package traintest reads what Ray Train writes on storage during a run,
// for tests that must act at a known point of it (kill a worker or a host
// once a checkpoint is safe).
package traintest

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// RegisteredCheckpointStep reads the "step" metric of the latest
// checkpoint Ray Train's checkpoint manager has saved in its snapshot,
// runDir/checkpoint_manager_snapshot.json. A worker's report reaches the
// controller only when it next polls the workers, so a checkpoint is safe
// from a fault (the next attempt resumes from it) once it is here, not
// once the worker has written it.
func RegisteredCheckpointStep(runDir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(runDir, SnapshotFile))
	if err != nil {
		return 0, false
	}
	return SnapshotStep(b)
}

// SnapshotFile is the checkpoint manager's snapshot in a run's directory.
const SnapshotFile = "checkpoint_manager_snapshot.json"

// SnapshotStep is RegisteredCheckpointStep of a snapshot read elsewhere
// (from object storage).
func SnapshotStep(b []byte) (int, bool) {
	var snap struct {
		Latest *struct {
			Metrics struct {
				Step int `json:"step"`
			} `json:"metrics"`
		} `json:"latest_checkpoint_result"`
	}
	if json.Unmarshal(b, &snap) != nil || snap.Latest == nil {
		return 0, false
	}
	return snap.Latest.Metrics.Step, true
}
