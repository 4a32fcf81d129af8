"""Places requests on a real Ray cluster with Ray's own API and reports where
every bundle landed, for the cross-check against raytpu's simulator.

Usage: python place.py GCS_ADDRESS NODE_IP

Connects once, prints {"ready": true, "nodes": [...]}, then reads one case
per stdin line (JSON) and answers one JSON line per case:

  case:   {"id": str, "steps": [step, ...], "ready_timeout_s": float,
           "settle_s": float}
  step:   {"kind": "slice", "topology", "accelerator", "resources_per_bundle",
           "num_slices", "pg_per_slice", "strategy", "name",
           "bundle_label_selector", "head_timeout_s"}
        | {"kind": "raw", "bundles", "strategy", "name",
           "bundle_label_selector"}
  answer: {"id", "steps": [{"error": {"type", "message"} | null,
           "heads": [node], "groups": [{"state", "ray_state",
           "scheduling_state", "bundles": [node | null]}]}], "error"?}

A slice step calls ray.util.tpu.slice_placement_group (which reserves each
multi-host slice's head first and raises TimeoutError after
head_timeout_s); a raw step calls ray.util.placement_group. The steps of a
case run in order and every group they create is held until the case ends,
so later steps see the resources earlier ones took. A group counts as
CREATED when its state is CREATED within ready_timeout_s; otherwise its
GCS scheduling state decides: INFEASIBLE, or PENDING (no resources now, or
still not scheduled at the deadline). A group whose scheduling state
stays NO_RESOURCES or INFEASIBLE for settle_s is reported without waiting
for the deadline. Bundle locations come from the placement group table
(bundles_to_node_id) and the node's labels. At the end of a case every
group is removed (SlicePlacementGroup.shutdown() for slice steps) and the
helper waits until the cluster's resources are all free again.
"""

import json
import sys
import time
import traceback

import ray
from ray.util.placement_group import (
    placement_group,
    placement_group_table,
    remove_placement_group,
)
from ray.util.tpu import slice_placement_group

SLICE_KEY = "ray.io/tpu-slice-name"
WORKER_KEY = "ray.io/tpu-worker-id"
POD_KEY = "ray.io/tpu-pod-type"

NODES = {}


def load_nodes():
    NODES.clear()
    for n in ray.nodes():
        if not n.get("Alive"):
            continue
        labels = n.get("Labels") or {}
        NODES[n["NodeID"]] = {
            "node_id": n["NodeID"],
            "ip": n.get("NodeManagerAddress", ""),
            "slice": labels.get(SLICE_KEY, ""),
            "worker": labels.get(WORKER_KEY, ""),
            "pod_type": labels.get(POD_KEY, ""),
        }


def node_info(node_id):
    if node_id not in NODES:
        load_nodes()
    return NODES.get(node_id, {"node_id": node_id, "ip": "", "slice": "?", "worker": "", "pod_type": ""})


def wait_group(pg, deadline, settle_s):
    """Polls the group's table entry until CREATED, a settled NO_RESOURCES or
    INFEASIBLE, or the deadline."""
    since, last = None, None
    while True:
        t = placement_group_table(pg)
        state = t.get("state", "")
        sched = t.get("stats", {}).get("scheduling_state", "")
        if state == "CREATED":
            return t
        if sched in ("NO_RESOURCES", "INFEASIBLE"):
            if sched != last:
                since, last = time.monotonic(), sched
            elif time.monotonic() - since >= settle_s:
                return t
        else:
            since, last = None, None
        if time.monotonic() >= deadline:
            return t
        time.sleep(0.2)


