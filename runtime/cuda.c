/*
** cuda.c: the runtime's CUDA side (rt_cuda.h), through the CUDA driver
** API taken from libcuda.so.1 at run time.  The few types and constants of
** the driver API it needs are declared here (the ABI of cuda.h, stable
** since CUDA 4), so the runtime builds without CUDA's headers.
*/
#include "config.h"
#include "runtime/rt_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult; /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;

#define CU_STREAM_NON_BLOCKING 0x1
#define CU_STREAM_CAPTURE_MODE_RELAXED 2
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

/* X(name in this file, symbol in libcuda, return, parameters) */
#define CU_FNS(X)                                                                                          \
  X(cuInit, "cuInit", (unsigned))                                                                          \
  X(cuDeviceGetCount, "cuDeviceGetCount", (int *))                                                         \
  X(cuDeviceGet, "cuDeviceGet", (CUdevice *, int))                                                         \
  X(cuDeviceGetName, "cuDeviceGetName", (char *, int, CUdevice))                                           \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *, CUdevice))                         \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice))                                 \
  X(cuCtxPushCurrent, "cuCtxPushCurrent_v2", (CUcontext))                                                  \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", (CUcontext *))                                                  \
  X(cuStreamCreate, "cuStreamCreate", (CUstream *, unsigned))                                              \
  X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream))                                                     \
  X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream))                                                \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", (CUmodule *, const void *, unsigned, int *, void **))        \
  X(cuModuleUnload, "cuModuleUnload", (CUmodule))                                                          \
  X(cuModuleGetFunction, "cuModuleGetFunction", (CUfunction *, CUmodule, const char *))                    \
  X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))                                                  \
  X(cuMemFree, "cuMemFree_v2", (CUdeviceptr))                                                              \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", (CUdeviceptr, const void *, size_t, CUstream))              \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", (void *, CUdeviceptr, size_t, CUstream))                    \
  X(cuMemsetD8Async, "cuMemsetD8Async", (CUdeviceptr, unsigned char, size_t, CUstream))                    \
  X(cuLaunchKernel, "cuLaunchKernel",                                                                      \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, \
     void **))                                                                                             \
  X(cuGetErrorName, "cuGetErrorName", (CUresult, const char **))                                           \
  X(cuGetErrorString, "cuGetErrorString", (CUresult, const char **))                                       \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream, int))                                      \
  X(cuStreamEndCapture, "cuStreamEndCapture", (CUstream, CUgraph *))                                       \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", (CUgraphExec *, CUgraph, unsigned long long)) \
  X(cuGraphLaunch, "cuGraphLaunch", (CUgraphExec, CUstream))                                               \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec))                                               \
  X(cuGraphDestroy, "cuGraphDestroy", (CUgraph))

static struct {
#define X(n, sym, params) CUresult(*n) params;
  CU_FNS(X)
#undef X
} cu;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_err[512]; /* empty when the driver loaded and initialized */

static void load_driver(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(load_err, sizeof load_err,
             "the NVIDIA driver's CUDA library (libcuda.so.1) cannot be loaded (%s); this model was compiled "
             "for CUDA and runs only where the NVIDIA driver is installed",
             e ? e : "not found");
    return;
  }
#define X(n, sym, params)                                                                               \
  if (!(*(void **)&cu.n = dlsym(h, sym))) {                                                             \
    snprintf(load_err, sizeof load_err, "the CUDA driver library libcuda.so.1 has no %s (too old)", sym); \
    return;                                                                                             \
  }
  CU_FNS(X)
#undef X
  CUresult r = cu.cuInit(0);
  if (r != 0) {
    const char *nm = NULL;
    if (cu.cuGetErrorName(r, &nm) != 0) nm = NULL;
    snprintf(load_err, sizeof load_err, "the CUDA driver cannot start: cuInit failed with %s (%d)%s",
             nm ? nm : "an error", r, r == 100 ? ": no CUDA device is present" : "");
  }
}

typedef struct fn_entry {
  const char *name; /* the key: the launching code's constant string */
  CUfunction fn;
} fn_entry;

typedef struct ws_entry {
  CUdeviceptr p;
  uint64_t cap;
  int used;
} ws_entry;

struct mlc_rt_cuda {
  CUdevice dev;
  CUcontext ctx;
  CUstream stream;
  CUmodule mod;
  CUdeviceptr weights, err_word;
  fn_entry *fns; /* open addressing by the name's address; capacity nfn_cap (a power of 2) */
  CUgraphExec exec; /* a run's launches, captured (mlc_rt_cuda_capture_end), or NULL */
  int capturing;
  int nfn, nfn_cap;
  char err[1024];
};

