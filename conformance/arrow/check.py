"""Real clients read profkit's Parquet datasets (`profkit convert ... --to parquet`).

1. Every XSpace, Chrome and Paddle conformance case (errors aside) is converted, one host per
   case, into one dataset. DuckDB and pyarrow read it; for every host and plane, the event count,
   and the count and total duration of each of the plane's busiest event names (those
   `profkit inspect --json` lists), and the plane's time span equal what `profkit inspect --json`
   says of the same input (for Paddle's protobufs: of the XSpace `profkit convert --to xspace`
   makes of them, as `--to parquet` does). Every file carries schema version 2. Where inspect
   ranks a device plane's events over its device op lines only (`top_events_device_ops`), the
   readers sum the rows whose `line_role` is `xla_ops` or `stream`.
2. The real device profiles (`../shared/samples/xspace-device-real/{gpu,rocm1,tpu}/host.xplane.pb.gz`,
   all three named `host`) convert into one dataset, each host named by the `hostnames` it records;
   the docs' `time_per_op` query over it equals the per-op sums (hosts, calls, total, slowest host)
   of the device op lines alone, picked by their names as the profilers write them (a TPU plane's
   `XLA Ops`, a GPU plane's `Stream #...` lines) and summed in Python with pyarrow; DuckDB's host
   ops of the `op_metrics` table by self time are `profkit xprof framework_op_stats`'s host rows;
   the `kernels` and `hlo_ops` tables, read by DuckDB and by pyarrow (the same rows from both),
   are the rows of `profkit xprof kernel_stats` and `hlo_stats` of each profile, every column
   compared in the page's units, and the docs' queries over them run.
3. A dataset of several hosts (the made-up cluster of `profkit-arrow`'s `cluster` example,
   converted host by host, appending) is queried with the SQL of docs/scale.md by DuckDB and by
   Spark in local mode (one session for all queries); the answers must be equal.

Run by check.sh, which installs the clients into a venv; prints one line per check and
'N passed, N failed' at the end; exits 1 on any failure.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

PASSED = []
FAILED = []


def check(ok, what, detail=""):
    (PASSED if ok else FAILED).append(what)
    print(("ok   " if ok else "FAIL ") + what + ("" if ok or not detail else f": {detail}"), flush=True)
    return ok


def run(args, **kw):
    done = subprocess.run(args, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def cases(repo):
    """(host, format, input path) of every non-error XSpace, Chrome and Paddle case."""
    out = []
    for case in sorted((repo / "conformance/xplane").iterdir()):
        if case.is_dir() and not case.name.startswith("error-") and (case / "input.xplane.pb").exists():
            out.append((f"xplane-{case.name}", "xspace", case / "input.xplane.pb"))
    for case in sorted((repo / "conformance/chrome").iterdir()):
        if case.is_dir() and not case.name.startswith("error-") and (case / "input.json").exists():
            out.append((f"chrome-{case.name}", "chrome", case / "input.json"))
    for case in sorted((repo / "conformance/paddle").iterdir()):
        if not case.is_dir() or case.name.startswith("error-"):
            continue
        for name, fmt in (("input.pb", "paddle"), ("input.paddle_trace.pb", "paddle-trace")):
            if (case / name).exists():
                out.append((f"paddle-{case.name}", fmt, case / name))
    return out


def expected_planes(profkit, fmt, path, work):
    """Per plane (id, name): events, top event names {name: (count, total_ps)}, start, end."""
    target = path
    if fmt in ("paddle", "paddle-trace"):
        target = work / (path.name + ".xplane.pb")
        run([profkit, "convert", path, target, "--to", "xspace", "--from", fmt])
        fmt = "xspace"
    summary = json.loads(run([profkit, "inspect", "--json", target, "--from", fmt]))["summary"]
    planes = {}
    for p in summary["planes"]:
        key = (p["id"], p["name"])
        entry = planes.setdefault(key, {"events": 0, "top": {}, "start": None, "end": None,
                                        "ops_only": False})
        entry["ops_only"] = p["top_events_device_ops"]
        entry["events"] += p["events"]
        for e in p["top_events"]:
            entry["top"][e["name"]] = (e["count"], e["total_duration_ps"])
        entry["start"] = p.get("start_ps")
        entry["end"] = p.get("end_ps")
    return planes


def duckdb_planes(con, host):
    rows = con.execute(
        """SELECT plane_id, plane, COUNT(*), MIN(start_ps), MAX(start_ps + duration_ps)
           FROM events WHERE host = ? GROUP BY plane_id, plane""", [host]).fetchall()
    # Spans count only timed events (aggregated ones have no start).
    planes = {(r[0], r[1]): {"events": r[2], "start": r[3], "end": r[4]} for r in rows}
    names = con.execute(
        """SELECT plane_id, plane, display_name,
                  SUM(CASE WHEN num_occurrences IS NULL THEN 1 WHEN num_occurrences < 0 THEN 0
                           ELSE num_occurrences END),
                  SUM(duration_ps)
           FROM events WHERE host = ? GROUP BY plane_id, plane, display_name""", [host]).fetchall()
    for r in names:
        planes[(r[0], r[1])].setdefault("names", {})[r[2]] = (int(r[3]), int(r[4]))
    op_names = con.execute(
        """SELECT plane_id, plane, display_name,
                  SUM(CASE WHEN num_occurrences IS NULL THEN 1 WHEN num_occurrences < 0 THEN 0
                           ELSE num_occurrences END),
                  SUM(duration_ps)
           FROM events WHERE host = ? AND line_role IN ('xla_ops', 'stream')
           GROUP BY plane_id, plane, display_name""", [host]).fetchall()
    for r in op_names:
        planes[(r[0], r[1])].setdefault("op_names", {})[r[2]] = (int(r[3]), int(r[4]))
    side = con.execute(
        "SELECT plane_id, plane, events FROM planes WHERE host = ?", [host]).fetchall()
    return planes, {(r[0], r[1]): r[2] for r in side}


def compare(source, host, expected, got):
    planes, side = got
    problems = []
    for key, want in expected.items():
        have = planes.get(key, {"events": 0, "names": {}, "start": None, "end": None})
        if have["events"] != want["events"]:
            problems.append(f"plane {key}: {have['events']} events, inspect says {want['events']}")
        if side.get(key, 0) != want["events"]:
            problems.append(f"plane {key}: planes table says {side.get(key)} events, inspect {want['events']}")
        by_name = have.get("op_names" if want["ops_only"] else "names", {})
        for name, (count, total) in want["top"].items():
            got_name = by_name.get(name)
            if got_name != (count, total):
                problems.append(f"plane {key} event {name!r}: {got_name}, inspect says {(count, total)}")
        if want["start"] is not None:
            if (int(have["start"]) if have["start"] is not None else None) != want["start"] or \
               (int(have["end"]) if have["end"] is not None else None) != want["end"]:
                problems.append(f"plane {key}: span {have['start']}..{have['end']}, inspect {want['start']}..{want['end']}")
    extra = set(k for k, v in planes.items() if v["events"]) - set(expected)
    if extra:
        problems.append(f"planes not in inspect: {sorted(extra)}")
    return check(not problems, f"{source}: {host}", "; ".join(problems[:5]))


def pyarrow_planes(root, host):
    files = sorted((root / f"host={host}" / "table=events").glob("*.parquet"))
    table = ds.dataset([str(f) for f in files], format="parquet", partitioning="hive",
                       partition_base_dir=str(root)).to_table()
    # host comes from the directory: check it is there and right.
    hosts = set(table.column("host").to_pylist()) if table.num_rows else {host}
    plane = table.column("plane").cast(pa.string())
    name = table.column("display_name").cast(pa.string())
    # As inspect counts: an aggregated event its occurrences (a negative count none), others one.
    occurrences = pc.max_element_wise(
        pc.coalesce(table.column("num_occurrences"), pa.scalar(1, pa.int64())), pa.scalar(0, pa.int64()))
    flat = pa.table({"plane_id": table.column("plane_id"), "plane": plane, "name": name,
                     "n": occurrences, "duration_ps": table.column("duration_ps"),
                     "start_ps": table.column("start_ps"),
                     "role": table.column("line_role").cast(pa.string())})
    per_plane = flat.group_by(["plane_id", "plane"]).aggregate(
        [("n", "count"), ("start_ps", "min")]).to_pylist()
    ends = pc.add(flat.column("start_ps").cast(pa.decimal128(30, 0)),
                  flat.column("duration_ps").cast(pa.decimal128(30, 0)))
    flat = flat.append_column("end_ps", ends)
    end_by_plane = {(r["plane_id"], r["plane"]): r["end_ps_max"]
                    for r in flat.group_by(["plane_id", "plane"]).aggregate([("end_ps", "max")]).to_pylist()}
    planes = {(r["plane_id"], r["plane"]): {"events": r["n_count"], "start": r["start_ps_min"],
                                             "end": end_by_plane.get((r["plane_id"], r["plane"]))}
              for r in per_plane}
    for r in flat.group_by(["plane_id", "plane", "name"]).aggregate(
            [("n", "sum"), ("duration_ps", "sum")]).to_pylist():
        planes[(r["plane_id"], r["plane"])].setdefault("names", {})[r["name"]] = (r["n_sum"], r["duration_ps_sum"])
    ops = flat.filter(pc.is_in(flat.column("role"), pa.array(["xla_ops", "stream"])))
    for r in ops.group_by(["plane_id", "plane", "name"]).aggregate(
            [("n", "sum"), ("duration_ps", "sum")]).to_pylist():
        planes[(r["plane_id"], r["plane"])].setdefault("op_names", {})[r["name"]] = (r["n_sum"], r["duration_ps_sum"])
    side_files = sorted((root / f"host={host}" / "table=planes").glob("*.parquet"))
    side_table = pq.read_table(side_files[0])
    side = {(r["plane_id"], r["plane"]): r["events"] for r in side_table.to_pylist()}
    return hosts, (planes, side)


def duckdb_connect(root):
    con = duckdb.connect()
    for table in ("events", "planes", "lines", "metadata"):
        con.execute(
            f"""CREATE VIEW {table} AS SELECT * FROM read_parquet(
                '{root}/host=*/table={table}/*.parquet',
                hive_partitioning = true, hive_types_autocast = false)""")
    return con


def conformance_cases(repo, profkit, work):
    root = work / "cases"
    links = work / "links"
    links.mkdir()
    expected = {}
    for host, fmt, path in cases(repo):
        ext = {"xspace": ".xplane.pb", "chrome": ".json", "paddle": ".pb", "paddle-trace": ".paddle_trace.pb"}[fmt]
        link = links / (host + ext)
        link.symlink_to(path)
        try:
            run([profkit, "convert", link, root, "--to", "parquet", "--from", fmt])
            expected[host] = expected_planes(profkit, fmt, link, work)
        except RuntimeError as e:
            check(False, f"convert {host}", str(e))
    con = duckdb_connect(root)
    hosts = sorted(r[0] for r in con.execute("SELECT DISTINCT host FROM metadata").fetchall())
    check(hosts == sorted(expected), f"DuckDB sees the {len(expected)} hosts",
          f"{set(hosts) ^ set(expected)}")
    for host, want in sorted(expected.items()):
        compare("DuckDB", host, want, duckdb_planes(con, host))
    for host, want in sorted(expected.items()):
        seen, got = pyarrow_planes(root, host)
        if not check(seen == {host}, f"pyarrow: host column of {host}", f"{seen}"):
            continue
        compare("pyarrow", host, want, got)
    versions = set()
    for f in root.glob("host=*/table=*/*.parquet"):
        kv = pq.read_metadata(f).metadata or {}
        versions.add((kv.get(b"profkit.schema_version"), kv.get(b"profkit.table") == f.parent.name[6:].encode()))
    check(versions == {(b"2", True)}, "every file carries schema version 2 and its table", f"{versions}")


def queries(repo):
    text = (repo / "docs/scale.md").read_text()
    found = re.findall(r"```sql\n-- query: (\w+)\n(.*?)```", text, re.S)
    return [(name, sql.strip()) for name, sql in found]


def normal(value):
    if isinstance(value, Decimal):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def device_op_sums(root):
    """Per op: (hosts, calls, total_ps, slowest host, its total) of the device op lines alone,
    picked by name as the profilers write them (not by `line_role`), summed with pyarrow."""
    files = sorted(root.glob("host=*/table=events/*.parquet"))
    table = ds.dataset([str(f) for f in files], format="parquet", partitioning="hive",
                       partition_base_dir=str(root)).to_table()
    plane = table.column("plane").cast(pa.string()).to_pylist()
    line = table.column("line").cast(pa.string()).to_pylist()
    name = table.column("display_name").cast(pa.string()).to_pylist()
    host = table.column("host").to_pylist()
    duration = table.column("duration_ps").to_pylist()
    per = {}
    for p, l, n, h, d in zip(plane, line, name, host, duration):
        if (p.startswith("/device:TPU:") and l == "XLA Ops") or \
           (p.startswith("/device:GPU:") and l.startswith("Stream #")):
            calls, total = per.setdefault(n, {}).get(h, (0, 0))
            per[n][h] = (calls + 1, total + d)
    out = []
    for op, hosts in per.items():
        slowest = sorted(hosts.items(), key=lambda kv: (-kv[1][1], kv[0]))[0]
        out.append((op, len(hosts), sum(c for c, _ in hosts.values()), sum(t for _, t in hosts.values()),
                    slowest[0], slowest[1][1]))
    return sorted(out, key=lambda r: (-r[3], r[0]))


def device_samples(repo, profkit, work):
    samples = repo.parent / "shared/samples/xspace-device-real"
    if not samples.is_dir():
        samples = repo / "conformance/xplane-device"
        files = [samples / d / "input.xplane.pb.gz" for d in ("gpu", "rocm1", "tpu")]
    else:
        files = [samples / d / "host.xplane.pb.gz" for d in ("gpu", "rocm1", "tpu")]
    root = work / "devices"
    out = run([profkit, "convert", *files, root, "--to", "parquet"])
    hosts = sorted(p.name for p in root.glob("host=*"))
    # The TPU profile records no hostnames: it keeps its file's name.
    check(hosts == ["host=34.83.195.179_6003", "host=host", "host=tw003"],
          "the three device profiles make one dataset, hosts named by their hostnames", f"{hosts} {out}")
    con = duckdb_connect(root)
    sql = dict(queries(repo)).get("time_per_op", "")
    got = [tuple(normal(v) for v in r) for r in con.execute(sql).fetchall()]
    want = device_op_sums(root)
    first = next(((a, b) for a, b in zip(got, want) if a != b), (len(got), len(want)))
    check(got == want, f"the docs' time_per_op on the real TPU and GPU profiles equals the device op lines' sums ({len(want)} ops)",
          f"first difference: {first}")
    top = got[0][0] if got else None
    check(top is not None and not top.startswith("jit_"), "no XLA module is counted as an op", f"{top}")
    # The op_metrics table holds what the TF Stats page ranks: DuckDB's host ops by self time are
    # `profkit xprof framework_op_stats`'s host rows (without idle), in order.
    for f, host in zip(files, ["34.83.195.179_6003", "tw003", "host"]):
        tables = json.loads(run([profkit, "xprof", "framework_op_stats", f]))
        want = [(r["c"][3]["v"], round(r["c"][7]["v"], 6)) for r in tables[1]["rows"] if r["c"][1]["v"] == "Host"]
        rows = con.execute(
            f"""SELECT name, self_time_ps FROM read_parquet('{root}/host=*/table=op_metrics/*.parquet',
                hive_partitioning = true, hive_types_autocast = false)
                WHERE host = '{host}' AND side = 'host' AND category <> 'IDLE'
                ORDER BY self_time_ps DESC, name LIMIT 500""").fetchall()
        # The page lists at most 500 ops of a side, the idle op among them.
        got = [(name, round(ps / 1e6, 6)) for name, ps in rows][: len(want)]
        check(got == want, f"op_metrics of {host}: the TF Stats page's {len(want)} host ops, in order",
              f"first difference: {next(((a, b) for a, b in zip(got, want) if a != b), (len(got), len(want)))}")
    device_tables(repo, profkit, root, files, ["34.83.195.179_6003", "tw003", "host"])


def tool_rows(profkit, tool, path):
    """The rows of `profkit xprof TOOL IN`'s DataTable, each a dict of column id to value."""
    table = json.loads(run([profkit, "xprof", tool, path]))
    ids = [c["id"] for c in table["cols"]]
    return [dict(zip(ids, (c.get("v") for c in r["c"]))) for r in table["rows"]]


