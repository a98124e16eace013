/*
** arith.c: integer analysis of int64 index expressions (see arith.h).
**
** The simplifier works on a linear form: a sum of coef * atom plus a
** constant, where an atom is a simplified expression that is not itself a
** sum (a variable, a floordiv / floormod, a min / max, a product of two
** non-constant factors, a load ...).  Adding two forms combines like atoms
** (structurally equal), multiplying by a constant scales them.  floordiv and
** floormod by a positive constant c split the form into the terms whose
** coefficient c divides (they leave the division exactly) and a rest R,
** which is resolved from its bounds (R in [k*c, k*c + c) gives k and
** R - k*c), reduced by a common factor of its coefficients and c, or kept as
** an atom.  Finally floordiv / floormod pairs of the same operand recombine:
** (x // c) * c + x % c -> x.
**
** Bounds are intervals of int64 with INT64_MIN / INT64_MAX standing for an
** unknown end, computed in 128-bit arithmetic so that overflow widens an
** interval instead of wrapping.  Coefficient arithmetic that would overflow
** keeps the offending expression as an atom instead.
**
** Temporary linear forms live in an arena made for each top-level call;
** expressions are built in the caller's module (or, for calls without one,
** a scratch module made for the call).
*/
#include "lower/arith.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "lower/tir_visit.h"

#define NEG_INF INT64_MIN
#define POS_INF INT64_MAX
/* Deepest chain of variable domains followed (a domain may name another
** bound variable); deeper chains, and cycles, give unknown bounds. */
#define MAX_DOMAIN_DEPTH 24

typedef struct domain {
  const mlc_tir_var *var;
  const mlc_tir_expr *min, *extent;
} domain;

struct mlc_arith {
  mlc_allocator alloc;
  MLC_VEC(domain) doms; /* a stack: the latest binding of a variable wins */
  mlc_arena *keep;      /* iterator map results */
};

static int is_index(mlc_dtype t) { return t == MLC_DTYPE_I64; }

/* ---- analyzer --------------------------------------------------------------- */

mlc_status mlc_arith_create(mlc_allocator a, mlc_arith **out) {
  *out = NULL;
  mlc_arith *an = mlc_calloc(a, 1, sizeof *an);
  if (!an) return mlc_oom();
  an->alloc = a;
  an->keep = mlc_arena_create(a);
  if (!an->keep) {
    mlc_free(a, an, sizeof *an);
    return mlc_oom();
  }
  *out = an;
  return NULL;
}

void mlc_arith_destroy(mlc_arith *an) {
  if (!an) return;
  mlc_vec_free(&an->doms);
  mlc_arena_destroy(an->keep);
  mlc_free(an->alloc, an, sizeof *an);
}

mlc_status mlc_arith_bind(mlc_arith *an, const mlc_tir_var *v, const mlc_tir_expr *min,
                          const mlc_tir_expr *extent) {
  if (!v || !min || !extent) return mlc_make_status(MLC_INVALID_ARGUMENT, "arith: bind of a NULL variable or domain");
  if (!is_index(v->dtype) || !is_index(min->dtype) || !is_index(extent->dtype))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "arith: bind %s: the variable and its domain must be int64",
                           v->name);
  domain d = {v, min, extent};
  if (mlc_vec_push(&an->doms, d)) return mlc_oom();
  return NULL;
}

mlc_status mlc_arith_bind_c(mlc_arith *an, const mlc_tir_var *v, int64_t min, int64_t extent) {
  /* constants that outlive any module: kept in the analyzer's arena */
  mlc_tir_expr *e = mlc_arena_array(an->keep, 2, sizeof *e);
  if (!e) return mlc_oom();
  e[0].kind = e[1].kind = MLC_TIR_INT_IMM;
  e[0].dtype = e[1].dtype = MLC_DTYPE_I64;
  e[0].lanes = e[1].lanes = 1;
  e[0].int_value = min;
  e[1].int_value = extent;
  return mlc_arith_bind(an, v, &e[0], &e[1]);
}

void mlc_arith_unbind(mlc_arith *an, const mlc_tir_var *v) {
  for (size_t i = an->doms.len; i-- > 0;)
    if (an->doms.data[i].var == v) {
      memmove(&an->doms.data[i], &an->doms.data[i + 1], sizeof(domain) * (an->doms.len - i - 1));
      an->doms.len--;
      return;
    }
}

int mlc_arith_mark(const mlc_arith *an) { return (int)an->doms.len; }

void mlc_arith_restore(mlc_arith *an, int mark) {
  if (mark >= 0 && (size_t)mark < an->doms.len) an->doms.len = (size_t)mark;
}

static const domain *find_domain(const mlc_arith *an, const mlc_tir_var *v) {
  for (size_t i = an->doms.len; i-- > 0;)
    if (an->doms.data[i].var == v) return &an->doms.data[i];
  return NULL;
}

/* ---- int64 helpers ---------------------------------------------------------- */

