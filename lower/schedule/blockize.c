/*
** blockize.c: b = sch.blockize(target=l) -- the subtree under loop l, a
** nest of loops around one block, becomes an outer block NAME_o.
**
**   for i, j0, k, j1 in T.grid(64, 4, 64, 16):     for i, j0, k in T.grid(64, 4, 64):
**     with T.block("Y"):                              with T.block("Y_o"):
**       vi = T.axis.spatial(64, i)                      vi_o = T.axis.spatial(64, i)
**       vj = T.axis.spatial(64, j0 * 16 + j1)   ->      vj_o = T.axis.spatial(4, j0)
**       vk = T.axis.reduce(64, k)                       vk_o = T.axis.reduce(64, k)
**       ...                                             with T.init(): (the tile's init)
**                                                       for j1 in range(16):
**                                                         with T.block("Y"):
**                                                           vj_i = T.axis.spatial(16, j1)
**                                                           Y[vi_o, vj_o * 16 + vj_i] = ...
**
** Each binding of the block is divided into the part of the loops outside
** l and the part of the loops from l down: binding = outer * E + inner,
** where inner is a mixed-radix sum of inner loop variables (coefficients 1,
** e0, e0*e1, ...) ranging over [0, E) and every outer term is a multiple of
** E (otherwise NOT_AFFINE).  The outer block gets v_o over [0, extent / E)
** bound to outer, the inner block v_i over [0, E) bound to inner, and the
** block's body reads v as min + v_o * E + v_i.  A variable with no inner
** part (E = 1) is only in the outer block, one with no outer part only in
** the inner block.  The outer variables keep the kind (spatial or reduce)
** of the original.
**
** Reductions (as TVM): when some reduce variable is bound outside l, the
** init moves to the outer block (it runs once per tile, before the first
** outer reduce iteration), as a block NAME_init under copies of the inner
** loops that bind the spatial variables it uses; the inner block loses its
** init.  When every reduce variable is bound inside l, the outer block has
** no reduce variable (so no T.init) and the inner block keeps its init,
** which then runs once per outer instance: the same meaning.
**
** The inner block is the original block statement, changed in place, so
** its handle and the handles of everything inside it stay valid; the
** outer block is new, and blockize returns its handle.  The inner block's
** predicate stays on it.  Block access regions of the inner block are
** rewritten with the same substitution; the outer block's are left unknown.
**
** Division.  When every loop around the block has a constant domain and
** the bindings are a bijective affine map of them, the analyzer's iterator
** map (mlc_arith_iter_map) gives each binding as a mixed-radix sum of loop
** splits ((v // f) % e, fused loops included); it divides when the splits
** of the loops from l down are its tail.  Otherwise (symbolic extents, a
** predicate that cuts the domain, a loop that binds nothing outside the
** subtree) a linear reading of the bindings (lin.c) divides them, reading
** floordiv / floormod terms as atoms that must be wholly outside the
** subtree; its refusals are the ones reported.
*/
#include <stdio.h>
#include <string.h>

#include "base/vec.h"
#include "lower/arith.h"
#include "lower/schedule/tensorize_int.h"

#define MAX_LOOPS 64
#define MAX_ITERS 64

static const char *stmt_word(const mlc_tir_stmt *st) {
  if (!st) return "nothing";
  switch (st->kind) {
    case MLC_TIR_FOR: return "a loop";
    case MLC_TIR_SEQ: return "a sequence of statements";
    case MLC_TIR_STORE: return "a store";
    case MLC_TIR_IF: return "a conditional";
    case MLC_TIR_ALLOCATE: return "an allocation";
    case MLC_TIR_EVALUATE: return "an evaluation";
    case MLC_TIR_BLOCK: return "a block";
    case MLC_TIR_ASSERT: return "an assertion";
  }
  return "?";
}

/* How one iteration variable divides. */
typedef struct division {
  int64_t e_in;   /* the inner extent E (1: no inner part) */
  sch_lin inner;  /* sum of inner loop terms (linear reading) */
  sch_lin outer;  /* the outer part, already divided by E (linear reading) */
  mlc_tir_expr *ibind, *obind; /* the inner and outer bindings (when E > 1) */
  int has_outer;
  mlc_tir_var *v_o, *v_i;
  mlc_tir_expr *value; /* what the original variable becomes */
} division;

