// Package crosscheck holds a test that runs the same placement requests on
// raytpu's simulated cluster (package sim) and on a real local Ray cluster
// whose workers pose as the same TPU hosts, and fails when the two
// disagree.
//
// The fleet is the spec "2*v4-16,v4-8" (two v4 2x2x2 slices of two 4-chip
// hosts each, one single-host v4 2x2x1 slice), one CPU per host, plus Ray's
// head node with one CPU, which the simulator holds as a CPU-only node.
// TestMain starts one real cluster (internal/raycluster) and one Python
// driver (testdata/place.py) that performs every request with Ray's own API:
// ray.util.tpu.slice_placement_group for slice requests,
// ray.util.placement_group with bundle_label_selector for raw ones.
//
// Each case is a sequence of steps whose groups are held until the case
// ends, so a later step sees what earlier ones took. For every step the
// outcome must match exactly: the exception Ray raised (TimeoutError when a
// slice head cannot be reserved), or the state of every placement group
// (CREATED; INFEASIBLE when Ray's GCS marks it so; PENDING otherwise). Where
// bundles landed is compared at the level the case declares, because Ray
// breaks ties between equally good nodes by hash-map order while the
// simulator takes the first in host order:
//
//   - exact: every bundle on the same host (slice name and worker id);
//   - slices: the partition of the bundles into slices, slices numbered by
//     first appearance over the whole case (or by name for pinned
//     requests), each with its pod type, and per slice the sorted numbers
//     of bundles on its hosts;
//   - hosts: the sorted list of (pod type, bundles) per host used, or
//     (host name, bundles) for requests pinned by name;
//   - count: the sorted numbers of bundles per host used, and, where no
//     tie-break can change it, whether the bundles span more than one
//     slice (for requests whose choice of hosts is a tie in Ray, such as 16
//     bundles of {TPU: 1} without topology: PACK fills 4 of the 5 hosts,
//     so 4 × 4 bundles over at least 2 slices, but which slices, and so
//     the chips per slice, depends on the tie-break).
//
// Each case also states the outcome Ray gives (checked against Ray only),
// so that a broken harness cannot make both sides agree on nothing.
//
// Ray reports an infeasible group as state PENDING with scheduling state
// INFEASIBLE, and decides it more narrowly than "never fits the idle
// cluster": STRICT_PACK when no node's total resources hold the sum of the
// bundles, STRICT_SPREAD when there are more bundles than alive nodes (of
// any resources or labels), any strategy when some bundle fits no node;
// every other group that does not fit now is NO_RESOURCES and waits. The
// test reports NO_RESOURCES (or not scheduled at the deadline) as PENDING.
package crosscheck
