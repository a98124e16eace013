/*
** test_schedule.c: the schedule state (handles, lookups, errors), the
** trace (print, parse, replay) and the loop-kind primitives.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "lower/schedule/schedule.h"
#include "lower/tir_lower.h"
#include "tests/harness_kernel.h"
#include "tests/harness_sched.h"
#include "tests/testutil.h"

#define OK(expr) MLC_TEST_OK(expr)
#define ERR(expr, ...) MLC_TEST_ERR((expr), MLC_INVALID_ARGUMENT, __VA_ARGS__)

/* ---- lookups and handles ------------------------------------------------------------ */

static void test_lookups(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 8);
  mlc_sch *s = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  mlc_sch_rv y, c, loops[8], blocks[8];
  int n = 0;
  CU_ASSERT(OK(mlc_sch_get_block(s, "Y", &y)));
  CU_ASSERT(OK(mlc_sch_get_block(s, "C", &c)));
  CU_ASSERT_EQUAL(mlc_sch_rv_kind_of(s, y), MLC_SCH_RV_BLOCK);
  CU_ASSERT_STRING_EQUAL(mlc_sch_rv_stmt(s, y)->block.name, "Y");
  CU_ASSERT(OK(mlc_sch_get_loops(s, y, 8, loops, &n)));
  CU_ASSERT_EQUAL(n, 3);
  CU_ASSERT_EQUAL(mlc_sch_rv_kind_of(s, loops[0]), MLC_SCH_RV_LOOP);
  CU_ASSERT_STRING_EQUAL(mlc_sch_rv_stmt(s, loops[0])->loop.var->name, "i");
  CU_ASSERT_STRING_EQUAL(mlc_sch_rv_stmt(s, loops[2])->loop.var->name, "k");
  CU_ASSERT(OK(mlc_sch_get_child_blocks(s, 0, 8, blocks, &n)));
  CU_ASSERT_EQUAL(n, 2);
  CU_ASSERT_PTR_EQUAL(mlc_sch_rv_stmt(s, blocks[0]), mlc_sch_rv_stmt(s, y));
  CU_ASSERT_PTR_EQUAL(mlc_sch_rv_stmt(s, blocks[1]), mlc_sch_rv_stmt(s, c));
  CU_ASSERT(OK(mlc_sch_get_child_blocks(s, loops[1], 8, blocks, &n)));
  CU_ASSERT_EQUAL(n, 1);
  CU_ASSERT(OK(mlc_sch_get_producers(s, c, 8, blocks, &n)));
  CU_ASSERT_EQUAL(n, 1);
  if (n == 1) CU_ASSERT_PTR_EQUAL(mlc_sch_rv_stmt(s, blocks[0]), mlc_sch_rv_stmt(s, y));
  CU_ASSERT(OK(mlc_sch_get_consumers(s, y, 8, blocks, &n)));
  CU_ASSERT_EQUAL(n, 1);
  if (n == 1) CU_ASSERT_PTR_EQUAL(mlc_sch_rv_stmt(s, blocks[0]), mlc_sch_rv_stmt(s, c));
  CU_ASSERT(OK(mlc_sch_get_producers(s, y, 8, blocks, &n)));
  CU_ASSERT_EQUAL(n, 0);
  CU_ASSERT(OK(mlc_sch_get_consumers(s, c, 8, blocks, &n)));
  CU_ASSERT_EQUAL(n, 0);

  /* refusals: each names what is wrong and sets the error class */
  mlc_sch_rv none = 0;
  ERR(mlc_sch_get_block(s, "Z", &none), "get_block", "no block named \"Z\" in mm_relu");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_NOT_FOUND);
  ERR(mlc_sch_get_loops(s, loops[0], 8, blocks, &n), "get_loops", "is not a block");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_HANDLE);
  ERR(mlc_sch_get_loops(s, 999, 8, blocks, &n), "unknown handle 999");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_HANDLE);
  MLC_TEST_ERR(mlc_sch_get_loops(s, y, 2, blocks, &n), MLC_OUT_OF_RANGE, "3 results, room for 2");
  /* the function is unchanged, and the original is untouched */
  char *a = mlc_th_print_func(f), *b = mlc_th_print_func(mlc_sch_func(s));
  CU_ASSERT_STRING_EQUAL(a, b);
  free(a);
  free(b);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

