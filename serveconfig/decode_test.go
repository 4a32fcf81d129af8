package serveconfig_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

func ptr[T any](v T) *T { return &v }

// sliceApp is a config with every kind of value the encoder writes: a
// reservation and a profiler beside the user's own keys, numbers past
// float64's exact range, a route of null.
func sliceApp() serveconfig.Application {
	return serveconfig.Application{
		Name:        "chat",
		RoutePrefix: json.RawMessage("null"),
		ImportPath:  "chat.app:build",
		RuntimeEnv:  &runtimeenv.RuntimeEnv{WorkingDir: "gs://b/code.zip", EnvVars: map[string]string{"A": "<&>"}},
		Args:        map[string]any{"model": "gemma", "big": 12345678901234567, "f": 0.1, "l": []any{true, nil, "x"}},
		Deployments: []serveconfig.Deployment{
			{
				Name:              "Router",
				NumReplicas:       serveconfig.AutoReplicas(),
				AutoscalingConfig: &serveconfig.AutoscalingConfig{MinReplicas: ptr(0), MaxReplicas: 4, UpscaleDelayS: ptr(0.0)},
				RayActorOptions:   &serveconfig.ActorOptions{NumCPUs: ptr(0.0), LabelSelector: map[string]string{"zone": "in(a,b)"}},
				UserConfig:        map[string]any{ProfilerKeyAlone: "a user's key without a reservation"},
			},
			{
				Name:        "LLM",
				NumReplicas: serveconfig.ReplicaCount(2), MaxQueuedRequests: serveconfig.NoQueueLimit(),
				UserConfig: map[string]any{"temperature": 0.7, "stop": []any{"\n"}},
				Reservation: &serveconfig.SliceReservation{
					Version: 1, Topology: "2x2x2", AcceleratorVersion: "v4", AcceleratorType: "TPU-V4", PodType: "v4-16",
					NumHosts: 2, ChipsPerHost: 4, NumBundles: 2, ResourcesPerBundle: map[string]float64{"TPU": 4, "CPU": 1},
					Strategy: "PACK", HeadReservationTimeoutS: 100,
				},
				Profiler: &serveconfig.ProfilerConfig{Port: 9012},
			},
		},
	}
}

// ProfilerKeyAlone is the profiler's key in a deployment without a
// reservation: a key of the user's like any other.
const ProfilerKeyAlone = serveconfig.ProfilerKey

// A config marshals, unmarshals and marshals to the same bytes, and its
// reservation and profiler come back out of user_config typed.
func TestApplicationRoundTrip(t *testing.T) {
	t.Parallel()
	a := sliceApp()
	first, err := a.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back serveconfig.Application
	if err := json.Unmarshal(first, &back); err != nil {
		t.Fatal(err)
	}
	second, err := back.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(second) {
		t.Fatalf("round trip changed the bytes:\n%s\n%s", first, second)
	}
	llm := back.Deployment("LLM")
	if llm == nil {
		t.Fatal("no deployment LLM")
	}
	if diff := cmp.Diff(a.Deployments[1].Reservation, llm.Reservation); diff != "" {
		t.Errorf("reservation (-sent +read):\n%s", diff)
	}
	if diff := cmp.Diff(a.Deployments[1].Profiler, llm.Profiler); diff != "" {
		t.Errorf("profiler (-sent +read):\n%s", diff)
	}
	if _, ok := llm.UserConfig[serveconfig.SliceReservationKey]; ok {
		t.Errorf("user_config kept the reservation: %v", llm.UserConfig)
	}
	if want := (map[string]any{"temperature": json.Number("0.7"), "stop": []any{"\n"}}); !cmp.Equal(want, llm.UserConfig) {
		t.Errorf("user_config %v, want %v", llm.UserConfig, want)
	}
	if r := back.Deployment("Router"); r.Profiler != nil || r.UserConfig[serveconfig.ProfilerKey] == nil {
		t.Errorf("without a reservation the profiler key is the user's: profiler %v, user_config %v", r.Profiler, r.UserConfig)
	}
	if got := back.Args["big"]; got != json.Number("12345678901234567") {
		t.Errorf("args.big = %#v, want the exact number", got)
	}
	if string(back.RoutePrefix) != "null" {
		t.Errorf("route_prefix = %s, want null", back.RoutePrefix)
	}
}

// A plan file's Serve config is read strictly: an unknown key, at the
// application or a deployment, is an error with its path.
func TestFileShapeIsStrict(t *testing.T) {
	t.Parallel()
	raw, err := sliceApp().MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var ok serveconfig.Application
	if errs := fieldfile.Decode(raw, field.NewPath("config"), &ok); len(errs) > 0 {
		t.Fatalf("the config itself: %v", errs)
	}
	for _, c := range []struct{ in, path string }{
		{strings.Replace(string(raw), `"import_path"`, `"import_pth"`, 1), "config.import_pth"},
		{strings.Replace(string(raw), `"num_replicas":2`, `"num_replica":2`, 1), "config.deployments[1].num_replica"},
	} {
		var a serveconfig.Application
		errs := fieldfile.Decode([]byte(c.in), field.NewPath("config"), &a)
		if len(errs) != 1 || errs[0].Field != c.path || errs[0].Type != field.TypeNotSupported {
			t.Errorf("%s: errors %v, want one NotSupported at %s", c.path, errs, c.path)
		}
	}
}
