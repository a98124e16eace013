/*
** pass_compact.c: shrink and move allocations (see tir_lower.h).
**
**   C_l = T.alloc_buffer((64, 64))              for io, jo in T.grid(8, 8):
**   for io, jo in T.grid(8, 8):                     C_l = T.alloc_buffer((8, 8), scope="local")
**       for ii, ji in T.grid(8, 8):        ->       for ii, ji in T.grid(8, 8):
**           C_l[io*8 + ii, jo*8 + ji] = 0               C_l[ii, ji] = 0
**       ...                                         ...
**
** Runs after lower_blocks (plain loops, N-D accesses) and before
** flatten_buffers.  For each allocation, innermost first:
**
**  1. the path: from the allocation's body down through loops, through a
**     sequence to its one entry that uses the buffer, through the one
**     branch of an if that uses it, through other allocations; the node
**     where it stops encloses every use;
**  2. the allocation descends into a loop of the path only when the
**     iterations of that loop touch disjoint parts of the buffer: in some
**     dimension the region's start moves by at least the region's extent
**     from one iteration to the next (the region with the loops below
**     relaxed, lower/arith.h's integer sets), so no value flows between
**     iterations and each can own its part;
**  3. at the chosen node S the region of every access, with the loops
**     inside S relaxed, is united per dimension (starts that differ by a
**     constant, constant extents); a dimension whose region is not smaller
**     than the buffer's constant extent keeps it;
**  4. the buffer is reallocated around S with the region's shape (LOCAL
**     when its constant size is at most MLC_TIR_LOCAL_BYTES) and every
**     index inside S is shifted by the region's start and simplified.
**
** A shared buffer (a GPU thread block's) is the block's, not a thread's:
** the allocation passes the loops bound to blockIdx (each block has its
** own) and threadIdx (its region spans them, wherever they are); it stays
** shared at any size.
**
** A buffer whose region cannot be computed (a load in an index, symbolic
** extents) keeps its allocation: compaction is an optimization, never a
** reason to fail.
*/
#include <stdint.h>
#include <string.h>

#include "base/vec.h"
#include "lower/arith.h"
#include "lower/tir_lower.h"
#include "lower/tir_lower_int.h"

#define MAX_RANK 16

/* One access to the buffer: its indices and the loops around it inside the
** allocation (outermost first). */
typedef struct access {
  int n;
  mlc_tir_expr *const *idx;
  int nloops;
  const mlc_tir_stmt **loops;
  int store;   /* a store (else a load) */
  int guarded; /* under an if */
} access;

typedef struct cp_ctx {
  mlc_tir_module *m;
  mlc_arith *an;
  const mlc_tir_buffer *buf; /* the buffer being compacted */
  MLC_VEC(access) acc;
  MLC_VEC(const mlc_tir_stmt *) loops; /* while collecting */
  int unknown;                         /* an access the pass cannot describe */
  int ifs;                             /* while collecting: enclosing ifs */
  mlc_tir_buffer *nb;                  /* while rewriting: the new buffer */
  mlc_tir_expr **shift;                /* ... and the region's starts */
  int failed;                          /* out of memory */
} cp_ctx;

/* ---- collecting the accesses ------------------------------------------------------ */

static int add_access(cp_ctx *c, int n, mlc_tir_expr *const *idx, int store) {
  access a = {n, idx, (int)c->loops.len, NULL, store, c->ifs > 0};
  if (a.nloops) {
    a.loops = MLC_ARENA_ARRAY(c->m->arena, c->loops.len, const mlc_tir_stmt *);
    if (!a.loops) return -1;
    memcpy(a.loops, c->loops.data, sizeof *a.loops * c->loops.len);
  }
  return mlc_vec_push(&c->acc, a) ? -1 : 0;
}

