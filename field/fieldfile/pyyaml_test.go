package fieldfile

// The YAML 1.1 table: what PyYAML's safe_load (the one in the project's
// Ray virtualenv, which Ray's serve deploy reads its files with) makes of
// each scalar, key and document below, kept in testdata/pyyaml.golden.jsonl.
// TestScalarsArePyYAMLs asks that PyYAML and rewrites the file with
// UPDATE_GOLDEN=1; TestScalarsAsPyYAML checks raytpu's reading against the
// file, with no Python.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
)

// scalarTable holds scalars as written after "v: ".
var scalarTable = []string{
	// Booleans: YAML 1.1's six words in three cases; not y and n, not mixed case.
	"yes", "Yes", "YES", "yEs", "no", "No", "NO", "nO", "true", "True", "TRUE", "tRUE",
	"false", "False", "FALSE", "on", "On", "ON", "oN", "off", "Off", "OFF", "y", "Y", "n", "N",
	// Null.
	"", "~", "null", "Null", "NULL", "nULL", "'~'", "''", "&a", "!!null x",
	// Integers.
	"0", "00", "-0", "+0", "1", "-1", "+1", "007", "08", "010", "0o17", "0O17", "0x1F", "0x1f",
	"0X1F", "-0x1F", "0x_1F", "0x_", "0b101", "-0b101", "0b12", "0b_", "0b", "1_000", "1__000",
	"_1", "1_", "0_", "123456789012345678901234567890", "-9223372036854775809", "9223372036854775807",
	"1:30", "-1:30", "+1:30", "1:60", "1:30:00", "09:30", "0:30", "190:20:30", "1:3", "12:7", "1:30:",
	"1 000", "0x", "0xG", "-1_",
	// Floats.
	"1.0", "1.", ".5", "-.5", "+.5", "0.5", "-0.5", "-0.0", "1e5", "1E5", "1.0e5", "1.0e+5", "1.0E+5",
	"1.e+5", "1.0e-5", "1_000.5", "._5", ".", ".e+5", "190:20:30.15", "1:30.5", "-1:30.5", "1:30.",
	".inf", ".Inf", ".INF", "-.inf", "+.inf", ".iNf", "inf", "-inf", ".nan", ".NaN", ".NAN", "-.nan",
	"nan", "1.0e+999", "-1.0e+999", "1.0e-999", "3.14159265358979323846", "0.1",
	"1.7976931348623157e+308", "10000000000000000.0", "1000000000000000.0", "0.0001", "0.00001",
	"123456789.123456789", "1e", "e5", "1.5e+3",
	// Timestamps.
	"2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2001-12-15T02:59:43.1Z",
	"2001-13-14", "2001-02-29", "2000-02-29", "2001-1-1", "2001-1-1 1:00:00", "2001-12-14T25:00:00",
	"2001-12-14T21:59:43.1234567", "2001-12-14 21:59:43 +24", "2001-12-14 21:59:43 -0",
	"2001-12-14 21:59:43 +5:30", "0001-01-01", "0000-01-01", "2001-12-14T21:59:43Z", "2001-12-14T21:59:43.",
	// Strings, quoted and block scalars, tags.
	"hello", "hello world", "1.2.3", "v6e-16", "4x4", "16x16x16", "0.0.0.0", "'yes'", `"no"`, "'1'",
	`"0x1F"`, "|\n  yes", ">\n  no", "!!str yes", "!!str 1", "!!int '12'", "!!int 0x1F", "!!float '1'",
	"!!float 1e5", "!!float 0x1F", "!!bool YES", "!!bool y", "!!binary aGk=", "!!timestamp 2001-12-14",
	"!foo x", "! yes", "! 'yes'", "&b ! 'no'", "! |\n  on", "! &c \"off\"", "&a yes", "<<", "=", "'<<'", "'='", "~x", "null x", "yes please",
	"+", "Off the record", "NaN", "Infinity",
}

// keyTable holds mapping keys as written before ": 1"; the table keeps
// the key Python's json.dumps writes for PyYAML's key.
var keyTable = []string{
	"a", "yes", "no", "on", "Off", "true", "~", "null", "''", "1", "0x10", "010", "1_000", "1:30", "1.5",
	"1.0e+5", "1e5", "-0.0", "1.0e+16", ".inf", ".nan", "2001-12-14", `"yes"`, "[a]", "{a: 1}", "=",
}

