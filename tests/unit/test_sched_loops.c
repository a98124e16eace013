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
    got = mlc_th_print_func(mlc_sch_func(s));
    if (want) MLC_TH_EXPECT_STR(got, want);
    if (f->nscalars == 0) CU_ASSERT_EQUAL(mlc_th_sched_same(m, f, mlc_sch_func(s), name), 0);
    char *t = mlc_th_print_trace(s);
    if (OK(mlc_sch_create(m, f, seed + 1, &r)) && OK(mlc_sch_apply_trace(r, t, strlen(t), "replay"))) {
      char *again = mlc_th_print_func(mlc_sch_func(r)), *t2 = mlc_th_print_trace(r);
      MLC_TH_EXPECT_STR(again, got);
      MLC_TH_EXPECT_STR(t2, t);
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
** containing |msg|; the function is left as the lines before made it, and
** the refused line is not recorded. */
static void check_refused(mlc_tir_module *m, const mlc_tir_func *f, const char *trace, mlc_sch_error cls,
                          const char *msg) {
  mlc_sch *s = NULL, *p = NULL;
  size_t len = strlen(trace), cut = len;
  if (cut && trace[cut - 1] == '\n') cut--;
  while (cut && trace[cut - 1] != '\n') cut--;
  if (!OK(mlc_sch_create(m, f, 1, &p))) return;
  CU_ASSERT(OK(mlc_sch_apply_trace(p, trace, cut, "prefix")));
  if (!OK(mlc_sch_create(m, f, 1, &s))) {
    mlc_sch_destroy(p);
    return;
  }
  mlc_status st = mlc_sch_apply_trace(s, trace, len, "refused");
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
  char *before = mlc_th_print_func(mlc_sch_func(p)), *after = mlc_th_print_func(mlc_sch_func(s));
  MLC_TH_EXPECT_STR(after, before);
  CU_ASSERT_EQUAL(mlc_sch_trace_len(s), mlc_sch_trace_len(p));
  free(before);
  free(after);
  mlc_sch_destroy(s);
  mlc_sch_destroy(p);
}

/* ---- functions to schedule ------------------------------------------------------------ */

static mlc_tir_iter_var iter(mlc_tir_module *m, mlc_tir_var *v, mlc_tir_iter_kind k, int64_t ext, mlc_tir_expr *bind) {
  mlc_tir_iter_var it = {v, k, mlc_tir_i64(m, 0), mlc_tir_i64(m, ext), bind};
  return it;
}

static mlc_tir_expr *ref(mlc_tir_module *m, mlc_tir_var *v) { return mlc_tir_ref(m, v); }
static mlc_tir_var *var(mlc_tir_module *m, const char *name) { return mlc_tir_var_new(m, name, MLC_DTYPE_I64); }
static mlc_tir_stmt *loop(mlc_tir_module *m, mlc_tir_var *v, int64_t ext, mlc_tir_stmt *body) {
  return mlc_tir_for(m, v, mlc_tir_i64(m, 0), mlc_tir_i64(m, ext), MLC_TIR_FOR_SERIAL, NULL, body);
}

static mlc_tir_func *func(mlc_tir_module *m, const char *name, int n, mlc_tir_buffer *const *params,
                          mlc_tir_stmt *body) {
  mlc_tir_func *f = mlc_tir_func_new(m, name, n, params, body);
  CU_ASSERT_PTR_NOT_NULL(f);
  return f;
}

/* Block "NAME" over (vi, vj) bound to (i, j) (extents r x c) storing OUT[vi, vj] = IN[vi, vj] * 2 (+ 1 when |plus|). */
static mlc_tir_stmt *ew_block(mlc_tir_module *m, const char *name, mlc_tir_var *i, mlc_tir_var *j, int64_t r, int64_t c,
                              mlc_tir_buffer *in, mlc_tir_buffer *out, int plus) {
  mlc_tir_var *vi = var(m, "vi"), *vj = var(m, "vj");
  mlc_tir_iter_var its[2] = {iter(m, vi, MLC_TIR_ITER_SPATIAL, r, ref(m, i)),
                             iter(m, vj, MLC_TIR_ITER_SPATIAL, c, ref(m, j))};
  mlc_tir_expr *idx[2] = {ref(m, vi), ref(m, vj)};
  mlc_tir_expr *v = plus ? mlc_tir_add(m, mlc_tir_load(m, in, 2, idx), mlc_tir_float(m, MLC_DTYPE_F32, 1))
                         : mlc_tir_mul(m, mlc_tir_load(m, in, 2, idx), mlc_tir_float(m, MLC_DTYPE_F32, 2));
  return mlc_tir_block(m, name, 2, its, NULL, mlc_tir_store(m, out, 2, idx, v));
}

/* The seeds' before_fuse: B = A * 2 over r x c. */
static mlc_tir_func *ewise(mlc_tir_module *m, int64_t r, int64_t c) {
  const int64_t d[2] = {r, c};
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", MLC_DTYPE_F32, 2, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = var(m, "i"), *j = var(m, "j");
  mlc_tir_stmt *body = loop(m, i, r, loop(m, j, c, ew_block(m, "B", i, j, r, c, A, B, 0)));
  mlc_tir_buffer *ps[2] = {A, B};
  return func(m, "before_fuse", 2, ps, body);
}

/* B = A * 2 over (n, 4) with n symbolic. */
static mlc_tir_func *ewise_sym(mlc_tir_module *m) {
  mlc_tir_var *n = var(m, "n");
  mlc_tir_expr *shape[2] = {ref(m, n), mlc_tir_i64(m, 4)};
  mlc_tir_buffer *A = mlc_tir_buffer_new(m, "A", MLC_DTYPE_F32, 2, shape, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new(m, "B", MLC_DTYPE_F32, 2, shape, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = var(m, "i"), *j = var(m, "j"), *vi = var(m, "vi"), *vj = var(m, "vj");
  mlc_tir_iter_var its[2] = {{vi, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), ref(m, n), ref(m, i)},
                             iter(m, vj, MLC_TIR_ITER_SPATIAL, 4, ref(m, j))};
  mlc_tir_expr *idx[2] = {ref(m, vi), ref(m, vj)};
  mlc_tir_stmt *blk = mlc_tir_block(
      m, "B", 2, its, NULL,
      mlc_tir_store(m, B, 2, idx, mlc_tir_mul(m, mlc_tir_load(m, A, 2, idx), mlc_tir_float(m, MLC_DTYPE_F32, 2))));
  mlc_tir_stmt *body = mlc_tir_for(m, i, mlc_tir_i64(m, 0), ref(m, n), MLC_TIR_FOR_SERIAL, NULL, loop(m, j, 4, blk));
  mlc_tir_buffer *ps[2] = {A, B};
  mlc_tir_func *f = func(m, "ewise_sym", 2, ps, body);
  CU_ASSERT(f && OK(mlc_tir_func_add_scalar(m, f, n, 0, 0)));
  return f;
}

/* for i in range(10): {block "B": B[vi] = A[vi] * 2; C[i] = A[i] + 1 outside any block}. */
static mlc_tir_func *bare(mlc_tir_module *m) {
  const int64_t d[1] = {10};
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 1, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", MLC_DTYPE_F32, 1, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *C = mlc_tir_buffer_new_c(m, "C", MLC_DTYPE_F32, 1, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = var(m, "i"), *vi = var(m, "vi");
  mlc_tir_iter_var its[1] = {iter(m, vi, MLC_TIR_ITER_SPATIAL, 10, ref(m, i))};
  mlc_tir_expr *bi[1] = {ref(m, vi)}, *ci[1] = {ref(m, i)};
  mlc_tir_stmt *blk = mlc_tir_block(
      m, "B", 1, its, NULL,
      mlc_tir_store(m, B, 1, bi, mlc_tir_mul(m, mlc_tir_load(m, A, 1, bi), mlc_tir_float(m, MLC_DTYPE_F32, 2))));
  mlc_tir_stmt *st =
      mlc_tir_store(m, C, 1, ci, mlc_tir_add(m, mlc_tir_load(m, A, 1, ci), mlc_tir_float(m, MLC_DTYPE_F32, 1)));
  mlc_tir_buffer *ps[3] = {A, B, C};
  return func(m, "bare", 3, ps, loop(m, i, 10, mlc_tir_seq2(m, blk, st)));
}

/* for i: {for j: B = A * 2; for j: C = A + 1} (|nested| 0), or for i, j: {B = A * 2; C = (B or A) + 1}. */
static mlc_tir_func *two_blocks(mlc_tir_module *m, int nested, int share) {
  const int64_t d[2] = {4, 6};
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", MLC_DTYPE_F32, 2, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *C = mlc_tir_buffer_new_c(m, "C", MLC_DTYPE_F32, 2, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = var(m, "i"), *j = var(m, "j"), *j2 = var(m, "j");
  mlc_tir_stmt *body;
  if (nested) {
    mlc_tir_stmt *b1 = ew_block(m, "B", i, j, 4, 6, A, B, 0), *b2 = ew_block(m, "C", i, j, 4, 6, share ? B : A, C, 1);
    body = loop(m, i, 4, loop(m, j, 6, mlc_tir_seq2(m, b1, b2)));
  } else {
    mlc_tir_stmt *l1 = loop(m, j, 6, ew_block(m, "B", i, j, 4, 6, A, B, 0));
    mlc_tir_stmt *l2 = loop(m, j2, 6, ew_block(m, "C", i, j2, 4, 6, A, C, 1));
    body = loop(m, i, 4, mlc_tir_seq2(m, l1, l2));
  }
  mlc_tir_buffer *ps[3] = {A, B, C};
  return func(m, "two_blocks", 3, ps, body);
}

/* for i in range(4): for j in range(i + 1): B[vi, vj] = A[vi, vj] * 2 (a triangle). */
static mlc_tir_func *triangle(mlc_tir_module *m) {
  const int64_t d[2] = {4, 4};
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", MLC_DTYPE_F32, 2, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = var(m, "i"), *j = var(m, "j");
  mlc_tir_stmt *inner = mlc_tir_for(m, j, mlc_tir_i64(m, 0), mlc_tir_add(m, ref(m, i), mlc_tir_i64(m, 1)),
                                    MLC_TIR_FOR_SERIAL, NULL, ew_block(m, "B", i, j, 4, 4, A, B, 0));
  mlc_tir_buffer *ps[2] = {A, B};
  return func(m, "triangle", 2, ps, loop(m, i, 4, inner));
}

/* for i, j in T.grid(3, 7): B[vi + 1, vj] = B[vi, vj + 1] + A[vi, vj]: each iteration reads what an
** earlier one (i - 1, j + 1) wrote, so swapping i and j changes the result. */
static mlc_tir_func *skewed(mlc_tir_module *m) {
  const int64_t da[2] = {3, 7}, db[2] = {4, 8};
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, da, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", MLC_DTYPE_F32, 2, db, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = var(m, "i"), *j = var(m, "j"), *vi = var(m, "vi"), *vj = var(m, "vj");
  mlc_tir_iter_var its[2] = {iter(m, vi, MLC_TIR_ITER_SPATIAL, 3, ref(m, i)),
                             iter(m, vj, MLC_TIR_ITER_SPATIAL, 7, ref(m, j))};
  mlc_tir_expr *wi[2] = {mlc_tir_add(m, ref(m, vi), mlc_tir_i64(m, 1)), ref(m, vj)};
  mlc_tir_expr *ri[2] = {ref(m, vi), mlc_tir_add(m, ref(m, vj), mlc_tir_i64(m, 1))};
  mlc_tir_expr *ai[2] = {ref(m, vi), ref(m, vj)};
  mlc_tir_stmt *st = mlc_tir_store(m, B, 2, wi, mlc_tir_add(m, mlc_tir_load(m, B, 2, ri), mlc_tir_load(m, A, 2, ai)));
  mlc_tir_stmt *body = loop(m, i, 3, loop(m, j, 7, mlc_tir_block(m, "S", 2, its, NULL, st)));
  mlc_tir_buffer *ps[2] = {A, B};
  return func(m, "skewed", 2, ps, body);
}

/* The unchanged tail of mm_relu(N): the relu nest. */
#define MM_C(N)                                          \
  "    for i, j in T.grid(" N ", " N "):\n"              \
  "        with T.block(\"C\"):\n"                       \
  "            vi = T.axis.spatial(" N ", i)\n"          \
  "            vj = T.axis.spatial(" N ", j)\n"          \
  "            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))\n"
#define MM_HEAD(N)                                                                                      \
  "@T.prim_func\n"                                                                                      \
  "def mm_relu(A: T.Buffer((" N ", " N "), \"float32\"), B: T.Buffer((" N ", " N "), \"float32\"), "    \
  "C: T.Buffer((" N ", " N "), \"float32\")):\n"                                                        \
  "    T.func_attr({\"global_symbol\": \"mm_relu\", \"tir.noalias\": True})\n"                          \
  "    Y = T.alloc_buffer((" N ", " N "), \"float32\")\n"
#define MM_Y_BODY(IND)                                   \
  IND "    with T.init():\n"                             \
  IND "        Y[vi, vj] = T.float32(0)\n"               \
  IND "    Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]\n"

#define MM_Y "b0 = sch.get_block(name=\"Y\")\nl1, l2, l3 = sch.get_loops(block=b0)\n"
#define EW_B "b0 = sch.get_block(name=\"B\")\nl1, l2 = sch.get_loops(block=b0)\n"

/* for i in range(2, 10): B[vi] = A[vi] * 2, inside a block "outer" under a loop o (|outer|), else at the top. */
static mlc_tir_func *offset(mlc_tir_module *m, int outer) {
  const int64_t d[1] = {10};
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 1, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", MLC_DTYPE_F32, 1, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = var(m, "i"), *vi = var(m, "vi"), *o = var(m, "o");
  mlc_tir_iter_var its[1] = {{vi, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 2), mlc_tir_i64(m, 8), ref(m, i)}};
  mlc_tir_expr *bi[1] = {ref(m, vi)};
  mlc_tir_stmt *blk = mlc_tir_block(
      m, "B", 1, its, NULL,
      mlc_tir_store(m, B, 1, bi, mlc_tir_mul(m, mlc_tir_load(m, A, 1, bi), mlc_tir_float(m, MLC_DTYPE_F32, 2))));
  mlc_tir_stmt *body = mlc_tir_for(m, i, mlc_tir_i64(m, 2), mlc_tir_i64(m, 8), MLC_TIR_FOR_SERIAL, NULL, blk);
  if (outer) body = loop(m, o, 1, mlc_tir_block(m, "outer", 0, NULL, NULL, body));
  mlc_tir_buffer *ps[2] = {A, B};
  return func(m, "offset", 2, ps, body);
}

static void expect(mlc_tir_module *m, const mlc_tir_func *f, const char *trace, const char *want, const char *name) {
  free(check_trace(m, f, 1, trace, want, name));
}

/* ---- split ------------------------------------------------------------------------- */

static void test_split(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f8 = mlc_th_mm_relu(m, 8), *f10 = mlc_th_mm_relu(m, 10);
  /* the seeds' split of j by 4 */
  expect(m, f8, MM_Y "l4, l5 = sch.split(loop=l2, factors=[None, 4])\n",
         MM_HEAD("8") "    for i, j_0, j_1, k in T.grid(8, 2, 4, 8):\n"
                      "        with T.block(\"Y\"):\n"
                      "            vi = T.axis.spatial(8, i)\n"
                      "            vj = T.axis.spatial(8, j_0 * 4 + j_1)\n"
                      "            vk = T.axis.reduce(8, k)\n" MM_Y_BODY("        ") MM_C("8"),
         "split_divisible");
  /* 10 by 4: 3 x 4 with a predicate */
  expect(m, f10, MM_Y "l4, l5 = sch.split(loop=l2, factors=[None, 4])\n",
         MM_HEAD("10") "    for i, j_0, j_1, k in T.grid(10, 3, 4, 10):\n"
                       "        with T.block(\"Y\"):\n"
                       "            vi = T.axis.spatial(10, i)\n"
                       "            vj = T.axis.spatial(10, j_0 * 4 + j_1)\n"
                       "            vk = T.axis.reduce(10, k)\n"
                       "            T.where(j_0 * 4 + j_1 < 10)\n" MM_Y_BODY("        ") MM_C("10"),
         "split_predicate");
  /* three factors of a reduce loop, the middle one inferred; the init still runs once */
  expect(m, f10, MM_Y "l4, l5, l6 = sch.split(loop=l3, factors=[2, None, 2])\n",
         MM_HEAD("10") "    for i, j, k_0, k_1, k_2 in T.grid(10, 10, 2, 3, 2):\n"
                       "        with T.block(\"Y\"):\n"
                       "            vi = T.axis.spatial(10, i)\n"
                       "            vj = T.axis.spatial(10, j)\n"
                       "            vk = T.axis.reduce(10, k_0 * 6 + k_1 * 2 + k_2)\n"
                       "            T.where(k_0 * 6 + k_1 * 2 + k_2 < 10)\n" MM_Y_BODY("        ") MM_C("10"),
         "split_three");
  /* sampled factors; a split of a split loop; predicates of nested splits */
  expect(m, f8,
         MM_Y "v4, v5 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=4, decision=[2, 4])\n"
              "l6, l7 = sch.split(loop=l2, factors=[v4, v5])\nl8, l9 = sch.split(loop=l7, factors=[None, 3])\n",
         MM_HEAD("8") "    for i, j_0, j_1_0, j_1_1, k in T.grid(8, 2, 2, 3, 8):\n"
                      "        with T.block(\"Y\"):\n"
                      "            vi = T.axis.spatial(8, i)\n"
                      "            vj = T.axis.spatial(8, j_0 * 4 + j_1_0 * 3 + j_1_1)\n"
                      "            vk = T.axis.reduce(8, k)\n"
                      "            T.where(j_1_0 * 3 + j_1_1 < 4)\n" MM_Y_BODY("        ") MM_C("8"),
         "split_sampled");
  /* a factor of 1 and an exact cover */
  expect(m, f8, MM_Y "l4, l5, l6 = sch.split(loop=l1, factors=[1, 8, 1])\n",
         MM_HEAD("8") "    for i_0, i_1, i_2, j, k in T.grid(1, 8, 1, 8, 8):\n"
                      "        with T.block(\"Y\"):\n"
                      "            vi = T.axis.spatial(8, i_0 * 8 + i_1 + i_2)\n"
                      "            vj = T.axis.spatial(8, j)\n"
                      "            vk = T.axis.reduce(8, k)\n" MM_Y_BODY("        ") MM_C("8"),
         "split_ones");
  /* a symbolic extent: the inferred factor is ceil(n / 4) */
  expect(m, ewise_sym(m), EW_B "l3, l4 = sch.split(loop=l1, factors=[None, 4])\n",
         "@T.prim_func\n"
         "def ewise_sym(var_A: T.handle, var_B: T.handle):\n"
         "    n = T.int64()  # A.shape[0]\n"
         "    A = T.match_buffer(var_A, (n, 4), \"float32\")\n"
         "    B = T.match_buffer(var_B, (n, 4), \"float32\")\n"
         "    for i_0, i_1, j in T.grid((n + 3) // 4, 4, 4):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.spatial(n, i_0 * 4 + i_1)\n"
         "            vj = T.axis.spatial(4, j)\n"
         "            T.where(i_0 * 4 + i_1 < n)\n"
         "            B[vi, vj] = A[vi, vj] * T.float32(2)\n",
         "split_symbolic");
  /* a loop that does not start at 0 */
  expect(m, offset(m, 0), "b0 = sch.get_block(name=\"B\")\nl1 = sch.get_loops(block=b0)\nl2, l3 = sch.split(loop=l1, factors=[None, 3])\n",
         "@T.prim_func\n"
         "def offset(A: T.Buffer((10,), \"float32\"), B: T.Buffer((10,), \"float32\")):\n"
         "    for i_0, i_1 in T.grid(3, 3):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.spatial((2, 10), i_0 * 3 + i_1 + 2)\n"
         "            T.where(i_0 * 3 + i_1 < 8)\n"
         "            B[vi] = A[vi] * T.float32(2)\n",
         "split_offset");
  /* a divisible split of a loop with a statement outside blocks: no predicate needed */
  expect(m, bare(m), "b0 = sch.get_block(name=\"B\")\nl1 = sch.get_loops(block=b0)\nl2, l3 = sch.split(loop=l1, factors=[None, 5])\n",
         "@T.prim_func\n"
         "def bare(A: T.Buffer((10,), \"float32\"), B: T.Buffer((10,), \"float32\"), C: T.Buffer((10,), \"float32\")):\n"
         "    for i_0, i_1 in T.grid(2, 5):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.spatial(10, i_0 * 5 + i_1)\n"
         "            B[vi] = A[vi] * T.float32(2)\n"
         "        C[i_0 * 5 + i_1] = A[i_0 * 5 + i_1] + T.float32(1)\n",
         "split_bare");
  mlc_tir_module_destroy(m);
}

static void test_split_refused(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 16);
  check_refused(m, f, MM_Y "l4, l5 = sch.split(loop=l2, factors=[3, 5])\n", MLC_SCH_ERR_FACTORS,
                "split: factors 3 * 5 = 15 do not cover the extent 16 of loop j");
  check_refused(m, f, MM_Y "l4, l5, l6 = sch.split(loop=l2, factors=[2, 2, 2])\n", MLC_SCH_ERR_FACTORS,
                "factors 2 * 2 * 2 = 8 do not cover the extent 16 of loop j");
  check_refused(m, f, MM_Y "l4, l5 = sch.split(loop=l2, factors=[None, 0])\n", MLC_SCH_ERR_FACTORS,
                "split: factor 0 (position 1) of loop j is not positive");
  check_refused(m, f, MM_Y "l4, l5 = sch.split(loop=l2, factors=[-4, None])\n", MLC_SCH_ERR_FACTORS,
                "factor -4 (position 0) of loop j is not positive");
  check_refused(m, f, MM_Y "l4, l5, l6 = sch.split(loop=l2, factors=[None, 2, None])\n", MLC_SCH_ERR_FACTORS,
                "factors 0 and 2 of loop j are both None");
  check_refused(m, f, MM_Y "l4, l5 = sch.split(loop=l2, factors=[4611686018427387904, 4])\n", MLC_SCH_ERR_FACTORS,
                "the product of the factors 4611686018427387904 * 4 of loop j overflows");
  check_refused(m, ewise_sym(m), EW_B "l3, l4 = sch.split(loop=l1, factors=[2, 4])\n", MLC_SCH_ERR_FACTORS,
                "the extent n of loop i is symbolic: one factor must be None");
  check_refused(m, f, MM_Y "sch.parallel(loop=l1)\nl4, l5 = sch.split(loop=l1, factors=[None, 4])\n",
                MLC_SCH_ERR_STRUCTURE, "split: loop i is parallel: split loops before setting their kind");
  check_refused(m, f,
                MM_Y "sch.annotate(block_or_loop=l2, ann_key=\"pragma_unroll_explicit\", ann_val=2)\n"
                     "l4, l5 = sch.split(loop=l2, factors=[None, 4])\n",
                MLC_SCH_ERR_STRUCTURE, "loop j is annotated (\"pragma_unroll_explicit\"): split loops before annotating");
  check_refused(m, bare(m), "b0 = sch.get_block(name=\"B\")\nl1 = sch.get_loops(block=b0)\nl2, l3 = sch.split(loop=l1, factors=[None, 4])\n",
                MLC_SCH_ERR_STRUCTURE,
                "loop i has statements outside blocks under it: the non-divisible split (3 * 4 for extent 10) needs "
                "blocks to hold its predicate");
  check_refused(m, f, MM_Y "l4 = sch.split(loop=l2, factors=[16])\n", MLC_SCH_ERR_ARGUMENT,
                "split: factors: 1 factors for loop j (2 to 64)");
  check_refused(m, f, MM_Y "l4, l5 = sch.split(loop=l2, factors=[None, \"4\"])\n", MLC_SCH_ERR_ARGUMENT,
                "factors must be an integer");
  check_refused(m, f, MM_Y "l4, l5 = sch.split(loop=l2, factors=4)\n", MLC_SCH_ERR_ARGUMENT, "factors must be a list");
  check_refused(m, f, MM_Y "l4, l5 = sch.split(loop=l2, factors=[None, l3])\n", MLC_SCH_ERR_HANDLE,
                "factors: handle 4 is not a sampled integer");
  check_refused(m, f, MM_Y "l4, l5 = sch.split(loop=b0, factors=[None, 4])\n", MLC_SCH_ERR_HANDLE, "is not a loop");
  /* the split loop is gone */
  check_refused(m, f, MM_Y "l4, l5 = sch.split(loop=l2, factors=[None, 4])\nl6, l7 = sch.split(loop=l2, factors=[None, 2])\n",
                MLC_SCH_ERR_HANDLE, "the loop of handle 3 was removed by split");
  mlc_tir_module_destroy(m);
}

