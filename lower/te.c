/*
** te.c: the tensor-expression builder of te.h: placeholders, compute
** stages, reductions, and their lowering to one prim function with a block
** per stage.
*/
#include "lower/te.h"

#include <stdio.h>
#include <string.h>

#include "base/vec.h"
#include "lower/tir_visit.h"

typedef struct raxis {
  mlc_tir_var *var;
  mlc_tir_expr *extent;
} raxis;

struct mlc_te_builder {
  mlc_tir_module *m;
  mlc_status err; /* sticky, first error wins */
  MLC_VEC(mlc_te_tensor *) tensors;
  MLC_VEC(raxis) raxes;
  int unique; /* mlc_te_unique_names */
};

typedef MLC_VEC(mlc_tir_var *) var_vec;

mlc_status mlc_te_builder_create(mlc_tir_module *m, mlc_te_builder **out) {
  *out = NULL;
  mlc_te_builder *b = mlc_mem_calloc(1, sizeof *b);
  if (!b) return mlc_oom();
  b->m = m;
  *out = b;
  return NULL;
}

void mlc_te_builder_destroy(mlc_te_builder *b) {
  if (!b) return;
  mlc_status_free(b->err);
  mlc_vec_free(&b->tensors);
  mlc_vec_free(&b->raxes);
  mlc_mem_free(b);
}

mlc_tir_module *mlc_te_module(mlc_te_builder *b) { return b->m; }

mlc_tir_expr *mlc_te_fail(mlc_te_builder *b, mlc_status st) {
  if (!b->err) b->err = st;
  else mlc_status_free(st);
  return NULL;
}

/* The sticky error (transferred out), or out-of-memory when |ok| is 0. */
static mlc_status take_error(mlc_te_builder *b, int ok) {
  mlc_status st = b->err;
  b->err = NULL;
  if (!st && (!ok || mlc_tir_module_oom(b->m))) st = mlc_oom();
  return st;
}

void mlc_te_unique_names(mlc_te_builder *b) { b->unique = 1; }

/* |name|, or with mlc_te_unique_names |name|_1, |name|_2, ... when a
** tensor of |b| has it already.  Arena memory. */
static const char *unique_name(mlc_te_builder *b, const char *name) {
  char buf[256];
  if (!b->unique) return mlc_arena_strdup(b->m->arena, name);
  snprintf(buf, sizeof buf, "%s", name);
  for (int k = 1;; k++) {
    int taken = 0;
    for (size_t i = 0; i < b->tensors.len && !taken; i++) taken = strcmp(b->tensors.data[i]->name, buf) == 0;
    if (!taken) break;
    snprintf(buf, sizeof buf, "%s_%d", name, k);
  }
  return mlc_arena_strdup(b->m->arena, buf);
}

static mlc_status new_tensor(mlc_te_builder *b, const char *name, int rank, mlc_tir_expr *const *shape,
                             mlc_dtype dtype, mlc_te_tensor **out) {
  mlc_tir_module *m = b->m;
  mlc_te_tensor *t = MLC_ARENA_NEW(m->arena, mlc_te_tensor);
  if (!t) return mlc_oom();
  name = unique_name(b, name);
  if (!name) return mlc_oom();
  t->name = name;
  t->buffer = mlc_tir_buffer_new(m, name, dtype, rank, shape, MLC_TIR_SCOPE_GLOBAL);
  if (!t->name || !t->buffer) return mlc_oom();
  t->dtype = dtype;
  t->rank = rank;
  t->shape = t->buffer->shape;
  t->index = (int)b->tensors.len;
  if (mlc_vec_push(&b->tensors, t)) return mlc_oom();
  *out = t;
  return NULL;
}

mlc_status mlc_te_placeholder(mlc_te_builder *b, const char *name, int rank, mlc_tir_expr *const *shape,
                              mlc_dtype dtype, mlc_te_tensor **out) {
  *out = NULL;
  for (int i = 0; i < rank; i++)
    if (!shape[i]) return take_error(b, 0);
  if (rank < 0 || rank > 16)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "te: placeholder %s: rank %d out of range", name, rank);
  return new_tensor(b, name, rank, shape, dtype, out);
}