static void collect_expr(cp_ctx *c, const mlc_tir_expr *e) {
  if (!e || c->failed) return;
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF: break;
    case MLC_TIR_BINARY: collect_expr(c, e->bin.a); collect_expr(c, e->bin.b); break;
    case MLC_TIR_NOT:
    case MLC_TIR_CAST:
    case MLC_TIR_BROADCAST: collect_expr(c, e->un.a); break;
    case MLC_TIR_RAMP: c->unknown = 1; break; /* vectors come after compaction */
    case MLC_TIR_SELECT:
      collect_expr(c, e->select.c);
      collect_expr(c, e->select.t);
      collect_expr(c, e->select.f);
      break;
    case MLC_TIR_LOAD:
      for (int i = 0; i < e->load.n; i++) collect_expr(c, e->load.indices[i]);
      if (e->load.buffer != c->buf) break;
      for (int i = 0; i < e->load.n; i++)
        if (mlc_tir_expr_has_load(e->load.indices[i])) c->unknown = 1;
      if (add_access(c, e->load.n, e->load.indices, 0)) c->failed = 1;
      break;
    case MLC_TIR_CALL:
      for (int i = 0; i < e->call.n; i++) collect_expr(c, e->call.args[i]);
      break;
    case MLC_TIR_REDUCE: c->unknown = 1; break;
  }
}

static void collect(cp_ctx *c, const mlc_tir_stmt *s) {
  if (!s || c->failed) return;
  switch (s->kind) {
    case MLC_TIR_FOR:
      collect_expr(c, s->loop.min);
      collect_expr(c, s->loop.extent);
      if (mlc_vec_push(&c->loops, s)) {
        c->failed = 1;
        return;
      }
      collect(c, s->loop.body);
      c->loops.len--;
      break;
    case MLC_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++) collect(c, s->seq.stmts[i]);
      break;
    case MLC_TIR_STORE:
      for (int i = 0; i < s->store.n; i++) collect_expr(c, s->store.indices[i]);
      collect_expr(c, s->store.value);
      if (s->store.buffer == c->buf) {
        for (int i = 0; i < s->store.n; i++)
          if (mlc_tir_expr_has_load(s->store.indices[i])) c->unknown = 1;
        if (add_access(c, s->store.n, s->store.indices, 1)) c->failed = 1;
      }
      break;
    case MLC_TIR_IF:
      collect_expr(c, s->if_.cond);
      c->ifs++;
      collect(c, s->if_.then_s);
      collect(c, s->if_.else_s);
      c->ifs--;
      break;
    case MLC_TIR_ALLOCATE: collect(c, s->alloc.body); break;
    case MLC_TIR_EVALUATE: collect_expr(c, s->eval.value); break;
    case MLC_TIR_ASSERT:
      collect_expr(c, s->assert_.cond);
      for (int i = 0; i < s->assert_.nvals; i++) collect_expr(c, s->assert_.vals[i]);
      break;
    case MLC_TIR_BLOCK: c->unknown = 1; break; /* lower_blocks runs first */
  }
}

/* ---- regions ------------------------------------------------------------------------- */

/* The constant value of |e| (after simplification), or 0 when not constant. */
static int const_of(cp_ctx *c, const mlc_tir_expr *e, int64_t *v) {
  int64_t lo, hi;
  if (!mlc_arith_const_bound(c->an, e, &lo, &hi) || lo != hi) return 0;
  *v = lo;
  return 1;
}

/* a - b when it simplifies to a constant (*|d|): 1, else 0. */
static int const_diff(cp_ctx *c, mlc_tir_expr *a, mlc_tir_expr *b, int64_t *d) {
  mlc_tir_expr *e = a && b ? mlc_arith_simplify(c->an, c->m, mlc_tir_sub(c->m, a, b)) : NULL;
  return e && const_of(c, e, d);
}

/* How much |e| moves when loop variable |v| grows by one, when constant
** (*|d|): 1, else 0. */
static int const_step(cp_ctx *c, mlc_tir_expr *e, mlc_tir_var *v, int64_t *d) {
  mlc_tir_module *m = c->m;
  mlc_tir_expr *next = mlc_tir_add(m, mlc_tir_ref(m, v), mlc_tir_int(m, v->dtype, 1));
  mlc_tir_subst sub = {1, &v, &next, 0, NULL, NULL, 0};
  return next && const_diff(c, mlc_tir_expr_copy(m, e, &sub), e, d);
}

