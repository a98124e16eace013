/*
** compute_loc.c: the machinery the compute-location primitives share
** (compute_loc.h): expression equality and load substitution, the blocks
** of a scope, removing a block's loop nest, ranges of index expressions and
** placing a block under a loop with regenerated loops.
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lower/arith.h"
#include "lower/tir_visit.h"
#include "lower/schedule/compute_loc.h"

/* ---- expressions ------------------------------------------------------------------ */

static int reads_pre(void *ctx, const mlc_tir_expr *e) {
  return e->kind == MLC_TIR_LOAD && e->load.buffer == ctx ? MLC_TIR_VISIT_STOP : MLC_TIR_VISIT_CONTINUE;
}

int cl_expr_reads(const mlc_tir_expr *e, const mlc_tir_buffer *b) {
  mlc_tir_visitor v = {0};
  v.ctx = (void *)b; /* compared, never written */
  v.pre_expr = reads_pre;
  return mlc_tir_visit_expr(&v, e);
}

typedef struct repl {
  mlc_tir_module *m;
  const mlc_tir_buffer *b;
  cl_load_fn fn;
  void *ctx;
  int oom;
} repl;

static mlc_tir_expr *rep_post(mlc_tir_mutator *mu, const mlc_tir_expr *orig, mlc_tir_expr *rebuilt) {
  repl *r = mu->ctx;
  if (orig->kind != MLC_TIR_LOAD || orig->load.buffer != r->b) return rebuilt;
  mlc_tir_expr *out = r->fn(r->ctx, mu->m, orig, rebuilt->load.indices);
  if (!out) mu->failed = 1;
  return out;
}

static mlc_tir_expr *rep(repl *r, mlc_tir_expr *e) {
  if (!e || r->oom || !cl_expr_reads(e, r->b)) return e;
  mlc_tir_mutator mu = {0};
  mu.m = r->m;
  mu.ctx = r;
  mu.post_expr = rep_post;
  mlc_tir_expr *out = mlc_tir_mutate_expr(&mu, e);
  if (!out) r->oom = 1;
  return out;
}

mlc_tir_expr *cl_replace_loads(mlc_tir_module *m, mlc_tir_expr *e, const mlc_tir_buffer *b, cl_load_fn fn,
                               void *ctx) {
  repl r = {m, b, fn, ctx, 0};
  mlc_tir_expr *out = rep(&r, e);
  return r.oom ? NULL : out;
}

static void rep_stmt(repl *r, mlc_tir_stmt *st) {
  if (!st || r->oom) return;
  switch (st->kind) {
    case MLC_TIR_FOR:
      st->loop.min = rep(r, st->loop.min);
      st->loop.extent = rep(r, st->loop.extent);
      rep_stmt(r, st->loop.body);
      return;
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) rep_stmt(r, st->seq.stmts[i]);
      return;
    case MLC_TIR_STORE:
      for (int i = 0; i < st->store.n; i++) st->store.indices[i] = rep(r, st->store.indices[i]);
      st->store.value = rep(r, st->store.value);
      return;
    case MLC_TIR_IF:
      st->if_.cond = rep(r, st->if_.cond);
      rep_stmt(r, st->if_.then_s);
      rep_stmt(r, st->if_.else_s);
      return;
    case MLC_TIR_ALLOCATE: rep_stmt(r, st->alloc.body); return;
    case MLC_TIR_EVALUATE: st->eval.value = rep(r, st->eval.value); return;
    case MLC_TIR_BLOCK:
      for (int i = 0; i < st->block.niters; i++) {
        mlc_tir_iter_var *it = &st->block.iters[i];
        it->min = rep(r, it->min);
        it->extent = rep(r, it->extent);
        it->binding = rep(r, it->binding);
      }
      st->block.predicate = rep(r, st->block.predicate);
      rep_stmt(r, st->block.init);
      rep_stmt(r, st->block.body);
      return;
    case MLC_TIR_ASSERT:
      st->assert_.cond = rep(r, st->assert_.cond);
      for (int i = 0; i < st->assert_.nvals; i++) st->assert_.vals[i] = rep(r, st->assert_.vals[i]);
      return;
  }
}

int cl_replace_loads_stmt(mlc_tir_module *m, mlc_tir_stmt *st, const mlc_tir_buffer *b, cl_load_fn fn, void *ctx) {
  repl r = {m, b, fn, ctx, 0};
  rep_stmt(&r, st);
  return r.oom ? -1 : 0;
}

mlc_tir_expr *cl_bind(mlc_tir_module *m, const mlc_tir_stmt *blk, const mlc_tir_expr *e) {
  int n = blk->block.niters;
  mlc_tir_var **vars = MLC_ARENA_ARRAY(m->arena, (size_t)(n ? n : 1), mlc_tir_var *);
  mlc_tir_expr **vals = MLC_ARENA_ARRAY(m->arena, (size_t)(n ? n : 1), mlc_tir_expr *);
  if (!vars || !vals) return NULL;
  for (int i = 0; i < n; i++) {
    vars[i] = blk->block.iters[i].var;
    vals[i] = blk->block.iters[i].binding;
  }
  mlc_tir_subst sub = {n, vars, vals, 0, NULL, NULL, 0};
  return mlc_tir_expr_copy(m, e, &sub);
}

