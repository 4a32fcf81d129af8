// Package field describes validation errors of raytpu specs.
//
// Every spec in raytpu is validated once, at compile time, and every problem
// found is reported at once as an [ErrorList]. Each [Error] carries the path
// of the offending field (for example "trainer.scaling_config.topology"), a [Type], the
// bad value, and for [TypeNotSupported] the valid values and the nearest one.
// Tests and callers match on [Error.Field] and [Error.Type] with [errors.As],
// never on message text.
//
// The package mirrors the shape of Kubernetes' util/validation/field without
// depending on it.
package field

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Path is the location of a field inside a spec, such as
// "trainer.scaling_config.resources_per_worker[TPU]". The zero Path is the root.
// Paths are immutable: Child, Index and Key return new values.
type Path struct {
	parent *Path
	name   string
	index  string // "[3]" or "[key]"; empty for a named element
}

// NewPath returns the path of a top-level field and its children.
func NewPath(name string, more ...string) *Path {
	p := &Path{name: name}
	for _, m := range more {
		p = p.Child(m)
	}
	return p
}

// Child returns the path of a named field below p.
func (p *Path) Child(name string, more ...string) *Path {
	c := &Path{parent: p, name: name}
	for _, m := range more {
		c = c.Child(m)
	}
	return c
}

// Index returns the path of the i-th element of the list at p.
func (p *Path) Index(i int) *Path {
	return &Path{parent: p, index: "[" + strconv.Itoa(i) + "]"}
}

// Key returns the path of the map entry k of the map at p.
func (p *Path) Key(k string) *Path {
	return &Path{parent: p, index: "[" + k + "]"}
}

// String renders the path with dots between names and brackets for
// list indices and map keys.
func (p *Path) String() string {
	if p == nil {
		return ""
	}
	var elems []*Path
	for q := p; q != nil; q = q.parent {
		elems = append(elems, q)
	}
	var b strings.Builder
	for i := len(elems) - 1; i >= 0; i-- {
		e := elems[i]
		if e.index != "" {
			b.WriteString(e.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e.name)
	}
	return b.String()
}

// Type is the kind of a validation error.
type Type string

const (
	// TypeRequired: a required field is empty.
	TypeRequired Type = "Required"
	// TypeInvalid: the value is malformed or breaks a rule.
	TypeInvalid Type = "Invalid"
	// TypeNotSupported: the value is not one of a closed set of values.
	TypeNotSupported Type = "NotSupported"
	// TypeForbidden: the field may not be set in this combination.
	TypeForbidden Type = "Forbidden"
	// TypeTooMany: a count (slices, replicas, workers, bundles, rows) or a
	// length is above raytpu's documented limit for it.
	TypeTooMany Type = "TooMany"
)

// Error is one validation problem.
type Error struct {
	Type  Type
	Field string
	// BadValue is the offending value (nil for Required and most Forbidden).
	BadValue any
	// Detail explains the rule that was broken.
	Detail string
	// ValidValues lists the accepted values for TypeNotSupported.
	ValidValues []string
	// Suggestion is the valid value nearest to BadValue, if any: the
	// value the message proposes.
	Suggestion string
	// Alternatives are other valid values exactly as near as Suggestion
	// (BadValue "v5" is as near to v5e as to v5p); the message proposes
	// them with it. Empty when Suggestion is the one nearest value.
	Alternatives []string
	// Line is the line of the file the value was read from, when it was
	// read from one (1-based; 0 for a spec built in Go).
	Line int
}

// Error renders the problem on one line, with the file's line when it has
// one:
//
//	trainer.scaling_config.topology: Unsupported value: "4x5": did you mean "4x4"? (supported: "2x2", "4x4")
//	app.deployments[0].num_replica (line 5): Unsupported value: "num_replica": unknown field: did you mean "num_replicas"? (supported: ...)
//
// A nil *Error renders as "<nil>".
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString(e.Field)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	b.WriteString(": ")
	switch e.Type {
	case TypeRequired:
		b.WriteString("Required value")
	case TypeForbidden:
		b.WriteString("Forbidden")
	case TypeNotSupported:
		fmt.Fprintf(&b, "Unsupported value: %s", quote(e.BadValue))
	case TypeTooMany:
		fmt.Fprintf(&b, "Too many: %s", quote(e.BadValue))
	default:
		fmt.Fprintf(&b, "Invalid value: %s", quote(e.BadValue))
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Suggestion != "" {
		fmt.Fprintf(&b, ": did you mean %q", e.Suggestion)
		for i, a := range e.Alternatives {
			if i == len(e.Alternatives)-1 {
				fmt.Fprintf(&b, " or %q", a)
			} else {
				fmt.Fprintf(&b, ", %q", a)
			}
		}
		b.WriteByte('?')
	}
	if len(e.ValidValues) > 0 {
		b.WriteString(" (supported: ")
		shown := e.ValidValues
		if len(shown) > maxShown {
			shown = shown[:maxShown]
		}
		for i, v := range shown {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(v))
		}
		if n := len(e.ValidValues) - len(shown); n > 0 {
			fmt.Fprintf(&b, " and %d more", n)
		}
		b.WriteString(")")
	}
	return b.String()
}

