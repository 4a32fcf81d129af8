// Command servecompilebench drives the Go side of
// bench/servecompilebench/vs-python.sh: it times serve.Application
// .Compile of the typical Serve app whose config the script's Python side
// builds with Ray's schema classes, and prints one JSON object per case
// (see package cpubench), each the median of -runs runs. It first checks
// that the app compiles to exactly the config in -golden, the file the
// Python side reads, so both sides build the same thing.
//
// Every compile resolves its slice shape from the TPU catalog: serve keeps
// nothing between compiles, so the first compile of an app and every later
// one cost the same.
//
//	servecompilebench -runs 5 -golden serve/testdata/typical-config.golden.json
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/raytpu/raytpu/bench/cpubench"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// typicalApp is serve's BenchmarkCompile app (serve/bench_test.go): a CPU
// router with autoscaling and an LLM deployment whose two replicas each
// own a v4 2x2x2 slice.
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

func main() {
	runs := flag.Int("runs", 5, "benchmark runs per case; the median is printed")
	golden := flag.String("golden", "serve/testdata/typical-config.golden.json", "the typical app's config, as the Python side reads it")
	flag.Parse()
	if err := run(*runs, *golden); err != nil {
		fmt.Fprintln(os.Stderr, "servecompilebench:", err)
		os.Exit(1)
	}
}

func run(runs int, golden string) error {
	want, err := os.ReadFile(golden)
	if err != nil {
		return err
	}
	name := "typical Serve app"
	app := typicalApp()
	plan, err := app.Compile()
	if err != nil {
		return fmt.Errorf("the typical app does not compile: %w", err)
	}
	got, err := plan.Serve.Config.MarshalJSON()
	if err != nil {
		return fmt.Errorf("the typical app's config does not encode: %w", err)
	}
	if !bytes.Equal(got, bytes.TrimSuffix(want, []byte("\n"))) {
		return fmt.Errorf("the typical app's config differs from %s:\n%s", golden, got)
	}
	// The plan and the bytes Ray is sent, as the Python side builds both.
	r := cpubench.Median(runs, name, func() {
		if p, err := app.Compile(); err == nil {
			p.Serve.Config.MarshalJSON()
		}
	})
	return json.NewEncoder(os.Stdout).Encode(r)
}
