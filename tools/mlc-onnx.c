/*
** mlc-onnx.c: the mlc-onnx command line.
**
** A thin layer over the public library API (mlc/mlc.h): it parses the
** command line by hand, calls the library and prints what it returns.
** Exit status: 0 success; 1 a clear error about the model or a file (the
** library's message on stderr, prefixed "mlc-onnx: error: "); 2 bad usage
** (unknown command or flag, missing or extra argument, conflicting flags),
** with a one-line hint to run --help.  The help text lists only what this
** build can do.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"
#include "tools/cli.h"

static const char main_help[] =
    "usage: " PROG " COMMAND [ARGS...]\n"
    "       " PROG " --help | --version\n"
    "\n"
    "An ONNX model compiler.\n"
    "\n"
    "Commands:\n"
    "  compile MODEL.onnx -o MODEL.so\n"
    "                  compile an ONNX model into one deployable shared library\n"
    "  run MODEL.so    run a compiled model on inputs (.npy or .pb), write its\n"
    "                  outputs, time it (--bench)\n"
    "  inspect MODEL   describe an ONNX model (signature, ops, parameters, and\n"
    "                  whether this build can import it; also --json, --ir,\n"
    "                  --dot) or a compiled model (signature, kernels, memory\n"
    "                  plan, manifest)\n"
    "  schedule FUNC.tir --trace TRACE\n"
    "                  apply a TensorIR schedule (a trace of primitives such as\n"
    "                  split, reorder, compute_at) to a prim function and print it\n"
    "  tune MODEL.onnx -o LOG [--trials N] [--budget TIME]\n"
    "                  search faster schedules of the model's kernels on this\n"
    "                  machine; 'compile --tune-log LOG' applies them\n"
    "  serve MODEL.so ... --port N\n"
    "                  serve compiled models over HTTP with the Open Inference\n"
    "                  Protocol (KServe v2); also the program mlc-serve\n"
    "  help [COMMAND]  show the help of COMMAND (or this help)\n"
    "\n"
    "Options:\n"
    "  -h, --help      show this help and exit\n"
    "  --version       print the version and exit\n"
    "\n"
    "Exit status: 0 success, 1 an error about the model or a file, 2 bad usage.\n"
    "Run '" PROG " help COMMAND' for the options of a command.\n";

static const char inspect_help[] =
    "usage: " PROG " inspect MODEL [--json | --ir | --dot] [-o FILE]\n"
    "\n"
    "For a compiled model (a .so from '" PROG " compile'): its inputs and outputs,\n"
    "symbolic dimensions, steps and kernels, external calls, arena and weights\n"
    "bytes, and the manifest (compiler version, source model hash, target,\n"
    "options); --json prints the same as one JSON object.\n"
    "\n"
    "Describes the ONNX model MODEL (a .onnx file): IR version, producer, opset\n"
    "imports, inputs and outputs with dtype and shape (symbolic dimensions by\n"
    "name, unknown ones as ?), node count, op types by count, and the number of\n"
    "parameters (initializer and Constant elements) and their bytes.  The model\n"
    "is then imported into the graph IR, with type and shape inference.\n"
    "\n"
    "A model this build cannot import is an error (exit status 1): the message\n"
    "lists every unsupported op, opset, attribute or dtype, each with its node.\n"
    "\n"
    "Options:\n"
    "  --json             print the same facts as one JSON object\n"
    "  --ir               print the graph IR after import (TVMScript-like)\n"
    "  --dot              print the main graph function as Graphviz dot\n"
    "  -o, --output FILE  write to FILE instead of standard output\n"    "                     (replaced atomically; a symbolic link, a file that is\n"
    "                     not a regular one, or MODEL itself is refused)\n"
    "  -h, --help         show this help and exit\n"
    "  --                 end of options (a MODEL name may then start with '-')\n"
    "\n"
    "--json, --ir and --dot exclude one another.\n";

/* Writes |text| to |path| ("-" or NULL: stdout), never over |model|. */
static int write_output(const char *path, const char *text, const char *model) {
  size_t n = strlen(text);
  if (!path || strcmp(path, "-") == 0) {
    if (fwrite(text, 1, n, stdout) != n || fflush(stdout) != 0) {
      fprintf(stderr, PROG ": error: cannot write to standard output: %s\n", strerror(errno));
      return EXIT_ERROR;
    }
    return EXIT_OK;
  }
  mlc_status s = mlc_file_write(path, text, n, model);
  return s ? cli_report(s) : EXIT_OK;
}

