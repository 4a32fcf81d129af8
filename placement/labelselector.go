package placement

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/field"
)

// Ray 2.60's label selectors, in two halves that raytpu keeps apart as Ray
// does:
//
//   - which selectors Ray accepts: ray/_private/label_utils.py
//     (validate_label_selector: validate_label_key on every key,
//     LABEL_SELECTOR_REGEX on every value), run by every Ray API that takes
//     a selector (task and actor options, placement_group's
//     bundle_label_selector, Serve's schema);
//   - what an accepted selector means: the raylet's
//     LabelSelector::ParseLabelSelectorValue
//     (src/ray/common/scheduling/label_selector.cc), which the scheduler
//     and the autoscaler both use.
//
// The value forms are
//
//	"v"          the node has the label with value v
//	"!v"         the node lacks the label or its value is not v
//	"in(a,b)"    the node has the label with value a or b
//	"!in(a,b)"   the node lacks the label or its value is neither a nor b
//	""           the node has the label with the empty value
//
// and two quirks of Ray 2.60 follow from the split, both checked against
// a live 2.60 cluster:
//
//   - Ray accepts one space after each comma ("in(a, b)") but the raylet
//     does not trim it: the item is " b", which no node label can hold, so
//     "in(a, b)" never matches a node labelled b, and "!in(a, b)" does not
//     exclude it.
//   - Ray accepts the parentheses without "in" ("(a,b)", "!(a)"), and the
//     raylet reads them as the literal value "(a,b)", which no node label
//     can hold: "(a,b)" matches no node, "!(a,b)" every node.
//
// raytpu accepts and rejects exactly what Ray does and matches as the
// raylet does; [LabelCondition.Unmatchable] names the values no node can
// hold, so that a diagnosis can say why such a bundle never lands.

// LabelSelector is a parsed Ray label selector: one [LabelCondition] per
// key of a label_selector map (or of one bundle's entry of a
// bundle_label_selector), sorted by key. A node matches when it meets every
// condition; the empty selector matches every node.
type LabelSelector []LabelCondition

// LabelCondition is the condition a selector puts on one label key.
type LabelCondition struct {
	Key string
	// Negated is set for "!v" and "!in(...)": the node must lack the label
	// or hold a value that is none of Values.
	Negated bool
	// In is set for "in(...)" and "!in(...)": Values are the items of the
	// list, split at each comma as the raylet splits them (untrimmed).
	// Otherwise Values holds the one value, which for "(a,b)" is "(a,b)".
	In     bool
	Values []string
}

// The forms of a selector value and of a key, for error details.
const (
	labelValueForms = `a label selector value is "v", "!v", "in(v1,v2)" or "!in(v1,v2)" (at most one space after a comma), ` +
		`each v at most 63 characters, alphanumeric at both ends, with - _ . between`
	labelKeyForms = `a label key is [prefix/]name: the name at most 63 characters, alphanumeric at both ends, with - _ . between; ` +
		`the prefix DNS labels separated by dots, at most 253 characters`
)

// labelPrefix is Ray's LABEL_PREFIX_REGEX, verbatim: DNS labels separated
// by dots, any of them empty.
var labelPrefix = regexp.MustCompile(`^(([a-zA-Z0-9]([a-zA-Z0-9_.-]{0,61}[a-zA-Z0-9])?)?(\.([a-zA-Z0-9]([a-zA-Z0-9_.-]{0,61}[a-zA-Z0-9])?)?)*)$`)

// ValidateLabelSelector checks sel as Ray's validate_label_selector does,
// reporting every bad entry (Ray reports the first) at p.Key(key), keys
// sorted: a bad key, or else a bad value. Each error names the bad key or
// value and the valid forms. A nil or empty selector is valid.
func ValidateLabelSelector(p *field.Path, sel map[string]string) field.ErrorList {
	// A valid selector (the common case) is checked without allocating:
	// the keys are sorted, and the paths built, only once one is bad.
	bad := false
	for k, v := range sel {
		if labelKeyProblem(k) != "" || labelValueProblem(v) != "" {
			bad = true
			break
		}
	}
	if !bad {
		return nil
	}
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		v := sel[k]
		if why := labelKeyProblem(k); why != "" {
			errs = append(errs, field.Invalid(p.Key(k), k, why+"; "+labelKeyForms))
		} else if why := labelValueProblem(v); why != "" {
			errs = append(errs, field.Invalid(p.Key(k), v, why+"; "+labelValueForms))
		}
	}
	return errs
}

