"""The engines on the files against converting first: docs/scale.md's "time per op across hosts"
query over HOSTS hosts' XSpaces (about EVENTS events each), by Spark (local[2], profkit's data
source) and DuckDB (profkit.duckdb) straight from the files, and by the same engines over the
Parquet dataset `profkit convert --to parquet` writes, the conversion timed too. Each
measurement runs in a fresh process; its peak resident memory is the process's own (Spark's:
the driver's JVM, and the largest Python worker, which reads one file at a time).

    .oracle/arrow/bin/python conformance/engines/bench.py [--hosts 16] [--events 1000000]

Needs the venv of conformance/engines/check.sh (the wheel installed) and a release build of
profkit (`cargo build --release -p profkit`). Results are printed and written to
target/bench-data/engines.results.json.
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

CHILD = r'''
import json, os, resource, sys, time
what, files, root, sql = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
start = time.time()
if what.startswith("duckdb"):
    import duckdb, profkit.duckdb
    con = duckdb.connect()
    if what == "duckdb-files":
        profkit.duckdb.register(con, "events", files)
    else:
        con.execute(f"CREATE VIEW events AS SELECT * FROM read_parquet('{root}/host=*/table=events/*.parquet', hive_partitioning = true, hive_types_autocast = false)")
    rows = con.execute(sql).fetchall()
    worker = 0
else:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    if what == "spark-files":
        import profkit.spark
        profkit.spark.register(spark)
        spark.read.format("profkit").load(",".join(files)).createOrReplaceTempView("events")
    else:
        spark.read.option("basePath", root).parquet(root + "/host=*/table=events").createOrReplaceTempView("events")
    rows = spark.sql(sql).collect()
    spark.stop()
secs = time.time() - start
print(json.dumps({"secs": secs, "rows": len(rows),
                  "self_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "children_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
'''


def measure(python, what, files, root, sql):
    out = subprocess.run([python, "-c", CHILD, what, json.dumps(files), str(root), sql],
                         capture_output=True, text=True, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    if out.returncode != 0:
        raise SystemExit(f"{what} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--events", type=int, default=1_000_000)
    args = parser.parse_args()
    repo = Path(__file__).resolve().parents[2]
    data = repo / "target" / "bench-data" / f"engines_{args.hosts}x{args.events}"
    profiles = data / "profiles"
    # The cluster example writes 15 events per host and step.
    steps = max(1, round(args.events / 15))
    if not profiles.exists():
        subprocess.run(["cargo", "run", "-q", "--release", "-p", "profkit-arrow", "--example", "cluster", "--",
                        str(profiles), str(args.hosts), str(steps)], cwd=repo, check=True)
    files = sorted(str(p) for p in profiles.glob("*.xplane.pb"))
    size = sum(os.path.getsize(f) for f in files)
    sql = re.search(r"```sql\n-- query: time_per_op\n(.*?)```", (repo / "docs/scale.md").read_text(), re.S).group(1)
    python = sys.executable
    profkit = repo / "target" / "release" / "profkit"
    results = {"hosts": args.hosts, "events_per_host": args.events, "bytes": size}
    print(f"{args.hosts} hosts, {size / 1e6:.0f} MB of XSpace", flush=True)
    for what in ("duckdb-files", "spark-files"):
        results[what] = measure(python, what, files, data / "dataset", sql)
        print(what, results[what], flush=True)
    root = data / "dataset"
    if root.exists():
        subprocess.run(["rm", "-rf", str(root)], check=True)
    start = time.time()
    subprocess.run([str(profkit), "convert", *files, str(root), "--to", "parquet"], check=True, capture_output=True)
    results["convert"] = {"secs": time.time() - start,
                          "rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
    print("convert", results["convert"], flush=True)
    for what in ("duckdb-dataset", "spark-dataset"):
        results[what] = measure(python, what, files, root, sql)
        print(what, results[what], flush=True)
    (repo / "target" / "bench-data" / "engines.results.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
