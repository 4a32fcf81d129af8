package tpuplugin_test

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/internal/tpuplugin"
	"github.com/raytpu/raytpu/rayvocab"
)

// scrape fetches the server's /metrics over HTTP and returns the TPU
// families re-encoded in name order, and the names of all families.
func scrape(t *testing.T, s *tpuplugin.Server) ([]byte, []string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+s.Addr()+"/metrics", nil)
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
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: HTTP %d: %s", resp.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	var names []string
	for n := range fams {
		names = append(names, n)
	}
	slices.Sort(names)
	var out bytes.Buffer
	for _, n := range names {
		if !slices.Contains(tpuFamilies, n) {
			continue
		}
		if _, err := expfmt.MetricFamilyToText(&out, fams[n]); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes(), names
}

var tpuFamilies = []string{
	"duty_cycle", "duty_cycle_node", "memory_total", "memory_used",
	"memory_bandwidth_utilization", "tensorcore_utilization",
	"memory_bandwidth_utilization_node", "tensorcore_utilization_node",
}

func TestServerServesTheDevicePluginLayout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		nodeSuffix bool
	}{{"ray-names", false}, {"node-suffix", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := tpuplugin.ConfigForHost(rayvocab.HostEnv("slice-a", 1, "v6e-8", "2x4"), 4)
			if err != nil {
				t.Fatal(err)
			}
			cfg.NodeSuffix = tc.nodeSuffix
			s, err := tpuplugin.Start("127.0.0.1:0", cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Error(err)
				}
			})
			for i := range 4 {
				if err := s.Set(i, tpuplugin.Chip{
					TensorCoreUtilization:      float64(10 + i),
					MemoryBandwidthUtilization: float64(20 + i),
					DutyCycle:                  float64(30 + i),
					MemoryUsed:                 float64(i) * (1 << 30),
					MemoryTotal:                32 << 30,
				}); err != nil {
					t.Fatal(err)
				}
			}
			got, names := scrape(t, s)
			golden.Assert(t, "layout-"+tc.name+".prom", got)
			for _, want := range []string{"go_goroutines", "promhttp_metric_handler_requests_total"} {
				if !slices.Contains(names, want) {
					t.Errorf("family %s missing; a real plugin serves it beside the TPU families (got %v)", want, names)
				}
			}
			if n := s.Scrapes(); n != 1 {
				t.Errorf("Scrapes() = %d after one GET, want 1", n)
			}
		})
	}
}

func TestSetRejectsABadIndex(t *testing.T) {
	t.Parallel()
	s, err := tpuplugin.Start("127.0.0.1:0", tpuplugin.Config{SliceName: "s", Chips: 4, Model: "tpu-v6e-slice", Topology: "2x2"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, i := range []int{-1, 4} {
		if err := s.Set(i, tpuplugin.Chip{}); err == nil {
			t.Errorf("Set(%d) on a 4-chip host: no error", i)
		}
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"bad pod type", rayvocab.HostEnv("s", 0, "v9-8", "2x2"), "tpuplugin: TPU_ACCELERATOR_TYPE=\"v9-8\": pod type \"v9-8\": unknown generation \"v9\" (valid: v2, v3, v4, v5e, v5p, v6e, v7x)"},
		{"bad worker", map[string]string{rayvocab.EnvTPUName: "s", rayvocab.EnvTPUAcceleratorType: "v6e-8", rayvocab.EnvTPUTopology: "2x4", rayvocab.EnvTPUWorkerID: "x"}, "tpuplugin: TPU_WORKER_ID=\"x\": want a worker index >= 0"},
		{"no name", rayvocab.HostEnv("", 0, "v6e-8", "2x4"), "tpuplugin: Config.SliceName is empty: want the slice's TPU_NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tpuplugin.ConfigForHost(tc.env, 4)
			if err == nil || err.Error() != tc.want {
				t.Errorf("ConfigForHost: got %v, want %s", err, tc.want)
			}
		})
	}
}

func TestSetNodeSuffixWhileServing(t *testing.T) {
	t.Parallel()
	s, err := tpuplugin.Start("127.0.0.1:0", tpuplugin.Config{SliceName: "s", Chips: 2, Model: "tpu-v6e-slice", Topology: "2x2"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, on := range []bool{false, true, false} {
		s.SetNodeSuffix(on)
		_, names := scrape(t, s)
		want, gone := "tensorcore_utilization", "tensorcore_utilization_node"
		if on {
			want, gone = gone, want
		}
		if !slices.Contains(names, want) || slices.Contains(names, gone) {
			t.Errorf("SetNodeSuffix(%v): families %v; want %s and not %s", on, names, want, gone)
		}
	}
}
