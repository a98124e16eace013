/*
** misc.c: lowering rules for the "other math" ops: trilu, cumsum, topk,
** einsum and reverse_sequence.
**
**   trilu             one stage: x where the diagonal test on the last two
**                     indices holds, else 0; a run-time k is read from its
**                     one-element argument.
**   cumsum            a reduction along the axis over a select of the
**                     elements before (after, reversed) the output index:
**                     O(n^2) per line, simple and exact in order.  A run-time
**                     axis (the one-element argument) picks the axis inside
**                     the kernel: the reduce axis runs over the largest
**                     extent and every index is a select on the axis value,
**                     after a check stage (an axis outside [-rank, rank) is
**                     a run error).
**   topk              stage 1 the rank of every element along the axis (how
**                     many elements come before it: larger, or equal with a
**                     lower index; NaN sorts above every number), stage 2 the
**                     indices (the element whose rank is the output
**                     position), stage 3 the values read at those indices.
**                     O(n^2) per line.
**   einsum            one stage: the product of the operands' elements at the
**                     labels' indices, summed over the labels missing from
**                     the output.
**   reverse_sequence  one stage: a load at the reversed time index, after a
**                     check stage (a length outside [0, time extent] is a
**                     run error).
**
** float16/bfloat16 sums (cumsum, einsum) accumulate in float32 and a final
** stage converts.  A reduction over an axis of static extent 0 gives 0.
*/
#include <string.h>

#include "lower/lower_int.h"

#define M (c->tm)
#define MAX_RANK 16
#define NLABELS 52

static mlc_tir_expr *i64(mlc_lg_call *c, int64_t v) { return mlc_tir_i64(M, v); }

static mlc_tir_expr *bin(mlc_lg_call *c, mlc_tir_binop op, mlc_tir_expr *a, mlc_tir_expr *b) {
  return mlc_tir_binary(M, op, a, b);
}

/* The dtype a sum of |dt| runs in. */
static mlc_dtype acc_dtype(mlc_dtype dt) {
  return dt == MLC_DTYPE_F16 || dt == MLC_DTYPE_BF16 ? MLC_DTYPE_F32 : dt;
}

static mlc_status check_rank(mlc_lg_call *c) {
  for (int i = 0; i < c->nargs; i++)
    if (c->arg_types[i].rank > MAX_RANK)
      return mlc_lg_error(c, MLC_UNIMPLEMENTED, "argument %d has rank %d (at most %d)", i,
                          c->arg_types[i].rank, MAX_RANK);
  for (int i = 0; i < c->nouts; i++)
    if (c->out_types[i].rank > MAX_RANK)
      return mlc_lg_error(c, MLC_UNIMPLEMENTED, "output rank %d (at most %d)", c->out_types[i].rank, MAX_RANK);
  return NULL;
}

/* The one element of integer argument |i| as int64. */
static mlc_tir_expr *scalar_arg(mlc_lg_call *c, int i) {
  mlc_tir_expr *zero[1] = {i64(c, 0)};
  return mlc_tir_cast(M, MLC_DTYPE_I64, mlc_lg_arg_load(c, i, zero));
}

/* A finishing stage: |src| converted to output |k|'s dtype. */
typedef struct conv_ctx {
  mlc_lg_call *c;
  mlc_te_tensor *src;
  mlc_dtype dt;
} conv_ctx;

static mlc_tir_expr *convert_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  conv_ctx *v = user;
  return mlc_tir_cast(v->c->tm, v->dt, mlc_te_load(b, v->src, v->src->rank, idx));
}

static mlc_status finish(mlc_lg_call *c, int k, mlc_te_tensor *src, mlc_te_tensor **out) {
  if (src->dtype == c->out_types[k].dtype) {
    *out = src;
    return NULL;
  }
  conv_ctx v = {c, src, c->out_types[k].dtype};
  mlc_tir_expr **shape = mlc_lg_shape(c, &c->out_types[k]);
  if (!shape) return mlc_oom();
  return mlc_te_compute(c->b, "T_cast", c->out_types[k].rank, shape, NULL, convert_body, &v, out);
}

/* ---- trilu ---------------------------------------------------------------- */

