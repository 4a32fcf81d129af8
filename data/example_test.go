package data_test

import (
	"fmt"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
)

// A batch-inference pipeline: read Parquet, run a TPU model class in a
// pool of four single-host actors, write Parquet.
func ExamplePipeline_Compile() {
	ds := data.From(data.ReadParquet{Paths: []string{"gs://bucket/prompts"}}).
		MapBatches(data.MapBatches{
			Fn:                  "predict:Predictor",
			FnConstructorKwargs: map[string]any{"model": "gemma-2b"},
			BatchSize:           64,
			ActorPool:           &data.ActorPool{Size: 4},
			Resources:           map[string]float64{"TPU": 4, "CPU": 1},
			Accelerator:         "v6e",
		}).
		Write(data.WriteParquet{Path: "gs://bucket/out"})
	plan, err := data.Pipeline{Name: "score", Dataset: ds}.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Kind, plan.Name, plan.Job.Launcher)
	fmt.Println(string(plan.Job.LauncherConfig))
	// Output:
	// BatchInference score data
	// {"name":"score","source":{"op":"read_parquet","kwargs":{"paths":["gs://bucket/prompts"]}},"steps":[{"op":"map_batches","kwargs":{"fn":"predict:Predictor","batch_size":64,"fn_constructor_kwargs":{"model":"gemma-2b"},"compute":{"size":4},"num_cpus":1,"resources":{"TPU":4},"accelerator_type":"TPU-V6E"}}],"sink":{"op":"write_parquet","kwargs":{"path":"gs://bucket/out"}}}
}

// A map_batches actor cannot span hosts: 16 chips of v6e is a multi-host
// model, which belongs in Serve or Train with a topology.
func ExamplePipeline_Compile_multiHostActor() {
	ds := data.From(data.Range{N: 1000}).
		MapBatches(data.MapBatches{Fn: "predict:Predictor", Resources: map[string]float64{"TPU": 16}, Accelerator: "v6e"}).
		Write(data.WriteJSON{Path: "/tmp/out"})
	_, err := data.Pipeline{Name: "too-big", Dataset: ds}.Compile()
	for _, e := range field.Errors(err) {
		fmt.Println(e.Field, e.Type)
		fmt.Println(e.Detail)
	}
	// Output:
	// pipeline.dataset.steps[0].resources[TPU] Invalid
	// a v6e host holds at most 8 chips, and a Ray Data task or actor runs on one host; a model that needs several hosts belongs in Serve or Train with a topology (serve.Deployment or train.JaxTrainer with Accelerator v6e and a Topology)
}

// Steps chain immutably: a branch never changes its parent.
func ExampleDataset_Filter() {
	base := data.From(data.Range{N: 100})
	shuffled := base.RandomShuffle(data.RandomShuffle{})
	filtered := base.Filter(data.Filter{Expr: "id > 10"})
	fmt.Println(base.Steps(), shuffled.Steps(), filtered.Steps())
	n, ok := shuffled.KnownRows()
	fmt.Println(n, ok)
	_, ok = filtered.KnownRows()
	fmt.Println(ok)
	// Output:
	// 0 1 1
	// 100 true
	// false
}

// Predict tells before launch what every host's last batch does. 1000 rows
// over 3 v4 hosts (4 chips, 1 JAX device each): the split drops 1 row, each
// host gets 333 rows = 5 batches of 64 and a last batch of 13, which Pad
// fills with 51 padding rows.
func ExamplePredict() {
	pr, err := data.Predict(field.NewPath("iter"), data.From(data.Range{N: 1000}),
		data.IterJaxBatches{BatchSize: 64, Ragged: data.Pad{Value: -1}, SynchronizeBatches: true},
		data.Hosts{Workers: 3, Accelerator: "v4"})
	if err != nil {
		fmt.Println(err)
		return
	}
	g := pr.Groups[0]
	fmt.Println("hosts:", g.Hosts, "devices:", pr.Devices, "split drops:", pr.SplitDropped)
	fmt.Printf("per host: %+v\n", g.Batches.Runs)
	for _, f := range pr.Findings {
		fmt.Println(f)
	}
	// Output:
	// hosts: 3 devices: 4 split drops: 1
	// per host: [{Batches:5 Rows:64 Pad:0} {Batches:1 Rows:13 Pad:51}]
	// info SyncNoEffect: iter.synchronizeBatches: changes no outcome here: Ray Train's equal split gives every host the same rows, so batch counts and sizes already agree; it costs one all-gather per batch
	// warning SplitDropsRows: iter.dataset: Ray Train's streaming_split(equal=True) gives each of 3 workers 333 rows and silently drops 1 of 1000 rows (1000 mod 3)
	// info PadRows: iter.ragged: Pad adds 51 unmasked padding rows per host to the last batch of 13 rows; use a value the train step recognises
}

