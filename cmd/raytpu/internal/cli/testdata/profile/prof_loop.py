"""A train loop for the `raytpu profile` test: every worker runs a jitted
step until the file config["stop_file"] exists (or config["max_s"]
seconds pass), then reports its step count once. With
config["ready_dir"], each worker writes the file ready-<rank> there once
its first step ran, so that a capture meets steps rather than the import
of JAX or the first compile.

Ray Train's report is collective: every rank must call it the same number
of times, or the ranks that call it once more wait for the others
forever. The ranks stop on their own clocks and at their own step counts,
so they report once, after the loop, and never inside it."""

import os
import time


def train_func(config):
    import jax
    import jax.numpy as jnp
    import ray.train

    @jax.jit
    def profiled_step(x):
        return jnp.tanh(x @ x.T).sum()

    x = jnp.ones((128, 128))
    steps = 0
    deadline = time.time() + float(config.get("max_s", 300))
    ready_dir = config.get("ready_dir")
    while time.time() < deadline and not os.path.exists(config["stop_file"]):
        profiled_step(x).block_until_ready()
        steps += 1
        if steps == 1 and ready_dir:
            rank = ray.train.get_context().get_world_rank()
            open(os.path.join(ready_dir, "ready-%d" % rank), "w").close()
    ray.train.report({"steps": steps})


def train_noarg():
    """train_func without a config: it stops when the file named by the
    environment variable PROF_STOP_FILE exists."""
    train_func({"stop_file": os.environ["PROF_STOP_FILE"], "max_s": 240})
