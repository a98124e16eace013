/*
** nn.c: converters of ONNX's nn category: Conv, pooling (MaxPool,
** AveragePool, the global pools), BatchNormalization (decomposed into
** arithmetic), Flatten and Dropout (inference: identity).
**
** Window attributes are normalized into full-length lists: kernel from the
** weight when kernel_shape is absent, strides and dilations default to 1,
** auto_pad is resolved into explicit pads (begins then ends), which needs
** static spatial dims for SAME_UPPER / SAME_LOWER.
*/
#include <string.h>

#include "frontend/frontend_int.h"

#define MAX_SPATIAL 8

/* ---- windows ------------------------------------------------------------ */

static int valid_auto_pad(const char *s) {
  return strcmp(s, "NOTSET") == 0 || strcmp(s, "VALID") == 0 || strcmp(s, "SAME_UPPER") == 0 ||
         strcmp(s, "SAME_LOWER") == 0;
}

static void check_auto_pad(mlc_fe_problems *p, const mlc_onnx_node *n) {
  const char *ap = mlc_fe_attr_str(n, "auto_pad", "NOTSET");
  if (!valid_auto_pad(ap)) mlc_fe_problem(p, "auto_pad \"%s\" not supported", ap);
}

/* A window's attributes, all with |nsp| (pads: 2*nsp) entries. */
typedef struct window {
  int nsp;
  int64_t kernel[MAX_SPATIAL], strides[MAX_SPATIAL], dilations[MAX_SPATIAL];
  int64_t pads[2 * MAX_SPATIAL];
} window;

/* Reads the INTS attribute |name| into |dst| (|want| entries) or fills it
** with |dflt| when absent. */
static mlc_status read_list(mlc_fe_ctx *cx, const mlc_onnx_node *n, const char *name, int want,
                            int64_t dflt, int64_t min, int64_t *dst) {
  const int64_t *v;
  int k = mlc_fe_attr_ints(n, name, &v);
  if (k < 0) {
    for (int i = 0; i < want; i++) dst[i] = dflt;
    return NULL;
  }
  if (k != want)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s has %d entries, expected %d", name, k, want);
  for (int i = 0; i < want; i++) {
    if (v[i] < min)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s[%d] = %lld must be >= %lld", name, i,
                          (long long)v[i], (long long)min);
    dst[i] = v[i];
  }
  return NULL;
}

/*
** Fills |w| for input |x|: |kernel| (nsp entries, from kernel_shape or the
** weight), strides, dilations (when |has_dilations|) and pads resolved from
** auto_pad.
*/
static mlc_status read_window(mlc_fe_ctx *cx, const mlc_onnx_node *n, const mlc_value *x,
                              const int64_t *kernel, int has_dilations, window *w) {
  int r = x->type.rank, nsp = r - 2;
  w->nsp = nsp;
  memcpy(w->kernel, kernel, sizeof(int64_t) * (size_t)nsp);
  MLC_RETURN_IF_ERROR(read_list(cx, n, "strides", nsp, 1, 1, w->strides));
  if (has_dilations) MLC_RETURN_IF_ERROR(read_list(cx, n, "dilations", nsp, 1, 1, w->dilations));
  else
    for (int i = 0; i < nsp; i++) w->dilations[i] = 1;
  const char *ap = mlc_fe_attr_str(n, "auto_pad", "NOTSET");
  if (strcmp(ap, "NOTSET") == 0) return read_list(cx, n, "pads", 2 * nsp, 0, 0, w->pads);
  memset(w->pads, 0, sizeof w->pads);
  if (strcmp(ap, "VALID") == 0) return NULL;
  int upper = strcmp(ap, "SAME_UPPER") == 0;
  for (int i = 0; i < nsp; i++) {
    int64_t in = x->type.dims[2 + i];
    if (MLC_DIM_IS_SYM(in))
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                          "auto_pad %s needs static spatial dims, the input is %s", ap,
                          mlc_fe_shape_str(cx, &x->type));
    /* total = (ceil(in / s) - 1) * s + (k - 1) * dilation + 1 - in */
    int64_t s = w->strides[i], out = in / s + (in % s != 0), k, total;
    if (__builtin_mul_overflow(w->kernel[i] - 1, w->dilations[i], &k) || __builtin_add_overflow(k, 1, &k) ||
        __builtin_mul_overflow(out - 1, s, &total) || __builtin_add_overflow(total, k - in, &total))
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT,
                          "auto_pad %s: the padding of spatial axis %d overflows int64 (extent %lld, kernel %lld, "
                          "stride %lld, dilation %lld)", ap, i, (long long)in, (long long)w->kernel[i],
                          (long long)s, (long long)w->dilations[i]);
    if (total < 0) total = 0;
    int64_t small = total / 2, big = total - small;
    w->pads[i] = upper ? small : big;
    w->pads[nsp + i] = upper ? big : small;
  }
  return NULL;
}

