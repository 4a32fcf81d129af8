package placement_test

import (
	"strings"
	"testing"

	"github.com/raytpu/raytpu/placement"
)

func TestSliceHostsOf(t *testing.T) {
	t.Parallel()
	for podType, want := range map[string]int{"v4-16": 2, "v4-8": 1, "v6e-16": 4, "v5p-128": 16, "v9-8": 0, "": 0} {
		if got := placement.SliceHostsOf(podType); got != want {
			t.Errorf("SliceHostsOf(%q) = %d, want %d", podType, got, want)
		}
	}
}

// Land lists the slices in the snapshot's order whatever the order of the
// bundles, leaves out bundles without TPU, counts hosts of no slice, and
// describes the first slice.
func TestLandOrdersSlicesAsTheSnapshot(t *testing.T) {
	t.Parallel()
	cluster := sliceTable{
		"b": {Name: "b", PodType: "v4-16", Hosts: 2, Order: 0},
		"a": {Name: "a", PodType: "v4-16", Hosts: 2, Order: 1},
	}
	l := placement.Land(cluster, []placement.LandedBundle{
		{Node: "a0", Slice: "a", TPU: 4},
		{Node: "cpu", TPU: 0},
		{Node: "b1", Slice: "b", TPU: 4},
		{Node: "b0", Slice: "b", TPU: 2},
		{Node: "x", Slice: "unknown", TPU: 1},
	})
	if l.Bundles != 4 || l.TPU != 11 || l.Hosts != 4 {
		t.Errorf("landing %+v: want 4 TPU bundles, 11 TPU, 4 hosts", l)
	}
	if len(l.Shares) != 2 || l.Shares[0].Slice != "b" || l.Shares[0].TPU != 6 || l.Shares[0].Hosts != 2 || l.Shares[1].Slice != "a" {
		t.Errorf("shares %+v: want b (6 TPU on 2 hosts) before a, the snapshot's order", l.Shares)
	}
	if l.PodType != "v4-16" || l.SliceHosts != 2 || l.Generation == nil || l.Generation.Name != "v4" {
		t.Errorf("landing describes %s, %d hosts, %v; want the first slice's", l.PodType, l.SliceHosts, l.Generation)
	}
}

func TestDiagnoseSliceLandings(t *testing.T) {
	t.Parallel()
	shape, errs := placement.SliceSpec{Topology: "2x2x2", Accelerator: "v4"}.Resolve(placement.Fields{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	g, errs := shape.Group(2)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	cluster := sliceTable{
		"s0": {Name: "s0", PodType: "v4-16", Hosts: 2, Order: 0},
		"s1": {Name: "s1", PodType: "v4-16", Hosts: 2, Order: 1},
		"t0": {Name: "t0", PodType: "v4-8", Hosts: 1, Order: 2},
	}
	land := func(bs ...placement.LandedBundle) placement.RawLanding { return placement.Land(cluster, bs) }
	for _, c := range []struct {
		name     string
		landings []placement.RawLanding
		want     []string
	}{
		{"two intact slices", []placement.RawLanding{
			land(placement.LandedBundle{Node: "s0-0", Slice: "s0", TPU: 4}, placement.LandedBundle{Node: "s0-1", Slice: "s0", TPU: 4}),
			land(placement.LandedBundle{Node: "s1-0", Slice: "s1", TPU: 4}, placement.LandedBundle{Node: "s1-1", Slice: "s1", TPU: 4}),
		}, nil},
		{"spread over slices", []placement.RawLanding{
			land(placement.LandedBundle{Node: "s0-0", Slice: "s0", TPU: 4}, placement.LandedBundle{Node: "s1-1", Slice: "s1", TPU: 4}),
			{},
		}, []string{placement.CodeSpansSlices, placement.CodePartialSlice, placement.CodePartialSlice}},
		{"one slice twice", []placement.RawLanding{
			land(placement.LandedBundle{Node: "s0-0", Slice: "s0", TPU: 4}, placement.LandedBundle{Node: "s0-1", Slice: "s0", TPU: 4}),
			land(placement.LandedBundle{Node: "s0-0", Slice: "s0", TPU: 4}, placement.LandedBundle{Node: "s0-1", Slice: "s0", TPU: 4}),
		}, []string{placement.CodeSharedSlice}},
		{"wrong pod type", []placement.RawLanding{
			land(placement.LandedBundle{Node: "t0-0", Slice: "t0", TPU: 4}),
			{},
		}, []string{placement.CodeWrongPodType}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := placement.DiagnoseSliceLandings(g, c.landings)
			if got := strings.Join(d.Codes(), ","); got != strings.Join(c.want, ",") {
				t.Errorf("codes %s, want %s:\n%s", got, strings.Join(c.want, ","), d)
			}
		})
	}
}

func TestUnplacedReasons(t *testing.T) {
	t.Parallel()
	b := placement.Unplaced{Bundle: 1, Resources: map[string]float64{"CPU": 1, "TPU": 4}, GroupSize: 2, Strategy: placement.Pack}
	for _, c := range []struct {
		name       string
		u          func(placement.Unplaced) placement.Unplaced
		infeasible bool
		want       string
	}{
		{"none free", func(u placement.Unplaced) placement.Unplaced { u.Fits = 3; return u }, false,
			"bundle 1 {CPU: 1, TPU: 4}: none of the 3 nodes that can hold it has it free beside the group's other bundles"},
		{"one node, strict spread", func(u placement.Unplaced) placement.Unplaced {
			u.Fits, u.Strategy = 1, placement.StrictSpread
			return u
		}, false, "bundle 1 {CPU: 1, TPU: 4}: the one node that can hold it does not have it free on a node of its own (STRICT_SPREAD)"},
		{"strict pack", func(u placement.Unplaced) placement.Unplaced {
			u.WholeGroup, u.Fits, u.Resources = true, 2, map[string]float64{"TPU": 8}
			return u
		}, false, "STRICT_PACK: none of the 2 nodes that can hold all 2 bundles together has them free"},
		{"missing", func(u placement.Unplaced) placement.Unplaced { u.Missing = []string{"TPU", "CPU"}; return u }, true,
			"bundle 1 {CPU: 1, TPU: 4}: no node has resource CPU, TPU"},
		{"no labels", func(u placement.Unplaced) placement.Unplaced {
			u.Selector, u.NoLabels = map[string]string{"zone": "a"}, true
			return u
		}, true, "bundle 1 {CPU: 1, TPU: 4} with label selector {zone: a}: no node has labels {zone: a}"},
		{"no fit", func(u placement.Unplaced) placement.Unplaced { return u }, true,
			"bundle 1 {CPU: 1, TPU: 4}: no node that matches has that much of every resource"},
		{"not the whole group", func(u placement.Unplaced) placement.Unplaced { u.Fits = 2; return u }, true,
			"bundle 1 {CPU: 1, TPU: 4}: the 2 nodes that can hold it cannot hold the whole group"},
		{"strict spread infeasible", func(u placement.Unplaced) placement.Unplaced {
			u.Fits, u.Strategy = 1, placement.StrictSpread
			return u
		}, true, "bundle 1 {CPU: 1, TPU: 4}: STRICT_SPREAD needs a node per bundle, and only 1 node can hold one"},
	} {
		u := c.u(b)
		got := u.PendingReason()
		if c.infeasible {
			got = u.InfeasibleReason()
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
