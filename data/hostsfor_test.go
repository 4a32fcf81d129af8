package data_test

import (
	"testing"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/train"
)

// HostsForSlices agrees with the trainer: as many workers as the compiled
// trainer's worker group has bundles, and bad arguments are field errors
// at their ScalingConfig names.
func TestHostsForSlicesMatchesTrainer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		acc, topo       string
		slices, perHost int
	}{
		{"v6e", "4x4", 0, 0},
		{"v6e", "4x4", 2, 0},
		{"TPU-V6E", "2x4", 1, 4},
		{"v4", "2x2x2", 3, 0},
		{"v5litepod", "2x2", 1, 0},
	} {
		hosts, err := data.HostsForSlices(c.acc, c.topo, c.slices, c.perHost)
		if err != nil {
			t.Errorf("%+v: %v", c, err)
			continue
		}
		plan, err := train.JaxTrainer{
			TrainLoopPerWorker: "loop:train",
			ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: c.acc, Topology: c.topo, NumSlices: c.slices, ChipsPerHost: c.perHost},
			RunConfig:          train.RunConfig{Name: "hosts"},
		}.Compile()
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		g := plan.Slices[0]
		if want := g.NumSlices * g.BundlesPerSlice; hosts.Workers != want {
			t.Errorf("%+v: %d workers, the trainer has %d", c, hosts.Workers, want)
		}
	}
	for _, c := range []struct {
		acc, topo       string
		slices, perHost int
		want            []string
	}{
		{"", "", 0, 0, []string{"scaling_config.accelerator_type", "scaling_config.topology"}},
		{"v6e", "4x4", -1, -2, []string{"scaling_config.num_slices", "scaling_config.chips_per_host"}},
		{"v9", "4x4", 1, 0, []string{"scaling_config.accelerator_type"}},
	} {
		_, err := data.HostsForSlices(c.acc, c.topo, c.slices, c.perHost)
		got := map[string]bool{}
		for _, e := range field.Errors(err) {
			got[e.Field] = true
		}
		for _, w := range c.want {
			if !got[w] {
				t.Errorf("HostsForSlices(%q, %q, %d, %d): no error at %s (got %v)", c.acc, c.topo, c.slices, c.perHost, w, err)
			}
		}
	}
}
