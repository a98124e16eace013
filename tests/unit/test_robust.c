/*
** test_robust.c: models in the forms real exporters write (frontend/import.c,
** the Constant converter of frontend/ops/tensor.c, the converters' opset
** 5-11 attribute forms, graph/passes/simplify.c on tf2onnx's transposes).
**
** Compiles each model of tests/robust/ (written by make_models.py) with
** mlc_compile_file, runs it through the runtime on NAME.input_<i>.npy and
** compares every output with NAME.output_<i>.npy, which ONNX Runtime
** computed (NumPy for opsets 5 and 6, which ONNX Runtime does not run):
**   - weights in Constant nodes (value; value_float(s), value_int(s),
**     sparse_value with linear indices and with coordinates), compiled to
**     the same plan and weights as the initializer twin, and made inputs
**     by params_as_inputs as initializers are;
**   - opset 5, 6, 7, 9, 10 and 11 attribute forms (BatchNormalization's
**     spatial=0 among them);
**   - a channels-last graph with a Transpose pair around each Conv (the
**     pair between the convs cancels: no step comes from it);
**   - float16 weights cast to float32 (folded: no cast step);
**   - nodes out of order; outputs declared without a type or shape;
**   - a graph input that is also an initializer: an input whose default is
**     the initializer (run without it, with it, reset to the default),
**     the constant initializer with fold_default_inputs, and with
**     params_as_inputs an input as every weight is, each with its
**     initializer as its default.
** A cycle and a sparse index out of range are compile errors naming the
** nodes.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"
#include "tests/harness.h"
#include "tests/testutil.h"

static void file_path(const char *name, const char *suffix, char *buf, size_t size) {
  snprintf(buf, size, "%s%s%s", mlc_test_src_path("tests/robust/"), name, suffix);
}

static int file_exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

/* compile flags */
enum { PARAMS_AS_INPUTS = 1, FOLD_DEFAULT_INPUTS = 2 };

/* Compiles tests/robust/<name>.onnx into mlc_th_tmpdir/<tag>.so (|so|) with
** |flags|; 1 on success (a failure is asserted and printed). */
static int compile(const char *name, const char *tag, int flags, char *so, size_t size) {
  char onnx[4096];
  file_path(name, ".onnx", onnx, sizeof onnx);
  snprintf(so, size, "%s/%s.so", mlc_th_tmpdir, tag);
  mlc_compile_options o;
  memset(&o, 0, sizeof o);
  o.params_as_inputs = (flags & PARAMS_AS_INPUTS) != 0;
  o.fold_default_inputs = (flags & FOLD_DEFAULT_INPUTS) != 0;
  o.header_path = "";
  mlc_status s = mlc_compile_file(onnx, so, &o);
  if (s) fprintf(stderr, "compile %s: %s\n", tag, mlc_status_message(s));
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  return s == NULL;
}

/* Output |y| equals the tensor in |path| (same dtype and shape; floats
** within rtol 1e-4 + atol 1e-5). */
static void check_output(const DLTensor *y, const char *path) {
  DLTensor *want = NULL;
  mlc_status s = mlc_tensor_read_file(path, &want);
  CU_ASSERT_PTR_NULL_FATAL(s);
  CU_ASSERT_EQUAL(y->dtype.code, want->dtype.code);
  CU_ASSERT_EQUAL(y->dtype.bits, want->dtype.bits);
  CU_ASSERT_EQUAL_FATAL(y->ndim, want->ndim);
  int64_t n = 1;
  int same_shape = 1;
  for (int i = 0; i < y->ndim; i++) {
    same_shape &= y->shape[i] == want->shape[i];
    n *= want->shape[i];
  }
  CU_ASSERT(same_shape);
  if (same_shape && y->dtype.code == kDLFloat && y->dtype.bits == 32) {
    const float *a = y->data, *b = want->data;
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
      if (!(fabsf(a[i] - b[i]) <= 1e-5f + 1e-4f * fabsf(b[i]))) {
        if (bad++ < 4) fprintf(stderr, "%s [%lld]: %g, expected %g\n", path, (long long)i, a[i], b[i]);
      }
    CU_ASSERT_EQUAL(bad, 0);
  }
  mlc_tensor_free(want);
}

