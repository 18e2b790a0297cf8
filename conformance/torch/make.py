"""Makes the torch goldens of this folder: real PyTorch profiler traces and the tables torch
prints for them at profiling time.

Five runs on the CPU. Two under a schedule (wait 1, warmup 1, active 2) with record_shapes,
profile_memory, with_stack and with_flops on, and record_function ranges around the phases of a
step: `cnn` (a small convolutional network's training step) and `transformer` (a transformer
encoder layer's training step). Two more the same way for the options torch added later:
`overload` (the transformer step with `capture_overload_names`, without stacks: the overload
grouping, `top_level_events_only`, `header`, the column widths; OVERLOAD_TABLES) and `python`
(the CNN step with stacks: `include_python_functions`, top-level rows under Python calls;
PYTHON_TABLES). And `plain` (below). For each run, when the schedule's active steps end:

- `<run>/trace.json.gz`: `prof.export_chrome_trace` (Kineto's Chrome trace, as written, then
  gzipped);
- `<run>/tables/<name>.txt`: `prof.key_averages(...).table(...)` for the groupings and sort keys of
  TABLES below, as torch prints them.

Usage: .oracle/torch/bin/python conformance/torch/make.py [RUN...]   (from the repository root;
torch on the CPU, numpy not needed; the runs named, or all of them). The runs are timed by the machine that runs them, so every remake
gives other numbers: the goldens are the pair (trace, tables) of one run, never remade piecewise.
"""

import gzip
import json
import os
import pathlib
import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule

HERE = pathlib.Path(__file__).resolve().parent

# (file name, key_averages arguments, table arguments)
TABLES = [
    ("default", {}, {}),
    ("cpu_time_total", {}, {"sort_by": "cpu_time_total", "row_limit": -1}),
    ("self_cpu_time_total", {}, {"sort_by": "self_cpu_time_total", "row_limit": 20}),
    ("cpu_time", {}, {"sort_by": "cpu_time", "row_limit": 15}),
    ("count", {}, {"sort_by": "count", "row_limit": 10}),
    ("cpu_memory_usage", {}, {"sort_by": "cpu_memory_usage", "row_limit": 10}),
    ("self_cpu_memory_usage", {}, {"sort_by": "self_cpu_memory_usage", "row_limit": 10}),
    ("flops", {}, {"sort_by": "flops", "row_limit": 10}),
    ("time_unit_ms", {}, {"sort_by": "self_cpu_time_total", "row_limit": 10, "time_unit": "ms"}),
    ("input_shape", {"group_by_input_shape": True}, {"sort_by": "cpu_time_total", "row_limit": 25}),
    ("stack_5", {"group_by_stack_n": 5}, {"sort_by": "self_cpu_time_total", "row_limit": 8}),
]

# The run with `capture_overload_names` (Kineto then writes `aten::add.Tensor`): the overload
# grouping, top-level rows, a header and narrower columns.
OVERLOAD_TABLES = [
    ("default", {}, {}),
    ("overload", {"group_by_overload_name": True}, {"sort_by": "cpu_time_total", "row_limit": 30}),
    (
        "overload_input_shape",
        {"group_by_overload_name": True, "group_by_input_shape": True},
        {"sort_by": "self_cpu_time_total", "row_limit": 20},
    ),
    ("top_level", {}, {"top_level_events_only": True}),
    (
        "top_level_self_cpu",
        {"group_by_overload_name": True},
        {"sort_by": "self_cpu_time_total", "row_limit": 5, "top_level_events_only": True},
    ),
    ("header", {}, {"sort_by": "count", "row_limit": 6, "header": "One training step, CPU"}),
    (
        "widths",
        {"group_by_overload_name": True, "group_by_input_shape": True},
        {
            "sort_by": "cpu_time_total",
            "row_limit": 12,
            "max_name_column_width": 24,
            "max_shapes_column_width": 30,
            "header": "narrow",
            "top_level_events_only": False,
        },
    ),
    ("memory_top_level", {}, {"sort_by": "cpu_memory_usage", "row_limit": 8, "top_level_events_only": True, "time_unit": "us"}),
]

