"""The profkit wheel on the conformance cases.

- inspect() is what the `profkit` command prints; the events table's counts, per-name counts and
  durations and plane spans equal `profkit inspect --json`'s, for every XSpace, Chrome and Paddle
  case; planes/lines agree with the events.
- Every error case raises a ProfkitError subclass naming the file and the place (byte offset and
  field path, or JSON path) the CLI's message names; invalid cases give validate() problems.
- stream_events() yields the same rows as events(); progress callbacks and the GIL release work.
- The protobuf peer (test_protobuf_peer.py) and the large file (test_large.py) are beside this.
"""

import json
import os
import re
import subprocess
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import profkit
from conftest import (
    REPO,
    CONFORMANCE,
    all_inputs,
    case_id,
    chrome_inputs,
    cli_json,
    format_of,
    is_error_case,
    paddle_inputs,
    run_cli,
    xspace_inputs,
)

GOOD = [p for p in all_inputs() if not is_error_case(p)]
ERRORS = [p for p in all_inputs() if is_error_case(p)]
EVENT_INPUTS = [p for p in xspace_inputs() + chrome_inputs() + paddle_inputs() if not is_error_case(p)]
SAMPLE = CONFORMANCE / "xplane/sample-myhost/input.xplane.pb"


def test_there_are_cases():
    assert len(GOOD) > 40 and len(ERRORS) > 20


@pytest.mark.parametrize("path", GOOD, ids=case_id)
def test_inspect_is_the_cli(path):
    fmt = format_of(path)
    # As the package asks: at most 10,000 planes listed (its default `max_planes`).
    cli = run_cli("inspect", "--json", "--max-planes", "10000", "--from", fmt, path, ok=(0, 1))
    if cli.returncode == 0:
        assert profkit.inspect(path, format=fmt) == json.loads(cli.stdout)
    else:
        # The command's failure is the same exception, naming the same thing.
        with pytest.raises(profkit.ProfkitError) as caught:
            profkit.inspect(path, format=fmt)
        assert caught.value.message in cli.stderr


def expected_planes(path, tmp_path):
    """Per plane (id, name): events, top names {name: (count, total_ps)}, span; from the CLI
    (Paddle protobufs through their XSpace, as the events table reads them)."""
    target, fmt = path, format_of(path)
    if fmt in ("paddle", "paddle-trace"):
        target = tmp_path / "converted.xplane.pb"
        run_cli("convert", path, target, "--to", "xspace", "--from", fmt)
        fmt = "xspace"
    summary = cli_json("inspect", "--json", "--from", fmt, target)["summary"]
    planes = {}
    for p in summary["planes"]:
        entry = planes.setdefault((p["id"], p["name"]), {"events": 0, "top": {}, "ops_only": False})
        entry["events"] += p["events"]
        # A device plane's names are ranked over the lines that hold its ops.
        entry["ops_only"] = p.get("top_events_device_ops", False)
        entry["top"].update({e["name"]: (e["count"], e["total_duration_ps"]) for e in e_list(p)})
        entry["span"] = (p.get("start_ps"), p.get("end_ps"))
    return planes


def e_list(plane):
    return plane.get("top_events", [])


@pytest.mark.parametrize("path", EVENT_INPUTS, ids=case_id)
def test_counts_and_durations_equal_the_cli(path, tmp_path):
    want = expected_planes(path, tmp_path)
    t = profkit.tables(path, format=format_of(path), layout="parquet")
    df = t.events.to_pandas()
    got_total = 0
    for (plane_id, plane), w in want.items():
        rows = df[(df.plane_id == plane_id) & (df.plane.astype(str) == plane)]
        got_total += len(rows)
        assert len(rows) == w["events"], (plane_id, plane)
        occurrences = rows.num_occurrences.fillna(1).clip(lower=0)
        ranked = rows.line_role.astype(str).isin(["xla_ops", "stream"]) if w["ops_only"] else True
        for name, (count, total) in w["top"].items():
            sel = (rows.display_name.astype(str) == name) & ranked
            assert (int(occurrences[sel].sum()), int(rows.duration_ps[sel].sum())) == (count, total), name
        timed = rows[rows.start_ps.notna()]
        if w["span"][0] is not None:
            start = min(int(v) for v in timed.start_ps)
            end = max(int(s) + int(d) for s, d in zip(timed.start_ps, timed.duration_ps))
            assert (start, end) == tuple(w["span"])
    assert got_total == len(df)
    # The side tables agree with the events.
    assert int(pc.sum(t.planes.column("events")).as_py() or 0) == len(df)
    assert int(pc.sum(t.lines.column("events")).as_py() or 0) == len(df)
    meta = dict(zip(t.metadata.column("key").to_pylist(), t.metadata.column("value").to_pylist()))
    assert meta["schema_version"] == profkit.SCHEMA_VERSION


