package profiler_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
	"github.com/raytpu/raytpu/profiler"
)

// startJAX runs testdata/jit_loop.py (CPU JAX with the profiler server on)
// and returns the server's address once the first step has run.
func startJAX(t *testing.T, seconds string) string {
	t.Helper()
	py := venvtest.Python(t)
	cmd := exec.CommandContext(t.Context(), py, "testdata/jit_loop.py", seconds)
	cmd.Env = append(os.Environ(), "JAX_PLATFORMS=cpu")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if port, ok := strings.CutPrefix(sc.Text(), "PORT "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return "127.0.0.1:" + port
		}
	}
	t.Fatalf("jit_loop.py ended without printing its port: %v", sc.Err())
	return ""
}

// pyCheck is one plane as jax.profiler.ProfileData reads it.
type pyCheck struct {
	Name   string `json:"name"`
	Lines  int    `json:"lines"`
	Events int    `json:"events"`
	Named  int    `json:"named"`
}

func readWithJAX(t *testing.T, path, event string) []pyCheck {
	t.Helper()
	b, err := exec.CommandContext(t.Context(), venvtest.Python(t), "testdata/xspace_check.py", path, event).Output()
	if err != nil {
		t.Fatalf("xspace_check.py: %v", err)
	}
	var out []pyCheck
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("xspace_check.py printed %q: %v", b, err)
	}
	return out
}

// A capture from a real JAX process running a jitted step is a valid
// XSpace with a host plane full of that step's events, and jax's own
// reader sees the same planes, lines and events in the file written.
func TestCaptureFromJAX(t *testing.T) {
	t.Parallel()
	addr := startJAX(t, "60")
	tr, err := profiler.Capture(t.Context(), addr, profiler.Options{Duration: time.Second, Host: "worker-0"})
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	host := tr.Summary.Plane("/host:CPU")
	if host == nil {
		t.Fatalf("no /host:CPU plane in %+v", tr.Summary.Planes)
	}
	const step = "PjitFunction(raytpu_step)"
	if host.Count(step) == 0 || host.Lines == 0 || host.StatMetadata == 0 {
		t.Errorf("host plane: %d %q events, %d lines, %d stat metadata; want all > 0", host.Count(step), step, host.Lines, host.StatMetadata)
	}
	dir := t.TempDir()
	path, err := tr.WriteLogDir(dir, "run1")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "plugins", "profile", "run1", "worker-0.xplane.pb"); path != want {
		t.Errorf("WriteLogDir = %s, want %s", path, want)
	}
	var want []pyCheck
	for _, p := range tr.Summary.Planes {
		want = append(want, pyCheck{Name: p.Name, Lines: p.Lines, Events: p.Events, Named: p.Count(step)})
	}
	if diff := cmp.Diff(want, readWithJAX(t, path, step)); diff != "" {
		t.Errorf("jax.profiler.ProfileData reads the file differently (-raytpu +jax):\n%s", diff)
	}
	if _, err := tr.WriteLogDir(dir, "run1"); !errors.Is(err, os.ErrExist) {
		t.Errorf("a second WriteLogDir to the same run = %v, want an error wrapping os.ErrExist", err)
	}
}

// With every tracer off the server returns a trace without events, which
// Capture refuses as empty.
func TestCaptureRefusesEmptyTrace(t *testing.T) {
	t.Parallel()
	addr := startJAX(t, "60")
	off := 0
	tr, err := profiler.Capture(t.Context(), addr, profiler.Options{Duration: 200 * time.Millisecond, HostTracerLevel: &off, NoDeviceTracer: true})
	if !errors.Is(err, profiler.ErrEmptyTrace) {
		t.Fatalf("Capture with every tracer off = %v, want ErrEmptyTrace", err)
	}
	if tr == nil || tr.Summary.Events() != 0 {
		t.Errorf("the empty trace comes back for inspection with 0 events, got %+v", tr)
	}
}

// No server at the address: the error names the target.
func TestCaptureNoServer(t *testing.T) {
	t.Parallel()
	_, err := profiler.Capture(t.Context(), "127.0.0.1:1", profiler.Options{Duration: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("Capture from a closed port = %v, want an error naming 127.0.0.1:1", err)
	}
}
