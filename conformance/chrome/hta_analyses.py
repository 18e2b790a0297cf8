"""profkit's HolisticTraceAnalysis analyses (`profkit hta ANALYSIS TRACE... --json`) against HTA's
own, live, on the Kineto traces of conformance/chrome/corpus with GPU activity, one rank at a time
and several ranks at once.

For each case, HTA 0.5.0's `TraceAnalysis` loads the traces from a directory (as its users do:
ranks from `distributedInfo`) and its DataFrames are compared with profkit's records:

- `get_temporal_breakdown`, `get_comm_comp_overlap`: every column of every rank;
- `get_gpu_kernel_breakdown`: the kernel-type frame by type (rows of 0 us left out: HTA's
  unstable sort of tied times may give a combination a row of 0 or not), the per-kernel frame by
  (kernel type, name, rank), every column;
- `get_idle_time_breakdown` and `get_cuda_kernel_launch_stats` (for every rank, with and
  without `include_memory_events`): the rows, in order;
- `get_profiler_steps`: the list;
- `get_gpu_user_annotation_breakdown` (the device's ranges and, `use_gpu_annotation=False`, the
  host's): the rows, in order, or HTA's None as no frame;
- `get_time_spent_blocked_on_full_queue` at `max_queue_length` 1024 (HTA's), 2 and 3;
- `get_queue_length_summary` and `get_memory_bw_summary` (all ranks): the rows, in order, every
  statistic (the frame's (rank, stream) or (rank, name) index as columns);
- `get_queue_length_time_series` and `get_memory_bw_time_series` (for every rank): the rows,
  in order, every column (the queue length's event index too).

Numbers agree to a relative 1e-9 (sums of the same doubles in another order); NaN equals NaN.
The multi-rank case is two corpus traces given ranks 0 and 1 by rewriting their
`distributedInfo` (HTA reads the rank from the file's text).
"""

import argparse
import gzip
import json
import logging
import math
import pathlib
import subprocess
import sys
import tempfile
import warnings

logging.disable(logging.WARNING)
warnings.filterwarnings("ignore")

from hta.trace_analysis import TraceAnalysis  # noqa: E402

SINGLE = [
    "hta/critical_path-simple_add-benchmark_result_493459_1694039959_trace.json.gz",
    "hta/critical_path-alexnet-benchmark_result_2869224_1695835535_trace.json.gz",
    "hta/critical_path-cuda_event_sync-event_sync_trace.json.gz",
    "hta/critical_path-cuda_event_sync_multi_stream-event_sync_trace.json.gz",
    "hta/cupti_profiler-benchmark_result_924719_1679055439_trace.json.gz",
    "hta/amd_trace-mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta/distributed_info_unavailable-distributed_info_not_found.json.gz",
    "hta/triton_example-triton_example.json.gz",
    "tracelens/h100-gaunernst_bert-small-uncased__1016001.json.gz",
    "tracelens/mi300-gaunernst_bert-small-uncased__1016001.json.gz",
    "tracelens/inference-sglang_decode-sglang_Qwen3-8B_decode.json.gz",
    "tracelens/b200-eager_trace.json.gz",
    "tracelens/mi210-gpu_only_trace-gpu_only_trace.json.gz",
    "tracelens/perf_model-normalization-normalization_layer_test.json.gz",
    "tracelens/torch_compile_triton-trace.json.gz",
    "hta/rank_non_gpu-rank_non_gpu.json.gz",
    "hta/trace_compare-base-base.json.gz",
    "hta/trace_file_list-inference_rank_1.json.gz",
]
MULTI = [
    "hta/critical_path-simple_add-benchmark_result_493459_1694039959_trace.json.gz",
    "hta/critical_path-alexnet-benchmark_result_2869224_1695835535_trace.json.gz",
]


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    return a == b


def records(df):
    return json.loads(df.to_json(orient="records", double_precision=15))


def compare_rows(what, theirs, ours, problems):
    if len(theirs) != len(ours):
        problems.append(f"{what}: HTA has {len(theirs)} rows, profkit {len(ours)}")
        return
    for i, (t, o) in enumerate(zip(theirs, ours)):
        for key, value in t.items():
            if key not in o:
                problems.append(f"{what} row {i}: profkit has no {key}")
            elif not same(nan(value), nan(o[key])):
                problems.append(f"{what} row {i} {key}: HTA {value!r}, profkit {o[key]!r}")


