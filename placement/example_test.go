package placement_test

import (
	"fmt"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// A v6e 4x4 slice compiles to one head reservation and four 4-chip worker
// bundles pinned to the reserved slice, as Ray's slice_placement_group does.
func ExampleSliceSpec_Compile() {
	g, err := placement.SliceSpec{Topology: "4x4", Accelerator: "TPU-V6E"}.Compile(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g)
	fmt.Println("head:", g.Heads[0].Resources, g.Heads[0].LabelSelector)
	for _, b := range g.Bundles() {
		fmt.Println("bundle", b.Index, b.Resources, "pinned to slice", b.Slice, b.SliceNameFromHead)
	}
	// Output:
	// 1 × v6e 4x4 (v6e-16): 4 bundles {CPU:1, TPU:4}, SPREAD
	// head: map[TPU-v6e-16-head:1] map[ray.io/tpu-pod-type:v6e-16 ray.io/tpu-worker-id:0]
	// bundle 0 map[CPU:1 TPU:4] pinned to slice 0 true
	// bundle 1 map[CPU:1 TPU:4] pinned to slice 0 true
	// bundle 2 map[CPU:1 TPU:4] pinned to slice 0 true
	// bundle 3 map[CPU:1 TPU:4] pinned to slice 0 true
}

// Every problem is reported at once, each with its field path.
func ExampleSliceSpec_Compile_errors() {
	_, err := placement.SliceSpec{Topology: "4x5", Accelerator: "v6e", Strategy: "SPRED"}.Compile(field.NewPath("slice"))
	for _, e := range field.Errors(err) {
		fmt.Println(e.Field, e.Type, e.Suggestion)
	}
	// Output:
	// slice.strategy NotSupported SPREAD
	// slice.topology NotSupported 4x4
}
