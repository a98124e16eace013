/*
** rt_cudnn.c: the cuDNN provider's run-time wrappers (extern.h) for CUDA
** models: "cudnn.conv2d", "cudnn.max_pool2d", "cudnn.avg_pool2d" and
** "cudnn.softmax", in the kernel calling convention of mlc/mlc_extern.h,
** through cuDNN's legacy C API.  Linked into a model.so (as
** libmlcext_cudnn.a) only when the dispatcher sent a call to cuDNN.  They
** take exactly the arguments of the oneDNN functions of the same names
** (extern.h), so one matcher serves both; here every tensor is NCHW
** float32 in device memory (rt_cuda.h).
**
** Loading.  The model does not link cuDNN: the first call loads
** libcudnn.so.9 (else libcudnn.so; MLC_CUDNN_LIBRARY names another) and
** libcuda.so.1 with dlopen, once per process, and takes each function
** through a pointer of the header's type.  A library or function that is
** missing, or a cuDNN whose major version is not the header's, is an error
** of every call, naming it.
**
** Sessions.  Each session has its own cuDNN handle and cache, made at its
** first call and kept in its slot MLC_RT_SLOT_CUDNN (freed, descriptors
** and handle, when the session is freed); every call sets the handle's
** stream to the session's.  A session runs one kernel at a time, so the
** cache has no lock.  A convolution's descriptors and its algorithm are
** made on the first call with its shapes and attributes and kept (at most
** CACHE_MAX entries; the oldest goes): cudnnFindConvolutionForwardAlgorithm
** times the algorithms once and the fastest whose workspace fits
** WS_LIMIT is kept; if Find fails, cudnnGetConvolutionForwardAlgorithm_v7's
** heuristics choose; if neither gives one, implicit GEMM (no workspace).
**
** Precision.  Float32 is strict by default (convolutions restricted to
** FMA kernels, CUDNN_FMA_MATH), so results match a CPU reference;
** MLC_CUDA_TF32=1 in the environment when cuDNN is loaded allows TF32
** tensor cores (CUDNN_TENSOR_OP_MATH).
**
** Convolution.  Groups (depthwise too), strides and dilations are cuDNN's
** own; cuDNN pads symmetrically only, so asymmetric pads copy X into a
** zero-padded workspace first (cudnnSetTensor, cudnnTransformTensor) and
** convolve that unpadded.  The epilogue: a residual is copied into Y
** (cuMemcpyDtoDAsync_v2 from the driver; nothing when it is Y) and the
** convolution adds onto it (beta = 1); the bias is cudnnAddTensor; relu is
** cudnnActivationForward RELU and clip(0, max) CLIPPED_RELU; any other clip
** is refused.  Bias with relu (and a residual) is one
** cudnnConvolutionBiasActivationForward while cuDNN supports it for the
** chosen algorithm.
**
** Pooling (cudnnPoolingForward) has no dilation in cuDNN: dilations other
** than 1 are refused.  When cuDNN's symmetric padding by the start pads
** gives Y's shape, it pools directly (exclude_pad average counts what
** cuDNN counts); otherwise (asymmetric pads, ceil mode's extra end
** padding) X is copied into a padded workspace, -inf for max and 0 for
** average, and pooled unpadded; an average that excludes the padding is
** then scaled per output pixel by window / count (cudnnOpTensor, the
** factors computed once on the host and uploaded at each call).  As in
** oneDNN's wrapper, count_include_pad with ceil mode's extra padding is
** refused.
**
** Softmax and log-softmax over one axis (ONNX Softmax-13 semantics, as
** oneDNN's wrapper): X viewed as [outer, axis, inner, 1] and
** cudnnSoftmaxForward ACCURATE or LOG in channel mode.
**
** Errors: every argument is checked (counts, float32 in device memory,
** ranks, shapes against the attributes, overlaps of Y with its inputs);
** a cuDNN failure is an error naming the function called and cuDNN's
** status and last error text.
*/
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

#include "extern/rt_cuda.h"
#include "extern/rt_ext.h"

