/*
** image.c: lowering rules of the image and indexing ops: resize,
** gather_elements, gather_nd, scatter_elements, scatter_nd and
** max_pool_indices.
**
** resize: each output coordinate is mapped back to the input per axis in
** float64 (the coordinate transformation modes of ONNX Resize, with the
** scale and roi immediates or loads of the scales / roi arguments, or the
** scale output extent / input extent, symbolic extents included); nearest
** rounds it to one index, linear and cubic sum 2 or 4 taps per axis with
** edge-clamped reads (one te reduction over the taps of every resized
** axis, weights multiplied across axes), cubic with the cubic_coeff_a
** kernel and, with exclude_outside, the taps outside the input dropped and
** the rest renormalized.  Axes whose extent and scale stay the same (known
** at compile time) read straight through.  An argument after those (attr
** dims_arg) is define_dims' output: it orders the kernel after the binding
** of the output extents and is not read.  tf_crop_and_resize gives
** extrapolation_value where a coordinate falls outside the input.  The sum
** runs in the output dtype for float32/float64 and in float64 otherwise,
** followed by a converting stage.
**
** gathers and scatters first run a check stage over their indices: an
** index outside [-n, n) of its axis stops the kernel with an error naming
** it (mlc_lg_check_indices), so the stages after it read in bounds.
** gathers are then one stage of loads at computed indices (negative
** indices wrap).
**
** Scatters are written as a search over the updates, in two stages, so
** the result never depends on the order of stores: stage 1 finds, for each
** output element, the updates that land on it -- reduction none: the last
** one (the largest update position, as sequential writes leave it);
** add/mul/max/min: their sum, product, max or min -- and stage 2 combines
** that with the input.  Scatter_elements searches only the indices along
** the axis (cost: output size x indices extent on the axis); scatter_nd
** searches every update position (output size x number of updates).
**
** max_pool_indices: stage 1 the window maximum, stage 2 the first window
** tap (row-major over the kernel) holding it (when NaNs leave none, the
** first tap inside the input), stage 3 its flat input index
** n*C*D + c*D + spatial, the spatial part row-major or, with
** storage_order 1, column-major.
*/
#include <math.h>
#include <string.h>

#include "lower/lower_int.h"

#define M (c->tm)
#define MAX_RANK 16

static mlc_tir_expr *i64(mlc_lg_call *c, int64_t v) { return mlc_tir_i64(M, v); }
static mlc_tir_expr *f64(mlc_lg_call *c, double v) { return mlc_tir_float(M, MLC_DTYPE_F64, v); }

static mlc_tir_expr *and2(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) {
  return a ? mlc_tir_binary(M, MLC_TIR_AND, a, b) : b;
}
static mlc_tir_expr *or2(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) {
  return a ? mlc_tir_binary(M, MLC_TIR_OR, a, b) : b;
}
static mlc_tir_expr *bin(mlc_lg_call *c, mlc_tir_binop op, mlc_tir_expr *a, mlc_tir_expr *b) {
  return mlc_tir_binary(M, op, a, b);
}

/* v clamped into [0, ext - 1] (|ext| >= 1). */
static mlc_tir_expr *clamp_index(mlc_lg_call *c, mlc_tir_expr *v, mlc_tir_expr *ext) {
  return mlc_tir_max(M, mlc_tir_min(M, v, mlc_tir_sub(M, ext, i64(c, 1))), i64(c, 0));
}

/* An index value read from an int tensor, as int64, negative wrapped by
** |ext| (not clamped). */
static mlc_tir_expr *wrap_index(mlc_lg_call *c, mlc_tir_expr *v, mlc_tir_expr *ext) {
  v = mlc_tir_cast(M, MLC_DTYPE_I64, v);
  return mlc_tir_select(M, bin(c, MLC_TIR_LT, v, i64(c, 0)), mlc_tir_add(M, v, ext), v);
}

/* The stage |t| of |c->out_types[k]|'s shape computed by |fn(user)|. */
static mlc_status stage(mlc_lg_call *c, int k, const char *name, mlc_te_body_fn fn, void *user,
                        mlc_te_tensor **out) {
  const mlc_type *t = &c->out_types[k];
  mlc_tir_expr **shape = mlc_lg_shape(c, t);
  if (!shape) return mlc_oom();
  return mlc_te_compute(c->b, name, t->rank, shape, NULL, fn, user, out);
}

static mlc_status check_ranks(mlc_lg_call *c) {
  for (int i = 0; i < c->nargs; i++)
    if (c->arg_types[i].rank > MAX_RANK)
      return mlc_lg_error(c, MLC_UNIMPLEMENTED, "argument %d has rank %d (at most %d)", i,
                          c->arg_types[i].rank, MAX_RANK);
  if (c->out_types[0].rank > MAX_RANK)
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "output rank %d (at most %d)", c->out_types[0].rank, MAX_RANK);
  return NULL;
}

/* ---- resize --------------------------------------------------------------------- */

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum { CT_HALF_PIXEL, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_NN, CT_CROP };
enum { NM_FLOOR_PREF, NM_CEIL_PREF, NM_FLOOR, NM_CEIL, NM_SIMPLE };

typedef struct rs_ctx {
  mlc_lg_call *c;
  int rank, mode, coord, nearest, excl;
  double a, extrap;
  int roi_arg, scales_arg;      /* argument index, 0 when an attribute */
  int derived;                  /* scale = output extent / input extent */
  const double *scales, *roi;   /* attributes (roi may be NULL: 0..0, 1..1) */
  unsigned char same[MAX_RANK]; /* axis read straight through */
  mlc_dtype acc;
  mlc_te_tensor *sum;           /* linear/cubic: the interpolation stage */
} rs_ctx;

