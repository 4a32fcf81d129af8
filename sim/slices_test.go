package sim_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/sim"
)

func TestPlaceSlices(t *testing.T) {
	t.Parallel()
	pinAll := func(n int, slice string) []map[string]string {
		out := make([]map[string]string, n)
		for i := range out {
			out[i] = map[string]string{rayvocab.LabelTPUSliceName: slice}
		}
		return out
	}
	tests := []struct {
		name   string
		spec   string
		before []sim.PlacementGroupRequest // created first
		slice  placement.SliceSpec
		codes  []string // diagnosis codes
		err    bool     // a *ReservationError
	}{
		{name: "v6e-4x4", spec: "2*v6e-16,cpu:1",
			slice: placement.SliceSpec{Topology: "4x4", Accelerator: "v6e"}},
		{name: "v6e-4x4-per-chip", spec: "2*v6e-16",
			slice: placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", ResourcesPerBundle: map[string]float64{"TPU": 1}}},
		{name: "head-on-busy-slice", spec: "2*v6e-16",
			before: []sim.PlacementGroupRequest{{Bundles: repeat(1, map[string]float64{"TPU": 1})}},
			slice:  placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", Strategy: placement.Pack},
			codes:  []string{placement.CodePending, placement.CodeBusySlice}},
		{name: "head-taken-second-slice", spec: "2*v6e-16",
			before: []sim.PlacementGroupRequest{{Bundles: repeat(1, map[string]float64{"TPU-v6e-16-head": 1})}},
			slice:  placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", Strategy: placement.Pack}},
		{name: "v6e-multislice", spec: "3*v6e-16",
			slice: placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", NumSlices: 2, Name: "train"}},
		{name: "v6e-multislice-pg-per-slice", spec: "3*v6e-16",
			slice: placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", NumSlices: 2, PGPerSlice: true, Name: "train"}},
		{name: "v4-2x2x2", spec: "v4-16,v4-32",
			slice: placement.SliceSpec{Topology: "2x2x2", Accelerator: "v4"}},
		{name: "v6e-2x4-single-host", spec: "v6e-16,v6e-8",
			slice: placement.SliceSpec{Topology: "2x4", Accelerator: "v6e", NumSlices: 1}},
		{name: "v6e-2x2-single-host-wrong-pod-type", spec: "v6e-16",
			slice: placement.SliceSpec{Topology: "2x2", Accelerator: "v6e"},
			codes: []string{placement.CodeWrongPodType}},
		{name: "v6e-2x4-single-host-spans-hosts", spec: "2*v6e-8",
			slice: placement.SliceSpec{Topology: "2x4", Accelerator: "v6e", ResourcesPerBundle: map[string]float64{"TPU": 4}},
			codes: []string{placement.CodeSpansHosts}},
		{name: "head-timeout", spec: "v6e-16",
			slice: placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", NumSlices: 2},
			codes: []string{placement.CodeHeadReservationFailed}, err: true},
		{name: "head-timeout-pg-per-slice", spec: "v6e-16",
			slice: placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", NumSlices: 2, PGPerSlice: true, HeadReservationTimeout: 30 * time.Second},
			codes: []string{placement.CodeHeadReservationFailed}, err: true},
		{name: "head-wait-forever", spec: "v6e-32",
			slice: placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", HeadReservationTimeout: -1},
			codes: []string{placement.CodeHeadReservationFailed}, err: true},
		{name: "workers-pending", spec: "v6e-16",
			before: []sim.PlacementGroupRequest{{Bundles: repeat(1, map[string]float64{"TPU": 4}),
				BundleLabelSelector: []map[string]string{{rayvocab.LabelTPUWorkerID: "2"}}}},
			slice: placement.SliceSpec{Topology: "4x4", Accelerator: "v6e"},
			codes: []string{placement.CodePending, placement.CodeBusySlice}},
		{name: "workers-infeasible", spec: "v6e-16",
			slice: placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", ResourcesPerBundle: map[string]float64{"CPU": 64}},
			codes: []string{placement.CodeInfeasible}},
		{name: "user-pin-wrong-pod-type", spec: "v6e-32,v6e-16",
			slice: placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", BundleLabelSelector: pinAll(4, "v6e-32-0")},
			codes: []string{placement.CodeWrongPodType}},
		{name: "user-pin-shared-slice", spec: "v6e-32",
			slice: placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", NumSlices: 2, BundleLabelSelector: pinAll(8, "v6e-32-0")},
			codes: []string{placement.CodeWrongPodType, placement.CodeSharedSlice, placement.CodeWrongPodType}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, tt.spec)
			for _, b := range tt.before {
				if _, err := c.CreatePlacementGroup(b); err != nil {
					t.Fatal(err)
				}
			}
			sp, err := c.PlaceSlices(compile(t, tt.slice))
			if tt.err {
				var re *sim.ReservationError
				if !errors.As(err, &re) || !errors.Is(err, sim.ErrSliceReservation) || sp == nil || sp.Error != re {
					t.Fatalf("PlaceSlices: %v, want a *ReservationError also in the placement", err)
				}
			} else if err != nil {
				t.Fatalf("PlaceSlices: %v", err)
			}
			codes := sp.Diagnosis.Codes()
			if len(codes) == 0 {
				codes = nil
			}
			if diff := cmp.Diff(tt.codes, codes); diff != "" {
				t.Errorf("diagnosis codes (-want +got):\n%s\n%s", diff, sp.Diagnosis)
			}
			goldenJSON(t, "place-slices-"+tt.name+".golden.json", sp)

			// A failed reservation leaves nothing behind, and Release frees
			// everything else.
			if tt.err {
				if n := len(c.PlacementGroups()); n != len(tt.before) {
					t.Errorf("%d groups after a failed reservation, want %d", n, len(tt.before))
				}
			}
			if err := c.Release(sp); err != nil {
				t.Fatal(err)
			}
			if n := len(c.PlacementGroups()); n != len(tt.before) {
				t.Errorf("%d groups after Release, want %d", n, len(tt.before))
			}
		})
	}
}

// TestPinnedSlice checks the heart of Ray's two-step reservation: every
// worker bundle lands on the slice whose head was reserved.
func TestPinnedSlice(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "3*v6e-16,2*v6e-32")
	// Take a chip on the first v6e-16 slice so that the head goes elsewhere.
	if _, err := c.CreatePlacementGroup(sim.PlacementGroupRequest{
		Bundles: repeat(1, map[string]float64{"TPU": 1}), BundleLabelSelector: []map[string]string{{rayvocab.LabelTPUSliceName: "v6e-16-0", rayvocab.LabelTPUWorkerID: "0"}},
	}); err != nil {
		t.Fatal(err)
	}
	g := compile(t, placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", NumSlices: 2, ResourcesPerBundle: map[string]float64{"TPU": 1}})
	sp, err := c.PlaceSlices(g)
	if err != nil {
		t.Fatal(err)
	}
	// The head of v6e-16-0 is free, so Ray reserves it even though one of
	// its hosts is busy; its workers then wait.
	if got := []string{sp.Heads[0].SliceName, sp.Heads[1].SliceName}; !cmp.Equal(got, []string{"v6e-16-0", "v6e-16-1"}) {
		t.Fatalf("heads on %v", got)
	}
	if sp.Bundles[0].State != sim.StatePending {
		t.Fatalf("bundles %s, want PENDING (a host of v6e-16-0 is busy)", sp.Bundles[0].State)
	}
	if diff := cmp.Diff([]string{placement.CodePending, placement.CodeBusySlice}, sp.Diagnosis.Codes()); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	for _, b := range sp.Bundles {
		want := []string{"v6e-16-0", "v6e-16-1"}[b.Slice]
		if b.LabelSelector[rayvocab.LabelTPUSliceName] != want {
			t.Errorf("bundle %d of slice %d pinned to %q, want %q", b.Index, b.Slice, b.LabelSelector[rayvocab.LabelTPUSliceName], want)
		}
	}
}

func TestPlaceSlicesMalformed(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "v6e-16")
	for _, g := range []*placement.SliceGroup{
		nil,
		{},
		{NumSlices: 1, Groups: []placement.Group{{}}},
		{NumSlices: 1, Groups: []placement.Group{{Bundles: []placement.Bundle{{Slice: 3, Resources: map[string]float64{"TPU": 1}}}}}},
		{NumSlices: 1, Groups: []placement.Group{{Bundles: []placement.Bundle{{Resources: map[string]float64{}}}}}},
	} {
		if sp, err := c.PlaceSlices(g); err == nil || sp != nil || errors.Is(err, sim.ErrSliceReservation) {
			t.Errorf("PlaceSlices(%+v) = %v, %v; want a plain error", g, sp, err)
		}
	}
}

// TestHazard is the failure the TPU guides warn about, side by side: 16
// chips asked for as 16 bundles of {TPU: 1} with no topology spread over
// three slices; the same chips compiled from topology 4x4 land on one.
func TestHazard(t *testing.T) {
	t.Parallel()
	raw := newCluster(t, "3*v6e-16")
	sp, err := raw.PlaceBundles(sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(16, map[string]float64{"TPU": 1})})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{placement.CodeSpansSlices}, sp.Diagnosis.Codes()); diff != "" {
		t.Errorf("raw codes (-want +got):\n%s", diff)
	}
	goldenJSON(t, "hazard-raw.golden.json", sp)

	pinned := newCluster(t, "3*v6e-16")
	sp, err = pinned.PlaceSlices(compile(t, placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", ResourcesPerBundle: map[string]float64{"TPU": 1}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.Diagnosis) != 0 {
		t.Errorf("topology 4x4: %s", sp.Diagnosis)
	}
	slices := map[string]bool{}
	for _, b := range sp.Bundles {
		slices[b.SliceName] = true
	}
	if len(slices) != 1 {
		t.Errorf("topology 4x4 landed on %v", slices)
	}
	goldenJSON(t, "hazard-topology.golden.json", sp)
}

