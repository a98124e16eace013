/*
** tir_visit.c: the generic TIR visitor and mutator (see tir_visit.h for the
** order of children and the callback protocol).
*/
#include "lower/tir_visit.h"

#include <string.h>

/* ---- visitor ---------------------------------------------------------------- */

static int v_expr(const mlc_tir_visitor *v, const mlc_tir_expr *e);
static int v_stmt(const mlc_tir_visitor *v, const mlc_tir_stmt *s);

static int v_exprs(const mlc_tir_visitor *v, int n, mlc_tir_expr *const *es) {
  for (int i = 0; i < n; i++)
    if (v_expr(v, es[i])) return 1;
  return 0;
}

static int v_buffer(const mlc_tir_visitor *v, const mlc_tir_buffer *b) {
  return v->buffer && b && v->buffer(v->ctx, b) == MLC_TIR_VISIT_STOP;
}

static int v_expr_children(const mlc_tir_visitor *v, const mlc_tir_expr *e) {
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF: return 0;
    case MLC_TIR_BINARY: return v_expr(v, e->bin.a) || v_expr(v, e->bin.b);
    case MLC_TIR_NOT:
    case MLC_TIR_CAST:
    case MLC_TIR_BROADCAST: return v_expr(v, e->un.a);
    case MLC_TIR_RAMP: return v_expr(v, e->ramp.base) || v_expr(v, e->ramp.stride);
    case MLC_TIR_SELECT: return v_expr(v, e->select.c) || v_expr(v, e->select.t) || v_expr(v, e->select.f);
    case MLC_TIR_LOAD: return v_buffer(v, e->load.buffer) || v_exprs(v, e->load.n, e->load.indices);
    case MLC_TIR_CALL: return v_exprs(v, e->call.n, e->call.args);
    case MLC_TIR_REDUCE:
      for (int i = 0; i < e->reduce.naxes; i++)
        if (v_expr(v, e->reduce.axes[i].min) || v_expr(v, e->reduce.axes[i].extent)) return 1;
      return v_expr(v, e->reduce.source);
  }
  return 0;
}

static int v_expr(const mlc_tir_visitor *v, const mlc_tir_expr *e) {
  if (!e) return 0;
  int act = v->pre_expr ? v->pre_expr(v->ctx, e) : MLC_TIR_VISIT_CONTINUE;
  if (act == MLC_TIR_VISIT_STOP) return 1;
  if (act != MLC_TIR_VISIT_SKIP && v_expr_children(v, e)) return 1;
  return v->post_expr && v->post_expr(v->ctx, e) == MLC_TIR_VISIT_STOP;
}

static int v_regions(const mlc_tir_visitor *v, int n, const mlc_tir_region *r) {
  for (int i = 0; i < n; i++)
    if (v_exprs(v, r[i].n, r[i].min) || v_exprs(v, r[i].n, r[i].extent)) return 1;
  return 0;
}

static int v_stmt_children(const mlc_tir_visitor *v, const mlc_tir_stmt *s) {
  switch (s->kind) {
    case MLC_TIR_FOR: return v_expr(v, s->loop.min) || v_expr(v, s->loop.extent) || v_stmt(v, s->loop.body);
    case MLC_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++)
        if (v_stmt(v, s->seq.stmts[i])) return 1;
      return 0;
    case MLC_TIR_STORE:
      return v_buffer(v, s->store.buffer) || v_exprs(v, s->store.n, s->store.indices) ||
             v_expr(v, s->store.value);
    case MLC_TIR_IF: return v_expr(v, s->if_.cond) || v_stmt(v, s->if_.then_s) || v_stmt(v, s->if_.else_s);
    case MLC_TIR_ALLOCATE: return v_buffer(v, s->alloc.buffer) || v_stmt(v, s->alloc.body);
    case MLC_TIR_EVALUATE: return v_expr(v, s->eval.value);
    case MLC_TIR_ASSERT: return v_expr(v, s->assert_.cond) || v_exprs(v, s->assert_.nvals, s->assert_.vals);
    case MLC_TIR_BLOCK:
      for (int i = 0; i < s->block.niters; i++) {
        const mlc_tir_iter_var *it = &s->block.iters[i];
        if (v_expr(v, it->min) || v_expr(v, it->extent) || v_expr(v, it->binding)) return 1;
      }
      if (v_expr(v, s->block.predicate)) return 1;
      if (v->regions && (v_regions(v, s->block.nreads, s->block.reads) ||
                         v_regions(v, s->block.nwrites, s->block.writes)))
        return 1;
      return v_stmt(v, s->block.init) || v_stmt(v, s->block.body);
  }
  return 0;
}

