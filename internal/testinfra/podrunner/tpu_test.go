package podrunner_test

import (
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/podrunner"
	"github.com/raytpu/raytpu/tpu"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A RayCluster with a v4 2x2x2 worker group (one slice of two 4-chip
// hosts) comes up on a TPU node pool: the runner poses its pods as GKE's
// TPU webhook and TPU VMs would, and Ray registers both as hosts of one
// slice: TPU 4 each, one ray.io/tpu-slice-name, worker ids 0 and 1, and
// TPU-v4-16-head on worker 0 only.
func TestTPUPodsPoseAsOneSlice(t *testing.T) {
	env := start(t, podrunner.Node{Name: "podrunner"}, podrunner.TPUNode("tpu-v4-2x2x2", "tpu-v4-podslice", "2x2x2"))
	ns := env.Namespace(t)
	params := map[string]string{"num-cpus": "1", "object-store-memory": "80000000"}
	chips := *resource.NewQuantity(4, resource.DecimalSI)
	worker := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice", "cloud.google.com/gke-tpu-topology": "2x2x2"},
		Containers: []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.60.0",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{tpu.ResourceGKETPU: chips}, Limits: corev1.ResourceList{tpu.ResourceGKETPU: chips}}}},
	}}
	rc := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "tpu", Namespace: ns},
		Spec: rayv1.RayClusterSpec{
			HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: params, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.60.0"}}}}},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName: "v4", Replicas: ptr.To[int32](1), MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](1), NumOfHosts: 2,
				RayStartParams: params, Template: worker,
			}},
		},
	}
	began := time.Now()
	createReady(t, env, rc, 5*time.Minute)
	t.Logf("RayCluster ready %v after create", time.Since(began).Round(time.Millisecond))
	var workers []raycluster.NodeInfo
	waitFor(t, "both TPU hosts alive in Ray", 3*time.Minute, func() (bool, error) {
		workers = workers[:0]
		for _, n := range aliveRayNodes(env, rc) {
			if !n.IsHead {
				workers = append(workers, n)
			}
		}
		return len(workers) == 2, nil
	})
	slice := workers[0].Labels["ray.io/tpu-slice-name"]
	ids := map[string]bool{}
	for _, n := range workers {
		l := n.Labels
		t.Logf("Ray node %s: resources %v, labels %v", n.IP, n.Resources, l)
		if n.Resources["TPU"] != 4 {
			t.Errorf("node %s: TPU %v, want 4", n.IP, n.Resources["TPU"])
		}
		if l["ray.io/tpu-slice-name"] != slice || slice == "" {
			t.Errorf("node %s: slice %q, want both hosts on one named slice (%q)", n.IP, l["ray.io/tpu-slice-name"], slice)
		}
		if l["ray.io/tpu-pod-type"] != "v4-16" || l["ray.io/tpu-topology"] != "2x2x2" {
			t.Errorf("node %s: pod type %q topology %q, want v4-16 2x2x2", n.IP, l["ray.io/tpu-pod-type"], l["ray.io/tpu-topology"])
		}
		id := l["ray.io/tpu-worker-id"]
		ids[id] = true
		if head := n.Resources["TPU-v4-16-head"]; (id == "0") != (head == 1) {
			t.Errorf("node %s: worker id %q with TPU-v4-16-head %v; want the head resource on worker 0 only", n.IP, id, head)
		}
	}
	if !ids["0"] || !ids["1"] {
		t.Errorf("worker ids %v, want 0 and 1", ids)
	}
}
