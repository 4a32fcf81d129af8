package serveconfig

import "slices"

// The Serve config's types, encoded field by field in declaration order
// with the primitives of jsonenc.go.

func (e *jsonEnc) application(a *Application) {
	e.b = append(e.b, '{')
	first := true
	e.field(&first, "name")
	e.str(a.Name)
	if len(a.RoutePrefix) > 0 {
		e.field(&first, "route_prefix")
		e.raw(a.RoutePrefix)
	}
	e.field(&first, "import_path")
	e.str(a.ImportPath)
	if a.RuntimeEnv != nil {
		e.field(&first, "runtime_env")
		e.slow(a.RuntimeEnv)
	}
	if len(a.Deployments) > 0 {
		e.field(&first, "deployments")
		e.b = append(e.b, '[')
		for i := range a.Deployments {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.deployment(&a.Deployments[i])
		}
		e.b = append(e.b, ']')
	}
	if len(a.Args) > 0 {
		e.field(&first, "args")
		e.object(a.Args)
	}
	e.b = append(e.b, '}')
}

func (e *jsonEnc) deployment(d *Deployment) {
	e.b = append(e.b, '{')
	first := true
	e.field(&first, "name")
	e.str(d.Name)
	if !d.NumReplicas.IsZero() {
		e.field(&first, "num_replicas")
		if d.NumReplicas.IsAuto() {
			e.b = append(e.b, `"auto"`...)
		} else {
			e.int(d.NumReplicas.n)
		}
	}
	if d.MaxOngoingRequests != 0 {
		e.field(&first, "max_ongoing_requests")
		e.int(d.MaxOngoingRequests)
	}
	if !d.MaxQueuedRequests.IsZero() {
		e.field(&first, "max_queued_requests")
		e.int(d.MaxQueuedRequests.wire())
	}
	if len(d.UserConfig) > 0 || d.Reservation != nil {
		e.field(&first, "user_config")
		e.userConfig(d.UserConfig, d.Reservation, d.Profiler)
	}
	if d.AutoscalingConfig != nil {
		e.field(&first, "autoscaling_config")
		e.autoscaling(d.AutoscalingConfig)
	}
	if d.GracefulShutdownWaitLoopS != nil {
		e.field(&first, "graceful_shutdown_wait_loop_s")
		e.num(*d.GracefulShutdownWaitLoopS)
	}
	if d.GracefulShutdownTimeoutS != nil {
		e.field(&first, "graceful_shutdown_timeout_s")
		e.num(*d.GracefulShutdownTimeoutS)
	}
	if d.HealthCheckPeriodS != 0 {
		e.field(&first, "health_check_period_s")
		e.num(d.HealthCheckPeriodS)
	}
	if d.HealthCheckTimeoutS != 0 {
		e.field(&first, "health_check_timeout_s")
		e.num(d.HealthCheckTimeoutS)
	}
	if d.RayActorOptions != nil {
		e.field(&first, "ray_actor_options")
		e.actorOptions(d.RayActorOptions)
	}
	if len(d.PlacementGroupBundles) > 0 {
		e.field(&first, "placement_group_bundles")
		mapList(e, d.PlacementGroupBundles, e.num)
	}
	if d.PlacementGroupStrategy != "" {
		e.field(&first, "placement_group_strategy")
		e.str(d.PlacementGroupStrategy)
	}
	if len(d.PlacementGroupBundleLabelSelector) > 0 {
		e.field(&first, "placement_group_bundle_label_selector")
		mapList(e, d.PlacementGroupBundleLabelSelector, e.str)
	}
	if d.MaxReplicasPerNode != 0 {
		e.field(&first, "max_replicas_per_node")
		e.int(d.MaxReplicasPerNode)
	}
	e.b = append(e.b, '}')
}

func (e *jsonEnc) actorOptions(o *ActorOptions) {
	e.b = append(e.b, '{')
	first := true
	if o.RuntimeEnv != nil {
		e.field(&first, "runtime_env")
		e.slow(o.RuntimeEnv)
	}
	if o.NumCPUs != nil {
		e.field(&first, "num_cpus")
		e.num(*o.NumCPUs)
	}
	if o.NumGPUs != 0 {
		e.field(&first, "num_gpus")
		e.num(o.NumGPUs)
	}
	if o.Memory != 0 {
		e.field(&first, "memory")
		e.num(o.Memory)
	}
	if len(o.Resources) > 0 {
		e.field(&first, "resources")
		e.resources(o.Resources)
	}
	if o.AcceleratorType != "" {
		e.field(&first, "accelerator_type")
		e.str(o.AcceleratorType)
	}
	if len(o.LabelSelector) > 0 {
		e.field(&first, "label_selector")
		e.labels(o.LabelSelector)
	}
	e.b = append(e.b, '}')
}

