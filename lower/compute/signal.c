/*
** signal.c: lowering rules of the signal and vision ops: dft, stft,
** window, mel_weight_matrix, signal_dims, grid_sample, roi_align, det,
** max_unpool, unique_count and unique.  nms_count and non_max_suppression,
** a sequential greedy search, become the runtime's built-ins (dynamic.c's
** table, runtime/shapefn.c).
**
** Every rule computes in float64 and ends with a stage converting to the
** output dtype (skipped when the output is float64), so float32 results
** match references computed in float64.
**
**   dft          a direct O(n^2) sum per output line: one te reduction over
**                the input points t < min(n, extent) of x[t] e^(-+2 pi i
**                ((k t) mod n) / n) (the angle reduced exactly in int64),
**                the real or the imaginary part by the last output index;
**                inverse scales by 1/n.  A run-time n is element 0 of the
**                params argument; the reduction then runs over the input
**                extent with the points past n masked.
**   stft         the same sum per frame over t < n of x[f*step + t] *
**                window[t]; step and n are immediates or read from the
**                params vector.
**   window       one stage: the cosine sum at i over the period N (the
**                output extent) or N - 1.
**   mel_weight_matrix  one stage: each element evaluates the three band
**                edges of its mel bin (as the ONNX reference: mel steps of
**                (high - low) / (num_mel_bins + 2), floor((dft_length + 1)
**                * hz / sample_rate)) and the triangle at its row.
**   signal_dims  one stage: the sizes, -1 where a value is invalid (the
**                define_dims that reads them then fails with a message).
**   grid_sample  a te reduction over the 1, 2x2 or 4x4 taps of the nearest,
**                bilinear or bicubic (A = -0.75) kernel; coordinates are
**                unnormalized, then clipped or reflected for border and
**                reflection padding (bicubic: each tap), and taps outside
**                the input read 0.
**   roi_align    a check stage (a batch index outside [0, N) is a run
**                error), then a te reduction over the sampling grid of each bin, each
**                point a bilinear sample as onnxruntime computes it; avg
**                divides by the point count, max takes the largest
**                weighted corner.  With sampling_ratio 0 the grid follows
**                each roi's size: a first stage finds the largest grid over
**                the rois, the reduction runs over that and masks the
**                points past the roi's own grid (an empty grid gives 0).
**   det          Gaussian elimination with partial pivoting, three stages
**                per column k (the largest |a[i, k]|, i >= k; its first
**                row; the eliminated matrix with that row swapped into row
**                k and the old row k negated in its place, which keeps the
**                determinant), then the product of the diagonal.  The
**                matrix size must be static.
**   max_unpool   a check stage (an index outside the output is a run
**                error), then scatter as a search: stage 1 counts the indices that do
**                not point into their own pooling window (n, c and the
**                window of their position, as max_pool makes them), stage 2
**                finds for each output element the last input among the
**                ceil(k/s) window candidates per axis that points at it,
**                stage 3 the last over all inputs -- a reduction whose
**                extent is 1 unless stage 1 counted any, so it costs
**                nothing for indices max_pool made -- and stage 4 reads
**                the value (0 where no index points).
**   unique       over the slices x[:, j, :] of x viewed as [A, N, B]: the
**                first element where two slices differ (a [N, N] stage,
**                skipped for one-element slices), each slice's first equal
**                slice, its output position (the distinct slices that sort
**                before it, or that were first seen before it), then the
**                first index, count and values of each position.  O(N^2)
**                comparisons; unique_count shares the first two stages.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lower/lower_int.h"

#define M (c->tm)
#define MAX_RANK 16
#define F64 MLC_DTYPE_F64
#define I64 MLC_DTYPE_I64
#define PI 3.14159265358979323846

/* ---- expression helpers ----------------------------------------------------- */

static mlc_tir_expr *i64(mlc_lg_call *c, int64_t v) { return mlc_tir_i64(M, v); }
static mlc_tir_expr *f64(mlc_lg_call *c, double v) { return mlc_tir_float(M, F64, v); }
static mlc_tir_expr *bin(mlc_lg_call *c, mlc_tir_binop op, mlc_tir_expr *a, mlc_tir_expr *b) {
  return mlc_tir_binary(M, op, a, b);
}
static mlc_tir_expr *add(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) { return mlc_tir_add(M, a, b); }
static mlc_tir_expr *sub(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) { return mlc_tir_sub(M, a, b); }
static mlc_tir_expr *mul(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) { return mlc_tir_mul(M, a, b); }
static mlc_tir_expr *fdiv(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) { return bin(c, MLC_TIR_DIV, a, b); }
static mlc_tir_expr *sel(mlc_lg_call *c, mlc_tir_expr *cond, mlc_tir_expr *t, mlc_tir_expr *f) {
  return mlc_tir_select(M, cond, t, f);
}
static mlc_tir_expr *and2(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) {
  return a ? bin(c, MLC_TIR_AND, a, b) : b;
}
static mlc_tir_expr *or2(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) {
  return a ? bin(c, MLC_TIR_OR, a, b) : b;
}
static mlc_tir_expr *as_f64(mlc_lg_call *c, mlc_tir_expr *e) { return mlc_tir_cast(M, F64, e); }
static mlc_tir_expr *as_i64(mlc_lg_call *c, mlc_tir_expr *e) { return mlc_tir_cast(M, I64, e); }
static mlc_tir_expr *call1(mlc_lg_call *c, mlc_tir_intrin op, mlc_tir_expr *a) { return mlc_tir_call1(M, op, a); }

/* v clamped into [lo, hi]. */
static mlc_tir_expr *clamp(mlc_lg_call *c, mlc_tir_expr *v, mlc_tir_expr *lo, mlc_tir_expr *hi) {
  return mlc_tir_max(M, mlc_tir_min(M, v, hi), lo);
}

/* 0 <= v < ext. */
static mlc_tir_expr *in_range(mlc_lg_call *c, mlc_tir_expr *v, mlc_tir_expr *ext) {
  return and2(c, bin(c, MLC_TIR_GE, v, i64(c, 0)), bin(c, MLC_TIR_LT, v, ext));
}

/* Element 0 of the one-element argument |i| (any rank). */
static mlc_tir_expr *scalar(mlc_lg_call *c, int i) {
  mlc_tir_expr *zero[MAX_RANK];
  int r = c->arg_types[i].rank;
  for (int d = 0; d < r && d < MAX_RANK; d++) zero[d] = i64(c, 0);
  return mlc_lg_arg_load(c, i, zero);
}

/* Element |k| of the int64 vector argument |i|. */
static mlc_tir_expr *param(mlc_lg_call *c, int i, int64_t k) {
  mlc_tir_expr *ix = i64(c, k);
  return mlc_lg_arg_load(c, i, &ix);
}

/* Dim |d| of argument |i| as an int64 expr. */
static mlc_tir_expr *adim(mlc_lg_call *c, int i, int d) { return mlc_lg_dim(c, &c->arg_types[i], d); }

static mlc_status check_ranks(mlc_lg_call *c) {
  for (int i = 0; i < c->nargs; i++)
    if (c->arg_types[i].rank > MAX_RANK)
      return mlc_lg_error(c, MLC_UNIMPLEMENTED, "argument %d has rank %d (at most %d)", i, c->arg_types[i].rank,
                          MAX_RANK);
  if (c->out_types[0].rank > MAX_RANK)
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "output rank %d (at most %d)", c->out_types[0].rank, MAX_RANK);
  return NULL;
}

/* A stage over output |k|'s shape computed by |fn(user)|. */
static mlc_status stage(mlc_lg_call *c, int k, const char *name, mlc_te_body_fn fn, void *user,
                        mlc_te_tensor **out) {
  const mlc_type *t = &c->out_types[k];
  mlc_tir_expr **shape = mlc_lg_shape(c, t);
  if (!shape) return mlc_oom();
  return mlc_te_compute(c->b, name, t->rank, shape, NULL, fn, user, out);
}

/* The finishing stage: |src| (float64) times |scale| (NULL: 1) converted
** to output 0's dtype. */
typedef struct fin_ctx {
  mlc_lg_call *c;
  mlc_te_tensor *src;
  mlc_tir_expr *scale;
} fin_ctx;

