/*
** access.c: buffer accesses of blocks (access.h): which buffers a block
** reads and writes, in the order the cache and layout primitives number
** them, and remapping the accesses of one buffer to another.
*/
#include <stdio.h>
#include <string.h>

#include "lower/arith.h"
#include "lower/schedule/access.h"

/* ---- collecting buffers ------------------------------------------------------ */

typedef struct collect {
  mlc_tir_buffer **out;
  int max, n, over;
} collect;

static void add_buf(collect *c, mlc_tir_buffer *b) {
  for (int i = 0; i < c->n; i++)
    if (c->out[i] == b) return;
  if (c->n >= c->max) {
    c->over = 1;
    return;
  }
  c->out[c->n++] = b;
}

static void expr_loads(collect *c, const mlc_tir_expr *e) {
  if (!e) return;
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF: return;
    case MLC_TIR_BINARY:
      expr_loads(c, e->bin.a);
      expr_loads(c, e->bin.b);
      return;
    case MLC_TIR_NOT:
    case MLC_TIR_CAST: expr_loads(c, e->un.a); return;
    case MLC_TIR_SELECT:
      expr_loads(c, e->select.c);
      expr_loads(c, e->select.t);
      expr_loads(c, e->select.f);
      return;
    case MLC_TIR_LOAD:
      for (int i = 0; i < e->load.n; i++) expr_loads(c, e->load.indices[i]);
      add_buf(c, e->load.buffer);
      return;
    case MLC_TIR_CALL:
      for (int i = 0; i < e->call.n; i++) expr_loads(c, e->call.args[i]);
      return;
    case MLC_TIR_REDUCE: expr_loads(c, e->reduce.source); return;
    case MLC_TIR_RAMP:
      expr_loads(c, e->ramp.base);
      expr_loads(c, e->ramp.stride);
      return;
    case MLC_TIR_BROADCAST: expr_loads(c, e->un.a); return;
  }
}

/* writes: the stored buffers; else the loaded ones. */
static void stmt_bufs(collect *c, const mlc_tir_stmt *st, int writes) {
  if (!st) return;
  switch (st->kind) {
    case MLC_TIR_FOR:
      if (!writes) {
        expr_loads(c, st->loop.min);
        expr_loads(c, st->loop.extent);
      }
      stmt_bufs(c, st->loop.body, writes);
      return;
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) stmt_bufs(c, st->seq.stmts[i], writes);
      return;
    case MLC_TIR_STORE:
      if (writes) {
        add_buf(c, st->store.buffer);
      } else {
        for (int i = 0; i < st->store.n; i++) expr_loads(c, st->store.indices[i]);
        expr_loads(c, st->store.value);
      }
      return;
    case MLC_TIR_IF:
      if (!writes) expr_loads(c, st->if_.cond);
      stmt_bufs(c, st->if_.then_s, writes);
      stmt_bufs(c, st->if_.else_s, writes);
      return;
    case MLC_TIR_ALLOCATE: stmt_bufs(c, st->alloc.body, writes); return;
    case MLC_TIR_EVALUATE:
      if (!writes) expr_loads(c, st->eval.value);
      return;
    case MLC_TIR_BLOCK:
      if (!writes) {
        for (int i = 0; i < st->block.niters; i++) expr_loads(c, st->block.iters[i].binding);
        expr_loads(c, st->block.predicate);
      }
      stmt_bufs(c, st->block.init, writes);
      stmt_bufs(c, st->block.body, writes);
      return;
    case MLC_TIR_ASSERT:
      if (!writes) {
        expr_loads(c, st->assert_.cond);
        for (int i = 0; i < st->assert_.nvals; i++) expr_loads(c, st->assert_.vals[i]);
      }
      return;
  }
}

