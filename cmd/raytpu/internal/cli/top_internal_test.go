package cli

import (
	"bytes"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/observe"
)

// fixedMetrics is a reading with every case the renderers draw: a
// two-host slice, a single-host slice, a host Ray reports no chips for,
// a host whose export could not be read, and one without a slice name.
func fixedMetrics() observe.TPUMetrics {
	chips := func(base float64, n int) []observe.Chip {
		var out []observe.Chip
		for i := range n {
			f := float64(i)
			out = append(out, observe.Chip{
				Index: i, DeviceName: "4804690994094478883-" + string(rune('0'+i)),
				TensorCoreUtilization: base + 20*f, DutyCycle: base + 5*f, MemoryBandwidthUtilization: base / 2,
				HBMUsed: int64(base+f) << 28, HBMTotal: 32 << 30,
			})
		}
		return out
	}
	return observe.TPUMetrics{Slices: []observe.Slice{
		{Name: "", Hosts: []observe.Host{{WorkerID: -1, NodeID: "n9", IP: "10.0.0.9", Chips: []observe.Chip{}, Err: "observe: node n9: GET http://10.0.0.9:8080/metrics: connection refused"}}},
		{Name: "serve-b", PodType: "v6e-4", Model: "tpu-v6e-slice", Topology: "2x2", Hosts: []observe.Host{
			{WorkerID: 0, NodeID: "n3", IP: "10.0.0.3", Chips: []observe.Chip{}},
		}},
		{Name: "train-a", PodType: "v4-16", Model: "tpu-v4-podslice", Topology: "2x2x2", Hosts: []observe.Host{
			{WorkerID: 0, NodeID: "n1", IP: "10.0.0.1", Chips: chips(10, 4)},
			{WorkerID: 1, NodeID: "n2", IP: "10.0.0.2", Chips: chips(35, 4), Stale: true},
		}},
	}}
}

func TestTopTableGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := writeTopTable(&b, fixedMetrics()); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "top-table.txt", b.Bytes())

	b.Reset()
	if err := writeTopTable(&b, observe.TPUMetrics{}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "no TPU nodes in the cluster\n"; got != want {
		t.Errorf("empty reading: got %q, want %q", got, want)
	}
}

func TestTopHeatMapGolden(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"tensorcore", "hbm"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m, ok := heatMetricByName(name)
			if !ok {
				t.Fatalf("no metric %q", name)
			}
			var b bytes.Buffer
			if err := writeHeatMap(&b, fixedMetrics(), m); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, "top-heatmap-"+name+".svg", b.Bytes())
		})
	}
}

func TestHeatColorEnds(t *testing.T) {
	t.Parallel()
	for p, want := range map[float64]string{-5: "#ffffff", 0: "#ffffff", 50: "#fd8d3c", 100: "#7f0000", 140: "#7f0000"} {
		if got := heatColor(p); got != want {
			t.Errorf("heatColor(%v) = %s, want %s", p, got, want)
		}
	}
}
