package train

import (
	"github.com/raytpu/raytpu/field"
)

// RunConfig mirrors ray.train.RunConfig.
type RunConfig struct {
	// Name of the run; with StoragePath it locates checkpoints. Required:
	// runs that share a name and storage path resume one another.
	Name string `validate:"notblank,excludesall=/\\" detail-notblank:"a run name; runs that share a name and storage path resume one another" detail-excludesall:"must not contain a path separator"`
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
	NumToKeep int `validate:"gte=0" detail:"must be at least 1, or 0 to keep every checkpoint"`
	// ScoreAttribute is the reported metric that ranks checkpoints.
	// Optional. Default: "" (keep the most recent).
	ScoreAttribute string
	// ScoreOrder is "max" or "min". Optional. Default: "max".
	ScoreOrder string `validate:"omitempty,oneof=max min"`
}

// FailureConfig mirrors ray.train.FailureConfig.
type FailureConfig struct {
	// MaxFailures is how many worker-group failures to recover from by
	// restarting from the latest checkpoint; -1 retries forever.
	// Optional. Default: 0 (fail on the first failure).
	MaxFailures int `validate:"gte=-1" detail:"must be -1 (retry forever), 0, or a positive count"`
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

// runPath is the path of a JaxTrainer's RunConfig, built once.
var runPath = trainerPath.Child("run")

func (r RunConfig) compile(p *field.Path) (LauncherRun, field.ErrorList) {
	errs := field.ValidateStruct(p, &r)
	order := r.Checkpoint.ScoreOrder
	if order == "" {
		order = "max"
	}
	// The result is encoded at once and never kept, so it may share r's map.
	return LauncherRun{
		Name:                     r.Name,
		StoragePath:              r.StoragePath,
		MaxFailures:              r.Failure.MaxFailures,
		NumToKeep:                r.Checkpoint.NumToKeep,
		CheckpointScoreAttribute: r.Checkpoint.ScoreAttribute,
		CheckpointScoreOrder:     order,
		WorkerEnvVars:            r.WorkerEnv,
	}, errs
}
