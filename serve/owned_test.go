package serve

import (
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/owntest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

// TestPlanBelongsToCaller: a compiled plan shares nothing with another
// compile of the same application, before or after it. Every valid spec
// of specCases that compiles to a map or a slice, and an application with
// every option that does, is compiled three times and the second plan changed
// everywhere (its slice groups' and bundles' resources, label selectors,
// head reservations, the Serve config with its reservation, user_config,
// args and runtime_env): the first and the third plan stay what a compile
// alone makes.
func TestPlanBelongsToCaller(t *testing.T) {
	t.Parallel()
	apps := map[string]Application{
		"profiler and a user TPU bundle": {Name: "chat", ImportPath: "chat.app:build", Deployments: []Deployment{{
			Name:                  "LLM",
			NumReplicas:           serveconfig.ReplicaCount(2),
			UserConfig:            map[string]any{"nested": map[string]any{"list": []any{1, "a"}}},
			PlacementGroupBundles: []map[string]float64{{"CPU": 2, "TPU": 4}},
			AcceleratorConfig:     &AcceleratorConfig{Accelerator: "v5p", Topology: "2x2x4"},
			Profiler:              &serveconfig.ProfilerConfig{Port: 9999},
			RayActorOptions: &RayActorOptions{NumCPUs: new(1.0), LabelSelector: map[string]string{"zone": "a"},
				RuntimeEnv: runtimeenv.RuntimeEnv{EnvVars: map[string]string{"A": "1"}, Pip: []string{"jax"}}},
		}}},
	}
	for _, tc := range specCases {
		if tc.want != nil {
			continue
		}
		// A plan without a map or slice (an app with no deployments) has
		// nothing to share.
		if p, err := tc.app.Compile(); err != nil || owntest.Mutate(p) > 0 {
			apps[tc.name] = tc.app
		}
	}
	if len(apps) < 20 {
		t.Fatalf("only %d valid specs to check", len(apps))
	}
	for name, app := range apps {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			owntest.CheckCompiles(t, func() (*placement.Plan, error) { return app.Compile() })
		})
	}
}