static int64_t fdiv(int64_t a, int64_t b) {
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
static int64_t fmod_(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static int64_t gcd64(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a, y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
  while (y) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return x > (uint64_t)INT64_MAX ? 0 : (int64_t)x;
}

/* ---- bounds ------------------------------------------------------------------ */

typedef struct bnd {
  int64_t lo, hi; /* NEG_INF / POS_INF: unknown */
} bnd;

static const bnd UNKNOWN = {NEG_INF, POS_INF};

/* Clamps a 128-bit value to a bound end (out of range: unknown). */
static int64_t clamp_lo(__int128 v) { return v <= (__int128)NEG_INF || v > (__int128)POS_INF ? NEG_INF : (int64_t)v; }
static int64_t clamp_hi(__int128 v) { return v >= (__int128)POS_INF || v < (__int128)NEG_INF ? POS_INF : (int64_t)v; }

static bnd b_const(int64_t v) {
  bnd b = {v, v};
  if (v == NEG_INF || v == POS_INF) b = UNKNOWN;
  return b;
}

static bnd b_add(bnd a, bnd b) {
  bnd r;
  r.lo = (a.lo == NEG_INF || b.lo == NEG_INF) ? NEG_INF : clamp_lo((__int128)a.lo + b.lo);
  r.hi = (a.hi == POS_INF || b.hi == POS_INF) ? POS_INF : clamp_hi((__int128)a.hi + b.hi);
  return r;
}

static bnd b_scale(bnd a, int64_t c) {
  bnd r;
  if (c == 0) return b_const(0);
  if (c > 0) {
    r.lo = a.lo == NEG_INF ? NEG_INF : clamp_lo((__int128)a.lo * c);
    r.hi = a.hi == POS_INF ? POS_INF : clamp_hi((__int128)a.hi * c);
  } else {
    r.lo = a.hi == POS_INF ? NEG_INF : clamp_lo((__int128)a.hi * c);
    r.hi = a.lo == NEG_INF ? POS_INF : clamp_hi((__int128)a.lo * c);
  }
  return r;
}

static bnd b_mul(bnd a, bnd b) {
  if (a.lo == a.hi && a.lo != NEG_INF) return b_scale(b, a.lo);
  if (b.lo == b.hi && b.lo != NEG_INF) return b_scale(a, b.lo);
  if (a.lo == NEG_INF || a.hi == POS_INF || b.lo == NEG_INF || b.hi == POS_INF) return UNKNOWN;
  __int128 p[4] = {(__int128)a.lo * b.lo, (__int128)a.lo * b.hi, (__int128)a.hi * b.lo,
                   (__int128)a.hi * b.hi};
  __int128 mn = p[0], mx = p[0];
  for (int i = 1; i < 4; i++) {
    if (p[i] < mn) mn = p[i];
    if (p[i] > mx) mx = p[i];
  }
  bnd r = {clamp_lo(mn), clamp_hi(mx)};
  return r;
}

static bnd b_union(bnd a, bnd b) {
  bnd r = {a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
  return r;
}

static bnd b_intersect(bnd a, bnd b) {
  bnd r = {a.lo > b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi};
  return r;
}

static bnd b_fdiv(bnd a, int64_t c) { /* c != 0 */
  bnd r;
  if (c > 0) {
    r.lo = a.lo == NEG_INF ? NEG_INF : fdiv(a.lo, c);
    r.hi = a.hi == POS_INF ? POS_INF : fdiv(a.hi, c);
  } else {
    r.lo = a.hi == POS_INF ? NEG_INF : fdiv(a.hi, c);
    r.hi = a.lo == NEG_INF ? POS_INF : fdiv(a.lo, c);
  }
  return r;
}

static bnd b_fmod(bnd a, int64_t c) { /* c != 0 */
  if (c > 0 && a.lo != NEG_INF && a.hi != POS_INF && fdiv(a.lo, c) == fdiv(a.hi, c)) {
    bnd r = {fmod_(a.lo, c), fmod_(a.hi, c)};
    return r;
  }
  bnd r = c > 0 ? (bnd){0, c - 1} : (bnd){c + 1, 0};
  return r;
}

/* The range of values of integer dtype |t|. */
static bnd b_dtype(mlc_dtype t) {
  switch (t) {
    case MLC_DTYPE_BOOL: return (bnd){0, 1};
    case MLC_DTYPE_I8: return (bnd){INT8_MIN, INT8_MAX};
    case MLC_DTYPE_I16: return (bnd){INT16_MIN, INT16_MAX};
    case MLC_DTYPE_I32: return (bnd){INT32_MIN, INT32_MAX};
    case MLC_DTYPE_U8: return (bnd){0, UINT8_MAX};
    case MLC_DTYPE_U16: return (bnd){0, UINT16_MAX};
    case MLC_DTYPE_U32: return (bnd){0, UINT32_MAX};
    case MLC_DTYPE_U64: return (bnd){0, POS_INF};
    default: return UNKNOWN;
  }
}

static bnd bound_expr(const mlc_arith *an, const mlc_tir_expr *e, int depth);

static bnd bound_var(const mlc_arith *an, const mlc_tir_var *v, int depth) {
  const domain *d = find_domain(an, v);
  if (!d || depth > MAX_DOMAIN_DEPTH) return b_dtype(v->dtype);
  bnd mn = bound_expr(an, d->min, depth + 1), ext = bound_expr(an, d->extent, depth + 1);
  bnd r = {mn.lo, POS_INF};
  if (mn.hi != POS_INF && ext.hi != POS_INF) r.hi = clamp_hi((__int128)mn.hi + ext.hi - 1);
  return b_intersect(r, b_dtype(v->dtype));
}

static bnd bound_expr(const mlc_arith *an, const mlc_tir_expr *e, int depth) {
  if (!e || !(mlc_dtype_is_int(e->dtype) || e->dtype == MLC_DTYPE_BOOL) || e->lanes > 1) return UNKNOWN;
  bnd r = UNKNOWN;
  switch (e->kind) {
    case MLC_TIR_INT_IMM: return b_const(e->int_value);
    case MLC_TIR_VAR_REF: return bound_var(an, e->var, depth);
    case MLC_TIR_BINARY: {
      mlc_tir_binop op = e->bin.op;
      if (e->dtype == MLC_DTYPE_BOOL) return b_dtype(MLC_DTYPE_BOOL);
      if (!is_index(e->dtype)) return b_dtype(e->dtype); /* narrow ints wrap */
      bnd a = bound_expr(an, e->bin.a, depth), b = bound_expr(an, e->bin.b, depth);
      switch (op) {
        case MLC_TIR_ADD: return b_add(a, b);
        case MLC_TIR_SUB: return b_add(a, b_scale(b, -1));
        case MLC_TIR_MUL: return b_mul(a, b);
        case MLC_TIR_DIV:
        case MLC_TIR_FLOORDIV:
          if (b.lo == b.hi && b.lo != 0 && b.lo != NEG_INF) return b_fdiv(a, b.lo);
          if (b.lo > 0 && a.lo >= 0) return (bnd){0, a.hi};
          return UNKNOWN;
        case MLC_TIR_FLOORMOD:
          if (b.lo == b.hi && b.lo != 0 && b.lo != NEG_INF) return b_fmod(a, b.lo);
          if (b.lo > 0 && b.hi != POS_INF) return (bnd){0, b.hi - 1};
          return UNKNOWN;
        case MLC_TIR_TRUNCDIV:
          if (a.lo >= 0 && b.lo == b.hi && b.lo > 0) return b_fdiv(a, b.lo);
          return UNKNOWN;
        case MLC_TIR_TRUNCMOD:
          if (a.lo >= 0 && b.lo == b.hi && b.lo > 0) return b_fmod(a, b.lo);
          if (b.lo == b.hi && b.lo > 0) return (bnd){-(b.lo - 1), b.lo - 1};
          return UNKNOWN;
        case MLC_TIR_MIN: return (bnd){a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi};
        case MLC_TIR_MAX: return (bnd){a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
        case MLC_TIR_AND:
          if (a.lo >= 0 && b.lo >= 0) return (bnd){0, a.hi < b.hi ? a.hi : b.hi};
          return UNKNOWN;
        default: return UNKNOWN;
      }
    }
    case MLC_TIR_SELECT:
      return b_union(bound_expr(an, e->select.t, depth), bound_expr(an, e->select.f, depth));
    case MLC_TIR_CAST:
      if (mlc_dtype_is_int(e->un.a->dtype) || e->un.a->dtype == MLC_DTYPE_BOOL) {
        bnd a = bound_expr(an, e->un.a, depth), t = b_dtype(e->dtype);
        /* a value that fits the target keeps its bound; else the target's range */
        if (a.lo >= t.lo && a.hi <= t.hi && (t.lo >= 0 || a.lo != NEG_INF)) return a;
      }
      return b_dtype(e->dtype);
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_NOT:
    case MLC_TIR_LOAD:
    case MLC_TIR_CALL:
    case MLC_TIR_REDUCE:
    case MLC_TIR_RAMP: /* vectors are refused above */
    case MLC_TIR_BROADCAST: return b_dtype(e->dtype);
  }
  return r;
}

/* ---- linear forms -------------------------------------------------------------- */

typedef struct term {
  mlc_tir_expr *atom;
  int64_t coef;
} term;

typedef struct lin {
  term *t;
  int n, cap;
  int64_t c;
} lin;

typedef struct sctx {
  mlc_arith *an;
  mlc_tir_module *m;
  mlc_arena *tmp;
  int failed; /* out of memory */
} sctx;

static mlc_tir_expr *simp(sctx *c, const mlc_tir_expr *e);
static int to_lin(sctx *c, const mlc_tir_expr *e, lin *out);
static mlc_tir_expr *from_lin(sctx *c, const lin *l);

static int lin_reserve(sctx *c, lin *l, int need) {
  if (need <= l->cap) return 0;
  int cap = l->cap ? l->cap * 2 : 4;
  while (cap < need) cap *= 2;
  term *t = MLC_ARENA_ARRAY(c->tmp, (size_t)cap, term);
  if (!t) {
    c->failed = 1;
    return -1;
  }
  if (l->n) memcpy(t, l->t, sizeof *t * (size_t)l->n);
  l->t = t;
  l->cap = cap;
  return 0;
}

static void lin_init(lin *l) { memset(l, 0, sizeof *l); }

static int lin_is_const(const lin *l) { return l->n == 0; }

/* l += coef * atom.  Returns -1 on overflow / oom. */
static int lin_add_term(sctx *c, lin *l, mlc_tir_expr *atom, int64_t coef) {
  if (coef == 0) return 0;
  for (int i = 0; i < l->n; i++)
    if (mlc_tir_expr_equal(l->t[i].atom, atom)) {
      int64_t s;
      if (__builtin_add_overflow(l->t[i].coef, coef, &s)) return -1;
      if (s == 0) {
        memmove(&l->t[i], &l->t[i + 1], sizeof(term) * (size_t)(l->n - i - 1));
        l->n--;
      } else {
        l->t[i].coef = s;
      }
      return 0;
    }
  if (lin_reserve(c, l, l->n + 1)) return -1;
  l->t[l->n].atom = atom;
  l->t[l->n].coef = coef;
  l->n++;
  return 0;
}

/* l += k * r.  -1 on overflow / oom. */
static int lin_add(sctx *c, lin *l, const lin *r, int64_t k) {
  int64_t v;
  if (__builtin_mul_overflow(r->c, k, &v) || __builtin_add_overflow(l->c, v, &l->c)) return -1;
  for (int i = 0; i < r->n; i++) {
    if (__builtin_mul_overflow(r->t[i].coef, k, &v)) return -1;
    if (lin_add_term(c, l, r->t[i].atom, v)) return -1;
  }
  return 0;
}

static int lin_copy(sctx *c, lin *dst, const lin *src) {
  lin_init(dst);
  return lin_add(c, dst, src, 1);
}

static bnd lin_bound(sctx *c, const lin *l) {
  bnd r = b_const(l->c);
  for (int i = 0; i < l->n && (r.lo != NEG_INF || r.hi != POS_INF); i++)
    r = b_add(r, b_scale(bound_expr(c->an, l->t[i].atom, 0), l->t[i].coef));
  return r;
}

/* gcd of the coefficients (0 for none). */
static int64_t lin_gcd(const lin *l) {
  int64_t g = 0;
  for (int i = 0; i < l->n; i++) g = gcd64(g, l->t[i].coef);
  return g;
}

static int is_binop_c(const mlc_tir_expr *e, mlc_tir_binop op, int64_t *k) {
  if (e->kind != MLC_TIR_BINARY || e->bin.op != op || e->bin.b->kind != MLC_TIR_INT_IMM) return 0;
  *k = e->bin.b->int_value;
  return *k > 0;
}

static int mod_lin(sctx *c, const lin *a, int64_t d, lin *out);
static int lin_atom(sctx *c, mlc_tir_expr *e, lin *out);

/* Recombines k * (x // d) * d + k * (x % d) into k * x, and
** k * ((x % e) // d) * d + k * (x % d) into k * (x % e) when d divides e.
** Returns -1 on failure. */
static int lin_merge_divmod(sctx *c, lin *l) {
  for (int changed = 1; changed;) {
    changed = 0;
    /* k * x - k * d * (x // d) -> k * (x % d) */
    for (int j = 0; j < l->n && !changed; j++) {
      int64_t d, kd;
      const mlc_tir_expr *div = l->t[j].atom;
      if (!is_binop_c(div, MLC_TIR_FLOORDIV, &d)) continue;
      for (int i = 0; i < l->n; i++) {
        int64_t k = l->t[i].coef;
        if (i == j || !mlc_tir_expr_equal(l->t[i].atom, div->bin.a) || __builtin_mul_overflow(k, -d, &kd) ||
            kd != l->t[j].coef)
          continue;
        lin x, mod;
        if (lin_atom(c, l->t[i].atom, &x) || mod_lin(c, &x, d, &mod)) return -1;
        int a = i < j ? i : j, b = i < j ? j : i;
        memmove(&l->t[b], &l->t[b + 1], sizeof(term) * (size_t)(l->n - b - 1));
        l->n--;
        memmove(&l->t[a], &l->t[a + 1], sizeof(term) * (size_t)(l->n - a - 1));
        l->n--;
        if (lin_add(c, l, &mod, k)) return -1;
        changed = 1;
        break;
      }
    }
    for (int i = 0; i < l->n && !changed; i++) {
      int64_t d, e2;
      const mlc_tir_expr *mod = l->t[i].atom;
      if (!is_binop_c(mod, MLC_TIR_FLOORMOD, &d)) continue;
      const mlc_tir_expr *x = mod->bin.a;
      int64_t k = l->t[i].coef, kd;
      if (__builtin_mul_overflow(k, d, &kd)) continue;
      for (int j = 0; j < l->n; j++) {
        const mlc_tir_expr *div = l->t[j].atom;
        int64_t d2;
        if (j == i || l->t[j].coef != kd || !is_binop_c(div, MLC_TIR_FLOORDIV, &d2) || d2 != d) continue;
        const mlc_tir_expr *y = div->bin.a, *whole = NULL;
        if (mlc_tir_expr_equal(y, x))
          whole = x;
        else if (is_binop_c(y, MLC_TIR_FLOORMOD, &e2) && e2 % d == 0 && mlc_tir_expr_equal(y->bin.a, x))
          whole = y;
        if (!whole) continue;
        lin w;
        lin_init(&w);
        if (to_lin(c, whole, &w)) return -1;
        /* drop terms i and j, then add k * whole */
        int a = i < j ? i : j, b = i < j ? j : i;
        memmove(&l->t[b], &l->t[b + 1], sizeof(term) * (size_t)(l->n - b - 1));
        l->n--;
        memmove(&l->t[a], &l->t[a + 1], sizeof(term) * (size_t)(l->n - a - 1));
        l->n--;
        if (lin_add(c, l, &w, k)) return -1;
        changed = 1;
        break;
      }
    }
  }
  return 0;
}

/* An atom for |e| (already simplified): its linear form is 1 * e. */
static int lin_atom(sctx *c, mlc_tir_expr *e, lin *out) {
  lin_init(out);
  if (!e) {
    c->failed = 1;
    return -1;
  }
  if (e->kind == MLC_TIR_INT_IMM) {
    out->c = e->int_value;
    return 0;
  }
  return lin_add_term(c, out, e, 1);
}

static mlc_tir_expr *mk_div(sctx *c, mlc_tir_binop op, const lin *num, int64_t d) {
  return mlc_tir_binary(c->m, op, from_lin(c, num), mlc_tir_i64(c->m, d));
}

static int div_lin(sctx *c, const lin *a, int64_t d, lin *out);

/* Splits |a| by |d| > 0 into q (terms d divides, divided, and the constant's
** quotient) and r (the other terms plus the constant's remainder in [0, d)). */
static int split_by(sctx *c, const lin *a, int64_t d, lin *q, lin *r) {
  lin_init(q);
  lin_init(r);
  q->c = fdiv(a->c, d);
  r->c = fmod_(a->c, d);
  for (int i = 0; i < a->n; i++) {
    int64_t k = a->t[i].coef;
    if (k % d == 0) {
      if (lin_add_term(c, q, a->t[i].atom, k / d)) return -1;
    } else if (lin_add_term(c, r, a->t[i].atom, k)) {
      return -1;
    }
  }
  return 0;
}

/* Finds a factor h > 1 of |d| and a split r = h*big + small with small in
** [0, h) (by its bound): then r // d == big // (d/h) and r % d ==
** h * (big % (d/h)) + small.  Tries the largest h first.  0 when found, 1
** when not, -1 on failure. */
static int factor_split(sctx *c, const lin *r, int64_t d, int64_t *h_out, lin *big, lin *small) {
  int64_t best = 0;
  for (;;) {
    int64_t h = 0; /* the largest candidate below |best| */
    for (int i = 0; i < r->n; i++) {
      int64_t g = gcd64(r->t[i].coef, d);
      if (g > 1 && (best == 0 || g < best) && g > h) h = g;
    }
    if (h == 0) return 1;
    best = h;
    lin_init(big);
    lin_init(small);
    small->c = r->c;
    for (int i = 0; i < r->n; i++) {
      int64_t k = r->t[i].coef;
      if (k % h == 0 ? lin_add_term(c, big, r->t[i].atom, k / h) : lin_add_term(c, small, r->t[i].atom, k))
        return -1;
    }
    bnd b = lin_bound(c, small);
    if (b.lo >= 0 && b.hi < h) {
      *h_out = h;
      return 0;
    }
  }
}

/* out = a // d, d > 0 */
static int div_lin(sctx *c, const lin *a, int64_t d, lin *out) {
  lin q, r;
  if (split_by(c, a, d, &q, &r)) return -1;
  *out = q;
  if (lin_is_const(&r)) return 0; /* r->c < d */
  bnd b = lin_bound(c, &r);
  if (b.lo != NEG_INF && b.hi != POS_INF && fdiv(b.lo, d) == fdiv(b.hi, d)) {
    int64_t k = fdiv(b.lo, d);
    return __builtin_add_overflow(out->c, k, &out->c) ? -1 : 0;
  }
  int64_t h;
  lin big, small;
  if (factor_split(c, &r, d, &h, &big, &small) == 0) { /* (h*T + s) // (h*d') == T // d' */
    lin sub;
    if (div_lin(c, &big, d / h, &sub)) return -1;
    return lin_add(c, out, &sub, 1);
  }
  if (c->failed) return -1;
  int64_t d1, dd;
  if (r.n == 1 && r.t[0].coef == 1 && r.c == 0 && is_binop_c(r.t[0].atom, MLC_TIR_FLOORDIV, &d1) &&
      !__builtin_mul_overflow(d1, d, &dd)) { /* (y // d1) // d == y // (d1*d) */
    lin y, sub;
    if (to_lin(c, r.t[0].atom->bin.a, &y) || div_lin(c, &y, dd, &sub)) return -1;
    return lin_add(c, out, &sub, 1);
  }
  lin at;
  if (lin_atom(c, mk_div(c, MLC_TIR_FLOORDIV, &r, d), &at)) return -1;
  return lin_add(c, out, &at, 1);
}

/* out = a % d, d > 0 */
static int mod_lin(sctx *c, const lin *a, int64_t d, lin *out) {
  lin q, r;
  if (split_by(c, a, d, &q, &r)) return -1;
  if (lin_is_const(&r)) {
    *out = r;
    return 0;
  }
  bnd b = lin_bound(c, &r);
  if (b.lo != NEG_INF && b.hi != POS_INF && fdiv(b.lo, d) == fdiv(b.hi, d)) {
    int64_t k = fdiv(b.lo, d), kd;
    if (__builtin_mul_overflow(k, d, &kd) || __builtin_sub_overflow(r.c, kd, &r.c)) return -1;
    *out = r;
    return 0;
  }
  int64_t h;
  lin big, small;
  if (factor_split(c, &r, d, &h, &big, &small) == 0) { /* (h*T + s) % (h*d') == h * (T % d') + s */
    lin sub;
    if (mod_lin(c, &big, d / h, &sub)) return -1;
    lin_init(out);
    return lin_add(c, out, &sub, h) || lin_add(c, out, &small, 1) ? -1 : 0;
  }
  if (c->failed) return -1;
  int64_t d1;
  if (r.n == 1 && r.t[0].coef == 1 && r.c == 0 && is_binop_c(r.t[0].atom, MLC_TIR_FLOORMOD, &d1) &&
      d1 % d == 0) { /* (y % d1) % d == y % d when d divides d1 */
    lin y;
    if (to_lin(c, r.t[0].atom->bin.a, &y)) return -1;
    return mod_lin(c, &y, d, out);
  }
  return lin_atom(c, mk_div(c, MLC_TIR_FLOORMOD, &r, d), out);
}

/* The linear form of int64 expression |e|, simplified.  -1 on failure
** (c->failed set for out-of-memory; else an overflow: the caller keeps |e|
** as an atom). */
static int to_lin_(sctx *c, const mlc_tir_expr *e, lin *out) {
  lin_init(out);
  switch (e->kind) {
    case MLC_TIR_INT_IMM: out->c = e->int_value; return 0;
    case MLC_TIR_VAR_REF: return lin_add_term(c, out, (mlc_tir_expr *)e, 1);
    case MLC_TIR_BINARY: break;
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_NOT:
    case MLC_TIR_SELECT:
    case MLC_TIR_CAST:
    case MLC_TIR_LOAD:
    case MLC_TIR_CALL:
    case MLC_TIR_REDUCE:
    case MLC_TIR_RAMP:      /* vectors: scalar expressions hold none, */
    case MLC_TIR_BROADCAST: /* and simp keeps them as they are */ {
      mlc_tir_expr *r = simp(c, e);
      if (!r) return -1;
      if (r->kind == MLC_TIR_INT_IMM || (r->kind == MLC_TIR_BINARY && r != e)) return to_lin(c, r, out);
      return lin_atom(c, r, out);
    }
  }
  lin a, b;
  mlc_tir_binop op = e->bin.op;
  if (e->bin.a->dtype != e->dtype || e->bin.b->dtype != e->dtype) return lin_atom(c, simp(c, e), out);
  switch (op) {
    case MLC_TIR_ADD:
    case MLC_TIR_SUB:
      if (to_lin(c, e->bin.a, &a) || to_lin(c, e->bin.b, &b) || lin_copy(c, out, &a) ||
          lin_add(c, out, &b, op == MLC_TIR_ADD ? 1 : -1))
        return -1;
      return lin_merge_divmod(c, out);
    case MLC_TIR_MUL:
      if (to_lin(c, e->bin.a, &a) || to_lin(c, e->bin.b, &b)) return -1;
      if (lin_is_const(&a)) return lin_add(c, out, &b, a.c);
      if (lin_is_const(&b)) return lin_add(c, out, &a, b.c);
      return lin_atom(c, mlc_tir_mul(c->m, from_lin(c, &a), from_lin(c, &b)), out);
    case MLC_TIR_DIV:
    case MLC_TIR_FLOORDIV:
    case MLC_TIR_FLOORMOD:
    case MLC_TIR_TRUNCDIV:
    case MLC_TIR_TRUNCMOD: {
      if (to_lin(c, e->bin.a, &a) || to_lin(c, e->bin.b, &b)) return -1;
      int trunc = op == MLC_TIR_TRUNCDIV || op == MLC_TIR_TRUNCMOD;
      int is_div = op == MLC_TIR_DIV || op == MLC_TIR_FLOORDIV || op == MLC_TIR_TRUNCDIV;
      if (lin_is_const(&b) && b.c > 0 && (!trunc || lin_bound(c, &a).lo >= 0))
        return is_div ? div_lin(c, &a, b.c, out) : mod_lin(c, &a, b.c, out);
      mlc_tir_binop bop = op == MLC_TIR_DIV ? MLC_TIR_FLOORDIV : op;
      return lin_atom(c, mlc_tir_binary(c->m, bop, from_lin(c, &a), from_lin(c, &b)), out);
    }
    case MLC_TIR_MIN:
    case MLC_TIR_MAX: {
      if (to_lin(c, e->bin.a, &a) || to_lin(c, e->bin.b, &b)) return -1;
      lin d;
      if (lin_copy(c, &d, &a) || lin_add(c, &d, &b, -1) || lin_merge_divmod(c, &d)) return -1;
      bnd db = lin_bound(c, &d);
      int pick_a = op == MLC_TIR_MIN ? db.hi <= 0 : db.lo >= 0;
      int pick_b = op == MLC_TIR_MIN ? db.lo >= 0 : db.hi <= 0;
      if (pick_a) return lin_copy(c, out, &a);
      if (pick_b) return lin_copy(c, out, &b);
      return lin_atom(c, mlc_tir_binary(c->m, op, from_lin(c, &a), from_lin(c, &b)), out);
    }
    default: return lin_atom(c, simp(c, e), out);
  }
}

static int to_lin(sctx *c, const mlc_tir_expr *e, lin *out) {
  if (c->failed) return -1;
  if (to_lin_(c, e, out) == 0) return 0;
  if (c->failed) return -1;
  /* overflow: keep |e| as an atom, its operands simplified one by one */
  mlc_tir_expr *r = e->kind == MLC_TIR_BINARY
                        ? mlc_tir_binary(c->m, e->bin.op, simp(c, e->bin.a), simp(c, e->bin.b))
                        : (mlc_tir_expr *)e;
  if (!r) {
    c->failed = 1;
    return -1;
  }
  lin_init(out);
  if (r->kind == MLC_TIR_INT_IMM) {
    out->c = r->int_value;
    return 0;
  }
  return lin_add_term(c, out, r, 1);
}

static mlc_tir_expr *scaled(sctx *c, mlc_tir_expr *atom, int64_t k) {
  return k == 1 ? atom : mlc_tir_mul(c->m, atom, mlc_tir_i64(c->m, k));
}

/* Builds the expression of |l|: terms with a positive coefficient in order,
** then those with a negative one, the constant last. */
static mlc_tir_expr *from_lin(sctx *c, const lin *l) {
  mlc_tir_module *m = c->m;
  mlc_tir_expr *acc = NULL;
  for (int i = 0; i < l->n; i++)
    if (l->t[i].coef > 0) {
      mlc_tir_expr *t = scaled(c, l->t[i].atom, l->t[i].coef);
      acc = acc ? mlc_tir_add(m, acc, t) : t;
    }
  int has_neg = 0;
  for (int i = 0; i < l->n; i++) has_neg |= l->t[i].coef < 0;
  int64_t k = l->c;
  if (!acc && has_neg && k > 0) { /* c - a - b */
    acc = mlc_tir_i64(m, k);
    k = 0;
  }
  for (int i = 0; i < l->n; i++)
    if (l->t[i].coef < 0) {
      int64_t cf = l->t[i].coef;
      if (!acc) {
        acc = mlc_tir_mul(m, l->t[i].atom, mlc_tir_i64(m, cf));
      } else if (cf == INT64_MIN) {
        acc = mlc_tir_add(m, acc, mlc_tir_mul(m, l->t[i].atom, mlc_tir_i64(m, cf)));
      } else {
        acc = mlc_tir_sub(m, acc, scaled(c, l->t[i].atom, -cf));
      }
    }
  if (!acc) return mlc_tir_i64(m, k);
  if (k > 0 || k == INT64_MIN) return mlc_tir_add(m, acc, mlc_tir_i64(m, k));
  if (k < 0) return mlc_tir_sub(m, acc, mlc_tir_i64(m, -k));
  return acc;
}

/* ---- the simplifier over any expression ------------------------------------------- */

static mlc_tir_expr *bool_const(sctx *c, int v) { return mlc_tir_int(c->m, MLC_DTYPE_BOOL, v != 0); }

/* A comparison of int64 operands: decided from the bound of a - b, else
** rebuilt over the simplified operands. */
static mlc_tir_expr *simp_cmp(sctx *c, const mlc_tir_expr *e) {
  lin a, b, d;
  if (to_lin(c, e->bin.a, &a) || to_lin(c, e->bin.b, &b) || lin_copy(c, &d, &a) || lin_add(c, &d, &b, -1) ||
      lin_merge_divmod(c, &d)) {
    if (c->failed) return NULL;
    return mlc_tir_binary(c->m, e->bin.op, simp(c, e->bin.a), simp(c, e->bin.b));
  }
  bnd r = lin_bound(c, &d);
  int known = -1; /* 1 true, 0 false, -1 unknown */
  switch (e->bin.op) {
    case MLC_TIR_LT: known = r.hi < 0 ? 1 : r.lo >= 0 ? 0 : -1; break;
    case MLC_TIR_LE: known = r.hi <= 0 ? 1 : r.lo > 0 ? 0 : -1; break;
    case MLC_TIR_GT: known = r.lo > 0 ? 1 : r.hi <= 0 ? 0 : -1; break;
    case MLC_TIR_GE: known = r.lo >= 0 ? 1 : r.hi < 0 ? 0 : -1; break;
    case MLC_TIR_EQ:
    case MLC_TIR_NE: {
      int eq = -1;
      if (lin_is_const(&d)) eq = d.c == 0;
      else if (r.lo > 0 || r.hi < 0) eq = 0;
      else {
        int64_t g = lin_gcd(&d);
        if (g > 1 && d.c % g != 0) eq = 0; /* g*T + c == 0 has no solution */
      }
      known = eq < 0 ? -1 : (e->bin.op == MLC_TIR_EQ ? eq : !eq);
      break;
    }
    default: break;
  }
  if (known >= 0) return bool_const(c, known);
  return mlc_tir_binary(c->m, e->bin.op, from_lin(c, &a), from_lin(c, &b));
}

static mlc_tir_expr **simp_list(sctx *c, int n, mlc_tir_expr *const *v) {
  if (n <= 0) return NULL;
  mlc_tir_expr **r = MLC_ARENA_ARRAY(c->m->arena, (size_t)n, mlc_tir_expr *);
  if (!r) return NULL;
  for (int i = 0; i < n; i++)
    if (!(r[i] = simp(c, v[i]))) return NULL;
  return r;
}

static mlc_tir_expr *simp(sctx *c, const mlc_tir_expr *e) {
  mlc_tir_module *m = c->m;
  if (!e || c->failed) return NULL;
  mlc_tir_expr *self = (mlc_tir_expr *)e; /* leaves are shared with the input */
  if (e->lanes > 1) return self; /* vectors (after vectorize) are not simplified */
  mlc_tir_expr *r = NULL;
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF: return self;
    case MLC_TIR_BINARY: {
      mlc_tir_binop op = e->bin.op;
      mlc_dtype at = e->bin.a->dtype;
      if (is_index(e->dtype) && at == e->dtype && e->bin.b->dtype == at && op != MLC_TIR_AND &&
          op != MLC_TIR_OR) {
        lin l;
        if (to_lin(c, e, &l)) return NULL;
        r = from_lin(c, &l);
        break;
      }
      if (is_index(at) && e->bin.b->dtype == at && e->dtype == MLC_DTYPE_BOOL && op >= MLC_TIR_EQ &&
          op <= MLC_TIR_GE) {
        r = simp_cmp(c, e);
        break;
      }
      mlc_tir_expr *a = simp(c, e->bin.a);
      if (!a) return NULL;
      if (e->dtype == MLC_DTYPE_BOOL && (op == MLC_TIR_AND || op == MLC_TIR_OR) &&
          a->kind == MLC_TIR_INT_IMM) { /* short-circuit on a decided left side */
        int v = a->int_value != 0;
        if (op == MLC_TIR_AND && !v) return bool_const(c, 0);
        if (op == MLC_TIR_OR && v) return bool_const(c, 1);
        return simp(c, e->bin.b);
      }
      mlc_tir_expr *b = simp(c, e->bin.b);
      if (!b) return NULL;
      if (e->dtype == MLC_DTYPE_BOOL && (op == MLC_TIR_AND || op == MLC_TIR_OR) &&
          b->kind == MLC_TIR_INT_IMM) {
        int v = b->int_value != 0;
        if (op == MLC_TIR_AND) return v ? a : bool_const(c, 0);
        return v ? bool_const(c, 1) : a;
      }
      r = mlc_tir_binary(m, op, a, b);
      break;
    }
    case MLC_TIR_NOT: r = mlc_tir_not(m, simp(c, e->un.a)); break;
    case MLC_TIR_CAST: r = mlc_tir_cast(m, e->dtype, simp(c, e->un.a)); break;
    case MLC_TIR_SELECT: {
      mlc_tir_expr *cond = simp(c, e->select.c);
      if (!cond) return NULL;
      if (cond->kind == MLC_TIR_INT_IMM) return simp(c, cond->int_value ? e->select.t : e->select.f);
      mlc_tir_expr *t = simp(c, e->select.t), *f = t ? simp(c, e->select.f) : NULL;
      if (!f) return NULL;
      r = mlc_tir_expr_equal(t, f) ? t : mlc_tir_select(m, cond, t, f);
      break;
    }
    case MLC_TIR_LOAD: {
      mlc_tir_expr **idx = simp_list(c, e->load.n, e->load.indices);
      if (e->load.n && !idx) return NULL;
      r = mlc_tir_load(m, e->load.buffer, e->load.n, idx);
      break;
    }
    case MLC_TIR_CALL: {
      mlc_tir_expr **args = simp_list(c, e->call.n, e->call.args);
      if (!args) return NULL;
      r = mlc_tir_call(m, e->call.op, e->call.n, args);
      if (r) r->dtype = e->dtype;
      break;
    }
    case MLC_TIR_REDUCE: {
      int n = e->reduce.naxes;
      int mark = mlc_arith_mark(c->an);
      for (int i = 0; i < n; i++)
        if (mlc_arith_bind(c->an, e->reduce.axes[i].var, e->reduce.axes[i].min, e->reduce.axes[i].extent)) {
          mlc_arith_restore(c->an, mark);
          c->failed = 1;
          return NULL;
        }
      mlc_tir_expr *src = simp(c, e->reduce.source);
      mlc_arith_restore(c->an, mark);
      r = mlc_tir_reduce(m, e->reduce.op, src, n, e->reduce.axes);
      break;
    }
    case MLC_TIR_RAMP:
    case MLC_TIR_BROADCAST: return self; /* vectors are kept above */
  }
  if (!r) c->failed = 1;
  return r;
}

/* ---- entry points ---------------------------------------------------------------- */

static int sctx_init(sctx *c, mlc_arith *an, mlc_tir_module *m) {
  c->an = an;
  c->m = m;
  c->failed = 0;
  c->tmp = mlc_arena_create(an->alloc);
  return c->tmp ? 0 : -1;
}

static void sctx_fini(sctx *c) { mlc_arena_destroy(c->tmp); }

mlc_tir_expr *mlc_arith_simplify(mlc_arith *an, mlc_tir_module *m, const mlc_tir_expr *e) {
  sctx c;
  if (!e || sctx_init(&c, an, m)) return NULL;
  mlc_tir_expr *r = simp(&c, e);
  sctx_fini(&c);
  return c.failed ? NULL : r;
}

/* A module for calls that build only temporaries.  NULL on oom. */
static mlc_tir_module *scratch(mlc_arith *an) {
  mlc_tir_module *m = NULL;
  mlc_status s = mlc_tir_module_create(an->alloc, &m);
  if (s) {
    mlc_status_free(s);
    return NULL;
  }
  return m;
}

int mlc_arith_const_bound(mlc_arith *an, const mlc_tir_expr *e, int64_t *lo, int64_t *hi) {
  bnd b = UNKNOWN;
  if (e && (mlc_dtype_is_int(e->dtype) || e->dtype == MLC_DTYPE_BOOL)) {
    b = bound_expr(an, e, 0);
    mlc_tir_module *m = scratch(an);
    sctx c;
    if (m && is_index(e->dtype) && !sctx_init(&c, an, m)) {
      lin l;
      if (!to_lin(&c, e, &l)) b = b_intersect(b, lin_bound(&c, &l));
      sctx_fini(&c);
    }
    mlc_tir_module_destroy(m);
  }
  *lo = b.lo;
  *hi = b.hi;
  return b.lo != NEG_INF && b.hi != POS_INF;
}

int mlc_arith_prove(mlc_arith *an, const mlc_tir_expr *cond) {
  if (!cond) return 0;
  mlc_tir_module *m = scratch(an);
  if (!m) return 0;
  mlc_tir_expr *r = mlc_arith_simplify(an, m, cond);
  int ok = r && r->kind == MLC_TIR_INT_IMM && r->int_value != 0;
  mlc_tir_module_destroy(m);
  return ok;
}

int mlc_arith_prove_equal(mlc_arith *an, const mlc_tir_expr *a, const mlc_tir_expr *b) {
  if (!a || !b) return 0;
  if (mlc_tir_expr_equal(a, b)) return 1;
  mlc_tir_module *m = scratch(an);
  if (!m) return 0;
  mlc_tir_expr *d = mlc_tir_sub(m, (mlc_tir_expr *)a, (mlc_tir_expr *)b);
  mlc_tir_expr *r = d ? mlc_arith_simplify(an, m, d) : NULL;
  int ok = r && mlc_tir_is_const(r, 0);
  mlc_tir_module_destroy(m);
  return ok;
}

/* ---- integer sets ------------------------------------------------------------------ */

typedef struct relax_set {
  int n;
  const mlc_tir_var *const *vars;
} relax_set;

static int relaxed(const relax_set *rs, const mlc_tir_var *v) {
  for (int i = 0; i < rs->n; i++)
    if (rs->vars[i] == v) return 1;
  return 0;
}

typedef struct uses_ctx {
  const relax_set *rs;
} uses_ctx;

static int uses_pre(void *ctx, const mlc_tir_expr *e) {
  uses_ctx *u = ctx;
  return (e->kind == MLC_TIR_VAR_REF && relaxed(u->rs, e->var)) ? MLC_TIR_VISIT_STOP : MLC_TIR_VISIT_CONTINUE;
}

static int uses_relaxed(const relax_set *rs, const mlc_tir_expr *e) {
  uses_ctx u = {rs};
  mlc_tir_visitor v = {0};
  v.ctx = &u;
  v.pre_expr = uses_pre;
  return mlc_tir_visit_expr(&v, e);
}

typedef struct set_ctx {
  sctx s;
  const relax_set *rs;
  mlc_status err;
  int depth;
} set_ctx;

static mlc_status set_err(set_ctx *c, const mlc_tir_expr *e, const char *why) {
  if (c->err) return c->err;
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_expr(e, &b);
  c->err = mlc_make_status(MLC_INVALID_ARGUMENT, "arith: no integer set for %s: %s", b.oom ? "?" : mlc_sb_str(&b), why);
  mlc_sb_fini(&b);
  return c->err;
}

static int lin_expr_set(set_ctx *c, const lin *l, lin *lo, lin *hi);

/* The [lo, hi] (linear forms over non-relaxed atoms) of atom |a|. */
static int atom_set(set_ctx *c, const mlc_tir_expr *a, lin *lo, lin *hi) {
  sctx *s = &c->s;
  int64_t k;
  if (++c->depth > MAX_DOMAIN_DEPTH) {
    set_err(c, a, "variable domains nest too deep");
    return -1;
  }
  int rc = -1;
  if (!uses_relaxed(c->rs, a)) {
    rc = lin_atom(s, (mlc_tir_expr *)a, lo) || lin_copy(s, hi, lo) ? -1 : 0;
  } else if (a->kind == MLC_TIR_VAR_REF) {
    const domain *d = find_domain(s->an, a->var);
    if (!d) {
      set_err(c, a, "a relaxed variable has no domain");
    } else {
      lin mn, ext, mlo, mhi, elo, ehi;
      if (!to_lin(s, d->min, &mn) && !to_lin(s, d->extent, &ext) && !lin_expr_set(c, &mn, &mlo, &mhi) &&
          !lin_expr_set(c, &ext, &elo, &ehi)) {
        /* v in [lo(min), hi(min) + hi(extent) - 1] */
        *lo = mlo;
        if (!lin_copy(s, hi, &mhi) && !lin_add(s, hi, &ehi, 1) && !__builtin_sub_overflow(hi->c, 1, &hi->c))
          rc = 0;
      }
    }
  } else if (is_binop_c(a, MLC_TIR_FLOORDIV, &k) || is_binop_c(a, MLC_TIR_FLOORMOD, &k)) {
    lin x, xlo, xhi, dlo, dhi;
    if (!to_lin(s, a->bin.a, &x) && !lin_expr_set(c, &x, &xlo, &xhi) && !div_lin(s, &xlo, k, &dlo) &&
        !div_lin(s, &xhi, k, &dhi)) {
      if (a->bin.op == MLC_TIR_FLOORDIV) {
        *lo = dlo;
        *hi = dhi;
        rc = 0;
      } else {
        lin diff;
        if (!lin_copy(s, &diff, &dhi) && !lin_add(s, &diff, &dlo, -1)) {
          if (lin_is_const(&diff) && diff.c == 0) { /* one period: x % k over [lo % k, hi % k] */
            rc = mod_lin(s, &xlo, k, lo) || mod_lin(s, &xhi, k, hi) ? -1 : 0;
          } else {
            lin_init(lo);
            lin_init(hi);
            hi->c = k - 1;
            rc = 0;
          }
        }
      }
    }
  } else if (a->kind == MLC_TIR_BINARY && (a->bin.op == MLC_TIR_MIN || a->bin.op == MLC_TIR_MAX)) {
    lin x, y, xlo, xhi, ylo, yhi;
    if (!to_lin(s, a->bin.a, &x) && !to_lin(s, a->bin.b, &y) && !lin_expr_set(c, &x, &xlo, &xhi) &&
        !lin_expr_set(c, &y, &ylo, &yhi)) {
      mlc_tir_module *m = s->m;
      mlc_tir_binop op = a->bin.op;
      mlc_tir_expr *el = mlc_tir_binary(m, op, from_lin(s, &xlo), from_lin(s, &ylo));
      mlc_tir_expr *eh = mlc_tir_binary(m, op, from_lin(s, &xhi), from_lin(s, &yhi));
      rc = (el && eh && !to_lin(s, el, lo) && !to_lin(s, eh, hi)) ? 0 : -1;
    }
  } else {
    bnd b = bound_expr(s->an, a, 0);
    if (b.lo == NEG_INF || b.hi == POS_INF) {
      set_err(c, a, "the term is not affine and has no constant bound");
    } else {
      lin_init(lo);
      lin_init(hi);
      lo->c = b.lo;
      hi->c = b.hi;
      rc = 0;
    }
  }
  c->depth--;
  return rc;
}

/* The [lo, hi] of a linear form. */
static int lin_expr_set(set_ctx *c, const lin *l, lin *lo, lin *hi) {
  sctx *s = &c->s;
  lin_init(lo);
  lin_init(hi);
  lo->c = hi->c = l->c;
  for (int i = 0; i < l->n; i++) {
    lin alo, ahi;
    int64_t k = l->t[i].coef;
    if (atom_set(c, l->t[i].atom, &alo, &ahi)) return -1;
    if (lin_add(s, lo, k > 0 ? &alo : &ahi, k) || lin_add(s, hi, k > 0 ? &ahi : &alo, k)) return -1;
  }
  if (lin_merge_divmod(s, lo) || lin_merge_divmod(s, hi)) return -1;
  return 0;
}

/* The set of |e| as simplified [*lo, *hi] built in |m|. */
static mlc_status eval_bounds(mlc_arith *an, mlc_tir_module *m, const mlc_tir_expr *e, int nrelax,
                              const mlc_tir_var *const *relax, mlc_tir_expr **lo, mlc_tir_expr **hi) {
  relax_set rs = {nrelax, relax};
  set_ctx c;
  memset(&c, 0, sizeof c);
  c.rs = &rs;
  if (!e || !is_index(e->dtype))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "arith: integer sets need an int64 expression");
  for (int i = 0; i < nrelax; i++)
    if (!find_domain(an, relax[i]))
      return mlc_make_status(MLC_INVALID_ARGUMENT, "arith: relaxed variable %s has no domain", relax[i]->name);
  if (sctx_init(&c.s, an, m)) return mlc_oom();
  lin l, llo, lhi;
  int rc = to_lin(&c.s, e, &l) || lin_expr_set(&c, &l, &llo, &lhi);
  if (!rc) {
    *lo = from_lin(&c.s, &llo);
    *hi = from_lin(&c.s, &lhi);
    if (!*lo || !*hi) c.s.failed = 1;
  }
  sctx_fini(&c.s);
  if (c.err) return c.err;
  if (rc || c.s.failed) return c.s.failed ? mlc_oom() : set_err(&c, e, "coefficient overflow");
  return NULL;
}

mlc_status mlc_arith_eval_set(mlc_arith *an, mlc_tir_module *m, const mlc_tir_expr *e, int nrelax,
                              const mlc_tir_var *const *relax, mlc_intset *out) {
  mlc_tir_expr *lo = NULL, *hi = NULL;
  out->min = out->extent = NULL;
  MLC_RETURN_IF_ERROR(eval_bounds(an, m, e, nrelax, relax, &lo, &hi));
  mlc_tir_expr *ext = mlc_tir_add(m, mlc_tir_sub(m, hi, lo), mlc_tir_i64(m, 1));
  out->min = lo;
  out->extent = ext ? mlc_arith_simplify(an, m, ext) : NULL;
  return out->extent ? NULL : mlc_oom();
}

/* ---- affine iterator maps ---------------------------------------------------------------- */

typedef struct imap_ctx {
  mlc_arith *an;
  int nloops;
  const mlc_tir_var *const *loops;
  int64_t *lmin, *lext;
  const mlc_tir_expr *predicate; /* NULL, or a conjunction of bounds */
} imap_ctx;

static int loop_index(const imap_ctx *c, const mlc_tir_var *v) {
  for (int i = 0; i < c->nloops; i++)
    if (c->loops[i] == v) return i;
  return -1;
}

/* Prints |e| into |buf| (for messages). */
static const char *expr_str(const mlc_tir_expr *e, char *buf, size_t n) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_expr(e, &b);
  snprintf(buf, n, "%s", b.oom ? "?" : mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return buf;
}

/* Parses |a| as a split of a loop variable; 0, or -1 with *why set. */
static int parse_split(const imap_ctx *c, const mlc_tir_expr *a, mlc_arith_iter_split *sp, const char **why) {
  int64_t k;
  if (a->kind == MLC_TIR_VAR_REF) {
    int l = loop_index(c, a->var);
    if (l < 0) {
      *why = "uses a variable that is not one of the loop variables";
      return -1;
    }
    sp->loop = l;
    sp->lower_factor = 1;
    sp->extent = c->lext[l];
    return 0;
  }
  if (is_binop_c(a, MLC_TIR_FLOORDIV, &k) || is_binop_c(a, MLC_TIR_FLOORMOD, &k)) {
    if (parse_split(c, a->bin.a, sp, why)) return -1;
    if (c->lmin[sp->loop] != 0) {
      *why = "divides a loop variable whose loop does not start at 0";
      return -1;
    }
    if (sp->extent % k != 0 && sp->extent > k) {
      *why = "splits a loop by a factor that does not divide its extent";
      return -1;
    }
    if (a->bin.op == MLC_TIR_FLOORDIV) {
      if (__builtin_mul_overflow(sp->lower_factor, k, &sp->lower_factor)) {
        *why = "overflows";
        return -1;
      }
      sp->extent = sp->extent > k ? sp->extent / k : 1;
    } else if (sp->extent > k) {
      sp->extent = k;
    }
    return 0;
  }
  *why = "is not a split (v // a) % b of a loop variable";
  return -1;
}

static int cmp_scale_desc(const void *a, const void *b) {
  const mlc_arith_iter_split *x = a, *y = b;
  return x->scale < y->scale ? 1 : x->scale > y->scale ? -1 : 0;
}

/* 1 when |pred| (a conjunction) holds a conjunct that says exactly
** binding - base < |ext|, where |bind| is the binding's linear form; 0 when
** not; -1 on out-of-memory. */
static int pred_limits(const imap_ctx *ic, sctx *c, const lin *bind, int64_t ext, const mlc_tir_expr *pred) {
  if (pred->kind == MLC_TIR_BINARY && pred->bin.op == MLC_TIR_AND && pred->dtype == MLC_DTYPE_BOOL) {
    int r = pred_limits(ic, c, bind, ext, pred->bin.a);
    return r ? r : pred_limits(ic, c, bind, ext, pred->bin.b);
  }
  if (pred->kind != MLC_TIR_BINARY || !is_index(pred->bin.a->dtype) || pred->bin.a->lanes != 1 ||
      pred->bin.b->dtype != pred->bin.a->dtype)
    return 0;
  mlc_tir_binop op = pred->bin.op;
  if (op != MLC_TIR_LT && op != MLC_TIR_LE && op != MLC_TIR_GT && op != MLC_TIR_GE) return 0;
  /* the conjunct as d < 0 */
  lin a, b2, d, want;
  int swap = op == MLC_TIR_GT || op == MLC_TIR_GE;
  if (to_lin(c, swap ? pred->bin.b : pred->bin.a, &a) || to_lin(c, swap ? pred->bin.a : pred->bin.b, &b2) ||
      lin_copy(c, &d, &a) || lin_add(c, &d, &b2, -1))
    return c->failed ? -1 : 0;
  if ((op == MLC_TIR_LE || op == MLC_TIR_GE) && __builtin_sub_overflow(d.c, 1, &d.c)) return 0;
  /* want: binding - base - ext < 0 */
  if (lin_copy(c, &want, bind)) return c->failed ? -1 : 0;
  want.c = -ext;
  if (lin_add(c, &d, &want, -1)) return c->failed ? -1 : 0;
  return lin_is_const(&d) && d.c == 0;
}

/* Binding |b| as a mixed-radix sum of splits, into |s|. */
static mlc_status imap_binding(const imap_ctx *ic, sctx *c, int b, const mlc_tir_expr *bind,
                               const mlc_tir_expr *extent, mlc_arith_iter_sum *s) {
  char bs[200], as[200];
  int64_t elo, ehi;
  lin l;
  if (!bind || !extent || !mlc_arith_const_bound(ic->an, extent, &elo, &ehi) || elo != ehi)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: binding %d needs a constant extent", b);
  expr_str(bind, bs, sizeof bs);
  if (!is_index(bind->dtype) || to_lin(c, bind, &l))
    return c->failed ? mlc_oom()
                     : mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: binding %d (%s) is not an int64 affine expression",
                                       b, bs);
  s->base = l.c;
  s->nsplits = 0;
  s->splits = l.n ? MLC_ARENA_ARRAY(ic->an->keep, (size_t)l.n, mlc_arith_iter_split) : NULL;
  if (l.n && !s->splits) return mlc_oom();
  for (int i = 0; i < l.n; i++) {
    mlc_arith_iter_split sp;
    const char *why = NULL;
    expr_str(l.t[i].atom, as, sizeof as);
    if (l.t[i].coef < 1)
      return mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: binding %d (%s): term %s has a negative coefficient", b,
                             bs, as);
    if (parse_split(ic, l.t[i].atom, &sp, &why))
      return mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: binding %d (%s): term %s %s", b, bs, as, why);
    if (l.t[i].atom->kind == MLC_TIR_VAR_REF && ic->lmin[sp.loop] != 0) { /* v = (v - min) + min */
      int64_t add;
      if (__builtin_mul_overflow(l.t[i].coef, ic->lmin[sp.loop], &add) ||
          __builtin_add_overflow(s->base, add, &s->base))
        return mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: binding %d (%s) overflows", b, bs);
    }
    sp.scale = l.t[i].coef;
    if (sp.extent > 1) s->splits[s->nsplits++] = sp;
  }
  if (s->nsplits > 1) qsort(s->splits, (size_t)s->nsplits, sizeof *s->splits, cmp_scale_desc);
  int64_t expect = 1;
  for (int i = s->nsplits; i-- > 0;) {
    if (s->splits[i].scale != expect)
      return mlc_make_status(MLC_INVALID_ARGUMENT,
                             "iter map: binding %d (%s) is not a mixed-radix sum: a term of scale %lld should "
                             "have scale %lld",
                             b, bs, (long long)s->splits[i].scale, (long long)expect);
    if (__builtin_mul_overflow(expect, s->splits[i].extent, &expect))
      return mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: binding %d (%s) overflows", b, bs);
  }
  s->extent = expect;
  if (expect > elo && ic->predicate) {
    int r = pred_limits(ic, c, &l, elo, ic->predicate);
    if (r < 0) return mlc_oom();
    if (r) {
      s->extent = elo;
      return NULL;
    }
  }
  if (expect != elo)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: binding %d (%s) covers %lld values, not its extent %lld%s",
                           b, bs, (long long)expect, (long long)elo,
                           ic->predicate && expect > elo ? " (the predicate does not limit it)" : "");
  return NULL;
}

