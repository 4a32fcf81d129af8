"""Prints the dashboard's answer to GET /api/cluster_status for a known
autoscaler v1 report, made by Ray's own code: the autoscaler's summary
dataclass as its monitor writes it, and the dashboard's key conversion
(to_google_style) as rest_response applies it."""

import json
from dataclasses import asdict

from ray.autoscaler._private.autoscaler import AutoscalerSummary
from ray.dashboard.utils import to_google_style

summary = AutoscalerSummary(
    active_nodes={"headgroup": 1, "tpu_v4-2x2x2": 1},
    idle_nodes=None,
    # A pod with no IP yet, still being set up.
    pending_nodes=[(None, "tpu_v4-2x2x2", "waiting-for-ssh")],
    pending_launches={"tpu_v4-2x2x2": 2, "cpu-group": 1},
    failed_nodes=[("10.0.0.9", "tpu_v4-2x2x2")],
    pending_resources={"TPU": 8},
    # 10.0.0.3 runs but its Ray node has not registered: neither active
    # nor pending. The pending pod with no IP is there under None.
    node_type_mapping={
        None: "tpu_v4-2x2x2",
        "10.0.0.1": "headgroup",
        "10.0.0.2": "tpu_v4-2x2x2",
        "10.0.0.3": "tpu_v4-2x2x2",
        "10.0.0.9": "tpu_v4-2x2x2",
    },
    legacy=True,
)
status = {
    "time": 1796000000.5,
    "monitor_pid": 42,
    "autoscaler_report": asdict(summary),
    "load_metrics_report": {"usage": {}},
}
data = {
    "autoscaling_status": None,
    "autoscaling_error": "launch failed: quota",
    # The monitor stores the report as JSON; the dashboard loads it back.
    "cluster_status": json.loads(json.dumps(status)),
}
print(json.dumps({"result": True, "msg": "Got cluster status.", "data": to_google_style(data)}))
