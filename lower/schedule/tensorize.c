/*
** tensorize.c: sch.tensorize(block_or_loop=b, tensor_intrin="NAME") --
** replaces a block's computation by a tensor intrinsic's implementation
** (intrin.h).
**
** The block's body (the loops and the inner block that blockize left in
** it) is matched structurally against the intrinsic's description: the
** same loop nest (extents and starts), the same inner block (iteration
** variables of the same kind and domain, bindings of the matched loops, no
** init or predicate unless the description has them), the same statements
** and expressions (operators, dtypes, constants), variables mapped one to
** one.  Each access of a block buffer Y must be an access of one
** description parameter C at a base offset: with rank(Y) = R >= rank(C) =
** r, the leading R - r indices of Y are fixed (free of the matched
** variables), and each of the trailing ones is the matching index of C
** (with the description's variables mapped) plus an offset free of the
** matched variables; every access of C gives the same offsets, and every
** parameter is bound to one buffer of the same dtype.  The first
** difference is a TENSORIZE error that says what differs (an extent 8 where
** the intrinsic has 16, an operator + where it has *, a dtype, ...).
**
** On a match the block's body becomes a copy of the implementation in
** which every access C[i...] reads Y[base..., base + i...]; the block keeps
** its iteration variables, init and regions.  The statements of the old
** body are gone: their handles are retired.  Given a loop, tensorize
** blockizes it first (blockize.c) and tensorizes the new outer block; when
** that does not match, the blockize is undone.
*/
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "lower/schedule/intrin.h"
#include "lower/schedule/tensorize_int.h"

#define MAX_VARS 128
#define MAX_PARAMS 16
#define MAX_RANK 16

typedef struct binding {
  mlc_tir_buffer *buf; /* the block's buffer, or NULL while unbound */
  int rank;            /* its rank */
  sch_lin base[MAX_RANK];
} binding;

typedef struct matcher {
  mlc_sch *s;
  const mlc_tir_func *desc;
  int nv;
  const mlc_tir_var *dv[MAX_VARS]; /* description variable -> */
  mlc_tir_var *tv[MAX_VARS];       /* the block's variable */
  mlc_tir_expr *tref[MAX_VARS];    /* a reference to it */
  binding bind[MAX_PARAMS];
  const char *why; /* the first difference (in the schedule's arena) */
} matcher;

#define DIFF(mt, ...) ((mt)->why = mlc_arena_printf((mt)->s->arena, __VA_ARGS__), (mt)->why ? 0 : ((mt)->why = "?", 0))

static const char *stmt_word(const mlc_tir_stmt *st) {
  if (!st) return "nothing";
  switch (st->kind) {
    case MLC_TIR_FOR: return "a loop";
    case MLC_TIR_SEQ: return "a sequence";
    case MLC_TIR_STORE: return "a store";
    case MLC_TIR_IF: return "a conditional";
    case MLC_TIR_ALLOCATE: return "an allocation";
    case MLC_TIR_EVALUATE: return "an evaluation";
    case MLC_TIR_BLOCK: return "a block";
    case MLC_TIR_ASSERT: return "an assertion";
  }
  return "?";
}

static const char *expr_word(const mlc_tir_expr *e) {
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM: return "a constant";
    case MLC_TIR_VAR_REF: return "a variable";
    case MLC_TIR_BINARY: return "an operation";
    case MLC_TIR_NOT: return "a negation";
    case MLC_TIR_SELECT: return "a select";
    case MLC_TIR_CAST: return "a cast";
    case MLC_TIR_LOAD: return "a load";
    case MLC_TIR_CALL: return "a call";
    case MLC_TIR_RAMP: return "a ramp";
    case MLC_TIR_BROADCAST: return "a broadcast";
    case MLC_TIR_REDUCE: return "a reduction";
  }
  return "?";
}

static int map_var(matcher *mt, const mlc_tir_var *d, mlc_tir_var *t) {
  if (mt->nv >= MAX_VARS) return DIFF(mt, "more than %d variables", MAX_VARS);
  mt->dv[mt->nv] = d;
  mt->tv[mt->nv] = t;
  mt->tref[mt->nv] = mlc_tir_ref(mt->s->m, t);
  if (!mt->tref[mt->nv]) return DIFF(mt, "out of memory");
  mt->nv++;
  return 1;
}

