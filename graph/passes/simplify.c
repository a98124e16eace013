/*
** simplify.c: remove op calls that compute nothing, and collapse chains of
** data movement and casts into one call.
**
** One forward walk over each function's bindings (uses follow definitions,
** so a chain collapses as the walk reaches its end).  A binding whose
** result equals an argument is removed and its uses take the argument:
**   - copy(x)                             (materialize_outputs adds its own
**                                          copies later, after this pass)
**   - reshape(x) to the shape x has
**   - permute_dims(x) with the identity perm
**   - cast(x) to the dtype x has
**   - broadcast_to(x) to the shape x has
**   - strided_slice(x) with every step 1 and the shape x has (it takes all)
**   - concat(x) of one argument
** A binding whose argument is computed by a call of the same kind is
** rewritten to skip it (the inner call stays for its other uses; dce drops
** it when there are none):
**   - reshape(reshape(x))                 -> reshape(x)
**   - permute_dims(permute_dims(x, p), q) -> permute_dims(x, p[q[i]]), or x
**                                            when that is the identity
**   - cast(cast(x, T1), T2)               -> cast(x, T2) when the first cast
**                                            is exact (every value of x's
**                                            dtype is one of T1: f16->f32,
**                                            f32->f64, int widening, small
**                                            ints to floats); then x itself
**                                            when T2 is x's dtype.  Never
**                                            through a narrowing cast.
** The values a function returns keep their names (the names of the
** model's outputs): mlc_subst_apply_keep_names.
**
**   before: lv0 = R.reshape(x, shape=[4, 6])          (x: [2, 12], float32)
**           lv1 = R.reshape(lv0, shape=[12, 2])
**           lv2 = R.permute_dims(lv1, perm=[1, 0])
**           lv3 = R.permute_dims(lv2, perm=[1, 0])
**           lv4 = R.cast(lv3, dtype=float64)
**           gv = R.cast(lv4, dtype=float32)
**           return gv
**   after (and dce):  gv = R.reshape(x, shape=[12, 2])
**           return gv
** (the reshapes collapse into one; the perms compose to the identity; the
** f32 -> f64 -> f32 chain is exact; the value left takes the name gv).
*/
#include <string.h>

#include "graph/graph_int.h"
#include "graph/pass.h"

/* Bits of precision of integer or bool dtypes (the sign not counted), -1
** for the others. */
static int int_bits(mlc_dtype t, int *is_signed) {
  *is_signed = 0;
  switch (t) {
  case MLC_DTYPE_BOOL: return 1;
  case MLC_DTYPE_U8: return 8;
  case MLC_DTYPE_U16: return 16;
  case MLC_DTYPE_U32: return 32;
  case MLC_DTYPE_U64: return 64;
  case MLC_DTYPE_I8: *is_signed = 1; return 7;
  case MLC_DTYPE_I16: *is_signed = 1; return 15;
  case MLC_DTYPE_I32: *is_signed = 1; return 31;
  case MLC_DTYPE_I64: *is_signed = 1; return 63;
  case MLC_DTYPE_INVALID: case MLC_DTYPE_F32: case MLC_DTYPE_F64: case MLC_DTYPE_F16:
  case MLC_DTYPE_BF16: case MLC_DTYPE_STRING: case MLC_DTYPE_COUNT:
    break;
  }
  return -1;
}

/* Significand bits of a float dtype (implicit bit included) and its
** exponent range rank (a larger one holds every exponent of a smaller one);
** 0 for the others. */
static int float_bits(mlc_dtype t, int *exp_rank) {
  switch (t) {
  case MLC_DTYPE_F16: *exp_rank = 1; return 11;
  case MLC_DTYPE_BF16: *exp_rank = 2; return 8;
  case MLC_DTYPE_F32: *exp_rank = 2; return 24;
  case MLC_DTYPE_F64: *exp_rank = 3; return 53;
  case MLC_DTYPE_INVALID: case MLC_DTYPE_I8: case MLC_DTYPE_I16: case MLC_DTYPE_I32:
  case MLC_DTYPE_I64: case MLC_DTYPE_U8: case MLC_DTYPE_U16: case MLC_DTYPE_U32:
  case MLC_DTYPE_U64: case MLC_DTYPE_BOOL: case MLC_DTYPE_STRING: case MLC_DTYPE_COUNT:
    break;
  }
  *exp_rank = 0;
  return 0;
}

