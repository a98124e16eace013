/*
** rt_cublas.c: the cuBLAS provider's run-time wrapper "cublas.matmul"
** (extern.h) for CUDA models, in the kernel calling convention of
** mlc/mlc_extern.h.  Linked into a model.so (as libmlcext_cublas.a) only
** when the dispatcher sent a call to cuBLAS.  It takes exactly the
** arguments of openblas.matmul (A [..., M, K], B [..., K, N] -> Y [..., M,
** N], float32, batch dims broadcast as numpy does), so one matcher serves
** both; here every tensor is in device memory (rt_cuda.h).
**
** Loading.  The model does not link cuBLAS: the first call loads
** libcublas.so.13 (else libcublas.so; MLC_CUBLAS_LIBRARY names another)
** and libcuda.so.1 with dlopen, once per process, and takes each function
** through a pointer of the header's type.  A library or function that is
** missing is an error of every call, naming it.
**
** Handle.  Each session has its own cuBLAS handle, created at its first
** call and kept in the session's slot MLC_RT_SLOT_CUBLAS (destroyed when
** the session is freed); every call sets its stream to the session's.
** Its math mode is strict float32 (CUBLAS_DEFAULT_MATH), so results match a
** CPU reference; MLC_CUDA_TF32=1 in the environment when cuBLAS is loaded
** allows TF32 tensor cores (CUBLAS_TF32_TENSOR_OP_MATH).
**
** Row-major through column-major cuBLAS: Y = A B is Y^T = B^T A^T, which
** is what cuBLAS computes on the same memory with the operands swapped.
** Batches: the trailing batch dims along which both A's and B's offsets
** are a fixed stride apart (0 for a broadcast operand) make one
** cublasSgemmStridedBatched; the leading rest, if any, is a loop on the
** host.  When B is shared by those batches and A's are contiguous, they
** are one tall GEMM of M x batches rows.  K = 0 writes zeros.
*/
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cublas_v2.h>

#include "extern/rt_cuda.h"
#include "extern/rt_ext.h"

#define CUBLAS_FNS(X)      \
  X(cublasCreate_v2)       \
  X(cublasDestroy_v2)      \
  X(cublasGetStatusName)   \
  X(cublasGetStatusString) \
  X(cublasSetMathMode)     \
  X(cublasSetStream_v2)    \
  X(cublasSgemmStridedBatched) \
  X(cublasSgemm_v2)

#define X(f) static __typeof__(f) *p_##f;
CUBLAS_FNS(X)
#undef X

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded, use_tf32;
static mlc_ext_cu cu;
static char load_error[512];

static void load(void) {
  static const char *const names[] = {"libcublas.so.13", "libcublas.so", NULL};
#define X(f) {#f, &p_##f, sizeof p_##f},
  const mlc_ext_sym syms[] = {CUBLAS_FNS(X)};
#undef X
  if (mlc_ext_cuda_load("MLC_CUBLAS_LIBRARY", names, syms, sizeof syms / sizeof *syms, NULL, 0, "cuBLAS", &cu,
                        load_error, sizeof load_error))
    return;
  use_tf32 = mlc_ext_cuda_tf32();
  loaded = 1;
}

/* Errors name the function: "cublas.FN: ..." (rt_util.h). */
#define fail(ctx, fn, ...) mlc_ext_fail((ctx), "cublas", (fn), __VA_ARGS__)

/* "CUBLAS_STATUS_...: what it means" into |buf|. */
static const char *status_str(cublasStatus_t s, char *buf, size_t n) {
  const char *name = p_cublasGetStatusName ? p_cublasGetStatusName(s) : NULL;
  const char *what = p_cublasGetStatusString ? p_cublasGetStatusString(s) : NULL;
  if (name && what) snprintf(buf, n, "%s (%s)", name, what);
  else snprintf(buf, n, "cublasStatus_t %d", (int)s);
  return buf;
}

/* Records "cublas.FN: CALL: STATUS"; returns -1. */
static int fail_status(mlc_rt_ctx *ctx, const char *fn, const char *call, cublasStatus_t s) {
  char buf[160];
  return fail(ctx, fn, "%s: %s", call, status_str(s, buf, sizeof buf));
}

static int ready(mlc_rt_ctx *ctx, const char *fn) {
  pthread_once(&load_once, load);
  return loaded ? 1 : (fail(ctx, fn, "%s", load_error[0] ? load_error : "cuBLAS is not available"), 0);
}

/* The session's handle (slot MLC_RT_SLOT_CUBLAS) destroyed with it. */
static void handle_fini(void *h) {
  if (h && p_cublasDestroy_v2) p_cublasDestroy_v2((cublasHandle_t)h);
}

