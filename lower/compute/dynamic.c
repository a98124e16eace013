/*
** dynamic.c: lowering of the run-time shape ops (ops.def section "run-time
** shapes").
**
** Shape functions (reshape_dims, slice_params, resize_dims, ...), nonzero
** and compress are not loop nests: they are a handful of host computations
** with validation and error messages, so legalization turns them into
** call_dps_packed of the runtime's built-ins "mlc.<op>" (runtime/shapefn.c),
** with their int attributes put in the order the built-in reads them (the
** archiver passes them as trailing immediates).  define_dims becomes
** call_dps_packed(MLC_LOWER_BIND_SYMS), the runtime's BIND_SYMS step.
**
** The data ops are te computes whose output extents are the symbols
** define_dims defined; a kernel binds them from its output's DLTensor
** shape like any symbolic extent:
**
**   dyn_reshape, dyn_broadcast_to, dyn_tile   the static rules (transform.c)
**   dyn_strided_slice   y[i] = x[p[r+d] + i*p[2r+d]]: begins and steps loaded
**   dyn_pad             x[i - p[r+d]], constant/edge/reflect as pad does
**   dyn_reduce          y[i] = reduce_k x[i + k]: per axis either the output
**                       extent or the reduce extent is 1, so the input
**                       index is their sum (reduce extent: x_d where y_d
**                       differs from it, else 1)
**   dyn_range           y[i] = start + i*delta
*/
#include <string.h>

#include "lower/lower_int.h"

#define M (c->tm)
#define MAX_RANK 16

static mlc_tir_expr *i64(mlc_lg_call *c, int64_t v) { return mlc_tir_i64(M, v); }

static mlc_status check_rank(mlc_lg_call *c) {
  if (c->arg_types[0].rank > MAX_RANK || c->out_types[0].rank > MAX_RANK)
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "rank above %d", MAX_RANK);
  return NULL;
}

/* p[k] of the int64 params vector (arg |i|). */
static mlc_tir_expr *param(mlc_lg_call *c, int i, int64_t k) {
  mlc_tir_expr *ix = i64(c, k);
  return mlc_lg_arg_load(c, i, &ix);
}

/* Element 0 of a one-element arg |i| (rank 0 or more). */
static mlc_tir_expr *scalar_load(mlc_lg_call *c, int i) {
  mlc_tir_expr *zero[MAX_RANK];
  int r = c->arg_types[i].rank;
  for (int d = 0; d < r && d < MAX_RANK; d++) zero[d] = i64(c, 0);
  return mlc_lg_arg_load(c, i, zero);
}

/* ---- built-ins ------------------------------------------------------------ */

/* The built-in of |op| (NULL: a te rule or no rule) and the int attributes
** it reads, in order, with their defaults. */
typedef struct builtin {
  mlc_op op;
  const char *name;
  const char *attrs[2];
  int64_t dflt[2];
} builtin;

static const builtin builtins[] = {
#define BUILTIN(e, fn, a0, d0, a1, d1) {MLC_OP_##e, "mlc." #fn, {a0, a1}, {d0, d1}},
#include "runtime/rt_builtins.def"
#undef BUILTIN
};

/* Rewrites |b| into call_dps_packed of its built-in when it has one
** (*done = 1): shape functions and nonzero get canonical int attributes in
** the module arena; define_dims keeps its attributes. */
mlc_status mlc_lg_builtin(mlc_module *gm, mlc_binding *b, int *done) {
  *done = 0;
  if (b->kind != MLC_CALL_OP) return NULL;
  if (b->op == MLC_OP_DEFINE_DIMS) {
    MLC_RETURN_IF_ERROR(mlc_binding_set_call(gm, b, MLC_CALL_DPS_PACKED, MLC_LOWER_BIND_SYMS, b->args, b->nargs));
    *done = 1;
    return NULL;
  }
  /* run-time control flow: markers the archiver turns into the runtime's
  ** jump steps (they keep their op and attributes) */
  static const struct { mlc_op op; const char *name; } cf[] = {
      {MLC_OP_CF_IF, "mlc.cf_if"},         {MLC_OP_CF_ELSE, "mlc.cf_else"},
      {MLC_OP_CF_END_IF, "mlc.cf_end_if"}, {MLC_OP_CF_LOOP, "mlc.cf_loop"},
      {MLC_OP_CF_LOOP_END, "mlc.cf_loop_end"}};
  for (size_t i = 0; i < sizeof cf / sizeof cf[0]; i++)
    if (cf[i].op == b->op) {
      MLC_RETURN_IF_ERROR(mlc_binding_set_call(gm, b, MLC_CALL_DPS_PACKED, cf[i].name, b->args, b->nargs));
      *done = 1;
      return NULL;
    }
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
    const builtin *bi = &builtins[i];
    if (bi->op != b->op) continue;
    int n = 0;
    mlc_attr attrs[2];
    for (int k = 0; k < 2 && bi->attrs[k]; k++)
      attrs[n++] = mlc_attr_int(bi->attrs[k], mlc_attrs_int(b->attrs, b->nattrs, bi->attrs[k], bi->dflt[k]));
    MLC_RETURN_IF_ERROR(mlc_binding_set_attrs(gm, b, attrs, n));
    MLC_RETURN_IF_ERROR(mlc_binding_set_call(gm, b, MLC_CALL_DPS_PACKED, bi->name, b->args, b->nargs));
    *done = 1;
    return NULL;
  }
  return NULL;
}

