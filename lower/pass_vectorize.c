/*
** pass_vectorize.c: turns `T.vectorized` loops into vector expressions.
**
** Runs on the lowered form (loops, stores, ifs, allocations, evaluates; a
** block is walked into but never vectorized across).  A loop of kind
** VECTORIZED with a constant extent L (1 to MLC_TIR_MAX_LANES) whose body
** is straight-line is replaced by its body with the loop variable replaced
** by T.Ramp(min, 1, L): every expression that depends on the variable
** becomes a vector of L lanes, and scalars that meet such vectors are
** broadcast.  Ramps stay ramps through + - * with scalars (i * 16 + j, j
** vectorized, gives T.Ramp(i * 16, 1, 16)), so the code generator sees
** contiguous accesses.  An if whose condition depends on the variable
** becomes a masked region (tir.h); under a mask, and in the arms of a
** vector select, loads that do not depend on the variable are made per
** lane too, so that a lane that is off reads nothing, as the loop would.
**
** A loop that cannot be vectorized is kept as it is (serial code with the
** vectorize hint for LLVM), silently: the pass is an optimization, and the
** loop's meaning does not depend on it.  mlc_tir_vectorize_check says why a
** loop is kept.  The reasons:
**   - the extent is not a constant in [1, MLC_TIR_MAX_LANES];
**   - the body holds a loop, an allocation, an assert (its message reports
**     one iteration's values), a block, a te reduction, or vector
**     expressions already (an inner vectorized loop);
**   - a store's indices do not depend on the loop variable (every lane
**     would write one element: a reduction, a race across lanes);
**   - a buffer is written at different indices by two stores, or read at
**     other indices than it is written (a lane could read what another
**     lane writes, which the loop orders and vectors do not);
**   - a buffer is read and written at indices that may repeat across lanes
**     (no index is affine in the variable with a nonzero coefficient).
** Buffers are compared by the memory they name: a flattened view is its
** parameter, and without the function's "tir.noalias" attribute every
** parameter may overlap every other.
*/
#include <string.h>

#include "lower/tir.h"

/* ---- structural queries ----------------------------------------------------- */

static int expr_equal(const mlc_tir_expr *a, const mlc_tir_expr *b) {
  if (a == b) return 1;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype || a->lanes != b->lanes) return 0;
  switch (a->kind) {
    case MLC_TIR_INT_IMM: return a->int_value == b->int_value;
    case MLC_TIR_FLOAT_IMM: return memcmp(&a->float_value, &b->float_value, sizeof a->float_value) == 0;
    case MLC_TIR_VAR_REF: return a->var == b->var;
    case MLC_TIR_BINARY:
      return a->bin.op == b->bin.op && expr_equal(a->bin.a, b->bin.a) && expr_equal(a->bin.b, b->bin.b);
    case MLC_TIR_NOT:
    case MLC_TIR_CAST:
    case MLC_TIR_BROADCAST: return expr_equal(a->un.a, b->un.a);
    case MLC_TIR_SELECT:
      return expr_equal(a->select.c, b->select.c) && expr_equal(a->select.t, b->select.t) &&
             expr_equal(a->select.f, b->select.f);
    case MLC_TIR_LOAD:
      if (a->load.buffer != b->load.buffer || a->load.n != b->load.n) return 0;
      for (int i = 0; i < a->load.n; i++)
        if (!expr_equal(a->load.indices[i], b->load.indices[i])) return 0;
      return 1;
    case MLC_TIR_CALL:
      if (a->call.op != b->call.op || a->call.n != b->call.n) return 0;
      for (int i = 0; i < a->call.n; i++)
        if (!expr_equal(a->call.args[i], b->call.args[i])) return 0;
      return 1;
    case MLC_TIR_RAMP: return expr_equal(a->ramp.base, b->ramp.base) && expr_equal(a->ramp.stride, b->ramp.stride);
    case MLC_TIR_REDUCE: return 0;
  }
  return 0;
}

static int indices_equal(int n, mlc_tir_expr *const *a, int nb, mlc_tir_expr *const *b) {
  if (n != nb) return 0;
  for (int i = 0; i < n; i++)
    if (!expr_equal(a[i], b[i])) return 0;
  return 1;
}