static mlc_tir_expr *finish_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  fin_ctx *f = user;
  mlc_lg_call *c = f->c;
  mlc_tir_expr *v = mlc_te_load(b, f->src, f->src->rank, idx);
  if (f->scale) v = mul(c, v, f->scale);
  return mlc_tir_cast(M, c->out_types[0].dtype, v);
}

static mlc_status finish(mlc_lg_call *c, mlc_te_tensor *src, mlc_tir_expr *scale, mlc_te_tensor **out) {
  if (!scale && src->dtype == c->out_types[0].dtype) {
    *out = src;
    return NULL;
  }
  fin_ctx f = {c, src, scale};
  return stage(c, 0, "T_cast", finish_body, &f, out);
}

/* ---- dft, stft --------------------------------------------------------------- */

/* The complex product term of a DFT sum: component |comp| (0 real, 1
** imaginary) of (xr + i xi) e^(i sign 2 pi kt / n), kt reduced mod n. */
static mlc_tir_expr *dft_term(mlc_lg_call *c, mlc_tir_expr *xr, mlc_tir_expr *xi, mlc_tir_expr *k,
                              mlc_tir_expr *t, mlc_tir_expr *n, double sign, mlc_tir_expr *comp) {
  mlc_tir_expr *kt = bin(c, MLC_TIR_FLOORMOD, mul(c, k, t), n);
  mlc_tir_expr *phi = fdiv(c, mul(c, f64(c, sign * 2 * PI), as_f64(c, kt)), as_f64(c, n));
  mlc_tir_expr *cs = call1(c, MLC_TIR_INTRIN_COS, phi), *sn = call1(c, MLC_TIR_INTRIN_SIN, phi);
  mlc_tir_expr *re = mul(c, xr, cs), *im = mul(c, xr, sn);
  if (xi) {
    re = sub(c, re, mul(c, xi, sn));
    im = add(c, im, mul(c, xi, cs));
  }
  return sel(c, bin(c, MLC_TIR_EQ, comp, i64(c, 0)), re, im);
}

typedef struct dft_ctx {
  mlc_lg_call *c;
  int axis, complex;
  double sign;
  mlc_tir_expr *n;    /* the DFT length (int64) */
  mlc_tir_expr *ext;  /* reduction extent */
  mlc_tir_expr *lim;  /* points t < lim count (NULL: all of ext) */
} dft_ctx;

static mlc_tir_expr *dft_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  dft_ctx *s = user;
  mlc_lg_call *c = s->c;
  int r = c->arg_types[0].rank;
  mlc_tir_expr *xi[MAX_RANK];
  mlc_tir_expr *t = mlc_te_reduce_axis(b, s->ext, "t");
  for (int d = 0; d < r; d++) xi[d] = idx[d];
  xi[s->axis] = t;
  xi[r - 1] = i64(c, 0);
  mlc_tir_expr *xr = as_f64(c, mlc_lg_arg_load(c, 0, xi)), *xim = NULL;
  if (s->complex) {
    xi[r - 1] = i64(c, 1);
    xim = as_f64(c, mlc_lg_arg_load(c, 0, xi));
  }
  mlc_tir_expr *term = dft_term(c, xr, xim, idx[s->axis], t, s->n, s->sign, idx[r - 1]);
  if (s->lim) term = sel(c, bin(c, MLC_TIR_LT, t, s->lim), term, f64(c, 0));
  return mlc_te_sum(b, term, &t, 1);
}

static mlc_tir_expr *zero_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  (void)b, (void)idx;
  return f64((mlc_lg_call *)user, 0);
}

/* y = the DFT of x along attr axis */
mlc_status mlc_lg_dft(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_ranks(c));
  const mlc_type *x = &c->arg_types[0];
  int r = x->rank;
  dft_ctx s = {c, (int)mlc_lg_int(c, "axis", 1), x->dims[r - 1] == 2, 0, NULL, NULL, NULL};
  int inverse = mlc_lg_int(c, "inverse", 0) != 0;
  int64_t len = mlc_lg_int(c, "length", x->dims[s.axis]);
  s.sign = inverse ? 1 : -1;
  if (s.axis < 0 || s.axis > r - 2) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "axis %d out of range", s.axis);
  int64_t ext = x->dims[s.axis];
  mlc_te_tensor *acc;
  if (ext == 0 || (len == 0 && c->nargs < 2)) {
    MLC_RETURN_IF_ERROR(stage(c, 0, "T_dft_acc", zero_body, c, &acc));
    return finish(c, acc, NULL, out);
  }
  mlc_tir_expr *xext = mlc_lg_dim(c, x, s.axis);
  if (len == 0) { /* run time: n = p[0] */
    s.n = param(c, 1, 0);
    s.ext = MLC_DIM_IS_SYM(ext) ? mlc_tir_max(M, xext, i64(c, 1)) : xext;
    s.lim = mlc_tir_min(M, s.n, xext);
  } else if (MLC_DIM_IS_SYM(len)) {
    s.n = mlc_lg_dim(c, &(mlc_type){x->dtype, 1, &len}, 0);
    s.ext = len == ext ? mlc_tir_max(M, xext, i64(c, 1)) : xext;
    s.lim = mlc_tir_min(M, s.n, xext);
  } else {
    s.n = i64(c, len);
    if (MLC_DIM_IS_SYM(ext)) {
      s.ext = mlc_tir_max(M, mlc_tir_min(M, s.n, xext), i64(c, 1));
      s.lim = xext;
    } else {
      s.ext = i64(c, len < ext ? len : ext);
    }
  }
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_dft_acc", dft_body, &s, &acc));
  return finish(c, acc, inverse ? fdiv(c, f64(c, 1), as_f64(c, s.n)) : NULL, out);
}

typedef struct stft_ctx {
  mlc_lg_call *c;
  int complex, window;
  mlc_tir_expr *n, *step, *ext, *lim;
} stft_ctx;

static mlc_tir_expr *stft_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  stft_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *L = adim(c, 0, 1);
  mlc_tir_expr *t = mlc_te_reduce_axis(b, s->ext, "t");
  mlc_tir_expr *pos = clamp(c, add(c, mul(c, idx[1], s->step), t), i64(c, 0), sub(c, L, i64(c, 1)));
  mlc_tir_expr *xi[3] = {idx[0], pos, i64(c, 0)};
  mlc_tir_expr *xr = as_f64(c, mlc_lg_arg_load(c, 0, xi)), *xim = NULL;
  if (s->complex) {
    xi[2] = i64(c, 1);
    xim = as_f64(c, mlc_lg_arg_load(c, 0, xi));
  }
  if (s->window) {
    mlc_tir_expr *wi = mlc_tir_min(M, t, sub(c, adim(c, 1, 0), i64(c, 1)));
    mlc_tir_expr *w = as_f64(c, mlc_lg_arg_load(c, 1, &wi));
    xr = mul(c, xr, w);
    if (xim) xim = mul(c, xim, w);
  }
  mlc_tir_expr *term = dft_term(c, xr, xim, idx[2], t, s->n, -1, idx[3]);
  if (s->lim) term = sel(c, bin(c, MLC_TIR_LT, t, s->lim), term, f64(c, 0));
  return mlc_te_sum(b, term, &t, 1);
}

/* y[b, f, k] = the DFT of frame f of the signal (times the window) */
mlc_status mlc_lg_stft(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_ranks(c));
  const mlc_type *x = &c->arg_types[0];
  int win = mlc_lg_int(c, "window", 0) != 0;
  int64_t step = mlc_lg_int(c, "step", 0), len = mlc_lg_int(c, "length", 0);
  int p = c->nargs - 1;
  stft_ctx s = {c, x->dims[2] == 2, win, NULL, NULL, NULL, NULL};
  if (x->rank != 3 || (win && c->nargs < 2) || ((step == 0 || len == 0) && p < 1 + win))
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "malformed call");
  s.step = step > 0 ? i64(c, step) : param(c, p, 2);
  if (len > 0) {
    s.n = s.ext = i64(c, len);
  } else {
    s.n = param(c, p, 3);
    s.ext = mlc_tir_max(M, adim(c, 0, 1), i64(c, 1));
    s.lim = s.n;
  }
  mlc_te_tensor *acc;
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_stft_acc", stft_body, &s, &acc));
  return finish(c, acc, NULL, out);
}

/* ---- window, mel_weight_matrix, signal_dims ------------------------------------ */