static int fail(mlc_rt_cuda *c, CUresult r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(mlc_rt_cuda *c, CUresult r, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  const char *nm = NULL, *text = NULL;
  if (cu.cuGetErrorName && cu.cuGetErrorName(r, &nm) != 0) nm = NULL;
  if (cu.cuGetErrorString && cu.cuGetErrorString(r, &text) != 0) text = NULL;
  snprintf(c->err, sizeof c->err, "CUDA: %s: %s (%d)%s%s", what, nm ? nm : "error", r, text ? ": " : "",
           text ? text : "");
  return -1;
}

/* The session's context current on this thread until leave(). */
static int enter(mlc_rt_cuda *c) {
  CUresult r = cu.cuCtxPushCurrent(c->ctx);
  return r ? fail(c, r, "making the session's context current") : 0;
}

static void leave(mlc_rt_cuda *c) {
  CUcontext old;
  (void)cu.cuCtxPopCurrent(&old);
}

const char *mlc_rt_cuda_error(const mlc_rt_cuda *c) { return c ? c->err : "no CUDA session"; }
void *mlc_rt_cuda_weights(const mlc_rt_cuda *c) { return (void *)(uintptr_t)c->weights; }
void *mlc_rt_cuda_stream(const mlc_rt_cuda *c) { return c ? (void *)c->stream : NULL; }

int mlc_rt_cuda_create(int device_id, const char *ptx, const void *weights, uint64_t weights_size,
                       mlc_rt_cuda **out, char *err, size_t errlen) {
  *out = NULL;
  pthread_once(&load_once, load_driver);
  if (load_err[0]) {
    snprintf(err, errlen, "%s", load_err);
    return -1;
  }
  int count = 0;
  CUresult r = cu.cuDeviceGetCount(&count);
  if (r != 0 || count <= 0) {
    snprintf(err, errlen, "no CUDA device is present (this model was compiled for CUDA)");
    return -1;
  }
  if (device_id < 0 || device_id >= count) {
    snprintf(err, errlen, "CUDA device %d does not exist (%d present)", device_id, count);
    return -1;
  }
  mlc_rt_cuda *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  int rc = 0;
  if ((r = cu.cuDeviceGet(&c->dev, device_id))) rc = fail(c, r, "cuDeviceGet(%d)", device_id);
  if (!rc && (r = cu.cuDevicePrimaryCtxRetain(&c->ctx, c->dev))) {
    c->ctx = NULL;
    rc = fail(c, r, "retaining device %d's primary context", device_id);
  }
  int entered = !rc && enter(c) == 0;
  if (!rc && !entered) rc = -1;
  if (!rc && (r = cu.cuStreamCreate(&c->stream, CU_STREAM_NON_BLOCKING))) {
    c->stream = NULL;
    rc = fail(c, r, "creating a stream");
  }
  if (!rc && ptx && *ptx) { /* a model of library calls alone has no kernels */
    char log[4096] = "";
    int opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
    if ((r = cu.cuModuleLoadDataEx(&c->mod, ptx, 2, opts, vals))) {
      c->mod = NULL;
      log[sizeof log - 1] = 0;
      rc = fail(c, r, "loading the model's kernels (PTX)%s%s", log[0] ? ": " : "", log);
    }
  }
  if (!rc && (r = cu.cuMemAlloc(&c->err_word, 4 * sizeof(int64_t)))) {
    c->err_word = 0;
    rc = fail(c, r, "allocating the error word");
  }
  if (!rc && (r = cu.cuMemsetD8Async(c->err_word, 0, 4 * sizeof(int64_t), c->stream)))
    rc = fail(c, r, "clearing the error word");
  if (!rc && weights_size) {
    if ((r = cu.cuMemAlloc(&c->weights, (size_t)weights_size))) {
      c->weights = 0;
      rc = fail(c, r, "allocating %llu bytes of device memory for the weights", (unsigned long long)weights_size);
    } else if ((r = cu.cuMemcpyHtoDAsync(c->weights, weights, (size_t)weights_size, c->stream))) {
      rc = fail(c, r, "copying the weights to the device");
    }
  }
  if (!rc && (r = cu.cuStreamSynchronize(c->stream))) rc = fail(c, r, "waiting for the weights");
  if (entered) leave(c);
  if (rc) {
    snprintf(err, errlen, "%s", c->err);
    mlc_rt_cuda_free(c);
    return -1;
  }
  *out = c;
  return 0;
}

void mlc_rt_cuda_free(mlc_rt_cuda *c) {
  if (!c) return;
  if (c->ctx && enter(c) == 0) {
    if (c->stream) (void)cu.cuStreamSynchronize(c->stream);
    if (c->exec) (void)cu.cuGraphExecDestroy(c->exec);
    if (c->weights) (void)cu.cuMemFree(c->weights);
    if (c->err_word) (void)cu.cuMemFree(c->err_word);
    if (c->mod) (void)cu.cuModuleUnload(c->mod);
    if (c->stream) (void)cu.cuStreamDestroy(c->stream);
    leave(c);
  }
  if (c->ctx) (void)cu.cuDevicePrimaryCtxRelease(c->dev);
  free(c->fns);
  free(c);
}

int mlc_rt_cuda_alloc(mlc_rt_cuda *c, uint64_t n, void **out) {
  *out = NULL;
  if (enter(c)) return -1;
  CUdeviceptr p = 0;
  CUresult r = cu.cuMemAlloc(&p, (size_t)(n ? n : 1));
  leave(c);
  if (r) return fail(c, r, "allocating %llu bytes of device memory", (unsigned long long)n);
  *out = (void *)(uintptr_t)p;
  return 0;
}

void mlc_rt_cuda_release(mlc_rt_cuda *c, void *p) {
  if (!p || enter(c)) return;
  (void)cu.cuMemFree((CUdeviceptr)(uintptr_t)p);
  leave(c);
}

int mlc_rt_cuda_to_device(mlc_rt_cuda *c, void *dst, const void *src, uint64_t n) {
  if (!n) return 0;
  if (enter(c)) return -1;
  CUresult r = cu.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)dst, src, (size_t)n, c->stream);
  leave(c);
  return r ? fail(c, r, "copying %llu bytes to the device", (unsigned long long)n) : 0;
}

