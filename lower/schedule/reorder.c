/*
** reorder.c: sch.reorder(ordered_loops=[l3, l1]) permutes loops of one nest
** into the given order (outermost first).  The loops take the places the
** given loops held in the chain from the outermost to the innermost of
** them; loops of the chain that are not named keep their places:
**
**   for i, j, k in T.grid(...)   reorder [k, i]  ->   for k, j, i in T.grid(...)
**
** The loop statements are relinked, not rebuilt: every handle stays valid.
**
** Legality.  Each block instance computes one element (spatial iteration
** variables) or accumulates into it (reduce ones, whose init runs when the
** reduce variables are at the start of their domain, the first instance
** whatever the order of a box of loops), so the order of a block's
** instances does not matter unless it reads what it writes elsewhere.
** Refused:
**   - a loop given twice, loops not on one nest (LOOP_NEST);
**   - a statement other than a loop between the outermost and innermost
**     given loop (a sequence, a condition, an allocation, a block: its
**     work would be reordered with the loops) (DEPENDENCE);
**   - a loop whose min or extent uses a loop that the new order puts
**     inside it (DEPENDENCE);
**   - a block under the loops that reads a buffer it writes at other
**     indices than it writes (a scan), or two blocks under the loops of
**     which one writes a buffer the other accesses: the order of their
**     iterations would change what they see (DEPENDENCE).  This is
**     conservative: reorder loops before compute_at puts producers under
**     them.
*/
#include <string.h>

#include "lower/schedule/sched_int.h"

static const char *stmt_word(const mlc_tir_stmt *st) {
  switch (st->kind) {
    case MLC_TIR_FOR: return "loop";
    case MLC_TIR_SEQ: return "sequence of statements";
    case MLC_TIR_STORE: return "store";
    case MLC_TIR_IF: return "condition";
    case MLC_TIR_ALLOCATE: return "allocation";
    case MLC_TIR_EVALUATE: return "evaluation";
    case MLC_TIR_BLOCK: return "block";
    case MLC_TIR_ASSERT: return "assertion";
  }
  return "statement";
}

/* A load of |b| in |e| whose indices differ from |idx|. */
static int other_load(const mlc_tir_expr *e, const mlc_tir_buffer *b, int n, mlc_tir_expr *const *idx) {
  if (!e) return 0;
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF: return 0;
    case MLC_TIR_BINARY: return other_load(e->bin.a, b, n, idx) || other_load(e->bin.b, b, n, idx);
    case MLC_TIR_NOT:
    case MLC_TIR_CAST:
    case MLC_TIR_BROADCAST: return other_load(e->un.a, b, n, idx);
    case MLC_TIR_RAMP: return other_load(e->ramp.base, b, n, idx) || other_load(e->ramp.stride, b, n, idx);
    case MLC_TIR_SELECT:
      return other_load(e->select.c, b, n, idx) || other_load(e->select.t, b, n, idx) ||
             other_load(e->select.f, b, n, idx);
    case MLC_TIR_LOAD:
      if (e->load.buffer == b) {
        if (e->load.n != n) return 1;
        for (int i = 0; i < n; i++)
          if (!mlc_tir_expr_equal(e->load.indices[i], idx[i])) return 1;
      }
      for (int i = 0; i < e->load.n; i++)
        if (other_load(e->load.indices[i], b, n, idx)) return 1;
      return 0;
    case MLC_TIR_CALL:
      for (int i = 0; i < e->call.n; i++)
        if (other_load(e->call.args[i], b, n, idx)) return 1;
      return 0;
    case MLC_TIR_REDUCE: return other_load(e->reduce.source, b, n, idx);
  }
  return 0;
}

/* Nonzero if a statement under |st| loads |b| at other indices than |store| writes. */
static int reads_elsewhere(const mlc_tir_stmt *st, const mlc_tir_stmt *store) {
  if (!st) return 0;
  const mlc_tir_buffer *b = store->store.buffer;
  int n = store->store.n;
  mlc_tir_expr *const *idx = store->store.indices;
  switch (st->kind) {
    case MLC_TIR_FOR:
      return other_load(st->loop.min, b, n, idx) || other_load(st->loop.extent, b, n, idx) ||
             reads_elsewhere(st->loop.body, store);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++)
        if (reads_elsewhere(st->seq.stmts[i], store)) return 1;
      return 0;
    case MLC_TIR_STORE:
      if (other_load(st->store.value, b, n, idx)) return 1;
      for (int i = 0; i < st->store.n; i++)
        if (other_load(st->store.indices[i], b, n, idx)) return 1;
      return 0;
    case MLC_TIR_IF:
      return other_load(st->if_.cond, b, n, idx) || reads_elsewhere(st->if_.then_s, store) ||
             reads_elsewhere(st->if_.else_s, store);
    case MLC_TIR_ALLOCATE: return reads_elsewhere(st->alloc.body, store);
    case MLC_TIR_EVALUATE: return other_load(st->eval.value, b, n, idx);
    case MLC_TIR_BLOCK:
      if (other_load(st->block.predicate, b, n, idx)) return 1;
      return reads_elsewhere(st->block.init, store) || reads_elsewhere(st->block.body, store);
    case MLC_TIR_ASSERT:
      if (other_load(st->assert_.cond, b, n, idx)) return 1;
      for (int i = 0; i < st->assert_.nvals; i++)
        if (other_load(st->assert_.vals[i], b, n, idx)) return 1;
      return 0;
  }
  return 0;
}

