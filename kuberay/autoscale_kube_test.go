package kuberay_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// Ray's in-tree autoscaler, run by KubeRay as a container of the head pod
// (`ray kuberay-autoscaler`, reaching the API server with the head's
// service account token), scales a TPU worker group from zero for a
// JaxTrainer and back: a RayCluster rendered by raytpu with a v4 2x2x2
// group at min 0 / max 2 and a 30 s idle timeout starts with no TPU pod; a
// one-slice, two-worker JaxTrainer submitted through raybackend to the
// head's dashboard makes the autoscaler add one replica (one slice, two
// pods whose ranks share one ray.io/tpu-slice-name), trains to the end,
// and the group goes back to zero replicas and pods after the idle
// timeout. sim.PredictAutoscaling's prediction for the same spec and plan
// (one slice, from 0 to 1) is what the autoscaler did: the most replicas
// it asked for. The test logs the autoscaler's launches and removals and
// KubeRay's pod events. Then the one-slice job runs as a RayJob on the
// same, existing RayCluster, back at zero (rayJobOnCluster): its
// clusterSelector job scales the group from zero again. Then a two-slice
// JaxTrainer on the same cluster makes the autoscaler take the group to
// its maximum, two replicas, as the simulator predicts, and trains on two
// slices of two pods; with the group's minimum raised to one slice before
// they idle out, the group stays at two slices, not one, as the simulator
// predicts (minSlicesKeepHosts). Last, from zero again, a Serve
// application whose replicas own slices, autoscaled by Serve from one to
// two replicas under load, takes the group to two slices, and the slice
// it releases when the load stops is removed (serveScalesSlices). It runs
// autoscaler v1, which raytpu renders (Ray 2.60 would run v2 under
// KubeRay, which leaves the group at zero).
func TestAutoscalerScalesSliceFromZero(t *testing.T) {
	env := kubetest.SharedPods(t)
	t.Logf("pod-running control plane started in %v", kubetest.SharedPodsStartDuration())
	ctx := t.Context()
	ns := env.Namespace(t)

	// Not shorter: autoscaler v1 counts a slice's second host idle while
	// only the first holds the slice's head reservation, and removing it
	// (workersToDelete) makes KubeRay delete the whole replica and start a
	// new one; on a loaded machine the trainer's slice placement group can
	// take over 15 s to follow the head's (seen: one such churn at 15 s).
	const idle = 30 * time.Second
	auto := &kuberay.Autoscaling{MinSlices: 0, MaxSlices: 2, IdleTimeout: idle}
	slice, err := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2"}.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	cluster := placement.NewSlicePlan("autoscale", slice)
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns, Autoscaling: auto}))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := b.Up(ctx, cluster)
	if err != nil {
		t.Fatal(err)
	}
	name := rc.Name
	t.Cleanup(func() {
		// A replica KubeRay restarted would idle on beside later tests.
		if err := b.Down(context.WithoutCancel(ctx), cluster.Name); err != nil {
			t.Errorf("deleting RayCluster %s: %v", name, err)
		}
	})
	if len(rc.Spec.WorkerGroupSpecs) != 1 {
		t.Fatalf("%d worker groups, want 1", len(rc.Spec.WorkerGroupSpecs))
	}
	wg := rc.Spec.WorkerGroupSpecs[0]
	group, hosts := wg.GroupName, int(wg.NumOfHosts)
	if *wg.Replicas != 0 || *wg.MinReplicas != 0 || *wg.MaxReplicas != 2 || hosts != 2 {
		t.Fatalf("group %s: replicas %d, min %d, max %d, %d hosts; want 0, 0, 2, 2", group, *wg.Replicas, *wg.MinReplicas, *wg.MaxReplicas, hosts)
	}
	began := time.Now()
	st, err := b.WaitCluster(ctx, cluster.Name, nil)
	if err != nil {
		t.Fatalf("waiting for RayCluster %s: %v (%+v)", name, err, st)
	}
	t.Logf("RayCluster %s ready (head only) in %v", name, time.Since(began).Round(time.Millisecond))
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
		t.Fatal(err)
	}
	head := rc.Status.Head.PodName
	fullAutoscalerLog := func() string {
		l, err := env.Pods.Logs(ns, head, "autoscaler")
		if err != nil {
			return err.Error()
		}
		return l
	}
	autoscalerLog := func() string {
		l := fullAutoscalerLog()
		if len(l) > 6000 {
			l = "...\n" + l[len(l)-6000:]
		}
		return l
	}

	// What raytpu predicts for this spec and plan, before the autoscaler acts.
	spec := sim.Spec{Items: []sim.Item{{PodType: "v4-16", Topology: "2x2x2", Count: int(*wg.Replicas), MinSlices: int(*wg.MinReplicas), MaxSlices: int(*wg.MaxReplicas)}}}
	reports, storage, work := trainLoopDirs(t, env, "raytpu-autoscale-")
	const steps = 2
	trainer := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		TrainLoopConfig:    map[string]any{"steps": steps, "checkpoint_every": steps, "report_dir": reports},
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2", NumSlices: 1},
		RunConfig: train.RunConfig{
			Name: "autoscale", StoragePath: storage,
			WorkerEnv: map[string]string{"JAX_PLATFORMS": "cpu"},
		},
		RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: work},
	}
	pred := predictOneGroup(t, spec, trainer)

	if pods := groupPods(t, env, ns, name, group); pods != 0 {
		t.Fatalf("%d pods of group %s before any work, want 0", pods, group)
	}
	dash, err := ray.NewClient(fmt.Sprintf("http://%s.%s.svc.cluster.local:8265", rc.Status.Head.ServiceName, ns),
		ray.WithHTTPClient(&http.Client{Transport: &http.Transport{DialContext: env.Pods.DialContext}}))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := raybackend.New(dash)
	if err != nil {
		t.Fatal(err)
	}

	watch, stopWatch := watchGroup(t, env, ns, name, group, hosts)
	defer stopWatch()

	submitted := time.Now()
	res, err := trainer.Fit(ctx, rb, &backend.RunOptions{})
	done := time.Since(submitted)
	if err != nil {
		t.Fatalf("Fit: %v\nautoscaler:\n%s", err, autoscalerLog())
	}
	watch.mu.Lock()
	podsAt, readyAt, reached := watch.podsAt, watch.readyAt, watch.maxReplicas
	watch.mu.Unlock()
	if podsAt.IsZero() || readyAt.IsZero() {
		t.Fatalf("Fit returned but the group's %d pods were never all seen created (%v) and Ready (%v)", hosts, podsAt, readyAt)
	}
	t.Logf("submit → %d slice pods created %v, → Ray nodes up (pods Ready) %v, → job done %v",
		hosts, podsAt.Sub(submitted).Round(time.Millisecond), readyAt.Sub(submitted).Round(time.Millisecond), done.Round(time.Millisecond))
	if step, ok := res.Step("step"); !ok || step != steps {
		t.Errorf("result step %d (%v), want %d; metrics %v", step, ok, steps, res.Metrics)
	}
	ranksOn := checkOneSlice(t, env, reports)
	atDone := fullAutoscalerLog()

	// Scale-down: the autoscaler removes the idle slice's hosts. Autoscaler
	// v1 knows hosts, not slices: it reaches zero replicas only when both
	// hosts pass the idle timeout in the same iteration. When it removes
	// one first, its KubeRay provider writes workersToDelete with the
	// replicas unchanged (pods left, 1, is the replicas it had), and
	// KubeRay deletes that whole replica and starts a new one, which idles
	// in turn. So the test requires the slice that trained to be removed
	// for idleness within the timeout, and reports whether the group is at
	// zero then or KubeRay restarted the replica.
	idleFrom := time.Now()
	waitFor(t, idle+3*time.Minute, "the autoscaler removed the slice the job trained on", func() (bool, string) {
		watch.mu.Lock()
		defer watch.mu.Unlock()
		return !watch.live[ranksOn[0]] && !watch.live[ranksOn[1]], fmt.Sprintf("replicas %d, pods %d", watch.replicas, watch.pods)
	})
	removed := time.Since(idleFrom)
	zero := false
	waitFor(t, idle+30*time.Second, "the group at zero replicas and pods, or a restarted replica", func() (bool, string) {
		watch.mu.Lock()
		defer watch.mu.Unlock()
		zero = watch.replicas == 0 && watch.pods == 0
		restarted := watch.replicas > 0 && watch.pods > 0 && !watch.live[ranksOn[0]] && !watch.live[ranksOn[1]]
		return zero || restarted && time.Since(idleFrom) > removed+idle, fmt.Sprintf("replicas %d, pods %d", watch.replicas, watch.pods)
	})
	stopWatch()
	if zero {
		t.Logf("job done → slice removed %v → group at zero %v (idle timeout %v); submit → zero %v", removed.Round(time.Millisecond), time.Since(idleFrom).Round(time.Millisecond), idle, time.Since(submitted).Round(time.Millisecond))
	} else {
		t.Logf("job done → slice removed %v (idle timeout %v); the autoscaler removed one host first and KubeRay restarted the replica (replicas %d, pods %d)", removed.Round(time.Millisecond), idle, watch.replicas, watch.pods)
	}

	// What the autoscaler and KubeRay did, from the autoscaler's log (read
	// while the head still ran) and the namespace's events.
	seen := atDone
	if later := fullAutoscalerLog(); strings.HasPrefix(later, atDone) {
		seen = later
	}
	for line := range strings.Lines(seen) {
		if strings.Contains(line, "Launching") || strings.Contains(line, "node_provider.py") && strings.Contains(line, "'op'") ||
			strings.Contains(line, "Removing") || strings.Contains(line, "Terminating") || strings.Contains(line, "event_summary") {
			t.Log("autoscaler: " + strings.TrimSpace(line))
		}
	}
	var events corev1.EventList
	if err := env.Client.List(ctx, &events, client.InNamespace(ns)); err == nil {
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "RayCluster" {
				t.Logf("event %s %s: %s", e.LastTimestamp.Format(time.TimeOnly), e.Reason, e.Message)
			}
		}
	}

	watch.mu.Lock()
	for _, pod := range ranksOn {
		if !deletedForScaleDown(events.Items, pod) {
			t.Errorf("no KubeRay event deleting pod %s for the autoscaler's scale-down request", pod)
		}
	}
	// One slice at a time, and both ranks on the pods of one replica (a
	// pod KubeRay replaced while Ray started would be a second replica
	// name, never at the same time).
	if watch.maxPods > hosts || len(ranksOn) != hosts || watch.replicaOf[ranksOn[0]] == "" || watch.replicaOf[ranksOn[0]] != watch.replicaOf[ranksOn[1]] {
		t.Errorf("at most %d pods at once, ranks on pods %v of replicas %v; want at most %d pods, the ranks on one replica", watch.maxPods, ranksOn, watch.replicaOf, hosts)
	}
	watch.mu.Unlock()
	if int(reached) != pred.To || pred.From != 0 {
		t.Errorf("the autoscaler took group %s to %d replicas; the simulator predicted %s\nautoscaler:\n%s", group, reached, pred, autoscalerLog())
	}

	rayJobOnCluster(t, env, ns, rc, group, hosts, trainer, autoscalerLog)

	// A two-slice job on the same cluster: the autoscaler takes the group
	// to its maximum, two replicas (from the RayJob's slice, if it has not
	// idled away yet, or from zero), and the job's ranks run on two slices
	// of two pods.
	now := groupReplicas(t, env, ns, name, group)
	reports2 := gsDir(t, env, "raytpu-autoscale-two-", "reports")
	two := trainer
	two.ScalingConfig.NumSlices = 2
	two.TrainLoopConfig = map[string]any{"steps": steps, "checkpoint_every": steps, "report_dir": reports2}
	two.RunConfig.Name = "autoscale-two"
	spec.Items[0].Count = now
	pred2 := predictOneGroup(t, spec, two)
	watch2, stopWatch2 := watchGroup(t, env, ns, name, group, 2*hosts)
	defer stopWatch2()
	submitted = time.Now()
	res, err = two.Fit(ctx, rb, &backend.RunOptions{})
	done = time.Since(submitted)
	stopWatch2()
	if err != nil {
		t.Fatalf("Fit of two slices: %v\nautoscaler:\n%s", err, autoscalerLog())
	}
	if step, ok := res.Step("step"); !ok || step != steps {
		t.Errorf("two slices: result step %d (%v), want %d; metrics %v", step, ok, steps, res.Metrics)
	}
	checkRanks(t, env, reports2)
	watch2.mu.Lock()
	podsAt2, readyAt2, reached2 := watch2.podsAt, watch2.readyAt, watch2.maxReplicas
	watch2.mu.Unlock()
	if podsAt2.IsZero() || readyAt2.IsZero() {
		t.Fatalf("Fit returned but the group's %d pods were never all seen created (%v) and Ready (%v)", 2*hosts, podsAt2, readyAt2)
	}
	t.Logf("two slices from %d replicas: submit → %d pods created %v, → Ready %v, → job done %v",
		now, 2*hosts, podsAt2.Sub(submitted).Round(time.Millisecond), readyAt2.Sub(submitted).Round(time.Millisecond), done.Round(time.Millisecond))
	if now >= 2 {
		t.Logf("the group was still at %d replicas when the two-slice job came (KubeRay restarted an idle replica): this run proves the job's two slices, not a scale to two", now)
	}
	if reached2 != 2 || pred2.To != 2 || pred2.From != now {
		t.Errorf("the autoscaler took group %s from %d to %d replicas; the simulator predicted %s\nautoscaler:\n%s", group, now, reached2, pred2, autoscalerLog())
	}

	plan2, err := two.Compile()
	if err != nil {
		t.Fatal(err)
	}
	minSlicesKeepHosts(t, env, ns, name, group, hosts, idle, plan2, fullAutoscalerLog)

	serveScalesSlices(t, env, ns, rc, group, hosts, idle, fullAutoscalerLog, autoscalerLog)
}

