package placement

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
)

// checkFieldRules asserts that fieldsHold is true exactly when
// validateFields reports nothing, and that Resolve's list starts with what
// validateFields reports.
func checkFieldRules(t *testing.T, s SliceSpec) field.ErrorList {
	t.Helper()
	f := FieldsUnder(field.NewPath("spec"))
	got := s.validateFields(&f)
	if hold := s.fieldsHold(); hold != (len(got) == 0) {
		t.Fatalf("%+v: fieldsHold = %v, validateFields found %v", s, hold, got)
	}
	_, rerrs := s.Resolve(f)
	if diff := cmp.Diff(field.Refs(got.Err()), field.Refs(rerrs[:min(len(got), len(rerrs))].Err())); diff != "" {
		t.Fatalf("%+v: Resolve does not start with the field rules (-rules +Resolve):\n%s", s, diff)
	}
	return got
}

// The field rules of SliceSpec, one error per broken rule in the order of
// the fields. The cases are the ones that proved the rules equal to the
// validate tags they replaced (the commit before the tags were deleted ran
// both).
func TestFieldRules(t *testing.T) {
	t.Parallel()
	type refs = []field.Ref
	inv, ns := field.TypeInvalid, field.TypeNotSupported
	at := func(name string, typ field.Type) field.Ref { return field.Ref{Field: "spec." + name, Type: typ} }
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		s    SliceSpec
		want refs
	}{
		{SliceSpec{}, nil},
		{SliceSpec{Topology: "4x4", Accelerator: "v6e"}, nil},
		{SliceSpec{NumSlices: 0}, nil}, {SliceSpec{NumSlices: 1}, nil},
		{SliceSpec{NumSlices: -1}, refs{at("numSlices", inv)}},
		{SliceSpec{NumSlices: math.MinInt}, refs{at("numSlices", inv)}},
		{SliceSpec{TPUResourcePerChip: 0}, nil}, {SliceSpec{TPUResourcePerChip: 2}, nil},
		{SliceSpec{TPUResourcePerChip: -3}, refs{at("tpuResourcePerChip", inv)}},
		{SliceSpec{Strategy: Pack}, nil}, {SliceSpec{Strategy: Spread}, nil}, {SliceSpec{Strategy: StrictPack}, nil}, {SliceSpec{Strategy: StrictSpread}, nil},
		{SliceSpec{Strategy: "SPRED"}, refs{at("strategy", ns)}},
		{SliceSpec{Strategy: "pack"}, refs{at("strategy", ns)}},
		{SliceSpec{Strategy: " PACK"}, refs{at("strategy", ns)}},
		{SliceSpec{Strategy: "PACK SPREAD"}, refs{at("strategy", ns)}},
		{SliceSpec{ResourcesPerBundle: map[string]float64{}}, nil},
		{SliceSpec{ResourcesPerBundle: map[string]float64{"TPU": 0}}, nil},
		{SliceSpec{ResourcesPerBundle: map[string]float64{"TPU": 4, "CPU": 1}}, nil},
		{SliceSpec{ResourcesPerBundle: map[string]float64{"TPU": -1}}, refs{at("resourcesPerBundle[TPU]", inv)}},
		{SliceSpec{ResourcesPerBundle: map[string]float64{"TPU": nan}}, refs{at("resourcesPerBundle[TPU]", inv)}},
		{SliceSpec{ResourcesPerBundle: map[string]float64{"TPU": inf}}, nil},
		{SliceSpec{ResourcesPerBundle: map[string]float64{"TPU": math.Inf(-1)}}, refs{at("resourcesPerBundle[TPU]", inv)}},
		{SliceSpec{ResourcesPerBundle: map[string]float64{"TPU": math.Copysign(0, -1)}}, nil},
		{SliceSpec{ResourcesPerBundle: map[string]float64{"b": -1, "a": -2, "TPU": 4}}, refs{at("resourcesPerBundle[a]", inv), at("resourcesPerBundle[b]", inv)}},
		{SliceSpec{Topology: "4x5", Accelerator: "v6e", Strategy: "SPRED", NumSlices: -2, TPUResourcePerChip: -1,
			ResourcesPerBundle: map[string]float64{"x": -0.5, "TPU": 4}},
			refs{at("resourcesPerBundle[x]", inv), at("numSlices", inv), at("tpuResourcePerChip", inv), at("strategy", ns)}},
	} {
		if diff := cmp.Diff(c.want, field.Refs(checkFieldRules(t, c.s).Err())); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", c.s, diff)
		}
	}
}

func FuzzFieldRules(f *testing.F) {
	f.Add(1, 0, "PACK", "TPU", 4.0, "CPU", 1.0)
	f.Add(-1, -1, "SPRED", "TPU", -1.0, "x", math.NaN())
	f.Add(0, 2, "", "a", math.Inf(1), "b", 0.0)
	f.Fuzz(func(t *testing.T, slices, perChip int, strategy, k1 string, v1 float64, k2 string, v2 float64) {
		checkFieldRules(t, SliceSpec{
			Topology: "2x2x2", Accelerator: "v4",
			NumSlices: slices, TPUResourcePerChip: perChip, Strategy: Strategy(strategy),
			ResourcesPerBundle: map[string]float64{k1: v1, k2: v2},
		})
	})
}
