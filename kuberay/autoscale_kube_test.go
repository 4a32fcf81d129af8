package kuberay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// groupWatch samples a worker group while a test runs: the replicas the
// autoscaler asked for, the most it asked for, and when the group's pods
// first all existed and were all Ready.
type groupWatch struct {
	mu              sync.Mutex
	maxReplicas     int32
	replicas        int32
	pods, ready     int
	podsAt, readyAt time.Time
	maxPods         int
	replicaOf       map[string]string // pod name → its ray.io/worker-group-replica-name
	live            map[string]bool   // the pods now, not deleting
}

func (g *groupWatch) sample(t *testing.T, env *kubetest.Env, ns, cluster, group string, want int) {
	ctx := t.Context()
	var rc rayv1.RayCluster
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, &rc); err != nil {
		return
	}
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/cluster": cluster, "ray.io/group": group}); err != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, wg := range rc.Spec.WorkerGroupSpecs {
		if wg.GroupName == group && wg.Replicas != nil {
			g.replicas = *wg.Replicas
			g.maxReplicas = max(g.maxReplicas, *wg.Replicas)
		}
	}
	g.pods, g.ready = 0, 0
	g.live = map[string]bool{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		g.pods++
		g.live[p.Name] = true
		if g.replicaOf == nil {
			g.replicaOf = map[string]string{}
		}
		g.replicaOf[p.Name] = p.Labels["ray.io/worker-group-replica-name"]
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				g.ready++
			}
		}
	}
	g.maxPods = max(g.maxPods, g.pods)
	now := time.Now()
	if g.podsAt.IsZero() && g.pods >= want {
		g.podsAt = now
	}
	if g.readyAt.IsZero() && g.ready >= want {
		g.readyAt = now
	}
}

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
// KubeRay's pod events. It runs autoscaler v1, which raytpu renders (Ray
// 2.60 would run v2 under KubeRay, which leaves the group at zero).
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
	reports, storage, work := trainLoopDirs(t, "raytpu-autoscale-")
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
	plan, err := trainer.Compile()
	if err != nil {
		t.Fatal(err)
	}
	pred, err := sim.PredictAutoscaling(spec, plan, sim.AutoscalerV1)
	if err != nil {
		t.Fatal(err)
	}
	if err := pred.Err(); err != nil || len(pred.Groups) != 1 {
		t.Fatalf("prediction %+v: %v", pred, err)
	}
	t.Logf("predicted: %s", pred.Groups[0])

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

	var watch groupWatch
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			watch.sample(t, env, ns, name, group, hosts)
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-sampled
	}()

	submitted := time.Now()
	res, err := trainer.Fit(ctx, rb, backend.RunOptions{})
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
	ranksOn := checkOneSlice(t, reports)
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
	close(stop)
	<-sampled
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
	defer watch.mu.Unlock()
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
	if int(reached) != pred.Groups[0].To || pred.Groups[0].From != 0 {
		t.Errorf("the autoscaler took group %s to %d replicas; the simulator predicted %s\nautoscaler:\n%s", group, reached, pred.Groups[0], autoscalerLog())
	}
}

// groupPods counts the pods of a worker group.
func groupPods(t *testing.T, env *kubetest.Env, ns, cluster, group string) int {
	t.Helper()
	var pods corev1.PodList
	if err := env.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/cluster": cluster, "ray.io/group": group}); err != nil {
		t.Fatal(err)
	}
	return len(pods.Items)
}

// checkOneSlice checks testdata/trainloop's reports of a one-slice run:
// two ranks, each on its own pod, both on one slice. It returns the
// ranks' pods (their hostnames) in rank order.
func checkOneSlice(t *testing.T, dir string) []string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "rank-*.json"))
	if len(paths) != 2 {
		t.Fatalf("%d rank reports, want 2", len(paths))
	}
	hostsSeen, sliceNames := map[string]bool{}, map[string]bool{}
	ranksOn := make([]string, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r rankReport
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		hostsSeen[r.Hostname] = true
		if r.Rank >= 0 && r.Rank < len(ranksOn) {
			ranksOn[r.Rank] = r.Hostname
		}
		sliceNames[r.Labels["ray.io/tpu-slice-name"]] = true
		if r.ProcessCount != 2 {
			t.Errorf("rank %d: jax.process_count() %d, want 2", r.Rank, r.ProcessCount)
		}
	}
	if len(hostsSeen) != 2 || len(sliceNames) != 1 || sliceNames[""] {
		t.Errorf("ranks on pods %v and slices %v, want two pods of one named slice", keys(hostsSeen), keys(sliceNames))
	}
	return ranksOn
}

// deletedForScaleDown reports whether KubeRay's events say it deleted pod
// for the autoscaler (workersToDelete).
func deletedForScaleDown(events []corev1.Event, pod string) bool {
	for _, e := range events {
		if e.Reason == "DeletedWorkerPod" && strings.Contains(e.Message, "/"+pod+" ") && strings.Contains(e.Message, "autoscaler scale-down request") {
			return true
		}
	}
	return false
}
