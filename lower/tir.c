/*
** tir.c: TensorIR modules, builders (with integer constant folding), and
** the deep copy with substitution that schedules and the te builder use.
*/
#include "lower/tir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/vec.h"
#include "lower/tir_visit.h"

/* ---- names -------------------------------------------------------------- */

static const char *const binop_names[MLC_TIR_BINOP_COUNT] = {
#define X(e, s, c) s,
    MLC_TIR_BINOPS(X)
#undef X
};
static const char binop_is_cmp[MLC_TIR_BINOP_COUNT] = {
#define X(e, s, c) c,
    MLC_TIR_BINOPS(X)
#undef X
};
static const char *const intrin_names[MLC_TIR_INTRIN_COUNT] = {
#define X(e, s, n) s,
    MLC_TIR_INTRINS(X)
#undef X
};
static const int intrin_nargs[MLC_TIR_INTRIN_COUNT] = {
#define X(e, s, n) n,
    MLC_TIR_INTRINS(X)
#undef X
};

const char *mlc_tir_dtype_str(mlc_dtype dtype, int lanes, char *buf, size_t size) {
  if (size == 0) return buf;
  if (lanes == 1) snprintf(buf, size, "%s", mlc_dtype_name(dtype));
  else snprintf(buf, size, "%sx%d", mlc_dtype_name(dtype), lanes);
  return buf;
}

const char *mlc_tir_binop_name(mlc_tir_binop op) {
  return (unsigned)op < MLC_TIR_BINOP_COUNT ? binop_names[op] : "?";
}
const char *mlc_tir_intrin_name(mlc_tir_intrin op) {
  return (unsigned)op < MLC_TIR_INTRIN_COUNT ? intrin_names[op] : "?";
}
int mlc_tir_intrin_nargs(mlc_tir_intrin op) {
  return (unsigned)op < MLC_TIR_INTRIN_COUNT ? intrin_nargs[op] : 0;
}
const char *mlc_tir_for_kind_name(mlc_tir_for_kind k) {
  switch (k) {
    case MLC_TIR_FOR_SERIAL: return "serial";
    case MLC_TIR_FOR_PARALLEL: return "parallel";
    case MLC_TIR_FOR_VECTORIZED: return "vectorized";
    case MLC_TIR_FOR_UNROLLED: return "unroll";
    case MLC_TIR_FOR_THREAD_BINDING: return "thread_binding";
  }
  return "?";
}
const char *mlc_tir_reduce_op_name(mlc_tir_reduce_op op) {
  switch (op) {
    case MLC_TIR_REDUCE_SUM: return "sum";
    case MLC_TIR_REDUCE_PROD: return "prod";
    case MLC_TIR_REDUCE_MIN: return "min";
    case MLC_TIR_REDUCE_MAX: return "max";
  }
  return "?";
}

/* ---- module --------------------------------------------------------------- */

mlc_status mlc_tir_module_create(mlc_allocator a, mlc_tir_module **out) {
  *out = NULL;
  mlc_arena *ar = mlc_arena_create(a);
  if (!ar) return mlc_oom();
  mlc_tir_module *m = MLC_ARENA_NEW(ar, mlc_tir_module);
  if (!m) {
    mlc_arena_destroy(ar);
    return mlc_oom();
  }
  m->arena = ar;
  *out = m;
  return NULL;
}

void mlc_tir_module_destroy(mlc_tir_module *m) {
  if (!m) return;
  mlc_hash_fini(&m->by_name);
  mlc_arena_destroy(m->arena);
}

int mlc_tir_module_oom(const mlc_tir_module *m) { return mlc_arena_oom(m->arena); }

mlc_tir_func *mlc_tir_module_find(const mlc_tir_module *m, const char *name) {
  /* by_name may outlive a function dropped from the end of funcs: check */
  int i = (int)(intptr_t)mlc_hash_get(&m->by_name, name) - 1;
  if (i >= 0 && i < m->nfuncs && strcmp(m->funcs[i]->name, name) == 0) return m->funcs[i];
  return NULL;
}

mlc_status mlc_tir_module_add(mlc_tir_module *m, mlc_tir_func *f) {
  if (!f) return mlc_make_status(MLC_RESOURCE_EXHAUSTED, "TIR module: out of memory building a prim func");
  if (mlc_tir_module_find(m, f->name))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "TIR module: duplicate prim func \"%s\"", f->name);
  if (m->nfuncs == m->cap_funcs) {
    int cap = m->cap_funcs ? 2 * m->cap_funcs : 8;
    mlc_tir_func **nf = MLC_ARENA_ARRAY(m->arena, (size_t)cap, mlc_tir_func *);
    if (!nf) return mlc_oom();
    if (m->nfuncs) memcpy(nf, m->funcs, sizeof *nf * (size_t)m->nfuncs);
    m->funcs = nf;
    m->cap_funcs = cap;
  }
  if (mlc_hash_put(&m->by_name, f->name, (void *)(intptr_t)(m->nfuncs + 1))) return mlc_oom();
  m->funcs[m->nfuncs++] = f;
  return NULL;
}

mlc_status mlc_tir_module_replace(mlc_tir_module *m, const mlc_tir_func *old, mlc_tir_func *repl) {
  if (!repl) return mlc_make_status(MLC_RESOURCE_EXHAUSTED, "TIR module: out of memory building a prim func");
  for (int i = 0; i < m->nfuncs; i++)
    if (m->funcs[i] == old) {
      if (strcmp(old->name, repl->name) != 0) {
        if (mlc_tir_module_find(m, repl->name))
          return mlc_make_status(MLC_INVALID_ARGUMENT, "TIR module: duplicate prim func \"%s\"", repl->name);
        if (mlc_hash_put(&m->by_name, repl->name, (void *)(intptr_t)(i + 1))) return mlc_oom();
      }
      m->funcs[i] = repl;
      return NULL;
    }
  return mlc_make_status(MLC_NOT_FOUND, "TIR module: no prim func \"%s\" to replace", old->name);
}

/* ---- helpers ------------------------------------------------------------ */

static void *dup_array(mlc_tir_module *m, const void *p, size_t n, size_t size) {
  if (n == 0) return NULL;
  void *d = mlc_arena_array(m->arena, n, size);
  if (d && p) memcpy(d, p, n * size);
  return d;
}

static int all_nonnull(int n, mlc_tir_expr *const *e) {
  for (int i = 0; i < n; i++)
    if (!e[i]) return 0;
  return 1;
}

static mlc_tir_expr *new_expr(mlc_tir_module *m, mlc_tir_expr_kind k, mlc_dtype t) {
  mlc_tir_expr *e = MLC_ARENA_NEW(m->arena, mlc_tir_expr);
  if (e) {
    e->kind = k;
    e->dtype = t;
    e->lanes = 1;
  }
  return e;
}

static mlc_tir_stmt *new_stmt(mlc_tir_module *m, mlc_tir_stmt_kind k) {
  mlc_tir_stmt *s = MLC_ARENA_NEW(m->arena, mlc_tir_stmt);
  if (s) s->kind = k;
  return s;
}

