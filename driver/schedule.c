/*
** schedule.c: mlc_schedule_file, the library side of `mlc-onnx schedule`.
*/
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status.h"
#include "base/strbuf.h"
#include "lower/schedule/schedule.h"
#include "lower/tir.h"

/* Text inputs larger than this are refused. */
#define MAX_TEXT (64u << 20)

static mlc_status read_text(const char *path, char **out, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return mlc_make_status(MLC_IO_ERROR, "cannot open %s: %s", path, strerror(errno));
  mlc_strbuf b = MLC_STRBUF_INIT;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (b.len + n > MAX_TEXT) {
      fclose(f);
      mlc_sb_fini(&b);
      return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: larger than %u MiB", path, MAX_TEXT >> 20);
    }
    mlc_sb_putn(&b, chunk, n);
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    mlc_sb_fini(&b);
    return mlc_make_status(MLC_IO_ERROR, "cannot read %s", path);
  }
  if (b.oom) {
    mlc_sb_fini(&b);
    return mlc_oom();
  }
  *len = b.len;
  *out = b.data ? b.data : mlc_mem_strdup("");
  return *out ? NULL : mlc_oom();
}

MLC_API mlc_status mlc_schedule_file(const char *tir_path, const char *func, const char *trace_path, int flags,
                             char **out_text) {
  *out_text = NULL;
  if (!tir_path) return mlc_make_status(MLC_INVALID_ARGUMENT, "schedule: no TIR file");
  char *src = NULL, *trace = NULL;
  size_t src_len = 0, trace_len = 0;
  mlc_tir_module *m = NULL;
  mlc_sch *s = NULL;
  mlc_strbuf out = MLC_STRBUF_INIT;
  mlc_status st = read_text(tir_path, &src, &src_len);
  if (!st && trace_path) st = read_text(trace_path, &trace, &trace_len);
  if (!st) st = mlc_tir_module_create(mlc_allocator_default(), &m);
  if (!st) st = mlc_tir_parse_module(m, src, src_len, tir_path);
  mlc_tir_func *f = NULL;
  if (!st) {
    if (func) {
      f = mlc_tir_module_find(m, func);
      if (!f) st = mlc_make_status(MLC_NOT_FOUND, "%s: no prim function named \"%s\"", tir_path, func);
    } else if (m->nfuncs != 1) {
      st = mlc_make_status(MLC_INVALID_ARGUMENT, "%s holds %d prim functions: name one", tir_path, m->nfuncs);
    } else {
      f = m->funcs[0];
    }
  }
  if (!st) st = mlc_sch_create(m, f, 0, &s);
  if (!st && trace) st = mlc_sch_apply_trace(s, trace, trace_len, trace_path);
  if (!st) {
    mlc_tir_print_func(mlc_sch_func(s), &out);
    if (flags & MLC_SCHEDULE_PRINT_TRACE) {
      mlc_strbuf t = MLC_STRBUF_INIT;
      mlc_sch_print_trace(s, &t);
      mlc_sb_puts(&out, "\n# trace:\n");
      for (const char *p = t.len ? mlc_sb_str(&t) : ""; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        mlc_sb_puts(&out, "# ");
        mlc_sb_putn(&out, p, n);
        mlc_sb_putc(&out, '\n');
        p += n + (nl ? 1 : 0);
      }
      if (t.oom) out.oom = 1;
      mlc_sb_fini(&t);
    }
    if (out.oom) st = mlc_oom();
  }
  if (!st) {
    *out_text = mlc_mem_strdup(out.len ? mlc_sb_str(&out) : "");
    if (!*out_text) st = mlc_oom();
  }
  mlc_sb_fini(&out);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
  mlc_mem_free(src);
  mlc_mem_free(trace);
  return st;
}
