#!/usr/bin/env python3
"""make_seeds.py: writes the hand-made seeds of the fuzz corpora.

fuzz_inspect/: tiny ONNX models, each reaching a different part of the
loader and importer (typed and raw initializers, Constant nodes, symbolic
dims, an If with subgraphs, a Loop, attributes of every kind, opsets of
other domains), and a small copy of models/mlp.onnx with its weights cut
down.  fuzz_tensor/: .npy files of every dtype and header version the reader
takes, and TensorProto .pb files with typed and raw data.  fuzz_compile/:
small models of the ops the default schedules tile and block (convs of
16 and 32 channels, 1x1, strided, depthwise and of symbolic size, packed
matmuls, batched matmuls, layer norm, softmax, pooling), so that the
mutator starts where the pipeline does the most.

The conformance seeds (cf_*.onnx, cf_*.pb) are copies of a few small models
and inputs of the ONNX node test suite (shared/conformance/generate.sh).
Usage: make_seeds.py [OUTDIR]  (default: the folder of this script)
"""
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
ins = os.path.join(out, "fuzz_inspect")
ten = os.path.join(out, "fuzz_tensor")
cmp = os.path.join(out, "fuzz_compile")
os.makedirs(ins, exist_ok=True)
os.makedirs(ten, exist_ok=True)
os.makedirs(cmp, exist_ok=True)


def model(name, nodes, inputs, outputs, inits=(), opset=17, extra_opsets=(), vi=(), folder=None):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits), value_info=list(vi))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="make_seeds")
    m.ir_version = 8
    with open(os.path.join(folder or ins, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


F = TensorProto.FLOAT
I64 = TensorProto.INT64
vinfo = helper.make_tensor_value_info

model("add", [helper.make_node("Add", ["a", "b"], ["y"])],
      [vinfo("a", F, [2, 3]), vinfo("b", F, [3])], [vinfo("y", F, [2, 3])])
model("sym_matmul", [helper.make_node("MatMul", ["x", "w"], ["h"]),
                     helper.make_node("Relu", ["h"], ["y"], name="relu0")],
      [vinfo("x", F, ["N", 4])], [vinfo("y", F, ["N", 2])],
      [numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(4, 2), "w")])
model("typed_init", [helper.make_node("Mul", ["x", "c"], ["y"])],
      [vinfo("x", F, [3])], [vinfo("y", F, [3])],
      [helper.make_tensor("c", F, [3], [1.0, 2.0, 3.0])])
model("constant_reshape", [
    helper.make_node("Constant", [], ["s"], value=helper.make_tensor("sv", I64, [2], [3, 2])),
    helper.make_node("Reshape", ["x", "s"], ["y"])],
    [vinfo("x", F, [2, 3])], [vinfo("y", F, [3, 2])])
model("conv_pool", [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                     strides=[1, 1], dilations=[1, 1], group=1),
    helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Flatten", ["p"], ["y"], axis=1)],
    [vinfo("x", F, [1, 1, 4, 4])], [vinfo("y", F, [1, 8])],
    [numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w"),
     numpy_helper.from_array(np.zeros(2, np.float32), "b")])
then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "then", [], [vinfo("t", F, [2])])
else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["e"])], "else", [], [vinfo("e", F, [2])])
model("if_branches", [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
      [vinfo("c", TensorProto.BOOL, []), vinfo("x", F, [2])], [vinfo("y", F, [2])])
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Add", ["acc_in", "one"], ["acc_out"])], "body",
    [vinfo("i", I64, []), vinfo("cond_in", TensorProto.BOOL, []), vinfo("acc_in", F, [1])],
    [vinfo("cond_out", TensorProto.BOOL, []), vinfo("acc_out", F, [1])],
    [numpy_helper.from_array(np.ones(1, np.float32), "one")])
model("loop_const", [
    helper.make_node("Constant", [], ["n"], value=helper.make_tensor("nv", I64, [], [3])),
    helper.make_node("Constant", [], ["t"], value=helper.make_tensor("tv", TensorProto.BOOL, [], [1])),
    helper.make_node("Loop", ["n", "t", "a"], ["y"], body=body)],
    [vinfo("a", F, [1])], [vinfo("y", F, [1])])
model("attrs_all", [helper.make_node(
    "Custom", ["x"], ["y"], domain="com.example", f=1.5, i=3, s="text", floats=[1.0, 2.0],
    ints=[1, 2, 3], strings=["a", "b"], t=helper.make_tensor("tt", F, [1], [0.5]),
    tensors=[helper.make_tensor("t1", I64, [1], [7])])],
    [vinfo("x", F, [1])], [vinfo("y", F, [1])], extra_opsets=[("com.example", 1)])
