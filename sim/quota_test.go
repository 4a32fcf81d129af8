package sim_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

// quotaPlan is a slice plan of n slices of one shape, of capacity c.
func quotaPlan(t testing.TB, accel, topo string, n int, c placement.Capacity) *placement.Plan {
	t.Helper()
	g, err := placement.SliceSpec{Accelerator: accel, Topology: topo, NumSlices: n}.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := placement.NewSlicePlan("train", g)
	p.Capacity = c
	return p
}

// A v4 2x2x2 slice is 2 hosts of 4 chips: 8 google.com/tpu. The whole
// plan is admitted at once or not at all, as Kueue admits a Workload.
func TestFitQuota(t *testing.T) {
	t.Parallel()
	spot := placement.Capacity{Class: placement.CapacitySpot}
	for _, c := range []struct {
		name  string
		plan  *placement.Plan
		quota sim.Quota
		want  sim.QuotaFit
		line  string
	}{
		{"one slice, quota of one", quotaPlan(t, "v4", "2x2x2", 1, placement.Capacity{}), sim.Quota{TPU: 8},
			sim.QuotaFit{Resource: "google.com/tpu", Class: placement.CapacityOnDemand, Needs: 8, Quota: 8, Fits: true},
			"fits quota: needs 8 google.com/tpu of 8"},
		{"two slices, quota of one", quotaPlan(t, "v4", "2x2x2", 2, placement.Capacity{}), sim.Quota{TPU: 8},
			sim.QuotaFit{Resource: "google.com/tpu", Class: placement.CapacityOnDemand, Needs: 16, Quota: 8},
			"does not fit quota: needs 16 google.com/tpu, quota 8"},
		{"single host v6e 2x4", quotaPlan(t, "v6e", "2x4", 1, spot), sim.Quota{TPU: 8, Class: placement.CapacitySpot},
			sim.QuotaFit{Resource: "google.com/tpu", Class: placement.CapacitySpot, Needs: 8, Quota: 8, Fits: true, QuotaClass: placement.CapacitySpot},
			"fits quota: needs 8 google.com/tpu of 8 spot"},
		{"quota of another class", quotaPlan(t, "v6e", "4x4", 1, placement.Capacity{}), sim.Quota{TPU: 64, Class: placement.CapacitySpot},
			sim.QuotaFit{Resource: "google.com/tpu", Class: placement.CapacityOnDemand, Needs: 16, QuotaClass: placement.CapacitySpot},
			"does not fit quota: needs 16 google.com/tpu of on-demand capacity, quota is for spot capacity only"},
		{"empty quota", quotaPlan(t, "v5e", "4x8", 3, placement.Capacity{}), sim.Quota{},
			sim.QuotaFit{Resource: "google.com/tpu", Class: placement.CapacityOnDemand, Needs: 96},
			"does not fit quota: needs 96 google.com/tpu, quota 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := sim.FitQuota(c.plan, c.quota)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("FitQuota = %+v, want %+v", got, c.want)
			}
			if got.String() != c.line {
				t.Errorf("String() = %q, want %q", got.String(), c.line)
			}
		})
	}
}

func TestFitQuotaRefusals(t *testing.T) {
	t.Parallel()
	if _, err := sim.FitQuota(nil, sim.Quota{TPU: 8}); err == nil {
		t.Error("FitQuota(nil plan): no error")
	}
	p := quotaPlan(t, "v4", "2x2x2", 1, placement.Capacity{})
	_, err := sim.FitQuota(p, sim.Quota{TPU: -1, Class: "sopt"})
	var got []string
	for _, e := range field.Errors(err) {
		got = append(got, e.Field+" "+string(e.Type))
	}
	if want := []string{"quota.tpu Invalid", "quota.class NotSupported"}; !slices.Equal(got, want) {
		t.Errorf("errors %v (%v), want %v", got, err, want)
	}
}

func ExampleFitQuota() {
	// Two v4 2x2x2 slices (2 hosts of 4 chips each) on Spot capacity.
	g, err := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2", NumSlices: 2}.Compile(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := placement.NewSlicePlan("train", g)
	p.Capacity = placement.Capacity{Class: placement.CapacitySpot}
	for _, q := range []sim.Quota{{TPU: 8}, {TPU: 16}, {TPU: 32, Class: placement.CapacityReservation}} {
		fit, err := sim.FitQuota(p, q)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(fit)
	}
	// Output:
	// does not fit quota: needs 16 google.com/tpu, quota 8
	// fits quota: needs 16 google.com/tpu of 16
	// does not fit quota: needs 16 google.com/tpu of spot capacity, quota is for reservation capacity only
}
