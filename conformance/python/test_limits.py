"""Hostile inputs through the Python package, as `crates/profkit/tests/limits.rs` runs them
through the command: every case of `conformance::limits` and every gzip bomb (made at test time
by the `make-hostile-cases` binary, nothing stored), through every reading call. Each call ends
with its answer or a `ProfkitError` subclass (never a bare `MemoryError`, a crash or a hang), the
bombs with a `LimitError` that says how to raise the limit, within the memory bound; and an
interrupt (SIGINT to Python only, as a notebook's) leaves no temporary file or directory behind.

The calls run in-process (the CLI's library, on a worker thread): the peak is the calling
process's own maximum resident set (`os.wait4` of a child Python that makes one call), which
holds the work itself; a memory bound, not a timing threshold.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import profkit
from conftest import CONFORMANCE, REPO

#: The size of each hostile input (the Rust test uses 6 MiB; a Python call costs more to start).
SIZE = int(os.environ.get("PROFKIT_PY_HOSTILE_BYTES", str(2 << 20)))
#: The bombs' compressed megabytes.
BOMB_MEMBERS = int(os.environ.get("PROFKIT_PY_BOMB_MEMBERS", "128"))
#: What a Python process with pyarrow and the extension takes whatever the input.
BASE = 256 << 20
FACTOR = 64

CALLS = {
    "inspect": "profkit.inspect(path, format=fmt)",
    "validate": "profkit.validate(path, format=fmt)",
    "report": "profkit.report(path, format=fmt)",
    "events": "profkit.events(path, format=fmt)",
    "tables": "profkit.tables(path, format=fmt, events=False)",
    "stream_events": "sum(b.num_rows for b in profkit.stream_events(path, format=fmt))",
    "convert": "profkit.convert(path, out, to='chrome', format=fmt)",
    "convert_parquet": "profkit.convert(path, os.path.join(os.path.dirname(out), 'dataset'), to='parquet', format=fmt)",
}

CHILD = textwrap.dedent(
    """
    import json, os, sys
    import profkit
    path, fmt, out, call = sys.argv[1], sys.argv[2] or None, sys.argv[3], sys.argv[4]
    try:
        eval(call)
        print(json.dumps({"ok": True}))
    except profkit.ProfkitError as e:
        print(json.dumps({"ok": False, "class": type(e).__name__, "message": str(e)}))
    except BaseException as e:
        print(json.dumps({"ok": False, "class": "not a ProfkitError: " + type(e).__name__, "message": str(e)}))
    """
)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    # check.sh makes them before it runs the tests where no Rust toolchain is on the path (the
    # installed wheel's run), with the same PROFKIT_PY_HOSTILE_BYTES and PROFKIT_PY_BOMB_MEMBERS.
    made = os.environ.get("PROFKIT_PY_HOSTILE_DIR")
    if made:
        return json.loads((Path(made) / "cases.json").read_text())
    out = tmp_path_factory.mktemp("hostile")
    subprocess.run(
        ["cargo", "run", "-q", "-p", "conformance", "--bin", "make-hostile-cases", "--",
         str(out), str(SIZE), str(BOMB_MEMBERS)],
        cwd=REPO,
        check=True,
    )
    return json.loads((out / "cases.json").read_text())


def measured(path, fmt, call, out):
    """Runs one call in a child Python; its answer and the peak resident set (bytes)."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), fmt or "", str(out), call],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stdout = child.stdout.read()
    child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    lines = stdout.decode().strip().splitlines()
    answer = json.loads(lines[-1]) if lines else {"ok": False, "class": f"exit {child.returncode}"}
    return answer, usage.ru_maxrss * 1024


