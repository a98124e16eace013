/*
** quant.c: converters of ONNX's quantization ops, as exact decompositions
** into cast, round, clip, add, multiply, matmul and conv graph ops.
**
** Quantizing is q = saturate(round(x / scale) + zero_point), in float with
** round half to even and saturation by a clip to the output type's range
** before the cast.  Dequantizing is (int32(x) - int32(zero_point)) * scale.
** Integer products (MatMulInteger, ConvInteger and the accumulators of the
** QLinear ops) run in int32 on the zero-point-shifted operands, so they
** are exact.  QLinearMatMul and QLinearConv requantize the int32
** accumulator as ONNX Runtime does: saturate(round(float(acc) * (a_scale *
** b_scale / y_scale)) + y_zero_point).
**
** Per-axis scales and zero points (1-D) are reshaped to broadcast along
** their axis; one-element ones become scalars.
*/
#include <string.h>

#include "frontend/frontend_int.h"

/* |x| converted to |dt| (itself when it has that dtype). */
static mlc_status cast_to(mlc_fe_ctx *cx, mlc_value *x, mlc_dtype dt, mlc_value **out) {
  if (x->type.dtype == dt) {
    *out = x;
    return NULL;
  }
  mlc_attr a = mlc_attr_int("dtype", (int64_t)dt);
  return mlc_fe_emit(cx, MLC_OP_CAST, &x, 1, &a, 1, out);
}

/*
** A scale or zero point |v| made to broadcast against a tensor of rank
** |rank| along |axis|: a one-element tensor becomes a scalar, a 1-D one of
** length > 1 the shape [len, 1, ..., 1] with rank - 1 - axis trailing 1s
** (its length checked against |extent| when both are static; extent < 0:
** unknown).  Higher ranks stay as they are (numpy broadcasting).
*/
static mlc_status along_axis(mlc_fe_ctx *cx, const char *what, mlc_value *v, int rank, int axis,
                             int64_t extent, mlc_value **out) {
  const mlc_type *t = &v->type;
  int64_t numel = mlc_type_numel(&v->type);
  if (t->rank == 0 || (t->rank == 1 && t->dims[0] == 1) || (t->rank > 1 && numel == 1)) {
    return mlc_fe_reshape(cx, v, NULL, 0, out);
  }
  if (t->rank != 1) {
    *out = v;
    return NULL;
  }
  if (axis < 0 || axis >= rank)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s %s needs an axis within rank %d", what,
                        mlc_fe_shape_str(cx, t), rank);
  int64_t len = t->dims[0];
  if (!MLC_DIM_IS_SYM(len) && extent >= 0 && !MLC_DIM_IS_SYM(extent) && len != extent)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s has %lld entries, the axis %d has extent %lld", what,
                        (long long)len, axis, (long long)extent);
  int64_t dims[16];
  int r = 0;
  if (rank - axis > 16) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "rank %d is too large", rank);
  dims[r++] = len;
  for (int i = axis + 1; i < rank; i++) dims[r++] = 1;
  return mlc_fe_reshape(cx, v, dims, r, out);
}

/* The saturation range of a quantized type; 0 when |dt| is not one. */
static int qrange(mlc_dtype dt, double *lo, double *hi) {
  switch (dt) {
    case MLC_DTYPE_U8: *lo = 0, *hi = 255; return 1;
    case MLC_DTYPE_I8: *lo = -128, *hi = 127; return 1;
    case MLC_DTYPE_U16: *lo = 0, *hi = 65535; return 1;
    case MLC_DTYPE_I16: *lo = -32768, *hi = 32767; return 1;
    default: return 0;
  }
}

