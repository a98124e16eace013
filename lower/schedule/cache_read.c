/*
** cache_read.c: b1 = sch.cache_read(block=b, read_buffer_index=0,
** storage_scope="local").
**
** The |read_buffer_index|-th buffer block |b| reads (access.h: order of
** first access), say A, gets a cache: a new buffer A_SCOPE of A's shape in
** the given scope (allocated at the top of the function; compaction to the
** region used is a lowering pass), and a block of the same name, in loops
** ax0, ax1, ... at the top level of |b|'s scope just before the loop nest
** holding |b|, that copies the region of A that |b| reads over all its
** iterations.  |b| then reads A_SCOPE; other readers of A are unchanged.
** compute_at can then move the copy next to its use.
**
**   for ax0, ax1 in T.grid(128, 128):
**       with T.block("A_local"):
**           v0 = T.axis.spatial(128, ax0)
**           v1 = T.axis.spatial(128, ax1)
**           A_local[v0, v1] = A[v0, v1]
**
** Legality: a known scope and an index in range (ARGUMENT); nothing in the
** loop nest holding |b| (|b| included) writes A, or the copy would miss
** what is written (DEPENDENCE); A is not allocated inside that nest
** (STRUCTURE); the region has a bound free of the loops around the nest
** (REGION).
*/
#include "lower/arith.h"
#include "lower/schedule/access.h"

mlc_status mlc_sch_apply_cache_read(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *blk, *nest;
  mlc_tir_buffer *buf;
  int scope;
  const char *scope_name;
  MLC_RETURN_IF_ERROR(sch_cache_args(s, in, 0, &blk, &buf, &nest, &scope, &scope_name));
  const char *bd = sch_desc(s, blk);
  if (sch_accesses_outside(nest, buf, 1, NULL))
    return sch_fail(s, MLC_SCH_ERR_DEPENDENCE, "%s, the loop nest holding %s, writes %s, which %s reads: a copy made "
                    "before the nest would miss those writes", sch_desc(s, nest), bd, buf->name, bd);
  mlc_tir_stmt *alloc = sch_find_alloc(s, buf);
  if (alloc && sch_contains(nest, alloc))
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is allocated inside %s: no room for a copy before it", buf->name,
                    sch_desc(s, nest));
  return sch_cache_stage(s, in, blk, nest, buf, scope, scope_name, 0);
}

mlc_status mlc_sch_cache_read(mlc_sch *s, mlc_sch_rv block, int index, const char *scope, mlc_sch_rv *out) {
  return sch_cache_inst(s, MLC_SCH_INST_CACHE_READ, "read_buffer_index", block, index, scope, out);
}
