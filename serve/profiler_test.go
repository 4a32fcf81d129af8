package serve_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

func profiledApp(mod func(*serve.Deployment)) serve.Application {
	d := serve.Deployment{
		Name:              "LLM",
		AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"},
		Profiler:          &serveconfig.ProfilerConfig{},
	}
	if mod != nil {
		mod(&d)
	}
	return serve.Application{Name: "chat", RoutePrefix: "/chat", ImportPath: "chat.app:build", Deployments: []serve.Deployment{d}}
}

// Deployment.Profiler reaches the replica runtime in user_config, beside
// the slice reservation.
func TestCompileProfilerGolden(t *testing.T) {
	t.Parallel()
	plan, err := profiledApp(func(d *serve.Deployment) {
		d.Profiler.Port = 9012
		d.UserConfig = map[string]any{"max_tokens": 64}
	}).Compile()
	if err != nil {
		t.Fatal(err)
	}
	b, err := plan.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "v4-profiler.golden.json", b)
}

func TestProfilerValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		mod  func(*serve.Deployment)
		want []string // "path Type"
	}{
		{name: "ok", mod: nil},
		{name: "no topology", mod: func(d *serve.Deployment) { d.AcceleratorConfig = nil }, want: []string{"app.deployments[LLM].profiler Forbidden"}},
		{name: "bad port", mod: func(d *serve.Deployment) { d.Profiler.Port = 65536 }, want: []string{"app.deployments[LLM].profiler.port Invalid"}},
		{name: "reserved key", mod: func(d *serve.Deployment) { d.UserConfig = map[string]any{serveconfig.ProfilerKey: 1} }, want: []string{"app.deployments[LLM].user_config[raytpu_profiler] Forbidden"}},
		{name: "reserved key without profiler", mod: func(d *serve.Deployment) {
			d.Profiler = nil
			d.UserConfig = map[string]any{serveconfig.ProfilerKey: 1}
		}, want: []string{"app.deployments[LLM].user_config[raytpu_profiler] Forbidden"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := profiledApp(tc.mod).Compile()
			var got []string
			for _, e := range field.Errors(err) {
				got = append(got, fmt.Sprintf("%s %s", e.Field, e.Type))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Compile errors (-want +got):\n%s", diff)
			}
		})
	}
}

// A deployment whose replicas own a slice can start the JAX profiler
// server on every host; the replica runtime reads its port from
// user_config.
func ExampleProfilerConfig() {
	plan, err := serve.Application{
		Name: "chat", ImportPath: "chat.app:build",
		Deployments: []serve.Deployment{{
			Name:              "LLM",
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"},
			Profiler:          &serveconfig.ProfilerConfig{}, // each host picks a free port
		}},
	}.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	var cfg struct {
		Deployments []struct {
			UserConfig map[string]json.RawMessage `json:"user_config"`
		} `json:"deployments"`
	}
	raw, err := plan.Serve.Config.MarshalJSON() // the bytes Ray is sent
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(serveconfig.ProfilerKey+":", string(cfg.Deployments[0].UserConfig[serveconfig.ProfilerKey]))
	// Output:
	// raytpu_profiler: {"port":0}
}
