/*
** test_infer.c: CUnit suites for graph/infer.c (struct-info inference of
** every rule, symbolic dims, error messages) and graph/eval.c (folding of
** calls on constants, checked value by value).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "tests/testutil.h"

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

static mlc_module *M;
static mlc_func *F;
static int64_t SN, SM; /* symbols n and m */

static void setup(void) {
  MLC_TEST_OK_FATAL(mlc_module_create(mlc_allocator_default(), &M));
  MLC_TEST_OK_FATAL(mlc_func_create(M, "main", &F));
  MLC_TEST_OK(mlc_module_sym(M, "n", &SN));
  MLC_TEST_OK(mlc_module_sym(M, "m", &SM));
}

static void teardown(void) {
  mlc_module_destroy(M);
  M = NULL;
  F = NULL;
}

/* A parameter of dtype |dt| and shape |dims|. */
static mlc_value *P(mlc_dtype dt, const int64_t *dims, int rank) {
  mlc_type t = {dt, rank, dims};
  mlc_value *v = NULL;
  MLC_TEST_OK(mlc_func_add_param(F, NULL, &t, &v));
  return v;
}

/* A constant of dtype |dt| and shape |dims| with |data| (copied). */
static mlc_value *C(mlc_dtype dt, const int64_t *dims, int rank, const void *data) {
  mlc_type t = {dt, rank, dims};
  int64_t n = mlc_type_numel(&t);
  mlc_value *v = NULL;
  MLC_TEST_OK(mlc_module_add_const(M, NULL, &t, data, (size_t)n * mlc_dtype_size(dt), &v));
  return v;
}

/* Emits |op|; the call must succeed. */
static mlc_value *E(mlc_op op, mlc_value *const *args, int nargs, const mlc_attr *attrs,
                    int nattrs) {
  mlc_value *out = NULL;
  mlc_status s = mlc_graph_emit1(F, op, args, nargs, attrs, nattrs, NULL, &out);
  if (s) fprintf(stderr, "\nunexpected error: %s\n", mlc_status_message(s));
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  return out;
}

/* Emits |op|; the call must fail with |code| and a message containing |text|. */
static void X(mlc_op op, mlc_value *const *args, int nargs, const mlc_attr *attrs, int nattrs,
              mlc_code code, const char *text) {
  mlc_value *out = NULL;
  mlc_status s = mlc_graph_emit1(F, op, args, nargs, attrs, nattrs, NULL, &out);
  CU_ASSERT_PTR_NOT_NULL(s);
  CU_ASSERT_EQUAL(mlc_status_code(s), code);
  if (s && !strstr(mlc_status_message(s), text))
    fprintf(stderr, "\nmessage \"%s\" lacks \"%s\"\n", mlc_status_message(s), text);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), text));
  mlc_status_free(s);
}

/* Whether |v| has dtype |dt| and shape |dims|. */
static int T(const mlc_value *v, mlc_dtype dt, const int64_t *dims, int rank) {
  if (!v || v->type.dtype != dt || v->type.rank != rank) return 0;
  for (int i = 0; i < rank; i++)
    if (v->type.dims[i] != dims[i]) return 0;
  return 1;
}

/* The data of a folded constant (NULL when |v| is not a constant). */
static const void *D(const mlc_value *v) {
  const mlc_const *c = v ? mlc_value_const(M, v) : NULL;
  return c ? c->data : NULL;
}

/* Whether |v| is a constant holding the |n| bytes |want|. */
static int B(const mlc_value *v, const void *want, size_t n) {
  const void *d = D(v);
  return d && memcmp(d, want, n) == 0;
}

static int is_const(const mlc_value *v) { return v && v->kind == MLC_VALUE_CONST; }

static int f32_eq(const float *got, const float *want, int n, float tol) {
  if (!got) return 0;
  for (int i = 0; i < n; i++)
    if (!(fabsf(got[i] - want[i]) <= tol)) return 0;
  return 1;
}

/* ---- inference: elementwise --------------------------------------------- */

static void test_unary_cast(void) {
  setup();
  mlc_value *x = P(MLC_DTYPE_F32, DIMS(SN, 3), 2), *i = P(MLC_DTYPE_I32, DIMS(4), 1);
  CU_ASSERT(T(E(MLC_OP_RELU, &x, 1, NULL, 0), MLC_DTYPE_F32, DIMS(SN, 3), 2));
  CU_ASSERT(T(E(MLC_OP_ABS, &i, 1, NULL, 0), MLC_DTYPE_I32, DIMS(4), 1));
  CU_ASSERT(T(E(MLC_OP_ISNAN, &x, 1, NULL, 0), MLC_DTYPE_BOOL, DIMS(SN, 3), 2));
  X(MLC_OP_EXP, &i, 1, NULL, 0, MLC_INVALID_ARGUMENT,
    "dtype int32, expected a floating-point type");
  X(MLC_OP_LOGICAL_NOT, &x, 1, NULL, 0, MLC_INVALID_ARGUMENT, "expected bool");
  mlc_attr c[] = {mlc_attr_int("dtype", MLC_DTYPE_F16)};
  CU_ASSERT(T(E(MLC_OP_CAST, &x, 1, c, 1), MLC_DTYPE_F16, DIMS(SN, 3), 2));
  X(MLC_OP_CAST, &x, 1, NULL, 0, MLC_INVALID_ARGUMENT, "attribute dtype is missing");
  mlc_attr bad[] = {mlc_attr_int("dtype", 999)};
  X(MLC_OP_CAST, &x, 1, bad, 1, MLC_INVALID_ARGUMENT, "999");
  mlc_attr ax[] = {mlc_attr_int("axis", 2)};
  X(MLC_OP_SOFTMAX, &x, 1, ax, 1, MLC_INVALID_ARGUMENT, "axis 2 is out of range for rank 2");
  CU_ASSERT(T(E(MLC_OP_SOFTMAX, &x, 1, NULL, 0), MLC_DTYPE_F32, DIMS(SN, 3), 2));
  teardown();
}

static void test_broadcast(void) {
  setup();
  mlc_value *a[2] = {P(MLC_DTYPE_F32, DIMS(2, 1, 3), 3), P(MLC_DTYPE_F32, DIMS(4, 1), 2)};
  CU_ASSERT(T(E(MLC_OP_ADD, a, 2, NULL, 0), MLC_DTYPE_F32, DIMS(2, 4, 3), 3));
  mlc_value *b[2] = {P(MLC_DTYPE_F32, DIMS(2, 3), 2), P(MLC_DTYPE_F32, DIMS(4, 3), 2)};
  X(MLC_OP_MUL, b, 2, NULL, 0, MLC_INVALID_ARGUMENT, "cannot broadcast shapes (2, 3) and (4, 3)");
  mlc_value *c[2] = {b[0], P(MLC_DTYPE_I32, DIMS(3), 1)};
  X(MLC_OP_ADD, c, 2, NULL, 0, MLC_INVALID_ARGUMENT, "dtypes differ: float32");
  CU_ASSERT(T(E(MLC_OP_POW, c, 2, NULL, 0), MLC_DTYPE_F32, DIMS(2, 3), 2));
  mlc_value *d[2] = {b[0], P(MLC_DTYPE_F32, DIMS(1), 1)};
  CU_ASSERT(T(E(MLC_OP_GREATER, d, 2, NULL, 0), MLC_DTYPE_BOOL, DIMS(2, 3), 2));
  mlc_value *l[2] = {P(MLC_DTYPE_F32, DIMS(2), 1), P(MLC_DTYPE_F32, DIMS(2), 1)};
  X(MLC_OP_LOGICAL_AND, l, 2, NULL, 0, MLC_INVALID_ARGUMENT, "expected bool");
  teardown();
}

static void test_broadcast_symbolic(void) {
  setup();
  mlc_value *n3 = P(MLC_DTYPE_F32, DIMS(SN, 3), 2), *n1 = P(MLC_DTYPE_F32, DIMS(SN, 1), 2);
  mlc_value *o3 = P(MLC_DTYPE_F32, DIMS(1, 3), 2), *o4 = P(MLC_DTYPE_F32, DIMS(1, 4), 2);
  mlc_value *m3 = P(MLC_DTYPE_F32, DIMS(SM, 3), 2), *t3 = P(MLC_DTYPE_F32, DIMS(2, 3), 2);
  mlc_value *a[2] = {n3, n3}, *b[2] = {n3, o3}, *c[2] = {n1, o4}, *d[2] = {n3, m3},
            *e[2] = {n3, t3};
  CU_ASSERT(T(E(MLC_OP_SUB, a, 2, NULL, 0), MLC_DTYPE_F32, DIMS(SN, 3), 2));
  CU_ASSERT(T(E(MLC_OP_SUB, b, 2, NULL, 0), MLC_DTYPE_F32, DIMS(SN, 3), 2));
  CU_ASSERT(T(E(MLC_OP_SUB, c, 2, NULL, 0), MLC_DTYPE_F32, DIMS(SN, 4), 2));
  X(MLC_OP_SUB, d, 2, NULL, 0, MLC_INVALID_ARGUMENT, "cannot broadcast shapes (n, 3) and (m, 3)");
  X(MLC_OP_SUB, e, 2, NULL, 0, MLC_INVALID_ARGUMENT, "(n, 3) and (2, 3)");
  mlc_value *w[3] = {P(MLC_DTYPE_BOOL, DIMS(SN, 1), 2), o4, P(MLC_DTYPE_F32, NULL, 0)};
  CU_ASSERT(T(E(MLC_OP_WHERE, w, 3, NULL, 0), MLC_DTYPE_F32, DIMS(SN, 4), 2));
  mlc_value *w2[3] = {o4, o4, o4};
  X(MLC_OP_WHERE, w2, 3, NULL, 0, MLC_INVALID_ARGUMENT,
    "argument 0 has dtype float32, expected bool");
  teardown();
}

