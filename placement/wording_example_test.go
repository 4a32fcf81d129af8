package placement_test

import (
	"fmt"

	"github.com/raytpu/raytpu/placement"
)

// slices is a cluster's snapshot as a backend might keep it: its TPU
// slices by name.
type sliceTable map[string]placement.SliceInfo

func (s sliceTable) Slice(name string) (placement.SliceInfo, bool) {
	info, ok := s[name]
	return info, ok
}

// A backend feeds placement's diagnosis with what it reads of its cluster
// (the simulator from its model, the Ray backend from the State API): where
// a raw placement group's TPU bundles landed, and the facts of why a
// bundle is not placed. Both report in the same codes and words.
func ExampleLand() {
	cluster := sliceTable{
		"v4-16-0": {Name: "v4-16-0", PodType: "v4-16", Hosts: 2, Order: 0},
		"v4-8-0":  {Name: "v4-8-0", PodType: "v4-8", Hosts: 1, Order: 1},
	}
	landed := placement.Land(cluster, []placement.LandedBundle{
		{Node: "host-1", Slice: "v4-8-0", TPU: 4},
		{Node: "host-0", Slice: "v4-16-0", TPU: 4},
	})
	for _, f := range landed.Diagnose() {
		fmt.Println(f)
	}
	head := placement.Unplaced{
		Resources: map[string]float64{"TPU-v4-32-head": 1},
		Selector:  map[string]string{"ray.io/tpu-worker-id": "0"},
		Missing:   []string{"TPU-v4-32-head"},
	}
	fmt.Println(placement.InfeasibleFinding(placement.GroupName("pg-1", ""), head.InfeasibleReason()))
	// Output:
	// error SpansSlices: 2 bundles holding 8 TPU landed on 2 slices (v4-16-0: 4 TPU on 1 host, v4-8-0: 4 TPU on 1 host): slices share no ICI, so the first collective across them hangs (a Serve replica stays DEPLOYING); request topology 2x2x2 (v4-16) so that Ray reserves one whole v4-16 slice
	// error Infeasible: placement group pg-1 is INFEASIBLE: bundle 0 {TPU-v4-32-head: 1} with label selector {ray.io/tpu-worker-id: 0}: no node has resource TPU-v4-32-head; no node of this cluster can ever hold it
}

// A diagnosis renders one finding per line; an empty one found nothing
// to report and says ok.
func ExampleDiagnosis_String() {
	fmt.Print(placement.Diagnosis{})
	fmt.Print(placement.Diagnosis{placement.PendingFinding(placement.GroupName("pg-1", "train"), "no node has 4 TPU free")})
	// Output:
	// ok: no findings
	// warning Pending: placement group pg-1 (train) is PENDING: no node has 4 TPU free; Ray leaves it waiting and its ready() does not resolve until resources are freed
}
