/*
** test_control.c: control flow (frontend/subgraph.c: If, Loop, Scan with
** their subgraphs inlined) and TfIdfVectorizer (frontend/ops/text.c).
**
** Compiles the models of tests/control/ (written by make_models.py) with
** mlc_compile_file, runs them through the runtime and compares outputs with
** values worked out by hand: If with a run-time condition (both branches,
** selected; outer values captured, a branch initializer) and with a constant
** one (only the taken branch, of another shape); Loop with a constant trip
** count and a nested If on the iteration number, with a condition that
** folds (stops early), and with a run-time trip count and condition whose
** count the declared scan output fixes (checked at run time: other counts
** fail, and the session runs again); Scan-9 with reversed input and output
** directions and axes, Scan-8 with a batch; TfIdfVectorizer in TFIDF and
** IDF modes.  Run-time control flow, checked against ONNX Runtime's outputs
** (tests/control/ref/, at several run-time sizes each, one session running
** the cases in turn): an If whose branches give different shapes, Loops
** whose trip count is a graph input (with scan outputs and a run-time
** condition), a Scan over a dim_param length, torch's LSTM with a dynamic
** sequence length, and an If in a Loop in an If.  Branches of different
** ranks and string pools fail to compile with an error saying why.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"
#include "tests/harness.h"
#include "tests/testutil.h"

static void model_path(const char *name, char *buf, size_t size) {
  snprintf(buf, size, "%s%s.onnx", mlc_test_src_path("tests/control/"), name);
}

/* Compiles and loads tests/control/<name>.onnx; NULL on failure (reported). */
static mlc_model *load(const char *name) {
  char onnx[4096], so[4096];
  model_path(name, onnx, sizeof onnx);
  if (!mlc_th_compile(onnx, name, "", so, sizeof so)) return NULL;
  mlc_model *m = mlc_th_load(so, name, "");
  CU_ASSERT_PTR_NOT_NULL(m);
  return m;
}

/* Compiling |name| fails with a message containing |a| and |b|. */
static void compile_fails(const char *name, const char *a, const char *b) {
  char onnx[4096], so[4096];
  model_path(name, onnx, sizeof onnx);
  snprintf(so, sizeof so, "%s/%s.so", mlc_th_tmpdir, name);
  mlc_status s = mlc_compile_file(onnx, so, NULL);
  CU_ASSERT_PTR_NOT_NULL(s);
  if (!s) return;
  const char *msg = mlc_status_message(s);
  if (!strstr(msg, a) || !strstr(msg, b)) fprintf(stderr, "unexpected error: %s\n", msg);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, a));
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, b));
  mlc_status_free(s);
}

static const DLDataType F32 = {kDLFloat, 32, 1}, I64 = {kDLInt, 64, 1}, BOOL = {6, 8, 1};

static DLTensor tensor(void *data, DLDataType dt, int ndim, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype = dt;
  t.shape = shape;
  return t;
}

/* Output |k| of the last run equals |want| (|n| floats) with shape |dims|. */
static void check_out(mlc_session *s, int k, const float *want, const int64_t *dims, int ndim) {
  const DLTensor *y = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_get_output(s, k, &y), MLC_RT_OK);
  CU_ASSERT_EQUAL_FATAL(y->ndim, ndim);
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    CU_ASSERT_EQUAL(y->shape[i], dims[i]);
    n *= dims[i];
  }
  const float *v = y->data;
  for (int64_t i = 0; i < n; i++) {
    if (fabsf(v[i] - want[i]) > 1e-5f * (1 + fabsf(want[i])))
      fprintf(stderr, "output %d [%lld]: %g, expected %g\n", k, (long long)i, v[i], want[i]);
    CU_ASSERT(fabsf(v[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i])));
  }
}

static int run_ok(mlc_session *s) {
  if (mlc_session_run(s) != MLC_RT_OK) {
    fprintf(stderr, "run: %s\n", mlc_session_last_error(s));
    CU_FAIL("run failed");
    return 0;
  }
  return 1;
}