static mlc_tir_var *mapped(const matcher *mt, const mlc_tir_var *d) {
  for (int i = mt->nv; i-- > 0;)
    if (mt->dv[i] == d) return mt->tv[i];
  return NULL;
}

static int param_of(const matcher *mt, const mlc_tir_buffer *b) {
  for (int i = 0; i < mt->desc->nparams; i++)
    if (mt->desc->params[i] == b) return i;
  return -1;
}

static int match_expr(matcher *mt, const mlc_tir_expr *d, const mlc_tir_expr *t);

/* An access t_buf[t_idx] of the block against d_buf[d_idx] of the description. */
static int match_access(matcher *mt, const mlc_tir_buffer *dbuf, int dn, mlc_tir_expr *const *didx,
                        mlc_tir_buffer *tbuf, int tn, mlc_tir_expr *const *tidx) {
  mlc_sch *s = mt->s;
  int p = param_of(mt, dbuf);
  if (p < 0 || p >= MAX_PARAMS) return DIFF(mt, "the intrinsic's %s is not one of its parameters", dbuf->name);
  if (dbuf->dtype != tbuf->dtype)
    return DIFF(mt, "%s is %s where the intrinsic's %s is %s", tbuf->name, mlc_dtype_name(tbuf->dtype), dbuf->name,
                mlc_dtype_name(dbuf->dtype));
  binding *b = &mt->bind[p];
  if (b->buf && b->buf != tbuf)
    return DIFF(mt, "the intrinsic's %s would be both %s and %s", dbuf->name, b->buf->name, tbuf->name);
  if (tn < dn || tn > MAX_RANK)
    return DIFF(mt, "%s has %d dimensions where the intrinsic's %s has %d", tbuf->name, tn, dbuf->name, dn);
  mlc_tir_subst sub = {mt->nv, (mlc_tir_var *const *)mt->dv, mt->tref, 0, NULL, NULL, 0};
  sch_lin base[MAX_RANK];
  for (int k = 0; k < tn; k++) {
    if (sch_lin_of(tidx[k], &base[k])) return DIFF(mt, "index %d of %s is not an integer sum", k, tbuf->name);
    const char *what = "fixed";
    if (k >= tn - dn) {
      const mlc_tir_expr *de = didx[k - (tn - dn)];
      mlc_tir_expr *dm = mlc_tir_expr_copy(s->m, de, &sub);
      sch_lin dl;
      if (!dm || sch_lin_of(dm, &dl) || sch_lin_add(&base[k], &dl, -1))
        return DIFF(mt, "index %d of %s (%s) is not an integer sum", k, tbuf->name, sch_expr_str(s, tidx[k]));
      what = mlc_arena_printf(s->arena, "the intrinsic's %s plus an offset", sch_expr_str(s, de));
    }
    if (sch_lin_find_use(&base[k], mt->nv, (const mlc_tir_var *const *)mt->tv) >= 0)
      return DIFF(mt, "index %d of %s (%s) is not %s", k, tbuf->name, sch_expr_str(s, tidx[k]), what ? what : "?");
  }
  if (b->buf) {
    for (int k = 0; k < tn; k++)
      if (!sch_lin_equal(&b->base[k], &base[k]))
        return DIFF(mt, "%s is accessed at two offsets in dimension %d (%s and %s) where the intrinsic has one %s",
                    tbuf->name, k, sch_expr_str(s, sch_lin_build(s->m, &b->base[k])),
                    sch_expr_str(s, sch_lin_build(s->m, &base[k])), dbuf->name);
  } else {
    b->buf = tbuf;
    b->rank = tn;
    memcpy(b->base, base, (size_t)tn * sizeof base[0]);
  }
  return 1;
}

