/*
** test_vectorize.c: vector expressions in the TIR (builders, printer,
** verifier, copy), the vectorize pass (golden text before / after, and the
** reason for each loop it keeps), and, with LLVM, vectorized kernels
** compiled, linked, loaded and run against the same kernels compiled
** without the pass, on seeded random data.  Inputs that a masked lane must
** not touch sit next to an inaccessible page, so a read or write past the
** mask crashes the test.  The LLVM IR of a vectorized kernel holds vector
** operations and no loop over the vectorized variable.
*/
#include "config.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "codegen/target.h"
#include "lower/tir.h"
#include "lower/tir_lower.h"
#include "runtime/rt_abi.h"
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

#define EXPECT_TEXT(got, want)                                                        \
  do {                                                                                \
    const char *g_ = (got), *w_ = (want);                                             \
    if (!g_) {                                                                        \
      CU_FAIL("no text");                                                             \
    } else {                                                                          \
      if (strcmp(g_, w_) != 0) printf("\n--- expected\n%s--- actual\n%s", w_, g_); \
      CU_ASSERT_STRING_EQUAL(g_, w_);                                                 \
    }                                                                                 \
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

/* ---- the pass: golden before / after ------------------------------------------- */

typedef struct kern {
  mlc_tir_module *m;
  mlc_tir_buffer *X, *Y, *I;      /* X, I inputs (float32 [64], int64 [64]), Y output [64] */
  mlc_tir_buffer *A, *B, *C;      /* matmul: C[8, 16] += A[8, 8] * B[8, 16] */
  mlc_tir_buffer *Xt, *Yt;        /* float32 [50] (a tail of 14 lanes off) */
  mlc_tir_buffer *Hin, *H, *Bf, *Bo, *Q; /* float16, float16, bfloat16, bool, int32 [64] */
  mlc_tir_var *i, *j, *k;
} kern;

static int kern_init(kern *K) {
  memset(K, 0, sizeof *K);
  mlc_tir_module *m = K->m = new_module();
  if (!m) return 0;
  K->X = mlc_tir_buffer_new_c(m, "X", MLC_DTYPE_F32, 1, (int64_t[]){64}, MLC_TIR_SCOPE_GLOBAL);
  K->Y = mlc_tir_buffer_new_c(m, "Y", MLC_DTYPE_F32, 1, (int64_t[]){64}, MLC_TIR_SCOPE_GLOBAL);
  K->I = mlc_tir_buffer_new_c(m, "I", MLC_DTYPE_I64, 1, (int64_t[]){64}, MLC_TIR_SCOPE_GLOBAL);
  K->A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, (int64_t[]){8, 8}, MLC_TIR_SCOPE_GLOBAL);
  K->B = mlc_tir_buffer_new_c(m, "B", MLC_DTYPE_F32, 2, (int64_t[]){8, 16}, MLC_TIR_SCOPE_GLOBAL);
  K->C = mlc_tir_buffer_new_c(m, "C", MLC_DTYPE_F32, 2, (int64_t[]){8, 16}, MLC_TIR_SCOPE_GLOBAL);
  K->Xt = mlc_tir_buffer_new_c(m, "X", MLC_DTYPE_F32, 1, (int64_t[]){50}, MLC_TIR_SCOPE_GLOBAL);
  K->Yt = mlc_tir_buffer_new_c(m, "Y", MLC_DTYPE_F32, 1, (int64_t[]){50}, MLC_TIR_SCOPE_GLOBAL);
  K->Hin = mlc_tir_buffer_new_c(m, "Hin", MLC_DTYPE_F16, 1, (int64_t[]){64}, MLC_TIR_SCOPE_GLOBAL);
  K->H = mlc_tir_buffer_new_c(m, "H", MLC_DTYPE_F16, 1, (int64_t[]){64}, MLC_TIR_SCOPE_GLOBAL);
  K->Bf = mlc_tir_buffer_new_c(m, "Bf", MLC_DTYPE_BF16, 1, (int64_t[]){64}, MLC_TIR_SCOPE_GLOBAL);
  K->Bo = mlc_tir_buffer_new_c(m, "Bo", MLC_DTYPE_BOOL, 1, (int64_t[]){64}, MLC_TIR_SCOPE_GLOBAL);
  K->Q = mlc_tir_buffer_new_c(m, "Q", MLC_DTYPE_I32, 1, (int64_t[]){64}, MLC_TIR_SCOPE_GLOBAL);
  K->i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64);
  K->j = mlc_tir_var_new(m, "j", MLC_DTYPE_I64);
  K->k = mlc_tir_var_new(m, "k", MLC_DTYPE_I64);
  return K->X && K->Y && K->I && K->A && K->B && K->C && K->Xt && K->Yt && K->Hin && K->H && K->Bf && K->Bo &&
         K->Q && K->i && K->j && K->k;
}

/* for i in range(n_outer): for j in T.vectorized(16): body(i * 16 + j) */
static mlc_tir_stmt *split16(kern *K, int64_t outer, mlc_tir_stmt *body) {
  mlc_tir_module *m = K->m;
  return mlc_tir_for(m, K->i, I64(0), I64(outer), MLC_TIR_FOR_SERIAL, NULL,
                     mlc_tir_for(m, K->j, I64(0), I64(16), MLC_TIR_FOR_VECTORIZED, NULL, body));
}

/* i * 16 + j */
static mlc_tir_expr *flat(kern *K) {
  mlc_tir_module *m = K->m;
  return mlc_tir_add(m, mlc_tir_mul(m, REF(K->i), I64(16)), REF(K->j));
}

/* The kernels of the pass tests (also compiled and run below). */
enum { K_ADD, K_RELU, K_EXP, K_GATHER, K_TAIL, K_PAD, K_MATMUL_J, K_MATMUL_K, K_TYPES, K_PAR, K_NKERNELS };

