package sim_test

import (
	"fmt"
	"testing"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

// fleet is a spec of n hosts in n/10 slices: n/20 v6e-16 slices (4 hosts
// each) and n/20 v6e-64 slices (16 hosts each).
func fleet(n int) string {
	k := n / 20
	return fmt.Sprintf("%d*v6e-16,%d*v6e-64", k, k)
}

var fleetSizes = []struct {
	name  string
	hosts int
}{{"1k", 1_000}, {"10k", 10_000}, {"100k", 100_000}}

func BenchmarkNewCluster(b *testing.B) {
	for _, size := range fleetSizes {
		b.Run("hosts="+size.name, func(b *testing.B) {
			spec, err := sim.ParseSpec(fleet(size.hosts))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				c, err := sim.NewCluster(spec)
				if err != nil || c.NumHosts() != size.hosts {
					b.Fatal(err)
				}
			}
		})
	}
}

// busyFleet returns a cluster with the first half of its v6e-16 slices
// taken, so that a new v6e 4x4 reservation has to find a free one deep in
// host order.
func busyFleet(b *testing.B, hosts int) *sim.Cluster {
	c := newCluster(b, fleet(hosts))
	g := compile(b, placement.SliceSpec{Topology: "4x4", Accelerator: "v6e"})
	for range hosts / 40 {
		sp, err := c.PlaceSlices(g)
		if err != nil || sp.Bundles[0].State != sim.StateCreated {
			b.Fatalf("filling the fleet: %v", err)
		}
	}
	return c
}

func BenchmarkPlaceSlices(b *testing.B) {
	for _, size := range fleetSizes {
		b.Run("hosts="+size.name, func(b *testing.B) {
			c := busyFleet(b, size.hosts)
			g := compile(b, placement.SliceSpec{Topology: "4x4", Accelerator: "v6e"})
			want := fmt.Sprintf("v6e-16-%d", size.hosts/40)
			b.ReportAllocs()
			for b.Loop() {
				sp, err := c.PlaceSlices(g)
				if err != nil || sp.Heads[0].SliceName != want || sp.Bundles[3].State != sim.StateCreated {
					b.Fatalf("placed on %s: %v", sp.Heads[0].SliceName, err)
				}
				if err := c.Release(sp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPlaceBundles(b *testing.B) {
	req := sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(16, map[string]float64{"TPU": 1})}
	for _, size := range fleetSizes {
		b.Run("hosts="+size.name, func(b *testing.B) {
			c := busyFleet(b, size.hosts)
			b.ReportAllocs()
			for b.Loop() {
				sp, err := c.PlaceBundles(req)
				if err != nil || sp.Bundles[15].State != sim.StateCreated {
					b.Fatal(err)
				}
				if err := c.Release(sp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
