package fieldfile_test

import (
	"fmt"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
)

// A file means what it means to Ray, which reads it with PyYAML (YAML
// 1.1): no, off and yes are booleans, a merge key copies a mapping, and a
// boolean where a string goes is an error that says to quote it.
func ExampleDecode() {
	type deployment struct {
		Name        string         `json:"name"`
		NumReplicas int            `json:"num_replicas"`
		UserConfig  map[string]any `json:"user_config"`
	}
	var d struct {
		Defaults    any          `json:"defaults"`
		Deployments []deployment `json:"deployments"`
	}
	errs := fieldfile.Decode([]byte(`
defaults: &defaults {num_replicas: 2}
deployments:
  - <<: *defaults
    name: llm
    user_config: {use_cache: no, debug: off, fast: yes}
`), field.NewPath("app"), &d)
	fmt.Println(errs, d.Deployments[0].NumReplicas, d.Deployments[0].UserConfig)

	errs = fieldfile.Decode([]byte("deployments: [{name: no}]\n"), field.NewPath("app"), &d)
	fmt.Println(errs)
	// Output:
	// no errors 2 map[debug:false fast:true use_cache:false]
	// app.deployments[0].name (line 1): Invalid value: "no": want a string, got the boolean no (YAML 1.1, as Ray reads it, reads no as false); quote it to mean the string: "no"
}
