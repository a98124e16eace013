#!/usr/bin/env python3
"""make_chain.py: writes a chain model with N nodes for compile-time benchmarks.

  make_chain.py relu  N OUT.onnx   x -> Relu -> Relu -> ... (N nodes) -> y
  make_chain.py mixed N OUT.onnx   a repeating run of different ops (Add and Mul
                                   with small constants, Relu, Sigmoid, Neg,
                                   Transpose, Reshape, Abs), each constant its
                                   own initializer, so that kernels and
                                   constants are not all identical
  make_chain.py kernels N OUT.onnx x -> LeakyRelu -> ... (N nodes), each with
                                   its own alpha: N distinct kernels
  make_chain.py wide  N OUT.onnx   N/2 independent branches (Add with a
                                   constant, then Relu) of x, summed pairwise
                                   in a balanced tree into y

The input x is float32 [2, 8]; every variant keeps the values bounded so that
long chains neither overflow nor underflow.  Needs the onnx Python package.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SHAPE = [2, 8]


def const(inits, name, value, dtype=np.float32):
    inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
    return name


def relu_chain(n):
    nodes, prev = [], "x"
    for i in range(n):
        out = "y" if i == n - 1 else "t%d" % i
        nodes.append(helper.make_node("Relu", [prev], [out], name="relu%d" % i))
        prev = out
    return nodes, []


# One step of the mixed chain: (op, builder) where builder returns the node
# list for input |a| and output |b|, adding constants to |inits|.  The steps
# keep the value range bounded: Add/Mul constants are small, Sigmoid maps into
# (0, 1), Neg and Abs undo each other's sign.
def mixed_step(k, i, a, b, inits):
    nm = "n%d" % i
    r = k % 8
    if r == 0:
        c = const(inits, "c%d" % i, np.full(SHAPE, 0.01 * (i % 7 + 1)))
        return [helper.make_node("Add", [a, c], [b], name=nm)]
    if r == 1:
        c = const(inits, "c%d" % i, np.full([SHAPE[1]], 1.0 + 0.001 * (i % 5)))
        return [helper.make_node("Mul", [a, c], [b], name=nm)]
    if r == 2:
        return [helper.make_node("Relu", [a], [b], name=nm)]
    if r == 3:
        return [helper.make_node("Sigmoid", [a], [b], name=nm)]
    if r == 4:
        return [helper.make_node("Neg", [a], [b], name=nm)]
    if r == 5:
        return [helper.make_node("Abs", [a], [b], name=nm)]
    if r == 6:
        return [helper.make_node("Transpose", [a], [b], name=nm, perm=[1, 0])]
    # r == 7: back to [2, 8] after the Transpose
    s = const(inits, "s%d" % i, SHAPE, np.int64)
    return [helper.make_node("Reshape", [a, s], [b], name=nm)]


def mixed_chain(n):
    nodes, inits, prev = [], [], "x"
    for i in range(n):
        # a chain that stops after the Transpose would end transposed
        out = "y" if i == n - 1 else "t%d" % i
        r = i % 8
        if i == n - 1 and r == 6:
            r = 2
        nodes += mixed_step(r, i, prev, out, inits)
        prev = out
    return nodes, inits


def kernels_chain(n):
    nodes, prev = [], "x"
    for i in range(n):
        out = "y" if i == n - 1 else "t%d" % i
        # alphas in (0.5, 1]: distinct, and the chain stays bounded
        alpha = 1.0 - 0.5 * i / n
        nodes.append(helper.make_node("LeakyRelu", [prev], [out], name="lrelu%d" % i, alpha=alpha))
        prev = out
    return nodes, []


def wide(n):
    nodes, inits = [], []
    k = max(1, n // 2)
    level = []
    for i in range(k):
        c = const(inits, "c%d" % i, np.full(SHAPE, 0.001 * (i % 11)))
        nodes.append(helper.make_node("Add", ["x", c], ["a%d" % i], name="add%d" % i))
        nodes.append(helper.make_node("Relu", ["a%d" % i], ["b%d" % i], name="relu%d" % i))
        level.append("b%d" % i)
    j = 0
    while len(level) > 1:
        nxt = []
        for p in range(0, len(level) - 1, 2):
            out = "s%d" % j
            nodes.append(helper.make_node("Add", [level[p], level[p + 1]], [out], name="sum%d" % j))
            nxt.append(out)
            j += 1
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    nodes.append(helper.make_node("Identity", [level[0]], ["y"], name="out"))
    return nodes, inits


KINDS = {"relu": relu_chain, "mixed": mixed_chain, "kernels": kernels_chain, "wide": wide}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in KINDS:
        sys.stderr.write("usage: make_chain.py relu|mixed|kernels|wide N OUT.onnx\n")
        return 2
    kind, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if n < 1:
        sys.stderr.write("make_chain.py: N must be at least 1\n")
        return 2
    nodes, inits = KINDS[kind](n)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)
    g = helper.make_graph(nodes, "%s_chain_%d" % (kind, n), [x], [y], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="mlc-onnx make_chain.py")
    m.ir_version = 8
    onnx.save(m, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
