package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/raytpu/raytpu/field"
)

// yamlSpec is the YAML form of a Spec.
type yamlSpec struct {
	Nodes []yamlItem `yaml:"nodes"`
}

type yamlItem struct {
	Count        *int      `yaml:"count"`
	PodType      string    `yaml:"podType"`
	Topology     string    `yaml:"topology"`
	ChipsPerHost int       `yaml:"chipsPerHost"`
	CPU          *int      `yaml:"cpu"`
	Memory       yaml.Node `yaml:"memory"`
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
// Unknown fields are errors. Errors are a field.ErrorList with paths
// nodes[i].podType, nodes[i].topology, ...
func ParseSpecYAML(b []byte) (Spec, error) {
	root := field.NewPath("nodes")
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var ys yamlSpec
	if err := dec.Decode(&ys); err != nil {
		if errors.Is(err, io.EOF) {
			return Spec{}, field.ErrorList{field.Required(root, "a list of nodes, e.g. nodes: [{podType: v6e-16, count: 2}]")}
		}
		return Spec{}, yamlErrors(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Spec{}, field.ErrorList{field.Invalid(field.NewPath("spec"), "---", "holds more than one YAML document")}
	}
	if len(ys.Nodes) == 0 {
		return Spec{}, field.ErrorList{field.Required(root, "at least one item, e.g. nodes: [{podType: v6e-16, count: 2}]")}
	}
	var errs field.ErrorList
	var spec Spec
	for i, y := range ys.Nodes {
		p := root.Index(i)
		it := Item{PodType: y.PodType, Topology: y.Topology, ChipsPerHost: y.ChipsPerHost}
		if y.Count != nil {
			if *y.Count == 0 {
				errs = append(errs, field.Invalid(p.Child("count"), 0, "must be at least 1"))
			}
			it.Count = *y.Count
		}
		if y.CPU != nil {
			if *y.CPU == 0 {
				errs = append(errs, field.Invalid(p.Child("cpu"), 0, "must be a positive number of CPUs"))
			}
			it.CPU = *y.CPU
		}
		if y.Memory.Kind != 0 {
			m, err := memoryOf(&y.Memory)
			if err != nil || m < 1 {
				errs = append(errs, field.Invalid(p.Child("memory"), y.Memory.Value, "want a positive size: bytes, or a number with Ki, Mi, Gi, Ti, K, M, G or T (64Gi)"))
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

func memoryOf(n *yaml.Node) (Bytes, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("memory is not a scalar")
	}
	if n.Tag == "!!int" {
		v, err := strconv.ParseInt(n.Value, 0, 64)
		return Bytes(v), err
	}
	return ParseBytes(n.Value)
}

var yamlItemFields = []string{"count", "podType", "topology", "chipsPerHost", "cpu", "memory"}

// yamlErrors turns a decoding error into field errors: one per problem
// the decoder reports, naming the line.
func yamlErrors(err error) field.ErrorList {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), strings.TrimPrefix(err.Error(), "yaml: "), "not valid YAML")}
	}
	var out field.ErrorList
	for _, msg := range te.Errors {
		line, rest, _ := strings.Cut(msg, ": ")
		if name, ok := strings.CutPrefix(rest, "field "); ok {
			if name, in, ok := strings.Cut(name, " not found in type "); ok {
				p := field.NewPath("nodes")
				valid := yamlItemFields
				if strings.HasSuffix(in, "yamlSpec") {
					p, valid = field.NewPath("spec"), []string{"nodes"}
				}
				e := field.NotSupported(p, name, valid)
				e.Detail = "unknown field on " + line
				out = append(out, e)
				continue
			}
		}
		out = append(out, field.Invalid(field.NewPath("spec"), msg, "want a mapping with a list under \"nodes\", each item a mapping of "+strings.Join(yamlItemFields, ", ")))
	}
	return out
}