func TestPlaceBundlesDiagnosis(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		spec  string
		req   sim.PlacementGroupRequest
		codes []string
	}{
		{"one host", "v6e-16", sim.PlacementGroupRequest{Bundles: repeat(4, map[string]float64{"TPU": 1})}, nil},
		{"partial slice", "v6e-32", sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(4, map[string]float64{"TPU": 4})}, []string{placement.CodePartialSlice}},
		{"whole slice by chance", "v6e-16", sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(4, map[string]float64{"TPU": 4})}, []string{placement.CodeUnpinned}},
		{"spans generations", "v6e-16,v4-16", sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(6, map[string]float64{"TPU": 4})}, []string{placement.CodeSpansSlices}},
		{"pending", "v6e-16", sim.PlacementGroupRequest{Strategy: placement.StrictPack, Bundles: repeat(2, map[string]float64{"CPU": 8})}, []string{placement.CodeInfeasible}},
		{"cpu only", "cpu:2", sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(2, map[string]float64{"CPU": 1})}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, tt.spec)
			sp, err := c.PlaceBundles(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			codes := sp.Diagnosis.Codes()
			if len(codes) == 0 {
				codes = nil
			}
			if diff := cmp.Diff(tt.codes, codes); diff != "" {
				t.Errorf("codes (-want +got):\n%s\n%s", diff, sp.Diagnosis)
			}
		})
	}
}