static mlc_tir_var *suffixed(mlc_tir_module *m, const mlc_tir_var *v, const char *suffix) {
  char name[256];
  snprintf(name, sizeof name, "%s%s", v->name, suffix);
  return mlc_tir_var_new(m, name, v->dtype);
}

/* Divides the binding of iteration variable |it| of |blk| by the inner loops. */
static mlc_status divide(mlc_sch *s, const mlc_tir_stmt *blk, const mlc_tir_iter_var *it, mlc_tir_stmt **loops,
                         int nloops, const mlc_tir_iter_var **used_by, division *d) {
  const mlc_tir_var *lvars[MAX_LOOPS];
  for (int q = 0; q < nloops; q++) lvars[q] = loops[q]->loop.var;
  const char *vn = it->var->name;
  sch_lin l;
  if (sch_lin_of(it->binding, &l))
    return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE, "the binding of %s in %s (%s) is not an integer sum of terms", vn,
                    sch_desc(s, blk), sch_expr_str(s, it->binding));
  /* inner terms: (coef, loop) pairs; everything else is outer */
  int64_t coef[MAX_LOOPS];
  int loop_of[MAX_LOOPS], ni = 0;
  memset(d, 0, sizeof *d);
  d->outer.c = l.c;
  for (int t = 0; t < l.n; t++) {
    const sch_lin_term *term = &l.t[t];
    int q = -1;
    for (int k = 0; k < nloops && term->var; k++)
      if (term->var == lvars[k]) q = k;
    if (q >= 0) {
      coef[ni] = term->coef;
      loop_of[ni++] = q;
      continue;
    }
    for (int k = 0; !term->var && k < nloops; k++)
      if (mlc_tir_expr_uses_var(term->atom, lvars[k]))
        return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE,
                        "the binding of %s in %s (%s) uses %s inside %s: it cannot be divided at the subtree", vn,
                        sch_desc(s, blk), sch_expr_str(s, it->binding), sch_desc(s, loops[k]),
                        sch_expr_str(s, term->atom));
    d->outer.t[d->outer.n++] = *term;
  }
  /* the inner terms, by increasing coefficient, must be a mixed-radix number */
  for (int a = 1; a < ni; a++)
    for (int b = a; b > 0 && coef[b] < coef[b - 1]; b--) {
      int64_t tc = coef[b];
      coef[b] = coef[b - 1];
      coef[b - 1] = tc;
      int tl = loop_of[b];
      loop_of[b] = loop_of[b - 1];
      loop_of[b - 1] = tl;
    }
  int64_t expect = 1;
  for (int a = 0; a < ni; a++) {
    const mlc_tir_stmt *lp = loops[loop_of[a]];
    if (used_by[loop_of[a]])
      return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE, "%s is used by the bindings of both %s and %s in %s",
                      sch_desc(s, lp), used_by[loop_of[a]]->var->name, vn, sch_desc(s, blk));
    used_by[loop_of[a]] = it;
    if (coef[a] != expect)
      return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE,
                      "the binding of %s in %s (%s) is not divisible at the subtree: %s has coefficient %lld "
                      "where %lld is needed",
                      vn, sch_desc(s, blk), sch_expr_str(s, it->binding), sch_desc(s, lp), (long long)coef[a],
                      (long long)expect);
    d->inner.t[d->inner.n++] = (sch_lin_term){mlc_tir_ref(s->m, lp->loop.var), lp->loop.var, coef[a]};
    if (__builtin_mul_overflow(expect, lp->loop.extent->int_value, &expect))
      return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE, "the inner extent of %s overflows", vn);
  }
  d->e_in = expect;
  if (d->e_in == 1) {
    d->has_outer = 1;
    return NULL;
  }
  /* outer terms and the constant, relative to the domain's start, are multiples of E */
  if (it->min->kind != MLC_TIR_INT_IMM || it->extent->kind != MLC_TIR_INT_IMM)
    return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE, "%s in %s has a symbolic domain and an inner part of extent %lld",
                    vn, sch_desc(s, blk), (long long)d->e_in);
  int64_t mn = it->min->int_value, ext = it->extent->int_value;
  if (ext % d->e_in)
    return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE, "%s in %s has extent %lld, not a multiple of its inner extent %lld",
                    vn, sch_desc(s, blk), (long long)ext, (long long)d->e_in);
  for (int t = 0; t < d->outer.n; t++) {
    if (d->outer.t[t].coef % d->e_in)
      return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE,
                      "the binding of %s in %s (%s) is not divisible at the subtree: the outer term %s * %lld is "
                      "not a multiple of the inner extent %lld",
                      vn, sch_desc(s, blk), sch_expr_str(s, it->binding), sch_expr_str(s, d->outer.t[t].atom),
                      (long long)d->outer.t[t].coef, (long long)d->e_in);
    d->outer.t[t].coef /= d->e_in;
  }
  int64_t rel;
  if (__builtin_sub_overflow(d->outer.c, mn, &rel) || rel % d->e_in)
    return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE,
                    "the binding of %s in %s (%s) is not divisible at the subtree: its offset %lld from the "
                    "domain's start is not a multiple of the inner extent %lld",
                    vn, sch_desc(s, blk), sch_expr_str(s, it->binding), (long long)rel, (long long)d->e_in);
  d->outer.c = rel / d->e_in;
  d->has_outer = ext / d->e_in > 1 || d->outer.n > 0 || d->outer.c != 0;
  return NULL;
}

