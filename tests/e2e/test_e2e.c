/*
** test_e2e.c: end-to-end model tests.
**
** Compiles each bundled model (the .onnx files under models/) to a model .so with
** mlc_compile_file, loads it through the loader of mlc/mlc_runtime.h, runs
** it on the bundled input and compares with ONNX Runtime's output (rtol 1e-3,
** atol 1e-4).  Also: one symbolic-batch model at batch 1 and 4; eight threads
** each with a session on one loaded model giving bit-identical outputs; the
** same model compiled twice giving byte-identical files; and bad inputs
** giving clear errors.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"
#include "tests/harness.h"
#include "tests/testutil.h"

static const char *model_path(const char *name, const char *suffix) {
  static char buf[4][4096];
  static int k;
  char *b = buf[k++ & 3];
  snprintf(b, sizeof buf[0], "%s%s", mlc_test_src_path("models/"), name);
  strncat(b, suffix, sizeof buf[0] - strlen(b) - 1);
  return b;
}

/* Compiles models/<name>.onnx into tmpdir/<name>.so; returns the path. */
static const char *compile_model(const char *name) {
  static char out[4096];
  mlc_th_compile(model_path(name, ".onnx"), name, "", out, sizeof out);
  return out;
}

static size_t numel(const DLTensor *t) {
  size_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= (size_t)t->shape[i];
  return n;
}

/* Compares float32 outputs with rtol 1e-3, atol 1e-4; returns mismatches. */
static int compare(const DLTensor *got, const DLTensor *want) {
  if (got->ndim != want->ndim) return -1;
  for (int i = 0; i < got->ndim; i++)
    if (got->shape[i] != want->shape[i]) return -1;
  if (got->dtype.code != kDLFloat || got->dtype.bits != 32) return -1;
  int bad = 0;
  const float *a = (const float *)got->data, *b = (const float *)want->data;
  for (size_t i = 0; i < numel(want); i++)
    if (!(fabs((double)a[i] - b[i]) <= 1e-4 + 1e-3 * fabs((double)b[i]))) bad++;
  return bad;
}

/* Runs |so| on models/<input> and compares with models/<output>. */
static void run_and_check(const char *so, const char *input, const char *output) {
  char err[512];
  mlc_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_model_load(so, &m, err, sizeof err), MLC_RT_OK);
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  DLTensor *in = NULL, *want = NULL;
  CU_ASSERT_PTR_NULL_FATAL(mlc_tensor_read_file(model_path(input, ""), &in));
  CU_ASSERT_PTR_NULL_FATAL(mlc_tensor_read_file(model_path(output, ""), &want));
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, in), MLC_RT_OK);
  mlc_rt_status st = mlc_session_run(s);
  if (st) fprintf(stderr, "run: %s\n", mlc_session_last_error(s));
  CU_ASSERT_EQUAL(st, MLC_RT_OK);
  const DLTensor *got = NULL;
  CU_ASSERT_EQUAL(mlc_session_get_output(s, 0, &got), MLC_RT_OK);
  if (got) {
    int bad = compare(got, want);
    if (bad) fprintf(stderr, "%s: %d mismatches\n", output, bad);
    CU_ASSERT_EQUAL(bad, 0);
  }
  mlc_tensor_free(in);
  mlc_tensor_free(want);
  mlc_session_free(s);
  mlc_model_free(m);
}

static void check_model(const char *name) {
  char in[256], out[256];
  snprintf(in, sizeof in, "%s.input_0.npy", name);
  snprintf(out, sizeof out, "%s.output_0.npy", name);
  run_and_check(compile_model(name), in, out);
}

static void test_mlp(void) { check_model("mlp"); }
static void test_cnn(void) { check_model("cnn"); }
static void test_encoder(void) { check_model("encoder"); }

