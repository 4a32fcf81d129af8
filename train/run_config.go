package train

import (
	"maps"
	"strings"

	"github.com/raytpu/raytpu/field"
)

// RunConfig mirrors ray.train.RunConfig.
type RunConfig struct {
	// Name of the run; with StoragePath it locates checkpoints. Required:
	// runs that share a name and storage path resume one another.
	Name string
	// StoragePath is where results and checkpoints are persisted; shared
	// storage for multi-node runs. Optional. Default: ~/ray_results.
	StoragePath string
	// Checkpoint configures checkpoint retention.
	Checkpoint CheckpointConfig
	// Failure configures restarts.
	Failure FailureConfig
	// WorkerEnv are environment variables for every train worker (Ray's
	// worker_runtime_env env_vars), e.g. JAX_PLATFORMS=cpu. Optional.
	WorkerEnv map[string]string
}

// CheckpointConfig mirrors ray.train.CheckpointConfig.
type CheckpointConfig struct {
	// NumToKeep is how many checkpoints to keep. Optional. Default: 0 = all.
	NumToKeep int
	// ScoreAttribute is the reported metric that ranks checkpoints.
	// Optional. Default: "" (keep the most recent).
	ScoreAttribute string
	// ScoreOrder is "max" or "min". Optional. Default: "max".
	ScoreOrder string
}

// FailureConfig mirrors ray.train.FailureConfig.
type FailureConfig struct {
	// MaxFailures is how many worker-group failures to recover from by
	// restarting from the latest checkpoint; -1 retries forever.
	// Optional. Default: 0 (fail on the first failure).
	MaxFailures int
}

// LauncherRun holds RunConfig's keyword arguments.
type LauncherRun struct {
	Name                     string            `json:"name"`
	StoragePath              string            `json:"storage_path,omitempty"`
	MaxFailures              int               `json:"max_failures"`
	NumToKeep                int               `json:"num_to_keep,omitempty"`
	CheckpointScoreAttribute string            `json:"checkpoint_score_attribute,omitempty"`
	CheckpointScoreOrder     string            `json:"checkpoint_score_order"`
	WorkerEnvVars            map[string]string `json:"worker_env_vars,omitempty"`
}

func (r RunConfig) compile(p *field.Path) (LauncherRun, field.ErrorList) {
	var errs field.ErrorList
	if strings.TrimSpace(r.Name) == "" {
		errs = append(errs, field.Required(p.Child("name"), "a run name; runs that share a name and storage path resume one another"))
	} else if strings.ContainsAny(r.Name, "/\\") {
		errs = append(errs, field.Invalid(p.Child("name"), r.Name, "must not contain a path separator"))
	}
	if r.Checkpoint.NumToKeep < 0 {
		errs = append(errs, field.Invalid(p.Child("checkpoint", "numToKeep"), r.Checkpoint.NumToKeep, "must be at least 1, or 0 to keep every checkpoint"))
	}
	order := r.Checkpoint.ScoreOrder
	if order == "" {
		order = "max"
	}
	if order != "max" && order != "min" {
		errs = append(errs, field.NotSupported(p.Child("checkpoint", "scoreOrder"), r.Checkpoint.ScoreOrder, []string{"max", "min"}))
	}
	if r.Failure.MaxFailures < -1 {
		errs = append(errs, field.Invalid(p.Child("failure", "maxFailures"), r.Failure.MaxFailures, "must be -1 (retry forever), 0, or a positive count"))
	}
	return LauncherRun{
		Name:                     r.Name,
		StoragePath:              r.StoragePath,
		MaxFailures:              r.Failure.MaxFailures,
		NumToKeep:                r.Checkpoint.NumToKeep,
		CheckpointScoreAttribute: r.Checkpoint.ScoreAttribute,
		CheckpointScoreOrder:     order,
		WorkerEnvVars:            maps.Clone(r.WorkerEnv),
	}, errs
}
