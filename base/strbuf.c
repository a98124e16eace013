/*
** strbuf.c: growable strings of strbuf.h.
*/
#include "base/strbuf.h"
#include "base/alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int grow(mlc_strbuf *b, size_t extra) {
  if (b->oom) return -1;
  if (b->len + extra + 1 <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) {
    if (cap > ((size_t)-1) / 2) {
      b->oom = 1;
      return -1;
    }
    cap *= 2;
  }
  char *d = mlc_mem_realloc(b->data, cap);
  if (!d) {
    b->oom = 1;
    return -1;
  }
  b->data = d;
  b->cap = cap;
  return 0;
}

void mlc_sb_putn(mlc_strbuf *b, const char *s, size_t n) {
  if (grow(b, n)) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

void mlc_sb_puts(mlc_strbuf *b, const char *s) { mlc_sb_putn(b, s, strlen(s)); }
void mlc_sb_putc(mlc_strbuf *b, char c) { mlc_sb_putn(b, &c, 1); }

void mlc_sb_vprintf(mlc_strbuf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0 || grow(b, (size_t)n)) return;
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void mlc_sb_printf(mlc_strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mlc_sb_vprintf(b, fmt, ap);
  va_end(ap);
}

void mlc_sb_json_str(mlc_strbuf *b, const char *s) {
  mlc_sb_putc(b, '"');
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    switch (*p) {
      case '"': mlc_sb_puts(b, "\\\""); break;
      case '\\': mlc_sb_puts(b, "\\\\"); break;
      case '\n': mlc_sb_puts(b, "\\n"); break;
      case '\r': mlc_sb_puts(b, "\\r"); break;
      case '\t': mlc_sb_puts(b, "\\t"); break;
      default:
        if (*p < 0x20)
          mlc_sb_printf(b, "\\u%04x", *p);
        else
          mlc_sb_putc(b, (char)*p);
    }
  }
  mlc_sb_putc(b, '"');
}

void mlc_sb_double(mlc_strbuf *b, double v) {
  if (isnan(v)) {
    mlc_sb_puts(b, "nan");
    return;
  }
  if (isinf(v)) {
    mlc_sb_puts(b, v < 0 ? "-inf" : "inf");
    return;
  }
  char tmp[40];
  for (int prec = 6; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    if (strtod(tmp, NULL) == v) break;
  }
  mlc_sb_puts(b, tmp);
}

const char *mlc_sb_str(const mlc_strbuf *b) { return b->data ? b->data : ""; }

void mlc_sb_fini(mlc_strbuf *b) {
  mlc_mem_free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->oom = 0;
}
