package cli_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
)

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(t.Context(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args []string
		code int
	}{
		"catalog.txt":             {[]string{"catalog"}, cli.ExitOK},
		"catalog-v6e.txt":         {[]string{"catalog", "trillium"}, cli.ExitOK},
		"catalog-v4.json":         {[]string{"catalog", "v4", "-o", "json"}, cli.ExitOK},
		"slice-v6e-4x4.txt":       {[]string{"slice", "TPU-V6E", "4x4"}, cli.ExitOK},
		"slice-v6e-2x4-cph4.json": {[]string{"slice", "v6e", "2x4", "--chips-per-host", "4", "-o", "json"}, cli.ExitOK},
		"slice-v4-8x16x16.json":   {[]string{"slice", "v4", "8x16x16", "-o", "json"}, cli.ExitOK},
		"plan-v6e-2x4x4.txt":      {[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--num-slices", "2", "--compare"}, cli.ExitOK},
		"plan-v4-per-slice.json":  {[]string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--num-slices", "2", "--pg-per-slice", "--name", "t", "-o", "json"}, cli.ExitOK},
		"plan-v4.svg":             {[]string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--cluster", "2*v4-16,v4-8", "-o", "svg"}, cli.ExitOK},
		// A 3-D slice's panels are its first dimension: v4 2x2x4 draws x=0
		// and x=1, each 2 rows (y) of 4 columns (z).
		"plan-v4-2x2x4.svg": {[]string{"plan", "--accelerator", "v4", "--topology", "2x2x4", "-o", "svg"}, cli.ExitOK},
		"plan-pending.txt":  {[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--resources-per-bundle", `{"TPU": 2, "CPU": 5}`}, cli.ExitOK},
		// A cluster spec with autoscaled groups: the autoscaler's prediction,
		// then the plan on the cluster it leaves; render --autoscale. (These
		// render goldens are not named render-*: the kube tests apply those.)
		"plan-autoscale-v4-two-slices.txt": {[]string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--num-slices", "2", "--name", "train",
			"--cluster", "v4-16:2x2x2{max=4},cpu:1"}, cli.ExitOK},
		"plan-autoscale-v4-two-slices.json": {[]string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--num-slices", "2", "--name", "train",
			"--cluster", "v4-16:2x2x2{max=2},cpu:1", "-o", "json"}, cli.ExitOK},
		// The prediction's error is the cause: the exit names it.
		"plan-autoscale-max-too-small.txt": {[]string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--num-slices", "2", "--name", "train",
			"--cluster", "v4-16:2x2x2{max=1},cpu:1"}, cli.ExitInvalid},
		"plan-autoscale-v2-multihost.txt": {[]string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--name", "train",
			"--cluster", "v4-16:2x2x2{max=2},cpu:1", "--autoscaler-version", "v2"}, cli.ExitInvalid},
		"plan-autoscale-app-chat.txt": {[]string{"plan", "-f", "testdata/apps/chat.yaml", "--cluster", "v4-16:2x2x2{min=1,max=2},cpu:1"}, cli.ExitOK},
		"autoscale-render-jaxtrain-v6e.yaml": {[]string{"render", "-f", "testdata/plans/jaxtrain-v6e-two-slices.json",
			"--autoscale", "--max-slices", "3", "--idle-timeout", "5m", "--upscaling-mode", "Conservative", "--worker-cpus", "16"}, cli.ExitOK},
		// A plan report with its prediction reads back as the plan.
		"autoscale-render-slice-from-report.yaml": {[]string{"render", "-f", "testdata/plan-autoscale-v4-two-slices.json", "--autoscale"}, cli.ExitOK},
		"autoscale-render-app-chat.yaml": {[]string{"render", "-f", "testdata/apps/chat.yaml",
			"--autoscale", "--group-slices", "v4-16-0=1:1", "--autoscaler-version", "v1"}, cli.ExitOK},
		// A capacity class and a Kueue quota: the plan's capacity and
		// whether all its slices fit at once; a plan over its quota
		// prints in full and exits 1.
		"plan-capacity-spot-quota.txt": {[]string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--name", "train",
			"--capacity", "spot", "--quota", "google.com/tpu=8"}, cli.ExitOK},
		"plan-over-quota.txt": {[]string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--num-slices", "2", "--name", "train",
			"--quota", "google.com/tpu=8"}, cli.ExitInvalid},
		"plan-app-chat-reservation-quota.json": {[]string{"plan", "-f", "testdata/apps/chat.yaml", "--reservation", "tpu-res",
			"--quota", "reservation:google.com/tpu=16", "-o", "json"}, cli.ExitOK},
		"plan-app-chat-quota-other-class.txt": {[]string{"plan", "-f", "testdata/apps/chat.yaml", "--quota", "spot:google.com/tpu=64"}, cli.ExitInvalid},
		"capacity-render-slice-shared-reservation.yaml": {[]string{"render", "-f", "testdata/plan-autoscale-v4-two-slices.json",
			"--reservation", "tpu-res", "--reservation-project", "acme-tpu-prod"}, cli.ExitOK},
		// A plan whose diagnosis has an error still prints in full, and exits 1.
		"plan-infeasible.txt": {[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--num-slices", "2", "--cluster", "v6e-16,cpu:1"}, cli.ExitInvalid},
		// A Serve application file: every replica's slice on the simulator.
		"plan-app-chat.txt":         {[]string{"plan", "-f", "testdata/apps/chat.yaml"}, cli.ExitOK},
		"plan-app-chat.json":        {[]string{"plan", "-f", "testdata/apps/chat.yaml", "-o", "json"}, cli.ExitOK},
		"plan-app-one-free.txt":     {[]string{"plan", "-f", "testdata/apps/chat.yaml", "--cluster", "v4-16,v4-8,cpu:1"}, cli.ExitInvalid},
		"plan-app-llm.txt":          {[]string{"plan", "-f", "testdata/apps/llm.yaml"}, cli.ExitOK},
		"plan-app-llm-one-free.txt": {[]string{"plan", "-f", "testdata/apps/llm.yaml", "--cluster", "v4-16,v4-8,cpu:1"}, cli.ExitInvalid},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := run(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.code, errOut)
			}
			golden.Assert(t, name, []byte(out))
			again, _, _ := run(t, c.args...)
			if again != out {
				t.Error("output differs between two runs")
			}
		})
	}
}

