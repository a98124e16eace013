/*
** test_tir.c: TensorIR builders and folding, copy with substitution, the
** printer (golden files under tests/golden/tir/, rewritten with
** MLC_UPDATE_GOLDEN=1), the verifier, and the te builder (the seeds'
** mm_relu by hand and through te must print the same).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/te.h"
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

/* Compares |text| with tests/golden/tir/|name|.out (or rewrites it). */
static void golden(const char *name, const char *text) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/golden/tir/%s.out", name);
  const char *path = mlc_test_src_path(rel);
  const char *upd = getenv("MLC_UPDATE_GOLDEN");
  if (upd && strcmp(upd, "1") == 0) {
    CU_ASSERT_EQUAL(mlc_test_write_file(path, text, strlen(text)), 0);
    return;
  }
  char *want = mlc_test_read_file(path, NULL);
  if (!want) {
    printf("\n  missing golden file %s (run with MLC_UPDATE_GOLDEN=1)\n", path);
    CU_FAIL("missing golden file");
    return;
  }
  if (strcmp(want, text) != 0) {
    int line = 1;
    const char *a = want, *b = text;
    while (*a && *a == *b) {
      if (*a == '\n') line++;
      a++, b++;
    }
    printf("\n  %s differs at line %d\n--- expected\n%s--- actual\n%s", path, line, want, text);
    CU_FAIL("golden mismatch");
  }
  free(want);
}

#define I64(v) mlc_tir_i64(m, (v))
#define REF(v) mlc_tir_ref(m, (v))
#define IDX(...) (int)(sizeof((mlc_tir_expr *[]){__VA_ARGS__}) / sizeof(mlc_tir_expr *)), (mlc_tir_expr *[]){__VA_ARGS__}

/* ---- the seeds' mm_relu, by hand ------------------------------------------------ */

static mlc_tir_iter_var iter(mlc_tir_var *v, mlc_tir_iter_kind k, mlc_tir_expr *ext, mlc_tir_expr *bind,
                             mlc_tir_module *m) {
  mlc_tir_iter_var it = {v, k, mlc_tir_i64(m, 0), ext, bind};
  return it;
}

static mlc_tir_func *hand_mm_relu(mlc_tir_module *m) {
  const int64_t dims[2] = {128, 128};
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", MLC_DTYPE_F32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *C = mlc_tir_buffer_new_c(m, "C", MLC_DTYPE_F32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *Y = mlc_tir_buffer_new_c(m, "Y", MLC_DTYPE_F32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  /* Y */
  mlc_tir_var *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64), *j = mlc_tir_var_new(m, "j", MLC_DTYPE_I64);
  mlc_tir_var *k = mlc_tir_var_new(m, "k", MLC_DTYPE_I64);
  mlc_tir_var *vi = mlc_tir_var_new(m, "vi", MLC_DTYPE_I64), *vj = mlc_tir_var_new(m, "vj", MLC_DTYPE_I64);
  mlc_tir_var *vk = mlc_tir_var_new(m, "vk", MLC_DTYPE_I64);
  mlc_tir_iter_var its[3] = {iter(vi, MLC_TIR_ITER_SPATIAL, I64(128), REF(i), m),
                             iter(vj, MLC_TIR_ITER_SPATIAL, I64(128), REF(j), m),
                             iter(vk, MLC_TIR_ITER_REDUCE, I64(128), REF(k), m)};
  mlc_tir_stmt *init = mlc_tir_store(m, Y, IDX(REF(vi), REF(vj)), mlc_tir_float(m, MLC_DTYPE_F32, 0));
  mlc_tir_expr *prod = mlc_tir_mul(m, mlc_tir_load(m, A, IDX(REF(vi), REF(vk))), mlc_tir_load(m, B, IDX(REF(vk), REF(vj))));
  mlc_tir_stmt *upd = mlc_tir_store(m, Y, IDX(REF(vi), REF(vj)), mlc_tir_add(m, mlc_tir_load(m, Y, IDX(REF(vi), REF(vj))), prod));
  mlc_tir_stmt *s1 = mlc_tir_block(m, "Y", 3, its, init, upd);
  s1 = mlc_tir_for(m, k, I64(0), I64(128), MLC_TIR_FOR_SERIAL, NULL, s1);
  s1 = mlc_tir_for(m, j, I64(0), I64(128), MLC_TIR_FOR_SERIAL, NULL, s1);
  s1 = mlc_tir_for(m, i, I64(0), I64(128), MLC_TIR_FOR_SERIAL, NULL, s1);
  /* C */
  mlc_tir_var *i2 = mlc_tir_var_new(m, "i", MLC_DTYPE_I64), *j2 = mlc_tir_var_new(m, "j", MLC_DTYPE_I64);
  mlc_tir_var *vi2 = mlc_tir_var_new(m, "vi", MLC_DTYPE_I64), *vj2 = mlc_tir_var_new(m, "vj", MLC_DTYPE_I64);
  mlc_tir_iter_var its2[2] = {iter(vi2, MLC_TIR_ITER_SPATIAL, I64(128), REF(i2), m),
                              iter(vj2, MLC_TIR_ITER_SPATIAL, I64(128), REF(j2), m)};
  mlc_tir_stmt *st = mlc_tir_store(m, C, IDX(REF(vi2), REF(vj2)),
                                   mlc_tir_max(m, mlc_tir_load(m, Y, IDX(REF(vi2), REF(vj2))), mlc_tir_float(m, MLC_DTYPE_F32, 0)));
  mlc_tir_stmt *s2 = mlc_tir_block(m, "C", 2, its2, NULL, st);
  s2 = mlc_tir_for(m, j2, I64(0), I64(128), MLC_TIR_FOR_SERIAL, NULL, s2);
  s2 = mlc_tir_for(m, i2, I64(0), I64(128), MLC_TIR_FOR_SERIAL, NULL, s2);
  mlc_tir_stmt *body = mlc_tir_allocate(m, Y, mlc_tir_seq2(m, s1, s2));
  mlc_tir_buffer *params[3] = {A, B, C};
  mlc_tir_func *f = mlc_tir_func_new(m, "mm_relu", 3, params, body);
  if (!OK(mlc_tir_func_set_attr_str(m, f, "global_symbol", "mm_relu")) ||
      !OK(mlc_tir_func_set_attr_bool(m, f, "tir.noalias", 1)))
    return NULL;
  return f;
}

