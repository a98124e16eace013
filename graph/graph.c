/*
** graph.c: the graph IR's inference table (the other op tables: ops.c),
** module, constants, functions and the builder (mlc_graph_emit) that
** checks the op's dtype class, infers struct info and folds constants.
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_int.h"

/* ---- the inference table (from ops.def; the other op tables: ops.c) ---- */

static const mlc_infer_fn infer_table[MLC_OP_COUNT] = {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) mlc_##inf,
#include "graph/ops.def"
#undef OP
};

/* ---- types and attributes ----------------------------------------------- */

int64_t mlc_type_numel(const mlc_type *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    if (t->dims[i] < 0) return -1;
    if (t->dims[i] && n > INT64_MAX / t->dims[i]) return -1;
    n *= t->dims[i];
  }
  return n;
}

int mlc_type_size_ok(const mlc_type *t) {
  int64_t n = 1, esize = (int64_t)mlc_dtype_size(t->dtype);
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] == 0) return 1;
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] > 0 && __builtin_mul_overflow(n, t->dims[i], &n)) return 0;
  return !__builtin_mul_overflow(n, esize > 0 ? esize : 1, &n);
}

int mlc_type_is_static(const mlc_type *t) {
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) return 0;
  return 1;
}

int mlc_type_equal(const mlc_type *a, const mlc_type *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

const mlc_attr *mlc_attrs_find(const mlc_attr *attrs, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(attrs[i].name, name) == 0) return &attrs[i];
  return NULL;
}

int64_t mlc_attrs_int(const mlc_attr *attrs, int n, const char *name, int64_t dflt) {
  const mlc_attr *a = mlc_attrs_find(attrs, n, name);
  if (!a) return dflt;
  return a->kind == MLC_ATTR_FLOAT ? (int64_t)a->f : a->i;
}

double mlc_attrs_float(const mlc_attr *attrs, int n, const char *name, double dflt) {
  const mlc_attr *a = mlc_attrs_find(attrs, n, name);
  if (!a) return dflt;
  return a->kind == MLC_ATTR_INT ? (double)a->i : a->f;
}

const char *mlc_attrs_str(const mlc_attr *attrs, int n, const char *name, const char *dflt) {
  const mlc_attr *a = mlc_attrs_find(attrs, n, name);
  return a && a->kind == MLC_ATTR_STRING ? a->s : dflt;
}

/* ---- growable arena-free arrays of the module --------------------------- */

/* Grows a module-owned array (system allocator of the module). */
static int grow(mlc_module *m, void **data, int *cap, int need, size_t elem) {
  if (need <= *cap) return 0;
  int c = *cap ? *cap * 2 : 8;
  while (c < need) c *= 2;
  void *d = m->alloc.realloc(m->alloc.self, *data, (size_t)*cap * elem, (size_t)c * elem);
  if (!d) return -1;
  memset((char *)d + (size_t)*cap * elem, 0, (size_t)(c - *cap) * elem);
  *data = d;
  *cap = c;
  return 0;
}
#define GROW(m, arr, cap, need) grow((m), (void **)&(arr), &(cap), (need), sizeof *(arr))

/* ---- module ------------------------------------------------------------- */

mlc_status mlc_module_create(mlc_allocator a, mlc_module **out) {
  *out = NULL;
  mlc_module *m = MLC_NEW(a, mlc_module);
  if (!m) return mlc_oom();
  m->alloc = a;
  m->arena = mlc_arena_create(a);
  if (!m->arena) {
    mlc_free(a, m, sizeof *m);
    return mlc_oom();
  }
  m->fold = 1;
  *out = m;
  return NULL;
}

static void free_func(mlc_module *m, mlc_func *f) {
  for (int i = 0; i < f->nblocks; i++) mlc_free(m->alloc, f->blocks[i].bindings, sizeof(void *) * (size_t)f->blocks[i].cap);
  mlc_free(m->alloc, f->blocks, sizeof(mlc_block) * (size_t)f->cap_blocks);
  mlc_free(m->alloc, f->params, sizeof(void *) * (size_t)f->cap_params);
  mlc_free(m->alloc, f->rets, sizeof(void *) * (size_t)f->cap_rets);
}

void mlc_module_destroy(mlc_module *m) {
  if (!m) return;
  if (m->prims && m->prims_free) m->prims_free(m->prims);
  for (int i = 0; i < m->nfuncs; i++) free_func(m, m->funcs[i]);
  for (int i = 0; i < m->nconsts; i++) mlc_const_free(m, m->consts[i].data, m->consts[i].nbytes);
  mlc_free(m->alloc, m->funcs, sizeof(void *) * (size_t)m->cap_funcs);
  mlc_hash_fini(&m->func_index);
  mlc_free(m->alloc, m->consts, sizeof(mlc_const) * (size_t)m->cap_consts);
  mlc_free(m->alloc, m->syms, sizeof(char *) * (size_t)m->cap_syms);
  mlc_free(m->alloc, m->sym_defs, sizeof(mlc_sym_def) * (size_t)m->cap_sym_defs);
  mlc_arena_destroy(m->arena);
  mlc_free(m->alloc, m, sizeof *m);
}

mlc_func *mlc_module_func(const mlc_module *m, const char *name) {
  return name ? mlc_hash_get(&m->func_index, name) : NULL;
}

/* Appends symbol |name| with definition |def| (copied). */
static mlc_status add_sym(mlc_module *m, const char *name, const mlc_sym_def *def, int64_t *out_dim) {
  if (GROW(m, m->syms, m->cap_syms, m->nsyms + 1) ||
      GROW(m, m->sym_defs, m->cap_sym_defs, m->nsyms + 1))
    return mlc_oom();
  const char *s = mlc_arena_strdup(m->arena, name);
  if (!s) return mlc_oom();
  m->syms[m->nsyms] = s;
  m->sym_defs[m->nsyms] = *def;
  *out_dim = MLC_DIM_SYM(m->nsyms);
  m->nsyms++;
  return NULL;
}

mlc_status mlc_module_sym(mlc_module *m, const char *name, int64_t *out_dim) {
  for (int i = 0; i < m->nsyms; i++)
    if (strcmp(m->syms[i], name) == 0 && m->sym_defs[i].op == MLC_SYM_FREE) {
      *out_dim = MLC_DIM_SYM(i);
      return NULL;
    }
  mlc_sym_def free_def = {MLC_SYM_FREE, 0, 0, 0, NULL, 0};
  return add_sym(m, name, &free_def, out_dim);
}

mlc_status mlc_module_fresh_sym(mlc_module *m, int64_t *out_dim) {
  char name[32];
  for (int k = m->nsyms;; k++) {
    snprintf(name, sizeof name, "s%d", k);
    int taken = 0;
    for (int i = 0; i < m->nsyms; i++) taken |= strcmp(m->syms[i], name) == 0;
    if (!taken) return mlc_module_sym(m, name, out_dim);
  }
}

