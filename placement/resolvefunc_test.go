package placement_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// TestResolveFuncIsResolve: ResolveFunc reports exactly Resolve's errors
// at the same paths, and a Group of its shape reports Group's, for valid
// and invalid specs alike.
func TestResolveFuncIsResolve(t *testing.T) {
	t.Parallel()
	f := func() placement.Fields {
		f := placement.FieldsUnder(field.NewPath("app", "deployments").Key("llm").Child("acceleratorConfig"))
		f.NumSlices = field.NewPath("app", "deployments").Key("llm").Child("numReplicas")
		f.BundleLabelSelector = field.NewPath("sel")
		return f
	}
	specs := []placement.SliceSpec{
		{Accelerator: "v4", Topology: "2x2x2"},
		{Accelerator: "v6e", Topology: "4x4", ResourcesPerBundle: map[string]float64{"TPU": 1}, Strategy: placement.StrictPack},
		{Accelerator: "v6e", Topology: "4x4", BundleLabelSelector: []map[string]string{{"a": "b"}}},
		{Accelerator: "v6e", Topology: "4x5"},
		{Accelerator: "v9", Topology: "4x4"},
		{Accelerator: "", Topology: ""},
		{Accelerator: "v6e", Topology: "4x4", Strategy: "SPRED", NumSlices: -1, TPUResourcePerChip: -2},
		{Accelerator: "v6e", Topology: "4x4", ResourcesPerBundle: map[string]float64{"TPU": 3, "x": -1, "y": math.NaN()}},
		{Accelerator: "v6e", Topology: "2x4", ChipsPerHost: 3},
		{Accelerator: "v5p", Topology: "2x2x2", ResourcesPerBundle: map[string]float64{"TPU": 0}},
	}
	for _, s := range specs {
		want, werrs := s.Resolve(f())
		got, gerrs := s.ResolveFunc(f)
		if diff := cmp.Diff(werrs.Error(), gerrs.Error()); diff != "" || (want == nil) != (got == nil) {
			t.Errorf("%+v: ResolveFunc differs from Resolve (-Resolve +ResolveFunc):\n%s", s, diff)
			continue
		}
		if want == nil {
			continue
		}
		for _, n := range []int{0, 1, 3} {
			wg, werrs := want.Group(n)
			gg, gerrs := got.Group(n)
			if diff := cmp.Diff(wg, gg); diff != "" {
				t.Errorf("%+v: Group(%d) differs (-Resolve +ResolveFunc):\n%s", s, n, diff)
			}
			if diff := cmp.Diff(werrs.Error(), gerrs.Error()); diff != "" {
				t.Errorf("%+v: Group(%d) errors differ (-Resolve +ResolveFunc):\n%s", s, n, diff)
			}
		}
	}
}