static mlc_tir_func *kernel(kern *K, int which) {
  mlc_tir_module *m = K->m;
  mlc_tir_buffer *X = K->X, *Y = K->Y;
  mlc_tir_stmt *body = NULL;
  const char *name = "?";
  mlc_tir_buffer *params[8] = {X, K->I, Y, NULL};
  int nparams = 3;
  switch (which) {
    case K_ADD: /* Y = X + I (cast) */
      name = "vadd";
      body = split16(K, 4, mlc_tir_store(m, Y, IDX(flat(K)),
                                         mlc_tir_add(m, mlc_tir_load(m, X, IDX(flat(K))),
                                                     mlc_tir_cast(m, MLC_DTYPE_F32, mlc_tir_load(m, K->I, IDX(flat(K)))))));
      break;
    case K_RELU:
      name = "relu";
      body = split16(K, 4, mlc_tir_store(m, Y, IDX(flat(K)), mlc_tir_max(m, mlc_tir_load(m, X, IDX(flat(K))), F32(0))));
      break;
    case K_EXP: /* Y = exp(X) * 0.5 + sigmoid(X) */
      name = "vexp";
      body = split16(K, 4, mlc_tir_store(m, Y, IDX(flat(K)),
                                         mlc_tir_add(m, mlc_tir_mul(m, mlc_tir_call1(m, MLC_TIR_INTRIN_EXP, mlc_tir_load(m, X, IDX(flat(K)))), F32(0.5)),
                                                     mlc_tir_call1(m, MLC_TIR_INTRIN_SIGMOID, mlc_tir_load(m, X, IDX(flat(K)))))));
      break;
    case K_GATHER: /* Y[j] = X[I[j] % 64] + X[(j * 3) % 64] */
      name = "gather";
      body = split16(K, 4, mlc_tir_store(m, Y, IDX(flat(K)),
                                         mlc_tir_add(m, mlc_tir_load(m, X, IDX(mlc_tir_binary(m, MLC_TIR_FLOORMOD, mlc_tir_load(m, K->I, IDX(flat(K))), I64(64)))),
                                                     mlc_tir_load(m, X, IDX(mlc_tir_binary(m, MLC_TIR_FLOORMOD, mlc_tir_mul(m, flat(K), I64(3)), I64(64)))))));
      break;
    case K_TAIL: /* X, Y of 50: if i * 16 + j < 50: Y = tanh(X) else: Y = -1 (not reached) */
      name = "tail";
      body = split16(K, 4, mlc_tir_if(m, mlc_tir_binary(m, MLC_TIR_LT, flat(K), I64(50)),
                                      mlc_tir_store(m, K->Yt, IDX(flat(K)), mlc_tir_call1(m, MLC_TIR_INTRIN_TANH, mlc_tir_load(m, K->Xt, IDX(flat(K))))),
                                      NULL));
      params[0] = K->Xt;
      params[2] = K->Yt;
      break;
    case K_PAR: { /* a parallel loop over two vectorized loops through a local buffer */
      name = "par";
      mlc_tir_buffer *tmp = mlc_tir_buffer_new_c(m, "tmp", MLC_DTYPE_F32, 1, (int64_t[]){16}, MLC_TIR_SCOPE_LOCAL);
      mlc_tir_stmt *fill = mlc_tir_for(m, K->j, I64(0), I64(16), MLC_TIR_FOR_VECTORIZED, NULL,
                                       mlc_tir_store(m, tmp, IDX(REF(K->j)), mlc_tir_mul(m, mlc_tir_load(m, X, IDX(flat(K))), F32(2))));
      mlc_tir_stmt *use = mlc_tir_for(m, K->j, I64(0), I64(16), MLC_TIR_FOR_VECTORIZED, NULL,
                                      mlc_tir_store(m, Y, IDX(flat(K)), mlc_tir_add(m, mlc_tir_load(m, tmp, IDX(REF(K->j))),
                                                                                    mlc_tir_cast(m, MLC_DTYPE_F32, mlc_tir_load(m, K->I, IDX(flat(K)))))));
      body = mlc_tir_for(m, K->i, I64(0), I64(4), MLC_TIR_FOR_PARALLEL, NULL, mlc_tir_allocate(m, tmp, mlc_tir_seq2(m, fill, use)));
      break;
    }
    case K_TYPES: { /* float16, bfloat16, bool and int32 vectors; floordiv / floormod */
      name = "types";
      mlc_tir_expr *x = mlc_tir_load(m, X, IDX(flat(K))), *iv = mlc_tir_load(m, K->I, IDX(flat(K)));
      mlc_tir_expr *pos = mlc_tir_binary(m, MLC_TIR_GT, x, F32(0));
      mlc_tir_expr *q = mlc_tir_add(m, mlc_tir_binary(m, MLC_TIR_FLOORDIV, iv, I64(7)), mlc_tir_binary(m, MLC_TIR_FLOORMOD, iv, I64(-5)));
      q = mlc_tir_add(m, mlc_tir_cast(m, MLC_DTYPE_I32, q),
                      mlc_tir_select(m, mlc_tir_load(m, K->Bo, IDX(flat(K))), mlc_tir_int(m, MLC_DTYPE_I32, 100), mlc_tir_int(m, MLC_DTYPE_I32, 0)));
      mlc_tir_stmt *st[4] = {
          mlc_tir_store(m, K->H, IDX(flat(K)), mlc_tir_add(m, mlc_tir_load(m, K->Hin, IDX(flat(K))), mlc_tir_cast(m, MLC_DTYPE_F16, x))),
          mlc_tir_store(m, K->Bf, IDX(flat(K)), mlc_tir_cast(m, MLC_DTYPE_BF16, mlc_tir_mul(m, x, F32(3)))),
          mlc_tir_store(m, K->Bo, IDX(flat(K)), pos),
          mlc_tir_store(m, K->Q, IDX(flat(K)), q)};
      body = split16(K, 4, mlc_tir_seq(m, 4, st));
      mlc_tir_buffer *p7[7] = {X, K->I, K->Hin, K->H, K->Bf, K->Bo, K->Q};
      memcpy(params, p7, sizeof p7);
      nparams = 7;
      break;
    }
    case K_PAD: /* Y[p] = p >= 1 ? X[p - 1] : X[0] * 2 (reads guarded per lane) */
      name = "pad";
      body = split16(K, 4, mlc_tir_store(m, Y, IDX(flat(K)),
                                         mlc_tir_select(m, mlc_tir_binary(m, MLC_TIR_GE, flat(K), I64(1)),
                                                        mlc_tir_load(m, X, IDX(mlc_tir_sub(m, flat(K), I64(1)))),
                                                        mlc_tir_mul(m, mlc_tir_load(m, X, IDX(I64(0))), F32(2)))));
      break;
    case K_MATMUL_J:
    case K_MATMUL_K: { /* C[i, j] = C[i, j] + A[i, k] * B[k, j], j or k vectorized */
      int vj = which == K_MATMUL_J;
      name = vj ? "matmul_j" : "matmul_k";
      mlc_tir_expr *cij = mlc_tir_load(m, K->C, IDX(REF(K->i), REF(K->j)));
      mlc_tir_expr *prod = mlc_tir_mul(m, mlc_tir_load(m, K->A, IDX(REF(K->i), REF(K->k))),
                                       mlc_tir_load(m, K->B, IDX(REF(K->k), REF(K->j))));
      body = mlc_tir_store(m, K->C, IDX(REF(K->i), REF(K->j)), mlc_tir_add(m, cij, prod));
      mlc_tir_var *inner = vj ? K->j : K->k, *outer = vj ? K->k : K->j;
      body = mlc_tir_for(m, inner, I64(0), I64(vj ? 16 : 8), MLC_TIR_FOR_VECTORIZED, NULL, body);
      body = mlc_tir_for(m, outer, I64(0), I64(vj ? 8 : 16), MLC_TIR_FOR_SERIAL, NULL, body);
      body = mlc_tir_for(m, K->i, I64(0), I64(8), MLC_TIR_FOR_SERIAL, NULL, body);
      params[0] = K->A;
      params[1] = K->B;
      params[2] = K->C;
      break;
    }
    default: return NULL;
  }
  mlc_tir_func *f = mlc_tir_func_new(m, name, nparams, params, body);
  if (f && !OK(mlc_tir_func_set_attr_bool(m, f, "tir.noalias", 1))) return NULL;
  return f;
}