const char *mlc_module_sym_name(const mlc_module *m, int64_t dim) {
  if (!MLC_DIM_IS_SYM(dim)) return "?";
  int id = MLC_DIM_SYM_ID(dim);
  return id < m->nsyms ? m->syms[id] : "?";
}

const mlc_sym_def *mlc_module_sym_def(const mlc_module *m, int64_t dim) {
  if (!MLC_DIM_IS_SYM(dim)) return NULL;
  int id = MLC_DIM_SYM_ID(dim);
  return id < m->nsyms ? &m->sym_defs[id] : NULL;
}

/* ---- dim arithmetic ----------------------------------------------------- */

/* |d|'s name as an operand of a product or quotient: parenthesized when it
** is a sum or difference. */
static void operand_name(const mlc_module *m, int64_t d, char *buf, size_t n) {
  const mlc_sym_def *def = mlc_module_sym_def(m, d);
  const char *name = mlc_module_sym_name(m, d);
  if (def && def->op == MLC_SYM_ADD) snprintf(buf, n, "(%s)", name);
  else snprintf(buf, n, "%s", name);
}

/*
** The symbol for |op|(a, b) (a a symbol; b a symbol when |b_sym|): the one
** already defined so, else a new one named by the expression.  A name taken
** by another symbol (a dim_param that happens to read "H-1") gets a suffix.
*/
static mlc_status derived_what(mlc_module *m, mlc_sym_op op, int64_t a, int64_t b, int b_sym,
                               const mlc_origin *origin, const char *check_what, int64_t *out) {
  for (int i = 0; i < m->nsyms; i++) {
    const mlc_sym_def *d = &m->sym_defs[i];
    if (d->op == op && d->a == a && d->b == b && d->b_sym == b_sym) {
      *out = MLC_DIM_SYM(i);
      return NULL;
    }
  }
  char x[256], y[256], name[600];
  if (op == MLC_SYM_ADD) {
    snprintf(x, sizeof x, "%s", mlc_module_sym_name(m, a));
    if (b_sym) snprintf(name, sizeof name, "%s+%s", x, mlc_module_sym_name(m, b));
    else snprintf(name, sizeof name, "%s%s%lld", x, b < 0 ? "-" : "+",
                  b < 0 ? -(long long)(uint64_t)b : (long long)b);
  } else if (op == MLC_SYM_MUL && b_sym) {
    operand_name(m, a, x, sizeof x);
    operand_name(m, b, y, sizeof y);
    snprintf(name, sizeof name, "%s*%s", x, y);
  } else if (op == MLC_SYM_MUL || op == MLC_SYM_FLOORDIV) {
    operand_name(m, a, x, sizeof x);
    snprintf(name, sizeof name, "%s%s%lld", x, op == MLC_SYM_MUL ? "*" : "//", (long long)b);
  } else if (op == MLC_SYM_CHECK) {
    snprintf(name, sizeof name, "check(%s)", mlc_module_sym_name(m, a));
  } else {
    snprintf(x, sizeof x, "%s", mlc_module_sym_name(m, a));
    if (b_sym) snprintf(y, sizeof y, "%s", mlc_module_sym_name(m, b));
    else snprintf(y, sizeof y, "%lld", (long long)b);
    snprintf(name, sizeof name, "%s(%s, %s)", op == MLC_SYM_MIN ? "min" : "max", x, y);
  }
  char where[512] = "", unique[640];
  if (origin) mlc_origin_str(origin, where, sizeof where);
  if (op == MLC_SYM_CHECK && check_what) {
    size_t n = strlen(where);
    snprintf(where + n, sizeof where - n, "%s%s", n ? ": " : "", check_what);
  }
  mlc_sym_def def = {op, b_sym, a, b, where[0] ? mlc_arena_strdup(m->arena, where) : NULL, 0};
  if (where[0] && !def.where) return mlc_oom();
  snprintf(unique, sizeof unique, "%s", name);
  for (int k = 2;; k++) {
    int taken = 0;
    for (int i = 0; i < m->nsyms && !taken; i++) taken = strcmp(m->syms[i], unique) == 0;
    if (!taken) break;
    snprintf(unique, sizeof unique, "%s#%d", name, k);
  }
  return add_sym(m, unique, &def, out);
}

static mlc_status derived(mlc_module *m, mlc_sym_op op, int64_t a, int64_t b, int b_sym,
                          const mlc_origin *origin, int64_t *out) {
  return derived_what(m, op, a, b, b_sym, origin, NULL, out);
}

mlc_status mlc_module_bound_sym(mlc_module *m, const char *name, int64_t bound) {
  if (bound < 1) return mlc_make_status(MLC_INVALID_ARGUMENT, "the bound of \"%s\" must be >= 1, not %lld", name, (long long)bound);
  for (int i = 0; i < m->nsyms; i++)
    if (m->sym_defs[i].op == MLC_SYM_FREE && strcmp(m->syms[i], name) == 0) {
      m->sym_defs[i].bound = bound;
      return NULL;
    }
  mlc_strbuf b = MLC_STRBUF_INIT;
  for (int i = 0; i < m->nsyms; i++)
    if (m->sym_defs[i].op == MLC_SYM_FREE) mlc_sb_printf(&b, "%s\"%s\"", b.len ? ", " : "", m->syms[i]);
  mlc_status s = mlc_make_status(MLC_INVALID_ARGUMENT, "the model has no symbolic dim \"%s\" (its symbolic dims: %s)", name,
                                 b.len ? mlc_sb_str(&b) : "none");
  mlc_sb_fini(&b);
  return s;
}

static int64_t dim_bound(const mlc_module *m, int64_t dim, int depth) {
  if (!MLC_DIM_IS_SYM(dim)) return dim;
  const mlc_sym_def *d = mlc_module_sym_def(m, dim);
  if (!d || depth > 256) return -1;
  if (d->op == MLC_SYM_FREE) return d->bound > 0 ? d->bound : -1;
  int64_t a = dim_bound(m, d->a, depth + 1), b = d->b_sym ? dim_bound(m, d->b, depth + 1) : d->b, v = 0;
  if (a < 0 || (d->b_sym && b < 0)) return -1;
  switch (d->op) {
    case MLC_SYM_ADD: if (__builtin_add_overflow(a, b, &v)) return -1; break;
    case MLC_SYM_MUL: if (__builtin_mul_overflow(a, b, &v)) return -1; break;
    case MLC_SYM_FLOORDIV: v = a >= 0 ? a / b : -((-(a + 1)) / b) - 1; break;
    case MLC_SYM_MIN: v = a < b ? a : b; break;
    case MLC_SYM_MAX: v = a > b ? a : b; break;
    default: v = a; break;
  }
  return v < 0 ? 0 : v;
}

int64_t mlc_module_dim_bound(const mlc_module *m, int64_t dim) { return dim_bound(m, dim, 0); }

