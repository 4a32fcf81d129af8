package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
	"github.com/raytpu/raytpu/internal/testinfra/syncbuf"
	"github.com/raytpu/raytpu/internal/testinfra/traintest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/train"
)

// clusterSpec is the local test cluster, in the simulated cluster's
// format: two v4 2x2x2 slices of two hosts each and one single-host v4 slice.
const clusterSpec = "2*v4-16,v4-8"

var (
	dashboard string
	cluster   *raycluster.Cluster // the shared cluster, for tests that take a host down
)

func TestMain(m *testing.M) {
	os.Exit(raytest.Main(m, clusterSpec, func(c *raycluster.Cluster) { dashboard, cluster = c.DashboardURL, c }))
}

type workerReport struct {
	Rank        int               `json:"rank"`
	WorldSize   int               `json:"world_size"`
	NodeID      string            `json:"node_id"`
	Labels      map[string]string `json:"labels"`
	Env         map[string]string `json:"env"`
	ResumedFrom int               `json:"resumed_from"`
}

func readReports(t *testing.T, dir string) []workerReport {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "worker-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []workerReport
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r workerReport
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b workerReport) int { return a.Rank - b.Rank })
	return out
}

func testConfig(t *testing.T, name string) config {
	cfg := defaults()
	cfg.Backend = "ray"
	cfg.Address = dashboard
	cfg.Name = name
	cfg.Storage = t.TempDir()
	cfg.ReportDir = t.TempDir()
	cfg.Steps = 10
	return cfg
}

// runLogged runs cfg and logs the job's status changes, and its driver log
// when the test fails.
func runLogged(t *testing.T, ctx context.Context, cfg config) (*train.Result, error) {
	var out bytes.Buffer
	cfg.Logs = &syncbuf.Buffer{}
	res, err := run(ctx, cfg, &out)
	t.Logf("run %s:\n%s", cfg.Name, out.String())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("driver log of %s:\n%s", cfg.Name, cfg.Logs.(*syncbuf.Buffer).String())
		}
	})
	return res, err
}

// checkOneSliceRun checks a finished single-slice run of cfg on a v4 2x2x2
// slice: the final step and its checkpoints (NumToKeep of them kept, on
// storage and in the result), and one worker on each of the slice's two
// hosts, both on one slice of pod type v4-16 and without MEGASCALE_*.
func checkOneSliceRun(t *testing.T, cfg config, res *train.Result) {
	t.Helper()
	if step, ok := res.Step("step"); !ok || step != cfg.Steps {
		t.Errorf("final step = %d (%v), want %d", step, ok, cfg.Steps)
	}
	if res.Checkpoint == "" {
		t.Error("no checkpoint in the result")
	}
	// NumToKeep = 2: checkpoints at steps 5, 10 and 12 leave two.
	kept, _ := filepath.Glob(filepath.Join(cfg.Storage, cfg.Name, "checkpoint_*", "state.json"))
	if len(kept) != cfg.NumToKeep {
		t.Errorf("%d checkpoints kept on storage (%v), want NumToKeep = %d", len(kept), kept, cfg.NumToKeep)
	}
	if len(res.BestCheckpoints) != cfg.NumToKeep {
		t.Errorf("result lists %d checkpoints, want %d", len(res.BestCheckpoints), cfg.NumToKeep)
	}
	reports := readReports(t, cfg.ReportDir)
	if len(reports) != 2 {
		t.Fatalf("%d worker reports, want one per host of the v4 2x2x2 slice (2)", len(reports))
	}
	nodes := map[string]bool{}
	workerIDs := map[string]bool{}
	for _, r := range reports {
		nodes[r.NodeID] = true
		workerIDs[r.Labels["ray.io/tpu-worker-id"]] = true
		if got := r.Labels["ray.io/tpu-slice-name"]; got != reports[0].Labels["ray.io/tpu-slice-name"] || got == "" {
			t.Errorf("rank %d on slice %q, rank 0 on %q: workers must share one slice", r.Rank, got, reports[0].Labels["ray.io/tpu-slice-name"])
		}
		if got := r.Labels["ray.io/tpu-pod-type"]; got != "v4-16" {
			t.Errorf("rank %d on pod type %q, want v4-16", r.Rank, got)
		}
		if _, ok := r.Env["MEGASCALE_NUM_SLICES"]; ok {
			t.Errorf("rank %d has MEGASCALE_NUM_SLICES on a single-slice run", r.Rank)
		}
	}
	if len(nodes) != 2 || !workerIDs["0"] || !workerIDs["1"] {
		t.Errorf("workers on nodes %v with worker ids %v, want one worker on each of the slice's 2 hosts", nodes, workerIDs)
	}
}

