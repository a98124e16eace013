/*
** test_arith.c: the integer analyzer (lower/arith.c): table-driven
** simplifications (expression in, printed form out), bounds, proofs, integer
** sets, iterator maps and their refusals, a randomized check that
** simplification keeps the value of random affine / div / mod expressions
** at random points of their domains, and block access regions
** (lower/region.c) of hand-built and te-built blocks.
**
** Expressions are written in a small infix language parsed here into
** builder calls: integers, variables (a table below), + - * // %, < <= >
** >= == !=, `and`, `or`, min(a, b), max(a, b), select(c, a, b),
** tdiv(a, b), tmod(a, b), parentheses.
*/
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "lower/arith.h"
#include "lower/lower.h"
#include "lower/te.h"
#include "lower/tir.h"
#include "tests/testutil.h"

#define OK(expr) MLC_TEST_OK(expr)
#define EXPECT_ERR(expr, ...) MLC_TEST_ERR((expr), MLC_INVALID_ARGUMENT, __VA_ARGS__)

/* ---- a tiny expression language ------------------------------------------------ */

#define NVARS 8
typedef struct env {
  mlc_tir_module *m;
  mlc_arith *an;
  mlc_tir_var *vars[NVARS];
  const char *names[NVARS];
  int64_t lo[NVARS], ext[NVARS]; /* domains; ext 0: unbound */
} env;

/* i [0,8)  j [0,16)  k [0,4)  f [0,64)  x [0,1024)  y, n unbound  p [2,6) */
static const char *const var_names[NVARS] = {"i", "j", "k", "f", "x", "y", "n", "p"};
static const int64_t var_lo[NVARS] = {0, 0, 0, 0, 0, 0, 0, 2};
static const int64_t var_ext[NVARS] = {8, 16, 4, 64, 1024, 0, 0, 4};

static env *env_new(void) {
  env *E = calloc(1, sizeof *E);
  CU_ASSERT_FATAL(E != NULL);
  mlc_test_hold(E);
  CU_ASSERT_FATAL(OK(mlc_tir_module_create(mlc_allocator_default(), &E->m)));
  mlc_test_hold(E->m);
  CU_ASSERT_FATAL(OK(mlc_arith_create(mlc_allocator_default(), &E->an)));
  mlc_test_hold(E->an);
  for (int v = 0; v < NVARS; v++) {
    E->vars[v] = mlc_tir_var_new(E->m, var_names[v], MLC_DTYPE_I64);
    E->names[v] = var_names[v];
    E->lo[v] = var_lo[v];
    E->ext[v] = var_ext[v];
    if (var_ext[v]) CU_ASSERT(OK(mlc_arith_bind_c(E->an, E->vars[v], var_lo[v], var_ext[v])));
  }
  return E;
}

/* Frees |E| (held while alive, so that a failed fatal assertion leaks
** nothing the fault runs report). */
static void env_free(env *E) {
  mlc_arith_destroy(E->an);
  mlc_tir_module_destroy(E->m);
  free(E);
}

typedef struct parser {
  env *E;
  const char *p;
} parser;

static mlc_tir_expr *p_or(parser *P);

static void skip(parser *P) {
  while (isspace((unsigned char)*P->p)) P->p++;
}

static int accept(parser *P, const char *tok) {
  skip(P);
  size_t n = strlen(tok);
  if (strncmp(P->p, tok, n) != 0) return 0;
  if (isalpha((unsigned char)tok[0]) && isalnum((unsigned char)P->p[n])) return 0;
  if ((tok[0] == '<' || tok[0] == '>' || tok[0] == '=') && !tok[1] && P->p[1] == '=') return 0;
  if (tok[0] == '/' && !tok[1] && P->p[1] == '/') return 0;
  P->p += n;
  return 1;
}

static mlc_tir_expr *p_call(parser *P, const char *name) {
  mlc_tir_module *m = P->E->m;
  mlc_tir_expr *a[3] = {NULL, NULL, NULL};
  int n = strcmp(name, "select") == 0 ? 3 : 2;
  CU_ASSERT_FATAL(accept(P, "("));
  for (int i = 0; i < n; i++) {
    if (i) CU_ASSERT_FATAL(accept(P, ","));
    a[i] = p_or(P);
  }
  CU_ASSERT_FATAL(accept(P, ")"));
  if (strcmp(name, "min") == 0) return mlc_tir_min(m, a[0], a[1]);
  if (strcmp(name, "max") == 0) return mlc_tir_max(m, a[0], a[1]);
  if (strcmp(name, "tdiv") == 0) return mlc_tir_binary(m, MLC_TIR_TRUNCDIV, a[0], a[1]);
  if (strcmp(name, "tmod") == 0) return mlc_tir_binary(m, MLC_TIR_TRUNCMOD, a[0], a[1]);
  return mlc_tir_select(m, a[0], a[1], a[2]);
}

static mlc_tir_expr *p_atom(parser *P) {
  skip(P);
  mlc_tir_module *m = P->E->m;
  if (accept(P, "(")) {
    mlc_tir_expr *e = p_or(P);
    CU_ASSERT_FATAL(accept(P, ")"));
    return e;
  }
  if (isdigit((unsigned char)*P->p)) {
    char *end;
    long long v = strtoll(P->p, &end, 10);
    P->p = end;
    return mlc_tir_i64(m, v);
  }
  char name[16];
  int n = 0;
  while (isalpha((unsigned char)*P->p) && n < 15) name[n++] = *P->p++;
  name[n] = 0;
  CU_ASSERT_FATAL(n > 0);
  if (!strcmp(name, "min") || !strcmp(name, "max") || !strcmp(name, "select") || !strcmp(name, "tdiv") ||
      !strcmp(name, "tmod"))
    return p_call(P, name);
  for (int v = 0; v < NVARS; v++)
    if (strcmp(name, P->E->names[v]) == 0) return mlc_tir_ref(m, P->E->vars[v]);
  CU_FAIL_FATAL("unknown name in a test expression");
  return NULL;
}

static mlc_tir_expr *p_mul(parser *P) {
  mlc_tir_expr *e = p_atom(P);
  for (;;) {
    if (accept(P, "*")) e = mlc_tir_mul(P->E->m, e, p_atom(P));
    else if (accept(P, "//")) e = mlc_tir_binary(P->E->m, MLC_TIR_FLOORDIV, e, p_atom(P));
    else if (accept(P, "%")) e = mlc_tir_binary(P->E->m, MLC_TIR_FLOORMOD, e, p_atom(P));
    else return e;
  }
}

static mlc_tir_expr *p_add(parser *P) {
  mlc_tir_expr *e = p_mul(P);
  for (;;) {
    if (accept(P, "+")) e = mlc_tir_add(P->E->m, e, p_mul(P));
    else if (accept(P, "-")) e = mlc_tir_sub(P->E->m, e, p_mul(P));
    else return e;
  }
}

