"""A tiny JAX model served by replicas that each own a TPU slice.

raytpu's replica runtime (raytpu_replica, shipped by raytpu's Ray backend)
builds Linear on every TPU host of the replica's slice; the hosts form one
JAX distributed program. A request, {"x": [...]} over HTTP or raytpu's
Predictor service over gRPC (the tensor "x"), is sharded over every device
of the slice, y = w * x + b is computed by one jit-compiled SPMD program,
and host 0 answers with y and where each host ran.

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
        # HTTP: {"x": [...]} in, JSON out.
        return self._predict([float(v) for v in (request.json() or {}).get("x", [])])

    def Predict(self, request):
        # gRPC, raytpu's Predictor service: the float tensor "x" in, the
        # same answer as tensors out. raytpu.serve.v1 is on the nodes'
        # PYTHONPATH (Serve's gRPC proxy needs it there too).
        import numpy as np
        from raytpu.serve.v1 import tensor

        out = self._predict([float(v) for v in tensor.inputs(request)["x"].reshape(-1)])
        return tensor.response({
            "y": np.asarray(out["y"], dtype=np.float32),
            "host_sum": np.float32(out["host_sum"]),
            "devices": np.int64(out["devices"]),
            "processes": np.int64(out["processes"]),
        })

    def _predict(self, xs):
        import jax
        import jax.numpy as jnp
        import numpy as np
        from jax.experimental import multihost_utils
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

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
