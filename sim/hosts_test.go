package sim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/sim"
)

// TestHosts pins the resources and labels of every kind of host: these are
// what a real Ray node started from the same spec registers.
func TestHosts(t *testing.T) {
	t.Parallel()
	s, err := sim.ParseSpec("v6e-16,v5litepod-8,v7x-16,v4-16,v6e-8@4,cpu:1{cpu=16,mem=64Gi}")
	if err != nil {
		t.Fatal(err)
	}
	hosts := s.Hosts()
	goldenJSON(t, "hosts.golden.json", hosts)

	for _, h := range hosts {
		if !h.IsTPU() {
			if h.Env() != nil || len(h.Labels) != 0 {
				t.Errorf("%s: CPU-only node has TPU env or labels", h.Name)
			}
			continue
		}
		env := h.Env()
		want := map[string]string{
			rayvocab.LabelTPUSliceName:    env["TPU_NAME"],
			rayvocab.LabelTPUWorkerID:     env["TPU_WORKER_ID"],
			rayvocab.LabelTPUPodType:      env["TPU_ACCELERATOR_TYPE"],
			rayvocab.LabelTPUTopology:     env["TPU_TOPOLOGY"],
			rayvocab.LabelAcceleratorType: h.Labels[rayvocab.LabelAcceleratorType],
		}
		if diff := cmp.Diff(want, h.Labels); diff != "" {
			t.Errorf("%s: labels do not follow the environment (-env +labels):\n%s", h.Name, diff)
		}
		_, isHead := h.Resources[rayvocab.HeadResource(h.PodType)]
		if isHead != (h.WorkerID == 0) {
			t.Errorf("%s: head resource on worker %d", h.Name, h.WorkerID)
		}
		if h.Resources[h.SliceName] != 1 {
			t.Errorf("%s: slice resource %q = %v, want 1", h.Name, h.SliceName, h.Resources[h.SliceName])
		}
	}
}