@pytest.mark.parametrize("path", ERRORS, ids=case_id)
def test_every_error_case_raises_with_its_place(path):
    with pytest.raises(profkit.ProfkitError) as caught:
        profkit.events(path, format=format_of(path))
    e = caught.value
    if not path.is_dir():
        assert e.file == str(path)
    expected = (path.parent / "error.txt") if not path.is_dir() else (path.parent / "error.txt")
    text = expected.read_text() if expected.exists() else ""
    if "byte " in text and "XSpace" in text:
        assert e.offset is not None and f"byte {e.offset}" in text
        assert e.field_path and e.field_path in text
    if "(line " in text:
        assert e.json_path is not None and e.line is not None
    # The CLI's commands raise too.
    with pytest.raises(profkit.ProfkitError):
        profkit.inspect(path, format=format_of(path))
    with pytest.raises(profkit.ProfkitError):
        profkit.validate(path, format=format_of(path))
    with pytest.raises(profkit.ProfkitError):
        list(profkit.stream_events(path, format=format_of(path)))


def test_error_classes():
    with pytest.raises(profkit.TruncatedError) as t:
        profkit.events(CONFORMANCE / "xplane/error-truncated/input.xplane.pb")
    assert t.value.offset == 257 and t.value.field_path == "XSpace.planes[0]"
    with pytest.raises(profkit.DecodeError) as m:
        profkit.stream_events(CONFORMANCE / "xplane/error-bad-utf8/input.xplane.pb").read_all()
    assert m.value.offset == 66
    assert m.value.field_path == "XSpace.planes[0].lines[0].events[1].stats[1].str_value"
    with pytest.raises(profkit.DecodeError) as j:
        profkit.events(CONFORMANCE / "chrome/error-bad-ts/input.json")
    # As the conformance case's error.txt records it.
    assert (j.value.json_path, j.value.line, j.value.column) == ("traceEvents[1].ts", 4, 10)
    with pytest.raises(profkit.ProfkitIOError):
        profkit.events(CONFORMANCE / "no-such-file.xplane.pb")
    with pytest.raises(profkit.UnknownFormatError):
        profkit.events(CONFORMANCE / "README.md")
    with pytest.raises(profkit.UsageError):
        profkit.events(SAMPLE, format="parquet")
    with pytest.raises(profkit.ProfkitIOError):
        profkit.inspect(CONFORMANCE / "no-such-file.xplane.pb")


def validate_txt(path):
    return Path(path).parent / "validate.txt"


@pytest.mark.parametrize("path", [p for p in GOOD if validate_txt(p).exists()], ids=case_id)
def test_validate_is_the_cli(path):
    """One Problem per line the CLI's validate prints (the case's validate.txt), same text for
    XSpaces; the exit status says whether there are errors."""
    fmt = format_of(path)
    problems = profkit.validate(path, format=fmt)
    cli = run_cli("validate", "--all", "--from", fmt, path, ok=(0, 1))
    printed = [l for l in cli.stdout.splitlines()
               if l.strip() and not re.match(r"^(\S+: )?valid\b", l)]
    assert len(problems) == len(printed)
    for p in problems:
        assert p.kind and p.message
    if fmt == "xspace":
        lines = [l for l in validate_txt(path).read_text().splitlines()
                 if l.strip() and not l.startswith("valid")]
        marked = [("warning: " if p.severity == "warning" else "") + str(p) for p in problems]
        assert marked == lines
    if cli.returncode == 1:
        assert any(p.severity == "error" for p in problems)


