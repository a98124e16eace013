/*
** math.c: converters of ONNX's math category: elementwise arithmetic and
** activations, Clip, variadic Max/Min/Sum, Gemm, MatMul and Softmax.
*/
#include <string.h>

#include "frontend/frontend_int.h"

/* ---- binary arithmetic -------------------------------------------------- */

/*
** Legacy broadcasting of opsets < 7: with broadcast=1 and an axis, B's dims
** line up with A's from that axis on; B is reshaped with trailing 1s so that
** numpy broadcasting gives the same result.  Without an axis, B matches A's
** trailing dims, which is numpy broadcasting already; with broadcast=0 the
** shapes are equal.
*/
static mlc_status legacy_align(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *a, mlc_value **b) {
  if (!mlc_fe_attr_int(n, "broadcast", 0) || !mlc_fe_attr(n, "axis")) return NULL;
  int ra = a->type.rank, rb = (*b)->type.rank;
  int64_t axis = mlc_fe_attr_int(n, "axis", 0);
  if (axis < 0) axis += ra;
  if (axis < 0 || axis + rb > ra)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT,
                        "broadcast axis %lld does not fit B of rank %d into A of rank %d",
                        (long long)mlc_fe_attr_int(n, "axis", 0), rb, ra);
  int64_t dims[64];
  if (ra > 64) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "rank %d is too large", ra);
  int r = 0;
  for (int i = 0; i < rb; i++) dims[r++] = (*b)->type.dims[i];
  for (int64_t i = axis + rb; i < ra; i++) dims[r++] = 1;
  return mlc_fe_reshape(cx, *b, dims, r, b);
}

mlc_status mlc_fe_binary_node(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *const *in,
                              mlc_op op, mlc_value **out) {
  mlc_value *b = in[1];
  MLC_RETURN_IF_ERROR(legacy_align(cx, n, in[0], &b));
  return mlc_fe_binary(cx, op, in[0], b, out);
}

/* ONNX Add-1,6,7,13,14: C = A + B */
MLC_FE_CVT(add) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_ADD, &out[0]);
}

/* ONNX Sub-1,6,7,13,14: C = A - B */
MLC_FE_CVT(sub) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_SUB, &out[0]);
}

/* ONNX Mul-1,6,7,13,14: C = A * B */
MLC_FE_CVT(mul) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_MUL, &out[0]);
}

/* ONNX Div-1,6,7,13,14: C = A / B */
MLC_FE_CVT(div) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_DIV, &out[0]);
}

/* ONNX Pow-1,7,12,13,15: Z = X ^ Y (from 12, Y may have another dtype) */
MLC_FE_CVT(pow) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_POW, &out[0]);
}

/* ---- unary -------------------------------------------------------------- */

/* ONNX Sqrt-1,6,13: Y = sqrt(X) */
MLC_FE_CVT(sqrt) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_SQRT, in[0], &out[0]);
}

/* ONNX Exp-1,6,13: Y = e^X */
MLC_FE_CVT(exp) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_EXP, in[0], &out[0]);
}

/* ONNX Log-1,6,13: Y = ln(X) */
MLC_FE_CVT(log) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_LOG, in[0], &out[0]);
}

/* ONNX Neg-1,6,13: Y = -X */
MLC_FE_CVT(neg) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_NEG, in[0], &out[0]);
}

/* ONNX Abs-1,6,13: Y = |X| */
MLC_FE_CVT(abs) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_ABS, in[0], &out[0]);
}

/* ONNX Reciprocal-1,6,13: Y = 1 / X */
MLC_FE_CVT(reciprocal) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_RECIPROCAL, in[0], &out[0]);
}

/* ONNX Floor-1,6,13: Y = floor(X) */
MLC_FE_CVT(floor) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_FLOOR, in[0], &out[0]);
}

/* ONNX Ceil-1,6,13: Y = ceil(X) */
MLC_FE_CVT(ceil) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_CEIL, in[0], &out[0]);
}

/* ONNX Erf-9,13: Y = erf(X) */
MLC_FE_CVT(erf) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_ERF, in[0], &out[0]);
}

/* ONNX Relu-1,6,13,14: Y = max(X, 0) */
MLC_FE_CVT(relu) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_RELU, in[0], &out[0]);
}

/* ONNX Sigmoid-1,6,13: Y = 1 / (1 + e^-X) */
MLC_FE_CVT(sigmoid) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_SIGMOID, in[0], &out[0]);
}

