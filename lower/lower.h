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

/*
** Tuning.  The default CPU rules have decision points (rule T's tile rows
** and columns, where its column loop goes, whether a padded copy moves
** under the tile, rule 1's vector split, rule R's lanes, rule 2's chunk
** count).  Without a mlc_lower_tuning each takes its default and nothing
** is recorded: the schedule and its trace are the default ones.  With
** one, each is a sample_categorical over its candidates (the default is
** candidate 0) recorded in the trace, so the trace replays: the i-th
** decision takes forced[i] (a candidate index, reduced modulo the
** candidates; < 0 or i >= nforced: drawn with |seed|), and the decisions
** taken are reported in order.
*/
#define MLC_LOWER_MAX_DECISIONS 32
#define MLC_LOWER_MAX_CANDIDATES 12

typedef struct mlc_lower_tuning {
  uint64_t seed;
  int nforced;
  const int64_t *forced; /* borrowed */
  /* out: the decisions taken (candidate indices) and their candidate counts */
  int ndecisions;
  int64_t decisions[MLC_LOWER_MAX_DECISIONS];
  int ncandidates[MLC_LOWER_MAX_DECISIONS];
} mlc_lower_tuning;

/* A tuned schedule for prim function |f| (unscheduled): a trace text
** (borrowed, valid during the schedule pass), or NULL for the rules. */
typedef const char *(*mlc_lower_tuned_fn)(void *user, const mlc_tir_func *f);

typedef struct mlc_lower_options {
  int num_threads;     /* threads the model is expected to run on (0: unknown) */
  int no_parallel;     /* 1: keep every loop serial */
  int no_vectorize;    /* 1: no vector loops in the default schedule */
  int vector_bits;     /* the target's widest vector (128, 256, 512; 0: 512) */
  int device;          /* 0: the CPU; 2: CUDA (the GPU schedule: bound thread loops); 1: the GPU
                          schedule in CPU code, thread loops serial (tests) */
  mlc_lower_tuning *tune; /* NULL: the default rules (see above) */
  mlc_lower_tuned_fn tuned; /* NULL: no tuned schedules */
  void *tuned_user;
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
  /* tuned[i]: 1 when function i was scheduled by a tuned trace
  ** (mlc_lower_options.tuned), -1 when its tuned trace did not replay and
  ** the rules scheduled it, 0 when it had none; why[i] says why not (-1) */
  int *tuned;
  char **why;
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
** The default schedule of one function (as mlc_lower_default_schedule, with
** |opt|'s tuning decisions): a copy of |f| (from any module; unchanged)
** scheduled in |tm|, *|out| the scheduled function (in |tm|'s arena, not
** added to it) and *|trace| (may be NULL; transferred, mlc_mem_free) its
** trace.
*/
MLC_MUST_USE mlc_status mlc_lower_schedule_func(mlc_tir_module *tm, const mlc_tir_func *f,
                                                const mlc_lower_options *opt, mlc_tir_func **out, char **trace);
/* Replays the trace text |trace| on a copy of |f| in |tm|: *|out| as above.
** A trace that does not replay is an error that says which line and why. */
MLC_MUST_USE mlc_status mlc_lower_replay_trace(mlc_tir_module *tm, const mlc_tir_func *f, const char *trace,
                                               mlc_tir_func **out);
/* The structural key of the unscheduled function |f|: 16 hex digits of the
** SHA-256 of its TIR text with its own name left out, so that two kernels
** of the same structure and shapes have the same key. */
void mlc_lower_func_key(const mlc_tir_func *f, char hex[17]);

/*
** The cost model's features of the lowered function |f| (lower/tir_features.c):
** floating-point operations, bytes accessed, arithmetic intensity, the
** share of vector work and lanes, unrolled and parallel extents, loop
** counts and depth, local bytes, estimated traffic into caches of 32 KiB,
** 1 MiB and 32 MiB, ... (log scales).  Out of memory is the only error.
*/
#define MLC_LOWER_NFEATURES 20
MLC_MUST_USE mlc_status mlc_lower_features(const mlc_tir_func *f, float out[MLC_LOWER_NFEATURES]);

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
