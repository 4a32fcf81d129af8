package serve_test

import (
	"fmt"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// An LLM deployment whose replicas each own a v4 2x2x2 slice (two hosts),
// behind a small CPU router: the plan holds the Serve config Ray's REST API
// takes and one slice group per replica.
func ExampleApplication_Compile() {
	plan, err := serve.Application{
		Name:        "chat",
		RoutePrefix: "/chat",
		ImportPath:  "chat.app:build",
		Args:        map[string]any{"model": "gemma-2b"},
		Deployments: []serve.Deployment{
			{Name: "Router", NumReplicas: serveconfig.ReplicaCount(2), RayActorOptions: &serve.RayActorOptions{NumCPUs: new(0.5)}},
			{
				Name:              "LLM",
				NumReplicas:       serveconfig.ReplicaCount(2),
				AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"},
			},
		},
	}.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Kind, plan.Name)
	for _, g := range plan.Slices {
		fmt.Println(g.Part, "->", g)
	}
	cfg, err := plan.Serve.Config.MarshalJSON() // the bytes Ray is sent
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(cfg))
	// Output:
	// Application chat
	// deployment "LLM" replica 0 -> 1 × v4 2x2x2 (v4-16): 2 bundles {CPU:1, TPU:4, accelerator_type:TPU-V4:0.001}, PACK
	// deployment "LLM" replica 1 -> 1 × v4 2x2x2 (v4-16): 2 bundles {CPU:1, TPU:4, accelerator_type:TPU-V4:0.001}, PACK
	// {"name":"chat","route_prefix":"/chat","import_path":"chat.app:build","deployments":[{"name":"Router","num_replicas":2,"ray_actor_options":{"num_cpus":0.5}},{"name":"LLM","num_replicas":2,"user_config":{"raytpu_slice":{"version":1,"topology":"2x2x2","accelerator_version":"v4","accelerator_type":"TPU-V4","pod_type":"v4-16","num_hosts":2,"chips_per_host":4,"num_bundles":2,"resources_per_bundle":{"CPU":1,"TPU":4,"accelerator_type:TPU-V4":0.001},"strategy":"PACK","head_reservation_timeout_s":100}}}],"args":{"model":"gemma-2b"}}
}

// An invalid application never reaches a cluster: every problem comes back
// at once with its field path.
func ExampleApplication_Compile_invalid() {
	_, err := serve.Application{
		ImportPath: "app",
		Deployments: []serve.Deployment{{
			Name:              "llm",
			NumReplicas:       serveconfig.ReplicaCount(2),
			AutoscalingConfig: &serveconfig.AutoscalingConfig{MinReplicas: new(3)},
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v6e", Topology: "4x5"},
		}},
	}.Compile()
	for _, e := range field.Errors(err) {
		fmt.Printf("%s: %s %q\n", e.Field, e.Type, e.Suggestion)
	}
	// Output:
	// app.import_path: Invalid ""
	// app.deployments[llm].num_replicas: Forbidden ""
	// app.deployments[llm].autoscaling_config.min_replicas: Invalid ""
	// app.deployments[llm].accelerator_config.topology: NotSupported "4x4"
}