/* Whether |l| is bound to a thread of a GPU thread block (threadIdx.*). */
static int thread_loop(const mlc_tir_stmt *l) {
  return l->loop.kind == MLC_TIR_FOR_THREAD_BINDING && l->loop.thread && !strncmp(l->loop.thread, "threadIdx.", 10);
}

/*
** The region of every access, with each access's loops from position
** |depth| on relaxed, united per dimension into |mins| / |exts| (constant
** extents).  0 when it cannot be computed.
*/
static int region_of(cp_ctx *c, size_t from, size_t to, int depth, mlc_tir_expr **mins, int64_t *exts) {
  mlc_tir_module *m = c->m;
  int rank = c->buf->rank;
  for (size_t k = from; k < to; k++) {
    const access *a = &c->acc.data[k];
    if (a->n != rank) return 0;
    const mlc_tir_var *relax[64];
    int nr = 0;
    for (int l = 0; l < a->nloops; l++) {
      if (l < depth && !(c->buf->scope == MLC_TIR_SCOPE_SHARED && thread_loop(a->loops[l]))) continue;
      if (nr == 64) return 0;
      relax[nr++] = a->loops[l]->loop.var;
    }
    for (int d = 0; d < rank; d++) {
      mlc_intset set;
      mlc_status st = mlc_arith_eval_set(c->an, m, a->idx[d], nr, relax, &set);
      if (st) {
        mlc_status_free(st);
        return 0;
      }
      int64_t ext;
      if (!const_of(c, set.extent, &ext) || ext < 0) return 0;
      if (k == from) {
        mins[d] = set.min;
        exts[d] = ext;
        continue;
      }
      /* unite [mins[d], +exts[d]) with [set.min, +ext): starts a constant apart */
      int64_t delta;
      if (!const_diff(c, set.min, mins[d], &delta)) return 0;
      int64_t lo = delta < 0 ? delta : 0;
      int64_t hi = exts[d] > delta + ext ? exts[d] : delta + ext;
      if (delta < 0) mins[d] = set.min;
      exts[d] = hi - lo;
    }
  }
  return to > from;
}

static int region(cp_ctx *c, int depth, mlc_tir_expr **mins, int64_t *exts) {
  return region_of(c, 0, c->acc.len, depth, mins, exts);
}

/* Whether the iterations of loop |l| (at position |depth| of every access's
** loops) touch disjoint parts of the buffer. */
static int disjoint(cp_ctx *c, const mlc_tir_stmt *l, int depth) {
  mlc_tir_expr *mins[MAX_RANK];
  int64_t exts[MAX_RANK];
  if (!region(c, depth + 1, mins, exts)) return 0;
  for (int d = 0; d < c->buf->rank; d++) {
    int64_t delta;
    if (const_step(c, mins[d], l->loop.var, &delta) && (delta >= exts[d] || -delta >= exts[d]) && exts[d] > 0)
      return 1;
  }
  return 0;
}

