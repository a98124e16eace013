/*
** materialize_outputs.c: every value main returns is a distinct computed
** value, so the runtime can give each output its own buffer.
**
** A returned parameter, constant, or value returned twice gets a copy
** (R.copy, which the runtime computes into the output's buffer).
**
**   before: return (x, c0, lv, lv)
**   after:  lv1 = R.copy(x); lv2 = R.copy(c0); lv3 = R.copy(lv); return (lv1, lv2, lv, lv3)
*/
#include <string.h>

#include "graph/pass.h"

static mlc_status materialize(mlc_module *m, mlc_func *f) {
  int nids = m->next_value_id > 0 ? m->next_value_id : 1;
  char *seen = mlc_calloc(m->alloc, (size_t)nids, 1); /* by value id: returned already */
  if (!seen) return mlc_oom();
  int fold = m->fold;
  m->fold = 0;
  mlc_func_append_at_end(f);
  mlc_status s = NULL;
  for (int i = 0; i < f->nrets && !s; i++) {
    mlc_value *v = f->rets[i];
    int dup = v->id >= 0 && v->id < nids && seen[v->id];
    if (v->id >= 0 && v->id < nids) seen[v->id] = 1;
    if (v->kind == MLC_VALUE_VAR && !dup) continue;
    mlc_value *copy;
    mlc_origin o = {"", "Identity", 0, -1};
    s = mlc_graph_emit1(f, MLC_OP_COPY, &v, 1, NULL, 0, &o, &copy);
    if (!s) {
      copy->name = v->name;
      f->rets[i] = copy;
    }
  }
  m->fold = fold;
  mlc_free(m->alloc, seen, (size_t)nids);
  return s;
}

/* The pass: main's outputs (other functions are called, not returned to
** the user). */
mlc_status mlc_pass_materialize_outputs(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)ctx;
  mlc_func *f = mlc_module_func(m, "main");
  return f ? materialize(m, f) : NULL;
}