static mlc_tir_expr *window_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  const char *kind = mlc_attrs_str(c->attrs, c->nattrs, "kind", "hann");
  int periodic = mlc_lg_int(c, "periodic", 1) != 0;
  mlc_tir_expr *N = mlc_lg_dim(c, &c->out_types[0], 0);
  if (!periodic) N = sub(c, N, i64(c, 1));
  N = mlc_tir_max(M, N, i64(c, 1)); /* a symmetric window of 1 point: angle 0 */
  mlc_tir_expr *a = fdiv(c, mul(c, f64(c, 2 * PI), as_f64(c, idx[0])), as_f64(c, N));
  mlc_tir_expr *cs = call1(c, MLC_TIR_INTRIN_COS, a), *v;
  if (strcmp(kind, "hamming") == 0) {
    v = sub(c, f64(c, 25.0 / 46.0), mul(c, f64(c, 21.0 / 46.0), cs));
  } else if (strcmp(kind, "blackman") == 0) {
    mlc_tir_expr *c2 = call1(c, MLC_TIR_INTRIN_COS, mul(c, f64(c, 2), a));
    v = add(c, sub(c, f64(c, 0.42), mul(c, f64(c, 0.5), cs)), mul(c, f64(c, 0.08), c2));
  } else {
    v = sub(c, f64(c, 0.5), mul(c, f64(c, 0.5), cs));
  }
  return mlc_tir_cast(M, c->out_types[0].dtype, v);
}

/* y[i] = the window at i */
mlc_status mlc_lg_window(mlc_lg_call *c, mlc_te_tensor **out) {
  return stage(c, 0, "T_window", window_body, c, out);
}

/* log10(v) */
static mlc_tir_expr *log10e(mlc_lg_call *c, mlc_tir_expr *v) {
  return mul(c, call1(c, MLC_TIR_INTRIN_LOG, v), f64(c, 1 / log(10.0)));
}

typedef struct mel_ctx {
  mlc_lg_call *c;
  mlc_tir_expr *low, *step, *scale, *sr; /* mel of the lower edge, mel step, dft_length + 1 */
} mel_ctx;

/* The spectrogram bin of mel band edge |q| (float64, integral). */
static mlc_tir_expr *mel_edge(mel_ctx *s, mlc_tir_expr *q) {
  mlc_lg_call *c = s->c;
  mlc_tir_expr *mel = add(c, mul(c, as_f64(c, q), s->step), s->low);
  mlc_tir_expr *p[2] = {f64(c, 10), fdiv(c, mel, f64(c, 2595))};
  mlc_tir_expr *hz = mul(c, f64(c, 700), sub(c, mlc_tir_call(M, MLC_TIR_INTRIN_POW, 2, p), f64(c, 1)));
  return call1(c, MLC_TIR_INTRIN_FLOOR, fdiv(c, mul(c, s->scale, hz), s->sr));
}

static mlc_tir_expr *mel_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mel_ctx *s = user;
  mlc_lg_call *c = s->c;
  (void)b;
  mlc_tir_expr *i = idx[1], *j = as_f64(c, idx[0]);
  mlc_tir_expr *lo = mel_edge(s, i), *ce = mel_edge(s, add(c, i, i64(c, 1)));
  mlc_tir_expr *hi = mel_edge(s, add(c, i, i64(c, 2)));
  mlc_tir_expr *up = fdiv(c, sub(c, j, lo), sub(c, ce, lo)), *down = fdiv(c, sub(c, hi, j), sub(c, hi, ce));
  mlc_tir_expr *v =
      sel(c, bin(c, MLC_TIR_EQ, j, ce), f64(c, 1),
          sel(c, and2(c, bin(c, MLC_TIR_LE, lo, j), bin(c, MLC_TIR_LT, j, ce)), up,
              sel(c, and2(c, bin(c, MLC_TIR_LT, ce, j), bin(c, MLC_TIR_LT, j, hi)), down, f64(c, 0))));
  return mlc_tir_cast(M, c->out_types[0].dtype, v);
}

/* y[j, i] = the weight of spectrogram bin j in mel band i */
mlc_status mlc_lg_mel_weights(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_ranks(c));
  mel_ctx s = {c, NULL, NULL, NULL, NULL};
  mlc_tir_expr *lo = as_f64(c, scalar(c, 3)), *hi = as_f64(c, scalar(c, 4));
  mlc_tir_expr *lowm = mul(c, f64(c, 2595), log10e(c, add(c, f64(c, 1), fdiv(c, lo, f64(c, 700)))));
  mlc_tir_expr *highm = mul(c, f64(c, 2595), log10e(c, add(c, f64(c, 1), fdiv(c, hi, f64(c, 700)))));
  mlc_tir_expr *nb = as_f64(c, mlc_lg_dim(c, &c->out_types[0], 1));
  s.low = lowm;
  s.step = fdiv(c, sub(c, highm, lowm), add(c, nb, f64(c, 2)));
  s.scale = add(c, as_f64(c, scalar(c, 1)), f64(c, 1));
  s.sr = as_f64(c, scalar(c, 2));
  return stage(c, 0, "T_mel_weight_matrix", mel_body, &s, out);
}

static mlc_tir_expr *dims_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  const char *kind = mlc_attrs_str(c->attrs, c->nattrs, "kind", "dft");
  int onesided = mlc_lg_int(c, "onesided", 0) != 0;
  mlc_tir_expr *v[4], *ok;
  int n;
  if (strcmp(kind, "mel") == 0) {
    mlc_tir_expr *mels = as_i64(c, scalar(c, 0)), *dl = as_i64(c, scalar(c, 1));
    ok = and2(c, bin(c, MLC_TIR_GE, dl, i64(c, 1)), bin(c, MLC_TIR_GE, mels, i64(c, 0)));
    v[0] = add(c, bin(c, MLC_TIR_FLOORDIV, dl, i64(c, 2)), i64(c, 1));
    v[1] = mels;
    n = 2;
  } else {
    int st = strcmp(kind, "stft") == 0;
    mlc_tir_expr *len = as_i64(c, scalar(c, st ? 2 : 0));
    mlc_tir_expr *bins = onesided ? add(c, bin(c, MLC_TIR_FLOORDIV, len, i64(c, 2)), i64(c, 1)) : len;
    ok = bin(c, MLC_TIR_GE, len, i64(c, 1));
    if (st) {
      mlc_tir_expr *L = adim(c, 0, 1), *step = as_i64(c, scalar(c, 1));
      ok = and2(c, and2(c, ok, bin(c, MLC_TIR_GE, step, i64(c, 1))), bin(c, MLC_TIR_LE, len, L));
      v[0] = add(c, bin(c, MLC_TIR_FLOORDIV, sub(c, L, len), mlc_tir_max(M, step, i64(c, 1))), i64(c, 1));
      v[1] = bins, v[2] = step, v[3] = len;
      n = 4;
    } else {
      v[0] = len, v[1] = bins;
      n = 2;
    }
  }
  mlc_tir_expr *y = v[n - 1];
  for (int k = n - 2; k >= 0; k--) y = sel(c, bin(c, MLC_TIR_EQ, idx[0], i64(c, k)), v[k], y);
  return sel(c, ok, y, i64(c, -1));
}

/* y = the sizes of attr kind */
mlc_status mlc_lg_signal_dims(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_ranks(c));
  return stage(c, 0, "T_signal_dims", dims_body, c, out);
}

/* ---- grid_sample ------------------------------------------------------------------ */

typedef struct gs_ctx {
  mlc_lg_call *c;
  int mode; /* 0 bilinear, 1 nearest, 2 bicubic */
  int pad;  /* 0 zeros, 1 border, 2 reflection */
  int ac;
} gs_ctx;

/* The grid coordinate |g| in [-1, 1] as a pixel coordinate of an axis of
** |size| (float64) pixels. */
static mlc_tir_expr *gs_unnorm(gs_ctx *s, mlc_tir_expr *g, mlc_tir_expr *size) {
  mlc_lg_call *c = s->c;
  mlc_tir_expr *g1 = add(c, g, f64(c, 1));
  if (s->ac) return mul(c, fdiv(c, g1, f64(c, 2)), sub(c, size, f64(c, 1)));
  return fdiv(c, sub(c, mul(c, g1, size), f64(c, 1)), f64(c, 2));
}