static mlc_status check_rank(mlc_fe_ctx *cx, const mlc_value *x) {
  int r = x->type.rank;
  if (r < 3)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "input must have rank >= 3 (N, C, spatial...), got %s",
                        mlc_fe_shape_str(cx, &x->type));
  if (r - 2 > MAX_SPATIAL)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "%d spatial dims are not supported", r - 2);
  return NULL;
}

/* ---- Conv --------------------------------------------------------------- */

MLC_FE_CHECK(conv) {
  (void)opset;
  check_auto_pad(p, n);
}

/*
** ONNX Conv-1,11: Y = X (*) W + B over N-d windows, with group, strides,
** dilations and pads (or auto_pad).
*/
MLC_FE_CVT(conv) {
  (void)nout;
  mlc_value *x = in[0], *wt = in[1], *b = nin > 2 ? in[2] : NULL;
  MLC_RETURN_IF_ERROR(check_rank(cx, x));
  int r = x->type.rank, nsp = r - 2;
  if (wt->type.rank != r)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "weight %s must have rank %d like the input %s",
                        mlc_fe_shape_str(cx, &wt->type), r, mlc_fe_shape_str(cx, &x->type));
  const int64_t *ks;
  int nk = mlc_fe_attr_ints(n, "kernel_shape", &ks);
  if (nk >= 0 && nk != nsp)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "kernel_shape has %d entries, weight has %d spatial dims",
                        nk, nsp);
  int64_t kernel[MAX_SPATIAL];
  for (int i = 0; i < nsp; i++) {
    int64_t wd = wt->type.dims[2 + i];
    if (nk >= 0 && !MLC_DIM_IS_SYM(wd) && ks[i] != wd)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "kernel_shape[%d] = %lld, but the weight %s has %lld",
                          i, (long long)ks[i], mlc_fe_shape_str(cx, &wt->type), (long long)wd);
    kernel[i] = nk >= 0 ? ks[i] : wd;
    if (MLC_DIM_IS_SYM(kernel[i]))
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "the kernel size must be static, the weight is %s",
                          mlc_fe_shape_str(cx, &wt->type));
  }
  int64_t group = mlc_fe_attr_int(n, "group", 1);
  if (group < 1) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "group %lld must be >= 1", (long long)group);
  int64_t c = x->type.dims[1], m = wt->type.dims[0], cg = wt->type.dims[1];
  if (!MLC_DIM_IS_SYM(c) && !MLC_DIM_IS_SYM(cg) && c != cg * group)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT,
                        "the input %s has %lld channels, the weight %s expects %lld (group %lld)",
                        mlc_fe_shape_str(cx, &x->type), (long long)c, mlc_fe_shape_str(cx, &wt->type),
                        (long long)(cg * group), (long long)group);
  if (!MLC_DIM_IS_SYM(m) && m % group != 0)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%lld output channels are not divisible by group %lld",
                        (long long)m, (long long)group);
  if (b && (b->type.rank != 1 || (!MLC_DIM_IS_SYM(m) && !MLC_DIM_IS_SYM(b->type.dims[0]) && b->type.dims[0] != m)))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "bias %s must be 1-D with %lld entries",
                        mlc_fe_shape_str(cx, &b->type), (long long)m);
  window w;
  MLC_RETURN_IF_ERROR(read_window(cx, n, x, kernel, 1, &w));
  mlc_attr a[4] = {mlc_attr_ints("strides", w.strides, nsp), mlc_attr_ints("pads", w.pads, 2 * nsp),
                   mlc_attr_ints("dilations", w.dilations, nsp), mlc_attr_int("groups", group)};
  mlc_value *args[3] = {x, wt, b};
  return mlc_fe_emit(cx, MLC_OP_CONV, args, b ? 3 : 2, a, 4, &out[0]);
}

