"""Checks proto/xla/xla/service/hlo_profile_subset.proto, the part of XLA's HLO schema profkit
decodes, against XLA's own descriptors as TensorFlow ships them (`tensorflow.compiler.xla`): every
field the subset declares must be XLA's field of that message, with its number, label and type
(an XLA enum may be declared `int32`, its wire type).

    .oracle/tensorflow/bin/python conformance/xprof/hlo_subset_check.py REPO
"""

import re
import sys
from pathlib import Path

from google.protobuf.descriptor import FieldDescriptor as F
from tensorflow.compiler.xla.service import hlo_pb2

SCALARS = {F.TYPE_INT64: "int64", F.TYPE_INT32: "int32", F.TYPE_STRING: "string", F.TYPE_BOOL: "bool",
           F.TYPE_BYTES: "bytes", F.TYPE_UINT32: "uint32", F.TYPE_UINT64: "uint64",
           F.TYPE_FLOAT: "float", F.TYPE_DOUBLE: "double"}


def main():
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    text = (repo / "proto/xla/xla/service/hlo_profile_subset.proto").read_text()
    text = re.sub(r"//.*", "", text)
    pool = hlo_pb2.DESCRIPTOR.pool
    stack, checked, bad = [], 0, []
    for line in (l.strip() for l in text.splitlines()):
        opened = re.match(r"(message|enum) (\w+) \{(\})?", line)
        if opened:
            kind, name, closed = opened.groups()
            # An empty message (`message X {}`, declared for a field's type only) opens nothing.
            if not closed:
                stack.append((kind, name))
            continue
        if line == "}":
            stack.pop()
            continue
        field = re.match(r"(repeated )?([\w.]+) (\w+) = (\d+);", line)
        if not field or not stack or stack[-1][0] == "enum":
            continue
        repeated, kind, name, number = field.groups()
        message = "xla." + ".".join(s[1] for s in stack)
        theirs = pool.FindMessageTypeByName(message).fields_by_name.get(name)
        checked += 1
        if theirs is None:
            bad.append(f"{message}.{name}: not XLA's")
            continue
        if theirs.type == F.TYPE_MESSAGE:
            same_type = theirs.message_type.name == kind.split(".")[-1]
        elif theirs.type == F.TYPE_ENUM:
            same_type = kind in ("int32", theirs.enum_type.name)
        else:
            same_type = SCALARS.get(theirs.type) == kind
        if theirs.number != int(number) or bool(repeated) != theirs.is_repeated or not same_type:
            bad.append(f"{message}.{name}: XLA's is number {theirs.number}, type {theirs.type}, "
                       f"{'repeated' if theirs.is_repeated else 'singular'}")
    for line in bad:
        print(line)
    print(f"{checked} fields checked against XLA's descriptors, {len(bad)} differ")
    return 1 if bad or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