model("cast_where", [
    helper.make_node("Greater", ["x", "z"], ["m"]),
    helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
    helper.make_node("Cast", ["h"], ["f"], to=F),
    helper.make_node("Where", ["m", "f", "z"], ["y"])],
    [vinfo("x", F, [4]), vinfo("z", F, [1])], [vinfo("y", F, [4])])
model("reduce_softmax", [
    helper.make_node("ReduceMean", ["x"], ["r"], axes=[1], keepdims=1),
    helper.make_node("Sub", ["x", "r"], ["d"]),
    helper.make_node("Softmax", ["d"], ["y"], axis=-1)],
    [vinfo("x", F, [2, 5])], [vinfo("y", F, [2, 5])], opset=13)
model("gather_concat", [
    helper.make_node("Gather", ["x", "idx"], ["g"], axis=0),
    helper.make_node("Concat", ["g", "x"], ["y"], axis=0)],
    [vinfo("x", F, [3, 2])], [vinfo("y", F, [5, 2])],
    [numpy_helper.from_array(np.array([0, 2], np.int64), "idx")])
model("slice_transpose", [
    helper.make_node("Slice", ["x", "st", "en", "ax"], ["s"]),
    helper.make_node("Transpose", ["s"], ["y"], perm=[1, 0])],
    [vinfo("x", F, [4, 3])], [vinfo("y", F, [3, 2])],
    [numpy_helper.from_array(np.array([1], np.int64), "st"),
     numpy_helper.from_array(np.array([3], np.int64), "en"),
     numpy_helper.from_array(np.array([0], np.int64), "ax")])
model("shape_dyn", [
    helper.make_node("Shape", ["x"], ["s"]),
    helper.make_node("Reshape", ["x", "s"], ["y"])],
    [vinfo("x", F, ["B", 3])], [vinfo("y", F, ["B", 3])], vi=[vinfo("s", I64, [2])])
model("old_opset", [helper.make_node("Softmax", ["x"], ["y"], axis=1)],
      [vinfo("x", F, [2, 3])], [vinfo("y", F, [2, 3])], opset=7)

# models/mlp.onnx with 784x128 weights is 400 kB: the same graph at 8x4.
mlp = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
       helper.make_node("Relu", ["hb"], ["r"]),
       helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], transB=1)]
model("mlp_small", mlp, [vinfo("x", F, ["N", 8])], [vinfo("y", F, ["N", 2])],
      [numpy_helper.from_array(np.full((8, 4), 0.5, np.float32), "w1"),
       numpy_helper.from_array(np.zeros(4, np.float32), "b1"),
       numpy_helper.from_array(np.full((2, 4), 0.25, np.float32), "w2"),
       numpy_helper.from_array(np.zeros(2, np.float32), "b2")])

# fuzz_compile/: what the default schedules tile, block and fuse.
rng = np.random.default_rng(0)


def w(name, *shape):
    return numpy_helper.from_array(rng.uniform(-1, 1, shape).astype(np.float32), name)


def cmodel(name, nodes, inputs, outputs, inits=(), opset=17):
    model(name, nodes, inputs, outputs, inits, opset=opset, folder=cmp)


cmodel("conv_residual", [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Add", ["c2", "r1"], ["a"]),
    helper.make_node("Relu", ["a"], ["r2"]),
    helper.make_node("Conv", ["r2", "w3"], ["y"], kernel_shape=[1, 1])],
    [vinfo("x", F, [1, 16, 8, 8])], [vinfo("y", F, [1, 32, 8, 8])],
    [w("w1", 16, 16, 3, 3), w("b1", 16), w("w2", 16, 16, 3, 3), w("b2", 16), w("w3", 32, 16, 1, 1)])
cmodel("stem_pool", [
    helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[7, 7], pads=[3, 3, 3, 3], strides=[2, 2]),
    helper.make_node("Relu", ["c"], ["r"]),
    helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Conv", ["p", "w2", "b2"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                     strides=[2, 2])],
    [vinfo("x", F, [1, 3, 32, 32])], [vinfo("y", F, [1, 32, 4, 4])],
    [w("w", 16, 3, 7, 7), w("w2", 32, 16, 3, 3), w("b2", 32)])
