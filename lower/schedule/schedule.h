/*
** schedule.h: TensorIR schedules (boundary of lower/schedule/).
**
** A schedule is a state over one prim function that primitives rewrite
** (split, reorder, compute_at, ...) without changing what it computes,
** as in the seeds' "tensor program transformation":
**
**   mlc_sch *s;  mlc_sch_create(m, mm_relu, 0, &s);
**   mlc_sch_rv b, l[3], lj[2];  int n;
**   mlc_sch_get_block(s, "Y", &b);
**   mlc_sch_get_loops(s, b, 3, l, &n);
**   mlc_sch_split(s, l[1], 2, (mlc_sch_arg[]){MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(4)}, lj);
**   ...
**   mlc_sch_func(s)        -> the scheduled function
**   mlc_sch_print_trace(s) -> b0 = sch.get_block(name="Y") ...
**
** Handles.  Blocks, loops and sampled integers are addressed by handles
** (mlc_sch_rv, "random variables" in the seeds' words), small positive
** integers that stay valid across rewrites: a loop a primitive does not
** replace keeps its handle.  A primitive that removes a loop or block (fuse
** removes the loops it fuses, split the loop it splits, compute_inline the
** block it inlines) retires its handles; using a retired handle is an
** MLC_SCH_ERR_HANDLE error that says which primitive removed it.
**
** Legality.  Every primitive checks that its rewrite keeps the meaning of
** the function before changing anything, and otherwise fails with a status
** (INVALID_ARGUMENT) whose message names the primitive, the block or loop
** and why not, and sets the error class below (mlc_sch_last_error).  A
** failed primitive leaves the state as it was and is not recorded.  After
** every primitive the function is verified (mlc_tir_verify_func); a
** primitive that broke it is an INTERNAL error.
**
** Trace.  Every applied primitive (lookups included) is recorded as an
** instruction: its kind, keyword arguments, output handles and, for the
** sampling instructions, the decision taken.  A trace prints as text,
**
**   b0 = sch.get_block(name="Y")
**   l1, l2, l3 = sch.get_loops(block=b0)
**   v4, v5 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16, decision=[32, 4])
**   l6, l7 = sch.split(loop=l2, factors=[v4, v5])
**   sch.reorder(ordered_loops=[l1, l6, l3, l7])
**
** and the text replays on a fresh schedule of the same function
** (mlc_sch_apply_trace), decisions included: replay gives the same function.
** A trace is what a tuning log stores.
**
** Instructions.  Each primitive is a row of lower/schedule/prims.def and a
** file lower/schedule/NAME.c with its typed entry point (below) and its
** apply function, which reads an instruction's arguments (sched_int.h).
** The typed entry points build an instruction and run it through
** mlc_sch_apply, so a call from C and a replayed line behave the same.
**
** Memory: the scheduled function and everything it holds live in the
** module's arena (like every TIR node); the trace and handle table belong
** to the schedule and go with mlc_sch_destroy.
*/
#ifndef MLC_LOWER_SCHEDULE_SCHEDULE_H
#define MLC_LOWER_SCHEDULE_SCHEDULE_H

#include <stdint.h>

#include "base/status.h"
#include "base/strbuf.h"
#include "lower/tir.h"

typedef struct mlc_sch mlc_sch;

/* A handle: > 0; 0 is "no handle". */
typedef int mlc_sch_rv;

typedef enum mlc_sch_rv_kind {
  MLC_SCH_RV_NONE = 0,
  MLC_SCH_RV_BLOCK, /* printed b<N> */
  MLC_SCH_RV_LOOP,  /* printed l<N>; may also be a compute location "root" / "inline" */
  MLC_SCH_RV_INT    /* printed v<N>: a sampled integer */
} mlc_sch_rv_kind;

/* The most outputs one instruction has (get_loops of a deep nest, split). */
#define MLC_SCH_MAX_OUTS 64