/* |v| reduced to the width of integer |t| (sign- or zero-extended back). */
static int64_t wrap(mlc_dtype t, int64_t v) {
  switch (t) {
    case MLC_DTYPE_I8: return (int8_t)v;
    case MLC_DTYPE_I16: return (int16_t)v;
    case MLC_DTYPE_I32: return (int32_t)v;
    case MLC_DTYPE_U8: return (uint8_t)v;
    case MLC_DTYPE_U16: return (uint16_t)v;
    case MLC_DTYPE_U32: return (uint32_t)v;
    case MLC_DTYPE_BOOL: return v != 0;
    default: return v;
  }
}

static int is_intlike(mlc_dtype t) { return mlc_dtype_is_int(t) || t == MLC_DTYPE_BOOL; }

static int max_lanes(int a, int b) { return a > b ? a : b; }

int mlc_tir_is_const(const mlc_tir_expr *e, int64_t v) {
  return e && e->kind == MLC_TIR_INT_IMM && e->int_value == v;
}

int64_t mlc_tir_known_multiple(const mlc_tir_expr *e) {
  const int64_t top = (int64_t)1 << 20;
  if (!e) return 1;
  if (e->kind == MLC_TIR_INT_IMM) {
    int64_t v = e->int_value < 0 ? -e->int_value : e->int_value, m = 1;
    if (v == 0) return top;
    while (m < top && v % (m * 2) == 0) m *= 2;
    return m;
  }
  if (e->kind != MLC_TIR_BINARY) return 1;
  int64_t a = mlc_tir_known_multiple(e->bin.a), b = mlc_tir_known_multiple(e->bin.b);
  switch (e->bin.op) {
    case MLC_TIR_ADD:
    case MLC_TIR_SUB:
    case MLC_TIR_FLOORMOD: return a < b ? a : b; /* x mod c: x - c * q */
    case MLC_TIR_MUL: return a > top / b ? top : a * b;
    default: return 1;
  }
}

/* ---- variables and buffers ------------------------------------------------ */

mlc_tir_var *mlc_tir_var_new(mlc_tir_module *m, const char *name, mlc_dtype dtype) {
  mlc_tir_var *v = MLC_ARENA_NEW(m->arena, mlc_tir_var);
  if (!v) return NULL;
  v->name = mlc_arena_strdup(m->arena, name ? name : "v");
  if (!v->name) return NULL;
  v->dtype = dtype;
  v->id = m->num_vars++;
  return v;
}

mlc_tir_buffer *mlc_tir_buffer_new(mlc_tir_module *m, const char *name, mlc_dtype dtype, int rank,
                                   mlc_tir_expr *const *shape, mlc_tir_scope scope) {
  if (rank < 0 || (rank > 0 && (!shape || !all_nonnull(rank, shape)))) return NULL;
  mlc_tir_buffer *b = MLC_ARENA_NEW(m->arena, mlc_tir_buffer);
  if (!b) return NULL;
  b->name = mlc_arena_strdup(m->arena, name ? name : "buf");
  b->shape = dup_array(m, shape, (size_t)rank, sizeof *shape);
  if (!b->name || (rank && !b->shape)) return NULL;
  b->dtype = dtype;
  b->rank = rank;
  b->scope = scope;
  b->id = m->num_buffers++;
  return b;
}

mlc_tir_buffer *mlc_tir_buffer_new_c(mlc_tir_module *m, const char *name, mlc_dtype dtype,
                                     int rank, const int64_t *dims, mlc_tir_scope scope) {
  mlc_tir_expr *shape[16];
  if (rank < 0 || rank > 16) return NULL;
  for (int i = 0; i < rank; i++) shape[i] = mlc_tir_i64(m, dims[i]);
  return mlc_tir_buffer_new(m, name, dtype, rank, shape, scope);
}

mlc_tir_buffer *mlc_tir_buffer_view(mlc_tir_module *m, mlc_tir_buffer *base, int rank,
                                    mlc_tir_expr *const *shape) {
  if (!base) return NULL;
  mlc_tir_buffer *b = mlc_tir_buffer_new(m, base->name, base->dtype, rank, shape, base->scope);
  if (b) b->view_of = base;
  return b;
}

/* ---- expressions ---------------------------------------------------------- */

mlc_tir_expr *mlc_tir_int(mlc_tir_module *m, mlc_dtype dtype, int64_t v) {
  mlc_tir_expr *e = new_expr(m, MLC_TIR_INT_IMM, dtype);
  if (e) e->int_value = wrap(dtype, v);
  return e;
}

mlc_tir_expr *mlc_tir_i64(mlc_tir_module *m, int64_t v) { return mlc_tir_int(m, MLC_DTYPE_I64, v); }

mlc_tir_expr *mlc_tir_float(mlc_tir_module *m, mlc_dtype dtype, double v) {
  mlc_tir_expr *e = new_expr(m, MLC_TIR_FLOAT_IMM, dtype);
  if (e) e->float_value = v;
  return e;
}

mlc_tir_expr *mlc_tir_ref(mlc_tir_module *m, mlc_tir_var *v) {
  if (!v) return NULL;
  mlc_tir_expr *e = new_expr(m, MLC_TIR_VAR_REF, v->dtype);
  if (e) e->var = v;
  return e;
}

/* Integer division helpers with the IR's semantics (x / 0 == 0, no trap on
** INT_MIN / -1); the code generator emits the same. */
static int64_t s_floordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b, r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) q--;
  return q;
}
static int64_t s_floormod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
static int64_t s_truncdiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  return a / b;
}
static int64_t s_truncmod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  return a % b;
}

/* Folds |op| on two integer constants of dtype |t|; 0 when not folded. */
static int fold_int(mlc_tir_binop op, mlc_dtype t, int64_t a, int64_t b, int64_t *out) {
  int uns = !mlc_dtype_is_signed(t);
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (op) {
    case MLC_TIR_ADD: *out = (int64_t)(ua + ub); return 1;
    case MLC_TIR_SUB: *out = (int64_t)(ua - ub); return 1;
    case MLC_TIR_MUL: *out = (int64_t)(ua * ub); return 1;
    case MLC_TIR_DIV:
    case MLC_TIR_FLOORDIV:
      *out = uns ? (int64_t)(ub ? ua / ub : 0) : s_floordiv(a, b);
      return 1;
    case MLC_TIR_FLOORMOD:
      *out = uns ? (int64_t)(ub ? ua % ub : 0) : s_floormod(a, b);
      return 1;
    case MLC_TIR_TRUNCDIV:
      *out = uns ? (int64_t)(ub ? ua / ub : 0) : s_truncdiv(a, b);
      return 1;
    case MLC_TIR_TRUNCMOD:
      *out = uns ? (int64_t)(ub ? ua % ub : 0) : s_truncmod(a, b);
      return 1;
    case MLC_TIR_MIN: *out = (uns ? ua < ub : a < b) ? a : b; return 1;
    case MLC_TIR_MAX: *out = (uns ? ua > ub : a > b) ? a : b; return 1;
    case MLC_TIR_EQ: *out = a == b; return 1;
    case MLC_TIR_NE: *out = a != b; return 1;
    case MLC_TIR_LT: *out = uns ? ua < ub : a < b; return 1;
    case MLC_TIR_LE: *out = uns ? ua <= ub : a <= b; return 1;
    case MLC_TIR_GT: *out = uns ? ua > ub : a > b; return 1;
    case MLC_TIR_GE: *out = uns ? ua >= ub : a >= b; return 1;
    case MLC_TIR_AND: *out = (int64_t)(ua & ub); return 1;
    case MLC_TIR_OR: *out = (int64_t)(ua | ub); return 1;
    case MLC_TIR_BINOP_COUNT: break;
  }
  return 0;
}

