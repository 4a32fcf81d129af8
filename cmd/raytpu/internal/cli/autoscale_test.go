package cli_test

import (
	"strings"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
)

// raytpu plan on a cluster spec with autoscaled groups prints the
// autoscaler's prediction and places the plan on the cluster it leaves;
// raytpu render --autoscale prints the autoscaled KubeRay object. (The
// render goldens here are not named render-*: the kube tests apply those.)
func TestAutoscaleGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args []string
		code int
	}{
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
			"--autoscale", "--max-slices", "3", "--idle-timeout", "5m", "--upscaling-mode", "Conservative"}, cli.ExitOK},
		// A plan report with its prediction reads back as the plan.
		"autoscale-render-slice-from-report.yaml": {[]string{"render", "-f", "testdata/plan-autoscale-v4-two-slices.json", "--autoscale"}, cli.ExitOK},
		"autoscale-render-app-chat.yaml": {[]string{"render", "-f", "testdata/apps/chat.yaml",
			"--autoscale", "--group-slices", "v4-16-0=1:1", "--autoscaler-version", "v1"}, cli.ExitOK},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := run(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.code, errOut)
			}
			golden.Assert(t, name, []byte(out))
			if again, _, _ := run(t, c.args...); again != out {
				t.Error("output differs between two runs")
			}
		})
	}
}

// Bad autoscaling flags exit 1 or 2 with one message naming the flag or
// option, the bad value and what is valid.
func TestAutoscaleFlagErrors(t *testing.T) {
	t.Parallel()
	plan := "testdata/plans/jaxtrain-v6e-two-slices.json"
	cases := []struct {
		name string
		args []string
		code int
		says []string
	}{
		{"a bound without --autoscale", []string{"render", "-f", plan, "--max-slices", "2"}, cli.ExitUsage, []string{"--max-slices needs --autoscale"}},
		{"max below the plan", []string{"render", "-f", plan, "--autoscale", "--max-slices", "1"}, cli.ExitInvalid, []string{"MaxSlices", "needs 2 slices", "at least 2"}},
		{"bad group syntax", []string{"render", "-f", plan, "--autoscale", "--group-slices", "v6e-16"}, cli.ExitUsage, []string{`"v6e-16"`, "GROUP=MIN:MAX"}},
		{"unknown group", []string{"render", "-f", plan, "--autoscale", "--group-slices", "v6e-32=0:1"}, cli.ExitInvalid, []string{`"v6e-32"`, `"v6e-16"`}},
		{"bad mode", []string{"render", "-f", plan, "--autoscale", "--upscaling-mode", "fast"}, cli.ExitInvalid, []string{`"fast"`, "Conservative"}},
		{"timeout in milliseconds", []string{"render", "-f", plan, "--autoscale", "--idle-timeout", "1500ms"}, cli.ExitInvalid, []string{"1.5s", "whole seconds"}},
		{"apply checks them first", []string{"apply", "-f", plan, "--autoscaler-version", "v2"}, cli.ExitUsage, []string{"--autoscaler-version needs --autoscale"}},
		{"plan's version", []string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--cluster", "v4-16{max=1}", "--autoscaler-version", "v3"}, cli.ExitInvalid, []string{`"v3"`, "v1", "v2"}},
		{"a spec bound", []string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--cluster", "v4-16{min=3,max=2}"}, cli.ExitInvalid, []string{"spec[0].minSlices", "must not exceed maxSlices (2)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := run(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, c.code, out, errOut)
			}
			for _, s := range c.says {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q does not say %q", errOut, s)
				}
			}
		})
	}
}