/* inspect MODEL [--json | --ir | --dot] [-o FILE] */
static int cmd_inspect(int argc, char **argv) {
  const char *model = NULL, *output = NULL, *fmt_flag = NULL;
  mlc_inspect_format fmt = MLC_INSPECT_TEXT;
  int options_done = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!options_done && a[0] == '-' && a[1] != '\0') {
      mlc_inspect_format f;
      if (strcmp(a, "--") == 0) {
        options_done = 1;
        continue;
      } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
        fputs(inspect_help, stdout);
        return EXIT_OK;
      } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
        if (i + 1 >= argc) return cli_usage_error("inspect", "inspect: %s needs a file name", a);
        if (output) return cli_usage_error("inspect", "inspect: %s given twice", a);
        output = argv[++i];
        continue;
      } else if (strncmp(a, "--output=", 9) == 0) {
        if (!a[9]) return cli_usage_error("inspect", "inspect: %s needs a file name", "--output=");
        if (output) return cli_usage_error("inspect", "inspect: %s given twice", "--output");
        output = a + 9;
        continue;
      } else if (strcmp(a, "--json") == 0) {
        f = MLC_INSPECT_JSON;
      } else if (strcmp(a, "--ir") == 0) {
        f = MLC_INSPECT_IR;
      } else if (strcmp(a, "--dot") == 0) {
        f = MLC_INSPECT_DOT;
      } else {
        return cli_usage_error("inspect", "inspect: unknown option '%s'", a);
      }
      if (fmt_flag && strcmp(fmt_flag, a) != 0) {
        return cli_usage_error("inspect", "inspect: %s and %s exclude one another", fmt_flag, a);
      }
      fmt_flag = a;
      fmt = f;
      continue;
    }
    if (model) return cli_usage_error("inspect", "inspect: one MODEL only (extra argument '%s')", a);
    model = a;
  }
  if (!model) return cli_usage_error("inspect", "inspect: %s", "no MODEL given");
  if (!*model) return cli_usage_error("inspect", "inspect: %s", "empty MODEL name");

  char *text = NULL;
  mlc_status s = mlc_inspect_file(model, fmt, &text);
  if (s) return cli_report(s);
  int rc = write_output(output, text ? text : "", model);
  mlc_string_free(text);
  return rc;
}

/* help [COMMAND] */
static int cmd_help(int argc, char **argv) {
  if (argc == 0 || strcmp(argv[0], "help") == 0) {
    fputs(main_help, stdout);
    return EXIT_OK;
  }
  if (argc > 1) return cli_usage_error(NULL, "help: one COMMAND only (extra argument '%s')", argv[1]);
  if (strcmp(argv[0], "inspect") == 0) {
    fputs(inspect_help, stdout);
    return EXIT_OK;
  }
  if (strcmp(argv[0], "compile") == 0) {
    fputs(compile_help, stdout);
    return EXIT_OK;
  }
  if (strcmp(argv[0], "run") == 0) {
    fputs(run_help, stdout);
    return EXIT_OK;
  }
  if (strcmp(argv[0], "schedule") == 0) {
    fputs(schedule_help, stdout);
    return EXIT_OK;
  }
  if (strcmp(argv[0], "serve") == 0) {
    fputs(serve_help, stdout);
    return EXIT_OK;
  }
  if (strcmp(argv[0], "tune") == 0) {
    fputs(tune_help, stdout);
    return EXIT_OK;
  }
  return cli_usage_error(NULL, "help: unknown command '%s' (this build has: compile, run, inspect, schedule, tune, serve, help)", argv[0]);
}

int main(int argc, char **argv) {
  if (argc < 2) return cli_usage_error(NULL, "no command given (usage: " PROG " COMMAND [ARGS...])");
  const char *cmd = argv[1];
  if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
    fputs(main_help, stdout);
    return EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf(PROG " %s\n", mlc_version());
    return EXIT_OK;
  }
  if (strcmp(cmd, "inspect") == 0) return cmd_inspect(argc - 2, argv + 2);
  if (strcmp(cmd, "compile") == 0) return cmd_compile(argc - 2, argv + 2);
  if (strcmp(cmd, "run") == 0) return cmd_run(argc - 2, argv + 2);
  if (strcmp(cmd, "schedule") == 0) return cmd_schedule(argc - 2, argv + 2);
  if (strcmp(cmd, "serve") == 0) return serve_main(argc - 2, argv + 2);
  if (strcmp(cmd, "tune") == 0) return cmd_tune(argc - 2, argv + 2);
  if (strcmp(cmd, "help") == 0) return cmd_help(argc - 2, argv + 2);
  if (cmd[0] == '-') return cli_usage_error(NULL, "unknown option '%s'", cmd);
  return cli_usage_error(NULL, "unknown command '%s' (this build has: compile, run, inspect, schedule, tune, serve, help)", cmd);
}
