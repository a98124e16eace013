/*
** schedule_default.c: the default CPU schedule (rules, no search), written
** as schedule primitives so that every kernel's schedule is a trace.
**
** Each stage te produced is a perfect nest of serial loops (spatial axes
** outside, reduce axes inside) around one block.  The rule: when the nest
** does enough work to be worth the thread pool's hand-off, the outermost
** spatial loop whose extent is large enough to split (or symbolic) becomes
** a parallel loop (sch.parallel), so that a batch-1 conv parallelizes over
** its channels.  Loops bound to a reduce iteration variable never run in
** parallel.
*/
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "lower/lower.h"
#include "lower/schedule/schedule.h"

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
    if (it->kind == MLC_TIR_ITER_REDUCE && it->binding && mlc_tir_expr_uses_var(it->binding, v)) return 1;
  }
  return 0;
}

/* The rule for one stage block. */
static mlc_status schedule_stage(mlc_sch *s, mlc_sch_rv block, const mlc_lower_options *opt) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0;
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  if (!blk || blk->block.niters == 0 || (opt && opt->no_parallel)) return NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  int64_t work = 1;
  int symbolic = 0;
  for (int i = 0; i < n; i++) {
    const mlc_tir_stmt *l = mlc_sch_rv_stmt(s, loops[i]);
    if (l->loop.kind == MLC_TIR_FOR_PARALLEL) return NULL; /* already scheduled */
    int64_t e = const_extent(l->loop.extent);
    if (e < 0)
      symbolic = 1;
    else if (e > 0 && work < INT64_MAX / e)
      work *= e;
  }
  if (!symbolic && work < PARALLEL_MIN_WORK) return NULL;
  for (int i = 0; i < n; i++) {
    const mlc_tir_stmt *l = mlc_sch_rv_stmt(s, loops[i]);
    if (binds_reduce(blk, l->loop.var) || l->loop.kind != MLC_TIR_FOR_SERIAL) return NULL;
    int64_t e = const_extent(l->loop.extent);
    if (e < 0 || e >= PARALLEL_MIN_EXTENT) return mlc_sch_parallel(s, loops[i]);
  }
  return NULL;
}

/* Schedules |f| of |tm|; its scheduled copy replaces it; the trace to *|trace|. */
static mlc_status schedule_func(mlc_tir_module *tm, mlc_tir_func *f, const mlc_lower_options *opt, char **trace) {
  mlc_sch *s = NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_create(tm, f, 0, &s));
  mlc_sch_rv blocks[MLC_SCH_MAX_OUTS];
  int n = 0;
  mlc_status st = mlc_sch_get_child_blocks(s, 0, MLC_SCH_MAX_OUTS, blocks, &n);
  for (int i = 0; !st && i < n; i++) st = schedule_stage(s, blocks[i], opt);
  if (!st) st = mlc_tir_module_replace(tm, f, mlc_sch_func(s));
  if (!st && trace) {
    mlc_strbuf b = MLC_STRBUF_INIT;
    mlc_sch_print_trace(s, &b);
    *trace = b.oom ? NULL : mlc_mem_strdup(b.len ? mlc_sb_str(&b) : "");
    mlc_sb_fini(&b);
    if (!*trace) st = mlc_oom();
  }
  if (st) st = mlc_status_annotate(st, "default schedule of %s", f->name);
  mlc_sch_destroy(s);
  return st;
}

mlc_status mlc_lower_default_schedule(mlc_tir_module *tm, const mlc_lower_options *opt, mlc_lower_traces *traces) {
  if (traces) {
    traces->n = 0;
    traces->text = tm->nfuncs ? mlc_mem_calloc((size_t)tm->nfuncs, sizeof *traces->text) : NULL;
    traces->before = tm->nfuncs ? mlc_mem_calloc((size_t)tm->nfuncs, sizeof *traces->before) : NULL;
    if (tm->nfuncs && (!traces->text || !traces->before)) return mlc_oom();
    traces->n = tm->nfuncs;
  }
  for (int i = 0; i < tm->nfuncs; i++) {
    if (traces) traces->before[i] = tm->funcs[i];
    MLC_RETURN_IF_ERROR(schedule_func(tm, tm->funcs[i], opt, traces ? &traces->text[i] : NULL));
  }
  return NULL;
}

void mlc_lower_traces_free(mlc_lower_traces *t) {
  if (!t) return;
  for (int i = 0; i < t->n; i++) mlc_mem_free(t->text[i]);
  mlc_mem_free(t->text);
  mlc_mem_free(t->before);
  t->text = NULL;
  t->before = NULL;
  t->n = 0;
}
