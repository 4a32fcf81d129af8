// Package freeform checks and copies the free-form values of a Serve
// config (an application's args, a deployment's user_config, Serve LLM's
// engine_kwargs and runtime_env extras): maps, lists and scalars a user
// builds in Go, which reach Ray as JSON. Every walk is bounded: a value
// that holds itself, nests past MaxDepth or holds more than MaxValues
// values is refused at the path where it does so, never walked without
// end.
package freeform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"

	"github.com/raytpu/raytpu/field"
)

// MaxDepth is how deeply maps and lists may nest in a free-form value
// (serveconfig's encoder has the same bound).
const MaxDepth = 64

// MaxValues is the most values (maps, lists and scalars, counted where
// they appear, so a map held twice counts twice) one free-form value may
// hold: what it costs to encode, not what it costs in memory.
const MaxValues = 1 << 20

// Check reports at p whatever keeps v from being sent as JSON: a map or
// list that holds itself (at the path that leads back to it), nesting
// past MaxDepth, more than MaxValues values, or a value JSON cannot hold
// (NaN, a channel), at its own path. Bad values are described (an object,
// a list, the Go type), never printed as a Go map.
func Check(p *field.Path, v any) field.ErrorList {
	w := walker{}
	w.walk(p, v)
	return w.errs
}

type walker struct {
	errs   field.ErrorList
	values int
	// stack holds the maps and lists from the root to the value being
	// walked, with their paths: a value already on it holds itself.
	stack []ancestor
}

type ancestor struct {
	ptr  uintptr
	n    int
	kind reflect.Kind
	path *field.Path
}

// walk checks v at p.
func (w *walker) walk(p *field.Path, v any) {
	if len(w.errs) > 0 {
		return // the first problem of a value is enough; the rest follow from it
	}
	w.values++
	if w.values > MaxValues {
		w.errs = append(w.errs, field.Invalid(p, Describe(v), fmt.Sprintf("the value holds more than %d values in all (a map or list held many times counts each time): send less, or a reference to it", MaxValues)))
		return
	}
	switch v := v.(type) {
	case nil, string, bool, int, int64, json.Number:
		return
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			w.errs = append(w.errs, field.Invalid(p, Describe(v), "must be a finite number: JSON has no NaN or infinity"))
		}
		return
	case map[string]any:
		if v == nil || !w.enter(p, reflect.ValueOf(v).Pointer(), 0, reflect.Map) {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			w.walk(p.Key(k), v[k])
		}
		w.leave()
		return
	case []any:
		if len(v) == 0 || !w.enter(p, reflect.ValueOf(v).Pointer(), len(v), reflect.Slice) {
			return
		}
		for i, x := range v {
			w.walk(p.Index(i), x)
		}
		w.leave()
		return
	}
	// Any other type is encoding/json's, which refuses a cycle itself.
	if _, err := Marshal(v); err != nil {
		w.errs = append(w.errs, field.Invalid(p, Describe(v), "must be JSON-serialisable: "+err.Error()))
	}
}

// enter pushes a map or list, or reports it: when it is already on the
// stack (it holds itself) or past MaxDepth.
func (w *walker) enter(p *field.Path, ptr uintptr, n int, kind reflect.Kind) bool {
	for _, a := range w.stack {
		if a.ptr == ptr && a.n == n && a.kind == kind {
			w.errs = append(w.errs, field.Invalid(p, describeKind(kind),
				fmt.Sprintf("the value holds itself: it is the %s at %s, which contains it; a JSON value cannot contain itself", nameKind(kind), a.path)))
			return false
		}
	}
	if len(w.stack) >= MaxDepth {
		w.errs = append(w.errs, field.Invalid(p, describeKind(kind), fmt.Sprintf("nests deeper than %d levels of maps and lists", MaxDepth)))
		return false
	}
	w.stack = append(w.stack, ancestor{ptr: ptr, n: n, kind: kind, path: p})
	return true
}

func (w *walker) leave() { w.stack = w.stack[:len(w.stack)-1] }

func describeKind(k reflect.Kind) string {
	if k == reflect.Map {
		return "{...}"
	}
	return "[...]"
}

func nameKind(k reflect.Kind) string {
	if k == reflect.Map {
		return "map"
	}
	return "list"
}

// Marshal encodes v compactly without HTML escaping, as Ray is sent any
// part of a Serve config: the bytes encoding/json's Encoder writes with
// SetEscapeHTML(false), without its trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Describe is how an error shows a free-form value: a scalar as itself,
// a map as {...}, a list as [...], anything else by its Go type.
func Describe(v any) any {
	switch v := v.(type) {
	case nil, string, bool, int, int64, float64, json.Number:
		return v
	case map[string]any:
		return "{...}"
	case []any:
		return "[...]"
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Struct:
		return "{...} (" + rv.Type().String() + ")"
	case reflect.Slice, reflect.Array:
		return "[...] (" + rv.Type().String() + ")"
	}
	return rv.Type().String()
}

// Copy returns a copy of v, a free-form value Check accepted, made of the
// types JSON decodes to (map[string]any, []any, string, bool, nil and
// numbers), sharing nothing that v's owner may change: maps and lists are
// copied, and a value of any other type (a struct, a typed map) is encoded
// and decoded again, numbers as json.Number. The copy marshals to the
// same bytes before and after a JSON round trip, which a struct, whose
// fields encode in declaration order, would not. The walk is bounded as
// Check's is, so an unchecked value gets an error, not a crash.
func Copy(v any) (any, error) { return copyValue(v, 0) }

func copyValue(v any, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("nests deeper than %d levels of maps and lists (or holds itself)", MaxDepth)
	}
	switch v := v.(type) {
	case nil, string, bool, float64, int, json.Number:
		return v, nil
	case map[string]any:
		if v == nil {
			return v, nil
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			c, err := copyValue(x, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		if v == nil {
			return v, nil
		}
		out := make([]any, len(v))
		for i, x := range v {
			c, err := copyValue(x, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	b, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	err = dec.Decode(&out)
	return out, err
}

// CopyMap is Copy of a map, returned as a map.
func CopyMap(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	c, err := Copy(m)
	if err != nil {
		return nil, err
	}
	return c.(map[string]any), nil
}
