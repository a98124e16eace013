/*
** region.c: block access regions (declared in arith.h).
**
** The regions of a block are found by walking its init and body with the
** generic visitor: loops met on the way are bound in an analyzer and relaxed
** over their domains, and so are the iteration variables of nested blocks,
** over the set of their bindings (their domain when that has no range),
** the block's own iteration variables are bound to their domains and stay
** symbolic.  Each access gives, per dimension, an integer set [lo, hi];
** accesses of one buffer are joined by min / max of the ends, which the
** simplifier resolves when the ends are comparable (they are for every
** affine access of one loop nest).  An index with no computable range (not
** int64, or not affine in a relaxed variable and without constant bounds)
** covers the whole dimension.  Buffers allocated inside the block are
** private to it and left out.
*/
#include "lower/arith.h"

#include <string.h>

#include "base/vec.h"
#include "lower/tir_visit.h"

typedef struct access {
  mlc_tir_buffer *buffer;
  mlc_tir_expr **lo, **hi; /* per dimension, in the module's arena */
} access;

typedef MLC_VEC(access) access_vec;

typedef struct rctx {
  mlc_tir_module *m;
  mlc_arith *an;
  const mlc_tir_stmt *block;
  MLC_VEC(const mlc_tir_var *) relax;
  MLC_VEC(int) marks; /* analyzer marks of the enclosing loops / blocks */
  MLC_VEC(const mlc_tir_buffer *) local;
  access_vec reads, writes;
  mlc_status err;
} rctx;

static int fail(rctx *c, mlc_status s) {
  if (!c->err) c->err = s;
  else mlc_status_free(s);
  return MLC_TIR_VISIT_STOP;
}

static int is_local(const rctx *c, const mlc_tir_buffer *b) {
  for (size_t i = 0; i < c->local.len; i++)
    if (c->local.data[i] == b) return 1;
  return 0;
}

/* Joins the access |b|[|idx|] into |list|. */
static int record(rctx *c, access_vec *list, mlc_tir_buffer *b, int n, mlc_tir_expr *const *idx) {
  mlc_tir_module *m = c->m;
  if (is_local(c, b)) return MLC_TIR_VISIT_CONTINUE;
  if (n != b->rank)
    return fail(c, mlc_make_status(MLC_INVALID_ARGUMENT, "block \"%s\": buffer %s of rank %d accessed with %d indices",
                                   c->block->block.name, b->name, b->rank, n));
  access *a = NULL;
  for (size_t i = 0; i < list->len; i++)
    if (list->data[i].buffer == b) a = &list->data[i];
  int fresh = !a;
  if (fresh) {
    access na = {b, NULL, NULL};
    if (n) {
      na.lo = MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_tir_expr *);
      na.hi = MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_tir_expr *);
      if (!na.lo || !na.hi) return fail(c, mlc_oom());
    }
    if (mlc_vec_push(list, na)) return fail(c, mlc_oom());
    a = &list->data[list->len - 1];
  }
  for (int d = 0; d < n; d++) {
    mlc_intset s;
    mlc_status st = mlc_arith_eval_set(c->an, m, idx[d], (int)c->relax.len, c->relax.data, &s);
    if (st && mlc_status_code(st) != MLC_INVALID_ARGUMENT) return fail(c, st);
    if (st) { /* no range for this index: the whole dimension covers it */
      mlc_status_free(st);
      s.min = mlc_tir_i64(m, 0);
      s.extent = b->shape[d];
    }
    mlc_tir_expr *hi = mlc_arith_simplify(c->an, m, mlc_tir_sub(m, mlc_tir_add(m, s.min, s.extent), mlc_tir_i64(m, 1)));
    mlc_tir_expr *lo = s.min;
    if (!fresh) {
      lo = mlc_arith_simplify(c->an, m, mlc_tir_min(m, a->lo[d], lo));
      hi = mlc_arith_simplify(c->an, m, mlc_tir_max(m, a->hi[d], hi));
    }
    if (!lo || !hi) return fail(c, mlc_oom());
    a->lo[d] = lo;
    a->hi[d] = hi;
  }
  return MLC_TIR_VISIT_CONTINUE;
}