/* X(ENUM, short description) -- the class of a refused primitive. */
#define MLC_SCH_ERRORS(X)                                                           \
  X(HANDLE, "bad handle")                  /* unknown, retired or wrong kind */    \
  X(NOT_FOUND, "no such block")            /* get_block: no block of that name */  \
  X(AMBIGUOUS, "ambiguous block name")     /* get_block: several blocks */         \
  X(ARGUMENT, "bad argument")              /* missing/ill-typed argument */        \
  X(FACTORS, "bad split factors")          /* product does not cover the extent */ \
  X(LOOP_NEST, "loops not in one nest")    /* not nested, not adjacent, repeated */\
  X(DEPENDENCE, "order dependence")        /* would reorder dependent work */      \
  X(REDUCTION, "reduction loop")           /* parallel/vectorize a reduce loop */  \
  X(NOT_AFFINE, "non-affine binding")      /* bindings are not an affine map */    \
  X(REGION, "region not covered")          /* compute_at cannot cover a region */  \
  X(NOT_INLINABLE, "cannot inline")        /* not a single elementwise store */    \
  X(LOCATION, "bad compute location")      /* loop does not enclose consumers */   \
  X(STRUCTURE, "unsupported structure")    /* block shape the primitive needs */   \
  X(TENSORIZE, "no intrinsic match")       /* block does not match the intrinsic */\
  X(TRACE, "bad trace")                    /* text of a trace */                   \
  X(SAMPLE, "bad decision")                /* a recorded decision is invalid */

typedef enum mlc_sch_error {
  MLC_SCH_OK = 0,
#define X(e, d) MLC_SCH_ERR_##e,
  MLC_SCH_ERRORS(X)
#undef X
  MLC_SCH_ERR_COUNT
} mlc_sch_error;

/* The short description of |e| (static storage). */
const char *mlc_sch_error_name(mlc_sch_error e);

/* ---- instruction arguments ------------------------------------------------ */

typedef enum mlc_sch_arg_kind {
  MLC_SCH_ARG_NONE = 0, /* None */
  MLC_SCH_ARG_INT,
  MLC_SCH_ARG_FLOAT,
  MLC_SCH_ARG_STR,
  MLC_SCH_ARG_RV,  /* a handle */
  MLC_SCH_ARG_LIST /* [items]; items are not lists */
} mlc_sch_arg_kind;

typedef struct mlc_sch_arg {
  const char *key; /* keyword in an instruction; NULL in list items */
  mlc_sch_arg_kind kind;
  int64_t i;
  double f;
  const char *s;
  mlc_sch_rv rv;
  int n;
  const struct mlc_sch_arg *items;
} mlc_sch_arg;

#define MLC_SCH_NONE_ARG ((mlc_sch_arg){NULL, MLC_SCH_ARG_NONE, 0, 0, NULL, 0, 0, NULL})
#define MLC_SCH_INT_ARG(v) ((mlc_sch_arg){NULL, MLC_SCH_ARG_INT, (v), 0, NULL, 0, 0, NULL})
#define MLC_SCH_RV_ARG(h) ((mlc_sch_arg){NULL, MLC_SCH_ARG_RV, 0, 0, NULL, (h), 0, NULL})
#define MLC_SCH_STR_ARG(v) ((mlc_sch_arg){NULL, MLC_SCH_ARG_STR, 0, 0, (v), 0, 0, NULL})
#define MLC_SCH_FLOAT_ARG(v) ((mlc_sch_arg){NULL, MLC_SCH_ARG_FLOAT, 0, (v), NULL, 0, 0, NULL})

/* ---- the state -------------------------------------------------------------- */

/*
** Creates a schedule over a copy of |f| (which is not changed) built in |m|;
** |seed| seeds the sampling instructions.  *|out| transferred to the caller.
*/
MLC_MUST_USE mlc_status mlc_sch_create(mlc_tir_module *m, const mlc_tir_func *f, uint64_t seed,
                                       mlc_sch **out);
/* Frees the schedule (not the function, which lives in the module). NULL-safe. */
void mlc_sch_destroy(mlc_sch *s);