mlc_tir_expr *mlc_te_load(mlc_te_builder *b, mlc_te_tensor *t, int n, mlc_tir_expr *const *idx) {
  if (!t) return NULL;
  if (n != t->rank)
    return mlc_te_fail(b, mlc_make_status(MLC_INVALID_ARGUMENT, "te: %s[...] with %d indices, its rank is %d",
                                          t->name, n, t->rank));
  return mlc_tir_load(b->m, t->buffer, n, idx);
}

mlc_tir_expr *mlc_te_reduce_axis(mlc_te_builder *b, mlc_tir_expr *extent, const char *name) {
  if (!extent) return NULL;
  mlc_tir_var *v = mlc_tir_var_new(b->m, name ? name : "k", MLC_DTYPE_I64);
  if (!v) return NULL;
  raxis r = {v, extent};
  if (mlc_vec_push(&b->raxes, r)) return NULL;
  return mlc_tir_ref(b->m, v);
}

static mlc_tir_expr *reduce(mlc_te_builder *b, mlc_tir_reduce_op op, mlc_tir_expr *e,
                            mlc_tir_expr *const *axes, int n) {
  mlc_tir_iter_var it[16];
  if (!e) return NULL;
  if (n < 1 || n > 16)
    return mlc_te_fail(b, mlc_make_status(MLC_INVALID_ARGUMENT, "te: %s over %d axes (1 to 16 allowed)",
                                          mlc_tir_reduce_op_name(op), n));
  for (int i = 0; i < n; i++) {
    const raxis *r = NULL;
    if (axes[i] && axes[i]->kind == MLC_TIR_VAR_REF)
      for (size_t j = 0; j < b->raxes.len; j++)
        if (b->raxes.data[j].var == axes[i]->var) r = &b->raxes.data[j];
    if (!r)
      return mlc_te_fail(b, mlc_make_status(MLC_INVALID_ARGUMENT,
                                            "te: %s: axis %d is not a reduce axis of this builder",
                                            mlc_tir_reduce_op_name(op), i));
    it[i].var = r->var;
    it[i].kind = MLC_TIR_ITER_REDUCE;
    it[i].min = mlc_tir_i64(b->m, 0);
    it[i].extent = r->extent;
    it[i].binding = NULL;
  }
  return mlc_tir_reduce(b->m, op, e, n, it);
}

mlc_tir_expr *mlc_te_sum(mlc_te_builder *b, mlc_tir_expr *e, mlc_tir_expr *const *axes, int n) {
  return reduce(b, MLC_TIR_REDUCE_SUM, e, axes, n);
}
mlc_tir_expr *mlc_te_max(mlc_te_builder *b, mlc_tir_expr *e, mlc_tir_expr *const *axes, int n) {
  return reduce(b, MLC_TIR_REDUCE_MAX, e, axes, n);
}
mlc_tir_expr *mlc_te_min(mlc_te_builder *b, mlc_tir_expr *e, mlc_tir_expr *const *axes, int n) {
  return reduce(b, MLC_TIR_REDUCE_MIN, e, axes, n);
}
mlc_tir_expr *mlc_te_prod(mlc_te_builder *b, mlc_tir_expr *e, mlc_tir_expr *const *axes, int n) {
  return reduce(b, MLC_TIR_REDUCE_PROD, e, axes, n);
}

static int nested_reduce_pre(void *ctx, const mlc_tir_expr *e) {
  return (e != ctx && e->kind == MLC_TIR_REDUCE) ? MLC_TIR_VISIT_STOP : MLC_TIR_VISIT_CONTINUE;
}

/* Nonzero if |e| holds a reduction below its root. */
static int nested_reduce(const mlc_tir_expr *e) {
  mlc_tir_visitor v = {0};
  v.ctx = (void *)e; /* compared, never written */
  v.pre_expr = nested_reduce_pre;
  return mlc_tir_visit_expr(&v, e);
}

