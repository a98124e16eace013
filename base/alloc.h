/*
** alloc.h: the one allocator interface (STYLE R10).
**
** A context (module, arena, loader) takes an mlc_allocator when it is created
** and allocates through it; nothing in the compiler calls malloc directly
** for IR or tensor data.  The system allocator wraps the C library.
**
** Code without a context allocates through the process-wide default
** allocator (mlc_mem_alloc and friends below), which is the system one
** until a program replaces it with mlc_allocator_set_default; contexts of
** the compiler are created with mlc_allocator_default().  The test driver
** replaces it with one that fails the Nth call, to exercise every
** out-of-memory path (tests/faults.sh).  Two kinds of memory stay outside:
** LLVM's own allocations (its C API takes no allocator) and the C
** library's internal ones (stdio buffers, dlopen).
*/
#ifndef MLC_BASE_ALLOC_H
#define MLC_BASE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/*
** realloc(self, p, old, new): new == 0 frees |p| and returns NULL; p == NULL
** allocates.  Returns NULL when it cannot allocate (|p| stays valid).
*/
typedef struct mlc_allocator {
  void *self;
  void *(*realloc)(void *self, void *p, size_t old_size, size_t new_size);
} mlc_allocator;

/* The C library's allocator. */
mlc_allocator mlc_allocator_system(void);

static inline void *mlc_alloc(mlc_allocator a, size_t n) {
  return n ? a.realloc(a.self, NULL, 0, n) : NULL;
}
static inline void mlc_free(mlc_allocator a, void *p, size_t n) {
  if (p) a.realloc(a.self, p, n, 0);
}
/* Zeroed allocation of |n| elements of |size| bytes, overflow-checked. */
void *mlc_calloc(mlc_allocator a, size_t n, size_t size);

/* n * size without overflow: returns 0 and sets *out, or -1 on overflow. */
static inline int mlc_mul_size(size_t n, size_t size, size_t *out) {
  if (size && n > SIZE_MAX / size) return -1;
  *out = n * size;
  return 0;
}

/*
** The process-wide default allocator: the system one unless replaced.
** mlc_allocator_set_default(|a|) replaces it (|a| copied; NULL restores the
** system allocator).  Not thread-safe: call it while no other thread
** allocates, and only when every block still live may be released through
** the new allocator (a wrapper of the system allocator, as the tests use).
** The default allocator is called with |old_size| 0 where the caller does
** not track a block's size, so it must not depend on |old_size|.
*/
mlc_allocator mlc_allocator_default(void);
void mlc_allocator_set_default(const mlc_allocator *a);

/*
** malloc, calloc, realloc, strdup and free on the default allocator, for
** code without a context.  NULL when out of memory (or for 0 bytes from
** mlc_mem_alloc/mlc_mem_calloc); mlc_mem_realloc(p, 0) frees |p| and returns
** NULL; mlc_mem_free is NULL-safe.  Blocks from these may be released only
** with mlc_mem_free or mlc_mem_realloc.
*/
void *mlc_mem_alloc(size_t n);
void *mlc_mem_calloc(size_t n, size_t size);
void *mlc_mem_realloc(void *p, size_t n);
char *mlc_mem_strdup(const char *s);
void mlc_mem_free(void *p);

/*
** |size| bytes aligned to |align| (a power of two) from the default
** allocator; NULL when out of memory.  Released only with
** mlc_mem_aligned_free (NULL-safe).
*/
void *mlc_mem_aligned_alloc(size_t size, size_t align);
void mlc_mem_aligned_free(void *p);

#define MLC_NEW(a, T) ((T *)mlc_calloc((a), 1, sizeof(T)))
#define MLC_NEW_ARRAY(a, n, T) ((T *)mlc_calloc((a), (n), sizeof(T)))

#endif /* MLC_BASE_ALLOC_H */