/*
** Whether each iteration of the loop at position |depth| writes its whole
** part of the buffer before it reads any: the first access is an
** unguarded store in a nest of its own (no later access shares its loops
** below |depth|) that writes every element of a box (each index an outer
** offset plus loops of steps 1, e0, e0 * e1, ..., a loop in one dimension)
** covering every later access (checked in the innermost loop around every
** access).  No value then flows between iterations
** (a scratch tile written, updated and read in one iteration of a fused
** parallel loop, whose start no step of disjoint() can describe).
*/
static int written_first(cp_ctx *c, int depth) {
  const access *w = &c->acc.data[0];
  int rank = c->buf->rank;
  if (c->acc.len < 2 || !w->store || w->guarded) return 0;
  /* Loops inside |depth| around every access: when each of their
  ** iterations writes before it reads, so does each of |depth|'s. */
  for (;;) {
    size_t k = 0;
    while (k < c->acc.len && c->acc.data[k].nloops > depth + 1 && c->acc.data[k].loops[depth + 1] == w->loops[depth + 1])
      k++;
    if (k < c->acc.len) break;
    depth++;
  }
  for (size_t k = 1; k < c->acc.len; k++) {
    const access *a = &c->acc.data[k];
    if (a->nloops > depth + 1 && w->nloops > depth + 1 && a->loops[depth + 1] == w->loops[depth + 1]) return 0;
  }
  mlc_tir_expr *wmin[MAX_RANK], *amin[MAX_RANK];
  int64_t wext[MAX_RANK], aext[MAX_RANK];
  if (!region_of(c, 0, 1, depth + 1, wmin, wext) || !region_of(c, 1, c->acc.len, depth + 1, amin, aext)) return 0;
  /* every element of the box: per dimension, loops whose steps nest
  ** densely (steps 1, e0, e0 * e1, ... for extents e0, e1, ...: a lanes loop
  ** inside a columns loop) and span its extent; a loop in one dimension */
  int used[64] = {0};
  if (w->nloops - (depth + 1) > 64) return 0;
  for (int d = 0; d < rank; d++) {
    int64_t step[8], ext[8];
    int nv = 0;
    for (int l = depth + 1; l < w->nloops; l++) {
      mlc_tir_var *v = w->loops[l]->loop.var;
      if (!mlc_tir_expr_uses_var(w->idx[d], v)) continue;
      if (nv == 8 || used[l - depth - 1]++ || !const_step(c, w->idx[d], v, &step[nv]) || step[nv] < 1 ||
          !const_of(c, w->loops[l]->loop.extent, &ext[nv]))
        return 0;
      nv++;
    }
    /* sort by step, then check the nesting */
    for (int i = 1; i < nv; i++)
      for (int j = i; j > 0 && step[j] < step[j - 1]; j--) {
        int64_t t = step[j];
        step[j] = step[j - 1], step[j - 1] = t;
        t = ext[j];
        ext[j] = ext[j - 1], ext[j - 1] = t;
      }
    int64_t span = 1;
    for (int i = 0; i < nv; i++) {
      if (step[i] != span) return 0;
      span *= ext[i];
    }
    if (span != wext[d]) return 0;
    int64_t delta;
    if (!const_diff(c, amin[d], wmin[d], &delta) || delta < 0 || delta + aext[d] > wext[d]) return 0;
  }
  return 1;
}

/* ---- rewriting ------------------------------------------------------------------------ */

static mlc_tir_expr **shifted(cp_ctx *c, int n, mlc_tir_expr *const *idx) {
  mlc_tir_expr **v = MLC_ARENA_ARRAY(c->m->arena, (size_t)n, mlc_tir_expr *);
  if (!v) return NULL;
  for (int d = 0; d < n; d++) {
    v[d] = mlc_arith_simplify(c->an, c->m, mlc_tir_sub(c->m, idx[d], c->shift[d]));
    if (!v[d]) return NULL;
  }
  return v;
}

static mlc_tir_expr *rw_expr(void *vc, mlc_tir_expr *e) {
  cp_ctx *c = vc;
  if (e->kind != MLC_TIR_LOAD || e->load.buffer != c->buf) return e;
  mlc_tir_expr **idx = shifted(c, e->load.n, e->load.indices);
  return idx ? mlc_tir_load(c->m, c->nb, e->load.n, idx) : NULL;
}

static int rw_store(void *vc, const mlc_tir_stmt *s, mlc_tir_buffer **buf, int *n, mlc_tir_expr ***indices) {
  cp_ctx *c = vc;
  (void)s;
  if (*buf != c->buf) return 0;
  mlc_tir_expr **idx = shifted(c, *n, *indices);
  if (!idx) return 1;
  *buf = c->nb;
  *indices = idx;
  return 0;
}

static mlc_tir_stmt *rw_stmt(void *vc, mlc_tir_stmt *s) {
  cp_ctx *c = vc;
  mlc_tir_stmt *r = mlc_tir_lw_map_own_exprs(c->m, s, rw_expr, rw_store, c);
  return r ? mlc_tir_lw_map_children(c->m, r, rw_stmt, c) : NULL;
}

/* Replaces child |from| by |to| (map_children callback). */
typedef struct swap {
  const mlc_tir_stmt *from;
  mlc_tir_stmt *to;
} swap;
static mlc_tir_stmt *swap_child(void *vs, mlc_tir_stmt *s) {
  swap *w = vs;
  return s == w->from ? w->to : s;
}

/* ---- one allocation ------------------------------------------------------------------- */

