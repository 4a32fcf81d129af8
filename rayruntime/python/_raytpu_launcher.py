"""raytpu launcher: turns a compiled raytpu plan into the real Ray library call.

The Go side (package rayruntime, Files) ships this file, the modules it
imports, raytpu_protocol.json and the plan at the root of the job's
working_dir and runs `python _raytpu_launcher.py`. The launcher prints one
line, RESULT_PREFIX and the outcome as JSON, when the workload ends; the Go
side parses it (rayruntime.ParseResult). Keep this thin: every rule is
checked in Go before the job is submitted. The keys it reads are the wire
types of the protocol description; its unit tests check that it reads
exactly those.
"""

import importlib
import json
import os
import sys
import time

import _raytpu_runtime as rt

PROTOCOL = rt.PROTOCOL
ITER_JAX_BATCHES_KEY = PROTOCOL["iter_jax_batches_key"]
CALLABLE_KWARG = PROTOCOL["callable_kwarg"]


def emit(result):
    """Prints the outcome line."""
    sys.stdout.flush()
    print(rt.RESULT_PREFIX + json.dumps(result, sort_keys=True, default=str), flush=True)


def _load(import_path):
    module_name, _, func_name = import_path.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    module = importlib.import_module(module_name)
    return getattr(module, func_name)


def _checkpoint_path(checkpoint):
    if checkpoint is None:
        return None
    return rt.storage_uri(checkpoint.filesystem, checkpoint.path)


# google-cloud-cpp's variable for a Cloud Storage emulator (fake-gcs-server
# in raytpu's tests): pyarrow's GcsFileSystem sends its requests there, but
# still looks for Google credentials first, which an emulator has none of
# (with no metadata server the lookup retries for minutes).
STORAGE_EMULATOR_ENV = "CLOUD_STORAGE_EMULATOR_ENDPOINT"


def storage_filesystem(storage_path, environ=None):
    """RunConfig's (storage_path, storage_filesystem) for storage_path:
    with a gs:// path and a Cloud Storage emulator in the environment, an
    anonymous GcsFileSystem at the emulator and the path without its
    scheme; else storage_path as it is and None (Ray's own resolution)."""
    endpoint = (environ if environ is not None else os.environ).get(STORAGE_EMULATOR_ENV, "")
    if not storage_path or not storage_path.startswith("gs://") or not endpoint:
        return storage_path, None
    from pyarrow.fs import GcsFileSystem

    scheme, _, host = endpoint.rpartition("://")
    return storage_path[len("gs://"):], GcsFileSystem(
        anonymous=True, scheme=scheme or "https", endpoint_override=host.rstrip("/"))


def iter_jax_batches_kwargs(config, name):
    """The iter_jax_batches keyword arguments compiled for dataset name."""
    return dict(config[ITER_JAX_BATCHES_KEY][name])


def raytpu_iter_jax_batches(config, name):
    """Iterates this worker's shard of dataset `name` as the trainer said.

    Call it from a train loop that received `config` (train_loop_config):
    it returns ray.train.get_dataset_shard(name).iter_jax_batches(**opts)
    with the options compiled in Go, so the loop never re-types them.
    """
    import ray.train

    return ray.train.get_dataset_shard(name).iter_jax_batches(**iter_jax_batches_kwargs(config, name))


def op_call(op):
    """An Op as (name, kwargs)."""
    return op["op"], dict(op["kwargs"])


def dataset_calls(spec):
    """A Dataset's source and steps as (name, kwargs) calls, in order."""
    return [op_call(spec["source"])] + [op_call(s) for s in spec["steps"] or []]


def _call_kwargs(kwargs):
    import ray.data

    out = dict(kwargs)
    value = out.get(CALLABLE_KWARG)
    if isinstance(value, str) and ":" in value:
        out[CALLABLE_KWARG] = _load(value)
    if isinstance(out.get("compute"), dict):
        out["compute"] = ray.data.ActorPoolStrategy(**out["compute"])
    return out


def build_dataset(calls):
    """Builds a Ray Dataset from its dataset_calls."""
    import ray.data

    (source, kwargs), steps = calls[0], calls[1:]
    ds = getattr(ray.data, source)(**_call_kwargs(kwargs))
    for name, kwargs in steps:
        ds = getattr(ds, name)(**_call_kwargs(kwargs))
    return ds


