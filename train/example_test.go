package train_test

import (
	"context"
	"fmt"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// A JaxTrainer on two v4 2x2x2 slices compiles to four workers, one per
// TPU host, with one head reservation per slice.
func ExampleJaxTrainer_Compile() {
	plan, err := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2", NumSlices: 2},
		RunConfig:          train.RunConfig{Name: "demo", WorkerEnv: map[string]string{"JAX_PLATFORMS": "cpu"}},
	}.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	g := plan.Slices[0]
	fmt.Println(plan.Kind, plan.Name)
	fmt.Println(g)
	fmt.Println("workers:", g.Hosts(), "heads:", len(g.Heads))
	fmt.Println("part:", g.Part, "launcher:", plan.Job.Launcher)
	// Output:
	// JaxTrainer demo
	// 2 × v4 2x2x2 (v4-16): 4 bundles {CPU:1, TPU:4, accelerator_type:TPU-V4:0.001}, PACK
	// workers: 4 heads: 2
	// part: worker group "demo" launcher: train
}

// An invalid trainer never reaches a cluster: every problem comes back at
// once with its field path.
func ExampleJaxTrainer_Compile_invalid() {
	_, err := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x5", NumWorkers: 3},
	}.Compile()
	for _, e := range field.Errors(err) {
		fmt.Printf("%s: %s %q\n", e.Field, e.Type, e.Suggestion)
	}
	// Output:
	// trainer.scaling_config.topology: NotSupported "4x4"
	// trainer.run_config.name: Required ""
}

// Fit on the simulated cluster places one worker per TPU host, runs
// nothing, and says so. The same call with a Ray cluster backend
// (raybackend.New) trains for real.
func ExampleJaxTrainer_Fit() {
	spec, err := sim.ParseSpec("2*v4-16,cpu:1")
	if err != nil {
		fmt.Println(err)
		return
	}
	cluster, err := sim.NewCluster(spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2", NumSlices: 2},
		RunConfig:          train.RunConfig{Name: "demo"},
	}.Fit(context.Background(), cluster, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res)
	// Output:
	// simulated: no training ran; 4 workers placed
	// worker 0  slice 0  CREATED   node v4-16-0-w0    v4-16-0
	// worker 1  slice 0  CREATED   node v4-16-0-w1    v4-16-0
	// worker 2  slice 1  CREATED   node v4-16-1-w0    v4-16-1
	// worker 3  slice 1  CREATED   node v4-16-1-w1    v4-16-1
}
