/*
** schedule_default.c: the default CPU schedule (rules, no search).
**
** Each stage te produced is a perfect nest of serial loops (spatial axes
** outside, reduce axes inside) around one block.  The rule: when the nest
** does enough work to be worth the thread pool's hand-off, the outermost
** spatial loop whose extent is large enough to split (or symbolic) becomes
** a parallel loop, so that a batch-1 conv parallelizes over its channels.
** Inner loops are left to LLVM's vectorizer, which sees the target's vector
** width.  Loops bound to a reduce iteration variable never run in parallel.
*/
#include "lower/lower.h"

/* Work below this many innermost iterations stays serial. */
#define PARALLEL_MIN_WORK 32768
/* Smallest extent worth splitting across threads. */
#define PARALLEL_MIN_EXTENT 4

static int64_t const_extent(const mlc_tir_expr *e) {
  return e && e->kind == MLC_TIR_INT_IMM ? e->int_value : -1;
}

/* Nonzero if a reduce iter var of |blk| is bound through loop variable |v|. */
static int binds_reduce(const mlc_tir_stmt *blk, const mlc_tir_var *v) {
  for (int i = 0; i < blk->block.niters; i++) {
    const mlc_tir_iter_var *it = &blk->block.iters[i];
    if (it->kind == MLC_TIR_ITER_REDUCE && it->binding && mlc_tir_expr_uses_var(it->binding, v))
      return 1;
  }
  return 0;
}

static void schedule_nest(mlc_tir_stmt *top) {
  mlc_tir_stmt *chain[64];
  int n = 0;
  mlc_tir_stmt *s = top;
  while (s && s->kind == MLC_TIR_FOR && n < 64) {
    chain[n++] = s;
    s = s->loop.body;
  }
  if (!s || s->kind != MLC_TIR_BLOCK) return; /* not a te stage: leave it */
  int64_t work = 1;
  int symbolic = 0;
  for (int i = 0; i < n; i++) {
    if (chain[i]->loop.kind == MLC_TIR_FOR_PARALLEL) return; /* already scheduled */
    int64_t e = const_extent(chain[i]->loop.extent);
    if (e < 0)
      symbolic = 1;
    else if (e > 0 && work < INT64_MAX / e)
      work *= e;
  }
  if (!symbolic && work < PARALLEL_MIN_WORK) return;
  for (int i = 0; i < n; i++) {
    mlc_tir_stmt *l = chain[i];
    if (binds_reduce(s, l->loop.var) || l->loop.kind != MLC_TIR_FOR_SERIAL) return;
    int64_t e = const_extent(l->loop.extent);
    if (e < 0 || e >= PARALLEL_MIN_EXTENT) {
      l->loop.kind = MLC_TIR_FOR_PARALLEL;
      return;
    }
  }
}

static void visit(mlc_tir_stmt *s) {
  if (!s) return;
  switch (s->kind) {
    case MLC_TIR_FOR: schedule_nest(s); break;
    case MLC_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++) visit(s->seq.stmts[i]);
      break;
    case MLC_TIR_ALLOCATE: visit(s->alloc.body); break;
    case MLC_TIR_IF:
      visit(s->if_.then_s);
      visit(s->if_.else_s);
      break;
    case MLC_TIR_BLOCK:
      if (s->block.niters == 0) visit(s->block.body); /* a root block */
      break;
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: break;
  }
}

mlc_status mlc_lower_default_schedule(mlc_tir_module *tm, const mlc_lower_options *opt) {
  if (opt && opt->no_parallel) return NULL;
  for (int i = 0; i < tm->nfuncs; i++) visit(tm->funcs[i]->body);
  return NULL;
}
