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

#include "lower/arith.h"
#include "lower/tir_lower.h"
#include "lower/schedule/intrin.h"
#include "lower/schedule/schedule.h"
#include "tests/harness_kernel.h"
#include "tests/harness_sched.h"
#include "tests/testutil.h"

#define OK(expr) MLC_TEST_OK(expr)
#define ERR(expr, ...) MLC_TEST_ERR((expr), MLC_INVALID_ARGUMENT, __VA_ARGS__)

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
  char *t = mlc_th_print_trace(s);
  mlc_sch *r = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 2, &r)));
  CU_ASSERT(OK(mlc_sch_apply_trace(r, t, strlen(t), "replay.trace")));
  char *a = mlc_th_print_func(mlc_sch_func(s)), *b = mlc_th_print_func(mlc_sch_func(r)), *t2 = mlc_th_print_trace(r);
  MLC_TH_EXPECT_STR(b, a);
  MLC_TH_EXPECT_STR(t2, t);
  free(a);
  free(b);
  free(t2);
  free(t);
  mlc_sch_destroy(r);
}


/* Compares the printed function of |s| with mm_relu over n x n whose Y nest is |ynest|. */
static void expect_func(const mlc_sch *s, int64_t n, const char *ynest) {
  char head[512], tail[512];
  snprintf(head, sizeof head,
           "@T.prim_func\n"
           "def mm_relu(A: T.Buffer((%lld, %lld), \"float32\"), B: T.Buffer((%lld, %lld), \"float32\"), "
           "C: T.Buffer((%lld, %lld), \"float32\")):\n"
           "    T.func_attr({\"global_symbol\": \"mm_relu\", \"tir.noalias\": True})\n"
           "    Y = T.alloc_buffer((%lld, %lld), \"float32\")\n",
           (long long)n, (long long)n, (long long)n, (long long)n, (long long)n, (long long)n, (long long)n,
           (long long)n);
  snprintf(tail, sizeof tail,
           "    for i, j in T.grid(%lld, %lld):\n"
           "        with T.block(\"C\"):\n"
           "            vi = T.axis.spatial(%lld, i)\n"
           "            vj = T.axis.spatial(%lld, j)\n"
           "            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))\n",
           (long long)n, (long long)n, (long long)n, (long long)n);
  size_t len = strlen(head) + strlen(ynest) + strlen(tail) + 1;
  char *want = malloc(len);
  snprintf(want, len, "%s%s%s", head, ynest, tail);
  char *got = mlc_th_print_func(mlc_sch_func(s));
  MLC_TH_EXPECT_STR(got, want);
  free(got);
  free(want);
}

/* With MLC_TEST_GOLDEN_DIR set, writes the case as golden files DIR/NAME.tir,
** .trace and .expected (how tests/schedule/{blockize,tensorize}_* were made). */
static void write_golden(const char *name, const mlc_tir_func *f, const mlc_sch *s) {
  const char *dir = getenv("MLC_TEST_GOLDEN_DIR");
  if (!dir) return;
  char *text[3] = {mlc_th_print_func(f), mlc_th_print_trace(s), mlc_th_print_func(mlc_sch_func(s))};
  static const char *const ext[3] = {"tir", "trace", "expected"};
  for (int i = 0; i < 3; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext[i]);
    FILE *fp = fopen(path, "w");
    if (fp) {
      fputs(text[i], fp);
      fclose(fp);
    }
    free(text[i]);
  }
}

/* The same for a refused case: DIR/NAME.tir only (its .trace and .error are
** written by hand). */
static void write_golden_tir(const char *name, const mlc_tir_func *f) {
  const char *dir = getenv("MLC_TEST_GOLDEN_DIR");
  if (!dir) return;
  char path[1024], *text = mlc_th_print_func(f);
  snprintf(path, sizeof path, "%s/%s.tir", dir, name);
  FILE *fp = fopen(path, "w");
  if (fp) {
    fputs(text, fp);
    fclose(fp);
  }
  free(text);
}

static void dump(const char *what, const mlc_sch *s) {
  if (!getenv("MLC_TEST_DUMP")) return;
  char *p = mlc_th_print_func(mlc_sch_func(s)), *t = mlc_th_print_trace(s);
  printf("\n==== %s\n%s---- trace\n%s", what, p, t);
  free(p);
  free(t);
}

/* ---- blockize ------------------------------------------------------------------- */

