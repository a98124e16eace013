/*
** sched_int.h: what schedule primitives share (inside lower/schedule/ only).
**
** Writing a primitive NAME:
**   1. a row X(NAME, "name", mlc_sch_apply_name) in prims.def;
**   2. lower/schedule/name.c with
**        mlc_status mlc_sch_apply_name(mlc_sch *s, mlc_sch_inst *in)
**      that reads its arguments with sch_arg_* (a missing or ill-typed one
**      is an MLC_SCH_ERR_ARGUMENT/HANDLE error already), checks EVERYTHING
**      it needs before it changes anything (a refusal must leave the state
**      as it was: return sch_fail(s, MLC_SCH_ERR_..., "why", ...)), then
**      rewrites the function, retires the handles of removed statements
**      (sch_retire), repoints those of replaced ones (sch_repoint) and adds
**      its outputs (sch_out);
**   3. the typed entry point in schedule.h, which calls mlc_sch_apply;
**   4. the file in lower/Makefile.inc; tests (golden + numerical + each
**      refusal).
** mlc_sch_apply prefixes the primitive's name to an error, verifies the
** function afterwards and records the instruction.
**
** Rewriting: statements may be changed in place (a loop's kind, a block's
** bindings: handles stay valid), or replaced: build the new statement with
** the tir.h builders and put it where the old one was with sch_replace.
**
** Notes from writing the loop primitives:
**   - messages: mlc_sch_apply prefixes "NAME: "; say what (sch_desc: "loop
**     j", "block "Y"") and why, and use the most specific error class;
**   - a primitive that replaces loops by new ones (split, fuse) rewrites
**     the old loop variables under them in place with sch_subst_inplace
**     (subst.c), after sch_bind_loops_above and binding the new variables
**     in an analyzer, so bindings come out simplified and the handles of
**     everything under the loops stay valid; relinking existing loop
**     statements (reorder) keeps every handle;
**   - sch_child_blocks(st) lists the blocks *under* |st|: for a loop whose
**     body is a block, pass the loop (or test body->kind), not the block;
**   - typed entry points build keyword arguments (key set on each) and,
**     for lists, an MLC_SCH_ARG_LIST whose items have no key; sampling
**     primitives read in->forced and set in->decision;
**   - test refusals by applying a whole trace text (handle names are those
**     of the text) and checking the class, the message, that the function
**     is as before the refused line and that the trace did not grow.
*/
#ifndef MLC_LOWER_SCHEDULE_SCHED_INT_H
#define MLC_LOWER_SCHEDULE_SCHED_INT_H

#include "base/arena.h"
#include "lower/arith.h"
#include "lower/schedule/schedule.h"

/* The special compute locations a LOOP handle can stand for. */
typedef enum sch_loc { SCH_LOC_LOOP = 0, SCH_LOC_ROOT = 1, SCH_LOC_INLINE = 2 } sch_loc;

typedef struct sch_entry {
  mlc_sch_rv_kind kind;
  mlc_tir_stmt *stmt;     /* block or loop; NULL when retired or special */
  int64_t value;          /* INT */
  sch_loc loc;            /* LOOP: a real loop or a special location */
  const char *retired_by; /* the primitive that removed the statement */
} sch_entry;

typedef struct sch_trace_inst {
  mlc_sch_inst_kind kind;
  int nargs;
  mlc_sch_arg *args; /* in the schedule's arena */
  int nouts;
  mlc_sch_rv *outs;
  mlc_sch_arg decision; /* NONE unless sampled */
} sch_trace_inst;

struct mlc_sch {
  mlc_tir_module *m;
  mlc_tir_func *func; /* the working copy */
  mlc_arena *arena;   /* trace, decisions, scratch of the schedule */
  sch_entry *rvs;     /* rvs[0] unused */
  int nrvs, cap_rvs;
  sch_trace_inst *trace;
  int ntrace, cap_trace;
  uint64_t rng;
  mlc_sch_error last_error;
  const char *cur_prim; /* the primitive being applied (for sch_retire) */
};

