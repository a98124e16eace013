/*
** tir_features.c: the features of a lowered prim function that the
** tuner's cost model learns from (mlc_lower_features, lower.h).
**
** One walk over the lowered function (flat loops, vector expressions)
** with the stack of enclosing loops.  For every store it counts the
** floating-point operations of its value (times its lanes and the trip
** count of its loops), its loads and stored bytes, its lanes, the unrolled
** extent around it and its innermost loop.  For every access (a load or a
** store) and every loop around it, the bytes it touches during one whole
** execution of that loop: its element size times the extents of the loops
** from that one inward that its index uses (reuse along the others).
** Summed per loop, that is the loop's footprint; the traffic at a cache of
** C bytes is then the footprint of each outermost loop whose footprint
** fits, times its executions, plus the accesses of loops that do not fit
** (every access a miss).  Three levels: 32 KiB, 1 MiB, 32 MiB.
**
** Extents that are not constants count as 16.  Values go through log2(1 +
** x) so that kernels of different sizes share a scale.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "lower/lower.h"
#include "lower/tir_visit.h"

#define MAX_DEPTH 64
#define SYMBOLIC_EXTENT 16.0

typedef struct floop {
  int parent;      /* index of the enclosing loop, -1 at the top */
  double extent;
  double execs;    /* times the whole loop runs */
  double footprint; /* bytes touched by one execution */
  double direct;   /* bytes of accesses right in its body (no loop between) over all executions */
} floop;

typedef struct walk {
  floop *loops;
  int nloops, cap;
  int oom;
  /* the loop stack */
  int depth;
  int stack[MAX_DEPTH];
  const mlc_tir_var *vars[MAX_DEPTH];
  double ext[MAX_DEPTH];
  mlc_tir_for_kind kinds[MAX_DEPTH];
  double trips; /* product of ext[0..depth) */
  /* totals */
  double flops, vflops, bytes, vec_bytes, stores, store_lanes, unrolled_max, parallel, inner_ext, local_bytes;
  double top_direct, ifs, nstores_static, loads, maxdepth;
} walk;

static double log1p2(double x) { return x > 0 ? log2(1.0 + x) : 0.0; }

static double extent_of(const mlc_tir_expr *e) {
  return e && e->kind == MLC_TIR_INT_IMM ? (double)e->int_value : SYMBOLIC_EXTENT;
}

static int uses_any(const mlc_tir_expr *const *idx, int n, const mlc_tir_var *v) {
  for (int i = 0; i < n; i++)
    if (mlc_tir_expr_uses_var(idx[i], v)) return 1;
  return 0;
}

/* One access of |size| bytes per lane, |lanes| lanes, index |idx|. */
static void access(walk *w, const mlc_tir_expr *const *idx, int n, double bytes) {
  double prod = 1;
  for (int d = w->depth - 1; d >= 0; d--) {
    if (uses_any(idx, n, w->vars[d])) prod *= w->ext[d];
    w->loops[w->stack[d]].footprint += bytes * prod;
  }
  if (w->depth) w->loops[w->stack[w->depth - 1]].direct += bytes * w->trips;
  else w->top_direct += bytes;
  w->bytes += bytes * w->trips;
}

typedef struct expr_count {
  walk *w;
  double flops, vflops;
} expr_count;

static int count_expr(void *ctx, const mlc_tir_expr *e) {
  expr_count *c = ctx;
  walk *w = c->w;
  double lanes = e->lanes > 0 ? e->lanes : 1;
  switch (e->kind) {
    case MLC_TIR_BINARY:
    case MLC_TIR_CALL:
      if (mlc_dtype_is_float(e->dtype)) {
        c->flops += lanes;
        if (lanes > 1) c->vflops += lanes;
      }
      break;
    case MLC_TIR_LOAD: {
      double b = (double)mlc_dtype_size(e->dtype) * lanes;
      access(w, (const mlc_tir_expr *const *)e->load.indices, e->load.n, b);
      w->loads += w->trips;
      if (lanes > 1) w->vec_bytes += b * w->trips;
      break;
    }
    default: break;
  }
  return MLC_TIR_VISIT_CONTINUE;
}

static void walk_stmt(walk *w, const mlc_tir_stmt *s);

static void walk_expr(walk *w, const mlc_tir_expr *e) {
  if (!e) return;
  expr_count c = {w, 0, 0};
  mlc_tir_visitor v = {0};
  v.ctx = &c;
  v.pre_expr = count_expr;
  mlc_tir_visit_expr(&v, e);
  w->flops += c.flops * w->trips;
  w->vflops += c.vflops * w->trips;
}

