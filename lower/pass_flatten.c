/*
** pass_flatten.c: N-D buffer accesses -> 1-D (see tir_lower.h).
**
**   A: T.Buffer((128, 64), "float32")        A_1 = T.Buffer((8192,), "float32", data=A.data)
**   ... A[i, j] ...                   ->     ... A_1[i * 64 + j] ...
**   X = T.alloc_buffer((4, 16), ...)          X = T.alloc_buffer((64,), ...)
**
** Strides are row-major products of the shape, built as int64 expressions
** (symbolic extents included), so the code generator multiplies nothing
** itself.  A parameter gets a view only when the body accesses it and its
** rank is not 1; the function's signature keeps the N-D shape (the kernel
** still checks the caller's tensors against it).
*/
#include <string.h>

#include "lower/tir_lower.h"
#include "lower/tir_lower_int.h"

typedef struct fl_ctx {
  mlc_tir_module *m;
  mlc_tir_func *f;
  int nbufs;               /* ids below this are the original buffers */
  mlc_tir_buffer **to;     /* by buffer id: the flat buffer, or NULL */
  mlc_tir_expr ***strides; /* by buffer id: the original strides */
  int failed;
} fl_ctx;

static mlc_tir_expr *i64(mlc_tir_module *m, mlc_tir_expr *e) {
  return e && e->dtype != MLC_DTYPE_I64 ? mlc_tir_cast(m, MLC_DTYPE_I64, e) : e;
}

/* Registers the flat replacement of |b| (a view when |view|). */
static mlc_tir_buffer *flat_of(fl_ctx *c, mlc_tir_buffer *b, int view) {
  if (b->id >= c->nbufs) return NULL;
  if (c->to[b->id]) return c->to[b->id];
  mlc_tir_module *m = c->m;
  int r = b->rank;
  mlc_tir_expr **st = MLC_ARENA_ARRAY(m->arena, (size_t)(r ? r : 1), mlc_tir_expr *);
  if (!st) return NULL;
  mlc_tir_expr *size = mlc_tir_i64(m, 1);
  for (int d = r; d-- > 0;) {
    st[d] = size;
    size = mlc_tir_mul(m, i64(m, b->shape[d]), size);
  }
  mlc_tir_buffer *fb = view ? mlc_tir_buffer_view(m, b, 1, &size) : mlc_tir_buffer_new(m, b->name, b->dtype, 1, &size, b->scope);
  if (!fb) return NULL;
  if (view && mlc_tir_func_add_view(m, c->f, fb)) { /* only fails on oom: b is a parameter */
    return NULL;
  }
  c->to[b->id] = fb;
  c->strides[b->id] = st;
  return fb;
}

static int needs_flat(const mlc_tir_buffer *b) { return b->rank != 1 && !b->view_of; }

static int is_param(const fl_ctx *c, const mlc_tir_buffer *b) {
  for (int i = 0; i < c->f->nparams; i++)
    if (c->f->params[i] == b) return 1;
  return 0;
}

/* a OP b (ADD or MUL) with a scalar operand broadcast to the other's lanes
** (a vector index, when flattening vectorized code, times a scalar stride);
** a ramp stays a ramp, so a contiguous access stays contiguous. */
static mlc_tir_expr *vbin(mlc_tir_module *m, mlc_tir_binop op, mlc_tir_expr *a, mlc_tir_expr *b) {
  if (a && b && a->lanes == 1 && b->kind == MLC_TIR_RAMP) {
    mlc_tir_expr *t = a;
    a = b, b = t;
  }
  if (a && b && a->kind == MLC_TIR_RAMP && b->lanes == 1) {
    if (op == MLC_TIR_ADD) return mlc_tir_ramp(m, mlc_tir_add(m, a->ramp.base, b), a->ramp.stride, a->lanes);
    return mlc_tir_ramp(m, mlc_tir_mul(m, a->ramp.base, b), mlc_tir_mul(m, a->ramp.stride, b), a->lanes);
  }
  if (a && b && a->lanes != b->lanes) {
    if (a->lanes == 1) a = mlc_tir_broadcast(m, a, b->lanes);
    else if (b->lanes == 1) b = mlc_tir_broadcast(m, b, a->lanes);
  }
  return mlc_tir_binary(m, op, a, b);
}

