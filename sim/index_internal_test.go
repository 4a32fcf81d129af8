package sim

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
)

// TestIndexedSearchMatchesScan drives two clusters with the same random
// operations, one searching through its class index and one scoring every
// host, and requires identical placements, states and reasons throughout.
func TestIndexedSearchMatchesScan(t *testing.T) {
	t.Parallel()
	specs := []string{
		"2*v6e-16,v6e-8,v6e-8@4,v4-16,cpu:2{cpu=2}",
		"3*v6e-16,2*v5litepod-4,v6e-32,cpu:1",
		"v7x-16,v5p-16,2*v6e-16{cpu=4},cpu:3{cpu=1}",
	}
	for seed := range 16 {
		spec := specs[seed%len(specs)]
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			s, err := ParseSpec(spec)
			if err != nil {
				t.Fatal(err)
			}
			indexed, _ := NewCluster(s)
			scan, _ := NewCluster(s)
			scan.scan = true
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			hosts := s.Hosts()
			var live []string
			for op := range 250 {
				if len(live) > 0 && rng.IntN(3) == 0 {
					i := rng.IntN(len(live))
					id := live[i]
					live = append(live[:i], live[i+1:]...)
					if err := indexed.RemovePlacementGroup(id); err != nil {
						t.Fatal(err)
					}
					if err := scan.RemovePlacementGroup(id); err != nil {
						t.Fatal(err)
					}
				} else {
					req := randomRequest(rng, hosts)
					a, err1 := indexed.CreatePlacementGroup(req)
					b, err2 := scan.CreatePlacementGroup(req)
					if (err1 == nil) != (err2 == nil) {
						t.Fatalf("op %d: errors differ: %v vs %v", op, err1, err2)
					}
					if err1 != nil {
						continue
					}
					if diff := cmp.Diff(b, a); diff != "" {
						t.Fatalf("op %d: %+v\nindexed vs scan (-scan +indexed):\n%s", op, req, diff)
					}
					live = append(live, a.ID)
				}
				if x, y := scan.PlacementGroups(), indexed.PlacementGroups(); !reflect.DeepEqual(x, y) {
					t.Fatalf("op %d: groups differ (-scan +indexed):\n%s", op, cmp.Diff(x, y))
				}
			}
		})
	}
}

func randomRequest(rng *rand.Rand, hosts []Host) PlacementGroupRequest {
	strategies := []placement.Strategy{placement.Pack, placement.Spread, placement.StrictPack, placement.StrictSpread}
	req := PlacementGroupRequest{Strategy: strategies[rng.IntN(len(strategies))]}
	n := 1 + rng.IntN(6)
	withSel := rng.IntN(2) == 0
	for range n {
		b := map[string]float64{}
		switch rng.IntN(6) {
		case 0:
			b["CPU"] = float64(1 + rng.IntN(3))
		case 1:
			h := hosts[rng.IntN(len(hosts))]
			if h.IsTPU() {
				b[h.SliceName] = 1
			}
			b["TPU"] = 1
		case 2:
			h := hosts[rng.IntN(len(hosts))]
			if h.IsTPU() {
				b[rayvocab.HeadResource(h.PodType)] = 1
			} else {
				b["CPU"] = 0.5
			}
		default:
			b["TPU"] = []float64{1, 2, 4, 8}[rng.IntN(4)]
			if rng.IntN(2) == 0 {
				b["CPU"] = 1
			}
		}
		req.Bundles = append(req.Bundles, b)
		var sel map[string]string
		if withSel {
			h := hosts[rng.IntN(len(hosts))]
			sel = map[string]string{}
			switch rng.IntN(7) {
			case 0:
				if h.IsTPU() {
					sel[rayvocab.LabelTPUPodType] = h.PodType
				}
			case 1:
				sel[rayvocab.LabelTPUTopology] = "in(4x4,2x4)"
			case 2:
				sel[rayvocab.LabelTPUWorkerID] = "!0"
			case 3:
				if h.IsTPU() {
					sel[rayvocab.LabelTPUSliceName] = h.SliceName
				}
			case 4:
				if h.IsTPU() {
					sel[rayvocab.LabelTPUSliceName] = "!" + h.SliceName
				}
			case 5:
				sel[rayvocab.LabelAcceleratorType] = "!in(TPU-V4,TPU-V7X)"
			case 6:
				if h.IsTPU() {
					sel[rayvocab.LabelTPUSliceName] = "in(" + h.SliceName + "," + hosts[0].SliceName + ")"
				}
			}
		}
		req.BundleLabelSelector = append(req.BundleLabelSelector, sel)
	}
	return req
}

// TestResourceIDsFollowSpecThenName pins the order resource ids are
// assigned in: classes in host order, each class's new names sorted. The
// ids order the terms of every score, so they must not depend on map
// iteration.
func TestResourceIDsFollowSpecThenName(t *testing.T) {
	t.Parallel()
	want := []string{
		rayvocab.ResourceCPU, rayvocab.ResourceTPU, "TPU-v6e-4-head", "accelerator_type:TPU-V6E", rayvocab.ResourceMemory,
		"TPU-v4-16-head", "accelerator_type:TPU-V4",
	}
	for range 50 {
		s, err := ParseSpec("v6e-4,cpu:1,v4-16")
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewCluster(s)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, c.resNames); diff != "" {
			t.Fatalf("resource ids (-want +got):\n%s", diff)
		}
	}
}