static mlc_tir_expr *trilu_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  const mlc_type *x = &c->arg_types[0];
  int r = x->rank, upper = mlc_lg_int(c, "upper", 1) != 0;
  mlc_tir_expr *k = c->nargs > 1 ? scalar_arg(c, 1) : i64(c, mlc_lg_int(c, "k", 0));
  mlc_tir_expr *diag = mlc_tir_sub(M, idx[r - 1], idx[r - 2]); /* j - i */
  mlc_tir_expr *keep = bin(c, upper ? MLC_TIR_GE : MLC_TIR_LE, diag, k);
  return mlc_tir_select(M, keep, mlc_lg_arg_load(c, 0, idx), mlc_lg_imm(c, x->dtype, 0));
}

/* y = x with the elements outside the triangle at diagonal k zeroed */
mlc_status mlc_lg_trilu(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  if (c->arg_types[0].rank < 2) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "input rank below 2");
  return mlc_lg_compute(c, 0, "T_trilu", trilu_body, out);
}

/* ---- cumsum --------------------------------------------------------------- */

typedef struct cum_ctx {
  mlc_lg_call *c;
  int axis; /* -1: run-time axis (argument 1) */
  int exclusive, reverse;
  mlc_dtype acc;
} cum_ctx;

/* Whether element t (along the axis) adds into output position i. */
static mlc_tir_expr *cum_takes(cum_ctx *s, mlc_tir_expr *t, mlc_tir_expr *i) {
  mlc_lg_call *c = s->c;
  mlc_tir_binop op = s->reverse ? (s->exclusive ? MLC_TIR_GT : MLC_TIR_GE)
                                : (s->exclusive ? MLC_TIR_LT : MLC_TIR_LE);
  return bin(c, op, t, i);
}

static mlc_tir_expr *cum_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  cum_ctx *s = user;
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0];
  int r = x->rank;
  mlc_tir_expr *xi[MAX_RANK], *zero = mlc_lg_imm(c, s->acc, 0);
  if (s->axis >= 0) {
    if (x->dims[s->axis] == 0) return zero;
    mlc_tir_expr *t = mlc_te_reduce_axis(b, mlc_lg_dim(c, x, s->axis), "t");
    for (int d = 0; d < r; d++) xi[d] = d == s->axis ? t : idx[d];
    mlc_tir_expr *v = mlc_tir_cast(M, s->acc, mlc_lg_arg_load(c, 0, xi));
    return mlc_te_sum(b, mlc_tir_select(M, cum_takes(s, t, idx[s->axis]), v, zero), &t, 1);
  }
  /* run-time axis: a = axis (negative wraps); i = idx[a], n = dims[a] */
  mlc_tir_expr *a = scalar_arg(c, 1);
  a = mlc_tir_select(M, bin(c, MLC_TIR_LT, a, i64(c, 0)), mlc_tir_add(M, a, i64(c, r)), a);
  mlc_tir_expr *maxn = mlc_lg_dim(c, x, 0);
  for (int d = 1; d < r; d++) maxn = mlc_tir_max(M, maxn, mlc_lg_dim(c, x, d));
  mlc_tir_expr *t = mlc_te_reduce_axis(b, maxn, "t");
  mlc_tir_expr *i = i64(c, -1), *n = i64(c, 0);
  for (int d = 0; d < r; d++) {
    mlc_tir_expr *is = bin(c, MLC_TIR_EQ, a, i64(c, d));
    xi[d] = mlc_tir_select(M, is, t, idx[d]);
    i = mlc_tir_select(M, is, idx[d], i);
    n = mlc_tir_select(M, is, mlc_lg_dim(c, x, d), n);
  }
  mlc_tir_expr *take = bin(c, MLC_TIR_AND, bin(c, MLC_TIR_LT, t, n), cum_takes(s, t, i));
  mlc_tir_expr *v = mlc_tir_cast(M, s->acc, mlc_lg_arg_load(c, 0, xi));
  return mlc_te_sum(b, mlc_tir_select(M, take, v, zero), &t, 1);
}

