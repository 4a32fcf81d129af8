package podrunner_test

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// checkPreempt, a step of TestPodAsAKubeletRunsIt on its control plane:
// a slice preempted as GKE reclaims spot capacity. The two pods of slice a
// get SIGTERM at once (one traps it and exits, the other ignores it and is
// killed after the grace period), are reported Failed by the node's
// shutdown and deleted; the pod of slice b runs on; a replacement pod of
// slice a stays Pending, unschedulable, until the capacity is back, then
// runs.
func checkPreempt(t *testing.T, env *kubetest.Env, ns string) {
	t.Helper()
	ctx := t.Context()
	shared, err := os.MkdirTemp("/var/tmp", "preempt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	trap := `trap 'date +%s.%N > /shared/term-$(hostname); exit 0' TERM; touch /shared/trapping-$(hostname); while true; do sleep 0.1; done`
	pod := func(name, slice, script string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"slice": slice}},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "main", Image: "unused", Command: []string{"/bin/sh", "-c", script},
					VolumeMounts: []corev1.VolumeMount{{Name: "shared", MountPath: "/shared"}}}},
				Volumes: []corev1.Volume{{Name: "shared", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: shared}}}},
			},
		}
	}
	for _, p := range []*corev1.Pod{pod("a-0", "a", trap), pod("a-1", "a", "exec sleep 1000"), pod("b-0", "b", trap)} {
		if err := env.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	running := func(name string) func() (bool, error) {
		return func() (bool, error) {
			var p corev1.Pod
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)
			return err == nil && p.Status.Phase == corev1.PodRunning, err
		}
	}
	for _, name := range []string{"a-0", "a-1", "b-0"} {
		waitFor(t, name+" running", 2*time.Minute, running(name))
	}
	// Running is when the container started, not when its script has
	// set its trap.
	for _, name := range []string{"a-0", "b-0"} {
		waitFor(t, name+" trapping SIGTERM", time.Minute, func() (bool, error) {
			_, err := os.Stat(filepath.Join(shared, "trapping-"+name))
			return err == nil, nil
		})
	}

	// What the API showed of slice a's pods before they went.
	kc, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	wi, err := kc.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "slice=a"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	lastSeen, deleted := map[string]corev1.PodStatus{}, map[string]bool{}
	go func() {
		for ev := range wi.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			if ev.Type == watch.Deleted {
				deleted[p.Name] = true
			} else if !deleted[p.Name] {
				lastSeen[p.Name] = p.Status
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(wi.Stop)

	// A grace period a loaded machine cannot miss (the trap forks date).
	const grace, down = 8 * time.Second, 16 * time.Second
	pre, err := env.Pods.Preempt(ctx, ns, map[string]string{"slice": "a"}, grace, down)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("preempted %v: stopped %v and deleted %v after the SIGTERM", pre.Pods, pre.Stopped.Sub(pre.Signalled).Round(time.Millisecond), pre.Deleted.Sub(pre.Signalled).Round(time.Millisecond))
	if !slices.Equal(pre.Pods, []string{"a-0", "a-1"}) {
		t.Errorf("preempted %v, want [a-0 a-1]", pre.Pods)
	}
	if _, err := os.Stat(filepath.Join(shared, "term-a-0")); err != nil {
		t.Errorf("a-0 trapped no SIGTERM: %v", err)
	}
	if _, err := os.Stat(filepath.Join(shared, "term-b-0")); err == nil {
		t.Error("b-0, of another slice, got SIGTERM")
	}
	for _, name := range pre.Pods {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Pod{})
		if err == nil {
			t.Errorf("pod %s still in the API after Preempt", name)
		}
	}
	waitFor(t, "the watch to see both deletions", time.Minute, func() (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return deleted["a-0"] && deleted["a-1"], nil
	})
	mu.Lock()
	for _, name := range pre.Pods {
		st := lastSeen[name]
		var disrupted bool
		for _, c := range st.Conditions {
			disrupted = disrupted || c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue
		}
		if st.Phase != corev1.PodFailed || st.Reason != "Terminated" || !disrupted {
			t.Errorf("pod %s was last %s (reason %q, conditions %+v) before its deletion; want Failed, Terminated, DisruptionTarget", name, st.Phase, st.Reason, st.Conditions)
		}
	}
	mu.Unlock()
	if ok, err := running("b-0")(); !ok {
		t.Errorf("b-0, of another slice, is not running (%v)", err)
	}

	// A replacement of slice a waits for the node pool.
	if err := env.Client.Create(ctx, pod("a-0", "a", trap)); err != nil {
		t.Fatal(err)
	}
	if time.Until(pre.Back) > 5*time.Second {
		waitFor(t, "the replacement unschedulable", time.Minute, func() (bool, error) {
			var p corev1.Pod
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a-0"}, &p)
			c := p.Status.Conditions
			return err == nil && p.Spec.NodeName == "" && len(c) == 1 && c[0].Type == corev1.PodScheduled && c[0].Status == corev1.ConditionFalse, err
		})
	} else {
		t.Logf("the replacement came %v before the capacity: too late to see it wait (a slow machine)", time.Until(pre.Back))
	}
	waitFor(t, "the replacement running once the capacity is back", 3*time.Minute, running("a-0"))
	t.Logf("the replacement runs %v after the SIGTERM (capacity back after %v)", time.Since(pre.Signalled).Round(time.Millisecond), down)
	if _, err := env.Pods.Preempt(ctx, ns, map[string]string{"slice": "none"}, grace, down); err == nil {
		t.Error("Preempt of no pod: no error")
	}
}
