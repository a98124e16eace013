/*
** test_sched_golden.c: schedule goldens, text in and text out.
**
** Every case in tests/schedule/ is a set of files named NAME.*:
**   NAME.tir       the function before (one prim function, as printed);
**   NAME.trace     the trace to apply;
**   NAME.expected  the scheduled function as printed, or
**   NAME.error     when the trace must be refused: the error class's
**                  short description (mlc_sch_error_name) on the first line
**                  and a fragment of the message on the second.
** For a success the driver also checks that the printed trace replays on a
** fresh schedule to the same function, that parsing the printed function
** gives it back, and (static shapes) that the scheduled kernel computes what
** the unscheduled one does on random data.  For a refusal, that the
** function is unchanged by the failing instruction.
** Each case is one CUnit test named NAME (MLC_TEST_ONLY=schedule_golden/NAME
** runs one); MLC_UPDATE_GOLDEN=1 rewrites the .expected files.
*/
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/schedule/schedule.h"
#include "tests/harness_kernel.h"
#include "tests/harness_sched.h"
#include "tests/testutil.h"

#define OK(expr) MLC_TEST_OK(expr)

static char *read_case(const char *name, const char *ext) {
  char rel[512];
  snprintf(rel, sizeof rel, "tests/schedule/%s.%s", name, ext);
  return mlc_test_read_file(mlc_test_src_path(rel), NULL);
}

static int is_static(const mlc_tir_func *f) { return f->nscalars == 0; }

