package tpu_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/tpu"
)

func TestParsePodType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		gen     string
		chips   int
		wantErr bool
	}{
		{in: "v6e-16", gen: "v6e", chips: 16},
		{in: "v6e-8", gen: "v6e", chips: 8},
		{in: "v5litepod-16", gen: "v5e", chips: 16},
		{in: "v5litepod-1", gen: "v5e", chips: 1},
		{in: "v4-16", gen: "v4", chips: 8},
		{in: "v4-8", gen: "v4", chips: 4},
		{in: "v5p-8", gen: "v5p", chips: 4},
		{in: "tpu7x-16", gen: "v7x", chips: 8},
		{in: "v7x-16", gen: "v7x", chips: 8},
		{in: "v7x-2", gen: "v7x", chips: 1},
		{in: "v3-8", gen: "v3", chips: 4},
		{in: "v2-32", gen: "v2", chips: 16},
		{in: " V6E-16 ", gen: "v6e", chips: 16},
		{in: "", wantErr: true},
		{in: "v6e", wantErr: true},
		{in: "v6e-", wantErr: true},
		{in: "-16", wantErr: true},
		{in: "v9-16", wantErr: true},
		{in: "v6e-0", wantErr: true},
		{in: "v6e--16", wantErr: true},
		{in: "v6e-abc", wantErr: true},
		{in: "v6e-16-head", wantErr: true},
		{in: "v4-15", wantErr: true},   // odd TensorCore count on a 2-core chip
		{in: "tpu7x-3", wantErr: true}, //
		{in: "TPU-v6e-16", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			g, chips, err := tpu.ParsePodType(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParsePodType(%q) = %v, %d; want an error", tt.in, g.Name, chips)
				}
				if g != nil || chips != 0 {
					t.Errorf("ParsePodType(%q) returned %v, %d with its error", tt.in, g, chips)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePodType(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff([2]any{tt.gen, tt.chips}, [2]any{g.Name, chips}); diff != "" {
				t.Errorf("ParsePodType(%q) [generation chips] (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestPodTypeRoundTrip checks that every valid shape's Ray and GCE pod
// types parse back to the shape's generation and chip count, and that
// TopologyForChips finds a valid shape of that size.
func TestPodTypeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, g := range tpu.Generations() {
		t.Run(g.Name, func(t *testing.T) {
			t.Parallel()
			for _, s := range g.ValidTopologies(tpu.TargetAny) {
				chips := tpu.MustParseTopology(s).Chips()
				for _, pt := range []string{g.PodType(chips), g.GCEAcceleratorType(chips)} {
					pg, pc, err := tpu.ParsePodType(pt)
					if err != nil {
						t.Errorf("ParsePodType(%q) for %s: %v", pt, s, err)
						continue
					}
					if pg.Name != g.Name || pc != chips {
						t.Errorf("ParsePodType(%q) = %s, %d; want %s, %d", pt, pg.Name, pc, g.Name, chips)
					}
				}
				topo, ok := g.TopologyForChips(chips)
				if !ok {
					t.Errorf("TopologyForChips(%d) found nothing, but %s has that many chips", chips, s)
					continue
				}
				if topo.Chips() != chips || g.CheckTopology(topo, tpu.TargetAny) != "" {
					t.Errorf("TopologyForChips(%d) = %s, not a valid %d-chip shape", chips, topo, chips)
				}
			}
		})
	}
}

func TestTopologyForChips(t *testing.T) {
	t.Parallel()
	tests := []struct {
		gen   string
		chips int
		want  string // "" when none
	}{
		{"v6e", 1, "1x1"},
		{"v6e", 4, "2x2"},
		{"v6e", 8, "2x4"},
		{"v6e", 16, "4x4"}, // GKE's v6e-16, not Ray's extra 2x8
		{"v6e", 32, "4x8"},
		{"v6e", 256, "16x16"},
		{"v5e", 16, "4x4"},
		{"v2", 4, "2x2"},
		{"v2", 32, "4x8"}, // only Ray lists a 32-chip v2 shape
		{"v3", 512, "16x32"},
		{"v4", 4, "2x2x1"},
		{"v4", 8, "2x2x2"},
		{"v4", 16, "2x2x4"},
		{"v4", 32, "2x4x4"},
		{"v4", 64, "4x4x4"},
		{"v4", 128, "4x4x8"},
		{"v4", 256, "4x8x8"}, // the compact shape, not 4x4x16
		{"v4", 512, "8x8x8"}, // not 4x8x16
		{"v4", 1024, "8x8x16"},
		{"v4", 2048, "8x16x16"}, // GKE-only, still the canonical v4-4096
		{"v4", 4096, "16x16x16"},
		{"v5p", 1024, "8x8x16"},
		{"v5p", 6144, "16x16x24"},
		{"v7x", 1, "1x1x1"},
		{"v7x", 4, "2x2x1"},
		{"v7x", 256, "4x8x8"},
		{"v7x", 9216, "16x24x24"},
		{"v6e", 0, ""},
		{"v6e", -4, ""},
		{"v6e", 3, ""},
		{"v6e", 512, ""},
		{"v4", 2, ""},
		{"v4", 1, ""},
		{"v4", 8192, ""},
	}
	for _, tt := range tests {
		t.Run(tt.gen+"/"+itoa(tt.chips), func(t *testing.T) {
			t.Parallel()
			topo, ok := mustGen(t, tt.gen).TopologyForChips(tt.chips)
			if ok != (tt.want != "") {
				t.Fatalf("TopologyForChips(%d) = %v, %v; want %q", tt.chips, topo, ok, tt.want)
			}
			if got := topo.String(); got != tt.want {
				t.Errorf("TopologyForChips(%d) = %s, want %s", tt.chips, got, tt.want)
			}
		})
	}
}
