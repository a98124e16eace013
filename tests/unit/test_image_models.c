/*
** test_image_models.c: the image and indexing ops through the whole compile
** path (frontend/ops/image.c and MaxPool's Indices in frontend/ops/nn.c).
**
** Compiles each model of tests/image/ (written by make_models.py), loads it
** through mlc_model_load, binds the inputs listed in tests/image/expected.txt
** and compares every output (shape exactly, floats within 1e-4 relative and
** 1e-5 absolute, integers exactly) with the expected values computed there
** by onnx's reference implementations.
**
** Output shapes computed at run time: run-time scales and sizes without a
** declared output shape, each run with several input sets ("<model>.<k>")
** in one session; run-time sizes that contradict the declared output shape,
** negative sizes and NaN or zero scales are run errors naming the node
** (and the session runs again afterwards); a symbolic batch whose sizes
** come from Shape(x) keeps the batch symbol (a static path when the rest
** is constant); constant scales on symbolic axes (tf_crop_and_resize
** included); Upsample-9 with run-time scales.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"
#include "tests/harness.h"
#include "tests/testutil.h"

#define MAXT 4
#define MAXR 8

/* One tensor of expected.txt. */
typedef struct ttensor {
  int is_float, is_i32;
  int rank;
  int64_t dims[MAXR];
  int64_t n;
  void *data; /* float, int32_t or int64_t */
} ttensor;

typedef struct tmodel {
  int nin, nout;
  ttensor in[MAXT], out[MAXT];
} tmodel;

static void tm_free(tmodel *m) {
  for (int i = 0; i < m->nin; i++) free(m->in[i].data);
  for (int i = 0; i < m->nout; i++) free(m->out[i].data);
  memset(m, 0, sizeof *m);
}

/* Parses one line "<kind> <i> <dtype> <rank> <dims> : <values>" after the
** model name into |t|; 0 on success. */
static int parse_tensor(char *p, ttensor *t) {
  char dt[16];
  int used = 0;
  if (sscanf(p, "%15s %d%n", dt, &t->rank, &used) != 2 || t->rank > MAXR) return -1;
  p += used;
  t->is_float = strcmp(dt, "float32") == 0;
  t->is_i32 = strcmp(dt, "int32") == 0;
  t->n = 1;
  for (int d = 0; d < t->rank; d++) {
    long long v;
    if (sscanf(p, "%lld%n", &v, &used) != 1) return -1;
    p += used;
    t->dims[d] = v;
    t->n *= v;
  }
  p = strchr(p, ':');
  if (!p) return -1;
  p++;
  size_t es = t->is_float || t->is_i32 ? 4 : 8;
  t->data = calloc((size_t)(t->n ? t->n : 1), es);
  if (!t->data) return -1;
  for (int64_t i = 0; i < t->n; i++) {
    double v;
    if (sscanf(p, "%lf%n", &v, &used) != 1) return -1;
    p += used;
    if (t->is_float) ((float *)t->data)[i] = (float)v;
    else if (t->is_i32) ((int32_t *)t->data)[i] = (int32_t)v;
    else ((int64_t *)t->data)[i] = (int64_t)v;
  }
  return 0;
}

/* The inputs and expected outputs of model |name|; 0 on success. */
static int read_expected(const char *name, tmodel *m) {
  size_t size;
  char *text = mlc_test_read_file(mlc_test_src_path("tests/image/expected.txt"), &size);
  memset(m, 0, sizeof *m);
  if (!text) return -1;
  int rc = 0;
  size_t len = strlen(name);
  for (char *line = strtok(text, "\n"); line && !rc; line = strtok(NULL, "\n")) {
    if (strncmp(line, name, len) != 0 || line[len] != ' ') continue;
    char *p = line + len + 1;
    int out = strncmp(p, "out ", 4) == 0, idx;
    int used = 0;
    if (sscanf(p + (out ? 4 : 3), "%d%n", &idx, &used) != 1 || idx >= MAXT) {
      rc = -1;
      break;
    }
    ttensor *t = out ? &m->out[idx] : &m->in[idx];
    rc = parse_tensor(p + (out ? 4 : 3) + used, t);
    if (out && idx + 1 > m->nout) m->nout = idx + 1;
    if (!out && idx + 1 > m->nin) m->nin = idx + 1;
  }
  free(text);
  return rc;
}

