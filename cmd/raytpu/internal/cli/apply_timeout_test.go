package cli_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
)

// silentServer accepts connections and never answers, as a hung
// kube-apiserver does; it returns the server's URL.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// apply --wait --timeout bounds the whole command, the apiserver calls
// included: against a server that never answers it ends within the
// timeout and a second, with an error.
func TestApplyTimeoutBoundsAnUnansweringServer(t *testing.T) {
	t.Parallel()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + silentServer(t) +
		"\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user: {}\ncurrent-context: c\n"
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, errOut, code := run(t, "apply", "-f", "testdata/plans/jaxtrain-v6e-two-slices.json", "--kubeconfig", kubeconfig, "--wait", "--timeout", "2s")
	if took := time.Since(start); took > 7*time.Second {
		t.Errorf("apply took %s against a server that never answers, want the 2s timeout (and at most 5s of slack for a loaded machine)", took)
	}
	if code != cli.ExitInvalid || out != "" || !strings.Contains(errOut, "deadline") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout and a deadline error", code, out, errOut)
	}
}