static int match_expr(matcher *mt, const mlc_tir_expr *d, const mlc_tir_expr *t) {
  mlc_sch *s = mt->s;
  if (d->kind != t->kind)
    return DIFF(mt, "%s is %s where the intrinsic has %s (%s)", sch_expr_str(s, t), expr_word(t), expr_word(d),
                sch_expr_str(s, d));
  if (d->dtype != t->dtype)
    return DIFF(mt, "%s has dtype %s where the intrinsic's %s has %s", sch_expr_str(s, t), mlc_dtype_name(t->dtype),
                sch_expr_str(s, d), mlc_dtype_name(d->dtype));
  if (d->lanes != t->lanes)
    return DIFF(mt, "%s has %d lanes where the intrinsic's %s has %d", sch_expr_str(s, t), t->lanes,
                sch_expr_str(s, d), d->lanes);
  switch (d->kind) {
    case MLC_TIR_INT_IMM:
      if (d->int_value != t->int_value)
        return DIFF(mt, "constant %s where the intrinsic has %s", sch_expr_str(s, t), sch_expr_str(s, d));
      return 1;
    case MLC_TIR_FLOAT_IMM:
      if (d->float_value != t->float_value)
        return DIFF(mt, "constant %s where the intrinsic has %s", sch_expr_str(s, t), sch_expr_str(s, d));
      return 1;
    case MLC_TIR_VAR_REF: {
      mlc_tir_var *v = mapped(mt, d->var);
      if (v != t->var)
        return DIFF(mt, "variable %s where the intrinsic has %s%s", t->var->name, d->var->name,
                    v ? mlc_arena_printf(s->arena, " (matched to %s)", v->name) : "");
      return 1;
    }
    case MLC_TIR_BINARY:
      if (d->bin.op != t->bin.op)
        return DIFF(mt, "%s has operator %s where the intrinsic has %s (%s)", sch_expr_str(s, t),
                    mlc_tir_binop_name(t->bin.op), mlc_tir_binop_name(d->bin.op), sch_expr_str(s, d));
      return match_expr(mt, d->bin.a, t->bin.a) && match_expr(mt, d->bin.b, t->bin.b);
    case MLC_TIR_NOT:
    case MLC_TIR_CAST: return match_expr(mt, d->un.a, t->un.a);
    case MLC_TIR_SELECT:
      return match_expr(mt, d->select.c, t->select.c) && match_expr(mt, d->select.t, t->select.t) &&
             match_expr(mt, d->select.f, t->select.f);
    case MLC_TIR_CALL:
      if (d->call.op != t->call.op || d->call.n != t->call.n)
        return DIFF(mt, "%s calls %s where the intrinsic calls %s", sch_expr_str(s, t), mlc_tir_intrin_name(t->call.op),
                    mlc_tir_intrin_name(d->call.op));
      for (int i = 0; i < d->call.n; i++)
        if (!match_expr(mt, d->call.args[i], t->call.args[i])) return 0;
      return 1;
    case MLC_TIR_LOAD:
      return match_access(mt, d->load.buffer, d->load.n, d->load.indices, t->load.buffer, t->load.n,
                          t->load.indices);
    case MLC_TIR_RAMP: return match_expr(mt, d->ramp.base, t->ramp.base) && match_expr(mt, d->ramp.stride, t->ramp.stride);
    case MLC_TIR_BROADCAST: return match_expr(mt, d->un.a, t->un.a);
    case MLC_TIR_REDUCE: return DIFF(mt, "a tensor-expression reduction");
  }
  return 0;
}

static int const_equal(const mlc_tir_expr *a, const mlc_tir_expr *b) {
  return a->kind == MLC_TIR_INT_IMM && b->kind == MLC_TIR_INT_IMM && a->int_value == b->int_value;
}

