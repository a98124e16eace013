/*
** status.c: the status object of status.h.
*/
#include "config.h"
#include "base/status.h"
#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mlc_status_s {
  mlc_code code;
  int is_static;
  char where[64];
  char *msg;
};

static struct mlc_status_s oom_status = {MLC_RESOURCE_EXHAUSTED, 1, "", "out of memory"};

mlc_status mlc_status_makev_(const char *file, int line, mlc_code code,
                             const char *fmt, va_list ap) {
  struct mlc_status_s *s = mlc_mem_alloc(sizeof *s);
  if (!s) return &oom_status;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  s->msg = mlc_mem_alloc((size_t)n + 1);
  if (!s->msg) {
    mlc_mem_free(s);
    return &oom_status;
  }
  vsnprintf(s->msg, (size_t)n + 1, fmt, ap);
  s->code = code == MLC_OK ? MLC_INTERNAL : code;
  s->is_static = 0;
  snprintf(s->where, sizeof s->where, "%s:%d", file ? file : "?", line);
  return s;
}

mlc_status mlc_status_make_(const char *file, int line, mlc_code code,
                            const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mlc_status s = mlc_status_makev_(file, line, code, fmt, ap);
  va_end(ap);
  return s;
}

mlc_status mlc_status_annotate(mlc_status s, const char *fmt, ...) {
  if (!s || s->is_static) return s;
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  size_t a = strlen(prefix), b = strlen(s->msg);
  char *m = mlc_mem_alloc(a + 2 + b + 1);
  if (!m) return s;
  memcpy(m, prefix, a);
  memcpy(m + a, ": ", 2);
  memcpy(m + a + 2, s->msg, b + 1);
  mlc_mem_free(s->msg);
  s->msg = m;
  return s;
}

mlc_code mlc_status_code(mlc_status s) { return s ? s->code : MLC_OK; }
const char *mlc_status_message(mlc_status s) { return s ? s->msg : ""; }
const char *mlc_status_where(mlc_status s) { return s ? s->where : ""; }

const char *mlc_code_name(mlc_code code) {
  switch (code) {
    case MLC_OK: return "OK";
    case MLC_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case MLC_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case MLC_OUT_OF_RANGE: return "OUT_OF_RANGE";
    case MLC_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case MLC_INTERNAL: return "INTERNAL";
    case MLC_NOT_FOUND: return "NOT_FOUND";
    case MLC_IO_ERROR: return "IO_ERROR";
  }
  return "UNKNOWN";
}

void mlc_status_free(mlc_status s) {
  if (!s || s->is_static) return;
  mlc_mem_free(s->msg);
  mlc_mem_free(s);
}

const char *mlc_version(void) { return PACKAGE_VERSION; }