int sch_block_buffers(const mlc_tir_stmt *blk, int writes, mlc_tir_buffer **out, int max) {
  collect c = {out, max, 0, 0};
  stmt_bufs(&c, blk->block.init, writes);
  stmt_bufs(&c, blk->block.body, writes);
  if (c.over) return -1;
  if (writes || !blk->block.init) return c.n;
  /* a reduction block does not list what it writes among its reads */
  mlc_tir_buffer *w[256];
  collect cw = {w, 256, 0, 0};
  stmt_bufs(&cw, blk->block.init, 1);
  stmt_bufs(&cw, blk->block.body, 1);
  int k = 0;
  for (int i = 0; i < c.n; i++) {
    int written = 0;
    for (int j = 0; j < cw.n; j++) written |= cw.out[j] == out[i];
    if (!written) out[k++] = out[i];
  }
  return k;
}

/* ---- variable uses ------------------------------------------------------------ */

static int any_uses(int n, mlc_tir_expr *const *es, const mlc_tir_var *v) {
  for (int i = 0; i < n; i++)
    if (mlc_tir_expr_uses_var(es[i], v)) return 1;
  return 0;
}

int sch_stmt_uses_var(const mlc_tir_stmt *st, const mlc_tir_var *v) {
  if (!st) return 0;
  switch (st->kind) {
    case MLC_TIR_FOR:
      return mlc_tir_expr_uses_var(st->loop.min, v) || mlc_tir_expr_uses_var(st->loop.extent, v) ||
             sch_stmt_uses_var(st->loop.body, v);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++)
        if (sch_stmt_uses_var(st->seq.stmts[i], v)) return 1;
      return 0;
    case MLC_TIR_STORE:
      return any_uses(st->store.n, st->store.indices, v) || mlc_tir_expr_uses_var(st->store.value, v);
    case MLC_TIR_IF:
      return mlc_tir_expr_uses_var(st->if_.cond, v) || sch_stmt_uses_var(st->if_.then_s, v) ||
             sch_stmt_uses_var(st->if_.else_s, v);
    case MLC_TIR_ALLOCATE: return sch_stmt_uses_var(st->alloc.body, v);
    case MLC_TIR_EVALUATE: return mlc_tir_expr_uses_var(st->eval.value, v);
    case MLC_TIR_BLOCK:
      for (int i = 0; i < st->block.niters; i++) {
        const mlc_tir_iter_var *it = &st->block.iters[i];
        if (mlc_tir_expr_uses_var(it->min, v) || mlc_tir_expr_uses_var(it->extent, v) ||
            mlc_tir_expr_uses_var(it->binding, v))
          return 1;
      }
      return mlc_tir_expr_uses_var(st->block.predicate, v) || sch_stmt_uses_var(st->block.init, v) ||
             sch_stmt_uses_var(st->block.body, v);
    case MLC_TIR_ASSERT:
      return mlc_tir_expr_uses_var(st->assert_.cond, v) || any_uses(st->assert_.nvals, st->assert_.vals, v);
  }
  return 0;
}

/* ---- remapping ------------------------------------------------------------------ */

typedef struct remap {
  mlc_sch *s;
  const mlc_tir_buffer *from;
  mlc_tir_buffer *to;
  int loads_only;
  sch_index_map_fn map;
  void *ctx;
  int oom;
} remap;

static int expr_has(const mlc_tir_expr *e, const mlc_tir_buffer *b) {
  if (!e) return 0;
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF: return 0;
    case MLC_TIR_BINARY: return expr_has(e->bin.a, b) || expr_has(e->bin.b, b);
    case MLC_TIR_NOT:
    case MLC_TIR_CAST: return expr_has(e->un.a, b);
    case MLC_TIR_SELECT: return expr_has(e->select.c, b) || expr_has(e->select.t, b) || expr_has(e->select.f, b);
    case MLC_TIR_LOAD:
      if (e->load.buffer == b) return 1;
      for (int i = 0; i < e->load.n; i++)
        if (expr_has(e->load.indices[i], b)) return 1;
      return 0;
    case MLC_TIR_CALL:
      for (int i = 0; i < e->call.n; i++)
        if (expr_has(e->call.args[i], b)) return 1;
      return 0;
    case MLC_TIR_REDUCE: return expr_has(e->reduce.source, b);
    case MLC_TIR_RAMP: return expr_has(e->ramp.base, b) || expr_has(e->ramp.stride, b);
    case MLC_TIR_BROADCAST: return expr_has(e->un.a, b);
  }
  return 0;
}