/* An instruction being applied. */
typedef struct mlc_sch_inst {
  mlc_sch_inst_kind kind;
  int nargs;
  const mlc_sch_arg *args; /* borrowed; "decision" is not among them */
  const mlc_sch_arg *forced; /* the "decision" argument given, or NULL */
  int nouts;
  mlc_sch_rv outs[MLC_SCH_MAX_OUTS];
  mlc_sch_arg decision; /* set by sampling primitives (items in s->arena) */
} mlc_sch_inst;

typedef mlc_status (*mlc_sch_apply_fn)(mlc_sch *s, mlc_sch_inst *in);

#define X(e, name, fn) mlc_status fn(mlc_sch *s, mlc_sch_inst *in);
#include "lower/schedule/prims.def"
#undef X

/* ---- errors ---------------------------------------------------------------- */

/* Sets the error class and makes an INVALID_ARGUMENT status with the message. */
mlc_status sch_fail(mlc_sch *s, mlc_sch_error cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "loop j" / "block "Y"" for messages (in the schedule's arena; "?" on oom). */
const char *sch_desc(mlc_sch *s, const mlc_tir_stmt *st);

/* ---- arguments ------------------------------------------------------------- */

/* The argument |key| of |in|, or NULL. */
const mlc_sch_arg *sch_arg(const mlc_sch_inst *in, const char *key);
/* Required arguments resolved: a block / a loop handle (a real loop; see
** sch_arg_location for root/inline), an int (an INT or an INT handle), a
** string, a list.  |out| untouched on error. */
MLC_MUST_USE mlc_status sch_arg_block(mlc_sch *s, const mlc_sch_inst *in, const char *key, mlc_tir_stmt **out);
MLC_MUST_USE mlc_status sch_arg_loop(mlc_sch *s, const mlc_sch_inst *in, const char *key, mlc_tir_stmt **out);
MLC_MUST_USE mlc_status sch_arg_int(mlc_sch *s, const mlc_sch_inst *in, const char *key, int64_t *out);
MLC_MUST_USE mlc_status sch_arg_str(mlc_sch *s, const mlc_sch_inst *in, const char *key, const char **out);
MLC_MUST_USE mlc_status sch_arg_list(mlc_sch *s, const mlc_sch_inst *in, const char *key, const mlc_sch_arg **out);
/* Optional ones: |dflt| when absent (an ill-typed one is still an error). */
MLC_MUST_USE mlc_status sch_arg_int_opt(mlc_sch *s, const mlc_sch_inst *in, const char *key, int64_t dflt,
                                        int64_t *out);
/* A loop handle that may also be a special location: *|loc| says which;
** *|out| is the loop for SCH_LOC_LOOP, else NULL. */
MLC_MUST_USE mlc_status sch_arg_location(mlc_sch *s, const mlc_sch_inst *in, const char *key, mlc_tir_stmt **out,
                                         sch_loc *loc);
/* A list item (or any argument) as a block, a loop, an int; |what| names it
** in errors. */
MLC_MUST_USE mlc_status sch_item_block(mlc_sch *s, const mlc_sch_arg *a, const char *what, mlc_tir_stmt **out);
MLC_MUST_USE mlc_status sch_item_loop(mlc_sch *s, const mlc_sch_arg *a, const char *what, mlc_tir_stmt **out);
MLC_MUST_USE mlc_status sch_item_int(mlc_sch *s, const mlc_sch_arg *a, const char *what, int64_t *out);

/* ---- handles --------------------------------------------------------------- */

/* A new handle for a block/loop statement or an int; 0 on oom. */
mlc_sch_rv sch_new_rv(mlc_sch *s, mlc_sch_rv_kind kind, mlc_tir_stmt *st);
mlc_sch_rv sch_new_int_rv(mlc_sch *s, int64_t v);
mlc_sch_rv sch_new_location_rv(mlc_sch *s, sch_loc loc);
/* Appends |rv| to the instruction's outputs; an oom (rv 0) or too many
** outputs is an error. */
MLC_MUST_USE mlc_status sch_out(mlc_sch *s, mlc_sch_inst *in, mlc_sch_rv rv);
/* Shorthand: a new handle for |st| added to the outputs. */
MLC_MUST_USE mlc_status sch_out_stmt(mlc_sch *s, mlc_sch_inst *in, mlc_sch_rv_kind kind, mlc_tir_stmt *st);
/* Every handle of |st| is retired (by the primitive being applied). */
void sch_retire(mlc_sch *s, const mlc_tir_stmt *st);
/* Every handle of |old| now stands for |repl|. */
void sch_repoint(mlc_sch *s, const mlc_tir_stmt *old, mlc_tir_stmt *repl);

/* ---- the tree -------------------------------------------------------------- */

/* The slot (the parent's pointer, or &func->body) that holds |target|, and
** its parent statement (NULL at the top) in *|parent| (may be NULL).  NULL
** when |target| is not in the function. */
mlc_tir_stmt **sch_slot(mlc_sch *s, const mlc_tir_stmt *target, mlc_tir_stmt **parent);
/* The statements from the top of the function down to |target| inclusive:
** at most |max| in |path|; the count, or -1 when not found / too deep. */
int sch_path(mlc_sch *s, const mlc_tir_stmt *target, mlc_tir_stmt **path, int max);
/* The loops around |st| up to the enclosing block (or the function),
** outermost first; the count or -1. */
int sch_loops_above(mlc_sch *s, const mlc_tir_stmt *st, mlc_tir_stmt **loops, int max);
/* The block that encloses |st| (its scope), or NULL for the function. */
mlc_tir_stmt *sch_scope(mlc_sch *s, const mlc_tir_stmt *st);
/* Puts |repl| in the place of |old| (a sequence replacing a member of a
** sequence is spliced in).  Handles are not changed (see sch_repoint). */
MLC_MUST_USE mlc_status sch_replace(mlc_sch *s, mlc_tir_stmt *old, mlc_tir_stmt *repl);
/* The blocks directly under |st| (not inside another block), in program
** order, appended to |out| (room for |max|); the count, or -1 when more. */
int sch_child_blocks(const mlc_tir_stmt *st, mlc_tir_stmt **out, int max);
/* Nonzero if the block |blk| (body and init) stores to / loads from |b|. */
int sch_block_writes(const mlc_tir_stmt *blk, const mlc_tir_buffer *b);
int sch_block_reads(const mlc_tir_stmt *blk, const mlc_tir_buffer *b);
/* Nonzero if |st| (a statement subtree) contains |target|. */
int sch_contains(const mlc_tir_stmt *st, const mlc_tir_stmt *target);
/* A block name not used in the function: |base|, else base_1, base_2...
** (in the module's arena; NULL on oom). */
const char *sch_unique_block_name(mlc_sch *s, const char *base);
/* Allocates |b| at the top of the function (around its body). */
MLC_MUST_USE mlc_status sch_add_alloc(mlc_sch *s, mlc_tir_buffer *b);

/* ---- rewriting loop variables (subst.c) ------------------------------------------ */

/* Binds in |an| the domains of the loops and block iteration variables
** around |st| (not |st| itself). */
MLC_MUST_USE mlc_status sch_bind_loops_above(mlc_sch *s, mlc_arith *an, const mlc_tir_stmt *st);
/* Replaces in place, in the expressions of |st|'s subtree, variable
** vars[i] by values[i] (borrowed), simplifying each rewritten expression
** with |an| (bind the new loop variables and those above |st| first).
** Statements are kept, so their handles stay valid; an out-of-memory may
** leave the subtree partly rewritten. */
MLC_MUST_USE mlc_status sch_subst_inplace(mlc_sch *s, mlc_arith *an, mlc_tir_stmt *st, int nvars,
                                          mlc_tir_var *const *vars, mlc_tir_expr *const *values);
/* |e| printed, in the schedule's arena (for messages; "?" on oom). */
const char *sch_expr_str(mlc_sch *s, const mlc_tir_expr *e);

/* ---- sampling ---------------------------------------------------------------- */

/* The next pseudo-random 64-bit value of the schedule (splitmix64). */
uint64_t sch_rand(mlc_sch *s);

#endif /* MLC_LOWER_SCHEDULE_SCHED_INT_H */
