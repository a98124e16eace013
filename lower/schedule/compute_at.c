/*
** compute_at.c: sch.compute_at(block=b, loop=l, preserve_unit_loops=False).
**
** Moves the producer block b under the loop l of its consumers, computing
** in each iteration of l only the region of its output that the consumers
** read in that iteration:
**
**   for i, j in T.grid(...):            for i in range(128):
**       with T.block("B"): ...             for ax0 in range(128):
**   for i, j in T.grid(...):      ->            with T.block("B"):
**       with T.block("C"):                          vi = T.axis.spatial(128, i)
**           ... B[vi, vj] ...                       vj = T.axis.spatial(128, ax0)
**                                          for j in range(128):
**                                              with T.block("C"): ...
**
** The region: every load of b's output in the consumers, with the block's
** iteration variables replaced by their bindings, the loops between l and
** the consumer (and inside it) relaxed over their ranges and l and the loops
** above it kept symbolic (but those bound to threadIdx when b's output is a
** shared buffer, which the threads of a GPU block fill together): per
** dimension S + [lo, hi] (compute_loc.h).  b's spatial iteration variable
** of that dimension gets a new loop over [0, hi - lo + 1) and the binding
** S + lo + loop; reduce iteration variables keep loops over their whole
** domain.  New loops of extent 1 are left out
** unless preserve_unit_loops.  Where a region may reach outside b's
** iteration domain, b gets a predicate.  b's old loops are removed (their
** handles retired).
**
** Legality: b writes one buffer, each index a distinct spatial iteration
** variable, has no predicate and reads what it writes only as a reduction
** (STRUCTURE); l is in b's scope, does not already hold b and encloses every
** consumer, which all come after b (LOCATION); b's output is not a
** parameter (REGION: only what the consumers read would be written) and no
** other block writes it, nor, between b and l's end, a buffer b reads
** (DEPENDENCE); the region must be computable (REGION).  The special
** locations of sample_compute_location: "root" leaves b where it is,
** "inline" is compute_inline.
*/
#include <string.h>

#include "lower/schedule/compute_loc.h"

typedef struct ca_plan {
  mlc_tir_buffer *buf;
  int has[CL_MAX_LOOPS];
  cl_range ranges[CL_MAX_LOOPS];
  int at;
  cl_nest nest;
} ca_plan;

typedef struct wp {
  const mlc_tir_stmt *blk;
  mlc_tir_buffer *buf;
  int n;
  int perm[CL_MAX_LOOPS];
  const char *why;
} wp;

static void write_pattern(wp *w, const mlc_tir_stmt *st) {
  if (!st || w->why) return;
  switch (st->kind) {
    case MLC_TIR_FOR: write_pattern(w, st->loop.body); return;
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) write_pattern(w, st->seq.stmts[i]);
      return;
    case MLC_TIR_IF:
      write_pattern(w, st->if_.then_s);
      write_pattern(w, st->if_.else_s);
      return;
    case MLC_TIR_ALLOCATE: write_pattern(w, st->alloc.body); return;
    case MLC_TIR_BLOCK: w->why = "has a nested block"; return;
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return;
    case MLC_TIR_STORE: break;
  }
  if (w->buf && st->store.buffer != w->buf) {
    w->why = "writes more than one buffer";
    return;
  }
  if (st->store.n > CL_MAX_LOOPS) {
    w->why = "writes a buffer of too many dimensions";
    return;
  }
  int used[CL_MAX_LOOPS] = {0};
  for (int d = 0; d < st->store.n; d++) {
    int k = mlc_tir_block_iter_index(w->blk, st->store.indices[d]);
    if (k < 0 || used[k] || w->blk->block.iters[k].kind != MLC_TIR_ITER_SPATIAL || (w->buf && w->perm[d] != k)) {
      w->why = "does not write its output with one distinct spatial iteration variable per index";
      return;
    }
    used[k] = 1;
    w->perm[d] = k;
  }
  w->buf = st->store.buffer;
  w->n = st->store.n;
}

/* A shared buffer is written by the threads of a GPU thread block
** together: the loops above |loop| bound to threadIdx join |env| (relaxed),
** so the region covers what every thread of the block reads. */
static int relax_threads(mlc_sch *s, const mlc_tir_stmt *loop, cl_env *env) {
  mlc_tir_stmt *path[512];
  int n = sch_path(s, loop, path, 512);
  for (int i = 0; i < n; i++)
    if (path[i] != loop && path[i]->kind == MLC_TIR_FOR && path[i]->loop.kind == MLC_TIR_FOR_THREAD_BINDING &&
        path[i]->loop.thread && !strncmp(path[i]->loop.thread, "threadIdx.", 10) && cl_env_add_loop(env, path[i]))
      return -1;
  return 0;
}

