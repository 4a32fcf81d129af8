package placement_test

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// Ray 2.60's own patterns (ray/_private/label_utils.py), verbatim: the
// oracle the hand-written checks are held to.
const rayLabel = `([a-zA-Z0-9]([a-zA-Z0-9_.-]{0,61}[a-zA-Z0-9])?)`

var (
	rayLabelRE    = regexp.MustCompile(`^` + rayLabel + `$`)
	rayPrefixRE   = regexp.MustCompile(`^(` + rayLabel + `?(\.` + rayLabel + `?)*)$`)
	raySelectorRE = regexp.MustCompile(`^!?(?:in)?\(` + rayLabel + `(?:, ?` + rayLabel + `)*\)$|^!?` + rayLabel + `$`)
)

// rayAccepts is Ray's validate_label_selector on a one-entry selector.
func rayAccepts(key, value string) bool {
	name := key
	if i := strings.LastIndex(key, "/"); i >= 0 {
		prefix := key[:i]
		name = key[i+1:]
		if len(prefix) > 253 || !rayPrefixRE.MatchString(prefix) {
			return false
		}
	}
	if len(name) > 63 || !rayLabelRE.MatchString(name) {
		return false
	}
	return value == "" || raySelectorRE.MatchString(value)
}

// selectorValues are label selector values with Ray 2.60's verdict, taken
// from validate_label_selector_value of the installed 2.60.0 wheel.
var selectorValues = []struct {
	v  string
	ok bool
}{
	{"a", true}, {"!a", true}, {"a.b_c-d", true}, {"in", true}, {"!in", true}, {"", true},
	{"in(a,b)", true}, {"in(a, b)", true}, {"in(a, b, c)", true}, {"in(a,b,c)", true},
	{"!in(a,b)", true}, {"in(in)", true}, {"in(b)", true},
	// The parentheses without "in": accepted (serve accepted them, the
	// simulator did not).
	{"(a,b)", true}, {"!(a,b)", true}, {"(a)", true},
	{strings.Repeat("x", 63), true}, {"in(" + strings.Repeat("x", 63) + ")", true},

	{"in(a,  b)", false}, {"in( a,b)", false}, {"in(a ,b)", false}, {"in(a,\tb)", false},
	{"in()", false}, {"in(a,)", false}, {"in(,a)", false}, {"in(a,,b)", false}, {"in(a,b", false},
	{"!!a", false}, {"!", false}, {"a b", false}, {" a", false}, {"a ", false}, {"in(a,b) ", false},
	{strings.Repeat("x", 64), false}, {"in(" + strings.Repeat("x", 64) + ")", false},
	{"a\n", false}, {"In(a)", false}, {"notin(a)", false}, {"é", false}, {"in(-a)", false},
	{"-spot", false}, {"spot_", false}, {"in(H100, TPU!GPU)", false}, {"!!!in(H100, TPU)", false},
	{"a)", false}, {"in(a)b", false}, {"(in(a))", false}, {"in(a)(b)", false}, {"!in", true},
}

// labelKeys are label keys with Ray 2.60's verdict (validate_label_key).
var labelKeys = []struct {
	k  string
	ok bool
}{
	{"a", true}, {"/a", true}, {"a/b", true}, {"a..b/c", true}, {".a/b", true}, {"a./b", true},
	{"ray.io/tpu-worker-id", true}, {"a-.b/c", true},
	{"", false}, {"a/b/c", false}, {"-a/b", false}, {"a_/b", false}, {"a/", false}, {"a/b/", false},
	{strings.Repeat("x", 254) + "/a", false}, {"bad key!", false}, {strings.Repeat("x", 64), false},
}

