/*
** codegen.h: TensorIR -> LLVM IR -> object code (boundary of codegen/).
**
** Every prim function of a TIR module, in the lowered form of
** lower/tir_lower.h (no blocks, one index per access; a function that is
** not is refused with an error), becomes one kernel with the runtime ABI of
** runtime/rt_abi.h:
**
**   int32_t sym(void **args, const int32_t *arg_codes, int32_t nargs, mlc_rt_ctx *ctx)
**
** named by its "global_symbol" attribute.  The kernel checks the argument
** count, each argument's code, rank, dtype and shape (binding scalar
** parameters such as a symbolic `n` from the shapes), and on a mismatch
** calls ctx->api->set_error with a message naming the kernel and returns
** -1.  Parallel loops are outlined into internal functions run through
** ctx->api->parallel_for; scratch buffers come from ctx->api->workspace_alloc
** (or the stack when local and small).  Vector expressions (the
** vectorize pass's T.Ramp, T.Broadcast and masked ifs) become LLVM vector
** operations, contiguous vector loads and stores, masked gathers and
** scatters (llvm_expr.c); a vectorized loop the pass kept stays a loop
** with LLVM's vectorize hint.  float16/bfloat16 are computed in
** float32 and rounded (to nearest even) when stored.  The object needs libm
** and nothing from the runtime.  Output is deterministic: the same module
** and target give the same bytes.
**
** Each call uses its own LLVM context, so builds may run on several
** threads at once.  The module is verified (mlc_tir_verify_module) first.
*/
#ifndef MLC_CODEGEN_CODEGEN_H
#define MLC_CODEGEN_CODEGEN_H

#include <stddef.h>

#include "base/status.h"
#include "codegen/target.h"
#include "lower/tir.h"

/* Compiles |m| for |t| into an object file at |obj_path| (PIC, ready for a
** shared library).  |m| and |t| borrowed. */
MLC_MUST_USE mlc_status mlc_cg_build(const mlc_tir_module *m, const mlc_target *t, const char *obj_path);

/* The same for a CUDA target: the host's object (the kernels' entries,
** which launch the device kernels) at |obj_path|, and the device kernels'
** PTX text in *|devcode| (*|devcode_size| bytes; NULL, 0 when the module
** has none), transferred (mlc_cg_free).  A device kernel is named
** "<kernel symbol>_k<N>" and takes the buffers and scalars it uses, then
** the error word (mlc_rt_api.cuda_launch). */
MLC_MUST_USE mlc_status mlc_cg_build_device(const mlc_tir_module *m, const mlc_target *t, const char *obj_path,
                                            char **devcode, size_t *devcode_size);
/* The same, returning the object in memory: *|out_data| (|*out_size| bytes)
** is transferred to the caller (free with mlc_cg_free). */
MLC_MUST_USE mlc_status mlc_cg_build_mem(const mlc_tir_module *m, const mlc_target *t, void **out_data,
                                         size_t *out_size);

/* The LLVM IR of |m| as text, after LLVM's O3 pipeline when |optimize|.
** *|out_text| transferred (free with mlc_cg_free). */
MLC_MUST_USE mlc_status mlc_cg_emit_llvm_ir(const mlc_tir_module *m, const mlc_target *t, int optimize,
                                            char **out_text);

/*
** Writes the object that carries a compiled model's description for |t|
** to |obj_path|: |blob| (|blob_size| bytes, the encoded description of
** runtime/rt_blob.h, borrowed) as the hidden constant mlc_model_blob in
** its own read-only section ".mlc_model", its size as mlc_model_blob_size,
** and the function table mlc_model_kernels (the |nfns| functions named by
** |fn_syms|, declared here and defined in the kernels' object, then a NULL)
** with its count mlc_model_nkernels, and the device code |devcode|
** (|devcode_size| bytes of PTX, may be 0) as mlc_model_devcode with a NUL
** after it and its size mlc_model_devcode_size.  Everything goes through the LLVM API
** as data: no text of the model is parsed or assembled.
*/
MLC_MUST_USE mlc_status mlc_cg_build_model_object(const mlc_target *t, const void *blob, size_t blob_size,
                                                  const char *devcode, size_t devcode_size,
                                                  const char *const *fn_syms, int nfns, const char *obj_path);

/* Frees memory returned by this module. NULL-safe. */
void mlc_cg_free(void *p);

#endif /* MLC_CODEGEN_CODEGEN_H */