/* The child of |s| on the path to every use of the buffer, or NULL. */
static mlc_tir_stmt *path_child(cp_ctx *c, const mlc_tir_stmt *s) {
  const mlc_tir_buffer *b = c->buf;
  switch (s->kind) {
    case MLC_TIR_SEQ: {
      mlc_tir_stmt *one = NULL;
      for (int i = 0; i < s->seq.n; i++)
        if (mlc_tir_lw_uses_buffer(s->seq.stmts[i], b)) {
          if (one) return NULL;
          one = s->seq.stmts[i];
        }
      return one;
    }
    case MLC_TIR_IF: {
      /* the condition reads nothing of b: it has no statement, check the branches */
      int t = mlc_tir_lw_uses_buffer(s->if_.then_s, b), e = mlc_tir_lw_uses_buffer(s->if_.else_s, b);
      mlc_tir_stmt *only = t && !e ? s->if_.then_s : e && !t ? s->if_.else_s : NULL;
      if (!only) return NULL;
      mlc_tir_stmt probe = *s;
      probe.if_.then_s = probe.if_.else_s = NULL;
      return mlc_tir_lw_uses_buffer(&probe, b) ? NULL : only;
    }
    case MLC_TIR_ALLOCATE: return s->alloc.body;
    case MLC_TIR_FOR:
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT:
    case MLC_TIR_BLOCK: return NULL;
  }
  return NULL;
}

static mlc_tir_stmt *compact_one(cp_ctx *c, mlc_tir_stmt *alloc) {
  mlc_tir_module *m = c->m;
  const mlc_tir_buffer *b = alloc->alloc.buffer;
  int rank = b->rank;
  if (rank == 0 && b->scope == MLC_TIR_SCOPE_GLOBAL && mlc_dtype_size(b->dtype) <= MLC_TIR_LOCAL_BYTES) {
    mlc_tir_buffer *nb = mlc_tir_buffer_new(m, b->name, b->dtype, 0, NULL, MLC_TIR_SCOPE_LOCAL);
    mlc_tir_buffer *from = (mlc_tir_buffer *)b;
    mlc_tir_subst sub = {0, NULL, NULL, 1, &from, &nb, 0};
    mlc_tir_stmt *body = nb ? mlc_tir_stmt_copy(m, alloc->alloc.body, &sub) : NULL;
    mlc_tir_stmt *r = body ? mlc_tir_allocate(m, nb, body) : NULL;
    if (!r) c->failed = 1;
    else r->origin = alloc->origin;
    return r;
  }
  if (rank < 1 || rank > MAX_RANK) return alloc;
  c->buf = b;
  c->acc.len = 0;
  c->loops.len = 0;
  c->unknown = 0;
  collect(c, alloc->alloc.body);
  if (c->failed) return NULL;
  if (c->unknown || c->acc.len == 0) return alloc;

  /* the loops inside the allocation range over their domains */
  MLC_VEC(mlc_tir_stmt *) path = {0};
  int mark = mlc_arith_mark(c->an);
  mlc_tir_stmt *result = alloc;
  for (size_t k = 0; k < c->acc.len; k++)
    for (int l = 0; l < c->acc.data[k].nloops; l++) {
      const mlc_tir_stmt *lp = c->acc.data[k].loops[l];
      mlc_status st = mlc_arith_bind(c->an, lp->loop.var, lp->loop.min, lp->loop.extent);
      if (st) {
        mlc_status_free(st);
        goto keep;
      }
    }

  /* the path, and how deep the allocation may go */
  mlc_tir_stmt *node = alloc->alloc.body;
  int depth = 0;
  for (;;) {
    if (mlc_vec_push(&path, node)) goto oom;
    if (node->kind == MLC_TIR_FOR) {
      mlc_tir_stmt probe = *node;
      probe.loop.body = NULL;
      /* a shared buffer belongs to the thread block: each block has its
      ** own, and its threads' loops are no owners (the allocation passes
      ** them, the region spans them) */
      int passes = b->scope == MLC_TIR_SCOPE_SHARED && node->loop.kind == MLC_TIR_FOR_THREAD_BINDING;
      if (mlc_tir_lw_uses_buffer(&probe, b) || (!passes && !disjoint(c, node, depth) && !written_first(c, depth)))
        break;
      depth++;
      node = node->loop.body;
      continue;
    }
    mlc_tir_stmt *next = path_child(c, node);
    if (!next) break;
    node = next;
  }

  /* the region at the chosen node */
  mlc_tir_expr *mins[MAX_RANK];
  int64_t exts[MAX_RANK];
  if (!region(c, depth, mins, exts)) goto keep;
  int64_t bytes = (int64_t)mlc_dtype_size(b->dtype);
  int moved = path.len > 1, smaller = 0;
  mlc_tir_expr *shape[MAX_RANK];
  for (int d = 0; d < rank; d++) {
    int64_t full;
    if (const_of(c, b->shape[d], &full) && exts[d] >= full) {
      exts[d] = full; /* nothing to gain: the dimension stays as it is */
      mins[d] = mlc_tir_i64(m, 0);
    } else {
      smaller = 1;
    }
    shape[d] = mlc_tir_i64(m, exts[d]);
    if (!mins[d] || !shape[d]) goto oom;
    bytes = exts[d] && bytes > INT64_MAX / exts[d] ? INT64_MAX : bytes * exts[d];
  }
  mlc_tir_scope scope =
      b->scope != MLC_TIR_SCOPE_SHARED && bytes <= MLC_TIR_LOCAL_BYTES ? MLC_TIR_SCOPE_LOCAL : b->scope;
  if (!moved && !smaller && scope == b->scope) goto keep;
  c->nb = mlc_tir_buffer_new(m, b->name, b->dtype, rank, shape, scope);
  c->shift = mins;
  if (!c->nb) goto oom;
  mlc_tir_stmt *inner = rw_stmt(c, node);
  mlc_tir_stmt *r = inner ? mlc_tir_allocate(m, c->nb, inner) : NULL;
  if (!r) goto oom;
  r->origin = alloc->origin;
  /* rebuild the path upwards with the new allocation in place of |node| */
  for (size_t i = path.len - 1; i-- > 0;) {
    swap w = {path.data[i + 1], r};
    r = mlc_tir_lw_map_children(m, path.data[i], swap_child, &w);
    if (!r) goto oom;
  }
  result = r;
keep:
  mlc_arith_restore(c->an, mark);
  mlc_vec_free(&path);
  return result;
oom:
  mlc_arith_restore(c->an, mark);
  mlc_vec_free(&path);
  c->failed = 1;
  return NULL;
}