/* ---- pooling ------------------------------------------------------------ */

MLC_FE_CHECK(max_pool) {
  (void)opset;
  check_auto_pad(p, n);
  int64_t so = mlc_fe_attr_int(n, "storage_order", 0);
  if (so != 0 && so != 1) mlc_fe_problem(p, "storage_order %lld not supported", (long long)so);
}

MLC_FE_CHECK(average_pool) {
  (void)opset;
  check_auto_pad(p, n);
  const int64_t *d;
  int k = mlc_fe_attr_ints(n, "dilations", &d);
  for (int i = 0; i < k; i++)
    if (d[i] != 1) {
      mlc_fe_problem(p, "dilations other than 1 not supported");
      break;
    }
}

/* The kernel_shape attribute, which pools require. */
static mlc_status pool_kernel(mlc_fe_ctx *cx, const mlc_onnx_node *n, int nsp, int64_t *kernel) {
  if (!mlc_fe_attr(n, "kernel_shape"))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "attribute kernel_shape is required");
  return read_list(cx, n, "kernel_shape", nsp, 1, 1, kernel);
}

/* ONNX MaxPool-1,8,10,11,12: Y = max over N-d windows (dilations, ceil_mode from 10);
** from 8 Indices: the int64 flat input index of each maximum (storage_order) */
MLC_FE_CVT(max_pool) {
  (void)nin;
  mlc_value *x = in[0];
  MLC_RETURN_IF_ERROR(check_rank(cx, x));
  int nsp = x->type.rank - 2;
  int64_t kernel[MAX_SPATIAL];
  MLC_RETURN_IF_ERROR(pool_kernel(cx, n, nsp, kernel));
  window w;
  MLC_RETURN_IF_ERROR(read_window(cx, n, x, kernel, 1, &w));
  mlc_attr a[5] = {mlc_attr_ints("kernel", w.kernel, nsp), mlc_attr_ints("strides", w.strides, nsp),
                   mlc_attr_ints("pads", w.pads, 2 * nsp), mlc_attr_ints("dilations", w.dilations, nsp),
                   mlc_attr_int("ceil_mode", mlc_fe_attr_int(n, "ceil_mode", 0) != 0)};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_MAX_POOL, &x, 1, a, 5, &out[0]));
  if (nout < 2 || !mlc_fe_output_used(n, 1)) return NULL;
  mlc_attr ai[6] = {a[0], a[1], a[2], a[3], a[4],
                    mlc_attr_int("storage_order", mlc_fe_attr_int(n, "storage_order", 0) != 0)};
  return mlc_fe_emit(cx, MLC_OP_MAX_POOL_INDICES, &x, 1, ai, 6, &out[1]);
}

/*
** ONNX AveragePool-1,7,10,11,19: Y = mean over N-d windows
** (count_include_pad from 7, ceil_mode from 10; dilations of 19 only 1).
*/
MLC_FE_CVT(average_pool) {
  (void)nin, (void)nout;
  mlc_value *x = in[0];
  MLC_RETURN_IF_ERROR(check_rank(cx, x));
  int nsp = x->type.rank - 2;
  int64_t kernel[MAX_SPATIAL];
  MLC_RETURN_IF_ERROR(pool_kernel(cx, n, nsp, kernel));
  window w;
  MLC_RETURN_IF_ERROR(read_window(cx, n, x, kernel, 0, &w));
  mlc_attr a[5] = {mlc_attr_ints("kernel", w.kernel, nsp), mlc_attr_ints("strides", w.strides, nsp),
                   mlc_attr_ints("pads", w.pads, 2 * nsp),
                   mlc_attr_int("ceil_mode", mlc_fe_attr_int(n, "ceil_mode", 0) != 0),
                   mlc_attr_int("count_include_pad", mlc_fe_attr_int(n, "count_include_pad", 0) != 0)};
  return mlc_fe_emit(cx, MLC_OP_AVG_POOL, &x, 1, a, 5, &out[0]);
}

