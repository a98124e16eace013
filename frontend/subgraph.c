/*
** subgraph.c: ONNX control flow (If, Loop, Scan): subgraphs inlined into the
** function being built, unrolled where everything is known when compiling,
** else run at run time between control flow markers (graph/infer_cf.c).
**
** mlc_fe_inline_graph runs the converters on a subgraph's nodes in the
** current function, with a name scope of its own: its formal inputs bound to
** values the op supplies, its initializers (and Constant nodes) as
** constants, names it does not define captured from the enclosing scopes.
**
**   If     a constant condition inlines the taken branch only; otherwise
**          both branches are inlined between cf_if, cf_else and cf_end_if,
**          and only the taken one runs; outputs whose dims differ between
**          the branches get fresh symbols, bound when the If has run.
**   Loop   unrolled when the iteration count is known when compiling (a
**          constant trip count and conditions that fold, or, when the trip
**          count or a condition is computed at run time, the static extent
**          that the model declares for the scan outputs (dim 0), checked at
**          run time with define_dims) and at most MAX_UNROLL.  Otherwise
**          (the unrolled attempt is rolled back) the body is inlined once
**          between cf_loop and cf_loop_end and runs once per iteration;
**          scan outputs are stacked by the runtime, their leading dim a
**          fresh symbol.
**   Scan   unrolled over the static extent of the scan axis (opset 8: per
**          batch entry, then stacked); a length computed at run time (a
**          dim_param) makes it a run-time loop of that many iterations.
*/
#include <string.h>

#include "frontend/frontend_int.h"

#define MAX_RANK 16
#define MAX_UNROLL 4096

mlc_value *mlc_fe_scope_get(const mlc_fe_scope *scope, const char *name) {
  for (; scope; scope = scope->parent) {
    mlc_value *v = mlc_hash_get(scope->values, name);
    if (v) return v;
  }
  return NULL;
}

/* ---- inlining ------------------------------------------------------------- */

/* 1 when every input of |n| has a value in |sc|. */
static int ready(const mlc_fe_scope *sc, const mlc_onnx_node *n) {
  for (int i = 0; i < n->ninputs; i++)
    if (n->inputs[i][0] && !mlc_fe_scope_get(sc, n->inputs[i])) return 0;
  return 1;
}

static mlc_status inline_body(mlc_fe_ctx *cx, const mlc_onnx_graph *g, const char *what,
                              mlc_value *const *args, int nargs, mlc_value **outs, mlc_hash *vals) {
  mlc_fe_scope sc = {vals, cx->scope};
  mlc_fe_ctx base = *cx; /* the nodes' context: this graph and scope */
  base.graph = g;
  base.scope = &sc;
  if (nargs != g->ninputs)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s has %d inputs, the op gives it %d", what,
                        g->ninputs, nargs);
  for (int i = 0; i < g->ninitializers; i++) {
    const mlc_onnx_tensor *t = &g->initializers[i];
    if (t->dtype == MLC_DTYPE_STRING)
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "%s: string initializer \"%s\" not supported", what,
                          t->name);
    mlc_type ty = {t->dtype, t->rank, t->dims};
    mlc_value *v;
    MLC_RETURN_IF_ERROR(mlc_module_add_const(cx->mod, t->name, &ty, t->data, t->nbytes, &v));
    if (mlc_hash_put(vals, t->name, v)) return mlc_oom();
  }
  for (int i = 0; i < nargs; i++) {
    const mlc_onnx_value_info *vi = &g->inputs[i];
    if (!args[i])
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "%s input \"%s\" has no value", what, vi->name);
    if (vi->kind != MLC_ONNX_VALUE_TENSOR && vi->kind != MLC_ONNX_VALUE_UNKNOWN)
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "%s input \"%s\": %s values not supported", what,
                          vi->name, mlc_onnx_value_kind_name(vi->kind));
    if (vi->dtype != MLC_DTYPE_INVALID && vi->dtype != args[i]->type.dtype)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s input \"%s\" is declared %s but gets %s", what,
                          vi->name, mlc_dtype_name(vi->dtype), mlc_dtype_name(args[i]->type.dtype));
    if (mlc_hash_put(vals, vi->name, args[i])) return mlc_oom();
  }
  /* Nodes in dependency order: repeated sweeps (subgraphs are small and
  ** usually sorted, so one sweep does). */
  int nn = g->nnodes, left = nn;
  char *done = MLC_ARENA_ARRAY(cx->scratch, nn > 0 ? (size_t)nn : 1, char);
  if (!done) return mlc_oom();
  while (left > 0) {
    int progress = 0;
    for (int k = 0; k < nn; k++) {
      if (done[k] || !ready(&sc, &g->nodes[k])) continue;
      mlc_arena_mark mark = mlc_arena_get_mark(cx->scratch);
      mlc_status s = mlc_fe_convert_node(&base, vals, &g->nodes[k]);
      mlc_arena_reset(cx->scratch, mark);
      if (s) return s;
      done[k] = 1;
      left--;
      progress = 1;
    }
    if (!progress) {
      for (int k = 0; k < nn; k++) {
        const mlc_onnx_node *n = &g->nodes[k];
        if (done[k]) continue;
        for (int i = 0; i < n->ninputs; i++)
          if (n->inputs[i][0] && !mlc_fe_scope_get(&sc, n->inputs[i]))
            return mlc_fe_error(cx, MLC_INVALID_ARGUMENT,
                                "%s: input \"%s\" of its node #%d (%s) is not defined in the "
                                "subgraph or an enclosing graph (or the subgraph has a cycle)",
                                what, n->inputs[i], n->index, n->op_type);
      }
      return mlc_fe_error(cx, MLC_INTERNAL, "%s: no node can be converted", what);
    }
  }
  for (int i = 0; i < g->noutputs; i++) {
    const mlc_onnx_value_info *vi = &g->outputs[i];
    if (vi->kind != MLC_ONNX_VALUE_TENSOR && vi->kind != MLC_ONNX_VALUE_UNKNOWN)
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "%s output \"%s\": %s values not supported", what,
                          vi->name, mlc_onnx_value_kind_name(vi->kind));
    outs[i] = mlc_fe_scope_get(&sc, vi->name);
    if (!outs[i])
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s output \"%s\" is not defined", what, vi->name);
  }
  return NULL;
}