/* ---- fuse --------------------------------------------------------------------------- */

static void test_fuse(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  /* the seeds' before_fuse */
  expect(m, ewise(m, 128, 128), EW_B "l3 = sch.fuse(loops=[l1, l2])\n",
         "@T.prim_func\n"
         "def before_fuse(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\")):\n"
         "    for i_j_fused in range(16384):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.spatial(128, i_j_fused // 128)\n"
         "            vj = T.axis.spatial(128, i_j_fused % 128)\n"
         "            B[vi, vj] = A[vi, vj] * T.float32(2)\n",
         "fuse_before_fuse");
  /* three loops, the reduce loop among them */
  mlc_tir_func *f6 = mlc_th_mm_relu(m, 6);
  expect(m, f6, MM_Y "l4 = sch.fuse(loops=[l1, l2, l3])\n",
         MM_HEAD("6") "    for i_j_k_fused in range(216):\n"
                      "        with T.block(\"Y\"):\n"
                      "            vi = T.axis.spatial(6, i_j_k_fused // 36)\n"
                      "            vj = T.axis.spatial(6, i_j_k_fused // 6 % 6)\n"
                      "            vk = T.axis.reduce(6, i_j_k_fused % 6)\n" MM_Y_BODY("        ") MM_C("6"),
         "fuse_three");
  /* fuse then split (non-divisible): 36 = 9 x 4 */
  expect(m, f6, MM_Y "l4 = sch.fuse(loops=[l1, l2])\nl5, l6 = sch.split(loop=l4, factors=[None, 4])\n",
         MM_HEAD("6") "    for i_j_fused_0, i_j_fused_1, k in T.grid(9, 4, 6):\n"
                      "        with T.block(\"Y\"):\n"
                      "            vi = T.axis.spatial(6, (i_j_fused_0 * 4 + i_j_fused_1) // 6)\n"
                      "            vj = T.axis.spatial(6, (i_j_fused_0 * 4 + i_j_fused_1) % 6)\n"
                      "            vk = T.axis.reduce(6, k)\n" MM_Y_BODY("        ") MM_C("6"),
         "fuse_split");
  /* split then fuse back: the bindings simplify to the original variable */
  expect(m, f6, MM_Y "l4, l5 = sch.split(loop=l2, factors=[2, 3])\nl6 = sch.fuse(loops=[l4, l5])\n",
         MM_HEAD("6") "    for i, j_0_j_1_fused, k in T.grid(6, 6, 6):\n"
                      "        with T.block(\"Y\"):\n"
                      "            vi = T.axis.spatial(6, i)\n"
                      "            vj = T.axis.spatial(6, j_0_j_1_fused)\n"
                      "            vk = T.axis.reduce(6, k)\n" MM_Y_BODY("        ") MM_C("6"),
         "fuse_split_back");
  /* symbolic extents */
  expect(m, ewise_sym(m), EW_B "l3 = sch.fuse(loops=[l1, l2])\n",
         "@T.prim_func\n"
         "def ewise_sym(var_A: T.handle, var_B: T.handle):\n"
         "    n = T.int64()  # A.shape[0]\n"
         "    A = T.match_buffer(var_A, (n, 4), \"float32\")\n"
         "    B = T.match_buffer(var_B, (n, 4), \"float32\")\n"
         "    for i_j_fused in range(n * 4):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.spatial(n, i_j_fused // 4)\n"
         "            vj = T.axis.spatial(4, i_j_fused % 4)\n"
         "            B[vi, vj] = A[vi, vj] * T.float32(2)\n",
         "fuse_symbolic");
  mlc_tir_module_destroy(m);
}

