/*
** testutil.c: the CUnit driver and file helpers of testutil.h.
**
** Fault injection (SQLite's and Lua's way): with MLC_FAIL_ALLOC=N the driver
** installs an allocator that fails the Nth allocation of the run (N+ fails
** it and every one after it) as the compiler's default allocator
** (base/alloc.h) and the runtime's (mlc_rt_set_allocator), for whichever of
** the two the program links; tests/faults.sh loops N over a suite.  Test
** assertions that fail under injection are expected, so such a run exits 0
** once the suites have run; what counts is that it ends at all, and without
** a sanitizer report or a leak.  It ends with the line
** "mlc-fault: failed allocation N of K" or "mlc-fault: N not reached (K
** allocations)", which the script uses to stop.  MLC_TEST_ONLY=SUITE or
** SUITE/TEST runs only that suite or test (also without injection), and
** MLC_TEST_LIST=1 lists the SUITE/TEST names instead of running them.
*/
#include "config.h"
#include "tests/testutil.h"

#include <CUnit/Basic.h>
#include <ftw.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "mlc/mlc_runtime.h"

/* Present when the program links base/ or the runtime's loader; the driver
** installs the failing allocator in whichever it finds. */
#pragma weak mlc_allocator_set_default
#pragma weak mlc_rt_set_allocator

/* ---- fault injection ------------------------------------------------------- */

static struct {
  unsigned long long fail_at; /* 0: injection off */
  int persist;                /* fail every allocation from fail_at on */
  atomic_ullong count;        /* allocations so far */
  atomic_int fired;
} fault;

/* The C library's realloc, counting allocations and failing the chosen ones.
** Frees are never failed nor counted. */
static void *fault_realloc(void *self, void *p, size_t old_size, size_t new_size) {
  (void)self;
  (void)old_size;
  if (new_size == 0) {
    free(p);
    return NULL;
  }
  unsigned long long n = atomic_fetch_add(&fault.count, 1) + 1;
  if (n == fault.fail_at || (fault.persist && n > fault.fail_at)) {
    atomic_store(&fault.fired, 1);
    return NULL;
  }
  return realloc(p, new_size);
}

/* Installs fault_realloc as the default allocators; -1 when there are none. */
static int fault_install(void) {
  if (!mlc_allocator_set_default && !mlc_rt_set_allocator) return -1;
  if (mlc_allocator_set_default) {
    mlc_allocator a = {NULL, fault_realloc};
    mlc_allocator_set_default(&a);
  }
  if (mlc_rt_set_allocator) {
    mlc_rt_allocator a = {NULL, fault_realloc};
    mlc_rt_set_allocator(&a);
  }
  return 0;
}

static int fault_env; /* the run is under MLC_FAIL_ALLOC */

int mlc_test_fail_alloc(unsigned long long n) {
  static int installed;
  if (fault_env) return -1;
  if (!installed) {
    if (fault_install() != 0) return -1;
    installed = 1;
  }
  if (n == 0) {
    fault.fail_at = 0;
    return atomic_exchange(&fault.fired, 0);
  }
  atomic_store(&fault.fired, 0);
  fault.persist = 0;
  fault.fail_at = atomic_load(&fault.count) + n;
  return 0;
}

/* Reads MLC_FAIL_ALLOC and installs the allocator; -1 on a bad value. */
static int fault_init(const char *program) {
  const char *v = getenv("MLC_FAIL_ALLOC");
  if (!v || !*v) return 0;
  char *end;
  fault.fail_at = strtoull(v, &end, 10);
  fault.persist = *end == '+';
  if (fault.fail_at == 0 || (*end && strcmp(end, "+") != 0)) {
    fprintf(stderr, "%s: MLC_FAIL_ALLOC=%s: expected N or N+ with N >= 1\n", program, v);
    return -1;
  }
  if (fault_install() != 0) {
    fprintf(stderr, "%s: MLC_FAIL_ALLOC: the program allocates through no injectable allocator\n",
            program);
    return -1;
  }
  fault_env = 1;
  return 0;
}

/* Runs what |only| names (SUITE or SUITE/TEST); CUE_NOSUITE or CUE_NOTEST
** when it names nothing. */
static CU_ErrorCode run_named(const char *program, const char *only) {
  char suite[256];
  snprintf(suite, sizeof suite, "%s", only);
  char *slash = strchr(suite, '/');
  if (slash) *slash = 0;
  CU_pSuite s = CU_get_suite(suite);
  CU_pTest t = s && slash ? CU_get_test(s, slash + 1) : NULL;
  if (!s || (slash && !t)) {
    fprintf(stderr, "%s: MLC_TEST_ONLY=%s names no %s\n", program, only, s ? "test" : "suite");
    return s ? CUE_NOTEST : CUE_NOSUITE;
  }
  return t ? CU_basic_run_test(s, t) : CU_basic_run_suite(s);
}

