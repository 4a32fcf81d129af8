package kuberay_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/train"
)

// rankReport is what testdata/trainloop writes for each rank.
type rankReport struct {
	Rank         int               `json:"rank"`
	WorldSize    int               `json:"world_size"`
	Hostname     string            `json:"hostname"`
	NodeID       string            `json:"node_id"`
	Labels       map[string]string `json:"labels"`
	Env          map[string]string `json:"env"`
	ProcessCount int               `json:"process_count"`
	ProcessIndex int               `json:"process_index"`
	LocalDevices int               `json:"local_devices"`
	WrittenAt    float64           `json:"written_at"`
}

// A two-slice v4 2x2x2 JaxTrainer with a local working_dir, fitted on the
// KubeRay backend, trains for real and survives the loss of a pod:
// KubeRay's RayCluster runs Ray in pods posing as GKE TPU hosts, the
// submitter Job's pod (run by the real kube-controller-manager's Job
// controller) submits the entrypoint, and Fit returns the launcher's
// result read from the submitter's log. Every worker pauses after the
// checkpoint of step 3; the test kills every process of rank 1's pod (a
// TPU host lost mid-run), KubeRay replaces the pod, and Ray Train starts
// the group again from that checkpoint. The result carries the loop's
// metrics and checkpoint and says so: the second attempt resumed from
// step 3, the lost pod's Ray node among the lost hosts. Then, paused after
// the checkpoint of step 6, the run loses a whole slice as GKE reclaims
// spot capacity (preempt_train_kube_test.go): both pods of the second
// slice get SIGTERM at once and are gone, KubeRay recreates them once the
// node pool is back, and Ray Train resumes from step 6 on both slices; the
// result names the lost slice and its two hosts, and the simulator's
// slice-loss model agrees. Every rank of the last attempt ran on its own
// pod, each slice's ranks on one slice, with MEGASCALE_NUM_SLICES 2,
// MEGASCALE_SLICE_ID its slice's index and jax.process_count() 4. The
// RayJob ends SUCCEEDED and KubeRay deletes its RayCluster
// (shutdownAfterJobFinishes).
func TestFitTrainsOnKubeRayThroughAPodLoss(t *testing.T) {
	env := kubetest.SharedPods(t)
	t.Logf("pod-running control plane started in %v", kubetest.SharedPodsStartDuration())
	ctx := t.Context()
	ns := env.Namespace(t)
	reports, storage, work := trainLoopDirs(t, env, "raytpu-e2e-")
	// The working_dir does not fit a ConfigMap: it goes to a bucket.
	code := gsDir(t, env, "raytpu-e2e-code-", "packages")
	bigFile(t, work, "weights.bin", 3<<19)
	const steps, pauseAt, preemptAt = 9, 3, 6
	trainer := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		TrainLoopConfig:    map[string]any{"steps": steps, "checkpoint_every": 3, "pause_at": []int{pauseAt, preemptAt}, "report_dir": reports},
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2", NumSlices: 2},
		RunConfig: train.RunConfig{
			Name: "e2e", StoragePath: storage,
			Checkpoint: train.CheckpointConfig{NumToKeep: 1},
			Failure:    train.FailureConfig{MaxFailures: 3},
			WorkerEnv:  map[string]string{"JAX_PLATFORMS": "cpu"},
		},
		RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: work},
	}
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns, PackageBucket: code}))
	if err != nil {
		t.Fatal(err)
	}
	const name = "e2e-train"
	began := time.Now()
	lost := losePodWhenPaused(t, env, ns, reports, storage+"/"+trainer.RunConfig.Name, pauseAt, began)
	preempted := preemptSliceWhenPaused(t, env, ns, reports, storage+"/"+trainer.RunConfig.Name, preemptAt, began)
	res, err := trainer.Fit(ctx, b, &backend.RunOptions{SubmissionID: name, OnStatus: func(s backend.Status) {
		t.Logf("%6.1fs RayJob %s: %s %s", time.Since(began).Seconds(), s.ID, s.State, s.Message)
	}})
	t.Logf("Fit returned after %v", time.Since(began).Round(time.Millisecond))
	if err != nil {
		logSubmitter(t, env, ns, name)
		t.Fatalf("Fit: %v", err)
	}
	if step, ok := res.Step("step"); !ok || step != steps {
		t.Errorf("result step %d (%v), want %d; metrics %v", step, ok, steps, res.Metrics)
	}
	if pc, ok := res.Metrics["process_count"].(float64); !ok || pc != 4 {
		t.Errorf("result process_count %v, want 4", res.Metrics["process_count"])
	}
	if res.Checkpoint == "" || res.Backend != kuberay.Name || res.JobID != name {
		t.Errorf("result checkpoint %q backend %q job %q, want a checkpoint from %s job %s", res.Checkpoint, res.Backend, res.JobID, kuberay.Name, name)
	}
	if !strings.HasPrefix(res.Checkpoint, storage+"/") {
		t.Errorf("the result's checkpoint %q is not under the run's storage %s", res.Checkpoint, storage)
	}
	if b, err := readGS(env, res.Checkpoint+"/state.json"); err != nil || !strings.Contains(string(b), fmt.Sprintf(`"step": %d`, steps)) {
		t.Errorf("the result's checkpoint in object storage: %s, %v; want the state of step %d", b, err, steps)
	}
	checkRanks(t, env, reports)
	checkRecovery(t, res, <-lost, pauseAt)
	ps := <-preempted
	logRayTimeline(t, res, ps)
	checkSliceRecovery(t, env, res, ps, reports, preemptAt)
	checkSlicePrediction(t, compile(t, trainer), res, ps)

	var job rayv1.RayJob
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &job); err != nil {
		t.Fatal(err)
	}
	checkUploadedWorkingDir(t, env, code, job.Spec.RuntimeEnvYAML, 3<<19)
	if job.Status.JobStatus != rayv1.JobStatusSucceeded || job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete {
		t.Errorf("RayJob status %s / %s, want SUCCEEDED / Complete", job.Status.JobStatus, job.Status.JobDeploymentStatus)
	}
	cleaned := time.Now()
	waitFor(t, 3*time.Minute, "the RayJob's RayCluster and its pods deleted", func() (bool, string) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: job.Status.RayClusterName}, &rayv1.RayCluster{})
		var pods corev1.PodList
		if lerr := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/cluster": job.Status.RayClusterName}); lerr != nil {
			t.Fatal(lerr)
		}
		return apierrors.IsNotFound(err) && len(pods.Items) == 0, "RayCluster: " + errString(err) + ", pods: " + strconv.Itoa(len(pods.Items))
	})
	t.Logf("RayCluster %s and its pods gone %v after Fit returned", job.Status.RayClusterName, time.Since(cleaned).Round(time.Millisecond))
}