static void test_fuse_refused(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 8);
  check_refused(m, f, MM_Y "l4 = sch.fuse(loops=[l1, l3])\n", MLC_SCH_ERR_LOOP_NEST,
                "fuse: loop k is not directly inside loop i: other statements or loops lie between them");
  check_refused(m, f, MM_Y "l4 = sch.fuse(loops=[l2, l1])\n", MLC_SCH_ERR_LOOP_NEST,
                "fuse: loop i is not inside loop j: fused loops are given outermost first");
  check_refused(m, f, MM_Y "l4 = sch.fuse(loops=[l1, l1])\n", MLC_SCH_ERR_LOOP_NEST, "fuse: loop i is given twice");
  check_refused(m, f,
                MM_Y "b4 = sch.get_block(name=\"C\")\nl5, l6 = sch.get_loops(block=b4)\nl7 = sch.fuse(loops=[l1, l6])\n",
                MLC_SCH_ERR_LOOP_NEST, "fuse: loop j is not inside loop i");
  check_refused(m, two_blocks(m, 0, 0), EW_B "l3 = sch.fuse(loops=[l1, l2])\n", MLC_SCH_ERR_LOOP_NEST,
                "loop j is not directly inside loop i: other statements or loops lie between them");
  check_refused(m, triangle(m), EW_B "l3 = sch.fuse(loops=[l1, l2])\n", MLC_SCH_ERR_DEPENDENCE,
                "fuse: the range of loop j depends on loop i: the loops are not a box to fuse");
  check_refused(m, f, MM_Y "sch.vectorize(loop=l2)\nl4 = sch.fuse(loops=[l1, l2])\n", MLC_SCH_ERR_STRUCTURE,
                "fuse: loop j is vectorized: fuse loops before setting their kind");
  check_refused(m, f, MM_Y "sch.annotate(block_or_loop=l1, ann_key=\"k\", ann_val=1)\nl4 = sch.fuse(loops=[l1, l2])\n",
                MLC_SCH_ERR_STRUCTURE, "fuse: loop i is annotated (\"k\")");
  check_refused(m, f, MM_Y "l4 = sch.fuse(loops=[l1])\n", MLC_SCH_ERR_ARGUMENT, "fuse: loops: 1 loops given (2 to 64)");
  check_refused(m, f, MM_Y "l4 = sch.fuse(loops=[l1, b0])\n", MLC_SCH_ERR_HANDLE, "loops: handle 1 is not a loop");
  check_refused(m, f, MM_Y "l4 = sch.fuse(loops=[l1, l2])\nl5 = sch.fuse(loops=[l1, l2])\n", MLC_SCH_ERR_HANDLE,
                "removed by fuse");
  check_refused(m, ewise(m, (int64_t)1 << 32, (int64_t)1 << 32), EW_B "l3 = sch.fuse(loops=[l1, l2])\n",
                MLC_SCH_ERR_STRUCTURE, "fuse: the product of the extents of loop i and loop j overflows");
  mlc_tir_module_destroy(m);
}

