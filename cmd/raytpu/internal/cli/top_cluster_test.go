package cli_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/internal/tpuplugin"
	"github.com/raytpu/raytpu/observe"
	"github.com/raytpu/raytpu/ray"
)

// The TPU cluster of the `raytpu top` tests: a head and three hosts posing
// as TPU hosts, each beside a device-plugin emulator: slice-a, a v4-16
// (2x2x2, two hosts of four chips), and slice-b, a v6e-4 (2x2, one host).
// It starts on first use and stops in TestMain.
var (
	tpuClusterOnce sync.Once
	tpuCluster     *raycluster.Cluster
	tpuClusterErr  error
)

// TestMain stops what the tests started on first use: the TPU cluster, and
// the kube control plane of the ...OnKube tests (kubetest.Shared).
func TestMain(m *testing.M) {
	code := kubetest.Main(m)
	if tpuCluster != nil {
		if err := tpuCluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop local Ray cluster:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

func realTPUCluster(t testing.TB) *raycluster.Cluster {
	t.Helper()
	tpuClusterOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		nodes := raycluster.TPUNodes("slice-a", "v4-16", "2x2x2", 2, 4, 1)
		nodes = append(nodes, raycluster.TPUNodes("slice-b", "v6e-4", "2x2", 1, 4, 1)...)
		tpuCluster, tpuClusterErr = raycluster.Start(ctx, raycluster.Config{HeadCPUs: 1, Nodes: nodes, TPUPlugins: true})
	})
	if tpuClusterErr != nil {
		t.Fatalf("this test needs a local Ray cluster posing as TPU hosts: %v", tpuClusterErr)
	}
	return tpuCluster
}

// chipValues is what the test sets on chip i of the k-th emulator: every
// value distinct, so a chip or host mixed up shows.
func chipValues(k, i int, total float64) tpuplugin.Chip {
	return tpuplugin.Chip{
		TensorCoreUtilization:      float64(10*k + i + 1),
		DutyCycle:                  float64(50 + 10*k + i),
		MemoryBandwidthUtilization: float64(30 + 10*k + i),
		MemoryUsed:                 float64(k*4+i+1) * (1 << 30),
		MemoryTotal:                total,
	}
}

// TestTopOnRealRay sets per-chip values in the emulators, waits until real
// Ray's agents have read and re-exported them, and checks that raytpu's
// API and `raytpu top` give back every chip's values under the right slice
// and host.
func TestTopOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	ctx := t.Context()

	// Set the values, and build what must come back.
	want := observe.TPUMetrics{}
	hosts := map[string][]observe.Host{}
	for k, name := range c.TPUPluginNodes() {
		p, _ := c.TPUPlugin(name)
		cfg := p.Config()
		h := observe.Host{WorkerID: cfg.WorkerID}
		for i := range cfg.Chips {
			v := chipValues(k, i, cfg.MemoryTotal)
			if err := p.Set(i, v); err != nil {
				t.Fatal(err)
			}
			h.Chips = append(h.Chips, observe.Chip{
				Index: i, DeviceName: tpuplugin.AcceleratorID(cfg.SliceName, i),
				TensorCoreUtilization: v.TensorCoreUtilization, DutyCycle: v.DutyCycle,
				MemoryBandwidthUtilization: v.MemoryBandwidthUtilization,
				HBMUsed:                    int64(v.MemoryUsed), HBMTotal: int64(v.MemoryTotal),
			})
		}
		h.IP, _ = c.NodeIP(name)
		hosts[cfg.SliceName] = append(hosts[cfg.SliceName], h)
	}
	want.Slices = []observe.Slice{
		{Name: "slice-a", PodType: "v4-16", Model: "tpu-v4-podslice", Topology: "2x2x2", Hosts: hosts["slice-a"]},
		{Name: "slice-b", PodType: "v6e-4", Model: "tpu-v6e-slice", Topology: "2x2", Hosts: hosts["slice-b"]},
	}

	client, err := ray.NewClient(c.DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	r, err := observe.NewReader(client)
	if err != nil {
		t.Fatal(err)
	}
	ignoreNodeID := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".NodeID" }, cmp.Ignore())
	deadline := time.Now().Add(2 * time.Minute)
	var got observe.TPUMetrics
	for {
		start := time.Now()
		got, err = r.TPUMetrics(ctx)
		took := time.Since(start)
		if err == nil && cmp.Diff(want, got, ignoreNodeID) == "" {
			t.Logf("TPUMetrics: every chip's values came back through Ray (one reading took %v)", took)
			break
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("TPUMetrics: %v", err)
			}
			t.Fatalf("TPUMetrics did not return the values set in the emulators within 2m (-want +got):\n%s", cmp.Diff(want, got, ignoreNodeID))
		}
		time.Sleep(time.Second)
	}
	for _, s := range got.Slices {
		for _, h := range s.Hosts {
			if h.NodeID == "" {
				t.Errorf("slice %s host %d: empty NodeID", s.Name, h.WorkerID)
			}
		}
	}

	// The same through `raytpu top --once`, timed: its table is the
	// rendering of the values set.
	var out, errb strings.Builder
	var took []time.Duration
	for range 5 {
		out.Reset()
		start := time.Now()
		code := cli.Main(ctx, []string{"top", "--once", "--address", c.DashboardURL}, &out, &errb)
		took = append(took, time.Since(start))
		if code != cli.ExitOK {
			t.Fatalf("raytpu top --once: exit %d: %s", code, errb.String())
		}
	}
	slices.Sort(took)
	fmt.Printf("raytpu top --once on the test cluster (3 TPU hosts, 12 chips), 5 refreshes: min %v, median %v, max %v\n",
		took[0].Round(time.Millisecond), took[2].Round(time.Millisecond), took[4].Round(time.Millisecond))
	var wantTable strings.Builder
	if err := cli.WriteTopTable(&wantTable, want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantTable.String(), out.String()); diff != "" {
		t.Errorf("raytpu top --once (-want +got):\n%s", diff)
	}
	t.Logf("raytpu top --once:\n%s", out.String())

	if path := os.Getenv("RAYTPU_CAPTURE_EXPORT"); path != "" {
		captureExport(t, c, "slice-a/0", path)
	}
}