/* A reduction of |x| over its spatial axes 2.. keeping dims. */
static mlc_status global_pool(mlc_fe_ctx *cx, mlc_value *x, mlc_op op, mlc_value **out) {
  MLC_RETURN_IF_ERROR(check_rank(cx, x));
  int64_t axes[MAX_SPATIAL];
  int nsp = x->type.rank - 2;
  for (int i = 0; i < nsp; i++) axes[i] = 2 + i;
  mlc_attr a[2] = {mlc_attr_ints("axes", axes, nsp), mlc_attr_int("keepdims", 1)};
  return mlc_fe_emit(cx, op, &x, 1, a, 2, out);
}

/* ONNX GlobalAveragePool-1: Y = mean of X over axes 2.., keepdims */
MLC_FE_CVT(global_average_pool) {
  (void)n, (void)nin, (void)nout;
  return global_pool(cx, in[0], MLC_OP_MEAN, &out[0]);
}

/* ONNX GlobalMaxPool-1: Y = max of X over axes 2.., keepdims */
MLC_FE_CVT(global_max_pool) {
  (void)n, (void)nin, (void)nout;
  return global_pool(cx, in[0], MLC_OP_MAX, &out[0]);
}

/* ---- BatchNormalization ------------------------------------------------- */

MLC_FE_CHECK(batch_norm) {
  (void)opset;
  int64_t tm = mlc_fe_attr_int(n, "training_mode", 0);
  if (tm != 0) mlc_fe_problem(p, "training_mode=%lld not supported (inference only)", (long long)tm);
  for (int i = 1; i < n->noutputs; i++)
    if (mlc_fe_output_used(n, i)) {
      mlc_fe_problem(p, "outputs beyond Y (training statistics) not supported");
      break;
    }
}

/*
** ONNX BatchNormalization-1,6,7,9,14,15 (inference):
**   Y = (X - mean) / sqrt(var + epsilon) * scale + bias
** decomposed as Y = X * s + b with s = scale / sqrt(var + epsilon) and
** b = bias - mean * s, both reshaped to [C, 1, ..., 1].  With constant
** statistics everything but the final multiply and add folds.  spatial=0
** (1-8: per-activation statistics) takes them of shape [C, D1, ..., Dn],
** X's shape without N, which broadcast as they are.
*/
MLC_FE_CVT(batch_norm) {
  (void)nin, (void)nout;
  mlc_value *x = in[0], *scale = in[1], *bias = in[2], *mean = in[3], *var = in[4];
  int r = x->type.rank;
  if (r < 2)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "input must have rank >= 2 (N, C, ...), got %s",
                        mlc_fe_shape_str(cx, &x->type));
  /* per-activation: statistics of X's shape less N (1-D when X is [N, C]) */
  int per_act = mlc_fe_attr_int(n, "spatial", 1) == 0 && r > 2;
  for (int i = 1; i < 5; i++) {
    int ok = in[i]->type.rank == (per_act ? r - 1 : 1);
    for (int d = 0; ok && per_act && d < r - 1; d++)
      ok = in[i]->type.dims[d] == x->type.dims[d + 1];
    if (!ok)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "input %d must be %s, got %s", i,
                          per_act ? "X's shape without N (spatial=0)" : "1-D (C)",
                          mlc_fe_shape_str(cx, &in[i]->type));
  }
  mlc_value *eps, *t, *s, *b;
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, var->type.dtype, mlc_fe_attr_float(n, "epsilon", 1e-5), &eps));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, var, eps, &t));
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_SQRT, t, &t));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_DIV, scale, t, &s));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, mean, s, &t));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, bias, t, &b));
  int64_t dims[64];
  if (r > 64) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "rank %d is too large", r);
  dims[0] = scale->type.dims[0];
  for (int i = 1; i < r - 1; i++) dims[i] = 1;
  if (!per_act) {
    MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, s, dims, r - 1, &s));
    MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, b, dims, r - 1, &b));
  }
  mlc_value *y;
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, x, s, &y));
  return mlc_fe_binary(cx, MLC_OP_ADD, y, b, &out[0]);
}

