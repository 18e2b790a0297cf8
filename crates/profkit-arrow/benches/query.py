"""The bench's query peers: the same aggregation (events and total duration per event name) by
DuckDB over profkit's Parquet dataset and by Python's json module over profkit's Chrome JSON of
the same XSpace. Prints one JSON line: median seconds of each (fresh connection / fresh load per
run) and whether the per-name event counts agree.

Usage: query.py DATASET_DIR CHROME_JSON [--runs N]
"""

import argparse
import json
import statistics
import time
from collections import defaultdict

import duckdb


def by_duckdb(dataset):
    con = duckdb.connect()
    rows = con.execute(
        f"""SELECT display_name, COUNT(*), SUM(duration_ps)
            FROM read_parquet('{dataset}/host=*/table=events/*.parquet', hive_partitioning = true)
            GROUP BY display_name""").fetchall()
    con.close()
    return {name: (count, total) for name, count, total in rows}


def by_json(chrome):
    with open(chrome, "rb") as f:
        trace = json.load(f)
    counts = defaultdict(int)
    totals = defaultdict(float)
    for event in trace["traceEvents"]:
        if event.get("ph") == "X":
            counts[event["name"]] += 1
            totals[event["name"]] += event.get("dur", 0.0)
    return {name: (counts[name], totals[name]) for name in counts}


def timed(fn, arg, runs):
    seconds, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn(arg)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), seconds, result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset")
    parser.add_argument("chrome")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    d_median, d_all, d_result = timed(by_duckdb, args.dataset, args.runs)
    j_median, j_all, j_result = timed(by_json, args.chrome, args.runs)
    same = {k: v[0] for k, v in d_result.items()} == {k: v[0] for k, v in j_result.items()}
    print(json.dumps({"duckdb_seconds": d_median, "duckdb_runs": d_all,
                      "json_seconds": j_median, "json_runs": j_all,
                      "names": len(d_result), "same_counts": same,
                      "duckdb_version": duckdb.__version__}))


if __name__ == "__main__":
    main()
