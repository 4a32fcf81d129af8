package sim_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

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
	golden.Assert(t, name, buf.Bytes())
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
