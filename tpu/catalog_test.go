package tpu_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

// ref is what tests compare about a validation error: its path and type,
// never its message.
type ref struct {
	Field string
	Type  field.Type
}

func refs(errs []*field.Error) []ref {
	var out []ref
	for _, e := range errs {
		out = append(out, ref{e.Field, e.Type})
	}
	return out
}

func mustGen(t testing.TB, name string) *tpu.Generation {
	t.Helper()
	g, ok := tpu.LookupGeneration(name)
	if !ok {
		t.Fatalf("LookupGeneration(%q) found nothing", name)
	}
	return g
}

// genFacts is the catalog as tpu-catalog.md states it.
type genFacts struct {
	Name, RayVersion, GCEPrefix, RayAcceleratorType string
	Dims, CoresPerChip, DevicesPerChip              int
	ChipsPerHostOptions                             []int
	GKEAccelerator, GKEAcceleratorSingleHost        string
	HBMGiB, PeakBF16TFLOPS                          float64
	MaxChips                                        int
	Multislice                                      bool
}

func factsOf(g *tpu.Generation) genFacts {
	return genFacts{
		Name: g.Name, RayVersion: g.RayVersion, GCEPrefix: g.GCEPrefix, RayAcceleratorType: g.RayAcceleratorType(),
		Dims: g.Dims, CoresPerChip: g.CoresPerChip, DevicesPerChip: g.DevicesPerChip,
		ChipsPerHostOptions: g.ChipsPerHostOptions,
		GKEAccelerator:      g.GKEAccelerator, GKEAcceleratorSingleHost: g.GKEAcceleratorSingleHost,
		HBMGiB: g.HBMGiB, PeakBF16TFLOPS: g.PeakBF16TFLOPS, MaxChips: g.MaxChips, Multislice: g.Multislice,
	}
}

