/*
** pass_lower_blocks.c: blocks -> plain statements (see tir_lower.h).
**
**   for k0, k1 in T.grid(..):           Y[i, j] = 0
**       with T.block("Y"):        ->    for k0, k1 in T.grid(..):
**           vk = T.axis.reduce(.., k0*4 + k1)   Y[i, j] = Y[i, j] + A[i, k0*4 + k1]
**           with T.init(): Y[vi, vj] = 0
**           Y[vi, vj] = Y[vi, vj] + A[vi, vk]
**
** The walk keeps the stack of enclosing loops and where the current
** perfect nest starts (the loops whose bodies lead to the current node
** with nothing in between).  A block's body is lowered first (inner
** blocks), then its iteration variables are substituted by their
** bindings.  An init that can be hoisted is handed up as "pending" to the
** loop it must precede; that loop returns `init; loop`.
*/
#include <string.h>

#include "base/vec.h"
#include "lower/tir_lower.h"
#include "lower/tir_lower_int.h"

typedef struct lb_ctx {
  mlc_tir_module *m;
  const mlc_tir_func *f;
  MLC_VEC(const mlc_tir_stmt *) loops; /* enclosing loops, innermost last */
  mlc_tir_stmt *pending;               /* an init waiting for its loop */
  const mlc_tir_stmt *pending_loop;    /* the (original) loop it goes before */
  mlc_status err;
} lb_ctx;

static mlc_tir_stmt *lower(lb_ctx *c, mlc_tir_stmt *s, size_t perfect_from);

static mlc_tir_stmt *fail(lb_ctx *c, mlc_status st) {
  if (!c->err) c->err = st;
  else mlc_status_free(st);
  return NULL;
}

/* Children that are not perfectly nested in the current loops. */
static mlc_tir_stmt *lower_child(void *vc, mlc_tir_stmt *s) {
  lb_ctx *c = vc;
  return lower(c, s, c->loops.len);
}

/* |e| converted to |t| when it has another dtype. */
static mlc_tir_expr *as(mlc_tir_module *m, mlc_tir_expr *e, mlc_dtype t) {
  return e && e->dtype != t ? mlc_tir_cast(m, t, e) : e;
}

/*
** The number k of innermost loops of the perfect nest around block |s|
** that the init goes before: they are exactly the loops the reduce
** bindings use, and no spatial binding nor the predicate uses them.
** -1 when the init cannot be hoisted.
*/
static int hoist_depth(lb_ctx *c, const mlc_tir_stmt *s, size_t perfect_from) {
  const mlc_tir_iter_var *it = s->block.iters;
  int n = s->block.niters;
  size_t top = c->loops.len;
  /* the loop variables the reduce bindings use */
  int nused = 0, k = 0;
  for (size_t l = 0; l < top; l++) {
    mlc_tir_var *v = c->loops.data[l]->loop.var;
    for (int i = 0; i < n; i++)
      if (it[i].kind == MLC_TIR_ITER_REDUCE && mlc_tir_expr_uses_var(it[i].binding, v)) {
        nused++;
        break;
      }
  }
  if (nused == 0) return -1; /* bindings without loops: keep the guarded form (it folds) */
  for (size_t l = top; l-- > perfect_from;) {
    mlc_tir_var *v = c->loops.data[l]->loop.var;
    int used = 0;
    for (int i = 0; i < n && !used; i++)
      if (it[i].kind == MLC_TIR_ITER_REDUCE && mlc_tir_expr_uses_var(it[i].binding, v)) used = 1;
    if (!used) break;
    for (int i = 0; i < n; i++)
      if (it[i].kind == MLC_TIR_ITER_SPATIAL && mlc_tir_expr_uses_var(it[i].binding, v)) return -1;
    if (s->block.predicate && mlc_tir_expr_uses_var(s->block.predicate, v)) return -1;
    k++;
  }
  return k == nused ? k : -1;
}