mlc_status mlc_fe_inline_graph(mlc_fe_ctx *cx, const mlc_onnx_graph *g, const char *what,
                               mlc_value *const *args, int nargs, mlc_value **outs) {
  mlc_hash vals = MLC_HASH_INIT;
  mlc_status s = inline_body(cx, g, what, args, nargs, outs, &vals);
  mlc_hash_fini(&vals);
  return s;
}

/* ---- helpers -------------------------------------------------------------- */

static const mlc_onnx_graph *graph_attr(const mlc_onnx_node *n, const char *name) {
  const mlc_onnx_attr *a = mlc_fe_attr(n, name);
  return a && a->type == MLC_ONNX_ATTR_GRAPH ? a->g : NULL;
}

/* The value of a one-element constant bool/number |v|: 1 true, 0 false, -1
** not a constant. */
static int const_truth(mlc_fe_ctx *cx, const mlc_value *v) {
  const mlc_const *c = mlc_fe_const(cx, v);
  if (!c || mlc_type_numel(&c->type) != 1) return -1;
  return mlc_fe_elem_get(c->type.dtype, c->data, 0) != 0;
}

/* |x| with a dim of extent 1 inserted at |axis|. */
static mlc_status unsqueeze(mlc_fe_ctx *cx, mlc_value *x, int axis, mlc_value **out) {
  int64_t dims[MAX_RANK + 1];
  int r = x->type.rank;
  if (r + 1 > MAX_RANK) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "rank %d is too large", r + 1);
  for (int i = 0, j = 0; i <= r; i++) dims[i] = i == axis ? 1 : x->type.dims[j++];
  return mlc_fe_reshape(cx, x, dims, r + 1, out);
}

/* The |n| values |v| (same type) stacked along a new axis |axis|. */
static mlc_status stack(mlc_fe_ctx *cx, mlc_value **v, int n, int axis, const char *what,
                        mlc_value **out) {
  for (int i = 1; i < n; i++)
    if (!mlc_type_equal(&v[i]->type, &v[0]->type))
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                          "%s changes its shape or dtype between iterations: %s %s, then %s %s", what,
                          mlc_dtype_name(v[0]->type.dtype), mlc_fe_shape_str(cx, &v[0]->type),
                          mlc_dtype_name(v[i]->type.dtype), mlc_fe_shape_str(cx, &v[i]->type));
  mlc_value **u = MLC_ARENA_ARRAY(cx->scratch, (size_t)n, mlc_value *);
  if (!u) return mlc_oom();
  for (int i = 0; i < n; i++) MLC_RETURN_IF_ERROR(unsqueeze(cx, v[i], axis, &u[i]));
  if (n == 1) {
    *out = u[0];
    return NULL;
  }
  mlc_attr a = mlc_attr_int("axis", axis);
  return mlc_fe_emit(cx, MLC_OP_CONCAT, u, n, &a, 1, out);
}

/* x[..., i, ...] along |axis| (the axis removed). */
static mlc_status take(mlc_fe_ctx *cx, mlc_value *x, int axis, int64_t i, mlc_value **out) {
  mlc_value *ix, *args[2];
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_I64, (double)i, &ix));
  args[0] = x;
  args[1] = ix;
  mlc_attr a = mlc_attr_int("axis", axis);
  return mlc_fe_emit(cx, MLC_OP_GATHER, args, 2, &a, 1, out);
}

/* ---- run-time regions ------------------------------------------------------ */

/* |v| as a bool scalar. */
static mlc_status bool_scalar(mlc_fe_ctx *cx, mlc_value *v, const char *what, mlc_value **out) {
  if (mlc_type_numel(&v->type) != 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s must have one element, its shape is %s", what,
                        mlc_fe_shape_str(cx, &v->type));
  if (v->type.rank > 0) {
    int64_t none = 0;
    MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, v, &none, 0, &v));
  }
  if (v->type.dtype != MLC_DTYPE_BOOL) {
    mlc_attr a = mlc_attr_int("dtype", MLC_DTYPE_BOOL);
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CAST, &v, 1, &a, 1, &v));
  }
  *out = v;
  return NULL;
}