static mlc_tir_expr *rexpr(remap *r, mlc_tir_expr *e);

/* New index array for |n| indices (rebuilt), mapped when the buffer is |from|. */
static mlc_tir_expr **rindices(remap *r, int n, mlc_tir_expr *const *idx, int mapped, int *nout) {
  mlc_tir_module *m = r->s->m;
  mlc_tir_expr **v = n ? MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_tir_expr *) : NULL;
  if (n && !v) {
    r->oom = 1;
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!(v[i] = rexpr(r, idx[i]))) return NULL;
  *nout = n;
  if (!mapped || !r->map) return v;
  mlc_tir_expr **w = r->map(r->ctx, m, n, v);
  if (!w) r->oom = 1;
  *nout = r->to->rank;
  return w;
}

static mlc_tir_expr *rexpr(remap *r, mlc_tir_expr *e) {
  if (!e || r->oom) return NULL;
  if (!expr_has(e, r->from)) return e;
  mlc_tir_module *m = r->s->m;
  mlc_tir_expr *x = NULL;
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF: return e;
    case MLC_TIR_BINARY: x = mlc_tir_binary(m, e->bin.op, rexpr(r, e->bin.a), rexpr(r, e->bin.b)); break;
    case MLC_TIR_NOT: x = mlc_tir_not(m, rexpr(r, e->un.a)); break;
    case MLC_TIR_CAST: x = mlc_tir_cast(m, e->dtype, rexpr(r, e->un.a)); break;
    case MLC_TIR_SELECT:
      x = mlc_tir_select(m, rexpr(r, e->select.c), rexpr(r, e->select.t), rexpr(r, e->select.f));
      break;
    case MLC_TIR_LOAD: {
      int mine = e->load.buffer == r->from, n = 0;
      mlc_tir_expr **idx = rindices(r, e->load.n, e->load.indices, mine, &n);
      x = idx ? mlc_tir_load(m, mine ? r->to : e->load.buffer, n, idx) : NULL;
      break;
    }
    case MLC_TIR_CALL: {
      mlc_tir_expr **args = MLC_ARENA_ARRAY(m->arena, (size_t)e->call.n, mlc_tir_expr *);
      if (!args) break;
      int ok = 1;
      for (int i = 0; i < e->call.n && ok; i++) ok = (args[i] = rexpr(r, e->call.args[i])) != NULL;
      x = ok ? mlc_tir_call(m, e->call.op, e->call.n, args) : NULL;
      break;
    }
    case MLC_TIR_REDUCE:
      x = mlc_tir_reduce(m, e->reduce.op, rexpr(r, e->reduce.source), e->reduce.naxes, e->reduce.axes);
      break;
    case MLC_TIR_RAMP: x = mlc_tir_ramp(m, rexpr(r, e->ramp.base), rexpr(r, e->ramp.stride), e->lanes); break;
    case MLC_TIR_BROADCAST: x = mlc_tir_broadcast(m, rexpr(r, e->un.a), e->lanes); break;
  }
  if (!x) r->oom = 1;
  return x;
}

/* Replaces *|slot| by its remapped form. */
static void rslot(remap *r, mlc_tir_expr **slot) {
  if (*slot && !r->oom) {
    mlc_tir_expr *x = rexpr(r, *slot);
    if (x) *slot = x;
  }
}

static void rregions(remap *r, int n, mlc_tir_region *regs) {
  mlc_tir_module *m = r->s->m;
  for (int i = 0; i < n && !r->oom; i++) {
    mlc_tir_region *g = &regs[i];
    for (int d = 0; d < g->n; d++) {
      rslot(r, &g->min[d]);
      rslot(r, &g->extent[d]);
    }
    if (g->buffer != r->from) continue;
    if (!r->map) {
      g->buffer = r->to;
      continue;
    }
    /* a box does not map onto a box: the whole of the new buffer */
    mlc_tir_expr **mn = MLC_ARENA_ARRAY(m->arena, (size_t)r->to->rank, mlc_tir_expr *);
    mlc_tir_expr **ex = MLC_ARENA_ARRAY(m->arena, (size_t)r->to->rank, mlc_tir_expr *);
    if (!mn || !ex) {
      r->oom = 1;
      return;
    }
    for (int d = 0; d < r->to->rank; d++) {
      mn[d] = mlc_tir_i64(m, 0);
      ex[d] = r->to->shape[d];
    }
    g->buffer = r->to;
    g->n = r->to->rank;
    g->min = mn;
    g->extent = ex;
  }
}

