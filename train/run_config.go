package train

import (
	"slices"
	"strings"
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

// RunConfig mirrors ray.train.RunConfig.
type RunConfig struct {
	// Name of the run; with StoragePath it locates checkpoints. Required:
	// runs that share a name and storage path resume one another.
	Name string `json:"name"`
	// StoragePath is where results and checkpoints are persisted: object
	// storage (gs://bucket/prefix) that every host reaches, or a local
	// directory. On KubeRay, whose pods share no disk, a run of more than
	// one host refuses a local directory unless StorageSharedMount says
	// every pod mounts it. Optional. Default: ~/ray_results.
	StoragePath string `json:"storage_path,omitempty"`
	// StorageSharedMount declares the local directory StoragePath mounted
	// at that path on every host (NFS, Filestore, Cloud Storage FUSE);
	// the compiled plan says so (placement.Storage.SharedMount). Needs a
	// local StoragePath. Optional. Default: false.
	StorageSharedMount bool `json:"storage_shared_mount,omitempty"`
	// Checkpoint configures checkpoint retention.
	Checkpoint CheckpointConfig `json:"checkpoint_config,omitzero"`
	// Failure configures restarts.
	Failure FailureConfig `json:"failure_config,omitzero"`
	// WorkerEnv are environment variables for every train worker (Ray's
	// worker_runtime_env env_vars), e.g. JAX_PLATFORMS=cpu. Optional.
	WorkerEnv map[string]string `json:"worker_env,omitempty"`
	// LogLevel is Ray Train's log level (LoggingConfig.log_level), a
	// Python logging level name, case-insensitive. Optional. Default: INFO.
	LogLevel string `json:"log_level,omitempty"`
	// WorkerGroupStartTimeout bounds each attempt to start the worker
	// group, the TPU slice head reservation included; an attempt that
	// times out is a controller failure, retried within
	// Failure.ControllerFailureLimit. Ray reads it from the environment
	// variable RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S, which the plan sets
	// on the job. Optional. Default: 60s.
	WorkerGroupStartTimeout time.Duration `json:"worker_group_start_timeout,omitempty"`
	// Profiler starts the JAX profiler server in every train worker (see
	// [ProfilerConfig]). Optional. Default: nil, no profiler server.
	Profiler *ProfilerConfig `json:"profiler,omitempty"`
}

// CheckpointConfig mirrors ray.train.CheckpointConfig.
type CheckpointConfig struct {
	// NumToKeep is how many checkpoints to keep. Optional. Default: 0 = all.
	NumToKeep int `json:"num_to_keep,omitempty"`
	// ScoreAttribute is the reported metric that ranks checkpoints.
	// Optional. Default: "" (keep the most recent).
	ScoreAttribute string `json:"checkpoint_score_attribute,omitempty"`
	// ScoreOrder is "max" or "min". Optional. Default: "max".
	ScoreOrder string `json:"checkpoint_score_order,omitempty"`
}

// FailureConfig mirrors ray.train.FailureConfig.
type FailureConfig struct {
	// MaxFailures is how many worker-group failures to recover from by
	// restarting from the latest checkpoint. A negative count is an error;
	// to retry forever (Ray's max_failures=-1) set RetryForever instead.
	// Optional. Default: 0 (fail on the first failure).
	MaxFailures int `json:"max_failures,omitempty"`
	// RetryForever recovers from every worker-group failure, Ray's
	// max_failures=-1. Exclusive with a positive MaxFailures. Optional.
	// Default: false.
	RetryForever bool `json:"retry_forever,omitempty"`
	// ControllerFailureLimit is how many controller failures to recover
	// from; a worker group that cannot start in WorkerGroupStartTimeout
	// (no intact slice left after a host loss, for one) is such a
	// failure. Optional. Default: nil, Ray's default of no limit: a run
	// whose group can never start again waits forever; set a limit (0: no
	// retries) to make it fail instead. A negative limit is an error.
	ControllerFailureLimit *int `json:"controller_failure_limit,omitempty"`
	// MaxPreemptionFailures is how many node preemptions (a node drained
	// with a preemption notice) to recover from, counted apart from
	// MaxFailures. A host that simply dies is not a preemption: it counts
	// against MaxFailures. Optional. Default: nil, Ray's default of no
	// limit. A negative count is an error.
	MaxPreemptionFailures *int `json:"max_preemption_failures,omitempty"`
	// RelaxCollectivesOnPreemption lets Ray Train's report and preemption
	// collectives complete without the workers of a preempted node, so the
	// others can commit a last checkpoint. Optional. Default: false.
	RelaxCollectivesOnPreemption bool `json:"relax_collectives_on_preemption,omitempty"`
	// PreemptionGrace is how long surviving workers may run past the
	// preemption deadline. Optional. Default: 0.
	PreemptionGrace time.Duration `json:"preemption_grace,omitempty"`
}

// maxFailures is Ray's max_failures: the count, or -1 to retry forever.
func (f FailureConfig) maxFailures() int {
	if f.RetryForever {
		return -1
	}
	return f.MaxFailures
}

// runPath is the path of a JaxTrainer's RunConfig, built once.
var runPath = trainerPath.Child("run_config")

// storage is the plan's Storage of r; nil without a StoragePath.
func (r RunConfig) storage() *placement.Storage {
	if r.StoragePath == "" {
		return nil
	}
	return &placement.Storage{Path: r.StoragePath, Field: runPath.Child("storage_path").String(), SharedMount: r.StorageSharedMount}
}

func (r RunConfig) compile(p *field.Path) (rayruntime.TrainRun, field.ErrorList) {
	errs := r.validateFields(p)
	if len(r.Name) > placement.MaxNameLength {
		errs = append(errs, field.TooMany(p.Child("name"), len(r.Name), placement.MaxNameLength, placement.SourceNameLength))
	}
	fp := p.Child("failure_config")
	for _, c := range []struct {
		name string
		n    *int
	}{{"controller_failure_limit", r.Failure.ControllerFailureLimit}, {"max_preemption_failures", r.Failure.MaxPreemptionFailures}} {
		if c.n != nil {
			if e := checkControllerLimit(fp.Child(c.name), *c.n); e != nil {
				errs = append(errs, e)
			}
		}
	}
	grace, e := seconds(fp.Child("preemption_grace"), r.Failure.PreemptionGrace, "the grace period")
	if e != nil {
		errs = append(errs, e)
	}
	if _, e := seconds(p.Child("worker_group_start_timeout"), r.WorkerGroupStartTimeout, "the start timeout"); e != nil {
		errs = append(errs, e)
	}
	level, e := checkLogLevel(p.Child("log_level"), r.LogLevel)
	if e != nil {
		errs = append(errs, e)
	}
	prof, perrs := r.Profiler.compile(p.Child("profiler"))
	errs = append(errs, perrs...)
	order := r.Checkpoint.ScoreOrder
	if order == "" {
		order = "max"
	}
	// The result is encoded at once and never kept, so it may share r's map.
	return rayruntime.TrainRun{
		Name:                     r.Name,
		StoragePath:              r.StoragePath,
		MaxFailures:              r.Failure.maxFailures(),
		NumToKeep:                r.Checkpoint.NumToKeep,
		CheckpointScoreAttribute: r.Checkpoint.ScoreAttribute,
		CheckpointScoreOrder:     order,
		WorkerEnvVars:            r.WorkerEnv,
		ControllerFailureLimit:   r.Failure.ControllerFailureLimit,
		MaxPreemptionFailures:    r.Failure.MaxPreemptionFailures,
		RelaxCollectives:         r.Failure.RelaxCollectivesOnPreemption,
		PreemptionGraceS:         grace,
		LogLevel:                 level,
		Profiler:                 prof,
	}, errs
}

// Messages of RunConfig's field rules.
const (
	msgRunNameRequired  = "a run name; runs that share a name and storage path resume one another"
	msgRunNameSeparator = "must not contain a path separator"
	msgNumToKeep        = "must be at least 1, or 0 to keep every checkpoint"
	msgMaxFailures      = "must be 0 or a positive count; to retry forever set retry_forever (RetryForever)"
	msgRetryForever     = "retry_forever recovers from every failure: leave max_failures 0 or unset retry_forever"
	msgSharedMountPath  = "storage_shared_mount declares a local storage_path mounted on every host: set the path"
	msgSharedMountURI   = "storage_path is a URI, not a mount: leave storage_shared_mount unset"
)

// scoreOrders are CheckpointConfig.ScoreOrder's values.
var scoreOrders = []string{"max", "min"}

// validateFields reports every broken rule of r that needs no other field,
// in the order of RunConfig's fields: the name (set, no path separator),
// the checkpoint count and score order, the failure count.
func (r *RunConfig) validateFields(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case strings.TrimSpace(r.Name) == "":
		errs = append(errs, field.Required(p.Child("name"), msgRunNameRequired))
	case strings.ContainsAny(r.Name, `/\`):
		errs = append(errs, field.Invalid(p.Child("name"), r.Name, msgRunNameSeparator))
	}
	if r.StorageSharedMount {
		switch {
		case r.StoragePath == "":
			errs = append(errs, field.Required(p.Child("storage_path"), msgSharedMountPath))
		case strings.Contains(r.StoragePath, "://"):
			errs = append(errs, field.Invalid(p.Child("storage_shared_mount"), true, msgSharedMountURI))
		}
	}
	errs = append(errs, r.Checkpoint.validateFields(p)...)
	switch f := r.Failure; {
	case f.MaxFailures < 0:
		errs = append(errs, field.Invalid(p.Child("failure_config", "max_failures"), f.MaxFailures, msgMaxFailures))
	case f.RetryForever && f.MaxFailures > 0:
		errs = append(errs, field.Forbidden(p.Child("failure_config", "retry_forever"), msgRetryForever))
	}
	return errs
}

// validateFields reports a negative NumToKeep and an unknown ScoreOrder,
// below run, the path of the RunConfig that holds c.
func (c *CheckpointConfig) validateFields(run *field.Path) field.ErrorList {
	if c.NumToKeep >= 0 && (c.ScoreOrder == "" || slices.Contains(scoreOrders, c.ScoreOrder)) {
		return nil
	}
	var errs field.ErrorList
	p := run.Child("checkpoint_config")
	if c.NumToKeep < 0 {
		errs = append(errs, field.Invalid(p.Child("num_to_keep"), c.NumToKeep, msgNumToKeep))
	}
	if c.ScoreOrder != "" && !slices.Contains(scoreOrders, c.ScoreOrder) {
		errs = append(errs, field.NotSupported(p.Child("checkpoint_score_order"), c.ScoreOrder, scoreOrders))
	}
	return errs
}
