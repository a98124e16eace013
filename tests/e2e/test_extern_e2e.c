/*
** test_extern_e2e.c: bundled models compiled with external libraries.
**
** Each bundled model (models/: mlp, mlp_dyn at batch 1 and 4, cnn,
** encoder) is compiled with --extern openblas, onednn and both, run
** through the loader and compared with ONNX Runtime's output (rtol 1e-3,
** atol 1e-4); the manifest must name the library functions the
** dispatcher chose.  Eight threads with a session each (two threads per
** session) on one model with library calls give identical bits.  The
** auto choice: a compile times the candidates and records them, a second
** compile with the same cache measures nothing (the cache file is
** unchanged) and chooses the same.  A library this build lacks is skipped.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"
#include "tests/harness.h"
#include "tests/testutil.h"

static const char *model_path(const char *name) {
  static char buf[4][4096];
  static int k;
  char *b = buf[k++ & 3];
  snprintf(b, sizeof buf[0], "%s%s", mlc_test_src_path("models/"), name);
  return b;
}

static int have(const char *lib) {
#ifdef MLC_HAVE_OPENBLAS
  if (!strcmp(lib, "openblas")) return 1;
#endif
#ifdef MLC_HAVE_ONEDNN
  if (!strcmp(lib, "onednn")) return 1;
#endif
  if (!strcmp(lib, "onednn,openblas")) return have("onednn") && have("openblas");
  return 0;
}

/* Compiles models/<name>.onnx with |libs| into tmpdir; the path (static). */
static const char *compile_with(const char *name, const char *libs, const char *cache) {
  static char out[4096];
  char onnx[300];
  snprintf(onnx, sizeof onnx, "%s.onnx", name);
  snprintf(out, sizeof out, "%s/%s.%s.so", mlc_th_tmpdir, name, libs);
  for (char *p = strrchr(out, '/'); p && *p; p++)
    if (*p == ',') *p = '_';
  mlc_compile_options o;
  mlc_compile_options_init(&o);
  o.extern_libs = libs;
  o.extern_cache = cache;
  o.header_path = "";
  mlc_status s = mlc_compile_file(model_path(onnx), out, &o);
  if (s) fprintf(stderr, "compile %s --extern %s: %s\n", name, libs, mlc_status_message(s));
  CU_ASSERT_PTR_NULL(s);
  int ok = s == NULL;
  mlc_status_free(s);
  return ok ? out : NULL;
}

static size_t numel(const DLTensor *t) {
  size_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= (size_t)t->shape[i];
  return n;
}

/* Runs |so| on models/<input>, compares with models/<output>; the
** manifest must contain each of |names| (NULL-terminated). */
static void run_and_check(const char *so, const char *input, const char *output, const char *const *names) {
  char err[512];
  mlc_model *m = NULL;
  if (mlc_model_load(so, &m, err, sizeof err) != MLC_RT_OK) {
    fprintf(stderr, "load %s: %s\n", so, err);
    CU_FAIL("load");
    return;
  }
  for (int i = 0; names && names[i]; i++) {
    int found = strstr(mlc_model_manifest(m), names[i]) != NULL;
    if (!found) fprintf(stderr, "%s: manifest lacks %s\n", so, names[i]);
    CU_ASSERT(found);
  }
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  DLTensor *in = NULL, *want = NULL;
  CU_ASSERT_PTR_NULL_FATAL(mlc_tensor_read_file(model_path(input), &in));
  CU_ASSERT_PTR_NULL_FATAL(mlc_tensor_read_file(model_path(output), &want));
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, in), MLC_RT_OK);
  mlc_rt_status st = mlc_session_run(s);
  if (st) fprintf(stderr, "run %s: %s\n", so, mlc_session_last_error(s));
  CU_ASSERT_EQUAL(st, MLC_RT_OK);
  const DLTensor *got = NULL;
  if (!st && mlc_session_get_output(s, 0, &got) == MLC_RT_OK && got) {
    int bad = got->ndim != want->ndim || numel(got) != numel(want);
    const float *a = (const float *)got->data, *b = (const float *)want->data;
    for (size_t i = 0; !bad && i < numel(want); i++)
      if (!(fabs((double)a[i] - b[i]) <= 1e-4 + 1e-3 * fabs((double)b[i]))) {
        fprintf(stderr, "%s: element %zu: %g, want %g\n", so, i, a[i], b[i]);
        bad = 1;
      }
    CU_ASSERT_EQUAL(bad, 0);
  }
  mlc_tensor_free(in);
  mlc_tensor_free(want);
  mlc_session_free(s);
  mlc_model_free(m);
}

