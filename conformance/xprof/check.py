"""Checks that xprof's trace_viewer tool reads every XSpace case, as given and re-encoded by us,
and that `profkit convert --to chrome` writes what xprof writes for each.

Run through check.sh, which provides the venv. For each case under conformance/xplane/ whose input
decodes, `cargo run -p conformance --bin xprof-inputs` writes the input and our re-encoding, each as
`<host>.xplane.pb` in a folder of its own (xprof takes the host from the file name and writes cache
files beside it). Each file is converted in a child process, so that a crash in xprof's native code
fails that file only. A file passes when xprof returns JSON with a `traceEvents` list, and a
re-encoded file when, besides, xprof's output for it equals its output for the input (flow ids,
which xprof salts per process, compared as the partition of events they make: see
`flows_renamed`). What the events say is not judged here: golden tests of our converter do that
with the saved outputs.

For each input, `profkit convert <input> <out> --to chrome` must then write exactly xprof's live
output: the same bytes once both sides' flow ids are renamed by first appearance (so the same
events carry a flow, linked to the same others, with the same direction and category).

With BLESS=1, xprof's output for each case's input is saved as xprof.trace_viewer.json in the case
folder, unless the saved file differs only in the values of its flow ids, which xprof salts per
process.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time

TRACE_VIEWER_FILE = "xprof.trace_viewer.json"
CHILD_TIMEOUT_S = 120


def convert(path, out_path):
    """In the child: runs xprof on one file and writes what it returns to out_path."""
    from xprof.convert import raw_to_tool_data as r

    data, _content_type = r.xspace_to_tool_data([path], "trace_viewer", {"use_saved_result": False})
    if data is None:
        return 3
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(data)
    # The tools xprof lists for the file, which profkit_xprof::tools reproduces.
    with open(out_path + ".tools.json", "w", encoding="utf-8") as f:
        json.dump(r.xspace_to_tool_names([path]), f)
    return 0


FLOW = re.compile(r'"flow": "(\d+)"')
FLOW_ID_MASK = (1 << 56) - 1


def flows_renamed(text):
    """The trace viewer JSON text with each `flow` arg's id renamed by first appearance.

    xprof salts its flow ids per process, so two runs differ in the values but not in which events
    share an id, nor in each flow's direction and category (the value is TSL's `XFlow`: direction
    in bits 0-1, id in bits 2-57, category in bits 58-63). `"flow": "<value>"` becomes
    `"flow": "F<n>/<direction>/<category>"`, n counting distinct ids in order of first appearance:
    equal texts mean the same events, linked the same way.
    """
    ids = {}

    def rename(match):
        value = int(match.group(1))
        n = ids.setdefault((value >> 2) & FLOW_ID_MASK, len(ids))
        return f'"flow": "F{n}/{value & 3}/{value >> 58}"'

    return FLOW.sub(rename, text)


def flow_count(text):
    """How many events carry a flow, and how many distinct flow ids there are."""
    values = [int(v) for v in FLOW.findall(text)]
    return len(values), len({(v >> 2) & FLOW_ID_MASK for v in values})


def check_ours(profkit, path, xprof_raw, work):
    """Returns (ok, message): profkit's conversion of path against xprof's output."""
    out_path = os.path.join(work, "profkit.json")
    proc = subprocess.run(
        [profkit, "convert", path, out_path, "--from", "xspace", "--to", "chrome"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return False, f"profkit convert failed: {proc.stderr.strip()}"
    with open(out_path, encoding="utf-8") as f:
        ours = f.read()
    theirs = flows_renamed(xprof_raw.rstrip("\n") + "\n")
    ours = flows_renamed(ours)
    events, flows = flow_count(xprof_raw)
    if ours == theirs:
        return True, f"profkit writes xprof's bytes, with the same {events} events in {flows} flows (ids renamed)"
    ours_lines, theirs_lines = ours.split("\n"), theirs.split("\n")
    for i, (a, b) in enumerate(zip(theirs_lines, ours_lines)):
        if a != b:
            return False, f"profkit differs from xprof at line {i + 1}:\n  xprof:   {a}\n  profkit: {b}"
    return False, f"profkit writes {len(ours_lines)} lines, xprof {len(theirs_lines)}"


def check_one(path, work):
    """Returns (ok, message, raw_output_or_None)."""
    out_path = os.path.join(work, "trace_viewer.json")
    log_path = os.path.join(work, "xprof.log")
    with open(log_path, "w", encoding="utf-8") as log:
        try:
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--convert", path, out_path],
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=CHILD_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return False, f"xprof took over {CHILD_TIMEOUT_S} s", None
    if proc.returncode == 3:
        return False, "xprof returned None", None
    if proc.returncode != 0:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            tail = "".join(f.readlines()[-5:]).strip()
        return False, f"xprof exited with status {proc.returncode}: {tail}", None
    with open(out_path, encoding="utf-8") as f:
        raw = f.read()
    try:
        trace = json.loads(raw)
    except json.JSONDecodeError as e:
        return False, f"xprof's output is not JSON: {e}", None
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        return False, "xprof's output has no traceEvents list", None
    shown = sum(1 for e in events if isinstance(e, dict) and e.get("ph") not in (None, "M"))
    return True, f"{len(events)} trace events, {shown} not metadata", raw


def bless(case_dir, raw):
    """Saves xprof's output for a case unless only the salted flow ids changed. Returns a note."""
    path = os.path.join(case_dir, TRACE_VIEWER_FILE)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = f.read()
        try:
            if flows_renamed(old) == flows_renamed(raw):
                return ""
        except json.JSONDecodeError:
            pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(raw)
    return f" (saved {TRACE_VIEWER_FILE})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", help="repository root (required unless --convert)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="files converted at once")
    parser.add_argument("--convert", nargs=2, metavar=("XPLANE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.convert:
        return convert(*args.convert)
    if not args.repo:
        parser.error("--repo is required")

    blessing = os.environ.get("BLESS", "") not in ("", "0")
    cases_dir = os.path.join(args.repo, "conformance", "xplane")
    start = time.monotonic()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="xprof-check-") as tmp:
        inputs = os.path.join(tmp, "inputs")
        listing = subprocess.run(
            ["cargo", "run", "--quiet", "-p", "conformance", "--bin", "xprof-inputs", "--", inputs],
            cwd=args.repo,
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
        if listing.returncode != 0:
            print("xprof-inputs failed; see above")
            print("0 passed, 1 failed")
            return 1
        build = subprocess.run(["cargo", "build", "--quiet", "-p", "profkit"], cwd=args.repo, check=False)
        if build.returncode != 0:
            print("building profkit failed; see above")
            print("0 passed, 1 failed")
            return 1
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(args.repo, "target")
        profkit = os.path.join(args.repo, target, "debug", "profkit")
        # CONFORMANCE_CASE=text checks only the cases whose name contains it, as for cargo test.
        only = os.environ.get("CONFORMANCE_CASE", "")
        files = []
        for line in listing.stdout.splitlines():
            case, variant, rest = line.split("\t", 2)
            if only and only.split("/")[-1] not in case:
                continue
            if variant == "skip":
                print(f"skip {case}: {rest}")
            else:
                files.append((case, variant, rest))

        def run(item):
            case, variant, path = item
            work = os.path.join(tmp, "work", case, variant)
            os.makedirs(work)
            return check_one(path, work)

        # Children run in parallel; results are reported in listing order.
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(run, files))

        outputs = {}
        for (case, variant, path), (ok, message, raw) in zip(files, results):
            label = f"{case} ({variant}, {os.path.basename(path)})"
            if ok and variant == "input":
                outputs[case] = raw
            elif ok and variant == "reencoded" and case in outputs:
                # Our re-encoding must mean the same to xprof as the input does.
                if flows_renamed(outputs[case]) != flows_renamed(raw):
                    ok, message = False, "xprof reads our re-encoding differently from the input"
            if ok:
                passed += 1
                note = bless(os.path.join(cases_dir, case), raw) if blessing and variant == "input" else ""
                print(f"ok   {label}: {message}{note}")
            else:
                failed += 1
                print(f"FAIL {label}: {message}")
            if ok and variant == "input":
                # The tool list: xprof's, live, against the case's tools.json (profkit's).
                theirs_path = os.path.join(tmp, "work", case, variant, "trace_viewer.json.tools.json")
                ours_path = os.path.join(cases_dir, case, "tools.json")
                with open(theirs_path, encoding="utf-8") as f:
                    theirs_tools = json.load(f)
                ours_tools = json.load(open(ours_path, encoding="utf-8")) if os.path.exists(ours_path) else None
                if theirs_tools == ours_tools:
                    passed += 1
                    print(f"ok   {case} (tools): {len(theirs_tools)} tools as xprof lists them")
                else:
                    failed += 1
                    print(f"FAIL {case} (tools): xprof lists {theirs_tools}, profkit {ours_tools}")
                ours_ok, ours_message = check_ours(profkit, path, raw, os.path.join(tmp, "work", case, variant))
                if ours_ok:
                    passed += 1
                    print(f"ok   {case} (profkit): {ours_message}")
                else:
                    failed += 1
                    print(f"FAIL {case} (profkit): {ours_message}")
    print(f"checked in {time.monotonic() - start:.1f} s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
