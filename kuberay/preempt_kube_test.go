package kuberay_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/internal/testinfra/podrunner"
)

// The KubeRay tests' slice preemption: every pod of one slice of a TPU
// worker group gets SIGTERM at once, SIGKILL after GKE's grace period,
// and is gone (podrunner's Preempt); the slice's capacity comes back
// after sliceDown, when KubeRay's replacement pods are bound and run.

// sliceDown is how long a preempted slice's node pool stays away here
// (GKE takes minutes to recreate one; the scenario needs only that the
// replacements wait, so the suite pays seconds).
const sliceDown = 30 * time.Second

// Labels KubeRay v1.5.0 sets on a multi-host worker group's pods
// (RayMultiHostIndexing).
const (
	labelRayCluster   = "ray.io/cluster"
	labelRayGroup     = "ray.io/group"
	labelReplicaIndex = "ray.io/worker-group-replica-index"
)

// preemptedSlice is a slice the test preempted: its pods' labels, the
// pods and Ray nodes it had, and when it went and came back.
type preemptedSlice struct {
	// Labels select the slice's pods (cluster, group, replica index), and
	// Name is its TPU_NAME as Ray reports it (ray.io/tpu-slice-name).
	Labels map[string]string
	Name   string
	// Pods are the preempted pods; NodeIDs the Ray nodes they were, by
	// TPU worker id.
	Pods    []string
	NodeIDs map[string]string
	// Preemption is what the pod runner did; Running is when KubeRay's
	// replacement pods were all running (Ray started in them; a
	// RayService's worker pods are never Ready here, their probe asks
	// for a Serve proxy), and Replacements their names.
	*podrunner.Preemption
	Running      time.Time
	Replacements []string
}

// sliceOf returns the selecting labels of the slice that pod name belongs
// to (its RayCluster, worker group and replica index).
func sliceOf(t *testing.T, env *kubetest.Env, ns, name string) (map[string]string, error) {
	t.Helper()
	var pod corev1.Pod
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &pod); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, k := range []string{labelRayCluster, labelRayGroup, labelReplicaIndex} {
		v, ok := pod.Labels[k]
		if !ok {
			return nil, fmt.Errorf("pod %s has no label %s: labels %v", name, k, pod.Labels)
		}
		out[k] = v
	}
	return out, nil
}

// preemptSlice preempts the slice the labels select, as GKE reclaims a
// spot node pool, logging every change of the slice's pods (relative to
// the SIGTERM) until KubeRay's replacements run, and returns what
// happened. began dates the log lines of the test.
func preemptSlice(t *testing.T, env *kubetest.Env, ns string, labels map[string]string, began time.Time) (*preemptedSlice, error) {
	ctx := t.Context()
	stop := watchPods(t, env, ns, labels, began)
	defer stop()
	t.Logf("%6.1fs preempting slice %v: SIGTERM to every pod, SIGKILL after %v, node pool back after %v", time.Since(began).Seconds(), labels, podrunner.SpotGrace, sliceDown)
	pre, err := env.Pods.Preempt(ctx, ns, labels, podrunner.SpotGrace, sliceDown)
	if err != nil {
		return nil, err
	}
	out := &preemptedSlice{Labels: maps.Clone(labels), Pods: pre.Pods, Preemption: pre}
	t.Logf("%6.1fs slice %v: pods %v stopped %.1fs and deleted %.1fs after the SIGTERM", time.Since(began).Seconds(), labels,
		pre.Pods, pre.Stopped.Sub(pre.Signalled).Seconds(), pre.Deleted.Sub(pre.Signalled).Seconds())
	var hosts int
	waitFor(t, 10*time.Minute, "KubeRay's replacement pods of the preempted slice running", func() (bool, string) {
		var pods corev1.PodList
		if err := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			return false, err.Error()
		}
		var ready, names []string
		for _, p := range pods.Items {
			names = append(names, p.Name+"/"+string(p.Status.Phase))
			if p.DeletionTimestamp == nil && podRunning(&p) && !p.CreationTimestamp.Time.Before(pre.Signalled.Truncate(time.Second)) {
				ready = append(ready, p.Name)
			}
		}
		hosts = len(pre.Pods)
		slices.Sort(ready)
		out.Replacements = ready
		return len(ready) == hosts, fmt.Sprintf("pods %v", names)
	})
	out.Running = time.Now()
	t.Logf("%6.1fs slice %v: replacements %v running %.1fs after the SIGTERM", time.Since(began).Seconds(), labels, out.Replacements, out.Running.Sub(pre.Signalled).Seconds())
	return out, nil
}

// podRunning reports whether every container of pod p runs.
func podRunning(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil {
			return false
		}
	}
	return true
}

// watchPods logs every change of phase, readiness or deletion of the pods
// the labels select until stopped.
func watchPods(t *testing.T, env *kubetest.Env, ns string, labels map[string]string, began time.Time) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		seen := map[string]string{}
		for {
			var pods corev1.PodList
			if err := env.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels(labels)); err == nil {
				now := map[string]string{}
				for _, p := range pods.Items {
					state := fmt.Sprintf("%s ready=%v", p.Status.Phase, podReady(&p))
					if p.Status.Reason != "" {
						state += " reason=" + p.Status.Reason
					}
					if p.DeletionTimestamp != nil {
						state += " deleting"
					}
					if p.Spec.NodeName == "" {
						state += " unscheduled"
					}
					key := p.Name + " (" + string(p.UID)[:8] + ")"
					now[key] = state
					if seen[key] != state {
						t.Logf("%6.1fs   pod %s: %s", time.Since(began).Seconds(), key, state)
					}
				}
				for key := range seen {
					if _, ok := now[key]; !ok {
						t.Logf("%6.1fs   pod %s: gone", time.Since(began).Seconds(), key)
					}
				}
				seen = now
			}
			select {
			case <-done:
				return
			case <-t.Context().Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// logClusterEvents logs the events KubeRay recorded against RayCluster
// cluster from since on, in order.
func logClusterEvents(t *testing.T, env *kubetest.Env, ns, cluster string, since, began time.Time) {
	var evs corev1.EventList
	if err := env.Client.List(t.Context(), &evs, client.InNamespace(ns)); err != nil {
		t.Logf("events: %v", err)
		return
	}
	at := func(e corev1.Event) time.Time {
		switch {
		case !e.LastTimestamp.IsZero():
			return e.LastTimestamp.Time
		case !e.EventTime.IsZero():
			return e.EventTime.Time
		}
		return e.CreationTimestamp.Time
	}
	slices.SortStableFunc(evs.Items, func(a, b corev1.Event) int { return at(a).Compare(at(b)) })
	for _, e := range evs.Items {
		if e.InvolvedObject.Name != cluster || at(e).Before(since.Truncate(time.Second)) {
			continue
		}
		t.Logf("%6.1fs   event %s %s x%d: %s", at(e).Sub(began).Seconds(), e.InvolvedObject.Kind, e.Reason, max(e.Count, 1), strings.TrimSpace(e.Message))
	}
}
