#!/usr/bin/env python3
"""Benchmark: `profkit.events(path).to_pandas()` against Python protobuf (upb) building the same
DataFrame, on the 1M-event XSpace of the XSpace benchmarks.

Each measurement runs in a fresh child process that first imports everything both sides use
(pandas, pyarrow, protobuf and the generated xplane_pb2, profkit), then times one side from
reading the file to the finished DataFrame; its peak resident memory (ru_maxrss) is taken at the
end. The two sides alternate run by run so both see the same machine load; the medians are
reported, with the peak over a child that only imports (the baseline). A last child builds both
DataFrames and checks that they are equal, column by column.

The peer builds what `to_pandas()` gives: the dictionary columns as categoricals, the exact time
pair timestamp_ns and offset_ps as int64, nullable integers as float64 with NaN, the typed stat
columns by the same rules (event stats before the metadata's, the first name of a column's list
first), and stats as the text of a JSON object of (name, text) pairs, a pandas string column. With
--breakdown it also measures the Parquet layout (`events(path, layout="parquet").to_pandas()`)
against a peer building that frame: start_ps as decimal.Decimal objects and stats as lists of
(name, text) pairs.

Data: target/bench-data/xspace_1m.xplane.pb, which `cargo bench -p profkit-xplane --bench
stream_memory` writes (run here when it is missing). Usage, with the venv of
conformance/python/check.sh (which has the wheel installed):

    .oracle/python/bin/python crates/profkit-python/benches/events_pandas.py --runs 3

Prints the figures and writes them to target/bench-data/events_pandas.results.json.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

PRELUDE = r"""
import base64, decimal, gc, json, resource, sys, time
sys.path.insert(0, sys.argv[2])
import numpy as np
import pandas as pd
import pyarrow
import profkit
from google.protobuf.internal import api_implementation
from tensorflow.profiler import xplane_pb2
path = sys.argv[1]
mode = sys.argv[3]
"""

PEER = r"""
TYPED = [
    ("step_num", ["step_num", "step_id", "iter_num"], "int"),
    ("group_id", ["group_id"], "int"),
    ("correlation_id", ["correlation_id"], "int"),
    ("tf_op", ["tf_op"], "str"),
    ("hlo_op", ["hlo_op"], "str"),
    ("hlo_module", ["hlo_module"], "str"),
    ("bytes_accessed", ["bytes_accessed", "bytes"], "int"),
    ("flops", ["flops", "model_flops"], "int"),
]

def as_int(stat, kind):
    if kind in ("int64_value", "uint64_value"):
        v = getattr(stat, kind)
        return v if v <= 2**63 - 1 else None
    if kind == "double_value":
        v = stat.double_value
        return int(v) if v == v and abs(v) < 9.0e18 and v == int(v) else None
    if kind == "str_value":
        try:
            return int(stat.str_value)
        except ValueError:
            return None
    return None

def text(stat, kind, smd):
    if kind == "double_value":
        v = stat.double_value
        return str(int(v)) if v == int(v) and abs(v) < 1e16 else repr(v)
    if kind == "str_value":
        return stat.str_value
    if kind in ("int64_value", "uint64_value"):
        return str(getattr(stat, kind))
    if kind == "bytes_value":
        return base64.b64encode(stat.bytes_value).decode()
    if kind == "ref_value":
        md = smd.get(stat.ref_value)
        return md.name if md is not None else ""
    return ""

def json_text(pairs):
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + json.dumps(v, ensure_ascii=False)
                          for k, v in pairs) + "}"

