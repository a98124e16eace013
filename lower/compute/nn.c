/*
** nn.c: lowering rules for the neural-network ops (TOPI's nn/): matmul,
** conv and conv_transpose (N-d, grouped), max/avg pooling, softmax and
** log_softmax, layer_norm.
**
** Contractions are one reduction stage.  Windows read the input through a
** bounds test (`select(0 <= pos < d, x[pos], pad)`) instead of a padded
** copy; only the chosen arm of a select is evaluated, so padded positions
** never load.  conv_transpose is written in gather form: output position o
** takes input position i = (o + pad - k*dilation) / stride where that
** division is exact and i is inside the input.
**
** softmax is max, sum of exp(x - max), then the normalized output (stable
** for large inputs); layer_norm is sum, sum of squared deviations from the
** mean (two passes), then the output.  Their row statistics are stages of
** the input's shape with the reduced dims of extent 1.
**
** float16/bfloat16 compute in float32: reductions accumulate in a float32
** stage and a last stage rounds to the output dtype.  Integer contractions
** accumulate in their own dtype (wrapping, as the reference evaluator's
** results truncated to the dtype do).  A matmul over an empty inner dim is
** zeros (a reduction over an empty domain would leave its output unwritten).
*/
#include <string.h>

#include "lower/lower_int.h"

#define M (c->tm)
#define MAX_RANK 16

/* The dtype arithmetic on |dt| runs in. */
static mlc_dtype acc_dtype(mlc_dtype dt) {
  return dt == MLC_DTYPE_F16 || dt == MLC_DTYPE_BF16 ? MLC_DTYPE_F32 : dt;
}

static mlc_tir_expr *i64(mlc_lg_call *c, int64_t v) { return mlc_tir_i64(M, v); }

static mlc_tir_expr *and2(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) {
  if (!a) return b;
  return mlc_tir_binary(M, MLC_TIR_AND, a, b);
}

/* The output |k| of |c| computed by |fn(user)|. */
static mlc_status out_compute(mlc_lg_call *c, int k, const char *name, mlc_te_body_fn fn, void *user,
                              mlc_te_tensor **out) {
  const mlc_type *t = &c->out_types[k];
  mlc_tir_expr **shape = mlc_lg_shape(c, t);
  if (!shape) return mlc_oom();
  return mlc_te_compute(c->b, name, t->rank, shape, NULL, fn, user, out);
}

/* An ints attribute of |n| entries (|dflt| when absent or of another length). */
static void ints_attr(mlc_lg_call *c, const char *name, int n, int64_t dflt, int64_t *out) {
  const mlc_attr *a = mlc_lg_attr(c, name);
  int ok = a && a->kind == MLC_ATTR_INTS && a->n == n;
  for (int i = 0; i < n; i++) out[i] = ok ? a->ints[i] : dflt;
}

/* ---- softmax, log_softmax ----------------------------------------------- */

typedef struct sm_ctx {
  mlc_lg_call *c;
  int axis;
  mlc_dtype acc;
  mlc_te_tensor *mx, *sum; /* the input's shape with axis extent 1 */
} sm_ctx;

/* x at |idx| with the axis index replaced by |k| (NULL: keep), in acc. */
static mlc_tir_expr *sm_x(sm_ctx *s, mlc_tir_expr *const *idx, mlc_tir_expr *k) {
  mlc_lg_call *c = s->c;
  mlc_tir_expr *xi[MAX_RANK];
  for (int d = 0; d < c->arg_types[0].rank; d++) xi[d] = d == s->axis && k ? k : idx[d];
  return mlc_tir_cast(M, s->acc, mlc_lg_arg_load(c, 0, xi));
}