/* ---- If --------------------------------------------------------------------- */

static void test_if_runtime(void) {
  mlc_model *m = load("if_runtime");
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  unsigned char cond = 1;
  float x[3] = {1, 2, 3};
  int64_t xs[1] = {3};
  DLTensor tc = tensor(&cond, BOOL, 0, NULL), tx = tensor(x, F32, 1, xs);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tc), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &tx), MLC_RT_OK);
  if (run_ok(s)) check_out(s, 0, (const float[]){11, 22, 33}, xs, 1);
  cond = 0;
  if (run_ok(s)) check_out(s, 0, (const float[]){2, 4, 6}, xs, 1);
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_if_const(void) {
  mlc_model *m = load("if_const");
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float x[3] = {1, 2, 4};
  int64_t xs[1] = {3};
  DLTensor tx = tensor(x, F32, 1, xs);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
  if (run_ok(s)) check_out(s, 0, (const float[]){7}, NULL, 0);
  mlc_session_free(s);
  mlc_model_free(m);
  /* the IR has no select: only the then branch was inlined */
  char onnx[4096], *ir = NULL;
  model_path("if_const", onnx, sizeof onnx);
  mlc_status st = mlc_inspect_file(onnx, MLC_INSPECT_IR, &ir);
  CU_ASSERT_PTR_NULL(st);
  mlc_status_free(st);
  if (ir) {
    CU_ASSERT_PTR_NULL(strstr(ir, "R.where("));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.sum("));
    mlc_string_free(ir);
  }
}

static void test_if_errors(void) {
  compile_fails("if_ranks", "node \"if\" (If, opset 13)", "different dtypes or ranks are not supported");
}

/* ---- run-time control flow against ONNX Runtime's outputs ------------------ */

/* Loads tests/control/ref/<name>.<c>.<what><k>.npy; NULL when absent. */
static DLTensor *ref_file(const char *name, const char *c, const char *what, int k) {
  char path[4096];
  snprintf(path, sizeof path, "%sref/%s.%s.%s%d.npy", mlc_test_src_path("tests/control/"), name, c, what, k);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fclose(f);
  DLTensor *t = NULL;
  mlc_status st = mlc_tensor_read_file(path, &t);
  CU_ASSERT_PTR_NULL(st);
  mlc_status_free(st);
  return t;
}

/* Output |k| of the last run equals |want| in shape and (within float
** rounding) in value. */
static void check_ref_out(mlc_session *s, int k, const DLTensor *want, const char *what) {
  const DLTensor *y = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_get_output(s, k, &y), MLC_RT_OK);
  CU_ASSERT_EQUAL_FATAL(y->ndim, want->ndim);
  CU_ASSERT_EQUAL_FATAL(y->dtype.code, want->dtype.code);
  int64_t n = 1;
  int same = 1;
  for (int i = 0; i < y->ndim; i++) {
    same &= y->shape[i] == want->shape[i];
    n *= want->shape[i];
  }
  if (!same) fprintf(stderr, "%s output %d: shape differs from the reference\n", what, k);
  CU_ASSERT_FATAL(same);
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double a, b;
    if (want->dtype.code == kDLFloat) {
      a = ((const float *)y->data)[i];
      b = ((const float *)want->data)[i];
    } else {
      a = (double)((const int64_t *)y->data)[i];
      b = (double)((const int64_t *)want->data)[i];
    }
    if (fabs(a - b) > 1e-4 * (1 + fabs(b))) {
      if (bad++ < 4) fprintf(stderr, "%s output %d [%lld]: %g, expected %g\n", what, k, (long long)i, a, b);
    }
  }
  CU_ASSERT_EQUAL(bad, 0);
}

