"""Answer questions about the installed Ray's TPU rules for ray_test.go.

Reads a JSON request on stdin:

    {"generations": [{"version": "v6e", "names": ["v6e", "TPU-V6E"],
                      "acceleratorType": "TPU-V6E", "topologies": ["4x4", ...]}],
     "podTypes": ["v6e-16", ...]}

and writes on stdout Ray's own tables plus, for every generation and every
topology (the request's and every one in Ray's VALID_TPU_TOPOLOGY for that
version), what Ray's functions say:

    is_valid_tpu_accelerator_topology(name, topology) for each name
    get_chips_per_host(topology, version)
    infer_tpu_pod_type_from_topology(topology, acceleratorType)
    get_num_tpu_visible_chips_per_host(pod type)

and for every pod type get_total_chips_from_accelerator_type.
"""

import json
import sys

import ray
from ray._private.accelerators import tpu


def main():
    req = json.load(sys.stdin)
    out = {
        "rayVersion": ray.__version__,
        "validTypes": list(tpu.VALID_TPU_TYPES),
        "validTopology": {k: sorted(v) for k, v in tpu.VALID_TPU_TOPOLOGY.items()},
        "generations": [],
        "podTypes": {},
    }
    for gen in req["generations"]:
        version = gen["version"]
        topologies = list(gen["topologies"])
        seen = set(topologies)
        for t in sorted(tpu.VALID_TPU_TOPOLOGY.get(version, ())):
            if t not in seen:
                topologies.append(t)
                seen.add(t)
        results = {}
        for t in topologies:
            pod_type = tpu.infer_tpu_pod_type_from_topology(t, gen["acceleratorType"])
            results[t] = {
                "valid": {
                    name: tpu.TPUAcceleratorManager.is_valid_tpu_accelerator_topology(name, t)
                    for name in gen["names"]
                },
                "chipsPerHost": tpu.get_chips_per_host(t, version),
                "podType": pod_type,
                "visibleChipsPerHost": tpu.get_num_tpu_visible_chips_per_host(pod_type),
            }
        out["generations"].append({"version": version, "results": results})
    for pt in req["podTypes"]:
        out["podTypes"][pt] = tpu.get_total_chips_from_accelerator_type(pt)
    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
