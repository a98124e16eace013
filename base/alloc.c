/*
** alloc.c: the system allocator, the process-wide default allocator and the
** checked helpers of alloc.h.  This is the one file of the compiler that
** calls the C library's allocator.
*/
#include "base/alloc.h"

#include <stdlib.h>
#include <string.h>

static void *sys_realloc(void *self, void *p, size_t old_size, size_t new_size) {
  (void)self;
  (void)old_size;
  if (new_size == 0) {
    free(p);
    return NULL;
  }
  return realloc(p, new_size);
}

mlc_allocator mlc_allocator_system(void) {
  mlc_allocator a = {NULL, sys_realloc};
  return a;
}

static mlc_allocator default_alloc = {NULL, sys_realloc};

mlc_allocator mlc_allocator_default(void) { return default_alloc; }

void mlc_allocator_set_default(const mlc_allocator *a) {
  default_alloc = a ? *a : mlc_allocator_system();
}

void *mlc_mem_alloc(size_t n) { return mlc_alloc(default_alloc, n); }

void *mlc_mem_calloc(size_t n, size_t size) { return mlc_calloc(default_alloc, n, size); }

void *mlc_mem_realloc(void *p, size_t n) {
  if (!p && !n) return NULL;
  return default_alloc.realloc(default_alloc.self, p, 0, n);
}

char *mlc_mem_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = mlc_mem_alloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void mlc_mem_free(void *p) { mlc_free(default_alloc, p, 0); }

/* An aligned block keeps the address of the allocation it lies in, in the
** pointer-sized word just below it. */
void *mlc_mem_aligned_alloc(size_t size, size_t align) {
  if (align < sizeof(void *)) align = sizeof(void *);
  if (size > SIZE_MAX - align - sizeof(void *)) return NULL;
  char *raw = mlc_mem_alloc(size + align + sizeof(void *));
  if (!raw) return NULL;
  uintptr_t at = ((uintptr_t)raw + sizeof(void *) + align - 1) & ~(uintptr_t)(align - 1);
  memcpy((char *)at - sizeof(void *), &raw, sizeof raw);
  return (void *)at;
}

void mlc_mem_aligned_free(void *p) {
  if (!p) return;
  void *raw;
  memcpy(&raw, (char *)p - sizeof(void *), sizeof raw);
  mlc_mem_free(raw);
}

void *mlc_calloc(mlc_allocator a, size_t n, size_t size) {
  size_t total;
  if (mlc_mul_size(n, size, &total) || total == 0) return NULL;
  void *p = mlc_alloc(a, total);
  if (p) memset(p, 0, total);
  return p;
}
