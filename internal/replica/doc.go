// Package replica embeds raytpu's Python replica runtime: the module
// (raytpu_replica) that makes a Ray Serve replica own one whole TPU slice.
//
// A deployment compiled with a topology (package serve) carries its slice
// reservation in user_config under [ReservationKey]. Its code applies
// raytpu_replica.tpu_slice to its class under @serve.deployment; the replica
// then reserves the slice when Serve first calls reconfigure, starts one
// host worker actor per TPU host of that slice, joins them into one JAX
// distributed program, builds the user's class on every host and sends
// each request to all hosts, answering with host 0's result. The module's
// docstring is the contract in full.
//
// A deployment with serve.Deployment.Profiler also carries {"port": N}
// under serve.ProfilerKey: every host worker then starts jax.profiler's
// server after jax.distributed.initialize, and the replica prints where
// each listens on its standard output (profiler.ServerPrefix lines).
//
// The Ray backend ships the module into the application as a py_modules
// entry (a single .py file), so it works whatever the working_dir is.
// The runtime is tested only against a real Ray cluster.
//
// The package imports nothing of raytpu's: package serve defines the same
// key and version (a test keeps them equal), and the backends import this
// package.
package replica