/* ---- reorder ---------------------------------------------------------------------------- */

static void test_reorder(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 8);
  /* the seeds' mm_relu: split j by 4, then reorder j_0, k, j_1 */
  expect(m, f, MM_Y "l4, l5 = sch.split(loop=l2, factors=[None, 4])\nsch.reorder(ordered_loops=[l4, l3, l5])\n",
         MM_HEAD("8") "    for i, j_0, k, j_1 in T.grid(8, 2, 8, 4):\n"
                      "        with T.block(\"Y\"):\n"
                      "            vi = T.axis.spatial(8, i)\n"
                      "            vj = T.axis.spatial(8, j_0 * 4 + j_1)\n"
                      "            vk = T.axis.reduce(8, k)\n" MM_Y_BODY("        ") MM_C("8"),
         "reorder_mm");
  /* two loops named, the one between keeps its place; the reduce loop goes outermost */
  expect(m, f, MM_Y "sch.reorder(ordered_loops=[l3, l1])\n",
         MM_HEAD("8") "    for k, j, i in T.grid(8, 8, 8):\n"
                      "        with T.block(\"Y\"):\n"
                      "            vi = T.axis.spatial(8, i)\n"
                      "            vj = T.axis.spatial(8, j)\n"
                      "            vk = T.axis.reduce(8, k)\n" MM_Y_BODY("        ") MM_C("8"),
         "reorder_keep_between");
  /* loop kinds and annotations move with their loops; handles stay valid */
  expect(m, f,
         MM_Y "sch.parallel(loop=l1)\nsch.annotate(block_or_loop=l2, ann_key=\"a\", ann_val=1)\n"
              "sch.reorder(ordered_loops=[l2, l3, l1])\nsch.unroll(loop=l3)\n",
         MM_HEAD("8") "    for j in T.serial(8, annotations={\"a\": 1}):\n"
                      "        for k in T.unroll(8):\n"
                      "            for i in T.parallel(8):\n"
                      "                with T.block(\"Y\"):\n"
                      "                    vi = T.axis.spatial(8, i)\n"
                      "                    vj = T.axis.spatial(8, j)\n"
                      "                    vk = T.axis.reduce(8, k)\n" MM_Y_BODY("                ") MM_C("8"),
         "reorder_kinds");
  /* two independent blocks under the loops */
  expect(m, two_blocks(m, 1, 0), EW_B "sch.reorder(ordered_loops=[l2, l1])\n",
         "@T.prim_func\n"
         "def two_blocks(A: T.Buffer((4, 6), \"float32\"), B: T.Buffer((4, 6), \"float32\"), C: T.Buffer((4, 6), "
         "\"float32\")):\n"
         "    for j, i in T.grid(6, 4):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.spatial(4, i)\n"
         "            vj = T.axis.spatial(6, j)\n"
         "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
         "        with T.block(\"C\"):\n"
         "            vi = T.axis.spatial(4, i)\n"
         "            vj = T.axis.spatial(6, j)\n"
         "            C[vi, vj] = A[vi, vj] + T.float32(1)\n",
         "reorder_two_blocks");
  /* one loop: nothing moves */
  char *g = check_trace(m, f, 1, MM_Y "sch.reorder(ordered_loops=[l2])\n", NULL, "reorder_one");
  char *p = mlc_th_print_func(f);
  if (g) MLC_TH_EXPECT_STR(g, p);
  free(g);
  free(p);
  mlc_tir_module_destroy(m);
}

