/*
** reverse_compute_at.c: sch.reverse_compute_at(block=c, loop=l,
** preserve_unit_loops=False).
**
** Moves the consumer block c under the loop l of its producers, consuming
** in each iteration of l the region that the producers wrote in that
** iteration: the seeds' mm_relu, where relu C goes under the matmul's j_0
** loop once j is split by 4,
**
**   for i, j_0 in T.grid(128, 32):
**       for k, j_1 in T.grid(128, 4):
**           with T.block("Y"): ...
**       for ax0 in range(4):
**           with T.block("C"):
**               vi = T.axis.spatial(128, i)
**               vj = T.axis.spatial(128, j_0 * 4 + ax0)
**
** The region: every store of a buffer c reads in the producers under l (the
** producer's iteration variables replaced by their bindings, the loops
** between l and the producer relaxed, l and the loops above kept symbolic):
** per dimension S + [lo, hi].  c must read each such buffer through its
** iteration variables (each index a distinct one), except in dimensions
** the producers write whole in each iteration of l, which c may read by
** any index (a flat conv's epilogue reads its accumulator at [p / T,
** p % T]), and in at least one dimension; the iteration variable of a
** dimension gets a new loop over [0, hi - lo + 1) and the binding S + lo +
** loop, the others keep loops over their whole domain.  c is put
** after the last statement of l's body that holds a producer.
**
** Legality: c has no predicate and does not read what it writes
** (STRUCTURE); l is in c's scope, does not hold c, and encloses every
** producer (LOCATION); a reduction producer must be complete under l: its
** reduce iteration variables bound through loops inside l only; the region
** must be computable, restrict only spatial iteration variables of c, and
** the regions over all iterations of l must cover c's domain (REGION); no
** block between l's start and c may touch what c writes (DEPENDENCE).
** "root" leaves c where it is; "inline" is reverse_compute_inline.
*/
#include <string.h>

#include "lower/schedule/compute_loc.h"
#include "lower/tir_visit.h"

typedef struct rca_plan {
  int has[CL_MAX_LOOPS];
  cl_range ranges[CL_MAX_LOOPS];
  int at;
  cl_nest nest;
} rca_plan;

/* The indices c loads |b| with, when every load of |b| in c uses the same
** distinct iteration variables in the same dimensions: perm[d] = iteration
** variable of dimension d, or -1 for an index that is not one (a
** dimension c may read anywhere in).  bad when not. */
typedef struct lp {
  const mlc_tir_stmt *blk;
  const mlc_tir_buffer *b;
  int n, bad;
  int perm[CL_MAX_LOOPS];
} lp;

static void lp_load(lp *l, const mlc_tir_expr *e) {
  int perm[CL_MAX_LOOPS], used[CL_MAX_LOOPS] = {0};
  if (e->load.n > CL_MAX_LOOPS) {
    l->bad = 1;
    return;
  }
  for (int d = 0; d < e->load.n; d++) {
    int k = mlc_tir_block_iter_index(l->blk, e->load.indices[d]);
    if (k >= 0 && used[k]) {
      l->bad = 1;
      return;
    }
    if (k >= 0) used[k] = 1;
    perm[d] = k; /* -1: any index, the dimension read whole */
  }
  if (l->n >= 0) {
    if (l->n != e->load.n || memcmp(l->perm, perm, (size_t)l->n * sizeof perm[0])) l->bad = 1;
    return;
  }
  l->n = e->load.n;
  memcpy(l->perm, perm, (size_t)l->n * sizeof perm[0]);
}

static int lp_pre(void *ctx, const mlc_tir_expr *e) {
  lp *l = ctx;
  if (e->kind == MLC_TIR_LOAD && e->load.buffer == l->b) lp_load(l, e);
  return l->bad ? MLC_TIR_VISIT_STOP : MLC_TIR_VISIT_CONTINUE;
}

