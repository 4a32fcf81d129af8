package kuberay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/serveconfig"
)

// A compiled Serve application deployed as a RayService to the real
// apiserver and the real KubeRay v1.5.0 operator.
//
// What happens: the operator names a pending RayCluster in the RayService's
// status (Ready=False, reason Initializing) and creates it; the RayCluster
// controller creates its head and one worker group of 2 hosts per LLM
// replica slice, which the pod-status driver marks Ready. KubeRay then asks
// the head's dashboard (http://<cluster>-head-svc.<ns>.svc.cluster.local:8265)
// for the Serve applications' status before it submits serveConfigV2; no
// Ray runs in the pods and that name resolves nowhere here, so the call
// fails, the reconcile ends with that error and is retried, and the
// RayService stays DEPLOYING with the cluster pending. What cannot happen
// without a kubelet and Ray in the pods: the operator PUTting the config to
// Ray, Ray reporting the applications RUNNING, the pending cluster being
// promoted to status.activeServiceStatus and the serve Service switching
// to it. The test checks what is observable: the bytes of serveConfigV2 the
// operator reads, the objects and pods, the conditions, and that updates
// keep the same RayCluster.
func TestDeployService(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		t.Fatal(err)
	}
	plan := compileApp(t, chatApp(2, map[string]any{"greeting": "hi"}))
	st, err := b.Deploy(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "chat" || st.Backend != kuberay.Name {
		t.Errorf("Deploy status %+v", st)
	}
	svc := getService(t, env, ns, "chat")
	serveConfigMatches(t, svc.Spec.ServeConfigV2, plan)

	// The operator creates one pending RayCluster: 1 head, 2 slices × 2 hosts.
	var rc rayv1.RayCluster
	waitFor(t, time.Minute, "a pending RayCluster with 5 pods", func() (bool, string) {
		svc = getService(t, env, ns, "chat")
		name := svc.Status.PendingServiceStatus.RayClusterName
		if name == "" {
			return false, "no pending cluster in the status"
		}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &rc); err != nil {
			return false, err.Error()
		}
		n := countPods(t, env, ns, name)
		return n == 5, fmt.Sprintf("RayCluster %s has %d pods", name, n)
	})
	ready := findCondition(svc.Status.Conditions, string(rayv1.RayServiceReady))
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != string(rayv1.RayServiceInitializing) {
		t.Errorf("Ready condition %+v, want False/Initializing", ready)
	}
	st, err = b.Status(t.Context(), "chat")
	if err != nil {
		t.Fatal(err)
	}
	if st.State != backend.ServiceDeploying || !strings.Contains(st.Message, "pending RayCluster "+rc.Name) {
		t.Errorf("Status = %s %q, want DEPLOYING naming the pending RayCluster %s", st.State, st.Message, rc.Name)
	}

	// Wait follows the RayService; it cannot become RUNNING here, so the
	// deadline ends it with the last status.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	var seen []backend.ServiceState
	_, err = b.Wait(ctx, "chat", backend.WaitOptions{OnStatus: func(s *backend.ServiceStatus) { seen = append(seen, s.State) }})
	var se *backend.ServiceError
	if !errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) || se.Status.State != backend.ServiceDeploying {
		t.Errorf("Wait = %v, want a *ServiceError at the deadline in DEPLOYING", err)
	}
	if len(seen) == 0 || seen[0] != backend.ServiceDeploying {
		t.Errorf("OnStatus saw %v, want DEPLOYING first", seen)
	}

	// The same plan again changes nothing.
	gen := svc.Generation
	if _, err := b.Deploy(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	if again := getService(t, env, ns, "chat"); again.Generation != gen {
		t.Errorf("re-deploying the same plan moved the generation %d -> %d", gen, again.Generation)
	}

	// A change of the Serve config alone (Router replicas, user_config):
	// the operator keeps the RayCluster; it would submit the new config to
	// the same cluster once the dashboard answered.
	changed := compileApp(t, chatApp(3, map[string]any{"greeting": "hello"}))
	if _, err := b.Deploy(t.Context(), changed); err != nil {
		t.Fatal(err)
	}
	svc = getService(t, env, ns, "chat")
	serveConfigMatches(t, svc.Spec.ServeConfigV2, changed)
	if svc.Generation != gen+1 {
		t.Errorf("generation %d after a config change, want %d", svc.Generation, gen+1)
	}
	// A third LLM replica adds a worker group at the end: KubeRay updates
	// the pending RayCluster in place (same UID) rather than preparing a
	// new one. That it did proves it reconciled both changes.
	grownApp := chatApp(3, map[string]any{"greeting": "hello"})
	grownApp.Deployments[1].NumReplicas = serveconfig.ReplicaCount(3)
	grown := compileApp(t, grownApp)
	if _, err := b.Deploy(t.Context(), grown); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the RayCluster updated in place to 3 worker groups", func() (bool, string) {
		var cur rayv1.RayCluster
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(&rc), &cur); err != nil {
			return false, err.Error()
		}
		if cur.UID != rc.UID {
			t.Fatalf("RayCluster %s was replaced (uid %s -> %s)", rc.Name, rc.UID, cur.UID)
		}
		return len(cur.Spec.WorkerGroupSpecs) == 3, fmt.Sprintf("%d worker groups", len(cur.Spec.WorkerGroupSpecs))
	})
	var clusters rayv1.RayClusterList
	if err := env.Client.List(t.Context(), &clusters, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	svc = getService(t, env, ns, "chat")
	if len(clusters.Items) != 1 || svc.Status.PendingServiceStatus.RayClusterName != rc.Name || svc.Status.ActiveServiceStatus.RayClusterName != "" {
		t.Errorf("%d RayClusters, pending %q active %q; want only %s, still pending", len(clusters.Items),
			svc.Status.PendingServiceStatus.RayClusterName, svc.Status.ActiveServiceStatus.RayClusterName, rc.Name)
	}

	// Delete removes the RayService raytpu created and nothing else.
	foreign := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: ns}, Spec: rayv1.RayServiceSpec{
		ServeConfigV2: svc.Spec.ServeConfigV2, RayClusterSpec: *svc.Spec.RayClusterSpec.DeepCopy()}}
	if err := env.Client.Create(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(t.Context(), "theirs"); !errors.Is(err, kuberay.ErrNotManaged) {
		t.Errorf("Delete of a RayService raytpu did not create: %v, want ErrNotManaged", err)
	}
	if err := b.Delete(t.Context(), "chat"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Status(t.Context(), "chat"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Status after Delete: %v, want ErrNotFound", err)
	}
	if err := b.Delete(t.Context(), "chat"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
	getService(t, env, ns, "theirs")
}

func getService(t *testing.T, env *kubetest.Env, ns, name string) *rayv1.RayService {
	t.Helper()
	var svc rayv1.RayService
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &svc); err != nil {
		t.Fatalf("RayService %s/%s: %v", ns, name, err)
	}
	return &svc
}

func countPods(t *testing.T, env *kubetest.Env, ns, cluster string) int {
	t.Helper()
	var pods corev1.PodList
	if err := env.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/cluster": cluster}); err != nil {
		t.Fatal(err)
	}
	return len(pods.Items)
}

func findCondition(cs []metav1.Condition, typ string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}