static mlc_tir_stmt *lower_block(lb_ctx *c, mlc_tir_stmt *s, size_t perfect_from) {
  mlc_tir_module *m = c->m;
  int n = s->block.niters;
  size_t top = c->loops.len;
  mlc_tir_stmt *body = lower(c, s->block.body, top);
  mlc_tir_stmt *init = s->block.init ? lower(c, s->block.init, top) : NULL;
  if (!body || (s->block.init && !init)) return NULL;
  mlc_tir_var **vars = n ? MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_tir_var *) : NULL;
  mlc_tir_expr **vals = n ? MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_tir_expr *) : NULL;
  mlc_tir_expr **init_vals = n ? MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_tir_expr *) : NULL;
  if (n && (!vars || !vals || !init_vals)) return NULL;
  int nreduce = 0;
  for (int i = 0; i < n; i++) {
    const mlc_tir_iter_var *it = &s->block.iters[i];
    if (!it->binding)
      return fail(c, mlc_make_status(MLC_INVALID_ARGUMENT, "lower_blocks: block \"%s\": iter var %s has no binding",
                                     s->block.name, it->var->name));
    vars[i] = it->var;
    vals[i] = as(m, it->binding, it->var->dtype);
    init_vals[i] = it->kind == MLC_TIR_ITER_REDUCE ? as(m, it->min, it->var->dtype) : vals[i];
    if (!vals[i] || !init_vals[i]) return NULL;
    nreduce += it->kind == MLC_TIR_ITER_REDUCE;
  }
  mlc_tir_subst sub = {n, vars, vals, 0, NULL, NULL, 0};
  body = n ? mlc_tir_stmt_copy(m, body, &sub) : body;
  mlc_tir_expr *pred = s->block.predicate ? mlc_tir_expr_copy(m, s->block.predicate, &sub) : NULL;
  if (!body || (s->block.predicate && !pred)) return NULL;
  if (init) {
    int k = nreduce ? hoist_depth(c, s, perfect_from) : -1;
    if (k > 0) {
      mlc_tir_subst isub = {n, vars, init_vals, 0, NULL, NULL, 0};
      init = mlc_tir_stmt_copy(m, init, &isub);
      if (init && pred) init = mlc_tir_if(m, pred, init, NULL);
      if (!init) return NULL;
      if (c->pending)
        return fail(c, mlc_make_status(MLC_INTERNAL, "lower_blocks: block \"%s\": two inits pending", s->block.name));
      c->pending = init;
      c->pending_loop = c->loops.data[top - (size_t)k];
    } else {
      /* guarded: every reduce binding at its minimum */
      mlc_tir_expr *first = NULL;
      for (int i = 0; i < n; i++) {
        const mlc_tir_iter_var *it = &s->block.iters[i];
        if (it->kind != MLC_TIR_ITER_REDUCE) continue;
        mlc_tir_expr *mn = mlc_tir_expr_copy(m, it->min, &sub);
        mlc_tir_expr *eq = mlc_tir_binary(m, MLC_TIR_EQ, vals[i], as(m, mn, vals[i]->dtype));
        first = first ? mlc_tir_binary(m, MLC_TIR_AND, first, eq) : eq;
        if (!first) return NULL;
      }
      init = n ? mlc_tir_stmt_copy(m, init, &sub) : init;
      if (init && first) init = mlc_tir_if(m, first, init, NULL);
      body = init ? mlc_tir_seq2(m, init, body) : NULL;
    }
  }
  if (body && pred) body = mlc_tir_if(m, pred, body, NULL);
  if (body && !body->origin) body->origin = s->origin;
  return body;
}

static mlc_tir_stmt *lower(lb_ctx *c, mlc_tir_stmt *s, size_t perfect_from) {
  if (!s || c->err) return NULL;
  switch (s->kind) {
    case MLC_TIR_FOR: {
      if (mlc_vec_push(&c->loops, s)) return fail(c, mlc_oom());
      mlc_tir_stmt *b = lower(c, s->loop.body, perfect_from);
      c->loops.len--;
      if (!b) return NULL;
      mlc_tir_stmt *r = s;
      if (b != s->loop.body) {
        r = mlc_tir_for_like(c->m, s, s->loop.min, s->loop.extent, b);
        if (r) r->origin = s->origin;
      }
      if (r && c->pending && c->pending_loop == s) {
        r = mlc_tir_seq2(c->m, c->pending, r);
        c->pending = NULL;
        c->pending_loop = NULL;
      }
      return r;
    }
    case MLC_TIR_BLOCK: return lower_block(c, s, perfect_from);
    case MLC_TIR_SEQ:
    case MLC_TIR_IF:
    case MLC_TIR_ALLOCATE:
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return mlc_tir_lw_map_children(c->m, s, lower_child, c);
  }
  return s;
}

mlc_status mlc_tir_pass_lower_blocks(mlc_tir_module *m, mlc_tir_func *f) {
  lb_ctx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  c.f = f;
  mlc_tir_stmt *b = lower(&c, f->body, 0);
  mlc_vec_free(&c.loops);
  if (c.err) return c.err;
  if (!b) return mlc_oom();
  if (c.pending)
    return mlc_make_status(MLC_INTERNAL, "lower_blocks: an init found no loop to precede");
  f->body = b;
  return NULL;
}
