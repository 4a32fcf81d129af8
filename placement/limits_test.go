package placement_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/alloctest"
	"github.com/raytpu/raytpu/placement"
)

// hugeCounts are the counts every limit test feeds: a shift, the number
// of the command line, and the largest int.
var hugeCounts = []int{1 << 40, 99999999999, math.MaxInt}

// TestHugeSliceSpecLimit: a count past its limit is a TooMany error at
// its path, found before anything that grows with it is allocated. The
// test is not parallel: it measures the heap.
func TestHugeSliceSpecLimit(t *testing.T) {
	base := placement.SliceSpec{Topology: "4x4", Accelerator: "v6e"}
	type tc struct {
		name string
		spec placement.SliceSpec
		want []field.Ref
	}
	var cases []tc
	for _, n := range hugeCounts {
		s := base
		s.NumSlices = n
		cases = append(cases, tc{"numSlices", s, []field.Ref{{Field: "numSlices", Type: field.TypeTooMany}}})
		s = base
		s.TPUResourcePerChip = n
		cases = append(cases, tc{"tpuResourcePerChip", s, []field.Ref{{Field: "tpuResourcePerChip", Type: field.TypeTooMany}}})
	}
	long := base
	long.Name = strings.Repeat("n", placement.MaxNameLength+1)
	cases = append(cases,
		tc{"name", long, []field.Ref{{Field: "name", Type: field.TypeTooMany}}},
		// Under MaxSlices, but more bundles than a slice group holds:
		// 300 slices × 64 hosts.
		tc{"bundles", placement.SliceSpec{Topology: "16x16", Accelerator: "v6e", NumSlices: 300}, []field.Ref{{Field: "numSlices", Type: field.TypeTooMany}}},
		// A count past its limit is reported with the slice's other errors.
		tc{"with other errors", placement.SliceSpec{Topology: "4x5", Accelerator: "v6e", NumSlices: 1 << 40}, []field.Ref{
			{Field: "numSlices", Type: field.TypeTooMany}, {Field: "topology", Type: field.TypeNotSupported}}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			alloctest.Below(t, alloctest.MiB, func() { _, err = c.spec.Compile(nil) })
			if diff := cmp.Diff(c.want, field.Refs(err)); diff != "" {
				t.Errorf("Compile errors (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}

// TestLimitsHold: the largest counts under the limits compile.
func TestLimitsHold(t *testing.T) {
	t.Parallel()
	for _, s := range []placement.SliceSpec{
		{Topology: "2x4", Accelerator: "v6e", NumSlices: placement.MaxSlices},
		{Topology: "16x16", Accelerator: "v6e", NumSlices: placement.MaxBundles / 64},
		{Topology: "2x2x2", Accelerator: "v4", TPUResourcePerChip: placement.MaxTPUResourcePerChip, ResourcesPerBundle: map[string]float64{"TPU": 8}},
		{Topology: "4x4", Accelerator: "v6e", Name: strings.Repeat("n", placement.MaxNameLength)},
	} {
		if _, err := s.Compile(nil); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

// FuzzSliceSpecCompile feeds SliceSpec.Compile large and odd counts: it
// never panics, and a spec past a limit allocates little. The seed corpus
// runs with go test.
func FuzzSliceSpecCompile(f *testing.F) {
	f.Add("v6e", "4x4", 1, 0, 0, "")
	f.Add("v6e", "4x4", 99999999999, 0, 0, "train")
	f.Add("v4", "2x2x2", 1<<40, 1<<40, 4, "")
	f.Add("v5p", "16x16x24", placement.MaxSlices, 1, 0, "")
	f.Add("v6e", "2x4", math.MaxInt, math.MaxInt, math.MaxInt, "")
	f.Add("v7x", "8x16x16", -1, -1, -1, "")
	f.Add("v6e", "65536x65536", 2, 8, 1, "")
	f.Fuzz(func(t *testing.T, gen, topo string, numSlices, perChip, chipsPerHost int, name string) {
		s := placement.SliceSpec{Accelerator: gen, Topology: topo, NumSlices: numSlices, TPUResourcePerChip: perChip, ChipsPerHost: chipsPerHost, Name: name}
		var g *placement.SliceGroup
		var err error
		n := alloctest.Bytes(func() { g, err = s.Compile(nil) })
		if err != nil {
			if len(field.Errors(err)) == 0 {
				t.Fatalf("Compile error is not a field error: %v", err)
			}
			if n >= alloctest.MiB {
				t.Fatalf("a refused spec allocated %d bytes", n)
			}
			return
		}
		if g.NumSlices > placement.MaxSlices || g.NumSlices*g.BundlesPerSlice > placement.MaxBundles {
			t.Fatalf("compiled past the limits: %d slices of %d bundles", g.NumSlices, g.BundlesPerSlice)
		}
	})
}
