// Package profiler captures JAX profiler traces from running Ray workers.
//
// A JAX process that called jax.profiler.start_server(port) answers XLA's
// ProfilerService over gRPC (service tensorflow.ProfilerService, method
// Profile). [Capture] asks such a server to trace for a duration and, by
// setting ProfileRequest.emit_xspace, receives the trace (an XSpace:
// planes, lines, events and their metadata) in the response: nothing is
// written on, or fetched from, the worker's disk. [Trace.WriteLogDir]
// writes it where TensorBoard's profile plugin and XProf look for it:
//
//	<logdir>/plugins/profile/<run>/<host>.xplane.pb
//
// [Parse] decodes an XSpace and summarises it per plane (lines, events,
// event and stat metadata, event counts by name), checking that every
// event and stat names metadata its plane holds; [Summary.Check] refuses a
// trace with no events, which is what a server returns when nothing ran
// while it traced or every tracer was off.
//
// # Finding the servers
//
// train.RunConfig.Profiler starts the server in every train worker;
// raytpu's launcher prints where each listens in the job's log
// ([ServerPrefix] lines, one per worker per start of the worker group),
// and [ServersFromLog] reads them back from the log the dashboard's Jobs
// API serves. serve.Deployment.Profiler does the same on every TPU host of
// a slice-owning replica; the replica prints the lines on its standard
// output, which the dashboard's log API serves by actor id
// (ray.Client.ActorLog), and [HostServersFromLog] reads them. The raytpu
// profile command ties it together.
//
// The capture itself connects straight to the worker's node (ip:port as
// Ray reports the node): the machine running Capture must reach the
// worker nodes, as it does on a local cluster or from a pod inside the
// cluster's network; the dashboard does not proxy gRPC.
//
// The messages are a subset of xla/tsl/profiler/protobuf
// (profiler_service.proto, profiler_options.proto, xplane.proto) with the
// field numbers of the installed jaxlib (0.10.2); emit_xspace needs a
// jaxlib whose server has it, and Capture says so when the response holds
// no trace.
//
// The package imports no front end (train, serve, data) and no backend; it
// speaks gRPC to the worker and nothing else.
package profiler