// lostPod is the pod losePodWhenPaused killed, the Ray node it was, and
// what became of it.
type lostPod struct {
	Name, NodeID string
	UID          types.UID
	// RestartPolicy is the pod's; Restarts its Ray container's restart
	// count once it ran again, and Replaced whether a new pod (another
	// UID) of that name took its place instead.
	RestartPolicy corev1.RestartPolicy
	Restarts      int32
	Replaced      bool
}

// losePodWhenPaused waits until the four workers of the run's first
// attempt have paused (testdata/trainloop's paused-<rank>, in object
// storage under reports) and Ray Train has registered the checkpoint of
// step pauseAt in runDir (object storage too), then kills
// every process of rank 1's pod, as a host whose machine fails, and
// sends that pod on the channel (closed without a value if the run
// never paused). The pod is not deleted: what follows is the kubelet's and
// KubeRay's to decide, and the goroutine records it (a container restarted
// in place under restartPolicy Always; a pod deleted and created again by
// KubeRay under Never).
func losePodWhenPaused(t *testing.T, env *kubetest.Env, ns, reports, runDir string, pauseAt int, began time.Time) <-chan lostPod {
	t.Helper()
	out := make(chan lostPod, 1)
	ctx := t.Context()
	go func() {
		defer close(out)
		paused := func() bool {
			for rank := 0; rank < 4; rank++ {
				if _, err := readGS(env, reports+"/paused-"+strconv.Itoa(rank)); err != nil {
					return false
				}
			}
			step, ok := registeredCheckpointStep(env, runDir)
			return ok && step >= pauseAt
		}
		for !paused() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
		r, err := readRank(env, reports+"/rank-1.json")
		if err != nil {
			t.Errorf("rank 1's report: %v", err)
			return
		}
		var pod corev1.Pod
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.Hostname}, &pod); err != nil {
			t.Errorf("rank 1's pod: %v", err)
			return
		}
		pids, err := env.Pods.PIDs(ctx, ns, r.Hostname)
		if err != nil || len(pids) == 0 {
			t.Errorf("rank 1's pod %s: pids %v, %v", r.Hostname, pids, err)
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		killed := time.Now()
		t.Logf("%6.1fs killed the %d processes of pod %s (rank 1, Ray node %s, restartPolicy %s)", time.Since(began).Seconds(), len(pids), r.Hostname, r.NodeID, pod.Spec.RestartPolicy)
		lost := lostPod{Name: r.Hostname, NodeID: r.NodeID, UID: pod.UID, RestartPolicy: pod.Spec.RestartPolicy}
		for ctx.Err() == nil && time.Since(killed) < 5*time.Minute {
			var now corev1.Pod
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.Hostname}, &now)
			if err == nil && now.UID != pod.UID && podReady(&now) {
				lost.Replaced = true
				t.Logf("%6.1fs pod %s replaced by a new pod of that name, ready %v after the kill", time.Since(began).Seconds(), r.Hostname, time.Since(killed).Round(time.Millisecond))
				break
			}
			if err == nil && now.UID == pod.UID && len(now.Status.ContainerStatuses) > 0 && now.Status.ContainerStatuses[0].RestartCount > 0 && podReady(&now) {
				lost.Restarts = now.Status.ContainerStatuses[0].RestartCount
				t.Logf("%6.1fs pod %s: its Ray container restarted in place (restart count %d), ready %v after the kill", time.Since(began).Seconds(), r.Hostname, lost.Restarts, time.Since(killed).Round(time.Millisecond))
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		out <- lost
	}()
	return out
}