int64_t mlc_type_numel_bound(const mlc_module *m, const mlc_type *t) {
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++) {
    int64_t e = mlc_module_dim_bound(m, t->dims[d]);
    if (e < 0 || __builtin_mul_overflow(n, e, &n)) return -1;
  }
  return n;
}

static mlc_status dim_overflow(const char *what) {
  return mlc_make_status(MLC_INVALID_ARGUMENT, "extent arithmetic overflows (%s)", what);
}

mlc_status mlc_dim_add_const(mlc_module *m, int64_t a, int64_t c, const mlc_origin *origin,
                             int64_t *out) {
  if (!MLC_DIM_IS_SYM(a)) {
    if (__builtin_add_overflow(a, c, out)) return dim_overflow("add");
    return NULL;
  }
  if (c == 0) {
    *out = a;
    return NULL;
  }
  const mlc_sym_def *d = mlc_module_sym_def(m, a);
  if (d && d->op == MLC_SYM_ADD && !d->b_sym) { /* (x + k) + c = x + (k + c) */
    int64_t k, x = d->a;
    if (!__builtin_add_overflow(d->b, c, &k)) return mlc_dim_add_const(m, x, k, origin, out);
  }
  return derived(m, MLC_SYM_ADD, a, c, 0, origin, out);
}

/* |op|(a, b) of two symbols, commutative: the earlier symbol first, so
** that a + b and b + a are one symbol. */
static mlc_status commutative(mlc_module *m, mlc_sym_op op, int64_t a, int64_t b, const mlc_origin *origin,
                              int64_t *out) {
  if (MLC_DIM_SYM_ID(a) > MLC_DIM_SYM_ID(b)) return derived(m, op, b, a, 1, origin, out);
  return derived(m, op, a, b, 1, origin, out);
}

mlc_status mlc_dim_add(mlc_module *m, int64_t a, int64_t b, const mlc_origin *origin, int64_t *out) {
  if (!MLC_DIM_IS_SYM(b)) return mlc_dim_add_const(m, a, b, origin, out);
  if (!MLC_DIM_IS_SYM(a)) return mlc_dim_add_const(m, b, a, origin, out);
  return commutative(m, MLC_SYM_ADD, a, b, origin, out);
}

mlc_status mlc_dim_mul_const(mlc_module *m, int64_t a, int64_t c, const mlc_origin *origin,
                             int64_t *out) {
  if (c < 0) return mlc_make_status(MLC_INVALID_ARGUMENT, "an extent multiplied by %lld", (long long)c);
  if (!MLC_DIM_IS_SYM(a)) {
    if (__builtin_mul_overflow(a, c, out)) return dim_overflow("multiply");
    return NULL;
  }
  if (c == 1 || c == 0) {
    *out = c ? a : 0;
    return NULL;
  }
  const mlc_sym_def *d = mlc_module_sym_def(m, a);
  if (d && d->op == MLC_SYM_MUL) { /* (x * k) * c = x * (k * c) */
    int64_t k, x = d->a;
    if (!__builtin_mul_overflow(d->b, c, &k)) return mlc_dim_mul_const(m, x, k, origin, out);
  }
  return derived(m, MLC_SYM_MUL, a, c, 0, origin, out);
}

mlc_status mlc_dim_mul(mlc_module *m, int64_t a, int64_t b, const mlc_origin *origin, int64_t *out) {
  if (!MLC_DIM_IS_SYM(b)) return mlc_dim_mul_const(m, a, b, origin, out);
  if (!MLC_DIM_IS_SYM(a)) return mlc_dim_mul_const(m, b, a, origin, out);
  return commutative(m, MLC_SYM_MUL, a, b, origin, out);
}

int mlc_dim_factors(const mlc_module *m, int64_t d, int64_t *known, int64_t *syms, int *nsyms, int max) {
  if (!MLC_DIM_IS_SYM(d)) return __builtin_mul_overflow(*known, d, known) ? -1 : 0;
  const mlc_sym_def *def = mlc_module_sym_def(m, d);
  if (def && def->op == MLC_SYM_MUL) {
    if (mlc_dim_factors(m, def->a, known, syms, nsyms, max)) return -1;
    return def->b_sym ? mlc_dim_factors(m, def->b, known, syms, nsyms, max)
                      : (__builtin_mul_overflow(*known, def->b, known) ? -1 : 0);
  }
  if (*nsyms >= max) return -1;
  syms[(*nsyms)++] = d;
  return 0;
}

mlc_status mlc_dim_floordiv_const(mlc_module *m, int64_t a, int64_t c, const mlc_origin *origin,
                                  int64_t *out) {
  if (c < 1) return mlc_make_status(MLC_INVALID_ARGUMENT, "an extent divided by %lld", (long long)c);
  if (!MLC_DIM_IS_SYM(a)) {
    *out = a >= 0 ? a / c : -((-a + c - 1) / c);
    return NULL;
  }
  if (c == 1) {
    *out = a;
    return NULL;
  }
  const mlc_sym_def *d = mlc_module_sym_def(m, a);
  if (d && d->op == MLC_SYM_MUL && d->b % c == 0) /* (x * k c) // c = x * k */
    return mlc_dim_mul_const(m, d->a, d->b / c, origin, out);
  int64_t cc;
  if (d && d->op == MLC_SYM_FLOORDIV && !__builtin_mul_overflow(d->b, c, &cc)) /* x // k // c = x // kc */
    return mlc_dim_floordiv_const(m, d->a, cc, origin, out);
  return derived(m, MLC_SYM_FLOORDIV, a, c, 0, origin, out);
}

mlc_status mlc_dim_scale(mlc_module *m, int64_t a, double scale, const mlc_origin *origin, int64_t *out) {
  if (!(scale > 0) || !isfinite(scale)) return mlc_make_status(MLC_INVALID_ARGUMENT, "an extent scaled by %g", scale);
  int k = 0;
  double p = scale;
  while (k < 30 && p != floor(p)) { /* multiplying by 2 is exact */
    p *= 2;
    k++;
  }
  if (p != floor(p) || p > (double)INT32_MAX) {
    if (!MLC_DIM_IS_SYM(a)) { /* a known extent: floating point as ONNX computes it */
      double o = floor(scale * (double)a);
      if (o > (double)INT64_MAX / 2) return dim_overflow("scale");
      *out = (int64_t)o;
      return NULL;
    }
    return mlc_make_status(MLC_UNIMPLEMENTED,
                           "scaling the symbolic extent %s by %.9g: only scales p / 2^k (such as 2, 0.5, "
                           "1.5) give an exact symbolic extent", mlc_module_sym_name(m, a), scale);
  }
  int64_t num = (int64_t)p, den = (int64_t)1 << k, v;
  while (den > 1 && num % 2 == 0) { /* lowest terms */
    num /= 2;
    den /= 2;
  }
  MLC_RETURN_IF_ERROR(mlc_dim_mul_const(m, a, num, origin, &v));
  return mlc_dim_floordiv_const(m, v, den, origin, out);
}