mlc_status mlc_te_compute(mlc_te_builder *b, const char *name, int rank, mlc_tir_expr *const *shape,
                          const char *const *axis_names, mlc_te_body_fn fn, void *user,
                          mlc_te_tensor **out) {
  mlc_tir_module *m = b->m;
  *out = NULL;
  if (rank < 0 || rank > 16)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "te: compute %s: rank %d out of range", name, rank);
  for (int i = 0; i < rank; i++)
    if (!shape[i]) return take_error(b, 0);
  mlc_tir_var *axes[16];
  mlc_tir_expr *idx[16];
  for (int i = 0; i < rank; i++) {
    char def[16];
    snprintf(def, sizeof def, "i%d", i);
    axes[i] = mlc_tir_var_new(m, axis_names && axis_names[i] ? axis_names[i] : def, MLC_DTYPE_I64);
    idx[i] = mlc_tir_ref(m, axes[i]);
    if (!idx[i]) return mlc_oom();
  }
  mlc_tir_expr *body = fn(b, idx, user);
  if (!body || b->err) return mlc_status_annotate(take_error(b, body != NULL), "te: compute %s", name);
  if (nested_reduce(body))
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "te: compute %s: a reduction must be the whole body of a compute", name);
  mlc_te_tensor *t;
  MLC_RETURN_IF_ERROR(new_tensor(b, name, rank, shape, body->dtype, &t));
  t->is_compute = 1;
  t->naxes = rank;
  t->axes = rank ? MLC_ARENA_ARRAY(m->arena, (size_t)rank, mlc_tir_var *) : NULL;
  if (rank && !t->axes) return mlc_oom();
  for (int i = 0; i < rank; i++) t->axes[i] = axes[i];
  t->body = body;
  *out = t;
  return NULL;
}

mlc_status mlc_te_check(mlc_te_builder *b, const char *name, int rank, mlc_tir_expr *const *shape,
                        mlc_te_check_fn fn, void *user) {
  mlc_tir_module *m = b->m;
  if (rank < 0 || rank > 16)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "te: check %s: rank %d out of range", name, rank);
  for (int i = 0; i < rank; i++)
    if (!shape[i]) return take_error(b, 0);
  mlc_te_tensor *t = MLC_ARENA_NEW(m->arena, mlc_te_tensor);
  if (!t) return mlc_oom();
  t->name = unique_name(b, name);
  t->shape = rank ? MLC_ARENA_ARRAY(m->arena, (size_t)rank, mlc_tir_expr *) : NULL;
  t->axes = rank ? MLC_ARENA_ARRAY(m->arena, (size_t)rank, mlc_tir_var *) : NULL;
  if (!t->name || (rank && (!t->shape || !t->axes))) return mlc_oom();
  mlc_tir_expr *idx[16];
  for (int i = 0; i < rank; i++) {
    char def[16];
    snprintf(def, sizeof def, "i%d", i);
    t->shape[i] = shape[i];
    t->axes[i] = mlc_tir_var_new(m, def, MLC_DTYPE_I64);
    idx[i] = mlc_tir_ref(m, t->axes[i]);
    if (!idx[i]) return mlc_oom();
  }
  t->check = fn(b, idx, user);
  if (!t->check || b->err) return mlc_status_annotate(take_error(b, t->check != NULL), "te: check %s", name);
  t->dtype = MLC_DTYPE_BOOL;
  t->rank = rank;
  t->naxes = rank;
  t->is_compute = 1;
  t->index = (int)b->tensors.len;
  return mlc_vec_push(&b->tensors, t) ? mlc_oom() : NULL;
}

/* ---- create_prim_func --------------------------------------------------------- */

static mlc_te_tensor *tensor_of(mlc_te_builder *b, const mlc_tir_buffer *buf) {
  for (size_t i = 0; i < b->tensors.len; i++)
    if (b->tensors.data[i]->buffer == buf) return b->tensors.data[i];
  return NULL;
}

static void mark_reads(mlc_te_builder *b, const mlc_tir_expr *e, const mlc_tir_stmt *s, char *reach);