static DLTensor dl(const ttensor *t, int64_t *shape) {
  DLTensor x;
  memset(&x, 0, sizeof x);
  for (int d = 0; d < t->rank; d++) shape[d] = t->dims[d];
  x.data = t->data;
  x.device.device_type = kDLCPU;
  x.ndim = t->rank;
  x.dtype.code = t->is_float ? kDLFloat : kDLInt;
  x.dtype.bits = t->is_float || t->is_i32 ? 32 : 64;
  x.dtype.lanes = 1;
  x.shape = shape;
  return x;
}

/* Number of elements of |y| that differ from |want| (after shape and dtype). */
static int64_t compare(const char *name, int k, const DLTensor *y, const ttensor *want) {
  int same = y->ndim == want->rank && y->dtype.bits == (want->is_float || want->is_i32 ? 32 : 64) &&
             y->dtype.code == (want->is_float ? kDLFloat : kDLInt);
  for (int d = 0; same && d < want->rank; d++) same = y->shape[d] == want->dims[d];
  if (!same) {
    fprintf(stderr, "\n%s: output %d has another shape or dtype\n", name, k);
    return -1;
  }
  int64_t bad = 0;
  for (int64_t i = 0; i < want->n; i++) {
    double w, g;
    if (want->is_float) w = ((const float *)want->data)[i], g = ((const float *)y->data)[i];
    else if (want->is_i32) w = ((const int32_t *)want->data)[i], g = ((const int32_t *)y->data)[i];
    else w = (double)((const int64_t *)want->data)[i], g = (double)((const int64_t *)y->data)[i];
    int ok = want->is_float ? fabs(w - g) <= 1e-5 + 1e-4 * fabs(w) : w == g;
    if (!ok && bad++ < 4)
      fprintf(stderr, "\n%s: output %d element %lld: want %.9g, got %.9g", name, k, (long long)i, w, g);
  }
  return bad;
}

/* Compiles tests/image/<name>.onnx and opens a session on it: *m and *ss
** (NULL after a failed assertion). */
static void open_model(const char *name, mlc_model **m, mlc_session **ss) {
  char onnx[4096], so[4096];
  snprintf(onnx, sizeof onnx, "%s%s.onnx", mlc_test_src_path("tests/image/"), name);
  *ss = NULL;
  *m = mlc_th_compile(onnx, name, "\n", so, sizeof so) ? mlc_th_load(so, name, "\n") : NULL;
  if (*m) CU_ASSERT_EQUAL(mlc_session_create(*m, NULL, ss), MLC_RT_OK);
  remove(so);
}

/* Binds the inputs of |set| in expected.txt (input |patch| replaced by the
** |npatch| values |patch_vals| when |patch_vals| is not NULL) and runs;
** returns the run's status.  |tm| receives the set. */
static int bind_run(mlc_session *ss, const char *set, tmodel *tm, int patch, const double *patch_vals,
                    int npatch) {
  int64_t shapes[MAXT][MAXR];
  DLTensor in[MAXT];
  int ok = 1;
  CU_ASSERT_EQUAL_FATAL(read_expected(set, tm), 0);
  CU_ASSERT(tm->nout > 0);
  for (int i = 0; i < tm->nin; i++) {
    ttensor *t = &tm->in[i];
    for (int64_t k = 0; patch_vals && i == patch && k < t->n && k < npatch; k++) {
      if (t->is_float) ((float *)t->data)[k] = (float)patch_vals[k];
      else if (t->is_i32) ((int32_t *)t->data)[k] = (int32_t)patch_vals[k];
      else ((int64_t *)t->data)[k] = (int64_t)patch_vals[k];
    }
    in[i] = dl(t, shapes[i]);
    ok &= mlc_session_set_input(ss, i, &in[i]) == MLC_RT_OK;
  }
  CU_ASSERT(ok);
  return mlc_session_run(ss);
}