func TestValidateLabelSelectorAsRay(t *testing.T) {
	t.Parallel()
	for _, c := range selectorValues {
		if got := rayAccepts("k", c.v); got != c.ok {
			t.Fatalf("oracle: Ray's regex on %q = %v, table says %v", c.v, got, c.ok)
		}
		errs := placement.ValidateLabelSelector(field.NewPath("sel"), map[string]string{"k": c.v})
		if (len(errs) == 0) != c.ok {
			t.Errorf("value %q: errors %v, Ray accepts: %v", c.v, errs, c.ok)
		}
	}
	for _, c := range labelKeys {
		if got := rayAccepts(c.k, "v"); got != c.ok {
			t.Fatalf("oracle: Ray's regex on key %q = %v, table says %v", c.k, got, c.ok)
		}
		errs := placement.ValidateLabelSelector(field.NewPath("sel"), map[string]string{c.k: "v"})
		if (len(errs) == 0) != c.ok {
			t.Errorf("key %q: errors %v, Ray accepts: %v", c.k, errs, c.ok)
		}
	}
}

func TestValidateLabelSelectorErrors(t *testing.T) {
	t.Parallel()
	p := field.NewPath("trainer", "scaling", "labelSelector")
	errs := placement.ValidateLabelSelector(p, map[string]string{
		"zone":     "in(a,  b)",
		"bad key!": "x",
		"ok":       "in(a, b)",
		"spot":     "!!true",
		"a/b/c":    "in(a",
	})
	const keyForms, valueForms = "a label key is [prefix/]name", `"v", "!v", "in(v1,v2)" or "!in(v1,v2)"`
	wants := []struct{ field, value, detail, forms string }{
		{"trainer.scaling.labelSelector[a/b/c]", "a/b/c", `the prefix "a/b" is not DNS labels separated by dots`, keyForms},
		{"trainer.scaling.labelSelector[bad key!]", "bad key!", `the name "bad key!" does not begin and end with a letter or digit`, keyForms},
		{"trainer.scaling.labelSelector[spot]", "!!true", `only one "!" may lead`, valueForms},
		{"trainer.scaling.labelSelector[zone]", "in(a,  b)", "at most one space may follow a comma", valueForms},
	}
	if len(errs) != len(wants) {
		t.Fatalf("got %d errors, want %d: %v", len(errs), len(wants), errs)
	}
	for i, w := range wants {
		e := errs[i]
		if e.Type != field.TypeInvalid || e.Field != w.field || e.BadValue != w.value || !strings.HasPrefix(e.Detail, w.detail) {
			t.Errorf("error %d = %s %s %q %q; want Invalid %s %q %q...", i, e.Type, e.Field, e.BadValue, e.Detail, w.field, w.value, w.detail)
		}
		if !strings.Contains(e.Detail, w.forms) {
			t.Errorf("error %d detail %q does not name the valid forms (%s)", i, e.Detail, w.forms)
		}
	}
	// A Ray-style error message a user reads: path, value, what is wrong
	// and what is valid.
	const msg = `trainer.scaling.labelSelector[zone]: Invalid value: "in(a,  b)": at most one space may follow a comma; ` +
		`a label selector value is "v", "!v", "in(v1,v2)" or "!in(v1,v2)" (at most one space after a comma), ` +
		`each v at most 63 characters, alphanumeric at both ends, with - _ . between`
	if got := errs[3].Error(); got != msg {
		t.Errorf("message\n got %s\nwant %s", got, msg)
	}

	if _, errs := placement.ParseLabelSelector(p, map[string]string{"k": "in()"}); len(errs) != 1 {
		t.Errorf("ParseLabelSelector of in(): %v", errs)
	}
	if errs := placement.ValidateLabelSelector(p, nil); errs != nil {
		t.Errorf("nil selector: %v", errs)
	}
}

