"""Checks profkit against paddlepaddle 3.3.1: its legacy reports and its node trees.

Run through check.sh, which provides the venv. Each Paddle program runs in a child process
(`check.py --program ...`) that prints Paddle's legacy report on its stdout, as
`paddle.base.core.disable_profiler` does, and writes the `Profile` beside it:

- `dygraph`: one thread of dygraph ops (matmul, relu, transpose, sum, three times) under
  `core.enable_profiler`, in the CPU state with no sort key and in the All state sorted by calls;
- `static`: a static-graph program of two fc layers run twice by the executor, whose `pd_op.*` ops
  run on its worker thread and `StandaloneExecutor::run` on the main thread: two threads, so a
  merged section, sorted by calls and with no sort key;
- `nodetree`: a small training loop under `paddle.profiler.Profiler`, exported as node trees
  (`.paddle_trace.pb`) and as a Chrome trace (`.json`).

- `summary dygraph`: a LeNet trained in dygraph mode with Adam, a `DataLoader` with 2 worker
  processes and nested `RecordEvent`s, under `paddle.profiler.Profiler` (CPU, shapes, memory),
  exported as node trees and as a Chrome trace, with what `prof.summary()` printed for several
  option sets (sort keys, `op_detail`, `thread_sep`, time units);
- `summary static`: a static-graph program of two fc layers run by the executor under
  `paddle.profiler.Profiler`, the same way.

A summary check passes when `profkit report` of the node trees with the same options prints
Paddle's tables: the same tables, rows, order and cells, row by row (times to Paddle's printed
precision: both read the times of the same nodes), but for the FLOPs column, which Paddle
computes from operator attributes no file keeps. The same comparison of `profkit report` of
Paddle's Chrome trace is a check of its own (`... from JSON`).

A legacy check passes when `profkit report` of the `Profile` has the rows of Paddle's printed report,
in the same order, with the same calls (the times differ: Paddle's report and its file use
different clocks). Only sort keys that do not depend on times are used, so that the order is
Paddle's to give. A node trees check passes when profkit decodes the file completely (it
re-encodes to the same bytes, `profkit validate` finds nothing) and every thread has as many host
nodes as the Chrome trace has host events, and `profkit report` reads it.

Prints one line per check and ends with `N passed, M failed`; exits non-zero if any failed.
`--save DIR` also copies the static program's sorted-by-calls `Profile` and report into DIR as
`input.pb` and `paddle-report.txt` (how `conformance/paddle/static-cpu-calls` was made).
`--save-summary DIR` copies the static summary run into DIR as a conformance case: its node trees
(`input.paddle_trace.pb`), Chrome trace (`paddle_trace.json`), Paddle's printed summaries
(`paddle-summary-<k>.txt`) and `paddle-summaries.json` (how `conformance/paddle/nodetree-static`
was made).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

CHILD_TIMEOUT_S = 300

DYGRAPH = """
import paddle
from paddle.base import core
paddle.set_device("cpu")
paddle.seed(2024)
x = paddle.randn([64, 64])
w = paddle.randn([64, 32])
core.enable_profiler(getattr(core.ProfilerState, STATE))
for i in range(3):
    y = paddle.matmul(x, w)
    z = paddle.nn.functional.relu(y)
    s = paddle.transpose(z, [1, 0]).sum()
core.disable_profiler(getattr(core.EventSortingKey, KEY), PROFILE)
"""

STATIC = """
import numpy as np
import paddle
from paddle.base import core
paddle.enable_static()
paddle.set_device("cpu")
paddle.seed(2024)
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [16, 32], "float32")
    h = paddle.static.nn.fc(x, 64, activation="relu")
    out = paddle.mean(paddle.static.nn.fc(h, 8))
exe = paddle.static.Executor(paddle.CPUPlace())
exe.run(startup)
feed = {"x": np.random.RandomState(0).rand(16, 32).astype("float32")}
exe.run(main, feed=feed, fetch_list=[out])
core.enable_profiler(getattr(core.ProfilerState, STATE))
for i in range(2):
    exe.run(main, feed=feed, fetch_list=[out])
