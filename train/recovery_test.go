package train_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/train"
)

// launcherOutput is the launcher's account of a run that lost host
// v4-16-1-w1 and went on from step 10 on slice v4-16-0 (its shape as the
// launcher prints it on a real cluster).
const launcherOutput = `{"kind":"JaxTrainer","checkpoint":"/r/host-loss/checkpoint_3","metrics":{"step":14},
"attempts":[
 {"at_s":3.1,"slices":["v4-16-1"],"resumed_from":null,"workers":[
   {"node_id":"a0","ip":"127.0.0.4","slice":"v4-16-1","tpu_worker_id":"0","rank":0},
   {"node_id":"a1","ip":"127.0.0.5","slice":"v4-16-1","tpu_worker_id":"1","rank":1}]},
 {"at_s":51.9,"slices":["v4-16-0"],"resumed_from":{"path":"/r/host-loss/checkpoint_2","metrics":{"step":10}},"workers":[
   {"node_id":"b0","ip":"127.0.0.2","slice":"v4-16-0","tpu_worker_id":"0","rank":0},
   {"node_id":"b1","ip":"127.0.0.3","slice":"v4-16-0","tpu_worker_id":"1","rank":1}]}],
"lost_hosts":[{"node_id":"a1","ip":"127.0.0.5","slice":"v4-16-1","tpu_worker_id":"1"}],
"timeline":[{"at_s":40.2,"kind":"state","state":"RESTARTING","error":"WorkerGroupError: worker died"},{"at_s":40.2,"kind":"failure_decision","decision":"RETRY"}],
"intact_slices":1}`

func TestRecovery(t *testing.T) {
	t.Parallel()
	res, err := train.ParseResult([]byte(launcherOutput))
	if err != nil {
		t.Fatal(err)
	}
	rec := res.Recovery()
	if rec == nil {
		t.Fatal("no recovery")
	}
	want := "lost host v4-16-1-w1; 1 restart(s); group moved from slice v4-16-1 to v4-16-0; resumed from /r/host-loss/checkpoint_2 (step 10)"
	if rec.String() != want {
		t.Errorf("recovery = %q\nwant       %q", rec.String(), want)
	}
	if res.Timeline[1].Decision != "RETRY" || *res.IntactSlices != 1 {
		t.Errorf("timeline %+v, intact %v", res.Timeline, res.IntactSlices)
	}
	none, _ := train.ParseResult([]byte(`{"attempts":[{"at_s":1,"workers":[]}]}`))
	if none.Recovery() != nil {
		t.Error("a run that started once reports a recovery")
	}
}

// A run that lost a host of slice tpu-group-0, then the whole of slice
// tpu-group-1 (both hosts, a preemption), and resumed once the slice was
// back under the same name.
func TestRecoveryLostSlice(t *testing.T) {
	t.Parallel()
	res, err := train.ParseResult([]byte(`{"metrics":{"step":9},
"attempts":[{"at_s":1,"slices":["tpu-group-0","tpu-group-1"]},{"at_s":30,"slices":["tpu-group-0","tpu-group-1"]},
 {"at_s":90,"slices":["tpu-group-0","tpu-group-1"],"resumed_from":{"path":"/r/c6","metrics":{"step":6}}}],
"lost_hosts":[{"node_id":"a1","slice":"tpu-group-0","tpu_worker_id":"1"},
 {"node_id":"b0","slice":"tpu-group-1","tpu_worker_id":"0"},{"node_id":"b1","slice":"tpu-group-1","tpu_worker_id":"1"}],
"lost_slices":["tpu-group-1"]}`))
	if err != nil {
		t.Fatal(err)
	}
	rec := res.Recovery()
	want := "lost slice tpu-group-1 (hosts tpu-group-1-w0, tpu-group-1-w1); lost host tpu-group-0-w1; 2 restart(s); group moved from slice tpu-group-0+tpu-group-1 to tpu-group-0+tpu-group-1; resumed from /r/c6 (step 6)"
	if rec.String() != want {
		t.Errorf("recovery = %q\nwant       %q", rec.String(), want)
	}
	if len(rec.LostSlices) != 1 || rec.LostSlices[0] != "tpu-group-1" {
		t.Errorf("lost slices %v, want [tpu-group-1]", rec.LostSlices)
	}
	// A lost slice alone is a recovery to report.
	only := &train.Result{LostSlices: []string{"s"}}
	if only.Recovery() == nil {
		t.Error("a result with a lost slice reports no recovery")
	}
}