mlc_tir_expr *mlc_tir_binary(mlc_tir_module *m, mlc_tir_binop op, mlc_tir_expr *a, mlc_tir_expr *b) {
  if (!a || !b || (unsigned)op >= MLC_TIR_BINOP_COUNT) return NULL;
  mlc_dtype t = a->dtype;
  if (op == MLC_TIR_DIV && is_intlike(t)) op = MLC_TIR_FLOORDIV;
  int cmp = binop_is_cmp[op];
  if (a->dtype == b->dtype && a->lanes == b->lanes && is_intlike(t)) {
    int64_t r;
    if (a->kind == MLC_TIR_INT_IMM && b->kind == MLC_TIR_INT_IMM &&
        fold_int(op, t, a->int_value, b->int_value, &r))
      return mlc_tir_int(m, cmp ? MLC_DTYPE_BOOL : t, r);
    switch (op) {
      case MLC_TIR_ADD:
        if (mlc_tir_is_const(b, 0)) return a;
        if (mlc_tir_is_const(a, 0)) return b;
        break;
      case MLC_TIR_SUB:
        if (mlc_tir_is_const(b, 0)) return a;
        break;
      case MLC_TIR_MUL:
        if (mlc_tir_is_const(b, 1)) return a;
        if (mlc_tir_is_const(a, 1)) return b;
        if (mlc_tir_is_const(a, 0)) return a;
        if (mlc_tir_is_const(b, 0)) return b;
        break;
      case MLC_TIR_FLOORDIV:
      case MLC_TIR_TRUNCDIV:
        if (mlc_tir_is_const(b, 1)) return a;
        break;
      case MLC_TIR_FLOORMOD:
      case MLC_TIR_TRUNCMOD:
        if (mlc_tir_is_const(b, 1)) return mlc_tir_int(m, t, 0);
        break;
      default: break;
    }
  }
  mlc_tir_expr *e = new_expr(m, MLC_TIR_BINARY, cmp ? MLC_DTYPE_BOOL : t);
  if (e) {
    e->lanes = max_lanes(a->lanes, b->lanes);
    e->bin.op = op;
    e->bin.a = a;
    e->bin.b = b;
  }
  return e;
}

mlc_tir_expr *mlc_tir_add(mlc_tir_module *m, mlc_tir_expr *a, mlc_tir_expr *b) {
  return mlc_tir_binary(m, MLC_TIR_ADD, a, b);
}
mlc_tir_expr *mlc_tir_sub(mlc_tir_module *m, mlc_tir_expr *a, mlc_tir_expr *b) {
  return mlc_tir_binary(m, MLC_TIR_SUB, a, b);
}
mlc_tir_expr *mlc_tir_mul(mlc_tir_module *m, mlc_tir_expr *a, mlc_tir_expr *b) {
  return mlc_tir_binary(m, MLC_TIR_MUL, a, b);
}
mlc_tir_expr *mlc_tir_min(mlc_tir_module *m, mlc_tir_expr *a, mlc_tir_expr *b) {
  return mlc_tir_binary(m, MLC_TIR_MIN, a, b);
}
mlc_tir_expr *mlc_tir_max(mlc_tir_module *m, mlc_tir_expr *a, mlc_tir_expr *b) {
  return mlc_tir_binary(m, MLC_TIR_MAX, a, b);
}

mlc_tir_expr *mlc_tir_not(mlc_tir_module *m, mlc_tir_expr *a) {
  if (!a) return NULL;
  if (a->kind == MLC_TIR_INT_IMM && is_intlike(a->dtype))
    return mlc_tir_int(m, a->dtype, a->dtype == MLC_DTYPE_BOOL ? !a->int_value : ~a->int_value);
  mlc_tir_expr *e = new_expr(m, MLC_TIR_NOT, a->dtype);
  if (e) {
    e->lanes = a->lanes;
    e->un.a = a;
  }
  return e;
}

mlc_tir_expr *mlc_tir_select(mlc_tir_module *m, mlc_tir_expr *c, mlc_tir_expr *t, mlc_tir_expr *f) {
  if (!c || !t || !f) return NULL;
  if (c->kind == MLC_TIR_INT_IMM && c->dtype == MLC_DTYPE_BOOL && t->dtype == f->dtype &&
      t->lanes == f->lanes)
    return c->int_value ? t : f;
  mlc_tir_expr *e = new_expr(m, MLC_TIR_SELECT, t->dtype);
  if (e) {
    e->lanes = max_lanes(c->lanes, max_lanes(t->lanes, f->lanes));
    e->select.c = c;
    e->select.t = t;
    e->select.f = f;
  }
  return e;
}

mlc_tir_expr *mlc_tir_cast(mlc_tir_module *m, mlc_dtype dtype, mlc_tir_expr *a) {
  if (!a) return NULL;
  if (a->dtype == dtype) return a;
  if (a->kind == MLC_TIR_INT_IMM && is_intlike(a->dtype)) {
    int64_t v = a->int_value;
    if (is_intlike(dtype)) return mlc_tir_int(m, dtype, v);
    if (dtype == MLC_DTYPE_F32 || dtype == MLC_DTYPE_F64) {
      double d = mlc_dtype_is_signed(a->dtype) ? (double)v : (double)(uint64_t)v;
      if (dtype == MLC_DTYPE_F32) d = (double)(float)d;
      return mlc_tir_float(m, dtype, d);
    }
  }
  mlc_tir_expr *e = new_expr(m, MLC_TIR_CAST, dtype);
  if (e) {
    e->lanes = a->lanes;
    e->un.a = a;
  }
  return e;
}

mlc_tir_expr *mlc_tir_load(mlc_tir_module *m, mlc_tir_buffer *buffer, int n,
                           mlc_tir_expr *const *indices) {
  if (!buffer || n < 0 || (n > 0 && !all_nonnull(n, indices))) return NULL;
  mlc_tir_expr *e = new_expr(m, MLC_TIR_LOAD, buffer->dtype);
  if (!e) return NULL;
  for (int i = 0; i < n; i++) e->lanes = max_lanes(e->lanes, indices[i]->lanes);
  e->load.buffer = buffer;
  e->load.n = n;
  e->load.indices = dup_array(m, indices, (size_t)n, sizeof *indices);
  return (n && !e->load.indices) ? NULL : e;
}

mlc_tir_expr *mlc_tir_call(mlc_tir_module *m, mlc_tir_intrin op, int n, mlc_tir_expr *const *args) {
  if ((unsigned)op >= MLC_TIR_INTRIN_COUNT || n < 0 || (n == 0) != (intrin_nargs[op] == 0) ||
      (n && !all_nonnull(n, args)))
    return NULL;
  mlc_dtype t = (op == MLC_TIR_INTRIN_ISNAN || op == MLC_TIR_INTRIN_ISINF) ? MLC_DTYPE_BOOL
                : n == 0 || op == MLC_TIR_INTRIN_PREFETCH                 ? MLC_DTYPE_I32
                                                                          : args[0]->dtype;
  mlc_tir_expr *e = new_expr(m, MLC_TIR_CALL, t);
  if (!e) return NULL;
  for (int i = 0; i < n && op != MLC_TIR_INTRIN_PREFETCH; i++) e->lanes = max_lanes(e->lanes, args[i]->lanes);
  e->call.op = op;
  e->call.n = n;
  e->call.args = n ? dup_array(m, args, (size_t)n, sizeof *args) : NULL;
  return e->call.args || !n ? e : NULL;
}

