"""A tiny JAX model for Ray Data batch inference: y = w * x + b.

Ray Data runs the class on an actor pool: each actor is one model replica
holding the TPU chips of one host, compiles the model once in __init__ and
is called with numpy batches. The prediction is sharded over the host's
local JAX devices (the TPU chips; CPU devices on a host posing as one).
"""

import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


class Linear:
    def __init__(self, w=3.0, b=2.0, marker_dir="", delay_s=0.0):
        self.devices = jax.local_devices()
        self.mesh = Mesh(np.array(self.devices), ("batch",))
        self.sharding = NamedSharding(self.mesh, PartitionSpec("batch"))
        self.w = jnp.float32(w)
        self.b = jnp.float32(b)
        self.predict = jax.jit(lambda x: x * self.w + self.b)
        self.pid = os.getpid()
        self.calls = 0
        self.marker_dir = marker_dir
        self.delay_s = delay_s
        if marker_dir:
            # Fault tests find the actor's worker process here.
            with open(os.path.join(marker_dir, "actor-%d.pid" % self.pid), "w") as f:
                f.write(str(self.pid))

    def __call__(self, batch):
        x = np.asarray(batch["x"], dtype=np.float32)
        n = len(x)
        d = len(self.devices)
        # Pad to a multiple of the local devices so the batch shards evenly,
        # then cut the padding off the prediction.
        padded = np.pad(x, (0, (-n) % d))
        y = self.predict(jax.device_put(padded, self.sharding))
        batch["y"] = np.asarray(y)[:n]
        batch["actor_pid"] = np.full(n, self.pid, dtype=np.int64)
        self.calls += 1
        if self.marker_dir:
            with open(os.path.join(self.marker_dir, "actor-%d.calls" % self.pid), "w") as f:
                f.write(str(self.calls))
        if self.delay_s:
            time.sleep(self.delay_s)
        return batch
