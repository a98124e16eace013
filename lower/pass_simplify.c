/*
** pass_simplify.c: removes what lowering leaves that does nothing.
**
**   for i in range(c, c + 1): S     ->  S[i := c]
**   for i in range(n, n + 0): S     ->  (nothing)     also when S is empty
**   if True: S else: E              ->  S             (False: E, or nothing)
**   A[i, j] = A[i, j]               ->  (nothing)
**   sequences of nothing            ->  nothing
**
** "Nothing" is the empty sequence (printed T.evaluate(0) when alone).
** Every expression of a statement goes through mlc_arith_simplify first,
** with the enclosing loops bound to their ranges: flat indices take their
** canonical form (i * 1024 + (j - 1 + r) * 32 -> i * 1024 + j * 32 + r * 32
** - 32) and conditions the ranges decide become constants.
*/
#include "lower/arith.h"
#include "lower/tir_lower.h"
#include "lower/tir_lower_int.h"

typedef struct simp_ctx {
  mlc_tir_module *m;
  mlc_arith *an;
  int failed;
} simp_ctx;

static mlc_tir_expr *sx(simp_ctx *c, mlc_tir_expr *e) {
  if (!e || c->failed) return e;
  mlc_tir_expr *r = mlc_arith_simplify(c->an, c->m, e);
  if (!r) c->failed = 1;
  return r;
}

static mlc_tir_expr **sxs(simp_ctx *c, int n, mlc_tir_expr *const *v) {
  mlc_tir_expr **d = n ? MLC_ARENA_ARRAY(c->m->arena, (size_t)n, mlc_tir_expr *) : NULL;
  if (n && !d) c->failed = 1;
  for (int i = 0; d && i < n; i++) d[i] = sx(c, v[i]);
  return d;
}

/* |s| with its own expressions simplified (children untouched). */
static mlc_tir_stmt *own_exprs(simp_ctx *c, mlc_tir_stmt *s) {
  mlc_tir_module *m = c->m;
  mlc_tir_stmt *r = s;
  switch (s->kind) {
    case MLC_TIR_FOR:
      r = mlc_tir_for_like(m, s, sx(c, s->loop.min), sx(c, s->loop.extent), s->loop.body);
      break;
    case MLC_TIR_STORE:
      r = mlc_tir_store(m, s->store.buffer, s->store.n, sxs(c, s->store.n, s->store.indices), sx(c, s->store.value));
      break;
    case MLC_TIR_IF: r = mlc_tir_if(m, sx(c, s->if_.cond), s->if_.then_s, s->if_.else_s); break;
    case MLC_TIR_EVALUATE: r = mlc_tir_evaluate(m, sx(c, s->eval.value)); break;
    case MLC_TIR_ASSERT: {
      mlc_tir_expr *v[MLC_TIR_ASSERT_MAX_VALS];
      for (int i = 0; i < s->assert_.nvals; i++) v[i] = sx(c, s->assert_.vals[i]);
      r = mlc_tir_assert(m, sx(c, s->assert_.cond), s->assert_.op, s->assert_.msg, s->assert_.nvals, v);
      break;
    }
    case MLC_TIR_SEQ:
    case MLC_TIR_ALLOCATE:
    case MLC_TIR_BLOCK: return s;
  }
  if (!r || c->failed) {
    c->failed = 1;
    return NULL;
  }
  if (!r->origin) r->origin = s->origin;
  return r;
}

static int is_empty(const mlc_tir_stmt *s) { return s->kind == MLC_TIR_SEQ && s->seq.n == 0; }

/* Structural equality of two expressions (same variables, buffers, values). */
static int same_expr(const mlc_tir_expr *a, const mlc_tir_expr *b) {
  if (a == b) return 1;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype || a->lanes != b->lanes) return 0;
  switch (a->kind) {
    case MLC_TIR_INT_IMM: return a->int_value == b->int_value;
    case MLC_TIR_FLOAT_IMM: return 0; /* NaN != NaN: never worth it */
    case MLC_TIR_VAR_REF: return a->var == b->var;
    case MLC_TIR_BINARY: return a->bin.op == b->bin.op && same_expr(a->bin.a, b->bin.a) && same_expr(a->bin.b, b->bin.b);
    case MLC_TIR_NOT:
    case MLC_TIR_CAST:
    case MLC_TIR_BROADCAST: return same_expr(a->un.a, b->un.a);
    case MLC_TIR_RAMP: return same_expr(a->ramp.base, b->ramp.base) && same_expr(a->ramp.stride, b->ramp.stride);
    case MLC_TIR_SELECT:
      return same_expr(a->select.c, b->select.c) && same_expr(a->select.t, b->select.t) &&
             same_expr(a->select.f, b->select.f);
    case MLC_TIR_LOAD:
      if (a->load.buffer != b->load.buffer || a->load.n != b->load.n) return 0;
      for (int i = 0; i < a->load.n; i++)
        if (!same_expr(a->load.indices[i], b->load.indices[i])) return 0;
      return 1;
    case MLC_TIR_CALL:
      if (a->call.op != b->call.op || a->call.n != b->call.n) return 0;
      for (int i = 0; i < a->call.n; i++)
        if (!same_expr(a->call.args[i], b->call.args[i])) return 0;
      return 1;
    case MLC_TIR_REDUCE: return 0;
  }
  return 0;
}

