package kuberay_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// waitFor polls cond every 200ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	waitForOrExplain(t, d, what, cond, nil)
}

// waitForOrExplain is waitFor whose failure also carries explain's
// account of why (read once, at the deadline), so that the first lines of
// a failure say what the cluster was doing.
func waitForOrExplain(t *testing.T, d time.Duration, what string, cond func() (bool, string), explain func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			why := ""
			if explain != nil {
				why = "; " + explain()
			}
			t.Fatalf("%s: not reached within %v; last seen: %s%s", what, d, state, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A two-slice v6e 4x4 plan run on the real apiserver with the real KubeRay
// operator: the operator creates 1 head and 2 slices × 4 hosts of worker
// pods with the TPU requests, node selectors, host indices and MEGASCALE
// environment the plan asks for, and drives the RayJob from Initializing to
// Running. No Ray runs inside the pods, so the Ray job never finishes by
// itself; the RayJob's activeDeadlineSeconds makes KubeRay fail it, which
// ends the run as FAILED with KubeRay's DeadlineExceeded reason.
func TestRunTwoSliceV6e(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns, ActiveDeadline: 45 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	plan := compile(t, trainer("v6e", "4x4", 2))
	const id = "llama-two-slices"
	var mu sync.Mutex
	var seen []backend.Status
	type result struct {
		out *backend.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := b.Run(t.Context(), plan, backend.RunOptions{SubmissionID: id, OnStatus: func(s backend.Status) {
			mu.Lock()
			seen = append(seen, s)
			mu.Unlock()
		}})
		done <- result{out, err}
	}()

	var pods corev1.PodList
	waitFor(t, 40*time.Second, "1 head and 8 worker pods", func() (bool, string) {
		if err := env.Client.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		return len(pods.Items) == 9, fmt.Sprintf("%d pods", len(pods.Items))
	})
	checkPods(t, pods.Items)

	var r result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("Run did not return within 2 minutes of the pods appearing")
	}
	var re *backend.RunError
	if !errors.As(r.err, &re) || r.out == nil || r.out.State != backend.StateFailed {
		t.Fatalf("Run = %+v, %v; want a FAILED outcome and a *backend.RunError", r.out, r.err)
	}
	if !strings.Contains(r.out.Message, string(rayv1.DeadlineExceeded)) || r.out.ID != id || r.out.Backend != kuberay.Name {
		t.Errorf("outcome %+v, want id %s and KubeRay's %s reason", r.out, id, rayv1.DeadlineExceeded)
	}
	mu.Lock()
	defer mu.Unlock()
	var states, messages []string
	for _, s := range seen {
		states = append(states, string(s.State))
		messages = append(messages, s.Message)
	}
	t.Logf("statuses: %q", messages)
	if i, j := slices.Index(messages, "Initializing"), slices.IndexFunc(messages, func(m string) bool { return strings.HasPrefix(m, "Running") }); i < 0 || j < i {
		t.Errorf("messages %q: want Initializing, then Running", messages)
	}
	if want := []string{"PENDING", "RUNNING", "FAILED"}; !slices.Equal(slices.Compact(states), want) {
		t.Errorf("states %v, want %v", slices.Compact(states), want)
	}
	var jobs rayv1.RayJobList
	if err := env.Client.List(t.Context(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 || jobs.Items[0].Name != id {
		t.Errorf("%d RayJobs in the namespace, want exactly %s", len(jobs.Items), id)
	}
}

func checkPods(t *testing.T, pods []corev1.Pod) {
	t.Helper()
	var heads int
	hosts := map[string][]string{} // replica name -> host indices
	replicas := map[string]bool{}
	for _, p := range pods {
		c := p.Spec.Containers[0]
		tpuReq, tpuLim := c.Resources.Requests["google.com/tpu"], c.Resources.Limits["google.com/tpu"]
		switch p.Labels[utils.RayNodeTypeLabelKey] {
		case "head":
			heads++
			if !tpuLim.IsZero() || len(p.Spec.NodeSelector) > 0 {
				t.Errorf("head pod %s holds TPUs %s or a node selector %v", p.Name, tpuLim.String(), p.Spec.NodeSelector)
			}
		case "worker":
			if tpuReq.Value() != 4 || tpuLim.Value() != 4 {
				t.Errorf("worker %s google.com/tpu request %s limit %s, want 4", p.Name, tpuReq.String(), tpuLim.String())
			}
			if p.Spec.NodeSelector["cloud.google.com/gke-tpu-accelerator"] != "tpu-v6e-slice" || p.Spec.NodeSelector["cloud.google.com/gke-tpu-topology"] != "4x4" {
				t.Errorf("worker %s node selector %v", p.Name, p.Spec.NodeSelector)
			}
			if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "MEGASCALE_NUM_SLICES" && e.Value == "2" }) {
				t.Errorf("worker %s lacks MEGASCALE_NUM_SLICES=2", p.Name)
			}
			name := p.Labels[utils.RayWorkerReplicaNameKey]
			hosts[name] = append(hosts[name], p.Labels[utils.RayHostIndexKey])
			replicas[p.Labels[utils.RayWorkerReplicaIndexKey]] = true
		default:
			t.Errorf("pod %s has node type %q", p.Name, p.Labels[utils.RayNodeTypeLabelKey])
		}
	}
	if heads != 1 || len(hosts) != 2 {
		t.Errorf("%d head pods and %d slice replicas, want 1 and 2", heads, len(hosts))
	}
	for name, idx := range hosts {
		slices.Sort(idx)
		if want := []string{"0", "1", "2", "3"}; !slices.Equal(idx, want) {
			t.Errorf("replica %s host indices %v, want %v", name, idx, want)
		}
	}
	if !replicas["0"] || !replicas["1"] {
		t.Errorf("replica indices %v, want 0 and 1", replicas)
	}
}

// Every golden manifest, read back from its file, passes KubeRay's own
// RayJob validation and the apiserver's CRD schema validation on a real
// apply. Each goes into its own namespace: two goldens share a name, and
// the running KubeRay controller takes ownership of fields of the first
// (a different spec under the same name is a field-manager conflict, as it
// is for kubectl apply --server-side).
func TestGoldenManifestsApply(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	c, err := kuberay.New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	applied := 0
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".golden.yaml") {
			continue
		}
		raw, err := os.ReadFile("testdata/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.ApplyManifest(t.Context(), env.Namespace(t), raw)
		if err != nil {
			t.Errorf("%s: %v", f.Name(), err)
			continue
		}
		if err := kubeRayValidates(out); err != nil {
			t.Errorf("%s: KubeRay's validation of the applied object: %v", f.Name(), err)
		}
		applied++
	}
	if want := len(goldenCases(t)) + goldenOthers; applied != want {
		t.Errorf("applied %d golden manifests, want %d", applied, want)
	}
}

