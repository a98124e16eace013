/*
** arith.h: integer analysis of TIR index expressions, and block access
** regions.
**
** An analyzer (mlc_arith) holds the domains of variables (a loop variable
** ranges over [min, min + extent) of its loop, a block iteration variable
** over its domain) and answers what schedules and lowering passes ask of
** int64 index arithmetic:
**
**   - simplification to a canonical affine form (a sum of coef * term plus a
**     constant, like terms combined), with floordiv / floormod by positive
**     constants resolved from bounds: (i*16 + j) // 16 -> i when j is in
**     [0, 16), (f // 4) * 4 + f % 4 -> f, (x // 4) // 8 -> x // 32;
**     comparisons, min / max and selects decided where the bounds allow;
**   - constant bounds (an interval) and proofs (a condition true for every
**     value in the domains);
**   - integer sets: the range of an expression while some variables range
**     over their domains and the others stay symbolic (the region a loop
**     nest touches, for compute_at, cache_read / cache_write, compaction);
**   - affine iterator maps: whether block bindings are a bijective mixed-
**     radix map of loop variables (fuse, reorder, blockize, tensorize).
**
** Expressions built by the analyzer live in the module |m| given to the call
** (borrowed by the caller, freed with the module).  Calls that take no
** module (bounds, proofs, iterator maps) work in the analyzer's own scratch
** module: what they return stays valid until mlc_arith_destroy.
**
** Determinism: simplified sums keep their terms in the order in which the
** terms first appear in the input (terms with a positive coefficient before
** those with a negative one), the constant last, so the printed form of a
** simplified expression is the same on every run.
*/
#ifndef MLC_LOWER_ARITH_H
#define MLC_LOWER_ARITH_H

#include <stdint.h>

#include "base/alloc.h"
#include "base/status.h"
#include "lower/tir.h"

typedef struct mlc_arith mlc_arith;

/* Creates an analyzer with no bound variables.  *|out| is transferred to the
** caller (destroy with mlc_arith_destroy). */
MLC_MUST_USE mlc_status mlc_arith_create(mlc_allocator a, mlc_arith **out);
/* Frees |an| and its scratch module.  NULL-safe. */
void mlc_arith_destroy(mlc_arith *an);

/*
** Binds |v| to [min, min + extent): |min| and |extent| are int64
** expressions, constants or expressions of other bound variables (retained,
** not copied: they must outlive the binding).  Binding a bound variable
** again shadows the earlier domain until unbind / restore.  Fails
** (INVALID_ARGUMENT) on a NULL argument or when |v|, |min| or |extent| is not
** int64; RESOURCE_EXHAUSTED on out-of-memory.
*/
MLC_MUST_USE mlc_status mlc_arith_bind(mlc_arith *an, const mlc_tir_var *v, const mlc_tir_expr *min,
                                       const mlc_tir_expr *extent);
/* Binds |v| to the constant range [min, min + extent). */
MLC_MUST_USE mlc_status mlc_arith_bind_c(mlc_arith *an, const mlc_tir_var *v, int64_t min,
                                         int64_t extent);
/* Removes the most recent binding of |v| (the earlier one, if any, comes
** back).  Nothing when |v| is not bound. */
void mlc_arith_unbind(mlc_arith *an, const mlc_tir_var *v);
/* Scoped use: mark = mlc_arith_mark(an); bind ...; mlc_arith_restore(an,
** mark) drops every binding made after the mark. */
int mlc_arith_mark(const mlc_arith *an);
void mlc_arith_restore(mlc_arith *an, int mark);

/*
** The canonical simplification of |e|, built in |m| (|e| itself is never
** changed; parts of it may be shared by the result).  Int64 (and int32)
** arithmetic is simplified as described at the top; floats, loads and calls
** keep their form with their index subexpressions simplified.  NULL only on
** out-of-memory (or a NULL |e|).
*/
mlc_tir_expr *mlc_arith_simplify(mlc_arith *an, mlc_tir_module *m, const mlc_tir_expr *e);

/* The interval [*lo, *hi] of int expression |e| over the bound domains.
** Returns 1 when both ends are known, else 0 (then *lo / *hi hold
** INT64_MIN / INT64_MAX for an unknown end). */
int mlc_arith_const_bound(mlc_arith *an, const mlc_tir_expr *e, int64_t *lo, int64_t *hi);
/* 1 when bool |cond| is provably true for every value of the bound
** variables (unbound ones: every int64 value), else 0. */
int mlc_arith_prove(mlc_arith *an, const mlc_tir_expr *cond);
/* 1 when |a| and |b| are provably equal (their difference simplifies to 0). */
int mlc_arith_prove_equal(mlc_arith *an, const mlc_tir_expr *a, const mlc_tir_expr *b);

/* ---- integer sets ------------------------------------------------------- */

/* The integers [min, min + extent); both int64 expressions. */
typedef struct mlc_intset {
  mlc_tir_expr *min, *extent;
} mlc_intset;