/* Runs what MLC_TEST_ONLY names (SUITE or SUITE/TEST), else everything;
** -1 when it names nothing.  MLC_TEST_LIST=1 prints every SUITE/TEST
** instead and returns 1. */
static int run_selected(const char *program) {
  if (getenv("MLC_TEST_LIST")) {
    for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext)
      for (CU_pTest t = s->pTest; t; t = t->pNext) printf("%s/%s\n", s->pName, t->pName);
    return 1;
  }
  const char *only = getenv("MLC_TEST_ONLY");
  CU_ErrorCode e = only && *only ? run_named(program, only) : CU_basic_run_tests();
  /* Under injection a suite's own setup may fail as well. */
  if (fault_env && (e == CUE_SINIT_FAILED || e == CUE_SCLEAN_FAILED)) e = CUE_SUCCESS;
  return e == CUE_SUCCESS ? 0 : -1;
}

void mlc_test_add_suite(const char *name, const CU_TestInfo *tests) {
  CU_pSuite s = CU_add_suite(name, NULL, NULL);
  if (!s) return;
  for (const CU_TestInfo *t = tests; t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int mlc_test_main(const char *program, const mlc_test_register_fn *fns) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  for (; *fns; fns++) (*fns)();
  if (fault_init(program) != 0) {
    CU_cleanup_registry();
    return 2;
  }
  CU_basic_set_mode(fault_env ? CU_BRM_SILENT : CU_BRM_VERBOSE);
  int r = run_selected(program);
  if (r != 0) {
    CU_cleanup_registry();
    return r > 0 ? 0 : 2;
  }
  unsigned run = CU_get_number_of_tests_run();
  unsigned failed = CU_get_number_of_tests_failed();
  unsigned afailed = CU_get_number_of_failures();
  printf("\n%s: %u passed, %u failed\n", program, run - failed, failed);
  CU_cleanup_registry();
  if (fault_env) {
    unsigned long long k = atomic_load(&fault.count);
    if (atomic_load(&fault.fired))
      printf("mlc-fault: failed allocation %llu%s of %llu\n", fault.fail_at,
             fault.persist ? "+" : "", k);
    else
      printf("mlc-fault: %llu not reached (%llu allocations)\n", fault.fail_at, k);
    return 0;
  }
  return (failed || afailed) ? 1 : 0;
}

/* Not static, so that the stores are kept: the leak checker reads them. */
void *mlc_test_held[256];

void *mlc_test_hold(void *p) {
  static unsigned next;
  mlc_test_held[next++ % 256] = p;
  return p;
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

/* The directories mlc_test_tmpdir made, removed with what is in them when
** the program exits (kept when MLC_KEEP_TEMP is set, to look at). */
static char **tmpdirs;
static int ntmpdirs, captmpdirs;

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

void mlc_test_rmtree(const char *dir) {
  if (dir && !getenv("MLC_KEEP_TEMP")) nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_tmpdirs(void) {
  for (int i = 0; i < ntmpdirs; i++) {
    mlc_test_rmtree(tmpdirs[i]);
    free(tmpdirs[i]);
  }
  free(tmpdirs);
  tmpdirs = NULL;
  ntmpdirs = captmpdirs = 0;
}

char *mlc_test_tmpdir(void) {
  const char *t = getenv("TMPDIR");
  char tmpl[4096];
  snprintf(tmpl, sizeof tmpl, "%s/mlc-test-XXXXXX", t && *t ? t : "/tmp");
  char *d = mkdtemp(tmpl);
  if (!d) return NULL;
  if (ntmpdirs == captmpdirs) {
    char **grown = realloc(tmpdirs, (size_t)(captmpdirs ? 2 * captmpdirs : 16) * sizeof *grown);
    if (grown) tmpdirs = grown, captmpdirs = captmpdirs ? 2 * captmpdirs : 16;
  }
  if (ntmpdirs < captmpdirs && (tmpdirs[ntmpdirs] = strdup(d))) {
    if (ntmpdirs++ == 0) atexit(remove_tmpdirs);
  }
  return mlc_test_hold(strdup(d));
}
