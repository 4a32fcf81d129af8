package cli_test

import (
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/tpuplugin"
	"github.com/raytpu/raytpu/observe"
	"github.com/raytpu/raytpu/ray"
)

// hostOf returns the host of the named slice with the given worker id.
func hostOf(m observe.TPUMetrics, slice string, worker int) (observe.Host, bool) {
	for _, s := range m.Slices {
		if s.Name != slice {
			continue
		}
		for _, h := range s.Hosts {
			if h.WorkerID == worker {
				return h, true
			}
		}
	}
	return observe.Host{}, false
}

// TestNodeSuffixedPluginOnRealRay: a plugin that names its node-scoped
// families tensorcore_utilization_node and memory_bandwidth_utilization_node
// (tpu-device-plugin v1.35.7-gke.0) gives Ray 2.60 runtime samples for
// four chips and node samples for none, so Ray's parser drops each reading
// ("two sets of metrics for different chip counts") and its ray_tpu_*
// gauges keep the last values it read. raytpu reads those stale values and
// flags the host Stale, because the node's latest physical stats list no
// TPU.
func TestNodeSuffixedPluginOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	p, _ := c.TPUPlugin("slice-b/0")
	t.Cleanup(func() { p.SetNodeSuffix(false) })
	client, err := ray.NewClient(c.DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	r, err := observe.NewReader(client)
	if err != nil {
		t.Fatal(err)
	}
	set := func(tc float64) {
		for i := range 4 {
			if err := p.Set(i, tpuplugin.Chip{TensorCoreUtilization: tc + float64(i), DutyCycle: tc, MemoryTotal: 1 << 30}); err != nil {
				t.Fatal(err)
			}
		}
	}
	wait := func(what string, ok func(observe.Host) bool) observe.Host {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			m, err := r.TPUMetrics(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			h, _ := hostOf(m, "slice-b", 0)
			if ok(h) {
				return h
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 90s; last reading of slice-b host 0: %+v", what, h)
			}
			time.Sleep(time.Second)
		}
	}
	set(80)
	wait("Ray re-exports the values of the plugin's Ray-named layout", func(h observe.Host) bool {
		return !h.Stale && len(h.Chips) == 4 && h.Chips[3].TensorCoreUtilization == 83
	})
	scrapes := p.Scrapes()
	p.SetNodeSuffix(true)
	set(20)
	// Three of Ray's reads of the plugin.
	deadline := time.Now().Add(90 * time.Second)
	for p.Scrapes() < scrapes+3 && time.Now().Before(deadline) {
		time.Sleep(time.Second)
	}
	time.Sleep(2 * time.Second)
	h := wait("raytpu flags the host's gauges stale", func(h observe.Host) bool { return h.Stale })
	t.Logf("after %d reads of the _node layout, raytpu reads slice-b host 0 as %+v", p.Scrapes()-scrapes, h)
	for _, c := range h.Chips {
		if c.TensorCoreUtilization != 80+float64(c.Index) || c.DutyCycle != 80 {
			t.Errorf("chip %d: tensorcore %v, duty %v; want the last values Ray read (%v, 80), not the plugin's new ones (%v, 20)",
				c.Index, c.TensorCoreUtilization, c.DutyCycle, 80+c.Index, 20+c.Index)
		}
	}
	if len(h.Chips) != 4 {
		t.Errorf("got %d chips, want Ray's 4 stale ones", len(h.Chips))
	}

	// Back to the names Ray reads: fresh values, no longer stale.
	p.SetNodeSuffix(false)
	wait("Ray reads the plugin again", func(h observe.Host) bool {
		return !h.Stale && len(h.Chips) == 4 && h.Chips[0].TensorCoreUtilization == 20
	})
}