/* The text of |which| after the pass (and checks that it verifies). */
static char *vectorized_text(int which) {
  kern K;
  if (!kern_init(&K)) return NULL;
  mlc_tir_func *f = kernel(&K, which);
  if (!f) return NULL;
  MLC_TEST_OK(mlc_tir_verify_func(f));
  if (!OK(mlc_tir_vectorize_func(K.m, f))) return NULL;
  MLC_TEST_OK(mlc_tir_verify_func(f));
  return print_func(f);
}

#define HEAD3 "(X: T.Buffer((64,), \"float32\"), I: T.Buffer((64,), \"int64\"), Y: T.Buffer((64,), \"float32\")):\n" \
              "    T.func_attr({\"tir.noalias\": True})\n"

static void test_pass_golden(void) {
  EXPECT_TEXT(vectorized_text(K_ADD),
              "@T.prim_func\ndef vadd" HEAD3
              "    for i in range(4):\n"
              "        Y[T.Ramp(i * 16, 1, 16)] = X[T.Ramp(i * 16, 1, 16)] + T.Cast(\"float32x16\", I[T.Ramp(i * 16, 1, 16)])\n");
  EXPECT_TEXT(vectorized_text(K_RELU),
              "@T.prim_func\ndef relu" HEAD3
              "    for i in range(4):\n"
              "        Y[T.Ramp(i * 16, 1, 16)] = T.max(X[T.Ramp(i * 16, 1, 16)], T.Broadcast(T.float32(0), 16))\n");
  EXPECT_TEXT(vectorized_text(K_GATHER),
              "@T.prim_func\ndef gather" HEAD3
              "    for i in range(4):\n"
              "        Y[T.Ramp(i * 16, 1, 16)] = X[I[T.Ramp(i * 16, 1, 16)] % T.Broadcast(64, 16)] + "
              "X[T.Ramp(i * 16 * 3, 3, 16) % T.Broadcast(64, 16)]\n");
  EXPECT_TEXT(vectorized_text(K_TAIL),
              "@T.prim_func\ndef tail(X: T.Buffer((50,), \"float32\"), I: T.Buffer((64,), \"int64\"), Y: T.Buffer((50,), \"float32\")):\n"
              "    T.func_attr({\"tir.noalias\": True})\n"
              "    for i in range(4):\n"
              "        if T.Ramp(i * 16, 1, 16) < T.Broadcast(50, 16):\n"
              "            Y[T.Ramp(i * 16, 1, 16)] = T.tanh(X[T.Ramp(i * 16, 1, 16)])\n");
  /* the invariant X[0] in a select arm becomes a per-lane load */
  EXPECT_TEXT(vectorized_text(K_PAD),
              "@T.prim_func\ndef pad" HEAD3
              "    for i in range(4):\n"
              "        Y[T.Ramp(i * 16, 1, 16)] = T.if_then_else(T.Ramp(i * 16, 1, 16) >= T.Broadcast(1, 16), "
              "X[T.Ramp(i * 16 - 1, 1, 16)], X[T.Broadcast(0, 16)] * T.Broadcast(T.float32(2), 16))\n");
  EXPECT_TEXT(vectorized_text(K_MATMUL_J),
              "@T.prim_func\n"
              "def matmul_j(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 16), \"float32\"), C: T.Buffer((8, 16), \"float32\")):\n"
              "    T.func_attr({\"tir.noalias\": True})\n"
              "    for i, k in T.grid(8, 8):\n"
              "        C[i, T.Ramp(0, 1, 16)] = C[i, T.Ramp(0, 1, 16)] + T.Broadcast(A[i, k], 16) * B[k, T.Ramp(0, 1, 16)]\n");
  /* the reduction axis stays a (hinted) loop */
  EXPECT_TEXT(vectorized_text(K_MATMUL_K),
              "@T.prim_func\n"
              "def matmul_k(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 16), \"float32\"), C: T.Buffer((8, 16), \"float32\")):\n"
              "    T.func_attr({\"tir.noalias\": True})\n"
              "    for i, j in T.grid(8, 16):\n"
              "        for k in T.vectorized(8):\n"
              "            C[i, j] = C[i, j] + A[i, k] * B[k, j]\n");
}

/* Each refused loop: the reason, and the pass keeps the loop as it was. */
static void expect_kept(mlc_tir_module *m, mlc_tir_stmt *loop, const char *reason) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(loop);
  mlc_tir_func *f = mlc_tir_func_new(m, "kept", 0, NULL, loop);
  CU_ASSERT_FATAL(f != NULL);
  mlc_strbuf why = MLC_STRBUF_INIT;
  CU_ASSERT_FALSE(mlc_tir_vectorize_check(f, loop, &why));
  if (!strstr(mlc_sb_str(&why), reason)) printf("\n  reason: %s\n", mlc_sb_str(&why));
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_sb_str(&why), reason));
  mlc_sb_fini(&why);
  CU_ASSERT(OK(mlc_tir_vectorize_func(m, f)));
  CU_ASSERT_PTR_EQUAL(f->body, loop);
}

