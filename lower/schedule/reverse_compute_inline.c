/*
** reverse_compute_inline.c: sch.reverse_compute_inline(block=c).
**
** The consumer block c reads one element of its producer's buffer B per
** iteration (C[vi, vj] = T.max(B[vi, vj], 0)); folding it into the producer
** p (B[vi, vj] = A[vi, vj] * 2) makes p store c's expression of its value to
** c's output (C[vi, vj] = T.max(A[vi, vj] * 2, 0)); c, its loops and B go.
**
** Legality (NOT_INLINABLE unless noted):
**   - c has no init, no reduce iteration variable, no predicate; its body is
**     one store whose indices are distinct iteration variables, and it does
**     not read what it writes;
**   - exactly one buffer c reads is written by a block before it (B, by
**     p); B is allocated by the function (not a parameter), c reads it
**     through its iteration variables only (each index a distinct one,
**     every iteration variable used), and no other block reads B;
**   - p is a single store to B, the only one in the function, with no init
**     (a reduction's element is not complete when its store runs) and no
**     predicate, its indices distinct spatial iteration variables covering
**     all of them, and over the same domains as c's;
**   - c's store and loads move to where p runs: a block between p and c that
**     writes what c reads or touches what c writes is a DEPENDENCE refusal.
*/
#include "lower/schedule/compute_loc.h"
#include "lower/tir_visit.h"

typedef struct rci_plan {
  mlc_tir_stmt *prod, *cons;
  mlc_tir_buffer *buf;
  mlc_tir_var *from[CL_MAX_LOOPS]; /* c's iteration variables */
  mlc_tir_expr *to[CL_MAX_LOOPS];  /* the producer's, in their place */
  cl_nest nest;
} rci_plan;

/* Checks that |idx| (|n| indices) are distinct iteration variables of
** |blk| covering all of them when |all|; fills perm[d] = iteration
** variable of dimension d.  0 when so. */
static int trivial_indices(const mlc_tir_stmt *blk, int n, mlc_tir_expr *const *idx, int all, int *perm) {
  int used[CL_MAX_LOOPS] = {0};
  if (blk->block.niters > CL_MAX_LOOPS) return -1;
  for (int d = 0; d < n; d++) {
    int k = mlc_tir_block_iter_index(blk, idx[d]);
    if (k < 0 || used[k]) return -1;
    used[k] = 1;
    if (perm) perm[d] = k;
  }
  if (all)
    for (int k = 0; k < blk->block.niters; k++)
      if (!used[k]) return -1;
  return 0;
}

/* The loads of one buffer in an expression: the first, and whether all
** have the same indices. */
typedef struct loads {
  const mlc_tir_buffer *b;
  const mlc_tir_expr *first;
  int differ;
} loads;

static int loads_pre(void *ctx, const mlc_tir_expr *e) {
  loads *l = ctx;
  if (e->kind != MLC_TIR_LOAD || e->load.buffer != l->b) return MLC_TIR_VISIT_CONTINUE;
  if (!l->first) {
    l->first = e;
    return MLC_TIR_VISIT_CONTINUE;
  }
  int same = l->first->load.n == e->load.n;
  for (int i = 0; same && i < e->load.n; i++) same = mlc_tir_expr_equal(l->first->load.indices[i], e->load.indices[i]);
  l->differ |= !same;
  return MLC_TIR_VISIT_CONTINUE;
}

static loads find_loads(const mlc_tir_expr *e, const mlc_tir_buffer *b) {
  loads l = {b, NULL, 0};
  mlc_tir_visitor v = {0};
  v.ctx = &l;
  v.pre_expr = loads_pre;
  mlc_tir_visit_expr(&v, e);
  return l;
}

