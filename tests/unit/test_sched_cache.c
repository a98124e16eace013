/*
** test_sched_cache.c: the cache, layout and reduction primitives
** (decompose_reduction, cache_read, cache_write, transform_layout): what
** each accepts (printed result, numerical check against the unscheduled
** function, replay of the printed trace) and each thing it refuses (the
** error class and message).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "lower/arith.h"
#include "lower/lower.h"
#include "lower/schedule/schedule.h"
#include "tests/harness_kernel.h"
#include "tests/harness_sched.h"
#include "tests/testutil.h"

#define OK(expr) MLC_TEST_OK(expr)
#define ERR(expr, ...) MLC_TEST_ERR((expr), MLC_INVALID_ARGUMENT, __VA_ARGS__)

/* The scheduled function prints as |want|, computes what |f| does, and its
** printed trace replays on |f| to the same function. */
static void check_result(mlc_tir_module *m, const mlc_tir_func *f, mlc_sch *s, const char *want, const char *name) {
  char *got = mlc_th_print_func(mlc_sch_func(s));
  if (want) MLC_TH_EXPECT_STR(got, want);
  mlc_th_sched_same(m, f, mlc_sch_func(s), name);
  char *t = mlc_th_print_trace(s);
  mlc_sch *r = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 7, &r)));
  CU_ASSERT(OK(mlc_sch_apply_trace(r, t, strlen(t), name)));
  char *again = mlc_th_print_func(mlc_sch_func(r)), *t2 = mlc_th_print_trace(r);
  CU_ASSERT_STRING_EQUAL(again, got);
  CU_ASSERT_STRING_EQUAL(t2, t);
  free(again);
  free(t2);
  free(t);
  free(got);
  mlc_sch_destroy(r);
}

/* The name of block handle |b| ("" when it is not a block). */
static const char *block_name(const mlc_sch *s, mlc_sch_rv b) {
  const mlc_tir_stmt *st = mlc_sch_rv_stmt(s, b);
  return st && st->kind == MLC_TIR_BLOCK ? st->block.name : "";
}

/* The schedule's function is still |f| (a refusal changed nothing). */
static void check_unchanged(const mlc_tir_func *f, const mlc_sch *s) {
  char *a = mlc_th_print_func(f), *b = mlc_th_print_func(mlc_sch_func(s));
  CU_ASSERT_STRING_EQUAL(a, b);
  free(a);
  free(b);
}

/* ---- sample functions --------------------------------------------------------------- */

static mlc_tir_iter_var iter(mlc_tir_var *v, mlc_tir_iter_kind k, mlc_tir_expr *ext, mlc_tir_expr *binding,
                             mlc_tir_module *m) {
  mlc_tir_iter_var it = {v, k, mlc_tir_i64(m, 0), ext, binding};
  return it;
}

static mlc_tir_stmt *loop(mlc_tir_module *m, mlc_tir_var *v, int64_t ext, mlc_tir_stmt *body) {
  return mlc_tir_for(m, v, mlc_tir_i64(m, 0), mlc_tir_i64(m, ext), MLC_TIR_FOR_SERIAL, NULL, body);
}