static void test_reorder_refused(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 8);
  check_refused(m, f,
                MM_Y "b4 = sch.get_block(name=\"C\")\nl5, l6 = sch.get_loops(block=b4)\nsch.reorder(ordered_loops=[l5, l2])\n",
                MLC_SCH_ERR_LOOP_NEST, "reorder: loop i and loop j are not in one nest: neither is inside the other");
  check_refused(m, f, MM_Y "sch.reorder(ordered_loops=[l2, l1, l2])\n", MLC_SCH_ERR_LOOP_NEST,
                "reorder: loop j is given twice");
  check_refused(m, two_blocks(m, 0, 0), EW_B "sch.reorder(ordered_loops=[l2, l1])\n", MLC_SCH_ERR_DEPENDENCE,
                "reorder: a sequence of statements lies between loop i and loop j: reorder across a statement that "
                "depends on the order");
  check_refused(m, offset(m, 1),
                "b0 = sch.get_block(name=\"B\")\nl1 = sch.get_loops(block=b0)\nb2 = sch.get_block(name=\"outer\")\n"
                "l3 = sch.get_loops(block=b2)\nsch.reorder(ordered_loops=[l1, l3])\n",
                MLC_SCH_ERR_DEPENDENCE, "reorder: a block lies between loop o and loop i");
  check_refused(m, triangle(m), EW_B "sch.reorder(ordered_loops=[l2, l1])\n", MLC_SCH_ERR_DEPENDENCE,
                "reorder: the range of loop j uses loop i: it must stay inside it");
  check_refused(m, skewed(m), "b0 = sch.get_block(name=\"S\")\nl1, l2 = sch.get_loops(block=b0)\nsch.reorder(ordered_loops=[l2, l1])\n",
                MLC_SCH_ERR_DEPENDENCE,
                "reorder: block \"S\" reads B at other indices than it writes: its iterations depend on their order");
  check_refused(m, two_blocks(m, 1, 1), EW_B "sch.reorder(ordered_loops=[l2, l1])\n", MLC_SCH_ERR_DEPENDENCE,
                "reorder: block \"B\" writes B, which block \"C\" under the same loops accesses");
  check_refused(m, f, MM_Y "sch.reorder(ordered_loops=[])\n", MLC_SCH_ERR_ARGUMENT,
                "reorder: ordered_loops: 0 loops given");
  check_refused(m, f, MM_Y "sch.reorder(ordered_loops=[l2, b0])\n", MLC_SCH_ERR_HANDLE, "is not a loop");
  mlc_tir_module_destroy(m);
}