static int run_case(const char *name) {
  int fails = 0;
#define CHECK(cond, ...)                            \
  do {                                              \
    if (!(cond)) {                                  \
      printf("\n  %s: ", name);                     \
      printf(__VA_ARGS__);                          \
      printf("\n");                                 \
      fails++;                                      \
    }                                               \
  } while (0)
  char *src = read_case(name, "tir"), *trace = read_case(name, "trace");
  char *expected = read_case(name, "expected"), *error = read_case(name, "error");
  mlc_tir_module *m = NULL;
  mlc_tir_func *f = NULL;
  mlc_sch *s = NULL;
  CHECK(src && trace, "missing .tir or .trace");
  const char *upd_env = getenv("MLC_UPDATE_GOLDEN");
  int updating = upd_env && strcmp(upd_env, "1") == 0;
  CHECK(!(expected && error) && (expected || error || updating), "needs exactly one of .expected and .error");
  if (fails) goto done;
  if (!OK(mlc_tir_module_create(mlc_allocator_default(), &m))) goto done;
  mlc_status st = mlc_tir_parse_func(m, src, strlen(src), name, &f);
  if (st) {
    CHECK(0, "parse: %s", mlc_status_message(st));
    mlc_status_free(st);
    goto done;
  }
  if (!OK(mlc_sch_create(m, f, 42, &s))) goto done;
  char trname[600];
  snprintf(trname, sizeof trname, "%s.trace", name);
  st = mlc_sch_apply_trace(s, trace, strlen(trace), trname);
  if (error) {
    char cls[128] = "", frag[512] = "";
    const char *nl = strchr(error, '\n');
    size_t n = nl ? (size_t)(nl - error) : strlen(error);
    snprintf(cls, sizeof cls, "%.*s", (int)n, error);
    if (nl) snprintf(frag, sizeof frag, "%s", nl + 1);
    char *e = strchr(frag, '\n');
    if (e) *e = 0;
    CHECK(st != NULL, "expected the error \"%s\", the trace applied", frag);
    if (st) {
      const char *msg = mlc_status_message(st);
      CHECK(strstr(msg, frag) != NULL, "error \"%s\" lacks \"%s\"", msg, frag);
      CHECK(strcmp(mlc_sch_error_name(mlc_sch_last_error(s)), cls) == 0, "error class \"%s\", expected \"%s\"",
            mlc_sch_error_name(mlc_sch_last_error(s)), cls);
      /* the refused instruction changed nothing: replaying what was
      ** recorded gives the same function */
      char *t = mlc_th_print_trace(s);
      mlc_sch *r = NULL;
      if (OK(mlc_sch_create(m, f, 42, &r))) {
        mlc_status rs = mlc_sch_apply_trace(r, t, strlen(t), "recorded");
        CHECK(rs == NULL, "replay of the recorded part: %s", rs ? mlc_status_message(rs) : "");
        mlc_status_free(rs);
        char *a = mlc_th_print_func(mlc_sch_func(s)), *b = mlc_th_print_func(mlc_sch_func(r));
        CHECK(strcmp(a, b) == 0, "the refused instruction changed the function:\n%s", a);
        free(a);
        free(b);
        mlc_sch_destroy(r);
      }
      free(t);
    }
    mlc_status_free(st);
    goto done;
  }
  if (st) {
    CHECK(0, "%s", mlc_status_message(st));
    mlc_status_free(st);
    goto done;
  }
  char *got = mlc_th_print_func(mlc_sch_func(s));
  if (updating) {
    char rel[512];
    snprintf(rel, sizeof rel, "tests/schedule/%s.expected", name);
    CHECK(mlc_test_write_file(mlc_test_src_path(rel), got, strlen(got)) == 0, "cannot write %s", rel);
  } else {
    CHECK(strcmp(got, expected) == 0, "differs from %s.expected\n--- expected\n%s--- got\n%s", name, expected,
          got);
  }
  /* the printed function parses back to itself */
  mlc_tir_func *back = NULL;
  st = mlc_tir_parse_func(m, got, strlen(got), "printed", &back);
  CHECK(st == NULL, "the scheduled function does not parse: %s", st ? mlc_status_message(st) : "");
  mlc_status_free(st);
  if (back) {
    char *again = mlc_th_print_func(back);
    CHECK(strcmp(again, got) == 0, "print -> parse -> print differs:\n%s", again);
    free(again);
  }
  /* the printed trace replays to the same function */
  char *t = mlc_th_print_trace(s);
  mlc_sch *r = NULL;
  if (OK(mlc_sch_create(m, f, 7, &r))) {
    st = mlc_sch_apply_trace(r, t, strlen(t), "printed trace");
    CHECK(st == NULL, "the printed trace does not replay: %s\n%s", st ? mlc_status_message(st) : "", t);
    mlc_status_free(st);
    char *again = mlc_th_print_func(mlc_sch_func(r));
    CHECK(strcmp(again, got) == 0, "replaying the printed trace gives\n%s", again);
    free(again);
    mlc_sch_destroy(r);
  }
  free(t);
  if (is_static(f)) CHECK(mlc_th_sched_same(m, f, mlc_sch_func(s), name) == 0, "numerical check failed");
  free(got);
done:
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
  free(src);
  free(trace);
  free(expected);
  free(error);
  return fails;
#undef CHECK
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* One CUnit test per case, named by the case. */
static void golden_case(void) {
  CU_pTest t = CU_get_current_test();
  CU_ASSERT_EQUAL(run_case(t->pName), 0);
}

static char *names[4096];
static int nnames;

static void free_names(void) {
  for (int i = 0; i < nnames; i++) free(names[i]);
  nnames = 0;
}

static void register_tests(void) {
  CU_pSuite suite = CU_add_suite("schedule_golden", mlc_th_kernel_init, mlc_th_kernel_clean);
  DIR *d = opendir(mlc_test_src_path("tests/schedule"));
  if (!suite || !d) {
    if (d) closedir(d);
    fprintf(stderr, "test_sched_golden: no tests/schedule folder\n");
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) && nnames < 4096) {
    size_t len = strlen(e->d_name);
    if (len > 6 && strcmp(e->d_name + len - 6, ".trace") == 0) names[nnames++] = strndup(e->d_name, len - 6);
  }
  closedir(d);
  qsort(names, (size_t)nnames, sizeof names[0], cmp_str);
  for (int i = 0; i < nnames; i++) CU_add_test(suite, names[i], golden_case);
  atexit(free_names);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_sched_golden", fns);
}
