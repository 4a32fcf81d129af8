package train_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/train"
)

func base() train.JaxTrainer {
	return train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		TrainLoopConfig:    map[string]any{"steps": 20, "lr": 0.1},
		ScalingConfig: train.ScalingConfig{
			UseTPU:      true,
			Accelerator: "v4",
			Topology:    "2x2x2",
		},
		RunConfig: train.RunConfig{
			Name:        "mnist",
			StoragePath: "/tmp/raytpu-results",
			Checkpoint:  train.CheckpointConfig{NumToKeep: 2},
			Failure:     train.FailureConfig{MaxFailures: 1},
			WorkerEnv:   map[string]string{"JAX_PLATFORMS": "cpu"},
		},
		RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: "./examples/jaxtrain/loop"},
	}
}

func TestCompileGolden(t *testing.T) {
	t.Parallel()
	twoSlices := base()
	twoSlices.ScalingConfig.NumSlices = 2
	byWorkers := base()
	byWorkers.ScalingConfig.NumWorkers = 4
	v6e := base()
	v6e.ScalingConfig = train.ScalingConfig{UseTPU: true, Accelerator: "TPU-V6E", Topology: "4x4", PlacementStrategy: placement.Spread}
	cpu := base()
	cpu.ScalingConfig = train.ScalingConfig{NumWorkers: 2, ResourcesPerWorker: map[string]float64{"CPU": 2}}
	cases := map[string]train.JaxTrainer{
		"cpu-two-workers": cpu,
		"v4-one-slice":    base(),
		"v4-two-slices":   twoSlices,
		"v4-workers-4":    byWorkers,
		"v6e-4x4-spread":  v6e,
	}
	for name, tr := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := tr.Compile()
			if err != nil {
				t.Fatal(err)
			}
			b, err := p.MarshalIndent()
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, name+".golden.json", b)
		})
	}
}

