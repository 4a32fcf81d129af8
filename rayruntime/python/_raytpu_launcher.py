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
import time
import traceback

PLAN_FILE = "_raytpu_plan.json"
RESULT_PREFIX = "RAYTPU_RESULT "
# With run_config.profiler, the driver prints one line with this prefix and
# a JSON object per train worker whose JAX profiler server started (rank,
# node_id, ip, port, pid; or error): raytpu's profiler package reads them
# from the job's log.
PROFILER_PREFIX = "RAYTPU_PROFILER "

# The key under which the "train" entry adds every dataset's
# iter_jax_batches keyword arguments to train_loop_config: a dict by dataset
# name. A train loop iterates its shard with raytpu_iter_jax_batches(config,
# name), or reads the dict itself.
ITER_JAX_BATCHES_KEY = "_raytpu_iter_jax_batches"

# Keyword arguments of a Ray Data call that hold a "module:attr" callable.
CALLABLE_KWARGS = ("fn",)


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


def raytpu_iter_jax_batches(config, name):
    """Iterates this worker's shard of dataset `name` as the trainer said.

    Call it from a train loop that received `config` (train_loop_config):
    it returns ray.train.get_dataset_shard(name).iter_jax_batches(**opts)
    with the options compiled in Go, so the loop never re-types them.
    """
    import ray.train

    opts = config[ITER_JAX_BATCHES_KEY][name]
    return ray.train.get_dataset_shard(name).iter_jax_batches(**opts)


def _call_kwargs(kwargs):
    import ray.data

    out = dict(kwargs)
    for key in CALLABLE_KWARGS:
        if isinstance(out.get(key), str) and ":" in out[key]:
            out[key] = _load(out[key])
    if isinstance(out.get("compute"), dict):
        out["compute"] = ray.data.ActorPoolStrategy(**out["compute"])
    return out


def build_dataset(spec):
    """Builds a Ray Dataset from its compiled source and steps."""
    import ray.data

    source = spec["source"]
    ds = getattr(ray.data, source["op"])(**_call_kwargs(source["kwargs"]))
    for step in spec.get("steps") or []:
        ds = getattr(ds, step["op"])(**_call_kwargs(step["kwargs"]))
    return ds


def _train_datasets(cfg, trainer_kwargs):
    """Adds datasets=, dataset_config= and the loop's iterator options."""
    from ray.train import DataConfig

    spec = cfg.get("datasets")
    if not spec:
        return
    trainer_kwargs["datasets"] = {name: build_dataset(d) for name, d in spec["datasets"].items()}
    trainer_kwargs["dataset_config"] = DataConfig(**spec["dataset_config"])
    loop_config = dict(trainer_kwargs.get("train_loop_config") or {})
    loop_config[ITER_JAX_BATCHES_KEY] = spec["iter_jax_batches"]
    trainer_kwargs["train_loop_config"] = loop_config


def _recording_callback(recorder):
    """A Ray Train callback that tells the recorder actor what the
    controller does: each worker group start (its workers' nodes and the
    checkpoint it starts from), each state change, failure and resize
    decision. It runs inside the controller, so it never raises."""
    from ray.train.v2._internal.execution.callback import (
        ControllerCallback,
        ReportCallback,
        WorkerGroupCallback,
    )

    class RaytpuRecorder(ControllerCallback, WorkerGroupCallback, ReportCallback):
        def __init__(self, recorder):
            self._recorder = recorder
            self._latest = None

        def _add(self, kind, **event):
            try:
                event.update(kind=kind, time=time.time())
                self._recorder.add.remote(event)
            except Exception:
                pass

        def after_report(self, training_report, metrics):
            try:
                if training_report.checkpoint is not None:
                    self._latest = {
                        "path": training_report.checkpoint.path,
                        "metrics": _jsonable(training_report.metrics),
                    }
            except Exception:
                pass

        def after_worker_group_start(self, worker_group):
            try:
                workers = []
                for i, w in enumerate(worker_group.get_workers()):
                    ctx = getattr(w, "distributed_context", None)
                    workers.append({
                        "rank": getattr(ctx, "world_rank", i),
                        "node_id": w.metadata.node_id,
                        "ip": w.metadata.node_ip,
                    })
                self._add("group_started", workers=workers, resumed_from=self._latest)
            except Exception as exc:
                self._add("recorder_error", message=repr(exc))

        def after_controller_state_update(self, previous_state, current_state):
            try:
                if previous_state is not None and previous_state._state_type == current_state._state_type:
                    return  # RUNNING -> RUNNING on every poll
                err = getattr(current_state, "training_failed_error", None)
                event = {"state": current_state._state_type.state_name}
                if err is not None:
                    event["error"] = "%s: %s" % (type(err).__name__, str(err)[:500])
                self._add("state", **event)
            except Exception as exc:
                self._add("recorder_error", message=repr(exc))

        def before_controller_execute_failure_decision(self, failure_decision):
            self._add("failure_decision", decision=getattr(failure_decision, "value", str(failure_decision)))

        def before_controller_execute_resize_decision(self, resize_decision):
            self._add("resize_decision", num_workers=getattr(resize_decision, "num_workers", None))

    return RaytpuRecorder(recorder)