static int match_stmt(matcher *mt, const mlc_tir_stmt *d, const mlc_tir_stmt *t) {
  mlc_sch *s = mt->s;
  if (!d || !t || d->kind != t->kind)
    return DIFF(mt, "found %s where the intrinsic has %s", stmt_word(t), stmt_word(d));
  switch (d->kind) {
    case MLC_TIR_FOR:
      if (!const_equal(d->loop.extent, t->loop.extent))
        return DIFF(mt, "loop %s has extent %s where the intrinsic's loop %s has %s", t->loop.var->name,
                    sch_expr_str(s, t->loop.extent), d->loop.var->name, sch_expr_str(s, d->loop.extent));
      if (!const_equal(d->loop.min, t->loop.min))
        return DIFF(mt, "loop %s starts at %s where the intrinsic's loop %s starts at %s", t->loop.var->name,
                    sch_expr_str(s, t->loop.min), d->loop.var->name, sch_expr_str(s, d->loop.min));
      return map_var(mt, d->loop.var, t->loop.var) && match_stmt(mt, d->loop.body, t->loop.body);
    case MLC_TIR_SEQ:
      if (d->seq.n != t->seq.n)
        return DIFF(mt, "a sequence of %d statements where the intrinsic has %d", t->seq.n, d->seq.n);
      for (int i = 0; i < d->seq.n; i++)
        if (!match_stmt(mt, d->seq.stmts[i], t->seq.stmts[i])) return 0;
      return 1;
    case MLC_TIR_STORE:
      return match_access(mt, d->store.buffer, d->store.n, d->store.indices, t->store.buffer, t->store.n,
                          t->store.indices) &&
             match_expr(mt, d->store.value, t->store.value);
    case MLC_TIR_IF:
      if (!d->if_.else_s != !t->if_.else_s)
        return DIFF(mt, "a conditional %s an else branch where the intrinsic's %s", t->if_.else_s ? "with" : "without",
                    d->if_.else_s ? "has one" : "has none");
      return match_expr(mt, d->if_.cond, t->if_.cond) && match_stmt(mt, d->if_.then_s, t->if_.then_s) &&
             (!d->if_.else_s || match_stmt(mt, d->if_.else_s, t->if_.else_s));
    case MLC_TIR_EVALUATE: return match_expr(mt, d->eval.value, t->eval.value);
    case MLC_TIR_BLOCK: {
      const char *tn = t->block.name, *dn = d->block.name;
      if (d->block.niters != t->block.niters)
        return DIFF(mt, "block \"%s\" has %d iteration variables where the intrinsic's block \"%s\" has %d", tn,
                    t->block.niters, dn, d->block.niters);
      for (int i = 0; i < d->block.niters; i++) {
        const mlc_tir_iter_var *di = &d->block.iters[i], *ti = &t->block.iters[i];
        if (di->kind != ti->kind)
          return DIFF(mt, "%s of block \"%s\" is %s where the intrinsic's %s is %s", ti->var->name, tn,
                      ti->kind == MLC_TIR_ITER_REDUCE ? "reduce" : "spatial", di->var->name,
                      di->kind == MLC_TIR_ITER_REDUCE ? "reduce" : "spatial");
        if (!const_equal(di->extent, ti->extent) || !const_equal(di->min, ti->min))
          return DIFF(mt, "%s of block \"%s\" ranges over [%s, %s + %s) where the intrinsic's %s ranges over [%s, %s + %s)",
                      ti->var->name, tn, sch_expr_str(s, ti->min), sch_expr_str(s, ti->min), sch_expr_str(s, ti->extent),
                      di->var->name, sch_expr_str(s, di->min), sch_expr_str(s, di->min), sch_expr_str(s, di->extent));
        if (!match_expr(mt, di->binding, ti->binding)) return 0;
      }
      for (int i = 0; i < d->block.niters; i++)
        if (!map_var(mt, d->block.iters[i].var, t->block.iters[i].var)) return 0;
      if (!d->block.init && t->block.init)
        return DIFF(mt, "block \"%s\" has an init where the intrinsic's block \"%s\" has none (decompose_reduction "
                    "first, or blockize where the init moves out)", tn, dn);
      if (d->block.init && (!t->block.init || !match_stmt(mt, d->block.init, t->block.init)))
        return t->block.init ? 0 : DIFF(mt, "block \"%s\" has no init where the intrinsic's block has one", tn);
      if (!d->block.predicate != !t->block.predicate)
        return DIFF(mt, "block \"%s\" %s a predicate where the intrinsic's block %s", tn,
                    t->block.predicate ? "has" : "has no", d->block.predicate ? "has one" : "has none");
      if (d->block.predicate && !match_expr(mt, d->block.predicate, t->block.predicate)) return 0;
      return match_stmt(mt, d->block.body, t->block.body);
    }
    case MLC_TIR_ALLOCATE:
    case MLC_TIR_ASSERT: return DIFF(mt, "the intrinsic's description has %s, which tensorize does not match", stmt_word(d));
  }
  return 0;
}

/* ---- the implementation with the parameters bound ------------------------------ */

typedef struct rebinder {
  mlc_tir_module *m;
  const mlc_tir_func *impl;
  const matcher *mt;
  int failed;
} rebinder;

/* The index list of an access of parameter |p| at |idx| (|n| of them). */
static mlc_tir_expr **rebase(rebinder *rb, int p, int n, mlc_tir_expr *const *idx) {
  const binding *b = &rb->mt->bind[p];
  mlc_tir_expr **v = MLC_ARENA_ARRAY(rb->m->arena, (size_t)b->rank, mlc_tir_expr *);
  if (!v) return NULL;
  for (int k = 0; k < b->rank; k++) {
    mlc_tir_expr *base = sch_lin_build(rb->m, &b->base[k]);
    v[k] = k < b->rank - n ? base : mlc_tir_is_const(base, 0) ? idx[k - (b->rank - n)]
                                                             : mlc_tir_add(rb->m, base, idx[k - (b->rank - n)]);
    if (!v[k]) return NULL;
  }
  return v;
}