/* |t| (axis extent 1) at |idx|. */
static mlc_tir_expr *sm_row(sm_ctx *s, mlc_te_builder *b, mlc_te_tensor *t, mlc_tir_expr *const *idx) {
  mlc_lg_call *c = s->c;
  mlc_tir_expr *ri[MAX_RANK];
  for (int d = 0; d < t->rank; d++) ri[d] = d == s->axis ? i64(c, 0) : idx[d];
  return mlc_te_load(b, t, t->rank, ri);
}

static mlc_tir_expr *sm_max_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  sm_ctx *s = user;
  mlc_tir_expr *k = mlc_te_reduce_axis(b, mlc_lg_dim(s->c, &s->c->arg_types[0], s->axis), "k");
  return mlc_te_max(b, sm_x(s, idx, k), &k, 1);
}

static mlc_tir_expr *sm_sum_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  sm_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *k = mlc_te_reduce_axis(b, mlc_lg_dim(c, &c->arg_types[0], s->axis), "k");
  mlc_tir_expr *e = mlc_tir_call1(M, MLC_TIR_INTRIN_EXP, mlc_tir_sub(M, sm_x(s, idx, k), sm_row(s, b, s->mx, idx)));
  return mlc_te_sum(b, e, &k, 1);
}

static mlc_tir_expr *sm_out_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  sm_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *v = mlc_tir_sub(M, sm_x(s, idx, NULL), sm_row(s, b, s->mx, idx));
  mlc_tir_expr *sum = sm_row(s, b, s->sum, idx);
  mlc_tir_expr *y;
  if (c->op == MLC_OP_SOFTMAX)
    y = mlc_tir_binary(M, MLC_TIR_DIV, mlc_tir_call1(M, MLC_TIR_INTRIN_EXP, v), sum);
  else
    y = mlc_tir_sub(M, v, mlc_tir_call1(M, MLC_TIR_INTRIN_LOG, sum));
  return mlc_tir_cast(M, c->out_types[0].dtype, y);
}

/* y = exp(x - max) / sum(exp(x - max)) along attr axis (log_softmax:
** x - max - log(sum)); stages max, sum, output */
mlc_status mlc_lg_softmax(mlc_lg_call *c, mlc_te_tensor **out) {
  const mlc_type *x = &c->arg_types[0];
  sm_ctx s = {c, (int)mlc_lg_int(c, "axis", x->rank - 1), acc_dtype(x->dtype), NULL, NULL};
  if (x->rank < 1 || x->rank > MAX_RANK || s.axis < 0 || s.axis >= x->rank)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "axis %d of rank %d", s.axis, x->rank);
  if (!mlc_dtype_is_float(x->dtype))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "dtype %s", mlc_dtype_name(x->dtype));
  mlc_tir_expr **rshape = mlc_lg_shape(c, x);
  if (!rshape) return mlc_oom();
  rshape[s.axis] = i64(c, 1);
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_softmax_max", x->rank, rshape, NULL, sm_max_body, &s, &s.mx));
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_softmax_sum", x->rank, rshape, NULL, sm_sum_body, &s, &s.sum));
  return out_compute(c, 0, c->op == MLC_OP_SOFTMAX ? "T_softmax" : "T_log_softmax", sm_out_body, &s, out);
}

/* ---- layer_norm ------------------------------------------------------------ */

typedef struct ln_ctx {
  mlc_lg_call *c;
  int axis;
  mlc_dtype acc;
  mlc_tir_expr *n;         /* elements per normalized group (acc dtype) */
  mlc_te_tensor *s1, *s2;  /* sum, sum of squared deviations; normalized dims 1 */
} ln_ctx;

/* x at |idx| ([0, axis) of it) with the normalized dims from |k| (or |idx|). */
static mlc_tir_expr *ln_x(ln_ctx *l, mlc_tir_expr *const *idx, mlc_tir_expr *const *k) {
  mlc_lg_call *c = l->c;
  mlc_tir_expr *xi[MAX_RANK];
  for (int d = 0; d < c->arg_types[0].rank; d++) xi[d] = d >= l->axis && k ? k[d - l->axis] : idx[d];
  return mlc_tir_cast(M, l->acc, mlc_lg_arg_load(c, 0, xi));
}

