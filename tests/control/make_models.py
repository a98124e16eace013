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

# If with a run-time condition and branches of different ranks: an error
# (a tensor's rank is fixed when compiling).
save("if_ranks", [helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then2,
                                   else_branch=else2)],
     [vi("cond", B, []), vi("x", F, [3])], [vi("y", F, [])])

# If with a run-time condition whose branches give outputs of different
# shapes: then = concat(x, x) (6,) and x + c (3,) ... as a pair of outputs,
# else = x * 2 (3,) and sum(x) (1,); only the taken branch runs and the
# output dims are bound when it has run.
then3 = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["t"], axis=0),
                           helper.make_node("Add", ["x", "c"], ["t2"])], "then3", [],
                          [vi("t", F, [6]), vi("t2", F, [3])])
else3 = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["e"]),
                           helper.make_node("ReduceSum", ["x"], ["e2"], keepdims=1)], "else3", [],
                          [vi("e", F, [3]), vi("e2", F, [1])],
                          initializer=[numpy_helper.from_array(np.array(2, np.float32), "two")])
save("if_shapes", [const("c", np.array([10, 20, 30], np.float32)),
                   helper.make_node("If", ["cond"], ["y", "y2"], name="if", then_branch=then3,
                                    else_branch=else3)],
     [vi("cond", B, []), vi("x", F, [3])], [vi("y", F, ["a"]), vi("y2", F, ["b"])])

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


# ---- run-time loops, scans and nesting (reference outputs in ref/, from
# ONNX Runtime on the inputs written there) --------------------------------

REF = os.path.join(HERE, "ref")


def save_inputs(name, case, arrays):
    os.makedirs(REF, exist_ok=True)
    for k, a in enumerate(arrays):
        np.save(os.path.join(REF, "%s.%s.in%d.npy" % (name, case, k)), a)


rng = np.random.default_rng(7)

for case, c in (("then", True), ("else", False)):
    save_inputs("if_shapes", case, [np.array(c), rng.standard_normal(3).astype(np.float32)])

# loop_unbounded: M is a graph input (no condition): s += x, M times.
for case, m in (("m3", 3), ("m0", 0), ("m7", 7)):
    save_inputs("loop_unbounded", case, [np.array(m, np.int64), rng.standard_normal(2).astype(np.float32)])

# Loop with a run-time trip count and condition (i < stop), a carried value
# and two scan outputs, one of them the iteration number.
body_sc = helper.make_graph(
    [helper.make_node("Mul", ["s_in", "half"], ["s0"]),
     helper.make_node("Add", ["s0", "x"], ["s_out"]),
     helper.make_node("Add", ["i", "one_i"], ["i1"]),
     helper.make_node("Less", ["i1", "stop"], ["cond_out"]),
     helper.make_node("Cast", ["i"], ["fi"], to=F),
     helper.make_node("Mul", ["s_out", "fi"], ["scan"])],
    "body_sc", [vi("i", I64, []), vi("cond_in", B, []), vi("s_in", F, [2])],
    [vi("cond_out", B, []), vi("s_out", F, [2]), vi("scan", F, [2]), vi("i1", I64, [])],
    initializer=[numpy_helper.from_array(np.array(0.5, np.float32), "half"),
                 numpy_helper.from_array(np.array(1, np.int64), "one_i")])
save("loop_scan", [helper.make_node("Loop", ["M", "", "s"], ["s_final", "scans", "iters"], name="loop",
                                    body=body_sc)],
     [vi("M", I64, []), vi("stop", I64, []), vi("s", F, [2]), vi("x", F, [2])],
     [vi("s_final", F, [2]), vi("scans", F, ["k", 2]), vi("iters", I64, ["k"])])
for case, m, stop in (("m4", 4, 100), ("stop2", 10, 2), ("m6", 6, 100)):
    save_inputs("loop_scan", case, [np.array(m, np.int64), np.array(stop, np.int64),
                                    rng.standard_normal(2).astype(np.float32),
                                    rng.standard_normal(2).astype(np.float32)])

