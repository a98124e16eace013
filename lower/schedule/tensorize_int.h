/*
** tensorize_int.h: what blockize.c and tensorize.c share (inside
** lower/schedule/ only): linear index forms (lin.c) and the blockize
** rewrite in steps, so that tensorize can blockize a loop and undo it when
** the block does not match the intrinsic.
**
** Linear forms.  An int64 index expression read as a sum of terms
** coef * atom plus a constant, where an atom is a variable or any other
** subexpression that is not a sum, a difference or a product by a constant
** (j0 * 16 + (f // 4) * 2 + 3: terms 16 * j0 and 2 * (f // 4), constant 3).
** Like terms are combined (variables by identity, other atoms by structure).
** It is what blockize needs to divide a binding into the part of the loops
** outside a subtree and the part of the loops inside it, and what tensorize
** needs to find the base offset of an access.
*/
#ifndef MLC_LOWER_SCHEDULE_TENSORIZE_INT_H
#define MLC_LOWER_SCHEDULE_TENSORIZE_INT_H

#include "lower/schedule/sched_int.h"

/* The most terms of a linear form. */
#define SCH_LIN_MAX 32

typedef struct sch_lin_term {
  const mlc_tir_expr *atom; /* the variable reference or the subexpression */
  const mlc_tir_var *var;   /* the variable when the atom is one, else NULL */
  int64_t coef;             /* never 0 */
} sch_lin_term;

typedef struct sch_lin {
  int n;
  sch_lin_term t[SCH_LIN_MAX];
  int64_t c;
} sch_lin;

/* The linear form of int expression |e| in *|out|.  0, or -1 when |e| is
** not an integer expression, has more than SCH_LIN_MAX terms or a
** coefficient overflows (the form then means nothing). */
int sch_lin_of(const mlc_tir_expr *e, sch_lin *out);
/* *|a| += |scale| * |b|; 0, or -1 on too many terms or an overflow. */
int sch_lin_add(sch_lin *a, const sch_lin *b, int64_t scale);
/* The first term of |l| that uses one of the |n| variables |vars| (a
** variable term or an atom that reads one), or -1. */
int sch_lin_find_use(const sch_lin *l, int n, const mlc_tir_var *const *vars);
/* Nonzero if the two forms are the same sum. */
int sch_lin_equal(const sch_lin *a, const sch_lin *b);
/* The form as an int64 expression in |m| (terms in order, the constant
** last); NULL on out-of-memory. */
mlc_tir_expr *sch_lin_build(mlc_tir_module *m, const sch_lin *l);


/* ---- blockize in steps ------------------------------------------------------ */

/* One expression slot changed in place: what it held and what it gets. */
typedef struct sch_edit {
  mlc_tir_expr **slot;
  mlc_tir_expr *old, *repl;
} sch_edit;

/*
** A blockize built and not yet (or already) applied.  The inner block is
** the original block statement, changed in place (its iteration variables,
** init and the expressions of its body), so that handles of it and of
** everything inside it stay valid; |outer| is new and takes the place of
** |loop|.
*/
typedef struct sch_blockized {
  mlc_tir_stmt *loop;  /* the root of the subtree */
  mlc_tir_stmt *block; /* the block under it (becomes the inner block) */
  mlc_tir_stmt *last;  /* the innermost loop above |block| */
  mlc_tir_stmt *outer; /* the new outer block, whose body is |loop| */
  mlc_tir_stmt *init_block; /* the block of the outer block's init, or NULL */
  /* the inner block's new state, and the old one for undo */
  int niters, old_niters;
  mlc_tir_iter_var *iters, *old_iters;
  mlc_tir_stmt *init, *old_init;
  int old_nreads, old_nwrites; /* the inner block's regions before */
  mlc_tir_region *old_reads, *old_writes;
  /* the expression slots the substitution changes (in the schedule's arena) */
  int nedits;
  sch_edit *edits;
  int applied;
} sch_blockized;

/*
** Checks that the subtree under |loop| can become a block and builds the
** rewrite in *|out| without changing the function (errors: sch_fail with
** the class and the reason, prefixed by the primitive's name by the
** caller).  The new statements live in the module's arena.
*/
MLC_MUST_USE mlc_status sch_blockize_build(mlc_sch *s, mlc_tir_stmt *loop, sch_blockized *out);
/* Applies a built rewrite (handles unchanged: the block keeps its own). */
MLC_MUST_USE mlc_status sch_blockize_apply(mlc_sch *s, sch_blockized *b);
/* Takes an applied rewrite back: the function is as before apply. */
void sch_blockize_undo(mlc_sch *s, sch_blockized *b);

#endif /* MLC_LOWER_SCHEDULE_TENSORIZE_INT_H */