static void test_ambiguous(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 4);
  /* rename block C to Y: two blocks named Y */
  f->body->alloc.body->seq.stmts[1]->loop.body->loop.body->block.name = "Y";
  mlc_sch *s = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  mlc_sch_rv y;
  ERR(mlc_sch_get_block(s, "Y", &y), "2 blocks are named \"Y\"");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_AMBIGUOUS);
  CU_ASSERT_EQUAL(mlc_sch_trace_len(s), 0);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* ---- loop kinds ------------------------------------------------------------------- */

static void test_for_kind(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 16);
  mlc_sch *s = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  mlc_sch_rv y, c, ly[3], lc[2];
  int n;
  CU_ASSERT(OK(mlc_sch_get_block(s, "Y", &y)));
  CU_ASSERT(OK(mlc_sch_get_block(s, "C", &c)));
  CU_ASSERT(OK(mlc_sch_get_loops(s, y, 3, ly, &n)));
  CU_ASSERT(OK(mlc_sch_get_loops(s, c, 2, lc, &n)));
  /* what it accepts */
  CU_ASSERT(OK(mlc_sch_parallel(s, ly[0])));
  CU_ASSERT(OK(mlc_sch_unroll(s, ly[2])));
  CU_ASSERT(OK(mlc_sch_vectorize(s, lc[1])));
  CU_ASSERT(OK(mlc_sch_parallel(s, lc[0])));
  /* what it refuses */
  ERR(mlc_sch_parallel(s, ly[1]), "parallel: loop j is inside the parallel loop i");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_STRUCTURE);
  ERR(mlc_sch_vectorize(s, ly[2]), "vectorize: loop k is already unrolled");
  ERR(mlc_sch_parallel(s, ly[0]), "loop i is already parallel");
  ERR(mlc_sch_bind(s, ly[1], "threadIdx.w"), "bind: unknown thread axis \"threadIdx.w\"");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_ARGUMENT);
  CU_ASSERT(OK(mlc_sch_bind(s, ly[1], "threadIdx.x")));
  const char *want =
      "b0 = sch.get_block(name=\"Y\")\n"
      "b1 = sch.get_block(name=\"C\")\n"
      "l2, l3, l4 = sch.get_loops(block=b0)\n"
      "l5, l6 = sch.get_loops(block=b1)\n"
      "sch.parallel(loop=l2)\n"
      "sch.unroll(loop=l4)\n"
      "sch.vectorize(loop=l6)\n"
      "sch.parallel(loop=l5)\n"
      "sch.bind(loop=l3, thread_axis=\"threadIdx.x\")\n";
  char *t = mlc_th_print_trace(s);
  MLC_TH_EXPECT_STR(t, want);
  free(t);
  char *p = mlc_th_print_func(mlc_sch_func(s));
  CU_ASSERT_PTR_NOT_NULL(strstr(p, "for i in T.parallel(16):"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p, "for k in T.unroll(16):"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p, "for j in T.vectorized(16):"));
  free(p);
  /* numerically the same (bind is serial on CPUs) */
  mlc_th_sched_same(m, f, mlc_sch_func(s), "for_kind");
  mlc_sch_destroy(s);

  /* a reduction loop never runs in parallel or as a vector */
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT(OK(mlc_sch_get_block(s, "Y", &y)));
  CU_ASSERT(OK(mlc_sch_get_loops(s, y, 3, ly, &n)));
  ERR(mlc_sch_parallel(s, ly[2]), "parallel: loop k binds a reduce iteration variable of block \"Y\"");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_REDUCTION);
  ERR(mlc_sch_vectorize(s, ly[2]), "vectorize: loop k binds a reduce iteration variable");
  ERR(mlc_sch_bind(s, ly[2], "threadIdx.x"), "bind: loop k binds a reduce iteration variable");
  /* a parallel loop around another */
  CU_ASSERT(OK(mlc_sch_parallel(s, ly[1])));
  ERR(mlc_sch_parallel(s, ly[0]), "parallel: loop i has a parallel loop inside it");
  CU_ASSERT_EQUAL(mlc_sch_trace_len(s), 3); /* refusals are not recorded */
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* ---- the trace ---------------------------------------------------------------------- */