static mlc_tir_expr *ln_row(ln_ctx *l, mlc_te_builder *b, mlc_te_tensor *t, mlc_tir_expr *const *idx) {
  mlc_lg_call *c = l->c;
  mlc_tir_expr *ri[MAX_RANK];
  for (int d = 0; d < t->rank; d++) ri[d] = d >= l->axis ? i64(c, 0) : idx[d];
  return mlc_te_load(b, t, t->rank, ri);
}

/* The reduce axes over the normalized dims into |k|; their count. */
static int ln_axes(ln_ctx *l, mlc_te_builder *b, mlc_tir_expr **k) {
  const mlc_type *x = &l->c->arg_types[0];
  for (int d = l->axis; d < x->rank; d++) {
    char name[8] = {'k', (char)('0' + d % 10), 0};
    k[d - l->axis] = mlc_te_reduce_axis(b, mlc_lg_dim(l->c, x, d), name);
  }
  return x->rank - l->axis;
}

static mlc_tir_expr *ln_mean(ln_ctx *l, mlc_te_builder *b, mlc_tir_expr *const *idx) {
  return mlc_tir_binary(l->c->tm, MLC_TIR_DIV, ln_row(l, b, l->s1, idx), l->n);
}

static mlc_tir_expr *ln_sum_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  ln_ctx *l = user;
  mlc_tir_expr *k[MAX_RANK];
  int n = ln_axes(l, b, k);
  return mlc_te_sum(b, ln_x(l, idx, k), k, n);
}

static mlc_tir_expr *ln_var_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  ln_ctx *l = user;
  mlc_lg_call *c = l->c;
  mlc_tir_expr *k[MAX_RANK];
  int n = ln_axes(l, b, k);
  mlc_tir_expr *dev = mlc_tir_sub(M, ln_x(l, idx, k), ln_mean(l, b, idx));
  return mlc_te_sum(b, mlc_tir_mul(M, dev, dev), k, n);
}

static mlc_tir_expr *ln_out_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  ln_ctx *l = user;
  mlc_lg_call *c = l->c;
  int r = c->arg_types[0].rank;
  mlc_tir_expr *var = mlc_tir_binary(M, MLC_TIR_DIV, ln_row(l, b, l->s2, idx), l->n);
  mlc_tir_expr *eps = mlc_tir_float(M, l->acc, mlc_lg_float(c, "epsilon", 1e-5));
  mlc_tir_expr *inv = mlc_tir_call1(M, MLC_TIR_INTRIN_RSQRT, mlc_tir_add(M, var, eps));
  mlc_tir_expr *y = mlc_tir_mul(M, mlc_tir_sub(M, ln_x(l, idx, NULL), ln_mean(l, b, idx)), inv);
  y = mlc_tir_mul(M, y, mlc_tir_cast(M, l->acc, mlc_lg_arg_bcast(c, 1, r, idx)));
  y = mlc_tir_add(M, y, mlc_tir_cast(M, l->acc, mlc_lg_arg_bcast(c, 2, r, idx)));
  return mlc_tir_cast(M, c->out_types[0].dtype, y);
}

