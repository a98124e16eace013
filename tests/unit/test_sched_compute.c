/*
** test_sched_compute.c: the compute-location primitives: compute_inline,
** reverse_compute_inline, compute_at, reverse_compute_at and
** sample_compute_location.  Every accepted case is compared with its
** expected printed form, checked numerically against the unscheduled
** function (tests/harness_sched.c) and replayed from its printed trace;
** every refusal is checked for its error class and message.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/arith.h"
#include "lower/schedule/schedule.h"
#include "tests/harness_kernel.h"
#include "tests/harness_sched.h"
#include "tests/testutil.h"

#define OK(expr) MLC_TEST_OK(expr)
#define ERR(expr, ...) MLC_TEST_ERR((expr), MLC_INVALID_ARGUMENT, __VA_ARGS__)


#define EXPECT_HAS(text, frag)                                                \
  do {                                                                        \
    const char *t_ = (text), *f_ = (frag);                                    \
    if (!strstr(t_, f_)) printf("\n--- expected to contain\n%s--- in\n%s", f_, t_); \
    CU_ASSERT_PTR_NOT_NULL(strstr(t_, f_));                                   \
  } while (0)

/* The scheduled function prints as |want|, computes what |f| computes, and
** its printed trace replays on a fresh schedule of |f| to the same text. */
static void check_result(mlc_tir_module *m, const mlc_tir_func *f, mlc_sch *s, const char *want, const char *name) {
  char *got = mlc_th_print_func(mlc_sch_func(s));
  if (want) MLC_TH_EXPECT_STR(got, want);
  CU_ASSERT_EQUAL(mlc_th_sched_same(m, f, mlc_sch_func(s), name), 0);
  char *t = mlc_th_print_trace(s);
  mlc_sch *r = NULL;
  if (OK(mlc_sch_create(m, f, 7, &r))) {
    if (OK(mlc_sch_apply_trace(r, t, strlen(t), name))) {
      char *again = mlc_th_print_func(mlc_sch_func(r)), *t2 = mlc_th_print_trace(r);
      MLC_TH_EXPECT_STR(again, got);
      MLC_TH_EXPECT_STR(t2, t);
      free(again);
      free(t2);
    }
    mlc_sch_destroy(r);
  }
  free(t);
  free(got);
}

/* ---- building test functions ---------------------------------------------------------- */

typedef mlc_tir_stmt *(*store_fn)(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx);

/* for loops over |ext| (rank 1 or 2), a block |name| with spatial iteration
** variables bound to them, whose body |fn| builds from the iteration variables. */
static mlc_tir_stmt *nest(mlc_tir_module *m, const char *name, int rank, const int64_t *ext, store_fn fn, void *ctx) {
  static const char *const ln[] = {"i", "j", "k"}, *const vn[] = {"vi", "vj", "vk"};
  mlc_tir_var *lv[3], *iv[3];
  mlc_tir_iter_var its[3];
  mlc_tir_expr *refs[3];
  for (int d = 0; d < rank; d++) {
    lv[d] = mlc_tir_var_new(m, ln[d], I64);
    iv[d] = mlc_tir_var_new(m, vn[d], I64);
    its[d] = (mlc_tir_iter_var){iv[d], MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), mlc_tir_i64(m, ext[d]),
                                mlc_tir_ref(m, lv[d])};
    refs[d] = mlc_tir_ref(m, iv[d]);
  }
  mlc_tir_stmt *st = mlc_tir_block(m, name, rank, its, NULL, fn(m, refs, ctx));
  for (int d = rank - 1; d >= 0; d--)
    st = mlc_tir_for(m, lv[d], mlc_tir_i64(m, 0), mlc_tir_i64(m, ext[d]), MLC_TIR_FOR_SERIAL, NULL, st);
  return st;
}

static mlc_tir_func *func(mlc_tir_module *m, const char *name, int nparams, mlc_tir_buffer *const *params,
                          int nallocs, mlc_tir_buffer *const *allocs, int nstmts, mlc_tir_stmt *const *stmts) {
  mlc_tir_stmt *body = mlc_tir_seq(m, nstmts, stmts);
  for (int i = nallocs - 1; i >= 0; i--) body = mlc_tir_allocate(m, allocs[i], body);
  mlc_tir_func *f = body ? mlc_tir_func_new(m, name, nparams, params, body) : NULL;
  if (!f || mlc_tir_func_set_attr_str(m, f, "global_symbol", name) || mlc_tir_func_set_attr_bool(m, f, "tir.noalias", 1))
    return NULL;
  return f;
}

typedef struct bufs {
  mlc_tir_buffer *A, *B, *C, *D;
  double k;
} bufs;

static mlc_tir_expr *ld2(mlc_tir_module *m, mlc_tir_buffer *b, mlc_tir_expr *x, mlc_tir_expr *y) {
  mlc_tir_expr *idx[2] = {x, y};
  return mlc_tir_load(m, b, 2, idx);
}
static mlc_tir_stmt *st2(mlc_tir_module *m, mlc_tir_buffer *b, mlc_tir_expr *x, mlc_tir_expr *y, mlc_tir_expr *v) {
  mlc_tir_expr *idx[2] = {x, y};
  return mlc_tir_store(m, b, 2, idx, v);
}
static mlc_tir_expr *fl(mlc_tir_module *m, double v) { return mlc_tir_float(m, F32, v); }

