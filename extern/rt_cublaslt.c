/*
** rt_cublaslt.c: the cuBLASLt provider's run-time wrapper "cublaslt.matmul"
** (extern.h) for CUDA models, in the kernel calling convention of
** mlc/mlc_extern.h: a matmul with its bias add and relu applied by
** cuBLASLt's epilogue before Y is written.  Linked into a model.so (as
** libmlcext_cublaslt.a) only when the dispatcher sent a call to cuBLASLt.
** Arguments: A [..., M, K], B [..., K, N], [bias, N values along Y's last
** axis: [N] or [1, .., 1, N]], Y [..., M, N], float32 in device memory
** (rt_cuda.h), batch dims broadcast as numpy does; then the ints has_bias
** and act (0 none, 1 relu).  Y = act(A B + bias).
**
** Loading.  The model does not link cuBLASLt: the first call loads
** libcublasLt.so.13 (else libcublasLt.so; MLC_CUBLASLT_LIBRARY names
** another) and libcuda.so.1 with dlopen, once per process, and takes each
** function through a pointer of the header's type.  A library or function
** that is missing, or a cuBLASLt whose major version is not the header's,
** is an error of every call, naming it.
**
** Sessions.  Each session has its own cuBLASLt handle and cache, made at
** its first call and kept in its slot MLC_RT_SLOT_CUBLASLT (freed,
** descriptors and handle, when the session is freed).  A session runs one
** kernel at a time, so the cache has no lock.  An entry holds, for one
** shape (dims, batches, strides, epilogue and the alignment of each
** pointer), the operation and layout descriptors and the algorithm that
** cublasLtMatmulAlgoGetHeuristic chose for them, asked once, with a
** workspace of at most WS_LIMIT bytes; at most CACHE_MAX entries, the
** oldest goes.  Each call takes the algorithm's workspace from the
** session's device workspaces and runs on the session's stream.
**
** Precision.  Float32 is strict by default (CUBLAS_COMPUTE_32F), so results
** match a CPU reference; MLC_CUDA_TF32=1 in the environment when cuBLASLt
** is loaded allows TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32).
**
** Row-major through column-major cuBLASLt: Y = A B is Y^T = B^T A^T, which
** is what cuBLASLt computes on the same memory with the operands swapped
** (its A is our B, N x K with leading dimension N; its B our A, K x M; its
** D our Y, N x M).  The epilogue's bias runs along the rows of D, which
** are Y's last axis, N: the bias of a row-major Y [M, N] along N, as
** wanted.  C is D with beta = 0 (never read).  Batches as cublas.matmul
** (rt_util.h, mlc_ext_mm_plan): one call with strided batches (a stride 0
** for an operand that broadcasts; the bias the same for every batch), a
** tall GEMM of M x batches rows when B is shared, a loop on the host over
** the leading batch dims that strides cannot express.  K = 0: Y is
** act(bias) on every row, computed as a GEMM of K = 1 on zeros (no bias:
** zeros written).
**
** Errors: every argument is checked (counts, float32 in device memory,
** ranks, shapes, the bias's shape, the ints, overlaps of Y with its
** inputs); a cuBLASLt failure is an error naming the function called and
** its status.
*/
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the header declares cublasLtLoggerForceDisable() without (void) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cublasLt.h>
#pragma GCC diagnostic pop

#include "extern/rt_cuda.h"
#include "extern/rt_ext.h"

#define CUBLASLT_FNS(X)                 \
  X(cublasLtCreate)                     \
  X(cublasLtDestroy)                    \
  X(cublasLtGetStatusName)              \
  X(cublasLtGetStatusString)            \
  X(cublasLtGetVersion)                 \
  X(cublasLtMatmul)                     \
  X(cublasLtMatmulAlgoGetHeuristic)     \
  X(cublasLtMatmulDescCreate)           \
  X(cublasLtMatmulDescDestroy)          \
  X(cublasLtMatmulDescSetAttribute)     \
  X(cublasLtMatmulPreferenceCreate)     \
  X(cublasLtMatmulPreferenceDestroy)    \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatrixLayoutCreate)         \
  X(cublasLtMatrixLayoutDestroy)        \
  X(cublasLtMatrixLayoutSetAttribute)

