/*
** test_sched_tensorize.c: blockize, the tensor intrinsics and tensorize:
** printed results, numerical checks against the unscheduled function,
** every refusal with its error class and message, and trace replay.
**
** The functions are mm_relu variants built with the TIR builders with
** their loop nest already split and ordered (Y[i, j] += A[i, k] * B[k, j]
** with bindings such as vj = j0 * 16 + j1), then C = relu(Y).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/schedule/intrin.h"
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
  char *s = strdup(mlc_sb_str(&b));
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

/* ---- the test functions ---------------------------------------------------------- */

/* A loop of the nest: its name and extent. */
typedef struct nest_loop {
  const char *name;
  int64_t ext;
} nest_loop;

/* One term of a binding: ((loop // div) % mod) * coef (div, mod 0: none);
** loop -1 ends the list. */
typedef struct bterm {
  int loop;
  int64_t coef, div, mod;
} bterm;

/* How the matmul block Y is written. */
typedef struct mm_spec {
  int64_t n;             /* A, B, C: n x n */
  mlc_dtype dtype;       /* of every buffer */
  mlc_tir_binop op;      /* Y = Y op A * B */
  int trans_b;           /* B[j, k] instead of B[k, j] */
  int predicate;         /* the block runs only where every binding < n */
  int nloops;
  nest_loop loops[8];    /* outermost first */
  bterm bind[3][4];      /* vi, vj, vk */
} mm_spec;

static mlc_tir_expr *binding(mlc_tir_module *m, mlc_tir_var **lv, const bterm *t) {
  mlc_tir_expr *r = NULL;
  for (int i = 0; i < 4 && t[i].loop >= 0; i++) {
    mlc_tir_expr *x = mlc_tir_ref(m, lv[t[i].loop]);
    if (t[i].div) x = mlc_tir_binary(m, MLC_TIR_FLOORDIV, x, mlc_tir_i64(m, t[i].div));
    if (t[i].mod) x = mlc_tir_binary(m, MLC_TIR_FLOORMOD, x, mlc_tir_i64(m, t[i].mod));
    x = mlc_tir_mul(m, x, mlc_tir_i64(m, t[i].coef));
    r = r ? mlc_tir_add(m, r, x) : x;
  }
  return r ? r : mlc_tir_i64(m, 0);
}

