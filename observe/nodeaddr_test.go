package observe_test

import (
	"testing"

	"github.com/raytpu/raytpu/observe"
	"github.com/raytpu/raytpu/ray"
)

// TestNodeAddrs: a node is found by id first, then by IP; one in neither
// gets "" (the Reader then reads its own MetricsAddr); the map given is
// copied.
func TestNodeAddrs(t *testing.T) {
	t.Parallel()
	addrs := map[string]string{
		"n1":       "127.0.0.1:18081",
		"10.0.0.2": "127.0.0.1:18082",
		"10.0.0.1": "127.0.0.1:19999", // n1's IP: the id wins
	}
	f := observe.NodeAddrs(addrs)
	addrs["10.0.0.3"] = "changed after the call"
	cases := []struct {
		name string
		node ray.Node
		want string
	}{
		{"by id", node("n1", "10.0.0.1", "s", "0", "v4-16", "2x2x2"), "127.0.0.1:18081"},
		{"by ip", node("n2", "10.0.0.2", "s", "1", "v4-16", "2x2x2"), "127.0.0.1:18082"},
		{"neither", node("n3", "10.0.0.3", "s", "2", "v4-16", "2x2x2"), ""},
		{"empty id is no key", ray.Node{IP: "10.0.0.2"}, "127.0.0.1:18082"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := f(c.node); got != c.want {
				t.Errorf("addr of %s/%s = %q, want %q", c.node.ID, c.node.IP, got, c.want)
			}
		})
	}
	if _, err := observe.NewReader(mustClient(t), observe.WithNodeAddr(nil)); err == nil {
		t.Error("WithNodeAddr(nil) accepted")
	}
}

func mustClient(t *testing.T) *ray.Client {
	t.Helper()
	c, err := ray.NewClient("http://127.0.0.1:8265")
	if err != nil {
		t.Fatal(err)
	}
	return c
}
