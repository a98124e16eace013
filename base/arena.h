/*
** arena.h: bump allocation for IR (STYLE R11).
**
** An IR module owns one arena for its nodes, attributes, names and shapes and
** frees all of it in one call.  Passes take a mark and reset to it for
** scratch memory.  Allocations are zeroed and 16-byte aligned.  On failure
** an allocation returns NULL and the arena's sticky oom flag is set.
*/
#ifndef MLC_BASE_ARENA_H
#define MLC_BASE_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include "base/alloc.h"

typedef struct mlc_arena mlc_arena;

/* A position to reset to. */
typedef struct mlc_arena_mark {
  void *chunk;
  size_t used;
} mlc_arena_mark;

/* Creates an arena drawing chunks from |a|. NULL when out of memory. */
mlc_arena *mlc_arena_create(mlc_allocator a);
/* Frees the arena and everything allocated in it. NULL-safe. */
void mlc_arena_destroy(mlc_arena *ar);
/* |n| zeroed bytes, 16-aligned; NULL (and oom set) on failure or n overflow. */
void *mlc_arena_alloc(mlc_arena *ar, size_t n);
/* |n| elements of |size| bytes, overflow-checked. */
void *mlc_arena_array(mlc_arena *ar, size_t n, size_t size);
/* Copy of |s| (NULL gives NULL). */
char *mlc_arena_strdup(mlc_arena *ar, const char *s);
char *mlc_arena_strndup(mlc_arena *ar, const char *s, size_t n);
/* Copy of |n| bytes from |p|. */
void *mlc_arena_memdup(mlc_arena *ar, const void *p, size_t n);
/* printf into the arena. */
char *mlc_arena_printf(mlc_arena *ar, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Nonzero once any allocation failed. */
int mlc_arena_oom(const mlc_arena *ar);
/* Bytes handed out so far (for statistics). */
size_t mlc_arena_used(const mlc_arena *ar);
mlc_arena_mark mlc_arena_get_mark(const mlc_arena *ar);
/* Frees everything allocated after |m|. */
void mlc_arena_reset(mlc_arena *ar, mlc_arena_mark m);

#define MLC_ARENA_NEW(ar, T) ((T *)mlc_arena_alloc((ar), sizeof(T)))
#define MLC_ARENA_ARRAY(ar, n, T) ((T *)mlc_arena_array((ar), (n), sizeof(T)))

#endif /* MLC_BASE_ARENA_H */
