/*
** sample.c: the random variables of search.
**
**   v1, v2 = sch.sample_perfect_tile(loop=l, n=2, max_innermost_factor=16, decision=[8, 16])
**
** gives n integers whose product is exactly the loop's (constant) extent,
** the innermost at most max_innermost_factor (default 16; -1: no bound),
** drawn uniformly among all such tilings with the schedule's generator:
** the tilings are counted by the first factor (a divisor of the extent)
** and the rest, and a uniform index among them is decoded.
**
**   v = sch.sample_categorical(candidates=[1, 2, 4], probs=[0.5, 0.25, 0.25], decision=1)
**
** gives one of the candidates, drawn with the given weights (normalized);
** the decision is the candidate's index.
**
** The decision is recorded in the trace; a decision given (a replayed
** trace) is checked and used instead of drawing, so a trace replays to the
** same values, and the same seed gives the same decisions.  Outputs are
** integer handles (printed v<N>) usable as split factors and annotation
** values.
**
** Refused: a decision that is not a valid tiling / index (SAMPLE); a loop
** with a symbolic or too large extent, n < 1, an empty candidate list,
** probabilities that are negative, not finite or all zero, lists of
** different lengths (ARGUMENT).
*/
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "lower/schedule/sched_int.h"

/* Extents above this are not tiled (divisors by trial division). */
#define MAX_TILE_EXTENT ((int64_t)1 << 40)
#define MAX_TILE_N 16

typedef struct tiler {
  int64_t *divs; /* the divisors of the extent, ascending */
  int nd;
  int n;          /* factors */
  int64_t maxin;  /* innermost bound, or -1 */
  uint64_t *memo; /* count(divisor index, factors left); UINT64_MAX: not yet */
  int overflow;
} tiler;

static int div_index(const tiler *t, int64_t v) {
  int lo = 0, hi = t->nd - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (t->divs[mid] == v) return mid;
    if (t->divs[mid] < v) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* The number of ways to write divs[r] as |k| ordered factors, the last <= maxin. */
static uint64_t count(tiler *t, int r, int k) {
  uint64_t *slot = &t->memo[(size_t)r * (size_t)(t->n + 1) + (size_t)k];
  if (*slot != UINT64_MAX) return *slot;
  int64_t rem = t->divs[r];
  uint64_t c = 0;
  if (k == 1) {
    c = t->maxin < 0 || rem <= t->maxin;
  } else {
    for (int i = 0; i < t->nd && t->divs[i] <= rem; i++) {
      if (rem % t->divs[i]) continue;
      uint64_t sub = count(t, div_index(t, rem / t->divs[i]), k - 1);
      if (__builtin_add_overflow(c, sub, &c)) {
        t->overflow = 1;
        c = UINT64_MAX - 1;
      }
    }
  }
  *slot = c;
  return c;
}

/* The divisors of |e| into t->divs (ascending); -1 on oom. */
static int divisors(tiler *t, int64_t e) {
  int cap = 64;
  int64_t *lo = mlc_mem_alloc((size_t)cap * sizeof *lo), *hi = mlc_mem_alloc((size_t)cap * sizeof *hi);
  int nlo = 0, nhi = 0;
  if (!lo || !hi) goto fail;
  for (int64_t d = 1; d * d <= e; d++) {
    if (e % d) continue;
    if (nlo == cap || nhi == cap) {
      cap *= 2;
      int64_t *a = mlc_mem_realloc(lo, (size_t)cap * sizeof *a);
      if (!a) goto fail;
      lo = a;
      int64_t *b = mlc_mem_realloc(hi, (size_t)cap * sizeof *b);
      if (!b) goto fail;
      hi = b;
    }
    lo[nlo++] = d;
    if (d != e / d) hi[nhi++] = e / d;
  }
  t->divs = mlc_mem_alloc((size_t)(nlo + nhi) * sizeof *t->divs);
  if (!t->divs) goto fail;
  for (int i = 0; i < nlo; i++) t->divs[i] = lo[i];
  for (int i = 0; i < nhi; i++) t->divs[nlo + i] = hi[nhi - 1 - i];
  t->nd = nlo + nhi;
  mlc_mem_free(lo);
  mlc_mem_free(hi);
  return 0;
fail:
  mlc_mem_free(lo);
  mlc_mem_free(hi);
  return -1;
}

/* A uniform value in [0, n), n > 0 (rejection keeps it unbiased). */
static uint64_t uniform(mlc_sch *s, uint64_t n) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  for (;;) {
    uint64_t r = sch_rand(s);
    if (r < limit) return r % n;
  }
}

