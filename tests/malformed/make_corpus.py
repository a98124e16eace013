#!/usr/bin/python3
"""make_corpus.py: writes the ONNX loader's test fixtures into this folder.

Valid fixtures (ok_*.onnx, ok_*.pb, ok_external.bin) that tests/unit/test_onnx.c
loads and compares value by value with the numbers written here; the
frontend's fixtures (cycle.onnx, missing_input.onnx, unknown_op.onnx: valid
protobuf that the loader must accept); and the malformed corpus, one file per
case, listed in MANIFEST as `file expected_code substring-of-message`.

Run with a Python that has onnx (1.12 or later) and numpy:
    /usr/bin/python3 tests/malformed/make_corpus.py
The output is deterministic; the generated files are committed.
"""
import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = []


def write(name, data):
    if not isinstance(data, (bytes, bytearray)):
        data = data.SerializeToString()
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    return data


def bad(name, data, code, substring):
    """A malformed case: the loader must fail with |code| and |substring|."""
    write(name, data)
    MANIFEST.append((name, code, substring))


def model(graph, opsets=(("", 13),), ir_version=8):
    m = helper.make_model(graph, producer_name="make_corpus",
                          opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = ir_version
    return m


def typed(name, dtype, dims, field, values):
    """A TensorProto whose data is in the typed field |field|."""
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    getattr(t, field).extend(values)
    return t


def raw(name, array, dtype=None):
    t = numpy_helper.from_array(np.array(array, order="C"), name)
    if dtype is not None:
        t.data_type = dtype
    return t


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def one_init_model(init):
    """A model whose single Identity node reads the initializer |init|."""
    g = helper.make_graph([helper.make_node("Identity", [init.name], ["y"], name="id0")],
                          "g", [], [vi("y", TensorProto.FLOAT, None)], [init])
    return model(g)


# --- wire-format helpers (for cases the protobuf library will not build) ---

def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_len(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def field_varint(num, v):
    return varint(num << 3 | 0) + varint(v)


# Field numbers from onnx.proto.
MODEL_GRAPH, GRAPH_NODE, NODE_ATTR, ATTR_G = 7, 1, 5, 6
NODE_OP_TYPE, ATTR_NAME, ATTR_TYPE = 4, 1, 20


def model_with_graph_bytes(graph_bytes):
    head = model(helper.make_graph([], "g", [], [])).SerializeToString()
    m = onnx.ModelProto()
    m.ParseFromString(head)
    m.ClearField("graph")
    return m.SerializeToString() + field_len(MODEL_GRAPH, graph_bytes)


# ---------------------------------------------------------------- valid ones

def make_ok_initializers():
    inits = [
        raw("w_f32_raw", np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1),
        typed("w_f32_typed", TensorProto.FLOAT, [3], "float_data", [1.5, -2.25, 3.0]),
        typed("w_f64", TensorProto.DOUBLE, [2], "double_data", [0.1, -1e300]),
        raw("w_f64_raw", np.arange(4, dtype=np.float64).reshape(2, 2) / 3),
        typed("w_i64", TensorProto.INT64, [4], "int64_data", [-(2**62), -1, 0, 2**62 + 5]),
        raw("w_i32_raw", np.array([[-7, 8], [2**31 - 1, -(2**31)]], dtype=np.int32)),
        typed("w_i8", TensorProto.INT8, [4], "int32_data", [-128, -1, 0, 127]),
        raw("w_u8_raw", np.array([0, 1, 127, 128, 255], dtype=np.uint8)),
        raw("w_i16_raw", np.array([-32768, 5, 32767], dtype=np.int16)),
        typed("w_u16", TensorProto.UINT16, [3], "int32_data", [0, 1, 65535]),
        typed("w_bool", TensorProto.BOOL, [4], "int32_data", [1, 0, 0, 1]),
        typed("w_f16", TensorProto.FLOAT16, [3], "int32_data",
              [int(v) for v in np.array([1.0, -2.0, 0.5], dtype=np.float16).view(np.uint16)]),
        typed("w_bf16", TensorProto.BFLOAT16, [2], "int32_data", [0x3F80, 0xC040]),
        typed("w_u32", TensorProto.UINT32, [2], "uint64_data", [0, 4294967295]),
        raw("w_u64_raw", np.array([1, 2**64 - 1], dtype=np.uint64)),
        typed("w_u64", TensorProto.UINT64, [1], "uint64_data", [2**63 + 1]),
        typed("w_str", TensorProto.STRING, [3], "string_data", [b"a", b"", b"x\x00y"]),
        typed("w_empty", TensorProto.FLOAT, [0, 3], "float_data", []),
        raw("w_scalar", np.array(42, dtype=np.int64)),
        raw("w_big", np.arange(64, dtype=np.float32) * 0.25),
        raw("w_f16_raw", np.array([1.0, -2.0], dtype=np.float16)),
        raw("w_bool_raw", np.array([True, False, True], dtype=np.bool_)),
    ]
    attrs = helper.make_node(
        "CustomAttrs", ["X"], ["Z"], name="attrs0", domain="test.domain",
        alpha=0.25, axis=-2, mode="nearest", scales=[1.0, 2.5], pads=[0, 1, -1],
        names=["p", "qq"],
        value=helper.make_tensor("tv", TensorProto.INT64, [2], [3, 4]),
        vals=[helper.make_tensor("t0", TensorProto.FLOAT, [1], [7.0]),
              helper.make_tensor("t1", TensorProto.INT32, [2], [1, 2])])
    old = helper.make_attribute("old_i", 5)
    old.ClearField("type")  # IR version 1 style: the type is inferred from the field
    attrs.attribute.append(old)
    empty = onnx.AttributeProto()
    empty.name = "empty_ints"
    empty.type = onnx.AttributeProto.INTS
    attrs.attribute.append(empty)
    nodes = [helper.make_node("Add", ["X", "w_f32_raw"], ["Y"], name="add0"), attrs]
    g = helper.make_graph(nodes, "main", [vi("X", TensorProto.FLOAT, [2, 3])],
                          [vi("Y", TensorProto.FLOAT, [2, 3])], inits,
                          value_info=[vi("Z", TensorProto.FLOAT, None)])
    m = model(g, opsets=(("", 13), ("test.domain", 2)))
    m.producer_version = "1.0"
    m.doc_string = "loader fixture"
    return write("ok_initializers.onnx", m)


def make_ok_external():
    a = np.array([[1, 2], [3, 4]], dtype=np.float32)
    b = np.array([10, 20, 30], dtype=np.int64)
    k = np.array([7, -7], dtype=np.int32)
    c = np.array([5.5, 6.5], dtype=np.float32)
    blob = bytearray(136)
    blob[0:16] = a.tobytes()
    blob[64:88] = b.tobytes()
    blob[96:104] = k.tobytes()
    blob[128:136] = c.tobytes()
    write("ok_external.bin", bytes(blob))

    def ext(name, dtype, dims, **kv):
        t = TensorProto()
        t.name = name
        t.data_type = dtype
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        for key, value in kv.items():
            e = t.external_data.add()
            e.key = key
            e.value = value
        return t

    inits = [ext("ext_a", TensorProto.FLOAT, [2, 2], location="ok_external.bin", offset="0",
                 length="16"),
             ext("ext_b", TensorProto.INT64, [3], location="ok_external.bin", offset="64",
                 length="24", checksum="ignored"),
             ext("ext_c", TensorProto.FLOAT, [2], location="ok_external.bin", offset="128")]
    const = helper.make_node("Constant", [], ["k"], name="const0")
    const.attribute.append(helper.make_attribute(
        "value", ext("ext_k", TensorProto.INT32, [2], location="ok_external.bin",
                     offset="96", length="8")))
    nodes = [const, helper.make_node("Add", ["ext_a", "ext_a"], ["y"], name="add0")]
    g = helper.make_graph(nodes, "ext", [], [vi("y", TensorProto.FLOAT, [2, 2])], inits)
    write("ok_external.onnx", model(g))


def branch(name, init_name, init_values, op):
    inner = helper.make_node(op, ["x", init_name], [name + "_out"], name=name + "_node")
    return helper.make_graph([inner], name, [],
                             [vi(name + "_out", TensorProto.FLOAT, [2])],
                             [raw(init_name, np.array(init_values, dtype=np.float32))])


def make_ok_subgraph():
    then_g = branch("then", "then_w", [1, 2], "Add")
    else_g = branch("else", "else_w", [3, 4], "Sub")
    # then_branch holds a second If: subgraphs two levels deep.
    inner_if = helper.make_node("If", ["cond"], ["then_out2"], name="if1",
                                then_branch=branch("then2", "then2_w", [5, 6], "Mul"),
                                else_branch=branch("else2", "else2_w", [7, 8], "Div"))
    then_g.node.append(inner_if)
    if0 = helper.make_node("If", ["cond"], ["y"], name="if0", then_branch=then_g,
                           else_branch=else_g)
    multi = helper.make_node("Branches", ["x"], ["z"], name="multi0", domain="test.domain",
                             bodies=[branch("b0", "b0_w", [9, 10], "Add"),
                                     branch("b1", "b1_w", [11, 12], "Add")])
    g = helper.make_graph([if0, multi], "main",
                          [vi("cond", TensorProto.BOOL, []), vi("x", TensorProto.FLOAT, [2])],
                          [vi("y", TensorProto.FLOAT, [2]), vi("z", TensorProto.FLOAT, [2])])
    return write("ok_subgraph.onnx", model(g, opsets=(("", 13), ("test.domain", 1))))


def nested_model(levels):
    """The main graph and |levels| nested GRAPH attributes below it."""
    inner = helper.make_graph([helper.make_node("Identity", ["x"], ["y"], name="leaf")],
                              "g%d" % levels, [], [vi("y", TensorProto.FLOAT, [2])])
    for level in range(levels - 1, -1, -1):
        n = helper.make_node("Wrap", ["x"], ["y"], name="wrap%d" % level, domain="test.domain",
                             body=inner)
        inner = helper.make_graph([n], "g%d" % level, [], [vi("y", TensorProto.FLOAT, [2])])
    return model(inner, opsets=(("", 13), ("test.domain", 1)))


def make_ok_dim_param():
    x = vi("X", TensorProto.FLOAT, ["N", 3, None])
    seq = helper.make_value_info(
        "S", helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT64,
                                                                           ["L"])))
    opt = helper.make_value_info(
        "O", helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT,
                                                                           [2])))
    map_type = onnx.TypeProto()
    map_type.map_type.key_type = TensorProto.INT64
    map_type.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(TensorProto.DOUBLE, []))
    mp = helper.make_value_info("M", map_type)
    sp = helper.make_value_info(
        "SP", helper.make_sparse_tensor_type_proto(TensorProto.FLOAT, [4, 4]))
    untyped = onnx.ValueInfoProto()
    untyped.name = "U"
    noshape = helper.make_tensor_value_info("NS", TensorProto.INT32, None)
    y = vi("Y", TensorProto.FLOAT, ["N", 3, None])
    g = helper.make_graph([helper.make_node("Identity", ["X"], ["Y"], name="id0")], "dyn",
                          [x, seq, opt, mp], [y], value_info=[sp, untyped, noshape])
    # opset 15 for optional types; "ai.onnx" spelled out for the default domain.
    return write("ok_dim_param.onnx", model(g, opsets=(("ai.onnx", 15),), ir_version=8))


