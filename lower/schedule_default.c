/*
** schedule_default.c: the default CPU schedule (rules, no search), written
** as schedule primitives so that every kernel's schedule is a trace.
**
** Each stage te produced is a perfect nest of serial loops (spatial axes
** outside, reduce axes inside) around one block.  Two rules, in order:
**
** 1. Vectors.  When the block stores one element whose last index is a
**    spatial iteration variable bound to a loop of constant extent E >= 4
**    with only reduce loops inside it, that loop becomes a vector loop: it
**    is split by V lanes (the largest divisor of E from 4 to the vector
**    width, else the width with a predicate for the tail; no split when E
**    fits one vector), the lanes loop goes innermost (sch.reorder, past
**    the reduce loops), the reduction's init gets loops of its own before
**    the reduce loops (sch.decompose_reduction) and both lanes loops are
**    vectorized.  A conv then accumulates a row of output pixels in one
**    vector per filter tap, a matmul a row of columns per k.
** 2. Threads.  When the nest does enough work to be worth the thread
**    pool's hand-off, the outermost spatial loop whose extent is large
**    enough to split (or symbolic) becomes a parallel loop (sch.parallel),
**    so that a batch-1 conv parallelizes over its channels.  Loops bound to
**    a reduce iteration variable never run in parallel.
**
** A primitive that refuses a step of rule 1 (its legality check is the
** judge) makes the function fall back to rule 2 alone.
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

/* Widest vector, in bytes (AVX-512). */
#define VECTOR_BYTES 64
/* Smallest loop worth a vector. */
#define VECTOR_MIN_EXTENT 4

/* The iteration variable that the last index of |blk|'s one store is,
** when it is a spatial one bound to a loop variable; else NULL. */
static const mlc_tir_iter_var *vector_iter(const mlc_tir_stmt *blk) {
  const mlc_tir_stmt *st = blk->block.body;
  if (!st || st->kind != MLC_TIR_STORE || st->store.n < 1 || blk->block.predicate) return NULL;
  const mlc_tir_expr *last = st->store.indices[st->store.n - 1];
  if (last->kind != MLC_TIR_VAR_REF) return NULL;
  for (int i = 0; i < blk->block.niters; i++) {
    const mlc_tir_iter_var *it = &blk->block.iters[i];
    if (it->var == last->var)
      return it->kind == MLC_TIR_ITER_SPATIAL && it->binding && it->binding->kind == MLC_TIR_VAR_REF ? it : NULL;
  }
  return NULL;
}

/* Rule 1 for one stage block.  A refusal of a primitive is returned as is. */
static mlc_status vectorize_stage(mlc_sch *s, mlc_sch_rv block) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0;
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  const mlc_tir_iter_var *it = blk && blk->block.niters ? vector_iter(blk) : NULL;
  if (!it) return NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  int p = -1;
  for (int i = 0; i < n; i++)
    if (mlc_sch_rv_stmt(s, loops[i])->loop.var == it->binding->var) p = i;
  if (p < 0) return NULL;
  const mlc_tir_stmt *lp = mlc_sch_rv_stmt(s, loops[p]);
  int64_t e = const_extent(lp->loop.extent);
  if (e < VECTOR_MIN_EXTENT || lp->loop.kind != MLC_TIR_FOR_SERIAL || !mlc_tir_is_const(lp->loop.min, 0)) return NULL;
  for (int i = p + 1; i < n; i++) /* only reduce loops inside */
    if (!binds_reduce(blk, mlc_sch_rv_stmt(s, loops[i])->loop.var)) return NULL;
  size_t esize = mlc_dtype_size(blk->block.body->store.buffer->dtype);
  int64_t width = esize >= 8 ? VECTOR_BYTES / 8 : 16;
  mlc_sch_rv lanes = loops[p];
  if (e > width) {
    int64_t v = width;
    for (int64_t d = width; d >= VECTOR_MIN_EXTENT; d--)
      if (e % d == 0) {
        v = d;
        break;
      }
    mlc_sch_rv parts[2];
    mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(v)};
    MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[p], 2, f, parts));
    lanes = parts[1];
  }
  if (p + 1 < n) {
    mlc_sch_rv order[MLC_SCH_MAX_OUTS];
    int k = 0;
    for (int i = p + 1; i < n; i++) order[k++] = loops[i];
    order[k++] = lanes;
    MLC_RETURN_IF_ERROR(mlc_sch_reorder(s, k, order));
    if (blk->block.init) {
      mlc_sch_rv init, iloops[MLC_SCH_MAX_OUTS];
      int ni = 0;
      MLC_RETURN_IF_ERROR(mlc_sch_decompose_reduction(s, block, loops[p + 1], &init));
      MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, init, MLC_SCH_MAX_OUTS, iloops, &ni));
      if (ni > 0) MLC_RETURN_IF_ERROR(mlc_sch_vectorize(s, iloops[ni - 1]));
    }
  }
  return mlc_sch_vectorize(s, lanes);
}

/* Rule 2 for one stage block. */
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

/* Applies the rules (rule 1 only with |vectors|) to a new schedule of |f|. */
static mlc_status apply_rules(mlc_tir_module *tm, mlc_tir_func *f, const mlc_lower_options *opt, int vectors,
                              mlc_sch **out) {
  mlc_sch_rv blocks[MLC_SCH_MAX_OUTS];
  int n = 0;
  MLC_RETURN_IF_ERROR(mlc_sch_create(tm, f, 0, out));
  mlc_status st = mlc_sch_get_child_blocks(*out, 0, MLC_SCH_MAX_OUTS, blocks, &n);
  for (int i = 0; !st && vectors && i < n; i++) st = vectorize_stage(*out, blocks[i]);
  for (int i = 0; !st && i < n; i++) st = schedule_stage(*out, blocks[i], opt);
  return st;
}

/* Schedules |f| of |tm|; its scheduled copy replaces it; the trace to *|trace|. */
static mlc_status schedule_func(mlc_tir_module *tm, mlc_tir_func *f, const mlc_lower_options *opt, char **trace) {
  mlc_sch *s = NULL;
  mlc_status st = apply_rules(tm, f, opt, !(opt && opt->no_vectorize), &s);
  if (st && s && mlc_sch_last_error(s) != MLC_SCH_OK) { /* a refusal: threads only */
    mlc_status_free(st);
    mlc_sch_destroy(s);
    s = NULL;
    st = apply_rules(tm, f, opt, 0, &s);
  }
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
