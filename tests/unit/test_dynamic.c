/*
** test_dynamic.c: shapes computed at run time (graph/infer_dyn.c,
** lower/compute/dynamic.c, runtime/shapefn.c, the BIND_SYMS step).
**
** Compiles the small models of tests/dynamic/ (written by make_models.py),
** whose shape-defining inputs are graph inputs, loads each through
** mlc_model_load and runs ONE session with several shape values in turn,
** checking output shapes and values against references computed here:
** Reshape (then a Relu on the reshaped tensor), Slice, Expand, NonZero,
** ReduceSum over run-time axes, Range and ConstantOfShape.  Bad values (a
** shape that does not fit, a negative dim, an impossible broadcast) give a
** run error naming the node, and the session runs again afterwards.  A
** Reshape with a constant shape keeps the static path (no define_dims),
** inspect shows the run-time steps of a compiled model, Compress selects
** data-dependent slices, and the verifier checks symbol scope (a symbol in a
** type must be bound by a parameter or an earlier define_dims, once).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"
#include "tests/harness.h"
#include "tests/testutil.h"

/* Compiles tests/dynamic/<name>.onnx to tmpdir/<name>.so (path returned,
** static buffer) and loads it into *m. */
static const char *load(const char *name, mlc_model **m) {
  static char so[4096];
  char onnx[4096];
  snprintf(onnx, sizeof onnx, "%s", mlc_test_src_path("tests/dynamic/"));
  strncat(onnx, name, sizeof onnx - strlen(onnx) - 1);
  strncat(onnx, ".onnx", sizeof onnx - strlen(onnx) - 1);
  mlc_th_compile(onnx, name, "", so, sizeof so);
  *m = mlc_th_load(so, name, "");
  CU_ASSERT_PTR_NOT_NULL(*m);
  return so;
}

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

static const DLDataType F32 = {kDLFloat, 32, 1}, I64 = {kDLInt, 64, 1}, I32 = {kDLInt, 32, 1};

static int64_t numel(const DLTensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

/* Runs |s| and returns output 0 (NULL after printing the error). */
static const DLTensor *run(mlc_session *s) {
  if (mlc_session_run(s) != MLC_RT_OK) {
    fprintf(stderr, "run: %s\n", mlc_session_last_error(s));
    return NULL;
  }
  const DLTensor *y = NULL;
  CU_ASSERT_EQUAL(mlc_session_get_output(s, 0, &y), MLC_RT_OK);
  return y;
}

/* Output |y| has shape |want| (|n| dims). */
static int has_shape(const DLTensor *y, const int64_t *want, int n) {
  if (!y || y->ndim != n) return 0;
  for (int i = 0; i < n; i++)
    if (y->shape[i] != want[i]) return 0;
  return 1;
}

/* A run that fails with a message containing |a| and |b|. */
static void run_fails(mlc_session *s, const char *a, const char *b) {
  CU_ASSERT_NOT_EQUAL(mlc_session_run(s), MLC_RT_OK);
  const char *e = mlc_session_last_error(s);
  if (!strstr(e, a) || !strstr(e, b)) fprintf(stderr, "unexpected error: %s\n", e);
  CU_ASSERT_PTR_NOT_NULL(strstr(e, a));
  CU_ASSERT_PTR_NOT_NULL(strstr(e, b));
  const DLTensor *y = NULL;
  CU_ASSERT_NOT_EQUAL(mlc_session_get_output(s, 0, &y), MLC_RT_OK);
}

/* ---- Reshape (+ Relu on the reshaped tensor) -------------------------------- */

static void test_reshape(void) {
  mlc_model *m;
  load("reshape", &m);
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float x[24];
  for (int i = 0; i < 24; i++) x[i] = (float)(i % 2 ? -i : i);
  int64_t xs[3] = {2, 3, 4}, ss[1] = {2}, shape[2];
  DLTensor tx = tensor(x, F32, 3, xs), tsh = tensor(shape, I64, 1, ss);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &tsh), MLC_RT_OK);
  /* (2, 12), (4, 6), (-1, 3) -> (8, 3), (0, -1) -> (2, 12), (24, 1) */
  static const int64_t req[][2] = {{2, 12}, {4, 6}, {-1, 3}, {0, -1}, {24, 1}, {6, 4}};
  static const int64_t got_dims[][2] = {{2, 12}, {4, 6}, {8, 3}, {2, 12}, {24, 1}, {6, 4}};
  for (int k = 0; k < 6; k++) {
    shape[0] = req[k][0], shape[1] = req[k][1];
    const DLTensor *y = run(s);
    CU_ASSERT(has_shape(y, got_dims[k], 2));
    if (!y || !has_shape(y, got_dims[k], 2)) continue;
    const float *v = y->data;
    int bad = 0;
    for (int i = 0; i < 24; i++) bad += v[i] != (x[i] > 0 ? x[i] : 0);
    CU_ASSERT_EQUAL(bad, 0);
  }
  /* 24 elements do not fit (5, -1) nor (5, 5): an error naming the node */
  shape[0] = 5, shape[1] = -1;
  run_fails(s, "node \"r\"", "cannot reshape (2, 3, 4) (24 elements) to (5, -1)");
  shape[0] = 5, shape[1] = 5;
  run_fails(s, "node \"r\"", "(5, 5)");
  shape[0] = -2, shape[1] = 12;
  run_fails(s, "node \"r\"", "invalid entry -2");
  /* a product of the entries that overflows int64 */
  shape[0] = INT64_C(1) << 62, shape[1] = 4;
  run_fails(s, "node \"r\"", "shape (4611686018427387904, 4) overflows");
  /* and the session runs again */
  shape[0] = 3, shape[1] = 8;
  const DLTensor *y = run(s);
  CU_ASSERT(has_shape(y, (int64_t[]){3, 8}, 2));
  mlc_session_free(s);
  mlc_model_free(m);
}

