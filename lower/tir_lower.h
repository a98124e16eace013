/*
** tir_lower.h: the passes between scheduling and code generation.
**
** A scheduled prim function still holds blocks: iteration variables bound
** to loop expressions, predicates, reduction inits, and buffers accessed
** with N-D indices.  Lowering rewrites it into the plain form the code
** generator reads (and a GPU backend will read):
**
**   loops (serial, parallel, vectorized, unrolled, thread-bound), stores,
**   ifs, evaluates, asserts and allocations; every buffer access has one
**   int64 index (row-major, the flat view of its buffer); no blocks.
**
** The function gets the attribute "tir.lowered" = True and, for each N-D
** parameter it accesses, a 1-D view in f->views (tir.h).  The code
** generator refuses functions that still hold blocks.
**
** The pipeline is a literal list (tir_lower.c), each pass also callable
** alone (tests):
**
**   thread_reduce       (GPU only) reductions across a warp's lanes become
**                       warp shuffles
**   remove_unit_loops   extent-1 loops become a substitution of their min
**   lower_blocks        bindings substituted, predicate -> if, init placed
**                       once before its reduction loops (guarded otherwise)
**   compact_buffers     allocations shrink to the region they use and move
**                       to the innermost statement around their uses
**   flatten_buffers     N-D accesses -> 1-D (row-major, int64)
**   simplify            unit loops, constant conditions, no-op stores
**   thread_sync         barriers between a GPU thread block's threads
**                       around their shared buffers
**   vectorize           vectorized loops -> vector expressions
**                       (mlc_tir_vectorize_func, lower/pass_vectorize.c)
**
** Every pass rewrites |f| in place (its body, buffers and views; the old
** nodes stay in the module's arena until the module is destroyed) and
** returns an error naming the function, the pass and what it could not
** handle; the function is then left in a valid but unspecified stage.
*/
#ifndef MLC_LOWER_TIR_LOWER_H
#define MLC_LOWER_TIR_LOWER_H

#include "base/status.h"
#include "lower/tir.h"

typedef struct mlc_tir_lower_options {
  int no_compact;   /* keep allocations where and as large as they are */
  int no_vectorize; /* leave vectorized loops as hints to LLVM */
  int verify;       /* verify the function after every pass */
  int gpu;          /* for a GPU: cross-thread reductions as warp shuffles (thread_reduce) */
} mlc_tir_lower_options;

/* One pass over one function of |m|. */
typedef mlc_status (*mlc_tir_pass_fn)(mlc_tir_module *m, mlc_tir_func *f);

typedef struct mlc_tir_pass_info {
  const char *name;
  mlc_tir_pass_fn fn;
} mlc_tir_pass_info;

/* Lowers |f| (a function of |m|) through the whole pipeline; |opt| may be
** NULL (defaults).  A function already marked "tir.lowered" is left alone.
** |m| and |f| are modified; |opt| borrowed. */
MLC_MUST_USE mlc_status mlc_tir_lower_func(mlc_tir_module *m, mlc_tir_func *f, const mlc_tir_lower_options *opt);
/* Lowers every function of |m|. */
MLC_MUST_USE mlc_status mlc_tir_lower_module(mlc_tir_module *m, const mlc_tir_lower_options *opt);

/* Nonzero when |f| carries "tir.lowered" = True. */
int mlc_tir_func_is_lowered(const mlc_tir_func *f);
/* The first block in |s| (pre-order), or NULL. Borrowed. */
const mlc_tir_stmt *mlc_tir_find_block(const mlc_tir_stmt *s);

/* ---- the passes (one file each) ---- */

/* pass_unit_loops.c: every loop of constant extent 1 is replaced by its
** body with the loop variable replaced by the loop's min. */
MLC_MUST_USE mlc_status mlc_tir_pass_remove_unit_loops(mlc_tir_module *m, mlc_tir_func *f);

