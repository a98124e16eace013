/*
** rfactor.c: b1 = sch.rfactor(loop=l, factor_axis=0).
**
** Factors a reduction along the loop |l| (factor_axis: where the new
** dimension goes in the partial results' buffer, 0 .. rank), which binds (alone or with other
** reduce loops) one reduce iteration variable vk of the block B under it:
** B, Y[idx] = Y[idx] OP value (OP +, *, min or max, its init storing a
** constant), becomes
**
**   the rfactor block B_rf, in B's place and loops: Y_rf[vl, idx] = Y_rf[vl, idx]
**   (vl at position factor_axis among the indices; first here)
**   OP value, with vl a spatial iteration variable bound to |l| and vk
**   replaced by its binding over vl and new reduce variables for the other
**   loops it used; its init stores the constant into Y_rf[vl, idx];
**   the write-back block (B's handle now stands for it), after the loop
**   nest that held B: for each element of the region B wrote, a reduction
**   over r in [0, extent(l)) of Y[v] = Y[v] OP Y_rf[r, v], with B's init.
**
** Y_rf (Y's dtype, Y's shape with extent(l) inserted at factor_axis) is allocated in the
** function.  Each of the extent(l) partial reductions is independent of
** the others, so |l| may then be vectorized, parallel or bound to threads;
** the write-back combines them.  With l the inner part of a split reduce
** loop (k -> ko, ki), a row sum becomes 16 (or 32) strided partial sums,
** which a CPU vector or a warp computes at once.  The result is B_rf.
**
** Legality: 0 <= factor_axis <= rank of Y (ARGUMENT); |l| a loop of constant min 0 around
** exactly one block (STRUCTURE); that block a reduction whose body is one
** store of the form above and whose init stores an expression of no
** iteration variable to the same element (STRUCTURE), without predicate
** (STRUCTURE); |l| used by the binding of exactly one iteration variable,
** a reduce one, whose other loops are loops around the block (REDUCTION);
** nothing else in the loop nest holding the block accesses Y (DEPENDENCE:
** it would see Y before the write-back).
*/
#include <string.h>

#include "lower/schedule/access.h"
#include "lower/tir_visit.h"

#define MAX_LOOPS 256

/* The one store of |st| (a block's init or body), else NULL. */
static const mlc_tir_stmt *one_store(const mlc_tir_stmt *st) {
  return st && st->kind == MLC_TIR_STORE ? st : NULL;
}

static int same_indices(const mlc_tir_expr *ld, const mlc_tir_stmt *st) {
  if (ld->kind != MLC_TIR_LOAD || ld->load.buffer != st->store.buffer || ld->load.n != st->store.n) return 0;
  for (int d = 0; d < st->store.n; d++)
    if (!mlc_tir_expr_equal(ld->load.indices[d], st->store.indices[d])) return 0;
  return 1;
}

typedef struct load_find {
  const mlc_tir_buffer *b;
  int found;
} load_find;

static int load_pre(void *ctx, const mlc_tir_expr *e) {
  load_find *f = ctx;
  if (e->kind == MLC_TIR_LOAD && e->load.buffer == f->b) f->found = 1;
  return MLC_TIR_VISIT_CONTINUE;
}

/* Nonzero when |e| loads from |b|. */
static int loads(const mlc_tir_expr *e, const mlc_tir_buffer *b) {
  load_find f = {b, 0};
  mlc_tir_visitor v = {0};
  v.ctx = &f;
  v.pre_expr = load_pre;
  mlc_tir_visit_expr(&v, e);
  return f.found;
}

static int count_blocks(const mlc_tir_stmt *st) {
  mlc_tir_stmt *out[2];
  return sch_child_blocks(st, out, 2);
}

