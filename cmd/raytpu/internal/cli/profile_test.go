package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
)

// Flags that do not make one capture are usage errors (exit 2), caught
// before anything is dialled.
func TestProfileUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string // a flag the message names
	}{
		{"no out dir", []string{"--job", "j"}, "--out-dir"},
		{"no mode", []string{"-o", "d"}, "--job"},
		{"two modes", []string{"-o", "d", "--job", "j", "--target", "127.0.0.1:1"}, "--target"},
		{"app without deployment", []string{"-o", "d", "--app", "a"}, "--deployment"},
		{"worker with target", []string{"-o", "d", "--target", "127.0.0.1:1", "--worker", "1"}, "--worker"},
		{"host with job", []string{"-o", "d", "--job", "j", "--host", "1"}, "--host"},
		{"zero duration", []string{"-o", "d", "--target", "127.0.0.1:1", "--duration", "0s"}, "--duration"},
		{"tracer level", []string{"-o", "d", "--target", "127.0.0.1:1", "--host-tracer-level", "5"}, "--host-tracer-level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := cli.Main(t.Context(), append([]string{"profile"}, tc.args...), &stdout, &stderr)
			if code != cli.ExitUsage || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("raytpu profile %v = %d, stderr %q; want exit %d naming %s", tc.args, code, stderr.String(), cli.ExitUsage, tc.want)
			}
		})
	}
}

// A target where no profiler server listens is a failed operation (exit
// 1) that names the target, and nothing is written.
func TestProfileNoServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"profile", "--target", "127.0.0.1:1", "--duration", "100ms", "-o", dir}, &stdout, &stderr)
	if code != cli.ExitInvalid || !strings.Contains(stderr.String(), "127.0.0.1:1") {
		t.Errorf("raytpu profile --target 127.0.0.1:1 = %d, stderr %q; want exit %d naming the target", code, stderr.String(), cli.ExitInvalid)
	}
}