/* ONNX Tanh-1,6,13: Y = tanh(X) */
MLC_FE_CVT(tanh) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_TANH, in[0], &out[0]);
}

/* ONNX LeakyRelu-1,6,16: Y = X >= 0 ? X : alpha*X (alpha = 0.01) */
MLC_FE_CVT(leaky_relu) {
  (void)nin, (void)nout;
  mlc_attr a = mlc_attr_float("alpha", mlc_fe_attr_float(n, "alpha", 0.01));
  return mlc_fe_emit(cx, MLC_OP_LEAKY_RELU, &in[0], 1, &a, 1, &out[0]);
}

/* ---- Clip --------------------------------------------------------------- */

/* ONNX Clip-1,6: Y = clamp(X, min, max), bounds as attributes */
MLC_FE_CVT(clip_v1) {
  (void)nin, (void)nout;
  mlc_attr a[2];
  int na = 0;
  if (mlc_fe_attr(n, "min")) a[na++] = mlc_attr_float("min", mlc_fe_attr_float(n, "min", 0));
  if (mlc_fe_attr(n, "max")) a[na++] = mlc_attr_float("max", mlc_fe_attr_float(n, "max", 0));
  if (na == 0) {
    out[0] = in[0];
    return NULL;
  }
  return mlc_fe_emit(cx, MLC_OP_CLIP, &in[0], 1, a, na, &out[0]);
}

/*
** ONNX Clip-11,12,13: Y = min(max(X, min), max), bounds as optional inputs.
** Constant bounds become the clip op's attributes; bounds computed at run
** time become maximum/minimum ops.
*/
MLC_FE_CVT(clip_v11) {
  (void)n, (void)nout;
  mlc_value *lo = nin > 1 ? in[1] : NULL, *hi = nin > 2 ? in[2] : NULL, *y = in[0];
  mlc_attr a[2];
  int na = 0;
  double v;
  if (lo && mlc_fe_const(cx, lo)) {
    MLC_RETURN_IF_ERROR(mlc_fe_const_scalar(cx, lo, "min", &v));
    a[na++] = mlc_attr_float("min", v);
  } else if (lo) {
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MAXIMUM, y, lo, &y));
  }
  if (hi && mlc_fe_const(cx, hi)) {
    MLC_RETURN_IF_ERROR(mlc_fe_const_scalar(cx, hi, "max", &v));
    a[na++] = mlc_attr_float("max", v);
  }
  if (na) MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CLIP, &y, 1, a, na, &y));
  if (hi && !mlc_fe_const(cx, hi)) MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MINIMUM, y, hi, &y));
  out[0] = y;
  return NULL;
}

/* ---- variadic ----------------------------------------------------------- */

/* Folds the inputs left to right with the binary |op|. */
static mlc_status fold_inputs(mlc_fe_ctx *cx, mlc_value *const *in, int nin, mlc_op op,
                              mlc_value **out) {
  mlc_value *y = in[0];
  for (int i = 1; i < nin; i++) {
    if (!in[i]) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "input %d is empty", i);
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, op, y, in[i], &y));
  }
  *out = y;
  return NULL;
}

/* ONNX Max-1,6,8,12,13: Y = elementwise max of the inputs */
MLC_FE_CVT(max) {
  (void)n, (void)nout;
  return fold_inputs(cx, in, nin, MLC_OP_MAXIMUM, &out[0]);
}

/* ONNX Min-1,6,8,12,13: Y = elementwise min of the inputs */
MLC_FE_CVT(min) {
  (void)n, (void)nout;
  return fold_inputs(cx, in, nin, MLC_OP_MINIMUM, &out[0]);
}

/* ONNX Sum-1,6,8,13: Y = elementwise sum of the inputs */
MLC_FE_CVT(sum) {
  (void)n, (void)nout;
  return fold_inputs(cx, in, nin, MLC_OP_ADD, &out[0]);
}

/* ---- contractions ------------------------------------------------------- */

