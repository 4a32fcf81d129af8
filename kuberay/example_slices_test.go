package kuberay_test

import (
	"encoding/json"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

// Before a job runs on an existing RayCluster (Options.Cluster), a
// program reads the cluster's TPU worker groups (Backend.ReadClusterSlices
// reads them from the apiserver; SlicesOf from an object in hand) and asks
// the simulator what Ray's autoscaler will do for the plan: here a
// two-slice job on a cluster whose v6e 4x4 group may grow to one slice,
// which it cannot run. raytpu apply --ray-cluster refuses such a job
// with this error before it creates anything.
func ExampleSlicesOf() {
	pool, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x4"}.Compile(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := kuberay.Render(placement.NewSlicePlan("pool", pool),
		kuberay.Options{Namespace: "ml", Autoscaling: &kuberay.Autoscaling{MaxSlices: 1}}, kuberay.RenderInput{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ac := m.Cluster
	// The RayCluster as the apiserver returns it.
	var rc rayv1.RayCluster
	b, _ := json.Marshal(ac)
	if err := json.Unmarshal(b, &rc); err != nil {
		fmt.Println(err)
		return
	}
	cs, err := kuberay.SlicesOf(&rc)
	if err != nil {
		fmt.Println(err)
		return
	}
	var spec sim.Spec
	for _, g := range cs.Groups {
		spec.Items = append(spec.Items, sim.Item{PodType: g.PodType, Topology: g.Topology, ChipsPerHost: g.ChipsPerHost,
			Count: g.Replicas, MinSlices: g.MinReplicas, MaxSlices: g.MaxReplicas})
	}
	job, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", NumSlices: 2}.Compile(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	pred, err := sim.PredictAutoscaling(spec, placement.NewSlicePlan("job", job), sim.AutoscalerVersion(cs.AutoscalerVersion))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cs.AutoscalerVersion, pred.Groups[0])
	fmt.Println(pred.Err())
	// Output:
	// v1 items[0] v6e-16 (4x4, 4 hosts per slice, min 0, max 1): scales from 0 to 1 slice (0 to 4 pods)
	// sim: the autoscaler cannot give the plan its slices: MaxSlicesTooSmall: slices[0] placement group 0 of "job": needs 2 v6e-16 slices (4x4) at once and 1 more than the cluster can reach: items[0] stops at maxSlices 1; raise maxSlices of items[0] to 2
}