static int impl_param(const rebinder *rb, const mlc_tir_buffer *b) {
  for (int i = 0; i < rb->impl->nparams; i++)
    if (rb->impl->params[i] == b) return i;
  return -1;
}

static void rebind_expr(rebinder *rb, mlc_tir_expr *e) {
  if (!e) return;
  switch (e->kind) {
    case MLC_TIR_LOAD: {
      for (int i = 0; i < e->load.n; i++) rebind_expr(rb, e->load.indices[i]);
      int p = impl_param(rb, e->load.buffer);
      if (p < 0) return;
      mlc_tir_expr **v = rebase(rb, p, e->load.n, e->load.indices);
      if (!v) {
        rb->failed = 1;
        return;
      }
      e->load.buffer = rb->mt->bind[p].buf;
      e->load.n = rb->mt->bind[p].rank;
      e->load.indices = v;
      return;
    }
    case MLC_TIR_BINARY:
      rebind_expr(rb, e->bin.a);
      rebind_expr(rb, e->bin.b);
      return;
    case MLC_TIR_NOT:
    case MLC_TIR_CAST: rebind_expr(rb, e->un.a); return;
    case MLC_TIR_SELECT:
      rebind_expr(rb, e->select.c);
      rebind_expr(rb, e->select.t);
      rebind_expr(rb, e->select.f);
      return;
    case MLC_TIR_CALL:
      for (int i = 0; i < e->call.n; i++) rebind_expr(rb, e->call.args[i]);
      return;
    case MLC_TIR_RAMP:
      rebind_expr(rb, e->ramp.base);
      rebind_expr(rb, e->ramp.stride);
      return;
    case MLC_TIR_BROADCAST: rebind_expr(rb, e->un.a); return;
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF:
    case MLC_TIR_REDUCE: return;
  }
}

static void rebind_stmt(rebinder *rb, mlc_tir_stmt *st) {
  if (!st) return;
  switch (st->kind) {
    case MLC_TIR_FOR:
      rebind_expr(rb, st->loop.min);
      rebind_expr(rb, st->loop.extent);
      rebind_stmt(rb, st->loop.body);
      return;
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) rebind_stmt(rb, st->seq.stmts[i]);
      return;
    case MLC_TIR_STORE: {
      for (int i = 0; i < st->store.n; i++) rebind_expr(rb, st->store.indices[i]);
      rebind_expr(rb, st->store.value);
      int p = impl_param(rb, st->store.buffer);
      if (p < 0) return;
      mlc_tir_expr **v = rebase(rb, p, st->store.n, st->store.indices);
      if (!v) {
        rb->failed = 1;
        return;
      }
      st->store.buffer = rb->mt->bind[p].buf;
      st->store.n = rb->mt->bind[p].rank;
      st->store.indices = v;
      return;
    }
    case MLC_TIR_IF:
      rebind_expr(rb, st->if_.cond);
      rebind_stmt(rb, st->if_.then_s);
      rebind_stmt(rb, st->if_.else_s);
      return;
    case MLC_TIR_ALLOCATE: rebind_stmt(rb, st->alloc.body); return;
    case MLC_TIR_EVALUATE: rebind_expr(rb, st->eval.value); return;
    case MLC_TIR_ASSERT:
      rebind_expr(rb, st->assert_.cond);
      for (int i = 0; i < st->assert_.nvals; i++) rebind_expr(rb, st->assert_.vals[i]);
      return;
    case MLC_TIR_BLOCK: /* an implementation has none (mlc_sch_intrin_build) */ return;
  }
}

/* Retires the handles of every loop and block of |st|. */
static void retire_all(mlc_sch *s, const mlc_tir_stmt *st) {
  if (!st) return;
  switch (st->kind) {
    case MLC_TIR_FOR:
      sch_retire(s, st);
      retire_all(s, st->loop.body);
      return;
    case MLC_TIR_BLOCK:
      sch_retire(s, st);
      retire_all(s, st->block.init);
      retire_all(s, st->block.body);
      return;
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) retire_all(s, st->seq.stmts[i]);
      return;
    case MLC_TIR_IF:
      retire_all(s, st->if_.then_s);
      retire_all(s, st->if_.else_s);
      return;
    case MLC_TIR_ALLOCATE: retire_all(s, st->alloc.body); return;
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return;
  }
}

