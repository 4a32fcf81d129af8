// Package testing_test holds the Go snippets of docs/testing.md: the unit
// tests a platform team writes for its workload definitions, run on the
// simulated TPU cluster with nothing installed but Go.
package testing_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// [snippet:definition]
// LlamaTrainer is the team's workload definition, shared by the
// production launcher and its tests.
func LlamaTrainer(numSlices int) train.JaxTrainer {
	return train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig: train.ScalingConfig{
			UseTPU:      true,
			Accelerator: "v6e",
			Topology:    "4x4",
			NumSlices:   numSlices,
		},
		RunConfig: train.RunConfig{Name: "llama", StoragePath: "gs://my-bucket/ray_results"},
	}
}

// productionCluster is the fleet the workload must fit: two v6e 4x4
// slices and a CPU head, in sim.ParseSpec's short form.
const productionCluster = "2*v6e-16,cpu:1"

// [end:definition]

// newCluster is a fresh simulated cluster per test.
func newCluster(t *testing.T, spec string) *sim.Cluster {
	t.Helper()
	s, err := sim.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.NewCluster(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// [snippet:fits]
func TestLlamaFitsProduction(t *testing.T) {
	cluster := newCluster(t, productionCluster)
	res, err := LlamaTrainer(2).Fit(t.Context(), cluster, nil)
	if err != nil {
		t.Fatalf("Fit: %v", err) // a *backend.PlacementError says why it does not fit
	}
	if !res.Simulated || len(res.Workers) != 8 {
		t.Fatalf("got %d workers (simulated %v), want 8: one per TPU host", len(res.Workers), res.Simulated)
	}
	for _, w := range res.Workers[:4] { // workers 0-3 share the first slice's ICI
		if w.SliceName != res.Workers[0].SliceName {
			t.Errorf("worker %d on slice %s, want %s", w.Bundle, w.SliceName, res.Workers[0].SliceName)
		}
	}
}

// [end:fits]

// [snippet:no-fit]
func TestLlamaNeedsBothSlices(t *testing.T) {
	cluster := newCluster(t, "1*v6e-16,cpu:1") // one slice short
	_, err := LlamaTrainer(2).Fit(t.Context(), cluster, nil)
	if !errors.Is(err, backend.ErrPlacement) {
		t.Fatalf("Fit: got %v, want an error matching backend.ErrPlacement", err)
	}
	var pe *backend.PlacementError
	if !errors.As(err, &pe) {
		t.Fatalf("Fit: got %T, want *backend.PlacementError", err)
	}
	if !slices.Contains(pe.Diagnosis.Codes(), placement.CodeHeadReservationFailed) {
		t.Errorf("findings %v, want %s", pe.Diagnosis.Codes(), placement.CodeHeadReservationFailed)
	}
}

// [end:no-fit]

// [snippet:field-errors]
func TestLlamaRefusesBadScaling(t *testing.T) {
	bad := LlamaTrainer(-1)
	bad.ScalingConfig.Topology = "4x5"
	_, err := bad.Compile()

	want := []field.Ref{
		{Field: "trainer.scaling_config.num_slices", Type: field.TypeInvalid},
		{Field: "trainer.scaling_config.topology", Type: field.TypeNotSupported},
	}
	if got := field.Refs(err); !slices.Equal(got, want) {
		t.Fatalf("errors %v, want %v", got, want) // every problem at once, by path and type
	}
	var fe *field.Error
	if !errors.As(err, &fe) { // the first one
		t.Fatalf("got %T, want a *field.Error inside", err)
	}
	for _, e := range field.Errors(err) {
		if e.Type == field.TypeNotSupported && e.Suggestion != "4x4" {
			t.Errorf("%s: suggestion %q, want the nearest valid topology 4x4", e.Field, e.Suggestion)
		}
	}
}

// [end:field-errors]

// [snippet:place-release]
func TestTrainerAndServingShareTheFleet(t *testing.T) {
	cluster := newCluster(t, "3*v6e-16,cpu:1")
	plan, err := LlamaTrainer(2).Compile()
	if err != nil {
		t.Fatal(err)
	}
	res, err := cluster.Place(t.Context(), plan) // held, as while the job runs
	if err != nil {
		t.Fatal(err)
	}
	if res.Diagnosis.HasErrors() {
		t.Fatalf("training does not fit:\n%s", res.Diagnosis)
	}

	// While training holds two slices, a one-slice-per-replica Serve
	// application with two replicas must wait: the simulator says so.
	app := serve.Application{
		Name: "chat", ImportPath: "chat.app:build",
		Deployments: []serve.Deployment{{
			Name:              "LLM",
			NumReplicas:       serveconfig.ReplicaCount(2),
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v6e", Topology: "4x4"},
		}},
	}
	if _, err := app.Run(t.Context(), cluster, nil); !errors.Is(err, backend.ErrPlacement) {
		t.Fatalf("serving beside training: got %v, want backend.ErrPlacement", err)
	}
	// The application stays deployed (its first replica holds a slice),
	// as it would on Ray; serve.delete frees it.
	if err := cluster.Delete(t.Context(), app.Name); err != nil {
		t.Fatal(err)
	}

	// Once training ends, the same application fits.
	if err := cluster.Release(res); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Run(t.Context(), cluster, nil); err != nil {
		t.Fatalf("serving alone: %v", err)
	}
}

// [end:place-release]

// [snippet:golden]
// TestLlamaPlanGolden pins the compiled plan: a change to the definition
// (or to raytpu) that changes what reaches Ray shows up as a diff in
// review. UPDATE_GOLDEN=1 go test rewrites the file.
func TestLlamaPlanGolden(t *testing.T) {
	plan, err := LlamaTrainer(2).Compile()
	if err != nil {
		t.Fatal(err)
	}
	got, err := plan.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "llama.plan.golden.json")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the compiled plan changed; review it and run UPDATE_GOLDEN=1 go test")
	}
}

// [end:golden]

// What the no-fit test sees, printed: the diagnosis names the finding and
// what Ray would do.
func Example_placementError() {
	spec, _ := sim.ParseSpec("1*v6e-16,cpu:1")
	cluster, _ := sim.NewCluster(spec)
	// [snippet:diagnosis]
	_, err := LlamaTrainer(2).Fit(context.Background(), cluster, nil)
	var pe *backend.PlacementError
	if errors.As(err, &pe) {
		for _, f := range pe.Diagnosis {
			fmt.Println(f.Severity, f.Code, f.Part)
		}
	}
	// [end:diagnosis]

	// Output:
	// error HeadReservationFailed worker group "llama"
}

// What the field-errors test matches on, printed.
func Example_fieldErrors() {
	bad := LlamaTrainer(-1)
	bad.ScalingConfig.Topology = "4x5"
	_, err := bad.Compile()
	fmt.Println(err)
	// Output:
	// 2 invalid fields:
	//   trainer.scaling_config.num_slices: Invalid value: -1: cannot be negative
	//   trainer.scaling_config.topology: Unsupported value: "4x5": not in Ray's valid v6e topologies: did you mean "4x4"? (supported: "1x1", "2x2", "2x4", "2x8", "4x4", "4x8", "8x8", "8x16", "16x16")
}