/* ---- division by the analyzer's iterator map ------------------------------------- */

/* ((v - mn) // lf) % ext of loop variable |v|, scaled. */
static mlc_tir_expr *split_expr(mlc_tir_module *m, const mlc_arith_iter_split *sp, mlc_tir_var *v, int64_t mn,
                                int64_t lext, int64_t scale) {
  mlc_tir_expr *x = mlc_tir_ref(m, v);
  if (mn) x = mlc_tir_sub(m, x, mlc_tir_i64(m, mn));
  if (sp->lower_factor > 1) x = mlc_tir_binary(m, MLC_TIR_FLOORDIV, x, mlc_tir_i64(m, sp->lower_factor));
  if (sp->extent < lext / sp->lower_factor) x = mlc_tir_binary(m, MLC_TIR_FLOORMOD, x, mlc_tir_i64(m, sp->extent));
  return mlc_tir_mul(m, x, mlc_tir_i64(m, scale));
}

/*
** Divides the bindings of |blk| with mlc_arith_iter_map when every loop
** around it (in its scope) has a constant domain and the bindings are a
** bijective affine map of them: binding = base + splits by decreasing
** scale, divisible when the splits of the inner loops are the tail, of
** extent E (their product).  *|found| = 1 and |dv| filled when so; 0 when
** the map does not apply or does not divide (the linear reading then
** decides and says why).  Errors only on out-of-memory.
*/
static mlc_status divide_iter_map(mlc_sch *s, mlc_tir_stmt *loop, const mlc_tir_stmt *blk, mlc_tir_stmt **inner,
                                  int ninner, division *dv, int *found) {
  mlc_tir_module *m = s->m;
  *found = 0;
  mlc_tir_stmt *all[2 * MAX_LOOPS];
  int nouter = sch_loops_above(s, loop, all, MAX_LOOPS);
  if (nouter < 0) return NULL;
  for (int q = 0; q < ninner; q++) all[nouter + q] = inner[q];
  int nall = nouter + ninner, n = blk->block.niters;
  const mlc_tir_var *vars[2 * MAX_LOOPS];
  const mlc_tir_expr *binds[MAX_ITERS], *exts[MAX_ITERS];
  for (int q = 0; q < nall; q++) {
    if (all[q]->loop.min->kind != MLC_TIR_INT_IMM || all[q]->loop.extent->kind != MLC_TIR_INT_IMM) return NULL;
    vars[q] = all[q]->loop.var;
  }
  for (int k = 0; k < n; k++) {
    const mlc_tir_iter_var *it = &blk->block.iters[k];
    if (it->min->kind != MLC_TIR_INT_IMM || it->extent->kind != MLC_TIR_INT_IMM) return NULL;
    binds[k] = it->binding;
    exts[k] = it->extent;
  }
  mlc_arith *an = NULL;
  MLC_RETURN_IF_ERROR(mlc_arith_create(mlc_allocator_default(), &an));
  mlc_status err = NULL;
  for (int q = 0; q < nall && !err; q++)
    err = mlc_arith_bind_c(an, vars[q], all[q]->loop.min->int_value, all[q]->loop.extent->int_value);
  mlc_arith_iter_map_result r;
  if (!err && (err = mlc_arith_iter_map(an, n, binds, exts, nall, vars, &r)) != NULL &&
      mlc_status_code(err) != MLC_RESOURCE_EXHAUSTED) {
    mlc_status_free(err); /* not a bijective map: the linear reading decides */
    mlc_arith_destroy(an);
    return NULL;
  }
  int ok = !err;
  for (int k = 0; k < n && ok; k++) {
    const mlc_tir_iter_var *it = &blk->block.iters[k];
    const mlc_arith_iter_sum *sum = &r.sums[k];
    division *d = &dv[k];
    memset(d, 0, sizeof *d);
    int t = sum->nsplits; /* the first split of the inner tail */
    while (t > 0 && sum->splits[t - 1].loop >= nouter) t--;
    for (int i = 0; i < t; i++)
      if (sum->splits[i].loop >= nouter) ok = 0;
    if (!ok) break;
    d->e_in = 1;
    for (int i = t; i < sum->nsplits; i++) d->e_in *= sum->splits[i].extent;
    int64_t mn = it->min->int_value, ext = it->extent->int_value, rel = sum->base - mn;
    if (d->e_in == 1) {
      d->has_outer = 1;
      continue;
    }
    if (ext % d->e_in || rel % d->e_in) {
      ok = 0;
      break;
    }
    mlc_tir_expr *ib = NULL, *ob = mlc_tir_i64(m, rel / d->e_in);
    for (int i = 0; i < sum->nsplits; i++) {
      const mlc_arith_iter_split *sp = &sum->splits[i];
      mlc_tir_stmt *lp = all[sp->loop];
      int64_t lmn = lp->loop.min->int_value, lext = lp->loop.extent->int_value;
      if (i < t) {
        ob = mlc_tir_add(m, ob, split_expr(m, sp, lp->loop.var, lmn, lext, sp->scale / d->e_in));
      } else {
        mlc_tir_expr *x = split_expr(m, sp, lp->loop.var, lmn, lext, sp->scale);
        ib = ib ? mlc_tir_add(m, ib, x) : x;
      }
    }
    d->ibind = mlc_arith_simplify(an, m, ib);
    d->obind = mlc_arith_simplify(an, m, ob);
    d->has_outer = ext / d->e_in > 1 || t > 0 || rel != 0;
    if (!d->ibind || !d->obind) err = mlc_oom();
  }
  mlc_arith_destroy(an);
  if (err) return err;
  *found = ok;
  return NULL;
}