/* |v| reflected into [lo2 / 2, hi2 / 2] (PyTorch's reflect_coordinates). */
static mlc_tir_expr *gs_reflect(mlc_lg_call *c, mlc_tir_expr *v, mlc_tir_expr *lo2, mlc_tir_expr *hi2) {
  mlc_tir_expr *mn = fdiv(c, lo2, f64(c, 2)), *span = fdiv(c, sub(c, hi2, lo2), f64(c, 2));
  mlc_tir_expr *a = call1(c, MLC_TIR_INTRIN_ABS, sub(c, v, mn));
  mlc_tir_expr *flips = call1(c, MLC_TIR_INTRIN_FLOOR, fdiv(c, a, span));
  mlc_tir_expr *extra = sub(c, a, mul(c, flips, span));
  mlc_tir_expr *half = call1(c, MLC_TIR_INTRIN_FLOOR, fdiv(c, flips, f64(c, 2)));
  mlc_tir_expr *even = bin(c, MLC_TIR_EQ, mul(c, half, f64(c, 2)), flips);
  mlc_tir_expr *r = sel(c, even, add(c, extra, mn), add(c, sub(c, span, extra), mn));
  return sel(c, bin(c, MLC_TIR_EQ, lo2, hi2), f64(c, 0), r);
}

/* The padding mode applied to pixel coordinate |v| of an axis of |size|. */
static mlc_tir_expr *gs_pad(gs_ctx *s, mlc_tir_expr *v, mlc_tir_expr *size) {
  mlc_lg_call *c = s->c;
  mlc_tir_expr *hi = sub(c, size, f64(c, 1));
  if (s->pad == 0) return v;
  if (s->pad == 2) {
    if (s->ac) v = gs_reflect(c, v, f64(c, 0), mul(c, f64(c, 2), hi));
    else v = gs_reflect(c, v, f64(c, -1), sub(c, mul(c, f64(c, 2), size), f64(c, 1)));
  }
  return clamp(c, v, f64(c, 0), hi);
}

/* x[n, ch, iy, ix] as float64, 0 outside the input. */
static mlc_tir_expr *gs_tap(mlc_lg_call *c, mlc_tir_expr *const *idx, mlc_tir_expr *iy, mlc_tir_expr *ix) {
  mlc_tir_expr *inb = and2(c, in_range(c, iy, adim(c, 0, 2)), in_range(c, ix, adim(c, 0, 3)));
  mlc_tir_expr *xi[4] = {idx[0], idx[1], iy, ix};
  return sel(c, inb, as_f64(c, mlc_lg_arg_load(c, 0, xi)), f64(c, 0));
}

/* The cubic convolution weight of tap |k| (0..3) at fraction |t|, A = -0.75. */
static mlc_tir_expr *gs_cubic(mlc_lg_call *c, mlc_tir_expr *k, mlc_tir_expr *t) {
  const double A = -0.75;
  mlc_tir_expr *x1 = add(c, t, f64(c, 1)), *x2 = sub(c, f64(c, 1), t), *x3 = sub(c, f64(c, 2), t);
  /* |x| <= 1: ((A + 2) x - (A + 3)) x x + 1; 1 < |x| < 2: ((A x - 5A) x + 8A) x - 4A */
#define CC1(x) add(c, mul(c, mul(c, sub(c, mul(c, f64(c, A + 2), x), f64(c, A + 3)), x), x), f64(c, 1))
#define CC2(x) sub(c, mul(c, add(c, mul(c, sub(c, mul(c, f64(c, A), x), f64(c, 5 * A)), x), f64(c, 8 * A)), x), f64(c, 4 * A))
  mlc_tir_expr *w0 = CC2(x1), *w1 = CC1(t), *w2 = CC1(x2), *w3 = CC2(x3);
#undef CC1
#undef CC2
  return sel(c, bin(c, MLC_TIR_EQ, k, i64(c, 0)), w0,
             sel(c, bin(c, MLC_TIR_EQ, k, i64(c, 1)), w1, sel(c, bin(c, MLC_TIR_EQ, k, i64(c, 2)), w2, w3)));
}

static mlc_tir_expr *gs_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  gs_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *gi[4] = {idx[0], idx[2], idx[3], i64(c, 0)};
  mlc_tir_expr *gx = as_f64(c, mlc_lg_arg_load(c, 1, gi));
  gi[3] = i64(c, 1);
  mlc_tir_expr *gy = as_f64(c, mlc_lg_arg_load(c, 1, gi));
  mlc_tir_expr *H = as_f64(c, adim(c, 0, 2)), *W = as_f64(c, adim(c, 0, 3));
  mlc_tir_expr *ux = gs_unnorm(s, gx, W), *uy = gs_unnorm(s, gy, H);
  if (s->mode == 1) { /* nearest: round half to even */
    mlc_tir_expr *ix = as_i64(c, call1(c, MLC_TIR_INTRIN_ROUND, gs_pad(s, ux, W)));
    mlc_tir_expr *iy = as_i64(c, call1(c, MLC_TIR_INTRIN_ROUND, gs_pad(s, uy, H)));
    return gs_tap(c, idx, iy, ix);
  }
  int taps = s->mode == 0 ? 2 : 4;
  mlc_tir_expr *ty = mlc_te_reduce_axis(b, i64(c, taps), "ty"), *tx = mlc_te_reduce_axis(b, i64(c, taps), "tx");
  mlc_tir_expr *axes[2] = {ty, tx}, *v;
  if (s->mode == 0) {
    mlc_tir_expr *px = gs_pad(s, ux, W), *py = gs_pad(s, uy, H);
    mlc_tir_expr *x0 = call1(c, MLC_TIR_INTRIN_FLOOR, px), *y0 = call1(c, MLC_TIR_INTRIN_FLOOR, py);
    mlc_tir_expr *lx = sub(c, px, x0), *ly = sub(c, py, y0);
    mlc_tir_expr *wx = sel(c, bin(c, MLC_TIR_EQ, tx, i64(c, 0)), sub(c, f64(c, 1), lx), lx);
    mlc_tir_expr *wy = sel(c, bin(c, MLC_TIR_EQ, ty, i64(c, 0)), sub(c, f64(c, 1), ly), ly);
    v = gs_tap(c, idx, add(c, as_i64(c, y0), ty), add(c, as_i64(c, x0), tx));
    v = mul(c, mul(c, wy, wx), v);
  } else {
    mlc_tir_expr *x0 = call1(c, MLC_TIR_INTRIN_FLOOR, ux), *y0 = call1(c, MLC_TIR_INTRIN_FLOOR, uy);
    mlc_tir_expr *cx = add(c, sub(c, x0, f64(c, 1)), as_f64(c, tx));
    mlc_tir_expr *cy = add(c, sub(c, y0, f64(c, 1)), as_f64(c, ty));
    v = gs_tap(c, idx, as_i64(c, gs_pad(s, cy, H)), as_i64(c, gs_pad(s, cx, W)));
    v = mul(c, mul(c, gs_cubic(c, ty, sub(c, uy, y0)), gs_cubic(c, tx, sub(c, ux, x0))), v);
  }
  return mlc_te_sum(b, v, axes, 2);
}

/* y[n, c, i, j] = x[n, c] sampled at grid[n, i, j] */
mlc_status mlc_lg_grid_sample(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_ranks(c));
  const char *mode = mlc_attrs_str(c->attrs, c->nattrs, "mode", "bilinear");
  const char *pad = mlc_attrs_str(c->attrs, c->nattrs, "padding_mode", "zeros");
  gs_ctx s = {c, strcmp(mode, "nearest") == 0 ? 1 : strcmp(mode, "bicubic") == 0 ? 2 : 0,
              strcmp(pad, "border") == 0 ? 1 : strcmp(pad, "reflection") == 0 ? 2 : 0,
              mlc_lg_int(c, "align_corners", 0) != 0};
  if (c->arg_types[0].rank != 4 || c->arg_types[1].rank != 4)
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "only 4-D inputs");
  mlc_te_tensor *acc;
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_grid_sample_acc", gs_body, &s, &acc));
  return finish(c, acc, NULL, out);
}

/* ---- roi_align ----------------------------------------------------------------- */

typedef struct roi_ctx {
  mlc_lg_call *c;
  int max, half_pixel;
  int64_t sr, oh, ow;
  double scale;
  mlc_te_tensor *grid; /* adaptive sampling: the largest grid (NULL: attr sampling_ratio) */
} roi_ctx;