static int pick(const char *s, const char *const *names, int dflt) {
  for (int i = 0; names[i]; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return dflt;
}

/* Element |i| of the float vector argument |a| as float64. */
static mlc_tir_expr *vec_elem(mlc_lg_call *c, int a, int64_t i) {
  mlc_tir_expr *ix = i64(c, i);
  return mlc_tir_cast(M, MLC_DTYPE_F64, mlc_lg_arg_load(c, a, &ix));
}

/* Extent |d| of |t| as float64. */
static mlc_tir_expr *dim_f64(mlc_lg_call *c, const mlc_type *t, int d) {
  return mlc_tir_cast(M, MLC_DTYPE_F64, mlc_lg_dim(c, t, d));
}

static mlc_tir_expr *rs_scale(rs_ctx *r, int d) {
  mlc_lg_call *c = r->c;
  if (r->derived)
    return bin(c, MLC_TIR_DIV, dim_f64(c, &c->out_types[0], d), dim_f64(c, &c->arg_types[0], d));
  return r->scales_arg ? vec_elem(c, r->scales_arg, d) : f64(c, r->scales[d]);
}

/* Start (|end| 0) or end of the roi of axis |d|. */
static mlc_tir_expr *rs_roi(rs_ctx *r, int d, int end) {
  mlc_lg_call *c = r->c;
  int i = end ? r->rank + d : d;
  if (r->roi_arg) return vec_elem(c, r->roi_arg, i);
  return f64(c, r->roi ? r->roi[i] : end ? 1.0 : 0.0);
}

/* The input coordinate (float64) of output index |o| on axis |d|. */
static mlc_tir_expr *rs_coord(rs_ctx *r, int d, mlc_tir_expr *o) {
  mlc_lg_call *c = r->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *of = mlc_tir_cast(M, MLC_DTYPE_F64, o);
  mlc_tir_expr *in1 = bin(c, MLC_TIR_SUB, dim_f64(c, x, d), f64(c, 1));
  mlc_tir_expr *olen = mlc_lg_dim(c, &c->out_types[0], d);
  mlc_tir_expr *one_out = bin(c, MLC_TIR_EQ, olen, i64(c, 1));
  mlc_tir_expr *olen1 = mlc_tir_cast(M, MLC_DTYPE_F64, mlc_tir_sub(M, olen, i64(c, 1)));
  mlc_tir_expr *half = f64(c, 0.5);
  switch (r->coord) {
    case CT_PYTORCH: {
      mlc_tir_expr *v = bin(c, MLC_TIR_SUB, bin(c, MLC_TIR_DIV, bin(c, MLC_TIR_ADD, of, half), rs_scale(r, d)), half);
      return mlc_tir_select(M, bin(c, MLC_TIR_GT, olen, i64(c, 1)), v, f64(c, 0));
    }
    case CT_ALIGN:
      return mlc_tir_select(M, one_out, f64(c, 0), bin(c, MLC_TIR_DIV, bin(c, MLC_TIR_MUL, of, in1), olen1));
    case CT_ASYM: return bin(c, MLC_TIR_DIV, of, rs_scale(r, d));
    case CT_TF_NN: return bin(c, MLC_TIR_DIV, bin(c, MLC_TIR_ADD, of, half), rs_scale(r, d));
    case CT_CROP: {
      mlc_tir_expr *s = rs_roi(r, d, 0), *e = rs_roi(r, d, 1);
      mlc_tir_expr *span = bin(c, MLC_TIR_MUL, bin(c, MLC_TIR_MUL, of, bin(c, MLC_TIR_SUB, e, s)), in1);
      mlc_tir_expr *v = bin(c, MLC_TIR_ADD, bin(c, MLC_TIR_DIV, span, olen1), bin(c, MLC_TIR_MUL, s, in1));
      mlc_tir_expr *mid = bin(c, MLC_TIR_MUL, bin(c, MLC_TIR_MUL, half, bin(c, MLC_TIR_ADD, s, e)), in1);
      return mlc_tir_select(M, one_out, mid, v);
    }
    default: /* half_pixel */
      return bin(c, MLC_TIR_SUB, bin(c, MLC_TIR_DIV, bin(c, MLC_TIR_ADD, of, half), rs_scale(r, d)), half);
  }
}

/* tf_crop_and_resize: some resized axis maps outside the input. */
static mlc_tir_expr *rs_outside(rs_ctx *r, mlc_tir_expr *const *idx) {
  mlc_lg_call *c = r->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *cond = NULL;
  for (int d = 0; d < r->rank; d++) {
    if (r->same[d]) continue;
    mlc_tir_expr *v = rs_coord(r, d, idx[d]);
    cond = or2(c, cond, or2(c, bin(c, MLC_TIR_LT, v, f64(c, 0)),
                            bin(c, MLC_TIR_GT, v, bin(c, MLC_TIR_SUB, dim_f64(c, x, d), f64(c, 1)))));
  }
  return cond;
}

/* Nearest input index of coordinate |v| on axis |d| (clamped). */
static mlc_tir_expr *rs_nearest(rs_ctx *r, int d, mlc_tir_expr *v) {
  mlc_lg_call *c = r->c;
  mlc_tir_expr *fl = mlc_tir_call1(M, MLC_TIR_INTRIN_FLOOR, v), *n;
  mlc_tir_expr *frac = bin(c, MLC_TIR_SUB, v, fl);
  mlc_tir_expr *up = bin(c, MLC_TIR_ADD, fl, f64(c, 1));
  switch (r->nearest) {
    case NM_CEIL_PREF: n = mlc_tir_select(M, bin(c, MLC_TIR_GE, frac, f64(c, 0.5)), up, fl); break;
    case NM_FLOOR: n = fl; break;
    case NM_CEIL: n = mlc_tir_call1(M, MLC_TIR_INTRIN_CEIL, v); break;
    case NM_SIMPLE: /* before opset 11: ceil when downsampling, else truncate */
      n = mlc_tir_select(M, bin(c, MLC_TIR_LT, rs_scale(r, d), f64(c, 1)), mlc_tir_call1(M, MLC_TIR_INTRIN_CEIL, v),
                         mlc_tir_call1(M, MLC_TIR_INTRIN_TRUNC, v));
      break;
    default: n = mlc_tir_select(M, bin(c, MLC_TIR_GT, frac, f64(c, 0.5)), up, fl); break;
  }
  return clamp_index(c, mlc_tir_cast(M, MLC_DTYPE_I64, n), mlc_lg_dim(c, &c->arg_types[0], d));
}

static mlc_tir_expr *rs_nearest_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  rs_ctx *r = user;
  mlc_lg_call *c = r->c;
  mlc_tir_expr *xi[MAX_RANK];
  (void)b;
  for (int d = 0; d < r->rank; d++) xi[d] = r->same[d] ? idx[d] : rs_nearest(r, d, rs_coord(r, d, idx[d]));
  mlc_tir_expr *v = mlc_lg_arg_load(c, 0, xi);
  if (r->coord != CT_CROP) return v;
  mlc_tir_expr *out = rs_outside(r, idx);
  if (!out) return v;
  return mlc_tir_select(M, out, mlc_lg_imm(c, c->out_types[0].dtype, r->extrap), v);
}