/* A constant shape keeps the static path; a run-time one shows its steps. */
static void test_static_path(void) {
  char *ir = NULL;
  mlc_status s = mlc_inspect_file(mlc_test_src_path("tests/dynamic/static_reshape.onnx"), MLC_INSPECT_IR, &ir);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  if (ir) {
    CU_ASSERT_PTR_NULL(strstr(ir, "define_dims"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.Tensor((4, 6), \"float32\")"));
    mlc_string_free(ir);
  }
  ir = NULL;
  s = mlc_inspect_file(mlc_test_src_path("tests/dynamic/reshape.onnx"), MLC_INSPECT_IR, &ir);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  if (ir) {
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.reshape_dims("));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.define_dims("));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "dims=[s0, s1]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.dyn_reshape("));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.Tensor((s0, s1), \"float32\")"));
    mlc_string_free(ir);
  }
  mlc_model *m;
  const char *so = load("reshape", &m);
  mlc_model_free(m);
  char *text = NULL;
  s = mlc_inspect_file(so, MLC_INSPECT_TEXT, &text);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  if (text) {
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "run-time shapes:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "mlc.reshape_dims (node \"r\")"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "define s0, s1 (node \"r\")"));
    mlc_string_free(text);
  }
}

/* A constant shape against a symbolic batch: the run-time form as fallback. */
static void test_sym_reshape(void) {
  mlc_model *m;
  load("sym_reshape", &m);
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float x[60];
  for (int i = 0; i < 60; i++) x[i] = (float)i;
  static const int64_t batch[3] = {2, 5, 1};
  for (int k = 0; k < 3; k++) {
    int64_t xs[2] = {batch[k], 6}, want[2] = {3, 2 * batch[k]};
    DLTensor tx = tensor(x, F32, 2, xs);
    CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
    const DLTensor *y = run(s);
    CU_ASSERT(has_shape(y, want, 2));
    if (!y || !has_shape(y, want, 2)) continue;
    for (int64_t i = 0; i < numel(y); i++) CU_ASSERT_EQUAL(((const float *)y->data)[i], x[i]);
  }
  mlc_session_free(s);
  mlc_model_free(m);
}

/* ---- Slice ------------------------------------------------------------------ */