static void test_trace_replay(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 16);
  mlc_sch *s = NULL, *r = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  mlc_sch_rv c, lc[2];
  int n;
  CU_ASSERT(OK(mlc_sch_get_block(s, "C", &c)));
  CU_ASSERT(OK(mlc_sch_get_loops(s, c, 2, lc, &n)));
  CU_ASSERT(OK(mlc_sch_parallel(s, lc[0])));
  CU_ASSERT(OK(mlc_sch_vectorize(s, lc[1])));
  char *t = mlc_th_print_trace(s);
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 2, &r)));
  CU_ASSERT(OK(mlc_sch_apply_trace(r, t, strlen(t), "t.trace")));
  char *a = mlc_th_print_func(mlc_sch_func(s)), *b = mlc_th_print_func(mlc_sch_func(r)), *t2 = mlc_th_print_trace(r);
  CU_ASSERT_STRING_EQUAL(a, b);
  CU_ASSERT_STRING_EQUAL(t, t2);
  free(a);
  free(b);
  free(t2);
  free(t);
  mlc_sch_destroy(r);

  /* hand-written text: comments, blank lines, spacing, any handle names */
  const char *text = "# relu in parallel\n\n  blk = sch.get_block(name = \"C\")  # the relu\n"
                     "i, j = sch.get_loops(block=blk)\nsch.parallel(loop=i)\r\n";
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 2, &r)));
  CU_ASSERT(OK(mlc_sch_apply_trace(r, text, strlen(text), "hand.trace")));
  t = mlc_th_print_trace(r);
  MLC_TH_EXPECT_STR(t, "b0 = sch.get_block(name=\"C\")\nl1, l2 = sch.get_loops(block=b0)\nsch.parallel(loop=l1)\n");
  free(t);
  mlc_sch_destroy(r);
  mlc_sch_destroy(s);

  /* errors name the line */
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"b0 = sch.get_block(name=\"C\")\nsch.parallel(loop=l9)\n", "x.trace:2: undefined handle l9"},
      {"sch.frobnicate(loop=1)\n", "x.trace:1: unknown primitive frobnicate"},
      {"b0 = sch.get_block(name=\"C\"\n", "x.trace:1: expected ',' or ')'"},
      {"b0 = sch.get_block(name=\"C)\n", "x.trace:1: unterminated string"},
      {"b0 sch.get_block(name=\"C\")\n", "x.trace:1: expected '='"},
      {"b0 = sch.get_block(name=\"C\") extra\n", "unexpected text after the instruction"},
      {"b0 = sch.get_block(name=\"C\")\nl1 = sch.get_loops(block=b0)\n", "x.trace:2: get_loops gives 2 handles, the trace names 1"},
      {"b0 = sch.get_block(name=\"Q\")\n", "x.trace:1: get_block: no block named \"Q\""},
      {"b0 = sch.get_block(name=[[1]])\n", "lists do not nest"},
      {"b0 = sch.get_block(name=99999999999999999999999)\n", "bad number"},
      {"b0 = sch.get_block(nom=\"C\")\n", "get_block: missing argument name"},
      {"b0 = sch.get_block(name=3)\n", "get_block: name must be a string"},
      {"b0 = sch.get_block(name=\"C\")\nl1, l2 = sch.get_loops(block=b0)\nsch.parallel(loop=b0)\n",
       "x.trace:3: parallel: loop: handle 1 is not a loop"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 2, &r)));
    ERR(mlc_sch_apply_trace(r, bad[i].text, strlen(bad[i].text), "x.trace"), bad[i].msg);
    mlc_sch_destroy(r);
  }
  mlc_tir_module_destroy(m);
}