/* ---- in-place substitution, as a list of edits --------------------------------- */

typedef struct subst_ctx {
  mlc_sch *s;
  const mlc_tir_subst *sub;
  MLC_VEC(sch_edit) edits;
  int oom;
} subst_ctx;

static void edit(subst_ctx *c, mlc_tir_expr **slot) {
  if (!*slot) return;
  int uses = 0;
  for (int i = 0; i < c->sub->nvars && !uses; i++) uses = mlc_tir_expr_uses_var(*slot, c->sub->vars[i]);
  if (!uses) return;
  mlc_tir_expr *r = mlc_tir_expr_copy(c->s->m, *slot, c->sub);
  sch_edit e = {slot, *slot, r};
  if (!r || mlc_vec_push(&c->edits, e)) c->oom = 1;
}

static void edit_regions(subst_ctx *c, int n, mlc_tir_region *r) {
  for (int i = 0; i < n; i++)
    for (int d = 0; d < r[i].n; d++) {
      edit(c, &r[i].min[d]);
      edit(c, &r[i].extent[d]);
    }
}

static void edit_stmt(subst_ctx *c, mlc_tir_stmt *st) {
  if (!st) return;
  switch (st->kind) {
    case MLC_TIR_FOR:
      edit(c, &st->loop.min);
      edit(c, &st->loop.extent);
      edit_stmt(c, st->loop.body);
      return;
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) edit_stmt(c, st->seq.stmts[i]);
      return;
    case MLC_TIR_STORE:
      for (int i = 0; i < st->store.n; i++) edit(c, &st->store.indices[i]);
      edit(c, &st->store.value);
      return;
    case MLC_TIR_IF:
      edit(c, &st->if_.cond);
      edit_stmt(c, st->if_.then_s);
      edit_stmt(c, st->if_.else_s);
      return;
    case MLC_TIR_ALLOCATE: edit_stmt(c, st->alloc.body); return;
    case MLC_TIR_EVALUATE: edit(c, &st->eval.value); return;
    case MLC_TIR_ASSERT:
      edit(c, &st->assert_.cond);
      for (int i = 0; i < st->assert_.nvals; i++) edit(c, &st->assert_.vals[i]);
      return;
    case MLC_TIR_BLOCK:
      for (int i = 0; i < st->block.niters; i++) {
        edit(c, &st->block.iters[i].min);
        edit(c, &st->block.iters[i].extent);
        edit(c, &st->block.iters[i].binding);
      }
      edit(c, &st->block.predicate);
      edit_regions(c, st->block.nreads, st->block.reads);
      edit_regions(c, st->block.nwrites, st->block.writes);
      edit_stmt(c, st->block.init);
      edit_stmt(c, st->block.body);
      return;
  }
}