/* Nonzero if |e| is affine in |v| (sums, differences and products with
** expressions free of |v|); the coefficient of |v| goes to *coef when it is
** a constant (else *coef_known = 0). */
static int affine(const mlc_tir_expr *e, const mlc_tir_var *v, int64_t *coef, int *coef_known) {
  if (!mlc_tir_expr_uses_var(e, v)) {
    *coef = 0;
    *coef_known = 1;
    return 1;
  }
  if (e->kind == MLC_TIR_VAR_REF) {
    *coef = 1;
    *coef_known = 1;
    return 1;
  }
  if (e->kind != MLC_TIR_BINARY || !mlc_dtype_is_int(e->dtype)) return 0;
  int64_t ca, cb;
  int ka, kb;
  switch (e->bin.op) {
    case MLC_TIR_ADD:
    case MLC_TIR_SUB:
      if (!affine(e->bin.a, v, &ca, &ka) || !affine(e->bin.b, v, &cb, &kb)) return 0;
      *coef_known = ka && kb;
      *coef = e->bin.op == MLC_TIR_ADD ? (int64_t)((uint64_t)ca + (uint64_t)cb)
                                       : (int64_t)((uint64_t)ca - (uint64_t)cb);
      return 1;
    case MLC_TIR_MUL: {
      const mlc_tir_expr *x = e->bin.a, *k = e->bin.b;
      if (mlc_tir_expr_uses_var(k, v)) {
        x = e->bin.b;
        k = e->bin.a;
      }
      if (mlc_tir_expr_uses_var(k, v) || !affine(x, v, &ca, &ka)) return 0;
      *coef_known = ka && k->kind == MLC_TIR_INT_IMM;
      *coef = *coef_known ? (int64_t)((uint64_t)ca * (uint64_t)k->int_value) : 0;
      return 1;
    }
    default: return 0;
  }
}

/* Nonzero if distinct values of |v| give distinct index tuples |idx|. */
static int injective(int n, mlc_tir_expr *const *idx, const mlc_tir_var *v) {
  for (int i = 0; i < n; i++) {
    int64_t c;
    int known;
    if (affine(idx[i], v, &c, &known) && known && c != 0) return 1;
  }
  return 0;
}

/* ---- the check ----------------------------------------------------------------- */

typedef struct access {
  const void *mem; /* what memory it names (see memory_of) */
  const mlc_tir_buffer *buf;
  int n;
  mlc_tir_expr *const *idx;
} access;

#define MAX_ACCESSES 256

typedef struct checker {
  const mlc_tir_func *f; /* NULL: parameters do not overlap */
  int noalias;
  const mlc_tir_var *var;
  access stores[MAX_ACCESSES], loads[MAX_ACCESSES];
  int nstores, nloads;
  int overflow;
  mlc_strbuf *why;
  int refused;
} checker;

static void refuse(checker *c, const char *what, const char *name) {
  if (c->refused++) return;
  if (c->why) {
    mlc_sb_puts(c->why, what);
    if (name) mlc_sb_puts(c->why, name);
  }
}

/* The memory |b| names: its parameter for a view; all parameters are one
** memory when they may overlap. */
static const void *memory_of(const checker *c, const mlc_tir_buffer *b) {
  if (b->view_of) b = b->view_of;
  if (!c->noalias)
    for (int i = 0; i < c->f->nparams; i++)
      if (c->f->params[i] == b) return c->f;
  return b;
}

static void note(checker *c, access *list, int *n, const mlc_tir_buffer *b, int k, mlc_tir_expr *const *idx) {
  if (*n == MAX_ACCESSES) {
    c->overflow = 1;
    return;
  }
  list[(*n)++] = (access){memory_of(c, b), b, k, idx};
}