/* ---- Flatten, Dropout --------------------------------------------------- */

/* ONNX Flatten-1,9,11,13: Y = X as [prod(d[:axis]), prod(d[axis:])] (axis = 1) */
MLC_FE_CVT(flatten) {
  (void)nin, (void)nout;
  mlc_value *x = in[0];
  int r = x->type.rank;
  int64_t axis = mlc_fe_attr_int(n, "axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                        (long long)mlc_fe_attr_int(n, "axis", 1), r);
  int64_t d[2];
  MLC_RETURN_IF_ERROR(mlc_fe_dim_product(cx, x->type.dims, (int)axis, "the outer dim", &d[0]));
  MLC_RETURN_IF_ERROR(mlc_fe_dim_product(cx, x->type.dims + axis, r - (int)axis, "the inner dim", &d[1]));
  return mlc_fe_reshape(cx, x, d, 2, &out[0]);
}

/*
** ONNX Dropout-1,6,7,10,12,13 (inference): Y = X; the optional mask is all
** true (a broadcast constant).  training_mode (12+) must be absent or a
** constant false.
*/
MLC_FE_CVT(dropout) {
  (void)n;
  if (nin > 2 && in[2]) {
    double training;
    MLC_RETURN_IF_ERROR(mlc_fe_const_scalar(cx, in[2], "training_mode", &training));
    if (training != 0)
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "training_mode=true not supported (inference only)");
  }
  out[0] = in[0];
  if (nout > 1 && mlc_fe_output_used(n, 1)) {
    mlc_value *t;
    MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_BOOL, 1, &t));
    mlc_attr a = mlc_attr_ints("shape", in[0]->type.dims, in[0]->type.rank);
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_BROADCAST_TO, &t, 1, &a, 1, &out[1]));
  }
  return NULL;
}

/* ---- ConvTranspose ------------------------------------------------------ */

MLC_FE_CHECK(conv_transpose) {
  (void)opset;
  check_auto_pad(p, n);
}