/* A control flow marker (graph/infer_cf.c) with the node's origin. */
static mlc_status region(mlc_fe_ctx *cx, mlc_op op, mlc_value *const *args, int nargs, const mlc_attr *attrs,
                         int nattrs, mlc_value **outs) {
  int n = 0;
  return mlc_graph_emit_region(cx->fn, op, args, nargs, attrs, nattrs, &cx->origin, outs, &n);
}

/*
** If on a condition computed at run time: only the taken branch runs.
**   taken = cf_if(cond); then...; cf_else(taken); else...;
**   out = cf_end_if(taken, then outs, else outs)
** An output whose dims differ between the branches gets a fresh symbol for
** each differing dim, bound when the If runs.
*/
static mlc_status if_runtime(mlc_fe_ctx *cx, const mlc_onnx_graph *tg, const mlc_onnx_graph *eg,
                             mlc_value *cond, mlc_value **out, int nout) {
  if (nout < 1 || nout > MLC_MAX_OUTS)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "If with %d outputs (at most %d)", nout, MLC_MAX_OUTS);
  mlc_value **args = MLC_ARENA_ARRAY(cx->scratch, (size_t)(1 + 2 * nout), mlc_value *);
  int64_t *dims = MLC_ARENA_ARRAY(cx->scratch, (size_t)nout * MAX_RANK + 1, int64_t);
  if (!args || !dims) return mlc_oom();
  mlc_value *taken, *tok;
  MLC_RETURN_IF_ERROR(bool_scalar(cx, cond, "cond", &cond));
  MLC_RETURN_IF_ERROR(region(cx, MLC_OP_CF_IF, &cond, 1, NULL, 0, &taken));
  MLC_RETURN_IF_ERROR(mlc_fe_inline_graph(cx, tg, "then_branch", NULL, 0, args + 1));
  MLC_RETURN_IF_ERROR(region(cx, MLC_OP_CF_ELSE, &taken, 1, NULL, 0, &tok));
  MLC_RETURN_IF_ERROR(mlc_fe_inline_graph(cx, eg, "else_branch", NULL, 0, args + 1 + nout));
  args[0] = taken;
  int nd = 0;
  for (int i = 0; i < nout; i++) {
    const mlc_type *t = &args[1 + i]->type, *e = &args[1 + nout + i]->type;
    if (t->dtype != e->dtype || t->rank != e->rank)
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                          "output %d: the then branch gives %s %s, the else branch %s %s (branches of "
                          "different dtypes or ranks are not supported)",
                          i, mlc_dtype_name(t->dtype), mlc_fe_shape_str(cx, t), mlc_dtype_name(e->dtype),
                          mlc_fe_shape_str(cx, e));
    if (t->rank > MAX_RANK) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "output %d has rank %d", i, t->rank);
    for (int k = 0; k < t->rank; k++) {
      dims[nd] = t->dims[k];
      if (t->dims[k] != e->dims[k]) MLC_RETURN_IF_ERROR(mlc_module_fresh_sym(cx->mod, &dims[nd]));
      nd++;
    }
  }
  mlc_attr a = mlc_attr_ints("dims", dims, nd);
  int n = 0;
  return mlc_graph_emit_region(cx->fn, MLC_OP_CF_END_IF, args, 1 + 2 * nout, &a, 1, &cx->origin, out, &n);
}

/* ---- If ------------------------------------------------------------------- */

/* ONNX If-1,11,13,16: the taken branch, or both selected by where. */
MLC_FE_CVT(if) {
  (void)nin;
  const mlc_onnx_graph *tg = graph_attr(n, "then_branch"), *eg = graph_attr(n, "else_branch");
  if (!tg || !eg) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "needs then_branch and else_branch");
  if (tg->noutputs != nout || eg->noutputs != nout)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT,
                        "has %d outputs but then_branch gives %d and else_branch %d", nout,
                        tg->noutputs, eg->noutputs);
  mlc_value *cond = in[0];
  if (mlc_type_numel(&cond->type) != 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "cond must have one element, its shape is %s",
                        mlc_fe_shape_str(cx, &cond->type));
  int truth = const_truth(cx, cond);
  if (truth >= 0)
    return mlc_fe_inline_graph(cx, truth ? tg : eg, truth ? "then_branch" : "else_branch", NULL, 0, out);
  return if_runtime(cx, tg, eg, cond, out, nout);
}

/* ---- Loop ----------------------------------------------------------------- */

/* The static dim 0 that the graph declares for value |name|, or -1. */
static int64_t declared_dim0(const mlc_fe_ctx *cx, const char *name) {
  const mlc_onnx_graph *g = cx->graph;
  if (!g || !name[0]) return -1;
  const mlc_onnx_value_info *lists[2] = {g->outputs, g->value_infos};
  int counts[2] = {g->noutputs, g->nvalue_infos};
  for (int l = 0; l < 2; l++)
    for (int i = 0; i < counts[l]; i++) {
      const mlc_onnx_value_info *vi = &lists[l][i];
      if (strcmp(vi->name, name) == 0 && vi->has_shape && vi->rank >= 1 && vi->dims[0].value >= 0)
        return vi->dims[0].value;
    }
  return -1;
}