static void rstmt(remap *r, mlc_tir_stmt *st) {
  if (!st || r->oom) return;
  switch (st->kind) {
    case MLC_TIR_FOR:
      rslot(r, &st->loop.min);
      rslot(r, &st->loop.extent);
      rstmt(r, st->loop.body);
      return;
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) rstmt(r, st->seq.stmts[i]);
      return;
    case MLC_TIR_STORE: {
      int mine = st->store.buffer == r->from && !r->loads_only, n = 0;
      mlc_tir_expr **idx = rindices(r, st->store.n, st->store.indices, mine, &n);
      mlc_tir_expr *val = rexpr(r, st->store.value);
      if (!idx || !val) {
        r->oom = 1;
        return;
      }
      st->store.indices = idx;
      st->store.n = n;
      st->store.value = val;
      if (mine) st->store.buffer = r->to;
      return;
    }
    case MLC_TIR_IF:
      rslot(r, &st->if_.cond);
      rstmt(r, st->if_.then_s);
      rstmt(r, st->if_.else_s);
      return;
    case MLC_TIR_ALLOCATE: rstmt(r, st->alloc.body); return;
    case MLC_TIR_EVALUATE: rslot(r, &st->eval.value); return;
    case MLC_TIR_BLOCK:
      for (int i = 0; i < st->block.niters; i++) {
        mlc_tir_iter_var *it = &st->block.iters[i];
        rslot(r, &it->min);
        rslot(r, &it->extent);
        rslot(r, &it->binding);
      }
      rslot(r, &st->block.predicate);
      rregions(r, st->block.nreads, st->block.reads);
      if (!r->loads_only) rregions(r, st->block.nwrites, st->block.writes);
      rstmt(r, st->block.init);
      rstmt(r, st->block.body);
      return;
    case MLC_TIR_ASSERT:
      rslot(r, &st->assert_.cond);
      for (int i = 0; i < st->assert_.nvals; i++) rslot(r, &st->assert_.vals[i]);
      return;
  }
}

mlc_status sch_remap_buffer(mlc_sch *s, mlc_tir_stmt *st, const mlc_tir_buffer *from, mlc_tir_buffer *to,
                            int loads_only, sch_index_map_fn map, void *ctx) {
  remap r = {s, from, to, loads_only, map, ctx, 0};
  rstmt(&r, st);
  return r.oom ? mlc_oom() : NULL;
}

/* ---- names and allocations ---------------------------------------------------- */

static const mlc_tir_stmt *find_alloc(const mlc_tir_stmt *st, const mlc_tir_buffer *b, const char *name) {
  if (!st) return NULL;
  const mlc_tir_stmt *r = NULL;
  switch (st->kind) {
    case MLC_TIR_ALLOCATE:
      if (b ? st->alloc.buffer == b : strcmp(st->alloc.buffer->name, name) == 0) return st;
      return find_alloc(st->alloc.body, b, name);
    case MLC_TIR_FOR: return find_alloc(st->loop.body, b, name);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n && !r; i++) r = find_alloc(st->seq.stmts[i], b, name);
      return r;
    case MLC_TIR_IF:
      r = find_alloc(st->if_.then_s, b, name);
      return r ? r : find_alloc(st->if_.else_s, b, name);
    case MLC_TIR_BLOCK:
      r = find_alloc(st->block.init, b, name);
      return r ? r : find_alloc(st->block.body, b, name);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return NULL;
  }
  return NULL;
}

static int buffer_name_used(mlc_sch *s, const char *name) {
  for (int i = 0; i < s->func->nparams; i++)
    if (strcmp(s->func->params[i]->name, name) == 0) return 1;
  return find_alloc(s->func->body, NULL, name) != NULL;
}

