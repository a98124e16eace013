#!/usr/bin/python3
"""Writes encoder.onnx for tests/cli/test_dynamic_spatial.sh: a PyTorch
TransformerEncoderLayer (d_model 32, 2 heads, FFN 64, seeded weights)
exported with a dynamic batch N and sequence length T.  Its attention
computes its reshape targets from Shape, Gather, Concat and integer
arithmetic on N and T, which the compiler must resolve to symbolic dims
(graph/sym_values.c) for the matmuls' inner dims to agree.  Inputs at three
sizes; references from ONNX Runtime (regen.sh).

Run with Debian's python (it has torch, onnx and numpy):
  /usr/bin/python3 make_seq_models.py
"""
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    torch.manual_seed(0)
    m = torch.nn.TransformerEncoderLayer(d_model=32, nhead=2, dim_feedforward=64, dropout=0.1,
                                         activation="relu", batch_first=True).eval()
    x = torch.randn(1, 16, 32)
    # exported with grad enabled: under no_grad the layer takes a fused path
    # that has no ONNX export
    torch.onnx.export(m, (x,), os.path.join(HERE, "encoder.onnx"), opset_version=13,
                      input_names=["x"], output_names=["y"], do_constant_folding=True,
                      training=torch.onnx.TrainingMode.EVAL,
                      dynamic_axes={"x": {0: "N", 1: "T"}, "y": {0: "N", 1: "T"}})
    rng = np.random.default_rng(1)
    for shp in [(1, 16, 32), (2, 7, 32), (1, 1, 32)]:
        tag = "x".join(str(d) for d in shp)
        np.save(os.path.join(HERE, "encoder.%s.input_0.npy" % tag), rng.standard_normal(shp).astype(np.float32))


if __name__ == "__main__":
    main()
