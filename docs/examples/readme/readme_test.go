// Package readme_test holds the Go of the README: every block there is a
// region of this file, and TestDocSnippets (docs_test.go) keeps the two
// equal. The examples run on the simulated TPU cluster, the embedded
// default, and check their output.
package readme_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/llm"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// The quickstart: a JaxTrainer on two v6e 4x4 slices, fitted on a
// simulated cluster of two such slices.
func Example_quickstart() {
	// [snippet:quickstart]
	spec, err := sim.ParseSpec("2*v6e-16,cpu:1") // two v6e 4x4 slices and a CPU head
	if err != nil {
		fmt.Println(err)
		return
	}
	cluster, err := sim.NewCluster(spec) // or raybackend.New(client), kuberay.New(...)
	if err != nil {
		fmt.Println(err)
		return
	}
	trainer := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func", // module:function in the working dir
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x4", NumSlices: 2},
		RunConfig:          train.RunConfig{Name: "llama"},
	}
	res, err := trainer.Fit(context.Background(), cluster, nil)
	if err != nil {
		fmt.Println(err) // a field.ErrorList, a *backend.PlacementError, ...
		return
	}
	fmt.Println("simulated:", res.Simulated, "workers:", len(res.Workers))
	// [end:quickstart]

	// Output:
	// simulated: true workers: 8
}

// An invalid trainer never reaches a cluster: Compile (and Fit, which
// compiles first) reports every problem at once, each at its field path.
func Example_trainInvalid() {
	// [snippet:train-invalid]
	_, err := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x5"},
	}.Compile()
	for _, e := range field.Errors(err) {
		fmt.Printf("%s: %s (did you mean %q?)\n", e.Field, e.Type, e.Suggestion)
	}
	// [end:train-invalid]

	// Output:
	// trainer.scaling_config.topology: NotSupported (did you mean "4x4"?)
	// trainer.run_config.name: Required (did you mean ""?)
}

// llamaTrainer stands for the workload a platform team tests: a
// constructor in its own code.
func llamaTrainer(slices int) train.JaxTrainer {
	return train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x4", NumSlices: slices},
		RunConfig:          train.RunConfig{Name: "llama"},
	}
}

// [snippet:fits-test]
func TestTrainerFitsProductionCluster(t *testing.T) {
	spec, err := sim.ParseSpec("2*v6e-16,cpu:1") // what production has
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := sim.NewCluster(spec)
	if err != nil {
		t.Fatal(err)
	}
	_, err = llamaTrainer(2).Fit(t.Context(), cluster, nil) // the workload under test
	if errors.Is(err, backend.ErrPlacement) {
		t.Fatalf("does not fit: %v", err) // the diagnosis: which slice could not be reserved, and why
	}
	if err != nil {
		t.Fatal(err) // an invalid trainer: every field error at once
	}
}

// [end:fits-test]

// A workload that does not fit fails the test above: three slices on two.
// Fit says so with a *backend.PlacementError whose diagnosis names the
// slice head that cannot be reserved.
func TestTrainerDoesNotFit(t *testing.T) {
	t.Parallel()
	spec, err := sim.ParseSpec("2*v6e-16,cpu:1")
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := sim.NewCluster(spec)
	if err != nil {
		t.Fatal(err)
	}
	_, err = llamaTrainer(3).Fit(t.Context(), cluster, nil)
	var pe *backend.PlacementError
	if !errors.Is(err, backend.ErrPlacement) || !errors.As(err, &pe) {
		t.Fatalf("three slices on two: err = %v, want a *backend.PlacementError", err)
	}
	if !slices.Contains(pe.Diagnosis.Codes(), "HeadReservationFailed") {
		t.Errorf("diagnosis %v, want the slice head that cannot be reserved", pe.Diagnosis)
	}
}

// A Serve application whose replicas each own a v6e 2x4 slice, run on the
// simulator: Run places every replica's slice and says where.
func Example_serve() {
	// [snippet:serve]
	spec, _ := sim.ParseSpec("2*v6e-8,cpu:4") // two v6e 2x4 slices and a CPU node
	cluster, _ := sim.NewCluster(spec)
	app := serve.Application{
		Name: "chat", RoutePrefix: "/chat", ImportPath: "chat.app:build", // your Serve app, as in a config file
		Deployments: []serve.Deployment{{
			Name:              "LLM",
			NumReplicas:       serveconfig.ReplicaCount(2),
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v6e", Topology: "2x4"}, // a whole slice per replica
		}},
	}
	st, err := app.Run(context.Background(), cluster, nil) // serve.run(app)
	if err != nil {
		fmt.Println(err) // every invalid field, or a *backend.PlacementError naming the replica that cannot start
		return
	}
	for _, l := range st.Landings {
		fmt.Printf("%s on %s\n", l.Part, l.Node)
	}
	// [end:serve]

	// Output:
	// deployment "LLM" replica 0 on v6e-8-0-w0
	// deployment "LLM" replica 1 on v6e-8-1-w0
}