/* y = cumulative sum of x along the axis (attrs exclusive, reverse) */
mlc_status mlc_lg_cumsum(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  const mlc_type *x = &c->arg_types[0];
  cum_ctx s = {c, -1, mlc_lg_int(c, "exclusive", 0) != 0, mlc_lg_int(c, "reverse", 0) != 0,
               acc_dtype(x->dtype)};
  if (!mlc_dtype_is_float(x->dtype) && !mlc_dtype_is_int(x->dtype))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "dtype %s", mlc_dtype_name(x->dtype));
  if (x->rank < 1) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "input of rank 0");
  if (c->nargs < 2) {
    int64_t a = mlc_lg_int(c, "axis", 0);
    if (a < 0 || a >= x->rank) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "axis %lld out of range", (long long)a);
    s.axis = (int)a;
  }
  if (s.axis < 0)
    MLC_RETURN_IF_ERROR(mlc_lg_check_values(c, 1, i64(c, -x->rank), i64(c, x->rank), "axis", NULL));
  const mlc_type *ot = &c->out_types[0];
  mlc_tir_expr **shape = mlc_lg_shape(c, ot);
  if (!shape) return mlc_oom();
  mlc_te_tensor *sum;
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, s.acc == ot->dtype ? "T_cumsum" : "T_cumsum_acc", ot->rank,
                                     shape, NULL, cum_body, &s, &sum));
  return finish(c, 0, sum, out);
}

/* ---- topk ----------------------------------------------------------------- */

typedef struct topk_ctx {
  mlc_lg_call *c;
  int axis, largest;
  mlc_te_tensor *rank, *indices;
} topk_ctx;

/* a sorts strictly above b (NaN above every number, as numpy sorts). */
static mlc_tir_expr *key_gt(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) {
  mlc_tir_expr *gt = bin(c, MLC_TIR_GT, a, b);
  if (!a || !mlc_dtype_is_float(a->dtype)) return gt;
  mlc_tir_expr *na = mlc_tir_call1(M, MLC_TIR_INTRIN_ISNAN, a), *nb = mlc_tir_call1(M, MLC_TIR_INTRIN_ISNAN, b);
  return bin(c, MLC_TIR_OR, gt, bin(c, MLC_TIR_AND, na, mlc_tir_not(M, nb)));
}

/* a and b tie (two NaNs tie). */
static mlc_tir_expr *key_eq(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) {
  mlc_tir_expr *eq = bin(c, MLC_TIR_EQ, a, b);
  if (!a || !mlc_dtype_is_float(a->dtype)) return eq;
  mlc_tir_expr *na = mlc_tir_call1(M, MLC_TIR_INTRIN_ISNAN, a), *nb = mlc_tir_call1(M, MLC_TIR_INTRIN_ISNAN, b);
  return bin(c, MLC_TIR_OR, eq, bin(c, MLC_TIR_AND, na, nb));
}

/* rank[idx] = number of elements t along the axis ordered before idx */
static mlc_tir_expr *topk_rank_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  topk_ctx *s = user;
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *xi[MAX_RANK];
  mlc_tir_expr *t = mlc_te_reduce_axis(b, mlc_lg_dim(c, x, s->axis), "t");
  for (int d = 0; d < x->rank; d++) xi[d] = d == s->axis ? t : idx[d];
  mlc_tir_expr *xt = mlc_lg_arg_load(c, 0, xi), *xj = mlc_lg_arg_load(c, 0, idx);
  mlc_tir_expr *better = s->largest ? key_gt(c, xt, xj) : key_gt(c, xj, xt);
  mlc_tir_expr *tie = bin(c, MLC_TIR_AND, key_eq(c, xt, xj), bin(c, MLC_TIR_LT, t, idx[s->axis]));
  mlc_tir_expr *before = bin(c, MLC_TIR_OR, better, tie);
  return mlc_te_sum(b, mlc_tir_select(M, before, i64(c, 1), i64(c, 0)), &t, 1);
}

/* indices[idx] = the t whose rank is idx[axis] */
static mlc_tir_expr *topk_index_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  topk_ctx *s = user;
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *ri[MAX_RANK];
  mlc_tir_expr *t = mlc_te_reduce_axis(b, mlc_lg_dim(c, x, s->axis), "t");
  for (int d = 0; d < x->rank; d++) ri[d] = d == s->axis ? t : idx[d];
  mlc_tir_expr *hit = bin(c, MLC_TIR_EQ, mlc_te_load(b, s->rank, x->rank, ri), idx[s->axis]);
  return mlc_te_sum(b, mlc_tir_select(M, hit, t, i64(c, 0)), &t, 1);
}

