package fieldfile_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
	"github.com/raytpu/raytpu/internal/testinfra/alloctest"
)

// decodeBounded decodes b into an application and fails t when Decode
// panics, reports an error outside the root, allocates more than the file
// may cost (4 MiB and 16 KiB a byte: the budget of 32 values a byte, with
// room) or accepts a value larger than that budget (16 bytes of JSON a
// value).
func decodeBounded(t *testing.T, b []byte) {
	t.Helper()
	var a serveApp
	var errs field.ErrorList
	n := alloctest.Bytes(func() { errs = fieldfile.Decode(b, field.NewPath("app"), &a) })
	if limit := uint64(4*alloctest.MiB + 16<<10*len(b)); n > limit {
		t.Fatalf("Decode of %d bytes allocated %d, more than %d", len(b), n, limit)
	}
	for _, e := range errs {
		if !strings.HasPrefix(e.Field, "app") {
			t.Fatalf("error outside the root: %v", e)
		}
	}
	if len(errs) > 0 {
		return
	}
	js, err := json.Marshal(a)
	if err != nil {
		t.Fatalf("accepted a value JSON cannot hold: %v", err)
	}
	if limit := 16 * (32*len(b) + 4096); len(js) > limit {
		t.Fatalf("a %d-byte file decoded to %d bytes of JSON", len(b), len(js))
	}
}

// FuzzDecode: no input makes Decode panic, hang, spend more than its
// file's budget or accept a value it did not check. The corpus
// (testdata/fuzz/FuzzDecode) holds aliases, merge keys, tags, YAML 1.1
// scalars and deep nesting.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"name: a\ndeployments:\n- {name: b, num_replicas: 2}\n", "a: &x [*x]\n", "name: a\n---\n",
		"deployments:\n- args: {? [a]: b}\n", "{", "\t", "name: !!binary aGVsbG8=\n", "a: &a {b: *a}\n",
		"deployments: [{resources: {TPU: .nan}}]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { decodeBounded(t, b) })
}

// FuzzDecodeShapes feeds the loader alias chains and merge-key chains of
// any length and width, padded to any size, around a fuzzed scalar: each
// is read within its budget or refused with an error at the root.
func FuzzDecodeShapes(f *testing.F) {
	f.Add(uint8(7), uint8(9), false, uint16(0), []byte("x"))
	f.Add(uint8(7), uint8(9), true, uint16(0), []byte("1"))
	f.Add(uint8(2), uint8(3), true, uint16(100), []byte("yes"))
	f.Add(uint8(30), uint8(2), false, uint16(4000), []byte("&z [*z]"))
	f.Fuzz(func(t *testing.T, levels, width uint8, merge bool, pad uint16, leaf []byte) {
		decodeBounded(t, shape(int(levels%40), int(width%64)+1, merge, int(pad), leaf))
	})
}

// shape is an application whose args hold levels lists (or mappings
// merging the one before, with merge) of width aliases each, after one of
// width copies of leaf, and a string of pad bytes.
func shape(levels, width int, merge bool, pad int, leaf []byte) []byte {
	var b strings.Builder
	b.WriteString("name: shape\nargs:\n")
	if merge {
		b.WriteString("  m0: &m0 {")
		for i := range width {
			fmt.Fprintf(&b, "k%d: %s, ", i, leaf)
		}
		b.WriteString("}\n")
		for l := 1; l <= levels; l++ {
			fmt.Fprintf(&b, "  m%d: &m%d {<<: [", l, l)
			for i := range width {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "*m%d", l-1)
			}
			fmt.Fprintf(&b, "], l%d: *m%d}\n", l, l-1)
		}
	} else {
		fmt.Fprintf(&b, "  a0: &a0 [%s]\n", strings.TrimSuffix(strings.Repeat(string(leaf)+",", width), ","))
		for l := 1; l <= levels; l++ {
			fmt.Fprintf(&b, "  a%d: &a%d [%s]\n", l, l, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", l-1), width), ","))
		}
	}
	fmt.Fprintf(&b, "  pad: %q\n", strings.Repeat("p", pad))
	return []byte(b.String())
}