/* The refusal of the skewed reorder matters: the swapped nest computes something else. */
static void test_reorder_check_can_fail(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = skewed(m);
  mlc_sch *s = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  mlc_tir_func *g = mlc_sch_func(s);
  mlc_tir_stmt *i = g->body, *j = i->loop.body;
  i->loop.body = j->loop.body; /* swap by hand */
  j->loop.body = i;
  g->body = j;
  CU_ASSERT(mlc_th_sched_diff(m, f, g, "skewed_swapped") > 0);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* ---- annotate ------------------------------------------------------------------------------ */

static void test_annotate(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 8);
  expect(m, f,
         MM_Y "sch.annotate(block_or_loop=l2, ann_key=\"pragma_unroll_explicit\", ann_val=4)\n"
              "sch.parallel(loop=l1)\nsch.annotate(block_or_loop=l1, ann_key=\"pragma_x\", ann_val=\"a\\\"b\")\n"
              "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.tiling_structure\", ann_val=\"SSRSRS\")\n"
              "sch.annotate(block_or_loop=b0, ann_key=\"ratio\", ann_val=0.5)\n"
              "sch.annotate(block_or_loop=b0, ann_key=\"whole\", ann_val=2.0)\n"
              "v4 = sch.sample_categorical(candidates=[0, 16, 64], probs=[0.5, 0.25, 0.25], decision=2)\n"
              "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.unroll_explicit\", ann_val=v4)\n"
              "sch.annotate(block_or_loop=l2, ann_key=\"pragma_unroll_explicit\", ann_val=8)\n"
              "sch.unannotate(block_or_loop=b0, ann_key=\"whole\")\n",
         MM_HEAD("8") "    for i in T.parallel(8, annotations={\"pragma_x\": \"a\\\"b\"}):\n"
                      "        for j in T.serial(8, annotations={\"pragma_unroll_explicit\": 8}):\n"
                      "            for k in range(8):\n"
                      "                with T.block(\"Y\"):\n"
                      "                    vi = T.axis.spatial(8, i)\n"
                      "                    vj = T.axis.spatial(8, j)\n"
                      "                    vk = T.axis.reduce(8, k)\n"
                      "                    T.block_attr({\"meta_schedule.tiling_structure\": \"SSRSRS\", \"ratio\": 0.5, "
                      "\"meta_schedule.unroll_explicit\": 64})\n" MM_Y_BODY("                ") MM_C("8"),
         "annotate_mixed");
  expect(m, f,
         MM_Y "sch.annotate(block_or_loop=b0, ann_key=\"whole\", ann_val=2.0)\n"
              "sch.annotate(block_or_loop=l3, ann_key=\"big\", ann_val=1e+300)\n"
              "sch.unannotate(block_or_loop=b0, ann_key=\"whole\")\n",
         MM_HEAD("8") "    for i, j in T.grid(8, 8):\n"
                      "        for k in T.serial(8, annotations={\"big\": 1e+300}):\n"
                      "            with T.block(\"Y\"):\n"
                      "                vi = T.axis.spatial(8, i)\n"
                      "                vj = T.axis.spatial(8, j)\n"
                      "                vk = T.axis.reduce(8, k)\n" MM_Y_BODY("            ") MM_C("8"),
         "annotate_float");
  /* annotations survive copying the function (a new schedule over the scheduled one) */
  mlc_sch *s = NULL, *r = NULL;
  mlc_sch_rv b, l[3];
  int n;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT(OK(mlc_sch_get_block(s, "Y", &b)));
  CU_ASSERT(OK(mlc_sch_get_loops(s, b, 3, l, &n)));
  CU_ASSERT(OK(mlc_sch_annotate(s, l[0], "pragma_unroll_explicit", MLC_SCH_INT_ARG(16))));
  CU_ASSERT(OK(mlc_sch_annotate(s, b, "f", MLC_SCH_FLOAT_ARG(0.25))));
  CU_ASSERT(OK(mlc_sch_annotate(s, b, "s", MLC_SCH_STR_ARG("x"))));
  CU_ASSERT(OK(mlc_sch_unannotate(s, b, "s")));
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, mlc_sch_func(s), 1, &r)));
  char *a = mlc_th_print_func(mlc_sch_func(s)), *c = mlc_th_print_func(mlc_sch_func(r));
  MLC_TH_EXPECT_STR(c, a);
  CU_ASSERT_PTR_NOT_NULL(strstr(a, "for i in T.serial(8, annotations={\"pragma_unroll_explicit\": 16}):\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(a, "T.block_attr({\"f\": 0.25})\n"));
  const mlc_tir_attr *at = mlc_tir_stmt_annot(mlc_sch_rv_stmt(r, 0) ? NULL : mlc_sch_func(r)->body->alloc.body->seq.stmts[0],
                                              "pragma_unroll_explicit");
  CU_ASSERT(at && at->kind == MLC_TIR_ATTR_INT && at->i == 16);
  /* the copy has its own array: changing the copy leaves the original */
  CU_ASSERT(OK(mlc_sch_get_block(r, "Y", &b)));
  CU_ASSERT(OK(mlc_sch_get_loops(r, b, 3, l, &n)));
  CU_ASSERT(OK(mlc_sch_unannotate(r, l[0], "pragma_unroll_explicit")));
  char *a2 = mlc_th_print_func(mlc_sch_func(s));
  MLC_TH_EXPECT_STR(a2, a);
  free(a);
  free(a2);
  free(c);
  mlc_sch_destroy(r);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

static void test_annotate_refused(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 8);
  check_refused(m, f, MM_Y "sch.unannotate(block_or_loop=l1, ann_key=\"pragma_unroll_explicit\")\n",
                MLC_SCH_ERR_ARGUMENT, "unannotate: loop i has no annotation \"pragma_unroll_explicit\"");
  check_refused(m, f,
                MM_Y "sch.annotate(block_or_loop=l1, ann_key=\"a\", ann_val=1)\n"
                     "sch.unannotate(block_or_loop=b0, ann_key=\"a\")\n",
                MLC_SCH_ERR_ARGUMENT, "unannotate: block \"Y\" has no annotation \"a\"");
  check_refused(m, f, MM_Y "sch.annotate(block_or_loop=l1, ann_key=\"a\", ann_val=[1, 2])\n", MLC_SCH_ERR_ARGUMENT,
                "annotate: ann_val of \"a\" on loop i must be an integer, a float, a string or a sampled integer");
  check_refused(m, f, MM_Y "sch.annotate(block_or_loop=l1, ann_key=\"a\", ann_val=None)\n", MLC_SCH_ERR_ARGUMENT,
                "must be an integer, a float, a string or a sampled integer");
  check_refused(m, f, MM_Y "sch.annotate(block_or_loop=l1, ann_key=\"\", ann_val=1)\n", MLC_SCH_ERR_ARGUMENT,
                "annotate: ann_key is empty");
  check_refused(m, f, MM_Y "sch.annotate(block_or_loop=l1, ann_key=4, ann_val=1)\n", MLC_SCH_ERR_ARGUMENT,
                "annotate: ann_key must be a string");
  check_refused(m, f, MM_Y "sch.annotate(block_or_loop=l1, ann_key=\"a\")\n", MLC_SCH_ERR_ARGUMENT,
                "annotate: missing argument ann_val");
  check_refused(m, f, MM_Y "sch.annotate(ann_key=\"a\", ann_val=1)\n", MLC_SCH_ERR_ARGUMENT,
                "annotate: missing argument block_or_loop");
  check_refused(m, f,
                MM_Y "v4 = sch.sample_categorical(candidates=[1], probs=[1])\n"
                     "sch.annotate(block_or_loop=v4, ann_key=\"a\", ann_val=1)\n",
                MLC_SCH_ERR_HANDLE, "annotate: block_or_loop: handle 5 is neither a block nor a loop");
  check_refused(m, f,
                MM_Y "l4 = sch.fuse(loops=[l1, l2])\nsch.annotate(block_or_loop=l1, ann_key=\"a\", ann_val=1)\n",
                MLC_SCH_ERR_HANDLE, "removed by fuse");
  mlc_tir_module_destroy(m);
}

/* The parser reads annotations back; what it refuses. */
static void test_annotate_parse(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const char *head = "@T.prim_func\ndef f(A: T.Buffer((8,), \"float32\")):\n";
  const char *good =
      "    for i in T.serial(8, annotations={\"s\": \"x\", \"b\": False, \"i\": -7, \"f\": -0.25, "
      "\"n\": T.float64(\"nan\")}):\n"
      "        with T.block(\"B\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            T.block_attr({\"k\": 1})\n"
      "            A[vi] = T.float32(0)\n"
      "    for j in T.thread_binding(8, thread=\"threadIdx.x\", annotations={\"t\": 2}):\n"
      "        A[j] = T.float32(1)\n";
  char src[2048];
  snprintf(src, sizeof src, "%s%s", head, good);
  mlc_tir_func *f = NULL;
  CU_ASSERT_FATAL(OK(mlc_tir_parse_func(m, src, strlen(src), "good", &f)));
  char *p = mlc_th_print_func(f);
  MLC_TH_EXPECT_STR(p, src);
  free(p);
  const mlc_tir_stmt *l = f->body->seq.stmts[0];
  const mlc_tir_attr *a = mlc_tir_stmt_annot(l, "i");
  CU_ASSERT(a && a->kind == MLC_TIR_ATTR_INT && a->i == -7);
  a = mlc_tir_stmt_annot(l, "f");
  CU_ASSERT(a && a->kind == MLC_TIR_ATTR_FLOAT && a->f == -0.25);
  a = mlc_tir_stmt_annot(l, "b");
  CU_ASSERT(a && a->kind == MLC_TIR_ATTR_BOOL && a->i == 0);
  a = mlc_tir_stmt_annot(l->loop.body, "k");
  CU_ASSERT(a && a->kind == MLC_TIR_ATTR_INT && a->i == 1);
  static const struct {
    const char *body, *msg;
  } bad[] = {
      {"    for i in T.serial(8, annotations={\"a\": 1, \"a\": 2}):\n        A[i] = T.float32(0)\n",
       "duplicate annotation \"a\""},
      {"    for i in T.serial(8, annotations={1: 1}):\n        A[i] = T.float32(0)\n", "an annotation key string"},
      {"    for i in T.serial(8, annotations={\"a\" 1}):\n        A[i] = T.float32(0)\n", "after the annotation key"},
      {"    for i in T.serial(8, annotations={\"a\": [1]}):\n        A[i] = T.float32(0)\n",
       "a string, True, False, an integer or a float"},
      {"    for i in T.serial(8, annotations={\"a\": 99999999999999999999}):\n        A[i] = T.float32(0)\n",
       "annotation \"a\": integer out of range for int64"},
      {"    for i in T.serial(8, annotations={\"a\": 1e999}):\n        A[i] = T.float32(0)\n",
       "out of range of float64"},
      {"    for i in T.serial(8, annotations={\"a\": 1 \"b\": 2}):\n        A[i] = T.float32(0)\n",
       "or '}' between annotations"},
      {"    for i in T.thread_binding(8, thread=\"threadIdx.x\", notes={}):\n        A[i] = T.float32(0)\n",
       "annotations="},
      {"    for i in T.serial(8, annotations=[]):\n        A[i] = T.float32(0)\n", "to open the annotations"},
      {"    for i in range(8):\n        with T.block(\"B\"):\n            vi = T.axis.spatial(8, i)\n"
       "            T.block_attr({\"k\": 1}, 2)\n            A[vi] = T.float32(0)\n",
       "after the block attributes"},
      {"    for i in range(8):\n        with T.block(\"B\"):\n            vi = T.axis.spatial(8, i)\n"
       "            A[vi] = T.float32(0)\n            T.block_attr({\"k\": 1})\n",
       "belongs at the start of a block, before its body"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(src, sizeof src, "%s%s", head, bad[i].body);
    mlc_tir_func *g = NULL;
    mlc_status st = mlc_tir_parse_func(m, src, strlen(src), "bad", &g);
    CU_ASSERT_PTR_NOT_NULL(st);
    if (st && !strstr(mlc_status_message(st), bad[i].msg))
      printf("\n--- expected\n%s\n--- got\n%s\n", bad[i].msg, mlc_status_message(st));
    if (st) CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(st), bad[i].msg));
    mlc_status_free(st);
  }
  /* damaged annotations: an error or a function that prints back to what it parses from, never a crash */
  snprintf(src, sizeof src, "%s%s", head, good);
  size_t len = strlen(src), from = strlen(head);
  char *buf = malloc(len + 1);
  uint64_t rng = 11;
  for (int round = 0; buf && round < 3000; round++) {
    memcpy(buf, src, len + 1);
    int edits = 1 + (int)(mlc_th_next(&rng) % 3);
    for (int e = 0; e < edits; e++) {
      size_t at = from + mlc_th_next(&rng) % (len - from);
      static const char pool[] = "{}:,\"()[]0123456789.-eT \nxa";
      buf[at] = pool[mlc_th_next(&rng) % (sizeof pool - 1)];
    }
    mlc_tir_func *g = NULL;
    mlc_status st = mlc_tir_parse_func(m, buf, len, "damaged", &g);
    if (!st && g) {
      char *once = mlc_th_print_func(g);
      mlc_tir_func *h = NULL;
      CU_ASSERT(OK(mlc_tir_parse_func(m, once, strlen(once), "printed", &h)));
      if (h) {
        char *twice = mlc_th_print_func(h);
        CU_ASSERT_STRING_EQUAL(twice, once);
        free(twice);
      }
      free(once);
    }
    mlc_status_free(st);
  }
  free(buf);
  mlc_tir_module_destroy(m);
}