/* The scheduled function as it stands (in the module's arena, not added to
** the module: see mlc_tir_module_replace).  Borrowed. */
mlc_tir_func *mlc_sch_func(const mlc_sch *s);
mlc_tir_module *mlc_sch_module(const mlc_sch *s);
/* The class of the last refused primitive (MLC_SCH_OK after a success). */
mlc_sch_error mlc_sch_last_error(const mlc_sch *s);

/* What a handle stands for: its kind, and for a block or loop the
** statement (NULL when retired), for an integer its value. */
mlc_sch_rv_kind mlc_sch_rv_kind_of(const mlc_sch *s, mlc_sch_rv rv);
mlc_tir_stmt *mlc_sch_rv_stmt(const mlc_sch *s, mlc_sch_rv rv);
int64_t mlc_sch_rv_int(const mlc_sch *s, mlc_sch_rv rv);

/* ---- the trace ------------------------------------------------------------- */

/* Appends the trace as text (one instruction per line) to |out|. */
void mlc_sch_print_trace(const mlc_sch *s, mlc_strbuf *out);
/* Number of recorded instructions. */
int mlc_sch_trace_len(const mlc_sch *s);
/*
** Parses the trace text |src| (|len| bytes; |srcname| for messages) and
** applies its instructions in order, with their recorded decisions.  The
** text's handle names (b0, l1, v2, ...) are mapped to this schedule's.
** Stops at the first error, reported as "SRCNAME:LINE: primitive: why".
*/
MLC_MUST_USE mlc_status mlc_sch_apply_trace(mlc_sch *s, const char *src, size_t len, const char *srcname);

/* ---- lookups (recorded) ----------------------------------------------------- */

/* The block named |name| (exactly one must exist). */
MLC_MUST_USE mlc_status mlc_sch_get_block(mlc_sch *s, const char *name, mlc_sch_rv *out);
/* The loops around |block|, outermost first, up to the enclosing block or
** the function: *|n| of them in |out| (room for |max|). */
MLC_MUST_USE mlc_status mlc_sch_get_loops(mlc_sch *s, mlc_sch_rv block, int max, mlc_sch_rv *out, int *n);
/* The blocks directly under |parent| (a block or a loop; 0: the function),
** in program order. */
MLC_MUST_USE mlc_status mlc_sch_get_child_blocks(mlc_sch *s, mlc_sch_rv parent, int max, mlc_sch_rv *out,
                                                 int *n);
/* The blocks of the same scope that write what |block| reads (producers)
** and that read what it writes (consumers), in program order. */
MLC_MUST_USE mlc_status mlc_sch_get_producers(mlc_sch *s, mlc_sch_rv block, int max, mlc_sch_rv *out, int *n);
MLC_MUST_USE mlc_status mlc_sch_get_consumers(mlc_sch *s, mlc_sch_rv block, int max, mlc_sch_rv *out, int *n);

/* ---- loop kinds (for_kind.c) ------------------------------------------------ */

/* Marks |loop| parallel / vectorized / unrolled.  Refused when the loop
** binds a reduce iteration variable of a block under it (parallel,
** vectorize), when it is not serial, or (parallel) when it is inside or
** around another parallel loop. */
MLC_MUST_USE mlc_status mlc_sch_parallel(mlc_sch *s, mlc_sch_rv loop);
MLC_MUST_USE mlc_status mlc_sch_vectorize(mlc_sch *s, mlc_sch_rv loop);
MLC_MUST_USE mlc_status mlc_sch_unroll(mlc_sch *s, mlc_sch_rv loop);
/* Binds |loop| to the GPU thread axis |thread| ("blockIdx.x", "threadIdx.y",
** "vthread.x", ...). */
MLC_MUST_USE mlc_status mlc_sch_bind(mlc_sch *s, mlc_sch_rv loop, const char *thread);

/* ---- loop transformations (split.c, fuse.c, reorder.c) ---------------------- */