func TestCompileWorkers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name           string
		scaling        train.ScalingConfig
		workers, slice int
	}{
		{"one v4 slice", train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2"}, 2, 1},
		{"two v4 slices", train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2", NumSlices: 2}, 4, 2},
		{"v6e 4x4 by workers", train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x4", NumWorkers: 8}, 8, 2},
		{"v6e 2x4 one host", train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "2x4"}, 1, 1},
		{"v6e 2x4 two hosts", train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "2x4", ChipsPerHost: 4}, 2, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := base()
			tr.ScalingConfig = c.scaling
			p, err := tr.Compile()
			if err != nil {
				t.Fatal(err)
			}
			var cfg rayruntime.TrainConfig
			if err := json.Unmarshal(p.Job.LauncherConfig, &cfg); err != nil {
				t.Fatal(err)
			}
			if cfg.Scaling.NumWorkers != c.workers {
				t.Errorf("num_workers = %d, want %d", cfg.Scaling.NumWorkers, c.workers)
			}
			if got := p.Slices[0].NumSlices; got != c.slice {
				t.Errorf("slices = %d, want %d", got, c.slice)
			}
			if got := len(p.Slices[0].Bundles()); got != c.workers {
				t.Errorf("bundles = %d, want one per worker (%d)", got, c.workers)
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
	for _, s := range []train.ScalingConfig{
		{NumWorkers: 2, LabelSelector: sel},
		{UseTPU: true, NumWorkers: 1, LabelSelector: sel}, // one TPU worker: allowed
	} {
		tr := base()
		tr.ScalingConfig = s
		p, err := tr.Compile()
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		var cfg rayruntime.TrainConfig
		if err := json.Unmarshal(p.Job.LauncherConfig, &cfg); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sel, cfg.Scaling.LabelSelector); diff != "" {
			t.Errorf("label_selector (-want +got):\n%s", diff)
		}
	}
}

type wantErr struct {
	Field string
	Type  field.Type
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(*train.JaxTrainer)
		want   []wantErr
	}{
		{"missing loop and name", func(tr *train.JaxTrainer) { tr.TrainLoopPerWorker = ""; tr.RunConfig.Name = "" },
			[]wantErr{{"trainer.train_loop_per_worker", field.TypeRequired}, {"trainer.run_config.name", field.TypeRequired}}},
		{"bad import path", func(tr *train.JaxTrainer) { tr.TrainLoopPerWorker = "train_loop.py" },
			[]wantErr{{"trainer.train_loop_per_worker", field.TypeInvalid}}},
		{"config not an object", func(tr *train.JaxTrainer) { tr.TrainLoopConfig = []int{1} },
			[]wantErr{{"trainer.train_loop_config", field.TypeInvalid}}},
		{"tpu and gpu", func(tr *train.JaxTrainer) { tr.ScalingConfig.UseGPU = true },
			[]wantErr{{"trainer.scaling_config.use_gpu", field.TypeForbidden}}},
		{"TPU without useTPU", func(tr *train.JaxTrainer) {
			tr.ScalingConfig = train.ScalingConfig{NumWorkers: 2, ResourcesPerWorker: map[string]float64{"TPU": 4}}
		}, []wantErr{{"trainer.scaling_config.resources_per_worker[TPU]", field.TypeForbidden}}},
		{"topology and accelerator required", func(tr *train.JaxTrainer) {
			tr.ScalingConfig = train.ScalingConfig{UseTPU: true, NumWorkers: 4}
		}, []wantErr{{"trainer.scaling_config.topology", field.TypeRequired}, {"trainer.scaling_config.accelerator_type", field.TypeRequired}}},
		{"label selector forbidden", func(tr *train.JaxTrainer) { tr.ScalingConfig.LabelSelector = map[string]string{"a": "b"} },
			[]wantErr{{"trainer.scaling_config.label_selector", field.TypeForbidden}}},
		// Ray checks the selector when it creates the workers; raytpu at
		// compile time, every bad entry at its key.
		{"bad label selector", func(tr *train.JaxTrainer) {
			tr.ScalingConfig = train.ScalingConfig{NumWorkers: 2, LabelSelector: map[string]string{
				"zone": "in(a,", "bad key!": "x", "spot": "!!true", "ok": "in(a, b)", "pool": "in(a,  b)",
			}}
		}, []wantErr{
			{"trainer.scaling_config.label_selector[bad key!]", field.TypeInvalid},
			{"trainer.scaling_config.label_selector[pool]", field.TypeInvalid},
			{"trainer.scaling_config.label_selector[spot]", field.TypeInvalid},
			{"trainer.scaling_config.label_selector[zone]", field.TypeInvalid},
		}},
		{"bad and forbidden label selector", func(tr *train.JaxTrainer) { tr.ScalingConfig.LabelSelector = map[string]string{"a": "in()"} },
			[]wantErr{{"trainer.scaling_config.label_selector[a]", field.TypeInvalid}, {"trainer.scaling_config.label_selector", field.TypeForbidden}}},
		{"workers not a multiple", func(tr *train.JaxTrainer) { tr.ScalingConfig.NumWorkers = 3 },
			[]wantErr{{"trainer.scaling_config.num_workers", field.TypeInvalid}}},
		{"workers and slices disagree", func(tr *train.JaxTrainer) { tr.ScalingConfig.NumWorkers = 4; tr.ScalingConfig.NumSlices = 3 },
			[]wantErr{{"trainer.scaling_config.num_workers", field.TypeInvalid}}},
		{"topology typo", func(tr *train.JaxTrainer) { tr.ScalingConfig.Topology = "2x2x3" },
			[]wantErr{{"trainer.scaling_config.topology", field.TypeNotSupported}}},
		{"gke-only topology", func(tr *train.JaxTrainer) { tr.ScalingConfig.Topology = "8x16x16" },
			[]wantErr{{"trainer.scaling_config.topology", field.TypeNotSupported}}},
		{"unknown accelerator", func(tr *train.JaxTrainer) { tr.ScalingConfig.Accelerator = "v6" },
			[]wantErr{{"trainer.scaling_config.accelerator_type", field.TypeNotSupported}}},
		{"resources without TPU", func(tr *train.JaxTrainer) { tr.ScalingConfig.ResourcesPerWorker = map[string]float64{"CPU": 2} },
			[]wantErr{{"trainer.scaling_config.resources_per_worker[TPU]", field.TypeRequired}}},
		{"TPU does not divide", func(tr *train.JaxTrainer) { tr.ScalingConfig.ResourcesPerWorker = map[string]float64{"TPU": 3} },
			[]wantErr{{"trainer.scaling_config.resources_per_worker[TPU]", field.TypeInvalid}}},
		{"bad strategy", func(tr *train.JaxTrainer) { tr.ScalingConfig.PlacementStrategy = "PACKED" },
			[]wantErr{{"trainer.scaling_config.placement_strategy", field.TypeNotSupported}}},
		{"v3 multislice", func(tr *train.JaxTrainer) {
			tr.ScalingConfig.Accelerator = "v3"
			tr.ScalingConfig.Topology = "4x4"
			tr.ScalingConfig.NumSlices = 2
		}, []wantErr{{"trainer.scaling_config.num_slices", field.TypeInvalid}}},
		{"run config", func(tr *train.JaxTrainer) {
			tr.RunConfig.Checkpoint = train.CheckpointConfig{NumToKeep: -1, ScoreOrder: "largest"}
			tr.RunConfig.Failure.MaxFailures = -2
		}, []wantErr{
			{"trainer.run_config.checkpoint_config.num_to_keep", field.TypeInvalid},
			{"trainer.run_config.checkpoint_config.checkpoint_score_order", field.TypeNotSupported},
			{"trainer.run_config.failure_config.max_failures", field.TypeInvalid},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := base()
			c.mutate(&tr)
			p, err := tr.Compile()
			if err == nil {
				t.Fatalf("Compile succeeded with plan %q, want errors", p.Name)
			}
			var got []wantErr
			for _, e := range field.Errors(err) {
				got = append(got, wantErr{e.Field, e.Type})
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}

func TestParseResult(t *testing.T) {
	t.Parallel()
	ok := `{"checkpoint":"/r/mnist/checkpoint_2","kind":"JaxTrainer","metrics":{"loss":0.5,"step":20},"path":"/r/mnist"}`
	r, err := train.ParseResult([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if step, _ := r.Step("step"); step != 20 || r.Checkpoint != "/r/mnist/checkpoint_2" {
		t.Errorf("got step %d checkpoint %q", step, r.Checkpoint)
	}
	failed := `{"error":{"type":"TrainingFailedError","message":"worker died"}}`
	r, err = train.ParseResult([]byte(failed))
	if !errors.Is(err, train.ErrTrainingFailed) {
		t.Fatalf("err = %v, want ErrTrainingFailed", err)
	}
	var re *train.RunError
	if !errors.As(err, &re) || re.Type != "TrainingFailedError" || r == nil {
		t.Errorf("err = %#v, result %v", err, r)
	}
	if _, err := train.ParseResult([]byte("{")); err == nil {
		t.Error("ParseResult accepted malformed JSON")
	}
}

// Each problem is reported once, at the path the user wrote, whether the
// rule is a struct tag, train's own or placement's and the catalog's.
func TestCompileErrorsOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		scaling train.ScalingConfig
		want    []wantErr
	}{
		{"negative chipsPerHost", train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "2x4", ChipsPerHost: -4},
			[]wantErr{{"trainer.scaling_config.chips_per_host", field.TypeInvalid}}},
		{"chipsPerHost not offered", train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2", ChipsPerHost: 8},
			[]wantErr{{"trainer.scaling_config.chips_per_host", field.TypeNotSupported}}},
		{"chipsPerHost does not split", train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "2x2", ChipsPerHost: 8},
			[]wantErr{{"trainer.scaling_config.chips_per_host", field.TypeInvalid}}},
		{"negative resources", train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x4",
			ResourcesPerWorker: map[string]float64{"TPU": 4, "memory": -1, "CPU": -1}}, []wantErr{
			{"trainer.scaling_config.resources_per_worker[CPU]", field.TypeInvalid},
			{"trainer.scaling_config.resources_per_worker[memory]", field.TypeInvalid},
		}},
		{"zero TPU", train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x4", ResourcesPerWorker: map[string]float64{"TPU": 0}},
			[]wantErr{{"trainer.scaling_config.resources_per_worker[TPU]", field.TypeInvalid}}},
		{"strategy and topology", train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x5", PlacementStrategy: "SPRED"}, []wantErr{
			{"trainer.scaling_config.placement_strategy", field.TypeNotSupported},
			{"trainer.scaling_config.topology", field.TypeNotSupported},
		}},
		{"negative counts", train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x4", NumWorkers: -1, NumSlices: -2}, []wantErr{
			{"trainer.scaling_config.num_workers", field.TypeInvalid},
			{"trainer.scaling_config.num_slices", field.TypeInvalid},
		}},
		{"cpu strategy typo", train.ScalingConfig{NumWorkers: 2, PlacementStrategy: "STRICT_SPRED"},
			[]wantErr{{"trainer.scaling_config.placement_strategy", field.TypeNotSupported}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := base()
			tr.ScalingConfig = c.scaling
			_, err := tr.Compile()
			var got []wantErr
			for _, e := range field.Errors(err) {
				got = append(got, wantErr{e.Field, e.Type})
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}

// The declarative rules keep their bad value, valid values and suggestion.
func TestCompileErrorValues(t *testing.T) {
	t.Parallel()
	tr := base()
	tr.ScalingConfig.PlacementStrategy = "PACKED"
	tr.RunConfig.Name = "a/b"
	tr.RunConfig.Checkpoint.ScoreOrder = "mx"
	_, err := tr.Compile()
	got := map[string]*field.Error{}
	for _, e := range field.Errors(err) {
		got[e.Field] = e
	}
	strategy := got["trainer.scaling_config.placement_strategy"]
	if strategy == nil || strategy.BadValue != "PACKED" || strategy.Suggestion != "PACK" || len(strategy.ValidValues) != 4 {
		t.Errorf("placementStrategy error = %#v, want bad value PACKED, 4 valid values, suggestion PACK", strategy)
	}
	order := got["trainer.run_config.checkpoint_config.checkpoint_score_order"]
	if order == nil || order.Type != field.TypeNotSupported || order.Suggestion != "max" || !cmp.Equal(order.ValidValues, []string{"max", "min"}) {
		t.Errorf("scoreOrder error = %#v, want NotSupported with max, min and suggestion max", order)
	}
	if name := got["trainer.run_config.name"]; name == nil || name.Type != field.TypeInvalid || name.BadValue != "a/b" {
		t.Errorf("name error = %#v, want Invalid a/b", name)
	}
	if len(got) != 3 {
		t.Errorf("got %d errors, want 3: %v", len(got), err)
	}
}
