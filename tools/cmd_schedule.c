/*
** cmd_schedule.c: `mlc-onnx schedule FUNC.tir [--trace TRACE]`.
*/
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

const char schedule_help[] =
    "usage: " PROG " schedule FUNC.tir [--trace TRACE] [--func NAME] [--print-trace]\n"
    "                         [-o FILE]\n"
    "\n"
    "Applies a TensorIR schedule to a prim function and prints the result, to\n"
    "experiment with schedules.  FUNC.tir holds prim functions as TIR text (as\n"
    "'" PROG " compile --dump-ir DIR' writes them in DIR/11_schedule/); TRACE is\n"
    "a schedule trace, one primitive per line, as DIR/11_schedule/*.trace holds\n"
    "them, e.g.\n"
    "\n"
    "    b0 = sch.get_block(name=\"Y\")\n"
    "    l1, l2, l3 = sch.get_loops(block=b0)\n"
    "    l4, l5 = sch.split(loop=l2, factors=[None, 4])\n"
    "    sch.reorder(ordered_loops=[l1, l4, l3, l5])\n"
    "\n"
    "Primitives never change what the function computes: one that would is\n"
    "refused with an error naming the trace line, the primitive and why.\n"
    "\n"
    "Options:\n"
    "  --trace TRACE      the schedule to apply (default: none; the function is\n"
    "                     printed as parsed)\n"
    "  --func NAME        the prim function of FUNC.tir to schedule (needed when\n"
    "                     the file holds more than one)\n"
    "  --print-trace      also print the applied trace, as comment lines\n"
    "  -o, --output FILE  write to FILE instead of standard output\n"
    "  -h, --help         show this help and exit\n";

/* The value of option argv[*i] ("--opt=value" or the next argument). */
static int value(int argc, char **argv, int *i, const char *name, const char **out) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) == 0 && a[n] == '=')
    *out = a + n + 1;
  else if (*i + 1 < argc)
    *out = argv[++*i];
  else
    return cli_usage_error("schedule", "schedule: %s needs a value", name);
  if (!**out) return cli_usage_error("schedule", "schedule: %s needs a value", name);
  return 0;
}

static int is_opt(const char *a, const char *name) {
  size_t n = strlen(name);
  return strcmp(a, name) == 0 || (strncmp(a, name, n) == 0 && a[n] == '=');
}

int cmd_schedule(int argc, char **argv) {
  const char *tir = NULL, *trace = NULL, *func = NULL, *output = NULL;
  int flags = 0, rc, opts_done = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!opts_done && a[0] == '-' && a[1]) {
      if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
        fputs(schedule_help, stdout);
        return EXIT_OK;
      } else if (strcmp(a, "--") == 0) {
        opts_done = 1;
      } else if (is_opt(a, "--trace")) {
        if (trace) return cli_usage_error("schedule", "schedule: --trace given twice");
        if ((rc = value(argc, argv, &i, "--trace", &trace))) return rc;
      } else if (is_opt(a, "--func")) {
        if (func) return cli_usage_error("schedule", "schedule: --func given twice");
        if ((rc = value(argc, argv, &i, "--func", &func))) return rc;
      } else if (strcmp(a, "-o") == 0 || is_opt(a, "--output")) {
        if (output) return cli_usage_error("schedule", "schedule: -o given twice");
        if ((rc = value(argc, argv, &i, a[1] == 'o' ? "-o" : "--output", &output))) return rc;
      } else if (strcmp(a, "--print-trace") == 0) {
        flags |= MLC_SCHEDULE_PRINT_TRACE;
      } else {
        return cli_usage_error("schedule", "schedule: unknown option '%s'", a);
      }
    } else {
      if (tir) return cli_usage_error("schedule", "schedule: one FUNC.tir only (extra argument '%s')", a);
      tir = a;
    }
  }
  if (!tir) return cli_usage_error("schedule", "schedule: no FUNC.tir given");
  char *text = NULL;
  mlc_status s = mlc_schedule_file(tir, func, trace, flags, &text);
  if (s) return cli_report(s);
  if (output) {
    s = mlc_file_write(output, text, strlen(text), tir);
    mlc_string_free(text);
    return s ? cli_report(s) : EXIT_OK;
  }
  fputs(text, stdout);
  mlc_string_free(text);
  return fflush(stdout) == 0 ? EXIT_OK : cli_error("cannot write the standard output");
}