/* B[vi, vj] = A[vi, vj] * 2 */
static mlc_tir_stmt *b_of_a(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return st2(m, x->B, v[0], v[1], mlc_tir_mul(m, ld2(m, x->A, v[0], v[1]), fl(m, 2)));
}
/* C[vi, vj] = B[vi, vj] + 1 */
static mlc_tir_stmt *c_of_b(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return st2(m, x->C, v[0], v[1], mlc_tir_add(m, ld2(m, x->B, v[0], v[1]), fl(m, 1)));
}
/* C[vi, vj] = B[vj, vi] + 1 */
static mlc_tir_stmt *c_of_bt(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return st2(m, x->C, v[0], v[1], mlc_tir_add(m, ld2(m, x->B, v[1], v[0]), fl(m, 1)));
}
/* D[vi, vj] = B[vi, vj] - 3 */
static mlc_tir_stmt *d_of_b(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return st2(m, x->D, v[0], v[1], mlc_tir_sub(m, ld2(m, x->B, v[0], v[1]), fl(m, 3)));
}
/* A[vi, vj] = k */
static mlc_tir_stmt *a_const(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return st2(m, x->A, v[0], v[1], fl(m, x->k));
}
/* B[vi, vj] = k */
static mlc_tir_stmt *b_const(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return st2(m, x->B, v[0], v[1], fl(m, x->k));
}
/* C[vi, vj] = B[vi, 0] */
static mlc_tir_stmt *c_of_b0(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return st2(m, x->C, v[0], v[1], ld2(m, x->B, v[0], mlc_tir_i64(m, 0)));
}
/* B[vi, vj] = B[vi, vj] + A[vi, vj] */
static mlc_tir_stmt *b_acc(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return st2(m, x->B, v[0], v[1], mlc_tir_add(m, ld2(m, x->B, v[0], v[1]), ld2(m, x->A, v[0], v[1])));
}
/* B[vi, vj] = A[vi, vj]; B[vi, vj] = B[vi, vj] * 2 */
static mlc_tir_stmt *b_two(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return mlc_tir_seq2(m, st2(m, x->B, v[0], v[1], ld2(m, x->A, v[0], v[1])),
                      st2(m, x->B, v[0], v[1], mlc_tir_mul(m, ld2(m, x->B, v[0], v[1]), fl(m, 2))));
}
/* C[vi, vj] = B[vi, vj] * B[vi, vj] + A[vi, vj] */
static mlc_tir_stmt *c_sq(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  mlc_tir_expr *b = ld2(m, x->B, v[0], v[1]);
  return st2(m, x->C, v[0], v[1], mlc_tir_add(m, mlc_tir_mul(m, b, b), ld2(m, x->A, v[0], v[1])));
}

/* D[vi, vj] = C[vi, vj] */
static mlc_tir_stmt *d_of_c(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return st2(m, x->D, v[0], v[1], ld2(m, x->C, v[0], v[1]));
}
/* C[vi, vj] = A[vi, vj] + 1 */
static mlc_tir_stmt *c_of_a(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return st2(m, x->C, v[0], v[1], mlc_tir_add(m, ld2(m, x->A, v[0], v[1]), fl(m, 1)));
}

/* B's block |bfn| (B allocated), then X's block |xfn| when not NULL, then
** C's block |cfn|, over n x n; parameters A, C (and D with X). */
static mlc_tir_func *shape_n(mlc_tir_module *m, int64_t n, store_fn bfn, store_fn cfn, store_fn xfn, double k,
                             const char *name) {
  static bufs x;
  memset(&x, 0, sizeof x);
  x.k = k;
  const int64_t ext[2] = {n, n};
  x.A = mlc_tir_buffer_new_c(m, "A", F32, 2, ext, MLC_TIR_SCOPE_GLOBAL);
  x.B = mlc_tir_buffer_new_c(m, "B", F32, 2, ext, MLC_TIR_SCOPE_GLOBAL);
  x.C = mlc_tir_buffer_new_c(m, "C", F32, 2, ext, MLC_TIR_SCOPE_GLOBAL);
  x.D = mlc_tir_buffer_new_c(m, "D", F32, 2, ext, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_stmt *s[3];
  int ns = 0;
  s[ns++] = nest(m, "B", 2, ext, bfn, &x);
  if (xfn) s[ns++] = nest(m, "X", 2, ext, xfn, &x);
  s[ns++] = nest(m, "C", 2, ext, cfn, &x);
  mlc_tir_buffer *params[3] = {x.A, x.C, x.D};
  return func(m, name, xfn ? 3 : 2, params, 1, &x.B, ns, s);
}

static mlc_tir_func *shape(mlc_tir_module *m, store_fn bfn, store_fn cfn, store_fn xfn, double k) {
  return shape_n(m, 8, bfn, cfn, xfn, k, "f");
}

/* The seeds' before_inline over n x n. */
static mlc_tir_func *before_inline(mlc_tir_module *m, int64_t n) {
  return shape_n(m, n, b_of_a, c_of_b, NULL, 0, "before_inline");
}

/* ---- compute_inline ------------------------------------------------------------------- */

static const char *const before_inline_text =
    "@T.prim_func\n"
    "def before_inline(A: T.Buffer((128, 128), \"float32\"), C: T.Buffer((128, 128), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"before_inline\", \"tir.noalias\": True})\n"
    "    for i, j in T.grid(128, 128):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(128, i)\n"
    "            vj = T.axis.spatial(128, j)\n"
    "            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)\n";

static void test_compute_inline(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_sch *s = NULL, *s2 = NULL;
  mlc_tir_func *f = before_inline(m, 128);
  if (!OK(mlc_sch_create(m, f, 1, &s))) goto done;
  mlc_sch_rv b;
  CU_ASSERT(OK(mlc_sch_get_block(s, "B", &b)));
  CU_ASSERT(OK(mlc_sch_compute_inline(s, b)));
  check_result(m, f, s, before_inline_text, "compute_inline");
  char *t = mlc_th_print_trace(s);
  MLC_TH_EXPECT_STR(t, "b0 = sch.get_block(name=\"B\")\nsch.compute_inline(block=b0)\n");
  free(t);
  /* the inlined block's handle is retired */
  mlc_sch_rv loops[4];
  int n;
  ERR(mlc_sch_get_loops(s, b, 4, loops, &n), "was removed by compute_inline");
  mlc_sch_destroy(s);
  s = NULL;

  /* a consumer that reads B transposed, twice: the indices are substituted */
  f = shape(m, b_of_a, c_sq, NULL, 0);
  if (!OK(mlc_sch_create(m, f, 1, &s2))) goto done;
  CU_ASSERT(OK(mlc_sch_get_block(s2, "B", &b)));
  CU_ASSERT(OK(mlc_sch_compute_inline(s2, b)));
  char *p = mlc_th_print_func(mlc_sch_func(s2));
  EXPECT_HAS(p, "C[vi, vj] = A[vi, vj] * T.float32(2) * (A[vi, vj] * T.float32(2)) + A[vi, vj]");
  CU_ASSERT_PTR_NULL(strstr(p, "alloc_buffer"));
  free(p);
  check_result(m, f, s2, NULL, "compute_inline_twice");
  mlc_sch_destroy(s2);
  s2 = NULL;

  f = shape(m, b_of_a, c_of_bt, NULL, 0);
  if (!OK(mlc_sch_create(m, f, 1, &s2))) goto done;
  CU_ASSERT(OK(mlc_sch_get_block(s2, "B", &b)));
  CU_ASSERT(OK(mlc_sch_compute_inline(s2, b)));
  p = mlc_th_print_func(mlc_sch_func(s2));
  EXPECT_HAS(p, "C[vi, vj] = A[vj, vi] * T.float32(2) + T.float32(1)");
  free(p);
  check_result(m, f, s2, NULL, "compute_inline_transposed");
  mlc_sch_destroy(s2);
  s2 = NULL;

  /* blocks with access regions get them recomputed */
  f = shape(m, b_of_a, c_of_b, NULL, 0);
  CU_ASSERT_PTR_NOT_NULL(f);
  if (!f || !OK(mlc_tir_func_compute_regions(m, f))) goto done;
  if (!OK(mlc_sch_create(m, f, 1, &s2))) goto done;
  CU_ASSERT(OK(mlc_sch_get_block(s2, "B", &b)));
  CU_ASSERT(OK(mlc_sch_compute_inline(s2, b)));
  p = mlc_th_print_func(mlc_sch_func(s2));
  EXPECT_HAS(p, "            T.reads(A[vi, vj])\n"
                "            T.writes(C[vi, vj])\n"
                "            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)\n");
  free(p);
  check_result(m, f, s2, NULL, "compute_inline_regions");
  mlc_sch_destroy(s2);
  s2 = NULL;
done:
  mlc_sch_destroy(s);
  mlc_sch_destroy(s2);
  mlc_tir_module_destroy(m);
}

/* Applies compute_inline to block |name| of |f| and expects a refusal of
** class |cls| whose message holds |frag|; the function stays unchanged. */
static void refuse(mlc_tir_module *m, mlc_tir_func *f, int prim, const char *name, const char *loopof, int loopi,
                   mlc_sch_error cls, const char *frag) {
  mlc_sch *s = NULL;
  if (!OK(mlc_sch_create(m, f, 1, &s))) return;
  char *before = mlc_th_print_func(mlc_sch_func(s));
  mlc_sch_rv b = 0, lb = 0, loops[8] = {0};
  int n = 0;
  CU_ASSERT(OK(mlc_sch_get_block(s, name, &b)));
  if (loopof) {
    CU_ASSERT(OK(mlc_sch_get_block(s, loopof, &lb)));
    CU_ASSERT(OK(mlc_sch_get_loops(s, lb, 8, loops, &n)));
    CU_ASSERT(loopi < n);
  }
  switch (prim) {
    case 0: ERR(mlc_sch_compute_inline(s, b), "compute_inline: ", frag); break;
    case 1: ERR(mlc_sch_reverse_compute_inline(s, b), "reverse_compute_inline: ", frag); break;
    case 2: ERR(mlc_sch_compute_at(s, b, loops[loopi], 0), "compute_at: ", frag); break;
    case 3: ERR(mlc_sch_reverse_compute_at(s, b, loops[loopi], 0), "reverse_compute_at: ", frag); break;
  }
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), cls);
  if (mlc_sch_last_error(s) != cls) printf("\n  class %s, expected %s (%s)\n", mlc_sch_error_name(mlc_sch_last_error(s)),
                                           mlc_sch_error_name(cls), frag);
  char *after = mlc_th_print_func(mlc_sch_func(s));
  MLC_TH_EXPECT_STR(after, before);
  free(before);
  free(after);
  mlc_sch_destroy(s);
}

