/*
** status.h: errors as values (STYLE R7).
**
** Fallible functions return mlc_status: NULL on success, else a heap object
** with a code, a formatted message and the file:line that made it.  Callers
** propagate with MLC_RETURN_IF_ERROR; the CLI prints the message; the
** library never exits or aborts on bad input.
*/
#ifndef MLC_BASE_STATUS_H
#define MLC_BASE_STATUS_H

#include <stdarg.h>
#include "mlc/mlc.h"

/*
** Makes an error status with |code| and a printf-style message.  Never
** returns NULL: when memory is short it returns a static out-of-memory status
** (which mlc_status_free ignores).  Result transferred to the caller.
*/
mlc_status mlc_status_make_(const char *file, int line, mlc_code code,
                            const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
mlc_status mlc_status_makev_(const char *file, int line, mlc_code code,
                             const char *fmt, va_list ap);
#define mlc_make_status(code, ...) \
  mlc_status_make_(__FILE__, __LINE__, (code), __VA_ARGS__)

/*
** Prepends "prefix: " to the message of |s| (printf-style) and returns it.
** |s| is transferred in and returned (possibly reallocated).  NULL stays NULL.
*/
mlc_status mlc_status_annotate(mlc_status s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Where |s| was made ("graph/graph.c:120"); "" for NULL.  Borrowed. */
const char *mlc_status_where(mlc_status s);

/* Shorthand for the out-of-memory status. */
#define mlc_oom() mlc_make_status(MLC_RESOURCE_EXHAUSTED, "out of memory")

#define MLC_RETURN_IF_ERROR(expr)        \
  do {                                   \
    mlc_status mlc_s_ = (expr);          \
    if (mlc_s_) return mlc_s_;           \
  } while (0)

#endif /* MLC_BASE_STATUS_H */
