/*
** vec.h: typed growable arrays.
**
**   MLC_VEC(int) v = {0};
**   if (mlc_vec_push(&v, 3)) -> out of memory
**   mlc_vec_free(&v);
**
** Storage comes from the C library's allocator; vectors are for short-lived
** work lists inside one function or pass (IR itself lives in arenas).
*/
#ifndef MLC_BASE_VEC_H
#define MLC_BASE_VEC_H

#include <stddef.h>

#include "base/alloc.h"

#define MLC_VEC(T) struct { T *data; size_t len, cap; }

/* Grows *data so that it holds at least |need| elements. 0 ok, -1 oom. */
int mlc_vec_grow_(void **data, size_t *cap, size_t elem, size_t need);

#define mlc_vec_reserve(v, n) \
  mlc_vec_grow_((void **)&(v)->data, &(v)->cap, sizeof *(v)->data, (n))
/* Appends |x|; evaluates to 0, or -1 when out of memory. */
#define mlc_vec_push(v, x)                                          \
  (((v)->len < (v)->cap || mlc_vec_reserve((v), (v)->len + 1) == 0) \
       ? ((v)->data[(v)->len++] = (x), 0)                           \
       : -1)
#define mlc_vec_free(v) (mlc_mem_free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0)

#include <stdlib.h>

#endif /* MLC_BASE_VEC_H */