/* One compile, two batch sizes. */
static void test_symbolic_batch(void) {
  const char *so = compile_model("mlp_dyn");
  char copy[4096];
  snprintf(copy, sizeof copy, "%s", so);
  run_and_check(copy, "mlp_dyn.input_0.npy", "mlp_dyn.output_0.npy");
  run_and_check(copy, "mlp_dyn.batch4.input_0.npy", "mlp_dyn.batch4.output_0.npy");
  /* The model reports its symbolic dim by name. */
  char err[256];
  mlc_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_model_load(copy, &m, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_model_input_dim(m, 0, 0), -1);
  CU_ASSERT_STRING_EQUAL(mlc_model_input_dim_name(m, 0, 0), "N");
  mlc_model_free(m);
}

/* Eight threads, one session each, on one loaded model: identical bits. */
static void test_threads(void) {
  const char *so = compile_model("cnn");
  char err[256];
  mlc_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_model_load(so, &m, err, sizeof err), MLC_RT_OK);
  DLTensor *in = NULL;
  CU_ASSERT_PTR_NULL_FATAL(mlc_tensor_read_file(model_path("cnn.input_0.npy", ""), &in));
  mlc_th_check_concurrent(m, in, 20);
  mlc_tensor_free(in);
  mlc_model_free(m);
}

/* The same model and options give a byte-identical library. */
static void test_deterministic(void) {
  char a[4096], b[4096];
  snprintf(a, sizeof a, "%s/det_a.so", mlc_th_tmpdir);
  snprintf(b, sizeof b, "%s/det_b.so", mlc_th_tmpdir);
  mlc_compile_options o;
  mlc_compile_options_init(&o);
  o.header_path = "";
  CU_ASSERT_PTR_NULL_FATAL(mlc_compile_file(model_path("cnn", ".onnx"), a, &o));
  CU_ASSERT_PTR_NULL_FATAL(mlc_compile_file(model_path("cnn", ".onnx"), b, &o));
  size_t na = 0, nb = 0;
  char *da = mlc_test_read_file(a, &na), *db = mlc_test_read_file(b, &nb);
  CU_ASSERT_PTR_NOT_NULL(da);
  CU_ASSERT_EQUAL(na, nb);
  CU_ASSERT(da && db && na == nb && memcmp(da, db, na) == 0);
  free(da);
  free(db);
}

/* Bad inputs are errors with messages, never crashes. */
static void test_bad_inputs(void) {
  const char *so = compile_model("mlp");
  char err[256];
  mlc_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_model_load(so, &m, err, sizeof err), MLC_RT_OK);
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  CU_ASSERT_NOT_EQUAL(mlc_session_run(s), MLC_RT_OK); /* input not set */
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "x"));
  float data[4 * 784] = {0};
  int64_t shape[2] = {1, 783};
  DLTensor t = {data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  CU_ASSERT_NOT_EQUAL(mlc_session_set_input(s, 0, &t), MLC_RT_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "783"));
  shape[1] = 784;
  t.dtype.bits = 64;
  CU_ASSERT_NOT_EQUAL(mlc_session_set_input(s, 0, &t), MLC_RT_OK);
  t.dtype.bits = 32;
  CU_ASSERT_NOT_EQUAL(mlc_session_set_input(s, 5, &t), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &t), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_run(s), MLC_RT_OK);
  mlc_session_free(s);
  mlc_model_free(m);
  /* A model that cannot be compiled: the error names the problem. */
  char out[4096];
  snprintf(out, sizeof out, "%s/bad.so", mlc_th_tmpdir);
  mlc_status st = mlc_compile_file(mlc_test_src_path("tests/malformed/unknown_op.onnx"), out, NULL);
  CU_ASSERT_PTR_NOT_NULL(st);
  CU_ASSERT_EQUAL(access(out, F_OK), -1);
  mlc_status_free(st);
}

static CU_TestInfo tests[] = {{"mlp", test_mlp},
                              {"cnn", test_cnn},
                              {"encoder", test_encoder},
                              {"symbolic_batch", test_symbolic_batch},
                              {"threads", test_threads},
                              {"deterministic", test_deterministic},
                              {"bad_inputs", test_bad_inputs},
                              CU_TEST_INFO_NULL};

static void reg(void) { mlc_test_add_suite("e2e", tests); }

int main(void) {
  const mlc_test_register_fn fns[] = {reg, NULL};
  return mlc_th_main("test_e2e", fns);
}