static int v_stmt(const mlc_tir_visitor *v, const mlc_tir_stmt *s) {
  if (!s) return 0;
  int act = v->pre_stmt ? v->pre_stmt(v->ctx, s) : MLC_TIR_VISIT_CONTINUE;
  if (act == MLC_TIR_VISIT_STOP) return 1;
  if (act != MLC_TIR_VISIT_SKIP && v_stmt_children(v, s)) return 1;
  return v->post_stmt && v->post_stmt(v->ctx, s) == MLC_TIR_VISIT_STOP;
}

int mlc_tir_visit_expr(const mlc_tir_visitor *v, const mlc_tir_expr *e) { return v_expr(v, e); }
int mlc_tir_visit_stmt(const mlc_tir_visitor *v, const mlc_tir_stmt *s) { return v_stmt(v, s); }

/* ---- mutator ---------------------------------------------------------------- */

/* Mutates |n| expressions into |out| (arena); returns 1 if any changed, 0 if
** none did, -1 on failure.  *out is NULL when none changed. */
static int mu_exprs(mlc_tir_mutator *mu, int n, mlc_tir_expr *const *in, mlc_tir_expr ***out) {
  *out = NULL;
  for (int i = 0; i < n; i++) {
    mlc_tir_expr *r = mlc_tir_mutate_expr(mu, in[i]);
    if (!r) return -1;
    if (r == in[i] && !*out) continue;
    if (!*out) {
      *out = MLC_ARENA_ARRAY(mu->m->arena, (size_t)n, mlc_tir_expr *);
      if (!*out) return -1;
      memcpy(*out, in, sizeof **out * (size_t)n);
    }
    (*out)[i] = r;
  }
  return *out != NULL;
}

static mlc_tir_expr *mu_expr_children(mlc_tir_mutator *mu, const mlc_tir_expr *e) {
  mlc_tir_module *m = mu->m;
  mlc_tir_expr *self = (mlc_tir_expr *)e; /* returned unchanged: the caller's own node */
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF: return self;
    case MLC_TIR_BINARY: {
      mlc_tir_expr *a = mlc_tir_mutate_expr(mu, e->bin.a), *b = a ? mlc_tir_mutate_expr(mu, e->bin.b) : NULL;
      if (!a || !b) return NULL;
      return (a == e->bin.a && b == e->bin.b) ? self : mlc_tir_binary(m, e->bin.op, a, b);
    }
    case MLC_TIR_NOT:
    case MLC_TIR_CAST: {
      mlc_tir_expr *a = mlc_tir_mutate_expr(mu, e->un.a);
      if (!a) return NULL;
      if (a == e->un.a) return self;
      return e->kind == MLC_TIR_NOT ? mlc_tir_not(m, a) : mlc_tir_cast(m, e->dtype, a);
    }
    case MLC_TIR_BROADCAST: {
      mlc_tir_expr *a = mlc_tir_mutate_expr(mu, e->un.a);
      if (!a) return NULL;
      return a == e->un.a ? self : mlc_tir_broadcast(m, a, e->lanes);
    }
    case MLC_TIR_RAMP: {
      mlc_tir_expr *b = mlc_tir_mutate_expr(mu, e->ramp.base), *st = b ? mlc_tir_mutate_expr(mu, e->ramp.stride) : NULL;
      if (!st) return NULL;
      return (b == e->ramp.base && st == e->ramp.stride) ? self : mlc_tir_ramp(m, b, st, e->lanes);
    }
    case MLC_TIR_SELECT: {
      mlc_tir_expr *c = mlc_tir_mutate_expr(mu, e->select.c);
      mlc_tir_expr *t = c ? mlc_tir_mutate_expr(mu, e->select.t) : NULL;
      mlc_tir_expr *f = t ? mlc_tir_mutate_expr(mu, e->select.f) : NULL;
      if (!f) return NULL;
      if (c == e->select.c && t == e->select.t && f == e->select.f) return self;
      return mlc_tir_select(m, c, t, f);
    }
    case MLC_TIR_LOAD: {
      mlc_tir_expr **idx;
      int ch = mu_exprs(mu, e->load.n, e->load.indices, &idx);
      if (ch < 0) return NULL;
      return ch ? mlc_tir_load(m, e->load.buffer, e->load.n, idx) : self;
    }
    case MLC_TIR_CALL: {
      mlc_tir_expr **args;
      int ch = mu_exprs(mu, e->call.n, e->call.args, &args);
      if (ch < 0) return NULL;
      if (!ch) return self;
      mlc_tir_expr *r = mlc_tir_call(m, e->call.op, e->call.n, args);
      if (r) r->dtype = e->dtype;
      return r;
    }
    case MLC_TIR_REDUCE: {
      int n = e->reduce.naxes, ch = 0;
      mlc_tir_iter_var *ax = MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_tir_iter_var);
      if (!ax) return NULL;
      for (int i = 0; i < n; i++) {
        ax[i] = e->reduce.axes[i];
        ax[i].min = mlc_tir_mutate_expr(mu, ax[i].min);
        ax[i].extent = ax[i].min ? mlc_tir_mutate_expr(mu, ax[i].extent) : NULL;
        if (!ax[i].extent) return NULL;
        ch |= ax[i].min != e->reduce.axes[i].min || ax[i].extent != e->reduce.axes[i].extent;
      }
      mlc_tir_expr *src = mlc_tir_mutate_expr(mu, e->reduce.source);
      if (!src) return NULL;
      if (!ch && src == e->reduce.source) return self;
      return mlc_tir_reduce(m, e->reduce.op, src, n, ax);
    }
  }
  return NULL;
}