/* ---- dyn_strided_slice ---------------------------------------------------- */

static mlc_tir_expr *slice_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  int r = c->arg_types[0].rank;
  mlc_tir_expr *xi[MAX_RANK];
  for (int d = 0; d < r; d++)
    xi[d] = mlc_tir_add(M, param(c, 1, r + d), mlc_tir_mul(M, idx[d], param(c, 1, 2 * r + d)));
  return mlc_lg_arg_load(c, 0, xi);
}

/* y[i] = x[p[r+d] + i*p[2r+d]] per axis d */
mlc_status mlc_lg_dyn_slice(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  return mlc_lg_compute(c, 0, "T_dyn_strided_slice", slice_body, out);
}

/* ---- dyn_pad --------------------------------------------------------------- */

static mlc_tir_expr *pad_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  const mlc_type *x = &c->arg_types[0];
  int r = x->rank;
  const char *ms = mlc_attrs_str(c->attrs, c->nattrs, "mode", "constant");
  mlc_tir_expr *xi[MAX_RANK], *inside = NULL;
  for (int d = 0; d < r; d++) {
    mlc_tir_expr *ext = mlc_lg_dim(c, x, d);
    mlc_tir_expr *i = mlc_tir_sub(M, idx[d], param(c, 1, r + d));
    if (strcmp(ms, "edge") == 0) {
      xi[d] = mlc_tir_max(M, mlc_tir_min(M, i, mlc_tir_sub(M, ext, i64(c, 1))), i64(c, 0));
    } else if (strcmp(ms, "reflect") == 0) { /* fold into [0, 2(ext-1)), mirror the upper half */
      mlc_tir_expr *period = mlc_tir_max(M, mlc_tir_mul(M, i64(c, 2), mlc_tir_sub(M, ext, i64(c, 1))), i64(c, 1));
      mlc_tir_expr *f = mlc_tir_binary(M, MLC_TIR_FLOORMOD, i, period);
      xi[d] = mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_LT, f, ext), f, mlc_tir_sub(M, period, f));
      xi[d] = mlc_tir_max(M, mlc_tir_min(M, xi[d], mlc_tir_sub(M, ext, i64(c, 1))), i64(c, 0));
    } else {
      mlc_tir_expr *in = mlc_tir_binary(M, MLC_TIR_AND, mlc_tir_binary(M, MLC_TIR_GE, i, i64(c, 0)),
                                        mlc_tir_binary(M, MLC_TIR_LT, i, ext));
      inside = inside ? mlc_tir_binary(M, MLC_TIR_AND, inside, in) : in;
      xi[d] = i;
    }
  }
  mlc_tir_expr *v = mlc_lg_arg_load(c, 0, xi);
  if (!inside) return v;
  mlc_tir_expr *fill = c->nargs > 2 ? scalar_load(c, 2) : mlc_lg_imm(c, x->dtype, mlc_lg_float(c, "value", 0.0));
  return mlc_tir_select(M, inside, v, fill);
}

/* y = x padded by begins p[r..2r) (ends follow from the output extents) */
mlc_status mlc_lg_dyn_pad(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  const char *ms = mlc_attrs_str(c->attrs, c->nattrs, "mode", "constant");
  if (strcmp(ms, "constant") != 0)
    for (int d = 0; d < c->arg_types[0].rank; d++)
      if (c->arg_types[0].dims[d] == 0)
        return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "%s padding of the empty axis %d", ms, d);
  return mlc_lg_compute(c, 0, "T_dyn_pad", pad_body, out);
}