static mlc_status int_list_decision(mlc_sch *s, mlc_sch_inst *in, int n, const int64_t *v) {
  mlc_sch_arg *items = MLC_ARENA_ARRAY(s->arena, (size_t)n, mlc_sch_arg);
  if (!items) return mlc_oom();
  for (int i = 0; i < n; i++) items[i] = MLC_SCH_INT_ARG(v[i]);
  in->decision = MLC_SCH_NONE_ARG;
  in->decision.kind = MLC_SCH_ARG_LIST;
  in->decision.n = n;
  in->decision.items = items;
  return NULL;
}

mlc_status mlc_sch_apply_sample_perfect_tile(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *loop;
  int64_t n, maxin;
  MLC_RETURN_IF_ERROR(sch_arg_loop(s, in, "loop", &loop));
  MLC_RETURN_IF_ERROR(sch_arg_int(s, in, "n", &n));
  MLC_RETURN_IF_ERROR(sch_arg_int_opt(s, in, "max_innermost_factor", 16, &maxin));
  const char *ld = sch_desc(s, loop);
  if (n < 1 || n > MAX_TILE_N)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "n = %lld tiles of %s (1 to %d)", (long long)n, ld, MAX_TILE_N);
  if (maxin < -1 || maxin == 0)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "max_innermost_factor = %lld (>= 1, or -1 for no bound)",
                    (long long)maxin);
  const mlc_tir_expr *ext = loop->loop.extent;
  if (ext->kind != MLC_TIR_INT_IMM)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "the extent %s of %s is symbolic: a perfect tile needs a constant",
                    sch_expr_str(s, ext), ld);
  int64_t e = ext->int_value;
  if (e < 1 || e > MAX_TILE_EXTENT)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "the extent %lld of %s cannot be tiled (1 to 2^40)", (long long)e, ld);
  int64_t f[MAX_TILE_N];
  if (in->forced) {
    const mlc_sch_arg *d = in->forced;
    if (d->kind != MLC_SCH_ARG_LIST || d->n != n)
      return sch_fail(s, MLC_SCH_ERR_SAMPLE, "decision for %s must be a list of %lld integers", ld, (long long)n);
    int64_t prod = 1;
    for (int i = 0; i < n; i++) {
      if (d->items[i].kind != MLC_SCH_ARG_INT || d->items[i].i < 1)
        return sch_fail(s, MLC_SCH_ERR_SAMPLE, "decision for %s: item %d is not a positive integer", ld, i);
      f[i] = d->items[i].i;
      if (__builtin_mul_overflow(prod, f[i], &prod) || prod > e) prod = e + 1;
    }
    if (prod != e)
      return sch_fail(s, MLC_SCH_ERR_SAMPLE, "decision for %s: the product of the factors is not the extent %lld", ld,
                      (long long)e);
    if (maxin > 0 && f[n - 1] > maxin)
      return sch_fail(s, MLC_SCH_ERR_SAMPLE, "decision for %s: the innermost factor %lld exceeds %lld", ld,
                      (long long)f[n - 1], (long long)maxin);
  } else {
    tiler t = {NULL, 0, (int)n, maxin, NULL, 0};
    if (divisors(&t, e)) return mlc_oom();
    size_t cells = (size_t)t.nd * (size_t)(n + 1);
    t.memo = mlc_mem_alloc(cells * sizeof *t.memo);
    if (!t.memo) {
      mlc_mem_free(t.divs);
      return mlc_oom();
    }
    for (size_t i = 0; i < cells; i++) t.memo[i] = UINT64_MAX;
    uint64_t total = count(&t, t.nd - 1, (int)n);
    mlc_status st = NULL;
    if (t.overflow)
      st = sch_fail(s, MLC_SCH_ERR_ARGUMENT, "%s: too many tilings of %lld into %lld factors to sample", ld,
                    (long long)e, (long long)n);
    else if (total == 0)
      st = sch_fail(s, MLC_SCH_ERR_ARGUMENT, "%s: no tiling of %lld into %lld factors has an innermost factor <= %lld",
                    ld, (long long)e, (long long)n, (long long)maxin);
    if (!st) {
      /* decode a uniform index: the first factor, then the rest */
      uint64_t r = uniform(s, total);
      int rem = t.nd - 1;
      for (int k = (int)n; k > 1; k--) {
        int64_t rv = t.divs[rem];
        for (int i = 0; i < t.nd && t.divs[i] <= rv; i++) {
          if (rv % t.divs[i]) continue;
          int sub = div_index(&t, rv / t.divs[i]);
          uint64_t c = count(&t, sub, k - 1);
          if (r < c) {
            f[n - k] = t.divs[i];
            rem = sub;
            break;
          }
          r -= c;
        }
      }
      f[n - 1] = t.divs[rem];
    }
    mlc_mem_free(t.memo);
    mlc_mem_free(t.divs);
    if (st) return st;
  }
  MLC_RETURN_IF_ERROR(int_list_decision(s, in, (int)n, f));
  for (int i = 0; i < n; i++) MLC_RETURN_IF_ERROR(sch_out(s, in, sch_new_int_rv(s, f[i])));
  return NULL;
}

