/*
** access.h: buffer accesses of blocks, for the cache, layout and reduction
** primitives (cache_read.c, cache_write.c, transform_layout.c,
** decompose_reduction.c; inside lower/schedule/ only).
**
** The buffers a block reads and writes are numbered as the primitives'
** read_buffer_index / write_buffer_index / buffer_index arguments count
** them: in order of first access, the init before the body, a statement's
** indices before its value and an expression's operands left to right.  A
** block writes the buffers it stores to; it reads the buffers it loads
** from, except (as TVM's T.reads of a reduction block) that a block with an
** init does not list among its reads a buffer it writes.
**
** Remapping rewrites accesses in place: statement nodes are kept (handles
** stay valid), the expressions that hold a changed access are rebuilt
** through the builders (in the schedule's module), unchanged ones shared.
*/
#ifndef MLC_LOWER_SCHEDULE_ACCESS_H
#define MLC_LOWER_SCHEDULE_ACCESS_H

#include "lower/schedule/sched_int.h"

/* The buffers |blk| writes (|writes| nonzero) or reads, in the order above:
** at most |max| in |out|; the count, or -1 when there are more. */
int sch_block_buffers(const mlc_tir_stmt *blk, int writes, mlc_tir_buffer **out, int max);

/* Nonzero if statement |st| (its expressions, at any depth) uses |v|. */
int sch_stmt_uses_var(const mlc_tir_stmt *st, const mlc_tir_var *v);

/* The new indices of an access of the remapped buffer: |n| old indices in,
** the new buffer's rank of indices out (built in |m|); NULL on oom. */
typedef mlc_tir_expr **(*sch_index_map_fn)(void *ctx, mlc_tir_module *m, int n, mlc_tir_expr *const *old);

/*
** Every load and store of |from| in |st| (and what it contains) becomes an
** access of |to| at the indices |map| gives (NULL: the same indices); with
** |loads_only| stores are left alone.  Block access regions of |from| become
** the whole of |to| unless |map| is NULL (then only the buffer changes).
** An allocation of |from| inside |st| is not changed.  Fails only on oom.
*/
MLC_MUST_USE mlc_status sch_remap_buffer(mlc_sch *s, mlc_tir_stmt *st, const mlc_tir_buffer *from, mlc_tir_buffer *to,
                                         int loads_only, sch_index_map_fn map, void *ctx);

/* A buffer name not used by a parameter or an allocation of the function:
** |base|, else base_1, base_2, ... (in the module's arena; NULL on oom). */
const char *sch_unique_buffer_name(mlc_sch *s, const char *base);

/* The ALLOCATE statement of |b| in the function, or NULL (a parameter). */
mlc_tir_stmt *sch_find_alloc(mlc_sch *s, const mlc_tir_buffer *b);


/* Nonzero if |st| stores to |b| (|writes_only|) or loads from or stores to
** it, anywhere except inside the statement |skip| (may be NULL). */
int sch_accesses_outside(const mlc_tir_stmt *st, const mlc_tir_buffer *b, int writes_only, const mlc_tir_stmt *skip);

/*
** The region of |b| that |blk| reads (|writes| 0) or writes over every
** iteration of the block: per dimension min and extent (|b|->rank of each,
** in the module's arena) relaxed over the block's iteration variables and
** the loops inside it, clamped to a constant shape.  The result uses no
** variable of the loops and blocks around the block.  A REGION error (a
** message naming the primitive's block and the buffer) when the region has
** no such bound.
*/
MLC_MUST_USE mlc_status sch_block_region(mlc_sch *s, mlc_tir_stmt *blk, const mlc_tir_buffer *b, int writes,
                                         mlc_tir_expr **mins, mlc_tir_expr **exts);

/* The statement at the top level of the scope of |blk| (directly in its
** scope block's or the function's body, below allocations and sequences)
** that holds |blk|: the loop nest a cache block goes before or after. */
mlc_tir_stmt *sch_scope_nest(mlc_sch *s, const mlc_tir_stmt *blk);

/* The storage scope named |name| ("global", "local", "shared"); -1 when
** unknown. */
int sch_storage_scope(const char *name);

/* A copy stage: loops ax0, ax1, ... over the region (|mins|, |exts|, the
** rank of |dst| each) around a block |name| with spatial iteration
** variables v0, v1, ... (domain: the region) that stores src[v] into
** dst[v].  NULL on oom. */
mlc_tir_stmt *sch_copy_stage(mlc_sch *s, const char *name, mlc_tir_buffer *dst, mlc_tir_buffer *src,
                             mlc_tir_expr *const *mins, mlc_tir_expr *const *exts);

/* Recomputes the access regions (mlc_tir_block_compute_regions) of every
** block in |st| that lists regions and accesses |b| (nested blocks first),
** so that regions a primitive changed stay exact.  Blocks without regions
** stay so. */
MLC_MUST_USE mlc_status sch_refresh_regions(mlc_sch *s, mlc_tir_stmt *st, const mlc_tir_buffer *b);

/* The arguments cache_read (|writes| 0) and cache_write (1) share,
** resolved and checked: the block, the |index|-th buffer it reads (writes)
** (key read_buffer_index / write_buffer_index), the loop nest holding the
** block, the storage scope and its name. */
MLC_MUST_USE mlc_status sch_cache_args(mlc_sch *s, const mlc_sch_inst *in, int writes, mlc_tir_stmt **blk,
                                       mlc_tir_buffer **buf, mlc_tir_stmt **nest, int *scope,
                                       const char **scope_name);
/* The rewrite cache_read (|writes| 0) and cache_write (1) share, after
** their checks: a buffer BUF_SCOPE of |buf|'s shape in |scope|, a copy
** block of that name over the region |blk| reads (writes) placed just
** before (after) |nest|, the loop nest holding |blk|; |blk| then accesses
** the cache.  The copy block is the instruction's output. */
MLC_MUST_USE mlc_status sch_cache_stage(mlc_sch *s, mlc_sch_inst *in, mlc_tir_stmt *blk, mlc_tir_stmt *nest,
                                        mlc_tir_buffer *buf, int scope, const char *scope_name, int writes);
/* The typed entry point of cache_read / cache_write: instruction |kind|
** with |key| naming the buffer index. */
MLC_MUST_USE mlc_status sch_cache_inst(mlc_sch *s, mlc_sch_inst_kind kind, const char *key, mlc_sch_rv block,
                                       int index, const char *scope, mlc_sch_rv *out);

#endif /* MLC_LOWER_SCHEDULE_ACCESS_H */