def compare_kernels(what, theirs, ours, problems):
    """The per-kernel frame by (type, name, rank). HTA sorts each type's kernels by time with an
    unstable sort before keeping the first ten by name: when kernels tie at that cut, which of
    them keeps its name is the sort's chance. Rows whose names differ are then accepted when
    each has a row of the other side with the same type, rank and numbers."""
    key = lambda r: (r["kernel_type"], r["name"], r["rank"])  # noqa: E731
    theirs, ours = sorted(theirs, key=key), sorted(ours, key=key)
    if [key(r) for r in theirs] == [key(r) for r in ours]:
        compare_rows(what, theirs, ours, problems)
        return
    numbers = lambda r: (r["kernel_type"], r["rank"]) + tuple(  # noqa: E731
        round(nan(r[c]), 6) for c in ("sum (us)", "max (us)", "min (us)", "stddev", "mean (us)")
    )
    ours_keys = {key(r) for r in ours}
    theirs_keys = {key(r) for r in theirs}
    only_theirs = sorted(numbers(r) for r in theirs if key(r) not in ours_keys)
    only_ours = sorted(numbers(r) for r in ours if key(r) not in theirs_keys)
    if only_theirs != only_ours:
        problems.append(f"{what}: HTA's kernels {sorted(theirs_keys - ours_keys)}, profkit's {sorted(ours_keys - theirs_keys)}")
        return
    print(f"{what}: kernels tied at HTA's cut named differently (its unstable sort): {len(only_ours)}")
    both = lambda rows, keys: [r for r in rows if key(r) in keys]  # noqa: E731
    compare_rows(what, both(theirs, ours_keys), both(ours, theirs_keys), problems)


def nan(v):
    return float("nan") if v is None else v


def profkit_frames(profkit, analysis, paths, *options):
    done = subprocess.run(
        [profkit, "hta", analysis, *map(str, paths), *options, "--json"], check=True, capture_output=True
    )
    return json.loads(done.stdout)["frames"]