static void test_compute_inline_refusals(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_sch *s = NULL, *s2 = NULL;
  mlc_tir_func *mm = mlc_th_mm_relu(m, 8);
  mlc_tir_func *bi = before_inline(m, 8);
  refuse(m, mm, 0, "Y", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE, "block \"Y\" is a reduction (it has an init)");
  refuse(m, bi, 0, "C", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE, "block \"C\" writes the parameter C");
  refuse(m, shape(m, b_two, c_of_b, NULL, 0), 0, "B", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "block \"B\" is not a single store (several statements)");
  refuse(m, shape(m, b_acc, c_of_b, NULL, 0), 0, "B", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "block \"B\" reads the buffer B it writes");
  /* B written by two blocks */
  refuse(m, shape(m, b_of_a, c_of_b, b_const, 1), 0, "B", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "block \"B\" is not the only writer of B");
  /* A changes between B and C: the value would read the new A */
  refuse(m, shape(m, b_of_a, c_of_b, a_const, 5), 0, "B", NULL, 0, MLC_SCH_ERR_DEPENDENCE,
         "block \"X\" writes A, which block \"B\" reads, before B is read");
  /* a store whose index is not an iteration variable: a consumer B[vi, 0]
  ** is fine to inline into, a producer B[vi, 0] is not */
  mlc_tir_func *b0 = shape(m, b_of_a, c_of_b0, NULL, 0);
  if (!OK(mlc_sch_create(m, b0, 1, &s))) goto done;
  mlc_sch_rv b;
  CU_ASSERT(OK(mlc_sch_get_block(s, "B", &b)));
  CU_ASSERT(OK(mlc_sch_compute_inline(s, b)));
  check_result(m, b0, s, NULL, "compute_inline_b0");
  mlc_sch_destroy(s);
  s = NULL;
  /* a predicate */
  mlc_tir_func *pf = shape(m, b_of_a, c_of_b, NULL, 0);
  CU_ASSERT_PTR_NOT_NULL(pf);
  if (!pf) goto done;
  mlc_tir_stmt *pb = pf->body->alloc.body->seq.stmts[0]->loop.body->loop.body;
  mlc_tir_block_set_predicate(pb, mlc_tir_binary(m, MLC_TIR_LT, mlc_tir_ref(m, pb->block.iters[0].var), mlc_tir_i64(m, 4)));
  refuse(m, pf, 0, "B", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE, "block \"B\" has a predicate");
done:
  mlc_sch_destroy(s);
  mlc_sch_destroy(s2);
  mlc_tir_module_destroy(m);
}

/* B[vi, 0] = A[vi, vj]: its index 1 is not an iteration variable */
static mlc_tir_stmt *b0_of_a(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return st2(m, x->B, v[0], mlc_tir_i64(m, 0), ld2(m, x->A, v[0], v[1]));
}
/* B[vi, vj] = A[vi, vi] */
static mlc_tir_stmt *b_twice(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  return st2(m, x->B, v[0], v[0], ld2(m, x->A, v[0], v[1]));
}

static void test_compute_inline_indices(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  refuse(m, shape(m, b0_of_a, c_of_b, NULL, 0), 0, "B", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "index 1 of the store to B in block \"B\" is not an iteration variable");
  refuse(m, shape(m, b_twice, c_of_b, NULL, 0), 0, "B", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "block \"B\" indexes B twice with vi");
  mlc_tir_module_destroy(m);
}

/* ---- reverse_compute_inline -------------------------------------------------------------- */

