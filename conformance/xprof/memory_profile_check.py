"""Checks profkit_xprof::tools::memory_profile against the live xprof 2.24.2 on every case of
conformance/xprof-tools/memory_profile/ (see its README).

    .oracle/xprof/bin/python conformance/xprof/memory_profile_check.py [--case TEXT] [--bin PATH]
    BLESS=1 ... memory_profile_check.py     also saves xprof's output in each case folder

For each case, xprof's `xspace_to_tool_data([path], "memory_profile", {"use_saved_result": False})`
runs in a child process on a copy of the input named `host.xplane.pb` in a folder of its own, and
our output comes from `cargo run -p profkit-xprof --example xprof_tool -- memory_profile INPUT`
(or the binary given with --bin). They must be the same profile as `same_profile` says: byte for
byte but for what xprof does not keep from run to run (the order of the allocators in
`memoryProfilePerAllocator`, and which snapshot stands for several equal allocations active at the
peak). Each case's saved output (`xprof.memory_profile.json`, gzipped as `.json.gz` above 64 KB)
must pass the same comparison with the live output, so that a change of xprof shows here.

With BLESS=1 the live output is saved, unless the saved one already passes (xprof's run-to-run
differences do not rewrite the files). `check(repo, bless, case)` is what `main` runs, for
conformance/xprof/check.py to call.
"""

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD_TIMEOUT_S = 300
GZIP_ABOVE = 64 * 1024
CASES = Path("conformance/xprof-tools/memory_profile")


def run_xprof(src, out):
    """In the child: xprof's memory_profile tool on the XSpace at `src`, its text written to `out`
    (`<None>` when it returns no data)."""
    from xprof.convert import raw_to_tool_data as r

    data = Path(src).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    folder = tempfile.mkdtemp()
    try:
        path = os.path.join(folder, "host.xplane.pb")
        Path(path).write_bytes(data)
        result, _content_type = r.xspace_to_tool_data([path], "memory_profile", {"use_saved_result": False})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if result is None:
        result = "<None>"
    if isinstance(result, bytes):
        result = result.decode("utf-8")
    Path(out).write_text(result, encoding="utf-8")
    return 0


def case_input(repo, folder):
    own = folder / "input.xplane.pb"
    if own.exists():
        return own
    return repo / "conformance" / (folder / "input.path").read_text().strip()


def saved_output(folder):
    plain = folder / "xprof.memory_profile.json"
    if plain.exists():
        return plain.read_text(encoding="utf-8")
    gz = folder / "xprof.memory_profile.json.gz"
    if gz.exists():
        return gzip.decompress(gz.read_bytes()).decode("utf-8")
    return None


def save_output(folder, text):
    for name in ("xprof.memory_profile.json", "xprof.memory_profile.json.gz"):
        (folder / name).unlink(missing_ok=True)
    data = text.encode("utf-8")
    if len(data) > GZIP_ABOVE:
        (folder / "xprof.memory_profile.json.gz").write_bytes(gzip.compress(data, mtime=0))
    else:
        (folder / "xprof.memory_profile.json").write_bytes(data)


def value_end(text, i):
    """Where the JSON value starting at text[i] ends (xprof's text has no spaces)."""
    depth, in_string, start = 0, False, i
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
                if depth == 0:
                    return i + 1
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            if depth == 0:
                return i
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == "," and depth == 0 and i > start:
            return i
        i += 1
    return i


def members(text):
    """The members of the JSON object `text`, as (key, raw value text), in order."""
    assert text[0] == "{", text[:80]
    out, i = [], 1
    if text[i] == "}":
        return out
    while True:
        key_end = value_end(text, i)
        key = json.loads(text[i:key_end])
        end = value_end(text, key_end + 1)
        out.append((key, text[key_end + 1:end]))
        if text[end] == "}":
            return out
        i = end + 1


def items(text):
    out, i = [], 1
    while text[i] != "]":
        end = value_end(text, i)
        out.append(text[i:end])
        i = end + 1 if text[end] == "," else end
    return out


def same_profile(ours, xprof):
    """None when `ours` is xprof's memory profile text as far as xprof's own output is fixed (see
    the module documentation and same_profile in crates/profkit-xprof/tests/memory_profile.rs,
    which this mirrors), else what differs."""
    if not ours or not xprof or ours == "<None>" or xprof == "<None>":
        return None if ours == xprof else f"ours {ours[:80]!r}, xprof {xprof[:80]!r}"
    o, x = members(ours), members(xprof)
    if [k for k, _ in o] != [k for k, _ in x]:
        return f"members {[k for k, _ in o]} vs {[k for k, _ in x]}"
    for (key, ov), (_, xv) in zip(o, x):
        if key != "memoryProfilePerAllocator":
            if ov != xv:
                return f"{key} differs: ours {ov[:200]} xprof {xv[:200]}"
            continue
        oa, xa = dict(members(ov)), dict(members(xv))
        if sorted(oa) != sorted(xa):
            return f"allocators {sorted(oa)} vs {sorted(xa)}"
        for name in sorted(oa):
            problem = same_allocator(oa[name], xa[name])
            if problem:
                return f"{name}: {problem}"
    return None


