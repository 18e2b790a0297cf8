"""profkit's import of Kineto traces against HolisticTraceAnalysis's parse.

For each trace of conformance/chrome/corpus/hta with GPU kernels: HTA's dataframe (its own parser,
`hta.common.trace.parse_trace_file`) gives, per stream, the number of events of category `kernel`
and the sum of their durations; profkit's XSpace (`profkit dump`, the canonical JSON of what the
trace reads as) gives, per line of each `/device:GPU:N` plane, the events whose `cat` stat is
`kernel`. The two must agree on every stream: the same count, and the same total duration to
within a nanosecond per kernel (HTA's parse goes through doubles; profkit's is exact). HTA's
rounding of nanosecond times to microseconds is turned off for the comparison.

Then the other way: each of those traces written back by profkit as Chrome JSON (`convert --to
chrome`, directly and through an XSpace, in the default layout, the Trace Event Format's) must load
in HTA with the original's rows: the same events by name, category, duration and time from the
first one (pids and tids are renumbered by the conversion, so they are not compared; times to the
nanosecond).
"""

import argparse
import collections
import json
import logging
import os
import pathlib
import subprocess
import sys
import tempfile

logging.disable(logging.WARNING)
# HTA rounds nanosecond-resolution times to whole microseconds (start up, end down) unless told
# not to; profkit keeps them exact, so the comparison is with HTA's exact parse.
os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"

from hta.common.trace import parse_trace_file  # noqa: E402


def hta_kernels(path):
    _, df, symbols = parse_trace_file(str(path))
    names = symbols.get_sym_table()
    cats = df["cat"].map(lambda i: names[i] if 0 <= i < len(names) else "")
    kernels = df[cats == "kernel"]
    out = collections.defaultdict(lambda: [0, 0.0])
    for stream, dur in zip(kernels["stream"], kernels["dur"]):
        out[int(stream)][0] += 1
        out[int(stream)][1] += float(dur)
    return dict(out)


def profkit_kernels(profkit, path):
    dump = subprocess.run([profkit, "dump", str(path)], check=True, capture_output=True)
    space = json.loads(dump.stdout)
    out = collections.defaultdict(lambda: [0, 0.0])
    for plane in space.get("planes", []):
        if not plane.get("name", "").startswith("/device:GPU:"):
            continue
        stat_names = {int(k): v["name"] for k, v in plane.get("stat_metadata", {}).items()}
        event_metadata = plane.get("event_metadata", {})
        for line in plane.get("lines", []):
            for event in line.get("events", []):
                # An event's own stats first, then its metadata's (args every event of a name
                # shares are stored once there), as xprof's visitor looks them up.
                metadata = event_metadata.get(str(event.get("metadata_id")), {})
                cat = next(
                    (
                        # A string many events share is a ref_value: a stat metadata's name.
                        s.get("str_value") or stat_names.get(int(s.get("ref_value", -1)))
                        for s in event.get("stats", []) + metadata.get("stats", [])
                        if stat_names.get(s.get("metadata_id")) == "cat"
                    ),
                    None,
                )
                if cat == "kernel":
                    out[int(line["id"])][0] += 1
                    out[int(line["id"])][1] += int(event.get("duration_ps", 0)) / 1e6
    return dict(out)


def hta_rows(path):
    """HTA's rows of a trace: (name, category, start from the first row, duration), counted."""
    _, df, symbols = parse_trace_file(str(path))
    names = symbols.get_sym_table()
    text = lambda i: names[i] if 0 <= i < len(names) else ""  # noqa: E731
    first = float(df["ts"].min()) if len(df) else 0.0
    rows = collections.Counter()
    for name, cat, ts, dur in zip(df["name"], df["cat"], df["ts"], df["dur"]):
        rows[(text(int(name)), text(int(cat)), round(float(ts) - first, 3), round(float(dur), 3))] += 1
    return rows


def written_back(profkit, trace, work):
    """profkit's Chrome JSON of a trace, directly and through an XSpace: [(label, path)]."""
    direct = work / (trace.name + ".direct.json")
    subprocess.run([profkit, "convert", str(trace), str(direct), "--to", "chrome"], check=True, capture_output=True)
    xspace = work / (trace.name + ".xplane.pb")
    subprocess.run([profkit, "convert", str(trace), str(xspace), "--to", "xspace"], check=True, capture_output=True)
    via = work / (trace.name + ".via-xspace.json")
    subprocess.run([profkit, "convert", str(xspace), str(via), "--to", "chrome"], check=True, capture_output=True)
    return [("direct", direct), ("through an XSpace", via)]


def check_written_back(profkit, trace, work):
    """Mismatches (0 or 1 per way) of HTA's rows of profkit's written-back trace."""
    theirs = hta_rows(trace)
    failures = 0
    for label, path in written_back(profkit, trace, work):
        try:
            ours = hta_rows(path)
        except Exception as e:
            print(f"MISMATCH {trace.name} written back {label}: HTA does not load it ({type(e).__name__}: {e})")
            failures += 1
            continue
        if ours == theirs:
            print(f"ok {trace.name} written back {label}: HTA loads the original's {sum(theirs.values())} rows")
        else:
            missing = theirs - ours
            extra = ours - theirs
            print(
                f"MISMATCH {trace.name} written back {label}: {sum(missing.values())} rows missing "
                f"(e.g. {list(missing)[:2]}), {sum(extra.values())} extra (e.g. {list(extra)[:2]})"
            )
            failures += 1
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    args = parser.parse_args()
    repo = pathlib.Path(args.repo)
    profkit = repo / "target" / "debug" / "profkit"
    traces = sorted((repo / "conformance" / "chrome" / "corpus" / "hta").glob("*.json*"))
    failures = 0
    checked = 0
    work = pathlib.Path(tempfile.mkdtemp(prefix="hta-check-"))
    for trace in traces:
        try:
            theirs = hta_kernels(trace)
        except Exception as e:  # HTA refuses some traces (no GPU, no rank): nothing to compare
            print(f"skip {trace.name}: HTA does not parse it ({type(e).__name__})")
            continue
        if not theirs:
            print(f"skip {trace.name}: no kernels")
            continue
        ours = profkit_kernels(profkit, trace)
        checked += 1
        failures += check_written_back(profkit, trace, work)
        for stream in sorted(set(theirs) | set(ours)):
            t = theirs.get(stream, [0, 0.0])
            o = ours.get(stream, [0, 0.0])
            ok = t[0] == o[0] and abs(t[1] - o[1]) <= 0.001 * max(1, t[0])
            status = "ok" if ok else "MISMATCH"
            print(
                f"{status} {trace.name} stream {stream}: HTA {t[0]} kernels {t[1]:.3f} us, "
                f"profkit {o[0]} kernels {o[1]:.3f} us"
            )
            failures += not ok
    if checked == 0:
        print("no trace was compared", file=sys.stderr)
        return 1
    print(f"{checked} traces compared, {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
