package serve

import (
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

// Deployment overrides the options of one deployment of the application, as
// an entry of Ray Serve's "deployments" (DeploymentSchema). Unset options
// are not sent: Serve keeps the value set in code (@serve.deployment), else
// its own default, which each field names.
type Deployment struct {
	// Name of a deployment defined in the application's code. Required.
	Name string `json:"name"`
	// NumReplicas is the number of replicas, serveconfig.ReplicaCount(n),
	// or serveconfig.AutoReplicas() for Serve's default autoscaling (min
	// 1, max 100, target 2 ongoing requests, overlaid with
	// AutoscalingConfig). A count is exclusive with AutoscalingConfig; a
	// count below 1 is refused. Optional. Default: unset, 1 replica.
	NumReplicas serveconfig.Replicas `json:"num_replicas,omitzero"`
	// AutoscalingConfig scales the replica count with traffic. Optional.
	// Default: none (a fixed NumReplicas).
	AutoscalingConfig *serveconfig.AutoscalingConfig `json:"autoscaling_config,omitempty"`
	// MaxOngoingRequests is the most requests one replica handles at once.
	// Optional. Default: 5.
	MaxOngoingRequests int `json:"max_ongoing_requests,omitempty"`
	// MaxQueuedRequests is the most requests queued at each caller before
	// it answers 503: serveconfig.MaxQueued(n) with n at least 1, or
	// serveconfig.NoQueueLimit() (Ray's -1, to lift a limit set in
	// code). Optional. Default: unset, no limit.
	MaxQueuedRequests serveconfig.QueueLimit `json:"max_queued_requests,omitzero"`
	// UserConfig is passed to the replica's reconfigure() and may change
	// without restarting replicas; it must marshal to a JSON object. The
	// keys serveconfig.SliceReservationKey and serveconfig.ProfilerKey are
	// reserved. It may not hold itself, and nests at most 64 levels.
	// Optional. Default: none.
	UserConfig map[string]any `json:"user_config,omitempty"`
	// HealthCheckPeriodS is the seconds between health checks. Optional.
	// Default: 10.
	HealthCheckPeriodS float64 `json:"health_check_period_s,omitempty"`
	// HealthCheckTimeoutS is the seconds a health check may take. Optional.
	// Default: 30.
	HealthCheckTimeoutS float64 `json:"health_check_timeout_s,omitempty"`
	// GracefulShutdownWaitLoopS is how long, in seconds, a stopping
	// replica waits for its work to drain between checks; 0 is allowed.
	// Optional. Default: 2.
	GracefulShutdownWaitLoopS *float64 `json:"graceful_shutdown_wait_loop_s,omitempty"`
	// GracefulShutdownTimeoutS is how long, in seconds, Serve waits before
	// killing a stopping replica; 0 is allowed. Optional. Default: 20.
	GracefulShutdownTimeoutS *float64 `json:"graceful_shutdown_timeout_s,omitempty"`
	// RayActorOptions are the replica actor's options. When set they
	// replace the options set in code entirely (Serve does not merge them).
	// Optional. Default: the code's, else {num_cpus: 1}.
	RayActorOptions *RayActorOptions `json:"ray_actor_options,omitempty"`
	// PlacementGroupBundles reserve one placement group per replica; the
	// replica actor runs in bundle 0, so its resources must fit there. With
	// a topology they describe the slice's worker bundle instead (all TPU
	// bundles identical, as Serve LLM requires). Optional. Default: none.
	PlacementGroupBundles []map[string]float64 `json:"placement_group_bundles,omitempty"`
	// PlacementGroupStrategy of the replica's placement group (or, with a
	// topology, of its slice). Needs PlacementGroupBundles unless a
	// topology is set. Optional. Default: PACK.
	PlacementGroupStrategy placement.Strategy `json:"placement_group_strategy,omitempty"`
	// PlacementGroupBundleLabelSelector gives one label selector for every
	// bundle, or one per bundle. Needs PlacementGroupBundles; forbidden
	// with a topology (the slice pins its bundles itself). Optional.
	PlacementGroupBundleLabelSelector []map[string]string `json:"placement_group_bundle_label_selector,omitempty"`
	// MaxReplicasPerNode caps the replicas of this deployment on one node,
	// 1 to 100. Forbidden with PlacementGroupBundles. Optional. Default:
	// no limit.
	MaxReplicasPerNode int `json:"max_replicas_per_node,omitempty"`
	// AcceleratorConfig puts the deployment on TPUs; with a topology each
	// replica owns one whole slice. raytpu's field, mirroring Serve LLM's
	// accelerator_type + accelerator_config. Optional.
	AcceleratorConfig *AcceleratorConfig `json:"accelerator_config,omitempty"`
	// Profiler starts the JAX profiler server on every TPU host of every
	// replica (see serveconfig.ProfilerConfig); needs a topology.
	// Optional. Default: nil, no profiler server.
	Profiler *serveconfig.ProfilerConfig `json:"profiler,omitempty"`
}

// RayActorOptions mirrors Serve's RayActorOptionsSchema: the options of a
// replica actor.
type RayActorOptions struct {
	// NumCPUs the replica actor holds; 0 is allowed (and needed when bundle
	// 0 has no CPU). Optional. Default: 1.
	NumCPUs *float64 `json:"num_cpus,omitempty"`
	// NumGPUs the replica actor holds. Optional. Default: 0.
	NumGPUs float64 `json:"num_gpus,omitempty"`
	// Memory is the replica's heap memory in bytes. Optional. Default: none.
	Memory float64 `json:"memory,omitempty"`
	// Resources are custom resources ("TPU": 1, 2, 4 or 8). CPU and GPU
	// go in NumCPUs and NumGPUs. Optional.
	Resources map[string]float64 `json:"resources,omitempty"`
	// AcceleratorType places the replica on nodes of that accelerator
	// (e.g. TPU-V6E). Optional. Default: the deployment's accelerator
	// without a topology, else none.
	AcceleratorType string `json:"accelerator_type,omitempty"`
	// RuntimeEnv of the replica, merged over the application's. working_dir
	// and py_modules must be remote URIs, local:// directories, or local
	// directories a backend uploads first. Optional.
	RuntimeEnv runtimeenv.RuntimeEnv `json:"runtime_env,omitzero"`
	// LabelSelector constrains the replica's node, in Ray's syntax (v, !v,
	// in(a,b), !in(a,b)). Optional.
	LabelSelector map[string]string `json:"label_selector,omitempty"`
}
