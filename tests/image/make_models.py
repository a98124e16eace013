#!/usr/bin/python3
"""Writes the small ONNX models of tests/unit/test_image_models.c and their
inputs and expected outputs (expected.txt).

The models exercise the converters of the image and indexing ops through
the whole compile path: Resize with constant scales / sizes (initializers),
with scales as a graph input and a declared output shape, Upsample-7/9 and
Resize-10, MaxPool with its Indices output, GatherElements, GatherND,
ScatterElements (with a reduction), Scatter-9 and ScatterND.  The expected
outputs come from onnx's reference implementations (the functions the ONNX
backend tests use).  The models whose output shapes are computed at run time
(run-time scales or sizes with or without a declared output shape, a
symbolic batch with sizes built from Shape(x), constant scales on symbolic
axes, Upsample-9 with run-time scales) have several input sets each,
recorded as "<model>.<k>", which the test runs in one session.

expected.txt lines: <model> in|out <index> <dtype> <rank> <dims...> : <values...>

Run with Debian's python (it has onnx): /usr/bin/python3 make_models.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.backend.test.case.node.gathernd import gather_nd_impl
from onnx.backend.test.case.node.resize import (cubic_coeffs, interpolate_nd, linear_coeffs,
                                                nearest_coeffs)
from onnx.backend.test.case.node.scatterelements import scatter_elements
from onnx.backend.test.case.node.scatternd import scatter_nd_impl

HERE = os.path.dirname(os.path.abspath(__file__))
F, I64 = TensorProto.FLOAT, TensorProto.INT64
lines = []


def vi(name, arr_or_type, shape):
    return helper.make_tensor_value_info(name, arr_or_type, shape)


def record(name, kind, arrays):
    for i, a in enumerate(arrays):
        dt = {np.dtype(np.float32): "float32", np.dtype(np.int64): "int64",
              np.dtype(np.int32): "int32"}[a.dtype]
        vals = " ".join(repr(float(v)) if a.dtype == np.float32 else str(int(v)) for v in a.ravel())
        dims = " ".join(str(d) for d in a.shape)
        lines.append("%s %s %d %s %d %s : %s" % (name, kind, i, dt, a.ndim, dims, vals))


def save(name, nodes, inputs, outputs, opset, inits=(), feeds=(), expect=(), check=False):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="mlc-onnx tests")
    m.ir_version = 7
    if check:
        onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))
    record(name, "in", feeds)
    record(name, "out", expect)


rng = np.random.RandomState(7)
x = rng.uniform(-2, 2, (1, 2, 3, 4)).astype(np.float32)

# Resize-13 linear, constant scales; the output shape is not declared.
sc = np.array([1, 1, 2, 1.5], np.float32)
y = interpolate_nd(x, linear_coeffs, scale_factors=sc).astype(np.float32)
save("resize_scales", [helper.make_node("Resize", ["x", "", "sc"], ["y"], name="rs", mode="linear")],
     [vi("x", F, x.shape)], [vi("y", F, None)], 13,
     inits=[numpy_helper.from_array(sc, "sc")], feeds=[x], expect=[y])

# Resize-11 cubic, constant sizes (empty roi and scales constants), A = -0.5, exclude_outside.
sz = np.array([1, 2, 5, 3], np.int64)
y = interpolate_nd(x, lambda r: cubic_coeffs(r, -0.5), output_size=sz, exclude_outside=True).astype(np.float32)
save("resize_sizes", [helper.make_node("Resize", ["x", "roi", "sc", "sz"], ["y"], name="rs", mode="cubic",
                                       cubic_coeff_a=-0.5, exclude_outside=1)],
     [vi("x", F, x.shape)], [vi("y", F, None)], 11,
     inits=[numpy_helper.from_array(np.zeros(0, np.float32), "roi"),
            numpy_helper.from_array(np.zeros(0, np.float32), "sc"), numpy_helper.from_array(sz, "sz")],
     feeds=[x], expect=[y])

# Resize-13 nearest with scales a graph input: the declared output shape gives it.
sc = np.array([1, 1, 0.7, 2.6], np.float32)
y = interpolate_nd(x, lambda r: nearest_coeffs(r, "round_prefer_ceil"), scale_factors=sc,
                   coordinate_transformation_mode="asymmetric").astype(np.float32)
save("resize_dyn_scales", [helper.make_node("Resize", ["x", "", "sc"], ["y"], name="rs", mode="nearest",
                                            coordinate_transformation_mode="asymmetric",
                                            nearest_mode="round_prefer_ceil")],
     [vi("x", F, x.shape), vi("sc", F, [4])], [vi("y", F, y.shape)], 13, feeds=[x, sc], expect=[y])

# Shapes computed at run time (one model, several input sets "<model>.<k>",
# run in one session; their own random numbers):
rng2 = np.random.RandomState(11)

# Run-time scales without a declared output shape (linear, half_pixel).
for k, sc in enumerate([np.array([1, 1, 2, 1.5], np.float32), np.array([1, 1, 0.6, 0.5], np.float32)]):
    y = interpolate_nd(x, linear_coeffs, scale_factors=sc).astype(np.float32)
    record("resize_dyn_undeclared.%d" % (k + 1), "in", [x, sc])
    record("resize_dyn_undeclared.%d" % (k + 1), "out", [y])
save("resize_dyn_undeclared", [helper.make_node("Resize", ["x", "", "sc"], ["y"], name="rs", mode="linear")],
     [vi("x", F, x.shape), vi("sc", F, [4])], [vi("y", F, None)], 13)

# Run-time sizes without a declared output shape (cubic, align_corners).
for k, sz in enumerate([np.array([1, 2, 6, 8], np.int64), np.array([1, 1, 2, 3], np.int64)]):
    y = interpolate_nd(x, cubic_coeffs, output_size=sz,
                       coordinate_transformation_mode="align_corners").astype(np.float32)
    record("resize_dyn_sizes.%d" % (k + 1), "in", [x, sz])
    record("resize_dyn_sizes.%d" % (k + 1), "out", [y])
save("resize_dyn_sizes", [helper.make_node("Resize", ["x", "", "", "sz"], ["y"], name="rs", mode="cubic",
                                           coordinate_transformation_mode="align_corners")],
     [vi("x", F, x.shape), vi("sz", I64, [4])], [vi("y", F, None)], 13)

# Run-time sizes with a declared output shape (1, 2, 6, 8): sizes that
# contradict it are a run error (test_image_models.c changes them).
sz = np.array([1, 2, 6, 8], np.int64)
y = interpolate_nd(x, lambda r: nearest_coeffs(r, "floor"), output_size=sz).astype(np.float32)
save("resize_dyn_declared", [helper.make_node("Resize", ["x", "", "", "sz"], ["y"], name="rs",
                                              nearest_mode="floor")],
     [vi("x", F, x.shape), vi("sz", I64, [4])], [vi("y", F, [1, 2, 6, 8])], 13, feeds=[x, sz], expect=[y])

# Symbolic batch, sizes = Concat(Slice(Shape(x), 0, 2), (6, 8)) as exporters
# write it: the output is (N, 2, 6, 8) and multiplies a (N, 1, 1, 1) input.
shape_nodes = [helper.make_node("Shape", ["x"], ["shp"], name="shape"),
               helper.make_node("Slice", ["shp", "s0", "s2"], ["nc"], name="slice")]
shape_inits = [numpy_helper.from_array(np.array([0], np.int64), "s0"),
               numpy_helper.from_array(np.array([2], np.int64), "s2")]
for k, n in enumerate([1, 2]):
    xb = rng2.uniform(-2, 2, (n, 2, 3, 4)).astype(np.float32)
    w = rng2.uniform(-1, 1, (n, 1, 1, 1)).astype(np.float32)
    y = interpolate_nd(xb, linear_coeffs, output_size=[n, 2, 6, 8]).astype(np.float32) * w
    record("resize_batch_shape.%d" % (k + 1), "in", [xb, w])
    record("resize_batch_shape.%d" % (k + 1), "out", [y])
save("resize_batch_shape",
     shape_nodes + [helper.make_node("Concat", ["nc", "hw"], ["sz"], name="concat", axis=0),
                    helper.make_node("Resize", ["x", "", "", "sz"], ["r"], name="rs", mode="linear"),
                    helper.make_node("Mul", ["r", "w"], ["y"], name="mul")],
     [vi("x", F, ["N", 2, 3, 4]), vi("w", F, ["N", 1, 1, 1])], [vi("y", F, ["N", 2, 6, 8])], 13,
     inits=shape_inits + [numpy_helper.from_array(np.array([6, 8], np.int64), "hw")])

# Symbolic batch, sizes = Concat(Unsqueeze(Gather(Shape(x), 0)),
# Unsqueeze(Gather(Shape(x), 1)), hw) with hw a graph input: (N, 2, s2, s3)
# computed at run time; the batch stays N.
for k, (n, hw) in enumerate([(1, [5, 7]), (2, [2, 9])]):
    xb = rng2.uniform(-2, 2, (n, 2, 3, 4)).astype(np.float32)
    w = rng2.uniform(-1, 1, (n, 1, 1, 1)).astype(np.float32)
    hw = np.array(hw, np.int64)
    y = interpolate_nd(xb, lambda r: nearest_coeffs(r, "round_prefer_ceil"),
                       output_size=[n, 2] + list(hw)).astype(np.float32) * w
    record("resize_batch_dyn.%d" % (k + 1), "in", [xb, w, hw])
    record("resize_batch_dyn.%d" % (k + 1), "out", [y])
gather_nodes = [helper.make_node("Shape", ["x"], ["shp"], name="shape")]
for i in range(2):
    gather_nodes += [helper.make_node("Gather", ["shp", "i%d" % i], ["g%d" % i], name="gather%d" % i, axis=0),
                     helper.make_node("Unsqueeze", ["g%d" % i, "ax0"], ["u%d" % i], name="unsqueeze%d" % i)]
save("resize_batch_dyn",
     gather_nodes + [helper.make_node("Concat", ["u0", "u1", "hw"], ["sz"], name="concat", axis=0),
                    helper.make_node("Resize", ["x", "", "", "sz"], ["r"], name="rs",
                                     nearest_mode="round_prefer_ceil"),
                    helper.make_node("Mul", ["r", "w"], ["y"], name="mul")],
     [vi("x", F, ["N", 2, 3, 4]), vi("w", F, ["N", 1, 1, 1]), vi("hw", I64, [2])], [vi("y", F, None)], 13,
     inits=[numpy_helper.from_array(np.array(0, np.int64), "i0"),
            numpy_helper.from_array(np.array(1, np.int64), "i1"),
            numpy_helper.from_array(np.array([0], np.int64), "ax0")])

# Constant scales on symbolic spatial axes: (N, 2, H, W) -> (N, 2, floor(1.5 H), 2 W).
sc = np.array([1, 1, 1.5, 2], np.float32)
for k, shp in enumerate([(1, 2, 3, 4), (2, 2, 2, 3)]):
    xb = rng2.uniform(-2, 2, shp).astype(np.float32)
    y = interpolate_nd(xb, linear_coeffs, scale_factors=sc,
                       coordinate_transformation_mode="pytorch_half_pixel").astype(np.float32)
    record("resize_sym_scales.%d" % (k + 1), "in", [xb])
    record("resize_sym_scales.%d" % (k + 1), "out", [y])
save("resize_sym_scales", [helper.make_node("Resize", ["x", "", "sc"], ["y"], name="rs", mode="linear",
                                            coordinate_transformation_mode="pytorch_half_pixel")],
     [vi("x", F, ["N", 2, "H", "W"])], [vi("y", F, None)], 13, inits=[numpy_helper.from_array(sc, "sc")])

# tf_crop_and_resize (a constant roi) with constant scales on a symbolic
# batch: the batch axis goes through the crop too, its dims at run time.
roi = np.array([0, 0, 0.2, 0.5, 1, 1, 1.1, 0.9], np.float32)
sc = np.array([1, 1, 2, 1], np.float32)  # in * scale integral: the reference uses it as the length
for k, n in enumerate([1, 3]):
    xb = rng2.uniform(-2, 2, (n, 2, 3, 4)).astype(np.float32)
    y = interpolate_nd(xb, linear_coeffs, scale_factors=sc, roi=roi, extrapolation_value=-5.0,
                       coordinate_transformation_mode="tf_crop_and_resize").astype(np.float32)
    record("resize_sym_crop.%d" % (k + 1), "in", [xb])
    record("resize_sym_crop.%d" % (k + 1), "out", [y])
save("resize_sym_crop", [helper.make_node("Resize", ["x", "roi", "sc"], ["y"], name="rs", mode="linear",
                                          coordinate_transformation_mode="tf_crop_and_resize",
                                          extrapolation_value=-5.0)],
     [vi("x", F, ["N", 2, 3, 4])], [vi("y", F, None)], 13,
     inits=[numpy_helper.from_array(roi, "roi"), numpy_helper.from_array(sc, "sc")])

# Upsample-9 with run-time scales, no declared output shape.
for k, sc in enumerate([np.array([1, 1, 2, 3], np.float32), np.array([1, 1, 1.5, 1], np.float32)]):
    y = interpolate_nd(x, lambda r: nearest_coeffs(r, "floor"), scale_factors=sc,
                       coordinate_transformation_mode="asymmetric").astype(np.float32)
    record("upsample9_dyn.%d" % (k + 1), "in", [x, sc])
    record("upsample9_dyn.%d" % (k + 1), "out", [y])
save("upsample9_dyn", [helper.make_node("Upsample", ["x", "sc"], ["y"], name="up", mode="nearest")],
     [vi("x", F, x.shape), vi("sc", F, [4])], [vi("y", F, None)], 9)

# tf_crop_and_resize with a constant roi and extrapolation.
roi = np.array([0, 0, 0.2, 0.5, 1, 1, 1.1, 0.9], np.float32)
sz = np.array([1, 2, 4, 4], np.int64)
y = interpolate_nd(x, linear_coeffs, output_size=sz, roi=roi, extrapolation_value=-5.0,
                   coordinate_transformation_mode="tf_crop_and_resize").astype(np.float32)
save("resize_crop", [helper.make_node("Resize", ["x", "roi", "", "sz"], ["y"], name="rs", mode="linear",
                                      coordinate_transformation_mode="tf_crop_and_resize",
                                      extrapolation_value=-5.0)],
     [vi("x", F, x.shape)], [vi("y", F, None)], 13,
     inits=[numpy_helper.from_array(roi, "roi"), numpy_helper.from_array(sz, "sz")], feeds=[x], expect=[y])

# Upsample-7 (attribute scales), Upsample-9 and Resize-10 (constant scales):
# nearest repeats, linear on x / scale.
y = np.repeat(np.repeat(x, 2, axis=2), 3, axis=3)
save("upsample7", [helper.make_node("Upsample", ["x"], ["y"], name="up", mode="nearest",
                                    scales=[1.0, 1.0, 2.0, 3.0])],
     [vi("x", F, x.shape)], [vi("y", F, None)], 7, feeds=[x], expect=[y])
sc = np.array([1, 1, 2, 2], np.float32)
y = interpolate_nd(x, linear_coeffs, scale_factors=sc, coordinate_transformation_mode="asymmetric").astype(np.float32)
save("upsample9", [helper.make_node("Upsample", ["x", "sc"], ["y"], name="up", mode="linear")],
     [vi("x", F, x.shape)], [vi("y", F, None)], 9, inits=[numpy_helper.from_array(sc, "sc")],
     feeds=[x], expect=[y])
sc = np.array([1, 1, 0.5, 0.5], np.float32)
y = x[:, :, ::2, ::2][:, :, :1, :2]  # ceil(o / 0.5) = 2*o for the 1 x 2 output
save("resize10", [helper.make_node("Resize", ["x", "sc"], ["y"], name="rs", mode="nearest")],
     [vi("x", F, x.shape)], [vi("y", F, None)], 10, inits=[numpy_helper.from_array(sc, "sc")],
     feeds=[x], expect=[y])

# MaxPool-12 with Indices, storage_order 1, pads: ties resolved to the first maximum.
xp = rng.randint(0, 3, (2, 2, 4, 5)).astype(np.float32)
yv = np.zeros((2, 2, 4, 5), np.float32)
yi = np.zeros((2, 2, 4, 5), np.int64)
for n in range(2):
    for c in range(2):
        for oh in range(4):
            for ow in range(5):
                best, bi = None, None
                for kh in range(3):
                    for kw in range(3):
                        h, w = oh - 1 + kh, ow - 1 + kw
                        if 0 <= h < 4 and 0 <= w < 5 and (best is None or xp[n, c, h, w] > best):
                            best, bi = xp[n, c, h, w], (h, w)
                yv[n, c, oh, ow] = best
                yi[n, c, oh, ow] = (n * 2 + c) * 20 + bi[1] * 4 + bi[0]
save("maxpool_indices", [helper.make_node("MaxPool", ["x"], ["y", "i"], name="mp", kernel_shape=[3, 3],
                                          pads=[1, 1, 1, 1], storage_order=1)],
     [vi("x", F, xp.shape)], [vi("y", F, None), vi("i", I64, None)], 12, feeds=[xp], expect=[yv, yi])

# GatherElements (negative indices), GatherND with batch_dims.
d = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
ind = np.array([[0, -1, 2], [3, 1, -4], [1, 1, 0]], np.int64)
save("gather_elements", [helper.make_node("GatherElements", ["d", "i"], ["y"], name="ge", axis=1)],
     [vi("d", F, d.shape), vi("i", I64, ind.shape)], [vi("y", F, None)], 13,
     feeds=[d, ind], expect=[np.take_along_axis(d, np.where(ind < 0, ind + 4, ind), axis=1)])
d3 = rng.randint(-50, 50, (2, 3, 4)).astype(np.int32)
ind = np.array([[[1, 3], [2, 0]], [[0, 0], [2, -1]]], np.int64)
save("gather_nd", [helper.make_node("GatherND", ["d", "i"], ["y"], name="gn", batch_dims=1)],
     [vi("d", TensorProto.INT32, d3.shape), vi("i", I64, ind.shape)], [vi("y", TensorProto.INT32, None)], 13,
     feeds=[d3, ind], expect=[gather_nd_impl(d3, np.where(ind < 0, ind + 4, ind), 1)])

# ScatterElements-16 add with duplicates (constant indices), Scatter-9, ScatterND-16 mul.
ind = np.array([[1, 1], [0, 2], [2, 2]], np.int64)
u = rng.uniform(-1, 1, (3, 2)).astype(np.float32)
save("scatter_elements", [helper.make_node("ScatterElements", ["d", "i", "u"], ["y"], name="se", axis=1,
                                           reduction="add")],
     [vi("d", F, d.shape), vi("u", F, u.shape)], [vi("y", F, None)], 16,
     inits=[numpy_helper.from_array(ind, "i")], feeds=[d, u],
     expect=[scatter_elements(d, ind, u, axis=1, reduction="add")])
save("scatter9", [helper.make_node("Scatter", ["d", "i", "u"], ["y"], name="sc", axis=0)],
     [vi("d", F, d.shape), vi("i", I64, ind.shape), vi("u", F, u.shape)], [vi("y", F, None)], 9,
     feeds=[d, ind, u], expect=[scatter_elements(d, ind, u, axis=0)])
ind = np.array([[1], [0], [1]], np.int64)
u = rng.uniform(-1, 1, (3, 3, 4)).astype(np.float32)
d = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
save("scatter_nd", [helper.make_node("ScatterND", ["d", "i", "u"], ["y"], name="sn", reduction="mul")],
     [vi("d", F, d.shape), vi("i", I64, ind.shape), vi("u", F, u.shape)], [vi("y", F, None)], 16,
     feeds=[d, ind, u], expect=[scatter_nd_impl(d, ind, u, reduction="mul")])

with open(os.path.join(HERE, "expected.txt"), "w") as f:
    f.write("# written by make_models.py: <model> in|out <index> <dtype> <rank> <dims...> : <values...>\n")
    f.write("\n".join(lines) + "\n")
