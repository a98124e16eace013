/*
** cache_write.c: b1 = sch.cache_write(block=b, write_buffer_index=0,
** storage_scope="local").
**
** The |write_buffer_index|-th buffer block |b| writes (access.h: order of
** first access), say Y, gets a cache: a new buffer Y_SCOPE of Y's shape in
** the given scope (allocated at the top of the function) that |b| writes
** and reads instead of Y, and a block of the same name, in loops ax0, ax1,
** ... at the top level of |b|'s scope just after the loop nest holding
** |b|, that copies the region |b| writes back into Y.  reverse_compute_at
** can then move the copy next to the computation.
**
** Legality: a known scope and an index in range (ARGUMENT); nothing else
** in the loop nest holding |b| reads or writes Y, or it would see Y
** before the copy back (DEPENDENCE); Y is not allocated inside that nest
** (STRUCTURE); |b| does not read Y before writing it, i.e. it reads Y only
** with an init (STRUCTURE: the cache does not start with Y's values); the
** region written has a bound (REGION), and is written exactly: every
** store's indices are, per dimension, a constant or a distinct spatial
** iteration variable plus a constant, the same for every store, outside
** any if (REGION: otherwise the copy back would write elements |b| did
** not).  An inexact region is accepted when Y is an allocation that no
** other statement of the function writes: its other elements hold
** nothing to keep.
*/
#include "lower/arith.h"
#include "lower/schedule/access.h"

typedef struct exact {
  mlc_sch *s;
  const mlc_tir_stmt *blk;
  const mlc_tir_buffer *buf;
  mlc_arith *an;
  int ok, seen, under_if;
  mlc_tir_expr *first[64]; /* the first store's indices, simplified */
} exact;

/* Nonzero if |e| is a constant, or a spatial iteration variable of the block (plus a constant) not in |used|. */
static int box_index(exact *x, const mlc_tir_expr *e, const mlc_tir_var **used, int d) {
  if (e->kind == MLC_TIR_INT_IMM) return 1;
  const mlc_tir_expr *v = e;
  if (e->kind == MLC_TIR_BINARY && (e->bin.op == MLC_TIR_ADD || e->bin.op == MLC_TIR_SUB)) {
    if (e->bin.b->kind == MLC_TIR_INT_IMM)
      v = e->bin.a;
    else if (e->bin.op == MLC_TIR_ADD && e->bin.a->kind == MLC_TIR_INT_IMM)
      v = e->bin.b;
  }
  if (v->kind != MLC_TIR_VAR_REF) return 0;
  for (int i = 0; i < x->blk->block.niters; i++) {
    const mlc_tir_iter_var *it = &x->blk->block.iters[i];
    if (it->var != v->var) continue;
    if (it->kind != MLC_TIR_ITER_SPATIAL) return 0;
    for (int k = 0; k < d; k++)
      if (used[k] == v->var) return 0;
    used[d] = v->var;
    return 1;
  }
  return 0;
}

static void check_stores(exact *x, const mlc_tir_stmt *st) {
  if (!st || !x->ok) return;
  switch (st->kind) {
    case MLC_TIR_FOR: check_stores(x, st->loop.body); return;
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) check_stores(x, st->seq.stmts[i]);
      return;
    case MLC_TIR_IF:
      x->under_if++;
      check_stores(x, st->if_.then_s);
      check_stores(x, st->if_.else_s);
      x->under_if--;
      return;
    case MLC_TIR_ALLOCATE: check_stores(x, st->alloc.body); return;
    case MLC_TIR_BLOCK:
      check_stores(x, st->block.init);
      check_stores(x, st->block.body);
      return;
    case MLC_TIR_STORE: {
      if (st->store.buffer != x->buf) return;
      const mlc_tir_var *used[64] = {0};
      if (x->under_if || st->store.n > 64) {
        x->ok = 0;
        return;
      }
      for (int d = 0; d < st->store.n && x->ok; d++) {
        mlc_tir_expr *e = mlc_arith_simplify(x->an, x->s->m, st->store.indices[d]);
        if (!e || !box_index(x, e, used, d)) x->ok = 0;
        else if (!x->seen) x->first[d] = e;
        else if (!mlc_arith_prove_equal(x->an, e, x->first[d])) x->ok = 0;
      }
      x->seen = 1;
      return;
    }
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return;
  }
}

/* Nonzero when |blk| writes exactly a box of |buf| (see the top). */
static mlc_status writes_box(mlc_sch *s, const mlc_tir_stmt *blk, const mlc_tir_buffer *buf, int *ok) {
  exact x = {s, blk, buf, NULL, 1, 0, 0, {0}};
  MLC_RETURN_IF_ERROR(mlc_arith_create(mlc_allocator_default(), &x.an));
  if (blk->block.predicate) x.ok = 0;
  check_stores(&x, blk->block.init);
  check_stores(&x, blk->block.body);
  mlc_arith_destroy(x.an);
  *ok = x.ok && x.seen;
  return mlc_tir_module_oom(s->m) ? mlc_oom() : NULL;
}

mlc_status mlc_sch_apply_cache_write(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *blk, *nest;
  mlc_tir_buffer *buf;
  int scope;
  const char *scope_name;
  MLC_RETURN_IF_ERROR(sch_cache_args(s, in, 1, &blk, &buf, &nest, &scope, &scope_name));
  const char *bd = sch_desc(s, blk);
  if (sch_accesses_outside(nest, buf, 0, blk))
    return sch_fail(s, MLC_SCH_ERR_DEPENDENCE,
                    "%s, the loop nest holding %s, also accesses %s: it would not see what the copy writes back",
                    sch_desc(s, nest), bd, buf->name);
  mlc_tir_stmt *alloc = sch_find_alloc(s, buf);
  if (alloc && sch_contains(nest, alloc))
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is allocated inside %s: no room for a copy after it", buf->name,
                    sch_desc(s, nest));
  if (!blk->block.init && sch_block_reads(blk, buf))
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE,
                    "%s reads %s without an init: the cache would not start with the values of %s", bd, buf->name,
                    buf->name);
  int ok = 0;
  MLC_RETURN_IF_ERROR(writes_box(s, blk, buf, &ok));
  if (!ok && !(alloc && !sch_accesses_outside(s->func->body, buf, 1, blk)))
    return sch_fail(s, MLC_SCH_ERR_REGION,
                    "%s does not write a whole box of %s (indices not a distinct spatial iteration variable plus a "
                    "constant per dimension, a predicate or an if): copying the box back would overwrite other "
                    "elements",
                    bd, buf->name);
  return sch_cache_stage(s, in, blk, nest, buf, scope, scope_name, 1);
}

mlc_status mlc_sch_cache_write(mlc_sch *s, mlc_sch_rv block, int index, const char *scope, mlc_sch_rv *out) {
  return sch_cache_inst(s, MLC_SCH_INST_CACHE_WRITE, "write_buffer_index", block, index, scope, out);
}
