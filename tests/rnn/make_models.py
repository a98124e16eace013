#!/usr/bin/python3
"""Writes the small ONNX models of tests/unit/test_rnn_quant.c, their inputs
and expected outputs (expected.txt).

Recurrent ops: RNN, LSTM and GRU in every direction, with layout 0 and 1,
biases, initial states, peepholes, sequence_lens given at run time (ragged
lengths, so steps past a sequence's end are masked) or as a constant,
clip, input_forget, linear_before_reset, the optional activations with
their alpha/beta values, all outputs, a symbolic batch dim and a sequence
longer than one concat can join.  The expected values come from a plain
per-sequence numpy reference written here (float64), independent of the
compiler's masked unrolling.

Quantized ops: QuantizeLinear (ties to even, saturation, per-axis, int8,
int32 input), DequantizeLinear (per-axis, int8, int32), DynamicQuantize-
Linear (including an all-zero input), MatMulInteger (per-row / per-column
zero points, batches), ConvInteger (per-channel zero points, groups,
strides) and QLinearMatMul / QLinearConv (per-column / per-channel scales,
bias, int8 output), computed in numpy as the ONNX references do.

rnn_symbolic_seq.onnx (a symbolic sequence length) runs as a run-time loop;
rnn_bad_act.onnx (an unknown activation) must be refused with a clear error.

expected.txt lines: <model> in|out <index> <dtype> <rank> <dims...> : <values...>

Run with Debian's python (it has onnx): /usr/bin/python3 make_models.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F, I32, I64, U8, I8 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8, TensorProto.INT8
NP2ONNX = {np.dtype(np.float32): F, np.dtype(np.int32): I32, np.dtype(np.int64): I64,
           np.dtype(np.uint8): U8, np.dtype(np.int8): I8}
NAMES = {np.dtype(np.float32): "float32", np.dtype(np.int32): "int32", np.dtype(np.int64): "int64",
         np.dtype(np.uint8): "uint8", np.dtype(np.int8): "int8"}
lines = []
rng = np.random.RandomState(11)


def vi(name, arr, shape=None):
    return helper.make_tensor_value_info(name, NP2ONNX[arr.dtype], arr.shape if shape is None else shape)


def record(name, kind, arrays):
    for i, a in enumerate(arrays):
        vals = " ".join(repr(float(v)) if a.dtype == np.float32 else str(int(v)) for v in a.ravel())
        dims = " ".join(str(d) for d in a.shape)
        lines.append("%s %s %d %s %d %s : %s" % (name, kind, i, NAMES[a.dtype], a.ndim, dims, vals))


def save(name, node, feeds, expect, opset, inits=(), in_shapes=None, out_names=None):
    """One-node model: |feeds| (name -> array) are graph inputs, |inits| initializers."""
    inputs = [vi(k, v, None if not in_shapes or k not in in_shapes else in_shapes[k]) for k, v in feeds]
    outs = [o for o in node.output if o]
    outputs = [helper.make_tensor_value_info(o, NP2ONNX[e.dtype], None) for o, e in zip(outs, expect)]
    g = helper.make_graph([node], name, inputs, outputs,
                          initializer=[numpy_helper.from_array(v, k) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="mlc-onnx tests")
    m.ir_version = 7
    onnx.save(m, os.path.join(HERE, name + ".onnx"))
    record(name, "in", [v for _, v in feeds])
    record(name, "out", list(expect))


# ---- recurrent ops: the reference -------------------------------------------

def act(spec, x):
    name, a, b = spec
    if name == "Relu":
        return np.maximum(x, 0)
    if name == "Tanh":
        return np.tanh(x)
    if name == "Sigmoid":
        return 1 / (1 + np.exp(-x))
    if name == "Affine":
        return a * x + b
    if name == "LeakyRelu":
        return np.where(x >= 0, x, a * x)
    if name == "ThresholdedRelu":
        return np.where(x > a, x, 0)
    if name == "ScaledTanh":
        return a * np.tanh(b * x)
    if name == "HardSigmoid":
        return np.clip(a * x + b, 0, 1)
    if name == "Elu":
        return np.where(x >= 0, x, a * (np.exp(x) - 1))
    if name == "Softsign":
        return x / (1 + np.abs(x))
    if name == "Softplus":
        return np.log1p(np.exp(x))
    raise ValueError(name)


def recurrent(kind, X, W, R, B=None, lens=None, h0=None, c0=None, P=None, direction="forward", acts=None,
              clip=None, input_forget=0, lbr=0, layout=0):
    """Y, Y_h, Y_c of ONNX RNN/LSTM/GRU, one sequence at a time, in float64."""
    X = X.astype(np.float64)
    if layout:
        X = X.swapaxes(0, 1)
        h0 = None if h0 is None else h0.swapaxes(0, 1)
        c0 = None if c0 is None else c0.swapaxes(0, 1)
    T, Bn, _ = X.shape
    nd, GH, H = R.shape
    G = {"RNN": 1, "LSTM": 4, "GRU": 3}[kind]
    na = {"RNN": 1, "LSTM": 3, "GRU": 2}[kind]
    Y = np.zeros((T, nd, Bn, H))
    Yh = np.zeros((nd, Bn, H))
    Yc = np.zeros((nd, Bn, H))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    for d in range(nd):
        f, g, h = (acts[d * na:(d + 1) * na] + [None, None])[:3]
        w, r = W[d].astype(np.float64), R[d].astype(np.float64)
        bb = B[d].astype(np.float64) if B is not None else np.zeros(2 * G * H)
        wb, rb = bb[:G * H], bb[G * H:]
        p = P[d].astype(np.float64) if P is not None else np.zeros(3 * H)
        rev = direction == "reverse" or d == 1
        for b in range(Bn):
            L = T if lens is None else int(lens[b])
            hs = h0[d, b].astype(np.float64) if h0 is not None else np.zeros(H)
            cs = c0[d, b].astype(np.float64) if c0 is not None else np.zeros(H)
            for t in (range(L - 1, -1, -1) if rev else range(L)):
                x = X[t, b]
                if kind == "RNN":
                    hs = act(f, cl(w @ x + r @ hs + wb + rb))
                elif kind == "LSTM":
                    gt = w @ x + r @ hs + wb + rb
                    gi, go, gf, gc = gt[:H], gt[H:2 * H], gt[2 * H:3 * H], gt[3 * H:]
                    i = act(f, cl(gi + p[:H] * cs))
                    ff = 1 - i if input_forget else act(f, cl(gf + p[2 * H:] * cs))
                    cs = ff * cs + i * act(g, cl(gc))
                    o = act(f, cl(go + p[H:2 * H] * cs))
                    hs = o * act(h, cs)
                else:
                    z = act(f, cl(w[:H] @ x + r[:H] @ hs + wb[:H] + rb[:H]))
                    rr = act(f, cl(w[H:2 * H] @ x + r[H:2 * H] @ hs + wb[H:2 * H] + rb[H:2 * H]))
                    if lbr:
                        ht = act(g, cl(w[2 * H:] @ x + rr * (r[2 * H:] @ hs + rb[2 * H:]) + wb[2 * H:]))
                    else:
                        ht = act(g, cl(w[2 * H:] @ x + r[2 * H:] @ (rr * hs) + rb[2 * H:] + wb[2 * H:]))
                    hs = (1 - z) * ht + z * hs
                Y[t, d, b] = hs
            Yh[d, b] = hs
            Yc[d, b] = cs
    if layout:
        Y = Y.transpose(2, 0, 1, 3)
        Yh = Yh.swapaxes(0, 1)
        Yc = Yc.swapaxes(0, 1)
    return Y.astype(np.float32), Yh.astype(np.float32), Yc.astype(np.float32)


def weights(kind, nd, I, H, scale=0.5):
    G = {"RNN": 1, "LSTM": 4, "GRU": 3}[kind]
    W = rng.uniform(-scale, scale, (nd, G * H, I)).astype(np.float32)
    R = rng.uniform(-scale, scale, (nd, G * H, H)).astype(np.float32)
    B = rng.uniform(-scale, scale, (nd, 2 * G * H)).astype(np.float32)
    return W, R, B


def attrs_of(specs):
    """ONNX activations / activation_alpha / activation_beta for resolved specs."""
    uses = {"Affine": (1, 1), "LeakyRelu": (1, 0), "ThresholdedRelu": (1, 0), "ScaledTanh": (1, 1),
            "HardSigmoid": (1, 1), "Elu": (1, 0)}
    al, be = [], []
    for name, a, b in specs:
        ua, ub = uses.get(name, (0, 0))
        if ua:
            al.append(a)
        if ub:
            be.append(b)
    kw = {"activations": [s[0] for s in specs]}
    if al:
        kw["activation_alpha"] = al
    if be:
        kw["activation_beta"] = be
    return kw


def f32(v):
    return float(np.float32(v))


SIG, TANH = ("Sigmoid", 0, 0), ("Tanh", 0, 0)

# LSTM-14 bidirectional: every input (ragged sequence_lens at run time), all outputs.
T, Bn, I, H = 5, 3, 4, 3
X = rng.uniform(-1, 1, (T, Bn, I)).astype(np.float32)
W, R, B = weights("LSTM", 2, I, H)
P = rng.uniform(-0.5, 0.5, (2, 3 * H)).astype(np.float32)
h0 = rng.uniform(-1, 1, (2, Bn, H)).astype(np.float32)
c0 = rng.uniform(-1, 1, (2, Bn, H)).astype(np.float32)
lens = np.array([5, 2, 4], np.int32)
acts = [SIG, TANH, TANH] * 2
Y, Yh, Yc = recurrent("LSTM", X, W, R, B, lens, h0, c0, P, "bidirectional", acts)
save("lstm_bidi", helper.make_node("LSTM", ["X", "W", "R", "B", "L", "h0", "c0", "P"], ["Y", "Yh", "Yc"],
                                   name="lstm", hidden_size=H, direction="bidirectional"),
     [("X", X), ("W", W), ("R", R), ("B", B), ("L", lens), ("h0", h0), ("c0", c0), ("P", P)], [Y, Yh, Yc], 14)

# LSTM-14 reverse, layout 1, clip, input_forget, other activations; Y and Y_c only.
X1 = rng.uniform(-2, 2, (Bn, T, I)).astype(np.float32)
W, R, B = weights("LSTM", 1, I, H, 1.0)
c0 = rng.uniform(-1, 1, (Bn, 1, H)).astype(np.float32)
acts = [("HardSigmoid", f32(0.3), f32(0.4)), ("LeakyRelu", f32(0.2), 0), ("ScaledTanh", f32(1.5), f32(0.7))]
Y, _, Yc = recurrent("LSTM", X1, W, R, B, None, None, c0, None, "reverse", acts, clip=f32(0.9), input_forget=1,
                     layout=1)
save("lstm_rev_layout1", helper.make_node("LSTM", ["X", "W", "R", "B", "", "", "c0"], ["Y", "", "Yc"], name="lstm",
                                          hidden_size=H, direction="reverse", layout=1, clip=0.9, input_forget=1,
                                          **attrs_of(acts)),
     [("X", X1), ("W", W), ("R", R), ("B", B), ("c0", c0)], [Y, Yc], 14)

# LSTM-7 forward, constant weights and constant full sequence_lens (no mask), Y_h only.
X = rng.uniform(-1, 1, (4, 2, 3)).astype(np.float32)
W, R, B = weights("LSTM", 1, 3, 5)
lens = np.array([4, 4], np.int32)
_, Yh, _ = recurrent("LSTM", X, W, R, B, lens, acts=[SIG, TANH, TANH])
save("lstm_const", helper.make_node("LSTM", ["X", "W", "R", "B", "L"], ["", "Yh"], name="lstm", hidden_size=5),
     [("X", X)], [Yh], 7, inits=[("W", W), ("R", R), ("B", B), ("L", lens)])

# GRU-14 bidirectional, linear_before_reset, ragged lengths, initial_h, activations with
# alpha / beta.
T, Bn, I, H = 4, 3, 2, 4
X = rng.uniform(-1, 1, (T, Bn, I)).astype(np.float32)
W, R, B = weights("GRU", 2, I, H)
h0 = rng.uniform(-1, 1, (2, Bn, H)).astype(np.float32)
lens = np.array([1, 4, 3], np.int32)
acts = [("HardSigmoid", f32(0.25), f32(0.45)), ("Elu", f32(0.8), 0), SIG, ("Softsign", 0, 0)]
Y, Yh, _ = recurrent("GRU", X, W, R, B, lens, h0, direction="bidirectional", acts=acts, lbr=1)
save("gru_bidi_lbr", helper.make_node("GRU", ["X", "W", "R", "B", "L", "h0"], ["Y", "Yh"], name="gru",
                                      hidden_size=H, direction="bidirectional", linear_before_reset=1,
                                      **attrs_of(acts)),
     [("X", X), ("W", W), ("R", R), ("B", B), ("L", lens), ("h0", h0)], [Y, Yh], 14)

# GRU-14 reverse, layout 1, no bias, clip, default activations.
X1 = rng.uniform(-2, 2, (Bn, T, I)).astype(np.float32)
W, R, _ = weights("GRU", 1, I, H, 1.0)
Y, Yh, _ = recurrent("GRU", X1, W, R, direction="reverse", acts=[SIG, TANH], clip=f32(0.5), layout=1)
save("gru_rev_layout1", helper.make_node("GRU", ["X", "W", "R"], ["Y", "Yh"], name="gru", hidden_size=H,
                                         direction="reverse", layout=1, clip=0.5),
     [("X", X1), ("W", W), ("R", R)], [Y, Yh], 14)

# GRU-3 forward with an initial state and the default (reset before the product) form.
X = rng.uniform(-1, 1, (3, 2, 3)).astype(np.float32)
W, R, B = weights("GRU", 1, 3, 2)
h0 = rng.uniform(-1, 1, (1, 2, 2)).astype(np.float32)
Y, Yh, _ = recurrent("GRU", X, W, R, B, None, h0, acts=[SIG, TANH])
save("gru_v3", helper.make_node("GRU", ["X", "W", "R", "B", "", "h0"], ["Y", "Yh"], name="gru", hidden_size=2),
     [("X", X), ("W", W), ("R", R), ("B", B), ("h0", h0)], [Y, Yh], 3)

# RNN-14 bidirectional with ragged lengths and per-direction activations.
T, Bn, I, H = 4, 2, 3, 3
X = rng.uniform(-1, 1, (T, Bn, I)).astype(np.float32)
W, R, B = weights("RNN", 2, I, H)
lens = np.array([3, 1], np.int32)
h0 = rng.uniform(-1, 1, (2, Bn, H)).astype(np.float32)
acts = [("Relu", 0, 0), ("Affine", f32(0.5), f32(-0.25))]
Y, Yh, _ = recurrent("RNN", X, W, R, B, lens, h0, direction="bidirectional", acts=acts)
save("rnn_bidi", helper.make_node("RNN", ["X", "W", "R", "B", "L", "h0"], ["Y", "Yh"], name="rnn", hidden_size=H,
                                  direction="bidirectional", **attrs_of(acts)),
     [("X", X), ("W", W), ("R", R), ("B", B), ("L", lens), ("h0", h0)], [Y, Yh], 14)

# RNN-7 with ThresholdedRelu, Softplus (one activation each for two models).
for nm, spec in (("rnn_thresholded", ("ThresholdedRelu", f32(0.1), 0)), ("rnn_softplus", ("Softplus", 0, 0))):
    X = rng.uniform(-1, 1, (3, 2, 3)).astype(np.float32)
    W, R, B = weights("RNN", 1, 3, 4)
    Y, Yh, _ = recurrent("RNN", X, W, R, B, acts=[spec])
    save(nm, helper.make_node("RNN", ["X", "W", "R", "B"], ["Y", "Yh"], name="rnn", hidden_size=4,
                              **attrs_of([spec])),
         [("X", X), ("W", W), ("R", R), ("B", B)], [Y, Yh], 7)

# RNN-14 over 70 steps: Y joins more pieces than one concat takes.
X = rng.uniform(-1, 1, (70, 1, 2)).astype(np.float32)
W, R, B = weights("RNN", 1, 2, 2)
Y, Yh, _ = recurrent("RNN", X, W, R, B, acts=[TANH])
save("rnn_long", helper.make_node("RNN", ["X", "W", "R", "B"], ["Y", "Yh"], name="rnn", hidden_size=2),
     [("X", X), ("W", W), ("R", R), ("B", B)], [Y, Yh], 14)

# LSTM-14 with a symbolic batch dim "N" (run with N = 3) and run-time sequence_lens.
X = rng.uniform(-1, 1, (3, 3, 2)).astype(np.float32)
W, R, B = weights("LSTM", 1, 2, 3)
lens = np.array([2, 3, 1], np.int32)
Y, Yh, Yc = recurrent("LSTM", X, W, R, B, lens, acts=[SIG, TANH, TANH])
save("lstm_sym_batch", helper.make_node("LSTM", ["X", "W", "R", "B", "L"], ["Y", "Yh", "Yc"], name="lstm",
                                        hidden_size=3),
     [("X", X), ("W", W), ("R", R), ("B", B), ("L", lens)], [Y, Yh, Yc], 14,
     in_shapes={"X": [3, "N", 2], "L": ["N"]})

# A symbolic sequence length (a run-time loop); an error: an unknown activation.
g = helper.make_graph([helper.make_node("RNN", ["X", "W", "R"], ["Y"], name="rnn", hidden_size=2)], "e1",
                      [helper.make_tensor_value_info("X", F, ["T", 1, 2]),
                       helper.make_tensor_value_info("W", F, [1, 2, 2]),
                       helper.make_tensor_value_info("R", F, [1, 2, 2])],
                      [helper.make_tensor_value_info("Y", F, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
m.ir_version = 7
onnx.save(m, os.path.join(HERE, "rnn_symbolic_seq.onnx"))
g = helper.make_graph([helper.make_node("GRU", ["X", "W", "R"], ["Y"], name="gru", hidden_size=2,
                                        activations=["Sigmoid", "Swish"])], "e2",
                      [helper.make_tensor_value_info("X", F, [2, 1, 2]),
                       helper.make_tensor_value_info("W", F, [1, 6, 2]),
                       helper.make_tensor_value_info("R", F, [1, 6, 2])],
                      [helper.make_tensor_value_info("Y", F, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
m.ir_version = 7
onnx.save(m, os.path.join(HERE, "rnn_bad_act.onnx"))


# ---- quantized ops -----------------------------------------------------------

def saturate(v, dt):
    info = np.iinfo(dt)
    return np.clip(v, info.min, info.max).astype(dt)


def quantize(x, s, zp, dt):
    q = np.rint(x.astype(np.float32) / s)  # float32 division, ties to even
    return saturate(q + (zp.astype(np.float32) if zp is not None else np.float32(0)), dt)


# QuantizeLinear-13 int8 per axis 0: ties to even both ways, saturation both ways.
x = np.array([[1, 3, 5, -1, -3, -5, 1000, -1000],
              [0.5, 1.5, 2.5, -0.5, -1.5, 7.4, 300, -300],
              [2, 6, 10, -2, -6, -10, 0, 1]], np.float32)
s = np.array([2, 1, 4], np.float32)
zp = np.array([0, -3, 10], np.int8)
y = quantize(x, s.reshape(3, 1), zp.reshape(3, 1), np.int8)
save("quant_axis0_i8", helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], name="q", axis=0),
     [("x", x), ("s", s), ("zp", zp)], [y], 13)

# QuantizeLinear-10 of an int32 input, uint8 without a zero point.
xi = np.array([-7, 0, 1, 3, 5, 7, 200, 1000], np.int32)
s = np.array(2.0, np.float32)
y = quantize(xi, s, None, np.uint8)
save("quant_v10_i32", helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q"),
     [("x", xi), ("s", s)], [y], 10)

# DequantizeLinear-13 int8 per axis -1; DequantizeLinear-10 int32 without a zero point.
x = rng.randint(-128, 128, (2, 3, 4)).astype(np.int8)
s = np.array([0.5, 0.25, 2, 0.125], np.float32)
zp = np.array([-4, 0, 7, 127], np.int8)
y = (x.astype(np.float32) - zp.astype(np.float32)) * s
save("dequant_axis_i8", helper.make_node("DequantizeLinear", ["x", "s", "zp"], ["y"], name="dq", axis=-1),
     [("x", x), ("s", s), ("zp", zp)], [y], 13)
xi = np.array([-100000, -1, 0, 5, 123456], np.int32)
s = np.array(0.5, np.float32)
save("dequant_i32", helper.make_node("DequantizeLinear", ["x", "s"], ["y"], name="dq"),
     [("x", xi), ("s", s)], [xi.astype(np.float32) * s], 10)


def dyn_quant(X):
    x_min = np.minimum(0, np.min(X))
    x_max = np.maximum(0, np.max(X))
    sc = np.float32((x_max - x_min) / np.float32(255))
    div = sc if sc != 0 else np.float32(1)
    zpv = np.clip(np.rint(np.float32(0 - x_min) / div), 0, 255).astype(np.uint8)
    yv = np.clip(np.rint(X / div) + np.float32(zpv), 0, 255).astype(np.uint8)
    return yv, np.array(sc, np.float32), np.array(zpv, np.uint8)


X = rng.uniform(-3, 5, (4, 5)).astype(np.float32)
save("dynquant", helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "zp"], name="dq"),
     [("x", X)], list(dyn_quant(X)), 11)
X = np.zeros((2, 3), np.float32)
save("dynquant_zero", helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "zp"], name="dq"),
     [("x", X)], list(dyn_quant(X)), 11)

# MatMulInteger: int8 A (batched) with per-row zero points, uint8 B with per-column ones.
A = rng.randint(-128, 128, (2, 3, 5)).astype(np.int8)
Bm = rng.randint(0, 256, (5, 4)).astype(np.uint8)
azp = np.array([-3, 0, 100], np.int8)
bzp = np.array([0, 128, 255, 7], np.uint8)
y = (A.astype(np.int32) - azp.astype(np.int32).reshape(3, 1)) @ (Bm.astype(np.int32) - bzp.astype(np.int32))
save("matmulint", helper.make_node("MatMulInteger", ["A", "B", "azp", "bzp"], ["y"], name="mm"),
     [("A", A), ("B", Bm), ("azp", azp), ("bzp", bzp)], [y.astype(np.int32)], 10)


def conv_ref(x, w, strides, pads, group, bias=None):
    """int64 NCHW convolution with zero padding."""
    N, C, Hh, Ww = x.shape
    M, Cg, KH, KW = w.shape
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    OH = (Hh + pads[0] + pads[2] - KH) // strides[0] + 1
    OW = (Ww + pads[1] + pads[3] - KW) // strides[1] + 1
    y = np.zeros((N, M, OH, OW), np.int64)
    mg = M // group
    for n in range(N):
        for m in range(M):
            gi = m // mg
            for oh in range(OH):
                for ow in range(OW):
                    win = xp[n, gi * Cg:(gi + 1) * Cg, oh * strides[0]:oh * strides[0] + KH,
                             ow * strides[1]:ow * strides[1] + KW]
                    y[n, m, oh, ow] = (win * w[m].astype(np.int64)).sum()
    if bias is not None:
        y += bias.reshape(1, M, 1, 1)
    return y


# ConvInteger: int8, group 2, strides, pads, per-output-channel w zero points.
x = rng.randint(-128, 128, (1, 4, 5, 5)).astype(np.int8)
w = rng.randint(-128, 128, (4, 2, 3, 3)).astype(np.int8)
xzp = np.array(-5, np.int8)
wzp = np.array([1, -2, 0, 100], np.int8)
y = conv_ref(x.astype(np.int64) - int(xzp), w.astype(np.int64) - wzp.astype(np.int64).reshape(4, 1, 1, 1),
             (2, 1), (1, 0, 1, 2), 2)
# padding holds x's zero point, which the shift makes 0, as the ONNX definition does
save("convint", helper.make_node("ConvInteger", ["x", "w", "xzp", "wzp"], ["y"], name="ci", strides=[2, 1],
                                 pads=[1, 0, 1, 2], group=2),
     [("x", x), ("w", w), ("xzp", xzp), ("wzp", wzp)], [y.astype(np.int32)], 10)


def requant(acc, mult, yzp, dt):
    f = np.rint(acc.astype(np.float32) * mult) + np.float32(yzp)
    return saturate(f, dt)


# QLinearMatMul: uint8 a per tensor, int8 b with per-column scale and zero point, int8 y.
a = rng.randint(0, 256, (2, 3, 6)).astype(np.uint8)
b = rng.randint(-128, 128, (6, 4)).astype(np.int8)
a_s, a_zp = np.array(0.02, np.float32), np.array(120, np.uint8)
b_s = np.array([0.01, 0.03, 0.005, 0.02], np.float32)
b_zp = np.array([0, -5, 3, 10], np.int8)
y_s, y_zp = np.array(0.05, np.float32), np.array(-10, np.int8)
acc = (a.astype(np.int32) - np.int32(a_zp)) @ (b.astype(np.int32) - b_zp.astype(np.int32))
mult = (a_s * b_s) / y_s
save("qlinear_matmul", helper.make_node("QLinearMatMul", ["a", "as", "azp", "b", "bs", "bzp", "ys", "yzp"], ["y"],
                                        name="qm"),
     [("a", a), ("as", a_s), ("azp", a_zp), ("b", b), ("bs", b_s), ("bzp", b_zp), ("ys", y_s), ("yzp", y_zp)],
     [requant(acc, mult, y_zp, np.int8)], 10)

# QLinearConv: uint8 x, per-channel w scale and zero point, int32 bias, uint8 y; weights as initializers.
x = rng.randint(0, 256, (2, 3, 4, 4)).astype(np.uint8)
w = rng.randint(0, 256, (2, 3, 2, 2)).astype(np.uint8)
x_s, x_zp = np.array(0.01, np.float32), np.array(128, np.uint8)
w_s = np.array([0.02, 0.005], np.float32)
w_zp = np.array([120, 130], np.uint8)
y_s, y_zp = np.array(0.1, np.float32), np.array(100, np.uint8)
bias = np.array([500, -2000], np.int32)
acc = conv_ref(x.astype(np.int64) - int(x_zp), w.astype(np.int64) - w_zp.astype(np.int64).reshape(2, 1, 1, 1),
               (1, 1), (1, 1, 0, 0), 1, bias)
mult = ((x_s * w_s) / y_s).reshape(1, 2, 1, 1)
save("qlinear_conv", helper.make_node("QLinearConv", ["x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "bias"], ["y"],
                                      name="qc", pads=[1, 1, 0, 0]),
     [("x", x), ("xs", x_s), ("xzp", x_zp)], [requant(acc.astype(np.int32), mult, y_zp, np.uint8)], 10,
     inits=[("w", w), ("ws", w_s), ("wzp", w_zp), ("ys", y_s), ("yzp", y_zp), ("bias", bias)])

with open(os.path.join(HERE, "expected.txt"), "w") as f:
    f.write("# written by make_models.py: <model> in|out <index> <dtype> <rank> <dims...> : <values...>\n")
    f.write("\n".join(lines) + "\n")