/*
** Compiles tests/control/<name>.onnx once and runs one session on each
** case of |cases| in turn (inputs ref/<name>.<case>.in<k>.npy), comparing
** every output with ref/<name>.<case>.out<k>.npy (ONNX Runtime's).
*/
static void run_refs(const char *name, const char *const *cases) {
  mlc_model *m = load(name);
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  for (int c = 0; cases[c]; c++) {
    char what[256];
    snprintf(what, sizeof what, "%s.%s", name, cases[c]);
    DLTensor *in[8] = {0};
    int nin = 0;
    while (nin < 8 && (in[nin] = ref_file(name, cases[c], "in", nin))) nin++;
    CU_ASSERT(nin > 0);
    CU_ASSERT_EQUAL(nin, mlc_model_num_inputs(m));
    for (int k = 0; k < nin; k++) CU_ASSERT_EQUAL(mlc_session_set_input(s, k, in[k]), MLC_RT_OK);
    if (run_ok(s)) {
      int nout = 0;
      for (DLTensor *w; (w = ref_file(name, cases[c], "out", nout)); nout++) {
        check_ref_out(s, nout, w, what);
        mlc_tensor_free(w);
      }
      CU_ASSERT_EQUAL(nout, mlc_model_num_outputs(m));
    }
    for (int k = 0; k < nin; k++) mlc_tensor_free(in[k]);
  }
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_if_shapes(void) {
  run_refs("if_shapes", (const char *const[]){"then", "else", "then", NULL});
}

/* ---- Loop ------------------------------------------------------------------- */

static void test_loop_const(void) {
  mlc_model *m = load("loop_const");
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float x[2] = {1, 2}, w[2] = {10, 100};
  int64_t xs[1] = {2}, ys[2] = {4, 2};
  DLTensor tx = tensor(x, F32, 1, xs), tw = tensor(w, F32, 1, xs);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &tw), MLC_RT_OK);
  if (run_ok(s)) {
    check_out(s, 0, (const float[]){117, 943}, xs, 1);
    check_out(s, 1, (const float[]){12, 104, 35, 309, 62, 520, 117, 943}, ys, 2);
  }
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_loop_break(void) {
  mlc_model *m = load("loop_break");
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float x[2] = {0, 0};
  int64_t xs[1] = {2}, ys[1] = {3};
  DLTensor tx = tensor(x, F32, 1, xs);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
  if (run_ok(s)) {
    check_out(s, 0, (const float[]){3, 3}, xs, 1);
    check_out(s, 1, (const float[]){0, 1, 2}, ys, 1);
  }
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_loop_runtime(void) {
  mlc_model *m = load("loop_runtime");
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  int64_t trips = 3;
  unsigned char cond = 1;
  float x[2] = {1, 2};
  int64_t xs[1] = {2}, ys[2] = {3, 2};
  DLTensor tm = tensor(&trips, I64, 0, NULL), tc = tensor(&cond, BOOL, 0, NULL), tx = tensor(x, F32, 1, xs);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tm), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &tc), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 2, &tx), MLC_RT_OK);
  if (run_ok(s)) {
    check_out(s, 0, (const float[]){4, 8}, xs, 1);
    check_out(s, 1, (const float[]){2, 4, 3, 6, 4, 8}, ys, 2);
  }
  /* any other iteration count contradicts the declared (3, 2): run errors */
  static const int64_t bad_trips[3] = {2, 4, 0};
  for (int k = 0; k < 3; k++) {
    trips = bad_trips[k];
    CU_ASSERT_NOT_EQUAL(mlc_session_run(s), MLC_RT_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "compiled for 3"));
    CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "node \"loop\""));
  }
  trips = 3;
  cond = 0;
  CU_ASSERT_NOT_EQUAL(mlc_session_run(s), MLC_RT_OK);
  /* and the session runs again */
  cond = 1;
  if (run_ok(s)) check_out(s, 0, (const float[]){4, 8}, xs, 1);
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_loop_unbounded(void) {
  run_refs("loop_unbounded", (const char *const[]){"m3", "m0", "m7", "m3", NULL});
}

static void test_loop_scan(void) {
  run_refs("loop_scan", (const char *const[]){"m4", "stop2", "m6", "m4", NULL});
}

