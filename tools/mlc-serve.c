/*
** mlc-serve.c: the inference server as a program of its own.  `mlc-serve
** MODEL.so ... [options]` is `mlc-onnx serve` (serve/server.c) linked with
** the model loader, libmicrohttpd and jansson alone: no LLVM, no protobuf,
** so it runs where only compiled models are.
*/
#include "serve/serve_int.h"

int main(int argc, char **argv) { return serve_main(argc - 1, argv + 1); }
