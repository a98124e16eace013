/*
** tir_lower.c: the lowering pipeline (a literal list of passes, see
** tir_lower.h) and the rebuilding walkers the passes share
** (tir_lower_int.h).
*/
#include "lower/tir_lower.h"

#include <string.h>

#include "lower/tir_lower_int.h"

/* ---- the pipeline -------------------------------------------------------------- */

static const mlc_tir_pass_info passes[] = {
    {"thread_reduce", mlc_tir_pass_thread_reduce}, /* a GPU's only */
    {"remove_unit_loops", mlc_tir_pass_remove_unit_loops},
    {"lower_blocks", mlc_tir_pass_lower_blocks},
    {"compact_buffers", mlc_tir_pass_compact_buffers},
    {"flatten_buffers", mlc_tir_pass_flatten_buffers},
    {"simplify", mlc_tir_pass_simplify},
    {"thread_sync", mlc_tir_pass_thread_sync},
    {"prefetch", mlc_tir_pass_prefetch},
    {"vectorize", mlc_tir_vectorize_func}, /* last: on the flat, simplified form */
};

const mlc_tir_pass_info *mlc_tir_lower_passes(int *n) {
  *n = (int)(sizeof passes / sizeof passes[0]);
  return passes;
}

int mlc_tir_func_is_lowered(const mlc_tir_func *f) {
  const mlc_tir_attr *a = mlc_tir_func_attr(f, "tir.lowered");
  return a && a->kind != MLC_TIR_ATTR_STR && a->i;
}

const mlc_tir_stmt *mlc_tir_find_block(const mlc_tir_stmt *s) {
  if (!s) return NULL;
  const mlc_tir_stmt *r = NULL;
  switch (s->kind) {
    case MLC_TIR_BLOCK: return s;
    case MLC_TIR_FOR: return mlc_tir_find_block(s->loop.body);
    case MLC_TIR_SEQ:
      for (int i = 0; i < s->seq.n && !r; i++) r = mlc_tir_find_block(s->seq.stmts[i]);
      return r;
    case MLC_TIR_IF:
      r = mlc_tir_find_block(s->if_.then_s);
      return r ? r : mlc_tir_find_block(s->if_.else_s);
    case MLC_TIR_ALLOCATE: return mlc_tir_find_block(s->alloc.body);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return NULL;
  }
  return NULL;
}

static mlc_status run_pass(mlc_tir_module *m, mlc_tir_func *f, const mlc_tir_pass_info *p, int verify) {
  mlc_status st = p->fn(m, f);
  if (!st && mlc_tir_module_oom(m)) st = mlc_oom();
  if (!st && verify) st = mlc_tir_verify_func(f);
  return st ? mlc_status_annotate(st, "lowering prim func \"%s\", pass %s", f->name, p->name) : NULL;
}

mlc_status mlc_tir_lower_func(mlc_tir_module *m, mlc_tir_func *f, const mlc_tir_lower_options *opt) {
  mlc_tir_lower_options def;
  memset(&def, 0, sizeof def);
  if (!opt) opt = &def;
  if (!m || !f) return mlc_make_status(MLC_INVALID_ARGUMENT, "lowering: no function given");
  if (mlc_tir_func_is_lowered(f)) return NULL;
  for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
    if (opt->no_compact && passes[i].fn == mlc_tir_pass_compact_buffers) continue;
    if (opt->no_vectorize && passes[i].fn == mlc_tir_vectorize_func) continue;
    if (!opt->gpu && passes[i].fn == mlc_tir_pass_thread_reduce) continue;
    MLC_RETURN_IF_ERROR(run_pass(m, f, &passes[i], opt->verify));
  }
  return mlc_tir_func_set_attr_bool(m, f, "tir.lowered", 1);
}

mlc_status mlc_tir_lower_module(mlc_tir_module *m, const mlc_tir_lower_options *opt) {
  if (!m) return mlc_make_status(MLC_INVALID_ARGUMENT, "lowering: no module given");
  for (int i = 0; i < m->nfuncs; i++) MLC_RETURN_IF_ERROR(mlc_tir_lower_func(m, m->funcs[i], opt));
  return NULL;
}

/* ---- rebuilding walkers ----------------------------------------------------------- */

static mlc_tir_stmt *keep_origin(mlc_tir_stmt *r, const mlc_tir_stmt *s) {
  if (r && !r->origin) r->origin = s->origin;
  return r;
}