/* ---- blocks and buffers ------------------------------------------------------------ */

int cl_scope_blocks(mlc_sch *s, const mlc_tir_stmt *blk, mlc_tir_stmt **out, int *at) {
  mlc_tir_stmt *scope = sch_scope(s, blk);
  int n = sch_child_blocks(scope ? scope : s->func->body, out, CL_MAX_BLOCKS);
  *at = -1;
  for (int i = 0; i < n; i++)
    if (out[i] == blk) *at = i;
  return n;
}

int cl_is_param(const mlc_sch *s, const mlc_tir_buffer *b) {
  for (int i = 0; i < s->func->nparams; i++)
    if (s->func->params[i] == b) return 1;
  return 0;
}

typedef struct bufset {
  mlc_tir_buffer **out;
  int n, max;
} bufset;

static void add_buf(bufset *bs, mlc_tir_buffer *b) {
  if (bs->n < 0) return;
  for (int i = 0; i < bs->n; i++)
    if (bs->out[i] == b) return;
  if (bs->n >= bs->max) {
    bs->n = -1;
    return;
  }
  bs->out[bs->n++] = b;
}

static int bufs_pre(void *ctx, const mlc_tir_expr *e) {
  if (e->kind == MLC_TIR_LOAD) add_buf(ctx, e->load.buffer);
  return MLC_TIR_VISIT_CONTINUE;
}

static void expr_bufs(const mlc_tir_expr *e, bufset *bs) {
  mlc_tir_visitor v = {0};
  v.ctx = bs;
  v.pre_expr = bufs_pre;
  mlc_tir_visit_expr(&v, e);
}

/* |reads|: loads into |bs|; else stores. */
static void stmt_bufs(const mlc_tir_stmt *st, bufset *bs, int reads) {
  if (!st) return;
  switch (st->kind) {
    case MLC_TIR_FOR:
      if (reads) {
        expr_bufs(st->loop.min, bs);
        expr_bufs(st->loop.extent, bs);
      }
      stmt_bufs(st->loop.body, bs, reads);
      return;
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) stmt_bufs(st->seq.stmts[i], bs, reads);
      return;
    case MLC_TIR_STORE:
      if (reads) {
        for (int i = 0; i < st->store.n; i++) expr_bufs(st->store.indices[i], bs);
        expr_bufs(st->store.value, bs);
      } else {
        add_buf(bs, st->store.buffer);
      }
      return;
    case MLC_TIR_IF:
      if (reads) expr_bufs(st->if_.cond, bs);
      stmt_bufs(st->if_.then_s, bs, reads);
      stmt_bufs(st->if_.else_s, bs, reads);
      return;
    case MLC_TIR_ALLOCATE: stmt_bufs(st->alloc.body, bs, reads); return;
    case MLC_TIR_EVALUATE:
      if (reads) expr_bufs(st->eval.value, bs);
      return;
    case MLC_TIR_BLOCK:
      if (reads) {
        for (int i = 0; i < st->block.niters; i++) expr_bufs(st->block.iters[i].binding, bs);
        expr_bufs(st->block.predicate, bs);
      }
      stmt_bufs(st->block.init, bs, reads);
      stmt_bufs(st->block.body, bs, reads);
      return;
    case MLC_TIR_ASSERT:
      if (reads) {
        expr_bufs(st->assert_.cond, bs);
        for (int i = 0; i < st->assert_.nvals; i++) expr_bufs(st->assert_.vals[i], bs);
      }
      return;
  }
}

int cl_block_writes(const mlc_tir_stmt *blk, mlc_tir_buffer **out, int max) {
  bufset bs = {out, 0, max};
  stmt_bufs(blk, &bs, 0);
  return bs.n;
}

int cl_block_reads(const mlc_tir_stmt *blk, mlc_tir_buffer **out, int max) {
  bufset bs = {out, 0, max};
  stmt_bufs(blk, &bs, 1);
  return bs.n;
}

static mlc_tir_stmt *find_alloc(mlc_tir_stmt *st, const mlc_tir_buffer *b) {
  if (!st) return NULL;
  mlc_tir_stmt *r = NULL;
  switch (st->kind) {
    case MLC_TIR_ALLOCATE: return st->alloc.buffer == b ? st : find_alloc(st->alloc.body, b);
    case MLC_TIR_FOR: return find_alloc(st->loop.body, b);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n && !r; i++) r = find_alloc(st->seq.stmts[i], b);
      return r;
    case MLC_TIR_IF: return (r = find_alloc(st->if_.then_s, b)) ? r : find_alloc(st->if_.else_s, b);
    case MLC_TIR_BLOCK: return (r = find_alloc(st->block.init, b)) ? r : find_alloc(st->block.body, b);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return NULL;
  }
  return NULL;
}

