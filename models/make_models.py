#!/usr/bin/python3
"""make_models.py: writes the small test models of mlc-onnx and their inputs.

Builds four ONNX models (opset 13) with onnx.helper and numpy only, from
fixed seeds, so every run writes the same bytes:

  mlp.onnx      784-128-10 MLP: MatMul+Add, Relu, Gemm; input x [1, 784]
  mlp_dyn.onnx  the same MLP with a symbolic batch: x [N, 784] -> y [N, 10]
  cnn.onnx      small CNN on 1x3x32x32: Conv+BatchNormalization+Relu,
                MaxPool, a residual block (Add), GlobalAveragePool, Flatten,
                Gemm
  encoder.onnx  one transformer encoder block: seq 16, d_model 32, 2 heads,
                ffn 64; attention with Reshape/Transpose per head, Softmax,
                Div by sqrt(d_head); LayerNorm decomposed into
                ReduceMean/Sub/Pow/Add/Sqrt/Div/Mul/Add; Relu FFN; residuals

and each model's input as <name>.input_0.npy (for mlp_dyn also a batch-4
input, mlp_dyn.batch4.input_0.npy).  The reference outputs come from ONNX
Runtime, see regen.sh and README.md.

usage: make_models.py [OUTDIR]     (default: the folder of this script)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
IR_VERSION = 8
PRODUCER = "mlc-onnx make_models.py"


def init(name, arr):
    return numpy_helper.from_array(np.ascontiguousarray(arr), name)


def weights(rng, shape, fan_in):
    # He-style scale keeps activations O(1) through the layers.
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def finish(graph, path):
    model = helper.make_model(
        graph,
        producer_name=PRODUCER,
        producer_version="1.0",
        opset_imports=[helper.make_opsetid("", OPSET)],
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)


def mlp(batch_dim, name):
    """x [batch, 784] -> MatMul+Add -> Relu -> Gemm -> y [batch, 10]."""
    rng = np.random.default_rng(0)
    w1 = weights(rng, (784, 128), 784)
    b1 = (rng.standard_normal(128) * 0.01).astype(np.float32)
    w2 = weights(rng, (10, 128), 128)  # Gemm with transB=1, as exporters write it
    b2 = (rng.standard_normal(10) * 0.01).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "fc1.weight"], ["fc1.mm"], name="fc1/MatMul"),
        helper.make_node("Add", ["fc1.mm", "fc1.bias"], ["fc1.out"], name="fc1/Add"),
        helper.make_node("Relu", ["fc1.out"], ["relu1"], name="relu1"),
        helper.make_node("Gemm", ["relu1", "fc2.weight", "fc2.bias"], ["y"], name="fc2/Gemm",
                         transB=1),
    ]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch_dim, 784])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch_dim, 10])],
        [init("fc1.weight", w1), init("fc1.bias", b1), init("fc2.weight", w2),
         init("fc2.bias", b2)],
    )
    return graph


def conv_bn_relu(rng, nodes, inits, prefix, x, cin, cout, stride, relu=True):
    """Conv(3x3, pad 1) + BatchNormalization (+ Relu); returns the output name."""
    w = weights(rng, (cout, cin, 3, 3), cin * 9)
    b = (rng.standard_normal(cout) * 0.01).astype(np.float32)
    scale = (1.0 + 0.1 * rng.standard_normal(cout)).astype(np.float32)
    bias = (0.1 * rng.standard_normal(cout)).astype(np.float32)
    mean = (0.1 * rng.standard_normal(cout)).astype(np.float32)
    var = (1.0 + 0.1 * np.abs(rng.standard_normal(cout))).astype(np.float32)
    inits += [init(prefix + ".conv.weight", w), init(prefix + ".conv.bias", b),
              init(prefix + ".bn.scale", scale), init(prefix + ".bn.bias", bias),
              init(prefix + ".bn.mean", mean), init(prefix + ".bn.var", var)]
    nodes.append(helper.make_node(
        "Conv", [x, prefix + ".conv.weight", prefix + ".conv.bias"], [prefix + ".conv"],
        name=prefix + "/Conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[stride, stride]))
    nodes.append(helper.make_node(
        "BatchNormalization",
        [prefix + ".conv", prefix + ".bn.scale", prefix + ".bn.bias", prefix + ".bn.mean",
         prefix + ".bn.var"],
        [prefix + ".bn"], name=prefix + "/BatchNormalization", epsilon=1e-5))
    if not relu:
        return prefix + ".bn"
    nodes.append(helper.make_node("Relu", [prefix + ".bn"], [prefix + ".relu"],
                                  name=prefix + "/Relu"))
    return prefix + ".relu"


def cnn():
    """1x3x32x32 -> stem -> MaxPool -> residual block -> downsample -> head -> 1x10."""
    rng = np.random.default_rng(1)
    nodes, inits = [], []
    h = conv_bn_relu(rng, nodes, inits, "stem", "x", 3, 8, 1)
    nodes.append(helper.make_node("MaxPool", [h], ["pool"], name="pool/MaxPool",
                                  kernel_shape=[2, 2], strides=[2, 2]))
    r = conv_bn_relu(rng, nodes, inits, "res1a", "pool", 8, 8, 1)
    r = conv_bn_relu(rng, nodes, inits, "res1b", r, 8, 8, 1, relu=False)
    nodes.append(helper.make_node("Add", [r, "pool"], ["res1.add"], name="res1/Add"))
    nodes.append(helper.make_node("Relu", ["res1.add"], ["res1.out"], name="res1/Relu"))
    h = conv_bn_relu(rng, nodes, inits, "down", "res1.out", 8, 16, 2)
    nodes.append(helper.make_node("GlobalAveragePool", [h], ["gap"], name="head/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="head/Flatten", axis=1))
    inits += [init("fc.weight", weights(rng, (10, 16), 16)),
              init("fc.bias", (rng.standard_normal(10) * 0.01).astype(np.float32))]
    nodes.append(helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["y"],
                                  name="head/Gemm", transB=1))
    return helper.make_graph(
        nodes, "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        inits)


def encoder():
    """Post-norm transformer encoder block on x [1, 16, 32] (2 heads of 16)."""
    seq, d, heads, ffn = 16, 32, 2, 64
    dh = d // heads
    rng = np.random.default_rng(2)
    nodes, inits = [], []

    def const_node(name, arr):
        # Reshape targets as Constant nodes, as exporters write them.
        nodes.append(helper.make_node("Constant", [], [name], name=name + "/Constant",
                                      value=init(name + ".value", arr)))

    def linear(prefix, x, n_in, n_out):
        inits.extend([init(prefix + ".weight", weights(rng, (n_in, n_out), n_in)),
                      init(prefix + ".bias", (rng.standard_normal(n_out) * 0.02).astype(np.float32))])
        nodes.append(helper.make_node("MatMul", [x, prefix + ".weight"], [prefix + ".mm"],
                                      name=prefix + "/MatMul"))
        nodes.append(helper.make_node("Add", [prefix + ".mm", prefix + ".bias"], [prefix + ".out"],
                                      name=prefix + "/Add"))
        return prefix + ".out"

    def layer_norm(prefix, x, out_name=None):
        inits.extend([init(prefix + ".weight", (1.0 + 0.1 * rng.standard_normal(d)).astype(np.float32)),
                      init(prefix + ".bias", (0.1 * rng.standard_normal(d)).astype(np.float32))])
        p = prefix + "/"
        nodes.extend([
            helper.make_node("ReduceMean", [x], [prefix + ".mean"], name=p + "ReduceMean",
                             axes=[-1], keepdims=1),
            helper.make_node("Sub", [x, prefix + ".mean"], [prefix + ".centered"], name=p + "Sub"),
            helper.make_node("Pow", [prefix + ".centered", "two"], [prefix + ".sq"], name=p + "Pow"),
            helper.make_node("ReduceMean", [prefix + ".sq"], [prefix + ".var"],
                             name=p + "ReduceMean_1", axes=[-1], keepdims=1),
            helper.make_node("Add", [prefix + ".var", "eps"], [prefix + ".var_eps"], name=p + "Add"),
            helper.make_node("Sqrt", [prefix + ".var_eps"], [prefix + ".std"], name=p + "Sqrt"),
            helper.make_node("Div", [prefix + ".centered", prefix + ".std"], [prefix + ".norm"],
                             name=p + "Div"),
            helper.make_node("Mul", [prefix + ".norm", prefix + ".weight"], [prefix + ".scaled"],
                             name=p + "Mul"),
            helper.make_node("Add", [prefix + ".scaled", prefix + ".bias"],
                             [out_name or prefix + ".out"], name=p + "Add_1"),
        ])
        return out_name or prefix + ".out"

    inits.extend([init("two", np.array(2.0, np.float32)),
                  init("eps", np.array(1e-5, np.float32)),
                  init("attn.scale", np.array(np.sqrt(dh), np.float32))])
    const_node("attn.heads_shape", np.array([1, seq, heads, dh], np.int64))
    const_node("attn.merge_shape", np.array([1, seq, d], np.int64))

    q = linear("attn.q", "x", d, d)
    k = linear("attn.k", "x", d, d)
    v = linear("attn.v", "x", d, d)
    for name, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        src = {"q": q, "k": k, "v": v}[name]
        nodes.append(helper.make_node("Reshape", [src, "attn.heads_shape"], ["attn.%s.split" % name],
                                      name="attn/%s/Reshape" % name))
        nodes.append(helper.make_node("Transpose", ["attn.%s.split" % name], ["attn.%s.heads" % name],
                                      name="attn/%s/Transpose" % name, perm=perm))
    nodes.extend([
        helper.make_node("MatMul", ["attn.q.heads", "attn.k.heads"], ["attn.scores"],
                         name="attn/scores/MatMul"),
        helper.make_node("Div", ["attn.scores", "attn.scale"], ["attn.scaled"], name="attn/Div"),
        helper.make_node("Softmax", ["attn.scaled"], ["attn.probs"], name="attn/Softmax", axis=-1),
        helper.make_node("MatMul", ["attn.probs", "attn.v.heads"], ["attn.ctx"],
                         name="attn/ctx/MatMul"),
        helper.make_node("Transpose", ["attn.ctx"], ["attn.ctx.t"], name="attn/ctx/Transpose",
                         perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["attn.ctx.t", "attn.merge_shape"], ["attn.merged"],
                         name="attn/ctx/Reshape"),
    ])
    o = linear("attn.out", "attn.merged", d, d)
    nodes.append(helper.make_node("Add", ["x", o], ["res1"], name="res1/Add"))
    h = layer_norm("ln1", "res1")
    f = linear("ffn.fc1", h, d, ffn)
    nodes.append(helper.make_node("Relu", [f], ["ffn.relu"], name="ffn/Relu"))
    f = linear("ffn.fc2", "ffn.relu", ffn, d)
    nodes.append(helper.make_node("Add", [h, f], ["res2"], name="res2/Add"))
    layer_norm("ln2", "res2", "y")
    return helper.make_graph(
        nodes, "encoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, d])],
        inits)


def save_input(path, shape, seed):
    rng = np.random.default_rng(seed)
    np.save(path, rng.standard_normal(shape).astype(np.float32))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)
    finish(mlp(1, "mlp"), p("mlp.onnx"))
    finish(mlp("N", "mlp_dyn"), p("mlp_dyn.onnx"))
    finish(cnn(), p("cnn.onnx"))
    finish(encoder(), p("encoder.onnx"))
    save_input(p("mlp.input_0.npy"), (1, 784), 100)
    save_input(p("mlp_dyn.input_0.npy"), (1, 784), 101)
    save_input(p("mlp_dyn.batch4.input_0.npy"), (4, 784), 102)
    save_input(p("cnn.input_0.npy"), (1, 3, 32, 32), 103)
    save_input(p("encoder.input_0.npy"), (1, 16, 32), 104)
    print("make_models.py: wrote mlp, mlp_dyn, cnn, encoder (.onnx + inputs) to %s" % out)


if __name__ == "__main__":
    main()
