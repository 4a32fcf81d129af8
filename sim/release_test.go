package sim_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// A unit test that Places a plan and then Runs it again meets the groups
// Place kept: the refusal names what holds the slices, and one Release of
// Place's result frees them all, so the Run then succeeds.
func TestReleaseResultThenRun(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "2*v4-16")
	plan, err := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2", NumSlices: 2},
		RunConfig:          train.RunConfig{Name: "mnist"},
	}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Place(t.Context(), plan)
	if err != nil || res.Diagnosis.HasErrors() {
		t.Fatalf("Place = %v, %v", res.Diagnosis, err)
	}
	out, err := c.Run(t.Context(), plan, backend.RunOptions{})
	var pe *backend.PlacementError
	if !errors.As(err, &pe) || out == nil {
		t.Fatalf("Run while Place holds the slices = %v, %v; want a *backend.PlacementError", out, err)
	}
	if !slicesContain(pe.Diagnosis.Codes(), placement.CodeHeadReservationFailed) {
		t.Errorf("codes %v, want %s", pe.Diagnosis.Codes(), placement.CodeHeadReservationFailed)
	}
	// The refusal names the holders: the head reservations Place made for
	// the plan's worker group (Finding.Message is prose; the group ids are
	// what the test pins).
	msg := pe.Diagnosis.String()
	if !strings.Contains(msg, "held by placement group pg-1") || !strings.Contains(msg, "head reservation of slice 0") {
		t.Errorf("the refusal does not name what holds the slice:\n%s", msg)
	}
	if err := c.Release(res); err != nil {
		t.Fatal(err)
	}
	if n := len(c.PlacementGroups()); n != 0 {
		t.Fatalf("%d groups left after Release(result)", n)
	}
	if _, err := c.Run(t.Context(), plan, backend.RunOptions{}); err != nil {
		t.Errorf("Run after Release(result) = %v", err)
	}
	if err := c.Release(res); err != nil {
		t.Errorf("releasing twice = %v, want nil", err)
	}
}

// Release frees a *PlacementGroup and a *SlicePlacement as well.
func TestReleaseEachPlacement(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "v4-16")
	pg, err := c.CreatePlacementGroup(sim0Request())
	if err != nil {
		t.Fatal(err)
	}
	sp, err := c.PlaceBundles(sim0Request())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.PlacementGroups()); n != 2 {
		t.Fatalf("%d groups, want 2", n)
	}
	if err := c.Release(pg); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(sp); err != nil {
		t.Fatal(err)
	}
	if n := len(c.PlacementGroups()); n != 0 {
		t.Errorf("%d groups left after releasing both", n)
	}
}

func slicesContain(s []string, v string) bool { return slices.Contains(s, v) }

func sim0Request() sim.PlacementGroupRequest {
	return sim.PlacementGroupRequest{Bundles: []map[string]float64{{"TPU": 4}}}
}
