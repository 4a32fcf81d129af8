package sim_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/backend/backendtest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

// Every exported method of a nil *Cluster (a typed nil behind
// backend.Runner, say) and of a Cluster not made by NewCluster returns an
// error matching backend.ErrNilBackend, or its zero answer where it has no
// error to return, and never panics.
func TestNilClusterMethods(t *testing.T) {
	t.Parallel()
	job := backendtest.JobPlan("nil", placement.KindJaxTrainer)
	for name, c := range map[string]*sim.Cluster{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			errs := map[string]func() error{
				"Run":                  func() error { _, err := c.Run(ctx, job, backend.RunOptions{}); return err },
				"Place":                func() error { _, err := c.Place(ctx, job); return err },
				"PlaceSlices":          func() error { _, err := c.PlaceSlices(&placement.SliceGroup{}); return err },
				"PlaceBundles":         func() error { _, err := c.PlaceBundles(sim.PlacementGroupRequest{}); return err },
				"Release":              func() error { return c.Release(&sim.SlicePlacement{}) },
				"Release(result)":      func() error { return c.Release(&sim.Result{}) },
				"CreatePlacementGroup": func() error { _, err := c.CreatePlacementGroup(sim.PlacementGroupRequest{}); return err },
				"RemovePlacementGroup": func() error { return c.RemovePlacementGroup("pg-1") },
				"Deploy":               func() error { _, err := c.Deploy(ctx, job); return err },
				"Wait":                 func() error { _, err := c.Wait(ctx, "x", backend.WaitOptions{}); return err },
				"Status":               func() error { _, err := c.Status(ctx, "x"); return err },
				"Delete":               func() error { return c.Delete(ctx, "x") },
				"LoseHost":             func() error { _, err := c.LoseHost(ctx, job, nil, "h"); return err },
				"ReviveHost":           func() error { return c.ReviveHost("h") },
				"LoseSlice":            func() error { _, err := c.LoseSlice(ctx, job, nil, "s"); return err },
				"ReviveSlice":          func() error { return c.ReviveSlice("s") },
				"RenderSVG":            func() error { return sim.RenderSVG(&bytes.Buffer{}, c) },
			}
			for m, call := range errs {
				if err := call(); !errors.Is(err, backend.ErrNilBackend) {
					t.Errorf("%s on a %s *Cluster = %v, want an error matching backend.ErrNilBackend", m, name, err)
				}
			}
			if c.NumHosts() != 0 || c.NumSlices() != 0 || len(c.Spec().Items) != 0 || c.Available("h") != nil || len(c.PlacementGroups()) != 0 {
				t.Error("a nil or zero cluster reports hosts, slices, items, resources or groups")
			}
			if _, ok := c.Host("h"); ok {
				t.Error("Host found a host on a nil or zero cluster")
			}
			if _, ok := c.PlacementGroup("pg-1"); ok {
				t.Error("PlacementGroup found a group on a nil or zero cluster")
			}
		})
	}
}

