/*
** test_visit.c: the generic TIR visitor and mutator (lower/tir_visit.c):
** the order in which nodes are visited, skipping and stopping, buffer and
** region callbacks; a mutator that rebuilds only what changed (sharing the
** rest, folding what it rebuilds, keeping origins and regions), callbacks
** that replace nodes, and failures (a callback's, and out-of-memory).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/tir.h"
#include "lower/tir_visit.h"
#include "tests/testutil.h"

#define OK(expr) MLC_TEST_OK(expr)

/* The test tree, over A[8, 16] and Y[8]:
**
**   for i in range(8):            (origin "n1")
**     with T.block("B"):  vi = T.axis.spatial(8, i)
**       Y[vi] = A[vi, (vi * 16 + 3) // 16] + T.float32(1)
**     if i < 4: T.evaluate(i)
*/
typedef struct tree {
  mlc_tir_module *m;
  mlc_tir_var *i, *vi;
  mlc_tir_buffer *A, *Y;
  mlc_tir_expr *idx1, *value, *cond;
  mlc_tir_stmt *store, *block, *iff, *loop;
} tree;

static void build(tree *t) {
  memset(t, 0, sizeof *t);
  CU_ASSERT_FATAL(OK(mlc_tir_module_create(mlc_allocator_default(), &t->m)));
  mlc_tir_module *m = t->m;
  t->i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64);
  t->vi = mlc_tir_var_new(m, "vi", MLC_DTYPE_I64);
  t->A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, (int64_t[]){8, 16}, MLC_TIR_SCOPE_GLOBAL);
  t->Y = mlc_tir_buffer_new_c(m, "Y", MLC_DTYPE_F32, 1, (int64_t[]){8}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_expr *VI = mlc_tir_ref(m, t->vi);
  t->idx1 = mlc_tir_binary(m, MLC_TIR_FLOORDIV, mlc_tir_add(m, mlc_tir_mul(m, VI, mlc_tir_i64(m, 16)), mlc_tir_i64(m, 3)),
                           mlc_tir_i64(m, 16));
  mlc_tir_expr *ai[2] = {VI, t->idx1};
  t->value = mlc_tir_add(m, mlc_tir_load(m, t->A, 2, ai), mlc_tir_float(m, MLC_DTYPE_F32, 1));
  t->store = mlc_tir_store(m, t->Y, 1, &VI, t->value);
  mlc_tir_iter_var it = {t->vi, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), mlc_tir_i64(m, 8), mlc_tir_ref(m, t->i)};
  t->block = mlc_tir_block(m, "B", 1, &it, NULL, t->store);
  t->cond = mlc_tir_binary(m, MLC_TIR_LT, mlc_tir_ref(m, t->i), mlc_tir_i64(m, 4));
  t->iff = mlc_tir_if(m, t->cond, mlc_tir_evaluate(m, mlc_tir_ref(m, t->i)), NULL);
  t->loop = mlc_tir_for(m, t->i, mlc_tir_i64(m, 0), mlc_tir_i64(m, 8), MLC_TIR_FOR_SERIAL, NULL,
                        mlc_tir_seq2(m, t->block, t->iff));
  CU_ASSERT_FATAL(t->loop != NULL);
  t->loop->origin = "n1";
}

/* ---- visitor ------------------------------------------------------------------ */

typedef struct trace {
  char buf[1024];
  int skip_kind;  /* a statement kind whose children are skipped, or -1 */
  int stop_load;  /* stop at the first load */
  int nbufs;
} trace;

static void put(trace *t, const char *s) {
  size_t n = strlen(t->buf);
  snprintf(t->buf + n, sizeof t->buf - n, "%s%s", n ? " " : "", s);
}

