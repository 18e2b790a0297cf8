#!/usr/bin/env python3
"""The Python peer of the Poplar benchmark: `json.load` of the same graph profile.

This is how Graphcore's own scripts and most users read these files: `json.load(open(path))`,
which decodes the whole text and builds Python objects for every number.

benches/poplar.rs runs it with --serve and asks for one timed run at a time ("run"), alternating
with its own runs, then for the process's peak resident set ("rss"). Standalone it prints the best
of --runs runs:

    python3 crates/profkit-poplar/benches/json_load.py --data target/bench-data/poplar_graph_16ipu.json --runs 3
"""

import argparse
import gc
import json
import platform
import resource
import sys
import time


def load(path):
    with open(path) as f:
        return json.load(f)


def counts(profile):
    """Figures that prove the whole file was read, to set against the Rust side's."""
    return {
        "programs": len(profile["programs"]),
        "tiles": int(profile["target"]["numTiles"]),
        "total_including_gaps": int(sum(profile["memory"]["byTile"]["totalIncludingGaps"])),
    }


def timed(path):
    gc.collect()
    wall = time.perf_counter()
    cpu = time.thread_time()
    profile = load(path)
    cpu = time.thread_time() - cpu
    wall = time.perf_counter() - wall
    del profile
    gc.collect()
    return wall, cpu


def header(path):
    return {
        "python_version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "counts": counts(load(path)),
    }


def peak_rss_bytes():
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--serve", action="store_true")
    args = parser.parse_args()
    try:
        head = header(args.data)
    except Exception as e:  # reported to the bench, which carries on without the peer
        print(json.dumps({"error": repr(e)}), flush=True)
        return 1
    if args.serve:
        print(json.dumps(head), flush=True)
        for line in sys.stdin:
            command = line.strip()
            if command == "run":
                wall, cpu = timed(args.data)
                print(json.dumps({"wall": wall, "cpu": cpu}), flush=True)
            elif command == "rss":
                print(json.dumps({"peak_rss": peak_rss_bytes()}), flush=True)
            else:
                print(json.dumps({"error": "unknown command " + command}), flush=True)
        return 0
    runs = [timed(args.data) for _ in range(args.runs)]
    best = min(runs)
    print(json.dumps({**head, "best_wall": best[0], "best_cpu": best[1], "peak_rss": peak_rss_bytes()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
