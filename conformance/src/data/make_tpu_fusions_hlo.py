"""Writes tpu_fusions.hlo.pb: an HLO module (`xla.HloProto`) made by hand for the `tpu-fusions`
conformance case, whose fusion `fusion.10` holds instructions of many opcodes, a nested fusion,
constants of several types and sizes, tiled layouts and a memory space, and a tuple root (a
multi-output fusion), so that xprof prints each fused instruction's HLO text.

Run with a Python that has TensorFlow's copy of XLA's protos (`.oracle/tensorflow/bin/python`):
    python make_tpu_fusions_hlo.py conformance/src/data/tpu_fusions.hlo.pb
"""

import struct
import sys

from tensorflow.compiler.xla import xla_data_pb2 as x
from tensorflow.compiler.xla.service import hlo_pb2 as h

F32, S32, BF16, PRED, F64, U8 = x.F32, x.S32, x.BF16, x.PRED, x.F64, x.U8


def shape(t, dims, tiles=None, space=0):
    s = x.ShapeProto(element_type=t, dimensions=dims)
    s.is_dynamic_dimension.extend([False] * len(dims))
    s.layout.minor_to_major.extend(reversed(range(len(dims))))
    s.layout.tail_padding_alignment_in_elements = 1
    for tile in tiles or []:
        s.layout.tiles.add(dimensions=tile)
    s.layout.memory_space = space
    return s


def tuple_shape(*shapes):
    s = x.ShapeProto(element_type=x.TUPLE)
    for e in shapes:
        s.tuple_shapes.add().CopyFrom(e)
    return s


class Computation:
    def __init__(self, cid, name):
        self.proto = h.HloComputationProto(id=cid, name=name)

    def add(self, iid, name, opcode, shp, operands=(), **fields):
        i = self.proto.instructions.add(id=iid, name=name, opcode=opcode)
        i.shape.CopyFrom(shp)
        i.operand_ids.extend(operands)
        for k, v in fields.items():
            if k == "literal":
                i.literal.CopyFrom(v)
            elif k == "metadata":
                i.metadata.CopyFrom(v)
            elif k == "slices":
                for start, limit, stride in v:
                    i.slice_dimensions.add(start=start, limit=limit, stride=stride)
            elif isinstance(v, list):
                getattr(i, k).extend(v)
            else:
                setattr(i, k, v)
        return i

    def finish(self, root, params):
        self.proto.root_id = root.id
        for p in params:
            self.proto.program_shape.parameters.add().CopyFrom(p.shape)
            self.proto.program_shape.parameter_names.append(p.name)
        self.proto.program_shape.result.CopyFrom(root.shape)
        return self.proto


def literal(t, dims, **values):
    lit = x.LiteralProto()
    lit.shape.CopyFrom(shape(t, dims))
    for k, v in values.items():
        if isinstance(v, (bytes, bytearray)):
            setattr(lit, k, bytes(v))
        else:
            getattr(lit, k).extend(v)
    return lit


def bf16(v):
    return struct.pack("<f", v)[2:]


