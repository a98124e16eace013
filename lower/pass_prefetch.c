/*
** pass_prefetch.c: software prefetch of the next panel's operand (see
** tir_lower.h).
**
**   for f in T.parallel(272, annotations={"parallel_grain": 17, "software_prefetch": "B"}):
**       for rco_1, rkh, rkw, rci_0 in T.grid(2, 3, 3, 4):
**           ... B_1[f // 17 * 18432 + rco_1 * 9216 + rkh * 3072 + rkw * 1024 + rci_0 * 256 + ...] ...
**   ->
**       for rco_1, rkh, rkw in T.grid(2, 3, 3):
**           for pf in T.unroll(4):
**               T.prefetch(B_1[T.min(T.min(f + 17, 271) // 17 * 18432 + T.min(... * 4 + pf, 1152) * 16, ...)])
**           for rci_0 in range(4): ...
**
** A tiled kernel reads, for each of its panels (a conv's block of output
** channels), a block of one operand (the panel's packed weights) that no
** other panel reads: in a model it comes from memory, and the panel's
** first row block waits for it.  The loop over the panels is annotated
** "software_prefetch" with the name of that operand's parameter; with
** "parallel_grain" g (the loop fuses a panel's g row blocks), iteration v
** works on panel v // g, else on panel v.  Each iteration prefetches its
** share (1/g) of the next panel's block, the lines of the hull of the
** addresses the loads of the operand in the loop's body read, with v + g
** for v, where the same thread runs that iteration next (a parallel
** loop's threads run chunks of its iterations, which end at
** T.loop_end(v); another thread's chunk is that thread's to fetch), spread
** over the iterations of the serial loops around those loads: at the
** top of the body of the
** deepest of them that still runs at most once per line, a few lines per
** iteration.  So the next block streams in while the current one is
** computed, at a steady rate the memory keeps up with.
**
** A hint only: what it does not understand (loads in several nests, an
** index that is not linear in the loops around it, a loop of a variable
** extent) it leaves alone, and every address it builds is clamped into
** the buffer.  Code generation makes it llvm.prefetch on CPUs and nothing
** in a GPU kernel.
*/
#include <string.h>

#include "lower/arith.h"
#include "lower/tir_lower.h"
#include "lower/tir_lower_int.h"
#include "lower/tir_visit.h"

#define PF_MAX_LOOPS 16
#define PF_MAX_LOADS 8
/* The most prefetches one iteration issues (more would stall on the
** outstanding misses a core can track). */
#define PF_MAX_BURST 64
#define PF_LINE_BYTES 64

/* The loads of the operand in a loop's body, and the loops around them. */
typedef struct pf_find {
  const char *name;
  const mlc_tir_stmt *stack[PF_MAX_LOOPS];
  int depth, bad;
  const mlc_tir_stmt *chain[PF_MAX_LOOPS];
  int nchain;
  const mlc_tir_expr *loads[PF_MAX_LOADS];
  int nloads;
} pf_find;

static int is_operand(const mlc_tir_buffer *b, const char *name) {
  return b && (!strcmp(b->name, name) || (b->view_of && !strcmp(b->view_of->name, name)));
}

static int find_pre_stmt(void *ctx, const mlc_tir_stmt *s) {
  pf_find *c = ctx;
  if (s->kind != MLC_TIR_FOR) return MLC_TIR_VISIT_CONTINUE;
  if (c->depth == PF_MAX_LOOPS) {
    c->bad = 1;
    return MLC_TIR_VISIT_STOP;
  }
  c->stack[c->depth++] = s;
  return MLC_TIR_VISIT_CONTINUE;
}

static int find_post_stmt(void *ctx, const mlc_tir_stmt *s) {
  pf_find *c = ctx;
  if (s->kind == MLC_TIR_FOR) c->depth--;
  return MLC_TIR_VISIT_CONTINUE;
}