/* ---- mm_relu through te ---------------------------------------------------------- */

typedef struct mm_ctx {
  mlc_te_tensor *A, *B, *Y;
  mlc_tir_expr *k;
} mm_ctx;

static mlc_tir_expr *mm_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mm_ctx *c = user;
  mlc_tir_module *m = mlc_te_module(b);
  mlc_tir_expr *a = mlc_te_load(b, c->A, 2, (mlc_tir_expr *[]){idx[0], c->k});
  mlc_tir_expr *bb = mlc_te_load(b, c->B, 2, (mlc_tir_expr *[]){c->k, idx[1]});
  return mlc_te_sum(b, mlc_tir_mul(m, a, bb), &c->k, 1);
}

static mlc_tir_expr *relu_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mm_ctx *c = user;
  mlc_tir_module *m = mlc_te_module(b);
  return mlc_tir_max(m, mlc_te_load(b, c->Y, 2, idx), mlc_tir_float(m, MLC_DTYPE_F32, 0));
}

static mlc_tir_func *te_mm_relu(mlc_tir_module *m) {
  mlc_te_builder *b;
  mm_ctx c;
  mlc_te_tensor *C;
  mlc_tir_func *f = NULL;
  if (!OK(mlc_te_builder_create(m, &b))) return NULL;
  mlc_tir_expr *shape[2] = {I64(128), I64(128)};
  static const char *const names[2] = {"i", "j"};
  if (OK(mlc_te_placeholder(b, "A", 2, shape, MLC_DTYPE_F32, &c.A)) &&
      OK(mlc_te_placeholder(b, "B", 2, shape, MLC_DTYPE_F32, &c.B)) &&
      (c.k = mlc_te_reduce_axis(b, I64(128), "k")) != NULL &&
      OK(mlc_te_compute(b, "Y", 2, shape, names, mm_body, &c, &c.Y)) &&
      OK(mlc_te_compute(b, "C", 2, shape, names, relu_body, &c, &C))) {
    mlc_te_tensor *ins[2] = {c.A, c.B};
    (void)OK(mlc_te_create_prim_func(b, "mm_relu", 1, &C, 2, ins, &f));
  }
  mlc_te_builder_destroy(b);
  return f;
}

