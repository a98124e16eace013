/*
** test_tir_parse.c: the TIR text parser (lower/tir_parse.c).
**
** Round trips print -> parse -> print must be identical, and every parsed
** function must verify: for hand-written text covering every construct the
** printer writes, for trees built by hand (constants of every dtype, names
** that shadow, unfolded arithmetic, te reductions), for the golden files of
** tests/golden/tir/, and for every prim function legalized (and then
** scheduled) from the bundled models and, when MLC_TIR_PARSE_SUITE names the
** ONNX node conformance suite (tests/unit/tir_parse_conformance.sh sets it),
** from each of its models.  Malformed inputs give errors naming the line
** and column and what was wrong; so do the fuzz target's findings listed in
** tests/malformed/tir/MANIFEST.
*/
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "graph/pass.h"
#include "lower/lower.h"
#include "lower/tir.h"
#include "onnx/onnx.h"
#include "tests/testutil.h"

#define OK(expr) MLC_TEST_OK(expr)

static mlc_tir_module *new_module(void) {
  mlc_tir_module *m = NULL;
  if (!OK(mlc_tir_module_create(mlc_allocator_default(), &m))) return NULL;
  return mlc_test_hold(m);
}

static char *print_module(const mlc_tir_module *m) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_module(m, &b);
  CU_ASSERT(!b.oom);
  char *s = strdup(mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return s;
}

static char *print_func(const mlc_tir_func *f) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_func(f, &b);
  CU_ASSERT(!b.oom);
  char *s = strdup(mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return s;
}

/* Prints where |a| and |b| first differ (a line of each). */
static void show_diff(const char *what, const char *a, const char *b) {
  int line = 1;
  const char *la = a, *lb = b;
  while (*a && *a == *b) {
    if (*a == '\n') {
      line++;
      la = a + 1;
      lb = b + 1;
    }
    a++, b++;
  }
  printf("\n  %s: differs at line %d\n  printed: %.*s\n  re-read: %.*s\n", what, line,
         (int)strcspn(la, "\n"), la, (int)strcspn(lb, "\n"), lb);
}

/* Parses |text| (one or more functions) into a fresh module, verifies each
** function and prints the module again: 1 when identical.  Reports why not. */
static int round_trip_text(const char *what, const char *text) {
  mlc_tir_module *m = new_module();
  if (!m) return 0;
  int ok = 0;
  mlc_status s = mlc_tir_parse_module(m, text, strlen(text), what);
  if (s) {
    printf("\n  %s: %s\n", what, mlc_status_message(s));
    mlc_status_free(s);
    goto done;
  }
  ok = 1;
  for (int i = 0; i < m->nfuncs; i++) {
    mlc_status v = mlc_tir_verify_func(m->funcs[i]);
    if (v) {
      /* te reductions are printable but never verify */
      if (!strstr(mlc_status_message(v), "te reduction")) {
        printf("\n  %s: parsed function does not verify: %s\n", what, mlc_status_message(v));
        ok = 0;
      }
      mlc_status_free(v);
    }
  }
  char *again = print_module(m);
  if (strcmp(again, text) != 0) {
    show_diff(what, text, again);
    ok = 0;
  }
  free(again);
done:
  mlc_tir_module_destroy(m);
  return ok;
}

/* print -> parse -> print of every function of |m|; counts into *|nfuncs|. */
static int round_trip_module(const char *what, const mlc_tir_module *m, int *nfuncs) {
  char *text = print_module(m);
  int ok = round_trip_text(what, text);
  free(text);
  if (nfuncs) *nfuncs += m->nfuncs;
  return ok;
}

/* ---- hand-written text ---------------------------------------------------------------- */