/* The cubic convolution weight of tap |k| (0..3, at floor - 1 + k) for
** fraction |t|, as the ONNX reference writes it. */
static mlc_tir_expr *cubic_coeff(rs_ctx *r, int k, mlc_tir_expr *t) {
  mlc_lg_call *c = r->c;
  double a = r->a;
  mlc_tir_expr *one = f64(c, 1);
  if (k == 0 || k == 3) { /* the outer taps: s = 1 + t or 2 - t, in [1, 2] */
    mlc_tir_expr *s = k == 0 ? bin(c, MLC_TIR_ADD, t, one) : bin(c, MLC_TIR_SUB, f64(c, 2), t);
    mlc_tir_expr *p = bin(c, MLC_TIR_SUB, bin(c, MLC_TIR_MUL, f64(c, a), s), f64(c, 5 * a));
    p = bin(c, MLC_TIR_ADD, bin(c, MLC_TIR_MUL, p, s), f64(c, 8 * a));
    return bin(c, MLC_TIR_SUB, bin(c, MLC_TIR_MUL, p, s), f64(c, 4 * a));
  }
  /* the inner taps: s = t or 1 - t, in [0, 1] */
  mlc_tir_expr *s = k == 1 ? t : bin(c, MLC_TIR_SUB, one, t);
  mlc_tir_expr *p = bin(c, MLC_TIR_SUB, bin(c, MLC_TIR_MUL, f64(c, a + 2), s), f64(c, a + 3));
  return bin(c, MLC_TIR_ADD, bin(c, MLC_TIR_MUL, bin(c, MLC_TIR_MUL, p, s), s), one);
}

/* Weight of tap |kv| (a reduce variable) on axis |d| for coordinate |v|,
** and in *pos the tap's input index (clamped). */
static mlc_tir_expr *rs_tap(rs_ctx *r, int d, mlc_tir_expr *v, mlc_tir_expr *kv, mlc_tir_expr **pos) {
  mlc_lg_call *c = r->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *ext = mlc_lg_dim(c, x, d);
  mlc_tir_expr *fl = mlc_tir_call1(M, MLC_TIR_INTRIN_FLOOR, v);
  mlc_tir_expr *t = bin(c, MLC_TIR_SUB, v, fl);
  mlc_tir_expr *base = mlc_tir_cast(M, MLC_DTYPE_I64, fl);
  if (r->mode == RS_LINEAR) {
    *pos = clamp_index(c, mlc_tir_add(M, base, kv), ext);
    return mlc_tir_select(M, bin(c, MLC_TIR_EQ, kv, i64(c, 0)), bin(c, MLC_TIR_SUB, f64(c, 1), t), t);
  }
  mlc_tir_expr *raw = mlc_tir_add(M, mlc_tir_sub(M, base, i64(c, 1)), kv);
  *pos = clamp_index(c, raw, ext);
  mlc_tir_expr *w[4], *sum = NULL;
  for (int k = 0; k < 4; k++) {
    w[k] = cubic_coeff(r, k, t);
    if (r->excl) {
      mlc_tir_expr *p = mlc_tir_add(M, base, i64(c, k - 1));
      mlc_tir_expr *in = and2(c, bin(c, MLC_TIR_GE, p, i64(c, 0)), bin(c, MLC_TIR_LT, p, ext));
      w[k] = mlc_tir_select(M, in, w[k], f64(c, 0));
      sum = sum ? bin(c, MLC_TIR_ADD, sum, w[k]) : w[k];
    }
  }
  mlc_tir_expr *e = w[3];
  for (int k = 2; k >= 0; k--) e = mlc_tir_select(M, bin(c, MLC_TIR_EQ, kv, i64(c, k)), w[k], e);
  return r->excl ? bin(c, MLC_TIR_DIV, e, sum) : e;
}