/* ---- dyn_reduce ------------------------------------------------------------ */

typedef struct dred {
  mlc_lg_call *c;
  mlc_tir_expr *k[MAX_RANK]; /* reduce axes, one per input axis */
  mlc_te_tensor *stage;
  mlc_tir_expr *count;
} dred;

static mlc_tir_expr *dred_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  dred *r = user;
  mlc_lg_call *c = r->c;
  int rank = c->arg_types[0].rank;
  mlc_tir_expr *xi[MAX_RANK];
  for (int d = 0; d < rank; d++) xi[d] = mlc_tir_add(M, idx[d], r->k[d]);
  mlc_tir_expr *v = mlc_lg_arg_load(c, 0, xi);
  const char *kind = mlc_attrs_str(c->attrs, c->nattrs, "kind", "sum");
  if (strcmp(kind, "max") == 0) return mlc_te_max(b, v, r->k, rank);
  if (strcmp(kind, "min") == 0) return mlc_te_min(b, v, r->k, rank);
  if (strcmp(kind, "prod") == 0) return mlc_te_prod(b, v, r->k, rank);
  return mlc_te_sum(b, v, r->k, rank);
}

static mlc_tir_expr *dred_mean(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  dred *r = user;
  mlc_lg_call *c = r->c;
  mlc_tir_expr *v = mlc_te_load(b, r->stage, c->out_types[0].rank, idx);
  return mlc_tir_binary(M, MLC_TIR_DIV, v, mlc_tir_cast(M, c->out_types[0].dtype, r->count));
}

/* y[i] = reduce over k of x[i + k], keeping dims; reduce extents are x_d
** where the output extent differs from it, else 1 */
mlc_status mlc_lg_dyn_reduce(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  const mlc_type *x = &c->arg_types[0], *y = &c->out_types[0];
  mlc_dtype dt = x->dtype;
  if (dt == MLC_DTYPE_F16 || dt == MLC_DTYPE_BF16 || dt == MLC_DTYPE_BOOL)
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "%s reductions over run-time axes", mlc_dtype_name(dt));
  dred r;
  memset(&r, 0, sizeof r);
  r.c = c;
  r.count = i64(c, 1);
  for (int d = 0; d < x->rank; d++) {
    mlc_tir_expr *xd = mlc_lg_dim(c, x, d), *yd = mlc_lg_dim(c, y, d), *e;
    if (x->dims[d] == y->dims[d]) e = i64(c, 1);
    else e = mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_EQ, yd, xd), i64(c, 1), xd);
    char name[16];
    snprintf(name, sizeof name, "k%d", d);
    r.k[d] = mlc_te_reduce_axis(c->b, e, name);
    r.count = mlc_tir_mul(M, r.count, e);
  }
  mlc_tir_expr **shape = mlc_lg_shape(c, y);
  if (!shape) return mlc_oom();
  int mean = strcmp(mlc_attrs_str(c->attrs, c->nattrs, "kind", "sum"), "mean") == 0;
  if (!mean) return mlc_te_compute(c->b, "T_dyn_reduce", y->rank, shape, NULL, dred_body, &r, out);
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_dyn_reduce_sum", y->rank, shape, NULL, dred_body, &r, &r.stage));
  return mlc_te_compute(c->b, "T_dyn_reduce_mean", y->rank, shape, NULL, dred_mean, &r, out);
}

/* ---- dyn_range --------------------------------------------------------------- */

static mlc_tir_expr *range_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  mlc_dtype dt = c->out_types[0].dtype;
  mlc_tir_expr *i = mlc_tir_cast(M, dt, idx[0]);
  return mlc_tir_add(M, scalar_load(c, 0), mlc_tir_mul(M, i, scalar_load(c, 1)));
}

/* y[i] = start + i*delta */
mlc_status mlc_lg_dyn_range(mlc_lg_call *c, mlc_te_tensor **out) {
  mlc_dtype dt = c->out_types[0].dtype;
  if (dt == MLC_DTYPE_F16 || dt == MLC_DTYPE_BF16 || dt == MLC_DTYPE_BOOL)
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "a %s range", mlc_dtype_name(dt));
  return mlc_lg_compute(c, 0, "T_dyn_range", range_body, out);
}