static mlc_status analyze(mlc_sch *s, mlc_tir_stmt *c, rci_plan *p) {
  const char *cd = sch_desc(s, c);
  if (c->block.init) return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s is a reduction (it has an init)", cd);
  for (int i = 0; i < c->block.niters; i++)
    if (c->block.iters[i].kind == MLC_TIR_ITER_REDUCE)
      return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s is a reduction (reduce iteration variable %s)", cd,
                      c->block.iters[i].var->name);
  const mlc_tir_stmt *st = c->block.body;
  if (!st || st->kind != MLC_TIR_STORE)
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s is not a single store (%s)", cd,
                    st && st->kind == MLC_TIR_SEQ ? "several statements" : "its body is not a store");
  if (c->block.predicate) return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s has a predicate", cd);
  mlc_tir_buffer *out = st->store.buffer;
  if (trivial_indices(c, st->store.n, st->store.indices, 0, NULL))
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE,
                    "the indices of the store to %s in %s are not distinct iteration variables", out->name, cd);
  if (cl_expr_reads(st->store.value, out))
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s reads the buffer %s it writes", cd, out->name);
  /* the one producer */
  mlc_tir_stmt *blocks[CL_MAX_BLOCKS];
  int at, nb = cl_scope_blocks(s, c, blocks, &at);
  if (nb < 0 || at < 0)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than %d blocks in the scope of %s", CL_MAX_BLOCKS, cd);
  mlc_tir_buffer *reads[64];
  int nr = cl_block_reads(c, reads, 64);
  if (nr < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s reads more than 64 buffers", cd);
  mlc_tir_stmt *prod = NULL;
  mlc_tir_buffer *b = NULL;
  int pat = -1;
  for (int r = 0; r < nr; r++)
    for (int i = at - 1; i >= 0; i--)
      if (sch_block_writes(blocks[i], reads[r])) {
        if (b && b != reads[r])
          return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s reads the results of several blocks (%s and %s)", cd,
                          b->name, reads[r]->name);
        if (prod && prod != blocks[i])
          return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s is written by several blocks (%s and %s)",
                          reads[r]->name, sch_desc(s, prod), sch_desc(s, blocks[i]));
        b = reads[r];
        prod = blocks[i];
        pat = i;
      }
  if (!prod) return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s has no producer block", cd);
  const char *pd = sch_desc(s, prod);
  if (cl_is_param(s, b))
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s is a parameter: %s would no longer write it", b->name, pd);
  loads lds = find_loads(st->store.value, b);
  const mlc_tir_expr *ld = lds.first;
  int cperm[CL_MAX_LOOPS], pperm[CL_MAX_LOOPS];
  if (!ld || lds.differ || trivial_indices(c, ld->load.n, ld->load.indices, 1, cperm))
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE,
                    "%s does not read one element of %s per iteration (each index a distinct iteration variable)",
                    cd, b->name);
  for (int i = 0; i < nb; i++)
    if (i != at && blocks[i] != prod && sch_block_reads(blocks[i], b))
      return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s also reads %s", sch_desc(s, blocks[i]), b->name);
  /* the producer */
  if (prod->block.init)
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "the producer %s is a reduction: its element is not complete when its store runs",
                    pd);
  const mlc_tir_stmt *ps = prod->block.body;
  if (!ps || ps->kind != MLC_TIR_STORE)
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "the producer %s is not a single store", pd);
  if (prod->block.predicate) return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "the producer %s has a predicate", pd);
  for (int i = 0; i < prod->block.niters; i++)
    if (prod->block.iters[i].kind == MLC_TIR_ITER_REDUCE)
      return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "the producer %s is a reduction (reduce iteration variable %s)",
                      pd, prod->block.iters[i].var->name);
  if (ps->store.n != ld->load.n || trivial_indices(prod, ps->store.n, ps->store.indices, 1, pperm))
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE,
                    "the producer %s does not write one element of %s per iteration variable", pd, b->name);
  if (cl_expr_reads(ps->store.value, b))
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "the producer %s reads the buffer %s it writes", pd, b->name);
  for (int d = 0; d < ps->store.n; d++) {
    const mlc_tir_iter_var *ci = &c->block.iters[cperm[d]], *pi = &prod->block.iters[pperm[d]];
    if (!mlc_tir_expr_equal(ci->min, pi->min) || !mlc_tir_expr_equal(ci->extent, pi->extent))
      return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE,
                      "%s and its producer %s iterate over different domains on dimension %d of %s (%s and %s)", cd,
                      pd, d, b->name, ci->var->name, pi->var->name);
    p->from[d] = ci->var;
    p->to[d] = mlc_tir_ref(s->m, pi->var);
    if (!p->to[d]) return mlc_oom();
  }
  /* c's accesses move up to where the producer runs */
  mlc_tir_buffer *writes[8];
  int nw = cl_block_writes(c, writes, 8);
  for (int i = pat + 1; i < at; i++) {
    for (int r = 0; r < nr; r++)
      if (reads[r] != b && sch_block_writes(blocks[i], reads[r]))
        return sch_fail(s, MLC_SCH_ERR_DEPENDENCE, "%s writes %s between %s and %s, which reads it",
                        sch_desc(s, blocks[i]), reads[r]->name, pd, cd);
    for (int w = 0; w < nw; w++)
      if (sch_block_writes(blocks[i], writes[w]) || sch_block_reads(blocks[i], writes[w]))
        return sch_fail(s, MLC_SCH_ERR_DEPENDENCE, "%s uses %s between %s and %s, which writes it",
                        sch_desc(s, blocks[i]), writes[w]->name, pd, cd);
  }
  MLC_RETURN_IF_ERROR(cl_nest_find(s, c, &p->nest));
  p->prod = prod;
  p->cons = c;
  p->buf = b;
  return NULL;
}

