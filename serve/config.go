package serve

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/raytpu/raytpu/runtimeenv"
)

// rayApplication is one entry of "applications" in the body of Serve's
// PUT /api/serve/applications/ (ServeApplicationSchema). Fields are
// declared in Ray's order and unset ones are left out, so Serve falls back
// to the code's values; encoding/json sorts every map's keys, so the bytes
// are stable.
type rayApplication struct {
	Name        string                 `json:"name"`
	RoutePrefix json.RawMessage        `json:"route_prefix,omitempty"`
	ImportPath  string                 `json:"import_path"`
	RuntimeEnv  *runtimeenv.RuntimeEnv `json:"runtime_env,omitempty"`
	Deployments []rayDeployment        `json:"deployments,omitempty"`
	Args        map[string]any         `json:"args,omitempty"`
}

// rayDeployment is one entry of "deployments" (DeploymentSchema).
type rayDeployment struct {
	Name                              string               `json:"name"`
	NumReplicas                       NumReplicas          `json:"num_replicas,omitempty"`
	MaxOngoingRequests                int                  `json:"max_ongoing_requests,omitempty"`
	MaxQueuedRequests                 int                  `json:"max_queued_requests,omitempty"`
	UserConfig                        map[string]any       `json:"user_config,omitempty"`
	AutoscalingConfig                 *AutoscalingConfig   `json:"autoscaling_config,omitempty"`
	GracefulShutdownWaitLoopS         *float64             `json:"graceful_shutdown_wait_loop_s,omitempty"`
	GracefulShutdownTimeoutS          *float64             `json:"graceful_shutdown_timeout_s,omitempty"`
	HealthCheckPeriodS                float64              `json:"health_check_period_s,omitempty"`
	HealthCheckTimeoutS               float64              `json:"health_check_timeout_s,omitempty"`
	RayActorOptions                   *rayActorOptions     `json:"ray_actor_options,omitempty"`
	PlacementGroupBundles             []map[string]float64 `json:"placement_group_bundles,omitempty"`
	PlacementGroupStrategy            string               `json:"placement_group_strategy,omitempty"`
	PlacementGroupBundleLabelSelector []map[string]string  `json:"placement_group_bundle_label_selector,omitempty"`
	MaxReplicasPerNode                int                  `json:"max_replicas_per_node,omitempty"`

	// reservation, when hasReservation is set, is written into
	// user_config under SliceReservationKey, as if UserConfig held it,
	// without building a merged map. encodeConfig writes it;
	// encoding/json does not.
	reservation    SliceReservation
	hasReservation bool
	// profiler, set only with a reservation, is written into user_config
	// under ProfilerKey the same way.
	profiler *ProfilerConfig
	// actorOptions holds what RayActorOptions points to, so that the
	// options take no allocation of their own.
	actorOptions rayActorOptions
}

// rayActorOptions is RayActorOptionsSchema.
type rayActorOptions struct {
	RuntimeEnv      *runtimeenv.RuntimeEnv `json:"runtime_env,omitempty"`
	NumCPUs         *float64               `json:"num_cpus,omitempty"`
	NumGPUs         float64                `json:"num_gpus,omitempty"`
	Memory          float64                `json:"memory,omitempty"`
	Resources       map[string]float64     `json:"resources,omitempty"`
	AcceleratorType string                 `json:"accelerator_type,omitempty"`
	LabelSelector   map[string]string      `json:"label_selector,omitempty"`
}

// envOrNil returns a copy of e, or nil when e sets nothing.
func envOrNil(e *runtimeenv.RuntimeEnv) *runtimeenv.RuntimeEnv {
	if envEmpty(e) {
		return nil
	}
	return e.Clone()
}

// envEmpty reports whether e sets nothing.
func envEmpty(e *runtimeenv.RuntimeEnv) bool {
	return e.WorkingDir == "" && len(e.PyModules) == 0 && len(e.Pip) == 0 && len(e.EnvVars) == 0 &&
		len(e.Excludes) == 0 && e.Config == nil && len(e.Extra) == 0
}

// rayConfig writes the Serve config of a validated deployment to out,
// which must stay where it is until it is encoded (RayActorOptions points
// into it). accelType is Ray's accelerator type of its AcceleratorConfig
// ("" for none); res is its slice reservation when it has a topology. The
// config is encoded at once and dropped, so it shares d's maps and slices.
func (d *Deployment) rayConfig(out *rayDeployment, accelType string, res *SliceReservation) {
	*out = rayDeployment{
		Name:                      d.Name,
		NumReplicas:               d.NumReplicas,
		MaxOngoingRequests:        d.MaxOngoingRequests,
		MaxQueuedRequests:         d.MaxQueuedRequests,
		UserConfig:                d.UserConfig,
		GracefulShutdownWaitLoopS: d.GracefulShutdownWaitLoopS,
		GracefulShutdownTimeoutS:  d.GracefulShutdownTimeoutS,
		HealthCheckPeriodS:        d.HealthCheckPeriodS,
		HealthCheckTimeoutS:       d.HealthCheckTimeoutS,
		MaxReplicasPerNode:        d.MaxReplicasPerNode,
	}
	out.AutoscalingConfig = d.AutoscalingConfig
	if o := d.RayActorOptions; o != nil {
		out.actorOptions = rayActorOptions{
			NumCPUs:         o.NumCPUs,
			NumGPUs:         o.NumGPUs,
			Memory:          o.Memory,
			Resources:       o.Resources,
			AcceleratorType: o.AcceleratorType,
			LabelSelector:   o.LabelSelector,
		}
		if !envEmpty(&o.RuntimeEnv) {
			out.actorOptions.RuntimeEnv = &o.RuntimeEnv
		}
		out.RayActorOptions = &out.actorOptions
	}
	if accelType != "" && res == nil {
		// An accelerator without a topology places the replica actor on
		// nodes of that accelerator.
		out.RayActorOptions = &out.actorOptions
		out.RayActorOptions.AcceleratorType = accelType
	}
	if res != nil {
		// The replica reserves its slice itself: no Serve placement group.
		out.reservation, out.hasReservation = *res, true
		out.profiler = d.Profiler
		return
	}
	out.PlacementGroupBundles = d.PlacementGroupBundles
	out.PlacementGroupStrategy = string(d.PlacementGroupStrategy)
	out.PlacementGroupBundleLabelSelector = d.PlacementGroupBundleLabelSelector
}

// marshal encodes v compactly without HTML escaping. Serve configs and
// JSON objects take the hand-written encoder (configjson.go), which gives
// the same bytes as encoding/json.
func marshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case rayApplication:
		return encodeConfig(&v)
	case *rayApplication:
		return encodeConfig(v)
	case map[string]any:
		e := jsonEnc{}
		e.any(v)
		return e.b, e.err
	}
	return marshalReflect(v)
}

// marshalReflect is marshal through encoding/json.
func marshalReflect(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return slices.Clip(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}