static mlc_status analyze(mlc_sch *s, mlc_tir_stmt *blk, mlc_tir_stmt *loop, ca_plan *p) {
  const char *bd = sch_desc(s, blk), *ld = sch_desc(s, loop);
  if (blk->block.predicate) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s has a predicate", bd);
  if (blk->block.niters > CL_MAX_LOOPS)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s has more than %d iteration variables", bd, CL_MAX_LOOPS);
  wp w = {blk, NULL, 0, {0}, NULL};
  write_pattern(&w, blk->block.init);
  write_pattern(&w, blk->block.body);
  if (!w.why && !w.buf) w.why = "writes nothing";
  if (w.why) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s %s", bd, w.why);
  mlc_tir_buffer *buf = w.buf;
  if (!blk->block.init && sch_block_reads(blk, buf))
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s reads the buffer %s it writes and is not a reduction", bd,
                    buf->name);
  if (sch_scope(s, loop) != sch_scope(s, blk))
    return sch_fail(s, MLC_SCH_ERR_LOCATION, "%s is not in the scope of %s", ld, bd);
  if (sch_contains(loop, blk)) return sch_fail(s, MLC_SCH_ERR_LOCATION, "%s is already inside %s", bd, ld);
  if (cl_is_param(s, buf))
    return sch_fail(s, MLC_SCH_ERR_REGION,
                    "%s writes the parameter %s: only the region its consumers read would be computed", bd, buf->name);
  mlc_tir_stmt *blocks[CL_MAX_BLOCKS], *cons[CL_MAX_BLOCKS];
  int at, nb = cl_scope_blocks(s, blk, blocks, &at), nc = 0, last = -1;
  if (nb < 0 || at < 0)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than %d blocks in the scope of %s", CL_MAX_BLOCKS, bd);
  for (int i = 0; i < nb; i++) {
    if (i == at) continue;
    if (sch_contains(loop, blocks[i])) last = i;
    if (sch_block_writes(blocks[i], buf))
      return sch_fail(s, MLC_SCH_ERR_DEPENDENCE, "%s also writes %s", sch_desc(s, blocks[i]), buf->name);
    if (!sch_block_reads(blocks[i], buf)) continue;
    if (i < at)
      return sch_fail(s, MLC_SCH_ERR_LOCATION, "%s reads %s before %s writes it", sch_desc(s, blocks[i]), buf->name,
                      bd);
    if (!sch_contains(loop, blocks[i]))
      return sch_fail(s, MLC_SCH_ERR_LOCATION, "%s does not enclose the consumer %s", ld, sch_desc(s, blocks[i]));
    cons[nc++] = blocks[i];
  }
  if (!nc) return sch_fail(s, MLC_SCH_ERR_LOCATION, "%s has no consumer under %s", bd, ld);
  /* b now runs later: nothing on the way may write what it reads */
  mlc_tir_buffer *reads[64];
  int nr = cl_block_reads(blk, reads, 64);
  if (nr < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s reads more than 64 buffers", bd);
  for (int i = at + 1; i <= last; i++)
    for (int r = 0; r < nr; r++)
      if (reads[r] != buf && sch_block_writes(blocks[i], reads[r]))
        return sch_fail(s, MLC_SCH_ERR_DEPENDENCE, "%s writes %s, which %s reads, before %s ends", sch_desc(s, blocks[i]),
                        reads[r]->name, bd, ld);
  MLC_RETURN_IF_ERROR(cl_check_allocs(s, blk, loop));
  MLC_RETURN_IF_ERROR(cl_nest_find(s, blk, &p->nest));
  /* the region the consumers read in one iteration of the loop */
  cl_range acc[CL_MAX_LOOPS];
  int have = 0;
  for (int i = 0; i < nc; i++) {
    cl_env env;
    const char *why = NULL;
    if (cl_env_between(s, loop, cons[i], &env) ||
        (buf->scope == MLC_TIR_SCOPE_SHARED && relax_threads(s, loop, &env)))
      return sch_fail(s, MLC_SCH_ERR_REGION, "a loop between %s and %s has non-constant bounds", ld,
                      sch_desc(s, cons[i]));
    if (cl_access_ranges(s, cons[i], buf, 0, &env, acc, &have, &why))
      return sch_fail(s, MLC_SCH_ERR_REGION, "cannot cover the region of %s that %s reads under %s: %s", buf->name,
                      sch_desc(s, cons[i]), ld, why);
  }
  if (!have) return sch_fail(s, MLC_SCH_ERR_REGION, "the consumers of %s read no element of %s", bd, buf->name);
  memset(p->has, 0, sizeof p->has);
  for (int d = 0; d < w.n; d++) {
    p->has[w.perm[d]] = 1;
    p->ranges[w.perm[d]] = acc[d];
  }
  p->buf = buf;
  p->at = cl_body_index(loop, cons, nc, 0);
  return NULL;
}

mlc_status cl_check_compute_at(mlc_sch *s, mlc_tir_stmt *blk, mlc_tir_stmt *loop) {
  ca_plan p;
  return analyze(s, blk, loop, &p);
}

mlc_status mlc_sch_apply_compute_at(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *blk, *loop;
  sch_loc loc;
  int64_t pu;
  ca_plan p;
  MLC_RETURN_IF_ERROR(sch_arg_block(s, in, "block", &blk));
  MLC_RETURN_IF_ERROR(sch_arg_location(s, in, "loop", &loop, &loc));
  MLC_RETURN_IF_ERROR(sch_arg_int_opt(s, in, "preserve_unit_loops", 0, &pu));
  if (loc == SCH_LOC_ROOT) return NULL;
  if (loc == SCH_LOC_INLINE) return mlc_sch_apply_compute_inline(s, in);
  MLC_RETURN_IF_ERROR(analyze(s, blk, loop, &p));
  return cl_place(s, &p.nest, loop, p.at, p.has, p.ranges, pu != 0);
}

mlc_status mlc_sch_compute_at(mlc_sch *s, mlc_sch_rv block, mlc_sch_rv loop, int preserve_unit_loops) {
  mlc_sch_arg a[] = {MLC_SCH_RV_ARG(block), MLC_SCH_RV_ARG(loop), MLC_SCH_INT_ARG(1)};
  a[0].key = "block";
  a[1].key = "loop";
  a[2].key = "preserve_unit_loops";
  return mlc_sch_apply(s, MLC_SCH_INST_COMPUTE_AT, preserve_unit_loops ? 3 : 2, a, NULL, NULL);
}
