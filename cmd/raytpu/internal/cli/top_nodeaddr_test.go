package cli_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/observe"
)

// forwarder accepts TCP connections and pipes each to target, as kubectl
// port-forward does, counting them.
func forwarder(t *testing.T, target string) (addr string, conns *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	conns = new(atomic.Int64)
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer in.Close()
				out, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer out.Close()
				go io.Copy(out, in)
				io.Copy(in, out)
			}()
		}
	}()
	return l.Addr().String(), conns
}

// TestTopNodeAddrOnRealRay: `raytpu top --node-addr` reads a node's real
// export through the address given (a forwarder, as a port-forward from
// outside a Kubernetes cluster would be), and a node sent to a closed
// port is reported unreadable at that address while the others are read.
func TestTopNodeAddrOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	a1, ok := c.MetricsAddr("slice-a/1")
	b0, ok2 := c.MetricsAddr("slice-b/0")
	if !ok || !ok2 {
		t.Fatal("no metrics address for slice-a/1 or slice-b/0")
	}
	ipA1, _, _ := net.SplitHostPort(a1)
	ipB0, _, _ := net.SplitHostPort(b0)
	fwd, conns := forwarder(t, a1)

	var out, errb bytes.Buffer
	code := cli.Main(t.Context(), []string{"top", "-o", "json", "--address", c.DashboardURL,
		"--node-addr", ipA1 + "=" + fwd, "--node-addr", ipB0 + "=127.0.0.1:1"}, &out, &errb)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m observe.TPUMetrics
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if conns.Load() == 0 {
		t.Error("the forwarder given for slice-a/1 was never used")
	}
	seen := 0
	for _, s := range m.Slices {
		for _, h := range s.Hosts {
			switch h.IP {
			case ipA1:
				seen++
				if h.Err != "" || len(h.Chips) != 4 {
					t.Errorf("slice-a/1 through the forwarder: err %q, %d chips; want its 4 chips", h.Err, len(h.Chips))
				}
			case ipB0:
				seen++
				if !strings.Contains(h.Err, "127.0.0.1:1") {
					t.Errorf("slice-b/0 sent to a closed port: err %q, want it to name 127.0.0.1:1", h.Err)
				}
			}
		}
	}
	if seen != 2 {
		t.Errorf("found %d of the two overridden hosts in %+v", seen, m)
	}

	_, errOut, code := run(t, "top", "--once", "--address", c.DashboardURL, "--node-addr", "10.0.0.1:8080")
	if code != cli.ExitUsage || !strings.Contains(errOut, `--node-addr "10.0.0.1:8080"`) || !strings.Contains(errOut, "NODE=HOST:PORT") {
		t.Errorf("bad --node-addr: exit %d, stderr %q; want a usage error naming the value and the form", code, errOut)
	}
}
