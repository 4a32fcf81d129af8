package tpu_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

// sliceView is everything a resolved Slice reports.
type sliceView struct {
	Generation, Topology             string
	Chips, ChipsPerHost, Hosts       int
	MultiHost                        bool
	MachineType                      string
	PodType, GCEAcceleratorType      string
	RayAcceleratorType, HeadResource string
	GKEAccelerator                   string
	GKENodeSelector                  map[string]string
	DevicesPerHost, Devices          int
	HBMGiB, PeakBF16TFLOPS           float64
	RayValid, GKEValid               bool
}

func viewOf(s *tpu.Slice) sliceView {
	return sliceView{
		Generation: s.Generation.Name, Topology: s.Topology.String(),
		Chips: s.Chips(), ChipsPerHost: s.ChipsPerHost, Hosts: s.Hosts(), MultiHost: s.MultiHost(),
		MachineType: s.MachineType, PodType: s.PodType(), GCEAcceleratorType: s.GCEAcceleratorType(),
		RayAcceleratorType: s.RayAcceleratorType(), HeadResource: s.HeadResource(),
		GKEAccelerator: s.GKEAccelerator(), GKENodeSelector: s.GKENodeSelector(),
		DevicesPerHost: s.DevicesPerHost(), Devices: s.Devices(),
		HBMGiB: s.HBMGiB(), PeakBF16TFLOPS: s.PeakBF16TFLOPS(),
		RayValid: s.RayValid, GKEValid: s.GKEValid,
	}
}

func selector(accel, topo string) map[string]string {
	return map[string]string{tpu.LabelGKEAccelerator: accel, tpu.LabelGKETopology: topo}
}

