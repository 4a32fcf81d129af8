package serve

import (
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// resolveSlice runs placement's slice validation for a deployment's
// topology once, reporting every error under the deployment's own fields:
// acceleratorConfig.topology and .accelerator, placementGroupBundles[0] for
// the worker bundle, placementGroupStrategy. The returned shape builds each
// replica's slice group.
func resolveSlice(p *field.Path, a *AcceleratorConfig, bundle map[string]float64, strategy placement.Strategy) (*placement.Shape, field.ErrorList) {
	ap := p.Child("acceleratorConfig")
	f := placement.FieldsUnder(ap)
	f.ResourcesPerBundle = p.Child("placementGroupBundles").Index(0)
	f.Strategy = p.Child("placementGroupStrategy")
	f.NumSlices = p.Child("numReplicas")
	return placement.SliceSpec{
		Topology:           a.Topology,
		Accelerator:        a.Accelerator,
		ResourcesPerBundle: bundle,
		Strategy:           strategy,
		// A negative timeout waits indefinitely, as placement reads it.
		HeadReservationTimeout: a.HeadReservationTimeout,
	}.Resolve(f)
}
