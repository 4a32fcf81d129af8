"""A Serve deployment for the `raytpu profile` test: its replicas own a
TPU slice, and every host runs a jitted step in a background thread, so a
trace of any host holds JAX work. The `raytpu serve wait` diagnosis test
asks for a slice the cluster does not have, so it never starts there."""

import threading

from ray import serve
from raytpu_replica import get_slice_context, tpu_slice


@serve.deployment
@tpu_slice
class Busy:
    def __init__(self):
        import jax
        import jax.numpy as jnp

        @jax.jit
        def served_step(x):
            return jnp.tanh(x @ x.T).sum()

        x = jnp.ones((128, 128))
        # Compiled before the replica is ready, so that a capture right
        # after the deploy meets steps rather than the first compile.
        served_step(x).block_until_ready()

        def loop():
            while True:
                served_step(x).block_until_ready()

        threading.Thread(target=loop, daemon=True).start()

    def __call__(self, request):
        return {"host": get_slice_context().rank}


app = Busy.bind()
