/*
** rt_cuda.h: what the CUDA providers' run-time wrappers (extern/rt_cublas.c,
** extern/rt_cudnn.c, extern/rt_cublaslt.c) share, as static functions, since each provider is an
** archive of its own that a model links alone: the session's stream, the
** check of device tensors, loading a library by its names, the few CUDA
** driver functions they take from libcuda.so.1, and MLC_CUDA_TF32.
**
** A CUDA model's tensors are in device memory (device_type kDLCUDA, data a
** CUdeviceptr); its table ctx->api has cuda_stream, and the session's
** context is current on the calling thread while a kernel runs
** (mlc/mlc_extern.h).  A CPU model's table has no cuda_stream: the wrappers
** refuse the call.
*/
#ifndef MLC_EXTERN_RT_CUDA_H
#define MLC_EXTERN_RT_CUDA_H

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extern/rt_util.h"

/* The session's CUstream, or NULL (a CPU model, or a table without it). */
static inline void *mlc_ext_cuda_stream(mlc_rt_ctx *ctx) {
  return ctx->api->cuda_stream ? ctx->api->cuda_stream(ctx) : NULL;
}

/* |t| passes mlc_ext_f32 (rt_util.h) and is in CUDA device memory. */
static inline int mlc_ext_cuda_f32(const DLTensor *t, int rank) {
  return mlc_ext_f32(t, rank) && (t->device.device_type == kDLCUDA || t->device.device_type == kDLCUDAManaged);
}

/* The device address of |t|'s first element. */
static inline CUdeviceptr mlc_ext_cuda_ptr(const DLTensor *t) {
  return (CUdeviceptr)(uintptr_t)t->data + (CUdeviceptr)t->byte_offset;
}

/* Whether the byte ranges [a, a + an) and [b, b + bn) share a byte. */
static inline int mlc_ext_cuda_overlap(CUdeviceptr a, size_t an, CUdeviceptr b, size_t bn) {
  return an && bn && a < b + bn && b < a + an;
}

/* 1 when MLC_CUDA_TF32=1 (TF32 tensor cores allowed for float32), else 0. */
static inline int mlc_ext_cuda_tf32(void) {
  const char *s = getenv("MLC_CUDA_TF32");
  return s && strcmp(s, "1") == 0;
}

/* A library's functions, each stored into its pointer |slot| (|size|
** bytes, a function pointer) by name. */
typedef struct mlc_ext_sym {
  const char *name;
  void *slot;
  size_t size;
} mlc_ext_sym;

/* Takes every function of |syms| (|n|) from |h| (the library |lib|); 0, or
** -1 with "LIB has no NAME (dlerror)" in |err|. */
static inline int mlc_ext_dlsym_all(void *h, const char *lib, const mlc_ext_sym *syms, size_t n, char *err,
                                    size_t errlen) {
  for (size_t i = 0; i < n; i++) {
    void *sym = dlsym(h, syms[i].name);
    if (!sym) {
      const char *e = dlerror();
      snprintf(err, errlen, "%s has no %s (%s)", lib, syms[i].name, e ? e : "?");
      return -1;
    }
    memcpy(syms[i].slot, &sym, syms[i].size < sizeof sym ? syms[i].size : sizeof sym);
  }
  return 0;
}

/*
** dlopens the library named by the environment variable |env| when it is
** set (that one only), else the first of |names| (NULL-terminated) that
** loads, whose name goes to *|out_name|; RTLD_NODELETE, since the handles
** a session keeps outlive the model.  NULL with "cannot load NAME (why);
** NAME2 (why)" in |err| (|n| bytes).
*/
static inline void *mlc_ext_cuda_dlopen(const char *env, const char *const *names, const char **out_name, char *err,
                                        size_t n) {
  const char *one[2] = {getenv(env), NULL};
  if (one[0] && one[0][0]) names = one;
  size_t at = (size_t)snprintf(err, n, "cannot load");
  for (int i = 0; names[i]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (h) {
      err[0] = 0;
      *out_name = names[i];
      return h;
    }
    const char *e = dlerror();
    if (at < n) at += (size_t)snprintf(err + at, n - at, "%s %s (%s)", i ? ";" : "", names[i], e ? e : "?");
  }
  if (one[0] && one[0][0] && at < n) snprintf(err + at, n - at, " [from %s]", env);
  return NULL;
}