mlc_tir_expr *mlc_tir_call1(mlc_tir_module *m, mlc_tir_intrin op, mlc_tir_expr *a) {
  return mlc_tir_call(m, op, 1, &a);
}

mlc_tir_expr *mlc_tir_reduce(mlc_tir_module *m, mlc_tir_reduce_op op, mlc_tir_expr *source,
                             int naxes, const mlc_tir_iter_var *axes) {
  if (!source || naxes < 1) return NULL;
  for (int i = 0; i < naxes; i++)
    if (!axes[i].var || !axes[i].min || !axes[i].extent) return NULL;
  mlc_tir_expr *e = new_expr(m, MLC_TIR_REDUCE, source->dtype);
  if (!e) return NULL;
  e->reduce.op = op;
  e->reduce.source = source;
  e->reduce.naxes = naxes;
  e->reduce.axes = dup_array(m, axes, (size_t)naxes, sizeof *axes);
  return e->reduce.axes ? e : NULL;
}

mlc_tir_expr *mlc_tir_ramp(mlc_tir_module *m, mlc_tir_expr *base, mlc_tir_expr *stride, int lanes) {
  if (!base || !stride) return NULL;
  if (lanes == 1) return base;
  mlc_tir_expr *e = new_expr(m, MLC_TIR_RAMP, base->dtype);
  if (!e) return NULL;
  e->lanes = lanes;
  e->ramp.base = base;
  e->ramp.stride = stride;
  return e;
}

mlc_tir_expr *mlc_tir_broadcast(mlc_tir_module *m, mlc_tir_expr *value, int lanes) {
  if (!value) return NULL;
  if (lanes == 1) return value;
  mlc_tir_expr *e = new_expr(m, MLC_TIR_BROADCAST, value->dtype);
  if (!e) return NULL;
  e->lanes = lanes;
  e->un.a = value;
  return e;
}

mlc_tir_expr *mlc_tir_reduce_identity(mlc_tir_module *m, mlc_tir_reduce_op op, mlc_dtype t) {
  if (mlc_dtype_is_float(t)) {
    switch (op) {
      case MLC_TIR_REDUCE_SUM: return mlc_tir_float(m, t, 0.0);
      case MLC_TIR_REDUCE_PROD: return mlc_tir_float(m, t, 1.0);
      case MLC_TIR_REDUCE_MIN: return mlc_tir_float(m, t, INFINITY);
      case MLC_TIR_REDUCE_MAX: return mlc_tir_float(m, t, -INFINITY);
    }
    return NULL;
  }
  int64_t lo = 0, hi = 0;
  switch (t) {
    case MLC_DTYPE_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case MLC_DTYPE_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case MLC_DTYPE_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case MLC_DTYPE_I64: lo = INT64_MIN, hi = INT64_MAX; break;
    case MLC_DTYPE_U8: hi = UINT8_MAX; break;
    case MLC_DTYPE_U16: hi = UINT16_MAX; break;
    case MLC_DTYPE_U32: hi = UINT32_MAX; break;
    case MLC_DTYPE_U64: hi = -1; break; /* all ones */
    case MLC_DTYPE_BOOL: hi = 1; break;
    default: return NULL;
  }
  switch (op) {
    case MLC_TIR_REDUCE_SUM: return mlc_tir_int(m, t, 0);
    case MLC_TIR_REDUCE_PROD: return mlc_tir_int(m, t, 1);
    case MLC_TIR_REDUCE_MIN: return mlc_tir_int(m, t, hi);
    case MLC_TIR_REDUCE_MAX: return mlc_tir_int(m, t, lo);
  }
  return NULL;
}

/* ---- statements ------------------------------------------------------------ */

mlc_tir_stmt *mlc_tir_for(mlc_tir_module *m, mlc_tir_var *var, mlc_tir_expr *min,
                          mlc_tir_expr *extent, mlc_tir_for_kind kind, const char *thread,
                          mlc_tir_stmt *body) {
  if (!var || !min || !extent || !body) return NULL;
  mlc_tir_stmt *s = new_stmt(m, MLC_TIR_FOR);
  if (!s) return NULL;
  s->loop.var = var;
  s->loop.min = min;
  s->loop.extent = extent;
  s->loop.kind = kind;
  s->loop.body = body;
  if (thread) {
    s->loop.thread = mlc_arena_strdup(m->arena, thread);
    if (!s->loop.thread) return NULL;
  }
  return s;
}

mlc_tir_stmt *mlc_tir_for_like(mlc_tir_module *m, const mlc_tir_stmt *loop, mlc_tir_expr *min, mlc_tir_expr *extent,
                              mlc_tir_stmt *body) {
  mlc_tir_stmt *s = mlc_tir_for(m, loop->loop.var, min, extent, loop->loop.kind, NULL, body);
  if (s) {
    s->loop.thread = loop->loop.thread; /* arena strings: shared */
    s->loop.nannots = loop->loop.nannots;
    s->loop.annots = loop->loop.annots;
  }
  return s;
}

mlc_tir_stmt *mlc_tir_seq(mlc_tir_module *m, int n, mlc_tir_stmt *const *stmts) {
  int total = 0;
  for (int i = 0; i < n; i++) {
    if (!stmts[i]) return NULL;
    total += stmts[i]->kind == MLC_TIR_SEQ ? stmts[i]->seq.n : 1;
  }
  if (n == 1) return stmts[0];
  mlc_tir_stmt *s = new_stmt(m, MLC_TIR_SEQ);
  if (!s) return NULL;
  s->seq.n = total;
  if (total) {
    s->seq.stmts = MLC_ARENA_ARRAY(m->arena, (size_t)total, mlc_tir_stmt *);
    if (!s->seq.stmts) return NULL;
    int k = 0;
    for (int i = 0; i < n; i++) {
      if (stmts[i]->kind == MLC_TIR_SEQ) {
        for (int j = 0; j < stmts[i]->seq.n; j++) s->seq.stmts[k++] = stmts[i]->seq.stmts[j];
      } else {
        s->seq.stmts[k++] = stmts[i];
      }
    }
  }
  return s;
}

mlc_tir_stmt *mlc_tir_seq2(mlc_tir_module *m, mlc_tir_stmt *a, mlc_tir_stmt *b) {
  mlc_tir_stmt *v[2] = {a, b};
  return mlc_tir_seq(m, 2, v);
}

mlc_tir_stmt *mlc_tir_store(mlc_tir_module *m, mlc_tir_buffer *buffer, int n,
                            mlc_tir_expr *const *indices, mlc_tir_expr *value) {
  if (!buffer || !value || n < 0 || (n > 0 && !all_nonnull(n, indices))) return NULL;
  mlc_tir_stmt *s = new_stmt(m, MLC_TIR_STORE);
  if (!s) return NULL;
  s->store.buffer = buffer;
  s->store.n = n;
  s->store.indices = dup_array(m, indices, (size_t)n, sizeof *indices);
  s->store.value = value;
  return (n && !s->store.indices) ? NULL : s;
}

