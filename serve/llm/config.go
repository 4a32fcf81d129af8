package llm

import (
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// LLMConfig mirrors ray.serve.llm.LLMConfig (Ray 2.60): one model served
// by its own deployment (LLMServer) behind the application's OpenAI
// ingress. JSON tags are Ray's names, so a spec file reads like an entry
// of build_openai_app's llm_configs.
type LLMConfig struct {
	// ModelLoadingConfig says which model is served and where its weights
	// come from. Required.
	ModelLoadingConfig ModelLoadingConfig `json:"model_loading_config"`
	// LLMEngine is the engine that runs the model; Ray 2.60 knows only
	// "vLLM". Optional. Default: "vLLM".
	LLMEngine string `json:"llm_engine,omitempty"`
	// EngineKwargs are vLLM's engine arguments (tensor_parallel_size,
	// max_model_len, dtype, ...). tensor_parallel_size ×
	// pipeline_parallel_size is the number of chips the engine uses; model
	// and served_model_name are set from ModelLoadingConfig and may not be
	// given. They must marshal to JSON. Optional.
	EngineKwargs map[string]any `json:"engine_kwargs,omitempty"`
	// AcceleratorType is the TPU generation in any accepted spelling (v6e,
	// TPU-V6E, v5litepod); it is sent as Ray's accelerator type (TPU-V6E).
	// Required with a topology, and without an AcceleratorConfig of kind
	// cpu (Ray's default without either is a GPU, which raytpu does not
	// compile).
	AcceleratorType string `json:"accelerator_type,omitempty"`
	// AcceleratorConfig is Ray's accelerator_config: kind tpu with an
	// optional topology, or kind cpu. Optional. Default: inferred as Ray
	// does, from PlacementGroupConfig's bundles (a TPU bundle: tpu; none:
	// cpu), else from AcceleratorType (tpu).
	AcceleratorConfig *AcceleratorConfig `json:"accelerator_config,omitempty"`
	// PlacementGroupConfig overrides the bundles the engine's workers are
	// placed in. With a topology its first TPU bundle is the per-host
	// bundle of the slice. Optional. Default: one bundle per host of
	// {TPU: min(chips, chips per host), accelerator_type:<type>: 0.001},
	// PACK.
	PlacementGroupConfig *PlacementGroupConfig `json:"placement_group_config,omitempty"`
	// LoraConfig enables LoRA adapters loaded on demand. Optional.
	LoraConfig *LoraConfig `json:"lora_config,omitempty"`
	// DeploymentConfig holds the options of the model's Serve deployment.
	// Optional. Default: Serve LLM's (autoscaling between 1 and 1
	// replicas, health checks every 10 s with a 10 s timeout).
	DeploymentConfig DeploymentConfig `json:"deployment_config,omitzero"`
	// RuntimeEnv of the model's replica and engine workers. Serve LLM
	// hands it to Ray as it is, so working_dir and py_modules must be
	// URIs; local code belongs in the application's RuntimeEnv, which a
	// backend uploads. Optional.
	RuntimeEnv runtimeenv.RuntimeEnv `json:"runtime_env,omitzero"`
	// ExperimentalConfigs are Serve LLM's experimental_configs
	// (stream_batching_interval_ms, num_ingress_replicas). They must
	// marshal to JSON. Optional.
	ExperimentalConfigs map[string]any `json:"experimental_configs,omitempty"`
	// LogEngineMetrics exports the engine's metrics through Ray's
	// Prometheus port; it rules out engine_kwargs disable_log_stats.
	// Optional. Default: true.
	LogEngineMetrics *bool `json:"log_engine_metrics,omitempty"`
}

// ModelLoadingConfig mirrors Serve LLM's ModelLoadingConfig.
type ModelLoadingConfig struct {
	// ModelID is the name clients ask for ("model" in OpenAI requests);
	// unique in the application. Required.
	ModelID string `json:"model_id"`
	// ModelSource is where the weights come from: a Hugging Face model
	// ID, a local directory present on every node (/models/tiny), or a
	// bucket (s3://, gs://, abfss://, azure://), which Serve LLM mirrors
	// to local disk first. Optional. Default: ModelID as a Hugging Face ID.
	ModelSource string `json:"model_source,omitempty"`
	// ExtraFiles are more files copied from buckets with a bucket
	// ModelSource. In JSON, model_source is then Ray's CloudMirrorConfig
	// {bucket_uri: ModelSource, extra_files}. Optional.
	ExtraFiles []ExtraFile `json:"-"`
	// TokenizerSource is a Hugging Face ID to take the tokenizer from.
	// Optional. Default: the model's own.
	TokenizerSource string `json:"tokenizer_source,omitempty"`
}

// ExtraFile is one file of a CloudMirrorConfig's extra_files.
type ExtraFile struct {
	// BucketURI of the file. Required.
	BucketURI string `json:"bucket_uri"`
	// DestinationPath on the node. Required.
	DestinationPath string `json:"destination_path"`
}

// Kind is the kind of an [AcceleratorConfig].
type Kind string

// The kinds raytpu compiles (Ray 2.60 also has "gpu").
const (
	// TPU: the engine runs on TPU chips, a whole slice per replica with
	// a topology.
	TPU Kind = "tpu"
	// CPU: vLLM's CPU engine, no accelerator.
	CPU Kind = "cpu"
)

// AcceleratorConfig mirrors Serve LLM's accelerator_config, TPUConfig
// (kind "tpu", topology) or CPUConfig (kind "cpu").
type AcceleratorConfig struct {
	// Kind of accelerator: TPU or CPU. Required.
	Kind Kind `json:"kind"`
	// Topology of the slice each replica reserves, e.g. "4x4" or "2x2x4"
	// (kind tpu only). Serve LLM then defers the replica's placement group:
	// the replica reserves the whole slice (slice_placement_group) when it
	// starts, whatever the tensor-parallel degree. Optional. Default: no
	// slice; the engine's bundles are one TPU chip each.
	Topology string `json:"topology,omitempty"`
}

// PlacementGroupConfig mirrors Serve LLM's placement_group_config: the
// engine workers' bundles, either one bundle per worker (repeated
// tensor_parallel_size × pipeline_parallel_size times) or the full list.
// Serve LLM adds accelerator_type:<type>: 0.001 to every bundle that lacks
// it when AcceleratorType is set.
type PlacementGroupConfig struct {
	// BundlePerWorker is the bundle of each engine worker. Exclusive with
	// Bundles; one of them is required.
	BundlePerWorker map[string]float64 `json:"bundle_per_worker,omitempty"`
	// Bundles is the full list of bundles. Exclusive with BundlePerWorker.
	Bundles []map[string]float64 `json:"bundles,omitempty"`
	// Strategy of the placement group (or, with a topology, of the slice).
	// Optional. Default: PACK.
	Strategy placement.Strategy `json:"strategy,omitempty"`
}

// LoraConfig mirrors Serve LLM's LoraConfig: adapters loaded on demand
// from a bucket, requested as "model_id:adapter".
type LoraConfig struct {
	// DynamicLoraLoadingPath is the bucket holding the adapters (s3://,
	// gs://, abfss:// or azure://). Optional. Default: none.
	DynamicLoraLoadingPath string `json:"dynamic_lora_loading_path,omitempty"`
	// MaxNumAdaptersPerReplica is the most adapters a replica holds.
	// Optional. Default: 16.
	MaxNumAdaptersPerReplica int `json:"max_num_adapters_per_replica,omitempty"`
	// DownloadTimeoutS bounds one adapter's download, in seconds.
	// Optional. Default: 30.
	DownloadTimeoutS *float64 `json:"download_timeout_s,omitempty"`
	// MaxDownloadTries is the most download attempts. Optional. Default: 3.
	MaxDownloadTries int `json:"max_download_tries,omitempty"`
}

// DeploymentConfig mirrors the @serve.deployment options Serve LLM takes in
// an LLMConfig's deployment_config (or build_openai_app's
// ingress_deployment_config). Unset options are not sent: Serve LLM's
// defaults apply, then Serve's. placement_group_bundles and
// placement_group_strategy are not options here (PlacementGroupConfig
// replaces them).
type DeploymentConfig struct {
	// Name of the deployment. Optional. Default: the model ID with "/"
	// as "--" and "." as "_"; Serve LLM prefixes "LLMServer:". The
	// ingress is "OpenAiIngress".
	Name string `json:"name,omitempty"`
	// NumReplicas is a fixed replica count, serveconfig.ReplicaCount(n),
	// or serveconfig.AutoReplicas(); setting it drops Serve LLM's default
	// autoscaling. Optional. Default: unset, autoscaling between 1 and 1
	// replicas.
	NumReplicas serveconfig.Replicas `json:"num_replicas,omitzero"`
	// AutoscalingConfig scales the replica count, overlaid on Serve LLM's
	// default (target_ongoing_requests 1e9). Optional.
	AutoscalingConfig *serveconfig.AutoscalingConfig `json:"autoscaling_config,omitempty"`
	// The options below are serve.Deployment's, with Serve LLM's
	// defaults where it has its own: max_ongoing_requests 1e9 and
	// health_check_timeout_s 10. Each is optional.
	MaxOngoingRequests        int                    `json:"max_ongoing_requests,omitempty"`
	MaxQueuedRequests         serveconfig.QueueLimit `json:"max_queued_requests,omitzero"`
	UserConfig                map[string]any         `json:"user_config,omitempty"`
	HealthCheckPeriodS        float64                `json:"health_check_period_s,omitempty"`
	HealthCheckTimeoutS       float64                `json:"health_check_timeout_s,omitempty"`
	GracefulShutdownWaitLoopS *float64               `json:"graceful_shutdown_wait_loop_s,omitempty"`
	GracefulShutdownTimeoutS  *float64               `json:"graceful_shutdown_timeout_s,omitempty"`
	// RayActorOptions of the replica actor (with a topology a small
	// actor that may run on any node: the slice's bundles hold the
	// chips). Optional. Default: {num_cpus: 1}.
	RayActorOptions *serve.RayActorOptions `json:"ray_actor_options,omitempty"`
	// RequestRouterConfig picks how callers choose a replica. Optional.
	// Default: Serve's power-of-two-choices router.
	RequestRouterConfig *RequestRouterConfig `json:"request_router_config,omitempty"`
}

// RequestRouterConfig mirrors ray.serve.config.RequestRouterConfig, the
// router settings of a deployment.
type RequestRouterConfig struct {
	// RequestRouterClass is the router's import path, e.g.
	// "ray.serve.experimental.round_robin_router:RoundRobinRouter" or
	// Serve LLM's prefix-aware router. Optional. Default: Serve's
	// PowerOfTwoChoicesRequestRouter.
	RequestRouterClass string `json:"request_router_class,omitempty"`
	// RequestRouterKwargs are passed to the router. Optional.
	RequestRouterKwargs map[string]any `json:"request_router_kwargs,omitempty"`
	// RequestRoutingStatsPeriodS and RequestRoutingStatsTimeoutS: how
	// often, and how long at most, replicas report routing stats.
	// Optional. Default: Serve's.
	RequestRoutingStatsPeriodS  float64 `json:"request_routing_stats_period_s,omitempty"`
	RequestRoutingStatsTimeoutS float64 `json:"request_routing_stats_timeout_s,omitempty"`
	// InitialBackoffS, BackoffMultiplier and MaxBackoffS shape retries
	// when no replica can take a request. Optional. Default: Serve's.
	InitialBackoffS   float64 `json:"initial_backoff_s,omitempty"`
	BackoffMultiplier float64 `json:"backoff_multiplier,omitempty"`
	MaxBackoffS       float64 `json:"max_backoff_s,omitempty"`
}

// IngressClsConfig mirrors build_openai_app's ingress_cls_config.
type IngressClsConfig struct {
	// IngressCls is the ingress class's import path ("module.Class" or
	// "module:Class"). Optional. Default: Serve LLM's OpenAiIngress.
	IngressCls string `json:"ingress_cls,omitempty"`
	// IngressExtraKwargs are bound to the ingress's constructor; they must
	// marshal to JSON. Optional.
	IngressExtraKwargs map[string]any `json:"ingress_extra_kwargs,omitempty"`
}