/* ---- sampling -------------------------------------------------------------------------------- */

/* sample_perfect_tile of |loop|'s handle in a fresh schedule of |f| with |seed|; the factors in |out|. */
static int tile(mlc_tir_module *m, const mlc_tir_func *f, uint64_t seed, int n, int maxin, int64_t *out) {
  mlc_sch *s = NULL;
  mlc_sch_rv b, l[3], v[16];
  int k = 0, ok = 0;
  if (!OK(mlc_sch_create(m, f, seed, &s))) return 0;
  if (OK(mlc_sch_get_block(s, "Y", &b)) && OK(mlc_sch_get_loops(s, b, 3, l, &k)) &&
      OK(mlc_sch_sample_perfect_tile(s, l[1], n, maxin, NULL, v))) {
    for (int i = 0; i < n; i++) {
      CU_ASSERT_EQUAL(mlc_sch_rv_kind_of(s, v[i]), MLC_SCH_RV_INT);
      out[i] = mlc_sch_rv_int(s, v[i]);
    }
    ok = 1;
  }
  mlc_sch_destroy(s);
  return ok;
}

static void test_sample_perfect_tile(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f12 = mlc_th_mm_relu(m, 12), *f64 = mlc_th_mm_relu(m, 64);
  /* valid, deterministic for a seed, varied across seeds */
  int distinct = 0;
  int64_t first[3] = {0, 0, 0};
  for (uint64_t seed = 1; seed <= 200; seed++) {
    int64_t a[3], b[3];
    CU_ASSERT_FATAL(tile(m, f64, seed, 3, 8, a));
    CU_ASSERT_FATAL(tile(m, f64, seed, 3, 8, b));
    CU_ASSERT(a[0] == b[0] && a[1] == b[1] && a[2] == b[2]);
    CU_ASSERT_EQUAL(a[0] * a[1] * a[2], 64);
    CU_ASSERT(a[2] <= 8 && a[0] >= 1 && a[1] >= 1 && a[2] >= 1);
    if (seed == 1) memcpy(first, a, sizeof a);
    else if (memcmp(first, a, sizeof a)) distinct++;
  }
  CU_ASSERT(distinct > 100);
  /* uniform: 12 = 1*12, 2*6, 3*4, 4*3, 6*2, 12*1, innermost <= 4 leaves 4 tilings */
  int hits[13] = {0};
  for (uint64_t seed = 1; seed <= 4000; seed++) {
    int64_t a[2];
    CU_ASSERT_FATAL(tile(m, f12, seed, 2, 4, a));
    CU_ASSERT_EQUAL(a[0] * a[1], 12);
    if (a[1] >= 1 && a[1] <= 12) hits[a[1]]++;
  }
  CU_ASSERT(hits[6] == 0 && hits[12] == 0);
  for (int d = 1; d <= 4; d++) CU_ASSERT(hits[d] > 850 && hits[d] < 1150);
  /* no bound on the innermost (-1); a single factor */
  int64_t a[1];
  CU_ASSERT(tile(m, f64, 3, 1, -1, a) && a[0] == 64);
  /* a forced decision; the trace records it and replays it */
  const char *t = MM_Y "v4, v5, v6 = sch.sample_perfect_tile(loop=l2, n=3, max_innermost_factor=16, decision=[2, 4, 8])\n"
                       "l7, l8, l9 = sch.split(loop=l2, factors=[v4, v5, v6])\n";
  char *g = check_trace(m, f64, 9, t, NULL, "sample_perfect_tile_forced");
  CU_ASSERT(g && strstr(g, "for i, j_0, j_1, j_2, k in T.grid(64, 2, 4, 8, 64):"));
  free(g);
  /* a drawn decision prints and replays to the same factors */
  mlc_sch *s = NULL, *r = NULL;
  mlc_sch_rv b, l[3], v[3];
  int n;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f64, 77, &s)));
  CU_ASSERT(OK(mlc_sch_get_block(s, "Y", &b)));
  CU_ASSERT(OK(mlc_sch_get_loops(s, b, 3, l, &n)));
  CU_ASSERT(OK(mlc_sch_sample_perfect_tile(s, l[1], 3, 16, NULL, v)));
  CU_ASSERT(OK(mlc_sch_split(s, l[1], 3, (mlc_sch_arg[]){MLC_SCH_RV_ARG(v[0]), MLC_SCH_RV_ARG(v[1]), MLC_SCH_RV_ARG(v[2])}, l)));
  char *tr = mlc_th_print_trace(s);
  char want[256];
  snprintf(want, sizeof want, "sch.sample_perfect_tile(loop=l2, n=3, max_innermost_factor=16, decision=[%lld, %lld, %lld])",
           (long long)mlc_sch_rv_int(s, v[0]), (long long)mlc_sch_rv_int(s, v[1]), (long long)mlc_sch_rv_int(s, v[2]));
  CU_ASSERT_PTR_NOT_NULL(strstr(tr, want));
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f64, 12345, &r)));
  CU_ASSERT(OK(mlc_sch_apply_trace(r, tr, strlen(tr), "replay")));
  char *p1 = mlc_th_print_func(mlc_sch_func(s)), *p2 = mlc_th_print_func(mlc_sch_func(r)), *tr2 = mlc_th_print_trace(r);
  MLC_TH_EXPECT_STR(p2, p1);
  MLC_TH_EXPECT_STR(tr2, tr);
  CU_ASSERT_EQUAL(mlc_th_sched_same(m, f64, mlc_sch_func(r), "sample_replay"), 0);
  free(p1);
  free(p2);
  free(tr);
  free(tr2);
  mlc_sch_destroy(r);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

