package sim_test

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/sim"
)

func ExampleParseSpec() {
	spec, err := sim.ParseSpec("2*v6e-16,v6e-8:2x4@4,cpu:1{cpu=16,mem=64Gi}")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(spec)
	for _, h := range spec.Hosts() {
		fmt.Printf("%-12s TPU=%v head=%v labels=%d\n", h.Name, h.Resources["TPU"], h.Resources[rayvocab.HeadResource(h.PodType)] == 1, len(h.Labels))
	}

	_, err = sim.ParseSpec("v6e-16:4x8")
	fmt.Println(err)
	// Output:
	// 2*v6e-16,v6e-8@4,cpu:1{cpu=16,mem=64Gi}
	// v6e-16-0-w0  TPU=4 head=true labels=5
	// v6e-16-0-w1  TPU=4 head=false labels=5
	// v6e-16-0-w2  TPU=4 head=false labels=5
	// v6e-16-0-w3  TPU=4 head=false labels=5
	// v6e-16-1-w0  TPU=4 head=true labels=5
	// v6e-16-1-w1  TPU=4 head=false labels=5
	// v6e-16-1-w2  TPU=4 head=false labels=5
	// v6e-16-1-w3  TPU=4 head=false labels=5
	// v6e-8-0-w0   TPU=4 head=true labels=5
	// v6e-8-0-w1   TPU=4 head=false labels=5
	// cpu-0        TPU=0 head=false labels=0
	// spec[0].topology: Unsupported value: "4x8": in item "v6e-16:4x8": v6e-16 has 16 chips, 4x8 has 32: did you mean "4x4"? (supported: "2x8", "4x4")
}

func ExampleHost_Env() {
	spec, _ := sim.ParseSpec("v6e-16")
	h := spec.Hosts()[1]
	env := h.Env()
	for _, k := range slices.Sorted(maps.Keys(env)) {
		fmt.Printf("%s=%s\n", k, env[k])
	}
	// Output:
	// TPU_ACCELERATOR_TYPE=v6e-16
	// TPU_NAME=v6e-16-0
	// TPU_TOPOLOGY=4x4
	// TPU_WORKER_ID=1
}

func ExampleCluster_PlaceSlices() {
	spec, _ := sim.ParseSpec("2*v6e-16")
	cluster, _ := sim.NewCluster(spec)
	// Someone holds a chip of the first slice's worker 1.
	_, _ = cluster.CreatePlacementGroup(sim.PlacementGroupRequest{
		Bundles:             []map[string]float64{{"TPU": 1}},
		BundleLabelSelector: []map[string]string{{"ray.io/tpu-worker-id": "1"}},
	})

	group, _ := placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", Strategy: placement.Pack}.Compile(nil)
	sp, err := cluster.PlaceSlices(group)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range sp.Heads {
		fmt.Printf("head of slice %d: %s on %s\n", h.Slice, h.State, h.Node)
	}
	for _, b := range sp.Bundles {
		fmt.Printf("bundle %d %v pinned to %s: %s\n", b.Index, b.Resources, b.LabelSelector["ray.io/tpu-slice-name"], b.State)
	}
	fmt.Print(sp.Diagnosis)
	// Output:
	// head of slice 0: CREATED on v6e-16-0-w0
	// bundle 0 map[CPU:1 TPU:4] pinned to v6e-16-0: PENDING
	// bundle 1 map[CPU:1 TPU:4] pinned to v6e-16-0: PENDING
	// bundle 2 map[CPU:1 TPU:4] pinned to v6e-16-0: PENDING
	// bundle 3 map[CPU:1 TPU:4] pinned to v6e-16-0: PENDING
	// warning Pending: placement group pg-3 is PENDING: bundle 3 {CPU: 1, TPU: 4} with label selector {ray.io/tpu-slice-name: v6e-16-0}: none of the 4 nodes that can hold it has it free beside the group's other bundles; held by placement group pg-1; Ray leaves it waiting and its ready() does not resolve until resources are freed
	// warning BusySlice: slice 0: the head reservation took v6e-16-0, where 1 host is in use, so its workers wait; 1 other v6e-16 slice is idle, but Ray's reserve_tpu_slice takes the first free head without looking at the slice's other hosts
}