/* y = (x - mean) / sqrt(var + epsilon) * scale + bias over dims axis.. */
mlc_status mlc_lg_layer_norm(mlc_lg_call *c, mlc_te_tensor **out) {
  const mlc_type *x = &c->arg_types[0];
  ln_ctx l = {c, (int)mlc_lg_int(c, "axis", x->rank - 1), acc_dtype(x->dtype), NULL, NULL, NULL};
  if (x->rank < 1 || x->rank > MAX_RANK || l.axis < 0 || l.axis >= x->rank)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "axis %d of rank %d", l.axis, x->rank);
  if (!mlc_dtype_is_float(x->dtype))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "dtype %s", mlc_dtype_name(x->dtype));
  mlc_tir_expr **rshape = mlc_lg_shape(c, x);
  if (!rshape) return mlc_oom();
  mlc_tir_expr *n = i64(c, 1);
  for (int d = l.axis; d < x->rank; d++) {
    n = mlc_tir_mul(M, n, rshape[d]);
    rshape[d] = i64(c, 1);
  }
  l.n = mlc_tir_cast(M, l.acc, n);
  if (!l.n) return mlc_oom();
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_ln_sum", x->rank, rshape, NULL, ln_sum_body, &l, &l.s1));
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_ln_var", x->rank, rshape, NULL, ln_var_body, &l, &l.s2));
  return out_compute(c, 0, "T_layer_norm", ln_out_body, &l, out);
}

/* ---- matmul ------------------------------------------------------------------ */

typedef struct mm_ctx {
  mlc_lg_call *c;
  mlc_dtype acc;
  mlc_te_tensor *stage;
} mm_ctx;

/* Index of operand |i| (a: [..., m, k], b: [..., k, n]) for output index
** |idx| and reduce index |k|; numpy batch broadcasting, 1-D promotion. */
static void mm_index(mlc_lg_call *c, int i, mlc_tir_expr *const *idx, mlc_tir_expr *k, mlc_tir_expr **out) {
  const mlc_type *t = &c->arg_types[i], *ot = &c->out_types[0];
  const mlc_type *a = &c->arg_types[0], *b = &c->arg_types[1];
  int nbo = ot->rank - (a->rank > 1) - (b->rank > 1); /* output batch rank */
  if (t->rank == 1) {
    out[0] = k;
    return;
  }
  int bt = t->rank - 2;
  for (int d = 0; d < bt; d++) out[d] = t->dims[d] == 1 ? i64(c, 0) : idx[nbo - bt + d];
  if (i == 0) {
    out[bt] = idx[nbo];
    out[bt + 1] = k;
  } else {
    out[bt] = k;
    out[bt + 1] = idx[ot->rank - 1];
  }
}

static mlc_tir_expr *mm_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mm_ctx *m = user;
  mlc_lg_call *c = m->c;
  const mlc_type *a = &c->arg_types[0];
  mlc_tir_expr *ai[MAX_RANK], *bi[MAX_RANK];
  if (a->dims[a->rank - 1] == 0) return mlc_lg_imm(c, m->acc, 0); /* empty sums */
  mlc_tir_expr *k = mlc_te_reduce_axis(b, mlc_lg_dim(c, a, a->rank - 1), "k");
  mm_index(c, 0, idx, k, ai);
  mm_index(c, 1, idx, k, bi);
  mlc_tir_expr *p = mlc_tir_mul(M, mlc_tir_cast(M, m->acc, mlc_lg_arg_load(c, 0, ai)),
                                mlc_tir_cast(M, m->acc, mlc_lg_arg_load(c, 1, bi)));
  return mlc_te_sum(b, p, &k, 1);
}

/* The accumulator stage converted to the output dtype. */
static mlc_tir_expr *cast_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mm_ctx *m = user;
  mlc_lg_call *c = m->c;
  return mlc_tir_cast(M, c->out_types[0].dtype, mlc_te_load(b, m->stage, m->stage->rank, idx));
}

/* y = a @ b (numpy matmul: 1-D promotion, batch broadcast); one reduction */
mlc_status mlc_lg_matmul(mlc_lg_call *c, mlc_te_tensor **out) {
  const mlc_type *a = &c->arg_types[0], *bt = &c->arg_types[1];
  mm_ctx m = {c, acc_dtype(a->dtype), NULL};
  if (a->rank < 1 || bt->rank < 1 || a->rank > MAX_RANK || bt->rank > MAX_RANK)
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "operand ranks %d and %d", a->rank, bt->rank);
  if (!mlc_dtype_is_float(a->dtype) && !mlc_dtype_is_int(a->dtype))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "dtype %s", mlc_dtype_name(a->dtype));
  if (m.acc == c->out_types[0].dtype) return out_compute(c, 0, "T_matmul", mm_body, &m, out);
  MLC_RETURN_IF_ERROR(out_compute(c, 0, "T_matmul_acc", mm_body, &m, &m.stage));
  return out_compute(c, 0, "T_matmul", cast_body, &m, out);
}