/* Checks that the splits of loop |lp| tile [0, extent) exactly. */
static mlc_status imap_loop(const imap_ctx *ic, int lp, int nbind, const mlc_arith_iter_sum *sums) {
  const char *name = ic->loops[lp]->name;
  int used = 0;
  for (int b = 0; b < nbind; b++)
    for (int i = 0; i < sums[b].nsplits; i++) used += sums[b].splits[i].loop == lp;
  if (used == 0 && ic->lext[lp] > 1)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: loop variable %s (extent %lld) is used by no binding",
                           name, (long long)ic->lext[lp]);
  int64_t cover = 1;
  for (int k = 0; k < used; k++) {
    const mlc_arith_iter_split *next = NULL;
    int same = 0;
    for (int b = 0; b < nbind; b++)
      for (int i = 0; i < sums[b].nsplits; i++) {
        const mlc_arith_iter_split *sp = &sums[b].splits[i];
        if (sp->loop == lp && sp->lower_factor == cover) {
          same++;
          next = sp;
        }
      }
    if (same > 1 || (!next && cover >= ic->lext[lp]))
      return mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: loop variable %s is used more than once", name);
    if (!next) {
      /* a split that starts inside the part already covered overlaps it */
      for (int b = 0; b < nbind; b++)
        for (int i = 0; i < sums[b].nsplits; i++)
          if (sums[b].splits[i].loop == lp && sums[b].splits[i].lower_factor < cover &&
              sums[b].splits[i].lower_factor * sums[b].splits[i].extent > cover)
            return mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: loop variable %s is used more than once",
                                   name);
      return mlc_make_status(MLC_INVALID_ARGUMENT,
                             "iter map: the bindings use the values of loop variable %s with a gap (no split "
                             "starts at factor %lld)",
                             name, (long long)cover);
    }
    if (__builtin_mul_overflow(cover, next->extent, &cover))
      return mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: loop variable %s overflows", name);
  }
  if (cover != ic->lext[lp])
    return mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: the bindings cover %lld of the %lld values of loop variable %s",
                           (long long)cover, (long long)ic->lext[lp], name);
  return NULL;
}

