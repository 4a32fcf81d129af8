"""A JAX process for the profiler tests: it starts the profiler server on a
free port, prints "PORT <n>", then runs a jitted step until killed or until
argv[1] seconds have passed."""
import socket
import sys
import time

import jax
import jax.numpy as jnp

s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
jax.profiler.start_server(port)


@jax.jit
def raytpu_step(x):
    return jnp.tanh(x @ x.T).sum()


x = jnp.ones((128, 128))
raytpu_step(x).block_until_ready()
print("PORT", port, flush=True)
deadline = time.time() + float(sys.argv[1])
while time.time() < deadline:
    raytpu_step(x).block_until_ready()
