/*
** decompose_reduction.c: b1 = sch.decompose_reduction(block=b, loop=l).
**
** Splits a reduction block (one with an init) into an init block and the
** update: the init block "NAME_init" has the spatial iteration variables
** only (same domains and bindings) and the init statement as its body; it
** runs in a copy of the loops from |l| inward whose variables its bindings
** use (copies named VAR_init), placed just before |l|.  The block keeps the
** update alone and is renamed "NAME_update" (as TVM does); its handle stays
** valid.  The result is the init block's handle.  In the seeds' mm_relu
** after split and reorder (i, j0, k, j1), decomposing at k gives
**
**   for i, j0 in T.grid(128, 32):
**       for j1_init in range(4):
**           with T.block("Y_init"): ... Y[vi, vj] = T.float32(0)
**       for k, j1 in T.grid(128, 4):
**           with T.block("Y_update"): ... Y[vi, vj] = Y[vi, vj] + ...
**
** Legality: the block has an init (STRUCTURE), |l| is one of the loops
** around it in its scope (LOOP_NEST), no loop around |l| binds a reduce
** iteration variable of the block (REDUCTION: the init would run again
** for every value of that loop), between |l| and the block there are only
** loops and sequences (STRUCTURE: an if or an allocation would not be
** copied), the init uses no reduce iteration variable (STRUCTURE), and each
** conjunct of the block's predicate uses either the loops that are copied
** or the ones that are not, not both (STRUCTURE): the init keeps the
** conjuncts that use no dropped loop.
*/
#include <string.h>

#include "lower/arith.h"
#include "lower/schedule/access.h"

#define MAX_LOOPS 256

/* The conjuncts of |e| (split at 'and'), appended to |out|; the count or -1. */
static int conjuncts(mlc_tir_expr *e, mlc_tir_expr **out, int n, int max) {
  if (n < 0) return n;
  if (e->kind == MLC_TIR_BINARY && e->bin.op == MLC_TIR_AND && e->dtype == MLC_DTYPE_BOOL)
    return conjuncts(e->bin.b, out, conjuncts(e->bin.a, out, n, max), max);
  if (n >= max) return -1;
  out[n] = e;
  return n + 1;
}

static int uses_any(const mlc_tir_expr *e, mlc_tir_stmt *const *loops, const int *which, int n, int want) {
  for (int i = 0; i < n; i++)
    if (which[i] == want && mlc_tir_expr_uses_var(e, loops[i]->loop.var)) return 1;
  return 0;
}

