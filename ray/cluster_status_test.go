package ray_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/ray"
)

// TestClusterStatusOfAnAutoscaler decodes the answer Ray's own code makes
// for a known autoscaler v1 report (testdata/cluster_status.py: the
// monitor's summary dataclass and the dashboard's key conversion, run in
// the project's virtualenv), so the camel-cased node types are Ray's.
func TestClusterStatusOfAnAutoscaler(t *testing.T) {
	t.Parallel()
	body, err := exec.CommandContext(t.Context(), venvPython(t), "testdata/cluster_status.py").Output()
	if err != nil {
		t.Fatalf("testdata/cluster_status.py: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/cluster_status" {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	c, err := ray.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.ClusterStatus(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const tpu = "tpu_v4-2x2x2"
	want := ray.ClusterStatus{
		Time:  time.Unix(1796000000, 5e8),
		Error: "launch failed: quota",
		Autoscaler: &ray.AutoscalerReport{
			ActiveNodes:     map[string]int{"headgroup": 1, tpu: 1},
			PendingLaunches: map[string]int{tpu: 2, "cpu-group": 1},
			PendingNodes:    []ray.PendingNode{{NodeType: tpu, Status: "waiting-for-ssh"}},
			FailedNodes:     []ray.PendingNode{{IP: "10.0.0.9", NodeType: tpu}},
			NodeTypeMapping: map[string]string{"null": tpu, "10.0.0.1": "headgroup", "10.0.0.2": tpu, "10.0.0.3": tpu, "10.0.0.9": tpu},
		},
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Fatalf("ClusterStatus (-want +got):\n%s", diff)
	}
	// Starting: the pod with no IP, 10.0.0.3 (up to date, not registered)
	// and the two launches; not the failed node.
	if diff := cmp.Diff(map[string]int{tpu: 4, "cpu-group": 1}, st.Autoscaler.Starting()); diff != "" {
		t.Errorf("Starting (-want +got):\n%s", diff)
	}
	if got, want := st.Autoscaler.StartingSummary(), "1 cpu-group node, 4 tpu_v4-2x2x2 nodes"; got != want {
		t.Errorf("StartingSummary = %q, want %q", got, want)
	}
}

func TestAutoscalerReportStarting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		r    *ray.AutoscalerReport
		want map[string]int
	}{
		{"no autoscaler", nil, map[string]int{}},
		{"all up", &ray.AutoscalerReport{
			ActiveNodes:     map[string]int{"headgroup": 1, "tpu": 2},
			NodeTypeMapping: map[string]string{"a": "headgroup", "b": "tpu", "c": "tpu"},
		}, map[string]int{}},
		{"pods with no IP share a key", &ray.AutoscalerReport{
			ActiveNodes:     map[string]int{"headgroup": 1},
			PendingNodes:    []ray.PendingNode{{NodeType: "tpu"}, {NodeType: "tpu"}},
			NodeTypeMapping: map[string]string{"a": "headgroup", "None": "tpu"},
		}, map[string]int{"tpu": 2}},
		{"launching only", &ray.AutoscalerReport{
			ActiveNodes:     map[string]int{"headgroup": 1},
			PendingLaunches: map[string]int{"tpu": 2},
			NodeTypeMapping: map[string]string{"a": "headgroup"},
		}, map[string]int{"tpu": 2}},
		{"a failed node is not starting", &ray.AutoscalerReport{
			ActiveNodes:     map[string]int{"headgroup": 1},
			FailedNodes:     []ray.PendingNode{{IP: "b", NodeType: "tpu"}},
			NodeTypeMapping: map[string]string{"a": "headgroup", "b": "tpu"},
		}, map[string]int{}},
	} {
		if diff := cmp.Diff(tc.want, tc.r.Starting()); diff != "" {
			t.Errorf("%s: Starting (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestClusterStatusOfALocalCluster: a cluster started with ray start runs
// autoscaler v1 on a read-only provider, whose node types are "node_" and
// the node id; once its first pass reported, the real dashboard answers
// the head active under its type (the key it camel-cased mapped back) and
// nothing starting.
func TestClusterStatusOfALocalCluster(t *testing.T) {
	t.Parallel()
	c := realClient(t)
	nodes, err := c.Nodes(t.Context())
	if err != nil || len(nodes) == 0 {
		t.Fatalf("Nodes: %v, %v", nodes, err)
	}
	headType := "node_" + nodes[0].ID
	var st ray.ClusterStatus
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		if st, err = c.ClusterStatus(t.Context()); err != nil {
			t.Fatal(err)
		}
		if st.Autoscaler != nil || time.Now().After(deadline) {
			break
		}
	}
	if st.Autoscaler == nil {
		t.Fatalf("no autoscaler report within a minute: %+v", st)
	}
	if diff := cmp.Diff(map[string]int{headType: 1}, st.Autoscaler.ActiveNodes); diff != "" {
		t.Errorf("ActiveNodes (-want +got):\n%s", diff)
	}
	if s := st.Autoscaler.Starting(); len(s) != 0 || st.Time.IsZero() {
		t.Errorf("Starting = %v, Time = %v; want nothing starting, a report time", s, st.Time)
	}
}

// ExampleClient_ClusterStatus says which nodes a cluster's autoscaler is
// bringing up, as Serve's wait does while a slice scales from zero.
func ExampleClient_ClusterStatus() {
	c, err := ray.NewClient("http://127.0.0.1:8265")
	if err != nil {
		panic(err)
	}
	st, err := c.ClusterStatus(context.Background())
	if err != nil {
		panic(err)
	}
	if st.Autoscaler == nil {
		fmt.Println("no autoscaler")
		return
	}
	fmt.Println("report of", st.Time.Format(time.RFC3339), "starting:", st.Autoscaler.StartingSummary())
}
