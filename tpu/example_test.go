package tpu_test

import (
	"fmt"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

func ExampleLookupGeneration() {
	for _, name := range []string{"TPU-V6E", "v5litepod", "tpu7x", "Ironwood", "h100"} {
		g, ok := tpu.LookupGeneration(name)
		if !ok {
			fmt.Printf("%s: unknown\n", name)
			continue
		}
		fmt.Printf("%s: %s (Ray %s, %s)\n", name, g.Name, g.RayAcceleratorType(), g.GKEAccelerator)
	}
	// Output:
	// TPU-V6E: v6e (Ray TPU-V6E, tpu-v6e-slice)
	// v5litepod: v5e (Ray TPU-V5LITEPOD, tpu-v5-lite-podslice)
	// tpu7x: v7x (Ray TPU-V7X, tpu7x)
	// Ironwood: v7x (Ray TPU-V7X, tpu7x)
	// h100: unknown
}

func ExampleSliceSpec_Resolve() {
	spec := tpu.SliceSpec{Generation: "v6e", Topology: "4x4"}
	sl, errs := spec.Resolve(tpu.TargetRay, tpu.FieldsUnder(field.NewPath("train", "scaling")))
	if errs != nil {
		fmt.Println(errs)
		return
	}
	fmt.Println("chips:", sl.Chips())
	fmt.Println("hosts:", sl.Hosts(), "x", sl.ChipsPerHost, "chips on", sl.MachineType)
	fmt.Println("pod type:", sl.PodType())
	fmt.Println("head resource:", sl.HeadResource())
	fmt.Println("JAX devices:", sl.Devices())
	fmt.Println("GKE:", sl.GKENodeSelector())
	// Output:
	// chips: 16
	// hosts: 4 x 4 chips on ct6e-standard-4t
	// pod type: v6e-16
	// head resource: TPU-v6e-16-head
	// JAX devices: 16
	// GKE: map[cloud.google.com/gke-tpu-accelerator:tpu-v6e-slice cloud.google.com/gke-tpu-topology:4x4]
}

// The 2x4 v5e/v6e slice is one 8-chip host by default (Ray's rule) or two
// 4-chip hosts when ChipsPerHost or the machine type says so.
func ExampleSliceSpec_Resolve_chipsPerHost() {
	for _, spec := range []tpu.SliceSpec{
		{Generation: "v6e", Topology: "2x4"},
		{Generation: "v6e", Topology: "2x4", ChipsPerHost: 4},
	} {
		sl, errs := spec.Resolve(tpu.TargetAny, tpu.FieldsUnder(nil))
		if errs != nil {
			fmt.Println(errs)
			continue
		}
		fmt.Printf("%s on %d host(s) of %d chips, multi-host %v\n", sl.Topology, sl.Hosts(), sl.ChipsPerHost, sl.MultiHost())
	}
	// Output:
	// 2x4 on 1 host(s) of 8 chips, multi-host false
	// 2x4 on 2 host(s) of 4 chips, multi-host true
}

// A shape that GKE provisions but Ray's slice placement rejects fails under
// TargetRay, and a typo gets a suggestion. Match on Field and Type.
func ExampleSliceSpec_Resolve_errors() {
	scaling := tpu.FieldsUnder(field.NewPath("train", "scaling"))

	_, errs := tpu.SliceSpec{Generation: "v6x", Topology: "4x5"}.Resolve(tpu.TargetRay, scaling)
	for _, e := range field.Errors(errs.Err()) {
		fmt.Printf("%s %s %q -> did you mean %q?\n", e.Field, e.Type, e.BadValue, e.Suggestion)
	}

	_, errs = tpu.SliceSpec{Generation: "v4", Topology: "8x16x16"}.Resolve(tpu.TargetRay, scaling)
	e := errs[0]
	fmt.Println(e.Field, e.Type, e.BadValue)
	fmt.Println(e.Detail)

	sl, _ := tpu.SliceSpec{Generation: "v4", Topology: "8x16x16"}.Resolve(tpu.TargetGKE, scaling)
	fmt.Println("GKE:", sl.PodType(), sl.Hosts(), "hosts")
	// Output:
	// train.scaling.generation NotSupported "v6x" -> did you mean "v6e"?
	// train.scaling.topology NotSupported 8x16x16
	// GKE provisions v4 8x16x16, but Ray's slice placement rejects it
	// GKE: v4-4096 512 hosts
}

func ExampleResolveGeneration() {
	_, err := tpu.ResolveGeneration("v6x", field.NewPath("acceleratorType"))
	fmt.Println(err.Type, err.Suggestion)
	fmt.Println(err)
	// Output:
	// NotSupported v6e
	// acceleratorType: Unsupported value: "v6x": did you mean "v6e" or "v7x"? (supported: "v2", "v3", "v4", "v5e", "v5p", "v6e", "v7x")
}

func ExampleParseTopology() {
	t, err := tpu.ParseTopology(" 2X2X4 ")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t, t.Rank(), t.Dims(), t.Chips())

	_, err = tpu.ParseTopology("4x")
	fmt.Println(err)
	// Output:
	// 2x2x4 3 [2 2 4] 16
	// topology "4x": dimension 2 is "", not a positive integer
}

func ExampleGeneration_ValidTopologies() {
	v6e, _ := tpu.LookupGeneration("v6e")
	fmt.Println("Ray:", v6e.ValidTopologies(tpu.TargetRay))
	fmt.Println("GKE:", v6e.ValidTopologies(tpu.TargetGKE))

	v7x, _ := tpu.LookupGeneration("v7x")
	fmt.Println("Ray:", v7x.ValidTopologies(tpu.TargetRay))
	fmt.Println("GKE:", len(v7x.ValidTopologies(tpu.TargetGKE)), "shapes, up to", v7x.MaxChips, "chips")
	// Output:
	// Ray: [1x1 2x2 2x4 2x8 4x4 4x8 8x8 8x16 16x16]
	// GKE: [1x1 2x2 2x4 4x4 4x8 8x8 8x16 16x16]
	// Ray: [2x2x1 2x2x2 2x2x4 2x4x4 4x4x4 4x4x8 4x8x8 8x8x8 8x8x16 8x16x16]
	// GKE: 521 shapes, up to 9216 chips
}

func ExampleGeneration_CheckTopology() {
	v5p, _ := tpu.LookupGeneration("v5p")
	t := tpu.MustParseTopology("16x4x4")
	fmt.Printf("Ray: %q\n", v5p.CheckTopology(t, tpu.TargetRay))
	fmt.Printf("GKE: %q\n", v5p.CheckTopology(t, tpu.TargetGKE))
	// Output:
	// Ray: ""
	// GKE: "v5p slices are written with A <= B <= C"
}

func ExampleParsePodType() {
	for _, pt := range []string{"v6e-16", "v4-16", "tpu7x-16"} {
		g, chips, err := tpu.ParsePodType(pt)
		if err != nil {
			fmt.Println(err)
			continue
		}
		topo, _ := g.TopologyForChips(chips)
		fmt.Printf("%s: %s, %d chips, %s\n", pt, g.Name, chips, topo)
	}
	// Output:
	// v6e-16: v6e, 16 chips, 4x4
	// v4-16: v4, 8 chips, 2x2x2
	// tpu7x-16: v7x, 8 chips, 2x2x2
}