static mlc_status min_max(mlc_module *m, mlc_sym_op op, int64_t a, int64_t b, const mlc_origin *origin,
                          int64_t *out) {
  if (!MLC_DIM_IS_SYM(a) && !MLC_DIM_IS_SYM(b)) {
    *out = (op == MLC_SYM_MIN) == (a < b) ? a : b;
    return NULL;
  }
  if (a == b) {
    *out = a;
    return NULL;
  }
  if (!MLC_DIM_IS_SYM(a) || (MLC_DIM_IS_SYM(b) && MLC_DIM_SYM_ID(a) > MLC_DIM_SYM_ID(b))) {
    int64_t t = a;
    a = b;
    b = t;
  }
  return derived(m, op, a, b, MLC_DIM_IS_SYM(b), origin, out);
}

mlc_status mlc_dim_min(mlc_module *m, int64_t a, int64_t b, const mlc_origin *origin, int64_t *out) {
  return min_max(m, MLC_SYM_MIN, a, b, origin, out);
}

mlc_status mlc_dim_max(mlc_module *m, int64_t a, int64_t b, const mlc_origin *origin, int64_t *out) {
  return min_max(m, MLC_SYM_MAX, a, b, origin, out);
}

mlc_status mlc_dim_check(mlc_module *m, int64_t a, const mlc_origin *origin, const char *what,
                         int64_t *out) {
  if (!MLC_DIM_IS_SYM(a)) {
    if (a < 0) return mlc_make_status(MLC_INVALID_ARGUMENT, "%s", what);
    *out = a;
    return NULL;
  }
  const mlc_sym_def *d = mlc_module_sym_def(m, a);
  if (d && (d->op == MLC_SYM_FREE || d->op == MLC_SYM_CHECK)) { /* never negative, or checked */
    *out = a;
    return NULL;
  }
  return derived_what(m, MLC_SYM_CHECK, a, 0, 0, origin, what, out);
}

int64_t *mlc_module_dims(mlc_module *m, const int64_t *dims, int rank) {
  int64_t *d = MLC_ARENA_ARRAY(m->arena, rank > 0 ? (size_t)rank : 1, int64_t);
  if (d && rank > 0) memcpy(d, dims, sizeof *d * (size_t)rank);
  return d;
}

mlc_status mlc_module_type(mlc_module *m, mlc_dtype dt, const int64_t *dims, int rank,
                           mlc_type *out) {
  if (rank < 0) return mlc_make_status(MLC_INTERNAL, "negative rank %d", rank);
  int64_t *d = mlc_module_dims(m, dims, rank);
  if (!d) return mlc_oom();
  out->dtype = dt;
  out->rank = rank;
  out->dims = d;
  return NULL;
}

/* ---- constants ---------------------------------------------------------- */

#define CONST_ALIGN 64

void *mlc_const_alloc(mlc_module *m, size_t nbytes) {
  /* Over-allocate, align, and keep the raw pointer just before the block. */
  size_t total = nbytes + CONST_ALIGN + sizeof(void *);
  if (total < nbytes) return NULL;
  char *raw = mlc_alloc(m->alloc, total);
  if (!raw) return NULL;
  uintptr_t p = ((uintptr_t)raw + sizeof(void *) + CONST_ALIGN - 1) & ~(uintptr_t)(CONST_ALIGN - 1);
  ((void **)p)[-1] = raw;
  memset((void *)p, 0, nbytes);
  return (void *)p;
}

void mlc_const_free(mlc_module *m, void *data, size_t nbytes) {
  if (!data) return;
  void *raw = ((void **)data)[-1];
  mlc_free(m->alloc, raw, nbytes + CONST_ALIGN + sizeof(void *));
}

static mlc_value *new_value(mlc_module *m, mlc_value_kind kind, const char *name,
                            const mlc_type *type) {
  mlc_value *v = MLC_ARENA_NEW(m->arena, mlc_value);
  if (!v) return NULL;
  v->id = m->next_value_id++;
  v->kind = kind;
  v->name = name ? mlc_arena_strdup(m->arena, name) : NULL;
  if (name && !v->name) return NULL;
  v->type.dtype = type->dtype;
  v->type.rank = type->rank;
  v->type.dims = mlc_module_dims(m, type->dims, type->rank);
  if (!v->type.dims) return NULL;
  v->const_index = -1;
  v->storage = -1;
  v->nsv = -1;
  return v;
}

static size_t type_nbytes(const mlc_type *t, int *ok) {
  int64_t n = mlc_type_numel(t);
  size_t total;
  *ok = n >= 0 && mlc_mul_size((size_t)n, mlc_dtype_size(t->dtype), &total) == 0;
  return *ok ? total : 0;
}

mlc_status mlc_module_adopt_const(mlc_module *m, const char *name, const mlc_type *type,
                                  void *data, size_t nbytes, mlc_value **out) {
  int ok;
  size_t want = type_nbytes(type, &ok);
  if (!ok || want != nbytes || type->dtype == MLC_DTYPE_STRING) {
    mlc_const_free(m, data, nbytes);
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "constant \"%s\": %zu bytes of data for a %s tensor of %lld elements",
                           name ? name : "", nbytes, mlc_dtype_name(type->dtype),
                           (long long)mlc_type_numel(type));
  }
  mlc_value *v = NULL;
  if (GROW(m, m->consts, m->cap_consts, m->nconsts + 1) ||
      !(v = new_value(m, MLC_VALUE_CONST, name, type))) {
    mlc_const_free(m, data, nbytes);
    return mlc_oom();
  }
  mlc_const *c = &m->consts[m->nconsts];
  c->name = v->name;
  c->type = v->type;
  c->data = data;
  c->nbytes = nbytes;
  v->const_index = m->nconsts++;
  *out = v;
  return NULL;
}

mlc_status mlc_module_add_const(mlc_module *m, const char *name, const mlc_type *type,
                                const void *data, size_t nbytes, mlc_value **out) {
  void *copy = mlc_const_alloc(m, nbytes);
  if (!copy && nbytes) return mlc_oom();
  if (!copy) copy = mlc_const_alloc(m, 1);
  if (!copy) return mlc_oom();
  if (nbytes) memcpy(copy, data, nbytes);
  return mlc_module_adopt_const(m, name, type, copy, nbytes, out);
}

const mlc_const *mlc_value_const(const mlc_module *m, const mlc_value *v) {
  if (v->kind != MLC_VALUE_CONST || v->const_index < 0 || v->const_index >= m->nconsts) return NULL;
  return &m->consts[v->const_index];
}

/* ---- functions ---------------------------------------------------------- */

mlc_status mlc_func_create(mlc_module *m, const char *name, mlc_func **out) {
  if (mlc_module_func(m, name))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "function \"%s\" already exists", name);
  mlc_func *f = MLC_ARENA_NEW(m->arena, mlc_func);
  if (!f || GROW(m, m->funcs, m->cap_funcs, m->nfuncs + 1)) return mlc_oom();
  f->name = mlc_arena_strdup(m->arena, name);
  if (!f->name || mlc_hash_put(&m->func_index, f->name, f)) return mlc_oom();
  f->mod = m;
  f->ins_block = -1;
  m->funcs[m->nfuncs++] = f;
  *out = f;
  return NULL;
}