/* The flat index of |idx| (|n| indices) into |b|, whose flat buffer exists. */
static mlc_tir_expr *flat_index(fl_ctx *c, const mlc_tir_buffer *b, int n, mlc_tir_expr *const *idx) {
  mlc_tir_module *m = c->m;
  mlc_tir_expr *sum = mlc_tir_i64(m, 0);
  for (int d = 0; d < n && d < b->rank; d++) {
    mlc_tir_expr *st = c->strides[b->id][d];
    mlc_tir_expr *term = mlc_tir_is_const(st, 1) ? i64(m, idx[d]) : vbin(m, MLC_TIR_MUL, i64(m, idx[d]), st);
    sum = mlc_tir_is_const(sum, 0) ? term : vbin(m, MLC_TIR_ADD, sum, term);
  }
  return sum;
}

static mlc_tir_buffer *replacement(fl_ctx *c, mlc_tir_buffer *b) {
  if (!needs_flat(b) || b->id >= c->nbufs) return NULL;
  if (c->to[b->id]) return c->to[b->id];
  if (is_param(c, b)) {
    mlc_tir_buffer *fb = flat_of(c, b, 1);
    if (!fb) c->failed = 1;
    return fb;
  }
  return NULL; /* an allocation: flattened where it is allocated */
}

static mlc_tir_expr *fl_expr(void *vc, mlc_tir_expr *e) {
  fl_ctx *c = vc;
  if (e->kind != MLC_TIR_LOAD) return e;
  mlc_tir_buffer *fb = replacement(c, e->load.buffer);
  if (!fb) return c->failed ? NULL : e;
  mlc_tir_expr *ix = flat_index(c, e->load.buffer, e->load.n, e->load.indices);
  return mlc_tir_load(c->m, fb, 1, &ix);
}

static int fl_store(void *vc, const mlc_tir_stmt *s, mlc_tir_buffer **buf, int *n, mlc_tir_expr ***indices) {
  fl_ctx *c = vc;
  (void)s;
  mlc_tir_buffer *fb = replacement(c, *buf);
  if (!fb) return c->failed;
  mlc_tir_expr **ix = MLC_ARENA_ARRAY(c->m->arena, 1, mlc_tir_expr *);
  if (!ix || !(ix[0] = flat_index(c, *buf, *n, *indices))) return 1;
  *buf = fb;
  *n = 1;
  *indices = ix;
  return 0;
}

static mlc_tir_stmt *fl_stmt(void *vc, mlc_tir_stmt *s) {
  fl_ctx *c = vc;
  if (!s) return NULL;
  if (s->kind == MLC_TIR_ALLOCATE && needs_flat(s->alloc.buffer) && s->alloc.buffer->id < c->nbufs) {
    mlc_tir_buffer *fb = flat_of(c, s->alloc.buffer, 0);
    mlc_tir_stmt *body = fb ? fl_stmt(c, s->alloc.body) : NULL;
    mlc_tir_stmt *r = body ? mlc_tir_allocate(c->m, fb, body) : NULL;
    if (r) r->origin = s->origin;
    return r;
  }
  mlc_tir_stmt *r = mlc_tir_lw_map_own_exprs(c->m, s, fl_expr, fl_store, c);
  return r ? mlc_tir_lw_map_children(c->m, r, fl_stmt, c) : NULL;
}

mlc_status mlc_tir_pass_flatten_buffers(mlc_tir_module *m, mlc_tir_func *f) {
  const mlc_tir_stmt *blk = mlc_tir_find_block(f->body);
  if (blk)
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "flatten_buffers: prim func \"%s\" still has block \"%s\" (run lower_blocks first)", f->name,
                           blk->block.name);
  fl_ctx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  c.f = f;
  c.nbufs = m->num_buffers;
  c.to = MLC_ARENA_ARRAY(m->arena, (size_t)c.nbufs + 1, mlc_tir_buffer *);
  c.strides = MLC_ARENA_ARRAY(m->arena, (size_t)c.nbufs + 1, mlc_tir_expr **);
  if (!c.to || !c.strides) return mlc_oom();
  memset(c.to, 0, sizeof *c.to * ((size_t)c.nbufs + 1));
  mlc_tir_stmt *b = fl_stmt(&c, f->body);
  if (!b) return mlc_oom();
  f->body = b;
  /* views in parameter order (they were made in order of first access) */
  int k = 0;
  for (int i = 0; i < f->nparams; i++)
    for (int j = k; j < f->nviews; j++)
      if (f->views[j]->view_of == f->params[i]) {
        mlc_tir_buffer *v = f->views[j];
        memmove(&f->views[k + 1], &f->views[k], sizeof *f->views * (size_t)(j - k));
        f->views[k++] = v;
        break;
      }
  return NULL;
}
