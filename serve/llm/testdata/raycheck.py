"""Judge Serve LLM application configs with the installed Ray's own code.

Run with the LLM virtualenv's python (scripts/setup-venv-llm.sh: Ray 2.60
with vLLM, which ray.serve.llm needs to import). Reads
{"configs": [{"id": ..., "config": {...}}, ...]} on stdin, each config a
Serve application as a `serve deploy` file holds it, and writes JSON lines
on stdout: first {"ray_version", "vllm_version", "import_s"}, then one
{"id", "stage", "error", "deployments"} per config, in order.

stage is "ok", or where Ray refused the config:
  "schema"      ServeDeploySchema (PUT /api/serve/applications/ answers 400)
  "llm_config"  LLMConfig(**c) of one of args.llm_configs
  "build"       the controller's build step: the import path called with
                the args (build_openai_app validates LLMServingArgs and
                builds the deployments), then build_app over the result
  "deploy"      the controller's override_deployment_info, which applies
                the config's application options (route_prefix) to the
                built deployments
deployments names the built application's deployments when stage is ok.

Nothing starts: no Ray node, no engine. The controller runs the build step
in a task whose runtime_env is the application's; Serve LLM's
get_deployment_options reads it with ray.get_runtime_context().runtime_env,
the one thing at build time that needs a connected worker. The script
answers that call with the application's runtime_env instead of starting a
Ray node, and turns off Ray's auto-init so that nothing else can start one
unnoticed (an attempt fails the build stage and shows in its error).
"""

import json
import os
import sys
import time
import warnings

warnings.simplefilter("ignore")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ["RAY_ENABLE_AUTO_CONNECT"] = "0"

# vLLM's and Serve's loggers write to sys.stdout; the verdicts go to the
# real stdout only.
_out = sys.stdout
sys.stdout = sys.stderr

_t0 = time.monotonic()
import ray  # noqa: E402
from ray.serve._private.application_state import override_deployment_info  # noqa: E402
from ray.serve._private.api import call_user_app_builder_with_args_if_necessary  # noqa: E402
from ray.serve._private.build_app import build_app  # noqa: E402
from ray.serve._private.utils import import_attr  # noqa: E402
from ray.serve.llm import LLMConfig  # noqa: E402
from ray.serve.schema import ServeDeploySchema  # noqa: E402
import vllm  # noqa: E402

_import_s = time.monotonic() - _t0


class _BuildTaskContext:
    """What ray.get_runtime_context() is in the controller's build task, as
    far as the build reads it: the application's runtime_env."""

    def __init__(self, runtime_env):
        self.runtime_env = dict(runtime_env or {})


_app_runtime_env = {}
ray.get_runtime_context = lambda: _BuildTaskContext(_app_runtime_env)


def error(e):
    return f"{type(e).__name__}: {e}"


def check(cfg):
    res = {"stage": "ok", "error": "", "deployments": []}
    try:
        schema = ServeDeploySchema.model_validate({"applications": [cfg]})
    except Exception as e:  # pydantic ValidationError, ValueError
        res.update(stage="schema", error=error(e))
        return res
    app_schema = schema.applications[0]
    args = cfg.get("args") or {}
    for c in args.get("llm_configs") or []:
        try:
            LLMConfig(**c)
        except Exception as e:
            res.update(stage="llm_config", error=error(e))
            return res
    global _app_runtime_env
    _app_runtime_env = app_schema.runtime_env
    try:
        app = call_user_app_builder_with_args_if_necessary(
            import_attr(app_schema.import_path), args
        )
        built = build_app(app, name=app_schema.name, default_runtime_env={})
        built.validate_single_fastapi_ingress()
    except Exception as e:
        res.update(stage="build", error=error(e))
        return res
    res["deployments"] = sorted(d.name for d in built.deployments)
    try:
        # The config overrides no deployment: only its application options
        # are applied, so no deployment infos are needed.
        override_deployment_info({}, app_schema)
    except Exception as e:
        res.update(stage="deploy", error=error(e))
    return res


def emit(obj):
    _out.write(json.dumps(obj) + "\n")
    _out.flush()


def main():
    req = json.load(sys.stdin)
    emit(
        {
            "ray_version": ray.__version__,
            "vllm_version": vllm.__version__,
            "import_s": round(_import_s, 2),
        }
    )
    for c in req["configs"]:
        print(f"raycheck: {c['id']}", file=sys.stderr, flush=True)
        r = check(c["config"])
        r["id"] = c["id"]
        emit(r)


if __name__ == "__main__":
    main()
