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

// cleanJSONError drops encoding/json's Go type names from a decoding
// error; the path already says where.
func cleanJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("want a %s, got a JSON %s", te.Type.Kind(), te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