// chatApp is the Serve application of the README's Serve section.
func chatApp() serve.Application {
	return serve.Application{
		Name: "chat", RoutePrefix: "/chat", ImportPath: "chat.app:build",
		Deployments: []serve.Deployment{{
			Name:              "LLM",
			NumReplicas:       serveconfig.ReplicaCount(2),
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v6e", Topology: "2x4"},
		}},
	}
}

// Serve LLM: one model whose every replica reserves a whole v6e 4x4
// slice, as Ray Serve LLM's deferred slice placement group does.
func Example_llm() {
	spec, _ := sim.ParseSpec("v6e-16,cpu:4")
	cluster, _ := sim.NewCluster(spec)
	// [snippet:llm]
	app := llm.OpenAIApp{ // build_openai_app({"llm_configs": [...]})
		Name: "chat",
		LLMConfigs: []llm.LLMConfig{{
			ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "gemma", ModelSource: "google/gemma-3-1b-it"},
			AcceleratorType:    "v6e",
			AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.TPU, Topology: "4x4"},
			EngineKwargs:       map[string]any{"tensor_parallel_size": 4},
		}},
	}
	st, err := app.Run(context.Background(), cluster, nil) // serve.run(build_openai_app(...))
	// [end:llm]
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.State, len(st.Landings), "bundles placed")

	// Output:
	// SIMULATED 4 bundles placed
}

// Data: a dataset a JaxTrainer's workers iterate with iter_jax_batches,
// and Predict's account of every host's last batch before launch.
func Example_data() {
	// [snippet:data]
	pr, errs := data.Predict(field.NewPath("iter"), data.From(data.Range{N: 1000}),
		data.IterJaxBatches{BatchSize: 64, Ragged: data.Pad{Value: -1}},
		data.Hosts{Workers: 3, Accelerator: "v4"})
	if errs != nil {
		fmt.Println(errs) // e.g. a Raise certain to fail at the end of the first epoch
		return
	}
	fmt.Printf("per host: %+v\n", pr.Groups[0].Batches.Runs)
	for _, f := range pr.Findings {
		fmt.Println(f.Code)
	}
	// [end:data]

	// Output:
	// per host: [{Batches:5 Rows:64 Pad:0} {Batches:1 Rows:13 Pad:51}]
	// SplitDropsRows
	// PadRows
}

// KubeRay from Go: the Serve application above rendered as the RayService
// kubectl applies, without a cluster.
func Example_kuberay() {
	app := chatApp()
	var out io.Writer = io.Discard // in a program: os.Stdout, or a file
	plan, err := app.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	// [snippet:kuberay]
	m, err := kuberay.Render(plan, kuberay.Options{Namespace: "ml"}, kuberay.RenderInput{})
	if err != nil {
		fmt.Println(err) // every problem KubeRay, its CRD or GKE's TPU webhook would refuse
		return
	}
	manifests, err := m.YAML() // the ConfigMaps, then the RayService: what `kubectl apply -f` takes
	if err != nil {
		fmt.Println(err)
		return
	}
	out.Write(manifests) // out: os.Stdout or a file; m.Service and m.ConfigMaps are the typed objects
	// [end:kuberay]

	for _, g := range m.Service.Spec.RayClusterSpec.WorkerGroupSpecs {
		fmt.Println(*g.GroupName, *g.NumOfHosts, g.Template.Spec.NodeSelector)
	}

	// Output:
	// v6e-8-0 1 map[cloud.google.com/gke-tpu-accelerator:tpu-v6e-slice cloud.google.com/gke-tpu-topology:2x4]
	// v6e-8-1 1 map[cloud.google.com/gke-tpu-accelerator:tpu-v6e-slice cloud.google.com/gke-tpu-topology:2x4]
}

// planPicture is the README's picture: where two v6e 4x4 slices land on
// the cluster `raytpu plan --accelerator v6e --topology 4x4 --num-slices 2`
// simulates by default (the plan's slices, one spare, a CPU node), as
// `raytpu plan ... -o svg` draws it.
const planPicture = "../../plan.svg"

// TestPlanPicture keeps docs/plan.svg what the simulator draws;
// UPDATE_GOLDEN=1 rewrites it.
func TestPlanPicture(t *testing.T) {
	t.Parallel()
	g, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", NumSlices: 2}.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := sim.ParseSpec("3*v6e-16,cpu:1")
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := sim.NewCluster(spec)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := cluster.PlaceSlices(g)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := sim.RenderSVG(&got, cluster, sp); err != nil {
		t.Fatal(err)
	}
	if golden.Updating() {
		if err := os.WriteFile(planPicture, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(planPicture)
	if err != nil {
		t.Fatalf("%v (UPDATE_GOLDEN=1 go test ./docs/examples/readme writes it)", err)
	}
	if !bytes.Equal(want, got.Bytes()) {
		t.Errorf("docs/plan.svg is not what the simulator draws; UPDATE_GOLDEN=1 go test ./docs/examples/readme rewrites it")
	}
}