#define CUDNN_FNS(X)                           \
  X(cudnnActivationForward)                    \
  X(cudnnAddTensor)                            \
  X(cudnnConvolutionBiasActivationForward)     \
  X(cudnnConvolutionForward)                   \
  X(cudnnCreate)                               \
  X(cudnnCreateActivationDescriptor)           \
  X(cudnnCreateConvolutionDescriptor)          \
  X(cudnnCreateFilterDescriptor)               \
  X(cudnnCreateOpTensorDescriptor)             \
  X(cudnnCreatePoolingDescriptor)              \
  X(cudnnCreateTensorDescriptor)               \
  X(cudnnDestroy)                              \
  X(cudnnDestroyActivationDescriptor)          \
  X(cudnnDestroyConvolutionDescriptor)         \
  X(cudnnDestroyFilterDescriptor)              \
  X(cudnnDestroyOpTensorDescriptor)            \
  X(cudnnDestroyPoolingDescriptor)             \
  X(cudnnDestroyTensorDescriptor)              \
  X(cudnnFindConvolutionForwardAlgorithm)      \
  X(cudnnGetConvolutionForwardAlgorithm_v7)    \
  X(cudnnGetConvolutionForwardWorkspaceSize)   \
  X(cudnnGetErrorString)                       \
  X(cudnnGetLastErrorString)                   \
  X(cudnnGetVersion)                           \
  X(cudnnOpTensor)                             \
  X(cudnnPoolingForward)                       \
  X(cudnnSetActivationDescriptor)              \
  X(cudnnSetConvolution2dDescriptor)           \
  X(cudnnSetConvolutionGroupCount)             \
  X(cudnnSetConvolutionMathType)               \
  X(cudnnSetFilter4dDescriptor)                \
  X(cudnnSetOpTensorDescriptor)                \
  X(cudnnSetPooling2dDescriptor)               \
  X(cudnnSetStream)                            \
  X(cudnnSetTensor)                            \
  X(cudnnSetTensor4dDescriptor)                \
  X(cudnnSetTensor4dDescriptorEx)              \
  X(cudnnSoftmaxForward)                       \
  X(cudnnTransformTensor)

#define X(f) static __typeof__(f) *p_##f;
CUDNN_FNS(X)
#undef X

/* Cached entries per session; the workspace an algorithm may take. */
#define CACHE_MAX 256
#define WS_LIMIT ((size_t)256 << 20)

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded, use_tf32;
static mlc_ext_cu cu;
static char load_error[512];

static void load(void) {
  static const char *const names[] = {"libcudnn.so.9", "libcudnn.so", NULL};
#define X(f) {#f, &p_##f, sizeof p_##f},
  const mlc_ext_sym syms[] = {CUDNN_FNS(X)};
#undef X
  if (mlc_ext_cuda_load("MLC_CUDNN_LIBRARY", names, syms, sizeof syms / sizeof *syms, &p_cudnnGetVersion, CUDNN_MAJOR,
                        "cuDNN", &cu, load_error, sizeof load_error))
    return;
  use_tf32 = mlc_ext_cuda_tf32();
  loaded = 1;
}

/* ---- errors ------------------------------------------------------------- */

/* Errors name the function: "cudnn.FN: ..." (rt_util.h). */
#define fail(ctx, fn, ...) mlc_ext_fail((ctx), "cudnn", (fn), __VA_ARGS__)

/* Records "cudnn.FN: CALL: CUDNN_STATUS_...: cuDNN's last error text"; -1. */
static int fail_status(mlc_rt_ctx *ctx, const char *fn, const char *call, cudnnStatus_t s) {
  char last[256] = "";
  if (p_cudnnGetLastErrorString) p_cudnnGetLastErrorString(last, sizeof last);
  const char *name = p_cudnnGetErrorString ? p_cudnnGetErrorString(s) : NULL;
  return fail(ctx, fn, "%s: %s%s%s", call, name ? name : "cuDNN error", last[0] ? ": " : "", last);
}

static int fail_cu(mlc_rt_ctx *ctx, const char *fn, const char *call, CUresult r) {
  char buf[160];
  return fail(ctx, fn, "%s: %s", call, mlc_ext_cu_error(&cu, r, buf, sizeof buf));
}

