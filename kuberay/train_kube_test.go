package kuberay_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	Labels       map[string]string `json:"labels"`
	Env          map[string]string `json:"env"`
	ProcessCount int               `json:"process_count"`
	ProcessIndex int               `json:"process_index"`
	LocalDevices int               `json:"local_devices"`
}

// sharedDir is a fresh directory every pod sees at the same path: pods
// have a /tmp of their own, so not under it.
func sharedDir(t *testing.T, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", pattern)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// A two-slice v4 2x2x2 JaxTrainer with a local working_dir, fitted on the
// KubeRay backend, trains for real: KubeRay's RayCluster runs Ray in pods
// posing as GKE TPU hosts, the submitter Job's pod (run by the real
// kube-controller-manager's Job controller) submits the entrypoint, and
// Fit returns the launcher's result read from the submitter's log: the
// loop's metrics and checkpoint, every rank on its own pod, each slice's
// ranks on one slice, MEGASCALE_NUM_SLICES 2 and jax.process_count() 4.
// The RayJob ends SUCCEEDED and KubeRay deletes its RayCluster
// (shutdownAfterJobFinishes).
func TestFitTrainsOnKubeRay(t *testing.T) {
	env := kubetest.SharedPods(t)
	t.Logf("pod-running control plane started in %v", kubetest.SharedPodsStartDuration())
	ctx := t.Context()
	ns := env.Namespace(t)
	reports, storage := sharedDir(t, "raytpu-e2e-reports-"), sharedDir(t, "raytpu-e2e-storage-")
	loop, err := os.ReadFile(filepath.Join("testdata", "trainloop", "train_loop.py"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "train_loop.py"), loop, 0o644); err != nil {
		t.Fatal(err)
	}
	const steps = 6
	trainer := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		TrainLoopConfig:    map[string]any{"steps": steps, "checkpoint_every": 3, "report_dir": reports},
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2", NumSlices: 2},
		RunConfig: train.RunConfig{
			Name: "e2e", StoragePath: storage,
			Checkpoint: train.CheckpointConfig{NumToKeep: 1},
			WorkerEnv:  map[string]string{"JAX_PLATFORMS": "cpu"},
		},
		RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: work},
	}
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		t.Fatal(err)
	}
	const name = "e2e-train"
	began := time.Now()
	res, err := trainer.Fit(ctx, b, backend.RunOptions{SubmissionID: name, OnStatus: func(s backend.Status) {
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
	if _, err := os.Stat(filepath.Join(res.Checkpoint, "state.json")); err != nil {
		t.Errorf("the result's checkpoint: %v", err)
	}
	checkRanks(t, reports)

	var job rayv1.RayJob
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &job); err != nil {
		t.Fatal(err)
	}
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

func errString(err error) string {
	if err == nil {
		return "present"
	}
	return err.Error()
}

// checkRanks checks where each rank ran: four ranks, each on its own pod,
// two per slice with MEGASCALE_SLICE_ID the slice's index, and JAX
// initialised over all four.
func checkRanks(t *testing.T, dir string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "rank-*.json"))
	if len(paths) != 4 {
		t.Fatalf("%d rank reports, want 4 (2 slices × 2 hosts)", len(paths))
	}
	pods, slices := map[string]bool{}, map[string][]int{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r rankReport
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", p, err)
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
