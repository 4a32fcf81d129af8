// Package rayruntime is what runs inside Ray on raytpu's behalf, and the
// wire protocol between it and Go. Every backend ships it the same way;
// a platform team's own backend ships it with this package alone.
//
// # Shipping a job: the launcher and its plan
//
// A plan compiled by package train or data has a launcher job
// (plan.Job.Launcher is [EntryTrain] or [EntryData]; its LauncherConfig
// is a [TrainConfig] or a [PipelineConfig]). To run it, a backend:
//
//  1. calls [Files](plan) and puts every file it returns at the root of
//     the job's working directory (the Ray backend adds them to the
//     working_dir package it uploads; the KubeRay backend writes them from
//     the RayJob's entrypoint);
//  2. submits the job with [Entrypoint] as its entrypoint and the plan's
//     runtime_env;
//  3. reads the job's log when it ends and calls [ParseResult]: the JSON
//     of the last [ResultPrefix] line, or [ErrNoResult] when the launcher
//     never reached its end (killed; a driver that failed to start).
//
// The outcome is an object with the keys of [Outcome] ("kind", "error",
// "warnings") and the entry's own: train.Result and data.Result decode it.
// "warnings" lists the problems the launcher met and worked around (a
// record of the run it could not complete, a profiler report it could not
// print, a private Ray API the installed Ray lacks); each is also logged
// with its traceback on the job's standard error. Nothing is swallowed.
//
// The "train" entry builds ray.train.v2.jax.JaxTrainer and calls fit(),
// with the datasets of [TrainDatasets] and a Ray Train callback that
// records every start of the worker group, state change and decision into
// the outcome ("attempts", "timeline", "lost_hosts", "lost_slices",
// "intact_slices").
// With [TrainRun].Profiler it starts jax.profiler's server in every
// worker and prints where each listens as a [ProfilerPrefix] line. A
// train loop iterates its shard of dataset name with
//
//	from _raytpu_launcher import raytpu_iter_jax_batches
//	for batch in raytpu_iter_jax_batches(config, name): ...
//
// which passes the options compiled in Go (under [IterJaxBatchesKey] of
// the loop's config). The "data" entry builds a Ray Dataset from a
// [PipelineConfig] ([Op] calls, in order) and runs its sink.
//
// # Shipping a Serve application: the replica runtime
//
// A Serve deployment compiled by package serve with a TPU topology
// carries a slice reservation (a serveconfig.SliceReservation) under
// [ReservationKey] of its user_config, in format [ReservationVersion],
// and, with a profiler, a serveconfig.ProfilerConfig under [ProfilerKey].
// Its code applies raytpu_replica.tpu_slice to its class. A backend calls
// [WriteModule](dir) and lists the directory it returns in the
// application's runtime_env py_modules (and in the py_modules of any
// slice deployment that sets its own). Each replica then reserves its
// slice as a placement group named [SliceGroupName], starts one host
// worker per TPU host, joins them into one JAX program and answers with
// host 0's result; the package's docstring is the contract in full.
//
// # The protocol description
//
// [Protocol] describes, as JSON generated from this package's Go types,
// everything the two sides share: file names, entries, keys, line
// prefixes, the reservation version, every key of every wire type and the
// private Ray APIs the runtime relies on ([PrivateRayAPIs], checked with
// Ray [CheckedRayVersion]). [Files] and [ModuleFiles] ship it as
// [ProtocolFile] beside the Python, which reads its keys and prefixes
// from it. The package's tests run the Python unit tests (python/test_*.py,
// with the project virtualenv; they start no Ray cluster), which check
// that the Python reads exactly the keys the description lists, and that
// the installed Ray still has every private API.
//
// # Imports
//
// rayruntime imports placement and serveconfig only: front ends import it
// for the wire types, backends for the files to ship. It imports no front
// end, no backend and not the backend contract.
package rayruntime
