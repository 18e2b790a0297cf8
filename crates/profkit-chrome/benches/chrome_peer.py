#!/usr/bin/env python3
"""The Python peers of the Chrome import benchmark (benches/chrome_import.rs runs them).

    chrome_peer.py json.load FILE   json.load of the file (gzip.open for .gz): what most scripts do
    chrome_peer.py hta FILE         HolisticTraceAnalysis's parse of the file (its default backend)

Prints `secs=... cpu=... maxrss=... events=...` (cpu: the process's CPU time; maxrss: the process's peak resident set, bytes).
"""

import gzip
import json
import logging
import resource
import sys
import time


def main():
    what, path = sys.argv[1], sys.argv[2]
    start = time.perf_counter()
    cpu_start = time.process_time()
    if what == "json.load":
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            trace = json.load(f)
        events = len(trace["traceEvents"])
    elif what == "hta":
        logging.disable(logging.WARNING)
        from hta.common.trace import parse_trace_file

        _, df, _ = parse_trace_file(path)
        events = len(df)
    else:
        raise SystemExit(f"unknown peer {what}")
    secs = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"secs={secs:.3f} cpu={cpu:.3f} maxrss={maxrss} events={events}")


if __name__ == "__main__":
    main()