static void mark_tensor(mlc_te_builder *b, mlc_te_tensor *t, char *reach) {
  if (!t || reach[t->index]) return;
  reach[t->index] = 1;
  if (t->check) mark_reads(b, NULL, t->check, reach);
  else if (t->is_compute) mark_reads(b, t->body, NULL, reach);
}

typedef struct reads_ctx {
  mlc_te_builder *b;
  char *reach;
} reads_ctx;

static int mark_reads_pre(void *ctx, const mlc_tir_expr *e) {
  reads_ctx *c = ctx;
  if (e->kind == MLC_TIR_LOAD) mark_tensor(c->b, tensor_of(c->b, e->load.buffer), c->reach);
  return MLC_TIR_VISIT_CONTINUE;
}

/* Marks the tensors expression |e| or statement |s| (the asserts of a check
** stage) read, and, recursively, what they read. */
static void mark_reads(mlc_te_builder *b, const mlc_tir_expr *e, const mlc_tir_stmt *s, char *reach) {
  reads_ctx c = {b, reach};
  mlc_tir_visitor v = {0};
  v.ctx = &c;
  v.pre_expr = mark_reads_pre;
  mlc_tir_visit_expr(&v, e);
  mlc_tir_visit_stmt(&v, s);
}

typedef struct fv_ctx {
  var_vec *bound, *out;
  int oom;
} fv_ctx;

static int free_vars_pre(void *ctx, const mlc_tir_expr *e);

static const mlc_tir_visitor *fv_visitor(fv_ctx *c, mlc_tir_visitor *v) {
  memset(v, 0, sizeof *v);
  v->ctx = c;
  v->pre_expr = free_vars_pre;
  return v;
}

static int free_vars_pre(void *ctx, const mlc_tir_expr *e) {
  fv_ctx *c = ctx;
  if (e->kind == MLC_TIR_VAR_REF) {
    for (size_t i = 0; i < c->bound->len; i++)
      if (c->bound->data[i] == e->var) return MLC_TIR_VISIT_CONTINUE;
    for (size_t i = 0; i < c->out->len; i++)
      if (c->out->data[i] == e->var) return MLC_TIR_VISIT_CONTINUE;
    c->oom |= mlc_vec_push(c->out, e->var) != 0;
  } else if (e->kind == MLC_TIR_REDUCE) {
    /* the axes' domains see the outer scope, the source sees the axes too */
    mlc_tir_visitor v;
    size_t mark = c->bound->len;
    for (int i = 0; i < e->reduce.naxes; i++) {
      mlc_tir_visit_expr(fv_visitor(c, &v), e->reduce.axes[i].min);
      mlc_tir_visit_expr(fv_visitor(c, &v), e->reduce.axes[i].extent);
    }
    for (int i = 0; i < e->reduce.naxes; i++) c->oom |= mlc_vec_push(c->bound, e->reduce.axes[i].var) != 0;
    mlc_tir_visit_expr(fv_visitor(c, &v), e->reduce.source);
    c->bound->len = mark;
    return MLC_TIR_VISIT_SKIP;
  }
  return MLC_TIR_VISIT_CONTINUE;
}

/* Adds the variables expression |e| or statement |s| (the asserts of a
** check stage) use, other than those in |bound|, to |out|.  Nonzero on
** out-of-memory. */
static int free_vars(const mlc_tir_expr *e, const mlc_tir_stmt *s, var_vec *bound, var_vec *out) {
  fv_ctx c = {bound, out, 0};
  mlc_tir_visitor v;
  mlc_tir_visit_expr(fv_visitor(&c, &v), e);
  mlc_tir_visit_stmt(fv_visitor(&c, &v), s);
  return c.oom;
}