/* a && b, with NULL standing for true. */
static mlc_status and_opt(mlc_fe_ctx *cx, mlc_value *a, mlc_value *b, mlc_value **out) {
  if (!a || !b) {
    *out = a ? a : b;
    return NULL;
  }
  return mlc_fe_binary(cx, MLC_OP_LOGICAL_AND, a, b, out);
}

/*
** Makes every output depend on a run-time check that the iteration count
** |count| (int64 scalar) is |n|: t = define_dims([count], dims=[n]) fails at
** run time otherwise; each output goes through dyn_reshape(x, t).
*/
static mlc_status guard(mlc_fe_ctx *cx, mlc_value *count, int64_t n, mlc_value **out, int nout) {
  int64_t one = 1;
  mlc_value *v, *t;
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, count, &one, 1, &v));
  mlc_attr a[2] = {mlc_attr_ints("dims", &n, 1), mlc_attr_int("offset", 0)};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_DEFINE_DIMS, &v, 1, a, 2, &t));
  for (int i = 0; i < nout; i++) {
    if (!out[i]) continue;
    mlc_value *da[2] = {out[i], t};
    mlc_attr s = mlc_attr_ints("shape", out[i]->type.dims, out[i]->type.rank);
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_DYN_RESHAPE, da, 2, &s, 1, &out[i]));
  }
  return NULL;
}

/* ONNX Loop-1,11,13,16, unrolled; *|need_rt| = 1 (nothing else done that
** matters: the caller rolls back) when the iteration count is not known
** when compiling or is too large to unroll. */
static mlc_status loop_unrolled(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *const *in, int nin,
                                mlc_value **out, int nout, int *need_rt) {
  const mlc_onnx_graph *body = graph_attr(n, "body");
  if (!body) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "needs a body");
  if (nin < 2) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "takes at least 2 inputs, got %d", nin);
  int ncarry = nin - 2;
  int nscan = body->noutputs - 1 - ncarry;
  if (ncarry < 0 || nscan < 0 || body->ninputs != ncarry + 2 || nout != ncarry + nscan)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT,
                        "%d inputs and %d outputs do not fit a body of %d inputs and %d outputs", nin,
                        nout, body->ninputs, body->noutputs);
  mlc_value *m = in[0], *cond = NULL;
  int64_t mconst = -1;
  if (m) {
    if (mlc_type_numel(&m->type) != 1 || !mlc_dtype_is_int(m->type.dtype))
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "M must be one integer, it is %s %s",
                          mlc_dtype_name(m->type.dtype), mlc_fe_shape_str(cx, &m->type));
    const mlc_const *c = mlc_fe_const(cx, m);
    if (c) {
      double d = mlc_fe_elem_get(c->type.dtype, c->data, 0);
      mconst = d < 0 ? 0 : d > 1e18 ? (int64_t)1e18 : (int64_t)d;
      m = NULL;
    } else {
      int64_t none = 0;
      if (m->type.rank > 0) MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, m, &none, 0, &m));
    }
  }
  /* M absent and not constant: m == NULL, mconst < 0 (unbounded). */
  if (in[1]) MLC_RETURN_IF_ERROR(bool_scalar(cx, in[1], "cond", &cond));
  else MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_BOOL, 1, &cond));
  int64_t bound = -1; /* the iteration count the scan outputs declare */
  for (int j = 0; j < nscan && bound < 0; j++) bound = declared_dim0(cx, n->outputs[ncarry + j]);

  int nb = body->ninputs;
  mlc_value **args = MLC_ARENA_ARRAY(cx->scratch, (size_t)nb, mlc_value *);
  mlc_value **res = MLC_ARENA_ARRAY(cx->scratch, (size_t)body->noutputs, mlc_value *);
  mlc_value ***scans = MLC_ARENA_ARRAY(cx->scratch, nscan > 0 ? (size_t)nscan : 1, mlc_value **);
  if (!args || !res || !scans) return mlc_oom();
  for (int j = 0; j < ncarry; j++) {
    if (!in[2 + j])
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "loop-carried input %d is empty", 2 + j);
    args[2 + j] = in[2 + j];
  }
  /* With a condition computed at run time the body is unrolled `bound`
  ** times; |alive| says whether the loop still runs (NULL: surely), |count|
  ** adds up the iterations that run (beyond the |fixed| ones that surely
  ** do), the bound+1st counted too, for the run-time check. */
  mlc_value *alive = NULL, *count = NULL;
  int64_t fixed = 0, it = 0, cap = 0;
  int guarded = 0;
  for (;;) {
    /* keep = cond && it < M */
    mlc_value *keep = cond;
    if (mconst >= 0 && it >= mconst) break;
    if (m) {
      mlc_value *iv, *lt;
      MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, m->type.dtype, (double)it, &iv));
      MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_LESS, iv, m, &lt));
      MLC_RETURN_IF_ERROR(and_opt(cx, keep, lt, &keep));
    }
    int truth = const_truth(cx, keep);
    if (truth == 0) break;
    if (truth < 0) {
      if (bound < 0) {
        *need_rt = 1;
        return NULL;
      }
      mlc_value *kb;
      MLC_RETURN_IF_ERROR(bool_scalar(cx, keep, "cond", &kb));
      MLC_RETURN_IF_ERROR(and_opt(cx, alive, kb, &alive));
      guarded = 1;
    }
    if (alive) {
      mlc_value *c;
      mlc_attr a = mlc_attr_int("dtype", MLC_DTYPE_I64);
      MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CAST, &alive, 1, &a, 1, &c));
      if (count) MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, count, c, &count));
      else count = c;
    } else {
      fixed++;
    }
    if (guarded && it == bound) break;
    if (it >= MAX_UNROLL) {
      *need_rt = 1;
      return NULL;
    }
    MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_I64, (double)it, &args[0]));
    args[1] = cond;
    MLC_RETURN_IF_ERROR(mlc_fe_inline_graph(cx, body, "body", args, nb, res));
    MLC_RETURN_IF_ERROR(bool_scalar(cx, res[0], "the body's condition output", &cond));
    for (int j = 0; j < ncarry; j++) args[2 + j] = res[1 + j];
    if (it >= cap) {
      int64_t ncap = cap ? cap * 2 : 16;
      for (int j = 0; j < nscan; j++) {
        mlc_value **grown = MLC_ARENA_ARRAY(cx->scratch, (size_t)ncap, mlc_value *);
        if (!grown) return mlc_oom();
        if (cap) memcpy(grown, scans[j], (size_t)cap * sizeof *grown);
        scans[j] = grown;
      }
      cap = ncap;
    }
    for (int j = 0; j < nscan; j++) scans[j][it] = res[1 + ncarry + j];
    it++;
  }
  if (guarded && it != bound)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT,
                        "the scan outputs declare %lld iterations but the loop runs at most %lld",
                        (long long)bound, (long long)it);
  for (int j = 0; j < ncarry; j++) out[j] = args[2 + j];
  for (int j = 0; j < nscan; j++) {
    if (it == 0)
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "Loop with scan outputs runs no iteration");
    MLC_RETURN_IF_ERROR(stack(cx, scans[j], (int)it, 0, "a scan output of the body", &out[ncarry + j]));
  }
  if (guarded) {
    mlc_value *f;
    MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_I64, (double)fixed, &f));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, count, f, &count));
    MLC_RETURN_IF_ERROR(guard(cx, count, bound, out, nout));
  }
  return NULL;
}

