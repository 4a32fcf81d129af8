package sim

import (
	"fmt"
	"math"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
)

// yamlSpec is the YAML form of a Spec.
type yamlSpec struct {
	Nodes []yamlItem `json:"nodes"`
}

type yamlItem struct {
	Count        *int   `json:"count"`
	PodType      string `json:"podType"`
	Topology     string `json:"topology"`
	ChipsPerHost int    `json:"chipsPerHost"`
	CPU          *int   `json:"cpu"`
	// Memory is bytes (a number) or a size such as 64Gi (a string).
	Memory    any  `json:"memory"`
	MinSlices *int `json:"minSlices"`
	MaxSlices *int `json:"maxSlices"`
}

// ParseSpecYAML parses the YAML form of a cluster spec: a list of items
// under "nodes", each with the fields of [Item] (memory as bytes or a size
// such as 64Gi). The short form 2*v6e-16:4x4,cpu:2{cpu=16} reads:
//
//	nodes:
//	  - podType: v6e-16
//	    count: 2
//	    topology: 4x4     # optional
//	  - podType: cpu
//	    count: 2
//	    cpu: 16           # optional, default 8
//	    memory: 32Gi      # optional, default 32Gi
//
// An item with maxSlices is a TPU worker group Ray's autoscaler scales
// (see PredictAutoscaling); its count is the slices it has now, default
// minSlices (default 0), and may be 0:
//
//   - podType: v4-16
//     topology: 2x2x2
//     minSlices: 0
//     maxSlices: 2
//
// The file is read strictly, as every file a user writes: keys match
// case-sensitively, an unknown key is an error naming its line and the
// nearest key, a value of the wrong type names the type wanted, and a
// second YAML document is an error. Errors are a field.ErrorList with
// paths nodes[i].podType, nodes[i].topology, ... ("file" for the file as
// a whole).
func ParseSpecYAML(b []byte) (Spec, error) {
	root := field.NewPath("nodes")
	var ys yamlSpec
	if errs := fieldfile.Decode(b, nil, &ys); len(errs) > 0 {
		if len(errs) == 1 && errs[0].Type == field.TypeRequired {
			return Spec{}, field.ErrorList{field.Required(root, "a list of nodes, e.g. nodes: [{podType: v6e-16, count: 2}]")}
		}
		return Spec{}, errs
	}
	if len(ys.Nodes) == 0 {
		return Spec{}, field.ErrorList{field.Required(root, "at least one item, e.g. nodes: [{podType: v6e-16, count: 2}]")}
	}
	var errs field.ErrorList
	var spec Spec
	for i, y := range ys.Nodes {
		p := root.Index(i)
		it := Item{PodType: y.PodType, Topology: y.Topology, ChipsPerHost: y.ChipsPerHost}
		if y.MaxSlices != nil {
			if *y.MaxSlices < 1 {
				errs = append(errs, field.Invalid(p.Child("maxSlices"), *y.MaxSlices, "at least 1 slice; leave it out for a group of fixed size"))
			}
			it.MaxSlices = *y.MaxSlices
		}
		if y.MinSlices != nil {
			it.MinSlices = *y.MinSlices
		}
		if y.Count != nil {
			switch {
			case *y.Count == 0 && it.Autoscaled() && it.MinSlices > 0:
				errs = append(errs, field.Invalid(p.Child("count"), 0, fmt.Sprintf("the slices the group has now: from minSlices %d to maxSlices %d", it.MinSlices, it.MaxSlices)))
			case *y.Count == 0 && !it.Autoscaled():
				errs = append(errs, field.Invalid(p.Child("count"), 0, "must be at least 1 (0 only with maxSlices)"))
			}
			it.Count = *y.Count
		}
		if y.CPU != nil {
			if *y.CPU == 0 {
				errs = append(errs, field.Invalid(p.Child("cpu"), 0, "must be a positive number of CPUs"))
			}
			it.CPU = *y.CPU
		}
		if y.Memory != nil {
			m, err := memoryOf(y.Memory)
			if err != nil || m < 1 {
				errs = append(errs, field.Invalid(p.Child("memory"), fmt.Sprint(y.Memory), "want a positive size: bytes, or a number with Ki, Mi, Gi, Ti, K, M, G or T (64Gi)"))
			} else {
				it.Memory = m
			}
		}
		spec.Items = append(spec.Items, it)
	}
	rs, rerrs := spec.resolve(root)
	if errs = append(errs, rerrs...); len(errs) > 0 {
		return Spec{}, errs
	}
	return specOf(rs), nil
}

// memoryOf reads memory: bytes as a whole number, or a size string.
func memoryOf(v any) (Bytes, error) {
	switch v := v.(type) {
	case float64:
		if v != math.Trunc(v) || v < 0 || v >= math.MaxInt64 {
			return 0, fmt.Errorf("memory %v is not a whole number of bytes", v)
		}
		return Bytes(v), nil
	case string:
		return ParseBytes(v)
	}
	return 0, fmt.Errorf("memory is not a number or a size")
}
