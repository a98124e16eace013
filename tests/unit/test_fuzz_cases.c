/*
** test_fuzz_cases.c: the inputs the fuzz targets (fuzz/) found, as
** regression cases, through the public API.
**
** tests/malformed/fuzz/MANIFEST lists one case a line,
** `reader file expected_code substring`, where reader is `inspect`
** (mlc_inspect_file, the path of fuzz_inspect: load, pre-flight check,
** import, report) or `tensor` (mlc_tensor_read_file, the path of
** fuzz_tensor).  Each must give that error with the substring in its
** message, or with code OK succeed with the substring in inspect's report;
** never a crash or a leak (the sanitizer build checks).  Cases whose fix belongs elsewhere
** wait in tests/malformed/fuzz/pending/ and are not run here.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlc/mlc.h"
#include "tests/testutil.h"

static char *case_path(const char *name) {
  const char *p = mlc_test_src_path("tests/malformed/fuzz");
  size_t n = strlen(p) + 1 + strlen(name) + 1;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s/%s", p, name);
  return s;
}

/* Runs |file| through |reader|; the status it gives (NULL: success) and
** in *out_text what inspect printed (free with mlc_string_free). */
static mlc_status run_case(const char *reader, const char *path, int *known, char **out_text) {
  *known = 1;
  *out_text = NULL;
  if (strcmp(reader, "inspect") == 0) return mlc_inspect_file(path, MLC_INSPECT_TEXT, out_text);
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

static void register_suites(void) {
  static const CU_TestInfo tests[] = {{"manifest", test_manifest}, CU_TEST_INFO_NULL};
  mlc_test_add_suite("fuzz_cases", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_fuzz_cases", fns);
}