/* Splits |loop| into |nfactors| nested loops (outermost first, handles in
** |out|, room for |nfactors|) whose extents are |factors|: integers
** (MLC_SCH_INT_ARG), sampled integer handles (MLC_SCH_RV_ARG) or one
** MLC_SCH_NONE_ARG, inferred as ceil(extent / product of the others).  A
** product above the extent adds a predicate to the blocks under the loop.
** Refused (FACTORS): a product below the extent, a factor < 1, two None,
** no None for a symbolic extent; (STRUCTURE) a loop that is not serial or
** is annotated.  The split loop's handle is retired. */
MLC_MUST_USE mlc_status mlc_sch_split(mlc_sch *s, mlc_sch_rv loop, int nfactors, const mlc_sch_arg *factors,
                                      mlc_sch_rv *out);
/* Fuses |nloops| loops, outermost first, each the only statement of the one
** before, into one loop (*|out|) over the product of their extents.
** Refused (LOOP_NEST): loops not directly nested, given twice;
** (DEPENDENCE) a range that uses an outer loop of the group; (STRUCTURE) a
** loop that is not serial or is annotated.  The fused loops' handles are
** retired. */
MLC_MUST_USE mlc_status mlc_sch_fuse(mlc_sch *s, int nloops, const mlc_sch_rv *loops, mlc_sch_rv *out);
/* Puts |nloops| loops of one nest in the given order (outermost first);
** loops between them that are not named keep their places.  Handles stay
** valid.  Refused (LOOP_NEST): loops not in one nest, given twice;
** (DEPENDENCE) a statement other than a loop between them, a loop range
** that would use a loop put inside it, blocks under the loops whose
** results depend on the order of their iterations (see reorder.c). */
MLC_MUST_USE mlc_status mlc_sch_reorder(mlc_sch *s, int nloops, const mlc_sch_rv *loops);

/* ---- annotations (annotate.c) ----------------------------------------------- */

/* Sets annotation |key| of a loop or block to |value| (MLC_SCH_INT_ARG,
** MLC_SCH_FLOAT_ARG, MLC_SCH_STR_ARG or a sampled integer handle),
** replacing its value; printed as TVMScript does (annotations={...},
** T.block_attr).  Codegen ignores keys it does not know. */
MLC_MUST_USE mlc_status mlc_sch_annotate(mlc_sch *s, mlc_sch_rv block_or_loop, const char *key, mlc_sch_arg value);
/* Removes annotation |key| (refused when absent). */
MLC_MUST_USE mlc_status mlc_sch_unannotate(mlc_sch *s, mlc_sch_rv block_or_loop, const char *key);

/* ---- compute locations (compute_at.c, reverse_compute_at.c, compute_inline.c,
**      reverse_compute_inline.c) ---------------------------------------------- */

/* Removes |block| (one store B[v0, v1, ...] = value of an allocated buffer,
** spatial, each index a distinct iteration variable) and puts its value in
** every load of B; B's allocation goes.  Refused (NOT_INLINABLE) for a
** reduction, a parameter, several statements, other indices, a block that
** reads B or is not its only writer; (DEPENDENCE) when a block between it
** and B's readers writes what the value reads. */
MLC_MUST_USE mlc_status mlc_sch_compute_inline(mlc_sch *s, mlc_sch_rv block);
/* Folds the elementwise consumer |block| into its one producer, which then
** stores the consumer's expression of its value to the consumer's output
** (the producer must be a complete single store: not a reduction). */
MLC_MUST_USE mlc_status mlc_sch_reverse_compute_inline(mlc_sch *s, mlc_sch_rv block);
/* Moves the producer |block| under |loop| (which encloses all its
** consumers), with new loops covering the region the consumers read in one
** iteration of |loop| (LOCATION, REGION, DEPENDENCE, STRUCTURE refusals).
** New loops of extent 1 are kept only with |preserve_unit_loops|.  |loop|
** may be the "root" location (nothing happens) or "inline" (compute_inline)
** of sample_compute_location. */
MLC_MUST_USE mlc_status mlc_sch_compute_at(mlc_sch *s, mlc_sch_rv block, mlc_sch_rv loop, int preserve_unit_loops);
/* Moves the consumer |block| under |loop| (which encloses all its
** producers), after them, covering the region they write in one iteration
** ("inline": reverse_compute_inline). */
MLC_MUST_USE mlc_status mlc_sch_reverse_compute_at(mlc_sch *s, mlc_sch_rv block, mlc_sch_rv loop,
                                                   int preserve_unit_loops);

