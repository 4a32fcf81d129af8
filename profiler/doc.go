// Package profiler captures JAX profiler traces from running Ray workers.
//
// A JAX process that called jax.profiler.start_server(port) answers XLA's
// ProfilerService over gRPC. [Capture] asks such a server to trace for a
// duration and receives the trace (an XSpace: planes, lines, events and
// their metadata) in the response, so nothing has to be fetched from the
// worker's disk. [Trace.WriteLogDir] writes it where TensorBoard's profile
// plugin and XProf look for it:
//
//	<logdir>/plugins/profile/<run>/<host>.xplane.pb
//
// [Parse] decodes an XSpace and summarises it per plane; [Summary.Check]
// refuses a trace with no events, which is what a server returns when
// nothing ran while it traced.
//
// train.RunConfig.Profiler starts the server in every train worker, and
// raytpu's launcher prints where each listens in the job's log
// ([ServerPrefix] lines); [ServersFromLog] reads them back from the log the
// dashboard serves, and the raytpu profile command ties it together.
//
// The package imports no front end (train, serve, data) and no backend; it
// speaks gRPC to the worker and nothing else.
package profiler
