package placement_test

import (
	"fmt"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// A front end validates a selector under its own field path; a backend
// matches it against node labels as Ray's raylet does.
func ExampleParseLabelSelector() {
	sel, errs := placement.ParseLabelSelector(field.NewPath("labelSelector"), map[string]string{
		"ray.io/tpu-pod-type": "in(v6e-16,v6e-32)",
		"zone":                "!us-b",
	})
	fmt.Println(errs == nil, sel)
	fmt.Println(sel.Matches(map[string]string{"ray.io/tpu-pod-type": "v6e-16", "zone": "us-a"}))
	fmt.Println(sel.Matches(map[string]string{"ray.io/tpu-pod-type": "v6e-16", "zone": "us-b"}))

	// Ray 2.60 accepts a space after a comma, and keeps it.
	spaced := placement.ParseLabelCondition("zone", "in(us-a, us-b)")
	fmt.Printf("%q %v\n", spaced.Values, spaced.Matches("us-b", true))

	_, errs = placement.ParseLabelSelector(field.NewPath("labelSelector"), map[string]string{"zone": "in(us-a,"})
	fmt.Println(errs)
	// Output:
	// true {ray.io/tpu-pod-type: in(v6e-16,v6e-32), zone: !us-b}
	// true
	// false
	// ["us-a" " us-b"] false
	// labelSelector[zone]: Invalid value: "in(us-a,": the list must end with ")"; a label selector value is "v", "!v", "in(v1,v2)" or "!in(v1,v2)" (at most one space after a comma), each v at most 63 characters, alphanumeric at both ends, with - _ . between
}