static mlc_status number(mlc_sch *s, const mlc_sch_arg *a, const char *what, double *out) {
  if (a->kind == MLC_SCH_ARG_INT) *out = (double)a->i;
  else if (a->kind == MLC_SCH_ARG_FLOAT) *out = a->f;
  else return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "%s must be numbers", what);
  return NULL;
}

mlc_status mlc_sch_apply_sample_categorical(mlc_sch *s, mlc_sch_inst *in) {
  const mlc_sch_arg *cl, *pl;
  MLC_RETURN_IF_ERROR(sch_arg_list(s, in, "candidates", &cl));
  MLC_RETURN_IF_ERROR(sch_arg_list(s, in, "probs", &pl));
  int n = cl->n;
  if (n < 1) return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "candidates is empty");
  if (pl->n != n)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "%d candidates but %d probabilities", n, pl->n);
  double sum = 0;
  for (int i = 0; i < n; i++) {
    int64_t c;
    double p = 0;
    MLC_RETURN_IF_ERROR(sch_item_int(s, &cl->items[i], "candidates", &c));
    MLC_RETURN_IF_ERROR(number(s, &pl->items[i], "probs", &p));
    if (!isfinite(p) || p < 0)
      return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "probability %d (%g) is not a finite number >= 0", i, p);
    sum += p;
  }
  if (!(sum > 0) || !isfinite(sum))
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "the probabilities sum to %g: nothing can be drawn", sum);
  int64_t idx = -1;
  if (in->forced) {
    const mlc_sch_arg *d = in->forced;
    if (d->kind != MLC_SCH_ARG_INT)
      return sch_fail(s, MLC_SCH_ERR_SAMPLE, "decision must be the index of a candidate");
    if (d->i < 0 || d->i >= n)
      return sch_fail(s, MLC_SCH_ERR_SAMPLE, "decision %lld is not an index of the %d candidates", (long long)d->i,
                      n);
    double p = 0;
    MLC_RETURN_IF_ERROR(number(s, &pl->items[d->i], "probs", &p));
    if (p == 0)
      return sch_fail(s, MLC_SCH_ERR_SAMPLE, "decision %lld picks a candidate of probability 0", (long long)d->i);
    idx = d->i;
  } else {
    double u = (double)(sch_rand(s) >> 11) * 0x1.0p-53 * sum, acc = 0;
    for (int i = 0; i < n; i++) {
      double p = 0;
      MLC_RETURN_IF_ERROR(number(s, &pl->items[i], "probs", &p));
      if (p == 0) continue;
      idx = i; /* the last candidate of nonzero weight takes rounding leftovers */
      acc += p;
      if (u < acc) break;
    }
  }
  int64_t value;
  MLC_RETURN_IF_ERROR(sch_item_int(s, &cl->items[idx], "candidates", &value));
  in->decision = MLC_SCH_INT_ARG(idx);
  return sch_out(s, in, sch_new_int_rv(s, value));
}