mlc_tir_stmt *mlc_tir_if(mlc_tir_module *m, mlc_tir_expr *cond, mlc_tir_stmt *then_s,
                         mlc_tir_stmt *else_s) {
  if (!cond || !then_s) return NULL;
  mlc_tir_stmt *s = new_stmt(m, MLC_TIR_IF);
  if (!s) return NULL;
  s->if_.cond = cond;
  s->if_.then_s = then_s;
  s->if_.else_s = else_s;
  return s;
}

mlc_tir_stmt *mlc_tir_allocate(mlc_tir_module *m, mlc_tir_buffer *buffer, mlc_tir_stmt *body) {
  if (!buffer || !body) return NULL;
  mlc_tir_stmt *s = new_stmt(m, MLC_TIR_ALLOCATE);
  if (!s) return NULL;
  s->alloc.buffer = buffer;
  s->alloc.body = body;
  return s;
}

mlc_tir_stmt *mlc_tir_evaluate(mlc_tir_module *m, mlc_tir_expr *value) {
  if (!value) return NULL;
  mlc_tir_stmt *s = new_stmt(m, MLC_TIR_EVALUATE);
  if (s) s->eval.value = value;
  return s;
}

mlc_tir_stmt *mlc_tir_assert(mlc_tir_module *m, mlc_tir_expr *cond, const char *op, const char *msg,
                             int nvals, mlc_tir_expr *const *vals) {
  if (!cond || !op || !msg || nvals < 0 || nvals > MLC_TIR_ASSERT_MAX_VALS ||
      (nvals > 0 && !all_nonnull(nvals, vals)))
    return NULL;
  mlc_tir_stmt *s = new_stmt(m, MLC_TIR_ASSERT);
  if (!s) return NULL;
  s->assert_.cond = cond;
  s->assert_.op = mlc_arena_strdup(m->arena, op);
  s->assert_.msg = mlc_arena_strdup(m->arena, msg);
  s->assert_.nvals = nvals;
  for (int i = 0; i < nvals; i++) s->assert_.vals[i] = vals[i];
  return s->assert_.op && s->assert_.msg ? s : NULL;
}

mlc_tir_stmt *mlc_tir_block(mlc_tir_module *m, const char *name, int niters,
                            const mlc_tir_iter_var *iters, mlc_tir_stmt *init,
                            mlc_tir_stmt *body) {
  if (!body || niters < 0) return NULL;
  for (int i = 0; i < niters; i++)
    if (!iters[i].var || !iters[i].min || !iters[i].extent || !iters[i].binding) return NULL;
  mlc_tir_stmt *s = new_stmt(m, MLC_TIR_BLOCK);
  if (!s) return NULL;
  s->block.name = mlc_arena_strdup(m->arena, name ? name : "block");
  s->block.niters = niters;
  s->block.iters = dup_array(m, iters, (size_t)niters, sizeof *iters);
  s->block.init = init;
  s->block.body = body;
  if (!s->block.name || (niters && !s->block.iters)) return NULL;
  return s;
}

int mlc_tir_block_iter_index(const mlc_tir_stmt *block, const mlc_tir_expr *e) {
  if (!e || e->kind != MLC_TIR_VAR_REF) return -1;
  for (int i = 0; i < block->block.niters; i++)
    if (block->block.iters[i].var == e->var) return i;
  return -1;
}

mlc_tir_stmt *mlc_tir_block_set_predicate(mlc_tir_stmt *block, mlc_tir_expr *pred) {
  if (block && block->kind == MLC_TIR_BLOCK) block->block.predicate = pred;
  return block;
}

static mlc_tir_region *dup_regions(mlc_tir_module *m, int n, const mlc_tir_region *r) {
  mlc_tir_region *d = dup_array(m, r, (size_t)n, sizeof *r);
  if (!d) return NULL;
  for (int i = 0; i < n; i++) {
    d[i].min = dup_array(m, r[i].min, (size_t)r[i].n, sizeof *r[i].min);
    d[i].extent = dup_array(m, r[i].extent, (size_t)r[i].n, sizeof *r[i].extent);
    if (r[i].n && (!d[i].min || !d[i].extent)) return NULL;
  }
  return d;
}

mlc_tir_stmt *mlc_tir_block_set_regions(mlc_tir_module *m, mlc_tir_stmt *block, int nreads,
                                        const mlc_tir_region *reads, int nwrites,
                                        const mlc_tir_region *writes) {
  if (!block || block->kind != MLC_TIR_BLOCK) return NULL;
  mlc_tir_region *r = nreads ? dup_regions(m, nreads, reads) : NULL;
  mlc_tir_region *w = nwrites ? dup_regions(m, nwrites, writes) : NULL;
  if ((nreads && !r) || (nwrites && !w)) return NULL;
  block->block.nreads = nreads;
  block->block.reads = r;
  block->block.nwrites = nwrites;
  block->block.writes = w;
  return block;
}

/* ---- functions -------------------------------------------------------------- */

mlc_tir_func *mlc_tir_func_new(mlc_tir_module *m, const char *name, int nparams,
                               mlc_tir_buffer *const *params, mlc_tir_stmt *body) {
  if (!name || !body || nparams < 0) return NULL;
  for (int i = 0; i < nparams; i++)
    if (!params[i]) return NULL;
  mlc_tir_func *f = MLC_ARENA_NEW(m->arena, mlc_tir_func);
  if (!f) return NULL;
  f->name = mlc_arena_strdup(m->arena, name);
  f->nparams = nparams;
  f->params = dup_array(m, params, (size_t)nparams, sizeof *params);
  f->body = body;
  if (!f->name || (nparams && !f->params)) return NULL;
  return f;
}

mlc_status mlc_tir_func_add_scalar(mlc_tir_module *m, mlc_tir_func *f, mlc_tir_var *var,
                                   int param, int dim) {
  if (!f || !var) return mlc_oom();
  if (param < 0 || param >= f->nparams || dim < 0 || dim >= f->params[param]->rank)
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "prim func \"%s\": scalar %s bound to shape[%d] of param %d, which does not exist",
                           f->name, var->name, dim, param);
  for (int i = 0; i < f->nscalars; i++)
    if (f->scalars[i].var == var)
      return mlc_make_status(MLC_INVALID_ARGUMENT, "prim func \"%s\": scalar %s bound twice",
                             f->name, var->name);
  mlc_tir_scalar_param *ns = MLC_ARENA_ARRAY(m->arena, (size_t)f->nscalars + 1, mlc_tir_scalar_param);
  if (!ns) return mlc_oom();
  if (f->nscalars) memcpy(ns, f->scalars, sizeof *ns * (size_t)f->nscalars);
  ns[f->nscalars].var = var;
  ns[f->nscalars].param = param;
  ns[f->nscalars].dim = dim;
  f->scalars = ns;
  f->nscalars++;
  return NULL;
}