// TestLargeFleet places on the 100,000-host model the benchmarks use.
func TestLargeFleet(t *testing.T) {
	t.Parallel()
	c := newCluster(t, fleet(100_000))
	if c.NumHosts() != 100_000 || c.NumSlices() != 10_000 {
		t.Fatalf("%d hosts in %d slices", c.NumHosts(), c.NumSlices())
	}
	for i, want := range []string{"v6e-16-0", "v6e-16-1", "v6e-16-2"} {
		sp, err := c.PlaceSlices(compile(t, placement.SliceSpec{Topology: "4x4", Accelerator: "v6e"}))
		if err != nil || sp.Heads[0].SliceName != want || sp.Bundles[3].State != sim.StateCreated {
			t.Fatalf("placement %d on %s: %v", i, sp.Heads[0].SliceName, err)
		}
	}
	sp, err := c.PlaceSlices(compile(t, placement.SliceSpec{Topology: "8x8", Accelerator: "v6e", NumSlices: 2}))
	if err != nil || sp.Heads[1].SliceName != "v6e-64-1" || len(sp.Diagnosis) != 0 {
		t.Fatalf("8x8 x2: %v %+v %s", err, sp.Heads, sp.Diagnosis)
	}
	raw, err := c.PlaceBundles(sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(16, map[string]float64{"TPU": 1})})
	if err != nil || !cmp.Equal(raw.Diagnosis.Codes(), []string{placement.CodeSpansSlices}) {
		t.Fatalf("raw: %v %s", err, raw.Diagnosis)
	}
}
