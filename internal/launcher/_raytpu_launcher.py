"""raytpu launcher: turns a compiled raytpu plan into the real Ray library call.

The Go side ships this file and _raytpu_plan.json at the root of the job's
working_dir and runs `python _raytpu_launcher.py`. The launcher prints one
line `RAYTPU_RESULT <json>` when the workload ends; the Go side parses it.
Keep this thin: every rule is checked in Go before the job is submitted.
"""

import importlib
import json
import os
import sys
import traceback

PLAN_FILE = "_raytpu_plan.json"
RESULT_PREFIX = "RAYTPU_RESULT "


def _emit(result):
    sys.stdout.flush()
    print(RESULT_PREFIX + json.dumps(result, sort_keys=True, default=str), flush=True)


def _load(import_path):
    module_name, _, func_name = import_path.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    module = importlib.import_module(module_name)
    return getattr(module, func_name)


def _checkpoint_path(checkpoint):
    return None if checkpoint is None else checkpoint.path


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


def run_train(cfg):
    import ray
    from ray.train import CheckpointConfig, FailureConfig
    from ray.train.v2.api.config import RunConfig, ScalingConfig
    from ray.train.v2.jax import JaxTrainer

    scaling = cfg["scaling_config"]
    run = cfg["run_config"]
    scaling_kwargs = {
        "num_workers": scaling["num_workers"],
        "use_tpu": scaling["use_tpu"],
        "use_gpu": scaling["use_gpu"],
        "placement_strategy": scaling["placement_strategy"],
    }
    for key in ("accelerator_type", "topology", "resources_per_worker", "label_selector"):
        if scaling.get(key):
            scaling_kwargs[key] = scaling[key]

    run_kwargs = {
        "name": run["name"],
        "failure_config": FailureConfig(max_failures=run["max_failures"]),
        "checkpoint_config": CheckpointConfig(
            num_to_keep=run.get("num_to_keep") or None,
            checkpoint_score_attribute=run.get("checkpoint_score_attribute") or None,
            checkpoint_score_order=run["checkpoint_score_order"],
        ),
    }
    if run.get("storage_path"):
        run_kwargs["storage_path"] = run["storage_path"]
    if run.get("worker_env_vars"):
        run_kwargs["worker_runtime_env"] = {"env_vars": run["worker_env_vars"]}

    train_fn = _load(cfg["train_loop_per_worker"])
    trainer_kwargs = {
        "scaling_config": ScalingConfig(**scaling_kwargs),
        "run_config": RunConfig(**run_kwargs),
    }
    if cfg.get("train_loop_config") is not None:
        trainer_kwargs["train_loop_config"] = cfg["train_loop_config"]

    ray.init(address="auto", log_to_driver=True)
    trainer = JaxTrainer(train_fn, **trainer_kwargs)
    try:
        result = trainer.fit()
    except Exception as exc:  # Ray raises TrainingFailedError on failure.
        return {
            "kind": "JaxTrainer",
            "error": {"type": type(exc).__name__, "message": str(exc)},
        }, 1
    out = {
        "kind": "JaxTrainer",
        "metrics": _jsonable(result.metrics),
        "checkpoint": _checkpoint_path(result.checkpoint),
        "path": result.path,
        "best_checkpoints": [
            {"path": _checkpoint_path(c), "metrics": _jsonable(m)}
            for c, m in (result.best_checkpoints or [])
        ],
    }
    if getattr(result, "return_value", None) is not None:
        out["return_value"] = _jsonable(result.return_value)
    if result.error is not None:
        out["error"] = {"type": type(result.error).__name__, "message": str(result.error)}
        return out, 1
    return out, 0


LAUNCHERS = {"train": run_train}


def main():
    with open(PLAN_FILE) as f:
        plan = json.load(f)
    job = plan["job"]
    launcher = LAUNCHERS.get(job.get("launcher"))
    if launcher is None:
        _emit({"error": {"type": "ValueError", "message": "unknown launcher %r" % job.get("launcher")}})
        return 2
    try:
        result, code = launcher(job["launcherConfig"])
    except Exception as exc:
        traceback.print_exc()
        result, code = {"error": {"type": type(exc).__name__, "message": str(exc)}}, 1
    _emit(result)
    return code


if __name__ == "__main__":
    sys.exit(main())