func (e *jsonEnc) autoscaling(a *AutoscalingConfig) {
	e.b = append(e.b, '{')
	first := true
	if a.MinReplicas != nil {
		e.field(&first, "min_replicas")
		e.int(*a.MinReplicas)
	}
	if a.InitialReplicas != nil {
		e.field(&first, "initial_replicas")
		e.int(*a.InitialReplicas)
	}
	if a.MaxReplicas != 0 {
		e.field(&first, "max_replicas")
		e.int(a.MaxReplicas)
	}
	floats := [...]struct {
		key string
		v   float64
		set bool
	}{
		{"target_ongoing_requests", a.TargetOngoingRequests, a.TargetOngoingRequests != 0},
		{"upscale_delay_s", deref(a.UpscaleDelayS), a.UpscaleDelayS != nil},
		{"downscale_delay_s", deref(a.DownscaleDelayS), a.DownscaleDelayS != nil},
		{"downscale_to_zero_delay_s", deref(a.DownscaleToZeroDelayS), a.DownscaleToZeroDelayS != nil},
		{"look_back_period_s", a.LookBackPeriodS, a.LookBackPeriodS != 0},
		{"upscaling_factor", a.UpscalingFactor, a.UpscalingFactor != 0},
		{"downscaling_factor", a.DownscalingFactor, a.DownscalingFactor != 0},
	}
	for _, f := range floats {
		if f.set {
			e.field(&first, f.key)
			e.num(f.v)
		}
	}
	if a.AggregationFunction != "" {
		e.field(&first, "aggregation_function")
		e.str(a.AggregationFunction)
	}
	e.b = append(e.b, '}')
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func (e *jsonEnc) reservation(r *SliceReservation) {
	e.b = append(e.b, '{')
	first := true
	e.field(&first, "version")
	e.int(r.Version)
	e.field(&first, "topology")
	e.str(r.Topology)
	e.field(&first, "accelerator_version")
	e.str(r.AcceleratorVersion)
	e.field(&first, "accelerator_type")
	e.str(r.AcceleratorType)
	e.field(&first, "pod_type")
	e.str(r.PodType)
	e.field(&first, "num_hosts")
	e.int(r.NumHosts)
	e.field(&first, "chips_per_host")
	e.int(r.ChipsPerHost)
	e.field(&first, "num_bundles")
	e.int(r.NumBundles)
	e.field(&first, "resources_per_bundle")
	if r.ResourcesPerBundle == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.resources(r.ResourcesPerBundle)
	}
	e.field(&first, "strategy")
	e.str(r.Strategy)
	e.field(&first, "head_reservation_timeout_s")
	e.num(r.HeadReservationTimeoutS)
	e.b = append(e.b, '}')
}

// userConfig writes a deployment's user_config with its slice
// reservation under SliceReservationKey and its profiler, if any, under
// ProfilerKey: what encoding/json writes for a copy of m with them added.
func (e *jsonEnc) userConfig(m map[string]any, res *SliceReservation, prof *ProfilerConfig) {
	if res == nil {
		e.object(m)
		return
	}
	var buf [8]string
	keys := sortedKeys(buf[:], m)
	if i, found := slices.BinarySearch(keys, SliceReservationKey); !found {
		keys = slices.Insert(keys, i, SliceReservationKey)
	}
	if prof != nil {
		if i, found := slices.BinarySearch(keys, ProfilerKey); !found {
			keys = slices.Insert(keys, i, ProfilerKey)
		}
	}
	e.b = append(e.b, '{')
	first := true
	for _, k := range keys {
		e.key(&first, k)
		switch {
		case k == SliceReservationKey:
			e.reservation(res)
		case k == ProfilerKey && prof != nil:
			e.b = append(e.b, `{"port":`...)
			e.int(prof.Port)
			e.b = append(e.b, '}')
		default:
			e.any(m[k])
		}
	}
	e.b = append(e.b, '}')
}

// MarshalJSON encodes the application as Ray is sent it (see the package
// documentation).
func (a Application) MarshalJSON() ([]byte, error) {
	e := jsonEnc{b: make([]byte, 0, 1024)}
	e.application(&a)
	if e.err != nil {
		return nil, e.err
	}
	return slices.Clip(e.b), nil
}

// MarshalJSON encodes the deployment as it is sent inside its
// application, its reservation and profiler inside user_config.
func (d Deployment) MarshalJSON() ([]byte, error) {
	e := jsonEnc{b: make([]byte, 0, 256)}
	e.deployment(&d)
	if e.err != nil {
		return nil, e.err
	}
	return slices.Clip(e.b), nil
}
