#!/usr/bin/python3
"""Writes the small ONNX models of tests/unit/test_robust.c: the forms real
exporters produce that a clean opset-13 model does not have.

  const_conv     a Conv whose weight and bias are Constant nodes (value)
  init_conv      the same Conv with initializers (the compiled form is compared)
  const_forms    Constant value_float, value_floats, value_int, value_ints and
                 sparse_value (linear indices and coordinates)
  sparse_bad     a sparse_value index outside its shape (an error)
  opset7         BatchNormalization-7 (spatial), Upsample-7 (scales attribute),
                 Dropout-7 (ratio), Slice-1, Pad-2, Clip-6 attributes
  opset7_linear  Upsample-7 linear, Pad-2 edge, ReduceMax-1 axes, Squeeze-1 without
                 axes, Split-2 in equal parts
  bn_per_activation  BatchNormalization-7 with spatial=0 (statistics [C, H, W])
  opset9         Upsample-9, Slice-1, Pad-2, Clip-6, BatchNormalization-9,
                 ReduceSum-1, Squeeze-1 / Unsqueeze-1 and Split-2 attributes
  opset10        Slice-10, Resize-10, Dropout-10 (ratio attribute)
  opset11        Resize-11, Pad-11, Clip-11, Squeeze/Unsqueeze-11, Split-11 and
                 ReduceMean-11 with axes as attributes
  opset6         BatchNormalization-6 (is_test, spatial) after Conv, Add-6 with
                 legacy broadcast, Clip-6: no ONNX Runtime runs opset 6, so its
                 reference is computed here with NumPy
  opset5         BatchNormalization-1 (consumed_inputs, is_test), Add-1 and
                 Relu-1 with consumed_inputs (NumPy reference, as opset6)
  nhwc           a tf2onnx-style channels-last graph: Transpose to NCHW before
                 each Conv and back after
  fp16_weights   float16 initializers each followed by Cast to float32
  unordered      nodes listed in reverse order
  cycle          two nodes that feed each other (an error)
  unknown_out    outputs declared without a type, and with a type but no shape
  input_init     a graph input that is also an initializer (IR version 8);
                 input_init.default.output_0.npy is ONNX Runtime's output when
                 only x is fed, input_init.output_0.npy NumPy's with b fed, input_init.input_2.npy the weight s (an input
                 of the library compiled with params_as_inputs)

Every model's inputs are written as NAME.input_<i>.npy and ONNX Runtime's
outputs (run by the bench script named by --ort-bench, or $ORT_BENCH) as
NAME.output_<i>.npy.

Run with Debian's python (it has onnx and numpy):
  /usr/bin/python3 make_models.py --ort-bench ort_bench.js
"""
import argparse
import os
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F, F16, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64
rng = np.random.default_rng(12)


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def rand(*shape, dtype=np.float32):
    return rng.uniform(-1, 1, size=shape).astype(dtype)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def const(name, arr):
    return helper.make_node("Constant", [], [name], name=name + "_const",
                            value=numpy_helper.from_array(np.asarray(arr), name))


MODELS = {}  # name -> (model, inputs, numpy reference outputs or None)


def save(name, nodes, inputs, outputs, feeds, opset=13, inits=(), check=True, ref=None, ir=8):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="mlc-onnx tests")
    m.ir_version = ir
    if check:
        onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))
    for i, a in enumerate(feeds):
        np.save(os.path.join(HERE, "%s.input_%d.npy" % (name, i)), a)
    MODELS[name] = (feeds, ref)


# ---- Constant nodes ---------------------------------------------------------
W, B = rand(16, 8, 3, 3), rand(16)
X = rand(1, 8, 10, 10)
conv = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"], name="relu")]
save("const_conv", [const("w", W), const("b", B)] + conv,
     [vi("x", F, [1, 8, 10, 10])], [vi("y", F, [1, 16, 10, 10])], [X])
save("init_conv", conv, [vi("x", F, [1, 8, 10, 10])], [vi("y", F, [1, 16, 10, 10])], [X],
     inits=[init("w", W), init("b", B)])

sparse = helper.make_sparse_tensor(
    numpy_helper.from_array(np.array([5.0, -2.0, 7.0], np.float32), "s"),
    numpy_helper.from_array(np.array([1, 3, 5], np.int64), "s_idx"), [2, 3])
