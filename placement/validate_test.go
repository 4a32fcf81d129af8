package placement

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
)

// taggedSliceSpec is SliceSpec as it was declared with go-playground
// validate tags, the engine validateFields replaces; converting a SliceSpec
// to it proves the fields still match.
type taggedSliceSpec struct {
	Topology               string              `json:"topology"`
	Accelerator            string              `json:"accelerator"`
	ResourcesPerBundle     map[string]float64  `json:"resourcesPerBundle,omitempty" validate:"dive,gte=0" detail:"must be positive"`
	NumSlices              int                 `json:"numSlices,omitempty" validate:"gte=0" detail:"must be at least 1, or 0 for one slice"`
	ChipsPerHost           int                 `json:"chipsPerHost,omitempty"`
	PGPerSlice             bool                `json:"pgPerSlice,omitempty"`
	TPUResourcePerChip     int                 `json:"tpuResourcePerChip,omitempty" validate:"gte=0" detail:"must be a positive integer, or 0 for 1"`
	Strategy               Strategy            `json:"strategy,omitempty" validate:"omitempty,oneof=PACK SPREAD STRICT_PACK STRICT_SPREAD"`
	Name                   string              `json:"name,omitempty"`
	BundleLabelSelector    []map[string]string `json:"bundleLabelSelector,omitempty"`
	HeadReservationTimeout time.Duration       `json:"headReservationTimeout,omitempty"`
}

// checkTagsAgree asserts that the hand-written field rules report what
// the validate tags they replace reported (the same paths and types, in
// the same order), and that fieldsHold is true exactly when they report
// nothing.
func checkTagsAgree(t *testing.T, s SliceSpec) {
	t.Helper()
	f := FieldsUnder(field.NewPath("spec"))
	tagged := taggedSliceSpec(s)
	verrs := field.ValidateStructAt(&tagged, f.locate)
	got := s.validateFields(&f)
	if hold := s.fieldsHold(); hold != (len(got) == 0) {
		t.Fatalf("%+v: fieldsHold = %v, validateFields found %v", s, hold, got)
	}
	if diff := cmp.Diff(field.Refs(verrs.Err()), field.Refs(got.Err())); diff != "" {
		t.Fatalf("%+v: field rules differ (-tags +code):\n%s", s, diff)
	}
	_, rerrs := s.Resolve(f)
	if diff := cmp.Diff(field.Refs(got.Err()), field.Refs(rerrs[:min(len(got), len(rerrs))].Err())); diff != "" {
		t.Fatalf("%+v: Resolve does not start with the field rules (-rules +Resolve):\n%s", s, diff)
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
		if !s.fieldsHold() {
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
