/*
** toy_model.c: a hand-written model for the runtime's tests, in the form
** the compiler emits: kernels following rt_abi.h, the function table
** (mlc_model_kernels) and the weights.  Its description is written as
** structs in toy_blob_gen.c, which the build runs to encode it into the
** blob toy_blob.S embeds (rt_blob.h), as the archiver does for a compiled
** model.  Linked with libmlcrt into libtoy_model.so (and, with the blob
** toy_blob_gen writes for --bad-abi, into libtoy_badabi.so, whose
** description claims another version).
**
** Inputs  x: float32[batch, 4], offset: float32[batch]
** Weights bias: float32[4] at 0, scale: float32[] at 64
** Steps   0 kernel fused_add_bias_relu: y = relu(x + bias + offset[:, None])
**           (parallel over rows; each row runs a nested parallel loop)
**         1 extern "toy.scale":          z = y * scale  (fails on |z| > 1e30)
**         2 kernel row_sum:              t = sum(z, axis 1)  (uses a workspace)
**         3 kernel add_imm:              rowsum = t + 10  (an immediate arg)
** Outputs z: float32[batch, 4], rowsum: float32[batch]
** y and t share arena storage 0 (y is dead once z exists).
*/
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/rt_abi.h"
#include "runtime/rt_blob.h"

#define COLS 4

/* Checks the argument codes; 0 ok. */
static int check_args(const int32_t *codes, int32_t nargs, const char *want, mlc_rt_ctx *ctx,
                      const char *who) {
  int32_t n = (int32_t)strlen(want);
  if (nargs != n) return ctx->api->set_error(ctx, who);
  for (int32_t i = 0; i < n; i++)
    if (codes[i] != (want[i] == 'T' ? MLC_ARG_TENSOR : MLC_ARG_INT))
      return ctx->api->set_error(ctx, who);
  return 0;
}

static float *fdata(void *arg) {
  DLTensor *t = arg;
  return (float *)((char *)t->data + t->byte_offset);
}

/* ---- step 0: y = relu(x + bias + offset) -------------------------------- */

typedef struct row_job {
  mlc_rt_ctx *ctx;
  const float *x, *bias, *offset;
  float *y;
  int64_t row;
} row_job;

static int col_body(int64_t begin, int64_t end, void *closure) {
  row_job *j = closure;
  for (int64_t c = begin; c < end; c++) {
    float v = j->x[j->row * COLS + c] + j->bias[c] + j->offset[j->row];
    j->y[j->row * COLS + c] = v > 0 ? v : 0;
  }
  return 0;
}

static int row_body(int64_t begin, int64_t end, void *closure) {
  const row_job *base = closure;
  for (int64_t r = begin; r < end; r++) {
    row_job j = *base;
    j.row = r;
    /* Nested: runs serially on this thread. */
    int rc = j.ctx->api->parallel_for(j.ctx, COLS, col_body, &j);
    if (rc) return rc;
  }
  return 0;
}

static int fused_add_bias_relu(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  if (check_args(codes, nargs, "TTTTI", ctx, "fused_add_bias_relu: bad arguments")) return -1;
  int64_t batch = *(const int64_t *)args[4];
  if (((DLTensor *)args[0])->shape[0] != batch)
    return ctx->api->set_error(ctx, "fused_add_bias_relu: batch mismatch");
  row_job j = {ctx, fdata(args[0]), fdata(args[1]), fdata(args[2]), fdata(args[3]), 0};
  return ctx->api->parallel_for(ctx, batch, row_body, &j);
}

/* ---- step 1 (extern "toy.scale"): z = y * scale ------------------------- */

typedef struct scale_job {
  const float *y;
  float *z;
  float scale;
  mlc_rt_ctx *ctx;
} scale_job;

static int scale_body(int64_t begin, int64_t end, void *closure) {
  scale_job *j = closure;
  for (int64_t i = begin; i < end; i++) {
    j->z[i] = j->y[i] * j->scale;
    if (!(fabsf(j->z[i]) <= 1e30f)) return j->ctx->api->set_error(j->ctx, "toy.scale: value too large");
  }
  return 0;
}

static int toy_scale(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  if (check_args(codes, nargs, "TTT", ctx, "toy.scale: bad arguments")) return -1;
  DLTensor *y = args[0];
  scale_job j = {fdata(args[0]), fdata(args[2]), *fdata(args[1]), ctx};
  return ctx->api->parallel_for(ctx, y->shape[0] * COLS, scale_body, &j);
}

static int toy_unused(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  return ctx->api->set_error(ctx, "toy.unused: never called");
}

/* ---- step 2: t = sum(z, axis 1), through a workspace -------------------- */

static int row_sum(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  if (check_args(codes, nargs, "TT", ctx, "row_sum: bad arguments")) return -1;
  DLTensor *z = args[0];
  int64_t batch = z->shape[0];
  float *ws = ctx->api->workspace_alloc(ctx, (uint64_t)batch * sizeof(float));
  if (!ws) return ctx->api->set_error(ctx, "row_sum: no workspace");
  if ((uintptr_t)ws % 64 != 0) {
    ctx->api->workspace_free(ctx, ws);
    return ctx->api->set_error(ctx, "row_sum: workspace not aligned");
  }
  const float *zd = fdata(z);
  for (int64_t r = 0; r < batch; r++) {
    float s = 0;
    for (int c = 0; c < COLS; c++) s += zd[r * COLS + c];
    ws[r] = s;
  }
  memcpy(fdata(args[1]), ws, (size_t)batch * sizeof(float));
  ctx->api->workspace_free(ctx, ws);
  return 0;
}

/* ---- step 3: rowsum = t + k --------------------------------------------- */

static int add_imm(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  if (check_args(codes, nargs, "TIT", ctx, "add_imm: bad arguments")) return -1;
  DLTensor *t = args[0];
  float k = (float)*(const int64_t *)args[1];
  const float *in = fdata(t);
  float *out = fdata(args[2]);
  for (int64_t i = 0; i < t->shape[0]; i++) out[i] = in[i] + k;
  return 0;
}

/* ---- what the description refers to ------------------------------------ */

/* The function table; toy_blob_gen.c names these by index (TOY_FN_*). */
const mlc_kernel_fn mlc_model_kernels[] = {fused_add_bias_relu, row_sum, add_imm, toy_unused,
                                           toy_scale, NULL};
const int32_t mlc_model_nkernels = 5;
/* a CPU model: no device code */
const char mlc_model_devcode[1] = "";
const uint64_t mlc_model_devcode_size = 0;

const uint8_t mlc_weights_blob[128] __attribute__((aligned(64))) = {
    /* bias = {0.5, -1, 0, 2} (little-endian float32) */
    0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x80, 0xbf, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,
    [64] = 0x00, 0x00, 0x00, 0x40, /* scale = 2.0 */
};
