/*
** test_fuzz_cases.c: the inputs the fuzz targets (fuzz/) found, as
** regression cases, through the public API.
**
** tests/malformed/fuzz/MANIFEST lists one case a line,
** `reader file expected_code substring`, where reader is `inspect`
** (mlc_inspect_file, the path of fuzz_inspect: load, pre-flight check,
** import, report), `tensor` (mlc_tensor_read_file, the path of
** fuzz_tensor) or `compile` (mlc_compile_file into a temporary folder, the
** path of fuzz_compile and beyond).  Each must give that error with the
** substring in its message, or with code OK succeed with the substring in
** inspect's report or compile's progress lines;
** never a crash or a leak (the sanitizer build checks).  Cases whose fix belongs elsewhere
** wait in tests/malformed/fuzz/pending/ and are not run here.
**
** The targets call the memory entries of driver/ (driver_int.h); a second
** suite checks that they give what the file entries give.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "driver/driver_int.h"
#include "mlc/mlc.h"
#include "tests/testutil.h"

static char *case_path(const char *name) {
  const char *p = mlc_test_src_path("tests/malformed/fuzz");
  size_t n = strlen(p) + 1 + strlen(name) + 1;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s/%s", p, name);
  return s;
}

static void progress_line(void *user, const char *line) {
  mlc_sb_puts(user, line);
  mlc_sb_putc(user, '\n');
}

/* Runs |file| through |reader|; the status it gives (NULL: success) and
** in *out_text what inspect or compile printed (free with mlc_string_free). */
static mlc_status run_case(const char *reader, const char *path, int *known, char **out_text) {
  *known = 1;
  *out_text = NULL;
  if (strcmp(reader, "inspect") == 0) return mlc_inspect_file(path, MLC_INSPECT_TEXT, out_text);
  if (strcmp(reader, "compile") == 0) {
    char *dir = mlc_test_tmpdir(), so[4200];
    if (!dir) return mlc_make_status(MLC_IO_ERROR, "no temporary folder");
    snprintf(so, sizeof so, "%s/case.so", dir);
    mlc_strbuf b = MLC_STRBUF_INIT;
    mlc_compile_options o;
    mlc_compile_options_init(&o);
    o.progress = progress_line;
    o.progress_user = &b;
    mlc_status s = mlc_compile_file(path, so, &o);
    *out_text = b.data; /* the buffer's, freed by mlc_string_free */
    free(dir);
    return s;
  }
  if (strcmp(reader, "tensor") == 0) {
    DLTensor *t = NULL;
    mlc_status s = mlc_tensor_read_file(path, &t);
    mlc_tensor_free(t);
    return s;
  }
  *known = 0;
  return NULL;
}

static void test_manifest(void) {
  char *mpath = case_path("MANIFEST");
  CU_ASSERT_PTR_NOT_NULL_FATAL(mpath);
  char *text = mlc_test_read_file(mpath, NULL);
  free(mpath);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  int cases = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#' || !line[0]) continue;
    char *f[3];
    char *p = line;
    int ok = 1;
    for (int i = 0; i < 3 && ok; i++) {
      f[i] = p;
      p = strchr(p, ' ');
      if (p) *p++ = 0;
      ok = p != NULL;
    }
    CU_ASSERT_FATAL(ok);
    const char *reader = line, *file = f[1], *code_name = f[2], *sub = p;
    mlc_code code = MLC_OK;
    for (int c = MLC_INVALID_ARGUMENT; c <= MLC_IO_ERROR; c++)
      if (strcmp(mlc_code_name((mlc_code)c), code_name) == 0) code = (mlc_code)c;
    CU_ASSERT(code != MLC_OK || strcmp(code_name, "OK") == 0);
    char *path = case_path(file);
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    int known;
    char *out = NULL;
    mlc_status s = run_case(reader, path, &known, &out);
    CU_ASSERT(known);
    int good = code == MLC_OK ? !s && out && strstr(out, sub)
                              : s && mlc_status_code(s) == code && strstr(mlc_status_message(s), sub);
    if (!good)
      printf("\n  %s (%s): want %s \"%s\", got %s \"%s\"\n", file, reader, code_name, sub,
             s ? mlc_code_name(mlc_status_code(s)) : "OK", s ? mlc_status_message(s) : out ? out : "");
    CU_ASSERT(good);
    mlc_status_free(s);
    mlc_string_free(out);
    free(path);
    cases++;
  }
  free(text);
  CU_ASSERT(cases > 0);
}