static void test_reverse_compute_inline(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_sch *s = NULL, *s2 = NULL;
  mlc_tir_func *f = before_inline(m, 16);
  if (!OK(mlc_sch_create(m, f, 1, &s))) goto done;
  mlc_sch_rv c;
  CU_ASSERT(OK(mlc_sch_get_block(s, "C", &c)));
  CU_ASSERT(OK(mlc_sch_reverse_compute_inline(s, c)));
  check_result(m, f, s,
               "@T.prim_func\n"
               "def before_inline(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
               "    T.func_attr({\"global_symbol\": \"before_inline\", \"tir.noalias\": True})\n"
               "    for i, j in T.grid(16, 16):\n"
               "        with T.block(\"B\"):\n"
               "            vi = T.axis.spatial(16, i)\n"
               "            vj = T.axis.spatial(16, j)\n"
               "            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)\n",
               "reverse_compute_inline");
  mlc_sch_destroy(s);
  s = NULL;

  /* transposed: C[vi, vj] = B[vj, vi] + 1 becomes C[vj, vi] = A[vi, vj] * 2 + 1 in B */
  f = shape(m, b_of_a, c_of_bt, NULL, 0);
  if (!OK(mlc_sch_create(m, f, 1, &s2))) goto done;
  CU_ASSERT(OK(mlc_sch_get_block(s2, "C", &c)));
  CU_ASSERT(OK(mlc_sch_reverse_compute_inline(s2, c)));
  char *p = mlc_th_print_func(mlc_sch_func(s2));
  EXPECT_HAS(p, "C[vj, vi] = A[vi, vj] * T.float32(2) + T.float32(1)");
  free(p);
  check_result(m, f, s2, NULL, "reverse_compute_inline_transposed");
  mlc_sch_destroy(s2);
  s2 = NULL;

  f = shape(m, b_of_a, c_of_b, NULL, 0);
  CU_ASSERT_PTR_NOT_NULL(f);
  if (!f || !OK(mlc_tir_func_compute_regions(m, f))) goto done;
  if (!OK(mlc_sch_create(m, f, 1, &s2))) goto done;
  CU_ASSERT(OK(mlc_sch_get_block(s2, "C", &c)));
  CU_ASSERT(OK(mlc_sch_reverse_compute_inline(s2, c)));
  p = mlc_th_print_func(mlc_sch_func(s2));
  EXPECT_HAS(p, "            T.reads(A[vi, vj])\n"
                "            T.writes(C[vi, vj])\n");
  free(p);
  check_result(m, f, s2, NULL, "reverse_compute_inline_regions");
  mlc_sch_destroy(s2);
  s2 = NULL;
done:
  mlc_sch_destroy(s);
  mlc_sch_destroy(s2);
  mlc_tir_module_destroy(m);
}

static void test_reverse_compute_inline_refusals(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *mm = mlc_th_mm_relu(m, 8);
  refuse(m, mm, 1, "C", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "the producer block \"Y\" is a reduction: its element is not complete when its store runs");
  refuse(m, mm, 1, "Y", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE, "block \"Y\" is a reduction (it has an init)");
  refuse(m, shape(m, b_of_a, c_of_b0, NULL, 0), 1, "C", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "block \"C\" does not read one element of B per iteration");
  /* another block reads B */
  refuse(m, shape(m, b_of_a, c_of_b, d_of_b, 0), 1, "C", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "block \"X\" also reads B");
  refuse(m, shape(m, b_of_a, c_of_b, b_const, 1), 1, "C", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "B is written by several blocks");
  refuse(m, shape(m, b_of_a, c_sq, a_const, 1), 1, "C", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "block \"C\" reads the results of several blocks (B and A)");
  refuse(m, shape(m, b_of_a, c_of_a, a_const, 1), 1, "C", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "A is a parameter: block \"X\" would no longer write it");
  refuse(m, shape(m, b_acc, c_of_b, NULL, 0), 1, "C", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "the producer block \"B\" reads the buffer B it writes");
  refuse(m, shape(m, b_two, c_of_b, NULL, 0), 1, "C", NULL, 0, MLC_SCH_ERR_NOT_INLINABLE,
         "the producer block \"B\" is not a single store");
  refuse(m, shape(m, b_of_a, c_of_b, d_of_c, 0), 1, "C", NULL, 0, MLC_SCH_ERR_DEPENDENCE,
         "block \"X\" uses C between block \"B\" and block \"C\", which writes it");
  mlc_tir_module_destroy(m);
}

/* ---- compute_at ----------------------------------------------------------------------- */

/* The handle of loop |i| around block |name|. */
static mlc_sch_rv loop_of(mlc_sch *s, const char *name, int i) {
  mlc_sch_rv b, loops[8];
  int n = 0;
  CU_ASSERT(OK(mlc_sch_get_block(s, name, &b)));
  CU_ASSERT(OK(mlc_sch_get_loops(s, b, 8, loops, &n)));
  CU_ASSERT(i < n);
  return i < n ? loops[i] : 0;
}

static mlc_sch_rv block_of(mlc_sch *s, const char *name) {
  mlc_sch_rv b = 0;
  CU_ASSERT(OK(mlc_sch_get_block(s, name, &b)));
  return b;
}

