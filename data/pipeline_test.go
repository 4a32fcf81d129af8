package data_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/runtimeenv"
)

func inference() data.Dataset {
	seed, restarts := 7, 3
	return data.From(data.ReadParquet{Paths: []string{"gs://b/in"}, Columns: []string{"text"}}).
		Filter(data.Filter{Expr: "length(text) > 0"}).
		RandomShuffle(data.RandomShuffle{Seed: &seed}).
		MapBatches(data.MapBatches{
			Fn: "predict:Predictor", FnConstructorKwargs: map[string]any{"ckpt": "gs://b/ckpt", "dtype": "bf16"},
			BatchSize: 32, BatchFormat: "numpy", ActorPool: &data.ActorPool{MinSize: 1, MaxSize: 4},
			Resources: map[string]float64{"TPU": 8, "CPU": 0}, Accelerator: "TPU-V5LITEPOD",
			MaxRestarts: &restarts,
		}).
		Repartition(data.Repartition{NumBlocks: 8}).
		Write(data.WriteParquet{Path: "gs://b/out", Mode: "overwrite", MaxRowsPerFile: 100000})
}

func TestCompileGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]data.Pipeline{
		"batch-inference-v5e": {Name: "infer", Dataset: inference(), RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: "./predict"}},
		"etl-range-json": {Name: "etl", Dataset: data.From(data.Range{N: 1000, OverrideNumBlocks: 4}).
			MapBatches(data.MapBatches{Fn: "etl:double", BatchSize: 100, Concurrency: 2, KeepsRowCount: true}).
			Write(data.WriteJSON{Path: "/tmp/etl"})},
		"items-csv-gpu": {Name: "items", Dataset: data.From(data.FromItems{Items: []any{map[string]any{"x": 1}, map[string]any{"x": 2}}}).
			MapBatches(data.MapBatches{Fn: "m:f", BatchSize: 2, Resources: map[string]float64{"GPU": 1}}).
			Write(data.WriteParquet{Path: "/tmp/items"})},
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			plan, err := p.Compile()
			if err != nil {
				t.Fatal(err)
			}
			b, err := plan.MarshalIndent()
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, name+".golden.json", b)
		})
	}
}