func TestValidateLabelSelectorValueDetails(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ v, want string }{
		{"!", `"!" needs a value after it`},
		{"!!a", `only one "!" may lead`},
		{"in()", "the list needs at least one value"},
		{"in(a,)", "the list has an empty item"},
		{"in(a,b", `the list must end with ")"`},
		{"in(a,b)x", `the list must end with ")"`},
		{"x(a)", `only "in" may come before "("`},
		{"in( a)", `the item " a" has a space at an end`},
		{"in(a ,b)", `the item "a " has a space at an end`},
		{"in(a,  b)", "at most one space may follow a comma"},
		{"in(a-)", `the item "a-" does not begin and end with a letter or digit`},
		{"-a", `"-a" does not begin and end with a letter or digit`},
		{"a b", `"a b" has a character other than letters, digits, - _ .`},
		{strings.Repeat("x", 64), "is 64 characters long"},
	} {
		errs := placement.ValidateLabelSelector(nil, map[string]string{"k": c.v})
		if len(errs) != 1 || !strings.Contains(errs[0].Detail, c.want) {
			t.Errorf("value %q: %v; want a detail with %q", c.v, errs, c.want)
		}
	}
}

func TestParseLabelCondition(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v       string
		negated bool
		in      bool
		values  []string
	}{
		{"b", false, false, []string{"b"}},
		{"!b", true, false, []string{"b"}},
		{"in(a,b)", false, true, []string{"a", "b"}},
		{"!in(a,b)", true, true, []string{"a", "b"}},
		// Ray's raylet does not trim: the item keeps its space (the live
		// diagnosis split like this; the simulator trimmed).
		{"in(a, b)", false, true, []string{"a", " b"}},
		{"!in(a, b)", true, true, []string{"a", " b"}},
		// Without "in" the parentheses are part of one literal value.
		{"(a,b)", false, false, []string{"(a,b)"}},
		{"!(a)", true, false, []string{"(a)"}},
		{"", false, false, []string{""}},
		{"in", false, false, []string{"in"}},
		// Values Ray rejects still parse, as the raylet would.
		{"in()", false, true, []string{}},
		{"in(a,)", false, true, []string{"a"}},
		{"in(,a)", false, true, []string{"", "a"}},
		{"in(", false, false, []string{"in("}},
		{"!", true, false, []string{""}},
		{"!!a", true, false, []string{"!a"}},
	} {
		got := placement.ParseLabelCondition("k", c.v)
		if got.Key != "k" || got.Negated != c.negated || got.In != c.in || !slices.Equal(got.Values, c.values) {
			t.Errorf("ParseLabelCondition(%q) = %+v; want negated %v, in %v, values %q", c.v, got, c.negated, c.in, c.values)
		}
		if rayAccepts("k", c.v) && got.String() != c.v {
			t.Errorf("ParseLabelCondition(%q).String() = %q", c.v, got.String())
		}
	}
}

// rayMatches is what a Ray 2.60.0 cluster did with a task's label_selector
// and with a one-bundle placement group's bundle_label_selector (the same
// answer for both), on a single node labelled {k: b, e: ""}: whether the
// task ran / the group was placed within 3 seconds. Measured with
// ray.init(labels={"k": "b", "e": ""}).
var rayMatches = []struct {
	key, value string
	match      bool
}{
	{"k", "b", true},
	{"k", "in(a,b)", true},
	{"k", "in(a, b)", false}, // the item is " b"
	{"k", "in(b, a)", true},
	{"k", "!in(a, b)", true}, // excludes "a" and " b", not b
	{"k", "!in(a,b)", false},
	{"k", "(a,b)", false}, // the literal value "(a,b)"
	{"k", "!(a,b)", true},
	{"k", "(b)", false},
	{"k", "!(b)", true},
	{"k", "!b", false},
	{"k", "in(b)", true},
	{"missing", "!b", true},
	{"missing", "!in(a,b)", true},
	{"missing", "in(a,b)", false},
	{"k", "", false},
	{"e", "", true},
	{"missing", "", false},
	{"e", "!x", true},
	{"k", "in", false},
	{"k", "!in", true},
}

