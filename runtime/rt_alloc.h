/*
** rt_alloc.h: allocation inside the runtime and the loader, through the
** allocator a program gives mlc_rt_set_allocator (mlc_runtime.h).
**
** Every block of the runtime comes from an mlc_rt_allocator held by value;
** one whose |realloc| is NULL is the C library's.  A model keeps the
** allocator it was opened with, and its sessions and thread pools use the
** model's, so a block is always released through the allocator that made
** it.  Aligned blocks (arenas, outputs, workspaces) keep the address of the
** allocation they lie in just below them.  Header-only (static inline), so
** that the loader and each model's copy of the runtime stay libc-only.
*/
#ifndef MLC_RUNTIME_RT_ALLOC_H
#define MLC_RUNTIME_RT_ALLOC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlc/mlc_runtime.h"

/* |n| bytes from |a| (NULL = the C library); NULL when out of memory. */
static inline void *mlc_rt_alloc(const mlc_rt_allocator *a, size_t n) {
  if (!n) n = 1;
  return a && a->realloc ? a->realloc(a->self, NULL, 0, n) : malloc(n);
}

/* Zeroed |n| * |size| bytes from |a|, overflow-checked; NULL when out of memory. */
static inline void *mlc_rt_calloc(const mlc_rt_allocator *a, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  size_t total = n * size;
  void *p = mlc_rt_alloc(a, total);
  if (p) memset(p, 0, total ? total : 1);
  return p;
}

/* Releases |p| (from mlc_rt_alloc/mlc_rt_calloc with the same |a|; NULL-safe). */
static inline void mlc_rt_free(const mlc_rt_allocator *a, void *p) {
  if (!p) return;
  if (a && a->realloc)
    a->realloc(a->self, p, 0, 0);
  else
    free(p);
}

/* |n| bytes aligned to |align| (a power of two) from |a|; NULL when out of memory. */
static inline void *mlc_rt_alloc_aligned(const mlc_rt_allocator *a, size_t n, size_t align) {
  if (align < sizeof(void *)) align = sizeof(void *);
  if (n > SIZE_MAX - align - sizeof(void *)) return NULL;
  char *raw = (char *)mlc_rt_alloc(a, n + align + sizeof(void *));
  if (!raw) return NULL;
  uintptr_t at = ((uintptr_t)raw + sizeof(void *) + align - 1) & ~(uintptr_t)(align - 1);
  memcpy((char *)at - sizeof(void *), &raw, sizeof raw);
  return (void *)at;
}

/* Releases |p| (from mlc_rt_alloc_aligned with the same |a|; NULL-safe). */
static inline void mlc_rt_free_aligned(const mlc_rt_allocator *a, void *p) {
  if (!p) return;
  void *raw;
  memcpy(&raw, (char *)p - sizeof(void *), sizeof raw);
  mlc_rt_free(a, raw);
}

#endif /* MLC_RUNTIME_RT_ALLOC_H */
