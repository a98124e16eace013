/*
** rt_util.h: what the providers' run-time wrappers (extern/rt_*.c) share:
** checks of their tensor arguments and the reading of a conv2d call's
** arguments (extern.h), as static functions, since each provider is an
** archive of its own that a model links alone.
*/
#ifndef MLC_EXTERN_RT_UTIL_H
#define MLC_EXTERN_RT_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mlc/mlc_extern.h"

/* Records the error "PROVIDER.FN: message" for the session; returns -1. */
static inline int mlc_ext_fail(mlc_rt_ctx *ctx, const char *provider, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int mlc_ext_fail(mlc_rt_ctx *ctx, const char *provider, const char *fn, const char *fmt, ...) {
  char msg[512];
  int n = snprintf(msg, sizeof msg, "%s.%s: ", provider, fn);
  if (n < 0 || (size_t)n >= sizeof msg) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
  va_end(ap);
  return ctx->api->set_error(ctx, msg);
}

/* |t| is a float32 CPU tensor of rank |rank| (any rank <= 32 when < 0),
** with compact strides (or none) and data unless it is empty. */
static inline int mlc_ext_f32(const DLTensor *t, int rank) {
  if (!t || t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) return 0;
  if (rank >= 0 && t->ndim != rank) return 0;
  if (t->ndim < 0 || t->ndim > 32 || (t->ndim && !t->shape)) return 0;
  int64_t n = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->shape[i] < 0) return 0;
    if (t->strides && t->shape[i] != 1 && t->strides[i] != n) return 0;
    n *= t->shape[i];
  }
  return n == 0 || t->data;
}

static inline float *mlc_ext_data(const DLTensor *t) { return (float *)((char *)t->data + t->byte_offset); }

static inline int64_t mlc_ext_numel(const DLTensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

/* A matmul call's shapes (openblas.matmul, cublas.matmul): Y[.., m, n] =
** A[.., m, k] x B[.., k, n] over |nbatch| batches of Y's |br| batch dims,
** A's and B's element offset per step of batch dim d in astr[d] / bstr[d]
** (0 where that operand broadcasts). */
#define MLC_EXT_MAX_BATCH_RANK 8
typedef struct mlc_ext_mm {
  int64_t m, n, k, nbatch;
  int br;
  int64_t astr[MLC_EXT_MAX_BATCH_RANK], bstr[MLC_EXT_MAX_BATCH_RANK];
} mlc_ext_mm;

/* Checks A, B, Y (ranks, shapes, broadcast) into |mm|; 0, or -1 after
** recording "PROVIDER.matmul: what is wrong". */
static inline int mlc_ext_matmul_shapes(mlc_rt_ctx *ctx, const char *provider, const DLTensor *A, const DLTensor *B,
                                        const DLTensor *Y, mlc_ext_mm *mm) {
  memset(mm, 0, sizeof *mm);
  if (A->ndim < 2 || B->ndim < 2 || Y->ndim < 2 || Y->ndim != (A->ndim > B->ndim ? A->ndim : B->ndim))
    return mlc_ext_fail(ctx, provider, "matmul", "ranks %d x %d -> %d: want both >= 2 and Y of the larger", A->ndim,
                        B->ndim, Y->ndim);
  int64_t m = A->shape[A->ndim - 2], k = A->shape[A->ndim - 1], n = B->shape[B->ndim - 1];
  if (B->shape[B->ndim - 2] != k || Y->shape[Y->ndim - 2] != m || Y->shape[Y->ndim - 1] != n)
    return mlc_ext_fail(ctx, provider, "matmul", "[.., %lld, %lld] x [.., %lld, %lld] -> [.., %lld, %lld]: shapes disagree",
                        (long long)m, (long long)k, (long long)B->shape[B->ndim - 2], (long long)n,
                        (long long)Y->shape[Y->ndim - 2], (long long)Y->shape[Y->ndim - 1]);
  if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff)
    return mlc_ext_fail(ctx, provider, "matmul", "a dimension over %d", 0x7fffffff);
  int br = Y->ndim - 2;
  if (br > MLC_EXT_MAX_BATCH_RANK)
    return mlc_ext_fail(ctx, provider, "matmul", "more than %d batch dims", MLC_EXT_MAX_BATCH_RANK);
  /* batch broadcast: each batch dim of Y from A's and B's (missing or 1) */
  int64_t nbatch = 1, a_s = m * k, b_s = k * n;
  for (int d = br - 1; d >= 0; d--) {
    int da = d - (br - (A->ndim - 2)), db = d - (br - (B->ndim - 2));
    int64_t ea = da >= 0 ? A->shape[da] : 1, eb = db >= 0 ? B->shape[db] : 1, ey = Y->shape[d];
    if ((ea != ey && ea != 1) || (eb != ey && eb != 1))
      return mlc_ext_fail(ctx, provider, "matmul", "batch dim %d: %lld and %lld do not broadcast to %lld", d,
                          (long long)ea, (long long)eb, (long long)ey);
    mm->astr[d] = ea == 1 ? 0 : a_s;
    mm->bstr[d] = eb == 1 ? 0 : b_s;
    if (da >= 0) a_s *= ea;
    if (db >= 0) b_s *= eb;
    nbatch *= ey;
  }
  mm->m = m, mm->n = n, mm->k = k, mm->nbatch = nbatch, mm->br = br;
  return 0;
}