/* ---- the primitive ------------------------------------------------------------- */

/* Matches |blk| against the intrinsic and, on a match, replaces its body. */
static mlc_status tensorize_block(mlc_sch *s, mlc_tir_stmt *blk, const char *name) {
  const mlc_sch_intrin *in = mlc_sch_intrin_find(name);
  mlc_tir_func *desc, *impl;
  MLC_RETURN_IF_ERROR(mlc_sch_intrin_build(s->m, in, &desc, &impl));
  if (desc->nparams > MAX_PARAMS)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "the intrinsic \"%s\" has more than %d parameters", name, MAX_PARAMS);
  matcher *mt = mlc_mem_calloc(1, sizeof *mt);
  if (!mt) return mlc_oom();
  mt->s = s;
  mt->desc = desc;
  mlc_status err = NULL;
  if (!match_stmt(mt, desc->body, blk->block.body))
    err = sch_fail(s, MLC_SCH_ERR_TENSORIZE, "%s does not match the intrinsic \"%s\": %s", sch_desc(s, blk), name,
                   mt->why ? mt->why : "?");
  for (int p = 0; !err && p < desc->nparams; p++)
    if (!mt->bind[p].buf)
      err = sch_fail(s, MLC_SCH_ERR_TENSORIZE, "%s does not match the intrinsic \"%s\": it has no access of %s",
                     sch_desc(s, blk), name, desc->params[p]->name);
  mlc_tir_stmt *body = NULL;
  if (!err) {
    mlc_tir_subst fresh = {0, NULL, NULL, 0, NULL, NULL, 1};
    body = mlc_tir_stmt_copy(s->m, impl->body, &fresh);
    rebinder rb = {s->m, impl, mt, 0};
    if (body) rebind_stmt(&rb, body);
    if (!body || rb.failed) err = mlc_oom();
  }
  mlc_mem_free(mt);
  if (err) return err;
  retire_all(s, blk->block.body);
  blk->block.body = body;
  return NULL;
}

mlc_status mlc_sch_apply_tensorize(mlc_sch *s, mlc_sch_inst *in) {
  const char *name;
  MLC_RETURN_IF_ERROR(sch_arg_str(s, in, "tensor_intrin", &name));
  const mlc_sch_arg *a = sch_arg(in, "block_or_loop");
  if (!a) return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "missing argument block_or_loop");
  mlc_sch_rv_kind k = a->kind == MLC_SCH_ARG_RV ? mlc_sch_rv_kind_of(s, a->rv) : MLC_SCH_RV_NONE;
  mlc_tir_stmt *st;
  if (k == MLC_SCH_RV_BLOCK)
    MLC_RETURN_IF_ERROR(sch_item_block(s, a, "block_or_loop", &st));
  else
    MLC_RETURN_IF_ERROR(sch_item_loop(s, a, "block_or_loop", &st));
  if (!mlc_sch_intrin_find(name)) {
    char known[512] = "";
    size_t len = 0;
    for (int i = 0; i < mlc_sch_intrin_count() && len < sizeof known; i++)
      len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", mlc_sch_intrin_at(i)->name);
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "no tensor intrinsic named \"%s\" (known: %s)", name, known);
  }
  if (k == MLC_SCH_RV_BLOCK) return tensorize_block(s, st, name);
  sch_blockized b;
  MLC_RETURN_IF_ERROR(sch_blockize_build(s, st, &b));
  MLC_RETURN_IF_ERROR(sch_blockize_apply(s, &b));
  mlc_status err = tensorize_block(s, b.outer, name);
  if (err) sch_blockize_undo(s, &b);
  return err;
}

mlc_status mlc_sch_tensorize(mlc_sch *s, mlc_sch_rv block_or_loop, const char *intrin) {
  mlc_sch_arg a[2] = {MLC_SCH_RV_ARG(block_or_loop), MLC_SCH_STR_ARG(intrin ? intrin : "")};
  a[0].key = "block_or_loop";
  a[1].key = "tensor_intrin";
  return mlc_sch_apply(s, MLC_SCH_INST_TENSORIZE, 2, a, NULL, NULL);
}