/* ---- convolution ------------------------------------------------------------- */

typedef struct win_ctx {
  mlc_lg_call *c;
  int k; /* spatial rank */
  int64_t kernel[MAX_RANK], stride[MAX_RANK], pad[2 * MAX_RANK], dil[MAX_RANK];
  int64_t groups;
  int ceil_mode, count_include_pad;
  mlc_dtype acc;
  mlc_te_tensor *stage;
} win_ctx;

/* Reads the window attributes for the spatial dims of argument 0. */
static mlc_status win_read(mlc_lg_call *c, win_ctx *w) {
  const mlc_type *x = &c->arg_types[0];
  memset(w, 0, sizeof *w);
  w->c = c;
  w->k = x->rank - 2;
  if (w->k < 1 || w->k > MAX_RANK - 2)
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "input rank %d (3 to %d)", x->rank, MAX_RANK);
  if (c->op == MLC_OP_CONV_TRANSPOSE && MLC_DIM_IS_SYM(x->dims[1]))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "symbolic channel count");
  ints_attr(c, "strides", w->k, 1, w->stride);
  ints_attr(c, "pads", 2 * w->k, 0, w->pad);
  ints_attr(c, "dilations", w->k, 1, w->dil);
  w->groups = mlc_lg_int(c, "groups", 1);
  w->ceil_mode = (int)mlc_lg_int(c, "ceil_mode", 0);
  w->count_include_pad = (int)mlc_lg_int(c, "count_include_pad", 0);
  w->acc = acc_dtype(x->dtype);
  for (int i = 0; i < w->k; i++)
    if (w->stride[i] < 1 || w->dil[i] < 1 || w->pad[i] < 0 || w->pad[w->k + i] < 0)
      return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "bad window attributes on spatial axis %d", i);
  if (w->groups < 1) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "groups %lld", (long long)w->groups);
  if (!mlc_dtype_is_float(x->dtype) && !mlc_dtype_is_int(x->dtype))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "dtype %s", mlc_dtype_name(x->dtype));
  return NULL;
}

/* Input position of spatial axis |i| for output position |o| and kernel
** offset |k|: o * stride - pad_begin + k * dilation. */
static mlc_tir_expr *win_pos(win_ctx *w, int i, mlc_tir_expr *o, mlc_tir_expr *k) {
  mlc_lg_call *c = w->c;
  mlc_tir_expr *p = mlc_tir_sub(M, mlc_tir_mul(M, o, i64(c, w->stride[i])), i64(c, w->pad[i]));
  return mlc_tir_add(M, p, mlc_tir_mul(M, k, i64(c, w->dil[i])));
}

/* 0 <= pos < d where it can fail (|hi|: the upper test is needed). */
static mlc_tir_expr *win_inside(win_ctx *w, int i, mlc_tir_expr *pos, mlc_tir_expr *cond, int hi) {
  mlc_lg_call *c = w->c;
  if (w->pad[i] > 0) cond = and2(c, cond, mlc_tir_binary(M, MLC_TIR_GE, pos, i64(c, 0)));
  if (hi) cond = and2(c, cond, mlc_tir_binary(M, MLC_TIR_LT, pos, mlc_lg_dim(c, &c->arg_types[0], 2 + i)));
  return cond;
}