static void test_sample_categorical(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 4);
  const int64_t cand[4] = {1, 2, 4, 8};
  const double probs[4] = {0.5, 0.25, 0, 0.25};
  int hits[9] = {0};
  for (uint64_t seed = 1; seed <= 4000; seed++) {
    mlc_sch *s = NULL, *s2 = NULL;
    mlc_sch_rv v, v2;
    CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, seed, &s)));
    CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, seed, &s2)));
    CU_ASSERT(OK(mlc_sch_sample_categorical(s, 4, cand, probs, NULL, &v)));
    CU_ASSERT(OK(mlc_sch_sample_categorical(s2, 4, cand, probs, NULL, &v2)));
    int64_t x = mlc_sch_rv_int(s, v);
    CU_ASSERT_EQUAL(x, mlc_sch_rv_int(s2, v2));
    if (x >= 1 && x <= 8) hits[x]++;
    if (seed == 1) {
      /* the decision is the index; replay gives the same value */
      char *t = mlc_th_print_trace(s);
      char want[128];
      int idx = x == 1 ? 0 : x == 2 ? 1 : x == 4 ? 2 : 3;
      snprintf(want, sizeof want, "v0 = sch.sample_categorical(candidates=[1, 2, 4, 8], probs=[0.5, 0.25, 0.0, 0.25], decision=%d)\n", idx);
      MLC_TH_EXPECT_STR(t, want);
      mlc_sch *r = NULL;
      mlc_sch_rv out[4];
      int n = 0;
      CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 999, &r)));
      CU_ASSERT(OK(mlc_sch_apply_trace(r, t, strlen(t), "replay")));
      CU_ASSERT(OK(mlc_sch_get_child_blocks(r, 0, 4, out, &n)));
      CU_ASSERT_EQUAL(mlc_sch_rv_int(r, 1), x);
      mlc_sch_destroy(r);
      free(t);
    }
    mlc_sch_destroy(s);
    mlc_sch_destroy(s2);
  }
  CU_ASSERT_EQUAL(hits[4], 0);
  CU_ASSERT(hits[1] > 1800 && hits[1] < 2200);
  CU_ASSERT(hits[2] > 850 && hits[2] < 1150);
  CU_ASSERT(hits[8] > 850 && hits[8] < 1150);
  /* a forced decision */
  mlc_sch *s = NULL;
  mlc_sch_rv v;
  int64_t d = 3;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT(OK(mlc_sch_sample_categorical(s, 4, cand, probs, &d, &v)));
  CU_ASSERT_EQUAL(mlc_sch_rv_int(s, v), 8);
  d = 2;
  ERR(mlc_sch_sample_categorical(s, 4, cand, probs, &d, &v), "sample_categorical: decision 2 picks a candidate of probability 0");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_SAMPLE);
  const double inf[2] = {0.5, 1.0 / 0.0};
  ERR(mlc_sch_sample_categorical(s, 2, cand, inf, NULL, &v), "probability 1 (inf) is not a finite number >= 0");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_sch_trace_len(s), 1);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

static void test_sample_refused(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mlc_th_mm_relu(m, 64);
#define SPT MM_Y "v4, v5 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16"
  check_refused(m, f, SPT ", decision=[4, 8])\n", MLC_SCH_ERR_SAMPLE,
                "sample_perfect_tile: decision for loop j: the product of the factors is not the extent 64");
  check_refused(m, f, SPT ", decision=[2, 32])\n", MLC_SCH_ERR_SAMPLE,
                "decision for loop j: the innermost factor 32 exceeds 16");
  check_refused(m, f, SPT ", decision=[64])\n", MLC_SCH_ERR_SAMPLE, "decision for loop j must be a list of 2 integers");
  check_refused(m, f, SPT ", decision=[0, 64])\n", MLC_SCH_ERR_SAMPLE, "decision for loop j: item 0 is not a positive integer");
  check_refused(m, f, SPT ", decision=[4611686018427387904, 4])\n", MLC_SCH_ERR_SAMPLE,
                "the product of the factors is not the extent 64");
  check_refused(m, f, SPT ", decision=8)\n", MLC_SCH_ERR_SAMPLE, "must be a list of 2 integers");
  check_refused(m, f, MM_Y "v4 = sch.sample_perfect_tile(loop=l2, n=1, max_innermost_factor=16)\n", MLC_SCH_ERR_ARGUMENT,
                "sample_perfect_tile: loop j: no tiling of 64 into 1 factors has an innermost factor <= 16");
  check_refused(m, f, MM_Y "v4 = sch.sample_perfect_tile(loop=l2, n=0)\n", MLC_SCH_ERR_ARGUMENT,
                "n = 0 tiles of loop j (1 to 16)");
  check_refused(m, f, MM_Y "v4, v5 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=0)\n", MLC_SCH_ERR_ARGUMENT,
                "max_innermost_factor = 0 (>= 1, or -1 for no bound)");
  check_refused(m, ewise_sym(m), EW_B "v3, v4 = sch.sample_perfect_tile(loop=l1, n=2)\n", MLC_SCH_ERR_ARGUMENT,
                "the extent n of loop i is symbolic: a perfect tile needs a constant");
  check_refused(m, ewise(m, (int64_t)1 << 41, 1), EW_B "v3, v4 = sch.sample_perfect_tile(loop=l1, n=2)\n",
                MLC_SCH_ERR_ARGUMENT, "the extent 2199023255552 of loop i cannot be tiled (1 to 2^40)");
  check_refused(m, f, MM_Y "v4, v5 = sch.sample_perfect_tile(loop=b0, n=2)\n", MLC_SCH_ERR_HANDLE, "is not a loop");
#define SC "v4 = sch.sample_categorical("
  check_refused(m, f, SC "candidates=[1, 2], probs=[0.5, 0.5], decision=2)\n", MLC_SCH_ERR_SAMPLE,
                "sample_categorical: decision 2 is not an index of the 2 candidates");
  check_refused(m, f, SC "candidates=[1, 2], probs=[0.5, 0.5], decision=-1)\n", MLC_SCH_ERR_SAMPLE,
                "decision -1 is not an index of the 2 candidates");
  check_refused(m, f, SC "candidates=[1, 2], probs=[0.5, 0.5], decision=[1])\n", MLC_SCH_ERR_SAMPLE,
                "decision must be the index of a candidate");
  check_refused(m, f, SC "candidates=[1, 2], probs=[0.5])\n", MLC_SCH_ERR_ARGUMENT, "2 candidates but 1 probabilities");
  check_refused(m, f, SC "candidates=[], probs=[])\n", MLC_SCH_ERR_ARGUMENT, "sample_categorical: candidates is empty");
  check_refused(m, f, SC "candidates=[1, 2], probs=[0.5, -0.5])\n", MLC_SCH_ERR_ARGUMENT,
                "probability 1 (-0.5) is not a finite number >= 0");
  check_refused(m, f, SC "candidates=[1, 2], probs=[0, 0.0])\n", MLC_SCH_ERR_ARGUMENT,
                "the probabilities sum to 0: nothing can be drawn");
  check_refused(m, f, SC "candidates=[1, 2], probs=[1, \"x\"])\n", MLC_SCH_ERR_ARGUMENT, "probs must be numbers");
  check_refused(m, f, SC "candidates=[1, 2.5], probs=[1, 1])\n", MLC_SCH_ERR_ARGUMENT, "candidates must be an integer");
  mlc_tir_module_destroy(m);
}

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"split", test_split},
                                      {"split_refused", test_split_refused},
                                      {"fuse", test_fuse},
                                      {"fuse_refused", test_fuse_refused},
                                      {"reorder", test_reorder},
                                      {"reorder_refused", test_reorder_refused},
                                      {"reorder_check_can_fail", test_reorder_check_can_fail},
                                      {"annotate", test_annotate},
                                      {"annotate_refused", test_annotate_refused},
                                      {"annotate_parse", test_annotate_parse},
                                      {"sample_perfect_tile", test_sample_perfect_tile},
                                      {"sample_categorical", test_sample_categorical},
                                      {"sample_refused", test_sample_refused},
                                      {NULL, NULL}};
  CU_pSuite suite = CU_add_suite("sched_loops", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (int i = 0; suite && tests[i].pName; i++) CU_add_test(suite, tests[i].pName, tests[i].pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_sched_loops", fns);
}