def test_validate_finds_problems():
    problems = profkit.validate(CONFORMANCE / "xplane/invalid-dangling-ids/input.xplane.pb")
    assert len(problems) == 5
    assert problems[2].location == "planes[0].lines[0].events[1]"
    assert "resolves to nothing" in problems[2].message
    assert profkit.validate(SAMPLE) == []


def test_stream_equals_table():
    whole = profkit.events(SAMPLE)
    stream = profkit.stream_events(SAMPLE, batch_rows=1)
    batches = list(stream)
    assert len(batches) == whole.num_rows and all(b.num_rows == 1 for b in batches)
    assert pa.Table.from_batches(batches, schema=stream.schema).to_pylist() == whole.to_pylist()
    side = stream.side_tables()
    assert side["planes"].equals(profkit.planes(SAMPLE))
    assert side["lines"].equals(profkit.lines(SAMPLE))


def test_every_format_reads():
    for path in [SAMPLE, CONFORMANCE / "chrome/phases/input.json",
                 CONFORMANCE / "paddle/nodetree-sample/input.paddle_trace.pb",
                 CONFORMANCE / "poplar/combined/input.json",
                 CONFORMANCE / "xdl/original-writer/input"]:
        t = profkit.tables(path)
        assert t.events.num_rows > 0, path
        assert t.format in profkit.formats()


def test_xdl_records():
    records = profkit.xdl_records(CONFORMANCE / "xdl/original-writer/input")
    assert records
    for table in records.values():
        assert {"host", "dataset", "rank", "gstep"} <= set(table.column_names)
    inspect = cli_json("inspect", "--json", CONFORMANCE / "xdl/original-writer/input")
    assert sum(t.num_rows for t in records.values()) == sum(d["records"] for d in inspect["datasets"]) == 7


def test_pandas_is_one_call():
    df = profkit.events(SAMPLE).to_pandas()
    assert list(df.display_name.astype(str)) == ["MyHostOp", "short", "kernel_a"]
    starts = [t * 1000 + o for t, o in zip(df.timestamp_ns, df.offset_ps)]
    assert starts == [1005000000, 1010000000, 1001000000]
    # No column holds a Python object per row: NumPy, categoricals and Arrow strings.
    assert not [c for c in df.columns if df[c].dtype == object], df.dtypes
    assert df.timestamp_ns.dtype == "int64" and df.offset_ps.dtype == "int64"
    # layout="parquet" is exactly the dataset's columns.
    parquet = profkit.events(SAMPLE, layout="parquet")
    assert [int(v) for v in parquet.column("start_ps").to_pylist()] == starts
    assert parquet.schema.field("stats").type == pa.map_(pa.string(), pa.string())


@pytest.mark.parametrize("path", EVENT_INPUTS, ids=case_id)
def test_the_two_layouts_hold_the_same_values(path):
    """The default layout and layout="parquet" round-trip: the same columns elsewhere, start_ps
    is timestamp_ns * 1000 + offset_ps (none for aggregated events), and the JSON text's pairs are
    the map's, in order."""
    fmt = format_of(path)
    frame = profkit.events(path, format=fmt)
    parquet = profkit.events(path, format=fmt, layout="parquet")
    assert frame.schema.metadata[b"profkit.layout"] == b"frame"
    assert frame.num_rows == parquet.num_rows
    same = [c for c in parquet.column_names if c not in ("start_ps", "stats")]
    for c in same:
        assert frame.column(c).to_pylist() == parquet.column(c).to_pylist(), c
    ts, off, occ = (frame.column(c).to_pylist() for c in ("timestamp_ns", "offset_ps", "num_occurrences"))
    starts = [None if n is not None else t * 1000 + o for t, o, n in zip(ts, off, occ)]
    assert starts == [None if v is None else int(v) for v in parquet.column("start_ps").to_pylist()]
    pairs = [json.loads(s, object_pairs_hook=list) for s in frame.column("stats").to_pylist()]
    assert pairs == [[tuple(kv) for kv in m] for m in parquet.column("stats").to_pylist()]