const char *sch_unique_buffer_name(mlc_sch *s, const char *base) {
  if (!buffer_name_used(s, base)) return mlc_arena_strdup(s->m->arena, base);
  for (int i = 1; i < 1000000; i++) {
    const char *n = mlc_arena_printf(s->m->arena, "%s_%d", base, i);
    if (!n || !buffer_name_used(s, n)) return n;
  }
  return NULL;
}

mlc_tir_stmt *sch_find_alloc(mlc_sch *s, const mlc_tir_buffer *b) {
  return (mlc_tir_stmt *)find_alloc(s->func->body, b, NULL);
}

/* ---- accesses outside a statement ------------------------------------------------ */

int sch_accesses_outside(const mlc_tir_stmt *st, const mlc_tir_buffer *b, int writes_only, const mlc_tir_stmt *skip) {
  if (!st || st == skip) return 0;
  if (!skip || !sch_contains(st, skip))
    return sch_block_writes(st, b) || (!writes_only && sch_block_reads(st, b));
  /* |skip| is inside: look at the children on the way to it */
  switch (st->kind) {
    case MLC_TIR_FOR:
      if (!writes_only && (expr_has(st->loop.min, b) || expr_has(st->loop.extent, b))) return 1;
      return sch_accesses_outside(st->loop.body, b, writes_only, skip);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++)
        if (sch_accesses_outside(st->seq.stmts[i], b, writes_only, skip)) return 1;
      return 0;
    case MLC_TIR_IF:
      if (!writes_only && expr_has(st->if_.cond, b)) return 1;
      return sch_accesses_outside(st->if_.then_s, b, writes_only, skip) ||
             sch_accesses_outside(st->if_.else_s, b, writes_only, skip);
    case MLC_TIR_ALLOCATE: return sch_accesses_outside(st->alloc.body, b, writes_only, skip);
    case MLC_TIR_BLOCK:
      if (!writes_only) {
        for (int i = 0; i < st->block.niters; i++)
          if (expr_has(st->block.iters[i].binding, b)) return 1;
        if (expr_has(st->block.predicate, b)) return 1;
      }
      return sch_accesses_outside(st->block.init, b, writes_only, skip) ||
             sch_accesses_outside(st->block.body, b, writes_only, skip);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return 0;
  }
  return 0;
}

/* ---- regions ------------------------------------------------------------------------ */

#define MAX_DEPTH 512

/* Nonzero if |e| uses a variable defined by a statement of |path| (loops,
** block iteration variables). */
static int uses_path_var(const mlc_tir_expr *e, mlc_tir_stmt *const *path, int n) {
  for (int i = 0; i < n; i++) {
    const mlc_tir_stmt *p = path[i];
    if (p->kind == MLC_TIR_FOR && mlc_tir_expr_uses_var(e, p->loop.var)) return 1;
    if (p->kind == MLC_TIR_BLOCK)
      for (int k = 0; k < p->block.niters; k++)
        if (mlc_tir_expr_uses_var(e, p->block.iters[k].var)) return 1;
  }
  return 0;
}

