/*
** testutil.c: the CUnit driver and file helpers of testutil.h.
*/
#include "tests/testutil.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mlc_test_add_suite(const char *name, const CU_TestInfo *tests) {
  CU_pSuite s = CU_add_suite(name, NULL, NULL);
  if (!s) return;
  for (const CU_TestInfo *t = tests; t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int mlc_test_main(const char *program, const mlc_test_register_fn *fns) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  for (; *fns; fns++) (*fns)();
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned run = CU_get_number_of_tests_run();
  unsigned failed = CU_get_number_of_tests_failed();
  unsigned afailed = CU_get_number_of_failures();
  printf("\n%s: %u passed, %u failed\n", program, run - failed, failed);
  CU_cleanup_registry();
  return (failed || afailed) ? 1 : 0;
}

static const char *join(const char *env, const char *rel) {
  static char buf[4][4096];
  static int k;
  char *b = buf[k++ & 3];
  const char *root = getenv(env);
  snprintf(b, sizeof buf[0], "%s/%s", root && *root ? root : ".", rel);
  return b;
}

const char *mlc_test_src_path(const char *rel) { return join("MLC_SRCDIR", rel); }
const char *mlc_test_build_path(const char *rel) { return join("MLC_BUILDDIR", rel); }

char *mlc_test_read_file(const char *path, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *d = malloc(cap);
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap *= 2;
      char *nd = realloc(d, cap);
      if (!nd) {
        free(d);
        fclose(f);
        return NULL;
      }
      d = nd;
    }
    size_t r = fread(d + n, 1, 4096, f);
    n += r;
    if (r < 4096) break;
  }
  fclose(f);
  d[n] = 0;
  if (out_size) *out_size = n;
  return d;
}

int mlc_test_write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(data, 1, size, f);
  return (fclose(f) == 0 && w == size) ? 0 : -1;
}

char *mlc_test_tmpdir(void) {
  const char *t = getenv("TMPDIR");
  char tmpl[4096];
  snprintf(tmpl, sizeof tmpl, "%s/mlc-test-XXXXXX", t && *t ? t : "/tmp");
  char *d = mkdtemp(tmpl);
  return d ? strdup(d) : NULL;
}