mlc_status mlc_sch_apply_decompose_reduction(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *blk, *loop;
  MLC_RETURN_IF_ERROR(sch_arg_block(s, in, "block", &blk));
  MLC_RETURN_IF_ERROR(sch_arg_loop(s, in, "loop", &loop));
  mlc_tir_module *m = s->m;
  const char *bd = sch_desc(s, blk), *ld = sch_desc(s, loop);
  if (!blk->block.init)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s has no init: it is not a reduction block", bd);
  mlc_tir_stmt *loops[MAX_LOOPS];
  int nl = sch_loops_above(s, blk, loops, MAX_LOOPS);
  if (nl < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than %d loops around %s", MAX_LOOPS, bd);
  int at = -1;
  for (int i = 0; i < nl; i++)
    if (loops[i] == loop) at = i;
  if (at < 0) return sch_fail(s, MLC_SCH_ERR_LOOP_NEST, "%s is not a loop around %s", ld, bd);
  for (int i = 0; i < at; i++)
    for (int k = 0; k < blk->block.niters; k++) {
      const mlc_tir_iter_var *it = &blk->block.iters[k];
      if (it->kind == MLC_TIR_ITER_REDUCE && mlc_tir_expr_uses_var(it->binding, loops[i]->loop.var))
        return sch_fail(s, MLC_SCH_ERR_REDUCTION,
                        "%s is inside %s, which binds the reduce iteration variable %s of %s: the init "
                        "must be outside every reduction loop",
                        ld, sch_desc(s, loops[i]), it->var->name, bd);
    }
  mlc_tir_stmt *path[MAX_LOOPS * 2];
  int np = sch_path(s, blk, path, MAX_LOOPS * 2);
  if (np < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is nested too deeply", bd);
  int from = 0;
  while (from < np && path[from] != loop) from++;
  for (int i = from + 1; i < np - 1; i++)
    if (path[i]->kind != MLC_TIR_FOR && path[i]->kind != MLC_TIR_SEQ)
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "between %s and %s there is %s: only loops can be copied for the init",
                      ld, bd, path[i]->kind == MLC_TIR_IF ? "an if" : "an allocation");
  for (int k = 0; k < blk->block.niters; k++) {
    const mlc_tir_iter_var *it = &blk->block.iters[k];
    if (it->kind == MLC_TIR_ITER_REDUCE && sch_stmt_uses_var(blk->block.init, it->var))
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "the init of %s uses the reduce iteration variable %s", bd,
                      it->var->name);
  }

  /* which loops the init needs: 1 copied, 0 dropped (from |at| inward), 2 shared (above) */
  int which[MAX_LOOPS];
  for (int i = 0; i < nl; i++) {
    which[i] = i < at ? 2 : 0;
    for (int k = 0; k < blk->block.niters && i >= at; k++) {
      const mlc_tir_iter_var *it = &blk->block.iters[k];
      if (it->kind == MLC_TIR_ITER_SPATIAL && mlc_tir_expr_uses_var(it->binding, loops[i]->loop.var)) which[i] = 1;
    }
  }
  /* a copied loop's range may use an enclosing loop that is dropped */
  for (int i = at; i < nl; i++)
    if (which[i] == 1 && (uses_any(loops[i]->loop.min, loops, which, i, 0) ||
                          uses_any(loops[i]->loop.extent, loops, which, i, 0)))
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "the range of %s uses a loop the init does not need",
                      sch_desc(s, loops[i]));
  mlc_tir_expr *conj[64], *keep = NULL;
  int nc = blk->block.predicate ? conjuncts(blk->block.predicate, conj, 0, 64) : 0;
  if (nc < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "the predicate of %s has too many conjuncts", bd);
  for (int i = 0; i < nc; i++) {
    int copied = uses_any(conj[i], loops, which, nl, 1), dropped = uses_any(conj[i], loops, which, nl, 0);
    if (copied && dropped)
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE,
                      "a condition of the predicate of %s uses both the loops the init needs and the ones it "
                      "does not",
                      bd);
  }

  /* ---- rewrite: fresh loop variables for the copies, fresh iteration
  ** variables for the init block ---- */
  mlc_tir_var *vars[MAX_LOOPS + 64];
  mlc_tir_expr *vals[MAX_LOOPS + 64];
  int nsub = 0;
  mlc_tir_var *newloop[MAX_LOOPS];
  for (int i = at; i < nl; i++) {
    if (which[i] != 1) continue;
    const mlc_tir_var *v = loops[i]->loop.var;
    const char *nm = mlc_arena_printf(m->arena, "%s_init", v->name);
    newloop[i] = nm ? mlc_tir_var_new(m, nm, v->dtype) : NULL;
    if (!newloop[i]) return mlc_oom();
    vars[nsub] = loops[i]->loop.var;
    vals[nsub++] = mlc_tir_ref(m, newloop[i]);
  }
  mlc_tir_subst loop_sub = {nsub, vars, vals, 0, NULL, NULL, 0};
  int nsp = 0;
  mlc_tir_iter_var *its = MLC_ARENA_ARRAY(m->arena, (size_t)blk->block.niters + 1, mlc_tir_iter_var);
  if (!its) return mlc_oom();
  mlc_tir_var *ivars[64];
  mlc_tir_expr *ivals[64];
  int niv = 0;
  for (int k = 0; k < blk->block.niters; k++) {
    const mlc_tir_iter_var *it = &blk->block.iters[k];
    if (it->kind != MLC_TIR_ITER_SPATIAL) continue;
    if (niv >= 64) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s has more than 64 spatial iteration variables", bd);
    mlc_tir_var *nv = mlc_tir_var_new(m, it->var->name, it->var->dtype);
    mlc_tir_expr *b = mlc_tir_expr_copy(m, it->binding, &loop_sub);
    if (!nv || !b) return mlc_oom();
    its[nsp++] = (mlc_tir_iter_var){nv, MLC_TIR_ITER_SPATIAL, it->min, it->extent, b};
    ivars[niv] = it->var;
    ivals[niv++] = mlc_tir_ref(m, nv);
  }
  mlc_tir_subst iter_sub = {niv, ivars, ivals, 0, NULL, NULL, 1};
  mlc_tir_stmt *body = mlc_tir_stmt_copy(m, blk->block.init, &iter_sub);
  const char *iname = mlc_arena_printf(s->arena, "%s_init", blk->block.name);
  const char *uname = mlc_arena_printf(s->arena, "%s_update", blk->block.name);
  iname = iname ? sch_unique_block_name(s, iname) : NULL;
  uname = uname ? sch_unique_block_name(s, uname) : NULL;
  mlc_tir_stmt *init = body && iname && uname ? mlc_tir_block(m, iname, nsp, its, NULL, body) : NULL;
  if (!init) return mlc_oom();
  for (int i = 0; i < nc; i++)
    if (!uses_any(conj[i], loops, which, nl, 0)) {
      mlc_tir_expr *c = mlc_tir_expr_copy(m, conj[i], &loop_sub);
      keep = keep ? mlc_tir_binary(m, MLC_TIR_AND, keep, c) : c;
      if (!keep) return mlc_oom();
    }
  if (keep) mlc_tir_block_set_predicate(init, keep);
  mlc_tir_stmt *nest = init;
  for (int i = nl - 1; i >= at; i--) {
    if (which[i] != 1) continue;
    const mlc_tir_stmt *l = loops[i];
    nest = mlc_tir_for(m, newloop[i], mlc_tir_expr_copy(m, l->loop.min, &loop_sub),
                       mlc_tir_expr_copy(m, l->loop.extent, &loop_sub), l->loop.kind, l->loop.thread, nest);
    if (!nest) return mlc_oom();
    nest->origin = l->origin;
  }
  init->origin = blk->origin;
  MLC_RETURN_IF_ERROR(sch_replace(s, loop, mlc_tir_seq2(m, nest, loop)));
  blk->block.init = NULL;
  blk->block.name = uname;
  if (blk->block.nreads || blk->block.nwrites) {
    /* regions, when the block listed them: the update now reads what it writes */
    MLC_RETURN_IF_ERROR(mlc_tir_block_compute_regions(m, init));
    MLC_RETURN_IF_ERROR(mlc_tir_block_compute_regions(m, blk));
  }
  return sch_out_stmt(s, in, MLC_SCH_RV_BLOCK, init);
}

mlc_status mlc_sch_decompose_reduction(mlc_sch *s, mlc_sch_rv block, mlc_sch_rv loop, mlc_sch_rv *out) {
  mlc_sch_arg a[2] = {MLC_SCH_RV_ARG(block), MLC_SCH_RV_ARG(loop)};
  a[0].key = "block";
  a[1].key = "loop";
  mlc_sch_rv outs[MLC_SCH_MAX_OUTS];
  MLC_RETURN_IF_ERROR(mlc_sch_apply(s, MLC_SCH_INST_DECOMPOSE_REDUCTION, 2, a, outs, NULL));
  if (out) *out = outs[0];
  return NULL;
}