static mlc_status imap(mlc_arith *an, mlc_tir_module *m, int nbind, const mlc_tir_expr *const *bindings,
                       const mlc_tir_expr *const *extents, int nloops, const mlc_tir_var *const *loop_vars,
                       const mlc_tir_expr *predicate, int64_t *lmin, int64_t *lext,
                       mlc_arith_iter_map_result *out) {
  imap_ctx ic = {an, nloops, loop_vars, lmin, lext, predicate};
  for (int l = 0; l < nloops; l++) {
    const domain *d = find_domain(an, loop_vars[l]);
    int64_t lo, hi, lo2, hi2;
    if (!d || !mlc_arith_const_bound(an, d->min, &lo, &hi) || lo != hi ||
        !mlc_arith_const_bound(an, d->extent, &lo2, &hi2) || lo2 != hi2 || lo2 < 1)
      return mlc_make_status(MLC_INVALID_ARGUMENT,
                             "iter map: loop variable %s needs a constant domain with a positive extent",
                             loop_vars[l]->name);
    lmin[l] = lo;
    lext[l] = lo2;
  }
  mlc_arith_iter_sum *sums = nbind ? MLC_ARENA_ARRAY(an->keep, (size_t)nbind, mlc_arith_iter_sum) : NULL;
  if (nbind && !sums) return mlc_oom();
  sctx c;
  if (sctx_init(&c, an, m)) return mlc_oom();
  mlc_status err = NULL;
  for (int b = 0; b < nbind && !err; b++) err = imap_binding(&ic, &c, b, bindings[b], extents[b], &sums[b]);
  sctx_fini(&c);
  for (int lp = 0; lp < nloops && !err; lp++) err = imap_loop(&ic, lp, nbind, sums);
  if (err) return err;
  out->nbind = nbind;
  out->sums = sums;
  return NULL;
}