static void test_mm_relu(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_func *h = hand_mm_relu(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  CU_ASSERT(OK(mlc_tir_verify_func(h)));
  char *ht = print_func(h);
  golden("mm_relu", ht);
  /* through te: the same program */
  mlc_tir_func *t = te_mm_relu(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  CU_ASSERT(OK(mlc_tir_verify_func(t)));
  char *tt = print_func(t);
  if (strcmp(ht, tt) != 0) printf("\n--- hand\n%s--- te\n%s", ht, tt);
  CU_ASSERT_STRING_EQUAL(ht, tt);
  /* deterministic */
  char *tt2 = print_func(t);
  CU_ASSERT_STRING_EQUAL(tt, tt2);
  /* modules: add, duplicate names, find */
  CU_ASSERT(OK(mlc_tir_module_add(m, h)));
  EXPECT_ERR(mlc_tir_module_add(m, t), "duplicate prim func \"mm_relu\"");
  CU_ASSERT_PTR_EQUAL(mlc_tir_module_find(m, "mm_relu"), h);
  CU_ASSERT_PTR_NULL(mlc_tir_module_find(m, "mm_rel"));
  CU_ASSERT(OK(mlc_tir_verify_module(m)));
  CU_ASSERT_STRING_EQUAL(mlc_tir_func_symbol(h), "mm_relu");
  /* a function dropped from the end is no longer found, and its name is free */
  m->nfuncs--;
  CU_ASSERT_PTR_NULL(mlc_tir_module_find(m, "mm_relu"));
  CU_ASSERT(OK(mlc_tir_module_add(m, t)));
  CU_ASSERT_PTR_EQUAL(mlc_tir_module_find(m, "mm_relu"), t);
  free(ht);
  free(tt);
  free(tt2);
  mlc_tir_module_destroy(m);
}

/* ---- te with a symbolic extent and several stages ----------------------------------- */

typedef struct sym_ctx {
  mlc_te_tensor *X, *W, *S;
  mlc_tir_expr *k;
} sym_ctx;

static mlc_tir_expr *sym_sum(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  sym_ctx *c = user;
  mlc_tir_expr *x = mlc_te_load(b, c->X, 2, (mlc_tir_expr *[]){idx[0], c->k});
  return mlc_te_max(b, x, &c->k, 1);
}

static mlc_tir_expr *sym_out(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  sym_ctx *c = user;
  mlc_tir_module *m = mlc_te_module(b);
  mlc_tir_expr *x = mlc_te_load(b, c->X, 2, idx);
  mlc_tir_expr *d = mlc_tir_sub(m, x, mlc_te_load(b, c->S, 1, idx));
  mlc_tir_expr *w = mlc_te_load(b, c->W, 1, (mlc_tir_expr *[]){idx[1]});
  return mlc_tir_mul(m, mlc_tir_call1(m, MLC_TIR_INTRIN_EXP, d), w);
}

static void test_te_symbolic(void) {
  mlc_tir_module *m = new_module();
  mlc_te_builder *b;
  if (!m || !OK(mlc_te_builder_create(m, &b))) return;
  mlc_test_hold(b);
  mlc_tir_var *n = mlc_tir_var_new(m, "n", MLC_DTYPE_I64);
  sym_ctx c;
  mlc_te_tensor *O;
  mlc_tir_func *f = NULL;
  CU_ASSERT(OK(mlc_te_placeholder(b, "X", 2, (mlc_tir_expr *[]){REF(n), I64(16)}, MLC_DTYPE_F32, &c.X)));
  CU_ASSERT(OK(mlc_te_placeholder(b, "W", 1, (mlc_tir_expr *[]){I64(16)}, MLC_DTYPE_F32, &c.W)));
  c.k = mlc_te_reduce_axis(b, I64(16), "k");
  CU_ASSERT(OK(mlc_te_compute(b, "S", 1, (mlc_tir_expr *[]){REF(n)}, NULL, sym_sum, &c, &c.S)));
  if (c.S) c.S->scope = MLC_TIR_SCOPE_LOCAL;
  CU_ASSERT(OK(mlc_te_compute(b, "O", 2, (mlc_tir_expr *[]){REF(n), I64(16)}, NULL, sym_out, &c, &O)));
  CU_ASSERT(OK(mlc_te_create_prim_func(b, "softmax_num", 1, &O, 2, (mlc_te_tensor *[]){c.X, c.W}, &f)));
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(f->nscalars, 1);
  CU_ASSERT_PTR_EQUAL(f->scalars[0].var, n);
  CU_ASSERT_EQUAL(f->scalars[0].param, 0);
  CU_ASSERT_EQUAL(f->scalars[0].dim, 0);
  CU_ASSERT(OK(mlc_tir_verify_func(f)));
  char *t = print_func(f);
  golden("te_symbolic", t);
  free(t);
  /* errors: X not listed as an input; n unbound */
  mlc_tir_func *g = NULL;
  EXPECT_ERR(mlc_te_create_prim_func(b, "bad", 1, &O, 1, &c.W, &g), "placeholder X is read but is not an input");
  EXPECT_ERR(mlc_te_create_prim_func(b, "bad", 1, &c.X, 1, &c.W, &g), "output X is a placeholder");
  mlc_te_builder_destroy(b);
  mlc_tir_module_destroy(m);
}

/* Errors the te builder reports. */
static mlc_tir_expr *bad_load(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mm_ctx *c = user;
  return mlc_te_load(b, c->A, 1, idx); /* A has rank 2 */
}

static mlc_tir_expr *nested_sum(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mm_ctx *c = user;
  mlc_tir_module *m = mlc_te_module(b);
  mlc_tir_expr *s = mlc_te_sum(b, mlc_te_load(b, c->A, 2, (mlc_tir_expr *[]){idx[0], c->k}), &c->k, 1);
  return mlc_tir_add(m, s, mlc_tir_float(m, MLC_DTYPE_F32, 1));
}

static mlc_tir_expr *unbound_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mm_ctx *c = user;
  mlc_tir_module *m = mlc_te_module(b);
  (void)idx;
  return mlc_tir_cast(m, MLC_DTYPE_F32, mlc_tir_ref(m, c->k->var));
}

static void test_te_errors(void) {
  mlc_tir_module *m = new_module();
  mlc_te_builder *b;
  if (!m || !OK(mlc_te_builder_create(m, &b))) return;
  mm_ctx c;
  mlc_te_tensor *o;
  CU_ASSERT(OK(mlc_te_placeholder(b, "A", 2, (mlc_tir_expr *[]){I64(4), I64(4)}, MLC_DTYPE_F32, &c.A)));
  c.k = mlc_te_reduce_axis(b, I64(4), "k");
  EXPECT_ERR(mlc_te_compute(b, "O", 2, (mlc_tir_expr *[]){I64(4), I64(4)}, NULL, bad_load, &c, &o),
             "compute O", "A[...] with 1 indices, its rank is 2");
  EXPECT_ERR(mlc_te_compute(b, "O", 1, (mlc_tir_expr *[]){I64(4)}, NULL, nested_sum, &c, &o),
             "a reduction must be the whole body");
  /* a variable that no parameter dimension binds */
  mlc_tir_var *q = mlc_tir_var_new(m, "q", MLC_DTYPE_I64);
  mm_ctx c2 = {c.A, NULL, NULL, REF(q)};
  mlc_tir_func *f;
  CU_ASSERT(OK(mlc_te_compute(b, "U", 1, (mlc_tir_expr *[]){I64(4)}, NULL, unbound_body, &c2, &o)));
  EXPECT_ERR(mlc_te_create_prim_func(b, "u", 1, &o, 0, NULL, &f), "variable q is not a dimension of any parameter");
  /* a sum over something that is not a reduce axis */
  CU_ASSERT_PTR_NULL(mlc_te_sum(b, I64(1), (mlc_tir_expr *[]){REF(q)}, 1));
  EXPECT_ERR(mlc_te_create_prim_func(b, "u", 1, &o, 0, NULL, &f), "is not a reduce axis");
  mlc_te_builder_destroy(b);
  mlc_tir_module_destroy(m);
}

/* ---- builders: constant folding ------------------------------------------------- */

static void test_folding(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_var *x = mlc_tir_var_new(m, "x", MLC_DTYPE_I64);
  mlc_tir_expr *e = mlc_tir_mul(m, mlc_tir_add(m, I64(2), I64(3)), REF(x));
  EXPECT_EXPR(e, "5 * x");
  EXPECT_EXPR(mlc_tir_add(m, mlc_tir_mul(m, REF(x), I64(1)), I64(0)), "x");
  EXPECT_EXPR(mlc_tir_mul(m, I64(0), REF(x)), "0");
  CU_ASSERT(mlc_tir_is_const(mlc_tir_binary(m, MLC_TIR_FLOORDIV, I64(-7), I64(2)), -4));
  CU_ASSERT(mlc_tir_is_const(mlc_tir_binary(m, MLC_TIR_FLOORMOD, I64(-7), I64(2)), 1));
  CU_ASSERT(mlc_tir_is_const(mlc_tir_binary(m, MLC_TIR_TRUNCDIV, I64(-7), I64(2)), -3));
  CU_ASSERT(mlc_tir_is_const(mlc_tir_binary(m, MLC_TIR_TRUNCMOD, I64(-7), I64(2)), -1));
  CU_ASSERT(mlc_tir_is_const(mlc_tir_binary(m, MLC_TIR_FLOORMOD, I64(7), I64(-2)), -1));
  CU_ASSERT(mlc_tir_is_const(mlc_tir_binary(m, MLC_TIR_DIV, I64(9), I64(0)), 0));
  CU_ASSERT(mlc_tir_is_const(mlc_tir_binary(m, MLC_TIR_FLOORDIV, I64(INT64_MIN), I64(-1)), INT64_MIN));
  mlc_tir_expr *u = mlc_tir_add(m, mlc_tir_int(m, MLC_DTYPE_U8, 200), mlc_tir_int(m, MLC_DTYPE_U8, 100));
  CU_ASSERT(u->kind == MLC_TIR_INT_IMM && u->int_value == 44 && u->dtype == MLC_DTYPE_U8);
  mlc_tir_expr *gt = mlc_tir_binary(m, MLC_TIR_GT, mlc_tir_int(m, MLC_DTYPE_U8, 200), mlc_tir_int(m, MLC_DTYPE_U8, 100));
  CU_ASSERT(gt->kind == MLC_TIR_INT_IMM && gt->dtype == MLC_DTYPE_BOOL && gt->int_value == 1);
  mlc_tir_expr *c8 = mlc_tir_cast(m, MLC_DTYPE_I8, I64(300));
  CU_ASSERT(c8->kind == MLC_TIR_INT_IMM && c8->int_value == 44);
  mlc_tir_expr *cf = mlc_tir_cast(m, MLC_DTYPE_F32, I64(3));
  CU_ASSERT(cf->kind == MLC_TIR_FLOAT_IMM && cf->float_value == 3.0);
  /* int DIV is floordiv; float DIV stays */
  CU_ASSERT_EQUAL(mlc_tir_binary(m, MLC_TIR_DIV, REF(x), I64(2))->bin.op, MLC_TIR_FLOORDIV);
  mlc_tir_expr *fd = mlc_tir_binary(m, MLC_TIR_DIV, mlc_tir_float(m, MLC_DTYPE_F32, 1), mlc_tir_float(m, MLC_DTYPE_F32, 2));
  CU_ASSERT(fd->kind == MLC_TIR_BINARY && fd->bin.op == MLC_TIR_DIV);
  /* select on a constant condition picks the arm */
  CU_ASSERT_PTR_EQUAL(mlc_tir_select(m, mlc_tir_int(m, MLC_DTYPE_BOOL, 0), I64(1), REF(x))->var, x);
  /* NULL children propagate */
  CU_ASSERT_PTR_NULL(mlc_tir_add(m, NULL, I64(1)));
  CU_ASSERT_PTR_NULL(mlc_tir_for(m, x, I64(0), I64(4), MLC_TIR_FOR_SERIAL, NULL, NULL));
  /* printing: precedence and forms */
  mlc_tir_var *y = mlc_tir_var_new(m, "y", MLC_DTYPE_I64);
  EXPECT_EXPR(mlc_tir_mul(m, mlc_tir_add(m, REF(x), REF(y)), mlc_tir_sub(m, REF(x), I64(1))), "(x + y) * (x - 1)");
  EXPECT_EXPR(mlc_tir_sub(m, REF(x), mlc_tir_sub(m, REF(y), I64(1))), "x - (y - 1)");
  EXPECT_EXPR(mlc_tir_sub(m, mlc_tir_sub(m, REF(x), REF(y)), I64(-1)), "x - y - -1");
  EXPECT_EXPR(mlc_tir_binary(m, MLC_TIR_FLOORMOD, mlc_tir_binary(m, MLC_TIR_FLOORDIV, REF(x), I64(4)), I64(3)), "x // 4 % 3");
  mlc_tir_expr *lt = mlc_tir_binary(m, MLC_TIR_LT, REF(x), REF(y));
  mlc_tir_expr *ge = mlc_tir_binary(m, MLC_TIR_GE, REF(x), I64(0));
  EXPECT_EXPR(mlc_tir_not(m, mlc_tir_binary(m, MLC_TIR_OR, mlc_tir_binary(m, MLC_TIR_AND, lt, ge), lt)),
              "not (x < y and x >= 0 or x < y)");
  EXPECT_EXPR(mlc_tir_binary(m, MLC_TIR_EQ, lt, ge), "(x < y) == (x >= 0)");
  EXPECT_EXPR(mlc_tir_cast(m, MLC_DTYPE_F16, REF(x)), "T.Cast(\"float16\", x)");
  EXPECT_EXPR(mlc_tir_float(m, MLC_DTYPE_F32, -INFINITY), "T.float32(\"-inf\")");
  EXPECT_EXPR(mlc_tir_float(m, MLC_DTYPE_F32, 0.1), "T.float32(0.1)");
  EXPECT_EXPR(mlc_tir_int(m, MLC_DTYPE_I32, -5), "T.int32(-5)");
  EXPECT_EXPR(mlc_tir_binary(m, MLC_TIR_TRUNCDIV, REF(x), REF(y)), "T.truncdiv(x, y)");
  EXPECT_EXPR(mlc_tir_binary(m, MLC_TIR_AND, mlc_tir_cast(m, MLC_DTYPE_U8, REF(x)), mlc_tir_int(m, MLC_DTYPE_U8, 15)),
              "T.bitwise_and(T.Cast(\"uint8\", x), T.uint8(15))");
  mlc_tir_module_destroy(m);
}

/* ---- copy with substitution --------------------------------------------------------- */

static void test_copy(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_func *f = hand_mm_relu(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  /* substitute i = 0 in an index expression: folds */
  mlc_tir_var *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64), *j = mlc_tir_var_new(m, "j", MLC_DTYPE_I64);
  mlc_tir_expr *e = mlc_tir_add(m, mlc_tir_mul(m, REF(i), I64(16)), REF(j));
  mlc_tir_subst s = {1, &i, (mlc_tir_expr *[]){I64(0)}, 0, NULL, NULL, 0};
  EXPECT_EXPR(mlc_tir_expr_copy(m, e, &s), "j");
  mlc_tir_subst s2 = {1, &i, (mlc_tir_expr *[]){mlc_tir_add(m, REF(j), I64(1))}, 0, NULL, NULL, 0};
  EXPECT_EXPR(mlc_tir_expr_copy(m, e, &s2), "(j + 1) * 16 + j");
  /* the whole body, copied with fresh variables, sits next to the original */
  mlc_tir_subst fresh = {0, NULL, NULL, 0, NULL, NULL, 1};
  mlc_tir_stmt *copy = mlc_tir_stmt_copy(m, f->body, &fresh);
  CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
  CU_ASSERT(copy->kind == MLC_TIR_ALLOCATE && copy->alloc.buffer != f->body->alloc.buffer);
  const mlc_tir_stmt *l0 = f->body->alloc.body->seq.stmts[0], *l1 = copy->alloc.body->seq.stmts[0];
  CU_ASSERT(l0->loop.var != l1->loop.var);
  CU_ASSERT_STRING_EQUAL(l0->loop.var->name, l1->loop.var->name);
  mlc_strbuf a = MLC_STRBUF_INIT, b = MLC_STRBUF_INIT;
  mlc_tir_print_stmt(f->body, 0, &a);
  mlc_tir_print_stmt(copy, 0, &b);
  CU_ASSERT_STRING_EQUAL(mlc_sb_str(&a), mlc_sb_str(&b));
  mlc_sb_fini(&a);
  mlc_sb_fini(&b);
  mlc_tir_func *g = mlc_tir_func_new(m, "twice", f->nparams, f->params, mlc_tir_seq2(m, f->body, copy));
  CU_ASSERT(OK(mlc_tir_verify_func(g)));
  /* a plain copy shares variables: next to the original it still verifies
  ** (sibling scopes), and buffers can be replaced */
  mlc_tir_buffer *Z = mlc_tir_buffer_new_c(m, "Z", MLC_DTYPE_F32, 2, (int64_t[]){128, 128}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *C = f->params[2];
  mlc_tir_subst sb = {0, NULL, NULL, 1, &C, &Z, 0};
  mlc_tir_stmt *c2 = mlc_tir_stmt_copy(m, f->body, &sb);
  mlc_tir_func *h = mlc_tir_func_new(m, "to_z", 3, (mlc_tir_buffer *[]){f->params[0], f->params[1], Z}, c2);
  CU_ASSERT(OK(mlc_tir_verify_func(h)));
  char *t = print_func(h);
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "Z[vi, vj] = T.max(Y[vi, vj], T.float32(0))"));
  free(t);
  mlc_tir_module_destroy(m);
}

