package cli_test

import (
	"strings"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
)

// Bad autoscaling flags exit 2 (1 for plan, whose --cluster spec is a
// file's content) with one message naming the flag as typed, the bad
// value and what is valid.
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
		{"max below the plan", []string{"render", "-f", plan, "--autoscale", "--max-slices", "1"}, cli.ExitUsage, []string{"--max-slices 1", "needs 2 slices", "at least 2"}},
		{"bad group syntax", []string{"render", "-f", plan, "--autoscale", "--group-slices", "v6e-16"}, cli.ExitUsage, []string{`"v6e-16"`, "GROUP=MIN:MAX"}},
		{"unknown group", []string{"render", "-f", plan, "--autoscale", "--group-slices", "v6e-32=0:1"}, cli.ExitUsage, []string{`"v6e-32"`, `"v6e-16"`}},
		{"bad mode", []string{"render", "-f", plan, "--autoscale", "--upscaling-mode", "fast"}, cli.ExitUsage, []string{`"fast"`, "Conservative"}},
		{"timeout in milliseconds", []string{"render", "-f", plan, "--autoscale", "--idle-timeout", "1500ms"}, cli.ExitUsage, []string{"1.5s", "whole seconds"}},
		{"negative head CPUs", []string{"render", "-f", plan, "--autoscale", "--head-cpus", "-1"}, cli.ExitUsage, []string{"--head-cpus -1", "0 for 8"}},
		{"worker CPUs without --autoscale", []string{"render", "-f", plan, "--worker-cpus", "4"}, cli.ExitUsage, []string{"--worker-cpus needs --autoscale"}},
		{"apply checks them first", []string{"apply", "-f", plan, "--autoscaler-version", "v2"}, cli.ExitUsage, []string{"--autoscaler-version needs --autoscale"}},
		{"plan's version", []string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--cluster", "v4-16{max=1}", "--autoscaler-version", "v3"}, cli.ExitUsage, []string{"--autoscaler-version", `"v3"`, "v1", "v2"}},
		{"a spec bound", []string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--cluster", "v4-16{min=3,max=2}"}, cli.ExitUsage, []string{"--cluster[0].minSlices", "must not exceed maxSlices (2)"}},
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
