/*
** pass_thread_reduce.c: cross-thread reductions as warp shuffles, for a
** GPU (see tir_lower.h).
**
**   for r in T.thread_binding(32, thread="threadIdx.x"):
**       with T.block("S"):
**           vi = T.axis.spatial(128, i)
**           vr = T.axis.reduce(32, r)
**           with T.init():
**               S[vi] = T.float32(0)
**           S[vi] = S[vi] + S_rf[vr, vi]
**   ->
**   for r in T.thread_binding(32, thread="threadIdx.x"):
**       S_red = T.alloc_buffer((1,), "float32", scope="local")
**       S_red[0] = T.warp_sum(S_rf[r, i])
**       if r == 0:
**           S[i] = T.float32(0) + S_red[0]
**
** A reduction whose reduce loop is bound to threadIdx.x (schedule.h's
** bind allows it for mlc_tir_cross_thread_reduction's blocks) runs, on a
** GPU, one iteration per lane of a warp at once: they would race on the
** element.  Each lane instead gives its term to a butterfly of shuffles
** (T.warp_sum / warp_max / warp_min: every lane gets the whole), and lane
** 0 stores init OP whole.  On the CPU the loop runs its iterations in
** turn, as written, and this pass is not run.
**
** A reduce iteration variable bound through a loop bound to a thread axis
** that is not such a reduction is an error (it would race).
*/
#include <stdio.h>
#include <string.h>

#include "lower/tir_lower.h"
#include "lower/tir_lower_int.h"
#include "lower/tir_visit.h"

static int reads_pre(void *ctx, const mlc_tir_expr *e) {
  const mlc_tir_buffer **b = ctx;
  if (e->kind == MLC_TIR_LOAD && e->load.buffer == *b) {
    *b = NULL;
    return MLC_TIR_VISIT_STOP;
  }
  return MLC_TIR_VISIT_CONTINUE;
}

static int reads(const mlc_tir_expr *e, const mlc_tir_buffer *buf) {
  mlc_tir_visitor v = {0};
  v.ctx = &buf;
  v.pre_expr = reads_pre;
  mlc_tir_visit_expr(&v, e);
  return buf == NULL;
}

int mlc_tir_cross_thread_reduction(const mlc_tir_stmt *loop, const mlc_tir_stmt *b, int *value_side) {
  if (!loop || !b || loop->kind != MLC_TIR_FOR || b->kind != MLC_TIR_BLOCK || loop->loop.body != b ||
      !mlc_tir_is_const(loop->loop.extent, 32) || !mlc_tir_is_const(loop->loop.min, 0) || !b->block.init ||
      b->block.predicate)
    return 0;
  int nred = 0;
  for (int k = 0; k < b->block.niters; k++) {
    const mlc_tir_iter_var *it = &b->block.iters[k];
    if (it->kind != MLC_TIR_ITER_REDUCE) continue;
    nred++;
    if (!it->binding || it->binding->kind != MLC_TIR_VAR_REF || it->binding->var != loop->loop.var) return 0;
  }
  const mlc_tir_stmt *st = b->block.body, *in = b->block.init;
  if (nred != 1 || !st || st->kind != MLC_TIR_STORE || st->store.value->kind != MLC_TIR_BINARY) return 0;
  if (in->kind != MLC_TIR_STORE || in->store.buffer != st->store.buffer || in->store.n != st->store.n ||
      st->store.value->dtype != MLC_DTYPE_F32 || st->store.value->lanes != 1)
    return 0;
  for (int d = 0; d < st->store.n; d++)
    if (!mlc_tir_expr_equal(in->store.indices[d], st->store.indices[d])) return 0;
  const mlc_tir_expr *v = st->store.value;
  mlc_tir_binop op = v->bin.op;
  if (op != MLC_TIR_ADD && op != MLC_TIR_MAX && op != MLC_TIR_MIN) return 0;
  for (int side = 0; side < 2; side++) {
    const mlc_tir_expr *acc = side ? v->bin.b : v->bin.a, *val = side ? v->bin.a : v->bin.b;
    if (acc->kind != MLC_TIR_LOAD || acc->load.buffer != st->store.buffer || acc->load.n != st->store.n) continue;
    int same = 1;
    for (int d = 0; d < st->store.n; d++) same &= mlc_tir_expr_equal(acc->load.indices[d], st->store.indices[d]);
    if (!same || reads(val, st->store.buffer)) continue;
    if (value_side) *value_side = !side;
    return 1;
  }
  return 0;
}

typedef struct tr_ctx {
  mlc_tir_module *m;
  const mlc_tir_func *f;
  const mlc_tir_var *threads[32]; /* variables of the enclosing loops bound to a thread axis */
  int nthreads;
  mlc_status err;
} tr_ctx;

/* The block's iteration variables replaced by their bindings. */
static mlc_tir_subst bindings(mlc_tir_module *m, const mlc_tir_stmt *b) {
  mlc_tir_subst sub = {0};
  mlc_tir_var **vars = MLC_ARENA_ARRAY(m->arena, (size_t)b->block.niters + 1, mlc_tir_var *);
  mlc_tir_expr **vals = MLC_ARENA_ARRAY(m->arena, (size_t)b->block.niters + 1, mlc_tir_expr *);
  if (!vars || !vals) return sub;
  for (int k = 0; k < b->block.niters; k++) {
    vars[k] = b->block.iters[k].var;
    vals[k] = b->block.iters[k].binding;
  }
  sub.nvars = b->block.niters;
  sub.vars = vars;
  sub.values = vals;
  return sub;
}