mlc_status sch_block_region(mlc_sch *s, mlc_tir_stmt *blk, const mlc_tir_buffer *b, int writes, mlc_tir_expr **mins,
                            mlc_tir_expr **exts) {
  mlc_tir_module *m = s->m;
  const char *what = writes ? "writes" : "reads";
  /* the regions in terms of the iteration variables, on a copy of the block's head */
  mlc_tir_stmt tmp = *blk;
  tmp.block.nreads = tmp.block.nwrites = 0;
  mlc_status st = mlc_tir_block_compute_regions(m, &tmp);
  if (st) {
    if (mlc_status_code(st) != MLC_INVALID_ARGUMENT) return st;
    mlc_status r = sch_fail(s, MLC_SCH_ERR_REGION, "the region %s %s of %s has no bound: %s", sch_desc(s, blk), what,
                            b->name, mlc_status_message(st));
    mlc_status_free(st);
    return r;
  }
  const mlc_tir_region *reg = NULL;
  int n = writes ? tmp.block.nwrites : tmp.block.nreads;
  const mlc_tir_region *rs = writes ? tmp.block.writes : tmp.block.reads;
  for (int i = 0; i < n; i++)
    if (rs[i].buffer == b) reg = &rs[i];
  if (!reg || reg->n != b->rank)
    return sch_fail(s, MLC_SCH_ERR_REGION, "%s %s no region of %s", sch_desc(s, blk), writes ? "writes" : "reads",
                    b->name);
  mlc_arith *an = NULL;
  MLC_RETURN_IF_ERROR(mlc_arith_create(mlc_allocator_default(), &an));
  const mlc_tir_var **relax = MLC_ARENA_ARRAY(s->arena, (size_t)blk->block.niters + 1, const mlc_tir_var *);
  if (!relax) st = mlc_oom();
  for (int i = 0; !st && i < blk->block.niters; i++) {
    st = mlc_arith_bind(an, blk->block.iters[i].var, blk->block.iters[i].min, blk->block.iters[i].extent);
    relax[i] = blk->block.iters[i].var;
  }
  mlc_tir_stmt *path[MAX_DEPTH];
  int np = st ? 0 : sch_path(s, blk, path, MAX_DEPTH);
  if (!st && np < 0) st = sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is nested too deeply", sch_desc(s, blk));
  for (int d = 0; !st && d < b->rank; d++) {
    mlc_intset lo, hi;
    mlc_tir_expr *last = mlc_tir_sub(m, mlc_tir_add(m, reg->min[d], reg->extent[d]), mlc_tir_i64(m, 1));
    if (!last) {
      st = mlc_oom();
      break;
    }
    st = mlc_arith_eval_set(an, m, reg->min[d], blk->block.niters, relax, &lo);
    if (!st) st = mlc_arith_eval_set(an, m, last, blk->block.niters, relax, &hi);
    if (st) {
      if (mlc_status_code(st) == MLC_INVALID_ARGUMENT) {
        mlc_status r = sch_fail(s, MLC_SCH_ERR_REGION, "the region %s %s of %s has no bound: %s", sch_desc(s, blk),
                                what, b->name, mlc_status_message(st));
        mlc_status_free(st);
        st = r;
      }
      break;
    }
    mlc_tir_expr *mn = lo.min, *end = mlc_tir_add(m, hi.min, hi.extent);
    if (!end) {
      st = mlc_oom();
      break;
    }
    const mlc_tir_expr *dim = b->shape[d];
    if (mn->kind == MLC_TIR_INT_IMM && mn->int_value < 0) mn = mlc_tir_i64(m, 0);
    if (end->kind == MLC_TIR_INT_IMM && dim->kind == MLC_TIR_INT_IMM && end->int_value > dim->int_value)
      end = mlc_tir_i64(m, dim->int_value);
    mlc_tir_expr *ext = mlc_arith_simplify(an, m, mlc_tir_sub(m, end, mn));
    if (!mn || !ext) {
      st = mlc_oom();
      break;
    }
    if (uses_path_var(mn, path, np) || uses_path_var(ext, path, np))
      st = sch_fail(s, MLC_SCH_ERR_REGION,
                    "the region %s %s of %s depends on the loops around it (dimension %d)", sch_desc(s, blk), what,
                    b->name, d);
    mins[d] = mn;
    exts[d] = ext;
  }
  mlc_arith_destroy(an);
  return st;
}

mlc_tir_stmt *sch_scope_nest(mlc_sch *s, const mlc_tir_stmt *blk) {
  mlc_tir_stmt *path[MAX_DEPTH];
  int np = sch_path(s, blk, path, MAX_DEPTH);
  if (np <= 0) return NULL;
  int i = np - 2;
  while (i >= 0 && path[i]->kind != MLC_TIR_BLOCK) i--;
  for (i++; i < np - 1; i++)
    if (path[i]->kind != MLC_TIR_SEQ && path[i]->kind != MLC_TIR_ALLOCATE) break;
  return path[i];
}

/* ---- copy stages ---------------------------------------------------------------------- */

int sch_storage_scope(const char *name) {
  if (strcmp(name, "global") == 0) return MLC_TIR_SCOPE_GLOBAL;
  if (strcmp(name, "local") == 0) return MLC_TIR_SCOPE_LOCAL;
  if (strcmp(name, "shared") == 0) return MLC_TIR_SCOPE_SHARED;
  return -1;
}