/*
** The seeds' mm_relu after sch.split(j, factors=[None, 4]) and
** sch.reorder(j0, k, j1): for i, j0, k, j1: Y[vi, vj] += A[vi, vk] * B[vk, vj]
** with vj = j0 * 4 + j1; C = relu(Y) as usual.  With |in_j0| the relu
** nest sits under j0 (after reverse_compute_at): for ax0: C[vi, j0*4+ax0].
*/
static mlc_tir_func *mm_split(mlc_tir_module *m, int64_t n, int in_j0) {
  const int64_t dims[2] = {n, n};
  const mlc_dtype f32 = MLC_DTYPE_F32, i64 = MLC_DTYPE_I64;
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", f32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", f32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *C = mlc_tir_buffer_new_c(m, "C", f32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *Y = mlc_tir_buffer_new_c(m, "Y", f32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = mlc_tir_var_new(m, "i", i64), *j0 = mlc_tir_var_new(m, "j0", i64);
  mlc_tir_var *j1 = mlc_tir_var_new(m, "j1", i64), *k = mlc_tir_var_new(m, "k", i64);
  mlc_tir_var *vi = mlc_tir_var_new(m, "vi", i64), *vj = mlc_tir_var_new(m, "vj", i64);
  mlc_tir_var *vk = mlc_tir_var_new(m, "vk", i64);
  mlc_tir_expr *N = mlc_tir_i64(m, n);
  mlc_tir_expr *jb = mlc_tir_add(m, mlc_tir_mul(m, mlc_tir_ref(m, j0), mlc_tir_i64(m, 4)), mlc_tir_ref(m, j1));
  mlc_tir_iter_var its[3] = {iter(vi, MLC_TIR_ITER_SPATIAL, N, mlc_tir_ref(m, i), m),
                             iter(vj, MLC_TIR_ITER_SPATIAL, N, jb, m),
                             iter(vk, MLC_TIR_ITER_REDUCE, N, mlc_tir_ref(m, k), m)};
  mlc_tir_expr *yij[2] = {mlc_tir_ref(m, vi), mlc_tir_ref(m, vj)};
  mlc_tir_expr *aik[2] = {mlc_tir_ref(m, vi), mlc_tir_ref(m, vk)};
  mlc_tir_expr *bkj[2] = {mlc_tir_ref(m, vk), mlc_tir_ref(m, vj)};
  mlc_tir_stmt *init = mlc_tir_store(m, Y, 2, yij, mlc_tir_float(m, f32, 0));
  mlc_tir_expr *prod = mlc_tir_mul(m, mlc_tir_load(m, A, 2, aik), mlc_tir_load(m, B, 2, bkj));
  mlc_tir_stmt *upd = mlc_tir_store(m, Y, 2, yij, mlc_tir_add(m, mlc_tir_load(m, Y, 2, yij), prod));
  mlc_tir_stmt *ynest = loop(m, k, n, loop(m, j1, 4, mlc_tir_block(m, "Y", 3, its, init, upd)));

  mlc_tir_var *i2 = in_j0 ? NULL : mlc_tir_var_new(m, "i", i64), *jc = mlc_tir_var_new(m, in_j0 ? "ax0" : "j", i64);
  mlc_tir_var *vi2 = mlc_tir_var_new(m, "vi", i64), *vj2 = mlc_tir_var_new(m, "vj", i64);
  mlc_tir_expr *cj = in_j0 ? mlc_tir_add(m, mlc_tir_mul(m, mlc_tir_ref(m, j0), mlc_tir_i64(m, 4)), mlc_tir_ref(m, jc))
                           : mlc_tir_ref(m, jc);
  mlc_tir_iter_var its2[2] = {iter(vi2, MLC_TIR_ITER_SPATIAL, N, mlc_tir_ref(m, in_j0 ? i : i2), m),
                              iter(vj2, MLC_TIR_ITER_SPATIAL, N, cj, m)};
  mlc_tir_expr *cij[2] = {mlc_tir_ref(m, vi2), mlc_tir_ref(m, vj2)};
  mlc_tir_stmt *st = mlc_tir_store(m, C, 2, cij, mlc_tir_max(m, mlc_tir_load(m, Y, 2, cij), mlc_tir_float(m, f32, 0)));
  mlc_tir_stmt *cblk = mlc_tir_block(m, "C", 2, its2, NULL, st);
  mlc_tir_stmt *body;
  if (in_j0) {
    body = loop(m, i, n, loop(m, j0, n / 4, mlc_tir_seq2(m, ynest, loop(m, jc, 4, cblk))));
  } else {
    body = mlc_tir_seq2(m, loop(m, i, n, loop(m, j0, n / 4, ynest)), loop(m, i2, n, loop(m, jc, n, cblk)));
  }
  mlc_tir_buffer *params[3] = {A, B, C};
  return mlc_tir_func_new(m, "mm_relu", 3, params, mlc_tir_allocate(m, Y, body));
}

/* ---- decompose_reduction ---------------------------------------------------------------- */

static void test_decompose_seeds(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = mm_split(m, 16, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  mlc_sch *s = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  mlc_sch_rv y = 0, l[4] = {0}, init = 0;
  int n;
  CU_ASSERT(OK(mlc_sch_get_block(s, "Y", &y)));
  CU_ASSERT(OK(mlc_sch_get_loops(s, y, 4, l, &n)));
  CU_ASSERT(OK(mlc_sch_decompose_reduction(s, y, l[2], &init)));
  CU_ASSERT_STRING_EQUAL(block_name(s, init), "Y_init");
  CU_ASSERT_STRING_EQUAL(block_name(s, y), "Y_update");
  check_result(m, f, s,
      "@T.prim_func\n"
      "def mm_relu(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
      "    Y = T.alloc_buffer((16, 16), \"float32\")\n"
      "    for i, j0 in T.grid(16, 4):\n"
      "        for j1_init in range(4):\n"
      "            with T.block(\"Y_init\"):\n"
      "                vi = T.axis.spatial(16, i)\n"
      "                vj = T.axis.spatial(16, j0 * 4 + j1_init)\n"
      "                Y[vi, vj] = T.float32(0)\n"
      "        for k, j1 in T.grid(16, 4):\n"
      "            with T.block(\"Y_update\"):\n"
      "                vi = T.axis.spatial(16, i)\n"
      "                vj = T.axis.spatial(16, j0 * 4 + j1)\n"
      "                vk = T.axis.reduce(16, k)\n"
      "                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]\n"
      "        for ax0 in range(4):\n"
      "            with T.block(\"C\"):\n"
      "                vi = T.axis.spatial(16, i)\n"
      "                vj = T.axis.spatial(16, j0 * 4 + ax0)\n"
      "                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))\n",
      "decompose_seeds");
  char *t = mlc_th_print_trace(s);
  MLC_TH_EXPECT_STR(t, "b0 = sch.get_block(name=\"Y\")\n"
                "l1, l2, l3, l4 = sch.get_loops(block=b0)\n"
                "b5 = sch.decompose_reduction(block=b0, loop=l3)\n");
  free(t);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* for i in range(ext): with T.block(name): vi = T.axis.spatial(ext, i); body */
static mlc_tir_stmt *nest1(mlc_tir_module *m, const char *name, mlc_tir_expr *ext, mlc_tir_var *vi,
                           mlc_tir_stmt *body) {
  mlc_tir_var *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64);
  mlc_tir_iter_var it = iter(vi, MLC_TIR_ITER_SPATIAL, ext, mlc_tir_ref(m, i), m);
  return mlc_tir_for(m, i, mlc_tir_i64(m, 0), ext, MLC_TIR_FOR_SERIAL, NULL, mlc_tir_block(m, name, 1, &it, NULL, body));
}

static mlc_tir_buffer *buf1(mlc_tir_module *m, const char *name, mlc_dtype dt, int64_t n) {
  return mlc_tir_buffer_new_c(m, name, dt, 1, &n, MLC_TIR_SCOPE_GLOBAL);
}

#define VI mlc_tir_ref(m, vi)
#define I64C(v) mlc_tir_i64(m, v)

/* Small 1-d functions over A (16 floats) and B: |kind| 0: B[vi] = A[vi + 2]
** (8 of them: part of A); 1: B[vi] = A[I[vi]] (a gather, I of 8 int64);
** 2: B[vi * 2] = A[vi] (B of 16, every other element); 3: B[vi] = B[vi] +
** A[vi] (no init). */
static mlc_tir_func *small(mlc_tir_module *m, int kind) {
  const mlc_dtype f32 = MLC_DTYPE_F32;
  mlc_tir_buffer *A = buf1(m, "A", f32, 16), *B = buf1(m, "B", f32, kind >= 2 ? 16 : 8);
  mlc_tir_buffer *I = buf1(m, "I", MLC_DTYPE_I64, 8);
  mlc_tir_var *vi = mlc_tir_var_new(m, "vi", MLC_DTYPE_I64);
  mlc_tir_expr *ai = NULL, *bi = VI;
  switch (kind) {
    case 0: ai = mlc_tir_add(m, VI, I64C(2)); break;
    case 1: ai = mlc_tir_load(m, I, 1, (mlc_tir_expr *[]){VI}); break;
    case 2:
      ai = VI;
      bi = mlc_tir_mul(m, VI, I64C(2));
      break;
    default: ai = VI; break;
  }
  mlc_tir_expr *val = mlc_tir_load(m, A, 1, &ai);
  if (kind == 3) val = mlc_tir_add(m, mlc_tir_load(m, B, 1, &bi), val);
  mlc_tir_stmt *body = nest1(m, "B", I64C(8), vi, mlc_tir_store(m, B, 1, &bi, val));
  mlc_tir_buffer *params[3] = {A, kind == 1 ? I : B, B};
  return mlc_tir_func_new(m, "small", kind == 1 ? 3 : 2, params, body);
}

/* B[vi] = A[vi] over A, B of n elements, n a scalar parameter. */
static mlc_tir_func *symbolic(mlc_tir_module *m) {
  mlc_tir_var *n = mlc_tir_var_new(m, "n", MLC_DTYPE_I64);
  mlc_tir_expr *N = mlc_tir_ref(m, n);
  mlc_tir_buffer *A = mlc_tir_buffer_new(m, "A", MLC_DTYPE_F32, 1, &N, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new(m, "B", MLC_DTYPE_F32, 1, &N, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *vi = mlc_tir_var_new(m, "vi", MLC_DTYPE_I64);
  mlc_tir_expr *idx = VI;
  mlc_tir_stmt *body = nest1(m, "B", N, vi, mlc_tir_store(m, B, 1, &idx, mlc_tir_load(m, A, 1, &idx)));
  mlc_tir_buffer *params[2] = {A, B};
  mlc_tir_func *f = mlc_tir_func_new(m, "copy", 2, params, body);
  if (!f || mlc_tir_func_add_scalar(m, f, n, 0, 0)) return NULL;
  return f;
}

/* A schedule over |f| with handles of blocks Y and C (when present) and the loops of Y. */
typedef struct fixture {
  mlc_tir_module *m;
  mlc_tir_func *f;
  mlc_sch *s;
  mlc_sch_rv y, c, l[4];
  int nl;
} fixture;

static int setup(fixture *x, mlc_tir_func *(*make)(mlc_tir_module *, int64_t), int64_t n) {
  memset(x, 0, sizeof *x);
  if (!(x->m = mlc_th_tir_module())) return 0;
  x->f = make(x->m, n);
  CU_ASSERT_PTR_NOT_NULL(x->f);
  if (!x->f || !OK(mlc_sch_create(x->m, x->f, 1, &x->s))) return 0;
  if (!OK(mlc_sch_get_block(x->s, "Y", &x->y)) || !OK(mlc_sch_get_block(x->s, "C", &x->c))) return 0;
  return OK(mlc_sch_get_loops(x->s, x->y, 4, x->l, &x->nl));
}

static void teardown(fixture *x) {
  mlc_sch_destroy(x->s);
  mlc_tir_module_destroy(x->m);
}

static mlc_tir_func *mm_split_in_j0(mlc_tir_module *m, int64_t n) { return mm_split(m, n, 1); }
static mlc_tir_func *mm_split_apart(mlc_tir_module *m, int64_t n) { return mm_split(m, n, 0); }

/* ---- decompose_reduction ---------------------------------------------------------------- */

static void test_decompose_outer(void) {
  /* at i: the init gets copies of i and j, before the whole nest */
  fixture x;
  if (!setup(&x, mlc_th_mm_relu, 8)) CU_FAIL_FATAL("setup");
  mlc_sch_rv init;
  CU_ASSERT(OK(mlc_sch_decompose_reduction(x.s, x.y, x.l[0], &init)));
  check_result(x.m, x.f, x.s,
      "@T.prim_func\n"
      "def mm_relu(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8, 8), \"float32\")):\n"
      "    T.func_attr({\"global_symbol\": \"mm_relu\", \"tir.noalias\": True})\n"
      "    Y = T.alloc_buffer((8, 8), \"float32\")\n"
      "    for i_init, j_init in T.grid(8, 8):\n"
      "        with T.block(\"Y_init\"):\n"
      "            vi = T.axis.spatial(8, i_init)\n"
      "            vj = T.axis.spatial(8, j_init)\n"
      "            Y[vi, vj] = T.float32(0)\n"
      "    for i, j, k in T.grid(8, 8, 8):\n"
      "        with T.block(\"Y_update\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            vj = T.axis.spatial(8, j)\n"
      "            vk = T.axis.reduce(8, k)\n"
      "            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]\n"
      "    for i, j in T.grid(8, 8):\n"
      "        with T.block(\"C\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            vj = T.axis.spatial(8, j)\n"
      "            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))\n", "decompose_at_i");
  teardown(&x);
  /* at j: the init under i, with a copy of j */
  if (!setup(&x, mlc_th_mm_relu, 8)) CU_FAIL_FATAL("setup");
  CU_ASSERT(OK(mlc_sch_decompose_reduction(x.s, x.y, x.l[1], NULL)));
  check_result(x.m, x.f, x.s,
      "@T.prim_func\n"
      "def mm_relu(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8, 8), \"float32\")):\n"
      "    T.func_attr({\"global_symbol\": \"mm_relu\", \"tir.noalias\": True})\n"
      "    Y = T.alloc_buffer((8, 8), \"float32\")\n"
      "    for i in range(8):\n"
      "        for j_init in range(8):\n"
      "            with T.block(\"Y_init\"):\n"
      "                vi = T.axis.spatial(8, i)\n"
      "                vj = T.axis.spatial(8, j_init)\n"
      "                Y[vi, vj] = T.float32(0)\n"
      "        for j, k in T.grid(8, 8):\n"
      "            with T.block(\"Y_update\"):\n"
      "                vi = T.axis.spatial(8, i)\n"
      "                vj = T.axis.spatial(8, j)\n"
      "                vk = T.axis.reduce(8, k)\n"
      "                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]\n"
      "    for i, j in T.grid(8, 8):\n"
      "        with T.block(\"C\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            vj = T.axis.spatial(8, j)\n"
      "            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))\n", "decompose_at_j");
  teardown(&x);
  /* at k, apart from the relu */
  if (!setup(&x, mm_split_apart, 8)) CU_FAIL_FATAL("setup");
  CU_ASSERT(OK(mlc_sch_decompose_reduction(x.s, x.y, x.l[2], NULL)));
  check_result(x.m, x.f, x.s, NULL, "decompose_apart");
  teardown(&x);
}

static void test_decompose_refused(void) {
  fixture x;
  if (!setup(&x, mm_split_in_j0, 8)) CU_FAIL_FATAL("setup");
  mlc_sch_rv lc[3], b;
  int n;
  CU_ASSERT(OK(mlc_sch_get_loops(x.s, x.c, 3, lc, &n)));
  ERR(mlc_sch_decompose_reduction(x.s, x.c, lc[0], &b), "decompose_reduction: block \"C\" has no init: it is not a reduction block");
  CU_ASSERT_EQUAL(mlc_sch_last_error(x.s), MLC_SCH_ERR_STRUCTURE);
  ERR(mlc_sch_decompose_reduction(x.s, x.y, lc[2], &b), "decompose_reduction: loop ax0 is not a loop around block \"Y\"");
  CU_ASSERT_EQUAL(mlc_sch_last_error(x.s), MLC_SCH_ERR_LOOP_NEST);
  ERR(mlc_sch_decompose_reduction(x.s, x.y, x.l[3], &b),
      "decompose_reduction: loop j1 is inside loop k, which binds the reduce iteration variable vk of block \"Y\"");
  CU_ASSERT_EQUAL(mlc_sch_last_error(x.s), MLC_SCH_ERR_REDUCTION);
  ERR(mlc_sch_decompose_reduction(x.s, x.l[0], x.l[2], &b), "decompose_reduction: block: handle 3 is not a block");
  CU_ASSERT_EQUAL(mlc_sch_last_error(x.s), MLC_SCH_ERR_HANDLE);
  check_unchanged(x.f, x.s);
  CU_ASSERT_EQUAL(mlc_sch_trace_len(x.s), 4);
  /* decomposed once: no init left */
  CU_ASSERT(OK(mlc_sch_decompose_reduction(x.s, x.y, x.l[2], &b)));
  ERR(mlc_sch_decompose_reduction(x.s, x.y, x.l[2], &b), "block \"Y_update\" has no init");
  teardown(&x);
}

/* ---- cache_read ---------------------------------------------------------------------------- */

static void test_cache_read(void) {
  fixture x;
  if (!setup(&x, mlc_th_mm_relu, 8)) CU_FAIL_FATAL("setup");
  mlc_sch_rv b = 0, b2 = 0;
  CU_ASSERT(OK(mlc_sch_cache_read(x.s, x.y, 1, "local", &b)));
  CU_ASSERT_STRING_EQUAL(block_name(x.s, b), "B_local");
  /* Y is written before C: its copy goes after the nest of Y */
  CU_ASSERT(OK(mlc_sch_cache_read(x.s, x.c, 0, "shared", &b2)));
  check_result(x.m, x.f, x.s,
      "@T.prim_func\n"
      "def mm_relu(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8, 8), \"float32\")):\n"
      "    T.func_attr({\"global_symbol\": \"mm_relu\", \"tir.noalias\": True})\n"
      "    Y_shared = T.alloc_buffer((8, 8), \"float32\", scope=\"shared\")\n"
      "    B_local = T.alloc_buffer((8, 8), \"float32\", scope=\"local\")\n"
      "    Y = T.alloc_buffer((8, 8), \"float32\")\n"
      "    for ax0, ax1 in T.grid(8, 8):\n"
      "        with T.block(\"B_local\"):\n"
      "            v0 = T.axis.spatial(8, ax0)\n"
      "            v1 = T.axis.spatial(8, ax1)\n"
      "            B_local[v0, v1] = B[v0, v1]\n"
      "    for i, j, k in T.grid(8, 8, 8):\n"
      "        with T.block(\"Y\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            vj = T.axis.spatial(8, j)\n"
      "            vk = T.axis.reduce(8, k)\n"
      "            with T.init():\n"
      "                Y[vi, vj] = T.float32(0)\n"
      "            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B_local[vk, vj]\n"
      "    for ax0, ax1 in T.grid(8, 8):\n"
      "        with T.block(\"Y_shared\"):\n"
      "            v0 = T.axis.spatial(8, ax0)\n"
      "            v1 = T.axis.spatial(8, ax1)\n"
      "            Y_shared[v0, v1] = Y[v0, v1]\n"
      "    for i, j in T.grid(8, 8):\n"
      "        with T.block(\"C\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            vj = T.axis.spatial(8, j)\n"
      "            C[vi, vj] = T.max(Y_shared[vi, vj], T.float32(0))\n", "cache_read");
  teardown(&x);
  /* part of a buffer: the copy covers what the block reads */
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = small(m, 0);
  mlc_sch *s = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT(OK(mlc_sch_get_block(s, "B", &b)));
  CU_ASSERT(OK(mlc_sch_cache_read(s, b, 0, "global", &b2)));
  check_result(m, f, s,
      "@T.prim_func\n"
      "def small(A: T.Buffer((16,), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
      "    A_global = T.alloc_buffer((16,), \"float32\")\n"
      "    for ax0 in range(8):\n"
      "        with T.block(\"A_global\"):\n"
      "            v0 = T.axis.spatial((2, 10), ax0 + 2)\n"
      "            A_global[v0] = A[v0]\n"
      "    for i in range(8):\n"
      "        with T.block(\"B\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            B[vi] = A_global[vi + 2]\n", "cache_read_part");
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

static void test_cache_read_refused(void) {
  fixture x;
  if (!setup(&x, mm_split_in_j0, 8)) CU_FAIL_FATAL("setup");
  mlc_sch_rv b;
  ERR(mlc_sch_cache_read(x.s, x.y, 2, "local", &b), "cache_read: block \"Y\" reads 2 buffers: no read buffer 2");
  CU_ASSERT_EQUAL(mlc_sch_last_error(x.s), MLC_SCH_ERR_ARGUMENT);
  ERR(mlc_sch_cache_read(x.s, x.y, -1, "local", &b), "no read buffer -1");
  ERR(mlc_sch_cache_read(x.s, x.y, 0, "texture", &b), "cache_read: unknown storage scope \"texture\"");
  CU_ASSERT_EQUAL(mlc_sch_last_error(x.s), MLC_SCH_ERR_ARGUMENT);
  /* C reads Y in the nest that computes Y */
  ERR(mlc_sch_cache_read(x.s, x.c, 0, "local", &b),
      "cache_read: loop i, the loop nest holding block \"C\", writes Y, which block \"C\" reads");
  CU_ASSERT_EQUAL(mlc_sch_last_error(x.s), MLC_SCH_ERR_DEPENDENCE);
  check_unchanged(x.f, x.s);
  teardown(&x);
  /* a gather has no bound on what it reads */
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = small(m, 1);
  mlc_sch *s = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT(OK(mlc_sch_get_block(s, "B", &b)));
  ERR(mlc_sch_cache_read(s, b, 1, "local", &b), "cache_read: the region block \"B\" reads of A has no bound");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_REGION);
  /* the index buffer itself is fine */
  CU_ASSERT(OK(mlc_sch_cache_read(s, b, 0, "local", &b)));
  check_result(m, f, s, NULL, "cache_read_index");
  mlc_sch_destroy(s);
  /* a block that reads what it writes */
  f = small(m, 3);
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT(OK(mlc_sch_get_block(s, "B", &b)));
  ERR(mlc_sch_cache_read(s, b, 0, "local", &b), "cache_read: loop i, the loop nest holding block \"B\", writes B");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_DEPENDENCE);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* ---- cache_write ------------------------------------------------------------------------------ */

static void test_cache_write(void) {
  fixture x;
  if (!setup(&x, mlc_th_mm_relu, 8)) CU_FAIL_FATAL("setup");
  mlc_sch_rv b = 0, b2 = 0;
  CU_ASSERT(OK(mlc_sch_cache_write(x.s, x.y, 0, "local", &b)));
  CU_ASSERT_STRING_EQUAL(block_name(x.s, b), "Y_local");
  CU_ASSERT(OK(mlc_sch_cache_write(x.s, x.c, 0, "global", &b2)));
  check_result(x.m, x.f, x.s,
      "@T.prim_func\n"
      "def mm_relu(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8, 8), \"float32\")):\n"
      "    T.func_attr({\"global_symbol\": \"mm_relu\", \"tir.noalias\": True})\n"
      "    C_global = T.alloc_buffer((8, 8), \"float32\")\n"
      "    Y_local = T.alloc_buffer((8, 8), \"float32\", scope=\"local\")\n"
      "    Y = T.alloc_buffer((8, 8), \"float32\")\n"
      "    for i, j, k in T.grid(8, 8, 8):\n"
      "        with T.block(\"Y\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            vj = T.axis.spatial(8, j)\n"
      "            vk = T.axis.reduce(8, k)\n"
      "            with T.init():\n"
      "                Y_local[vi, vj] = T.float32(0)\n"
      "            Y_local[vi, vj] = Y_local[vi, vj] + A[vi, vk] * B[vk, vj]\n"
      "    for ax0, ax1 in T.grid(8, 8):\n"
      "        with T.block(\"Y_local\"):\n"
      "            v0 = T.axis.spatial(8, ax0)\n"
      "            v1 = T.axis.spatial(8, ax1)\n"
      "            Y[v0, v1] = Y_local[v0, v1]\n"
      "    for i, j in T.grid(8, 8):\n"
      "        with T.block(\"C\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            vj = T.axis.spatial(8, j)\n"
      "            C_global[vi, vj] = T.max(Y[vi, vj], T.float32(0))\n"
      "    for ax0, ax1 in T.grid(8, 8):\n"
      "        with T.block(\"C_global\"):\n"
      "            v0 = T.axis.spatial(8, ax0)\n"
      "            v1 = T.axis.spatial(8, ax1)\n"
      "            C[v0, v1] = C_global[v0, v1]\n", "cache_write");
  teardown(&x);
  /* the seeds' nest: a local accumulator, then decompose_reduction */
  if (!setup(&x, mm_split_apart, 8)) CU_FAIL_FATAL("setup");
  CU_ASSERT(OK(mlc_sch_cache_write(x.s, x.y, 0, "local", &b)));
  CU_ASSERT(OK(mlc_sch_decompose_reduction(x.s, x.y, x.l[2], &b2)));
  check_result(x.m, x.f, x.s,
      "@T.prim_func\n"
      "def mm_relu(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8, 8), \"float32\")):\n"
      "    Y_local = T.alloc_buffer((8, 8), \"float32\", scope=\"local\")\n"
      "    Y = T.alloc_buffer((8, 8), \"float32\")\n"
      "    for i, j0 in T.grid(8, 2):\n"
      "        for j1_init in range(4):\n"
      "            with T.block(\"Y_init\"):\n"
      "                vi = T.axis.spatial(8, i)\n"
      "                vj = T.axis.spatial(8, j0 * 4 + j1_init)\n"
      "                Y_local[vi, vj] = T.float32(0)\n"
      "        for k, j1 in T.grid(8, 4):\n"
      "            with T.block(\"Y_update\"):\n"
      "                vi = T.axis.spatial(8, i)\n"
      "                vj = T.axis.spatial(8, j0 * 4 + j1)\n"
      "                vk = T.axis.reduce(8, k)\n"
      "                Y_local[vi, vj] = Y_local[vi, vj] + A[vi, vk] * B[vk, vj]\n"
      "    for ax0, ax1 in T.grid(8, 8):\n"
      "        with T.block(\"Y_local\"):\n"
      "            v0 = T.axis.spatial(8, ax0)\n"
      "            v1 = T.axis.spatial(8, ax1)\n"
      "            Y[v0, v1] = Y_local[v0, v1]\n"
      "    for i, j in T.grid(8, 8):\n"
      "        with T.block(\"C\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            vj = T.axis.spatial(8, j)\n"
      "            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))\n", "cache_write_decompose");
  /* after it, the init writes Y_local in the same nest as the update */
  ERR(mlc_sch_cache_write(x.s, x.y, 0, "global", &b2),
      "cache_write: loop i, the loop nest holding block \"Y_update\", also accesses Y_local");
  CU_ASSERT_EQUAL(mlc_sch_last_error(x.s), MLC_SCH_ERR_DEPENDENCE);
  teardown(&x);
}

static void test_cache_write_refused(void) {
  fixture x;
  if (!setup(&x, mm_split_in_j0, 8)) CU_FAIL_FATAL("setup");
  mlc_sch_rv b;
  ERR(mlc_sch_cache_write(x.s, x.y, 1, "local", &b), "cache_write: block \"Y\" writes 1 buffer: no write buffer 1");
  CU_ASSERT_EQUAL(mlc_sch_last_error(x.s), MLC_SCH_ERR_ARGUMENT);
  ERR(mlc_sch_cache_write(x.s, x.y, 0, "register", &b), "unknown storage scope \"register\"");
  ERR(mlc_sch_cache_write(x.s, x.y, 0, "local", &b),
      "cache_write: loop i, the loop nest holding block \"Y\", also accesses Y");
  CU_ASSERT_EQUAL(mlc_sch_last_error(x.s), MLC_SCH_ERR_DEPENDENCE);
  check_unchanged(x.f, x.s);
  /* C alone in its nest under j0 writes its part of C */
  teardown(&x);
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  /* every other element of a parameter: copying the box back would clobber the rest */
  mlc_tir_func *f = small(m, 2);
  mlc_sch *s = NULL;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT(OK(mlc_sch_get_block(s, "B", &b)));
  ERR(mlc_sch_cache_write(s, b, 0, "local", &b), "cache_write: block \"B\" does not write a whole box of B");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_REGION);
  mlc_sch_destroy(s);
  /* reading the old values without an init */
  f = small(m, 3);
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT(OK(mlc_sch_get_block(s, "B", &b)));
  ERR(mlc_sch_cache_write(s, b, 0, "local", &b), "block \"B\" reads B without an init");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_STRUCTURE);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* ---- transform_layout ------------------------------------------------------------------------ */

static void test_transform_layout(void) {
  fixture x;
  /* an allocation: the function's signature stays, so it is checked numerically */
  if (!setup(&x, mlc_th_mm_relu, 8)) CU_FAIL_FATAL("setup");
  CU_ASSERT(OK(mlc_sch_transform_layout(x.s, x.y, 0, "write", "lambda i, j: (j // 4, i, j % 4)")));
  check_result(x.m, x.f, x.s,
      "@T.prim_func\n"
      "def mm_relu(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8, 8), \"float32\")):\n"
      "    T.func_attr({\"global_symbol\": \"mm_relu\", \"tir.noalias\": True})\n"
      "    Y = T.alloc_buffer((2, 8, 4), \"float32\")\n"
      "    for i, j, k in T.grid(8, 8, 8):\n"
      "        with T.block(\"Y\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            vj = T.axis.spatial(8, j)\n"
      "            vk = T.axis.reduce(8, k)\n"
      "            with T.init():\n"
      "                Y[vj // 4, vi, vj % 4] = T.float32(0)\n"
      "            Y[vj // 4, vi, vj % 4] = Y[vj // 4, vi, vj % 4] + A[vi, vk] * B[vk, vj]\n"
      "    for i, j in T.grid(8, 8):\n"
      "        with T.block(\"C\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            vj = T.axis.spatial(8, j)\n"
      "            C[vi, vj] = T.max(Y[vj // 4, vi, vj % 4], T.float32(0))\n", "layout_alloc");
  teardown(&x);
  /* a parameter: the signature changes (B packed as [j // 4, k, j % 4]) */
  if (!setup(&x, mlc_th_mm_relu, 8)) CU_FAIL_FATAL("setup");
  CU_ASSERT(OK(mlc_sch_transform_layout(x.s, x.y, 1, "read", "lambda k, j: ((j // 4), k, j % 4)")));
  char *p = mlc_th_print_func(mlc_sch_func(x.s));
  MLC_TH_EXPECT_STR(p, 
      "@T.prim_func\n"
      "def mm_relu(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((2, 8, 4), \"float32\"), C: T.Buffer((8, 8), \"float32\")):\n"
      "    T.func_attr({\"global_symbol\": \"mm_relu\", \"tir.noalias\": True})\n"
      "    Y = T.alloc_buffer((8, 8), \"float32\")\n"
      "    for i, j, k in T.grid(8, 8, 8):\n"
      "        with T.block(\"Y\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            vj = T.axis.spatial(8, j)\n"
      "            vk = T.axis.reduce(8, k)\n"
      "            with T.init():\n"
      "                Y[vi, vj] = T.float32(0)\n"
      "            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vj // 4, vk, vj % 4]\n"
      "    for i, j in T.grid(8, 8):\n"
      "        with T.block(\"C\"):\n"
      "            vi = T.axis.spatial(8, i)\n"
      "            vj = T.axis.spatial(8, j)\n"
      "            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))\n");
  free(p);
  teardown(&x);
}

static void test_transform_layout_refused(void) {
  fixture x;
  if (!setup(&x, mlc_th_mm_relu, 20)) CU_FAIL_FATAL("setup");
  static const struct {
    int index;
    const char *kind, *map, *msg;
    mlc_sch_error cls;
  } bad[] = {
      {0, "write", "lambda i, j: (i // 16, j, i % 16)",
       "transform_layout: \"lambda i, j: (i // 16, j, i % 16)\" maps the 400 elements of Y onto a shape of 640 "
       "elements: not a bijection (the layout would need padding, which is not supported)",
       MLC_SCH_ERR_NOT_AFFINE},
      {0, "write", "lambda i, j: (i, i)", "is not a bijective affine map of Y", MLC_SCH_ERR_NOT_AFFINE},
      {0, "write", "lambda i, j: (i + j,)", "maps the 400 elements of Y onto a shape of 39 elements: not a bijection",
       MLC_SCH_ERR_NOT_AFFINE},
      {0, "write", "lambda i, j: (i + 1, j)", "new index 0 of \"lambda i, j: (i + 1, j)\" ranges over [1, 20]",
       MLC_SCH_ERR_NOT_AFFINE},
      {0, "write", "lambda i: (i,)", "\"lambda i: (i,)\" takes 1 variable, Y has 2 dimensions", MLC_SCH_ERR_ARGUMENT},
      {0, "write", "lambda i j: (i, j)", "index_map at offset 9: expected ':' after the variables",
       MLC_SCH_ERR_ARGUMENT},
      {0, "write", "lambda i, j: (i, q)", "index_map at offset 17: unknown name q", MLC_SCH_ERR_ARGUMENT},
      {0, "write", "lambda i, j: (i / 2, j)", "'/' is not integer division: use '//'", MLC_SCH_ERR_ARGUMENT},
      {0, "write", "lambda i, j: (i, j", "expected ',' or ')'", MLC_SCH_ERR_ARGUMENT},
      {0, "write", "lambda i, j: (i, j) + 1", "unexpected text after the map", MLC_SCH_ERR_ARGUMENT},
      {0, "write", "i, j: (i, j)", "expected 'lambda'", MLC_SCH_ERR_ARGUMENT},
      {0, "write", "lambda i, i: (i, i)", "variable i named twice", MLC_SCH_ERR_ARGUMENT},
      {1, "write", "lambda i, j: (j, i)", "block \"Y\" writes 1 buffer: no write buffer 1", MLC_SCH_ERR_ARGUMENT},
      {0, "both", "lambda i, j: (j, i)", "buffer_kind must be \"read\" or \"write\", not \"both\"",
       MLC_SCH_ERR_ARGUMENT},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ERR(mlc_sch_transform_layout(x.s, x.y, bad[i].index, bad[i].kind, bad[i].map), bad[i].msg);
    CU_ASSERT_EQUAL(mlc_sch_last_error(x.s), bad[i].cls);
  }
  check_unchanged(x.f, x.s);
  CU_ASSERT_EQUAL(mlc_sch_trace_len(x.s), 3);
  teardown(&x);
  /* a symbolic shape */
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = symbolic(m);
  mlc_sch *s = NULL;
  mlc_sch_rv b;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT(OK(mlc_sch_get_block(s, "B", &b)));
  ERR(mlc_sch_transform_layout(s, b, 0, "read", "lambda i: (i,)"),
      "transform_layout: A has a symbolic shape: a layout needs a constant one");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_STRUCTURE);
  mlc_sch_destroy(s);
  mlc_tir_module_destroy(m);
}

/* ---- every primitive on every block of legalized operators ---------------------------------- */

typedef struct opcase {
  const char *name;
  mlc_op op;
  int nargs;
  mlc_type args[3];
  int nattrs;
  mlc_attr attrs[4];
} opcase;

#define I64S(...) ((const int64_t[]){__VA_ARGS__})
#define ATTR_INTS(n, ...) \
  {n, MLC_ATTR_INTS, 0, 0, NULL, (int)(sizeof(I64S(__VA_ARGS__)) / sizeof(int64_t)), I64S(__VA_ARGS__), NULL}

/* The prim functions of the one-op graph of |oc|, in a new module (*|tm|). */
static void legalize_op(const opcase *oc, mlc_tir_module **tm) {
  mlc_module *gm = NULL;
  mlc_func *f = NULL;
  mlc_value *v[3], *out = NULL;
  CU_ASSERT_FATAL(OK(mlc_module_create(mlc_allocator_system(), &gm)));
  CU_ASSERT_FATAL(OK(mlc_func_create(gm, "main", &f)));
  for (int i = 0; i < oc->nargs; i++) {
    char pname[16];
    snprintf(pname, sizeof pname, "x%d", i);
    CU_ASSERT_FATAL(OK(mlc_func_add_param(f, pname, &oc->args[i], &v[i])));
  }
  CU_ASSERT_FATAL(OK(mlc_graph_emit1(f, oc->op, v, oc->nargs, oc->attrs, oc->nattrs, NULL, &out)));
  CU_ASSERT_FATAL(OK(mlc_func_add_ret(f, out)));
  CU_ASSERT_FATAL(OK(mlc_tir_module_create(mlc_allocator_system(), tm)));
  CU_ASSERT_FATAL(OK(mlc_lower_legalize(gm, *tm, NULL)));
  mlc_module_destroy(gm);
}

typedef struct tally {
  int accepted, refused;
} tally;

/* Applies variant |v| (0 decompose at the outermost loop, 1 at the
** innermost, 2 cache_read, 3 cache_write, 4 transform_layout reversing the
** dimensions) with buffer index |k| to block |bi| of |f|: accepted ones
** compute the same (allocations) and replay; refused ones are
** INVALID_ARGUMENT with an error class, the function unchanged.  Returns 0
** when the variant does not exist for the block (index out of range is
** tested elsewhere).  With |regions| (the blocks of |f| list their access
** regions) the regions after it must be current. */
static int apply_variant(mlc_tir_module *m, const mlc_tir_func *f, int bi, int v, int k, int regions, tally *t) {
  mlc_sch *s = NULL;
  mlc_sch_rv blocks[16], loops[16], out;
  int nb = 0, nl = 0;
  CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &s)));
  CU_ASSERT_FATAL(OK(mlc_sch_get_child_blocks(s, 0, 16, blocks, &nb)));
  mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, blocks[bi]);
  CU_ASSERT_FATAL(OK(mlc_sch_get_loops(s, blocks[bi], 16, loops, &nl)));
  mlc_status st = NULL;
  int exists = 1, param = 0;
  char map[256];
  switch (v) {
    case 0:
    case 1:
      exists = blk->block.init && nl > 0 && k == 0;
      if (exists) st = mlc_sch_decompose_reduction(s, blocks[bi], loops[v == 0 ? 0 : nl - 1], &out);
      break;
    case 2:
      st = mlc_sch_cache_read(s, blocks[bi], k, "local", &out);
      exists = !(st && strstr(mlc_status_message(st), "no read buffer"));
      break;
    case 3:
      st = mlc_sch_cache_write(s, blocks[bi], k, "shared", &out);
      exists = !(st && strstr(mlc_status_message(st), "no write buffer"));
      break;
    default: {
      /* the rank of the k-th written buffer: found through the first store */
      exists = k == 0;
      if (!exists) break;
      const mlc_tir_stmt *b = blk->block.body;
      while (b && b->kind != MLC_TIR_STORE) b = b->kind == MLC_TIR_FOR ? b->loop.body : NULL;
      exists = b != NULL;
      if (!exists) break;
      for (int i = 0; i < f->nparams; i++) param |= f->params[i] == b->store.buffer;
      int r = b->store.buffer->rank, n = snprintf(map, sizeof map, "lambda ");
      for (int d = 0; d < r; d++) n += snprintf(map + n, sizeof map - (size_t)n, "%sx%d", d ? ", " : "", d);
      n += snprintf(map + n, sizeof map - (size_t)n, ": (");
      for (int d = r - 1; d >= 0; d--) n += snprintf(map + n, sizeof map - (size_t)n, "x%d, ", d);
      snprintf(map + n, sizeof map - (size_t)n, ")");
      st = mlc_sch_transform_layout(s, blocks[bi], 0, "write", map);
      break;
    }
  }
  if (!exists) {
    mlc_status_free(st);
    mlc_sch_destroy(s);
    return 0;
  }
  char what[128];
  snprintf(what, sizeof what, "%s block %d variant %d index %d", f->name, bi, v, k);
  if (st) {
    if (mlc_status_code(st) != MLC_INVALID_ARGUMENT || mlc_sch_last_error(s) == MLC_SCH_OK)
      printf("\n  %s: %s\n", what, mlc_status_message(st));
    CU_ASSERT_EQUAL(mlc_status_code(st), MLC_INVALID_ARGUMENT);
    CU_ASSERT_NOT_EQUAL(mlc_sch_last_error(s), MLC_SCH_OK);
    mlc_status_free(st);
    check_unchanged(f, s);
    t->refused++;
  } else if (param) {
    /* a parameter's layout changed: the signature differs; the trace replays */
    char *tr = mlc_th_print_trace(s), *a = mlc_th_print_func(mlc_sch_func(s));
    mlc_sch *r = NULL;
    CU_ASSERT_FATAL(OK(mlc_sch_create(m, f, 1, &r)));
    CU_ASSERT(OK(mlc_sch_apply_trace(r, tr, strlen(tr), what)));
    char *b = mlc_th_print_func(mlc_sch_func(r));
    CU_ASSERT_STRING_EQUAL(a, b);
    free(a);
    free(b);
    free(tr);
    mlc_sch_destroy(r);
    t->accepted++;
  } else {
    check_result(m, f, s, NULL, what);
    t->accepted++;
  }
  if (!st && regions) {
    /* regions listed before are listed after, and current */
    char *a = mlc_th_print_func(mlc_sch_func(s));
    CU_ASSERT(OK(mlc_tir_func_compute_regions(m, mlc_sch_func(s))));
    char *b = mlc_th_print_func(mlc_sch_func(s));
    if (strcmp(a, b) != 0) printf("\n  %s: regions not current\n--- got\n%s--- recomputed\n%s", what, a, b);
    CU_ASSERT_STRING_EQUAL(a, b);
    free(a);
    free(b);
  }
  mlc_sch_destroy(s);
  return 1;
}