/*
** A Loop run at run time:
**   iter, cond_in, carried = cf_loop(M, cond, init)
**   ... the body ...
**   finals, stacked = cf_loop_end(M, cond_out, carried_out, scans)
** M absent: no bound (10^18); cond absent: true.  The loop-carried values
** keep their types across iterations; each scan output's leading dim is a
** fresh symbol, the number of iterations.
*/
static mlc_status loop_runtime(mlc_fe_ctx *cx, const mlc_onnx_graph *body, mlc_value *const *in, int nin,
                               mlc_value **out, int nout) {
  int ncarry = nin - 2, nscan = nout - ncarry, nb = body->ninputs;
  if (nin > MLC_MAX_OUTS || nout + 2 > MLC_MAX_OUTS)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "Loop with %d inputs and %d outputs (at most %d values)", nin, nout,
                        MLC_MAX_OUTS - 2);
  mlc_value *m = in[0], *cond = in[1];
  if (m) {
    int64_t none = 0;
    if (m->type.rank > 0) MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, m, &none, 0, &m));
    if (m->type.dtype != MLC_DTYPE_I64) {
      mlc_attr a = mlc_attr_int("dtype", MLC_DTYPE_I64);
      MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CAST, &m, 1, &a, 1, &m));
    }
  } else {
    MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_I64, 1e18, &m));
  }
  if (cond) MLC_RETURN_IF_ERROR(bool_scalar(cx, cond, "cond", &cond));
  else MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_BOOL, 1, &cond));
  mlc_value *args[MLC_MAX_OUTS], *vals[MLC_MAX_OUTS], *res[MLC_MAX_OUTS + 1];
  args[0] = m;
  args[1] = cond;
  for (int j = 0; j < ncarry; j++) args[2 + j] = in[2 + j];
  if (body->noutputs > MLC_MAX_OUTS) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "the body has too many outputs");
  MLC_RETURN_IF_ERROR(region(cx, MLC_OP_CF_LOOP, args, nin, NULL, 0, vals));
  MLC_RETURN_IF_ERROR(mlc_fe_inline_graph(cx, body, "body", vals, nb, res));
  args[0] = m;
  MLC_RETURN_IF_ERROR(bool_scalar(cx, res[0], "the body's condition output", &args[1]));
  int64_t syms[MLC_MAX_OUTS];
  for (int j = 0; j < ncarry; j++) {
    if (!mlc_type_equal(&res[1 + j]->type, &vals[2 + j]->type))
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                          "loop-carried value %d changes from %s %s to %s %s in an iteration (a loop run "
                          "at run time keeps the types of its carried values)",
                          j, mlc_dtype_name(vals[2 + j]->type.dtype), mlc_fe_shape_str(cx, &vals[2 + j]->type),
                          mlc_dtype_name(res[1 + j]->type.dtype), mlc_fe_shape_str(cx, &res[1 + j]->type));
    args[2 + j] = res[1 + j];
  }
  for (int j = 0; j < nscan; j++) {
    args[2 + ncarry + j] = res[1 + ncarry + j];
    MLC_RETURN_IF_ERROR(mlc_module_fresh_sym(cx->mod, &syms[j]));
  }
  mlc_attr a[2] = {mlc_attr_int("ncarry", ncarry), mlc_attr_ints("dims", syms, nscan)};
  int n = 0;
  return mlc_graph_emit_region(cx->fn, MLC_OP_CF_LOOP_END, args, 2 + ncarry + nscan, a, nscan ? 2 : 1,
                               &cx->origin, out, &n);
}

