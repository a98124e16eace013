/*
** test_vectorize.c: vector expressions in the TIR (builders, printer,
** verifier, copy) and the vectorize pass.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/tir.h"
#include "tests/testutil.h"

/* ---- helpers ---------------------------------------------------------------- */

#define OK(expr) MLC_TEST_OK(expr)
#define EXPECT_ERR(expr, ...) MLC_TEST_ERR((expr), MLC_OK, __VA_ARGS__)

static mlc_tir_module *new_module(void) {
  mlc_tir_module *m = NULL;
  if (!OK(mlc_tir_module_create(mlc_allocator_default(), &m))) return NULL;
  return mlc_test_hold(m);
}

static char *print_func(const mlc_tir_func *f) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_func(f, &b);
  CU_ASSERT(!b.oom);
  char *s = strdup(mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return mlc_test_hold(s);
}

static char *print_expr(const mlc_tir_expr *e) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_expr(e, &b);
  char *s = strdup(mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return s;
}

#define EXPECT_EXPR(e, text)                                        \
  do {                                                              \
    char *s_ = print_expr(e);                                       \
    if (strcmp(s_, (text)) != 0) printf("\n  got: %s\n", s_);       \
    CU_ASSERT_STRING_EQUAL(s_, (text));                             \
    free(s_);                                                       \
  } while (0)

#define EXPECT_TEXT(got, want)                                                   \
  do {                                                                           \
    const char *g_ = (got), *w_ = (want);                                        \
    if (strcmp(g_, w_) != 0) printf("\n--- expected\n%s--- actual\n%s", w_, g_); \
    CU_ASSERT_STRING_EQUAL(g_, w_);                                              \
  } while (0)

#define I64(v) mlc_tir_i64(m, (v))
#define F32(v) mlc_tir_float(m, MLC_DTYPE_F32, (v))
#define REF(v) mlc_tir_ref(m, (v))
#define IDX(...) (int)(sizeof((mlc_tir_expr *[]){__VA_ARGS__}) / sizeof(mlc_tir_expr *)), (mlc_tir_expr *[]){__VA_ARGS__}

/* ---- vector expressions ------------------------------------------------------- */

/* builders set lanes; printed forms; copies keep lanes */
static void test_vector_exprs(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, (int64_t[]){4, 16}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64);
  mlc_tir_expr *r = mlc_tir_ramp(m, mlc_tir_mul(m, REF(i), I64(16)), I64(1), 16);
  CU_ASSERT_FATAL(r && r->kind == MLC_TIR_RAMP && r->lanes == 16 && r->dtype == MLC_DTYPE_I64);
  EXPECT_EXPR(r, "T.Ramp(i * 16, 1, 16)");
  /* one lane is the scalar itself */
  CU_ASSERT_PTR_EQUAL(mlc_tir_ramp(m, r->ramp.base, I64(1), 1), r->ramp.base);
  mlc_tir_expr *zero = F32(0);
  CU_ASSERT_PTR_EQUAL(mlc_tir_broadcast(m, zero, 1), zero);
  mlc_tir_expr *bz = mlc_tir_broadcast(m, zero, 16);
  CU_ASSERT(bz && bz->lanes == 16 && bz->dtype == MLC_DTYPE_F32);
  EXPECT_EXPR(bz, "T.Broadcast(T.float32(0), 16)");
  mlc_tir_expr *ld = mlc_tir_load(m, A, IDX(REF(i), mlc_tir_ramp(m, I64(0), I64(1), 16)));
  CU_ASSERT(ld && ld->lanes == 16);
  EXPECT_EXPR(ld, "A[i, T.Ramp(0, 1, 16)]");
  mlc_tir_expr *mx = mlc_tir_max(m, ld, bz);
  CU_ASSERT(mx && mx->lanes == 16);
  mlc_tir_expr *cmp = mlc_tir_binary(m, MLC_TIR_LT, r, mlc_tir_broadcast(m, I64(40), 16));
  CU_ASSERT(cmp && cmp->lanes == 16 && cmp->dtype == MLC_DTYPE_BOOL);
  mlc_tir_expr *sel = mlc_tir_select(m, cmp, mx, bz);
  CU_ASSERT(sel && sel->lanes == 16);
  mlc_tir_expr *ex = mlc_tir_call1(m, MLC_TIR_INTRIN_EXP, sel);
  CU_ASSERT(ex && ex->lanes == 16);
  mlc_tir_expr *c = mlc_tir_cast(m, MLC_DTYPE_F64, ex);
  CU_ASSERT(c && c->lanes == 16);
  EXPECT_EXPR(c, "T.Cast(\"float64x16\", T.exp(T.if_then_else(T.Ramp(i * 16, 1, 16) < T.Broadcast(40, 16), "
                 "T.max(A[i, T.Ramp(0, 1, 16)], T.Broadcast(T.float32(0), 16)), T.Broadcast(T.float32(0), 16))))");
  EXPECT_EXPR(mlc_tir_not(m, cmp), "not T.Ramp(i * 16, 1, 16) < T.Broadcast(40, 16)");
  /* constant folding leaves vectors alone */
  mlc_tir_expr *vz = mlc_tir_broadcast(m, I64(0), 16);
  mlc_tir_expr *sum = mlc_tir_add(m, r, vz);
  CU_ASSERT(sum && sum->kind == MLC_TIR_BINARY && sum->lanes == 16);
  char buf[32];
  CU_ASSERT_STRING_EQUAL(mlc_tir_dtype_str(MLC_DTYPE_BOOL, 8, buf, sizeof buf), "boolx8");
  CU_ASSERT_STRING_EQUAL(mlc_tir_dtype_str(MLC_DTYPE_F32, 1, buf, sizeof buf), "float32");
  /* a copy rebuilds the same lanes, substituting inside ramps */
  mlc_tir_expr *cp = mlc_tir_expr_copy(m, c, &(mlc_tir_subst){1, &i, (mlc_tir_expr *[]){I64(2)}, 0, NULL, NULL, 0});
  CU_ASSERT(cp && cp->lanes == 16 && cp->dtype == MLC_DTYPE_F64);
  EXPECT_EXPR(cp, "T.Cast(\"float64x16\", T.exp(T.if_then_else(T.Ramp(32, 1, 16) < T.Broadcast(40, 16), "
                  "T.max(A[2, T.Ramp(0, 1, 16)], T.Broadcast(T.float32(0), 16)), T.Broadcast(T.float32(0), 16))))");
  CU_ASSERT(mlc_tir_expr_uses_var(r, i));
  CU_ASSERT(!mlc_tir_expr_uses_var(bz, i));
  CU_ASSERT(mlc_tir_expr_has_load(mlc_tir_broadcast(m, mlc_tir_load(m, A, IDX(I64(0), I64(0))), 4)));
  CU_ASSERT_PTR_NULL(mlc_tir_ramp(m, NULL, I64(1), 4));
  CU_ASSERT_PTR_NULL(mlc_tir_broadcast(m, NULL, 4));
}