/*
** ONNX ConvTranspose-1,11: Y = the transposed convolution of X by W + B.
** Pads come from pads, or from output_shape / auto_pad SAME_* (output =
** input * stride) through the total padding
**   total = stride*(in-1) + output_padding + (kernel-1)*dilation + 1 - out
** split as begin = total/2 for SAME_UPPER, begin = total - total/2 otherwise;
** a negative total (an output_shape beyond the full output) adds to
** output_padding.
*/
MLC_FE_CVT(conv_transpose) {
  (void)nout;
  mlc_value *x = in[0], *wt = in[1], *b = nin > 2 ? in[2] : NULL;
  MLC_RETURN_IF_ERROR(check_rank(cx, x));
  int r = x->type.rank, nsp = r - 2;
  if (wt->type.rank != r)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "weight %s must have rank %d like the input %s",
                        mlc_fe_shape_str(cx, &wt->type), r, mlc_fe_shape_str(cx, &x->type));
  int64_t kernel[MAX_SPATIAL], opad[MAX_SPATIAL], oshape[MAX_SPATIAL];
  for (int i = 0; i < nsp; i++) kernel[i] = wt->type.dims[2 + i];
  if (mlc_fe_attr(n, "kernel_shape")) MLC_RETURN_IF_ERROR(read_list(cx, n, "kernel_shape", nsp, 1, 1, kernel));
  for (int i = 0; i < nsp; i++)
    if (MLC_DIM_IS_SYM(kernel[i]) || kernel[i] != wt->type.dims[2 + i])
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "kernel_shape does not match the weight %s",
                          mlc_fe_shape_str(cx, &wt->type));
  int64_t group = mlc_fe_attr_int(n, "group", 1);
  if (group < 1) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "group %lld must be >= 1", (long long)group);
  MLC_RETURN_IF_ERROR(read_list(cx, n, "output_padding", nsp, 0, 0, opad));
  window w;
  const char *ap = mlc_fe_attr_str(n, "auto_pad", "NOTSET");
  const int64_t *os;
  int nos = mlc_fe_attr_ints(n, "output_shape", &os);
  int same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
  if (nos < 0 && !same) {
    MLC_RETURN_IF_ERROR(read_window(cx, n, x, kernel, 1, &w));
  } else {
    if (nos >= 0 && nos != nsp && nos != nsp + 2)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "output_shape has %d entries, expected %d", nos, nsp);
    w.nsp = nsp;
    memcpy(w.kernel, kernel, sizeof(int64_t) * (size_t)nsp);
    MLC_RETURN_IF_ERROR(read_list(cx, n, "strides", nsp, 1, 1, w.strides));
    MLC_RETURN_IF_ERROR(read_list(cx, n, "dilations", nsp, 1, 1, w.dilations));
    for (int i = 0; i < nsp; i++) {
      int64_t d = x->type.dims[2 + i];
      if (MLC_DIM_IS_SYM(d))
        return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "output_shape / auto_pad need static spatial dims, the input is %s",
                            mlc_fe_shape_str(cx, &x->type));
      /* total = stride * (d - 1) + output_padding + (k - 1) * dilation + 1 - output */
      int64_t total, ek;
      if (nos >= 0) oshape[i] = os[nos - nsp + i];
      if ((nos < 0 && __builtin_mul_overflow(d, w.strides[i], &oshape[i])) ||
          __builtin_mul_overflow(w.strides[i], d - 1, &total) || __builtin_add_overflow(total, opad[i], &total) ||
          __builtin_mul_overflow(kernel[i] - 1, w.dilations[i], &ek) || __builtin_add_overflow(total, ek, &total) ||
          __builtin_add_overflow(total, 1, &total) || __builtin_sub_overflow(total, oshape[i], &total))
        return mlc_fe_error(cx, MLC_INVALID_ARGUMENT,
                            "the output extent or padding of spatial axis %d overflows int64 (extent %lld, kernel "
                            "%lld, stride %lld, dilation %lld)", i, (long long)d, (long long)kernel[i],
                            (long long)w.strides[i], (long long)w.dilations[i]);
      if (total < 0) { /* a larger output: zeros at the end, as output_padding gives */
        if (__builtin_sub_overflow(opad[i], total, &opad[i]))
          return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "output_shape[%d] = %lld overflows int64 with output_padding",
                              i, (long long)oshape[i]);
        total = 0;
      }
      int upper = strcmp(ap, "SAME_UPPER") == 0;
      w.pads[i] = upper ? total / 2 : total - total / 2;
      w.pads[nsp + i] = total - w.pads[i];
    }
  }
  mlc_attr a[5] = {mlc_attr_ints("strides", w.strides, nsp), mlc_attr_ints("pads", w.pads, 2 * nsp),
                   mlc_attr_ints("dilations", w.dilations, nsp), mlc_attr_int("groups", group),
                   mlc_attr_ints("output_padding", opad, nsp)};
  mlc_value *args[3] = {x, wt, b};
  return mlc_fe_emit(cx, MLC_OP_CONV_TRANSPOSE, args, b ? 3 : 2, a, 5, &out[0]);
}

/* ---- LayerNormalization ------------------------------------------------- */

MLC_FE_CHECK(layer_norm) {
  (void)opset;
  int64_t st = mlc_fe_attr_int(n, "stash_type", 1);
  mlc_dtype dt = mlc_onnx_dtype((int)st);
  if ((mlc_fe_output_used(n, 1) || mlc_fe_output_used(n, 2)) && !mlc_dtype_is_float(dt))
    mlc_fe_problem(p, "stash_type %lld not supported", (long long)st);
}

