/*
** rt_ext.h: the providers' run-time wrappers (extern/rt_<provider>.c), in
** the calling convention of mlc/mlc_extern.h.  The compiler's registry
** (extern/registry.c) names them by these symbols; the archiver links the
** provider's archive into a model.so that calls one.  Their arguments are
** those extern.h lists for each function.
*/
#ifndef MLC_EXTERN_RT_EXT_H
#define MLC_EXTERN_RT_EXT_H

#include <stddef.h>

#include "mlc/mlc_extern.h"

int mlc_ext_openblas_matmul(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);
int mlc_ext_openblas_conv2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);
/* The kernels OpenBLAS chose, into |buf| (|n| bytes): 0, or -1 with why it cannot be loaded. */
int mlc_ext_openblas_coretype(char *buf, size_t n);

int mlc_ext_onednn_conv2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);
int mlc_ext_onednn_matmul(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);
int mlc_ext_onednn_max_pool2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);
int mlc_ext_onednn_avg_pool2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);
int mlc_ext_onednn_softmax(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);

/* CUDA models only (every tensor in device memory, ctx->api->cuda_stream
** set): the same arguments as openblas.matmul and the oneDNN functions. */
int mlc_ext_cublas_matmul(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);
/* A, B, [bias], Y, has_bias, act: cublaslt.matmul (extern.h). */
int mlc_ext_cublaslt_matmul(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);

int mlc_ext_cudnn_conv2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);
int mlc_ext_cudnn_max_pool2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);
int mlc_ext_cudnn_avg_pool2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);
int mlc_ext_cudnn_softmax(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);

#endif /* MLC_EXTERN_RT_EXT_H */
