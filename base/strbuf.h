/*
** strbuf.h: a growable string for printers and messages.
**
** Appends never fail loudly: on out-of-memory the buffer sets |oom| and
** ignores further writes; check it once at the end.
*/
#ifndef MLC_BASE_STRBUF_H
#define MLC_BASE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct mlc_strbuf {
  char *data; /* NUL-terminated once anything was written */
  size_t len, cap;
  int oom;
} mlc_strbuf;

#define MLC_STRBUF_INIT {NULL, 0, 0, 0}

void mlc_sb_puts(mlc_strbuf *b, const char *s);
void mlc_sb_putn(mlc_strbuf *b, const char *s, size_t n);
void mlc_sb_putc(mlc_strbuf *b, char c);
void mlc_sb_printf(mlc_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void mlc_sb_vprintf(mlc_strbuf *b, const char *fmt, va_list ap);
/* Appends |s| as a JSON string literal (with quotes and escapes). */
void mlc_sb_json_str(mlc_strbuf *b, const char *s);
/* Appends a double in the shortest form that reads back exactly. */
void mlc_sb_double(mlc_strbuf *b, double v);
/* The text ("" when empty); borrowed. */
const char *mlc_sb_str(const mlc_strbuf *b);
/* Frees the storage; the buffer may be reused. */
void mlc_sb_fini(mlc_strbuf *b);

#endif /* MLC_BASE_STRBUF_H */
