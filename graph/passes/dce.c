/*
** dce.c: dead code elimination.
**
** 1. Bindings: a binding of a dataflow block is live when one of its outputs
**    is returned by the function or is an arg of a live binding.  One
**    backward walk per function marks liveness (uses follow definitions);
**    dead bindings are removed, and blocks left empty are dropped.  Bindings
**    of non-dataflow blocks may have side effects: they are always kept (as
**    in Relax, whose DCE only touches dataflow blocks).
** 2. Constants: entries of the constant table that no binding arg and no
**    returned value of any function refers to are freed, the table is
**    compacted, and the const_index of every constant value reachable from
**    the functions is renumbered.
**
**   before: lv0 = R.relu(x); gv = R.exp(x); return gv
**   after:  gv = R.exp(x); return gv
*/
#include <string.h>

#include "graph/graph_int.h"
#include "graph/pass.h"

static int in_range(const mlc_value *v, int n) { return v && v->id >= 0 && v->id < n; }

/* Removes the dead bindings of |f|; |live| is scratch of |nids| bytes. */
static void dce_func(mlc_func *f, char *live, int nids) {
  memset(live, 0, (size_t)nids);
  for (int i = 0; i < f->nrets; i++)
    if (in_range(f->rets[i], nids)) live[f->rets[i]->id] = 1;
  for (int bi = f->nblocks - 1; bi >= 0; bi--) {
    mlc_block *blk = &f->blocks[bi];
    for (int j = blk->n - 1; j >= 0; j--) {
      mlc_binding *b = blk->bindings[j];
      int keep = !blk->dataflow;
      for (int o = 0; !keep && o < b->nouts; o++) keep = in_range(b->outs[o], nids) && live[b->outs[o]->id];
      if (!keep) {
        blk->bindings[j] = NULL;
        continue;
      }
      for (int a = 0; a < b->nargs; a++)
        if (in_range(b->args[a], nids)) live[b->args[a]->id] = 1;
    }
  }
  for (int bi = 0; bi < f->nblocks; bi++) {
    mlc_block *blk = &f->blocks[bi];
    int kept = 0;
    for (int j = 0; j < blk->n; j++)
      if (blk->bindings[j]) blk->bindings[kept++] = blk->bindings[j];
    blk->n = kept;
  }
  mlc_func_compact(f); /* blocks left empty go */
}

/* Calls |fn| on every constant value that an arg, a return or a
** parameter's known or default value refers to. */
static void for_each_const_use(mlc_module *m, void (*fn)(void *ud, mlc_value *v), void *ud) {
  for (int fi = 0; fi < m->nfuncs; fi++) {
    mlc_func *f = m->funcs[fi];
    for (int bi = 0; bi < f->nblocks; bi++)
      for (int j = 0; j < f->blocks[bi].n; j++) {
        mlc_binding *b = f->blocks[bi].bindings[j];
        for (int a = 0; a < b->nargs; a++)
          if (b->args[a] && b->args[a]->kind == MLC_VALUE_CONST) fn(ud, b->args[a]);
      }
    for (int i = 0; i < f->nrets; i++)
      if (f->rets[i] && f->rets[i]->kind == MLC_VALUE_CONST) fn(ud, f->rets[i]);
    for (int i = 0; i < f->nparam_values; i++) /* known values of parameters (bind_params) */
      if (f->param_values[i] && f->param_values[i]->kind == MLC_VALUE_CONST) fn(ud, f->param_values[i]);
    for (int i = 0; i < f->nparam_defaults; i++) /* default values of inputs (the archiver stores them) */
      if (f->param_defaults[i] && f->param_defaults[i]->kind == MLC_VALUE_CONST) fn(ud, f->param_defaults[i]);
  }
}

typedef struct const_scan {
  int nconsts;
  char *used;   /* by const index */
  int *remap;   /* by const index: new index */
  int nids;
  char *seen;   /* by value id: const_index already renumbered */
} const_scan;

static void mark_used(void *ud, mlc_value *v) {
  const_scan *cs = ud;
  if (v->const_index >= 0 && v->const_index < cs->nconsts) cs->used[v->const_index] = 1;
}

static void renumber(void *ud, mlc_value *v) {
  const_scan *cs = ud;
  if (!in_range(v, cs->nids) || cs->seen[v->id]) return;
  cs->seen[v->id] = 1;
  if (v->const_index >= 0 && v->const_index < cs->nconsts) v->const_index = cs->remap[v->const_index];
}

/* Frees unreferenced constants and compacts the table. */
static mlc_status drop_consts(mlc_module *m, int nids) {
  int n = m->nconsts;
  if (n == 0) return NULL;
  const_scan cs = {n, NULL, NULL, nids, NULL};
  cs.used = mlc_calloc(m->alloc, (size_t)n, 1);
  cs.remap = mlc_calloc(m->alloc, (size_t)n, sizeof *cs.remap);
  cs.seen = mlc_calloc(m->alloc, (size_t)nids, 1);
  mlc_status s = NULL;
  if (!cs.used || !cs.remap || !cs.seen) {
    s = mlc_oom();
    goto done;
  }
  for_each_const_use(m, mark_used, &cs);
  int k = 0;
  for (int i = 0; i < n; i++) cs.remap[i] = cs.used[i] ? k++ : -1;
  if (k == n) goto done;
  for_each_const_use(m, renumber, &cs);
  for (int i = 0; i < n; i++) {
    if (cs.used[i])
      m->consts[cs.remap[i]] = m->consts[i];
    else
      mlc_const_free(m, m->consts[i].data, m->consts[i].nbytes);
  }
  memset(&m->consts[k], 0, sizeof *m->consts * (size_t)(n - k));
  m->nconsts = k;
done:
  mlc_free(m->alloc, cs.used, (size_t)n);
  mlc_free(m->alloc, cs.remap, sizeof *cs.remap * (size_t)n);
  mlc_free(m->alloc, cs.seen, (size_t)nids);
  return s;
}

/* The pass: rewrites |m| in place; |ctx| is borrowed and unused. */
mlc_status mlc_pass_dce(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)ctx;
  int nids = m->next_value_id > 0 ? m->next_value_id : 1;
  char *live = mlc_calloc(m->alloc, (size_t)nids, 1);
  if (!live) return mlc_oom();
  for (int i = 0; i < m->nfuncs; i++) dce_func(m->funcs[i], live, nids);
  mlc_free(m->alloc, live, (size_t)nids);
  return drop_consts(m, nids);
}
