package cli_test

import (
	"strings"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
)

// deadAddress is a local host:port where nothing listens: port 1, which
// no server of the tests binds. A port freed by closing a listener is
// not: the kernel may hand it to the next listener of the same machine
// (a parallel test's server, the package's kube-apiserver) before the
// command connects, which then answers.
func deadAddress(t *testing.T) string {
	t.Helper()
	return "127.0.0.1:1"
}

// TestAddressWithoutScheme: --address host:port is read as
// http://host:port, as Ray's job CLI reads RAY_ADDRESS; the command then
// fails to connect (nothing listens), not to parse the address.
func TestAddressWithoutScheme(t *testing.T) {
	t.Parallel()
	addr := deadAddress(t)
	for _, args := range [][]string{
		{"serve", "status", "chat", "--address", addr},
		{"job", "list", "--address", addr},
	} {
		_, errOut, code := run(t, args...)
		if code != cli.ExitInvalid || !strings.Contains(errOut, "http://"+addr) || strings.Contains(errOut, "first path segment") {
			t.Errorf("%v: exit %d, stderr %q; want a connection error naming http://%s", args, code, errOut, addr)
		}
	}
	// A scheme other than http and https is still a usage error.
	if _, errOut, code := run(t, "job", "list", "--address", "ray://"+addr); code != cli.ExitUsage {
		t.Errorf("ray:// address: exit %d, stderr %q; want a usage error", code, errOut)
	}
}

// TestServeWaitUnreachable: serve wait on a dashboard nobody answers for
// fails after the first poll's retries, saying it cannot reach the
// address, instead of waiting out --timeout and reporting NOT_STARTED.
func TestServeWaitUnreachable(t *testing.T) {
	t.Parallel()
	addr := deadAddress(t)
	out, errOut, code := run(t, "serve", "wait", "chat", "--address", "http://"+addr, "--timeout", "10m")
	if code != cli.ExitInvalid {
		t.Fatalf("exit %d, want %d; stderr %q", code, cli.ExitInvalid, errOut)
	}
	if !strings.Contains(errOut, "cannot reach the Ray dashboard at http://"+addr) || strings.Contains(errOut+out, "NOT_STARTED") {
		t.Errorf("stdout %q, stderr %q; want it to say it cannot reach http://%s", out, errOut, addr)
	}
}

// TestHeadReservationTimeoutFile: an application file's
// head_reservation_timeout_s is seconds: 30 reaches the replicas' slice
// reservation as 30, not as 30 nanoseconds.
func TestHeadReservationTimeoutFile(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "render", "-f", "testdata/apps/head-timeout.yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d; stderr %s", code, errOut)
	}
	if !strings.Contains(out, `\"head_reservation_timeout_s\":30}`) && !strings.Contains(out, `"head_reservation_timeout_s":30}`) {
		t.Errorf("the rendered config has no head_reservation_timeout_s of 30:\n%s", out)
	}
}