static void walk_loop(walk *w, const mlc_tir_stmt *s) {
  if (w->depth >= MAX_DEPTH) return;
  if (w->nloops == w->cap) {
    int cap = w->cap ? 2 * w->cap : 64;
    floop *p = mlc_mem_realloc(w->loops, (size_t)cap * sizeof *p);
    if (!p) {
      w->oom = 1;
      return;
    }
    w->loops = p;
    w->cap = cap;
  }
  int id = w->nloops++;
  double e = extent_of(s->loop.extent);
  floop *l = &w->loops[id];
  memset(l, 0, sizeof *l);
  l->parent = w->depth ? w->stack[w->depth - 1] : -1;
  l->extent = e;
  l->execs = w->trips;
  if (s->loop.kind == MLC_TIR_FOR_PARALLEL && w->parallel == 0) w->parallel = e;
  w->stack[w->depth] = id;
  w->vars[w->depth] = s->loop.var;
  w->ext[w->depth] = e;
  w->kinds[w->depth] = s->loop.kind;
  w->depth++;
  if (w->depth > w->maxdepth) w->maxdepth = w->depth;
  double saved = w->trips;
  w->trips *= e;
  walk_stmt(w, s->loop.body);
  w->trips = saved;
  w->depth--;
}

static void walk_store(walk *w, const mlc_tir_stmt *s) {
  double lanes = s->store.value && s->store.value->lanes > 1 ? s->store.value->lanes : 1;
  walk_expr(w, s->store.value);
  for (int i = 0; i < s->store.n; i++) walk_expr(w, s->store.indices[i]);
  access(w, (const mlc_tir_expr *const *)s->store.indices, s->store.n,
         (double)mlc_dtype_size(s->store.buffer->dtype) * lanes);
  w->stores += w->trips;
  w->store_lanes += lanes * w->trips;
  w->nstores_static += 1;
  double unrolled = 1;
  for (int d = 0; d < w->depth; d++)
    if (w->kinds[d] == MLC_TIR_FOR_UNROLLED) unrolled *= w->ext[d];
  if (unrolled > w->unrolled_max) w->unrolled_max = unrolled;
  w->inner_ext += (w->depth ? w->ext[w->depth - 1] : 1) * w->trips;
}

static void walk_stmt(walk *w, const mlc_tir_stmt *s) {
  if (!s || w->oom) return;
  switch (s->kind) {
    case MLC_TIR_FOR: walk_loop(w, s); break;
    case MLC_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++) walk_stmt(w, s->seq.stmts[i]);
      break;
    case MLC_TIR_STORE: walk_store(w, s); break;
    case MLC_TIR_IF:
      w->ifs += w->trips;
      walk_expr(w, s->if_.cond);
      walk_stmt(w, s->if_.then_s);
      walk_stmt(w, s->if_.else_s);
      break;
    case MLC_TIR_ALLOCATE: {
      const mlc_tir_buffer *b = s->alloc.buffer;
      double n = (double)mlc_dtype_size(b->dtype);
      for (int d = 0; d < b->rank; d++) n *= extent_of(b->shape[d]);
      w->local_bytes += n;
      walk_stmt(w, s->alloc.body);
      break;
    }
    case MLC_TIR_EVALUATE: walk_expr(w, s->eval.value); break;
    case MLC_TIR_BLOCK:
      walk_stmt(w, s->block.init);
      walk_stmt(w, s->block.body);
      break;
    case MLC_TIR_ASSERT: break;
  }
}

/* Bytes moved into a cache of |cap| bytes under loop |id| (all of it when
** it fits, else its direct accesses and its child loops'). */
static double traffic(const walk *w, int id, double cap) {
  const floop *l = &w->loops[id];
  if (l->footprint <= cap) return l->footprint * l->execs;
  double t = l->direct;
  for (int i = id + 1; i < w->nloops; i++)
    if (w->loops[i].parent == id) t += traffic(w, i, cap);
  return t;
}

mlc_status mlc_lower_features(const mlc_tir_func *f, float out[MLC_LOWER_NFEATURES]) {
  walk w;
  memset(&w, 0, sizeof w);
  w.trips = 1;
  walk_stmt(&w, f->body);
  if (w.oom) {
    mlc_mem_free(w.loops);
    return mlc_oom();
  }
  double caches[3] = {32768.0, 1048576.0, 33554432.0}, t[3];
  for (int c = 0; c < 3; c++) {
    t[c] = w.top_direct;
    for (int i = 0; i < w.nloops; i++)
      if (w.loops[i].parent < 0) t[c] += traffic(&w, i, caches[c]);
  }
  double stores = w.stores > 0 ? w.stores : 1;
  double v[MLC_LOWER_NFEATURES] = {
      log1p2(w.flops),
      log1p2(w.bytes),
      log1p2(w.flops / (w.bytes > 0 ? w.bytes : 1)),
      w.flops > 0 ? w.vflops / w.flops : 0,
      w.store_lanes / stores,
      log1p2(w.unrolled_max),
      log1p2(w.parallel),
      log1p2(w.nloops),
      w.maxdepth,
      log1p2(w.inner_ext / stores),
      log1p2(w.local_bytes),
      log1p2(t[0]),
      log1p2(t[1]),
      log1p2(t[2]),
      log1p2(w.stores),
      log1p2(w.nstores_static),
      w.bytes > 0 ? w.vec_bytes / w.bytes : 0,
      log1p2(w.loads / (w.flops > 0 ? w.flops : 1)),
      w.ifs / stores,
      log1p2(t[0] / (w.flops > 0 ? w.flops : 1)),
  };
  for (int i = 0; i < MLC_LOWER_NFEATURES; i++) out[i] = (float)v[i];
  mlc_mem_free(w.loops);
  return NULL;
}