static void test_legalized_sweep(void) {
  const mlc_dtype F = MLC_DTYPE_F32;
  const opcase cases[] = {
      {"matmul", MLC_OP_MATMUL, 2, {{F, 2, I64S(6, 10)}, {F, 2, I64S(10, 5)}}, 0, {{0}}},
      {"conv2d_pad", MLC_OP_CONV, 2, {{F, 4, I64S(1, 3, 7, 7)}, {F, 4, I64S(4, 3, 3, 3)}}, 1,
       {ATTR_INTS("pads", 1, 1, 1, 1)}},
      {"max_pool", MLC_OP_MAX_POOL, 1, {{F, 4, I64S(1, 2, 8, 8)}}, 2,
       {ATTR_INTS("kernel", 2, 2), ATTR_INTS("strides", 2, 2)}},
      {"avg_pool_pad", MLC_OP_AVG_POOL, 1, {{F, 4, I64S(1, 2, 6, 6)}}, 3,
       {ATTR_INTS("kernel", 3, 3), ATTR_INTS("strides", 2, 2), ATTR_INTS("pads", 1, 1, 1, 1)}},
      {"softmax", MLC_OP_SOFTMAX, 1, {{F, 2, I64S(3, 10)}}, 0, {{0}}},
      {"layer_norm", MLC_OP_LAYER_NORM, 3, {{F, 2, I64S(3, 8)}, {F, 1, I64S(8)}, {F, 1, I64S(8)}}, 0, {{0}}},
  };
  tally t = {0, 0};
  int per_variant[5] = {0};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    mlc_tir_module *tm = NULL;
    legalize_op(&cases[c], &tm);
    for (int fi = 0; fi < 2 * tm->nfuncs; fi++) {
      mlc_tir_func *f = tm->funcs[fi % tm->nfuncs];
      /* the second time round, with access regions */
      if (fi == tm->nfuncs)
        for (int i = 0; i < tm->nfuncs; i++) CU_ASSERT(OK(mlc_tir_func_compute_regions(tm, tm->funcs[i])));
      int nb = 0;
      mlc_sch *s = NULL;
      CU_ASSERT_FATAL(OK(mlc_sch_create(tm, f, 1, &s)));
      mlc_sch_rv rv[16];
      CU_ASSERT_FATAL(OK(mlc_sch_get_child_blocks(s, 0, 16, rv, &nb)));
      mlc_sch_destroy(s);
      for (int bi = 0; bi < nb; bi++)
        for (int v = 0; v < 5; v++)
          for (int k = 0; k < 4; k++) {
            int before = t.accepted;
            if (!apply_variant(tm, f, bi, v, k, fi >= tm->nfuncs, &t)) break;
            per_variant[v] += t.accepted - before;
          }
    }
    mlc_tir_module_destroy(tm);
  }
  /* every primitive applies somewhere; some refusals happen (conv: a
  ** decomposition inside its reduce loops, a gather-free pad read) */
  for (int v = 0; v < 5; v++) CU_ASSERT(per_variant[v] > 0);
  CU_ASSERT(t.accepted >= 30);
  CU_ASSERT(t.refused > 0);
  printf("\n  sweep: %d accepted, %d refused (decompose %d/%d, cache_read %d, cache_write %d, layout %d) ", t.accepted,
         t.refused, per_variant[0], per_variant[1], per_variant[2], per_variant[3], per_variant[4]);
}

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"decompose_seeds", test_decompose_seeds},
                                      {"decompose_outer", test_decompose_outer},
                                      {"decompose_refused", test_decompose_refused},
                                      {"cache_read", test_cache_read},
                                      {"cache_read_refused", test_cache_read_refused},
                                      {"cache_write", test_cache_write},
                                      {"cache_write_refused", test_cache_write_refused},
                                      {"transform_layout", test_transform_layout},
                                      {"transform_layout_refused", test_transform_layout_refused},
                                      {"legalized_sweep", test_legalized_sweep},
                                      {NULL, NULL}};
  CU_pSuite suite = CU_add_suite("sched_cache", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (int i = 0; suite && tests[i].pName; i++) CU_add_test(suite, tests[i].pName, tests[i].pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_sched_cache", fns);
}
