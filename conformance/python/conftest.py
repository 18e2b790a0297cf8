"""Shared fixtures of the profkit Python package's tests (run by check.sh)."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CONFORMANCE = REPO / "conformance"


def profkit_cli():
    """The `profkit` command the wheel installed, beside this interpreter."""
    return str(Path(sys.executable).with_name("profkit"))


def run_cli(*args, ok=(0,)):
    done = subprocess.run([profkit_cli(), *map(str, args)], capture_output=True, text=True)
    assert done.returncode in ok, f"profkit {' '.join(map(str, args))}: {done.returncode} {done.stderr}"
    return done


def cli_json(*args, ok=(0,)):
    return json.loads(run_cli(*args, ok=ok).stdout)


def _cases(fmt, names):
    out = []
    root = CONFORMANCE / fmt
    for case in sorted(p for p in root.iterdir() if p.is_dir()):
        for name in names:
            if (case / name).exists():
                out.append(case / name)
                break
    return out


def xspace_inputs():
    return _cases("xplane", ["input.xplane.pb"])


def chrome_inputs():
    return _cases("chrome", ["input.json"])


def paddle_inputs():
    return _cases("paddle", ["input.pb", "input.paddle_trace.pb"])


def poplar_inputs():
    return _cases("poplar", ["input.json"])


def xdl_inputs():
    return _cases("xdl", ["input"])


def all_inputs():
    return xspace_inputs() + chrome_inputs() + paddle_inputs() + poplar_inputs() + xdl_inputs()


def case_id(path):
    path = Path(path)
    case = path.parent if path.name.startswith("input") else path
    return f"{case.parent.name}/{case.name}"


def is_error_case(path):
    return case_id(path).split("/")[1].startswith("error-")


@pytest.fixture(scope="session")
def xplane_pb2():
    """xplane_pb2 generated from the repository's proto/ with grpcio-tools' protoc."""
    from grpc_tools import protoc

    out = Path(tempfile.mkdtemp(prefix="profkit-pb2-"))
    proto_root = REPO / "proto"
    rc = protoc.main([
        "protoc",
        f"-I{proto_root}",
        f"--python_out={out}",
        str(proto_root / "tensorflow/profiler/xplane.proto"),
    ])
    assert rc == 0, "protoc failed on proto/tensorflow/profiler/xplane.proto"
    sys.path.insert(0, str(out))
    from tensorflow.profiler import xplane_pb2  # noqa: E402

    return xplane_pb2


def build_plane(xplane_pb2, events, plane_id=1, seed=7):
    """A device plane of `events` events on 8 lines, 200 distinct names, with int, double,
    string and ref stats: the repeated unit of the large file."""
    import random

    rng = random.Random(seed)
    plane = xplane_pb2.XPlane(id=plane_id, name=f"/device:GPU:{plane_id}")
    for i in range(1, 201):
        plane.event_metadata[i].id = i
        plane.event_metadata[i].name = f"op_{i}"
    for i, name in enumerate(["correlation_id", "flops", "tf_op", "kind"], start=1):
        plane.stat_metadata[i].id = i
        plane.stat_metadata[i].name = name
    plane.stat_metadata[9].id = 9
    plane.stat_metadata[9].name = "kernel"
    per_line = events // 8
    for l in range(8):
        line = plane.lines.add(id=l, name=f"Stream #{l}", timestamp_ns=1_000_000 + l)
        offset = 0
        for e in range(per_line):
            offset += rng.randrange(1, 5000)
            ev = line.events.add(metadata_id=rng.randrange(1, 201), offset_ps=offset,
                                 duration_ps=rng.randrange(0, 4000))
            ev.stats.add(metadata_id=1, uint64_value=e)
            ev.stats.add(metadata_id=2, double_value=e * 0.5)
            if e % 4 == 0:
                ev.stats.add(metadata_id=3, str_value=f"layer_{e % 37}/op")
                ev.stats.add(metadata_id=4, ref_value=9)
    return plane


@pytest.fixture(scope="session")
def large_file(xplane_pb2, tmp_path_factory):
    """An XSpace of PROFKIT_PY_LARGE_MB megabytes (512 by default): one plane of 200,000 events
    written again and again (an XSpace's planes are a repeated field, so the copies concatenate).
    Returns (path, events per copy, copies)."""
    target_mb = int(os.environ.get("PROFKIT_PY_LARGE_MB", "512"))
    directory = Path(os.environ.get("PROFKIT_PY_LARGE_DIR") or tmp_path_factory.mktemp("large"))
    path = directory / "large.xplane.pb"
    per_copy = 200_000
    unit = xplane_pb2.XSpace(planes=[build_plane(xplane_pb2, per_copy)]).SerializeToString()
    copies = max(1, (target_mb * 1_000_000) // len(unit))
    with open(path, "wb") as f:
        for _ in range(copies):
            f.write(unit)
    yield path, (per_copy // 8) * 8 * copies
    path.unlink()


def format_of(path):
    """The format of a case's input, from its directory (detection is tested on its own)."""
    path = Path(path)
    kind = case_id(path).split("/")[0]
    if kind == "paddle":
        return "paddle-trace" if path.name.endswith(".paddle_trace.pb") else "paddle"
    return {"xplane": "xspace", "chrome": "chrome", "poplar": "poplar", "xdl": "xdl"}[kind]