// groupReplicas is the replicas the RayCluster's worker group asks for now.
func groupReplicas(t *testing.T, env *kubetest.Env, ns, cluster, group string) int {
	t.Helper()
	var rc rayv1.RayCluster
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: cluster}, &rc); err != nil {
		t.Fatal(err)
	}
	for _, wg := range rc.Spec.WorkerGroupSpecs {
		if wg.GroupName == group && wg.Replicas != nil {
			return int(*wg.Replicas)
		}
	}
	t.Fatalf("RayCluster %s has no worker group %s", cluster, group)
	return 0
}

// predictOneGroup is sim.PredictAutoscaling's prediction (autoscaler v1)
// for spec and the trainer's plan, which must scale spec's one group
// without error.
func predictOneGroup(t *testing.T, spec sim.Spec, trainer train.JaxTrainer) sim.GroupScale {
	t.Helper()
	plan, err := trainer.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return predictPlan(t, spec, plan, fmt.Sprintf("%d slices", trainer.ScalingConfig.NumSlices))
}

// predictPlan is sim.PredictAutoscaling's prediction (autoscaler v1) for
// spec and plan, which must scale spec's one group without error; what
// names the plan in the log.
func predictPlan(t *testing.T, spec sim.Spec, plan *placement.Plan, what string) sim.GroupScale {
	t.Helper()
	pred, err := sim.PredictAutoscaling(spec, plan, sim.AutoscalerV1)
	if err != nil {
		t.Fatal(err)
	}
	if err := pred.Err(); err != nil || len(pred.Groups) != 1 {
		t.Fatalf("prediction %+v: %v", pred, err)
	}
	t.Logf("predicted for %s: %s", what, pred.Groups[0])
	return pred.Groups[0]
}
