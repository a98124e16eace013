/*
** hash.c: FNV-1a string hash map of hash.h.
*/
#include "base/hash.h"
#include "base/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

void *mlc_hash_get(const mlc_hash *h, const char *key) {
  if (!h->cap) return NULL;
  for (size_t i = fnv(key) & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
    if (!h->keys[i]) return NULL;
    if (strcmp(h->keys[i], key) == 0) return h->vals[i];
  }
}

static int rehash(mlc_hash *h, size_t cap) {
  const char **keys = mlc_mem_calloc(cap, sizeof *keys);
  void **vals = mlc_mem_calloc(cap, sizeof *vals);
  if (!keys || !vals) {
    mlc_mem_free(keys);
    mlc_mem_free(vals);
    return -1;
  }
  for (size_t j = 0; j < h->cap; j++) {
    if (!h->keys[j]) continue;
    size_t i = fnv(h->keys[j]) & (cap - 1);
    while (keys[i]) i = (i + 1) & (cap - 1);
    keys[i] = h->keys[j];
    vals[i] = h->vals[j];
  }
  mlc_mem_free(h->keys);
  mlc_mem_free(h->vals);
  h->keys = keys;
  h->vals = vals;
  h->cap = cap;
  return 0;
}

int mlc_hash_put(mlc_hash *h, const char *key, void *val) {
  if ((h->len + 1) * 2 > h->cap && rehash(h, h->cap ? h->cap * 2 : 16)) return -1;
  size_t i = fnv(key) & (h->cap - 1);
  while (h->keys[i] && strcmp(h->keys[i], key) != 0) i = (i + 1) & (h->cap - 1);
  if (!h->keys[i]) h->len++;
  h->keys[i] = key;
  h->vals[i] = val;
  return 0;
}

int mlc_hash_replace(mlc_hash *h, const char *key, void *val) {
  if (!h->cap) return -1;
  for (size_t i = fnv(key) & (h->cap - 1); h->keys[i]; i = (i + 1) & (h->cap - 1))
    if (strcmp(h->keys[i], key) == 0) {
      h->vals[i] = val;
      return 0;
    }
  return -1;
}

void mlc_hash_fini(mlc_hash *h) {
  mlc_mem_free(h->keys);
  mlc_mem_free(h->vals);
  h->keys = NULL;
  h->vals = NULL;
  h->len = h->cap = 0;
}