func TestResolveSlice(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		spec   tpu.SliceSpec
		target tpu.Target
		want   sliceView
	}{
		{
			name: "v6e 4x4", spec: tpu.SliceSpec{Generation: "v6e", Topology: "4x4"}, target: tpu.TargetRay,
			want: sliceView{Generation: "v6e", Topology: "4x4", Chips: 16, ChipsPerHost: 4, Hosts: 4, MultiHost: true,
				MachineType: "ct6e-standard-4t", PodType: "v6e-16", GCEAcceleratorType: "v6e-16",
				RayAcceleratorType: "TPU-V6E", HeadResource: "TPU-v6e-16-head",
				GKEAccelerator: "tpu-v6e-slice", GKENodeSelector: selector("tpu-v6e-slice", "4x4"),
				DevicesPerHost: 4, Devices: 16, HBMGiB: 512, PeakBF16TFLOPS: 16 * 918, RayValid: true, GKEValid: true},
		},
		{
			name: "v6e 2x4 defaults to one 8-chip host", spec: tpu.SliceSpec{Generation: "v6e", Topology: "2x4"}, target: tpu.TargetRay,
			want: sliceView{Generation: "v6e", Topology: "2x4", Chips: 8, ChipsPerHost: 8, Hosts: 1,
				MachineType: "ct6e-standard-8t", PodType: "v6e-8", GCEAcceleratorType: "v6e-8",
				RayAcceleratorType: "TPU-V6E", HeadResource: "TPU-v6e-8-head",
				GKEAccelerator: "tpu-v6e-slice", GKENodeSelector: selector("tpu-v6e-slice", "2x4"),
				DevicesPerHost: 8, Devices: 8, HBMGiB: 256, PeakBF16TFLOPS: 8 * 918, RayValid: true, GKEValid: true},
		},
		{
			name: "v6e 2x4 on two 4-chip hosts", spec: tpu.SliceSpec{Generation: "v6e", Topology: "2x4", ChipsPerHost: 4}, target: tpu.TargetGKE,
			want: sliceView{Generation: "v6e", Topology: "2x4", Chips: 8, ChipsPerHost: 4, Hosts: 2, MultiHost: true,
				MachineType: "ct6e-standard-4t", PodType: "v6e-8", GCEAcceleratorType: "v6e-8",
				RayAcceleratorType: "TPU-V6E", HeadResource: "TPU-v6e-8-head",
				GKEAccelerator: "tpu-v6e-slice", GKENodeSelector: selector("tpu-v6e-slice", "2x4"),
				DevicesPerHost: 4, Devices: 8, HBMGiB: 256, PeakBF16TFLOPS: 8 * 918, RayValid: true, GKEValid: true},
		},
		{
			name: "v6e 2x4 by 4-chip machine type", spec: tpu.SliceSpec{Generation: "trillium", Topology: "2x4", MachineType: "CT6E-STANDARD-4T"}, target: tpu.TargetGKE,
			want: sliceView{Generation: "v6e", Topology: "2x4", Chips: 8, ChipsPerHost: 4, Hosts: 2, MultiHost: true,
				MachineType: "ct6e-standard-4t", PodType: "v6e-8", GCEAcceleratorType: "v6e-8",
				RayAcceleratorType: "TPU-V6E", HeadResource: "TPU-v6e-8-head",
				GKEAccelerator: "tpu-v6e-slice", GKENodeSelector: selector("tpu-v6e-slice", "2x4"),
				DevicesPerHost: 4, Devices: 8, HBMGiB: 256, PeakBF16TFLOPS: 8 * 918, RayValid: true, GKEValid: true},
		},
		{
			name: "v6e 2x4 machine type and matching override", spec: tpu.SliceSpec{Generation: "TPU-V6E", Topology: "2x4", MachineType: "ct6e-standard-8t", ChipsPerHost: 8}, target: tpu.TargetAny,
			want: sliceView{Generation: "v6e", Topology: "2x4", Chips: 8, ChipsPerHost: 8, Hosts: 1,
				MachineType: "ct6e-standard-8t", PodType: "v6e-8", GCEAcceleratorType: "v6e-8",
				RayAcceleratorType: "TPU-V6E", HeadResource: "TPU-v6e-8-head",
				GKEAccelerator: "tpu-v6e-slice", GKENodeSelector: selector("tpu-v6e-slice", "2x4"),
				DevicesPerHost: 8, Devices: 8, HBMGiB: 256, PeakBF16TFLOPS: 8 * 918, RayValid: true, GKEValid: true},
		},
		{
			name: "v6e 4x4 on 8-chip hosts is Ray-only", spec: tpu.SliceSpec{Generation: "v6e", Topology: "4x4", ChipsPerHost: 8}, target: tpu.TargetRay,
			want: sliceView{Generation: "v6e", Topology: "4x4", Chips: 16, ChipsPerHost: 8, Hosts: 2, MultiHost: true,
				MachineType: "ct6e-standard-8t", PodType: "v6e-16", GCEAcceleratorType: "v6e-16",
				RayAcceleratorType: "TPU-V6E", HeadResource: "TPU-v6e-16-head",
				GKEAccelerator: "tpu-v6e-slice", GKENodeSelector: selector("tpu-v6e-slice", "4x4"),
				DevicesPerHost: 8, Devices: 16, HBMGiB: 512, PeakBF16TFLOPS: 16 * 918, RayValid: true, GKEValid: false},
		},
		{
			name: "v5e 4x4", spec: tpu.SliceSpec{Generation: "v5litepod", Topology: "4x4"}, target: tpu.TargetRay,
			want: sliceView{Generation: "v5e", Topology: "4x4", Chips: 16, ChipsPerHost: 4, Hosts: 4, MultiHost: true,
				MachineType: "ct5lp-hightpu-4t", PodType: "v5litepod-16", GCEAcceleratorType: "v5litepod-16",
				RayAcceleratorType: "TPU-V5LITEPOD", HeadResource: "TPU-v5litepod-16-head",
				GKEAccelerator: "tpu-v5-lite-podslice", GKENodeSelector: selector("tpu-v5-lite-podslice", "4x4"),
				DevicesPerHost: 4, Devices: 16, HBMGiB: 256, PeakBF16TFLOPS: 16 * 197, RayValid: true, GKEValid: true},
		},
		{
			name: "v5e 1x1", spec: tpu.SliceSpec{Generation: "v5lite", Topology: "1x1"}, target: tpu.TargetGKE,
			want: sliceView{Generation: "v5e", Topology: "1x1", Chips: 1, ChipsPerHost: 1, Hosts: 1,
				MachineType: "ct5lp-hightpu-1t", PodType: "v5litepod-1", GCEAcceleratorType: "v5litepod-1",
				RayAcceleratorType: "TPU-V5LITEPOD", HeadResource: "TPU-v5litepod-1-head",
				GKEAccelerator: "tpu-v5-lite-podslice", GKENodeSelector: selector("tpu-v5-lite-podslice", "1x1"),
				DevicesPerHost: 1, Devices: 1, HBMGiB: 16, PeakBF16TFLOPS: 197, RayValid: true, GKEValid: true},
		},
		{
			name: "v4 2x2x2", spec: tpu.SliceSpec{Generation: "v4", Topology: "2x2x2"}, target: tpu.TargetRay,
			want: sliceView{Generation: "v4", Topology: "2x2x2", Chips: 8, ChipsPerHost: 4, Hosts: 2, MultiHost: true,
				MachineType: "ct4p-hightpu-4t", PodType: "v4-16", GCEAcceleratorType: "v4-16",
				RayAcceleratorType: "TPU-V4", HeadResource: "TPU-v4-16-head",
				GKEAccelerator: "tpu-v4-podslice", GKENodeSelector: selector("tpu-v4-podslice", "2x2x2"),
				DevicesPerHost: 4, Devices: 8, HBMGiB: 256, PeakBF16TFLOPS: 8 * 275, RayValid: true, GKEValid: true},
		},
		{
			name: "v4 8x16x16 GKE-only", spec: tpu.SliceSpec{Generation: "v4", Topology: "8x16x16"}, target: tpu.TargetGKE,
			want: sliceView{Generation: "v4", Topology: "8x16x16", Chips: 2048, ChipsPerHost: 4, Hosts: 512, MultiHost: true,
				MachineType: "ct4p-hightpu-4t", PodType: "v4-4096", GCEAcceleratorType: "v4-4096",
				RayAcceleratorType: "TPU-V4", HeadResource: "TPU-v4-4096-head",
				GKEAccelerator: "tpu-v4-podslice", GKENodeSelector: selector("tpu-v4-podslice", "8x16x16"),
				DevicesPerHost: 4, Devices: 2048, HBMGiB: 2048 * 32, PeakBF16TFLOPS: 2048 * 275, RayValid: false, GKEValid: true},
		},
		{
			name: "v5p 2x2x1 single host", spec: tpu.SliceSpec{Generation: "TPU-V5P", Topology: "2x2x1"}, target: tpu.TargetRay,
			want: sliceView{Generation: "v5p", Topology: "2x2x1", Chips: 4, ChipsPerHost: 4, Hosts: 1,
				MachineType: "ct5p-hightpu-4t", PodType: "v5p-8", GCEAcceleratorType: "v5p-8",
				RayAcceleratorType: "TPU-V5P", HeadResource: "TPU-v5p-8-head",
				GKEAccelerator: "tpu-v5p-slice", GKENodeSelector: selector("tpu-v5p-slice", "2x2x1"),
				DevicesPerHost: 4, Devices: 4, HBMGiB: 4 * 95, PeakBF16TFLOPS: 4 * 459, RayValid: true, GKEValid: true},
		},
		{
			name: "v7x 2x2x2 has two devices per chip", spec: tpu.SliceSpec{Generation: "tpu7x", Topology: "2x2x2"}, target: tpu.TargetRay,
			want: sliceView{Generation: "v7x", Topology: "2x2x2", Chips: 8, ChipsPerHost: 4, Hosts: 2, MultiHost: true,
				MachineType: "tpu7x-standard-4t", PodType: "v7x-16", GCEAcceleratorType: "tpu7x-16",
				RayAcceleratorType: "TPU-V7X", HeadResource: "TPU-v7x-16-head",
				GKEAccelerator: "tpu7x", GKENodeSelector: selector("tpu7x", "2x2x2"),
				DevicesPerHost: 8, Devices: 16, HBMGiB: 8 * 192, PeakBF16TFLOPS: 8 * 2307, RayValid: true, GKEValid: true},
		},
		{
			name: "v7x 1x1x1 one chip", spec: tpu.SliceSpec{Generation: "ironwood", Topology: "1x1x1"}, target: tpu.TargetGKE,
			want: sliceView{Generation: "v7x", Topology: "1x1x1", Chips: 1, ChipsPerHost: 1, Hosts: 1,
				MachineType: "tpu7x-standard-1t", PodType: "v7x-2", GCEAcceleratorType: "tpu7x-2",
				RayAcceleratorType: "TPU-V7X", HeadResource: "TPU-v7x-2-head",
				GKEAccelerator: "tpu7x", GKENodeSelector: selector("tpu7x", "1x1x1"),
				DevicesPerHost: 2, Devices: 2, HBMGiB: 192, PeakBF16TFLOPS: 2307, RayValid: false, GKEValid: true},
		},
		{
			name: "v7x 4x4x8 on 1-chip hosts is Ray-only under TargetAny", spec: tpu.SliceSpec{Generation: "v7x", Topology: "4x4x8", ChipsPerHost: 1}, target: tpu.TargetAny,
			want: sliceView{Generation: "v7x", Topology: "4x4x8", Chips: 128, ChipsPerHost: 1, Hosts: 128, MultiHost: true,
				MachineType: "tpu7x-standard-1t", PodType: "v7x-256", GCEAcceleratorType: "tpu7x-256",
				RayAcceleratorType: "TPU-V7X", HeadResource: "TPU-v7x-256-head",
				GKEAccelerator: "tpu7x", GKENodeSelector: selector("tpu7x", "4x4x8"),
				DevicesPerHost: 2, Devices: 256, HBMGiB: 128 * 192, PeakBF16TFLOPS: 128 * 2307, RayValid: true, GKEValid: false},
		},
		{
			name: "v3 2x2 single host is a tpu-v3-device", spec: tpu.SliceSpec{Generation: "v3", Topology: "2x2"}, target: tpu.TargetGKE,
			want: sliceView{Generation: "v3", Topology: "2x2", Chips: 4, ChipsPerHost: 4, Hosts: 1,
				MachineType: "ct3-hightpu-4t", PodType: "v3-8", GCEAcceleratorType: "v3-8",
				RayAcceleratorType: "TPU-V3", HeadResource: "TPU-v3-8-head",
				GKEAccelerator: "tpu-v3-device", GKENodeSelector: selector("tpu-v3-device", "2x2"),
				DevicesPerHost: 8, Devices: 8, HBMGiB: 128, PeakBF16TFLOPS: 4 * 123, RayValid: false, GKEValid: true},
		},
		{
			name: "v3 4x4 multi-host is a tpu-v3-slice", spec: tpu.SliceSpec{Generation: "v3", Topology: "4x4", MachineType: "ct3p-hightpu-4t"}, target: tpu.TargetRay,
			want: sliceView{Generation: "v3", Topology: "4x4", Chips: 16, ChipsPerHost: 4, Hosts: 4, MultiHost: true,
				MachineType: "ct3p-hightpu-4t", PodType: "v3-32", GCEAcceleratorType: "v3-32",
				RayAcceleratorType: "TPU-V3", HeadResource: "TPU-v3-32-head",
				GKEAccelerator: "tpu-v3-slice", GKENodeSelector: selector("tpu-v3-slice", "4x4"),
				DevicesPerHost: 8, Devices: 32, HBMGiB: 512, PeakBF16TFLOPS: 16 * 123, RayValid: true, GKEValid: true},
		},
		{
			name: "v2 has no GKE labels", spec: tpu.SliceSpec{Generation: "v2", Topology: "4x4"}, target: tpu.TargetRay,
			want: sliceView{Generation: "v2", Topology: "4x4", Chips: 16, ChipsPerHost: 4, Hosts: 4, MultiHost: true,
				PodType: "v2-32", GCEAcceleratorType: "v2-32",
				RayAcceleratorType: "TPU-V2", HeadResource: "TPU-v2-32-head",
				DevicesPerHost: 8, Devices: 32, HBMGiB: 256, PeakBF16TFLOPS: 16 * 46, RayValid: true, GKEValid: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sl, errs := tt.spec.Resolve(tt.target, tpu.FieldsUnder(nil))
			if errs != nil {
				t.Fatalf("Resolve: %v", errs)
			}
			if diff := cmp.Diff(tt.want, viewOf(sl)); diff != "" {
				t.Errorf("slice (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		spec   tpu.SliceSpec
		target tpu.Target
		want   []ref
	}{
		{"empty spec", tpu.SliceSpec{}, tpu.TargetAny,
			[]ref{{"slice.generation", field.TypeRequired}, {"slice.topology", field.TypeRequired}}},
		{"blank topology", tpu.SliceSpec{Generation: "v6e", Topology: "  "}, tpu.TargetAny,
			[]ref{{"slice.topology", field.TypeRequired}}},
		{"unknown generation", tpu.SliceSpec{Generation: "v6x", Topology: "4x4"}, tpu.TargetAny,
			[]ref{{"slice.generation", field.TypeNotSupported}}},
		{"every problem at once", tpu.SliceSpec{Generation: "v6x", Topology: "4x", ChipsPerHost: -2}, tpu.TargetRay,
			[]ref{{"slice.generation", field.TypeNotSupported}, {"slice.topology", field.TypeInvalid}, {"slice.chipsPerHost", field.TypeInvalid}}},
		{"bad topology and bad machine type", tpu.SliceSpec{Generation: "v6e", Topology: "5x5", MachineType: "ct6e-standard-2t"}, tpu.TargetRay,
			[]ref{{"slice.topology", field.TypeNotSupported}, {"slice.machineType", field.TypeNotSupported}}},
		{"negative chips per host", tpu.SliceSpec{Generation: "v6e", Topology: "4x4", ChipsPerHost: -1}, tpu.TargetRay,
			[]ref{{"slice.chipsPerHost", field.TypeInvalid}}},
		{"host size the generation lacks", tpu.SliceSpec{Generation: "v6e", Topology: "4x4", ChipsPerHost: 2}, tpu.TargetRay,
			[]ref{{"slice.chipsPerHost", field.TypeNotSupported}}},
		{"v4 has only 4-chip hosts", tpu.SliceSpec{Generation: "v4", Topology: "2x2x2", ChipsPerHost: 8}, tpu.TargetRay,
			[]ref{{"slice.chipsPerHost", field.TypeNotSupported}}},
		{"machine type of another generation", tpu.SliceSpec{Generation: "v4", Topology: "2x2x2", MachineType: "ct6e-standard-4t"}, tpu.TargetRay,
			[]ref{{"slice.machineType", field.TypeNotSupported}}},
		{"v2 has no machine types", tpu.SliceSpec{Generation: "v2", Topology: "4x4", MachineType: "ct2-hightpu-4t"}, tpu.TargetRay,
			[]ref{{"slice.machineType", field.TypeNotSupported}}},
		{"override contradicts machine type", tpu.SliceSpec{Generation: "v6e", Topology: "2x4", MachineType: "ct6e-standard-8t", ChipsPerHost: 4}, tpu.TargetRay,
			[]ref{{"slice.chipsPerHost", field.TypeInvalid}}},
		{"host larger than the slice", tpu.SliceSpec{Generation: "v6e", Topology: "2x2", ChipsPerHost: 8}, tpu.TargetRay,
			[]ref{{"slice.chipsPerHost", field.TypeInvalid}}},
		{"machine type larger than the slice", tpu.SliceSpec{Generation: "v6e", Topology: "1x1", MachineType: "ct6e-standard-4t"}, tpu.TargetRay,
			[]ref{{"slice.machineType", field.TypeInvalid}}},
		{"v7x 1x1x1 on a 4-chip host", tpu.SliceSpec{Generation: "v7x", Topology: "1x1x1", ChipsPerHost: 4}, tpu.TargetGKE,
			[]ref{{"slice.chipsPerHost", field.TypeInvalid}}},
		{"GKE wants 4-chip hosts for multi-host", tpu.SliceSpec{Generation: "v6e", Topology: "4x4", ChipsPerHost: 8}, tpu.TargetGKE,
			[]ref{{"slice.chipsPerHost", field.TypeInvalid}}},
		{"GKE wants 4-chip machine types for multi-host", tpu.SliceSpec{Generation: "v6e", Topology: "4x4", MachineType: "ct6e-standard-8t"}, tpu.TargetGKE,
			[]ref{{"slice.machineType", field.TypeInvalid}}},
		{"GKE multi-host with 1-chip hosts", tpu.SliceSpec{Generation: "v5e", Topology: "2x2", ChipsPerHost: 1}, tpu.TargetGKE,
			[]ref{{"slice.chipsPerHost", field.TypeInvalid}}},
		// A GKE-only shape whose host size GKE also rejects is valid nowhere.
		{"TargetAny: GKE-only shape on 1-chip hosts", tpu.SliceSpec{Generation: "v7x", Topology: "4x4x12", ChipsPerHost: 1}, tpu.TargetAny,
			[]ref{{"slice.chipsPerHost", field.TypeInvalid}}},
		{"TargetAny: GKE-only shape on 1-chip machine type", tpu.SliceSpec{Generation: "v7x", Topology: "16x16x16", MachineType: "tpu7x-standard-1t"}, tpu.TargetAny,
			[]ref{{"slice.machineType", field.TypeInvalid}}},
		{"TargetRay: GKE-only shape", tpu.SliceSpec{Generation: "v7x", Topology: "4x4x12", ChipsPerHost: 1}, tpu.TargetRay,
			[]ref{{"slice.topology", field.TypeNotSupported}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sl, errs := tt.spec.Resolve(tt.target, tpu.FieldsUnder(field.NewPath("slice")))
			if sl != nil {
				t.Errorf("Resolve returned slice %v, want none", viewOf(sl))
			}
			if diff := cmp.Diff(tt.want, refs(field.Errors(errs.Err()))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldsUnder(t *testing.T) {
	t.Parallel()
	str := func(f tpu.SliceFields) [4]string {
		return [4]string{f.Generation.String(), f.Topology.String(), f.ChipsPerHost.String(), f.MachineType.String()}
	}
	tests := []struct {
		name string
		p    *field.Path
		want [4]string
	}{
		{"root", nil, [4]string{"generation", "topology", "chipsPerHost", "machineType"}},
		{"nested", field.NewPath("train", "scaling"), [4]string{"train.scaling.generation", "train.scaling.topology", "train.scaling.chipsPerHost", "train.scaling.machineType"}},
		{"indexed", field.NewPath("groups").Index(2), [4]string{"groups[2].generation", "groups[2].topology", "groups[2].chipsPerHost", "groups[2].machineType"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, str(tpu.FieldsUnder(tt.p))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Callers may name the fields themselves, e.g. after Ray's keywords.
	custom := tpu.SliceFields{
		Generation:   field.NewPath("scaling", "acceleratorType"),
		Topology:     field.NewPath("scaling", "topology"),
		ChipsPerHost: field.NewPath("scaling", "chipsPerVM"),
		MachineType:  field.NewPath("scaling", "machineType"),
	}
	_, errs := tpu.SliceSpec{Generation: "v6x", Topology: "4x4", ChipsPerHost: -1}.Resolve(tpu.TargetRay, custom)
	want := []ref{{"scaling.acceleratorType", field.TypeNotSupported}, {"scaling.chipsPerVM", field.TypeInvalid}}
	if diff := cmp.Diff(want, refs(errs)); diff != "" {
		t.Errorf("custom paths (-want +got):\n%s", diff)
	}
}

func TestDefaultChipsPerHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		gen, topo string
		want      int
	}{
		{"v6e", "1x1", 1},
		{"v6e", "2x2", 4},
		{"v6e", "2x4", 8},
		{"v6e", "2x8", 4},
		{"v6e", "4x4", 4},
		{"v6e", "16x16", 4},
		{"v5e", "1x1", 1},
		{"v5e", "2x4", 8},
		{"v5e", "4x8", 4},
		{"v2", "2x2", 4},
		{"v3", "4x4", 4},
		{"v4", "2x2x1", 4},
		{"v4", "8x16x16", 4},
		{"v5p", "2x2x2", 4},
		{"v7x", "1x1x1", 1},
		{"v7x", "2x2x1", 4},
		{"v7x", "4x4x4", 4},
	}
	for _, tt := range tests {
		t.Run(tt.gen+"/"+tt.topo, func(t *testing.T) {
			t.Parallel()
			if got := mustGen(t, tt.gen).DefaultChipsPerHost(tpu.MustParseTopology(tt.topo)); got != tt.want {
				t.Errorf("DefaultChipsPerHost = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestPodTypeNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		gen      string
		chips    int
		ray, gce string
	}{
		{"v6e", 16, "v6e-16", "v6e-16"},
		{"v5e", 16, "v5litepod-16", "v5litepod-16"},
		{"v4", 8, "v4-16", "v4-16"},
		{"v5p", 4, "v5p-8", "v5p-8"},
		{"v7x", 8, "v7x-16", "tpu7x-16"},
		{"v3", 4, "v3-8", "v3-8"},
		{"v2", 16, "v2-32", "v2-32"},
	}
	for _, tt := range tests {
		t.Run(tt.ray, func(t *testing.T) {
			t.Parallel()
			g := mustGen(t, tt.gen)
			got := [2]string{g.PodType(tt.chips), g.GCEAcceleratorType(tt.chips)}
			if diff := cmp.Diff([2]string{tt.ray, tt.gce}, got); diff != "" {
				t.Errorf("[PodType GCEAcceleratorType] (-want +got):\n%s", diff)
			}
		})
	}
}