/*
** The range of int expression |e| when the |nrelax| variables |relax| range
** over their bound domains (each must be bound) and every other variable
** stays symbolic: e = i0*4 + i1 with i1 in [0, 4) relaxed gives min i0*4,
** extent 4.  The result covers every value (it may over-approximate through
** a non-affine term); min and extent are simplified and built in |m|.
** Errors (INVALID_ARGUMENT, naming the expression and the reason) when a
** relaxed variable is unbound or a term has no computable range (a load or
** an unbounded product of relaxed variables), RESOURCE_EXHAUSTED on
** out-of-memory.
*/
MLC_MUST_USE mlc_status mlc_arith_eval_set(mlc_arith *an, mlc_tir_module *m, const mlc_tir_expr *e,
                                           int nrelax, const mlc_tir_var *const *relax,
                                           mlc_intset *out);

/* ---- affine iterator maps ----------------------------------------------- */

/* One mixed-radix digit of a loop variable, as used in a binding:
** ((loop_var - loop_min) // lower_factor) % extent, times |scale|. */
typedef struct mlc_arith_iter_split {
  int loop;             /* index into the loop_vars given to mlc_arith_iter_map */
  int64_t lower_factor; /* >= 1 */
  int64_t extent;       /* >= 1 */
  int64_t scale;        /* its weight in the binding, >= 1 */
} mlc_arith_iter_split;

/* A binding as base + sum of splits, splits ordered by decreasing scale
** (the last has scale 1): the binding is a mixed-radix number whose digits
** are the splits (under a predicate, only its first |extent| values are
** taken, see mlc_arith_iter_map_pred). */
typedef struct mlc_arith_iter_sum {
  int nsplits;
  mlc_arith_iter_split *splits;
  int64_t base;   /* the binding's value when every loop is at its min */
  int64_t extent; /* the product of the split extents (or the predicate's limit) */
} mlc_arith_iter_sum;

/* The result of mlc_arith_iter_map: one sum per binding (arrays owned by the
** analyzer, valid until mlc_arith_destroy). */
typedef struct mlc_arith_iter_map_result {
  int nbind;
  mlc_arith_iter_sum *sums;
} mlc_arith_iter_map_result;

/*
** Checks that the block bindings |bindings| (iteration variable b ranging
** over [base_b, base_b + extents[b])) are a bijective affine map of the
** loops |loop_vars| (each bound in |an| with constant min and extent):
** every binding, simplified, is a sum of splits (v // f) % e of loop
** variables scaled as a mixed-radix number with binding b's extent, the
** splits of every loop variable tile it exactly (1, e0, e0*e1, ... up to its
** extent; a loop of extent 1 may go unused), so every loop value maps to one
** binding value and back.  Fills |out| and returns NULL when so; otherwise
** an INVALID_ARGUMENT status that names the binding and the reason (a loop
** variable used twice or not at all, a split that does not tile its loop, a
** non-affine term, an extent that does not match), RESOURCE_EXHAUSTED on
** out-of-memory.
*/
MLC_MUST_USE mlc_status mlc_arith_iter_map(mlc_arith *an, int nbind,
                                           const mlc_tir_expr *const *bindings,
                                           const mlc_tir_expr *const *extents, int nloops,
                                           const mlc_tir_var *const *loop_vars,
                                           mlc_arith_iter_map_result *out);

/*
** As mlc_arith_iter_map, for a block with predicate |predicate| (NULL: none):
** a binding whose splits cover more values than its extent (a split whose
** factors do not divide the extent) is accepted when a conjunct of the
** predicate says exactly binding - base < extent (`io * 4 + ii < 10`, also
** written with <=, > or >=); its sum's extent is then the binding's extent,
** and the map is a bijection between the loop values that pass the
** predicate and the binding values.
*/
MLC_MUST_USE mlc_status mlc_arith_iter_map_pred(mlc_arith *an, int nbind,
                                                const mlc_tir_expr *const *bindings,
                                                const mlc_tir_expr *const *extents, int nloops,
                                                const mlc_tir_var *const *loop_vars,
                                                const mlc_tir_expr *predicate,
                                                mlc_arith_iter_map_result *out);

/* ---- block access regions (region.c) ------------------------------------ */

/*
** Computes the read and write regions of |block| (a MLC_TIR_BLOCK) in terms
** of its iteration variables and stores them with mlc_tir_block_set_regions:
** one region per buffer accessed in the body and the init, in order of first
** access; per dimension the [min, min + extent) covering every access, with
** loops (and the iteration variables of blocks) nested inside the block
** relaxed over their domains.  As in TVM, a reduction block (one with an
** init) does not list among its reads the buffers it writes.  A region end
** that is a constant outside the buffer's constant shape is clamped to it
** (such accesses sit under a condition); an index with no computable range
** (data-dependent through a relaxed loop, not int64) covers the whole
** dimension [0, shape).  Errors: INVALID_ARGUMENT for a non-block or an
** access whose index count is not the buffer's rank (naming the block and
** buffer), RESOURCE_EXHAUSTED on out-of-memory.
*/
MLC_MUST_USE mlc_status mlc_tir_block_compute_regions(mlc_tir_module *m, mlc_tir_stmt *block);
/* Computes the regions of every block of |f| (outer blocks after the blocks
** nested in them). */
MLC_MUST_USE mlc_status mlc_tir_func_compute_regions(mlc_tir_module *m, mlc_tir_func *f);

#endif /* MLC_LOWER_ARITH_H */
