/*
** alloc.c: the system allocator and checked helpers of alloc.h.
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

void *mlc_calloc(mlc_allocator a, size_t n, size_t size) {
  size_t total;
  if (mlc_mul_size(n, size, &total) || total == 0) return NULL;
  void *p = mlc_alloc(a, total);
  if (p) memset(p, 0, total);
  return p;
}