static void check(const char *name, const char *libs, const char *const *names) {
  if (!have(libs)) return;
  const char *so = compile_with(name, libs, "");
  if (!so) return;
  char copy[4096], in[256], out[256];
  snprintf(copy, sizeof copy, "%s", so);
  snprintf(in, sizeof in, "%s.input_0.npy", name);
  snprintf(out, sizeof out, "%s.output_0.npy", name);
  run_and_check(copy, in, out, names);
  if (!strcmp(name, "mlp_dyn"))
    run_and_check(copy, "mlp_dyn.batch4.input_0.npy", "mlp_dyn.batch4.output_0.npy", names);
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_openblas(void) {
  check("mlp", "openblas", NAMES("openblas.matmul", "libopenblas"));
  check("mlp_dyn", "openblas", NAMES("openblas.matmul"));
  check("cnn", "openblas", NAMES("openblas.conv2d", "openblas.matmul"));
  check("encoder", "openblas", NAMES("openblas.matmul"));
}

static void test_onednn(void) {
  check("mlp", "onednn", NAMES("onednn.matmul", "libdnnl"));
  check("mlp_dyn", "onednn", NAMES("onednn.matmul"));
  check("cnn", "onednn", NAMES("onednn.conv2d", "onednn.max_pool2d"));
  check("encoder", "onednn", NAMES("onednn.matmul", "onednn.softmax"));
}

static void test_both(void) {
  check("cnn", "onednn,openblas", NAMES("onednn.conv2d", "onednn.matmul"));
  check("encoder", "onednn,openblas", NAMES("onednn.matmul"));
}

/* A model compiled with --extern none needs no library. */
static void test_none(void) {
  const char *so = compile_with("cnn", "none", "");
  if (!so) return;
  char err[256];
  mlc_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_model_load(so, &m, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_model_manifest(m), "\"extern_libs\": []"));
  CU_ASSERT_PTR_NULL(strstr(mlc_model_manifest(m), "openblas."));
  mlc_model_free(m);
}

static void threads_with(const char *libs) {
  if (!have(libs)) return;
  const char *so = compile_with("cnn", libs, "");
  if (!so) return;
  char err[256];
  mlc_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_model_load(so, &m, err, sizeof err), MLC_RT_OK);
  DLTensor *in = NULL;
  CU_ASSERT_PTR_NULL_FATAL(mlc_tensor_read_file(model_path("cnn.input_0.npy"), &in));
  mlc_th_check_concurrent(m, in, 10);
  mlc_tensor_free(in);
  mlc_model_free(m);
}

static void test_threads(void) {
  threads_with("openblas");
  threads_with("onednn");
}

static long file_size(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* auto: timed once, cached, the same choice again without timing. */
static void test_auto(void) {
  if (!have("openblas") && !have("onednn")) return;
  char cache[4096];
  snprintf(cache, sizeof cache, "%s/extern-times.txt", mlc_th_tmpdir);
  unlink(cache);
  const char *so = compile_with("mlp", "auto", cache);
  if (!so) return;
  char first[4096];
  snprintf(first, sizeof first, "%s.first", so);
  CU_ASSERT_EQUAL(rename(so, first), 0);
  long size = file_size(cache);
  CU_ASSERT(size > 0);
  run_and_check(first, "mlp.input_0.npy", "mlp.output_0.npy", NAMES("\"extern_choices\"", "\"ms\": "));
  so = compile_with("mlp", "auto", cache);
  if (!so) return;
  CU_ASSERT_EQUAL(file_size(cache), size);
  size_t na = 0, nb = 0;
  char *a = mlc_test_read_file(first, &na), *b = mlc_test_read_file(so, &nb);
  CU_ASSERT(a && b && na == nb && memcmp(a, b, na) == 0);
  free(a);
  free(b);
  run_and_check(so, "mlp.input_0.npy", "mlp.output_0.npy", NULL);
}

static CU_TestInfo tests[] = {{"openblas", test_openblas}, {"onednn", test_onednn}, {"both", test_both},
                              {"none", test_none},         {"threads", test_threads}, {"auto", test_auto},
                              CU_TEST_INFO_NULL};

static void reg(void) { mlc_test_add_suite("extern_e2e", tests); }

int main(void) {
  const mlc_test_register_fn fns[] = {reg, NULL};
  return mlc_th_main("test_extern_e2e", fns);
}