#define X(f) static __typeof__(f) *p_##f;
CUBLASLT_FNS(X)
#undef X

/* Cached entries per session; the workspace an algorithm may take. */
#define CACHE_MAX 256
#define WS_LIMIT ((uint64_t)32 << 20)

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded, use_tf32;
static mlc_ext_cu cu;
static char load_error[512];

static void load(void) {
  static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so", NULL};
#define X(f) {#f, &p_##f, sizeof p_##f},
  const mlc_ext_sym syms[] = {CUBLASLT_FNS(X)};
#undef X
  if (mlc_ext_cuda_load("MLC_CUBLASLT_LIBRARY", names, syms, sizeof syms / sizeof *syms, &p_cublasLtGetVersion,
                        CUBLAS_VER_MAJOR, "cuBLASLt", &cu, load_error, sizeof load_error))
    return;
  use_tf32 = mlc_ext_cuda_tf32();
  loaded = 1;
}

/* ---- errors ------------------------------------------------------------- */

/* Errors name the function: "cublaslt.FN: ..." (rt_util.h). */
#define fail(ctx, fn, ...) mlc_ext_fail((ctx), "cublaslt", (fn), __VA_ARGS__)

/* Records "cublaslt.FN: CALL: CUBLAS_STATUS_... (what it means)"; -1. */
static int fail_status(mlc_rt_ctx *ctx, const char *fn, const char *call, cublasStatus_t s) {
  const char *name = p_cublasLtGetStatusName ? p_cublasLtGetStatusName(s) : NULL;
  const char *what = p_cublasLtGetStatusString ? p_cublasLtGetStatusString(s) : NULL;
  if (name && what) return fail(ctx, fn, "%s: %s (%s)", call, name, what);
  return fail(ctx, fn, "%s: cublasStatus_t %d", call, (int)s);
}

