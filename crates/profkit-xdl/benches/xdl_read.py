#!/usr/bin/env python3
"""The Python peer of the XDL benchmark: the original reader's script, applied to the same files.

The original reader (on the "XDL Trace" wiki page) reads a data file with `struct.unpack('<I')`
for each length, `trace_pb2.Header` / `trace_pb2.Record.ParseFromString` for each frame, and
`np.frombuffer(col.data, dtype=...).reshape(col.shape)` for each column. `read_file` below is that
loop, ported to Python 3 (`items()` for `iteritems()`, `np.bool_` for `np.bool`) with one change:
the arrays go to a consumer that counts their elements instead of `print`, whose formatting of
large arrays would dominate and measure nothing of the reader. The `trace_pb2` classes are built at
run time from the FileDescriptorSet profkit-xdl exports, so no protoc or generated module is needed.

benches/xdl.rs runs it with --serve and asks for one timed run at a time ("large" or "tiny"),
alternating with its own runs. Standalone it prints the best of --runs runs per data set:

    .oracle/bench/bin/python crates/profkit-xdl/benches/xdl_read.py \
        --descriptor-set target/bench-data/xdl.fds.pb \
        --large target/bench-data/xdl/large --tiny target/bench-data/xdl/tiny --runs 5
"""

import argparse
import gc
import json
import os
import platform
import struct
import sys
import time

import google.protobuf
import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.internal import api_implementation


class TracePb2:
    """Stands in for `xdl.python.proto.trace_pb2`: the classes and enum values the original reader uses."""

    def __init__(self, descriptor_set):
        with open(descriptor_set, "rb") as f:
            fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
        pool = descriptor_pool.DescriptorPool()
        for file in fds.file:
            pool.Add(file)
        self.Header = message_factory.GetMessageClass(pool.FindMessageTypeByName("xdl.proto.Header"))
        self.Record = message_factory.GetMessageClass(pool.FindMessageTypeByName("xdl.proto.Record"))
        for value in pool.FindEnumTypeByName("xdl.proto.Type").values:
            setattr(self, value.name, value.number)


def trace2nptype(trace_pb2, tp):
    if tp == trace_pb2.Int8:
        return np.int8
    elif tp == trace_pb2.Int16:
        return np.int16
    elif tp == trace_pb2.Int32:
        return np.int32
    elif tp == trace_pb2.Int64:
        return np.int64
    elif tp == trace_pb2.Float:
        return np.float32
    elif tp == trace_pb2.Double:
        return np.float64
    elif tp == trace_pb2.Bool:
        return np.bool_
    elif tp == trace_pb2.Byte:
        return np.byte
    else:
        raise RuntimeError("unknown trace data type: {}".format(tp))


class Sink:
    """Receives what the original reader printed; counts records and elements to prove the work was done."""

    def __init__(self):
        self.records = 0
        self.elements = 0

    def column(self, key, array):
        self.elements += array.size


def print_column(trace_pb2, sink, key, col):
    sink.column(key, np.frombuffer(col.data, dtype=trace2nptype(trace_pb2, col.dtype)).reshape(col.shape))


def read_file(trace_pb2, sink, filepath):
    with open(filepath, "rb") as fin:
        sz = struct.unpack("<I", fin.read(4))[0]
        buf = fin.read(sz)
        hdrs = trace_pb2.Header()
        hdrs.ParseFromString(buf)
        "|".join(hdrs.key)
        while True:
            buf = fin.read(4)
            if not buf:
                break
            sz = struct.unpack("<I", buf)[0]
            buf = fin.read(sz)
            record = trace_pb2.Record()
            record.ParseFromString(buf)
            sink.records += 1
            (record.gstep, record.lstep)
            for key, col in dict(zip(hdrs.key, record.column)).items():
                print_column(trace_pb2, sink, key, col)


def data_files(directory):
    """The dataset's data files in index order (the original reader reads one named file at a time)."""
    names = [n for n in os.listdir(directory) if not n.endswith(".meta")]
    return [os.path.join(directory, n) for n in sorted(names, key=lambda n: int(n.rsplit(".", 1)[1]))]


def read_dataset(trace_pb2, directory):
    sink = Sink()
    for path in data_files(directory):
        read_file(trace_pb2, sink, path)
    return sink


def timed(trace_pb2, directory):
    gc.collect()
    start = time.perf_counter()
    read_dataset(trace_pb2, directory)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--descriptor-set", required=True)
    parser.add_argument("--large", required=True)
    parser.add_argument("--tiny", required=True)
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    try:
        trace_pb2 = TracePb2(args.descriptor_set)
        dirs = {"large": args.large, "tiny": args.tiny}
        counts = {}
        for name, directory in dirs.items():
            sink = read_dataset(trace_pb2, directory)
            counts[name] = {"records": sink.records, "elements": sink.elements}
    except Exception as e:  # reported to the Rust side, which skips the peer
        print(json.dumps({"error": repr(e)}), flush=True)
        return 1
    header = {
        "implementation": api_implementation.Type(),
        "protobuf_version": google.protobuf.__version__,
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "counts": counts,
    }
    if args.serve:
        print(json.dumps(header), flush=True)
        for line in sys.stdin:
            name = line.strip()
            if name not in dirs:
                print("nan", flush=True)
                continue
            print(repr(timed(trace_pb2, dirs[name])), flush=True)
        return 0
    for name, directory in dirs.items():
        header[name + "_best_s"] = min(timed(trace_pb2, directory) for _ in range(args.runs))
    print(json.dumps(header, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
