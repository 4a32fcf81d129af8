package kuberay_test

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/train"
)

// Two JaxTrainers that each need the one v4 2x2x2 slice (8 chips) a
// ClusterQueue has quota for, fitted together on the KubeRay backend with
// a queue, against Kueue v0.17's real controllers: Kueue admits one
// RayJob, keeps the other suspended (its Fit reports why: "queued by
// Kueue: ClusterQueue ..., needs 8 google.com/tpu, 8 in use") and admits
// it only once the first has finished and released the quota. Never are
// both admitted and unfinished at once; both train to completion exactly
// once (one start per rank, one success per RayJob). The admission and
// finish times are logged.
func TestKueueAdmitsTwoRayJobsOneAfterTheOther(t *testing.T) {
	env := kubetest.SharedKueue(t)
	t.Logf("pod-running control plane started in %v, Kueue %s in %v", kubetest.SharedPodsStartDuration(), kubetest.KueueVersion, env.KueueStartDuration())
	ctx := t.Context()
	ns := env.Namespace(t)
	cq := ns + "-tpu"
	makeQueues(t, env, ns, cq, "team-a")
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns, Queue: "team-a"}))
	if err != nil {
		t.Fatal(err)
	}
	const steps = 2
	type run struct {
		name, reports string
		trainer       train.JaxTrainer
		res           *train.Result
		err           error
		statuses      []string
	}
	runs := []*run{{name: "queued-first"}, {name: "queued-second"}}
	for _, r := range runs {
		reports, storage, work := trainLoopDirs(t, env, "raytpu-kueue-")
		r.reports = reports
		r.trainer = train.JaxTrainer{
			TrainLoopPerWorker: "train_loop:train_func",
			TrainLoopConfig:    map[string]any{"steps": steps, "checkpoint_every": steps, "report_dir": reports},
			ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2"},
			RunConfig: train.RunConfig{Name: r.name, StoragePath: storage,
				WorkerEnv: map[string]string{"JAX_PLATFORMS": "cpu"}},
			RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: work},
		}
	}
	began := time.Now()
	since := func() string { return fmt.Sprintf("%6.1fs", time.Since(began).Seconds()) }
	watch := watchAdmissions(t, env, ns, began)
	var mu sync.Mutex
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait) // a failed test logs nothing after it ended
	for i, r := range runs {
		if i > 0 {
			// The second is submitted once the first's RayJob exists, so
			// that Kueue (first in, first out) admits the first.
			waitFor(t, 2*time.Minute, "RayJob "+runs[0].name, func() (bool, string) {
				err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: runs[0].name}, &rayv1.RayJob{})
				return err == nil, errString(err)
			})
		}
		wg.Go(func() {
			r.res, r.err = r.trainer.Fit(ctx, b, &backend.RunOptions{SubmissionID: r.name, OnStatus: func(s backend.Status) {
				t.Logf("%s RayJob %s: %s %s", since(), s.ID, s.State, s.Message)
				mu.Lock()
				r.statuses = append(r.statuses, s.Message)
				mu.Unlock()
			}})
			t.Logf("%s Fit of %s returned", since(), r.name)
		})
	}
	wg.Wait()
	seen := watch()
	for _, r := range runs {
		if r.err != nil {
			logSubmitter(t, env, ns, r.name)
			t.Fatalf("Fit of %s: %v", r.name, r.err)
		}
		if step, ok := r.res.Step("step"); !ok || step != steps {
			t.Errorf("%s: result step %d (%v), want %d", r.name, step, ok, steps)
		}
		if len(r.res.Attempts) != 1 {
			t.Errorf("%s: %d attempts, want 1: %+v", r.name, len(r.res.Attempts), r.res.Attempts)
		}
		checkStartedOnce(t, env, r.name, r.reports)
		var job rayv1.RayJob
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.name}, &job); err != nil {
			t.Fatal(err)
		}
		if job.Status.Succeeded == nil || *job.Status.Succeeded != 1 || job.Status.Failed != nil && *job.Status.Failed != 0 {
			t.Errorf("%s: RayJob succeeded %v failed %v times, want once and never", r.name, job.Status.Succeeded, job.Status.Failed)
		}
		logWorkload(t, env, ns, job.UID, r.name, began)
	}

	// Which ran first is Kueue's to decide; the other waited for it.
	first, second := runs[0].name, runs[1].name
	if seen.admitted[second].Before(seen.admitted[first]) {
		first, second = second, first
	}
	t.Logf("admitted: %s at %v, %s at %v; %s finished at %v",
		first, seen.admitted[first].Sub(began).Round(100*time.Millisecond), second, seen.admitted[second].Sub(began).Round(100*time.Millisecond),
		first, seen.finished[first].Sub(began).Round(100*time.Millisecond))
	if seen.admitted[first].IsZero() || seen.admitted[second].IsZero() || seen.finished[first].IsZero() {
		t.Fatalf("admissions seen %v, finishes %v: want both RayJobs resumed by Kueue and the first finished", seen.admitted, seen.finished)
	}
	if seen.overlap != "" {
		t.Errorf("both RayJobs admitted and unfinished at once: %s", seen.overlap)
	}
	if !seen.admitted[second].After(seen.finished[first]) {
		t.Errorf("%s admitted at %v, before %s finished at %v", second, seen.admitted[second], first, seen.finished[first])
	}
	waiting := runs[1].statuses
	if second == runs[0].name {
		waiting = runs[0].statuses
	}
	want := "queued by Kueue: ClusterQueue " + cq + ", needs 8 google.com/tpu, 8 in use"
	found := false
	for _, m := range waiting {
		found = found || strings.HasPrefix(m, want)
	}
	if !found {
		t.Errorf("the statuses of %s while it waited: %q; want one starting %q", second, waiting, want)
	}
}