static mlc_tir_expr *p_cmp(parser *P) {
  static const struct { const char *tok; mlc_tir_binop op; } ops[] = {
      {"<=", MLC_TIR_LE}, {">=", MLC_TIR_GE}, {"==", MLC_TIR_EQ}, {"!=", MLC_TIR_NE},
      {"<", MLC_TIR_LT},  {">", MLC_TIR_GT}};
  mlc_tir_expr *e = p_add(P);
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (accept(P, ops[i].tok)) return mlc_tir_binary(P->E->m, ops[i].op, e, p_add(P));
  return e;
}

static mlc_tir_expr *p_or(parser *P) {
  mlc_tir_expr *e = p_cmp(P);
  for (;;) {
    if (accept(P, "and")) e = mlc_tir_binary(P->E->m, MLC_TIR_AND, e, p_cmp(P));
    else if (accept(P, "or")) e = mlc_tir_binary(P->E->m, MLC_TIR_OR, e, p_cmp(P));
    else return e;
  }
}

static mlc_tir_expr *parse(env *E, const char *text) {
  parser P = {E, text};
  mlc_tir_expr *e = p_or(&P);
  skip(&P);
  CU_ASSERT_FATAL(*P.p == 0);
  CU_ASSERT_FATAL(e != NULL);
  return e;
}

