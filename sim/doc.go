// Package sim is raytpu's simulated TPU cluster: the embedded default
// backend, which plans and checks a workload with nothing installed but Go.
//
// A [Spec] lists TPU slices and CPU-only nodes ("2*v6e-16,v4-16,cpu:2", see
// [ParseSpec] and [ParseSpecYAML]); [Spec.Hosts] describes every host with
// exactly the resources and labels Ray's TPU accelerator manager gives it,
// so that real Ray nodes can be started from the same list.
//
// [NewCluster] builds a [Cluster] with a placement group scheduler that
// follows Ray's (src/ray/raylet/scheduling/policy/bundle_scheduling_policy.cc):
//
//   - bundles are placed in Ray's order (more GPU first, then more of the
//     other custom resources such as TPU, then object store memory, memory,
//     CPU), each on the node Ray's LeastResourceScorer rates highest: the
//     sum over requested resources of (free - requested) / free, so the
//     emptiest fitting node;
//   - PACK puts the first bundle on the best node, then every further
//     bundle that fits on that same node, and moves on; SPREAD puts each
//     bundle on a node it has not used yet if one fits, else on the best of
//     the nodes it used; STRICT_SPREAD needs a node per bundle; STRICT_PACK
//     puts the sum of all bundles on one node;
//   - a bundle label selector restricts the nodes a bundle may use, in
//     Ray's syntax: "v", "!v", "in(a,b)", "!in(a,b)" (a negation matches a
//     node without the label), accepted and matched exactly as Ray 2.60
//     does (placement.LabelSelector: the space Ray allows after a comma
//     stays part of the item, so "in(a, b)" never matches b);
//   - placement is atomic: a group is CREATED with every bundle placed, or
//     PENDING (it would fit the cluster when idle) or INFEASIBLE (it never
//     fits), with a reason; removing a group frees its resources and
//     retries the pending groups in creation order.
//
// Where Ray's choice is arbitrary (it iterates a hash map), the simulator
// takes the first node in host order, and its bundle sort is stable and
// compares custom resources by name. Resource ids, which order the terms
// of a score (a float sum, so near ties depend on that order), follow the
// spec's host order and then resource names. Every result is reproducible
// and golden-testable: the same plan on the same spec gives the same
// bytes. Nodes fail only when asked: [Cluster.LoseHost] takes a TPU host
// away under a placed plan and places the plan again as Ray Train
// restarts a worker group ([HostLoss]); [Cluster.LoseSlice] takes every
// host of a slice away at once, as when GKE reclaims a spot node pool
// ([SliceLoss]). max_cpu_fraction_per_node,
// soft target nodes and lifetimes are not modelled.
//
// [Cluster.PlaceSlices] reserves a compiled [placement.SliceGroup] in the
// two steps of Ray's SlicePlacementGroup (head reservation, then worker
// bundles pinned to the head's slice by ray.io/tpu-slice-name);
// [Cluster.PlaceBundles] places a raw request. Both return a
// [SlicePlacement] whose [placement.Diagnosis] flags what the TPU guides warn about:
// a multi-host request spread over several slices (no shared ICI: the
// first collective hangs, a Serve replica stays DEPLOYING), or one landing
// on part of a slice or on a slice of the wrong pod type. [Cluster.Place]
// places every slice group of a [placement.Plan], and [Cluster.Run] does
// so as a backend, releasing them afterwards; [RenderSVG] draws the
// slices' chip grids with the bundles on them.
//
// An item with maxSlices is a TPU worker group Ray's autoscaler scales
// on KubeRay ("v4-16:2x2x2{max=2}": none now, up to two slices).
// [PredictAutoscaling] says which groups Ray 2.60's autoscaler grows for a
// plan and to how many slices, or why it cannot (max too small, a
// topology no group offers, single-host against multi-host, autoscaler v2
// and multi-host slices), each finding a sentence a user can act on;
// [AutoscalePrediction.Spec] is the cluster the plan then runs on.
//
// [FitQuota] answers before submission whether a plan fits a [Quota] of
// google.com/tpu chips, all of its slices at once, as Kueue admits a
// workload against its ClusterQueue.
//
// The model holds 100,000 hosts in 10,000 slices; placing a group looks
// only at the host classes an index offers and at the first free member of
// each (see [Cluster]), never at the whole fleet.
package sim
