/*
** sample_compute_location.c:
** l = sch.sample_compute_location(block=b, decision=N).
**
** The random variable search uses to place a producer: one of the
** locations where compute_at of b is legal.  The candidates, as in TVM:
**   -2  "inline", when compute_inline of b is legal;
**   -1  "root", b stays where it is (always);
**   i   the i-th loop (outermost first) around the first consumer of b, in
**       b's scope, when compute_at(b, that loop) is legal.
** The decision is one of them, drawn uniformly (sch_rand) unless given; a
** given decision that is not a candidate is a SAMPLE refusal.  The output
** is a loop handle: the loop, or the special location "root" / "inline",
** which compute_at and reverse_compute_at accept.
*/
#include <inttypes.h>
#include <stdio.h>

#include "lower/schedule/compute_loc.h"

mlc_status mlc_sch_apply_sample_compute_location(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *blk;
  MLC_RETURN_IF_ERROR(sch_arg_block(s, in, "block", &blk));
  int64_t cand[CL_MAX_LOOPS + 2];
  int nc = 0;
  mlc_tir_stmt *loops[CL_MAX_LOOPS];
  int nl = 0;
  /* the checks below refuse quietly: their classes are not this one's */
  mlc_status st = cl_check_compute_inline(s, blk);
  if (!st)
    cand[nc++] = -2;
  else if (mlc_status_code(st) != MLC_INVALID_ARGUMENT)
    return st;
  mlc_status_free(st);
  cand[nc++] = -1;
  /* the loops around the first consumer */
  mlc_tir_stmt *blocks[CL_MAX_BLOCKS];
  mlc_tir_buffer *writes[16];
  int at, nb = cl_scope_blocks(s, blk, blocks, &at), nw = cl_block_writes(blk, writes, 16);
  if (nb < 0 || at < 0 || nw < 0)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s: too many blocks or buffers", sch_desc(s, blk));
  for (int i = at + 1; i < nb && !nl; i++) {
    int reads = 0;
    for (int w = 0; w < nw && !reads; w++) reads = sch_block_reads(blocks[i], writes[w]);
    if (reads) {
      nl = sch_loops_above(s, blocks[i], loops, CL_MAX_LOOPS);
      if (nl < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than %d loops around %s", CL_MAX_LOOPS,
                                  sch_desc(s, blocks[i]));
    }
  }
  for (int i = 0; i < nl; i++) {
    st = cl_check_compute_at(s, blk, loops[i]);
    if (!st)
      cand[nc++] = i;
    else if (mlc_status_code(st) != MLC_INVALID_ARGUMENT)
      return st;
    mlc_status_free(st);
  }
  s->last_error = MLC_SCH_OK;
  int64_t d;
  if (in->forced) {
    MLC_RETURN_IF_ERROR(sch_item_int(s, in->forced, "decision", &d));
    int ok = 0;
    for (int i = 0; i < nc; i++) ok |= cand[i] == d;
    if (!ok) {
      char list[16 * (CL_MAX_LOOPS + 2)];
      size_t k = 0;
      for (int i = 0; i < nc && k < sizeof list; i++)
        k += (size_t)snprintf(list + k, sizeof list - k, "%s%" PRId64, i ? ", " : "", cand[i]);
      return sch_fail(s, MLC_SCH_ERR_SAMPLE, "decision %" PRId64 " is not a legal compute location of %s (candidates: %s)",
                      d, sch_desc(s, blk), list);
    }
  } else {
    d = cand[sch_rand(s) % (uint64_t)nc];
  }
  in->decision = MLC_SCH_INT_ARG(d);
  if (d >= 0) return sch_out_stmt(s, in, MLC_SCH_RV_LOOP, loops[d]);
  return sch_out(s, in, sch_new_location_rv(s, d == -1 ? SCH_LOC_ROOT : SCH_LOC_INLINE));
}

mlc_status mlc_sch_sample_compute_location(mlc_sch *s, mlc_sch_rv block, const int64_t *decision, mlc_sch_rv *out) {
  mlc_sch_arg a[] = {MLC_SCH_RV_ARG(block), MLC_SCH_INT_ARG(decision ? *decision : 0)};
  a[0].key = "block";
  a[1].key = "decision";
  mlc_sch_rv outs[MLC_SCH_MAX_OUTS];
  MLC_RETURN_IF_ERROR(mlc_sch_apply(s, MLC_SCH_INST_SAMPLE_COMPUTE_LOCATION, decision ? 2 : 1, a, outs, NULL));
  *out = outs[0];
  return NULL;
}