def peer_frame(path, with_stats=True, layout="frame"):
    frame_layout = layout == "frame"
    with open(path, "rb") as f:
        space = xplane_pb2.XSpace.FromString(f.read())
    plane_c, plane_id, line_c, line_id, name_c, display_c = [], [], [], [], [], []
    start, duration, occurrences, stats_c = [], [], [], []
    timestamps, offsets = [], []
    typed = {c: [] for c, _, _ in TYPED}
    Decimal = decimal.Decimal
    for plane in space.planes:
        emd = dict(plane.event_metadata)
        smd = dict(plane.stat_metadata)
        names = {i: m.name for i, m in smd.items()}
        slots = {}
        for i, n in names.items():
            for col, (c, wanted, kind) in enumerate(TYPED):
                if n in wanted:
                    slots[i] = (c, wanted.index(n), kind)
        for line in plane.lines:
            base = line.timestamp_ns * 1000
            ts = line.timestamp_ns
            for event in line.events:
                md = emd.get(event.metadata_id)
                plane_c.append(plane.name)
                plane_id.append(plane.id)
                line_c.append(line.name)
                line_id.append(line.id)
                n = md.name if md is not None else ""
                name_c.append(n)
                display_c.append((md.display_name or n) if md is not None else "")
                data = event.WhichOneof("data")
                if frame_layout:
                    timestamps.append(ts)
                    offsets.append(event.offset_ps)
                    if data == "num_occurrences":
                        occurrences.append(float(event.num_occurrences))
                    else:
                        occurrences.append(np.nan)
                elif data == "num_occurrences":
                    start.append(None)
                    occurrences.append(float(event.num_occurrences))
                else:
                    start.append(Decimal(base + (event.offset_ps if data else 0)))
                    occurrences.append(np.nan)
                duration.append(event.duration_ps)
                pairs = []
                best = {}
                own = set()
                for s in event.stats:
                    own.add(s.metadata_id)
                all_stats = list(event.stats)
                if md is not None:
                    all_stats += [s for s in md.stats if s.metadata_id not in own]
                nown = len(event.stats)
                for k, s in enumerate(all_stats):
                    kind = s.WhichOneof("value")
                    if with_stats:
                        pairs.append((names.get(s.metadata_id, ""), text(s, kind, smd)))
                    slot = slots.get(s.metadata_id)
                    if slot is None:
                        continue
                    c, priority, want = slot
                    rank = (k >= nown, priority)
                    if c in best and best[c][0] <= rank:
                        continue
                    if want == "int":
                        v = as_int(s, kind)
                    elif kind == "str_value":
                        v = s.str_value
                    elif kind == "ref_value":
                        m = smd.get(s.ref_value)
                        v = m.name if m is not None else ""
                    else:
                        v = None
                    if v is not None:
                        best[c] = (rank, v)
                if with_stats:
                    stats_c.append(json_text(pairs) if frame_layout else pairs)
                for c, _, kind in TYPED:
                    v = best.get(c)
                    typed[c].append(v[1] if v is not None else (np.nan if kind == "int" else None))
    host = path.rsplit("/", 1)[-1].split(".")[0]
    n = len(duration)
    cat = lambda values: pd.Categorical(values)
    frame = {
        "host": cat([host] * n),
        "source_format": cat(["xspace"] * n),
        "plane": cat(plane_c),
        "plane_id": np.array(plane_id, dtype=np.int64),
        "line": cat(line_c),
        "line_id": np.array(line_id, dtype=np.int64),
        "name": cat(name_c),
        "display_name": cat(display_c),
    }
    if frame_layout:
        frame["timestamp_ns"] = np.array(timestamps, dtype=np.int64)
        frame["offset_ps"] = np.array(offsets, dtype=np.int64)
    else:
        frame["start_ps"] = pd.Series(start, dtype=object)
    frame["duration_ps"] = np.array(duration, dtype=np.int64)
    frame["num_occurrences"] = np.array(occurrences, dtype=np.float64)
    for c, _, kind in TYPED:
        frame[c] = np.array(typed[c], dtype=np.float64) if kind == "int" else cat(typed[c])
    if with_stats:
        frame["stats"] = pd.Series(stats_c, dtype="str" if frame_layout else object)
    return pd.DataFrame(frame)
"""

MEASURE = r"""
gc.collect()
t0 = time.perf_counter()
if mode == "profkit":
    df = profkit.events(path).to_pandas()
elif mode == "protobuf":
    df = peer_frame(path)
elif mode == "profkit-nostats":
    df = profkit.events(path).drop_columns(["stats"]).to_pandas()
elif mode == "protobuf-nostats":
    df = peer_frame(path, with_stats=False)
elif mode == "profkit-parquet":
    df = profkit.events(path, layout="parquet").to_pandas()
elif mode == "protobuf-parquet":
    df = peer_frame(path, layout="parquet")
elif mode == "profkit-arrowdtype":
    df = profkit.events(path).to_pandas(types_mapper=pd.ArrowDtype)
elif mode == "profkit-arrow":
    df = profkit.events(path)
elif mode == "protobuf-parse":
    with open(path, "rb") as f:
        df = xplane_pb2.XSpace.FromString(f.read())
    df = [0] * sum(len(l.events) for p in df.planes for l in p.lines)
else:
    df = None
elapsed = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
rows = 0 if df is None else len(df)
print(json.dumps({"seconds": elapsed, "peak": peak, "rows": rows,
                  "upb": api_implementation.Type()}))
"""

VERIFY = r"""
def same_text(x, y):
    if x == y:
        return True
    try:
        return float(x) == float(y)
    except (TypeError, ValueError):
        return False

def same_pairs(x, y):
    return len(x) == len(y) and all(k1 == k2 and same_text(v1, v2) for (k1, v1), (k2, v2) in zip(x, y))

