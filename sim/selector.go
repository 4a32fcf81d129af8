package sim

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// A label selector maps a label key to a condition, in Ray's syntax
// (ray/_private/label_utils.py):
//
//	"v"          the node has the label with value v
//	"!v"         the node lacks the label or its value is not v
//	"in(a,b)"    the node has the label with value a or b
//	"!in(a,b)"   the node lacks the label or its value is neither a nor b
//
// Conditions on different keys must all hold.
type constraint struct {
	key    string
	neg    bool
	values []string // one for equality
}

type selector []constraint

var (
	labelValueRE = `[a-zA-Z0-9]([a-zA-Z0-9_.-]{0,61}[a-zA-Z0-9])?`
	selectorRE   = regexp.MustCompile(`^!?(in\(` + labelValueRE + `(, ?` + labelValueRE + `)*\)|` + labelValueRE + `)$`)
	labelNameRE  = regexp.MustCompile(`^` + labelValueRE + `$`)
	labelPrefRE  = regexp.MustCompile(`^` + labelValueRE + `(\.` + labelValueRE + `)*$`)
)

// checkLabelKey mirrors Ray's validate_label_key.
func checkLabelKey(k string) string {
	prefix, name, ok := strings.Cut(k, "/")
	if !ok {
		name, prefix = k, ""
	}
	if ok && (len(prefix) > 253 || !labelPrefRE.MatchString(prefix)) {
		return fmt.Sprintf("label key %q: the prefix before '/' must be a DNS subdomain", k)
	}
	if len(name) > 63 || !labelNameRE.MatchString(name) {
		return fmt.Sprintf("label key %q: the name must be at most 63 characters, alphanumeric at both ends, with - _ . between", k)
	}
	return ""
}

// checkSelectorValue mirrors Ray's validate_label_selector_value.
func checkSelectorValue(v string) string {
	if v == "" || selectorRE.MatchString(v) {
		return ""
	}
	return fmt.Sprintf("label selector value %q: want a value, !value, in(a,b) or !in(a,b); values are at most 63 characters, alphanumeric at both ends, with - _ . between", v)
}

// parseSelector turns a validated selector map into constraints, sorted by key.
func parseSelector(m map[string]string) selector {
	if len(m) == 0 {
		return nil
	}
	out := make(selector, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		c := constraint{key: k}
		if rest, ok := strings.CutPrefix(v, "!"); ok {
			c.neg, v = true, rest
		}
		if inner, ok := strings.CutPrefix(v, "in("); ok && strings.HasSuffix(inner, ")") {
			for _, x := range strings.Split(strings.TrimSuffix(inner, ")"), ",") {
				c.values = append(c.values, strings.TrimSpace(x))
			}
		} else {
			c.values = []string{v}
		}
		out = append(out, c)
	}
	return out
}

// match reports whether a label (present, with value v) meets c.
func (c *constraint) match(v string, present bool) bool {
	in := present && slices.Contains(c.values, v)
	return in != c.neg
}

// pins reports whether c names the label's value positively (an equality
// or in()), so that only nodes with one of c.values can match.
func (c *constraint) pins() bool { return !c.neg }