static void check_expr(checker *c, const mlc_tir_expr *e) {
  if (!e) return;
  if (e->lanes > 1) {
    refuse(c, "the body holds vector expressions already", NULL);
    return;
  }
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF: break;
    case MLC_TIR_BINARY: check_expr(c, e->bin.a); check_expr(c, e->bin.b); break;
    case MLC_TIR_NOT:
    case MLC_TIR_CAST:
    case MLC_TIR_BROADCAST: check_expr(c, e->un.a); break;
    case MLC_TIR_SELECT: check_expr(c, e->select.c); check_expr(c, e->select.t); check_expr(c, e->select.f); break;
    case MLC_TIR_LOAD:
      for (int i = 0; i < e->load.n; i++) check_expr(c, e->load.indices[i]);
      note(c, c->loads, &c->nloads, e->load.buffer, e->load.n, e->load.indices);
      break;
    case MLC_TIR_CALL:
      for (int i = 0; i < e->call.n; i++) check_expr(c, e->call.args[i]);
      break;
    case MLC_TIR_RAMP: refuse(c, "the body holds vector expressions already", NULL); break;
    case MLC_TIR_REDUCE: refuse(c, "the body holds a te reduction", NULL); break;
  }
}

static void check_stmt(checker *c, const mlc_tir_stmt *s) {
  if (!s) return;
  switch (s->kind) {
    case MLC_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++) check_stmt(c, s->seq.stmts[i]);
      break;
    case MLC_TIR_STORE: {
      int uses = 0;
      for (int i = 0; i < s->store.n; i++) {
        check_expr(c, s->store.indices[i]);
        uses |= mlc_tir_expr_uses_var(s->store.indices[i], c->var);
      }
      check_expr(c, s->store.value);
      if (!uses) refuse(c, "a store does not depend on the loop variable (a reduction into one element): ",
                        s->store.buffer->name);
      note(c, c->stores, &c->nstores, s->store.buffer, s->store.n, s->store.indices);
      break;
    }
    case MLC_TIR_IF:
      check_expr(c, s->if_.cond);
      check_stmt(c, s->if_.then_s);
      check_stmt(c, s->if_.else_s);
      break;
    case MLC_TIR_EVALUATE: check_expr(c, s->eval.value); break;
    case MLC_TIR_FOR: refuse(c, "the body holds a loop over ", s->loop.var->name); break;
    case MLC_TIR_ALLOCATE: refuse(c, "the body allocates ", s->alloc.buffer->name); break;
    case MLC_TIR_ASSERT: refuse(c, "the body holds an assert", NULL); break;
    case MLC_TIR_BLOCK: refuse(c, "the body holds block ", s->block.name); break;
  }
}

/* Stores to one memory agree on their buffer and indices; loads of a
** stored memory use those; a memory read and written is written
** injectively. */
static int same_access(const access *a, const access *b) {
  return a->buf == b->buf && indices_equal(a->n, a->idx, b->n, b->idx);
}

static void check_hazards(checker *c) {
  for (int i = 0; i < c->nstores && !c->refused; i++) {
    const access *st = &c->stores[i];
    int read = 0;
    for (int j = 0; j < i; j++)
      if (c->stores[j].mem == st->mem && !same_access(st, &c->stores[j]))
        refuse(c, "two stores write different indices of ", st->buf->name);
    for (int j = 0; j < c->nloads; j++) {
      if (c->loads[j].mem != st->mem) continue;
      read = 1;
      if (!same_access(st, &c->loads[j]))
        refuse(c, "a load reads other indices than a store writes of ", st->buf->name);
    }
    if (read && !injective(st->n, st->idx, c->var))
      refuse(c, "lanes may write one element that the body also reads: ", st->buf->name);
  }
}

int mlc_tir_vectorize_check(const mlc_tir_func *f, const mlc_tir_stmt *loop, mlc_strbuf *why) {
  checker cs, *c = &cs;
  memset(c, 0, sizeof *c);
  c->why = why;
  c->f = f;
  const mlc_tir_attr *na = f ? mlc_tir_func_attr(f, "tir.noalias") : NULL;
  c->noalias = !f || (na && na->kind != MLC_TIR_ATTR_STR && na->i);
  if (!loop || loop->kind != MLC_TIR_FOR || loop->loop.kind != MLC_TIR_FOR_VECTORIZED) {
    refuse(c, "not a vectorized loop", NULL);
  } else if (loop->loop.extent->kind != MLC_TIR_INT_IMM || loop->loop.extent->int_value < 1 ||
             loop->loop.extent->int_value > MLC_TIR_MAX_LANES) {
    refuse(c, "the extent is not a constant from 1 to " MLC_TIR_MAX_LANES_STR, NULL);
  } else if (loop->loop.min->lanes > 1) {
    refuse(c, "the loop start is a vector", NULL);
  } else {
    c->var = loop->loop.var;
    check_stmt(c, loop->loop.body);
    if (c->overflow) refuse(c, "the body has too many memory accesses to check", NULL);
    check_hazards(c);
  }
  return !c->refused;
}

