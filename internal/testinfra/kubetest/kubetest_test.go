package kubetest_test

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

func container(name string, tpu int64) corev1.Container {
	c := corev1.Container{Name: name, Image: "rayproject/ray:2.60.0-py311"}
	if tpu > 0 {
		q := *resource.NewQuantity(tpu, resource.DecimalSI)
		c.Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"google.com/tpu": q},
			Limits:   corev1.ResourceList{"google.com/tpu": q},
		}
	}
	return c
}

// The real KubeRay operator turns a multi-host TPU RayCluster into one head
// pod and numOfHosts worker pods, which the pod-status driver reports
// Ready, so the cluster becomes ready.
func TestOperatorCreatesTPUSlicePods(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	t.Logf("control plane and operator started in %v", kubetest.StartDuration())
	ns := env.Namespace(t)
	rc := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "tpu", Namespace: ns},
		Spec: rayv1.RayClusterSpec{
			HeadGroupSpec: rayv1.HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container("ray-head", 0)}}}},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName: "slice", Replicas: ptr.To[int32](1), MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](1), NumOfHosts: 4,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container("ray-worker", 4)}}},
			}},
		},
	}
	if err := env.Client.Create(t.Context(), rc); err != nil {
		t.Fatal(err)
	}
	var pods corev1.PodList
	deadline := time.Now().Add(time.Minute)
	for {
		if err := env.Client.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(rc), rc); err != nil {
			t.Fatal(err)
		}
		if rc.Status.State == rayv1.Ready || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if rc.Status.State != rayv1.Ready {
		t.Fatalf("RayCluster state %q after a minute, want %q; %d pods", rc.Status.State, rayv1.Ready, len(pods.Items))
	}
	var heads, workers int
	var hostIndex []string
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s phase %s, want Running", p.Name, p.Status.Phase)
		}
		switch p.Labels["ray.io/node-type"] {
		case "head":
			heads++
		case "worker":
			workers++
			hostIndex = append(hostIndex, p.Labels["ray.io/replica-host-index"])
		}
	}
	slices.Sort(hostIndex)
	if heads != 1 || workers != 4 {
		t.Errorf("got %d head and %d worker pods, want 1 and 4", heads, workers)
	}
	if want := []string{"0", "1", "2", "3"}; !slices.Equal(hostIndex, want) {
		t.Errorf("worker ray.io/replica-host-index labels %v, want %v (RayMultiHostIndexing on)", hostIndex, want)
	}
}

// A missing binary is an error that names the fix.
func TestMissingBinaryNamesTheFix(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	_, err := kubetest.FindAssets()
	if err == nil {
		t.Fatal("FindAssets found binaries in an empty directory")
	}
	if want := "scripts/setup-kube.sh"; !contains(err.Error(), want) {
		t.Errorf("error %q does not mention %s", err, want)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