core.disable_profiler(getattr(core.EventSortingKey, KEY), PROFILE)
"""

NODETREE = """
import paddle
import paddle.profiler as profiler
paddle.set_device("cpu")
paddle.seed(2024)
model = paddle.nn.Sequential(paddle.nn.Linear(16, 32), paddle.nn.ReLU(), paddle.nn.Linear(32, 4))
opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], scheduler=(1, 3), timer_only=False)
prof.start()
for step in range(4):
    with profiler.RecordEvent("train_step"):
        loss = model(paddle.randn([8, 16])).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
    prof.step()
prof.stop()
prof.export(path=OUT + "/trace.paddle_trace.json", format="json")
prof.export(path=OUT + "/trace.paddle_trace.pb", format="pb")
"""

SUMMARY_DYGRAPH = """
import contextlib, glob, io, json, os, shutil
import numpy as np
import paddle
import paddle.profiler as profiler
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
                         on_trace_ready=None, timer_only=False, record_shapes=True, profile_memory=True)
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
"""

SUMMARY_STATIC = """
import contextlib, io, json, os
import numpy as np
import paddle
import paddle.profiler as profiler
paddle.enable_static()
paddle.set_device("cpu")
paddle.seed(2024)
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [16, 32], "float32")
    h = paddle.static.nn.fc(x, 64, activation="relu")
    out = paddle.mean(paddle.static.nn.fc(h, 8))
exe = paddle.static.Executor(paddle.CPUPlace())
exe.run(startup)
feed = {"x": np.random.RandomState(0).rand(16, 32).astype("float32")}
prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], scheduler=(1, 4), timer_only=False)
prof.start()
for step in range(5):
    with profiler.RecordEvent("run_step"):
        exe.run(main, feed=feed, fetch_list=[out])
    prof.step()
prof.stop()
"""

# After either program: export both ways and print summary() for each option set.
SUMMARY_TAIL = """
prof.export(path=OUT + "/trace.paddle_trace.json", format="json")
prof.export(path=OUT + "/trace.paddle_trace.pb", format="pb")
for k, opts in enumerate(json.loads(OPTION_SETS)):
    kwargs = dict(opts)
    if "sorted_by" in kwargs:
        kwargs["sorted_by"] = getattr(profiler.SortedKeys, kwargs["sorted_by"])
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        prof.summary(**kwargs)
    with open(OUT + "/summary%d.txt" % k, "w") as f:
        f.write(buf.getvalue())
