package serveconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// A Serve config is encoded by hand, field by field in declaration order,
// producing exactly the bytes encoding/json (without HTML escaping) would:
// the reflection walk was a quarter of Compile. What encoding/json treats
// specially (a runtime_env with its own MarshalJSON, a string needing
// escapes, a user_config value of any other type) goes through
// encoding/json itself. encode_test.go checks every field of every
// config type against encoding/json, so a field added to a type without
// adding it to encode.go fails the tests.

// jsonEnc appends JSON to b; the first error sticks.
type jsonEnc struct {
	b     []byte
	err   error
	depth int // of nested maps and lists in any
}

// maxDepth is how deeply the maps and lists of a free-form value (args,
// user_config, engine_kwargs) may nest. A value nested deeper, or one that
// holds itself, is refused with an error instead of being walked without
// end.
const maxDepth = 64

// errTooDeep is the error of a free-form value nested past maxDepth.
var errTooDeep = fmt.Errorf("nests deeper than %d levels (or holds itself)", maxDepth)

// field writes the separator and the key of an object member.
func (e *jsonEnc) field(first *bool, key string) {
	if !*first {
		e.b = append(e.b, ',')
	}
	*first = false
	e.b = append(e.b, '"')
	e.b = append(e.b, key...)
	e.b = append(e.b, '"', ':')
}

// slow appends v as encoding/json encodes it.
func (e *jsonEnc) slow(v any) {
	raw, err := marshalReflect(v)
	if err != nil && e.err == nil {
		e.err = err
	}
	e.b = append(e.b, raw...)
}

// raw appends a json.RawMessage compacted, as encoding/json does.
func (e *jsonEnc) raw(m json.RawMessage) {
	if plainJSON(m) {
		e.b = append(e.b, m...) // already compact
		return
	}
	buf := bytes.NewBuffer(e.b)
	if err := json.Compact(buf, m); err != nil {
		e.slow(m) // encoding/json's own error
		return
	}
	e.b = buf.Bytes()
}

// plainJSON reports whether m is null or a string of printable ASCII
// without escapes, which json.Compact leaves as it is.
func plainJSON(m []byte) bool {
	if string(m) == "null" {
		return true
	}
	if len(m) < 2 || m[0] != '"' || m[len(m)-1] != '"' {
		return false
	}
	for _, c := range m[1 : len(m)-1] {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func (e *jsonEnc) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			e.slow(s)
			return
		}
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}

// num writes a float64 as encoding/json does: 'f' format, or 'e' with a
// two-digit exponent trimmed below 1e-6 and from 1e21.
func (e *jsonEnc) num(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.slow(f) // encoding/json's UnsupportedValueError
		return
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 && (f != 0 || !math.Signbit(f)) {
		// A whole number: 'f' with the shortest precision writes its
		// digits, as AppendInt does, and faster (-0 is left to AppendFloat).
		e.b = strconv.AppendInt(e.b, int64(f), 10)
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.b = strconv.AppendFloat(e.b, f, format, -1, 64)
	if format == 'e' {
		if n := len(e.b); n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
			e.b[n-2] = e.b[n-1]
			e.b = e.b[:n-1]
		}
	}
}

func (e *jsonEnc) int(i int) { e.b = strconv.AppendInt(e.b, int64(i), 10) }

// sortedKeys returns m's keys in order, in buf when they fit.
func sortedKeys[V any](buf []string, m map[string]V) []string {
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// members writes m as an object, keys in order, each value with val.
func members[V any](e *jsonEnc, m map[string]V, val func(V)) {
	e.b = append(e.b, '{')
	first := true
	var buf [8]string
	for _, k := range sortedKeys(buf[:], m) {
		e.key(&first, k)
		val(m[k])
	}
	e.b = append(e.b, '}')
}

// mapList writes a list of objects, a nil one as null.
func mapList[V any](e *jsonEnc, l []map[string]V, val func(V)) {
	e.b = append(e.b, '[')
	for i, m := range l {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		if m == nil {
			e.b = append(e.b, "null"...)
			continue
		}
		members(e, m, val)
	}
	e.b = append(e.b, ']')
}

func (e *jsonEnc) resources(m map[string]float64) { members(e, m, e.num) }

func (e *jsonEnc) labels(m map[string]string) { members(e, m, e.str) }

// key writes a member whose key is data (escaped as needed).
func (e *jsonEnc) key(first *bool, k string) {
	if !*first {
		e.b = append(e.b, ',')
	}
	*first = false
	e.str(k)
	e.b = append(e.b, ':')
}

func (e *jsonEnc) object(m map[string]any) { members(e, m, e.any) }

// any writes the values a user_config or args usually hold; any other
// type goes through encoding/json.
func (e *jsonEnc) any(v any) {
	switch v.(type) {
	case map[string]any, []any:
		if e.depth >= maxDepth {
			if e.err == nil {
				e.err = errTooDeep
			}
			e.b = append(e.b, "null"...)
			return
		}
		e.depth++
		defer func() { e.depth-- }()
	}
	switch v := v.(type) {
	case nil:
		e.b = append(e.b, "null"...)
	case string:
		e.str(v)
	case bool:
		e.b = strconv.AppendBool(e.b, v)
	case float64:
		e.num(v)
	case int:
		e.int(v)
	case map[string]any:
		if v == nil {
			e.b = append(e.b, "null"...)
			return
		}
		e.object(v)
	case []any:
		if v == nil {
			e.b = append(e.b, "null"...)
			return
		}
		e.b = append(e.b, '[')
		for i, x := range v {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.any(x)
		}
		e.b = append(e.b, ']')
	case *SliceReservation:
		if v == nil {
			e.b = append(e.b, "null"...)
			return
		}
		e.reservation(v)
	default:
		e.slow(v)
	}
}
