/*
** reduce.c: lowering rules for reductions (TOPI's reduction.h): sum, mean,
** max, min and prod over the attr axes, and argmax/argmin along one axis.
**
**   sum/prod/max/min   one reduction stage over the reduced axes;
**   mean               a sum stage, then a stage dividing by the count;
**   argmax/argmin      stage 1 the best key along the axis, stage 2 the
**                      first (or, with select_last_index, the last) index
**                      whose key equals it.
**
** float16/bfloat16 sums and products accumulate in float32 and integer means
** in 64 bits, and a final stage converts to the output dtype; max and min
** are exact in any dtype (bool goes through uint8, as arithmetic on bool is
** not allowed in TIR).  Argmax/argmin follow numpy on NaN: a NaN is the
** extreme element, so the first NaN wins (the last one with
** select_last_index).  Float keys are compared as float64 with NaN mapped to
** +-inf and +-inf to the largest finite double, which keeps the order of
** every narrower float exact; for float64 inputs a NaN and an infinity of the
** same sign tie.  Max and min reductions keep TIR's max/min (a > b ? a : b),
** which does not propagate NaN as the reference evaluator does.  A reduction
** over a dim of extent 0 is the combiner's identity (mean: 0/0).
*/
#include <float.h>
#include <math.h>
#include <string.h>

#include "lower/lower_int.h"

#define M (c->tm)
#define MAX_RANK 16

/* The dtype an accumulation of |dt| runs in (sums and products). */
static mlc_dtype acc_dtype(mlc_dtype dt) {
  return dt == MLC_DTYPE_F16 || dt == MLC_DTYPE_BF16 ? MLC_DTYPE_F32 : dt;
}

/* ---- sum, mean, max, min, prod -------------------------------------------- */

typedef struct red_ctx {
  mlc_lg_call *c;
  unsigned char red[MAX_RANK]; /* reduced axes of the input */
  int keep;                    /* keepdims */
  int nred;                    /* number of reduced axes */
  mlc_dtype acc;               /* dtype of the reduction stage */
  mlc_te_tensor *stage;        /* the reduction stage (for the finishing stage) */
  mlc_tir_expr *count;         /* number of reduced elements (int64), mean only */
} red_ctx;

/* Input index of the reduced element: kept axes from the output index
** |idx|, reduced ones from the reduce axes |k|. */
static void red_in_index(red_ctx *r, mlc_tir_expr *const *idx, mlc_tir_expr *const *k,
                         mlc_tir_expr **xi) {
  const mlc_type *x = &r->c->arg_types[0];
  int o = 0, j = 0;
  for (int d = 0; d < x->rank; d++) {
    if (r->red[d]) {
      xi[d] = k[j++];
      if (r->keep) o++;
    } else {
      xi[d] = idx[o++];
    }
  }
}

static mlc_tir_expr *red_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  red_ctx *r = user;
  mlc_lg_call *c = r->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *k[MAX_RANK], *xi[MAX_RANK];
  int j = 0;
  for (int d = 0; d < x->rank; d++)
    if (r->red[d]) {
      char name[8] = {'k', (char)('0' + d % 10), 0};
      k[j++] = mlc_te_reduce_axis(b, mlc_lg_dim(c, x, d), name);
    }
  red_in_index(r, idx, k, xi);
  mlc_tir_expr *v = mlc_tir_cast(M, r->acc, mlc_lg_arg_load(c, 0, xi));
  if (r->nred == 0) return v;
  for (int d = 0; d < x->rank; d++)
    if (r->red[d] && x->dims[d] == 0) { /* nothing to reduce: the identity */
      mlc_tir_reduce_op op = c->op == MLC_OP_PROD  ? MLC_TIR_REDUCE_PROD
                             : c->op == MLC_OP_MAX ? MLC_TIR_REDUCE_MAX
                             : c->op == MLC_OP_MIN ? MLC_TIR_REDUCE_MIN
                                                   : MLC_TIR_REDUCE_SUM;
      return mlc_tir_reduce_identity(M, op, r->acc);
    }
  switch (c->op) {
    case MLC_OP_SUM:
    case MLC_OP_MEAN: return mlc_te_sum(b, v, k, r->nred);
    case MLC_OP_PROD: return mlc_te_prod(b, v, k, r->nred);
    case MLC_OP_MAX: return mlc_te_max(b, v, k, r->nred);
    default: return mlc_te_min(b, v, k, r->nred);
  }
}

