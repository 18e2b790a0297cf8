"""Writes conformance/paddle/nodetree-static-memory: a static-graph run profiled with memory.

Usage: python gen_static_memory.py OUTDIR   (with paddlepaddle 3.3.1, CPU; the venv check.sh makes)

The check's static-graph program (two fc layers run by the executor, a RecordEvent around each
run) under paddle.profiler.Profiler with record_shapes and profile_memory, over nine steps of
which eight are recorded. Paddle frees a static run's temporaries on a `GarbageCollector` thread
outside any range: those memory nodes hang from the thread tree's root node. Writes the node
trees (input.paddle_trace.pb), the Chrome trace of the same run (paddle_trace.json), what
prof.summary() printed (paddle-summary-0.txt) and paddle-summaries.json listing it.
"""
import contextlib
import io
import json
import os
import sys

import numpy as np
import paddle
import paddle.profiler as profiler

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
paddle.enable_static()
paddle.set_device("cpu")
paddle.seed(2024)
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [16, 32], "float32")
    h = paddle.static.nn.fc(x, 64, activation="relu")
    loss = paddle.mean(paddle.static.nn.fc(h, 8))
exe = paddle.static.Executor(paddle.CPUPlace())
exe.run(startup)
feed = {"x": np.random.RandomState(0).rand(16, 32).astype("float32")}
prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], scheduler=(1, 9), timer_only=False,
                         record_shapes=True, profile_memory=True)
prof.start()
for step in range(10):
    with profiler.RecordEvent("run_step"):
        exe.run(main, feed=feed, fetch_list=[loss])
    prof.step()
prof.stop()
prof.export(path=os.path.join(out, "paddle_trace.json"), format="json")
prof.export(path=os.path.join(out, "input.paddle_trace.pb"), format="pb")
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    prof.summary()
with open(os.path.join(out, "paddle-summary-0.txt"), "w") as f:
    f.write(buf.getvalue())
with open(os.path.join(out, "paddle-summaries.json"), "w") as f:
    f.write(json.dumps([{"file": "paddle-summary-0.txt"}]) + "\n")