/* ---- inference: reductions, matmul -------------------------------------- */

static void test_reduce(void) {
  setup();
  mlc_value *x = P(MLC_DTYPE_F32, DIMS(2, SN, 4), 3);
  mlc_attr a1[] = {mlc_attr_ints("axes", DIMS(1), 1), mlc_attr_int("keepdims", 0)};
  CU_ASSERT(T(E(MLC_OP_SUM, &x, 1, a1, 2), MLC_DTYPE_F32, DIMS(2, 4), 2));
  mlc_attr a2[] = {mlc_attr_ints("axes", DIMS(0, 2), 2)};
  CU_ASSERT(T(E(MLC_OP_MEAN, &x, 1, a2, 1), MLC_DTYPE_F32, DIMS(1, SN, 1), 3));
  CU_ASSERT(T(E(MLC_OP_MAX, &x, 1, NULL, 0), MLC_DTYPE_F32, DIMS(1, 1, 1), 3));
  mlc_attr a3[] = {mlc_attr_ints("axes", DIMS(3), 1)};
  X(MLC_OP_SUM, &x, 1, a3, 1, MLC_INVALID_ARGUMENT, "axis 3 is out of range for rank 3");
  mlc_attr a4[] = {mlc_attr_ints("axes", DIMS(1, 1), 2)};
  X(MLC_OP_PROD, &x, 1, a4, 1, MLC_INVALID_ARGUMENT, "repeated");
  mlc_attr a5[] = {mlc_attr_int("axis", 2), mlc_attr_int("keepdims", 0)};
  CU_ASSERT(T(E(MLC_OP_ARGMAX, &x, 1, a5, 2), MLC_DTYPE_I64, DIMS(2, SN), 2));
  mlc_attr a6[] = {mlc_attr_int("axis", -1)};
  X(MLC_OP_ARGMIN, &x, 1, a6, 1, MLC_INVALID_ARGUMENT, "axis -1 is out of range");
  mlc_attr a7[] = {mlc_attr_int("keepdims", 2)};
  X(MLC_OP_SUM, &x, 1, a7, 1, MLC_INVALID_ARGUMENT, "keepdims = 2 must be 0 or 1");
  mlc_value *ln[3] = {x, P(MLC_DTYPE_F32, DIMS(4), 1), P(MLC_DTYPE_F32, DIMS(4), 1)};
  mlc_attr la[] = {mlc_attr_int("axis", 2), mlc_attr_float("epsilon", 1e-5)};
  CU_ASSERT(T(E(MLC_OP_LAYER_NORM, ln, 3, la, 2), MLC_DTYPE_F32, DIMS(2, SN, 4), 3));
  mlc_value *ln2[3] = {x, P(MLC_DTYPE_F32, DIMS(5), 1), ln[2]};
  X(MLC_OP_LAYER_NORM, ln2, 3, la, 2, MLC_INVALID_ARGUMENT, "argument 1 of shape (5,)");
  teardown();
}

static void test_matmul(void) {
  setup();
  mlc_value *a = P(MLC_DTYPE_F32, DIMS(2, 3), 2), *b = P(MLC_DTYPE_F32, DIMS(3, 4), 2);
  mlc_value *v = P(MLC_DTYPE_F32, DIMS(3), 1);
  mlc_value *ab[2] = {a, b}, *vb[2] = {v, b}, *av[2] = {a, v}, *vv[2] = {v, v};
  CU_ASSERT(T(E(MLC_OP_MATMUL, ab, 2, NULL, 0), MLC_DTYPE_F32, DIMS(2, 4), 2));
  CU_ASSERT(T(E(MLC_OP_MATMUL, vb, 2, NULL, 0), MLC_DTYPE_F32, DIMS(4), 1));
  CU_ASSERT(T(E(MLC_OP_MATMUL, av, 2, NULL, 0), MLC_DTYPE_F32, DIMS(2), 1));
  CU_ASSERT(T(E(MLC_OP_MATMUL, vv, 2, NULL, 0), MLC_DTYPE_F32, NULL, 0));
  mlc_value *bt[2] = {P(MLC_DTYPE_F32, DIMS(5, 1, 2, 3), 4), P(MLC_DTYPE_F32, DIMS(4, 3, 6), 3)};
  CU_ASSERT(T(E(MLC_OP_MATMUL, bt, 2, NULL, 0), MLC_DTYPE_F32, DIMS(5, 4, 2, 6), 4));
  mlc_value *sy[2] = {P(MLC_DTYPE_F32, DIMS(SN, 2, 3), 3), b};
  CU_ASSERT(T(E(MLC_OP_MATMUL, sy, 2, NULL, 0), MLC_DTYPE_F32, DIMS(SN, 2, 4), 3));
  mlc_value *ba[2] = {a, a};
  X(MLC_OP_MATMUL, ba, 2, NULL, 0, MLC_INVALID_ARGUMENT, "inner dims differ: (2, 3) @ (2, 3)");
  mlc_value *bb[2] = {P(MLC_DTYPE_F32, DIMS(2, 2, 3), 3), P(MLC_DTYPE_F32, DIMS(3, 3, 4), 3)};
  X(MLC_OP_MATMUL, bb, 2, NULL, 0, MLC_INVALID_ARGUMENT,
    "cannot broadcast batch shapes (2,) and (3,)");
  mlc_value *bo[2] = {P(MLC_DTYPE_BOOL, DIMS(2, 2), 2), P(MLC_DTYPE_BOOL, DIMS(2, 2), 2)};
  X(MLC_OP_MATMUL, bo, 2, NULL, 0, MLC_INVALID_ARGUMENT, "expected a numeric type");
  teardown();
}

/* ---- inference: windows ------------------------------------------------- */