mlc_status mlc_tir_func_add_view(mlc_tir_module *m, mlc_tir_func *f, mlc_tir_buffer *view) {
  if (!f || !view) return mlc_oom();
  int ok = 0;
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i] == view->view_of) ok = 1;
  if (!ok)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "prim func \"%s\": buffer %s is not a view of a parameter", f->name,
                           view->name);
  mlc_tir_buffer **nv = MLC_ARENA_ARRAY(m->arena, (size_t)f->nviews + 1, mlc_tir_buffer *);
  if (!nv) return mlc_oom();
  if (f->nviews) memcpy(nv, f->views, sizeof *nv * (size_t)f->nviews);
  nv[f->nviews++] = view;
  f->views = nv;
  return NULL;
}

static mlc_tir_attr *attr_slot(mlc_tir_module *m, mlc_tir_func *f, const char *key) {
  for (int i = 0; i < f->nattrs; i++)
    if (strcmp(f->attrs[i].key, key) == 0) return &f->attrs[i];
  mlc_tir_attr *na = MLC_ARENA_ARRAY(m->arena, (size_t)f->nattrs + 1, mlc_tir_attr);
  const char *k = mlc_arena_strdup(m->arena, key);
  if (!na || !k) return NULL;
  if (f->nattrs) memcpy(na, f->attrs, sizeof *na * (size_t)f->nattrs);
  na[f->nattrs].key = k;
  f->attrs = na;
  return &f->attrs[f->nattrs++];
}

mlc_status mlc_tir_func_set_attr_str(mlc_tir_module *m, mlc_tir_func *f, const char *key,
                                     const char *value) {
  if (!f) return mlc_oom();
  mlc_tir_attr *a = attr_slot(m, f, key);
  const char *v = mlc_arena_strdup(m->arena, value ? value : "");
  if (!a || !v) return mlc_oom();
  a->kind = MLC_TIR_ATTR_STR;
  a->s = v;
  a->i = 0;
  return NULL;
}

static mlc_status set_attr_i(mlc_tir_module *m, mlc_tir_func *f, const char *key,
                             mlc_tir_attr_kind kind, int64_t value) {
  if (!f) return mlc_oom();
  mlc_tir_attr *a = attr_slot(m, f, key);
  if (!a) return mlc_oom();
  a->kind = kind;
  a->s = NULL;
  a->i = value;
  return NULL;
}

mlc_status mlc_tir_func_set_attr_int(mlc_tir_module *m, mlc_tir_func *f, const char *key,
                                     int64_t value) {
  return set_attr_i(m, f, key, MLC_TIR_ATTR_INT, value);
}

mlc_status mlc_tir_func_set_attr_bool(mlc_tir_module *m, mlc_tir_func *f, const char *key,
                                      int value) {
  return set_attr_i(m, f, key, MLC_TIR_ATTR_BOOL, value != 0);
}

const mlc_tir_attr *mlc_tir_func_attr(const mlc_tir_func *f, const char *key) {
  for (int i = 0; i < f->nattrs; i++)
    if (strcmp(f->attrs[i].key, key) == 0) return &f->attrs[i];
  return NULL;
}

const char *mlc_tir_func_symbol(const mlc_tir_func *f) {
  const mlc_tir_attr *a = mlc_tir_func_attr(f, "global_symbol");
  return (a && a->kind == MLC_TIR_ATTR_STR && a->s[0]) ? a->s : f->name;
}

/* ---- annotations of loops and blocks ------------------------------------------ */

static int annot_fields(mlc_tir_stmt *st, int **n, mlc_tir_attr ***a) {
  if (!st) return 0;
  if (st->kind == MLC_TIR_FOR) {
    *n = &st->loop.nannots;
    *a = &st->loop.annots;
    return 1;
  }
  if (st->kind == MLC_TIR_BLOCK) {
    *n = &st->block.nannots;
    *a = &st->block.annots;
    return 1;
  }
  return 0;
}

const mlc_tir_attr *mlc_tir_stmt_annot(const mlc_tir_stmt *st, const char *key) {
  int *n;
  mlc_tir_attr **a;
  if (!annot_fields((mlc_tir_stmt *)st, &n, &a)) return NULL;
  for (int i = 0; i < *n; i++)
    if (strcmp((*a)[i].key, key) == 0) return &(*a)[i];
  return NULL;
}

mlc_tir_stmt *mlc_tir_stmt_set_annot(mlc_tir_module *m, mlc_tir_stmt *st, const mlc_tir_attr *a) {
  int *n;
  mlc_tir_attr **arr;
  if (!a || !a->key || !annot_fields(st, &n, &arr)) return NULL;
  int at = *n;
  for (int i = 0; i < *n; i++)
    if (strcmp((*arr)[i].key, a->key) == 0) at = i;
  int cnt = at == *n ? *n + 1 : *n;
  mlc_tir_attr *na = MLC_ARENA_ARRAY(m->arena, (size_t)cnt, mlc_tir_attr);
  if (!na) return NULL;
  if (*n) memcpy(na, *arr, sizeof *na * (size_t)*n);
  na[at] = *a;
  na[at].key = mlc_arena_strdup(m->arena, a->key);
  if (!na[at].key) return NULL;
  if (a->kind == MLC_TIR_ATTR_STR && !(na[at].s = mlc_arena_strdup(m->arena, a->s ? a->s : ""))) return NULL;
  if (a->kind != MLC_TIR_ATTR_STR) na[at].s = NULL;
  *arr = na;
  *n = cnt;
  return st;
}

int mlc_tir_stmt_remove_annot(mlc_tir_module *m, mlc_tir_stmt *st, const char *key) {
  int *n;
  mlc_tir_attr **arr;
  if (!key || !annot_fields(st, &n, &arr)) return 0;
  int at = -1;
  for (int i = 0; i < *n; i++)
    if (strcmp((*arr)[i].key, key) == 0) at = i;
  if (at < 0) return 0;
  mlc_tir_attr *na = NULL;
  if (*n > 1) {
    na = MLC_ARENA_ARRAY(m->arena, (size_t)*n - 1, mlc_tir_attr);
    if (!na) return -1;
    for (int i = 0, k = 0; i < *n; i++)
      if (i != at) na[k++] = (*arr)[i];
  }
  *arr = na;
  (*n)--;
  return 1;
}

/* Copies the annotations of |from| (a loop or block) to |to| (same kind); 0 or -1 on oom. */
static int copy_annots(mlc_tir_module *m, const mlc_tir_stmt *from, mlc_tir_stmt *to) {
  int *fn, *tn;
  mlc_tir_attr **fa, **ta;
  if (!annot_fields((mlc_tir_stmt *)from, &fn, &fa) || !annot_fields(to, &tn, &ta) || !*fn) return 0;
  mlc_tir_attr *na = dup_array(m, *fa, (size_t)*fn, sizeof **fa);
  if (!na) return -1;
  *ta = na;
  *tn = *fn;
  return 0;
}

/* ---- queries ---------------------------------------------------------------- */

static int uses_var_pre(void *ctx, const mlc_tir_expr *e) {
  return (e->kind == MLC_TIR_VAR_REF && e->var == ctx) ? MLC_TIR_VISIT_STOP : MLC_TIR_VISIT_CONTINUE;
}