mlc_tir_stmt *sch_copy_stage(mlc_sch *s, const char *name, mlc_tir_buffer *dst, mlc_tir_buffer *src,
                             mlc_tir_expr *const *mins, mlc_tir_expr *const *exts) {
  mlc_tir_module *m = s->m;
  int n = dst->rank;
  mlc_tir_var **ax = MLC_ARENA_ARRAY(m->arena, (size_t)n + 1, mlc_tir_var *);
  mlc_tir_iter_var *its = MLC_ARENA_ARRAY(m->arena, (size_t)n + 1, mlc_tir_iter_var);
  mlc_tir_expr **idx = MLC_ARENA_ARRAY(m->arena, (size_t)n + 1, mlc_tir_expr *);
  if (!ax || !its || !idx) return NULL;
  for (int d = 0; d < n; d++) {
    char an[32], vn[32];
    snprintf(an, sizeof an, "ax%d", d);
    snprintf(vn, sizeof vn, "v%d", d);
    ax[d] = mlc_tir_var_new(m, an, MLC_DTYPE_I64);
    mlc_tir_var *v = mlc_tir_var_new(m, vn, MLC_DTYPE_I64);
    if (!ax[d] || !v) return NULL;
    its[d] = (mlc_tir_iter_var){v, MLC_TIR_ITER_SPATIAL, mins[d], exts[d], mlc_tir_add(m, mlc_tir_ref(m, ax[d]), mins[d])};
    idx[d] = mlc_tir_ref(m, v);
    if (!its[d].binding || !idx[d]) return NULL;
  }
  mlc_tir_stmt *st = mlc_tir_store(m, dst, n, idx, mlc_tir_load(m, src, n, idx));
  st = mlc_tir_block(m, name, n, its, NULL, st);
  for (int d = n - 1; d >= 0; d--) st = mlc_tir_for(m, ax[d], mlc_tir_i64(m, 0), exts[d], MLC_TIR_FOR_SERIAL, NULL, st);
  return st;
}

/* ---- keeping regions current ------------------------------------------------------------ */

mlc_status sch_refresh_regions(mlc_sch *s, mlc_tir_stmt *st, const mlc_tir_buffer *b) {
  if (!st) return NULL;
  switch (st->kind) {
    case MLC_TIR_FOR: return sch_refresh_regions(s, st->loop.body, b);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) MLC_RETURN_IF_ERROR(sch_refresh_regions(s, st->seq.stmts[i], b));
      return NULL;
    case MLC_TIR_IF:
      MLC_RETURN_IF_ERROR(sch_refresh_regions(s, st->if_.then_s, b));
      return sch_refresh_regions(s, st->if_.else_s, b);
    case MLC_TIR_ALLOCATE: return sch_refresh_regions(s, st->alloc.body, b);
    case MLC_TIR_BLOCK:
      MLC_RETURN_IF_ERROR(sch_refresh_regions(s, st->block.init, b));
      MLC_RETURN_IF_ERROR(sch_refresh_regions(s, st->block.body, b));
      if ((st->block.nreads || st->block.nwrites) && (sch_block_reads(st, b) || sch_block_writes(st, b)))
        return mlc_tir_block_compute_regions(s->m, st);
      return NULL;
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return NULL;
  }
  return NULL;
}

/* Buffers a block may list for the cache primitives. */
#define CACHE_MAX_BUFS 256

