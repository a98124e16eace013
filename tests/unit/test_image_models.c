/*
** test_image_models.c: the image and indexing ops through the whole compile
** path (frontend/ops/image.c and MaxPool's Indices in frontend/ops/nn.c).
**
** Compiles each model of tests/image/ (written by make_models.py), loads it
** through mlc_model_load, binds the inputs listed in tests/image/expected.txt
** and compares every output (shape exactly, floats within 1e-4 relative and
** 1e-5 absolute, integers exactly) with the expected values computed there
** by onnx's reference implementations.  A Resize whose scales are computed
** at run time and whose output shape is not declared must be refused with
** an error naming the node.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"
#include "tests/testutil.h"

#define MAXT 4
#define MAXR 8

static char *tmpdir;

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

/* Compiles, runs and checks tests/image/<name>.onnx. */
static void run_model(const char *name) {
  char onnx[4096], so[4096], err[512];
  tmodel tm;
  snprintf(onnx, sizeof onnx, "%s%s.onnx", mlc_test_src_path("tests/image/"), name);
  snprintf(so, sizeof so, "%s/%s.so", tmpdir, name);
  CU_ASSERT_EQUAL_FATAL(read_expected(name, &tm), 0);
  CU_ASSERT(tm.nout > 0);
  mlc_status s = mlc_compile_file(onnx, so, NULL);
  if (s) fprintf(stderr, "\ncompile %s: %s\n", name, mlc_status_message(s));
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  mlc_model *m = NULL;
  if (!s && mlc_model_load(so, &m, err, sizeof err) != MLC_RT_OK) {
    fprintf(stderr, "\nload %s: %s\n", name, err);
    m = NULL;
  }
  mlc_session *ss = NULL;
  if (m) CU_ASSERT_EQUAL(mlc_session_create(m, NULL, &ss), MLC_RT_OK);
  if (ss) {
    int64_t shapes[MAXT][MAXR];
    DLTensor in[MAXT];
    int ok = 1;
    for (int i = 0; i < tm.nin; i++) {
      in[i] = dl(&tm.in[i], shapes[i]);
      ok &= mlc_session_set_input(ss, i, &in[i]) == MLC_RT_OK;
    }
    CU_ASSERT(ok);
    int rc = mlc_session_run(ss);
    if (rc != MLC_RT_OK) fprintf(stderr, "\nrun %s: %s\n", name, mlc_session_last_error(ss));
    CU_ASSERT_EQUAL(rc, MLC_RT_OK);
    for (int k = 0; rc == MLC_RT_OK && k < tm.nout; k++) {
      const DLTensor *y = NULL;
      CU_ASSERT_EQUAL(mlc_session_get_output(ss, k, &y), MLC_RT_OK);
      if (y) CU_ASSERT_EQUAL(compare(name, k, y, &tm.out[k]), 0);
    }
    mlc_session_free(ss);
  }
  mlc_model_free(m);
  remove(so);
  tm_free(&tm);
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

/* Run-time scales without a declared output shape: a clear error. */
static void t_resize_undeclared(void) {
  char so[4096];
  snprintf(so, sizeof so, "%s/undeclared.so", tmpdir);
  mlc_status s = mlc_compile_file(mlc_test_src_path("tests/image/resize_dyn_undeclared.onnx"), so, NULL);
  CU_ASSERT_PTR_NOT_NULL(s);
  if (!s) return;
  const char *msg = mlc_status_message(s);
  if (!strstr(msg, "node \"rs\" (Resize, opset 13)") || !strstr(msg, "declared static output shape"))
    fprintf(stderr, "\nunexpected message: %s\n", msg);
  CU_ASSERT_EQUAL(mlc_status_code(s), MLC_UNIMPLEMENTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "node \"rs\" (Resize, opset 13)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "scales computed at run time needs a declared static output shape"));
  mlc_status_free(s);
}

static int suite_init(void) {
  tmpdir = mlc_test_tmpdir();
  return tmpdir ? 0 : 1;
}

static int suite_clean(void) {
  if (tmpdir) remove(tmpdir);
  free(tmpdir);
  tmpdir = NULL;
  return 0;
}

static void register_suites(void) {
  static const CU_TestInfo tests[] = {
      {"resize", t_resize},
      {"upsample_resize10", t_upsample},
      {"maxpool_indices", t_maxpool_indices},
      {"gather_scatter", t_gather_scatter},
      {"resize_undeclared", t_resize_undeclared},
      CU_TEST_INFO_NULL,
  };
  CU_pSuite s = CU_add_suite("image_models", suite_init, suite_clean);
  for (const CU_TestInfo *t = tests; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_image_models", fns);
}
