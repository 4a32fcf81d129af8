package sim_test

import (
	"fmt"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

// A RayCluster whose v4 2x2x2 worker group sits at zero slices, up to two:
// a two-slice plan makes Ray 2.60's autoscaler (v1, the default on KubeRay
// v1.5.0) add both slices, one head reservation after the other.
func ExamplePredictAutoscaling() {
	spec, err := sim.ParseSpec("v4-16:2x2x2{max=2},cpu:1")
	if err != nil {
		panic(err)
	}
	g, err := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2", NumSlices: 2}.Compile(nil)
	if err != nil {
		panic(err)
	}
	pred, err := sim.PredictAutoscaling(spec, placement.NewSlicePlan("train", g), sim.AutoscalerV1)
	if err != nil {
		panic(err)
	}
	for _, gs := range pred.Groups {
		fmt.Println(gs)
	}
	fmt.Println("runs on:", pred.Spec(spec))

	// With at most one slice, the autoscaler cannot give the plan both.
	small, _ := sim.ParseSpec("v4-16:2x2x2{max=1},cpu:1")
	pred, _ = sim.PredictAutoscaling(small, placement.NewSlicePlan("train", g), sim.AutoscalerV1)
	fmt.Println(pred.Err())
	// Output:
	// items[0] v4-16 (2x2x2, 2 hosts per slice, min 0, max 2): scales from 0 to 2 slices (0 to 4 pods)
	// runs on: 2*v4-16{max=2},cpu:1
	// sim: the autoscaler cannot give the plan its slices: MaxSlicesTooSmall: slices[0] placement group 0 of "train": needs 2 v4-16 slices (2x2x2) at once and 1 more than the cluster can reach: items[0] stops at maxSlices 1; raise maxSlices of items[0] to 2
}