"""

# summary() option sets: Paddle's keyword arguments, as profkit flags.
OPTION_SETS = [
    {},
    {"sorted_by": "CPUAvg", "op_detail": False, "time_unit": "us"},
    {"sorted_by": "CPUMax", "thread_sep": True, "time_unit": "ns"},
    {"sorted_by": "CPUMin", "time_unit": "s"},
    {"sorted_by": "GPUTotal", "op_detail": True, "thread_sep": True},
    {"sorted_by": "GPUMin", "time_unit": "ms"},
]


def summary_flags(opts):
    flags = []
    if "sorted_by" in opts:
        flags += ["--sorted-by", opts["sorted_by"]]
    if opts.get("op_detail") is False:
        flags.append("--no-op-detail")
    if opts.get("thread_sep"):
        flags.append("--thread-sep")
    if "time_unit" in opts:
        flags += ["--time-unit", opts["time_unit"]]
    return flags


def parse_tables(text):
    """The rows of a printed summary: (table title, thread group, cells split at 2+ spaces)."""
    rows = []
    table = group = ""
    state = 0  # 0 outside a body, 1 header seen, 2 in a body

    def is_rule(line):
        return bool(line) and set(line.rstrip()) <= {"-", " "}

    for line in text.splitlines():
        if line.startswith("-") and not is_rule(line) and len(line.strip("-")) + 2 <= len(line):
            title = line.strip("-")
            if title.startswith("Thread: "):
                group, state = title[len("Thread: "):], 2
            else:
                table, group, state = title, "", 0
            continue
        if is_rule(line):
            state = {1: 2, 2: 0}.get(state, state)
            continue
        if not line.strip():
            if state == 2:
                state = 0
            continue
        if state == 0:
            if line.startswith(("Name", "Device", "Event Type")) or line.lstrip().startswith("Calls"):
                state = 1
            continue
        if state == 2:
            indent = len(line) - len(line.lstrip())
            cells = [c.strip() for c in line.strip().split("  ") if c.strip()]
            if cells:
                cells[0] = " " * indent + cells[0]
            rows.append((table, group, cells))
    return rows


def compare_summaries(ours, theirs, skip_tables=()):
    """Differences between our printed summary and Paddle's, row by row (FLOPs aside, the
    Device table's CPU cells where ours say they are not in the input, and the tables in
    `skip_tables`)."""
    def normal(rows, mine):
        out = []
        for table, group, cells in rows:
            if any(table.startswith(t) for t in skip_tables):
                continue
            cells = list(cells)
            if table == "Operator Summary" and len(cells) == 5:
                cells.pop()
            if table == "Device Summary" and cells[0].startswith("CPU") and (not mine or cells[1:] == ["-"]):
                cells = cells[:1] if mine else cells
            out.append((table, group, cells))
        return out
    a, b = normal(parse_tables(ours), True), normal(parse_tables(theirs), False)
    diffs = []
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x and y and x[0] == y[0] == "Device Summary" and len(x[2]) == 1 and x[2][0] == y[2][0]:
            continue
        if x != y:
            diffs.append(f"row {i}: Paddle {y}, profkit {x}")
    return len(b), diffs


def save_summary_case(work, save):
    os.makedirs(save, exist_ok=True)
    shutil.copy(os.path.join(work, "trace.paddle_trace.pb"), os.path.join(save, "input.paddle_trace.pb"))
    shutil.copy(os.path.join(work, "trace.paddle_trace.json"), os.path.join(save, "paddle_trace.json"))
    listing = []
    for k, opts in enumerate(OPTION_SETS):
        name = f"paddle-summary-{k}.txt"
        shutil.copy(os.path.join(work, f"summary{k}.txt"), os.path.join(save, name))
        listing.append(dict(file=name, **opts))
    with open(os.path.join(save, "paddle-summaries.json"), "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join("  " + json.dumps(e) for e in listing) + "\n]\n")


def check_summary(source, label, repo, work, save=None):
    """Runs a program under the new profiler; compares our summaries of its node trees and of its
    Chrome trace with Paddle's. Returns two results: (ok, message) for the .pb and for the JSON."""
    os.makedirs(work)
    _, error = run_program(source + SUMMARY_TAIL, {"OUT": work, "OPTION_SETS": json.dumps(OPTION_SETS)}, work)
    if error:
        return (False, error), (False, error)
    if save:
        save_summary_case(work, save)
    results = []
    for kind, path in (("pb", "trace.paddle_trace.pb"), ("json", "trace.paddle_trace.json")):
        # Paddle's Chrome trace writes memory events at whole microseconds and without the range
        # they happened in, which its Memory Summary (built from its node trees) attributes them
        # to: from the JSON, ours attributes them by time and says so; not compared.
        skip = ("Memory Summary",) if kind == "json" else ()
        rows = 0
        problems = []
        for k, opts in enumerate(OPTION_SETS):
            with open(os.path.join(work, f"summary{k}.txt"), encoding="utf-8") as f:
                theirs = f.read()
            ours = profkit(["report", os.path.join(work, path)] + summary_flags(opts), repo)
            if ours.returncode != 0:
                problems.append(f"{opts}: profkit report failed: {ours.stderr.strip()}")
                continue
            n, diffs = compare_summaries(ours.stdout, theirs, skip)
            rows += n
            if n == 0:
                problems.append(f"{opts}: Paddle printed no table rows")
            if diffs:
                tables = sorted({d.split("'")[1] for d in diffs if "'" in d})
                problems.append(f"{opts}: {len(diffs)} rows differ (tables {tables}); first: {diffs[0]}")
        if problems:
            results.append((False, "; ".join(problems[:3]) + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else "")))
        else:
            note = " (Memory Summary not compared: not in Paddle's JSON)" if skip else ""
            results.append((True, f"{len(OPTION_SETS)} option sets, {rows} rows: same tables, rows, order, calls and times{note}"))
    return results[0], results[1]