/* Innermost allocations first; loops bind their variables for the analysis. */
static mlc_tir_stmt *walk(void *vc, mlc_tir_stmt *s) {
  cp_ctx *c = vc;
  if (!s || c->failed) return NULL;
  int mark = mlc_arith_mark(c->an);
  if (s->kind == MLC_TIR_FOR) {
    mlc_status st = mlc_arith_bind(c->an, s->loop.var, s->loop.min, s->loop.extent);
    if (st) { /* a variable the analysis cannot take: nothing below is compacted */
      mlc_status_free(st);
      return s;
    }
  }
  mlc_tir_stmt *r = mlc_tir_lw_map_children(c->m, s, walk, c);
  if (r && r->kind == MLC_TIR_ALLOCATE) r = compact_one(c, r);
  mlc_arith_restore(c->an, mark);
  if (!r) c->failed = 1;
  return r;
}

mlc_status mlc_tir_pass_compact_buffers(mlc_tir_module *m, mlc_tir_func *f) {
  const mlc_tir_stmt *blk = mlc_tir_find_block(f->body);
  if (blk)
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "compact_buffers: prim func \"%s\" still has block \"%s\" (run lower_blocks first)",
                           f->name, blk->block.name);
  cp_ctx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  MLC_RETURN_IF_ERROR(mlc_arith_create(mlc_allocator_default(), &c.an));
  mlc_tir_stmt *b = walk(&c, f->body);
  mlc_vec_free(&c.acc);
  mlc_vec_free(&c.loops);
  mlc_arith_destroy(c.an);
  if (!b || c.failed) return mlc_oom();
  f->body = b;
  return NULL;
}