static void lp_expr(lp *l, const mlc_tir_expr *e) {
  if (!e || l->bad) return;
  mlc_tir_visitor v = {0};
  v.ctx = l;
  v.pre_expr = lp_pre;
  mlc_tir_visit_expr(&v, e);
}

static void lp_stmt(lp *l, const mlc_tir_stmt *st) {
  if (!st || l->bad) return;
  switch (st->kind) {
    case MLC_TIR_FOR:
      lp_expr(l, st->loop.min);
      lp_expr(l, st->loop.extent);
      lp_stmt(l, st->loop.body);
      return;
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) lp_stmt(l, st->seq.stmts[i]);
      return;
    case MLC_TIR_STORE:
      for (int i = 0; i < st->store.n; i++) lp_expr(l, st->store.indices[i]);
      lp_expr(l, st->store.value);
      return;
    case MLC_TIR_IF:
      lp_expr(l, st->if_.cond);
      lp_stmt(l, st->if_.then_s);
      lp_stmt(l, st->if_.else_s);
      return;
    case MLC_TIR_ALLOCATE: lp_stmt(l, st->alloc.body); return;
    case MLC_TIR_EVALUATE: lp_expr(l, st->eval.value); return;
    case MLC_TIR_BLOCK: l->bad = sch_block_reads(st, l->b); return;
    case MLC_TIR_ASSERT:
      lp_expr(l, st->assert_.cond);
      for (int i = 0; i < st->assert_.nvals; i++) lp_expr(l, st->assert_.vals[i]);
      return;
  }
}

/* Nonzero if the reduce iteration variables of |p| are bound through a
** loop at or above |loop| (a reduction not complete under it). */
static int incomplete_reduction(mlc_sch *s, const mlc_tir_stmt *p, const mlc_tir_stmt *loop) {
  mlc_tir_stmt *path[512];
  int n = sch_path(s, loop, path, 512);
  for (int i = 0; i < n; i++) {
    if (path[i]->kind != MLC_TIR_FOR) continue;
    for (int k = 0; k < p->block.niters; k++)
      if (p->block.iters[k].kind == MLC_TIR_ITER_REDUCE &&
          mlc_tir_expr_uses_var(p->block.iters[k].binding, path[i]->loop.var))
        return 1;
  }
  return 0;
}

/* Nonzero when the regions S + [lo, hi] over every iteration of the loops
** in |outer| provably cover [dlo, dhi]: S = sum c_i * v_i over their
** variables, which, taken by growing coefficient, nest without gaps (each
** c_i at most the span the smaller ones and [lo, hi] reach: a tile's rows
** i_0 * 64 + i_1 * 4 + [0, 3]). */
static int covers(const cl_range *r, const cl_env *outer, int64_t dlo, int64_t dhi) {
  int64_t span = r->hi - r->lo + 1, lo = r->lo, hi = r->hi;
  int used[CL_MAX_TERMS] = {0};
  for (int t = 0; t < r->nterms; t++) {
    int best = -1;
    for (int i = 0; i < r->nterms; i++)
      if (!used[i] && (best < 0 || r->coef[i] < r->coef[best])) best = i;
    used[best] = 1;
    const mlc_tir_expr *a = r->atom[best];
    int64_t c = r->coef[best];
    int k = -1;
    if (a->kind == MLC_TIR_VAR_REF)
      for (int i = 0; i < outer->n; i++)
        if (outer->var[i] == a->var) k = i;
    if (k < 0 || c <= 0 || c > span) return 0; /* gaps between iterations */
    int64_t e = outer->hi[k] - outer->lo[k];
    if (e > ((int64_t)1 << 52) / c || span > ((int64_t)1 << 52) - c * e) return 0; /* no overflow */
    lo += c * outer->lo[k];
    hi += c * outer->hi[k];
    span += c * e;
  }
  return lo <= dlo && hi >= dhi;
}