mlc_status sch_cache_args(mlc_sch *s, const mlc_sch_inst *in, int writes, mlc_tir_stmt **blk, mlc_tir_buffer **buf,
                          mlc_tir_stmt **nest, int *scope, const char **scope_name) {
  int64_t index;
  MLC_RETURN_IF_ERROR(sch_arg_block(s, in, "block", blk));
  MLC_RETURN_IF_ERROR(sch_arg_int(s, in, writes ? "write_buffer_index" : "read_buffer_index", &index));
  MLC_RETURN_IF_ERROR(sch_arg_str(s, in, "storage_scope", scope_name));
  const char *bd = sch_desc(s, *blk), *verb = writes ? "writes" : "reads";
  *scope = sch_storage_scope(*scope_name);
  if (*scope < 0)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "unknown storage scope \"%s\" (global, local or shared)", *scope_name);
  mlc_tir_buffer *bufs[CACHE_MAX_BUFS];
  int nb = sch_block_buffers(*blk, writes, bufs, CACHE_MAX_BUFS);
  if (nb < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s %s more than %d buffers", bd, verb, CACHE_MAX_BUFS);
  if (index < 0 || index >= nb)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "%s %s %d buffer%s: no %s buffer %lld", bd, verb, nb, nb == 1 ? "" : "s",
                    writes ? "write" : "read", (long long)index);
  *buf = bufs[index];
  *nest = sch_scope_nest(s, *blk);
  if (!*nest)
    return mlc_make_status(MLC_INTERNAL, "%s: %s is not in the function", writes ? "cache_write" : "cache_read", bd);
  return NULL;
}

mlc_status sch_cache_stage(mlc_sch *s, mlc_sch_inst *in, mlc_tir_stmt *blk, mlc_tir_stmt *nest, mlc_tir_buffer *buf,
                           int scope, const char *scope_name, int writes) {
  mlc_tir_module *m = s->m;
  mlc_tir_expr **mins = MLC_ARENA_ARRAY(m->arena, (size_t)buf->rank + 1, mlc_tir_expr *);
  mlc_tir_expr **exts = MLC_ARENA_ARRAY(m->arena, (size_t)buf->rank + 1, mlc_tir_expr *);
  if (!mins || !exts) return mlc_oom();
  MLC_RETURN_IF_ERROR(sch_block_region(s, blk, buf, writes, mins, exts));

  /* rewrite */
  const char *base = mlc_arena_printf(s->arena, "%s_%s", buf->name, scope_name);
  const char *bname = base ? sch_unique_buffer_name(s, base) : NULL;
  const char *kname = base ? sch_unique_block_name(s, base) : NULL;
  mlc_tir_buffer *cache =
      bname && kname ? mlc_tir_buffer_new(m, bname, buf->dtype, buf->rank, buf->shape, (mlc_tir_scope)scope) : NULL;
  mlc_tir_stmt *copy = !cache ? NULL
                       : writes ? sch_copy_stage(s, kname, buf, cache, mins, exts)
                                : sch_copy_stage(s, kname, cache, buf, mins, exts);
  if (!copy) return mlc_oom();
  mlc_tir_stmt *cblk = copy;
  while (cblk->kind == MLC_TIR_FOR) cblk = cblk->loop.body;
  cblk->origin = copy->origin = blk->origin;
  MLC_RETURN_IF_ERROR(sch_replace(s, nest, writes ? mlc_tir_seq2(m, nest, copy) : mlc_tir_seq2(m, copy, nest)));
  MLC_RETURN_IF_ERROR(sch_remap_buffer(s, blk, buf, cache, !writes, NULL, NULL));
  MLC_RETURN_IF_ERROR(sch_add_alloc(s, cache));
  /* regions: the copy lists its own when the block did */
  if (blk->block.nreads || blk->block.nwrites) MLC_RETURN_IF_ERROR(mlc_tir_block_compute_regions(m, cblk));
  return sch_out_stmt(s, in, MLC_SCH_RV_BLOCK, cblk);
}

mlc_status sch_cache_inst(mlc_sch *s, mlc_sch_inst_kind kind, const char *key, mlc_sch_rv block, int index,
                          const char *scope, mlc_sch_rv *out) {
  mlc_sch_arg a[3] = {MLC_SCH_RV_ARG(block), MLC_SCH_INT_ARG(index), MLC_SCH_STR_ARG(scope)};
  a[0].key = "block";
  a[1].key = key;
  a[2].key = "storage_scope";
  mlc_sch_rv outs[MLC_SCH_MAX_OUTS];
  MLC_RETURN_IF_ERROR(mlc_sch_apply(s, kind, 3, a, outs, NULL));
  if (out) *out = outs[0];
  return NULL;
}