/*
** ONNX Gemm-1,6,7,9,11,13: Y = alpha*A'*B' + beta*C (C optional from 11;
** unidirectional broadcasting of C).  Transposes become permute_dims (which
** folds for constant weights); alpha scales a constant B at compile time,
** else the product; beta scales C.
*/
MLC_FE_CVT(gemm) {
  (void)nout;
  mlc_value *a = in[0], *b = in[1], *c = nin > 2 ? in[2] : NULL;
  if (a->type.rank != 2 || b->type.rank != 2)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "A and B must be 2-D, got %s and %s",
                        mlc_fe_shape_str(cx, &a->type), mlc_fe_shape_str(cx, &b->type));
  static const int64_t t2[2] = {1, 0};
  mlc_attr perm = mlc_attr_ints("perm", t2, 2);
  if (mlc_fe_attr_int(n, "transA", 0)) MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_TRANSPOSE, &a, 1, &perm, 1, &a));
  if (mlc_fe_attr_int(n, "transB", 0)) MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_TRANSPOSE, &b, 1, &perm, 1, &b));
  double alpha = mlc_fe_attr_float(n, "alpha", 1.0), beta = mlc_fe_attr_float(n, "beta", 1.0);
  int scaled = alpha == 1.0;
  mlc_value *s;
  if (!scaled && mlc_fe_const(cx, b)) {
    MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, b->type.dtype, alpha, &s));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, b, s, &b));
    scaled = 1;
  }
  mlc_value *y;
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MATMUL, a, b, &y));
  if (!scaled) {
    MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, y->type.dtype, alpha, &s));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, y, s, &y));
  }
  if (c && beta != 0.0) {
    if (beta != 1.0) {
      MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, c->type.dtype, beta, &s));
      MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, c, s, &c));
    }
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, y, c, &y));
  }
  out[0] = y;
  return NULL;
}

/* ONNX MatMul-1,9,13: Y = A @ B (numpy matmul) */
MLC_FE_CVT(matmul) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_binary(cx, MLC_OP_MATMUL, in[0], in[1], &out[0]);
}

/* ---- Softmax, LogSoftmax ------------------------------------------------ */

/*
** Opsets before 13 coerce the input to 2-D [prod(d[:axis]), prod(d[axis:])]
** (axis = 1 by default), normalize over the second dim and take the input's
** shape again.  When axis is the last dim this is |op| over that axis.
*/
static mlc_status softmax_2d(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, mlc_op op,
                             mlc_value **out) {
  int r = x->type.rank;
  int64_t ax = mlc_fe_attr_int(n, "axis", 1);
  if (ax < 0) ax += r;
  if (ax < 0 || ax > r) /* axis == r: all in the outer dim, softmax over 1 element */
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                        (long long)mlc_fe_attr_int(n, "axis", 1), r);
  if (ax == r - 1) {
    mlc_attr a = mlc_attr_int("axis", ax);
    return mlc_fe_emit(cx, op, &x, 1, &a, 1, out);
  }
  int64_t d2[2];
  MLC_RETURN_IF_ERROR(mlc_fe_dim_product(cx, x->type.dims, (int)ax, "the flattened outer dim", &d2[0]));
  MLC_RETURN_IF_ERROR(mlc_fe_dim_product(cx, x->type.dims + ax, r - (int)ax, "the flattened inner dim", &d2[1]));
  mlc_value *y;
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, x, d2, 2, &y));
  mlc_attr a = mlc_attr_int("axis", 1);
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, op, &y, 1, &a, 1, &y));
  return mlc_fe_reshape(cx, y, x->type.dims, r, out);
}

/* From opset 13: |op| along one axis (default -1). */
static mlc_status softmax_axis(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, mlc_op op,
                               mlc_value **out) {
  int axis;
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "axis", -1), x->type.rank, "axis", &axis));
  mlc_attr a = mlc_attr_int("axis", axis);
  return mlc_fe_emit(cx, op, &x, 1, &a, 1, out);
}

/* ONNX Softmax-1,11: softmax of X coerced to 2-D around axis (default 1) */
MLC_FE_CVT(softmax_v1) {
  (void)nin, (void)nout;
  return softmax_2d(cx, n, in[0], MLC_OP_SOFTMAX, &out[0]);
}

/* ONNX Softmax-13: Y = exp(X) / sum(exp(X)) along axis (default -1) */
MLC_FE_CVT(softmax_v13) {
  (void)nin, (void)nout;
  return softmax_axis(cx, n, in[0], MLC_OP_SOFTMAX, &out[0]);
}

/* ONNX LogSoftmax-1,11: log of softmax of X coerced to 2-D around axis (default 1) */
MLC_FE_CVT(log_softmax_v1) {
  (void)nin, (void)nout;
  return softmax_2d(cx, n, in[0], MLC_OP_LOG_SOFTMAX, &out[0]);
}

/* ONNX LogSoftmax-13: Y = X - max - ln(sum(exp(X - max))) along axis (default -1) */
MLC_FE_CVT(log_softmax_v13) {
  (void)nin, (void)nout;
  return softmax_axis(cx, n, in[0], MLC_OP_LOG_SOFTMAX, &out[0]);
}