/*
** How a matmul's batches run on a BLAS that has strided-batched GEMMs
** (cublas.matmul, cublaslt.matmul), from the shapes |mm| of
** mlc_ext_matmul_shapes and Y: the trailing batch dims along which A's
** and B's offsets step by fixed strides |sa| and |sb| (0 for an operand
** that broadcasts; dims of extent 1 aside) make |inner| batches of one
** strided-batched call; the leading |d0| batch dims, |outer| batches in
** all, are a loop on the host (mlc_ext_mm_outer gives each one's offsets
** into A and B; Y's is o * inner * m * n).  |tall|: B is the same for the
** inner batches and A's are contiguous, so that they are one GEMM of m *
** inner rows (which fits an int).
*/
typedef struct mlc_ext_mm_plan {
  int64_t inner, outer, sa, sb;
  int d0, tall;
} mlc_ext_mm_plan;

static inline void mlc_ext_mm_plan_make(const mlc_ext_mm *mm, const DLTensor *Y, mlc_ext_mm_plan *p) {
  int64_t inner = 1, sa = -1, sb = -1;
  int d0 = mm->br;
  for (int d = mm->br - 1; d >= 0; d--) {
    if (Y->shape[d] != 1) {
      if (sa < 0) sa = mm->astr[d], sb = mm->bstr[d];
      else if (mm->astr[d] != sa * inner || mm->bstr[d] != sb * inner) break;
      inner *= Y->shape[d];
    }
    d0 = d;
  }
  if (sa < 0) sa = 0, sb = 0;
  p->inner = inner;
  p->outer = inner ? mm->nbatch / inner : 0;
  p->sa = sa;
  p->sb = sb;
  p->d0 = d0;
  p->tall = inner > 1 && sb == 0 && sa == mm->m * mm->k && mm->m * inner <= 0x7fffffff;
}

/* The element offsets into A (*|ao|) and B (*|bo|) of outer batch |o| of |p|. */
static inline void mlc_ext_mm_outer(const mlc_ext_mm *mm, const DLTensor *Y, const mlc_ext_mm_plan *p, int64_t o,
                                    int64_t *ao, int64_t *bo) {
  int64_t rem = o;
  *ao = 0, *bo = 0;
  for (int d = p->d0 - 1; d >= 0; d--) {
    int64_t i = rem % Y->shape[d];
    rem /= Y->shape[d];
    *ao += i * mm->astr[d];
    *bo += i * mm->bstr[d];
  }
}

/* The number of leading tensor arguments; -1 if a tensor follows an int. */
static inline int mlc_ext_ntensors(const int32_t *codes, int32_t nargs) {
  int n = 0;
  while (n < nargs && codes[n] == MLC_ARG_TENSOR) n++;
  for (int i = n; i < nargs; i++)
    if (codes[i] != MLC_ARG_INT) return -1;
  return n;
}

enum { MLC_EXT_RT_NONE = 0, MLC_EXT_RT_RELU = 1, MLC_EXT_RT_CLIP = 2 };

/* A conv2d call, read and checked. */
typedef struct mlc_ext_conv {
  const DLTensor *x, *w, *bias, *res, *y;
  int64_t n, c, h, wd, k, kh, kw, oh, ow;
  int64_t dh, dw, groups, pt, pl, pb, pr, sh, sw;
  int act, w_const;
  float lo, hi;
  int64_t at[15]; /* the ints as passed */
} mlc_ext_conv;