mlc_status mlc_sch_sample_perfect_tile(mlc_sch *s, mlc_sch_rv loop, int n, int max_innermost_factor,
                                       const int64_t *decision, mlc_sch_rv *out) {
  if (n < 0 || n > MAX_TILE_N)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "sample_perfect_tile: n = %d (1 to %d)", n, MAX_TILE_N);
  mlc_sch_arg d[MAX_TILE_N];
  for (int i = 0; decision && i < n; i++) d[i] = MLC_SCH_INT_ARG(decision[i]);
  mlc_sch_arg a[4] = {MLC_SCH_RV_ARG(loop), MLC_SCH_INT_ARG(n), MLC_SCH_INT_ARG(max_innermost_factor),
                      MLC_SCH_NONE_ARG};
  a[0].key = "loop";
  a[1].key = "n";
  a[2].key = "max_innermost_factor";
  a[3].key = "decision";
  a[3].kind = MLC_SCH_ARG_LIST;
  a[3].n = n;
  a[3].items = d;
  mlc_sch_rv outs[MLC_SCH_MAX_OUTS];
  int nouts = 0;
  MLC_RETURN_IF_ERROR(mlc_sch_apply(s, MLC_SCH_INST_SAMPLE_PERFECT_TILE, decision ? 4 : 3, a, outs, &nouts));
  if (out) memcpy(out, outs, (size_t)nouts * sizeof *out);
  return NULL;
}

mlc_status mlc_sch_sample_categorical(mlc_sch *s, int n, const int64_t *candidates, const double *probs,
                                      const int64_t *decision, mlc_sch_rv *out) {
  if (n < 0 || n > MLC_SCH_MAX_OUTS || (n && (!candidates || !probs)))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "sample_categorical: %d candidates (0 to %d)", n, MLC_SCH_MAX_OUTS);
  mlc_sch_arg c[MLC_SCH_MAX_OUTS], p[MLC_SCH_MAX_OUTS];
  for (int i = 0; i < n; i++) {
    c[i] = MLC_SCH_INT_ARG(candidates[i]);
    p[i] = MLC_SCH_FLOAT_ARG(probs[i]);
  }
  mlc_sch_arg a[3] = {MLC_SCH_NONE_ARG, MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(decision ? *decision : 0)};
  a[0].key = "candidates";
  a[0].kind = MLC_SCH_ARG_LIST;
  a[0].n = n;
  a[0].items = c;
  a[1].key = "probs";
  a[1].kind = MLC_SCH_ARG_LIST;
  a[1].n = n;
  a[1].items = p;
  a[2].key = "decision";
  mlc_sch_rv outs[MLC_SCH_MAX_OUTS];
  MLC_RETURN_IF_ERROR(mlc_sch_apply(s, MLC_SCH_INST_SAMPLE_CATEGORICAL, decision ? 3 : 2, a, outs, NULL));
  if (out) *out = outs[0];
  return NULL;
}
