// Package train mirrors Ray Train's JaxTrainer (ray.train.v2.jax) for TPUs.
//
// A [JaxTrainer] names a Python train loop by import path and says how to
// scale it: UseTPU with an accelerator and a topology gives one worker per
// TPU host, and NumSlices (or NumWorkers) scales out over several slices.
// [JaxTrainer.Compile] checks every rule Ray's ScalingConfig enforces and the
// TPU catalog's, reports every problem at once with its field path, and
// yields a [placement.Plan]: the slice placement Ray Train will make and the
// job that runs raytpu's launcher, which builds the real JaxTrainer inside
// Ray and calls fit().
//
// [JaxTrainer.Fit] mirrors trainer.fit(): it compiles and runs the plan on
// a backend.Runner (the simulator, a Ray cluster, KubeRay) and returns a
// [Result]. The package itself never talks to a cluster and imports no
// backend.
//
// # Ray 2.60's options
//
// JaxTrainer(train_loop_per_worker, train_loop_config, jax_config,
// scaling_config, dataset_config, run_config, datasets, validation_config)
// is mirrored as follows (Ray 2.60.0, ray/train/v2/jax and
// ray/train/v2/api/config.py):
//
//   - jax_config: [JaxConfig] (use_tpu, use_gpu): whether each worker sets
//     JAX_PLATFORMS and calls jax.distributed.initialize before the loop.
//   - ScalingConfig.num_workers as an (min, max) pair: MinWorkers and
//     MaxWorkers, an elastic group; elastic_resize_monitor_interval_s:
//     ElasticResizeMonitorInterval, how often a running elastic group
//     considers resizing.
//   - FailureConfig.controller_failure_limit: ControllerFailureLimit, how
//     many controller failures (a worker group that cannot start) to
//     retry; max_preemption_failures: MaxPreemptionFailures, retries of
//     node preemptions, counted apart from max_failures;
//     relax_collectives_on_preemption and preemption_grace_s:
//     RelaxCollectivesOnPreemption and PreemptionGrace, letting survivors of
//     a preemption commit a last checkpoint.
//   - RunConfig.logging_config: RunConfig.LogLevel, Ray Train's log level.
//   - RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S (an environment variable, not
//     a keyword): RunConfig.WorkerGroupStartTimeout, the bound on each start
//     of the worker group and its slice head reservation.
//
// raytpu adds one option Ray has no keyword for: RunConfig.Profiler
// ([ProfilerConfig]) starts jax.profiler's server in every worker before
// the loop runs and prints where each listens in the job's log, for
// package profiler and `raytpu profile` to capture traces from.
//
// Not mirrored, since they hold Python objects a plan cannot carry:
// validation_config (an alpha API taking a Python validation function),
// RunConfig.storage_filesystem (a pyarrow filesystem) and
// RunConfig.callbacks (raytpu's launcher installs its own, to report
// recoveries). ScalingConfig.label_selector as a per-worker list is not
// mirrored either: with UseTPU Ray forbids a label selector.
//
// # Host loss and elastic groups
//
// A TPU host that dies (maintenance, preemption without notice) takes its
// raylet and every worker on it; Ray Train 2.60 counts that as a worker
// group failure (against FailureConfig.MaxFailures: only a node drained
// with a preemption notice counts against MaxPreemptionFailures), tears
// the group down and starts it again from the latest checkpoint, reserving
// a slice head per slice anew. A broken slice whose worker 0 survives
// still offers its head, and a start that reserves it waits for the
// missing host until WorkerGroupStartTimeout, a controller failure retried
// within ControllerFailureLimit (forever by default). With no spare slice
// no start can succeed: set ControllerFailureLimit for the run to end, or
// make the group elastic (MinWorkers, MaxWorkers), since Ray's elastic
// policy counts only intact slices.
//
// Measured on a local Ray 2.60 cluster posing as two v4-16 slices of two
// hosts (examples/jaxtrain/hostloss_test.go and elastic_test.go, 2-core
// machine under load): the worker group failed 3.1-4.0 s after the host
// was killed, before Ray's GCS marked the node DEAD (12.1-17.2 s); the
// restarted group was RUNNING on the spare slice 16-28 s after the kill,
// from the latest registered checkpoint, and in all six host-loss runs
// Ray reserved the intact slice's head directly. An elastic start with a
// broken slice present reserved that slice's surviving head in all four runs
// and waited out the 60 s start timeout before it started on the intact
// slice. Without a spare slice, a two-slice run with ControllerFailureLimit
// 1 and a 15 s start timeout ended 40-45 s after the kill (RESTARTING,
// RESCHEDULING, ERRORED); with Ray's default limit it would wait forever.
//
// On a cluster, [Result] reports what happened: Attempts (each start of
// the worker group, the slices it ran on and the checkpoint it resumed
// from), LostHosts, the controller's Timeline, and [Result.Recovery]; a run
// that failed after losing hosts is a [HostLossError] that says what the
// group needed, what was left, and what to do. The simulator models the
// same with sim.Cluster.LoseHost.
//
// # Checks before launch
//
// With a local working directory (RuntimeEnv.WorkingDir a directory on
// this machine, and no py_modules, pip, conda, uv or image that could
// provide the module), Compile reads the module that TrainLoopPerWorker
// names, as the launcher will import it: <module path>.py or
// <module path>/__init__.py under the working directory. A missing module
// is Invalid and a function the module does not define is NotSupported,
// both at trainer.train_loop_per_worker with the nearest valid name; a
// module-level `import jax` or `from jax ...` is a warning, since the
// job's driver imports the module to build the trainer and JAX there would
// take the TPU that the worker on that host needs. A topology given as a
// chip count ("16") is NotSupported at trainer.scaling_config.topology, listing
// the generation's shapes with that many chips.
//
// The module scan reads source text and runs no Python. It sees names
// bound at module level by def, async def, class, assignment, `import ...
// as` and `from ... import` (parenthesised lists included), at column 0 or
// one level inside a top-level if, try, with or else block, and skips
// comments and triple-quoted strings. Names made any other way (exec,
// globals(), a module __getattr__, `from x import *`) are invisible, so a
// module with __getattr__ or a star import passes. A working directory that
// does not exist here is not read (the backend reports it when it packages
// the directory), and nothing inside the function is checked.
package train
