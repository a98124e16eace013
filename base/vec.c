/*
** vec.c: growth of vec.h arrays.
*/
#include "base/vec.h"
#include "base/alloc.h"

#include <stdint.h>
#include <stdlib.h>

int mlc_vec_grow_(void **data, size_t *cap, size_t elem, size_t need) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 8;
  while (c < need) {
    if (c > SIZE_MAX / 2) return -1;
    c *= 2;
  }
  if (elem && c > SIZE_MAX / elem) return -1;
  void *d = mlc_mem_realloc(*data, c * elem);
  if (!d) return -1;
  *data = d;
  *cap = c;
  return 0;
}