// ParseLabelSelector validates sel (see [ValidateLabelSelector]) and parses
// it. It returns nil for an empty selector.
func ParseLabelSelector(p *field.Path, sel map[string]string) (LabelSelector, field.ErrorList) {
	if errs := ValidateLabelSelector(p, sel); len(errs) > 0 {
		return nil, errs
	}
	return NewLabelSelector(sel), nil
}

// NewLabelSelector parses sel as the raylet does, without validating it:
// for a selector Ray has already accepted (one read back from a live
// placement group) or one the caller built. Conditions are sorted by key;
// nil for an empty selector.
func NewLabelSelector(sel map[string]string) LabelSelector {
	if len(sel) == 0 {
		return nil
	}
	out := make(LabelSelector, 0, len(sel))
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		out = append(out, ParseLabelCondition(k, sel[k]))
	}
	return out
}

// ParseLabelCondition parses one selector entry as the raylet's
// ParseLabelSelectorValue does, for any string: a leading "!" negates; a
// value "in(...)" is a list split at every comma, with nothing trimmed and
// a trailing empty item dropped; anything else is a single value.
func ParseLabelCondition(key, value string) LabelCondition {
	c := LabelCondition{Key: key}
	v := value
	if rest, ok := strings.CutPrefix(v, "!"); ok {
		c.Negated, v = true, rest
	}
	inner, ok := strings.CutPrefix(v, "in(")
	if !ok || !strings.HasSuffix(inner, ")") {
		c.Values = []string{v}
		return c
	}
	c.In = true
	inner = inner[:len(inner)-1]
	c.Values = make([]string, 0, strings.Count(inner, ",")+1)
	for inner != "" { // the raylet's loop: "a," is {a}, "" is {}
		item, rest, more := strings.Cut(inner, ",")
		c.Values = append(c.Values, item)
		if !more {
			break
		}
		inner = rest
	}
	return c
}

// Matches reports whether a node meets c: present says whether it has the
// label, value is the label's value.
func (c LabelCondition) Matches(value string, present bool) bool {
	in := present && slices.Contains(c.Values, value)
	return in != c.Negated
}

// String renders c's value in Ray's syntax; for a condition parsed from a
// value Ray accepts it is that value, byte for byte.
func (c LabelCondition) String() string {
	s := ""
	if c.Negated {
		s = "!"
	}
	if c.In {
		return s + "in(" + strings.Join(c.Values, ",") + ")"
	}
	if len(c.Values) > 0 {
		s += c.Values[0]
	}
	return s
}

// Unmatchable returns the values of c that no node label can hold (node
// label values are empty or alphanumeric at both ends): an item of
// "in(a, b)" with the space Ray keeps, or the literal "(a,b)" of a value
// written without "in". A positive condition whose values are all
// unmatchable matches no node; a negated one excludes nothing through them.
func (c LabelCondition) Unmatchable() []string {
	var out []string
	for _, v := range c.Values {
		if v != "" && !labelValueOK(v) {
			out = append(out, v)
		}
	}
	return out
}

// Matches reports whether a node with labels meets every condition of s.
func (s LabelSelector) Matches(labels map[string]string) bool {
	for i := range s {
		v, ok := labels[s[i].Key]
		if !s[i].Matches(v, ok) {
			return false
		}
	}
	return true
}

// String renders s as {key: value, ...} in Ray's syntax, as
// [FormatSelector] renders the map it was parsed from.
func (s LabelSelector) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Key + ": " + c.String())
	}
	b.WriteByte('}')
	return b.String()
}

