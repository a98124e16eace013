/*
** fuse.c: sch.fuse(loops=[l1, l2, ...]) replaces directly nested loops by
** one loop over the product of their extents (TVM writes the loops
** positionally, sch.fuse(l1, l2); a keyword trace names them loops=[...]):
**
**   for i, j in T.grid(128, 128):     ->   for i_j_fused in range(16384):
**       vi = T.axis.spatial(128, i)            vi = T.axis.spatial(128, i_j_fused // 128)
**       vj = T.axis.spatial(128, j)            vj = T.axis.spatial(128, i_j_fused % 128)
**
** Loop k of n (extent e_k, stride s_k = e_{k+1} * ... * e_{n-1}) becomes
** min_k + (fused // s_k) % e_k everywhere under the loops (simplified; the
** outermost needs no modulo).  Extents may be symbolic (their product).
**
** Refused: fewer than two loops, a loop given twice, a loop that is not the
** only statement of the one before it (LOOP_NEST); an extent or min that
** uses an outer loop of the group (DEPENDENCE: not a box); a loop that is
** not serial or is annotated (STRUCTURE).  The fused loops' handles are
** retired; the output is the new loop.
*/
#include <string.h>

#include "lower/schedule/sched_int.h"

mlc_status mlc_sch_apply_fuse(mlc_sch *s, mlc_sch_inst *in) {
  const mlc_sch_arg *ll;
  MLC_RETURN_IF_ERROR(sch_arg_list(s, in, "loops", &ll));
  int n = ll->n;
  if (n < 2 || n > MLC_SCH_MAX_OUTS)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "loops: %d loops given (2 to %d)", n, MLC_SCH_MAX_OUTS);
  mlc_tir_stmt *L[MLC_SCH_MAX_OUTS];
  for (int i = 0; i < n; i++) MLC_RETURN_IF_ERROR(sch_item_loop(s, &ll->items[i], "loops", &L[i]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (L[i] == L[j]) return sch_fail(s, MLC_SCH_ERR_LOOP_NEST, "%s is given twice", sch_desc(s, L[i]));
  for (int i = 1; i < n; i++) {
    if (L[i - 1]->loop.body == L[i]) continue;
    if (sch_contains(L[i - 1]->loop.body, L[i]))
      return sch_fail(s, MLC_SCH_ERR_LOOP_NEST,
                      "%s is not directly inside %s: other statements or loops lie between them",
                      sch_desc(s, L[i]), sch_desc(s, L[i - 1]));
    return sch_fail(s, MLC_SCH_ERR_LOOP_NEST, "%s is not inside %s: fused loops are given outermost first, each "
                    "directly inside the one before", sch_desc(s, L[i]), sch_desc(s, L[i - 1]));
  }
  for (int i = 0; i < n; i++) {
    if (L[i]->loop.kind != MLC_TIR_FOR_SERIAL)
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is %s: fuse loops before setting their kind", sch_desc(s, L[i]),
                      mlc_tir_for_kind_name(L[i]->loop.kind));
    if (L[i]->loop.nannots)
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is annotated (\"%s\"): fuse loops before annotating them",
                      sch_desc(s, L[i]), L[i]->loop.annots[0].key);
    for (int j = 0; j < i; j++)
      if (mlc_tir_expr_uses_var(L[i]->loop.extent, L[j]->loop.var) ||
          mlc_tir_expr_uses_var(L[i]->loop.min, L[j]->loop.var))
        return sch_fail(s, MLC_SCH_ERR_DEPENDENCE, "the range of %s depends on %s: the loops are not a box to fuse",
                        sch_desc(s, L[i]), sch_desc(s, L[j]));
  }
  int all_const = 1;
  int64_t total = 1;
  for (int i = 0; i < n; i++) {
    const mlc_tir_expr *e = L[i]->loop.extent;
    if (e->kind != MLC_TIR_INT_IMM) {
      all_const = 0;
      continue;
    }
    if (__builtin_mul_overflow(total, e->int_value, &total))
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "the product of the extents of %s and %s overflows",
                      sch_desc(s, L[0]), sch_desc(s, L[i]));
  }

  /* ---- rewrite ---- */
  mlc_tir_module *m = s->m;
  mlc_dtype dt = L[0]->loop.var->dtype;
  mlc_strbuf nb = MLC_STRBUF_INIT;
  for (int i = 0; i < n; i++) mlc_sb_printf(&nb, "%s_", L[i]->loop.var->name);
  mlc_sb_puts(&nb, "fused");
  mlc_tir_var *fv = nb.oom ? NULL : mlc_tir_var_new(m, mlc_sb_str(&nb), dt);
  mlc_sb_fini(&nb);
  mlc_tir_expr *ext = NULL;
  if (all_const) {
    ext = mlc_tir_int(m, dt, total);
  } else {
    for (int i = 0; i < n; i++) ext = ext ? mlc_tir_mul(m, ext, L[i]->loop.extent) : L[i]->loop.extent;
  }
  if (!fv || !ext) return mlc_oom();
  mlc_arith *an = NULL;
  MLC_RETURN_IF_ERROR(mlc_arith_create(mlc_allocator_default(), &an));
  mlc_status st = sch_bind_loops_above(s, an, L[0]);
  if (!st && !all_const) ext = mlc_arith_simplify(an, m, ext);
  if (!st && !ext) st = mlc_oom();
  if (!st) st = mlc_arith_bind(an, fv, mlc_tir_int(m, dt, 0), ext);
  mlc_tir_var *vars[MLC_SCH_MAX_OUTS];
  mlc_tir_expr *vals[MLC_SCH_MAX_OUTS], *stride = NULL;
  for (int i = n - 1; !st && i >= 0; i--) {
    mlc_tir_expr *v = mlc_tir_ref(m, fv);
    if (stride) v = mlc_tir_binary(m, MLC_TIR_FLOORDIV, v, stride);
    if (i > 0) v = mlc_tir_binary(m, MLC_TIR_FLOORMOD, v, L[i]->loop.extent);
    if (!mlc_tir_is_const(L[i]->loop.min, 0)) v = mlc_tir_add(m, L[i]->loop.min, v);
    vars[i] = L[i]->loop.var;
    vals[i] = v;
    stride = stride ? mlc_tir_mul(m, L[i]->loop.extent, stride) : L[i]->loop.extent;
    if (!v || !stride) st = mlc_oom();
  }
  mlc_tir_stmt *body = L[n - 1]->loop.body;
  if (!st) st = sch_subst_inplace(s, an, body, n, vars, vals);
  mlc_arith_destroy(an);
  if (st) return st;
  mlc_tir_stmt *fused = mlc_tir_for(m, fv, mlc_tir_int(m, dt, 0), ext, MLC_TIR_FOR_SERIAL, NULL, body);
  if (!fused) return mlc_oom();
  fused->origin = L[0]->origin;
  MLC_RETURN_IF_ERROR(sch_replace(s, L[0], fused));
  for (int i = 0; i < n; i++) sch_retire(s, L[i]);
  return sch_out_stmt(s, in, MLC_SCH_RV_LOOP, fused);
}

mlc_status mlc_sch_fuse(mlc_sch *s, int nloops, const mlc_sch_rv *loops, mlc_sch_rv *out) {
  if (nloops < 0 || nloops > MLC_SCH_MAX_OUTS || (nloops && !loops))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "fuse: %d loops (0 to %d)", nloops, MLC_SCH_MAX_OUTS);
  mlc_sch_arg items[MLC_SCH_MAX_OUTS];
  for (int i = 0; i < nloops; i++) items[i] = MLC_SCH_RV_ARG(loops[i]);
  mlc_sch_arg a = MLC_SCH_NONE_ARG;
  a.key = "loops";
  a.kind = MLC_SCH_ARG_LIST;
  a.n = nloops;
  a.items = items;
  mlc_sch_rv outs[MLC_SCH_MAX_OUTS];
  MLC_RETURN_IF_ERROR(mlc_sch_apply(s, MLC_SCH_INST_FUSE, 1, &a, outs, NULL));
  if (out) *out = outs[0];
  return NULL;
}
