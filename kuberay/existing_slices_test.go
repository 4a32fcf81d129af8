package kuberay_test

import (
	"encoding/json"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
)

// renderedCluster is the RayCluster raytpu renders for one v4 2x2x2 slice
// group, as the apiserver would return it.
func renderedCluster(t *testing.T, auto *kuberay.Autoscaling) *rayv1.RayCluster {
	t.Helper()
	g, err := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2", NumSlices: 2}.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := kuberay.RenderCluster(placement.NewSlicePlan("pool", g), kuberay.Options{Namespace: "ml", Autoscaling: auto})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	var rc rayv1.RayCluster
	if err := json.Unmarshal(b, &rc); err != nil {
		t.Fatal(err)
	}
	return &rc
}

// SlicesOf reads a RayCluster's TPU worker groups as Ray's autoscaler
// does: pod type from the GKE selectors, hosts and chips per pod, the
// replica bounds, and the autoscaler version the head runs.
func TestSlicesOf(t *testing.T) {
	t.Parallel()
	fixed, err := kuberay.SlicesOf(renderedCluster(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := kuberay.SliceGroup{Name: "v4-16", PodType: "v4-16", Topology: "2x2x2", Hosts: 2, ChipsPerHost: 4, Replicas: 2, MinReplicas: 2, MaxReplicas: 2}
	if fixed.Autoscaled || fixed.AutoscalerVersion != "" || len(fixed.Groups) != 1 || fixed.Groups[0] != want {
		t.Errorf("fixed cluster: %+v, want one group %+v and no autoscaler", fixed, want)
	}
	for _, c := range []struct {
		version, want string
	}{{"", kuberay.AutoscalerV1}, {kuberay.AutoscalerV2, kuberay.AutoscalerV2}} {
		cs, err := kuberay.SlicesOf(renderedCluster(t, &kuberay.Autoscaling{MaxSlices: 3, Version: c.version}))
		if err != nil {
			t.Fatal(err)
		}
		if !cs.Autoscaled || cs.AutoscalerVersion != c.want || cs.Groups[0].MinReplicas != 0 || cs.Groups[0].MaxReplicas != 3 {
			t.Errorf("autoscaled (version %q): %+v, want autoscaler %s, min 0, max 3", c.version, cs, c.want)
		}
	}
	// Without raytpu's RAY_enable_autoscaler_v2=0 on the head, Ray 2.60
	// runs v2 under KubeRay.
	rc := renderedCluster(t, &kuberay.Autoscaling{MaxSlices: 3})
	ctr := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
	ctr.Env = slicesDeleteEnv(ctr.Env, "RAY_enable_autoscaler_v2")
	if cs, err := kuberay.SlicesOf(rc); err != nil || cs.AutoscalerVersion != kuberay.AutoscalerV2 {
		t.Errorf("no version and no variable: %+v, %v; want v2", cs, err)
	}
}

func slicesDeleteEnv(env []corev1.EnvVar, name string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, e := range env {
		if e.Name != name {
			out = append(out, e)
		}
	}
	return out
}

// A TPU group raytpu's catalog cannot read is an error naming the cluster,
// the group and the field.
func TestSlicesOfRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		change func(*rayv1.WorkerGroupSpec)
		want   string
	}{
		{"accelerator", func(g *rayv1.WorkerGroupSpec) {
			g.Template.Spec.NodeSelector["cloud.google.com/gke-tpu-accelerator"] = "tpu-v9"
		},
			`worker group "v4-16": nodeSelector cloud.google.com/gke-tpu-accelerator "tpu-v9" is no TPU accelerator raytpu knows`},
		{"topology", func(g *rayv1.WorkerGroupSpec) {
			g.Template.Spec.NodeSelector["cloud.google.com/gke-tpu-topology"] = "2by2"
		},
			`nodeSelector cloud.google.com/gke-tpu-topology "2by2"`},
		{"hosts", func(g *rayv1.WorkerGroupSpec) { g.NumOfHosts = 3 },
			"google.com/tpu per pod 4 × numOfHosts 3 is not the 8 chips of topology 2x2x2"},
	} {
		rc := renderedCluster(t, nil)
		c.change(&rc.Spec.WorkerGroupSpecs[0])
		_, err := kuberay.SlicesOf(rc)
		if err == nil || !strings.Contains(err.Error(), "RayCluster ml/pool") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming RayCluster ml/pool and %q", c.name, err, c.want)
		}
	}
}