static mlc_tir_expr *rs_interp_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  rs_ctx *r = user;
  mlc_lg_call *c = r->c;
  mlc_tir_expr *xi[MAX_RANK] = {0}, *axes[MAX_RANK], *w = NULL;
  int n = 0;
  for (int d = 0; d < r->rank; d++) {
    if (r->same[d]) {
      xi[d] = idx[d];
      continue;
    }
    char name[8] = {'t', (char)('0' + d % 10), 0};
    mlc_tir_expr *kv = mlc_te_reduce_axis(b, i64(c, r->mode == RS_LINEAR ? 2 : 4), name);
    axes[n++] = kv;
    mlc_tir_expr *wd = rs_tap(r, d, rs_coord(r, d, idx[d]), kv, &xi[d]);
    w = w ? bin(c, MLC_TIR_MUL, w, wd) : wd;
  }
  mlc_tir_expr *v = mlc_tir_cast(M, MLC_DTYPE_F64, mlc_lg_arg_load(c, 0, xi));
  if (n == 0) return mlc_tir_cast(M, r->acc, v);
  return mlc_te_sum(b, mlc_tir_cast(M, r->acc, bin(c, MLC_TIR_MUL, w, v)), axes, n);
}

/* The interpolation converted to the output dtype (extrapolation outside). */
static mlc_tir_expr *rs_finish_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  rs_ctx *r = user;
  mlc_lg_call *c = r->c;
  mlc_dtype ot = c->out_types[0].dtype;
  mlc_tir_expr *v = mlc_tir_cast(M, ot, mlc_te_load(b, r->sum, r->rank, idx));
  mlc_tir_expr *out = r->coord == CT_CROP ? rs_outside(r, idx) : NULL;
  return out ? mlc_tir_select(M, out, mlc_lg_imm(c, ot, r->extrap), v) : v;
}

/* y = x resized to attr sizes (see the top of the file) */
mlc_status mlc_lg_resize(mlc_lg_call *c, mlc_te_tensor **out) {
  static const char *const modes[] = {"nearest", "linear", "cubic", NULL};
  static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                       "tf_half_pixel_for_nn", "tf_crop_and_resize", NULL};
  static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
                                         "simple", NULL};
  const mlc_type *x = &c->arg_types[0], *y = &c->out_types[0];
  rs_ctx r;
  memset(&r, 0, sizeof r);
  r.c = c;
  r.rank = x->rank;
  MLC_RETURN_IF_ERROR(check_ranks(c));
  if (y->rank != x->rank) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "output rank differs from the input");
  r.mode = pick(mlc_attrs_str(c->attrs, c->nattrs, "mode", "nearest"), modes, -1);
  r.coord = pick(mlc_attrs_str(c->attrs, c->nattrs, "coordinate_transformation_mode", "half_pixel"), coords, -1);
  r.nearest = pick(mlc_attrs_str(c->attrs, c->nattrs, "nearest_mode", "round_prefer_floor"), nearests, -1);
  if (r.mode < 0 || r.coord < 0 || r.nearest < 0)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "unknown mode, coordinate_transformation_mode or nearest_mode");
  r.excl = mlc_lg_int(c, "exclude_outside", 0) != 0;
  r.a = mlc_lg_float(c, "cubic_coeff_a", -0.75);
  r.extrap = mlc_lg_float(c, "extrapolation_value", 0.0);
  int roi_arg = mlc_lg_int(c, "roi_arg", 0) != 0, scales_arg = mlc_lg_int(c, "scales_arg", 0) != 0;
  int dims_arg = mlc_lg_int(c, "dims_arg", 0) != 0; /* symbolic extents: all read at run time */
  r.roi_arg = roi_arg ? 1 : 0;
  r.scales_arg = scales_arg ? 1 + roi_arg : 0;
  r.derived = !scales_arg && mlc_lg_int(c, "scales_from_sizes", 0) != 0;
  if (c->nargs != 1 + roi_arg + scales_arg + dims_arg)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT,
                        "argument count does not match roi_arg, scales_arg and dims_arg");
  for (int i = 1; i < c->nargs; i++)
    if (!c->in[i]) return mlc_lg_error(c, MLC_INTERNAL, "roi or scales argument inlined");
  const mlc_attr *sa = mlc_lg_attr(c, "scales"), *ra = mlc_lg_attr(c, "roi");
  if (!scales_arg && !r.derived) {
    if (!sa || sa->kind != MLC_ATTR_FLOATS || sa->n != r.rank)
      return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "attribute scales needs %d entries", r.rank);
    r.scales = sa->floats;
  }
  if (!roi_arg && ra) {
    if (ra->kind != MLC_ATTR_FLOATS || ra->n != 2 * r.rank)
      return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "attribute roi needs %d entries", 2 * r.rank);
    r.roi = ra->floats;
  }
  for (int d = 0; d < r.rank; d++) {
    int64_t in = x->dims[d];
    int unit = r.derived || (r.scales && r.scales[d] == 1.0); /* a scale of exactly 1 */
    r.same[d] = in == y->dims[d] && unit && r.coord != CT_CROP && r.coord != CT_TF_NN;
    if (!r.same[d] && in == 0) r.same[d] = 1; /* nothing to read: the output is empty too */
  }
  if (r.mode == RS_NEAREST) return stage(c, 0, "T_resize", rs_nearest_body, &r, out);
  if (!mlc_dtype_is_float(x->dtype) && !mlc_dtype_is_int(x->dtype))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "dtype %s", mlc_dtype_name(x->dtype));
  mlc_dtype ot = y->dtype;
  r.acc = ot == MLC_DTYPE_F32 || ot == MLC_DTYPE_F64 ? ot : MLC_DTYPE_F64;
  if (r.acc == ot && r.coord != CT_CROP) return stage(c, 0, "T_resize", rs_interp_body, &r, out);
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_resize_acc", rs_interp_body, &r, &r.sum));
  return stage(c, 0, "T_resize", rs_finish_body, &r, out);
}

