/*
** rt_abi.h: the ABI between generated kernels and the runtime (STYLE R22).
**
** Every generated kernel (and every external kernel the runtime calls) has
** one calling convention:
**
**   int kernel(void **args, const int32_t *arg_codes, int32_t nargs, mlc_rt_ctx *ctx);
**
** args[i] is a DLTensor* (code MLC_ARG_TENSOR; compact row-major, data at
** data + byte_offset) or a pointer to an int64_t (code MLC_ARG_INT).  The
** kernel returns 0, or nonzero after calling ctx->api->set_error (or
** check_failed).  Kernels
** reach the runtime only through ctx->api, so a kernel object needs no
** symbol from the runtime: the same code runs inside a model .so and in a
** test that supplies its own table.  Parallel loops are outlined into a
** body function and run by ctx->api->parallel_for on the session's threads.
**
** This header is shared by codegen/ (which emits code against it) and
** runtime/ (which implements it); it includes nothing from the compiler.
*/
#ifndef MLC_RUNTIME_RT_ABI_H
#define MLC_RUNTIME_RT_ABI_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#define MLC_RT_ABI_VERSION 2

typedef struct mlc_rt_ctx mlc_rt_ctx;

/* Runs iterations [begin, end) of a parallel loop. 0 ok, nonzero error. */
typedef int (*mlc_rt_parallel_body)(int64_t begin, int64_t end, void *closure);

typedef struct mlc_rt_api {
  /* Splits [0, n) into chunks run on the session's thread pool (the caller
  ** thread takes part); returns when all are done: 0, or the first nonzero
  ** body result. */
  int (*parallel_for)(mlc_rt_ctx *ctx, int64_t n, mlc_rt_parallel_body body, void *closure);
  /* Scratch memory for one kernel call, 64-byte aligned; NULL on failure. */
  void *(*workspace_alloc)(mlc_rt_ctx *ctx, uint64_t nbytes);
  void (*workspace_free)(mlc_rt_ctx *ctx, void *p);
  /* Records an error message for the session; returns -1 for convenience. */
  int (*set_error)(mlc_rt_ctx *ctx, const char *msg);
  /* Records that a check of model data failed (an index out of its
  ** range): |op| is the ONNX op type, |msg| the compiler's constant text in
  ** which "$0", "$1" and "$2" stand for |v0|, |v1| and |v2| in decimal.  The
  ** runtime adds the step's ONNX node.  Returns -1 for convenience.  When
  ** several threads of one parallel loop fail, the message kept is that of
  ** the first failing iteration in loop order. */
  int (*check_failed)(mlc_rt_ctx *ctx, const char *op, const char *msg, int64_t v0, int64_t v1,
                      int64_t v2);
} mlc_rt_api;

/* The context handed to kernels; the runtime's private state follows. */
struct mlc_rt_ctx {
  const mlc_rt_api *api;
};

enum mlc_rt_arg_code {
  MLC_ARG_TENSOR = 0, /* args[i] is a DLTensor* */
  MLC_ARG_INT = 1     /* args[i] points to an int64_t */
};

typedef int (*mlc_kernel_fn)(void **args, const int32_t *arg_codes, int32_t nargs,
                             mlc_rt_ctx *ctx);

#endif /* MLC_RUNTIME_RT_ABI_H */