/* A reduce loop outside the subtree: the init moves to the outer block. */
static void test_blockize_outer_reduce(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mm_spec sp = spec_ij0kj1(32, 16);
  mlc_tir_func *f = mm_nest(m, &sp);
  mlc_sch_rv y, l[8], bo;
  int n;
  mlc_sch *s = open_sched(m, f, &y, l, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(OK(mlc_sch_blockize(s, l[3], &bo)));
  dump("blockize_outer_reduce", s);
  write_golden("blockize_outer_reduce", f, s);
  expect_func(s, 32,
      "    for i, j0, k in T.grid(32, 2, 32):\n"
      "        with T.block(\"Y_o\"):\n"
      "            vi_o = T.axis.spatial(32, i)\n"
      "            vj_o = T.axis.spatial(2, j0)\n"
      "            vk_o = T.axis.reduce(32, k)\n"
      "            with T.init():\n"
      "                for j1_init in range(16):\n"
      "                    with T.block(\"Y_init\"):\n"
      "                        vj_i_init = T.axis.spatial(16, j1_init)\n"
      "                        Y[vi_o, vj_o * 16 + vj_i_init] = T.float32(0)\n"
      "            for j1 in range(16):\n"
      "                with T.block(\"Y\"):\n"
      "                    vj_i = T.axis.spatial(16, j1)\n"
      "                    Y[vi_o, vj_o * 16 + vj_i] = Y[vi_o, vj_o * 16 + vj_i] + A[vi_o, vk_o] * B[vk_o, vj_o * 16 + vj_i]\n");
  CU_ASSERT_EQUAL(mlc_sch_rv_kind_of(s, bo), MLC_SCH_RV_BLOCK);
  CU_ASSERT_STRING_EQUAL(mlc_sch_rv_stmt(s, bo)->block.name, "Y_o");
  /* the block and the loops keep their handles */
  CU_ASSERT_STRING_EQUAL(mlc_sch_rv_stmt(s, y)->block.name, "Y");
  CU_ASSERT_EQUAL(mlc_sch_rv_stmt(s, y)->block.niters, 1);
  CU_ASSERT_PTR_EQUAL(mlc_sch_rv_stmt(s, l[3])->loop.body, mlc_sch_rv_stmt(s, y));
  CU_ASSERT_PTR_EQUAL(mlc_sch_rv_stmt(s, bo)->block.body, mlc_sch_rv_stmt(s, l[3]));
  mlc_th_sched_same(m, f, mlc_sch_func(s), "blockize_outer_reduce");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* Every reduce loop inside the subtree: the inner block keeps the init. */
static void test_blockize_inner_reduce(void) {
  mlc_tir_module *m = mlc_th_tir_module();
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
  write_golden("blockize_inner_reduce", f, s);
  expect_func(s, 16,
      "    for i, j0 in T.grid(16, 4):\n"
      "        with T.block(\"Y_o\"):\n"
      "            vi_o = T.axis.spatial(16, i)\n"
      "            vj_o = T.axis.spatial(4, j0)\n"
      "            for j1, k in T.grid(4, 16):\n"
      "                with T.block(\"Y\"):\n"
      "                    vj_i = T.axis.spatial(4, j1)\n"
      "                    vk_i = T.axis.reduce(16, k)\n"
      "                    with T.init():\n"
      "                        Y[vi_o, vj_o * 4 + vj_i] = T.float32(0)\n"
      "                    Y[vi_o, vj_o * 4 + vj_i] = Y[vi_o, vj_o * 4 + vj_i] + A[vi_o, vk_i] * B[vk_i, vj_o * 4 + vj_i]\n");
  mlc_th_sched_same(m, f, mlc_sch_func(s), "blockize_inner_reduce");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* A split reduce loop: vk = k0 * 4 + k1 with k1 inside. */
static void test_blockize_split_reduce(void) {
  mlc_tir_module *m = mlc_th_tir_module();
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
  write_golden("blockize_split_reduce", f, s);
  expect_func(s, 16,
      "    for i, j0, k0 in T.grid(16, 2, 4):\n"
      "        with T.block(\"Y_o\"):\n"
      "            vi_o = T.axis.spatial(16, i)\n"
      "            vj_o = T.axis.spatial(2, j0)\n"
      "            vk_o = T.axis.reduce(4, k0)\n"
      "            with T.init():\n"
      "                for j1_init in range(8):\n"
      "                    with T.block(\"Y_init\"):\n"
      "                        vj_i_init = T.axis.spatial(8, j1_init)\n"
      "                        Y[vi_o, vj_o * 8 + vj_i_init] = T.float32(0)\n"
      "            for k1, j1 in T.grid(4, 8):\n"
      "                with T.block(\"Y\"):\n"
      "                    vj_i = T.axis.spatial(8, j1)\n"
      "                    vk_i = T.axis.reduce(4, k1)\n"
      "                    Y[vi_o, vj_o * 8 + vj_i] = Y[vi_o, vj_o * 8 + vj_i] + A[vi_o, vk_o * 4 + vk_i] * B[vk_o * 4 + vk_i, vj_o * 8 + vj_i]\n");
  mlc_th_sched_same(m, f, mlc_sch_func(s), "blockize_split_reduce");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}


/* A fused loop inside the subtree: the iterator map divides f // 16 and f % 16. */
static void test_blockize_fused(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mm_spec sp = {16, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 0, 3,
                {{"i0", 2}, {"f", 128}, {"k", 16}},
                {{T1(0, 8), {1, 1, 16, 0}, END}, {{1, 1, 0, 16}, END}, {T1(2, 1), END}}};
  mlc_tir_func *f = mm_nest(m, &sp);
  mlc_sch_rv y, l[8], bo;
  int n;
  mlc_sch *s = open_sched(m, f, &y, l, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(OK(mlc_sch_blockize(s, l[1], &bo)));
  dump("blockize_fused", s);
  write_golden("blockize_fused", f, s);
  expect_func(s, 16,
      "    for i0 in range(2):\n"
      "        with T.block(\"Y_o\"):\n"
      "            vi_o = T.axis.spatial(2, i0)\n"
      "            for f, k in T.grid(128, 16):\n"
      "                with T.block(\"Y\"):\n"
      "                    vi_i = T.axis.spatial(8, f // 16)\n"
      "                    vj_i = T.axis.spatial(16, f % 16)\n"
      "                    vk_i = T.axis.reduce(16, k)\n"
      "                    with T.init():\n"
      "                        Y[vi_o * 8 + vi_i, vj_i] = T.float32(0)\n"
      "                    Y[vi_o * 8 + vi_i, vj_i] = Y[vi_o * 8 + vi_i, vj_i] + A[vi_o * 8 + vi_i, vk_i] * B[vk_i, vj_i]\n");
  mlc_th_sched_same(m, f, mlc_sch_func(s), "blockize_fused");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* Regions computed before blockize are kept current: the outer block gets its own. */
static void test_blockize_regions(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mm_spec sp = spec_ij0kj1(32, 16);
  mlc_tir_func *f = mm_nest(m, &sp);
  CU_ASSERT_FATAL(OK(mlc_tir_func_compute_regions(m, f)));
  mlc_sch_rv y, l[8], bo;
  int n;
  mlc_sch *s = open_sched(m, f, &y, l, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(OK(mlc_sch_blockize(s, l[3], &bo)));
  dump("blockize_regions", s);
  write_golden("blockize_regions", f, s);
  char *p = mlc_th_print_func(mlc_sch_func(s));
  CU_ASSERT_PTR_NOT_NULL(strstr(p,
      "    for i, j0, k in T.grid(32, 2, 32):\n"
      "        with T.block(\"Y_o\"):\n"
      "            vi_o = T.axis.spatial(32, i)\n"
      "            vj_o = T.axis.spatial(2, j0)\n"
      "            vk_o = T.axis.reduce(32, k)\n"
      "            T.reads(A[vi_o, vk_o], B[vk_o, vj_o * 16:vj_o * 16 + 16])\n"
      "            T.writes(Y[vi_o, vj_o * 16:vj_o * 16 + 16])\n"
      "            with T.init():\n"
      "                for j1_init in range(16):\n"
      "                    with T.block(\"Y_init\"):\n"
      "                        vj_i_init = T.axis.spatial(16, j1_init)\n"
      "                        T.reads()\n"
      "                        T.writes(Y[vi_o, vj_o * 16 + vj_i_init])\n"
      "                        Y[vi_o, vj_o * 16 + vj_i_init] = T.float32(0)\n"
      "            for j1 in range(16):\n"
      "                with T.block(\"Y\"):\n"
      "                    vj_i = T.axis.spatial(16, j1)\n"
      "                    T.reads(Y[vi_o, vj_o * 16 + vj_i], A[vi_o, vk_o], B[vk_o, vj_o * 16 + vj_i])\n"
      "                    T.writes(Y[vi_o, vj_o * 16 + vj_i])\n"
      "                    Y[vi_o, vj_o * 16 + vj_i] = Y[vi_o, vj_o * 16 + vj_i] + A[vi_o, vk_o] * B[vk_o, vj_o * 16 + vj_i]\n"));
  free(p);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "blockize_regions");
  CU_ASSERT(OK(mlc_sch_tensorize(s, bo, "avx512_fma_f32x16")));
  dump("tensorize_regions", s);
  write_golden("tensorize_regions", f, s);
  p = mlc_th_print_func(mlc_sch_func(s));
  CU_ASSERT_PTR_NOT_NULL(strstr(p,
      "            T.reads(A[vi_o, vk_o], B[vk_o, vj_o * 16:vj_o * 16 + 16])\n"
      "            T.writes(Y[vi_o, vj_o * 16:vj_o * 16 + 16])\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p, "            for j in T.vectorized(16):\n"));
  free(p);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "tensorize_regions");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* Blockize twice: the outer block of the first becomes the inner block of the second. */
static void test_blockize_nested(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mm_spec sp = spec_ij0kj1(32, 16);
  mlc_tir_func *f = mm_nest(m, &sp);
  mlc_sch_rv y, l[8], b1, b2;
  int n;
  mlc_sch *s = open_sched(m, f, &y, l, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(OK(mlc_sch_blockize(s, l[3], &b1)));
  CU_ASSERT(OK(mlc_sch_blockize(s, l[1], &b2)));
  dump("blockize_nested", s);
  write_golden("blockize_nested", f, s);
  char *p = mlc_th_print_func(mlc_sch_func(s));
  CU_ASSERT_PTR_NOT_NULL(strstr(p, "        with T.block(\"Y_o_o\"):\n"
                                   "            vi_o_o = T.axis.spatial(32, i)\n"
                                   "            for j0, k in T.grid(2, 32):\n"
                                   "                with T.block(\"Y_o\"):\n"
                                   "                    vj_o_i = T.axis.spatial(2, j0)\n"
                                   "                    vk_o_i = T.axis.reduce(32, k)\n"));
  free(p);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "blockize_nested");
  check_replay(m, f, s);
  /* and the inner one still tensorizes */
  CU_ASSERT(OK(mlc_sch_tensorize(s, b1, "avx512_fma_f32x16")));
  mlc_th_sched_same(m, f, mlc_sch_func(s), "blockize_nested_tensorize");
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* Applies |fn| to a fresh schedule of |sp|'s function after get_block / get_loops. */
static mlc_sch *fresh(mlc_tir_module *m, const mm_spec *sp, mlc_tir_func **f, mlc_sch_rv *y, mlc_sch_rv *l) {
  int n;
  *f = mm_nest(m, sp);
  CU_ASSERT_PTR_NOT_NULL_FATAL(*f);
  return open_sched(m, *f, y, l, &n);
}

/* A refused primitive leaves the function as it was and is not recorded. */
static void check_unchanged(const mlc_tir_func *f, const mlc_sch *s, int trace_len) {
  char *a = mlc_th_print_func(f), *b = mlc_th_print_func(mlc_sch_func(s));
  MLC_TH_EXPECT_STR(b, a);
  free(a);
  free(b);
  CU_ASSERT_EQUAL(mlc_sch_trace_len(s), trace_len);
}

static void test_blockize_refusals(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f;
  mlc_sch_rv y, l[8], bo = 0;
  mlc_sch *s;

  /* not a loop */
  mm_spec sp = spec_ij0kj1(32, 16);
  s = fresh(m, &sp, &f, &y, l);
  ERR(mlc_sch_blockize(s, y, &bo), "blockize: target: handle 1 is not a loop");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_HANDLE);
  /* an inner loop that reads the loop variable at coefficient 16: j1 outside, j0 inside */
  mlc_sch_destroy(s);
  mm_spec sp2 = {32, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 0, 4,
                 {{"i", 32}, {"j1", 16}, {"k", 32}, {"j0", 2}},
                 {{T1(0, 1), END}, {T1(3, 16), T1(1, 1), END}, {T1(2, 1), END}}};
  s = fresh(m, &sp2, &f, &y, l);
  write_golden_tir("blockize_not_divisible", f);
  ERR(mlc_sch_blockize(s, l[3], &bo),
      "blockize: the binding of vj in block \"Y\" (j0 * 16 + j1) is not divisible at the subtree: loop j0 has "
      "coefficient 16 where 1 is needed");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_NOT_AFFINE);
  check_unchanged(f, s, 2);
  /* an outer term that is not a multiple of the inner extent */
  mlc_sch_destroy(s);
  mm_spec sp3 = {32, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 0, 5,
                 {{"i", 32}, {"j0", 2}, {"j1", 2}, {"k", 32}, {"j2", 8}},
                 {{T1(0, 1), END}, {T1(1, 16), T1(2, 4), T1(4, 1), END}, {T1(3, 1), END}}};
  s = fresh(m, &sp3, &f, &y, l);
  ERR(mlc_sch_blockize(s, l[4], &bo),
      "blockize: the binding of vj in block \"Y\" (j0 * 16 + j1 * 4 + j2) is not divisible at the subtree: the outer "
      "term j1 * 4 is not a multiple of the inner extent 8");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_NOT_AFFINE);
  /* a loop used by two bindings */
  mlc_sch_destroy(s);
  mm_spec sp4 = {16, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 0, 2,
                 {{"i", 16}, {"k", 16}},
                 {{T1(0, 1), END}, {T1(0, 1), END}, {T1(1, 1), END}}};
  s = fresh(m, &sp4, &f, &y, l);
  ERR(mlc_sch_blockize(s, l[0], &bo), "blockize: loop i is used by the bindings of both vi and vj in block \"Y\"");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_NOT_AFFINE);
  /* a loop that binds nothing: the block would run twice per instance */
  mlc_sch_destroy(s);
  mm_spec sp5 = {16, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 0, 4,
                 {{"i", 16}, {"j", 16}, {"k", 16}, {"r", 2}},
                 {{T1(0, 1), END}, {T1(1, 1), END}, {T1(2, 1), END}}};
  s = fresh(m, &sp5, &f, &y, l);
  write_golden_tir("blockize_binds_nothing", f);
  ERR(mlc_sch_blockize(s, l[3], &bo),
      "blockize: loop r binds no iteration variable of block \"Y\": the block would run 2 times for one instance");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_NOT_AFFINE);
  /* a fused loop read through // and % whose map is not bijective (it covers
  ** 48 values of a domain of 40, under a predicate): the linear reading
  ** cannot divide inside f // 16 */
  mlc_sch_destroy(s);
  mm_spec sp6 = {40, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 1, 3,
                 {{"i", 40}, {"f", 48}, {"k", 40}},
                 {{T1(0, 1), END}, {{1, 16, 16, 0}, {1, 1, 0, 16}, END}, {T1(2, 1), END}}};
  s = fresh(m, &sp6, &f, &y, l);
  ERR(mlc_sch_blockize(s, l[1], &bo),
      "blockize: the binding of vj in block \"Y\" (f // 16 * 16 + f % 16) uses loop f inside f // 16: it cannot be "
      "divided at the subtree");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_NOT_AFFINE);
  /* a domain that the inner extent does not divide (a split with a predicate) */
  mlc_sch_destroy(s);
  mm_spec sp7 = {40, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 1, 4,
                 {{"i", 40}, {"j0", 3}, {"k", 40}, {"j1", 16}},
                 {{T1(0, 1), END}, {T1(1, 16), T1(3, 1), END}, {T1(2, 1), END}}};
  s = fresh(m, &sp7, &f, &y, l);
  ERR(mlc_sch_blockize(s, l[3], &bo), "blockize: vj in block \"Y\" has extent 40, not a multiple of its inner extent 16");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_NOT_AFFINE);
  /* ... and with a divisible one, the init cannot leave a block with a predicate */
  mlc_sch_destroy(s);
  mm_spec sp8 = {32, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 1, 4,
                 {{"i", 32}, {"j0", 2}, {"k", 32}, {"j1", 16}},
                 {{T1(0, 1), END}, {T1(1, 16), T1(3, 1), END}, {T1(2, 1), END}}};
  s = fresh(m, &sp8, &f, &y, l);
  write_golden_tir("blockize_init_predicate", f);
  ERR(mlc_sch_blockize(s, l[3], &bo), "blockize: block \"Y\" has a predicate: its init cannot move to the outer block");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_STRUCTURE);
  check_unchanged(f, s, 2);
  /* where the init stays inside, the predicate stays on the inner block */
  int n;
  CU_ASSERT(OK(mlc_sch_get_loops(s, y, 8, l, &n)));
  CU_ASSERT(OK(mlc_sch_blockize(s, l[1], &bo)));
  mlc_th_sched_same(m, f, mlc_sch_func(s), "blockize_predicate");
  char *p = mlc_th_print_func(mlc_sch_func(s));
  CU_ASSERT_PTR_NOT_NULL(strstr(p, "T.where(i < 32 and j0 * 16 + j1 < 32 and k < 32)"));
  free(p);
  mlc_sch_destroy(s);

  /* not a loop nest around one block: loop i of the relu holds two blocks */
  f = mlc_th_mm_relu(m, 8);
  mlc_tir_stmt *ci = f->body->alloc.body->seq.stmts[1], *cj = ci->loop.body;
  ci->loop.body = mlc_tir_seq2(m, cj, mlc_tir_stmt_copy(m, cj, &(mlc_tir_subst){0, NULL, NULL, 0, NULL, NULL, 1}));
  cj->loop.body->block.name = "C1";
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  mlc_sch_rv c;
  CU_ASSERT(OK(mlc_sch_get_block(s, "C1", &c)));
  CU_ASSERT(OK(mlc_sch_get_loops(s, c, 8, l, &n)));
  ERR(mlc_sch_blockize(s, l[0], &bo),
      "blockize: loop i holds a sequence of statements, not a loop or a block: blockize needs a nest of loops "
      "around one block");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_STRUCTURE);
  mlc_sch_destroy(s);
  /* an inner loop that does not start at 0 */
  mm_spec sp9 = spec_ij0kj1(32, 16);
  f = mm_nest(m, &sp9);
  f->body->alloc.body->seq.stmts[0]->loop.body->loop.body->loop.body->loop.min = mlc_tir_i64(m, 1);
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT(OK(mlc_sch_get_block(s, "Y", &y)));
  CU_ASSERT(OK(mlc_sch_get_loops(s, y, 8, l, &n)));
  ERR(mlc_sch_blockize(s, l[2], &bo), "blockize: loop j1 under the subtree does not start at 0");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_STRUCTURE);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* ---- tensorize ------------------------------------------------------------------ */

