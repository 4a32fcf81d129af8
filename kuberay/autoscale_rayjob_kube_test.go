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
// neither made nor deleted one. It runs after the first job's slice idled
// away: it waits for the group at zero replicas and pods, and then the
// RayJob alone asks for a slice, so the group must go from zero to one
// replica whose pods the job runs on. When the group is not back at zero
// within the wait (autoscaler v1 removed one host first and KubeRay
// restarted the replica, see the scale-down above), the job runs on that
// replica and the test says so instead of claiming a scale from zero.
func rayJobOnCluster(t *testing.T, env *kubetest.Env, ns string, rc *rayv1.RayCluster, group string, hosts int, trainer train.JaxTrainer, autoscalerLog func() string) {
	t.Helper()
	ctx := t.Context()
	name := rc.Name
	// The first job's slice has been removed for idleness: wait for the
	// group's replicas and pods at zero (a replica KubeRay restarted idles
	// away in turn).
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
	reports := gsDir(t, env, "raytpu-autoscale-rayjob-", "reports")
	job := trainer
	job.RunConfig.Name = "autoscale-rayjob"
	job.TrainLoopConfig = map[string]any{"steps": 2, "checkpoint_every": 2, "report_dir": reports}
	watch, stopWatch := watchGroup(t, env, ns, name, group, hosts)
	defer stopWatch()
	submitted := time.Now()
	res, err := job.Fit(ctx, b, &backend.RunOptions{})
	done := time.Since(submitted)
	stopWatch()
	if err != nil {
		t.Fatalf("Fit as a RayJob on RayCluster %s: %v\nautoscaler:\n%s", name, err, autoscalerLog())
	}
	if step, ok := res.Step("step"); !ok || step != 2 {
		t.Errorf("RayJob on the cluster: result step %d (%v), want 2; metrics %v", step, ok, res.Metrics)
	}
	checkOneSlice(t, env, reports)
	watch.mu.Lock()
	reached, podsAt := watch.maxReplicas, watch.podsAt
	watch.mu.Unlock()
	if reached < 1 || podsAt.IsZero() {
		t.Errorf("the job trained, but the watch saw the group reach %d replicas (its pods all there at %v)", reached, podsAt)
	}
	if from == 0 {
		t.Logf("RayJob on RayCluster %s scaled group %s from zero: submit → the group's %d pods there %v, → job done %v",
			name, group, hosts, podsAt.Sub(submitted).Round(time.Millisecond), done.Round(time.Millisecond))
	} else {
		t.Logf("RayJob on RayCluster %s: group %s was still at %d replicas after the wait for zero (KubeRay restarted the idle replica), so this run proves the job ran on the autoscaled cluster, not a scale from zero; submit → job done %v",
			name, group, from, done.Round(time.Millisecond))
	}

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
