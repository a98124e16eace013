"""Write the one-node models of bench/kernels.sh.

    /usr/bin/python3 bench/kernel_models.py OUTDIR RESNET50.onnx

Writes OUTDIR/matmul_1024.onnx and OUTDIR/matmul_2048.onnx (A an input, B
an initializer) and one OUTDIR/conv_I.onnx per distinct Conv layer of
RESNET50 (input 1xCxHxW, weights and bias initializers), and prints one
tab-separated line per model: file stem, kernel, shape, the GEMM M, N, K
of the same work, and its FLOPs (2 x multiply-adds).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

rng = np.random.default_rng(0)


def save(path, node, inputs, inits):
    x = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs]
    y = [helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, None)]
    g = helper.make_graph([node], "kernel", x, y,
                          [numpy_helper.from_array(a.astype(np.float32), n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(shape_inference.infer_shapes(m), path)


def matmul(out, n):
    b = rng.standard_normal((n, n)) / np.sqrt(n)
    save(os.path.join(out, "matmul_%d.onnx" % n), helper.make_node("MatMul", ["A", "B"], ["Y"]),
         [("A", [n, n])], [("B", b)])
    print("matmul_%d\tmatmul\t%d^3\t%d\t%d\t%d\t%d" % (n, n, n, n, n, 2 * n ** 3))


def resnet_convs(path):
    """distinct (C, K, H, W, kh, kw, stride, pad) of the Conv nodes in order of first use, with counts"""
    g = shape_inference.infer_shapes(onnx.load(path)).graph
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
              for vi in list(g.input) + list(g.value_info)}
    shapes.update({t.name: list(t.dims) for t in g.initializer})
    layers = {}
    for n in g.node:
        if n.op_type != "Conv":
            continue
        at = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        _, c, h, w = shapes[n.input[0]]
        k, _, kh, kw = shapes[n.input[1]]
        strides, pads = at.get("strides", [1, 1]), at.get("pads", [0, 0, 0, 0])
        if at.get("group", 1) != 1 or set(at.get("dilations", [1])) != {1} or \
                len(set(strides)) != 1 or len(set(pads)) != 1:
            print("kernel_models.py: skipped %s (grouped, dilated or uneven)" % n.name, file=sys.stderr)
            continue
        key = (c, k, h, w, kh, kw, strides[0], pads[0])
        layers[key] = layers.get(key, 0) + 1
    return layers


def conv(out, i, key, count):
    c, k, h, w, kh, kw, s, p = key
    oh, ow = (h + 2 * p - kh) // s + 1, (w + 2 * p - kw) // s + 1
    node = helper.make_node("Conv", ["X", "W", "B"], ["Y"], kernel_shape=[kh, kw], strides=[s, s],
                            pads=[p] * 4)
    wt = rng.standard_normal((k, c, kh, kw)) / np.sqrt(c * kh * kw)
    save(os.path.join(out, "conv_%d.onnx" % i), node, [("X", [1, c, h, w])],
         [("W", wt), ("B", rng.standard_normal(k) * 0.1)])
    m, n, kk = k, oh * ow, c * kh * kw
    kernel = "conv %dx%d s%d p%d (x%d)" % (kh, kw, s, p, count)
    shape = "C%d K%d %dx%d" % (c, k, h, w)
    print("conv_%d\t%s\t%s\t%d\t%d\t%d\t%d" % (i, kernel, shape, m, n, kk, 2 * m * n * kk))


def main():
    out, resnet50 = sys.argv[1], sys.argv[2]
    matmul(out, 1024)
    matmul(out, 2048)
    for i, (key, count) in enumerate(resnet_convs(resnet50).items()):
        conv(out, i, key, count)


if __name__ == "__main__":
    main()
