package serve

import (
	"maps"
	"slices"

	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve/internal/freeform"
	"github.com/raytpu/raytpu/serveconfig"
)

// envOrNil returns a copy of e, or nil when e sets nothing.
func envOrNil(e *runtimeenv.RuntimeEnv) *runtimeenv.RuntimeEnv {
	if envEmpty(e) {
		return nil
	}
	return e.Clone()
}

// envEmpty reports whether e sets nothing.
func envEmpty(e *runtimeenv.RuntimeEnv) bool { return e.IsEmpty() }

// rayConfig writes the Serve config of a validated deployment to out.
// accelType is Ray's accelerator type of its AcceleratorConfig ("" for
// none); res is its slice reservation when it has a topology. The config
// goes into a plan, so it shares no map, slice or pointer with d: the
// user may change d after Compile without changing the plan.
func (d *Deployment) rayConfig(out *serveconfig.Deployment, accelType string, res *serveconfig.SliceReservation) error {
	uc, err := freeform.CopyMap(d.UserConfig)
	if err != nil {
		return err
	}
	*out = serveconfig.Deployment{
		Name:                      d.Name,
		NumReplicas:               d.NumReplicas,
		MaxOngoingRequests:        d.MaxOngoingRequests,
		MaxQueuedRequests:         d.MaxQueuedRequests,
		UserConfig:                uc,
		AutoscalingConfig:         cloneAutoscaling(d.AutoscalingConfig),
		GracefulShutdownWaitLoopS: clonePtr(d.GracefulShutdownWaitLoopS),
		GracefulShutdownTimeoutS:  clonePtr(d.GracefulShutdownTimeoutS),
		HealthCheckPeriodS:        d.HealthCheckPeriodS,
		HealthCheckTimeoutS:       d.HealthCheckTimeoutS,
		MaxReplicasPerNode:        d.MaxReplicasPerNode,
	}
	o := d.RayActorOptions
	if o != nil || (accelType != "" && res == nil) {
		out.RayActorOptions = new(serveconfig.ActorOptions)
	}
	if o != nil {
		*out.RayActorOptions = serveconfig.ActorOptions{
			RuntimeEnv:      envOrNil(&o.RuntimeEnv),
			NumCPUs:         clonePtr(o.NumCPUs),
			NumGPUs:         o.NumGPUs,
			Memory:          o.Memory,
			Resources:       maps.Clone(o.Resources),
			AcceleratorType: o.AcceleratorType,
			LabelSelector:   maps.Clone(o.LabelSelector),
		}
	}
	if accelType != "" && res == nil {
		// An accelerator without a topology places the replica actor on
		// nodes of that accelerator.
		out.RayActorOptions.AcceleratorType = accelType
	}
	if res != nil {
		// The replica reserves its slice itself: no Serve placement group.
		r := *res // its map is the deployment's own, made by compileSlices
		out.Reservation = &r
		out.Profiler = clonePtr(d.Profiler)
		return nil
	}
	out.PlacementGroupBundles = cloneMaps(d.PlacementGroupBundles)
	out.PlacementGroupStrategy = string(d.PlacementGroupStrategy)
	out.PlacementGroupBundleLabelSelector = cloneMaps(d.PlacementGroupBundleLabelSelector)
	return nil
}

// clonePtr returns a pointer to a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// cloneMaps copies a slice of maps and each of its maps.
func cloneMaps[M ~map[K]V, K comparable, V any](s []M) []M {
	if s == nil {
		return nil
	}
	out := slices.Clone(s)
	for i, m := range out {
		out[i] = maps.Clone(m)
	}
	return out
}

// cloneAutoscaling returns a copy of a that shares no pointer with it.
func cloneAutoscaling(a *serveconfig.AutoscalingConfig) *serveconfig.AutoscalingConfig {
	if a == nil {
		return nil
	}
	c := *a
	c.MinReplicas = clonePtr(a.MinReplicas)
	c.InitialReplicas = clonePtr(a.InitialReplicas)
	c.UpscaleDelayS = clonePtr(a.UpscaleDelayS)
	c.DownscaleDelayS = clonePtr(a.DownscaleDelayS)
	c.DownscaleToZeroDelayS = clonePtr(a.DownscaleToZeroDelayS)
	return &c
}