static void test_scan_dyn(void) {
  run_refs("scan_dyn", (const char *const[]){"t3", "t5", "t1", "t3", NULL});
}

static void test_lstm_dyn(void) {
  run_refs("lstm_dyn", (const char *const[]){"t4", "t7", "t1", "t4", NULL});
}

static void test_nested(void) {
  run_refs("nested", (const char *const[]){"then3", "then5", "else", "then3", NULL});
}

/* ---- Scan ------------------------------------------------------------------- */

static void test_scan9(void) {
  mlc_model *m = load("scan9");
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float st[2] = {0, 0}, x[6] = {1, 2, 3, 4, 5, 6}, k = 10;
  int64_t ss[1] = {2}, xs[2] = {2, 3}, y2s[2] = {3, 2};
  DLTensor t0 = tensor(st, F32, 1, ss), t1 = tensor(x, F32, 2, xs), t2 = tensor(&k, F32, 0, NULL);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &t0), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &t1), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 2, &t2), MLC_RT_OK);
  if (run_ok(s)) {
    check_out(s, 0, (const float[]){6, 15}, ss, 1);
    check_out(s, 1, (const float[]){6, 5, 3, 15, 11, 6}, xs, 2);
    check_out(s, 2, (const float[]){30, 60, 50, 110, 60, 150}, y2s, 2);
  }
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_scan8(void) {
  mlc_model *m = load("scan8");
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float st[2] = {0, 100}, x[6] = {1, 2, 3, 4, 5, 6};
  int64_t ss[2] = {2, 1}, xs[3] = {2, 3, 1};
  DLTensor t0 = tensor(st, F32, 2, ss), t1 = tensor(x, F32, 3, xs);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &t0), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &t1), MLC_RT_OK);
  if (run_ok(s)) {
    check_out(s, 0, (const float[]){6, 115}, ss, 2);
    check_out(s, 1, (const float[]){3, 5, 6, 106, 111, 115}, xs, 3);
  }
  mlc_session_free(s);
  mlc_model_free(m);
}

/* ---- TfIdfVectorizer -------------------------------------------------------- */

static void run_tfidf(const char *name, const float *want) {
  mlc_model *m = load(name);
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  int64_t x[10] = {1, 2, 3, 1, 2, 3, 3, 2, 1, 3}, xs[2] = {2, 5};
  DLTensor tx = tensor(x, I64, 2, xs);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
  if (run_ok(s)) check_out(s, 0, want, xs, 2);
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_tfidf(void) {
  /* counts by output index: row 0 [2, 1, 2, 2, 0], row 1 [1, 3, 1, 0, 1];
  ** weights [0.5, 2, 3, 10, 100] */
  run_tfidf("tfidf_tfidf", (const float[]){1, 2, 6, 20, 0, 0.5f, 6, 3, 0, 100});
  run_tfidf("tfidf_idf", (const float[]){0.5f, 2, 3, 10, 0, 0.5f, 2, 3, 0, 100});
  compile_fails("tfidf_strings", "TfIdfVectorizer", "pool_strings not supported");
}

static CU_TestInfo tests[] = {{"if_runtime", test_if_runtime},
                              {"if_const", test_if_const},
                              {"if_errors", test_if_errors},
                              {"loop_const", test_loop_const},
                              {"loop_break", test_loop_break},
                              {"loop_runtime", test_loop_runtime},
                              {"if_shapes", test_if_shapes},
                              {"loop_unbounded", test_loop_unbounded},
                              {"loop_scan", test_loop_scan},
                              {"scan_dyn", test_scan_dyn},
                              {"lstm_dyn", test_lstm_dyn},
                              {"nested", test_nested},
                              {"scan9", test_scan9},
                              {"scan8", test_scan8},
                              {"tfidf", test_tfidf},
                              CU_TEST_INFO_NULL};

static void reg(void) { mlc_test_add_suite("control", tests); }

int main(void) {
  const mlc_test_register_fn fns[] = {reg, NULL};
  return mlc_th_main("test_control", fns);
}