/* A copy with fresh variables when any one allocation fails: NULL or a
** whole copy, never a crash (the variable maps stayed paired). */
static void test_copy_oom(void) {
  mlc_tir_subst fresh = {0, NULL, NULL, 0, NULL, NULL, 1};
  for (unsigned long long n = 1;; n++) {
    mlc_tir_module *m = new_module();
    if (!m) return;
    mlc_tir_func *f = hand_mm_relu(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    if (mlc_test_fail_alloc(n) < 0) {
      mlc_tir_module_destroy(m);
      return; /* the whole run is under MLC_FAIL_ALLOC */
    }
    mlc_tir_stmt *copy = mlc_tir_stmt_copy(m, f->body, &fresh);
    int fired = mlc_test_fail_alloc(0);
    if (copy) CU_ASSERT(copy->kind == MLC_TIR_ALLOCATE);
    mlc_tir_module_destroy(m);
    if (!fired) {
      CU_ASSERT_PTR_NOT_NULL(copy);
      break;
    }
  }
}

/* ---- printer: every node kind ----------------------------------------------------------- */

static mlc_tir_func *printer_func(mlc_tir_module *m) {
  mlc_tir_var *n = mlc_tir_var_new(m, "n", MLC_DTYPE_I64);
  mlc_tir_buffer *A = mlc_tir_buffer_new(m, "A", MLC_DTYPE_F16, 2, (mlc_tir_expr *[]){REF(n), I64(8)}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *M = mlc_tir_buffer_new_c(m, "M", MLC_DTYPE_BOOL, 1, (int64_t[]){8}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *O = mlc_tir_buffer_new(m, "O", MLC_DTYPE_F32, 2, (mlc_tir_expr *[]){REF(n), I64(8)}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *L = mlc_tir_buffer_new_c(m, "L", MLC_DTYPE_F32, 1, (int64_t[]){4}, MLC_TIR_SCOPE_LOCAL);
  mlc_tir_var *bx = mlc_tir_var_new(m, "bx", MLC_DTYPE_I64), *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64);
  mlc_tir_var *i_in = mlc_tir_var_new(m, "i", MLC_DTYPE_I64); /* shadows i: printed i_1 */
  mlc_tir_var *j = mlc_tir_var_new(m, "j", MLC_DTYPE_I64), *u = mlc_tir_var_new(m, "u", MLC_DTYPE_I64);
  mlc_tir_var *vi = mlc_tir_var_new(m, "vi", MLC_DTYPE_I64), *vj = mlc_tir_var_new(m, "vj", MLC_DTYPE_I64);
  mlc_tir_expr *a = mlc_tir_cast(m, MLC_DTYPE_F32, mlc_tir_load(m, A, IDX(REF(vi), REF(vj))));
  mlc_tir_expr *val = mlc_tir_select(m, mlc_tir_load(m, M, IDX(REF(vj))),
                                     mlc_tir_call(m, MLC_TIR_INTRIN_POW, 2, (mlc_tir_expr *[]){mlc_tir_call1(m, MLC_TIR_INTRIN_TANH, a), mlc_tir_float(m, MLC_DTYPE_F32, 2)}),
                                     mlc_tir_float(m, MLC_DTYPE_F32, INFINITY));
  mlc_tir_stmt *st = mlc_tir_store(m, O, IDX(REF(vi), REF(vj)), val);
  mlc_tir_iter_var its[2] = {{vi, MLC_TIR_ITER_SPATIAL, I64(0), REF(n), mlc_tir_add(m, mlc_tir_mul(m, REF(bx), I64(4)), REF(i_in))},
                             {vj, MLC_TIR_ITER_SPATIAL, I64(2), I64(6), REF(j)}};
  mlc_tir_stmt *blk = mlc_tir_block(m, "O", 2, its, NULL, st);
  mlc_tir_block_set_predicate(blk, mlc_tir_binary(m, MLC_TIR_LT, mlc_tir_add(m, mlc_tir_mul(m, REF(bx), I64(4)), REF(i_in)), REF(n)));
  mlc_tir_region rd[2] = {{A, 2, (mlc_tir_expr *[]){REF(vi), REF(vj)}, (mlc_tir_expr *[]){I64(1), I64(1)}},
                          {M, 1, (mlc_tir_expr *[]){I64(0)}, (mlc_tir_expr *[]){I64(8)}}};
  mlc_tir_region wr[1] = {{O, 2, (mlc_tir_expr *[]){REF(vi), REF(vj)}, (mlc_tir_expr *[]){I64(1), I64(1)}}};
  mlc_tir_block_set_regions(m, blk, 2, rd, 1, wr);
  mlc_tir_stmt *inner = mlc_tir_for(m, j, I64(2), I64(6), MLC_TIR_FOR_VECTORIZED, NULL, blk);
  inner = mlc_tir_for(m, i_in, I64(0), I64(4), MLC_TIR_FOR_SERIAL, NULL, inner);
  mlc_tir_stmt *unr = mlc_tir_for(m, u, I64(0), I64(4), MLC_TIR_FOR_UNROLLED, NULL,
                                  mlc_tir_store(m, L, IDX(REF(u)), mlc_tir_cast(m, MLC_DTYPE_F32, REF(u))));
  mlc_tir_stmt *cond = mlc_tir_if(m, mlc_tir_binary(m, MLC_TIR_EQ, mlc_tir_binary(m, MLC_TIR_FLOORMOD, REF(i), I64(2)), I64(0)),
                                  mlc_tir_evaluate(m, I64(0)),
                                  mlc_tir_store(m, L, IDX(I64(0)), mlc_tir_float(m, MLC_DTYPE_F32, 0.5)));
  mlc_tir_stmt *body = mlc_tir_seq(m, 3, (mlc_tir_stmt *[]){unr, cond, inner});
  body = mlc_tir_allocate(m, L, body);
  body = mlc_tir_for(m, i, I64(0), I64(1), MLC_TIR_FOR_PARALLEL, NULL, body);
  body = mlc_tir_for(m, bx, I64(0), mlc_tir_binary(m, MLC_TIR_FLOORDIV, mlc_tir_add(m, REF(n), I64(3)), I64(4)),
                     MLC_TIR_FOR_THREAD_BINDING, "blockIdx.x", body);
  mlc_tir_func *f = mlc_tir_func_new(m, "kinds", 3, (mlc_tir_buffer *[]){A, M, O}, body);
  if (!OK(mlc_tir_func_add_scalar(m, f, n, 0, 0)) || !OK(mlc_tir_func_set_attr_int(m, f, "tir.num_threads", 4)))
    return NULL;
  return f;
}

static void test_printer(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_func *f = printer_func(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT(OK(mlc_tir_verify_func(f)));
  char *t = print_func(f);
  golden("printer", t);
  free(t);
  /* a module of two functions, separated by a blank line */
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  CU_ASSERT(OK(mlc_tir_module_add(m, hand_mm_relu(m))));
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_module(m, &b);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_sb_str(&b), "\n\n@T.prim_func\ndef mm_relu("));
  mlc_sb_fini(&b);
  mlc_tir_module_destroy(m);
}

/* ---- verifier ----------------------------------------------------------------------------- */

/* assert: printed with its op, message and values, copied, verified */
static void test_assert(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", MLC_DTYPE_I64, 1, (int64_t[]){4}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64), *ghost = mlc_tir_var_new(m, "ghost", MLC_DTYPE_I64);
  mlc_tir_expr *v = mlc_tir_load(m, B, IDX(REF(i)));
  mlc_tir_expr *ok = mlc_tir_binary(m, MLC_TIR_LT, v, I64(4));
  mlc_tir_stmt *a = mlc_tir_assert(m, ok, "Gather", "index $0 out of range [$1, $2)", 3,
                                   (mlc_tir_expr *[]){v, I64(-4), I64(4)});
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NULL(mlc_tir_assert(m, ok, "Gather", "x", 4, (mlc_tir_expr *[]){v, v, v, v}));
  mlc_tir_buffer *params[1] = {B};
  mlc_tir_func *f = mlc_tir_func_new(m, "chk", 1, params,
                                     mlc_tir_for(m, i, I64(0), I64(4), MLC_TIR_FOR_PARALLEL, NULL, a));
  MLC_TEST_OK_FATAL(mlc_tir_verify_func(f));
  mlc_strbuf sb = MLC_STRBUF_INIT;
  mlc_tir_print_func(f, &sb);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_sb_str(&sb), "assert B[i] < "));
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_sb_str(&sb), ", (\"Gather\", \"index $0 out of range [$1, $2)\", B[i], "));
  mlc_sb_fini(&sb);
  /* a copy substitutes into the condition and the values */
  mlc_tir_stmt *c = mlc_tir_stmt_copy(m, a, &(mlc_tir_subst){1, &i, (mlc_tir_expr *[]){I64(2)}, 0, NULL, NULL, 0});
  CU_ASSERT(c && c->kind == MLC_TIR_ASSERT && c->assert_.nvals == 3 && strcmp(c->assert_.op, "Gather") == 0);
  if (c) {
    mlc_strbuf cs = MLC_STRBUF_INIT;
    mlc_tir_print_stmt(c, 0, &cs);
    CU_ASSERT_PTR_NOT_NULL(strstr(mlc_sb_str(&cs), "B[2], "));
    mlc_sb_fini(&cs);
  }
  /* an int condition, a float value and an undefined variable */
  mlc_tir_stmt *bad = mlc_tir_assert(m, v, "Gather", "index $0", 2,
                                     (mlc_tir_expr *[]){mlc_tir_float(m, MLC_DTYPE_F32, 1), REF(ghost)});
  f = mlc_tir_func_new(m, "badchk", 1, params, mlc_tir_for(m, i, I64(0), I64(4), MLC_TIR_FOR_SERIAL, NULL, bad));
  EXPECT_ERR(mlc_tir_verify_func(f), "prim func \"badchk\"", "condition has dtype int64, not bool",
             "reported value is not an integer", "variable ghost is used before its definition");
  mlc_tir_module_destroy(m);
}

