package kuberay_test

import (
	"fmt"
	"time"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
)

// A slice plan as a RayCluster whose v4 2x2x2 worker group starts with no
// slice and that Ray's autoscaler grows to at most two, each a whole slice
// of two pods, and shrinks back after five idle minutes.
func ExampleAutoscaling() {
	g, err := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2"}.Compile(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := kuberay.Render(placement.NewSlicePlan("reserve", g), kuberay.Options{
		Autoscaling: &kuberay.Autoscaling{MaxSlices: 2, IdleTimeout: 5 * time.Minute},
	}, kuberay.RenderInput{})
	if err != nil {
		fmt.Println(err)
		return
	}
	spec := m.Cluster.Spec
	fmt.Println("autoscaler:", *spec.EnableInTreeAutoscaling, "idle", *spec.AutoscalerOptions.IdleTimeoutSeconds, "s")
	for _, wg := range spec.WorkerGroupSpecs {
		fmt.Printf("%s: %d slices now, %d to %d, %d pods per slice\n", *wg.GroupName, *wg.Replicas, *wg.MinReplicas, *wg.MaxReplicas, *wg.NumOfHosts)
	}

	// A max below what the plan needs at once is refused.
	two, _ := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2", NumSlices: 2}.Compile(nil)
	_, err = kuberay.Render(placement.NewSlicePlan("reserve", two), kuberay.Options{Autoscaling: &kuberay.Autoscaling{MaxSlices: 1}}, kuberay.RenderInput{})
	fmt.Println(err)
	// Output:
	// autoscaler: true idle 300 s
	// v4-16: 0 slices now, 0 to 2, 2 pods per slice
	// options.autoscaling.maxSlices: Invalid value: 1: worker group v4-16 (plan.slices[0], v4-16 2x2x2) needs 2 slices at once: at least 2
}