def same_allocator(ours, xprof):
    o, x = members(ours), members(xprof)
    if [k for k, _ in o] != [k for k, _ in x]:
        return f"members {[k for k, _ in o]} vs {[k for k, _ in x]}"
    snapshots = None
    for (key, ov), (_, xv) in zip(o, x):
        if key == "memoryProfileSnapshots":
            snapshots = items(ov), items(xv)
        elif ov != xv:
            return f"{key} differs: ours {ov[:200]} xprof {xv[:200]}"
    os_, xs = snapshots
    if len(os_) != len(xs):
        return f"{len(os_)} snapshots vs {len(xs)}"
    whole = json.loads(ours)
    peak_time = int(whole["profileSummary"]["peakStatsTimePs"])
    pointed = 0
    for a in whole["activeAllocations"]:
        index = int(a["snapshotIndex"])
        if index < 0:
            continue
        pointed += 1
        ot, xt = os_[index], xs[index]
        if a["numOccurrences"] == "1":
            if ot != xt:
                return f"snapshot {index}: ours {ot} xprof {xt}"
            continue
        ov, xv = json.loads(ot), json.loads(xt)
        om, xm = dict(ov["activityMetadata"]), dict(xv["activityMetadata"])
        om.pop("address")
        xm.pop("address")
        if om != xm or om["memoryActivity"] != "ALLOCATION" or int(ov["timeOffsetPs"]) > peak_time:
            return f"merged snapshot {index}: ours {ot} xprof {xt}"
    if pointed != len(os_):
        return f"{pointed} allocations point at {len(os_)} snapshots"
    return None


def our_output(repo, binary, path):
    cmd = [binary] if binary else ["cargo", "run", "-q", "-p", "profkit-xprof", "--example", "xprof_tool", "--"]
    proc = subprocess.run(cmd + ["memory_profile", str(path)], cwd=repo, capture_output=True, check=True)
    return proc.stdout.decode("utf-8")


def check(repo, bless=False, case=None, binary=None):
    """Runs every case (those whose name contains `case`); returns the number of failures."""
    repo = Path(repo)
    if not binary:
        subprocess.run(["cargo", "build", "-q", "-p", "profkit-xprof", "--example", "xprof_tool"], cwd=repo,
                       check=True)
        target = Path(os.environ.get("CARGO_TARGET_DIR", repo / "target"))
        binary = str(target / "debug" / "examples" / "xprof_tool")
    failures = 0
    folders = sorted(p for p in (repo / CASES).iterdir() if p.is_dir())
    for folder in folders:
        if case and case not in folder.name:
            continue
        src = case_input(repo, folder)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "xprof.json"
            proc = subprocess.run([sys.executable, __file__, "--child", str(src), str(out)],
                                  capture_output=True, timeout=CHILD_TIMEOUT_S)
            if proc.returncode != 0 or not out.exists():
                print(f"FAIL {folder.name}: xprof failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
                failures += 1
                continue
            live = out.read_text(encoding="utf-8")
        ours = our_output(repo, binary, src)
        saved = saved_output(folder)
        problems = []
        problem = same_profile(ours, live)
        if problem:
            problems.append(f"ours vs live xprof: {problem}")
        if bless:
            if saved is None or same_profile(saved, live):
                save_output(folder, live)
                print(f"saved {folder.name}")
        elif saved is None:
            problems.append("no saved output (BLESS=1 to save it)")
        else:
            problem = same_profile(saved, live)
            if problem:
                problems.append(f"saved vs live xprof: {problem}")
        if problems:
            failures += 1
            print(f"FAIL {folder.name}: " + "; ".join(problems))
        else:
            print(f"ok   {folder.name}")
    return failures


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        return run_xprof(sys.argv[2], sys.argv[3])
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", help="only the cases whose name contains this")
    parser.add_argument("--bin", help="the xprof_tool example binary (built with cargo otherwise)")
    args = parser.parse_args()
    repo = Path(__file__).resolve().parents[2]
    failures = check(repo, bless=bool(os.environ.get("BLESS")), case=args.case, binary=args.bin)
    if failures:
        print(f"{failures} memory_profile case(s) differ from xprof")
        return 1
    print("memory_profile: every case is xprof's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