sparse2 = helper.make_sparse_tensor(  # [NNZ, rank] coordinates
    numpy_helper.from_array(np.array([3.0, 4.0], np.float32), "s2"),
    numpy_helper.from_array(np.array([[0, 2], [1, 0]], np.int64), "s2_idx"), [2, 3])
save("const_forms",
     [helper.make_node("Constant", [], ["a"], name="a", value_float=2.5),
      helper.make_node("Constant", [], ["bv"], name="bv", value_floats=[1.0, -1.0, 0.5]),
      helper.make_node("Constant", [], ["k"], name="k", value_int=2),
      helper.make_node("Constant", [], ["shape"], name="shape", value_ints=[3, 2]),
      helper.make_node("Constant", [], ["s"], name="s", sparse_value=sparse),
      helper.make_node("Constant", [], ["s2"], name="s2", sparse_value=sparse2),
      helper.make_node("Mul", ["x", "a"], ["t0"], name="mul"),
      helper.make_node("Add", ["t0", "bv"], ["t1"], name="add"),
      helper.make_node("Add", ["t1", "s"], ["t2"], name="add_sparse"),
      helper.make_node("Add", ["t2", "s2"], ["t3"], name="add_sparse2"),
      helper.make_node("Reshape", ["t3", "shape"], ["y"], name="reshape"),
      helper.make_node("Gather", ["x", "k"], ["z"], name="gather", axis=1)],
     [vi("x", F, [2, 3])], [vi("y", F, [3, 2]), vi("z", F, [2])], [rand(2, 3)])

bad = helper.make_sparse_tensor(numpy_helper.from_array(np.array([1.0], np.float32), "s"),
                                numpy_helper.from_array(np.array([6], np.int64), "s_idx"), [2, 3])
save("sparse_bad", [helper.make_node("Constant", [], ["s"], name="s", sparse_value=bad),
                    helper.make_node("Add", ["x", "s"], ["y"], name="add")],
     [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], [], check=False)

# ---- older opsets ------------------------------------------------------------
C = 2
bn_inits = [init("scale", rand(C) + 1.5), init("bias", rand(C)), init("mean", rand(C)),
            init("var", rng.uniform(0.5, 1.5, C).astype(np.float32))]
save("opset7",
     [helper.make_node("Upsample", ["x"], ["u"], name="up", scales=[1.0, 1.0, 2.0, 2.0], mode="nearest"),
      helper.make_node("BatchNormalization", ["u", "scale", "bias", "mean", "var"], ["bn"], name="bn",
                       spatial=1, epsilon=1e-3),
      helper.make_node("Dropout", ["bn"], ["d"], name="drop", ratio=0.3),
      helper.make_node("Slice", ["d"], ["s"], name="slice", starts=[1, 0], ends=[7, 100], axes=[2, 3]),
      helper.make_node("Pad", ["s"], ["p"], name="pad", pads=[0, 0, 1, 2, 0, 0, 0, 1], value=0.25),
      helper.make_node("Clip", ["p"], ["y"], name="clip", min=-0.5, max=0.75)],
     [vi("x", F, [1, C, 4, 4])], [vi("y", F, [1, C, 7, 11])], [rand(1, C, 4, 4)], opset=7, inits=bn_inits)

r7 = np.random.default_rng(7)  # its own generator: the models after it keep their values
P = [r7.uniform(-1, 1, (C, 3, 4)).astype(np.float32) for _ in range(3)]
save("bn_per_activation",
     [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn", spatial=0,
                       epsilon=1e-3)],
     [vi("x", F, [2, C, 3, 4])], [vi("y", F, [2, C, 3, 4])], [r7.uniform(-1, 1, (2, C, 3, 4)).astype(np.float32)],
     opset=7, inits=[init("scale", P[0] + 1.5), init("bias", P[1]), init("mean", P[2]),
                     init("var", r7.uniform(0.5, 1.5, (C, 3, 4)).astype(np.float32))])