static void test_slice(void) {
  mlc_model *m;
  load("slice", &m);
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float x[10];
  for (int i = 0; i < 10; i++) x[i] = (float)(10 * i);
  int64_t xs[1] = {10}, one[1] = {1}, st[1], en[1], ax[1] = {0}, sp[1];
  DLTensor in[5] = {tensor(x, F32, 1, xs), tensor(st, I64, 1, one), tensor(en, I64, 1, one),
                    tensor(ax, I64, 1, one), tensor(sp, I64, 1, one)};
  for (int i = 0; i < 5; i++) CU_ASSERT_EQUAL(mlc_session_set_input(s, i, &in[i]), MLC_RT_OK);
  /* steps near +-2^63 take one element (the extent must not wrap) */
  static const int64_t cases[][3] = {{2, 7, 1},   {-3, 100, 1},          {8, -100, -2},
                                     {5, 5, 1},   {0, 10, 3},            {0, 10, INT64_MAX},
                                     {3, 100, INT64_MAX - 1},            {9, -100, -INT64_MAX}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    st[0] = cases[k][0], en[0] = cases[k][1], sp[0] = cases[k][2];
    /* the reference: Python slicing of range(10) */
    int64_t b = st[0] < 0 ? st[0] + 10 : st[0], e = en[0] < 0 ? en[0] + 10 : en[0], want[10], n = 0;
    if (sp[0] > 0) {
      b = b < 0 ? 0 : b > 10 ? 10 : b, e = e < 0 ? 0 : e > 10 ? 10 : e;
      for (int64_t i = b; i < e; i = e - i > sp[0] ? i + sp[0] : e) want[n++] = i;
    } else {
      b = b > 9 ? 9 : b, e = e < -1 ? -1 : e;
      for (int64_t i = b; i > e; i = i - e > -sp[0] ? i + sp[0] : e) want[n++] = i;
    }
    const DLTensor *y = run(s);
    CU_ASSERT(has_shape(y, &n, 1));
    if (!y || !has_shape(y, &n, 1)) continue;
    for (int64_t i = 0; i < n; i++) CU_ASSERT_EQUAL(((const float *)y->data)[i], 10.0f * (float)want[i]);
  }
  sp[0] = 0;
  run_fails(s, "node \"s\"", "step of axis 0 is 0");
  mlc_session_free(s);
  mlc_model_free(m);
}

/* ---- Expand, NonZero, ReduceSum ------------------------------------------------- */

