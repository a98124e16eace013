/*
** alloc.h: the one allocator interface (STYLE R10).
**
** A context (module, arena, loader) takes an mlc_allocator when it is created
** and allocates through it; nothing in the compiler calls malloc directly
** for IR or tensor data.  The default allocator wraps the C library; tests
** inject one that fails the Nth call to exercise every out-of-memory path.
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

#define MLC_NEW(a, T) ((T *)mlc_calloc((a), 1, sizeof(T)))
#define MLC_NEW_ARRAY(a, n, T) ((T *)mlc_calloc((a), (n), sizeof(T)))

#endif /* MLC_BASE_ALLOC_H */