/*
** covers() where the domain of |it| or the extent of the outer loop the
** range moves with is symbolic (a batch N, an image's H, a tile count
** (W + 3) // 4): S = c * v with v the variable of |loop| or of a loop above
** it, so the union over v in [min, min + E) is [c * min + lo, c * (min + E
** - 1) + hi], proved to hold [dmin, dmin + D - 1] by the analyzer.
*/
static int covers_sym(mlc_sch *s, const cl_range *r, mlc_tir_stmt *loop, const mlc_tir_iter_var *it) {
  mlc_tir_module *m = s->m;
  const mlc_tir_stmt *outer_lp = NULL;
  int64_t c = 0;
  if (r->nterms > 1) return 0;
  if (r->nterms == 1) {
    const mlc_tir_expr *a = r->atom[0];
    c = r->coef[0];
    if (a->kind != MLC_TIR_VAR_REF || c <= 0 || c > r->hi - r->lo + 1) return 0; /* gaps */
    mlc_tir_stmt *above[CL_MAX_LOOPS];
    int n = sch_loops_above(s, loop, above, CL_MAX_LOOPS);
    if (loop->loop.var == a->var) outer_lp = loop;
    for (int i = 0; i < n && !outer_lp; i++)
      if (above[i]->loop.var == a->var) outer_lp = above[i];
    if (!outer_lp) return 0;
  }
  mlc_dtype dt = it->var->dtype;
  mlc_tir_expr *lo = mlc_tir_int(m, dt, r->lo), *hi = mlc_tir_int(m, dt, r->hi);
  if (outer_lp) { /* c * min + lo, c * (min + E - 1) + hi */
    mlc_tir_expr *cc = mlc_tir_int(m, dt, c), *last = mlc_tir_sub(m, mlc_tir_add(m, outer_lp->loop.min, outer_lp->loop.extent),
                                                                     mlc_tir_int(m, dt, 1));
    lo = mlc_tir_add(m, mlc_tir_mul(m, cc, outer_lp->loop.min), lo);
    hi = mlc_tir_add(m, mlc_tir_mul(m, cc, last), hi);
  }
  mlc_tir_expr *dhi = mlc_tir_sub(m, mlc_tir_add(m, it->min, it->extent), mlc_tir_int(m, dt, 1));
  if (!lo || !hi || !dhi) return 0;
  mlc_arith *an = NULL;
  if (mlc_arith_create(mlc_allocator_default(), &an)) return 0;
  int ok = mlc_arith_prove(an, mlc_tir_binary(m, MLC_TIR_LE, lo, it->min)) &&
           mlc_arith_prove(an, mlc_tir_binary(m, MLC_TIR_GE, hi, dhi));
  /* a tile count E = y // d with d dividing c: c * E >= (c / d) * (y - d + 1),
  ** so the last tile reaches c * E - c + hi (the accumulator rounded up to
  ** whole tiles covers the width it was rounded from) */
  const mlc_tir_expr *e = outer_lp ? outer_lp->loop.extent : NULL;
  if (!ok && e && mlc_tir_is_const(outer_lp->loop.min, 0) && e->kind == MLC_TIR_BINARY && e->bin.op == MLC_TIR_FLOORDIV &&
      e->bin.b->kind == MLC_TIR_INT_IMM && e->bin.b->int_value > 0 && c % e->bin.b->int_value == 0 &&
      mlc_arith_prove(an, mlc_tir_binary(m, MLC_TIR_LE, lo, it->min))) {
    int64_t d = e->bin.b->int_value;
    mlc_tir_expr *low = mlc_tir_mul(m, mlc_tir_sub(m, e->bin.a, mlc_tir_int(m, dt, d - 1)), mlc_tir_int(m, dt, c / d));
    low = mlc_tir_add(m, low, mlc_tir_int(m, dt, r->hi - c));
    ok = low && mlc_arith_prove(an, mlc_tir_binary(m, MLC_TIR_GE, low, dhi));
  }
  mlc_arith_destroy(an);
  return ok;
}

