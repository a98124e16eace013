/*
** tir_visit.h: one generic visitor and one mutator over TIR trees.
**
** The visitor walks statements and expressions in a fixed order, calling
** |pre| callbacks before a node's children and |post| callbacks after them.
** A pre callback returns MLC_TIR_VISIT_CONTINUE (visit the children),
** MLC_TIR_VISIT_SKIP (not the children; post is still called) or
** MLC_TIR_VISIT_STOP (end the whole walk at once); a post callback returns
** CONTINUE or STOP.  Unset callbacks count as CONTINUE.
**
** Children, in order:
**   FOR       min, extent, body            (the loop variable: see pre_stmt)
**   SEQ       stmts[0 .. n-1]
**   STORE     indices, value               (buffer: the |buffer| callback)
**   IF        cond, then_s, else_s
**   ALLOCATE  body                         (buffer: the |buffer| callback)
**   EVALUATE  value
**   ASSERT    cond, vals
**   BLOCK     per iter var: min, extent, binding; predicate; regions (only
**             with |regions| set: per region min[i], extent[i]); init; body
**   BINARY a, b; NOT / CAST / BROADCAST a; RAMP base, stride; SELECT c, t,
**   f; LOAD indices (buffer: the |buffer| callback); CALL args; REDUCE per
**   axis min, extent, then source.
** Buffer shapes are not children: a walker that needs them visits them from
** its |buffer| callback.
**
** The mutator rebuilds a tree bottom-up through the builders of tir.h (so
** constant folding applies to what changed) and shares every subtree that
** did not change: a walk that changes nothing returns the input itself.
*/
#ifndef MLC_LOWER_TIR_VISIT_H
#define MLC_LOWER_TIR_VISIT_H

#include "lower/tir.h"

enum { MLC_TIR_VISIT_CONTINUE = 0, MLC_TIR_VISIT_SKIP = 1, MLC_TIR_VISIT_STOP = 2 };

typedef struct mlc_tir_visitor {
  void *ctx; /* passed to every callback */
  int (*pre_expr)(void *ctx, const mlc_tir_expr *e);
  int (*post_expr)(void *ctx, const mlc_tir_expr *e);
  int (*pre_stmt)(void *ctx, const mlc_tir_stmt *s);
  int (*post_stmt)(void *ctx, const mlc_tir_stmt *s);
  /* Each buffer a LOAD, STORE or ALLOCATE names, when the node is visited
  ** (before its children).  Returns CONTINUE or STOP. */
  int (*buffer)(void *ctx, const mlc_tir_buffer *b);
  int regions; /* nonzero: visit the expressions of block access regions */
} mlc_tir_visitor;

/* Walks |e| / |s| (NULL: nothing).  Returns 1 when a callback stopped the
** walk, else 0. */
int mlc_tir_visit_expr(const mlc_tir_visitor *v, const mlc_tir_expr *e);
int mlc_tir_visit_stmt(const mlc_tir_visitor *v, const mlc_tir_stmt *s);

/*
** A mutator.  For each node, |pre_*| (when set) runs first: it returns a
** replacement that is used as is (its children are not walked), or NULL to
** walk the node's children.  The children are then mutated, the node is
** rebuilt when a child changed, and |post_*| (when set) gets the original
** node and the rebuilt one (equal to the original when nothing changed) and
** returns the result (usually |rebuilt|, or another node).  A callback that
** fails (out of memory) sets |failed|; a post callback may also return NULL.
** Rebuilt nodes keep their origin; rebuilt blocks keep their regions
** (mutated too).  Callbacks may call mlc_tir_mutate_* recursively.
*/
typedef struct mlc_tir_mutator mlc_tir_mutator;
struct mlc_tir_mutator {
  mlc_tir_module *m; /* where rebuilt nodes are built */
  void *ctx;
  mlc_tir_expr *(*pre_expr)(mlc_tir_mutator *mu, const mlc_tir_expr *e);
  mlc_tir_expr *(*post_expr)(mlc_tir_mutator *mu, const mlc_tir_expr *orig, mlc_tir_expr *rebuilt);
  mlc_tir_stmt *(*pre_stmt)(mlc_tir_mutator *mu, const mlc_tir_stmt *s);
  mlc_tir_stmt *(*post_stmt)(mlc_tir_mutator *mu, const mlc_tir_stmt *orig, mlc_tir_stmt *rebuilt);
  int failed; /* set on failure; the walk then returns NULL */
};

/* Mutates |e| / |s|.  Returns the result (|e| / |s| itself when nothing
** changed; shared subtrees), NULL on failure (out of memory, a callback set
** |failed|) or for a NULL input.  Results live in mu->m. */
mlc_tir_expr *mlc_tir_mutate_expr(mlc_tir_mutator *mu, const mlc_tir_expr *e);
mlc_tir_stmt *mlc_tir_mutate_stmt(mlc_tir_mutator *mu, const mlc_tir_stmt *s);

#endif /* MLC_LOWER_TIR_VISIT_H */
