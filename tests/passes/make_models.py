#!/usr/bin/python3
"""make_models.py: writes the ONNX models of the graph passes' end-to-end
test (tests/passes/test_passes.sh), with onnx.helper and numpy only, from
fixed seeds, so every run writes the same bytes:

  shape_flatten.onnx  the shape arithmetic torch exports for x.view(n, -1)
                      and friends, on static shapes: Shape -> Gather ->
                      Unsqueeze -> Concat -> Reshape, Gather * Gather (Mul),
                      a Cast of the shape, Identity, a Transpose pair;
                      then Gemm + BatchNormalization (1-D, on [N, C]).
                      After the graph passes no shape op is left.
  shape_flatten.input_0.npy, shape_flatten.output_0.npy
                      its input and the output numpy computes.

usage: make_models.py [OUTDIR]     (default: the folder of this script)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def init(name, arr):
    return numpy_helper.from_array(np.array(arr, order="C"), name)


def shape_flatten(out):
    rng = np.random.default_rng(9)
    n, c, h, w, k = 2, 4, 3, 3, 5
    W = rng.standard_normal((k, c * h * w)).astype(np.float32) * 0.2
    b = rng.standard_normal(k).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, k).astype(np.float32)
    bias = rng.standard_normal(k).astype(np.float32)
    mean = rng.standard_normal(k).astype(np.float32) * 0.1
    var = rng.uniform(0.5, 2, k).astype(np.float32)
    i64 = lambda name, v: init(name, np.array(v, dtype=np.int64))
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Transpose", ["r"], ["t1"], perm=[0, 2, 3, 1], name="t1"),
        helper.make_node("Transpose", ["t1"], ["t2"], perm=[0, 3, 1, 2], name="t2"),
        helper.make_node("Identity", ["t2"], ["id"], name="identity"),
        helper.make_node("Shape", ["id"], ["s"], name="shape"),
        helper.make_node("Cast", ["s"], ["s64"], to=TensorProto.INT64, name="cast"),
        helper.make_node("Gather", ["s64", "i0"], ["d0"], axis=0, name="g0"),
        helper.make_node("Gather", ["s64", "i1"], ["d1"], axis=0, name="g1"),
        helper.make_node("Gather", ["s64", "i2"], ["d2"], axis=0, name="g2"),
        helper.make_node("Gather", ["s64", "i3"], ["d3"], axis=0, name="g3"),
        helper.make_node("Mul", ["d2", "d3"], ["hw"], name="mul_hw"),
        helper.make_node("Mul", ["d1", "hw"], ["chw"], name="mul_chw"),
        helper.make_node("Unsqueeze", ["d0", "ax0"], ["u0"], name="u0"),
        helper.make_node("Unsqueeze", ["chw", "ax0"], ["u1"], name="u1"),
        helper.make_node("Concat", ["u0", "u1"], ["shp"], axis=0, name="concat"),
        helper.make_node("Reshape", ["id", "shp"], ["flat"], name="view"),
        helper.make_node("Gemm", ["flat", "W", "b"], ["g"], transB=1, name="fc"),
        helper.make_node("BatchNormalization", ["g", "scale", "bias", "mean", "var"], ["y"],
                         epsilon=1e-5, name="bn"),
    ]
    inits = [i64("i0", 0), i64("i1", 1), i64("i2", 2), i64("i3", 3), i64("ax0", [0]),
             init("W", W), init("b", b), init("scale", scale), init("bias", bias),
             init("mean", mean), init("var", var)]
    graph = helper.make_graph(
        nodes, "shape_flatten",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, k])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="mlc-onnx tests/passes/make_models.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "shape_flatten.onnx"))
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    g = np.maximum(x, 0).reshape(n, -1) @ W.T + b
    y = (g - mean) / np.sqrt(var + 1e-5) * scale + bias
    np.save(os.path.join(out, "shape_flatten.input_0.npy"), x)
    np.save(os.path.join(out, "shape_flatten.output_0.npy"), y.astype(np.float32))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    shape_flatten(out)


if __name__ == "__main__":
    main()