static int find_pre_expr(void *ctx, const mlc_tir_expr *e) {
  pf_find *c = ctx;
  if (e->kind != MLC_TIR_LOAD || !is_operand(e->load.buffer, c->name)) return MLC_TIR_VISIT_CONTINUE;
  if (c->nloads == 0) {
    memcpy(c->chain, c->stack, (size_t)c->depth * sizeof c->chain[0]);
    c->nchain = c->depth;
  } else if (c->nchain != c->depth || memcmp(c->chain, c->stack, (size_t)c->depth * sizeof c->chain[0])) {
    c->bad = 1; /* in another nest */
  }
  if (c->nloads == PF_MAX_LOADS || e->load.n != 1 || e->lanes != 1) c->bad = 1;
  if (c->bad) return MLC_TIR_VISIT_STOP;
  c->loads[c->nloads++] = e;
  return MLC_TIR_VISIT_SKIP;
}

static int const_of(const mlc_tir_expr *e, int64_t *v) {
  if (!e || e->kind != MLC_TIR_INT_IMM) return 0;
  *v = e->int_value;
  return 1;
}

typedef struct pf_ctx {
  mlc_tir_module *m;
  mlc_arith *an;
  const mlc_tir_stmt *target; /* the loop whose body gets the prefetch */
  mlc_tir_stmt *prefetch;
} pf_ctx;

/* |e| with the variables |vars| (|n|) replaced by |vals|, simplified. */
static mlc_tir_expr *subst(pf_ctx *c, const mlc_tir_expr *e, int n, mlc_tir_var *const *vars,
                           mlc_tir_expr *const *vals) {
  mlc_tir_subst sub = {n, vars, vals, 0, NULL, NULL, 0};
  mlc_tir_expr *r = mlc_tir_expr_copy(c->m, e, &sub);
  return r ? mlc_arith_simplify(c->an, c->m, r) : NULL;
}

/* The constant |a| - |b| in *|d|: 1, or 0 when it is not a constant. */
static int const_diff(pf_ctx *c, mlc_tir_expr *a, mlc_tir_expr *b, int64_t *d) {
  mlc_tir_expr *x = a && b ? mlc_tir_sub(c->m, a, b) : NULL;
  return x && const_of(mlc_arith_simplify(c->an, c->m, x), d);
}

/* The first address of the load |ld| over the loops |chain| (all from 0)
** in *|lo| and the number of elements from there to its last in *|span|;
** 0 when the index is not linear in them with nonnegative steps. */
static int load_hull(pf_ctx *c, const mlc_tir_expr *ld, int n, const mlc_tir_stmt *const *chain, mlc_tir_expr **lo,
                     int64_t *span, int *reused) {
  mlc_tir_var *vars[PF_MAX_LOOPS];
  mlc_tir_expr *vals[PF_MAX_LOOPS];
  const mlc_tir_expr *idx = ld->load.indices[0];
  for (int i = 0; i < n; i++) {
    vars[i] = chain[i]->loop.var;
    vals[i] = mlc_tir_int(c->m, vars[i]->dtype, 0);
  }
  *lo = subst(c, idx, n, vars, vals);
  *span = 1;
  for (int i = 0; i < n && *lo; i++) {
    int64_t ext, d1, dn;
    if (!const_of(chain[i]->loop.extent, &ext)) return 0;
    if (ext == 1) continue;
    mlc_tir_expr *zero = vals[i];
    vals[i] = mlc_tir_int(c->m, vars[i]->dtype, 1);
    int ok = vals[i] && const_diff(c, subst(c, idx, n, vars, vals), *lo, &d1);
    vals[i] = ok ? mlc_tir_int(c->m, vars[i]->dtype, ext - 1) : NULL;
    ok = ok && vals[i] && const_diff(c, subst(c, idx, n, vars, vals), *lo, &dn);
    vals[i] = zero;
    /* linear in the loop, forward (a sum of such steps is the hull) */
    if (!ok || d1 < 0 || __builtin_mul_overflow(d1, ext - 1, &ext) || ext != dn || *span > INT64_MAX / 2 - dn)
      return 0;
    *span += dn;
    if (d1 == 0) *reused = 1;
  }
  return *lo != NULL;
}

static mlc_tir_stmt *put_prefetch(mlc_tir_mutator *mu, const mlc_tir_stmt *s) {
  pf_ctx *c = mu->ctx;
  if (s != c->target) return NULL;
  mlc_tir_stmt *body = mlc_tir_seq2(c->m, c->prefetch, s->loop.body);
  mlc_tir_stmt *r = body ? mlc_tir_for_like(c->m, s, s->loop.min, s->loop.extent, body) : NULL;
  if (!r) mu->failed = 1;
  return r;
}