/* ---- widening ----------------------------------------------------------------------- */

typedef struct widener {
  mlc_tir_module *m;
  const mlc_tir_var *var;
  mlc_tir_expr *ramp; /* what var becomes */
  int lanes;
  int masked; /* in a branch of a vector if or an arm of a vector select */
} widener;

static mlc_tir_expr *wexpr(widener *w, const mlc_tir_expr *e);

/* |e| broadcast to the loop's lanes when it is a scalar. */
static mlc_tir_expr *bc(widener *w, mlc_tir_expr *e) {
  return (e && e->lanes <= 1) ? mlc_tir_broadcast(w->m, e, w->lanes) : e;
}

static int any_vector(int n, mlc_tir_expr *const *v) {
  for (int i = 0; i < n; i++)
    if (v[i] && v[i]->lanes > 1) return 1;
  return 0;
}

/* a OP b on widened operands, keeping ramps where + - * allow. */
static mlc_tir_expr *wbinary(widener *w, mlc_tir_binop op, mlc_tir_expr *a, mlc_tir_expr *b) {
  mlc_tir_module *m = w->m;
  if (!a || !b) return NULL;
  if (a->lanes <= 1 && b->lanes <= 1) return mlc_tir_binary(m, op, a, b);
  int ra = a->kind == MLC_TIR_RAMP, rb = b->kind == MLC_TIR_RAMP;
  int sa = a->lanes <= 1, sb = b->lanes <= 1;
  switch (op) {
    case MLC_TIR_ADD:
    case MLC_TIR_SUB:
      if (ra && sb) return mlc_tir_ramp(m, mlc_tir_binary(m, op, a->ramp.base, b), a->ramp.stride, w->lanes);
      if (sa && rb) {
        mlc_tir_expr *st = op == MLC_TIR_ADD ? b->ramp.stride : mlc_tir_sub(m, mlc_tir_int(m, b->dtype, 0), b->ramp.stride);
        return mlc_tir_ramp(m, mlc_tir_binary(m, op, a, b->ramp.base), st, w->lanes);
      }
      if (ra && rb)
        return mlc_tir_ramp(m, mlc_tir_binary(m, op, a->ramp.base, b->ramp.base),
                            mlc_tir_binary(m, op, a->ramp.stride, b->ramp.stride), w->lanes);
      break;
    case MLC_TIR_MUL:
      if (ra && sb)
        return mlc_tir_ramp(m, mlc_tir_mul(m, a->ramp.base, b), mlc_tir_mul(m, a->ramp.stride, b), w->lanes);
      if (sa && rb)
        return mlc_tir_ramp(m, mlc_tir_mul(m, a, b->ramp.base), mlc_tir_mul(m, a, b->ramp.stride), w->lanes);
      break;
    default: break;
  }
  return mlc_tir_binary(m, op, bc(w, a), bc(w, b));
}

static mlc_tir_expr **wexprs(widener *w, int n, mlc_tir_expr *const *v) {
  mlc_tir_expr **d = MLC_ARENA_ARRAY(w->m->arena, (size_t)(n ? n : 1), mlc_tir_expr *);
  if (!d) return NULL;
  for (int i = 0; i < n; i++)
    if (!(d[i] = wexpr(w, v[i]))) return NULL;
  return d;
}

