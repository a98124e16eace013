/*
** cli.c: the error printing of the command-line programs (tools/cli.h),
** shared by mlc-onnx and the deploy-side runner mlc-run.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

/* Prints "mlc-onnx: error: ..." and a hint to stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *hint_cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, PROG ": error: ");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
#ifdef MLC_RUNNER
  (void)hint_cmd; /* one command: its synopsis, the help up to its first blank line */
  const char *end = strstr(run_help, "\n\n");
  fprintf(stderr, "%.*s\nRun '" PROG " --help' for more.\n", end ? (int)(end - run_help) : 0, run_help);
#else
  if (hint_cmd)
    fprintf(stderr, "Run '" PROG " %s --help' for usage.\n", hint_cmd);
  else
    fprintf(stderr, "Run '" PROG " --help' for usage.\n");
#endif
  return EXIT_USAGE;
}

int cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, PROG ": error: ");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return EXIT_ERROR;
}

/* Prints a library error and frees it; returns EXIT_ERROR. */
int cli_report(mlc_status s) {
  const char *msg = mlc_status_message(s);
  if (!msg || !*msg) msg = mlc_code_name(mlc_status_code(s));
  size_t n = strlen(msg);
  fprintf(stderr, PROG ": error: %s%s", msg, (n && msg[n - 1] == '\n') ? "" : "\n");
  mlc_status_free(s);
  return EXIT_ERROR;
}