mlc_status mlc_func_add_param(mlc_func *f, const char *name, const mlc_type *type,
                              mlc_value **out) {
  mlc_module *m = f->mod;
  mlc_value *v;
  if (GROW(m, f->params, f->cap_params, f->nparams + 1) ||
      !(v = new_value(m, MLC_VALUE_PARAM, name, type)))
    return mlc_oom();
  f->params[f->nparams++] = v;
  *out = v;
  return NULL;
}

mlc_status mlc_func_set_param_value(mlc_func *f, int i, mlc_value *c) {
  if (i < 0 || i >= f->nparams)
    return mlc_make_status(MLC_INTERNAL, "function \"%s\" has no parameter %d", f->name, i);
  if (c && (c->kind != MLC_VALUE_CONST || !mlc_type_equal(&c->type, &f->params[i]->type)))
    return mlc_make_status(MLC_INTERNAL, "the value of parameter %d of \"%s\" is not a constant of its type", i,
                           f->name);
  if (i >= f->nparam_values) {
    mlc_value **a = MLC_ARENA_ARRAY(f->mod->arena, (size_t)f->nparams, mlc_value *);
    if (!a) return mlc_oom();
    if (f->nparam_values) memcpy(a, f->param_values, sizeof *a * (size_t)f->nparam_values);
    f->param_values = a;
    f->nparam_values = f->nparams;
  }
  f->param_values[i] = c;
  return NULL;
}

mlc_value *mlc_func_param_value(const mlc_func *f, int i) {
  return i >= 0 && i < f->nparam_values ? f->param_values[i] : NULL;
}

mlc_status mlc_func_set_param_default(mlc_func *f, int i, mlc_value *c) {
  if (i < 0 || i >= f->nparams)
    return mlc_make_status(MLC_INTERNAL, "function \"%s\" has no parameter %d", f->name, i);
  if (c && (c->kind != MLC_VALUE_CONST || !mlc_type_equal(&c->type, &f->params[i]->type) ||
            mlc_type_numel(&c->type) < 0))
    return mlc_make_status(MLC_INTERNAL, "the default of parameter %d of \"%s\" is not a static constant of its type",
                           i, f->name);
  if (i >= f->nparam_defaults) {
    mlc_value **a = MLC_ARENA_ARRAY(f->mod->arena, (size_t)f->nparams, mlc_value *);
    if (!a) return mlc_oom();
    if (f->nparam_defaults) memcpy(a, f->param_defaults, sizeof *a * (size_t)f->nparam_defaults);
    f->param_defaults = a;
    f->nparam_defaults = f->nparams;
  }
  f->param_defaults[i] = c;
  return NULL;
}

mlc_value *mlc_func_param_default(const mlc_func *f, int i) {
  return i >= 0 && i < f->nparam_defaults ? f->param_defaults[i] : NULL;
}

void mlc_func_remove_param(mlc_func *f, int i) {
  if (i < 0 || i >= f->nparams) return;
  memmove(&f->params[i], &f->params[i + 1], sizeof(void *) * (size_t)(f->nparams - i - 1));
  f->nparams--;
  if (i < f->nparam_values) {
    memmove(&f->param_values[i], &f->param_values[i + 1], sizeof(void *) * (size_t)(f->nparam_values - i - 1));
    f->nparam_values--;
  }
  if (i < f->nparam_defaults) {
    memmove(&f->param_defaults[i], &f->param_defaults[i + 1],
            sizeof(void *) * (size_t)(f->nparam_defaults - i - 1));
    f->nparam_defaults--;
  }
}

mlc_status mlc_func_add_ret(mlc_func *f, mlc_value *v) {
  if (GROW(f->mod, f->rets, f->cap_rets, f->nrets + 1)) return mlc_oom();
  f->rets[f->nrets++] = v;
  return NULL;
}

/* The dataflow block new bindings go to (created on first use). */
static mlc_block *current_block(mlc_func *f) {
  if (f->nblocks == 0 || !f->blocks[f->nblocks - 1].dataflow) {
    if (GROW(f->mod, f->blocks, f->cap_blocks, f->nblocks + 1)) return NULL;
    f->blocks[f->nblocks].dataflow = 1;
    f->nblocks++;
  }
  return &f->blocks[f->nblocks - 1];
}

static mlc_status append_binding(mlc_func *f, mlc_binding *b) {
  if (f->ins_block >= 0 && f->ins_block < f->nblocks) {
    mlc_block *blk = &f->blocks[f->ins_block];
    int at = f->ins_index < 0 ? 0 : f->ins_index > blk->n ? blk->n : f->ins_index;
    if (GROW(f->mod, blk->bindings, blk->cap, blk->n + 1)) return mlc_oom();
    memmove(&blk->bindings[at + 1], &blk->bindings[at], sizeof(void *) * (size_t)(blk->n - at));
    blk->bindings[at] = b;
    blk->n++;
    f->ins_index = at + 1;
    return NULL;
  }
  mlc_block *blk = current_block(f);
  if (!blk || GROW(f->mod, blk->bindings, blk->cap, blk->n + 1)) return mlc_oom();
  blk->bindings[blk->n++] = b;
  return NULL;
}

/* ---- rewriting ------------------------------------------------------------ */

void mlc_func_insert_at(mlc_func *f, int block, int index) {
  f->ins_block = block;
  f->ins_index = index;
}

void mlc_func_append_at_end(mlc_func *f) { f->ins_block = -1; }

mlc_status mlc_func_append_binding(mlc_func *f, mlc_binding *b) { return append_binding(f, b); }

void mlc_func_remove_binding(mlc_func *f, int block, int index) {
  if (block < 0 || block >= f->nblocks) return;
  mlc_block *blk = &f->blocks[block];
  if (index < 0 || index >= blk->n) return;
  memmove(&blk->bindings[index], &blk->bindings[index + 1], sizeof(void *) * (size_t)(blk->n - index - 1));
  blk->n--;
  if (f->ins_block == block && f->ins_index > index) f->ins_index--;
}

void mlc_func_compact(mlc_func *f) {
  int nb = 0;
  for (int bi = 0; bi < f->nblocks; bi++) {
    mlc_block *blk = &f->blocks[bi];
    if (blk->n == 0) {
      mlc_free(f->mod->alloc, blk->bindings, sizeof(void *) * (size_t)blk->cap);
      continue;
    }
    f->blocks[nb++] = *blk;
  }
  for (int bi = nb; bi < f->nblocks; bi++) memset(&f->blocks[bi], 0, sizeof f->blocks[bi]);
  f->nblocks = nb;
  f->ins_block = -1;
}

