package podrunner_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cpuSeconds is the CPU time of pids and of their reaped children.
func cpuSeconds(pids []int) float64 {
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
			n, _ := strconv.ParseInt(f[i], 10, 64)
			ticks += n
		}
	}
	return float64(ticks) / 100
}

// A RayCluster made by the real KubeRay operator comes up with real Ray
// processes: the worker's unmodified `ray start --address=<head-svc>:6379`
// joins the head through cluster DNS, the pods' own probes make them
// Ready, KubeRay marks the cluster ready, and the head's dashboard,
// reached by its Service name, lists both nodes alive.
func TestRayClusterRunsRealRay(t *testing.T) {
	var all []int      // the pods' processes
	t.Cleanup(func() { // after env.Stop: cleanups run last registered first
		var left []int
		for _, pid := range all {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
				left = append(left, pid)
			}
		}
		if len(left) > 0 {
			t.Errorf("processes %v of the Ray pods still run after Stop", left)
		}
	})
	env := start(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	params := map[string]string{"num-cpus": "1", "object-store-memory": "80000000"}
	ctr := func(name string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "rayproject/ray:2.60.0"}}}}
	}
	rc := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: ns},
		Spec: rayv1.RayClusterSpec{
			HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: params, Template: ctr("ray-head")},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName: "wg", Replicas: ptr.To[int32](1), MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](1),
				RayStartParams: params, Template: ctr("ray-worker"),
			}},
		},
	}
	began := time.Now()
	pods := createReady(t, env, rc, 4*time.Minute)
	ready := time.Since(began)
	if len(pods.Items) != 2 {
		t.Fatalf("%d pods, want a head and a worker", len(pods.Items))
	}
	var cmd string
	for _, p := range pods.Items {
		if p.Labels["ray.io/node-type"] == "worker" {
			cmd = strings.Join(append(p.Spec.Containers[0].Command, p.Spec.Containers[0].Args...), " ")
		}
	}
	svc := rc.Status.Head.ServiceName
	if want := fmt.Sprintf("--address=%s.%s.svc.cluster.local:6379", svc, ns); !strings.Contains(cmd, want) {
		t.Errorf("the worker's command %q lacks %s", cmd, want)
	}
	waitFor(t, "both Ray nodes alive", 2*time.Minute, func() (bool, error) {
		return len(aliveRayNodes(env, rc)) == 2, nil
	})
	for _, p := range pods.Items {
		pids, err := env.Pods.PIDs(ctx, ns, p.Name)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, pids...)
	}
	t.Logf("RayCluster ready %v after create, %d processes in its pods, %.1f CPU-seconds so far",
		ready.Round(time.Millisecond), len(all), cpuSeconds(all))
}

// createReady creates rc and waits until KubeRay reports it Ready,
// logging its pods' states and logs if it does not become so; it returns
// the namespace's pods.
func createReady(t *testing.T, env *kubetest.Env, rc *rayv1.RayCluster, timeout time.Duration) corev1.PodList {
	t.Helper()
	ctx, ns := t.Context(), rc.Namespace
	if err := env.Client.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	var pods corev1.PodList
	debug = func() {
		t.Logf("RayCluster status %+v", rc.Status)
		for _, p := range pods.Items {
			t.Logf("pod %s on %s: %s %+v %+v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.InitContainerStatuses, p.Status.ContainerStatuses)
			for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
				l, _ := env.Pods.Logs(ns, p.Name, c.Name)
				t.Logf("logs of %s/%s:\n%s", p.Name, c.Name, l[max(0, len(l)-3000):])
			}
		}
	}
	waitFor(t, "RayCluster ready", timeout, func() (bool, error) {
		if err := env.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return false, err
		}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(rc), rc)
		return err == nil && rc.Status.State == rayv1.Ready, err
	})
	return pods
}

// aliveRayNodes are the nodes the state API of rc's head (reached by its
// Service's cluster DNS name) lists alive, or nil when it does not answer.
func aliveRayNodes(env *kubetest.Env, rc *rayv1.RayCluster) []raycluster.NodeInfo {
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: env.Pods.DialContext}}
	resp, err := hc.Get(fmt.Sprintf("http://%s.%s.svc.cluster.local:8265/api/v0/nodes?detail=1", rc.Status.Head.ServiceName, rc.Namespace))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	var out struct {
		Data struct {
			Result struct {
				Result []raycluster.NodeInfo `json:"result"`
			} `json:"result"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &out) != nil {
		return nil
	}
	var alive []raycluster.NodeInfo
	for _, n := range out.Data.Result.Result {
		if n.Alive() {
			alive = append(alive, n)
		}
	}
	return alive
}