# Scan-9 over a sequence whose length is a dim_param: a running sum as
# state; scan outputs y = s * k, and the reversed input scanned too.
body_d = helper.make_graph(
    [helper.make_node("Add", ["s_in", "row"], ["s_out"]),
     helper.make_node("Mul", ["s_out", "k"], ["y"]),
     helper.make_node("Sub", ["s_out", "rrow"], ["y2"])],
    "body_d", [vi("s_in", F, [2]), vi("row", F, [2]), vi("rrow", F, [2])],
    [vi("s_out", F, [2]), vi("y", F, [2]), vi("y2", F, [2])])
save("scan_dyn", [helper.make_node("Scan", ["s", "x", "x"], ["s_final", "y", "y2"], name="scan", body=body_d,
                                   num_scan_inputs=2, scan_input_directions=[0, 1])],
     [vi("s", F, [2]), vi("x", F, ["T", 2]), vi("k", F, [])],
     [vi("s_final", F, [2]), vi("y", F, ["T", 2]), vi("y2", F, ["T", 2])], opset=11)
for case, t in (("t3", 3), ("t5", 5), ("t1", 1)):
    save_inputs("scan_dyn", case, [rng.standard_normal(2).astype(np.float32),
                                   rng.standard_normal((t, 2)).astype(np.float32),
                                   np.array(1.5, np.float32)])

# Nesting: an If (run-time condition) whose then branch runs a Loop (trip
# count M, a graph input) whose body has an If on the iteration number's
# parity; the else branch gives one row.  The output's first dim is bound
# at run time.
in_then = helper.make_graph([helper.make_node("Add", ["s_in", "x"], ["r"])], "in_then", [], [vi("r", F, [2])])
in_else = helper.make_graph([helper.make_node("Sub", ["s_in", "x"], ["r2"])], "in_else", [], [vi("r2", F, [2])])
body_n2 = helper.make_graph(
    [helper.make_node("Mod", ["i", "two_i"], ["par"]),
     helper.make_node("Equal", ["par", "zero_i"], ["even"]),
     helper.make_node("If", ["even"], ["s_out"], name="inner_if", then_branch=in_then, else_branch=in_else),
     helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Mul", ["s_out", "s_out"], ["sq"])],
    "body_n2", [vi("i", I64, []), vi("cond_in", B, []), vi("s_in", F, [2])],
    [vi("cond_out", B, []), vi("s_out", F, [2]), vi("sq", F, [2])],
    initializer=[numpy_helper.from_array(np.array(2, np.int64), "two_i"),
                 numpy_helper.from_array(np.array(0, np.int64), "zero_i")])
out_then = helper.make_graph([helper.make_node("Loop", ["M", "", "x"], ["s_fin", "rows"], name="loop", body=body_n2)],
                             "out_then", [], [vi("rows", F, ["k", 2])])
out_else = helper.make_graph([helper.make_node("Unsqueeze", ["x", "axes0"], ["one_row"])], "out_else", [],
                             [vi("one_row", F, [1, 2])],
                             initializer=[numpy_helper.from_array(np.array([0], np.int64), "axes0")])
save("nested", [helper.make_node("If", ["cond"], ["y"], name="outer_if", then_branch=out_then, else_branch=out_else)],
     [vi("cond", B, []), vi("M", I64, []), vi("x", F, [2])], [vi("y", F, ["r", 2])])
for case, c, m in (("then3", True, 3), ("then5", True, 5), ("else", False, 4)):
    save_inputs("nested", case, [np.array(c), np.array(m, np.int64), rng.standard_normal(2).astype(np.float32)])


def lstm_model():
    """torch.nn.LSTM exported with a dynamic sequence length, h0 and c0 inputs."""
    import torch
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(3, 4)

        def forward(self, x, h0, c0):
            y, (h, c) = self.lstm(x, (h0, c0))
            return y, h, c

    net = Net().eval()
    args = (torch.zeros(5, 2, 3), torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))
    path = os.path.join(HERE, "lstm_dyn.onnx")
    torch.onnx.export(net, args, path, input_names=["x", "h0", "c0"], output_names=["y", "h", "c"],
                      dynamic_axes={"x": {0: "T"}, "y": {0: "T"}}, opset_version=13)
    for case, t in (("t4", 4), ("t7", 7), ("t1", 1)):
        save_inputs("lstm_dyn", case, [rng.standard_normal((t, 2, 3)).astype(np.float32),
                                       rng.standard_normal((1, 2, 4)).astype(np.float32),
                                       rng.standard_normal((1, 2, 4)).astype(np.float32)])


lstm_model()