// docTable holds documents: merge keys, aliases, and what YAML 1.1 makes
// of a mapping's keys.
var docTable = []string{
	"a: &a {x: 1, y: 2}\nb: {<<: *a, y: 3}",
	"a: &a {x: 1}\nb: &b {y: 2}\nc: {<<: [*a, *b]}",
	"a: &a {xx: 1}\nb: &b {xx: 2}\nc: {<<: [*a, *b]}",
	"a: &a {x: 1}\nb: &b {x: 2}\nc: {<<: [*a, *b]}",
	"a: &a {x: 1}\nb: &b {x: 1}\nc: {<<: [*a, *b]}",
	"a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: {<<: *b, z: 3}",
	"a: &a [1]\nb: {<<: *a}",
	"b: {<<: [1]}",
	"b: {<<: 1}",
	"a: &a {x: 1}\nb: {x: 2, <<: *a}",
	"a: &a {x: 1}\nb: &b {y: 2}\nc: {<<: *a, <<: *b}",
	"a: &a {xx: 1}\nb: &b {xx: 2}\nc: {<<: *a, <<: *b}",
	"b: {<<: {x: 1}, y: 2}",
	"b: {'<<': {x: 1}}",
	"a: &a [*a]",
	"a: &a {b: *a}",
	"a: <<",
	"base: &base\n  num_replicas: 1\n  max_ongoing_requests: 5\ndeployments:\n  - <<: *base\n    name: a\n  - <<: *base\n    name: b\n    num_replicas: 2",
	"a: 1\na: 2",
	"yes: 1\ntrue: 2",
	"user_config: {use_cache: no, debug: off, fast: yes, level: 010, ratio: 1e3, when: 2001-12-14}",
	"user_config: {use_cache: no, debug: off, fast: yes, level: 010, ratio: 1e3}",
}

// deliberate lists the rows where raytpu's reading differs from PyYAML's,
// with the reason.
var deliberate = map[string]string{
	"value !!binary aGk=":                                   "PyYAML makes bytes, which Ray cannot send as JSON; raytpu refuses the tag",
	"value !!timestamp 2001-12-14":                          "PyYAML makes a date, which Ray cannot send as JSON; raytpu refuses the tag",
	"doc a: &a {xx: 1}\nb: &b {xx: 2}\nc: {<<: [*a, *b]}":   "PyYAML 6.0.4 keeps the last of two merged values for a key longer than one character and the first for a shorter one; raytpu refuses the conflict",
	"doc a: &a {x: 1}\nb: &b {x: 2}\nc: {<<: [*a, *b]}":     "as above",
	"doc a: &a {xx: 1}\nb: &b {xx: 2}\nc: {<<: *a, <<: *b}": "as above",
	"doc a: 1\na: 2":                                        "PyYAML keeps the last of two equal keys; raytpu refuses the second",
	"doc yes: 1\ntrue: 2":                                   "as above: both keys are True to PyYAML",
}

type pyRow struct {
	In    string `json:"in"`
	As    string `json:"as"` // value, key or doc
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

func (r pyRow) id() string { return r.As + " " + r.In }

func tableRows() []pyRow {
	var rows []pyRow
	for _, s := range scalarTable {
		rows = append(rows, pyRow{In: s, As: "value"})
	}
	for _, s := range keyTable {
		rows = append(rows, pyRow{In: s, As: "key"})
	}
	for _, s := range docTable {
		rows = append(rows, pyRow{In: s, As: "doc"})
	}
	return rows
}

// pyScript is what the table asks PyYAML: rows on stdin, one JSON row a
// line on stdout.
const pyScript = `
import datetime, json, sys, yaml

def kind_value(x):
    if isinstance(x, bool):
        return "bool", "true" if x else "false"
    if isinstance(x, int):
        return "int", str(x)
    if isinstance(x, float):
        return "float", repr(x)
    if x is None:
        return "null", ""
    if isinstance(x, str):
        return "str", x
    if isinstance(x, (datetime.date, datetime.datetime)):
        return "timestamp", x.isoformat()
    return type(x).__name__, repr(x)

for r in json.load(sys.stdin):
    src, how = r["in"], r["as"]
    try:
        if how == "value":
            kind, value = kind_value(yaml.safe_load("v: " + src + "\n")["v"])
        elif how == "key":
            d = yaml.safe_load("{" + src + ": 1}\n")
            kind, value = "key", next(iter(json.loads(json.dumps(d, allow_nan=False))))
        else:
            kind, value = "doc", json.dumps(yaml.safe_load(src + "\n"), sort_keys=True, separators=(",", ":"), allow_nan=False)
    except Exception:
        kind, value = "error", ""
    print(json.dumps({"in": src, "as": how, "kind": kind, "value": value}, ensure_ascii=False))
`

const goldenName = "pyyaml.golden.jsonl"

// TestScalarsArePyYAMLs asks the Ray virtualenv's PyYAML for the table
// and compares its answers with the golden file (UPDATE_GOLDEN=1 rewrites
// it), so that the file TestScalarsAsPyYAML reads stays PyYAML's.
func TestScalarsArePyYAMLs(t *testing.T) {
	t.Parallel()
	py := venvtest.Python(t)
	in, err := json.Marshal(tableRows())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", pyScript)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", py, err, stderr.String())
	}
	version, err := exec.Command(py, "-c", "import yaml; print(yaml.__version__)").Output()
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimSpace(string(version)); v != "6.0.4" {
		t.Errorf("the virtualenv's PyYAML is %s; the table and yaml11.go are PyYAML 6.0.4's: check its resolver and constructor, then rewrite the table with UPDATE_GOLDEN=1", v)
	}
	golden.Assert(t, goldenName, out)
}

