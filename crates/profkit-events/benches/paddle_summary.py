"""The peer of the `summary` benchmark: paddlepaddle 3.3.1's own `Profiler.summary()`.

Runs the dygraph LeNet program of the real-client check (`conformance/paddle/check.py`'s
`SUMMARY_DYGRAPH`, the program `conformance/paddle/nodetree-lenet` was made with: Adam, a 2-worker
DataLoader, nested RecordEvents, four recorded steps) under `paddle.profiler.Profiler`, then times
`prof.summary()` (its output to a buffer) RUNS times, and prints one JSON line:
{"nodes": <host nodes>, "ms": [<each run's milliseconds>]}. Paddle cannot read a `.pb` back, so
it summarises its own run of the same program, not the case's file.
"""
import contextlib
import io
import json
import pathlib
import sys
import time

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "conformance" / "paddle"))
import check  # noqa: E402  (the program is the check's, not a copy of it)

program = {}
exec(check.SUMMARY_DYGRAPH, program)
prof = program["prof"]
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