/* The state of |f| and |m| before a try that may be rolled back. */
typedef struct fe_mark {
  int nblocks, last_n, nsyms;
} fe_mark;

static fe_mark mark_get(const mlc_fe_ctx *cx) {
  const mlc_func *f = cx->fn;
  fe_mark k = {f->nblocks, f->nblocks > 0 ? f->blocks[f->nblocks - 1].n : 0, cx->mod->nsyms};
  return k;
}

/* Drops the bindings and symbols made since |k| (their values and constants
** stay unused in the module: dce drops the constants). */
static void mark_rollback(mlc_fe_ctx *cx, fe_mark k) {
  mlc_func *f = cx->fn;
  for (int bi = k.nblocks; bi < f->nblocks; bi++) f->blocks[bi].n = 0;
  if (k.nblocks > 0) f->blocks[k.nblocks - 1].n = k.last_n;
  mlc_func_compact(f);
  cx->mod->nsyms = k.nsyms;
}

/* ONNX Loop-1,11,13,16: unrolled when the iteration count is known when
** compiling (and small enough), else run at run time. */
MLC_FE_CVT(loop) {
  fe_mark k = mark_get(cx);
  int need_rt = 0;
  MLC_RETURN_IF_ERROR(loop_unrolled(cx, n, in, nin, out, nout, &need_rt));
  if (!need_rt) return NULL;
  mark_rollback(cx, k);
  return loop_runtime(cx, graph_attr(n, "body"), in, nin, out, nout);
}

/* ---- Scan ----------------------------------------------------------------- */

/* The extent of dim |axis| of |x| as an int64 scalar (computed at run time
** when it is a symbol). */
static mlc_status dim_value(mlc_fe_ctx *cx, mlc_value *x, int axis, mlc_value **out) {
  mlc_value *sh;
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_SHAPE_OF, x, &sh));
  return take(cx, sh, 0, axis, out);
}

/*
** A Scan whose length is known only at run time, as a run-time loop of
** |len| iterations (the first scan input's extent): iteration t reads
** element t (or len - 1 - t, reversed) of each scan input along its axis;
** the scan outputs are stacked by the loop along axis 0, then moved to
** their scan_output_axes.  Reversed scan outputs are not supported here.
*/
static mlc_status scan_runtime(mlc_fe_ctx *cx, const mlc_onnx_graph *body, mlc_value *const *state,
                               int nstate, mlc_value *const *xs, int nx, const int *ax, const int64_t *in_dirs,
                               const int64_t *out_axes, const int64_t *out_dirs, mlc_value **out, int nout) {
  int nscan = nout - nstate;
  if (nstate + 2 > MLC_MAX_OUTS || nout > MLC_MAX_OUTS || nx > MLC_MAX_OUTS)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "Scan with %d state values and %d outputs (at most %d)", nstate,
                        nout, MLC_MAX_OUTS - 2);
  for (int j = 0; j < nscan; j++)
    if (out_dirs && out_dirs[j])
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                          "scan output %d is written in reverse, which a Scan whose length is computed at "
                          "run time does not support",
                          j);
  mlc_value *len, *yes, *one, *last = NULL;
  MLC_RETURN_IF_ERROR(dim_value(cx, xs[0], ax[0], &len));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_BOOL, 1, &yes));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_I64, 1, &one));
  for (int j = 0; j < nx; j++)
    if (in_dirs && in_dirs[j] && !last) MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, len, one, &last));
  /* every scan input has the same length: checked at run time by the
  ** define_dims of each length against the first's symbol */
  for (int j = 1; j < nx; j++) {
    int64_t d = xs[j]->type.dims[ax[j]], d0 = xs[0]->type.dims[ax[0]];
    if (d != d0 && !MLC_DIM_IS_SYM(d) && !MLC_DIM_IS_SYM(d0))
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "scan inputs have lengths %lld and %lld", (long long)d0,
                          (long long)d);
    if (d != d0)
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                          "scan inputs 0 and %d have lengths that may differ (%s and %s)", j,
                          mlc_fe_shape_str(cx, &xs[0]->type), mlc_fe_shape_str(cx, &xs[j]->type));
  }
  mlc_value *args[MLC_MAX_OUTS], *vals[MLC_MAX_OUTS], *bargs[2 * MLC_MAX_OUTS], *res[2 * MLC_MAX_OUTS];
  if (body->noutputs > 2 * MLC_MAX_OUTS || nstate + nx > 2 * MLC_MAX_OUTS)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "the body has too many inputs or outputs");
  args[0] = len;
  args[1] = yes;
  for (int j = 0; j < nstate; j++) args[2 + j] = state[j];
  MLC_RETURN_IF_ERROR(region(cx, MLC_OP_CF_LOOP, args, 2 + nstate, NULL, 0, vals));
  for (int j = 0; j < nstate; j++) bargs[j] = vals[2 + j];
  for (int j = 0; j < nx; j++) {
    mlc_value *idx = vals[0], *args2[2];
    if (in_dirs && in_dirs[j]) MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, last, vals[0], &idx));
    args2[0] = xs[j];
    args2[1] = idx;
    mlc_attr a = mlc_attr_int("axis", ax[j]);
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_GATHER, args2, 2, &a, 1, &bargs[nstate + j]));
  }
  MLC_RETURN_IF_ERROR(mlc_fe_inline_graph(cx, body, "body", bargs, nstate + nx, res));
  int64_t syms[MLC_MAX_OUTS];
  args[0] = len;
  args[1] = yes;
  for (int j = 0; j < nstate; j++) {
    if (!mlc_type_equal(&res[j]->type, &vals[2 + j]->type))
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                          "state value %d changes from %s to %s in an iteration (a Scan run at run time "
                          "keeps the types of its state)",
                          j, mlc_fe_shape_str(cx, &vals[2 + j]->type), mlc_fe_shape_str(cx, &res[j]->type));
    args[2 + j] = res[j];
  }
  for (int j = 0; j < nscan; j++) {
    args[2 + nstate + j] = res[nstate + j];
    MLC_RETURN_IF_ERROR(mlc_module_fresh_sym(cx->mod, &syms[j]));
  }
  mlc_attr a[2] = {mlc_attr_int("ncarry", nstate), mlc_attr_ints("dims", syms, nscan)};
  int n = 0;
  MLC_RETURN_IF_ERROR(mlc_graph_emit_region(cx->fn, MLC_OP_CF_LOOP_END, args, 2 + nstate + nscan, a,
                                            nscan ? 2 : 1, &cx->origin, out, &n));
  for (int j = 0; j < nscan; j++) {
    int axis, r = out[nstate + j]->type.rank;
    MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, out_axes ? out_axes[j] : 0, r, "scan_output_axes", &axis));
    if (axis == 0) continue;
    int64_t perm[MAX_RANK];
    for (int k = 0, q = 1; k < r; k++) perm[k] = k == axis ? 0 : q++;
    mlc_attr pa = mlc_attr_ints("perm", perm, r);
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_TRANSPOSE, &out[nstate + j], 1, &pa, 1, &out[nstate + j]));
  }
  return NULL;
}