static const char *ekind(const mlc_tir_expr *e) {
  switch (e->kind) {
    case MLC_TIR_INT_IMM: return "int";
    case MLC_TIR_FLOAT_IMM: return "float";
    case MLC_TIR_VAR_REF: return e->var->name;
    case MLC_TIR_BINARY: return mlc_tir_binop_name(e->bin.op);
    case MLC_TIR_NOT: return "not";
    case MLC_TIR_SELECT: return "select";
    case MLC_TIR_CAST: return "cast";
    case MLC_TIR_LOAD: return "load";
    case MLC_TIR_CALL: return "call";
    case MLC_TIR_REDUCE: return "reduce";
    case MLC_TIR_RAMP: return "ramp";
    case MLC_TIR_BROADCAST: return "broadcast";
  }
  return "?";
}

static const char *skind(const mlc_tir_stmt *s) {
  static const char *const names[] = {"for", "seq", "store", "if", "alloc", "eval", "block", "assert"};
  return names[s->kind];
}

static int t_pre_expr(void *ctx, const mlc_tir_expr *e) {
  trace *t = ctx;
  put(t, ekind(e));
  return (t->stop_load && e->kind == MLC_TIR_LOAD) ? MLC_TIR_VISIT_STOP : MLC_TIR_VISIT_CONTINUE;
}

static int t_pre_stmt(void *ctx, const mlc_tir_stmt *s) {
  trace *t = ctx;
  put(t, skind(s));
  put(t, "{");
  return (int)s->kind == t->skip_kind ? MLC_TIR_VISIT_SKIP : MLC_TIR_VISIT_CONTINUE;
}

static int t_post_stmt(void *ctx, const mlc_tir_stmt *s) {
  (void)s;
  put(ctx, "}");
  return MLC_TIR_VISIT_CONTINUE;
}

static int t_buffer(void *ctx, const mlc_tir_buffer *b) {
  trace *t = ctx;
  t->nbufs++;
  put(t, b->name);
  return MLC_TIR_VISIT_CONTINUE;
}

static void test_visit_order(void) {
  tree T;
  build(&T);
  trace t = {"", -1, 0, 0};
  mlc_tir_visitor v = {&t, t_pre_expr, NULL, t_pre_stmt, t_post_stmt, t_buffer, 0};
  CU_ASSERT_EQUAL(mlc_tir_visit_stmt(&v, T.loop), 0);
  const char *want =
      "for { int int seq { block { int int i store { Y vi + load A vi // + * vi int int int float } } "
      "if { < i int eval { i } } } }";
  if (strcmp(t.buf, want) != 0) printf("\n  got  %s\n  want %s\n", t.buf, want);
  CU_ASSERT_STRING_EQUAL(t.buf, want);
  CU_ASSERT_EQUAL(t.nbufs, 2);

  /* skipping a block's children; post is still called */
  trace s = {"", MLC_TIR_BLOCK, 0, 0};
  v.ctx = &s;
  CU_ASSERT_EQUAL(mlc_tir_visit_stmt(&v, T.loop), 0);
  CU_ASSERT_STRING_EQUAL(s.buf, "for { int int seq { block { } if { < i int eval { i } } } }");

  /* stopping at the first load ends the walk at once */
  trace st = {"", -1, 1, 0};
  v.ctx = &st;
  CU_ASSERT_EQUAL(mlc_tir_visit_stmt(&v, T.loop), 1);
  CU_ASSERT_STRING_EQUAL(st.buf, "for { int int seq { block { int int i store { Y vi + load");
  /* an expression alone; NULL is nothing */
  trace e = {"", -1, 0, 0};
  v.ctx = &e;
  CU_ASSERT_EQUAL(mlc_tir_visit_expr(&v, T.cond), 0);
  CU_ASSERT_STRING_EQUAL(e.buf, "< i int");
  CU_ASSERT_EQUAL(mlc_tir_visit_expr(&v, NULL), 0);
  CU_ASSERT_EQUAL(mlc_tir_visit_stmt(&v, NULL), 0);

  /* regions are visited only when asked */
  mlc_tir_expr *mn = mlc_tir_ref(T.m, T.vi), *ext = mlc_tir_i64(T.m, 1);
  mlc_tir_region r = {T.Y, 1, &mn, &ext};
  CU_ASSERT_PTR_NOT_NULL(mlc_tir_block_set_regions(T.m, T.block, 0, NULL, 1, &r));
  mlc_tir_visitor only = {0};
  trace g = {"", -1, 0, 0};
  only.ctx = &g;
  only.pre_expr = t_pre_expr;
  mlc_tir_visit_stmt(&only, T.block);
  CU_ASSERT_STRING_EQUAL(g.buf, "int int i vi + load vi // + * vi int int int float");
  trace h = {"", -1, 0, 0};
  only.ctx = &h;
  only.regions = 1;
  mlc_tir_visit_stmt(&only, T.block);
  CU_ASSERT_STRING_EQUAL(h.buf, "int int i vi int vi + load vi // + * vi int int int float");
  mlc_tir_module_destroy(T.m);
}