// The failure the TPU guides warn about, side by side: 16 chips requested
// as 16 bundles of {TPU: 1} with no topology spread over three v6e-16
// slices; compiled from topology 4x4, the same 16 chips land on one slice.
func ExampleCluster_PlaceBundles() {
	spec, _ := sim.ParseSpec("3*v6e-16")
	show := func(what string, sp *sim.SlicePlacement) {
		perSlice := map[string]int{}
		for _, b := range sp.Bundles {
			perSlice[b.SliceName] += int(b.Resources["TPU"])
		}
		fmt.Printf("%s: %d bundles, chips per slice %v\n", what, len(sp.Bundles), perSlice)
		for _, f := range sp.Diagnosis {
			fmt.Printf("  %s %s\n", f.Severity, f.Code)
		}
	}

	raw, _ := sim.NewCluster(spec)
	chips := make([]map[string]float64, 16)
	for i := range chips {
		chips[i] = map[string]float64{"TPU": 1}
	}
	sp, _ := raw.PlaceBundles(sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: chips})
	show("16 x {TPU: 1}, no topology", sp)

	pinned, _ := sim.NewCluster(spec)
	group, _ := placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", ResourcesPerBundle: map[string]float64{"TPU": 1}}.Compile(nil)
	sp, _ = pinned.PlaceSlices(group)
	show("topology 4x4", sp)
	// Output:
	// 16 x {TPU: 1}, no topology: 16 bundles, chips per slice map[v6e-16-0:8 v6e-16-1:4 v6e-16-2:4]
	//   error SpansSlices
	// topology 4x4: 16 bundles, chips per slice map[v6e-16-0:16]
}

func ExampleCluster_Run() {
	spec, _ := sim.ParseSpec("2*v6e-16,v6e-8")
	cluster, _ := sim.NewCluster(spec)
	train, _ := placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", NumSlices: 2, Name: "train"}.Compile(nil)
	serve, _ := placement.SliceSpec{Topology: "2x4", Accelerator: "v6e", Name: "serve"}.Compile(nil)
	res, err := cluster.Place(context.Background(), placement.NewSlicePlan("demo", train, serve))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, sp := range res.Slices {
		hosts := map[string]bool{}
		for _, b := range sp.Bundles {
			hosts[b.Node] = true
		}
		fmt.Printf("%s %s x%d: %d bundles on %d hosts\n", sp.Name, sp.PodType, sp.NumSlices, len(sp.Bundles), len(hosts))
	}
	fmt.Println("findings:", len(res.Diagnosis))
	// Output:
	// train v6e-16 x2: 8 bundles on 8 hosts
	// serve v6e-8 x1: 1 bundles on 1 hosts
	// findings: 0
}

// Place keeps its groups reserved, as a running job would: placing the
// plan again finds the slices taken and names what holds them. One
// Release of Place's result frees them all.
func ExampleCluster_Release() {
	spec, _ := sim.ParseSpec("v6e-16")
	cluster, _ := sim.NewCluster(spec)
	train, _ := placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", Name: "train"}.Compile(nil)
	plan := placement.NewSlicePlan("demo", train)
	res, err := cluster.Place(context.Background(), plan)
	if err != nil {
		fmt.Println(err)
		return
	}
	again, _ := cluster.Place(context.Background(), plan)
	fmt.Println(again.Diagnosis.Codes())
	_ = cluster.Release(again)
	if err := cluster.Release(res); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(cluster.PlacementGroups()), "groups held after Release")
	again, _ = cluster.Place(context.Background(), plan)
	fmt.Print(again.Diagnosis)
	// Output:
	// [HeadReservationFailed]
	// 0 groups held after Release
	// ok: no findings
}
