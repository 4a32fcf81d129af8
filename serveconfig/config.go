package serveconfig

import (
	"encoding/json"

	"github.com/raytpu/raytpu/runtimeenv"
)

// Application is one entry of "applications" in the body of Serve's
// PUT /api/serve/applications/ (ServeApplicationSchema). Fields are
// declared in Ray's order, and unset ones are left out of the JSON, so
// Serve falls back to the code's values.
//
// Package serve gives every compiled Application maps and slices of its
// own, so the plan's holder may change it. A shallow copy of an
// Application shares its maps, so a backend changes a copy by replacing a
// field, never by writing into a map or a slice it did not make.
type Application struct {
	// Name of the application, unique in the Serve instance.
	Name string `json:"name"`
	// RoutePrefix is route_prefix as JSON: nil leaves it out (Serve's
	// default), null gives the application no HTTP route, and a JSON
	// string is the prefix.
	RoutePrefix json.RawMessage `json:"route_prefix,omitempty"`
	// ImportPath names the ingress, "module:attr" or "module.attr".
	ImportPath string `json:"import_path"`
	// RuntimeEnv of the application, merged under every deployment's;
	// nil when it sets nothing.
	RuntimeEnv *runtimeenv.RuntimeEnv `json:"runtime_env,omitempty"`
	// Deployments override the options of the deployments in code.
	Deployments []Deployment `json:"deployments,omitempty"`
	// Args are passed to the application builder.
	Args map[string]any `json:"args,omitempty"`
}

// Deployment is one entry of an application's "deployments"
// (DeploymentSchema).
type Deployment struct {
	Name                      string             `json:"name"`
	NumReplicas               Replicas           `json:"num_replicas,omitzero"`
	MaxOngoingRequests        int                `json:"max_ongoing_requests,omitempty"`
	MaxQueuedRequests         QueueLimit         `json:"max_queued_requests,omitzero"`
	UserConfig                map[string]any     `json:"user_config,omitempty"`
	AutoscalingConfig         *AutoscalingConfig `json:"autoscaling_config,omitempty"`
	GracefulShutdownWaitLoopS *float64           `json:"graceful_shutdown_wait_loop_s,omitempty"`
	GracefulShutdownTimeoutS  *float64           `json:"graceful_shutdown_timeout_s,omitempty"`
	HealthCheckPeriodS        float64            `json:"health_check_period_s,omitempty"`
	HealthCheckTimeoutS       float64            `json:"health_check_timeout_s,omitempty"`
	RayActorOptions           *ActorOptions      `json:"ray_actor_options,omitempty"`
	// PlacementGroupBundles are Serve's per-replica placement group.
	PlacementGroupBundles             []map[string]float64 `json:"placement_group_bundles,omitempty"`
	PlacementGroupStrategy            string               `json:"placement_group_strategy,omitempty"`
	PlacementGroupBundleLabelSelector []map[string]string  `json:"placement_group_bundle_label_selector,omitempty"`
	MaxReplicasPerNode                int                  `json:"max_replicas_per_node,omitempty"`

	// Reservation, when set, is the slice each replica reserves when it
	// starts; it is sent inside user_config under SliceReservationKey.
	Reservation *SliceReservation `json:"-"`
	// Profiler, sent only with a Reservation, goes inside user_config
	// under ProfilerKey.
	Profiler *ProfilerConfig `json:"-"`
}

// ActorOptions is a replica actor's ray_actor_options
// (RayActorOptionsSchema).
type ActorOptions struct {
	RuntimeEnv      *runtimeenv.RuntimeEnv `json:"runtime_env,omitempty"`
	NumCPUs         *float64               `json:"num_cpus,omitempty"`
	NumGPUs         float64                `json:"num_gpus,omitempty"`
	Memory          float64                `json:"memory,omitempty"`
	Resources       map[string]float64     `json:"resources,omitempty"`
	AcceleratorType string                 `json:"accelerator_type,omitempty"`
	LabelSelector   map[string]string      `json:"label_selector,omitempty"`
}

// Deployment returns the deployment of that name, or nil (also for a nil
// application).
func (a *Application) Deployment(name string) *Deployment {
	if a == nil {
		return nil
	}
	for i := range a.Deployments {
		if a.Deployments[i].Name == name {
			return &a.Deployments[i]
		}
	}
	return nil
}
