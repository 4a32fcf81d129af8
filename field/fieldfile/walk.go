package fieldfile

// The walker checks the document's values (tree.go) against the Go type
// they are loaded into: keys exactly as the JSON tags spell them, unknown
// keys with their line and the nearest key, scalars of the type wanted,
// free-form values (args, user_config) that JSON can hold, and the budget
// of values the document may expand to through its aliases.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/raytpu/raytpu/field"
)

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

type walker struct {
	errs field.ErrorList
	// count is the values walked (or passed over whole) so far; budget
	// is the most the document may expand to; size is the file's bytes.
	count, budget int64
	size          int
	stopped       bool
	// reported holds the bad values already reported, each once.
	reported map[*value]bool
	// numbers holds the plain scalars PyYAML reads as strings (1e5) that
	// a number field takes as JSON numbers, as Ray's pydantic does.
	numbers map[*value]bool
	// root and stack are the path of the value being walked.
	root  *field.Path
	stack []seg
}

func newWalker(root *field.Path, budget int64, size int) *walker {
	return &walker{root: root, budget: budget, size: size, reported: map[*value]bool{}, numbers: map[*value]bool{}}
}

// seg is one step of the path to the value being walked.
type seg struct {
	how  uint8
	name string
	i    int
}

const (
	atChild uint8 = iota
	atKey
	atIndex
)

func (w *walker) push(how uint8, name string, i int) {
	w.stack = append(w.stack, seg{how, name, i})
}

func (w *walker) pop() { w.stack = w.stack[:len(w.stack)-1] }

// path is the path of the value being walked (nil: the file, when the
// root is nil and no key was entered).
func (w *walker) path() *field.Path {
	p := w.root
	for _, s := range w.stack {
		switch s.how {
		case atChild:
			p = child(p, s.name)
		case atKey:
			p = pathOr(p).Key(s.name)
		default:
			p = pathOr(p).Index(s.i)
		}
	}
	return p
}

// at is the path an error names.
func (w *walker) at() *field.Path { return pathOr(w.path()) }