/* Runs a cuBLASLt call when |st| is still success; on failure, names it in |what|. */
#define CK(fn, ...)                                                                          \
  do {                                                                                       \
    if (st == CUBLAS_STATUS_SUCCESS && (st = p_##fn(__VA_ARGS__)) != CUBLAS_STATUS_SUCCESS) \
      what = #fn;                                                                            \
  } while (0)

static int ready(mlc_rt_ctx *ctx, const char *fn) {
  pthread_once(&load_once, load);
  return loaded ? 1 : (fail(ctx, fn, "%s", load_error[0] ? load_error : "cuBLASLt is not available"), 0);
}

/* ---- the session: handle and cache ------------------------------------- */

/* What an entry is made for: the GEMM cuBLASLt runs (its m, n, k are N,
** rows of Y, K), its batches and strides, epilogue, and the alignment of
** each pointer, which the heuristic's choice depends on. */
enum { KEY_LEN = 12 };

typedef struct entry entry;
struct entry {
  entry *next;
  int64_t key[KEY_LEN];
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, ld; /* cuBLASLt's A (our B), B (our A), C and D (Y) */
  cublasLtMatmulAlgo_t algo;
  size_t ws_bytes;
};

typedef struct sess {
  cublasLtHandle_t h;
  entry *head;
  int n;
} sess;

static void entry_free(entry *e) {
  if (!e) return;
  if (e->la) p_cublasLtMatrixLayoutDestroy(e->la);
  if (e->lb) p_cublasLtMatrixLayoutDestroy(e->lb);
  if (e->ld) p_cublasLtMatrixLayoutDestroy(e->ld);
  if (e->op) p_cublasLtMatmulDescDestroy(e->op);
  free(e);
}

/* The session's slot's finalizer: its entries, then the handle. */
static void sess_fini(void *p) {
  sess *s = p;
  if (!s) return;
  while (s->head) {
    entry *e = s->head;
    s->head = e->next;
    entry_free(e);
  }
  if (s->h) p_cublasLtDestroy(s->h);
  free(s);
}

/* The session's handle and cache, made at its first call; NULL after
** recording the error. */
static sess *session(mlc_rt_ctx *ctx, const char *fn) {
  void **slot = ctx->api->session_slot ? ctx->api->session_slot(ctx, MLC_RT_SLOT_CUBLASLT, sess_fini) : NULL;
  if (!slot) {
    fail(ctx, fn, "the runtime gives no session slot for the cuBLASLt handle");
    return NULL;
  }
  if (!*slot) {
    sess *s = calloc(1, sizeof *s);
    if (!s) {
      fail(ctx, fn, "out of memory");
      return NULL;
    }
    cublasStatus_t st = p_cublasLtCreate(&s->h);
    if (st != CUBLAS_STATUS_SUCCESS) {
      s->h = NULL;
      sess_fini(s);
      fail_status(ctx, fn, "cublasLtCreate", st);
      return NULL;
    }
    *slot = s;
  }
  return *slot;
}

static entry *cache_find(sess *s, const int64_t *key) {
  for (entry *e = s->head; e; e = e->next)
    if (memcmp(e->key, key, sizeof e->key) == 0) return e;
  return NULL;
}

/* Adds |e| in front; past CACHE_MAX the oldest entry goes. */
static void cache_add(sess *s, entry *e) {
  e->next = s->head;
  s->head = e;
  if (++s->n <= CACHE_MAX) return;
  entry **pp = &s->head;
  while ((*pp)->next) pp = &(*pp)->next;
  entry_free(*pp);
  *pp = NULL;
  s->n--;
}

/* ---- one GEMM ------------------------------------------------------------ */

/* A GEMM in cuBLASLt's column-major terms: D [n x m] (ld n) = act(A [n x k]
** (ld n) B [k x m] (ld k) + bias [n]) over |batches| batches whose A, B and
** D are |sa|, |sb|, |sd| elements apart. */
typedef struct gemm {
  int64_t n, m, k, batches, sa, sb, sd;
  int act, has_bias;
} gemm;

/* The largest power of two (up to 256) that divides |addr| and each of
** |offs| (|noffs| byte offsets). */
static int64_t align_of(uint64_t addr, const uint64_t *offs, int noffs) {
  uint64_t x = addr | 256;
  for (int i = 0; i < noffs; i++) x |= offs[i];
  return (int64_t)(x & (~x + 1));
}

static cublasLtEpilogue_t epilogue(const gemm *g) {
  if (g->has_bias) return g->act ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  return g->act ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT;
}

/* Makes a column-major float32 layout rows x cols (leading dimension
** |ld|) with |batches| batches |stride| elements apart. */
static cublasStatus_t layout(cublasLtMatrixLayout_t *l, int64_t rows, int64_t cols, int64_t ld, int64_t batches,
                             int64_t stride, const char **whatp) {
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  const char *what = *whatp;
  CK(cublasLtMatrixLayoutCreate, l, CUDA_R_32F, (uint64_t)rows, (uint64_t)cols, ld);
  if (batches > 1) {
    int32_t count = (int32_t)batches;
    int64_t off = stride;
    CK(cublasLtMatrixLayoutSetAttribute, *l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
    CK(cublasLtMatrixLayoutSetAttribute, *l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &off, sizeof off);
  }
  *whatp = what;
  return st;
}

/*
** Builds entry |e| for |g|: the operation (compute type, transposes, the
** epilogue; the bias pointer |bias|, whose alignment the heuristic reads),
** the layouts, and the algorithm the heuristic puts first among those
** whose workspace fits WS_LIMIT, asked with the pointers' alignments
** |al| (A, B, D: cuBLASLt's operands).  0, or -1 after recording the error.
*/
static int entry_build(mlc_rt_ctx *ctx, sess *s, entry *e, const gemm *g, const void *bias, const int64_t al[3]) {
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  const char *what = "";
  cublasLtMatmulPreference_t pref = NULL;
  int32_t trans = CUBLAS_OP_N;
  uint32_t epi = (uint32_t)epilogue(g);
  CK(cublasLtMatmulDescCreate, &e->op, use_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F);
  CK(cublasLtMatmulDescSetAttribute, e->op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans);
  CK(cublasLtMatmulDescSetAttribute, e->op, CUBLASLT_MATMUL_DESC_TRANSB, &trans, sizeof trans);
  CK(cublasLtMatmulDescSetAttribute, e->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
  if (g->has_bias) {
    int32_t bt = CUDA_R_32F;
    int64_t bstride = 0; /* one bias for every batch */
    CK(cublasLtMatmulDescSetAttribute, e->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
    CK(cublasLtMatmulDescSetAttribute, e->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    CK(cublasLtMatmulDescSetAttribute, e->op, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bstride, sizeof bstride);
  }
  if (st == CUBLAS_STATUS_SUCCESS) st = layout(&e->la, g->n, g->k, g->n, g->batches, g->sa, &what);
  if (st == CUBLAS_STATUS_SUCCESS) st = layout(&e->lb, g->k, g->m, g->k, g->batches, g->sb, &what);
  if (st == CUBLAS_STATUS_SUCCESS) st = layout(&e->ld, g->n, g->m, g->n, g->batches, g->sd, &what);
  CK(cublasLtMatmulPreferenceCreate, &pref);
  uint64_t ws_max = WS_LIMIT;
  uint32_t aa = (uint32_t)al[0], ab = (uint32_t)al[1], ad = (uint32_t)al[2];
  CK(cublasLtMatmulPreferenceSetAttribute, pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_max, sizeof ws_max);
  CK(cublasLtMatmulPreferenceSetAttribute, pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &aa, sizeof aa);
  CK(cublasLtMatmulPreferenceSetAttribute, pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &ab, sizeof ab);
  CK(cublasLtMatmulPreferenceSetAttribute, pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &ad, sizeof ad);
  CK(cublasLtMatmulPreferenceSetAttribute, pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &ad, sizeof ad);
  cublasLtMatmulHeuristicResult_t res[8];
  int got = 0, at = -1;
  memset(res, 0, sizeof res);
  CK(cublasLtMatmulAlgoGetHeuristic, s->h, e->op, e->la, e->lb, e->ld, e->ld, pref, 8, res, &got);
  if (pref) p_cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS) return fail_status(ctx, "matmul", what, st);
  for (int i = 0; i < got && i < 8 && at < 0; i++)
    if (res[i].state == CUBLAS_STATUS_SUCCESS && res[i].workspaceSize <= WS_LIMIT) at = i;
  if (at < 0)
    return fail(ctx, "matmul",
                "cublasLtMatmulAlgoGetHeuristic: no algorithm for a GEMM of %lld x %lld x %lld, %lld batches, "
                "epilogue %u",
                (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->batches, epi);
  e->algo = res[at].algo;
  e->ws_bytes = res[at].workspaceSize;
  return 0;
}

/* Runs |g| on |stream| for each of the |nptr| (A, B, D) pointer triples in
** |ptr| (one per outer batch) with the bias |bias|.  0, or -1 after
** recording the error. */
static int run_gemm(mlc_rt_ctx *ctx, sess *s, const gemm *g, CUdeviceptr (*ptr)[3], int64_t nptr, const void *bias,
                    void *stream, const int64_t al[3], int64_t bias_al) {
  int64_t key[KEY_LEN] = {g->n, g->m, g->k, g->batches, g->sa, g->sb, g->sd, (int64_t)epilogue(g),
                          al[0], al[1], al[2], bias_al};
  entry *e = cache_find(s, key);
  if (!e) {
    if (!(e = calloc(1, sizeof *e))) return fail(ctx, "matmul", "out of memory");
    memcpy(e->key, key, sizeof key);
    if (entry_build(ctx, s, e, g, bias, al)) {
      entry_free(e);
      return -1;
    }
    cache_add(s, e);
  }
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  const char *what = "";
  /* this call's bias: an entry serves every bias of its alignment */
  if (g->has_bias) CK(cublasLtMatmulDescSetAttribute, e->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
  if (st != CUBLAS_STATUS_SUCCESS) return fail_status(ctx, "matmul", what, st);
  void *ws = e->ws_bytes ? ctx->api->workspace_alloc(ctx, (uint64_t)e->ws_bytes) : NULL;
  if (e->ws_bytes && !ws) return fail(ctx, "matmul", "out of workspace (%zu bytes)", e->ws_bytes);
  const float one = 1.0f, zero = 0.0f;
  for (int64_t i = 0; i < nptr && st == CUBLAS_STATUS_SUCCESS; i++) {
    void *d = (void *)(uintptr_t)ptr[i][2];
    CK(cublasLtMatmul, s->h, e->op, &one, (const void *)(uintptr_t)ptr[i][0], e->la,
       (const void *)(uintptr_t)ptr[i][1], e->lb, &zero, d, e->ld, d, e->ld, &e->algo, ws, e->ws_bytes,
       (cudaStream_t)stream);
  }
  if (ws) ctx->api->workspace_free(ctx, ws);
  return st == CUBLAS_STATUS_SUCCESS ? 0 : fail_status(ctx, "matmul", what, st);
}

/* ---- matmul ------------------------------------------------------------- */

static CUdeviceptr elem_at(CUdeviceptr base, int64_t elems) { return base + (CUdeviceptr)elems * sizeof(float); }

/* Y = act(bias) on each of its |rows| rows of |n|: a GEMM of K = 1 on zeros
** in the workspace (no bias: Y zeroed). */
static int k_zero(mlc_rt_ctx *ctx, sess *s, const gemm *g0, CUdeviceptr y, int64_t rows, const void *bias,
                  int64_t bias_al, void *stream) {
  char buf[160];
  if (!g0->has_bias) {
    CUresult r = cu.memset_d32_async(y, 0, (size_t)(g0->n * rows), (CUstream)stream);
    return r == CUDA_SUCCESS ? 0 : fail(ctx, "matmul", "cuMemsetD32Async: %s", mlc_ext_cu_error(&cu, r, buf, sizeof buf));
  }
  if (rows > INT_MAX) return fail(ctx, "matmul", "K = 0 over %lld rows", (long long)rows);
  size_t zb = sizeof(float) * (size_t)(g0->n + rows);
  void *z = ctx->api->workspace_alloc(ctx, (uint64_t)zb);
  if (!z) return fail(ctx, "matmul", "out of workspace (%zu bytes)", zb);
  CUdeviceptr zp = (CUdeviceptr)(uintptr_t)z;
  CUresult r = cu.memset_d32_async(zp, 0, g0->n + (size_t)rows, (CUstream)stream);
  if (r != CUDA_SUCCESS) {
    ctx->api->workspace_free(ctx, z);
    return fail(ctx, "matmul", "cuMemsetD32Async: %s", mlc_ext_cu_error(&cu, r, buf, sizeof buf));
  }
  gemm g = {g0->n, rows, 1, 1, 0, 0, 0, g0->act, 1};
  CUdeviceptr ptr[1][3] = {{zp, elem_at(zp, g0->n), y}};
  int64_t al[3] = {align_of(ptr[0][0], NULL, 0), align_of(ptr[0][1], NULL, 0), align_of(y, NULL, 0)};
  int rc = run_gemm(ctx, s, &g, ptr, 1, bias, stream, al, bias_al);
  ctx->api->workspace_free(ctx, z);
  return rc;
}

int mlc_ext_cublaslt_matmul(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  void *stream = mlc_ext_cuda_stream(ctx);
  if (!stream) return fail(ctx, "matmul", "no CUDA stream: cuBLASLt runs only in a CUDA model's session");
  int nt = mlc_ext_ntensors(codes, nargs);
  if (nt < 3 || nt > 4 || nargs - nt != 2)
    return fail(ctx, "matmul", "takes A, B, [bias], Y, has_bias and act (%d arguments)", nargs);
  int64_t has_bias = *(const int64_t *)args[nt], act = *(const int64_t *)args[nt + 1];
  if (has_bias != (nt == 4) || (has_bias != 0 && has_bias != 1))
    return fail(ctx, "matmul", "%d tensors for has_bias %lld", nt, (long long)has_bias);
  if (act != 0 && act != 1) return fail(ctx, "matmul", "act %lld: cuBLASLt's epilogue here is none (0) or relu (1)", (long long)act);
  const DLTensor *A = args[0], *B = args[1], *Bi = has_bias ? args[2] : NULL, *Y = args[nt - 1];
  if (!mlc_ext_cuda_f32(A, -1) || !mlc_ext_cuda_f32(B, -1) || !mlc_ext_cuda_f32(Y, -1) ||
      (Bi && !mlc_ext_cuda_f32(Bi, -1)))
    return fail(ctx, "matmul", "A, B, the bias and Y must be compact float32 tensors in CUDA device memory");
  mlc_ext_mm shp;
  if (mlc_ext_matmul_shapes(ctx, "cublaslt", A, B, Y, &shp)) return -1;
  int64_t m = shp.m, n = shp.n, k = shp.k;
  if (Bi) {
    int ok = Bi->ndim >= 1 && Bi->shape[Bi->ndim - 1] == n;
    for (int d = 0; ok && d < Bi->ndim - 1; d++) ok = Bi->shape[d] == 1;
    if (!ok) return fail(ctx, "matmul", "the bias must be %lld values along Y's last axis ([%lld] or [1, .., %lld])",
                         (long long)n, (long long)n, (long long)n);
  }
  CUdeviceptr a = mlc_ext_cuda_ptr(A), b = mlc_ext_cuda_ptr(B), y = mlc_ext_cuda_ptr(Y);
  CUdeviceptr bias = Bi ? mlc_ext_cuda_ptr(Bi) : 0;
  size_t yb = sizeof(float) * (size_t)mlc_ext_numel(Y);
  if (mlc_ext_cuda_overlap(y, yb, a, sizeof(float) * (size_t)mlc_ext_numel(A))) return fail(ctx, "matmul", "Y overlaps A");
  if (mlc_ext_cuda_overlap(y, yb, b, sizeof(float) * (size_t)mlc_ext_numel(B))) return fail(ctx, "matmul", "Y overlaps B");
  if (Bi && mlc_ext_cuda_overlap(y, yb, bias, sizeof(float) * (size_t)n)) return fail(ctx, "matmul", "Y overlaps the bias");
  if (mlc_ext_numel(Y) == 0) return 0;
  if (!ready(ctx, "matmul")) return -1;
  sess *s = session(ctx, "matmul");
  if (!s) return -1;
  const void *bp = (const void *)(uintptr_t)bias;
  int64_t bias_al = Bi ? align_of(bias, NULL, 0) : 0;
  gemm g = {n, m, k, 1, 0, 0, 0, (int)act, Bi != NULL};
  if (k == 0) return k_zero(ctx, s, &g, y, mlc_ext_numel(Y) / n, bp, bias_al, stream);
  mlc_ext_mm_plan pl;
  mlc_ext_mm_plan_make(&shp, Y, &pl);
  if (pl.tall) {
    g.m = m * pl.inner;
  } else if (pl.inner > 1) {
    if (pl.inner > INT_MAX) return fail(ctx, "matmul", "%lld batches", (long long)pl.inner);
    g.batches = pl.inner, g.sa = pl.sb, g.sb = pl.sa, g.sd = m * n;
  }
  /* the pointers of each outer batch, and what aligns them and every batch */
  CUdeviceptr(*ptr)[3] = malloc(sizeof *ptr * (size_t)pl.outer);
  if (!ptr) return fail(ctx, "matmul", "out of memory");
  uint64_t offs[3] = {sizeof(float) * (uint64_t)g.sa, sizeof(float) * (uint64_t)g.sb, sizeof(float) * (uint64_t)g.sd};
  for (int64_t o = 0; o < pl.outer; o++) {
    int64_t ao, bo;
    mlc_ext_mm_outer(&shp, Y, &pl, o, &ao, &bo);
    ptr[o][0] = elem_at(b, bo), ptr[o][1] = elem_at(a, ao), ptr[o][2] = elem_at(y, o * pl.inner * m * n);
    for (int i = 0; i < 3; i++) offs[i] |= ptr[o][i] - ptr[0][i];
  }
  int64_t al[3];
  for (int i = 0; i < 3; i++) al[i] = align_of(ptr[0][i], &offs[i], 1);
  int rc = run_gemm(ctx, s, &g, ptr, pl.outer, bp, stream, al, bias_al);
  free(ptr);
  return rc;
}
