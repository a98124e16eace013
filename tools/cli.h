/*
** cli.h: shared pieces of the mlc-onnx command line (tools/ only).
*/
#ifndef MLC_TOOLS_CLI_H
#define MLC_TOOLS_CLI_H

#include "mlc/mlc.h"

/* The program: mlc-onnx, or the deploy-side runner mlc-run (built from
** cmd_run.c with MLC_RUNNER, which runs models and nothing else). */
#ifdef MLC_RUNNER
#define PROG "mlc-run"
#define RUN_CMD PROG
#else
#define PROG "mlc-onnx"
#define RUN_CMD PROG " run"
#endif

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2 };

/* Prints "mlc-onnx: FMT" and a hint to run `mlc-onnx CMD --help`; returns 2. */
int cli_usage_error(const char *hint_cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "mlc-onnx: error: MSG" for |s| (transferred), returns 1. */
int cli_report(mlc_status s);
/* Prints "mlc-onnx: error: FMT", returns 1. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

extern const char compile_help[];
extern const char run_help[];
extern const char schedule_help[];
extern const char tune_help[];
int cmd_compile(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_tune(int argc, char **argv);

#endif /* MLC_TOOLS_CLI_H */
