package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
	"github.com/raytpu/raytpu/internal/testinfra/syncbuf"
)

// clusterSpec is the local test cluster: the head and the two hosts of one
// v4 2x2x2 slice, each posing with 4 TPU chips.
const clusterSpec = "v4-16"

var dashboard string

func TestMain(m *testing.M) {
	os.Exit(raytest.Main(m, clusterSpec, func(c *raycluster.Cluster) { dashboard = c.DashboardURL }))
}

func testConfig(t *testing.T, name string) config {
	cfg := defaults()
	cfg.Backend = "ray"
	cfg.Address = dashboard
	cfg.Name = name
	cfg.Dir = t.TempDir()
	return cfg
}

// runLogged runs cfg and logs the job's status changes, and its driver log
// when the test fails.
func runLogged(t *testing.T, cfg config) (*report, error) {
	t.Helper()
	var out bytes.Buffer
	logs := &syncbuf.Buffer{}
	cfg.Logs = logs
	rep, err := run(t.Context(), cfg, &out)
	t.Logf("run %s:\n%s", cfg.Name, out.String())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("driver log of %s:\n%s", cfg.Name, logs.String())
		}
	})
	return rep, err
}

// The example end to end: 10,000 rows in 4 Parquet files through 2 model
// actors of 4 TPU chips each (one per v4 host), written to Parquet with
// the model's prediction, every row once; and one actor's worker process
// killed mid-run: Ray restarts the actor and retries its calls (Ray Data's
// default max_restarts=-1 and max_task_retries=-1, which the launcher
// leaves as they are, as a hand-written pipeline does), and the output
// still holds every row exactly once. (A run without the kill proves
// nothing this one does not: the same pipeline, the same checks.)
func TestBatchInferenceSurvivesActorKill(t *testing.T) {
	cfg := testConfig(t, "batchinfer-kill")
	cfg.MarkerDir = t.TempDir()
	cfg.BatchSize = 100
	// 100 calls of 0.1s over 2 actors; the kill lands after an actor has
	// finished at least one block of 1,000 rows (10 calls), in its second.
	cfg.Delay = 100 * time.Millisecond
	killed := make(chan int, 1)
	done := make(chan struct{})
	t.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		killed <- killAfterCalls(t, cfg.MarkerDir, 15)
	}()
	rep, err := runLogged(t, cfg)
	if err != nil {
		t.Fatalf("run after killing an actor: %v; want every row written exactly once", err)
	}
	pid := <-killed
	if pid == 0 {
		t.Fatal("no actor was killed: the run ended before one had made 15 calls")
	}
	if rep.Written != cfg.Rows {
		t.Errorf("%d rows written, want %d", rep.Written, cfg.Rows)
	}
	pids, _ := filepath.Glob(filepath.Join(cfg.MarkerDir, "actor-*.pid"))
	if len(pids) <= cfg.Actors {
		t.Errorf("actor processes %v: want more than %d (the killed actor %d restarted in a new process)", pids, cfg.Actors, pid)
	}
	// Both actors of the pool (one per host) predicted rows: the killed
	// one had finished a block before the kill. (The restarted process
	// may find no block left to take.)
	if len(rep.PerActor) < cfg.Actors {
		t.Errorf("rows per actor process %v, want rows from each of the pool's %d actors", rep.PerActor, cfg.Actors)
	}
	r := rep.Result
	if r.Kind != "Pipeline" || r.Sink != "write_parquet" || r.Path != filepath.Join(cfg.Dir, "output") || len(r.Files) == 0 {
		t.Errorf("result %+v, want write_parquet to %s with its files listed", r, filepath.Join(cfg.Dir, "output"))
	}
	t.Logf("killed actor process %d; rows per actor process: %v", pid, rep.PerActor)
}

