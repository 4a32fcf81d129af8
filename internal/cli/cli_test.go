package cli_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/golden"
)

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(t.Context(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestGolden(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"catalog.txt":             {"catalog"},
		"catalog-v6e.txt":         {"catalog", "trillium"},
		"catalog-v4.json":         {"catalog", "v4", "-o", "json"},
		"slice-v6e-4x4.txt":       {"slice", "TPU-V6E", "4x4"},
		"slice-v6e-2x4-cph4.json": {"slice", "v6e", "2x4", "--chips-per-host", "4", "-o", "json"},
		"slice-v4-8x16x16.json":   {"slice", "v4", "8x16x16", "-o", "json"},
		"plan-v6e-2x4x4.txt":      {"plan", "--accelerator", "v6e", "--topology", "4x4", "--num-slices", "2", "--compare"},
		"plan-v4-per-slice.json":  {"plan", "--accelerator", "v4", "--topology", "2x2x2", "--num-slices", "2", "--pg-per-slice", "--name", "t", "-o", "json"},
		"plan-v4.svg":             {"plan", "--accelerator", "v4", "--topology", "2x2x2", "--cluster", "2*v4-16,v4-8", "-o", "svg"},
		"plan-infeasible.txt":     {"plan", "--accelerator", "v6e", "--topology", "4x4", "--num-slices", "2", "--cluster", "v6e-16,cpu:1"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := run(t, args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr: %s", code, errOut)
			}
			golden.Assert(t, name, []byte(out))
			again, _, _ := run(t, args...)
			if again != out {
				t.Error("output differs between two runs")
			}
		})
	}
}

func TestSliceJSONFields(t *testing.T) {
	t.Parallel()
	out, _, code := run(t, "slice", "tpu7x", "2x2x2", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"generation", "topology", "chips", "chipsPerHost", "hosts", "multiHost", "podType", "acceleratorType",
		"gceAcceleratorType", "gkeAccelerator", "gkeTopology", "machineType", "devicesPerHost", "devices", "rayValid", "gkeValid"} {
		if _, ok := m[k]; !ok {
			t.Errorf("slice JSON lacks %q", k)
		}
	}
	if m["podType"] != "v7x-16" || m["gceAcceleratorType"] != "tpu7x-16" || m["acceleratorType"] != "TPU-V7X" || m["devices"] != 16.0 {
		t.Errorf("slice JSON = %v", m)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		args    []string
		code    int
		stderrs []string // each must appear in stderr
	}{
		{"unknown command", []string{"frobnicate"}, cli.ExitUsage, []string{"unknown command"}},
		{"missing topology arg", []string{"slice", "v6e"}, cli.ExitUsage, []string{"GEN TOPOLOGY"}},
		{"bad output", []string{"catalog", "-o", "yml"}, cli.ExitUsage, []string{"--output", `"yml"`, "table, json"}},
		{"unknown flag", []string{"plan", "--topo", "4x4"}, cli.ExitUsage, []string{"unknown flag"}},
		{"bad topology", []string{"slice", "v6e", "4x5"}, cli.ExitInvalid, []string{"topology", `"4x5"`, `"4x4"`}},
		{"bad generation", []string{"catalog", "v6x"}, cli.ExitInvalid, []string{"generation", `"v6x"`, `"v6e"`}},
		{"bad plan", []string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--resources-per-bundle", `{"TPU": 3}`}, cli.ExitInvalid, []string{"resourcesPerBundle[TPU]"}},
		{"bad cluster", []string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster", "2*v6e-17"}, cli.ExitInvalid, []string{"v6e-17"}},
		{"missing accelerator", []string{"plan", "--topology", "4x4"}, cli.ExitInvalid, []string{"accelerator: Required"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := run(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout not empty on failure: %q", out)
			}
			for _, s := range c.stderrs {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q lacks %q", errOut, s)
				}
			}
			if strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, "panic") {
				t.Errorf("stderr has a stack trace: %s", errOut)
			}
		})
	}
}