/* One Scan-9 pass: |state| (nstate), |xs| (nx scan inputs) -> out (nstate
** final states, then the scan outputs). */
static mlc_status scan_run(mlc_fe_ctx *cx, const mlc_onnx_graph *body, mlc_value *const *state,
                           int nstate, mlc_value *const *xs, int nx, const int64_t *in_axes,
                           const int64_t *in_dirs, const int64_t *out_axes, const int64_t *out_dirs,
                           mlc_value **out, int nout) {
  int nscan = nout - nstate;
  if (nscan < 0 || body->ninputs != nstate + nx || body->noutputs != nout)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "the body has %d inputs and %d outputs, expected %d and %d",
                        body->ninputs, body->noutputs, nstate + nx, nout);
  int64_t len = -1;
  int dynamic = 0;
  int *ax = MLC_ARENA_ARRAY(cx->scratch, (size_t)(nx > 0 ? nx : 1), int);
  if (!ax) return mlc_oom();
  for (int j = 0; j < nx; j++) {
    MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, in_axes ? in_axes[j] : 0, xs[j]->type.rank, "scan_input_axes", &ax[j]));
    int64_t d = xs[j]->type.dims[ax[j]];
    if (MLC_DIM_IS_SYM(d)) dynamic = 1;
    if (dynamic) continue;
    if (len >= 0 && d != len)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "scan inputs have lengths %lld and %lld",
                          (long long)len, (long long)d);
    len = d;
  }
  if (nx > 0 && (dynamic || len > MAX_UNROLL))
    return scan_runtime(cx, body, state, nstate, xs, nx, ax, in_dirs, out_axes, out_dirs, out, nout);
  if (len < 0) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "needs at least one scan input");
  if (len > MAX_UNROLL)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "scan length %lld is too long to unroll (at most %d)",
                        (long long)len, MAX_UNROLL);
  if (len == 0 && nscan > 0)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "Scan of length 0 with scan outputs");
  mlc_value **args = MLC_ARENA_ARRAY(cx->scratch, (size_t)(nstate + nx), mlc_value *);
  mlc_value **res = MLC_ARENA_ARRAY(cx->scratch, (size_t)(nout > 0 ? nout : 1), mlc_value *);
  mlc_value **ys = MLC_ARENA_ARRAY(cx->scratch, (size_t)(nscan * len + 1), mlc_value *);
  if (!args || !res || !ys) return mlc_oom();
  for (int j = 0; j < nstate; j++) args[j] = state[j];
  for (int64_t t = 0; t < len; t++) {
    for (int j = 0; j < nx; j++) {
      int64_t i = in_dirs && in_dirs[j] ? len - 1 - t : t;
      MLC_RETURN_IF_ERROR(take(cx, xs[j], ax[j], i, &args[nstate + j]));
    }
    MLC_RETURN_IF_ERROR(mlc_fe_inline_graph(cx, body, "body", args, nstate + nx, res));
    for (int j = 0; j < nstate; j++) args[j] = res[j];
    for (int j = 0; j < nscan; j++) {
      int64_t pos = out_dirs && out_dirs[j] ? len - 1 - t : t;
      ys[j * len + pos] = res[nstate + j];
    }
  }
  for (int j = 0; j < nstate; j++) out[j] = args[j];
  for (int j = 0; j < nscan; j++) {
    int axis;
    MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, out_axes ? out_axes[j] : 0, ys[j * len]->type.rank + 1,
                                    "scan_output_axes", &axis));
    MLC_RETURN_IF_ERROR(stack(cx, &ys[j * len], (int)len, axis, "a scan output of the body", &out[nstate + j]));
  }
  return NULL;
}