/* The loop nest and block running check stage |t|. */
static mlc_tir_stmt *lower_check(mlc_tir_module *m, const mlc_te_tensor *t) {
  int n = t->naxes;
  mlc_tir_var *loopv[16];
  mlc_tir_expr *to[16];
  mlc_tir_iter_var it[16];
  char name[256];
  for (int i = 0; i < n; i++) {
    loopv[i] = mlc_tir_var_new(m, t->axes[i]->name, MLC_DTYPE_I64);
    snprintf(name, sizeof name, "v%s", t->axes[i]->name);
    it[i].var = mlc_tir_var_new(m, name, MLC_DTYPE_I64);
    it[i].kind = MLC_TIR_ITER_SPATIAL;
    it[i].min = mlc_tir_i64(m, 0);
    it[i].extent = t->shape[i];
    it[i].binding = mlc_tir_ref(m, loopv[i]);
    to[i] = mlc_tir_ref(m, it[i].var);
    if (!to[i] || !it[i].binding || !it[i].min) return NULL;
  }
  mlc_tir_subst sub = {n, t->axes, to, 0, NULL, NULL, 0};
  mlc_tir_stmt *s = mlc_tir_block(m, t->name, n, it, NULL, mlc_tir_stmt_copy(m, t->check, &sub));
  for (int i = n; i-- > 0;)
    s = mlc_tir_for(m, loopv[i], mlc_tir_i64(m, 0), mlc_tir_expr_copy(m, t->shape[i], NULL), MLC_TIR_FOR_SERIAL,
                    NULL, s);
  return s;
}

/* The loop nest and block computing stage |t|. */
static mlc_tir_stmt *lower_stage(mlc_tir_module *m, const mlc_te_tensor *t) {
  const mlc_tir_expr *body = t->body;
  int nsp = t->naxes;
  int nred = body->kind == MLC_TIR_REDUCE ? body->reduce.naxes : 0;
  int n = nsp + nred;
  mlc_tir_var *loopv[32], *from[32];
  mlc_tir_expr *to[32], *idx[16];
  mlc_tir_iter_var it[32];
  char name[256];
  for (int i = 0; i < n; i++) {
    const mlc_tir_var *orig = i < nsp ? t->axes[i] : body->reduce.axes[i - nsp].var;
    from[i] = (mlc_tir_var *)orig;
    loopv[i] = mlc_tir_var_new(m, orig->name, MLC_DTYPE_I64);
    snprintf(name, sizeof name, "v%s", orig->name);
    it[i].var = mlc_tir_var_new(m, name, MLC_DTYPE_I64);
    it[i].kind = i < nsp ? MLC_TIR_ITER_SPATIAL : MLC_TIR_ITER_REDUCE;
    it[i].min = i < nsp ? mlc_tir_i64(m, 0) : body->reduce.axes[i - nsp].min;
    it[i].extent = i < nsp ? t->shape[i] : body->reduce.axes[i - nsp].extent;
    it[i].binding = mlc_tir_ref(m, loopv[i]);
    to[i] = mlc_tir_ref(m, it[i].var);
    if (!to[i] || !it[i].binding || !it[i].min) return NULL;
  }
  /* iteration domains may use outer stage axes (not in te's usual forms,
  ** but keep them consistent): substitute axis vars by iter vars */
  mlc_tir_subst sub = {n, from, to, 0, NULL, NULL, 0};
  for (int i = 0; i < n; i++) {
    it[i].min = mlc_tir_expr_copy(m, it[i].min, &sub);
    it[i].extent = mlc_tir_expr_copy(m, it[i].extent, &sub);
  }
  for (int i = 0; i < nsp; i++) idx[i] = to[i];
  mlc_tir_stmt *init = NULL, *store;
  if (nred) {
    mlc_tir_reduce_op op = body->reduce.op;
    mlc_tir_expr *src = mlc_tir_expr_copy(m, body->reduce.source, &sub);
    mlc_tir_expr *cur = mlc_tir_load(m, t->buffer, nsp, idx);
    mlc_tir_expr *val = NULL;
    switch (op) {
      case MLC_TIR_REDUCE_SUM: val = mlc_tir_add(m, cur, src); break;
      case MLC_TIR_REDUCE_PROD: val = mlc_tir_mul(m, cur, src); break;
      case MLC_TIR_REDUCE_MIN: val = mlc_tir_min(m, cur, src); break;
      case MLC_TIR_REDUCE_MAX: val = mlc_tir_max(m, cur, src); break;
    }
    init = mlc_tir_store(m, t->buffer, nsp, idx, mlc_tir_reduce_identity(m, op, t->dtype));
    store = mlc_tir_store(m, t->buffer, nsp, idx, val);
    if (!init) return NULL;
  } else {
    store = mlc_tir_store(m, t->buffer, nsp, idx, mlc_tir_expr_copy(m, body, &sub));
  }
  mlc_tir_stmt *s = mlc_tir_block(m, t->name, n, it, init, store);
  for (int i = n; i-- > 0;) {
    mlc_tir_expr *mn = i < nsp ? mlc_tir_i64(m, 0) : mlc_tir_expr_copy(m, body->reduce.axes[i - nsp].min, NULL);
    mlc_tir_expr *ext = mlc_tir_expr_copy(m, i < nsp ? t->shape[i] : body->reduce.axes[i - nsp].extent, NULL);
    /* loop bounds may use the outer loops' variables where domains do */
    mlc_tir_expr *lto[32];
    for (int j = 0; j < n; j++) lto[j] = mlc_tir_ref(m, loopv[j]);
    mlc_tir_subst lsub = {n, from, lto, 0, NULL, NULL, 0};
    mn = mlc_tir_expr_copy(m, mn, &lsub);
    ext = mlc_tir_expr_copy(m, ext, &lsub);
    s = mlc_tir_for(m, loopv[i], mn, ext, MLC_TIR_FOR_SERIAL, NULL, s);
  }
  return s;
}