/*
** Runs the compiled |so| on tests/robust/<name>.input_<i>.npy for its
** |nin| inputs and compares output i with <name><out>.output_<i>.npy
** (|out|: "" or ".default") for every such file.
*/
static void run_and_compare(const char *so, const char *name, int nin, const char *out) {
  mlc_model *m = mlc_th_load(so, name, "");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(mlc_model_num_inputs(m), nin);
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  DLTensor *in[8] = {NULL};
  char path[4096], suffix[64];
  for (int i = 0; i < nin && i < 8; i++) {
    snprintf(suffix, sizeof suffix, ".input_%d.npy", i);
    file_path(name, suffix, path, sizeof path);
    mlc_status st = mlc_tensor_read_file(path, &in[i]);
    CU_ASSERT_PTR_NULL(st);
    mlc_status_free(st);
    if (in[i]) CU_ASSERT_EQUAL(mlc_session_set_input(s, i, in[i]), MLC_RT_OK);
  }
  if (mlc_session_run(s) != MLC_RT_OK) {
    fprintf(stderr, "run %s: %s\n", name, mlc_session_last_error(s));
    CU_FAIL("run failed");
  } else {
    int nout = mlc_model_num_outputs(m), checked = 0;
    for (int k = 0; k < nout; k++) {
      snprintf(suffix, sizeof suffix, "%s.output_%d.npy", out, k);
      file_path(name, suffix, path, sizeof path);
      if (!file_exists(path)) continue;
      const DLTensor *y = NULL;
      CU_ASSERT_EQUAL_FATAL(mlc_session_get_output(s, k, &y), MLC_RT_OK);
      check_output(y, path);
      checked++;
    }
    CU_ASSERT_EQUAL(checked, nout);
  }
  for (int i = 0; i < 8; i++) mlc_tensor_free(in[i]);
  mlc_session_free(s);
  mlc_model_free(m);
}

/* Compiles and checks tests/robust/<name>.onnx with |nin| inputs. */
static void check_model(const char *name, int nin) {
  char so[4096];
  if (compile(name, name, 0, so, sizeof so)) run_and_compare(so, name, nin, "");
}

/* The text mlc-onnx inspect prints for the compiled |so| from its plan on
** (the lines before name the file); malloc'd, or NULL (asserted). */
static char *plan_text(const char *so) {
  char *text = NULL;
  mlc_status s = mlc_inspect_file(so, MLC_INSPECT_TEXT, &text);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  if (!text) return NULL;
  const char *p = strstr(text, "\nplan:");
  CU_ASSERT_PTR_NOT_NULL(p);
  char *r = strdup(p ? p : text);
  mlc_string_free(text);
  return r;
}

/* Compiling tests/robust/<name>.onnx fails with a message holding |a| and |b|. */
static void compile_fails(const char *name, const char *a, const char *b) {
  char onnx[4096], so[4096];
  file_path(name, ".onnx", onnx, sizeof onnx);
  snprintf(so, sizeof so, "%s/%s.so", mlc_th_tmpdir, name);
  mlc_status s = mlc_compile_file(onnx, so, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  const char *msg = mlc_status_message(s);
  if (!strstr(msg, a) || !strstr(msg, b)) fprintf(stderr, "unexpected error: %s\n", msg);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, a));
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, b));
  mlc_status_free(s);
}

/* ---- Constant nodes ---------------------------------------------------------- */