# (name, program, profiler state, sort key, profkit --sort, profkit --place)
LEGACY_RUNS = [
    ("dygraph CPU kDefault", DYGRAPH, "kCPU", "kDefault", None, "cpu"),
    ("dygraph All kCalls", DYGRAPH, "kAll", "kCalls", "calls", "all"),
    ("static CPU kCalls", STATIC, "kCPU", "kCalls", "calls", "cpu"),
    ("static CPU kDefault", STATIC, "kCPU", "kDefault", None, "cpu"),
]


def parse_rows(text):
    """The Event Summary rows of a printed report: (section, merged, depth, name, calls)."""
    rows = []
    section = -1
    merged = False
    calls_at = None
    for line in text.splitlines():
        if "Memory Profiling Report" in line:
            calls_at = None
            continue
        if "Profiling Report" in line:
            section += 1
            merged = False
            calls_at = None
            continue
        if line.startswith("Note! This Report merge all thread info into one."):
            merged = True
            continue
        words = line.split()
        if line.startswith("Event ") and len(words) > 1 and words[1] == "Calls":
            calls_at = line.index("Calls")
            continue
        if calls_at is None:
            continue
        if not line.strip() or line.startswith("---"):
            calls_at = None
            continue
        head = line[:calls_at]
        if head.endswith(" "):
            name, rest = head.rstrip(), line[calls_at:]
        else:
            # The name overflows its column and the calls follow it directly.
            cells = 9 if " (" in line else 5
            glued = words[-(cells + 1)]
            end = line.rindex(glued, 0, len(line) - sum(len(w) for w in words[-cells:])) + len(glued)
            stripped = line[:end].rstrip("0123456789")
            name, rest = stripped, line[len(stripped):]
        indent = len(name) - len(name.lstrip(" "))
        name = name.lstrip(" ")
        try:
            calls = int(rest.split()[0])
        except (IndexError, ValueError):
            continue
        rows.append((section, merged, indent // 2 if name else 0, name, calls))
    return rows


def show(row):
    section, merged, depth, name, calls = row
    return f"{'[merged] ' if merged else ''}{'  ' * depth}{name} x{calls}"


def run_program(source, env_vars, work):
    """Runs a Paddle program in a child; returns (stdout text, error or None)."""
    script = "".join(f"{k} = {json.dumps(v)}\n" for k, v in env_vars.items()) + source
    path = os.path.join(work, "program.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(script)
    log = os.path.join(work, "stderr.txt")
    with open(log, "w", encoding="utf-8") as err:
        try:
            proc = subprocess.run(
                [sys.executable, path],
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                timeout=CHILD_TIMEOUT_S,
                check=False,
                cwd=work,
            )
        except subprocess.TimeoutExpired:
            return "", f"Paddle took over {CHILD_TIMEOUT_S} s"
    if proc.returncode != 0:
        with open(log, encoding="utf-8", errors="replace") as f:
            tail = "".join(f.readlines()[-5:]).strip()
        return proc.stdout, f"Paddle exited with status {proc.returncode}: {tail}"
    return proc.stdout, None


def profkit(args, repo):
    exe = os.path.join(repo, "target", "debug", "profkit")
    return subprocess.run([exe] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)


def check_legacy(run, repo, work, save):
    name, source, state, key, sort, place = run
    os.makedirs(work)
    profile = os.path.join(work, "profile.pb")
    paddle_report, error = run_program(source, {"STATE": state, "KEY": key, "PROFILE": profile}, work)
    if error:
        return False, error
    with open(os.path.join(work, "paddle-report.txt"), "w", encoding="utf-8") as f:
        f.write(paddle_report)
    args = ["report", profile, "--place", place] + (["--sort", sort] if sort else [])
    ours = profkit(args, repo)
    if ours.returncode != 0:
        return False, f"profkit report failed: {ours.stderr.strip()}"
    theirs_rows, ours_rows = parse_rows(paddle_report), parse_rows(ours.stdout)
    if not theirs_rows:
        return False, "Paddle printed no report rows"
    if theirs_rows != ours_rows:
        lines = []
        for i in range(max(len(theirs_rows), len(ours_rows))):
            a = show(theirs_rows[i]) if i < len(theirs_rows) else "(none)"
            b = show(ours_rows[i]) if i < len(ours_rows) else "(none)"
            if a != b:
                lines.append(f"row {i}: Paddle {a!r}, profkit {b!r}")
        return False, "rows differ: " + "; ".join(lines[:5])
    sections = len({r[0] for r in theirs_rows})
    threads = len({r[3].split("::")[0] for r in theirs_rows if not r[1] and re.match(r"thread\d+::", r[3])})
    if save and name == "static CPU kCalls":
        os.makedirs(save, exist_ok=True)
        shutil.copy(profile, os.path.join(save, "input.pb"))
        shutil.copy(os.path.join(work, "paddle-report.txt"), os.path.join(save, "paddle-report.txt"))
    return True, f"{len(theirs_rows)} rows in {sections} sections, {threads} threads, same order and calls"


def check_nodetree(repo, work):
    os.makedirs(work)
    _, error = run_program(NODETREE, {"OUT": work}, work)
    if error:
        return False, error
    pb = os.path.join(work, "trace.paddle_trace.pb")
    with open(os.path.join(work, "trace.paddle_trace.json"), encoding="utf-8") as f:
        trace = json.load(f)
    host = {}
    for e in trace.get("traceEvents", []):
        tid = e.get("tid") if isinstance(e, dict) else None
        if e and e.get("ph") == "X" and isinstance(tid, str) and (tid.endswith("(C++)") or tid.endswith("(Python)")):
            key = tid.split("(")[0]
            host[key] = host.get(key, 0) + 1
    decoded = subprocess.run(
        ["cargo", "run", "--quiet", "-p", "conformance", "--bin", "paddle-decode", "--", pb],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    if decoded.returncode != 0:
        return False, f"profkit cannot decode it: {decoded.stderr.strip()}"
    doc = json.loads(decoded.stdout)
    if doc["format"] != "node_trees":
        return False, f"detected as {doc['format']}"
    if not doc["reencodes"]:
        return False, "decoding loses fields: the message does not re-encode to the file's bytes"
    if doc["threads"] != host:
        return False, f"host nodes per thread {doc['threads']}, Chrome trace host events {host}"
    validate = profkit(["validate", pb], repo)
    if validate.returncode != 0:
        return False, f"profkit validate: {validate.stdout.strip()} {validate.stderr.strip()}"
    report = profkit(["report", "--legacy", pb], repo)
    if report.returncode != 0 or not parse_rows(report.stdout):
        return False, f"profkit report: {report.stderr.strip()}"
    total = sum(host.values())
    return True, f"{total} host nodes on {len(host)} threads, as in the Chrome trace; re-encodes byte for byte"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="repository root")
    parser.add_argument("--save", help="save the static kCalls Profile and report into this folder")
    parser.add_argument("--save-summary", help="save the static summary run into this folder")
    args = parser.parse_args()
    start = time.monotonic()
    build = subprocess.run(["cargo", "build", "--quiet", "-p", "profkit", "-p", "conformance"], cwd=args.repo, check=False)
    if build.returncode != 0:
        print("cargo build failed; see above")
        print("0 passed, 1 failed")
        return 1
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="paddle-check-") as tmp:
        checks = [(run[0], lambda run=run, i=i: check_legacy(run, args.repo, os.path.join(tmp, f"legacy{i}"), args.save))
                  for i, run in enumerate(LEGACY_RUNS)]
        checks.append(("node trees", lambda: check_nodetree(args.repo, os.path.join(tmp, "nodetree"))))
        for label, source in (("summary dygraph", SUMMARY_DYGRAPH), ("summary static", SUMMARY_STATIC)):
            results = {}

            def run_both(source=source, label=label, results=results):
                save = args.save_summary if label == "summary static" else None
                results["both"] = check_summary(source, label, args.repo, os.path.join(tmp, label.replace(" ", "-")), save)
                return results["both"][0]

            checks.append((f"{label} from node trees", run_both))
            checks.append((f"{label} from JSON", lambda results=results: results.get("both", [None, (False, "not run")])[1]))
        for label, check in checks:
            try:
                ok, message = check()
            except Exception as e:  # a failure of the check itself is a failed check
                ok, message = False, f"{type(e).__name__}: {e}"
            print(f"{'ok  ' if ok else 'FAIL'} {label}: {message}", flush=True)
            passed += ok
            failed += not ok
    print(f"({time.monotonic() - start:.1f} s)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