/* A copy of block |s| with |init| and |body|. */
static mlc_tir_stmt *rebuild_block(mlc_tir_module *m, const mlc_tir_stmt *s, mlc_tir_stmt *init,
                                   mlc_tir_stmt *body) {
  mlc_tir_stmt *r = mlc_tir_block(m, s->block.name, s->block.niters, s->block.iters, init, body);
  if (!r) return NULL;
  mlc_tir_block_set_predicate(r, s->block.predicate);
  if (s->block.nreads || s->block.nwrites)
    r = mlc_tir_block_set_regions(m, r, s->block.nreads, s->block.reads, s->block.nwrites, s->block.writes);
  return r;
}

mlc_tir_stmt *mlc_tir_lw_map_children(mlc_tir_module *m, mlc_tir_stmt *s, mlc_tir_lw_stmt_fn fn, void *ctx) {
  if (!s) return NULL;
  mlc_tir_stmt *r = s;
  switch (s->kind) {
    case MLC_TIR_FOR: {
      mlc_tir_stmt *b = fn(ctx, s->loop.body);
      if (b != s->loop.body)
        r = mlc_tir_for_like(m, s, s->loop.min, s->loop.extent, b);
      break;
    }
    case MLC_TIR_SEQ: {
      if (s->seq.n == 0) break;
      mlc_tir_stmt **v = MLC_ARENA_ARRAY(m->arena, (size_t)s->seq.n, mlc_tir_stmt *);
      if (!v) return NULL;
      int changed = 0;
      for (int i = 0; i < s->seq.n; i++) {
        v[i] = fn(ctx, s->seq.stmts[i]);
        if (!v[i]) return NULL;
        changed |= v[i] != s->seq.stmts[i];
      }
      if (changed) r = mlc_tir_seq(m, s->seq.n, v);
      break;
    }
    case MLC_TIR_IF: {
      mlc_tir_stmt *t = fn(ctx, s->if_.then_s);
      mlc_tir_stmt *e = s->if_.else_s ? fn(ctx, s->if_.else_s) : NULL;
      if (!t || (s->if_.else_s && !e)) return NULL;
      if (t != s->if_.then_s || e != s->if_.else_s) r = mlc_tir_if(m, s->if_.cond, t, e);
      break;
    }
    case MLC_TIR_ALLOCATE: {
      mlc_tir_stmt *b = fn(ctx, s->alloc.body);
      if (b != s->alloc.body) r = mlc_tir_allocate(m, s->alloc.buffer, b);
      break;
    }
    case MLC_TIR_BLOCK: {
      mlc_tir_stmt *init = s->block.init ? fn(ctx, s->block.init) : NULL;
      if (s->block.init && !init) return NULL;
      mlc_tir_stmt *b = fn(ctx, s->block.body);
      if (b != s->block.body || init != s->block.init) r = b ? rebuild_block(m, s, init, b) : NULL;
      break;
    }
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: break;
  }
  return r && r != s ? keep_origin(r, s) : r;
}

static mlc_tir_expr **map_exprs(mlc_tir_module *m, int n, mlc_tir_expr *const *v, mlc_tir_lw_expr_fn fn, void *ctx,
                                int *changed, int *failed) {
  if (n <= 0) return NULL;
  mlc_tir_expr **d = MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_tir_expr *);
  if (!d) {
    *failed = 1;
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    d[i] = mlc_tir_lw_map_expr(m, v[i], fn, ctx);
    if (!d[i]) *failed = 1;
    if (d[i] != v[i]) *changed = 1;
  }
  return d;
}