static void test_tensorize_fma(void) {
  mlc_tir_module *m = mlc_th_tir_module();
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
  write_golden("tensorize_fma", f, s);
  static const char *const fma_nest =
      "    for i, j0, k in T.grid(32, 2, 32):\n"
      "        with T.block(\"Y_o\"):\n"
      "            vi_o = T.axis.spatial(32, i)\n"
      "            vj_o = T.axis.spatial(2, j0)\n"
      "            vk_o = T.axis.reduce(32, k)\n"
      "            with T.init():\n"
      "                for j1_init in range(16):\n"
      "                    with T.block(\"Y_init\"):\n"
      "                        vj_i_init = T.axis.spatial(16, j1_init)\n"
      "                        Y[vi_o, vj_o * 16 + vj_i_init] = T.float32(0)\n"
      "            for j in T.vectorized(16):\n"
      "                Y[vi_o, vj_o * 16 + j] = Y[vi_o, vj_o * 16 + j] + A[vi_o, vk_o] * B[vk_o, vj_o * 16 + j]\n";
  expect_func(s, 32, fma_nest);
  /* the inner block and loop are gone */
  MLC_TEST_ERR(mlc_sch_get_loops(s, y, 8, l, &n), MLC_INVALID_ARGUMENT, "get_loops: block: the block of handle",
               "was removed by tensorize");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_HANDLE);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "tensorize_fma");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  /* on the loop: blockized first */
  s = open_sched(m, f, &y, l, &n);
  CU_ASSERT(OK(mlc_sch_tensorize(s, l[3], "avx512_fma_f32x16")));
  dump("tensorize_fma_loop", s);
  write_golden("tensorize_fma_loop", f, s);
  expect_func(s, 32, fma_nest);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "tensorize_fma_loop");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* The tensorized FMA row lowers to explicit 16-lane vector operations. */