static mlc_tir_expr *conv_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  win_ctx *w = user;
  mlc_lg_call *c = w->c;
  const mlc_type *wt = &c->arg_types[1];
  int64_t cg = wt->dims[1], mg = wt->dims[0] / w->groups;
  mlc_tir_expr *rc = mlc_te_reduce_axis(b, i64(c, cg), "rc");
  mlc_tir_expr *axes[MAX_RANK], *xi[MAX_RANK], *wi[MAX_RANK], *cond = NULL;
  axes[0] = rc;
  /* channel of x: group of the output channel * cg + rc */
  mlc_tir_expr *ch = rc;
  if (w->groups > 1)
    ch = mlc_tir_add(M, mlc_tir_mul(M, mlc_tir_binary(M, MLC_TIR_FLOORDIV, idx[1], i64(c, mg)), i64(c, cg)), rc);
  xi[0] = idx[0];
  xi[1] = ch;
  wi[0] = idx[1];
  wi[1] = rc;
  for (int i = 0; i < w->k; i++) {
    char name[8] = {'r', 'k', (char)('0' + i % 10), 0};
    mlc_tir_expr *k = mlc_te_reduce_axis(b, i64(c, wt->dims[2 + i]), name);
    axes[1 + i] = k;
    xi[2 + i] = win_pos(w, i, idx[2 + i], k);
    wi[2 + i] = k;
    cond = win_inside(w, i, xi[2 + i], cond, w->pad[w->k + i] > 0);
  }
  mlc_tir_expr *p = mlc_tir_mul(M, mlc_tir_cast(M, w->acc, mlc_lg_arg_load(c, 0, xi)),
                                mlc_tir_cast(M, w->acc, mlc_lg_arg_load(c, 1, wi)));
  if (cond) p = mlc_tir_select(M, cond, p, mlc_lg_imm(c, w->acc, 0));
  return mlc_te_sum(b, p, axes, 1 + w->k);
}

/* The accumulator plus the bias (argument 2, when present), converted. */
static mlc_tir_expr *bias_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  win_ctx *w = user;
  mlc_lg_call *c = w->c;
  mlc_tir_expr *v = mlc_te_load(b, w->stage, w->stage->rank, idx);
  if (c->nargs > 2) v = mlc_tir_add(M, v, mlc_tir_cast(M, w->acc, mlc_lg_arg_load(c, 2, &idx[1])));
  return mlc_tir_cast(M, c->out_types[0].dtype, v);
}

/* Output of a contraction stage |body|, plus bias, in the output dtype. */
static mlc_status conv_finish(mlc_lg_call *c, win_ctx *w, const char *name, mlc_te_body_fn body,
                              mlc_te_tensor **out) {
  if (c->nargs < 3 && w->acc == c->out_types[0].dtype) return out_compute(c, 0, name, body, w, out);
  MLC_RETURN_IF_ERROR(out_compute(c, 0, "T_conv_acc", body, w, &w->stage));
  return out_compute(c, 0, name, bias_body, w, out);
}

/* y[n, m, o...] = sum over rc, k... of x[n, g*cg + rc, o*s - p + k*d] * w[m, rc, k...] (+ bias[m]) */
mlc_status mlc_lg_conv(mlc_lg_call *c, mlc_te_tensor **out) {
  win_ctx w;
  MLC_RETURN_IF_ERROR(win_read(c, &w));
  const mlc_type *wt = &c->arg_types[1];
  if (wt->rank != c->arg_types[0].rank || wt->dims[0] % w.groups)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "weight does not match the input and groups");
  return conv_finish(c, &w, "T_conv", conv_body, out);
}