/* saturate(round(|q|) + |zpf|) as |dt|: |q| and |zpf| (may be NULL) float. */
static mlc_status round_saturate(mlc_fe_ctx *cx, mlc_value *q, mlc_value *zpf, mlc_dtype dt,
                                 mlc_value **out) {
  double lo, hi;
  if (!qrange(dt, &lo, &hi))
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "quantized type %s not supported (uint8, int8, uint16, int16)",
                        mlc_dtype_name(dt));
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_ROUND, q, &q));
  if (zpf) MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, q, zpf, &q));
  mlc_attr c[2] = {mlc_attr_float("min", lo), mlc_attr_float("max", hi)};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CLIP, &q, 1, c, 2, &q));
  return cast_to(cx, q, dt, out);
}

static mlc_value *opt_in(mlc_value *const *in, int nin, int i) { return i < nin ? in[i] : NULL; }

static mlc_status need_float(mlc_fe_ctx *cx, const char *what, const mlc_value *v) {
  if (mlc_dtype_is_float(v->type.dtype)) return NULL;
  return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s must be a float tensor, got %s", what,
                      mlc_dtype_name(v->type.dtype));
}

static mlc_status need_int(mlc_fe_ctx *cx, const char *what, const mlc_value *v) {
  if (mlc_dtype_is_int(v->type.dtype)) return NULL;
  return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s must be an integer tensor, got %s", what,
                      mlc_dtype_name(v->type.dtype));
}

/* The quantization axis of |n| for an input of |rank| (opset >= 13: attr
** axis, default 1; before: 1), normalized; -1 when out of range (an error
** only for per-axis parameters, along_axis reports it). */
static int quant_axis(const mlc_onnx_node *n, int rank) {
  int64_t a = mlc_fe_attr_int(n, "axis", 1);
  if (a < 0) a += rank;
  return a >= 0 && a < rank ? (int)a : -1;
}

/* ---- QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear -------------- */

/*
** ONNX QuantizeLinear-10,13: y = saturate(round(x / y_scale) + y_zero_point)
** as the zero point's type (uint8 without one); per-axis scale and zero
** point from 13.
*/
MLC_FE_CVT(quantize_linear) {
  (void)nout;
  mlc_value *x = in[0], *s = in[1], *zp = opt_in(in, nin, 2);
  MLC_RETURN_IF_ERROR(need_float(cx, "y_scale", s));
  mlc_dtype odt = zp ? zp->type.dtype : MLC_DTYPE_U8;
  double lo, hi;
  if (!qrange(odt, &lo, &hi))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "y_zero_point must be uint8 or int8, got %s",
                        mlc_dtype_name(odt));
  int axis = quant_axis(n, x->type.rank);
  int64_t extent = axis >= 0 ? x->type.dims[axis] : -1;
  mlc_value *xf, *q, *zpf = NULL;
  MLC_RETURN_IF_ERROR(cast_to(cx, x, s->type.dtype, &xf));
  MLC_RETURN_IF_ERROR(along_axis(cx, "y_scale", s, x->type.rank, axis, extent, &s));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_DIV, xf, s, &q));
  if (zp) {
    MLC_RETURN_IF_ERROR(cast_to(cx, zp, s->type.dtype, &zpf));
    MLC_RETURN_IF_ERROR(along_axis(cx, "y_zero_point", zpf, x->type.rank, axis, extent, &zpf));
  }
  return round_saturate(cx, q, zpf, odt, &out[0]);
}