def check_case(profkit, name, paths, problems):
    try:
        analysis = TraceAnalysis(trace_dir=str(paths[0].parent))
    except Exception as e:  # noqa: BLE001 - HTA's own failure to load is reported, not ours
        print(f"{name}: HTA cannot load it ({type(e).__name__}), not compared")
        return 0
    ranks = analysis.t.get_ranks()
    checked = 0

    ours = profkit_frames(profkit, "temporal-breakdown", paths)["temporal_breakdown"]
    try:
        theirs = records(analysis.get_temporal_breakdown(visualize=False))
    except IndexError:
        # HTA fails on a rank without GPU rows; profkit leaves such ranks out.
        theirs = None
    if theirs is None:
        if len(ours) == len(ranks):
            problems.append(f"{name} temporal: HTA fails (a rank without GPU rows), profkit has every rank")
    else:
        compare_rows(f"{name} temporal", theirs, ours, problems)
    checked += 1

    try:
        types, kernels = analysis.get_gpu_kernel_breakdown(visualize=False)
    except Exception as e:  # noqa: BLE001
        print(f"{name}: HTA's kernel breakdown fails ({type(e).__name__}), not compared")
        return checked
    ours = profkit_frames(profkit, "kernel-breakdown", paths)
    theirs_types = sorted((r for r in records(types) if r["sum"] != 0), key=lambda r: r["kernel_type"])
    ours_types = sorted((r for r in ours["kernel_type"] if r["sum"] != 0), key=lambda r: r["kernel_type"])
    compare_rows(f"{name} kernel types", theirs_types, ours_types, problems)
    compare_kernels(f"{name} kernels", records(kernels), ours["kernels"], problems)
    checked += 2

    ours = profkit_frames(profkit, "comm-comp-overlap", paths)["comm_comp_overlap"]
    compare_rows(f"{name} overlap", records(analysis.get_comm_comp_overlap(visualize=False)), ours, problems)
    checked += 1

    theirs = []
    for rank in ranks:
        try:
            idle, _ = analysis.get_idle_time_breakdown(ranks=[rank], visualize=False)
        except ValueError:
            continue  # HTA fails on a rank without kernels; profkit gives it no rows
        theirs += records(idle)
    ours = profkit_frames(profkit, "idle-time-breakdown", paths)["idle_time_breakdown"]
    compare_rows(f"{name} idle time", theirs, ours, problems)
    checked += 1

    for include, options in [(True, []), (False, ["--no-memory-events"])]:
        stats = analysis.get_cuda_kernel_launch_stats(ranks=ranks, include_memory_events=include, visualize=False)
        ours = profkit_frames(profkit, "kernel-launch-stats", paths, *options)
        for rank in ranks:
            compare_rows(
                f"{name} launch stats{' '.join([''] + options)} rank {rank}",
                records(stats[rank]),
                ours[f"rank {rank}"],
                problems,
            )
            checked += 1

    ours = [r["step"] for r in profkit_frames(profkit, "profiler-steps", paths)["profiler_steps"]]
    theirs = [int(s) for s in analysis.get_profiler_steps()]
    if ours != theirs:
        problems.append(f"{name} profiler steps: HTA {theirs}, profkit {ours}")
    checked += 1

    for gpu, options in [(True, []), (False, ["--cpu-annotations"])]:
        theirs = analysis.get_gpu_user_annotation_breakdown(use_gpu_annotation=gpu, visualize=False)
        ours = profkit_frames(profkit, "user-annotation-breakdown", paths, *options)
        what = f"{name} user annotations{' '.join([''] + options)}"
        if theirs is None:
            if ours:
                problems.append(f"{what}: HTA has none, profkit a frame")
        elif "user_annotation_breakdown" not in ours:
            problems.append(f"{what}: HTA has a frame, profkit none")
        else:
            compare_rows(what, records(theirs), ours["user_annotation_breakdown"], problems)
        checked += 1

    # The counters: HTA sorts a rank's launches and kernels (copies and sets for the bandwidth)
    # by time with pandas' default sort, which orders rows of the same time as numpy's
    # quicksort happens to (on this machine, its AVX-512 sort); profkit keeps their order. Where
    # same-time rows of a stream add and take away (a launch and a kernel start in the same
    # microsecond), the series' values between them, and so the summary's statistics, follow
    # that order: see compare_series and compare_summary.
    queue = profkit_frames(profkit, "queue-length-time-series", paths)
    theirs_queue = analysis.get_queue_length_time_series(ranks=ranks)
    tied = compare_series(f"{name} queue-length-time-series", theirs_queue, queue, "stream", "queue_length", problems)
    checked += len(theirs_queue)
    ours = profkit_frames(profkit, "queue-length-summary", paths)["queue_length_summary"]
    theirs = summary_records(analysis.get_queue_length_summary(ranks=ranks))
    compare_summary(f"{name} queue-length-summary", theirs, ours, queue, "stream", "queue_length", tied, problems)
    checked += 1
    # The time at a full queue, at HTA's 1024 and at lengths the corpus reaches; a rank whose
    # series HTA orders otherwise (above) is compared by which stream it names.
    for full in (1024, 2, 3):
        theirs = records(
            analysis.get_time_spent_blocked_on_full_queue(
                analysis.get_queue_length_time_series(ranks=ranks), max_queue_length=full
            )
        )
        ours = profkit_frames(profkit, "queue-full-time", paths, "--max-queue-length", str(full))
        ours = ours["time_blocked_on_full_queue"]
        what = f"{name} queue-full-time {full}"
        if [(r["rank"], r["stream"]) for r in theirs] != [(r["rank"], r["stream"]) for r in ours]:
            problems.append(f"{what}: HTA's rows {theirs}, profkit's {ours}")
        else:
            for t, o in zip(theirs, ours):
                if (t["rank"], t["stream"]) in tied:
                    print(f"{what}: rank {t['rank']} stream {t['stream']}: same-time rows in HTA's order, times not compared")
                else:
                    compare_rows(what, [t], [o], problems)
        checked += 1

    bw = profkit_frames(profkit, "memory-bw-time-series", paths)
    theirs_bw = analysis.get_memory_bw_time_series(ranks=ranks)
    tied = compare_series(f"{name} memory-bw-time-series", theirs_bw, bw, "name", "memory_bw_gbps", problems)
    checked += len(theirs_bw)
    ours = profkit_frames(profkit, "memory-bw-summary", paths)["memory_bw_summary"]
    theirs = summary_records(analysis.get_memory_bw_summary(ranks=ranks))
    compare_summary(f"{name} memory-bw-summary", theirs, ours, bw, "name", "memory_bw_gbps", tied, problems)
    checked += 1
    return checked


def runs(rows, key):
    """Consecutive rows with the same value of `key`, as lists."""
    out = []
    for r in rows:
        if out and out[-1][0][key] == r[key]:
            out[-1].append(r)
        else:
            out.append([r])
    return out