/*
** pass_lower_blocks.c: every block becomes its body with the iteration
** variables replaced by their bindings, under `if predicate:` when it has
** one.  A block's init is placed once: when the loops that the reduce
** bindings use are exactly the innermost loops of a perfect nest around
** the block (nothing else between them and the block), and neither the
** spatial bindings nor the predicate use them, the init (reduce variables
** at their minimum) goes right before the outermost of those loops;
** otherwise it stays at the block's place, under `if` every reduce
** binding equals its minimum.  Blocks without iteration variables are
** unwrapped (their allocations kept).
*/
MLC_MUST_USE mlc_status mlc_tir_pass_lower_blocks(mlc_tir_module *m, mlc_tir_func *f);

/*
** pass_compact.c (after lower_blocks): an allocated buffer whose accesses
** all lie, inside the innermost statement S that encloses them, in a
** region smaller than its shape is reallocated at S with the region's
** shape (indices shifted by the region's start).  The allocation only
** moves into a loop when the iterations of that loop touch disjoint parts
** of the buffer (no value flows from one iteration to the next).  A
** compacted buffer of constant size up to MLC_TIR_LOCAL_BYTES becomes
** LOCAL (a stack array the code generator can keep in registers).
*/
#define MLC_TIR_LOCAL_BYTES 16384
MLC_MUST_USE mlc_status mlc_tir_pass_compact_buffers(mlc_tir_module *m, mlc_tir_func *f);

/* pass_flatten.c (after lower_blocks): every access gets one int64 index,
** sum(index[d] * stride[d]) with row-major strides; allocations become 1-D
** and each N-D parameter that is accessed gets a 1-D view (f->views).
** Rank-0 buffers become 1-D of extent 1. */
MLC_MUST_USE mlc_status mlc_tir_pass_flatten_buffers(mlc_tir_module *m, mlc_tir_func *f);

/* pass_simplify.c: removes unit loops, ifs with constant conditions,
** empty loops and stores of a value just loaded from the same place
** (`A[i] = A[i]`); folds index arithmetic again. */
MLC_MUST_USE mlc_status mlc_tir_pass_simplify(mlc_tir_module *m, mlc_tir_func *f);

/* pass_thread_reduce.c (first, for a GPU only: mlc_tir_lower_options.gpu):
** each cross-thread reduction (below) becomes a warp shuffle reduction
** of its terms (T.warp_sum / warp_max / warp_min) stored by lane 0; any
** other reduction over a thread-bound loop is an error. */
MLC_MUST_USE mlc_status mlc_tir_pass_thread_reduce(mlc_tir_module *m, mlc_tir_func *f);
/* Whether |b| is a cross-thread reduction under |loop| (a for statement
** whose whole body is block |b|): |loop| of extent 32 from 0 (bound to
** threadIdx.x, a warp's lanes, or about to be), |b| a float32 reduction
** with no predicate whose one reduce iteration variable is |loop|'s
** variable, its init storing the element its body updates as C = C + t,
** T.max(C, t) or T.min(C, t) (either order; t not reading C).
** *|value_side| (may be NULL): 1 when t is the second operand. */
int mlc_tir_cross_thread_reduction(const mlc_tir_stmt *loop, const mlc_tir_stmt *b, int *value_side);

/* pass_thread_sync.c (after simplify): a barrier (T.sync_threads()) in
** each sequence inside a loop bound to threadIdx before a statement that
** reads a shared buffer written since the last one, or writes one read or
** written since then (a loop body's start counts its previous iteration);
** an error where a barrier would not be reached by every thread. */
MLC_MUST_USE mlc_status mlc_tir_pass_thread_sync(mlc_tir_module *m, mlc_tir_func *f);

/* pass_prefetch.c (after simplify): in a loop over a tiled kernel's
** panels annotated "software_prefetch" (the name of the parameter each
** panel reads a block of), prefetches (T.prefetch) of the next panel's
** block, spread over the serial loops around the loads of it. */
MLC_MUST_USE mlc_status mlc_tir_pass_prefetch(mlc_tir_module *m, mlc_tir_func *f);

/* The pipeline, in order (|*n| entries).  Static storage. */
const mlc_tir_pass_info *mlc_tir_lower_passes(int *n);

#endif /* MLC_LOWER_TIR_LOWER_H */
