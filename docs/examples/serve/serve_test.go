// Package serve_test holds the Go snippets of docs/serve.md. The Examples
// run on the simulated TPU cluster; the functions that need a Ray cluster
// are compiled but not run.
package serve_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/client"
	"github.com/raytpu/raytpu/serve/llm"
	"github.com/raytpu/raytpu/serve/servev1"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/sim"
)

// newApp is the guide's scenario: a model whose replicas each own a v4
// 2x2x2 slice (two hosts), two of them.
func newApp() serve.Application {
	// [snippet:app]
	app := serve.Application{
		Name:        "linear",
		RoutePrefix: "/linear",
		ImportPath:  "linear:app", // linear.py: app = Linear.bind()
		Deployments: []serve.Deployment{{
			Name:        "Linear",
			NumReplicas: serveconfig.ReplicaCount(2),
			UserConfig:  map[string]any{"w": 3.0, "b": 2.0},
			// The replica actor only orchestrates its slice's hosts.
			RayActorOptions: &serve.RayActorOptions{NumCPUs: new(0.0)},
			// Each replica owns one whole v4 2x2x2 slice.
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"},
		}},
	}
	// [end:app]
	return app
}

// Run on the simulator places every replica's slice and runs nothing.
func Example_runOnSimulator() {
	app := newApp()
	// [snippet:run-sim]
	spec, _ := sim.ParseSpec("2*v4-16,cpu:1") // two v4 2x2x2 slices and a CPU head
	cluster, _ := sim.NewCluster(spec)
	st, err := app.Run(context.Background(), cluster, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Name, st.State, "ran:", st.Ran)
	for _, l := range st.Landings {
		fmt.Println(l.Part, "bundle", l.Bundle, "->", l.Node)
	}
	// [end:run-sim]

	// Output:
	// linear SIMULATED ran: false
	// deployment "Linear" replica 0 bundle 0 -> v4-16-0-w0
	// deployment "Linear" replica 0 bundle 1 -> v4-16-0-w1
	// deployment "Linear" replica 1 bundle 0 -> v4-16-1-w0
	// deployment "Linear" replica 1 bundle 1 -> v4-16-1-w1
}

// num_replicas is a count, "auto", or unset; autoscaling bounds the count.
func Example_replicas() {
	app := newApp()
	// [snippet:replicas]
	auto := serve.Deployment{
		Name:        "Linear",
		NumReplicas: serveconfig.AutoReplicas(), // Serve's "auto": 1 to 100
		AutoscalingConfig: &serveconfig.AutoscalingConfig{
			MinReplicas: new(1),
			MaxReplicas: 4,
		},
		AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"},
	}
	fmt.Println(auto.NumReplicas, auto.MaxReplicas())

	app.Deployments = []serve.Deployment{auto}
	plan, err := app.Compile()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("slice groups:", len(plan.Slices)) // one per replica it may grow to
	// [end:replicas]

	// Output:
	// auto 4
	// slice groups: 4
}

// A typo never reaches a cluster: every problem comes back at once at the
// path Serve's config file spells.
func Example_validation() {
	// [snippet:invalid]
	_, err := serve.Application{
		ImportPath: "linear:app",
		Deployments: []serve.Deployment{{
			Name:              "Linear",
			NumReplicas:       serveconfig.ReplicaCount(0), // not a way to say "auto"
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2"},
		}},
	}.Compile()
	fmt.Println(err) // a field.ErrorList: field.Errors(err) gives each *field.Error
	// [end:invalid]

	// Output:
	// 2 invalid fields:
	//   app.deployments[Linear].num_replicas: Invalid value: 0: must be at least 1: a count of 1 or more (serveconfig.ReplicaCount(n)), "auto" for Serve's autoscaling (serveconfig.AutoReplicas()), or unset for 1 replica
	//   app.deployments[Linear].accelerator_config.topology: Invalid value: "2x2": v4 is a 3D torus: want AxBxC, e.g. 2x2x2
}

// More replicas than the cluster has slices: on the simulator Run says so
// at once, where Ray would leave a replica DEPLOYING.
func Example_placementError() {
	app := newApp()
	// [snippet:no-fit]
	spec, _ := sim.ParseSpec("1*v4-16,cpu:1") // one slice for two replicas
	cluster, _ := sim.NewCluster(spec)
	st, err := app.Run(context.Background(), cluster, nil)
	var pe *backend.PlacementError
	if errors.As(err, &pe) {
		fmt.Println(errors.Is(err, backend.ErrPlacement), st.State)
		fmt.Println(pe.Diagnosis.Codes())
	}
	// [end:no-fit]

	// Output:
	// true SIMULATED
	// [HeadReservationFailed]
}

