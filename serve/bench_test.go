package serve_test

import (
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// typicalApp is a typical Serve app: a CPU router and an LLM deployment
// whose two replicas each own a v4 2x2x2 slice. The Python side of
// bench/servecompilebench/vs-python.sh builds the same config.
func typicalApp() serve.Application {
	return serve.Application{
		Name:        "chat",
		RoutePrefix: "/chat",
		ImportPath:  "chat.app:build",
		Args:        map[string]any{"model": "gemma-2b"},
		Deployments: []serve.Deployment{
			{
				Name:               "Router",
				MaxOngoingRequests: 16,
				AutoscalingConfig:  &serveconfig.AutoscalingConfig{MinReplicas: new(1), MaxReplicas: 4, TargetOngoingRequests: 8},
				RayActorOptions:    &serve.RayActorOptions{NumCPUs: new(0.5)},
			},
			{
				Name:                "LLM",
				NumReplicas:         serveconfig.ReplicaCount(2),
				MaxOngoingRequests:  16,
				HealthCheckTimeoutS: 120,
				AcceleratorConfig:   &serve.AcceleratorConfig{Kind: serve.TPU, Accelerator: "v4", Topology: "2x2x2"},
			},
		},
	}
}

// BenchmarkCompile measures validating a typical app and compiling it to a
// plan with its Serve config.
func BenchmarkCompile(b *testing.B) {
	app := typicalApp()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := app.Compile(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileAndMarshal measures Compile and the encoding of its
// Serve config into the bytes Ray is sent, what a deploy does.
func BenchmarkCompileAndMarshal(b *testing.B) {
	app := typicalApp()
	b.ReportAllocs()
	for b.Loop() {
		plan, err := app.Compile()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := plan.Serve.Config.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTypicalConfig keeps the benchmarked app's Serve config in testdata,
// where bench/servecompilebench/vs-python.sh reads it for the Python
// side.
func TestTypicalConfig(t *testing.T) {
	t.Parallel()
	plan, err := typicalApp().Compile()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := plan.Serve.Config.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "typical-config.golden.json", append(cfg, '\n'))
}