def device_tables(repo, profkit, root, files, hosts):
    """The `kernels` and `hlo_ops` tables, read by DuckDB and by pyarrow, are the rows of
    `profkit xprof kernel_stats` / `hlo_stats` (every column, in the tables' units), and the
    docs' queries over them run."""
    con = duckdb.connect()
    for f, host in zip(files, hosts):
        for table, tool, order in (("kernels", "kernel_stats", "rank"), ("hlo_ops", "hlo_stats", None)):
            glob = f"{root}/host=*/table={table}/*.parquet"
            duck = con.execute(
                f"""SELECT * EXCLUDE (host, "table") FROM read_parquet('{glob}', hive_partitioning = true,
                    hive_types_autocast = false) WHERE host = '{host}'""").to_arrow_table()
            parts = sorted(root.glob(f"host={host}/table={table}/*.parquet"))
            arrow = ds.dataset([str(p) for p in parts], format="parquet").to_table()
            # The rows are in file order, the page's (one file per host and table).
            got_duck = duck.to_pylist()
            got_arrow = arrow.to_pylist()
            want = tool_rows(profkit, tool, str(f))
            check(got_duck == got_arrow, f"{table} of {host}: DuckDB and pyarrow read the same {len(got_arrow)} rows")
            bad = [i for i, (g, w) in enumerate(zip(got_arrow, want)) if tool_row(table, g) != tool_row(table, w, page=True)]
            check(len(got_arrow) == len(want) and not bad,
                  f"{table} of {host}: the {len(want)} rows of profkit xprof {tool}, every column",
                  f"{len(got_arrow)} rows against {len(want)}; first difference at {bad[:1]}: "
                  + (f"{tool_row(table, got_arrow[bad[0]])} against {tool_row(table, want[bad[0]], page=True)}" if bad else ""))
    text = (repo / "docs/scale.md").read_text()
    for table in ("kernels", "hlo_ops"):
        sqls = [q for q in re.findall(r"```sql\n(.*?)```", text, re.S) if f"table={table}/" in q]
        check(len(sqls) == 1, f"docs/scale.md has a query over {table}")
        for sql in sqls:
            rows = con.execute(sql.replace("DATASET", str(root))).fetchall()
            check(len(rows) > 0, f"DuckDB runs the docs' {table} query ({len(rows)} rows)")