static mlc_tir_stmt *simp(void *vc, mlc_tir_stmt *s) {
  simp_ctx *c = vc;
  mlc_tir_module *m = c->m;
  if (!s || c->failed) return NULL;
  s = own_exprs(c, s);
  if (!s) return NULL;
  int mark = mlc_arith_mark(c->an);
  if (s->kind == MLC_TIR_FOR) {
    mlc_status st = mlc_arith_bind(c->an, s->loop.var, s->loop.min, s->loop.extent);
    mlc_status_free(st); /* unbound: the variable stays unknown, still correct */
  }
  mlc_tir_stmt *r = mlc_tir_lw_map_children(m, s, simp, c);
  mlc_arith_restore(c->an, mark);
  if (!r) return NULL;
  switch (r->kind) {
    case MLC_TIR_FOR: {
      const mlc_tir_expr *ext = r->loop.extent;
      if (is_empty(r->loop.body) || (ext->kind == MLC_TIR_INT_IMM && ext->int_value <= 0))
        return mlc_tir_seq(m, 0, NULL);
      if (mlc_tir_is_const(ext, 1) && r->loop.kind != MLC_TIR_FOR_THREAD_BINDING) {
        mlc_tir_var *v = r->loop.var;
        mlc_tir_expr *val = r->loop.min;
        if (val->dtype != v->dtype) val = mlc_tir_cast(m, v->dtype, val);
        mlc_tir_subst sub = {1, &v, &val, 0, NULL, NULL, 0};
        mlc_tir_stmt *b = val ? mlc_tir_stmt_copy(m, r->loop.body, &sub) : NULL;
        return b ? simp(c, b) : NULL; /* the substitution may decide inner conditions */
      }
      return r;
    }
    case MLC_TIR_IF: {
      const mlc_tir_expr *cond = r->if_.cond;
      if (cond->kind == MLC_TIR_INT_IMM) {
        mlc_tir_stmt *taken = cond->int_value ? r->if_.then_s : r->if_.else_s;
        return taken ? taken : mlc_tir_seq(m, 0, NULL);
      }
      if (is_empty(r->if_.then_s) && (!r->if_.else_s || is_empty(r->if_.else_s))) return mlc_tir_seq(m, 0, NULL);
      return r;
    }
    case MLC_TIR_STORE: {
      const mlc_tir_expr *v = r->store.value;
      if (v->kind != MLC_TIR_LOAD || v->load.buffer != r->store.buffer || v->load.n != r->store.n) return r;
      for (int i = 0; i < v->load.n; i++)
        if (!same_expr(v->load.indices[i], r->store.indices[i]) || mlc_tir_expr_has_load(r->store.indices[i]))
          return r;
      return mlc_tir_seq(m, 0, NULL);
    }
    case MLC_TIR_SEQ: {
      int keep = 0;
      for (int i = 0; i < r->seq.n; i++) keep += !is_empty(r->seq.stmts[i]);
      if (keep == r->seq.n) return r;
      if (keep == 1)
        for (int i = 0; i < r->seq.n; i++)
          if (!is_empty(r->seq.stmts[i])) return r->seq.stmts[i];
      return mlc_tir_seq(m, r->seq.n, r->seq.stmts); /* the empty ones flatten away */
    }
    case MLC_TIR_ALLOCATE:
      return is_empty(r->alloc.body) ? r->alloc.body : r;
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT:
    case MLC_TIR_BLOCK: return r;
  }
  return r;
}

mlc_status mlc_tir_pass_simplify(mlc_tir_module *m, mlc_tir_func *f) {
  simp_ctx c = {m, NULL, 0};
  MLC_RETURN_IF_ERROR(mlc_arith_create(mlc_allocator_default(), &c.an));
  mlc_tir_stmt *b = simp(&c, f->body);
  mlc_arith_destroy(c.an);
  if (!b || c.failed) return mlc_oom();
  f->body = b;
  return NULL;
}