func TestCompileKind(t *testing.T) {
	t.Parallel()
	cpu := data.From(data.Range{N: 10}).MapBatches(data.MapBatches{Fn: "m:f"}).Write(data.WriteJSON{Path: "/o"})
	for _, c := range []struct {
		ds   data.Dataset
		want placement.Kind
	}{{cpu, placement.KindPipeline}, {inference(), placement.KindBatchInference}} {
		plan, err := data.Pipeline{Name: "k", Dataset: c.ds}.Compile()
		if err != nil {
			t.Fatal(err)
		}
		if plan.Kind != c.want || plan.Job.Launcher != rayruntime.EntryData || len(plan.Slices) != 0 {
			t.Errorf("kind %s launcher %q slices %d, want %s data 0", plan.Kind, plan.Job.Launcher, len(plan.Slices), c.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	minusTwo := -2
	t.Parallel()
	cases := []struct {
		name string
		p    data.Pipeline
		want []field.Ref
	}{
		{"no source, no sink, no name", data.Pipeline{}, []field.Ref{
			{Field: "pipeline.name", Type: field.TypeRequired},
			{Field: "pipeline.dataset.source", Type: field.TypeRequired},
			{Field: "pipeline.dataset.sink", Type: field.TypeRequired},
		}},
		{"bad source and sink", data.Pipeline{Name: "x", Dataset: data.From(data.ReadCSV{Paths: []string{""}}).Write(data.WriteParquet{Mode: "replace"})}, []field.Ref{
			{Field: "pipeline.dataset.source.paths[0]", Type: field.TypeRequired},
			{Field: "pipeline.dataset.sink.path", Type: field.TypeRequired},
			{Field: "pipeline.dataset.sink.mode", Type: field.TypeNotSupported},
		}},
		{"map_batches", data.Pipeline{Name: "x", Dataset: data.From(data.Range{N: -1}).
			MapBatches(data.MapBatches{Fn: "predict.Predictor", BatchFormat: "arrow", Concurrency: 2, ActorPool: &data.ActorPool{},
				Resources: map[string]float64{"TPU": 3, "GPU": 1}, Accelerator: "v9"}).
			Write(data.WriteJSON{Path: "/o"})}, []field.Ref{
			{Field: "pipeline.dataset.source.n", Type: field.TypeInvalid},
			{Field: "pipeline.dataset.steps[0].fn", Type: field.TypeInvalid},
			{Field: "pipeline.dataset.steps[0].batchFormat", Type: field.TypeNotSupported},
			{Field: "pipeline.dataset.steps[0].concurrency", Type: field.TypeForbidden},
			{Field: "pipeline.dataset.steps[0].actorPool.size", Type: field.TypeRequired},
			{Field: "pipeline.dataset.steps[0].accelerator", Type: field.TypeNotSupported},
			{Field: "pipeline.dataset.steps[0].batchSize", Type: field.TypeRequired},
			{Field: "pipeline.dataset.steps[0].resources[TPU]", Type: field.TypeNotSupported},
		}},
		{"multi-host actor", data.Pipeline{Name: "x", Dataset: data.From(data.Range{N: 1}).
			MapBatches(data.MapBatches{Fn: "m:C", Resources: map[string]float64{"TPU": 8}, Accelerator: "v4", MaxRestarts: &minusTwo}).
			Write(data.WriteJSON{Path: "/o"})}, []field.Ref{
			{Field: "pipeline.dataset.steps[0].maxRestarts", Type: field.TypeInvalid},
			{Field: "pipeline.dataset.steps[0].resources[TPU]", Type: field.TypeInvalid},
		}},
		// Ray checks the selector when it submits the tasks; raytpu at
		// compile time, every bad entry at its key.
		{"bad label selector", data.Pipeline{Name: "x", Dataset: data.From(data.Range{N: 1}).
			MapBatches(data.MapBatches{Fn: "m:f", LabelSelector: map[string]string{
				"ray.io/accelerator-type": "TPU-V6E", "zone": "!!a", "-bad": "x", "pool": "in()", "ok": "in(a, b)",
			}}).
			Write(data.WriteJSON{Path: "/o"})}, []field.Ref{
			{Field: "pipeline.dataset.steps[0].labelSelector[-bad]", Type: field.TypeInvalid},
			{Field: "pipeline.dataset.steps[0].labelSelector[pool]", Type: field.TypeInvalid},
			{Field: "pipeline.dataset.steps[0].labelSelector[zone]", Type: field.TypeInvalid},
		}},
		{"filter and repartition", data.Pipeline{Name: "x", Dataset: data.From(data.Range{N: 1}).
			Filter(data.Filter{}).Filter(data.Filter{Fn: "m:f", Expr: "x"}).Repartition(data.Repartition{}).
			Write(data.WriteJSON{Path: "/o"})}, []field.Ref{
			{Field: "pipeline.dataset.steps[0].fn", Type: field.TypeRequired},
			{Field: "pipeline.dataset.steps[1].expr", Type: field.TypeForbidden},
			{Field: "pipeline.dataset.steps[2].numBlocks", Type: field.TypeRequired},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.p.Compile()
			if diff := cmp.Diff(c.want, field.Refs(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}

// Every selector Ray 2.60 accepts compiles, and reaches Ray unchanged.
func TestCompileLabelSelector(t *testing.T) {
	t.Parallel()
	sel := map[string]string{
		"ray.io/accelerator-type": "TPU-V6E", "zone": "in(us-a, us-b)", "spot": "!true",
		"pool": "!in(a,b)", "odd": "(a,b)", "empty": "",
	}
	plan, err := data.Pipeline{Name: "x", Dataset: data.From(data.Range{N: 1}).
		MapBatches(data.MapBatches{Fn: "m:f", LabelSelector: sel}).
		Write(data.WriteJSON{Path: "/o"})}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var cfg rayruntime.PipelineConfig
	if err := json.Unmarshal(plan.Job.LauncherConfig, &cfg); err != nil {
		t.Fatal(err)
	}
	var kw struct {
		LabelSelector map[string]string `json:"label_selector"`
	}
	if err := json.Unmarshal(cfg.Steps[0].Kwargs, &kw); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sel, kw.LabelSelector); diff != "" {
		t.Errorf("label_selector (-want +got):\n%s", diff)
	}
}

// Each step returns a new Dataset; changing the caller's maps and slices,
// or branching, never reaches an earlier value.
func TestChainImmutable(t *testing.T) {
	t.Parallel()
	paths := []string{"gs://b/a"}
	kwargs := map[string]any{"k": map[string]any{"deep": 1}}
	res := map[string]float64{"TPU": 4}
	base := data.From(data.ReadParquet{Paths: paths}).
		MapBatches(data.MapBatches{Fn: "m:C", FnConstructorKwargs: kwargs, Resources: res, Accelerator: "v6e"})
	compile := func(d data.Dataset) string {
		p, err := data.Pipeline{Name: "i", Dataset: d.Write(data.WriteJSON{Path: "/o"})}.Compile()
		if err != nil {
			t.Fatal(err)
		}
		return string(p.Job.LauncherConfig)
	}
	before := compile(base)
	paths[0] = "gs://b/changed"
	kwargs["k"].(map[string]any)["deep"] = 2
	res["TPU"] = 16
	a := base.Filter(data.Filter{Expr: "x > 1"})
	b := base.RandomShuffle(data.RandomShuffle{})
	if got := compile(base); got != before {
		t.Errorf("base changed after caller mutation or branching:\n%s\n%s", before, got)
	}
	if a.Steps() != 2 || b.Steps() != 2 || base.Steps() != 1 {
		t.Errorf("steps a=%d b=%d base=%d, want 2 2 1", a.Steps(), b.Steps(), base.Steps())
	}
	if compile(a) == compile(b) {
		t.Error("branches share their last step")
	}
}