// With MaxRestarts 0 a killed actor is not restarted: the run fails with a
// typed error, never with rows silently lost.
func TestBatchInferenceWithoutRestartsFailsTyped(t *testing.T) {
	cfg := testConfig(t, "batchinfer-no-restarts")
	cfg.MarkerDir = t.TempDir()
	cfg.BatchSize = 100
	cfg.Delay = 100 * time.Millisecond
	noRestarts := 0
	cfg.MaxRestarts = &noRestarts
	killed := make(chan int, 1)
	done := make(chan struct{})
	t.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		killed <- killAfterCalls(t, cfg.MarkerDir, 15)
	}()
	rep, err := runLogged(t, cfg)
	if pid := <-killed; pid == 0 {
		t.Fatal("no actor was killed: the run ended before one had made 15 calls")
	}
	var re *data.RunError
	if !errors.As(err, &re) || !errors.Is(err, data.ErrPipelineFailed) {
		t.Fatalf("run = %+v, %v; want a *data.RunError", rep, err)
	}
	if errors.Is(err, ErrOutput) {
		t.Errorf("err = %v: a failed pipeline must not be read back as output", err)
	}
	t.Logf("Ray's error: %s", re.Type)
}

// killAfterCalls waits until some actor has made at least calls model calls,
// kills its worker process with SIGKILL and returns its pid (0 if the test
// ended first).
func killAfterCalls(t *testing.T, dir string, calls int) int {
	ctx := t.Context()
	for ctx.Err() == nil {
		paths, _ := filepath.Glob(filepath.Join(dir, "actor-*.calls"))
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || n < calls {
				continue
			}
			pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "actor-"), ".calls"))
			if err != nil {
				t.Errorf("marker %s: %v", p, err)
				return 0
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Errorf("kill actor process %d: %v", pid, err)
				return 0
			}
			return pid
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0
}

// The same program on the simulated backend: nothing runs, and it says so.
func TestSamePipelineOnTheSimulator(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.Rows, cfg.Files = 100, 2
	rep, err := run(t.Context(), cfg, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("run on sim: %v", err)
	}
	if !rep.Result.Simulated || rep.Result.Backend != "sim" || rep.Written != 0 {
		t.Errorf("report %+v, want a simulated result with nothing written", rep)
	}
}

// The Go check of the output reports every kind of damage as one typed
// error.
func TestVerifyFindsLostAndDuplicatedRows(t *testing.T) {
	t.Parallel()
	row := func(id int64) outputRow {
		return outputRow{ID: id, X: float64(id), Y: modelW*float32(id) + modelB, ActorPID: 7}
	}
	good := []outputRow{row(0), row(1), row(2), row(3)}
	if per, err := verify(good, 4, modelW, modelB); err != nil || per[7] != 4 {
		t.Fatalf("verify(exactly once) = %v, %v; want no error and 4 rows by pid 7", per, err)
	}
	wrong := row(3)
	wrong.Y++
	bad := []outputRow{row(0), row(1), row(1), wrong, row(9)}
	_, err := verify(bad, 4, modelW, modelB)
	var oe *OutputError
	if !errors.As(err, &oe) || !errors.Is(err, ErrOutput) {
		t.Fatalf("verify(damaged) = %v, want an *OutputError", err)
	}
	got := [4]int{oe.Missing, oe.Duplicated, oe.Wrong, oe.Unknown}
	if want := [4]int{1, 1, 1, 1}; got != want {
		t.Errorf("missing, duplicated, wrong, unknown = %v, want %v (%v)", got, want, oe)
	}
}

// The input files hold ids 0..rows-1 split over the files, and read_parquet's
// row count is known from their footers before running.
func TestInputFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := writeInput(dir, 10_001, 4); err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if len(paths) != 4 {
		t.Fatalf("files %v, want 4", paths)
	}
	var rows []inputRow
	for _, p := range paths {
		got, err := parquet.ReadFile[inputRow](p)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, got...)
	}
	seen := map[int64]bool{}
	for _, r := range rows {
		seen[r.ID] = true
	}
	if len(rows) != 10_001 || len(seen) != 10_001 {
		t.Errorf("%d rows, %d distinct ids; want 10001 of each", len(rows), len(seen))
	}
	n, ok := pipeline(defaults(), t.TempDir(), dir, t.TempDir()).Dataset.KnownRows()
	if !ok || n != 10_001 {
		t.Errorf("KnownRows = %d, %v; want 10001 from the footers", n, ok)
	}
	if err := writeInput(dir, 3, 4); err == nil {
		t.Error("writeInput accepted fewer rows than files")
	}
}
