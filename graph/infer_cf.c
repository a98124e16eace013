/*
** infer_cf.c: inference rule of the run-time control flow markers (ops.def
** section "run-time control flow").
**
** An If whose condition is computed at run time and a Loop whose trip count
** or condition is:
**
**   taken = cf_if(cond)                          then branch follows
**     ...                                        (then bindings)
**   tok = cf_else(taken)                         else branch follows
**     ...                                        (else bindings)
**   y0, y1 = cf_end_if(taken, t0, t1, e0, e1, dims=[...])
**
**   i, c, s = cf_loop(M, cond, s_init)           body inputs
**     ...                                        (body bindings)
**   s_final, ys = cf_loop_end(M, c_out, s_out, y, ncarry=1, dims=[k])
**
** The output types of cf_end_if and of cf_loop_end's scan outputs come from
** attributes: where the two branches' dims differ (or for the number of
** iterations) the frontend makes a fresh symbol, which the marker binds when
** it runs; inference (also re-run by the verifier) only reads them.
*/
#define MLC_GRAPH_INFER_SHORTHANDS
#include "graph/graph_int.h"

#define MAX_RANK 64

/* Arg |i| has one element of a number or bool dtype. */
static mlc_status one_elem(const mlc_call_info *ci, int i, const char *what) {
  const mlc_type *t = mlc_graph_arg(ci, i);
  if (mlc_type_numel(t) != 1 || t->dtype == MLC_DTYPE_STRING)
    return ERR("%s (argument %d) must be one number or bool", what, i);
  return NULL;
}

/* The symbols and extents of |a| are valid for the module. */
static mlc_status known_dims(const mlc_call_info *ci, const mlc_attr *a) {
  for (int i = 0; a && i < a->n; i++)
    if (MLC_DIM_IS_SYM(a->ints[i]) && MLC_DIM_SYM_ID(a->ints[i]) >= ci->mod->nsyms)
      return ERR("dims[%d] is an unknown symbol", i);
  return NULL;
}

static mlc_status end_if(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  if (ci->nargs % 2 != 1) return ERR("takes taken, then n then values and n else values");
  int n = (ci->nargs - 1) / 2;
  if (n > MLC_MAX_OUTS) return UNIMPL("%d outputs (at most %d)", n, MLC_MAX_OUTS);
  const mlc_attr *d = mlc_attrs_find(ci->attrs, ci->nattrs, "dims");
  if (!d || d->kind != MLC_ATTR_INTS) return ERR("attribute dims (ints) is required");
  MLC_RETURN_IF_ERROR(known_dims(ci, d));
  int at = 0;
  for (int i = 0; i < n; i++) {
    const mlc_type *t = mlc_graph_arg(ci, 1 + i), *e = mlc_graph_arg(ci, 1 + n + i);
    if (t->dtype != e->dtype || t->rank != e->rank)
      return ERR("output %d: the then branch gives %s of rank %d, the else branch %s of rank %d", i,
                 mlc_dtype_name(t->dtype), t->rank, mlc_dtype_name(e->dtype), e->rank);
    if (at + t->rank > d->n) return ERR("attribute dims has %d entries, too few for the outputs", d->n);
    for (int k = 0; k < t->rank; k++)
      if (t->dims[k] == e->dims[k] && d->ints[at + k] != t->dims[k])
        return ERR("output %d dim %d: both branches give the same extent, dims says otherwise", i, k);
    MLC_RETURN_IF_ERROR(mlc_graph_set_out(ci, outs, i, t->dtype, d->ints + at, t->rank));
    at += t->rank;
  }
  if (at != d->n) return ERR("attribute dims has %d entries, the outputs have %d dims", d->n, at);
  *nouts = n;
  return NULL;
}