/* Binds |v| to [min, min + extent) and relaxes it. */
static int relax_var(rctx *c, const mlc_tir_var *v, const mlc_tir_expr *min, const mlc_tir_expr *extent) {
  mlc_status s = mlc_arith_bind(c->an, v, min, extent);
  if (s) return fail(c, s);
  if (mlc_vec_push(&c->relax, v)) return fail(c, mlc_oom());
  return MLC_TIR_VISIT_CONTINUE;
}

static int pre_stmt(void *ctx, const mlc_tir_stmt *s) {
  rctx *c = ctx;
  switch (s->kind) {
    case MLC_TIR_FOR:
    case MLC_TIR_BLOCK: {
      /* the scope's mark: the analyzer's and the relaxed list's */
      if (mlc_vec_push(&c->marks, mlc_arith_mark(c->an)) || mlc_vec_push(&c->marks, (int)c->relax.len))
        return fail(c, mlc_oom());
      if (s->kind == MLC_TIR_FOR) return relax_var(c, s->loop.var, s->loop.min, s->loop.extent);
      /* a nested block's iteration variable ranges over the set of its
      ** binding (exact when the binding is affine), else over its domain */
      mlc_intset set[64];
      int n = s->block.niters < 64 ? s->block.niters : 0;
      for (int i = 0; i < n; i++) {
        const mlc_tir_iter_var *it = &s->block.iters[i];
        mlc_status st = mlc_arith_eval_set(c->an, c->m, it->binding, (int)c->relax.len, c->relax.data, &set[i]);
        if (st && mlc_status_code(st) != MLC_INVALID_ARGUMENT) return fail(c, st);
        mlc_status_free(st);
        if (st) set[i].min = it->min, set[i].extent = it->extent;
      }
      for (int i = 0; i < s->block.niters; i++) {
        const mlc_tir_iter_var *it = &s->block.iters[i];
        if (relax_var(c, it->var, i < n ? set[i].min : it->min, i < n ? set[i].extent : it->extent))
          return MLC_TIR_VISIT_STOP;
      }
      return MLC_TIR_VISIT_CONTINUE;
    }
    case MLC_TIR_ALLOCATE:
      if (mlc_vec_push(&c->local, s->alloc.buffer)) return fail(c, mlc_oom());
      return MLC_TIR_VISIT_CONTINUE;
    case MLC_TIR_STORE: return record(c, &c->writes, s->store.buffer, s->store.n, s->store.indices);
    case MLC_TIR_SEQ:
    case MLC_TIR_IF:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return MLC_TIR_VISIT_CONTINUE;
  }
  return MLC_TIR_VISIT_CONTINUE;
}

static int post_stmt(void *ctx, const mlc_tir_stmt *s) {
  rctx *c = ctx;
  if (s->kind == MLC_TIR_FOR || s->kind == MLC_TIR_BLOCK) {
    c->relax.len = (size_t)c->marks.data[--c->marks.len];
    mlc_arith_restore(c->an, c->marks.data[--c->marks.len]);
  } else if (s->kind == MLC_TIR_ALLOCATE) {
    c->local.len--;
  }
  return MLC_TIR_VISIT_CONTINUE;
}

static int pre_expr(void *ctx, const mlc_tir_expr *e) {
  rctx *c = ctx;
  if (e->kind == MLC_TIR_LOAD) return record(c, &c->reads, e->load.buffer, e->load.n, e->load.indices);
  return MLC_TIR_VISIT_CONTINUE;
}

