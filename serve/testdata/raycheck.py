"""Validate Serve application configs with the installed Ray's own classes.

Reads {"configs": [{"id": ..., "config": {...}}, ...]} on stdin and writes
{"ray_version": ..., "results": [{"id", "stage", "error", "dropped"}]}.

stage is "ok", "schema" (ServeDeploySchema rejects it: PUT answers 400) or
"deploy" (Serve's controller rejects it when it applies the config to the
deployments in code: the app becomes DEPLOY_FAILED). The deploy step is
Ray's override_deployment_info, run over stand-in deployments in code named
as in the config and set with no options. dropped lists the keys Ray's
models silently drop (unknown to Ray).
"""

import json
import sys
import warnings

warnings.simplefilter("ignore")

import ray  # noqa: E402
from ray.serve._private.application_state import override_deployment_info  # noqa: E402
from ray.serve._private.config import DeploymentConfig, ReplicaConfig  # noqa: E402
from ray.serve._private.deployment_info import DeploymentInfo  # noqa: E402
from ray.serve.config import AutoscalingConfig  # noqa: E402
from ray.serve.schema import (  # noqa: E402
    DeploymentSchema,
    RayActorOptionsSchema,
    ServeApplicationSchema,
    ServeDeploySchema,
)


def dropped(cfg):
    out = []

    def check(path, d, model):
        if not isinstance(d, dict):
            return
        for k in d:
            if k not in model.model_fields:
                out.append(f"{path}.{k}")

    check("app", cfg, ServeApplicationSchema)
    for i, d in enumerate(cfg.get("deployments") or []):
        p = f"app.deployments[{i}]"
        check(p, d, DeploymentSchema)
        check(p + ".ray_actor_options", d.get("ray_actor_options"), RayActorOptionsSchema)
        check(p + ".autoscaling_config", d.get("autoscaling_config"), AutoscalingConfig)
    return out


def deploy(app):
    infos = {}
    for d in app.deployments:
        if d.name:
            infos[d.name] = DeploymentInfo(
                deployment_config=DeploymentConfig(),
                replica_config=ReplicaConfig.create("module:Deployment"),
                start_time_ms=0,
                deployer_job_id="raytpu",
                route_prefix="/",
            )
    override_deployment_info(infos, app)


def check(cfg):
    res = {"stage": "ok", "error": "", "dropped": dropped(cfg)}
    try:
        schema = ServeDeploySchema.model_validate({"applications": [cfg]})
    except Exception as e:  # pydantic ValidationError, ValueError
        res.update(stage="schema", error=f"{type(e).__name__}: {e}")
        return res
    try:
        deploy(schema.applications[0])
    except Exception as e:
        res.update(stage="deploy", error=f"{type(e).__name__}: {e}")
    return res


def main():
    req = json.load(sys.stdin)
    results = []
    for c in req["configs"]:
        r = check(c["config"])
        r["id"] = c["id"]
        results.append(r)
    json.dump({"ray_version": ray.__version__, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
