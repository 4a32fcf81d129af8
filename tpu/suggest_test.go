package tpu_test

import (
	"slices"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

// A generation typed short, or given as a pod type, a GKE accelerator or a
// machine type, gets the generation as its suggestion; a tie lists both.
func TestGenerationSuggestions(t *testing.T) {
	t.Parallel()
	p := field.NewPath("accelerator")
	for in, want := range map[string][]string{
		"v6": {"v6e"}, "tpu-v6": {"v6e"}, "V6": {"v6e"}, "v5": {"v5e", "v5p"}, "v7": {"v7x"},
		"v6e-16": {"v6e"}, "v5litepod-16": {"v5e"}, "tpu7x-16": {"v7x"}, "v4-16": {"v4"},
		"tpu-v6e-slice": {"v6e"}, "tpu-v5-lite-podslice": {"v5e"}, "ct6e-standard-4t": {"v6e"}, "ct5p-hightpu-4t": {"v5p"},
	} {
		_, e := tpu.ResolveGeneration(in, p)
		if e == nil {
			t.Errorf("%q resolved", in)
			continue
		}
		got := append([]string{e.Suggestion}, e.Alternatives...)
		if e.Suggestion == "" || !slices.Equal(got, want) {
			t.Errorf("%q: suggestions %q, want %q (%v)", in, got, want, e)
		}
	}
}

// A pod type given as a topology is read as one: accelerator and shape.
func TestPodTypeAsTopology(t *testing.T) {
	t.Parallel()
	f := tpu.FieldsUnder(field.NewPath("spec"))
	for _, c := range []struct{ gen, topo, want string }{
		{"v5e", "v5litepod-16", "4x4"}, {"v5e", "v5e-16", "4x4"}, {"", "v5e-16", "4x4"},
		{"v6e", "v6e-64", "8x8"}, {"v4", "v4-16", "2x2x2"},
	} {
		_, errs := tpu.SliceSpec{Generation: c.gen, Topology: c.topo}.Resolve(tpu.TargetRay, f)
		var topoErr *field.Error
		for _, e := range errs {
			if e.Field == "spec.topology" {
				topoErr = e
			}
		}
		if topoErr == nil || topoErr.Type != field.TypeNotSupported || topoErr.Suggestion != c.want {
			t.Errorf("%s %s: %v, want NotSupported at spec.topology suggesting %s", c.gen, c.topo, errs, c.want)
		}
	}
}