problems = []
for layout in ("frame", "parquet"):
  ours = profkit.events(path, layout=layout).to_pandas()
  theirs = peer_frame(path, layout=layout)
  if list(ours.columns) != list(theirs.columns):
    problems.append(f"{layout}: columns {list(ours.columns)} != {list(theirs.columns)}")
  for c in theirs.columns:
    a, b = ours[c], theirs[c]
    if not isinstance(b.dtype, pd.CategoricalDtype) and a.dtype != b.dtype:
        problems.append(f"{layout}: column {c}: dtype {a.dtype} != {b.dtype}")
    if c == "stats" and layout == "frame":
        load = lambda t: json.loads(t, object_pairs_hook=list)
        same = all(same_pairs(load(x), load(y)) for x, y in zip(a, b))
    elif c == "stats":
        same = all(same_pairs(x, y) for x, y in zip(a, b))
    elif c == "start_ps":
        same = all((x is None and y is None) or x == y for x, y in zip(a, b))
    elif isinstance(b.dtype, pd.CategoricalDtype):
        same = a.astype(object).where(a.notna(), None).tolist() == b.astype(object).where(b.notna(), None).tolist()
    elif c in ("timestamp_ns", "offset_ps", "plane_id", "line_id", "duration_ps"):
        same = np.array_equal(a.to_numpy(), b.to_numpy())
    else:
        same = np.array_equal(a.to_numpy(dtype=np.float64), b.to_numpy(dtype=np.float64), equal_nan=True)
    if not same:
        problems.append(f"{layout}: column {c} differs")
  del ours, theirs
print(json.dumps({"rows": int(profkit.events(path).num_rows), "problems": problems}))
"""


def ensure_data(path):
    if path.exists():
        return
    print(f"{path} is missing: generating it (cargo bench -p profkit-xplane --bench stream_memory)")
    subprocess.run(["cargo", "bench", "-p", "profkit-xplane", "--bench", "stream_memory"],
                   cwd=REPO, check=True)


def pb2_dir():
    from grpc_tools import protoc

    out = tempfile.mkdtemp(prefix="profkit-bench-pb2-")
    rc = protoc.main(["protoc", f"-I{REPO / 'proto'}", f"--python_out={out}",
                      str(REPO / "proto/tensorflow/profiler/xplane.proto")])
    if rc != 0:
        sys.exit("protoc failed")
    return out


def child(script, path, pb2, mode):
    done = subprocess.run([sys.executable, "-c", PRELUDE + PEER + script, str(path), pb2, mode],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{mode} child failed: {done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO / "target/bench-data/xspace_1m.xplane.pb")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument("--breakdown", action="store_true",
                        help="also time both sides without the stats column, and the Arrow table "
                             "against the protobuf parse alone")
    args = parser.parse_args()
    ensure_data(args.data)
    pb2 = pb2_dir()
    base = child(MEASURE, args.data, pb2, "baseline")
    if base["upb"] != "upb":
        sys.exit(f"protobuf runs on {base['upb']}, not upb")
    modes = ["profkit", "protobuf"]
    if args.breakdown:
        modes += ["profkit-parquet", "protobuf-parquet", "profkit-arrowdtype", "profkit-nostats",
                  "protobuf-nostats", "profkit-arrow", "protobuf-parse"]
    runs = {m: [] for m in modes}
    for i in range(args.runs):
        for mode in modes:
            r = child(MEASURE, args.data, pb2, mode)
            runs[mode].append(r)
            print(f"run {i + 1} {mode}: {r['seconds']:.3f} s, peak {r['peak'] / 1e6:.0f} MB, {r['rows']} rows",
                  flush=True)
    summary = {}
    for mode, rs in runs.items():
        summary[mode] = {
            "median_seconds": statistics.median(r["seconds"] for r in rs),
            "median_peak_bytes": statistics.median(r["peak"] for r in rs),
            "median_peak_over_baseline_bytes": statistics.median(r["peak"] - base["peak"] for r in rs),
            "rows": rs[0]["rows"],
        }
    ratios = {}
    for ours, theirs in (("profkit", "protobuf"), ("profkit-parquet", "protobuf-parquet"),
                         ("profkit-arrowdtype", "protobuf"),
                         ("profkit-nostats", "protobuf-nostats"),
                         ("profkit-arrow", "protobuf-parse")):
        if ours in summary:
            ratios[f"{ours} vs {theirs}"] = {
                "speedup": summary[theirs]["median_seconds"] / summary[ours]["median_seconds"],
                "peak_ratio": summary[ours]["median_peak_bytes"] / summary[theirs]["median_peak_bytes"],
            }
    p, q = summary["profkit"], summary["protobuf"]
    result = {
        "data": str(args.data),
        "data_bytes": args.data.stat().st_size,
        "baseline_peak_bytes": base["peak"],
        "runs": args.runs,
        "python": sys.version.split()[0],
        "protobuf_implementation": base["upb"],
        **summary,
        "ratios": ratios,
        "speedup": q["median_seconds"] / p["median_seconds"],
        "peak_ratio": p["median_peak_bytes"] / q["median_peak_bytes"],
        "peak_over_baseline_ratio": p["median_peak_over_baseline_bytes"] / q["median_peak_over_baseline_bytes"],
    }
    if not args.no_verify:
        result["verify"] = child(VERIFY, args.data, pb2, "verify")
    out = REPO / "target/bench-data/events_pandas.results.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    if not args.no_verify and result["verify"]["problems"]:
        sys.exit("the two DataFrames differ")


if __name__ == "__main__":
    main()
