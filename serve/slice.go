package serve

import (
	"sync"
	"sync/atomic"
	"time"

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

// sliceShape resolves the slice shape of a deployment with a topology. A
// shape that follows from the accelerator config and the strategy alone
// (no TPU bundle of the user's) is resolved once per process and kept in
// shapes: a Serve app is compiled again on every deploy and every plan,
// and its replicas' groups only read the shape's maps. Shapes that fail
// are not kept, so their errors always carry the caller's paths.
func (d *Deployment) sliceShape(p *field.Path, strategy placement.Strategy) (*placement.Shape, field.ErrorList) {
	a := d.AcceleratorConfig
	bundle, isDefault := d.workerBundle()
	if !isDefault {
		return resolveSlice(p, a, bundle, strategy)
	}
	key := shapeKey{a.Accelerator, a.Topology, strategy, a.HeadReservationTimeout}
	if sh, ok := shapes.m.Load(key); ok {
		return sh.(*placement.Shape), nil
	}
	sh, errs := resolveSlice(p, a, bundle, strategy)
	if len(errs) == 0 && shapes.n.Add(1) <= maxShapes {
		shapes.m.Store(key, sh)
	}
	return sh, errs
}

// shapeKey is what a shape with Serve LLM's default worker bundle follows
// from.
type shapeKey struct {
	accelerator, topology string
	strategy              placement.Strategy
	headTimeout           time.Duration
}

// maxShapes bounds the shapes kept; a process compiles a handful of
// accelerator configs, and one past the bound is resolved every time.
const maxShapes = 256

var shapes struct {
	m sync.Map // shapeKey → *placement.Shape
	n atomic.Int32
}

// sliceFields are the deployment's paths for placement's slice fields.
func sliceFields(p *field.Path) placement.Fields {
	f := placement.FieldsUnder(p.Child("acceleratorConfig"))
	f.ResourcesPerBundle = p.Child("placementGroupBundles").Index(0)
	f.Strategy = p.Child("placementGroupStrategy")
	f.NumSlices = p.Child("numReplicas")
	return f
}