def datasets_call(spec):
    """A TrainDatasets as plain data, or None without datasets."""
    if not spec:
        return None
    for name, d in spec["datasets"].items():
        if d.get("sink") is not None:
            raise ValueError("raytpu: launcherConfig.datasets.datasets[%r].sink is set: a trainer's dataset "
                             "is iterated by the workers, it cannot end in a write" % name)
    return {
        "datasets": {name: dataset_calls(d) for name, d in spec["datasets"].items()},
        "dataset_config": dict(spec["dataset_config"]),
        "iter_jax_batches": {name: dict(kw) for name, kw in spec["iter_jax_batches"].items()},
    }


def scaling_kwargs(scaling):
    """ScalingConfig's keyword arguments from a TrainScaling."""
    num_workers = scaling["num_workers"]
    if scaling.get("min_workers"):
        # An elastic group: Ray's num_workers=(min_workers, max_workers).
        num_workers = (scaling["min_workers"], num_workers)
    out = {
        "num_workers": num_workers,
        "use_tpu": scaling["use_tpu"],
        "use_gpu": scaling["use_gpu"],
        "placement_strategy": scaling["placement_strategy"],
    }
    for key in ("accelerator_type", "topology", "resources_per_worker", "label_selector", "elastic_resize_monitor_interval_s"):
        if scaling.get(key):
            out[key] = scaling[key]
    return out


def run_kwargs(run):
    """The keyword arguments of RunConfig and of the FailureConfig,
    CheckpointConfig and LoggingConfig it holds, from a TrainRun, by
    config: {"run", "failure", "checkpoint", "logging" (or None)}."""
    failure = {"max_failures": run["max_failures"]}
    for key in ("controller_failure_limit", "max_preemption_failures", "relax_collectives_on_preemption", "preemption_grace_s"):
        if run.get(key) is not None:
            failure[key] = run[key]
    out = {"name": run["name"]}
    if run.get("storage_path"):
        out["storage_path"] = run["storage_path"]
    if run.get("worker_env_vars"):
        out["worker_runtime_env"] = {"env_vars": run["worker_env_vars"]}
    return {
        "run": out,
        "failure": failure,
        "checkpoint": {
            "num_to_keep": run.get("num_to_keep") or None,
            "checkpoint_score_attribute": run.get("checkpoint_score_attribute") or None,
            "checkpoint_score_order": run["checkpoint_score_order"],
        },
        "logging": {"log_level": run["log_level"]} if run.get("log_level") else None,
    }


def train_call(cfg):
    """A TrainConfig as plain data: every Ray config's keyword arguments,
    the datasets and the profiler port (None: no profiler)."""
    run = cfg["run_config"]
    profiler = run.get("profiler")
    jax_config = cfg.get("jax_config")
    out = {
        "train_loop_per_worker": cfg["train_loop_per_worker"],
        "train_loop_config": cfg.get("train_loop_config"),
        "scaling": scaling_kwargs(cfg["scaling_config"]),
        "jax": None if jax_config is None else dict(jax_config),
        "datasets": datasets_call(cfg.get("datasets")),
        "profiler_port": None if profiler is None else profiler["port"],
    }
    out.update(run_kwargs(run))
    return out