/* ---- the init of the outer block --------------------------------------------- */

static int stmt_uses_var(const mlc_tir_stmt *st, const mlc_tir_var *v) {
  if (!st) return 0;
  switch (st->kind) {
    case MLC_TIR_FOR:
      return mlc_tir_expr_uses_var(st->loop.min, v) || mlc_tir_expr_uses_var(st->loop.extent, v) ||
             stmt_uses_var(st->loop.body, v);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++)
        if (stmt_uses_var(st->seq.stmts[i], v)) return 1;
      return 0;
    case MLC_TIR_STORE:
      for (int i = 0; i < st->store.n; i++)
        if (mlc_tir_expr_uses_var(st->store.indices[i], v)) return 1;
      return mlc_tir_expr_uses_var(st->store.value, v);
    case MLC_TIR_IF:
      return mlc_tir_expr_uses_var(st->if_.cond, v) || stmt_uses_var(st->if_.then_s, v) ||
             stmt_uses_var(st->if_.else_s, v);
    case MLC_TIR_ALLOCATE: return stmt_uses_var(st->alloc.body, v);
    case MLC_TIR_EVALUATE: return mlc_tir_expr_uses_var(st->eval.value, v);
    case MLC_TIR_ASSERT:
      if (mlc_tir_expr_uses_var(st->assert_.cond, v)) return 1;
      for (int i = 0; i < st->assert_.nvals; i++)
        if (mlc_tir_expr_uses_var(st->assert_.vals[i], v)) return 1;
      return 0;
    case MLC_TIR_BLOCK:
      for (int i = 0; i < st->block.niters; i++)
        if (mlc_tir_expr_uses_var(st->block.iters[i].min, v) || mlc_tir_expr_uses_var(st->block.iters[i].extent, v) ||
            mlc_tir_expr_uses_var(st->block.iters[i].binding, v))
          return 1;
      return mlc_tir_expr_uses_var(st->block.predicate, v) || stmt_uses_var(st->block.init, v) ||
             stmt_uses_var(st->block.body, v);
  }
  return 0;
}

