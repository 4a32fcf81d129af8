"""A Serve deployment whose replicas each own a TPU slice (raytpu's
replica runtime): every host of the slice joins one JAX program, and host
0 answers a request with a cross-host sum, where the hosts ran and the
offset from the deployment's user_config."""

from ray import serve
from raytpu_replica import get_slice_context, tpu_slice


@serve.deployment
@tpu_slice
class Summer:
    def __init__(self, scale):
        self.scale = scale
        self.offset = 0.0

    def reconfigure(self, config):
        self.offset = float(config.get("offset", 0))

    def __call__(self, request):
        import jax
        import jax.numpy as jnp
        from jax.experimental import multihost_utils

        # Each host adds its process index + 1: 1 + 2 on a two-host slice.
        parts = multihost_utils.process_allgather(jnp.array([jax.process_index() + 1.0]))
        ctx = get_slice_context()
        return {
            "sum": float(parts.sum()) * self.scale,
            "offset": self.offset,
            "process_count": jax.process_count(),
            "device_count": jax.device_count(),
            "replica": ctx.name,
            "hosts": ctx.hosts,
        }


app = Summer.bind(scale=10.0)
