/*
** compute_loc.h: what the compute-location primitives share (compute_at,
** reverse_compute_at, compute_inline, reverse_compute_inline,
** sample_compute_location; lower/schedule/ only).
**
**   - structural equality and load substitution over expressions;
**   - the blocks of a scope in program order, and which of them access a
**     buffer;
**   - removing a block's own loop nest from the tree (the loops that hold
**     nothing but the block);
**   - ranges of index expressions: an index written as S + [lo, hi], S an
**     affine sum of the variables that stay symbolic and [lo, hi] what the
**     relaxed variables (loops that run inside a compute location) add;
**   - placing a block under a loop with regenerated loops that cover given
**     ranges of its iteration variables (compute_at, reverse_compute_at).
**
** Everything built here lives in the module's arena (like every TIR node).
*/
#ifndef MLC_LOWER_SCHEDULE_COMPUTE_LOC_H
#define MLC_LOWER_SCHEDULE_COMPUTE_LOC_H

#include "lower/schedule/sched_int.h"

/* The most blocks in one scope, loops in one nest, and terms in a range. */
#define CL_MAX_BLOCKS 1024
#define CL_MAX_LOOPS 64
#define CL_MAX_TERMS 16

/* ---- expressions ----------------------------------------------------------------- */


/* Called for every load of the buffer being replaced, with the load's
** indices already rewritten; returns the replacement (NULL on oom). */
typedef mlc_tir_expr *(*cl_load_fn)(void *ctx, mlc_tir_module *m, const mlc_tir_expr *load,
                                    mlc_tir_expr *const *indices);

/* |e| with every load of |b| replaced by |fn|'s result (|e| itself when it
** reads no |b|); NULL on oom. */
mlc_tir_expr *cl_replace_loads(mlc_tir_module *m, mlc_tir_expr *e, const mlc_tir_buffer *b, cl_load_fn fn,
                               void *ctx);
/* The same over every expression of the statement tree |st|, in place
** (statements keep their identity, so handles stay valid); -1 on oom. */
int cl_replace_loads_stmt(mlc_tir_module *m, mlc_tir_stmt *st, const mlc_tir_buffer *b, cl_load_fn fn, void *ctx);

/* |e| with the iteration variables of |blk| replaced by their bindings. */
mlc_tir_expr *cl_bind(mlc_tir_module *m, const mlc_tir_stmt *blk, const mlc_tir_expr *e);

/* Nonzero if |e| loads from |b|. */
int cl_expr_reads(const mlc_tir_expr *e, const mlc_tir_buffer *b);

/* ---- blocks and buffers ------------------------------------------------------------ */

/* The blocks of |blk|'s scope in program order into |out| (room for
** CL_MAX_BLOCKS); the count, and |blk|'s index in *|at|; -1 when too many. */
int cl_scope_blocks(mlc_sch *s, const mlc_tir_stmt *blk, mlc_tir_stmt **out, int *at);
/* Nonzero if |b| is a parameter of the function being scheduled. */
int cl_is_param(const mlc_sch *s, const mlc_tir_buffer *b);
/* The buffers |blk| stores to / loads from (distinct, in order of first
** access) into |out| (room for |max|); the count, -1 when more. */
int cl_block_writes(const mlc_tir_stmt *blk, mlc_tir_buffer **out, int max);
int cl_block_reads(const mlc_tir_stmt *blk, mlc_tir_buffer **out, int max);
/* The ALLOCATE statement of |b| in the function, or NULL. */
mlc_tir_stmt *cl_find_alloc(mlc_sch *s, const mlc_tir_buffer *b);
/* Nonzero if any statement of the function loads from or stores to |b|. */
int cl_buffer_used(mlc_sch *s, const mlc_tir_buffer *b);
/* NULL when every allocation around |blk| also encloses |loop|, else a
** STRUCTURE refusal naming the buffer (|prim| names the primitive). */
mlc_status cl_check_allocs(mlc_sch *s, const mlc_tir_stmt *blk, const mlc_tir_stmt *loop);

/* ---- removing a block's loop nest ---------------------------------------------------- */

/* The loops that hold nothing but |blk| (climbing while a loop's body is
** the child), and the sequence the outermost sits in. */
typedef struct cl_nest {
  mlc_tir_stmt *block;
  mlc_tir_stmt *root;   /* the outermost such loop, or the block */
  mlc_tir_stmt *parent; /* the sequence holding |root| */
} cl_nest;

/* Finds |blk|'s nest; a STRUCTURE refusal when it does not sit in a
** sequence (it is the only statement of its scope). */
MLC_MUST_USE mlc_status cl_nest_find(mlc_sch *s, mlc_tir_stmt *blk, cl_nest *out);
/* Takes the nest out of its sequence and retires the handles of its loops
** (|retire_block|: of the block too). */
MLC_MUST_USE mlc_status cl_nest_remove(mlc_sch *s, const cl_nest *n, int retire_block);

