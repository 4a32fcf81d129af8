package placement_test

import (
	"fmt"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// A front end reuses the slice rules under its own field paths and names.
// Here a Serve deployment's accelerator config: its accelerator and
// topology, and its replica count standing for the number of slices. No
// error is renamed afterwards; each is built at the caller's path.
func ExampleSliceSpec_CompileFields() {
	dep := field.NewPath("app", "deployments").Index(0)
	cfg := dep.Child("acceleratorConfig")
	fields := placement.FieldsUnder(cfg)
	fields.NumSlices = dep.Child("numReplicas")
	fields.ResourcesPerBundle = dep.Child("rayActorOptions", "resources")

	_, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x5", NumSlices: -1}.CompileFields(fields)
	for _, e := range field.Errors(err) {
		fmt.Printf("%s %s %q\n", e.Field, e.Type, e.Suggestion)
	}
	g, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", NumSlices: 2}.CompileFields(fields)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g)
	// Output:
	// app.deployments[0].numReplicas Invalid ""
	// app.deployments[0].acceleratorConfig.topology NotSupported "4x4"
	// 2 × v6e 4x4 (v6e-16): 8 bundles {CPU:1, TPU:4}, SPREAD
}

// A front end that derives the slice count from the shape (Ray Train's
// num_workers over workers per slice) resolves the catalog once and builds
// the group when it knows the count.
func ExampleSliceSpec_Resolve() {
	shape, errs := placement.SliceSpec{Accelerator: "TPU-V6E", Topology: "4x4"}.Resolve(placement.FieldsUnder(field.NewPath("scaling")))
	if len(errs) > 0 {
		fmt.Println(errs)
		return
	}
	numWorkers := 8
	g, _ := shape.Group(numWorkers / shape.BundlesPerSlice)
	fmt.Println(shape.BundlesPerSlice, "workers per slice;", g)
	// Output:
	// 4 workers per slice; 2 × v6e 4x4 (v6e-16): 8 bundles {CPU:1, TPU:4}, SPREAD
}

// A front end whose paths cost something to build (one per deployment of
// an application) hands them over as a function: it runs only when there
// is an error to report, and the errors are Resolve's at those paths.
func ExampleSliceSpec_ResolveFunc() {
	built := 0
	paths := func() placement.Fields {
		built++
		return placement.FieldsUnder(field.NewPath("app", "deployments").Key("llm").Child("acceleratorConfig"))
	}
	shape, _ := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2"}.ResolveFunc(paths)
	g, _ := shape.Group(2)
	fmt.Println(g, "- paths built:", built)

	_, errs := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x3"}.ResolveFunc(paths)
	fmt.Println(errs[0].Field, errs[0].Type, "- paths built:", built)
	_, errs = shape.Group(0)
	fmt.Println(errs[0].Field, errs[0].Type, "- paths built:", built)
	// Output:
	// 2 × v4 2x2x2 (v4-16): 4 bundles {CPU:1, TPU:4}, SPREAD - paths built: 0
	// app.deployments[llm].acceleratorConfig.topology NotSupported - paths built: 1
	// app.deployments[llm].acceleratorConfig.numSlices Invalid - paths built: 2
}