/* ---- mutator ------------------------------------------------------------------ */

typedef struct subst {
  const mlc_tir_var *var;
  int64_t value;
  int calls, fail_at;
} subst;

/* Replaces |var| by a constant. */
static mlc_tir_expr *sub_pre(mlc_tir_mutator *mu, const mlc_tir_expr *e) {
  subst *s = mu->ctx;
  s->calls++;
  if (s->fail_at && s->calls == s->fail_at) {
    mu->failed = 1;
    return NULL;
  }
  if (e->kind == MLC_TIR_VAR_REF && e->var == s->var) return mlc_tir_i64(mu->m, s->value);
  return NULL;
}

static void test_mutate(void) {
  tree T;
  build(&T);
  mlc_tir_module *m = T.m;
  /* nothing to change: the same tree comes back */
  mlc_tir_mutator id = {m, NULL, NULL, NULL, NULL, NULL, 0};
  CU_ASSERT_PTR_EQUAL(mlc_tir_mutate_stmt(&id, T.loop), T.loop);
  CU_ASSERT_PTR_EQUAL(mlc_tir_mutate_expr(&id, T.value), T.value);

  /* vi -> 5: the block is rebuilt and folded, its regions too; the if
  ** (no vi) is shared */
  mlc_tir_expr *mn = mlc_tir_ref(m, T.vi), *ext = mlc_tir_i64(m, 1);
  mlc_tir_region reg = {T.Y, 1, &mn, &ext};
  CU_ASSERT_PTR_NOT_NULL(mlc_tir_block_set_regions(m, T.block, 0, NULL, 1, &reg));
  subst s = {T.vi, 5, 0, 0};
  mlc_tir_mutator mu = {m, &s, sub_pre, NULL, NULL, NULL, 0};
  mlc_tir_stmt *r = mlc_tir_mutate_stmt(&mu, T.loop);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_PTR_NOT_EQUAL(r, T.loop);
  CU_ASSERT_STRING_EQUAL(r->origin, "n1");
  CU_ASSERT_EQUAL_FATAL(r->loop.body->kind, MLC_TIR_SEQ);
  CU_ASSERT_PTR_EQUAL(r->loop.body->seq.stmts[1], T.iff);
  mlc_tir_stmt *nb = r->loop.body->seq.stmts[0];
  CU_ASSERT_PTR_NOT_EQUAL(nb, T.block);
  CU_ASSERT_EQUAL_FATAL(nb->block.nwrites, 1);
  CU_ASSERT(mlc_tir_is_const(nb->block.writes[0].min[0], 5));
  CU_ASSERT_EQUAL(T.block->block.writes[0].min[0]->kind, MLC_TIR_VAR_REF);
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_stmt(r, 0, &b);
  const char *want = "for i in range(8):\n"
                     "    with T.block(\"B\"):\n"
                     "        vi = T.axis.spatial(8, i)\n"
                     "        T.reads()\n"
                     "        T.writes(Y[5])\n"
                     "        Y[5] = A[5, 5] + T.float32(1)\n"
                     "    if i < 4:\n"
                     "        T.evaluate(i)\n";
  if (strcmp(mlc_sb_str(&b), want) != 0) printf("\n%s", mlc_sb_str(&b));
  CU_ASSERT_STRING_EQUAL(mlc_sb_str(&b), want);
  mlc_sb_fini(&b);
  /* the input is unchanged */
  CU_ASSERT_EQUAL(T.store->store.indices[0]->kind, MLC_TIR_VAR_REF);

  /* a callback failure ends the walk with NULL */
  for (int k = 1; k < 12; k++) {
    subst f = {T.vi, 5, 0, k};
    mlc_tir_mutator fm = {m, &f, sub_pre, NULL, NULL, NULL, 0};
    CU_ASSERT_PTR_NULL(mlc_tir_mutate_stmt(&fm, T.loop));
    CU_ASSERT(fm.failed);
  }
  mlc_tir_module_destroy(T.m);
}

