/*
** myops.c: a plugin library for the tests (mlc/mlc_extern.h), as a user
** would write one: "myops.linear" implements matmul of 2-D float32
** matrices (its supports() refuses any other rank) and "myops.relu"
** implements relu on float32 of any shape.  Built as libmyops.so.
*/
#include <stdint.h>
#include <stdio.h>

#include "mlc/mlc_extern.h"

static int f32(const DLTensor *t) {
  return t && t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1 && !t->strides;
}

static float *data(const DLTensor *t) { return (float *)((char *)t->data + t->byte_offset); }

static int64_t numel(const DLTensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

/* Y [M, N] = A [M, K] x B [K, N]. */
static int linear(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  if (nargs != 3 || codes[0] != MLC_ARG_TENSOR || codes[1] != MLC_ARG_TENSOR || codes[2] != MLC_ARG_TENSOR)
    return ctx->api->set_error(ctx, "myops.linear: takes A, B and Y");
  const DLTensor *a = args[0], *b = args[1], *y = args[2];
  if (!f32(a) || !f32(b) || !f32(y) || a->ndim != 2 || b->ndim != 2 || y->ndim != 2 ||
      a->shape[1] != b->shape[0] || y->shape[0] != a->shape[0] || y->shape[1] != b->shape[1])
    return ctx->api->set_error(ctx, "myops.linear: wants float32 [M, K] x [K, N] -> [M, N]");
  int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
  const float *pa = data(a), *pb = data(b);
  float *py = data(y);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float s = 0;
      for (int64_t q = 0; q < k; q++) s += pa[i * k + q] * pb[q * n + j];
      py[i * n + j] = s;
    }
  return 0;
}

static int linear_supports(const DLTensor *t, int32_t nargs, const int64_t *attrs, int32_t nattrs) {
  (void)attrs;
  return nargs == 2 && nattrs == 0 && t[0].ndim == 2 && t[1].ndim == 2 && f32(&t[0]) && f32(&t[1]);
}

static int relu(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  if (nargs != 2 || codes[0] != MLC_ARG_TENSOR || codes[1] != MLC_ARG_TENSOR)
    return ctx->api->set_error(ctx, "myops.relu: takes X and Y");
  const DLTensor *x = args[0], *y = args[1];
  if (!f32(x) || !f32(y) || numel(x) != numel(y)) return ctx->api->set_error(ctx, "myops.relu: float32 X and Y of one size");
  const float *px = data(x);
  float *py = data(y);
  for (int64_t i = 0; i < numel(x); i++) py[i] = px[i] > 0 ? px[i] : 0;
  return 0;
}

static const mlc_extern_fn fns[] = {
    {"myops.linear", "matmul", linear, linear_supports},
    {"myops.relu", "relu", relu, NULL},
};

static const mlc_extern_plugin plugin = {MLC_EXTERN_PLUGIN_ABI, "myops", 2, fns};

MLC_EXTERN_EXPORT const mlc_extern_plugin *mlc_extern_plugin_v1(void) { return &plugin; }