static mlc_tir_expr *roi_coord(roi_ctx *s, mlc_tir_expr *r, int k) {
  mlc_lg_call *c = s->c;
  mlc_tir_expr *ri[2] = {r, i64(c, k)};
  mlc_tir_expr *v = mul(c, as_f64(c, mlc_lg_arg_load(c, 1, ri)), f64(c, s->scale));
  return s->half_pixel ? sub(c, v, f64(c, 0.5)) : v;
}

/* The bilinear sample of x[b, ch] at (y, x) as onnxruntime's RoiAlign
** computes it (0 outside [-1, H] x [-1, W]); |max|: the largest weighted
** corner instead of their sum. */
static mlc_tir_expr *roi_sample(roi_ctx *s, mlc_tir_expr *bi, mlc_tir_expr *ch, mlc_tir_expr *y, mlc_tir_expr *x,
                                mlc_tir_expr *valid) {
  mlc_lg_call *c = s->c;
  mlc_tir_expr *Hi = adim(c, 0, 2), *Wi = adim(c, 0, 3), *H = as_f64(c, Hi), *W = as_f64(c, Wi);
  mlc_tir_expr *out = or2(c, or2(c, bin(c, MLC_TIR_LT, y, f64(c, -1)), bin(c, MLC_TIR_GT, y, H)),
                          or2(c, bin(c, MLC_TIR_LT, x, f64(c, -1)), bin(c, MLC_TIR_GT, x, W)));
  valid = and2(c, valid, mlc_tir_not(M, out));
  mlc_tir_expr *yy = mlc_tir_max(M, y, f64(c, 0)), *xx = mlc_tir_max(M, x, f64(c, 0));
  mlc_tir_expr *Hm1 = sub(c, Hi, i64(c, 1)), *Wm1 = sub(c, Wi, i64(c, 1));
  mlc_tir_expr *yl = as_i64(c, yy), *xl = as_i64(c, xx);
  mlc_tir_expr *ytop = bin(c, MLC_TIR_GE, yl, Hm1), *xtop = bin(c, MLC_TIR_GE, xl, Wm1);
  mlc_tir_expr *y0 = sel(c, ytop, Hm1, yl), *y1 = sel(c, ytop, Hm1, add(c, yl, i64(c, 1)));
  mlc_tir_expr *x0 = sel(c, xtop, Wm1, xl), *x1 = sel(c, xtop, Wm1, add(c, xl, i64(c, 1)));
  mlc_tir_expr *ly = sel(c, ytop, f64(c, 0), sub(c, yy, as_f64(c, yl)));
  mlc_tir_expr *lx = sel(c, xtop, f64(c, 0), sub(c, xx, as_f64(c, xl)));
  mlc_tir_expr *hy = sub(c, f64(c, 1), ly), *hx = sub(c, f64(c, 1), lx);
  mlc_tir_expr *p[4][2] = {{y0, x0}, {y0, x1}, {y1, x0}, {y1, x1}};
  mlc_tir_expr *w[4] = {mul(c, hy, hx), mul(c, hy, lx), mul(c, ly, hx), mul(c, ly, lx)};
  mlc_tir_expr *acc = NULL;
  for (int k = 0; k < 4; k++) {
    mlc_tir_expr *xi[4] = {bi, ch, p[k][0], p[k][1]};
    mlc_tir_expr *v = mul(c, w[k], as_f64(c, mlc_lg_arg_load(c, 0, xi)));
    acc = !acc ? v : s->max ? mlc_tir_max(M, acc, v) : add(c, acc, v);
  }
  return sel(c, valid, acc, f64(c, 0));
}

/* Sampling points per bin along one axis of extent |size| in |bins| bins. */
static mlc_tir_expr *roi_grid(roi_ctx *s, mlc_tir_expr *size, int64_t bins) {
  mlc_lg_call *c = s->c;
  if (s->sr > 0) return i64(c, s->sr);
  mlc_tir_expr *g = as_i64(c, call1(c, MLC_TIR_INTRIN_CEIL, fdiv(c, size, f64(c, (double)bins))));
  return mlc_tir_max(M, g, i64(c, 0));
}

/* Roi |r|'s start (x1, y1) and extent (rw, rh) in input pixels. */
static void roi_geom(roi_ctx *s, mlc_tir_expr *r, mlc_tir_expr **x1, mlc_tir_expr **y1, mlc_tir_expr **rw,
                     mlc_tir_expr **rh) {
  mlc_lg_call *c = s->c;
  *x1 = roi_coord(s, r, 0), *y1 = roi_coord(s, r, 1);
  *rw = sub(c, roi_coord(s, r, 2), *x1), *rh = sub(c, roi_coord(s, r, 3), *y1);
  if (!s->half_pixel) {
    *rw = mlc_tir_max(M, *rw, f64(c, 1));
    *rh = mlc_tir_max(M, *rh, f64(c, 1));
  }
}

/* grid[0], grid[1] = the largest adaptive sampling grid over the rois (the
** reduction runs at least once, masked) */
static mlc_tir_expr *roi_grid_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  roi_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *R = adim(c, 1, 0), *x1, *y1, *rw, *rh;
  mlc_tir_expr *r = mlc_te_reduce_axis(b, mlc_tir_max(M, R, i64(c, 1)), "r");
  roi_geom(s, mlc_tir_min(M, r, mlc_tir_max(M, sub(c, R, i64(c, 1)), i64(c, 0))), &x1, &y1, &rw, &rh);
  mlc_tir_expr *g = sel(c, bin(c, MLC_TIR_EQ, idx[0], i64(c, 0)), roi_grid(s, rh, s->oh), roi_grid(s, rw, s->ow));
  return mlc_te_max(b, sel(c, bin(c, MLC_TIR_LT, r, R), g, i64(c, 0)), &r, 1);
}

static mlc_tir_expr *roi_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  roi_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *r = idx[0], *x1, *y1, *rw, *rh;
  roi_geom(s, r, &x1, &y1, &rw, &rh);
  mlc_tir_expr *bh = fdiv(c, rh, f64(c, (double)s->oh)), *bw = fdiv(c, rw, f64(c, (double)s->ow));
  mlc_tir_expr *gh = roi_grid(s, rh, s->oh), *gw = roi_grid(s, rw, s->ow);
  mlc_tir_expr *ghe = mlc_tir_max(M, gh, i64(c, 1)), *gwe = mlc_tir_max(M, gw, i64(c, 1));
  /* the points of the largest grid, those past this roi's grid masked */
  mlc_tir_expr *eh = ghe, *ew = gwe;
  if (s->grid) {
    mlc_tir_expr *z = i64(c, 0), *o = i64(c, 1);
    eh = mlc_tir_max(M, mlc_te_load(b, s->grid, 1, &z), i64(c, 1));
    ew = mlc_tir_max(M, mlc_te_load(b, s->grid, 1, &o), i64(c, 1));
  }
  mlc_tir_expr *iy = mlc_te_reduce_axis(b, eh, "iy"), *ix = mlc_te_reduce_axis(b, ew, "ix");
  mlc_tir_expr *axes[2] = {iy, ix};
  mlc_tir_expr *y = add(c, add(c, y1, mul(c, as_f64(c, idx[2]), bh)),
                        fdiv(c, mul(c, add(c, as_f64(c, iy), f64(c, 0.5)), bh), as_f64(c, ghe)));
  mlc_tir_expr *x = add(c, add(c, x1, mul(c, as_f64(c, idx[3]), bw)),
                        fdiv(c, mul(c, add(c, as_f64(c, ix), f64(c, 0.5)), bw), as_f64(c, gwe)));
  mlc_tir_expr *bi = as_i64(c, mlc_lg_arg_load(c, 2, &r)); /* checked in [0, N) */
  /* (gh <= eh: the min only makes the body read the grid stage, which te
  ** does not see in reduction extents) */
  mlc_tir_expr *valid = and2(c, bin(c, MLC_TIR_LT, iy, mlc_tir_min(M, gh, eh)), bin(c, MLC_TIR_LT, ix, mlc_tir_min(M, gw, ew)));
  mlc_tir_expr *v = roi_sample(s, bi, idx[1], y, x, valid);
  if (s->max) return mlc_te_max(b, v, axes, 2);
  mlc_tir_expr *count = as_f64(c, mul(c, ghe, gwe));
  return mlc_te_sum(b, fdiv(c, v, count), axes, 2);
}