/* post callbacks see the rebuilt node and may replace it. */
static mlc_tir_stmt *drop_evaluate(mlc_tir_mutator *mu, const mlc_tir_stmt *orig, mlc_tir_stmt *rebuilt) {
  (void)orig;
  if (rebuilt->kind == MLC_TIR_IF) return mlc_tir_seq(mu->m, 0, NULL);
  return rebuilt;
}

static mlc_tir_expr *double_consts(mlc_tir_mutator *mu, const mlc_tir_expr *orig, mlc_tir_expr *rebuilt) {
  int *n = mu->ctx;
  if (orig->kind == MLC_TIR_INT_IMM && orig->dtype == MLC_DTYPE_I64) {
    (*n)++;
    return mlc_tir_i64(mu->m, orig->int_value * 2);
  }
  return rebuilt;
}

static void test_mutate_post(void) {
  tree T;
  build(&T);
  int n = 0;
  mlc_tir_mutator mu = {T.m, &n, NULL, double_consts, NULL, drop_evaluate, 0};
  mlc_tir_stmt *r = mlc_tir_mutate_stmt(&mu, T.loop);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_stmt(r, 0, &b);
  const char *want = "for i in range(16):\n"
                     "    with T.block(\"B\"):\n"
                     "        vi = T.axis.spatial(16, i)\n"
                     "        Y[vi] = A[vi, (vi * 32 + 6) // 32] + T.float32(1)\n";
  if (strcmp(mlc_sb_str(&b), want) != 0) printf("\n%s", mlc_sb_str(&b));
  CU_ASSERT_STRING_EQUAL(mlc_sb_str(&b), want);
  mlc_sb_fini(&b);
  CU_ASSERT(n >= 8);
  mlc_tir_module_destroy(T.m);
}

/* Out of memory while rebuilding: NULL and the failed flag, never a crash. */
static void test_mutate_oom(void) {
  for (unsigned long long k = 1; k < 200; k++) {
    tree T;
    build(&T);
    subst s = {T.vi, 5, 0, 0};
    mlc_tir_mutator mu = {T.m, &s, sub_pre, NULL, NULL, NULL, 0};
    if (mlc_test_fail_alloc(k) < 0) {
      mlc_tir_module_destroy(T.m);
      return;
    }
    mlc_tir_stmt *r = mlc_tir_mutate_stmt(&mu, T.loop);
    int hit = mlc_test_fail_alloc(0);
    if (hit) {
      CU_ASSERT(r == NULL && mu.failed);
    } else {
      CU_ASSERT(r != NULL && !mu.failed);
    }
    mlc_tir_module_destroy(T.m);
    if (!hit) break;
  }
}


