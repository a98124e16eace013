/*
** mlc-run.c: the deploy-side runner.  `mlc-run MODEL.so [options]` is
** `mlc-onnx run` (tools/cmd_run.c, built with MLC_RUNNER) in a program that
** links the model loader, libc and the .npy reader alone: no LLVM, no
** protobuf, no compiler, so it runs where only compiled models are.
*/
#include <stdio.h>

#include "tools/cli.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(run_help, stderr);
    return EXIT_USAGE;
  }
  return cmd_run(argc - 1, argv + 1);
}