def run_train(cfg, warnings):
    """Builds the real JaxTrainer of a TrainConfig and calls fit()."""
    import ray
    from ray.train import CheckpointConfig, DataConfig
    from ray.train.v2.api.config import FailureConfig, LoggingConfig, RunConfig, ScalingConfig
    from ray.train.v2.jax import JaxConfig, JaxTrainer

    import _raytpu_recorder as rec

    for missing in rt.missing_private_apis():
        warnings.append("private Ray API missing, the run's record may be incomplete: " + missing)
    call = train_call(cfg)
    train_fn = _load(call["train_loop_per_worker"])
    trainer_kwargs = {"scaling_config": ScalingConfig(**call["scaling"])}
    loop_config = call["train_loop_config"]
    if call["jax"] is not None:
        trainer_kwargs["jax_config"] = JaxConfig(**call["jax"])

    ray.init(address="auto", log_to_driver=True)
    if call["datasets"] is not None:
        ds = call["datasets"]
        trainer_kwargs["datasets"] = {name: build_dataset(c) for name, c in ds["datasets"].items()}
        trainer_kwargs["dataset_config"] = DataConfig(**ds["dataset_config"])
        loop_config = dict(loop_config or {})
        loop_config[ITER_JAX_BATCHES_KEY] = ds["iter_jax_batches"]
    if loop_config is not None:
        trainer_kwargs["train_loop_config"] = loop_config
    recorder = rec.start_recorder()
    run_config = dict(call["run"], failure_config=FailureConfig(**call["failure"]),
                      checkpoint_config=CheckpointConfig(**call["checkpoint"]),
                      callbacks=[rec.recording_callback(recorder)])
    if call["logging"] is not None:
        run_config["logging_config"] = LoggingConfig(**call["logging"])
    run_config["storage_path"], fs = storage_filesystem(run_config.get("storage_path"))
    if fs is not None:
        run_config["storage_filesystem"] = fs
    if run_config["storage_path"] is None:
        del run_config["storage_path"]
    trainer_kwargs["run_config"] = RunConfig(**run_config)
    nodes_before = rec.node_table()
    t0 = time.time()
    close_profiler = None
    if call["profiler_port"] is not None:
        registry, close_profiler = rec.start_profiler_registry(warnings)
        train_fn = rec.with_profiler(train_fn, call["profiler_port"], registry)
    trainer = JaxTrainer(train_fn, **trainer_kwargs)
    try:
        result = trainer.fit()
    except Exception as exc:  # Ray raises TrainingFailedError on failure.
        out = {"kind": "JaxTrainer", "error": rt.error_info(exc)}
        out.update(rec.recovery_report(recorder, nodes_before, t0, call["scaling"], warnings))
        return out, 1
    finally:
        if close_profiler is not None:
            close_profiler()
    out = rec.recovery_report(recorder, nodes_before, t0, call["scaling"], warnings)
    out.update({
        "kind": "JaxTrainer",
        "metrics": rec.jsonable(result.metrics),
        "checkpoint": _checkpoint_path(result.checkpoint),
        "path": rt.storage_uri(getattr(result, "filesystem", None), result.path),
        "best_checkpoints": [
            {"path": _checkpoint_path(c), "metrics": rec.jsonable(m)}
            for c, m in (result.best_checkpoints or [])
        ],
    })
    if getattr(result, "return_value", None) is not None:
        out["return_value"] = rec.jsonable(result.return_value)
    if result.error is not None:
        out["error"] = rt.error_info(result.error)
        return out, 1
    return out, 0


def _files_under(path):
    if "://" in path or not os.path.isdir(path):
        return None
    return sorted(
        os.path.relpath(os.path.join(d, f), path)
        for d, _, files in os.walk(path)
        for f in files
        if not f.startswith(".")
    )


def pipeline_call(cfg):
    """A PipelineConfig as plain data: name, dataset calls and sink call."""
    return {"name": cfg["name"], "dataset": dataset_calls(cfg), "sink": op_call(cfg["sink"])}


def run_data(cfg, warnings):
    """Builds a compiled Ray Data pipeline and runs its sink.

    The pipeline gets exactly the keyword arguments compiled in Go, as a
    hand-written one would: nothing is added. An actor pool's fault
    tolerance is Ray Data's own default (max_restarts=-1 and, unless
    max_restarts is 0, max_task_retries=-1: a dead actor is restarted and
    its calls retried), so every row is written once.
    """
    import ray

    call = pipeline_call(cfg)
    # Import Ray Data and the pipeline's callables before connecting, in
    # the order of a hand-written driver (`from model import Model` above
    # ray.init()), so that the driver does the same work at the same time.
    import ray.data  # noqa: F401

    for _, kwargs in call["dataset"] + [call["sink"]]:
        value = kwargs.get(CALLABLE_KWARG)
        if isinstance(value, str) and ":" in value:
            _load(value)
    ray.init(address="auto", log_to_driver=True)
    ds = build_dataset(call["dataset"])
    sink, kwargs = call["sink"]
    kwargs = _call_kwargs(kwargs)
    getattr(ds, sink)(**kwargs)
    out = {"kind": "Pipeline", "name": call["name"], "sink": sink, "path": kwargs.get("path")}
    files = _files_under(kwargs.get("path") or "")
    if files is not None:
        out["files"] = files
    return out, 0


LAUNCHERS = {"train": run_train, "data": run_data}


def main(plan_file=None):
    with open(plan_file or PROTOCOL["files"]["plan"]) as f:
        plan = json.load(f)
    job = plan["job"]
    warnings = []
    launcher = LAUNCHERS.get(job["launcher"])
    if launcher is None:
        emit({"error": {"type": "ValueError", "message": "unknown launcher %r (want one of %s)" % (job["launcher"], sorted(LAUNCHERS))}})
        return 2
    try:
        result, code = launcher(job["launcherConfig"], warnings)
    except Exception as exc:
        rt.report_exception("the %s launcher failed" % job["launcher"])
        result, code = {"error": rt.error_info(exc)}, 1
    if warnings:
        result["warnings"] = warnings
    emit(result)
    return code


if __name__ == "__main__":
    sys.exit(main())