/* ---- gather_elements, gather_nd ---------------------------------------------------- */

static mlc_tir_expr *gather_elements_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  const mlc_type *x = &c->arg_types[0];
  int axis = (int)mlc_lg_int(c, "axis", 0);
  mlc_tir_expr *xi[MAX_RANK];
  (void)b;
  mlc_tir_expr *ext = mlc_lg_dim(c, x, axis);
  for (int d = 0; d < x->rank; d++) xi[d] = idx[d];
  xi[axis] = wrap_index(c, mlc_lg_arg_load(c, 1, idx), ext);
  return mlc_lg_arg_load(c, 0, xi);
}

/* y[i] = x[i with axis i_axis replaced by indices[i]] */
mlc_status mlc_lg_gather_elements(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_ranks(c));
  int axis = (int)mlc_lg_int(c, "axis", 0);
  const mlc_type *x = &c->arg_types[0];
  if (axis < 0 || axis >= x->rank || c->arg_types[1].rank != x->rank)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "axis %d or the indices' rank do not fit", axis);
  if (!mlc_dtype_is_int(c->arg_types[1].dtype))
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "indices of dtype %s", mlc_dtype_name(c->arg_types[1].dtype));
  MLC_RETURN_IF_ERROR(mlc_lg_check_indices(c, 1, axis, 0));
  return stage(c, 0, "T_gather_elements", gather_elements_body, c, out);
}

static mlc_tir_expr *gather_nd_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  const mlc_type *x = &c->arg_types[0], *it = &c->arg_types[1];
  int bd = (int)mlc_lg_int(c, "batch_dims", 0), q = it->rank;
  int k = (int)it->dims[q - 1];
  mlc_tir_expr *xi[MAX_RANK], *ii[MAX_RANK];
  (void)b;
  for (int d = 0; d < q - 1; d++) ii[d] = idx[d];
  for (int d = 0; d < bd; d++) xi[d] = idx[d];
  for (int t = 0; t < k; t++) {
    mlc_tir_expr *ext = mlc_lg_dim(c, x, bd + t);
    ii[q - 1] = i64(c, t);
    xi[bd + t] = wrap_index(c, mlc_lg_arg_load(c, 1, ii), ext);
  }
  for (int d = bd + k; d < x->rank; d++) xi[d] = idx[q - 1 + d - bd - k];
  return mlc_lg_arg_load(c, 0, xi);
}

/* y[b, q, r] = x[b, indices[b, q, :], r] */
mlc_status mlc_lg_gather_nd(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_ranks(c));
  const mlc_type *x = &c->arg_types[0], *it = &c->arg_types[1];
  int64_t bd = mlc_lg_int(c, "batch_dims", 0);
  int q = it->rank;
  if (q < 1 || bd < 0 || bd >= q || bd >= x->rank || it->dims[q - 1] < 1 || it->dims[q - 1] > x->rank - bd)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "batch_dims or the indices' shape do not fit the input");
  for (int d = (int)bd; d < (int)(bd + it->dims[q - 1]); d++)
    if (x->dims[d] == 0 && mlc_type_numel(&c->out_types[0]) != 0)
      return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "gathering from an empty axis %d", d);
  if (!mlc_dtype_is_int(it->dtype))
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "indices of dtype %s", mlc_dtype_name(it->dtype));
  MLC_RETURN_IF_ERROR(mlc_lg_check_indices(c, 1, (int)bd, 1));
  return stage(c, 0, "T_gather_nd", gather_nd_body, c, out);
}

/* ---- scatter_elements, scatter_nd ------------------------------------------------ */

enum { SC_NONE, SC_ADD, SC_MUL, SC_MAX, SC_MIN };

typedef struct sc_ctx {
  mlc_lg_call *c;
  int red, axis;
  int k;             /* scatter_nd: the last dim of indices */
  int empty;         /* no updates at all: a copy */
  mlc_dtype acc;     /* dtype of the combined updates */
  mlc_te_tensor *s1; /* stage 1 */
} sc_ctx;

static mlc_tir_reduce_op sc_op(int red) {
  return red == SC_MUL ? MLC_TIR_REDUCE_PROD
         : red == SC_MAX ? MLC_TIR_REDUCE_MAX
         : red == SC_MIN ? MLC_TIR_REDUCE_MIN
                         : MLC_TIR_REDUCE_SUM;
}

/* Stage 1 value of one candidate update: the position |pos| (none) or the
** update |u| when |hit|, else the combiner's identity. */
static mlc_tir_expr *sc_candidate(sc_ctx *s, mlc_tir_expr *hit, mlc_tir_expr *pos, mlc_tir_expr *u) {
  mlc_lg_call *c = s->c;
  if (s->red == SC_NONE) return mlc_tir_select(M, hit, pos, i64(c, -1));
  return mlc_tir_select(M, hit, mlc_tir_cast(M, s->acc, u), mlc_tir_reduce_identity(M, sc_op(s->red), s->acc));
}

static mlc_tir_expr *sc_reduce(sc_ctx *s, mlc_te_builder *b, mlc_tir_expr *v, mlc_tir_expr *const *axes, int n) {
  if (n == 0) return v;
  switch (s->red) {
    case SC_NONE: case SC_MAX: return mlc_te_max(b, v, axes, n);
    case SC_MUL: return mlc_te_prod(b, v, axes, n);
    case SC_MIN: return mlc_te_min(b, v, axes, n);
    default: return mlc_te_sum(b, v, axes, n);
  }
}

