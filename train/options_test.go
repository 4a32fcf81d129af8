package train_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/train"
)

// The options of Ray 2.60's JaxTrainer beyond the first cut, and elastic
// worker groups, compile to golden plans.
func TestCompileOptionsGolden(t *testing.T) {
	t.Parallel()
	elastic := base()
	elastic.ScalingConfig.MinWorkers, elastic.ScalingConfig.MaxWorkers = 2, 4
	elastic.ScalingConfig.ElasticResizeMonitorInterval = 10 * time.Second
	options := base()
	options.JaxConfig = &train.JaxConfig{UseTPU: true}
	options.RunConfig.LogLevel = "debug"
	options.RunConfig.WorkerGroupStartTimeout = 20 * time.Second
	options.RunConfig.Failure = train.FailureConfig{
		MaxFailures: 1, ControllerFailureLimit: new(2), MaxPreemptionFailures: new(0),
		RelaxCollectivesOnPreemption: true, PreemptionGrace: 1500 * time.Millisecond,
	}
	cpuElastic := base()
	cpuElastic.ScalingConfig = train.ScalingConfig{MinWorkers: 1, MaxWorkers: 3}
	for name, tr := range map[string]train.JaxTrainer{"v4-elastic-2-4": elastic, "v4-options": options, "cpu-elastic-1-3": cpuElastic} {
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

// An elastic TPU group reserves slices for maxWorkers, as Ray requests
// resources for max_workers, and tells the launcher the minimum.
func TestElasticCompile(t *testing.T) {
	t.Parallel()
	tr := base()
	tr.ScalingConfig.MinWorkers, tr.ScalingConfig.MaxWorkers = 2, 6
	p, err := tr.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var cfg rayruntime.TrainConfig
	if err := json.Unmarshal(p.Job.LauncherConfig, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Scaling.MinWorkers != 2 || cfg.Scaling.NumWorkers != 6 || p.Slices[0].NumSlices != 3 {
		t.Errorf("min %d, num_workers %d, slices %d; want 2, 6 and 3 slices", cfg.Scaling.MinWorkers, cfg.Scaling.NumWorkers, p.Slices[0].NumSlices)
	}
}

func TestOptionErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(*train.JaxTrainer)
		want   []wantErr
	}{
		{"elastic min not a multiple", func(tr *train.JaxTrainer) { tr.ScalingConfig.MinWorkers, tr.ScalingConfig.MaxWorkers = 1, 4 },
			[]wantErr{{"trainer.scaling_config.min_workers", field.TypeInvalid}}},
		{"elastic max not a multiple", func(tr *train.JaxTrainer) { tr.ScalingConfig.MinWorkers, tr.ScalingConfig.MaxWorkers = 2, 5 },
			[]wantErr{{"trainer.scaling_config.max_workers", field.TypeInvalid}}},
		{"elastic min above max", func(tr *train.JaxTrainer) { tr.ScalingConfig.MinWorkers, tr.ScalingConfig.MaxWorkers = 4, 2 },
			[]wantErr{{"trainer.scaling_config.max_workers", field.TypeInvalid}}},
		{"elastic max without min", func(tr *train.JaxTrainer) { tr.ScalingConfig.MaxWorkers = 4 },
			[]wantErr{{"trainer.scaling_config.min_workers", field.TypeInvalid}}},
		{"elastic and fixed", func(tr *train.JaxTrainer) {
			tr.ScalingConfig.MinWorkers, tr.ScalingConfig.MaxWorkers, tr.ScalingConfig.NumWorkers, tr.ScalingConfig.NumSlices = 2, 4, 4, 2
		}, []wantErr{{"trainer.scaling_config.num_workers", field.TypeForbidden}, {"trainer.scaling_config.num_slices", field.TypeForbidden}}},
		{"resize interval without elastic", func(tr *train.JaxTrainer) { tr.ScalingConfig.ElasticResizeMonitorInterval = time.Second },
			[]wantErr{{"trainer.scaling_config.elastic_resize_monitor_interval", field.TypeForbidden}}},
		{"negative resize interval", func(tr *train.JaxTrainer) {
			tr.ScalingConfig.MinWorkers, tr.ScalingConfig.MaxWorkers, tr.ScalingConfig.ElasticResizeMonitorInterval = 2, 4, -time.Second
		}, []wantErr{{"trainer.scaling_config.elastic_resize_monitor_interval", field.TypeInvalid}}},
		{"jax config", func(tr *train.JaxTrainer) {
			tr.ScalingConfig = train.ScalingConfig{NumWorkers: 2}
			tr.JaxConfig = &train.JaxConfig{UseTPU: true, UseGPU: true}
		}, []wantErr{{"trainer.jax_config.use_gpu", field.TypeForbidden}, {"trainer.jax_config.use_tpu", field.TypeInvalid}, {"trainer.jax_config.use_gpu", field.TypeInvalid}}},
		{"failure and run options", func(tr *train.JaxTrainer) {
			tr.RunConfig.Failure.ControllerFailureLimit = new(-3)
			tr.RunConfig.Failure.MaxPreemptionFailures = new(-2)
			tr.RunConfig.Failure.PreemptionGrace = -time.Second
			tr.RunConfig.WorkerGroupStartTimeout = -time.Second
			tr.RunConfig.LogLevel = "verbose"
		}, []wantErr{
			{"trainer.run_config.failure_config.controller_failure_limit", field.TypeInvalid},
			{"trainer.run_config.failure_config.max_preemption_failures", field.TypeInvalid},
			{"trainer.run_config.failure_config.preemption_grace", field.TypeInvalid},
			{"trainer.run_config.worker_group_start_timeout", field.TypeInvalid},
			{"trainer.run_config.log_level", field.TypeNotSupported},
		}},
		{"start timeout set twice", func(tr *train.JaxTrainer) {
			tr.RunConfig.WorkerGroupStartTimeout = time.Minute
			tr.RuntimeEnv.EnvVars = map[string]string{"RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S": "30"}
		}, []wantErr{{"trainer.runtime_env.envVars[RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S]", field.TypeForbidden}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := base()
			c.mutate(&tr)
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