/* |loop| with the prefetch of its next panel's operand (the top of this
** file), or |loop| itself when it does not apply; NULL on oom. */
static mlc_tir_stmt *add_prefetch(pf_ctx *c, mlc_tir_stmt *loop, const char *name) {
  mlc_tir_module *m = c->m;
  int64_t extent, start, g = 1;
  if (!const_of(loop->loop.extent, &extent) || !const_of(loop->loop.min, &start) || start != 0 || extent < 2)
    return loop;
  const mlc_tir_attr *ga = mlc_tir_stmt_annot(loop, "parallel_grain");
  if (ga && ga->kind == MLC_TIR_ATTR_INT && ga->i > 1 && extent % ga->i == 0) g = ga->i;
  if (extent / g < 2) return loop; /* one panel */
  pf_find fd;
  memset(&fd, 0, sizeof fd);
  fd.name = name;
  mlc_tir_visitor v = {&fd, find_pre_expr, NULL, find_pre_stmt, find_post_stmt, NULL, 0};
  mlc_tir_visit_stmt(&v, loop->loop.body);
  if (fd.bad || fd.nloads == 0) return loop;
  const mlc_tir_buffer *buf = fd.loads[0]->load.buffer;
  int64_t size, esize = (int64_t)mlc_dtype_size(buf->dtype);
  if (buf->rank != 1 || !const_of(buf->shape[0], &size) || esize <= 0 || esize > PF_LINE_BYTES) return loop;
  int64_t epl = PF_LINE_BYTES / esize;
  for (int i = 0; i < fd.nchain; i++) {
    int64_t e, s0;
    if (!const_of(fd.chain[i]->loop.extent, &e) || !const_of(fd.chain[i]->loop.min, &s0) || s0 != 0 || e < 1)
      return loop;
  }
  /* the hull of the loads: [lo + first, lo + last) */
  mlc_tir_expr *lo = NULL;
  int64_t first = 0, last = 0;
  int reused = g > 1;
  for (int k = 0; k < fd.nloads; k++) {
    mlc_tir_expr *lk;
    int64_t span, d = 0;
    if (!load_hull(c, fd.loads[k], fd.nchain, fd.chain, &lk, &span, &reused))
      return mlc_tir_module_oom(m) ? NULL : loop;
    if (k == 0) lo = lk;
    else if (!const_diff(c, lk, lo, &d)) return mlc_tir_module_oom(m) ? NULL : loop;
    if (k == 0 || d < first) first = d;
    if (k == 0 || d + span > last) last = d + span;
  }
  /* a block read once (a matrix-vector product's panel) streams at the
  ** memory's pace anyway, and the hardware's prefetcher follows it; one
  ** that the panel's row blocks read again and again is computed at the
  ** core's pace once it is in cache, if it is there in time */
  if (!reused || !mlc_tir_expr_uses_var(lo, loop->loop.var)) return loop;
  int64_t span = last - first;
  int aligned = mlc_tir_known_multiple(lo) % epl == 0 && first % epl == 0; /* epl: a power of two */
  int64_t nlines = (span + epl - 1) / epl + !aligned;
  if (nlines < 1) return loop;
  /* where: the deepest serial loop around the loads that runs at most once
  ** per line of the panel (-1: the loop's own body), |per| its iterations
  ** per iteration of |loop| */
  int at = -1;
  int64_t per = 1;
  for (int i = 0; i < fd.nchain; i++) {
    int64_t e = 1;
    const_of(fd.chain[i]->loop.extent, &e);
    if (fd.chain[i]->loop.kind != MLC_TIR_FOR_SERIAL || per > INT64_MAX / e / g || g * per * e > nlines) break;
    per *= e;
    at = i;
  }
  int64_t burst = (nlines + g * per - 1) / (g * per);
  if (burst > PF_MAX_BURST) return loop;
  /* the iteration's number within the panel, of g * per */
  mlc_tir_var *lv = loop->loop.var;
  mlc_dtype it = lv->dtype;
  mlc_tir_expr *num = g > 1 ? mlc_tir_binary(m, MLC_TIR_FLOORMOD, mlc_tir_ref(m, lv), mlc_tir_int(m, it, g))
                            : mlc_tir_int(m, it, 0);
  for (int i = 0; i <= at; i++) {
    int64_t e = 1;
    const_of(fd.chain[i]->loop.extent, &e);
    num = mlc_tir_add(m, mlc_tir_mul(m, num, mlc_tir_int(m, it, e)), mlc_tir_ref(m, fd.chain[i]->loop.var));
  }
  mlc_tir_var *t = burst > 1 ? mlc_tir_var_new(m, "pf", it) : NULL;
  mlc_tir_expr *line = mlc_tir_mul(m, num, mlc_tir_int(m, it, burst));
  if (t) line = mlc_tir_add(m, line, mlc_tir_ref(m, t));
  line = mlc_tir_min(m, line, mlc_tir_int(m, it, nlines - 1));
  /* the next panel's first address: v + g for v, where this thread runs
  ** it (a parallel loop's chunk ends at T.loop_end(v)) */
  mlc_tir_expr *next = mlc_tir_add(m, mlc_tir_ref(m, lv), mlc_tir_int(m, it, g));
  mlc_tir_expr *end = loop->loop.kind == MLC_TIR_FOR_PARALLEL
                          ? mlc_tir_call1(m, MLC_TIR_INTRIN_LOOP_END, mlc_tir_ref(m, lv))
                          : mlc_tir_int(m, it, extent);
  mlc_tir_expr *cond = mlc_tir_binary(m, MLC_TIR_LT, next, end);
  mlc_tir_expr *base = next ? subst(c, lo, 1, &lv, &next) : NULL;
  if (!base || !line) return NULL;
  mlc_dtype ix = base->dtype;
  mlc_tir_expr *addr = mlc_tir_add(m, mlc_tir_add(m, base, mlc_tir_int(m, ix, first)),
                                   mlc_tir_mul(m, mlc_tir_cast(m, ix, line), mlc_tir_int(m, ix, epl)));
  addr = mlc_tir_max(m, mlc_tir_min(m, addr, mlc_tir_int(m, ix, size - 1)), mlc_tir_int(m, ix, 0));
  mlc_tir_expr *ld = mlc_tir_load(m, (mlc_tir_buffer *)buf, 1, &addr);
  mlc_tir_stmt *pf = mlc_tir_evaluate(m, mlc_tir_call1(m, MLC_TIR_INTRIN_PREFETCH, ld));
  if (t) pf = mlc_tir_for(m, t, mlc_tir_int(m, it, 0), mlc_tir_int(m, it, burst), MLC_TIR_FOR_UNROLLED, NULL, pf);
  pf = pf && cond ? mlc_tir_if(m, cond, pf, NULL) : NULL;
  if (!pf) return NULL;
  c->prefetch = pf;
  c->target = at < 0 ? loop : fd.chain[at];
  mlc_tir_mutator mu = {m, c, NULL, NULL, put_prefetch, NULL, 0};
  if (at < 0) return put_prefetch(&mu, loop);
  mlc_tir_stmt *body = mlc_tir_mutate_stmt(&mu, loop->loop.body);
  return body ? mlc_tir_for_like(m, loop, loop->loop.min, loop->loop.extent, body) : NULL;
}

static mlc_tir_stmt *visit_post(mlc_tir_mutator *mu, const mlc_tir_stmt *orig, mlc_tir_stmt *s) {
  (void)orig;
  const mlc_tir_attr *a = s && s->kind == MLC_TIR_FOR ? mlc_tir_stmt_annot(s, "software_prefetch") : NULL;
  if (!a || a->kind != MLC_TIR_ATTR_STR || !a->s) return s;
  mlc_tir_stmt *r = add_prefetch(mu->ctx, s, a->s);
  if (!r) mu->failed = 1;
  return r;
}

mlc_status mlc_tir_pass_prefetch(mlc_tir_module *m, mlc_tir_func *f) {
  pf_ctx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  MLC_RETURN_IF_ERROR(mlc_arith_create(mlc_allocator_default(), &c.an));
  mlc_tir_mutator mu = {m, &c, NULL, NULL, NULL, visit_post, 0};
  mlc_tir_stmt *b = f->body ? mlc_tir_mutate_stmt(&mu, f->body) : NULL;
  mlc_arith_destroy(c.an);
  if (f->body && !b) return mlc_oom();
  f->body = b;
  return NULL;
}
