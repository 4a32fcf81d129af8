package serve

import (
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// resolveSlice runs placement's slice validation for a deployment's
// topology once, reporting every error under the deployment's own fields:
// acceleratorConfig.topology and .accelerator, placementGroupBundles[0] for
// the worker bundle, placementGroupStrategy, numReplicas. With p nil (the
// first pass of Compile) no path is built. The returned shape builds each
// replica's slice group.
func resolveSlice(p *field.Path, a *AcceleratorConfig, bundle map[string]float64, strategy placement.Strategy) (*placement.Shape, field.ErrorList) {
	var f placement.Fields
	if p != nil {
		f = sliceFields(p)
	}
	return placement.SliceSpec{
		Topology:           a.Topology,
		Accelerator:        a.Accelerator,
		ResourcesPerBundle: bundle,
		Strategy:           strategy,
		// A negative timeout waits indefinitely, as placement reads it.
		HeadReservationTimeout: a.HeadReservationTimeout,
	}.Resolve(f)
}

// sliceFields are the deployment's paths for placement's slice fields.
func sliceFields(p *field.Path) placement.Fields {
	f := placement.FieldsUnder(p.Child("acceleratorConfig"))
	f.ResourcesPerBundle = p.Child("placementGroupBundles").Index(0)
	f.Strategy = p.Child("placementGroupStrategy")
	f.NumSlices = p.Child("numReplicas")
	return f
}