static void test_tensorize_lowered(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mm_spec sp = spec_ij0kj1(32, 16);
  mlc_tir_func *f = mm_nest(m, &sp);
  mlc_sch_rv y, l[8];
  int n;
  mlc_sch *s = open_sched(m, f, &y, l, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(OK(mlc_sch_tensorize(s, l[3], "avx512_fma_f32x16")));
  const mlc_tir_func *t = mlc_sch_func(s);
  mlc_tir_func *g = mlc_tir_func_new(m, "lowered", t->nparams, t->params, mlc_tir_stmt_copy(m, t->body, NULL));
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT(OK(mlc_tir_lower_func(m, g, NULL)));
  char *p = mlc_th_print_func(g);
  if (getenv("MLC_TEST_DUMP")) printf("\n==== lowered\n%s", p);
  CU_ASSERT_PTR_NULL(strstr(p, "T.vectorized"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p, "T.Ramp("));
  CU_ASSERT_PTR_NOT_NULL(strstr(p, "T.Broadcast(A_1[i * 32 + k], 16) * B_1[T.Ramp(k * 32 + j0 * 16, 1, 16)]"));
  free(p);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

static void test_tensorize_tile(void) {
  mlc_tir_module *m = mlc_th_tir_module();
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
  write_golden("tensorize_tile", f, s);
  expect_func(s, 48,
      "    for i0, j0, k in T.grid(8, 3, 48):\n"
      "        with T.block(\"Y_o\"):\n"
      "            vi_o = T.axis.spatial(8, i0)\n"
      "            vj_o = T.axis.spatial(3, j0)\n"
      "            vk_o = T.axis.reduce(48, k)\n"
      "            with T.init():\n"
      "                for i1_init, j1_init in T.grid(6, 16):\n"
      "                    with T.block(\"Y_init\"):\n"
      "                        vi_i_init = T.axis.spatial(6, i1_init)\n"
      "                        vj_i_init = T.axis.spatial(16, j1_init)\n"
      "                        Y[vi_o * 6 + vi_i_init, vj_o * 16 + vj_i_init] = T.float32(0)\n"
      "            for i in T.unroll(6):\n"
      "                for j in T.vectorized(16):\n"
      "                    Y[vi_o * 6 + i, vj_o * 16 + j] = Y[vi_o * 6 + i, vj_o * 16 + j] + A[vi_o * 6 + i, vk_o] * B[vk_o, vj_o * 16 + j]\n");
  mlc_th_sched_same(m, f, mlc_sch_func(s), "tensorize_tile");
  check_replay(m, f, s);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* A reduction intrinsic on Y = A @ B^T (rows of both along k): the init leaves for the outer block. */
static void test_tensorize_dot(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mm_spec sp = {32, MLC_DTYPE_F32, MLC_TIR_ADD, 1, 0, 4,
                {{"i", 32}, {"j", 32}, {"k0", 2}, {"k1", 16}},
                {{T1(0, 1), END}, {T1(1, 1), END}, {T1(2, 16), T1(3, 1), END}}};
  mlc_tir_func *f = mm_nest(m, &sp);
  mlc_sch_rv y, l[8];
  int n;
  mlc_sch *s = open_sched(m, f, &y, l, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(OK(mlc_sch_tensorize(s, l[3], "dot_f32x16")));
  dump("tensorize_dot", s);
  write_golden("tensorize_dot", f, s);
  expect_func(s, 32,
      "    for i, j, k0 in T.grid(32, 32, 2):\n"
      "        with T.block(\"Y_o\"):\n"
      "            vi_o = T.axis.spatial(32, i)\n"
      "            vj_o = T.axis.spatial(32, j)\n"
      "            vk_o = T.axis.reduce(2, k0)\n"
      "            with T.init():\n"
      "                with T.block(\"Y_init\"):\n"
      "                    Y[vi_o, vj_o] = T.float32(0)\n"
      "            acc = T.alloc_buffer((16,), \"float32\", scope=\"local\")\n"
      "            for k in T.vectorized(16):\n"
      "                acc[k] = A[vi_o, vk_o * 16 + k] * B[vj_o, vk_o * 16 + k]\n"
      "            for k in range(16):\n"
      "                Y[vi_o, vj_o] = Y[vi_o, vj_o] + acc[k]\n");
  mlc_th_sched_same(m, f, mlc_sch_func(s), "tensorize_dot");
  check_replay(m, f, s);
  mlc_sch_destroy(s);

  /* the whole reduction inside: the block keeps its init, the intrinsic has none */
  mm_spec sp2 = {16, MLC_DTYPE_F32, MLC_TIR_ADD, 1, 0, 3,
                 {{"i", 16}, {"j", 16}, {"k", 16}},
                 {{T1(0, 1), END}, {T1(1, 1), END}, {T1(2, 1), END}}};
  f = mm_nest(m, &sp2);
  write_golden_tir("tensorize_init", f);
  s = open_sched(m, f, &y, l, &n);
  ERR(mlc_sch_tensorize(s, l[2], "dot_f32x16"),
      "tensorize: block \"Y_o\" does not match the intrinsic \"dot_f32x16\": block \"Y\" has an init where the "
      "intrinsic's block \"update\" has none");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_TENSORIZE);
  check_unchanged(f, s, 2);
  /* a spatial variable where the intrinsic has a reduce one */
  ERR(mlc_sch_tensorize(s, l[1], "avx512_fma_f32x16"), "found a loop where the intrinsic has a block");
  mlc_sch_destroy(s);
  mm_spec sp3 = spec_ij0kj1(32, 16);
  f = mm_nest(m, &sp3);
  s = open_sched(m, f, &y, l, &n);
  ERR(mlc_sch_tensorize(s, l[3], "dot_f32x16"),
      "does not match the intrinsic \"dot_f32x16\": vj_i of block \"Y\" is spatial where the intrinsic's vk is reduce");
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

static void test_tensorize_refusals(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f;
  mlc_sch_rv y, l[8], bo = 0;
  mlc_sch *s;

  /* an unknown intrinsic */
  mm_spec sp = spec_ij0kj1(32, 16);
  s = fresh(m, &sp, &f, &y, l);
  ERR(mlc_sch_tensorize(s, l[3], "avx512_fma_f32x8"),
      "tensorize: no tensor intrinsic named \"avx512_fma_f32x8\" (known: avx512_fma_f32x16, avx512_fma_f32_6x16, "
      "dot_f32x16)");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_ARGUMENT);
  /* a block whose body is a store, not the intrinsic's loop */
  ERR(mlc_sch_tensorize(s, y, "avx512_fma_f32x16"),
      "tensorize: block \"Y\" does not match the intrinsic \"avx512_fma_f32x16\": found a store where the intrinsic "
      "has a loop");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_TENSORIZE);
  check_unchanged(f, s, 2);
  /* tensorize replaced the inner loop: its handle is retired */
  CU_ASSERT(OK(mlc_sch_tensorize(s, l[3], "avx512_fma_f32x16")));
  ERR(mlc_sch_tensorize(s, l[3], "avx512_fma_f32x16"), "tensorize: block_or_loop: the loop of handle",
      "was removed by tensorize");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_HANDLE);
  mlc_sch_destroy(s);

  /* an extent of 8 where the intrinsic has 16; on a loop, the blockize is undone */
  sp = spec_ij0kj1(32, 8);
  s = fresh(m, &sp, &f, &y, l);
  write_golden_tir("tensorize_extent", f);
  ERR(mlc_sch_tensorize(s, l[3], "avx512_fma_f32x16"),
      "tensorize: block \"Y_o\" does not match the intrinsic \"avx512_fma_f32x16\": loop j1 has extent 8 where the "
      "intrinsic's loop j has 16");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_TENSORIZE);
  check_unchanged(f, s, 2);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "tensorize_undone");
  /* the same on the blockized block: nothing changes either */
  CU_ASSERT(OK(mlc_sch_blockize(s, l[3], &bo)));
  char *before = mlc_th_print_func(mlc_sch_func(s));
  ERR(mlc_sch_tensorize(s, bo, "avx512_fma_f32x16"), "loop j1 has extent 8 where the intrinsic's loop j has 16");
  char *after = mlc_th_print_func(mlc_sch_func(s));
  MLC_TH_EXPECT_STR(after, before);
  free(before);
  free(after);
  /* an 8 x 8 tile is not the 6 x 16 one */
  ERR(mlc_sch_tensorize(s, bo, "avx512_fma_f32_6x16"),
      "block \"Y_o\" does not match the intrinsic \"avx512_fma_f32_6x16\": loop j1 has extent 8 where the "
      "intrinsic's loop i has 6");
  mlc_sch_destroy(s);

  /* another operator: Y = Y - A * B */
  sp = spec_ij0kj1(32, 16);
  sp.op = MLC_TIR_SUB;
  s = fresh(m, &sp, &f, &y, l);
  write_golden_tir("tensorize_operator", f);
  ERR(mlc_sch_tensorize(s, l[3], "avx512_fma_f32x16"),
      "tensorize: block \"Y_o\" does not match the intrinsic \"avx512_fma_f32x16\": Y[vi_o, vj_o * 16 + vj_i] - "
      "A[vi_o, vk_o] * B[vk_o, vj_o * 16 + vj_i] has operator - where the intrinsic has +");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_TENSORIZE);
  check_unchanged(f, s, 2);
  mlc_sch_destroy(s);

  /* another dtype */
  sp = spec_ij0kj1(32, 16);
  sp.dtype = MLC_DTYPE_F64;
  s = fresh(m, &sp, &f, &y, l);
  write_golden_tir("tensorize_dtype", f);
  ERR(mlc_sch_tensorize(s, l[3], "avx512_fma_f32x16"),
      "does not match the intrinsic \"avx512_fma_f32x16\": Y is float64 where the intrinsic's C is float32");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_TENSORIZE);
  mlc_sch_destroy(s);

  /* B transposed: the 16 lanes run down a column of B, not along a row */
  sp = spec_ij0kj1(32, 16);
  sp.trans_b = 1;
  s = fresh(m, &sp, &f, &y, l);
  write_golden_tir("tensorize_transposed", f);
  ERR(mlc_sch_tensorize(s, l[3], "avx512_fma_f32x16"),
      "does not match the intrinsic \"avx512_fma_f32x16\": index 0 of B (vj_o * 16 + vj_i) is not fixed");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_TENSORIZE);
  mlc_sch_destroy(s);

  /* the reduction inside the subtree: two loops where the intrinsic has one */
  mm_spec sp2 = {32, MLC_DTYPE_F32, MLC_TIR_ADD, 0, 0, 4,
                 {{"i", 32}, {"j0", 2}, {"j1", 16}, {"k", 32}},
                 {{T1(0, 1), END}, {T1(1, 16), T1(2, 1), END}, {T1(3, 1), END}}};
  s = fresh(m, &sp2, &f, &y, l);
  ERR(mlc_sch_tensorize(s, l[2], "avx512_fma_f32x16"),
      "does not match the intrinsic \"avx512_fma_f32x16\": found a loop where the intrinsic has a block");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_TENSORIZE);
  check_unchanged(f, s, 2);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* ---- the intrinsics ----------------------------------------------------------------- */

