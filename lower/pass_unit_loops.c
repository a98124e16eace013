/*
** pass_unit_loops.c: loops that run once disappear.
**
**   for i in range(c, c + 1): body   ->   body[i := c]
**
** Loops bound to a GPU thread axis stay.  The substitution goes through
** mlc_tir_stmt_copy, so the body's index arithmetic folds again (i * 16 + j
** with i = 0 gives j); block bindings are substituted as well, so this pass
** runs before or after lower_blocks.
*/
#include "lower/tir_lower.h"
#include "lower/tir_lower_int.h"

typedef struct unit_ctx {
  mlc_tir_module *m;
} unit_ctx;

static mlc_tir_stmt *rw(void *vc, mlc_tir_stmt *s) {
  unit_ctx *c = vc;
  mlc_tir_stmt *r = mlc_tir_lw_map_children(c->m, s, rw, c);
  if (!r || r->kind != MLC_TIR_FOR || !mlc_tir_is_const(r->loop.extent, 1) ||
      r->loop.kind == MLC_TIR_FOR_THREAD_BINDING) /* a GPU axis stays, even of extent 1 */
    return r;
  mlc_tir_var *v = r->loop.var;
  mlc_tir_expr *val = r->loop.min;
  if (val->dtype != v->dtype) val = mlc_tir_cast(c->m, v->dtype, val);
  mlc_tir_subst sub = {1, &v, &val, 0, NULL, NULL, 0};
  return val ? mlc_tir_stmt_copy(c->m, r->loop.body, &sub) : NULL;
}

mlc_status mlc_tir_pass_remove_unit_loops(mlc_tir_module *m, mlc_tir_func *f) {
  unit_ctx c = {m};
  mlc_tir_stmt *b = rw(&c, f->body);
  if (!b) return mlc_oom();
  f->body = b;
  return NULL;
}