static mlc_tir_expr *wexpr(widener *w, const mlc_tir_expr *e) {
  mlc_tir_module *m = w->m;
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM: return (mlc_tir_expr *)e;
    case MLC_TIR_VAR_REF: return e->var == w->var ? w->ramp : (mlc_tir_expr *)e;
    case MLC_TIR_BINARY: return wbinary(w, e->bin.op, wexpr(w, e->bin.a), wexpr(w, e->bin.b));
    case MLC_TIR_NOT: return mlc_tir_not(m, wexpr(w, e->un.a));
    case MLC_TIR_CAST: return mlc_tir_cast(m, e->dtype, wexpr(w, e->un.a));
    case MLC_TIR_SELECT: {
      mlc_tir_expr *c = wexpr(w, e->select.c);
      if (!c) return NULL;
      int save = w->masked;
      if (c->lanes > 1) w->masked = 1;
      mlc_tir_expr *t = wexpr(w, e->select.t), *f = t ? wexpr(w, e->select.f) : NULL;
      w->masked = save;
      if (!f) return NULL;
      if (c->lanes <= 1 && t->lanes <= 1 && f->lanes <= 1) return mlc_tir_select(m, c, t, f);
      return mlc_tir_select(m, bc(w, c), bc(w, t), bc(w, f));
    }
    case MLC_TIR_LOAD: {
      int n = e->load.n;
      mlc_tir_expr **idx = wexprs(w, n, e->load.indices);
      if (!idx) return NULL;
      /* under a mask, a lane that is off must not read: make the load per lane */
      if (w->masked && n > 0 && !any_vector(n, idx)) idx[n - 1] = bc(w, idx[n - 1]);
      return mlc_tir_load(m, e->load.buffer, n, idx);
    }
    case MLC_TIR_CALL: {
      mlc_tir_expr **args = wexprs(w, e->call.n, e->call.args);
      if (!args) return NULL;
      if (any_vector(e->call.n, args))
        for (int i = 0; i < e->call.n; i++) args[i] = bc(w, args[i]);
      mlc_tir_expr *r = mlc_tir_call(m, e->call.op, e->call.n, args);
      if (r) r->dtype = e->dtype;
      return r;
    }
    case MLC_TIR_RAMP:
    case MLC_TIR_BROADCAST:
    case MLC_TIR_REDUCE: break; /* refused by the check */
  }
  return NULL;
}

static mlc_tir_stmt *wstmt(widener *w, const mlc_tir_stmt *s) {
  mlc_tir_module *m = w->m;
  mlc_tir_stmt *r = NULL;
  switch (s->kind) {
    case MLC_TIR_SEQ: {
      mlc_tir_stmt **v = MLC_ARENA_ARRAY(m->arena, (size_t)(s->seq.n ? s->seq.n : 1), mlc_tir_stmt *);
      if (!v) return NULL;
      for (int i = 0; i < s->seq.n; i++)
        if (!(v[i] = wstmt(w, s->seq.stmts[i]))) return NULL;
      r = mlc_tir_seq(m, s->seq.n, v);
      break;
    }
    case MLC_TIR_STORE: {
      mlc_tir_expr **idx = wexprs(w, s->store.n, s->store.indices);
      mlc_tir_expr *v = idx ? wexpr(w, s->store.value) : NULL;
      if (!v) return NULL;
      r = mlc_tir_store(m, s->store.buffer, s->store.n, idx, bc(w, v));
      break;
    }
    case MLC_TIR_IF: {
      mlc_tir_expr *c = wexpr(w, s->if_.cond);
      if (!c) return NULL;
      int save = w->masked;
      if (c->lanes > 1) w->masked = 1;
      mlc_tir_stmt *t = wstmt(w, s->if_.then_s);
      mlc_tir_stmt *e = (t && s->if_.else_s) ? wstmt(w, s->if_.else_s) : NULL;
      w->masked = save;
      if (!t || (s->if_.else_s && !e)) return NULL;
      r = mlc_tir_if(m, c, t, e);
      break;
    }
    case MLC_TIR_EVALUATE: r = mlc_tir_evaluate(m, wexpr(w, s->eval.value)); break;
    case MLC_TIR_FOR:
    case MLC_TIR_ALLOCATE:
    case MLC_TIR_ASSERT:
    case MLC_TIR_BLOCK: return NULL; /* refused by the check */
  }
  if (r && !r->origin) r->origin = s->origin;
  return r;
}

/* ---- the walk -------------------------------------------------------------------------- */

typedef struct walker {
  mlc_tir_module *m;
  const mlc_tir_func *f;
  int oom;
} walker;