def tool_row(table, row, page=False):
    """A row of the table, or of the tool's page (`page`), in the same terms: the page's
    microseconds from the table's picoseconds and nanoseconds, its shared memory the sum of the
    table's two, its flags Yes/No, its source cell ending with the table's file and line."""
    if table == "kernels":
        if page:
            return [row[k] for k in ("rank", "kernel_name", "registers_per_thread", "shmem_bytes", "block_dim",
                                     "grid_dim", "occupancy_pct", "is_op_tensor_core_eligible",
                                     "is_kernel_using_tensor_core", "op_name", "occurrences", "total_duration_us",
                                     "avg_duration_us", "min_duration_us", "max_duration_us")]
        return [row["rank"], row["kernel_name"], row["registers_per_thread"],
                row["static_shmem_bytes"] + row["dynamic_shmem_bytes"], row["block_dim"], row["grid_dim"],
                row["occupancy_pct"], row["is_op_tensor_core_eligible"], row["is_kernel_using_tensor_core"],
                row["op_name"], row["occurrences"], row["total_duration_ns"] / 1e3, row["avg_duration_ns"] / 1e3,
                row["min_duration_ns"] / 1e3, row["max_duration_ns"] / 1e3]
    if page:
        source = row["source_info"]
        return [row["rank"], row["program_id"], row["category"], row["hlo_op_name"], row["hlo_op_expression"],
                row["tf_op_name"], row["occurrences"], row["total_time"], row["avg_time"], row["total_self_time"],
                row["avg_self_time"], row["total_self_time_percent"], row["cumulative_total_self_time_percent"],
                row["dma_stall_percent"], row["model_flop_rate"], row["normalized_flop_rate"],
                row["measured_memory_bw"], row["hbm_bw"], row["cmem_read_bw"], row["cmem_write_bw"],
                row["operational_intensity"], row["bound_by"], row["hlo_rematerialization"],
                row["outside_compilation"], row["autotuned"], source[source.find(">") + 1:source.rfind("</div>")] if source else "",
                row["core_type"], row["parent_op_name"], row["vdd_energy"]]
    yes = lambda b: "Yes" if b else "No"
    total, self_ = row["total_time_ps"] / 1e6, row["self_time_ps"] / 1e6
    n = row["occurrences"]
    source = f"{row['source_file']}:{row['source_line']}" if row["source_file"] and row["source_line"] != -1 else ""
    return [row["rank"], str(row["program_id"]), row["category"], row["hlo_op_name"], row["expression"],
            row["framework_op"], n, total, total / n if n else 0.0, self_, self_ / n if n else 0.0,
            row["self_time_percent"], row["cumulative_self_time_percent"], row["dma_stall_fraction"],
            row["model_flop_rate"], row["normalized_flop_rate"], row["memory_bw"], row["hbm_bw"],
            row["cmem_read_bw"], row["cmem_write_bw"], row["operational_intensity"], row["bound_by"],
            yes(row["rematerialization"]), yes(row["outside_compilation"]), yes(row["autotuned"]), source,
            row["core_type"], row["parent_op_name"], row["vdd_energy_j"]]


