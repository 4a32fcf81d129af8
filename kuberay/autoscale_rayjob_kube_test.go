package kuberay_test

import (
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/train"
)

// rayJobOnCluster runs trainer (one v4 2x2x2 slice) as a RayJob on the
// existing, autoscaled RayCluster rc through the kuberay backend with
// Options.Cluster: the RayJob names rc in its clusterSelector, KubeRay's
// submitter pod mounts the packed working_dir and its `ray job submit`
// uploads it, the job trains to the end with both ranks on one slice of
// the group, and the RayCluster is the same object afterwards: the RayJob
// neither made nor deleted one. The test waits for the earlier jobs'
// slices to idle away first and logs the group's replicas then and when
// the job's slice pods were there; it does not attribute a scale-up to
// this job: Ray Train's request_resources from the two-slice run still
// asks the autoscaler for its bundles, so the group may be scaling up
// again already.
func rayJobOnCluster(t *testing.T, env *kubetest.Env, ns string, rc *rayv1.RayCluster, group string, hosts int, trainer train.JaxTrainer, autoscalerLog func() string) {
	t.Helper()
	ctx := t.Context()
	name := rc.Name
	// Start from zero when the two-slice job's slices idle away in time;
	// the job is correct either way, so the wait only bounds itself.
	idle, stopIdle := watchGroup(t, env, ns, name, group, hosts)
	deadline := time.Now().Add(2 * time.Minute)
	from := -1
	for time.Now().Before(deadline) {
		idle.mu.Lock()
		replicas, pods := idle.replicas, idle.pods
		idle.mu.Unlock()
		if replicas == 0 && pods == 0 {
			from = 0
			break
		}
		time.Sleep(time.Second)
	}
	stopIdle()
	if from < 0 {
		idle.mu.Lock()
		from = int(idle.replicas)
		idle.mu.Unlock()
	}

	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns, Cluster: name}))
	if err != nil {
		t.Fatal(err)
	}
	reports := sharedDir(t, "raytpu-autoscale-rayjob-reports-")
	job := trainer
	job.RunConfig.Name = "autoscale-rayjob"
	job.TrainLoopConfig = map[string]any{"steps": 2, "checkpoint_every": 2, "report_dir": reports}
	watch, stopWatch := watchGroup(t, env, ns, name, group, hosts)
	defer stopWatch()
	submitted := time.Now()
	res, err := job.Fit(ctx, b, backend.RunOptions{})
	done := time.Since(submitted)
	stopWatch()
	if err != nil {
		t.Fatalf("Fit as a RayJob on RayCluster %s: %v\nautoscaler:\n%s", name, err, autoscalerLog())
	}
	if step, ok := res.Step("step"); !ok || step != 2 {
		t.Errorf("RayJob on the cluster: result step %d (%v), want 2; metrics %v", step, ok, res.Metrics)
	}
	checkOneSlice(t, reports)
	watch.mu.Lock()
	reached, podsAt := watch.maxReplicas, watch.podsAt
	watch.mu.Unlock()
	if reached < 1 || podsAt.IsZero() {
		t.Errorf("the job trained, but the watch saw the group reach %d replicas (its pods all there at %v)", reached, podsAt)
	}
	t.Logf("RayJob on RayCluster %s: group at %d replicas when the earlier slices' wait ended; submit → the group's %d pods there %v, → job done %v",
		name, from, hosts, podsAt.Sub(submitted).Round(time.Millisecond), done.Round(time.Millisecond))

	var jobs rayv1.RayJobList
	if err := env.Client.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 || jobs.Items[0].Spec.ClusterSelector[kuberay.ClusterSelectorKey] != name || jobs.Items[0].Spec.RayClusterSpec != nil ||
		jobs.Items[0].Status.RayClusterName != name {
		t.Errorf("RayJobs %+v, want one whose clusterSelector names %s and which ran on it", jobs.Items, name)
	}
	var after rayv1.RayCluster
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &after); err != nil || after.UID != rc.UID {
		t.Errorf("RayCluster %s after the RayJob: uid %s (%v), want the same object, uid %s", name, after.UID, err, rc.UID)
	}
}