mlc_status mlc_te_create_prim_func(mlc_te_builder *b, const char *name, int nout,
                                   mlc_te_tensor *const *outputs, int nin, mlc_te_tensor *const *inputs,
                                   mlc_tir_func **out) {
  mlc_tir_module *m = b->m;
  *out = NULL;
  if (b->err) return mlc_status_annotate(take_error(b, 1), "te: prim func %s", name);
  size_t nt = b->tensors.len;
  char *reach = mlc_mem_calloc(nt ? nt : 1, 1);
  char *role = mlc_mem_calloc(nt ? nt : 1, 1); /* 1 input, 2 output */
  var_vec bound = {0}, fv = {0};
  mlc_tir_buffer **params = mlc_mem_calloc((size_t)(nin + nout) + 1, sizeof *params);
  mlc_tir_stmt **stages = mlc_mem_calloc(nt ? nt : 1, sizeof *stages);
  mlc_status st = NULL;
  if (!reach || !role || !params || !stages) {
    st = mlc_oom();
    goto done;
  }
  for (int i = 0; i < nin + nout; i++) {
    mlc_te_tensor *t = i < nin ? inputs[i] : outputs[i - nin];
    if (!t || t->index >= (int)nt || b->tensors.data[t->index] != t) {
      st = mlc_make_status(MLC_INVALID_ARGUMENT, "te: prim func %s: %s %d is not a tensor of this builder",
                           name, i < nin ? "input" : "output", i < nin ? i : i - nin);
      goto done;
    }
    if (role[t->index]) {
      st = mlc_make_status(MLC_INVALID_ARGUMENT, "te: prim func %s: tensor %s is listed twice", name, t->name);
      goto done;
    }
    role[t->index] = i < nin ? 1 : 2;
    if (t->check) {
      st = mlc_make_status(MLC_INVALID_ARGUMENT, "te: prim func %s: %s is a check stage, not a tensor", name,
                           t->name);
      goto done;
    }
    if (i >= nin && !t->is_compute) {
      st = mlc_make_status(MLC_INVALID_ARGUMENT, "te: prim func %s: output %s is a placeholder", name, t->name);
      goto done;
    }
    params[i] = t->buffer;
    if (i >= nin) mark_tensor(b, t, reach);
  }
  for (size_t i = 0; i < nt; i++) /* every check stage runs */
    if (b->tensors.data[i]->check) mark_tensor(b, b->tensors.data[i], reach);
  for (size_t i = 0; i < nt; i++) {
    mlc_te_tensor *t = b->tensors.data[i];
    if (reach[i] && !t->is_compute && role[i] != 1) {
      st = mlc_make_status(MLC_INVALID_ARGUMENT, "te: prim func %s: placeholder %s is read but is not an input",
                           name, t->name);
      goto done;
    }
    if (reach[i] && t->is_compute && role[i] == 1) {
      st = mlc_make_status(MLC_INVALID_ARGUMENT, "te: prim func %s: input %s is computed here", name, t->name);
      goto done;
    }
  }
  /* scalar parameters: the first parameter dimension that is exactly the var */
  mlc_tir_func *f;
  {
    MLC_VEC(mlc_tir_scalar_param) sc = {0};
    for (int i = 0; i < nin + nout && !st; i++)
      for (int d = 0; d < params[i]->rank; d++) {
        mlc_tir_expr *e = params[i]->shape[d];
        if (e->kind != MLC_TIR_VAR_REF) continue;
        int seen = 0;
        for (size_t k = 0; k < sc.len; k++) seen |= sc.data[k].var == e->var;
        mlc_tir_scalar_param p = {e->var, i, d};
        if (!seen && (mlc_vec_push(&sc, p) || mlc_vec_push(&bound, e->var))) st = mlc_oom();
      }
    /* every other variable must be one of them */
    for (int i = 0; i < nin + nout && !st; i++)
      for (int d = 0; d < params[i]->rank; d++)
        if (free_vars(params[i]->shape[d], NULL, &bound, &fv)) st = mlc_oom();
    for (size_t i = 0; i < nt && !st; i++) {
      mlc_te_tensor *t = b->tensors.data[i];
      if (!reach[i] || !t->is_compute) continue;
      size_t mark = bound.len;
      for (int a = 0; a < t->naxes; a++)
        if (mlc_vec_push(&bound, t->axes[a])) st = mlc_oom();
      for (int d = 0; d < t->rank; d++)
        if (free_vars(t->shape[d], NULL, &bound, &fv)) st = mlc_oom();
      if (t->check ? free_vars(NULL, t->check, &bound, &fv) : free_vars(t->body, NULL, &bound, &fv)) st = mlc_oom();
      bound.len = mark;
    }
    if (!st && fv.len)
      st = mlc_make_status(MLC_INVALID_ARGUMENT,
                           "te: prim func %s: variable %s is not a dimension of any parameter (cannot bind it)",
                           name, fv.data[0]->name);
    /* stages in creation order, intermediates allocated around them */
    int ns = 0;
    for (size_t i = 0; i < nt && !st; i++) {
      mlc_te_tensor *t = b->tensors.data[i];
      if (!reach[i] || !t->is_compute) continue;
      stages[ns] = t->check ? lower_check(m, t) : lower_stage(m, t);
      if (!stages[ns++]) st = mlc_oom();
    }
    mlc_tir_stmt *body = st ? NULL : mlc_tir_seq(m, ns, stages);
    for (size_t i = nt; i-- > 0 && body;) {
      mlc_te_tensor *t = b->tensors.data[i];
      if (!reach[i] || !t->is_compute || t->check || role[i] == 2) continue;
      t->buffer->scope = t->scope;
      body = mlc_tir_allocate(m, t->buffer, body);
    }
    f = st ? NULL : mlc_tir_func_new(m, name, nin + nout, params, body);
    if (!st && !f) st = mlc_oom();
    for (size_t k = 0; k < sc.len && !st; k++)
      st = mlc_tir_func_add_scalar(m, f, sc.data[k].var, sc.data[k].param, sc.data[k].dim);
    mlc_vec_free(&sc);
  }
  if (!st) st = mlc_tir_func_set_attr_str(m, f, "global_symbol", name);
  if (!st) st = mlc_tir_func_set_attr_bool(m, f, "tir.noalias", 1);
  if (!st) *out = f;
done:
  mlc_mem_free(reach);
  mlc_mem_free(role);
  mlc_mem_free(params);
  mlc_mem_free(stages);
  mlc_vec_free(&bound);
  mlc_vec_free(&fv);
  return st;
}