// checkRecovery checks what the result says of the lost pod: the group
// started twice, the second time from the checkpoint of the step the
// workers paused at, and the killed pod's Ray node is a lost host.
func checkRecovery(t *testing.T, res *train.Result, lost lostPod, pauseAt int) {
	t.Helper()
	if lost.Name == "" {
		t.Fatal("no pod was killed: the run never paused")
	}
	// KubeRay v1.5.0 leaves a worker pod's restartPolicy to Kubernetes'
	// default, Always, unless autoscaler v2 runs: the kubelet then
	// restarts the Ray container in the same pod, and KubeRay deletes a
	// pod only when its container cannot restart (shouldDeletePod).
	switch lost.RestartPolicy {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure:
		if lost.Replaced || lost.Restarts < 1 {
			t.Errorf("pod %s (restartPolicy %s): replaced %v, container restarts %d; want its Ray container restarted in place", lost.Name, lost.RestartPolicy, lost.Replaced, lost.Restarts)
		}
	default:
		if !lost.Replaced {
			t.Errorf("pod %s (restartPolicy %s) was not replaced by KubeRay", lost.Name, lost.RestartPolicy)
		}
	}
	rec := res.Recovery()
	if rec == nil {
		t.Fatalf("the result reports no recovery; attempts %+v, lost hosts %+v", res.Attempts, res.LostHosts)
	}
	t.Logf("recovery: %d restart(s), from slices %v to %v, resumed from %+v, lost hosts %+v", rec.Restarts, rec.FromSlices, rec.ToSlices, rec.ResumedFrom, rec.LostHosts)
	if len(res.Attempts) < 2 || res.Attempts[0].ResumedFrom != nil {
		t.Fatalf("attempts %+v: want a fresh one, then one after the pod loss", res.Attempts)
	}
	if rf := res.Attempts[1].ResumedFrom; rf == nil || rf.Metrics["step"] != float64(pauseAt) {
		t.Errorf("the group resumed after the pod loss from %+v, want the checkpoint of step %d", rf, pauseAt)
	}
	found := false
	for _, h := range res.LostHosts {
		found = found || h.NodeID == lost.NodeID
	}
	if !found {
		t.Errorf("lost hosts %+v, want the Ray node %s of pod %s among them", res.LostHosts, lost.NodeID, lost.Name)
	}
}