static void test_conv(void) {
  setup();
  mlc_value *x = P(MLC_DTYPE_F32, DIMS(SN, 3, 32, 32), 4);
  mlc_value *cw[3] = {x, P(MLC_DTYPE_F32, DIMS(8, 3, 3, 3), 4), P(MLC_DTYPE_F32, DIMS(8), 1)};
  mlc_attr a[] = {mlc_attr_ints("strides", DIMS(2, 2), 2),
                  mlc_attr_ints("pads", DIMS(1, 1, 1, 1), 4)};
  CU_ASSERT(T(E(MLC_OP_CONV, cw, 3, a, 2), MLC_DTYPE_F32, DIMS(SN, 8, 16, 16), 4));
  CU_ASSERT(T(E(MLC_OP_CONV, cw, 2, NULL, 0), MLC_DTYPE_F32, DIMS(SN, 8, 30, 30), 4));
  mlc_attr dl[] = {mlc_attr_ints("dilations", DIMS(2, 3), 2)};
  CU_ASSERT(T(E(MLC_OP_CONV, cw, 2, dl, 1), MLC_DTYPE_F32, DIMS(SN, 8, 28, 26), 4));
  mlc_value *g[2] = {P(MLC_DTYPE_F32, DIMS(1, 4, 5, 5), 4), P(MLC_DTYPE_F32, DIMS(4, 1, 3, 3), 4)};
  mlc_attr ga[] = {mlc_attr_int("groups", 4)};
  CU_ASSERT(T(E(MLC_OP_CONV, g, 2, ga, 1), MLC_DTYPE_F32, DIMS(1, 4, 3, 3), 4));
  mlc_value *bad[2] = {x, P(MLC_DTYPE_F32, DIMS(8, 4, 3, 3), 4)};
  X(MLC_OP_CONV, bad, 2, NULL, 0, MLC_INVALID_ARGUMENT,
    "conv: input channels 3 != weight channels*groups 4");
  mlc_value *bb[3] = {x, cw[1], P(MLC_DTYPE_F32, DIMS(7), 1)};
  X(MLC_OP_CONV, bb, 3, NULL, 0, MLC_INVALID_ARGUMENT, "bias (7,) must have shape (8,)");
  mlc_attr s0[] = {mlc_attr_ints("strides", DIMS(1, 0), 2)};
  X(MLC_OP_CONV, cw, 2, s0, 1, MLC_INVALID_ARGUMENT, "strides[1] = 0 must be >= 1");
  mlc_attr pl[] = {mlc_attr_ints("pads", DIMS(1, 1), 2)};
  X(MLC_OP_CONV, cw, 2, pl, 1, MLC_INVALID_ARGUMENT, "attribute pads has 2 entries, expected 4");
  /* a symbolic spatial extent: a derived symbol n - 2, and the requirement n >= 3 */
  mlc_value *sp[2] = {P(MLC_DTYPE_F32, DIMS(1, 3, SN, 8), 4), cw[1]};
  mlc_value *y = E(MLC_OP_CONV, sp, 2, NULL, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  CU_ASSERT_STRING_EQUAL(mlc_module_sym_name(M, y->type.dims[2]), "n-2");
  CU_ASSERT_EQUAL(y->type.dims[3], 6);
  int has_check = 0;
  for (int k = 0; k < M->nsyms; k++)
    has_check |= M->sym_defs[k].op == MLC_SYM_CHECK && strcmp(M->syms[k], "check(n-3)") == 0;
  CU_ASSERT(has_check);
  mlc_value *big[2] = {P(MLC_DTYPE_F32, DIMS(1, 3, 2, 2), 4), cw[1]};
  X(MLC_OP_CONV, big, 2, NULL, 0, MLC_INVALID_ARGUMENT,
    "kernel extent 3 exceeds padded input extent 2");
  mlc_value *t[2] = {P(MLC_DTYPE_F32, DIMS(1, 2, 3, 3), 4), P(MLC_DTYPE_F32, DIMS(2, 3, 3, 3), 4)};
  mlc_attr ta[] = {mlc_attr_ints("strides", DIMS(2, 2), 2)};
  CU_ASSERT(T(E(MLC_OP_CONV_TRANSPOSE, t, 2, ta, 1), MLC_DTYPE_F32, DIMS(1, 3, 7, 7), 4));
  mlc_attr tb[] = {mlc_attr_ints("strides", DIMS(2, 2), 2),
                   mlc_attr_ints("pads", DIMS(1, 1, 1, 1), 4),
                   mlc_attr_ints("output_padding", DIMS(1, 0), 2)};
  CU_ASSERT(T(E(MLC_OP_CONV_TRANSPOSE, t, 2, tb, 3), MLC_DTYPE_F32, DIMS(1, 3, 6, 5), 4));
  mlc_attr tg[] = {mlc_attr_int("groups", 2)};
  CU_ASSERT(T(E(MLC_OP_CONV_TRANSPOSE, t, 2, tg, 1), MLC_DTYPE_F32, DIMS(1, 6, 5, 5), 4));
  mlc_attr to[] = {mlc_attr_ints("output_padding", DIMS(1, 0), 2)};
  X(MLC_OP_CONV_TRANSPOSE, t, 2, to, 1, MLC_INVALID_ARGUMENT, "output_padding[0] = 1");
  teardown();
}

/* Dim arithmetic: folding, simplification, interning, requirements. */
static void test_dim_arith(void) {
  setup();
  int64_t a, b, c, d;
  const mlc_origin o = {"c1", "Conv", 13, 0};
  MLC_TEST_OK(mlc_dim_add_const(M, 5, -2, &o, &a));
  CU_ASSERT_EQUAL(a, 3);
  MLC_TEST_OK(mlc_dim_add_const(M, SN, 3, &o, &a));
  MLC_TEST_OK(mlc_dim_add_const(M, a, -3, &o, &b));
  CU_ASSERT_EQUAL(b, SN); /* (n + 3) - 3 = n */
  MLC_TEST_OK(mlc_dim_add_const(M, SN, 3, NULL, &c));
  CU_ASSERT_EQUAL(c, a); /* interned */
  CU_ASSERT_STRING_EQUAL(mlc_module_sym_name(M, a), "n+3");
  MLC_TEST_OK(mlc_dim_floordiv_const(M, a, 2, &o, &b));
  MLC_TEST_OK(mlc_dim_floordiv_const(M, b, 3, &o, &c));
  CU_ASSERT_STRING_EQUAL(mlc_module_sym_name(M, c), "(n+3)//6"); /* x // 2 // 3 = x // 6 */
  MLC_TEST_OK(mlc_dim_mul_const(M, SN, 4, &o, &b));
  MLC_TEST_OK(mlc_dim_floordiv_const(M, b, 2, &o, &c));
  CU_ASSERT_STRING_EQUAL(mlc_module_sym_name(M, c), "n*2");
  MLC_TEST_OK(mlc_dim_mul_const(M, SN, 1, &o, &c));
  CU_ASSERT_EQUAL(c, SN);
  MLC_TEST_OK(mlc_dim_add(M, SM, SN, &o, &c));
  MLC_TEST_OK(mlc_dim_add(M, SN, SM, &o, &d));
  CU_ASSERT_EQUAL(c, d); /* commutative */
  MLC_TEST_OK(mlc_dim_min(M, SN, SN, &o, &c));
  CU_ASSERT_EQUAL(c, SN);
  MLC_TEST_OK(mlc_dim_max(M, 7, 3, &o, &c));
  CU_ASSERT_EQUAL(c, 7);
  MLC_TEST_OK(mlc_dim_check(M, a, &o, "too short", &c));
  const mlc_sym_def *def = mlc_module_sym_def(M, c);
  CU_ASSERT(def && def->op == MLC_SYM_CHECK && def->a == a);
  CU_ASSERT(def && def->where && strstr(def->where, "c1") && strstr(def->where, "too short"));
  MLC_TEST_OK(mlc_dim_check(M, SN, &o, "free symbols are never negative", &c));
  CU_ASSERT_EQUAL(c, SN);
  mlc_status st = mlc_dim_floordiv_const(M, SN, 0, &o, &c);
  CU_ASSERT_PTR_NOT_NULL(st);
  mlc_status_free(st);
  teardown();
}

/* Windows, pads and concats over symbolic extents give derived symbols. */
static void test_symbolic_windows(void) {
  setup();
  mlc_value *x = P(MLC_DTYPE_F32, DIMS(1, 2, SN, SM), 4);
  mlc_attr pa[] = {mlc_attr_ints("kernel", DIMS(3, 3), 2), mlc_attr_ints("strides", DIMS(2, 2), 2),
                   mlc_attr_ints("pads", DIMS(0, 0, 0, 0), 4), mlc_attr_int("ceil_mode", 1)};
  mlc_value *y = E(MLC_OP_MAX_POOL, &x, 1, pa, 4);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  CU_ASSERT_STRING_EQUAL(mlc_module_sym_name(M, y->type.dims[2]), "min((n-2)//2+1, (n-1)//2+1)");
  mlc_attr pr[] = {mlc_attr_ints("pads", DIMS(0, 0, 2, 0, 0, 0, 3, 0), 8), mlc_attr_str("mode", "reflect")};
  y = E(MLC_OP_PAD, &x, 1, pr, 2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  CU_ASSERT_STRING_EQUAL(mlc_module_sym_name(M, y->type.dims[2]), "n+5");
  int found = 0; /* the reflect requirement n >= 4 */
  for (int k = 0; k < M->nsyms; k++)
    found |= M->sym_defs[k].op == MLC_SYM_CHECK && M->sym_defs[k].where && strstr(M->sym_defs[k].where, "reflect");
  CU_ASSERT(found);
  mlc_value *parts[2] = {x, P(MLC_DTYPE_F32, DIMS(1, 2, SN, 5), 4)};
  mlc_attr ax[] = {mlc_attr_int("axis", 3)};
  y = E(MLC_OP_CONCAT, parts, 2, ax, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  CU_ASSERT_STRING_EQUAL(mlc_module_sym_name(M, y->type.dims[3]), "m+5");
  teardown();
}

/* Known values of shape computations: shape_of, take, concat, arithmetic;
** all-integer results fold to constants. */
static void test_sym_values(void) {
  setup();
  mlc_value *x = P(MLC_DTYPE_F32, DIMS(SN, SM, 256), 3);
  mlc_value *s = E(MLC_OP_SHAPE_OF, &x, 1, NULL, 0);
  CU_ASSERT_FATAL(s && s->nsv == 3 && s->sv_sym == 3 && s->sv[0] == SN && s->sv[1] == SM && s->sv[2] == 256);
  int64_t i1 = 1, i2 = 2, four = 4;
  mlc_value *c1 = C(MLC_DTYPE_I64, NULL, 0, &i1), *c2 = C(MLC_DTYPE_I64, NULL, 0, &i2);
  mlc_value *g1 = E(MLC_OP_GATHER, (mlc_value *[]){s, c1}, 2, NULL, 0);
  CU_ASSERT(g1 && g1->nsv == 1 && g1->sv_sym == 1 && g1->sv[0] == SM);
  mlc_value *g2 = E(MLC_OP_GATHER, (mlc_value *[]){s, c2}, 2, NULL, 0);
  CU_ASSERT(is_const(g2) && B(g2, &(int64_t){256}, 8)); /* a static dim: a constant */
  mlc_value *c4 = C(MLC_DTYPE_I64, NULL, 0, &four);
  mlc_value *mul = E(MLC_OP_MUL, (mlc_value *[]){g1, c4}, 2, NULL, 0);
  CU_ASSERT(mul && mul->nsv == 1 && mul->sv_sym == 1 &&
            strcmp(mlc_module_sym_name(M, mul->sv[0]), "m*4") == 0);
  mlc_value *div = E(MLC_OP_DIV, (mlc_value *[]){g2, c4}, 2, NULL, 0);
  CU_ASSERT(is_const(div) && B(div, &(int64_t){64}, 8));
  int64_t one[1] = {1};
  mlc_attr r1[] = {mlc_attr_ints("shape", one, 1)};
  mlc_value *u1 = E(MLC_OP_RESHAPE, &g1, 1, r1, 1);
  mlc_value *u2 = E(MLC_OP_RESHAPE, &div, 1, r1, 1);
  mlc_attr ax[] = {mlc_attr_int("axis", 0)};
  mlc_value *cat = E(MLC_OP_CONCAT, (mlc_value *[]){u1, u2}, 2, ax, 1);
  CU_ASSERT(cat && cat->nsv == 2 && cat->sv_sym == 1 && cat->sv[0] == SM && cat->sv[1] == 64);
  const int64_t *vals;
  uint64_t sym;
  int n;
  CU_ASSERT(mlc_value_sym_ints(M, cat, &vals, &sym, &n) && n == 2 && vals[1] == 64);
  /* a float tensor has no known values */
  CU_ASSERT(!mlc_value_sym_ints(M, x, &vals, &sym, &n));
  teardown();
}

/* The extent of strided_slice |b|:|e|:|st| on symbolic n, by name ("" when
** the slice is refused as UNIMPLEMENTED). */
static const char *slice_sym(mlc_value *x, int64_t b, int64_t e, int64_t st) {
  mlc_attr a[] = {mlc_attr_ints("begin", DIMS(0, b), 2), mlc_attr_ints("end", DIMS(INT64_MAX, e), 2),
                  mlc_attr_ints("step", DIMS(1, st), 2)};
  mlc_value *y = NULL;
  mlc_status s = mlc_graph_emit1(F, MLC_OP_SLICE, &x, 1, a, 3, NULL, &y);
  if (s) {
    CU_ASSERT_EQUAL(mlc_status_code(s), MLC_UNIMPLEMENTED);
    mlc_status_free(s);
    return "";
  }
  CU_ASSERT_EQUAL_FATAL(y->type.dims[0], 3);
  return y->type.dims[1] >= 0 ? "known" : mlc_module_sym_name(M, y->type.dims[1]);
}

/* Slices and resizes of symbolic extents give derived symbols. */
static void test_symbolic_slice_resize(void) {
  setup();
  mlc_value *x = P(MLC_DTYPE_F32, DIMS(3, SN), 2);
  CU_ASSERT_STRING_EQUAL(slice_sym(x, 1, -1, 1), "max(n-2, 0)");       /* x[1:-1] */
  CU_ASSERT_STRING_EQUAL(slice_sym(x, 0, INT64_MAX, 2), "(n+1)//2");   /* x[::2] */
  CU_ASSERT_STRING_EQUAL(slice_sym(x, -3, INT64_MAX, 1), "min(n, 3)"); /* x[-3:] */
  CU_ASSERT_STRING_EQUAL(slice_sym(x, -1, INT64_MIN, -1), "n");        /* x[::-1] */
  CU_ASSERT_STRING_EQUAL(slice_sym(x, 2, 8, 3), "(min(max(n-2, 0), 6)+2)//3");
  CU_ASSERT_STRING_EQUAL(slice_sym(x, 5, 1, -2), "(min(max(n-2, 0), 4)+1)//2");
  CU_ASSERT_STRING_EQUAL(slice_sym(x, -5, -1, 1), "min(max(n-1, 0), 4)");
  CU_ASSERT_STRING_EQUAL(slice_sym(x, 0, 3, 1), "min(n, 3)"); /* interned: the same symbol as x[-3:] */
  CU_ASSERT_STRING_EQUAL(slice_sym(x, -3, 5, 1), "");         /* shrinks as n grows: refused */
  mlc_attr e0[] = {mlc_attr_ints("begin", DIMS(0, 4), 2), mlc_attr_ints("end", DIMS(3, 2), 2),
                   mlc_attr_ints("step", DIMS(1, 1), 2)};
  CU_ASSERT(T(E(MLC_OP_SLICE, &x, 1, e0, 3), MLC_DTYPE_F32, DIMS(3, 0), 2)); /* x[4:2]: empty */

  mlc_value *im = P(MLC_DTYPE_F32, DIMS(1, 2, SN, SM), 4);
  int64_t h2, w15;
  MLC_TEST_OK(mlc_dim_scale(M, SN, 2.0, NULL, &h2));
  MLC_TEST_OK(mlc_dim_scale(M, SM, 1.5, NULL, &w15));
  CU_ASSERT_STRING_EQUAL(mlc_module_sym_name(M, h2), "n*2");
  CU_ASSERT_STRING_EQUAL(mlc_module_sym_name(M, w15), "m*3//2");
  int64_t h;
  MLC_TEST_OK(mlc_dim_scale(M, SN, 0.5, NULL, &h));
  CU_ASSERT_STRING_EQUAL(mlc_module_sym_name(M, h), "n//2");
  MLC_TEST_OK(mlc_dim_scale(M, 7, 1.5, NULL, &h));
  CU_ASSERT_EQUAL(h, 10);
  mlc_status st = mlc_dim_scale(M, SN, 1.0 / 3, NULL, &h);
  CU_ASSERT_EQUAL(mlc_status_code(st), MLC_UNIMPLEMENTED);
  mlc_status_free(st);
  mlc_attr rs[] = {mlc_attr_ints("sizes", DIMS(1, 2, h2, w15), 4), mlc_attr_floats("scales", (const double[]){1, 1, 2, 1.5}, 4),
                   mlc_attr_str("mode", "linear")};
  CU_ASSERT(T(E(MLC_OP_RESIZE, &im, 1, rs, 3), MLC_DTYPE_F32, DIMS(1, 2, h2, w15), 4));
  mlc_attr bad[] = {mlc_attr_ints("sizes", DIMS(1, 2, h2, SM), 4), rs[1], rs[2]};
  X(MLC_OP_RESIZE, &im, 1, bad, 3, MLC_INVALID_ARGUMENT, "sizes[3] = m is not floor(m * 1.5) = m*3//2");
  mlc_attr third[] = {mlc_attr_ints("sizes", DIMS(1, 2, SN, SM), 4),
                      mlc_attr_floats("scales", (const double[]){1, 1, 1, 1.0 / 3}, 4)};
  X(MLC_OP_RESIZE, &im, 1, third, 2, MLC_UNIMPLEMENTED, "axis 3: scaling the symbolic extent m by");
  /* static sizes: the scale read at run time, the input checked not empty */
  mlc_attr fixed[] = {mlc_attr_ints("sizes", DIMS(1, 2, 6, 9), 4), mlc_attr_int("scales_from_sizes", 1)};
  CU_ASSERT(T(E(MLC_OP_RESIZE, &im, 1, fixed, 2), MLC_DTYPE_F32, DIMS(1, 2, 6, 9), 4));
  int found = 0;
  for (int k = 0; k < M->nsyms; k++)
    found |= M->sym_defs[k].op == MLC_SYM_CHECK && M->sym_defs[k].where &&
             strstr(M->sym_defs[k].where, "axis 3 of extent 0 cannot be resized to 9");
  CU_ASSERT(found);
  teardown();
}

static void test_pool(void) {
  setup();
  mlc_value *x = P(MLC_DTYPE_F32, DIMS(SN, 2, 5, 5), 4);
  mlc_attr a[] = {mlc_attr_ints("kernel", DIMS(2, 2), 2), mlc_attr_ints("strides", DIMS(2, 2), 2)};
  CU_ASSERT(T(E(MLC_OP_MAX_POOL, &x, 1, a, 2), MLC_DTYPE_F32, DIMS(SN, 2, 2, 2), 4));
  mlc_attr c[] = {a[0], a[1], mlc_attr_int("ceil_mode", 1)};
  CU_ASSERT(T(E(MLC_OP_AVG_POOL, &x, 1, c, 3), MLC_DTYPE_F32, DIMS(SN, 2, 3, 3), 4));
  /* ceil_mode: the last window would start in the right padding: dropped. */
  mlc_attr d[] = {a[0], a[1], mlc_attr_int("ceil_mode", 1),
                  mlc_attr_ints("pads", DIMS(1, 0, 1, 0), 4)};
  CU_ASSERT(T(E(MLC_OP_MAX_POOL, &x, 1, d, 4), MLC_DTYPE_F32, DIMS(SN, 2, 3, 3), 4));
  mlc_attr e[] = {mlc_attr_ints("kernel", DIMS(3, 3), 2),
                  mlc_attr_ints("pads", DIMS(1, 1, 1, 1), 4),
                  mlc_attr_ints("dilations", DIMS(2, 1), 2)};
  CU_ASSERT(T(E(MLC_OP_MAX_POOL, &x, 1, e, 3), MLC_DTYPE_F32, DIMS(SN, 2, 3, 5), 4));
  X(MLC_OP_AVG_POOL, &x, 1, e, 3, MLC_UNIMPLEMENTED, "dilations");
  X(MLC_OP_MAX_POOL, &x, 1, NULL, 0, MLC_INVALID_ARGUMENT, "attribute kernel is missing");
  mlc_attr k3[] = {mlc_attr_ints("kernel", DIMS(3), 1)};
  X(MLC_OP_MAX_POOL, &x, 1, k3, 1, MLC_INVALID_ARGUMENT,
    "attribute kernel has 1 entries, expected 2");
  mlc_attr pb[] = {mlc_attr_ints("kernel", DIMS(2, 2), 2),
                   mlc_attr_ints("pads", DIMS(2, 0, 0, 0), 4)};
  X(MLC_OP_MAX_POOL, &x, 1, pb, 2, MLC_INVALID_ARGUMENT, "smaller than the kernel extent 2");
  mlc_value *xi = P(MLC_DTYPE_I32, DIMS(1, 1, 4, 4), 4);
  X(MLC_OP_AVG_POOL, &xi, 1, a, 2, MLC_INVALID_ARGUMENT, "expected a floating-point type");
  mlc_value *x2 = P(MLC_DTYPE_F32, DIMS(2, 5), 2);
  X(MLC_OP_MAX_POOL, &x2, 1, a, 2, MLC_INVALID_ARGUMENT, "must have rank >= 3");
  teardown();
}

/* ---- inference: data movement ------------------------------------------- */

static void test_reshape_transpose(void) {
  setup();
  mlc_value *x = P(MLC_DTYPE_F32, DIMS(2, 3), 2), *s = P(MLC_DTYPE_F32, DIMS(SN, 6), 2);
  mlc_attr r1[] = {mlc_attr_ints("shape", DIMS(3, 2), 2)};
  CU_ASSERT(T(E(MLC_OP_RESHAPE, &x, 1, r1, 1), MLC_DTYPE_F32, DIMS(3, 2), 2));
  mlc_attr r2[] = {mlc_attr_ints("shape", DIMS(4, 2), 2)};
  X(MLC_OP_RESHAPE, &x, 1, r2, 1, MLC_INVALID_ARGUMENT,
    "cannot reshape (2, 3) to (4, 2): element counts differ");
  mlc_attr r3[] = {mlc_attr_ints("shape", DIMS(SN, 2, 3), 3)};
  CU_ASSERT(T(E(MLC_OP_RESHAPE, &s, 1, r3, 1), MLC_DTYPE_F32, DIMS(SN, 2, 3), 3));
  mlc_attr r4[] = {mlc_attr_ints("shape", DIMS(6, SN), 2)};
  CU_ASSERT(T(E(MLC_OP_RESHAPE, &s, 1, r4, 1), MLC_DTYPE_F32, DIMS(6, SN), 2));
  mlc_attr r5[] = {mlc_attr_ints("shape", DIMS(SM, 6), 2)};
  X(MLC_OP_RESHAPE, &s, 1, r5, 1, MLC_INVALID_ARGUMENT, "cannot reshape (n, 6) to (m, 6)");
  mlc_attr r6[] = {mlc_attr_ints("shape", DIMS(-77, 6), 2)};
  X(MLC_OP_RESHAPE, &s, 1, r6, 1, MLC_INVALID_ARGUMENT, "shape[0] = -77 is not a valid dim");
  mlc_value *y = P(MLC_DTYPE_I8, DIMS(2, 3, 4), 3);
  mlc_attr p1[] = {mlc_attr_ints("perm", DIMS(2, 0, 1), 3)};
  CU_ASSERT(T(E(MLC_OP_TRANSPOSE, &y, 1, p1, 1), MLC_DTYPE_I8, DIMS(4, 2, 3), 3));
  CU_ASSERT(T(E(MLC_OP_TRANSPOSE, &y, 1, NULL, 0), MLC_DTYPE_I8, DIMS(4, 3, 2), 3));
  mlc_attr p2[] = {mlc_attr_ints("perm", DIMS(0, 0, 1), 3)};
  X(MLC_OP_TRANSPOSE, &y, 1, p2, 1, MLC_INVALID_ARGUMENT, "perm is not a permutation");
  mlc_attr p3[] = {mlc_attr_ints("perm", DIMS(1, 0), 2)};
  X(MLC_OP_TRANSPOSE, &y, 1, p3, 1, MLC_INVALID_ARGUMENT, "perm has 2 entries, expected 3");
  teardown();
}

static void test_concat_slice_gather(void) {
  setup();
  mlc_value *a[2] = {P(MLC_DTYPE_F32, DIMS(2, 3), 2), P(MLC_DTYPE_F32, DIMS(2, 5), 2)};
  mlc_attr ax1[] = {mlc_attr_int("axis", 1)}, ax0[] = {mlc_attr_int("axis", 0)};
  CU_ASSERT(T(E(MLC_OP_CONCAT, a, 2, ax1, 1), MLC_DTYPE_F32, DIMS(2, 8), 2));
  X(MLC_OP_CONCAT, a, 2, ax0, 1, MLC_INVALID_ARGUMENT,
    "argument 1 of shape (2, 5) does not match (2, 3)");
  mlc_attr ax2[] = {mlc_attr_int("axis", 2)};
  X(MLC_OP_CONCAT, a, 2, ax2, 1, MLC_INVALID_ARGUMENT, "axis 2 is out of range for rank 2");
  mlc_value *s[2] = {P(MLC_DTYPE_F32, DIMS(SN, 3), 2), P(MLC_DTYPE_F32, DIMS(0, 3), 2)};
  CU_ASSERT(T(E(MLC_OP_CONCAT, s, 2, ax0, 1), MLC_DTYPE_F32, DIMS(SN, 3), 2));
  mlc_value *s2[2] = {s[0], P(MLC_DTYPE_F32, DIMS(2, 3), 2)};
  mlc_value *cy = E(MLC_OP_CONCAT, s2, 2, ax0, 1);
  CU_ASSERT(cy && MLC_DIM_IS_SYM(cy->type.dims[0]) && strcmp(mlc_module_sym_name(M, cy->type.dims[0]), "n+2") == 0);

  mlc_value *x = P(MLC_DTYPE_F32, DIMS(10, 6), 2);
  mlc_attr sl[] = {mlc_attr_ints("begin", DIMS(8, 0), 2), mlc_attr_ints("end", DIMS(1, 6), 2),
                   mlc_attr_ints("step", DIMS(-3, 2), 2)};
  CU_ASSERT(T(E(MLC_OP_SLICE, &x, 1, sl, 3), MLC_DTYPE_F32, DIMS(3, 3), 2));
  mlc_attr s3[] = {mlc_attr_ints("begin", DIMS(4, 7), 2), mlc_attr_ints("end", DIMS(-1, 9), 2),
                   mlc_attr_ints("step", DIMS(-1, 1), 2)};
  CU_ASSERT(T(E(MLC_OP_SLICE, &x, 1, s3, 3), MLC_DTYPE_F32, DIMS(5, 0), 2));
  mlc_attr s0[] = {mlc_attr_ints("begin", DIMS(0, 0), 2), mlc_attr_ints("end", DIMS(1, 6), 2),
                   mlc_attr_ints("step", DIMS(1, 0), 2)};
  X(MLC_OP_SLICE, &x, 1, s0, 3, MLC_INVALID_ARGUMENT, "step[1] is 0");
  mlc_attr sb[] = {mlc_attr_ints("begin", DIMS(0), 1), mlc_attr_ints("end", DIMS(1, 6), 2),
                   mlc_attr_ints("step", DIMS(1, 1), 2)};
  X(MLC_OP_SLICE, &x, 1, sb, 3, MLC_INVALID_ARGUMENT, "attribute begin has 1 entries, expected 2");

  mlc_value *g[2] = {P(MLC_DTYPE_F32, DIMS(5, 4), 2), P(MLC_DTYPE_I64, DIMS(2, 3), 2)};
  CU_ASSERT(T(E(MLC_OP_GATHER, g, 2, ax0, 1), MLC_DTYPE_F32, DIMS(2, 3, 4), 3));
  CU_ASSERT(T(E(MLC_OP_GATHER, g, 2, ax1, 1), MLC_DTYPE_F32, DIMS(5, 2, 3), 3));
  mlc_value *gs[2] = {g[0], P(MLC_DTYPE_I32, NULL, 0)};
  CU_ASSERT(T(E(MLC_OP_GATHER, gs, 2, ax1, 1), MLC_DTYPE_F32, DIMS(5), 1));
  mlc_value *gf[2] = {g[0], P(MLC_DTYPE_F32, DIMS(2), 1)};
  X(MLC_OP_GATHER, gf, 2, ax0, 1, MLC_INVALID_ARGUMENT,
    "argument 1 has dtype float32, expected int32 or int64");
  teardown();
}

static void test_pad_tile_misc(void) {
  setup();
  mlc_value *x = P(MLC_DTYPE_F32, DIMS(2, 3), 2), *s = P(MLC_DTYPE_F32, DIMS(SN, 3), 2);
  mlc_attr b1[] = {mlc_attr_ints("shape", DIMS(2, 2, 3), 3)};
  CU_ASSERT(T(E(MLC_OP_BROADCAST_TO, &x, 1, b1, 1), MLC_DTYPE_F32, DIMS(2, 2, 3), 3));
  mlc_attr b2[] = {mlc_attr_ints("shape", DIMS(4, 3), 2)};
  X(MLC_OP_BROADCAST_TO, &x, 1, b2, 1, MLC_INVALID_ARGUMENT,
    "cannot broadcast shape (2, 3) to (4, 3)");
  mlc_attr b3[] = {mlc_attr_ints("shape", DIMS(2, SN, 3), 3)};
  CU_ASSERT(T(E(MLC_OP_BROADCAST_TO, &s, 1, b3, 1), MLC_DTYPE_F32, DIMS(2, SN, 3), 3));

  mlc_attr p1[] = {mlc_attr_ints("pads", DIMS(1, 0, 1, 2), 4)};
  CU_ASSERT(T(E(MLC_OP_PAD, &x, 1, p1, 1), MLC_DTYPE_F32, DIMS(4, 5), 2));
  mlc_attr p2[] = {mlc_attr_ints("pads", DIMS(0, -1, 0, 0), 4), mlc_attr_str("mode", "edge")};
  CU_ASSERT(T(E(MLC_OP_PAD, &x, 1, p2, 2), MLC_DTYPE_F32, DIMS(2, 2), 2));
  mlc_attr p3[] = {p1[0], mlc_attr_str("mode", "wrap")};
  X(MLC_OP_PAD, &x, 1, p3, 2, MLC_INVALID_ARGUMENT,
    "mode \"wrap\" is not constant, reflect or edge");
  mlc_attr p4[] = {mlc_attr_ints("pads", DIMS(2, 0, 0, 0), 4), mlc_attr_str("mode", "reflect")};
  X(MLC_OP_PAD, &x, 1, p4, 2, MLC_INVALID_ARGUMENT,
    "reflect pads 2, 0 must be less than the extent 2");
  mlc_attr p5[] = {mlc_attr_ints("pads", DIMS(0, 1, 0, 1), 4)};
  CU_ASSERT(T(E(MLC_OP_PAD, &s, 1, p5, 1), MLC_DTYPE_F32, DIMS(SN, 5), 2));
  mlc_attr p6[] = {mlc_attr_ints("pads", DIMS(0, -2, 0, -2), 4)};
  X(MLC_OP_PAD, &x, 1, p6, 1, MLC_INVALID_ARGUMENT, "crop more than the extent 3");

  mlc_attr t1[] = {mlc_attr_ints("repeats", DIMS(2, 0), 2)};
  CU_ASSERT(T(E(MLC_OP_TILE, &x, 1, t1, 1), MLC_DTYPE_F32, DIMS(4, 0), 2));
  mlc_attr t2[] = {mlc_attr_ints("repeats", DIMS(1, -1), 2)};
  X(MLC_OP_TILE, &x, 1, t2, 1, MLC_INVALID_ARGUMENT, "repeats[1] = -1 must be >= 0");
  mlc_attr t3[] = {mlc_attr_ints("repeats", DIMS(2, 1), 2)};
  mlc_value *ty = E(MLC_OP_TILE, &s, 1, t3, 1);
  CU_ASSERT(ty && MLC_DIM_IS_SYM(ty->type.dims[0]) && strcmp(mlc_module_sym_name(M, ty->type.dims[0]), "n*2") == 0);

  CU_ASSERT(T(E(MLC_OP_SHAPE_OF, &s, 1, NULL, 0), MLC_DTYPE_I64, DIMS(2), 1));
  CU_ASSERT(T(E(MLC_OP_COPY, &s, 1, NULL, 0), MLC_DTYPE_F32, DIMS(SN, 3), 2));
  teardown();
}

static void test_error_origin(void) {
  setup();
  mlc_value *a[2] = {P(MLC_DTYPE_F32, DIMS(2), 1), P(MLC_DTYPE_F32, DIMS(3), 1)}, *out = NULL;
  mlc_origin o = {"add_7", "Add", 14, 7};
  mlc_status s = mlc_graph_emit1(F, MLC_OP_ADD, a, 2, NULL, 0, &o, &out);
  CU_ASSERT_STRING_EQUAL(
      mlc_status_message(s),
      "node \"add_7\" (Add, opset 14): add: cannot broadcast shapes (2,) and (3,)");
  mlc_status_free(s);
  teardown();
}

/* ---- evaluation --------------------------------------------------------- */

static void test_fold_binary(void) {
  setup();
  int64_t ia[3] = {1, 2, 3}, ib[1] = {10};
  mlc_value *a[2] = {C(MLC_DTYPE_I64, DIMS(3), 1, ia), C(MLC_DTYPE_I64, DIMS(1), 1, ib)};
  mlc_value *r = E(MLC_OP_ADD, a, 2, NULL, 0);
  CU_ASSERT(is_const(r) && T(r, MLC_DTYPE_I64, DIMS(3), 1));
  CU_ASSERT(is_const(r) && B(r, (int64_t[]){11, 12, 13}, 24));
  CU_ASSERT_EQUAL(F->nblocks, 0); /* nothing emitted */

  int32_t ma[4] = {-7, 7, -7, 7}, mb[4] = {3, -3, -3, 3};
  mlc_value *m[2] = {C(MLC_DTYPE_I32, DIMS(4), 1, ma), C(MLC_DTYPE_I32, DIMS(4), 1, mb)};
  CU_ASSERT(B(E(MLC_OP_MOD, m, 2, NULL, 0), (int32_t[]){2, -2, -1, 1}, 16));
  mlc_attr fm[] = {mlc_attr_int("fmod", 1)};
  CU_ASSERT(B(E(MLC_OP_MOD, m, 2, fm, 1), (int32_t[]){-1, 1, -1, 1}, 16));
  CU_ASSERT(B(E(MLC_OP_DIV, m, 2, NULL, 0), (int32_t[]){-2, -2, 2, 2}, 16));
  CU_ASSERT(B(E(MLC_OP_LESS, m, 2, NULL, 0), (uint8_t[]){1, 0, 1, 0}, 4));

  float fa[2] = {-5.5f, 5.5f}, fb[2] = {2.0f, 2.0f};
  mlc_value *f[2] = {C(MLC_DTYPE_F32, DIMS(2), 1, fa), C(MLC_DTYPE_F32, DIMS(2), 1, fb)};
  CU_ASSERT(f32_eq(D(E(MLC_OP_MOD, f, 2, fm, 1)), (float[]){-1.5f, 1.5f}, 2, 0));
  CU_ASSERT(f32_eq(D(E(MLC_OP_POW, f, 2, NULL, 0)), (float[]){30.25f, 30.25f}, 2, 0));
  CU_ASSERT(f32_eq(D(E(MLC_OP_PRELU, f, 2, NULL, 0)), (float[]){-11.0f, 5.5f}, 2, 0));

  int32_t z[4] = {1, 0, 1, 1};
  mlc_value *dz[2] = {m[0], C(MLC_DTYPE_I32, DIMS(4), 1, z)}, *out = NULL;
  mlc_status s = mlc_graph_emit1(F, MLC_OP_DIV, dz, 2, NULL, 0, NULL, &out);
  CU_ASSERT_EQUAL(mlc_status_code(s), MLC_INVALID_ARGUMENT);
  mlc_status_free(s);

  uint64_t ua[2] = {UINT64_MAX, 6}, ub[2] = {2, 4};
  mlc_value *u[2] = {C(MLC_DTYPE_U64, DIMS(2), 1, ua), C(MLC_DTYPE_U64, DIMS(2), 1, ub)};
  CU_ASSERT(B(E(MLC_OP_DIV, u, 2, NULL, 0), (uint64_t[]){UINT64_MAX / 2, 1}, 16));
  CU_ASSERT(B(E(MLC_OP_MAXIMUM, u, 2, NULL, 0), (uint64_t[]){UINT64_MAX, 6}, 16));
  uint8_t sa[2] = {0x81, 0x81}, sb[2] = {1, 9};
  mlc_value *sh[2] = {C(MLC_DTYPE_U8, DIMS(2), 1, sa), C(MLC_DTYPE_U8, DIMS(2), 1, sb)};
  mlc_attr rt[] = {mlc_attr_int("right", 1)};
  CU_ASSERT(B(E(MLC_OP_BITSHIFT, sh, 2, NULL, 0), (uint8_t[]){0x02, 0}, 2));
  CU_ASSERT(B(E(MLC_OP_BITSHIFT, sh, 2, rt, 1), (uint8_t[]){0x40, 0}, 2));

  uint8_t cond[2] = {1, 0};
  float w1[2] = {1, 2}, w2[1] = {9};
  mlc_value *w[3] = {C(MLC_DTYPE_BOOL, DIMS(2, 1), 2, cond), C(MLC_DTYPE_F32, DIMS(2), 1, w1),
                     C(MLC_DTYPE_F32, DIMS(1), 1, w2)};
  r = E(MLC_OP_WHERE, w, 3, NULL, 0);
  CU_ASSERT(T(r, MLC_DTYPE_F32, DIMS(2, 2), 2) && f32_eq(D(r), (float[]){1, 2, 9, 9}, 4, 0));
  teardown();
}

static void test_fold_unary_cast(void) {
  setup();
  float fx[4] = {1.7f, -1.7f, 2.5f, -0.5f};
  mlc_value *x = C(MLC_DTYPE_F32, DIMS(4), 1, fx);
  mlc_attr ci[] = {mlc_attr_int("dtype", MLC_DTYPE_I32)};
  CU_ASSERT(B(E(MLC_OP_CAST, &x, 1, ci, 1), (int32_t[]){1, -1, 2, 0}, 16));
  CU_ASSERT(f32_eq(D(E(MLC_OP_ROUND, &x, 1, NULL, 0)), (float[]){2, -2, 2, -0.0f}, 4, 0));
  CU_ASSERT(f32_eq(D(E(MLC_OP_RELU, &x, 1, NULL, 0)), (float[]){1.7f, 0, 2.5f, 0}, 4, 0));
  mlc_attr cl[] = {mlc_attr_float("min", -1.0), mlc_attr_float("max", 2.0)};
  CU_ASSERT(f32_eq(D(E(MLC_OP_CLIP, &x, 1, cl, 2)), (float[]){1.7f, -1, 2, -0.5f}, 4, 0));
  CU_ASSERT(f32_eq(D(E(MLC_OP_SIGMOID, &x, 1, NULL, 0)),
                   (float[]){0.845534734f, 0.154465266f, 0.924141820f, 0.377540669f}, 4, 1e-6f));

  /* float32 -> float16 -> float32: round to nearest even, subnormals, overflow. */
  float h[6] = {1.0f, 0.1f, 65504.0f, 1e-7f, 65520.0f, -2.0f};
  mlc_value *hx = C(MLC_DTYPE_F32, DIMS(6), 1, h);
  mlc_attr c16[] = {mlc_attr_int("dtype", MLC_DTYPE_F16)},
           c32[] = {mlc_attr_int("dtype", MLC_DTYPE_F32)};
  mlc_value *h16 = E(MLC_OP_CAST, &hx, 1, c16, 1);
  CU_ASSERT(B(h16, (uint16_t[]){0x3c00, 0x2e66, 0x7bff, 0x0002, 0x7c00, 0xc000}, 12));
  const float *back = D(E(MLC_OP_CAST, &h16, 1, c32, 1));
  CU_ASSERT(back && back[1] == 0.0999755859375f && back[3] == 0x1p-23f && isinf(back[4]));
  /* float16 arithmetic rounds its float32 result. */
  mlc_value *hh[2] = {h16, h16};
  CU_ASSERT(B(E(MLC_OP_ADD, hh, 2, NULL, 0),
              (uint16_t[]){0x4000, 0x3266, 0x7c00, 0x0004, 0x7c00, 0xc400}, 12));
  float bf[2] = {1.00390625f, 1.01171875f};
  mlc_value *bx = C(MLC_DTYPE_F32, DIMS(2), 1, bf);
  mlc_attr cb[] = {mlc_attr_int("dtype", MLC_DTYPE_BF16)};
  CU_ASSERT(B(E(MLC_OP_CAST, &bx, 1, cb, 1), (uint16_t[]){0x3f80, 0x3f82}, 4));

  int8_t ix[3] = {-128, 5, 0};
  mlc_value *i8 = C(MLC_DTYPE_I8, DIMS(3), 1, ix);
  CU_ASSERT(B(E(MLC_OP_NEG, &i8, 1, NULL, 0), (int8_t[]){-128, -5, 0}, 3));
  CU_ASSERT(B(E(MLC_OP_SIGN, &i8, 1, NULL, 0), (int8_t[]){-1, 1, 0}, 3));
  mlc_attr cbo[] = {mlc_attr_int("dtype", MLC_DTYPE_BOOL)};
  mlc_value *bo = E(MLC_OP_CAST, &i8, 1, cbo, 1);
  CU_ASSERT(B(E(MLC_OP_LOGICAL_NOT, &bo, 1, NULL, 0), (uint8_t[]){0, 0, 1}, 3));
  float nx[3] = {NAN, INFINITY, -INFINITY};
  mlc_value *nv = C(MLC_DTYPE_F32, DIMS(3), 1, nx);
  mlc_attr dn[] = {mlc_attr_int("detect_negative", 0)};
  CU_ASSERT(B(E(MLC_OP_ISINF, &nv, 1, dn, 1), (uint8_t[]){0, 1, 0}, 3));
  CU_ASSERT(B(E(MLC_OP_ISNAN, &nv, 1, NULL, 0), (uint8_t[]){1, 0, 0}, 3));
  teardown();
}

static void test_fold_reduce(void) {
  setup();
  float fx[6] = {1, 2, 3, 4, 5, 6};
  mlc_value *x = C(MLC_DTYPE_F32, DIMS(2, 3), 2, fx);
  mlc_attr a1[] = {mlc_attr_ints("axes", DIMS(1), 1), mlc_attr_int("keepdims", 0)};
  mlc_value *r = E(MLC_OP_MEAN, &x, 1, a1, 2);
  CU_ASSERT(T(r, MLC_DTYPE_F32, DIMS(2), 1) && f32_eq(D(r), (float[]){2, 5}, 2, 0));
  mlc_attr a0[] = {mlc_attr_ints("axes", DIMS(0), 1)};
  r = E(MLC_OP_MAX, &x, 1, a0, 1);
  CU_ASSERT(T(r, MLC_DTYPE_F32, DIMS(1, 3), 2) && f32_eq(D(r), (float[]){4, 5, 6}, 3, 0));
  CU_ASSERT(f32_eq(D(E(MLC_OP_PROD, &x, 1, NULL, 0)), (float[]){720}, 1, 0));
  int32_t ix[6] = {3, -1, 7, 7, 0, 7};
  mlc_value *i = C(MLC_DTYPE_I32, DIMS(2, 3), 2, ix);
  CU_ASSERT(B(E(MLC_OP_SUM, &i, 1, a0, 1), (int32_t[]){10, -1, 14}, 12));
  CU_ASSERT(B(E(MLC_OP_MIN, &i, 1, a1, 2), (int32_t[]){-1, 0}, 8));
  mlc_attr am[] = {mlc_attr_int("axis", 1), mlc_attr_int("keepdims", 0)};
  CU_ASSERT(B(E(MLC_OP_ARGMAX, &i, 1, am, 2), (int64_t[]){2, 0}, 16));
  CU_ASSERT(B(E(MLC_OP_ARGMIN, &i, 1, am, 2), (int64_t[]){1, 1}, 16));
  mlc_attr al[] = {mlc_attr_int("axis", 1), mlc_attr_int("select_last_index", 1)};
  r = E(MLC_OP_ARGMAX, &i, 1, al, 2);
  CU_ASSERT(T(r, MLC_DTYPE_I64, DIMS(2, 1), 2) && B(r, (int64_t[]){2, 2}, 16));

  float sx[3] = {1, 2, 3};
  mlc_value *s = C(MLC_DTYPE_F32, DIMS(1, 3), 2, sx);
  CU_ASSERT(f32_eq(D(E(MLC_OP_SOFTMAX, &s, 1, NULL, 0)),
                   (float[]){0.09003057f, 0.24472847f, 0.66524096f}, 3, 1e-7f));
  CU_ASSERT(f32_eq(D(E(MLC_OP_LOG_SOFTMAX, &s, 1, NULL, 0)),
                   (float[]){-2.40760596f, -1.40760596f, -0.40760596f}, 3, 1e-6f));
  mlc_attr ax0[] = {mlc_attr_int("axis", 0)};
  CU_ASSERT(f32_eq(D(E(MLC_OP_SOFTMAX, &s, 1, ax0, 1)), (float[]){1, 1, 1}, 3, 0));
  teardown();
}

static void test_fold_movement(void) {
  setup();
  float fx[6] = {1, 2, 3, 4, 5, 6};
  mlc_value *x = C(MLC_DTYPE_F32, DIMS(2, 3), 2, fx);
  mlc_value *t = E(MLC_OP_TRANSPOSE, &x, 1, NULL, 0);
  CU_ASSERT(T(t, MLC_DTYPE_F32, DIMS(3, 2), 2) && f32_eq(D(t), (float[]){1, 4, 2, 5, 3, 6}, 6, 0));
  mlc_attr rs[] = {mlc_attr_ints("shape", DIMS(3, 2), 2)};
  CU_ASSERT(f32_eq(D(E(MLC_OP_RESHAPE, &x, 1, rs, 1)), fx, 6, 0));

  int64_t v10[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  mlc_value *v = C(MLC_DTYPE_I64, DIMS(10), 1, v10);
  mlc_attr sl[] = {mlc_attr_ints("begin", DIMS(8), 1), mlc_attr_ints("end", DIMS(1), 1),
                   mlc_attr_ints("step", DIMS(-3), 1)};
  mlc_value *r = E(MLC_OP_SLICE, &v, 1, sl, 3);
  CU_ASSERT(T(r, MLC_DTYPE_I64, DIMS(3), 1) && B(r, (int64_t[]){8, 5, 2}, 24));
  mlc_attr s2[] = {mlc_attr_ints("begin", DIMS(1, 2), 2), mlc_attr_ints("end", DIMS(-1, 0), 2),
                   mlc_attr_ints("step", DIMS(-1, -2), 2)};
  r = E(MLC_OP_SLICE, &x, 1, s2, 3);
  CU_ASSERT(T(r, MLC_DTYPE_F32, DIMS(2, 1), 2) && f32_eq(D(r), (float[]){6, 3}, 2, 0));

  int64_t idx[3] = {-1, 0, 1};
  mlc_value *g[2] = {x, C(MLC_DTYPE_I64, DIMS(3), 1, idx)};
  mlc_attr ax1[] = {mlc_attr_int("axis", 1)}, ax0[] = {mlc_attr_int("axis", 0)};
  r = E(MLC_OP_GATHER, g, 2, ax1, 1);
  CU_ASSERT(T(r, MLC_DTYPE_F32, DIMS(2, 3), 2) && f32_eq(D(r), (float[]){3, 1, 2, 6, 4, 5}, 6, 0));
  r = E(MLC_OP_GATHER, g, 2, ax0, 1);
  CU_ASSERT(T(r, MLC_DTYPE_F32, DIMS(3, 3), 2) &&
            f32_eq(D(r), (float[]){4, 5, 6, 1, 2, 3, 4, 5, 6}, 9, 0));
  int32_t bad[1] = {3};
  mlc_value *gb[2] = {x, C(MLC_DTYPE_I32, DIMS(1), 1, bad)};
  X(MLC_OP_GATHER, gb, 2, ax1, 1, MLC_OUT_OF_RANGE, "take");

  float yx[2] = {7, 8};
  mlc_value *c[2] = {x, C(MLC_DTYPE_F32, DIMS(2, 1), 2, yx)};
  r = E(MLC_OP_CONCAT, c, 2, ax1, 1);
  CU_ASSERT(T(r, MLC_DTYPE_F32, DIMS(2, 4), 2) &&
            f32_eq(D(r), (float[]){1, 2, 3, 7, 4, 5, 6, 8}, 8, 0));
  mlc_attr bt[] = {mlc_attr_ints("shape", DIMS(2, 2), 2)};
  mlc_value *col = C(MLC_DTYPE_F32, DIMS(2, 1), 2, yx);
  CU_ASSERT(f32_eq(D(E(MLC_OP_BROADCAST_TO, &col, 1, bt, 1)), (float[]){7, 7, 8, 8}, 4, 0));
  mlc_attr tl[] = {mlc_attr_ints("repeats", DIMS(1, 2), 2)};
  r = E(MLC_OP_TILE, &x, 1, tl, 1);
  CU_ASSERT(T(r, MLC_DTYPE_F32, DIMS(2, 6), 2) &&
            f32_eq(D(r), (float[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, 12, 0));

  int32_t p3[3] = {1, 2, 3};
  mlc_value *p = C(MLC_DTYPE_I32, DIMS(3), 1, p3);
  mlc_attr pc[] = {mlc_attr_ints("pads", DIMS(2, 1), 2), mlc_attr_float("value", -1)};
  CU_ASSERT(B(E(MLC_OP_PAD, &p, 1, pc, 2), (int32_t[]){-1, -1, 1, 2, 3, -1}, 24));
  mlc_attr pr[] = {mlc_attr_ints("pads", DIMS(2, 2), 2), mlc_attr_str("mode", "reflect")};
  CU_ASSERT(B(E(MLC_OP_PAD, &p, 1, pr, 2), (int32_t[]){3, 2, 1, 2, 3, 2, 1}, 28));
  mlc_attr pe[] = {mlc_attr_ints("pads", DIMS(-1, 2), 2), mlc_attr_str("mode", "edge")};
  CU_ASSERT(B(E(MLC_OP_PAD, &p, 1, pe, 2), (int32_t[]){2, 3, 3, 3}, 16));

  r = E(MLC_OP_SHAPE_OF, &x, 1, NULL, 0);
  CU_ASSERT(is_const(r) && B(r, (int64_t[]){2, 3}, 16));
  mlc_value *sym = P(MLC_DTYPE_F32, DIMS(SN, 3), 2);
  r = E(MLC_OP_SHAPE_OF, &sym, 1, NULL, 0);
  CU_ASSERT(r && r->kind == MLC_VALUE_VAR);
  teardown();
}

/* Infers and evaluates |op| on constants directly (matmul is never folded by
** the builder); the data is compared with |want| and freed. */
static int eval_eq(mlc_op op, mlc_value *const *args, int nargs, const mlc_type *want_t,
                   const void *want, size_t nbytes) {
  mlc_call_info ci = {M, op, nargs, args, 0, NULL, NULL};
  const void *in[3];
  void *out[1] = {NULL};
  mlc_type ot;
  int n = 0, ok = 0;
  for (int i = 0; i < nargs; i++) in[i] = D(args[i]);
  mlc_status s = mlc_graph_infer(&ci, &ot, &n);
  if (!s) s = mlc_graph_eval(&ci, &ot, 1, in, out);
  if (!s) ok = mlc_type_equal(&ot, want_t) && memcmp(out[0], want, nbytes) == 0;
  mlc_const_free(M, out[0], nbytes);
  mlc_status_free(s);
  return ok;
}

/* Folding never makes the weights much larger than the model's own data
** (graph_int.h, mlc_fold_size_ok): a broadcast of one number to 8 MiB stays
** a call computed at run time, to 1 MiB it folds; a transpose of an 8 MiB
** constant folds, its output being no larger than its input. */
static void test_fold_size(void) {
  setup();
  float one = 1.5f;
  mlc_value *x = C(MLC_DTYPE_F32, DIMS(1), 1, &one);
  mlc_attr big[] = {mlc_attr_ints("shape", DIMS(2048, 1024), 2)};
  mlc_value *r = E(MLC_OP_BROADCAST_TO, &x, 1, big, 1);
  CU_ASSERT(T(r, MLC_DTYPE_F32, DIMS(2048, 1024), 2) && r->kind == MLC_VALUE_VAR);
  mlc_attr small[] = {mlc_attr_ints("shape", DIMS(512, 512), 2)};
  r = E(MLC_OP_BROADCAST_TO, &x, 1, small, 1);
  CU_ASSERT(T(r, MLC_DTYPE_F32, DIMS(512, 512), 2) && is_const(r));
  CU_ASSERT(r && D(r) && ((const float *)D(r))[512 * 512 - 1] == 1.5f);
  float *w = calloc(2048 * 1024, sizeof *w);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  w[1] = 7;
  mlc_value *wc = C(MLC_DTYPE_F32, DIMS(2048, 1024), 2, w);
  free(w);
  r = E(MLC_OP_TRANSPOSE, &wc, 1, NULL, 0);
  CU_ASSERT(T(r, MLC_DTYPE_F32, DIMS(1024, 2048), 2) && is_const(r));
  CU_ASSERT(r && D(r) && ((const float *)D(r))[2048] == 7);
  teardown();
}

static void test_fold_matmul_and_keep(void) {
  setup();
  int32_t a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
  mlc_value *ab[2] = {C(MLC_DTYPE_I32, DIMS(2, 3), 2, a), C(MLC_DTYPE_I32, DIMS(3, 2), 2, b)};
  mlc_type t22 = {MLC_DTYPE_I32, 2, DIMS(2, 2)};
  CU_ASSERT(eval_eq(MLC_OP_MATMUL, ab, 2, &t22, (int32_t[]){4, 5, 10, 11}, 16));
  double va[3] = {1, 2, 3}, vw[6] = {1, 1, 1, 0, 1, 0};
  mlc_value *vb[2] = {C(MLC_DTYPE_F64, DIMS(3), 1, va), C(MLC_DTYPE_F64, DIMS(2, 3, 1), 3, vw)};
  mlc_type t21 = {MLC_DTYPE_F64, 2, DIMS(2, 1)};
  CU_ASSERT(eval_eq(MLC_OP_MATMUL, vb, 2, &t21, (double[]){6, 2}, 16));
  mlc_value *bb[2] = {C(MLC_DTYPE_F64, DIMS(2, 1, 3), 3, vw), vb[0]};
  CU_ASSERT(eval_eq(MLC_OP_MATMUL, bb, 2, &t21, (double[]){6, 2}, 16));
  /* The builder keeps matmul calls on constants (OUT_EWISE_FUSABLE). */
  mlc_value *r = E(MLC_OP_MATMUL, ab, 2, NULL, 0);
  CU_ASSERT(T(r, MLC_DTYPE_I32, DIMS(2, 2), 2) && r->kind == MLC_VALUE_VAR);

  /* No evaluator (layer_norm), or folding off: the call stays. */
  float one[2] = {1, 2};
  mlc_value *ln[3] = {C(MLC_DTYPE_F32, DIMS(2), 1, one), C(MLC_DTYPE_F32, DIMS(2), 1, one),
                      C(MLC_DTYPE_F32, DIMS(2), 1, one)};
  r = E(MLC_OP_LAYER_NORM, ln, 3, NULL, 0);
  CU_ASSERT(r && r->kind == MLC_VALUE_VAR);
  M->fold = 0;
  r = E(MLC_OP_ADD, ln, 2, NULL, 0);
  CU_ASSERT(T(r, MLC_DTYPE_F32, DIMS(2), 1) && r->kind == MLC_VALUE_VAR);
  CU_ASSERT_EQUAL_FATAL(F->nblocks, 1);
  CU_ASSERT_EQUAL(F->blocks[0].n, 3);
  teardown();
}

/* mlc_graph_eval directly: its own messages name the problem. */
static void test_eval_direct(void) {
  setup();
  float fx[3] = {1, 2, 3};
  int64_t ix[2] = {0, -4};
  mlc_value *args[2] = {C(MLC_DTYPE_F32, DIMS(3), 1, fx), C(MLC_DTYPE_I64, DIMS(2), 1, ix)};
  CU_ASSERT_FATAL(args[0] && args[1]);
  mlc_call_info ci = {M, MLC_OP_GATHER, 2, args, 0, NULL, NULL};
  mlc_type ot;
  int n = 0;
  MLC_TEST_OK(mlc_graph_infer(&ci, &ot, &n));
  const void *in[2] = {fx, ix};
  void *out[1] = {NULL};
  mlc_status s = mlc_graph_eval(&ci, &ot, 1, in, out);
  CU_ASSERT_EQUAL(mlc_status_code(s), MLC_OUT_OF_RANGE);
  CU_ASSERT_PTR_NOT_NULL(
      strstr(mlc_status_message(s), "index -4 out of range [-3, 3) on axis 0"));
  CU_ASSERT_PTR_NULL(out[0]);
  mlc_status_free(s);

  int64_t d0[2] = {1, 0};
  mlc_value *dv[2] = {args[1], C(MLC_DTYPE_I64, DIMS(2), 1, d0)};
  CU_ASSERT_FATAL(dv[1] != NULL);
  mlc_call_info cd = {M, MLC_OP_MOD, 2, dv, 0, NULL, NULL};
  MLC_TEST_OK(mlc_graph_infer(&cd, &ot, &n));
  const void *ind[2] = {ix, d0};
  s = mlc_graph_eval(&cd, &ot, 1, ind, out);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), "integer division by zero"));
  CU_ASSERT_PTR_NULL(out[0]);
  mlc_status_free(s);

  mlc_call_info cc = {M, MLC_OP_CONV, 2, args, 0, NULL, NULL};
  s = mlc_graph_eval(&cc, &ot, 1, in, out);
  CU_ASSERT_EQUAL(mlc_status_code(s), MLC_UNIMPLEMENTED);
  mlc_status_free(s);
  teardown();
}

static void register_suites(void) {
  static const CU_TestInfo infer[] = {
      {"unary_cast", test_unary_cast},
      {"broadcast", test_broadcast},
      {"broadcast_symbolic", test_broadcast_symbolic},
      {"reduce", test_reduce},
      {"matmul", test_matmul},
      {"conv", test_conv},
      {"pool", test_pool},
      {"dim_arith", test_dim_arith},
      {"sym_values", test_sym_values},
      {"symbolic_windows", test_symbolic_windows},
      {"symbolic_slice_resize", test_symbolic_slice_resize},
      {"reshape_transpose", test_reshape_transpose},
      {"concat_slice_gather", test_concat_slice_gather},
      {"pad_tile_misc", test_pad_tile_misc},
      {"error_origin", test_error_origin},
      {NULL, NULL}};
  static const CU_TestInfo eval[] = {
      {"fold_binary", test_fold_binary},
      {"fold_unary_cast", test_fold_unary_cast},
      {"fold_reduce", test_fold_reduce},
      {"fold_movement", test_fold_movement},
      {"fold_matmul_and_keep", test_fold_matmul_and_keep},
      {"fold_size", test_fold_size},
      {"eval_direct", test_eval_direct},
      {NULL, NULL}};
  mlc_test_add_suite("infer", infer);
  mlc_test_add_suite("eval", eval);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_infer", fns);
}