/* ONNX DequantizeLinear-10,13: y = (x - x_zero_point) * x_scale; per-axis from 13. */
MLC_FE_CVT(dequantize_linear) {
  (void)nout;
  mlc_value *x = in[0], *s = in[1], *zp = opt_in(in, nin, 2);
  MLC_RETURN_IF_ERROR(need_int(cx, "x", x));
  MLC_RETURN_IF_ERROR(need_float(cx, "x_scale", s));
  if (zp && zp->type.dtype != x->type.dtype)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "x_zero_point (%s) must have x's type %s",
                        mlc_dtype_name(zp->type.dtype), mlc_dtype_name(x->type.dtype));
  int axis = quant_axis(n, x->type.rank);
  int64_t extent = axis >= 0 ? x->type.dims[axis] : -1;
  mlc_value *xi, *y;
  MLC_RETURN_IF_ERROR(cast_to(cx, x, MLC_DTYPE_I32, &xi));
  if (zp) {
    mlc_value *zi;
    MLC_RETURN_IF_ERROR(cast_to(cx, zp, MLC_DTYPE_I32, &zi));
    MLC_RETURN_IF_ERROR(along_axis(cx, "x_zero_point", zi, x->type.rank, axis, extent, &zi));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, xi, zi, &xi));
  }
  MLC_RETURN_IF_ERROR(cast_to(cx, xi, s->type.dtype, &y));
  MLC_RETURN_IF_ERROR(along_axis(cx, "x_scale", s, x->type.rank, axis, extent, &s));
  return mlc_fe_binary(cx, MLC_OP_MUL, y, s, &out[0]);
}

/*
** ONNX DynamicQuantizeLinear-11: uint8 quantization of x over the range
** [min(x, 0), max(x, 0)]: y_scale = (max - min) / 255, y_zero_point =
** saturate(round(-min / y_scale)), y = saturate(round(x / y_scale) +
** y_zero_point).  An all-zero x (scale 0) divides by 1 instead: y and the
** zero point are 0.
*/
MLC_FE_CVT(dynamic_quantize_linear) {
  (void)nin, (void)nout;
  mlc_value *x = in[0];
  if (x->type.dtype != MLC_DTYPE_F32)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "x must be float32, got %s", mlc_dtype_name(x->type.dtype));
  mlc_attr red[2] = {mlc_attr_ints("axes", NULL, 0), mlc_attr_int("keepdims", 0)};
  mlc_value *mn, *mx, *zero, *one, *k255, *scale, *safe, *isz, *zpf, *q;
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_F32, 0.0, &zero));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_F32, 1.0, &one));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_F32, 255.0, &k255));
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_MIN, &x, 1, red, 2, &mn));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MINIMUM, mn, zero, &mn));
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_MAX, &x, 1, red, 2, &mx));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MAXIMUM, mx, zero, &mx));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, mx, mn, &scale));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_DIV, scale, k255, &scale));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_EQUAL, scale, zero, &isz));
  mlc_value *a3[3] = {isz, one, scale};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_WHERE, a3, 3, NULL, 0, &safe));
  /* zero point: saturate(round((0 - min) / scale)) */
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, zero, mn, &zpf));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_DIV, zpf, safe, &zpf));
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_ROUND, zpf, &zpf));
  mlc_attr c[2] = {mlc_attr_float("min", 0), mlc_attr_float("max", 255)};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CLIP, &zpf, 1, c, 2, &zpf));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_DIV, x, safe, &q));
  MLC_RETURN_IF_ERROR(round_saturate(cx, q, zpf, MLC_DTYPE_U8, &out[0]));
  if (mlc_fe_output_used(n, 1)) out[1] = scale;
  if (mlc_fe_output_used(n, 2)) MLC_RETURN_IF_ERROR(cast_to(cx, zpf, MLC_DTYPE_U8, &out[2]));
  return NULL;
}

/* ---- integer products ------------------------------------------------------ */

/* int32(x) - int32(zp) with zp along |axis| of x (zp may be NULL). */
static mlc_status shift(mlc_fe_ctx *cx, const char *what, mlc_value *x, mlc_value *zp, int axis,
                        mlc_value **out) {
  mlc_value *xi, *zi;
  MLC_RETURN_IF_ERROR(need_int(cx, what, x));
  MLC_RETURN_IF_ERROR(cast_to(cx, x, MLC_DTYPE_I32, &xi));
  if (!zp) {
    *out = xi;
    return NULL;
  }
  if (zp->type.dtype != x->type.dtype)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "the zero point of %s (%s) must have its type %s", what,
                        mlc_dtype_name(zp->type.dtype), mlc_dtype_name(x->type.dtype));
  int64_t extent = axis >= 0 && axis < x->type.rank ? x->type.dims[axis] : -1;
  MLC_RETURN_IF_ERROR(cast_to(cx, zp, MLC_DTYPE_I32, &zi));
  MLC_RETURN_IF_ERROR(along_axis(cx, "zero point", zi, x->type.rank, axis, extent, &zi));
  return mlc_fe_binary(cx, MLC_OP_SUB, xi, zi, out);
}

