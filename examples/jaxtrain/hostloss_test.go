package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/traintest"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// Host loss on the shared cluster (two v4-16 slices of two hosts, and a
// v4-8): mid-run, a whole posing host (its raylet and every process on it)
// is killed, as when a TPU VM is preempted or goes into maintenance. The
// tests log Ray's timeline with timings; the host comes back in cleanup so
// later tests find both slices whole.

// loseHostWhenPaused waits, like killPausedWorker, until rank 1 has
// paused at step pauseAt after Ray Train registered the checkpoint of step
// afterStep, then takes down host TPU worker id pick of the slice rank 1
// runs on in its latest attempt. The channel gets the loss (or closes empty
// if the test ends first).
func loseHostWhenPaused(t *testing.T, reportDir, runDir string, pauseAt, afterStep, pick int) <-chan raycluster.HostLoss {
	out := make(chan raycluster.HostLoss, 1)
	var lost string
	done := make(chan struct{})
	t.Cleanup(func() {
		<-done
		if lost == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if _, err := cluster.ReviveHost(ctx, lost); err != nil {
			t.Errorf("revive %s: %v", lost, err)
		}
	})
	go func() {
		defer close(done)
		defer close(out)
		ctx := t.Context()
		for ctx.Err() == nil {
			if _, err := os.Stat(pausedPIDFile(reportDir, pauseAt)); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		for ctx.Err() == nil {
			if step, ok := traintest.RegisteredCheckpointStep(runDir); ok && step >= afterStep {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if ctx.Err() != nil {
			return
		}
		// Each attempt resumes from a later checkpoint: rank 1's report
		// with the latest resumed_from is the running attempt's.
		var slice string
		latest := -1
		for _, r := range readReports(t, reportDir) {
			if r.Rank == 1 && r.ResumedFrom > latest {
				slice, latest = r.Labels["ray.io/tpu-slice-name"], r.ResumedFrom
			}
		}
		name := fmt.Sprintf("%s-w%d", slice, pick)
		loss, err := cluster.LoseHost(ctx, name)
		if err != nil {
			t.Errorf("lose host %s: %v", name, err)
			return
		}
		lost = name
		t.Logf("lost host %s (node %s); Ray reported it DEAD %.1fs after the kill", name, loss.NodeID, loss.DeadAfter.Seconds())
		out <- loss
	}()
	return out
}

// logTimeline logs the controller's steps, in seconds after the host was
// killed (the cluster runs on this machine: one clock).
func logTimeline(t *testing.T, res *train.Result, loss raycluster.HostLoss) {
	if res == nil {
		return
	}
	offset := float64(loss.Killed.UnixNano())/1e9 - res.FitStartedAt
	for _, e := range res.Timeline {
		t.Logf("  %+7.1fs after the kill: %s %s%s%s %s", e.At-offset, e.Kind, e.State, e.Decision, map[bool]string{true: fmt.Sprint(" ", e.NumWorkers)}[e.NumWorkers > 0], firstLine(e.Error))
	}
	for i, a := range res.Attempts {
		from := "fresh"
		if a.ResumedFrom != nil {
			from = fmt.Sprint("step ", a.ResumedFrom.Metrics["step"])
		}
		t.Logf("  attempt %d at %+7.1fs after the kill on slices %v (%s)", i, a.At-offset, a.Slices, from)
	}
}

// simulateHostLoss runs the simulator's host-loss model on the test
// cluster's spec for the trainer of cfg: it places the plan, loses host
// TPU worker id pick of the slice the group landed on first, and returns
// the outcome with the name of the broken slice.
func simulateHostLoss(t *testing.T, cfg config, pick int) *sim.HostLoss {
	t.Helper()
	plan, err := trainer(cfg, "").Compile()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := sim.ParseSpec(clusterSpec)
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
	host := fmt.Sprintf("%s-w%d", before.Slices[0].Bundles[0].SliceName, pick)
	loss, err := c.LoseHost(t.Context(), plan, before, host)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("simulator: lost %s; recovered %v after %d start timeout(s); intact %v", host, loss.Recovered, loss.StartTimeouts, loss.IntactSlices)
	return loss
}

// movedTo lists the slices of the simulator's placement after a loss.
func movedTo(loss *sim.HostLoss) []string {
	var out []string
	for _, sp := range loss.After.Slices {
		for _, b := range sp.Bundles {
			if b.SliceName != "" && !slices.Contains(out, b.SliceName) {
				out = append(out, b.SliceName)
			}
		}
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// One run, two faults, as a long job meets them: first a worker process
// dies (rank 1 killed at step 7, after the checkpoint of step 5), and Ray
// Train restarts the group and resumes from step 5; then a whole host of
// the slice the group now runs on is lost (at step 12, after the checkpoint
// of step 10), and with a spare slice the group restarts on the intact
// v4-16 slice and resumes from step 10. The result says so, and the
// simulator's host-loss model agrees.
func TestTrainResumesAfterWorkerDiesThenSurvivesHostLoss(t *testing.T) {
	cfg := testConfig(t, "resume-host-loss")
	cfg.Steps = 14
	cfg.PauseAt = []int{7, 12}
	cfg.MaxFailures = 2
	runDir := filepath.Join(cfg.Storage, cfg.Name)
	killPausedWorker(t, cfg.ReportDir, runDir, 7, 5)
	// The host that is not the slice's head: the broken slice keeps a free
	// head for Ray's next head reservation.
	lossc := loseHostWhenPaused(t, cfg.ReportDir, runDir, 12, 10, 1)
	start := time.Now()
	res, err := runLogged(t, t.Context(), cfg)
	end := time.Now()
	loss, ok := <-lossc
	if !ok {
		t.Fatalf("no host was lost; run: %v", err)
	}
	t.Logf("run took %.1fs; it ended %.1fs after the host loss", end.Sub(start).Seconds(), end.Sub(loss.Killed).Seconds())
	logTimeline(t, res, loss)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Logf("recovery: %s", res.Recovery())
	if step, _ := res.Step("step"); step != cfg.Steps {
		t.Errorf("final step = %d, want %d", step, cfg.Steps)
	}
	if from, _ := res.Step("resumed_from"); from != 10 {
		t.Errorf("the loop's final resumed_from = %d, want 10 (the latest checkpoint before the host loss)", from)
	}

	// The worker's death: both workers restarted from step 5, on one slice
	// (either v4-16 slice).
	restarted := map[int]int{}
	slicesAfter := map[int]map[string]bool{5: {}, 10: {}}
	for _, r := range readReports(t, cfg.ReportDir) {
		if r.ResumedFrom == 5 || r.ResumedFrom == 10 {
			restarted[r.ResumedFrom]++
			slicesAfter[r.ResumedFrom][r.Labels["ray.io/tpu-slice-name"]] = true
		}
	}
	for _, from := range []int{5, 10} {
		if restarted[from] != 2 || len(slicesAfter[from]) != 1 {
			t.Errorf("%d workers restarted from step %d on slices %v, want 2 on one slice", restarted[from], from, slicesAfter[from])
		}
	}
	if len(res.Attempts) != 3 {
		t.Fatalf("attempts %+v: want 3 (fresh, after the worker's death, after the host loss)", res.Attempts)
	}
	if rf := res.Attempts[1].ResumedFrom; rf == nil || rf.Metrics["step"] != float64(5) {
		t.Errorf("the second attempt resumed from %+v, want the checkpoint of step 5", rf)
	}

	// The host loss.
	if len(res.LostHosts) != 1 || res.LostHosts[0].NodeID != loss.NodeID || res.LostHosts[0].Name() != loss.Name {
		t.Errorf("lost hosts = %+v, want %s (node %s)", res.LostHosts, loss.Name, loss.NodeID)
	}
	rec := res.Recovery()
	broken := res.LostHosts[0].Slice
	if rec.Restarts != 2 {
		t.Errorf("recovery counts %d restarts, want 2", rec.Restarts)
	}
	if !slices.Equal(rec.FromSlices, []string{broken}) {
		t.Errorf("group ran on %v before the loss, want [%s]", rec.FromSlices, broken)
	}
	if len(rec.ToSlices) != 1 || rec.ToSlices[0] == broken || !strings.HasPrefix(rec.ToSlices[0], "v4-16-") {
		t.Errorf("group moved to %v, want the one intact v4-16 slice other than %s", rec.ToSlices, broken)
	}
	last := res.Attempts[len(res.Attempts)-1]
	for _, w := range last.Workers {
		if w.NodeID == loss.NodeID || w.Slice != rec.ToSlices[0] {
			t.Errorf("restarted worker %+v: want it on slice %v, not on the lost host", w, rec.ToSlices)
		}
	}
	if rec.ResumedFrom == nil || rec.ResumedFrom.Metrics["step"] != float64(10) || rec.ResumedFrom.Path == "" {
		t.Errorf("resumed from %+v, want the checkpoint of step 10", rec.ResumedFrom)
	}

	// The simulator's model agrees: the group recovers on the one intact
	// slice other than the broken one.
	simLoss := simulateHostLoss(t, cfg, 1)
	to := movedTo(simLoss)
	if !simLoss.Recovered || len(to) != 1 || to[0] == simLoss.Slice || simLoss.IntactSlices["v4-16"] != 1 {
		t.Errorf("simulator: recovered %v on %v (broken %s), intact %v; Ray recovered on the other intact slice", simLoss.Recovered, to, simLoss.Slice, simLoss.IntactSlices)
	}
}

// The example's two-slice run, and what a host loss does to it without a
// spare slice. Before the loss, the group trains on both v4 2x2x2 slices:
// four workers, two per slice, with the MEGASCALE_* environment of a
// two-slice run (checkTwoSliceWorkers). After it, the group cannot start
// again: Ray Train waits for a second intact slice, each start timing out
// (a controller failure) until ControllerFailureLimit runs out. (With Ray's
// default limit, -1, it would wait forever.) The limit here is 0: the
// first start that times out ends the run, as every later one would.
// raytpu's error says which host was lost, what the group needs and what
// to do. (A two-slice run that trains to the end is the elastic test's
// grown group here, and the autoscaler test's second job in kuberay.)
func TestHostLossWithoutSpareSliceFails(t *testing.T) {
	cfg := testConfig(t, "host-loss-no-spare")
	cfg.NumSlices = 2
	cfg.Steps = 14
	cfg.PauseAt = []int{12}
	cfg.MaxFailures = 1
	cfg.Adjust = func(tr *train.JaxTrainer) {
		tr.RunConfig.Failure.ControllerFailureLimit = new(0)
		tr.RunConfig.WorkerGroupStartTimeout = 15 * time.Second
	}
	lossc := loseHostWhenPaused(t, cfg.ReportDir, filepath.Join(cfg.Storage, cfg.Name), 12, 10, 1)
	start := time.Now()
	res, err := runLogged(t, t.Context(), cfg)
	end := time.Now()
	loss, ok := <-lossc
	if !ok {
		t.Fatalf("no host was lost; run: %v", err)
	}
	t.Logf("run took %.1fs; it ended %.1fs after the kill; err: %v", end.Sub(start).Seconds(), end.Sub(loss.Killed).Seconds(), err)
	logTimeline(t, res, loss)
	if res == nil {
		t.Fatalf("no result; err %v", err)
	}
	var hl *train.HostLossError
	if !errors.As(err, &hl) || !errors.Is(err, train.ErrHostLost) || !errors.Is(err, train.ErrTrainingFailed) {
		t.Fatalf("err = %v, want a *train.HostLossError", err)
	}
	if len(hl.LostHosts) != 1 || hl.LostHosts[0].Name() != loss.Name {
		t.Errorf("lost hosts %+v, want %s", hl.LostHosts, loss.Name)
	}
	if hl.NeedSlices != 2 || hl.IntactSlices != 1 || hl.PodType != "v4-16" {
		t.Errorf("need %d intact %s slices, %d left; want 2 v4-16 and 1 left", hl.NeedSlices, hl.PodType, hl.IntactSlices)
	}
	if n := len(res.Attempts); n != 1 {
		t.Errorf("%d worker group starts, want only the first (no start succeeds after the loss)", n)
	}
	checkTwoSliceWorkers(t, cfg.ReportDir)

	// The simulator's model agrees: no recovery, one intact slice left.
	simLoss := simulateHostLoss(t, cfg, 1)
	if simLoss.Recovered || simLoss.IntactSlices["v4-16"] != hl.IntactSlices {
		t.Errorf("simulator: recovered %v, intact %v; Ray did not recover and counted %d intact", simLoss.Recovered, simLoss.IntactSlices, hl.IntactSlices)
	}
}