/* ---- caches, layouts and reductions (cache_read.c, cache_write.c,
**      transform_layout.c, decompose_reduction.c) ----------------------------- */

/*
** Buffer indices.  cache_read's read_buffer_index, cache_write's
** write_buffer_index and transform_layout's buffer_index count the buffers
** a block reads / writes in order of first access: the init before the
** body, a store's indices before its value, operands left to right.  A
** reduction block (one with an init) does not count among its reads a
** buffer it writes (as TVM's T.reads).  In mm_relu, block "Y" reads A (0)
** and B (1) and writes Y (0).
**
** Storage scopes: "global", "local" (private to a thread; small constant
** buffers live on the stack) and "shared" (shared by a GPU thread block;
** the CPU code generator treats it as global).
*/

/* Separates the init of the reduction |block| into a block NAME_init (the
** spatial iteration variables only) in copies of the loops from |loop|
** inward that it needs, placed just before |loop|; |block| (renamed
** NAME_update) keeps the update.  *|out| (may be NULL): the init block.
** Refused when |block| has no init, |loop| is not around it, |loop| is
** inside a loop that binds a reduce iteration variable of the block. */
MLC_MUST_USE mlc_status mlc_sch_decompose_reduction(mlc_sch *s, mlc_sch_rv block, mlc_sch_rv loop, mlc_sch_rv *out);
/* Factors the reduction of the block under |loop| along it (rfactor.c):
** partial results Y_rf[l, ..] in a block B_rf in its place, combined by
** the block itself (its handle) after its loop nest.  *|out| (may be
** NULL): B_rf.  |factor_axis|: where the factored dimension goes in the
** partial results' buffer (0 .. its output's rank). */
MLC_MUST_USE mlc_status mlc_sch_rfactor(mlc_sch *s, mlc_sch_rv loop, int factor_axis, mlc_sch_rv *out);

/* A cache of the |index|-th buffer |block| reads: a new buffer BUF_SCOPE
** in |scope| and a block of that name that copies the region |block| reads
** (over every iteration of the block), placed at the top level of the
** block's scope just before the loop nest holding |block|; |block| then
** reads the cache.  *|out| (may be NULL): the copy block.  Refused when
** another block of that nest writes the buffer, or the region has no
** bound. */
MLC_MUST_USE mlc_status mlc_sch_cache_read(mlc_sch *s, mlc_sch_rv block, int index, const char *scope,
                                           mlc_sch_rv *out);
/* A cache of the |index|-th buffer |block| writes: |block| writes (and
** reads) a new buffer BUF_SCOPE in |scope|, and a block of that name,
** placed just after the loop nest holding |block|, copies the region it
** writes back.  *|out| (may be NULL): the copy block.  Refused when the
** region written is not exactly a box (every element of the box written
** once: each index an iteration variable plus a constant) and the buffer
** may hold other data there, or when another block of the nest reads or
** writes the buffer. */
MLC_MUST_USE mlc_status mlc_sch_cache_write(mlc_sch *s, mlc_sch_rv block, int index, const char *scope,
                                            mlc_sch_rv *out);

/*
** Changes the layout of the |index|-th buffer |block| reads (|kind|
** "read") or writes ("write") through |index_map|, a text of the form
** "lambda n, c, h, w: (n, c // 16, h, w, c % 16)" (integers, the lambda's
** variables, + - * // %, parentheses): the buffer gets the shape the map
** gives its old shape and every access in the function is rewritten.  The
** map must be a bijection from the old shape onto the new one (no padding)
** over a buffer of constant shape.  When the buffer is a parameter, the
** function's signature changes: its caller must then pass the data in the
** new layout.
*/
MLC_MUST_USE mlc_status mlc_sch_transform_layout(mlc_sch *s, mlc_sch_rv block, int index, const char *kind,
                                                 const char *index_map);