mlc_tir_expr *mlc_tir_lw_map_expr(mlc_tir_module *m, mlc_tir_expr *e, mlc_tir_lw_expr_fn fn, void *ctx) {
  if (!e) return NULL;
  mlc_tir_expr *r = e;
  int changed = 0, failed = 0;
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF:
    case MLC_TIR_REDUCE: break;
    case MLC_TIR_BINARY: {
      mlc_tir_expr *a = mlc_tir_lw_map_expr(m, e->bin.a, fn, ctx), *b = mlc_tir_lw_map_expr(m, e->bin.b, fn, ctx);
      if (a != e->bin.a || b != e->bin.b) r = mlc_tir_binary(m, e->bin.op, a, b);
      break;
    }
    case MLC_TIR_NOT: {
      mlc_tir_expr *a = mlc_tir_lw_map_expr(m, e->un.a, fn, ctx);
      if (a != e->un.a) r = mlc_tir_not(m, a);
      break;
    }
    case MLC_TIR_CAST: {
      mlc_tir_expr *a = mlc_tir_lw_map_expr(m, e->un.a, fn, ctx);
      if (a != e->un.a) r = mlc_tir_cast(m, e->dtype, a);
      break;
    }
    case MLC_TIR_BROADCAST: {
      mlc_tir_expr *a = mlc_tir_lw_map_expr(m, e->un.a, fn, ctx);
      if (a != e->un.a) r = mlc_tir_broadcast(m, a, e->lanes);
      break;
    }
    case MLC_TIR_RAMP: {
      mlc_tir_expr *b = mlc_tir_lw_map_expr(m, e->ramp.base, fn, ctx);
      mlc_tir_expr *st = mlc_tir_lw_map_expr(m, e->ramp.stride, fn, ctx);
      if (b != e->ramp.base || st != e->ramp.stride) r = mlc_tir_ramp(m, b, st, e->lanes);
      break;
    }
    case MLC_TIR_SELECT: {
      mlc_tir_expr *c = mlc_tir_lw_map_expr(m, e->select.c, fn, ctx);
      mlc_tir_expr *t = mlc_tir_lw_map_expr(m, e->select.t, fn, ctx);
      mlc_tir_expr *f = mlc_tir_lw_map_expr(m, e->select.f, fn, ctx);
      if (c != e->select.c || t != e->select.t || f != e->select.f) r = mlc_tir_select(m, c, t, f);
      break;
    }
    case MLC_TIR_LOAD: {
      mlc_tir_expr **idx = map_exprs(m, e->load.n, e->load.indices, fn, ctx, &changed, &failed);
      if (failed) return NULL;
      if (changed) r = mlc_tir_load(m, e->load.buffer, e->load.n, idx);
      break;
    }
    case MLC_TIR_CALL: {
      mlc_tir_expr **args = map_exprs(m, e->call.n, e->call.args, fn, ctx, &changed, &failed);
      if (failed) return NULL;
      if (changed) {
        r = mlc_tir_call(m, e->call.op, e->call.n, args);
        if (r) r->dtype = e->dtype;
      }
      break;
    }
  }
  if (!r) return NULL;
  return fn ? fn(ctx, r) : r;
}

mlc_tir_stmt *mlc_tir_lw_map_own_exprs(mlc_tir_module *m, mlc_tir_stmt *s, mlc_tir_lw_expr_fn fn,
                                       mlc_tir_lw_store_fn store, void *ctx) {
  if (!s) return NULL;
  mlc_tir_stmt *r = s;
  int changed = 0, failed = 0;
  switch (s->kind) {
    case MLC_TIR_FOR: {
      mlc_tir_expr *mn = mlc_tir_lw_map_expr(m, s->loop.min, fn, ctx);
      mlc_tir_expr *ext = mlc_tir_lw_map_expr(m, s->loop.extent, fn, ctx);
      if (mn != s->loop.min || ext != s->loop.extent)
        r = mlc_tir_for_like(m, s, mn, ext, s->loop.body);
      break;
    }
    case MLC_TIR_STORE: {
      mlc_tir_expr **idx = map_exprs(m, s->store.n, s->store.indices, fn, ctx, &changed, &failed);
      mlc_tir_expr *v = mlc_tir_lw_map_expr(m, s->store.value, fn, ctx);
      if (failed || !v) return NULL;
      mlc_tir_buffer *buf = s->store.buffer;
      int n = s->store.n;
      if (!changed) idx = s->store.indices;
      if (store) {
        mlc_tir_expr **idx0 = idx;
        mlc_tir_buffer *b0 = buf;
        if (store(ctx, s, &buf, &n, &idx)) return NULL;
        if (idx != idx0 || buf != b0) changed = 1;
      }
      if (changed || v != s->store.value) r = mlc_tir_store(m, buf, n, idx, v);
      break;
    }
    case MLC_TIR_IF: {
      mlc_tir_expr *c = mlc_tir_lw_map_expr(m, s->if_.cond, fn, ctx);
      if (c != s->if_.cond) r = mlc_tir_if(m, c, s->if_.then_s, s->if_.else_s);
      break;
    }
    case MLC_TIR_EVALUATE: {
      mlc_tir_expr *v = mlc_tir_lw_map_expr(m, s->eval.value, fn, ctx);
      if (v != s->eval.value) r = mlc_tir_evaluate(m, v);
      break;
    }
    case MLC_TIR_ASSERT: {
      mlc_tir_expr *c = mlc_tir_lw_map_expr(m, s->assert_.cond, fn, ctx);
      mlc_tir_expr *v[MLC_TIR_ASSERT_MAX_VALS];
      changed = c != s->assert_.cond;
      for (int i = 0; i < s->assert_.nvals; i++) {
        v[i] = mlc_tir_lw_map_expr(m, s->assert_.vals[i], fn, ctx);
        if (!v[i]) return NULL;
        changed |= v[i] != s->assert_.vals[i];
      }
      if (changed) r = mlc_tir_assert(m, c, s->assert_.op, s->assert_.msg, s->assert_.nvals, v);
      break;
    }
    case MLC_TIR_SEQ:
    case MLC_TIR_ALLOCATE:
    case MLC_TIR_BLOCK: break;
  }
  return r && r != s ? keep_origin(r, s) : r;
}

