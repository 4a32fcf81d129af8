package llm_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/llm"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/sim"
)

// v4App serves one model whose replicas each reserve a v4 2x2x2 slice
// (two hosts of four chips), tensor-parallel over one host's chips: one
// bundle of TPU 4 per host.
func v4App(name string, replicas int) llm.OpenAIApp {
	return llm.OpenAIApp{
		Name: name, RoutePrefix: "/" + name,
		LLMConfigs: []llm.LLMConfig{{
			ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: name + "-model", ModelSource: "/models/tiny"},
			AcceleratorType:    "v4",
			AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.TPU, Topology: "2x2x2"},
			EngineKwargs:       map[string]any{"tensor_parallel_size": 4},
			DeploymentConfig:   llm.DeploymentConfig{NumReplicas: serveconfig.ReplicaCount(replicas)},
		}},
	}
}

// On the simulated twin of the test cluster, an LLM application's
// replicas each take one whole slice, different slices; a redeploy changes
// nothing; a model that finds no free slice of its topology is reported
// with the pending head reservation, in the words a generic deployment's
// replica gets (serve's TestRunOnTheSimulator); a delete frees the slices.
func TestRunOnTheSimulator(t *testing.T) {
	t.Parallel()
	spec, err := sim.ParseSpec("2*v4-16,v4-8,cpu:1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.NewCluster(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	st, err := v4App("chat", 2).Run(ctx, c, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if st.Ran || st.State != backend.ServiceSimulated || st.Name != "chat" {
		t.Errorf("status = %+v, want a SIMULATED status of chat that did not run", st)
	}
	slicesOf := map[int][]string{}
	for _, l := range st.Landings {
		if l.State != "CREATED" || l.Part.Role != placement.RoleReplica || l.Part.Name != "LLMServer:chat-model" {
			t.Errorf("landing %+v: want a CREATED bundle of a replica of LLMServer:chat-model", l)
		}
		if !slices.Contains(slicesOf[l.Part.Index], l.SliceName) {
			slicesOf[l.Part.Index] = append(slicesOf[l.Part.Index], l.SliceName)
		}
	}
	if len(slicesOf) != 2 || len(slicesOf[0]) != 1 || len(slicesOf[1]) != 1 || slicesOf[0][0] == slicesOf[1][0] {
		t.Errorf("replica -> slices = %v, want each replica on one slice, two different slices", slicesOf)
	}
	again, err := v4App("chat", 2).Deploy(ctx, c)
	if err != nil || len(again.Landings) != len(st.Landings) {
		t.Errorf("redeploy = %+v, %v; want the same %d landings", again, err, len(st.Landings))
	}

	_, err = v4App("more", 1).Run(ctx, c, nil)
	var pe *backend.PlacementError
	if !errors.As(err, &pe) || !slices.Contains(pe.Diagnosis.Codes(), placement.CodeHeadReservationFailed) {
		t.Fatalf("a third v4-16 replica: err = %v, want a PlacementError with %s", err, placement.CodeHeadReservationFailed)
	}
	// The same words as a generic deployment's replica without a slice.
	_, gerr := serve.Application{
		Name: "generic", RoutePrefix: "/generic", ImportPath: "chat.app:build",
		Deployments: []serve.Deployment{{Name: "LLMServer:more-model", NumReplicas: serveconfig.ReplicaCount(1),
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"}}},
	}.Run(ctx, c, nil)
	var gpe *backend.PlacementError
	if !errors.As(gerr, &gpe) {
		t.Fatalf("the generic twin: err = %v, want a PlacementError", gerr)
	}
	if got, want := pe.Diagnosis.String(), gpe.Diagnosis.String(); got != want {
		t.Errorf("diagnosis of the LLM replica:\n%s\nwant the generic deployment's:\n%s", got, want)
	}
	for _, name := range []string{"generic", "more", "chat"} {
		if err := serve.Delete(ctx, c, name); err != nil {
			t.Fatalf("Delete(%s): %v", name, err)
		}
	}
	if n := len(c.PlacementGroups()); n != 0 {
		t.Errorf("%d placement groups left after deleting every application", n)
	}
	if _, err := v4App("more", 2).Run(ctx, c, nil); err != nil {
		t.Errorf("after the deletes both slices are free again, but Run = %v", err)
	}
}

// Compile's errors come back before any request reaches the backend.
func TestDeployInvalidSendsNothing(t *testing.T) {
	t.Parallel()
	spec, _ := sim.ParseSpec("v4-16")
	c, err := sim.NewCluster(spec)
	if err != nil {
		t.Fatal(err)
	}
	bad := v4App("bad", 1)
	bad.LLMConfigs[0].AcceleratorConfig.Topology = "2x2x3"
	if _, err := bad.Run(t.Context(), c, nil); err == nil {
		t.Fatal("Run of a bad topology succeeded")
	}
	if n := len(c.PlacementGroups()); n != 0 {
		t.Errorf("%d placement groups after a refused Run, want none", n)
	}
	if _, err := (llm.OpenAIApp{}).Deploy(t.Context(), nil); err == nil {
		t.Error("Deploy on a nil backend succeeded")
	}
}

// Run on the simulator, then on a Ray cluster by changing the backend
// value only: a model on two v4 2x2x2 slices.
func ExampleOpenAIApp_Run() {
	spec, _ := sim.ParseSpec("2*v4-16,cpu:1")
	cluster, _ := sim.NewCluster(spec)
	var s backend.Server = cluster // or raybackend.New(client)

	st, err := v4App("chat", 2).Run(context.Background(), s, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.State, "ran:", st.Ran)
	for _, l := range st.Landings {
		fmt.Printf("%s bundle %d on %s\n", l.Part, l.Bundle, l.Node)
	}
	// Output:
	// SIMULATED ran: false
	// deployment "LLMServer:chat-model" replica 0 bundle 0 on v4-16-0-w0
	// deployment "LLMServer:chat-model" replica 0 bundle 1 on v4-16-0-w1
	// deployment "LLMServer:chat-model" replica 1 bundle 0 on v4-16-1-w0
	// deployment "LLMServer:chat-model" replica 1 bundle 1 on v4-16-1-w1
}
