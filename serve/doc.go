// Package serve mirrors Ray Serve's declarative application config for TPUs.
//
// An [Application] names the ingress by Ray's import_path and overrides the
// options of its deployments, exactly the fields of Ray 2.60's
// ServeApplicationSchema and DeploymentSchema (JSON tags are Ray's snake_case
// names, so a YAML or JSON file reads like a Serve config file). A
// [Deployment] may add an [AcceleratorConfig], raytpu's mirror of Serve LLM's
// accelerator_type + TPUConfig(kind="tpu", topology=...): each replica then
// owns one whole TPU slice.
//
// [Application.Compile] checks every rule Ray's Serve schema and its deploy
// step enforce, plus the TPU catalog's, reports every problem at once with
// its field path (app.deployments[llm].autoscaling_config.min_replicas), and
// yields a [placement.Plan] of kind Application whose Serve.Config is one
// entry of "applications" of PUT /api/serve/applications/: a typed
// serveconfig.Application that backends read, which marshals to the same
// bytes from run to run.
//
// # Field paths
//
// A path names a field the way a Serve config file spells it, because
// every type here mirrors Ray Serve's config: each segment is the field's
// JSON tag, Ray's snake_case keyword (num_replicas, ray_actor_options,
// accelerator_config), whether the spec came from a file or was built in
// Go. Deployments, which Ray keys by name, are keyed by name
// (app.deployments[LLM]); lists are indexed (placement_group_bundles[0]);
// the root is "app" (and "grpc_options" for [GRPCOptions]).
//
// # Say what you mean
//
// No number selects a mode. num_replicas is serveconfig.ReplicaCount(n),
// serveconfig.AutoReplicas() (Serve's "auto") or unset (1 replica); a
// count below 1 is an error at num_replicas. max_queued_requests is
// serveconfig.MaxQueued(n), serveconfig.NoQueueLimit() or unset. Zero
// elsewhere means the default the field names. Free-form values (args,
// user_config, runtime_env keys) may not hold themselves and nest at most
// 64 levels; names, ids and route prefixes hold no control characters and
// no "/../".
//
// # Slices of a deployment with a topology
//
// Ray Serve cannot hold a multi-host replica on one TPU slice by itself: its
// per-replica placement group (placement_group_bundles) has no slice-head
// reservation. Serve LLM therefore defers the placement group: the replica
// actor is a small plain actor, and the replica reserves its slice with
// ray.util.tpu.slice_placement_group when it starts. raytpu does the same:
//
//   - the deployment is sent without placement_group_bundles,
//     placement_group_strategy or a bundle label selector;
//   - its user_config carries, under the reserved key
//     serveconfig.SliceReservationKey, a serveconfig.SliceReservation: the arguments of slice_placement_group
//     (topology, accelerator_version, resources_per_bundle, strategy) plus
//     the shape the replica runtime needs (hosts, chips per host, pod type).
//     Serve passes user_config to the replica's reconfigure() during
//     initialisation, before the replica is healthy, so the runtime reserves
//     the slice there;
//   - the plan holds one slice group per replica (Part role Replica, Index =
//     replica index): NumReplicas of them, or with autoscaling one per
//     max_replicas (Ray's effective max, 100 for num_replicas "auto"
//     without a max), so a backend or the simulator can check that the
//     cluster holds the largest the deployment may grow to.
//
// # The replica runtime
//
// The replica that owns a slice runs raytpu's replica runtime, a small
// Python module (raytpu_replica) that the Ray and KubeRay backends ship
// with the application as a py_modules entry (an uploaded package, or a
// zip in a ConfigMap every pod mounts). The deployment's code applies its
// class decorator under @serve.deployment:
//
//	from ray import serve
//	from raytpu_replica import tpu_slice, get_slice_context
//
//	@serve.deployment
//	@tpu_slice
//	class Model:
//	    def __init__(self, scale): ...     # built on every TPU host
//	    def reconfigure(self, config): ... # optional; every host
//	    def __call__(self, request): ...   # every host; host 0 answers
//
//	app = Model.bind(scale=2.0)
//
// The Serve replica itself is then a CPU-only orchestrator. When Serve
// first calls its reconfigure(user_config), it takes the reservation out
// of user_config, reserves the slice (slice_placement_group, no lifetime,
// so the slice fate-shares with the replica), starts one host worker actor
// per TPU host in bundle i with the bundle's resources, ranks them by TPU
// worker id (Ray may put bundle i on any host of the slice), joins them
// into one JAX distributed program (jax.distributed.initialize, process i
// on TPU worker i, coordinator on host 0; tpu_slice(jax_distributed=False) skips it), builds the class
// on every host with the deployment's constructor arguments and passes the
// rest of user_config to its reconfigure. Each request, HTTP or through a
// handle, goes to every host in the same order (SPMD) and host 0's result
// is the answer; an HTTP request arrives as raytpu_replica.Request (method,
// path, query_params, headers, body, .json()). On a host,
// get_slice_context() says its rank and every host's node and labels.
//
// The slice is released when Serve stops the replica (scale-down, delete,
// redeploy of new code: the runtime's __del__) or when the replica dies;
// a restarted replica reserves again. A replica that finds no free slice
// within AcceleratorConfig.HeadReservationTimeout (unless
// NoHeadReservationTimeout, which waits indefinitely) fails to start with
// "raytpu: slice reservation pending: ...", which Serve shows in the
// deployment's message ("A replica failed to start with exception.
// Retrying N more time(s)") while the application stays DEPLOYING, until
// its retries run out (DEPLOY_FAILED). The replica actor keeps Serve's
// ray_actor_options (default num_cpus 1); give it num_cpus 0 when TPU hosts
// have no CPU to spare beyond their slice bundles.
//
// A deployment without a topology gets no slice group: Serve's own
// per-replica placement group (placement_group_bundles) stays in the config
// exactly as Ray builds it.
//
// The package compiles only; deploying a plan is a backend's job. It imports
// field, placement, rayvocab, runtimeenv, serveconfig and tpu, and never a
// backend or another front end (train, data).
package serve