def compare_series(what, theirs_by_rank, ours, group, value, problems):
    """A counter's time series, per rank: the same groups (streams, kinds) in the same order;
    within each, the same rows in the same order, except that rows of the same time may come in
    any order (HTA's sort's chance): those compare as sets, with the running value after the
    last of them. Returns the (rank, group) where HTA's order of same-time rows that both add
    and take away is not profkit's (the values in between, and so the summary, follow it)."""
    tied = set()
    if sorted(f"rank {r}" for r in theirs_by_rank) != sorted(ours):
        problems.append(f"{what}: HTA has ranks {sorted(theirs_by_rank)}, profkit {sorted(ours)}")
        return tied
    reordered = 0
    for rank, df in theirs_by_rank.items():
        theirs = records(df.reset_index() if "stream" in df.columns else df)
        mine = ours[f"rank {rank}"]
        if len(theirs) != len(mine):
            problems.append(f"{what} rank {rank}: HTA has {len(theirs)} rows, profkit {len(mine)}")
            continue
        t_groups, o_groups = runs(theirs, group), runs(mine, group)
        if [g[0][group] for g in t_groups] != [g[0][group] for g in o_groups]:
            problems.append(f"{what} rank {rank}: groups {[g[0][group] for g in t_groups]} vs {[g[0][group] for g in o_groups]}")
            continue
        for t_group, o_group in zip(t_groups, o_groups):
            t_times, o_times = runs(t_group, "ts"), runs(o_group, "ts")
            if len(t_times) != len(o_times):
                problems.append(f"{what} rank {rank} {group} {t_group[0][group]}: the times differ")
                continue
            for t_run, o_run in zip(t_times, o_times):
                if len(t_run) == 1:
                    compare_rows(f"{what} rank {rank}", t_run, o_run, problems)
                    continue
                ident = lambda r: tuple(sorted((k, v) for k, v in r.items() if k != value))  # noqa: E731
                if sorted(map(ident, t_run)) != sorted(map(ident, o_run)):
                    problems.append(f"{what} rank {rank}: the rows at ts {t_run[0]['ts']} differ")
                    continue
                compare_rows(
                    f"{what} rank {rank} after ts {t_run[0]['ts']}",
                    [{value: t_run[-1][value]}],
                    [{value: o_run[-1][value]}],
                    problems,
                )
                if [ident(r) for r in t_run] == [ident(r) for r in o_run]:
                    continue
                reordered += len(t_run)
                steps = {r[value] - p[value] > 0 for p, r in zip(o_run, o_run[1:])}
                before = o_group[o_group.index(o_run[0]) - 1][value] if o_group.index(o_run[0]) else 0
                steps.add(o_run[0][value] - before > 0)
                if len(steps) > 1:
                    tied.add((rank, t_group[0][group]))
    if reordered:
        print(f"{what}: {reordered} rows of the same time in another order (HTA's sort's chance)")
    return tied


def compare_summary(what, theirs, ours, series, group, value, tied, problems):
    """A counter's summary: every statistic, except for the (rank, group) whose series depend on
    the order of same-time rows (see compare_series): there the count is compared, and profkit's
    statistics with pandas' own describe() of profkit's series."""
    if [(r["rank"], r[group]) for r in theirs] != [(r["rank"], r[group]) for r in ours]:
        problems.append(f"{what}: rows {[(r['rank'], r[group]) for r in theirs]} vs {[(r['rank'], r[group]) for r in ours]}")
        return
    import pandas as pd

    for t, o in zip(theirs, ours):
        key = (o["rank"], o[group])
        if key not in tied:
            compare_rows(what, [t], [o], problems)
            continue
        compare_rows(f"{what} {key} count", [{"count": t["count"]}], [o], problems)
        values = [r[value] for r in series[f"rank {o['rank']}"] if r[group] == o[group]]
        values = [v for v in values if value != "memory_bw_gbps" or v > 0]
        described = {k: nan(v) for k, v in pd.Series(values, dtype=float).describe().items()}
        compare_rows(f"{what} {key} (pandas' describe of profkit's series)", [described], [o], problems)
        print(f"{what} {key}: statistics of a series with same-time rows that add and take away (HTA's sort's chance)")


def summary_records(df):
    """A `describe()` frame (columns (column, statistic), index (rank, stream or name)) as
    records with the index's levels and the statistics as columns; None (no rows) as none."""
    if df is None:
        return []
    df = df.copy()
    df.columns = [c[1] for c in df.columns]
    return records(df.reset_index())


def with_rank(src, dst, rank):
    trace = json.loads(gzip.open(src).read())
    trace["distributedInfo"] = dict(trace.get("distributedInfo") or {}, rank=rank)
    dst.write_text(json.dumps(trace))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", type=pathlib.Path, required=True)
    args = parser.parse_args()
    args.repo = args.repo.resolve()
    corpus = args.repo / "conformance/chrome/corpus"
    profkit = str(args.repo / "target/debug/profkit")
    problems, frames = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, rel in enumerate(SINGLE):
            d = pathlib.Path(tmp) / f"single{i}"
            d.mkdir()
            path = d / pathlib.Path(rel).name
            path.symlink_to(corpus / rel)
            before = len(problems)
            frames += check_case(profkit, rel, [path], problems)
            print(f"{rel}: {len(problems) - before} differences", flush=True)
        d = pathlib.Path(tmp) / "multi"
        d.mkdir()
        paths = []
        for rank, rel in enumerate(MULTI):
            path = d / f"rank{rank}.json"
            with_rank(corpus / rel, path, rank)
            paths.append(path)
        frames += check_case(profkit, "two ranks", paths, problems)
    for p in problems[:50]:
        print(p)
    print(f"HTA analyses: {frames} frames compared on {len(SINGLE) + 1} cases, {len(problems)} differences")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