static mlc_tir_expr *convt_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  win_ctx *w = user;
  mlc_lg_call *c = w->c;
  const mlc_type *x = &c->arg_types[0], *wt = &c->arg_types[1];
  int64_t cg = x->dims[1] / w->groups, mg = wt->dims[1];
  mlc_tir_expr *rc = mlc_te_reduce_axis(b, i64(c, cg), "rc");
  mlc_tir_expr *axes[MAX_RANK], *xi[MAX_RANK], *wi[MAX_RANK], *cond = NULL;
  axes[0] = rc;
  mlc_tir_expr *ch = rc, *mo = idx[1];
  if (w->groups > 1) {
    ch = mlc_tir_add(M, mlc_tir_mul(M, mlc_tir_binary(M, MLC_TIR_FLOORDIV, idx[1], i64(c, mg)), i64(c, cg)), rc);
    mo = mlc_tir_binary(M, MLC_TIR_FLOORMOD, idx[1], i64(c, mg));
  }
  xi[0] = idx[0];
  xi[1] = ch;
  wi[0] = ch;
  wi[1] = mo;
  for (int i = 0; i < w->k; i++) {
    char name[8] = {'r', 'k', (char)('0' + i % 10), 0};
    mlc_tir_expr *k = mlc_te_reduce_axis(b, i64(c, wt->dims[2 + i]), name);
    axes[1 + i] = k;
    wi[2 + i] = k;
    /* t = o + pad - k*dil must be i*stride with 0 <= i < d */
    mlc_tir_expr *t = mlc_tir_sub(M, mlc_tir_add(M, idx[2 + i], i64(c, w->pad[i])),
                                  mlc_tir_mul(M, k, i64(c, w->dil[i])));
    mlc_tir_expr *s = i64(c, w->stride[i]);
    cond = and2(c, cond, mlc_tir_binary(M, MLC_TIR_GE, t, i64(c, 0)));
    if (w->stride[i] > 1)
      cond = and2(c, cond, mlc_tir_binary(M, MLC_TIR_EQ, mlc_tir_binary(M, MLC_TIR_FLOORMOD, t, s), i64(c, 0)));
    xi[2 + i] = mlc_tir_binary(M, MLC_TIR_FLOORDIV, t, s);
    cond = and2(c, cond, mlc_tir_binary(M, MLC_TIR_LT, xi[2 + i], mlc_lg_dim(c, x, 2 + i)));
  }
  mlc_tir_expr *p = mlc_tir_mul(M, mlc_tir_cast(M, w->acc, mlc_lg_arg_load(c, 0, xi)),
                                mlc_tir_cast(M, w->acc, mlc_lg_arg_load(c, 1, wi)));
  p = mlc_tir_select(M, cond, p, mlc_lg_imm(c, w->acc, 0));
  return mlc_te_sum(b, p, axes, 1 + w->k);
}

/* y[n, m, o...] = sum over rc, k... of x[n, g*cg + rc, i] * w[g*cg + rc, m % mg, k...]
** where o + p - k*d = i*s (+ bias[m]) */
mlc_status mlc_lg_conv_transpose(mlc_lg_call *c, mlc_te_tensor **out) {
  win_ctx w;
  MLC_RETURN_IF_ERROR(win_read(c, &w));
  const mlc_type *wt = &c->arg_types[1];
  if (wt->rank != c->arg_types[0].rank || c->arg_types[0].dims[1] % w.groups)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "weight does not match the input and groups");
  return conv_finish(c, &w, "T_conv_transpose", convt_body, out);
}

/* ---- pooling ------------------------------------------------------------------- */

static mlc_tir_expr *pool_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  win_ctx *w = user;
  mlc_lg_call *c = w->c;
  int is_max = c->op == MLC_OP_MAX_POOL;
  mlc_tir_expr *axes[MAX_RANK], *xi[MAX_RANK], *cond = NULL;
  xi[0] = idx[0];
  xi[1] = idx[1];
  for (int i = 0; i < w->k; i++) {
    char name[8] = {'r', 'k', (char)('0' + i % 10), 0};
    axes[i] = mlc_te_reduce_axis(b, i64(c, w->kernel[i]), name);
    xi[2 + i] = win_pos(w, i, idx[2 + i], axes[i]);
    cond = win_inside(w, i, xi[2 + i], cond, w->pad[w->k + i] > 0 || w->ceil_mode);
  }
  mlc_tir_expr *v = mlc_tir_cast(M, w->acc, mlc_lg_arg_load(c, 0, xi));
  if (cond)
    v = mlc_tir_select(M, cond, v, is_max ? mlc_tir_reduce_identity(M, MLC_TIR_REDUCE_MAX, w->acc)
                                          : mlc_lg_imm(c, w->acc, 0));
  return is_max ? mlc_te_max(b, v, axes, w->k) : mlc_te_sum(b, v, axes, w->k);
}