/* Runs input set |set| in |ss| and checks every output. */
static void check_set(mlc_session *ss, const char *set) {
  tmodel tm;
  int rc = bind_run(ss, set, &tm, -1, NULL, 0);
  if (rc != MLC_RT_OK) fprintf(stderr, "\nrun %s: %s\n", set, mlc_session_last_error(ss));
  CU_ASSERT_EQUAL(rc, MLC_RT_OK);
  for (int k = 0; rc == MLC_RT_OK && k < tm.nout; k++) {
    const DLTensor *y = NULL;
    CU_ASSERT_EQUAL(mlc_session_get_output(ss, k, &y), MLC_RT_OK);
    if (y) CU_ASSERT_EQUAL(compare(set, k, y, &tm.out[k]), 0);
  }
  tm_free(&tm);
}

/* Set |set| with input |idx| replaced by |vals| must fail to run with a
** message containing |a| and |b|. */
static void check_fails(mlc_session *ss, const char *set, int idx, const double *vals, int n, const char *a,
                        const char *b) {
  tmodel tm;
  int rc = bind_run(ss, set, &tm, idx, vals, n);
  tm_free(&tm);
  CU_ASSERT_NOT_EQUAL(rc, MLC_RT_OK);
  if (rc == MLC_RT_OK) return;
  const char *e = mlc_session_last_error(ss);
  if (!strstr(e, a) || !strstr(e, b)) fprintf(stderr, "\n%s: unexpected error: %s\n", set, e);
  CU_ASSERT_PTR_NOT_NULL(strstr(e, a));
  CU_ASSERT_PTR_NOT_NULL(strstr(e, b));
  const DLTensor *y = NULL;
  CU_ASSERT_NOT_EQUAL(mlc_session_get_output(ss, 0, &y), MLC_RT_OK);
}

/* Compiles, runs and checks tests/image/<name>.onnx. */
static void run_model(const char *name) {
  mlc_model *m;
  mlc_session *ss;
  open_model(name, &m, &ss);
  if (ss) check_set(ss, name);
  mlc_session_free(ss);
  mlc_model_free(m);
}

/* Compiles <name>.onnx once and runs its input sets <name>.1 .. <name>.<n>
** in one session (twice over, so each shape comes back). */
static void run_sets(const char *name, int n) {
  mlc_model *m;
  mlc_session *ss;
  char set[256];
  open_model(name, &m, &ss);
  for (int k = 0; ss && k < 2 * n; k++) {
    snprintf(set, sizeof set, "%s.%d", name, k % n + 1);
    check_set(ss, set);
  }
  mlc_session_free(ss);
  mlc_model_free(m);
}

/* The IR of tests/image/<name>.onnx (free with mlc_string_free). */
static char *model_ir(const char *name) {
  char onnx[4096], *ir = NULL;
  snprintf(onnx, sizeof onnx, "%s%s.onnx", mlc_test_src_path("tests/image/"), name);
  mlc_status s = mlc_inspect_file(onnx, MLC_INSPECT_IR, &ir);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  return ir;
}

static void t_resize(void) {
  run_model("resize_scales");
  run_model("resize_sizes");
  run_model("resize_dyn_scales");
  run_model("resize_crop");
}

static void t_upsample(void) {
  run_model("upsample7");
  run_model("upsample9");
  run_model("resize10");
}

static void t_maxpool_indices(void) { run_model("maxpool_indices"); }

static void t_gather_scatter(void) {
  run_model("gather_elements");
  run_model("gather_nd");
  run_model("scatter_elements");
  run_model("scatter9");
  run_model("scatter_nd");
}