mlc_tir_stmt *cl_find_alloc(mlc_sch *s, const mlc_tir_buffer *b) { return find_alloc(s->func->body, b); }

int cl_buffer_used(mlc_sch *s, const mlc_tir_buffer *b) {
  return sch_block_reads(s->func->body, b) || sch_block_writes(s->func->body, b);
}

mlc_status cl_check_allocs(mlc_sch *s, const mlc_tir_stmt *blk, const mlc_tir_stmt *loop) {
  mlc_tir_stmt *path[512];
  int n = sch_path(s, blk, path, 512);
  for (int i = 0; i < n - 1; i++)
    if (path[i]->kind == MLC_TIR_ALLOCATE && !sch_contains(path[i], loop))
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s would leave the allocation of %s, which does not enclose %s",
                      sch_desc(s, blk), path[i]->alloc.buffer->name, sch_desc(s, loop));
  return NULL;
}

/* ---- removing a block's loop nest ---------------------------------------------------- */

mlc_status cl_nest_find(mlc_sch *s, mlc_tir_stmt *blk, cl_nest *out) {
  mlc_tir_stmt *root = blk, *parent = NULL;
  for (;;) {
    if (!sch_slot(s, root, &parent))
      return mlc_make_status(MLC_INTERNAL, "schedule: %s is not in the function", sch_desc(s, blk));
    if (parent && parent->kind == MLC_TIR_FOR) {
      root = parent;
      continue;
    }
    break;
  }
  if (!parent || parent->kind != MLC_TIR_SEQ)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s is the only statement of its scope", sch_desc(s, blk));
  out->block = blk;
  out->root = root;
  out->parent = parent;
  return NULL;
}

mlc_status cl_nest_remove(mlc_sch *s, const cl_nest *n, int retire_block) {
  mlc_tir_stmt *seq = n->parent;
  int k = 0;
  for (int i = 0; i < seq->seq.n; i++)
    if (seq->seq.stmts[i] != n->root) seq->seq.stmts[k++] = seq->seq.stmts[i];
  seq->seq.n = k;
  for (mlc_tir_stmt *st = n->root; st && st != n->block; st = st->loop.body) sch_retire(s, st);
  if (retire_block) sch_retire(s, n->block);
  if (k == 1) return sch_replace(s, seq, seq->seq.stmts[0]);
  return NULL;
}

/* ---- ranges of index expressions ----------------------------------------------------- */

int cl_env_add_loop(cl_env *env, const mlc_tir_stmt *loop) {
  if (env->n >= CL_MAX_LOOPS || loop->loop.min->kind != MLC_TIR_INT_IMM ||
      loop->loop.extent->kind != MLC_TIR_INT_IMM || loop->loop.extent->int_value < 1)
    return -1;
  env->var[env->n] = loop->loop.var;
  env->lo[env->n] = loop->loop.min->int_value;
  env->hi[env->n] = loop->loop.min->int_value + loop->loop.extent->int_value - 1;
  env->n++;
  return 0;
}

void cl_env_above(mlc_sch *s, const mlc_tir_stmt *st, cl_env *env) {
  mlc_tir_stmt *path[512];
  int n = sch_path(s, st, path, 512);
  env->n = 0;
  for (int i = 0; i < n; i++)
    if (path[i]->kind == MLC_TIR_FOR) (void)cl_env_add_loop(env, path[i]);
}

static int env_find(const cl_env *env, const mlc_tir_var *v) {
  for (int i = env->n - 1; i >= 0; i--)
    if (env->var[i] == v) return i;
  return -1;
}

static int uses_env(const mlc_tir_expr *e, const cl_env *env) {
  for (int i = 0; i < env->n; i++)
    if (mlc_tir_expr_uses_var(e, env->var[i])) return 1;
  return 0;
}

static int atom_eq(const mlc_tir_expr *a, const mlc_tir_expr *b) { return mlc_tir_expr_equal(a, b); }

static int add_term(cl_range *r, int64_t coef, const mlc_tir_expr *atom) {
  for (int i = 0; i < r->nterms; i++)
    if (atom_eq(r->atom[i], atom)) {
      r->coef[i] += coef;
      if (r->coef[i] == 0) {
        for (int j = i + 1; j < r->nterms; j++) {
          r->coef[j - 1] = r->coef[j];
          r->atom[j - 1] = r->atom[j];
        }
        r->nterms--;
      }
      return 0;
    }
  if (coef == 0) return 0;
  if (r->nterms >= CL_MAX_TERMS) return -1;
  r->coef[r->nterms] = coef;
  r->atom[r->nterms++] = atom;
  return 0;
}

/* Products and sums that stay far from overflow (indices are small). */
#define CL_LIMIT ((int64_t)1 << 52)
static int too_big(int64_t v) { return v > CL_LIMIT || v < -CL_LIMIT; }