def main(out):
    T = [[8, 128]]
    a = shape(F32, [4, 8], T)

    inner = Computation(1, "fused_inner")
    ip = inner.add(101, "param_0.3", "parameter", a, parameter_number=0)
    neg = inner.add(102, "negate.7", "negate", a, [101])
    ex = inner.add(103, "exponential.2", "exponential", a, [102],
                   metadata=x.OpMetadata(op_name="jit(g)/exp", op_type="Exp"))
    inner_proto = inner.finish(ex, [ip])

    outer = Computation(2, "fused_outer")
    p0 = outer.add(201, "param_0.4", "parameter", a, parameter_number=0)
    p1 = outer.add(202, "param_1.2", "parameter", shape(S32, []), parameter_number=1)
    outer.add(203, "constant.20", "constant", shape(BF16, [], [[128]]),
              literal=literal(BF16, [], bf16s=bf16(0.1)))
    outer.add(204, "constant.21", "constant", shape(S32, [3]),
              literal=literal(S32, [3], s32s=[1, -2, 3]))
    outer.add(205, "constant.22", "constant", shape(F32, [16]),
              literal=literal(F32, [16], f32s=[float(i) for i in range(16)]))
    outer.add(206, "constant.23", "constant", shape(PRED, []),
              literal=literal(PRED, [], preds=[True]))
    outer.add(207, "constant.24", "constant", shape(F64, []),
              literal=literal(F64, [], f64s=[1.0 / 3.0]))
    outer.add(208, "constant.25", "constant", shape(F32, []),
              literal=literal(F32, [], f32s=[1e-7]))
    outer.add(209, "iota.3", "iota", shape(S32, [4, 8]), dimensions=[1])
    outer.add(210, "transpose.4", "transpose", shape(F32, [8, 4]), [201], dimensions=[1, 0])
    outer.add(211, "slice.5", "slice", shape(F32, [2, 8], T), [201],
              slices=[(0, 4, 2), (0, 8, 1)])
    outer.add(212, "dynamic-slice.6", "dynamic-slice", shape(F32, [1, 8], T), [201, 202, 202],
              dynamic_slice_sizes=[1, 8])
    outer.add(213, "concatenate.7", "concatenate", shape(F32, [6, 8], T), [201, 211],
              dimensions=[0])
    outer.add(214, "reshape.8", "reshape", shape(F32, [32]), [201])
    outer.add(215, "compare.9", "compare", shape(PRED, [4, 8]), [201, 201],
              comparison_direction="LT")
    outer.add(216, "select.10", "select", a, [215, 201, 201])
    outer.add(217, "convert.11", "convert", shape(BF16, [4, 8], T, space=1), [201])
    outer.add(218, "reduce-precision.12", "reduce-precision", a, [201],
              exponent_bits=5, mantissa_bits=10)
    outer.add(219, "fusion.13", "fusion", a, [201], fusion_kind="kLoop",
              called_computation_ids=[1])
    outer.add(220, "broadcast.14", "broadcast", shape(BF16, [4, 8]), [203], dimensions=[])
    outer.add(221, "maximum.15", "maximum", a, [219, 216],
              metadata=x.OpMetadata(op_name="jit(g)/max", deduplicated_name="maximum.1"))
    outer.add(222, "broadcast.16", "broadcast", shape(S32, [4, 3]), [204], dimensions=[1])
    outer.add(223, "convert.17", "convert", shape(F32, [4, 8]), [209])
    outer.add(224, "add.18", "add", a, [223, 221])
    root = outer.add(225, "tuple.19", "tuple",
                     tuple_shape(a, shape(F32, [8, 4]), shape(BF16, [4, 8], T, space=1),
                                 shape(F32, [32]), shape(F32, [6, 8], T), shape(BF16, [4, 8]),
                                 shape(S32, [4, 3]), shape(F32, [1, 8], T), a),
                     [224, 210, 217, 214, 213, 220, 222, 212, 218])
    outer_proto = outer.finish(root, [p0, p1])

    main = Computation(3, "main.20")
    m0 = main.add(301, "p.0", "parameter", a, parameter_number=0)
    m1 = main.add(302, "p.1", "parameter", shape(S32, []), parameter_number=1)
    f = main.add(303, "fusion.10", "fusion", root.shape, [301, 302], fusion_kind="kLoop",
                 called_computation_ids=[2])
    main_proto = main.finish(f, [m0, m1])

    module = h.HloModuleProto(name="jit_g", id=27, entry_computation_id=3,
                              entry_computation_name="main.20")
    for c in (inner_proto, outer_proto, main_proto):
        module.computations.add().CopyFrom(c)
    module.host_program_shape.CopyFrom(main_proto.program_shape)
    proto = h.HloProto()
    proto.hlo_module.CopyFrom(module)
    with open(out, "wb") as fh:
        fh.write(proto.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
