"""Makes small real JAX (CPU) profiles for the xprof conformance cases.

Usage: python gen_jax.py OUTDIR
Writes OUTDIR/<case>/plugins/profile/<run>/<host>.xplane.pb with jax.profiler.trace:
  jax-plain/   jitted steps without step annotations
  jax-nested/  jitted steps in StepTraceAnnotation, each with a TraceAnnotation inside and a
               second jitted function called from a Python thread
"""
import os
import sys
import threading

import jax
import jax.numpy as jnp

out = sys.argv[1]


@jax.jit
def step(w, x):
    y = jnp.tanh(x @ w)
    return w - 0.01 * (x.T @ y), jnp.sum(y)


@jax.jit
def side(x):
    return jnp.cumsum(x * 2.0)


key = jax.random.PRNGKey(0)
w = jax.random.normal(key, (16, 16))
x = jax.random.normal(key, (32, 16))
w, s = step(w, x)
side(x[0]).block_until_ready()
s.block_until_ready()

with jax.profiler.trace(os.path.join(out, "jax-plain")):
    for _ in range(3):
        w, s = step(w, x)
        s.block_until_ready()

with jax.profiler.trace(os.path.join(out, "jax-nested")):
    for i in range(3):
        with jax.profiler.StepTraceAnnotation("train", step_num=i):
            with jax.profiler.TraceAnnotation("inner"):
                w, s = step(w, x)
            t = threading.Thread(target=lambda: side(x[0]).block_until_ready())
            t.start()
            t.join()
            s.block_until_ready()
print("jax", jax.__version__, "wrote", out)