static void test_pass_refused(void) {
  kern K;
  if (!kern_init(&K)) return;
  mlc_tir_module *m = K.m;
  mlc_tir_buffer *X = K.X, *Y = K.Y;
  mlc_tir_var *j = K.j, *n = mlc_tir_var_new(m, "n", MLC_DTYPE_I64);
  mlc_tir_stmt *copy = mlc_tir_store(m, Y, IDX(REF(j)), mlc_tir_load(m, X, IDX(REF(j))));
#define VLOOP(ext, body) mlc_tir_for(m, j, I64(0), (ext), MLC_TIR_FOR_VECTORIZED, NULL, (body))

  expect_kept(m, VLOOP(REF(n), copy), "the extent is not a constant from 1 to 64");
  expect_kept(m, VLOOP(I64(65), copy), "the extent is not a constant from 1 to 64");
  expect_kept(m, mlc_tir_for(m, j, I64(0), I64(4), MLC_TIR_FOR_UNROLLED, NULL, copy), "not a vectorized loop");
  expect_kept(m, VLOOP(I64(8), mlc_tir_for(m, K.k, I64(0), I64(2), MLC_TIR_FOR_SERIAL, NULL, copy)),
              "the body holds a loop over k");
  expect_kept(m, VLOOP(I64(8), mlc_tir_seq2(m, mlc_tir_assert(m, mlc_tir_binary(m, MLC_TIR_LT, REF(j), I64(4)), "Op", "j $0", 1,
                                                              (mlc_tir_expr *[]){REF(j)}), copy)),
              "the body holds an assert");
  mlc_tir_buffer *T = mlc_tir_buffer_new_c(m, "T", MLC_DTYPE_F32, 1, (int64_t[]){1}, MLC_TIR_SCOPE_LOCAL);
  expect_kept(m, VLOOP(I64(8), mlc_tir_allocate(m, T, copy)), "the body allocates T");
  /* a sum into one element */
  expect_kept(m, VLOOP(I64(8), mlc_tir_store(m, Y, IDX(I64(0)), mlc_tir_add(m, mlc_tir_load(m, Y, IDX(I64(0))),
                                                                               mlc_tir_load(m, X, IDX(REF(j)))))),
              "a store does not depend on the loop variable (a reduction into one element): Y");
  /* a recurrence: Y[j + 1] = Y[j] * 2 */
  expect_kept(m, VLOOP(I64(8), mlc_tir_store(m, Y, IDX(mlc_tir_add(m, REF(j), I64(1))),
                                             mlc_tir_mul(m, mlc_tir_load(m, Y, IDX(REF(j))), F32(2)))),
              "a load reads other indices than a store writes of Y");
  /* two stores: Y[j] = 1; Y[j + 1] = 2 */
  expect_kept(m, VLOOP(I64(8), mlc_tir_seq2(m, mlc_tir_store(m, Y, IDX(REF(j)), F32(1)),
                                            mlc_tir_store(m, Y, IDX(mlc_tir_add(m, REF(j), I64(1))), F32(2)))),
              "two stores write different indices of Y");
  /* pairs of lanes update one element: Y[j // 2] += X[j] */
  mlc_tir_expr *half = mlc_tir_binary(m, MLC_TIR_FLOORDIV, REF(j), I64(2));
  expect_kept(m, VLOOP(I64(8), mlc_tir_store(m, Y, IDX(half), mlc_tir_add(m, mlc_tir_load(m, Y, IDX(half)),
                                                                          mlc_tir_load(m, X, IDX(REF(j)))))),
              "lanes may write one element that the body also reads: Y");
  /* a block is not lowered yet */
  mlc_tir_iter_var it = {K.k, MLC_TIR_ITER_SPATIAL, I64(0), I64(8), REF(j)};
  expect_kept(m, VLOOP(I64(8), mlc_tir_block(m, "blk", 1, &it, NULL, mlc_tir_store(m, Y, IDX(REF(K.k)), F32(0)))),
              "the body holds block blk");

  /* nested vectorized loops: the inner one is vectorized, the outer kept */
  mlc_tir_expr *ij = mlc_tir_add(m, mlc_tir_mul(m, REF(K.i), I64(8)), REF(j));
  mlc_tir_stmt *inner = VLOOP(I64(8), mlc_tir_store(m, Y, IDX(ij), mlc_tir_load(m, X, IDX(ij))));
  mlc_tir_stmt *outer = mlc_tir_for(m, K.i, I64(0), I64(8), MLC_TIR_FOR_VECTORIZED, NULL, inner);
  mlc_tir_func *f = mlc_tir_func_new(m, "nested", 2, (mlc_tir_buffer *[]){X, Y}, outer);
  CU_ASSERT_FATAL(f && OK(mlc_tir_func_set_attr_bool(m, f, "tir.noalias", 1)));
  CU_ASSERT(OK(mlc_tir_vectorize_func(m, f)));
  MLC_TEST_OK(mlc_tir_verify_func(f));
  CU_ASSERT(f->body->kind == MLC_TIR_FOR && f->body->loop.body->kind == MLC_TIR_STORE);
  mlc_strbuf why = MLC_STRBUF_INIT;
  CU_ASSERT_FALSE(mlc_tir_vectorize_check(f, f->body, &why));
  CU_ASSERT_STRING_EQUAL(mlc_sb_str(&why), "the body holds vector expressions already");
  mlc_sb_fini(&why);
  EXPECT_TEXT(print_func(f),
              "@T.prim_func\n"
              "def nested(X: T.Buffer((64,), \"float32\"), Y: T.Buffer((64,), \"float32\")):\n"
              "    T.func_attr({\"tir.noalias\": True})\n"
              "    for i in T.vectorized(8):\n"
              "        Y[T.Ramp(i * 8, 1, 8)] = X[T.Ramp(i * 8, 1, 8)]\n");
  /* a loop of extent 1 is its body at the start */
  f = mlc_tir_func_new(m, "one", 2, (mlc_tir_buffer *[]){X, Y},
                       mlc_tir_for(m, j, I64(5), I64(1), MLC_TIR_FOR_VECTORIZED, NULL, copy));
  CU_ASSERT_FATAL(f && OK(mlc_tir_func_set_attr_bool(m, f, "tir.noalias", 1)));
  CU_ASSERT(OK(mlc_tir_vectorize_func(m, f)));
  EXPECT_TEXT(print_func(f), "@T.prim_func\ndef one(X: T.Buffer((64,), \"float32\"), Y: T.Buffer((64,), \"float32\")):\n"
                             "    T.func_attr({\"tir.noalias\": True})\n"
                             "    Y[5] = X[5]\n");
  EXPECT_ERR(mlc_tir_vectorize_func(m, NULL), "vectorize: missing module or prim func");
#undef VLOOP
}