# The run with stacks: Python functions' own rows, and top-level rows under Python calls.
PYTHON_TABLES = [
    ("default", {}, {"row_limit": 15}),
    ("python", {"include_python_functions": True}, {"sort_by": "cpu_time_total", "row_limit": 30}),
    (
        "python_self_cpu",
        {"include_python_functions": True},
        {"sort_by": "self_cpu_time_total", "row_limit": -1, "max_name_column_width": 40},
    ),
    (
        "python_stack_3",
        {"include_python_functions": True, "group_by_stack_n": 3},
        {"sort_by": "cpu_time", "row_limit": 10, "max_src_column_width": 40},
    ),
    ("top_level", {}, {"top_level_events_only": True}),
    ("python_top_level", {"include_python_functions": True}, {"top_level_events_only": True, "row_limit": 10}),
]


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def cnn_step():
    model = Cnn()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        with record_function("data"):
            x = torch.randn(4, 3, 16, 16)
            y = torch.randint(0, 10, (4,))
        with record_function("forward"):
            loss = loss_fn(model(x), y)
        with record_function("backward"):
            loss.backward()
        with record_function("optimizer"):
            optimizer.step()
            optimizer.zero_grad()

    return step


def transformer_step():
    model = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        with record_function("data"):
            x = torch.randn(2, 8, 32)
        with record_function("forward"):
            loss = model(x).pow(2).mean()
        with record_function("backward"):
            loss.backward()
        with record_function("optimizer"):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

    return step


def plain(name):
    """A run without a schedule, ranges or shapes: a small MLP's forward and backward with
    `profile_memory` alone, and tensors freed between operators (the `[memory]` rows torch
    prints for allocations and frees no operator holds)."""
    out = HERE / name
    (out / "tables").mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    x = torch.randn(8, 16)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        y = model(x)
        loss = y.sum()
        loss.backward()
        del y, loss
        z = x * 2
        del z
    export(prof, out, TABLES[:5])


def export(prof, out, tables):
    plain_path = out / "trace.json"
    prof.export_chrome_trace(str(plain_path))
    (out / "trace.json.gz").write_bytes(gzip.compress(plain_path.read_bytes(), 9, mtime=0))
    plain_path.unlink()
    for table, group, options in tables:
        text = prof.key_averages(**group).table(**options)
        (out / "tables" / f"{table}.txt").write_text(text)
    (out / "tables.json").write_text(
        json.dumps({t: {"key_averages": g, "table": o} for t, g, o in tables}, indent=1) + "\n"
    )


def run(name, make_step, tables=TABLES, with_stack=True, overload_names=False):
    out = HERE / name
    (out / "tables").mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    step = make_step()

    def ready(prof):
        export(prof, out, tables)

    experimental = {}
    if overload_names:
        from torch._C._profiler import _ExperimentalConfig

        experimental["experimental_config"] = _ExperimentalConfig(capture_overload_names=True)
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
        on_trace_ready=ready,
        record_shapes=True,
        profile_memory=True,
        with_stack=with_stack,
        with_flops=True,
        **experimental,
    ) as prof:
        for _ in range(4):
            step()
            prof.step()


RUNS = {
    "cnn": lambda: run("cnn", cnn_step),
    "transformer": lambda: run("transformer", transformer_step),
    "plain": lambda: plain("plain"),
    "overload": lambda: run(
        "overload", transformer_step, OVERLOAD_TABLES, with_stack=False, overload_names=True
    ),
    "python": lambda: run("python", cnn_step, PYTHON_TABLES),
}


def main():
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, Python {sys.version.split()[0]}", file=sys.stderr)
    for name in sys.argv[1:] or RUNS:
        RUNS[name]()


if __name__ == "__main__":
    main()