// readRank reads a rank's report, object uri in env's object storage.
func readRank(env *kubetest.Env, uri string) (rankReport, error) {
	var r rankReport
	b, err := readGS(env, uri)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", uri, err)
	}
	return r, nil
}

func errString(err error) string {
	if err == nil {
		return "present"
	}
	return err.Error()
}

// checkRanks checks where each rank ran (the reports in directory dir of
// env's object storage): four ranks, each on its own pod, two per slice
// with MEGASCALE_SLICE_ID the slice's index, and JAX initialised over all
// four.
func checkRanks(t *testing.T, env *kubetest.Env, dir string) {
	t.Helper()
	paths := listGS(t, env, dir, "rank-")
	if len(paths) != 4 {
		t.Fatalf("%d rank reports, want 4 (2 slices × 2 hosts)", len(paths))
	}
	pods, slices := map[string]bool{}, map[string][]int{}
	for _, p := range paths {
		r, err := readRank(env, p)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("rank %d on pod %s: slice %s worker %s, env %v, jax %d/%d with %d local devices",
			r.Rank, r.Hostname, r.Labels["ray.io/tpu-slice-name"], r.Labels["ray.io/tpu-worker-id"], r.Env, r.ProcessIndex, r.ProcessCount, r.LocalDevices)
		pods[r.Hostname] = true
		slice := r.Labels["ray.io/tpu-slice-name"]
		slices[slice] = append(slices[slice], r.Rank)
		if r.Env["MEGASCALE_NUM_SLICES"] != "2" || r.ProcessCount != 4 || r.WorldSize != 4 || r.LocalDevices != 4 {
			t.Errorf("rank %d: MEGASCALE_NUM_SLICES %q, jax.process_count() %d, world size %d, local devices %d; want 2, 4, 4, 4",
				r.Rank, r.Env["MEGASCALE_NUM_SLICES"], r.ProcessCount, r.WorldSize, r.LocalDevices)
		}
		if want := strconv.Itoa(r.Rank / 2); r.Env["MEGASCALE_SLICE_ID"] != want {
			t.Errorf("rank %d: MEGASCALE_SLICE_ID %q, want %s", r.Rank, r.Env["MEGASCALE_SLICE_ID"], want)
		}
	}
	if len(pods) != 4 {
		t.Errorf("ranks ran on pods %v, want four different pods", pods)
	}
	if len(slices) != 2 {
		t.Errorf("ranks by slice %v, want two slices of two ranks", slices)
	}
	for s, ranks := range slices {
		if len(ranks) != 2 || s == "" {
			t.Errorf("slice %q holds ranks %v, want two", s, ranks)
		}
	}
}

// trainLoopDirs makes what a test run of testdata/trainloop needs: a
// reports and a storage directory in env's object storage (a bucket
// named prefix...), which every pod reaches as pods on GKE reach Cloud
// Storage, and a local working_dir holding the loop.
func trainLoopDirs(t *testing.T, env *kubetest.Env, prefix string) (reports, storage, work string) {
	t.Helper()
	reports, storage = gsDir(t, env, prefix, "reports"), gsDir(t, env, prefix, "storage")
	loop, err := os.ReadFile(filepath.Join("testdata", "trainloop", "train_loop.py"))
	if err != nil {
		t.Fatal(err)
	}
	work = t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "train_loop.py"), loop, 0o644); err != nil {
		t.Fatal(err)
	}
	return reports, storage, work
}

// logSubmitter logs the submitter pods' logs (the driver's) of a failed run.
func logSubmitter(t *testing.T, env *kubetest.Env, ns, name string) {
	var pods corev1.PodList
	if err := env.Client.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
		return
	}
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			l, _ := env.Pods.Logs(ns, p.Name, c.Name)
			t.Logf("pod %s (%s) container %s, last of its log:\n%s", p.Name, p.Status.Phase, c.Name, l[max(0, len(l)-4000):])
		}
	}
}

// podReady reports whether pod p's Ready condition is true.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