/* ---- more elementwise ops ----------------------------------------------- */

/* ONNX Sin-7: Y = sin(X) */
MLC_FE_CVT(sin) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_SIN, in[0], &out[0]);
}

/* ONNX Cos-7: Y = cos(X) */
MLC_FE_CVT(cos) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_COS, in[0], &out[0]);
}

/* ONNX Tan-7: Y = tan(X) */
MLC_FE_CVT(tan) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_TAN, in[0], &out[0]);
}

/* ONNX Asin-7: Y = asin(X) */
MLC_FE_CVT(asin) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_ASIN, in[0], &out[0]);
}

/* ONNX Acos-7: Y = acos(X) */
MLC_FE_CVT(acos) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_ACOS, in[0], &out[0]);
}

/* ONNX Atan-7: Y = atan(X) */
MLC_FE_CVT(atan) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_ATAN, in[0], &out[0]);
}

/* ONNX Sinh-9: Y = sinh(X) */
MLC_FE_CVT(sinh) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_SINH, in[0], &out[0]);
}

/* ONNX Cosh-9: Y = cosh(X) */
MLC_FE_CVT(cosh) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_COSH, in[0], &out[0]);
}

/* ONNX Asinh-9: Y = asinh(X) */
MLC_FE_CVT(asinh) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_ASINH, in[0], &out[0]);
}

/* ONNX Acosh-9: Y = acosh(X) */
MLC_FE_CVT(acosh) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_ACOSH, in[0], &out[0]);
}

/* ONNX Atanh-9: Y = atanh(X) */
MLC_FE_CVT(atanh) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_ATANH, in[0], &out[0]);
}

/* ONNX Round-11: Y = X rounded half to even */
MLC_FE_CVT(round) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_ROUND, in[0], &out[0]);
}

/* ONNX Sign-9,13: Y = -1, 0 or 1 by the sign of X */
MLC_FE_CVT(sign) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_SIGN, in[0], &out[0]);
}

/* ONNX IsNaN-9,13: Y = X is NaN (bool) */
MLC_FE_CVT(isnan) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_ISNAN, in[0], &out[0]);
}

/* ONNX Softplus-1: Y = ln(1 + e^X) */
MLC_FE_CVT(softplus) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_SOFTPLUS, in[0], &out[0]);
}

/* ONNX Softsign-1: Y = X / (1 + |X|) */
MLC_FE_CVT(softsign) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_SOFTSIGN, in[0], &out[0]);
}

/* ONNX HardSwish-14: Y = X * max(0, min(1, X/6 + 1/2)) */
MLC_FE_CVT(hard_swish) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_HARD_SWISH, in[0], &out[0]);
}

/* Emits unary |op| with float attributes |names| read with defaults |dflt|. */
static mlc_status unary_float_attrs(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, mlc_op op,
                                    const char *const *names, const double *dflt, int k,
                                    mlc_value **out) {
  mlc_attr a[4];
  for (int i = 0; i < k; i++) a[i] = mlc_attr_float(names[i], mlc_fe_attr_float(n, names[i], dflt[i]));
  return mlc_fe_emit(cx, op, &x, 1, a, k, out);
}

/* ONNX Elu-1,6: Y = X >= 0 ? X : alpha*(e^X - 1) (alpha = 1) */
MLC_FE_CVT(elu) {
  (void)nin, (void)nout;
  static const char *const names[] = {"alpha"};
  static const double dflt[] = {1.0};
  return unary_float_attrs(cx, n, in[0], MLC_OP_ELU, names, dflt, 1, &out[0]);
}

/* ONNX Selu-1,6: Y = gamma * (X > 0 ? X : alpha*(e^X - 1)) */
MLC_FE_CVT(selu) {
  (void)nin, (void)nout;
  static const char *const names[] = {"alpha", "gamma"};
  static const double dflt[] = {1.67326319217681884765625, 1.05070102214813232421875};
  return unary_float_attrs(cx, n, in[0], MLC_OP_SELU, names, dflt, 2, &out[0]);
}

/* ONNX Celu-12: Y = max(0, X) + min(0, alpha*(e^(X/alpha) - 1)) (alpha = 1) */
MLC_FE_CVT(celu) {
  (void)nin, (void)nout;
  static const char *const names[] = {"alpha"};
  static const double dflt[] = {1.0};
  return unary_float_attrs(cx, n, in[0], MLC_OP_CELU, names, dflt, 1, &out[0]);
}

