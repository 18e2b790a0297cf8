"""A large XSpace (PROFKIT_PY_LARGE_MB, 512 MB by default; multi-GB for the benchmark) streamed in
record batches with bounded memory: the peak resident memory of a process that streams it stays
below a fixed bound (a plane and a batch, not the file), and every event is seen."""

import json
import subprocess
import sys
import textwrap

import profkit

CHILD = textwrap.dedent(
    """
    import json, resource, sys
    import pyarrow.compute as pc
    import profkit
    rows = 0
    duration = 0
    batches = 0
    for batch in profkit.stream_events(sys.argv[1], batch_rows=65536):
        rows += batch.num_rows
        duration += pc.sum(batch.column("duration_ps")).as_py() or 0
        batches += 1
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"rows": rows, "duration": duration, "batches": batches, "peak": peak}))
    """
)


def stream_in_child(path):
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_large_file_streams_with_bounded_memory(large_file, tmp_path):
    path, events = large_file
    size = path.stat().st_size
    baseline = stream_in_child(
        __import__("conftest").CONFORMANCE / "xplane/sample-myhost/input.xplane.pb")
    got = stream_in_child(path)
    assert got["rows"] == events
    assert got["batches"] >= events // 65536
    grown = got["peak"] - baseline["peak"]
    print(f"\n{size / 1e6:.0f} MB, {events} events: peak RSS {got['peak'] / 1e6:.0f} MB "
          f"({grown / 1e6:.0f} MB over an import-only baseline of {baseline['peak'] / 1e6:.0f} MB)")
    # One plane of the file is ~ size / copies; the bound is far below the file.
    assert grown < 400_000_000
    assert grown < size / 2
