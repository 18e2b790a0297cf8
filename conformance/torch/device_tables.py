"""Makes the device goldens of conformance/torch/device: torch's own table code run on the GPU
traces of conformance/chrome/corpus.

torch prints its table from the live profiler's events; with no GPU here, no run can print the
device columns (`Self CUDA`, `Self CUDA %`, `CUDA total`, `CUDA time avg`) of a real GPU trace.
What can be run is everything after the events: this script makes torch's `FunctionEvent`s from
a saved Kineto trace as `torch.autograd.profiler._parse_kineto_results` makes them from the
profiler's `KinetoEvent`s (one per complete event, `[memory]` instants as memory records, device
activity linked to the operator of its `External id` with `append_kernel`, runtime calls moved
to their operator's thread), then calls torch's own `EventList._build_tree`, `key_averages` and
`table`, whose rules (nesting, folding, kernels' time up the tree, self device time, the device
share and totals, the columns and their formatting) are the ones the device columns follow. So
the goldens check profkit's table against torch's code for those rules; how a trace's events
become `KinetoEvent`s is this script's reading of Kineto (the same as profkit's). FLOPs are left
out (`with_flops=False`, and the test reads the traces so): torch works them out in C++ from the
shapes, which this script cannot call; the CPU goldens check them.

For each case: `device/<case>/trace` (the trace's path in conformance/chrome/corpus),
`device/<case>/tables/<name>.txt` and `device/<case>/tables.json` (the arguments of each table).

Usage: .oracle/torch/bin/python conformance/torch/device_tables.py   (from the repository root)
"""

import gzip
import json
from decimal import ROUND_HALF_UP, Decimal
import pathlib
import sys

from torch.autograd import DeviceType
from torch.autograd.profiler_util import (
    EventList,
    FunctionEvent,
    MemRecordsAcc,
    _filter_name,
    _rewrite_name,
)

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE.parent / "chrome" / "corpus"

CASES = {
    "alexnet": "hta/critical_path-alexnet-benchmark_result_2869224_1695835535_trace.json.gz",
    "simple_add": "hta/critical_path-simple_add-benchmark_result_493459_1694039959_trace.json.gz",
    "h100_bert": "tracelens/h100-gaunernst_bert-small-uncased__1016001.json.gz",
    "b200_eager": "tracelens/b200-eager_trace.json.gz",
    "mi250": "hta/amd_trace-mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "mi300_bert": "tracelens/mi300-gaunernst_bert-small-uncased__1016001.json.gz",
    "sglang_decode": "tracelens/inference-sglang_decode-sglang_Qwen3-8B_decode.json.gz",
    "mi210_gpu_only": "tracelens/mi210-gpu_only_trace-gpu_only_trace.json.gz",
    "normalization": "tracelens/perf_model-normalization-normalization_layer_test.json.gz",
    "compile_triton": "tracelens/torch_compile_triton-trace.json.gz",
    "event_sync": "hta/critical_path-cuda_event_sync-event_sync_trace.json.gz",
    "event_sync_streams": "hta/critical_path-cuda_event_sync_multi_stream-event_sync_trace.json.gz",
    "triton": "hta/triton_example-triton_example.json.gz",
}

TABLES = [
    ("default", {}, {}),
    ("self_cuda_time_total", {}, {"sort_by": "self_cuda_time_total", "row_limit": 15}),
    ("cuda_time_total", {}, {"sort_by": "cuda_time_total", "row_limit": -1}),
    ("cuda_time", {}, {"sort_by": "cuda_time", "row_limit": 10}),
    ("cpu_time_total", {}, {"sort_by": "cpu_time_total", "row_limit": 10}),
    ("count", {}, {"sort_by": "count", "row_limit": 10, "time_unit": "ms"}),
]

DEVICE_CATEGORIES = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "gpu_user_annotation", "cuda_sync"}
FRONTEND_CATEGORIES = {"cpu_op", "Operator", "user_annotation"}
CPU_MEMORY = {0, 2, 5}  # c10 DeviceType: CPU, MKLDNN, IDEEP
DEVICE_MEMORY = {1, 6, 12, 20}  # CUDA, HIP, XPU, PrivateUse1


def ns(micros):
    """A trace time (microseconds, as written, read as a Decimal) in integer nanoseconds, half
    away from zero past the third decimal (Unix-epoch microseconds times 1000 do not fit a
    double)."""
    return int((Decimal(micros) * 1000).to_integral_value(ROUND_HALF_UP))


