package llm

import (
	"fmt"
	"maps"
	"slices"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/serve/internal/servecheck"
	"github.com/raytpu/raytpu/tpu"
)

// kinds lists the accelerator kinds raytpu compiles.
func kinds() []string { return []string{string(TPU), string(CPU)} }

// resolveAccelerator returns the accelerator kind (explicit, or inferred
// as Ray's _resolve_accelerator_config does) and Ray's accelerator type,
// and checks them against each other as _check_accelerator_type_matches_hardware does.
func (c *LLMConfig) resolveAccelerator(p *field.Path) (Kind, string, field.ErrorList) {
	var errs field.ErrorList
	var accelType string
	if c.AcceleratorType != "" {
		g, err := tpu.ResolveGeneration(c.AcceleratorType, p.Child("accelerator_type"))
		if err != nil {
			errs = append(errs, err.WithDetail("raytpu compiles TPU accelerator types (TPU-V4, TPU-V6E, ...) in any spelling"))
		} else {
			accelType = g.RayAcceleratorType()
		}
	}
	kind := c.inferKind()
	if a := c.AcceleratorConfig; a != nil {
		kp := p.Child("accelerator_config")
		switch a.Kind {
		case TPU, CPU:
		case "":
			errs = append(errs, field.Required(kp.Child("kind"), `"tpu" or "cpu"`))
		default:
			errs = append(errs, field.NotSupported(kp.Child("kind"), string(a.Kind), kinds()).
				WithDetail("raytpu compiles TPU and CPU LLM deployments"))
		}
		if a.Topology != "" && a.Kind == CPU {
			errs = append(errs, field.Forbidden(kp.Child("topology"), "only kind tpu has a topology (Ray would drop it)"))
		}
	}
	switch {
	case kind == "":
		errs = append(errs, field.Required(p.Child("accelerator_type"),
			"a TPU accelerator type (e.g. TPU-V6E), or accelerator_config kind cpu: without either Ray serves the model on a GPU"))
	case kind == CPU && c.AcceleratorType != "":
		errs = append(errs, field.Forbidden(p.Child("accelerator_type"),
			"accelerator_type cannot be used with CPU-only configurations (kind cpu, or placement group bundles without TPU)"))
	case kind == "gpu" && c.AcceleratorConfig == nil:
		errs = append(errs, field.Invalid(p.Child("placement_group_config"), "GPU bundles", "raytpu compiles TPU and CPU LLM deployments, not GPU ones"))
	case kind == TPU && c.topology() != "" && c.AcceleratorType == "":
		errs = append(errs, field.Required(p.Child("accelerator_type"),
			"accelerator_type must be provided when specifying a TPU topology for TPU slice provisioning (e.g. TPU-V6E)"))
	}
	return kind, accelType, errs
}

// inferKind is the accelerator kind: AcceleratorConfig's, else what the
// placement group bundles imply (TPU, then GPU, else CPU), else TPU for an
// accelerator type; "" when nothing says.
func (c *LLMConfig) inferKind() Kind {
	if c.AcceleratorConfig != nil {
		return c.AcceleratorConfig.Kind
	}
	if g := c.PlacementGroupConfig; g != nil {
		all := append([]map[string]float64{g.BundlePerWorker}, g.Bundles...)
		switch {
		case slices.ContainsFunc(all, func(b map[string]float64) bool { return b[rayvocab.ResourceTPU] > 0 }):
			return TPU
		case slices.ContainsFunc(all, func(b map[string]float64) bool { return b[rayvocab.ResourceGPU] > 0 }):
			return "gpu"
		}
		return CPU
	}
	if c.AcceleratorType != "" {
		return TPU
	}
	return ""
}

// validate checks the placement group config at p; with a topology its
// TPU bundles must be identical, as one slice's hosts are.
func (g *PlacementGroupConfig) validate(p *field.Path, topology string) field.ErrorList {
	if g == nil {
		return nil
	}
	var errs field.ErrorList
	switch {
	case g.BundlePerWorker != nil && g.Bundles != nil:
		errs = append(errs, field.Forbidden(p.Child("bundles"), "cannot specify both bundle_per_worker and bundles"))
	case g.BundlePerWorker == nil && g.Bundles == nil:
		errs = append(errs, field.Required(p.Child("bundle_per_worker"), "placement_group_config must specify either bundle_per_worker or bundles"))
	}
	if g.Strategy != "" && !g.Strategy.Valid() {
		errs = append(errs, field.NotSupported(p.Child("strategy"), string(g.Strategy), placement.Strategies()))
	}
	check := func(bp *field.Path, b map[string]float64) {
		for _, k := range slices.Sorted(maps.Keys(b)) {
			if v := b[k]; v < 0 || v != v {
				errs = append(errs, field.Invalid(bp.Key(k), v, "must be a number, 0 or more"))
			}
		}
	}
	check(p.Child("bundle_per_worker"), g.BundlePerWorker)
	var first map[string]float64
	for i, b := range g.Bundles {
		check(p.Child("bundles").Index(i), b)
		if topology == "" || b[rayvocab.ResourceTPU] <= 0 {
			continue
		}
		if first == nil {
			first = b
		} else if !maps.Equal(first, b) {
			errs = append(errs, field.Invalid(p.Child("bundles").Index(i), placement.FormatResources(b),
				"heterogeneous TPU bundles are not supported when a topology is set: every TPU bundle must equal "+placement.FormatResources(first)))
		}
	}
	return errs
}

