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

/* ---- the pass: golden before / after ------------------------------------------- */

typedef struct kern {
  mlc_tir_module *m;
  mlc_tir_buffer *X, *Y, *I;      /* X, I inputs (float32 [64], int64 [64]), Y output [64] */
  mlc_tir_buffer *A, *B, *C;      /* matmul: C[8, 16] += A[8, 8] * B[8, 16] */
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
  K->i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64);
  K->j = mlc_tir_var_new(m, "j", MLC_DTYPE_I64);
  K->k = mlc_tir_var_new(m, "k", MLC_DTYPE_I64);
  return K->X && K->Y && K->I && K->A && K->B && K->C && K->i && K->j && K->k;
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
enum { K_ADD, K_RELU, K_EXP, K_GATHER, K_TAIL, K_PAD, K_MATMUL_J, K_MATMUL_K, K_NKERNELS };

static mlc_tir_func *kernel(kern *K, int which) {
  mlc_tir_module *m = K->m;
  mlc_tir_buffer *X = K->X, *Y = K->Y;
  mlc_tir_stmt *body = NULL;
  const char *name = "?";
  mlc_tir_buffer *params[4] = {X, K->I, Y, NULL};
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
    case K_TAIL: /* 50 of 64 elements: if i * 16 + j < 50: Y = tanh(X) */
      name = "tail";
      body = split16(K, 4, mlc_tir_if(m, mlc_tir_binary(m, MLC_TIR_LT, flat(K), I64(50)),
                                      mlc_tir_store(m, Y, IDX(flat(K)), mlc_tir_call1(m, MLC_TIR_INTRIN_TANH, mlc_tir_load(m, X, IDX(flat(K))))),
                                      NULL));
      break;
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
              "@T.prim_func\ndef tail" HEAD3
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
  mlc_strbuf why = MLC_STRBUF_INIT;
  CU_ASSERT_FALSE(mlc_tir_vectorize_check(loop, &why));
  if (!strstr(mlc_sb_str(&why), reason)) printf("\n  reason: %s\n", mlc_sb_str(&why));
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_sb_str(&why), reason));
  mlc_sb_fini(&why);
  mlc_tir_func *f = mlc_tir_func_new(m, "kept", 0, NULL, loop);
  CU_ASSERT_FATAL(f != NULL);
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
  CU_ASSERT_FATAL(f != NULL);
  CU_ASSERT(OK(mlc_tir_vectorize_func(m, f)));
  MLC_TEST_OK(mlc_tir_verify_func(f));
  CU_ASSERT(f->body->kind == MLC_TIR_FOR && f->body->loop.body->kind == MLC_TIR_STORE);
  mlc_strbuf why = MLC_STRBUF_INIT;
  CU_ASSERT_FALSE(mlc_tir_vectorize_check(f->body, &why));
  CU_ASSERT_STRING_EQUAL(mlc_sb_str(&why), "the body holds vector expressions already");
  mlc_sb_fini(&why);
  EXPECT_TEXT(print_func(f),
              "@T.prim_func\n"
              "def nested(X: T.Buffer((64,), \"float32\"), Y: T.Buffer((64,), \"float32\")):\n"
              "    for i in T.vectorized(8):\n"
              "        Y[T.Ramp(i * 8, 1, 8)] = X[T.Ramp(i * 8, 1, 8)]\n");
  /* a loop of extent 1 is its body at the start */
  f = mlc_tir_func_new(m, "one", 2, (mlc_tir_buffer *[]){X, Y},
                       mlc_tir_for(m, j, I64(5), I64(1), MLC_TIR_FOR_VECTORIZED, NULL, copy));
  CU_ASSERT(f && OK(mlc_tir_vectorize_func(m, f)));
  EXPECT_TEXT(print_func(f), "@T.prim_func\ndef one(X: T.Buffer((64,), \"float32\"), Y: T.Buffer((64,), \"float32\")):\n"
                             "    Y[5] = X[5]\n");
  EXPECT_ERR(mlc_tir_vectorize_func(m, NULL), "vectorize: missing module or prim func");
#undef VLOOP
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

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"vector_exprs", test_vector_exprs},
                                      {"vector_func", test_vector_func},
                                      {"vector_verify", test_vector_verify},
                                      {"pass_golden", test_pass_golden},
                                      {"pass_refused", test_pass_refused},
                                      {"pass_nesting", test_pass_nesting},
                                      {NULL, NULL}};
  mlc_test_add_suite("vectorize", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_vectorize", fns);
}
