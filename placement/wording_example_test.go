package placement_test

import (
	"fmt"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/tpu"
)

// A backend that reads where a raw placement group's TPU bundles landed
// (the simulator from its model, the Ray backend from the State API)
// reports them in the same words.
func ExampleRawLanding_Diagnose() {
	v4, _ := tpu.LookupGeneration("v4")
	landed := placement.RawLanding{
		Bundles: 2, TPU: 8, Hosts: 2,
		Shares: []placement.SliceShare{
			{Slice: "v4-16-0", TPU: 4, Hosts: 1},
			{Slice: "v4-8-0", TPU: 4, Hosts: 1},
		},
		Generation: v4,
	}
	for _, f := range landed.Diagnose() {
		fmt.Println(f)
	}
	bundle := placement.DescribeBundle(0, map[string]float64{"TPU-v4-32-head": 1}, map[string]string{"ray.io/tpu-worker-id": "0"})
	fmt.Println(placement.InfeasibleFinding(placement.GroupName("pg-1", ""), placement.NoResourceReason(bundle, []string{"TPU-v4-32-head"})))
	// Output:
	// error SpansSlices: 2 bundles holding 8 TPU landed on 2 slices (v4-16-0: 4 TPU on 1 host, v4-8-0: 4 TPU on 1 host): slices share no ICI, so the first collective across them hangs (a Serve replica stays DEPLOYING); request topology 2x2x2 (v4-16) so that Ray reserves one whole v4-16 slice
	// error Infeasible: placement group pg-1 is INFEASIBLE: bundle 0 {TPU-v4-32-head: 1} with label selector {ray.io/tpu-worker-id: 0}: no node has resource TPU-v4-32-head; no node of this cluster can ever hold it
}
