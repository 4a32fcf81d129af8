package rayruntime

import "encoding/json"

// TrainConfig is the launcherConfig of a plan whose job runs the
// [EntryTrain] entry: what the launcher reads to build the real
// ray.train.v2.jax.JaxTrainer. Field names are Ray's keyword arguments.
// Package train compiles a JaxTrainer into it.
type TrainConfig struct {
	// TrainLoopPerWorker is the train function, "module:function".
	TrainLoopPerWorker string `json:"train_loop_per_worker"`
	// TrainLoopConfig is the JSON object passed to the train function.
	TrainLoopConfig json.RawMessage `json:"train_loop_config,omitempty"`
	Scaling         TrainScaling    `json:"scaling_config"`
	Run             TrainRun        `json:"run_config"`
	// Datasets is a [TrainDatasets] as JSON; absent without datasets.
	Datasets json.RawMessage `json:"datasets,omitempty" wire:"TrainDatasets"`
	// Jax is jax_config; absent for Ray's default.
	Jax *TrainJax `json:"jax_config,omitempty"`
}

// TrainScaling holds ray.train.ScalingConfig's keyword arguments.
type TrainScaling struct {
	NumWorkers         int                `json:"num_workers"`
	UseTPU             bool               `json:"use_tpu"`
	UseGPU             bool               `json:"use_gpu"`
	AcceleratorType    string             `json:"accelerator_type,omitempty"`
	Topology           string             `json:"topology,omitempty"`
	ResourcesPerWorker map[string]float64 `json:"resources_per_worker,omitempty"`
	PlacementStrategy  string             `json:"placement_strategy"`
	LabelSelector      map[string]string  `json:"label_selector,omitempty"`
	// MinWorkers is set for an elastic group: num_workers is then
	// (min_workers, num_workers).
	MinWorkers                    int     `json:"min_workers,omitempty"`
	ElasticResizeMonitorIntervalS float64 `json:"elastic_resize_monitor_interval_s,omitempty"`
}

// TrainRun holds the keyword arguments of ray.train.RunConfig and of the
// FailureConfig, CheckpointConfig and LoggingConfig it carries, plus the
// profiler the launcher starts in every worker.
type TrainRun struct {
	Name                     string            `json:"name"`
	StoragePath              string            `json:"storage_path,omitempty"`
	MaxFailures              int               `json:"max_failures"`
	NumToKeep                int               `json:"num_to_keep,omitempty"`
	CheckpointScoreAttribute string            `json:"checkpoint_score_attribute,omitempty"`
	CheckpointScoreOrder     string            `json:"checkpoint_score_order"`
	WorkerEnvVars            map[string]string `json:"worker_env_vars,omitempty"`
	ControllerFailureLimit   *int              `json:"controller_failure_limit,omitempty"`
	MaxPreemptionFailures    *int              `json:"max_preemption_failures,omitempty"`
	RelaxCollectives         bool              `json:"relax_collectives_on_preemption,omitempty"`
	PreemptionGraceS         float64           `json:"preemption_grace_s,omitempty"`
	LogLevel                 string            `json:"log_level,omitempty"`
	Profiler                 *TrainProfiler    `json:"profiler,omitempty"`
}

// TrainJax holds ray.train.v2.jax.JaxConfig's keyword arguments.
type TrainJax struct {
	UseTPU bool `json:"use_tpu"`
	UseGPU bool `json:"use_gpu"`
}

// TrainProfiler asks the launcher to start jax.profiler's server in every
// train worker on Port (0: a free one per worker) and to print where each
// listens as a [ProfilerPrefix] line.
type TrainProfiler struct {
	Port int `json:"port"`
}
