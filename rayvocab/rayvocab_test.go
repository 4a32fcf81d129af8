package rayvocab_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/rayvocab"
)

// The names are Ray 2.60's, spelled out here as Ray's source spells them.
func TestNames(t *testing.T) {
	t.Parallel()
	if got := rayvocab.HeadResource("v6e-16"); got != "TPU-v6e-16-head" {
		t.Errorf("HeadResource = %q", got)
	}
	if got := rayvocab.AcceleratorTypeResource("TPU-V6E"); got != "accelerator_type:TPU-V6E" {
		t.Errorf("AcceleratorTypeResource = %q", got)
	}
	if diff := cmp.Diff(map[string]string{
		"TPU_NAME": "v4-16-0", "TPU_WORKER_ID": "1", "TPU_ACCELERATOR_TYPE": "v4-16", "TPU_TOPOLOGY": "2x2x2",
	}, rayvocab.HostEnv("v4-16-0", 1, "v4-16", "2x2x2")); diff != "" {
		t.Errorf("HostEnv (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{
		"MEGASCALE_COORDINATOR_ADDRESS": "10.0.0.1", "MEGASCALE_PORT": "8081", "MEGASCALE_NUM_SLICES": "2", "MEGASCALE_SLICE_ID": "1",
	}, rayvocab.MegascaleEnv("10.0.0.1", rayvocab.DefaultMegascalePort, 2, 1)); diff != "" {
		t.Errorf("MegascaleEnv (-want +got):\n%s", diff)
	}
}
