/*
** split.c: sch.split(loop=l, factors=[None, 4]) replaces a loop by a nest
** of loops, outermost first, whose extents are the factors:
**
**   for j in range(10):        ->   for j_0, j_1 in T.grid(3, 4):
**       with T.block("B"):              with T.block("B"):
**           vj = T.axis...(10, j)           vj = T.axis.spatial(10, j_0 * 4 + j_1)
**                                           T.where(j_0 * 4 + j_1 < 10)
**
** Factors are integers or sampled integer handles; at most one is None and
** is inferred as ceil(extent / product of the others).  The loop variable
** becomes min + j_0 * (f1 * ... ) + ... + j_{n-1} everywhere under the loop
** (simplified).  When the factors' product exceeds the extent (a
** non-divisible split, or a symbolic extent not of the form x * c with the
** product dividing c), the blocks under the loop get
** the predicate "that sum < extent" (and-ed with theirs), so the extra
** iterations do nothing.
**
** Refused: a product that does not cover a constant extent, a factor < 1,
** two None, all factors given for a symbolic extent (FACTORS); a loop that
** is not serial or is annotated (STRUCTURE: split it before); a
** non-divisible split of a loop with statements outside blocks under it
** (STRUCTURE: a predicate needs blocks to hold it).
**
** The split loop's handles are retired; the outputs are the new loops.
*/
#include <stdio.h>
#include <string.h>

#include "lower/schedule/sched_int.h"

/* Nonzero if a store, evaluate or assert under |st| is not inside a block. */
static int has_bare_stmt(const mlc_tir_stmt *st) {
  if (!st) return 0;
  switch (st->kind) {
    case MLC_TIR_BLOCK: return 0;
    case MLC_TIR_FOR: return has_bare_stmt(st->loop.body);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++)
        if (has_bare_stmt(st->seq.stmts[i])) return 1;
      return 0;
    case MLC_TIR_IF: return 1; /* a condition outside blocks is not a block's predicate */
    case MLC_TIR_ALLOCATE: return has_bare_stmt(st->alloc.body);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return 1;
  }
  return 0;
}

/* "3 * 5" of the factors, with "?" for the None one. */
static const char *factors_str(mlc_sch *s, int n, const int64_t *f, int none_at) {
  char buf[1024];
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < n && k < sizeof buf - 32; i++) {
    if (i) k += (size_t)snprintf(buf + k, sizeof buf - k, " * ");
    if (i == none_at)
      k += (size_t)snprintf(buf + k, sizeof buf - k, "None");
    else
      k += (size_t)snprintf(buf + k, sizeof buf - k, "%lld", (long long)f[i]);
  }
  const char *r = mlc_arena_strdup(s->arena, buf);
  return r ? r : "?";
}

