/*
** lower.h: graph IR -> TensorIR (boundary of lower/, the input side).
**
** Legalization turns every high-level op call of a graph module into a
** prim function built with the tensor-expression builder (lower/te.h), and
** rewrites the binding in place into destination-passing
** `call_tir(prim_func, args)` with the same output struct info.  Identical
** calls (same op, attributes and argument/output types) share one prim
** function.  Scalar constants may be folded into the prim function as
** immediates, in which case they leave the call's argument list.
*/
#ifndef MLC_LOWER_LOWER_H
#define MLC_LOWER_LOWER_H

#include "graph/graph.h"
#include "lower/tir.h"

/*
** Run-time shapes: legalization turns define_dims into
** call_dps_packed(MLC_LOWER_BIND_SYMS, [v], attrs dims, offset), which the
** archiver emits as the runtime's BIND_SYMS step, and the shape functions
** (reshape_dims, slice_params, ...) and nonzero into call_dps_packed of the
** runtime's built-ins "mlc.<op name>", whose int attributes the archiver
** passes as trailing immediates in attribute order.
*/
#define MLC_LOWER_BIND_SYMS "mlc.define_dims"

typedef struct mlc_lower_options {
  int num_threads;     /* threads the model is expected to run on (0: unknown) */
  int no_parallel;     /* 1: keep every loop serial */
  int no_vectorize;    /* 1: no vector loops in the default schedule */
  int vector_bits;     /* the target's widest vector (128, 256, 512; 0: 512) */
  int device;          /* 0: the CPU; 1: CUDA (the GPU schedule: bound thread loops) */
} mlc_lower_options;

/*
** Legalizes every MLC_CALL_OP binding of every function of |gm| into a prim
** function added to |tm| and rewrites the binding to MLC_CALL_TIR.  |gm| is
** modified; |tm| receives the functions.  Errors name the ONNX node and op
** (MLC_UNIMPLEMENTED for ops or dtypes without a lowering rule).
*/
MLC_MUST_USE mlc_status mlc_lower_legalize(mlc_module *gm, mlc_tir_module *tm,
                                           const mlc_lower_options *opt);

/* The trace each prim function was scheduled with: text[i] for the
** module's function i (as mlc_sch_print_trace writes it; "" for none),
** and before[i] the function it was applied to (in the module's arena). */
typedef struct mlc_lower_traces {
  int n;
  char **text;
  const mlc_tir_func **before;
} mlc_lower_traces;

/*
** The default CPU schedule of every prim function of |tm|, applied as
** schedule primitives (lower/schedule/schedule.h; rules in
** lower/schedule_default.c): stages of a kernel read once are inlined into
** their reader, a reduction's epilogue moves under its outer spatial loop,
** innermost loops become vectors, and the outermost spatial loop nest of
** each stage with enough work runs in parallel on the runtime's thread
** pool.  Each function is replaced by its scheduled copy.
** |traces| (may be NULL) receives the traces; free with
** mlc_lower_traces_free (also after an error).
*/
MLC_MUST_USE mlc_status mlc_lower_default_schedule(mlc_tir_module *tm, const mlc_lower_options *opt,
                                                   mlc_lower_traces *traces);
void mlc_lower_traces_free(mlc_lower_traces *t);

/*
** The lowering passes of the one pipeline (graph/pipeline.c), with the
** graph passes' signature.  They work on the module's prim functions
** (m->prims, created by the first of them that needs it):
**   fuse_tir   every call of a primitive graph function (a fused group)
**              becomes call_tir of one prim function built from all its ops
**              (lower/fuse_tir.c); the primitive functions leave the module
**   legalize   every remaining op call becomes call_tir (mlc_lower_legalize)
**   schedule   the default schedule of every prim function (traces into
**              ctx->opt->traces when asked)
**   lower_tir  the TIR lowering passes (lower/tir_lower.h): flat loops and
**              buffers, what codegen reads
*/
struct mlc_pass_ctx;
MLC_MUST_USE mlc_status mlc_lower_pass_fuse_tir(mlc_module *m, const struct mlc_pass_ctx *ctx);
MLC_MUST_USE mlc_status mlc_lower_pass_legalize(mlc_module *m, const struct mlc_pass_ctx *ctx);
MLC_MUST_USE mlc_status mlc_lower_pass_schedule(mlc_module *m, const struct mlc_pass_ctx *ctx);
MLC_MUST_USE mlc_status mlc_lower_pass_lower_tir(mlc_module *m, const struct mlc_pass_ctx *ctx);
/* The module's prim functions, created empty when it has none yet. */
MLC_MUST_USE mlc_status mlc_lower_prims(mlc_module *m, mlc_tir_module **out);

#endif /* MLC_LOWER_LOWER_H */