/* The init moved to the outer block: a block NAME_init over the inner spatial
** variables that |init| uses, under copies of the inner loops that bind them. */
static mlc_status outer_init(mlc_sch *s, const mlc_tir_stmt *blk, mlc_tir_stmt **loops, int nloops, division *dv,
                             const char *name, mlc_tir_stmt **out, mlc_tir_stmt **init_block) {
  mlc_tir_module *m = s->m;
  const mlc_tir_stmt *init = blk->block.init;
  int n = blk->block.niters;
  if (blk->block.predicate)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s has a predicate: its init cannot move to the outer block",
                    sch_desc(s, blk));
  /* init loop variables for the inner loops */
  mlc_tir_var *lfrom[MAX_LOOPS], *lto[MAX_LOOPS];
  mlc_tir_expr *lval[MAX_LOOPS];
  int used[MAX_LOOPS] = {0};
  for (int q = 0; q < nloops; q++) {
    lfrom[q] = loops[q]->loop.var;
    lto[q] = suffixed(m, lfrom[q], "_init");
    lval[q] = mlc_tir_ref(m, lto[q]);
    if (!lval[q]) return mlc_oom();
  }
  mlc_tir_subst lsub = {nloops, lfrom, lval, 0, NULL, NULL, 0};
  mlc_tir_iter_var its[MAX_ITERS];
  mlc_tir_var *vfrom[MAX_ITERS];
  mlc_tir_expr *vval[MAX_ITERS];
  int ni = 0;
  for (int k = 0; k < n; k++) {
    const mlc_tir_iter_var *it = &blk->block.iters[k];
    division *d = &dv[k];
    mlc_tir_expr *val = d->value;
    /* an inner part the init reads gets a variable of the init block */
    int in_init = d->e_in > 1 && stmt_uses_var(init, it->var);
    vfrom[k] = it->var;
    if (in_init && it->kind == MLC_TIR_ITER_REDUCE)
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "the init of %s reads the reduce variable %s", sch_desc(s, blk),
                      it->var->name);
    if (in_init) {
      mlc_tir_var *nv = suffixed(m, d->v_i, "_init");
      mlc_tir_expr *b = mlc_tir_expr_copy(m, d->ibind, &lsub);
      if (!nv || !b) return mlc_oom();
      for (int q = 0; q < nloops; q++)
        if (mlc_tir_expr_uses_var(b, lto[q])) used[q] = 1;
      its[ni++] = (mlc_tir_iter_var){nv, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), mlc_tir_i64(m, d->e_in), b};
      mlc_tir_expr *base = mlc_tir_expr_copy(m, it->min, NULL);
      if (d->has_outer) {
        mlc_tir_expr *scaled = mlc_tir_mul(m, mlc_tir_ref(m, d->v_o), mlc_tir_i64(m, d->e_in));
        base = mlc_tir_is_const(base, 0) ? scaled : mlc_tir_add(m, base, scaled);
      }
      val = mlc_tir_add(m, base, mlc_tir_ref(m, nv));
    }
    vval[k] = val;
    if (!val) return mlc_oom();
  }
  mlc_tir_subst vsub = {n, vfrom, vval, 0, NULL, NULL, 0};
  mlc_tir_stmt *body = mlc_tir_stmt_copy(m, init, &vsub);
  mlc_tir_stmt *st = mlc_tir_block(m, name, ni, its, NULL, body);
  *init_block = st;
  for (int q = nloops; q-- > 0;)
    if (used[q])
      st = mlc_tir_for(m, lto[q], mlc_tir_expr_copy(m, loops[q]->loop.min, NULL),
                       mlc_tir_expr_copy(m, loops[q]->loop.extent, NULL), MLC_TIR_FOR_SERIAL, NULL, st);
  if (!st) return mlc_oom();
  *out = st;
  return NULL;
}

/* ---- build, apply, undo -------------------------------------------------------- */

