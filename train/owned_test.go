package train_test

import (
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/owntest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/train"
)

// TestPlanBelongsToCaller: a compiled trainer plan shares nothing with
// another compile of the same trainer, before or after it. Each trainer is
// compiled three times and the second plan changed everywhere (its slice
// groups, the job's runtime_env, metadata and launcher config): the first
// and the third stay what a compile alone makes.
func TestPlanBelongsToCaller(t *testing.T) {
	t.Parallel()
	twoSlices := base()
	twoSlices.ScalingConfig.NumSlices = 2
	v6e := base()
	v6e.ScalingConfig = train.ScalingConfig{UseTPU: true, Accelerator: "TPU-V6E", Topology: "4x4", PlacementStrategy: placement.Spread,
		ResourcesPerWorker: map[string]float64{"TPU": 4, "CPU": 2}}
	cpu := base()
	cpu.ScalingConfig = train.ScalingConfig{NumWorkers: 2, ResourcesPerWorker: map[string]float64{"CPU": 2},
		LabelSelector: map[string]string{"zone": "in(us-a,us-b)"}}
	env := base()
	env.RuntimeEnv = runtimeenv.RuntimeEnv{WorkingDir: "gs://b/loop.zip", Pip: []string{"jax"}, PyModules: []string{"gs://b/m.zip"},
		EnvVars: map[string]string{"A": "1"}}
	env.TrainLoopConfig = map[string]any{"nested": map[string]any{"list": []any{1, "a"}}}
	for name, tr := range map[string]train.JaxTrainer{
		"v4 one slice":  base(),
		"v4 two slices": twoSlices,
		"v6e 4x4":       v6e,
		"cpu":           cpu,
		"runtime env":   env,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			owntest.CheckCompiles(t, tr.Compile)
		})
	}
}