// A Raise certain to fail at the end of the first epoch is a compile error
// with the numbers.
func ExamplePredict_raise() {
	_, err := data.Predict(field.NewPath("iter"), data.From(data.Range{N: 1030}),
		data.IterJaxBatches{BatchSize: 64},
		data.Hosts{Workers: 4, Accelerator: "v6e", ChipsPerHost: 4})
	fmt.Println(err)
	// Output:
	// iter.ragged: Invalid value: "Raise": certain to fail at the end of the first epoch: each of 4 hosts gets 257 rows = 4 full batches of 64 and a last batch of 1 rows, which does not divide by the 4 JAX devices of a host, so iter_jax_batches raises ValueError after batch 4; use Drop (loses 1 rows per host) or Pad (adds 63 padding rows per host), change batchSize or the row count, or set allowRaise
}

// A local shuffle buffer under 2×batchSize-2 rows makes Ray's shuffling
// batcher hand out short batches before the end of the epoch. Over known
// blocks (range with overrideNumBlocks, read whole by every worker) the
// short batch is certain: ten blocks of 10 rows give five batches of 16,
// then one of 10, which 4 devices cannot split; drop_last does not drop it.
func ExamplePredict_localShuffle() {
	ds := data.From(data.Range{N: 100, OverrideNumBlocks: 10})
	hosts := data.Hosts{Workers: 1, LocalDevices: 4, NotSplit: true}
	pr, _ := data.Predict(field.NewPath("iter"), ds,
		data.IterJaxBatches{BatchSize: 16, Ragged: data.Drop{}, LocalShuffleBufferSize: 4, AllowRaise: true}, hosts)
	g := pr.Groups[0].Batches
	fmt.Printf("exact: %v, %d batches, then %s at batch %d\n", pr.Groups[0].Bounds == nil, g.Batches, g.Outcome, g.AtBatch)

	// Over a split, the blocks each host gets depend on timing: bounds.
	pr, _ = data.Predict(field.NewPath("iter"), data.From(data.Range{N: 1000}),
		data.IterJaxBatches{BatchSize: 16, Ragged: data.Pad{Value: -1}, LocalShuffleBufferSize: 4},
		data.Hosts{Workers: 4, LocalDevices: 4})
	b := pr.Groups[0].Bounds
	fmt.Printf("may: short batches of %d-%d rows, %d-%d batches, %d-%d padding rows per host\n",
		b.ShortBatch[0], b.ShortBatch[1], b.Batches[0], b.Batches[1], b.PadRows[0], b.PadRows[1])
	fmt.Println("at least", data.MinLocalShuffleBuffer(16), "rows keep every batch full")
	// Output:
	// exact: true, 5 batches, then raises at batch 5
	// may: short batches of 9-15 rows, 16-26 batches, 6-166 padding rows per host
	// at least 30 rows keep every batch full
}

// HostsForSlices gives Predict the hosts of a trainer's ScalingConfig:
// two v6e 4x4 slices are eight hosts of four chips, one worker each.
func ExampleHostsForSlices() {
	hosts, err := data.HostsForSlices("v6e", "4x4", 2, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d workers on %s hosts of %d chips\n", hosts.Workers, hosts.Accelerator, hosts.ChipsPerHost)
	pr, errs := data.Predict(field.NewPath("iter"), data.From(data.Range{N: 10_000}), data.IterJaxBatches{BatchSize: 128, Ragged: data.Drop{}}, hosts)
	if errs != nil {
		fmt.Println(errs)
		return
	}
	fmt.Printf("%d rows per host, %d rows dropped per epoch\n", pr.Groups[0].Batches.Rows, pr.RowsDropped)
	_, err = data.HostsForSlices("v6e", "4x5", -1, 0)
	for _, e := range field.Errors(err) {
		fmt.Println(e.Field, e.Type)
	}
	// Output:
	// 8 workers on v6e hosts of 4 chips
	// 1250 rows per host, 784 rows dropped per epoch
	// scaling_config.num_slices Invalid
	// scaling_config.topology NotSupported
}
