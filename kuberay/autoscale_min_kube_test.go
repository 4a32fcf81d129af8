package kuberay_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

// minSlicesKeepHosts runs right after a two-slice job on the autoscaled
// group (min 0, max 2, two hosts a slice): the group's minReplicas is
// raised to 1 on the live RayCluster, as a platform team would patch it,
// before the job's slices pass the idle timeout (when they already had,
// the two slices are asked for by hand first). Ray's v1 autoscaler
// reads the RayCluster each pass; it keeps min_workers hosts of the node
// type (1 × 2) when it removes the idle ones, and its KubeRay provider
// writes the hosts it keeps as the group's replicas: the group stays at
// two slices (KubeRay deletes the removed hosts' replicas and starts new
// ones) instead of going to its one-slice minimum. The simulator's
// IdleSlices and its NoSingleSliceScaleDown finding say so for the same
// spec and plan, and the test holds the cluster to them. Last, the
// minimum goes back to 0 and the group to zero (see below).
func minSlicesKeepHosts(t *testing.T, env *kubetest.Env, ns, cluster, group string, hosts int, idle time.Duration, plan *placement.Plan, fullLog func() string) {
	t.Helper()
	patchCluster(t, env, ns, cluster, fmt.Appendf(nil, `[{"op":"test","path":"/spec/workerGroupSpecs/0/groupName","value":%q},{"op":"replace","path":"/spec/workerGroupSpecs/0/minReplicas","value":1}]`, group))
	idleFrom := time.Now()
	slices := 0 // the slices the two-slice plan holds
	for _, g := range plan.Slices {
		slices += g.NumSlices
	}
	now := groupReplicas(t, env, ns, cluster, group)
	if now < slices {
		// On a loaded machine the job's slices can pass the idle timeout
		// between the job's end and Fit's return, and the autoscaler takes
		// them away before the minimum is raised. The phase is about idle
		// hosts at two slices, so it asks for the two slices by hand, as a
		// platform team would, and starts once their pods are Ready.
		t.Logf("min 1: the group was at %d replicas when the minimum was raised (the job's slices had idled out); asking for %d by hand", now, slices)
		watch, stop := watchGroup(t, env, ns, cluster, group, slices*hosts)
		patchCluster(t, env, ns, cluster, fmt.Appendf(nil, `[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":%d},{"op":"add","path":"/spec/workerGroupSpecs/0/scaleStrategy","value":{"workersToDelete":[]}}]`, slices))
		waitFor(t, 5*time.Minute, "the group's pods Ready at two slices", func() (bool, string) {
			watch.mu.Lock()
			defer watch.mu.Unlock()
			return !watch.readyAt.IsZero(), fmt.Sprintf("replicas %d, pods %d, Ready %d", watch.replicas, watch.pods, watch.ready)
		})
		stop()
		idleFrom = time.Now()
		now = groupReplicas(t, env, ns, cluster, group)
	}
	logFrom := len(fullLog())
	spec := sim.Spec{Items: []sim.Item{{PodType: "v4-16", Topology: "2x2x2", Count: now, MinSlices: 1, MaxSlices: 2}}}
	pred, err := sim.PredictAutoscaling(spec, plan, sim.AutoscalerV1)
	if err != nil {
		t.Fatalf("predicting the group at min 1: %v", err)
	}
	if err := pred.Err(); err != nil || len(pred.Groups) != 1 {
		t.Fatalf("prediction %+v: %v", pred, err)
	}
	g := pred.Groups[0]
	var finding string
	for _, f := range pred.Findings {
		if f.Code == sim.CodeNoSliceScaleDown {
			finding = f.Message
		}
	}
	t.Logf("min 1: predicted for the two-slice plan at %d slices: %s; idle, the group goes to %d: %s", now, g, g.IdleSlices(), finding)
	if !strings.Contains(finding, fmt.Sprintf("does not go below %d slices", g.IdleSlices())) {
		t.Errorf("the prediction's findings %+v do not say the group stays at %d slices", pred.Findings, g.IdleSlices())
	}

	watch, stopWatch := watchGroup(t, env, ns, cluster, group, g.IdleSlices()*hosts)
	defer stopWatch()
	var timeline []string
	lowest, lastR, lastP := int32(1<<30), int32(-1), -1
	sample := func() {
		watch.mu.Lock()
		r, p, seen := watch.replicas, watch.pods, watch.live != nil
		watch.mu.Unlock()
		if !seen {
			return
		}
		lowest = min(lowest, r)
		if r != lastR || p != lastP {
			timeline = append(timeline, fmt.Sprintf("%v %d replicas %d pods", time.Since(idleFrom).Round(time.Second), r, p))
			lastR, lastP = r, p
		}
	}
	removed := func() bool {
		l := fullLog()
		return len(l) > logFrom && strings.Contains(l[logFrom:], "(idle)")
	}
	waitFor(t, idle+3*time.Minute, "the autoscaler removing the group's idle hosts", func() (bool, string) {
		sample()
		return removed(), strings.Join(timeline, ", ")
	})
	removedAt := time.Since(idleFrom)
	// Two autoscaler passes (5 s each) and KubeRay's reconcile after the
	// removal; the replicas then stay where they are.
	for settle := time.Now(); time.Since(settle) < 15*time.Second; time.Sleep(250 * time.Millisecond) {
		sample()
	}
	stopWatch()
	after := groupReplicas(t, env, ns, cluster, group)
	t.Logf("min 1: the autoscaler removed idle hosts %v after the group went idle; the group over time: %s; then it asks for %d replicas",
		removedAt.Round(time.Millisecond), strings.Join(timeline, ", "), after)
	l := fullLog()
	for line := range strings.Lines(l[min(logFrom, len(l)):]) {
		if strings.Contains(line, "Terminating the node") || strings.Contains(line, "node_provider.py") && strings.Contains(line, "'op'") {
			t.Log("autoscaler: " + strings.TrimSpace(line))
		}
	}
	if after != g.IdleSlices() || int(lowest) < g.IdleSlices() {
		t.Errorf("with minReplicas 1 the idle group asks for %d replicas (lowest seen %d); the simulator predicted %d", after, lowest, g.IdleSlices())
	}

	// The new slices KubeRay started in place of the removed hosts start
	// at different times, so they idle out in different autoscaler
	// passes, and each removal of one slice's hosts brings a new slice
	// (NoSingleSliceScaleDown): with the minimum back at 0 the group
	// would still not go to zero. The test takes it there by hand, as a
	// platform team would (minReplicas and replicas 0, no workers to
	// delete), writing the replicas again if an autoscaler pass that had
	// listed the old pods wrote its own.
	reset := []byte(`[{"op":"replace","path":"/spec/workerGroupSpecs/0/minReplicas","value":0},{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":0},{"op":"add","path":"/spec/workerGroupSpecs/0/scaleStrategy","value":{"workersToDelete":[]}}]`)
	patchCluster(t, env, ns, cluster, reset)
	waitFor(t, 2*time.Minute, "the group at zero replicas and pods by hand", func() (bool, string) {
		r := groupReplicas(t, env, ns, cluster, group)
		if r != 0 {
			patchCluster(t, env, ns, cluster, reset)
		}
		p := groupPods(t, env, ns, cluster, group)
		return r == 0 && p == 0, fmt.Sprintf("replicas %d, pods %d", r, p)
	})
}

// patchCluster applies a JSON patch to RayCluster cluster.
func patchCluster(t *testing.T, env *kubetest.Env, ns, cluster string, patch []byte) {
	t.Helper()
	rc := &rayv1.RayCluster{}
	rc.Name, rc.Namespace = cluster, ns
	if err := env.Client.Patch(t.Context(), rc, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		t.Fatalf("patching RayCluster %s with %s: %v", cluster, patch, err)
	}
}