/* 1 when every value of dtype |from| converts to |to| exactly (and back). */
static int cast_exact(mlc_dtype from, mlc_dtype to) {
  if (from == to) return 1;
  int fs, ts, fe, te;
  int fi = int_bits(from, &fs), ti = int_bits(to, &ts);
  int ff = float_bits(from, &fe), tf = float_bits(to, &te);
  if (fi > 0 && ti > 0) /* int -> int: no sign lost, enough bits */
    return (!fs || ts) && fi <= ti && to != MLC_DTYPE_BOOL;
  if (fi > 0 && tf > 0) /* int -> float: the significand holds every int */
    return fi <= tf;
  if (ff > 0 && tf > 0) /* float -> float: more precision and range */
    return ff <= tf && fe <= te;
  return 0;
}

/* 1 when |perm| (|n| entries) is 0, 1, ..., n-1. */
static int perm_identity(const int64_t *perm, int n) {
  for (int i = 0; i < n; i++)
    if (perm[i] != i) return 0;
  return 1;
}

/* The INTS attribute |name| of |b| (count in *n), or NULL. */
static const int64_t *attr_ints(const mlc_binding *b, const char *name, int *n) {
  const mlc_attr *a = mlc_attrs_find(b->attrs, b->nattrs, name);
  if (!a || a->kind != MLC_ATTR_INTS) return NULL;
  *n = a->n;
  return a->ints;
}

/* The op call defining |v|, when |v| is the only output of a call of |op|. */
static mlc_binding *def_of(const mlc_value *v, mlc_op op) {
  if (v->kind != MLC_VALUE_VAR || !v->def) return NULL;
  mlc_binding *d = v->def;
  return d->kind == MLC_CALL_OP && d->op == op && d->nouts == 1 && d->nargs >= 1 ? d : NULL;
}

/* 1 when |b| computes its first argument unchanged. */
static int is_noop(const mlc_binding *b) {
  const mlc_value *x = b->args[0], *y = b->outs[0];
  if (!mlc_type_equal(&x->type, &y->type)) return 0;
  mlc_op op = b->op;
  if (op == MLC_OP_COPY || op == MLC_OP_RESHAPE || op == MLC_OP_CAST || op == MLC_OP_BROADCAST_TO)
    return 1;
  if (op == MLC_OP_CONCAT) return b->nargs == 1;
  int n = 0;
  const int64_t *v;
  if (op == MLC_OP_TRANSPOSE) {
    v = attr_ints(b, "perm", &n);
    return v && n == x->type.rank && perm_identity(v, n);
  }
  if (op == MLC_OP_SLICE) {
    v = attr_ints(b, "step", &n);
    if (!v || n != x->type.rank) return 0;
    for (int i = 0; i < n; i++)
      if (v[i] != 1) return 0;
    return 1;
  }
  return 0;
}

/* 1 when |b|'s op, args and attributes infer the type of its output (a
** rewritten call must compute a value of the same type). */
static int infers_same(mlc_module *m, const mlc_binding *b) {
  mlc_call_info ci = {m, b->op, b->nargs, b->args, b->nattrs, b->attrs, &b->origin};
  mlc_type t[MLC_MAX_OUTS];
  int n = 0;
  mlc_status s = mlc_graph_infer(&ci, t, &n);
  int same = !s && n == 1 && mlc_type_equal(&t[0], &b->outs[0]->type);
  mlc_status_free(s);
  return same;
}

