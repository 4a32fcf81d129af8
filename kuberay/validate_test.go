package kuberay_test

import (
	"slices"
	"strings"
	"testing"

	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/kuberay"
)

// Each rule, broken on a rendered two-slice v6e job, is reported at its
// manifest path; all problems come back at once.
func TestValidateRules(t *testing.T) {
	t.Parallel()
	group := "spec.rayClusterSpec.workerGroupSpecs[0]"
	cases := map[string]struct {
		edit func(*testing.T, *rayv1ac.RayJobApplyConfiguration)
		want []string
	}{
		"name too long":     {func(_ *testing.T, j *rayv1ac.RayJobApplyConfiguration) { j.WithName(strings.Repeat("a", 48)) }, []string{"metadata.name"}},
		"name not DNS-1035": {func(_ *testing.T, j *rayv1ac.RayJobApplyConfiguration) { j.WithName("9lives") }, []string{"metadata.name"}},
		"both cluster and selector": {func(_ *testing.T, j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.WithClusterSelector(map[string]string{"ray.io/cluster": "x"})
		}, []string{"spec.clusterSelector"}},
		"neither cluster nor selector": {func(_ *testing.T, j *rayv1ac.RayJobApplyConfiguration) { j.Spec.RayClusterSpec = nil }, []string{"spec.rayClusterSpec"}},
		"selector without the cluster's name": {func(_ *testing.T, j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec = nil
			j.Spec.WithClusterSelector(map[string]string{"app": "tpu-pool"})
		}, []string{"spec.clusterSelector[ray.io/cluster]"}},
		"numOfHosts off": {func(_ *testing.T, j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec.WorkerGroupSpecs[0].WithNumOfHosts(2)
		}, []string{group + ".numOfHosts"}},
		"min and max unset": {func(_ *testing.T, j *rayv1ac.RayJobApplyConfiguration) {
			g := &j.Spec.RayClusterSpec.WorkerGroupSpecs[0]
			g.MinReplicas, g.MaxReplicas = nil, nil
		}, []string{group + ".minReplicas", group + ".maxReplicas"}},
		"request differs from limit": {func(_ *testing.T, j *rayv1ac.RayJobApplyConfiguration) {
			c := &j.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec.Containers[0]
			(*c.Resources.Requests)["google.com/tpu"] = resource.MustParse("8")
		}, []string{group + ".template.spec.containers[0].resources.requests[google.com/tpu]"}},
		"no megascale env": {func(_ *testing.T, j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Env = nil
		}, []string{group + ".template.spec.containers[0].env[MEGASCALE_NUM_SLICES]"}},
		"unknown accelerator and no topology": {func(_ *testing.T, j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec.WithNodeSelector(map[string]string{"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slise", "cloud.google.com/gke-tpu-topology": ""})
		}, []string{group + ".template.spec.nodeSelector[cloud.google.com/gke-tpu-accelerator]", group + ".template.spec.nodeSelector[cloud.google.com/gke-tpu-topology]"}},
		"tpu on the head": {func(_ *testing.T, j *rayv1ac.RayJobApplyConfiguration) {
			tpu := corev1.ResourceList{"google.com/tpu": resource.MustParse("4")}
			j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].WithResources(corev1ac.ResourceRequirements().WithLimits(tpu))
		}, []string{"spec.rayClusterSpec.headGroupSpec.template.spec.containers[0].resources"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			job, err := kuberay.RenderJob(compile(t, trainer("v6e", "4x4", 2)), kuberay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c.edit(t, job)
			err = kuberay.Validate(job)
			var got []string
			for _, e := range field.Errors(err) {
				got = append(got, e.Field)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("fields %v, want %v (error: %v)", got, c.want, err)
			}
		})
	}
}