static void test_compute_at(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_sch *s = NULL, *s2 = NULL;
  mlc_tir_func *f = before_inline(m, 16);
  if (!OK(mlc_sch_create(m, f, 1, &s))) goto done;
  mlc_sch_rv b = block_of(s, "B");
  CU_ASSERT(OK(mlc_sch_compute_at(s, b, loop_of(s, "C", 0), 0)));
  check_result(m, f, s,
               "@T.prim_func\n"
               "def before_inline(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
               "    T.func_attr({\"global_symbol\": \"before_inline\", \"tir.noalias\": True})\n"
               "    B = T.alloc_buffer((16, 16), \"float32\")\n"
               "    for i in range(16):\n"
               "        for ax0 in range(16):\n"
               "            with T.block(\"B\"):\n"
               "                vi = T.axis.spatial(16, i)\n"
               "                vj = T.axis.spatial(16, ax0)\n"
               "                B[vi, vj] = A[vi, vj] * T.float32(2)\n"
               "        for j in range(16):\n"
               "            with T.block(\"C\"):\n"
               "                vi = T.axis.spatial(16, i)\n"
               "                vj = T.axis.spatial(16, j)\n"
               "                C[vi, vj] = B[vi, vj] + T.float32(1)\n",
               "compute_at");
  char *t = mlc_th_print_trace(s);
  MLC_TH_EXPECT_STR(t,
             "b0 = sch.get_block(name=\"B\")\n"
             "b1 = sch.get_block(name=\"C\")\n"
             "l2, l3 = sch.get_loops(block=b1)\n"
             "sch.compute_at(block=b0, loop=l2)\n");
  free(t);
  /* B's handle still works; its loops are gone */
  mlc_sch_rv loops[4];
  int n = 0;
  CU_ASSERT(OK(mlc_sch_get_loops(s, b, 4, loops, &n)));
  CU_ASSERT_EQUAL(n, 2);
  mlc_sch_destroy(s);
  s = NULL;

  /* under the innermost loop: one element per iteration; unit loops kept on request */
  if (!OK(mlc_sch_create(m, f, 1, &s))) goto done;
  CU_ASSERT(OK(mlc_sch_compute_at(s, block_of(s, "B"), loop_of(s, "C", 1), 0)));
  char *p = mlc_th_print_func(mlc_sch_func(s));
  EXPECT_HAS(p, "    for i, j in T.grid(16, 16):\n"
                "        with T.block(\"B\"):\n"
                "            vi = T.axis.spatial(16, i)\n"
                "            vj = T.axis.spatial(16, j)\n"
                "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
                "        with T.block(\"C\"):\n");
  free(p);
  check_result(m, f, s, NULL, "compute_at_inner");
  mlc_sch_destroy(s);
  s = NULL;
  if (!OK(mlc_sch_create(m, f, 1, &s))) goto done;
  CU_ASSERT(OK(mlc_sch_compute_at(s, block_of(s, "B"), loop_of(s, "C", 1), 1)));
  p = mlc_th_print_func(mlc_sch_func(s));
  EXPECT_HAS(p, "    for i, j in T.grid(16, 16):\n"
                "        for ax0, ax1 in T.grid(1, 1):\n"
                "            with T.block(\"B\"):\n"
                "                vi = T.axis.spatial(16, i + ax0)\n"
                "                vj = T.axis.spatial(16, j + ax1)\n");
  free(p);
  t = mlc_th_print_trace(s);
  EXPECT_HAS(t, "sch.compute_at(block=b3, loop=l2, preserve_unit_loops=1)\n");
  free(t);
  check_result(m, f, s, NULL, "compute_at_unit");
  mlc_sch_destroy(s);
  s = NULL;

  /* a reduction: its reduce variable keeps a loop over its whole domain */
  mlc_tir_func *mm = mlc_th_mm_relu(m, 8);
  if (!OK(mlc_sch_create(m, mm, 1, &s))) goto done;
  CU_ASSERT(OK(mlc_sch_compute_at(s, block_of(s, "Y"), loop_of(s, "C", 1), 0)));
  p = mlc_th_print_func(mlc_sch_func(s));
  EXPECT_HAS(p, "    for i, j in T.grid(8, 8):\n"
                                   "        for ax0 in range(8):\n"
                                   "            with T.block(\"Y\"):\n"
                                   "                vi = T.axis.spatial(8, i)\n"
                                   "                vj = T.axis.spatial(8, j)\n"
                                   "                vk = T.axis.reduce(8, ax0)\n");
  free(p);
  check_result(m, mm, s, NULL, "compute_at_reduction");
  mlc_sch_destroy(s);
  s = NULL;
done:
  mlc_sch_destroy(s);
  mlc_sch_destroy(s2);
  mlc_tir_module_destroy(m);
}

/* 1-D: B[vi] = A[vi] * 2 over |nb|; C[vi] = B[vi] + B[vi + 1] over |nc|,
** its loop split by 4 with a predicate when |split|. */
static mlc_tir_func *stencil(mlc_tir_module *m, int64_t nb, int64_t nc, int split) {
  const int64_t eb[1] = {nb}, ec[1] = {nc};
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", F32, 1, eb, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", F32, 1, eb, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *C = mlc_tir_buffer_new_c(m, "C", F32, 1, ec, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = mlc_tir_var_new(m, "i", I64), *vi = mlc_tir_var_new(m, "vi", I64);
  mlc_tir_iter_var it = {vi, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), mlc_tir_i64(m, nb), mlc_tir_ref(m, i)};
  mlc_tir_expr *x = mlc_tir_ref(m, vi);
  mlc_tir_stmt *sb = mlc_tir_block(m, "B", 1, &it, NULL,
                                   mlc_tir_store(m, B, 1, &x, mlc_tir_mul(m, mlc_tir_load(m, A, 1, &x), fl(m, 2))));
  sb = mlc_tir_for(m, i, mlc_tir_i64(m, 0), mlc_tir_i64(m, nb), MLC_TIR_FOR_SERIAL, NULL, sb);
  mlc_tir_var *vc = mlc_tir_var_new(m, "vi", I64), *i0 = mlc_tir_var_new(m, split ? "i_0" : "i", I64);
  mlc_tir_var *i1 = mlc_tir_var_new(m, "i_1", I64);
  mlc_tir_expr *bind = split ? mlc_tir_add(m, mlc_tir_mul(m, mlc_tir_ref(m, i0), mlc_tir_i64(m, 4)), mlc_tir_ref(m, i1))
                             : mlc_tir_ref(m, i0);
  mlc_tir_iter_var itc = {vc, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), mlc_tir_i64(m, nc), bind};
  mlc_tir_expr *y = mlc_tir_ref(m, vc), *y1 = mlc_tir_add(m, mlc_tir_ref(m, vc), mlc_tir_i64(m, 1));
  mlc_tir_stmt *sc = mlc_tir_block(
      m, "C", 1, &itc, NULL,
      mlc_tir_store(m, C, 1, &y, mlc_tir_add(m, mlc_tir_load(m, B, 1, &y), mlc_tir_load(m, B, 1, &y1))));
  if (split && sc) {
    mlc_tir_block_set_predicate(sc, mlc_tir_binary(m, MLC_TIR_LT, bind, mlc_tir_i64(m, nc)));
    sc = mlc_tir_for(m, i1, mlc_tir_i64(m, 0), mlc_tir_i64(m, 4), MLC_TIR_FOR_SERIAL, NULL, sc);
    sc = mlc_tir_for(m, i0, mlc_tir_i64(m, 0), mlc_tir_i64(m, (nc + 3) / 4), MLC_TIR_FOR_SERIAL, NULL, sc);
  } else {
    sc = mlc_tir_for(m, i0, mlc_tir_i64(m, 0), mlc_tir_i64(m, nc), MLC_TIR_FOR_SERIAL, NULL, sc);
  }
  mlc_tir_stmt *st[2] = {sb, sc};
  mlc_tir_buffer *params[2] = {A, C};
  return func(m, "stencil", 2, params, 1, &B, 2, st);
}

