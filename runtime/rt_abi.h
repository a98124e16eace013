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

/* The types (mlc_rt_ctx, mlc_rt_api, mlc_kernel_fn, the argument codes)
** are public, for plugins: mlc/mlc_extern.h. */
#include "mlc/mlc_extern.h"

#endif /* MLC_RUNTIME_RT_ABI_H */