/* Runs a cuDNN call when |st| is still success; on failure, names it in |what|. */
#define CK(fn, ...)                                                                        \
  do {                                                                                     \
    if (st == CUDNN_STATUS_SUCCESS && (st = p_##fn(__VA_ARGS__)) != CUDNN_STATUS_SUCCESS) \
      what = #fn;                                                                          \
  } while (0)

static int ready(mlc_rt_ctx *ctx, const char *fn) {
  pthread_once(&load_once, load);
  return loaded ? 1 : (fail(ctx, fn, "%s", load_error[0] ? load_error : "cuDNN is not available"), 0);
}

/* Whether |v| fits cuDNN's int dims. */
static int fits(int64_t v) { return v >= 0 && v <= INT_MAX; }

static CUdeviceptr dev_at(CUdeviceptr base, int64_t elems) { return base + (CUdeviceptr)elems * sizeof(float); }

static void *vp(CUdeviceptr p) { return (void *)(uintptr_t)p; }

/* ---- the session: handle and cache ------------------------------------- */

enum { K_CONV = 1, K_MAXPOOL, K_AVGPOOL };

typedef struct entry entry;
struct entry {
  entry *next;
  int kind, nkey;
  int64_t key[32];
  cudnnTensorDescriptor_t x, y, xp, xin, b, sc;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  cudnnActivationDescriptor_t act; /* NULL: no activation */
  cudnnPoolingDescriptor_t pool;
  cudnnOpTensorDescriptor_t mul;
  cudnnConvolutionFwdAlgo_t algo;
  size_t ws_bytes;        /* the algorithm's workspace */
  int padded;             /* X is copied into a padded buffer xp first */
  int64_t xp_elems, xp_off; /* that buffer's size and X's first element in it */
  float pad_value;
  int fused;              /* one cudnnConvolutionBiasActivationForward */
  float *scale;           /* exclude_pad average over a padded copy: window / count per output pixel */
  int64_t scale_elems;
};

typedef struct sess {
  cudnnHandle_t h;
  entry *head;
  int n;
  cudnnTensorDescriptor_t sm; /* softmax's view, set at each call */
} sess;

static void entry_free(entry *e) {
  if (!e) return;
  cudnnTensorDescriptor_t ts[] = {e->x, e->y, e->xp, e->xin, e->b, e->sc};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
    if (ts[i]) p_cudnnDestroyTensorDescriptor(ts[i]);
  if (e->w) p_cudnnDestroyFilterDescriptor(e->w);
  if (e->conv) p_cudnnDestroyConvolutionDescriptor(e->conv);
  if (e->act) p_cudnnDestroyActivationDescriptor(e->act);
  if (e->pool) p_cudnnDestroyPoolingDescriptor(e->pool);
  if (e->mul) p_cudnnDestroyOpTensorDescriptor(e->mul);
  free(e->scale);
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
  if (s->sm) p_cudnnDestroyTensorDescriptor(s->sm);
  if (s->h) p_cudnnDestroy(s->h);
  free(s);
}

/* The session's handle and cache, made at its first call, on |stream|;
** NULL after recording the error. */
static sess *session(mlc_rt_ctx *ctx, const char *fn, void *stream) {
  void **slot = ctx->api->session_slot ? ctx->api->session_slot(ctx, MLC_RT_SLOT_CUDNN, sess_fini) : NULL;
  if (!slot) {
    fail(ctx, fn, "the runtime gives no session slot for the cuDNN handle");
    return NULL;
  }
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  const char *what = "";
  if (!*slot) {
    sess *s = calloc(1, sizeof *s);
    if (!s) {
      fail(ctx, fn, "out of memory");
      return NULL;
    }
    CK(cudnnCreate, &s->h);
    CK(cudnnCreateTensorDescriptor, &s->sm);
    if (st != CUDNN_STATUS_SUCCESS) {
      sess_fini(s);
      fail_status(ctx, fn, what, st);
      return NULL;
    }
    *slot = s;
  }
  sess *s = *slot;
  CK(cudnnSetStream, s->h, (cudaStream_t)stream);
  if (st != CUDNN_STATUS_SUCCESS) {
    fail_status(ctx, fn, what, st);
    return NULL;
  }
  return s;
}

static entry *cache_find(sess *s, int kind, const int64_t *key, int nkey) {
  for (entry *e = s->head; e; e = e->next)
    if (e->kind == kind && e->nkey == nkey && memcmp(e->key, key, sizeof key[0] * (size_t)nkey) == 0) return e;
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

static entry *entry_new(int kind, const int64_t *key, int nkey) {
  entry *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->kind = kind;
  e->nkey = nkey;
  memcpy(e->key, key, sizeof key[0] * (size_t)nkey);
  return e;
}

/* Workspace from the session (device memory in a CUDA session). */
static void *ws(mlc_rt_ctx *ctx, size_t n) { return n ? ctx->api->workspace_alloc(ctx, (uint64_t)n) : NULL; }

static void ws_free(mlc_rt_ctx *ctx, void *p) {
  if (p) ctx->api->workspace_free(ctx, p);
}

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* Describes the padded copy of X [n, c, h, w] with |top|, |left| rows and
** columns before and |bottom|, |right| after it: e->xp (the buffer) and
** e->xin (X's place in it). */
static cudnnStatus_t describe_padded(entry *e, int64_t n, int64_t c, int64_t h, int64_t w, int64_t top, int64_t left,
                                     int64_t bottom, int64_t right, const char **whatp) {
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  const char *what = "";
  int64_t hp = h + top + bottom, wp = w + left + right;
  e->padded = 1;
  e->xp_elems = n * c * hp * wp;
  e->xp_off = top * wp + left;
  CK(cudnnCreateTensorDescriptor, &e->xp);
  CK(cudnnSetTensor4dDescriptor, e->xp, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)n, (int)c, (int)hp, (int)wp);
  CK(cudnnCreateTensorDescriptor, &e->xin);
  CK(cudnnSetTensor4dDescriptorEx, e->xin, CUDNN_DATA_FLOAT, (int)n, (int)c, (int)h, (int)w, (int)(c * hp * wp),
     (int)(hp * wp), (int)wp, 1);
  *whatp = what;
  return st;
}

/* Fills the padded copy |xp| of X (|x|) with e->pad_value around X. */
static cudnnStatus_t pad_input(sess *s, const entry *e, CUdeviceptr x, CUdeviceptr xp, const char **whatp) {
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  const char *what = "";
  const float one = 1.0f, zero = 0.0f;
  CK(cudnnSetTensor, s->h, e->xp, vp(xp), &e->pad_value);
  CK(cudnnTransformTensor, s->h, &one, e->x, vp(x), &zero, e->xin, vp(dev_at(xp, e->xp_off)));
  *whatp = what;
  return st;
}

/* ---- conv2d ------------------------------------------------------------- */

enum { ACT_NONE = MLC_EXT_RT_NONE, ACT_RELU = MLC_EXT_RT_RELU, ACT_CLIP = MLC_EXT_RT_CLIP };

/* The first of |n| results that succeeded, fits WS_LIMIT and, unless TF32
** is allowed, runs on FMA kernels; -1 if none. */
static int pick(const cudnnConvolutionFwdAlgoPerf_t *perf, int n) {
  for (int i = 0; i < n; i++)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= WS_LIMIT &&
        (use_tf32 || perf[i].mathType == CUDNN_FMA_MATH))
      return i;
  return -1;
}

/* Chooses the entry's algorithm (see the top of the file). */
static cudnnStatus_t choose_algo(sess *s, entry *e, const char **whatp) {
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  const char *what = "";
  cudnnTensorDescriptor_t xd = e->padded ? e->xp : e->x;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int got = 0, at = -1;
  if (p_cudnnFindConvolutionForwardAlgorithm(s->h, xd, e->w, e->conv, e->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                             perf) == CUDNN_STATUS_SUCCESS)
    at = pick(perf, got);
  if (at < 0 && p_cudnnGetConvolutionForwardAlgorithm_v7(s->h, xd, e->w, e->conv, e->y,
                                                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                                         perf) == CUDNN_STATUS_SUCCESS)
    at = pick(perf, got);
  cudnnMathType_t math = use_tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
  e->algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  if (at >= 0) {
    e->algo = perf[at].algo;
    math = perf[at].mathType;
  }
  CK(cudnnSetConvolutionMathType, e->conv, math);
  CK(cudnnGetConvolutionForwardWorkspaceSize, s->h, xd, e->w, e->conv, e->y, e->algo, &e->ws_bytes);
  *whatp = what;
  return st;
}

/* Builds the entry of convolution |cv|; the activation |mode| with |coef|. */
static cudnnStatus_t conv_build(sess *s, entry *e, const mlc_ext_conv *cv, cudnnActivationMode_t mode, double coef,
                                const char **whatp) {
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  const char *what = "";
  int padded = cv->pt != cv->pb || cv->pl != cv->pr;
  CK(cudnnCreateTensorDescriptor, &e->x);
  CK(cudnnSetTensor4dDescriptor, e->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)cv->n, (int)cv->c, (int)cv->h,
     (int)cv->wd);
  if (padded && st == CUDNN_STATUS_SUCCESS) {
    st = describe_padded(e, cv->n, cv->c, cv->h, cv->wd, cv->pt, cv->pl, cv->pb, cv->pr, &what);
    e->pad_value = 0.0f;
  }
  CK(cudnnCreateTensorDescriptor, &e->y);
  CK(cudnnSetTensor4dDescriptor, e->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)cv->n, (int)cv->k, (int)cv->oh,
     (int)cv->ow);
  CK(cudnnCreateFilterDescriptor, &e->w);
  CK(cudnnSetFilter4dDescriptor, e->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, (int)cv->k, (int)(cv->c / cv->groups),
     (int)cv->kh, (int)cv->kw);
  CK(cudnnCreateConvolutionDescriptor, &e->conv);
  CK(cudnnSetConvolution2dDescriptor, e->conv, padded ? 0 : (int)cv->pt, padded ? 0 : (int)cv->pl, (int)cv->sh,
     (int)cv->sw, (int)cv->dh, (int)cv->dw, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
  CK(cudnnSetConvolutionGroupCount, e->conv, (int)cv->groups);
  CK(cudnnSetConvolutionMathType, e->conv, use_tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH);
  if (cv->bias) {
    CK(cudnnCreateTensorDescriptor, &e->b);
    CK(cudnnSetTensor4dDescriptor, e->b, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, (int)cv->k, 1, 1);
  }
  if (cv->act != ACT_NONE) {
    CK(cudnnCreateActivationDescriptor, &e->act);
    CK(cudnnSetActivationDescriptor, e->act, mode, CUDNN_PROPAGATE_NAN, coef);
  }
  if (st == CUDNN_STATUS_SUCCESS) st = choose_algo(s, e, &what);
  e->fused = cv->bias && e->act && mode == CUDNN_ACTIVATION_RELU;
  *whatp = what;
  return st;
}

/* The activation of |cv|: 0, or -1 with why in |msg| (a clip cuDNN lacks). */
static int conv_activation(const mlc_ext_conv *cv, cudnnActivationMode_t *mode, double *coef, char *msg, size_t n) {
  *mode = CUDNN_ACTIVATION_IDENTITY;
  *coef = 0.0;
  if (cv->act == ACT_RELU) *mode = CUDNN_ACTIVATION_RELU;
  if (cv->act != ACT_CLIP) return 0;
  if (cv->lo != 0.0f || !(cv->hi > 0.0f)) {
    snprintf(msg, n, "clip(%g, %g) is not supported: cuDNN has clip(0, max) with max > 0 (clipped relu) only",
             (double)cv->lo, (double)cv->hi);
    return -1;
  }
  if (isinf(cv->hi)) {
    *mode = CUDNN_ACTIVATION_RELU;
  } else {
    *mode = CUDNN_ACTIVATION_CLIPPED_RELU;
    *coef = (double)cv->hi;
  }
  return 0;
}

int mlc_ext_cudnn_conv2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  void *stream = mlc_ext_cuda_stream(ctx);
  if (!stream) return fail(ctx, "conv2d", "no CUDA stream: cuDNN runs only in a CUDA model's session");
  mlc_ext_conv cv;
  char msg[256];
  if (mlc_ext_conv_read(args, codes, nargs, &cv, msg, sizeof msg)) return fail(ctx, "conv2d", "%s", msg);
  if (!mlc_ext_cuda_f32(cv.x, 4) || !mlc_ext_cuda_f32(cv.w, 4) || !mlc_ext_cuda_f32(cv.y, 4) ||
      (cv.bias && !mlc_ext_cuda_f32(cv.bias, 1)) || (cv.res && !mlc_ext_cuda_f32(cv.res, 4)))
    return fail(ctx, "conv2d", "X, W, Y, the bias and the residual must be in CUDA device memory");
  cudnnActivationMode_t mode;
  double coef;
  if (conv_activation(&cv, &mode, &coef, msg, sizeof msg)) return fail(ctx, "conv2d", "%s", msg);
  const DLTensor *X = cv.x, *W = cv.w, *Bi = cv.bias, *R = cv.res, *Y = cv.y;
  if (mlc_ext_numel(Y) == 0) return 0;
  if (mlc_ext_numel(X) == 0 || mlc_ext_numel(W) == 0) return fail(ctx, "conv2d", "an empty input or weight");
  int64_t hp = cv.h + cv.pt + cv.pb, wp = cv.wd + cv.pl + cv.pr;
  if (!fits(mlc_ext_numel(X)) || !fits(mlc_ext_numel(W)) || !fits(mlc_ext_numel(Y)) || !fits(cv.n * cv.c * hp * wp) ||
      !fits(cv.pt) || !fits(cv.pl) || !fits(cv.sh) || !fits(cv.sw) || !fits(cv.dh) || !fits(cv.dw) ||
      !fits(cv.groups))
    return fail(ctx, "conv2d", "a tensor of more than %d elements or an attribute over it", INT_MAX);
  /* Y may be the residual's memory, never overlap X, W, the bias or part of the residual */
  CUdeviceptr x = mlc_ext_cuda_ptr(X), w = mlc_ext_cuda_ptr(W), y = mlc_ext_cuda_ptr(Y);
  CUdeviceptr b = Bi ? mlc_ext_cuda_ptr(Bi) : 0, r = R ? mlc_ext_cuda_ptr(R) : 0;
  size_t yb = sizeof(float) * (size_t)mlc_ext_numel(Y);
  const DLTensor *ins[4] = {X, W, Bi, R};
  for (int i = 0; i < 4; i++) {
    if (!ins[i] || (i == 3 && r == y)) continue;
    if (mlc_ext_cuda_overlap(y, yb, mlc_ext_cuda_ptr(ins[i]), sizeof(float) * (size_t)mlc_ext_numel(ins[i])))
      return fail(ctx, "conv2d", "Y overlaps its %s", i == 0 ? "input X" : i == 1 ? "weight" : i == 2 ? "bias" : "residual");
  }
  if (!ready(ctx, "conv2d")) return -1;
  sess *s = session(ctx, "conv2d", stream);
  if (!s) return -1;
  int64_t key[32];
  int nkey = 0;
  for (int i = 0; i < 4; i++) key[nkey++] = X->shape[i];
  for (int i = 0; i < 4; i++) key[nkey++] = W->shape[i];
  for (int i = 0; i < 14; i++) key[nkey++] = cv.at[i]; /* all but w_const */
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  const char *what = "";
  entry *e = cache_find(s, K_CONV, key, nkey);
  if (!e) {
    if (!(e = entry_new(K_CONV, key, nkey))) return fail(ctx, "conv2d", "out of memory");
    if ((st = conv_build(s, e, &cv, mode, coef, &what)) != CUDNN_STATUS_SUCCESS) {
      int rc = fail_status(ctx, "conv2d", what, st);
      entry_free(e);
      return rc;
    }
    cache_add(s, e);
  }
  size_t ws_at = align256(e->padded ? sizeof(float) * (size_t)e->xp_elems : 0);
  void *buf = ws(ctx, ws_at + e->ws_bytes);
  if (!buf && ws_at + e->ws_bytes) return fail(ctx, "conv2d", "out of workspace (%zu bytes)", ws_at + e->ws_bytes);
  CUdeviceptr xp = (CUdeviceptr)(uintptr_t)buf;
  void *algo_ws = e->ws_bytes ? vp(xp + ws_at) : NULL;
  const float one = 1.0f, zero = 0.0f;
  cudnnTensorDescriptor_t xd = e->padded ? e->xp : e->x;
  CUdeviceptr xin = e->padded ? xp : x;
  if (e->padded) st = pad_input(s, e, x, xp, &what);
  int done = 0;
  if (st == CUDNN_STATUS_SUCCESS && e->fused) {
    /* y = relu(conv(x) + z + bias), z the residual (alpha2 1) or none (alpha2 0) */
    cudnnStatus_t fs = p_cudnnConvolutionBiasActivationForward(
        s->h, &one, xd, vp(xin), e->w, vp(w), e->conv, e->algo, algo_ws, e->ws_bytes, R ? &one : &zero, e->y,
        vp(R ? r : y), e->b, vp(b), e->act, e->y, vp(y));
    if (fs == CUDNN_STATUS_SUCCESS) done = 1;
    else if (fs == CUDNN_STATUS_NOT_SUPPORTED) e->fused = 0; /* this algorithm cannot: separate steps from now on */
    else st = fs, what = "cudnnConvolutionBiasActivationForward";
  }
  if (st == CUDNN_STATUS_SUCCESS && !done) {
    if (R && r != y) {
      CUresult cr = cu.memcpy_dtod_async(y, r, yb, (CUstream)stream);
      if (cr != CUDA_SUCCESS) {
        ws_free(ctx, buf);
        return fail_cu(ctx, "conv2d", "cuMemcpyDtoDAsync_v2 (placing the residual)", cr);
      }
    }
    CK(cudnnConvolutionForward, s->h, &one, xd, vp(xin), e->w, vp(w), e->conv, e->algo, algo_ws, e->ws_bytes,
       R ? &one : &zero, e->y, vp(y));
    if (Bi) CK(cudnnAddTensor, s->h, &one, e->b, vp(b), &one, e->y, vp(y));
    if (e->act) CK(cudnnActivationForward, s->h, e->act, &one, e->y, vp(y), &zero, e->y, vp(y));
  }
  ws_free(ctx, buf);
  return st == CUDNN_STATUS_SUCCESS ? 0 : fail_status(ctx, "conv2d", what, st);
}

