"""Makes a real TensorFlow (CPU) profile of Keras `model.fit` with `steps_per_execution=4`.

Usage: python gen_tf_spe.py OUTDIR
Writes OUTDIR/tf-spe/plugins/profile/<run>/<host>.xplane.pb with TensorFlow's own profiler: a small
Keras model compiled with steps_per_execution=4 and fitted for eight steps (two executions of
four steps each) under tf.profiler.experimental.start/stop, after a warm-up fit. TensorFlow runs
the four steps of an execution as consecutive `ExecutorState::Process` iterations on its
`tf_Compute` threads, and writes each iteration's end a little after the next one's start.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

out = sys.argv[1]
tf.random.set_seed(2)
rng = np.random.default_rng(2)
x = rng.standard_normal((128, 16)).astype("float32")
y = rng.integers(0, 4, size=(128,)).astype("int64")

model = tf.keras.Sequential([
    tf.keras.Input((16,)),
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(4),
])
model.compile(optimizer="sgd",
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              steps_per_execution=4)
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
model.fit(ds.take(4), epochs=1, verbose=0)
tf.profiler.experimental.start(os.path.join(out, "tf-spe"))
model.fit(ds.take(8), epochs=1, verbose=0)
tf.profiler.experimental.stop()
