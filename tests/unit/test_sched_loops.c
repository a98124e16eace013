/*
** test_sched_loops.c: the loop transformations (split, fuse, reorder), the
** annotations and the sampling instructions: what each accepts (printed
** result, numerical check against the unscheduled kernel, replay of the
** printed trace) and each thing it refuses (error class and message).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/schedule/schedule.h"
#include "tests/harness_kernel.h"
#include "tests/harness_sched.h"
#include "tests/testutil.h"

#define OK(expr) MLC_TEST_OK(expr)
#define ERR(expr, ...) MLC_TEST_ERR((expr), MLC_INVALID_ARGUMENT, __VA_ARGS__)

static mlc_tir_module *new_module(void) {
  mlc_tir_module *m = NULL;
  if (!OK(mlc_tir_module_create(mlc_allocator_default(), &m))) return NULL;
  return m;
}

static char *print_func(const mlc_tir_func *f) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_func(f, &b);
  CU_ASSERT(!b.oom);
  char *s = strdup(b.len ? mlc_sb_str(&b) : "");
  mlc_sb_fini(&b);
  return s;
}

static char *print_trace(const mlc_sch *s) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_sch_print_trace(s, &b);
  CU_ASSERT(!b.oom);
  char *t = strdup(b.len ? mlc_sb_str(&b) : "");
  mlc_sb_fini(&b);
  return t;
}

#define EXPECT_STR(got, want)                                                 \
  do {                                                                        \
    const char *g_ = (got), *w_ = (want);                                     \
    if (strcmp(g_, w_) != 0) printf("\n--- expected\n%s--- got\n%s", w_, g_); \
    CU_ASSERT_STRING_EQUAL(g_, w_);                                           \
  } while (0)

/*
** Applies |trace| to |f|; the scheduled function must print as |want|
** (when not NULL), compute what |f| computes (static shapes), and the
** printed trace must replay on a fresh schedule to the same function and
** the same trace.  Returns the printed function (caller frees) or NULL.
*/
static char *check_trace(mlc_tir_module *m, const mlc_tir_func *f, uint64_t seed, const char *trace, const char *want,
                         const char *name) {
  mlc_sch *s = NULL, *r = NULL;
  if (!OK(mlc_sch_create(m, f, seed, &s))) return NULL;
  char *got = NULL;
  if (OK(mlc_sch_apply_trace(s, trace, strlen(trace), name))) {
    got = print_func(mlc_sch_func(s));
    if (want) EXPECT_STR(got, want);
    if (f->nscalars == 0) CU_ASSERT_EQUAL(mlc_th_sched_same(m, f, mlc_sch_func(s), name), 0);
    char *t = print_trace(s);
    if (OK(mlc_sch_create(m, f, seed + 1, &r)) && OK(mlc_sch_apply_trace(r, t, strlen(t), "replay"))) {
      char *again = print_func(mlc_sch_func(r)), *t2 = print_trace(r);
      EXPECT_STR(again, got);
      EXPECT_STR(t2, t);
      free(again);
      free(t2);
    }
    free(t);
    mlc_sch_destroy(r);
  }
  mlc_sch_destroy(s);
  return got;
}

/* |trace| is refused at its last line with class |cls| and a message
** containing |msg|; the function is left as it was before that line. */
static void check_refused(mlc_tir_module *m, const mlc_tir_func *f, const char *trace, mlc_sch_error cls,
                          const char *msg) {
  mlc_sch *s = NULL;
  if (!OK(mlc_sch_create(m, f, 1, &s))) return;
  /* all lines but the last */
  size_t len = strlen(trace);
  size_t cut = len;
  if (cut && trace[cut - 1] == '\n') cut--;
  while (cut && trace[cut - 1] != '\n') cut--;
  CU_ASSERT(OK(mlc_sch_apply_trace(s, trace, cut, "prefix")));
  char *before = print_func(mlc_sch_func(s));
  int n = mlc_sch_trace_len(s);
  mlc_status st = mlc_sch_apply_trace(s, trace + cut, len - cut, "refused");
  CU_ASSERT_PTR_NOT_NULL(st);
  if (st) {
    const char *got = mlc_status_message(st);
    if (!strstr(got, msg)) printf("\n--- expected a message with\n%s\n--- got\n%s\n", msg, got);
    CU_ASSERT_PTR_NOT_NULL(strstr(got, msg));
    CU_ASSERT_EQUAL(mlc_status_code(st), MLC_INVALID_ARGUMENT);
    mlc_status_free(st);
  }
  if (mlc_sch_last_error(s) != cls)
    printf("\n--- expected class \"%s\", got \"%s\" (%s)\n", mlc_sch_error_name(cls),
           mlc_sch_error_name(mlc_sch_last_error(s)), msg);
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), cls);
  char *after = print_func(mlc_sch_func(s));
  EXPECT_STR(after, before);
  CU_ASSERT_EQUAL(mlc_sch_trace_len(s), n);
  free(before);
  free(after);
  mlc_sch_destroy(s);
}

/* ---- split ------------------------------------------------------------------------- */

static void test_split(void) {
  mlc_tir_module *m = new_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 8);
  char *p = print_func(f);
  printf("%s", p);
  free(p);
  char *g = check_trace(m, f, 1,
                        "b0 = sch.get_block(name=\"Y\")\n"
                        "l1, l2, l3 = sch.get_loops(block=b0)\n"
                        "l4, l5 = sch.split(loop=l2, factors=[None, 4])\n",
                        NULL, "split_mm");
  printf("%s", g ? g : "(null)");
  free(g);
  mlc_tir_module_destroy(m);
}

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"split", test_split}, {NULL, NULL}};
  CU_pSuite suite = CU_add_suite("sched_loops", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (int i = 0; suite && tests[i].pName; i++) CU_add_test(suite, tests[i].pName, tests[i].pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_sched_loops", fns);
}
