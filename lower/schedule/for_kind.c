/*
** for_kind.c: parallel, vectorize, unroll and bind: the primitives that
** change how a loop runs, not what it iterates.
**
** Legality: the loop must be serial (a kind is set once), and for
** parallel, vectorize and bind its iterations must be independent: no
** block under it may bind a reduce iteration variable through the loop
** variable (iterations would race on the reduction's element), except a
** cross-thread reduction bound to threadIdx.x (on a GPU the lowering
** computes it with warp shuffles: mlc_tir_cross_thread_reduction in
** tir_lower.h).  parallel also refuses a loop nested in, or around, another parallel loop (the
** thread pool is not reentrant).  unroll is always legal.
*/
#include <string.h>

#include "lower/schedule/sched_int.h"
#include "lower/tir_lower.h"

static const char *kind_word(mlc_tir_for_kind k) {
  switch (k) {
    case MLC_TIR_FOR_SERIAL: return "serial";
    case MLC_TIR_FOR_PARALLEL: return "parallel";
    case MLC_TIR_FOR_VECTORIZED: return "vectorized";
    case MLC_TIR_FOR_UNROLLED: return "unrolled";
    case MLC_TIR_FOR_THREAD_BINDING: return "bound to a thread axis";
  }
  return "?";
}

/* A block under |st| (a loop or a block) whose reduce iteration variable is bound through |v|. */
static const mlc_tir_stmt *reduce_user(const mlc_tir_stmt *st, const mlc_tir_var *v) {
  mlc_tir_stmt *blocks[1024];
  int n = sch_child_blocks(st, blocks, 1024);
  for (int i = 0; i < n; i++) {
    const mlc_tir_stmt *b = blocks[i];
    for (int k = 0; k < b->block.niters; k++) {
      const mlc_tir_iter_var *it = &b->block.iters[k];
      if (it->kind == MLC_TIR_ITER_REDUCE && it->binding && mlc_tir_expr_uses_var(it->binding, v)) return b;
    }
    const mlc_tir_stmt *r = reduce_user(b, v);
    if (r) return r;
  }
  return NULL;
}

static int has_parallel(const mlc_tir_stmt *st) {
  if (!st) return 0;
  switch (st->kind) {
    case MLC_TIR_FOR: return st->loop.kind == MLC_TIR_FOR_PARALLEL || has_parallel(st->loop.body);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++)
        if (has_parallel(st->seq.stmts[i])) return 1;
      return 0;
    case MLC_TIR_IF: return has_parallel(st->if_.then_s) || has_parallel(st->if_.else_s);
    case MLC_TIR_ALLOCATE: return has_parallel(st->alloc.body);
    case MLC_TIR_BLOCK: return has_parallel(st->block.init) || has_parallel(st->block.body);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return 0;
  }
  return 0;
}

static mlc_status set_kind(mlc_sch *s, mlc_sch_inst *in, mlc_tir_for_kind kind, const char *thread) {
  mlc_tir_stmt *loop;
  MLC_RETURN_IF_ERROR(sch_arg_loop(s, in, "loop", &loop));
  if (loop->loop.kind != MLC_TIR_FOR_SERIAL)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is already %s", sch_desc(s, loop),
                    kind_word(loop->loop.kind));
  if (kind != MLC_TIR_FOR_UNROLLED) {
    const mlc_tir_stmt *b = reduce_user(loop, loop->loop.var);
    if (b && kind == MLC_TIR_FOR_THREAD_BINDING && !strcmp(thread, "threadIdx.x") &&
        mlc_tir_cross_thread_reduction(loop, b, NULL))
      b = NULL; /* the lanes of a warp combine it */
    if (b)
      return sch_fail(s, MLC_SCH_ERR_REDUCTION,
                      "%s binds a reduce iteration variable of block \"%s\": its iterations are not independent",
                      sch_desc(s, loop), b->block.name);
  }
  if (kind == MLC_TIR_FOR_PARALLEL) {
    if (has_parallel(loop->loop.body))
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s has a parallel loop inside it", sch_desc(s, loop));
    mlc_tir_stmt *path[512];
    int n = sch_path(s, loop, path, 512);
    for (int i = 0; i < n - 1; i++)
      if (path[i]->kind == MLC_TIR_FOR && path[i]->loop.kind == MLC_TIR_FOR_PARALLEL)
        return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is inside the parallel %s", sch_desc(s, loop),
                        sch_desc(s, path[i]));
  }
  if (kind == MLC_TIR_FOR_VECTORIZED && loop->loop.extent->kind != MLC_TIR_INT_IMM)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s has a symbolic extent: a vector needs a constant length",
                    sch_desc(s, loop));
  const char *tag = NULL;
  if (thread && !(tag = mlc_arena_strdup(s->m->arena, thread))) return mlc_oom();
  loop->loop.kind = kind;
  loop->loop.thread = tag;
  return NULL;
}

mlc_status mlc_sch_apply_parallel(mlc_sch *s, mlc_sch_inst *in) {
  return set_kind(s, in, MLC_TIR_FOR_PARALLEL, NULL);
}
mlc_status mlc_sch_apply_vectorize(mlc_sch *s, mlc_sch_inst *in) {
  return set_kind(s, in, MLC_TIR_FOR_VECTORIZED, NULL);
}
mlc_status mlc_sch_apply_unroll(mlc_sch *s, mlc_sch_inst *in) { return set_kind(s, in, MLC_TIR_FOR_UNROLLED, NULL); }

static int valid_thread(const char *t) {
  static const char *const axes[] = {"blockIdx.", "threadIdx.", "vthread."};
  for (size_t i = 0; i < sizeof axes / sizeof axes[0]; i++) {
    size_t n = strlen(axes[i]);
    if (strncmp(t, axes[i], n) == 0 && (t[n] == 'x' || t[n] == 'y' || t[n] == 'z') && !t[n + 1]) return 1;
  }
  return 0;
}

mlc_status mlc_sch_apply_bind(mlc_sch *s, mlc_sch_inst *in) {
  const char *thread;
  MLC_RETURN_IF_ERROR(sch_arg_str(s, in, "thread_axis", &thread));
  if (!valid_thread(thread))
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT,
                    "unknown thread axis \"%s\" (blockIdx, threadIdx or vthread, then .x, .y or .z)", thread);
  return set_kind(s, in, MLC_TIR_FOR_THREAD_BINDING, thread);
}

static mlc_status loop_inst(mlc_sch *s, mlc_sch_inst_kind k, mlc_sch_rv loop, const char *thread) {
  mlc_sch_arg a[2] = {MLC_SCH_RV_ARG(loop), MLC_SCH_STR_ARG(thread)};
  a[0].key = "loop";
  a[1].key = "thread_axis";
  return mlc_sch_apply(s, k, thread ? 2 : 1, a, NULL, NULL);
}

mlc_status mlc_sch_parallel(mlc_sch *s, mlc_sch_rv loop) { return loop_inst(s, MLC_SCH_INST_PARALLEL, loop, NULL); }
mlc_status mlc_sch_vectorize(mlc_sch *s, mlc_sch_rv loop) { return loop_inst(s, MLC_SCH_INST_VECTORIZE, loop, NULL); }
mlc_status mlc_sch_unroll(mlc_sch *s, mlc_sch_rv loop) { return loop_inst(s, MLC_SCH_INST_UNROLL, loop, NULL); }
mlc_status mlc_sch_bind(mlc_sch *s, mlc_sch_rv loop, const char *thread) {
  return loop_inst(s, MLC_SCH_INST_BIND, loop, thread ? thread : "");
}
