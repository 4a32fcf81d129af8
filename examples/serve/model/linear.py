"""A tiny JAX model served by replicas that each own a TPU slice.

raytpu's replica runtime (raytpu_replica, shipped by raytpu's Ray backend)
builds Linear on every TPU host of the replica's slice; the hosts form one
JAX distributed program. A request {"x": [...]} is sharded over every
device of the slice, y = w * x + b is computed by one jit-compiled SPMD
program, and host 0 answers with y and where each host ran.

Import JAX inside the methods: the Serve replica itself (the orchestrator)
never needs it.
"""

from ray import serve
from raytpu_replica import get_slice_context, tpu_slice


@serve.deployment
@tpu_slice
class Linear:
    def __init__(self, w=3.0, b=2.0):
        self.w = float(w)
        self.b = float(b)

    def reconfigure(self, config):
        # Every key of the deployment's user_config but raytpu's own.
        self.w = float(config.get("w", self.w))
        self.b = float(config.get("b", self.b))

    def __call__(self, request):
        import jax
        import jax.numpy as jnp
        import numpy as np
        from jax.experimental import multihost_utils
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        xs = [float(v) for v in (request.json() or {}).get("x", [])]
        n = jax.device_count()
        padded = np.zeros((-(-max(len(xs), 1) // n) * n,), dtype=np.float32)
        padded[: len(xs)] = xs
        mesh = Mesh(np.array(jax.devices()), ("devices",))
        sharded = NamedSharding(mesh, PartitionSpec("devices"))
        x = jax.make_array_from_callback(padded.shape, sharded, lambda idx: padded[idx])
        w, b = self.w, self.b
        y = jax.jit(lambda v: w * v + b, out_shardings=NamedSharding(mesh, PartitionSpec()))(x)
        # A cross-host collective: every host adds its process index + 1.
        parts = multihost_utils.process_allgather(jnp.array([jax.process_index() + 1.0]))
        ctx = get_slice_context()
        return {
            "y": [float(v) for v in np.asarray(y)[: len(xs)]],
            "host_sum": float(parts.sum()),
            "devices": n,
            "processes": jax.process_count(),
            "replica": ctx.name,
            "hosts": ctx.hosts,
        }


app = Linear.bind(w=3.0, b=2.0)
