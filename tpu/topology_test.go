package tpu_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/tpu"
)

func TestParseTopology(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		wantErr bool
		rank    int
		dims    []int
		chips   int
		str     string
	}{
		{in: "4x4", rank: 2, dims: []int{4, 4}, chips: 16, str: "4x4"},
		{in: "1x1", rank: 2, dims: []int{1, 1}, chips: 1, str: "1x1"},
		{in: "2x8", rank: 2, dims: []int{2, 8}, chips: 16, str: "2x8"},
		{in: "2x2x1", rank: 3, dims: []int{2, 2, 1}, chips: 4, str: "2x2x1"},
		{in: "16x4x4", rank: 3, dims: []int{16, 4, 4}, chips: 256, str: "16x4x4"},
		{in: "8x16x16", rank: 3, dims: []int{8, 16, 16}, chips: 2048, str: "8x16x16"},
		{in: " 4X4 ", rank: 2, dims: []int{4, 4}, chips: 16, str: "4x4"},
		{in: "2X2x2", rank: 3, dims: []int{2, 2, 2}, chips: 8, str: "2x2x2"},
		{in: "\t8x8\n", rank: 2, dims: []int{8, 8}, chips: 64, str: "8x8"},
		{in: "04x4", rank: 2, dims: []int{4, 4}, chips: 16, str: "4x4"},
		{in: "65536x1", rank: 2, dims: []int{65536, 1}, chips: 65536, str: "65536x1"},
		{in: "", wantErr: true},
		{in: "   ", wantErr: true},
		{in: "4", wantErr: true},
		{in: "4x", wantErr: true},
		{in: "x4", wantErr: true},
		{in: "x", wantErr: true},
		{in: "0x4", wantErr: true},
		{in: "4x0x4", wantErr: true},
		{in: "4x4x4x4", wantErr: true},
		{in: "-1x4", wantErr: true},
		{in: "+4x4", wantErr: true},
		{in: "4 x 4", wantErr: true},
		{in: "4*4", wantErr: true},
		{in: "4x4x", wantErr: true},
		{in: "4xx4", wantErr: true},
		{in: "1.5x4", wantErr: true},
		{in: "65537x1", wantErr: true},
		{in: "99999999999999999999x1", wantErr: true},
		{in: "４x4", wantErr: true}, // full-width digit
		{in: "v6e-16", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := tpu.ParseTopology(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseTopology(%q) = %v, want an error", tt.in, got)
				}
				if !got.IsZero() {
					t.Errorf("ParseTopology(%q) returned non-zero %v with its error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTopology(%q): %v", tt.in, err)
			}
			type view struct {
				Rank, Chips int
				Dims        []int
				String      string
				IsZero      bool
			}
			want := view{Rank: tt.rank, Chips: tt.chips, Dims: tt.dims, String: tt.str}
			if diff := cmp.Diff(want, view{got.Rank(), got.Chips(), got.Dims(), got.String(), got.IsZero()}); diff != "" {
				t.Errorf("ParseTopology(%q) (-want +got):\n%s", tt.in, diff)
			}
			again, err := tpu.ParseTopology(got.String())
			if err != nil || again != got {
				t.Errorf("ParseTopology(String()) = %v, %v; want %v", again, err, got)
			}
		})
	}
}

func TestTopologyZeroValue(t *testing.T) {
	t.Parallel()
	var z tpu.Topology
	type view struct {
		Rank, Chips int
		Dims        []int
		String      string
		IsZero      bool
	}
	want := view{IsZero: true}
	if diff := cmp.Diff(want, view{z.Rank(), z.Chips(), z.Dims(), z.String(), z.IsZero()}); diff != "" {
		t.Errorf("zero Topology (-want +got):\n%s", diff)
	}
}

func TestTopologyDimsIsACopy(t *testing.T) {
	t.Parallel()
	topo := tpu.MustParseTopology("2x2x4")
	d := topo.Dims()
	d[0] = 99
	if got := topo.String(); got != "2x2x4" {
		t.Errorf("changing Dims() changed the topology to %s", got)
	}
}

func TestMustParseTopologyPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("MustParseTopology(\"4x\") did not panic")
		}
	}()
	tpu.MustParseTopology("4x")
}

func TestTopologyText(t *testing.T) {
	t.Parallel()
	type doc struct {
		Topology tpu.Topology `json:"topology"`
	}
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{"2D", `{"topology":"4x4"}`, `{"topology":"4x4"}`, false},
		{"3D canonicalised", `{"topology":" 2X2X2 "}`, `{"topology":"2x2x2"}`, false},
		{"malformed", `{"topology":"4x"}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var d doc
			err := json.Unmarshal([]byte(tt.in), &d)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Unmarshal(%s) = %v, want an error", tt.in, d.Topology)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(out)); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}