mlc_status sch_blockize_build(mlc_sch *s, mlc_tir_stmt *loop, sch_blockized *out) {
  mlc_tir_module *m = s->m;
  memset(out, 0, sizeof *out);
  /* the subtree: a perfect nest of loops around one block */
  mlc_tir_stmt *loops[MAX_LOOPS], *st = loop;
  int nloops = 0;
  while (st && st->kind == MLC_TIR_FOR) {
    if (nloops >= MAX_LOOPS)
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than %d loops under %s", MAX_LOOPS, sch_desc(s, loop));
    loops[nloops++] = st;
    st = st->loop.body;
  }
  if (!st || st->kind != MLC_TIR_BLOCK)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE,
                    "%s holds %s, not a loop or a block: blockize needs a nest of loops around one block",
                    sch_desc(s, loops[nloops - 1]), stmt_word(st));
  mlc_tir_stmt *blk = st;
  for (int q = 0; q < nloops; q++) {
    if (!mlc_tir_is_const(loops[q]->loop.min, 0))
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s under the subtree does not start at 0", sch_desc(s, loops[q]));
    if (loops[q]->loop.extent->kind != MLC_TIR_INT_IMM)
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s under the subtree has a symbolic extent", sch_desc(s, loops[q]));
  }
  int n = blk->block.niters;
  if (n > MAX_ITERS) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s has more than %d iteration variables", sch_desc(s, blk), MAX_ITERS);
  /* divide every binding */
  division *dv = MLC_ARENA_ARRAY(s->arena, (size_t)(n ? n : 1), division);
  if (!dv) return mlc_oom();
  int found = 0;
  MLC_RETURN_IF_ERROR(divide_iter_map(s, loop, blk, loops, nloops, dv, &found));
  if (!found) {
    const mlc_tir_iter_var *used_by[MAX_LOOPS] = {0};
    for (int k = 0; k < n; k++) {
      MLC_RETURN_IF_ERROR(divide(s, blk, &blk->block.iters[k], loops, nloops, used_by, &dv[k]));
      dv[k].ibind = sch_lin_build(m, &dv[k].inner);
      dv[k].obind = sch_lin_build(m, &dv[k].outer);
    }
    for (int q = 0; q < nloops; q++)
      if (!used_by[q] && loops[q]->loop.extent->int_value != 1)
        return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE,
                        "%s binds no iteration variable of %s: the block would run %lld times for one instance",
                        sch_desc(s, loops[q]), sch_desc(s, blk), (long long)loops[q]->loop.extent->int_value);
  }
  /* the new iteration variables */
  mlc_tir_iter_var oit[MAX_ITERS], iit[MAX_ITERS];
  mlc_tir_var *from[MAX_ITERS];
  mlc_tir_expr *to[MAX_ITERS];
  int no = 0, nin = 0, outer_reduce = 0;
  for (int k = 0; k < n; k++) {
    const mlc_tir_iter_var *it = &blk->block.iters[k];
    division *d = &dv[k];
    from[k] = it->var;
    if (d->e_in == 1) {
      d->v_o = suffixed(m, it->var, "_o");
      oit[no++] = (mlc_tir_iter_var){d->v_o, it->kind, it->min, it->extent, it->binding};
      d->value = mlc_tir_ref(m, d->v_o);
    } else {
      d->v_i = suffixed(m, it->var, "_i");
      iit[nin++] = (mlc_tir_iter_var){d->v_i, it->kind, mlc_tir_i64(m, 0), mlc_tir_i64(m, d->e_in), d->ibind};
      mlc_tir_expr *base = mlc_tir_expr_copy(m, it->min, NULL);
      if (d->has_outer) {
        d->v_o = suffixed(m, it->var, "_o");
        oit[no++] = (mlc_tir_iter_var){d->v_o, it->kind, mlc_tir_i64(m, 0),
                                       mlc_tir_i64(m, it->extent->int_value / d->e_in), d->obind};
        mlc_tir_expr *scaled = mlc_tir_mul(m, mlc_tir_ref(m, d->v_o), mlc_tir_i64(m, d->e_in));
        base = mlc_tir_is_const(base, 0) ? scaled : mlc_tir_add(m, base, scaled);
      }
      d->value = mlc_tir_add(m, base, mlc_tir_ref(m, d->v_i));
    }
    if (d->has_outer && it->kind == MLC_TIR_ITER_REDUCE) outer_reduce = 1;
    to[k] = d->value;
  }
  if (mlc_tir_module_oom(m)) return mlc_oom();
  for (int k = 0; k < no; k++)
    if (!oit[k].var || !oit[k].binding || !oit[k].extent) return mlc_oom();
  for (int k = 0; k < nin; k++)
    if (!iit[k].var || !iit[k].binding) return mlc_oom();
  for (int k = 0; k < n; k++)
    if (!to[k]) return mlc_oom();
  /* the init: to the outer block when some reduce variable is bound outside */
  const char *oname = sch_unique_block_name(s, mlc_arena_printf(s->arena, "%s_o", blk->block.name));
  if (!oname) return mlc_oom();
  mlc_tir_stmt *oinit = NULL;
  out->init = blk->block.init;
  if (blk->block.init && outer_reduce) {
    const char *iname = sch_unique_block_name(s, mlc_arena_printf(s->arena, "%s_init", blk->block.name));
    if (!iname) return mlc_oom();
    MLC_RETURN_IF_ERROR(outer_init(s, blk, loops, nloops, dv, iname, &oinit, &out->init_block));
    out->init = NULL;
  }
  /* the substitution in the block, as edits */
  mlc_tir_subst sub = {n, from, to, 0, NULL, NULL, 0};
  subst_ctx c = {s, &sub, {0}, 0};
  edit_regions(&c, blk->block.nreads, blk->block.reads);
  edit_regions(&c, blk->block.nwrites, blk->block.writes);
  if (out->init) edit_stmt(&c, blk->block.init);
  edit_stmt(&c, blk->block.body);
  if (!c.oom && c.edits.len) {
    out->edits = MLC_ARENA_ARRAY(s->arena, c.edits.len, sch_edit);
    if (out->edits) memcpy(out->edits, c.edits.data, c.edits.len * sizeof *out->edits);
    else c.oom = 1;
  }
  out->nedits = (int)c.edits.len;
  mlc_vec_free(&c.edits);
  if (c.oom) return mlc_oom();
  out->iters = nin ? MLC_ARENA_ARRAY(m->arena, (size_t)nin, mlc_tir_iter_var) : NULL;
  if (nin && !out->iters) return mlc_oom();
  if (nin) memcpy(out->iters, iit, (size_t)nin * sizeof *iit);
  out->niters = nin;
  out->outer = mlc_tir_block(m, oname, no, oit, oinit, loop);
  if (!out->outer) return mlc_oom();
  out->outer->origin = blk->origin;
  out->loop = loop;
  out->block = blk;
  out->last = loops[nloops - 1];
  return NULL;
}