static int64_t fdiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int range_rec(const mlc_tir_expr *e, const cl_env *env, cl_range *out) {
  memset(out, 0, sizeof *out);
  if (!e || (e->dtype != MLC_DTYPE_I64 && e->dtype != MLC_DTYPE_I32)) return -1;
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
      out->lo = out->hi = e->int_value;
      return too_big(e->int_value) ? -1 : 0;
    case MLC_TIR_VAR_REF: {
      int k = env_find(env, e->var);
      if (k >= 0) {
        out->lo = env->lo[k];
        out->hi = env->hi[k];
        return 0;
      }
      return add_term(out, 1, e);
    }
    case MLC_TIR_BINARY: {
      cl_range a, b;
      if (range_rec(e->bin.a, env, &a) || range_rec(e->bin.b, env, &b)) goto opaque;
      switch (e->bin.op) {
        case MLC_TIR_ADD:
        case MLC_TIR_SUB: {
          int64_t sg = e->bin.op == MLC_TIR_ADD ? 1 : -1;
          *out = a;
          for (int i = 0; i < b.nterms; i++)
            if (add_term(out, sg * b.coef[i], b.atom[i])) return -1;
          out->lo = sg > 0 ? a.lo + b.lo : a.lo - b.hi;
          out->hi = sg > 0 ? a.hi + b.hi : a.hi - b.lo;
          return too_big(out->lo) || too_big(out->hi) ? -1 : 0;
        }
        case MLC_TIR_MUL: {
          const cl_range *v = &a, *c = &b;
          if (a.nterms == 0 && a.lo == a.hi) {
            v = &b;
            c = &a;
          }
          if (c->nterms || c->lo != c->hi) {
            if (a.nterms || b.nterms) goto opaque;
            /* both constant intervals */
            int64_t p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
            if (too_big(a.lo) || too_big(a.hi) || too_big(b.lo) || too_big(b.hi)) return -1;
            out->lo = out->hi = p[0];
            for (int i = 1; i < 4; i++) {
              if (p[i] < out->lo) out->lo = p[i];
              if (p[i] > out->hi) out->hi = p[i];
            }
            return 0;
          }
          int64_t k = c->lo;
          if (k > (1 << 20) || k < -(1 << 20)) return -1;
          for (int i = 0; i < v->nterms; i++)
            if (add_term(out, v->coef[i] * k, v->atom[i])) return -1;
          out->lo = k >= 0 ? v->lo * k : v->hi * k;
          out->hi = k >= 0 ? v->hi * k : v->lo * k;
          return too_big(out->lo) || too_big(out->hi) ? -1 : 0;
        }
        case MLC_TIR_FLOORDIV:
        case MLC_TIR_FLOORMOD:
          if (a.nterms || b.nterms || b.lo != b.hi || b.lo <= 0) goto opaque;
          if (e->bin.op == MLC_TIR_FLOORDIV) {
            out->lo = fdiv(a.lo, b.lo);
            out->hi = fdiv(a.hi, b.lo);
          } else if (fdiv(a.lo, b.lo) == fdiv(a.hi, b.lo)) {
            out->lo = a.lo - fdiv(a.lo, b.lo) * b.lo;
            out->hi = a.hi - fdiv(a.hi, b.lo) * b.lo;
          } else {
            out->lo = 0;
            out->hi = b.lo - 1;
          }
          return 0;
        case MLC_TIR_MIN:
        case MLC_TIR_MAX:
          if (a.nterms || b.nterms) goto opaque;
          if (e->bin.op == MLC_TIR_MIN) {
            out->lo = a.lo < b.lo ? a.lo : b.lo;
            out->hi = a.hi < b.hi ? a.hi : b.hi;
          } else {
            out->lo = a.lo > b.lo ? a.lo : b.lo;
            out->hi = a.hi > b.hi ? a.hi : b.hi;
          }
          return 0;
        case MLC_TIR_DIV:
        case MLC_TIR_TRUNCDIV:
        case MLC_TIR_TRUNCMOD:
        case MLC_TIR_EQ:
        case MLC_TIR_NE:
        case MLC_TIR_LT:
        case MLC_TIR_LE:
        case MLC_TIR_GT:
        case MLC_TIR_GE:
        case MLC_TIR_AND:
        case MLC_TIR_OR:
        case MLC_TIR_BINOP_COUNT: goto opaque;
      }
      goto opaque;
    }
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_NOT:
    case MLC_TIR_SELECT:
    case MLC_TIR_CAST:
    case MLC_TIR_LOAD:
    case MLC_TIR_CALL:
    case MLC_TIR_REDUCE:
    case MLC_TIR_RAMP:
    case MLC_TIR_BROADCAST: goto opaque;
  }
opaque:
  /* a term of symbolic variables only, kept whole */
  memset(out, 0, sizeof *out);
  if (uses_env(e, env) || mlc_tir_expr_has_load(e)) return -1;
  return add_term(out, 1, e);
}

int cl_range_of(const mlc_tir_expr *e, const cl_env *env, cl_range *out) { return range_rec(e, env, out); }

