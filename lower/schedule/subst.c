/*
** subst.c: substituting loop variables in place, for the primitives that
** replace loops by others (split, fuse): every use of an old loop variable
** under the loop becomes an expression of the new loop variables, simplified
** with the domains of every loop and block iteration variable around it.
**
** Statements are kept (only their expression fields change), so handles of
** the loops and blocks under the rewritten loop stay valid.
*/
#include "lower/arith.h"
#include "lower/schedule/sched_int.h"

typedef struct subst_ctx {
  mlc_sch *s;
  mlc_arith *an;
  mlc_tir_subst sub;
  int failed;
} subst_ctx;

static int uses_any(const subst_ctx *c, const mlc_tir_expr *e) {
  for (int i = 0; i < c->sub.nvars; i++)
    if (mlc_tir_expr_uses_var(e, c->sub.vars[i])) return 1;
  return 0;
}

/* *|e| rewritten (copy with the substitution, then simplified) when it uses a variable. */
static void fix(subst_ctx *c, mlc_tir_expr **e) {
  if (!*e || !uses_any(c, *e)) return;
  mlc_tir_expr *r = mlc_tir_expr_copy(c->s->m, *e, &c->sub);
  if (r && (r->dtype == MLC_DTYPE_I64 || r->dtype == MLC_DTYPE_BOOL)) r = mlc_arith_simplify(c->an, c->s->m, r);
  if (!r) {
    c->failed = 1;
    return;
  }
  *e = r;
}

static void bind(subst_ctx *c, const mlc_tir_var *v, const mlc_tir_expr *mn, const mlc_tir_expr *ext) {
  if (v->dtype != MLC_DTYPE_I64 || mn->dtype != MLC_DTYPE_I64 || ext->dtype != MLC_DTYPE_I64) return;
  mlc_status st = mlc_arith_bind(c->an, v, mn, ext);
  if (st) {
    mlc_status_free(st);
    c->failed = 1;
  }
}

static void walk(subst_ctx *c, mlc_tir_stmt *st) {
  if (!st || c->failed) return;
  switch (st->kind) {
    case MLC_TIR_FOR: {
      fix(c, &st->loop.min);
      fix(c, &st->loop.extent);
      int mark = mlc_arith_mark(c->an);
      bind(c, st->loop.var, st->loop.min, st->loop.extent);
      walk(c, st->loop.body);
      mlc_arith_restore(c->an, mark);
      return;
    }
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) walk(c, st->seq.stmts[i]);
      return;
    case MLC_TIR_STORE:
      for (int i = 0; i < st->store.n; i++) fix(c, &st->store.indices[i]);
      fix(c, &st->store.value);
      return;
    case MLC_TIR_IF:
      fix(c, &st->if_.cond);
      walk(c, st->if_.then_s);
      walk(c, st->if_.else_s);
      return;
    case MLC_TIR_ALLOCATE: walk(c, st->alloc.body); return;
    case MLC_TIR_EVALUATE: fix(c, &st->eval.value); return;
    case MLC_TIR_ASSERT:
      fix(c, &st->assert_.cond);
      for (int i = 0; i < st->assert_.nvals; i++) fix(c, &st->assert_.vals[i]);
      return;
    case MLC_TIR_BLOCK: {
      for (int i = 0; i < st->block.niters; i++) {
        mlc_tir_iter_var *it = &st->block.iters[i];
        fix(c, &it->min);
        fix(c, &it->extent);
        fix(c, &it->binding);
      }
      fix(c, &st->block.predicate);
      int mark = mlc_arith_mark(c->an);
      for (int i = 0; i < st->block.niters; i++) {
        mlc_tir_iter_var *it = &st->block.iters[i];
        bind(c, it->var, it->min, it->extent);
      }
      for (int r = 0; r < st->block.nreads + st->block.nwrites; r++) {
        mlc_tir_region *rg = r < st->block.nreads ? &st->block.reads[r] : &st->block.writes[r - st->block.nreads];
        for (int d = 0; d < rg->n; d++) {
          fix(c, &rg->min[d]);
          fix(c, &rg->extent[d]);
        }
      }
      walk(c, st->block.init);
      walk(c, st->block.body);
      mlc_arith_restore(c->an, mark);
      return;
    }
  }
}

mlc_status sch_bind_loops_above(mlc_sch *s, mlc_arith *an, const mlc_tir_stmt *st) {
  mlc_tir_stmt *path[512];
  int n = sch_path(s, st, path, 512);
  if (n < 0) return mlc_make_status(MLC_INTERNAL, "schedule: statement not in the function");
  subst_ctx c = {s, an, {0}, 0};
  for (int i = 0; i < n - 1 && !c.failed; i++) {
    const mlc_tir_stmt *p = path[i];
    if (p->kind == MLC_TIR_FOR) bind(&c, p->loop.var, p->loop.min, p->loop.extent);
    if (p->kind == MLC_TIR_BLOCK)
      for (int k = 0; k < p->block.niters; k++)
        bind(&c, p->block.iters[k].var, p->block.iters[k].min, p->block.iters[k].extent);
  }
  return c.failed ? mlc_oom() : NULL;
}

mlc_status sch_subst_inplace(mlc_sch *s, mlc_arith *an, mlc_tir_stmt *st, int nvars, mlc_tir_var *const *vars,
                             mlc_tir_expr *const *values) {
  subst_ctx c = {s, an, {0}, 0};
  c.sub.nvars = nvars;
  c.sub.vars = vars;
  c.sub.values = values;
  walk(&c, st);
  return c.failed || mlc_tir_module_oom(s->m) ? mlc_oom() : NULL;
}
