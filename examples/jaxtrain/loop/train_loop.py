"""A tiny JAX train loop for raytpu's JaxTrainer example.

It fits y = 3x + 2 with plain gradient descent on CPU (JAX_PLATFORMS=cpu) or
TPU, checkpoints every `checkpoint_every` steps, resumes from the latest
checkpoint after a restart, and leaves one JSON report per worker and
attempt in `report_dir` (rank, node labels, MEGASCALE_* env) so a test can
check where each worker ran.

Import JAX inside the train function, not at module top level: the driver
must not grab the TPU.
"""

import json
import os
import tempfile
import time


def _labels():
    import ray

    labels = ray.get_runtime_context().get_node_labels()
    return {k: (v[0] if isinstance(v, list) and v else v) for k, v in labels.items()}


def train_func(config):
    import jax
    import jax.numpy as jnp
    import numpy as np
    import ray
    import ray.train

    ctx = ray.train.get_context()
    rank = ctx.get_world_rank()
    steps = int(config.get("steps", 20))
    every = int(config.get("checkpoint_every", 5))
    report_dir = config.get("report_dir")
    pause_at = config.get("pause_at_step") or []
    if isinstance(pause_at, int):
        pause_at = [pause_at]

    w, b, start = 0.0, 0.0, 0
    checkpoint = ray.train.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as d:
            with open(os.path.join(d, "state.json")) as f:
                state = json.load(f)
        w, b, start = state["w"], state["b"], state["step"]

    if report_dir:
        os.makedirs(report_dir, exist_ok=True)
        report = {
            "rank": rank,
            "world_size": ctx.get_world_size(),
            "local_rank": ctx.get_local_rank(),
            "node_id": ray.get_runtime_context().get_node_id(),
            "labels": _labels(),
            "pid": os.getpid(),
            "resumed_from": start,
            "env": {k: v for k, v in os.environ.items() if k.startswith(("MEGASCALE_", "TPU_", "JAX_PLATFORMS"))},
            "jax_devices": jax.local_device_count(),
        }
        name = "worker-%d-from-%d.json" % (rank, start)
        with open(os.path.join(report_dir, name), "w") as f:
            json.dump(report, f, sort_keys=True)

    rng = np.random.default_rng(rank)
    x = jnp.asarray(rng.uniform(-1, 1, size=(64,)), dtype=jnp.float32)
    y = 3.0 * x + 2.0

    def loss_fn(params):
        pw, pb = params
        return jnp.mean((pw * x + pb - y) ** 2)

    grad = jax.jit(jax.value_and_grad(loss_fn))
    lr = float(config.get("lr", 0.1))
    params = (jnp.float32(w), jnp.float32(b))
    for step in range(start + 1, steps + 1):
        pid_file = os.path.join(report_dir or "", "paused-rank-1-step-%d.pid" % step)
        if step in pause_at and rank == 1 and report_dir and not os.path.exists(pid_file):
            # Fault-injection hook for tests: the first time rank 1 reaches
            # a pause step (in whichever attempt), it publishes its pid and
            # waits to be killed from outside; a later attempt that reaches
            # the same step again goes on.
            with open(pid_file, "w") as f:
                f.write(str(os.getpid()))
            for _ in range(600):
                time.sleep(0.5)
        loss, (gw, gb) = grad(params)
        params = (params[0] - lr * gw, params[1] - lr * gb)
        metrics = {"step": step, "loss": float(loss), "w": float(params[0]), "b": float(params[1]), "resumed_from": start}
        if step % every == 0 or step == steps:
            with tempfile.TemporaryDirectory() as d:
                if rank == 0:
                    with open(os.path.join(d, "state.json"), "w") as f:
                        json.dump({"w": float(params[0]), "b": float(params[1]), "step": step}, f)
                ray.train.report(
                    metrics,
                    checkpoint=ray.train.Checkpoint.from_directory(d) if rank == 0 else None,
                )
        else:
            ray.train.report(metrics)
    return {"final_step": steps}


def data_func(config):
    """Iterates one epoch of this worker's shard of every dataset, in name
    order, then trains as train_func does (checkpoints, reports).

    The iter_jax_batches options come from the trainer (compiled in Go):
    raytpu's launcher adds them to config, and raytpu_iter_jax_batches
    applies them. The loop writes what this host saw to
    <report_dir>/batches-<rank>.json: by dataset, each batch's
    process-local rows and how many of them equal config["pad_value"]
    (padding; range ids are never negative).
    """
    import jax
    import numpy as np
    import ray.train

    from _raytpu_launcher import ITER_JAX_BATCHES_KEY, raytpu_iter_jax_batches

    rank = ray.train.get_context().get_world_rank()
    pad = config.get("pad_value", -1)
    seen = {}
    for name in sorted(config[ITER_JAX_BATCHES_KEY]):
        seen[name] = []
        for batch in raytpu_iter_jax_batches(config, name):
            ids = batch["id"] if isinstance(batch, dict) else batch
            local = np.concatenate([np.asarray(s.data) for s in ids.addressable_shards])
            seen[name].append({"rows": int(local.shape[0]), "pad": int((local == pad).sum())})
    report = {"rank": rank, "local_devices": jax.local_device_count(), "process_count": jax.process_count(), "batches": seen}
    os.makedirs(config["report_dir"], exist_ok=True)
    with open(os.path.join(config["report_dir"], "batches-%d.json" % rank), "w") as f:
        json.dump(report, f, sort_keys=True)
    return dict(train_func(config), batches={name: len(b) for name, b in seen.items()})