static int same_sym(const cl_range *a, const cl_range *b) {
  if (a->nterms != b->nterms) return 0;
  for (int i = 0; i < a->nterms; i++) {
    int found = 0;
    for (int j = 0; j < b->nterms && !found; j++) found = a->coef[i] == b->coef[j] && atom_eq(a->atom[i], b->atom[j]);
    if (!found) return 0;
  }
  return 1;
}

int cl_range_union(cl_range *acc, const cl_range *r) {
  if (!same_sym(acc, r)) return -1;
  if (r->lo < acc->lo) acc->lo = r->lo;
  if (r->hi > acc->hi) acc->hi = r->hi;
  return 0;
}

int cl_range_eq(const cl_range *a, const cl_range *b) { return same_sym(a, b) && a->lo == b->lo && a->hi == b->hi; }

mlc_tir_expr *cl_range_min(mlc_tir_module *m, const cl_range *r) {
  mlc_tir_expr *sum = NULL;
  for (int i = 0; i < r->nterms; i++) {
    int64_t c = r->coef[i];
    mlc_tir_expr *atom = (mlc_tir_expr *)r->atom[i];
    mlc_tir_expr *t = (c == 1 || c == -1) ? atom : mlc_tir_mul(m, atom, mlc_tir_i64(m, c < 0 ? -c : c));
    if (!sum)
      sum = c < 0 ? mlc_tir_sub(m, mlc_tir_i64(m, 0), t) : t;
    else
      sum = c < 0 ? mlc_tir_sub(m, sum, t) : mlc_tir_add(m, sum, t);
  }
  if (!sum) return mlc_tir_i64(m, r->lo);
  if (r->lo > 0) return mlc_tir_add(m, sum, mlc_tir_i64(m, r->lo));
  if (r->lo < 0) return mlc_tir_sub(m, sum, mlc_tir_i64(m, -r->lo));
  return sum;
}

/* ---- placing a block under a loop ----------------------------------------------------- */

int cl_body_index(const mlc_tir_stmt *loop, mlc_tir_stmt *const *blocks, int n, int last) {
  const mlc_tir_stmt *body = loop->loop.body;
  int cnt = body->kind == MLC_TIR_SEQ ? body->seq.n : 1;
  int found = -1;
  for (int i = 0; i < cnt; i++) {
    const mlc_tir_stmt *c = body->kind == MLC_TIR_SEQ ? body->seq.stmts[i] : body;
    for (int k = 0; k < n; k++)
      if (sch_contains(c, blocks[k])) {
        if (!last) return i;
        found = i;
        break;
      }
  }
  return found;
}

/* Adds "cond" to *pred with "and". */
static mlc_tir_expr *and_pred(mlc_tir_module *m, mlc_tir_expr *pred, mlc_tir_expr *cond) {
  return pred ? mlc_tir_binary(m, MLC_TIR_AND, pred, cond) : cond;
}

/* Loop variables with their (possibly symbolic) domains [min, min + ext). */
typedef struct sym_doms {
  int n;
  const mlc_tir_var *var[CL_MAX_LOOPS + 512];
  const mlc_tir_expr *min[CL_MAX_LOOPS + 512], *ext[CL_MAX_LOOPS + 512];
} sym_doms;

static void dom_add(sym_doms *d, const mlc_tir_var *v, const mlc_tir_expr *min, const mlc_tir_expr *ext) {
  if (d->n >= (int)(sizeof d->var / sizeof d->var[0])) return;
  d->var[d->n] = v;
  d->min[d->n] = min;
  d->ext[d->n] = ext;
  d->n++;
}

/* The loops around |loop| and |loop| itself. */
static void dom_add_above(mlc_sch *s, const mlc_tir_stmt *loop, sym_doms *d) {
  mlc_tir_stmt *above[512];
  int n = sch_loops_above(s, loop, above, 512);
  for (int i = 0; i < n; i++) dom_add(d, above[i]->loop.var, above[i]->loop.min, above[i]->loop.extent);
  dom_add(d, loop->loop.var, loop->loop.min, loop->loop.extent);
}