def _start_recorder():
    """Starts the actor that collects the callback's events, pinned to the
    driver's node so that it outlives any worker host."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    @ray.remote(num_cpus=0)
    class _Recorder:
        def __init__(self):
            self.events = []

        def add(self, event):
            self.events.append(event)

        def get(self):
            return self.events

    here = ray.get_runtime_context().get_node_id()
    return _Recorder.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote()


def _node_table():
    import ray

    table = {}
    for n in ray.nodes():
        labels = n.get("Labels") or {}
        table[n["NodeID"]] = {
            "node_id": n["NodeID"],
            "ip": n.get("NodeManagerAddress", ""),
            "alive": bool(n.get("Alive")),
            "slice": labels.get("ray.io/tpu-slice-name", ""),
            "tpu_worker_id": labels.get("ray.io/tpu-worker-id", ""),
        }
    return table


def _recovery_report(recorder, nodes_before, t0, scaling):
    """What happened to the worker group during fit(): every start of the
    group with its slices and the checkpoint it resumed from, the hosts
    that died, the controller's timeline and, for TPU, the intact slices
    left at the end."""
    import ray

    try:
        events = ray.get(recorder.get.remote(), timeout=30)
    except Exception as exc:
        return {"recorder_error": repr(exc)}
    nodes_after = _node_table()
    table = dict(nodes_before)
    table.update({k: v for k, v in nodes_after.items() if k not in table})

    def host(node_id):
        n = dict(table.get(node_id) or {"node_id": node_id})
        n.pop("alive", None)
        return n

    attempts, timeline = [], []
    for e in events:
        at = round(e["time"] - t0, 3)
        if e["kind"] == "group_started":
            workers = []
            for w in sorted(e["workers"], key=lambda w: w["rank"]):
                h = host(w["node_id"])
                h["rank"] = w["rank"]
                workers.append(h)
            slices = []
            for w in workers:
                if w.get("slice") and w["slice"] not in slices:
                    slices.append(w["slice"])
            attempts.append({"at_s": at, "workers": workers, "slices": slices, "resumed_from": e.get("resumed_from")})
        else:
            item = {k: v for k, v in e.items() if k not in ("time",)}
            item["at_s"] = at
            timeline.append(item)
    lost = []
    for node_id, before in sorted(nodes_before.items(), key=lambda kv: (kv[1]["slice"], kv[1]["tpu_worker_id"], kv[0])):
        after = nodes_after.get(node_id)
        if before["alive"] and (after is None or not after["alive"]):
            lost.append(host(node_id))
    out = {"fit_started_at": t0, "attempts": attempts, "timeline": timeline, "lost_hosts": lost}
    if scaling.get("use_tpu") and scaling.get("topology") and scaling.get("accelerator_type"):
        try:
            from ray.util.tpu import get_num_tpu_slices

            out["intact_slices"] = get_num_tpu_slices(
                topology=scaling["topology"], accelerator_type=scaling["accelerator_type"]
            )
        except Exception as exc:
            out["intact_slices_error"] = repr(exc)
    return out


def _start_profiler_registry():
    """Starts the actor the train workers tell where their profiler server
    listens, pinned to the driver's node, and a driver thread that prints
    each report as a PROFILER_PREFIX line. Workers do not print them
    themselves: Ray's log deduplication would fold their lines into one."""
    import threading

    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    @ray.remote(num_cpus=0)
    class _ProfilerRegistry:
        def __init__(self):
            self.servers = []

        def add(self, server):
            self.servers.append(server)

        def since(self, n):
            return self.servers[n:]

    here = ray.get_runtime_context().get_node_id()
    registry = _ProfilerRegistry.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote()
    stop = threading.Event()

    def printer():
        seen, last = 0, False
        while True:
            try:
                for server in ray.get(registry.since.remote(seen), timeout=30):
                    print(PROFILER_PREFIX + json.dumps(server, sort_keys=True), flush=True)
                    seen += 1
            except Exception:
                pass
            if last:
                return
            last = stop.wait(0.5)

    thread = threading.Thread(target=printer, name="raytpu-profiler-registry", daemon=True)
    thread.start()

    def close():
        stop.set()
        thread.join(timeout=35)

    return registry, close


