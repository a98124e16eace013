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

Run with Debian's python (it has torch, torchvision, onnx and numpy):
  /usr/bin/python3 make_models.py
"""
import os

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


def main():
    torch.manual_seed(0)
    sq = torchvision.models.squeezenet1_1(num_classes=10).eval()
    export(sq, torch.randn(1, 3, 224, 224), "squeezenet", ["x"], ["y"],
           {"x": {0: "N", 2: "H", 3: "W"}, "y": {0: "N"}})
    audio = Audio().eval()
    export(audio, torch.randn(1, 1, 400), "audio", ["x"], ["y", "m"],
           {"x": {0: "N", 2: "T"}, "y": {0: "N", 2: "T_out"}, "m": {0: "N"}})
    rng = np.random.default_rng(0)
    sizes = {"squeezenet": [(1, 3, 224, 224), (1, 3, 97, 131), (2, 3, 64, 96)],
             "audio": [(1, 1, 16000), (2, 1, 1001), (1, 1, 37)]}
    for name, shapes in sizes.items():
        for shp in shapes:
            tag = "x".join(str(d) for d in shp)
            np.save(os.path.join(HERE, "%s.%s.input_0.npy" % (name, tag)),
                    rng.standard_normal(shp).astype(np.float32))


if __name__ == "__main__":
    main()