void mlc_module_remove_func(mlc_module *m, mlc_func *f) {
  for (int i = 0; i < m->nfuncs; i++)
    if (m->funcs[i] == f) {
      (void)mlc_hash_replace(&m->func_index, f->name, NULL); /* its name is there */
      free_func(m, f);
      memmove(&m->funcs[i], &m->funcs[i + 1], sizeof(void *) * (size_t)(m->nfuncs - i - 1));
      m->nfuncs--;
      return;
    }
}

static mlc_origin copy_origin(mlc_module *m, const mlc_origin *o);
static mlc_attr *copy_attrs(mlc_module *m, const mlc_attr *attrs, int n);

mlc_status mlc_binding_set_call(mlc_module *m, mlc_binding *b, mlc_call_kind kind, const char *callee,
                                mlc_value *const *args, int nargs) {
  mlc_value **a = nargs > 0 ? mlc_arena_memdup(m->arena, args, sizeof(mlc_value *) * (size_t)nargs)
                            : MLC_ARENA_ARRAY(m->arena, 1, mlc_value *);
  const char *c = callee ? mlc_arena_strdup(m->arena, callee) : NULL;
  if (!a || (callee && !c)) return mlc_oom();
  b->kind = kind;
  b->callee = c;
  b->args = a;
  b->nargs = nargs;
  return NULL;
}

mlc_status mlc_binding_set_attrs(mlc_module *m, mlc_binding *b, const mlc_attr *attrs, int nattrs) {
  mlc_attr *c = copy_attrs(m, attrs, nattrs);
  if (nattrs && !c) return mlc_oom();
  b->attrs = c;
  b->nattrs = nattrs;
  return NULL;
}

mlc_status mlc_binding_add_covered(mlc_module *m, mlc_binding *b, const mlc_origin *o) {
  for (int i = 0; i < b->ncovered; i++) /* one ONNX node lowered to several ops: listed once */
    if (o->index >= 0 && b->covered[i].index == o->index) return NULL;
  mlc_origin *c = MLC_ARENA_ARRAY(m->arena, (size_t)b->ncovered + 1, mlc_origin);
  if (!c) return mlc_oom();
  if (b->ncovered) memcpy(c, b->covered, sizeof *c * (size_t)b->ncovered);
  c[b->ncovered] = copy_origin(m, o);
  if (mlc_arena_oom(m->arena)) return mlc_oom();
  b->covered = c;
  b->ncovered++;
  return NULL;
}

const mlc_origin *mlc_binding_nodes(const mlc_binding *b, int *n) {
  if (b->ncovered > 0) {
    *n = b->ncovered;
    return b->covered;
  }
  *n = b->origin.op_type ? 1 : 0;
  return &b->origin;
}

mlc_status mlc_subst_init(mlc_subst *s, const mlc_module *m) {
  s->alloc = m->alloc;
  s->n = m->next_value_id;
  s->to = s->n > 0 ? mlc_calloc(m->alloc, (size_t)s->n, sizeof *s->to) : NULL;
  return s->n > 0 && !s->to ? mlc_oom() : NULL;
}

int mlc_subst_set(mlc_subst *s, const mlc_value *from, mlc_value *to) {
  if (!from || from->id < 0 || from->id >= s->n || from == to) return 0;
  s->to[from->id] = to;
  return 1;
}

mlc_value *mlc_subst_get(const mlc_subst *s, mlc_value *v) {
  for (int hops = 0; v && v->id >= 0 && v->id < s->n && s->to[v->id] && hops < s->n; hops++) v = s->to[v->id];
  return v;
}

void mlc_subst_apply(const mlc_subst *s, mlc_func *f) {
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++) {
      mlc_binding *b = f->blocks[bi].bindings[j];
      for (int a = 0; a < b->nargs; a++) b->args[a] = mlc_subst_get(s, b->args[a]);
    }
  for (int i = 0; i < f->nrets; i++) f->rets[i] = mlc_subst_get(s, f->rets[i]);
}

mlc_status mlc_subst_apply_keep_names(const mlc_subst *s, mlc_func *f) {
  mlc_module *m = f->mod;
  int n = f->nrets;
  mlc_value **old = n ? mlc_calloc(m->alloc, (size_t)n, sizeof *old) : NULL;
  if (n && !old) return mlc_oom();
  for (int i = 0; i < n; i++) old[i] = f->rets[i];
  mlc_subst_apply(s, f);
  mlc_status st = NULL;
  int fold = m->fold;
  m->fold = 0;
  for (int i = 0; i < n && !st; i++) {
    mlc_value *v = f->rets[i];
    if (v == old[i]) continue;
    int elsewhere = 0;
    for (int j = 0; j < n && !elsewhere; j++) elsewhere = j != i && f->rets[j] == v;
    if (v->kind == MLC_VALUE_VAR && !elsewhere) {
      v->name = old[i]->name;
      continue;
    }
    mlc_value *copy;
    mlc_origin o = {"", "Identity", 0, -1};
    mlc_func_append_at_end(f);
    st = mlc_graph_emit1(f, MLC_OP_COPY, &v, 1, NULL, 0, &o, &copy);
    if (!st) {
      copy->name = old[i]->name;
      f->rets[i] = copy;
    }
  }
  m->fold = fold;
  mlc_free(m->alloc, old, sizeof *old * (size_t)n);
  return st;
}

void mlc_subst_fini(mlc_subst *s) {
  mlc_free(s->alloc, s->to, sizeof *s->to * (size_t)s->n);
  s->to = NULL;
  s->n = 0;
}

mlc_status mlc_module_use_counts(const mlc_module *m, int **out) {
  int n = m->next_value_id > 0 ? m->next_value_id : 1;
  int *c = mlc_calloc(m->alloc, (size_t)n, sizeof *c);
  if (!c) return mlc_oom();
  for (int fi = 0; fi < m->nfuncs; fi++) {
    const mlc_func *f = m->funcs[fi];
    for (int bi = 0; bi < f->nblocks; bi++)
      for (int j = 0; j < f->blocks[bi].n; j++) {
        const mlc_binding *b = f->blocks[bi].bindings[j];
        for (int a = 0; a < b->nargs; a++)
          if (b->args[a] && b->args[a]->id >= 0 && b->args[a]->id < n) c[b->args[a]->id]++;
      }
    for (int i = 0; i < f->nrets; i++)
      if (f->rets[i] && f->rets[i]->id >= 0 && f->rets[i]->id < n) c[f->rets[i]->id]++;
  }
  *out = c;
  return NULL;
}

const char *mlc_origin_str(const mlc_origin *o, char *buf, size_t size) {
  if (!o || !o->op_type) {
    if (size) buf[0] = 0;
    return buf;
  }
  snprintf(buf, size, "node \"%s\" (%s, opset %d)", o->node ? o->node : "", o->op_type, o->opset);
  return buf;
}