// The other exported pointer types, and arguments that are nil, zero or
// negative, get an error or a zero answer, never a panic.
func TestNilAndZeroInputs(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "v4-16")
	var nilResult *sim.Result
	var nilPrediction *sim.AutoscalePrediction
	var nilReservation *sim.ReservationError
	var nilBytes *sim.Bytes
	if nilResult.Landings(&placement.Plan{}) != nil || (&sim.Result{}).Landings(nil) != nil {
		t.Error("Landings of a nil result or plan is not empty")
	}
	if _, err := nilResult.MarshalIndent(); err != nil {
		t.Errorf("MarshalIndent of a nil result: %v", err)
	}
	if err := nilPrediction.Err(); err == nil {
		t.Error("Err of a nil prediction: no error")
	}
	spec := c.Spec()
	if got := nilPrediction.Spec(spec); len(got.Items) != len(spec.Items) {
		t.Error("Spec of a nil prediction changed the spec")
	}
	if nilReservation.Error() == "" {
		t.Error("a nil *ReservationError has no message")
	}
	if err := nilBytes.UnmarshalText([]byte("1Gi")); err == nil {
		t.Error("UnmarshalText into a nil *Bytes: no error")
	}
	if err := sim.RenderSVG(nil, c); err == nil {
		t.Error("RenderSVG to a nil writer: no error")
	}
	var nilPlacement sim.Placement = nilResult
	if err := sim.RenderSVG(&bytes.Buffer{}, c, nil, nilPlacement); err != nil {
		t.Errorf("RenderSVG with nil placements: %v", err)
	}
	//nolint:staticcheck // a nil context is what this checks
	if _, err := c.Place(nil, backendtest.JobPlan("x", placement.KindJaxTrainer)); err == nil {
		t.Error("Place with a nil context: no error")
	}
	if _, err := c.Place(context.Background(), nil); err == nil {
		t.Error("Place of a nil plan: no error")
	}
	if err := c.Release(nil); err != nil {
		t.Errorf("Release(nil) = %v, want nil (nothing to release)", err)
	}
	if err := c.Release(nilResult); err != nil {
		t.Errorf("Release of a nil *Result = %v, want nil (nothing to release)", err)
	}
	if _, err := c.PlaceSlices(nil); err == nil {
		t.Error("PlaceSlices(nil): no error")
	}
	for _, req := range []sim.PlacementGroupRequest{{}, {Bundles: []map[string]float64{{"CPU": -1}}}} {
		if _, err := c.PlaceBundles(req); err == nil {
			t.Errorf("PlaceBundles(%+v): no error", req)
		}
		if _, err := c.CreatePlacementGroup(req); err == nil {
			t.Errorf("CreatePlacementGroup(%+v): no error", req)
		}
	}
	if _, err := sim.NewCluster(sim.Spec{Items: []sim.Item{{Count: -1, PodType: "v4-16"}}}); err == nil {
		t.Error("NewCluster with a negative count: no error")
	}
	if _, err := sim.ParseSpecYAML(nil); err == nil {
		t.Error("ParseSpecYAML(nil): no error")
	}
	if _, err := sim.ParseBytes(""); err == nil {
		t.Error(`ParseBytes(""): no error`)
	}
	if _, err := sim.PredictAutoscaling(sim.Spec{}, nil, ""); err == nil {
		t.Error("PredictAutoscaling of a nil plan: no error")
	}
	if _, err := c.LoseHost(t.Context(), nil, nil, "v4-16-0-w0"); err == nil {
		t.Error("LoseHost of a nil plan: no error")
	}
	// Value methods of zero specs and items answer, and parsers refuse
	// empty and negative input.
	var zero sim.Spec
	_, _, _ = zero.Hosts(), zero.NumHosts(), zero.String()
	_ = zero.Validate()
	_, _ = zero.Normalize()
	for _, it := range []sim.Item{{}, {Count: -1, PodType: "v4-16", CPU: -1, Memory: -1, MinSlices: -1, MaxSlices: -2}} {
		_, _, _ = it.String(), it.Autoscaled(), it.IsCPU()
		if err := (sim.Spec{Items: []sim.Item{it}}).Validate(); err == nil {
			t.Errorf("Validate of item %+v: no error", it)
		}
	}
	for _, s := range []string{"", "-1*v4-16", "v4-16{max=-1}", "cpu:-2"} {
		if _, err := sim.ParseSpec(s); err == nil {
			t.Errorf("ParseSpec(%q): no error", s)
		}
	}
	_, _, _ = sim.GroupScale{}.String(), sim.GroupScale{}.Scaled(), sim.GroupScale{From: 3, To: -1}.IdleSlices()
	_ = sim.Host{}.Env()
	if _, err := sim.ParseBytes("-1Gi"); err == nil {
		t.Error(`ParseBytes("-1Gi"): no error`)
	}
}