// makeQueues creates a ResourceFlavor and ClusterQueue cq (cluster-wide
// objects, named for the test's namespace ns) with quota for one v4
// 2x2x2 slice (8 google.com/tpu) and enough CPU and memory for the head
// and submitter pods, taking workloads from ns only, and LocalQueue lq in
// ns; they are deleted when the test ends.
func makeQueues(t *testing.T, env *kubetest.Env, ns, cq, lq string) {
	t.Helper()
	objs := []map[string]any{
		{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": map[string]any{"name": cq}},
		{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": map[string]any{"name": cq},
			"spec": map[string]any{
				"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}},
				"resourceGroups": []any{map[string]any{
					"coveredResources": []any{"cpu", "memory", "google.com/tpu"},
					"flavors": []any{map[string]any{"name": cq, "resources": []any{
						map[string]any{"name": "cpu", "nominalQuota": "64"},
						map[string]any{"name": "memory", "nominalQuota": "256Gi"},
						map[string]any{"name": "google.com/tpu", "nominalQuota": "8"},
					}}},
				}},
			}},
		{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": map[string]any{"name": lq, "namespace": ns},
			"spec": map[string]any{"clusterQueue": cq}},
	}
	for _, o := range objs {
		u := &unstructured.Unstructured{Object: o}
		if err := env.Client.Create(t.Context(), u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = env.Client.Delete(ctx, u)
		})
	}
}

// admissions is what watchAdmissions saw: when each RayJob was first seen
// resumed (spec.suspend false) and finished, and the first moment two
// were resumed and unfinished at once ("" if never).
type admissions struct {
	admitted, finished map[string]time.Time
	overlap            string
}

// watchAdmissions reads the namespace's RayJobs every 100ms until the
// function it returns is called, which returns what it saw.
func watchAdmissions(t *testing.T, env *kubetest.Env, ns string, began time.Time) func() admissions {
	t.Helper()
	seen := admissions{admitted: map[string]time.Time{}, finished: map[string]time.Time{}}
	stop, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	end := func() {
		once.Do(func() { close(stop) })
		<-done
	}
	t.Cleanup(end)
	go func() {
		defer close(done)
		for {
			var jobs rayv1.RayJobList
			if err := env.Client.List(t.Context(), &jobs, client.InNamespace(ns)); err == nil {
				now := time.Now()
				var running []string
				for _, j := range jobs.Items {
					fin := kuberay.JobFinished(&j)
					if !j.Spec.Suspend && seen.admitted[j.Name].IsZero() {
						seen.admitted[j.Name] = now
						t.Logf("%6.1fs RayJob %s resumed by Kueue", now.Sub(began).Seconds(), j.Name)
					}
					if fin && seen.finished[j.Name].IsZero() {
						seen.finished[j.Name] = now
						t.Logf("%6.1fs RayJob %s finished: %s", now.Sub(began).Seconds(), j.Name, j.Status.JobDeploymentStatus)
					}
					if !j.Spec.Suspend && !fin {
						running = append(running, j.Name)
					}
				}
				if len(running) > 1 && seen.overlap == "" {
					seen.overlap = fmt.Sprintf("%v at %.1fs", running, now.Sub(began).Seconds())
				}
			}
			select {
			case <-stop:
				return
			case <-t.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() admissions {
		end()
		return seen
	}
}

// checkStartedOnce checks that every rank of the run whose reports are in
// dir (object storage) started its train loop once (testdata/trainloop's
// starts-<rank>-<ns>, one object per start).
func checkStartedOnce(t *testing.T, env *kubetest.Env, name, dir string) {
	t.Helper()
	starts := map[string]int{}
	for _, uri := range listGS(t, env, dir, "starts-") {
		rank := strings.SplitN(strings.TrimPrefix(path.Base(uri), "starts-"), "-", 2)[0]
		starts[rank]++
	}
	if len(starts) != 2 {
		t.Errorf("%s: %d ranks reported a start (%v), want 2 (one slice, 2 hosts)", name, len(starts), starts)
	}
	for rank, n := range starts {
		if n != 1 {
			t.Errorf("%s: rank %s started %d times, want 1", name, rank, n)
		}
	}
}

// logWorkload logs the conditions of the Workload Kueue made for the
// RayJob with UID uid: when it reserved quota, admitted and finished it.
func logWorkload(t *testing.T, env *kubetest.Env, ns string, uid any, name string, began time.Time) {
	t.Helper()
	var list unstructured.UnstructuredList
	list.SetAPIVersion("kueue.x-k8s.io/v1beta2")
	list.SetKind("WorkloadList")
	if err := env.Client.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{"kueue.x-k8s.io/job-uid": fmt.Sprint(uid)}); err != nil || len(list.Items) != 1 {
		t.Errorf("%s: its Workload: %d found, %v", name, len(list.Items), err)
		return
	}
	wl := list.Items[0]
	conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	var parts []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		at, _ := time.Parse(time.RFC3339, fmt.Sprint(m["lastTransitionTime"]))
		parts = append(parts, fmt.Sprintf("%v=%v at %.0fs (%v)", m["type"], m["status"], at.Sub(began).Seconds(), m["reason"]))
	}
	cq, _, _ := unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue")
	t.Logf("Workload %s of %s (ClusterQueue %s): %s", wl.GetName(), name, cq, strings.Join(parts, ", "))
}