/* a vector function verifies and prints; a masked store under a vector if */
static void test_vector_func(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 1, (int64_t[]){20}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *Y = mlc_tir_buffer_new_c(m, "Y", MLC_DTYPE_F32, 1, (int64_t[]){20}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *io = mlc_tir_var_new(m, "io", MLC_DTYPE_I64);
  mlc_tir_expr *idx = mlc_tir_ramp(m, mlc_tir_mul(m, REF(io), I64(8)), I64(1), 8);
  mlc_tir_expr *in = mlc_tir_binary(m, MLC_TIR_LT, idx, mlc_tir_broadcast(m, I64(20), 8));
  mlc_tir_stmt *st = mlc_tir_store(m, Y, IDX(idx), mlc_tir_add(m, mlc_tir_load(m, A, IDX(idx)),
                                                             mlc_tir_broadcast(m, F32(1), 8)));
  mlc_tir_stmt *body = mlc_tir_for(m, io, I64(0), I64(3), MLC_TIR_FOR_SERIAL, NULL, mlc_tir_if(m, in, st, NULL));
  mlc_tir_func *f = mlc_tir_func_new(m, "vadd", 2, (mlc_tir_buffer *[]){A, Y}, body);
  MLC_TEST_OK_FATAL(mlc_tir_verify_func(f));
  EXPECT_TEXT(print_func(f),
              "@T.prim_func\n"
              "def vadd(A: T.Buffer((20,), \"float32\"), Y: T.Buffer((20,), \"float32\")):\n"
              "    for io in range(3):\n"
              "        if T.Ramp(io * 8, 1, 8) < T.Broadcast(20, 8):\n"
              "            Y[T.Ramp(io * 8, 1, 8)] = A[T.Ramp(io * 8, 1, 8)] + T.Broadcast(T.float32(1), 8)\n");
}

/* every lanes rule of the verifier, each with its message */
static void test_vector_verify(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, (int64_t[]){4, 16}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *Y = mlc_tir_buffer_new_c(m, "Y", MLC_DTYPE_F32, 1, (int64_t[]){16}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64);
  mlc_tir_buffer *params[2] = {A, Y};
  mlc_tir_expr *r16 = mlc_tir_ramp(m, I64(0), I64(1), 16), *r8 = mlc_tir_ramp(m, I64(0), I64(1), 8);
  mlc_tir_expr *b8 = mlc_tir_broadcast(m, F32(1), 8);
  mlc_tir_func *f;

  /* operands of different lanes: binary, select, call, load indices */
  mlc_tir_expr *l16 = mlc_tir_load(m, Y, IDX(r16));
  mlc_tir_stmt *s1 = mlc_tir_store(m, Y, IDX(r16), mlc_tir_add(m, l16, mlc_tir_broadcast(m, F32(1), 8)));
  mlc_tir_stmt *s2 = mlc_tir_store(m, Y, IDX(r8), mlc_tir_select(m, mlc_tir_binary(m, MLC_TIR_LT, r16, r16), b8, b8));
  mlc_tir_stmt *s3 = mlc_tir_store(m, Y, IDX(r8), mlc_tir_call(m, MLC_TIR_INTRIN_POW, 2, (mlc_tir_expr *[]){b8, l16}));
  mlc_tir_stmt *s4 = mlc_tir_evaluate(m, mlc_tir_load(m, A, IDX(r8, r16)));
  f = mlc_tir_func_new(m, "lanes", 2, params, mlc_tir_seq(m, 4, (mlc_tir_stmt *[]){s1, s2, s3, s4}));
  EXPECT_ERR(mlc_tir_verify_func(f), "prim func \"lanes\"", "operands of + have 16 and 8 lanes",
             "condition and arms have 16, 8 and 8 lanes", "an argument of 8 lanes in a call of 16",
             "vector indices of 8 and 16 lanes");

  /* stores: a vector value at scalar indices, a scalar at vector indices */
  s1 = mlc_tir_store(m, Y, IDX(I64(0)), b8);
  s2 = mlc_tir_store(m, Y, IDX(r8), F32(0));
  f = mlc_tir_func_new(m, "stores", 2, params, mlc_tir_seq2(m, s1, s2));
  EXPECT_ERR(mlc_tir_verify_func(f), "stores a value of 8 lanes at indices of 1",
             "stores a value of 1 lanes at indices of 8");

  /* ramps and broadcasts: float ramp, vector base, broadcast of a vector,
  ** too many lanes, dtype mismatch */
  mlc_tir_expr *fr = mlc_tir_ramp(m, F32(0), F32(1), 4);
  mlc_tir_expr *vr = mlc_tir_ramp(m, r8, I64(1), 8);
  mlc_tir_expr *bb = mlc_tir_broadcast(m, b8, 8);
  mlc_tir_expr *big = mlc_tir_broadcast(m, F32(0), 128);
  mlc_tir_expr *mixed = mlc_tir_ramp(m, I64(0), mlc_tir_int(m, MLC_DTYPE_I32, 1), 4);
  f = mlc_tir_func_new(m, "ramps", 2, params,
                       mlc_tir_seq(m, 5, (mlc_tir_stmt *[]){mlc_tir_evaluate(m, fr), mlc_tir_evaluate(m, vr),
                                                            mlc_tir_evaluate(m, bb), mlc_tir_evaluate(m, big),
                                                            mlc_tir_evaluate(m, mixed)}));
  EXPECT_ERR(mlc_tir_verify_func(f), "ramp of float32 by float32 (one integer dtype)",
             "ramp base and stride must be scalars", "broadcast of a vector", "128 lanes (1 to 64)",
             "ramp of int64 by int32");

  /* vectors where scalars belong: loop bounds, an assert, allocation
  ** shapes; a loop under a vector condition; a store of other lanes there */
  mlc_tir_expr *vcond = mlc_tir_binary(m, MLC_TIR_LT, r8, mlc_tir_broadcast(m, I64(5), 8));
  mlc_tir_stmt *loop = mlc_tir_for(m, i, I64(0), mlc_tir_broadcast(m, I64(4), 4), MLC_TIR_FOR_SERIAL, NULL,
                                   mlc_tir_evaluate(m, I64(0)));
  mlc_tir_stmt *as = mlc_tir_assert(m, vcond, "Op", "bad", 0, NULL);
  mlc_tir_stmt *masked = mlc_tir_if(m, vcond,
                                    mlc_tir_seq2(m, mlc_tir_store(m, Y, IDX(r16), mlc_tir_load(m, Y, IDX(r16))),
                                                 mlc_tir_for(m, i, I64(0), I64(2), MLC_TIR_FOR_SERIAL, NULL,
                                                             mlc_tir_evaluate(m, I64(0)))),
                                    NULL);
  f = mlc_tir_func_new(m, "scalars", 2, params, mlc_tir_seq(m, 3, (mlc_tir_stmt *[]){loop, as, masked}));
  EXPECT_ERR(mlc_tir_verify_func(f), "loop extent is a vector of 4 lanes, not a scalar",
             "assert condition is a vector of 8 lanes, not a scalar", "a store of 16 lanes under a condition of 8",
             "not a store, evaluate or if under a vector condition");

  /* the same tree with matching lanes is fine */
  mlc_tir_stmt *good = mlc_tir_if(m, vcond, mlc_tir_store(m, Y, IDX(r8), mlc_tir_load(m, A, IDX(I64(1), r8))),
                                  mlc_tir_store(m, Y, IDX(r8), b8));
  f = mlc_tir_func_new(m, "good", 2, params, good);
  CU_ASSERT(OK(mlc_tir_verify_func(f)));
}

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"vector_exprs", test_vector_exprs},
                                      {"vector_func", test_vector_func},
                                      {"vector_verify", test_vector_verify},
                                      {NULL, NULL}};
  mlc_test_add_suite("vectorize", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_vectorize", fns);
}