/* ---- blockize and tensorize (blockize.c, tensorize.c, intrin.c) --------------- */

/* The subtree under |loop| (a nest of loops around one block "NAME")
** becomes an outer block "NAME_o" whose iteration variables are the outer
** parts of the block's bindings; the block stays inside with the inner
** parts (see blockize.c).  *|out| (may be NULL) gets the outer block.
** Refused when the subtree is not a loop nest around one block
** (STRUCTURE) or a binding does not divide into a part of the loops
** outside and a part of the loops inside (NOT_AFFINE). */
MLC_MUST_USE mlc_status mlc_sch_blockize(mlc_sch *s, mlc_sch_rv loop, mlc_sch_rv *out);
/* Replaces the computation of |block_or_loop| (a block, or a loop that is
** blockized first) by the implementation of the tensor intrinsic
** |intrin| (intrin.h) after matching it against the intrinsic's
** description; a mismatch is a TENSORIZE error that says what differs. */
MLC_MUST_USE mlc_status mlc_sch_tensorize(mlc_sch *s, mlc_sch_rv block_or_loop, const char *intrin);

/* ---- sampling (sample.c) ---------------------------------------------------- */

/* |n| integers (handles in |out|, room for |n|) whose product is the
** constant extent of |loop|, the innermost <= |max_innermost_factor| (-1:
** no bound), drawn uniformly among such tilings with the schedule's
** generator, or |decision| (n factors, checked: SAMPLE) when not NULL. */
MLC_MUST_USE mlc_status mlc_sch_sample_perfect_tile(mlc_sch *s, mlc_sch_rv loop, int n, int max_innermost_factor,
                                                    const int64_t *decision, mlc_sch_rv *out);
/* One of |n| |candidates| (an integer handle in *|out|) drawn with weights
** |probs|, or candidates[*decision] when |decision| is not NULL. */
MLC_MUST_USE mlc_status mlc_sch_sample_categorical(mlc_sch *s, int n, const int64_t *candidates, const double *probs,
                                                   const int64_t *decision, mlc_sch_rv *out);
/* A compute location of |block| (sample_compute_location.c): -2 "inline"
** (when compute_inline is legal), -1 "root", or i, the i-th loop around its
** first consumer where compute_at is legal; drawn with the schedule's seed
** unless |decision| (borrowed; NULL: sample) gives it (SAMPLE refusal when
** not a candidate).  *|out|: a loop handle for compute_at. */
MLC_MUST_USE mlc_status mlc_sch_sample_compute_location(mlc_sch *s, mlc_sch_rv block, const int64_t *decision,
                                                        mlc_sch_rv *out);

/* ---- generic application ---------------------------------------------------- */

/* Instruction kinds (prims.def). */
typedef enum mlc_sch_inst_kind {
#define X(e, name, fn) MLC_SCH_INST_##e,
#include "lower/schedule/prims.def"
#undef X
  MLC_SCH_INST_COUNT
} mlc_sch_inst_kind;

/* The primitive's name ("split"), or NULL. */
const char *mlc_sch_inst_name(mlc_sch_inst_kind k);
/* The kind named |name|, or -1. */
int mlc_sch_inst_lookup(const char *name);

/*
** Applies the instruction |kind| with keyword arguments |args| (each with a
** key; borrowed), recording it.  The output handles go to |outs| (room for
** MLC_SCH_MAX_OUTS, may be NULL when the caller wants none) and their count
** to *|nouts| (may be NULL).  For sampling instructions an argument with
** key "decision" forces the decision.
*/
MLC_MUST_USE mlc_status mlc_sch_apply(mlc_sch *s, mlc_sch_inst_kind kind, int nargs, const mlc_sch_arg *args,
                                      mlc_sch_rv *outs, int *nouts);

#endif /* MLC_LOWER_SCHEDULE_SCHEDULE_H */