/* permute_dims(permute_dims(x, p), q): |b| (the outer call) takes the
** composed perm r[i] = p[q[i]]. */
static mlc_status compose_perm(mlc_module *m, const mlc_binding *in, mlc_binding *b, int *ok) {
  int np = 0, nq = 0;
  const int64_t *p = attr_ints(in, "perm", &np), *q = attr_ints(b, "perm", &nq);
  *ok = 0;
  if (!p || !q || np != nq || np != in->args[0]->type.rank || np > 64) return NULL;
  int64_t r[64];
  for (int i = 0; i < nq; i++) {
    if (q[i] < 0 || q[i] >= np) return NULL;
    r[i] = p[q[i]];
  }
  int64_t *ints = mlc_module_dims(m, r, nq);
  if (!ints && nq > 0) return mlc_oom();
  for (int i = 0; i < b->nattrs; i++)
    if (strcmp(b->attrs[i].name, "perm") == 0) b->attrs[i].ints = ints;
  *ok = 1;
  return NULL;
}

/*
** Rewrites |b| to skip a call of its own kind that computes its argument:
** a reshape of a reshape, a permute_dims of a permute_dims, an exact cast
** chain.  Sets *changed when it did.
*/
static mlc_status collapse(mlc_module *m, mlc_binding *b, int *changed) {
  *changed = 0;
  mlc_op op = b->op;
  if (b->nargs != 1 || (op != MLC_OP_RESHAPE && op != MLC_OP_CAST && op != MLC_OP_TRANSPOSE)) return NULL;
  mlc_binding *in = def_of(b->args[0], op);
  if (!in || in->nargs != 1) return NULL;
  mlc_value *x = in->args[0], *old = b->args[0];
  if (op == MLC_OP_CAST && !cast_exact(x->type.dtype, in->outs[0]->type.dtype)) return NULL;
  const mlc_attr *perm = mlc_attrs_find(b->attrs, b->nattrs, "perm");
  const int64_t *old_perm = perm ? perm->ints : NULL;
  if (op == MLC_OP_TRANSPOSE) {
    int ok;
    MLC_RETURN_IF_ERROR(compose_perm(m, in, b, &ok));
    if (!ok) return NULL;
  }
  b->args[0] = x;
  if (!infers_same(m, b)) { /* e.g. a reshape the symbolic dims cannot check: undo */
    b->args[0] = old;
    for (int i = 0; i < b->nattrs; i++)
      if (strcmp(b->attrs[i].name, "perm") == 0) b->attrs[i].ints = old_perm;
    return NULL;
  }
  *changed = 1;
  return NULL;
}

static mlc_status simplify_func(mlc_module *m, mlc_func *f) {
  mlc_subst sub;
  MLC_RETURN_IF_ERROR(mlc_subst_init(&sub, m));
  mlc_status s = NULL;
  for (int bi = 0; bi < f->nblocks && !s; bi++) {
    mlc_block *blk = &f->blocks[bi];
    int kept = 0;
    for (int j = 0; j < blk->n; j++) {
      mlc_binding *b = blk->bindings[j];
      for (int a = 0; a < b->nargs; a++) b->args[a] = mlc_subst_get(&sub, b->args[a]);
      if (b->kind == MLC_CALL_OP && blk->dataflow && b->nouts == 1 && b->nargs >= 1 && !s) {
        int changed = 1;
        while (changed && !s) s = collapse(m, b, &changed);
        if (!s && is_noop(b)) {
          mlc_subst_set(&sub, b->outs[0], b->args[0]);
          continue;
        }
      }
      blk->bindings[kept++] = b;
    }
    blk->n = kept;
  }
  if (!s) s = mlc_subst_apply_keep_names(&sub, f);
  mlc_subst_fini(&sub);
  mlc_func_compact(f);
  return s;
}

/* The pass: rewrites |m| in place; |ctx| is borrowed and unused. */
mlc_status mlc_pass_simplify(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)ctx;
  for (int i = 0; i < m->nfuncs; i++) MLC_RETURN_IF_ERROR(simplify_func(m, m->funcs[i]));
  return NULL;
}