/* (a - a_zp) @ (b - b_zp) in int32: a_zp per row of a, b_zp per column of b. */
static mlc_status int_matmul(mlc_fe_ctx *cx, mlc_value *a, mlc_value *azp, mlc_value *b, mlc_value *bzp,
                             mlc_value **out) {
  if (a->type.rank < 1 || b->type.rank < 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "A and B must have rank >= 1, got %s and %s",
                        mlc_fe_shape_str(cx, &a->type), mlc_fe_shape_str(cx, &b->type));
  int ra = a->type.rank, rb = b->type.rank;
  MLC_RETURN_IF_ERROR(shift(cx, "A", a, azp, ra >= 2 ? ra - 2 : ra - 1, &a));
  MLC_RETURN_IF_ERROR(shift(cx, "B", b, bzp, rb - 1, &b));
  return mlc_fe_binary(cx, MLC_OP_MATMUL, a, b, out);
}

/* ONNX MatMulInteger-10: Y = (A - a_zero_point) @ (B - b_zero_point) in int32 */
MLC_FE_CVT(matmul_integer) {
  (void)n, (void)nout;
  return int_matmul(cx, in[0], opt_in(in, nin, 2), in[1], opt_in(in, nin, 3), &out[0]);
}

/* conv(x - x_zp, w - w_zp (per output channel)[, bias]) in int32, with the
** node's Conv attributes. */
static mlc_status int_conv(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, mlc_value *xzp,
                           mlc_value *w, mlc_value *wzp, mlc_value *bias, mlc_value **out) {
  if (xzp && mlc_type_numel(&xzp->type) != 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "the zero point of x must be a scalar, got %s",
                        mlc_fe_shape_str(cx, &xzp->type));
  MLC_RETURN_IF_ERROR(shift(cx, "x", x, xzp, 1, &x));
  MLC_RETURN_IF_ERROR(shift(cx, "w", w, wzp, 0, &w));
  if (bias && bias->type.dtype != MLC_DTYPE_I32)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "B must be int32, got %s", mlc_dtype_name(bias->type.dtype));
  mlc_value *args[3] = {x, w, bias};
  return mlc_fe_cvt_conv(cx, n, args, bias ? 3 : 2, out, 1);
}

/* ONNX ConvInteger-10: y = conv(x - x_zero_point, w - w_zero_point) in int32 */
MLC_FE_CVT(conv_integer) {
  (void)nout;
  return int_conv(cx, n, in[0], opt_in(in, nin, 2), in[1], opt_in(in, nin, 3), NULL, &out[0]);
}

/* saturate(round(float(acc) * mult) + y_zp) as y_zp's type. */
static mlc_status requantize(mlc_fe_ctx *cx, mlc_value *acc, mlc_value *mult, mlc_value *yzp,
                             mlc_value **out) {
  mlc_value *f, *zpf;
  MLC_RETURN_IF_ERROR(cast_to(cx, acc, mult->type.dtype, &f));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, f, mult, &f));
  MLC_RETURN_IF_ERROR(cast_to(cx, yzp, mult->type.dtype, &zpf));
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, zpf, NULL, 0, &zpf));
  return round_saturate(cx, f, zpf, yzp->type.dtype, out);
}