// runOnRay is compiled, not run: it needs a Ray cluster with Serve.
func runOnRay(ctx context.Context, app serve.Application) error {
	// [snippet:run-ray]
	rc, err := ray.NewClient("http://127.0.0.1:8265") // the dashboard
	if err != nil {
		return err
	}
	b, err := raybackend.New(rc)
	if err != nil {
		return err
	}
	st, err := app.Run(ctx, b, &backend.WaitOptions{
		StuckAfter: 3 * time.Minute, // diagnose a replica DEPLOYING this long
	})
	var se *backend.ServiceError
	if errors.As(err, &se) && errors.Is(err, backend.ErrPlacement) {
		// Stuck: a slice no node offers, a placement group that waits.
		fmt.Print(se.Status.Diagnosis)
		return err
	}
	if err != nil {
		return err // DEPLOY_FAILED or UNHEALTHY, with Ray's message
	}
	fmt.Println(st.State, len(st.Deployments))
	// [end:run-ray]
	return nil
}

// query is compiled, not run: it needs Serve's proxies.
func query(ctx context.Context) error {
	// [snippet:clients]
	// HTTP: JSON to the route prefix.
	h, err := client.NewHTTP("http://127.0.0.1:8000")
	if err != nil {
		return err
	}
	var out map[string]any
	if err := h.Post(ctx, "/linear", map[string]any{"x": []float64{1, 2, 3}}, &out); err != nil {
		return err // errors.Is: client.ErrNotFound, ErrUnavailable, ErrTimeout, ErrInternal
	}

	// gRPC: any generated stub; the connection routes to the application.
	conn, err := client.NewGRPC("127.0.0.1:9000", client.WithApplication("linear"))
	if err != nil {
		return err
	}
	defer conn.Close()
	x, err := servev1.Float32Tensor([]float32{1, 2, 3})
	if err != nil {
		return err
	}
	req := &servev1.PredictRequest{Inputs: map[string]*servev1.Tensor{"x": x}}
	resp, err := servev1.NewPredictorClient(conn).Predict(ctx, req)
	if err != nil {
		return err
	}
	y, err := resp.Outputs["y"].Float32s()
	// [end:clients]
	fmt.Println(out["y"], y)
	return err
}

// Serve LLM: one model on v6e 4x4 slices behind the OpenAI API.
func Example_llm() {
	// [snippet:llm]
	app := llm.OpenAIApp{
		Name: "chat",
		LLMConfigs: []llm.LLMConfig{{
			ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "gemma", ModelSource: "google/gemma-3-1b-it"},
			AcceleratorType:    "v6e",
			AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.TPU, Topology: "4x4"},
			EngineKwargs:       map[string]any{"tensor_parallel_size": 4},
			DeploymentConfig: llm.DeploymentConfig{
				AutoscalingConfig: &serveconfig.AutoscalingConfig{MinReplicas: new(1), MaxReplicas: 2},
			},
		}},
	}
	spec, _ := sim.ParseSpec("2*v6e-16,cpu:1")
	cluster, _ := sim.NewCluster(spec)
	st, err := app.Run(context.Background(), cluster, nil) // compiles, then places
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range st.Landings {
		if l.Bundle == 0 {
			fmt.Println(l.Part, "on", l.SliceName)
		}
	}
	// [end:llm]

	// Output:
	// deployment "LLMServer:gemma" replica 0 on v6e-16-0
	// deployment "LLMServer:gemma" replica 1 on v6e-16-1
}

// chat is compiled, not run: it needs a running Serve LLM application.
func chat(ctx context.Context) error {
	// [snippet:openai]
	c, err := client.NewOpenAI("http://127.0.0.1:8000")
	if err != nil {
		return err
	}
	resp, err := c.ChatCompletion(ctx, client.ChatCompletionRequest{
		Model:    "gemma",
		Messages: []client.ChatMessage{{Role: "user", Content: "Hello"}},
	})
	if err != nil {
		return err // an *client.OpenAIError for the API's error answers
	}
	fmt.Println(resp.Choices[0].Message.Content)
	// [end:openai]
	return nil
}

var _, _, _ = runOnRay, query, chat
