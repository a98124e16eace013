#!/usr/bin/python3
"""Writes the small ONNX models of tests/unit/test_control.c (If, Loop, Scan,
TfIdfVectorizer).

The subgraphs capture outer values by name, have initializers of their own,
nest (an If inside a Loop body) and depend on the iteration number, so that
the unrolled forms are checked on more than the conformance cases.

Run with Debian's python (it has onnx): /usr/bin/python3 make_models.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(arr), name))


def save(name, nodes, inputs, outputs, opset=13, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="mlc-onnx tests")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))


# If with a run-time condition: then = x + c (c from the outer graph),
# else = x * two (two: the branch's own initializer).
then_g = helper.make_graph([helper.make_node("Add", ["x", "c"], ["t"])], "then_g", [],
                           [vi("t", F, [3])])
else_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["e"])], "else_g", [],
                           [vi("e", F, [3])],
                           initializer=[numpy_helper.from_array(np.array(2, np.float32), "two")])
save("if_runtime", [const("c", np.array([10, 20, 30], np.float32)),
                    helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g,
                                     else_branch=else_g)],
     [vi("cond", B, []), vi("x", F, [3])], [vi("y", F, [3])])

# If with a constant condition: only the taken branch (of another shape than
# the other branch) is inlined.
then2 = helper.make_graph([helper.make_node("ReduceSum", ["x"], ["t"], keepdims=0)], "then2", [],
                          [vi("t", F, [])])
else2 = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else2", [],
                          [vi("e", F, [3])])
save("if_const", [const("k", np.array(True)),
                  helper.make_node("If", ["k"], ["y"], name="if", then_branch=then2,
                                   else_branch=else2)],
     [vi("x", F, [3])], [vi("y", F, [])])

# If with a run-time condition and branches of different shapes: an error.
save("if_shapes", [helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then2,
                                    else_branch=else2)],
     [vi("cond", B, []), vi("x", F, [3])], [vi("y", F, [])])

# Loop, constant trip count 4, no cond: s = s * 2 + i, with a nested If on
# the iteration number (i < 2: add w, else subtract w, w from the outer
# graph); scan output: s after each step.
inner_then = helper.make_graph([helper.make_node("Add", ["s1", "w"], ["r"])], "it", [],
                               [vi("r", F, [2])])
inner_else = helper.make_graph([helper.make_node("Sub", ["s1", "w"], ["r2"])], "ie", [],
                               [vi("r2", F, [2])])
body = helper.make_graph(
    [helper.make_node("Cast", ["i"], ["fi"], to=F),
     helper.make_node("Mul", ["s_in", "twof"], ["s0"]),
     helper.make_node("Add", ["s0", "fi"], ["s1"]),
     helper.make_node("Less", ["i", "two_i"], ["small"]),
     helper.make_node("If", ["small"], ["s_out"], then_branch=inner_then, else_branch=inner_else),
     helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Identity", ["s_out"], ["scan"])],
    "body", [vi("i", I64, []), vi("cond_in", B, []), vi("s_in", F, [2])],
    [vi("cond_out", B, []), vi("s_out", F, [2]), vi("scan", F, [2])],
    initializer=[numpy_helper.from_array(np.array(2, np.float32), "twof"),
                 numpy_helper.from_array(np.array(2, np.int64), "two_i")])
save("loop_const", [helper.make_node("Loop", ["M", "", "s"], ["s_final", "scans"], name="loop", body=body)],
     [vi("s", F, [2]), vi("w", F, [2])], [vi("s_final", F, [2]), vi("scans", F, [4, 2])],
     inits=[numpy_helper.from_array(np.array(4, np.int64), "M")])

# Loop whose condition folds: M = 10, cond_out = i < 2, so 3 iterations.
body_b = helper.make_graph(
    [helper.make_node("Less", ["i", "two_i"], ["cond_out"]),
     helper.make_node("Add", ["s_in", "one"], ["s_out"]),
     helper.make_node("Cast", ["i"], ["scan"], to=F)],
    "body_b", [vi("i", I64, []), vi("cond_in", B, []), vi("s_in", F, [2])],
    [vi("cond_out", B, []), vi("s_out", F, [2]), vi("scan", F, [])],
    initializer=[numpy_helper.from_array(np.array(1, np.float32), "one"),
                 numpy_helper.from_array(np.array(2, np.int64), "two_i")])
save("loop_break", [helper.make_node("Loop", ["M", "", "s"], ["s_final", "scans"], name="loop", body=body_b)],
     [vi("s", F, [2])], [vi("s_final", F, [2]), vi("scans", F, [3])],
     inits=[numpy_helper.from_array(np.array(10, np.int64), "M")])

# Loop with a run-time trip count and condition, scan output declared (3, 2):
# 3 iterations checked at run time.
body_r = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Add", ["s_in", "x"], ["s_out"]),
     helper.make_node("Identity", ["s_out"], ["scan"])],
    "body_r", [vi("i", I64, []), vi("cond_in", B, []), vi("s_in", F, [2])],
    [vi("cond_out", B, []), vi("s_out", F, [2]), vi("scan", F, [2])])
save("loop_runtime", [helper.make_node("Loop", ["M", "cond", "x"], ["s_final", "scans"], name="loop", body=body_r)],
     [vi("M", I64, []), vi("cond", B, []), vi("x", F, [2])],
     [vi("s_final", F, [2]), vi("scans", F, [3, 2])])

# The same without scan outputs: the iteration count is unknown (an error).
body_n = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Add", ["s_in", "x"], ["s_out"])],
    "body_n", [vi("i", I64, []), vi("cond_in", B, []), vi("s_in", F, [2])],
    [vi("cond_out", B, []), vi("s_out", F, [2])])
save("loop_unbounded", [helper.make_node("Loop", ["M", "", "x"], ["s_final"], name="loop", body=body_n)],
     [vi("M", I64, []), vi("x", F, [2])], [vi("s_final", F, [2])])

# Scan-9: x (2, 3) scanned along axis 1 backwards; the running sum as state,
# scan output on axis 1 written backwards; a second scan output (s * k, k
# from the outer graph) forward on axis 0.
body_s = helper.make_graph(
    [helper.make_node("Add", ["s_in", "col"], ["s_out"]),
     helper.make_node("Identity", ["s_out"], ["y1"]),
     helper.make_node("Mul", ["s_out", "k"], ["y2"])],
    "body_s", [vi("s_in", F, [2]), vi("col", F, [2])],
    [vi("s_out", F, [2]), vi("y1", F, [2]), vi("y2", F, [2])])
save("scan9", [helper.make_node("Scan", ["s", "x"], ["s_final", "y1", "y2"], name="scan", body=body_s,
                                num_scan_inputs=1, scan_input_axes=[1], scan_input_directions=[1],
                                scan_output_axes=[1, 0], scan_output_directions=[1, 0])],
     [vi("s", F, [2]), vi("x", F, [2, 3]), vi("k", F, [])],
     [vi("s_final", F, [2]), vi("y1", F, [2, 3]), vi("y2", F, [3, 2])], opset=11)

# Scan-8: batch 2, sequence 3, reversed.
body_8 = helper.make_graph(
    [helper.make_node("Add", ["s_in", "v"], ["s_out"]),
     helper.make_node("Identity", ["s_out"], ["y"])],
    "body_8", [vi("s_in", F, [1]), vi("v", F, [1])],
    [vi("s_out", F, [1]), vi("y", F, [1])])
save("scan8", [helper.make_node("Scan", ["", "s", "x"], ["s_final", "y"], name="scan", body=body_8,
                                num_scan_inputs=1, directions=[1])],
     [vi("s", F, [2, 1]), vi("x", F, [2, 3, 1])], [vi("s_final", F, [2, 1]), vi("y", F, [2, 3, 1])],
     opset=8)

# TfIdfVectorizer: TFIDF with weights and IDF, int64 [2, 5], uni- and bigrams.
tf_attrs = dict(min_gram_length=1, max_gram_length=2, max_skip_count=1, ngram_counts=[0, 3],
                ngram_indexes=[2, 0, 1, 3, 4], pool_int64s=[1, 2, 3, 1, 2, 3, 3],
                weights=[0.5, 2.0, 3.0, 10.0, 100.0])
save("tfidf_tfidf", [helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tf", mode="TFIDF", **tf_attrs)],
     [vi("x", I64, [2, 5])], [vi("y", F, [2, 5])], opset=9)
save("tfidf_idf", [helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tf", mode="IDF", **tf_attrs)],
     [vi("x", I64, [2, 5])], [vi("y", F, [2, 5])], opset=9)
save("tfidf_strings", [helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tf", mode="TF",
                                        min_gram_length=1, max_gram_length=1, max_skip_count=0, ngram_counts=[0],
                                        ngram_indexes=[0], pool_strings=["a"])],
     [vi("x", I64, [5])], [vi("y", F, [1])], opset=9)