static mlc_tir_func *mm_nest(mlc_tir_module *m, const mm_spec *sp) {
  int64_t n = sp->n;
  const int64_t dims[2] = {n, n};
  const mlc_dtype dt = sp->dtype, i64 = MLC_DTYPE_I64;
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", dt, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", dt, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *C = mlc_tir_buffer_new_c(m, "C", dt, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *Y = mlc_tir_buffer_new_c(m, "Y", dt, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *lv[8];
  for (int l = 0; l < sp->nloops; l++) lv[l] = mlc_tir_var_new(m, sp->loops[l].name, i64);
  static const char *const names[3] = {"vi", "vj", "vk"};
  mlc_tir_var *v[3];
  mlc_tir_iter_var its[3];
  mlc_tir_expr *pred = NULL;
  for (int k = 0; k < 3; k++) {
    v[k] = mlc_tir_var_new(m, names[k], i64);
    its[k] = (mlc_tir_iter_var){v[k], k == 2 ? MLC_TIR_ITER_REDUCE : MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0),
                                mlc_tir_i64(m, n), binding(m, lv, sp->bind[k])};
    if (sp->predicate) {
      mlc_tir_expr *c = mlc_tir_binary(m, MLC_TIR_LT, binding(m, lv, sp->bind[k]), mlc_tir_i64(m, n));
      pred = pred ? mlc_tir_binary(m, MLC_TIR_AND, pred, c) : c;
    }
  }
  mlc_tir_expr *yij[2] = {mlc_tir_ref(m, v[0]), mlc_tir_ref(m, v[1])};
  mlc_tir_expr *aik[2] = {mlc_tir_ref(m, v[0]), mlc_tir_ref(m, v[2])};
  mlc_tir_expr *bkj[2] = {mlc_tir_ref(m, v[sp->trans_b ? 1 : 2]), mlc_tir_ref(m, v[sp->trans_b ? 2 : 1])};
  mlc_tir_stmt *init = mlc_tir_store(m, Y, 2, yij, mlc_tir_float(m, dt, 0));
  mlc_tir_expr *prod = mlc_tir_mul(m, mlc_tir_load(m, A, 2, aik), mlc_tir_load(m, B, 2, bkj));
  mlc_tir_stmt *upd = mlc_tir_store(m, Y, 2, yij, mlc_tir_binary(m, sp->op, mlc_tir_load(m, Y, 2, yij), prod));
  mlc_tir_stmt *s1 = mlc_tir_block(m, "Y", 3, its, init, upd);
  if (pred) mlc_tir_block_set_predicate(s1, pred);
  for (int l = sp->nloops; l-- > 0;)
    s1 = mlc_tir_for(m, lv[l], mlc_tir_i64(m, 0), mlc_tir_i64(m, sp->loops[l].ext), MLC_TIR_FOR_SERIAL, NULL, s1);
  mlc_tir_var *i2 = mlc_tir_var_new(m, "i", i64), *j2 = mlc_tir_var_new(m, "j", i64);
  mlc_tir_var *vi2 = mlc_tir_var_new(m, "vi", i64), *vj2 = mlc_tir_var_new(m, "vj", i64);
  mlc_tir_iter_var its2[2] = {
      {vi2, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), mlc_tir_i64(m, n), mlc_tir_ref(m, i2)},
      {vj2, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), mlc_tir_i64(m, n), mlc_tir_ref(m, j2)}};
  mlc_tir_expr *cij[2] = {mlc_tir_ref(m, vi2), mlc_tir_ref(m, vj2)};
  mlc_tir_stmt *st = mlc_tir_store(m, C, 2, cij, mlc_tir_max(m, mlc_tir_load(m, Y, 2, cij), mlc_tir_float(m, dt, 0)));
  mlc_tir_stmt *s2 = mlc_tir_block(m, "C", 2, its2, NULL, st);
  s2 = mlc_tir_for(m, j2, mlc_tir_i64(m, 0), mlc_tir_i64(m, n), MLC_TIR_FOR_SERIAL, NULL, s2);
  s2 = mlc_tir_for(m, i2, mlc_tir_i64(m, 0), mlc_tir_i64(m, n), MLC_TIR_FOR_SERIAL, NULL, s2);
  mlc_tir_stmt *body = mlc_tir_allocate(m, Y, mlc_tir_seq2(m, s1, s2));
  mlc_tir_buffer *params[3] = {A, B, C};
  mlc_tir_func *f = mlc_tir_func_new(m, "mm_relu", 3, params, body);
  if (!f || mlc_tir_func_set_attr_str(m, f, "global_symbol", "mm_relu") ||
      mlc_tir_func_set_attr_bool(m, f, "tir.noalias", 1))
    return NULL;
  CU_ASSERT(OK(mlc_tir_verify_func(f)));
  return f;
}

#define END {-1, 0, 0, 0}
#define T1(l, c) {l, c, 0, 0}

/* for i, j0, k, j1 in T.grid(n, n/16, n, 16): vj = j0 * 16 + j1 */
static mm_spec spec_ij0kj1(int64_t n, int64_t t) {
  mm_spec sp = {n, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 0, 4,
                {{"i", n}, {"j0", n / t}, {"k", n}, {"j1", t}},
                {{T1(0, 1), END}, {T1(1, t), T1(3, 1), END}, {T1(2, 1), END}}};
  return sp;
}

static mlc_sch *open_sched(mlc_tir_module *m, const mlc_tir_func *f, mlc_sch_rv *y, mlc_sch_rv *loops, int *n) {
  mlc_sch *s = NULL;
  if (!OK(mlc_sch_create(m, f, 1, &s))) return NULL;
  CU_ASSERT(OK(mlc_sch_get_block(s, "Y", y)));
  CU_ASSERT(OK(mlc_sch_get_loops(s, *y, 8, loops, n)));
  return s;
}

/* Replays the trace of |s| on a fresh schedule of |f|: the same function and trace. */
static void check_replay(mlc_tir_module *m, const mlc_tir_func *f, const mlc_sch *s) {
  char *t = print_trace(s);
  mlc_sch *r = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 2, &r)));
  CU_ASSERT(OK(mlc_sch_apply_trace(r, t, strlen(t), "replay.trace")));
  char *a = print_func(mlc_sch_func(s)), *b = print_func(mlc_sch_func(r)), *t2 = print_trace(r);
  EXPECT_STR(b, a);
  EXPECT_STR(t2, t);
  free(a);
  free(b);
  free(t2);
  free(t);
  mlc_sch_destroy(r);
}

static void dump(const char *what, const mlc_sch *s) {
  if (!getenv("MLC_TEST_DUMP")) return;
  char *p = print_func(mlc_sch_func(s)), *t = print_trace(s);
  printf("\n==== %s\n%s---- trace\n%s", what, p, t);
  free(p);
  free(t);
}

