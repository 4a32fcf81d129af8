package ray_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/raytpu/raytpu/ray"
)

// TestNodes: the node summary of the real dashboard lists the head with
// its labels and the metrics export port the cluster started it with.
func TestNodes(t *testing.T) {
	t.Parallel()
	c := realCluster(t)
	nodes, err := realClient(t).Nodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 {
		t.Fatalf("got %d nodes, want the head only: %+v", len(nodes), nodes)
	}
	head := nodes[0]
	wantAddr, _ := c.MetricsAddr("head")
	wantIP, _ := c.NodeIP("head")
	if !head.IsHead || !head.Alive() || head.IP != wantIP || head.MetricsAddr() != wantAddr {
		t.Errorf("head = %+v (MetricsAddr %q); want an alive head at %s exporting metrics on %s", head, head.MetricsAddr(), wantIP, wantAddr)
	}
	if head.Labels["ray.io/node-id"] != head.ID || head.ID == "" {
		t.Errorf("head id %q, label ray.io/node-id %q: want the same, non-empty", head.ID, head.Labels["ray.io/node-id"])
	}
	if head.Resources["CPU"] != 2 {
		t.Errorf("head CPU = %v, want 2", head.Resources["CPU"])
	}
}

func TestNodeMetricsAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    ray.Node
		want string
	}{
		{ray.Node{IP: "10.0.0.1", MetricsExportPort: 8080}, "10.0.0.1:8080"},
		{ray.Node{IP: "fd00::1", MetricsExportPort: 8080}, "[fd00::1]:8080"},
		{ray.Node{IP: "10.0.0.1"}, ""},
		{ray.Node{MetricsExportPort: 8080}, ""},
	} {
		if got := tc.n.MetricsAddr(); got != tc.want {
			t.Errorf("%+v.MetricsAddr() = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func ExampleClient_Nodes() {
	c, err := ray.NewClient("http://127.0.0.1:8265")
	if err != nil {
		panic(err)
	}
	nodes, err := c.Nodes(context.Background())
	if err != nil {
		panic(err)
	}
	for _, n := range nodes {
		fmt.Println(n.ID, n.IP, n.State, n.Labels["ray.io/tpu-slice-name"], n.MetricsAddr())
	}
}
