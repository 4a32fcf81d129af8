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
// its field path (app.deployments[llm].autoscalingConfig.minReplicas), and
// yields a [placement.Plan] of kind Application whose Serve.Config is one
// entry of "applications" of PUT /api/serve/applications/, byte-identical
// from run to run.
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
//   - its user_config carries, under the reserved key [SliceReservationKey],
//     a [SliceReservation]: the arguments of slice_placement_group
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
// A deployment without a topology gets no slice group: Serve's own
// per-replica placement group (placement_group_bundles) stays in the config
// exactly as Ray builds it.
//
// The package compiles only; deploying a plan is a backend's job. It imports
// field, placement, rayvocab, runtimeenv and tpu, and never a backend or
// another front end (train, data).
package serve