/* A store under |st| (within |blk|) whose buffer |blk| loads elsewhere; NULL if none. */
static const mlc_tir_stmt *scan_store(const mlc_tir_stmt *blk, const mlc_tir_stmt *st) {
  if (!st) return NULL;
  const mlc_tir_stmt *r = NULL;
  switch (st->kind) {
    case MLC_TIR_FOR: return scan_store(blk, st->loop.body);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n && !r; i++) r = scan_store(blk, st->seq.stmts[i]);
      return r;
    case MLC_TIR_STORE: return reads_elsewhere(blk, st) ? st : NULL;
    case MLC_TIR_IF:
      r = scan_store(blk, st->if_.then_s);
      return r ? r : scan_store(blk, st->if_.else_s);
    case MLC_TIR_ALLOCATE: return scan_store(blk, st->alloc.body);
    case MLC_TIR_BLOCK:
      r = scan_store(blk, st->block.init);
      return r ? r : scan_store(blk, st->block.body);
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return NULL;
  }
  return NULL;
}

/* Collects the buffers stored to under |st| into |out| (deduplicated); the count or -1 when full. */
static int stored_buffers(const mlc_tir_stmt *st, mlc_tir_buffer **out, int max, int k) {
  if (!st || k < 0) return k;
  switch (st->kind) {
    case MLC_TIR_FOR: return stored_buffers(st->loop.body, out, max, k);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) k = stored_buffers(st->seq.stmts[i], out, max, k);
      return k;
    case MLC_TIR_STORE:
      for (int i = 0; i < k; i++)
        if (out[i] == st->store.buffer) return k;
      if (k >= max) return -1;
      out[k] = st->store.buffer;
      return k + 1;
    case MLC_TIR_IF: return stored_buffers(st->if_.else_s, out, max, stored_buffers(st->if_.then_s, out, max, k));
    case MLC_TIR_ALLOCATE: return stored_buffers(st->alloc.body, out, max, k);
    case MLC_TIR_BLOCK: return stored_buffers(st->block.body, out, max, stored_buffers(st->block.init, out, max, k));
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return k;
  }
  return k;
}

