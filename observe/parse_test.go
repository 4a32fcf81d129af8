package observe_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/observe"
)

// capture is the export of a real Ray 2.60 worker node posing as host 0 of
// a v4-16 slice, beside a device-plugin emulator whose chip i was set to
// tensorcore i+1 %, duty cycle 50+i %, bandwidth 30+i %, HBM (i+1) GiB of
// 32 GiB (written by TestTopOnRealRay in cmd/raytpu/internal/cli with
// RAYTPU_CAPTURE_EXPORT set).
const capture = "testdata/ray-node-export.prom"

func readCapture(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(capture)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseExportOfARealNode(t *testing.T) {
	t.Parallel()
	got, err := observe.ParseExport(bytes.NewReader(readCapture(t)))
	if err != nil {
		t.Fatal(err)
	}
	want := observe.Export{Model: "tpu-v4-podslice", Topology: "2x2x2"}
	for i := range 4 {
		want.Chips = append(want.Chips, observe.Chip{
			Index: i, DeviceName: "7655214000419591399-" + string(rune('0'+i)),
			TensorCoreUtilization: float64(i + 1), DutyCycle: float64(50 + i), MemoryBandwidthUtilization: float64(30 + i),
			HBMUsed: int64(i+1) << 30, HBMTotal: 32 << 30,
		})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseExport (-want +got):\n%s", diff)
	}
}

func TestParseExport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		chips      int
		err        string
	}{
		{"no TPU gauges", "# TYPE ray_node_cpu_count gauge\nray_node_cpu_count{ip=\"1.2.3.4\"} 8\n", 0, ""},
		{"empty", "", 0, ""},
		{"missing index", "# TYPE ray_tpu_duty_cycle gauge\nray_tpu_duty_cycle{TpuType=\"x\"} 1\n", 0,
			`observe: ray_tpu_duty_cycle: label TpuIndex="": want a chip index >= 0`},
		{"negative index", "ray_tpu_duty_cycle{TpuIndex=\"-1\"} 1\n", 0,
			`observe: ray_tpu_duty_cycle: label TpuIndex="-1": want a chip index >= 0`},
		{"bad value", "ray_tpu_duty_cycle{TpuIndex=\"0\"} abc\n", 0,
			`observe: parse metrics: text format parsing error in line 1: expected float as value, got "abc"`},
		{"untyped samples", "ray_tpu_duty_cycle{TpuIndex=\"1\"} 7\nray_tpu_memory_total{TpuIndex=\"1\"} 9\n", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := observe.ParseExport(strings.NewReader(tc.text))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("ParseExport: got error %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Chips) != tc.chips {
				t.Errorf("got %d chips, want %d: %+v", len(got.Chips), tc.chips, got)
			}
		})
	}
}

func FuzzParseExport(f *testing.F) {
	f.Add("ray_tpu_duty_cycle{TpuIndex=\"0\"} 1\n")
	f.Add("# TYPE ray_tpu_memory_used gauge\nray_tpu_memory_used{TpuIndex=\"3\",TpuType=\"t\"} 1e9\n")
	f.Fuzz(func(t *testing.T, text string) {
		exp, err := observe.ParseExport(strings.NewReader(text))
		if err != nil {
			return
		}
		for i := 1; i < len(exp.Chips); i++ {
			if exp.Chips[i-1].Index >= exp.Chips[i].Index {
				t.Fatalf("chips not sorted by index: %+v", exp.Chips)
			}
		}
	})
}

func TestGroup(t *testing.T) {
	t.Parallel()
	exp, err := observe.ParseExport(bytes.NewReader(readCapture(t)))
	if err != nil {
		t.Fatal(err)
	}
	nodes := []observe.NodeExport{
		{Node: node("n3", "10.0.0.3", "slice-b", "0", "v6e-4", "2x2"), Export: exp},
		{Node: node("n2", "10.0.0.2", "slice-a", "1", "v4-16", "2x2x2"), Export: exp},
		{Node: node("n1", "10.0.0.1", "slice-a", "0", "v4-16", "2x2x2"), Export: observe.Export{}},
		{Node: node("n4", "10.0.0.4", "", "", "", ""), Err: errString("observe: node n4: GET http://10.0.0.4:8080/metrics: connection refused")},
	}
	// n3's agent read nothing in its latest round: its gauges are stale.
	nodes[0].Node.ReportedTPUs = 0
	got := observe.Group(nodes)
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "group.json", append(b, '\n'))
}
