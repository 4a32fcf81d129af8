package serve

import (
	"fmt"
	"maps"
	"slices"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/serve/internal/freeform"
	"github.com/raytpu/raytpu/serve/internal/servecheck"
	"github.com/raytpu/raytpu/serveconfig"
)

func init() {
	servecheck.DeploymentOptions = func(d any, p *field.Path) field.ErrorList {
		dep, ok := d.(*Deployment)
		if !ok || dep == nil {
			return field.ErrorList{field.Required(p, "a deployment's options")}
		}
		return dep.validate(p)
	}
}

// validTPUPerActor is Ray's TPU_VALID_CHIP_OPTIONS: what an actor may
// request in resources["TPU"].
var validTPUPerActor = []float64{1, 2, 4, 8}

// resourceUnit is Ray's RESOURCE_UNIT_SCALING: resource amounts have four
// decimal places.
const resourceUnit = 10000

// validate checks every option of d that Ray's DeploymentSchema,
// DeploymentConfig and ReplicaConfig check, at p.
func (d *Deployment) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "the name of a deployment defined in the application's code"))
	}
	if len(d.Name) > placement.MaxNameLength {
		errs = append(errs, field.TooMany(p.Child("name"), len(d.Name), placement.MaxNameLength, placement.SourceNameLength))
	}
	if why := servecheck.Name(d.Name); why != "" {
		errs = append(errs, field.Invalid(p.Child("name"), d.Name, why))
	}
	np := func() *field.Path { return p.Child("num_replicas") }
	if n, ok := d.NumReplicas.Count(); ok {
		switch {
		case n > placement.MaxReplicas:
			errs = append(errs, field.TooMany(np(), n, placement.MaxReplicas, placement.SourceReplicas))
		case n < 1:
			errs = append(errs, field.Invalid(np(), n, `must be at least 1: a count of 1 or more (serveconfig.ReplicaCount(n)), "auto" for Serve's autoscaling (serveconfig.AutoReplicas()), or unset for 1 replica`))
		case d.AutoscalingConfig != nil:
			errs = append(errs, field.Forbidden(np(), `manually setting num_replicas is not allowed when autoscaling_config is provided; leave it unset or use serveconfig.AutoReplicas() ("auto")`))
		}
	}
	if a := d.AutoscalingConfig; a != nil {
		// Without a path first, so that a valid config builds none.
		if aerrs := validateAutoscaling(a, nil, d.NumReplicas.IsAuto()); len(aerrs) > 0 {
			errs = append(errs, validateAutoscaling(a, p.Child("autoscaling_config"), d.NumReplicas.IsAuto())...)
		}
	}
	if d.MaxOngoingRequests < 0 {
		errs = append(errs, field.Invalid(p.Child("max_ongoing_requests"), d.MaxOngoingRequests, "must be at least 1, or 0 (unset) for Serve's default, 5"))
	}
	if n, ok := d.MaxQueuedRequests.Limit(); ok && n < 1 {
		errs = append(errs, field.Invalid(p.Child("max_queued_requests"), n, "must be at least 1: a limit of 1 or more (serveconfig.MaxQueued(n)), -1 for no limit (serveconfig.NoQueueLimit()), or unset for Serve's default, no limit"))
	}
	if d.UserConfig != nil {
		if _, reserved := d.UserConfig[serveconfig.SliceReservationKey]; reserved {
			errs = append(errs, field.Forbidden(p.Child("user_config").Key(serveconfig.SliceReservationKey), "the key is reserved for the slice a replica reserves (serveconfig.SliceReservationKey)"))
		}
		errs = append(errs, freeform.Check(p.Child("user_config"), d.UserConfig)...)
	}
	errs = ruleAt(errs, p, "health_check_period_s", d.HealthCheckPeriodS, positiveRule(d.HealthCheckPeriodS))
	errs = ruleAt(errs, p, "health_check_timeout_s", d.HealthCheckTimeoutS, positiveRule(d.HealthCheckTimeoutS))
	if v := d.GracefulShutdownWaitLoopS; v != nil {
		errs = ruleAt(errs, p, "graceful_shutdown_wait_loop_s", *v, nonNegativeRule(v))
	}
	if v := d.GracefulShutdownTimeoutS; v != nil {
		errs = ruleAt(errs, p, "graceful_shutdown_timeout_s", *v, nonNegativeRule(v))
	}
	if o := d.RayActorOptions; o != nil {
		errs = append(errs, o.validate(p)...)
	}
	if d.MaxReplicasPerNode < 0 || d.MaxReplicasPerNode > maxReplicasPerNodeMax {
		errs = append(errs, field.Invalid(p.Child("max_replicas_per_node"), d.MaxReplicasPerNode, fmt.Sprintf("must be between 1 and %d, or unset for no limit", maxReplicasPerNodeMax)))
	}
	errs = append(errs, d.validatePlacement(p)...)
	return errs
}