def test_every_hostile_input_and_bomb_through_every_call(hostile, tmp_path):
    failures = []
    table = []
    for case in hostile:
        path = Path(case["path"])
        size = sum(f.stat().st_size for f in path.iterdir()) if path.is_dir() else path.stat().st_size
        bound = FACTOR * size + BASE
        out_dir = tmp_path / case["name"]
        out_dir.mkdir()
        for name, call in CALLS.items():
            if name == "report" and (case["name"].startswith(("poplar", "xdl")) or case["name"].startswith("graph")):
                continue
            answer, peak = measured(path, case["from"], call, out_dir / "out.json")
            table.append(f"{case['name']:<40} {name:<14} {peak / 1e6:8.1f} MB {peak / size:7.1f}x {answer.get('class', 'ok')}")
            if not answer["ok"] and not answer["class"].endswith("Error") or answer.get("class", "").startswith("not a"):
                failures.append(f"{case['name']} {name}: {answer}")
            if case["bomb"]:
                raise_hint = "max_inflated" in answer.get("message", "") or "--max-inflated" in answer.get("message", "")
                if answer["ok"] or (case["message"] == "--max-inflated" and not raise_hint):
                    failures.append(f"{case['name']} {name}: not refused for its limit: {answer}")
                elif case["message"] == "--max-inflated" and answer["class"] != "LimitError":
                    failures.append(f"{case['name']} {name}: {answer['class']}, not LimitError")
            elif case["refused"] and (answer["ok"] or "budget" not in answer["message"]):
                failures.append(f"{case['name']} {name}: expected the message budget's refusal: {answer}")
            if peak > bound:
                failures.append(f"{case['name']} {name}: peak {peak / 1e6:.1f} MB over {bound / 1e6:.1f} MB")
            left = sorted(p.name for p in out_dir.iterdir())
            if left and not answer["ok"]:
                failures.append(f"{case['name']} {name}: left behind {left}")
            for p in out_dir.iterdir():
                if p.is_dir():
                    shutil.rmtree(p)
                else:
                    p.unlink()
    print("\n".join(table))
    assert not failures, "\n".join(failures)


def test_the_commands_run_in_this_process(monkeypatch, tmp_path):
    # No child process: every way to start one fails the test.
    def refused(*args, **kwargs):
        raise AssertionError("a child process was started")

    monkeypatch.setattr(subprocess, "Popen", refused)
    monkeypatch.setattr(os, "fork", refused, raising=False)
    monkeypatch.setattr(os, "posix_spawn", refused, raising=False)
    xspace = CONFORMANCE / "xplane" / "gpu-device" / "input.xplane.pb"
    summary = profkit.inspect(xspace)
    assert summary["summary"]["total_events"] > 0
    assert profkit.validate(xspace) is not None
    assert isinstance(profkit.report(xspace), str)
    out = tmp_path / "out.json"
    assert isinstance(profkit.convert(xspace, out), list)
    assert out.stat().st_size > 0
    profkit.merge([xspace], tmp_path / "merged.xplane.pb")
    assert (tmp_path / "merged.xplane.pb").stat().st_size > 0
    # Failures are ProfkitError subclasses, with the file split off the message.
    with pytest.raises(profkit.UsageError):
        profkit.convert(xspace, tmp_path / "x.json", to="not-a-format")
    with pytest.raises(profkit.UsageError):
        profkit.inspect(xspace, max_planes=-1)
    with pytest.raises(profkit.ProfkitIOError) as e:
        profkit.inspect(tmp_path / "missing.xplane.pb")
    assert e.value.file == str(tmp_path / "missing.xplane.pb")


def test_calls_on_several_threads_at_once(tmp_path):
    import concurrent.futures

    xspace = CONFORMANCE / "xplane" / "gpu-device" / "input.xplane.pb"
    expected = profkit.inspect(xspace)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: profkit.inspect(xspace), range(8)))
    assert all(a == expected for a in answers)