/* Every statement and expression form, exactly as the printer writes it. */
static const char *const k_all_forms =
    "@T.prim_func\n"
    "def all_forms(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((8,), \"int32\"), S: T.Buffer((), \"float64\"), "
    "M: T.Buffer((4,), \"bool\"), var_D: T.handle, var_E: T.handle):\n"
    "    T.func_attr({\"global_symbol\": \"all_forms\", \"tir.noalias\": True, \"tir.num_threads\": -4, \"x\": False})\n"
    "    n = T.int64()  # D.shape[0]\n"
    "    m = T.int64()  # E.shape[1]\n"
    "    D = T.match_buffer(var_D, (n, 4), \"float16\")\n"
    "    E = T.match_buffer(var_E, (2, m), \"uint8\")\n"
    "    L = T.alloc_buffer((4,), \"float32\", scope=\"local\")\n"
    "    G = T.alloc_buffer((2, 2), \"int64\")\n"
    "    for i, j in T.grid(4, 8):\n"
    "        with T.block(\"blk\"):\n"
    "            vi = T.axis.spatial(4, i)\n"
    "            vj = T.axis.reduce(8, j)\n"
    "            T.where(i * 8 + j < 30 and not M[i])\n"
    "            T.reads(A[vi, 0:8], B[vj], S[])\n"
    "            T.writes(L[vi])\n"
    "            with T.init():\n"
    "                L[vi] = T.float32(0)\n"
    "            L[vi] = L[vi] + A[vi, vj] * T.Cast(\"float32\", B[vj])\n"
    "    for i in range(2, 6):\n"
    "        for j in T.parallel(n):\n"
    "            for k in T.vectorized(1, 5):\n"
    "                for u in T.unroll(4):\n"
    "                    for bx in T.thread_binding((n + 3) // 4, thread=\"blockIdx.x\"):\n"
    "                        for tx in T.thread_binding(2, 34, thread=\"threadIdx.x\"):\n"
    "                            G[i % 2, k // 3] = (i - (j - k)) * (u + bx) - -1 + tx\n"
    "    for i in range(n):\n"
    "        for j in range(i):\n"
    "            with T.block(\"tri\"):\n"
    "                vi = T.axis.spatial((1, 5), i)\n"
    "                vj = T.axis.spatial((j, j + 3), j)\n"
    "                T.reads(D[vi:vi + 2, 0:4])\n"
    "                T.writes()\n"
    "                D[vi, vj] = T.if_then_else(vi == vj, T.float16(1.5), T.float16(-0.25))\n"
    "    if n > 4 and (m < 3 or n != 7):\n"
    "        S[()] = T.float64(\"nan\") + T.float64(\"inf\") - T.float64(\"-inf\") + T.float64(1e+300) * "
    "T.float64(-0)\n"
    "    else:\n"
    "        S[()] = T.pow(T.exp(S[()]), T.float64(2)) / T.sqrt(T.float64(3.25e-12))\n"
    "    if not (n >= 2 and m <= 9):\n"
    "        T.evaluate(0)\n"
    "    assert B[0] >= T.int32(0) and B[0] < T.int32(8), (\"Gather\", \"index $0 out of range [$1, $2)\\n\\\"q\\\"\", T.Cast(\"int64\", "
    "B[0]), -8, 8)\n"
    "    assert True, (\"Op\", \"no values\")\n"
    "    E[1, 0] = T.uint8(255) + T.bitwise_and(T.uint8(3), T.bitwise_or(E[0, 0], T.bitwise_not(T.uint8(0))))\n"
    "    B[1] = T.int32(-2147483648) + T.truncdiv(B[2], T.int32(3)) + T.truncmod(B[3], T.int32(-3)) + "
    "T.min(B[4], T.max(B[5], T.int32(2147483647)))\n"
    "    B[2] = T.Cast(\"int32\", T.int8(-128) + T.int8(127)) + T.Cast(\"int32\", T.int16(-32768)) + "
    "T.Cast(\"int32\", T.uint16(65535)) + T.Cast(\"int32\", T.uint32(4294967295)) + T.Cast(\"int32\", "
    "T.uint64(18446744073709551615))\n"
    "    G[0, 0] = -9223372036854775808 + 9223372036854775807 + T.Cast(\"int64\", T.isnan(A[0, 0]) or "
    "T.isinf(A[0, 1]))\n"
    "    M[0] = (A[0, 0] < A[0, 1]) == (A[1, 0] >= A[1, 1])\n"
    "    M[1] = not not M[0]\n"
    "    A[0, 0] = T.exp2(T.log(T.log2(T.rsqrt(T.tanh(T.sigmoid(T.erf(T.abs(T.floor(T.ceil(T.round(T.trunc("
    "A[0, 0]))))))))))))\n"
    "    A[0, 1] = T.sin(T.cos(T.tan(T.asin(T.acos(T.atan(T.sinh(T.cosh(T.asinh(T.acosh(T.atanh(A[0, 1])))))))))))\n"
    "    A[0, 2] = T.Cast(\"float32\", T.bfloat16(3)) + T.float32(-3.4028234663852886e+38) + T.float32(1.1754943508222875e-38)\n"
    "    A[0, 3] = A[0, 0] - (A[0, 1] + A[0, 2]) - A[0, 3] / (A[1, 0] * A[1, 1])\n";

/* te reductions and a block whose iteration variables shadow the loop's. */
static const char *const k_te_forms =
    "@T.prim_func\n"
    "def te_forms(A: T.Buffer((4, 8), \"float32\"), O: T.Buffer((4,), \"float32\")):\n"
    "    for i in range(4):\n"
    "        O[i] = T.sum(A[i, k] * T.max(A[i, k2], axis=[k2(8)]), axis=[k(8)]) + "
    "T.min(A[i, k], axis=[k(2, 6)])\n"
    "    for vi in range(4):\n"
    "        with T.block(\"O\"):\n"
    "            vi_1 = T.axis.spatial(4, vi)\n"
    "            O[vi_1] = T.prod(A[vi_1, j], axis=[j(8)]) + T.max(A[vi_1, 0], T.float32(1))\n"
    "\n"
    "@T.prim_func\n"
    "def second():\n"
    "    T.evaluate(T.int32(7))\n";

/* Vector expressions (what the vectorize pass writes). */
static const char *const k_vector_forms =
    "@T.prim_func\n"
    "def vector_forms(X: T.Buffer((64,), \"float32\"), I: T.Buffer((64,), \"int64\"), Y: T.Buffer((64,), "
    "\"float64\"), M: T.Buffer((64,), \"bool\")):\n"
    "    for i in range(4):\n"
    "        Y[T.Ramp(i * 16, 1, 16)] = T.Cast(\"float64x16\", T.exp(T.if_then_else(T.Ramp(i * 16, 1, 16) < "
    "T.Broadcast(40, 16), T.max(X[T.Ramp(i * 16, 1, 16)], T.Broadcast(T.float32(0), 16)), "
    "T.Broadcast(T.float32(0), 16))))\n"
    "        if T.Ramp(i * 16, 1, 16) < T.Broadcast(50, 16):\n"
    "            X[I[T.Ramp(i * 16, 1, 16)] % T.Broadcast(64, 16)] = X[T.Ramp(i * 16 * 3, 3, 16) % "
    "T.Broadcast(64, 16)] + T.Cast(\"float32x16\", I[T.Ramp(i * 16, 1, 16)])\n"
    "        else:\n"
    "            M[T.Ramp(i * 16, 1, 16)] = not T.isnan(X[T.Ramp(i * 16, 1, 16)]) and M[T.Broadcast(0, 16)]\n"
    "    Y[T.Ramp(0, 2, 32)] = T.Broadcast(T.float64(1), 32) - T.Cast(\"float64x32\", T.Cast(\"boolx32\", "
    "T.Ramp(T.int8(0), T.int8(1), 32)))\n";

static void test_text_forms(void) {
  CU_ASSERT(round_trip_text("vector_forms.tir", k_vector_forms));
  CU_ASSERT(round_trip_text("all_forms.tir", k_all_forms));
  CU_ASSERT(round_trip_text("te_forms.tir", k_te_forms));
}