static void test_verify(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, (int64_t[]){4, 4}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *Y = mlc_tir_buffer_new_c(m, "Y", MLC_DTYPE_F32, 1, (int64_t[]){4}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64), *k = mlc_tir_var_new(m, "k", MLC_DTYPE_I64);
  mlc_tir_var *vi = mlc_tir_var_new(m, "vi", MLC_DTYPE_I64), *vk = mlc_tir_var_new(m, "vk", MLC_DTYPE_I64);
  mlc_tir_var *ghost = mlc_tir_var_new(m, "ghost", MLC_DTYPE_I64);
  mlc_tir_buffer *params[2] = {A, Y};
  mlc_tir_func *f;

  /* undefined variable */
  f = mlc_tir_func_new(m, "undef", 2, params,
                       mlc_tir_for(m, i, I64(0), I64(4), MLC_TIR_FOR_SERIAL, NULL,
                                   mlc_tir_store(m, Y, IDX(REF(ghost)), mlc_tir_float(m, MLC_DTYPE_F32, 1))));
  EXPECT_ERR(mlc_tir_verify_func(f), "prim func \"undef\"", "Y[ghost] = T.float32(1)",
             "variable ghost is used before its definition");

  /* wrong index count */
  f = mlc_tir_func_new(m, "rank", 2, params,
                       mlc_tir_for(m, i, I64(0), I64(4), MLC_TIR_FOR_SERIAL, NULL,
                                   mlc_tir_store(m, Y, IDX(REF(i)), mlc_tir_load(m, A, IDX(REF(i))))));
  EXPECT_ERR(mlc_tir_verify_func(f), "prim func \"rank\"", "A[i]", "1 indices for buffer A of rank 2");

  /* a reduce iter var indexes the written buffer */
  mlc_tir_iter_var its[2] = {{vi, MLC_TIR_ITER_SPATIAL, I64(0), I64(4), REF(i)},
                             {vk, MLC_TIR_ITER_REDUCE, I64(0), I64(4), REF(k)}};
  mlc_tir_stmt *bad = mlc_tir_block(m, "Y", 2, its, mlc_tir_store(m, Y, IDX(REF(vi)), mlc_tir_float(m, MLC_DTYPE_F32, 0)),
                                    mlc_tir_store(m, Y, IDX(REF(vk)), mlc_tir_load(m, A, IDX(REF(vi), REF(vk)))));
  bad = mlc_tir_for(m, k, I64(0), I64(4), MLC_TIR_FOR_SERIAL, NULL, bad);
  bad = mlc_tir_for(m, i, I64(0), I64(4), MLC_TIR_FOR_SERIAL, NULL, bad);
  f = mlc_tir_func_new(m, "redwrite", 2, params, bad);
  EXPECT_ERR(mlc_tir_verify_func(f), "prim func \"redwrite\": block \"Y\"",
             "reduce iter var vk indexes the written buffer Y");

  /* init in a block without reduce iter vars; parallel inside parallel;
  ** dtype mismatches -- all reported at once */
  mlc_tir_stmt *b2 = mlc_tir_block(m, "S", 1, its, mlc_tir_store(m, Y, IDX(REF(vi)), mlc_tir_float(m, MLC_DTYPE_F32, 0)),
                                   mlc_tir_store(m, Y, IDX(REF(vi)), mlc_tir_float(m, MLC_DTYPE_F64, 1)));
  mlc_tir_expr *mixed = mlc_tir_add(m, mlc_tir_load(m, A, IDX(REF(i), REF(k))), mlc_tir_float(m, MLC_DTYPE_F64, 1));
  mlc_tir_stmt *st = mlc_tir_store(m, Y, IDX(REF(i)), mixed);
  mlc_tir_stmt *par = mlc_tir_for(m, k, I64(0), I64(4), MLC_TIR_FOR_PARALLEL, NULL, mlc_tir_seq2(m, b2, st));
  par = mlc_tir_for(m, i, I64(0), I64(4), MLC_TIR_FOR_PARALLEL, NULL, par);
  f = mlc_tir_func_new(m, "many", 2, params, par);
  mlc_status s = mlc_tir_verify_func(f);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  const char *msg = mlc_status_message(s);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "T.init() in a block without reduce iter vars"));
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "parallel loop nested in a parallel loop"));
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "stores float64 into a float32 buffer"));
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "operands of + have dtypes float32 and float64"));
  int lines = 1;
  for (const char *p = msg; *p; p++) lines += *p == '\n';
  CU_ASSERT(lines >= 4);
  CU_ASSERT_EQUAL(mlc_status_code(s), MLC_INVALID_ARGUMENT);
  mlc_status_free(s);

  /* more rules: bool conditions, int loop bounds, unknown buffers, te
  ** reductions, scalar bindings, loop variables defined twice */
  mlc_tir_buffer *T = mlc_tir_buffer_new_c(m, "T", MLC_DTYPE_F32, 1, (int64_t[]){4}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_stmt *s1 = mlc_tir_if(m, I64(1), mlc_tir_store(m, T, IDX(I64(0)), mlc_tir_float(m, MLC_DTYPE_F32, 0)), NULL);
  mlc_tir_stmt *s2 = mlc_tir_for(m, i, I64(0), mlc_tir_float(m, MLC_DTYPE_F32, 4), MLC_TIR_FOR_SERIAL, NULL,
                                 mlc_tir_for(m, i, I64(0), I64(2), MLC_TIR_FOR_SERIAL, NULL, mlc_tir_evaluate(m, I64(0))));
  mlc_tir_iter_var ax = {k, MLC_TIR_ITER_REDUCE, I64(0), I64(4), NULL};
  mlc_tir_stmt *s3 = mlc_tir_store(m, Y, IDX(I64(0)), mlc_tir_reduce(m, MLC_TIR_REDUCE_SUM, mlc_tir_float(m, MLC_DTYPE_F32, 1), 1, &ax));
  f = mlc_tir_func_new(m, "rules", 2, params, mlc_tir_seq(m, 3, (mlc_tir_stmt *[]){s1, s2, s3}));
  EXPECT_ERR(mlc_tir_verify_func(f), "condition has dtype int64, not bool",
             "buffer T is neither a parameter nor allocated here", "loop extent is not an integer",
             "variable i is defined again while in scope", "a te reduction is left in a prim func");
  EXPECT_ERR(mlc_tir_func_add_scalar(m, f, ghost, 1, 3), "shape[3] of param 1, which does not exist");

  /* a well-formed function passes; a NULL function is reported */
  f = mlc_tir_func_new(m, "good", 2, params,
                       mlc_tir_for(m, i, I64(0), I64(4), MLC_TIR_FOR_SERIAL, NULL,
                                   mlc_tir_store(m, Y, IDX(REF(i)), mlc_tir_load(m, A, IDX(REF(i), I64(0))))));
  CU_ASSERT(OK(mlc_tir_verify_func(f)));
  EXPECT_ERR(mlc_tir_verify_func(NULL), "prim func missing");
  mlc_tir_module_destroy(m);
}