cmodel("depthwise", [
    helper.make_node("Conv", ["x", "w1"], ["e"], kernel_shape=[1, 1]),
    helper.make_node("Clip", ["e", "lo", "hi"], ["r"]),
    helper.make_node("Conv", ["r", "dw", "db"], ["d"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                     strides=[2, 2], group=32),
    helper.make_node("GlobalAveragePool", ["d"], ["g"]),
    helper.make_node("Flatten", ["g"], ["f"]),
    helper.make_node("Gemm", ["f", "fc", "fb"], ["y"], transB=1)],
    [vinfo("x", F, [1, 16, 10, 10])], [vinfo("y", F, [1, 10])],
    [w("w1", 32, 16, 1, 1), numpy_helper.from_array(np.float32(0), "lo"),
     numpy_helper.from_array(np.float32(6), "hi"), w("dw", 32, 1, 3, 3), w("db", 32),
     w("fc", 10, 32), w("fb", 10)])
cmodel("conv_dynamic", [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"]),
    helper.make_node("AveragePool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
    [vinfo("x", F, ["N", 16, "H", "W"])], [vinfo("y", F, ["N", 32, "h", "w"])],
    [w("w", 32, 16, 3, 3), w("b", 32)])
cmodel("encoder_block", [
    helper.make_node("LayerNormalization", ["x", "g", "be"], ["n"], axis=-1),
    helper.make_node("MatMul", ["n", "wq"], ["q"]),
    helper.make_node("MatMul", ["n", "wk"], ["k"]),
    helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
    helper.make_node("MatMul", ["q", "kt"], ["s"]),
    helper.make_node("Mul", ["s", "sc"], ["ss"]),
    helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
    helper.make_node("MatMul", ["p", "n"], ["o"]),
    helper.make_node("MatMul", ["o", "w1"], ["h"]),
    helper.make_node("Add", ["h", "b1"], ["hb"]),
    helper.make_node("Relu", ["hb"], ["r"]),
    helper.make_node("Add", ["r", "x"], ["y"])],
    [vinfo("x", F, [2, 8, 32])], [vinfo("y", F, [2, 8, 32])],
    [w("g", 32), w("be", 32), w("wq", 32, 32), w("wk", 32, 32),
     numpy_helper.from_array(np.float32(0.125), "sc"), w("w1", 32, 32), w("b1", 32)])
cmodel("matmul_packed", [
    helper.make_node("Gemm", ["x", "w", "b"], ["h"]),
    helper.make_node("Relu", ["h"], ["r"]),
    helper.make_node("MatMul", ["r", "w2"], ["y"])],
    [vinfo("x", F, [12, 32])], [vinfo("y", F, [12, 64])],
    [w("w", 32, 48), w("b", 48), w("w2", 48, 64)])

# .npy: every dtype the reader takes, header versions 1.0 and 2.0.
for dt in ["<f4", "<f8", "<f2", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "|b1"]:
    a = (np.arange(6) % 2).astype(np.dtype(dt)).reshape(2, 3)
    np.save(os.path.join(ten, "a_%s.npy" % dt[1:]), a)
np.save(os.path.join(ten, "scalar.npy"), np.float32(1.5))
np.save(os.path.join(ten, "empty.npy"), np.zeros((0, 3), np.float32))
hdr = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
hdr += b" " * ((-(12 + len(hdr) + 1)) % 64) + b"\n"
with open(os.path.join(ten, "v2.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x02\x00" + struct.pack("<I", len(hdr)) + hdr + np.ones(2, np.float32).tobytes())

# TensorProto .pb: typed fields, raw_data, strings, float16, a scalar.
def pb(name, t):
    with open(os.path.join(ten, name + ".pb"), "wb") as f:
        f.write(t.SerializeToString())

pb("f32_raw", numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "x"))
pb("f32_typed", helper.make_tensor("x", F, [2, 2], [1.0, 2.0, 3.0, 4.0]))
pb("i64_typed", helper.make_tensor("i", I64, [3], [1, -2, 3]))
pb("i32_typed", helper.make_tensor("i", TensorProto.INT32, [2], [5, 6]))
pb("f16_typed", helper.make_tensor("h", TensorProto.FLOAT16, [2],
                                   np.array([1.0, 2.0], np.float16).view(np.uint16).tolist()))
pb("f64_raw", numpy_helper.from_array(np.ones(3, np.float64), "d"))
pb("bool_raw", numpy_helper.from_array(np.array([True, False]), "b"))
pb("u8_typed", helper.make_tensor("u", TensorProto.UINT8, [2], [1, 255]))
pb("str", helper.make_tensor("s", TensorProto.STRING, [2], [b"ab", b"c"]))
pb("scalar", helper.make_tensor("s", F, [], [2.5]))