/* x combined with stage 1's result; |upd(idx, pos)| reads the update at
** position |pos| (reduction none). */
static mlc_tir_expr *sc_finish(sc_ctx *s, mlc_te_builder *b, mlc_tir_expr *const *idx, mlc_tir_expr *u) {
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_dtype ot = c->out_types[0].dtype;
  mlc_tir_expr *xv = mlc_lg_arg_load(c, 0, idx);
  mlc_tir_expr *v = mlc_te_load(b, s->s1, x->rank, idx);
  if (s->red == SC_NONE) return mlc_tir_select(M, bin(c, MLC_TIR_GE, v, i64(c, 0)), u, xv);
  mlc_tir_expr *a = mlc_tir_cast(M, s->acc, xv);
  switch (s->red) {
    case SC_MUL: a = mlc_tir_mul(M, a, v); break;
    case SC_MAX: a = mlc_tir_max(M, a, v); break;
    case SC_MIN: a = mlc_tir_min(M, a, v); break;
    default: a = mlc_tir_add(M, a, v); break;
  }
  return mlc_tir_cast(M, ot, a);
}

static mlc_tir_expr *copy_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  sc_ctx *s = user;
  (void)b;
  return mlc_lg_arg_load(s->c, 0, idx);
}

/* Reads attr reduction and sets the accumulation dtype. */
static mlc_status sc_read(mlc_lg_call *c, sc_ctx *s) {
  static const char *const reds[] = {"none", "add", "mul", "max", "min", NULL};
  const mlc_type *x = &c->arg_types[0];
  memset(s, 0, sizeof *s);
  s->c = c;
  MLC_RETURN_IF_ERROR(check_ranks(c));
  s->red = pick(mlc_attrs_str(c->attrs, c->nattrs, "reduction", "none"), reds, -1);
  if (s->red < 0) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "unknown reduction");
  if (!mlc_dtype_is_int(c->arg_types[1].dtype))
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "indices of dtype %s", mlc_dtype_name(c->arg_types[1].dtype));
  if (s->red != SC_NONE && !mlc_dtype_is_float(x->dtype) && !mlc_dtype_is_int(x->dtype))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "reduction of dtype %s", mlc_dtype_name(x->dtype));
  s->acc = x->dtype == MLC_DTYPE_F16 || x->dtype == MLC_DTYPE_BF16 ? MLC_DTYPE_F32 : x->dtype;
  return NULL;
}

/* scatter_elements stage 1: over j along the axis, the updates whose
** target is this element (others: indices' dims may be smaller than x's). */
static mlc_tir_expr *se_search_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  sc_ctx *s = user;
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0], *it = &c->arg_types[1];
  mlc_tir_expr *ii[MAX_RANK], *inside = NULL;
  mlc_tir_expr *j = mlc_te_reduce_axis(b, mlc_lg_dim(c, it, s->axis), "j");
  for (int d = 0; d < x->rank; d++) {
    ii[d] = d == s->axis ? j : idx[d];
    if (d != s->axis && it->dims[d] != x->dims[d])
      inside = and2(c, inside, bin(c, MLC_TIR_LT, idx[d], mlc_lg_dim(c, it, d)));
  }
  mlc_tir_expr *target = wrap_index(c, mlc_lg_arg_load(c, 1, ii), mlc_lg_dim(c, x, s->axis));
  mlc_tir_expr *hit = bin(c, MLC_TIR_EQ, target, idx[s->axis]);
  mlc_tir_expr *v = sc_candidate(s, hit, j, s->red == SC_NONE ? NULL : mlc_lg_arg_load(c, 2, ii));
  mlc_tir_expr *miss = s->red == SC_NONE ? i64(c, -1) : mlc_tir_reduce_identity(M, sc_op(s->red), s->acc);
  if (inside) v = mlc_tir_select(M, inside, v, miss);
  return sc_reduce(s, b, v, &j, 1);
}

static mlc_tir_expr *se_finish_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  sc_ctx *s = user;
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *u = NULL;
  if (s->red == SC_NONE) {
    mlc_tir_expr *ui[MAX_RANK];
    for (int d = 0; d < x->rank; d++) ui[d] = idx[d];
    /* the position where stage 1 found none is never read (select) */
    ui[s->axis] = mlc_tir_max(M, mlc_te_load(b, s->s1, x->rank, idx), i64(c, 0));
    u = mlc_lg_arg_load(c, 2, ui);
  }
  return sc_finish(s, b, idx, u);
}

/* y = x with updates scattered along attr axis by indices */
mlc_status mlc_lg_scatter_elements(mlc_lg_call *c, mlc_te_tensor **out) {
  sc_ctx s;
  MLC_RETURN_IF_ERROR(sc_read(c, &s));
  const mlc_type *x = &c->arg_types[0], *it = &c->arg_types[1];
  s.axis = (int)mlc_lg_int(c, "axis", 0);
  if (s.axis < 0 || s.axis >= x->rank || it->rank != x->rank)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "axis %d or the indices' rank do not fit", s.axis);
  for (int d = 0; d < it->rank; d++)
    if (it->dims[d] == 0) s.empty = 1;
  if (s.empty) return stage(c, 0, "T_scatter_elements", copy_body, &s, out);
  MLC_RETURN_IF_ERROR(mlc_lg_check_indices(c, 1, s.axis, 0));
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_scatter_search", se_search_body, &s, &s.s1));
  return stage(c, 0, "T_scatter_elements", se_finish_body, &s, out);
}

