package raybackend_test

import (
	"errors"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/replica"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/serve"
)

// The replica runtime reads the key and version package serve writes.
func TestReservationFormatMatchesServe(t *testing.T) {
	t.Parallel()
	if replica.ReservationKey != serve.SliceReservationKey || replica.ReservationVersion != serve.SliceReservationVersion {
		t.Errorf("runtime reads %s v%d, serve writes %s v%d", replica.ReservationKey, replica.ReservationVersion, serve.SliceReservationKey, serve.SliceReservationVersion)
	}
}

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
	client, err := ray.NewClient("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	b := raybackend.New(client)
	v4 := &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"}

	// One chip per bundle: 8 bundles for 2 hosts.
	perChip := compileSliceApp(t, serve.Deployment{Name: "d", NumReplicas: 1, AcceleratorConfig: v4,
		PlacementGroupBundles: []map[string]float64{{"TPU": 1}}})
	newer := compileSliceApp(t, serve.Deployment{Name: "d", NumReplicas: 1, AcceleratorConfig: v4})
	newer.Serve.Config.Deployments[0].Reservation.Version = 2
	noGroups := compileSliceApp(t, serve.Deployment{Name: "d", NumReplicas: 1, AcceleratorConfig: v4})
	noGroups.Slices = nil
	strayGroup := compileSliceApp(t, serve.Deployment{Name: "d", NumReplicas: 1})
	strayGroup.Slices = compileSliceApp(t, serve.Deployment{Name: "d", NumReplicas: 1, AcceleratorConfig: v4}).Slices
	cases := []struct {
		name string
		plan *placement.Plan
		want error
	}{
		{"nil plan", nil, backend.ErrUnsupported},
		{"a bundle per chip", perChip, ray.ErrInvalid},
		{"a newer reservation format", newer, ray.ErrInvalid},
		{"a reservation without slice groups", noGroups, ray.ErrInvalid},
		{"a slice group without a reservation", strayGroup, ray.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st, err := b.Deploy(t.Context(), c.plan)
			if !errors.Is(err, c.want) || st != nil {
				t.Errorf("Deploy = %v, %v; want no status and an error matching %v", st, err, c.want)
			}
			t.Log(err)
		})
	}
}
