package kubesim_test

import (
	"fmt"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/kuberay/kubesim"
	"github.com/raytpu/raytpu/placement"
)

// A program about to run a two-slice v4 2x2x2 job on an existing
// RayCluster (kuberay Options.Cluster) asks first what the cluster's
// autoscaler will do. The cluster would come from
// Backend.ReadClusterSlices; here it is written out: one v4-16 group at
// zero slices, autoscaled up to 1, then up to 2.
func Example() {
	slices, err := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2", NumSlices: 2}.Compile(nil)
	if err != nil {
		panic(err)
	}
	plan := placement.NewSlicePlan("train", slices)
	cs := &kuberay.ClusterSlices{Namespace: "ml", Name: "tpu", Autoscaled: true, AutoscalerVersion: kuberay.AutoscalerV1,
		Groups: []kuberay.SliceGroup{{Name: "v4-16", PodType: "v4-16", Topology: "2x2x2", Hosts: 2, ChipsPerHost: 4, MaxReplicas: 1}}}
	for _, most := range []int{1, 2} {
		cs.Groups[0].MaxReplicas = most
		pred, err := kubesim.Predict(cs, plan)
		if err != nil {
			panic(err)
		}
		fmt.Println(pred.Groups[0])
		if err := pred.Err(); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// items[0] v4-16 (2x2x2, 2 hosts per slice, min 0, max 1): scales from 0 to 1 slice (0 to 2 pods)
	// sim: the autoscaler cannot give the plan its slices: MaxSlicesTooSmall: slices[0] placement group 0 of "train": needs 2 v4-16 slices (2x2x2) at once and 1 more than the cluster can reach: items[0] stops at maxSlices 1; raise maxSlices of items[0] to 2
	// items[0] v4-16 (2x2x2, 2 hosts per slice, min 0, max 2): scales from 0 to 2 slices (0 to 4 pods)
}
