"""Makes small real TensorFlow (CPU) profiles for the xprof conformance cases.

Usage: python gen_tf.py OUTDIR
Writes OUTDIR/<case>/plugins/profile/<run>/<host>.xplane.pb with TensorFlow's own profiler:
  tf-eager/   an eager training loop (tf.GradientTape), each step in
              tf.profiler.experimental.Trace('train', step_num=i, _r=1)
  tf-data/    a tf.data pipeline (map, batch, prefetch) feeding a tf.function step, each step in
              Trace('train', step_num=i, _r=1)
  tf-nostep/  the tf.function step called without any step marker
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

out = sys.argv[1]
tf.random.set_seed(1)
rng = np.random.default_rng(1)
x = rng.standard_normal((96, 16)).astype("float32")
y = rng.integers(0, 4, size=(96,)).astype("int64")

model = tf.keras.Sequential([
    tf.keras.Input((16,)),
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(4),
])
opt = tf.keras.optimizers.SGD(0.01)
lossf = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def step(xb, yb):
    with tf.GradientTape() as tape:
        loss = lossf(yb, model(xb, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


step(x[:16], y[:16])
tf.profiler.experimental.start(os.path.join(out, "tf-eager"))
for i in range(3):
    with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
        step(x[16 * i:16 * (i + 1)], y[16 * i:16 * (i + 1)])
tf.profiler.experimental.stop()

fstep = tf.function(step)
ds = (tf.data.Dataset.from_tensor_slices((x, y))
      .map(lambda a, b: (a * 2.0, b), num_parallel_calls=2)
      .batch(16).prefetch(1))
for xb, yb in ds.take(1):
    fstep(xb, yb)
it = iter(ds)
tf.profiler.experimental.start(os.path.join(out, "tf-data"))
for i in range(3):
    with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
        xb, yb = next(it)
        fstep(xb, yb)
tf.profiler.experimental.stop()

tf.profiler.experimental.start(os.path.join(out, "tf-nostep"))
for i in range(2):
    fstep(x[16 * i:16 * (i + 1)], y[16 * i:16 * (i + 1)])
tf.profiler.experimental.stop()
print("tf", tf.__version__, "wrote", out)