mlc_status sch_blockize_apply(mlc_sch *s, sch_blockized *b) {
  MLC_RETURN_IF_ERROR(sch_replace(s, b->loop, b->outer));
  mlc_tir_stmt *blk = b->block;
  b->old_niters = blk->block.niters;
  b->old_iters = blk->block.iters;
  b->old_init = blk->block.init;
  blk->block.niters = b->niters;
  blk->block.iters = b->iters;
  blk->block.init = b->init;
  for (int i = 0; i < b->nedits; i++) *b->edits[i].slot = b->edits[i].repl;
  b->applied = 1;
  /* regions kept current (the inner block's reads change when it loses its
  ** init): computed again for the new blocks and the inner one */
  b->old_nreads = blk->block.nreads;
  b->old_nwrites = blk->block.nwrites;
  b->old_reads = blk->block.reads;
  b->old_writes = blk->block.writes;
  if (blk->block.nreads || blk->block.nwrites) {
    mlc_status st = mlc_tir_block_compute_regions(s->m, blk);
    if (!st && b->init_block) st = mlc_tir_block_compute_regions(s->m, b->init_block);
    if (!st) st = mlc_tir_block_compute_regions(s->m, b->outer);
    if (st) {
      sch_blockize_undo(s, b);
      return st;
    }
  }
  return NULL;
}

void sch_blockize_undo(mlc_sch *s, sch_blockized *b) {
  if (!b->applied) return;
  mlc_tir_stmt *blk = b->block;
  blk->block.nreads = b->old_nreads;
  blk->block.nwrites = b->old_nwrites;
  blk->block.reads = b->old_reads;
  blk->block.writes = b->old_writes;
  for (int i = b->nedits; i-- > 0;) *b->edits[i].slot = b->edits[i].old;
  blk->block.niters = b->old_niters;
  blk->block.iters = b->old_iters;
  blk->block.init = b->old_init;
  mlc_tir_stmt **slot = sch_slot(s, b->outer, NULL);
  if (slot) *slot = b->loop;
  b->applied = 0;
}

/* ---- the primitive ------------------------------------------------------------ */

mlc_status mlc_sch_apply_blockize(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *loop;
  MLC_RETURN_IF_ERROR(sch_arg_loop(s, in, "target", &loop));
  sch_blockized b;
  MLC_RETURN_IF_ERROR(sch_blockize_build(s, loop, &b));
  MLC_RETURN_IF_ERROR(sch_blockize_apply(s, &b));
  mlc_status st = sch_out_stmt(s, in, MLC_SCH_RV_BLOCK, b.outer);
  if (st) sch_blockize_undo(s, &b);
  return st;
}

mlc_status mlc_sch_blockize(mlc_sch *s, mlc_sch_rv loop, mlc_sch_rv *out) {
  mlc_sch_arg a[1] = {MLC_SCH_RV_ARG(loop)};
  a[0].key = "target";
  mlc_sch_rv outs[MLC_SCH_MAX_OUTS];
  int n = 0;
  MLC_RETURN_IF_ERROR(mlc_sch_apply(s, MLC_SCH_INST_BLOCKIZE, 1, a, outs, &n));
  if (out) *out = n ? outs[0] : 0;
  return NULL;
}