/* The largest (|hi|) or smallest value of affine |e| over the domains, as
** an expression (variables at their ends: positive constant multiples,
** sums and differences); NULL when |e| has another form. */
static mlc_tir_expr *sym_end(mlc_tir_module *m, const sym_doms *d, const mlc_tir_expr *e, int hi) {
  switch (e->kind) {
    case MLC_TIR_INT_IMM: return (mlc_tir_expr *)e;
    case MLC_TIR_VAR_REF:
      for (int i = d->n - 1; i >= 0; i--)
        if (d->var[i] == e->var) {
          mlc_tir_expr *min = d->min[i] ? (mlc_tir_expr *)d->min[i] : mlc_tir_i64(m, 0);
          return hi ? mlc_tir_sub(m, mlc_tir_add(m, min, (mlc_tir_expr *)d->ext[i]), mlc_tir_i64(m, 1)) : min;
        }
      return NULL;
    case MLC_TIR_BINARY: {
      const mlc_tir_expr *a = e->bin.a, *b = e->bin.b;
      if (e->bin.op == MLC_TIR_ADD || e->bin.op == MLC_TIR_SUB) {
        mlc_tir_expr *x = sym_end(m, d, a, hi), *y = sym_end(m, d, b, e->bin.op == MLC_TIR_ADD ? hi : !hi);
        if (!x || !y) return NULL;
        return e->bin.op == MLC_TIR_ADD ? mlc_tir_add(m, x, y) : mlc_tir_sub(m, x, y);
      }
      if (e->bin.op == MLC_TIR_MUL) {
        if (a->kind == MLC_TIR_INT_IMM) {
          const mlc_tir_expr *t = a;
          a = b;
          b = t;
        }
        if (b->kind != MLC_TIR_INT_IMM || b->int_value < 0) return NULL;
        mlc_tir_expr *x = sym_end(m, d, a, hi);
        return x ? mlc_tir_mul(m, x, (mlc_tir_expr *)b) : NULL;
      }
      return NULL;
    }
    default: return NULL;
  }
}

/* Whether |bind| >= |limit| (|lower|) or |bind| < |limit| holds over the
** domains: its smallest / largest value against |limit| simplifies to a
** constant of the right sign. */
static int sym_prove(mlc_arith *an, mlc_tir_module *m, const sym_doms *d, const mlc_tir_expr *bind,
                     mlc_tir_expr *limit, int lower) {
  mlc_tir_expr *end = sym_end(m, d, bind, !lower);
  if (!end || !limit) return 0;
  mlc_tir_expr *diff = mlc_arith_simplify(an, m, mlc_tir_sub(m, end, limit));
  if (!diff || diff->kind != MLC_TIR_INT_IMM) return 0;
  return lower ? diff->int_value >= 0 : diff->int_value < 0;
}

mlc_status cl_place(mlc_sch *s, const cl_nest *nest, mlc_tir_stmt *loop, int at, const int *has,
                    const cl_range *ranges, int preserve_unit) {
  mlc_tir_module *m = s->m;
  mlc_tir_stmt *blk = nest->block;
  int n = blk->block.niters;
  mlc_tir_iter_var *its = MLC_ARENA_ARRAY(m->arena, (size_t)(n ? n : 1), mlc_tir_iter_var);
  mlc_tir_var *lv[CL_MAX_LOOPS];
  mlc_tir_expr *lext[CL_MAX_LOOPS];
  int nl = 0;
  mlc_tir_expr *pred = NULL;
  mlc_arith *an = NULL;
  mlc_status st = NULL;
  cl_env outer;
  cl_env_above(s, loop, &outer);
  if (!its) return mlc_oom();
  for (int k = 0; k < n; k++) {
    const mlc_tir_iter_var *it = &blk->block.iters[k];
    mlc_tir_expr *min, *ext;
    cl_range full;
    int64_t lo = 0, hi = 0;
    int known = 0;
    its[k] = *it;
    if (has[k]) {
      min = cl_range_min(m, &ranges[k]);
      ext = mlc_tir_i64(m, ranges[k].hi - ranges[k].lo + 1);
      /* the values the region takes over every iteration of the outer loops */
      if (min && cl_range_of(min, &outer, &full) == 0 && full.nterms == 0) {
        lo = full.lo;
        hi = full.hi + (ranges[k].hi - ranges[k].lo);
        known = 1;
      }
    } else {
      min = it->min;
      ext = it->extent;
    }
    if (!min || !ext) return mlc_arith_destroy(an), mlc_oom();
    mlc_tir_expr *bind = min;
    if (!(mlc_tir_is_const(ext, 1) && !preserve_unit)) {
      if (nl >= CL_MAX_LOOPS)
        return mlc_arith_destroy(an),
               sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than %d loops around %s", CL_MAX_LOOPS, sch_desc(s, blk));
      char name[32];
      snprintf(name, sizeof name, "ax%d", nl);
      lv[nl] = mlc_tir_var_new(m, name, MLC_DTYPE_I64);
      lext[nl] = ext;
      if (!lv[nl]) return mlc_arith_destroy(an), mlc_oom();
      bind = mlc_tir_add(m, min, mlc_tir_ref(m, lv[nl]));
      nl++;
    }
    if (!bind) return mlc_arith_destroy(an), mlc_oom();
    its[k].binding = bind;
    if (has[k]) {
      /* where the region may leave the iteration domain, a predicate keeps
      ** the block inside it (symbolic bounds: unless the analyzer proves
      ** it stays, with the loops above and the new ones bound) */
      int dom_known = it->min->kind == MLC_TIR_INT_IMM && it->extent->kind == MLC_TIR_INT_IMM;
      int64_t dlo = dom_known ? it->min->int_value : 0, dhi = dom_known ? dlo + it->extent->int_value - 1 : 0;
      mlc_tir_expr *ge = mlc_tir_binary(m, MLC_TIR_GE, bind, it->min);
      mlc_tir_expr *lt = mlc_tir_binary(m, MLC_TIR_LT, bind, mlc_tir_add(m, it->min, it->extent));
      int need_lo = !known || !dom_known || lo < dlo, need_hi = !known || !dom_known || hi > dhi;
      if ((need_lo || need_hi) && (!known || !dom_known)) {
        if (!an && !mlc_arith_create(mlc_allocator_default(), &an) && (st = sch_bind_loops_above(s, an, loop))) {
          mlc_status_free(st);
          mlc_arith_destroy(an);
          an = NULL;
        }
        if (an) mlc_status_free(mlc_arith_bind(an, loop->loop.var, loop->loop.min, loop->loop.extent));
        for (int i = 0; an && i < nl; i++) mlc_status_free(mlc_arith_bind(an, lv[i], mlc_tir_i64(m, 0), lext[i]));
        sym_doms dom = {0};
        dom_add_above(s, loop, &dom);
        for (int i = 0; i < nl; i++) dom_add(&dom, lv[i], NULL, lext[i]);
        if (an && need_lo && ge && (mlc_arith_prove(an, ge) || sym_prove(an, m, &dom, bind, it->min, 1))) need_lo = 0;
        if (an && need_hi && lt &&
            (mlc_arith_prove(an, lt) || sym_prove(an, m, &dom, bind, mlc_tir_add(m, it->min, it->extent), 0)))
          need_hi = 0;
      }
      if (need_lo) pred = and_pred(m, pred, ge);
      if (need_hi) pred = and_pred(m, pred, lt);
    }
  }
  mlc_arith_destroy(an);
  mlc_tir_stmt *nest_new = blk;
  for (int i = nl - 1; i >= 0; i--)
    nest_new = mlc_tir_for(m, lv[i], mlc_tir_i64(m, 0), lext[i], MLC_TIR_FOR_SERIAL, NULL, nest_new);
  if (!nest_new) return mlc_oom();
  /* the loop's new body */
  mlc_tir_stmt *body = loop->loop.body;
  int cnt = body->kind == MLC_TIR_SEQ ? body->seq.n : 1;
  mlc_tir_stmt **v = MLC_ARENA_ARRAY(m->arena, (size_t)cnt + 1, mlc_tir_stmt *);
  if (!v) return mlc_oom();
  int k = 0;
  for (int i = 0; i <= cnt; i++) {
    if (i == at) v[k++] = nest_new;
    if (i < cnt) v[k++] = body->kind == MLC_TIR_SEQ ? body->seq.stmts[i] : body;
  }
  mlc_tir_stmt *nb = mlc_tir_seq(m, k, v);
  if (!nb || mlc_tir_module_oom(m)) return mlc_oom();
  /* commit: the old nest goes, the block takes its new bindings */
  MLC_RETURN_IF_ERROR(cl_nest_remove(s, nest, 0));
  loop->loop.body = nb;
  blk->block.iters = its;
  blk->block.predicate = pred;
  return NULL;
}

