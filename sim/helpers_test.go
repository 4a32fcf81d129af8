package sim_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go test ./sim -run '%s' -update to create it", err, t.Name())
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); rerun with -update if the change is intended:\n%s", path, diff)
	}
}

// goldenJSON renders v as indented JSON and compares it with testdata/name.
func goldenJSON(t *testing.T, name string, v any) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	golden(t, name, buf.Bytes())
}

func newCluster(t testing.TB, spec string) *sim.Cluster {
	t.Helper()
	s, err := sim.ParseSpec(spec)
	if err != nil {
		t.Fatalf("ParseSpec(%q): %v", spec, err)
	}
	c, err := sim.NewCluster(s)
	if err != nil {
		t.Fatalf("NewCluster(%q): %v", spec, err)
	}
	return c
}

func compile(t testing.TB, s placement.SliceSpec) *placement.SliceGroup {
	t.Helper()
	g, err := s.Compile(nil)
	if err != nil {
		t.Fatalf("Compile(%+v): %v", s, err)
	}
	return g
}

// repeat returns n copies of bundle b.
func repeat(n int, b map[string]float64) []map[string]float64 {
	out := make([]map[string]float64, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// nodesOf lists where each bundle of a group sits.
func nodesOf(pg *sim.PlacementGroup) []string {
	out := make([]string, len(pg.Bundles))
	for i, b := range pg.Bundles {
		out[i] = b.Node
	}
	return out
}

// fieldErrors lists "path type" for every field error inside err.
func fieldErrors(err error) []string {
	var out []string
	for _, e := range field.Errors(err) {
		out = append(out, e.Field+" "+string(e.Type))
	}
	return out
}