/* Y[j] = X[j + 1]: vectorized when the parameters do not overlap; kept
** when they may (no tir.noalias), and when a view and its parameter are
** accessed at different indices */
static void test_pass_alias(void) {
  kern K;
  if (!kern_init(&K)) return;
  mlc_tir_module *m = K.m;
  mlc_tir_var *j = K.j;
  mlc_tir_stmt *shift = mlc_tir_store(m, K.Y, IDX(REF(j)), mlc_tir_load(m, K.X, IDX(mlc_tir_add(m, REF(j), I64(1)))));
  mlc_tir_stmt *loop = mlc_tir_for(m, j, I64(0), I64(16), MLC_TIR_FOR_VECTORIZED, NULL, shift);
  mlc_tir_func *f = mlc_tir_func_new(m, "shift", 2, (mlc_tir_buffer *[]){K.X, K.Y}, loop);
  CU_ASSERT_FATAL(f != NULL);
  mlc_strbuf why = MLC_STRBUF_INIT;
  CU_ASSERT_FALSE(mlc_tir_vectorize_check(f, loop, &why));
  CU_ASSERT_STRING_EQUAL(mlc_sb_str(&why), "a load reads other indices than a store writes of Y");
  mlc_sb_fini(&why);
  CU_ASSERT(mlc_tir_vectorize_check(NULL, loop, NULL));
  CU_ASSERT(OK(mlc_tir_vectorize_func(m, f)));
  CU_ASSERT_PTR_EQUAL(f->body, loop);
  CU_ASSERT(OK(mlc_tir_func_set_attr_bool(m, f, "tir.noalias", 1)));
  CU_ASSERT(mlc_tir_vectorize_check(f, loop, NULL));
  CU_ASSERT(OK(mlc_tir_vectorize_func(m, f)));
  CU_ASSERT(f->body->kind == MLC_TIR_STORE && f->body->store.value->lanes == 16);
  /* Yv, a view of Y: Yv[j] = Y[j + 1] reads what another lane writes */
  mlc_tir_buffer *Yv = mlc_tir_buffer_view(m, K.Y, 1, (mlc_tir_expr *[]){I64(64)});
  loop = mlc_tir_for(m, j, I64(0), I64(16), MLC_TIR_FOR_VECTORIZED, NULL,
                     mlc_tir_store(m, Yv, IDX(REF(j)), mlc_tir_load(m, K.Y, IDX(mlc_tir_add(m, REF(j), I64(1))))));
  f = mlc_tir_func_new(m, "view", 1, (mlc_tir_buffer *[]){K.Y}, loop);
  CU_ASSERT_FATAL(f && OK(mlc_tir_func_set_attr_bool(m, f, "tir.noalias", 1)));
  why = (mlc_strbuf)MLC_STRBUF_INIT;
  CU_ASSERT_FALSE(mlc_tir_vectorize_check(f, loop, &why));
  CU_ASSERT_STRING_EQUAL(mlc_sb_str(&why), "a load reads other indices than a store writes of Y");
  mlc_sb_fini(&why);
}

/* a vectorized loop inside a sequence, an if, an allocation and a parallel
** loop: the tree around it is rebuilt, sequences stay flat */
static void test_pass_nesting(void) {
  kern K;
  if (!kern_init(&K)) return;
  mlc_tir_module *m = K.m;
  mlc_tir_var *j = K.j;
  mlc_tir_buffer *T = mlc_tir_buffer_new_c(m, "tmp", MLC_DTYPE_F32, 1, (int64_t[]){4}, MLC_TIR_SCOPE_LOCAL);
  mlc_tir_stmt *fill = mlc_tir_for(m, j, I64(0), I64(4), MLC_TIR_FOR_VECTORIZED, NULL,
                                   mlc_tir_store(m, T, IDX(REF(j)), mlc_tir_cast(m, MLC_DTYPE_F32, REF(j))));
  mlc_tir_stmt *use = mlc_tir_for(m, j, I64(0), I64(4), MLC_TIR_FOR_VECTORIZED, NULL,
                                  mlc_tir_store(m, K.Y, IDX(mlc_tir_add(m, mlc_tir_mul(m, REF(K.i), I64(4)), REF(j))),
                                                mlc_tir_load(m, T, IDX(REF(j)))));
  mlc_tir_stmt *body = mlc_tir_allocate(m, T, mlc_tir_seq2(m, fill, use));
  body = mlc_tir_if(m, mlc_tir_binary(m, MLC_TIR_LT, REF(K.i), I64(16)), body, NULL);
  body = mlc_tir_for(m, K.i, I64(0), I64(16), MLC_TIR_FOR_PARALLEL, NULL, body);
  mlc_tir_func *f = mlc_tir_func_new(m, "nest", 1, (mlc_tir_buffer *[]){K.Y}, body);
  CU_ASSERT_FATAL(f != NULL);
  CU_ASSERT(OK(mlc_tir_vectorize_func(m, f)));
  MLC_TEST_OK(mlc_tir_verify_func(f));
  EXPECT_TEXT(print_func(f),
              "@T.prim_func\n"
              "def nest(Y: T.Buffer((64,), \"float32\")):\n"
              "    for i in T.parallel(16):\n"
              "        if i < 16:\n"
              "            tmp = T.alloc_buffer((4,), \"float32\", scope=\"local\")\n"
              "            tmp[T.Ramp(0, 1, 4)] = T.Cast(\"float32x4\", T.Ramp(0, 1, 4))\n"
              "            Y[T.Ramp(i * 4, 1, 4)] = tmp[T.Ramp(0, 1, 4)]\n");
}

/* ---- vectorized kernels, run ------------------------------------------------------------ */

#ifdef MLC_HAVE_LLVM