/* ---- pooling ------------------------------------------------------------ */

/* Builds a pooling entry for |d|: X [n, c, h, w] -> Y [.., oh, ow], window
** kh x kw, strides sh, sw, start pads pt, pl, end pads (as Y's shape
** implies) pb, pr.  0, or -1 after recording the error. */
static int pool_build(mlc_rt_ctx *ctx, const char *fn, entry *e, int is_max, int incl, const int64_t *d) {
  int64_t n = d[0], c = d[1], h = d[2], w = d[3], oh = d[4], ow = d[5], kh = d[6], kw = d[7], sh = d[8], sw = d[9],
          pt = d[10], pl = d[11], pb = d[12], pr = d[13];
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  const char *what = "";
  /* cuDNN pads both ends by the start pads: direct when that gives Y's shape */
  int direct = h + 2 * pt >= kh && w + 2 * pl >= kw && (h + 2 * pt - kh) / sh + 1 == oh &&
               (w + 2 * pl - kw) / sw + 1 == ow;
  cudnnPoolingMode_t mode = is_max ? CUDNN_POOLING_MAX
                            : incl || !direct ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                              : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  CK(cudnnCreateTensorDescriptor, &e->x);
  CK(cudnnSetTensor4dDescriptor, e->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)n, (int)c, (int)h, (int)w);
  CK(cudnnCreateTensorDescriptor, &e->y);
  CK(cudnnSetTensor4dDescriptor, e->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)n, (int)c, (int)oh, (int)ow);
  if (!direct && st == CUDNN_STATUS_SUCCESS) {
    st = describe_padded(e, n, c, h, w, pt, pl, pb, pr, &what);
    e->pad_value = is_max ? -INFINITY : 0.0f;
  }
  CK(cudnnCreatePoolingDescriptor, &e->pool);
  CK(cudnnSetPooling2dDescriptor, e->pool, mode, CUDNN_PROPAGATE_NAN, (int)kh, (int)kw, direct ? (int)pt : 0,
     direct ? (int)pl : 0, (int)sh, (int)sw);
  if (!direct && !is_max && !incl && st == CUDNN_STATUS_SUCCESS) {
    /* the sum pooled (an average over the full window), times window / count */
    e->scale_elems = oh * ow;
    if (!(e->scale = malloc(sizeof(float) * (size_t)e->scale_elems))) return fail(ctx, fn, "out of memory");
    for (int64_t i = 0; i < oh; i++)
      for (int64_t j = 0; j < ow; j++) {
        int64_t y0 = i * sh - pt, x0 = j * sw - pl;
        int64_t rows = (y0 + kh < h ? y0 + kh : h) - (y0 > 0 ? y0 : 0);
        int64_t cols = (x0 + kw < w ? x0 + kw : w) - (x0 > 0 ? x0 : 0);
        e->scale[i * ow + j] = rows > 0 && cols > 0 ? (float)((double)(kh * kw) / (double)(rows * cols)) : 0.0f;
      }
    CK(cudnnCreateTensorDescriptor, &e->sc);
    CK(cudnnSetTensor4dDescriptor, e->sc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, (int)oh, (int)ow);
    CK(cudnnCreateOpTensorDescriptor, &e->mul);
    CK(cudnnSetOpTensorDescriptor, e->mul, CUDNN_OP_TENSOR_MUL, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN);
  }
  return st == CUDNN_STATUS_SUCCESS ? 0 : fail_status(ctx, fn, what, st);
}

