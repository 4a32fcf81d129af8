package raycluster_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
)

func TestTPUNodes(t *testing.T) {
	t.Parallel()
	got := raycluster.TPUNodes("slice-a", "v4-16", "2x2x2", 2, 4, 1)
	want := []raycluster.Node{
		{Name: "slice-a/0", NumCPUs: 1, Resources: map[string]float64{"TPU": 4}, Env: map[string]string{
			"TPU_NAME": "slice-a", "TPU_WORKER_ID": "0", "TPU_ACCELERATOR_TYPE": "v4-16", "TPU_TOPOLOGY": "2x2x2"}},
		{Name: "slice-a/1", NumCPUs: 1, Resources: map[string]float64{"TPU": 4}, Env: map[string]string{
			"TPU_NAME": "slice-a", "TPU_WORKER_ID": "1", "TPU_ACCELERATOR_TYPE": "v4-16", "TPU_TOPOLOGY": "2x2x2"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TPUNodes (-want +got):\n%s", diff)
	}
}

func TestMissingVenv(t *testing.T) {
	t.Parallel()
	_, err := raycluster.Start(t.Context(), raycluster.Config{Venv: filepath.Join(t.TempDir(), "nope")})
	if err == nil {
		t.Fatal("Start with a missing venv: no error")
	}
	if !errorsIs(err, raycluster.ErrNoRay) {
		t.Fatalf("error %v does not wrap ErrNoRay", err)
	}
	if want := "scripts/setup-venv.sh"; !contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// TestPosingTPUSlice starts a head and the two hosts of a v4-16 slice and
// checks what Ray makes of them, then that Stop leaves nothing behind.
func TestPosingTPUSlice(t *testing.T) {
	c := raytest.Start(t, raycluster.Config{
		HeadCPUs: 1,
		Nodes:    withLabel(raycluster.TPUNodes("slice-a", "v4-16", "2x2x2", 2, 4, 1), "raytpu.dev/pool", "tpu"),
	})
	nodes, err := c.Nodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		IsHead    bool
		Resources map[string]float64
		Labels    map[string]string
	}
	var got []view
	for _, n := range nodes {
		if !n.Alive() {
			t.Errorf("node %s is %s", n.IP, n.State)
		}
		res := map[string]float64{}
		for k, v := range n.Resources {
			switch {
			case k == "memory" || k == "object_store_memory" || len(k) > 5 && k[:5] == "node:" && k != "node:__internal_head__":
				continue
			}
			res[k] = v
		}
		labels := map[string]string{}
		for k, v := range n.Labels {
			if k != "ray.io/node-id" {
				labels[k] = v
			}
		}
		got = append(got, view{n.IsHead, res, labels})
	}
	tpuLabels := func(worker string) map[string]string {
		return map[string]string{
			"ray.io/accelerator-type": "TPU-V4",
			"ray.io/tpu-slice-name":   "slice-a",
			"ray.io/tpu-worker-id":    worker,
			"ray.io/tpu-pod-type":     "v4-16",
			"ray.io/tpu-topology":     "2x2x2",
			"raytpu.dev/pool":         "tpu",
		}
	}
	want := []view{
		{IsHead: true, Resources: map[string]float64{"CPU": 1, "node:__internal_head__": 1}, Labels: map[string]string{}},
		{Resources: map[string]float64{"CPU": 1, "TPU": 4, "accelerator_type:TPU-V4": 1, "slice-a": 1, "TPU-v4-16-head": 1}, Labels: tpuLabels("0")},
		{Resources: map[string]float64{"CPU": 1, "TPU": 4, "accelerator_type:TPU-V4": 1, "slice-a": 1}, Labels: tpuLabels("1")},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	ip, ok := c.NodeIP("slice-a/0")
	if !ok || nodes[1].IP != ip {
		t.Errorf("NodeIP(slice-a/0) = %q, %v; worker 0 has IP %q", ip, ok, nodes[1].IP)
	}

	// State round trip, then kill one host, then stop through the loaded state.
	path := filepath.Join(t.TempDir(), "cluster.json")
	if err := c.WriteState(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := raycluster.LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.DashboardURL != c.DashboardURL || loaded.GCSAddress != c.GCSAddress {
		t.Errorf("LoadState = %s %s, want %s %s", loaded.DashboardURL, loaded.GCSAddress, c.DashboardURL, c.GCSAddress)
	}
	if err := c.KillNode("slice-a/1"); err != nil {
		t.Fatal(err)
	}
	if err := c.KillNode("head"); err == nil {
		t.Error("KillNode(head): no error")
	}
	if len(c.Processes()) == 0 {
		t.Fatal("no cluster processes found before Stop")
	}
	if err := loaded.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if pids := c.Processes(); len(pids) > 0 {
		t.Errorf("processes left after Stop: %v", pids)
	}
}

func withLabel(nodes []raycluster.Node, k, v string) []raycluster.Node {
	for i := range nodes {
		nodes[i].Labels = map[string]string{k: v}
	}
	return nodes
}

// TestStartFailureShowsLogs starts a worker Ray refuses (CPU given as a
// custom resource) and checks the error carries Ray's own message and that
// nothing is left running.
func TestStartFailureShowsLogs(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("/tmp", "rtf")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	c, err := raycluster.Start(t.Context(), raycluster.Config{
		HeadCPUs: 1,
		TempDir:  dir,
		Nodes:    []raycluster.Node{{Name: "bad", Resources: map[string]float64{"CPU": 3}}},
	})
	if err == nil {
		c.Stop()
		t.Fatal("Start with CPU in --resources: no error")
	}
	t.Logf("Start error:\n%v", err)
	for _, want := range []string{"ray start for bad", "--num-cpus", "ray-start.log"} {
		if !contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// No process may still refer to the cluster's directory.
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && contains(string(b), dir) {
			t.Errorf("process %s still running: %q", e.Name(), b)
		}
	}
}

// TestClustersSideBySide runs a task on one of two clusters that share the
// machine. Ray code inside a task that looks up "the" cluster without an
// address (the state API, as Ray Train's PlacementGroupCleaner uses it)
// must find its own cluster, not fail on finding two.
func TestClustersSideBySide(t *testing.T) {
	t.Parallel()
	a := raytest.Start(t, raycluster.Config{HeadCPUs: 1})
	b := raytest.Start(t, raycluster.Config{HeadCPUs: 1})
	const driver = `
import json, os, ray
ray.init(address=os.environ["TEST_GCS_ADDRESS"], logging_level="ERROR")

@ray.remote(num_cpus=0)
def node_ips():
    from ray.util.state import list_nodes
    return sorted(n.node_ip for n in list_nodes())

print("NODE_IPS=" + json.dumps(ray.get(node_ips.remote())))
`
	for _, c := range []*raycluster.Cluster{a, b} {
		cmd := exec.CommandContext(t.Context(), c.Python(), "-c", driver)
		cmd.Env = append(os.Environ(), "TEST_GCS_ADDRESS="+c.GCSAddress, "RAY_ADDRESS=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("driver on %s: %v\n%s", c.GCSAddress, err, out)
		}
		headIP, _, _ := strings.Cut(c.GCSAddress, ":")
		want := `NODE_IPS=["` + headIP + `"]`
		if !strings.Contains(string(out), want) {
			t.Errorf("a task on cluster %s saw the wrong cluster: want %s in\n%s", c.GCSAddress, want, out)
		}
	}
}