mlc_status mlc_graph_call_error(const mlc_call_info *ci, mlc_code code, const char *fmt, ...) {
  char msg[1024], where[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  mlc_origin_str(ci->origin, where, sizeof where);
  if (where[0])
    return mlc_make_status(code, "%s: %s: %s", where, mlc_op_name[ci->op], msg);
  return mlc_make_status(code, "%s: %s", mlc_op_name[ci->op], msg);
}

mlc_status mlc_graph_infer(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  if ((unsigned)ci->op >= MLC_OP_COUNT)
    return mlc_make_status(MLC_INTERNAL, "op code %d out of range", (int)ci->op);
  int mn = mlc_op_min_args[ci->op], mx = mlc_op_max_args[ci->op];
  if (ci->nargs < mn || (mx >= 0 && ci->nargs > mx))
    return mlc_graph_call_error(ci, MLC_INVALID_ARGUMENT, "takes %d%s arguments, got %d", mn,
                                mx < 0 ? " or more" : mx == mn ? "" : " to max", ci->nargs);
  for (int i = 0; i < ci->nargs; i++)
    if (!ci->args[i])
      return mlc_graph_call_error(ci, MLC_INVALID_ARGUMENT, "argument %d is missing", i);
  /* the op's dtype class (ops.def) of argument 0, for every rule */
  mlc_dtype t0 = ci->nargs > 0 ? ci->args[0]->type.dtype : MLC_DTYPE_INVALID;
  if (ci->nargs > 0 && t0 > MLC_DTYPE_INVALID && t0 < MLC_DTYPE_COUNT &&
      !mlc_dtype_class_has(mlc_op_dtypes[ci->op], t0))
    return mlc_graph_call_error(ci, MLC_INVALID_ARGUMENT, "argument 0 has dtype %s, expected %s",
                                mlc_dtype_name(t0), mlc_dtype_class_text(mlc_op_dtypes[ci->op]));
  *nouts = 1;
  MLC_RETURN_IF_ERROR(infer_table[ci->op](ci, outs, nouts));
  /* Sizes come from the model: no stage after this one need check that a
  ** tensor's element count or byte size fits in int64. */
  for (int k = 0; k < *nouts; k++)
    if (!mlc_type_size_ok(&outs[k])) {
      char shape[256];
      size_t n = 0;
      for (int i = 0; i < outs[k].rank && n < sizeof shape - 48; i++)
        n += MLC_DIM_IS_SYM(outs[k].dims[i])
                 ? (size_t)snprintf(shape + n, sizeof shape - n, "%s%.32s", i ? ", " : "",
                                    mlc_module_sym_name(ci->mod, outs[k].dims[i]))
                 : (size_t)snprintf(shape + n, sizeof shape - n, "%s%lld", i ? ", " : "",
                                    (long long)outs[k].dims[i]);
      return mlc_graph_call_error(ci, MLC_INVALID_ARGUMENT,
                                  "output %d of shape (%s) %s: its byte size overflows int64", k, shape,
                                  mlc_dtype_name(outs[k].dtype));
    }
  return NULL;
}

/* Copies attributes (names, strings and arrays) into the arena. */
static mlc_attr *copy_attrs(mlc_module *m, const mlc_attr *attrs, int n) {
  if (n == 0) return NULL;
  mlc_attr *c = MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_attr);
  if (!c) return NULL;
  for (int i = 0; i < n; i++) {
    c[i] = attrs[i];
    c[i].name = mlc_arena_strdup(m->arena, attrs[i].name);
    if (!c[i].name) return NULL;
    if (attrs[i].s && !(c[i].s = mlc_arena_strdup(m->arena, attrs[i].s))) return NULL;
    if (attrs[i].ints &&
        !(c[i].ints = mlc_arena_memdup(m->arena, attrs[i].ints, sizeof(int64_t) * (size_t)attrs[i].n)))
      return NULL;
    if (attrs[i].floats &&
        !(c[i].floats = mlc_arena_memdup(m->arena, attrs[i].floats, sizeof(double) * (size_t)attrs[i].n)))
      return NULL;
  }
  return c;
}

static mlc_origin copy_origin(mlc_module *m, const mlc_origin *o) {
  mlc_origin c = {NULL, NULL, 0, -1};
  if (!o) return c;
  c.node = o->node ? mlc_arena_strdup(m->arena, o->node) : NULL;
  c.op_type = o->op_type ? mlc_arena_strdup(m->arena, o->op_type) : NULL;
  c.opset = o->opset;
  c.index = o->index;
  return c;
}

int mlc_fold_size_ok(const mlc_type *types, int nouts, size_t in_bytes) {
  size_t limit = in_bytes > MLC_FOLD_MAX_BYTES / MLC_FOLD_GROWTH ? in_bytes : MLC_FOLD_MAX_BYTES / MLC_FOLD_GROWTH;
  if (limit > SIZE_MAX / MLC_FOLD_GROWTH) return 0;
  limit *= MLC_FOLD_GROWTH;
  size_t total = 0;
  for (int i = 0; i < nouts; i++) {
    int ok;
    size_t nb = type_nbytes(&types[i], &ok);
    if (!ok || types[i].dtype == MLC_DTYPE_STRING || nb > limit - total) return 0;
    total += nb;
  }
  return 1;
}

/* Tries to evaluate |ci| on constants. *folded = 1 when outs were filled. */
static mlc_status try_fold(const mlc_call_info *ci, const mlc_type *types, int nouts,
                           mlc_value **outs, int *folded) {
  mlc_module *m = ci->mod;
  *folded = 0;
  if (!m->fold || mlc_op_pattern[ci->op] == MLC_PATTERN_OUT_EWISE_FUSABLE) return NULL;
  const void *in[64];
  size_t in_bytes = 0;
  if (ci->nargs > 64) return NULL;
  for (int i = 0; i < ci->nargs; i++) {
    const mlc_const *c = mlc_value_const(m, ci->args[i]);
    if (!c) return NULL;
    in[i] = c->data;
    in_bytes += c->nbytes;
  }
  if (!mlc_fold_size_ok(types, nouts, in_bytes)) return NULL;
  void *out[MLC_MAX_OUTS] = {0};
  mlc_status s = mlc_graph_eval(ci, types, nouts, in, out);
  if (s) {
    /* No evaluator: keep the call.  Anything else is a real error. */
    if (mlc_status_code(s) != MLC_UNIMPLEMENTED) return mlc_status_annotate(s, "constant folding");
    mlc_status_free(s);
    return NULL;
  }
  for (int i = 0; i < nouts; i++) {
    int ok;
    size_t nb = type_nbytes(&types[i], &ok);
    mlc_status e = mlc_module_adopt_const(m, NULL, &types[i], out[i], nb, &outs[i]);
    out[i] = NULL;
    if (e) {
      for (int j = i + 1; j < nouts; j++) mlc_const_free(m, out[j], type_nbytes(&types[j], &ok));
      return e;
    }
  }
  *folded = 1;
  return NULL;
}

