#!/usr/bin/python3
"""Writes the small ONNX models of tests/unit/test_dynamic.c (run-time shapes).

Each model has a shape-defining input that is a graph input, so the shape is
only known when the model runs (Reshape's shape, Slice's starts, ...); the
test runs one session with several values.  static_reshape.onnx has the same
Reshape with a constant shape, which must keep the static path.

Run with Debian's python (it has onnx): /usr/bin/python3 make_models.py
"""
import os

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def vi(name, dt, shape):
    """A value info; an int shape for an output is its rank (dims unknown)."""
    if isinstance(shape, int):
        shape = ["d%d" % i for i in range(shape)]
    return helper.make_tensor_value_info(name, dt, shape)


def save(name, nodes, inputs, outputs, opset=13, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="mlc-onnx tests")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))


# y = Reshape(x, shape); z = Relu(y): a kernel after the run-time shape
save("reshape", [helper.make_node("Reshape", ["x", "shape"], ["y"], name="r"),
                 helper.make_node("Relu", ["y"], ["z"], name="relu")],
     [vi("x", F, [2, 3, 4]), vi("shape", I64, [2])],
     [vi("z", F, 2)], opset=14)

# the same with a constant shape: static path
save("static_reshape", [helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")],
     [vi("x", F, [2, 3, 4])], [vi("y", F, [4, 6])], opset=14,
     inits=[helper.make_tensor("shape", I64, [2], [4, -1])])

# y = x[starts:ends:steps] on axis 0 of a 1-D x
save("slice", [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"], name="s")],
     [vi("x", F, [10]), vi("starts", I64, [1]), vi("ends", I64, [1]), vi("axes", I64, [1]),
      vi("steps", I64, [1])],
     [vi("y", F, 1)])

# y = Expand(x, shape)
save("expand", [helper.make_node("Expand", ["x", "shape"], ["y"], name="e")],
     [vi("x", F, [3, 1]), vi("shape", I64, [2])], [vi("y", F, 2)])

# y = NonZero(x); ReduceSum over run-time axes
save("nonzero", [helper.make_node("NonZero", ["x"], ["y"], name="nz")],
     [vi("x", F, [2, 3])], [vi("y", I64, 2)])
save("reduce", [helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="rs", keepdims=0)],
     [vi("x", F, [2, 3, 4]), vi("axes", I64, [1])], [vi("y", F, 2)])

# y = Range(start, limit, delta); ConstantOfShape(shape) filled with 7
save("range", [helper.make_node("Range", ["a", "b", "d"], ["y"], name="rg")],
     [vi("a", F, []), vi("b", F, []), vi("d", F, [])], [vi("y", F, 1)], opset=11)
save("const_of_shape",
     [helper.make_node("ConstantOfShape", ["shape"], ["y"], name="c",
                       value=helper.make_tensor("v", TensorProto.INT32, [1], [7]))],
     [vi("shape", I64, [2])], [vi("y", TensorProto.INT32, 2)], opset=9)

# y = Compress(x, cond, axis=1): data-dependent like NonZero
save("compress", [helper.make_node("Compress", ["x", "cond"], ["y"], name="cp", axis=1)],
     [vi("x", F, [2, 4]), vi("cond", TensorProto.BOOL, [4])], [vi("y", F, 2)], opset=11)

# a constant shape the static path cannot resolve against the symbolic batch
# n: Reshape falls back to the run-time form
save("sym_reshape", [helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")],
     [vi("x", F, ["n", 6])], [vi("y", F, 2)], opset=14,
     inits=[helper.make_tensor("shape", I64, [2], [3, -1])])
