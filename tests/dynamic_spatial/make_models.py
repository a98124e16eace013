#!/usr/bin/python3
"""Writes the models of tests/cli/test_dynamic_spatial.sh: real exports whose
spatial or time extents are symbolic (dim_params), with seeded inputs at
several sizes.  Reference outputs come from ONNX Runtime (regen.sh).

  squeezenet.onnx  torchvision SqueezeNet 1.1 (10 classes, seeded random
                   weights), input x [N, 3, H, W]: strided convs, ceil-mode
                   max pools, concats of 1x1 and 3x3 branches
  audio.onnx       a 1-d conv net over x [N, 1, T]: reflect padding,
                   strided convs, a ceil-mode average pool; outputs the
                   frame features y [N, 8, T'] and their mean over time
  slice1d.onnx     x [N, 2, T] sliced with constant starts/ends/steps on T
                   (x[..., 1:-1], x[..., ::2], x[..., -3:], x[..., ::-1],
                   x[..., 5:1:-2]) and upsampled by 2 (nearest, and linear
                   after a slice): extents that are derived symbols of T
  resize2d.onnx    a conv over x [1, 3, H, W], then Resize by scales 2
                   (nearest, linear), 0.5 and 1.5 (linear), to constant
                   sizes, a slice x[:, :, 1:-1, ::2] and a max pool with
                   indices

Run with Debian's python (it has torch, torchvision, onnx and numpy):
  /usr/bin/python3 make_models.py [NAME...]   (default: all)
"""
import os
import sys

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))


class Audio(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv1d(1, 16, 9, stride=2, padding=4, padding_mode="reflect")
        self.c2 = torch.nn.Conv1d(16, 32, 5, padding=2, padding_mode="reflect")
        self.pool = torch.nn.AvgPool1d(3, stride=2, ceil_mode=True)
        self.c3 = torch.nn.Conv1d(32, 8, 3)

    def forward(self, x):
        y = self.c3(self.pool(torch.relu(self.c2(torch.relu(self.c1(x))))))
        return y, y.mean(dim=2)


def export(model, x, name, inputs, outputs, axes):
    torch.onnx.export(model, x, os.path.join(HERE, name + ".onnx"), input_names=inputs,
                      output_names=outputs, dynamic_axes=axes, opset_version=13)


def onnx_helper_models():
    """slice1d and resize2d, written with onnx.helper (opset 13)."""
    from onnx import TensorProto, helper, save

    big = 2 ** 63 - 1

    def ints(name, v):
        return helper.make_tensor(name, TensorProto.INT64, [len(v)], v)

    def floats(name, shape, v):
        return helper.make_tensor(name, TensorProto.FLOAT, shape, v)

    def write(name, nodes, x, outs, inits, int_outs=()):
        outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs]
        outs += [helper.make_tensor_value_info(o, TensorProto.INT64, None) for o in int_outs]
        g = helper.make_graph(nodes, name, [x], outs, inits)
        save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(HERE, name + ".onnx"))

    # slice1d: x [N, 2, T]
    inits, nodes, outs = [ints("ax", [2])], [], []
    for i, (b, e, st) in enumerate([(1, -1, 1), (0, big, 2), (-3, big, 1), (-1, -big, -1), (5, 1, -2)]):
        inits += [ints("b%d" % i, [b]), ints("e%d" % i, [e]), ints("s%d" % i, [st])]
        nodes.append(helper.make_node("Slice", ["x", "b%d" % i, "e%d" % i, "ax", "s%d" % i], ["y%d" % i]))
        outs.append("y%d" % i)
    inits.append(floats("up", [3], [1, 1, 2]))
    nodes.append(helper.make_node("Resize", ["x", "", "up"], ["u_nearest"], mode="nearest",
                                  coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
    nodes.append(helper.make_node("Resize", ["y0", "", "up"], ["u_linear"], mode="linear"))
    outs += ["u_nearest", "u_linear"]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, "T"])
    write("slice1d", nodes, x, outs, inits)

    # resize2d: x [1, 3, H, W]
    rng = np.random.default_rng(1)
    inits = [floats("w", [4, 3, 3, 3], rng.standard_normal(108).astype(np.float32).tolist())]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])]
    outs = []
    for i, (sc, mode, coord) in enumerate([(2.0, "nearest", "asymmetric"), (2.0, "linear", "half_pixel"),
                                           (0.5, "linear", "half_pixel"), (1.5, "linear", "align_corners")]):
        inits.append(floats("sc%d" % i, [4], [1, 1, sc, sc]))
        kw = {"nearest_mode": "floor"} if mode == "nearest" else {}
        nodes.append(helper.make_node("Resize", ["c", "", "sc%d" % i], ["r%d" % i], mode=mode,
                                      coordinate_transformation_mode=coord, **kw))
        outs.append("r%d" % i)
    inits.append(ints("sz", [1, 4, 12, 10]))
    nodes.append(helper.make_node("Resize", ["c", "", "", "sz"], ["r_sizes"], mode="linear"))
    inits += [ints("sb", [1, 0]), ints("se", [-1, big]), ints("sa", [2, 3]), ints("ss", [1, 2])]
    nodes.append(helper.make_node("Slice", ["c", "sb", "se", "sa", "ss"], ["s"]))
    nodes.append(helper.make_node("MaxPool", ["c"], ["p", "p_indices"], kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1]))
    outs += ["r_sizes", "s", "p"]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "H", "W"])
    write("resize2d", nodes, x, outs, inits, ["p_indices"])


def main():
    names = sys.argv[1:] or ["squeezenet", "audio", "slice1d", "resize2d"]
    torch.manual_seed(0)
    if "slice1d" in names or "resize2d" in names:
        onnx_helper_models()
    if "squeezenet" not in names and "audio" not in names:
        write_inputs(names)
        return
    sq = torchvision.models.squeezenet1_1(num_classes=10).eval()
    export(sq, torch.randn(1, 3, 224, 224), "squeezenet", ["x"], ["y"],
           {"x": {0: "N", 2: "H", 3: "W"}, "y": {0: "N"}})
    audio = Audio().eval()
    export(audio, torch.randn(1, 1, 400), "audio", ["x"], ["y", "m"],
           {"x": {0: "N", 2: "T"}, "y": {0: "N", 2: "T_out"}, "m": {0: "N"}})
    write_inputs(names)


def write_inputs(names):
    rng = np.random.default_rng(0)
    sizes = {"squeezenet": [(1, 3, 224, 224), (1, 3, 97, 131), (2, 3, 64, 96)],
             "audio": [(1, 1, 16000), (2, 1, 1001), (1, 1, 37)],
             "slice1d": [(1, 2, 7), (2, 2, 16), (1, 2, 3)],
             "resize2d": [(1, 3, 5, 7), (1, 3, 8, 8), (1, 3, 3, 11)]}
    for i, (name, shapes) in enumerate(sizes.items()):
        if i >= 2:  # the later models: a generator each, so any subset is reproducible
            rng = np.random.default_rng(i)
        for shp in shapes:
            tag = "x".join(str(d) for d in shp)
            x = rng.standard_normal(shp).astype(np.float32)
            if name in names:
                np.save(os.path.join(HERE, "%s.%s.input_0.npy" % (name, tag)), x)


if __name__ == "__main__":
    main()
