/*
** fold_constant.c: evaluate op calls whose arguments are all constants.
**
** One forward walk over each function.  A binding `outs = op(args)` with
**   - kind MLC_CALL_OP, op pattern not OUT_EWISE_FUSABLE (matmul and conv
**     stay calls: folding them would only grow the weights),
**   - every arg a constant (after earlier folds were substituted),
**   - every output static, not strings, and not much larger than the
**     inputs (mlc_fold_size_ok),
** is evaluated with mlc_graph_eval; its outputs become new constants of the
** module, later bindings and the returned values use those instead, and the
** binding is removed.  An op without an evaluator (MLC_UNIMPLEMENTED) is left
** alone; any other evaluation error fails the pass.  Since uses follow
** definitions, a single walk reaches the fixpoint.  Constants that are no
** longer used are left for dce.
**
**   before: lv0 = R.add(c0, c1); gv = R.relu(lv0)     (c0, c1 constants)
**   after:  gv  = R.const(relu(c0 + c1))
*/
#include <string.h>

#include "graph/graph_int.h"
#include "graph/pass.h"

typedef struct folder {
  mlc_module *m;
  mlc_subst subst; /* a folded value -> the constant that replaces it */
} folder;

/*
** Tries to fold |b| (its args already substituted).  Sets *folded when it
** did; the new constants are recorded in the substitution map.
*/
static mlc_status try_fold(folder *fd, const mlc_binding *b, int *folded) {
  mlc_module *m = fd->m;
  *folded = 0;
  if (b->kind != MLC_CALL_OP || (unsigned)b->op >= MLC_OP_COUNT) return NULL;
  if (mlc_op_pattern[b->op] == MLC_PATTERN_OUT_EWISE_FUSABLE) return NULL;
  if (b->nouts < 1 || b->nouts > MLC_MAX_OUTS) return NULL;
  const void *in[64];
  size_t in_bytes = 0;
  if (b->nargs > 64) return NULL;
  for (int i = 0; i < b->nargs; i++) {
    const mlc_const *c = b->args[i] ? mlc_value_const(m, b->args[i]) : NULL;
    if (!c) return NULL;
    in[i] = c->data;
    in_bytes += c->nbytes;
  }
  mlc_type types[MLC_MAX_OUTS];
  size_t nbytes[MLC_MAX_OUTS];
  for (int i = 0; i < b->nouts; i++) types[i] = b->outs[i]->type;
  if (!mlc_fold_size_ok(types, b->nouts, in_bytes)) return NULL;
  for (int i = 0; i < b->nouts; i++)
    nbytes[i] = (size_t)mlc_type_numel(&types[i]) * mlc_dtype_size(types[i].dtype);
  mlc_call_info ci = {m, b->op, b->nargs, b->args, b->nattrs, b->attrs, &b->origin};
  void *out[MLC_MAX_OUTS] = {0};
  mlc_status s = mlc_graph_eval(&ci, types, b->nouts, in, out);
  if (s) {
    if (mlc_status_code(s) == MLC_UNIMPLEMENTED) {
      mlc_status_free(s);
      return NULL;
    }
    return s;
  }
  mlc_value *cv[MLC_MAX_OUTS];
  for (int i = 0; i < b->nouts; i++) {
    /* adopt_const owns out[i] from here, also when it fails. */
    mlc_status e = mlc_module_adopt_const(m, NULL, &types[i], out[i], nbytes[i], &cv[i]);
    out[i] = NULL;
    if (e) {
      for (int j = i + 1; j < b->nouts; j++) mlc_const_free(m, out[j], nbytes[j]);
      return e;
    }
  }
  for (int i = 0; i < b->nouts; i++) mlc_subst_set(&fd->subst, b->outs[i], cv[i]);
  *folded = 1;
  return NULL;
}

static mlc_status fold_func(folder *fd, mlc_func *f) {
  for (int bi = 0; bi < f->nblocks; bi++) {
    mlc_block *blk = &f->blocks[bi];
    int kept = 0;
    for (int j = 0; j < blk->n; j++) {
      mlc_binding *b = blk->bindings[j];
      for (int a = 0; a < b->nargs; a++) b->args[a] = mlc_subst_get(&fd->subst, b->args[a]);
      int folded = 0;
      mlc_status s = try_fold(fd, b, &folded);
      if (s)
        return mlc_status_annotate(s, "function \"%s\": folding %s", f->name,
                                   (unsigned)b->op < MLC_OP_COUNT ? mlc_op_name[b->op] : "?");
      if (!folded) blk->bindings[kept++] = b;
    }
    blk->n = kept;
  }
  for (int i = 0; i < f->nrets; i++) f->rets[i] = mlc_subst_get(&fd->subst, f->rets[i]);
  return NULL;
}

/* The pass: rewrites |m| in place (new constants are owned by |m|); |ctx|
** is borrowed and unused. */
mlc_status mlc_pass_fold_constant(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)ctx;
  folder fd = {m, {{0}, 0, NULL}};
  MLC_RETURN_IF_ERROR(mlc_subst_init(&fd.subst, m));
  mlc_status s = NULL;
  for (int i = 0; i < m->nfuncs && !s; i++) s = fold_func(&fd, m->funcs[i]);
  mlc_subst_fini(&fd.subst);
  return s;
}