static mlc_status analyze(mlc_sch *s, mlc_tir_stmt *c, mlc_tir_stmt *loop, rca_plan *p) {
  const char *cd = sch_desc(s, c), *ld = sch_desc(s, loop);
  if (c->block.predicate) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s has a predicate", cd);
  if (c->block.niters > CL_MAX_LOOPS)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s has more than %d iteration variables", cd, CL_MAX_LOOPS);
  mlc_tir_buffer *reads[64], *writes[16];
  int nr = cl_block_reads(c, reads, 64), nw = cl_block_writes(c, writes, 16);
  if (nr < 0 || nw < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s accesses too many buffers", cd);
  for (int w = 0; w < nw; w++)
    if (sch_block_reads(c, writes[w]))
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s reads the buffer %s it writes", cd, writes[w]->name);
  if (sch_scope(s, loop) != sch_scope(s, c))
    return sch_fail(s, MLC_SCH_ERR_LOCATION, "%s is not in the scope of %s", ld, cd);
  if (sch_contains(loop, c)) return sch_fail(s, MLC_SCH_ERR_LOCATION, "%s is already inside %s", cd, ld);
  mlc_tir_stmt *blocks[CL_MAX_BLOCKS], *prods[CL_MAX_BLOCKS];
  int at, nb = cl_scope_blocks(s, c, blocks, &at), np = 0, first = -1;
  if (nb < 0 || at < 0)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than %d blocks in the scope of %s", CL_MAX_BLOCKS, cd);
  for (int i = 0; i < at; i++) {
    if (first < 0 && sch_contains(loop, blocks[i])) first = i;
    int feeds = 0;
    for (int r = 0; r < nr && !feeds; r++) feeds = sch_block_writes(blocks[i], reads[r]);
    if (!feeds) continue;
    if (!sch_contains(loop, blocks[i]))
      return sch_fail(s, MLC_SCH_ERR_LOCATION, "%s does not enclose the producer %s", ld, sch_desc(s, blocks[i]));
    prods[np++] = blocks[i];
  }
  if (!np) return sch_fail(s, MLC_SCH_ERR_LOCATION, "%s has no producer under %s", cd, ld);
  /* c now runs earlier: nothing on the way may touch what it writes */
  for (int i = first; i < at; i++)
    for (int w = 0; w < nw; w++)
      if (sch_block_writes(blocks[i], writes[w]) || sch_block_reads(blocks[i], writes[w]))
        return sch_fail(s, MLC_SCH_ERR_DEPENDENCE, "%s uses %s, which %s writes, after %s begins",
                        sch_desc(s, blocks[i]), writes[w]->name, cd, ld);
  MLC_RETURN_IF_ERROR(cl_check_allocs(s, c, loop));
  MLC_RETURN_IF_ERROR(cl_nest_find(s, c, &p->nest));
  /* the region each produced buffer gets in one iteration of the loop */
  memset(p->has, 0, sizeof p->has);
  cl_env outer;
  cl_env_above(s, loop, &outer);
  for (int r = 0; r < nr; r++) {
    cl_range acc[CL_MAX_LOOPS];
    int have = 0;
    for (int i = 0; i < np; i++) {
      if (!sch_block_writes(prods[i], reads[r])) continue;
      cl_env env;
      const char *why = NULL;
      if (incomplete_reduction(s, prods[i], loop))
        return sch_fail(s, MLC_SCH_ERR_REGION, "the reduction of %s is not complete under %s", sch_desc(s, prods[i]),
                        ld);
      if (cl_env_between(s, loop, prods[i], &env))
        return sch_fail(s, MLC_SCH_ERR_REGION, "a loop between %s and %s has non-constant bounds", ld,
                        sch_desc(s, prods[i]));
      if (cl_access_ranges(s, prods[i], reads[r], 1, &env, acc, &have, &why))
        return sch_fail(s, MLC_SCH_ERR_REGION, "cannot cover the region of %s that %s writes under %s: %s",
                        reads[r]->name, sch_desc(s, prods[i]), ld, why);
    }
    if (!have) continue;
    lp l = {c, reads[r], -1, 0, {0}};
    lp_expr(&l, c->block.predicate);
    lp_stmt(&l, c->block.body);
    if (l.bad || l.n < 0)
      return sch_fail(s, MLC_SCH_ERR_REGION, "%s does not read %s through its iteration variables", cd,
                      reads[r]->name);
    int simple = 0;
    for (int d = 0; d < l.n; d++) simple += l.perm[d] >= 0;
    if (!simple)
      return sch_fail(s, MLC_SCH_ERR_REGION, "%s does not read %s through its iteration variables", cd,
                      reads[r]->name);
    for (int d = 0; d < l.n; d++) {
      int k = l.perm[d];
      if (k < 0) { /* read anywhere: the producers must write the whole dimension in each iteration */
        const mlc_tir_expr *ext = d < reads[r]->rank ? reads[r]->shape[d] : NULL;
        if (acc[d].nterms || !ext || ext->kind != MLC_TIR_INT_IMM || acc[d].lo > 0 || acc[d].hi < ext->int_value - 1)
          return sch_fail(s, MLC_SCH_ERR_REGION,
                          "%s reads dimension %d of %s by an index that is not an iteration variable, and the "
                          "producers do not write all of it under %s",
                          cd, d, reads[r]->name, ld);
        continue;
      }
      const mlc_tir_iter_var *it = &c->block.iters[k];
      if (it->kind != MLC_TIR_ITER_SPATIAL)
        return sch_fail(s, MLC_SCH_ERR_REGION, "the region of %s would restrict the reduce iteration variable %s of %s",
                        reads[r]->name, it->var->name, cd);
      if (p->has[k] && !cl_range_eq(&p->ranges[k], &acc[d]))
        return sch_fail(s, MLC_SCH_ERR_REGION, "the producers give %s of %s two different regions", it->var->name, cd);
      int known = it->min->kind == MLC_TIR_INT_IMM && it->extent->kind == MLC_TIR_INT_IMM;
      if (!(known && covers(&acc[d], &outer, it->min->int_value, it->min->int_value + it->extent->int_value - 1)) &&
          !covers_sym(s, &acc[d], loop, it))
        return sch_fail(s, MLC_SCH_ERR_REGION,
                        "the regions of %s written under %s do not provably cover the domain of %s in %s",
                        reads[r]->name, ld, it->var->name, cd);
      p->has[k] = 1;
      p->ranges[k] = acc[d];
    }
  }
  p->at = cl_body_index(loop, prods, np, 1) + 1;
  return NULL;
}

mlc_status mlc_sch_apply_reverse_compute_at(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *c, *loop;
  sch_loc loc;
  int64_t pu;
  rca_plan p;
  MLC_RETURN_IF_ERROR(sch_arg_block(s, in, "block", &c));
  MLC_RETURN_IF_ERROR(sch_arg_location(s, in, "loop", &loop, &loc));
  MLC_RETURN_IF_ERROR(sch_arg_int_opt(s, in, "preserve_unit_loops", 0, &pu));
  if (loc == SCH_LOC_ROOT) return NULL;
  if (loc == SCH_LOC_INLINE) return mlc_sch_apply_reverse_compute_inline(s, in);
  MLC_RETURN_IF_ERROR(analyze(s, c, loop, &p));
  return cl_place(s, &p.nest, loop, p.at, p.has, p.ranges, pu != 0);
}

mlc_status mlc_sch_reverse_compute_at(mlc_sch *s, mlc_sch_rv block, mlc_sch_rv loop, int preserve_unit_loops) {
  mlc_sch_arg a[] = {MLC_SCH_RV_ARG(block), MLC_SCH_RV_ARG(loop), MLC_SCH_INT_ARG(1)};
  a[0].key = "block";
  a[1].key = "loop";
  a[2].key = "preserve_unit_loops";
  return mlc_sch_apply(s, MLC_SCH_INST_REVERSE_COMPUTE_AT, preserve_unit_loops ? 3 : 2, a, NULL, NULL);
}