int mlc_tir_expr_equal(const mlc_tir_expr *a, const mlc_tir_expr *b) {
  if (a == b) return 1;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype || a->lanes != b->lanes) return 0;
  switch (a->kind) {
    case MLC_TIR_INT_IMM: return a->int_value == b->int_value;
    case MLC_TIR_FLOAT_IMM: return memcmp(&a->float_value, &b->float_value, sizeof(double)) == 0;
    case MLC_TIR_VAR_REF: return a->var == b->var;
    case MLC_TIR_BINARY:
      return a->bin.op == b->bin.op && mlc_tir_expr_equal(a->bin.a, b->bin.a) && mlc_tir_expr_equal(a->bin.b, b->bin.b);
    case MLC_TIR_NOT:
    case MLC_TIR_CAST:
    case MLC_TIR_BROADCAST: return mlc_tir_expr_equal(a->un.a, b->un.a);
    case MLC_TIR_RAMP:
      return mlc_tir_expr_equal(a->ramp.base, b->ramp.base) && mlc_tir_expr_equal(a->ramp.stride, b->ramp.stride);
    case MLC_TIR_SELECT:
      return mlc_tir_expr_equal(a->select.c, b->select.c) && mlc_tir_expr_equal(a->select.t, b->select.t) &&
             mlc_tir_expr_equal(a->select.f, b->select.f);
    case MLC_TIR_LOAD:
      if (a->load.buffer != b->load.buffer || a->load.n != b->load.n) return 0;
      for (int i = 0; i < a->load.n; i++)
        if (!mlc_tir_expr_equal(a->load.indices[i], b->load.indices[i])) return 0;
      return 1;
    case MLC_TIR_CALL:
      if (a->call.op != b->call.op || a->call.n != b->call.n) return 0;
      for (int i = 0; i < a->call.n; i++)
        if (!mlc_tir_expr_equal(a->call.args[i], b->call.args[i])) return 0;
      return 1;
    case MLC_TIR_REDUCE: return 0; /* te reductions are never compared */
  }
  return 0;
}

int mlc_tir_expr_uses_var(const mlc_tir_expr *e, const mlc_tir_var *v) {
  mlc_tir_visitor vis = {0};
  vis.ctx = (void *)v; /* compared, never written */
  vis.pre_expr = uses_var_pre;
  return mlc_tir_visit_expr(&vis, e);
}

static int has_load_pre(void *ctx, const mlc_tir_expr *e) {
  (void)ctx;
  return e->kind == MLC_TIR_LOAD ? MLC_TIR_VISIT_STOP : MLC_TIR_VISIT_CONTINUE;
}

int mlc_tir_expr_has_load(const mlc_tir_expr *e) {
  mlc_tir_visitor vis = {0};
  vis.pre_expr = has_load_pre;
  return mlc_tir_visit_expr(&vis, e);
}

/* ---- copy with substitution --------------------------------------------------- */

typedef struct copier {
  mlc_tir_module *m;
  const mlc_tir_subst *sub;
  MLC_VEC(mlc_tir_var *) vfrom;
  MLC_VEC(mlc_tir_var *) vto;
  MLC_VEC(mlc_tir_buffer *) bfrom;
  MLC_VEC(mlc_tir_buffer *) bto;
  int failed;
} copier;

static mlc_tir_expr *cp_expr(copier *c, const mlc_tir_expr *e);
static mlc_tir_stmt *cp_stmt(copier *c, const mlc_tir_stmt *s);

static mlc_tir_buffer *map_buf(copier *c, mlc_tir_buffer *b) {
  for (size_t i = c->bfrom.len; i-- > 0;)
    if (c->bfrom.data[i] == b) return c->bto.data[i];
  if (c->sub)
    for (int i = 0; i < c->sub->nbufs; i++)
      if (c->sub->bufs_from[i] == b) return c->sub->bufs_to[i];
  return b;
}

static void undef_vars(copier *c, size_t mark) { c->vfrom.len = c->vto.len = mark; }

/* Defines |v| in the copy: a fresh variable when asked, else |v| itself. */
static mlc_tir_var *def_var(copier *c, mlc_tir_var *v) {
  if (!v || !c->sub || !c->sub->fresh_vars) return v;
  mlc_tir_var *nv = mlc_tir_var_new(c->m, v->name, v->dtype);
  size_t mark = c->vfrom.len;
  if (!nv || mlc_vec_push(&c->vfrom, v) || mlc_vec_push(&c->vto, nv)) {
    undef_vars(c, mark); /* the two stay the same length */
    c->failed = 1;
    return NULL;
  }
  return nv;
}

static mlc_tir_expr **cp_exprs(copier *c, int n, mlc_tir_expr *const *v) {
  if (n <= 0) return NULL;
  mlc_tir_expr **d = MLC_ARENA_ARRAY(c->m->arena, (size_t)n, mlc_tir_expr *);
  if (!d) return NULL;
  for (int i = 0; i < n; i++) d[i] = cp_expr(c, v[i]);
  return d;
}

static mlc_tir_expr *cp_expr(copier *c, const mlc_tir_expr *e) {
  mlc_tir_module *m = c->m;
  if (!e) return NULL;
  switch (e->kind) {
    case MLC_TIR_INT_IMM: return mlc_tir_int(m, e->dtype, e->int_value);
    case MLC_TIR_FLOAT_IMM: return mlc_tir_float(m, e->dtype, e->float_value);
    case MLC_TIR_VAR_REF: {
      for (size_t i = c->vfrom.len; i-- > 0;)
        if (c->vfrom.data[i] == e->var) return mlc_tir_ref(m, c->vto.data[i]);
      if (c->sub)
        for (int i = 0; i < c->sub->nvars; i++)
          if (c->sub->vars[i] == e->var) return mlc_tir_expr_copy(m, c->sub->values[i], NULL);
      return mlc_tir_ref(m, e->var);
    }
    case MLC_TIR_BINARY: return mlc_tir_binary(m, e->bin.op, cp_expr(c, e->bin.a), cp_expr(c, e->bin.b));
    case MLC_TIR_NOT: return mlc_tir_not(m, cp_expr(c, e->un.a));
    case MLC_TIR_CAST: return mlc_tir_cast(m, e->dtype, cp_expr(c, e->un.a));
    case MLC_TIR_SELECT:
      return mlc_tir_select(m, cp_expr(c, e->select.c), cp_expr(c, e->select.t),
                            cp_expr(c, e->select.f));
    case MLC_TIR_LOAD: {
      mlc_tir_expr **idx = cp_exprs(c, e->load.n, e->load.indices);
      if (e->load.n && !idx) return NULL;
      return mlc_tir_load(m, map_buf(c, e->load.buffer), e->load.n, idx);
    }
    case MLC_TIR_CALL: {
      mlc_tir_expr **args = cp_exprs(c, e->call.n, e->call.args);
      if (!args) return NULL;
      mlc_tir_expr *r = mlc_tir_call(m, e->call.op, e->call.n, args);
      if (r) r->dtype = e->dtype;
      return r;
    }
    case MLC_TIR_REDUCE: {
      int n = e->reduce.naxes;
      mlc_tir_iter_var ax[16];
      if (n > 16) return NULL;
      size_t mark = c->vfrom.len;
      for (int i = 0; i < n; i++) {
        ax[i] = e->reduce.axes[i];
        ax[i].min = cp_expr(c, ax[i].min);
        ax[i].extent = cp_expr(c, ax[i].extent);
      }
      for (int i = 0; i < n; i++) ax[i].var = def_var(c, ax[i].var);
      mlc_tir_expr *r = mlc_tir_reduce(m, e->reduce.op, cp_expr(c, e->reduce.source), n, ax);
      undef_vars(c, mark);
      return r;
    }
    case MLC_TIR_RAMP: return mlc_tir_ramp(m, cp_expr(c, e->ramp.base), cp_expr(c, e->ramp.stride), e->lanes);
    case MLC_TIR_BROADCAST: return mlc_tir_broadcast(m, cp_expr(c, e->un.a), e->lanes);
  }
  return NULL;
}

