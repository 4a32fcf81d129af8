// Package data_test holds the Go snippets of docs/data.md. The Examples
// run on the simulated TPU cluster or need no cluster at all; the function
// that needs a Ray cluster is compiled but not run.
package data_test

import (
	"context"
	"fmt"
	"log"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// newPipeline is the guide's batch inference: read Parquet, score it with
// a model class on four single-host v6e actors, write Parquet.
func newPipeline() data.Pipeline {
	// [snippet:pipeline]
	ds := data.From(data.ReadParquet{Paths: []string{"gs://bucket/prompts"}}).
		MapBatches(data.MapBatches{
			Fn:                  "predict:Predictor", // a class: an actor pool
			FnConstructorKwargs: map[string]any{"model": "gemma-2b"},
			BatchSize:           64,
			ActorPool:           &data.ActorPool{Size: 4},
			Resources:           map[string]float64{"TPU": 4, "CPU": 1},
			Accelerator:         "v6e",
		}).
		Write(data.WriteParquet{Path: "gs://bucket/scores"})
	p := data.Pipeline{Name: "score", Dataset: ds}
	// [end:pipeline]
	return p
}

// Run on the simulator compiles the pipeline and places it; nothing is
// read or written.
func Example_runOnSimulator() {
	p := newPipeline()
	// [snippet:run-sim]
	spec, _ := sim.ParseSpec("2*v6e-16,cpu:1")
	cluster, _ := sim.NewCluster(spec)
	res, err := p.Run(context.Background(), cluster, nil)
	if err != nil {
		log.Fatal(err) // a field.ErrorList for an invalid pipeline
	}
	fmt.Println(res.Backend, "simulated:", res.Simulated, "job:", res.JobID)
	// [end:run-sim]

	// Output:
	// sim simulated: true job: score
}

// runOnRay is compiled, not run: it needs a Ray cluster.
func runOnRay(ctx context.Context, p data.Pipeline) error {
	// [snippet:run-ray]
	rc, err := ray.NewClient("http://127.0.0.1:8265")
	if err != nil {
		return err
	}
	b, err := raybackend.New(rc)
	if err != nil {
		return err
	}
	res, err := p.Run(ctx, b, nil) // one Ray job running raytpu's launcher
	if err != nil {
		return err // a *data.RunError (errors.Is data.ErrPipelineFailed) if it raised in Ray
	}
	fmt.Println("wrote", len(res.Files), "files to", res.Path)
	// [end:run-ray]
	return nil
}

// Predict says what every host's epoch of iter_jax_batches does, for the
// hosts of a trainer on two v6e 4x4 slices.
func Example_predict() {
	// [snippet:predict]
	hosts, err := data.HostsForSlices("v6e", "4x4", 2, 0) // 8 hosts of 4 chips
	if err != nil {
		log.Fatal(err)
	}
	ds := data.From(data.Range{N: 10_000})
	for _, ragged := range []data.RaggedPolicy{data.Drop{}, data.Pad{Value: -1}, data.Raise{}} {
		it := data.IterJaxBatches{BatchSize: 128, Ragged: ragged} // rows per host
		pr, errs := data.Predict(field.NewPath("iter"), ds, it, hosts)
		if errs != nil {
			fmt.Println(errs)
			continue
		}
		g := pr.Groups[0]
		fmt.Printf("%s: %d hosts, %d rows each: %+v\n", data.Describe(ragged), g.Hosts, g.Batches.Rows, g.Batches.Runs)
		for _, f := range pr.Findings {
			fmt.Println(" ", f)
		}
	}
	// [end:predict]

	// Output:
	// Drop: 8 hosts, 1250 rows each: [{Batches:9 Rows:128 Pad:0}]
	//   warning DropDiscards: iter.ragged: Drop discards 784 of 10000 rows per epoch (7.8%, above 5.0%): 98 per host from the last batch of 98 rows, plus 0 from the split
	// Pad: 8 hosts, 1250 rows each: [{Batches:9 Rows:128 Pad:0} {Batches:1 Rows:98 Pad:30}]
	//   info PadRows: iter.ragged: Pad adds 30 unmasked padding rows per host to the last batch of 98 rows; use a value the train step recognises
	// iter.ragged: Invalid value: "Raise": certain to fail at the end of the first epoch: each of 8 hosts gets 1250 rows = 9 full batches of 128 and a last batch of 98 rows, which does not divide by the 4 JAX devices of a host, so iter_jax_batches raises ValueError after batch 9; use Drop (loses 98 rows per host) or Pad (adds 30 padding rows per host), change batchSize or the row count, or set allowRaise
}

// Under a local shuffle over a split dataset, the blocks each host gets
// depend on timing: Predict gives bounds, never a certainty.
func Example_predictShuffle() {
	// [snippet:may]
	hosts, _ := data.HostsForSlices("v6e", "4x4", 1, 0)
	it := data.IterJaxBatches{BatchSize: 16, Ragged: data.Drop{}, LocalShuffleBufferSize: 4}
	pr, _ := data.Predict(field.NewPath("iter"), data.From(data.Range{N: 1000}), it, hosts)
	g := pr.Groups[0]
	fmt.Println("nominal:", g.Batches.Batches, "batches; may fail:", pr.MayFail)
	fmt.Println(g.Bounds.Condition)
	fmt.Println("may:", g.Bounds.Outcomes, "batches", g.Bounds.Batches, "short", g.Bounds.ShortBatch)
	fmt.Println("a buffer of", data.MinLocalShuffleBuffer(16), "rows keeps every batch full")
	// [end:may]

	// Output:
	// nominal: 15 batches; may fail: true
	// the sizes and order of the blocks Ray Train's split hands each host, which depend on timing
	// may: [completes raises] batches [1 26] short [9 15]
	// a buffer of 30 rows keeps every batch full
}

// The trainer carries its datasets; a policy certain to fail stops the
// compile at the dataset's path.
func Example_trainer() {
	// [snippet:trainer]
	trainer := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x4", NumSlices: 2},
		RunConfig:          train.RunConfig{Name: "llama"},
		Datasets: data.DatasetConfig{Datasets: []data.TrainDataset{{
			Name:    "train",
			Dataset: data.From(data.Range{N: 10_030}),
			Iter:    data.IterJaxBatches{BatchSize: 128, Ragged: data.Raise{}},
		}}},
	}
	_, err := trainer.Compile()
	for _, e := range field.Errors(err) {
		fmt.Println(e.Field, e.Type)
	}
	// [end:trainer]

	// Output:
	// trainer.datasets[train].iter.ragged Invalid
}

// A map_batches actor runs on one host: a model that needs more chips is
// an error before anything runs.
func Example_validation() {
	// [snippet:invalid]
	ds := data.From(data.Range{N: 1000}).
		MapBatches(data.MapBatches{
			Fn:          "predict:Predictor",
			Resources:   map[string]float64{"TPU": 16}, // more than a v6e host
			Accelerator: "v6e",
			BatchFormat: "arrow", // a typo of pyarrow
		}).
		Write(data.WriteParquet{Path: "/tmp/out"})
	_, err := data.Pipeline{Name: "too-big", Dataset: ds}.Compile()
	for _, e := range field.Errors(err) {
		fmt.Println(e.Field, e.Type, e.Suggestion)
	}
	// [end:invalid]

	// Output:
	// pipeline.dataset.steps[0].batchFormat NotSupported pyarrow
	// pipeline.dataset.steps[0].resources[TPU] Invalid
}

var _ = runOnRay