// Two goroutines applying the same plan under one id end with one RayJob;
// the same id for another plan is refused.
func TestConcurrentApply(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		t.Fatal(err)
	}
	plan := compile(t, trainer("v6e", "4x4", 2))
	var wg sync.WaitGroup
	uids := make([]string, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			job, err := b.Apply(t.Context(), plan, "same-plan")
			errs[i] = err
			if job != nil {
				uids[i] = string(job.UID)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var jobs rayv1.RayJobList
	if err := env.Client.List(t.Context(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 || uids[0] != uids[1] || uids[0] != string(jobs.Items[0].UID) {
		t.Errorf("%d RayJobs, applies returned uids %v; want one object", len(jobs.Items), uids)
	}
	other := compile(t, trainer("v6e", "4x4", 1))
	if _, err := b.Apply(t.Context(), other, "same-plan"); !errors.Is(err, kuberay.ErrAlreadyExists) {
		t.Errorf("another plan under the same id: %v, want ErrAlreadyExists", err)
	}
	var after rayv1.RayJob
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "same-plan"}, &after); err != nil {
		t.Fatal(err)
	}
	if *after.Spec.RayClusterSpec.WorkerGroupSpecs[0].Replicas != 2 {
		t.Error("the refused apply changed the RayJob")
	}
}

// goldenOthers counts the golden manifests that are not RayJobs: the
// RayService of TestRenderService, the RayCluster of TestRenderCluster and
// the queued one of TestQueueRenderCluster.
const goldenOthers = 3

// kubeRayValidates runs KubeRay's own validation of an applied object, as
// the operator does before it reconciles it.
func kubeRayValidates(obj runtime.Object) error {
	switch o := obj.(type) {
	case *rayv1.RayJob:
		return errors.Join(utils.ValidateRayJobMetadata(o.ObjectMeta), utils.ValidateRayJobSpec(o))
	case *rayv1.RayService:
		return errors.Join(utils.ValidateRayServiceMetadata(o.ObjectMeta), utils.ValidateRayServiceSpec(o))
	case *rayv1.RayCluster:
		return errors.Join(utils.ValidateRayClusterMetadata(o.ObjectMeta), utils.ValidateRayClusterSpec(&o.Spec, o.Annotations))
	}
	return fmt.Errorf("not a KubeRay object: %T", obj)
}