static int serial_for(mlc_rt_ctx *ctx, int64_t n, mlc_rt_parallel_body body, void *closure) {
  (void)ctx;
  return n > 0 ? body(0, n, closure) : 0;
}
static void *ws_alloc(mlc_rt_ctx *ctx, uint64_t n) {
  (void)ctx;
  return aligned_alloc(64, (n + 63) / 64 * 64);
}
static void ws_free(mlc_rt_ctx *ctx, void *p) {
  (void)ctx;
  free(p);
}
static int set_error(mlc_rt_ctx *ctx, const char *msg) {
  (void)ctx;
  printf("\n  kernel error: %s\n", msg);
  return -1;
}
static int check_failed(mlc_rt_ctx *ctx, const char *op, const char *msg, int64_t v0, int64_t v1, int64_t v2) {
  (void)ctx, (void)v0, (void)v1, (void)v2;
  printf("\n  kernel check failed: %s: %s\n", op, msg);
  return -1;
}
static const mlc_rt_api api = {serial_for, ws_alloc, ws_free, set_error, check_failed};

static char *tmpdir;
static int nlibs;

static int suite_init(void) {
  tmpdir = mlc_test_tmpdir();
  return tmpdir == NULL;
}

static int suite_clean(void) {
  if (tmpdir) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    free(tmpdir);
  }
  return 0;
}

/* Compiles |f| (in |m|) for the host into a shared object and loads it;
** the dlopen handle, or NULL. */
static void *load(mlc_tir_module *m, mlc_tir_func *f) {
  mlc_target *t;
  if (!OK(mlc_tir_module_add(m, f)) || !OK(mlc_target_host(&t))) return NULL;
  char obj[4200], so[4200], cmd[9000];
  snprintf(obj, sizeof obj, "%s/v%d.o", tmpdir, nlibs);
  snprintf(so, sizeof so, "%s/v%d.so", tmpdir, nlibs);
  nlibs++;
  int ok = OK(mlc_cg_build(m, t, obj));
  mlc_target_destroy(t);
  if (!ok) return NULL;
  snprintf(cmd, sizeof cmd, "cc -shared -o '%s' '%s' -lm", so, obj);
  if (system(cmd) != 0) {
    CU_FAIL("cc -shared failed");
    return NULL;
  }
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (!h) printf("\n  dlopen: %s\n", dlerror());
  CU_ASSERT_PTR_NOT_NULL(h);
  return h;
}

/* An argument: a DLTensor over memory with an inaccessible page right
** before its first element (|at_end| 0) or right after its last (1). */
typedef struct arg {
  DLTensor t;
  int64_t shape[2];
  void *map;
  size_t maplen;
  size_t nbytes;
} arg;

static int arg_init(arg *a, const mlc_tir_buffer *b, int at_end) {
  memset(a, 0, sizeof *a);
  size_t page = (size_t)sysconf(_SC_PAGESIZE), numel = 1;
  for (int d = 0; d < b->rank; d++) {
    a->shape[d] = b->shape[d]->int_value;
    numel *= (size_t)a->shape[d];
  }
  a->nbytes = numel * mlc_dtype_size(b->dtype);
  size_t data_pages = (a->nbytes + page - 1) / page;
  a->maplen = (data_pages + 2) * page;
  a->map = mmap(NULL, a->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (a->map == MAP_FAILED) return 0;
  char *base = a->map;
  if (mprotect(base, page, PROT_NONE) || mprotect(base + (data_pages + 1) * page, page, PROT_NONE)) return 0;
  char *data = at_end ? base + (data_pages + 1) * page - a->nbytes : base + page;
  mlc_dtype dt = b->dtype;
  a->t.data = data;
  a->t.dtype.code = dt == MLC_DTYPE_BF16 ? kDLBfloat : mlc_dtype_is_float(dt) ? kDLFloat
                    : mlc_dtype_is_signed(dt) ? kDLInt : kDLUInt;
  a->t.dtype.bits = (uint8_t)(mlc_dtype_size(dt) * 8);
  a->t.dtype.lanes = 1;
  a->t.ndim = b->rank;
  a->t.shape = a->shape;
  a->t.device.device_type = kDLCPU;
  return 1;
}

static void arg_fini(arg *a) {
  if (a->map && a->map != MAP_FAILED) munmap(a->map, a->maplen);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Random contents for |b|'s elements: floats in [-4, 4), ints in [-99, 99]. */
static void fill(void *data, const mlc_tir_buffer *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    double u = (double)(next_rand() >> 11) / 9007199254740992.0;
    int64_t iv = (int64_t)(next_rand() % 199) - 99;
    float f = (float)(u * 8 - 4);
    switch (b->dtype) {
      case MLC_DTYPE_F32: ((float *)data)[i] = f; break;
      case MLC_DTYPE_I64: ((int64_t *)data)[i] = iv; break;
      case MLC_DTYPE_I32: ((int32_t *)data)[i] = (int32_t)iv; break;
      case MLC_DTYPE_BOOL: ((uint8_t *)data)[i] = (uint8_t)(iv & 1); break;
      case MLC_DTYPE_F16: /* small exact halves: k / 4 for |k| < 64 */
      case MLC_DTYPE_BF16: {
        float h = (float)(iv % 64) / 4.0f;
        uint32_t bits;
        memcpy(&bits, &h, 4);
        uint16_t v = (uint16_t)(bits >> 16); /* bfloat16: exact for these */
        if (b->dtype == MLC_DTYPE_F16) {   /* float16 of k / 4 */
          int k = (int)(iv % 64), sign = k < 0;
          unsigned a = (unsigned)(sign ? -k : k);
          if (a == 0) v = 0;
          else {
            int e = 0;
            while ((a >> e) > 1) e++;
            unsigned mant = (a << (10 - e)) & 0x3ffu;
            v = (uint16_t)((sign ? 0x8000u : 0) | ((unsigned)(e - 2 + 15) << 10) | mant);
          }
        }
        ((uint16_t *)data)[i] = v;
        break;
      }
      default: memset((char *)data + i * mlc_dtype_size(b->dtype), 0, mlc_dtype_size(b->dtype)); break;
    }
  }
}

/* Nonzero if float32 arrays agree to 1e-6 relative (NaN with NaN). */
static int same_f32(const float *a, const float *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (isnan(a[i]) && isnan(b[i])) continue;
    if (!(fabsf(a[i] - b[i]) <= 1e-6f * fabsf(b[i]) + 1e-7f)) {
      printf("\n  element %zu: vector %.9g, scalar %.9g\n", i, (double)a[i], (double)b[i]);
      return 0;
    }
  }
  return 1;
}