def cluster(repo, profkit, work, hosts):
    profiles = work / "profiles"
    run(["cargo", "run", "-q", "-p", "profkit-arrow", "--example", "cluster", "--", profiles, str(hosts), "20"],
        cwd=repo)
    root = work / "cluster"
    files = sorted(profiles.glob("*.xplane.pb"))
    # Host by host, appending: what a cluster's machines would each do.
    for f in files:
        run([profkit, "convert", f, root, "--to", "parquet"])
    again = subprocess.run([profkit, "convert", files[0], root, "--to", "parquet"], capture_output=True, text=True)
    check(again.returncode == 2 and "already in the dataset" in again.stderr,
          "a host already in the dataset is refused", again.stderr.strip())
    con = duckdb_connect(root)
    named = queries(repo)
    check(len(named) == 3, "docs/scale.md has the three queries", f"{[n for n, _ in named]}")
    answers = {}
    for name, sql in named:
        rows = [tuple(normal(v) for v in r) for r in con.execute(sql).fetchall()]
        answers[name] = rows
        check(len(rows) > 0, f"DuckDB runs {name} ({len(rows)} rows)")
    stragglers = answers.get("stragglers_per_step", [])
    check(len(stragglers) == 20 and all(r[1] == hosts for r in stragglers),
          "every step has a straggler among all hosts", f"{stragglers[:2]}")
    # The example slows host (7 * step + 3) % 4 down threefold at each step.
    wrong = [r for r in stragglers if hosts == 4 and r[2] != f"worker-{(7 * r[0] + 3) % 4}"]
    check(not wrong, "the straggler query finds the slowed host of each step", f"{wrong[:2]}")

    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[1]").appName("profkit-arrow-check")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        (spark.read.option("basePath", str(root)).parquet(str(root / "host=*" / "table=events"))
         .createOrReplaceTempView("events"))
        count = spark.sql("SELECT COUNT(*) FROM events").collect()[0][0]
        want = con.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        check(count == want, f"Spark reads the {want} events of {hosts} hosts", f"{count}")
        for name, sql in named:
            rows = [tuple(normal(v) for v in r) for r in spark.sql(sql).collect()]
            same = rows == answers[name]
            detail = "" if same else f"first difference: {next(((a, b) for a, b in zip(rows, answers[name]) if a != b), (len(rows), len(answers[name])))}"
            check(same, f"Spark's {name} equals DuckDB's ({len(rows)} rows)", detail)
    finally:
        spark.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--profkit", type=Path, required=True)
    parser.add_argument("--hosts", type=int, default=4)
    args = parser.parse_args()
    print(f"duckdb {duckdb.__version__}, pyarrow {pa.__version__}", flush=True)
    with tempfile.TemporaryDirectory(prefix="profkit-arrow-check-") as tmp:
        work = Path(tmp)
        conformance_cases(args.repo, args.profkit, work)
        device_samples(args.repo, args.profkit, work)
        cluster(args.repo, args.profkit, work, args.hosts)
    print(f"{len(PASSED)} passed, {len(FAILED)} failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