static int pool(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx, int is_max) {
  const char *fn = is_max ? "max_pool2d" : "avg_pool2d";
  void *stream = mlc_ext_cuda_stream(ctx);
  if (!stream) return fail(ctx, fn, "no CUDA stream: cuDNN runs only in a CUDA model's session");
  if (mlc_ext_ntensors(codes, nargs) != 2 || nargs != 2 + 11)
    return fail(ctx, fn, "takes X, Y and 11 ints (%d arguments)", nargs);
  const DLTensor *X = args[0], *Y = args[1];
  int64_t at[11];
  for (int i = 0; i < 11; i++) at[i] = *(const int64_t *)args[2 + i];
  int64_t kh = at[0], kw = at[1], pt = at[2], pl = at[3], pb = at[4], pr = at[5], sh = at[6], sw = at[7],
          dh = at[8], dw = at[9], incl = at[10];
  if (!mlc_ext_cuda_f32(X, 4) || !mlc_ext_cuda_f32(Y, 4))
    return fail(ctx, fn, "X and Y must be compact float32 of rank 4 in CUDA device memory");
  if (kh < 1 || kw < 1 || sh < 1 || sw < 1 || dh < 1 || dw < 1 || pt < 0 || pl < 0 || pb < 0 || pr < 0)
    return fail(ctx, fn, "bad attributes");
  if (dh != 1 || dw != 1)
    return fail(ctx, fn, "dilations %lld x %lld: cuDNN pooling has no dilation", (long long)dh, (long long)dw);
  int64_t n = X->shape[0], c = X->shape[1], h = X->shape[2], wd = X->shape[3], oh = Y->shape[2], ow = Y->shape[3];
  if (Y->shape[0] != n || Y->shape[1] != c || oh < 1 || ow < 1)
    return fail(ctx, fn, "Y's batch or channels differ from X's, or Y is empty");
  /* the end padding Y's shape implies (ceil_mode adds some) */
  int64_t prb = (oh - 1) * sh + kh - h - pt, prr = (ow - 1) * sw + kw - wd - pl;
  if (prb < pb - sh + 1 || prr < pr - sw + 1 || prb < 0 || prr < 0 || prb > pb + sh - 1 || prr > pr + sw - 1)
    return fail(ctx, fn, "Y [.., %lld, %lld] does not follow from X [.., %lld, %lld] and the attributes",
                (long long)oh, (long long)ow, (long long)h, (long long)wd);
  if (!is_max && incl && (prb > pb || prr > pr))
    return fail(ctx, fn, "count_include_pad with ceil_mode's extra padding is not supported");
  if (mlc_ext_numel(X) == 0) return fail(ctx, fn, "empty input");
  if (!fits(mlc_ext_numel(Y)) || !fits(n * c * (h + pt + prb) * (wd + pl + prr)) || !fits(kh) || !fits(kw) ||
      !fits(sh) || !fits(sw))
    return fail(ctx, fn, "a tensor of more than %d elements or an attribute over it", INT_MAX);
  CUdeviceptr x = mlc_ext_cuda_ptr(X), y = mlc_ext_cuda_ptr(Y);
  size_t yb = sizeof(float) * (size_t)mlc_ext_numel(Y);
  if (mlc_ext_cuda_overlap(y, yb, x, sizeof(float) * (size_t)mlc_ext_numel(X))) return fail(ctx, fn, "Y overlaps X");
  if (!ready(ctx, fn)) return -1;
  sess *s = session(ctx, fn, stream);
  if (!s) return -1;
  int64_t key[32];
  int nkey = 0;
  for (int i = 0; i < 4; i++) key[nkey++] = X->shape[i];
  for (int i = 0; i < 4; i++) key[nkey++] = Y->shape[i];
  for (int i = 0; i < 11; i++) key[nkey++] = at[i];
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  const char *what = "";
  int kind = is_max ? K_MAXPOOL : K_AVGPOOL;
  entry *e = cache_find(s, kind, key, nkey);
  if (!e) {
    if (!(e = entry_new(kind, key, nkey))) return fail(ctx, fn, "out of memory");
    const int64_t d[14] = {n, c, h, wd, oh, ow, kh, kw, sh, sw, pt, pl, prb, prr};
    if (pool_build(ctx, fn, e, is_max, (int)incl, d)) {
      entry_free(e);
      return -1;
    }
    cache_add(s, e);
  }
  /* workspace: the padded copy of X, then the factors and the sums */
  size_t xp_bytes = align256(e->padded ? sizeof(float) * (size_t)e->xp_elems : 0);
  size_t sc_bytes = align256(e->scale ? sizeof(float) * (size_t)e->scale_elems : 0);
  size_t total = xp_bytes + sc_bytes + (e->scale ? yb : 0);
  void *buf = ws(ctx, total);
  if (!buf && total) return fail(ctx, fn, "out of workspace (%zu bytes)", total);
  CUdeviceptr xp = (CUdeviceptr)(uintptr_t)buf, scale = xp + xp_bytes, sums = scale + sc_bytes;
  const float one = 1.0f, zero = 0.0f;
  if (e->padded) st = pad_input(s, e, x, xp, &what);
  if (st == CUDNN_STATUS_SUCCESS && e->scale) {
    CUresult cr = cu.memcpy_htod_async(scale, e->scale, sizeof(float) * (size_t)e->scale_elems, (CUstream)stream);
    if (cr != CUDA_SUCCESS) {
      ws_free(ctx, buf);
      return fail_cu(ctx, fn, "cuMemcpyHtoDAsync_v2 (the averages' factors)", cr);
    }
    CK(cudnnPoolingForward, s->h, e->pool, &one, e->xp, vp(xp), &zero, e->y, vp(sums));
    CK(cudnnOpTensor, s->h, e->mul, &one, e->y, vp(sums), &one, e->sc, vp(scale), &zero, e->y, vp(y));
  } else {
    CK(cudnnPoolingForward, s->h, e->pool, &one, e->padded ? e->xp : e->x, vp(e->padded ? xp : x), &zero, e->y, vp(y));
  }
  ws_free(ctx, buf);
  return st == CUDNN_STATUS_SUCCESS ? 0 : fail_status(ctx, fn, what, st);
}