// checkTwoSliceWorkers checks the worker reports of one attempt of a
// two-slice run on the two v4 2x2x2 slices: four ranks, two on each
// slice, every rank with MEGASCALE_NUM_SLICES 2, its slice's
// MEGASCALE_SLICE_ID (rank / 2, as Ray Train orders TPU workers),
// Ray's default MEGASCALE_PORT and a coordinator address.
func checkTwoSliceWorkers(t *testing.T, reportDir string) {
	t.Helper()
	reports := readReports(t, reportDir)
	if len(reports) != 4 {
		t.Fatalf("%d worker reports, want 4 (2 slices × 2 hosts)", len(reports))
	}
	sliceOf := map[string]string{} // slice name -> MEGASCALE_SLICE_ID
	perSlice := map[string]int{}
	for _, r := range reports {
		name := r.Labels["ray.io/tpu-slice-name"]
		perSlice[name]++
		if got := r.Env["MEGASCALE_NUM_SLICES"]; got != "2" {
			t.Errorf("rank %d: MEGASCALE_NUM_SLICES = %q, want 2", r.Rank, got)
		}
		id := r.Env["MEGASCALE_SLICE_ID"]
		if prev, ok := sliceOf[name]; ok && prev != id {
			t.Errorf("slice %s has workers with MEGASCALE_SLICE_ID %s and %s", name, prev, id)
		}
		sliceOf[name] = id
		if want := strconv.Itoa(r.Rank / 2); id != want {
			t.Errorf("rank %d: MEGASCALE_SLICE_ID = %q, want %s", r.Rank, id, want)
		}
		if got := r.Env["MEGASCALE_PORT"]; got != "8081" {
			t.Errorf("rank %d: MEGASCALE_PORT = %q, want Ray's default 8081", r.Rank, got)
		}
		if r.Env["MEGASCALE_COORDINATOR_ADDRESS"] == "" {
			t.Errorf("rank %d: no MEGASCALE_COORDINATOR_ADDRESS", r.Rank)
		}
	}
	if len(perSlice) != 2 {
		t.Errorf("workers on slices %v, want two different slices", perSlice)
	}
	for name, n := range perSlice {
		if n != 2 {
			t.Errorf("slice %s holds %d workers, want 2", name, n)
		}
	}
}

// pausedPIDFile is where rank 1 of the train loop publishes its pid when it
// pauses at step (once per step, in whichever attempt reaches it first).
func pausedPIDFile(reportDir string, step int) string {
	return filepath.Join(reportDir, fmt.Sprintf("paused-rank-1-step-%d.pid", step))
}

// killPausedWorker waits for rank 1 to publish its pid at pause step
// pauseAt and kills that worker process. With afterStep > 0 it first waits
// until Ray Train's controller has registered the checkpoint of that step
// in runDir/checkpoint_manager_snapshot.json: a worker's report reaches the
// controller asynchronously, so a kill right after the report could
// otherwise lose the checkpoint and the test would not know which one the
// run must resume from.
//
// It runs in its own goroutine until the test's context ends; the test's
// cleanup waits for it, so it never logs after the test has completed.
func killPausedWorker(t *testing.T, reportDir, runDir string, pauseAt, afterStep int) {
	done := make(chan struct{})
	t.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		killWhenPaused(t.Context(), t, pausedPIDFile(reportDir, pauseAt), runDir, afterStep)
	}()
}

