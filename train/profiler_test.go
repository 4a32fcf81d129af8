package train_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/train"
)

// RunConfig.Profiler reaches the launcher as run_config.profiler.
func TestCompileProfilerGolden(t *testing.T) {
	t.Parallel()
	tr := base()
	tr.RunConfig.Profiler = &train.ProfilerConfig{Port: 9012}
	p, err := tr.Compile()
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "v4-profiler.golden.json", b)
}

func TestProfilerConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cpu  int // CPU workers instead of base's TPU slice
		cfg  *train.ProfilerConfig
		want *rayruntime.TrainProfiler // nil: no profiler
		errs []string                  // "path Type"
	}{
		{name: "unset", cfg: nil},
		{name: "free port", cfg: &train.ProfilerConfig{}, want: &rayruntime.TrainProfiler{Port: 0}},
		{name: "fixed port", cfg: &train.ProfilerConfig{Port: 65535}, want: &rayruntime.TrainProfiler{Port: 65535}},
		{name: "negative", cfg: &train.ProfilerConfig{Port: -1}, errs: []string{"trainer.run_config.profiler.port Invalid"}},
		{name: "too big", cfg: &train.ProfilerConfig{Port: 65536}, errs: []string{"trainer.run_config.profiler.port Invalid"}},
		{name: "fixed port, CPU workers", cpu: 2, cfg: &train.ProfilerConfig{Port: 9012}, errs: []string{"trainer.run_config.profiler.port Invalid"}},
		{name: "free port, CPU workers", cpu: 2, cfg: &train.ProfilerConfig{}, want: &rayruntime.TrainProfiler{Port: 0}},
		{name: "fixed port, one CPU worker", cpu: 1, cfg: &train.ProfilerConfig{Port: 9012}, want: &rayruntime.TrainProfiler{Port: 9012}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := base()
			if tc.cpu > 0 {
				tr.ScalingConfig = train.ScalingConfig{NumWorkers: tc.cpu}
			}
			tr.RunConfig.Profiler = tc.cfg
			p, err := tr.Compile()
			var got []string
			for _, e := range field.Errors(err) {
				got = append(got, fmt.Sprintf("%s %s", e.Field, e.Type))
			}
			if diff := cmp.Diff(tc.errs, got); diff != "" {
				t.Fatalf("Compile errors (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			var cfg rayruntime.TrainConfig
			if err := json.Unmarshal(p.Job.LauncherConfig, &cfg); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, cfg.Run.Profiler); diff != "" {
				t.Errorf("launcher run_config.profiler (-want +got):\n%s", diff)
			}
		})
	}
}

// With RunConfig.Profiler every train worker starts jax.profiler's server
// on a free port; `raytpu profile --job <id> --worker <rank>` finds it in
// the job's log and captures a trace.
func ExampleProfilerConfig() {
	tr := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2"},
		RunConfig: train.RunConfig{
			Name:     "profiled",
			Profiler: &train.ProfilerConfig{}, // Port 0: each worker picks a free port
		},
	}
	plan, err := tr.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	var cfg rayruntime.TrainConfig
	_ = json.Unmarshal(plan.Job.LauncherConfig, &cfg)
	b, _ := json.Marshal(cfg.Run.Profiler)
	fmt.Println("run_config.profiler:", string(b))

	tr.RunConfig.Profiler.Port = 70000
	_, err = tr.Compile()
	fmt.Println(err)
	// Output:
	// run_config.profiler: {"port":0}
	// trainer.run_config.profiler.port: Invalid value: 70000: must be a TCP port, 1-65535, or 0 to let each worker pick a free one
}