/* The order dependences among the blocks under |body| (the innermost reordered loop's body). */
static mlc_status check_blocks(mlc_sch *s, const mlc_tir_stmt *inner, const mlc_tir_stmt *body) {
  mlc_tir_stmt *blocks[256];
  int nb = body->kind == MLC_TIR_BLOCK ? (blocks[0] = (mlc_tir_stmt *)body, 1) : sch_child_blocks(body, blocks, 256);
  if (nb < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than 256 blocks under %s", sch_desc(s, inner));
  for (int i = 0; i < nb; i++) {
    const mlc_tir_stmt *st = scan_store(blocks[i], blocks[i]);
    if (st)
      return sch_fail(s, MLC_SCH_ERR_DEPENDENCE,
                      "%s reads %s at other indices than it writes: its iterations depend on their order",
                      sch_desc(s, blocks[i]), st->store.buffer->name);
  }
  for (int i = 0; i < nb; i++) {
    mlc_tir_buffer *bufs[256];
    int n = stored_buffers(blocks[i], bufs, 256, 0);
    if (n < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s writes more than 256 buffers", sch_desc(s, blocks[i]));
    for (int j = 0; j < nb; j++) {
      if (j == i) continue;
      for (int k = 0; k < n; k++)
        if (sch_block_reads(blocks[j], bufs[k]) || sch_block_writes(blocks[j], bufs[k]))
          return sch_fail(s, MLC_SCH_ERR_DEPENDENCE,
                          "%s writes %s, which %s under the same loops accesses: reordering the loops would change "
                          "which values it sees",
                          sch_desc(s, blocks[i]), bufs[k]->name, sch_desc(s, blocks[j]));
    }
  }
  return NULL;
}

mlc_status mlc_sch_apply_reorder(mlc_sch *s, mlc_sch_inst *in) {
  const mlc_sch_arg *ll;
  MLC_RETURN_IF_ERROR(sch_arg_list(s, in, "ordered_loops", &ll));
  int n = ll->n;
  if (n < 1 || n > MLC_SCH_MAX_OUTS)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "ordered_loops: %d loops given (1 to %d)", n, MLC_SCH_MAX_OUTS);
  mlc_tir_stmt *L[MLC_SCH_MAX_OUTS];
  for (int i = 0; i < n; i++) MLC_RETURN_IF_ERROR(sch_item_loop(s, &ll->items[i], "ordered_loops", &L[i]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (L[i] == L[j]) return sch_fail(s, MLC_SCH_ERR_LOOP_NEST, "%s is given twice", sch_desc(s, L[i]));
  /* the outermost given loop: the one that contains all others */
  mlc_tir_stmt *top = NULL;
  for (int i = 0; i < n && !top; i++) {
    int all = 1;
    for (int j = 0; j < n && all; j++)
      if (j != i && !sch_contains(L[i]->loop.body, L[j])) all = 0;
    if (all) top = L[i];
  }
  if (!top) {
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        if (i != j && !sch_contains(L[i], L[j]) && !sch_contains(L[j], L[i]))
          return sch_fail(s, MLC_SCH_ERR_LOOP_NEST, "%s and %s are not in one nest: neither is inside the other",
                          sch_desc(s, L[i]), sch_desc(s, L[j]));
    return sch_fail(s, MLC_SCH_ERR_LOOP_NEST, "the loops are not in one nest");
  }
  /* the chain from |top| down to the deepest given loop: only loops */
  mlc_tir_stmt *chain[512];
  int len = 0, found = 0;
  for (mlc_tir_stmt *c = top;; c = c->loop.body) {
    if (len >= 512) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than 512 loops between the reordered loops");
    chain[len++] = c;
    for (int i = 0; i < n; i++)
      if (L[i] == c) found++;
    if (found == n) break;
    mlc_tir_stmt *next = c->loop.body;
    if (!next || next->kind != MLC_TIR_FOR) {
      const mlc_tir_stmt *below = NULL;
      for (int i = 0; i < n && !below; i++)
        if (sch_contains(c->loop.body, L[i])) below = L[i];
      return sch_fail(s, MLC_SCH_ERR_DEPENDENCE,
                      "a %s lies between %s and %s: reorder across a statement that depends on the order",
                      next ? stmt_word(next) : "statement", sch_desc(s, c), sch_desc(s, below));
    }
  }
  /* the new chain: the given loops in the given order at the places they hold */
  mlc_tir_stmt *nc[512];
  int k = 0;
  for (int i = 0; i < len; i++) {
    int given = 0;
    for (int j = 0; j < n; j++)
      if (chain[i] == L[j]) given = 1;
    nc[i] = given ? L[k++] : chain[i];
  }
  for (int a = 0; a < len; a++)
    for (int b = a + 1; b < len; b++)
      if (mlc_tir_expr_uses_var(nc[a]->loop.extent, nc[b]->loop.var) ||
          mlc_tir_expr_uses_var(nc[a]->loop.min, nc[b]->loop.var))
        return sch_fail(s, MLC_SCH_ERR_DEPENDENCE, "the range of %s uses %s: it must stay inside it",
                        sch_desc(s, nc[a]), sch_desc(s, nc[b]));
  mlc_tir_stmt *body = chain[len - 1]->loop.body;
  MLC_RETURN_IF_ERROR(check_blocks(s, chain[len - 1], body));

  /* ---- relink ---- */
  mlc_tir_stmt **slot = sch_slot(s, top, NULL);
  if (!slot) return mlc_make_status(MLC_INTERNAL, "reorder: the loop is not in the function");
  for (int i = 0; i < len - 1; i++) nc[i]->loop.body = nc[i + 1];
  nc[len - 1]->loop.body = body;
  *slot = nc[0];
  return NULL;
}

mlc_status mlc_sch_reorder(mlc_sch *s, int nloops, const mlc_sch_rv *loops) {
  if (nloops < 0 || nloops > MLC_SCH_MAX_OUTS || (nloops && !loops))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "reorder: %d loops (0 to %d)", nloops, MLC_SCH_MAX_OUTS);
  mlc_sch_arg items[MLC_SCH_MAX_OUTS];
  for (int i = 0; i < nloops; i++) items[i] = MLC_SCH_RV_ARG(loops[i]);
  mlc_sch_arg a = MLC_SCH_NONE_ARG;
  a.key = "ordered_loops";
  a.kind = MLC_SCH_ARG_LIST;
  a.n = nloops;
  a.items = items;
  return mlc_sch_apply(s, MLC_SCH_INST_REORDER, 1, &a, NULL, NULL);
}