/* ---- the region a block accesses ------------------------------------------------------ */

typedef struct acc_ctx {
  mlc_tir_module *m;
  mlc_arith *an; /* the loops around the access bound, or NULL */
  const mlc_tir_stmt *blk;
  const mlc_tir_buffer *b;
  int stores;
  cl_env env;
  cl_range *acc;
  int *have;
  const char *why;
} acc_ctx;

static void acc_indices(acc_ctx *c, int n, mlc_tir_expr *const *idx) {
  cl_range r[CL_MAX_LOOPS];
  if (n > CL_MAX_LOOPS) {
    c->why = "the buffer has too many dimensions";
    return;
  }
  for (int d = 0; d < n && !c->why; d++) {
    mlc_tir_expr *e = cl_bind(c->m, c->blk, idx[d]);
    /* (j_0 * 4 + j_1) // 4 -> j_0 and the like, from the loops' bounds */
    if (e && c->an) e = mlc_arith_simplify(c->an, c->m, e);
    if (!e) {
      c->why = "out of memory";
      return;
    }
    if (cl_range_of(e, &c->env, &r[d])) c->why = "an index has no computable range";
  }
  if (c->why) return;
  for (int d = 0; d < n; d++) {
    if (!*c->have)
      c->acc[d] = r[d];
    else if (cl_range_union(&c->acc[d], &r[d]))
      c->why = "two accesses differ by more than a constant offset";
  }
  *c->have = 1;
}

static int acc_pre(void *ctx, const mlc_tir_expr *e) {
  acc_ctx *c = ctx;
  if (e->kind == MLC_TIR_LOAD && e->load.buffer == c->b && !c->stores) acc_indices(c, e->load.n, e->load.indices);
  return c->why ? MLC_TIR_VISIT_STOP : MLC_TIR_VISIT_CONTINUE;
}

static void acc_expr(acc_ctx *c, const mlc_tir_expr *e) {
  if (!e || c->why) return;
  mlc_tir_visitor v = {0};
  v.ctx = c;
  v.pre_expr = acc_pre;
  mlc_tir_visit_expr(&v, e);
}

