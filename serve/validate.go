package serve

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
)

// validTPUPerActor is Ray's TPU_VALID_CHIP_OPTIONS: what an actor may
// request in resources["TPU"].
var validTPUPerActor = []float64{1, 2, 4, 8}

// resourceUnit is Ray's RESOURCE_UNIT_SCALING: resource amounts have four
// decimal places.
const resourceUnit = 10000

// ValidateOptions checks every option of d that Ray's DeploymentSchema,
// DeploymentConfig and ReplicaConfig check, reporting at p; the
// accelerator config and the profiler are Compile's. Serve LLM's
// deployment_config (package serve/llm) is checked with it.
func (d *Deployment) ValidateOptions(p *field.Path) field.ErrorList { return d.validate(p) }

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
	switch {
	case d.NumReplicas > placement.MaxReplicas:
		errs = append(errs, field.TooMany(p.Child("numReplicas"), int(d.NumReplicas), placement.MaxReplicas, placement.SourceReplicas))
	case d.NumReplicas < 0 && d.NumReplicas != Auto:
		errs = append(errs, field.Invalid(p.Child("numReplicas"), int(d.NumReplicas), `must be a positive count, or Auto ("auto")`))
	case d.NumReplicas > 0 && d.AutoscalingConfig != nil:
		errs = append(errs, field.Forbidden(p.Child("numReplicas"), "manually setting num_replicas is not allowed when autoscaling_config is provided; leave it unset or use Auto"))
	}
	if a := d.AutoscalingConfig; a != nil {
		// Without a path first, so that a valid config builds none.
		if aerrs := validateAutoscaling(a, nil, d.NumReplicas == Auto); len(aerrs) > 0 {
			errs = append(errs, validateAutoscaling(a, p.Child("autoscalingConfig"), d.NumReplicas == Auto)...)
		}
	}
	if d.MaxOngoingRequests < 0 {
		errs = append(errs, field.Invalid(p.Child("maxOngoingRequests"), d.MaxOngoingRequests, "must be at least 1"))
	}
	if d.MaxQueuedRequests < -1 {
		errs = append(errs, field.Invalid(p.Child("maxQueuedRequests"), d.MaxQueuedRequests, "must be -1 (no limit) or a positive integer"))
	}
	if d.UserConfig != nil {
		if _, reserved := d.UserConfig[SliceReservationKey]; reserved {
			errs = append(errs, field.Forbidden(p.Child("userConfig").Key(SliceReservationKey), "the key is reserved for the slice a replica reserves (serve.SliceReservationKey)"))
		}
		if _, err := json.Marshal(d.UserConfig); err != nil {
			errs = append(errs, field.Invalid(p.Child("userConfig"), fmt.Sprintf("%T", d.UserConfig), "must be JSON-serialisable: "+err.Error()))
		}
	}
	errs = ruleAt(errs, p, "healthCheckPeriodS", d.HealthCheckPeriodS, positiveRule(d.HealthCheckPeriodS))
	errs = ruleAt(errs, p, "healthCheckTimeoutS", d.HealthCheckTimeoutS, positiveRule(d.HealthCheckTimeoutS))
	if v := d.GracefulShutdownWaitLoopS; v != nil {
		errs = ruleAt(errs, p, "gracefulShutdownWaitLoopS", *v, nonNegativeRule(v))
	}
	if v := d.GracefulShutdownTimeoutS; v != nil {
		errs = ruleAt(errs, p, "gracefulShutdownTimeoutS", *v, nonNegativeRule(v))
	}
	if o := d.RayActorOptions; o != nil {
		errs = append(errs, o.validate(p)...)
	}
	if d.MaxReplicasPerNode < 0 || d.MaxReplicasPerNode > maxReplicasPerNodeMax {
		errs = append(errs, field.Invalid(p.Child("maxReplicasPerNode"), d.MaxReplicasPerNode, fmt.Sprintf("must be between 1 and %d, or unset for no limit", maxReplicasPerNodeMax)))
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
			errs = ruleAt(errs, dp.Child("rayActorOptions"), "numCPUs", *o.NumCPUs, why)
		}
	}
	if why := quantityRule(o.NumGPUs); why != "" {
		errs = ruleAt(errs, dp.Child("rayActorOptions"), "numGPUs", o.NumGPUs, why)
	}
	if why := quantityRule(o.Memory); why != "" {
		errs = ruleAt(errs, dp.Child("rayActorOptions"), "memory", o.Memory, why)
	}
	if len(o.Resources) == 0 && len(o.LabelSelector) == 0 && envEmpty(&o.RuntimeEnv) {
		return errs
	}
	p := dp.Child("rayActorOptions")
	for _, k := range slices.Sorted(maps.Keys(o.Resources)) {
		rp, v := p.Child("resources").Key(k), o.Resources[k]
		switch {
		case k == rayvocab.ResourceCPU || k == rayvocab.ResourceGPU:
			errs = append(errs, field.Forbidden(rp, "use numCPUs and numGPUs instead of CPU and GPU in resources"))
		case k == rayvocab.ResourceTPU && !slices.Contains(validTPUPerActor, v):
			errs = append(errs, field.NotSupported(rp, v, []string{"1", "2", "4", "8"}).
				WithDetail("an actor may request only 1, 2, 4 or 8 TPU"))
		default:
			errs = append(errs, quantity(rp, v)...)
		}
	}
	errs = append(errs, placement.ValidateLabelSelector(p.Child("labelSelector"), o.LabelSelector)...)
	errs = append(errs, ValidateRuntimeEnv(p.Child("runtimeEnv"), &o.RuntimeEnv)...)
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
		errs = append(errs, field.NotSupported(p.Child("placementGroupStrategy"), string(d.PlacementGroupStrategy), placement.Strategies()))
	}
	var bp *field.Path
	if len(d.PlacementGroupBundles) > 0 {
		bp = p.Child("placementGroupBundles")
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
			errs = append(errs, field.Forbidden(p.Child("placementGroupStrategy"), "needs placementGroupBundles"))
		}
		if len(d.PlacementGroupBundleLabelSelector) > 0 {
			errs = append(errs, field.Forbidden(p.Child("placementGroupBundleLabelSelector"), "needs placementGroupBundles"))
		}
		return errs
	}
	if d.MaxReplicasPerNode != 0 {
		errs = append(errs, field.Forbidden(p.Child("maxReplicasPerNode"), "not allowed with placementGroupBundles"))
	}
	if n := len(d.PlacementGroupBundleLabelSelector); n > 0 && n != 1 && n != bundles {
		errs = append(errs, field.Invalid(p.Child("placementGroupBundleLabelSelector"), n,
			fmt.Sprintf("must hold one selector for every bundle, or one per bundle (%d)", bundles)))
	}
	for i, sel := range d.PlacementGroupBundleLabelSelector {
		errs = append(errs, placement.ValidateLabelSelector(p.Child("placementGroupBundleLabelSelector").Index(i), sel)...)
	}
	errs = append(errs, d.actorFitsBundle0(p)...)
	return errs
}

// actorFitsBundle0 is ReplicaConfig's rule: the replica actor runs in
// bundle 0, so its CPU (default 1), GPU and resources must fit there.
func (d *Deployment) actorFitsBundle0(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	first := d.PlacementGroupBundles[0]
	cpus, op := 1.0, p.Child("rayActorOptions")
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
				"the replica actor runs in placementGroupBundles[0], which has %g %s; add %s to bundle 0 or lower the actor's", have, name, name)))
		}
	}
	fit(op.Child("numCPUs"), rayvocab.ResourceCPU, cpus)
	fit(op.Child("numGPUs"), rayvocab.ResourceGPU, gpus)
	for _, k := range slices.Sorted(maps.Keys(res)) {
		fit(op.Child("resources").Key(k), k, res[k])
	}
	return errs
}
