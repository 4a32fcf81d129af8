package kuberay_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
)

// timedAnswer is one request of a timedLoad: when it ended, which replica
// on which slice answered it, or why it failed.
type timedAnswer struct {
	At      time.Time
	Replica string
	Slice   string
	Reply   sliceReply
	Err     error
}

// timedLoad sends requests from a number of senders, each one after
// another, and keeps every outcome with its time.
type timedLoad struct {
	mu      sync.Mutex
	answers []timedAnswer
	cancel  context.CancelFunc
	done    chan struct{}
}

func startTimedLoad(web *http.Client, url string, senders int) *timedLoad {
	ctx, cancel := context.WithCancel(context.Background())
	l := &timedLoad{cancel: cancel, done: make(chan struct{})}
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for ctx.Err() == nil {
				r, err := askService(web, url)
				a := timedAnswer{At: time.Now(), Replica: r.Replica, Reply: r, Err: err}
				if err == nil && len(r.Hosts) > 0 {
					a.Slice = r.Hosts[0].Labels["ray.io/tpu-slice-name"]
				}
				l.mu.Lock()
				l.answers = append(l.answers, a)
				l.mu.Unlock()
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
	go func() { wg.Wait(); close(l.done) }()
	return l
}

func (l *timedLoad) stop() { l.cancel(); <-l.done }

func (l *timedLoad) snapshot() []timedAnswer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.answers)
}

// loseReplicaSlice is the last step of TestServiceServesOnKubeRay: with two
// replicas answering, each owning a v4 2x2x2 slice (a worker group each),
// the slice of the second worker group is preempted as GKE reclaims spot
// capacity (both pods SIGTERM at once, gone after the grace period, the
// node pool back after sliceDown). Requests are sent throughout, from three
// senders: while the slice is gone the other replica answers; the lost
// replica's in-flight requests may fail, most requests succeed. Serve
// starts a new replica, which reserves the slice again once KubeRay's
// replacement pods run, and answers from them.
func loseReplicaSlice(t *testing.T, env *kubetest.Env, web *http.Client, url, ns, cluster string, began time.Time) {
	t.Helper()
	ctx := t.Context()
	var rc rayv1.RayCluster
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, &rc); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.Spec.WorkerGroupSpecs); n != 2 {
		t.Fatalf("RayCluster %s has %d worker groups, want 2 (a slice per replica)", cluster, n)
	}
	group := rc.Spec.WorkerGroupSpecs[1].GroupName
	labels := map[string]string{labelRayCluster: cluster, labelRayGroup: group, labelReplicaIndex: "0"}
	// GKE's TPU webhook names a slice <group>-<replica index> (TPU_NAME).
	lostSlice := group + "-0"

	load := startTimedLoad(web, url, 3)
	defer load.stop()
	before := map[string]string{} // replica -> slice, answering before
	waitFor(t, 3*time.Minute, "answers from both replicas before the preemption", func() (bool, string) {
		for _, a := range load.snapshot() {
			if a.Err == nil {
				before[a.Replica] = a.Slice
			}
		}
		var onLost bool
		for _, s := range before {
			onLost = onLost || s == lostSlice
		}
		return len(before) == 2 && onLost, fmt.Sprintf("replicas %v", before)
	})
	t.Logf("%6.1fs replicas before the preemption: %v", time.Since(began).Seconds(), before)

	ps, err := preemptSlice(t, env, ns, labels, began)
	if err != nil {
		t.Fatal(err)
	}
	var back timedAnswer
	waitForOrExplain(t, 10*time.Minute, "an answer from a new replica on slice "+lostSlice, func() (bool, string) {
		for _, a := range load.snapshot() {
			if _, old := before[a.Replica]; a.Err == nil && a.Slice == lostSlice && !old {
				back = a
				return true, ""
			}
		}
		return false, "no new replica on " + lostSlice + " yet"
	}, func() string { return serveReplicas(web, ns, cluster) })
	t.Logf("%6.1fs replica %s answers from slice %s again, %.1fs after the SIGTERM", time.Since(began).Seconds(), back.Replica, lostSlice, back.At.Sub(ps.Signalled).Seconds())
	time.Sleep(2 * time.Second)
	load.stop()

	// The counts: over the whole step, and during the outage (from the
	// SIGTERM to the new replica's first answer).
	all := load.snapshot()
	var ok, failed, outageOK, outageFailed, outageOther int
	var failures []string
	for _, a := range all {
		in := !a.At.Before(ps.Signalled) && !a.At.After(back.At)
		switch {
		case a.Err != nil:
			failed++
			if a.At.Before(ps.Signalled) {
				t.Errorf("a request failed before the preemption: %v", a.Err)
			}
			if in {
				outageFailed++
			}
			line, _, _ := strings.Cut(a.Err.Error(), "\n")
			failures = append(failures, fmt.Sprintf("%+.1fs %.200s", a.At.Sub(ps.Signalled).Seconds(), line))
		default:
			ok++
			if in {
				outageOK++
				if a.Slice != lostSlice {
					outageOther++
				}
			}
		}
	}
	t.Logf("requests: %d sent, %d answered, %d failed; from the SIGTERM to the lost replica's return (%.1fs): %d answered (%d by the other replica), %d failed",
		len(all), ok, failed, back.At.Sub(ps.Signalled).Seconds(), outageOK, outageOther, outageFailed)
	for _, f := range failures {
		t.Logf("  failed request, after the SIGTERM: %s", f)
	}
	if outageOther == 0 {
		t.Errorf("no request was answered by the other replica while slice %s was gone", lostSlice)
	}
	if failed*2 >= len(all) {
		t.Errorf("%d of %d requests failed; want most answered", failed, len(all))
	}
	// The new replica's hosts are KubeRay's replacement pods.
	checkSliceHosts(t, env, ns, cluster, back.Reply)
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
		t.Fatal(err)
	}
	byIP := map[string]string{}
	for _, p := range pods.Items {
		byIP[p.Status.PodIP] = p.Name
	}
	for i, h := range back.Reply.Hosts {
		if name := byIP[h.NodeIP]; !slices.Contains(ps.Replacements, name) {
			t.Errorf("the new replica's host %d at %s is pod %q, want one of KubeRay's replacements %v", i, h.NodeIP, name, ps.Replacements)
		}
	}
	logClusterEvents(t, env, ns, cluster, ps.Signalled, began)
	t.Logf("after the slice came back: %s", serveReplicas(web, ns, cluster))
}
