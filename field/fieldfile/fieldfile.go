// Package fieldfile is the one strict loader of the files a raytpu user
// writes: Serve application files, data pipeline files, simulated cluster
// specs and compiled plans. Each is YAML (JSON is YAML) holding exactly one
// document, read into a Go value by the value's JSON names (see
// field.FileName), with every problem reported at once as a
// field.ErrorList in the file's spelling, each with its line:
//
//   - keys match case-sensitively; an unknown key is NotSupported, with
//     the keys valid there and the nearest one ("did you mean
//     num_replicas?");
//   - a value of the wrong type names the field and the type it takes
//     (topology: 16 is a number where a string goes: quote it);
//   - a second document is an error, never dropped;
//   - a file over MaxFileSize is refused before it is parsed.
//
// A file that is not of the kind expected comes back as a *KindError
// naming the kind, wrapping the field errors.
//
// It imports field and go.yaml.in/yaml/v3 only (it is part of the field
// leaf), so every front end, backend and the CLI can use it.
package fieldfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/raytpu/raytpu/field"
)

// MaxFileSize is the largest file Load and Decode read: 4 MiB, far above
// any workload file, below the memory a YAML parser may spend on it.
const MaxFileSize = 4 << 20

// maxDepth bounds how deep a document nests (aliases included).
const maxDepth = 64

// Kind names a kind of file a user writes.
type Kind string

// The kinds of files.
const (
	ServeApplication Kind = "Serve application"
	DataPipeline     Kind = "data pipeline file"
	ClusterSpec      Kind = "cluster spec"
	CompiledPlan     Kind = "compiled plan"
)

// KindError reports a file that is not a valid file of the kind expected.
// Err holds the field errors (errors.As and field.Errors reach them).
type KindError struct {
	// File is the file's path, empty for bytes that came from no file.
	File string
	// Want is the kind of file expected.
	Want Kind
	Err  error
}

func (e *KindError) Error() string {
	prefix := ""
	if e.File != "" {
		prefix = e.File + ": "
	}
	return fmt.Sprintf("%snot a valid %s: %v", prefix, e.Want, e.Err)
}

func (e *KindError) Unwrap() error { return e.Err }

// Load reads the file at path as a file of kind k into v (a pointer),
// reporting paths under root (nil: the file's top-level keys). An error
// is a *KindError, or the error of reading the file.
func Load(path string, k Kind, root *field.Path, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return err
	}
	if errs := Decode(b, root, v); len(errs) > 0 {
		return &KindError{File: path, Want: k, Err: errs}
	}
	return nil
}

// Decode reads one YAML (or JSON) document from b into v, a pointer,
// strictly; see the package documentation. It returns every problem found,
// with paths under root; v is set only when there are none.
func Decode(b []byte, root *field.Path, v any) field.ErrorList {
	rootName := root.String()
	at := func() *field.Path { return root }
	if root == nil {
		at = func() *field.Path { return field.NewPath("file") }
	}
	if len(b) > MaxFileSize {
		return field.ErrorList{field.TooMany(at(), fmt.Sprintf("%d bytes", len(b)), MaxFileSize, "bytes in a file raytpu reads")}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return field.ErrorList{field.Required(at(), "the file is empty")}
		}
		return field.ErrorList{syntaxError(at(), err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		e := field.Invalid(at(), "---", "the file holds more than one YAML document; put one in each file")
		if err == nil {
			e.Line = extra.Line
		} else {
			e = syntaxError(at(), err)
		}
		return field.ErrorList{e}
	}
	body := &doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		body = doc.Content[0]
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return field.ErrorList{field.Invalid(at(), fmt.Sprintf("%T", v), "fieldfile: Decode needs a non-nil pointer")}
	}
	w := walker{}
	if body.Kind == yaml.ScalarNode && body.Tag == "!!null" {
		return field.ErrorList{withLine(field.Required(at(), "the file holds no value"), body)}
	}
	w.walk(body, rv.Type().Elem(), root, 0)
	if len(w.errs) > 0 {
		return w.errs
	}
	x, err := toJSONValue(body, 0)
	if err != nil {
		return field.ErrorList{field.Invalid(at(), rootName, err.Error())}
	}
	js, err := json.Marshal(x)
	if err != nil {
		return field.ErrorList{field.Invalid(at(), rootName, err.Error())}
	}
	jd := json.NewDecoder(bytes.NewReader(js))
	jd.DisallowUnknownFields()
	if err := jd.Decode(v); err != nil {
		// The walk checked keys and types; what is left is a rule of a
		// type's own decoding.
		return field.ErrorList{withLine(field.Invalid(at(), nil, cleanJSONError(err)), body)}
	}
	return nil
}

func syntaxError(p *field.Path, err error) *field.Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := field.Invalid(p, msg, "not valid YAML")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, _, ok := strings.Cut(rest, ":"); ok {
			if line, err := strconv.Atoi(n); err == nil {
				e.Line = line
				e.BadValue = strings.TrimSpace(rest[len(n)+1:])
			}
		}
	}
	return e
}

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

// cleanJSONError drops encoding/json's Go type names from a decoding
// error; the path already says where.
func cleanJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("want a %s, got a JSON %s", te.Type.Kind(), te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
