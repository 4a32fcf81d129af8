package field_test

import (
	"errors"
	"fmt"

	"github.com/raytpu/raytpu/field"
)

func ExampleNewPath() {
	scaling := field.NewPath("trainer", "scaling_config")
	fmt.Println(scaling.Child("topology"))
	fmt.Println(scaling.Child("resources_per_worker").Key("TPU"))
	fmt.Println(field.NewPath("serve").Child("deployments").Index(0).Child("numReplicas"))
	// Output:
	// trainer.scaling_config.topology
	// trainer.scaling_config.resources_per_worker[TPU]
	// serve.deployments[0].numReplicas
}

func ExampleNotSupported() {
	err := field.NotSupported(field.NewPath("trainer", "scaling_config", "topology"), "4x5", []string{"2x2", "4x4", "4x8"})
	fmt.Println(err)
	fmt.Println("suggestion:", err.Suggestion)
	// Output:
	// trainer.scaling_config.topology: Unsupported value: "4x5": did you mean "4x4" or "4x8"? (supported: "2x2", "4x4", "4x8")
	// suggestion: 4x4
}

func ExampleErrors() {
	scaling := field.NewPath("trainer", "scaling_config")
	var errs field.ErrorList
	errs = append(errs, field.Required(scaling.Child("topology"), "a slice topology"))
	errs = append(errs, field.Forbidden(scaling.Child("label_selector"), "not with use_tpu and several workers"))
	err := fmt.Errorf("compile trainer: %w", errs.Err())

	// Match on path and type, never on the message.
	for _, e := range field.Errors(err) {
		fmt.Println(e.Field, e.Type)
	}
	var first *field.Error
	fmt.Println(errors.As(err, &first), first.Field)
	// Output:
	// trainer.scaling_config.topology Required
	// trainer.scaling_config.label_selector Forbidden
	// true trainer.scaling_config.topology
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
