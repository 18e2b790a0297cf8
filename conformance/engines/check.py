"""The engines on the files themselves (see check.sh): what Spark's profkit data source, DuckDB
and Polars read straight from the profiles equals, row for row, the Parquet dataset profkit
writes of the same files, and `profkit inspect --json`'s counts; docs/scale.md's queries give the
same answers on the files and on the dataset; a damaged file fails with profkit's located error.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

PASSED, FAILED = [], []


def check(ok, what, detail=""):
    (PASSED if ok else FAILED).append(what)
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail and not ok else ""), flush=True)


def run(args, **kw):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True, **kw)


def normal(value):
    if isinstance(value, Decimal):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return tuple(sorted(value.items()))
    if isinstance(value, list):
        return tuple(sorted(value))
    return value


def rows(df_rows):
    return sorted((tuple(normal(v) for v in r) for r in df_rows), key=repr)


def queries(repo):
    text = (repo / "docs/scale.md").read_text()
    return [(n, s.strip()) for n, s in re.findall(r"```sql\n-- query: (\w+)\n(.*?)```", text, re.S)]


def inputs(repo, profkit, work):
    """The readable XSpace, Chrome and Paddle cases, each copied under a name of its own (the
    host its rows are named by), with what `inspect --json` counts of its events."""
    files = work / "files"
    files.mkdir()
    chosen = []
    for fmt, pattern in (("xplane", "input.xplane.pb"), ("chrome", "input.json*"), ("paddle", "input.*pb")):
        for path in sorted((repo / "conformance" / fmt).glob(f"*/{pattern}")):
            case = path.parent.name
            if case.startswith(("error-", "invalid-")):
                continue
            suffix = "".join(path.suffixes)
            target = files / f"{fmt}-{case}{suffix}"
            shutil.copyfile(path, target)
            inspected = subprocess.run([str(profkit), "inspect", "--json", str(target)], capture_output=True, text=True)
            if inspected.returncode != 0:
                target.unlink()
                continue
            chosen.append(target)
    return files, chosen


def dataset_of(profkit, files, root):
    for f in files:
        run([profkit, "convert", f, root, "--to", "parquet"])


def spark_session():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").appName("profkit-engines-check")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def compare_tables(spark, con, files, root):
    import profkit.duckdb

    columns = None
    for table in ("events", "planes", "lines", "metadata"):
        from_files = spark.read.format("profkit").option("table", table).load(",".join(str(f) for f in files))
        from_dataset = (spark.read.option("basePath", str(root))
                        .parquet(str(root / "host=*" / f"table={table}")))
        columns = [c for c in from_files.columns]
        want = rows(from_dataset.select(*columns).collect())
        got = rows(from_files.collect())
        check(got == want, f"Spark reads the {table} of {len(files)} files as the dataset holds them ({len(want)} rows)",
              f"{len(got)} rows; first difference: {next(((a, b) for a, b in zip(got, want) if a != b), None)}")
        # DuckDB on the files against DuckDB on the dataset. `stats` is a list of entries from the
        # files (a stat may repeat) and a map from Parquet: their entries are counted.
        plain = [c for c in columns if c != "stats"]
        listed = ", len(stats)" if "stats" in columns else ""
        rel = profkit.duckdb.relation(con, [str(f) for f in files], table)
        duck_files = rows(rel.project(", ".join(plain) + listed).fetchall())
        duck_dataset = rows(con.execute(
            f"SELECT {', '.join(plain)}{listed.replace('len(', 'cardinality(')} FROM read_parquet('{root}/host=*/table={table}/*.parquet', hive_partitioning = true)"
        ).fetchall())
        check(duck_files == duck_dataset, f"DuckDB reads the {table} of the files as the dataset holds them ({len(duck_dataset)} rows)",
              f"{len(duck_files)} rows")


def compare_inspect(spark, profkit, files):
    counts = {r["host"]: r["n"] for r in spark.read.format("profkit").load(",".join(str(f) for f in files))
              .groupBy("host").count().withColumnRenamed("count", "n").collect()}
    wrong, compared = [], 0
    for f in files:
        doc = json.loads(run([profkit, "inspect", "--json", f]).stdout)
        total = doc.get("summary", {}).get("total_events")
        if total is None:
            continue  # a format whose summary counts something else
        compared += 1
        host = f.name.split(".")[0]
        if counts.get(host, 0) != total:
            wrong.append((f.name, total, counts.get(host)))
    check(not wrong and compared > 40, f"Spark's event count per file is inspect's ({compared} files)", f"{wrong[:3]}")


def compare_queries(repo, spark, con, cli, work):
    import profkit.duckdb

    profiles = work / "profiles"
    run(["cargo", "run", "-q", "-p", "profkit-arrow", "--example", "cluster", "--", profiles, "4", "20"], cwd=repo)
    files = sorted(profiles.glob("*.xplane.pb"))
    root = work / "cluster"
    dataset_of(cli, files, root)
    spark.read.format("profkit").load(str(profiles / "*.xplane.pb")).createOrReplaceTempView("events")
    dataset = con.execute(f"CREATE VIEW dataset_events AS SELECT * FROM read_parquet('{root}/host=*/table=events/*.parquet', hive_partitioning = true)")
    for name, sql in queries(repo):
        want = [tuple(normal(v) for v in r) for r in con.execute(sql.replace("FROM events", "FROM dataset_events")).fetchall()]
        got = [tuple(normal(v) for v in r) for r in spark.sql(sql).collect()]
        check(got == want, f"Spark's {name} on the files equals DuckDB's on the dataset ({len(want)} rows)",
              f"first difference: {next(((a, b) for a, b in zip(got, want) if a != b), (len(got), len(want)))}")
        profkit.duckdb.register(con, "events", str(profiles / "*.xplane.pb"))
        got = [tuple(normal(v) for v in r) for r in con.execute(sql).fetchall()]
        check(got == want, f"DuckDB's {name} on the files equals its answer on the dataset")
    # Polars: the per-op totals of the first query's kind, lazily from the files.
    import polars as pl
    import profkit.polars

    lazy = profkit.polars.scan(str(profiles / "*.xplane.pb"))
    got = {(r[0], r[1]) for r in lazy.group_by("host").agg(pl.col("duration_ps").sum()).collect().iter_rows()}
    want = {(r[0], int(r[1])) for r in con.execute("SELECT host, SUM(duration_ps) FROM dataset_events GROUP BY host").fetchall()}
    check(got == want, "Polars' time per host, scanned from the files, equals the dataset's", f"{sorted(got)[:2]} vs {sorted(want)[:2]}")
    one = lazy.select("name").head(3).collect()
    check(one.height == 3 and one.columns == ["name"], "Polars takes only the columns and rows asked for")
    return files


def damaged(spark, repo, work):
    bad = work / "damaged.xplane.pb"
    shutil.copyfile(repo / "conformance/xplane/error-truncated/input.xplane.pb", bad)
    try:
        spark.read.format("profkit").load(str(bad)).count()
        check(False, "a damaged file fails its task")
    except Exception as e:  # noqa: BLE001 - Spark wraps the worker's error
        text = str(e)
        check("damaged.xplane.pb" in text and ("offset" in text or "byte" in text),
              "a damaged file fails its task with profkit's located error naming the file", text[:300])


def streaming(spark, files, work):
    incoming = work / "incoming"
    incoming.mkdir()
    for f in files[:2]:
        shutil.copyfile(f, incoming / f.name)
    query = (spark.readStream.format("profkit").load(str(incoming / "*.xplane.pb"))
             .writeStream.format("memory").queryName("arrived").trigger(availableNow=True).start())
    query.awaitTermination(300)
    got = spark.sql("SELECT COUNT(*) FROM arrived").collect()[0][0]
    want = spark.read.format("profkit").load(",".join(str(incoming / f.name) for f in files[:2])).count()
    check(got == want and want > 0, f"a streaming read of a directory takes the files there ({want} events)", f"{got}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--profkit", type=Path, required=True)
    args = parser.parse_args()
    import duckdb
    import profkit
    import profkit.spark

    print(f"profkit {profkit.__version__}, duckdb {duckdb.__version__}", flush=True)
    with tempfile.TemporaryDirectory(prefix="profkit-engines-check-") as tmp:
        work = Path(tmp)
        spark = spark_session()
        profkit.spark.register(spark)
        con = duckdb.connect()
        try:
            _, files = inputs(args.repo, args.profkit, work)
            check(len(files) > 40, f"{len(files)} conformance inputs read")
            root = work / "dataset"
            dataset_of(args.profkit, files, root)
            compare_tables(spark, con, files, root)
            compare_inspect(spark, args.profkit, files)
            cluster = compare_queries(args.repo, spark, con, args.profkit, work)
            damaged(spark, args.repo, work)
            streaming(spark, cluster, work)
        finally:
            spark.stop()
    print(f"{len(PASSED)} passed, {len(FAILED)} failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