/* Run-time scales or sizes and no declared output shape: the output dims
** are symbols bound when the model runs. */
static void t_resize_undeclared(void) {
  run_sets("resize_dyn_undeclared", 2);
  run_sets("resize_dyn_sizes", 2);
  run_sets("upsample9_dyn", 2);
  char *ir = model_ir("resize_dyn_sizes");
  if (ir) {
    if (!strstr(ir, "R.resize_dims(") || !strstr(ir, "dims=[s0, s1, s2, s3]")) fprintf(stderr, "\n%s\n", ir);
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.resize_dims("));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.define_dims("));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "dims=[s0, s1, s2, s3]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.Tensor((s0, s1, s2, s3), \"float32\")"));
    mlc_string_free(ir);
  }
}

/* Bad run-time values: a run error naming the node, then good runs again. */
static void t_resize_run_errors(void) {
  mlc_model *m;
  mlc_session *ss;
  open_model("resize_dyn_declared", &m, &ss);
  if (ss) {
    static const double wrong[] = {1, 2, 5, 8}, neg[] = {1, 2, -6, 8}, batch[] = {2, 2, 6, 8};
    check_set(ss, "resize_dyn_declared");
    check_fails(ss, "resize_dyn_declared", 1, wrong, 4, "node \"rs\"", "compiled for 6");
    check_fails(ss, "resize_dyn_declared", 1, neg, 4, "node \"rs\"", "sizes[2] = -6 is negative");
    check_fails(ss, "resize_dyn_declared", 1, batch, 4, "node \"rs\"", "computed dimension 0 is 2");
    check_set(ss, "resize_dyn_declared");
  }
  mlc_session_free(ss);
  mlc_model_free(m);
  open_model("resize_dyn_undeclared", &m, &ss);
  if (ss) {
    static const double nan_sc[] = {1, 1, NAN, 2}, zero[] = {1, 1, 2, 0}, huge[] = {1, 1, 1e30, 1};
    check_fails(ss, "resize_dyn_undeclared.1", 1, nan_sc, 4, "node \"rs\"", "scales[2] = nan");
    check_fails(ss, "resize_dyn_undeclared.1", 1, zero, 4, "node \"rs\"", "scales[3] = 0");
    check_fails(ss, "resize_dyn_undeclared.1", 1, huge, 4, "node \"rs\"", "too large");
    check_set(ss, "resize_dyn_undeclared.2");
  }
  mlc_session_free(ss);
  mlc_model_free(m);
  char *ir = model_ir("resize_dyn_declared");
  if (ir) {
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "dims=[1, 2, 6, 8]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.Tensor((1, 2, 6, 8), \"float32\")"));
    mlc_string_free(ir);
  }
}

/* A symbolic batch: sizes from Shape(x) keep it (static when the rest is
** constant); constant scales on symbolic axes. */
static void t_resize_symbolic(void) {
  run_sets("resize_batch_shape", 2);
  run_sets("resize_batch_dyn", 2);
  run_sets("resize_sym_scales", 2);
  run_sets("resize_sym_crop", 2);
  char *ir = model_ir("resize_batch_shape");
  if (ir) {
    CU_ASSERT_PTR_NULL(strstr(ir, "resize_dims"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.Tensor((N, 2, 6, 8), \"float32\")"));
    mlc_string_free(ir);
  }
  ir = model_ir("resize_batch_dyn");
  if (ir) {
    if (!strstr(ir, "R.Tensor((N, 2, s2, s3), \"float32\")")) fprintf(stderr, "\n%s\n", ir);
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.resize_dims("));
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "R.Tensor((N, 2, s2, s3), \"float32\")"));
    mlc_string_free(ir);
  }
}

static void register_suites(void) {
  static const CU_TestInfo tests[] = {
      {"resize", t_resize},
      {"upsample_resize10", t_upsample},
      {"maxpool_indices", t_maxpool_indices},
      {"gather_scatter", t_gather_scatter},
      {"resize_undeclared", t_resize_undeclared},
      {"resize_run_errors", t_resize_run_errors},
      {"resize_symbolic", t_resize_symbolic},
      CU_TEST_INFO_NULL,
  };
  CU_pSuite s = CU_add_suite("image_models", mlc_th_tmp_init, mlc_th_tmp_clean);
  for (const CU_TestInfo *t = tests; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_image_models", fns);
}