/* A new binding of |op| on |args| with |n| fresh outputs of |types| (also
** into |outs|); not yet in any block. */
static mlc_status new_op_binding(mlc_module *m, mlc_op op, mlc_value *const *args, int nargs,
                                 const mlc_attr *attrs, int nattrs, const mlc_origin *origin, const mlc_type *types,
                                 int n, mlc_value **outs, mlc_binding **out) {
  mlc_binding *b = MLC_ARENA_NEW(m->arena, mlc_binding);
  if (!b) return mlc_oom();
  b->kind = MLC_CALL_OP;
  b->op = op;
  b->pattern = mlc_op_pattern[op];
  b->nargs = nargs;
  b->args = mlc_arena_memdup(m->arena, args, sizeof(mlc_value *) * (size_t)(nargs ? nargs : 1));
  b->nattrs = nattrs;
  b->attrs = copy_attrs(m, attrs, nattrs);
  b->nouts = n;
  b->outs = MLC_ARENA_ARRAY(m->arena, (size_t)n, mlc_value *);
  b->origin = copy_origin(m, origin);
  if (!b->args || (nattrs && !b->attrs) || !b->outs || mlc_arena_oom(m->arena)) return mlc_oom();
  for (int i = 0; i < n; i++) {
    mlc_value *v = new_value(m, MLC_VALUE_VAR, NULL, &types[i]);
    if (!v) return mlc_oom();
    v->def = b;
    v->def_output = i;
    b->outs[i] = outs[i] = v;
  }
  *out = b;
  return NULL;
}

mlc_status mlc_graph_emit(mlc_func *f, mlc_op op, mlc_value *const *args, int nargs,
                          const mlc_attr *attrs, int nattrs, const mlc_origin *origin,
                          mlc_value **outs, int *nouts) {
  mlc_module *m = f->mod;
  mlc_call_info ci = {m, op, nargs, args, nattrs, attrs, origin};
  mlc_type types[MLC_MAX_OUTS];
  int n = 1;
  MLC_RETURN_IF_ERROR(mlc_graph_infer(&ci, types, &n));
  if (n < 1 || n > MLC_MAX_OUTS) return mlc_graph_call_error(&ci, MLC_INTERNAL, "bad output count %d", n);
  int folded;
  MLC_RETURN_IF_ERROR(try_fold(&ci, types, n, outs, &folded));
  if (nouts) *nouts = n;
  if (folded) return NULL;
  /* values known from shapes (sym_values.c): integers only fold too */
  mlc_known_values kn;
  int known = n == 1 && mlc_graph_known_values(m, op, args, nargs, attrs, nattrs, origin, &types[0], &kn);
  if (known && !kn.sym && m->fold) return mlc_graph_known_const(m, &types[0], &kn, &outs[0]);

  mlc_binding *b;
  MLC_RETURN_IF_ERROR(new_op_binding(m, op, args, nargs, attrs, nattrs, origin, types, n, outs, &b));
  if (known) MLC_RETURN_IF_ERROR(mlc_value_set_known(m, b->outs[0], &kn));
  return append_binding(f, b);
}

mlc_status mlc_graph_emit_region(mlc_func *f, mlc_op op, mlc_value *const *args, int nargs,
                                 const mlc_attr *attrs, int nattrs, const mlc_origin *origin,
                                 mlc_value **outs, int *nouts) {
  mlc_module *m = f->mod;
  mlc_call_info ci = {m, op, nargs, args, nattrs, attrs, origin};
  mlc_type types[MLC_MAX_OUTS];
  int n = 1;
  if (f->ins_block >= 0) return mlc_make_status(MLC_INTERNAL, "mlc_graph_emit_region: not at the end");
  MLC_RETURN_IF_ERROR(mlc_graph_infer(&ci, types, &n));
  if (n < 1 || n > MLC_MAX_OUTS) return mlc_graph_call_error(&ci, MLC_INTERNAL, "bad output count %d", n);
  mlc_binding *b;
  MLC_RETURN_IF_ERROR(new_op_binding(m, op, args, nargs, attrs, nattrs, origin, types, n, outs, &b));
  if (nouts) *nouts = n;
  if (GROW(m, f->blocks, f->cap_blocks, f->nblocks + 1)) return mlc_oom();
  mlc_block *blk = &f->blocks[f->nblocks];
  memset(blk, 0, sizeof *blk);
  if (GROW(m, blk->bindings, blk->cap, 1)) return mlc_oom();
  blk->bindings[blk->n++] = b;
  f->nblocks++;
  return NULL;
}

mlc_status mlc_graph_emit1(mlc_func *f, mlc_op op, mlc_value *const *args, int nargs,
                           const mlc_attr *attrs, int nattrs, const mlc_origin *origin,
                           mlc_value **out) {
  mlc_value *outs[MLC_MAX_OUTS];
  int n = 0;
  MLC_RETURN_IF_ERROR(mlc_graph_emit(f, op, args, nargs, attrs, nattrs, origin, outs, &n));
  if (n != 1) {
    char where[512];
    return mlc_make_status(MLC_INTERNAL, "%s: %s has %d outputs, expected 1",
                           mlc_origin_str(origin, where, sizeof where), mlc_op_name[op], n);
  }
  *out = outs[0];
  return NULL;
}

mlc_status mlc_graph_emit_call(mlc_func *f, mlc_call_kind kind, const char *callee,
                               mlc_value *const *args, int nargs, const mlc_attr *attrs,
                               int nattrs, const mlc_type *out_types, int nouts,
                               const mlc_origin *origin, mlc_value **outs) {
  mlc_module *m = f->mod;
  if (kind == MLC_CALL_OP || !callee || nouts < 1 || nouts > MLC_MAX_OUTS)
    return mlc_make_status(MLC_INTERNAL, "mlc_graph_emit_call: bad call");
  mlc_binding *b = MLC_ARENA_NEW(m->arena, mlc_binding);
  if (!b) return mlc_oom();
  b->kind = kind;
  b->op = MLC_OP_COUNT;
  b->pattern = MLC_PATTERN_OPAQUE;
  b->callee = mlc_arena_strdup(m->arena, callee);
  b->nargs = nargs;
  b->args = mlc_arena_memdup(m->arena, args, sizeof(mlc_value *) * (size_t)(nargs ? nargs : 1));
  b->nattrs = nattrs;
  b->attrs = copy_attrs(m, attrs, nattrs);
  b->nouts = nouts;
  b->outs = MLC_ARENA_ARRAY(m->arena, (size_t)nouts, mlc_value *);
  b->origin = copy_origin(m, origin);
  if (!b->callee || !b->args || (nattrs && !b->attrs) || !b->outs || mlc_arena_oom(m->arena))
    return mlc_oom();
  for (int i = 0; i < nouts; i++) {
    mlc_value *v = new_value(m, MLC_VALUE_VAR, NULL, &out_types[i]);
    if (!v) return mlc_oom();
    v->def = b;
    v->def_output = i;
    b->outs[i] = outs[i] = v;
  }
  return append_binding(f, b);
}