/* scatter_nd stage 1: over every update position p (the dims of indices
** but the last), those whose index tuple is this element's prefix. */
static mlc_tir_expr *snd_search_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  sc_ctx *s = user;
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0], *it = &c->arg_types[1];
  int m = it->rank - 1;
  mlc_tir_expr *p[MAX_RANK], *ii[MAX_RANK], *ui[2 * MAX_RANK], *hit = NULL;
  mlc_tir_expr *flat = i64(c, 0);
  for (int d = 0; d < m; d++) {
    char name[8] = {'p', (char)('0' + d % 10), 0};
    p[d] = mlc_te_reduce_axis(b, mlc_lg_dim(c, it, d), name);
    ii[d] = ui[d] = p[d];
    flat = mlc_tir_add(M, mlc_tir_mul(M, flat, mlc_lg_dim(c, it, d)), p[d]);
  }
  for (int t = 0; t < s->k; t++) {
    ii[m] = i64(c, t);
    mlc_tir_expr *target = wrap_index(c, mlc_lg_arg_load(c, 1, ii), mlc_lg_dim(c, x, t));
    hit = and2(c, hit, bin(c, MLC_TIR_EQ, target, idx[t]));
  }
  for (int d = s->k; d < x->rank; d++) ui[m + d - s->k] = idx[d];
  mlc_tir_expr *u = s->red == SC_NONE ? NULL : mlc_lg_arg_load(c, 2, ui);
  return sc_reduce(s, b, sc_candidate(s, hit, flat, u), p, m);
}

static mlc_tir_expr *snd_finish_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  sc_ctx *s = user;
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0], *it = &c->arg_types[1];
  mlc_tir_expr *u = NULL;
  if (s->red == SC_NONE) {
    int m = it->rank - 1;
    mlc_tir_expr *ui[2 * MAX_RANK];
    mlc_tir_expr *flat = mlc_tir_max(M, mlc_te_load(b, s->s1, x->rank, idx), i64(c, 0));
    for (int d = m - 1; d >= 0; d--) { /* unravel the update position */
      mlc_tir_expr *ext = mlc_lg_dim(c, it, d);
      ui[d] = d == 0 ? flat : bin(c, MLC_TIR_FLOORMOD, flat, ext);
      if (d > 0) flat = bin(c, MLC_TIR_FLOORDIV, flat, ext);
    }
    for (int d = s->k; d < x->rank; d++) ui[m + d - s->k] = idx[d];
    u = mlc_lg_arg_load(c, 2, ui);
  }
  return sc_finish(s, b, idx, u);
}

/* y = x with updates written at the slices indices select */
mlc_status mlc_lg_scatter_nd(mlc_lg_call *c, mlc_te_tensor **out) {
  sc_ctx s;
  MLC_RETURN_IF_ERROR(sc_read(c, &s));
  const mlc_type *x = &c->arg_types[0], *it = &c->arg_types[1];
  int q = it->rank;
  if (q < 1 || it->dims[q - 1] < 1 || it->dims[q - 1] > x->rank)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "the last dim of indices does not fit the input");
  s.k = (int)it->dims[q - 1];
  for (int d = 0; d < q - 1; d++)
    if (it->dims[d] == 0) s.empty = 1;
  if (s.empty) return stage(c, 0, "T_scatter_nd", copy_body, &s, out);
  MLC_RETURN_IF_ERROR(mlc_lg_check_indices(c, 1, 0, 1));
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_scatter_search", snd_search_body, &s, &s.s1));
  return stage(c, 0, "T_scatter_nd", snd_finish_body, &s, out);
}

/* ---- max_pool_indices ------------------------------------------------------------ */

typedef struct mp_ctx {
  mlc_lg_call *c;
  int k; /* spatial rank */
  int64_t kernel[MAX_RANK], stride[MAX_RANK], pad[2 * MAX_RANK], dil[MAX_RANK];
  int storage_order;
  mlc_te_tensor *best, *tap;
} mp_ctx;

static void ints_attr(mlc_lg_call *c, const char *name, int n, int64_t dflt, int64_t *out) {
  const mlc_attr *a = mlc_lg_attr(c, name);
  int ok = a && a->kind == MLC_ATTR_INTS && a->n == n;
  for (int i = 0; i < n; i++) out[i] = ok ? a->ints[i] : dflt;
}

/* Input position of spatial axis |i| for output |o| and tap |t|, and the
** test that it lies inside the input (NULL when it always does). */
static mlc_tir_expr *mp_pos(mp_ctx *w, int i, mlc_tir_expr *o, mlc_tir_expr *t, mlc_tir_expr **inside) {
  mlc_lg_call *c = w->c;
  mlc_tir_expr *p = mlc_tir_sub(M, mlc_tir_mul(M, o, i64(c, w->stride[i])), i64(c, w->pad[i]));
  p = mlc_tir_add(M, p, mlc_tir_mul(M, t, i64(c, w->dil[i])));
  *inside = and2(c, *inside, and2(c, bin(c, MLC_TIR_GE, p, i64(c, 0)),
                                  bin(c, MLC_TIR_LT, p, mlc_lg_dim(c, &c->arg_types[0], 2 + i))));
  return p;
}

/* The window's taps as reduce axes, the input index of each and the inside test. */
static mlc_tir_expr *mp_window(mp_ctx *w, mlc_te_builder *b, mlc_tir_expr *const *idx, mlc_tir_expr **axes,
                               mlc_tir_expr **xi) {
  mlc_lg_call *c = w->c;
  mlc_tir_expr *inside = NULL;
  xi[0] = idx[0];
  xi[1] = idx[1];
  for (int i = 0; i < w->k; i++) {
    char name[8] = {'r', 'k', (char)('0' + i % 10), 0};
    axes[i] = mlc_te_reduce_axis(b, i64(c, w->kernel[i]), name);
    xi[2 + i] = mp_pos(w, i, idx[2 + i], axes[i], &inside);
  }
  return inside;
}

