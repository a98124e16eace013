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
** and column and what was wrong.
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
  return m;
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

static void test_text_forms(void) {
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

/* ---- models ------------------------------------------------------------------------------ */

typedef struct rt_count {
  int models, compiled, funcs, failed;
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
    s = mlc_lower_default_schedule(tm, NULL);
    if (!s) {
      snprintf(what, sizeof what, "%s (scheduled)", path);
      n = 0;
      if (!round_trip_module(what, tm, &n)) c->failed++;
      c->funcs += n;
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
  rt_count c = {0, 0, 0, 0};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) round_trip_model(mlc_test_src_path(models[i]), &c);
  printf("\n  bundled models: %d of %d compiled, %d prim functions round-tripped, %d failed\n", c.compiled,
         c.models, c.funcs, c.failed);
  CU_ASSERT_EQUAL(c.compiled, c.models);
  CU_ASSERT(c.funcs > 0);
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
  rt_count c = {0, 0, 0, 0};
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
  printf("\n  conformance models: %d of %d compiled, %d prim functions round-tripped, %d failed\n", c.compiled,
         c.models, c.funcs, c.failed);
  CU_ASSERT(c.models >= 900);
  CU_ASSERT(c.funcs > 0);
  CU_ASSERT_EQUAL(c.failed, 0);
}

/* ---- registration ------------------------------------------------------------------------ */

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"text_forms", test_text_forms},
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
