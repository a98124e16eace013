/*
** toy_blob_gen.c: the description of the toy model (toy_model.c) as
** structs, encoded with the archiver's encoder (runtime/desc_encode.c)
** into the blob toy_blob.S embeds.  The build runs it:
**
**   toy_blob_gen OUT.blob [--bad-abi]
**
** --bad-abi writes a description that claims version 999.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_blob.h"

#define COLS 4
/* Indices into toy_model.c's mlc_model_kernels. */
enum { TOY_FN_ADD_BIAS_RELU, TOY_FN_ROW_SUM, TOY_FN_ADD_IMM, TOY_FN_UNUSED, TOY_FN_SCALE, TOY_NFNS };

static const int64_t dims_b4[] = {-1, COLS};
static const int64_t dims_b[] = {-1};
static const int64_t dims_4[] = {COLS};

#define F32 {kDLFloat, 32, 1}
static const mlc_rt_tensor_desc toy_tensors[] = {
    {F32, 2, dims_b4, MLC_RT_STORAGE_INPUT, 0},  /* 0 x */
    {F32, 1, dims_b, MLC_RT_STORAGE_INPUT, 1},   /* 1 offset */
    {F32, 1, dims_4, MLC_RT_STORAGE_CONST, 0},   /* 2 bias */
    {F32, 0, NULL, MLC_RT_STORAGE_CONST, 64},    /* 3 scale */
    {F32, 2, dims_b4, MLC_RT_STORAGE_ARENA, 0},  /* 4 y */
    {F32, 2, dims_b4, MLC_RT_STORAGE_OUTPUT, 0}, /* 5 z */
    {F32, 1, dims_b, MLC_RT_STORAGE_ARENA, 0},   /* 6 t (reuses y's storage) */
    {F32, 1, dims_b, MLC_RT_STORAGE_OUTPUT, 1},  /* 7 rowsum */
};

static const mlc_rt_io_desc toy_inputs[] = {{"x", 0}, {"offset", 1}};
static const mlc_rt_io_desc toy_outputs[] = {{"z", 5}, {"rowsum", 7}};
static const char *const toy_syms[] = {"batch"};

#define T(id) {MLC_RT_ARG_TENSOR, id}
static const mlc_rt_arg_desc args0[] = {T(0), T(2), T(1), T(4), {MLC_RT_ARG_SYM, 0}};
static const mlc_rt_arg_desc args1[] = {T(4), T(3), T(5)};
static const mlc_rt_arg_desc args2[] = {T(5), T(6)};
static const mlc_rt_arg_desc args3[] = {T(6), {MLC_RT_ARG_IMM, 10}, T(7)};

static const mlc_rt_step_desc toy_steps[] = {
    {MLC_RT_STEP_KERNEL, "fused_add_bias_relu", NULL, "AddRelu_0", 5, args0, TOY_FN_ADD_BIAS_RELU},
    {MLC_RT_STEP_EXTERN, "toy.scale", NULL, "Scale_1", 3, args1, -1},
    {MLC_RT_STEP_KERNEL, "row_sum", NULL, "ReduceSum_2", 2, args2, TOY_FN_ROW_SUM},
    {MLC_RT_STEP_KERNEL, "add_imm", NULL, "AddConst_3", 3, args3, TOY_FN_ADD_IMM},
};

static const mlc_rt_extern_desc toy_externs[] = {
    {"toy.unused", NULL, TOY_FN_UNUSED},
    {"toy.scale", NULL, TOY_FN_SCALE},
};

static const char *const toy_kernels[] = {"fused_add_bias_relu", "row_sum", "add_imm"};

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--bad-abi") != 0)) {
    fprintf(stderr, "usage: toy_blob_gen OUT.blob [--bad-abi]\n");
    return 2;
  }
  mlc_rt_model_desc d;
  memset(&d, 0, sizeof d);
  d.abi_version = argc == 3 ? 999 : MLC_RT_DESC_VERSION;
  d.kernel_abi = MLC_RT_ABI_VERSION;
  d.name = "toy";
  d.manifest = "{\"name\": \"toy\", \"kernels\": 3, \"extern_calls\": [\"toy.scale\"]}";
  d.nsyms = 1;
  d.sym_names = toy_syms;
  d.ntensors = 8;
  d.tensors = toy_tensors;
  d.ninputs = 2;
  d.inputs = toy_inputs;
  d.noutputs = 2;
  d.outputs = toy_outputs;
  d.nstorages = 1;
  d.nsteps = 4;
  d.steps = toy_steps;
  d.nexterns = 2;
  d.externs = toy_externs;
  d.nkernels = 3;
  d.kernel_names = toy_kernels;
  d.weights_size = 128;
  uint8_t *blob = NULL;
  size_t n = 0;
  char err[256];
  if (mlc_rt_desc_encode(NULL, &d, TOY_NFNS, &blob, &n, err, sizeof err) != MLC_RT_OK) {
    fprintf(stderr, "toy_blob_gen: %s\n", err);
    return 1;
  }
  FILE *f = fopen(argv[1], "wb");
  int bad = !f || fwrite(blob, 1, n, f) != n;
  if (f && fclose(f) != 0) bad = 1;
  free(blob);
  if (bad) {
    fprintf(stderr, "toy_blob_gen: cannot write %s\n", argv[1]);
    remove(argv[1]);
    return 1;
  }
  return 0;
}