/* y[r, c] = the pooled bins of roi r over x[batch_indices[r], c] */
mlc_status mlc_lg_roi_align(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_ranks(c));
  const char *mode = mlc_attrs_str(c->attrs, c->nattrs, "mode", "avg");
  roi_ctx s = {c, strcmp(mode, "max") == 0, mlc_lg_int(c, "half_pixel", 1) != 0, mlc_lg_int(c, "sampling_ratio", 0),
               mlc_lg_int(c, "output_height", 1), mlc_lg_int(c, "output_width", 1),
               mlc_lg_float(c, "spatial_scale", 1.0), NULL};
  const mlc_type *x = &c->arg_types[0];
  if (x->rank != 4 || s.oh < 1 || s.ow < 1) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "malformed call");
  mlc_te_tensor *acc;
  if (x->dims[0] == 0 || x->dims[2] == 0 || x->dims[3] == 0) {
    MLC_RETURN_IF_ERROR(stage(c, 0, "T_roi_align_acc", zero_body, c, &acc));
    return finish(c, acc, NULL, out);
  }
  MLC_RETURN_IF_ERROR(mlc_lg_check_values(c, 2, i64(c, 0), adim(c, 0, 0), "batch index", NULL));
  if (s.sr <= 0) {
    mlc_tir_expr *two = i64(c, 2);
    MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_roi_grid", 1, &two, NULL, roi_grid_body, &s, &acc));
    s.grid = acc;
  }
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_roi_align_acc", roi_body, &s, &acc));
  return finish(c, acc, NULL, out);
}

/* ---- det ----------------------------------------------------------------------- */

typedef struct det_ctx {
  mlc_lg_call *c;
  int nb;             /* batch rank */
  int64_t m;          /* matrix size */
  int64_t k;          /* the column being eliminated */
  mlc_te_tensor *a;   /* the matrix before step k (NULL: the input) */
  mlc_te_tensor *amax, *piv;
} det_ctx;

/* a[b.., i, j] of the current matrix as float64. */
static mlc_tir_expr *det_load(mlc_te_builder *bld, det_ctx *s, mlc_tir_expr *const *bidx, mlc_tir_expr *i,
                              mlc_tir_expr *j) {
  mlc_tir_expr *ix[MAX_RANK];
  for (int d = 0; d < s->nb; d++) ix[d] = bidx[d];
  ix[s->nb] = i;
  ix[s->nb + 1] = j;
  if (s->a) return mlc_te_load(bld, s->a, s->nb + 2, ix);
  return as_f64(s->c, mlc_lg_arg_load(s->c, 0, ix));
}

/* amax[b] = max over i >= k of |a[b, i, k]| */
static mlc_tir_expr *det_amax_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  det_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *i = mlc_te_reduce_axis(b, i64(c, s->m - s->k), "i");
  mlc_tir_expr *row = add(c, i, i64(c, s->k));
  mlc_tir_expr *v = call1(c, MLC_TIR_INTRIN_ABS, det_load(b, s, idx, row, i64(c, s->k)));
  return mlc_te_max(b, v, &i, 1);
}

/* piv[b] = the first row i >= k holding amax (m when NaNs leave none) */
static mlc_tir_expr *det_piv_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  det_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *i = mlc_te_reduce_axis(b, i64(c, s->m - s->k), "i");
  mlc_tir_expr *row = add(c, i, i64(c, s->k));
  mlc_tir_expr *v = call1(c, MLC_TIR_INTRIN_ABS, det_load(b, s, idx, row, i64(c, s->k)));
  mlc_tir_expr *hit = bin(c, MLC_TIR_EQ, v, mlc_te_load(b, s->amax, s->nb, idx));
  return mlc_te_min(b, sel(c, hit, row, i64(c, s->m)), &i, 1);
}

/* The matrix after step k: rows k and p swapped (the old row k negated),
** rows below k eliminated with the pivot row. */
static mlc_tir_expr *det_step_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  det_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *i = idx[s->nb], *j = idx[s->nb + 1], *k = i64(c, s->k);
  mlc_tir_expr *p = mlc_te_load(b, s->piv, s->nb, idx);
  p = sel(c, bin(c, MLC_TIR_GE, p, i64(c, s->m)), k, p);
  mlc_tir_expr *is_k = bin(c, MLC_TIR_EQ, i, k), *is_p = bin(c, MLC_TIR_EQ, i, p);
  mlc_tir_expr *src = sel(c, is_k, p, sel(c, is_p, k, i));
  mlc_tir_expr *sign = sel(c, and2(c, is_p, bin(c, MLC_TIR_NE, p, k)), f64(c, -1), f64(c, 1));
  mlc_tir_expr *row = mul(c, sign, det_load(b, s, idx, src, j));
  mlc_tir_expr *lead = mul(c, sign, det_load(b, s, idx, src, k));
  mlc_tir_expr *pivot = det_load(b, s, idx, p, k), *prow = det_load(b, s, idx, p, j);
  mlc_tir_expr *factor = sel(c, bin(c, MLC_TIR_EQ, pivot, f64(c, 0)), f64(c, 0), fdiv(c, lead, pivot));
  return sel(c, bin(c, MLC_TIR_LE, i, k), row, sub(c, row, mul(c, factor, prow)));
}

/* det[b] = the product of the diagonal of the eliminated matrix */
static mlc_tir_expr *det_prod_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  det_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *i = mlc_te_reduce_axis(b, i64(c, s->m), "i");
  return mlc_te_prod(b, det_load(b, s, idx, i, i), &i, 1);
}

static mlc_tir_expr *one_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  (void)b, (void)idx;
  return f64((mlc_lg_call *)user, 1);
}

/* y[b] = det(x[b]) */
mlc_status mlc_lg_det(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_ranks(c));
  const mlc_type *x = &c->arg_types[0];
  det_ctx s = {c, x->rank - 2, x->dims[x->rank - 1], 0, NULL, NULL, NULL};
  if (s.nb < 0) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "input rank below 2");
  if (MLC_DIM_IS_SYM(s.m)) return mlc_lg_error(c, MLC_UNIMPLEMENTED, "matrices of symbolic size");
  if (s.m > 256) return mlc_lg_error(c, MLC_UNIMPLEMENTED, "matrices of size %lld (at most 256)", (long long)s.m);
  mlc_tir_expr **bshape = mlc_lg_shape(c, x), **mshape = mlc_lg_shape(c, x);
  if (!bshape || !mshape) return mlc_oom();
  mlc_te_tensor *acc;
  if (s.m == 0) {
    MLC_RETURN_IF_ERROR(stage(c, 0, "T_det_acc", one_body, c, &acc));
    return finish(c, acc, NULL, out);
  }
  for (s.k = 0; s.k + 1 < s.m; s.k++) { /* stage names are unique per column */
    char n1[32], n2[32], n3[32];
    snprintf(n1, sizeof n1, "T_det_amax%lld", (long long)s.k);
    snprintf(n2, sizeof n2, "T_det_pivot%lld", (long long)s.k);
    snprintf(n3, sizeof n3, "T_det_lu%lld", (long long)s.k);
    MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, n1, s.nb, bshape, NULL, det_amax_body, &s, &s.amax));
    MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, n2, s.nb, bshape, NULL, det_piv_body, &s, &s.piv));
    mlc_te_tensor *next; /* te clears its out pointer first: the body still reads s.a */
    MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, n3, s.nb + 2, mshape, NULL, det_step_body, &s, &next));
    s.a = next;
  }
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_det_acc", det_prod_body, &s, &acc));
  return finish(c, acc, NULL, out);
}

/* ---- max_unpool -------------------------------------------------------------------- */

typedef struct unpool_ctx {
  mlc_lg_call *c;
  int r;                       /* rank */
  int64_t k[MAX_RANK], st[MAX_RANK], pb[MAX_RANK];
  mlc_te_tensor *irr, *win, *all;
} unpool_ctx;

/* Flat index of |ix| in the shape of |t| (int64 exprs). */
static mlc_tir_expr *flat_of(mlc_lg_call *c, const mlc_type *t, mlc_tir_expr *const *ix) {
  mlc_tir_expr *f = i64(c, 0);
  for (int d = 0; d < t->rank; d++) f = add(c, mul(c, f, mlc_lg_dim(c, t, d)), ix[d]);
  return f;
}

