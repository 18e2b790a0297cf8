"""Checks that xprof's trace_viewer tool reads every XSpace case, as given and re-encoded by us,
and that `profkit convert --to chrome` writes what xprof writes for each.

Run through check.sh, which provides the venv. For each case under conformance/xplane/ whose input
decodes, `cargo run -p conformance --bin xprof-inputs` writes the input and our re-encoding, each as
`<host>.xplane.pb` in a folder of its own (xprof takes the host from the file name and writes cache
files beside it). Each file is converted in a child process, so that a crash in xprof's native code
fails that file only. A file passes when xprof returns JSON with a `traceEvents` list, and a
re-encoded file when, besides, xprof's output for it equals its output for the input (the salted
`flow` args aside). What the events say is not judged here: golden tests of our converter do that
with the saved outputs.

For each input, `profkit convert <input> <out> --to chrome` must then write exactly xprof's live
output but for the salted `flow` args: the same bytes once those are taken out (and so the same
JSON).

With BLESS=1, xprof's output for each case's input is saved as xprof.trace_viewer.json in the case
folder, unless the saved file differs only in the `flow` args, which xprof salts per process.
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
    return 0


def without_flow(trace):
    """The trace with the per-process `flow` args removed, for comparisons."""
    for event in trace.get("traceEvents", []):
        if isinstance(event, dict) and isinstance(event.get("args"), dict):
            event["args"].pop("flow", None)
    return trace


FLOW = re.compile(r'"flow": "[^"]*"(, )?')


def text_without_flow(text):
    """xprof's JSON text without its `flow` args, as profkit writes it (see xplane.rs)."""
    out = []
    for line in text.rstrip("\n").split("\n"):
        line = FLOW.sub("", line).replace(", }", "}").replace('"args": {}, ', "")
        out.append(line)
    return "\n".join(out) + "\n"


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
    theirs = text_without_flow(xprof_raw)
    if ours == theirs:
        return True, "profkit writes xprof's bytes (flow args aside)"
    if json.loads(ours) == without_flow(json.loads(xprof_raw)):
        return False, "profkit writes xprof's JSON (flow args aside) but not its bytes"
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
            if without_flow(json.loads(old)) == without_flow(json.loads(raw)):
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
        profkit = os.path.join(args.repo, "target", "debug", "profkit")
        files = []
        for line in listing.stdout.splitlines():
            case, variant, rest = line.split("\t", 2)
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
                if without_flow(json.loads(outputs[case])) != without_flow(json.loads(raw)):
                    ok, message = False, "xprof reads our re-encoding differently from the input"
            if ok:
                passed += 1
                note = bless(os.path.join(cases_dir, case), raw) if blessing and variant == "input" else ""
                print(f"ok   {label}: {message}{note}")
            else:
                failed += 1
                print(f"FAIL {label}: {message}")
            if ok and variant == "input":
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
