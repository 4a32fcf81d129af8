package main_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/gobin"
)

// binDir holds the raytpu binary the tests build once (see buildRaytpu).
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "raytpu-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildErr  error
	buildOut  []byte
)

// buildRaytpu builds the command once per test binary, with the flags
// the test binary was built with (gobin), and returns its path; every
// test that runs the binary shares it.
func buildRaytpu(t *testing.T) string {
	t.Helper()
	gobin.ReadSources(t, ".")
	buildOnce.Do(func() {
		bin := filepath.Join(binDir, "raytpu")
		args := append(append([]string{"build"}, gobin.Flags()...), "-o", bin, ".")
		buildOut, buildErr = exec.Command("go", args...).CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return filepath.Join(binDir, "raytpu")
}

// TestExitStatus runs the built command and checks the process exit status
// and streams, not just cli.Main's return value.
func TestExitStatus(t *testing.T) {
	bin := buildRaytpu(t)
	cases := []struct {
		args   []string
		status int
		stdout string // substring of stdout
		stderr string // substring of stderr
	}{
		{[]string{"slice", "v6e", "4x4"}, 0, "v6e-16", ""},
		// --compare: the comparison's diagnosis has SpansSlices errors, the
		// requested plan's is clean; only the requested plan gates the status.
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--num-slices", "2", "--compare"}, 0, "Diagnosis without topology:\n  error   SpansSlices", ""},
		// A plan whose diagnosis has an error prints in full and exits 1,
		// naming the failing codes on stderr.
		{[]string{"plan", "--accelerator", "v6e", "--topology", "8x8", "--cluster", "2*v6e-16"}, 1, "error   HeadReservationFailed", "the diagnosis has errors: HeadReservationFailed"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "8x8", "--cluster", "2*v6e-16", "-o", "json"}, 1, `"code": "HeadReservationFailed"`, "HeadReservationFailed"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "2x4", "--resources-per-bundle", `{"TPU": 4}`, "--cluster", "v6e-4,v6e-8"}, 1, "error   SpansHosts", "the diagnosis has errors: WrongPodType, SpansHosts"},
		// Warnings alone (here Pending) do not fail a plan.
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--resources-per-bundle", `{"TPU": 2, "CPU": 5}`}, 0, "warning Pending", ""},
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
			if c.status == 0 && stderr.Len() > 0 {
				t.Errorf("exit 0 with stderr %q", stderr.String())
			}
			if !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("stdout %q / stderr %q, want them to contain %q / %q", stdout.String(), stderr.String(), c.stdout, c.stderr)
			}
		})
	}
}
