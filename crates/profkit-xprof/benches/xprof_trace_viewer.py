"""The peer of the benches (trace_viewer.rs, xprof_tools.rs, memory_profile.rs): xprof 2.24.2's
own tool (the trace_viewer conversion by default) on one file.

Usage: python xprof_trace_viewer.py XPLANE OUT [TOOL] (TOOL defaults to trace_viewer; the
xprof_tools bench passes its tools). Copies XPLANE into a fresh folder as
bench.xplane.pb (xprof takes the host from the name and writes caches beside it), imports xprof,
then times `xspace_to_tool_data([path], TOOL, ...)` and the write of its JSON to OUT,
and prints {"seconds", "vmhwm_kb"} as JSON: the wall time of conversion and write, and the
process's peak resident set (VmHWM), import included.
"""

import json
import os
import shutil
import sys
import tempfile
import time


def vmhwm_kb():
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def main():
    src, out = sys.argv[1], sys.argv[2]
    tool = sys.argv[3] if len(sys.argv) > 3 else "trace_viewer"
    work = tempfile.mkdtemp(prefix="xprof-bench-")
    try:
        path = os.path.join(work, "bench.xplane.pb")
        shutil.copy(src, path)
        from xprof.convert import raw_to_tool_data

        start = time.monotonic()
        data, _ = raw_to_tool_data.xspace_to_tool_data(
            [path], tool, {"use_saved_result": False}
        )
        if data is None:
            print(json.dumps({"error": "xprof returned None"}))
            return 1
        if isinstance(data, str):
            data = data.encode("utf-8")
        with open(out, "wb") as f:
            f.write(data)
        seconds = time.monotonic() - start
        print(json.dumps({"seconds": seconds, "vmhwm_kb": vmhwm_kb()}))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