/* |f| through the lowering pipeline (verified after each pass), with the
** vectorize pass (its last) when |vec|.  Nonzero on success. */
static int lower(mlc_tir_module *m, mlc_tir_func *f, int vec) {
  mlc_tir_lower_options opt;
  memset(&opt, 0, sizeof opt);
  opt.no_vectorize = !vec;
  opt.verify = 1;
  return OK(mlc_tir_lower_func(m, f, &opt));
}

/* Nonzero if |s| holds a vector expression. */
static int has_vectors(const mlc_tir_stmt *s) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_stmt(s, 0, &b);
  int r = strstr(mlc_sb_str(&b), "T.Ramp(") != NULL;
  mlc_sb_fini(&b);
  return r;
}

/* Builds kernel |which| twice (lowered without and with the vectorize
** pass), runs both on the same random arguments and compares every
** argument afterwards. */
static void run_kernel(int which) {
  kern K0, K1;
  if (!kern_init(&K0) || !kern_init(&K1)) return;
  mlc_tir_func *f0 = kernel(&K0, which), *f1 = kernel(&K1, which);
  CU_ASSERT_FATAL(f0 && f1);
  CU_ASSERT_FATAL(lower(K0.m, f0, 0) && lower(K1.m, f1, 1));
  CU_ASSERT(!has_vectors(f0->body));
  CU_ASSERT(has_vectors(f1->body) == (which != K_MATMUL_K));
  void *h0 = load(K0.m, f0), *h1 = h0 ? load(K1.m, f1) : NULL;
  if (!h0 || !h1) {
    if (h0) dlclose(h0);
    return;
  }
  mlc_kernel_fn fn0, fn1;
  void *p0 = dlsym(h0, f0->name), *p1 = dlsym(h1, f1->name);
  CU_ASSERT_FATAL(p0 && p1);
  memcpy(&fn0, &p0, sizeof fn0);
  memcpy(&fn1, &p1, sizeof fn1);
  int n = f0->nparams;
  arg a0[8], a1[8];
  void *args0[8], *args1[8];
  int32_t codes[8] = {0};
  int ok = 1;
  for (int r = 0; r < 2 && ok; r++) { /* guard page after, then before, each buffer */
    for (int i = 0; i < n; i++) {
      ok &= arg_init(&a0[i], f0->params[i], r == 0) & arg_init(&a1[i], f1->params[i], r == 0);
      if (!ok) break;
      fill(a0[i].t.data, f0->params[i], a0[i].nbytes / mlc_dtype_size(f0->params[i]->dtype));
      memcpy(a1[i].t.data, a0[i].t.data, a0[i].nbytes);
      args0[i] = &a0[i].t;
      args1[i] = &a1[i].t;
      codes[i] = MLC_ARG_TENSOR;
    }
    CU_ASSERT_FATAL(ok);
    mlc_rt_ctx ctx = {&api};
    CU_ASSERT_EQUAL(fn0(args0, codes, n, &ctx), 0);
    CU_ASSERT_EQUAL(fn1(args1, codes, n, &ctx), 0);
    for (int i = 0; i < n; i++) {
      if (f0->params[i]->dtype == MLC_DTYPE_F32) {
        if (!same_f32(a1[i].t.data, a0[i].t.data, a0[i].nbytes / 4)) {
          printf("  (kernel %s, argument %s)\n", f0->name, f0->params[i]->name);
          CU_FAIL("vectorized and scalar kernels differ");
        }
      } else if (memcmp(a1[i].t.data, a0[i].t.data, a0[i].nbytes) != 0) {
        printf("\n  kernel %s, argument %s differs\n", f0->name, f0->params[i]->name);
        CU_FAIL("vectorized and scalar kernels differ");
      }
    }
    if (which == K_TAIL) { /* the tail kernel writes all 50 elements */
      const float *x = a1[0].t.data, *y = a1[2].t.data;
      CU_ASSERT(fabsf(y[49] - tanhf(x[49])) < 1e-6f && fabsf(y[0] - tanhf(x[0])) < 1e-6f);
    }
    for (int i = 0; i < n; i++) {
      arg_fini(&a0[i]);
      arg_fini(&a1[i]);
    }
  }
  dlclose(h0);
  dlclose(h1);
}

/* exp of float32 is computed inline (a polynomial, not libm per lane):
** within 4 ulp of libm's expf over the range, exact at the edges (0 below
** the range, inf above it and at inf, NaN kept), scalar and vectorized. */
static void test_exp_accuracy(void) {
  for (int vec = 0; vec <= 1; vec++) {
    kern K;
    if (!kern_init(&K)) return;
    mlc_tir_module *m = K.m;
    mlc_tir_stmt *body = split16(&K, 4, mlc_tir_store(m, K.Y, IDX(flat(&K)),
                                                     mlc_tir_call1(m, MLC_TIR_INTRIN_EXP, mlc_tir_load(m, K.X, IDX(flat(&K))))));
    mlc_tir_buffer *params[2] = {K.X, K.Y};
    mlc_tir_func *f = mlc_tir_func_new(m, vec ? "exp_v" : "exp_s", 2, params, body);
    CU_ASSERT_FATAL(f && lower(m, f, vec));
    void *h = load(m, f);
    if (!h) {
      CU_FAIL("cannot load the exp kernel");
      return;
    }
    mlc_kernel_fn fn;
    void *p = dlsym(h, f->name);
    CU_ASSERT_FATAL(p != NULL);
    memcpy(&fn, &p, sizeof fn);
    static const float edge[] = {0.0f, -0.0f, 1.0f, -1.0f, 88.72f, 88.7229f, 89.0f, -87.33f, -103.0f, -104.5f,
                                 -200.0f, INFINITY, -INFINITY, NAN, 1e-8f, -1e-8f};
    int bad = 0;
    for (int round = 0; round < 64 && !bad; round++) {
      float x[64], y[64];
      for (int i = 0; i < 64; i++) /* a sweep of [-110, 95), then the edges */
        x[i] = round < 63 ? -110.0f + (float)(round * 64 + i) * (205.0f / 4032.0f) : edge[i % 16];
      arg a[2];
      CU_ASSERT_FATAL(arg_init(&a[0], K.X, 1) && arg_init(&a[1], K.Y, 1));
      memcpy(a[0].t.data, x, sizeof x);
      void *args[2] = {&a[0].t, &a[1].t};
      int32_t codes[2] = {MLC_ARG_TENSOR, MLC_ARG_TENSOR};
      mlc_rt_ctx ctx = {&api};
      CU_ASSERT_EQUAL(fn(args, codes, 2, &ctx), 0);
      memcpy(y, a[1].t.data, sizeof y);
      arg_fini(&a[0]);
      arg_fini(&a[1]);
      for (int i = 0; i < 64; i++) {
        float want = expf(x[i]);
        int ok = isnan(want) ? isnan(y[i]) : isinf(want) ? y[i] == want
                 : want < 1e-37f ? fabsf(y[i] - want) <= 1e-38f
                                 : fabsf(y[i] - want) <= 4.0f * 1.2e-7f * want;
        if (!ok) {
          printf("\n  exp(%.9g) = %.9g, libm %.9g\n", (double)x[i], (double)y[i], (double)want);
          bad = 1;
        }
      }
    }
    CU_ASSERT_EQUAL(bad, 0);
    dlclose(h);
  }
}

