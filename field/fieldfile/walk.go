package fieldfile

// The walker checks a decoded YAML node tree against the Go type it is
// loaded into: keys exactly as the JSON tags spell them, unknown keys with
// their line and the nearest key, and scalars of the type wanted.

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/raytpu/raytpu/field"
)

func withLine(e *field.Error, n *yaml.Node) *field.Error {
	e.Line = n.Line
	return e
}

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

type walker struct {
	errs field.ErrorList
}

func (w *walker) add(e *field.Error, n *yaml.Node) {
	w.errs = append(w.errs, withLine(e, n))
}

// child returns the path of key below p (p may be nil: a top-level key).
func child(p *field.Path, key string) *field.Path {
	if p == nil {
		return field.NewPath(key)
	}
	return p.Child(key)
}

func pathOr(p *field.Path) *field.Path {
	if p == nil {
		return field.NewPath("file")
	}
	return p
}

// walk checks node n against Go type t at path p: keys, kinds and scalar
// types, reporting each problem once.
func (w *walker) walk(n *yaml.Node, t reflect.Type, p *field.Path, depth int) {
	if depth > maxDepth {
		w.add(field.Invalid(pathOr(p), nil, fmt.Sprintf("nests deeper than %d levels", maxDepth)), n)
		return
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return
		}
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // null leaves the default
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || t.Kind() == reflect.Interface {
		return // any value
	}
	ft := field.FileType(t)
	custom := reflect.PointerTo(t).Implements(unmarshalerType)
	if custom {
		// A type that decodes itself: its keys and types are checked
		// against its file shape when it has one, then its own decoding
		// runs on this part of the file, so its error has this path.
		if ft != t {
			before := len(w.errs)
			w.walk(n, ft, p, depth+1)
			if len(w.errs) > before {
				return
			}
		}
		x, err := toJSONValue(n, 0)
		if err == nil {
			var js []byte
			if js, err = json.Marshal(x); err == nil {
				err = json.Unmarshal(js, reflect.New(t).Interface())
			}
		}
		if err != nil {
			w.add(field.Invalid(pathOr(p), scalarValue(n), cleanJSONError(err)), n)
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			w.add(field.Invalid(pathOr(p), scalarValue(n), "want a mapping of keys to values, got "+describe(n)), n)
			return
		}
		w.walkStruct(n, t, p, depth)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			w.add(field.Invalid(pathOr(p), scalarValue(n), "want a mapping, got "+describe(n)), n)
			return
		}
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if line, dup := seen[k.Value]; dup {
				w.add(field.Invalid(pathOr(p).Key(k.Value), k.Value, fmt.Sprintf("key given twice (first on line %d)", line)), k)
				continue
			}
			seen[k.Value] = k.Line
			w.walk(val, t.Elem(), pathOr(p).Key(k.Value), depth+1)
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			w.add(field.Invalid(pathOr(p), scalarValue(n), "want a list, got "+describe(n)), n)
			return
		}
		for i, c := range n.Content {
			w.walk(c, t.Elem(), pathOr(p).Index(i), depth+1)
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
			d := "want a string, got " + describe(n)
			if n.Kind == yaml.ScalarNode {
				d += fmt.Sprintf("; quote it to mean the string: %q", n.Value)
			}
			w.add(field.Invalid(pathOr(p), scalarValue(n), d), n)
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			w.add(field.Invalid(pathOr(p), scalarValue(n), "want true or false, got "+describe(n)), n)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil || reflect.Zero(t).OverflowInt(i) {
			w.add(field.Invalid(pathOr(p), scalarValue(n), "want an integer"+rangeOf(t)+", got "+describe(n)), n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var u uint64
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&u) != nil || reflect.Zero(t).OverflowUint(u) {
			w.add(field.Invalid(pathOr(p), scalarValue(n), "want a non-negative integer, got "+describe(n)), n)
		}
	case reflect.Float32, reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			w.add(field.Invalid(pathOr(p), scalarValue(n), "want a number, got "+describe(n)), n)
		}
	}
}

// walkStruct checks a mapping's keys against struct t's file names,
// case-sensitively, and walks each value.
func (w *walker) walkStruct(n *yaml.Node, t reflect.Type, p *field.Path, depth int) {
	fields := field.FileFields(t)
	names := make([]string, len(fields))
	byName := make(map[string]reflect.StructField, len(fields))
	for i, f := range fields {
		names[i], _ = field.FileName(f)
		byName[names[i]] = f
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			w.add(field.Invalid(pathOr(p), nil, "a key must be a name, got "+describe(k)), k)
			continue
		}
		if line, dup := seen[k.Value]; dup {
			w.add(field.Invalid(child(p, k.Value), k.Value, fmt.Sprintf("key given twice (first on line %d)", line)), k)
			continue
		}
		seen[k.Value] = k.Line
		f, ok := byName[k.Value]
		if !ok {
			e := field.NotSupported(child(p, k.Value), k.Value, names)
			e.Detail = "unknown field"
			w.add(e, k)
			continue
		}
		w.walk(val, f.Type, child(p, k.Value), depth+1)
	}
}

// toJSONValue converts a checked node to the value encoding/json writes:
// mappings with string keys, lists, strings, numbers, booleans and null.
func toJSONValue(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nests deeper than %d levels", maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return toJSONValue(n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		return toJSONValue(n.Alias, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := toJSONValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := toJSONValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return l, nil
	}
	switch n.Tag {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		err := n.Decode(&b)
		return b, err
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return i, nil
		}
		var f float64
		err := n.Decode(&f)
		return f, err
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, err
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("line %d: %s is not a number JSON holds", n.Line, n.Value)
		}
		return f, nil
	}
	return n.Value, nil
}

// describe names what a node holds, for "want X, got Y".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!int", "!!float":
		return "the number " + n.Value
	case "!!bool":
		return "the boolean " + n.Value
	case "!!str":
		return strconv.Quote(n.Value)
	case "!!null":
		return "null"
	}
	return n.Value
}

// scalarValue is the bad value an error shows: the scalar as written, or
// what a mapping or a list is.
func scalarValue(n *yaml.Node) any {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return describe(n)
}

func rangeOf(t reflect.Type) string {
	if t.Bits() < 64 {
		return fmt.Sprintf(" of at most %d bits", t.Bits())
	}
	return ""
}