/* values[idx] = x at indices[idx] along the axis */
static mlc_tir_expr *topk_value_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  topk_ctx *s = user;
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *xi[MAX_RANK];
  mlc_tir_expr *v = mlc_te_load(b, s->indices, x->rank, idx);
  v = mlc_tir_max(M, mlc_tir_min(M, v, mlc_tir_sub(M, mlc_lg_dim(c, x, s->axis), i64(c, 1))), i64(c, 0));
  for (int d = 0; d < x->rank; d++) xi[d] = d == s->axis ? v : idx[d];
  return mlc_lg_arg_load(c, 0, xi);
}

/* values, indices = the attr k largest (smallest) elements along attr axis */
mlc_status mlc_lg_topk(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  const mlc_type *x = &c->arg_types[0];
  topk_ctx s = {c, (int)mlc_lg_int(c, "axis", 0), mlc_lg_int(c, "largest", 1) != 0, NULL, NULL};
  if (c->nouts != 2) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "topk has 2 outputs, got %d", c->nouts);
  if (s.axis < 0 || s.axis >= x->rank) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "axis %d out of range", s.axis);
  if (!mlc_dtype_is_float(x->dtype) && !mlc_dtype_is_int(x->dtype))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "dtype %s", mlc_dtype_name(x->dtype));
  mlc_tir_expr **xs = mlc_lg_shape(c, x), **os = mlc_lg_shape(c, &c->out_types[0]);
  if (!xs || !os) return mlc_oom();
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_topk_rank", x->rank, xs, NULL, topk_rank_body, &s, &s.rank));
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_topk_indices", x->rank, os, NULL, topk_index_body, &s, &s.indices));
  out[1] = s.indices;
  return mlc_te_compute(c->b, "T_topk_values", x->rank, os, NULL, topk_value_body, &s, &out[0]);
}

/* ---- einsum --------------------------------------------------------------- */

typedef struct ein_ctx {
  mlc_lg_call *c;
  mlc_dtype acc;
  int nops;
  const char *terms[64]; /* each operand's labels (not NUL-terminated) */
  const char *outl;      /* output labels (NUL-terminated) */
  int nout;
  int used[NLABELS], in_out[NLABELS];
  int src_op[NLABELS], src_dim[NLABELS]; /* a dim giving the label's extent (-1: extent 1) */
} ein_ctx;

static int label_index(char ch) {
  if (ch >= 'a' && ch <= 'z') return ch - 'a';
  if (ch >= 'A' && ch <= 'Z') return 26 + (ch - 'A');
  return -1;
}

/* Splits the explicit equation; 0 when malformed. */
static int ein_parse(ein_ctx *e, const char *eq) {
  mlc_lg_call *c = e->c;
  const char *p = eq;
  for (int i = 0; i < NLABELS; i++) e->src_op[i] = e->src_dim[i] = -1;
  for (int op = 0; op < c->nargs; op++) {
    const mlc_type *t = &c->arg_types[op];
    e->terms[op] = p;
    int d = 0;
    for (; *p && *p != ',' && *p != '-'; p++, d++) {
      int l = label_index(*p);
      if (l < 0 || d >= t->rank) return 0;
      e->used[l] = 1;
      if (t->dims[d] != 1 && e->src_op[l] < 0) e->src_op[l] = op, e->src_dim[l] = d;
    }
    if (d != t->rank) return 0;
    if (op + 1 < c->nargs && *p++ != ',') return 0;
  }
  if (p[0] != '-' || p[1] != '>') return 0;
  e->outl = p + 2;
  e->nout = (int)strlen(e->outl);
  for (int i = 0; i < e->nout; i++) {
    int l = label_index(e->outl[i]);
    if (l < 0 || !e->used[l]) return 0;
    e->in_out[l] = 1;
  }
  return 1;
}

static mlc_tir_expr *ein_extent(ein_ctx *e, int l) {
  mlc_lg_call *c = e->c;
  if (e->src_op[l] < 0) return i64(c, 1);
  return mlc_lg_dim(c, &c->arg_types[e->src_op[l]], e->src_dim[l]);
}