/* Each implementation computes its description. */
static void test_intrinsics(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(mlc_sch_intrin_count(), 3);
  CU_ASSERT_PTR_NULL(mlc_sch_intrin_find("nope"));
  CU_ASSERT_PTR_NULL(mlc_sch_intrin_at(-1));
  CU_ASSERT_PTR_NULL(mlc_sch_intrin_at(mlc_sch_intrin_count()));
  for (int i = 0; i < mlc_sch_intrin_count(); i++) {
    const mlc_sch_intrin *in = mlc_sch_intrin_at(i);
    CU_ASSERT_PTR_EQUAL(mlc_sch_intrin_find(in->name), in);
    mlc_tir_func *desc = NULL, *impl = NULL;
    CU_ASSERT_FATAL(OK(mlc_sch_intrin_build(m, in, &desc, &impl)));
    CU_ASSERT(mlc_th_sched_same(m, desc, impl, in->name) == 0);
  }
  mlc_tir_func *desc = NULL, *impl = NULL;
  CU_ASSERT(OK(mlc_sch_intrin_build(m, mlc_sch_intrin_find("avx512_fma_f32x16"), &desc, &impl)));
  char *d = mlc_th_print_func(desc), *p = mlc_th_print_func(impl);
  MLC_TH_EXPECT_STR(d,
             "@T.prim_func\n"
             "def avx512_fma_f32x16_desc(A: T.Buffer((1,), \"float32\"), B: T.Buffer((16,), \"float32\"), "
             "C: T.Buffer((16,), \"float32\")):\n"
             "    for j in range(16):\n"
             "        with T.block(\"update\"):\n"
             "            vj = T.axis.spatial(16, j)\n"
             "            C[vj] = C[vj] + A[0] * B[vj]\n");
  MLC_TH_EXPECT_STR(p,
             "@T.prim_func\n"
             "def avx512_fma_f32x16_impl(A: T.Buffer((1,), \"float32\"), B: T.Buffer((16,), \"float32\"), "
             "C: T.Buffer((16,), \"float32\")):\n"
             "    for j in T.vectorized(16):\n"
             "        C[j] = C[j] + A[0] * B[j]\n");
  free(d);
  free(p);
  mlc_tir_module_destroy(m);
}

