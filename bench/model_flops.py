"""Print the FLOPs (2 x multiply-adds) of the Conv, Gemm and MatMul nodes of
an ONNX model, from its inferred shapes.

    /usr/bin/python3 bench/model_flops.py MODEL.onnx

The fallback of bench/run.sh when the reference tools' flops.py is missing.
"""
import sys

import numpy as np
import onnx
from onnx import helper, shape_inference


def dims(vi):
    shape = vi.type.tensor_type.shape
    return [d.dim_value if d.HasField("dim_value") else 1 for d in shape.dim]


def flops(path):
    g = shape_inference.infer_shapes(onnx.load(path), data_prop=True).graph
    shapes = {vi.name: dims(vi) for vi in list(g.input) + list(g.value_info) + list(g.output)}
    shapes.update({t.name: list(t.dims) for t in g.initializer})
    macs = 0
    for n in g.node:
        at = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "Conv":
            w, y = shapes[n.input[1]], shapes[n.output[0]]
            macs += int(np.prod(y)) * int(np.prod(w[1:]))
        elif n.op_type == "Gemm":
            a, b = shapes[n.input[0]], shapes[n.input[1]]
            m, k = (a[1], a[0]) if at.get("transA", 0) else (a[0], a[1])
            macs += m * k * (b[0] if at.get("transB", 0) else b[1])
        elif n.op_type == "MatMul":
            a, b = shapes[n.input[0]], shapes[n.input[1]]
            a = [1] + a if len(a) == 1 else a
            b = b + [1] if len(b) == 1 else b
            batch = np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
            macs += int(np.prod(batch)) * a[-2] * a[-1] * b[-1]
    return 2 * macs


if __name__ == "__main__":
    print(flops(sys.argv[1]))