func TestCatalogFacts(t *testing.T) {
	t.Parallel()
	want := []genFacts{
		{Name: "v2", RayVersion: "v2", GCEPrefix: "v2", RayAcceleratorType: "TPU-V2", Dims: 2, CoresPerChip: 2, DevicesPerChip: 2,
			ChipsPerHostOptions: []int{4}, HBMGiB: 16, PeakBF16TFLOPS: 46, MaxChips: 256},
		{Name: "v3", RayVersion: "v3", GCEPrefix: "v3", RayAcceleratorType: "TPU-V3", Dims: 2, CoresPerChip: 2, DevicesPerChip: 2,
			ChipsPerHostOptions: []int{4}, GKEAccelerator: "tpu-v3-slice", GKEAcceleratorSingleHost: "tpu-v3-device",
			HBMGiB: 32, PeakBF16TFLOPS: 123, MaxChips: 1024},
		{Name: "v4", RayVersion: "v4", GCEPrefix: "v4", RayAcceleratorType: "TPU-V4", Dims: 3, CoresPerChip: 2, DevicesPerChip: 1,
			ChipsPerHostOptions: []int{4}, GKEAccelerator: "tpu-v4-podslice", HBMGiB: 32, PeakBF16TFLOPS: 275, MaxChips: 4096, Multislice: true},
		{Name: "v5e", RayVersion: "v5litepod", GCEPrefix: "v5litepod", RayAcceleratorType: "TPU-V5LITEPOD", Dims: 2, CoresPerChip: 1, DevicesPerChip: 1,
			ChipsPerHostOptions: []int{1, 4, 8}, GKEAccelerator: "tpu-v5-lite-podslice", HBMGiB: 16, PeakBF16TFLOPS: 197, MaxChips: 256, Multislice: true},
		{Name: "v5p", RayVersion: "v5p", GCEPrefix: "v5p", RayAcceleratorType: "TPU-V5P", Dims: 3, CoresPerChip: 2, DevicesPerChip: 1,
			ChipsPerHostOptions: []int{4}, GKEAccelerator: "tpu-v5p-slice", HBMGiB: 95, PeakBF16TFLOPS: 459, MaxChips: 6144, Multislice: true},
		{Name: "v6e", RayVersion: "v6e", GCEPrefix: "v6e", RayAcceleratorType: "TPU-V6E", Dims: 2, CoresPerChip: 1, DevicesPerChip: 1,
			ChipsPerHostOptions: []int{1, 4, 8}, GKEAccelerator: "tpu-v6e-slice", HBMGiB: 32, PeakBF16TFLOPS: 918, MaxChips: 256, Multislice: true},
		{Name: "v7x", RayVersion: "v7x", GCEPrefix: "tpu7x", RayAcceleratorType: "TPU-V7X", Dims: 3, CoresPerChip: 2, DevicesPerChip: 2,
			ChipsPerHostOptions: []int{1, 4}, GKEAccelerator: "tpu7x", HBMGiB: 192, PeakBF16TFLOPS: 2307, MaxChips: 9216, Multislice: true},
	}
	var got []genFacts
	for _, g := range tpu.Generations() {
		got = append(got, factsOf(g))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("catalog (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"v2", "v3", "v4", "v5e", "v5p", "v6e", "v7x"}, tpu.GenerationNames()); diff != "" {
		t.Errorf("GenerationNames (-want +got):\n%s", diff)
	}
}

func TestCatalogInvariants(t *testing.T) {
	t.Parallel()
	for _, g := range tpu.Generations() {
		t.Run(g.Name, func(t *testing.T) {
			t.Parallel()
			for _, m := range g.MachineTypes {
				if !slices.Contains(g.ChipsPerHostOptions, m.Chips) {
					t.Errorf("machine type %s has %d chips, not one of %v", m.Name, m.Chips, g.ChipsPerHostOptions)
				}
			}
			for i := 1; i < len(g.MachineTypes); i++ {
				if g.MachineTypes[i-1].Chips > g.MachineTypes[i].Chips {
					t.Errorf("machine types not smallest first: %v", g.MachineTypes)
				}
			}
			if g.Dims != 2 && g.Dims != 3 {
				t.Errorf("Dims = %d", g.Dims)
			}
			if g.HBMGiB <= 0 || g.PeakBF16TFLOPS <= 0 {
				t.Errorf("planning figures missing: HBM %v, TFLOPS %v", g.HBMGiB, g.PeakBF16TFLOPS)
			}
			// The largest GKE shape is the documented largest slice.
			gke := g.GKETopologies()
			if got := tpu.MustParseTopology(gke[len(gke)-1]).Chips(); got != g.MaxChips {
				t.Errorf("largest GKE topology %s has %d chips, MaxChips is %d", gke[len(gke)-1], got, g.MaxChips)
			}
			for _, target := range []tpu.Target{tpu.TargetRay, tpu.TargetGKE, tpu.TargetAny} {
				valid := g.ValidTopologies(target)
				if len(valid) == 0 {
					t.Fatalf("ValidTopologies(%q) is empty", target)
				}
				seen := map[string]bool{}
				prev := 0
				for _, s := range valid {
					if seen[s] {
						t.Errorf("ValidTopologies(%q) lists %s twice", target, s)
					}
					seen[s] = true
					topo, err := tpu.ParseTopology(s)
					if err != nil {
						t.Fatalf("ValidTopologies(%q) lists unparsable %q: %v", target, s, err)
					}
					if topo.String() != s {
						t.Errorf("ValidTopologies(%q) lists non-canonical %q", target, s)
					}
					if topo.Rank() != g.Dims {
						t.Errorf("ValidTopologies(%q) lists %s of rank %d", target, s, topo.Rank())
					}
					if topo.Chips() < prev {
						t.Errorf("ValidTopologies(%q) not sorted by chips at %s", target, s)
					}
					prev = topo.Chips()
					if r := g.CheckTopology(topo, target); r != "" {
						t.Errorf("ValidTopologies(%q) lists %s but CheckTopology says %q", target, s, r)
					}
				}
			}
			// TargetAny is exactly the union of the two rule sets.
			union := map[string]bool{}
			for _, s := range append(g.RayTopologies(), g.GKETopologies()...) {
				union[s] = true
			}
			if got := g.ValidTopologies(tpu.TargetAny); len(got) != len(union) {
				t.Errorf("ValidTopologies(Any) has %d shapes, the union has %d", len(got), len(union))
			}
			if diff := cmp.Diff(g.RayTopologies(), g.ValidTopologies(tpu.TargetRay)); diff != "" {
				t.Errorf("ValidTopologies(Ray) != RayTopologies (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGKETopologiesComplete enumerates 3D shapes and checks that
// GKETopologies lists, up to the order of dimensions, exactly the shapes
// CheckTopology(TargetGKE) accepts.
func TestGKETopologiesComplete(t *testing.T) {
	t.Parallel()
	for _, g := range tpu.Generations() {
		if g.Dims != 3 {
			continue
		}
		t.Run(g.Name, func(t *testing.T) {
			t.Parallel()
			listed := map[string]bool{}
			for _, s := range g.GKETopologies() {
				listed[s] = true
			}
			dims := []int{1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 64}
			for _, a := range dims {
				for _, b := range dims {
					for _, c := range dims {
						topo := tpu.MustParseTopology(itoa(a) + "x" + itoa(b) + "x" + itoa(c))
						ok := g.CheckTopology(topo, tpu.TargetGKE) == ""
						s := topo.String()
						if ok && !listed[s] && !listed[sortedShape(topo)] {
							t.Errorf("%s passes the GKE check but is not listed", s)
						}
						if listed[s] && !ok {
							t.Errorf("%s is listed but fails the GKE check", s)
						}
					}
				}
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func sortedShape(t tpu.Topology) string {
	d := t.Dims()
	slices.Sort(d)
	parts := make([]string, len(d))
	for i, v := range d {
		parts[i] = itoa(v)
	}
	return strings.Join(parts, "x")
}

func TestCatalogReturnsCopies(t *testing.T) {
	t.Parallel()
	gens := tpu.Generations()
	gens[0] = nil
	if tpu.Generations()[0] == nil {
		t.Error("Generations shares its slice with the catalog")
	}
	g := mustGen(t, "v6e")
	ray := g.RayTopologies()
	ray[0] = "mutated"
	if g.RayTopologies()[0] == "mutated" {
		t.Error("RayTopologies shares its slice with the catalog")
	}
	gke := g.GKETopologies()
	gke[0] = "mutated"
	if g.GKETopologies()[0] == "mutated" {
		t.Error("GKETopologies shares its slice with the catalog")
	}
}

func TestLookupGeneration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want string // "" when not found
	}{
		{"v6e", "v6e"},
		{"V6E", "v6e"},
		{"TPU-V6E", "v6e"},
		{"tpu-v6e", "v6e"},
		{"trillium", "v6e"},
		{"Trillium", "v6e"},
		{"v5e", "v5e"},
		{"v5litepod", "v5e"},
		{"V5LITEPOD", "v5e"},
		{"TPU-V5LITEPOD", "v5e"},
		{"v5lite", "v5e"},
		{"v5lite-pod", "v5e"},
		{"v7x", "v7x"},
		{"TPU-V7X", "v7x"},
		{"tpu7x", "v7x"},
		{"TPU7X", "v7x"},
		{"ironwood", "v7x"},
		{"IRONWOOD", "v7x"},
		{"v5p", "v5p"},
		{"TPU-V5P", "v5p"},
		{" v4 ", "v4"},
		{"TPU-V4", "v4"},
		{"v3", "v3"},
		{"v2", "v2"},
		{"", ""},
		{"tpu", ""},
		{"tpu-", ""},
		{"v5", ""},
		{"v8", ""},
		{"v6e-16", ""},
		{"a100", ""},
		{"TPU_V6E", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, ok := tpu.LookupGeneration(tt.name)
			if ok != (tt.want != "") {
				t.Fatalf("LookupGeneration(%q) found = %v, want %v", tt.name, ok, tt.want != "")
			}
			if ok && g.Name != tt.want {
				t.Errorf("LookupGeneration(%q) = %s, want %s", tt.name, g.Name, tt.want)
			}
		})
	}
}

func TestResolveGeneration(t *testing.T) {
	t.Parallel()
	p := field.NewPath("train", "scaling", "acceleratorType")
	names := tpu.GenerationNames()
	tests := []struct {
		in   string
		want string       // generation on success
		err  *field.Error // Type, Field, BadValue, ValidValues, Suggestion compared
	}{
		{in: "v6e", want: "v6e"},
		{in: "TPU-V5LITEPOD", want: "v5e"},
		{in: "ironwood", want: "v7x"},
		{in: "", err: &field.Error{Type: field.TypeRequired, Field: "train.scaling.acceleratorType"}},
		{in: "   ", err: &field.Error{Type: field.TypeRequired, Field: "train.scaling.acceleratorType"}},
		{in: "v6x", err: &field.Error{Type: field.TypeNotSupported, Field: "train.scaling.acceleratorType", BadValue: "v6x", ValidValues: names, Suggestion: "v6e", Alternatives: []string{"v7x"}}},
		{in: "TPU-V6X", err: &field.Error{Type: field.TypeNotSupported, Field: "train.scaling.acceleratorType", BadValue: "TPU-V6X", ValidValues: names, Suggestion: "v6e", Alternatives: []string{"v7x"}}},
		{in: "trilium", err: &field.Error{Type: field.TypeNotSupported, Field: "train.scaling.acceleratorType", BadValue: "trilium", ValidValues: names, Suggestion: "v6e"}},
		{in: "ironwod", err: &field.Error{Type: field.TypeNotSupported, Field: "train.scaling.acceleratorType", BadValue: "ironwod", ValidValues: names, Suggestion: "v7x"}},
		{in: "v5litpod", err: &field.Error{Type: field.TypeNotSupported, Field: "train.scaling.acceleratorType", BadValue: "v5litpod", ValidValues: names, Suggestion: "v5e"}},
		{in: "tpu7", err: &field.Error{Type: field.TypeNotSupported, Field: "train.scaling.acceleratorType", BadValue: "tpu7", ValidValues: names, Suggestion: "v7x"}},
		{in: "h100", err: &field.Error{Type: field.TypeNotSupported, Field: "train.scaling.acceleratorType", BadValue: "h100", ValidValues: names}},
		{in: "v9z", err: &field.Error{Type: field.TypeNotSupported, Field: "train.scaling.acceleratorType", BadValue: "v9z", ValidValues: names}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			g, err := tpu.ResolveGeneration(tt.in, p)
			if tt.err == nil {
				if err != nil {
					t.Fatalf("ResolveGeneration(%q): %v", tt.in, err)
				}
				if g.Name != tt.want {
					t.Errorf("ResolveGeneration(%q) = %s, want %s", tt.in, g.Name, tt.want)
				}
				return
			}
			if g != nil {
				t.Errorf("ResolveGeneration(%q) returned %s with an error", tt.in, g.Name)
			}
			if err == nil {
				t.Fatalf("ResolveGeneration(%q) = nil error, want %s", tt.in, tt.err.Type)
			}
			got := *err
			got.Detail = "" // prose, not compared
			if diff := cmp.Diff(*tt.err, got); diff != "" {
				t.Errorf("ResolveGeneration(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestMachineTypeFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		gen  string
		cph  int
		want string
	}{
		{"v6e", 1, "ct6e-standard-1t"},
		{"v6e", 4, "ct6e-standard-4t"},
		{"v6e", 8, "ct6e-standard-8t"},
		{"v5e", 8, "ct5lp-hightpu-8t"},
		{"v4", 4, "ct4p-hightpu-4t"},
		{"v5p", 4, "ct5p-hightpu-4t"},
		{"v7x", 1, "tpu7x-standard-1t"},
		{"v7x", 4, "tpu7x-standard-4t"},
		{"v3", 4, "ct3-hightpu-4t"},
		{"v2", 4, ""},
		{"v4", 8, ""},
	}
	for _, tt := range tests {
		t.Run(tt.gen+"/"+itoa(tt.cph), func(t *testing.T) {
			t.Parallel()
			if got := mustGen(t, tt.gen).MachineTypeFor(tt.cph); got != tt.want {
				t.Errorf("MachineTypeFor(%d) = %q, want %q", tt.cph, got, tt.want)
			}
		})
	}
}

// TestLimitsMatchCatalog keeps the slice limits in limits.go equal to
// what the catalog holds: MaxChipsPerSlice is the largest slice of any
// generation, and no catalog shape exceeds it or MaxTopologyDimension.
func TestLimitsMatchCatalog(t *testing.T) {
	t.Parallel()
	largest := 0
	for _, g := range tpu.Generations() {
		largest = max(largest, g.MaxChips)
		for _, target := range []tpu.Target{tpu.TargetRay, tpu.TargetGKE} {
			for _, s := range g.ValidTopologies(target) {
				topo := tpu.MustParseTopology(s)
				if topo.Chips() > tpu.MaxChipsPerSlice {
					t.Errorf("%s %s has %d chips, more than MaxChipsPerSlice %d", g.Name, s, topo.Chips(), tpu.MaxChipsPerSlice)
				}
				for _, d := range topo.Dims() {
					if d > tpu.MaxTopologyDimension {
						t.Errorf("%s %s: dimension %d above MaxTopologyDimension", g.Name, s, d)
					}
				}
			}
		}
		if slices.Min(g.ChipsPerHostOptions) < 1 {
			t.Errorf("%s ships hosts of fewer than 1 chip", g.Name)
		}
	}
	if largest != tpu.MaxChipsPerSlice {
		t.Errorf("the catalog's largest slice has %d chips; MaxChipsPerSlice is %d", largest, tpu.MaxChipsPerSlice)
	}
	if tpu.MaxHostsPerSlice < tpu.MaxChipsPerSlice {
		t.Errorf("MaxHostsPerSlice %d is below MaxChipsPerSlice %d on 1-chip hosts", tpu.MaxHostsPerSlice, tpu.MaxChipsPerSlice)
	}
}
