package sim_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/placement"
)

func TestRun(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "3*v6e-16,v6e-8,cpu:1")
	plan := placement.NewSlicePlan("serve-and-train",
		compile(t, placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", NumSlices: 2, Name: "train"}),
		compile(t, placement.SliceSpec{Topology: "2x4", Accelerator: "v6e", Name: "serve"}),
		compile(t, placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", Name: "eval", Strategy: placement.Pack}),
		compile(t, placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", Name: "one-too-many"}),
	)
	res, err := c.Place(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{placement.CodeHeadReservationFailed}, res.Diagnosis.Codes()); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	b, err := res.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "run.golden.json", b)
	// The bytes are stable from run to run.
	again, _ := newCluster(t, "3*v6e-16,v6e-8,cpu:1").Place(t.Context(), plan)
	b2, _ := again.MarshalIndent()
	if string(b) != string(b2) {
		t.Error("two runs of the same plan on the same spec differ")
	}
	for _, sp := range res.Slices {
		if err := c.Release(sp); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.PlacementGroups()); n != 0 {
		t.Errorf("%d groups after releasing every slice placement", n)
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "v6e-16")
	if _, err := c.Place(t.Context(), nil); err == nil {
		t.Error("Run(nil) succeeded")
	}
	plan := placement.NewSlicePlan("x", compile(t, placement.SliceSpec{Topology: "4x4", Accelerator: "v6e"}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := c.Place(ctx, plan)
	if !errors.Is(err, context.Canceled) || res == nil || len(res.Slices) != 0 {
		t.Errorf("Run(canceled) = %v, %v; want context.Canceled and an empty result", res, err)
	}
	bad := placement.NewSlicePlan("bad", &placement.SliceGroup{})
	if _, err := c.Place(t.Context(), bad); err == nil {
		t.Error("Run(malformed plan) succeeded")
	}
}