static mlc_status loop(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *m = mlc_graph_arg(ci, 0), *c = mlc_graph_arg(ci, 1);
  if (m->dtype != MLC_DTYPE_I64 || m->rank != 0) return ERR("M must be an int64 scalar");
  if (c->dtype != MLC_DTYPE_BOOL || c->rank != 0) return ERR("cond must be a bool scalar");
  if (ci->nargs > MLC_MAX_OUTS) return UNIMPL("%d loop-carried values (at most %d)", ci->nargs - 2, MLC_MAX_OUTS - 2);
  MLC_RETURN_IF_ERROR(mlc_graph_set_out(ci, outs, 0, MLC_DTYPE_I64, NULL, 0));
  MLC_RETURN_IF_ERROR(mlc_graph_set_out(ci, outs, 1, MLC_DTYPE_BOOL, NULL, 0));
  for (int i = 2; i < ci->nargs; i++) {
    const mlc_type *t = mlc_graph_arg(ci, i);
    MLC_RETURN_IF_ERROR(mlc_graph_set_out(ci, outs, i, t->dtype, t->dims, t->rank));
  }
  *nouts = ci->nargs;
  return NULL;
}

static mlc_status loop_end(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *m = mlc_graph_arg(ci, 0), *c = mlc_graph_arg(ci, 1);
  if (m->dtype != MLC_DTYPE_I64 || m->rank != 0) return ERR("M must be an int64 scalar");
  if (c->dtype != MLC_DTYPE_BOOL || c->rank != 0) return ERR("cond_out must be a bool scalar");
  int64_t ncarry = mlc_attrs_int(ci->attrs, ci->nattrs, "ncarry", 0);
  if (ncarry < 0 || ncarry > ci->nargs - 2) return ERR("ncarry %lld for %d values", LL(ncarry), ci->nargs - 2);
  int nscan = ci->nargs - 2 - (int)ncarry, n = ci->nargs - 2;
  if (n < 1) return ERR("a loop with no outputs");
  if (n > MLC_MAX_OUTS) return UNIMPL("%d outputs (at most %d)", n, MLC_MAX_OUTS);
  const mlc_attr *d = mlc_attrs_find(ci->attrs, ci->nattrs, "dims");
  if (nscan > 0 && (!d || d->kind != MLC_ATTR_INTS || d->n != nscan))
    return ERR("attribute dims must have one entry per scan value (%d)", nscan);
  MLC_RETURN_IF_ERROR(known_dims(ci, d));
  for (int i = 0; i < n; i++) {
    const mlc_type *t = mlc_graph_arg(ci, 2 + i);
    if (i < ncarry) {
      MLC_RETURN_IF_ERROR(mlc_graph_set_out(ci, outs, i, t->dtype, t->dims, t->rank));
      continue;
    }
    if (t->rank + 1 > MAX_RANK) return UNIMPL("scan value of rank %d", t->rank);
    int64_t dims[MAX_RANK];
    dims[0] = d->ints[i - ncarry];
    for (int k = 0; k < t->rank; k++) dims[1 + k] = t->dims[k];
    MLC_RETURN_IF_ERROR(mlc_graph_set_out(ci, outs, i, t->dtype, dims, t->rank + 1));
  }
  *nouts = n;
  return NULL;
}

mlc_status mlc_infer_cf(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  switch (ci->op) {
    case MLC_OP_CF_IF:
      MLC_RETURN_IF_ERROR(one_elem(ci, 0, "cond"));
      return mlc_graph_ret1(ci, outs, nouts, MLC_DTYPE_BOOL, NULL, 0);
    case MLC_OP_CF_ELSE:
      if (mlc_graph_arg(ci, 0)->dtype != MLC_DTYPE_BOOL) return ERR("takes cf_if's output");
      return mlc_graph_ret1(ci, outs, nouts, MLC_DTYPE_BOOL, NULL, 0);
    case MLC_OP_CF_END_IF:
      return end_if(ci, outs, nouts);
    case MLC_OP_CF_LOOP:
      return loop(ci, outs, nouts);
    case MLC_OP_CF_LOOP_END:
      return loop_end(ci, outs, nouts);
    default:
      return mlc_graph_call_error(ci, MLC_INTERNAL, "not a control flow op");
  }
}