int mlc_ext_cudnn_max_pool2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  return pool(args, codes, nargs, ctx, 1);
}

int mlc_ext_cudnn_avg_pool2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  return pool(args, codes, nargs, ctx, 0);
}

/* ---- softmax ------------------------------------------------------------ */

int mlc_ext_cudnn_softmax(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  void *stream = mlc_ext_cuda_stream(ctx);
  if (!stream) return fail(ctx, "softmax", "no CUDA stream: cuDNN runs only in a CUDA model's session");
  if (mlc_ext_ntensors(codes, nargs) != 2 || nargs != 4)
    return fail(ctx, "softmax", "takes X, Y, axis and log (%d arguments)", nargs);
  const DLTensor *X = args[0], *Y = args[1];
  int64_t axis = *(const int64_t *)args[2], lg = *(const int64_t *)args[3];
  if (!mlc_ext_cuda_f32(X, -1) || !mlc_ext_cuda_f32(Y, X->ndim) || X->ndim < 1)
    return fail(ctx, "softmax", "X and Y must be compact float32 of one rank >= 1 in CUDA device memory");
  for (int d = 0; d < X->ndim; d++)
    if (X->shape[d] != Y->shape[d]) return fail(ctx, "softmax", "Y's shape differs from X's");
  if (axis < 0 || axis >= X->ndim || (lg != 0 && lg != 1))
    return fail(ctx, "softmax", "bad axis %lld or log %lld", (long long)axis, (long long)lg);
  int64_t outer = 1, inner = 1, len = X->shape[axis];
  for (int d = 0; d < axis; d++) outer *= X->shape[d];
  for (int d = (int)axis + 1; d < X->ndim; d++) inner *= X->shape[d];
  if (mlc_ext_numel(X) == 0) return 0;
  if (!fits(mlc_ext_numel(X))) return fail(ctx, "softmax", "more than %d elements", INT_MAX);
  CUdeviceptr x = mlc_ext_cuda_ptr(X), y = mlc_ext_cuda_ptr(Y);
  size_t nb = sizeof(float) * (size_t)mlc_ext_numel(X);
  if (x != y && mlc_ext_cuda_overlap(y, nb, x, nb)) return fail(ctx, "softmax", "Y overlaps part of X");
  if (!ready(ctx, "softmax")) return -1;
  sess *s = session(ctx, "softmax", stream);
  if (!s) return -1;
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  const char *what = "";
  const float one = 1.0f, zero = 0.0f;
  /* [outer, len, inner, 1]: channel mode is a softmax over len for each (outer, inner) */
  CK(cudnnSetTensor4dDescriptor, s->sm, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)outer, (int)len, (int)inner, 1);
  CK(cudnnSoftmaxForward, s->h, lg ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
     s->sm, vp(x), &zero, s->sm, vp(y));
  return st == CUDNN_STATUS_SUCCESS ? 0 : fail_status(ctx, "softmax", what, st);
}
