# make_models.py OUT: the small models of tests/cli/test_schedule_rules.sh,
# each with its input (NAME_x.npy) and a reference output computed here
# with numpy (NAME_ref.npy).
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(7)
def save(name, nodes, x, inits, yshape, batch=None):
    """batch: the name of a symbolic batch dimension (the input and output's first)"""
    xshape = list(x.shape)
    if batch:
        xshape[0] = batch
        yshape = [batch] + list(yshape[1:])
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('x', TensorProto.FLOAT, xshape)],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, yshape)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), f'{out}/{name}.onnx')
    np.save(f'{out}/{name}_x.npy', x)
def conv_bias_relu(name, x, w, b, ref, stride=1, batch=None):
    """a model of one conv (1x1, or 3x3 with pad 1) + bias + relu, and its reference"""
    k = w.shape[2]
    conv = helper.make_node('Conv', ['x', 'W', 'B'], ['c'], kernel_shape=[k, k], pads=[k // 2] * 4,
                            strides=[stride, stride])
    save(name, [conv, helper.make_node('Relu', ['c'], ['y'])], x, {'W': w, 'B': b}, list(ref.shape), batch)
    np.save(f'{out}/{name}_ref.npy', np.maximum(ref + b[None, :, None, None], 0))
def conv3x3(x, w, stride=1):
    """numpy's 3x3 conv, pad 1, of x [N, C, H, W] by w [K, C, 3, 3]"""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    oh, ow = (x.shape[2] - 1) // stride + 1, (x.shape[3] - 1) // stride + 1
    c = np.zeros((x.shape[0], w.shape[0], oh, ow), np.float32)
    for kh in range(3):
        for kw in range(3):
            c += np.einsum('nchw,oc->nohw', xp[:, :, kh:kh + stride * oh:stride, kw:kw + stride * ow:stride], w[:, :, kh, kw])
    return c
# a classifier's matrix-vector product: x [1, 96] @ W^T, W [1000, 96]
x = rng.standard_normal((1, 96)).astype(np.float32)
w = rng.standard_normal((1000, 96)).astype(np.float32)
b = rng.standard_normal(1000).astype(np.float32)
save('gemv', [helper.make_node('Gemm', ['x', 'W', 'B'], ['y'], transB=1)], x, {'W': w, 'B': b}, [1, 1000])
np.save(f'{out}/gemv_ref.npy', x @ w.T + b)
# the same with 88 columns: 11 vectors of 8 lanes, no tile of whole columns
w = rng.standard_normal((88, 96)).astype(np.float32)
b = rng.standard_normal(88).astype(np.float32)
save('gemv88', [helper.make_node('Gemm', ['x', 'W', 'B'], ['y'], transB=1)], x, {'W': w, 'B': b}, [1, 88])
np.save(f'{out}/gemv88_ref.npy', x @ w.T + b)
# depthwise 3x3 stride 2 pad 1 on 32 channels, then a 1x1 conv (blocked)
x = rng.standard_normal((1, 32, 20, 20)).astype(np.float32)
dw = rng.standard_normal((32, 1, 3, 3)).astype(np.float32)
pw = rng.standard_normal((32, 32, 1, 1)).astype(np.float32)
save('dwconv', [helper.make_node('Conv', ['x', 'DW'], ['t'], group=32, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
                helper.make_node('Relu', ['t'], ['r']),
                helper.make_node('Conv', ['r', 'PW'], ['y'], kernel_shape=[1, 1])], x, {'DW': dw, 'PW': pw}, [1, 32, 10, 10])
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
t = np.zeros((1, 32, 10, 10), np.float32)
for kh in range(3):
    for kw in range(3):
        t += xp[:, :, kh:kh + 20:2, kw:kw + 20:2] * dw[:, 0, kh, kw][None, :, None, None]
r = np.maximum(t, 0)
np.save(f'{out}/dwconv_ref.npy', np.einsum('nchw,oc->nohw', r, pw[:, :, 0, 0]))
# max pooling 3x3 stride 2 pad 1 between two blocked convs
x = rng.standard_normal((1, 16, 24, 24)).astype(np.float32)
c1 = rng.standard_normal((32, 16, 1, 1)).astype(np.float32)
c2 = rng.standard_normal((32, 32, 1, 1)).astype(np.float32)
save('pool', [helper.make_node('Conv', ['x', 'C1'], ['a'], kernel_shape=[1, 1]),
              helper.make_node('MaxPool', ['a'], ['p'], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
              helper.make_node('Conv', ['p', 'C2'], ['y'], kernel_shape=[1, 1])], x, {'C1': c1, 'C2': c2}, [1, 32, 12, 12])
a = np.einsum('nchw,oc->nohw', x, c1[:, :, 0, 0])
ap = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
p = np.full((1, 32, 12, 12), -np.inf, np.float32)
for kh in range(3):
    for kw in range(3):
        p = np.maximum(p, ap[:, :, kh:kh + 24:2, kw:kw + 24:2])
np.save(f'{out}/pool_ref.npy', np.einsum('nchw,oc->nohw', p, c2[:, :, 0, 0]))
# a 1x1 conv of 1024 channels at 14x14 to 64 (+ bias, relu): its input
# (784 KB, read in place: flat tiles) does not fit in L2 with a panel's weights
x = rng.standard_normal((1, 1024, 14, 14)).astype(np.float32)
w = (rng.standard_normal((64, 1024, 1, 1)) * 0.05).astype(np.float32)
b = rng.standard_normal(64).astype(np.float32)
conv_bias_relu('kblocks', x, w, b, np.einsum('nchw,oc->nohw', x, w[:, :, 0, 0]))
# a matmul with no epilogue: 32 x 128 @ 128 x 64 (B constant, packed)
x = rng.standard_normal((32, 128)).astype(np.float32)
w = rng.standard_normal((128, 64)).astype(np.float32)
save('matmul', [helper.make_node('MatMul', ['x', 'W'], ['y'])], x, {'W': w}, [32, 64])
np.save(f'{out}/matmul_ref.npy', x @ w)
# a 3x3 conv of 128 channels to 528 at 7x7 (pad 1, + bias, relu): each of
# its 33 panels of 16 output channels reads 72 KB of weights, again for
# every row block of the panel
x = rng.standard_normal((1, 128, 7, 7)).astype(np.float32)
w = (rng.standard_normal((528, 128, 3, 3)) * 0.05).astype(np.float32)
b = rng.standard_normal(528).astype(np.float32)
conv_bias_relu('pblocks', x, w, b, conv3x3(x, w))
# a 3x3 conv of 256 channels to 256 at 14x14 (pad 1, + bias, relu), in
# 32-channel blocks on AVX2: each of its 8 panels reads 288 KB of weights
# (more than stays in L2 with the input rows), again for every row block
x = rng.standard_normal((1, 256, 14, 14)).astype(np.float32)
w = (rng.standard_normal((256, 256, 3, 3)) * 0.05).astype(np.float32)
b = rng.standard_normal(256).astype(np.float32)
conv_bias_relu('pblocksl2', x, w, b, conv3x3(x, w))
# a 3x3 conv of 512 channels to 128 at 7x7: 4 panels of 576 KB, too few
# for panel blocks in L2, so it keeps its reduction blocks
x = rng.standard_normal((1, 512, 7, 7)).astype(np.float32)
w = (rng.standard_normal((128, 512, 3, 3)) * 0.05).astype(np.float32)
b = rng.standard_normal(128).astype(np.float32)
conv_bias_relu('kblocksfew', x, w, b, conv3x3(x, w))
# a 1x1 conv of 160 channels to 1000 at 13x13 (+ bias, relu): 25 panels of
# 5 chunks of 8 channels (outermost: the weights, 640 KB, do not fit in
# half of L2), tiles of 2 rows, each panel's weights 25 KB, in 5 blocks of
# one input chunk (32 channels on AVX2)
x = rng.standard_normal((1, 160, 13, 13)).astype(np.float32)
w = (rng.standard_normal((1000, 160, 1, 1)) * 0.05).astype(np.float32)
b = rng.standard_normal(1000).astype(np.float32)
conv_bias_relu('pblocks1k', x, w, b, np.einsum('nchw,oc->nohw', x, w[:, :, 0, 0]))
# a 3x3 conv of 32 channels to 48 at 13x13 (pad 1, + bias, relu): a width
# of 13 with no tile of its own, computed 15 wide
x = rng.standard_normal((1, 32, 13, 13)).astype(np.float32)
w = (rng.standard_normal((48, 32, 3, 3)) * 0.1).astype(np.float32)
b = rng.standard_normal(48).astype(np.float32)
conv_bias_relu('width13', x, w, b, conv3x3(x, w))
# a 3x3 conv of 16 channels to 64 at 28x28 (pad 1, + bias, relu): on AVX2
# in 32-channel blocks, computed 30 wide in tiles of 3 x 4 vectors (a
# reduction of 144, too short to go flat)
x = rng.standard_normal((1, 16, 28, 28)).astype(np.float32)
w = (rng.standard_normal((64, 16, 3, 3)) * 0.1).astype(np.float32)
b = rng.standard_normal(64).astype(np.float32)
conv_bias_relu('block32', x, w, b, conv3x3(x, w))
# a 1x1 conv of 64 channels to 128 at 7x7 (+ bias, relu): on AVX2 in
# 32-channel blocks, over the 49 pixels flattened, tiles of 3 pixels x 4
# vectors on 51 (17 x 3), not 3 x 4 on 9 columns of each row
x = rng.standard_normal((1, 64, 7, 7)).astype(np.float32)
w = (rng.standard_normal((128, 64, 1, 1)) * 0.1).astype(np.float32)
b = rng.standard_normal(128).astype(np.float32)
conv_bias_relu('flat7', x, w, b, np.einsum('nchw,oc->nohw', x, w[:, :, 0, 0]))
# the same strided: a 1x1 conv of stride 2 from 14x14 to 7x7, flat through
# a copy of the pixels the stride picks
x = rng.standard_normal((1, 64, 14, 14)).astype(np.float32)
w = (rng.standard_normal((128, 64, 1, 1)) * 0.1).astype(np.float32)
b = rng.standard_normal(128).astype(np.float32)
conv_bias_relu('flat7s2', x, w, b, np.einsum('nchw,oc->nohw', x[:, :, ::2, ::2], w[:, :, 0, 0]), 2)
# a 1x1 conv of 256 channels to 1024 at 7x7 (+ bias, relu): flat, 32
# panels of 32 channels, each panel's weights (32 KB) in blocks
x = rng.standard_normal((1, 256, 7, 7)).astype(np.float32)
w = (rng.standard_normal((1024, 256, 1, 1)) * 0.05).astype(np.float32)
b = rng.standard_normal(1024).astype(np.float32)
conv_bias_relu('flatpb', x, w, b, np.einsum('nchw,oc->nohw', x, w[:, :, 0, 0]))
# a 3x3 conv of 64 channels to 64, stride 2, from 14x14 to 7x7 (pad 1):
# flat, reading its padded copy at row (p / 7) * 2 + kh, column (p % 7) *
# 2 + kw; the last tile's pixels 49 and 50 reach row 16 of the copy
x = rng.standard_normal((1, 64, 14, 14)).astype(np.float32)
w = (rng.standard_normal((64, 64, 3, 3)) * 0.1).astype(np.float32)
b = rng.standard_normal(64).astype(np.float32)
conv_bias_relu('flat3s2', x, w, b, conv3x3(x, w, 2), 2)
# an image model's stem: a 3x3 conv of 3 channels to 32, stride 2, pad 1,
# on 34x34 (+ relu), then a 1x1 conv (so that the stem is blocked)
x = rng.standard_normal((1, 3, 34, 34)).astype(np.float32)
w = rng.standard_normal((32, 3, 3, 3)).astype(np.float32)
pw = (rng.standard_normal((32, 32, 1, 1)) * 0.1).astype(np.float32)
save('stem', [helper.make_node('Conv', ['x', 'W'], ['c'], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
              helper.make_node('Relu', ['c'], ['r']),
              helper.make_node('Conv', ['r', 'PW'], ['y'], kernel_shape=[1, 1])], x, {'W': w, 'PW': pw}, [1, 32, 17, 17])
np.save(f'{out}/stem_ref.npy', np.einsum('nchw,oc->nohw', np.maximum(conv3x3(x, w, 2), 0), pw[:, :, 0, 0]))
# a layer norm over 256 features of 64 rows, as exporters write it
# (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add): both means
# are row sums that rule R vectorizes; the subtraction, which reads the
# mean along the row, stays after it
x = rng.standard_normal((1, 64, 256)).astype(np.float32)
g = rng.standard_normal(256).astype(np.float32)
be = rng.standard_normal(256).astype(np.float32)
nodes = [helper.make_node('ReduceMean', ['x'], ['m'], axes=[-1], keepdims=1),
         helper.make_node('Sub', ['x', 'm'], ['d']),
         helper.make_node('Pow', ['d', 'two'], ['q']),
         helper.make_node('ReduceMean', ['q'], ['v'], axes=[-1], keepdims=1),
         helper.make_node('Add', ['v', 'eps'], ['ve']),
         helper.make_node('Sqrt', ['ve'], ['s']),
         helper.make_node('Div', ['d', 's'], ['n']),
         helper.make_node('Mul', ['n', 'G'], ['ng']),
         helper.make_node('Add', ['ng', 'BE'], ['y'])]
save('layernorm', nodes, x, {'two': np.array(2, np.float32), 'eps': np.array(1e-5, np.float32), 'G': g, 'BE': be},
     [1, 64, 256])
d = x - x.mean(-1, keepdims=True)
np.save(f'{out}/layernorm_ref.npy', d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * g + be)
# a symbolic batch N (run with 2 images) on static 14x14 and 7x7: a 3x3
# conv of 16 channels to 64 (its rows, the padded copy of N images) and of
# 64 channels to 64 at 7x7 (flat on AVX2, reading its padded copy)
x = rng.standard_normal((2, 16, 14, 14)).astype(np.float32)
w = (rng.standard_normal((64, 16, 3, 3)) * 0.1).astype(np.float32)
b = rng.standard_normal(64).astype(np.float32)
conv_bias_relu('batchn', x, w, b, conv3x3(x, w), batch='N')
x = rng.standard_normal((2, 64, 7, 7)).astype(np.float32)
w = (rng.standard_normal((64, 64, 3, 3)) * 0.1).astype(np.float32)
b = rng.standard_normal(64).astype(np.float32)
conv_bias_relu('batchnflat', x, w, b, conv3x3(x, w), batch='N')
# and a 1x1 conv of 256 channels to 64 at 14x14, flat, reading its input
# in place
x = rng.standard_normal((2, 256, 14, 14)).astype(np.float32)
w = (rng.standard_normal((64, 256, 1, 1)) * 0.05).astype(np.float32)
b = rng.standard_normal(64).astype(np.float32)
conv_bias_relu('batchndirect', x, w, b, np.einsum('nchw,oc->nohw', x, w[:, :, 0, 0]), batch='N')