static void test_constant_weights(void) {
  char so_c[4096], so_i[4096];
  if (!compile("const_conv", "const_conv", 0, so_c, sizeof so_c) ||
      !compile("init_conv", "init_conv", 0, so_i, sizeof so_i))
    return;
  run_and_compare(so_c, "const_conv", 1, "");
  run_and_compare(so_i, "init_conv", 1, "");
  /* the same plan, kernels and weights (packed: a blocked conv) either way */
  char *pc = plan_text(so_c), *pi = plan_text(so_i);
  if (pc && pi) {
    if (strcmp(pc, pi) != 0) fprintf(stderr, "Constant weights:%s\ninitializers:%s\n", pc, pi);
    CU_ASSERT_STRING_EQUAL(pc, pi);
    CU_ASSERT_PTR_NOT_NULL(strstr(pc, "conv2d_nchwc"));
  }
  free(pc);
  free(pi);
  /* params_as_inputs makes them inputs (w, b after x) as it does initializers */
  char so_p[4096];
  if (!compile("const_conv", "const_conv_params", 1, so_p, sizeof so_p)) return;
  mlc_model *m = mlc_th_load(so_p, "const_conv_params", "");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(mlc_model_num_inputs(m), 3);
  if (mlc_model_num_inputs(m) == 3) {
    CU_ASSERT_STRING_EQUAL(mlc_model_input_name(m, 1), "w");
    CU_ASSERT_STRING_EQUAL(mlc_model_input_name(m, 2), "b");
  }
  mlc_model_free(m);
}

static void test_constant_forms(void) {
  check_model("const_forms", 1);
  compile_fails("sparse_bad", "node \"s\" (Constant, opset 13)", "sparse_value: index 6");
}

/* ---- older opsets ------------------------------------------------------------- */

static void test_old_opsets(void) {
  check_model("opset5", 1);
  check_model("opset6", 1);
  check_model("opset7", 1);
  check_model("opset7_linear", 1);
  check_model("bn_per_activation", 1);
  check_model("opset9", 1);
  check_model("opset10", 1);
  check_model("opset11", 1);
}

/* ---- layouts and dtypes -------------------------------------------------------- */

static void test_nhwc(void) {
  char so[4096];
  if (!compile("nhwc", "nhwc", 0, so, sizeof so)) return;
  run_and_compare(so, "nhwc", 1, "");
  /* Transposes t1 (to NHWC) and t2 (back to NCHW) between the convs cancel */
  char *p = plan_text(so);
  if (p) {
    CU_ASSERT_PTR_NULL(strstr(p, "\"t1\""));
    CU_ASSERT_PTR_NULL(strstr(p, "\"t2\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "\"conv2\""));
  }
  free(p);
}

static void test_fp16_weights(void) {
  char so[4096];
  if (!compile("fp16_weights", "fp16_weights", 0, so, sizeof so)) return;
  run_and_compare(so, "fp16_weights", 1, "");
  /* the casts folded when compiling: no step is one, the weights are fp32 */
  char *p = plan_text(so);
  if (p) {
    CU_ASSERT_PTR_NULL(strstr(p, "(Cast)"));
    CU_ASSERT_PTR_NULL(strstr(p, "cast"));
  }
  free(p);
}

/* ---- graph structure ----------------------------------------------------------- */

static void test_unordered(void) {
  check_model("unordered", 1);
  compile_fails("cycle", "graph has a cycle", "node \"add\" #0 (Add)");
}

static void test_unknown_outputs(void) {
  check_model("unknown_out", 1);
}

