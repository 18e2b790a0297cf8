#!/usr/bin/env python3
"""The Python protobuf (upb) peer of the XSpace benchmark.

Loads the XSpace schema from the FileDescriptorSet profkit exports (so no generated _pb2 module
or protoc is needed), checks that the protobuf wheel really runs on upb, then times
`XSpace.FromString` on the benchmark file and `SerializeToString` of the parsed message, each
run from memory with the previous result freed before the clock starts (as the Rust side times
decode without the drop).

benches/xspace.rs runs it with --serve and asks for one run at a time, alternating with its own
runs so that both sides see the same machine load. Standalone, it prints the best and median of
--runs runs as JSON:

    .oracle/xprof/bin/python crates/profkit-xplane/benches/upb_parse.py \
        --descriptor-set target/bench-data/xplane.fds.pb \
        --data target/bench-data/xspace_1m.xplane.pb --runs 10
"""

import argparse
import gc
import json
import platform
import statistics
import sys
import time

import google.protobuf
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.internal import api_implementation


class Peer:
    """The XSpace class loaded from the descriptor set, the file's bytes and one parsed copy."""

    def __init__(self, descriptor_set, data):
        with open(descriptor_set, "rb") as f:
            fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
        pool = descriptor_pool.DescriptorPool()
        for file in fds.file:
            pool.Add(file)
        # Generated _pb2 modules load their schema into a pool the same way at import time.
        self.xspace = message_factory.GetMessageClass(
            pool.FindMessageTypeByName("tensorflow.profiler.XSpace")
        )
        with open(data, "rb") as f:
            self.data = f.read()
        self.parsed = self.xspace.FromString(self.data)
        self.serialized = None

    def header(self):
        return {
            "implementation": api_implementation.Type(),
            "protobuf_version": google.protobuf.__version__,
            "python_version": platform.python_version(),
            "bytes": len(self.data),
            # Proves the parse saw the same events the Rust side did.
            "events": sum(len(line.events) for plane in self.parsed.planes for line in plane.lines),
            "serialized_bytes": len(self.parsed.SerializeToString()),
        }

    def time_parse(self):
        """(wall, thread CPU) seconds for one FromString; the previous result is freed first."""
        self.parsed = None
        gc.collect()
        start, cpu = time.perf_counter(), time.thread_time()
        self.parsed = self.xspace.FromString(self.data)
        return time.perf_counter() - start, time.thread_time() - cpu

    def time_serialize(self):
        """(wall, thread CPU) seconds for one SerializeToString of the parsed message."""
        self.serialized = None
        gc.collect()
        start, cpu = time.perf_counter(), time.thread_time()
        self.serialized = self.parsed.SerializeToString()
        return time.perf_counter() - start, time.thread_time() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--descriptor-set", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--serve",
        action="store_true",
        help="print the header as JSON, then answer each stdin line ('parse' or 'serialize') with"
        " the wall and thread CPU seconds of one run",
    )
    args = parser.parse_args()

    implementation = api_implementation.Type()
    if implementation != "upb":
        print(json.dumps({"error": f"protobuf runs on {implementation!r}, not upb"}), flush=True)
        return 2

    peer = Peer(args.descriptor_set, args.data)
    header = peer.header()
    if args.serve:
        print(json.dumps(header), flush=True)
        for line in sys.stdin:
            command = line.strip()
            if command == "parse":
                print(*peer.time_parse(), flush=True)
            elif command == "serialize":
                print(*peer.time_serialize(), flush=True)
            else:
                print(json.dumps({"error": f"unknown command {command!r}"}), flush=True)
                return 2
        return 0

    parse = [peer.time_parse()[0] for _ in range(args.runs)]
    serialize = [peer.time_serialize()[0] for _ in range(args.runs)]
    header.update(
        runs=args.runs,
        parse_best_s=min(parse),
        parse_median_s=statistics.median(parse),
        serialize_best_s=min(serialize),
        serialize_median_s=statistics.median(serialize),
    )
    print(json.dumps(header, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
