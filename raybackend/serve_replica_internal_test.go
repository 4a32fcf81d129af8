package raybackend

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/serve/llm"
	"github.com/raytpu/raytpu/serveconfig"
)

// The diagnosis reads the reservations back from the config Ray echoes,
// which is the config Deploy sent.
func TestAppReservationsReadsTheSentConfig(t *testing.T) {
	t.Parallel()
	res := &serveconfig.SliceReservation{Version: 1, Topology: "2x2x2", AcceleratorVersion: "v4", PodType: "v4-16",
		ResourcesPerBundle: map[string]float64{"TPU": 4}, Strategy: "PACK", HeadReservationTimeoutS: 100}
	app := serveconfig.Application{Name: "a", ImportPath: "m:app", Deployments: []serveconfig.Deployment{
		{Name: "LLM", Reservation: res, UserConfig: map[string]any{"k": "v"}},
		{Name: "Router"},
	}}
	raw, err := app.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	got := appReservations(raw)
	if diff := cmp.Diff(map[string]sliceReservation{"LLM": {reservation: *res}}, got, cmp.AllowUnexported(sliceReservation{})); diff != "" {
		t.Errorf("reservations (-want +got):\n%s", diff)
	}
	if n := len(appReservations([]byte(`{"deployments": "not a list"}`))); n != 0 {
		t.Errorf("%d reservations from a config that is not Serve's", n)
	}
}

// A Serve LLM application's models reserve their slices through Serve
// LLM's own code: the diagnosis reads, from the args Ray echoes, the slice
// each model's replicas reserve, by the deployment Serve LLM names, as
// serve/llm's plan holds it; a model without a topology reserves none.
func TestAppReservationsOfAServeLLMApplication(t *testing.T) {
	t.Parallel()
	app := llm.OpenAIApp{Name: "chat", LLMConfigs: []llm.LLMConfig{
		{
			ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "org/gemma-3.1b", ModelSource: "/models/gemma"},
			AcceleratorType:    "v4",
			AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.TPU, Topology: "2x2x2"},
			EngineKwargs:       map[string]any{"tensor_parallel_size": 4},
			DeploymentConfig:   llm.DeploymentConfig{NumReplicas: serveconfig.ReplicaCount(1)},
		},
		{
			ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "small", ModelSource: "/models/small"},
			AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.CPU},
			DeploymentConfig:   llm.DeploymentConfig{Name: "cpu-model"},
		},
	}}
	plan, err := app.Compile()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := plan.Serve.Config.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	got := appReservations(raw)
	if len(plan.Slices) != 1 {
		t.Fatalf("plan has %d slice groups, want 1", len(plan.Slices))
	}
	g := plan.Slices[0]
	want := map[string]sliceReservation{g.Part.Name: {llm: true, reservation: reservation{
		Topology: g.Topology, AcceleratorVersion: g.AcceleratorVersion, AcceleratorType: g.AcceleratorType,
		PodType: g.PodType, NumHosts: g.HostsPerSlice, ChipsPerHost: g.ChipsPerHost,
	}}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(sliceReservation{})); diff != "" {
		t.Errorf("reservations (-want +got):\n%s", diff)
	}
	if r := got["LLMServer:org--gemma-3_1b"]; r.PodType != "v4-16" || r.sliceName("chat", "LLMServer:org--gemma-3_1b", "r1") != "Serve LLM replica r1" {
		t.Errorf("LLMServer:org--gemma-3_1b reserves %+v, want the v4-16 slice of a Serve LLM replica", r)
	}
}