/* The printer's golden files read back unchanged. */
static void test_goldens(void) {
  static const char *const names[] = {"mm_relu", "te_symbolic", "printer"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char rel[128];
    snprintf(rel, sizeof rel, "tests/golden/tir/%s.out", names[i]);
    char *text = mlc_test_read_file(mlc_test_src_path(rel), NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT(round_trip_text(rel, text));
    free(text);
  }
}

/* ---- trees built by hand ---------------------------------------------------------------- */

#define I64(v) mlc_tir_i64(m, (v))
#define REF(v) mlc_tir_ref(m, (v))
#define IDX(...) (int)(sizeof((mlc_tir_expr *[]){__VA_ARGS__}) / sizeof(mlc_tir_expr *)), (mlc_tir_expr *[]){__VA_ARGS__}

/* a OP b without the builders' folding. */
static mlc_tir_expr *raw_bin(mlc_tir_module *m, mlc_tir_binop op, mlc_tir_expr *a, mlc_tir_expr *b) {
  mlc_tir_expr *e = MLC_ARENA_NEW(m->arena, mlc_tir_expr);
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  e->kind = MLC_TIR_BINARY;
  e->dtype = (op >= MLC_TIR_EQ && op <= MLC_TIR_GE) ? MLC_DTYPE_BOOL : a->dtype;
  e->lanes = 1;
  e->bin.op = op;
  e->bin.a = a;
  e->bin.b = b;
  return e;
}

/* Shadowing names, unfolded arithmetic, constants of every dtype, empty and
** nested sequences, sibling buffers of one name, a grid broken by a
** dependent extent, mixed-dtype ranges and regions. */
static mlc_tir_func *build_tricky(mlc_tir_module *m) {
  const int64_t d4[1] = {4}, d22[2] = {2, 2};
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 1, d4, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *A2 = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_I64, 1, d4, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *Q = mlc_tir_buffer_new_c(m, "Q", MLC_DTYPE_I32, 2, d22, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *S = mlc_tir_buffer_new_c(m, "S", MLC_DTYPE_I32, 0, NULL, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *Y1 = mlc_tir_buffer_new_c(m, "Y", MLC_DTYPE_F64, 1, d4, MLC_TIR_SCOPE_LOCAL);
  mlc_tir_buffer *Y2 = mlc_tir_buffer_new_c(m, "Y", MLC_DTYPE_F64, 1, d4, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64), *i2 = mlc_tir_var_new(m, "i", MLC_DTYPE_I64);
  mlc_tir_var *i3 = mlc_tir_var_new(m, "i", MLC_DTYPE_I64), *j = mlc_tir_var_new(m, "j", MLC_DTYPE_I64);
  mlc_tir_var *k = mlc_tir_var_new(m, "k", MLC_DTYPE_I32), *A_var = mlc_tir_var_new(m, "A", MLC_DTYPE_I64);
  mlc_tir_var *t = mlc_tir_var_new(m, "t", MLC_DTYPE_I64);
  /* i inside i inside i: i, i_1, i_2; a variable named like a buffer: A_2 */
  mlc_tir_iter_var it = {i3, MLC_TIR_ITER_SPATIAL, I64(0), I64(4), REF(i2)};
  mlc_tir_expr *unfolded = raw_bin(m, MLC_TIR_ADD, raw_bin(m, MLC_TIR_MUL, I64(1), REF(i3)), I64(0));
  unfolded = raw_bin(m, MLC_TIR_FLOORDIV, raw_bin(m, MLC_TIR_FLOORMOD, unfolded, I64(1)), I64(1));
  mlc_tir_stmt *st = mlc_tir_store(m, A2, IDX(REF(i3)), raw_bin(m, MLC_TIR_SUB, unfolded, REF(i)));
  mlc_tir_stmt *blk = mlc_tir_block(m, "i", 1, &it, NULL, st);
  mlc_tir_stmt *l3 = mlc_tir_for(m, i2, I64(0), I64(4), MLC_TIR_FOR_PARALLEL, NULL, blk);
  mlc_tir_stmt *empty = mlc_tir_seq(m, 0, NULL);
  mlc_tir_stmt *la = mlc_tir_for(m, A_var, I64(0), I64(2), MLC_TIR_FOR_UNROLLED, NULL, empty);
  mlc_tir_stmt *nested = mlc_tir_seq2(m, l3, la); /* a seq inside a seq */
  mlc_tir_stmt *s1 = mlc_tir_for(m, i, I64(0), I64(4), MLC_TIR_FOR_SERIAL, NULL, nested);
  s1 = mlc_tir_seq2(m, s1, mlc_tir_evaluate(m, I64(1)));
  /* a grid broken by an extent that uses its variable; int32 loop bounds of
  ** one dtype (folded) and mixed dtypes (not); a thread binding without a tag */
  mlc_tir_stmt *inner = mlc_tir_store(m, Q, IDX(REF(j), mlc_tir_cast(m, MLC_DTYPE_I64, REF(k))),
                                      mlc_tir_int(m, MLC_DTYPE_I32, -7));
  mlc_tir_stmt *lk = mlc_tir_for(m, k, mlc_tir_int(m, MLC_DTYPE_I32, 2), mlc_tir_int(m, MLC_DTYPE_I32, 3),
                                 MLC_TIR_FOR_SERIAL, NULL, inner);
  mlc_tir_stmt *lt = mlc_tir_for(m, t, REF(j), I64(1), MLC_TIR_FOR_THREAD_BINDING, "threadIdx.x", lk);
  mlc_tir_stmt *lj = mlc_tir_for(m, j, I64(0), REF(i), MLC_TIR_FOR_SERIAL, NULL, lt);
  mlc_tir_var *ii = mlc_tir_var_new(m, "ii", MLC_DTYPE_I64);
  mlc_tir_stmt *s2 = mlc_tir_for(m, ii, I64(0), I64(2), MLC_TIR_FOR_SERIAL, NULL, lj);
  (void)s2;
  mlc_tir_stmt *li = mlc_tir_for(m, i, I64(0), I64(2), MLC_TIR_FOR_SERIAL, NULL, lj);
  /* a block with regions whose bounds mix dtypes */
  mlc_tir_var *vb = mlc_tir_var_new(m, "vb", MLC_DTYPE_I64), *b = mlc_tir_var_new(m, "b", MLC_DTYPE_I64);
  mlc_tir_iter_var itb = {vb, MLC_TIR_ITER_SPATIAL, mlc_tir_int(m, MLC_DTYPE_I32, 0), I64(2), REF(b)};
  mlc_tir_stmt *bst = mlc_tir_store(m, S, 0, NULL, mlc_tir_load(m, Q, IDX(REF(vb), I64(0))));
  mlc_tir_stmt *bb = mlc_tir_block(m, "regions", 1, &itb, NULL, bst);
  mlc_tir_expr *rmin[2] = {mlc_tir_int(m, MLC_DTYPE_I32, 1), REF(vb)};
  mlc_tir_expr *rext[2] = {I64(1), mlc_tir_int(m, MLC_DTYPE_I32, 2)};
  mlc_tir_region rr = {Q, 2, rmin, rext};
  mlc_tir_region rw = {S, 0, NULL, NULL};
  bb = mlc_tir_block_set_regions(m, bb, 1, &rr, 1, &rw);
  mlc_tir_stmt *lb = mlc_tir_for(m, b, I64(0), I64(2), MLC_TIR_FOR_SERIAL, NULL, bb);
  /* two sibling buffers named Y, then a use of the parameter named A */
  mlc_tir_stmt *y1 = mlc_tir_allocate(m, Y1, mlc_tir_store(m, Y1, IDX(I64(0)), mlc_tir_float(m, MLC_DTYPE_F64, 0.1)));
  mlc_tir_stmt *y2 = mlc_tir_allocate(m, Y2, mlc_tir_store(m, Y2, IDX(I64(1)), mlc_tir_float(m, MLC_DTYPE_F64, 1.0 / 3)));
  mlc_tir_stmt *fl = mlc_tir_store(
      m, A, IDX(I64(3)),
      mlc_tir_add(m, mlc_tir_float(m, MLC_DTYPE_F32, (double)0.1f),
                  mlc_tir_add(m, mlc_tir_float(m, MLC_DTYPE_F32, 5e-324), mlc_tir_float(m, MLC_DTYPE_F32, -0.0))));
  mlc_tir_stmt *all[] = {s1, li, lb, y1, y2, fl};
  mlc_tir_stmt *body = mlc_tir_seq(m, 6, all);
  mlc_tir_buffer *params[4] = {A, A2, Q, S};
  return mlc_tir_func_new(m, "tricky", 4, params, body);
}

static void test_built_trees(void) {
  mlc_tir_module *m = new_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = build_tricky(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  OK(mlc_tir_func_set_attr_str(m, f, "note", "tab\there \"q\" \\ \x01 caf\xc3\xa9"));
  OK(mlc_tir_func_set_attr_int(m, f, "min", INT64_MIN));
  OK(mlc_tir_verify_func(f));
  OK(mlc_tir_module_add(m, f));
  char *text = print_func(f);
  /* the printer's own forms that the parser must undo */
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "for i_1 in T.parallel(4):"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "i_2 = T.axis.spatial(4, i_1)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "A_1[i_2] = (1 * i_2 + 0) % 1 // 1 - i"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "for A_2 in T.unroll(2):\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "T.evaluate(0)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "for k in range(T.int32(2), T.int32(5)):"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "for t in T.thread_binding(j, j + 1, thread=\"threadIdx.x\"):"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "T.reads(Q[T.int32(1), vb:vb + T.int32(2)])"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "T.writes(S[])"));
  int ok = round_trip_module("tricky", m, NULL);
  CU_ASSERT(ok);
  if (!ok) printf("%s", text);
  free(text);
  mlc_tir_module_destroy(m);
}

/* Constants keep their dtype and value; names and kinds come back. */
static void test_parsed_tree(void) {
  static const char src[] =
      "@T.prim_func\n"
      "def f(A: T.Buffer((4,), \"int64\")):\n"
      "    for i in T.vectorized(T.int32(4)):\n"
      "        A[0] = 5 + T.Cast(\"int64\", T.int32(5)) + T.Cast(\"int64\", T.uint64(18446744073709551615)) + "
      "T.Cast(\"int64\", True) + -9223372036854775808\n";
  mlc_tir_module *m = new_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_tir_func *f = NULL;
  OK(mlc_tir_parse_func(m, src, sizeof src - 1, "f.tir", &f));
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(m->nfuncs, 0); /* parse_func does not add */
  CU_ASSERT_EQUAL(f->nparams, 1);
  mlc_tir_stmt *loop = f->body;
  CU_ASSERT_EQUAL_FATAL(loop->kind, MLC_TIR_FOR);
  CU_ASSERT_EQUAL(loop->loop.kind, MLC_TIR_FOR_VECTORIZED);
  CU_ASSERT_EQUAL(loop->loop.var->dtype, MLC_DTYPE_I32); /* the extent's */
  CU_ASSERT_STRING_EQUAL(loop->loop.var->name, "i");
  mlc_tir_stmt *st = loop->loop.body;
  CU_ASSERT_EQUAL_FATAL(st->kind, MLC_TIR_STORE);
  /* ((((5 + c1) + c2) + c3) + c4) */
  mlc_tir_expr *e = st->store.value, *terms[5];
  for (int n = 4; n > 0; n--) {
    CU_ASSERT_EQUAL_FATAL(e->kind, MLC_TIR_BINARY);
    terms[n] = e->bin.b;
    e = e->bin.a;
  }
  terms[0] = e;
  CU_ASSERT(terms[0]->kind == MLC_TIR_INT_IMM && terms[0]->dtype == MLC_DTYPE_I64 && terms[0]->int_value == 5);
  CU_ASSERT_EQUAL(terms[1]->kind, MLC_TIR_CAST);
  CU_ASSERT(terms[1]->un.a->dtype == MLC_DTYPE_I32 && terms[1]->un.a->int_value == 5);
  CU_ASSERT(terms[2]->un.a->dtype == MLC_DTYPE_U64 && terms[2]->un.a->int_value == -1);
  CU_ASSERT(terms[3]->un.a->dtype == MLC_DTYPE_BOOL && terms[3]->un.a->int_value == 1);
  CU_ASSERT(terms[4]->dtype == MLC_DTYPE_I64 && terms[4]->int_value == INT64_MIN);
  OK(mlc_tir_verify_func(f));

  /* scalars: from the comment, else from the first matching dimension */
  static const char sym[] =
      "@T.prim_func\n"
      "def g(var_X: T.handle, var_Y: T.handle):\n"
      "    n = T.int64()  # Y.shape[1]\n"
      "    k = T.int64()\n"
      "    X = T.match_buffer(var_X, (k, n), \"float32\")\n"
      "    Y = T.match_buffer(var_Y, (n, n), \"float32\")\n"
      "    Y[0, 0] = X[0, 0]\n";
  mlc_tir_func *g = NULL;
  OK(mlc_tir_parse_func(m, sym, sizeof sym - 1, "g.tir", &g));
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL_FATAL(g->nscalars, 2);
  CU_ASSERT(g->scalars[0].param == 1 && g->scalars[0].dim == 1);
  CU_ASSERT(g->scalars[1].param == 0 && g->scalars[1].dim == 0);
  char *back = print_func(g);
  CU_ASSERT_PTR_NOT_NULL(strstr(back, "k = T.int64()  # X.shape[0]\n"));
  free(back);

  /* a module: every function added, in order; duplicates refused */
  static const char two[] = "@T.prim_func\ndef a():\n    T.evaluate(0)\n\n@T.prim_func\ndef b():\n    T.evaluate(1)\n";
  OK(mlc_tir_parse_module(m, two, sizeof two - 1, "two.tir"));
  CU_ASSERT_EQUAL(m->nfuncs, 2);
  CU_ASSERT_PTR_NOT_NULL(mlc_tir_module_find(m, "a"));
  CU_ASSERT_PTR_NOT_NULL(mlc_tir_module_find(m, "b"));
  mlc_status s = mlc_tir_parse_module(m, two, sizeof two - 1, "two.tir");
  CU_ASSERT_PTR_NOT_NULL(s);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), "two.tir:1:1: prim func \"a\" is already in the module"));
  mlc_status_free(s);
  CU_ASSERT_EQUAL(m->nfuncs, 2);
  /* no NUL needed: the length bounds the input */
  static const char cut[] = "@T.prim_func\ndef c():\n    T.evaluate(0)\nGARBAGE";
  OK(mlc_tir_parse_module(m, cut, sizeof cut - 1 - 7, "cut.tir"));
  CU_ASSERT_PTR_NOT_NULL(mlc_tir_module_find(m, "c"));
  /* an empty text is an empty module, but not a function */
  OK(mlc_tir_parse_module(m, "", 0, "empty.tir"));
  mlc_tir_func *none = NULL;
  s = mlc_tir_parse_func(m, "\n# nothing\n", 11, "empty.tir", &none);
  CU_ASSERT_PTR_NOT_NULL(s);
  CU_ASSERT_PTR_NULL(none);
  mlc_status_free(s);
  mlc_tir_module_destroy(m);
}

/* ---- errors --------------------------------------------------------------------------------- */

#define HDR "@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"int64\")):\n"

typedef struct err_case {
  const char *src;
  const char *where; /* "LINE:COL" */
  const char *fragment;
} err_case;

static const err_case k_errors[] = {
    /* names */
    {HDR "    C[0] = A[0]\n", "3:5", "unknown buffer 'C'"},
    {HDR "    A[0] = x\n", "3:12", "unknown name 'x'"},
    {HDR "    for i in range(4):\n        i[0] = A[0]\n", "4:9", "'i' is a variable, not a buffer"},
    {HDR "    A[0] = A\n", "3:13", "expected '[' after a buffer name, got end of line"},
    /* calls */
    {HDR "    A[0] = T.exp(A[0], A[1])\n", "3:17", "T.exp takes 1 argument, got 2"},
    {HDR "    A[0] = T.pow(A[0])\n", "3:17", "T.pow takes 2 arguments, got 1"},
    {HDR "    A[0] = T.if_then_else(True, A[0])\n", "3:26", "T.if_then_else takes 3 arguments, got 2"},
    {HDR "    B[0] = T.min(B[0])\n", "3:17", "T.min takes 2 arguments, got 1"},
    {HDR "    A[0] = T.frobnicate(A[0])\n", "3:14", "unknown function T.frobnicate"},
    {HDR "    A[0] = T.sum(A[0])\n", "3:14", "T.sum takes (source, axis=[...])"},
    {HDR "    A[0] = T.Cast(\"float33\", B[0])\n", "3:19", "unknown dtype \"float33\""},
    {HDR "    A[0] = T.Cast(float32, B[0])\n", "3:19", "expected a dtype string, got 'float32'"},
    {HDR "    B[0] = T.int64()\n", "3:20", "expected an integer, got ')'"},
    {HDR "    A[0] = T.bool(1)\n", "3:14", "T.bool is not a constant type"},
    {HDR "    B[T.Ramp(0, 1, 4)] = T.Ramp(0, 1, 65)\n", "3:39", "T.Ramp lanes must be 2 to 64"},
    {HDR "    B[0] = T.Broadcast(B[0], 1)\n", "3:30", "T.Broadcast lanes must be 2 to 64"},
    {HDR "    B[0] = T.Broadcast(B[0])\n", "3:28", "expected ',' after the broadcast value"},
    {HDR "    B[0] = T.Ramp(0, 1)\n", "3:23", "expected ',' after the ramp's stride"},
    {HDR "    A[0] = T.Cast(\"float32x1\", A[0])\n", "3:19", "lanes must be 2 to 64"},
    {HDR "    A[0] = T.Cast(\"float32x99999999999\", A[0])\n", "3:19", "lanes must be 2 to 64"},
    {HDR "    A[0] = T.Cast(\"floatx4\", A[0])\n", "3:19", "unknown dtype \"floatx4\""},
    {"@T.prim_func\ndef f(A: T.Buffer((4,), \"float32x4\")):\n    T.evaluate(0)\n", "2:25", "unknown dtype \"float32x4\""},
    /* dtypes and numbers */
    {"@T.prim_func\ndef f(A: T.Buffer((4,), \"float33\")):\n    T.evaluate(0)\n", "2:25", "unknown dtype \"float33\""},
    {HDR "    B[0] = 99999999999999999999\n", "3:12", "integer 99999999999999999999 out of range for int64"},
    {HDR "    B[0] = 9223372036854775808\n", "3:12", "integer 9223372036854775808 out of range for int64"},
    {HDR "    B[0] = -9223372036854775809\n", "3:13", "integer -9223372036854775809 out of range for int64"},
    {HDR "    B[0] = T.Cast(\"int64\", T.int8(128))\n", "3:35", "integer 128 out of range for int8"},
    {HDR "    B[0] = T.Cast(\"int64\", T.uint8(-1))\n", "3:36", "integer -1 out of range for uint8"},
    {HDR "    B[0] = T.Cast(\"int64\", T.uint64(18446744073709551616))\n", "3:37", "integer 18446744073709551616 is too large"},
    {HDR "    A[0] = T.float32(1e999)\n", "3:22", "out of range of float64"},
    {HDR "    A[0] = T.float32(\"infinity\")\n", "3:22", "expected \"nan\", \"inf\" or \"-inf\""},
    {HDR "    A[0] = 1.5\n", "3:12", "a float constant is written T.float32(1.5)"},
    {HDR "    B[0] = 12abc\n", "3:12", "malformed number '12a'"},
    {HDR "    B[0] = T.int32(1.5)\n", "3:20", "expected an integer, got '1.5'"},
    {HDR "    B[0] = -B[0]\n", "3:12", "unary '-' applies only to an integer literal"},
    /* strings */
    {HDR "    T.func_attr({\"x: 1})\n    T.evaluate(0)\n", "3:18", "unterminated string"},
    {HDR "    T.func_attr({\"x\\q\": 1})\n    T.evaluate(0)\n", "3:20", "unknown escape '\\q' in string"},
    {HDR "    T.func_attr({\"x\\u00\": 1})\n    T.evaluate(0)\n", "3:20", "bad \\u escape"},
    {HDR "    T.func_attr({\"x\\u0000\": 1})\n    T.evaluate(0)\n", "3:20", "\\u0000 is not allowed"},
    {HDR "    T.func_attr({\"a\tb\": 1})\n    T.evaluate(0)\n", "3:20", "control character 0x09 in string"},
    {HDR "    T.func_attr({\"a\": 1, \"a\": 2})\n    T.evaluate(0)\n", "3:26", "duplicate attribute \"a\""},
    {HDR "    T.func_attr({\"a\": 99999999999999999999})\n    T.evaluate(0)\n", "3:23", "is too large"},
    {HDR "    T.func_attr({\"a\": 1.5})\n    T.evaluate(0)\n", "3:23", "expected a string, True, False or an integer"},
    /* brackets */
    {HDR "    A[0] = (A[0]\n", "3:12", "'(' is never closed"},
    {HDR "    A[0] = A[0])\n", "3:16", "unmatched ')'"},
    {HDR "    A[0] = (A[0]]\n", "3:17", "']' does not close '(' at 3:12"},
    {HDR "    A[0] = A[0] $ 1\n", "3:17", "unexpected character '$'"},
    {HDR "    A[0] = A[0] \x80\n", "3:17", "unexpected byte 0x80"},
    {HDR "    A[0] = A[0] +\n", "3:18", "expected an expression, got end of line"},
    {HDR "    B[0] = B[1] < B[2] < B[3]\n", "3:24", "comparisons do not chain"},
    /* layout and statements */
    {HDR "\tT.evaluate(0)\n", "3:1", "tab in indentation"},
    {HDR "    if True:\n        T.evaluate(0)\n      T.evaluate(1)\n", "5:7", "unindent does not match"},
    {HDR "    T.evaluate(0)\n        T.evaluate(1)\n", "4:9", "unexpected indent"},
    {HDR "    else:\n        T.evaluate(0)\n", "3:5", "'else' without 'if'"},
    {HDR "    T.where(True)\n", "3:5", "T.where belongs at the start of a block"},
    {HDR "    with T.init():\n        T.evaluate(0)\n", "3:10", "with T.init() outside a block's header"},
    {HDR "    for i in range(4):\n        with T.block(\"b\"):\n            A[i] = A[i]\n            vi = "
         "T.axis.spatial(4, i)\n", "6:13", "T.axis (of vi) belongs at the start of a block"},
    {HDR "    L = T.alloc_buffer((4,), \"float32\")\n", "3:5", "T.alloc_buffer L: no statement follows it"},
    {HDR "    L = T.alloc_buffer((4,), \"float32\", scope=\"texture\")\n    T.evaluate(0)\n", "3:47", "unknown scope \"texture\""},
    {HDR "    for i, j in T.grid(4):\n        T.evaluate(0)\n", "3:17", "T.grid has 1 extent for 2 loop variables"},
    {HDR "    for i, j in range(4):\n        T.evaluate(0)\n", "3:12", "only T.grid takes several loop variables"},
    {HDR "    for i in T.sequential(4):\n        T.evaluate(0)\n", "3:14", "expected range, T.grid, T.parallel"},
    {HDR "    for i in T.thread_binding(4):\n        T.evaluate(0)\n", "3:32", "expected ',' before thread="},
    {HDR "    for i in range(4):\n    T.evaluate(0)\n", "4:5", "expected an indented block, got 'T'"},
    {HDR "    assert True, (\"Op\", \"m\", 1, 2, 3, 4)\n", "3:39", "an assert reports at most 3 values"},
    {HDR "    assert True, (\"Op\")\n", "3:23", "expected ',' after the assert's op"},
    {HDR "    T.evaluate(0) T.evaluate(1)\n", "3:19", "expected end of line, got 'T'"},
    {HDR "    with T.block(\"b\"):\n        vi = T.axis.sideways(4, 0)\n        T.evaluate(0)\n", "4:21",
     "expected T.axis.spatial or T.axis.reduce"},
    {HDR "    with T.block(\"b\"):\n        T.reads(C[0])\n        T.evaluate(0)\n", "4:17", "unknown buffer 'C'"},
    {HDR, "3:1", "expected the function body, got end of input"},
    /* functions */
    {"def f():\n    T.evaluate(0)\n", "1:1", "expected @T.prim_func, got 'def'"},
    {"@T.prim_func\ndef f(A):\n    T.evaluate(0)\n", "2:8", "expected ':' after the parameter name"},
    {"@T.prim_func\ndef f(X: T.handle):\n    T.evaluate(0)\n", "2:7", "a T.handle parameter is named var_NAME"},
    {"@T.prim_func\ndef f(var_X: T.handle):\n    T.evaluate(0)\n", "2:5", "parameter var_X is never matched"},
    {"@T.prim_func\ndef f(var_X: T.handle):\n    X = T.match_buffer(var_Y, (4,), \"float32\")\n    T.evaluate(0)\n",
     "3:24", "'var_Y' is not an unmatched T.handle parameter"},
    {"@T.prim_func\ndef f(var_X: T.handle):\n    n = T.int64()\n    X = T.match_buffer(var_X, (4,), \"float32\")\n"
     "    T.evaluate(0)\n", "3:5", "scalar n is not a dimension of any parameter"},
    {"@T.prim_func\ndef f(var_X: T.handle):\n    n = T.int64()  # Z.shape[0]\n    X = T.match_buffer(var_X, (n,), "
     "\"float32\")\n    T.evaluate(0)\n", "3:5", "scalar n: no parameter named Z"},
    {"@T.prim_func\ndef f(var_X: T.handle):\n    n = T.int64()  # X.shape[3]\n    X = T.match_buffer(var_X, (n,), "
     "\"float32\")\n    T.evaluate(0)\n", "3:5", "scalar n bound to shape[3] of param 0, which does not exist"},
    {"@T.prim_func\ndef f(var_X: T.handle):\n    n = T.float32()\n    T.evaluate(0)\n", "3:11",
     "a scalar parameter is an integer, not float32"},
    {"@T.prim_func\ndef f():\n    T.evaluate(0)\n@T.prim_func\ndef f():\n    T.evaluate(0)\n", "4:1",
     "duplicate prim func \"f\""},
};

static void check_error(const char *src, size_t len, const char *where, const char *fragment) {
  mlc_tir_module *m = new_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_status s = mlc_tir_parse_module(m, src, len, "bad.tir");
  char loc[64];
  snprintf(loc, sizeof loc, "bad.tir:%s: ", where);
  const char *msg = s ? mlc_status_message(s) : "(no error)";
  int ok = s && mlc_status_code(s) == MLC_INVALID_ARGUMENT && strncmp(msg, loc, strlen(loc)) == 0 &&
           strstr(msg, fragment);
  if (!ok) printf("\n  input:\n%s\n  want: %s...%s\n  got:  %s\n", src, loc, fragment, msg);
  CU_ASSERT(ok);
  CU_ASSERT_EQUAL(m->nfuncs, 0);
  mlc_status_free(s);
  mlc_tir_module_destroy(m);
}

static void test_errors(void) {
  for (size_t i = 0; i < sizeof k_errors / sizeof k_errors[0]; i++)
    check_error(k_errors[i].src, strlen(k_errors[i].src), k_errors[i].where, k_errors[i].fragment);
}

/* |n| copies of |unit| between |pre| and |post| (malloc'd). */
static char *repeat(const char *pre, const char *unit, int n, const char *mid, const char *unit2, const char *post) {
  size_t len = strlen(pre) + (strlen(unit) + strlen(unit2)) * (size_t)n + strlen(mid) + strlen(post) + 1;
  char *s = malloc(len), *q = s;
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  q += sprintf(q, "%s", pre);
  for (int i = 0; i < n; i++) q += sprintf(q, "%s", unit);
  q += sprintf(q, "%s", mid);
  for (int i = 0; i < n; i++) q += sprintf(q, "%s", unit2);
  sprintf(q, "%s", post);
  return mlc_test_hold(s);
}

/* Nesting is bounded: deep brackets, operators, indentation; within the
** bound the same forms parse. */
static void test_deep_nesting(void) {
  char *s = repeat(HDR "    A[0] = ", "(", 300, "A[0]", ")", "\n");
  check_error(s, strlen(s), "3:268", "brackets nested too deeply");
  free(s);
  s = repeat(HDR "    A[0] = ", "T.exp(", 300, "A[0]", ")", "\n");
  check_error(s, strlen(s), "3:1553", "brackets nested too deeply");
  free(s);
  s = repeat(HDR "    B[0] = ", "not ", 300, "True", "", "\n");
  check_error(s, strlen(s), "3:1032", "expression nested too deeply");
  free(s);
  s = repeat(HDR "    B[0] = B[0]", " + 1", 300, "", "", "\n");
  check_error(s, strlen(s), "3:1033", "expression nested too deeply");
  free(s);
  /* if True: nested 300 deep, one more space each */
  size_t cap = 400 * 320, len = 0;
  char *t = mlc_test_hold(malloc(cap));
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  len += (size_t)sprintf(t, "%s", HDR);
  for (int i = 0; i < 300; i++) len += (size_t)sprintf(t + len, "%*sif True:\n", i + 1, "");
  len += (size_t)sprintf(t + len, "%*sT.evaluate(0)\n", 301, "");
  check_error(t, len, "259:258", "indented too deeply");
  /* grids multiply the loop depth */
  len = (size_t)sprintf(t, "%s    for ", HDR);
  for (int i = 0; i < 300; i++) len += (size_t)sprintf(t + len, "%si%d", i ? ", " : "", i);
  len += (size_t)sprintf(t + len, " in T.grid(");
  for (int i = 0; i < 300; i++) len += (size_t)sprintf(t + len, "%s1", i ? ", " : "");
  len += (size_t)sprintf(t + len, "):\n        T.evaluate(0)\n");
  check_error(t, len, "3:1435", "too many loop variables");
  free(t);
  /* within the bound */
  s = repeat(HDR "    B[0] = ", "(", 200, "B[0]", ")", "\n");
  mlc_tir_module *m = new_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  OK(mlc_tir_parse_module(m, s, strlen(s), "deep.tir"));
  free(s);
  mlc_tir_module_destroy(m);
  m = new_module();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  s = repeat(HDR "    B[0] = B[0]", " + 1", 200, "", "", "\n");
  OK(mlc_tir_parse_module(m, s, strlen(s), "deep.tir"));
  free(s);
  mlc_tir_module_destroy(m);
}

/* The fuzz target's findings (tests/malformed/tir/MANIFEST): each file gives
** the error at the line and column named with the fragment in its message,
** or with OK parses and round-trips. */
static void test_fuzz_cases(void) {
  char *manifest = mlc_test_read_file(mlc_test_src_path("tests/malformed/tir/MANIFEST"), NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(manifest);
  mlc_test_hold(manifest);
  int cases = 0;
  char *save = NULL;
  for (char *line = strtok_r(manifest, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#' || !line[0]) continue;
    char file[128], where[32];
    int off = 0;
    if (sscanf(line, "%127s %31s %n", file, where, &off) != 2) {
      printf("\n  MANIFEST: malformed line: %s\n", line);
      CU_FAIL("malformed MANIFEST line");
      continue;
    }
    char rel[256];
    snprintf(rel, sizeof rel, "tests/malformed/tir/%s", file);
    size_t len = 0;
    char *text = mlc_test_read_file(mlc_test_src_path(rel), &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    mlc_test_hold(text);
    if (strcmp(where, "OK") == 0) {
      CU_ASSERT(round_trip_text(rel, text));
    } else {
      check_error(text, len, where, line + off);
    }
    free(text);
    cases++;
  }
  free(manifest);
  CU_ASSERT(cases > 0);
}

/* ---- models ------------------------------------------------------------------------------ */

typedef struct rt_count {
  int models, compiled, funcs, scheduled, failed;
} rt_count;

/* Imports, runs the graph pipeline, legalizes and schedules |path| and
** round-trips the TIR after legalization and after scheduling.  Models the
** compiler refuses are counted but not compiled. */
static void round_trip_model(const char *path, rt_count *c) {
  mlc_onnx_model *om = NULL;
  mlc_module *gm = NULL;
  mlc_tir_module *tm = NULL;
  c->models++;
  mlc_status s = mlc_onnx_load_file(path, &om);
  if (!s) s = mlc_fe_import(om, NULL, &gm);
  if (!s) s = mlc_graph_pipeline(gm, NULL);
  if (!s) s = mlc_tir_module_create(mlc_allocator_default(), &tm);
  if (!s) s = mlc_lower_legalize(gm, tm, NULL);
  if (!s) {
    c->compiled++;
    char what[512];
    snprintf(what, sizeof what, "%s (legalized)", path);
    int n = 0;
    if (!round_trip_module(what, tm, &n)) c->failed++;
    c->funcs += n;
    s = mlc_lower_default_schedule(tm, NULL, NULL);
    if (!s) {
      snprintf(what, sizeof what, "%s (scheduled)", path);
      n = 0;
      if (!round_trip_module(what, tm, &n)) c->failed++;
      c->scheduled += n;
    }
  }
  mlc_status_free(s);
  mlc_tir_module_destroy(tm);
  mlc_module_destroy(gm);
  mlc_onnx_model_destroy(om);
}

static void test_bundled_models(void) {
  static const char *const models[] = {"models/mlp.onnx", "models/mlp_dyn.onnx", "models/cnn.onnx",
                                       "models/encoder.onnx"};
  rt_count c = {0, 0, 0, 0, 0};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) round_trip_model(mlc_test_src_path(models[i]), &c);
  printf("\n  bundled models: %d of %d compiled; prim functions round-tripped: %d legalized, %d scheduled; "
         "%d modules failed\n",
         c.compiled, c.models, c.funcs, c.scheduled, c.failed);
  CU_ASSERT_EQUAL(c.compiled, c.models);
  CU_ASSERT(c.funcs > 0 && c.scheduled == c.funcs);
  CU_ASSERT_EQUAL(c.failed, 0);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every model.onnx of $MLC_TIR_PARSE_SUITE/test_* (the conformance suite). */
static void test_conformance_models(void) {
  const char *dir = getenv("MLC_TIR_PARSE_SUITE");
  if (!dir || !*dir) {
    printf("\n  MLC_TIR_PARSE_SUITE not set: conformance models not round-tripped here "
           "(tests/unit/tir_parse_conformance.sh does)\n");
    return;
  }
  DIR *d = opendir(dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  char **names = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (strncmp(e->d_name, "test_", 5) != 0) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 1024;
      char **nn = realloc(names, cap * sizeof *nn);
      CU_ASSERT_PTR_NOT_NULL_FATAL(nn);
      names = nn;
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_str);
  rt_count c = {0, 0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, names[i]);
    FILE *f = fopen(path, "rb");
    if (f) {
      fclose(f);
      round_trip_model(path, &c);
    }
    free(names[i]);
  }
  free(names);
  printf("\n  conformance models: %d of %d compiled; prim functions round-tripped: %d legalized, %d scheduled; "
         "%d modules failed\n",
         c.compiled, c.models, c.funcs, c.scheduled, c.failed);
  CU_ASSERT(c.models >= 900);
  CU_ASSERT(c.funcs > 0 && c.scheduled == c.funcs);
  CU_ASSERT_EQUAL(c.failed, 0);
}

/* ---- registration ------------------------------------------------------------------------ */

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"text_forms", test_text_forms},
                                      {"built_trees", test_built_trees},
                                      {"parsed_tree", test_parsed_tree},
                                      {"errors", test_errors},
                                      {"deep_nesting", test_deep_nesting},
                                      {"fuzz_cases", test_fuzz_cases},
                                      {"goldens", test_goldens},
                                      {"bundled_models", test_bundled_models},
                                      {"conformance_models", test_conformance_models},
                                      {NULL, NULL}};
  mlc_test_add_suite("tir_parse", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_tir_parse", fns);
}