func TestLabelSelectorMatchesAsRay(t *testing.T) {
	t.Parallel()
	node := map[string]string{"k": "b", "e": ""}
	for _, c := range rayMatches {
		sel, errs := placement.ParseLabelSelector(nil, map[string]string{c.key: c.value})
		if len(errs) > 0 {
			t.Fatalf("%s: %q: %v", c.key, c.value, errs)
		}
		if got := sel.Matches(node); got != c.match {
			t.Errorf("{%s: %q} on %v: match %v, Ray %v", c.key, c.value, node, got, c.match)
		}
	}
}

func TestLabelSelectorMatches(t *testing.T) {
	t.Parallel()
	sel := placement.NewLabelSelector(map[string]string{
		"ray.io/tpu-pod-type": "in(v6e-16,v6e-32)",
		"zone":                "!us-b",
	})
	if len(sel) != 2 || sel[0].Key != "ray.io/tpu-pod-type" || sel[1].Key != "zone" {
		t.Fatalf("conditions not sorted by key: %+v", sel)
	}
	for _, c := range []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{"ray.io/tpu-pod-type": "v6e-16"}, true},
		{map[string]string{"ray.io/tpu-pod-type": "v6e-32", "zone": "us-a"}, true},
		{map[string]string{"ray.io/tpu-pod-type": "v6e-32", "zone": "us-b"}, false},
		{map[string]string{"ray.io/tpu-pod-type": "v6e-8"}, false},
		{map[string]string{"zone": "us-a"}, false},
		{nil, false},
	} {
		if got := sel.Matches(c.labels); got != c.want {
			t.Errorf("Matches(%v) = %v, want %v", c.labels, got, c.want)
		}
	}
	if !placement.NewLabelSelector(nil).Matches(nil) {
		t.Error("the empty selector must match every node")
	}
}

func TestLabelConditionUnmatchable(t *testing.T) {
	t.Parallel()
	for v, want := range map[string][]string{
		"in(a,b)":  nil,
		"in(a, b)": {" b"},
		"(a,b)":    {"(a,b)"},
		"!(a)":     {"(a)"},
		"a":        nil,
		"":         nil,
	} {
		if got := placement.ParseLabelCondition("k", v).Unmatchable(); !slices.Equal(got, want) {
			t.Errorf("Unmatchable(%q) = %q, want %q", v, got, want)
		}
	}
	for sel, want := range map[string]string{
		"in(a, b)": `zone: Ray 2.60 keeps the space after a comma in "in(a, b)", so its item " b" matches no node label; write "in(a,b)"`,
		"(a, b)":   `zone: Ray reads "(a, b)" without "in" as that literal value, which no node label holds; write "in(a,b)"`,
		"!(a)":     "",
		"in(a,b)":  "",
	} {
		if got := placement.NewLabelSelector(map[string]string{"zone": sel}).UnmatchableNote(); got != want {
			t.Errorf("UnmatchableNote(%q)\n got %q\nwant %q", sel, got, want)
		}
	}
	got := placement.Unplaced{Resources: map[string]float64{"CPU": 1}, Selector: map[string]string{"zone": "in(a, b)"}, NoLabels: true}.InfeasibleReason()
	const want = `bundle 0 {CPU: 1} with label selector {zone: in(a, b)}: no node has labels {zone: in(a, b)} (zone: Ray 2.60 keeps the space after a comma in "in(a, b)", so its item " b" matches no node label; write "in(a,b)")`
	if got != want {
		t.Errorf("InfeasibleReason\n got %s\nwant %s", got, want)
	}
}

func TestSliceSpecValidatesBundleLabelSelector(t *testing.T) {
	t.Parallel()
	spec := placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", BundleLabelSelector: []map[string]string{
		{"zone": "a"}, {"zone": "in(a"}, {}, {"-bad": "x"},
	}}
	_, err := spec.Compile(field.NewPath("slice"))
	var got []string
	for _, e := range field.Errors(err) {
		got = append(got, e.Field+" "+string(e.Type))
	}
	want := []string{"slice.bundleLabelSelector[1][zone] Invalid", "slice.bundleLabelSelector[3][-bad] Invalid"}
	if !slices.Equal(got, want) {
		t.Errorf("errors %q, want %q (%v)", got, want, err)
	}
}