// TestPlanExitStatus: a plan exits 1 when the requested placement's
// diagnosis has an error finding, after printing the whole plan; warnings
// and the --compare illustration do not change the status.
func TestPlanExitStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		args    []string
		code    int
		stdouts []string // each must appear in stdout
		stderr  string   // "" when stderr must be empty
	}{
		{"head reservation fails", []string{"plan", "--accelerator", "v6e", "--topology", "8x8", "--cluster", "2*v6e-16"}, cli.ExitInvalid,
			[]string{"Plan:", "REMOVED", "Diagnosis:", "error   HeadReservationFailed"},
			"raytpu: plan: the diagnosis has errors: HeadReservationFailed "},
		{"two error codes", []string{"plan", "--accelerator", "v6e", "--topology", "2x4", "--resources-per-bundle", `{"TPU": 4}`, "--cluster", "v6e-4,v6e-8"}, cli.ExitInvalid,
			[]string{"error   WrongPodType", "error   SpansHosts"},
			"raytpu: plan: the diagnosis has errors: WrongPodType, SpansHosts "},
		{"json still printed", []string{"plan", "--accelerator", "v6e", "--topology", "8x8", "--cluster", "2*v6e-16", "-o", "json"}, cli.ExitInvalid,
			[]string{`"code": "HeadReservationFailed"`, `"plan": {`},
			"HeadReservationFailed"},
		{"svg still printed", []string{"plan", "--accelerator", "v6e", "--topology", "8x8", "--cluster", "2*v6e-16", "-o", "svg"}, cli.ExitInvalid,
			[]string{"<svg", "</svg>"},
			"HeadReservationFailed"},
		{"warning only", []string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--resources-per-bundle", `{"TPU": 2, "CPU": 5}`}, cli.ExitOK,
			[]string{"warning Pending"}, ""},
		{"errors only in the comparison", []string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--num-slices", "2", "--compare"}, cli.ExitOK,
			[]string{"Diagnosis:\n  ok:", "Diagnosis without topology:\n  error   SpansSlices"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := run(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, errOut)
			}
			for _, s := range c.stdouts {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if slices.Contains(c.args, "json") && !json.Valid([]byte(out)) {
				t.Errorf("stdout is not one JSON document:\n%s", out)
			}
			if c.stderr == "" && errOut != "" {
				t.Errorf("stderr = %q, want it empty", errOut)
			}
			if !strings.Contains(errOut, c.stderr) || strings.Count(errOut, "\n") > 1 {
				t.Errorf("stderr = %q, want one line containing %q", errOut, c.stderr)
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
		{"bad plan", []string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--resources-per-bundle", `{"TPU": 3}`}, cli.ExitUsage, []string{"--resources-per-bundle[TPU]"}},
		{"bad cluster", []string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster", "2*v6e-17"}, cli.ExitUsage, []string{"--cluster[0].podType", "v6e-17"}},
		{"missing accelerator", []string{"plan", "--topology", "4x4"}, cli.ExitUsage, []string{"--accelerator: Required"}},
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

// Application files are checked in full before anything is placed or
// sent: a misspelt key and an invalid topology fail with their names, and
// serve deploy never contacts the (unreachable) dashboard.
func TestApplicationFileErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"unknown key", []string{"plan", "-f", "testdata/apps/typo.yaml"}, cli.ExitInvalid, []string{"app.deployments[0].num_replica (line 5)", `unknown field: did you mean "num_replicas"?`}},
		{"invalid topology", []string{"plan", "-f", "testdata/apps/invalid.yaml"}, cli.ExitInvalid, []string{"testdata/apps/invalid.yaml: not a valid Serve application: app.deployments[LLM].accelerator_config.topology", "2x2x3"}},
		{"deploy validates first", []string{"serve", "deploy", "-f", "testdata/apps/invalid.yaml", "--address", "http://127.0.0.1:1"}, cli.ExitInvalid, []string{"accelerator_config.topology"}},
		{"invalid LLM application", []string{"plan", "-f", "testdata/apps/llm-invalid.yaml"}, cli.ExitInvalid, []string{"testdata/apps/llm-invalid.yaml: not a valid Serve LLM application: app.llm_configs[0].accelerator_type: Required value"}},
		{"LLM deploy validates first", []string{"serve", "deploy", "-f", "testdata/apps/llm-invalid.yaml", "--address", "http://127.0.0.1:1"}, cli.ExitInvalid, []string{"app.llm_configs[0].accelerator_type"}},
		{"LLM application unknown key", []string{"render", "-f", "testdata/apps/llm-typo.yaml"}, cli.ExitInvalid, []string{"app.llm_configs[0].engine_kwarg (line 6)", `did you mean "engine_kwargs"?`}},
		{"deploy needs a file", []string{"serve", "deploy", "--address", "http://127.0.0.1:1"}, cli.ExitUsage, []string{"-f APP.yaml"}},
		{"missing file", []string{"plan", "-f", "testdata/apps/nope.yaml"}, cli.ExitInvalid, []string{"nope.yaml"}},
		{"head_reservation_timeout is seconds now", []string{"plan", "-f", "testdata/apps/head-timeout-old.yaml"}, cli.ExitInvalid, []string{"head_reservation_timeout_s"}},
		{"huge num_replicas", []string{"plan", "-f", "testdata/apps/huge-replicas.yaml"}, cli.ExitInvalid, []string{"app.deployments[llm].num_replicas", "20000"}},
		{"huge num_replicas render", []string{"render", "-f", "testdata/apps/huge-replicas.yaml"}, cli.ExitInvalid, []string{"app.deployments[llm].num_replicas"}},
		{"huge num-slices", []string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--num-slices", "99999999999"}, cli.ExitUsage, []string{"--num-slices", "1024"}},
		{"topology as a chip count", []string{"plan", "--accelerator", "v6e", "--topology", "16"}, cli.ExitUsage, []string{"--topology", "a chip count", "4x4"}},
		{"slice as a chip count", []string{"slice", "v6e", "16"}, cli.ExitInvalid, []string{"a chip count", "4x4"}},
		{"-f with a slice spec", []string{"plan", "-f", "testdata/apps/chat.yaml", "--topology", "4x4"}, cli.ExitUsage, []string{"drop --accelerator"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, errOut, code := run(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.code, errOut)
			}
			for _, s := range c.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q lacks %q", errOut, s)
				}
			}
			if strings.Contains(errOut, "connection refused") {
				t.Errorf("stderr %q: the command contacted the dashboard", errOut)
			}
		})
	}
}