def test_a_layout_that_is_none_is_refused():
    with pytest.raises(profkit.UsageError):
        profkit.events(SAMPLE, layout="pandas")


def test_progress_callback():
    seen = []
    profkit.events(SAMPLE, progress=lambda done, total: seen.append((done, total)))
    size = SAMPLE.stat().st_size
    assert seen and all(total == size for _, total in seen)
    assert seen[-1][0] == size and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_progress_callback_errors_propagate():
    def stop(done, total):
        raise KeyError("stop here")

    with pytest.raises(KeyError):
        profkit.events(SAMPLE, progress=stop)


def test_convert_is_the_cli(tmp_path):
    ours = tmp_path / "ours.json"
    theirs = tmp_path / "theirs.json"
    profkit.convert(SAMPLE, ours, to="chrome")
    run_cli("convert", SAMPLE, theirs, "--to", "chrome")
    assert ours.read_bytes() == theirs.read_bytes()
    seen = []
    profkit.convert([SAMPLE], tmp_path / "ds", to="parquet", progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (1, 1)
    import pyarrow.dataset as ds

    # `input.xplane.pb` says nothing of its host: the host is the one the space records.
    table = ds.dataset(tmp_path / "ds" / "host=myhost" / "table=events", format="parquet").to_table()
    assert table.num_rows == profkit.events(SAMPLE).num_rows
    with pytest.raises(profkit.UsageError):
        profkit.convert([SAMPLE], tmp_path / "ds", to="parquet")


def test_convert_layouts(tmp_path):
    trace = CONFORMANCE / "chrome/kineto-event-sync/input.json"
    space = tmp_path / "trace.xplane.pb"
    profkit.convert(trace, space)
    back, xprof = tmp_path / "back.json", tmp_path / "xprof.json"
    profkit.convert(space, back)
    profkit.convert(space, xprof, layout="xprof")
    events = json.loads(back.read_text())["traceEvents"]
    assert any(e.get("ph") == "s" for e in events), "flow events come back"
    shown = json.loads(xprof.read_text())["traceEvents"]
    assert not any(e.get("ph") == "s" for e in shown)
    assert any("flow" in e.get("args", {}) for e in shown), "xprof's flow args"


def test_report(tmp_path):
    path = CONFORMANCE / "paddle/nodetree-sample/input.paddle_trace.pb"
    text = profkit.report(path)
    assert text == run_cli("report", path).stdout
    data = profkit.report(path, as_data=True)
    assert data == json.loads((path.parent / "summary.json").read_text())
    legacy = profkit.report(path, legacy=True, as_data=True)
    assert legacy == json.loads((path.parent / "report.json").read_text())
    assert profkit.report(path, sorted_by="CPUAvg", time_unit="us") == run_cli(
        "report", path, "--sorted-by", "CPUAvg", "--time-unit", "us"
    ).stdout


def test_console_script():
    assert run_cli("--version").stdout.startswith("profkit ")
    assert run_cli("inspect", "nope", ok=(1,)).stderr.startswith("profkit: nope: cannot open")


def test_gil_is_released_during_reads(large_file):
    path, _ = large_file
    ticks = []
    done = threading.Event()

    def read():
        profkit.tables(path, events=False)
        done.set()

    t = threading.Thread(target=read)
    t.start()
    while not done.is_set():
        ticks.append(1)
        done.wait(0.001)
    t.join()
    # With the GIL held for the whole native call this loop could not run meanwhile.
    assert len(ticks) > 10


def test_progress_bar_with_tqdm(capsys):
    pytest.importorskip("tqdm")
    table = profkit.events(SAMPLE, progress=True)
    assert table.num_rows == 3
    assert "B" in capsys.readouterr().err


def test_plugin_check_runs_from_the_wheel_command():
    """`plugin check` runs each check in a child of the command; from the wheel that child is
    this interpreter running `-m profkit`, not the interpreter with the CLI's arguments."""
    # check.sh builds it before it runs the tests where no Rust toolchain is on the path.
    plugin = os.environ.get("PROFKIT_PY_PLUGIN")
    if not plugin:
        subprocess.run(["cargo", "build", "-q", "-p", "profkit-plugin-example"], cwd=REPO, check=True)
        target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
        plugin = target / "debug" / "libprofkit_plugin_example.so"
    done = run_cli("plugin", "check", plugin, "--json")
    report = json.loads(done.stdout)
    assert report["failed"] == 0, done.stdout
    assert report["passed"] > 0, done.stdout


def test_report_torch():
    path = CONFORMANCE / "torch/cnn/trace.json.gz"
    expected = (CONFORMANCE / "torch/cnn/tables/self_cpu_time_total.txt").read_text()
    got = profkit.report(path, style="torch", sorted_by="self_cpu_time_total", row_limit=20)
    assert got == expected
    data = profkit.report(path, style="torch", row_limit=3, as_data=True)
    assert [r["name"] for r in data["rows"]] == ["ProfilerStep*", "data", "aten::randn"]


def test_report_torch_later_options():
    overload = CONFORMANCE / "torch/overload"
    got = profkit.report(
        overload / "trace.json.gz",
        style="torch",
        group_by_overload_name=True,
        group_by_input_shape=True,
        sorted_by="cpu_time_total",
        row_limit=12,
        max_name_column_width=24,
        max_shapes_column_width=30,
        header="narrow",
    )
    assert got == (overload / "tables/widths.txt").read_text()
    python = CONFORMANCE / "torch/python"
    got = profkit.report(
        python / "trace.json.gz",
        style="torch",
        include_python_functions=True,
        top_level_events_only=True,
        row_limit=10,
    )
    assert got == (python / "tables/python_top_level.txt").read_text()
    data = profkit.report(overload / "trace.json.gz", style="torch", top_level_events_only=True, as_data=True)
    assert [(r["name"], r["top_level"]) for r in data["rows"]] == [("ProfilerStep*", True)]
    with pytest.raises(profkit.UsageError):
        profkit.report(overload / "trace.json.gz", style="torch", max_name_column_width=-1)


def test_hta():
    path = CONFORMANCE / (
        "chrome/corpus/hta/critical_path-simple_add-benchmark_result_493459_1694039959_trace.json.gz"
    )
    got = profkit.hta("temporal-breakdown", [path])
    (row,) = got["frames"]["temporal_breakdown"]
    assert row["kernel_time(us)"] == 16464339.0
    assert row["idle_time_pctg"] == 99.7
    table = profkit.hta("kernel-breakdown", [path], as_arrow=True)["frames"]["kernel_type"]
    assert table.column("kernel_type").to_pylist() == ["MEMORY", "COMPUTATION"]
    # HTA's get_memory_bw_summary(): Memcpy HtoD's 16 points.
    (htod, memset) = profkit.hta("memory-bw-summary", [path])["frames"]["memory_bw_summary"]
    assert (htod["name"], htod["count"], memset["name"]) == ("Memcpy HtoD", 16.0, "Memset")
    assert abs(htod["mean"] - 4.823488275497734) < 1e-12
    launches = profkit.hta("kernel-launch-stats", [path], include_memory_events=False)["frames"]["rank 0"]
    assert len(launches) == 79
    assert "user_annotation_breakdown" not in profkit.hta("user-annotation-breakdown", [path])["frames"]
    ranges = profkit.hta("user-annotation-breakdown", [path], use_gpu_annotation=False)["frames"]
    assert len(ranges["user_annotation_breakdown"]) == 5
    alexnet = path.parent / "critical_path-alexnet-benchmark_result_2869224_1695835535_trace.json.gz"
    (full,) = profkit.hta("queue-full-time", [alexnet], max_queue_length=2)["frames"]["time_blocked_on_full_queue"]
    assert (full["stream"], full["duration_at_max_queue_length"]) == (20, 25.0)


def test_xprof_tools_in_process():
    case = CONFORMANCE / "xplane/real-tf-fnloop"
    path = case / "input.xplane.pb"
    text = profkit.xprof(path, "framework_op_stats", raw=True)
    assert text == (case / "xprof.framework_op_stats.json").read_text()
    tables = profkit.xprof(path, "framework_op_stats")
    assert [len(t["rows"]) for t in tables] == [47, 46]
    assert tables[0]["rows"][0]["c"][3]["v"] == "IDLE"
    assert "framework_op_stats" in profkit.xprof([path])
    # JAX on ROCm: framework_op_stats and hlo_stats are xprof's bytes, with nothing named; the
    # SparseCore step info the roofline model's step records need is named.
    import gzip
    import warnings

    rocm1 = CONFORMANCE / "xplane-device/rocm1"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for tool in ["framework_op_stats", "hlo_stats"]:
            text = profkit.xprof(rocm1 / "input.xplane.pb.gz", tool, raw=True)
            assert text == gzip.open(rocm1 / f"xprof.{tool}.json.gz").read().decode()
    with pytest.warns(UserWarning, match="not reproduced: steps database"):
        profkit.xprof(CONFORMANCE / "xplane/tpu-ungrouped/input.xplane.pb", "roofline_model")
    with pytest.raises(profkit.UsageError):
        profkit.xprof(path, "no_such_tool")
    # report's default for an XSpace is the same table, as text.
    assert profkit.report(path).startswith("Framework op stats (including idle time)\n")


def test_xprof_memory_viewer_in_process():
    import gzip

    tpu = CONFORMANCE / "xplane-device/tpu"
    path = tpu / "input.xplane.pb.gz"
    module = "jit_f(12190760917235803885)"
    for space, name in [(0, f"{module}.json.gz"), (5, f"{module}.space5.json.gz")]:
        want = json.loads(gzip.open(tpu / "xprof.memory_viewer" / name).read())
        assert profkit.xprof(path, "memory_viewer", module=module, memory_space=space) == want
    with pytest.raises(profkit.UsageError, match="give --module NAME"):
        profkit.xprof(path, "memory_viewer")
    grouped = profkit.xprof(CONFORMANCE / "xplane/real-jax-steps/input.xplane.pb", "op_profile", group_by="category")
    assert grouped == json.loads((CONFORMANCE / "xplane/real-jax-steps/xprof.op_profile.category.json").read_text())


def test_xprof_op_stats_tools_in_process():
    # real-tf-fit has no steps: profkit's OpStats renders the three tools as xprof does.
    case = CONFORMANCE / "xplane/real-tf-fit"
    path = case / "input.xplane.pb"
    saved = CONFORMANCE / "xprof-tools/op_stats/real-tf-fit"
    for tool in ["overview_page", "input_pipeline_analyzer"]:
        import gzip

        want = gzip.open(saved / f"{tool}.json.gz").read().decode()
        assert profkit.xprof(path, tool, raw=True) == want
    assert len(profkit.xprof(path, "overview_page")) == 7
    pod = profkit.xprof(path, "pod_viewer")
    assert pod["deviceType"] == "CPU" and pod["podStatsSequence"]["podStatsMap"] == []
    # real-tf-fnloop has steps: rendered from profkit's steps database as xprof renders them.
    import warnings

    saved = CONFORMANCE / "xprof-tools/op_stats/real-tf-fnloop"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = profkit.xprof(CONFORMANCE / "xplane/real-tf-fnloop/input.xplane.pb", "input_pipeline_analyzer", raw=True)
    assert text == gzip.open(saved / "input_pipeline_analyzer.json.gz").read().decode()


def test_op_stats_table():
    fit = CONFORMANCE / "xplane/real-tf-fit/input.xplane.pb"
    gpu = CONFORMANCE / "xplane-device/gpu/input.xplane.pb.gz"
    table = profkit.op_stats([fit, gpu], hosts=["cpu-0", "gpu-0"])
    assert table.schema.metadata[b"profkit.table"] == b"op_metrics"
    assert sorted(set(table.column("host").to_pylist())) == ["cpu-0", "gpu-0"]
    # The host ops by self time are the TF Stats page's host rows (without idle), in order.
    pages = json.loads((fit.parent / "xprof.framework_op_stats.json").read_text())
    want = [r["c"][3]["v"] for r in pages[1]["rows"] if r["c"][1]["v"] == "Host"]
    rows = [
        r for r in table.to_pylist() if r["host"] == "cpu-0" and r["side"] == "host" and r["category"] != "IDLE"
    ]
    rows.sort(key=lambda r: (-r["self_time_ps"], r["name"]))
    assert [r["name"] for r in rows] == want
    assert profkit.op_stats(fit).column("host")[0].as_py() == "input"


def _page_rows(text):
    """A DataTable's rows as dicts of column id to value."""
    table = json.loads(text)
    ids = [c["id"] for c in table["cols"]]
    return [dict(zip(ids, (c.get("v") for c in r["c"]))) for r in table["rows"]]


def test_device_tables():
    # The kernels and HLO ops of the real device profiles as tables: the rows of the
    # kernel_stats and hlo_stats pages, the values in the tables' units.
    import warnings

    gpu = CONFORMANCE / "xplane-device/gpu/input.xplane.pb.gz"
    tpu = CONFORMANCE / "xplane-device/tpu/input.xplane.pb.gz"
    kernels = profkit.op_stats(gpu, table="kernels")
    assert kernels.schema.metadata[b"profkit.table"] == b"kernels"
    page = _page_rows(profkit.xprof(gpu, "kernel_stats", raw=True))
    rows = kernels.to_pylist()
    assert len(rows) == len(page) == 15
    for got, want in zip(rows, page):
        assert got["host"] == "input"
        assert (got["rank"], got["kernel_name"], got["op_name"], got["occurrences"]) == (
            want["rank"], want["kernel_name"], want["op_name"], want["occurrences"])
        assert got["static_shmem_bytes"] + got["dynamic_shmem_bytes"] == want["shmem_bytes"]
        assert (got["block_dim"], got["grid_dim"]) == (want["block_dim"], want["grid_dim"])
        assert (got["is_op_tensor_core_eligible"], got["is_kernel_using_tensor_core"]) == (
            want["is_op_tensor_core_eligible"], want["is_kernel_using_tensor_core"])
        assert got["total_duration_ns"] / 1e3 == want["total_duration_us"]
        assert got["avg_duration_ns"] / 1e3 == want["avg_duration_us"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        page = _page_rows(profkit.xprof(tpu, "hlo_stats", raw=True))
    ops = profkit.op_stats(tpu, hosts=["tpu-0"], table="hlo_ops")
    assert ops.num_rows == len(page) == 17
    for got, want in zip(ops.to_pylist(), page):
        assert got["host"] == "tpu-0"
        assert (got["rank"], str(got["program_id"]), got["category"], got["hlo_op_name"], got["expression"]) == (
            want["rank"], want["program_id"], want["category"], want["hlo_op_name"], want["hlo_op_expression"])
        assert got["self_time_ps"] / 1e6 == want["total_self_time"]
        assert (got["normalized_flop_rate"], got["hbm_bw"], got["bound_by"]) == (
            want["normalized_flop_rate"], want["hbm_bw"], want["bound_by"])
    assert all(r["module"] for r in ops.to_pylist() if r["program_id"])
    # The CPU profile has neither: empty tables of the same columns.
    fit = CONFORMANCE / "xplane/real-tf-fit/input.xplane.pb"
    assert profkit.op_stats(fit, table="kernels").num_rows == 0
    assert profkit.op_stats(fit, table="hlo_ops").schema.names == ops.schema.names
    assert profkit.op_stats(fit, table="steps").schema.metadata[b"profkit.table"] == b"steps"
    with pytest.raises(ValueError, match="no OpStats table"):
        profkit.op_stats(fit, table="kernel")


def test_xprof_op_profile_group_by():
    # JAX on CPU: each grouping is xprof's bytes.
    import warnings

    case = CONFORMANCE / "xplane/real-jax-plain"
    path = case / "input.xplane.pb"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for group_by, file in [
            (None, "xprof.op_profile.json"),
            ("program", "xprof.op_profile.json"),
            ("category", "xprof.op_profile.category.json"),
            ("provenance", "xprof.op_profile.provenance.json"),
        ]:
            text = profkit.xprof(path, "op_profile", raw=True, group_by=group_by)
            assert text == (case / file).read_text(), group_by
    assert "byCategory" in profkit.xprof(path, "op_profile", group_by="category")
    with pytest.raises(profkit.UsageError):
        profkit.xprof(path, "hlo_stats", group_by="category")