/* mean: sum / count; otherwise the accumulator converted to the output dtype. */
static mlc_tir_expr *red_finish(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  red_ctx *r = user;
  mlc_lg_call *c = r->c;
  mlc_dtype ot = c->out_types[0].dtype;
  mlc_tir_expr *v = mlc_te_load(b, r->stage, r->stage->rank, idx);
  if (c->op == MLC_OP_MEAN) {
    if (mlc_dtype_is_float(r->acc))
      v = mlc_tir_binary(M, MLC_TIR_DIV, v, mlc_tir_cast(M, r->acc, r->count));
    else
      v = mlc_tir_binary(M, MLC_TIR_TRUNCDIV, v, mlc_tir_cast(M, r->acc, r->count));
  }
  return mlc_tir_cast(M, ot, v);
}

/* y = reduce(x) over attr axes (empty or absent: all), attr keepdims */
mlc_status mlc_lg_reduce(mlc_lg_call *c, mlc_te_tensor **out) {
  const mlc_type *x = &c->arg_types[0];
  mlc_dtype dt = x->dtype;
  red_ctx r;
  memset(&r, 0, sizeof r);
  r.c = c;
  if (x->rank > MAX_RANK)
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "input rank %d (at most %d)", x->rank, MAX_RANK);
  const mlc_attr *axes = mlc_lg_attr(c, "axes");
  int all = !axes || axes->kind != MLC_ATTR_INTS || axes->n == 0;
  memset(r.red, all, sizeof r.red);
  for (int i = 0; !all && i < axes->n; i++) {
    if (axes->ints[i] < 0 || axes->ints[i] >= x->rank)
      return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "axis %lld out of range", (long long)axes->ints[i]);
    r.red[axes->ints[i]] = 1;
  }
  for (int d = 0; d < x->rank; d++) r.nred += r.red[d];
  r.keep = (int)mlc_lg_int(c, "keepdims", 1);
  int is_mean = c->op == MLC_OP_MEAN;
  if (c->op == MLC_OP_MAX || c->op == MLC_OP_MIN)
    r.acc = dt == MLC_DTYPE_BOOL ? MLC_DTYPE_U8 : dt;
  else if (is_mean && mlc_dtype_is_int(dt))
    r.acc = mlc_dtype_is_signed(dt) ? MLC_DTYPE_I64 : MLC_DTYPE_U64;
  else
    r.acc = acc_dtype(dt);
  if (!mlc_dtype_is_float(dt) && !mlc_dtype_is_int(dt) && !(dt == MLC_DTYPE_BOOL && r.acc == MLC_DTYPE_U8))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "dtype %s", mlc_dtype_name(dt));
  const mlc_type *ot = &c->out_types[0];
  mlc_tir_expr **shape = mlc_lg_shape(c, ot);
  if (!shape) return mlc_oom();
  if (!is_mean && r.acc == ot->dtype)
    return mlc_te_compute(c->b, "T_reduce", ot->rank, shape, NULL, red_body, &r, out);
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_reduce_acc", ot->rank, shape, NULL, red_body, &r, &r.stage));
  r.count = mlc_tir_i64(M, 1);
  for (int d = 0; d < x->rank; d++)
    if (r.red[d]) r.count = mlc_tir_mul(M, r.count, mlc_lg_dim(c, x, d));
  if (!r.count) return mlc_oom();
  return mlc_te_compute(c->b, is_mean ? "T_mean" : "T_reduce", ot->rank, shape, NULL, red_finish, &r, out);
}

/* ---- argmax, argmin ------------------------------------------------------------ */

typedef struct arg_ctx {
  mlc_lg_call *c;
  int axis, keep, last, max;
  mlc_te_tensor *best; /* stage 1: best key, the input's shape with axis extent 1 */
} arg_ctx;