/* A shallow copy of |s| (to replace a child in). */
static mlc_tir_stmt *clone(walker *wk, const mlc_tir_stmt *s) {
  mlc_tir_stmt *c = MLC_ARENA_NEW(wk->m->arena, mlc_tir_stmt);
  if (!c) {
    wk->oom = 1;
    return NULL;
  }
  *c = *s;
  return c;
}

/* |s| with its vectorizable loops vectorized (|s| itself when nothing
** changed; NULL only on out-of-memory). */
static mlc_tir_stmt *walk(walker *wk, mlc_tir_stmt *s) {
  if (!s || wk->oom) return s;
  mlc_tir_stmt *r = s;
  switch (s->kind) {
    case MLC_TIR_FOR: {
      mlc_tir_stmt *body = walk(wk, s->loop.body);
      if (!body) return NULL;
      if (body != s->loop.body) {
        if (!(r = clone(wk, s))) return NULL;
        r->loop.body = body;
      }
      if (r->loop.kind == MLC_TIR_FOR_VECTORIZED && mlc_tir_vectorize_check(wk->f, r, NULL)) {
        widener w = {wk->m, r->loop.var, NULL, (int)r->loop.extent->int_value, 0};
        w.ramp = mlc_tir_ramp(wk->m, r->loop.min, mlc_tir_int(wk->m, r->loop.var->dtype, 1), w.lanes);
        mlc_tir_stmt *v = w.ramp ? wstmt(&w, r->loop.body) : NULL;
        if (!v) {
          wk->oom = 1;
          return NULL;
        }
        if (!v->origin) v->origin = r->origin;
        r = v;
      }
      return r;
    }
    case MLC_TIR_SEQ: {
      mlc_tir_stmt **v = NULL;
      for (int i = 0; i < s->seq.n; i++) {
        mlc_tir_stmt *c = walk(wk, s->seq.stmts[i]);
        if (!c) return NULL;
        if (c == s->seq.stmts[i] && !v) continue;
        if (!v) {
          v = MLC_ARENA_ARRAY(wk->m->arena, (size_t)s->seq.n, mlc_tir_stmt *);
          if (!v) {
            wk->oom = 1;
            return NULL;
          }
          memcpy(v, s->seq.stmts, sizeof *v * (size_t)s->seq.n);
        }
        v[i] = c;
      }
      if (!v) return s;
      /* a vectorized loop may leave a sequence: the builder flattens it */
      mlc_tir_stmt *flat = mlc_tir_seq(wk->m, s->seq.n, v);
      if (!flat) {
        wk->oom = 1;
        return NULL;
      }
      if (!flat->origin) flat->origin = s->origin;
      return flat;
    }
    case MLC_TIR_IF: {
      mlc_tir_stmt *t = walk(wk, s->if_.then_s), *e = walk(wk, s->if_.else_s);
      if (!t || (s->if_.else_s && !e)) return NULL;
      if (t == s->if_.then_s && e == s->if_.else_s) return s;
      if (!(r = clone(wk, s))) return NULL;
      r->if_.then_s = t;
      r->if_.else_s = e;
      return r;
    }
    case MLC_TIR_ALLOCATE: {
      mlc_tir_stmt *b = walk(wk, s->alloc.body);
      if (!b) return NULL;
      if (b == s->alloc.body) return s;
      if (!(r = clone(wk, s))) return NULL;
      r->alloc.body = b;
      return r;
    }
    case MLC_TIR_BLOCK: {
      mlc_tir_stmt *b = walk(wk, s->block.body), *in = walk(wk, s->block.init);
      if (!b || (s->block.init && !in)) return NULL;
      if (b == s->block.body && in == s->block.init) return s;
      if (!(r = clone(wk, s))) return NULL;
      r->block.body = b;
      r->block.init = in;
      return r;
    }
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return s;
  }
  return s;
}

mlc_status mlc_tir_vectorize_func(mlc_tir_module *m, mlc_tir_func *f) {
  if (!m || !f || !f->body)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "vectorize: missing module or prim func");
  walker wk = {m, f, 0};
  mlc_tir_stmt *body = walk(&wk, f->body);
  if (wk.oom || !body)
    return mlc_make_status(MLC_RESOURCE_EXHAUSTED, "vectorize: prim func \"%s\": out of memory", f->name);
  f->body = body;
  return NULL;
}
