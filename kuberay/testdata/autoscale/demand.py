"""What Ray's v1 autoscaler launches for a RayCluster's resource demands.

Reads {"cases": [{"cluster": <RayCluster object>, "demands": [[<bundle>, ...], ...]}, ...]}
from stdin. For each case it derives the autoscaler's node types from the
RayCluster exactly as the autoscaler does under KubeRay
(_derive_autoscaling_config_from_ray_cr) and, for each demand (bundles
pending together), asks v1's scheduler (get_nodes_for, with the default
utilization scorer) which nodes it would add to a cluster holding only
the head. Prints one JSON
object: {"results": [{"types": {type: resources}, "demands": [{"launch":
{type: n}, "infeasible": [bundle, ...]}, ...]}, ...]}.
"""
import json
import logging
import sys
from functools import partial

from ray.autoscaler._private.kuberay.autoscaling_config import _derive_autoscaling_config_from_ray_cr
from ray.autoscaler._private.node_provider_availability_tracker import NodeAvailabilitySummary
from ray.autoscaler._private.resource_demand_scheduler import _default_utilization_scorer, get_nodes_for

logging.disable(logging.WARNING)  # the scheduler's warning repeats what "infeasible" says


def main():
    req = json.load(sys.stdin)
    scorer = partial(_default_utilization_scorer, node_availability_summary=NodeAvailabilitySummary(node_availabilities={}))
    results = []
    for case in req["cases"]:
        cfg = _derive_autoscaling_config_from_ray_cr(case["cluster"])
        types, head = cfg["available_node_types"], cfg["head_node_type"]
        out = {"types": {name: t["resources"] for name, t in types.items()}, "demands": []}
        for bundles in case["demands"]:
            launch, infeasible = get_nodes_for(types, {head: 1}, head, 10, bundles, scorer)
            out["demands"].append({"launch": launch, "infeasible": infeasible})
        results.append(out)
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    main()
