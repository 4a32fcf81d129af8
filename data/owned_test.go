package data_test

import (
	"testing"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/internal/testinfra/owntest"
	"github.com/raytpu/raytpu/runtimeenv"
)

// TestPlanBelongsToCaller: a compiled pipeline plan shares nothing with
// another compile of the same pipeline, before or after it: the second of
// three compiles is changed everywhere (its slice groups, the job's
// runtime_env, metadata and launcher config) and the first and the third
// stay what a compile alone makes.
func TestPlanBelongsToCaller(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]data.Pipeline{
		"batch inference": {Name: "infer", Dataset: inference(), RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: "./predict",
			EnvVars: map[string]string{"A": "1"}, Pip: []string{"jax"}}},
		"items": {Name: "items", Dataset: data.From(data.FromItems{Items: []any{map[string]any{"x": 1}, map[string]any{"x": 2}}}).
			MapBatches(data.MapBatches{Fn: "m:f", BatchSize: 2, Resources: map[string]float64{"GPU": 1}}).
			Write(data.WriteParquet{Path: "/tmp/items"})},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			owntest.CheckCompiles(t, p.Compile)
		})
	}
}