// BenchmarkValidateLabelSelector: checking a valid selector allocates
// nothing (0 allocs/op without -race; the race detector's instrumentation
// may add some), so every compile can afford it.
func BenchmarkValidateLabelSelector(b *testing.B) {
	sel := map[string]string{"ray.io/tpu-pod-type": "in(v6e-16, v6e-32)", "zone": "!us-b", "x.y/z": ""}
	p := field.NewPath("sel")
	b.ReportAllocs()
	for b.Loop() {
		if errs := placement.ValidateLabelSelector(p, sel); errs != nil {
			b.Fatal(errs)
		}
	}
}

func FuzzLabelSelector(f *testing.F) {
	for _, c := range selectorValues {
		f.Add("k", c.v)
	}
	for _, c := range labelKeys {
		f.Add(c.k, "v")
	}
	f.Add("ray.io/tpu-slice-name", "in(v6e-16-0, v6e-16-1)")
	f.Fuzz(func(t *testing.T, key, value string) {
		sel := map[string]string{key: value}
		errs := placement.ValidateLabelSelector(field.NewPath("sel"), sel)
		ray := rayAccepts(key, value)
		if (len(errs) == 0) != ray {
			t.Fatalf("{%q: %q}: errors %v, Ray accepts: %v", key, value, errs, ray)
		}
		c := placement.ParseLabelCondition(key, value) // any string parses
		if c.Key != key || c.Negated != strings.HasPrefix(value, "!") {
			t.Fatalf("ParseLabelCondition(%q, %q) = %+v", key, value, c)
		}
		if !ray {
			e := errs[0]
			var fe *field.Error
			if len(errs) != 1 || !errors.As(errs.Err(), &fe) || e.Type != field.TypeInvalid || e.Field != "sel["+key+"]" ||
				(e.BadValue != key && e.BadValue != value) || !strings.Contains(e.Detail, "a label ") {
				t.Fatalf("{%q: %q}: errors %v", key, value, errs)
			}
			if _, perrs := placement.ParseLabelSelector(nil, sel); len(perrs) != 1 {
				t.Fatalf("ParseLabelSelector({%q: %q}) accepted what Validate rejects", key, value)
			}
			return
		}
		if got := c.String(); got != value {
			t.Fatalf("ParseLabelCondition(%q).String() = %q", value, got)
		}
		parsed, perrs := placement.ParseLabelSelector(nil, sel)
		if perrs != nil || len(parsed) != 1 || parsed[0].String() != value {
			t.Fatalf("ParseLabelSelector({%q: %q}) = %+v, %v", key, value, parsed, perrs)
		}
		// A node without the label matches exactly the negations; a node
		// holding one of the values matches exactly the positives.
		if got, want := parsed.String(), placement.FormatSelector(sel); got != want {
			t.Fatalf("LabelSelector.String() = %q, FormatSelector = %q", got, want)
		}
		if parsed.Matches(nil) != c.Negated {
			t.Fatalf("{%q: %q} on a node without the label: %v", key, value, !c.Negated)
		}
		for _, v := range c.Values {
			if c.Matches(v, true) == c.Negated {
				t.Fatalf("{%q: %q} on a node labelled %q", key, value, v)
			}
		}
		// Unmatchable values come only from Ray's two quirks.
		quirk := strings.Contains(value, ", ") || strings.Contains(value, "(") && !c.In
		if (len(c.Unmatchable()) > 0) != quirk {
			t.Fatalf("{%q: %q}: unmatchable %q", key, value, c.Unmatchable())
		}
	})
}
