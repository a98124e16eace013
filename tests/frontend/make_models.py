#!/usr/bin/python3
"""make_models.py: writes the ONNX fixtures of the frontend tests.

Small models built with onnx.helper and numpy (fixed seeds, so every run
writes the same bytes) into this folder:

  fold_*.onnx   every input is an initializer, so importing folds the whole
                graph into constants; expected.txt holds numpy's results for
                each graph output, one line per output:
                  <model> <output index> <dtype> <rank> <dims...> : <values...>
  *.onnx        models that keep graph inputs (symbolic batch "N"): the test
                checks parameter/return types and the op histogram
  err_*.onnx    models the frontend must reject with a precise message

usage: make_models.py [OUTDIR]     (default: the folder of this script)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IR_VERSION = 8
I64_MAX = np.iinfo(np.int64).max
I64_MIN = np.iinfo(np.int64).min

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
EXPECTED = []


def init(name, arr):
    return numpy_helper.from_array(np.ascontiguousarray(arr), name)


def save(name, nodes, inits, outputs, opset, inputs=(), check=True, extra_opsets=()):
    """Writes OUT/name.onnx; outputs: list of (name, elem_type or None, shape or None)."""
    outs = [helper.make_tensor_value_info(n, t if t is not None else TensorProto.UNDEFINED, s)
            for n, t, s in outputs]
    g = helper.make_graph(nodes, name, list(inputs), outs, initializer=inits)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, producer_name="mlc-onnx tests/frontend", opset_imports=opsets)
    m.ir_version = IR_VERSION
    if check:
        # Give outputs declared without a shape the inferred type.
        ig = onnx.shape_inference.infer_shapes(m).graph
        inferred = {v.name: v.type for v in list(ig.value_info) + list(ig.output)
                    if v.type.tensor_type.HasField("shape")}
        for o in m.graph.output:
            if not o.type.tensor_type.HasField("shape") and o.name in inferred:
                o.type.CopyFrom(inferred[o.name])
        # The checker wants output shapes; onnx's inference misses some old
        # op versions, whose models then go unchecked.
        if all(o.type.tensor_type.HasField("shape") for o in m.graph.output):
            onnx.checker.check_model(m)
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def expect(model, index, arr):
    arr = np.asarray(arr)
    dt = {np.dtype(np.float32): "float32", np.dtype(np.int64): "int64",
          np.dtype(np.int32): "int32", np.dtype(np.bool_): "bool"}[arr.dtype]
    vals = " ".join(repr(float(v)) if dt == "float32" else str(int(v)) for v in arr.reshape(-1))
    dims = " ".join(str(d) for d in arr.shape)
    EXPECTED.append(f"{model} {index} {dt} {arr.ndim}{' ' + dims if dims else ''} : {vals}")


def f32(a):
    return np.asarray(a, dtype=np.float32)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


rng = np.random.default_rng(7)
X234 = f32(rng.standard_normal((2, 3, 4)))

# ---- math ------------------------------------------------------------------


def fold_math():
    a = f32(rng.standard_normal((2, 3)))
    b = f32(rng.uniform(0.5, 2.0, (3,)))
    e = np.array(2, dtype=np.int64)
    lo, hi = f32(-0.5), f32(0.5)
    nodes = [
        helper.make_node("Add", ["a", "b"], ["add"]),
        helper.make_node("Sub", ["a", "b"], ["sub"]),
        helper.make_node("Mul", ["a", "b"], ["mul"]),
        helper.make_node("Div", ["a", "b"], ["div"]),
        helper.make_node("Pow", ["a", "e"], ["pow"]),
        helper.make_node("Abs", ["a"], ["abs"]),
        helper.make_node("Sqrt", ["abs"], ["sqrt"]),
        helper.make_node("Relu", ["a"], ["relu"]),
        helper.make_node("Clip", ["a", "lo", "hi"], ["clip"]),
        helper.make_node("Clip", ["a", "", "hi"], ["clip_hi"]),
        helper.make_node("LeakyRelu", ["a"], ["leaky"], alpha=0.2),
        helper.make_node("Sigmoid", ["a"], ["sigmoid"]),
        helper.make_node("Tanh", ["a"], ["tanh"]),
        helper.make_node("Exp", ["a"], ["exp"]),
        helper.make_node("Max", ["a", "b", "lo"], ["max"]),
    ]
    outs = ["add", "sub", "mul", "div", "pow", "sqrt", "relu", "clip", "clip_hi", "leaky",
            "sigmoid", "tanh", "exp", "max"]
    save("fold_math", nodes, [init("a", a), init("b", b), init("e", e), init("lo", lo), init("hi", hi)],
         [(o, TensorProto.FLOAT, None) for o in outs], 13)
    ref = [a + b, a - b, a * b, a / b, a ** 2, np.sqrt(np.abs(a)), np.maximum(a, 0),
           np.clip(a, lo, hi), np.minimum(a, hi), np.where(a >= 0, a, f32(0.2) * a),
           1 / (1 + np.exp(-a)), np.tanh(a), np.exp(a), np.maximum(np.maximum(a, b), lo)]
    for i, r in enumerate(ref):
        expect("fold_math", i, f32(r))


def fold_legacy():
    # opset 6: Clip with attributes, Add with the legacy broadcast/axis attributes
    a = f32(rng.standard_normal((2, 3, 4)))
    b = f32(rng.standard_normal((3,)))
    nodes = [
        helper.make_node("Clip", ["a"], ["clip"], min=-0.25, max=0.75),
        helper.make_node("Add", ["a", "b"], ["add"], broadcast=1, axis=1),
        helper.make_node("Mul", ["a", "a"], ["mul"]),
    ]
    save("fold_legacy", nodes, [init("a", a), init("b", b)],
         [("clip", TensorProto.FLOAT, None), ("add", TensorProto.FLOAT, None),
          ("mul", TensorProto.FLOAT, None)], 6)
    expect("fold_legacy", 0, np.clip(a, f32(-0.25), f32(0.75)))
    expect("fold_legacy", 1, a + b[:, None])
    expect("fold_legacy", 2, a * a)


def fold_softmax():
    for opset in (11, 13):
        name = f"fold_softmax_v{opset}"
        nodes = [helper.make_node("Softmax", ["x"], ["y"], axis=1),
                 helper.make_node("Softmax", ["x"], ["z"])]
        save(name, nodes, [init("x", X234)],
             [("y", TensorProto.FLOAT, None), ("z", TensorProto.FLOAT, None)], opset)
        if opset < 13:  # coerced to 2-D around the axis
            expect(name, 0, softmax(X234.reshape(2, 12), 1).reshape(2, 3, 4))
            expect(name, 1, softmax(X234.reshape(2, 12), 1).reshape(2, 3, 4))
        else:
            expect(name, 0, softmax(X234, 1))
            expect(name, 1, softmax(X234, 2))


# ---- tensor ----------------------------------------------------------------


def fold_slice():
    x = f32(np.arange(30).reshape(5, 6))
    consts = {
        "s1": [-1, 10], "e1": [-100, I64_MIN], "a1": [0, 1], "p1": [-2, -1],
        "s2": [1], "e2": [I64_MAX], "a2": [-1],
        "s3": [0, -3], "e3": [3, -1], "p3": [2, 1],
    }
    inits = [init("x", x)] + [init(k, np.array(v, dtype=np.int64)) for k, v in consts.items()]
    nodes = [
        helper.make_node("Slice", ["x", "s1", "e1", "a1", "p1"], ["y1"]),
        helper.make_node("Slice", ["x", "s2", "e2", "a2"], ["y2"]),
        helper.make_node("Slice", ["x", "s3", "e3", "", "p3"], ["y3"]),
    ]
    save("fold_slice", nodes, inits, [(f"y{i}", TensorProto.FLOAT, None) for i in (1, 2, 3)], 13)
    expect("fold_slice", 0, x[4::-2, ::-1])
    expect("fold_slice", 1, x[:, 1:])
    expect("fold_slice", 2, x[0:3:2, -3:-1])
    # Slice-1: attributes
    nodes = [helper.make_node("Slice", ["x"], ["y"], starts=[1, -4], ends=[1000, -1], axes=[1, 0])]
    save("fold_slice_v1", nodes, [init("x", x)], [("y", TensorProto.FLOAT, [3, 5])], 9)
    expect("fold_slice_v1", 0, x[-4:-1, 1:])


def fold_reshape():
    inits = [init("x", X234), init("s1", np.array([0, -1], dtype=np.int64)),
             init("s2", np.array([-1, 0, 2], dtype=np.int64)),
             init("s3", np.array([4, 6], dtype=np.int64))]
    nodes = [helper.make_node("Reshape", ["x", "s1"], ["y1"]),
             helper.make_node("Reshape", ["x", "s2"], ["y2"]),
             helper.make_node("Reshape", ["x", "s3"], ["y3"], allowzero=1),
             helper.make_node("Flatten", ["x"], ["y4"], axis=2)]
    save("fold_reshape", nodes, inits, [(f"y{i}", TensorProto.FLOAT, None) for i in (1, 2, 3, 4)], 14)
    expect("fold_reshape", 0, X234.reshape(2, 12))
    expect("fold_reshape", 1, X234.reshape(4, 3, 2))
    expect("fold_reshape", 2, X234.reshape(4, 6))
    expect("fold_reshape", 3, X234.reshape(6, 4))
    # Reshape-1: the shape is an attribute
    nodes = [helper.make_node("Reshape", ["x"], ["y"], shape=[4, 0, -1])]
    save("fold_reshape_v1", nodes, [init("x", X234)], [("y", TensorProto.FLOAT, [4, 3, 2])], 4)
    expect("fold_reshape_v1", 0, X234.reshape(4, 3, 2))


def fold_squeeze():
    x = f32(rng.standard_normal((1, 3, 1, 2)))
    y = f32(rng.standard_normal((3, 2)))
    # opset 11: axes attributes (negative allowed)
    nodes = [helper.make_node("Squeeze", ["x"], ["a"], axes=[-2, 0]),
             helper.make_node("Squeeze", ["x"], ["b"]),
             helper.make_node("Unsqueeze", ["y"], ["c"], axes=[-1, 1])]
    outs = [("a", TensorProto.FLOAT, None), ("b", TensorProto.FLOAT, None), ("c", TensorProto.FLOAT, None)]
    save("fold_squeeze_v11", nodes, [init("x", x), init("y", y)], outs, 11)
    # opset 13: axes inputs
    nodes = [helper.make_node("Squeeze", ["x", "ax1"], ["a"]),
             helper.make_node("Squeeze", ["x"], ["b"]),
             helper.make_node("Unsqueeze", ["y", "ax2"], ["c"])]
    save("fold_squeeze_v13", nodes,
         [init("x", x), init("y", y), init("ax1", np.array([-2, 0], dtype=np.int64)),
          init("ax2", np.array([-1, 1], dtype=np.int64))], outs, 13)
    for name in ("fold_squeeze_v11", "fold_squeeze_v13"):
        expect(name, 0, x.reshape(3, 2))
        expect(name, 1, x.reshape(3, 2))
        expect(name, 2, y.reshape(3, 1, 2, 1))


def fold_tensor():
    a = f32(rng.standard_normal((2, 3)))
    b = f32(rng.standard_normal((2, 2)))
    idx = np.array([[0, -1], [1, 2]], dtype=np.int64)
    x4 = f32(rng.standard_normal((2, 3, 4, 5)))
    nodes = [
        helper.make_node("Concat", ["a", "b"], ["concat"], axis=-1),
        helper.make_node("Transpose", ["a"], ["t_default"]),
        helper.make_node("Transpose", ["x4"], ["t_perm"], perm=[0, 2, 3, 1]),
        helper.make_node("Gather", ["a", "idx"], ["gather"], axis=1),
        helper.make_node("Shape", ["x4"], ["shape"]),
        helper.make_node("Identity", ["a"], ["ident"]),
        helper.make_node("Constant", [], ["cf"], value_floats=[1.5, -2.0]),
        helper.make_node("Constant", [], ["ci"], value_int=7),
        helper.make_node("Constant", [], ["ct"], value=init("cval", f32([[1, 2], [3, 4]]))),
        helper.make_node("Cast", ["a"], ["cast"], to=TensorProto.INT32),
        helper.make_node("ReduceMean", ["a"], ["rm"], axes=[-1], keepdims=0),
    ]
    outs = [("concat", TensorProto.FLOAT), ("t_default", TensorProto.FLOAT), ("t_perm", TensorProto.FLOAT),
            ("gather", TensorProto.FLOAT), ("shape", TensorProto.INT64), ("ident", TensorProto.FLOAT),
            ("cf", TensorProto.FLOAT), ("ci", TensorProto.INT64), ("ct", TensorProto.FLOAT),
            ("cast", TensorProto.INT32), ("rm", TensorProto.FLOAT)]
    save("fold_tensor", nodes, [init("a", a), init("b", b), init("idx", idx), init("x4", x4)],
         [(n, t, None) for n, t in outs], 13)
    ref = [np.concatenate([a, b], axis=-1), a.T, x4.transpose(0, 2, 3, 1), np.take(a, idx, axis=1),
           np.array(x4.shape, dtype=np.int64), a, f32([1.5, -2.0]), np.array(7, dtype=np.int64),
           f32([[1, 2], [3, 4]]), a.astype(np.int32), a.mean(axis=-1)]
    for i, r in enumerate(ref):
        expect("fold_tensor", i, r)
    # Shape-15 with start/end
    nodes = [helper.make_node("Shape", ["x4"], ["s"], start=1, end=-1)]
    save("fold_shape_v15", nodes, [init("x4", x4)], [("s", TensorProto.INT64, None)], 15)
    expect("fold_shape_v15", 0, np.array([3, 4], dtype=np.int64))


def fold_extra():
    # Converters beyond the core list, opset 13.
    x = f32(rng.standard_normal((2, 3, 4)))
    y = f32(rng.standard_normal((2, 3, 4)))
    img = f32(rng.standard_normal((1, 8, 2, 3)))
    sc, bi = f32(rng.uniform(0.5, 1.5, 8)), f32(rng.standard_normal(8))
    slope = f32([0.1, 0.2, 0.3, 0.4])
    i64 = lambda v: np.array(v, dtype=np.int64)
    inits = [init("x", x), init("y", y), init("img", img), init("sc", sc), init("bi", bi), init("slope", slope),
             init("split", i64([1, 3])), init("reps", i64([1, 2, 1])), init("pads", i64([0, 1, 0, 0, 2, 1])),
             init("eshape", i64([2, 1, 3, 4])), init("cshape", i64([2, 3])), init("r0", i64(1)), init("r1", i64(10)),
             init("r2", i64(3)), init("ax0", i64([0])), init("half", f32(0.5))]
    nodes = [
        helper.make_node("LogSoftmax", ["x"], ["logsm"], axis=1),
        helper.make_node("Split", ["x", "split"], ["sp0", "sp1"], axis=-1),
        helper.make_node("Tile", ["x", "reps"], ["tile"]),
        helper.make_node("Pad", ["x", "pads"], ["pad"], mode="reflect"),
        helper.make_node("Expand", ["x", "eshape"], ["expand"]),
        helper.make_node("ConstantOfShape", ["cshape"], ["cos"], value=init("v", np.array([7], dtype=np.int64))),
        helper.make_node("Range", ["r0", "r1", "r2"], ["range"]),
        helper.make_node("Size", ["x"], ["size"]),
        helper.make_node("ArgMax", ["x"], ["argmax"], axis=-1, keepdims=0),
        helper.make_node("ReduceL2", ["x"], ["l2"], axes=[1]),
        helper.make_node("ReduceLogSumExp", ["x"], ["lse"], axes=[0, 2], keepdims=0),
        helper.make_node("DepthToSpace", ["img"], ["d2s"], blocksize=2, mode="CRD"),
        helper.make_node("SpaceToDepth", ["d2s"], ["s2d"], blocksize=2),
        helper.make_node("InstanceNormalization", ["img", "sc", "bi"], ["inorm"], epsilon=1e-4),
        helper.make_node("Greater", ["x", "y"], ["gt"]),
        helper.make_node("Not", ["gt"], ["ngt"]),
        helper.make_node("Where", ["gt", "x", "y"], ["where"]),
        helper.make_node("Mean", ["x", "y", "half"], ["mean"]),
        helper.make_node("PRelu", ["x", "slope"], ["prelu"]),
        helper.make_node("HardSigmoid", ["x"], ["hsig"], alpha=0.3),
        helper.make_node("Elu", ["x"], ["elu"], alpha=0.5),
        helper.make_node("Dropout", ["x"], ["drop", "mask"]),
        helper.make_node("Unsqueeze", ["size", "ax0"], ["usize"]),
    ]
    outs = [("logsm", TensorProto.FLOAT), ("sp0", TensorProto.FLOAT), ("sp1", TensorProto.FLOAT),
            ("tile", TensorProto.FLOAT), ("pad", TensorProto.FLOAT), ("expand", TensorProto.FLOAT),
            ("cos", TensorProto.INT64), ("range", TensorProto.INT64), ("size", TensorProto.INT64),
            ("argmax", TensorProto.INT64), ("l2", TensorProto.FLOAT), ("lse", TensorProto.FLOAT),
            ("d2s", TensorProto.FLOAT), ("s2d", TensorProto.FLOAT), ("inorm", TensorProto.FLOAT),
            ("ngt", TensorProto.BOOL), ("where", TensorProto.FLOAT), ("mean", TensorProto.FLOAT),
            ("prelu", TensorProto.FLOAT), ("hsig", TensorProto.FLOAT), ("elu", TensorProto.FLOAT),
            ("drop", TensorProto.FLOAT), ("mask", TensorProto.BOOL), ("usize", TensorProto.INT64)]
    save("fold_extra", nodes, inits, [(n, t, None) for n, t in outs], 13)
    m = x.max(axis=(0, 2), keepdims=True)
    d2s = img.reshape(1, 2, 2, 2, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 4, 6)
    s2d = d2s.reshape(1, 2, 2, 2, 3, 2).transpose(0, 3, 5, 1, 2, 4).reshape(1, 8, 2, 3)
    mu = img.mean(axis=(2, 3), keepdims=True)
    var = ((img - mu) ** 2).mean(axis=(2, 3), keepdims=True)
    ref = [x - x.max(axis=1, keepdims=True) - np.log(np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)),
           x[..., :1], x[..., 1:], np.tile(x, (1, 2, 1)), np.pad(x, ((0, 0), (1, 2), (0, 1)), mode="reflect"),
           np.broadcast_to(x, (2, 2, 3, 4)), np.full((2, 3), 7, dtype=np.int64), np.arange(1, 10, 3, dtype=np.int64),
           np.array(24, dtype=np.int64), x.argmax(axis=-1), np.sqrt((x * x).sum(axis=1, keepdims=True)),
           (np.log(np.exp(x - m).sum(axis=(0, 2), keepdims=True)) + m).reshape(3),
           d2s, s2d, (img - mu) / np.sqrt(var + f32(1e-4)) * sc.reshape(8, 1, 1) + bi.reshape(8, 1, 1),
           ~(x > y), np.where(x > y, x, y), (x + y + f32(0.5)) / f32(3), np.where(x >= 0, x, x * slope),
           np.clip(f32(0.3) * x + f32(0.5), 0, 1), np.where(x >= 0, x, f32(0.5) * (np.exp(x) - 1)),
           x, np.ones(x.shape, dtype=np.bool_), np.array([24], dtype=np.int64)]
    for i, r in enumerate(ref):
        expect("fold_extra", i, f32(r) if np.asarray(r).dtype.kind == "f" else np.asarray(r))


# ---- reduce ----------------------------------------------------------------


def fold_reduce():
    nodes = [helper.make_node("ReduceMean", ["x"], ["m1"], axes=[-1], keepdims=0),
             helper.make_node("ReduceMean", ["x"], ["m2"]),
             helper.make_node("ReduceSum", ["x", "ax"], ["s1"]),
             helper.make_node("ReduceMax", ["x"], ["mx"], axes=[1], keepdims=0),
             helper.make_node("GlobalAveragePool", ["x4"], ["gap"])]
    x4 = X234.reshape(1, 2, 3, 4)
    save("fold_reduce", nodes, [init("x", X234), init("x4", x4), init("ax", np.array([0, 2], dtype=np.int64))],
         [(n, TensorProto.FLOAT, None) for n in ("m1", "m2", "s1", "mx", "gap")], 13)
    expect("fold_reduce", 0, X234.mean(axis=-1))
    expect("fold_reduce", 1, X234.mean(keepdims=True))
    expect("fold_reduce", 2, X234.sum(axis=(0, 2), keepdims=True))
    expect("fold_reduce", 3, X234.max(axis=1))
    expect("fold_reduce", 4, x4.mean(axis=(2, 3), keepdims=True))
    # ReduceMean-18: axes as an input; noop_with_empty_axes
    nodes = [helper.make_node("ReduceMean", ["x", "ax"], ["m1"], keepdims=0),
             helper.make_node("ReduceMean", ["x"], ["m2"], noop_with_empty_axes=1)]
    save("fold_reduce_v18", nodes, [init("x", X234), init("ax", np.array([1], dtype=np.int64))],
         [("m1", TensorProto.FLOAT, None), ("m2", TensorProto.FLOAT, None)], 18, check=False)
    expect("fold_reduce_v18", 0, X234.mean(axis=1))
    expect("fold_reduce_v18", 1, X234)


# ---- nn --------------------------------------------------------------------

BN_C = 3


def bn_params():
    return (f32(rng.uniform(0.5, 1.5, BN_C)), f32(rng.standard_normal(BN_C)),
            f32(rng.standard_normal(BN_C)), f32(rng.uniform(0.5, 2.0, BN_C)))


def fold_batchnorm():
    x = f32(rng.standard_normal((2, BN_C, 2, 2)))
    scale, bias, mean, var = bn_params()
    nodes = [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"],
                              epsilon=1e-3)]
    save("fold_batchnorm", nodes, [init("x", x), init("scale", scale), init("bias", bias),
                                   init("mean", mean), init("var", var)],
         [("y", TensorProto.FLOAT, None)], 15)
    sh = (1, BN_C, 1, 1)
    ref = (x - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + f32(1e-3)) * scale.reshape(sh) + bias.reshape(sh)
    expect("fold_batchnorm", 0, f32(ref))


def batchnorm():
    # x is a graph input: only the final multiply and add stay.
    scale, bias, mean, var = bn_params()
    nodes = [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", BN_C, 4, 4])
    save("batchnorm", nodes, [init("scale", scale), init("bias", bias), init("mean", mean), init("var", var)],
         [("y", TensorProto.FLOAT, None)], 9, inputs=[x])


def gemm():
    # Constant A and B with transA/transB/alpha/beta: transposes and scaling
    # fold, matmul stays (it is never folded), C*beta folds, add stays.
    a = f32(rng.standard_normal((4, 3)))
    b = f32(rng.standard_normal((5, 4)))
    c = f32(rng.standard_normal((5,)))
    nodes = [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1, alpha=0.5, beta=2.0)]
    save("gemm_const", nodes, [init("a", a), init("b", b), init("c", c)], [("y", TensorProto.FLOAT, None)], 13)
    # A as a graph input, no C (opset 11)
    nodes = [helper.make_node("Gemm", ["x", "b"], ["y"], transA=1, alpha=0.5)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, "M"])
    save("gemm_param", nodes, [init("b", b)], [("y", TensorProto.FLOAT, None)], 11, inputs=[x])


def nn():
    # A small CNN on a symbolic batch N.
    w = f32(rng.standard_normal((4, 3, 3, 3)) * 0.2)
    wb = f32(rng.standard_normal((4,)))
    scale, bias, mean, var = (f32(rng.uniform(0.5, 1.5, 4)), f32(rng.standard_normal(4)),
                              f32(rng.standard_normal(4)), f32(rng.uniform(0.5, 2.0, 4)))
    fc = f32(rng.standard_normal((2, 4)))
    fcb = f32(rng.standard_normal((2,)))
    nodes = [
        helper.make_node("Conv", ["x", "w", "wb"], ["c"], name="conv1", auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["bn"], name="bn1"),
        helper.make_node("Relu", ["bn"], ["r"], name="relu1"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool1", kernel_shape=[2, 2], strides=[1, 1],
                         pads=[0, 0, 1, 1]),
        helper.make_node("AveragePool", ["p"], ["ap"], name="pool2", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         count_include_pad=1),
        helper.make_node("GlobalAveragePool", ["ap"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "fc", "fcb"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax"),
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])
    save("nn", nodes, [init("w", w), init("wb", wb), init("scale", scale), init("bias", bias),
                       init("mean", mean), init("var", var), init("fc", fc), init("fcb", fcb)],
         [("y", TensorProto.FLOAT, ["N", 2]), ("shape", TensorProto.INT64, [4])], 13, inputs=[x])


def symbolic():
    # Reshape whose -1 is exactly the symbolic batch; nodes listed out of order.
    s = np.array([-1, 12], dtype=np.int64)
    nodes = [
        helper.make_node("Relu", ["r"], ["y"], name="last"),
        helper.make_node("Reshape", ["x", "s"], ["r"], name="reshape"),
        helper.make_node("Unsqueeze", ["y", "ax"], ["u"], name="unsq"),
        helper.make_node("Slice", ["u", "st", "en"], ["z"], name="slice"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])
    save("symbolic", nodes, [init("s", s), init("ax", np.array([1], dtype=np.int64)),
                             init("st", np.array([0, 0, 2], dtype=np.int64)),
                             init("en", np.array([I64_MAX, 1, 10], dtype=np.int64))],
         [("y", TensorProto.FLOAT, None), ("z", TensorProto.FLOAT, None)], 13, inputs=[x])


def symbolic_more():
    # Shape-15 start/end, Flatten, Reshape 0/-1, Size on a symbolic batch.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])
    nodes = [
        helper.make_node("Shape", ["x"], ["batch"], end=1),
        helper.make_node("Shape", ["x"], ["inner"], start=1),
        helper.make_node("Flatten", ["x"], ["flat"]),
        helper.make_node("Reshape", ["x", "s"], ["resh"]),
        helper.make_node("Size", ["x"], ["size"]),
    ]
    save("symbolic_v15", nodes, [init("s", np.array([0, -1], dtype=np.int64))],
         [("batch", TensorProto.INT64, None), ("inner", TensorProto.INT64, None), ("flat", TensorProto.FLOAT, None),
          ("resh", TensorProto.FLOAT, None), ("size", TensorProto.INT64, None)], 15, inputs=[x], check=False)
    # An initializer that is also listed as a graph input (IR 8): a parameter
    # whose default is the initializer (a constant with fold_default_inputs).
    xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    wi = helper.make_tensor_value_info("w", TensorProto.FLOAT, [3, 2])
    save("init_input", [helper.make_node("MatMul", ["x", "w"], ["y"])], [init("w", f32(np.ones((3, 2))))],
         [("y", TensorProto.FLOAT, [2, 2])], 8, inputs=[xi, wi])
    # Softmax-11 coerces to 2-D around axis 1: reshape, softmax, reshape back.
    save("symbolic_softmax_v11", [helper.make_node("Softmax", ["x"], ["y"])], [], [("y", TensorProto.FLOAT, None)],
         11, inputs=[x], check=False)


# ---- errors ----------------------------------------------------------------


def errors():
    fx = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    w = init("w", f32(np.zeros((4, 3, 3, 3))))
    # Pre-flight: an unknown op, an unknown Conv attribute, a string input,
    # a com.microsoft op, MaxPool with Indices -> one error listing all.
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", foo=1),
        helper.make_node("FancyOp", ["c"], ["f"], name="fancy"),
        helper.make_node("FusedConv", ["x", "w"], ["fc"], name="fused", domain="com.microsoft"),
        helper.make_node("MaxPool", ["c"], ["mp", "idx"], name="pool", kernel_shape=[2, 2]),
    ]
    s = helper.make_tensor_value_info("s", TensorProto.STRING, [2])
    save("err_preflight", nodes, [w], [("f", TensorProto.FLOAT, None), ("mp", TensorProto.FLOAT, None)], 13,
         inputs=[fx, s], check=False, extra_opsets=[("com.microsoft", 1)])
    # A cycle a -> b -> c -> a (plus an unrelated node).
    nodes = [
        helper.make_node("Relu", ["x"], ["ok"], name="fine"),
        helper.make_node("Add", ["x", "cv"], ["av"], name="a"),
        helper.make_node("Relu", ["av"], ["bv"], name="b"),
        helper.make_node("Neg", ["bv"], ["cv"], name="c"),
    ]
    save("err_cycle", nodes, [], [("ok", TensorProto.FLOAT, None), ("cv", TensorProto.FLOAT, None)], 13,
         inputs=[fx], check=False)
    # An input nobody produces.
    nodes = [helper.make_node("Add", ["x", "nowhere"], ["y"], name="adder")]
    save("err_missing", nodes, [], [("y", TensorProto.FLOAT, None)], 13, inputs=[fx], check=False)
    # Add with one input.
    nodes = [helper.make_node("Add", ["x"], ["y"], name="half_add")]
    save("err_arity", nodes, [], [("y", TensorProto.FLOAT, None)], 13, inputs=[fx], check=False)
    # Reshape whose shape is a graph input.
    shp = helper.make_tensor_value_info("shp", TensorProto.INT64, [2])
    nodes = [helper.make_node("Reshape", ["x", "shp"], ["y"], name="dyn_reshape")]
    save("err_reshape_dyn", nodes, [], [("y", TensorProto.FLOAT, None)], 13, inputs=[fx, shp])
    # Conv weight expecting 2 channels, input has 3.
    nodes = [helper.make_node("Conv", ["x", "w2"], ["y"], name="conv_bad")]
    save("err_conv_channels", nodes, [init("w2", f32(np.zeros((4, 2, 3, 3))))], [("y", TensorProto.FLOAT, None)],
         13, inputs=[fx], check=False)
    # Types the compiler does not take, a string Constant, and an If whose
    # branch holds an unknown op (subgraphs are walked too).
    noshape = helper.make_tensor_value_info("noshape", TensorProto.FLOAT, None)
    seq = helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, [2])
    cplx = helper.make_tensor_value_info("cplx", TensorProto.COMPLEX64, [2])
    then_g = helper.make_graph([helper.make_node("FooBar", ["x"], ["t"], name="inner")], "then_branch", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e"], name="inner2")], "else_branch", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    cond = init("cond", np.array(True))
    nodes = [
        helper.make_node("Constant", [], ["s"], name="strconst", value_strings=["a", "b"]),
        helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g),
        helper.make_node("Relu", ["x"], ["r"], name="relu", alpha=1.0),
        helper.make_node("Softmax", ["x"], ["sm"], name="softmax", axis=1.5),
    ]
    save("err_types", nodes, [cond], [("y", TensorProto.FLOAT, None), ("seq", None, None)], 13,
         inputs=[fx, noshape, seq, cplx], check=False)
    m = onnx.load(os.path.join(OUT, "err_types.onnx"))  # make the second output a sequence
    m.graph.output[1].CopyFrom(seq)
    with open(os.path.join(OUT, "err_types.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    # Two nodes define y; a graph output nobody defines.
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="first"), helper.make_node("Neg", ["x"], ["y"], name="second")]
    save("err_dup", nodes, [], [("y", TensorProto.FLOAT, None)], 13, inputs=[fx], check=False)
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    save("err_output", nodes, [], [("y", TensorProto.FLOAT, None), ("ghost", TensorProto.FLOAT, None)], 13,
         inputs=[fx], check=False)
    # -1 that would be a product of two symbols (unnamed node).
    xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "M", 4])
    nodes = [helper.make_node("Reshape", ["x", "s"], ["y"])]
    save("err_reshape_sym", nodes, [init("s", np.array([-1, 4], dtype=np.int64))], [("y", TensorProto.FLOAT, None)],
         13, inputs=[xs], check=False)
    # kernel_shape with 3 entries for a 2-D weight.
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1", kernel_shape=[3, 3, 3])]
    save("err_kernel_shape", nodes, [w], [("y", TensorProto.FLOAT, None)], 13, inputs=[fx], check=False)


# ---- validation: arity, names, opsets, sizes ---------------------------------


def validation():
    fx = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    yf = [("y", TensorProto.FLOAT, None)]
    cval = helper.make_tensor("cv", TensorProto.FLOAT, [1], [1.0])
    # Constant and Split with no outputs (top level), beside a good node.
    nodes = [
        helper.make_node("Constant", [], [], name="k", value=cval),
        helper.make_node("Split", ["x"], [], name="cut", axis=1),
        helper.make_node("Relu", ["x"], ["y"], name="fine"),
    ]
    save("err_no_outputs", nodes, [], yf, 13, inputs=[fx], check=False)
    # The same Constant inside an If branch.
    then_g = helper.make_graph([helper.make_node("Constant", [], [], name="k_then", value=cval),
                                helper.make_node("Identity", ["x"], ["t"], name="t_id")], "then_branch", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e"], name="e_id")], "else_branch", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)]
    save("err_no_outputs_if", nodes, [init("cond", np.array(True))], yf, 13, inputs=[fx], check=False)
    # Counts and empty names: every problem in one error.
    nodes = [
        helper.make_node("Add", ["x"], ["a"], name="few"),
        helper.make_node("Relu", ["x", "x"], ["b"], name="many_in"),
        helper.make_node("Relu", ["x"], ["c", "c2"], name="many_out"),
        helper.make_node("Add", ["", "x"], ["d"], name="empty_in"),
        helper.make_node("Neg", ["x"], [""], name="empty_out"),
        helper.make_node("Concat", ["x", ""], ["e"], name="empty_var", axis=0),
        helper.make_node("Clip", ["x", "", ""], ["y"], name="clip_ok"),  # omitted optional inputs: fine
        helper.make_node("Dropout", ["x"], ["f", ""], name="drop_ok"),  # omitted optional output: fine
    ]
    save("err_arity_all", nodes, [], yf, 13, inputs=[fx], check=False)
    # Split sizes whose sum overflows int64.
    big = np.array([I64_MAX, I64_MAX, 2], dtype=np.int64)
    nodes = [helper.make_node("Split", ["x", "s"], ["p", "q", "y"], name="cut", axis=1)]
    save("err_split_overflow", nodes, [init("s", big)], yf, 13, inputs=[fx], check=False)
    # Names: inputs, initializers and outputs listed twice, values defined
    # twice (by a graph input, an initializer, two nodes), also in a branch;
    # an initializer that is also an input is fine.
    w = init("w", f32(np.ones((2, 4))))
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["r"], name="t_neg"),
                                helper.make_node("Identity", ["r"], ["t"], name="t_id")], "then_branch", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"], name="e_id")], "else_branch", [],
                               [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="first"),
        helper.make_node("Neg", ["x"], ["r"], name="second"),
        helper.make_node("Neg", ["x"], ["x"], name="shadow_input"),
        helper.make_node("Neg", ["x"], ["w"], name="shadow_init"),
        helper.make_node("Dropout", ["x"], ["u", "u"], name="twice"),
        helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g),
    ]
    fw = helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 4])
    save("err_names", nodes, [w, init("cond", np.array(True)), w], yf + yf, 13, inputs=[fx, fw, fx], check=False)
    # Opsets: above and below the supported range, the default domain twice,
    # a node of a domain the model does not import.
    relu = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    save("err_opset99", relu, [], yf, 99, inputs=[fx], check=False)
    save("err_opset0", relu, [], yf, 0, inputs=[fx], check=False)
    save("err_opset_twice", relu, [], yf, 13, inputs=[fx], check=False, extra_opsets=[("ai.onnx", 15)])
    nodes = relu + [helper.make_node("Fancy", ["x"], ["z"], name="f", domain="com.example")]
    save("err_domain", nodes, [], yf, 13, inputs=[fx], check=False)
    # Sizes whose arithmetic overflows int64: Conv and ConvTranspose padding
    # (auto_pad) with huge strides, DepthToSpace's blocksize^2, a
    # ConstantOfShape or a graph input of more bytes than int64 counts, a
    # DFT length of 2^63 - 1 (read through a double it was out of range).
    x4 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", auto_pad="SAME_UPPER", dilations=[2 ** 62, 1])]
    save("err_conv_pad_overflow", nodes, [init("w", f32(np.zeros((4, 3, 3, 3))))], yf, 13, inputs=[x4], check=False)
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", auto_pad="SAME_UPPER", strides=[I64_MAX, 1])]
    save("conv_huge_stride", nodes, [init("w", f32(np.zeros((4, 3, 3, 3))))], yf, 13, inputs=[x4], check=False)
    nodes = [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="convt", auto_pad="SAME_UPPER",
                              strides=[2 ** 61, 1])]
    save("err_convt_pad_overflow", nodes, [init("w", f32(np.zeros((3, 4, 3, 3))))], yf, 13, inputs=[x4],
         check=False)
    nodes = [helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=2 ** 32)]
    save("err_d2s_overflow", nodes, [], yf, 13, inputs=[x4], check=False)
    nodes = [helper.make_node("ConstantOfShape", ["s"], ["y"], name="fill")]
    save("err_cos_overflow", nodes, [init("s", np.array([2 ** 40, 2 ** 40], dtype=np.int64))], yf, 13, check=False)
    nodes = [helper.make_node("Relu", ["big"], ["y"], name="r")]
    save("err_input_overflow", nodes, [], yf, 13,
         inputs=[helper.make_tensor_value_info("big", TensorProto.FLOAT, [2 ** 40, "N", 2 ** 40])], check=False)
    nodes = [helper.make_node("DFT", ["s", "n"], ["y"], name="dft", axis=1)]
    save("err_dft_length", nodes, [init("n", np.array(I64_MAX, dtype=np.int64))], yf, 17,
         inputs=[helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 8, 1])], check=False)
    # LSTM hidden_size of 2^62: its gate sizes overflow; EyeLike with k =
    # 2^63 - 1: no ones (i + k must not be computed).
    nodes = [helper.make_node("LSTM", ["s", "w", "r"], ["y"], name="lstm", hidden_size=2 ** 62)]
    save("err_lstm_hidden", nodes, [init("w", f32(np.zeros((1, 8, 2)))), init("r", f32(np.zeros((1, 8, 2))))], yf,
         14, inputs=[helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 1, 2])], check=False)
    nodes = [helper.make_node("EyeLike", ["e"], ["y"], name="eye", k=I64_MAX)]
    save("fold_eyelike_k", nodes, [init("e", f32(np.zeros((3, 4))))], yf, 13, check=False)
    expect("fold_eyelike_k", 0, f32(np.zeros((3, 4))))
    # MaxUnpool whose output extent (8 - 1) * stride + kernel overflows.
    nodes = [helper.make_node("MaxUnpool", ["x", "ix"], ["y"], name="unpool", kernel_shape=[I64_MAX, 2],
                              strides=[I64_MAX, 2])]
    save("err_unpool_overflow", nodes, [], yf, 11,
         inputs=[x4, helper.make_tensor_value_info("ix", TensorProto.INT64, [1, 3, 8, 8])], check=False)
    # Resize to constant sizes of 2^63 - 1 (left to a run-time check before).
    nodes = [helper.make_node("Resize", ["x", "", "", "sz"], ["y"], name="resize")]
    save("err_resize_sizes", nodes, [init("sz", np.array([1, 3, I64_MAX, I64_MAX], dtype=np.int64))], yf, 13,
         inputs=[x4], check=False)
    # ir_version 0 (unset): not a valid IR version.
    save("err_ir_version", relu, [], yf, 13, inputs=[fx], check=False)
    m = onnx.load(os.path.join(OUT, "err_ir_version.onnx"))
    m.ir_version = 0
    with open(os.path.join(OUT, "err_ir_version.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    # Opset 1 (the lowest this build takes): Relu-1 with consumed_inputs.
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r", consumed_inputs=[0])]
    save("opset1", nodes, [], yf, 1, inputs=[fx], check=False)


def main():
    os.makedirs(OUT, exist_ok=True)
    for fn in (fold_math, fold_legacy, fold_softmax, fold_slice, fold_reshape, fold_squeeze, fold_tensor, fold_extra,
               fold_reduce, fold_batchnorm, batchnorm, gemm, nn, symbolic, symbolic_more, errors, validation):
        fn()
    with open(os.path.join(OUT, "expected.txt"), "w") as f:
        f.write("# written by make_models.py: <model> <output> <dtype> <rank> <dims...> : <values...>\n")
        f.write("\n".join(EXPECTED) + "\n")


if __name__ == "__main__":
    main()