/* avg: the window sum divided by the number of counted positions: those
** inside the input, or (count_include_pad) inside the padded input. */
static mlc_tir_expr *avg_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  win_ctx *w = user;
  mlc_lg_call *c = w->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *count = i64(c, 1);
  for (int i = 0; i < w->k; i++) {
    /* positions start + j*dil, j in [0, kernel), inside [lo, hi) */
    mlc_tir_expr *start = win_pos(w, i, idx[2 + i], i64(c, 0));
    int64_t lo = w->count_include_pad ? -w->pad[i] : 0;
    int64_t hi_off = (w->count_include_pad ? w->pad[w->k + i] : 0) - 1;
    mlc_tir_expr *hi1 = MLC_DIM_IS_SYM(x->dims[2 + i])
                            ? mlc_tir_add(M, mlc_lg_dim(c, x, 2 + i), i64(c, hi_off))
                            : i64(c, x->dims[2 + i] + hi_off); /* hi - 1 */
    mlc_tir_expr *dil = i64(c, w->dil[i]);
    mlc_tir_expr *j0 = mlc_tir_binary(M, MLC_TIR_FLOORDIV,
                                      mlc_tir_sub(M, i64(c, lo + w->dil[i] - 1), start), dil);
    mlc_tir_expr *j1 = mlc_tir_binary(M, MLC_TIR_FLOORDIV, mlc_tir_sub(M, hi1, start), dil);
    j0 = mlc_tir_max(M, j0, i64(c, 0));
    j1 = mlc_tir_min(M, j1, i64(c, w->kernel[i] - 1));
    mlc_tir_expr *n = mlc_tir_add(M, mlc_tir_sub(M, j1, j0), i64(c, 1));
    count = mlc_tir_mul(M, count, mlc_tir_max(M, n, i64(c, 0)));
  }
  mlc_tir_expr *s = mlc_te_load(b, w->stage, w->stage->rank, idx);
  mlc_tir_expr *y = mlc_tir_binary(M, MLC_TIR_DIV, s, mlc_tir_cast(M, w->acc, count));
  return mlc_tir_cast(M, c->out_types[0].dtype, y);
}

/* max_pool: max over the window's positions inside the input;
** avg_pool: their sum divided by the count (see avg_body) */
mlc_status mlc_lg_pool(mlc_lg_call *c, mlc_te_tensor **out) {
  win_ctx w;
  MLC_RETURN_IF_ERROR(win_read(c, &w));
  ints_attr(c, "kernel", w.k, 1, w.kernel);
  for (int i = 0; i < w.k; i++)
    if (w.kernel[i] < 1) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "kernel[%d] < 1", i);
  if (c->op == MLC_OP_MAX_POOL) {
    w.acc = c->arg_types[0].dtype; /* max is exact in any dtype */
    return out_compute(c, 0, "T_max_pool", pool_body, &w, out);
  }
  if (!mlc_dtype_is_float(c->arg_types[0].dtype))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "dtype %s", mlc_dtype_name(c->arg_types[0].dtype));
  MLC_RETURN_IF_ERROR(out_compute(c, 0, "T_avg_pool_sum", pool_body, &w, &w.stage));
  return out_compute(c, 0, "T_avg_pool", avg_body, &w, out);
}