// captureExport writes the raw Prometheus text a node's agent serves (the
// benchmarks of package observe parse a capture).
func captureExport(t *testing.T, c *raycluster.Cluster, node, path string) {
	t.Helper()
	addr, ok := c.MetricsAddr(node)
	if !ok {
		t.Fatalf("no metrics address for %s", node)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s's export (%d bytes) to %s", node, len(body), path)
}

func TestTopUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"top", "--metric", "tensor"}, `raytpu: --metric "tensor" is not supported (valid: tensorcore, duty, hbm, hbm-bw)`},
		{[]string{"top", "--interval", "0s"}, "raytpu: --interval 0s: want a positive duration such as 2s"},
		{[]string{"top", "-o", "yaml"}, `raytpu: --output "yaml" is not supported (valid: table, json, svg)`},
	} {
		_, errOut, code := run(t, tc.args...)
		if code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d", tc.args, code, cli.ExitUsage)
		}
		if first, _, _ := strings.Cut(errOut, "\n"); first != tc.msg {
			t.Errorf("%v: stderr %q, want first line %q", tc.args, errOut, tc.msg)
		}
	}
}

// TestTopRefreshesOnRealRay: without --once, top prints a reading every interval
// (with a timestamp line when the output is not a terminal) until it is
// interrupted, and then exits 0.
func TestTopRefreshesOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2500*time.Millisecond)
	defer cancel()
	var out, errb strings.Builder
	code := cli.Main(ctx, []string{"top", "--interval", "1s", "--address", c.DashboardURL}, &out, &errb)
	if code != cli.ExitOK {
		t.Fatalf("raytpu top: exit %d: %s", code, errb.String())
	}
	header := "raytpu top  " + c.DashboardURL + "  "
	if n := strings.Count(out.String(), header); n < 2 {
		t.Errorf("%d readings in 2.5s at 1s intervals, want at least 2:\n%s", n, out.String())
	}
	if n := strings.Count(out.String(), "SLICE slice-a "); n != strings.Count(out.String(), header) {
		t.Errorf("%d tables for %d readings:\n%s", n, strings.Count(out.String(), header), out.String())
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Errorf("escape sequences in output that is not a terminal:\n%q", out.String())
	}
}