// UnmatchableNote explains, for a selector no node matches, the values of
// its positive conditions that no node label can hold, and how to write
// them; "" when there are none.
func (s LabelSelector) UnmatchableNote() string {
	var b strings.Builder
	for i := range s {
		c := s[i]
		if c.Negated {
			continue
		}
		for _, v := range c.Unmatchable() {
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			switch {
			case c.In && strings.HasPrefix(v, " "):
				b.WriteString(c.Key + ": Ray 2.60 keeps the space after a comma in " + strconv.Quote(c.String()) +
					", so its item " + strconv.Quote(v) + " matches no node label; write " + strconv.Quote(trimmedIn(c)))
			case strings.HasPrefix(v, "("):
				b.WriteString(c.Key + ": Ray reads " + strconv.Quote(v) + " without \"in\" as that literal value, which no node label holds; write " +
					strconv.Quote("in"+strings.ReplaceAll(v, ", ", ",")))
			default:
				b.WriteString(c.Key + ": no node label can hold the value " + strconv.Quote(v))
			}
		}
	}
	return b.String()
}

// trimmedIn renders an in(...) condition with its items trimmed.
func trimmedIn(c LabelCondition) string {
	t := c
	t.Values = make([]string, len(c.Values))
	for i, v := range c.Values {
		t.Values[i] = strings.TrimSpace(v)
	}
	return t.String()
}

// labelKeyProblem says why Ray's validate_label_key rejects k, or "".
func labelKeyProblem(k string) string {
	name := k
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		prefix := k[:i]
		name = k[i+1:]
		if len(prefix) > 253 {
			return "the prefix is " + strconv.Itoa(len(prefix)) + " characters long"
		}
		if !labelPrefix.MatchString(prefix) {
			return "the prefix " + strconv.Quote(prefix) + " is not DNS labels separated by dots"
		}
	}
	if !labelValueOK(name) {
		return "the name " + strconv.Quote(name) + " " + labelProblem(name)
	}
	return ""
}

// labelValueProblem says why Ray's LABEL_SELECTOR_REGEX,
//
//	^!?(?:in)?\(L(?:, ?L)*\)$|^!?L$
//
// with L a label value, rejects v, or "". Ray accepts the empty string.
func labelValueProblem(v string) string {
	if v == "" {
		return ""
	}
	rest := v
	if rest[0] == '!' {
		rest = rest[1:]
		switch {
		case rest == "":
			return `"!" needs a value after it`
		case rest[0] == '!':
			return `only one "!" may lead`
		}
	}
	if strings.IndexByte(rest, '(') < 0 {
		if labelValueOK(rest) {
			return ""
		}
		return strconv.Quote(rest) + " " + labelProblem(rest)
	}
	// The list form: an optional "in", then "(", the items, ")".
	list := rest
	if strings.HasPrefix(list, "in(") {
		list = list[2:]
	}
	switch {
	case list[0] != '(':
		return `only "in" may come before "("`
	case len(list) < 2 || list[len(list)-1] != ')':
		return `the list must end with ")"`
	}
	inner := list[1 : len(list)-1]
	if inner == "" {
		return "the list needs at least one value"
	}
	for i := 0; ; i++ {
		item, tail, more := strings.Cut(inner, ",")
		if i > 0 {
			item = strings.TrimPrefix(item, " ")
		}
		switch {
		case i > 0 && strings.HasPrefix(item, " "):
			return "at most one space may follow a comma"
		case item == "":
			return "the list has an empty item"
		case !labelValueOK(item):
			return "the item " + strconv.Quote(item) + " " + labelProblem(item)
		}
		if !more {
			return ""
		}
		inner = tail
	}
}

// labelValueOK reports whether s matches Ray's LABEL_REGEX, the syntax of a
// label name and of a non-empty label value: 1 to 63 characters,
// alphanumeric at both ends, with - _ . between.
func labelValueOK(s string) bool {
	n := len(s)
	if n == 0 || n > 63 || !isAlnum(s[0]) || !isAlnum(s[n-1]) {
		return false
	}
	for i := 1; i < n-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// labelProblem says what breaks LABEL_REGEX in s (one that does).
func labelProblem(s string) string {
	n := len(s)
	switch {
	case n == 0:
		return "is empty"
	case n > 63:
		return "is " + strconv.Itoa(n) + " characters long"
	case strings.HasPrefix(s, " ") || strings.HasSuffix(s, " "):
		return "has a space at an end"
	case !isAlnum(s[0]) || !isAlnum(s[n-1]):
		return "does not begin and end with a letter or digit"
	}
	return "has a character other than letters, digits, - _ ."
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