// compileSlice resolves the slice each replica of a config with a topology
// reserves, as TPUAccelerator.create_placement_group calls
// slice_placement_group: the topology, the worker bundle (the engine's
// first TPU bundle), the strategy. It checks Serve LLM's rule that the
// engine's chips divide into hosts, and returns the shape with the most
// replicas that reserve one.
func (c *LLMConfig) compileSlice(p *field.Path, accelType string, before int) (*placement.Shape, int, field.ErrorList) {
	devices, dp := c.devices(p)
	fields := func() placement.Fields {
		f := placement.FieldsUnder(nil)
		f.Topology = p.Child("accelerator_config", "topology")
		f.Accelerator = p.Child("accelerator_type")
		f.Strategy = p.Child("placement_group_config", "strategy")
		f.NumSlices = p.Child("deployment_config", "num_replicas")
		f.ResourcesPerBundle, f.BundleTPU = c.bundlePath(p, dp)
		return f
	}
	strategy := placement.Pack
	if g := c.PlacementGroupConfig; g != nil && g.Strategy != "" {
		strategy = g.Strategy
	}
	spec := placement.SliceSpec{
		Topology:           c.topology(),
		Accelerator:        accelType,
		ResourcesPerBundle: c.workerBundle(accelType, 0),
		Strategy:           strategy,
	}
	shape, errs := spec.ResolveFunc(fields)
	if len(errs) > 0 {
		return nil, 0, errs
	}
	if c.PlacementGroupConfig == nil {
		// default_bundles: one bundle per host of min(devices, chips per
		// host) chips; devices past a host must fill whole hosts.
		perHost, chips := shape.Slice.ChipsPerHost, shape.Slice.Chips()
		switch {
		case devices > chips:
			return nil, 0, field.ErrorList{field.Invalid(dp, devices, fmt.Sprintf(
				"tensor_parallel_size × pipeline_parallel_size is %d chips, more than the %d of a %s %s slice", devices, chips, shape.Slice.Generation.Name, c.topology()))}
		case devices > perHost && devices%perHost != 0:
			return nil, 0, field.ErrorList{field.Invalid(dp, devices, fmt.Sprintf(
				"num_devices (%d) must be a multiple of chips_per_host (%d) for TPU topologies", devices, perHost))}
		case devices < perHost:
			spec.ResourcesPerBundle = c.workerBundle(accelType, devices)
			if shape, errs = spec.ResolveFunc(fields); len(errs) > 0 {
				return nil, 0, errs
			}
		}
	}
	d := c.DeploymentConfig.serveDeployment("")
	n := d.MaxReplicas()
	if n > placement.MaxReplicas {
		return nil, 0, nil // the deployment's validation reports it
	}
	if e := servecheck.SliceReplicaLimit(func() *field.Path {
		if d.AutoscalingConfig != nil && d.AutoscalingConfig.MaxReplicas > 0 {
			return p.Child("deployment_config", "autoscaling_config", "max_replicas")
		}
		return p.Child("deployment_config", "num_replicas")
	}, n, before, shape.BundlesPerSlice); e != nil {
		return nil, 0, field.ErrorList{e}
	}
	return shape, n, nil
}

// workerBundle is the per-host bundle of the slice, as Serve LLM picks
// it: the first TPU bundle of the engine's bundles (each with
// accelerator_type:<type>: 0.001 added when absent), else {TPU: 1}.
// Without a placement group config the engine's bundles are
// default_bundles' {TPU: tpu, accelerator_type:<type>: 0.001}; tpu 0
// leaves TPU out, for slice placement to fill in chips per host.
func (c *LLMConfig) workerBundle(accelType string, tpuChips int) map[string]float64 {
	g := c.PlacementGroupConfig
	if g == nil {
		b := map[string]float64{rayvocab.AcceleratorTypeResource(accelType): rayvocab.AcceleratorConstraintAmount}
		if tpuChips > 0 {
			b[rayvocab.ResourceTPU] = float64(tpuChips)
		}
		return b
	}
	for _, b := range append([]map[string]float64{g.BundlePerWorker}, g.Bundles...) {
		if b[rayvocab.ResourceTPU] > 0 {
			b = maps.Clone(b)
			if _, ok := b[rayvocab.AcceleratorTypeResource(accelType)]; !ok {
				b[rayvocab.AcceleratorTypeResource(accelType)] = rayvocab.AcceleratorConstraintAmount
			}
			return b
		}
	}
	return map[string]float64{rayvocab.ResourceTPU: 1}
}

// bundlePath is where a problem with the worker bundle is reported: the
// placement group config's bundle it came from, or without one the engine
// kwarg that sized it (dp).
func (c *LLMConfig) bundlePath(p, dp *field.Path) (bundle, tpuAt *field.Path) {
	g := c.PlacementGroupConfig
	switch {
	case g == nil:
		return dp, dp
	case g.BundlePerWorker[rayvocab.ResourceTPU] > 0:
		bp := p.Child("placement_group_config", "bundle_per_worker")
		return bp, bp.Key(rayvocab.ResourceTPU)
	}
	for i, b := range g.Bundles {
		if b[rayvocab.ResourceTPU] > 0 {
			bp := p.Child("placement_group_config", "bundles").Index(i)
			return bp, bp.Key(rayvocab.ResourceTPU)
		}
	}
	pp := p.Child("placement_group_config")
	return pp, pp
}
