package kuberay_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
)

// groupWatch samples a worker group while a test runs: the replicas the
// autoscaler asked for, the most it asked for, and when the group's pods
// first all existed and were all Ready.
type groupWatch struct {
	mu              sync.Mutex
	maxReplicas     int32
	replicas        int32
	pods, ready     int
	podsAt, readyAt time.Time
	maxPods         int
	replicaOf       map[string]string // pod name → its ray.io/worker-group-replica-name
	live            map[string]bool   // the pods now, not deleting
}

func (g *groupWatch) sample(t *testing.T, env *kubetest.Env, ns, cluster, group string, want int) {
	ctx := t.Context()
	var rc rayv1.RayCluster
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, &rc); err != nil {
		return
	}
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/cluster": cluster, "ray.io/group": group}); err != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, wg := range rc.Spec.WorkerGroupSpecs {
		if wg.GroupName == group && wg.Replicas != nil {
			g.replicas = *wg.Replicas
			g.maxReplicas = max(g.maxReplicas, *wg.Replicas)
		}
	}
	g.pods, g.ready = 0, 0
	g.live = map[string]bool{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		g.pods++
		g.live[p.Name] = true
		if g.replicaOf == nil {
			g.replicaOf = map[string]string{}
		}
		g.replicaOf[p.Name] = p.Labels["ray.io/worker-group-replica-name"]
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				g.ready++
			}
		}
	}
	g.maxPods = max(g.maxPods, g.pods)
	now := time.Now()
	if g.podsAt.IsZero() && g.pods >= want {
		g.podsAt = now
	}
	if g.readyAt.IsZero() && g.ready >= want {
		g.readyAt = now
	}
}

// watchGroup samples the worker group every 250 ms until the returned
// stop is called (stop waits for the last sample; calling it again does
// nothing).
func watchGroup(t *testing.T, env *kubetest.Env, ns, cluster, group string, want int) (*groupWatch, func()) {
	g := &groupWatch{}
	quit := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			g.sample(t, env, ns, cluster, group, want)
			select {
			case <-quit:
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	return g, func() { once.Do(func() { close(quit); <-sampled }) }
}

// groupPods counts the pods of a worker group.
func groupPods(t *testing.T, env *kubetest.Env, ns, cluster, group string) int {
	t.Helper()
	var pods corev1.PodList
	if err := env.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/cluster": cluster, "ray.io/group": group}); err != nil {
		t.Fatal(err)
	}
	return len(pods.Items)
}

// checkOneSlice checks testdata/trainloop's reports of a one-slice run
// (in directory dir of env's object storage): two ranks, each on its own
// pod, both on one slice. It returns the ranks' pods (their hostnames) in
// rank order.
func checkOneSlice(t *testing.T, env *kubetest.Env, dir string) []string {
	t.Helper()
	paths := listGS(t, env, dir, "rank-")
	if len(paths) != 2 {
		t.Fatalf("%d rank reports, want 2", len(paths))
	}
	hostsSeen, sliceNames := map[string]bool{}, map[string]bool{}
	ranksOn := make([]string, len(paths))
	for _, p := range paths {
		r, err := readRank(env, p)
		if err != nil {
			t.Fatal(err)
		}
		hostsSeen[r.Hostname] = true
		if r.Rank >= 0 && r.Rank < len(ranksOn) {
			ranksOn[r.Rank] = r.Hostname
		}
		sliceNames[r.Labels["ray.io/tpu-slice-name"]] = true
		if r.ProcessCount != 2 {
			t.Errorf("rank %d: jax.process_count() %d, want 2", r.Rank, r.ProcessCount)
		}
	}
	if len(hostsSeen) != 2 || len(sliceNames) != 1 || sliceNames[""] {
		t.Errorf("ranks on pods %v and slices %v, want two pods of one named slice", keys(hostsSeen), keys(sliceNames))
	}
	return ranksOn
}

// deletedForScaleDown reports whether KubeRay's events say it deleted pod
// for the autoscaler (workersToDelete).
func deletedForScaleDown(events []corev1.Event, pod string) bool {
	for _, e := range events {
		if e.Reason == "DeletedWorkerPod" && strings.Contains(e.Message, "/"+pod+" ") && strings.Contains(e.Message, "autoscaler scale-down request") {
			return true
		}
	}
	return false
}