static void test_compute_at_regions(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_sch *s = NULL, *s2 = NULL;
  /* C reads B[vi] and B[vi + 1]: two elements per iteration */
  mlc_tir_func *f = stencil(m, 16, 15, 0);
  if (!OK(mlc_sch_create(m, f, 1, &s))) goto done;
  CU_ASSERT(OK(mlc_sch_compute_at(s, block_of(s, "B"), loop_of(s, "C", 0), 0)));
  check_result(m, f, s,
               "@T.prim_func\n"
               "def stencil(A: T.Buffer((16,), \"float32\"), C: T.Buffer((15,), \"float32\")):\n"
               "    T.func_attr({\"global_symbol\": \"stencil\", \"tir.noalias\": True})\n"
               "    B = T.alloc_buffer((16,), \"float32\")\n"
               "    for i in range(15):\n"
               "        for ax0 in range(2):\n"
               "            with T.block(\"B\"):\n"
               "                vi = T.axis.spatial(16, i + ax0)\n"
               "                B[vi] = A[vi] * T.float32(2)\n"
               "        with T.block(\"C\"):\n"
               "            vi = T.axis.spatial(15, i)\n"
               "            C[vi] = B[vi] + B[vi + 1]\n",
               "compute_at_stencil");
  mlc_sch_destroy(s);
  s = NULL;
  /* C split by 4 over 10 (a predicate): B's tiles may pass its domain */
  f = stencil(m, 11, 10, 1);
  if (!OK(mlc_sch_create(m, f, 1, &s))) goto done;
  CU_ASSERT(OK(mlc_sch_compute_at(s, block_of(s, "B"), loop_of(s, "C", 0), 0)));
  check_result(m, f, s,
               "@T.prim_func\n"
               "def stencil(A: T.Buffer((11,), \"float32\"), C: T.Buffer((10,), \"float32\")):\n"
               "    T.func_attr({\"global_symbol\": \"stencil\", \"tir.noalias\": True})\n"
               "    B = T.alloc_buffer((11,), \"float32\")\n"
               "    for i_0 in range(3):\n"
               "        for ax0 in range(5):\n"
               "            with T.block(\"B\"):\n"
               "                vi = T.axis.spatial(11, i_0 * 4 + ax0)\n"
               "                T.where(i_0 * 4 + ax0 < 11)\n"
               "                B[vi] = A[vi] * T.float32(2)\n"
               "        for i_1 in range(4):\n"
               "            with T.block(\"C\"):\n"
               "                vi = T.axis.spatial(10, i_0 * 4 + i_1)\n"
               "                T.where(i_0 * 4 + i_1 < 10)\n"
               "                C[vi] = B[vi] + B[vi + 1]\n",
               "compute_at_predicate");
  mlc_sch_destroy(s);
  s = NULL;
done:
  mlc_sch_destroy(s);
  mlc_sch_destroy(s2);
  mlc_tir_module_destroy(m);
}

/* C[vi, vj] = B[(vi * vj) % 8, vj] */
static mlc_tir_stmt *c_of_bprod(mlc_tir_module *m, mlc_tir_expr *const *v, void *ctx) {
  bufs *x = ctx;
  mlc_tir_expr *r = mlc_tir_binary(m, MLC_TIR_FLOORMOD, mlc_tir_mul(m, v[0], v[1]), mlc_tir_i64(m, 8));
  return st2(m, x->C, v[0], v[1], ld2(m, x->B, r, v[1]));
}

