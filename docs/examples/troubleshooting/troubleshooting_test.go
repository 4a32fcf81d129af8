// Package troubleshooting_test holds the Go snippets of
// docs/troubleshooting.md: each finding made to happen on the simulated
// TPU cluster, and the typed errors matched as a program matches them.
package troubleshooting_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

func newCluster(spec string) *sim.Cluster {
	s, err := sim.ParseSpec(spec)
	if err != nil {
		log.Fatal(err)
	}
	c, err := sim.NewCluster(s)
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// Sixteen chips asked for as sixteen {TPU: 1} bundles with no topology
// land on three slices; the same chips compiled from topology 4x4 land on
// one.
func Example_spansSlices() {
	// [snippet:spans-slices]
	cluster := newCluster("3*v6e-16")
	chips := make([]map[string]float64, 16)
	for i := range chips {
		chips[i] = map[string]float64{"TPU": 1}
	}
	sp, err := cluster.PlaceBundles(sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: chips})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(sp.Diagnosis)
	// [end:spans-slices]

	// Output:
	// error SpansSlices: 16 bundles holding 16 TPU landed on 3 slices (v6e-16-0: 8 TPU on 4 hosts, v6e-16-1: 4 TPU on 4 hosts, v6e-16-2: 4 TPU on 4 hosts): slices share no ICI, so the first collective across them hangs (a Serve replica stays DEPLOYING); request topology 4x4 (v6e-16) so that Ray reserves one whole v6e-16 slice
}

// Raw requests (bundles without a topology) and what the diagnosis says
// of each: two hosts of a four-host slice, a whole slice by chance, a
// bundle larger than any host.
func Example_rawRequests() {
	tpu4 := map[string]float64{"TPU": 4}
	for _, c := range []struct {
		spec string
		req  sim.PlacementGroupRequest
	}{
		{"2*v6e-16", sim.PlacementGroupRequest{Strategy: placement.Pack, Bundles: []map[string]float64{tpu4, tpu4}}},
		{"v6e-16", sim.PlacementGroupRequest{Strategy: placement.StrictSpread, Bundles: []map[string]float64{tpu4, tpu4, tpu4, tpu4}}},
		{"2*v6e-16", sim.PlacementGroupRequest{Bundles: []map[string]float64{{"TPU": 8}}}},
	} {
		sp, err := newCluster(c.spec).PlaceBundles(c.req)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(sp.Diagnosis)
	}
	// Output:
	// error PartialSlice: 2 bundles holding 8 TPU landed on 2 of the 4 hosts of v6e-16-0 (v6e-16): a multi-host slice runs one program over all of its hosts, so the job waits for hosts it does not hold; request topology 2x4 (v6e-8) so that Ray reserves one whole v6e-8 slice
	// info Unpinned: 4 bundles holding 16 TPU landed on every host of v6e-16-0, but nothing pinned them to one slice: on a busier cluster they can spread; request topology 4x4 (v6e-16) so that Ray reserves one whole v6e-16 slice
	// error Infeasible: placement group pg-1 is INFEASIBLE: bundle 0 {TPU: 8}: no node that matches has that much of every resource; no node of this cluster can ever hold it
}

// A chip of the first slice is held by someone else: Ray's head
// reservation still takes that slice, and the workers wait.
func Example_busySlice() {
	// [snippet:busy-slice]
	cluster := newCluster("2*v6e-16")
	_, _ = cluster.CreatePlacementGroup(sim.PlacementGroupRequest{ // someone else's chip
		Bundles:             []map[string]float64{{"TPU": 1}},
		BundleLabelSelector: []map[string]string{{"ray.io/tpu-worker-id": "1"}},
	})
	group, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x4"}.Compile(nil)
	if err != nil {
		log.Fatal(err)
	}
	sp, err := cluster.PlaceSlices(group)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range sp.Diagnosis {
		fmt.Println(f.Severity, f.Code)
	}
	// [end:busy-slice]

	// Output:
	// warning Pending
	// warning BusySlice
}

// The errors a program matches, by type and sentinel, never by message.
func Example_typedErrors() {
	ctx := context.Background()
	trainer := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x4", NumSlices: 2},
		RunConfig:          train.RunConfig{Name: "llama"},
	}
	// [snippet:typed-errors]
	_, err := trainer.Fit(ctx, newCluster("1*v6e-16,cpu:1"), nil)
	var fe *field.Error
	var pe *backend.PlacementError
	var re *backend.RunError
	switch {
	case errors.As(err, &fe): // invalid input: fix the field at fe.Field
		fmt.Println("invalid:", field.Refs(err))
	case errors.As(err, &pe): // would not fit or would hang: read the findings
		fmt.Println("placement:", pe.Diagnosis.Codes())
	case errors.As(err, &re): // ran and failed: re.Outcome says how
		fmt.Println("run:", re.Outcome.State, re.Outcome.Message)
	case err != nil:
		fmt.Println("other:", err) // transport, context
	}
	// [end:typed-errors]

	// Output:
	// placement: [HeadReservationFailed]
}
