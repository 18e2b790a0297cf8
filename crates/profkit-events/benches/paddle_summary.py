"""The peer of the `summary` benchmark: paddlepaddle 3.3.1's own `Profiler.summary()`.

Runs the LeNet program of `conformance/paddle/nodetree-lenet` (dygraph, Adam, a 2-worker
DataLoader, nested RecordEvents, four recorded steps) under `paddle.profiler.Profiler`, then
times `prof.summary()` (its output to a buffer) RUNS times, and prints one JSON line:
{"nodes": <host nodes>, "ms": [<each run's milliseconds>]}. Paddle cannot read a `.pb` back, so
it summarises its own run of the same program, not the case's file.
"""
import contextlib
import io
import json
import sys
import time

import numpy as np
import paddle
import paddle.profiler as profiler

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
paddle.set_device("cpu")
paddle.seed(2024)
np.random.seed(2024)


class Images(paddle.io.Dataset):
    def __getitem__(self, i):
        rng = np.random.RandomState(i)
        return rng.rand(1, 28, 28).astype("float32"), np.array([i % 10], dtype="int64")

    def __len__(self):
        return 16 * 12


class LeNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.features = paddle.nn.Sequential(
            paddle.nn.Conv2D(1, 6, 3, stride=1, padding=1), paddle.nn.ReLU(), paddle.nn.MaxPool2D(2, 2),
            paddle.nn.Conv2D(6, 16, 5, stride=1, padding=0), paddle.nn.ReLU(), paddle.nn.MaxPool2D(2, 2))
        self.fc = paddle.nn.Sequential(paddle.nn.Linear(400, 120), paddle.nn.Linear(120, 84), paddle.nn.Linear(84, 10))

    def forward(self, x):
        return self.fc(paddle.flatten(self.features(x), 1))


model = LeNet()
opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
loss_fn = paddle.nn.CrossEntropyLoss()
loader = paddle.io.DataLoader(Images(), batch_size=16, shuffle=True, num_workers=2, drop_last=True)
prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU],
                         scheduler=profiler.make_scheduler(closed=1, ready=1, record=4, repeat=1),
                         on_trace_ready=lambda p: None, timer_only=False, record_shapes=True,
                         profile_memory=True)
prof.start()
for step, (img, label) in enumerate(loader):
    with profiler.RecordEvent("train_step"):
        with profiler.RecordEvent("forward_user"):
            loss = loss_fn(model(img), label)
        with profiler.RecordEvent("backward_user"):
            loss.backward()
            with profiler.RecordEvent("nested_inner"):
                paddle.sum(loss * 2.0)
        with profiler.RecordEvent("opt_user"):
            opt.step()
            opt.clear_grad()
    prof.step()
    if step >= 7:
        break
prof.stop()
nodes = 0
for tree in prof.profiler_result.get_data().values():
    stack = [tree]
    while stack:
        n = stack.pop()
        nodes += 1
        stack.extend(n.children_node)
times = []
for _ in range(RUNS):
    buf = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(buf):
        prof.summary()
    times.append((time.perf_counter() - start) * 1000)
print(json.dumps({"nodes": nodes - 1, "ms": times}))