/* mlc_drv_inspect_onnx_bytes on a file's bytes, named by its path, prints
** what mlc_inspect_file prints, in every format. */
static void test_inspect_bytes(void) {
  const char *path = mlc_test_src_path("fuzz/corpus/fuzz_inspect/mlp_small.onnx");
  size_t size;
  char *data = mlc_test_read_file(path, &size);
  CU_ASSERT_PTR_NOT_NULL_FATAL(data);
  static const mlc_inspect_format fmts[] = {MLC_INSPECT_TEXT, MLC_INSPECT_JSON, MLC_INSPECT_IR,
                                            MLC_INSPECT_DOT};
  for (int i = 0; i < 4; i++) {
    char *text = NULL;
    mlc_strbuf b = MLC_STRBUF_INIT;
    if (MLC_TEST_OK(mlc_inspect_file(path, fmts[i], &text)) &&
        MLC_TEST_OK(mlc_drv_inspect_onnx_bytes(data, size, path, fmts[i], &b))) {
      CU_ASSERT_PTR_NOT_NULL(b.data);
      if (b.data) CU_ASSERT_STRING_EQUAL(b.data, text);
    }
    mlc_string_free(text);
    mlc_sb_fini(&b);
  }
  mlc_strbuf b = MLC_STRBUF_INIT;
  MLC_TEST_ERR(mlc_drv_inspect_onnx_bytes(data, size / 2, "half.onnx", MLC_INSPECT_TEXT, &b),
               MLC_INVALID_ARGUMENT, "half.onnx");
  MLC_TEST_ERR(mlc_drv_inspect_onnx_bytes(data, size, "x.onnx", (mlc_inspect_format)99, &b),
               MLC_INVALID_ARGUMENT, "unknown inspect format");
  mlc_sb_fini(&b);
  free(data);
}

/* mlc_drv_tensor_read_bytes reads .npy and .pb bytes as the file reader does. */
static void test_tensor_bytes(void) {
  static const char *const files[] = {"fuzz/corpus/fuzz_tensor/a_i8.npy",
                                      "fuzz/corpus/fuzz_tensor/v2.npy",
                                      "fuzz/corpus/fuzz_tensor/f32_typed.pb"};
  for (int i = 0; i < 3; i++) {
    const char *path = mlc_test_src_path(files[i]);
    size_t size;
    char *data = mlc_test_read_file(path, &size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    DLTensor *a = NULL, *b = NULL;
    if (MLC_TEST_OK(mlc_tensor_read_file(path, &a)) &&
        MLC_TEST_OK(mlc_drv_tensor_read_bytes(data, size, files[i], &b))) {
      CU_ASSERT(a->ndim == b->ndim && a->dtype.code == b->dtype.code && a->dtype.bits == b->dtype.bits);
      size_t n = a->dtype.bits / 8;
      for (int d = 0; d < a->ndim && d < b->ndim; d++) {
        CU_ASSERT_EQUAL(a->shape[d], b->shape[d]);
        n *= (size_t)a->shape[d];
      }
      CU_ASSERT(memcmp(a->data, b->data, n) == 0);
    }
    mlc_tensor_free(a);
    mlc_tensor_free(b);
    /* Cut short: an error naming the given name, no tensor. */
    b = (DLTensor *)1;
    MLC_TEST_ERR(mlc_drv_tensor_read_bytes(data, size - 1, "short", &b), MLC_INVALID_ARGUMENT, "short");
    CU_ASSERT_PTR_NULL(b);
    free(data);
  }
}

static void register_suites(void) {
  static const CU_TestInfo tests[] = {{"manifest", test_manifest}, CU_TEST_INFO_NULL};
  static const CU_TestInfo bytes_tests[] = {
      {"inspect_bytes", test_inspect_bytes}, {"tensor_bytes", test_tensor_bytes}, CU_TEST_INFO_NULL};
  mlc_test_add_suite("fuzz_cases", tests);
  mlc_test_add_suite("memory_entries", bytes_tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_fuzz_cases", fns);
}