static int cp_regions(copier *c, int n, const mlc_tir_region *src, mlc_tir_region **out) {
  *out = NULL;
  if (n == 0) return 0;
  mlc_tir_region *r = MLC_ARENA_ARRAY(c->m->arena, (size_t)n, mlc_tir_region);
  if (!r) return -1;
  for (int i = 0; i < n; i++) {
    r[i].buffer = map_buf(c, src[i].buffer);
    r[i].n = src[i].n;
    r[i].min = cp_exprs(c, src[i].n, src[i].min);
    r[i].extent = cp_exprs(c, src[i].n, src[i].extent);
    if (src[i].n && (!r[i].min || !r[i].extent || !all_nonnull(r[i].n, r[i].min) ||
                     !all_nonnull(r[i].n, r[i].extent)))
      return -1;
  }
  *out = r;
  return 0;
}

static mlc_tir_stmt *cp_stmt(copier *c, const mlc_tir_stmt *s) {
  mlc_tir_module *m = c->m;
  mlc_tir_stmt *r = NULL;
  if (!s) return NULL;
  switch (s->kind) {
    case MLC_TIR_FOR: {
      mlc_tir_expr *mn = cp_expr(c, s->loop.min), *ext = cp_expr(c, s->loop.extent);
      size_t mark = c->vfrom.len;
      mlc_tir_var *v = def_var(c, s->loop.var);
      r = mlc_tir_for(m, v, mn, ext, s->loop.kind, s->loop.thread, cp_stmt(c, s->loop.body));
      if (r && copy_annots(m, s, r)) r = NULL;
      undef_vars(c, mark);
      break;
    }
    case MLC_TIR_SEQ: {
      if (s->seq.n == 0) {
        r = mlc_tir_seq(m, 0, NULL);
        break;
      }
      mlc_tir_stmt **v = MLC_ARENA_ARRAY(m->arena, (size_t)s->seq.n, mlc_tir_stmt *);
      if (!v) return NULL;
      for (int i = 0; i < s->seq.n; i++) v[i] = cp_stmt(c, s->seq.stmts[i]);
      r = mlc_tir_seq(m, s->seq.n, v);
      break;
    }
    case MLC_TIR_STORE: {
      mlc_tir_expr **idx = cp_exprs(c, s->store.n, s->store.indices);
      if (s->store.n && !idx) return NULL;
      r = mlc_tir_store(m, map_buf(c, s->store.buffer), s->store.n, idx, cp_expr(c, s->store.value));
      break;
    }
    case MLC_TIR_IF: {
      mlc_tir_stmt *e = s->if_.else_s ? cp_stmt(c, s->if_.else_s) : NULL;
      if (s->if_.else_s && !e) return NULL;
      r = mlc_tir_if(m, cp_expr(c, s->if_.cond), cp_stmt(c, s->if_.then_s), e);
      break;
    }
    case MLC_TIR_ALLOCATE: {
      mlc_tir_buffer *b = s->alloc.buffer;
      size_t bmark = c->bfrom.len;
      if (c->sub && c->sub->fresh_vars) {
        mlc_tir_expr **shape = cp_exprs(c, b->rank, b->shape);
        mlc_tir_buffer *nb = mlc_tir_buffer_new(m, b->name, b->dtype, b->rank, shape, b->scope);
        if (!nb || mlc_vec_push(&c->bfrom, b) || mlc_vec_push(&c->bto, nb)) {
          c->bfrom.len = c->bto.len = bmark; /* the two stay the same length */
          return NULL;
        }
        b = nb;
      } else {
        b = map_buf(c, b);
      }
      r = mlc_tir_allocate(m, b, cp_stmt(c, s->alloc.body));
      c->bfrom.len = c->bto.len = bmark;
      break;
    }
    case MLC_TIR_EVALUATE: r = mlc_tir_evaluate(m, cp_expr(c, s->eval.value)); break;
    case MLC_TIR_ASSERT: {
      mlc_tir_expr *v[MLC_TIR_ASSERT_MAX_VALS];
      for (int i = 0; i < s->assert_.nvals; i++) v[i] = cp_expr(c, s->assert_.vals[i]);
      r = mlc_tir_assert(m, cp_expr(c, s->assert_.cond), s->assert_.op, s->assert_.msg, s->assert_.nvals, v);
      break;
    }
    case MLC_TIR_BLOCK: {
      int n = s->block.niters;
      mlc_tir_iter_var *it = n ? MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_tir_iter_var) : NULL;
      if (n && !it) return NULL;
      for (int i = 0; i < n; i++) {
        it[i] = s->block.iters[i];
        it[i].min = cp_expr(c, it[i].min);
        it[i].extent = cp_expr(c, it[i].extent);
        it[i].binding = cp_expr(c, it[i].binding);
      }
      size_t mark = c->vfrom.len;
      for (int i = 0; i < n; i++) it[i].var = def_var(c, it[i].var);
      mlc_tir_stmt *init = s->block.init ? cp_stmt(c, s->block.init) : NULL;
      if (s->block.init && !init) return NULL;
      r = mlc_tir_block(m, s->block.name, n, it, init, cp_stmt(c, s->block.body));
      if (r && s->block.predicate) {
        r->block.predicate = cp_expr(c, s->block.predicate);
        if (!r->block.predicate) r = NULL;
      }
      if (r && (cp_regions(c, s->block.nreads, s->block.reads, &r->block.reads) ||
                cp_regions(c, s->block.nwrites, s->block.writes, &r->block.writes)))
        r = NULL;
      if (r) {
        r->block.nreads = s->block.nreads;
        r->block.nwrites = s->block.nwrites;
      }
      if (r && copy_annots(m, s, r)) r = NULL;
      undef_vars(c, mark);
      break;
    }
  }
  if (r && !r->origin) r->origin = s->origin;
  return r;
}

static void copier_fini(copier *c) {
  mlc_vec_free(&c->vfrom);
  mlc_vec_free(&c->vto);
  mlc_vec_free(&c->bfrom);
  mlc_vec_free(&c->bto);
}

mlc_tir_expr *mlc_tir_expr_copy(mlc_tir_module *m, const mlc_tir_expr *e, const mlc_tir_subst *sub) {
  copier c = {m, sub, {0}, {0}, {0}, {0}, 0};
  mlc_tir_expr *r = cp_expr(&c, e);
  int failed = c.failed;
  copier_fini(&c);
  return failed ? NULL : r;
}

mlc_tir_stmt *mlc_tir_stmt_copy(mlc_tir_module *m, const mlc_tir_stmt *s, const mlc_tir_subst *sub) {
  copier c = {m, sub, {0}, {0}, {0}, {0}, 0};
  mlc_tir_stmt *r = cp_stmt(&c, s);
  int failed = c.failed;
  copier_fini(&c);
  return failed ? NULL : r;
}