def make_ok_tensors():
    write("ok_tensor.pb", raw("t0", np.arange(6, dtype=np.float32).reshape(2, 3) * 1.5))
    write("ok_tensor_i64.pb", typed("t1", TensorProto.INT64, [2], "int64_data", [5, -6]))
    write("ok_tensor_str.pb",
          typed("t2", TensorProto.STRING, [2], "string_data", [b"hello", "w\u00f6rld".encode()]))


def make_frontend_fixtures():
    g = helper.make_graph([helper.make_node("Add", ["x", "b"], ["a"], name="A"),
                           helper.make_node("Relu", ["a"], ["b"], name="B")],
                          "cycle", [vi("x", TensorProto.FLOAT, [2])],
                          [vi("b", TensorProto.FLOAT, [2])])
    write("cycle.onnx", model(g))
    g = helper.make_graph([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add0")],
                          "missing_input", [vi("x", TensorProto.FLOAT, [2])],
                          [vi("y", TensorProto.FLOAT, [2])])
    write("missing_input.onnx", model(g))
    g = helper.make_graph([helper.make_node("FrobnicateXYZ", ["x"], ["y"], name="frob0")],
                          "unknown_op", [vi("x", TensorProto.FLOAT, [2])],
                          [vi("y", TensorProto.FLOAT, [2])])
    write("unknown_op.onnx", model(g))
    # External data through a symlink: test_onnx.c places the link at run time.
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([2, 2])
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "link/w.bin"
    write("ext_symlink.onnx", one_init_model(t))
    MANIFEST.append(("ext_symlink.onnx", "NOT_FOUND",
                     'initializer "w": external data file "link/w.bin" not found'))


# ------------------------------------------------------------ the malformed corpus

def make_malformed(ok_bytes):
    # Parse errors.
    big = (np.arange(64, dtype=np.float32) * 0.25).tobytes()
    cut = ok_bytes.find(big)
    assert cut > 0
    bad("truncated.onnx", ok_bytes[:cut + 100], "INVALID_ARGUMENT", "protobuf parse failed")
    rng = random.Random(1234)
    bad("random.onnx", bytes(rng.randrange(256) for _ in range(512)), "INVALID_ARGUMENT",
        "protobuf parse failed")
    bad("empty.onnx", b"", "INVALID_ARGUMENT", "has no graph")
    # ir_version (a varint field) sent as length-delimited bytes.
    bad("wire_type.onnx", field_len(1, b"\x08") + ok_bytes, "INVALID_ARGUMENT",
        "protobuf parse failed")
    bad("group_wire.onnx", ok_bytes + varint(30 << 3 | 3), "INVALID_ARGUMENT",
        "protobuf parse failed")
    bad("bad_varint.onnx", varint(1 << 3) + b"\xff" * 11, "INVALID_ARGUMENT",
        "protobuf parse failed")
    bad("len_overflow.onnx", varint(7 << 3 | 2) + varint(1 << 40) + b"\x0a\x00",
        "INVALID_ARGUMENT", "protobuf parse failed")
    bad("not_onnx.onnx", b"This is a text file, not an ONNX model.\n", "INVALID_ARGUMENT",
        "protobuf parse failed")

    # Model structure.
    m = model(helper.make_graph([], "g", [], []))
    m.ClearField("graph")
    bad("no_graph.onnx", m, "INVALID_ARGUMENT", "has no graph")
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r0")], "g",
                          [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])
    g.node[0].op_type = ""
    bad("empty_op_type.onnx", model(g), "INVALID_ARGUMENT", 'node "r0" (): op_type is empty')

    # Tensors.
    def init(t):
        return one_init_model(t)

    t = typed("w", TensorProto.FLOAT, [-1, 3], "float_data", [])
    bad("neg_dim.onnx", init(t), "INVALID_ARGUMENT",
        'initializer "w": dim 0 of shape (-1, 3) is negative')
    t = typed("w", TensorProto.FLOAT, [2**40, 2**40], "float_data", [])
    bad("huge_dims.onnx", init(t), "INVALID_ARGUMENT",
        'initializer "w": the element count of shape (1099511627776, 1099511627776) overflows')
    t = typed("w", TensorProto.FLOAT, [2**31, 2**31], "float_data", [])
    t.raw_data = b"\0" * 8
    bad("huge_bytes.onnx", init(t), "INVALID_ARGUMENT",
        "the byte size of shape (2147483648, 2147483648) float32 overflows")
    t = typed("w", TensorProto.FLOAT, [2, 3], "float_data", [])
    t.raw_data = b"\0" * 10
    bad("raw_size.onnx", init(t), "INVALID_ARGUMENT",
        'initializer "w": raw_data has 10 bytes, shape (2, 3) float32 needs 24')
    bad("typed_count.onnx", init(typed("w", TensorProto.FLOAT, [2, 3], "float_data", [1] * 5)),
        "INVALID_ARGUMENT",
        'initializer "w": float_data has 5 values, shape (2, 3) float32 needs 6')
    bad("typed_wrong_field.onnx",
        init(typed("w", TensorProto.FLOAT, [2], "int64_data", [1, 2])), "INVALID_ARGUMENT",
        'initializer "w": int64_data given for a FLOAT tensor (expects float_data)')
    t = typed("w", TensorProto.FLOAT, [2], "float_data", [1, 2])
    t.raw_data = np.zeros(2, np.float32).tobytes()
    bad("two_sources.onnx", init(t), "INVALID_ARGUMENT",
        'initializer "w": data is given in both raw_data and float_data')
    bad("no_data.onnx", init(typed("w", TensorProto.FLOAT, [2, 3], "float_data", [])),
        "INVALID_ARGUMENT", 'initializer "w": shape (2, 3) float32 has 6 elements but no data')
    t = typed("w", TensorProto.FLOAT, [2], "float_data", [1, 2])
    t.ClearField("data_type")
    bad("undefined_dtype.onnx", init(t), "INVALID_ARGUMENT",
        'initializer "w": data_type is missing')
    bad("complex64.onnx",
        init(typed("w", TensorProto.COMPLEX64, [2], "float_data", [1, 2, 3, 4])),
        "UNIMPLEMENTED", 'initializer "w": data type COMPLEX64 (14) is not supported')
    t = typed("w", TensorProto.FLOAT, [2], "float_data", [])
    t.data_type = 17
    t.raw_data = b"\x01\x02"
    bad("float8.onnx", init(t), "UNIMPLEMENTED", "data type FLOAT8E4M3FN (17) is not supported")
    t.data_type = 99
    bad("unknown_dtype.onnx", init(t), "UNIMPLEMENTED", "data type UNKNOWN (99) is not supported")
    t = typed("w", TensorProto.STRING, [1], "string_data", [])
    t.raw_data = b"abc"
    bad("string_raw.onnx", init(t), "INVALID_ARGUMENT",
        "STRING tensors must hold their data in string_data, not raw_data")
    t = typed("w", TensorProto.FLOAT, [2], "float_data", [1, 2])
    t.segment.begin = 0
    t.segment.end = 2
    bad("segment.onnx", init(t), "UNIMPLEMENTED", "segmented tensors are not supported")
    g = helper.make_graph([], "g", [], [])
    sp = helper.make_sparse_tensor(helper.make_tensor("sv", TensorProto.FLOAT, [1], [1.0]),
                                   helper.make_tensor("si", TensorProto.INT64, [1], [0]), [4])
    g.sparse_initializer.append(sp)
    bad("sparse_initializer.onnx", model(g), "UNIMPLEMENTED",
        'sparse initializer "sv" is not supported')

    # External data (relative to this folder; ok_external.bin is 136 bytes).
    def ext(name, **kv):
        t = TensorProto()
        t.name = "w"
        t.data_type = TensorProto.FLOAT
        t.dims.extend([2, 2])
        t.data_location = TensorProto.EXTERNAL
        for key, value in kv.items():
            e = t.external_data.add()
            e.key, e.value = key, value
        return init(t)

    bad("ext_dotdot.onnx", ext("w", location="../x.bin"), "INVALID_ARGUMENT",
        'initializer "w": external data location "../x.bin" has a ".." component')
    bad("ext_dotdot2.onnx", ext("w", location="sub/../../x.bin"), "INVALID_ARGUMENT",
        '".." component')
    bad("ext_abs.onnx", ext("w", location="/etc/passwd"), "INVALID_ARGUMENT",
        'initializer "w": external data location "/etc/passwd" is an absolute path')
    bad("ext_past_end.onnx", ext("w", location="ok_external.bin", offset="128", length="16"),
        "INVALID_ARGUMENT", 'runs past the end of "ok_external.bin" (136 bytes)')
    bad("ext_offset_past_end.onnx", ext("w", location="ok_external.bin", offset="1000"),
        "INVALID_ARGUMENT", 'offset 1000 is past the end of "ok_external.bin"')
    bad("ext_bad_offset.onnx", ext("w", location="ok_external.bin", offset="12abc"),
        "INVALID_ARGUMENT", 'initializer "w": external data offset "12abc"')
    bad("ext_neg_offset.onnx", ext("w", location="ok_external.bin", offset="-16"),
        "INVALID_ARGUMENT", 'external data offset "-16"')
    bad("ext_bad_length.onnx", ext("w", location="ok_external.bin", length=" 16"),
        "INVALID_ARGUMENT", 'external data length " 16"')
    bad("ext_huge_offset.onnx",
        ext("w", location="ok_external.bin", offset="99999999999999999999999"),
        "INVALID_ARGUMENT", "is not a non-negative decimal integer")
    bad("ext_length_mismatch.onnx", ext("w", location="ok_external.bin", length="12"),
        "INVALID_ARGUMENT", 'external data in "ok_external.bin" has 12 bytes, shape (2, 2) '
        'float32 needs 16')
    bad("ext_rest_mismatch.onnx", ext("w", location="ok_external.bin", offset="100"),
        "INVALID_ARGUMENT", "has 36 bytes, shape (2, 2) float32 needs 16")
    bad("ext_missing.onnx", ext("w", location="no_such_file.bin"), "NOT_FOUND",
        'initializer "w": external data file "no_such_file.bin" not found')
    bad("ext_no_location.onnx", ext("w", offset="0"), "INVALID_ARGUMENT",
        'external data has no "location"')
    bad("ext_dir.onnx", ext("w", location="."), "INVALID_ARGUMENT", "is not a regular file")
    m = ext("w", location="ok_external.bin")
    e = m.graph.initializer[0].external_data.add()
    e.key, e.value = "location", "ok_external.bin"
    bad("ext_twice.onnx", m, "INVALID_ARGUMENT", 'external data key "location" given twice')
    t = raw("w", np.zeros(2, np.float32))
    e = t.external_data.add()
    e.key, e.value = "location", "ok_external.bin"
    bad("ext_not_external.onnx", init(t), "INVALID_ARGUMENT",
        "external_data is given but data_location is not EXTERNAL")
    t = typed("w", TensorProto.FLOAT, [2], "float_data", [])
    t.data_location = TensorProto.EXTERNAL
    t.raw_data = b"\0" * 8
    e = t.external_data.add()
    e.key, e.value = "location", "ok_external.bin"
    bad("ext_and_raw.onnx", init(t), "INVALID_ARGUMENT",
        "data is given in both raw_data and external data")

    # Attributes.
    def attr_model(attr, op="Custom"):
        n = helper.make_node(op, ["x"], ["y"], name="n0", domain="test.domain")
        n.attribute.append(attr)
        g = helper.make_graph([n], "g", [vi("x", TensorProto.FLOAT, [2])],
                              [vi("y", TensorProto.FLOAT, [2])])
        return model(g, opsets=(("", 13), ("test.domain", 1)))

    a = onnx.AttributeProto()
    a.name = "axis"
    a.type = onnx.AttributeProto.INT
    a.f = 1.5
    bad("attr_type_mismatch.onnx", attr_model(a), "INVALID_ARGUMENT",
        'node "n0" (Custom): attribute "axis": type is INT but a value is given in field f')
    a = onnx.AttributeProto()
    a.name = "axis"
    a.type = onnx.AttributeProto.INT
    bad("attr_missing_value.onnx", attr_model(a), "INVALID_ARGUMENT",
        'attribute "axis": type is INT but field i is not set')
    a = onnx.AttributeProto()
    a.name = "axis"
    bad("attr_no_value.onnx", attr_model(a), "INVALID_ARGUMENT",
        'attribute "axis": no type and no value')
    a = onnx.AttributeProto()
    a.name = "axis"
    a.f = 1.0
    a.i = 2
    bad("attr_two_fields.onnx", attr_model(a), "INVALID_ARGUMENT",
        'attribute "axis": no type, and values in more than one field (f and i)')
    a = onnx.AttributeProto()
    a.name = "axis"
    a.i = 2
    # type = 99 is no AttributeType: write the node and graph by hand.
    n = onnx.NodeProto(op_type="Custom", name="n0", domain="test.domain")
    node_bytes = n.SerializeToString() + field_len(
        NODE_ATTR, a.SerializeToString() + field_varint(ATTR_TYPE, 99))
    bad("attr_unknown_type.onnx", model_with_graph_bytes(field_len(GRAPH_NODE, node_bytes)),
        "INVALID_ARGUMENT", 'attribute "axis": unknown attribute type 99')
    a = helper.make_attribute("alpha", 1.0)
    a.ref_attr_name = "outer"
    bad("attr_ref.onnx", attr_model(a), "INVALID_ARGUMENT",
        'attribute "alpha": refers to attribute "outer" of an enclosing function')
    a = helper.make_attribute("alpha", 1.0)
    a.name = ""
    bad("attr_no_name.onnx", attr_model(a), "INVALID_ARGUMENT", "attribute #0 has no name")
    a = helper.make_attribute("value", typed("cv", TensorProto.FLOAT, [2, -2], "float_data", []))
    bad("attr_bad_tensor.onnx", attr_model(a, "Constant"), "INVALID_ARGUMENT",
        'node "n0" (Constant): attribute "value": tensor "cv": dim 1 of shape (2, -2) is negative')

    # Subgraphs.
    then_g = branch("then", "then_w", [1, 2], "Add")
    then_g.initializer[0].raw_data = b"\0" * 5
    else_g = branch("else", "else_w", [3, 4], "Sub")
    if0 = helper.make_node("If", ["cond"], ["y"], name="if0", then_branch=then_g,
                           else_branch=else_g)
    g = helper.make_graph([if0], "main", [vi("cond", TensorProto.BOOL, [])],
                          [vi("y", TensorProto.FLOAT, [2])])
    bad("subgraph_bad_init.onnx", model(g), "INVALID_ARGUMENT",
        'node "if0" (If): attribute "then_branch": initializer "then_w": raw_data has 5 bytes, '
        'shape (2) float32 needs 8')

    # 65 nested GRAPH attributes: one more than the loader takes.
    bad("deep_subgraph.onnx", nested_model(65), "INVALID_ARGUMENT",
        "subgraphs nested deeper than 64 levels")

    # 300 levels of graph -> node -> attribute -> graph: beyond the wire depth limit.
    gbytes = b""
    for level in range(300):
        attr = field_len(ATTR_NAME, b"body") + field_varint(ATTR_TYPE, 5) + field_len(ATTR_G,
                                                                                       gbytes)
        node = field_len(NODE_OP_TYPE, b"Wrap") + field_len(NODE_ATTR, attr)
        gbytes = field_len(GRAPH_NODE, node)
    bad("very_deep.onnx", model_with_graph_bytes(gbytes), "INVALID_ARGUMENT",
        "protobuf messages nested deeper than 256 levels")

    # A sequence type nested 200 times (400 messages deep).
    tp = helper.make_tensor_type_proto(TensorProto.FLOAT, [1])
    for _ in range(200):
        tp = helper.make_sequence_type_proto(tp)
    g = helper.make_graph([], "g", [helper.make_value_info("s", tp)], [])
    bad("deep_type.onnx", model(g), "INVALID_ARGUMENT", "nested deeper than 256 levels")


def main():
    for f in os.listdir(HERE):
        if f.endswith((".onnx", ".pb", ".bin")) or f == "MANIFEST":
            os.remove(os.path.join(HERE, f))
    ok = make_ok_initializers()
    make_ok_external()
    make_ok_subgraph()
    make_ok_dim_param()
    make_ok_tensors()
    write("ok_deep64.onnx", nested_model(64))  # the deepest nesting the loader takes
    make_frontend_fixtures()
    make_malformed(ok)
    with open(os.path.join(HERE, "MANIFEST"), "w") as f:
        f.write("# Written by make_corpus.py: file expected_code substring-of-message\n")
        for name, code, sub in MANIFEST:
            f.write("%s %s %s\n" % (name, code, sub))
    total = sum(os.path.getsize(os.path.join(HERE, f)) for f in os.listdir(HERE))
    print("%d malformed cases, folder %d bytes" % (len(MANIFEST), total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
