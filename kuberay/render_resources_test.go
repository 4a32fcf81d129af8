package kuberay_test

import (
	"maps"
	"testing"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
)

// A worker group advertises what the plan's bundles need of a host beyond
// what Ray detects on a TPU VM (its chips as TPU, the slice's name and
// head, accelerator_type): otherwise Ray starts the pods with less than
// the bundles ask for and the plan never places.
func TestRenderAdvertisesBundleResources(t *testing.T) {
	t.Parallel()
	custom := trainer("v4", "2x2x2", 1)
	custom.ScalingConfig.ResourcesPerWorker = map[string]float64{"TPU": 4, "hbm_gb": 32, "CPU": 2}
	perChip := trainer("v6e", "4x4", 1)
	perChip.ScalingConfig.ResourcesPerWorker = map[string]float64{"TPU": 8}
	for name, c := range map[string]struct {
		plan *placement.Plan
		want map[string]string
	}{
		"custom resource":              {compile(t, custom), map[string]string{"hbm_gb": "32"}},
		"more TPU than chips per host": {compile(t, perChip), map[string]string{"TPU": "8"}},
		"nothing to add":               {compile(t, trainer("v6e", "4x4", 2)), nil},
	} {
		t.Run(name, func(t *testing.T) {
			job, err := kuberay.RenderJob(c.plan, kuberay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			groups := job.Spec.RayClusterSpec.WorkerGroupSpecs
			if len(groups) != 1 {
				t.Fatalf("%d worker groups, want 1", len(groups))
			}
			if got := groups[0].Resources; !maps.Equal(got, c.want) {
				t.Errorf("worker group resources %v, want %v (bundle resources %v)", got, c.want, c.plan.Slices[0].BundleResources)
			}
		})
	}
}
