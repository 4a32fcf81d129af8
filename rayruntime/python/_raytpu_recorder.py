"""What raytpu's launcher records of a JaxTrainer run inside Ray.

A Ray Train callback in the controller sends every start of the worker
group, state change, failure and resize decision to a small actor pinned
to the driver's node; after fit() the launcher turns them, with the nodes
alive before and after, into the outcome's attempts, timeline, lost hosts,
lost slices and intact slices. A second actor collects where each train worker's JAX
profiler server listens, and a driver thread prints them. The callback
relies on private Ray APIs: the protocol description lists them
(ray.private_apis) and the launcher reports any the installed Ray lacks.
"""

import json
import threading
import time

import _raytpu_runtime as rt


def jsonable(value):
    """value if it is JSON, else its repr."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):  # not JSON: its repr is reported instead
        return repr(value)


def recording_callback(recorder):
    """A Ray Train callback that tells the recorder actor what the
    controller does. It runs inside the controller and never raises: a
    failure is logged there with its traceback and recorded as a
    "recorder_error" event, which the outcome lists in its warnings."""
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
            except Exception:  # the event is lost: say so in the controller's log
                rt.report_exception("raytpu recorder: sending a %s event" % kind)

        def _failed(self, what):
            self._add("recorder_error", message=rt.report_exception("raytpu recorder: " + what))

        def after_report(self, training_report, metrics):
            try:
                if training_report.checkpoint is not None:
                    self._latest = {
                        "path": rt.storage_uri(training_report.checkpoint.filesystem, training_report.checkpoint.path),
                        "metrics": jsonable(training_report.metrics),
                    }
            except Exception:
                self._failed("reading a report's checkpoint")

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
            except Exception:
                self._failed("reading a started worker group")

        def after_controller_state_update(self, previous_state, current_state):
            try:
                if previous_state is not None and previous_state._state_type == current_state._state_type:
                    return  # RUNNING -> RUNNING on every poll
                err = getattr(current_state, "training_failed_error", None)
                event = {"state": current_state._state_type.state_name}
                if err is not None:
                    event["error"] = "%s: %s" % (type(err).__name__, str(err)[:500])
                self._add("state", **event)
            except Exception:
                self._failed("reading a controller state")

        def before_controller_execute_failure_decision(self, failure_decision):
            self._add("failure_decision", decision=getattr(failure_decision, "value", str(failure_decision)))

        def before_controller_execute_resize_decision(self, resize_decision):
            self._add("resize_decision", num_workers=getattr(resize_decision, "num_workers", None))

    return RaytpuRecorder(recorder)


def _pinned(cls):
    """Starts actor class cls on the driver's node, so that it outlives
    any worker host."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    return cls.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote()


def start_recorder():
    """Starts the actor that collects the callback's events."""
    import ray

    @ray.remote(num_cpus=0)
    class _Recorder:
        def __init__(self):
            self.events = []

        def add(self, event):
            self.events.append(event)

        def since(self, n):
            return self.events[n:]

    return _pinned(_Recorder)


def node_table():
    """Every Ray node: id, ip, alive, TPU slice and worker id."""
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


def summarize(events, nodes_before, nodes_after, t0):
    """Turns the recorded events into the outcome's attempts, timeline and
    lost hosts, and the warnings of the callback's own failures."""
    table = dict(nodes_before)
    table.update({k: v for k, v in nodes_after.items() if k not in table})

    def host(node_id):
        n = dict(table.get(node_id) or {"node_id": node_id})
        n.pop("alive", None)
        return n

    attempts, timeline, warnings = [], [], []
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
            continue
        if e["kind"] == "recorder_error":
            warnings.append(e.get("message", ""))
        item = {k: v for k, v in e.items() if k != "time"}
        item["at_s"] = at
        timeline.append(item)
    lost = []
    for node_id, before in sorted(nodes_before.items(), key=lambda kv: (kv[1]["slice"], kv[1]["tpu_worker_id"], kv[0])):
        after = nodes_after.get(node_id)
        if before["alive"] and (after is None or not after["alive"]):
            lost.append(host(node_id))
    # A slice is lost (preempted) when every one of its hosts alive at the
    # start was lost: a replacement slice of the same name may be up again.
    lost_ids = {h["node_id"] for h in lost}
    hosts_of = {}
    for node_id, before in nodes_before.items():
        if before["alive"] and before["slice"]:
            hosts_of.setdefault(before["slice"], []).append(node_id)
    lost_slices = sorted(s for s, ids in hosts_of.items() if all(i in lost_ids for i in ids))
    out = {"fit_started_at": t0, "attempts": attempts, "timeline": timeline, "lost_hosts": lost}
    if lost_slices:
        out["lost_slices"] = lost_slices
    return out, warnings


def recovery_report(recorder, nodes_before, t0, scaling, warnings):
    """What happened to the worker group during fit(); a problem reading
    it is reported and added to warnings."""
    import ray

    try:
        events = ray.get(recorder.since.remote(0), timeout=30)
    except Exception:
        return {"recorder_error": rt.report_exception("reading the run's record", warnings)}
    out, failures = summarize(events, nodes_before, node_table(), t0)
    warnings.extend(failures)
    if scaling.get("use_tpu") and scaling.get("topology") and scaling.get("accelerator_type"):
        try:
            from ray.util.tpu import get_num_tpu_slices

            out["intact_slices"] = get_num_tpu_slices(
                topology=scaling["topology"], accelerator_type=scaling["accelerator_type"]
            )
        except Exception:
            out["intact_slices_error"] = rt.report_exception("counting the intact slices", warnings)
    return out


def start_profiler_registry(warnings):
    """Starts the actor the train workers tell where their profiler server
    listens, and a driver thread that prints each report as a
    PROFILER_PREFIX line (workers do not print them themselves: Ray's log
    deduplication would fold their lines into one). Returns the actor and
    a function that stops the thread after a last round."""
    import ray

    registry = start_recorder()
    stop = threading.Event()

    def printer():
        seen, last, failing = 0, False, False
        while True:
            try:
                for server in ray.get(registry.since.remote(seen), timeout=30):
                    rt.print_profiler_report(server)
                    seen += 1
                failing = False
            except Exception:
                if not failing:  # once per run of failures, not every 0.5s
                    rt.report_exception("reading the profiler reports", warnings)
                failing = True
            if last:
                return
            last = stop.wait(0.5)

    thread = threading.Thread(target=printer, name="raytpu-profiler-registry", daemon=True)
    thread.start()

    def close():
        stop.set()
        thread.join(timeout=35)

    return registry, close


def with_profiler(train_fn, port, registry):
    """Returns train_fn behind a wrapper of the same arity that first starts
    jax.profiler's server in the worker (port 0: a free port, once per
    worker process) and reports where to the registry."""
    import inspect

    def start():
        import ray
        import ray.train

        server = {"rank": ray.train.get_context().get_world_rank()}
        server.update(rt.node_report())
        server.update(rt.start_profiler(port))
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