mlc_tir_expr *mlc_tir_mutate_expr(mlc_tir_mutator *mu, const mlc_tir_expr *e) {
  if (!e || mu->failed) return NULL;
  mlc_tir_expr *r = mu->pre_expr ? mu->pre_expr(mu, e) : NULL;
  if (mu->failed) return NULL;
  if (r) return r;
  r = mu_expr_children(mu, e);
  if (r && mu->post_expr) r = mu->post_expr(mu, e, r);
  if (!r || mu->failed) {
    mu->failed = 1;
    return NULL;
  }
  return r;
}

/* Mutated copies of |n| regions, or |in| itself when none changed. */
static int mu_regions(mlc_tir_mutator *mu, int n, mlc_tir_region *in, mlc_tir_region **out) {
  *out = in;
  for (int i = 0; i < n; i++) {
    mlc_tir_expr **mn, **ext;
    int a = mu_exprs(mu, in[i].n, in[i].min, &mn);
    int b = a < 0 ? -1 : mu_exprs(mu, in[i].n, in[i].extent, &ext);
    if (a < 0 || b < 0) return -1;
    if (!a && !b) continue;
    if (*out == in) {
      *out = MLC_ARENA_ARRAY(mu->m->arena, (size_t)n, mlc_tir_region);
      if (!*out) return -1;
      memcpy(*out, in, sizeof **out * (size_t)n);
    }
    if (a) (*out)[i].min = mn;
    if (b) (*out)[i].extent = ext;
  }
  return 0;
}

static mlc_tir_stmt *mu_block(mlc_tir_mutator *mu, const mlc_tir_stmt *s) {
  mlc_tir_module *m = mu->m;
  int n = s->block.niters, ch = 0;
  mlc_tir_iter_var *it = n ? MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_tir_iter_var) : NULL;
  if (n && !it) return NULL;
  for (int i = 0; i < n; i++) {
    const mlc_tir_iter_var *o = &s->block.iters[i];
    it[i] = *o;
    it[i].min = mlc_tir_mutate_expr(mu, o->min);
    it[i].extent = mlc_tir_mutate_expr(mu, o->extent);
    it[i].binding = mlc_tir_mutate_expr(mu, o->binding);
    if (!it[i].min || !it[i].extent || !it[i].binding) return NULL;
    ch |= it[i].min != o->min || it[i].extent != o->extent || it[i].binding != o->binding;
  }
  mlc_tir_expr *pred = NULL;
  if (s->block.predicate) {
    pred = mlc_tir_mutate_expr(mu, s->block.predicate);
    if (!pred) return NULL;
    ch |= pred != s->block.predicate;
  }
  mlc_tir_region *rd, *wr;
  if (mu_regions(mu, s->block.nreads, s->block.reads, &rd) ||
      mu_regions(mu, s->block.nwrites, s->block.writes, &wr))
    return NULL;
  ch |= rd != s->block.reads || wr != s->block.writes;
  mlc_tir_stmt *init = NULL;
  if (s->block.init) {
    init = mlc_tir_mutate_stmt(mu, s->block.init);
    if (!init) return NULL;
    ch |= init != s->block.init;
  }
  mlc_tir_stmt *body = mlc_tir_mutate_stmt(mu, s->block.body);
  if (!body) return NULL;
  if (!ch && body == s->block.body) return (mlc_tir_stmt *)s;
  mlc_tir_stmt *r = mlc_tir_block(m, s->block.name, n, it, init, body);
  if (!r) return NULL;
  r->block.predicate = pred;
  r->block.nreads = s->block.nreads;
  r->block.reads = rd;
  r->block.nwrites = s->block.nwrites;
  r->block.writes = wr;
  return r;
}

