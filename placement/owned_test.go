package placement_test

import (
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/owntest"
	"github.com/raytpu/raytpu/placement"
)

// ownedSpecs are slice specs of every form a group takes: single- and
// multi-host, several slices in one group or a group per slice, user
// bundle resources and label selectors.
var ownedSpecs = map[string]placement.SliceSpec{
	"single-host":   {Topology: "2x2", Accelerator: "v6e"},
	"multi-host":    {Topology: "2x2x2", Accelerator: "v4", ResourcesPerBundle: map[string]float64{"CPU": 2, "memory": 1e9}},
	"multi-slice":   {Topology: "4x4", Accelerator: "v6e", NumSlices: 2, Name: "train"},
	"pg per slice":  {Topology: "2x2x2", Accelerator: "v4", NumSlices: 2, PGPerSlice: true, Name: "train"},
	"user selector": {Topology: "4x4", Accelerator: "v5litepod", BundleLabelSelector: []map[string]string{{"zone": "a"}, {}, {"ray.io/tpu-slice-name": "s1"}, {}}},
}

// TestGroupBelongsToCaller: a compiled slice group, and a plan holding
// it, share no map or slice with another compile of the same spec, nor
// with another group built from the same Shape, before or after it.
func TestGroupBelongsToCaller(t *testing.T) {
	t.Parallel()
	for name, spec := range ownedSpecs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			owntest.CheckCompiles(t, func() (*placement.SliceGroup, error) { return spec.Compile(nil) })
			owntest.CheckCompiles(t, func() (*placement.Plan, error) {
				g, err := spec.Compile(nil)
				if err != nil {
					return nil, err
				}
				return placement.NewSlicePlan("p", g), nil
			})
			sh, errs := spec.Resolve(placement.Fields{})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			owntest.CheckCompiles(t, func() (*placement.SliceGroup, error) {
				g, errs := sh.Group(max(spec.NumSlices, 1))
				if len(errs) > 0 {
					return nil, errs
				}
				return g, nil
			})
		})
	}
}

// TestGroupBundlesOwnTheirMaps: within one group, changing one bundle's
// resources or label selector, or one head reservation's, changes no
// other bundle, head or the group's bundle resources.
func TestGroupBundlesOwnTheirMaps(t *testing.T) {
	t.Parallel()
	for name, spec := range ownedSpecs {
		g, err := spec.Compile(nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		bs := g.Bundles()
		g.Groups[0].Bundles[0].Resources["CPU"] = 99
		if g.Groups[0].Bundles[0].LabelSelector == nil {
			g.Groups[0].Bundles[0].LabelSelector = map[string]string{}
		}
		g.Groups[0].Bundles[0].LabelSelector["zone"] = "changed"
		if len(g.Heads) > 0 {
			g.Heads[0].Resources["x"] = 1
			g.Heads[0].LabelSelector["x"] = "y"
		}
		if g.BundleResources["CPU"] == 99 {
			t.Errorf("%s: a bundle's resources are the group's", name)
		}
		for i := 1; i < len(bs); i++ {
			if bs[i].Resources["CPU"] == 99 || bs[i].LabelSelector["zone"] == "changed" {
				t.Errorf("%s: a change to bundle 0 reached bundle %d: %v", name, i, bs[i])
			}
		}
		for i := 1; i < len(g.Heads); i++ {
			if g.Heads[i].Resources["x"] == 1 || g.Heads[i].LabelSelector["x"] == "y" {
				t.Errorf("%s: a change to head 0 reached head %d", name, i)
			}
		}
	}
}
