package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/serve/servev1"
)

// clusterSpec is the local test cluster, in the simulated cluster's
// format: two v4 2x2x2 slices of two hosts each and one single-host v4 slice.
const clusterSpec = "2*v4-16,v4-8"

var dashboard string

// TestMain starts the cluster with servev1's generated Python on every
// node's PYTHONPATH, as the program's doc asks of a real cluster.
func TestMain(m *testing.M) {
	py, err := os.MkdirTemp("", "raytpu-servev1-")
	if err == nil {
		err = servev1.WritePython(py)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := raytest.MainWith(m, clusterSpec,
		func(c *raycluster.Config) { c.AddPythonPath(py) },
		func(c *raycluster.Cluster) { dashboard = c.DashboardURL })
	os.RemoveAll(py)
	os.Exit(code)
}

// freeAddr returns host:port free on the dashboard's host.
func freeAddr(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(u.Hostname(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// The program on the real cluster: two replicas, each on a v4-16 slice of
// its own, and the query answered by one JAX program over both hosts of
// one of them.
func TestServeOnRealRay(t *testing.T) {
	client, err := ray.NewClient(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	cfg := defaults()
	// The program starts Serve itself, with both proxies.
	cfg.Backend, cfg.Address, cfg.Proxy, cfg.GRPC = "ray", dashboard, "http://"+freeAddr(t), freeAddr(t)
	cfg.X = []float64{1, 2, 3, 4, 5}
	cfg.Delete = true
	var out bytes.Buffer
	st, as, err := run(t.Context(), cfg, &out)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	a, g := as.HTTP, as.GRPC
	if st.State != backend.ServiceRunning || len(st.Deployments) != 1 || st.Deployments[0].Replicas != 2 {
		t.Errorf("status %+v, want RUNNING with 2 replicas", st)
	}
	want := []float64{5, 8, 11, 14, 17} // 3x + 2
	if fmt.Sprint(a.Y) != fmt.Sprint(want) || a.HostSum != 3 || a.Devices != 8 || a.Processes != 2 {
		t.Errorf("answer %+v, want y=%v over 8 devices of 2 processes, host sum 1+2=3", a, want)
	}
	if len(a.Hosts) != 2 || a.Hosts[0].NodeID == a.Hosts[1].NodeID ||
		a.Hosts[0].Labels["ray.io/tpu-slice-name"] != a.Hosts[1].Labels["ray.io/tpu-slice-name"] ||
		a.Hosts[0].Labels["ray.io/tpu-pod-type"] != "v4-16" {
		t.Errorf("hosts %+v, want the two hosts of one v4-16 slice", a.Hosts)
	}
	for i, h := range a.Hosts {
		if h.Rank != i || h.Labels["ray.io/tpu-worker-id"] != strconv.Itoa(i) {
			t.Errorf("host %d: rank %d on TPU worker %s, want JAX process i on TPU worker i", i, h.Rank, h.Labels["ray.io/tpu-worker-id"])
		}
	}
	// The same computation over gRPC, through raytpu's Predictor service.
	if fmt.Sprint(g.Y) != fmt.Sprint(want) || g.HostSum != 3 || g.Devices != 8 || g.Processes != 2 {
		t.Errorf("gRPC answer %+v, want y=%v over 8 devices of 2 processes, host sum 3", g, want)
	}
	for _, line := range []string{"starting Serve: HTTP proxy", "HTTP: ", "answered y=[5 8 11 14 17]", "gRPC: Predictor.Predict answered y=[5 8 11 14 17]"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("output lacks %q", line)
		}
	}
	// --delete removed it.
	deadline := time.Now().Add(time.Minute)
	for {
		d, err := client.ServeApplications(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := d.Applications[cfg.Name]; !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("application %s still there a minute after --delete", cfg.Name)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// The same program on the simulator: each replica's two bundles land on
// the two hosts of a slice of its own; a third replica finds no slice.
func TestServeOnTheSimulator(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.Cluster = clusterSpec
	var out bytes.Buffer
	st, a, err := run(t.Context(), cfg, &out)
	if err != nil || a != nil || st.Ran || st.State != backend.ServiceSimulated ||
		!strings.Contains(out.String(), "simulator: the simulated cluster runs nothing and has no Serve endpoints; skipping the HTTP and gRPC queries") {
		t.Fatalf("run on sim = %+v, %+v, %v; want a simulated status and no answer", st, a, err)
	}
	slicesOf := map[int]map[string]bool{}
	for _, l := range st.Landings {
		if slicesOf[l.Part.Index] == nil {
			slicesOf[l.Part.Index] = map[string]bool{}
		}
		slicesOf[l.Part.Index][l.SliceName] = true
	}
	if len(st.Landings) != 4 || len(slicesOf) != 2 || len(slicesOf[0]) != 1 || len(slicesOf[1]) != 1 {
		t.Errorf("landings %+v, want 2 replicas × 2 bundles, each replica on one slice", st.Landings)
	}
	for s := range slicesOf[0] {
		if slicesOf[1][s] {
			t.Errorf("both replicas on slice %s", s)
		}
	}
	if !strings.Contains(out.String(), `deployment "Linear" replica 1 bundle 1 -> `) {
		t.Errorf("output %q does not say where replica 1 landed", out.String())
	}

	cfg.Replicas = 3
	_, _, err = run(t.Context(), cfg, &out)
	var pe *backend.PlacementError
	if !errors.As(err, &pe) {
		t.Errorf("3 replicas on %s: err = %v, want a *backend.PlacementError", clusterSpec, err)
	}
}