// maxShown caps how many valid values an error message lists; the full list
// stays in Error.ValidValues.
const maxShown = 16

func quote(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	default:
		return fmt.Sprintf("%v", v)
	}
}

// Required reports a missing value.
func Required(p *Path, detail string) *Error {
	return &Error{Type: TypeRequired, Field: p.String(), Detail: detail}
}

// Invalid reports a value that breaks a rule.
func Invalid(p *Path, value any, detail string) *Error {
	return &Error{Type: TypeInvalid, Field: p.String(), BadValue: value, Detail: detail}
}

// TooMany reports a count or a length above its limit: value is what the
// user gave, limit the most allowed, and source says where the limit comes
// from (Ray, Kubernetes, the TPU catalog). The detail reads "must be at
// most <limit> (<source>)". Callers check the limit before they allocate
// anything that grows with the value.
func TooMany(p *Path, value any, limit int, source string) *Error {
	d := "must be at most " + strconv.Itoa(limit)
	if source != "" {
		d += " (" + source + ")"
	}
	return &Error{Type: TypeTooMany, Field: p.String(), BadValue: value, Detail: d}
}

// Forbidden reports a field that may not be set here.
func Forbidden(p *Path, detail string) *Error {
	return &Error{Type: TypeForbidden, Field: p.String(), Detail: detail}
}

// NotSupported reports a value outside the closed set valid, and names the
// nearest valid value when one is close enough to be a likely typo.
func NotSupported(p *Path, value any, valid []string) *Error {
	e := &Error{Type: TypeNotSupported, Field: p.String(), BadValue: value, ValidValues: append([]string(nil), valid...)}
	if s, ok := value.(string); ok {
		e.Suggest(NearestAll(s, valid))
	}
	return e
}

// Suggest sets e's Suggestion to the first of near and its Alternatives
// to the rest (none for an empty near). On a nil *Error it does nothing.
func (e *Error) Suggest(near []string) {
	if e == nil {
		return
	}
	e.Suggestion, e.Alternatives = "", nil
	if len(near) > 0 {
		e.Suggestion = near[0]
	}
	if len(near) > 1 {
		e.Alternatives = slices.Clone(near[1:])
	}
}

// WithDetail returns e with its Detail set; it lets a NotSupported error
// explain why the set is what it is. A nil *Error stays nil.
func (e *Error) WithDetail(detail string) *Error {
	if e == nil {
		return nil
	}
	e.Detail = detail
	return e
}

// ErrorList collects every problem found in one validation pass. A non-empty
// list is an error whose parts errors.As can reach.
type ErrorList []*Error

// MaxErrorsShown is how many errors an ErrorList's message lists; past it
// the message ends with "and 8,970 more like it". The list itself keeps
// every error: range over it, or reach it with errors.As or Errors.
const MaxErrorsShown = 20

// Error renders one problem per line, prefixed by the count when there is
// more than one, and at most MaxErrorsShown of them.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s invalid fields:", thousands(len(l)))
	for _, e := range l[:min(len(l), MaxErrorsShown)] {
		b.WriteString("\n  ")
		b.WriteString(e.Error())
	}
	if n := len(l) - MaxErrorsShown; n > 0 {
		fmt.Fprintf(&b, "\n  and %s more like it", thousands(n))
	}
	return b.String()
}

// thousands renders n with a comma between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	start := 0
	if n < 0 {
		start = 1
	}
	for i := len(s) - 3; i > start; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Unwrap exposes every problem to errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// Err returns nil for an empty list and the list itself otherwise, so that
// "return errs.Err()" never yields a non-nil error holding nothing.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Errors returns every *Error inside err, in order: the elements of an
// ErrorList, or a single *Error, found through wrapping, including every
// branch of a multi-error such as errors.Join(a.Err(), b.Err()).
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
			return
		case ErrorList:
			out = append(out, e...)
			return
		case *Error:
			out = append(out, e)
			return
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		case interface{ Unwrap() []error }:
			for _, u := range e.Unwrap() {
				walk(u)
			}
		}
	}
	walk(err)
	return out
}

// Ref names an error by what callers and tests should match on: the field
// path and the error type, never the message.
type Ref struct {
	Field string
	Type  Type
}

// Refs returns the path and type of every error in err, in order (nil when
// err holds none).
func Refs(err error) []Ref {
	var out []Ref
	for _, e := range Errors(err) {
		out = append(out, Ref{e.Field, e.Type})
	}
	return out
}