/* ---- blockize ------------------------------------------------------------------- */

/* A reduce loop outside the subtree: the init moves to the outer block. */
static void test_blockize_outer_reduce(void) {
  mlc_tir_module *m = new_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mm_spec sp = spec_ij0kj1(32, 16);
  mlc_tir_func *f = mm_nest(m, &sp);
  mlc_sch_rv y, l[8], bo;
  int n;
  mlc_sch *s = open_sched(m, f, &y, l, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(OK(mlc_sch_blockize(s, l[3], &bo)));
  dump("blockize_outer_reduce", s);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "blockize_outer_reduce");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* Every reduce loop inside the subtree: the inner block keeps the init. */
static void test_blockize_inner_reduce(void) {
  mlc_tir_module *m = new_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mm_spec sp = {16, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 0, 4,
                {{"i", 16}, {"j0", 4}, {"j1", 4}, {"k", 16}},
                {{T1(0, 1), END}, {T1(1, 4), T1(2, 1), END}, {T1(3, 1), END}}};
  mlc_tir_func *f = mm_nest(m, &sp);
  mlc_sch_rv y, l[8], bo;
  int n;
  mlc_sch *s = open_sched(m, f, &y, l, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(OK(mlc_sch_blockize(s, l[2], &bo)));
  dump("blockize_inner_reduce", s);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "blockize_inner_reduce");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* A split reduce loop: vk = k0 * 4 + k1 with k1 inside. */
static void test_blockize_split_reduce(void) {
  mlc_tir_module *m = new_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mm_spec sp = {16, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 0, 5,
                {{"i", 16}, {"j0", 2}, {"k0", 4}, {"k1", 4}, {"j1", 8}},
                {{T1(0, 1), END}, {T1(1, 8), T1(4, 1), END}, {T1(2, 4), T1(3, 1), END}}};
  mlc_tir_func *f = mm_nest(m, &sp);
  mlc_sch_rv y, l[8], bo;
  int n;
  mlc_sch *s = open_sched(m, f, &y, l, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(OK(mlc_sch_blockize(s, l[3], &bo)));
  dump("blockize_split_reduce", s);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "blockize_split_reduce");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* ---- tensorize ------------------------------------------------------------------ */

static void test_tensorize_fma(void) {
  mlc_tir_module *m = new_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mm_spec sp = spec_ij0kj1(32, 16);
  mlc_tir_func *f = mm_nest(m, &sp);
  mlc_sch_rv y, l[8], bo;
  int n;
  mlc_sch *s = open_sched(m, f, &y, l, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(OK(mlc_sch_blockize(s, l[3], &bo)));
  CU_ASSERT(OK(mlc_sch_tensorize(s, bo, "avx512_fma_f32x16")));
  dump("tensorize_fma", s);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "tensorize_fma");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  /* on the loop: blockized first */
  s = open_sched(m, f, &y, l, &n);
  CU_ASSERT(OK(mlc_sch_tensorize(s, l[3], "avx512_fma_f32x16")));
  dump("tensorize_fma_loop", s);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "tensorize_fma_loop");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

static void test_tensorize_tile(void) {
  mlc_tir_module *m = new_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mm_spec sp = {48, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 0, 5,
                {{"i0", 8}, {"j0", 3}, {"k", 48}, {"i1", 6}, {"j1", 16}},
                {{T1(0, 6), T1(3, 1), END}, {T1(1, 16), T1(4, 1), END}, {T1(2, 1), END}}};
  mlc_tir_func *f = mm_nest(m, &sp);
  mlc_sch_rv y, l[8];
  int n;
  mlc_sch *s = open_sched(m, f, &y, l, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(OK(mlc_sch_tensorize(s, l[3], "avx512_fma_f32_6x16")));
  dump("tensorize_tile", s);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "tensorize_tile");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"blockize_outer_reduce", test_blockize_outer_reduce},
                                      {"blockize_inner_reduce", test_blockize_inner_reduce},
                                      {"blockize_split_reduce", test_blockize_split_reduce},
                                      {"tensorize_fma", test_tensorize_fma},
                                      {"tensorize_tile", test_tensorize_tile},
                                      {NULL, NULL}};
  CU_pSuite suite = CU_add_suite("sched_tensorize", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (int i = 0; suite && tests[i].pName; i++) CU_add_test(suite, tests[i].pName, tests[i].pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_sched_tensorize", fns);
}