/* a_scale * b_scale / y_scale, after checking the scales' dtypes. */
static mlc_status multiplier(mlc_fe_ctx *cx, mlc_value *as, mlc_value *bs, mlc_value *ys, mlc_value **out) {
  MLC_RETURN_IF_ERROR(need_float(cx, "a scale", as));
  if (bs->type.dtype != as->type.dtype || ys->type.dtype != as->type.dtype)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "the scales must have one float type");
  mlc_value *m;
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, as, bs, &m));
  return mlc_fe_binary(cx, MLC_OP_DIV, m, ys, out);
}

static mlc_status need_scalar(mlc_fe_ctx *cx, const char *what, mlc_value *v, mlc_value **out) {
  if (mlc_type_numel(&v->type) != 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s must be a scalar, got %s", what,
                        mlc_fe_shape_str(cx, &v->type));
  return mlc_fe_reshape(cx, v, NULL, 0, out);
}

/*
** ONNX QLinearMatMul-10: y = saturate(round(((a - a_zp) @ (b - b_zp)) *
** a_scale * b_scale / y_scale) + y_zp); a's scale and zero point per row or
** per tensor, b's per column or per tensor.
*/
MLC_FE_CVT(qlinear_matmul) {
  (void)n, (void)nin, (void)nout;
  mlc_value *a = in[0], *as = in[1], *azp = in[2], *b = in[3], *bs = in[4], *bzp = in[5], *ys = in[6],
            *yzp = in[7], *acc, *mult;
  MLC_RETURN_IF_ERROR(need_scalar(cx, "y_scale", ys, &ys));
  MLC_RETURN_IF_ERROR(need_scalar(cx, "y_zero_point", yzp, &yzp));
  int ra = a->type.rank, rb = b->type.rank;
  if (ra < 1 || rb < 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "a and b must have rank >= 1");
  int arow = ra >= 2 ? ra - 2 : 0;
  MLC_RETURN_IF_ERROR(along_axis(cx, "a_scale", as, ra, arow, a->type.dims[arow], &as));
  MLC_RETURN_IF_ERROR(along_axis(cx, "b_scale", bs, rb, rb - 1, b->type.dims[rb - 1], &bs));
  MLC_RETURN_IF_ERROR(int_matmul(cx, a, azp, b, bzp, &acc));
  MLC_RETURN_IF_ERROR(multiplier(cx, as, bs, ys, &mult));
  return requantize(cx, acc, mult, yzp, &out[0]);
}

/*
** ONNX QLinearConv-10: y = saturate(round((conv(x - x_zp, w - w_zp) + B) *
** x_scale * w_scale / y_scale) + y_zp), w's scale and zero point per
** output channel or per tensor, B int32.
*/
MLC_FE_CVT(qlinear_conv) {
  (void)nout;
  mlc_value *x = in[0], *xs = in[1], *xzp = in[2], *w = in[3], *ws = in[4], *wzp = in[5], *ys = in[6],
            *yzp = in[7], *bias = opt_in(in, nin, 8), *acc, *mult;
  MLC_RETURN_IF_ERROR(need_scalar(cx, "x_scale", xs, &xs));
  MLC_RETURN_IF_ERROR(need_scalar(cx, "y_scale", ys, &ys));
  MLC_RETURN_IF_ERROR(need_scalar(cx, "y_zero_point", yzp, &yzp));
  if (x->type.rank < 3 || w->type.rank != x->type.rank)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "x %s and w %s must have one rank >= 3",
                        mlc_fe_shape_str(cx, &x->type), mlc_fe_shape_str(cx, &w->type));
  /* w_scale per output channel broadcasts along y's axis 1 */
  MLC_RETURN_IF_ERROR(along_axis(cx, "w_scale", ws, x->type.rank, 1, w->type.dims[0], &ws));
  MLC_RETURN_IF_ERROR(int_conv(cx, n, x, xzp, w, wzp, bias, &acc));
  MLC_RETURN_IF_ERROR(multiplier(cx, xs, ws, ys, &mult));
  return requantize(cx, acc, mult, yzp, &out[0]);
}