/*
** One session of the compiled input_init |so| (|nin| inputs; |defaults| a
** bit per input that has a default): run with inputs 0..nfeed-1 set from
** input_init.input_<i>.npy and the others at their defaults, for each
** |nfeed| in |feeds| (-1 ends; 0x100 + n: inputs n.. are first reset with
** NULL), each output checked against input_init<suffix>.output_0.npy,
** suffix ".default" while b (input 1) is at its default.
*/
static void run_input_init(const char *so, int nin, unsigned defaults, const int *feeds) {
  mlc_model *m = mlc_th_load(so, "input_init", "");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(mlc_model_num_inputs(m), nin);
  for (int i = 0; i < nin; i++) CU_ASSERT_EQUAL(mlc_model_input_has_default(m, i), (int)(defaults >> i & 1));
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  DLTensor *in[3] = {NULL};
  char path[4096], suffix[64];
  for (int i = 0; i < nin && i < 3; i++) {
    snprintf(suffix, sizeof suffix, ".input_%d.npy", i);
    file_path("input_init", suffix, path, sizeof path);
    mlc_status st = mlc_tensor_read_file(path, &in[i]);
    CU_ASSERT_PTR_NULL_FATAL(st);
  }
  int b_fed = 0;
  for (int k = 0; feeds[k] >= 0; k++) {
    int n = feeds[k] & 0xff;
    if (feeds[k] & 0x100) {
      for (int i = n; i < nin; i++) CU_ASSERT_EQUAL(mlc_session_set_input(s, i, NULL), MLC_RT_OK);
      if (n <= 1) b_fed = 0;
    } else {
      for (int i = 0; i < n; i++) CU_ASSERT_EQUAL(mlc_session_set_input(s, i, in[i]), MLC_RT_OK);
      if (n >= 2) b_fed = 1;
    }
    /* b (input 1) fed: NumPy's x * s + b; else ONNX Runtime's, with b's
    ** initializer (s's default is the s NumPy's reference took) */
    const char *out = b_fed ? "" : ".default";
    if (mlc_session_run(s) != MLC_RT_OK) {
      fprintf(stderr, "run input_init (%d fed): %s\n", n, mlc_session_last_error(s));
      CU_FAIL("run failed");
      continue;
    }
    const DLTensor *y = NULL;
    CU_ASSERT_EQUAL_FATAL(mlc_session_get_output(s, 0, &y), MLC_RT_OK);
    snprintf(suffix, sizeof suffix, "%s.output_0.npy", out);
    file_path("input_init", suffix, path, sizeof path);
    check_output(y, path);
  }
  for (int i = 0; i < 3; i++) mlc_tensor_free(in[i]);
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_input_initializer(void) {
  char so[4096];
  /* by default (ONNX semantics) b is an input whose default is its
  ** initializer: run without it (ONNX Runtime's output), with it (the
  ** caller's value), reset to the default, set again */
  static const int dflt[] = {1, 2, 0x100 + 1, 2, -1};
  if (compile("input_init", "input_init", 0, so, sizeof so)) run_input_init(so, 2, 0x2, dflt);
  /* fold_default_inputs: b is the constant initializer, no input */
  if (compile("input_init", "input_init_fold", FOLD_DEFAULT_INPUTS, so, sizeof so))
    run_and_compare(so, "input_init", 1, ".default");
  /* params_as_inputs: b at its place and the weight s after it, both
  ** with their initializers as defaults; the caller's values are used */
  static const int params[] = {3, 0x100 + 1, 1, 0x100 + 2, 2, 3, -1};
  if (compile("input_init", "input_init_params", PARAMS_AS_INPUTS, so, sizeof so))
    run_input_init(so, 3, 0x6, params);
}

static CU_TestInfo tests[] = {{"constant_weights", test_constant_weights},
                              {"constant_forms", test_constant_forms},
                              {"old_opsets", test_old_opsets},
                              {"nhwc", test_nhwc},
                              {"fp16_weights", test_fp16_weights},
                              {"unordered", test_unordered},
                              {"unknown_outputs", test_unknown_outputs},
                              {"input_initializer", test_input_initializer},
                              CU_TEST_INFO_NULL};

static void reg(void) { mlc_test_add_suite("robust", tests); }

int main(void) {
  const mlc_test_register_fn fns[] = {reg, NULL};
  return mlc_th_main("test_robust", fns);
}