static mlc_tir_stmt *rewrite(tr_ctx *c, const mlc_tir_stmt *loop, const mlc_tir_stmt *b, int side) {
  mlc_tir_module *m = c->m;
  const mlc_tir_stmt *st = b->block.body;
  const mlc_tir_expr *v = st->store.value;
  mlc_tir_intrin op = v->bin.op == MLC_TIR_ADD   ? MLC_TIR_INTRIN_WARP_SUM
                      : v->bin.op == MLC_TIR_MAX ? MLC_TIR_INTRIN_WARP_MAX
                                                 : MLC_TIR_INTRIN_WARP_MIN;
  mlc_tir_subst sub = bindings(m, b);
  if (!sub.vars) return NULL;
  mlc_tir_expr *term = mlc_tir_expr_copy(m, side ? v->bin.b : v->bin.a, &sub);
  mlc_tir_expr *init = mlc_tir_expr_copy(m, b->block.init->store.value, &sub);
  mlc_tir_expr **idx = MLC_ARENA_ARRAY(m->arena, (size_t)st->store.n + 1, mlc_tir_expr *);
  if (!term || !init || !idx) return NULL;
  for (int d = 0; d < st->store.n; d++)
    if (!(idx[d] = mlc_tir_expr_copy(m, st->store.indices[d], &sub))) return NULL;
  char name[128];
  snprintf(name, sizeof name, "%s_red", st->store.buffer->name);
  const int64_t one = 1;
  mlc_tir_buffer *red = mlc_tir_buffer_new_c(m, name, st->store.buffer->dtype, 1, &one, MLC_TIR_SCOPE_LOCAL);
  mlc_tir_expr *zero = mlc_tir_i64(m, 0);
  mlc_tir_stmt *reduce = red ? mlc_tir_store(m, red, 1, &zero, mlc_tir_call1(m, op, term)) : NULL;
  mlc_tir_expr *whole = red ? mlc_tir_load(m, red, 1, &zero) : NULL;
  mlc_tir_expr *val = whole ? mlc_tir_binary(m, v->bin.op, init, whole) : NULL;
  mlc_tir_stmt *store = val ? mlc_tir_store(m, st->store.buffer, st->store.n, idx, val) : NULL;
  mlc_tir_expr *lane0 = mlc_tir_binary(m, MLC_TIR_EQ, mlc_tir_ref(m, loop->loop.var),
                                       mlc_tir_int(m, loop->loop.var->dtype, 0));
  mlc_tir_stmt *guarded = store && lane0 ? mlc_tir_if(m, lane0, store, NULL) : NULL;
  mlc_tir_stmt *body = reduce && guarded ? mlc_tir_seq2(m, reduce, guarded) : NULL;
  mlc_tir_stmt *alloc = body ? mlc_tir_allocate(m, red, body) : NULL;
  if (alloc) alloc->origin = b->origin;
  return alloc ? mlc_tir_for_like(m, loop, loop->loop.min, loop->loop.extent, alloc) : NULL;
}

static int binds_thread(const tr_ctx *c, const mlc_tir_stmt *b) {
  for (int k = 0; k < b->block.niters; k++) {
    const mlc_tir_iter_var *it = &b->block.iters[k];
    if (it->kind != MLC_TIR_ITER_REDUCE || !it->binding) continue;
    for (int t = 0; t < c->nthreads; t++)
      if (mlc_tir_expr_uses_var(it->binding, c->threads[t])) return 1;
  }
  return 0;
}

static mlc_tir_stmt *walk(void *vc, mlc_tir_stmt *s) {
  tr_ctx *c = vc;
  if (!s || c->err) return NULL;
  if (s->kind == MLC_TIR_FOR && s->loop.kind == MLC_TIR_FOR_THREAD_BINDING) {
    int side = 0;
    if (s->loop.thread && !strcmp(s->loop.thread, "threadIdx.x") &&
        mlc_tir_cross_thread_reduction(s, s->loop.body, &side))
      return rewrite(c, s, s->loop.body, side);
    if (c->nthreads == 32) return s; /* deeper than any schedule goes: as it is */
    c->threads[c->nthreads++] = s->loop.var;
    mlc_tir_stmt *r = mlc_tir_lw_map_children(c->m, s, walk, c);
    c->nthreads--;
    return r;
  }
  if (s->kind == MLC_TIR_BLOCK && binds_thread(c, s)) {
    c->err = mlc_make_status(MLC_UNIMPLEMENTED,
                             "lower_thread_reduce: prim func \"%s\": block \"%s\" reduces across the threads of a "
                             "loop bound to a thread axis, and is not a reduction the GPU lowering computes (one "
                             "sum, max or min over threadIdx.x of extent 32 alone)",
                             c->f->name, s->block.name);
    return NULL;
  }
  return mlc_tir_lw_map_children(c->m, s, walk, c);
}

mlc_status mlc_tir_pass_thread_reduce(mlc_tir_module *m, mlc_tir_func *f) {
  tr_ctx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  c.f = f;
  mlc_tir_stmt *b = f->body ? walk(&c, f->body) : NULL;
  if (c.err) return c.err;
  if (f->body && !b) return mlc_oom();
  if (b) f->body = b;
  return NULL;
}