/* The multi-index of flat index |f| in the shape of |t| (row-major). */
static void unflat(mlc_lg_call *c, const mlc_type *t, mlc_tir_expr *f, mlc_tir_expr **ix) {
  for (int d = t->rank - 1; d >= 0; d--) {
    mlc_tir_expr *e = mlc_tir_max(M, mlc_lg_dim(c, t, d), i64(c, 1));
    ix[d] = bin(c, MLC_TIR_FLOORMOD, f, e);
    f = bin(c, MLC_TIR_FLOORDIV, f, e);
  }
}

/* Whether input position |q| (spatial dims) has output position |p| in its
** pooling window along axis d. */
static mlc_tir_expr *in_window(unpool_ctx *s, int d, mlc_tir_expr *q, mlc_tir_expr *p) {
  mlc_lg_call *c = s->c;
  mlc_tir_expr *lo = sub(c, mul(c, q, i64(c, s->st[d])), i64(c, s->pb[d]));
  return and2(c, bin(c, MLC_TIR_LE, lo, p), bin(c, MLC_TIR_LT, p, add(c, lo, i64(c, s->k[d]))));
}

/* irr = the number of input elements whose index leaves their window */
static mlc_tir_expr *unpool_irr_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  unpool_ctx *s = user;
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0], *y = &c->out_types[0];
  (void)idx;
  mlc_tir_expr *e[MAX_RANK], *o[MAX_RANK];
  for (int d = 0; d < s->r; d++) {
    char name[8] = {'e', (char)('0' + d % 10), 0};
    e[d] = mlc_te_reduce_axis(b, mlc_lg_dim(c, x, d), name);
  }
  mlc_tir_expr *t = mlc_lg_arg_load(c, 1, e);
  mlc_tir_expr *numel = i64(c, 1);
  for (int d = 0; d < s->r; d++) numel = mul(c, numel, mlc_lg_dim(c, y, d));
  unflat(c, y, t, o);
  mlc_tir_expr *ok = in_range(c, t, numel);
  ok = and2(c, ok, and2(c, bin(c, MLC_TIR_EQ, o[0], e[0]), bin(c, MLC_TIR_EQ, o[1], e[1])));
  for (int d = 2; d < s->r; d++) ok = and2(c, ok, in_window(s, d, e[d], o[d]));
  return mlc_te_sum(b, sel(c, ok, i64(c, 0), i64(c, 1)), e, s->r);
}

/* win[o] = the largest flat input index among o's window candidates whose
** index is flat(o), or -1 */
static mlc_tir_expr *unpool_win_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  unpool_ctx *s = user;
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0], *y = &c->out_types[0];
  mlc_tir_expr *t[MAX_RANK], *q[MAX_RANK];
  int nt = 0;
  mlc_tir_expr *ok = and2(c, in_range(c, idx[0], mlc_lg_dim(c, x, 0)), in_range(c, idx[1], mlc_lg_dim(c, x, 1)));
  q[0] = idx[0], q[1] = idx[1];
  for (int d = 2; d < s->r; d++) {
    char name[8] = {'t', (char)('0' + d % 10), 0};
    int64_t cands = (s->k[d] + s->st[d] - 1) / s->st[d];
    t[nt] = mlc_te_reduce_axis(b, i64(c, cands), name);
    mlc_tir_expr *top = bin(c, MLC_TIR_FLOORDIV, add(c, idx[d], i64(c, s->pb[d])), i64(c, s->st[d]));
    q[d] = sub(c, top, t[nt++]);
    ok = and2(c, ok, and2(c, in_range(c, q[d], mlc_lg_dim(c, x, d)), in_window(s, d, q[d], idx[d])));
  }
  mlc_tir_expr *qi[MAX_RANK];
  for (int d = 0; d < s->r; d++) qi[d] = sel(c, ok, q[d], i64(c, 0));
  mlc_tir_expr *hit = and2(c, ok, bin(c, MLC_TIR_EQ, mlc_lg_arg_load(c, 1, qi), flat_of(c, y, idx)));
  return mlc_te_max(b, sel(c, hit, flat_of(c, x, qi), i64(c, -1)), t, nt);
}

/* all[o] = the largest flat input index e with indices[e] = flat(o), or -1;
** the reduction has one masked point unless irr counted any */
static mlc_tir_expr *unpool_all_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  unpool_ctx *s = user;
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0], *y = &c->out_types[0];
  mlc_tir_expr *numel = i64(c, 1), *e[MAX_RANK];
  for (int d = 0; d < s->r; d++) numel = mul(c, numel, mlc_lg_dim(c, x, d));
  mlc_tir_expr *any = bin(c, MLC_TIR_GT, mlc_te_load(b, s->irr, 0, NULL), i64(c, 0));
  mlc_tir_expr *f = mlc_te_reduce_axis(b, sel(c, any, mlc_tir_max(M, numel, i64(c, 1)), i64(c, 1)), "f");
  unflat(c, x, f, e);
  mlc_tir_expr *hit = and2(c, and2(c, any, bin(c, MLC_TIR_LT, f, numel)),
                           bin(c, MLC_TIR_EQ, mlc_lg_arg_load(c, 1, e), flat_of(c, y, idx)));
  return mlc_te_max(b, sel(c, hit, f, i64(c, -1)), &f, 1);
}

static mlc_tir_expr *unpool_value_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  unpool_ctx *s = user;
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *e[MAX_RANK];
  mlc_tir_expr *any = bin(c, MLC_TIR_GT, mlc_te_load(b, s->irr, 0, NULL), i64(c, 0));
  mlc_tir_expr *src = sel(c, any, mlc_te_load(b, s->all, s->r, idx), mlc_te_load(b, s->win, s->r, idx));
  unflat(c, x, mlc_tir_max(M, src, i64(c, 0)), e);
  mlc_tir_expr *zero = mlc_lg_imm(c, x->dtype, 0);
  return sel(c, bin(c, MLC_TIR_GE, src, i64(c, 0)), mlc_lg_arg_load(c, 0, e), zero);
}

/* y = zeros with y.flat[indices[e]] = x[e] */
mlc_status mlc_lg_max_unpool(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_ranks(c));
  const mlc_type *x = &c->arg_types[0];
  unpool_ctx s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.r = x->rank;
  const mlc_attr *ka = mlc_lg_attr(c, "kernel"), *sa = mlc_lg_attr(c, "strides"), *pa = mlc_lg_attr(c, "pads");
  int k = s.r - 2;
  if (s.r < 3 || !ka || !sa || !pa || ka->n != k || sa->n != k || pa->n != 2 * k)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "malformed call");
  for (int d = 0; d < k; d++) {
    s.k[d + 2] = ka->ints[d];
    s.st[d + 2] = sa->ints[d];
    s.pb[d + 2] = pa->ints[d];
    if (s.k[d + 2] < 1 || s.st[d + 2] < 1) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "kernel or stride below 1");
  }
  if (mlc_type_numel(x) == 0) { /* nothing to scatter */
    mlc_te_tensor *acc;
    MLC_RETURN_IF_ERROR(stage(c, 0, "T_max_unpool_acc", zero_body, c, &acc));
    return finish(c, acc, NULL, out);
  }
  mlc_tir_expr *numel = i64(c, 1);
  for (int d = 0; d < s.r; d++) numel = mul(c, numel, mlc_lg_dim(c, &c->out_types[0], d));
  MLC_RETURN_IF_ERROR(mlc_lg_check_values(c, 1, i64(c, 0), numel, "index", " into the output"));
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_unpool_stray", 0, NULL, NULL, unpool_irr_body, &s, &s.irr));
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_unpool_window", unpool_win_body, &s, &s.win));
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_unpool_search", unpool_all_body, &s, &s.all));
  return stage(c, 0, "T_max_unpool", unpool_value_body, &s, out);
}

/* ---- unique_count, unique ---------------------------------------------------------- */

typedef struct uniq_ctx {
  mlc_lg_call *c;
  int sorted;
  int64_t K;              /* elements per slice (A * B) when static, else -1 */
  mlc_tir_expr *n, *k;    /* slice count N, elements per slice */
  mlc_te_tensor *diff;    /* diff[i, j]: first element where slices i and j differ, or k (NULL: K is 1) */
  mlc_te_tensor *first;   /* first[j]: the first slice equal to slice j */
  mlc_te_tensor *rank;    /* rank[j]: the output position of slice j */
  mlc_te_tensor *index;   /* index[p]: the first slice at position p */
} uniq_ctx;