func killWhenPaused(ctx context.Context, t *testing.T, path, runDir string, afterStep int) {
	var pid int
	for ctx.Err() == nil {
		b, err := os.ReadFile(path)
		if err == nil && len(b) > 0 {
			pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Errorf("pid file: %v", err)
				return
			}
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for afterStep > 0 && ctx.Err() == nil {
		if step, ok := traintest.RegisteredCheckpointStep(runDir); ok && step >= afterStep {
			t.Logf("Ray Train registered the checkpoint of step %d", step)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if ctx.Err() != nil {
		return
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Errorf("kill worker %d: %v", pid, err)
		return
	}
	t.Logf("killed rank 1 worker process %d", pid)
}

func TestInvalidSpecNeverReachesCluster(t *testing.T) {
	client, err := ray.NewClient(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	before, err := client.ListJobs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, "invalid")
	cfg.Topology = "2x2x3"
	cfg.NumSlices = -1
	_, err = run(t.Context(), cfg, &bytes.Buffer{})
	got := map[string]field.Type{}
	for _, e := range field.Errors(err) {
		got[e.Field] = e.Type
	}
	want := map[string]field.Type{"trainer.scaling_config.topology": field.TypeNotSupported, "trainer.scaling_config.num_slices": field.TypeInvalid}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("error on %s = %q, want %q (all: %v)", k, got[k], v, err)
		}
	}
	after, err := client.ListJobs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("jobs on the cluster went from %d to %d; an invalid spec must not be submitted", len(before), len(after))
	}
}

// The same program on the simulated backend: the trainer is placed on the
// simulated twin of the test cluster, one worker per host of two intact
// slices, and the result says that nothing trained. A third slice does
// not exist, so asking for one is a placement error naming the head
// reservation that fails.
func TestSameTrainerOnTheSimulator(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.Cluster = clusterSpec
	cfg.NumSlices = 2
	var out bytes.Buffer
	res, err := run(t.Context(), cfg, &out)
	if err != nil {
		t.Fatalf("run on sim: %v\n%s", err, out.String())
	}
	if !res.Simulated || res.Backend != "sim" || res.Checkpoint != "" || len(res.Metrics) != 0 {
		t.Errorf("result = %+v, want a simulated result with no metrics or checkpoint", res)
	}
	if !strings.HasPrefix(res.String(), "simulated: no training ran") {
		t.Errorf("String() = %q, want it to say that no training ran", res.String())
	}
	perSlice := map[string][]int{}
	nodes := map[string]bool{}
	for _, w := range res.Workers {
		if w.State != "CREATED" || w.Part.Name != cfg.Name {
			t.Errorf("worker %+v: want CREATED in the worker group of run %q", w, cfg.Name)
		}
		perSlice[w.SliceName] = append(perSlice[w.SliceName], w.Bundle)
		nodes[w.Node] = true
	}
	if len(res.Workers) != 4 || len(nodes) != 4 || len(perSlice) != 2 {
		t.Errorf("workers %+v: want 4 workers on 4 hosts of 2 slices", res.Workers)
	}
	for name, ranks := range perSlice {
		if len(ranks) != 2 || ranks[1] != ranks[0]+1 || ranks[0]%2 != 0 {
			t.Errorf("slice %s holds ranks %v, want two consecutive ranks starting even (rank/2 = slice)", name, ranks)
		}
	}

	cfg.NumSlices = 3
	res, err = run(t.Context(), cfg, &out)
	var pe *backend.PlacementError
	if !errors.As(err, &pe) || !errors.Is(err, backend.ErrPlacement) {
		t.Fatalf("3 slices on %s: err = %v, want a *backend.PlacementError", clusterSpec, err)
	}
	if res == nil || !res.Simulated || !slices.Contains(res.Diagnosis.Codes(), placement.CodeHeadReservationFailed) {
		t.Errorf("result = %+v, want a simulated result whose diagnosis has %s", res, placement.CodeHeadReservationFailed)
	}
}