/* The printed form of |e|, valid until 16 more calls (a ring owns them). */
static char *print_expr(const mlc_tir_expr *e) {
  static char *ring[16];
  static unsigned next;
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_expr(e, &b);
  char **slot = &ring[next++ % 16];
  free(*slot);
  *slot = strdup(mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return *slot ? *slot : "<oom>";
}

/* Compares the printed form of |e| with |want|. */
static int expect_str(const mlc_tir_expr *e, const char *want, const char *what) {
  const char *got = print_expr(e);
  if (strcmp(got, want) != 0) {
    printf("\n  %s: got %s, want %s\n", what, got, want);
    return 0;
  }
  return 1;
}

/* ---- simplification table --------------------------------------------------------- */

static const struct {
  const char *in, *out;
} simplify_cases[] = {
    /* the split / fuse patterns */
    {"(i*16 + j) // 16", "i"},
    {"(i*16 + j) % 16", "j"},
    {"(j + i*16) // 16", "i"},
    {"f // 4 * 4 + f % 4", "f"},
    {"f % 4 + f // 4 * 4", "f"},
    {"x // 4 // 8", "x // 32"},
    {"x % 16 // 4", "x % 16 // 4"},
    {"x % 32 // 4 * 4 + x % 4", "x % 32"},
    {"x // 32 * 32 + x % 32 // 4 * 4 + x % 4", "x"},
    {"x % 16 % 4", "x % 4"},
    {"(i*4 + k) // 8", "i // 2"},
    {"(i*4 + k) % 8", "i % 2 * 4 + k"},
    {"(i*16 + j) // 4", "i * 4 + j // 4"},
    {"(i*16 + j + 16) // 16", "i + 1"},
    {"tdiv(i*16 + j, 16)", "i"},
    {"tmod(i*16 + j, 16)", "j"},
    /* symbolic: divisibility without bounds */
    {"(y*8 + 4) // 8", "y"},
    {"(y*4 + 2) % 8", "y % 2 * 4 + 2"},
    {"y*6 // 4", "y * 3 // 2"},
    {"n*4 // 4", "n"},
    {"(n*4 + 7) % 4", "3"},
    {"(y + 3) // 4", "(y + 3) // 4"},
    {"y % 8 // 8", "0"},
    /* affine normalization */
    {"i + j - i", "j"},
    {"2*i + 3*i", "i * 5"},
    {"i*2 - 4*i + 6 - 6", "i * -2"},
    {"0 - i + j", "j - i"},
    {"5 - i - j", "5 - i - j"},
    {"(i + 1) * 3 - 3", "i * 3"},
    {"(i - 2) * (0 - 1) + i", "2"},
    {"y * n + 1 - n * y", "y * n - n * y + 1"}, /* products of two variables keep their order */
    {"y * 0 + j", "j"},
    {"p - 2 + 2", "p"},
    /* comparisons, min / max, select from bounds */
    {"i < 8", "True"},
    {"i < 7", "i < 7"},
    {"i*16 + j < 128", "True"},
    {"i*16 + j < 127", "i * 16 + j < 127"},
    {"i + j >= 0", "True"},
    {"i == i + 1", "False"},
    {"2*y == 2*n + 1", "False"},
    {"p > 1", "True"},
    {"p >= 6", "False"},
    {"i != 9", "True"},
    {"i < 8 and y < n", "y < n"},
    {"y < n and i < 8", "y < n"},
    {"i >= 8 or y < n", "y < n"},
    {"i >= 8 and y < n", "False"},
    {"min(i, 8)", "i"},
    {"max(i, 0)", "i"},
    {"min(i, j)", "T.min(i, j)"},
    {"min(y, y + 1)", "y"},
    {"max(x // 4, 300)", "300"},
    {"max(x // 4, 100)", "T.max(x // 4, 100)"},
    {"max(x // 4, 0)", "x // 4"},
    {"min(x // 4, 255)", "x // 4"},
    {"x - x // 4 * 4", "x % 4"},
    {"y * 3 - y // 8 * 24", "y % 8 * 3"},
    {"select(i < 8, j, k)", "j"},
    {"select(i < 4, j, k)", "T.if_then_else(i < 4, j, k)"},
    {"select(y < n, i, i)", "i"},
    {"select(i < 4, (j*4 + k) // 4, 0)", "T.if_then_else(i < 4, j, 0)"},
};

static void test_simplify_table(void) {
  env *E = env_new();
  int bad = 0;
  for (size_t i = 0; i < sizeof simplify_cases / sizeof simplify_cases[0]; i++) {
    mlc_tir_expr *e = parse(E, simplify_cases[i].in);
    mlc_tir_expr *r = mlc_arith_simplify(E->an, E->m, e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    if (!expect_str(r, simplify_cases[i].out, simplify_cases[i].in)) bad++;
    /* simplification is idempotent */
    mlc_tir_expr *r2 = mlc_arith_simplify(E->an, E->m, r);
    if (!expect_str(r2, simplify_cases[i].out, "again")) bad++;
  }
  CU_ASSERT_EQUAL(bad, 0);
  env_free(E);
}

/* Non-index expressions keep their form; their indices are simplified. */
static void test_simplify_non_index(void) {
  env *E = env_new();
  mlc_tir_module *m = E->m;
  int64_t dims[2] = {8, 16};
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_expr *idx[2] = {parse(E, "(i*16 + j) // 16"), parse(E, "(i*16 + j) % 16")};
  mlc_tir_expr *ld = mlc_tir_load(m, A, 2, idx);
  mlc_tir_expr *e = mlc_tir_add(m, mlc_tir_call1(m, MLC_TIR_INTRIN_EXP, ld), mlc_tir_float(m, MLC_DTYPE_F32, 1));
  CU_ASSERT(expect_str(mlc_arith_simplify(E->an, m, e), "T.exp(A[i, j]) + T.float32(1)", "float"));
  /* an int32 expression is not reassociated (it could wrap) */
  mlc_tir_var *w = mlc_tir_var_new(m, "w", MLC_DTYPE_I32);
  mlc_tir_expr *ew = mlc_tir_sub(m, mlc_tir_add(m, mlc_tir_ref(m, w), mlc_tir_int(m, MLC_DTYPE_I32, 1)),
                                 mlc_tir_int(m, MLC_DTYPE_I32, 1));
  CU_ASSERT(expect_str(mlc_arith_simplify(E->an, m, ew), "w + T.int32(1) - T.int32(1)", "int32"));
  /* a cast of an index expression: the inside is simplified */
  mlc_tir_expr *c = mlc_tir_cast(m, MLC_DTYPE_F32, parse(E, "(i*16 + j) // 16"));
  CU_ASSERT(expect_str(mlc_arith_simplify(E->an, m, c), "T.Cast(\"float32\", i)", "cast"));
  /* the input is never changed */
  CU_ASSERT(expect_str(idx[0], "(i * 16 + j) // 16", "input"));
  env_free(E);
}

/* ---- bounds and proofs ------------------------------------------------------------------- */

static void test_bounds(void) {
  env *E = env_new();
  static const struct {
    const char *e;
    int known;
    int64_t lo, hi;
  } cases[] = {
      {"i", 1, 0, 7},
      {"i*16 + j", 1, 0, 127},
      {"i - j", 1, -15, 7},
      {"x // 4", 1, 0, 255},
      {"x % 16", 1, 0, 15},
      {"(i + 8) % 16", 1, 8, 15},
      {"min(i, j)", 1, 0, 7},
      {"max(i, j) * 2", 1, 0, 30},
      {"i * j", 1, 0, 105},
      {"p * 3 - 1", 1, 5, 14},
      {"(i*16 + j) - (j + i*16)", 1, 0, 0},
      {"y % 5", 1, 0, 4},
      {"select(y < n, i, j + 100)", 1, 0, 115},
      {"y", 0, 0, 0},
      {"i + y", 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int64_t lo, hi;
    int known = mlc_arith_const_bound(E->an, parse(E, cases[i].e), &lo, &hi);
    if (known != cases[i].known || (known && (lo != cases[i].lo || hi != cases[i].hi)))
      printf("\n  bound of %s: %d [%lld, %lld]\n", cases[i].e, known, (long long)lo, (long long)hi);
    CU_ASSERT_EQUAL(known, cases[i].known);
    if (known) {
      CU_ASSERT_EQUAL(lo, cases[i].lo);
      CU_ASSERT_EQUAL(hi, cases[i].hi);
    }
  }
  /* a one-sided bound */
  int64_t lo, hi;
  CU_ASSERT_EQUAL(mlc_arith_const_bound(E->an, parse(E, "i + y % 8 + max(y, 3)"), &lo, &hi), 0);
  CU_ASSERT_EQUAL(lo, 3);
  CU_ASSERT_EQUAL(hi, INT64_MAX);

  /* proofs */
  CU_ASSERT(mlc_arith_prove(E->an, parse(E, "i*16 + j < 128")));
  CU_ASSERT(mlc_arith_prove(E->an, parse(E, "(x // 4) * 4 <= x")));
  CU_ASSERT(mlc_arith_prove(E->an, parse(E, "x // 4 * 4 + x % 4 == x")));
  CU_ASSERT(!mlc_arith_prove(E->an, parse(E, "i < 7")));
  CU_ASSERT(!mlc_arith_prove(E->an, parse(E, "y < n")));
  CU_ASSERT(mlc_arith_prove_equal(E->an, parse(E, "(i*16 + j) // 16"), parse(E, "i")));
  CU_ASSERT(!mlc_arith_prove_equal(E->an, parse(E, "j // 4"), parse(E, "j % 4")));

  /* scoped domains: bind shadows, restore brings the earlier back */
  int mark = mlc_arith_mark(E->an);
  CU_ASSERT(OK(mlc_arith_bind_c(E->an, E->vars[0], 0, 4)));
  CU_ASSERT(mlc_arith_prove(E->an, parse(E, "i < 4")));
  mlc_arith_restore(E->an, mark);
  CU_ASSERT(!mlc_arith_prove(E->an, parse(E, "i < 4")));
  CU_ASSERT(mlc_arith_prove(E->an, parse(E, "i < 8")));
  /* a domain given by another variable: y in [0, i + 1) */
  CU_ASSERT(OK(mlc_arith_bind(E->an, E->vars[5], mlc_tir_i64(E->m, 0), parse(E, "i + 1"))));
  CU_ASSERT(mlc_arith_prove(E->an, parse(E, "y < 8")));
  CU_ASSERT(!mlc_arith_prove(E->an, parse(E, "y < 7")));
  mlc_arith_unbind(E->an, E->vars[5]);
  CU_ASSERT(!mlc_arith_prove(E->an, parse(E, "y < 8")));
  /* a domain that names itself does not loop */
  CU_ASSERT(OK(mlc_arith_bind(E->an, E->vars[6], parse(E, "n"), mlc_tir_i64(E->m, 4))));
  CU_ASSERT(!mlc_arith_prove(E->an, parse(E, "n < 100")));
  mlc_arith_unbind(E->an, E->vars[6]);
  /* refusals */
  mlc_tir_var *w = mlc_tir_var_new(E->m, "w", MLC_DTYPE_I32);
  EXPECT_ERR(mlc_arith_bind_c(E->an, w, 0, 4), "bind w: the variable and its domain must be int64");
  EXPECT_ERR(mlc_arith_bind(E->an, E->vars[0], NULL, mlc_tir_i64(E->m, 1)), "bind of a NULL variable");
  env_free(E);
}

/* ---- integer sets ---------------------------------------------------------------------- */

static void expect_set(env *E, const char *e, const char *relax, const char *min, const char *ext) {
  const mlc_tir_var *rv[NVARS];
  int n = 0;
  for (const char *p = relax; *p; p++)
    for (int v = 0; v < NVARS; v++)
      if (E->names[v][0] == *p) rv[n++] = E->vars[v];
  mlc_intset s;
  if (!OK(mlc_arith_eval_set(E->an, E->m, parse(E, e), n, rv, &s))) return;
  CU_ASSERT(expect_str(s.min, min, e));
  CU_ASSERT(expect_str(s.extent, ext, e));
}

static void test_eval_set(void) {
  env *E = env_new();
  expect_set(E, "i*4 + k", "k", "i * 4", "4");
  expect_set(E, "i*4 + k", "ik", "0", "32");
  expect_set(E, "i*4 + k", "", "i * 4 + k", "1");
  expect_set(E, "i*16 + j - 1", "j", "i * 16 - 1", "16");
  expect_set(E, "y - k*2", "k", "y - 6", "7");
  expect_set(E, "(i*4 + k) // 8", "k", "i // 2", "1");
  expect_set(E, "(i*4 + k) // 2", "k", "i * 2", "2");
  expect_set(E, "(i*4 + k) % 8", "k", "i % 2 * 4", "4");
  expect_set(E, "x % 16", "x", "0", "16");
  expect_set(E, "min(i + k, 9)", "k", "i", "T.min(i + 3, 9) - i + 1");
  expect_set(E, "n*4 + k", "k", "n * 4", "4");
  expect_set(E, "i * j", "j", "0", "106"); /* not affine in j: its constant bound */
  expect_set(E, "p + k", "pk", "2", "7");
  /* a relaxed variable whose domain uses another one: y in [i*4, i*4 + 4) */
  int mark = mlc_arith_mark(E->an);
  CU_ASSERT(OK(mlc_arith_bind(E->an, E->vars[5], parse(E, "i * 4"), mlc_tir_i64(E->m, 4))));
  expect_set(E, "y + 1", "y", "i * 4 + 1", "4");
  expect_set(E, "y + 1", "yi", "1", "32");
  mlc_arith_restore(E->an, mark);
  /* refusals */
  mlc_intset s;
  const mlc_tir_var *ry[1] = {E->vars[5]};
  EXPECT_ERR(mlc_arith_eval_set(E->an, E->m, parse(E, "y + 1"), 1, ry, &s), "relaxed variable y has no domain");
  const mlc_tir_var *rj[1] = {E->vars[1]};
  EXPECT_ERR(mlc_arith_eval_set(E->an, E->m, parse(E, "j * y"), 1, rj, &s), "no integer set for j * y",
             "not affine and has no constant bound");
  EXPECT_ERR(mlc_arith_eval_set(E->an, E->m, parse(E, "j < 3"), 1, rj, &s), "need an int64 expression");
  env_free(E);
}

/* ---- iterator maps ------------------------------------------------------------------- */

typedef struct imap_case {
  const char *loops;    /* loop names, each bound in the env */
  const char *binds[3]; /* bindings */
  int64_t ext[3];       /* their extents */
  const char *err;      /* NULL: accepted */
} imap_case;

static void check_imap(const imap_case *c) {
  env *E = env_new();
  /* loops: a [0, 4), b [0, 8), c [0, 16), i [0,8), j [0,16), k [0,4), f [0,64), p [2,6) */
  const mlc_tir_var *lv[8];
  int nl = 0;
  for (const char *p = c->loops; *p; p++)
    for (int v = 0; v < NVARS; v++)
      if (E->names[v][0] == *p) lv[nl++] = E->vars[v];
  const mlc_tir_expr *b[3], *x[3];
  int nb = 0;
  for (; nb < 3 && c->binds[nb]; nb++) {
    b[nb] = parse(E, c->binds[nb]);
    x[nb] = mlc_tir_i64(E->m, c->ext[nb]);
  }
  mlc_arith_iter_map_result r;
  mlc_status s = mlc_arith_iter_map(E->an, nb, b, x, nl, lv, &r);
  if (!c->err) {
    if (OK(s)) {
      CU_ASSERT_EQUAL(r.nbind, nb);
      for (int i = 0; i < nb; i++) CU_ASSERT_EQUAL(r.sums[i].extent, c->ext[i]);
    }
  } else {
    EXPECT_ERR(s, c->err);
  }
  env_free(E);
}

static void test_iter_map(void) {
  static const imap_case cases[] = {
      /* identity, reorder, split, fuse, split then fuse */
      {"ij", {"i", "j"}, {8, 16}, NULL},
      {"ji", {"i", "j"}, {8, 16}, NULL},
      {"ik", {"i*4 + k", NULL}, {32}, NULL},
      {"f", {"f // 16", "f % 16"}, {4, 16}, NULL},
      {"f", {"f // 16", "f // 4 % 4", "f % 4"}, {4, 4, 4}, NULL},
      {"fk", {"f // 4", "f % 4 * 4 + k"}, {16, 16}, NULL},
      {"ijk", {"(i*16 + j) // 16", "(i*16 + j) % 16", "k"}, {8, 16, 4}, NULL},
      {"p", {"p", NULL}, {4}, NULL},
      {"ik", {"i*4 + k + 3", NULL}, {32}, NULL},
      /* refusals */
      {"ij", {"i", "i"}, {8, 8}, "loop variable i is used more than once"},
      {"ij", {"i", NULL}, {8}, "loop variable j (extent 16) is used by no binding"},
      {"ik", {"i*5 + k", NULL}, {40}, "is not a mixed-radix sum"},
      {"ij", {"i*j", NULL}, {128}, "term i * j is not a split"},
      {"ij", {"i + j", NULL}, {23}, "is not a mixed-radix sum"},
      {"ik", {"i*4 + k", NULL}, {30}, "covers 32 values, not its extent 30"},
      {"f", {"f // 16", "f % 8"}, {4, 8}, "with a gap"},
      {"f", {"f // 8", "f % 16"}, {8, 16}, "loop variable f is used more than once"},
      {"f", {"f // 3", NULL}, {21}, "factor that does not divide its extent"},
      {"i", {"i", "y"}, {8, 4}, "uses a variable that is not one of the loop variables"},
      {"y", {"y", NULL}, {4}, "loop variable y needs a constant domain"},
      {"ij", {"i - j", NULL}, {8}, "negative coefficient"},
      {"p", {"p // 2", NULL}, {2}, "loop does not start at 0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_imap(&cases[i]);

  /* the splits reported for a split-then-fuse binding */
  env *E = env_new();
  const mlc_tir_var *lv[2] = {E->vars[3], E->vars[2]}; /* f, k */
  const mlc_tir_expr *b[2] = {parse(E, "f // 4"), parse(E, "f % 4 * 4 + k")};
  const mlc_tir_expr *x[2] = {mlc_tir_i64(E->m, 16), mlc_tir_i64(E->m, 16)};
  mlc_arith_iter_map_result r;
  CU_ASSERT_FATAL(OK(mlc_arith_iter_map(E->an, 2, b, x, 2, lv, &r)));
  CU_ASSERT_EQUAL(r.sums[0].nsplits, 1);
  CU_ASSERT_EQUAL(r.sums[0].splits[0].loop, 0);
  CU_ASSERT_EQUAL(r.sums[0].splits[0].lower_factor, 4);
  CU_ASSERT_EQUAL(r.sums[0].splits[0].extent, 16);
  CU_ASSERT_EQUAL(r.sums[1].nsplits, 2);
  CU_ASSERT_EQUAL(r.sums[1].splits[0].loop, 0);
  CU_ASSERT_EQUAL(r.sums[1].splits[0].scale, 4);
  CU_ASSERT_EQUAL(r.sums[1].splits[0].extent, 4);
  CU_ASSERT_EQUAL(r.sums[1].splits[1].loop, 1);
  CU_ASSERT_EQUAL(r.sums[1].splits[1].scale, 1);
  CU_ASSERT_EQUAL(r.sums[1].base, 0);

  /* a split whose factors do not divide the extent: io in [0, 3) (y here),
  ** ii in [0, 4) (k), vi = io * 4 + ii over 10 values under the predicate */
  CU_ASSERT(OK(mlc_arith_bind_c(E->an, E->vars[5], 0, 3)));
  const mlc_tir_var *yk[2] = {E->vars[5], E->vars[2]};
  const mlc_tir_expr *bind10 = parse(E, "y*4 + k"), *ext10 = mlc_tir_i64(E->m, 10);
  static const char *const accepted[] = {"y*4 + k < 10", "y*4 + k <= 9", "10 > k + y*4", "9 >= y*4 + k",
                                         "y < 3 and y*4 + k < 10"};
  for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
    mlc_arith_iter_map_result rp;
    if (!OK(mlc_arith_iter_map_pred(E->an, 1, &bind10, &ext10, 2, yk, parse(E, accepted[i]), &rp)))
      printf("\n  predicate %s refused\n", accepted[i]);
    else
      CU_ASSERT_EQUAL(rp.sums[0].extent, 10);
  }
  EXPECT_ERR(mlc_arith_iter_map_pred(E->an, 1, &bind10, &ext10, 2, yk, parse(E, "y*4 + k < 11"), &r),
             "covers 12 values, not its extent 10 (the predicate does not limit it)");
  EXPECT_ERR(mlc_arith_iter_map_pred(E->an, 1, &bind10, &ext10, 2, yk, parse(E, "y*4 < 10"), &r),
             "the predicate does not limit it");
  EXPECT_ERR(mlc_arith_iter_map(E->an, 1, &bind10, &ext10, 2, yk, &r), "covers 12 values, not its extent 10");
  env_free(E);
}

/* ---- randomized: simplification keeps values ------------------------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* Random int64 expression of depth <= |d| over the bound variables i j k f p
** and the unbound y (small values). */
static mlc_tir_expr *rnd_expr(env *E, int d);

static mlc_tir_expr *rnd_cond(env *E, int d) {
  static const mlc_tir_binop cmp[] = {MLC_TIR_LT, MLC_TIR_LE, MLC_TIR_GT, MLC_TIR_GE, MLC_TIR_EQ, MLC_TIR_NE};
  return mlc_tir_binary(E->m, cmp[rnd() % 6], rnd_expr(E, d - 1), rnd_expr(E, d - 1));
}

static mlc_tir_expr *rnd_expr(env *E, int d) {
  static const int leaf_vars[] = {0, 1, 2, 3, 7, 5};
  mlc_tir_module *m = E->m;
  if (d <= 0 || rnd() % 4 == 0) {
    if (rnd() % 3 == 0) return mlc_tir_i64(m, rnd_in(-20, 20));
    return mlc_tir_ref(m, E->vars[leaf_vars[rnd() % 6]]);
  }
  switch (rnd() % 10) {
    case 0:
    case 1: return mlc_tir_add(m, rnd_expr(E, d - 1), rnd_expr(E, d - 1));
    case 2: return mlc_tir_sub(m, rnd_expr(E, d - 1), rnd_expr(E, d - 1));
    case 3: return mlc_tir_mul(m, rnd_expr(E, d - 1), mlc_tir_i64(m, rnd_in(-8, 8)));
    case 4: return mlc_tir_mul(m, rnd_expr(E, d - 1), rnd_expr(E, d - 2));
    case 5:
      return mlc_tir_binary(m, MLC_TIR_FLOORDIV, rnd_expr(E, d - 1),
                            mlc_tir_i64(m, rnd() % 8 == 0 ? rnd_in(-4, -1) : (int64_t)(1 << (rnd() % 5)) * rnd_in(1, 3)));
    case 6:
      return mlc_tir_binary(m, MLC_TIR_FLOORMOD, rnd_expr(E, d - 1),
                            mlc_tir_i64(m, rnd() % 8 == 0 ? rnd_in(-4, -1) : (int64_t)(1 << (rnd() % 5)) * rnd_in(1, 3)));
    case 7: return mlc_tir_binary(m, rnd() % 2 ? MLC_TIR_MIN : MLC_TIR_MAX, rnd_expr(E, d - 1), rnd_expr(E, d - 1));
    case 8: return mlc_tir_select(m, rnd_cond(E, d - 1), rnd_expr(E, d - 1), rnd_expr(E, d - 1));
    default: {
      /* the split / fuse shapes: (a*c + b) // c, % c, and their recombination */
      int64_t c = (int64_t)1 << (rnd() % 4 + 1);
      mlc_tir_expr *a = rnd_expr(E, d - 1), *b = rnd_expr(E, d - 1);
      mlc_tir_expr *s = mlc_tir_add(m, mlc_tir_mul(m, a, mlc_tir_i64(m, c)), b);
      if (rnd() % 3 == 0)
        return mlc_tir_add(m, mlc_tir_mul(m, mlc_tir_binary(m, MLC_TIR_FLOORDIV, s, mlc_tir_i64(m, c)), mlc_tir_i64(m, c)),
                           mlc_tir_binary(m, MLC_TIR_FLOORMOD, s, mlc_tir_i64(m, c)));
      return mlc_tir_binary(m, rnd() % 2 ? MLC_TIR_FLOORDIV : MLC_TIR_FLOORMOD, s, mlc_tir_i64(m, c));
    }
  }
}

static int64_t fl_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
static int64_t fl_mod(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* The value of |e| with variable v = val[v's index]; the test's own
** evaluator. */
static int64_t eval(env *E, const mlc_tir_expr *e, const int64_t *val) {
  switch (e->kind) {
    case MLC_TIR_INT_IMM: return e->int_value;
    case MLC_TIR_VAR_REF:
      for (int v = 0; v < NVARS; v++)
        if (E->vars[v] == e->var) return val[v];
      CU_FAIL("unknown variable");
      return 0;
    case MLC_TIR_SELECT: return eval(E, e->select.c, val) ? eval(E, e->select.t, val) : eval(E, e->select.f, val);
    case MLC_TIR_BINARY: {
      int64_t a = eval(E, e->bin.a, val), b = eval(E, e->bin.b, val);
      switch (e->bin.op) {
        case MLC_TIR_ADD: return a + b;
        case MLC_TIR_SUB: return a - b;
        case MLC_TIR_MUL: return a * b;
        case MLC_TIR_DIV:
        case MLC_TIR_FLOORDIV: return fl_div(a, b);
        case MLC_TIR_FLOORMOD: return fl_mod(a, b);
        case MLC_TIR_TRUNCDIV: return b ? a / b : 0;
        case MLC_TIR_TRUNCMOD: return b ? a % b : 0;
        case MLC_TIR_MIN: return a < b ? a : b;
        case MLC_TIR_MAX: return a > b ? a : b;
        case MLC_TIR_EQ: return a == b;
        case MLC_TIR_NE: return a != b;
        case MLC_TIR_LT: return a < b;
        case MLC_TIR_LE: return a <= b;
        case MLC_TIR_GT: return a > b;
        case MLC_TIR_GE: return a >= b;
        case MLC_TIR_AND: return e->dtype == MLC_DTYPE_BOOL ? (a && b) : (a & b);
        case MLC_TIR_OR: return e->dtype == MLC_DTYPE_BOOL ? (a || b) : (a | b);
        case MLC_TIR_BINOP_COUNT: break;
      }
      break;
    }
    case MLC_TIR_NOT: return e->dtype == MLC_DTYPE_BOOL ? !eval(E, e->un.a, val) : ~eval(E, e->un.a, val);
    default: break;
  }
  CU_FAIL("unexpected expression kind");
  return 0;
}

static void rnd_point(env *E, int64_t *val) {
  for (int v = 0; v < NVARS; v++)
    val[v] = E->ext[v] ? rnd_in(E->lo[v], E->lo[v] + E->ext[v] - 1) : rnd_in(-50, 50);
}

static void test_random_simplify(void) {
  rng_state = 0x9e3779b97f4a7c15ull;
  int cases = 0, bad = 0, simplified = 0, set_checks = 0;
  for (int round = 0; round < 40; round++) {
    env *E = env_new();
    for (int t = 0; t < 100; t++) {
      mlc_tir_expr *e = rnd_expr(E, 4);
      mlc_tir_expr *s = mlc_arith_simplify(E->an, E->m, e);
      CU_ASSERT_PTR_NOT_NULL_FATAL(s);
      simplified += s->kind == MLC_TIR_INT_IMM || s->kind == MLC_TIR_VAR_REF;
      int64_t blo, bhi;
      int bounded = mlc_arith_const_bound(E->an, e, &blo, &bhi);
      /* relax a random subset of the bound variables for a set check */
      const mlc_tir_var *rv[4];
      int nr = 0;
      static const int bound_vars[] = {0, 1, 2, 3, 7};
      for (int q = 0; q < 5 && nr < 4; q++)
        if (rnd() % 2) rv[nr++] = E->vars[bound_vars[q]];
      mlc_intset set;
      mlc_status st = mlc_arith_eval_set(E->an, E->m, e, nr, rv, &set);
      int has_set = st == NULL;
      mlc_status_free(st);
      for (int k = 0; k < 12; k++) {
        int64_t val[NVARS];
        rnd_point(E, val);
        int64_t a = eval(E, e, val), b = eval(E, s, val);
        cases++;
        if (a != b) {
          if (bad++ < 5) {
            printf("\n  mismatch at i=%lld j=%lld k=%lld f=%lld p=%lld y=%lld: %lld vs %lld\n  in:  %s\n  out: %s\n",
                   (long long)val[0], (long long)val[1], (long long)val[2], (long long)val[3], (long long)val[7],
                   (long long)val[5], (long long)a, (long long)b, print_expr(e), print_expr(s));
          }
        }
        if (bounded && (a < blo || a > bhi)) {
          if (bad++ < 5) printf("\n  %s = %lld outside its bound [%lld, %lld]\n", print_expr(e), (long long)a,
                                (long long)blo, (long long)bhi);
        }
        if (has_set) {
          /* the set at this point's values of the symbolic variables must hold
          ** the value */
          int64_t lo = eval(E, set.min, val), ext = eval(E, set.extent, val);
          set_checks++;
          if (a < lo || a >= lo + ext) {
            if (bad++ < 5)
              printf("\n  %s = %lld outside its set [%s, +%s) = [%lld, +%lld)\n", print_expr(e), (long long)a,
                     print_expr(set.min), print_expr(set.extent), (long long)lo, (long long)ext);
          }
        }
      }
    }
    env_free(E);
  }
  printf("\n  %d evaluations (%d set checks), %d mismatches; %d of 4000 simplified to a constant or a variable\n",
         cases, set_checks, bad, simplified);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(cases >= 40000);
}


/* Randomized soundness of iterator maps: random bindings built from splits
** and fuses of two loops (a in [0, A), b in [0, B)), each with the extent of
** its value range; whenever mlc_arith_iter_map accepts, enumerating every
** loop value must show a bijection onto the binding box. */
static void test_iter_map_random(void) {
  static const int64_t exts[] = {1, 2, 3, 4, 6, 8};
  rng_state = 0x2545f4914f6cdd1dull;
  int accepted = 0, tried = 0, bad = 0;
  for (int round = 0; round < 2000; round++) {
    env *E = env_new();
    mlc_tir_module *m = E->m;
    int64_t A = exts[rnd() % 6], B = exts[rnd() % 6];
    mlc_tir_var *a = E->vars[5], *b = E->vars[6]; /* y and n, bound here as the loops */
    CU_ASSERT(OK(mlc_arith_bind_c(E->an, a, 0, A)));
    CU_ASSERT(OK(mlc_arith_bind_c(E->an, b, 0, B)));
    mlc_tir_expr *ra = mlc_tir_ref(m, a), *rb = mlc_tir_ref(m, b);
    mlc_tir_expr *fused = mlc_tir_add(m, mlc_tir_mul(m, ra, mlc_tir_i64(m, B)), rb);
    int nb = 1 + (int)(rnd() % 3);
    const mlc_tir_expr *bind[3], *bext[3];
    int64_t lo[3], hi[3];
    for (int k = 0; k < nb; k++) {
      mlc_tir_expr *e = NULL;
      int nterms = 1 + (int)(rnd() % 2);
      for (int t = 0; t < nterms; t++) {
        mlc_tir_expr *src = rnd() % 3 == 0 ? fused : (rnd() % 2 ? ra : rb);
        int64_t c = (int64_t)(1 + rnd() % 4);
        mlc_tir_expr *term = src;
        switch (rnd() % 3) {
          case 0: term = mlc_tir_binary(m, MLC_TIR_FLOORDIV, src, mlc_tir_i64(m, c)); break;
          case 1: term = mlc_tir_binary(m, MLC_TIR_FLOORMOD, src, mlc_tir_i64(m, c)); break;
          default: break;
        }
        term = mlc_tir_mul(m, term, mlc_tir_i64(m, (int64_t)(1 + rnd() % 4)));
        e = e ? mlc_tir_add(m, e, term) : term;
      }
      bind[k] = e;
      lo[k] = INT64_MAX;
      hi[k] = INT64_MIN;
      for (int64_t x = 0; x < A; x++)
        for (int64_t y = 0; y < B; y++) {
          int64_t val[NVARS] = {0};
          val[5] = x, val[6] = y;
          int64_t v = eval(E, e, val);
          if (v < lo[k]) lo[k] = v;
          if (v > hi[k]) hi[k] = v;
        }
      bext[k] = mlc_tir_i64(m, hi[k] - lo[k] + 1);
    }
    const mlc_tir_var *loops[2] = {a, b};
    mlc_arith_iter_map_result r;
    mlc_status st = mlc_arith_iter_map(E->an, nb, bind, bext, 2, loops, &r);
    tried++;
    if (!st) {
      accepted++;
      /* bijective: distinct loop values give distinct tuples, and the
      ** tuples fill the box (the product of the extents is A * B) */
      int64_t box = 1;
      for (int k = 0; k < nb; k++) box *= hi[k] - lo[k] + 1;
      char *seen = calloc((size_t)box, 1);
      int ok = box == A * B && seen;
      for (int64_t x = 0; ok && x < A; x++)
        for (int64_t y = 0; ok && y < B; y++) {
          int64_t val[NVARS] = {0}, flat = 0;
          val[5] = x, val[6] = y;
          for (int k = 0; k < nb; k++) flat = flat * (hi[k] - lo[k] + 1) + (eval(E, bind[k], val) - lo[k]);
          if (seen[flat]) ok = 0;
          seen[flat] = 1;
        }
      for (int k = 0; ok && k < nb; k++) ok = r.sums[k].base == lo[k];
      free(seen);
      if (!ok && bad++ < 3) {
        printf("\n  accepted a map that is not a bijection (A=%lld B=%lld):", (long long)A, (long long)B);
        for (int k = 0; k < nb; k++) printf(" %s", print_expr(bind[k]));
        printf("\n");
      }
    }
    mlc_status_free(st);
    env_free(E);
  }
  printf("\n  %d random maps, %d accepted, %d unsound\n", tried, accepted, bad);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(accepted >= 60);
}

/* A failing allocator: simplify returns NULL, never crashes. */
static void test_simplify_oom(void) {
  for (unsigned long long n = 1; n < 400; n++) {
    mlc_tir_module *m = NULL;
    mlc_arith *an = NULL;
    if (!OK(mlc_tir_module_create(mlc_allocator_default(), &m))) return;
    if (!OK(mlc_arith_create(mlc_allocator_default(), &an))) {
      mlc_tir_module_destroy(m);
      return;
    }
    mlc_tir_var *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64), *j = mlc_tir_var_new(m, "j", MLC_DTYPE_I64);
    mlc_tir_expr *e = mlc_tir_binary(
        m, MLC_TIR_FLOORDIV, mlc_tir_add(m, mlc_tir_mul(m, mlc_tir_ref(m, i), mlc_tir_i64(m, 16)), mlc_tir_ref(m, j)),
        mlc_tir_i64(m, 16));
    mlc_status s1 = mlc_arith_bind_c(an, i, 0, 8), s2 = mlc_arith_bind_c(an, j, 0, 16);
    CU_ASSERT(!s1 && !s2);
    mlc_status_free(s1);
    mlc_status_free(s2);
    if (mlc_test_fail_alloc(n) < 0) {
      mlc_arith_destroy(an);
      mlc_tir_module_destroy(m);
      return;
    }
    mlc_tir_expr *r = mlc_arith_simplify(an, m, e);
    int64_t lo, hi;
    (void)mlc_arith_const_bound(an, e, &lo, &hi);
    (void)mlc_arith_prove(an, e);
    mlc_intset set;
    const mlc_tir_var *rv[1] = {j};
    mlc_status s3 = mlc_arith_eval_set(an, m, e, 1, rv, &set);
    int failed = mlc_test_fail_alloc(0);
    if (!failed) {
      CU_ASSERT(r && r->kind == MLC_TIR_VAR_REF && r->var == i);
      CU_ASSERT(s3 == NULL);
    }
    mlc_status_free(s3);
    mlc_arith_destroy(an);
    mlc_tir_module_destroy(m);
    if (!failed) break;
  }
}

/* ---- block access regions ------------------------------------------------------------ */

/* Compares |text| with tests/golden/arith/|name|.out (rewritten with
** MLC_UPDATE_GOLDEN=1). */
static void golden(const char *name, const char *text) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/golden/arith/%s.out", name);
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
    printf("\n  %s differs\n--- expected\n%s--- actual\n%s", path, want, text);
    CU_FAIL("golden mismatch");
  }
  free(want);
}

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

/* Legalizes the one-op graph of |oc|, computes the regions of every prim
** function and returns the printed module (held). */
static char *legalized_regions(const opcase *oc) {
  mlc_module *gm = NULL;
  mlc_func *f = NULL;
  mlc_value *v[3], *out = NULL;
  mlc_tir_module *tm = NULL;
  CU_ASSERT_FATAL(OK(mlc_module_create(mlc_allocator_default(), &gm)));
  mlc_test_hold(gm);
  CU_ASSERT_FATAL(OK(mlc_func_create(gm, "main", &f)));
  for (int i = 0; i < oc->nargs; i++) {
    char pname[16];
    snprintf(pname, sizeof pname, "x%d", i);
    CU_ASSERT_FATAL(OK(mlc_func_add_param(f, pname, &oc->args[i], &v[i])));
  }
  CU_ASSERT_FATAL(OK(mlc_graph_emit1(f, oc->op, v, oc->nargs, oc->attrs, oc->nattrs, NULL, &out)));
  CU_ASSERT_FATAL(OK(mlc_func_add_ret(f, out)));
  CU_ASSERT_FATAL(OK(mlc_tir_module_create(mlc_allocator_default(), &tm)));
  mlc_test_hold(tm);
  CU_ASSERT_FATAL(OK(mlc_lower_legalize(gm, tm, NULL)));
  for (int i = 0; i < tm->nfuncs; i++) {
    CU_ASSERT(OK(mlc_tir_func_compute_regions(tm, tm->funcs[i])));
    CU_ASSERT(OK(mlc_tir_verify_func(tm->funcs[i])));
  }
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_module(tm, &b);
  CU_ASSERT(!b.oom);
  char *text = mlc_test_hold(strdup(mlc_sb_str(&b)));
  mlc_sb_fini(&b);
  mlc_tir_module_destroy(tm);
  mlc_module_destroy(gm);
  return text;
}

static void test_regions_legalized(void) {
  const mlc_dtype F = MLC_DTYPE_F32;
  const opcase cases[] = {
      {"matmul", MLC_OP_MATMUL, 2, {{F, 2, I64S(32, 64)}, {F, 2, I64S(64, 16)}}, 0, {{0}}},
      {"conv2d_pad", MLC_OP_CONV, 2, {{F, 4, I64S(1, 3, 7, 7)}, {F, 4, I64S(4, 3, 3, 3)}}, 1,
       {ATTR_INTS("pads", 1, 1, 1, 1)}},
      {"max_pool", MLC_OP_MAX_POOL, 1, {{F, 4, I64S(1, 2, 8, 8)}}, 2,
       {ATTR_INTS("kernel", 2, 2), ATTR_INTS("strides", 2, 2)}},
      {"avg_pool_pad", MLC_OP_AVG_POOL, 1, {{F, 4, I64S(1, 2, 6, 6)}}, 3,
       {ATTR_INTS("kernel", 3, 3), ATTR_INTS("strides", 2, 2), ATTR_INTS("pads", 1, 1, 1, 1)}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) golden(cases[i].name, legalized_regions(&cases[i]));
}


/* A block with a loop, a local buffer and a nested block inside: inner
** loops and nested iteration variables are relaxed, the local buffer is left
** out; an index with no computable range is an error naming the block. */
static void test_regions_hand_built(void) {
  env *E = env_new();
  mlc_tir_module *m = E->m;
  mlc_tir_var *vi = mlc_tir_var_new(m, "vi", MLC_DTYPE_I64), *ii = mlc_tir_var_new(m, "ii", MLC_DTYPE_I64);
  mlc_tir_var *kk = mlc_tir_var_new(m, "kk", MLC_DTYPE_I64), *vj = mlc_tir_var_new(m, "vj", MLC_DTYPE_I64);
  mlc_tir_var *jj = mlc_tir_var_new(m, "jj", MLC_DTYPE_I64);
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, I64S(8, 34), MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *Y = mlc_tir_buffer_new_c(m, "Y", MLC_DTYPE_F32, 1, I64S(64), MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *L = mlc_tir_buffer_new_c(m, "L", MLC_DTYPE_F32, 1, I64S(4), MLC_TIR_SCOPE_LOCAL);
  mlc_tir_expr *I = mlc_tir_ref(m, E->vars[0]), *VI = mlc_tir_ref(m, vi), *KK = mlc_tir_ref(m, kk);
  /* L[kk] = A[vi // 4, vi % 4 * 8 + kk * 2 + 2]  for kk in 0..4 */
  mlc_tir_expr *aidx[2] = {mlc_tir_binary(m, MLC_TIR_FLOORDIV, VI, mlc_tir_i64(m, 4)),
                           mlc_tir_add(m, mlc_tir_add(m, mlc_tir_mul(m, mlc_tir_binary(m, MLC_TIR_FLOORMOD, VI, mlc_tir_i64(m, 4)), mlc_tir_i64(m, 8)),
                                                      mlc_tir_mul(m, KK, mlc_tir_i64(m, 2))),
                                       mlc_tir_i64(m, 2))};
  mlc_tir_stmt *fill = mlc_tir_for(m, kk, mlc_tir_i64(m, 0), mlc_tir_i64(m, 4), MLC_TIR_FOR_SERIAL, NULL,
                                   mlc_tir_store(m, L, 1, &KK, mlc_tir_load(m, A, 2, aidx)));
  /* a nested block: Y[vj] = L[vj - vi * 2] for vj in [0, 64) bound to
  ** vi * 2 + jj, jj in 0..2: the outer block writes Y[vi * 2:vi * 2 + 2] */
  mlc_tir_iter_var inner_it = {vj, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), mlc_tir_i64(m, 64),
                               mlc_tir_add(m, mlc_tir_mul(m, VI, mlc_tir_i64(m, 2)), mlc_tir_ref(m, jj))};
  mlc_tir_expr *VJ = mlc_tir_ref(m, vj);
  mlc_tir_expr *lidx = mlc_tir_sub(m, VJ, mlc_tir_mul(m, VI, mlc_tir_i64(m, 2)));
  mlc_tir_stmt *inner = mlc_tir_block(m, "inner", 1, &inner_it, NULL, mlc_tir_store(m, Y, 1, &VJ, mlc_tir_load(m, L, 1, &lidx)));
  mlc_tir_stmt *body = mlc_tir_allocate(
      m, L, mlc_tir_seq2(m, fill, mlc_tir_for(m, jj, mlc_tir_i64(m, 0), mlc_tir_i64(m, 2), MLC_TIR_FOR_SERIAL, NULL, inner)));
  mlc_tir_iter_var outer_it = {vi, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), mlc_tir_i64(m, 32), mlc_tir_ref(m, ii)};
  mlc_tir_stmt *outer = mlc_tir_block(m, "outer", 1, &outer_it, NULL, body);
  mlc_tir_stmt *loop = mlc_tir_for(m, ii, mlc_tir_i64(m, 0), mlc_tir_i64(m, 32), MLC_TIR_FOR_SERIAL, NULL, outer);
  mlc_tir_buffer *params[2] = {A, Y};
  mlc_tir_func *f = mlc_tir_func_new(m, "nest", 2, params, loop);
  CU_ASSERT_FATAL(OK(mlc_tir_func_compute_regions(m, f)));
  CU_ASSERT(OK(mlc_tir_verify_func(f)));
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_func(f, &b);
  golden("hand_built", mlc_sb_str(&b));
  mlc_sb_fini(&b);
  CU_ASSERT_EQUAL(outer->block.nreads, 1);
  CU_ASSERT_EQUAL(outer->block.nwrites, 1);
  CU_ASSERT_EQUAL(inner->block.nreads, 1); /* L is local to outer, not to inner */

  /* an index with no range: A[0, kk * kk] over kk in [0, i * n) covers the
  ** whole dimension; a wrong index count is an error naming the block */
  mlc_tir_expr *bad[2] = {mlc_tir_i64(m, 0), mlc_tir_mul(m, KK, KK)};
  mlc_tir_stmt *bl = mlc_tir_for(m, kk, mlc_tir_i64(m, 0), mlc_tir_mul(m, I, mlc_tir_ref(m, E->vars[6])),
                                 MLC_TIR_FOR_SERIAL, NULL,
                                 mlc_tir_store(m, Y, 1, (mlc_tir_expr *[]){mlc_tir_i64(m, 0)}, mlc_tir_load(m, A, 2, bad)));
  mlc_tir_stmt *badblk = mlc_tir_block(m, "bad", 1, &outer_it, NULL, bl);
  CU_ASSERT(OK(mlc_tir_block_compute_regions(m, badblk)));
  CU_ASSERT_EQUAL_FATAL(badblk->block.nreads, 1);
  CU_ASSERT(mlc_tir_is_const(badblk->block.reads[0].min[1], 0));
  CU_ASSERT(mlc_tir_is_const(badblk->block.reads[0].extent[1], 34));
  mlc_tir_stmt *rank = mlc_tir_block(m, "rank", 1, &outer_it, NULL,
                                     mlc_tir_store(m, Y, 1, (mlc_tir_expr *[]){mlc_tir_i64(m, 0)}, mlc_tir_load(m, A, 1, &KK)));
  EXPECT_ERR(mlc_tir_block_compute_regions(m, rank), "block \"rank\": buffer A of rank 2 accessed with 1 indices");
  CU_ASSERT_EQUAL(rank->block.nreads, 0);
  EXPECT_ERR(mlc_tir_block_compute_regions(m, bl), "not a block");
  env_free(E);
}

/* ---- registration ----------------------------------------------------------------------- */

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"simplify_table", test_simplify_table},
                                      {"simplify_non_index", test_simplify_non_index},
                                      {"bounds_and_proofs", test_bounds},
                                      {"eval_set", test_eval_set},
                                      {"iter_map", test_iter_map},
                                      {"random_simplify", test_random_simplify},
                                      {"iter_map_random", test_iter_map_random},
                                      {"simplify_oom", test_simplify_oom},
                                      {NULL, NULL}};
  mlc_test_add_suite("arith", tests);
  static const CU_TestInfo region_tests[] = {{"legalized", test_regions_legalized}, {"hand_built", test_regions_hand_built}, {NULL, NULL}};
  mlc_test_add_suite("region", region_tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_arith", fns);
}