r8 = np.random.default_rng(8)
save("opset7_linear",
     [helper.make_node("Upsample", ["x"], ["u"], name="up", scales=[1.0, 1.0, 2.0, 3.0], mode="linear"),
      helper.make_node("Pad", ["u"], ["p"], name="pad", mode="edge", pads=[0, 0, 2, 1, 0, 0, 0, 2]),
      helper.make_node("Slice", ["p"], ["s"], name="slice", starts=[2, 0], ends=[1000, 5], axes=[2, 3]),
      helper.make_node("ReduceMax", ["s"], ["r"], name="rmax", axes=[1, 3], keepdims=1),
      helper.make_node("Squeeze", ["r"], ["q"], name="squeeze"),
      helper.make_node("Split", ["q"], ["y0", "y1"], name="split", axis=0)],
     [vi("x", F, [1, 3, 2, 2])], [vi("y0", F, [2]), vi("y1", F, [2])],
     [r8.uniform(-1, 1, (1, 3, 2, 2)).astype(np.float32)], opset=7)

save("opset9",
     [const("sc", np.array([1, 1, 2, 2], np.float32)),
      helper.make_node("Upsample", ["x", "sc"], ["u"], name="up", mode="nearest"),
      helper.make_node("Slice", ["u"], ["s"], name="slice", starts=[0, 1, 2], ends=[1, 7, -1], axes=[0, 2, 3]),
      helper.make_node("Pad", ["s"], ["p"], name="pad", mode="reflect", pads=[0, 0, 1, 1, 0, 0, 1, 1]),
      helper.make_node("Clip", ["p"], ["c"], name="clip", min=-0.6),
      helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["bn"], name="bn"),
      helper.make_node("ReduceSum", ["bn"], ["r"], name="rsum", axes=[2], keepdims=1),
      helper.make_node("Squeeze", ["r"], ["q"], name="squeeze", axes=[0, 2]),
      helper.make_node("Unsqueeze", ["q"], ["uq"], name="unsqueeze", axes=[1]),
      helper.make_node("Split", ["uq"], ["y0", "y1"], name="split", axis=2, split=[3, 4])],
     [vi("x", F, [1, C, 4, 4])], [vi("y0", F, [C, 1, 3]), vi("y1", F, [C, 1, 4])], [rand(1, C, 4, 4)],
     opset=9, inits=bn_inits)

save("opset10",
     [const("st", np.array([1, -1], np.int64)), const("en", np.array([4, -100], np.int64)),
      const("ax", np.array([2, 3], np.int64)), const("sp", np.array([1, -2], np.int64)),
      helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["s"], name="slice"),
      const("rs", np.array([1, 1, 2, 1.5], np.float32)),
      helper.make_node("Resize", ["s", "rs"], ["r"], name="resize", mode="linear"),
      helper.make_node("Dropout", ["r"], ["y"], name="drop", ratio=0.4)],
     [vi("x", F, [1, C, 5, 6])], [vi("y", F, [1, C, 6, 4])], [rand(1, C, 5, 6)], opset=10)

save("opset11",
     [const("roi", np.array([], np.float32)), const("rs", np.array([1, 1, 2, 2], np.float32)),
      helper.make_node("Resize", ["x", "roi", "rs"], ["r"], name="resize", mode="linear",
                       coordinate_transformation_mode="align_corners"),
      const("pads", np.array([0, 0, 1, 0, 0, 0, 0, 2], np.int64)), const("pv", np.array(-0.5, np.float32)),
      helper.make_node("Pad", ["r", "pads", "pv"], ["p"], name="pad"),
      const("lo", np.array(-0.4, np.float32)),
      helper.make_node("Clip", ["p", "lo", ""], ["c"], name="clip"),
      helper.make_node("ReduceMean", ["c"], ["m"], name="rmean", axes=[-1], keepdims=0),
      helper.make_node("Unsqueeze", ["m"], ["u"], name="unsqueeze", axes=[0]),
      helper.make_node("Squeeze", ["u"], ["q"], name="squeeze", axes=[0, 1]),
      helper.make_node("Split", ["q"], ["y0", "y1"], name="split", axis=1, split=[2, 7])],
     [vi("x", F, [1, C, 4, 3])], [vi("y0", F, [C, 2]), vi("y1", F, [C, 7])], [rand(1, C, 4, 3)], opset=11)

