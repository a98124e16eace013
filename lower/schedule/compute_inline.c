/*
** compute_inline.c: sch.compute_inline(block=b).
**
** The block b computes one element of an intermediate buffer B per
** iteration with a single store B[v0, v1, ...] = value (the seeds'
** before_inline: B[vi, vj] = A[vi, vj] * 2).  Inlining removes b and its
** loops, and every load B[e0, e1, ...] in the function becomes value with
** v0 := e0, v1 := e1, ...; the allocation of B goes when nothing uses it.
**
** Legality (NOT_INLINABLE unless noted): b has no init and no reduce
** iteration variable, no predicate, its body is one store, to a buffer the
** function allocates (a parameter is the function's result), each index of
** the store is a distinct iteration variable and the value uses no other
** iteration variable, the value does not read B, and no other statement
** stores to B.  The value is evaluated where the consumers load B, later
** than b ran: a block between b and the last reader of B that writes a
** buffer the value reads is a DEPENDENCE refusal.
*/
#include "lower/schedule/compute_loc.h"

typedef struct ci_plan {
  mlc_tir_stmt *blk;
  const mlc_tir_stmt *store;
  mlc_tir_buffer *buf;
  cl_nest nest;
} ci_plan;

/* Nonzero if a store to |b| outside |skip| is in |st|. */
static int other_store(const mlc_tir_stmt *st, const mlc_tir_stmt *skip, const mlc_tir_buffer *b) {
  if (!st || st == skip) return 0;
  switch (st->kind) {
    case MLC_TIR_FOR: return other_store(st->loop.body, skip, b);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++)
        if (other_store(st->seq.stmts[i], skip, b)) return 1;
      return 0;
    case MLC_TIR_STORE: return st->store.buffer == b;
    case MLC_TIR_IF: return other_store(st->if_.then_s, skip, b) || other_store(st->if_.else_s, skip, b);
    case MLC_TIR_ALLOCATE: return other_store(st->alloc.body, skip, b);
    case MLC_TIR_BLOCK: return other_store(st->block.init, skip, b) || other_store(st->block.body, skip, b);
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return 0;
  }
  return 0;
}

static mlc_status analyze(mlc_sch *s, mlc_tir_stmt *blk, ci_plan *p) {
  const char *bd = sch_desc(s, blk);
  if (blk->block.init) return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s is a reduction (it has an init)", bd);
  for (int i = 0; i < blk->block.niters; i++)
    if (blk->block.iters[i].kind == MLC_TIR_ITER_REDUCE)
      return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s is a reduction (reduce iteration variable %s)", bd,
                      blk->block.iters[i].var->name);
  const mlc_tir_stmt *st = blk->block.body;
  if (!st || st->kind != MLC_TIR_STORE)
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s is not a single store (%s)", bd,
                    st && st->kind == MLC_TIR_SEQ ? "several statements" : "its body is not a store");
  mlc_tir_buffer *b = st->store.buffer;
  if (cl_is_param(s, b))
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s writes the parameter %s, a result of the function", bd,
                    b->name);
  if (blk->block.predicate) return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s has a predicate", bd);
  int used[CL_MAX_LOOPS] = {0};
  if (blk->block.niters > CL_MAX_LOOPS)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s has more than %d iteration variables", bd, CL_MAX_LOOPS);
  for (int d = 0; d < st->store.n; d++) {
    int k = mlc_tir_block_iter_index(blk, st->store.indices[d]);
    if (k < 0)
      return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "index %d of the store to %s in %s is not an iteration variable",
                      d, b->name, bd);
    if (used[k])
      return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s indexes %s twice with %s", bd, b->name,
                      blk->block.iters[k].var->name);
    used[k] = 1;
  }
  for (int k = 0; k < blk->block.niters; k++)
    if (!used[k] && mlc_tir_expr_uses_var(st->store.value, blk->block.iters[k].var))
      return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "the value stored by %s uses %s, which does not index %s", bd,
                      blk->block.iters[k].var->name, b->name);
  if (cl_expr_reads(st->store.value, b))
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s reads the buffer %s it writes", bd, b->name);
  if (other_store(s->func->body, blk, b))
    return sch_fail(s, MLC_SCH_ERR_NOT_INLINABLE, "%s is not the only writer of %s", bd, b->name);
  /* what the value reads must not change between b and the readers of B */
  mlc_tir_stmt *blocks[CL_MAX_BLOCKS];
  int at, nb = cl_scope_blocks(s, blk, blocks, &at);
  if (nb < 0 || at < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than %d blocks in the scope of %s", CL_MAX_BLOCKS, bd);
  int last = at;
  for (int i = at + 1; i < nb; i++)
    if (sch_block_reads(blocks[i], b)) last = i;
  mlc_tir_buffer *reads[64];
  int nr = cl_block_reads(blk, reads, 64);
  if (nr < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s reads more than 64 buffers", bd);
  for (int i = at + 1; i <= last; i++)
    for (int r = 0; r < nr; r++)
      if (sch_block_writes(blocks[i], reads[r]))
        return sch_fail(s, MLC_SCH_ERR_DEPENDENCE,
                        "%s writes %s, which %s reads, before %s is read: the inlined value would change",
                        sch_desc(s, blocks[i]), reads[r]->name, bd, b->name);
  MLC_RETURN_IF_ERROR(cl_nest_find(s, blk, &p->nest));
  p->blk = blk;
  p->store = st;
  p->buf = b;
  return NULL;
}

mlc_status cl_check_compute_inline(mlc_sch *s, mlc_tir_stmt *blk) {
  ci_plan p;
  return analyze(s, blk, &p);
}

/* A load of B becomes the stored value with the iteration variables
** replaced by the load's indices. */
static mlc_tir_expr *inline_load(void *ctx, mlc_tir_module *m, const mlc_tir_expr *load, mlc_tir_expr *const *idx) {
  const ci_plan *p = ctx;
  const mlc_tir_stmt *st = p->store;
  mlc_tir_var *vars[CL_MAX_LOOPS];
  int n = st->store.n;
  for (int d = 0; d < n; d++) vars[d] = st->store.indices[d]->var;
  (void)load;
  mlc_tir_subst sub = {n, vars, idx, 0, NULL, NULL, 0};
  return mlc_tir_expr_copy(m, st->store.value, &sub);
}

mlc_status mlc_sch_apply_compute_inline(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *blk;
  ci_plan p;
  MLC_RETURN_IF_ERROR(sch_arg_block(s, in, "block", &blk));
  MLC_RETURN_IF_ERROR(analyze(s, blk, &p));
  MLC_RETURN_IF_ERROR(cl_nest_remove(s, &p.nest, 1));
  if (cl_replace_loads_stmt(s->m, s->func->body, p.buf, inline_load, &p)) return mlc_oom();
  mlc_tir_stmt *alloc = cl_find_alloc(s, p.buf);
  if (alloc && !cl_buffer_used(s, p.buf)) MLC_RETURN_IF_ERROR(sch_replace(s, alloc, alloc->alloc.body));
  return cl_refresh_regions(s);
}

mlc_status mlc_sch_compute_inline(mlc_sch *s, mlc_sch_rv block) {
  mlc_sch_arg a[] = {MLC_SCH_RV_ARG(block)};
  a[0].key = "block";
  return mlc_sch_apply(s, MLC_SCH_INST_COMPUTE_INLINE, 1, a, NULL, NULL);
}