static void acc_stmt(acc_ctx *c, const mlc_tir_stmt *st) {
  if (!st || c->why) return;
  switch (st->kind) {
    case MLC_TIR_FOR: {
      acc_expr(c, st->loop.min);
      acc_expr(c, st->loop.extent);
      int n = c->env.n, mark = c->an ? mlc_arith_mark(c->an) : 0;
      if (cl_env_add_loop(&c->env, st)) {
        c->why = "a loop inside the block has non-constant bounds";
        return;
      }
      if (c->an) {
        mlc_status bs = mlc_arith_bind(c->an, st->loop.var, st->loop.min, st->loop.extent);
        if (bs) {
          mlc_status_free(bs);
          c->why = "out of memory";
          return;
        }
      }
      acc_stmt(c, st->loop.body);
      if (c->an) mlc_arith_restore(c->an, mark);
      c->env.n = n;
      return;
    }
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) acc_stmt(c, st->seq.stmts[i]);
      return;
    case MLC_TIR_STORE:
      for (int i = 0; i < st->store.n; i++) acc_expr(c, st->store.indices[i]);
      acc_expr(c, st->store.value);
      if (st->store.buffer == c->b && c->stores) acc_indices(c, st->store.n, st->store.indices);
      return;
    case MLC_TIR_IF:
      acc_expr(c, st->if_.cond);
      acc_stmt(c, st->if_.then_s);
      acc_stmt(c, st->if_.else_s);
      return;
    case MLC_TIR_ALLOCATE: acc_stmt(c, st->alloc.body); return;
    case MLC_TIR_EVALUATE: acc_expr(c, st->eval.value); return;
    case MLC_TIR_BLOCK:
      if (sch_block_reads(st, c->b) || sch_block_writes(st, c->b)) c->why = "a block nested in it accesses the buffer";
      return;
    case MLC_TIR_ASSERT:
      acc_expr(c, st->assert_.cond);
      for (int i = 0; i < st->assert_.nvals; i++) acc_expr(c, st->assert_.vals[i]);
      return;
  }
}

int cl_access_ranges(mlc_sch *s, const mlc_tir_stmt *blk, const mlc_tir_buffer *b, int stores, const cl_env *env,
                     cl_range *acc, int *have, const char **why) {
  acc_ctx c = {s->m, NULL, blk, b, stores, *env, acc, have, NULL};
  /* an analyzer that knows the bounds of every loop around the block */
  mlc_tir_stmt *path[512];
  int n = sch_path(s, blk, path, 512);
  if (mlc_arith_create(mlc_allocator_default(), &c.an)) c.an = NULL;
  for (int i = 0; c.an && i < n; i++)
    if (path[i]->kind == MLC_TIR_FOR) {
      mlc_status bs = mlc_arith_bind(c.an, path[i]->loop.var, path[i]->loop.min, path[i]->loop.extent);
      if (bs) {
        mlc_status_free(bs);
        mlc_arith_destroy(c.an);
        c.an = NULL;
      }
    }
  acc_expr(&c, blk->block.predicate);
  acc_stmt(&c, blk->block.init);
  acc_stmt(&c, blk->block.body);
  mlc_arith_destroy(c.an);
  *why = c.why;
  return c.why ? -1 : 0;
}

int cl_env_between(mlc_sch *s, const mlc_tir_stmt *loop, const mlc_tir_stmt *blk, cl_env *env) {
  mlc_tir_stmt *path[512];
  int n = sch_path(s, blk, path, 512), on = 0;
  env->n = 0;
  for (int i = 0; i < n - 1; i++) {
    if (path[i] == loop) {
      on = 1;
      continue;
    }
    if (on && path[i]->kind == MLC_TIR_FOR && cl_env_add_loop(env, path[i])) return -1;
  }
  return 0;
}

/* ---- block regions ------------------------------------------------------------------ */

static mlc_status refresh(mlc_tir_module *m, mlc_tir_stmt *st) {
  if (!st) return NULL;
  switch (st->kind) {
    case MLC_TIR_FOR: return refresh(m, st->loop.body);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) MLC_RETURN_IF_ERROR(refresh(m, st->seq.stmts[i]));
      return NULL;
    case MLC_TIR_IF:
      MLC_RETURN_IF_ERROR(refresh(m, st->if_.then_s));
      return refresh(m, st->if_.else_s);
    case MLC_TIR_ALLOCATE: return refresh(m, st->alloc.body);
    case MLC_TIR_BLOCK:
      MLC_RETURN_IF_ERROR(refresh(m, st->block.init));
      MLC_RETURN_IF_ERROR(refresh(m, st->block.body));
      if (st->block.nreads || st->block.nwrites) return mlc_tir_block_compute_regions(m, st);
      return NULL;
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return NULL;
  }
  return NULL;
}

mlc_status cl_refresh_regions(mlc_sch *s) { return refresh(s->m, s->func->body); }