# opset 6: reference by NumPy
X6, W6, B6 = rand(1, 3, 5, 5), rand(C, 3, 3, 3), rand(C)
sc6, bi6, mu6 = rand(C) + 1.5, rand(C), rand(C)
va6 = rng.uniform(0.5, 1.5, C).astype(np.float32)
k6 = rand(C, 1, 1)
cv = np.zeros((1, C, 3, 3), np.float32)
for o in range(C):
    for i in range(3):
        for j in range(3):
            cv[0, o, i, j] = np.sum(X6[0, :, i:i + 3, j:j + 3] * W6[o]) + B6[o]
r6 = (cv - mu6.reshape(1, C, 1, 1)) / np.sqrt(va6.reshape(1, C, 1, 1) + 1e-4) * sc6.reshape(1, C, 1, 1) + \
    bi6.reshape(1, C, 1, 1)
r6 = np.clip(r6 + k6.reshape(1, C, 1, 1), -0.3, 0.9).astype(np.float32)
save("opset6",
     [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv"),
      helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["bn"], name="bn",
                       is_test=1, spatial=1, epsilon=1e-4),
      helper.make_node("Add", ["bn", "k"], ["a"], name="add", broadcast=1, axis=1),
      helper.make_node("Clip", ["a"], ["y"], name="clip", min=-0.3, max=0.9)],
     [vi("x", F, [1, 3, 5, 5])], [vi("y", F, [1, C, 3, 3])], [X6], opset=6,
     inits=[init("w", W6), init("b", B6), init("scale", sc6), init("bias", bi6), init("mean", mu6),
            init("var", va6), init("k", k6)], ref=[r6])

# opset 5: BatchNormalization-1 with consumed_inputs; reference by NumPy
X5 = rand(1, C, 3, 4)
bn5 = (X5 - mu6.reshape(1, C, 1, 1)) / np.sqrt(va6.reshape(1, C, 1, 1) + 1e-5) * sc6.reshape(1, C, 1, 1) + \
    bi6.reshape(1, C, 1, 1)
save("opset5",
     [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["bn"], name="bn",
                       consumed_inputs=[0, 0, 0, 1, 1], is_test=1),
      helper.make_node("Add", ["bn", "k"], ["a"], name="add", broadcast=1, axis=1, consumed_inputs=[0, 0]),
      helper.make_node("Relu", ["a"], ["y"], name="relu", consumed_inputs=[0])],
     [vi("x", F, [1, C, 3, 4])] + [vi(n, F, [C]) for n in ("scale", "bias", "mean", "var")] +
     [vi("k", F, [C, 1, 1])],  # IR version 3: initializers are listed as inputs
     [vi("y", F, [1, C, 3, 4])], [X5], opset=5, ir=3,
     inits=[init("scale", sc6), init("bias", bi6), init("mean", mu6), init("var", va6), init("k", k6)],
     ref=[np.maximum(bn5 + k6.reshape(1, C, 1, 1), 0).astype(np.float32)])