def test_gzip_reads_wherever_the_command_reads_it(tmp_path):
    import gzip

    plain = CONFORMANCE / "xplane" / "gpu-device" / "input.xplane.pb"
    data = plain.read_bytes()
    gz = tmp_path / "gpu.xplane.pb.gz"
    # Two members, as `cat a.gz b.gz` makes.
    gz.write_bytes(gzip.compress(data[:100]) + gzip.compress(data[100:]))
    expected = profkit.events(plain)
    assert profkit.events(gz).num_rows == expected.num_rows
    assert profkit.tables(gz).planes.num_rows == profkit.tables(plain).planes.num_rows
    assert sum(b.num_rows for b in profkit.stream_events(gz)) == expected.num_rows
    assert profkit.inspect(gz)["summary"]["total_events"] == profkit.inspect(plain)["summary"]["total_events"]
    chrome = next(p for p in (CONFORMANCE / "chrome").rglob("*.json.gz"))
    assert profkit.events(chrome).num_rows == profkit.inspect(chrome)["summary"]["total_events"]
    # Damage: each fault its own error, naming the file.
    bad = bytearray(gzip.compress(data))
    bad[-8] ^= 1
    damaged = tmp_path / "crc.xplane.pb.gz"
    damaged.write_bytes(bytes(bad))
    for call in (profkit.events, profkit.inspect, profkit.validate):
        with pytest.raises(profkit.ProfkitError, match="bad gzip CRC in member 1") as e:
            call(damaged)
        assert str(damaged) in str(e.value)
    trailing = tmp_path / "trailing.xplane.pb.gz"
    trailing.write_bytes(gzip.compress(data) + b"junk")
    with pytest.raises(profkit.ProfkitError, match="trailing data after the gzip stream"):
        profkit.events(trailing)
    # The limit, raised by argument.
    with pytest.raises(profkit.LimitError, match="max_inflated"):
        profkit.events(gz, max_inflated="100")
    with pytest.raises(profkit.LimitError, match="--max-inflated"):
        profkit.inspect(gz, max_inflated="100")
    assert profkit.events(gz, max_inflated="unlimited").num_rows == expected.num_rows


def test_the_paddle_budget_can_be_lowered(hostile):
    case = next(c for c in hostile if c["name"] == "paddle-nodetree-empty-nodes")
    with pytest.raises(profkit.LimitError, match="paddle-bytes-per-message"):
        profkit.inspect(case["path"])
    with pytest.raises(profkit.LimitError, match="budget"):
        profkit.events(case["path"])
    profkit.inspect(case["path"], paddle_bytes_per_message=0)
    profkit.events(case["path"], paddle_bytes_per_message=0)


INTERRUPTED = textwrap.dedent(
    """
    import signal, sys
    import profkit
    # Python's own handler, whatever this process inherited (a shell's background job starts
    # with SIGINT ignored, and Python then installs none).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        profkit.convert(sys.argv[1], sys.argv[2], to=sys.argv[3])
    except KeyboardInterrupt:
        sys.exit(42)
    """
)


@pytest.mark.parametrize("to", ["chrome", "parquet"])
def test_an_interrupt_leaves_nothing_behind(tmp_path, to):
    # Chrome events enough that the conversion is still writing when the interrupt comes (the
    # temporary output appears once the input is read; in-process, 400,000 events are written
    # in a tenth of a second).
    src = tmp_path / "big.json"
    with open(src, "w") as f:
        f.write('{"traceEvents":[')
        for start in range(0, 4_000_000, 100_000):
            f.write("".join(
                '{"ph":"X","name":"op%d","ts":%d,"dur":1,"pid":1,"tid":%d},' % (i % 100, i, i % 8)
                for i in range(start, start + 100_000)
            ))
        f.write('{"ph":"i","ts":1}]}')
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / ("out.json" if to == "chrome" else "dataset")
    child = subprocess.Popen([sys.executable, "-c", INTERRUPTED, str(src), str(out), to])
    # Once the command is under way (its temporary output exists), SIGINT to Python only.
    for _ in range(6000):
        if any(".tmp" in p.name for p in out_dir.rglob("*")) or child.poll() is not None:
            break
        time.sleep(0.01)
    assert child.poll() is None, "the conversion ended before it could be interrupted"
    child.send_signal(signal.SIGINT)
    assert child.wait() == 42
    left = sorted(str(p.relative_to(out_dir)) for p in out_dir.rglob("*"))
    assert left == [], left