int mlc_rt_cuda_to_host(mlc_rt_cuda *c, void *dst, const void *src, uint64_t n) {
  if (!n) return 0;
  if (enter(c)) return -1;
  CUresult r = cu.cuMemcpyDtoHAsync(dst, (CUdeviceptr)(uintptr_t)src, (size_t)n, c->stream);
  leave(c);
  return r ? fail(c, r, "copying %llu bytes from the device", (unsigned long long)n) : 0;
}

int mlc_rt_cuda_sync(mlc_rt_cuda *c) {
  if (enter(c)) return -1;
  CUresult r = cu.cuStreamSynchronize(c->stream);
  leave(c);
  return r ? fail(c, r, "running the model's kernels") : 0;
}

static size_t hash_ptr(const void *p, int cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)(x & (uint64_t)(cap - 1));
}

static CUfunction find_fn(mlc_rt_cuda *c, const char *name) {
  if (c->nfn_cap) {
    for (size_t i = hash_ptr(name, c->nfn_cap);; i = (i + 1) & (size_t)(c->nfn_cap - 1)) {
      if (c->fns[i].name == name) return c->fns[i].fn;
      if (!c->fns[i].name) break;
    }
  }
  CUfunction fn = NULL;
  if (!c->mod) {
    snprintf(c->err, sizeof c->err, "CUDA: the model has no device code, but a step launches kernel %s", name);
    return NULL;
  }
  CUresult r = cu.cuModuleGetFunction(&fn, c->mod, name);
  if (r) {
    fail(c, r, "the model's device code has no kernel %s", name);
    return NULL;
  }
  if (2 * (c->nfn + 1) > c->nfn_cap) { /* grow, keeping the load under 1/2 */
    int cap = c->nfn_cap ? 2 * c->nfn_cap : 64;
    fn_entry *t = calloc((size_t)cap, sizeof *t);
    if (!t) return fn; /* works uncached */
    for (int i = 0; i < c->nfn_cap; i++)
      if (c->fns[i].name) {
        size_t j = hash_ptr(c->fns[i].name, cap);
        while (t[j].name) j = (j + 1) & (size_t)(cap - 1);
        t[j] = c->fns[i];
      }
    free(c->fns);
    c->fns = t;
    c->nfn_cap = cap;
  }
  size_t j = hash_ptr(name, c->nfn_cap);
  while (c->fns[j].name) j = (j + 1) & (size_t)(c->nfn_cap - 1);
  c->fns[j].name = name;
  c->fns[j].fn = fn;
  c->nfn++;
  return fn;
}

