package main

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/raytpu/raytpu/train"
)

// An elastic group, num_workers=(2, 4) on v4 2x2x2 slices, starts with
// what the cluster holds and grows when a slice comes back: one v4-16
// slice is broken (a host down) when the run starts, so Ray Train starts
// two workers on the intact slice; the host then comes back, and at the
// next resize check Ray Train restarts the group with four workers on both
// slices, from the latest checkpoint.
//
// The host lost is the broken slice's worker 0, which carries the slice's
// head resource (TPU-v4-16-head): Ray reserves a slice through that
// resource, so only the intact slice can be reserved. Had worker 1 been
// lost, the broken slice's head would still be free, and Ray Train may
// reserve it first and wait out its worker-group start timeout
// (RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S, 60 s) before it tries the
// other slice.
func TestElasticGroupGrowsWhenASliceReturns(t *testing.T) {
	const lost = "v4-16-1-w0"
	loss, err := cluster.LoseHost(t.Context(), lost)
	if err != nil {
		t.Fatal(err)
	}
	revived := false
	revive := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if _, err := cluster.ReviveHost(ctx, lost); err != nil {
			t.Errorf("revive %s: %v", lost, err)
		}
		revived = true
	}
	t.Cleanup(func() {
		if !revived {
			revive()
		}
	})
	t.Logf("%s down (Ray saw it DEAD after %.1fs): one intact v4-16 slice", lost, loss.DeadAfter.Seconds())

	cfg := testConfig(t, "elastic")
	cfg.Steps = 14
	cfg.PauseAt = []int{12} // the first group waits here until the resize replaces it
	cfg.NumSlices = 0
	cfg.Adjust = func(tr *train.JaxTrainer) {
		tr.ScalingConfig.MinWorkers, tr.ScalingConfig.MaxWorkers = 2, 4
		tr.ScalingConfig.ElasticResizeMonitorInterval = 5 * time.Second
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for t.Context().Err() == nil {
			if _, err := os.Stat(pausedPIDFile(cfg.ReportDir, 12)); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if t.Context().Err() == nil {
			revive()
			t.Logf("%s is back", lost)
		}
	}()
	t.Cleanup(func() { <-done })
	res, err := runLogged(t, t.Context(), cfg)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, e := range res.Timeline {
		t.Logf("  %6.1fs %s %s%s %d", e.At, e.Kind, e.State, e.Decision, e.NumWorkers)
	}
	for i, a := range res.Attempts {
		t.Logf("  attempt %d at %.1fs: %d workers on %v (from %v)", i, a.At, len(a.Workers), a.Slices, a.ResumedFrom)
	}
	if len(res.Attempts) < 2 {
		t.Fatalf("attempts %+v: want a start with 2 workers and a resize to 4", res.Attempts)
	}
	first, last := res.Attempts[0], res.Attempts[len(res.Attempts)-1]
	if len(first.Workers) != 2 || len(first.Slices) != 1 || first.Slices[0] != "v4-16-0" {
		t.Errorf("first group: %d workers on %v, want 2 on the intact slice v4-16-0", len(first.Workers), first.Slices)
	}
	sorted := slices.Sorted(slices.Values(last.Slices))
	if len(last.Workers) != 4 || !slices.Equal(sorted, []string{"v4-16-0", "v4-16-1"}) {
		t.Errorf("last group: %d workers on %v, want 4 on both v4-16 slices", len(last.Workers), last.Slices)
	}
	if last.ResumedFrom == nil || last.ResumedFrom.Metrics["step"] != float64(10) {
		t.Errorf("the grown group resumed from %+v, want the checkpoint of step 10", last.ResumedFrom)
	}
	if !slices.ContainsFunc(res.Timeline, func(e train.Event) bool { return e.Kind == "resize_decision" && e.NumWorkers == 4 }) {
		t.Error("no resize decision to 4 workers in the timeline")
	}
	if step, _ := res.Step("step"); step != cfg.Steps {
		t.Errorf("final step = %d, want %d", step, cfg.Steps)
	}
}
