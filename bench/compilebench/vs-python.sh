#!/usr/bin/env bash
# bench/compilebench/vs-python.sh times raytpu's validation and compilation of a
# JaxTrainer against the Python it mirrors, in one run, and prints both and
# their ratio:
#   valid:   a two-slice v6e 4x4 trainer (8 workers). Python: Ray's
#            ray.train.ScalingConfig(use_tpu=True, topology="4x4",
#            accelerator_type="TPU-V6E", num_workers=8), then what Ray's
#            SlicePlacementGroup computes before it calls the cluster
#            (get_tpu_num_slices_for_workers, get_tpu_worker_resources,
#            get_chips_per_host, is_valid_tpu_accelerator_topology, the
#            head reservation bundles and the per-bundle label selectors).
#   invalid: the same trainer on v7x 4x4x12. Go reports the field with a
#            "did you mean"; Python raises ValueError from ScalingConfig.
#   tpu:     (Go only) the catalog's largest "did you mean" search, v7x
#            9x9x9 against the 521 v7x shapes GKE provisions.
#
# Both sides report the process's CPU time per operation (user + system,
# garbage collection included), which other work on a shared machine
# disturbs far less than wall time; wall time is shown in brackets.
#
# Environment: RUNS (default 5): runs per side, the median is printed.
# Needs the venv from scripts/setup-venv.sh. No cluster is started.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py="$repo/.venv/bin/python"
[[ -x $py ]] || { echo "bench: $py missing: run scripts/setup-venv.sh" >&2; exit 1; }
RUNS=${RUNS:-5}
export RAY_USAGE_STATS_ENABLED=0

work=$(mktemp -d /tmp/rtcompile.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/compilebench" ./bench/compilebench)
echo "bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

"$work/compilebench" -runs "$RUNS" >"$work/go.jsonl"

"$py" - "$RUNS" >"$work/py.jsonl" <<'PY'
import json, sys, time

import ray.train
from ray._private.accelerators.tpu import (
    TPUAcceleratorManager,
    get_chips_per_host,
    get_num_chips_from_topology,
    infer_tpu_pod_type_from_topology,
)
from ray.util.tpu import (
    get_tpu_num_slices_for_workers,
    get_tpu_version_from_type,
    get_tpu_worker_resources,
)


def compile_trainer(accelerator_type, topology):
    sc = ray.train.ScalingConfig(
        use_tpu=True, topology=topology, accelerator_type=accelerator_type, num_workers=8
    )
    res = sc._resources_per_worker_not_none
    num_slices = get_tpu_num_slices_for_workers(
        sc.topology, sc.accelerator_type, sc.num_workers, resources_per_worker=res
    )
    # SlicePlacementGroup.__init__ and _reserve_slice, up to the cluster calls.
    topo = sc.topology.strip().lower()
    version = get_tpu_version_from_type(sc.accelerator_type.strip())
    num_bundles, bundle = get_tpu_worker_resources(
        topology=topo, accelerator_type=version, resources_per_worker=res, num_slices=num_slices
    )
    chips_per_host = get_chips_per_host(topo, version)
    num_hosts = max(1, get_num_chips_from_topology(topo) // chips_per_host) * num_slices
    if not TPUAcceleratorManager.is_valid_tpu_accelerator_topology(version, topo):
        raise ValueError(f"Invalid accelerator topology: '{topo}' for accelerator version: '{version}'")
    per_slice = num_bundles // num_slices
    accel = "TPU-" + version.upper()
    heads, selectors, bundles = [], [], []
    for s in range(num_slices):
        pod_type = infer_tpu_pod_type_from_topology(topo, accel)
        heads.append(({f"TPU-{pod_type}-head": 1}, {"ray.io/tpu-worker-id": "0", "ray.io/tpu-pod-type": pod_type}))
        label = {"ray.io/tpu-slice-name": f"slice-{s}"}  # the reserved slice's name
        for _ in range(per_slice):
            selectors.append({**{}, **label})
        bundles += [bundle.copy() for _ in range(per_slice)]
    assert len(bundles) == 8 and num_hosts == 8
    return bundles, selectors, heads


def invalid():
    try:
        compile_trainer("TPU-V7X", "4x4x12")
    except ValueError:
        return
    raise AssertionError("v7x 4x4x12 accepted")


def valid():
    compile_trainer("TPU-V6E", "4x4")


def measure(fn):
    for _ in range(1000):
        fn()  # warm up
    n, wall, cpu = 0, time.perf_counter(), time.process_time()
    while time.process_time() - cpu < 0.25:
        for _ in range(1000):
            fn()
        n += 1000
    return (time.perf_counter() - wall) / n * 1e9, (time.process_time() - cpu) / n * 1e9


runs = int(sys.argv[1])
for name, fn in [("valid: v6e 4x4, 8 workers (2 slices)", valid), ("invalid: v7x 4x4x12 (did you mean)", invalid)]:
    rs = sorted((measure(fn) for _ in range(runs)), key=lambda r: r[1])
    wall, cpu = rs[len(rs) // 2]
    print(json.dumps({"case": name, "ns_per_op": wall, "cpu_ns_per_op": cpu}))
PY

"$py" - "$work/go.jsonl" "$work/py.jsonl" <<'PY'
import json, sys
go = [json.loads(l) for l in open(sys.argv[1])]
py = {r["case"]: r for r in (json.loads(l) for l in open(sys.argv[2]))}
print(f"{'CPU time per op (wall in brackets)':42} {'Go':>20} {'allocs':>7} {'Python':>20} {'Python/Go':>10}")
for g in go:
    gs = f"{g['cpu_ns_per_op']/1000:.2f}µs ({g['ns_per_op']/1000:.2f})"
    p = py.get(g["case"])
    ps, ratio = "-", "-"
    if p:
        ps = f"{p['cpu_ns_per_op']/1000:.2f}µs ({p['ns_per_op']/1000:.2f})"
        ratio = f"{p['cpu_ns_per_op'] / g['cpu_ns_per_op']:.1f}×"
    print(f"{g['case']:42} {gs:>20} {g['allocs_per_op']:7d} {ps:>20} {ratio:>10}")
PY
