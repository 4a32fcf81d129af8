package raytpu_test

import (
	"context"
	"fmt"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// A trainer is compiled and fitted through the backend contract. Here the
// backend is the simulated TPU cluster, which places one worker per TPU
// host and runs nothing; passing raybackend.New(client) instead trains on
// a real Ray cluster, with no other change.
func Example() {
	spec, err := sim.ParseSpec("2*v6e-16,cpu:1")
	if err != nil {
		fmt.Println(err)
		return
	}
	cluster, err := sim.NewCluster(spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	var b backend.Runner = cluster

	trainer := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x4", NumSlices: 2},
		RunConfig:          train.RunConfig{Name: "llama"},
	}
	plan, err := trainer.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Kind, plan.Slices[0])

	res, err := trainer.Fit(context.Background(), b, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("simulated:", res.Simulated, "workers:", len(res.Workers))
	slicesUsed := map[string]int{}
	for _, w := range res.Workers {
		slicesUsed[w.SliceName]++
	}
	fmt.Println("workers per slice:", slicesUsed)
	// Output:
	// JaxTrainer 2 × v6e 4x4 (v6e-16): 8 bundles {CPU:1, TPU:4, accelerator_type:TPU-V6E:0.001}, PACK
	// simulated: true workers: 8
	// workers per slice: map[v6e-16-0:4 v6e-16-1:4]
}
