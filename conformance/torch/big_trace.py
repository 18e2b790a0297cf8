"""Writes a large Kineto trace for the torch table's benchmark (docs/performance.md): the complete
events and instants of `transformer/trace.json.gz` repeated 125 times one after the other (each
copy's `ProfilerStep#N` renumbered), about 170 MB and 540,000 events, to the path given.

Usage: python3 conformance/torch/big_trace.py /tmp/big.json
"""

import gzip
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
COPIES = 125


def main():
    out_path = sys.argv[1]
    trace = json.loads(gzip.open(HERE / "transformer/trace.json.gz").read())
    events = trace["traceEvents"]
    kept = [e for e in events if e.get("ph") in ("X", "i") and e.get("cat") != "Trace"]
    first = min(e["ts"] for e in kept)
    span = max(e["ts"] + e.get("dur", 0) for e in kept) - first
    with open(out_path, "w") as out:
        out.write(
            '{"schemaVersion": 1, "deviceProperties": [], "profile_memory": 1, "with_flops": 1, '
            '"record_shapes": 1, "with_stack": 1, "traceEvents": [\n'
        )
        sep = ""
        for k in range(COPIES):
            shift = round(k * (span + 100), 3)
            for e in kept:
                copy = dict(e, ts=round(e["ts"] + shift, 3))
                if copy.get("cat") == "user_annotation" and copy["name"].startswith("ProfilerStep#"):
                    copy["name"] = "ProfilerStep#%d" % (k * 2 + int(e["name"][13:]))
                out.write(sep + json.dumps(copy))
                sep = ",\n"
        whole = next(e for e in events if e.get("cat") == "Trace")
        whole["dur"] = COPIES * (span + 100)
        out.write(sep + json.dumps(whole) + "\n]}\n")


if __name__ == "__main__":
    main()
