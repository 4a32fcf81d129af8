package kuberay_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// preemptSliceWhenPaused waits until the four workers of an attempt have
// paused at step pauseAt (testdata/trainloop's paused-<rank> holding that
// step) and Ray Train has registered the checkpoint of that step in
// runDir, then preempts the slice rank 2 runs on (every pod of it, as GKE
// reclaims a spot node pool: see preemptSlice) and sends what happened on
// the channel once KubeRay's replacements run (closed without a
// value if the run never paused there).
func preemptSliceWhenPaused(t *testing.T, env *kubetest.Env, ns, reports, runDir string, pauseAt int, began time.Time) <-chan *preemptedSlice {
	t.Helper()
	out := make(chan *preemptedSlice, 1)
	ctx := t.Context()
	go func() {
		defer close(out)
		paused := func() bool {
			for rank := 0; rank < 4; rank++ {
				b, err := readGS(env, reports+"/paused-"+strconv.Itoa(rank))
				if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(pauseAt) {
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
		// Ranks 2 and 3 are the second slice (MEGASCALE_SLICE_ID 1).
		var ranks []rankReport
		for _, rank := range []int{2, 3} {
			r, err := readRank(env, fmt.Sprintf("%s/rank-%d.json", reports, rank))
			if err != nil {
				t.Errorf("rank %d's report: %v", rank, err)
				return
			}
			ranks = append(ranks, r)
		}
		labels, err := sliceOf(t, env, ns, ranks[0].Hostname)
		if err != nil {
			t.Errorf("rank 2's slice: %v", err)
			return
		}
		ps, err := preemptSlice(t, env, ns, labels, began)
		if err != nil {
			t.Errorf("preempting slice %v: %v", labels, err)
			return
		}
		logClusterEvents(t, env, ns, labels[labelRayCluster], ps.Signalled, began)
		ps.Name = ranks[0].Labels["ray.io/tpu-slice-name"]
		ps.NodeIDs = map[string]string{}
		for _, r := range ranks {
			ps.NodeIDs[r.Labels["ray.io/tpu-worker-id"]] = r.NodeID
			if !slices.Contains(ps.Pods, r.Hostname) {
				t.Errorf("rank %d's pod %s is not among the preempted %v", r.Rank, r.Hostname, ps.Pods)
			}
		}
		out <- ps
	}()
	return out
}

// checkSliceRecovery checks what the result says of the preempted slice:
// it names the slice and its two hosts (the Ray nodes the pods were), the
// group started again after the replacements were up and resumed from
// the checkpoint of the step the workers paused at, and the ranks of the
// last attempt that ran on the slice ran on KubeRay's replacement pods
// (their MEGASCALE_* are checked by checkRanks).
func checkSliceRecovery(t *testing.T, env *kubetest.Env, res *train.Result, ps *preemptedSlice, reports string, pauseAt int) {
	t.Helper()
	if ps == nil {
		t.Fatal("no slice was preempted: the run never paused a second time")
	}
	t.Logf("recovery: %s", res.Recovery())
	if len(res.Attempts) < 3 {
		t.Fatalf("%d attempts, want a fresh one, one after the pod loss and one after the slice's preemption: %+v", len(res.Attempts), res.Attempts)
	}
	if !slices.Equal(res.LostSlices, []string{ps.Name}) {
		t.Errorf("lost slices %v, want [%s]", res.LostSlices, ps.Name)
	}
	var hosts []string
	for _, h := range res.LostHosts {
		if h.Slice == ps.Name {
			hosts = append(hosts, h.TPUWorkerID)
			if ps.NodeIDs[h.TPUWorkerID] != h.NodeID {
				t.Errorf("lost host %s is Ray node %s, want %s (the preempted pod's)", h.Name(), h.NodeID, ps.NodeIDs[h.TPUWorkerID])
			}
		}
	}
	slices.Sort(hosts)
	if !slices.Equal(hosts, []string{"0", "1"}) {
		t.Errorf("lost hosts of slice %s: worker ids %v, want [0 1]; lost hosts %+v", ps.Name, hosts, res.LostHosts)
	}
	if rec := res.Recovery(); rec == nil || !strings.Contains(rec.String(), "lost slice "+ps.Name+" (hosts "+ps.Name+"-w0, "+ps.Name+"-w1)") {
		t.Errorf("recovery %q does not name the lost slice and its hosts", rec)
	}
	last := res.Attempts[len(res.Attempts)-1]
	if last.ResumedFrom == nil || last.ResumedFrom.Metrics["step"] != float64(pauseAt) {
		t.Errorf("the last attempt resumed from %+v, want the checkpoint of step %d", last.ResumedFrom, pauseAt)
	}
	if from, _ := res.Step("resumed_from"); from != pauseAt {
		t.Errorf("the loop's final resumed_from = %d, want %d", from, pauseAt)
	}
	if !slices.Contains(last.Slices, ps.Name) || len(last.Slices) != 2 {
		t.Errorf("the last attempt ran on slices %v, want two, %s among them (the slice back under its name)", last.Slices, ps.Name)
	}
	// The attempt that resumed started once the replacements ran (the
	// cluster's clock is this machine's).
	if at := res.FitStartedAt + last.At; at < float64(ps.Signalled.UnixNano())/1e9 {
		t.Errorf("the last attempt started %.1fs before the preemption", float64(ps.Signalled.UnixNano())/1e9-at)
	}
	// Every rank reported again after the preemption (checkRanks reads
	// these reports: MEGASCALE_* of the new attempt), and the two ranks
	// on the lost slice ran on KubeRay's replacement pods.
	onSlice := 0
	for rank := range 4 {
		r, err := readRank(env, fmt.Sprintf("%s/rank-%d.json", reports, rank))
		if err != nil {
			t.Fatal(err)
		}
		if written := time.Unix(0, int64(r.WrittenAt*1e9)); written.Before(ps.Signalled) {
			t.Errorf("rank %d's report was written at %v, before the preemption at %v", rank, written, ps.Signalled)
			continue
		}
		if r.Labels["ray.io/tpu-slice-name"] != ps.Name {
			continue
		}
		onSlice++
		if !slices.Contains(ps.Replacements, r.Hostname) {
			t.Errorf("rank %d ran on slice %s's pod %s, want one of KubeRay's replacements %v", rank, ps.Name, r.Hostname, ps.Replacements)
		}
	}
	if onSlice != 2 {
		t.Errorf("%d ranks of the last attempt ran on slice %s, want 2", onSlice, ps.Name)
	}
}

// logRayTimeline logs Ray Train's controller steps and the group's
// starts in seconds after the preemption's SIGTERM.
func logRayTimeline(t *testing.T, res *train.Result, ps *preemptedSlice) {
	if res == nil || ps == nil {
		return
	}
	offset := float64(ps.Signalled.UnixNano())/1e9 - res.FitStartedAt
	t.Logf("Ray Train, in seconds after the slice's SIGTERM (pods stopped at %+.1fs, deleted at %+.1fs, node pool back at %+.1fs, replacements running at %+.1fs):",
		ps.Stopped.Sub(ps.Signalled).Seconds(), ps.Deleted.Sub(ps.Signalled).Seconds(), ps.Back.Sub(ps.Signalled).Seconds(), ps.Running.Sub(ps.Signalled).Seconds())
	for _, e := range res.Timeline {
		errLine, _, _ := strings.Cut(e.Error, "\n")
		t.Logf("  %+7.1fs %s %s%s %s", e.At-offset, e.Kind, e.State, e.Decision, errLine)
	}
	for i, a := range res.Attempts {
		from := "fresh"
		if a.ResumedFrom != nil {
			from = fmt.Sprint("step ", a.ResumedFrom.Metrics["step"])
		}
		t.Logf("  %+7.1fs attempt %d on slices %v (%s)", a.At-offset, i, a.Slices, from)
	}
}

// checkSlicePrediction runs the simulator's slice-loss model on the
// cluster the RayJob had (two v4-16 slices, no spare) for plan and checks
// it against what the run showed: the group could not start again without
// the lost slice (the real group started again only after the slice was
// back), with no start timeout on a broken head, one intact slice left;
// the same hosts (worker ids) lost; and once the slice is back, the group
// lands on both slices, as the last attempt did.
func checkSlicePrediction(t *testing.T, plan *placement.Plan, res *train.Result, ps *preemptedSlice) {
	t.Helper()
	spec, err := sim.ParseSpec("2*v4-16")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.NewCluster(spec)
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.Place(t.Context(), plan)
	if err != nil || before.Diagnosis.HasErrors() {
		t.Fatalf("sim place: %v %v", err, before.Diagnosis)
	}
	// The simulator's slices are v4-16-<i>; KubeRay's <group>-<replica
	// index>: the same index names the same slice.
	idx := ps.Labels[labelReplicaIndex]
	loss, err := c.LoseSlice(t.Context(), plan, before, "v4-16-"+idx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("simulator: lost slice %s (hosts %v): recovered %v without it after %d start timeout(s); intact %v", loss.Slice, loss.Hosts, loss.Recovered, loss.StartTimeouts, loss.IntactSlices)
	if loss.Recovered || loss.StartTimeouts != 0 || loss.IntactSlices["v4-16"] != 1 {
		t.Errorf("prediction: recovered %v, start timeouts %d, intact %v; want no recovery without the slice, 0, 1", loss.Recovered, loss.StartTimeouts, loss.IntactSlices)
	}
	// Observed: no attempt started between the preemption and the slice's
	// return (the prediction's "no room").
	back := float64(ps.Back.UnixNano())/1e9 - res.FitStartedAt
	signalled := float64(ps.Signalled.UnixNano())/1e9 - res.FitStartedAt
	for i, a := range res.Attempts {
		if a.At > signalled && a.At < back {
			t.Errorf("attempt %d started %.1fs after the preemption, before the slice was back: the simulator predicted no room", i, a.At-signalled)
		}
	}
	var lost []string
	for _, h := range res.LostHosts {
		if h.Slice == ps.Name {
			lost = append(lost, "v4-16-"+idx+"-w"+h.TPUWorkerID)
		}
	}
	if !slices.Equal(lost, loss.Hosts) {
		t.Errorf("lost hosts %v (as the simulator names them), predicted %v", lost, loss.Hosts)
	}
	if err := c.ReviveSlice(loss.Slice); err != nil {
		t.Fatal(err)
	}
	again, err := c.Place(t.Context(), plan)
	if err != nil || again.Diagnosis.HasErrors() {
		t.Fatalf("sim place after the slice is back: %v %v", err, again.Diagnosis)
	}
	var predicted []string
	for _, sp := range again.Slices {
		for _, b := range sp.Bundles {
			if b.SliceName != "" && !slices.Contains(predicted, b.SliceName) {
				predicted = append(predicted, b.SliceName)
			}
		}
	}
	last := res.Attempts[len(res.Attempts)-1]
	if len(predicted) != 2 || len(last.Slices) != 2 || !slices.Contains(predicted, loss.Slice) {
		t.Errorf("after the slice is back: predicted slices %v, observed %v; want both slices, the lost one among them", predicted, last.Slices)
	}
}
