/*
** pass_thread_sync.c: barriers between the threads of a GPU thread block
** around their shared buffers (see tir_lower.h).
**
**   for ko in range(128):                      for ko in range(128):
**       for f in T.unroll(4):                      T.sync_threads()
**           ... A_shared[..] = A[..]               for f in T.unroll(4): ... A_shared[..] = A[..]
**       for ki in range(8):                ->      T.sync_threads()
**           ... A_shared[..] ...                   for ki in range(8): ... A_shared[..] ...
**
** A thread reads from a shared buffer what other threads of its block
** wrote (a cooperative fetch), so between the writes and the reads every
** thread must have arrived: T.sync_threads(), bar.sync.  In a sequence
** inside a loop bound to threadIdx, a barrier goes before each statement
** that
**   - reads a shared buffer written since the last barrier (RAW), or
**   - writes a shared buffer read or written since then (WAR, WAW),
** where, in the body of a loop, the accesses of the whole body count as
** "since then" at its start (the previous iteration's).  Statements are
** taken whole (a loop is one statement of its sequence); the pass descends
** into each to place the barriers its own sequences need.
**
** A barrier must be reached by every thread of the block: one needed
** under an if, or in a loop whose extent is not a constant, is an error
** (the schedules that use shared memory split their loops evenly).
*/
#include <string.h>

#include "lower/tir_lower.h"
#include "lower/tir_lower_int.h"
#include "lower/tir_visit.h"

#define TS_MAX 16

/* A set of shared buffers (|over|: more than TS_MAX: meets everything). */
typedef struct bset {
  int n, over;
  const mlc_tir_buffer *b[TS_MAX];
} bset;

static void bset_add(bset *s, const mlc_tir_buffer *b) {
  for (int i = 0; i < s->n; i++)
    if (s->b[i] == b) return;
  if (s->n == TS_MAX) s->over = 1;
  else s->b[s->n++] = b;
}

static void bset_union(bset *s, const bset *t) {
  s->over |= t->over;
  for (int i = 0; i < t->n; i++) bset_add(s, t->b[i]);
}

static int bset_meets(const bset *s, const bset *t) {
  if ((s->over && (t->n || t->over)) || (t->over && s->n)) return 1;
  for (int i = 0; i < s->n; i++)
    for (int j = 0; j < t->n; j++)
      if (s->b[i] == t->b[j]) return 1;
  return 0;
}

typedef struct rw {
  bset w, r;
} rw;

static int rw_stmt(void *ctx, const mlc_tir_stmt *s) {
  rw *a = ctx;
  if (s->kind == MLC_TIR_STORE && s->store.buffer->scope == MLC_TIR_SCOPE_SHARED) bset_add(&a->w, s->store.buffer);
  return MLC_TIR_VISIT_CONTINUE;
}

static int rw_expr(void *ctx, const mlc_tir_expr *e) {
  rw *a = ctx;
  if (e->kind == MLC_TIR_LOAD && e->load.buffer->scope == MLC_TIR_SCOPE_SHARED) bset_add(&a->r, e->load.buffer);
  return MLC_TIR_VISIT_CONTINUE;
}

/* The shared buffers |s| writes and reads, at any depth. */
static rw accesses(const mlc_tir_stmt *s) {
  rw a;
  memset(&a, 0, sizeof a);
  mlc_tir_visitor v = {0};
  v.ctx = &a;
  v.pre_stmt = rw_stmt;
  v.pre_expr = rw_expr;
  mlc_tir_visit_stmt(&v, s);
  return a;
}

typedef struct ts_ctx {
  mlc_tir_module *m;
  const mlc_tir_func *f;
  int threads;   /* inside a loop bound to threadIdx */
  int loop;      /* the statement is the body of a loop (its accesses repeat) */
  int divergent; /* under an if, or a loop of non-constant extent */
  mlc_status err;
} ts_ctx;

static mlc_tir_stmt *sync(ts_ctx *c, mlc_tir_stmt *s);

static mlc_tir_stmt *barrier(ts_ctx *c, const mlc_tir_stmt *at) {
  if (c->divergent) {
    if (!c->err)
      c->err = mlc_make_status(MLC_UNIMPLEMENTED,
                               "thread_sync: prim func \"%s\": a barrier for its shared buffers would be under a "
                               "condition or in a loop of varying extent (not every thread would reach it)",
                               c->f->name);
    return NULL;
  }
  mlc_tir_stmt *b = mlc_tir_evaluate(c->m, mlc_tir_call(c->m, MLC_TIR_INTRIN_SYNC_THREADS, 0, NULL));
  if (b) b->origin = at->origin;
  return b;
}

