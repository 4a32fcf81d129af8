package field_test

import (
	"errors"
	"fmt"

	"github.com/raytpu/raytpu/field"
)

func ExampleNewPath() {
	scaling := field.NewPath("train", "scaling")
	fmt.Println(scaling.Child("topology"))
	fmt.Println(scaling.Child("resourcesPerWorker").Key("TPU"))
	fmt.Println(field.NewPath("serve").Child("deployments").Index(0).Child("numReplicas"))
	// Output:
	// train.scaling.topology
	// train.scaling.resourcesPerWorker[TPU]
	// serve.deployments[0].numReplicas
}

func ExampleNotSupported() {
	err := field.NotSupported(field.NewPath("train", "scaling", "topology"), "4x5", []string{"2x2", "4x4", "4x8"})
	fmt.Println(err)
	fmt.Println("suggestion:", err.Suggestion)
	// Output:
	// train.scaling.topology: Unsupported value: "4x5": did you mean "4x4"? (supported: "2x2", "4x4", "4x8")
	// suggestion: 4x4
}

func ExampleErrors() {
	scaling := field.NewPath("train", "scaling")
	var errs field.ErrorList
	errs = append(errs, field.Required(scaling.Child("topology"), "a slice topology"))
	errs = append(errs, field.Forbidden(scaling.Child("labelSelector"), "not with useTPU and several workers"))
	err := fmt.Errorf("compile trainer: %w", errs.Err())

	// Match on path and type, never on the message.
	for _, e := range field.Errors(err) {
		fmt.Println(e.Field, e.Type)
	}
	var first *field.Error
	fmt.Println(errors.As(err, &first), first.Field)
	// Output:
	// train.scaling.topology Required
	// train.scaling.labelSelector Forbidden
	// true train.scaling.topology
}

func ExampleErrorList_Err() {
	validate := func(workers int) error {
		var errs field.ErrorList
		if workers < 1 {
			errs = append(errs, field.Invalid(field.NewPath("numWorkers"), workers, "must be at least 1"))
		}
		return errs.Err()
	}
	fmt.Println(validate(4))
	fmt.Println(validate(0))
	// Output:
	// <nil>
	// numWorkers: Invalid value: 0: must be at least 1
}

func ExampleNearest() {
	valid := []string{"v2", "v3", "v4", "v5e", "v5p", "v6e", "v7x"}
	fmt.Printf("%q\n", field.Nearest("v6x", valid))
	fmt.Printf("%q\n", field.Nearest("h100", valid))
	// Output:
	// "v6e"
	// ""
}