/* ---- traces ---------------------------------------------------------------------- */

/* Hand-written traces replay; a refused line names the file, the line and the reason. */
static void test_trace_text(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mm_spec sp = spec_ij0kj1(32, 16);
  mlc_tir_func *f = mm_nest(m, &sp);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  const char *text = "y = sch.get_block(name=\"Y\")\n"
                     "i, j0, k, j1 = sch.get_loops(block=y)\n"
                     "yo = sch.blockize(target=j1)\n"
                     "sch.tensorize(block_or_loop=yo, tensor_intrin=\"avx512_fma_f32x16\")\n"
                     "sch.parallel(loop=i)\n";
  mlc_sch *s = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT(OK(mlc_sch_apply_trace(s, text, strlen(text), "fma.trace")));
  char *t = mlc_th_print_trace(s);
  MLC_TH_EXPECT_STR(t, "b0 = sch.get_block(name=\"Y\")\n"
                "l1, l2, l3, l4 = sch.get_loops(block=b0)\n"
                "b5 = sch.blockize(target=l4)\n"
                "sch.tensorize(block_or_loop=b5, tensor_intrin=\"avx512_fma_f32x16\")\n"
                "sch.parallel(loop=l1)\n");
  free(t);
  char *p = mlc_th_print_func(mlc_sch_func(s));
  CU_ASSERT_PTR_NOT_NULL(strstr(p, "    for i in T.parallel(32):\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p, "            for j in T.vectorized(16):\n"));
  free(p);
  mlc_th_sched_same(m, f, mlc_sch_func(s), "trace_text");
  mlc_sch_destroy(s);

  /* errors through the trace */
  const char *bad = "y = sch.get_block(name=\"Y\")\n"
                    "i, j0, k, j1 = sch.get_loops(block=y)\n"
                    "sch.tensorize(block_or_loop=k, tensor_intrin=\"avx512_fma_f32x16\")\n";
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  ERR(mlc_sch_apply_trace(s, bad, strlen(bad), "bad.trace"),
      "bad.trace:3: tensorize: block \"Y_o\" does not match the intrinsic \"avx512_fma_f32x16\": loop k has extent 32 "
      "where the intrinsic's loop j has 16");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_TENSORIZE);
  check_unchanged(f, s, 2);
  const char *noarg = "y = sch.get_block(name=\"Y\")\nsch.tensorize(block_or_loop=y)\n";
  ERR(mlc_sch_apply_trace(s, noarg, strlen(noarg), "noarg.trace"), "noarg.trace:2: tensorize: missing argument tensor_intrin");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_ARGUMENT);
  const char *noarg2 = "sch.tensorize(tensor_intrin=\"avx512_fma_f32x16\")\n";
  ERR(mlc_sch_apply_trace(s, noarg2, strlen(noarg2), "noarg2.trace"), "tensorize: missing argument block_or_loop");
  const char *nottarget = "sch.blockize(loop=l1)\n";
  ERR(mlc_sch_apply_trace(s, nottarget, strlen(nottarget), "nt.trace"), "nt.trace:1:");
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"blockize_outer_reduce", test_blockize_outer_reduce},
                                      {"blockize_inner_reduce", test_blockize_inner_reduce},
                                      {"blockize_split_reduce", test_blockize_split_reduce},
                                      {"blockize_fused", test_blockize_fused},
                                      {"blockize_regions", test_blockize_regions},
                                      {"blockize_nested", test_blockize_nested},
                                      {"blockize_refusals", test_blockize_refusals},
                                      {"tensorize_fma", test_tensorize_fma},
                                      {"tensorize_lowered", test_tensorize_lowered},
                                      {"tensorize_tile", test_tensorize_tile},
                                      {"tensorize_dot", test_tensorize_dot},
                                      {"tensorize_refusals", test_tensorize_refusals},
                                      {"intrinsics", test_intrinsics},
                                      {"trace_text", test_trace_text},
                                      {NULL, NULL}};
  CU_pSuite suite = CU_add_suite("sched_tensorize", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (int i = 0; suite && tests[i].pName; i++) CU_add_test(suite, tests[i].pName, tests[i].pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_sched_tensorize", fns);
}