static mlc_tir_expr *mp_best_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mp_ctx *w = user;
  mlc_lg_call *c = w->c;
  mlc_tir_expr *axes[MAX_RANK], *xi[MAX_RANK];
  mlc_tir_expr *inside = mp_window(w, b, idx, axes, xi);
  mlc_dtype dt = c->arg_types[0].dtype;
  mlc_tir_expr *v = mlc_tir_select(M, inside, mlc_lg_arg_load(c, 0, xi),
                                   mlc_tir_reduce_identity(M, MLC_TIR_REDUCE_MAX, dt));
  return mlc_te_max(b, v, axes, w->k);
}

static mlc_tir_expr *mp_tap_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mp_ctx *w = user;
  mlc_lg_call *c = w->c;
  mlc_tir_expr *axes[MAX_RANK], *xi[MAX_RANK];
  mlc_tir_expr *inside = mp_window(w, b, idx, axes, xi);
  mlc_tir_expr *lin = i64(c, 0);
  int64_t ntaps = 1;
  for (int i = 0; i < w->k; i++) {
    lin = mlc_tir_add(M, mlc_tir_mul(M, lin, i64(c, w->kernel[i])), axes[i]);
    ntaps *= w->kernel[i];
  }
  mlc_tir_expr *best = mlc_te_load(b, w->best, c->out_types[0].rank, idx);
  mlc_tir_expr *hit = mlc_tir_select(M, inside, bin(c, MLC_TIR_EQ, mlc_lg_arg_load(c, 0, xi), best),
                                     mlc_tir_int(M, MLC_DTYPE_BOOL, 0));
  /* a tap holding the maximum, else (all NaN) the first tap inside the input */
  mlc_tir_expr *key = mlc_tir_select(M, hit, lin,
                                     mlc_tir_select(M, inside, mlc_tir_add(M, lin, i64(c, ntaps)), i64(c, 2 * ntaps)));
  return mlc_te_min(b, key, axes, w->k);
}

static mlc_tir_expr *mp_index_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mp_ctx *w = user;
  mlc_lg_call *c = w->c;
  const mlc_type *x = &c->arg_types[0];
  int64_t ntaps = 1;
  mlc_tir_expr *spatial = i64(c, 1); /* symbolic extents read from the shape */
  for (int i = 0; i < w->k; i++) ntaps *= w->kernel[i], spatial = mlc_tir_mul(M, spatial, mlc_lg_dim(c, x, 2 + i));
  mlc_tir_expr *t = bin(c, MLC_TIR_FLOORMOD, mlc_te_load(b, w->tap, c->out_types[0].rank, idx), i64(c, ntaps));
  mlc_tir_expr *pos[MAX_RANK], *inside = NULL;
  for (int i = w->k - 1; i >= 0; i--) { /* unravel the tap, row-major over the kernel */
    mlc_tir_expr *ti = i == 0 ? t : bin(c, MLC_TIR_FLOORMOD, t, i64(c, w->kernel[i]));
    if (i > 0) t = bin(c, MLC_TIR_FLOORDIV, t, i64(c, w->kernel[i]));
    pos[i] = mp_pos(w, i, idx[2 + i], ti, &inside);
  }
  mlc_tir_expr *sp = i64(c, 0);
  if (w->storage_order == 0)
    for (int i = 0; i < w->k; i++) sp = mlc_tir_add(M, mlc_tir_mul(M, sp, mlc_lg_dim(c, x, 2 + i)), pos[i]);
  else
    for (int i = w->k - 1; i >= 0; i--) sp = mlc_tir_add(M, mlc_tir_mul(M, sp, mlc_lg_dim(c, x, 2 + i)), pos[i]);
  mlc_tir_expr *nc = mlc_tir_add(M, mlc_tir_mul(M, idx[0], mlc_lg_dim(c, x, 1)), idx[1]);
  return mlc_tir_add(M, mlc_tir_mul(M, nc, spatial), sp);
}

/* int64 flat input index of each max_pool window's first maximum */
mlc_status mlc_lg_max_pool_indices(mlc_lg_call *c, mlc_te_tensor **out) {
  const mlc_type *x = &c->arg_types[0];
  mp_ctx w;
  memset(&w, 0, sizeof w);
  w.c = c;
  w.k = x->rank - 2;
  if (w.k < 1 || x->rank > MAX_RANK)
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "input rank %d (3 to %d)", x->rank, MAX_RANK);
  if (!mlc_dtype_is_float(x->dtype) && !mlc_dtype_is_int(x->dtype))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "dtype %s", mlc_dtype_name(x->dtype));
  ints_attr(c, "kernel", w.k, 1, w.kernel);
  ints_attr(c, "strides", w.k, 1, w.stride);
  ints_attr(c, "pads", 2 * w.k, 0, w.pad);
  ints_attr(c, "dilations", w.k, 1, w.dil);
  w.storage_order = mlc_lg_int(c, "storage_order", 0) != 0;
  for (int i = 0; i < w.k; i++)
    if (w.kernel[i] < 1 || w.stride[i] < 1 || w.dil[i] < 1)
      return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "bad window attributes on spatial axis %d", i);
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_pool_best", mp_best_body, &w, &w.best));
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_pool_tap", mp_tap_body, &w, &w.tap));
  return stage(c, 0, "T_max_pool_indices", mp_index_body, &w, out);
}