/*
** ONNX LayerNormalization-17: Y = (X - mean) / sqrt(var + epsilon) * Scale + B
** over the axes from axis (default -1) on; B is optional.  The optional
** outputs Mean and InvStdDev (keepdims, of stash_type) are computed with
** reductions: mean(X), 1 / sqrt(mean((X - mean)^2) + epsilon).
*/
MLC_FE_CVT(layer_norm) {
  mlc_value *x = in[0], *scale = in[1], *bias = nin > 2 ? in[2] : NULL;
  int axis, r = x->type.rank;
  double eps = mlc_fe_attr_float(n, "epsilon", 1e-5);
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "axis", -1), r, "axis", &axis));
  if (!bias) MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, scale->type.dtype, 0, &bias));
  mlc_attr a[2] = {mlc_attr_int("axis", axis), mlc_attr_float("epsilon", eps)};
  mlc_value *args[3] = {x, scale, bias};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_LAYER_NORM, args, 3, a, 2, &out[0]));
  int want_mean = nout > 1 && mlc_fe_output_used(n, 1), want_inv = nout > 2 && mlc_fe_output_used(n, 2);
  if (!want_mean && !want_inv) return NULL;
  int64_t axes[64];
  if (r > 64) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "rank %d is too large", r);
  for (int i = axis; i < r; i++) axes[i - axis] = i;
  mlc_attr ra[2] = {mlc_attr_ints("axes", axes, r - axis), mlc_attr_int("keepdims", 1)};
  mlc_value *mean, *d, *var, *e;
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_MEAN, &x, 1, ra, 2, &mean));
  mlc_dtype st = mlc_onnx_dtype((int)mlc_fe_attr_int(n, "stash_type", 1));
  mlc_attr cast = mlc_attr_int("dtype", (int64_t)st);
  if (want_mean) {
    out[1] = mean;
    if (st != x->type.dtype) MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CAST, &mean, 1, &cast, 1, &out[1]));
  }
  if (!want_inv) return NULL;
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, x, mean, &d));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, d, d, &d));
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_MEAN, &d, 1, ra, 2, &var));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, x->type.dtype, eps, &e));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, var, e, &var));
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_SQRT, var, &var));
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_RECIPROCAL, var, &out[2]));
  if (st != x->type.dtype) MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CAST, &out[2], 1, &cast, 1, &out[2]));
  return NULL;
}

/* ---- InstanceNormalization ---------------------------------------------- */

/*
** ONNX InstanceNormalization-1,6: per sample and channel over the spatial
** axes, Y = scale * (X - mean) / sqrt(var + epsilon) + B, composed as
** d = X - mean(X); Y = d / sqrt(mean(d*d) + epsilon) * scale + B with scale
** and B reshaped to [C, 1, ..., 1].
*/
MLC_FE_CVT(instance_norm) {
  (void)nin, (void)nout;
  mlc_value *x = in[0], *scale = in[1], *bias = in[2];
  MLC_RETURN_IF_ERROR(check_rank(cx, x));
  int r = x->type.rank, nsp = r - 2;
  if (scale->type.rank != 1 || bias->type.rank != 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "scale %s and B %s must be 1-D (C)",
                        mlc_fe_shape_str(cx, &scale->type), mlc_fe_shape_str(cx, &bias->type));
  int64_t axes[MAX_SPATIAL], dims[MAX_SPATIAL + 1];
  for (int i = 0; i < nsp; i++) axes[i] = 2 + i;
  mlc_attr a[2] = {mlc_attr_ints("axes", axes, nsp), mlc_attr_int("keepdims", 1)};
  mlc_value *mean, *d, *var, *e, *y;
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_MEAN, &x, 1, a, 2, &mean));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, x, mean, &d));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, d, d, &var));
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_MEAN, &var, 1, a, 2, &var));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, x->type.dtype, mlc_fe_attr_float(n, "epsilon", 1e-5), &e));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, var, e, &var));
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_SQRT, var, &var));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_DIV, d, var, &y));
  dims[0] = scale->type.dims[0];
  for (int i = 0; i < nsp; i++) dims[1 + i] = 1;
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, scale, dims, nsp + 1, &scale));
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, bias, dims, nsp + 1, &bias));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, y, scale, &y));
  return mlc_fe_binary(cx, MLC_OP_ADD, y, bias, &out[0]);
}
