/*
** cse.c: common subexpression elimination within dataflow blocks.
**
** One forward walk over each dataflow block.  Every op call gets a key: its
** op, its arguments (after the substitutions made so far, so chains of
** duplicates merge in one walk) and its attributes (sorted by name, values
** written exactly).  A constant argument stands in the key by its id, or,
** when it holds at most 64 bytes, by its dtype, shape and bytes, so two
** scalar constants with the same value compare equal.  A call whose key an
** earlier call of the same block has is removed and its outputs become that
** call's outputs (their types are checked equal too).
**
** Never merged: calls outside dataflow blocks (they may have effects, and
** the table starts empty in each block), calls that are not op calls
** (call_tir, call_dps_packed, calls of graph functions), and define_dims,
** which binds symbols.  The op table has no random or otherwise
** non-deterministic op; one added later must be listed in |never_merged|.
** The values a function returns keep their names
** (mlc_subst_apply_keep_names).
**
**   before: lv0 = R.relu(x); lv1 = R.relu(x); lv2 = R.add(lv0, c0); lv3 = R.add(lv1, c1)
**           gv = R.multiply(lv2, lv3)           (c0, c1: the scalar 1.0, twice)
**   after:  lv0 = R.relu(x); lv2 = R.add(lv0, c0); gv = R.multiply(lv2, lv2)
*/
#include <stdio.h>
#include <string.h>

#include "base/hash.h"
#include "graph/graph_int.h"
#include "graph/pass.h"

/* Ops whose calls are never merged. */
static int never_merged(mlc_op op) { return op == MLC_OP_DEFINE_DIMS; }

static void key_value(const mlc_module *m, const mlc_value *v, mlc_strbuf *b) {
  const mlc_const *c = v ? mlc_value_const(m, v) : NULL;
  if (!v) {
    mlc_sb_puts(b, "_");
    return;
  }
  if (!c || c->nbytes > 64) {
    mlc_sb_printf(b, "v%d", v->id);
    return;
  }
  mlc_sb_printf(b, "k%d[", (int)c->type.dtype);
  for (int i = 0; i < c->type.rank; i++) mlc_sb_printf(b, "%lld,", (long long)c->type.dims[i]);
  mlc_sb_puts(b, "]");
  const unsigned char *p = c->data;
  for (size_t i = 0; i < c->nbytes; i++) mlc_sb_printf(b, "%02x", p[i]);
}

static void key_attr(const mlc_attr *a, mlc_strbuf *b) {
  mlc_sb_printf(b, "%s:%d=", a->name, (int)a->kind);
  switch (a->kind) {
  case MLC_ATTR_INT: mlc_sb_printf(b, "%lld", (long long)a->i); break;
  case MLC_ATTR_FLOAT: mlc_sb_printf(b, "%a", a->f); break;
  case MLC_ATTR_STRING:
    mlc_sb_printf(b, "%zu:", strlen(a->s ? a->s : ""));
    mlc_sb_puts(b, a->s ? a->s : "");
    break;
  case MLC_ATTR_INTS:
    for (int i = 0; i < a->n; i++) mlc_sb_printf(b, "%lld,", (long long)a->ints[i]);
    break;
  case MLC_ATTR_FLOATS:
    for (int i = 0; i < a->n; i++) mlc_sb_printf(b, "%a,", a->floats[i]);
    break;
  }
  mlc_sb_puts(b, ";");
}

/* The key of |b| into |out| (reset first); attributes sorted by name. */
static void key_of(const mlc_module *m, const mlc_binding *b, mlc_strbuf *out) {
  out->len = 0; /* reuse the buffer */
  if (out->data) out->data[0] = 0;
  mlc_sb_printf(out, "%d(", (int)b->op);
  for (int a = 0; a < b->nargs; a++) {
    key_value(m, b->args[a], out);
    mlc_sb_puts(out, ",");
  }
  mlc_sb_puts(out, ")");
  /* Selection order by name; attribute lists are short. */
  const char *last = NULL;
  for (int k = 0; k < b->nattrs; k++) {
    const mlc_attr *next = NULL;
    for (int i = 0; i < b->nattrs; i++) {
      const mlc_attr *a = &b->attrs[i];
      if (last && strcmp(a->name, last) <= 0) continue;
      if (!next || strcmp(a->name, next->name) < 0) next = a;
    }
    if (!next) break;
    key_attr(next, out);
    last = next->name;
  }
}

/* 1 when |b| may replace |later| (same outputs' types). */
static int same_outputs(const mlc_binding *b, const mlc_binding *later) {
  if (b->nouts != later->nouts) return 0;
  for (int i = 0; i < b->nouts; i++)
    if (!mlc_type_equal(&b->outs[i]->type, &later->outs[i]->type)) return 0;
  return 1;
}

static mlc_status cse_block(mlc_module *m, mlc_block *blk, mlc_subst *sub, mlc_arena *keys, int *merged) {
  mlc_hash seen = MLC_HASH_INIT;
  mlc_strbuf key = MLC_STRBUF_INIT;
  mlc_status s = NULL;
  int kept = 0;
  for (int j = 0; j < blk->n; j++) {
    mlc_binding *b = blk->bindings[j];
    for (int a = 0; a < b->nargs; a++) b->args[a] = mlc_subst_get(sub, b->args[a]);
    if (s || b->kind != MLC_CALL_OP || never_merged(b->op) || b->nouts < 1) {
      blk->bindings[kept++] = b;
      continue;
    }
    key_of(m, b, &key);
    if (key.oom) {
      s = mlc_oom();
      blk->bindings[kept++] = b;
      continue;
    }
    mlc_binding *e = mlc_hash_get(&seen, mlc_sb_str(&key));
    if (e && same_outputs(e, b)) {
      for (int o = 0; o < b->nouts; o++) mlc_subst_set(sub, b->outs[o], e->outs[o]);
      ++*merged;
      continue;
    }
    blk->bindings[kept++] = b;
    if (!e) {
      char *k = mlc_arena_strdup(keys, mlc_sb_str(&key));
      if (!k || mlc_hash_put(&seen, k, b)) s = mlc_oom();
    }
  }
  blk->n = kept;
  mlc_sb_fini(&key);
  mlc_hash_fini(&seen);
  return s;
}

static mlc_status cse_func(mlc_module *m, mlc_func *f, mlc_arena *keys, int *merged) {
  mlc_subst sub;
  MLC_RETURN_IF_ERROR(mlc_subst_init(&sub, m));
  mlc_status s = NULL;
  for (int bi = 0; bi < f->nblocks && !s; bi++) {
    mlc_block *blk = &f->blocks[bi];
    if (blk->dataflow) s = cse_block(m, blk, &sub, keys, merged);
  }
  if (!s) s = mlc_subst_apply_keep_names(&sub, f);
  mlc_subst_fini(&sub);
  mlc_func_compact(f);
  return s;
}

/* The pass: rewrites |m| in place; |ctx| is borrowed (its log gets the
** number of calls merged). */
mlc_status mlc_pass_cse(mlc_module *m, const mlc_pass_ctx *ctx) {
  mlc_arena *keys = mlc_arena_create(m->alloc);
  if (!keys) return mlc_oom();
  mlc_status s = NULL;
  int merged = 0;
  for (int i = 0; i < m->nfuncs && !s; i++) s = cse_func(m, m->funcs[i], keys, &merged);
  mlc_arena_destroy(keys);
  if (!s && ctx && ctx->log && merged) fprintf(ctx->log, "  cse: %d calls merged\n", merged);
  return s;
}