int mlc_rt_cuda_launch(mlc_rt_cuda *c, const char *name, const int64_t *dims, void **params, int32_t nparams) {
  for (int i = 0; i < 6; i++) {
    if (dims[i] == 0) return 0; /* nothing to compute */
    if (dims[i] < 0 || dims[i] > (i < 3 ? 0x7fffffffLL : 1024))
      return snprintf(c->err, sizeof c->err, "CUDA: kernel %s: launch dimension %d is %lld", name, i,
                      (long long)dims[i]),
             -1;
  }
  if (nparams < 0 || nparams > 4096)
    return snprintf(c->err, sizeof c->err, "CUDA: kernel %s: %d parameters", name, nparams), -1;
  void *stack[64];
  void **p = nparams + 1 <= 64 ? stack : malloc(sizeof *p * ((size_t)nparams + 1));
  if (!p) return snprintf(c->err, sizeof c->err, "out of memory"), -1;
  for (int32_t i = 0; i < nparams; i++) p[i] = params[i];
  p[nparams] = &c->err_word;
  int rc = enter(c);
  if (!rc) {
    CUfunction fn = find_fn(c, name);
    if (!fn) rc = -1;
    CUresult r = rc ? 0
                    : cu.cuLaunchKernel(fn, (unsigned)dims[0], (unsigned)dims[1], (unsigned)dims[2],
                                        (unsigned)dims[3], (unsigned)dims[4], (unsigned)dims[5], 0, c->stream, p,
                                        NULL);
    if (r) rc = fail(c, r, "launching kernel %s (grid %lldx%lldx%lld, block %lldx%lldx%lld)", name,
                     (long long)dims[0], (long long)dims[1], (long long)dims[2], (long long)dims[3],
                     (long long)dims[4], (long long)dims[5]);
    leave(c);
  }
  if (p != stack) free(p);
  return rc;
}

int64_t mlc_rt_cuda_check(mlc_rt_cuda *c, int64_t *vals) {
  int64_t w[4];
  if (c->capturing) return snprintf(c->err, sizeof c->err, "CUDA: a check of model data waits, which a capture cannot"), -1;
  if (enter(c)) return -1;
  CUresult r = cu.cuMemcpyDtoHAsync(w, c->err_word, sizeof w, c->stream);
  if (!r) r = cu.cuStreamSynchronize(c->stream);
  if (!r && w[0]) r = cu.cuMemsetD8Async(c->err_word, 0, sizeof w, c->stream);
  leave(c);
  if (r) return fail(c, r, "reading the kernels' error word");
  if (w[0]) memcpy(vals, w + 1, 3 * sizeof *vals);
  return w[0];
}

/* ---- a run as a CUDA graph ------------------------------------------------ */

int mlc_rt_cuda_capture_begin(mlc_rt_cuda *c) {
  if (enter(c)) return -1;
  CUresult r = cu.cuStreamBeginCapture(c->stream, CU_STREAM_CAPTURE_MODE_RELAXED);
  leave(c);
  if (r) return fail(c, r, "starting to capture a run");
  c->capturing = 1;
  return 0;
}

int mlc_rt_cuda_capture_end(mlc_rt_cuda *c, int keep) {
  if (!c->capturing) return -1;
  c->capturing = 0;
  if (enter(c)) return -1;
  CUgraph g = NULL;
  CUresult r = cu.cuStreamEndCapture(c->stream, &g);
  int rc = 0;
  if (r) rc = fail(c, r, "capturing a run");
  mlc_rt_cuda_graph_drop(c);
  if (!rc && keep && g && (r = cu.cuGraphInstantiateWithFlags(&c->exec, g, 0))) {
    c->exec = NULL;
    rc = fail(c, r, "instantiating a run's graph");
  }
  if (g) (void)cu.cuGraphDestroy(g);
  leave(c);
  return rc;
}

int mlc_rt_cuda_graph_ready(const mlc_rt_cuda *c) { return c && c->exec; }

void mlc_rt_cuda_graph_drop(mlc_rt_cuda *c) {
  if (!c || !c->exec) return;
  (void)cu.cuGraphExecDestroy(c->exec);
  c->exec = NULL;
}

int mlc_rt_cuda_graph_launch(mlc_rt_cuda *c) {
  if (!c->exec || enter(c)) return -1;
  CUresult r = cu.cuGraphLaunch(c->exec, c->stream);
  leave(c);
  return r ? fail(c, r, "launching a run's graph") : 0;
}