static void test_run_elementwise(void) {
  run_kernel(K_ADD);
  run_kernel(K_RELU);
  run_kernel(K_EXP);
  run_kernel(K_TYPES);
}

static void test_run_gather(void) { run_kernel(K_GATHER); }

static void test_run_parallel(void) { run_kernel(K_PAR); }

/* masked lanes read and write nothing (the guard pages would fault) */
static void test_run_masked(void) {
  run_kernel(K_TAIL);
  run_kernel(K_PAD);
}

static void test_run_matmul(void) {
  run_kernel(K_MATMUL_J);
  run_kernel(K_MATMUL_K);
}

/* The unoptimized LLVM IR of kernel |which| (after the pass when |vec|). */
static char *llvm_ir(int which, int vec) {
  kern K;
  if (!kern_init(&K)) return NULL;
  mlc_tir_func *f = kernel(&K, which);
  mlc_target *t;
  char *ir = NULL;
  if (!f || !lower(K.m, f, vec) || !OK(mlc_tir_module_add(K.m, f)) || !OK(mlc_target_host(&t)))
    return NULL;
  int ok = OK(mlc_cg_emit_llvm_ir(K.m, t, 0, &ir));
  mlc_target_destroy(t);
  if (!ok) return NULL;
  char *copy = strdup(ir);
  mlc_cg_free(ir);
  return mlc_test_hold(copy);
}

#define HAS(text, what) CU_ASSERT_PTR_NOT_NULL((text) ? strstr((text), (what)) : NULL)
#define HASNT(text, what) CU_ASSERT((text) && !strstr((text), (what)))

static void test_llvm_ir(void) {
  char *ir = llvm_ir(K_RELU, 1);
  HAS(ir, "load <16 x float>");
  HAS(ir, "store <16 x float>");
  HAS(ir, "select <16 x i1>");
  /* loops are blocks named after their variable: the outer loop stays,
  ** the vectorized one is gone */
  HAS(ir, "\ni:");
  HASNT(ir, "\nj:");
  HASNT(ir, "llvm.loop.vectorize");
  ir = llvm_ir(K_RELU, 0); /* without the pass: a hinted scalar loop */
  HAS(ir, "\nj:");
  HAS(ir, "llvm.loop.vectorize.enable");
  HASNT(ir, "<16 x float>");
  ir = llvm_ir(K_EXP, 1);
  HASNT(ir, "@llvm.exp."); /* inline, not libm per lane */
  HAS(ir, "@llvm.roundeven.v16f32");
  HAS(ir, "fdiv <16 x float>"); /* sigmoid */
  ir = llvm_ir(K_GATHER, 1);
  HAS(ir, "@llvm.masked.gather.v16f32.v16p0");
  ir = llvm_ir(K_TAIL, 1);
  HAS(ir, "@llvm.masked.load.v16f32.p0");
  HAS(ir, "@llvm.masked.store.v16f32.p0");
  HAS(ir, "@llvm.vector.reduce.or.v16i1");
  HAS(ir, "call float @tanhf"); /* per lane */
  ir = llvm_ir(K_PAD, 1);
  HAS(ir, "@llvm.masked.load.v16f32.p0");
  HAS(ir, "@llvm.masked.gather.v16f32.v16p0"); /* X[0] per lane, masked */
  ir = llvm_ir(K_MATMUL_J, 1);
  HAS(ir, "fmul contract <16 x float>"); /* may become an FMA */
  HASNT(ir, "\nj:");
  ir = llvm_ir(K_MATMUL_K, 1);
  HAS(ir, "\nk:");
  HASNT(ir, "<8 x float>");
  ir = llvm_ir(K_TYPES, 1);
  HAS(ir, "load <16 x half>");
  HAS(ir, "store <16 x i16>"); /* bfloat16 bits */
  HAS(ir, "store <16 x i8>");  /* bool */
  HAS(ir, "sdiv <16 x i64>");
  ir = llvm_ir(K_PAR, 1);
  HAS(ir, "define internal i32 @par_par0(");
  HAS(ir, "store <16 x float>");
  HASNT(ir, "\nj:");
}

#endif /* MLC_HAVE_LLVM */

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"vector_exprs", test_vector_exprs},
                                      {"vector_func", test_vector_func},
                                      {"vector_verify", test_vector_verify},
                                      {"pass_golden", test_pass_golden},
                                      {"pass_refused", test_pass_refused},
                                      {"pass_alias", test_pass_alias},
                                      {"pass_nesting", test_pass_nesting},
                                      {NULL, NULL}};
  mlc_test_add_suite("vectorize", tests);
#ifdef MLC_HAVE_LLVM
  static const CU_TestInfo run[] = {{"elementwise", test_run_elementwise},
                                    {"gather", test_run_gather},
                                    {"parallel", test_run_parallel},
                                    {"masked", test_run_masked},
                                    {"matmul", test_run_matmul},
                                    {"llvm_ir", test_llvm_ir},
                                    {"exp_accuracy", test_exp_accuracy},
                                    {NULL, NULL}};
  CU_pSuite s = CU_add_suite("vectorize_run", suite_init, suite_clean);
  for (const CU_TestInfo *t = run; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
#endif
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_vectorize", fns);
}