mlc_status mlc_sch_apply_split(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *loop;
  const mlc_sch_arg *fl;
  MLC_RETURN_IF_ERROR(sch_arg_loop(s, in, "loop", &loop));
  MLC_RETURN_IF_ERROR(sch_arg_list(s, in, "factors", &fl));
  const char *ld = sch_desc(s, loop);
  int n = fl->n;
  if (n < 2 || n > MLC_SCH_MAX_OUTS)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "factors: %d factors for %s (2 to %d)", n, ld, MLC_SCH_MAX_OUTS);
  if (loop->loop.kind != MLC_TIR_FOR_SERIAL)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is %s: split loops before setting their kind", ld,
                    mlc_tir_for_kind_name(loop->loop.kind));
  if (loop->loop.nannots)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is annotated (\"%s\"): split loops before annotating them", ld,
                    loop->loop.annots[0].key);
  int64_t f[MLC_SCH_MAX_OUTS], prod = 1;
  int none_at = -1;
  for (int i = 0; i < n; i++) {
    const mlc_sch_arg *a = &fl->items[i];
    if (a->kind == MLC_SCH_ARG_NONE) {
      if (none_at >= 0)
        return sch_fail(s, MLC_SCH_ERR_FACTORS, "factors %d and %d of %s are both None: one factor at most is inferred",
                        none_at, i, ld);
      none_at = i;
      f[i] = 1;
      continue;
    }
    MLC_RETURN_IF_ERROR(sch_item_int(s, a, "factors", &f[i]));
    if (f[i] < 1)
      return sch_fail(s, MLC_SCH_ERR_FACTORS, "factor %lld (position %d) of %s is not positive", (long long)f[i], i,
                      ld);
    if (__builtin_mul_overflow(prod, f[i], &prod))
      return sch_fail(s, MLC_SCH_ERR_FACTORS, "the product of the factors %s of %s overflows",
                      factors_str(s, n, f, none_at), ld);
  }
  const mlc_tir_expr *ext = loop->loop.extent;
  int is_const = ext->kind == MLC_TIR_INT_IMM;
  int64_t e = is_const ? ext->int_value : 0;
  int need_pred;
  if (none_at < 0) {
    if (!is_const)
      return sch_fail(s, MLC_SCH_ERR_FACTORS,
                      "the extent %s of %s is symbolic: one factor must be None (inferred)", sch_expr_str(s, ext),
                      ld);
    if (prod < e)
      return sch_fail(s, MLC_SCH_ERR_FACTORS, "factors %s = %lld do not cover the extent %lld of %s",
                      factors_str(s, n, f, none_at), (long long)prod, (long long)e, ld);
    need_pred = prod > e;
  } else if (is_const) {
    int64_t inferred = e <= 0 ? 0 : (e - 1) / prod + 1;
    f[none_at] = inferred;
    need_pred = inferred * prod > e;
  } else {
    /* x * c split by a divisor of c: whole iterations, no predicate */
    int64_t c = 0;
    if (ext->kind == MLC_TIR_BINARY && ext->bin.op == MLC_TIR_MUL)
      c = ext->bin.b->kind == MLC_TIR_INT_IMM ? ext->bin.b->int_value
          : ext->bin.a->kind == MLC_TIR_INT_IMM ? ext->bin.a->int_value : 0;
    need_pred = prod != 1 && !(c > 0 && c % prod == 0);
  }
  if (need_pred && has_bare_stmt(loop->loop.body))
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE,
                    "%s has statements outside blocks under it: the non-divisible split (%s for extent %s) needs "
                    "blocks to hold its predicate",
                    ld, factors_str(s, n, f, is_const ? -1 : none_at), sch_expr_str(s, ext));

  /* ---- rewrite ---- */
  mlc_tir_module *m = s->m;
  mlc_dtype dt = loop->loop.var->dtype;
  mlc_tir_var *vars[MLC_SCH_MAX_OUTS];
  mlc_tir_expr *exts[MLC_SCH_MAX_OUTS];
  mlc_arith *an = NULL;
  MLC_RETURN_IF_ERROR(mlc_arith_create(mlc_allocator_default(), &an));
  mlc_status st = sch_bind_loops_above(s, an, loop);
  for (int i = 0; !st && i < n; i++) {
    char name[256];
    snprintf(name, sizeof name, "%s_%d", loop->loop.var->name, i);
    vars[i] = mlc_tir_var_new(m, name, dt);
    if (i == none_at && !is_const) {
      /* ceil(extent / prod) */
      mlc_tir_expr *num = mlc_tir_add(m, (mlc_tir_expr *)ext, mlc_tir_int(m, dt, prod - 1));
      exts[i] = mlc_arith_simplify(an, m, mlc_tir_binary(m, MLC_TIR_FLOORDIV, num, mlc_tir_int(m, dt, prod)));
    } else {
      exts[i] = mlc_tir_int(m, dt, f[i]);
    }
    if (!vars[i] || !exts[i]) st = mlc_oom();
    if (!st) {
      st = mlc_arith_bind(an, vars[i], mlc_tir_int(m, dt, 0), exts[i]);
    }
  }
  /* sum = j_0 * stride_0 + ... + j_{n-1}; the old variable is min + sum */
  mlc_tir_expr *strides[MLC_SCH_MAX_OUTS], *sum = NULL;
  for (int i = n - 1; !st && i >= 0; i--) {
    strides[i] = i == n - 1 ? NULL : strides[i + 1] ? mlc_tir_mul(m, exts[i + 1], strides[i + 1]) : exts[i + 1];
    if (i < n - 1 && !strides[i]) st = mlc_oom();
  }
  for (int i = 0; !st && i < n; i++) {
    mlc_tir_expr *term = strides[i] ? mlc_tir_mul(m, mlc_tir_ref(m, vars[i]), strides[i]) : mlc_tir_ref(m, vars[i]);
    sum = sum ? mlc_tir_add(m, sum, term) : term;
    if (!sum) st = mlc_oom();
  }
  mlc_tir_expr *value = NULL, *pred = NULL;
  if (!st) {
    value = mlc_tir_is_const(loop->loop.min, 0) ? sum : mlc_tir_add(m, loop->loop.min, sum);
    if (need_pred) pred = mlc_tir_binary(m, MLC_TIR_LT, sum, (mlc_tir_expr *)ext);
    if (!value || (need_pred && !pred)) st = mlc_oom();
  }
  if (!st) st = sch_subst_inplace(s, an, loop->loop.body, 1, &loop->loop.var, &value);
  mlc_arith_destroy(an);
  if (st) return st;
  if (pred) {
    mlc_tir_stmt *blocks[1024], *b = loop->loop.body;
    int nb = b->kind == MLC_TIR_BLOCK ? (blocks[0] = b, 1) : sch_child_blocks(b, blocks, 1024);
    if (nb < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than 1024 blocks under %s", ld);
    for (int i = 0; i < nb; i++) {
      mlc_tir_expr *old = blocks[i]->block.predicate;
      mlc_tir_expr *p = old ? mlc_tir_binary(m, MLC_TIR_AND, old, pred) : pred;
      if (!p) return mlc_oom();
      blocks[i]->block.predicate = p;
    }
  }
  mlc_tir_stmt *loops[MLC_SCH_MAX_OUTS], *body = loop->loop.body;
  for (int i = n - 1; i >= 0; i--) {
    loops[i] = mlc_tir_for(m, vars[i], mlc_tir_int(m, dt, 0), exts[i], MLC_TIR_FOR_SERIAL, NULL, body);
    if (!loops[i]) return mlc_oom();
    loops[i]->origin = loop->origin;
    body = loops[i];
  }
  MLC_RETURN_IF_ERROR(sch_replace(s, loop, loops[0]));
  sch_retire(s, loop);
  for (int i = 0; i < n; i++) MLC_RETURN_IF_ERROR(sch_out_stmt(s, in, MLC_SCH_RV_LOOP, loops[i]));
  return NULL;
}

mlc_status mlc_sch_split(mlc_sch *s, mlc_sch_rv loop, int nfactors, const mlc_sch_arg *factors, mlc_sch_rv *out) {
  if (nfactors < 0 || nfactors > MLC_SCH_MAX_OUTS || (nfactors && !factors))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "split: %d factors (0 to %d)", nfactors, MLC_SCH_MAX_OUTS);
  mlc_sch_arg items[MLC_SCH_MAX_OUTS];
  for (int i = 0; i < nfactors; i++) {
    items[i] = factors[i];
    items[i].key = NULL;
  }
  mlc_sch_arg a[2] = {MLC_SCH_RV_ARG(loop), MLC_SCH_NONE_ARG};
  a[0].key = "loop";
  a[1].key = "factors";
  a[1].kind = MLC_SCH_ARG_LIST;
  a[1].n = nfactors;
  a[1].items = items;
  mlc_sch_rv outs[MLC_SCH_MAX_OUTS];
  int nouts = 0;
  MLC_RETURN_IF_ERROR(mlc_sch_apply(s, MLC_SCH_INST_SPLIT, 2, a, outs, &nouts));
  if (out) memcpy(out, outs, (size_t)nouts * sizeof *out);
  return NULL;
}
