package placement

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
)

// TestTagsHoldCoversTheTags fails when a `validate` tag of SliceSpec is
// added or changed: tagsHold must then be updated to check it too.
func TestTagsHoldCoversTheTags(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"ResourcesPerBundle": "dive,gte=0",
		"NumSlices":          "gte=0",
		"TPUResourcePerChip": "gte=0",
		"Strategy":           "omitempty,oneof=PACK SPREAD STRICT_PACK STRICT_SPREAD",
	}
	got := map[string]string{}
	rt := reflect.TypeFor[SliceSpec]()
	for i := range rt.NumField() {
		if tag, ok := rt.Field(i).Tag.Lookup("validate"); ok {
			got[rt.Field(i).Name] = tag
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("SliceSpec's validate tags changed; update tagsHold and this list (-checked +tags):\n%s", diff)
	}
}

// checkTagsAgree asserts that tagsHold is true exactly when validator finds
// nothing, and that Resolve's errors are validator's own.
func checkTagsAgree(t *testing.T, s SliceSpec) {
	t.Helper()
	f := FieldsUnder(field.NewPath("spec"))
	verrs := field.ValidateStructAt(&s, f.locate)
	if hold := s.tagsHold(); hold != (len(verrs) == 0) {
		t.Fatalf("%+v: tagsHold = %v, validator found %v", s, hold, verrs)
	}
	_, rerrs := s.Resolve(f)
	// Resolve's list starts with the tag errors, in validator's order.
	if len(rerrs) < len(verrs) {
		t.Fatalf("%+v: Resolve reported %v, validator %v", s, rerrs, verrs)
	}
	if diff := cmp.Diff(verrs.Error(), rerrs[:len(verrs)].Error()); len(verrs) > 0 && diff != "" {
		t.Fatalf("%+v: tag errors differ (-validator +Resolve):\n%s", s, diff)
	}
}

func TestTagsHoldAgreesWithValidator(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	var failing int
	for _, s := range []SliceSpec{
		{},
		{Topology: "4x4", Accelerator: "v6e"},
		{NumSlices: 0}, {NumSlices: 1}, {NumSlices: -1}, {NumSlices: math.MinInt},
		{TPUResourcePerChip: 0}, {TPUResourcePerChip: 2}, {TPUResourcePerChip: -3},
		{Strategy: Pack}, {Strategy: Spread}, {Strategy: StrictPack}, {Strategy: StrictSpread},
		{Strategy: "SPRED"}, {Strategy: "pack"}, {Strategy: " PACK"}, {Strategy: "PACK SPREAD"},
		{ResourcesPerBundle: map[string]float64{}},
		{ResourcesPerBundle: map[string]float64{"TPU": 0}},
		{ResourcesPerBundle: map[string]float64{"TPU": 4, "CPU": 1}},
		{ResourcesPerBundle: map[string]float64{"TPU": -1}},
		{ResourcesPerBundle: map[string]float64{"TPU": nan}},
		{ResourcesPerBundle: map[string]float64{"TPU": inf}},
		{ResourcesPerBundle: map[string]float64{"TPU": math.Inf(-1)}},
		{ResourcesPerBundle: map[string]float64{"TPU": math.Copysign(0, -1)}},
		{ResourcesPerBundle: map[string]float64{"b": -1, "a": -2, "TPU": 4}},
		{Topology: "4x5", Accelerator: "v6e", Strategy: "SPRED", NumSlices: -2, TPUResourcePerChip: -1,
			ResourcesPerBundle: map[string]float64{"x": -0.5, "TPU": 4}},
	} {
		checkTagsAgree(t, s)
		if !s.tagsHold() {
			failing++
		}
	}
	if failing == 0 {
		t.Fatal("the table has no spec that breaks a tag")
	}
}

func FuzzTagsHold(f *testing.F) {
	f.Add(1, 0, "PACK", "TPU", 4.0, "CPU", 1.0)
	f.Add(-1, -1, "SPRED", "TPU", -1.0, "x", math.NaN())
	f.Add(0, 2, "", "a", math.Inf(1), "b", 0.0)
	// Brackets are taken out of the keys: field.ValidateStructAt orders the
	// errors of one map by the text before the last "[", which a key with
	// a bracket of its own changes, and validator visits a map in random
	// order, so such keys make validator's own list vary from run to run.
	unbracket := strings.NewReplacer("[", "(", "]", ")")
	f.Fuzz(func(t *testing.T, slices, perChip int, strategy, k1 string, v1 float64, k2 string, v2 float64) {
		k1, k2 = unbracket.Replace(k1), unbracket.Replace(k2)
		checkTagsAgree(t, SliceSpec{
			Topology: "2x2x2", Accelerator: "v4",
			NumSlices: slices, TPUResourcePerChip: perChip, Strategy: Strategy(strategy),
			ResourcesPerBundle: map[string]float64{k1: v1, k2: v2},
		})
	})
}