static mlc_tir_expr *ein_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  ein_ctx *e = user;
  mlc_lg_call *c = e->c;
  mlc_tir_expr *var[NLABELS] = {0}, *red[NLABELS];
  int nred = 0;
  for (int i = 0; i < e->nout; i++) var[label_index(e->outl[i])] = idx[i];
  for (int l = 0; l < NLABELS; l++) {
    if (!e->used[l] || e->in_out[l]) continue;
    if (e->src_op[l] >= 0 && c->arg_types[e->src_op[l]].dims[e->src_dim[l]] == 0)
      return mlc_lg_imm(c, e->acc, 0); /* an empty sum */
    char name[4] = {'k', l < 26 ? (char)('a' + l) : (char)('A' + l - 26), 0};
    var[l] = red[nred++] = mlc_te_reduce_axis(b, ein_extent(e, l), name);
  }
  mlc_tir_expr *prod = NULL;
  for (int op = 0; op < c->nargs; op++) {
    const mlc_type *t = &c->arg_types[op];
    mlc_tir_expr *xi[MAX_RANK];
    for (int d = 0; d < t->rank; d++) {
      int l = label_index(e->terms[op][d]);
      xi[d] = t->dims[d] == 1 ? i64(c, 0) : var[l];
    }
    mlc_tir_expr *v = mlc_tir_cast(M, e->acc, mlc_lg_arg_load(c, op, xi));
    prod = prod ? mlc_tir_mul(M, prod, v) : v;
  }
  return nred ? mlc_te_sum(b, prod, red, nred) : prod;
}

/* y = the Einstein summation of the arguments by attr equation */
mlc_status mlc_lg_einsum(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  const mlc_attr *eq = mlc_lg_attr(c, "equation");
  ein_ctx e;
  memset(&e, 0, sizeof e);
  e.c = c;
  e.acc = acc_dtype(c->out_types[0].dtype);
  if (c->nargs > 64) return mlc_lg_error(c, MLC_UNIMPLEMENTED, "%d operands (at most 64)", c->nargs);
  if (!eq || eq->kind != MLC_ATTR_STRING || !eq->s || !ein_parse(&e, eq->s))
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "malformed equation");
  if (e.nout != c->out_types[0].rank) return mlc_lg_error(c, MLC_INTERNAL, "output rank mismatch");
  for (int i = 0; i < c->nargs; i++)
    if (!mlc_dtype_is_float(c->arg_types[i].dtype) && !mlc_dtype_is_int(c->arg_types[i].dtype))
      return mlc_lg_error(c, MLC_UNIMPLEMENTED, "dtype %s", mlc_dtype_name(c->arg_types[i].dtype));
  const mlc_type *ot = &c->out_types[0];
  mlc_tir_expr **shape = mlc_lg_shape(c, ot);
  if (!shape) return mlc_oom();
  mlc_te_tensor *sum;
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, e.acc == ot->dtype ? "T_einsum" : "T_einsum_acc", ot->rank,
                                     shape, NULL, ein_body, &e, &sum));
  return finish(c, 0, sum, out);
}

/* ---- reverse_sequence ----------------------------------------------------- */

static mlc_tir_expr *revseq_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  const mlc_type *x = &c->arg_types[0];
  int ba = (int)mlc_lg_int(c, "batch_axis", 1), ta = (int)mlc_lg_int(c, "time_axis", 0);
  mlc_tir_expr *xi[MAX_RANK], *bi[1] = {idx[ba]};
  mlc_tir_expr *t = idx[ta];
  mlc_tir_expr *len = mlc_tir_cast(M, MLC_DTYPE_I64, mlc_lg_arg_load(c, 1, bi)); /* checked in [0, T] */
  mlc_tir_expr *src = mlc_tir_select(M, bin(c, MLC_TIR_LT, t, len),
                                     mlc_tir_sub(M, mlc_tir_sub(M, len, i64(c, 1)), t), t);
  for (int d = 0; d < x->rank; d++) xi[d] = d == ta ? src : idx[d];
  return mlc_lg_arg_load(c, 0, xi);
}

/* y = x with the first lens[b] steps along time_axis reversed per batch b */
mlc_status mlc_lg_reverse_sequence(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  const mlc_type *x = &c->arg_types[0];
  int64_t ba = mlc_lg_int(c, "batch_axis", 1), ta = mlc_lg_int(c, "time_axis", 0);
  if (ba < 0 || ba >= x->rank || ta < 0 || ta >= x->rank || ba == ta)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "batch_axis %lld, time_axis %lld", (long long)ba, (long long)ta);
  mlc_tir_expr *T1 = mlc_tir_add(M, mlc_lg_dim(c, x, (int)ta), i64(c, 1));
  MLC_RETURN_IF_ERROR(mlc_lg_check_values(c, 1, i64(c, 0), T1, "sequence length", NULL));
  return mlc_lg_compute(c, 0, "T_reverse_sequence", revseq_body, out);
}
