/*
** tir_lower_int.h: helpers shared by the lowering passes (lower/pass_*.c
** and tir_lower.c only).
**
** Two rebuilding walkers: one maps the child statements of a statement,
** one maps expressions bottom-up.  Both rebuild through the builders of
** tir.h (so constants fold again) and return the node itself when nothing
** below it changed.  Results live in the module's arena; NULL means out
** of memory (or a callback's failure, which the callback records).
*/
#ifndef MLC_LOWER_TIR_LOWER_INT_H
#define MLC_LOWER_TIR_LOWER_INT_H

#include "lower/tir.h"

/* Returns the replacement of |s| (|s| itself to keep it), NULL on failure. */
typedef mlc_tir_stmt *(*mlc_tir_lw_stmt_fn)(void *ctx, mlc_tir_stmt *s);
/* Returns the replacement of |e| whose children are already mapped. */
typedef mlc_tir_expr *(*mlc_tir_lw_expr_fn)(void *ctx, mlc_tir_expr *e);

/* |s| with each direct child statement c (loop body, sequence entries,
** branches, allocation body, block init and body) replaced by fn(ctx, c). */
mlc_tir_stmt *mlc_tir_lw_map_children(mlc_tir_module *m, mlc_tir_stmt *s, mlc_tir_lw_stmt_fn fn, void *ctx);

/* |e| rebuilt bottom-up: every node, after its children, goes through
** fn(ctx, node) (NULL fn: identity). */
mlc_tir_expr *mlc_tir_lw_map_expr(mlc_tir_module *m, mlc_tir_expr *e, mlc_tir_lw_expr_fn fn, void *ctx);

/* |s| with every expression directly in it (not in child statements)
** mapped by mlc_tir_lw_map_expr, and every store's buffer and indices
** passed through |store| when not NULL: store(ctx, s, &buffer, &n, &indices)
** may replace them (indices already mapped). */
typedef int (*mlc_tir_lw_store_fn)(void *ctx, const mlc_tir_stmt *s, mlc_tir_buffer **buf, int *n,
                                   mlc_tir_expr ***indices);
mlc_tir_stmt *mlc_tir_lw_map_own_exprs(mlc_tir_module *m, mlc_tir_stmt *s, mlc_tir_lw_expr_fn fn,
                                       mlc_tir_lw_store_fn store, void *ctx);

/* Nonzero if the statement tree |s| reads or writes buffer |b|. */
int mlc_tir_lw_uses_buffer(const mlc_tir_stmt *s, const mlc_tir_buffer *b);

#endif /* MLC_LOWER_TIR_LOWER_INT_H */