/* The ordering key of |v| (numpy NaN semantics for floats, see the top). */
static mlc_tir_expr *arg_key(arg_ctx *a, mlc_tir_expr *v) {
  mlc_lg_call *c = a->c;
  if (!v || !mlc_dtype_is_float(v->dtype)) return v;
  double inf = a->max ? INFINITY : -INFINITY;
  mlc_tir_expr *isnan = mlc_tir_call1(M, MLC_TIR_INTRIN_ISNAN, v);
  if (v->dtype == MLC_DTYPE_F64)
    return mlc_tir_select(M, isnan, mlc_tir_float(M, MLC_DTYPE_F64, inf), v);
  mlc_tir_expr *w = mlc_tir_cast(M, MLC_DTYPE_F64, v);
  mlc_tir_expr *isinf = mlc_tir_binary(M, MLC_TIR_EQ, w, mlc_tir_float(M, MLC_DTYPE_F64, inf));
  mlc_tir_expr *big = mlc_tir_float(M, MLC_DTYPE_F64, a->max ? DBL_MAX : -DBL_MAX);
  return mlc_tir_select(M, isnan, mlc_tir_float(M, MLC_DTYPE_F64, inf),
                        mlc_tir_select(M, isinf, big, w));
}

static mlc_tir_expr *arg_best_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  arg_ctx *a = user;
  mlc_lg_call *c = a->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *xi[MAX_RANK];
  mlc_tir_expr *k = mlc_te_reduce_axis(b, mlc_lg_dim(c, x, a->axis), "k");
  for (int d = 0; d < x->rank; d++) xi[d] = d == a->axis ? k : idx[d];
  mlc_tir_expr *key = arg_key(a, mlc_lg_arg_load(c, 0, xi));
  return a->max ? mlc_te_max(b, key, &k, 1) : mlc_te_min(b, key, &k, 1);
}

static mlc_tir_expr *arg_index_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  arg_ctx *a = user;
  mlc_lg_call *c = a->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *xi[MAX_RANK], *bi[MAX_RANK];
  mlc_tir_expr *ext = mlc_lg_dim(c, x, a->axis);
  mlc_tir_expr *k = mlc_te_reduce_axis(b, ext, "k");
  int o = 0;
  for (int d = 0; d < x->rank; d++) {
    if (d == a->axis) {
      xi[d] = k;
      bi[d] = mlc_tir_i64(M, 0);
      if (a->keep) o++;
    } else {
      xi[d] = bi[d] = idx[o++];
    }
  }
  mlc_tir_expr *key = arg_key(a, mlc_lg_arg_load(c, 0, xi));
  mlc_tir_expr *hit = mlc_tir_binary(M, MLC_TIR_EQ, key, mlc_te_load(b, a->best, x->rank, bi));
  if (a->last) return mlc_te_max(b, mlc_tir_select(M, hit, k, mlc_tir_i64(M, -1)), &k, 1);
  return mlc_te_min(b, mlc_tir_select(M, hit, k, ext), &k, 1);
}

/* y = int64 index of the max (min) of x along attr axis */
mlc_status mlc_lg_argreduce(mlc_lg_call *c, mlc_te_tensor **out) {
  const mlc_type *x = &c->arg_types[0];
  arg_ctx a = {c, (int)mlc_lg_int(c, "axis", 0), (int)mlc_lg_int(c, "keepdims", 1),
               (int)mlc_lg_int(c, "select_last_index", 0), c->op == MLC_OP_ARGMAX, NULL};
  if (x->rank > MAX_RANK || x->rank < 1)
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "input rank %d (1 to %d)", x->rank, MAX_RANK);
  if (a.axis < 0 || a.axis >= x->rank)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "axis %d out of range", a.axis);
  if (!mlc_dtype_is_float(x->dtype) && !mlc_dtype_is_int(x->dtype))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "dtype %s", mlc_dtype_name(x->dtype));
  mlc_tir_expr **bshape = mlc_lg_shape(c, x);
  if (!bshape) return mlc_oom();
  bshape[a.axis] = mlc_tir_i64(M, 1);
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_arg_best", x->rank, bshape, NULL, arg_best_body, &a, &a.best));
  const mlc_type *ot = &c->out_types[0];
  mlc_tir_expr **shape = mlc_lg_shape(c, ot);
  if (!shape) return mlc_oom();
  return mlc_te_compute(c->b, "T_arg_index", ot->rank, shape, NULL, arg_index_body, &a, out);
}