/* x[a, j, b] of element |e| = a*B + b of slice |j|. */
static mlc_tir_expr *uniq_elem(uniq_ctx *s, mlc_tir_expr *j, mlc_tir_expr *e) {
  mlc_lg_call *c = s->c;
  mlc_tir_expr *B = mlc_tir_max(M, adim(c, 0, 2), i64(c, 1));
  mlc_tir_expr *xi[3] = {bin(c, MLC_TIR_FLOORDIV, e, B), j, bin(c, MLC_TIR_FLOORMOD, e, B)};
  return mlc_lg_arg_load(c, 0, xi);
}

/* diff[i, j] = the first element position where slices i and j differ, or k */
static mlc_tir_expr *uniq_diff_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  uniq_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *e = mlc_te_reduce_axis(b, mlc_tir_max(M, s->k, i64(c, 1)), "e");
  mlc_tir_expr *ne = bin(c, MLC_TIR_NE, uniq_elem(s, idx[0], e), uniq_elem(s, idx[1], e));
  ne = and2(c, bin(c, MLC_TIR_LT, e, s->k), ne);
  return mlc_te_min(b, sel(c, ne, e, s->k), &e, 1);
}

/* Whether slices i and j are equal. */
static mlc_tir_expr *uniq_eq(mlc_te_builder *b, uniq_ctx *s, mlc_tir_expr *i, mlc_tir_expr *j) {
  mlc_lg_call *c = s->c;
  if (!s->diff) return bin(c, MLC_TIR_EQ, uniq_elem(s, i, i64(c, 0)), uniq_elem(s, j, i64(c, 0)));
  mlc_tir_expr *ij[2] = {i, j};
  return bin(c, MLC_TIR_EQ, mlc_te_load(b, s->diff, 2, ij), s->k);
}

/* Whether slice i sorts strictly before slice j (lexicographic). */
static mlc_tir_expr *uniq_less(mlc_te_builder *b, uniq_ctx *s, mlc_tir_expr *i, mlc_tir_expr *j) {
  mlc_lg_call *c = s->c;
  if (!s->diff) return bin(c, MLC_TIR_LT, uniq_elem(s, i, i64(c, 0)), uniq_elem(s, j, i64(c, 0)));
  mlc_tir_expr *ij[2] = {i, j};
  mlc_tir_expr *d = mlc_te_load(b, s->diff, 2, ij);
  mlc_tir_expr *dc = mlc_tir_min(M, d, sub(c, s->k, i64(c, 1)));
  return and2(c, bin(c, MLC_TIR_LT, d, s->k), bin(c, MLC_TIR_LT, uniq_elem(s, i, dc), uniq_elem(s, j, dc)));
}

/* first[j] = min i with slice i equal to slice j */
static mlc_tir_expr *uniq_first_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  uniq_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *i = mlc_te_reduce_axis(b, s->n, "i");
  mlc_tir_expr *hit = or2(c, uniq_eq(b, s, i, idx[0]), bin(c, MLC_TIR_EQ, i, idx[0]));
  return mlc_te_min(b, sel(c, hit, i, s->n), &i, 1);
}

/* Whether slice |i| is the first of its kind. */
static mlc_tir_expr *uniq_is_first(mlc_te_builder *b, uniq_ctx *s, mlc_tir_expr *i) {
  return bin(s->c, MLC_TIR_EQ, mlc_te_load(b, s->first, 1, &i), i);
}

/* [number of first slices] (the reduction runs at least once, masked) */
static mlc_tir_expr *uniq_count_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  uniq_ctx *s = user;
  mlc_lg_call *c = s->c;
  (void)idx;
  mlc_tir_expr *j = mlc_te_reduce_axis(b, mlc_tir_max(M, s->n, i64(c, 1)), "j");
  mlc_tir_expr *jc = mlc_tir_min(M, j, mlc_tir_max(M, sub(c, s->n, i64(c, 1)), i64(c, 0)));
  mlc_tir_expr *hit = and2(c, bin(c, MLC_TIR_LT, j, s->n), uniq_is_first(b, s, jc));
  return mlc_te_sum(b, sel(c, hit, i64(c, 1), i64(c, 0)), &j, 1);
}

/* rank[j] = the first slices before slice j's kind: smaller ones (sorted),
** or those first seen before it */
static mlc_tir_expr *uniq_rank_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  uniq_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *i = mlc_te_reduce_axis(b, s->n, "i");
  mlc_tir_expr *before = s->sorted ? uniq_less(b, s, i, idx[0])
                                   : bin(c, MLC_TIR_LT, i, mlc_te_load(b, s->first, 1, idx));
  mlc_tir_expr *hit = and2(c, uniq_is_first(b, s, i), before);
  return mlc_te_sum(b, sel(c, hit, i64(c, 1), i64(c, 0)), &i, 1);
}

/* index[p] = the first slice of rank p; counts[p] = the slices of rank p */
static mlc_tir_expr *uniq_index_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  uniq_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *i = mlc_te_reduce_axis(b, s->n, "i");
  mlc_tir_expr *hit = bin(c, MLC_TIR_EQ, mlc_te_load(b, s->rank, 1, &i), idx[0]);
  return mlc_te_min(b, sel(c, hit, i, s->n), &i, 1);
}

static mlc_tir_expr *uniq_counts_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  uniq_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *i = mlc_te_reduce_axis(b, s->n, "i");
  mlc_tir_expr *hit = bin(c, MLC_TIR_EQ, mlc_te_load(b, s->rank, 1, &i), idx[0]);
  return mlc_te_sum(b, sel(c, hit, i64(c, 1), i64(c, 0)), &i, 1);
}

static mlc_tir_expr *uniq_values_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  uniq_ctx *s = user;
  mlc_lg_call *c = s->c;
  mlc_tir_expr *j = mlc_te_load(b, s->index, 1, &idx[1]);
  j = clamp(c, j, i64(c, 0), sub(c, s->n, i64(c, 1)));
  mlc_tir_expr *xi[3] = {idx[0], j, idx[2]};
  return mlc_lg_arg_load(c, 0, xi);
}

/* The stages every unique kernel shares: diff (slices of more than one
** element) and first. */
static mlc_status uniq_common(uniq_ctx *s) {
  mlc_lg_call *c = s->c;
  const mlc_type *x = &c->arg_types[0];
  s->n = adim(c, 0, 1);
  s->k = mul(c, adim(c, 0, 0), adim(c, 0, 2));
  s->K = x->dims[0] >= 0 && x->dims[2] >= 0 ? x->dims[0] * x->dims[2] : -1;
  s->sorted = mlc_lg_int(c, "sorted", 1) != 0;
  mlc_tir_expr *nn[2] = {s->n, s->n};
  if (s->K != 1) MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_unique_diff", 2, nn, NULL, uniq_diff_body, s, &s->diff));
  return mlc_te_compute(c->b, "T_unique_first", 1, nn, NULL, uniq_first_body, s, &s->first);
}

/* y = [number of distinct slices] */
mlc_status mlc_lg_unique_count(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_ranks(c));
  uniq_ctx s;
  memset(&s, 0, sizeof s);
  s.c = c;
  if (c->arg_types[0].rank != 3) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "input rank is not 3");
  MLC_RETURN_IF_ERROR(uniq_common(&s));
  return stage(c, 0, "T_unique_count", uniq_count_body, &s, out);
}

/* y, indices, inverse, counts of the distinct slices */
mlc_status mlc_lg_unique(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_ranks(c));
  uniq_ctx s;
  memset(&s, 0, sizeof s);
  s.c = c;
  if (c->arg_types[0].rank != 3 || c->nouts != 4) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "malformed call");
  MLC_RETURN_IF_ERROR(uniq_common(&s));
  MLC_RETURN_IF_ERROR(stage(c, 2, "T_unique_rank", uniq_rank_body, &s, &s.rank));
  MLC_RETURN_IF_ERROR(stage(c, 1, "T_unique_indices", uniq_index_body, &s, &s.index));
  MLC_RETURN_IF_ERROR(stage(c, 3, "T_unique_counts", uniq_counts_body, &s, &out[3]));
  MLC_RETURN_IF_ERROR(stage(c, 0, "T_unique", uniq_values_body, &s, &out[0]));
  out[1] = s.index;
  out[2] = s.rank;
  return NULL;
}