/* An INTS attribute with |want| entries, or NULL when absent. */
static mlc_status ints_attr(mlc_fe_ctx *cx, const mlc_onnx_node *n, const char *name, int want,
                            const int64_t **out) {
  int k = mlc_fe_attr_ints(n, name, out);
  if (k < 0) {
    *out = NULL;
    return NULL;
  }
  if (k != want)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s has %d entries, expected %d", name, k, want);
  return NULL;
}

/* ONNX Scan-9,11,16 */
MLC_FE_CVT(scan_v9) {
  const mlc_onnx_graph *body = graph_attr(n, "body");
  if (!body) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "needs a body");
  int64_t m = mlc_fe_attr_int(n, "num_scan_inputs", -1);
  if (m < 1 || m > nin)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "num_scan_inputs %lld for %d inputs", (long long)m, nin);
  int nx = (int)m, nstate = nin - nx, nscan = nout - nstate;
  if (nscan < 0)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%d outputs for %d state variables", nout, nstate);
  const int64_t *ia, *id, *oa, *od;
  MLC_RETURN_IF_ERROR(ints_attr(cx, n, "scan_input_axes", nx, &ia));
  MLC_RETURN_IF_ERROR(ints_attr(cx, n, "scan_input_directions", nx, &id));
  MLC_RETURN_IF_ERROR(ints_attr(cx, n, "scan_output_axes", nscan, &oa));
  MLC_RETURN_IF_ERROR(ints_attr(cx, n, "scan_output_directions", nscan, &od));
  for (int i = 0; i < nin; i++)
    if (!in[i]) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "input %d is empty", i);
  return scan_run(cx, body, in, nstate, in + nstate, nx, ia, id, oa, od, out, nout);
}

/* ONNX Scan-8: a batch axis 0 on every input and output; per batch entry a
** Scan-9 over axis 1, the results stacked. */
MLC_FE_CVT(scan_v8) {
  const mlc_onnx_graph *body = graph_attr(n, "body");
  if (!body) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "needs a body");
  if (nin < 2) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "takes at least 2 inputs, got %d", nin);
  if (in[0])
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "sequence_lens is not supported (scans run the full length)");
  int64_t m = mlc_fe_attr_int(n, "num_scan_inputs", -1);
  int nv = nin - 1;
  if (m < 1 || m > nv)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "num_scan_inputs %lld for %d inputs", (long long)m, nv);
  int nx = (int)m, nstate = nv - nx;
  const int64_t *dirs;
  MLC_RETURN_IF_ERROR(ints_attr(cx, n, "directions", nx, &dirs));
  int64_t batch = -1;
  for (int i = 1; i < nin; i++) {
    if (!in[i]) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "input %d is empty", i);
    if (in[i]->type.rank < 1 + (i > nstate ? 1 : 0))
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "input %d lacks the batch axis", i);
    int64_t b = in[i]->type.dims[0];
    if (MLC_DIM_IS_SYM(b))
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "a batch size computed at run time is not supported");
    if (batch >= 0 && b != batch)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "inputs have batch sizes %lld and %lld",
                          (long long)batch, (long long)b);
    batch = b;
  }
  if (batch < 1) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "batch size 0 is not supported");
  if (batch > MAX_UNROLL) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "batch size too large");
  mlc_value **vs = MLC_ARENA_ARRAY(cx->scratch, (size_t)nv, mlc_value *);
  mlc_value **per = MLC_ARENA_ARRAY(cx->scratch, (size_t)(batch * (nout > 0 ? nout : 1)), mlc_value *);
  mlc_value **col = MLC_ARENA_ARRAY(cx->scratch, (size_t)batch, mlc_value *);
  if (!vs || !per || !col) return mlc_oom();
  for (int64_t b = 0; b < batch; b++) {
    for (int i = 0; i < nv; i++) MLC_RETURN_IF_ERROR(take(cx, in[1 + i], 0, b, &vs[i]));
    MLC_RETURN_IF_ERROR(scan_run(cx, body, vs, nstate, vs + nstate, nx, NULL, dirs, NULL, NULL,
                                 per + b * nout, nout));
  }
  for (int k = 0; k < nout; k++) {
    for (int64_t b = 0; b < batch; b++) col[b] = per[b * nout + k];
    MLC_RETURN_IF_ERROR(stack(cx, col, (int)batch, 0, "an output of the body", &out[k]));
  }
  return NULL;
}
