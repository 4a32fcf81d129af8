package tpu

import (
	"strconv"
	"testing"

	"github.com/raytpu/raytpu/rayvocab"
)

// TestNamesMatchTheirRules checks every kept name against the rule that
// builds it, for every catalog shape of every generation and for shapes
// outside the catalog, which are built on each call.
func TestNamesMatchTheirRules(t *testing.T) {
	t.Parallel()
	outside := []Topology{MustParseTopology("3x5"), MustParseTopology("9x9x9"), MustParseTopology("1x1x1"), MustParseTopology("65536x1")}
	checked := 0
	for _, g := range generations {
		if got, want := g.RayAcceleratorType(), "TPU-"+upper(g.RayVersion); got != want {
			t.Errorf("%s: RayAcceleratorType = %q, want %q", g.Name, got, want)
		}
		for _, top := range append(append(append([]Topology{}, g.anyT...), g.gkeT...), outside...) {
			var want []byte
			for i, d := range top.dims[:top.n] {
				if i > 0 {
					want = append(want, 'x')
				}
				want = strconv.AppendInt(want, int64(d), 10)
			}
			if top.String() != string(want) {
				t.Errorf("%s: String() = %q, want %q", g.Name, top.String(), want)
			}
			sl := &Slice{Generation: g, Topology: top}
			pod := g.RayVersion + "-" + strconv.Itoa(top.Chips()*g.CoresPerChip)
			if sl.PodType() != pod {
				t.Errorf("%s %s: PodType = %q, want %q", g.Name, top, sl.PodType(), pod)
			}
			if got, want := sl.HeadResource(), "TPU-"+pod+rayvocab.HeadResourceSuffix; got != want {
				t.Errorf("%s %s: HeadResource = %q, want %q", g.Name, top, got, want)
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("checked %d shapes; the catalog has more", checked)
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// TestCatalogNamesAllocateNothing: writing a catalog shape's names takes
// no allocation.
func TestCatalogNamesAllocateNothing(t *testing.T) {
	g, _ := LookupGeneration("v4")
	sl := &Slice{Generation: g, Topology: MustParseTopology("2x2x2"), ChipsPerHost: 4}
	var sink string
	allocs := testing.AllocsPerRun(100, func() {
		sink = sl.Topology.String()
		sink = sl.PodType()
		sink = sl.HeadResource()
		sink = g.RayAcceleratorType()
	})
	if allocs != 0 {
		t.Errorf("%v allocations a call, want 0 (last name %q)", allocs, sink)
	}
}