func (w *walker) add(e *field.Error, line int32) {
	e.Line = int(line)
	w.errs = append(w.errs, e)
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

// enter counts the value e leads to, or reports that it takes the
// document past its budget: at the alias (or the merge key) through which
// the values past the budget come.
func (w *walker) enter(e edge, from *yaml.Node) bool {
	if w.stopped {
		return false
	}
	via := e.via
	if via == nil {
		via = from
	}
	if via != nil && w.count+e.v.size() > w.budget {
		w.overBudget(e.v, via)
		return false
	}
	w.count += e.v.own()
	if w.count > w.budget {
		w.overBudget(e.v, nil)
		return false
	}
	return true
}

// pass counts the rest of a value that is not walked (it is refused, or
// its type decodes itself), so that the budget still bounds converting it.
func (w *walker) pass(v *value) {
	w.count = addSat(w.count, v.size()-v.own())
	if w.count > w.budget && !w.stopped {
		w.overBudget(v, nil)
	}
}

func (w *walker) overBudget(v *value, via *yaml.Node) {
	w.stopped = true
	var what string
	line := v.line
	switch {
	case via == nil:
		what = fmt.Sprintf("more than %d values", w.budget)
	case via.Kind == yaml.AliasNode && v.c == nil:
		what = fmt.Sprintf("*%s, a scalar of %d bytes, counts as %d values", via.Value, len(v.s), v.size())
		line = int32(via.Line)
	case via.Kind == yaml.AliasNode:
		what = "*" + via.Value + " expands to " + strconv.FormatInt(v.size(), 10) + " values"
		line = int32(via.Line)
	default:
		what = fmt.Sprintf("<< on line %d merges %d values", via.Line, v.size())
		line = int32(via.Line)
	}
	if v.size() == math.MaxInt64 {
		what = strings.Replace(what, strconv.FormatInt(v.size(), 10), "more than "+strconv.FormatInt(math.MaxInt64, 10), 1)
	}
	w.add(field.TooMany(w.at(), what, int(w.budget),
		fmt.Sprintf("values a %d-byte file may expand to through YAML aliases and merge keys: %d per byte, at most %d; a scalar counts one value for each %d bytes", w.size, perByte, maxValues, scalarBytes)), line)
}

// bad reports a value PyYAML or Ray would not take, once.
func (w *walker) bad(v *value) {
	if w.reported[v] {
		return
	}
	w.reported[v] = true
	w.add(field.Invalid(w.at(), v.raw(), v.s), v.line)
}

func (w *walker) tooDeep(v *value) {
	w.add(field.Invalid(w.at(), nil, fmt.Sprintf("nests deeper than %d levels", maxDepth)), v.line)
}

// walk checks the value e leads to against Go type t at l: keys, kinds
// and scalar types, reporting each problem once. from is the merge key's
// value that brought it, if one did.
func (w *walker) walk(e edge, t reflect.Type, depth int, from *yaml.Node) {
	v := e.v
	if !w.enter(e, from) {
		return
	}
	if depth > maxDepth {
		w.tooDeep(v)
		w.pass(v)
		return
	}
	if v.kind == kNull {
		return // null leaves the default
	}
	if v.kind == kBad {
		w.bad(v)
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || t.Kind() == reflect.Interface {
		w.count -= v.own()
		w.free(e, depth, from)
		return
	}
	ft := field.FileType(t)
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		// A type that decodes itself: its keys and types are checked
		// against its file shape when it has one, then its own decoding
		// runs on this part of the file, so its error has this path.
		before := len(w.errs)
		w.count -= v.own()
		if ft != t {
			w.walk(e, ft, depth, from)
		} else {
			w.free(e, depth, from)
		}
		if len(w.errs) > before || w.stopped {
			return
		}
		var buf bytes.Buffer
		w.writeJSON(&buf, v)
		if err := json.Unmarshal(buf.Bytes(), reflect.New(t).Interface()); err != nil {
			w.add(field.Invalid(w.at(), scalarValue(v), cleanJSONError(err)), v.line)
		}
		return
	}
	want := ""
	switch t.Kind() {
	case reflect.Struct:
		if v.kind != kMap {
			want = "want a mapping of keys to values, got " + describeValue(v)
			break
		}
		w.walkStruct(v, t, depth)
	case reflect.Map:
		if v.kind != kMap {
			want = "want a mapping, got " + describeValue(v)
			break
		}
		w.walkMap(v, depth, t.Elem())
	case reflect.Slice, reflect.Array:
		if v.kind != kSeq {
			want = "want a list, got " + describeValue(v)
			break
		}
		for i, c := range v.c.items {
			w.push(atIndex, "", i)
			w.walk(c, t.Elem(), depth+1, nil)
			w.pop()
		}
	case reflect.String:
		if v.kind != kStr {
			want = "want a string, got " + describeValue(v)
			if v.kind != kMap && v.kind != kSeq {
				want += fmt.Sprintf("; quote it to mean the string: %q", v.raw())
			}
		}
	case reflect.Bool:
		if v.kind != kBool {
			want = "want true or false, got " + describeValue(v)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(v.s, 10, 64)
		if v.kind != kInt || err != nil || reflect.Zero(t).OverflowInt(i) {
			want = "want an integer" + rangeOf(t) + ", got " + describeValue(v)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, err := strconv.ParseUint(v.s, 10, 64)
		if v.kind != kInt || err != nil || reflect.Zero(t).OverflowUint(u) {
			want = "want a non-negative integer, got " + describeValue(v)
		}
	case reflect.Float32, reflect.Float64:
		switch {
		case v.kind == kInt:
		case v.kind == kFloat && !math.IsNaN(v.f) && !math.IsInf(v.f, 0):
		case v.kind == kStr && v.plain && isDecimalNumber(v.s):
			// 1e5 and -.5 are strings to PyYAML, which Ray's pydantic
			// reads as the numbers; JSON (a compiled plan) writes 1e-07.
			w.numbers[v] = true
		case v.kind == kFloat:
			want = "want a number, got " + describeValue(v) + ", which JSON cannot hold"
		default:
			want = "want a number, got " + describeValue(v)
		}
	}
	if want != "" {
		w.add(field.Invalid(w.at(), scalarValue(v), want), v.line)
		w.pass(v)
	}
}

// isDecimalNumber reports a finite decimal number (see reDecimal).
func isDecimalNumber(s string) bool {
	if !reDecimal.MatchString(s) {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && !math.IsInf(f, 0)
}

// walkStruct checks a mapping's keys against struct t's file names,
// case-sensitively, and walks each value.
func (w *walker) walkStruct(v *value, t reflect.Type, depth int) {
	if v.c.bad != nil {
		w.add(field.Invalid(w.at(), "<<", v.c.bad.msg), int32(v.c.bad.line))
	}
	fields := field.FileFields(t)
	names := make([]string, len(fields))
	byName := make(map[string]reflect.StructField, len(fields))
	for i, f := range fields {
		names[i], _ = field.FileName(f)
		byName[names[i]] = f
	}
	seen := map[string]*value{}
	for i, pr := range v.c.pairs {
		if w.stopped {
			return
		}
		k := pr.key.v
		if k.kind != kStr {
			if k.kind == kMap || k.kind == kSeq || k.kind == kBad {
				w.add(field.Invalid(w.at(), scalarValue(k), keyProblem(k)), k.line)
			} else {
				e := field.NotSupported(child(w.path(), k.raw()), k.raw(), names)
				e.Detail = "unknown field; YAML 1.1, as Ray reads it, reads this key as " + describeValue(k) + ", not a name"
				w.add(e, k.line)
			}
			w.pass(pr.val.v)
			continue
		}
		w.push(atChild, k.s, 0)
		if w.key(v.c, i, k.s, seen) {
			if f, ok := byName[k.s]; ok {
				w.walk(pr.val, f.Type, depth+1, v.c.from(i))
			} else {
				e := field.NotSupported(w.at(), k.s, names)
				e.Detail = "unknown field"
				if from := v.c.from(i); from != nil {
					e.Detail += fmt.Sprintf(" (merged by the << on line %d)", from.Line)
				}
				w.add(e, k.line)
				w.pass(pr.val.v)
			}
		}
		w.pop()
	}
}

// key checks the key of pair i of c, whose JSON spelling is name: given
// once, and with one value if merge keys gave it. It reports whether to
// walk the pair's value.
func (w *walker) key(c *coll, i int, name string, seen map[string]*value) bool {
	pr := c.pairs[i]
	k := pr.key.v
	if first, dup := seen[name]; dup {
		d := fmt.Sprintf("key given twice (first on line %d)", first.line)
		if first.raw() != name || k.raw() != name {
			d += fmt.Sprintf("; YAML 1.1, as Ray reads it, reads both %s and %s as %s", first.raw(), k.raw(), name)
		}
		w.add(field.Invalid(w.at(), name, d), k.line)
		w.pass(pr.val.v)
		return false
	}
	seen[name] = k
	if other := c.conflicts[i]; other != nil {
		w.add(field.Invalid(w.at(), k.raw(), fmt.Sprintf("two merge keys (<<) give this key different values (lines %d and %d); PyYAML keeps one or the other by the key's length, so set it here",
			k.line, other.line)), k.line)
	}
	return true
}

// walkMap checks a mapping's keys as JSON holds them (Python's json.dumps
// of the keys PyYAML made) and walks each value as elem, or as a
// free-form value when elem is nil.
func (w *walker) walkMap(v *value, depth int, elem reflect.Type) {
	if v.c.bad != nil {
		w.add(field.Invalid(w.at(), "<<", v.c.bad.msg), int32(v.c.bad.line))
	}
	seen := make(map[string]*value, len(v.c.pairs))
	for i, pr := range v.c.pairs {
		if w.stopped {
			return
		}
		k, ok := keyString(pr.key.v)
		if !ok {
			w.add(field.Invalid(w.at(), scalarValue(pr.key.v), keyProblem(pr.key.v)), pr.key.v.line)
			w.pass(pr.val.v)
			continue
		}
		w.push(atKey, k, 0)
		if w.key(v.c, i, k, seen) {
			if elem == nil {
				w.free(pr.val, depth+1, v.c.from(i))
			} else {
				w.walk(pr.val, elem, depth+1, v.c.from(i))
			}
		}
		w.pop()
	}
}

// free checks a free-form value (args, user_config, engine_kwargs): one
// that JSON holds, of at most maxDepth levels.
func (w *walker) free(e edge, depth int, from *yaml.Node) {
	v := e.v
	if !w.enter(e, from) {
		return
	}
	if depth+int(v.height())-1 > maxDepth {
		w.tooDeep(v)
		w.pass(v)
		return
	}
	switch v.kind {
	case kBad:
		w.bad(v)
	case kTime:
		w.add(field.Invalid(w.at(), v.raw(), "YAML 1.1, as Ray reads it, reads this as a date, which Ray cannot send as JSON; quote it to mean the string"), v.line)
	case kFloat:
		if math.IsNaN(v.f) || math.IsInf(v.f, 0) {
			w.add(field.Invalid(w.at(), v.raw(), "not a number JSON holds (Ray's serve deploy refuses it too)"), v.line)
		}
	case kMap:
		w.walkMap(v, depth, nil)
	case kSeq:
		for i, c := range v.c.items {
			w.push(atIndex, "", i)
			w.free(c, depth+1, nil)
			w.pop()
		}
	}
}

// writeJSON writes a checked value as JSON.
func (w *walker) writeJSON(buf *bytes.Buffer, v *value) {
	switch v.kind {
	case kNull:
		buf.WriteString("null")
	case kBool:
		buf.WriteString(strconv.FormatBool(v.b))
	case kInt:
		buf.WriteString(v.s)
	case kFloat:
		buf.Write(appendJSONFloat(buf.AvailableBuffer(), v.f))
	case kStr:
		if w.numbers[v] {
			f, _ := strconv.ParseFloat(v.s, 64)
			buf.Write(appendJSONFloat(buf.AvailableBuffer(), f))
			return
		}
		writeJSONString(buf, v.s)
	case kMap:
		// Keys in order, as encoding/json writes a map (and as the loader
		// always gave a json.RawMessage field).
		type kv struct {
			k string
			v *value
		}
		kvs := make([]kv, len(v.c.pairs))
		for i, pr := range v.c.pairs {
			kvs[i].k, _ = keyString(pr.key.v)
			kvs[i].v = pr.val.v
		}
		slices.SortFunc(kvs, func(a, b kv) int { return strings.Compare(a.k, b.k) })
		buf.WriteByte('{')
		for i, e := range kvs {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(buf, e.k)
			buf.WriteByte(':')
			w.writeJSON(buf, e.v)
		}
		buf.WriteByte('}')
	case kSeq:
		buf.WriteByte('[')
		for i, c := range v.c.items {
			if i > 0 {
				buf.WriteByte(',')
			}
			w.writeJSON(buf, c.v)
		}
		buf.WriteByte(']')
	default:
		buf.WriteString("null") // refused before: never written
	}
}

// appendJSONFloat writes a finite float as encoding/json does.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-07 is e-7
		b = b[:n-1]
	}
	return b
}

// writeJSONString writes a string as encoding/json does.
func writeJSONString(buf *bytes.Buffer, s string) {
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			simple = false
			break
		}
	}
	if simple {
		buf.WriteByte('"')
		buf.WriteString(s)
		buf.WriteByte('"')
		return
	}
	js, _ := json.Marshal(s)
	buf.Write(js)
}

// scalarValue is the bad value an error shows: the scalar as written, or
// what a mapping or a list is.
func scalarValue(v *value) any {
	if v.kind == kMap || v.kind == kSeq {
		return describeValue(v)
	}
	return v.raw()
}

func rangeOf(t reflect.Type) string {
	if t.Bits() < 64 {
		return fmt.Sprintf(" of at most %d bits", t.Bits())
	}
	return ""
}
