"""The protobuf peer: for every XSpace conformance case that decodes, the events table equals,
event by event, the rows built from the same file parsed by Python protobuf (xplane_pb2 generated
from proto/tensorflow/profiler/xplane.proto), with the rules of docs/scale.md: start = line
timestamp_ns * 1000 + offset_ps (none for aggregated events), display_name falling back to the
name, stats the event's then its metadata's (an event stat hides the metadata's of the same id),
values as text (integers in decimal, bytes in base64, references as the referenced name).
Both layouts of the events table are checked: the default (`timestamp_ns` and `offset_ps`, stats
as JSON text) and `layout="parquet"` (`start_ps` and the stats map)."""

import base64
import json
import math

import pytest

import profkit
from conftest import case_id, is_error_case, xspace_inputs

CASES = [p for p in xspace_inputs() if not is_error_case(p)]


def stat_text(stat, plane):
    kind = stat.WhichOneof("value")
    if kind is None:
        return ""
    if kind == "double_value":
        return stat.double_value
    if kind in ("uint64_value", "int64_value"):
        return str(getattr(stat, kind))
    if kind == "str_value":
        return stat.str_value
    if kind == "bytes_value":
        return base64.b64encode(stat.bytes_value).decode()
    ref = stat.ref_value
    return plane.stat_metadata[ref].name if ref in plane.stat_metadata else ""


def stat_name(plane, id):
    return plane.stat_metadata[id].name if id in plane.stat_metadata else ""


def peer_rows(space):
    for plane in space.planes:
        for line in plane.lines:
            base = line.timestamp_ns * 1000
            for event in line.events:
                md = plane.event_metadata[event.metadata_id] if event.metadata_id in plane.event_metadata else None
                name = md.name if md else ""
                display = (md.display_name or md.name) if md else ""
                data = event.WhichOneof("data")
                start = None if data == "num_occurrences" else base + (event.offset_ps if data else 0)
                occurrences = event.num_occurrences if data == "num_occurrences" else None
                own = {s.metadata_id for s in event.stats}
                stats = [(stat_name(plane, s.metadata_id), stat_text(s, plane)) for s in event.stats]
                if md:
                    stats += [(stat_name(plane, s.metadata_id), stat_text(s, plane))
                              for s in md.stats if s.metadata_id not in own]
                yield (plane.name, plane.id, line.name, line.id, name, display, start,
                       event.duration_ps, occurrences, stats)


def same_stats(ours, theirs):
    if len(ours) != len(theirs):
        return False
    for (k1, v1), (k2, v2) in zip(ours, theirs):
        if k1 != k2:
            return False
        if isinstance(v2, float):
            try:
                got = float(v1)
            except ValueError:
                return False
            if not (got == v2 or (math.isnan(got) and math.isnan(v2))):
                return False
        elif v1 != v2:
            return False
    return True


def frame_rows(table):
    """The rows of a table of the default layout as the peer's: start from the exact pair, stats
    from the JSON text (every pair, in order, a repeated name too)."""
    columns = ["plane", "plane_id", "line", "line_id", "name", "display_name", "timestamp_ns",
               "offset_ps", "duration_ps", "num_occurrences", "stats"]
    data = {c: table.column(c).to_pylist() for c in columns}
    for i in range(table.num_rows):
        r = {c: data[c][i] for c in columns}
        start = None if r["num_occurrences"] is not None else r["timestamp_ns"] * 1000 + r["offset_ps"]
        stats = json.loads(r["stats"], object_pairs_hook=list)
        yield [r["plane"], r["plane_id"], r["line"], r["line_id"], r["name"], r["display_name"],
               start, r["duration_ps"], r["num_occurrences"], stats]


def parquet_rows(table):
    columns = ["plane", "plane_id", "line", "line_id", "name", "display_name", "start_ps",
               "duration_ps", "num_occurrences", "stats"]
    data = {c: table.column(c).to_pylist() for c in columns}
    for i in range(table.num_rows):
        got = [data[c][i] for c in columns]
        got[6] = None if got[6] is None else int(got[6])
        yield got


@pytest.mark.parametrize("layout", ["frame", "parquet"])
@pytest.mark.parametrize("path", CASES, ids=case_id)
def test_events_equal_python_protobuf(path, layout, xplane_pb2):
    space = xplane_pb2.XSpace.FromString(path.read_bytes())
    theirs = list(peer_rows(space))
    table = profkit.events(path, format="xspace", layout=layout)
    assert table.num_rows == len(theirs)
    ours = frame_rows(table) if layout == "frame" else parquet_rows(table)
    for i, (got, want) in enumerate(zip(ours, theirs)):
        assert got[:9] == list(want[:9]), f"event {i}"
        assert same_stats(got[9], want[9]), f"event {i} stats: {got[9]} != {want[9]}"


def test_the_peer_sees_every_case():
    assert len(CASES) >= 20