/* The CUDA driver functions the wrappers use. */
typedef struct mlc_ext_cu {
  __typeof__(cuGetErrorName) *get_error_name;
  __typeof__(cuGetErrorString) *get_error_string;
  __typeof__(cuMemcpyDtoDAsync_v2) *memcpy_dtod_async;
  __typeof__(cuMemcpyHtoDAsync_v2) *memcpy_htod_async;
  __typeof__(cuMemsetD32Async) *memset_d32_async;
} mlc_ext_cu;

/* Loads libcuda.so.1 (the NVIDIA driver) into |cu|: 0, or -1 with why in |err|. */
static inline int mlc_ext_cuda_driver_load(mlc_ext_cu *cu, char *err, size_t n) {
  static const char *const names[] = {"libcuda.so.1", NULL};
  const char *lib = NULL;
  void *h = mlc_ext_cuda_dlopen("MLC_CUDA_DRIVER_LIBRARY", names, &lib, err, n);
  if (!h) return -1;
  static const char *const syms[] = {"cuGetErrorName", "cuGetErrorString", "cuMemcpyDtoDAsync_v2",
                                     "cuMemcpyHtoDAsync_v2", "cuMemsetD32Async"};
  void *p[5];
  for (int i = 0; i < 5; i++)
    if (!(p[i] = dlsym(h, syms[i]))) {
      const char *e = dlerror();
      snprintf(err, n, "%s has no %s (%s)", lib, syms[i], e ? e : "?");
      return -1;
    }
  memcpy(&cu->get_error_name, &p[0], sizeof p[0]);
  memcpy(&cu->get_error_string, &p[1], sizeof p[1]);
  memcpy(&cu->memcpy_dtod_async, &p[2], sizeof p[2]);
  memcpy(&cu->memcpy_htod_async, &p[3], sizeof p[3]);
  memcpy(&cu->memset_d32_async, &p[4], sizeof p[4]);
  return 0;
}

/*
** A provider's library loaded whole: dlopened (|env|, |names| as
** mlc_ext_cuda_dlopen), its functions |syms| (|nsyms|) taken, its version
** checked when |version| is not NULL (*|version|, one of |syms|, returns
** MAJOR * 10000 + ...; the library is |what| in the message) against
** |major|, and the driver loaded into |cu|: 0, or -1 with why in |err|.
*/
static inline int mlc_ext_cuda_load(const char *env, const char *const *names, const mlc_ext_sym *syms,
                                    size_t nsyms, size_t (*const *version)(void), int major, const char *what,
                                    mlc_ext_cu *cu, char *err, size_t n) {
  const char *lib = NULL;
  void *h = mlc_ext_cuda_dlopen(env, names, &lib, err, n);
  if (!h || mlc_ext_dlsym_all(h, lib, syms, nsyms, err, n)) return -1;
  size_t v = version ? (*version)() : 0;
  if (version && v / 10000 != (size_t)major) {
    snprintf(err, n, "%s is %s %zu.%zu.%zu; this build wants %s %d", lib, what, v / 10000, v / 100 % 100, v % 100,
             what, major);
    return -1;
  }
  return mlc_ext_cuda_driver_load(cu, err, n);
}

/* |r| in words, "CUDA_ERROR_...: description", into |buf| (|n| bytes). */
static inline const char *mlc_ext_cu_error(const mlc_ext_cu *cu, CUresult r, char *buf, size_t n) {
  const char *name = NULL, *desc = NULL;
  if (cu->get_error_name) cu->get_error_name(r, &name);
  if (cu->get_error_string) cu->get_error_string(r, &desc);
  if (name && desc) snprintf(buf, n, "%s: %s", name, desc);
  else if (name || desc) snprintf(buf, n, "%s", name ? name : desc);
  else snprintf(buf, n, "CUresult %d", (int)r);
  return buf;
}

#endif /* MLC_EXTERN_RT_CUDA_H */
