package tpu_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

// TestTopologyChipCountResolve: a topology given as a chip count is, on
// every resolve, NotSupported at the caller's topology path with the
// shapes of that many chips, and a suggestion when there is one.
func TestTopologyChipCountResolve(t *testing.T) {
	t.Parallel()
	p := field.NewPath("app", "deployments").Key("llm").Child("acceleratorConfig", "topology")
	cases := []struct {
		gen, topo string
		target    tpu.Target
		valid     []string
		suggest   string
	}{
		{"v6e", "16", tpu.TargetRay, []string{"2x8", "4x4"}, ""},
		{"v6e", "16", tpu.TargetGKE, []string{"4x4"}, "4x4"},
		{"v6e", "8", tpu.TargetAny, []string{"2x4"}, "2x4"},
		{"v4", " 16 ", tpu.TargetRay, []string{"2x2x4"}, "2x2x4"},
		{"v4", "6", tpu.TargetRay, nil, ""},
	}
	for _, c := range cases {
		_, errs := tpu.SliceSpec{Generation: c.gen, Topology: c.topo}.Resolve(c.target, tpu.SliceFields{Generation: field.NewPath("gen"), Topology: p})
		if len(errs) != 1 || errs[0].Field != p.String() || errs[0].Type != field.TypeNotSupported {
			t.Errorf("%s %q under %q: %v; want one NotSupported at %s", c.gen, c.topo, c.target, errs, p)
			continue
		}
		if diff := cmp.Diff(c.valid, errs[0].ValidValues); diff != "" {
			t.Errorf("%s %q under %q: valid values (-want +got):\n%s", c.gen, c.topo, c.target, diff)
		}
		if errs[0].Suggestion != c.suggest {
			t.Errorf("%s %q under %q: suggestion %q, want %q", c.gen, c.topo, c.target, errs[0].Suggestion, c.suggest)
		}
	}
	// Not a chip count: the parser's own error.
	_, errs := tpu.SliceSpec{Generation: "v6e", Topology: "4x"}.Resolve(tpu.TargetRay, tpu.FieldsUnder(nil))
	if diff := cmp.Diff([]field.Ref{{Field: "topology", Type: field.TypeInvalid}}, field.Refs(errs.Err())); diff != "" {
		t.Errorf("4x (-want +got):\n%s", diff)
	}
}