def _with_profiler(train_fn, port, registry):
    """Returns train_fn behind a wrapper of the same arity that first starts
    jax.profiler's server in the worker (port 0: a free port, once per
    worker process) and reports where to the registry."""
    import inspect

    def start():
        import socket

        import ray
        import ray.train

        server = {"rank": ray.train.get_context().get_world_rank(), "pid": os.getpid(),
                  "node_id": ray.get_runtime_context().get_node_id(), "ip": ray.util.get_node_ip_address()}
        try:
            listening = os.environ.get("RAYTPU_PROFILER_PORT")
            if listening is None:
                import jax

                # gRPC sets SO_REUSEPORT, so a second server on a taken port would
                # start and share it: a fixed port is first locked for this machine
                # (the lock lives as long as the process) and bound once without
                # SO_REUSEPORT, which fails if anything holds it.
                if port:
                    import fcntl
                    import tempfile

                    lock = os.open(os.path.join(tempfile.gettempdir(), "raytpu-profiler-%d.lock" % port), os.O_CREAT | os.O_RDWR, 0o666)
                    try:
                        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except OSError:
                        os.close(lock)
                        raise OSError("port %d: another raytpu profiler server on this machine holds it" % port) from None
                with socket.socket() as s:
                    s.bind(("", port))
                    chosen = s.getsockname()[1]
                jax.profiler.start_server(chosen)
                listening = os.environ["RAYTPU_PROFILER_PORT"] = str(chosen)
            server["port"] = int(listening)
        except Exception as exc:  # training goes on without a profiler
            server["error"] = "%s: %s" % (type(exc).__name__, exc)
        ray.get(registry.add.remote(server))

    if len(inspect.signature(train_fn).parameters) == 0:
        def train_loop_per_worker():
            start()
            return train_fn()
    else:
        def train_loop_per_worker(config):
            start()
            return train_fn(config)
    return train_loop_per_worker