def describe_group(t):
    state = t.get("state", "")
    sched = t.get("stats", {}).get("scheduling_state", "")
    if state == "CREATED":
        verdict = "CREATED"
    elif sched == "INFEASIBLE":
        verdict = "INFEASIBLE"
    else:
        verdict = "PENDING"
    out = {"state": verdict, "ray_state": state, "scheduling_state": sched, "bundles": []}
    n = len(t.get("bundles", {}))
    b2n = t.get("bundles_to_node_id", {})
    for i in range(n):
        nid = b2n.get(i) or b2n.get(str(i))
        if verdict == "CREATED" and nid and set(nid) != {"0"}:
            out["bundles"].append(node_info(nid))
        else:
            out["bundles"].append(None)
    return out


def run_step(step, case, held):
    """Runs one step; appends what it creates to held (cleanup callbacks)."""
    ready_deadline = time.monotonic() + float(case.get("ready_timeout_s", 60))
    settle_s = float(case.get("settle_s", 3))
    res = {"error": None, "heads": [], "groups": []}
    if step["kind"] == "slice":
        kwargs = {
            "topology": step["topology"],
            "accelerator_version": step["accelerator"],
            "resources_per_bundle": step.get("resources_per_bundle"),
            "num_slices": step.get("num_slices") or 1,
            "pg_per_slice": bool(step.get("pg_per_slice")),
            "strategy": step.get("strategy") or "SPREAD",
            "name": step.get("name") or "",
            "head_reservation_timeout_s": float(step.get("head_timeout_s") or 100.0),
        }
        if step.get("bundle_label_selector"):
            kwargs["bundle_label_selector"] = step["bundle_label_selector"]
        try:
            spg = slice_placement_group(**kwargs)
        except Exception as e:  # TimeoutError from the head reservation
            res["error"] = {"type": type(e).__name__, "message": str(e)[:400]}
            return res
        held.append(spg.shutdown)
        for hpg in spg.head_placement_groups:
            t = placement_group_table(hpg)
            nid = t.get("bundles_to_node_id", {}).get(0)
            res["heads"].append(node_info(nid) if nid else None)
        pgs = spg.slice_placement_groups if kwargs["pg_per_slice"] else [spg.slice_placement_group]
        ready_deadline = time.monotonic() + float(case.get("ready_timeout_s", 60))
    else:
        kwargs = {
            "bundles": step["bundles"],
            "strategy": step.get("strategy") or "PACK",
            "name": step.get("name") or "",
        }
        if step.get("bundle_label_selector"):
            kwargs["bundle_label_selector"] = step["bundle_label_selector"]
        pg = placement_group(**kwargs)
        held.append(lambda pg=pg: remove_placement_group(pg))
        pgs = [pg]
    for pg in pgs:
        res["groups"].append(describe_group(wait_group(pg, ready_deadline, settle_s)))
    return res


def total_resources():
    return {k: v for k, v in ray.cluster_resources().items() if not k.startswith("node:") and k not in ("memory", "object_store_memory")}


def wait_free(total, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while True:
        avail = ray.available_resources()
        if all(abs(avail.get(k, 0) - v) < 1e-6 for k, v in total.items()):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)


def main():
    address, node_ip = sys.argv[1], sys.argv[2]
    ray.init(address=address, _node_ip_address=node_ip, logging_level="ERROR", log_to_driver=False)
    load_nodes()
    total = total_resources()
    print(json.dumps({"ready": True, "nodes": list(NODES.values()), "resources": total}), flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        case = json.loads(line)
        out = {"id": case.get("id", ""), "steps": []}
        held = []
        t0 = time.monotonic()
        try:
            for step in case["steps"]:
                out["steps"].append(run_step(step, case, held))
        except Exception:
            out["error"] = traceback.format_exc()[-2000:]
        for undo in reversed(held):
            try:
                undo()
            except Exception:
                out.setdefault("cleanup_errors", []).append(traceback.format_exc()[-500:])
        out["seconds"] = round(time.monotonic() - t0, 2)
        if not wait_free(total):
            out["error"] = (out.get("error") or "") + "resources not all free after cleanup: " + json.dumps(ray.available_resources())
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