static mlc_tir_stmt *sync_seq(ts_ctx *c, mlc_tir_stmt *s, int loop) {
  int n = s->seq.n, k = 0, changed = 0;
  mlc_tir_stmt **v = MLC_ARENA_ARRAY(c->m->arena, 2 * (size_t)n, mlc_tir_stmt *);
  if (!v) return NULL;
  /* what was accessed since the last barrier: in a loop's body, the
  ** previous iteration's */
  rw since;
  memset(&since, 0, sizeof since);
  if (loop && c->threads) since = accesses(s);
  c->loop = 0; /* its statements are no loop bodies */
  for (int i = 0; i < n; i++) {
    mlc_tir_stmt *child = sync(c, s->seq.stmts[i]);
    if (!child) return NULL;
    changed |= child != s->seq.stmts[i];
    rw a = accesses(child);
    if (c->threads && (bset_meets(&a.r, &since.w) || bset_meets(&a.w, &since.w) || bset_meets(&a.w, &since.r))) {
      if (!(v[k++] = barrier(c, child))) return NULL;
      memset(&since, 0, sizeof since);
      changed = 1;
    }
    bset_union(&since.w, &a.w);
    bset_union(&since.r, &a.r);
    v[k++] = child;
  }
  return changed ? mlc_tir_seq(c->m, k, v) : s;
}

static mlc_tir_stmt *sync_child(void *vc, mlc_tir_stmt *s) { return sync(vc, s); }

static mlc_tir_stmt *sync(ts_ctx *c, mlc_tir_stmt *s) {
  if (!s || c->err) return NULL;
  ts_ctx saved = *c;
  mlc_tir_stmt *r = NULL;
  switch (s->kind) {
    case MLC_TIR_SEQ: r = sync_seq(c, s, c->loop); break;
    case MLC_TIR_FOR: {
      int bound = s->loop.kind == MLC_TIR_FOR_THREAD_BINDING;
      if (bound && s->loop.thread && !strncmp(s->loop.thread, "threadIdx.", 10)) c->threads = 1;
      c->loop = !bound;
      if (!bound && (s->loop.min->kind != MLC_TIR_INT_IMM || s->loop.extent->kind != MLC_TIR_INT_IMM))
        c->divergent = 1;
      mlc_tir_stmt *body = s->loop.body;
      /* a loop body of one statement that conflicts with itself across
      ** iterations: a sequence of one, so the barrier has its place */
      if (c->loop && c->threads && body->kind != MLC_TIR_SEQ && body->kind != MLC_TIR_ALLOCATE) {
        rw a = accesses(body);
        if (bset_meets(&a.r, &a.w) || bset_meets(&a.w, &a.w)) body = mlc_tir_seq(c->m, 1, &body);
      }
      mlc_tir_stmt *nb = body ? sync(c, body) : NULL;
      r = !nb ? NULL : nb == s->loop.body ? s : mlc_tir_for_like(c->m, s, s->loop.min, s->loop.extent, nb);
      break;
    }
    case MLC_TIR_IF:
      c->divergent = 1;
      c->loop = 0;
      r = mlc_tir_lw_map_children(c->m, s, sync_child, c);
      break;
    case MLC_TIR_ALLOCATE: /* the body repeats as the statement does */
      r = mlc_tir_lw_map_children(c->m, s, sync_child, c);
      break;
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT:
    case MLC_TIR_BLOCK: r = s; break;
  }
  mlc_status err = c->err;
  *c = saved;
  c->err = err;
  return err ? NULL : r;
}

static int has_shared(const mlc_tir_stmt *s) {
  rw a = accesses(s);
  return a.w.n || a.w.over || a.r.n || a.r.over;
}

mlc_status mlc_tir_pass_thread_sync(mlc_tir_module *m, mlc_tir_func *f) {
  if (!f->body || !has_shared(f->body)) return NULL;
  ts_ctx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  c.f = f;
  mlc_tir_stmt *b = sync(&c, f->body);
  if (c.err) return c.err;
  if (!b) return mlc_oom();
  f->body = b;
  return NULL;
}
