package backend_test

import (
	"errors"
	"fmt"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// A backend checks every plan first, before it does anything: a kind it
// does not run is ErrUnsupported, a malformed plan an *InvalidPlanError
// with one field error per broken rule.
func ExampleCheckPlan() {
	handEdited := &placement.Plan{APIVersion: placement.APIVersion, Kind: placement.KindJaxTrainer, Name: "llama", Job: &placement.Job{}}
	err := backend.CheckPlan("mybackend", handEdited, backend.RunKinds()...)
	fmt.Println(errors.Is(err, backend.ErrInvalidPlan))
	for _, e := range field.Errors(err) {
		fmt.Println(e.Field, e.Type)
	}

	reserve := &placement.Plan{APIVersion: placement.APIVersion, Kind: placement.KindSlicePlacementGroup, Name: "reserve"}
	err = backend.CheckPlan("mybackend", reserve, backend.RunKinds()...)
	fmt.Println(errors.Is(err, backend.ErrUnsupported))
	fmt.Println(err)
	// Output:
	// true
	// plan.job.entrypoint Required
	// true
	// mybackend: not supported by this backend: plan "reserve" is of kind SlicePlacementGroup; this call takes JaxTrainer, Pipeline, BatchInference
}
