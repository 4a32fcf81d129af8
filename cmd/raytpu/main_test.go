package main_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitStatus runs the built command and checks the process exit status
// and streams, not just cli.Main's return value.
func TestExitStatus(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "raytpu")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cases := []struct {
		args   []string
		status int
		stdout string // substring of stdout
		stderr string // substring of stderr
	}{
		{[]string{"slice", "v6e", "4x4"}, 0, "v6e-16", ""},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--num-slices", "2", "--compare"}, 0, "SpansSlices", ""},
		{[]string{"slice", "v6e", "4x5"}, 1, "", `did you mean "4x4"?`},
		{[]string{"slice", "v6e"}, 2, "", "GEN TOPOLOGY"},
		{[]string{"plan", "--bogus"}, 2, "", "unknown flag"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), bin, c.args...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			status := 0
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				status = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != c.status {
				t.Errorf("exit status %d, want %d (stderr %q)", status, c.status, stderr.String())
			}
			if !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("stdout %q / stderr %q, want them to contain %q / %q", stdout.String(), stderr.String(), c.stdout, c.stderr)
			}
		})
	}
}