/* Every node kind: a substitution through the mutator prints the same as
** the deep copy with substitution (mlc_tir_stmt_copy), and the identity
** mutator returns the input. */
static void test_mutate_all_kinds(void) {
  tree T;
  build(&T);
  mlc_tir_module *m = T.m;
  mlc_tir_expr *I = mlc_tir_ref(m, T.i);
  mlc_tir_var *k = mlc_tir_var_new(m, "k", MLC_DTYPE_I64);
  mlc_tir_iter_var ax = {k, MLC_TIR_ITER_REDUCE, mlc_tir_i64(m, 0), mlc_tir_add(m, I, mlc_tir_i64(m, 1)), NULL};
  mlc_tir_expr *f = mlc_tir_cast(m, MLC_DTYPE_F32, I);
  mlc_tir_expr *e = mlc_tir_select(m, mlc_tir_not(m, mlc_tir_binary(m, MLC_TIR_EQ, I, mlc_tir_i64(m, 3))),
                                   mlc_tir_call1(m, MLC_TIR_INTRIN_EXP, f),
                                   mlc_tir_reduce(m, MLC_TIR_REDUCE_SUM, mlc_tir_cast(m, MLC_DTYPE_F32, mlc_tir_ref(m, k)), 1, &ax));
  mlc_tir_buffer *L = mlc_tir_buffer_new_c(m, "L", MLC_DTYPE_F32, 1, (int64_t[]){4}, MLC_TIR_SCOPE_LOCAL);
  mlc_tir_expr *zero = mlc_tir_i64(m, 0);
  mlc_tir_stmt *st[3] = {
      mlc_tir_assert(m, mlc_tir_binary(m, MLC_TIR_LT, I, mlc_tir_i64(m, 9)), "Op", "bad $0", 1, &I),
      mlc_tir_allocate(m, L, mlc_tir_store(m, L, 1, &zero, e)),
      mlc_tir_if(m, mlc_tir_binary(m, MLC_TIR_GT, I, zero), mlc_tir_evaluate(m, I), mlc_tir_evaluate(m, mlc_tir_i64(m, 7)))};
  mlc_tir_stmt *body = mlc_tir_seq(m, 3, st);
  CU_ASSERT_PTR_NOT_NULL_FATAL(body);
  mlc_tir_mutator id = {m, NULL, NULL, NULL, NULL, NULL, 0};
  CU_ASSERT_PTR_EQUAL(mlc_tir_mutate_stmt(&id, body), body);
  for (int64_t v = 0; v < 5; v++) {
    subst s = {T.i, v, 0, 0};
    mlc_tir_mutator mu = {m, &s, sub_pre, NULL, NULL, NULL, 0};
    mlc_tir_stmt *a = mlc_tir_mutate_stmt(&mu, body);
    mlc_tir_expr *val = mlc_tir_i64(m, v);
    mlc_tir_subst sub = {1, &T.i, &val, 0, NULL, NULL, 0};
    mlc_tir_stmt *c = mlc_tir_stmt_copy(m, body, &sub);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    mlc_strbuf x = MLC_STRBUF_INIT, y = MLC_STRBUF_INIT;
    mlc_tir_print_stmt(a, 0, &x);
    mlc_tir_print_stmt(c, 0, &y);
    if (strcmp(mlc_sb_str(&x), mlc_sb_str(&y)) != 0) printf("\n%s---\n%s", mlc_sb_str(&x), mlc_sb_str(&y));
    CU_ASSERT_STRING_EQUAL(mlc_sb_str(&x), mlc_sb_str(&y));
    CU_ASSERT(strstr(mlc_sb_str(&x), " i ") == NULL);
    mlc_sb_fini(&x);
    mlc_sb_fini(&y);
  }
  mlc_tir_module_destroy(m);
}

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"order", test_visit_order},
                                      {"mutate", test_mutate},
                                      {"mutate_post", test_mutate_post},
                                      {"mutate_all_kinds", test_mutate_all_kinds},
                                      {"mutate_oom", test_mutate_oom},
                                      {NULL, NULL}};
  mlc_test_add_suite("visit", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_visit", fns);
}