static mlc_tir_expr *producer_value(void *ctx, mlc_tir_module *m, const mlc_tir_expr *load, mlc_tir_expr *const *idx) {
  const rci_plan *p = ctx;
  (void)m;
  (void)load;
  (void)idx;
  return p->prod->block.body->store.value;
}

mlc_status mlc_sch_apply_reverse_compute_inline(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *c;
  rci_plan p;
  MLC_RETURN_IF_ERROR(sch_arg_block(s, in, "block", &c));
  MLC_RETURN_IF_ERROR(analyze(s, c, &p));
  mlc_tir_module *m = s->m;
  const mlc_tir_stmt *cs = c->block.body;
  int n = p.prod->block.body->store.n;
  mlc_tir_subst sub = {n, p.from, p.to, 0, NULL, NULL, 0};
  mlc_tir_expr *v = mlc_tir_expr_copy(m, cs->store.value, &sub);
  v = v ? cl_replace_loads(m, v, p.buf, producer_value, &p) : NULL;
  mlc_tir_expr **idx = MLC_ARENA_ARRAY(m->arena, (size_t)(cs->store.n ? cs->store.n : 1), mlc_tir_expr *);
  if (!v || !idx) return mlc_oom();
  for (int d = 0; d < cs->store.n; d++)
    if (!(idx[d] = mlc_tir_expr_copy(m, cs->store.indices[d], &sub))) return mlc_oom();
  mlc_tir_stmt *store = mlc_tir_store(m, cs->store.buffer, cs->store.n, idx, v);
  if (!store) return mlc_oom();
  MLC_RETURN_IF_ERROR(cl_nest_remove(s, &p.nest, 1));
  p.prod->block.body = store;
  mlc_tir_stmt *alloc = cl_find_alloc(s, p.buf);
  if (alloc && !cl_buffer_used(s, p.buf)) MLC_RETURN_IF_ERROR(sch_replace(s, alloc, alloc->alloc.body));
  return cl_refresh_regions(s);
}

mlc_status mlc_sch_reverse_compute_inline(mlc_sch *s, mlc_sch_rv block) {
  mlc_sch_arg a[] = {MLC_SCH_RV_ARG(block)};
  a[0].key = "block";
  return mlc_sch_apply(s, MLC_SCH_INST_REVERSE_COMPUTE_INLINE, 1, a, NULL, NULL);
}
