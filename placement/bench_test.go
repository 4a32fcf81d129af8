package placement_test

import (
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

func BenchmarkCompile(b *testing.B) {
	cases := []struct {
		name string
		spec placement.SliceSpec
	}{
		{"v6e-4x4", placement.SliceSpec{Topology: "4x4", Accelerator: "v6e"}},
		{"v6e-16x16-per-chip", placement.SliceSpec{Topology: "16x16", Accelerator: "v6e", ResourcesPerBundle: map[string]float64{"TPU": 1}}},
		{"v5p-8x8x16-x4", placement.SliceSpec{Topology: "8x8x16", Accelerator: "v5p", NumSlices: 4}},
		{"invalid", placement.SliceSpec{Topology: "4x5", Accelerator: "v6e", Strategy: "SPRED"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.spec.Compile(nil)
			}
		})
	}
}

// BenchmarkCompileFields is a front end's call: the slice rules under its
// own paths, a v6e 4x4 slice group of two slices.
func BenchmarkCompileFields(b *testing.B) {
	p := field.NewPath("app", "deployments").Index(0)
	f := placement.FieldsUnder(p.Child("acceleratorConfig"))
	f.NumSlices = p.Child("numReplicas")
	spec := placement.SliceSpec{Topology: "4x4", Accelerator: "TPU-V6E", NumSlices: 2}
	bad := placement.SliceSpec{Topology: "4x5", Accelerator: "v6e", NumSlices: -1}
	b.Run("valid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := spec.CompileFields(f); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("invalid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := bad.CompileFields(f); err == nil {
				b.Fatal("no error")
			}
		}
	})
}
