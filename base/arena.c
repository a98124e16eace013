/*
** arena.c: chunked bump allocator of arena.h.
*/
#include "base/arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct chunk {
  struct chunk *prev;
  size_t size; /* usable bytes after the header */
  size_t used;
  /* data follows, 16-aligned */
} chunk;

#define HDR ((sizeof(chunk) + 15) & ~(size_t)15)
#define CHUNK_MIN (64 * 1024)

struct mlc_arena {
  mlc_allocator a;
  chunk *top;
  size_t total;
  int oom;
};

mlc_arena *mlc_arena_create(mlc_allocator a) {
  mlc_arena *ar = mlc_alloc(a, sizeof *ar);
  if (!ar) return NULL;
  memset(ar, 0, sizeof *ar);
  ar->a = a;
  return ar;
}

static void free_chunk(mlc_allocator a, chunk *c) { mlc_free(a, c, HDR + c->size); }

void mlc_arena_destroy(mlc_arena *ar) {
  if (!ar) return;
  chunk *c = ar->top;
  while (c) {
    chunk *p = c->prev;
    free_chunk(ar->a, c);
    c = p;
  }
  mlc_free(ar->a, ar, sizeof *ar);
}

void *mlc_arena_alloc(mlc_arena *ar, size_t n) {
  if (n == 0) n = 1;
  if (n > SIZE_MAX / 2) {
    ar->oom = 1;
    return NULL;
  }
  n = (n + 15) & ~(size_t)15;
  chunk *c = ar->top;
  if (!c || c->size - c->used < n) {
    size_t size = n > CHUNK_MIN ? n : CHUNK_MIN;
    chunk *nc = mlc_alloc(ar->a, HDR + size);
    if (!nc) {
      ar->oom = 1;
      return NULL;
    }
    nc->prev = c;
    nc->size = size;
    nc->used = 0;
    ar->top = c = nc;
  }
  void *p = (char *)c + HDR + c->used;
  c->used += n;
  ar->total += n;
  memset(p, 0, n);
  return p;
}

void *mlc_arena_array(mlc_arena *ar, size_t n, size_t size) {
  size_t total;
  if (mlc_mul_size(n, size, &total)) {
    ar->oom = 1;
    return NULL;
  }
  return mlc_arena_alloc(ar, total);
}

char *mlc_arena_strndup(mlc_arena *ar, const char *s, size_t n) {
  if (!s) return NULL;
  char *d = mlc_arena_alloc(ar, n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

char *mlc_arena_strdup(mlc_arena *ar, const char *s) {
  return s ? mlc_arena_strndup(ar, s, strlen(s)) : NULL;
}

void *mlc_arena_memdup(mlc_arena *ar, const void *p, size_t n) {
  void *d = mlc_arena_alloc(ar, n);
  if (d && n) memcpy(d, p, n);
  return d;
}

char *mlc_arena_printf(mlc_arena *ar, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *d = mlc_arena_alloc(ar, (size_t)n + 1);
  if (!d) return NULL;
  va_start(ap, fmt);
  vsnprintf(d, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return d;
}

int mlc_arena_oom(const mlc_arena *ar) { return ar->oom; }
size_t mlc_arena_used(const mlc_arena *ar) { return ar->total; }

mlc_arena_mark mlc_arena_get_mark(const mlc_arena *ar) {
  mlc_arena_mark m = {ar->top, ar->top ? ar->top->used : 0};
  return m;
}

void mlc_arena_reset(mlc_arena *ar, mlc_arena_mark m) {
  while (ar->top && ar->top != (chunk *)m.chunk) {
    chunk *p = ar->top->prev;
    ar->total -= ar->top->used;
    free_chunk(ar->a, ar->top);
    ar->top = p;
  }
  if (ar->top) {
    ar->total -= ar->top->used - m.used;
    ar->top->used = m.used;
  }
}
