package cli_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/observe"
	"github.com/raytpu/raytpu/ray"
)

// refuse is a transport that fails every request to the listed hosts, as
// a node whose metrics port is firewalled off would.
type refuse struct{ hosts []string }

func (r refuse) RoundTrip(req *http.Request) (*http.Response, error) {
	for _, h := range r.hosts {
		if req.URL.Host == h {
			return nil, errors.New("connection refused (injected)")
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestTPUMetricsUnreadableNodesOnRealRay: on the real cluster, a node whose export
// cannot be read is reported in its host's Err while the others are read;
// when no TPU node can be read TPUMetrics fails.
func TestTPUMetricsUnreadableNodesOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	client, err := ray.NewClient(c.DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, name := range c.TPUPluginNodes() {
		addr, ok := c.MetricsAddr(name)
		if !ok {
			t.Fatalf("no metrics address for %s", name)
		}
		all = append(all, addr)
	}
	one, _ := c.MetricsAddr("slice-a/1")

	r, err := observe.NewReader(client, observe.WithHTTPClient(&http.Client{Transport: refuse{[]string{one}}}))
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.TPUMetrics(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, s := range m.Slices {
		for _, h := range s.Hosts {
			switch {
			case s.Name == "slice-a" && h.WorkerID == 1:
				if !strings.Contains(h.Err, "connection refused (injected)") || len(h.Chips) != 0 {
					t.Errorf("slice-a host 1: Err %q, %d chips; want the injected error and no chips", h.Err, len(h.Chips))
				}
			case h.Err != "":
				t.Errorf("%s host %d: unexpected error %s", s.Name, h.WorkerID, h.Err)
			default:
				read++
			}
		}
	}
	if read != 2 {
		t.Errorf("%d hosts read, want the other 2", read)
	}

	r, err = observe.NewReader(client, observe.WithHTTPClient(&http.Client{Transport: refuse{all}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.TPUMetrics(t.Context()); err == nil || !strings.Contains(err.Error(), "no TPU node's metrics could be read (3 nodes)") {
		t.Errorf("every node refused: got %v, want an error saying no TPU node could be read", err)
	}
}