static void test_expand(void) {
  mlc_model *m;
  load("expand", &m);
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float x[3] = {1, 2, 3};
  int64_t xs[2] = {3, 1}, ss[1] = {2}, shape[2];
  DLTensor tx = tensor(x, F32, 2, xs), tsh = tensor(shape, I64, 1, ss);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &tsh), MLC_RT_OK);
  static const int64_t req[][2] = {{3, 4}, {1, 5}, {3, 1}, {1, 1}};
  static const int64_t out[][2] = {{3, 4}, {3, 5}, {3, 1}, {3, 1}};
  for (int k = 0; k < 4; k++) {
    shape[0] = req[k][0], shape[1] = req[k][1];
    const DLTensor *y = run(s);
    CU_ASSERT(has_shape(y, out[k], 2));
    if (!y || !has_shape(y, out[k], 2)) continue;
    for (int64_t i = 0; i < numel(y); i++)
      CU_ASSERT_EQUAL(((const float *)y->data)[i], x[i / out[k][1]]);
  }
  shape[0] = 2, shape[1] = 1;
  run_fails(s, "node \"e\"", "cannot expand (3, 1) to (2, 1)");
  /* (3, 2^62) float32: the element count fits in int64, the bytes do not */
  shape[0] = 3, shape[1] = INT64_C(1) << 62;
  run_fails(s, "node \"e\"", "of shape (3, 4611686018427387904) is too large");
  shape[0] = 3, shape[1] = 2;
  CU_ASSERT(has_shape(run(s), (int64_t[]){3, 2}, 2));
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_nonzero(void) {
  mlc_model *m;
  load("nonzero", &m);
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float x[6];
  int64_t xs[2] = {2, 3};
  DLTensor tx = tensor(x, F32, 2, xs);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
  static const float vals[3][6] = {{1, 0, 2, 0, 0, 3}, {0, 0, 0, 0, 0, -0.0f}, {1, 2, 3, 4, 5, 6}};
  for (int k = 0; k < 3; k++) {
    memcpy(x, vals[k], sizeof x);
    int64_t want[2][6], n = 0;
    for (int i = 0; i < 6; i++)
      if (x[i] != 0) want[0][n] = i / 3, want[1][n] = i % 3, n++;
    const DLTensor *y = run(s);
    int64_t dims[2] = {2, n};
    CU_ASSERT(has_shape(y, dims, 2));
    if (!y || !has_shape(y, dims, 2)) continue;
    const int64_t *v = y->data;
    for (int64_t j = 0; j < n; j++) {
      CU_ASSERT_EQUAL(v[j], want[0][j]);
      CU_ASSERT_EQUAL(v[n + j], want[1][j]);
    }
  }
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_reduce(void) {
  mlc_model *m;
  load("reduce", &m);
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float x[24];
  for (int i = 0; i < 24; i++) x[i] = (float)i;
  int64_t xs[3] = {2, 3, 4}, one[1] = {1}, axes[1];
  DLTensor tx = tensor(x, F32, 3, xs), ta = tensor(axes, I64, 1, one);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &ta), MLC_RT_OK);
  static const int64_t req[4] = {1, -1, 0, 2};
  for (int k = 0; k < 4; k++) {
    axes[0] = req[k];
    int a = (int)(req[k] < 0 ? req[k] + 3 : req[k]);
    int64_t dims[2], nd = 0;
    for (int d = 0; d < 3; d++)
      if (d != a) dims[nd++] = xs[d];
    const DLTensor *y = run(s);
    CU_ASSERT(has_shape(y, dims, 2));
    if (!y || !has_shape(y, dims, 2)) continue;
    float want[12] = {0};
    for (int i = 0; i < 24; i++) {
      int c[3] = {i / 12, (i / 4) % 3, i % 4}, o[2], no = 0;
      for (int d = 0; d < 3; d++)
        if (d != a) o[no++] = c[d];
      want[o[0] * dims[1] + o[1]] += x[i];
    }
    for (int i = 0; i < dims[0] * dims[1]; i++) CU_ASSERT_EQUAL(((const float *)y->data)[i], want[i]);
  }
  axes[0] = 3;
  run_fails(s, "node \"rs\"", "axis 3 is out of range");
  mlc_session_free(s);
  mlc_model_free(m);
}

/* ---- Range, ConstantOfShape -------------------------------------------------------- */