static void test_compute_at_refusals(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *mm = mlc_th_mm_relu(m, 8);
  refuse(m, mm, 2, "Y", "Y", 0, MLC_SCH_ERR_LOCATION, "block \"Y\" is already inside loop i");
  refuse(m, mm, 2, "C", "Y", 1, MLC_SCH_ERR_REGION,
         "block \"C\" writes the parameter C: only the region its consumers read would be computed");
  refuse(m, shape(m, b_of_a, c_of_b, d_of_b, 0), 2, "B", "X", 0, MLC_SCH_ERR_LOCATION,
         "loop i does not enclose the consumer block \"C\"");
  refuse(m, shape(m, b_of_a, c_of_a, NULL, 0), 2, "B", "C", 0, MLC_SCH_ERR_LOCATION,
         "block \"B\" has no consumer under loop i");
  refuse(m, shape(m, b_of_a, c_of_b, b_const, 1), 2, "B", "C", 0, MLC_SCH_ERR_DEPENDENCE, "block \"X\" also writes B");
  refuse(m, shape(m, b_of_a, c_of_b, a_const, 1), 2, "B", "C", 0, MLC_SCH_ERR_DEPENDENCE,
         "block \"X\" writes A, which block \"B\" reads, before loop i ends");
  refuse(m, shape(m, b_acc, c_of_b, NULL, 0), 2, "B", "C", 0, MLC_SCH_ERR_STRUCTURE,
         "block \"B\" reads the buffer B it writes and is not a reduction");
  refuse(m, shape(m, b0_of_a, c_of_b, NULL, 0), 2, "B", "C", 0, MLC_SCH_ERR_STRUCTURE,
         "block \"B\" does not write its output with one distinct spatial iteration variable per index");
  refuse(m, shape(m, b_of_a, c_of_bprod, NULL, 0), 2, "B", "C", 0, MLC_SCH_ERR_REGION,
         "cannot cover the region of B that block \"C\" reads under loop i: an index has no computable range");
  /* a consumer before the producer */
  const int64_t ext[2] = {8, 8};
  static bufs x;
  x.A = mlc_tir_buffer_new_c(m, "A", F32, 2, ext, MLC_TIR_SCOPE_GLOBAL);
  x.B = mlc_tir_buffer_new_c(m, "B", F32, 2, ext, MLC_TIR_SCOPE_GLOBAL);
  x.C = mlc_tir_buffer_new_c(m, "C", F32, 2, ext, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_stmt *st[3] = {nest(m, "C", 2, ext, c_of_b, &x), nest(m, "B", 2, ext, b_of_a, &x),
                         nest(m, "D", 2, ext, c_of_b, &x)};
  mlc_tir_buffer *params[2] = {x.A, x.C};
  mlc_tir_func *rev = func(m, "rev", 2, params, 1, &x.B, 3, st);
  refuse(m, rev, 2, "B", "D", 0, MLC_SCH_ERR_LOCATION, "block \"C\" reads B before block \"B\" writes it");
  /* a predicate */
  mlc_tir_func *pf = shape(m, b_of_a, c_of_b, NULL, 0);
  CU_ASSERT_PTR_NOT_NULL(pf);
  if (!pf) {
    mlc_tir_module_destroy(m);
    return;
  }
  mlc_tir_stmt *pb = pf->body->alloc.body->seq.stmts[0]->loop.body->loop.body;
  mlc_tir_block_set_predicate(pb, mlc_tir_binary(m, MLC_TIR_LT, mlc_tir_ref(m, pb->block.iters[0].var), mlc_tir_i64(m, 4)));
  refuse(m, pf, 2, "B", "C", 0, MLC_SCH_ERR_STRUCTURE, "block \"B\" has a predicate");
  mlc_tir_module_destroy(m);
}

/* ---- reverse_compute_at -------------------------------------------------------------------- */

/* mm_relu with j split by 4 and the loops of Y reordered to i, j_0, k, j_1
** (the seeds' steps before reverse_compute_at), built directly. */
static mlc_tir_func *mm_relu_split(mlc_tir_module *m, int64_t n) {
  mlc_tir_func *f = mlc_th_mm_relu(m, n);
  if (!f) return NULL;
  mlc_tir_stmt *li = f->body->alloc.body->seq.stmts[0], *lj = li->loop.body, *lk = lj->loop.body;
  mlc_tir_stmt *y = lk->loop.body;
  if (!y->block.iters) return NULL;
  mlc_tir_var *j0 = mlc_tir_var_new(m, "j_0", I64), *j1 = mlc_tir_var_new(m, "j_1", I64);
  y->block.iters[1].binding =
      mlc_tir_add(m, mlc_tir_mul(m, mlc_tir_ref(m, j0), mlc_tir_i64(m, 4)), mlc_tir_ref(m, j1));
  mlc_tir_stmt *s = mlc_tir_for(m, j1, mlc_tir_i64(m, 0), mlc_tir_i64(m, 4), MLC_TIR_FOR_SERIAL, NULL, y);
  s = mlc_tir_for(m, lk->loop.var, mlc_tir_i64(m, 0), mlc_tir_i64(m, n), MLC_TIR_FOR_SERIAL, NULL, s);
  s = mlc_tir_for(m, j0, mlc_tir_i64(m, 0), mlc_tir_i64(m, n / 4), MLC_TIR_FOR_SERIAL, NULL, s);
  li->loop.body = s;
  return f;
}

static void test_reverse_compute_at(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_sch *s = NULL, *s2 = NULL;
  mlc_tir_func *f = mm_relu_split(m, 128);
  if (!OK(mlc_sch_create(m, f, 1, &s))) goto done;
  CU_ASSERT(OK(mlc_sch_reverse_compute_at(s, block_of(s, "C"), loop_of(s, "Y", 1), 0)));
  check_result(m, f, s,
               "@T.prim_func\n"
               "def mm_relu(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\"), "
               "C: T.Buffer((128, 128), \"float32\")):\n"
               "    T.func_attr({\"global_symbol\": \"mm_relu\", \"tir.noalias\": True})\n"
               "    Y = T.alloc_buffer((128, 128), \"float32\")\n"
               "    for i, j_0 in T.grid(128, 32):\n"
               "        for k, j_1 in T.grid(128, 4):\n"
               "            with T.block(\"Y\"):\n"
               "                vi = T.axis.spatial(128, i)\n"
               "                vj = T.axis.spatial(128, j_0 * 4 + j_1)\n"
               "                vk = T.axis.reduce(128, k)\n"
               "                with T.init():\n"
               "                    Y[vi, vj] = T.float32(0)\n"
               "                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]\n"
               "        for ax0 in range(4):\n"
               "            with T.block(\"C\"):\n"
               "                vi = T.axis.spatial(128, i)\n"
               "                vj = T.axis.spatial(128, j_0 * 4 + ax0)\n"
               "                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))\n",
               "reverse_compute_at_mm_relu");
  mlc_sch_destroy(s);
  s = NULL;

  f = before_inline(m, 16);
  if (!OK(mlc_sch_create(m, f, 1, &s))) goto done;
  CU_ASSERT(OK(mlc_sch_reverse_compute_at(s, block_of(s, "C"), loop_of(s, "B", 0), 0)));
  char *p = mlc_th_print_func(mlc_sch_func(s));
  EXPECT_HAS(p, "    for i in range(16):\n"
                                   "        for j in range(16):\n"
                                   "            with T.block(\"B\"):\n");
  EXPECT_HAS(p, "        for ax0 in range(16):\n"
                                   "            with T.block(\"C\"):\n"
                                   "                vi = T.axis.spatial(16, i)\n"
                                   "                vj = T.axis.spatial(16, ax0)\n");
  free(p);
  check_result(m, f, s, NULL, "reverse_compute_at_elementwise");
  mlc_sch_destroy(s);
  s = NULL;

  /* C[vi, vj] = B[vi, 0]: B's dimension 1 is read by a constant, and B
  ** writes all of it in each iteration of i */
  f = shape(m, b_of_a, c_of_b0, NULL, 0);
  if (!f || !OK(mlc_sch_create(m, f, 1, &s))) goto done;
  CU_ASSERT(OK(mlc_sch_reverse_compute_at(s, block_of(s, "C"), loop_of(s, "B", 0), 0)));
  p = mlc_th_print_func(mlc_sch_func(s));
  EXPECT_HAS(p, "        for ax0 in range(8):\n"
                "            with T.block(\"C\"):\n"
                "                vi = T.axis.spatial(8, i)\n"
                "                vj = T.axis.spatial(8, ax0)\n"
                "                C[vi, vj] = B[vi, 0]\n");
  free(p);
  check_result(m, f, s, NULL, "reverse_compute_at_whole_dimension");
  mlc_sch_destroy(s);
  s = NULL;
done:
  mlc_sch_destroy(s);
  mlc_sch_destroy(s2);
  mlc_tir_module_destroy(m);
}

static void test_reverse_compute_at_refusals(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *mm = mlc_th_mm_relu(m, 8);
  refuse(m, mm, 3, "C", "Y", 2, MLC_SCH_ERR_REGION, "the reduction of block \"Y\" is not complete under loop k");
  refuse(m, mm, 3, "C", "C", 0, MLC_SCH_ERR_LOCATION, "block \"C\" is already inside loop i");
  refuse(m, shape(m, b_of_a, c_sq, a_const, 1), 3, "C", "B", 0, MLC_SCH_ERR_LOCATION,
         "loop i does not enclose the producer block \"X\"");
  refuse(m, shape(m, b_of_a, c_of_a, NULL, 0), 3, "C", "B", 0, MLC_SCH_ERR_LOCATION,
         "block \"C\" has no producer under loop i");
  refuse(m, shape(m, b_of_a, c_of_b, d_of_c, 0), 3, "C", "B", 0, MLC_SCH_ERR_DEPENDENCE,
         "block \"X\" uses C, which block \"C\" writes, after loop i begins");
  /* C[vi, vj] = B[vi, 0] under B's loop j: B's column 0 is not written
  ** in every iteration of j (under i it is, see test_reverse_compute_at) */
  refuse(m, shape(m, b_of_a, c_of_b0, NULL, 0), 3, "C", "B", 1, MLC_SCH_ERR_REGION,
         "block \"C\" reads dimension 1 of B by an index that is not an iteration variable, and the producers do not "
         "write all of it under loop j");
  /* B computed over half its rows: C's domain is not covered */
  mlc_tir_func *half = shape(m, b_of_a, c_of_b, NULL, 0);
  CU_ASSERT_PTR_NOT_NULL(half);
  if (!half) {
    mlc_tir_module_destroy(m);
    return;
  }
  mlc_tir_stmt *bi = half->body->alloc.body->seq.stmts[0];
  bi->loop.extent = mlc_tir_i64(m, 4);
  refuse(m, half, 3, "C", "B", 0, MLC_SCH_ERR_REGION,
         "the regions of B written under loop i do not provably cover the domain of vi in block \"C\"");
  mlc_tir_module_destroy(m);
}

/* ---- sample_compute_location ------------------------------------------------------------- */

static void test_sample_compute_location(void) {
  mlc_tir_module *m = mlc_th_tir_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_sch *s = NULL, *s2 = NULL;
  mlc_tir_func *mm = mlc_th_mm_relu(m, 8);
  if (!OK(mlc_sch_create(m, mm, 1, &s))) goto done;
  mlc_sch_rv y = block_of(s, "Y"), l;
  int64_t d = 1;
  CU_ASSERT(OK(mlc_sch_sample_compute_location(s, y, &d, &l)));
  CU_ASSERT_PTR_EQUAL(mlc_sch_rv_stmt(s, l), mlc_sch_rv_stmt(s, loop_of(s, "C", 1)));
  /* a reduction cannot be inlined: -2 is not a candidate */
  d = -2;
  ERR(mlc_sch_sample_compute_location(s, y, &d, &l), "sample_compute_location: decision -2 is not a legal compute location of block \"Y\"");
  CU_ASSERT_EQUAL(mlc_sch_last_error(s), MLC_SCH_ERR_SAMPLE);
  d = 2;
  ERR(mlc_sch_sample_compute_location(s, y, &d, &l), "decision 2 is not a legal compute location of block \"Y\" (candidates: -1, 0, 1)");
  d = 1;
  CU_ASSERT(OK(mlc_sch_compute_at(s, y, l, 0)));
  char *t = mlc_th_print_trace(s);
  MLC_TH_EXPECT_STR(t,
             "b0 = sch.get_block(name=\"Y\")\n"
             "l1 = sch.sample_compute_location(block=b0, decision=1)\n"
             "b2 = sch.get_block(name=\"C\")\n"
             "l3, l4 = sch.get_loops(block=b2)\n"
             "sch.compute_at(block=b0, loop=l1)\n");
  free(t);
  check_result(m, mm, s, NULL, "sample_compute_location");
  /* Y is now under C's loops: only "root" is left */
  d = 0;
  ERR(mlc_sch_sample_compute_location(s, y, &d, &l), "(candidates: -1)");
  mlc_sch_destroy(s);
  s = NULL;

  /* "root" leaves the block, "inline" inlines it */
  mlc_tir_func *f = before_inline(m, 128);
  if (!OK(mlc_sch_create(m, f, 1, &s))) goto done;
  mlc_sch_rv b = block_of(s, "B");
  d = -1;
  CU_ASSERT(OK(mlc_sch_sample_compute_location(s, b, &d, &l)));
  CU_ASSERT_PTR_NULL(mlc_sch_rv_stmt(s, l));
  CU_ASSERT(OK(mlc_sch_compute_at(s, b, l, 0)));
  char *a = mlc_th_print_func(f), *g = mlc_th_print_func(mlc_sch_func(s));
  MLC_TH_EXPECT_STR(g, a);
  free(a);
  free(g);
  d = -2;
  CU_ASSERT(OK(mlc_sch_sample_compute_location(s, b, &d, &l)));
  CU_ASSERT(OK(mlc_sch_compute_at(s, b, l, 0)));
  check_result(m, f, s, before_inline_text, "sample_compute_location_inline");
  t = mlc_th_print_trace(s);
  EXPECT_HAS(t, "l2 = sch.sample_compute_location(block=b0, decision=-2)\nsch.compute_at(block=b0, loop=l2)\n");
  free(t);
  mlc_sch_destroy(s);
  s = NULL;

  /* drawn: every decision is a candidate, the seeds give several, and the trace replays */
  int seen[5] = {0};
  for (uint64_t seed = 1; seed <= 24; seed++) {
    if (!OK(mlc_sch_create(m, mm, seed, &s))) break;
    y = block_of(s, "Y");
    CU_ASSERT(OK(mlc_sch_sample_compute_location(s, y, NULL, &l)));
    mlc_tir_stmt *ls = mlc_sch_rv_stmt(s, l);
    int k = ls ? (ls == mlc_sch_rv_stmt(s, loop_of(s, "C", 0)) ? 3 : ls == mlc_sch_rv_stmt(s, loop_of(s, "C", 1)) ? 4 : 0) : 1;
    CU_ASSERT(k != 0);
    seen[k] = 1;
    CU_ASSERT(OK(mlc_sch_compute_at(s, y, l, 0)));
    if (seed <= 3) check_result(m, mm, s, NULL, "sample_compute_location_drawn");
    mlc_sch_destroy(s);
    s = NULL;
  }
  CU_ASSERT(seen[1] && seen[3] && seen[4]);
done:
  mlc_sch_destroy(s);
  mlc_sch_destroy(s2);
  mlc_tir_module_destroy(m);
}

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"compute_inline", test_compute_inline},
                                      {"compute_inline_refusals", test_compute_inline_refusals},
                                      {"compute_inline_indices", test_compute_inline_indices},
                                      {"reverse_compute_inline", test_reverse_compute_inline},
                                      {"reverse_compute_inline_refusals", test_reverse_compute_inline_refusals},
                                      {"compute_at", test_compute_at},
                                      {"compute_at_regions", test_compute_at_regions},
                                      {"compute_at_refusals", test_compute_at_refusals},
                                      {"reverse_compute_at", test_reverse_compute_at},
                                      {"reverse_compute_at_refusals", test_reverse_compute_at_refusals},
                                      {"sample_compute_location", test_sample_compute_location},
                                      {NULL, NULL}};
  CU_pSuite suite = CU_add_suite("sched_compute", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (int i = 0; suite && tests[i].pName; i++) CU_add_test(suite, tests[i].pName, tests[i].pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_sched_compute", fns);
}