/* Reads the conv2d call |args| into |cv|: 0, or -1 with the reason in |msg|. */
static inline int mlc_ext_conv_read(void **args, const int32_t *codes, int32_t nargs, mlc_ext_conv *cv, char *msg,
                                    size_t len) {
  memset(cv, 0, sizeof *cv);
  int nt = mlc_ext_ntensors(codes, nargs);
  if (nt < 3 || nt > 5 || nargs - nt != 15) {
    snprintf(msg, len, "takes X, W, [bias], [residual], Y and 15 ints (%d arguments)", nargs);
    return -1;
  }
  for (int i = 0; i < 15; i++) cv->at[i] = *(const int64_t *)args[nt + i];
  const int64_t *at = cv->at;
  cv->dh = at[0], cv->dw = at[1], cv->groups = at[2], cv->pt = at[3], cv->pl = at[4], cv->pb = at[5],
  cv->pr = at[6], cv->sh = at[7], cv->sw = at[8];
  int64_t has_bias = at[9], has_res = at[10], act = at[11];
  if (nt != 3 + (has_bias != 0) + (has_res != 0)) {
    snprintf(msg, len, "%d tensors for has_bias %lld, has_residual %lld", nt, (long long)has_bias,
             (long long)has_res);
    return -1;
  }
  cv->x = args[0], cv->w = args[1], cv->bias = has_bias ? args[2] : NULL;
  cv->res = has_res ? args[2 + (has_bias != 0)] : NULL, cv->y = args[nt - 1];
  if (!mlc_ext_f32(cv->x, 4) || !mlc_ext_f32(cv->w, 4) || !mlc_ext_f32(cv->y, 4) ||
      (cv->bias && !mlc_ext_f32(cv->bias, 1)) || (cv->res && !mlc_ext_f32(cv->res, 4))) {
    snprintf(msg, len, "X, W, Y (and residual) must be compact float32 tensors of rank 4, bias rank 1");
    return -1;
  }
  if (cv->dh < 1 || cv->dw < 1 || cv->sh < 1 || cv->sw < 1 || cv->groups < 1 || cv->pt < 0 || cv->pl < 0 ||
      cv->pb < 0 || cv->pr < 0 || act < 0 || act > MLC_EXT_RT_CLIP) {
    snprintf(msg, len, "bad attributes (dilations %lld %lld, strides %lld %lld, groups %lld, act %lld)",
             (long long)cv->dh, (long long)cv->dw, (long long)cv->sh, (long long)cv->sw, (long long)cv->groups,
             (long long)act);
    return -1;
  }
  cv->act = (int)act;
  cv->w_const = at[14] != 0;
  uint32_t lo = (uint32_t)at[12], hi = (uint32_t)at[13];
  memcpy(&cv->lo, &lo, sizeof cv->lo);
  memcpy(&cv->hi, &hi, sizeof cv->hi);
  const DLTensor *X = cv->x, *W = cv->w, *Y = cv->y;
  cv->n = X->shape[0], cv->c = X->shape[1], cv->h = X->shape[2], cv->wd = X->shape[3];
  cv->k = W->shape[0], cv->kh = W->shape[2], cv->kw = W->shape[3];
  if (cv->c % cv->groups || cv->k % cv->groups || W->shape[1] != cv->c / cv->groups) {
    snprintf(msg, len, "X has %lld channels, W is [%lld, %lld, ..], groups %lld: they disagree", (long long)cv->c,
             (long long)cv->k, (long long)W->shape[1], (long long)cv->groups);
    return -1;
  }
  int64_t eh = (cv->kh - 1) * cv->dh + 1, ew = (cv->kw - 1) * cv->dw + 1;
  cv->oh = cv->h + cv->pt + cv->pb >= eh ? (cv->h + cv->pt + cv->pb - eh) / cv->sh + 1 : 0;
  cv->ow = cv->wd + cv->pl + cv->pr >= ew ? (cv->wd + cv->pl + cv->pr - ew) / cv->sw + 1 : 0;
  if (Y->shape[0] != cv->n || Y->shape[1] != cv->k || Y->shape[2] != cv->oh || Y->shape[3] != cv->ow) {
    snprintf(msg, len, "Y is [%lld, %lld, %lld, %lld], the convolution gives [%lld, %lld, %lld, %lld]",
             (long long)Y->shape[0], (long long)Y->shape[1], (long long)Y->shape[2], (long long)Y->shape[3],
             (long long)cv->n, (long long)cv->k, (long long)cv->oh, (long long)cv->ow);
    return -1;
  }
  if (cv->bias && cv->bias->shape[0] != cv->k) {
    snprintf(msg, len, "bias has %lld values for %lld filters", (long long)cv->bias->shape[0], (long long)cv->k);
    return -1;
  }
  for (int d = 0; cv->res && d < 4; d++)
    if (cv->res->shape[d] != Y->shape[d]) {
      snprintf(msg, len, "the residual's shape is not Y's");
      return -1;
    }
  return 0;
}

#endif /* MLC_EXTERN_RT_UTIL_H */