static void test_range(void) {
  mlc_model *m;
  load("range", &m);
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float v[3];
  DLTensor t[3] = {tensor(&v[0], F32, 0, NULL), tensor(&v[1], F32, 0, NULL), tensor(&v[2], F32, 0, NULL)};
  for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(mlc_session_set_input(s, i, &t[i]), MLC_RT_OK);
  static const float cases[][3] = {{0, 5, 1}, {1, 2, 0.25f}, {5, 0, -2}, {0, 0, 1}, {3, 100, 7}};
  for (int k = 0; k < 5; k++) {
    memcpy(v, cases[k], sizeof v);
    int64_t n = (int64_t)ceil((v[1] - v[0]) / v[2]);
    if (n < 0) n = 0;
    const DLTensor *y = run(s);
    CU_ASSERT(has_shape(y, &n, 1));
    if (!y || !has_shape(y, &n, 1)) continue;
    for (int64_t i = 0; i < n; i++)
      CU_ASSERT(fabsf(((const float *)y->data)[i] - (v[0] + (float)i * v[2])) < 1e-5f);
  }
  v[2] = 0;
  run_fails(s, "node \"rg\"", "delta is 0");
  v[0] = 0, v[1] = 1e17f, v[2] = 1;
  run_fails(s, "node \"rg\"", "is too large");
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_const_of_shape(void) {
  mlc_model *m;
  load("const_of_shape", &m);
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  int64_t ss[1] = {2}, shape[2];
  DLTensor tsh = tensor(shape, I64, 1, ss);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tsh), MLC_RT_OK);
  static const int64_t req[][2] = {{2, 3}, {1, 0}, {40, 50}, {1, 1}};
  for (int k = 0; k < 4; k++) {
    shape[0] = req[k][0], shape[1] = req[k][1];
    const DLTensor *y = run(s);
    CU_ASSERT(has_shape(y, req[k], 2));
    if (!y || !has_shape(y, req[k], 2)) continue;
    CU_ASSERT(y->dtype.code == I32.code && y->dtype.bits == 32);
    int bad = 0;
    for (int64_t i = 0; i < numel(y); i++) bad += ((const int32_t *)y->data)[i] != 7;
    CU_ASSERT_EQUAL(bad, 0);
  }
  shape[0] = -1, shape[1] = 2;
  run_fails(s, "node \"c\"", "computed dimension 0 is -1");
  /* (2^40, 2^40): 2^80 elements */
  shape[0] = shape[1] = INT64_C(1) << 40;
  run_fails(s, "node \"c\"", "of shape (1099511627776, 1099511627776) is too large");
  shape[0] = 2, shape[1] = 2;
  CU_ASSERT(has_shape(run(s), shape, 2));
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_compress(void) {
  mlc_model *m;
  load("compress", &m);
  if (!m) return;
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  uint8_t cond[4];
  int64_t xs[2] = {2, 4}, cs[1] = {4};
  DLTensor tx = tensor(x, F32, 2, xs), tc = tensor(cond, (DLDataType){6, 8, 1}, 1, cs);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &tc), MLC_RT_OK);
  static const uint8_t conds[3][4] = {{0, 1, 0, 1}, {0, 0, 0, 0}, {1, 1, 1, 0}};
  for (int k = 0; k < 3; k++) {
    memcpy(cond, conds[k], sizeof cond);
    int64_t n = 0, cols[4], dims[2];
    for (int j = 0; j < 4; j++)
      if (cond[j]) cols[n++] = j;
    dims[0] = 2, dims[1] = n;
    const DLTensor *y = run(s);
    CU_ASSERT(has_shape(y, dims, 2));
    if (!y || !has_shape(y, dims, 2)) continue;
    for (int i = 0; i < 2; i++)
      for (int64_t j = 0; j < n; j++) CU_ASSERT_EQUAL(((const float *)y->data)[i * n + j], x[i * 4 + cols[j]]);
  }
  mlc_session_free(s);
  mlc_model_free(m);
}

/* A status whose message has |want| (freed); 0 when it is NULL. */
static int err_has(mlc_status s, const char *want) {
  int ok = s && strstr(mlc_status_message(s), want);
  if (s && !ok) fprintf(stderr, "unexpected: %s\n", mlc_status_message(s));
  mlc_status_free(s);
  return ok;
}

/* The verifier's symbol scope: params and define_dims bind symbols. */
static void test_verify_scope(void) {
  for (int k = 0; k < 3; k++) {
    mlc_module *m = NULL;
    CU_ASSERT_PTR_NULL_FATAL(mlc_module_create(mlc_allocator_default(), &m));
    mlc_func *f;
    mlc_value *x, *t, *t2, *y;
    int64_t two = 2, s[2];
    mlc_type ti = {MLC_DTYPE_I64, 1, &two};
    CU_ASSERT_PTR_NULL(mlc_func_create(m, "main", &f));
    CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "shape", &ti, &x));
    CU_ASSERT_PTR_NULL(mlc_module_fresh_sym(m, &s[0]));
    CU_ASSERT_PTR_NULL(mlc_module_fresh_sym(m, &s[1]));
    mlc_attr a[2] = {mlc_attr_ints("dims", s, 2), mlc_attr_int("offset", 0)};
    if (k > 0) CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_DEFINE_DIMS, &x, 1, a, 2, NULL, &t));
    if (k > 1) CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_DEFINE_DIMS, &t, 1, a, 2, NULL, &t2));
    mlc_type ty = {MLC_DTYPE_F32, 2, s};
    CU_ASSERT_PTR_NULL(mlc_graph_emit_call(f, MLC_CALL_TIR, "k", &x, 1, NULL, 0, &ty, 1, NULL, &y));
    CU_ASSERT_PTR_NULL(mlc_func_add_ret(f, y));
    mlc_status st = mlc_graph_verify(m);
    if (k == 0) CU_ASSERT(err_has(st, "symbol s0, which no parameter binds, no earlier define_dims defines"));
    if (k == 1) CU_ASSERT_PTR_NULL(st);
    if (k == 1) mlc_status_free(st);
    if (k == 2) CU_ASSERT(err_has(st, "symbol s0 is already bound"));
    if (k == 1) {
      mlc_strbuf b = MLC_STRBUF_INIT;
      mlc_graph_print(m, &b);
      CU_ASSERT_PTR_NOT_NULL(strstr(mlc_sb_str(&b), "R.define_dims(shape, dims=[s0, s1], offset=0)"));
      mlc_sb_fini(&b);
    }
    mlc_module_destroy(m);
  }
}

