"""A small JAX train loop for the KubeRay end-to-end test.

Each worker fits y = 3x + 2 for `steps` steps (JAX on the CPU of a pod posing
as a TPU host), rank 0 checkpoints every `checkpoint_every` steps, and every
worker writes <report_dir>/rank-<rank>.json: where it ran (pod hostname, Ray
node labels), its MEGASCALE_* and TPU_* environment and what JAX sees
(process count and index, local devices) and when it wrote it
(written_at, seconds since the epoch), and writes
<report_dir>/starts-<rank>-<time in ns> each time it starts (one object
per start: Cloud Storage objects cannot be appended to).

A run started from a checkpoint resumes after its step and reports
resumed_from. With `pause_at` set (a step or a list of steps), every
worker of an attempt that started before such a step stops after
reporting it and writes the step to <report_dir>/paused-<rank>, so the
test can kill a pod or preempt a slice at a known point; an attempt that
resumed from that step's checkpoint (or a later one) does not pause there.

report_dir is a local directory or, as pods share no disk, gs://bucket/prefix:
Cloud Storage through pyarrow, as Ray Train reaches it (an anonymous client
at the emulator that CLOUD_STORAGE_EMULATOR_ENDPOINT names, in the tests).
"""

import json
import os
import socket
import tempfile
import time


def _write(report_dir, name, text):
    """Writes report_dir/name: a local file, or a Cloud Storage object."""
    if not report_dir.startswith("gs://"):
        with open(os.path.join(report_dir, name), "w") as f:
            f.write(text)
        return
    from pyarrow.fs import GcsFileSystem

    endpoint = os.environ.get("CLOUD_STORAGE_EMULATOR_ENDPOINT")
    if endpoint:
        scheme, _, host = endpoint.rpartition("://")
        fs = GcsFileSystem(anonymous=True, scheme=scheme, endpoint_override=host)
    else:
        fs = GcsFileSystem()
    with fs.open_output_stream(report_dir[len("gs://"):].rstrip("/") + "/" + name) as f:
        f.write(text.encode())


def train_func(config):
    import jax
    import jax.numpy as jnp
    import ray
    import ray.train

    ctx = ray.train.get_context()
    rank = ctx.get_world_rank()
    labels = ray.get_runtime_context().get_node_labels()
    report = {
        "rank": rank,
        "world_size": ctx.get_world_size(),
        "hostname": socket.gethostname(),
        "node_id": ray.get_runtime_context().get_node_id(),
        "labels": {k: (v[0] if isinstance(v, list) and v else v) for k, v in labels.items()},
        "env": {k: v for k, v in os.environ.items() if k.startswith(("MEGASCALE_", "TPU_"))},
        "process_count": jax.process_count(),
        "process_index": jax.process_index(),
        "local_devices": jax.local_device_count(),
    }
    report["written_at"] = time.time()
    _write(config["report_dir"], "rank-%d.json" % rank, json.dumps(report, sort_keys=True))
    # One object per start of this rank: a test counts how often it trained.
    _write(config["report_dir"], "starts-%d-%d" % (rank, time.time_ns()), report["hostname"])

    x = jnp.linspace(-1.0, 1.0, 32)
    y = 3.0 * x + 2.0
    grad = jax.jit(jax.value_and_grad(lambda p: jnp.mean((p[0] * x + p[1] - y) ** 2)))
    params, first, resumed_from = (jnp.float32(0.0), jnp.float32(0.0)), 1, 0
    checkpoint = ray.train.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as d:
            with open(os.path.join(d, "state.json")) as f:
                state = json.load(f)
        params = (jnp.float32(state["w"]), jnp.float32(state["b"]))
        resumed_from = int(state["step"])
        first = resumed_from + 1
    steps, every = int(config["steps"]), int(config["checkpoint_every"])
    pause_at = config.get("pause_at") or []
    pause_at = [int(p) for p in (pause_at if isinstance(pause_at, list) else [pause_at])]
    for step in range(first, steps + 1):
        loss, (gw, gb) = grad(params)
        params = (params[0] - 0.3 * gw, params[1] - 0.3 * gb)
        metrics = {"step": step, "loss": float(loss), "process_count": jax.process_count(), "resumed_from": resumed_from}
        if step % every == 0 or step == steps:
            with tempfile.TemporaryDirectory() as d:
                if rank == 0:
                    with open(os.path.join(d, "state.json"), "w") as f:
                        json.dump({"w": float(params[0]), "b": float(params[1]), "step": step}, f)
                ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(d) if rank == 0 else None)
        else:
            ray.train.report(metrics)
        if step in pause_at and step > resumed_from:
            _write(config["report_dir"], "paused-%d" % rank, str(step))
            # Until the test kills a pod and Ray Train ends this attempt.
            time.sleep(600)
            raise RuntimeError("paused at step %d for 600 s and no pod was lost" % step)