/* Builds the regions of |list| into *|out| (extent = hi - lo + 1; constant
** ends clamped to a constant shape), leaving out the buffers of |skip| (may
** be NULL).  -1 on out-of-memory. */
static int regions(rctx *c, const access_vec *list, const access_vec *skip, mlc_tir_region **out, int *n_out) {
  mlc_tir_module *m = c->m;
  *out = NULL;
  *n_out = 0;
  if (list->len == 0) return 0;
  mlc_tir_region *r = MLC_ARENA_ARRAY(m->arena, list->len, mlc_tir_region);
  if (!r) return -1;
  int k = 0;
  for (size_t i = 0; i < list->len; i++) {
    const access *a = &list->data[i];
    int skipped = 0;
    for (size_t j = 0; skip && j < skip->len; j++) skipped |= skip->data[j].buffer == a->buffer;
    if (skipped) continue;
    int n = a->buffer->rank;
    r[k].buffer = a->buffer;
    r[k].n = n;
    r[k].min = n ? MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_tir_expr *) : NULL;
    r[k].extent = n ? MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_tir_expr *) : NULL;
    if (n && (!r[k].min || !r[k].extent)) return -1;
    for (int d = 0; d < n; d++) {
      mlc_tir_expr *lo = a->lo[d], *hi = a->hi[d], *dim = a->buffer->shape[d];
      if (lo->kind == MLC_TIR_INT_IMM && lo->int_value < 0) lo = mlc_tir_i64(m, 0);
      if (hi->kind == MLC_TIR_INT_IMM && dim->kind == MLC_TIR_INT_IMM && hi->int_value >= dim->int_value)
        hi = mlc_tir_i64(m, dim->int_value - 1);
      r[k].min[d] = lo;
      r[k].extent[d] = mlc_arith_simplify(c->an, m, mlc_tir_add(m, mlc_tir_sub(m, hi, lo), mlc_tir_i64(m, 1)));
      if (!lo || !r[k].extent[d]) return -1;
    }
    k++;
  }
  *out = r;
  *n_out = k;
  return 0;
}

static void rctx_fini(rctx *c) {
  mlc_vec_free(&c->relax);
  mlc_vec_free(&c->marks);
  mlc_vec_free(&c->local);
  mlc_vec_free(&c->reads);
  mlc_vec_free(&c->writes);
}

mlc_status mlc_tir_block_compute_regions(mlc_tir_module *m, mlc_tir_stmt *block) {
  if (!block || block->kind != MLC_TIR_BLOCK)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "block regions: not a block");
  rctx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  c.block = block;
  MLC_RETURN_IF_ERROR(mlc_arith_create(mlc_allocator_default(), &c.an));
  for (int i = 0; i < block->block.niters && !c.err; i++) {
    const mlc_tir_iter_var *it = &block->block.iters[i];
    c.err = mlc_arith_bind(c.an, it->var, it->min, it->extent);
  }
  mlc_tir_visitor v = {0};
  v.ctx = &c;
  v.pre_stmt = pre_stmt;
  v.post_stmt = post_stmt;
  v.pre_expr = pre_expr;
  if (!c.err) mlc_tir_visit_stmt(&v, block->block.init);
  if (!c.err) mlc_tir_visit_stmt(&v, block->block.body);
  if (!c.err) {
    int nr, nw;
    mlc_tir_region *r, *w;
    /* a reduction block does not list what it updates among its reads */
    if (regions(&c, &c.reads, block->block.init ? &c.writes : NULL, &r, &nr) ||
        regions(&c, &c.writes, NULL, &w, &nw) || !mlc_tir_block_set_regions(m, block, nr, r, nw, w))
      c.err = mlc_oom();
  }
  mlc_arith_destroy(c.an);
  rctx_fini(&c);
  return c.err;
}

typedef struct fctx {
  mlc_tir_module *m;
  mlc_status err;
} fctx;

static int func_post(void *ctx, const mlc_tir_stmt *s) {
  fctx *c = ctx;
  if (s->kind != MLC_TIR_BLOCK) return MLC_TIR_VISIT_CONTINUE;
  c->err = mlc_tir_block_compute_regions(c->m, (mlc_tir_stmt *)s); /* the function's own block */
  return c->err ? MLC_TIR_VISIT_STOP : MLC_TIR_VISIT_CONTINUE;
}

mlc_status mlc_tir_func_compute_regions(mlc_tir_module *m, mlc_tir_func *f) {
  if (!f) return mlc_make_status(MLC_INVALID_ARGUMENT, "block regions: prim func missing");
  fctx c = {m, NULL};
  mlc_tir_visitor v = {0};
  v.ctx = &c;
  v.post_stmt = func_post;
  mlc_tir_visit_stmt(&v, f->body);
  return c.err ? mlc_status_annotate(c.err, "prim func \"%s\"", f->name) : NULL;
}
