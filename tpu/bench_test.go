package tpu_test

import (
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

func BenchmarkResolve(b *testing.B) {
	fields := tpu.FieldsUnder(field.NewPath("train", "scaling"))
	benchmarks := []struct {
		name   string
		spec   tpu.SliceSpec
		target tpu.Target
	}{
		{"v6e-4x4-ray", tpu.SliceSpec{Generation: "v6e", Topology: "4x4"}, tpu.TargetRay},
		{"v5e-2x4-cph4-gke", tpu.SliceSpec{Generation: "v5litepod", Topology: "2x4", ChipsPerHost: 4}, tpu.TargetGKE},
		{"v4-8x16x16-any", tpu.SliceSpec{Generation: "TPU-V4", Topology: "8x16x16"}, tpu.TargetAny},
		{"v7x-2x2x2-machine", tpu.SliceSpec{Generation: "tpu7x", Topology: "2x2x2", MachineType: "tpu7x-standard-4t"}, tpu.TargetRay},
		{"v6e-4x5-error", tpu.SliceSpec{Generation: "v6e", Topology: "4x5"}, tpu.TargetRay},
		{"v7x-4x4x12-ray-error", tpu.SliceSpec{Generation: "v7x", Topology: "4x4x12"}, tpu.TargetRay},
		{"v7x-9x9x9-gke-error", tpu.SliceSpec{Generation: "v7x", Topology: "9x9x9"}, tpu.TargetGKE},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bm.spec.Resolve(bm.target, fields)
			}
		})
	}
}

func BenchmarkParseTopology(b *testing.B) {
	for _, s := range []string{"4x4", "8x16x16", " 2X2X4 ", "4x"} {
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tpu.ParseTopology(s)
			}
		})
	}
}

func BenchmarkCheckTopology(b *testing.B) {
	cases := []struct {
		gen, topo string
		target    tpu.Target
	}{
		{"v6e", "4x4", tpu.TargetRay},
		{"v6e", "4x4", tpu.TargetGKE},
		{"v5p", "16x16x24", tpu.TargetRay},
		{"v5p", "16x16x24", tpu.TargetGKE},
		{"v7x", "16x24x24", tpu.TargetAny},
	}
	for _, c := range cases {
		g := mustGen(b, c.gen)
		t := tpu.MustParseTopology(c.topo)
		name := c.gen + "-" + c.topo + "-" + string(c.target)
		if c.target == tpu.TargetAny {
			name += "any"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g.CheckTopology(t, c.target)
			}
		})
	}
}