/* A symbol derived from bound ones ((H - 2) // 2 + 1, H * W) is in scope;
** one derived from a symbol nothing binds is not. */
static void test_verify_derived(void) {
  for (int k = 0; k < 2; k++) {
    mlc_module *m = NULL;
    CU_ASSERT_PTR_NULL_FATAL(mlc_module_create(mlc_allocator_default(), &m));
    mlc_func *f;
    mlc_value *x, *y;
    int64_t h, w, u, d, e, p;
    CU_ASSERT_PTR_NULL(mlc_module_sym(m, "H", &h));
    CU_ASSERT_PTR_NULL(mlc_module_sym(m, "W", &w));
    CU_ASSERT_PTR_NULL(mlc_module_sym(m, "U", &u));
    /* k 0: derived from H and W, the parameter's; k 1: from U as well */
    CU_ASSERT_PTR_NULL(mlc_dim_add_const(m, h, -2, NULL, &d));
    CU_ASSERT_PTR_NULL(mlc_dim_floordiv_const(m, d, 2, NULL, &d));
    CU_ASSERT_PTR_NULL(mlc_dim_add_const(m, d, 1, NULL, &d));
    CU_ASSERT_PTR_NULL(mlc_dim_mul(m, k ? u : h, w, NULL, &p));
    CU_ASSERT_PTR_NULL(mlc_dim_add(m, d, p, NULL, &e));
    int64_t in[2] = {h, w}, out[2] = {d, e};
    mlc_type ti = {MLC_DTYPE_F32, 2, in}, to = {MLC_DTYPE_F32, 2, out};
    CU_ASSERT_PTR_NULL(mlc_func_create(m, "main", &f));
    CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "x", &ti, &x));
    CU_ASSERT_PTR_NULL(mlc_graph_emit_call(f, MLC_CALL_TIR, "k", &x, 1, NULL, 0, &to, 1, NULL, &y));
    CU_ASSERT_PTR_NULL(mlc_func_add_ret(f, y));
    mlc_status st = mlc_graph_verify(m);
    if (k == 0) CU_ASSERT_PTR_NULL(st);
    if (k == 0) mlc_status_free(st);
    if (k == 1) CU_ASSERT(err_has(st, "dim 1 is symbol"));
    mlc_module_destroy(m);
  }
}

static CU_TestInfo tests[] = {{"reshape", test_reshape},
                              {"static_path", test_static_path},
                              {"sym_reshape", test_sym_reshape},
                              {"slice", test_slice},
                              {"expand", test_expand},
                              {"nonzero", test_nonzero},
                              {"reduce", test_reduce},
                              {"range", test_range},
                              {"const_of_shape", test_const_of_shape},
                              {"compress", test_compress},
                              {"verify_scope", test_verify_scope},
                              {"verify_derived", test_verify_derived},
                              CU_TEST_INFO_NULL};

static void reg(void) { mlc_test_add_suite("dynamic", tests); }

int main(void) {
  const mlc_test_register_fn fns[] = {reg, NULL};
  return mlc_th_main("test_dynamic", fns);
}