// TestScalarsAsPyYAML reads every row of the golden table as raytpu does
// and compares with what PyYAML made of it.
func TestScalarsAsPyYAML(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("testdata", goldenName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []pyRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r pyRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", goldenName, err)
		}
		want = append(want, r)
	}
	rows := tableRows()
	if len(rows) != len(want) {
		t.Fatalf("%s has %d rows, the table %d: rerun TestScalarsArePyYAMLs with UPDATE_GOLDEN=1", goldenName, len(want), len(rows))
	}
	used := map[string]bool{}
	for i, w := range want {
		if w.In != rows[i].In || w.As != rows[i].As {
			t.Fatalf("row %d of %s is %q, the table's %q: rerun TestScalarsArePyYAMLs with UPDATE_GOLDEN=1", i, goldenName, w.id(), rows[i].id())
		}
		got := readAsRaytpu(w.In, w.As)
		reason, differs := deliberate[w.id()]
		used[w.id()] = true
		switch {
		case differs && got == w:
			t.Errorf("%q: raytpu now reads it as PyYAML does (%s %q); drop it from deliberate (%s)", w.id(), got.Kind, got.Value, reason)
		case differs && got.Kind != "error" && w.Kind != "error":
			t.Errorf("%q: PyYAML %s %q, raytpu %s %q: a deliberate difference must be a refusal (%s)", w.id(), w.Kind, w.Value, got.Kind, got.Value, reason)
		case !differs && got != w:
			t.Errorf("%q: PyYAML reads %s %q, raytpu %s %q", w.id(), w.Kind, w.Value, got.Kind, got.Value)
		}
	}
	for id := range deliberate {
		if !used[id] {
			t.Errorf("deliberate lists %q, which is not in the table", id)
		}
	}
}

// readAsRaytpu is what raytpu makes of a row, spelled as the Python
// script spells PyYAML's answer.
func readAsRaytpu(src, how string) pyRow {
	r := pyRow{In: src, As: how, Kind: "error"}
	switch how {
	case "doc":
		var m map[string]any
		if errs := Decode([]byte(src+"\n"), field.NewPath("doc"), &m); len(errs) > 0 {
			return r
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m); err != nil {
			return r
		}
		r.Kind, r.Value = "doc", strings.TrimSuffix(buf.String(), "\n")
		return r
	case "key":
		v, ok := parseOne("{" + src + ": 1}\n")
		if !ok || v.kind != kMap || v.c.bad != nil || len(v.c.pairs) != 1 {
			return r
		}
		if k, ok := keyString(v.c.pairs[0].key.v); ok {
			r.Kind, r.Value = "key", k
		}
		return r
	}
	top, ok := parseOne("v: " + src + "\n")
	if !ok || top.kind != kMap || len(top.c.pairs) != 1 {
		return r
	}
	v := top.c.pairs[0].val.v
	switch v.kind {
	case kBool:
		r.Kind, r.Value = "bool", strconv.FormatBool(v.b)
	case kInt:
		r.Kind, r.Value = "int", v.s
	case kFloat:
		r.Kind, r.Value = "float", pyRepr(v.f)
	case kNull:
		r.Kind = "null"
	case kStr:
		r.Kind, r.Value = "str", v.s
	case kTime:
		r.Kind, r.Value = "timestamp", v.s
	}
	return r
}

// parseOne builds the values of a one-document YAML text.
func parseOne(src string) (*value, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, false
	}
	b := newBuilder([]byte(src), maxValues)
	e := b.edge(&doc)
	return e.v, b.over == nil
}