static int expr_uses_buffer(const mlc_tir_expr *e, const mlc_tir_buffer *b) {
  if (!e) return 0;
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF: return 0;
    case MLC_TIR_BINARY: return expr_uses_buffer(e->bin.a, b) || expr_uses_buffer(e->bin.b, b);
    case MLC_TIR_NOT:
    case MLC_TIR_CAST:
    case MLC_TIR_BROADCAST: return expr_uses_buffer(e->un.a, b);
    case MLC_TIR_RAMP: return expr_uses_buffer(e->ramp.base, b) || expr_uses_buffer(e->ramp.stride, b);
    case MLC_TIR_SELECT:
      return expr_uses_buffer(e->select.c, b) || expr_uses_buffer(e->select.t, b) ||
             expr_uses_buffer(e->select.f, b);
    case MLC_TIR_LOAD:
      if (e->load.buffer == b) return 1;
      for (int i = 0; i < e->load.n; i++)
        if (expr_uses_buffer(e->load.indices[i], b)) return 1;
      return 0;
    case MLC_TIR_CALL:
      for (int i = 0; i < e->call.n; i++)
        if (expr_uses_buffer(e->call.args[i], b)) return 1;
      return 0;
    case MLC_TIR_REDUCE: return expr_uses_buffer(e->reduce.source, b);
  }
  return 0;
}

int mlc_tir_lw_uses_buffer(const mlc_tir_stmt *s, const mlc_tir_buffer *b) {
  if (!s) return 0;
  switch (s->kind) {
    case MLC_TIR_FOR:
      return expr_uses_buffer(s->loop.min, b) || expr_uses_buffer(s->loop.extent, b) ||
             mlc_tir_lw_uses_buffer(s->loop.body, b);
    case MLC_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++)
        if (mlc_tir_lw_uses_buffer(s->seq.stmts[i], b)) return 1;
      return 0;
    case MLC_TIR_STORE:
      if (s->store.buffer == b || expr_uses_buffer(s->store.value, b)) return 1;
      for (int i = 0; i < s->store.n; i++)
        if (expr_uses_buffer(s->store.indices[i], b)) return 1;
      return 0;
    case MLC_TIR_IF:
      return expr_uses_buffer(s->if_.cond, b) || mlc_tir_lw_uses_buffer(s->if_.then_s, b) ||
             mlc_tir_lw_uses_buffer(s->if_.else_s, b);
    case MLC_TIR_ALLOCATE: return mlc_tir_lw_uses_buffer(s->alloc.body, b);
    case MLC_TIR_EVALUATE: return expr_uses_buffer(s->eval.value, b);
    case MLC_TIR_ASSERT:
      if (expr_uses_buffer(s->assert_.cond, b)) return 1;
      for (int i = 0; i < s->assert_.nvals; i++)
        if (expr_uses_buffer(s->assert_.vals[i], b)) return 1;
      return 0;
    case MLC_TIR_BLOCK:
      if (expr_uses_buffer(s->block.predicate, b)) return 1;
      return mlc_tir_lw_uses_buffer(s->block.init, b) || mlc_tir_lw_uses_buffer(s->block.body, b);
  }
  return 0;
}
