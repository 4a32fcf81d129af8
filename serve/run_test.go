package serve_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/sim"
)

func llmApp(name string, replicas int) serve.Application {
	return serve.Application{
		Name:        name,
		RoutePrefix: "/" + name,
		ImportPath:  "chat.app:build",
		Deployments: []serve.Deployment{{
			Name:              "LLM",
			NumReplicas:       serveconfig.ReplicaCount(replicas),
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"},
		}},
	}
}

func simCluster(t *testing.T, spec string) *sim.Cluster {
	t.Helper()
	s, err := sim.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.NewCluster(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sliceOf maps each replica to the slices its bundles landed on.
func sliceOf(ls []placement.Landing) map[int][]string {
	out := map[int][]string{}
	for _, l := range ls {
		if !slices.Contains(out[l.Part.Index], l.SliceName) {
			out[l.Part.Index] = append(out[l.Part.Index], l.SliceName)
		}
	}
	return out
}

// On the simulated twin of the test cluster, two replicas with a v4
// 2x2x2 topology each hold one whole slice, different slices; a redeploy
// changes nothing; a third replica finds no free slice and says so; a
// delete frees the slices for another application.
func TestRunOnTheSimulator(t *testing.T) {
	t.Parallel()
	c := simCluster(t, "2*v4-16,v4-8,cpu:1")
	ctx := t.Context()

	st, err := llmApp("chat", 2).Run(ctx, c, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if st.Ran || st.State != backend.ServiceSimulated || st.Name != "chat" {
		t.Errorf("status = %+v, want a SIMULATED status of chat that did not run", st)
	}
	bySlice := sliceOf(st.Landings)
	if len(bySlice) != 2 || len(bySlice[0]) != 1 || len(bySlice[1]) != 1 || bySlice[0][0] == bySlice[1][0] {
		t.Errorf("replica -> slices = %v, want each replica on one slice, two different slices", bySlice)
	}
	for _, l := range st.Landings {
		if l.State != "CREATED" || l.Part.Role != placement.RoleReplica || l.Part.Name != "LLM" {
			t.Errorf("landing %+v: want a CREATED bundle of a replica of LLM", l)
		}
	}

	again, err := llmApp("chat", 2).Deploy(ctx, c)
	if err != nil || fmt.Sprint(sliceOf(again.Landings)) != fmt.Sprint(bySlice) {
		t.Errorf("redeploy = %v, %v; want the same placement %v", again, err, bySlice)
	}

	_, err = llmApp("more", 1).Run(ctx, c, nil)
	var pe *backend.PlacementError
	if !errors.As(err, &pe) || !slices.Contains(pe.Diagnosis.Codes(), placement.CodeHeadReservationFailed) {
		t.Fatalf("a third v4-16 replica: err = %v, want a PlacementError with %s", err, placement.CodeHeadReservationFailed)
	}
	if err := serve.Delete(ctx, c, "more"); err != nil {
		t.Fatalf("Delete(more): %v", err)
	}
	if err := serve.Delete(ctx, c, "chat"); err != nil {
		t.Fatalf("Delete(chat): %v", err)
	}
	if _, err := c.Status(ctx, "chat"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Status after Delete = %v, want backend.ErrNotFound", err)
	}
	if err := serve.Delete(ctx, c, "chat"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("second Delete = %v, want backend.ErrNotFound", err)
	}
	if n := len(c.PlacementGroups()); n != 0 {
		t.Errorf("%d placement groups left after deleting every application", n)
	}
	if _, err := llmApp("chat", 2).Run(ctx, c, nil); err != nil {
		t.Errorf("after the deletes both slices are free again, but Run = %v", err)
	}
}

// Run on the simulator, then on a Ray cluster by changing the backend
// value only.
func ExampleApplication_Run() {
	spec, _ := sim.ParseSpec("2*v4-16,cpu:1")
	cluster, _ := sim.NewCluster(spec)
	var s backend.Server = cluster // or raybackend.New(client)

	st, err := llmApp("chat", 2).Run(context.Background(), s, nil)
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
	// deployment "LLM" replica 0 bundle 0 on v4-16-0-w0
	// deployment "LLM" replica 0 bundle 1 on v4-16-0-w1
	// deployment "LLM" replica 1 bundle 0 on v4-16-1-w0
	// deployment "LLM" replica 1 bundle 1 on v4-16-1-w1
}