/* ONNX HardSigmoid-1,6: Y = max(0, min(1, alpha*X + beta)) (0.2, 0.5) */
MLC_FE_CVT(hard_sigmoid) {
  (void)nin, (void)nout;
  static const char *const names[] = {"alpha", "beta"};
  static const double dflt[] = {0.2, 0.5};
  return unary_float_attrs(cx, n, in[0], MLC_OP_HARD_SIGMOID, names, dflt, 2, &out[0]);
}

/* ONNX ThresholdedRelu-10: Y = X > alpha ? X : 0 (alpha = 1) */
MLC_FE_CVT(thresholded_relu) {
  (void)nin, (void)nout;
  static const char *const names[] = {"alpha"};
  static const double dflt[] = {1.0};
  return unary_float_attrs(cx, n, in[0], MLC_OP_THRESHOLDED_RELU, names, dflt, 1, &out[0]);
}

/* ONNX Shrink-9: Y = X < -lambd ? X + bias : X > lambd ? X - bias : 0 */
MLC_FE_CVT(shrink) {
  (void)nin, (void)nout;
  static const char *const names[] = {"lambd", "bias"};
  static const double dflt[] = {0.5, 0.0};
  return unary_float_attrs(cx, n, in[0], MLC_OP_SHRINK, names, dflt, 2, &out[0]);
}

/* ONNX IsInf-10: Y = X is +inf (detect_positive) or -inf (detect_negative) */
MLC_FE_CVT(isinf) {
  (void)nin, (void)nout;
  mlc_attr a[2] = {mlc_attr_int("detect_positive", mlc_fe_attr_int(n, "detect_positive", 1) != 0),
                   mlc_attr_int("detect_negative", mlc_fe_attr_int(n, "detect_negative", 1) != 0)};
  return mlc_fe_emit(cx, MLC_OP_ISINF, &in[0], 1, a, 2, &out[0]);
}

/* ONNX Mod-10,13: C = A mod B (fmod = 1: sign of A, as C fmod; 0: sign of B) */
MLC_FE_CVT(mod) {
  (void)nin, (void)nout;
  mlc_attr a = mlc_attr_int("fmod", mlc_fe_attr_int(n, "fmod", 0) != 0);
  return mlc_fe_emit(cx, MLC_OP_MOD, in, 2, &a, 1, &out[0]);
}

MLC_FE_CHECK(bitshift) {
  (void)opset;
  const char *d = mlc_fe_attr_str(n, "direction", "");
  if (strcmp(d, "LEFT") != 0 && strcmp(d, "RIGHT") != 0)
    mlc_fe_problem(p, "direction \"%s\" not supported (LEFT or RIGHT)", d);
}

/* ONNX BitShift-11: Z = X << Y (direction LEFT) or X >> Y (RIGHT) */
MLC_FE_CVT(bitshift) {
  (void)nin, (void)nout;
  mlc_attr a = mlc_attr_int("right", strcmp(mlc_fe_attr_str(n, "direction", ""), "RIGHT") == 0);
  return mlc_fe_emit(cx, MLC_OP_BITSHIFT, in, 2, &a, 1, &out[0]);
}

/*
** ONNX PRelu-1,6,7,9,16: Y = X >= 0 ? X : slope*X, slope broadcast to X
** (numpy unidirectional from 7; before, only a single slope or one per
** element is taken).
*/
MLC_FE_CVT(prelu) {
  (void)n, (void)nin, (void)nout;
  mlc_value *x = in[0], *slope = in[1];
  if (cx->opset < 7 && mlc_type_numel(&slope->type) != 1 && !mlc_type_equal(&x->type, &slope->type))
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "slope %s for input %s: legacy broadcasting not supported",
                        mlc_fe_shape_str(cx, &slope->type), mlc_fe_shape_str(cx, &x->type));
  return mlc_fe_binary(cx, MLC_OP_PRELU, x, slope, &out[0]);
}

/* ONNX Mean-1,6,8,13: Y = elementwise mean of the inputs */
MLC_FE_CVT(mean) {
  (void)n, (void)nout;
  mlc_value *y, *k;
  MLC_RETURN_IF_ERROR(fold_inputs(cx, in, nin, MLC_OP_ADD, &y));
  if (nin == 1) {
    out[0] = y;
    return NULL;
  }
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, y->type.dtype, nin, &k));
  return mlc_fe_binary(cx, MLC_OP_DIV, y, k, &out[0]);
}