/* Arbitrary bytes as a trace: an error or success, never a crash. */
static void test_trace_garbage(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 4);
  const char *base = "b0 = sch.get_block(name=\"Y\")\nl1, l2, l3 = sch.get_loops(block=b0)\nsch.parallel(loop=l1)\n";
  size_t len = strlen(base);
  char *buf = malloc(len + 1);
  uint64_t rng = 7;
  for (int round = 0; round < 2000; round++) {
    memcpy(buf, base, len + 1);
    int edits = 1 + (int)(mlc_th_next(&rng) % 4);
    for (int e = 0; e < edits; e++) buf[mlc_th_next(&rng) % len] = (char)(mlc_th_next(&rng) & 0xff);
    mlc_sch *s = NULL;
    if (!OK(mlc_sch_create(m, f, 1, &s))) break;
    mlc_status st = mlc_sch_apply_trace(s, buf, len, "fuzz");
    mlc_status_free(st);
    mlc_sch_destroy(s);
  }
  free(buf);
  mlc_tir_module_destroy(m);
}

static void test_module_replace(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 4);
  CU_ASSERT_FATAL(OK(mlc_tir_module_add(m, f)));
  mlc_sch *s = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT(OK(mlc_tir_module_replace(m, f, mlc_sch_func(s))));
  CU_ASSERT_PTR_EQUAL(mlc_tir_module_find(m, "mm_relu"), mlc_sch_func(s));
  MLC_TEST_ERR(mlc_tir_module_replace(m, f, mlc_sch_func(s)), MLC_NOT_FOUND, "no prim func \"mm_relu\" to replace");
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* The numerical check sees a changed result. */
static void test_check_can_fail(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 8);
  mlc_sch *s = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  mlc_tir_func *g = mlc_sch_func(s); /* a copy of f */
  /* g: C = max(Y, 0.5) instead of max(Y, 0) */
  mlc_tir_stmt *cb = g->body->alloc.body->seq.stmts[1]->loop.body->loop.body;
  cb->block.body->store.value->bin.b = mlc_tir_float(m, MLC_DTYPE_F32, 0.5);
  CU_ASSERT(mlc_th_sched_diff(m, f, g, "check_can_fail") > 0);
  CU_ASSERT_EQUAL(mlc_th_sched_diff(m, f, f, "check_same"), 0);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* A loop's "pragma_unroll_explicit" annotation survives lowering and asks
** LLVM to unroll the loop that many times. */
static void test_unroll_pragma(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 16);
  mlc_sch *s = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  mlc_sch_rv c, lc[2];
  int n;
  CU_ASSERT(OK(mlc_sch_get_block(s, "C", &c)));
  CU_ASSERT(OK(mlc_sch_get_loops(s, c, 2, lc, &n)));
  CU_ASSERT(OK(mlc_sch_annotate(s, lc[1], "pragma_unroll_explicit", MLC_SCH_INT_ARG(4))));
  CU_ASSERT(OK(mlc_tir_module_add(m, mlc_sch_func(s))));
  CU_ASSERT(OK(mlc_tir_lower_module(m, NULL)));
  char *low = mlc_th_print_func(mlc_sch_func(s));
  CU_ASSERT_PTR_NOT_NULL(strstr(low, "T.serial(16, annotations={\"pragma_unroll_explicit\": 4})"));
  free(low);
  mlc_target *t = NULL;
  char *ir = NULL;
  if (OK(mlc_target_host(&t)) && OK(mlc_cg_emit_llvm_ir(m, t, 0, &ir))) {
    CU_ASSERT_PTR_NOT_NULL(strstr(ir, "!\"llvm.loop.unroll.count\", i32 4}"));
    mlc_cg_free(ir);
  }
  mlc_target_destroy(t);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"lookups", test_lookups},
                                      {"ambiguous", test_ambiguous},
                                      {"for_kind", test_for_kind},
                                      {"trace_replay", test_trace_replay},
                                      {"trace_garbage", test_trace_garbage},
                                      {"module_replace", test_module_replace},
                                      {"check_can_fail", test_check_can_fail},
                                      {"unroll_pragma", test_unroll_pragma},
                                      {NULL, NULL}};
  CU_pSuite suite = CU_add_suite("schedule", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (int i = 0; suite && tests[i].pName; i++) CU_add_test(suite, tests[i].pName, tests[i].pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_schedule", fns);
}