/* The session's cuBLAS handle, made at its first call, on |stream|; NULL
** after recording the error. */
static cublasHandle_t session_handle(mlc_rt_ctx *ctx, const char *fn, void *stream) {
  void **slot = ctx->api->session_slot ? ctx->api->session_slot(ctx, MLC_RT_SLOT_CUBLAS, handle_fini) : NULL;
  if (!slot) {
    fail(ctx, fn, "the runtime gives no session slot for the cuBLAS handle");
    return NULL;
  }
  cublasStatus_t s;
  if (!*slot) {
    cublasHandle_t h = NULL;
    if ((s = p_cublasCreate_v2(&h)) != CUBLAS_STATUS_SUCCESS) {
      fail_status(ctx, fn, "cublasCreate_v2", s);
      return NULL;
    }
    s = p_cublasSetMathMode(h, use_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    if (s != CUBLAS_STATUS_SUCCESS) {
      p_cublasDestroy_v2(h);
      fail_status(ctx, fn, "cublasSetMathMode", s);
      return NULL;
    }
    *slot = h;
  }
  cublasHandle_t h = *slot;
  if ((s = p_cublasSetStream_v2(h, (cudaStream_t)stream)) != CUBLAS_STATUS_SUCCESS) {
    fail_status(ctx, fn, "cublasSetStream_v2", s);
    return NULL;
  }
  return h;
}

/* ---- matmul ------------------------------------------------------------- */


static const float *fptr(CUdeviceptr base, int64_t off) {
  return (const float *)(uintptr_t)(base + (CUdeviceptr)off * sizeof(float));
}

int mlc_ext_cublas_matmul(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  void *stream = mlc_ext_cuda_stream(ctx);
  if (!stream) return fail(ctx, "matmul", "no CUDA stream: cuBLAS runs only in a CUDA model's session");
  if (nargs != 3 || mlc_ext_ntensors(codes, nargs) != 3) return fail(ctx, "matmul", "takes A, B and Y (%d arguments)", nargs);
  const DLTensor *A = args[0], *B = args[1], *Y = args[2];
  if (!mlc_ext_cuda_f32(A, -1) || !mlc_ext_cuda_f32(B, -1) || !mlc_ext_cuda_f32(Y, -1))
    return fail(ctx, "matmul", "A, B and Y must be compact float32 tensors in CUDA device memory");
  mlc_ext_mm shp;
  if (mlc_ext_matmul_shapes(ctx, "cublas", A, B, Y, &shp)) return -1;
  int64_t m = shp.m, n = shp.n, k = shp.k;
  CUdeviceptr a = mlc_ext_cuda_ptr(A), b = mlc_ext_cuda_ptr(B), y = mlc_ext_cuda_ptr(Y);
  size_t yb = sizeof(float) * (size_t)mlc_ext_numel(Y);
  if (mlc_ext_cuda_overlap(y, yb, a, sizeof(float) * (size_t)mlc_ext_numel(A))) return fail(ctx, "matmul", "Y overlaps A");
  if (mlc_ext_cuda_overlap(y, yb, b, sizeof(float) * (size_t)mlc_ext_numel(B))) return fail(ctx, "matmul", "Y overlaps B");
  if (mlc_ext_numel(Y) == 0) return 0;
  if (!ready(ctx, "matmul")) return -1;
  char buf[160];
  if (k == 0) {
    CUresult r = cu.memset_d32_async(y, 0, (size_t)mlc_ext_numel(Y), (CUstream)stream);
    return r == CUDA_SUCCESS ? 0 : fail(ctx, "matmul", "cuMemsetD32Async: %s", mlc_ext_cu_error(&cu, r, buf, sizeof buf));
  }
  cublasHandle_t h = session_handle(ctx, "matmul", stream);
  if (!h) return -1;
  mlc_ext_mm_plan pl;
  mlc_ext_mm_plan_make(&shp, Y, &pl);
  int64_t inner = pl.inner, sa = pl.sa, sb = pl.sb;
  int tall = pl.tall;
  if (!tall && inner > INT_MAX) return fail(ctx, "matmul", "%lld batches", (long long)inner);
  const float one = 1.0f, zero = 0.0f;
  for (int64_t o = 0; o < pl.outer; o++) {
    int64_t ao, bo;
    mlc_ext_mm_outer(&shp, Y, &pl, o, &ao, &bo);
    float *yo = (float *)(uintptr_t)fptr(y, o * inner * m * n);
    cublasStatus_t s;
    const char *call;
    if (inner == 1 || tall) {
      call = "cublasSgemm_v2";
      s = p_cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)(tall ? m * inner : m), (int)k, &one,
                           fptr(b, bo), (int)n, fptr(a, ao), (int)k, &zero, yo, (int)n);
    } else {
      call = "cublasSgemmStridedBatched";
      s = p_cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, fptr(b, bo), (int)n,
                                      (long long)sb, fptr(a, ao), (int)k, (long long)sa, &zero, yo, (int)n,
                                      (long long)(m * n), (int)inner);
    }
    if (s != CUBLAS_STATUS_SUCCESS) return fail_status(ctx, "matmul", call, s);
  }
  return 0;
}
