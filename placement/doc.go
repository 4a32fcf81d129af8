// Package placement compiles TPU slices into placement groups exactly as
// Ray's ray.util.tpu.slice_placement_group builds them, and defines the
// backend-neutral [Plan] every raytpu workload compiles to.
//
// A multi-host slice is pinned to one physical slice in two steps, as Ray
// does: first a head reservation (one bundle {TPU-<pod type>-head: 1} with
// the label selector {ray.io/tpu-worker-id: "0", ray.io/tpu-pod-type: <pod
// type>}), then every worker bundle of that slice is given the label
// selector {ray.io/tpu-slice-name: <name of the reserved slice>}. The slice
// name is known only once the head lands, so a compiled [Bundle] records
// which slice it is pinned to and the backend fills the name in.
//
// # Reusing the slice rules from a front end
//
// Every front end that asks for TPU slices (train's ScalingConfig, serve's
// AcceleratorConfig, data's batch inference) validates them with the same
// code, under its own field paths: fill a [Fields] with the path of each
// [SliceSpec] field as the front end's user wrote it (FieldsUnder gives
// SliceSpec's own names below a path; override the ones the front end names
// differently, such as "placementStrategy" for Strategy or "numReplicas"
// for NumSlices), then call [SliceSpec.CompileFields], or
// [SliceSpec.Resolve] and [Shape.Group] when the slice count depends on the
// resolved shape. The TPU catalog is consulted once, and every error is
// built at the caller's path: none is renamed or filtered afterwards.
//
// # Label selectors
//
// [LabelSelector] is Ray's label_selector and bundle_label_selector rule,
// the one every front end validates with ([ValidateLabelSelector], under
// its own field path) and every backend matches with
// ([LabelSelector.Matches]): Ray 2.60's accepted syntax and its raylet's
// reading of it, quirks included.
//
// # Capacity
//
// [Capacity] says where a plan's TPUs come from on GKE (on-demand, Spot
// VMs, a specific reservation, flex-start): one type with one
// [Capacity.Validate], set on a plan (Plan.Capacity) or on a backend that
// provisions capacity (the kuberay backend's Options.Capacity), rendered
// there and ignored by backends that run on capacity already there.
//
// A Plan is plain data: it marshals to JSON with a stable field order and is
// byte-identical from run to run.
package placement
