package raybackend_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/llm"
	"github.com/raytpu/raytpu/serveconfig"
)

func compileSliceApp(t *testing.T, d serve.Deployment) *placement.Plan {
	t.Helper()
	p, err := serve.Application{Name: "a", ImportPath: "m:app", Deployments: []serve.Deployment{d}}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Slice plans the replica runtime cannot run are refused before anything
// is sent: the client points at a port where nothing listens, so a request
// would fail with a connection error instead of these typed refusals.
func TestDeployRefusesBadSlicePlans(t *testing.T) {
	t.Parallel()
	b := unreachable(t)
	v4 := &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"}

	// One chip per bundle: 8 bundles for 2 hosts.
	perChip := compileSliceApp(t, serve.Deployment{Name: "d", NumReplicas: serveconfig.ReplicaCount(1), AcceleratorConfig: v4,
		PlacementGroupBundles: []map[string]float64{{"TPU": 1}}})
	newer := compileSliceApp(t, serve.Deployment{Name: "d", NumReplicas: serveconfig.ReplicaCount(1), AcceleratorConfig: v4})
	newer.Serve.Config.Deployments[0].Reservation.Version = 2
	noGroups := compileSliceApp(t, serve.Deployment{Name: "d", NumReplicas: serveconfig.ReplicaCount(1), AcceleratorConfig: v4})
	noGroups.Slices = nil
	strayGroup := compileSliceApp(t, serve.Deployment{Name: "d", NumReplicas: serveconfig.ReplicaCount(1)})
	strayGroup.Slices = compileSliceApp(t, serve.Deployment{Name: "d", NumReplicas: serveconfig.ReplicaCount(1), AcceleratorConfig: v4}).Slices
	d := "plan.serve.config.deployments[d].user_config." + rayruntime.ReservationKey
	cases := []struct {
		name string
		plan *placement.Plan
		want []error
		// fields are the field errors of the refusal.
		fields []field.Ref
	}{
		{"nil plan", nil, []error{backend.ErrInvalidPlan}, []field.Ref{{Field: "plan", Type: field.TypeRequired}}},
		{"a bundle per chip", perChip, []error{backend.ErrInvalidPlan, ray.ErrInvalid}, []field.Ref{{Field: d + ".num_bundles", Type: field.TypeInvalid}}},
		{"a newer reservation format", newer, []error{backend.ErrInvalidPlan, ray.ErrInvalid}, []field.Ref{{Field: d + ".version", Type: field.TypeInvalid}}},
		{"a reservation without slice groups", noGroups, []error{backend.ErrInvalidPlan, ray.ErrInvalid}, []field.Ref{{Field: "plan.slices", Type: field.TypeRequired}}},
		{"a slice group without a reservation", strayGroup, []error{backend.ErrInvalidPlan, ray.ErrInvalid}, []field.Ref{{Field: "plan.slices[0].part", Type: field.TypeInvalid}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st, err := b.Deploy(t.Context(), c.plan)
			for _, want := range c.want {
				if !errors.Is(err, want) || st != nil {
					t.Errorf("Deploy = %v, %v; want no status and an error matching %v", st, err, want)
				}
			}
			var got []field.Ref
			for _, e := range field.Errors(err) {
				got = append(got, field.Ref{Field: e.Field, Type: e.Type})
			}
			if diff := cmp.Diff(c.fields, got); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
			t.Log(err)
		})
	}
}

// A Serve LLM application's replicas reserve their slices themselves (Serve
// LLM's deferred slice placement group): its slice groups carry no raytpu
// reservation and are not refused. Deploy gets as far as the dashboard,
// where nothing listens.
func TestDeployLeavesServeLLMSlicesToServeLLM(t *testing.T) {
	t.Parallel()
	b := unreachable(t)
	p, err := llm.OpenAIApp{Name: "chat", LLMConfigs: []llm.LLMConfig{{
		ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "tiny", ModelSource: "/models/tiny"},
		AcceleratorType:    "v4",
		AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.TPU, Topology: "2x2x2"},
	}}}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Slices) != 1 {
		t.Fatalf("the LLM plan has %d slice groups, want 1", len(p.Slices))
	}
	st, err := b.Deploy(t.Context(), p)
	if err == nil || errors.Is(err, backend.ErrInvalidPlan) || len(field.Errors(err)) > 0 {
		t.Fatalf("Deploy = %v, %v; want the dashboard's connection error, not a refusal", st, err)
	}
	var ue *url.Error
	if !errors.As(err, &ue) && !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Deploy error = %v; want the unreachable dashboard's", err)
	}
}