def run_train(cfg):
    import ray
    from ray.train import CheckpointConfig
    from ray.train.v2.api.config import FailureConfig, LoggingConfig, RunConfig, ScalingConfig
    from ray.train.v2.jax import JaxConfig, JaxTrainer

    scaling = cfg["scaling_config"]
    run = cfg["run_config"]
    num_workers = scaling["num_workers"]
    if scaling.get("min_workers"):
        # An elastic group: Ray's num_workers=(min_workers, max_workers).
        num_workers = (scaling["min_workers"], num_workers)
    scaling_kwargs = {
        "num_workers": num_workers,
        "use_tpu": scaling["use_tpu"],
        "use_gpu": scaling["use_gpu"],
        "placement_strategy": scaling["placement_strategy"],
    }
    for key in ("accelerator_type", "topology", "resources_per_worker", "label_selector", "elastic_resize_monitor_interval_s"):
        if scaling.get(key):
            scaling_kwargs[key] = scaling[key]

    failure_kwargs = {"max_failures": run["max_failures"]}
    for key in ("controller_failure_limit", "max_preemption_failures", "relax_collectives_on_preemption", "preemption_grace_s"):
        if run.get(key) is not None:
            failure_kwargs[key] = run[key]
    run_kwargs = {
        "name": run["name"],
        "failure_config": FailureConfig(**failure_kwargs),
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
    if run.get("log_level"):
        run_kwargs["logging_config"] = LoggingConfig(log_level=run["log_level"])

    train_fn = _load(cfg["train_loop_per_worker"])
    trainer_kwargs = {
        "scaling_config": ScalingConfig(**scaling_kwargs),
        "run_config": RunConfig(**run_kwargs),
    }
    if cfg.get("train_loop_config") is not None:
        trainer_kwargs["train_loop_config"] = cfg["train_loop_config"]
    if cfg.get("jax_config") is not None:
        trainer_kwargs["jax_config"] = JaxConfig(**cfg["jax_config"])

    ray.init(address="auto", log_to_driver=True)
    _train_datasets(cfg, trainer_kwargs)
    recorder = _start_recorder()
    run_kwargs["callbacks"] = [_recording_callback(recorder)]
    trainer_kwargs["run_config"] = RunConfig(**run_kwargs)
    nodes_before = _node_table()
    t0 = time.time()
    close_profiler = None
    if run.get("profiler") is not None:
        registry, close_profiler = _start_profiler_registry()
        train_fn = _with_profiler(train_fn, run["profiler"]["port"], registry)
    trainer = JaxTrainer(train_fn, **trainer_kwargs)
    try:
        result = trainer.fit()
    except Exception as exc:  # Ray raises TrainingFailedError on failure.
        out = {
            "kind": "JaxTrainer",
            "error": {"type": type(exc).__name__, "message": str(exc)},
        }
        out.update(_recovery_report(recorder, nodes_before, t0, scaling_kwargs))
        return out, 1
    finally:
        if close_profiler is not None:
            close_profiler()
    out = _recovery_report(recorder, nodes_before, t0, scaling_kwargs)
    out.update({
        "kind": "JaxTrainer",
        "metrics": _jsonable(result.metrics),
        "checkpoint": _checkpoint_path(result.checkpoint),
        "path": result.path,
        "best_checkpoints": [
            {"path": _checkpoint_path(c), "metrics": _jsonable(m)}
            for c, m in (result.best_checkpoints or [])
        ],
    })
    if getattr(result, "return_value", None) is not None:
        out["return_value"] = _jsonable(result.return_value)
    if result.error is not None:
        out["error"] = {"type": type(result.error).__name__, "message": str(result.error)}
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


def run_data(cfg):
    """Builds a compiled Ray Data pipeline and runs its sink.

    The pipeline gets exactly the keyword arguments compiled in Go, as a
    hand-written one would: nothing is added. An actor pool's fault
    tolerance is Ray Data's own default (max_restarts=-1 and, unless
    max_restarts is 0, max_task_retries=-1: a dead actor is restarted and
    its calls retried), so every row is written once.
    """
    import ray
    import ray.data

    # Import Ray Data and the pipeline's callables before connecting, in
    # the order of a hand-written driver (`from model import Model` above
    # ray.init()), so that the driver does the same work at the same time.
    for step in [cfg["source"]] + list(cfg.get("steps") or []):
        for key in CALLABLE_KWARGS:
            value = step["kwargs"].get(key)
            if isinstance(value, str) and ":" in value:
                _load(value)
    ray.init(address="auto", log_to_driver=True)
    ds = build_dataset(cfg)
    sink = cfg["sink"]
    kwargs = _call_kwargs(sink["kwargs"])
    getattr(ds, sink["op"])(**kwargs)
    out = {"kind": "Pipeline", "name": cfg.get("name"), "sink": sink["op"], "path": kwargs.get("path")}
    files = _files_under(kwargs.get("path") or "")
    if files is not None:
        out["files"] = files
    return out, 0


LAUNCHERS = {"train": run_train, "data": run_data}


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