/* Structural equality: built twice, the same tree; any one difference, not. */
static void test_expr_equal(void) {
  mlc_tir_module *m = new_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const int64_t d[1] = {8};
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 1, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 1, d, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64), *j = mlc_tir_var_new(m, "i", MLC_DTYPE_I64);
#define LD(buf, v) mlc_tir_load(m, (buf), IDX(mlc_tir_add(m, REF(v), I64(1))))
#define F(x) mlc_tir_float(m, MLC_DTYPE_F32, (x))
  mlc_tir_expr *a = mlc_tir_mul(m, LD(A, i), F(2)), *b = mlc_tir_mul(m, LD(A, i), F(2));
  CU_ASSERT(mlc_tir_expr_equal(a, b));
  CU_ASSERT(!mlc_tir_expr_equal(a, mlc_tir_add(m, LD(A, i), F(2))));  /* operator */
  CU_ASSERT(!mlc_tir_expr_equal(a, mlc_tir_mul(m, LD(B, i), F(2))));  /* buffer of the same name */
  CU_ASSERT(!mlc_tir_expr_equal(a, mlc_tir_mul(m, LD(A, j), F(2))));  /* variable of the same name */
  CU_ASSERT(!mlc_tir_expr_equal(a, mlc_tir_mul(m, LD(A, i), F(3))));  /* constant */
  CU_ASSERT(!mlc_tir_expr_equal(F(0), F(-0.0)));                      /* floats bit for bit */
  CU_ASSERT(!mlc_tir_expr_equal(I64(1), mlc_tir_int(m, MLC_DTYPE_I32, 1))); /* dtype */
  CU_ASSERT(!mlc_tir_expr_equal(mlc_tir_broadcast(m, F(1), 4), mlc_tir_broadcast(m, F(1), 8))); /* lanes */
  CU_ASSERT(mlc_tir_expr_equal(mlc_tir_ramp(m, REF(i), I64(1), 4), mlc_tir_ramp(m, REF(i), I64(1), 4)));
  CU_ASSERT(!mlc_tir_expr_equal(a, NULL));
  CU_ASSERT(mlc_tir_expr_equal(NULL, NULL));
#undef LD
#undef F
  mlc_tir_module_destroy(m);
}

static void register_tests(void) {
  static const CU_TestInfo tests[] = {
      {"folding", test_folding},   {"mm_relu", test_mm_relu}, {"te_symbolic", test_te_symbolic},
      {"te_errors", test_te_errors}, {"copy", test_copy},
      {"copy_oom", test_copy_oom}, {"printer", test_printer},
      {"verify", test_verify},     {"expr_equal", test_expr_equal},     {"assert", test_assert},   {NULL, NULL}};
  mlc_test_add_suite("tir", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_tir", fns);
}
