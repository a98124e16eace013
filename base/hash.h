/*
** hash.h: a string-keyed hash map (open addressing, linear probing).
**
** Keys are borrowed: they must outlive the map (they usually live in an
** arena).  Values are pointers.
*/
#ifndef MLC_BASE_HASH_H
#define MLC_BASE_HASH_H

#include <stddef.h>

typedef struct mlc_hash {
  const char **keys;
  void **vals;
  size_t len, cap; /* cap is 0 or a power of two */
} mlc_hash;

#define MLC_HASH_INIT {NULL, NULL, 0, 0}

/* The value stored under |key|, or NULL. */
void *mlc_hash_get(const mlc_hash *h, const char *key);
/* Stores |val| under |key| (replacing). 0 ok, -1 out of memory. */
int mlc_hash_put(mlc_hash *h, const char *key, void *val);
/* Replaces the value of |key|, which is there, with |val|: no allocation.
** 0 ok, -1 when |key| is not in the map. */
int mlc_hash_replace(mlc_hash *h, const char *key, void *val);
void mlc_hash_fini(mlc_hash *h);

#endif /* MLC_BASE_HASH_H */