static mlc_tir_stmt *mu_stmt_children(mlc_tir_mutator *mu, const mlc_tir_stmt *s) {
  mlc_tir_module *m = mu->m;
  mlc_tir_stmt *self = (mlc_tir_stmt *)s; /* returned unchanged: the caller's own node */
  switch (s->kind) {
    case MLC_TIR_FOR: {
      mlc_tir_expr *mn = mlc_tir_mutate_expr(mu, s->loop.min);
      mlc_tir_expr *ext = mn ? mlc_tir_mutate_expr(mu, s->loop.extent) : NULL;
      mlc_tir_stmt *body = ext ? mlc_tir_mutate_stmt(mu, s->loop.body) : NULL;
      if (!body) return NULL;
      if (mn == s->loop.min && ext == s->loop.extent && body == s->loop.body) return self;
      return mlc_tir_for_like(m, s, mn, ext, body);
    }
    case MLC_TIR_SEQ: {
      mlc_tir_stmt **v = NULL;
      for (int i = 0; i < s->seq.n; i++) {
        mlc_tir_stmt *r = mlc_tir_mutate_stmt(mu, s->seq.stmts[i]);
        if (!r) return NULL;
        if (r == s->seq.stmts[i] && !v) continue;
        if (!v) {
          v = MLC_ARENA_ARRAY(m->arena, (size_t)s->seq.n, mlc_tir_stmt *);
          if (!v) return NULL;
          memcpy(v, s->seq.stmts, sizeof *v * (size_t)s->seq.n);
        }
        v[i] = r;
      }
      return v ? mlc_tir_seq(m, s->seq.n, v) : self;
    }
    case MLC_TIR_STORE: {
      mlc_tir_expr **idx;
      int ch = mu_exprs(mu, s->store.n, s->store.indices, &idx);
      mlc_tir_expr *val = ch < 0 ? NULL : mlc_tir_mutate_expr(mu, s->store.value);
      if (!val) return NULL;
      if (!ch && val == s->store.value) return self;
      return mlc_tir_store(m, s->store.buffer, s->store.n, ch ? idx : s->store.indices, val);
    }
    case MLC_TIR_IF: {
      mlc_tir_expr *c = mlc_tir_mutate_expr(mu, s->if_.cond);
      mlc_tir_stmt *t = c ? mlc_tir_mutate_stmt(mu, s->if_.then_s) : NULL;
      mlc_tir_stmt *f = NULL;
      if (!t) return NULL;
      if (s->if_.else_s && !(f = mlc_tir_mutate_stmt(mu, s->if_.else_s))) return NULL;
      if (c == s->if_.cond && t == s->if_.then_s && f == s->if_.else_s) return self;
      return mlc_tir_if(m, c, t, f);
    }
    case MLC_TIR_ALLOCATE: {
      mlc_tir_stmt *body = mlc_tir_mutate_stmt(mu, s->alloc.body);
      if (!body) return NULL;
      return body == s->alloc.body ? self : mlc_tir_allocate(m, s->alloc.buffer, body);
    }
    case MLC_TIR_EVALUATE: {
      mlc_tir_expr *v = mlc_tir_mutate_expr(mu, s->eval.value);
      if (!v) return NULL;
      return v == s->eval.value ? self : mlc_tir_evaluate(m, v);
    }
    case MLC_TIR_ASSERT: {
      mlc_tir_expr *c = mlc_tir_mutate_expr(mu, s->assert_.cond), **vals;
      int ch = c ? mu_exprs(mu, s->assert_.nvals, s->assert_.vals, &vals) : -1;
      if (ch < 0) return NULL;
      if (!ch && c == s->assert_.cond) return self;
      return mlc_tir_assert(m, c, s->assert_.op, s->assert_.msg, s->assert_.nvals,
                            ch ? vals : s->assert_.vals);
    }
    case MLC_TIR_BLOCK: return mu_block(mu, s);
  }
  return NULL;
}

mlc_tir_stmt *mlc_tir_mutate_stmt(mlc_tir_mutator *mu, const mlc_tir_stmt *s) {
  if (!s || mu->failed) return NULL;
  mlc_tir_stmt *r = mu->pre_stmt ? mu->pre_stmt(mu, s) : NULL;
  if (mu->failed) return NULL;
  if (r) return r;
  r = mu_stmt_children(mu, s);
  if (r && r != s && !r->origin) r->origin = s->origin;
  if (r && mu->post_stmt) r = mu->post_stmt(mu, s, r);
  if (!r || mu->failed) {
    mu->failed = 1;
    return NULL;
  }
  return r;
}