func ExampleResult_Recovery() {
	res, err := train.ParseResult([]byte(launcherOutput))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Recovery())
	// Output:
	// lost host v4-16-1-w1; 1 restart(s); group moved from slice v4-16-1 to v4-16-0; resumed from /r/host-loss/checkpoint_2 (step 10)
}

// HostLossError says what the group needed and what to do; it still
// matches ErrTrainingFailed.
func ExampleHostLossError() {
	err := error(&train.HostLossError{
		LostHosts: []train.Host{{NodeID: "a1", Slice: "v4-16-1", TPUWorkerID: "1"}},
		PodType:   "v4-16", NeedSlices: 2, IntactSlices: 1,
		Err: &train.RunError{Type: "ControllerError", Message: "worker group startup timed out"},
	})
	fmt.Println(err)
	fmt.Println(errors.Is(err, train.ErrHostLost), errors.Is(err, train.ErrTrainingFailed))
	// With room left, the run was out of retries.
	fmt.Println(&train.HostLossError{
		LostHosts: []train.Host{{NodeID: "a1", Slice: "v4-16-1", TPUWorkerID: "1"}},
		PodType:   "v4-16", NeedSlices: 1, IntactSlices: 1,
	})
	// Output:
	// train: lost TPU host v4-16-1-w1; the worker group needs 2 intact v4-16 slice(s) and 1 are left: keep a spare v4-16 slice (3 in the cluster), make the group elastic (scaling_config.min_workers) so it can shrink, or bring the host back (ControllerError: worker group startup timed out)
	// true true
	// train: lost TPU host v4-16-1-w1; 1 intact v4-16 slice(s) were left for the 1 the group needs, but the run was out of retries: raise run_config.failure_config.max_failures (a host that dies counts as a worker failure, not a preemption)
}

// An elastic group: Ray Train starts with what the cluster holds between
// two and six workers (one to three v4 2x2x2 slices) and resizes as slices
// come and go; the plan reserves slices for the maximum.
func ExampleScalingConfig_elastic() {
	plan, err := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig: train.ScalingConfig{
			UseTPU: true, Accelerator: "v4", Topology: "2x2x2",
			MinWorkers: 2, MaxWorkers: 6, ElasticResizeMonitorInterval: 30 * time.Second,
		},
		RunConfig: train.RunConfig{Name: "elastic"},
	}.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Slices[0])
	// Output:
	// 3 × v4 2x2x2 (v4-16): 6 bundles {CPU:1, TPU:4, accelerator_type:TPU-V4:0.001}, PACK
}

// A misspelled train function is caught in the local working directory
// before anything is uploaded.
func ExampleJaxTrainer_Compile_trainLoopCheck() {
	dir, err := os.MkdirTemp("", "loop")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	src := "import jax\n\ndef train_func(config):\n    pass\n"
	if err := os.WriteFile(filepath.Join(dir, "train_loop.py"), []byte(src), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	t := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_fnuc",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2"},
		RunConfig:          train.RunConfig{Name: "demo"},
	}
	t.RuntimeEnv.WorkingDir = dir
	_, warnings, err := t.CompileWithWarnings()
	for _, e := range field.Errors(err) {
		fmt.Printf("%s: %s, did you mean %s?\n", e.Field, e.Type, e.Suggestion)
	}
	fmt.Println(len(warnings), "warning (module-level import jax)")
	// Output:
	// trainer.train_loop_per_worker: NotSupported, did you mean train_loop:train_func?
	// 1 warning (module-level import jax)
}