mlc_status mlc_arith_iter_map_pred(mlc_arith *an, int nbind, const mlc_tir_expr *const *bindings,
                                   const mlc_tir_expr *const *extents, int nloops, const mlc_tir_var *const *loop_vars,
                                   const mlc_tir_expr *predicate, mlc_arith_iter_map_result *out) {
  out->nbind = 0;
  out->sums = NULL;
  if (nbind < 0 || nloops < 0 || (nbind && (!bindings || !extents)) || (nloops && !loop_vars))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "iter map: bad arguments");
  mlc_tir_module *m = scratch(an);
  int64_t *lmin = mlc_calloc(an->alloc, (size_t)nloops + 1, sizeof *lmin);
  int64_t *lext = mlc_calloc(an->alloc, (size_t)nloops + 1, sizeof *lext);
  mlc_status s = (!m || !lmin || !lext)
                     ? mlc_oom()
                     : imap(an, m, nbind, bindings, extents, nloops, loop_vars, predicate, lmin, lext, out);
  mlc_free(an->alloc, lmin, sizeof *lmin * ((size_t)nloops + 1));
  mlc_free(an->alloc, lext, sizeof *lext * ((size_t)nloops + 1));
  mlc_tir_module_destroy(m);
  return s;
}

mlc_status mlc_arith_iter_map(mlc_arith *an, int nbind, const mlc_tir_expr *const *bindings,
                              const mlc_tir_expr *const *extents, int nloops, const mlc_tir_var *const *loop_vars,
                              mlc_arith_iter_map_result *out) {
  return mlc_arith_iter_map_pred(an, nbind, bindings, extents, nloops, loop_vars, NULL, out);
}
