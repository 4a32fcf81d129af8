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
//   - a path that is not a regular file (a named pipe, a directory) is
//     refused before it is opened for reading, and a file over
//     MaxFileSize before it is read (see ReadFile).
//
// Every file means what it means to Ray, which reads its config files
// with PyYAML's yaml.safe_load, a YAML 1.1 reader; raytpu reads all the
// files above so, its own kinds too, so that one file never means two
// things:
//
//   - an untagged plain scalar is resolved as PyYAML's resolver does:
//     yes, no, on, off, true, false (in lower, Title and UPPER case) are
//     booleans; ~, null and nothing are null; 0b1010, 012 (octal), 0x0A,
//     1_000 and 1:30 (sexagesimal, 90) are integers; 1.5, 1., .5, 1.0e+3,
//     .inf and .nan are floats (1e3 and -.5 are strings to PyYAML: a
//     number field takes them as numbers, as Ray's pydantic does, and a
//     free-form field keeps the string); 0o17 is a string; 2001-12-14 is a
//     date; everything else is a string. A quoted or block scalar is a
//     string. user_config: {use_cache: no} holds the boolean false, as
//     in Ray; where a field takes a string, such a value is an error that
//     says to quote it;
//   - a date, .inf and .nan go where JSON cannot hold them (Ray's serve
//     deploy cannot send them either): they are errors;
//   - a mapping key becomes the string Python's json.dumps makes of
//     PyYAML's key (yes: becomes "true", 0x10: "16");
//   - merge keys (<<: *defaults, <<: [*a, *b]) are accepted wherever
//     PyYAML accepts them; a key the mapping gives itself wins over a
//     merged one, and two merged mappings that give one key different
//     values are an error (PyYAML 6.0.4 keeps one or the other depending
//     on the key's length);
//   - tags other than !!str, !!int, !!float, !!bool, !!null, !!map and
//     !!seq are errors.
//
// Work is bounded by the file's size: a document may expand through its
// aliases and merge keys to 32 values per byte of the file (at most
// 1,048,576; a scalar counts one value for each 8 bytes it holds), and
// nest 64 levels deep; past either, the error names the field, and for
// the budget the alias (its name and line) that passes it.
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
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/raytpu/raytpu/field"
)

// MaxFileSize is the largest file Load and Decode read: 1 MiB, far above
// any workload file (a Serve application of a thousand deployments is a
// few hundred kilobytes), and small enough that reading the densest file
// of this size costs under 200 MB.
const MaxFileSize = 1 << 20

// maxDepth bounds how deep a document nests (aliases included).
const maxDepth = 64

// The budget of values a document may expand to through its aliases and
// merge keys: perByte for each byte of the file, at most maxValues. A
// file without aliases holds fewer values than bytes.
const (
	perByte   = 32
	minValues = 4096
	maxValues = 1 << 20
)

func budgetFor(size int) int64 {
	return min(int64(size)*perByte+minValues, maxValues)
}

// Kind names a kind of file a user writes.
type Kind string

// The kinds of files.
const (
	ServeApplication Kind = "Serve application"
	// ServeLLMApplication is a Serve LLM application: build_openai_app's
	// LLMServingArgs (llm_configs, ...) with the application's name,
	// route prefix and runtime_env.
	ServeLLMApplication Kind = "Serve LLM application"
	DataPipeline        Kind = "data pipeline file"
	ClusterSpec         Kind = "cluster spec"
	CompiledPlan        Kind = "compiled plan"
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

// Error renders the kind error; "<nil>" for a nil *KindError.
func (e *KindError) Error() string {
	if e == nil {
		return "<nil>"
	}
	prefix := ""
	if e.File != "" {
		prefix = e.File + ": "
	}
	return fmt.Sprintf("%snot a valid %s: %v", prefix, e.Want, e.Err)
}

// Unwrap returns the field errors (nil for a nil *KindError).
func (e *KindError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Load reads the file at path (see ReadFile) as a file of kind k into v
// (a pointer), reporting paths under root (nil: the file's top-level
// keys). An error is a *KindError, or the error of reading the file.
func Load(path string, k Kind, root *field.Path, v any) error {
	b, err := ReadFile(path)
	if err != nil {
		return err
	}
	if errs := Decode(b, root, v); len(errs) > 0 {
		return &KindError{File: path, Want: k, Err: errs}
	}
	return nil
}

// Decode reads one YAML (or JSON) document from b into v, a pointer,
// strictly, as PyYAML's safe_load reads it; see the package
// documentation. It returns every problem found, with paths under root;
// v is set only when there are none.
func Decode(b []byte, root *field.Path, v any) field.ErrorList {
	at := func() *field.Path { return root }
	if root == nil {
		at = func() *field.Path { return field.NewPath("file") }
	}
	if len(b) > MaxFileSize {
		return field.ErrorList{field.TooMany(at(), fmt.Sprintf("%d bytes", len(b)), MaxFileSize, "bytes in a file raytpu reads")}
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return field.ErrorList{field.Invalid(at(), fmt.Sprintf("%T", v), "fieldfile: Decode needs a non-nil pointer")}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return field.ErrorList{field.Required(at(), "the file is empty")}
		}
		if isDepthError(err) {
			return deepError(b, root, rv.Type().Elem(), syntaxError(at(), err))
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
	budget := budgetFor(len(b))
	bld := newBuilder(b, budget)
	dec = nil
	top := bld.edge(&doc)
	doc = yaml.Node{}
	if bld.stopped {
		what, line := "the document", 0
		if n := bld.over; n != nil {
			what, line = "the merge key (<<) on line "+strconv.Itoa(n.Line), n.Line
			if n.Kind == yaml.AliasNode {
				what = "<<: *" + n.Value
			}
		}
		e := field.TooMany(at(), what, int(budget), fmt.Sprintf("values a %d-byte file may expand to through YAML aliases and merge keys: %d per byte, at most %d; merge keys may copy a quarter of them", len(b), perByte, maxValues))
		e.Line = line
		return field.ErrorList{e}
	}
	if top.v.kind == kNull {
		e := field.Required(at(), "the file holds no value")
		e.Line = int(top.v.line)
		return field.ErrorList{e}
	}
	w := newWalker(root, budget, len(b))
	w.walk(top, rv.Type().Elem(), 0, nil)
	if len(w.errs) > 0 {
		return w.errs
	}
	var js bytes.Buffer
	js.Grow(len(b) + len(b)/4)
	w.writeJSON(&js, top.v)
	line := int(top.v.line)
	// The document is done with: the decoding below may reuse its memory.
	top, bld, w = edge{}, nil, nil
	jd := json.NewDecoder(&js)
	jd.DisallowUnknownFields()
	if err := jd.Decode(v); err != nil {
		// The walk checked keys and types; what is left is a rule of a
		// type's own decoding.
		e := field.Invalid(at(), nil, cleanJSONError(err))
		e.Line = line
		return field.ErrorList{e}
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

// cleanJSONError drops encoding/json's Go type names from a decoding
// error; the path already says where.
func cleanJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("want a %s, got a JSON %s", te.Type.Kind(), te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