mlc_status mlc_sch_apply_rfactor(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *loop;
  int64_t axis = 0;
  MLC_RETURN_IF_ERROR(sch_arg_loop(s, in, "loop", &loop));
  MLC_RETURN_IF_ERROR(sch_arg_int_opt(s, in, "factor_axis", 0, &axis));
  mlc_tir_module *m = s->m;
  const char *ld = sch_desc(s, loop);
  if (axis < 0) return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "factor_axis %lld is negative", (long long)axis);
  if (!mlc_tir_is_const(loop->loop.min, 0))
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s does not start at 0", ld);
  mlc_tir_stmt *blks[2];
  if (count_blocks(loop) != 1 || sch_child_blocks(loop, blks, 2) != 1)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s holds no block or several", ld);
  mlc_tir_stmt *blk = blks[0];
  const char *bd = sch_desc(s, blk);
  const mlc_tir_stmt *up = one_store(blk->block.body), *ini = one_store(blk->block.init);
  if (!up || !ini || blk->block.predicate)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is not a reduction of one store with an init and no predicate", bd);
  mlc_tir_buffer *y = up->store.buffer;
  if (axis > y->rank)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "factor_axis %lld: %s has rank %d", (long long)axis, y->name, y->rank);
  int fa = (int)axis;
  const mlc_tir_expr *v = up->store.value;
  int acc_left = 0;
  if (v->kind != MLC_TIR_BINARY ||
      (v->bin.op != MLC_TIR_ADD && v->bin.op != MLC_TIR_MUL && v->bin.op != MLC_TIR_MIN && v->bin.op != MLC_TIR_MAX) ||
      !((acc_left = same_indices(v->bin.a, up)) || same_indices(v->bin.b, up)))
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s does not store %s[..] = %s[..] op value (op +, *, min, max)", bd,
                    y->name, y->name);
  const mlc_tir_expr *value = acc_left ? v->bin.b : v->bin.a;
  if (loads(value, y)) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "the value %s reduces reads %s itself", bd, y->name);
  if (ini->store.buffer != y || ini->store.n != up->store.n)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "the init of %s stores elsewhere", bd);
  for (int d = 0; d < up->store.n; d++)
    if (!mlc_tir_expr_equal(ini->store.indices[d], up->store.indices[d]))
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "the init of %s stores elsewhere", bd);
  const mlc_tir_var *lv = loop->loop.var;
  int vk = -1;
  for (int k = 0; k < blk->block.niters; k++) {
    const mlc_tir_iter_var *it = &blk->block.iters[k];
    if (mlc_tir_expr_uses_var(ini->store.value, it->var))
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "the init of %s depends on %s", bd, it->var->name);
    if (!it->binding || !mlc_tir_expr_uses_var(it->binding, lv)) continue;
    if (it->kind != MLC_TIR_ITER_REDUCE || vk >= 0)
      return sch_fail(s, MLC_SCH_ERR_REDUCTION, "%s binds %s of %s, which is not its one reduce iteration variable",
                      ld, it->var->name, bd);
    vk = k;
  }
  if (vk < 0) return sch_fail(s, MLC_SCH_ERR_REDUCTION, "%s binds no iteration variable of %s", ld, bd);
  mlc_tir_stmt *loops[MAX_LOOPS];
  int nl = sch_loops_above(s, blk, loops, MAX_LOOPS);
  if (nl < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than %d loops around %s", MAX_LOOPS, bd);
  const mlc_tir_expr *kb = blk->block.iters[vk].binding;
  /* the write-back covers the region the block writes */
  mlc_tir_expr **mins = MLC_ARENA_ARRAY(m->arena, (size_t)y->rank + 1, mlc_tir_expr *);
  mlc_tir_expr **exts = MLC_ARENA_ARRAY(m->arena, (size_t)y->rank + 1, mlc_tir_expr *);
  if (!mins || !exts) return mlc_oom();
  MLC_RETURN_IF_ERROR(sch_block_region(s, blk, y, 1, mins, exts));

  /* ---- the rfactor block: fresh iteration variables ---- */
  int ni = blk->block.niters;
  mlc_tir_iter_var *its = MLC_ARENA_ARRAY(m->arena, (size_t)ni + MAX_LOOPS + 2, mlc_tir_iter_var);
  mlc_tir_var **ovars = MLC_ARENA_ARRAY(m->arena, (size_t)ni + MAX_LOOPS + 2, mlc_tir_var *);
  mlc_tir_expr **ovals = MLC_ARENA_ARRAY(m->arena, (size_t)ni + MAX_LOOPS + 2, mlc_tir_expr *);
  if (!its || !ovars || !ovals) return mlc_oom();
  int nits = 0, nsub = 0;
  mlc_tir_var *vl = mlc_tir_var_new(m, mlc_arena_printf(m->arena, "v%s", lv->name), lv->dtype);
  if (!vl) return mlc_oom();
  its[nits++] = (mlc_tir_iter_var){vl, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), loop->loop.extent, mlc_tir_ref(m, (mlc_tir_var *)lv)};
  /* vk's binding over vl and one new reduce variable per other loop it uses */
  mlc_tir_var *lvars[MAX_LOOPS + 1];
  mlc_tir_expr *lvals[MAX_LOOPS + 1];
  int nlv = 0;
  lvars[nlv] = (mlc_tir_var *)lv;
  lvals[nlv++] = mlc_tir_ref(m, vl);
  for (int i = 0; i < nl; i++) {
    if (loops[i] == loop || !mlc_tir_expr_uses_var(kb, loops[i]->loop.var)) continue;
    mlc_tir_var *u = loops[i]->loop.var;
    mlc_tir_var *vu = mlc_tir_var_new(m, mlc_arena_printf(m->arena, "v%s", u->name), u->dtype);
    if (!vu) return mlc_oom();
    its[nits++] = (mlc_tir_iter_var){vu, MLC_TIR_ITER_REDUCE, loops[i]->loop.min, loops[i]->loop.extent,
                                     mlc_tir_ref(m, u)};
    lvars[nlv] = u;
    lvals[nlv++] = mlc_tir_ref(m, vu);
  }
  mlc_tir_subst lsub = {nlv, lvars, lvals, 0, NULL, NULL, 0};
  mlc_tir_expr *knew = mlc_tir_expr_copy(m, kb, &lsub);
  if (!knew) return mlc_oom();
  for (int k = 0; k < ni; k++) {
    const mlc_tir_iter_var *it = &blk->block.iters[k];
    ovars[nsub] = it->var;
    if (k == vk) {
      ovals[nsub++] = knew;
      continue;
    }
    mlc_tir_var *nv = mlc_tir_var_new(m, it->var->name, it->var->dtype);
    if (!nv) return mlc_oom();
    its[nits++] = (mlc_tir_iter_var){nv, it->kind, it->min, it->extent, it->binding};
    ovals[nsub++] = mlc_tir_ref(m, nv);
  }
  mlc_tir_subst isub = {nsub, ovars, ovals, 0, NULL, NULL, 1};
  /* Y_rf and the rfactor block's statements */
  mlc_tir_expr **shape = MLC_ARENA_ARRAY(m->arena, (size_t)y->rank + 2, mlc_tir_expr *);
  if (!shape) return mlc_oom();
  shape[fa] = loop->loop.extent;
  for (int d = 0; d < y->rank; d++) shape[d < fa ? d : d + 1] = y->shape[d];
  const char *rfbase = mlc_arena_printf(m->arena, "%s_rf", y->name);
  const char *rfname = rfbase ? sch_unique_buffer_name(s, rfbase) : NULL;
  mlc_tir_buffer *yrf = rfname ? mlc_tir_buffer_new(m, rfname, y->dtype, y->rank + 1, shape, MLC_TIR_SCOPE_GLOBAL) : NULL;
  mlc_tir_expr **ridx = MLC_ARENA_ARRAY(m->arena, (size_t)y->rank + 2, mlc_tir_expr *);
  if (!yrf || !ridx) return mlc_oom();
  ridx[fa] = mlc_tir_ref(m, vl);
  for (int d = 0; d < up->store.n; d++) ridx[d < fa ? d : d + 1] = mlc_tir_expr_copy(m, up->store.indices[d], &isub);
  mlc_tir_expr *nvalue = mlc_tir_expr_copy(m, value, &isub);
  mlc_tir_expr *acc = mlc_tir_load(m, yrf, y->rank + 1, ridx);
  mlc_tir_stmt *rf_body = nvalue && acc ? mlc_tir_store(m, yrf, y->rank + 1, ridx,
                                                         acc_left ? mlc_tir_binary(m, v->bin.op, acc, nvalue)
                                                                  : mlc_tir_binary(m, v->bin.op, nvalue, acc))
                                        : NULL;
  mlc_tir_stmt *rf_init = mlc_tir_store(m, yrf, y->rank + 1, ridx, mlc_tir_expr_copy(m, ini->store.value, NULL));
  const char *rbbase = mlc_arena_printf(s->arena, "%s_rf", blk->block.name);
  const char *rbname = rbbase ? sch_unique_block_name(s, rbbase) : NULL;
  mlc_tir_stmt *rf = rf_body && rf_init && rbname ? mlc_tir_block(m, rbname, nits, its, rf_init, rf_body) : NULL;
  if (!rf) return mlc_oom();
  rf->origin = blk->origin;

  /* ---- the write-back: loops over the region, then r ---- */
  int n = y->rank;
  mlc_tir_var **ax = MLC_ARENA_ARRAY(m->arena, (size_t)n + 2, mlc_tir_var *);
  mlc_tir_iter_var *wits = MLC_ARENA_ARRAY(m->arena, (size_t)n + 2, mlc_tir_iter_var);
  mlc_tir_expr **widx = MLC_ARENA_ARRAY(m->arena, (size_t)n + 2, mlc_tir_expr *);
  mlc_tir_expr **fidx = MLC_ARENA_ARRAY(m->arena, (size_t)n + 2, mlc_tir_expr *);
  if (!ax || !wits || !widx || !fidx) return mlc_oom();
  for (int d = 0; d < n; d++) {
    ax[d] = mlc_tir_var_new(m, mlc_arena_printf(m->arena, "ax%d", d), MLC_DTYPE_I64);
    mlc_tir_var *vd = mlc_tir_var_new(m, mlc_arena_printf(m->arena, "v%d", d), MLC_DTYPE_I64);
    if (!ax[d] || !vd) return mlc_oom();
    wits[d] = (mlc_tir_iter_var){vd, MLC_TIR_ITER_SPATIAL, mins[d], exts[d], mlc_tir_add(m, mlc_tir_ref(m, ax[d]), mins[d])};
    widx[d] = mlc_tir_ref(m, vd);
    fidx[d < fa ? d : d + 1] = widx[d];
  }
  mlc_tir_var *r = mlc_tir_var_new(m, mlc_arena_printf(m->arena, "%s_r", lv->name), lv->dtype);
  mlc_tir_var *vr = mlc_tir_var_new(m, mlc_arena_printf(m->arena, "v%s_r", lv->name), lv->dtype);
  if (!r || !vr) return mlc_oom();
  wits[n] = (mlc_tir_iter_var){vr, MLC_TIR_ITER_REDUCE, mlc_tir_i64(m, 0), loop->loop.extent, mlc_tir_ref(m, r)};
  fidx[fa] = mlc_tir_ref(m, vr);
  mlc_tir_expr *cur = mlc_tir_load(m, y, n, widx), *part = mlc_tir_load(m, yrf, n + 1, fidx);
  mlc_tir_stmt *wb_body = cur && part ? mlc_tir_store(m, y, n, widx,
                                                      acc_left ? mlc_tir_binary(m, v->bin.op, cur, part)
                                                               : mlc_tir_binary(m, v->bin.op, part, cur))
                                      : NULL;
  mlc_tir_stmt *wb_init = mlc_tir_store(m, y, n, widx, mlc_tir_expr_copy(m, ini->store.value, NULL));
  /* the write-back keeps the block's name (the block itself goes) */
  mlc_tir_stmt *wb = wb_body && wb_init ? mlc_tir_block(m, blk->block.name, n + 1, wits, wb_init, wb_body) : NULL;
  if (!wb) return mlc_oom();
  wb->origin = blk->origin;
  mlc_tir_stmt *wnest = mlc_tir_for(m, r, mlc_tir_i64(m, 0), loop->loop.extent, MLC_TIR_FOR_SERIAL, NULL, wb);
  for (int d = n - 1; d >= 0 && wnest; d--)
    wnest = mlc_tir_for(m, ax[d], mlc_tir_i64(m, 0), exts[d], MLC_TIR_FOR_SERIAL, NULL, wnest);
  if (!wnest) return mlc_oom();

  /* ---- rewrite ---- */
  mlc_tir_stmt *nest = sch_scope_nest(s, blk);
  if (!nest) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is not inside the function", bd);
  if (sch_accesses_outside(nest, y, 0, blk))
    return sch_fail(s, MLC_SCH_ERR_DEPENDENCE,
                    "%s, the loop nest holding %s, also accesses %s: it would run before the write-back",
                    sch_desc(s, nest), bd, y->name);
  MLC_RETURN_IF_ERROR(sch_replace(s, nest, mlc_tir_seq2(m, nest, wnest)));
  sch_repoint(s, blk, wb);
  MLC_RETURN_IF_ERROR(sch_replace(s, blk, rf));
  MLC_RETURN_IF_ERROR(sch_add_alloc(s, yrf));
  if (blk->block.nreads || blk->block.nwrites) {
    MLC_RETURN_IF_ERROR(mlc_tir_block_compute_regions(m, rf));
    MLC_RETURN_IF_ERROR(mlc_tir_block_compute_regions(m, wb));
  }
  return sch_out_stmt(s, in, MLC_SCH_RV_BLOCK, rf);
}

mlc_status mlc_sch_rfactor(mlc_sch *s, mlc_sch_rv loop, int factor_axis, mlc_sch_rv *out) {
  mlc_sch_arg a[2] = {MLC_SCH_RV_ARG(loop), MLC_SCH_INT_ARG(factor_axis)};
  a[0].key = "loop";
  a[1].key = "factor_axis";
  mlc_sch_rv outs[MLC_SCH_MAX_OUTS];
  MLC_RETURN_IF_ERROR(mlc_sch_apply(s, MLC_SCH_INST_RFACTOR, 2, a, outs, NULL));
  if (out) *out = outs[0];
  return NULL;
}
