// Package rayruntime embeds raytpu's Python launcher: the thin program that
// runs inside Ray, reads a compiled plan and calls the real Ray library,
// then reports the outcome on one line of its output.
//
// Entries (the plan's job.launcher):
//
//   - "train" builds ray.train.v2.jax.JaxTrainer and calls fit(). With
//     launcherConfig.datasets set it also builds every dataset
//     (ray.data.<source op>(**kwargs), then ds.<step op>(**kwargs) in order;
//     a "fn" of the form "module:attr" is imported, a "compute" dict becomes
//     ray.data.ActorPoolStrategy(**compute)), passes them as datasets= with
//     dataset_config=ray.train.DataConfig(**dataset_config), and adds the
//     iter_jax_batches keyword arguments of every dataset to
//     train_loop_config under [IterJaxBatchesKey], by dataset name.
//     It also installs a Ray Train callback in the controller (RunConfig
//     callbacks; a ControllerCallback, WorkerGroupCallback and
//     ReportCallback of ray.train.v2._internal.execution.callback) that
//     sends what the controller does to a small actor pinned to the
//     driver's node, and adds to the outcome: "fit_started_at" (Unix
//     seconds), "attempts" (every start of the worker group: its workers'
//     nodes with their slice and TPU worker id, and the checkpoint it
//     resumed from), "timeline" (state changes with their error, failure
//     and resize decisions, in seconds after fit_started_at),
//     "lost_hosts" (nodes alive when fit() began and dead at its end) and,
//     for TPU slices, "intact_slices" (ray.util.tpu.get_num_tpu_slices).
//     With run_config.profiler ({"port": N}, train.RunConfig.Profiler) the
//     train function is wrapped (same arity) to start jax.profiler's
//     server in each worker first (port 0: a free one) and report rank,
//     node, ip and port to an actor pinned to the driver's node; a driver
//     thread prints each report as a "RAYTPU_PROFILER <json>" line
//     (profiler.ServersFromLog reads them). The driver prints them, not the
//     workers: Ray's log deduplication folds worker lines that differ only
//     in numbers.
//   - "data" imports ray.data and the pipeline's "module:attr" callables,
//     calls ray.init, builds a data.Pipeline's dataset the same way and calls its
//     sink (write_parquet, write_json). Its outcome is {"kind": "Pipeline",
//     "name", "sink", "path"} plus "files" (the files written, relative to
//     path) when path is a local directory. The steps get exactly their
//     compiled kwargs, as a hand-written pipeline would: an actor pool's
//     fault tolerance is Ray Data 2.60's default (max_restarts=-1 and,
//     unless max_restarts is 0, max_task_retries=-1, applied by
//     ActorPoolMapOperator), so a dead actor is restarted and its calls
//     retried and every row is written exactly once; a step's
//     max_restarts (data.MapBatches.MaxRestarts) is passed only when set.
//
// The train loop contract: a loop that received config iterates its shard
// of dataset name with
//
//	from _raytpu_launcher import raytpu_iter_jax_batches
//	for batch in raytpu_iter_jax_batches(config, name): ...
//
// which is ray.train.get_dataset_shard(name).iter_jax_batches(
// **config[IterJaxBatchesKey][name]): the options compiled in Go, never
// re-typed in Python. The launcher file sits at the root of the job's
// working_dir, so train workers can import it.
package rayruntime

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/raytpu/raytpu/placement"
)

//go:embed python/_raytpu_launcher.py
var script []byte

// Names of the files the launcher needs at the root of the working dir.
const (
	ScriptFile = "_raytpu_launcher.py"
	PlanFile   = "_raytpu_plan.json"
)

// The launcher's entries: the value of a plan's job.launcher, which says
// what its launcherConfig holds (a [TrainConfig] or a [PipelineConfig]).
const (
	EntryTrain = "train"
	EntryData  = "data"
)

// CallableKwarg is the keyword argument of a Ray Data call ([Op]) whose
// value, a "module:attr" string, the launcher imports before the call.
const CallableKwarg = "fn"

// Entrypoint is the job entrypoint of a plan whose job runs the launcher.
const Entrypoint = "python " + ScriptFile

// IterJaxBatchesKey is the train_loop_config key under which the "train"
// entry passes each dataset's iter_jax_batches keyword arguments.
const IterJaxBatchesKey = "_raytpu_iter_jax_batches"

// ResultPrefix starts the launcher's outcome line.
const ResultPrefix = "RAYTPU_RESULT "

// ErrNoResult means the job's output holds no outcome line: the launcher
// never reached its end (killed, or the driver failed before it started).
var ErrNoResult = errors.New("rayruntime: no result line in job output")

// Files returns the launcher script and the plan, keyed by their file names
// at the root of the working directory.
func Files(p *placement.Plan) (map[string][]byte, error) {
	if p.Job == nil || p.Job.Launcher == "" {
		return nil, fmt.Errorf("rayruntime: plan %q has no launcher job", p.Name)
	}
	b, err := p.MarshalIndent()
	if err != nil {
		return nil, fmt.Errorf("rayruntime: encoding plan: %w", err)
	}
	return map[string][]byte{ScriptFile: script, PlanFile: b}, nil
}

// Script returns the embedded launcher source.
func Script() []byte { return append([]byte(nil), script...) }

// ParseResult returns the JSON of the last outcome line in logs.
func ParseResult(logs string) (json.RawMessage, error) {
	var last string
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, ResultPrefix); i >= 0 {
			last = line[i+len(ResultPrefix):]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("rayruntime: reading job output: %w", err)
	}
	if last == "" {
		return nil, ErrNoResult
	}
	if !json.Valid([]byte(last)) {
		return nil, fmt.Errorf("rayruntime: result line is not JSON: %.200q", last)
	}
	return json.RawMessage(last), nil
}