class Record:
    """A `[memory]` instant as `MemRecordsAcc` reads a profiler's record."""

    def __init__(self, e):
        self.ts = ns(e["ts"])
        self.args = e.get("args") or {}

    def start_ns(self):
        return self.ts


def function_events(trace):
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    span = [e for e in events if e.get("cat") == "Trace" and e.get("ph") == "X"]
    complete = [e for e in events if e.get("ph") == "X" and e.get("cat") != "Trace"]
    base = ns(span[0]["ts"]) if span else min(ns(e["ts"]) for e in complete)
    use_device = "cuda" if (isinstance(trace, dict) and trace.get("deviceProperties")) or any(
        e.get("cat") in DEVICE_CATEGORIES for e in complete
    ) else None
    mem = [[Record(e), False] for e in events if e.get("ph") in ("i", "I") and e.get("name") == "[memory]"]
    acc = MemRecordsAcc(mem)
    out, frontend, linked = [], [], {}
    for e in complete:
        name = e.get("name", "")
        if _filter_name(name):
            continue
        args = e.get("args") or {}
        cat = e.get("cat", "")
        device = cat in DEVICE_CATEGORIES
        start, end = ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0))
        cpu_mem = dev_mem = 0
        if not device:
            for record in acc.in_interval(start, end):
                kind = int(record[0].args.get("Device Type", 0))
                nbytes = int(record[0].args.get("Bytes", 0))
                cpu_mem += nbytes if kind in CPU_MEMORY else 0
                dev_mem += nbytes if kind in DEVICE_MEMORY else 0
                record[1] = True
        external = int(args.get("External id", 0) or 0)
        fe = FunctionEvent(
            id=external,
            name=_rewrite_name(name, with_wildcard=True),
            thread=e.get("tid"),
            start_us=(start - base) / 1000,
            end_us=(end - base) / 1000,
            use_device=use_device,
            cpu_memory_usage=cpu_mem,
            device_memory_usage=dev_mem,
            device_type=DeviceType.CUDA if device else DeviceType.CPU,
            device_index=int(args.get("device", 0) or 0),
            is_user_annotation=cat in ("user_annotation", "gpu_user_annotation"),
            is_python_function=cat == "python_function",
            input_shapes=[],
            stack=[],
            flops=0,
        )
        out.append(fe)
        if cat in FRONTEND_CATEGORIES:
            if external:
                frontend.append(fe)
        elif external:
            linked.setdefault(external, []).append(fe)
    for fe in frontend:
        for f_evt in linked.get(fe.id, []):
            if f_evt.device_type == DeviceType.CUDA:
                fe.append_kernel(f_evt.name, f_evt.device_index, f_evt.time_range.end - f_evt.time_range.start)
            else:
                f_evt.thread = fe.thread
    for record, matched in mem:
        if not matched:
            kind = int(record.args.get("Device Type", 0))
            nbytes = int(record.args.get("Bytes", 0))
            out.append(
                FunctionEvent(
                    id=0,
                    name="[memory]",
                    thread=0,
                    start_us=(record.ts - base) / 1000,
                    end_us=(record.ts - base) / 1000,
                    use_device=use_device,
                    cpu_memory_usage=nbytes if kind in CPU_MEMORY else 0,
                    device_memory_usage=nbytes if kind in DEVICE_MEMORY else 0,
                    input_shapes=[],
                    stack=[],
                )
            )
    out.sort(key=lambda evt: [evt.time_range.start, -evt.time_range.end])
    profile_memory = bool(trace.get("profile_memory")) if isinstance(trace, dict) else False
    profile_memory = profile_memory or bool(mem)
    events = EventList(out, use_device=use_device, profile_memory=profile_memory, with_flops=False)
    events._build_tree()
    return events


def main():
    for case, rel in CASES.items():
        trace = json.loads(gzip.open(CORPUS / rel).read(), parse_float=Decimal)
        events = function_events(trace)
        out = HERE / "device" / case
        (out / "tables").mkdir(parents=True, exist_ok=True)
        (out / "trace").write_text(rel + "\n")
        for table, group, options in TABLES:
            text = events.key_averages(**group).table(**options)
            (out / "tables" / f"{table}.txt").write_text(text)
        (out / "tables.json").write_text(
            json.dumps({t: {"key_averages": g, "table": o} for t, g, o in TABLES}, indent=1) + "\n"
        )
        print(f"{case}: {len(events)} events", file=sys.stderr)


if __name__ == "__main__":
    main()
