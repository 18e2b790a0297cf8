"""Makes small real JAX (CPU) Chrome traces for the chrome conformance cases.

Usage: python gen_jax.py OUTDIR
Runs jax.profiler.trace(..., create_perfetto_trace=True) around a few jitted steps (in
StepTraceAnnotation, with a TraceAnnotation inside and a second jitted function on a Python
thread). JAX writes, under OUTDIR/plugins/profile/<run>/, the XSpace (<host>.xplane.pb) and the
Chrome trace JSON made from it for Perfetto (perfetto_trace.json.gz).
"""
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

with jax.profiler.trace(out, create_perfetto_trace=True):
    for i in range(3):
        with jax.profiler.StepTraceAnnotation("train", step_num=i):
            with jax.profiler.TraceAnnotation("inner"):
                w, s = step(w, x)
            t = threading.Thread(target=lambda: side(x[0]).block_until_ready())
            t.start()
            t.join()
            s.block_until_ready()
print("jax", jax.__version__, "wrote", out)