# ---- tf2onnx-style NHWC --------------------------------------------------------
to_nchw, to_nhwc = [0, 3, 1, 2], [0, 2, 3, 1]
save("nhwc",
     [helper.make_node("Transpose", ["x"], ["t0"], name="t0", perm=to_nchw),
      helper.make_node("Conv", ["t0", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
      helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
      helper.make_node("Transpose", ["r1"], ["t1"], name="t1", perm=to_nhwc),
      helper.make_node("Transpose", ["t1"], ["t2"], name="t2", perm=to_nchw),
      helper.make_node("Conv", ["t2", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
      helper.make_node("Transpose", ["c2"], ["t3"], name="t3", perm=to_nhwc),
      helper.make_node("Add", ["t3", "bias"], ["y"], name="add")],
     [vi("x", F, [1, 8, 8, 3])], [vi("y", F, [1, 8, 8, 4])], [rand(1, 8, 8, 3)],
     inits=[init("w1", rand(8, 3, 3, 3)), init("b1", rand(8)), init("w2", rand(4, 8, 3, 3)),
            init("b2", rand(4)), init("bias", rand(4))])

# ---- float16 weights cast to float32 --------------------------------------------
save("fp16_weights",
     [helper.make_node("Cast", ["w16"], ["w"], name="cast_w", to=F),
      helper.make_node("Cast", ["b16"], ["b"], name="cast_b", to=F),
      helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv"),
      helper.make_node("Flatten", ["c"], ["f"], name="flat"),
      helper.make_node("Cast", ["m16"], ["m"], name="cast_m", to=F),
      helper.make_node("MatMul", ["f", "m"], ["y"], name="matmul")],
     [vi("x", F, [1, 3, 6, 6])], [vi("y", F, [1, 5])], [rand(1, 3, 6, 6)],
     inits=[init("w16", rand(4, 3, 3, 3, dtype=np.float16)), init("b16", rand(4, dtype=np.float16)),
            init("m16", rand(64, 5, dtype=np.float16))])

# ---- graph structure -------------------------------------------------------------
save("unordered",
     [helper.make_node("Relu", ["t1"], ["y"], name="relu"),
      helper.make_node("Add", ["t0", "t2"], ["t1"], name="add"),
      helper.make_node("Mul", ["x", "c"], ["t0"], name="mul"),
      helper.make_node("Neg", ["x"], ["t2"], name="neg")],
     [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], [rand(2, 3)], inits=[init("c", rand(3))], check=False)
save("cycle",
     [helper.make_node("Add", ["x", "b"], ["a"], name="add"),
      helper.make_node("Relu", ["a"], ["b"], name="relu")],
     [vi("x", F, [2])], [vi("a", F, [2])], [], check=False)

untyped = onnx.ValueInfoProto()
untyped.name = "y0"
rankless = onnx.ValueInfoProto()
rankless.name = "y1"
rankless.type.tensor_type.elem_type = F
save("unknown_out",
     [helper.make_node("MatMul", ["x", "w"], ["y0"], name="matmul"),
      helper.make_node("Transpose", ["y0"], ["t"], name="transpose"),
      helper.make_node("Unsqueeze", ["t", "ax"], ["y1"], name="unsqueeze")],
     [vi("x", F, [2, 3])], [untyped, rankless], [rand(2, 3)], check=False,
     inits=[init("w", rand(3, 4)), init("ax", np.array([1], np.int64))])

# ONNX Runtime's node binding takes only x (its inputs leave out those
# that are initializers): the output with b fed is computed by NumPy.
S, XI, BI = rand(3), rand(2, 3), rand(3)
save("input_init",
     [helper.make_node("Mul", ["x", "s"], ["t"], name="mul"),
      helper.make_node("Add", ["t", "b"], ["y"], name="add")],
     [vi("x", F, [2, 3]), vi("b", F, [3])], [vi("y", F, [2, 3])], [XI, BI],
     inits=[init("b", rand(3)), init("s", S)], ref=[XI * S + BI])
# compiled with params_as_inputs, the weight s is an input too (the third)
np.save(os.path.join(HERE, "input_init.input_2.npy"), S)


def ort_outputs(bench, name, feeds):
    """Runs |name| with ONNX Runtime on the inputs just written; writes
    NAME.output_<i>.npy."""
    with tempfile.TemporaryDirectory() as d:
        cmd = ["node", bench, os.path.join(HERE, name + ".onnx"), "--iters", "1", "--warmup", "0",
               "--dump-dir", d]
        for i in range(len(feeds)):
            cmd += ["--input", os.path.join(HERE, "%s.input_%d.npy" % (name, i))]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        for f in sorted(os.listdir(d)):
            if f.startswith("output_") and f.endswith(".npy"):
                np.save(os.path.join(HERE, "%s.%s" % (name, f)), np.load(os.path.join(d, f)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ort-bench", default=os.environ.get("ORT_BENCH"),
                    help="ONNX Runtime's bench script (node), for the reference outputs")
    a = ap.parse_args()
    for name, (feeds, ref) in MODELS.items():
        if ref is not None:
            for i, r in enumerate(ref):
                np.save(os.path.join(HERE, "%s.output_%d.npy" % (name, i)), r)
        elif feeds and a.ort_bench:
            ort_outputs(a.ort_bench, name, feeds)
    # input_init without its second input: ONNX Runtime takes the initializer
    if a.ort_bench:
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(["node", a.ort_bench, os.path.join(HERE, "input_init.onnx"), "--iters", "1",
                            "--warmup", "0", "--dump-dir", d,
                            "--input", os.path.join(HERE, "input_init.input_0.npy")],
                           check=True, stdout=subprocess.DEVNULL)
            np.save(os.path.join(HERE, "input_init.default.output_0.npy"), np.load(os.path.join(d, "output_0.npy")))


if __name__ == "__main__":
    main()