// validate checks the options of the deployment at dp; their paths are
// built only for an error.
func (o *RayActorOptions) validate(dp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if o.NumCPUs != nil {
		if why := quantityRule(*o.NumCPUs); why != "" {
			errs = ruleAt(errs, dp.Child("ray_actor_options"), "num_cpus", *o.NumCPUs, why)
		}
	}
	if why := quantityRule(o.NumGPUs); why != "" {
		errs = ruleAt(errs, dp.Child("ray_actor_options"), "num_gpus", o.NumGPUs, why)
	}
	if why := quantityRule(o.Memory); why != "" {
		errs = ruleAt(errs, dp.Child("ray_actor_options"), "memory", o.Memory, why)
	}
	if why := servecheck.Text(o.AcceleratorType); why != "" {
		errs = ruleAt(errs, dp.Child("ray_actor_options"), "accelerator_type", o.AcceleratorType, why)
	}
	if len(o.Resources) == 0 && len(o.LabelSelector) == 0 && envEmpty(&o.RuntimeEnv) {
		return errs
	}
	p := dp.Child("ray_actor_options")
	for _, k := range slices.Sorted(maps.Keys(o.Resources)) {
		rp, v := p.Child("resources").Key(k), o.Resources[k]
		switch {
		case k == rayvocab.ResourceCPU || k == rayvocab.ResourceGPU:
			errs = append(errs, field.Forbidden(rp, "use num_cpus and num_gpus instead of CPU and GPU in resources"))
		case k == rayvocab.ResourceTPU && !slices.Contains(validTPUPerActor, v):
			errs = append(errs, field.NotSupported(rp, v, []string{"1", "2", "4", "8"}).
				WithDetail("an actor may request only 1, 2, 4 or 8 TPU"))
		default:
			errs = append(errs, quantity(rp, v)...)
		}
	}
	errs = append(errs, placement.ValidateLabelSelector(p.Child("label_selector"), o.LabelSelector)...)
	errs = append(errs, servecheck.RuntimeEnv(p.Child("runtime_env"), &o.RuntimeEnv)...)
	return errs
}

// quantity is Ray's _validate_resource_quantity: not negative, and not
// finer than 0.0001.
func quantity(p *field.Path, v float64) field.ErrorList {
	if why := quantityRule(v); why != "" {
		return field.ErrorList{field.Invalid(p, v, why)}
	}
	return nil
}

func quantityRule(v float64) string {
	switch {
	case v < 0 || !finite(v):
		return "must be a number, 0 or more"
	case v != 0 && int64(v*resourceUnit) == 0:
		return "resource amounts cannot be finer than 0.0001"
	}
	return ""
}

// validatePlacement checks the per-replica placement group options as
// DeploymentSchema and ReplicaConfig do. With a topology the bundles
// describe the slice instead and validateAccelerator checks them.
func (d *Deployment) validatePlacement(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d.PlacementGroupStrategy != "" && !slices.Contains(placement.Strategies(), string(d.PlacementGroupStrategy)) {
		errs = append(errs, field.NotSupported(p.Child("placement_group_strategy"), string(d.PlacementGroupStrategy), placement.Strategies()))
	}
	var bp *field.Path
	if len(d.PlacementGroupBundles) > 0 {
		bp = p.Child("placement_group_bundles")
	}
	for i, b := range d.PlacementGroupBundles {
		allZero := true
		for _, k := range slices.Sorted(maps.Keys(b)) {
			if v := b[k]; v != 0 {
				allZero = false
				errs = append(errs, quantity(bp.Index(i).Key(k), v)...)
			}
		}
		if allZero {
			errs = append(errs, field.Invalid(bp.Index(i), fmtBundle(b), "a bundle needs at least one resource above 0"))
		}
	}
	if d.hasTopology() {
		return errs
	}
	bundles := len(d.PlacementGroupBundles)
	if bundles == 0 {
		if d.PlacementGroupStrategy != "" {
			errs = append(errs, field.Forbidden(p.Child("placement_group_strategy"), "needs placement_group_bundles"))
		}
		if len(d.PlacementGroupBundleLabelSelector) > 0 {
			errs = append(errs, field.Forbidden(p.Child("placement_group_bundle_label_selector"), "needs placement_group_bundles"))
		}
		return errs
	}
	if d.MaxReplicasPerNode != 0 {
		errs = append(errs, field.Forbidden(p.Child("max_replicas_per_node"), "not allowed with placement_group_bundles"))
	}
	if n := len(d.PlacementGroupBundleLabelSelector); n > 0 && n != 1 && n != bundles {
		errs = append(errs, field.Invalid(p.Child("placement_group_bundle_label_selector"), n,
			fmt.Sprintf("must hold one selector for every bundle, or one per bundle (%d)", bundles)))
	}
	for i, sel := range d.PlacementGroupBundleLabelSelector {
		errs = append(errs, placement.ValidateLabelSelector(p.Child("placement_group_bundle_label_selector").Index(i), sel)...)
	}
	errs = append(errs, d.actorFitsBundle0(p)...)
	return errs
}

// actorFitsBundle0 is ReplicaConfig's rule: the replica actor runs in
// bundle 0, so its CPU (default 1), GPU and resources must fit there.
func (d *Deployment) actorFitsBundle0(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	first := d.PlacementGroupBundles[0]
	cpus, op := 1.0, p.Child("ray_actor_options")
	var gpus float64
	var res map[string]float64
	if o := d.RayActorOptions; o != nil {
		if o.NumCPUs != nil {
			cpus = *o.NumCPUs
		}
		gpus, res = o.NumGPUs, o.Resources
	}
	fit := func(fp *field.Path, name string, need float64) {
		if have := first[name]; have < need {
			errs = append(errs, field.Invalid(fp, need, fmt.Sprintf(
				"the replica actor runs in placement_group_bundles[0], which has %g %s; add %s to bundle 0 or lower the actor's", have, name, name)))
		}
	}
	fit(op.Child("num_cpus"), rayvocab.ResourceCPU, cpus)
	fit(op.Child("num_gpus"), rayvocab.ResourceGPU, gpus)
	for _, k := range slices.Sorted(maps.Keys(res)) {
		fit(op.Child("resources").Key(k), k, res[k])
	}
	return errs
}
