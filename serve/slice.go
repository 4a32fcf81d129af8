package serve

import (
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// sliceShape runs placement's slice validation for a deployment's
// topology, reporting every error under the deployment's own fields at p:
// accelerator_config.topology and .accelerator_type,
// placement_group_bundles[0] for the worker bundle,
// placement_group_strategy, num_replicas. The paths are
// built only for an error. The returned shape builds each replica's slice
// group; every compile resolves its own.
func (d *Deployment) sliceShape(p *field.Path, accelType string, strategy placement.Strategy) (*placement.Shape, field.ErrorList) {
	a := d.AcceleratorConfig
	return placement.SliceSpec{
		Topology:               a.Topology,
		Accelerator:            a.Accelerator,
		ResourcesPerBundle:     d.workerBundle(accelType),
		Strategy:               strategy,
		HeadReservationTimeout: a.headTimeout(),
	}.ResolveFunc(func() placement.Fields { return sliceFields(p) })
}

// sliceFields are the deployment's paths for placement's slice fields.
func sliceFields(p *field.Path) placement.Fields {
	ap := p.Child("accelerator_config")
	f := placement.FieldsUnder(ap)
	f.Accelerator = ap.Child("accelerator_type")
	f.ResourcesPerBundle = p.Child("placement_group_bundles").Index(0)
	f.Strategy = p.Child("placement_group_strategy")
	f.NumSlices = p.Child("num_replicas")
	return f
}

// headTimeout is the timeout placement takes: a negative one (-1s) waits
// indefinitely, which placement writes as 0 seconds.
func (a *AcceleratorConfig) headTimeout() time.Duration {
	if a.NoHeadReservationTimeout {
		return -time.Second
	}
	return a.HeadReservationTimeout
}