/* ---- ranges of index expressions ----------------------------------------------------- */

/* Variables with constant intervals [lo, hi]. */
typedef struct cl_env {
  int n;
  const mlc_tir_var *var[CL_MAX_LOOPS];
  int64_t lo[CL_MAX_LOOPS], hi[CL_MAX_LOOPS];
} cl_env;

/* S + [lo, hi]: S = sum of coef[i] * atom[i] (an atom is a variable that
** stays symbolic or a subexpression of such variables only). */
typedef struct cl_range {
  int nterms;
  int64_t coef[CL_MAX_TERMS];
  const mlc_tir_expr *atom[CL_MAX_TERMS];
  int64_t lo, hi;
} cl_range;

/* Adds |loop|'s variable to |env| when its bounds are constant; -1 when
** they are not or |env| is full. */
int cl_env_add_loop(cl_env *env, const mlc_tir_stmt *loop);
/* The range of |e| with the variables of |env| relaxed; -1 when it has no
** computable range (a load, a product of relaxed variables, a division
** by a non-constant, a non-affine term mixing relaxed and symbolic
** variables). */
int cl_range_of(const mlc_tir_expr *e, const cl_env *env, cl_range *out);
/* Widens |acc| to cover |r|; -1 when their symbolic parts differ. */
int cl_range_union(cl_range *acc, const cl_range *r);
/* Nonzero if the two ranges are the same. */
int cl_range_eq(const cl_range *a, const cl_range *b);
/* S + lo built in |m|. */
mlc_tir_expr *cl_range_min(mlc_tir_module *m, const cl_range *r);
/* The loops from the top of the function down to |st| (inclusive when
** |st| is a loop) with constant bounds, as an environment. */
void cl_env_above(mlc_sch *s, const mlc_tir_stmt *st, cl_env *env);

/* The range, per dimension, of every load (|stores|: store) of |b| in the
** block |blk| (its iteration variables replaced by their bindings), with
** |env| and the loops inside the block relaxed (each index simplified with
** the bounds of the loops around it first), widened into acc[d] (*|have|
** says whether acc holds a range yet).  -1 with the reason in *|why|
** (static text) when an index has no computable range or two accesses
** differ by more than a constant. */
int cl_access_ranges(mlc_sch *s, const mlc_tir_stmt *blk, const mlc_tir_buffer *b, int stores,
                     const cl_env *env, cl_range *acc, int *have, const char **why);
/* The loops strictly between |loop| and |blk| as an environment; -1 when
** one has non-constant bounds. */
int cl_env_between(mlc_sch *s, const mlc_tir_stmt *loop, const mlc_tir_stmt *blk, cl_env *env);

/* ---- placing a block under a loop ----------------------------------------------------- */

/*
** Moves |blk| (its nest |nest|, found with cl_nest_find) under |loop| at
** position |at| of the loop's body (a sequence index; 0 or 1 before or
** after a body that is not a sequence), with new loops: iteration variable
** k covers ranges[k] when has[k], else its whole domain.  A new loop of
** extent 1 is left out unless |preserve_unit|.  Where the ranges may leave
** the iteration domain, the block gets a predicate.  The old loops' handles
** are retired; the block keeps its handle.  Only out-of-memory fails.
*/
MLC_MUST_USE mlc_status cl_place(mlc_sch *s, const cl_nest *nest, mlc_tir_stmt *loop, int at, const int *has,
                                 const cl_range *ranges, int preserve_unit);

/* The index of the first / last statement of |loop|'s body that contains
** one of the |n| blocks (the body as a one-statement sequence otherwise). */
int cl_body_index(const mlc_tir_stmt *loop, mlc_tir_stmt *const *blocks, int n, int last);

/* Recomputes the access regions of every block that has them (after a
** rewrite changed what blocks read). */
MLC_MUST_USE mlc_status cl_refresh_regions(mlc_sch *s);

/* ---- checks shared with sample_compute_location ------------------------------------------ */

/* The legality checks of compute_inline / compute_at, without the
** rewrite: NULL when legal, else the refusal (class in the schedule). */
MLC_MUST_USE mlc_status cl_check_compute_inline(mlc_sch *s, mlc_tir_stmt *blk);
MLC_MUST_USE mlc_status cl_check_compute_at(mlc_sch *s, mlc_tir_stmt *blk, mlc_tir_stmt *loop);

#endif /* MLC_LOWER_SCHEDULE_COMPUTE_LOC_H */
