/*
** test_graph.c: unit and golden tests of the graph IR's printer, Graphviz
** output, verifier, pass manager and the fold_constant, dce and plan_memory
** passes.
**
** Golden tests: each case builds a module in C, runs a list of passes (or
** none) and compares the printed text with tests/golden/<dir>/<case>.out
** under $MLC_SRCDIR.  Pass cases print the module before and after.  With
** MLC_UPDATE_GOLDEN=1 the files are rewritten instead (tests/golden/README.md).
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/graph.h"
#include "graph/pass.h"
#include "tests/graph_lit.h"
#include "tests/testutil.h"

/* ---- helpers -------------------------------------------------------------- */


#define OK(expr) MLC_TEST_OK(expr)
#define EXPECT_ERR(expr, ...) MLC_TEST_ERR((expr), MLC_OK, __VA_ARGS__)

static mlc_module *new_module(void) {
  mlc_module *m = NULL;
  if (!OK(mlc_module_create(mlc_allocator_default(), &m))) return NULL;
  return mlc_test_hold(m);
}

/* Adds a constant of |t|: |data| copied, or zeros when NULL. */
static mlc_status cst(mlc_module *m, const char *name, mlc_type t, const void *data, mlc_value **out) {
  size_t nb = (size_t)mlc_type_numel(&t) * mlc_dtype_size(t.dtype);
  void *zeros = data ? NULL : calloc(1, nb ? nb : 1);
  if (!data && !zeros) return mlc_oom();
  mlc_status s = mlc_module_add_const(m, name, &t, data ? data : zeros, nb, out);
  free(zeros);
  return s;
}

/* The module's text (malloc'd). */
static char *print_module(const mlc_module *m) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_graph_print(m, &b);
  CU_ASSERT(!b.oom);
  char *s = strdup(mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return s;
}

/* Whether mlc_graph_eval can add two float32 vectors (it is being written). */
static int have_eval(void) {
  static int cached = -1;
  if (cached >= 0) return cached;
  mlc_module *m = new_module();
  cached = 0;
  if (!m) return 0;
  float a[2] = {1, 2}, b[2] = {3, 4};
  mlc_value *va, *vb;
  if (OK(cst(m, "a", TY(F32, 2), a, &va)) && OK(cst(m, "b", TY(F32, 2), b, &vb))) {
    mlc_value *args[2] = {va, vb};
    mlc_call_info ci = {m, MLC_OP_ADD, 2, args, 0, NULL, NULL};
    mlc_type t = va->type;
    const void *in[2] = {a, b};
    void *out[1] = {NULL};
    mlc_status s = mlc_graph_eval(&ci, &t, 1, in, out);
    if (!s) {
      float *o = out[0];
      cached = o[0] == 4 && o[1] == 6;
      mlc_const_free(m, out[0], sizeof a);
    }
    mlc_status_free(s);
  }
  mlc_module_destroy(m);
  return cached;
}

/* ---- golden cases: builders ------------------------------------------------------ */

/* The MLP of the printer's example: symbolic batch, big constants. */
static mlc_status build_mlp(mlc_module *m) {
  int64_t n;
  mlc_func *f;
  mlc_value *x, *w1, *b1, *w2, *b2, *v;
  TRY(mlc_module_sym(m, "n", &n));
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, n, 784), &x));
  TRY(cst(m, "fc1.weight", TY(F32, 784, 128), NULL, &w1));
  TRY(cst(m, "fc1.bias", TY(F32, 128), NULL, &b1));
  TRY(cst(m, "fc2.weight", TY(F32, 128, 10), NULL, &w2));
  TRY(cst(m, "fc2.bias", TY(F32, 10), NULL, &b2));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(x, w1), NOATTRS, ORG("MatMul", "fc1"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, b1), NOATTRS, ORG("Add", "fc1.add"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(v), NOATTRS, ORG("Relu", "relu1"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(v, w2), NOATTRS, ORG("MatMul", "fc2"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, b2), NOATTRS, ORG("Add", "fc2.add"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_SOFTMAX, ARGS(v), ATTRS(mlc_attr_int("axis", 1)), ORG("Softmax", "prob"), &v));
  return mlc_func_add_ret(f, v);
}

/* A small CNN: conv with attributes, pooling, reshape, gemm. */
static mlc_status build_conv_net(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w1, *b1, *w2, *w3, *b3, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "input.1", &TY(F32, 1, 3, 32, 32), &x));
  TRY(cst(m, "conv1.weight", TY(F32, 16, 3, 3, 3), NULL, &w1));
  TRY(cst(m, "conv1.bias", TY(F32, 16), NULL, &b1));
  TRY(cst(m, "dw.weight", TY(F32, 16, 1, 3, 3), NULL, &w2));
  TRY(cst(m, "fc.weight", TY(F32, 1024, 10), NULL, &w3));
  TRY(cst(m, "fc.bias", TY(F32, 10), NULL, &b3));
  TRY(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(x, w1, b1),
                      ATTRS(INTS("strides", 1, 1), INTS("pads", 1, 1, 1, 1), INTS("dilations", 1, 1),
                            mlc_attr_int("groups", 1)),
                      ORG("Conv", "conv1"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(v), NOATTRS, ORG("Relu", "relu1"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MAX_POOL, ARGS(v),
                      ATTRS(INTS("kernel", 2, 2), INTS("strides", 2, 2), INTS("pads", 0, 0, 0, 0)),
                      ORG("MaxPool", "pool1"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(v, w2),
                      ATTRS(INTS("strides", 2, 2), INTS("pads", 1, 1, 1, 1), mlc_attr_int("groups", 16)),
                      ORG("Conv", "dwconv"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_AVG_POOL, ARGS(v),
                      ATTRS(INTS("kernel", 2, 2), INTS("strides", 1, 1), INTS("pads", 0, 0, 1, 1),
                            mlc_attr_int("count_include_pad", 0)),
                      ORG("AveragePool", ""), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(v), ATTRS(INTS("shape", 1, 1024)), ORG("Flatten", "flat"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(v, w3), NOATTRS, ORG("Gemm", "fc"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, b3), NOATTRS, ORG("Gemm", "fc"), &v));
  return mlc_func_add_ret(f, v);
}

/* Inline constants of several dtypes and attributes of every kind. */
static mlc_status build_attrs_consts(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *half, *mat, *idx, *cond, *h, *v, *w, *u;
  float halfv = 0.5f, matv[4] = {1, 2.5f, -3, 0.1f};
  int64_t idxv[2] = {1, 0};
  unsigned char condv[4] = {1, 0, 0, 1};
  uint16_t hv = 0x3e00; /* 1.5 in IEEE half */
  int64_t n;
  TRY(mlc_module_sym(m, "batch", &n));
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 2, 2), &x));
  TRY(cst(m, "half", TY0(F32), &halfv, &half));
  TRY(cst(m, "mat", TY(F32, 2, 2), matv, &mat));
  TRY(cst(m, "idx", TY(I64, 2), idxv, &idx));
  TRY(cst(m, "cond", TY(BOOL, 2, 2), condv, &cond));
  TRY(cst(m, "h", TY0(F16), &hv, &h));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(x, half), NOATTRS, ORG("Mul", "scale"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, mat), NOATTRS, NULL, &v));
  TRY(mlc_graph_emit1(f, MLC_OP_LEAKY_RELU, ARGS(v), ATTRS(mlc_attr_float("alpha", 0.01)), NULL, &v));
  TRY(mlc_graph_emit1(f, MLC_OP_CLIP, ARGS(v), ATTRS(mlc_attr_float("min", 0), mlc_attr_float("max", 6)),
                      ORG("Clip", "relu6"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_GATHER, ARGS(v, idx), ATTRS(mlc_attr_int("axis", 0)), ORG("Gather", ""), &w));
  TRY(mlc_graph_emit1(f, MLC_OP_WHERE, ARGS(cond, v, w), NOATTRS, NULL, &v));
  TRY(mlc_graph_emit1(f, MLC_OP_PAD, ARGS(v),
                      ATTRS(INTS("pads", 0, 1, 0, 1), mlc_attr_str("mode", "reflect")), ORG("Pad", "pad"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_CAST, ARGS(v), ATTRS(mlc_attr_int("dtype", MLC_DTYPE_F16)), ORG("Cast", ""), &u));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(u, h), NOATTRS, NULL, &u));
  TRY(mlc_graph_emit_call(f, MLC_CALL_DPS_PACKED, "my.plugin", ARGS(u),
                          ATTRS(mlc_attr_str("note", "say \"hi\"\n"), FLOATS("scales", 0.5, 2, 1e-7),
                                INTS("shape", n, 8)),
                          &TY(F16, 2, 3), 1, ORG("Custom", "plug"), &u));
  return mlc_func_add_ret(f, u);
}

/* The lowered form: call_tir (one and two outputs) and call_dps_packed. */
static mlc_status build_call_tir(mlc_module *m) {
  int64_t n;
  mlc_func *f;
  mlc_value *x, *w, *v, *o[2], *g;
  TRY(mlc_module_sym(m, "n", &n));
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "data", &TY(F32, n, 3, 224, 224), &x));
  TRY(cst(m, "conv.weight", TY(F32, 64, 3, 7, 7), NULL, &w));
  TRY(mlc_graph_emit_call(f, MLC_CALL_TIR, "fused_conv_relu", ARGS(x, w), NOATTRS,
                          &TY(F32, n, 64, 112, 112), 1, ORG("Conv", "conv1"), &v));
  TRY(mlc_graph_emit_call(f, MLC_CALL_TIR, "split2", ARGS(v), NOATTRS,
                          (mlc_type[]){TY(F32, n, 32, 112, 112), TY(F32, n, 32, 112, 112)}, 2, NULL, o));
  TRY(mlc_graph_emit_call(f, MLC_CALL_DPS_PACKED, "openblas.sgemm", ARGS(o[0], o[1]),
                          ATTRS(mlc_attr_int("transpose_b", 1)), &TY(F32, n, 32, 112, 112), 1,
                          ORG("MatMul", "mm"), &g));
  TRY(mlc_func_add_ret(f, g));
  return mlc_func_add_ret(f, o[1]);
}

/* Parameter names: sanitized, unique, never clashing with generated names. */
static mlc_status build_names(mlc_module *m) {
  static const char *const names[] = {"input:0", "1st", "lv0", "x", "x", "", "class", "gv", "c1", "x_1"};
  mlc_func *f, *g;
  mlc_value *p[10], *c, *v, *k;
  TRY(mlc_func_create(m, "main", &f));
  for (int i = 0; i < 10; i++) TRY(mlc_func_add_param(f, names[i][0] ? names[i] : NULL, &TY(F32, 4), &p[i]));
  TRY(cst(m, "big", TY(F32, 16), NULL, &c));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(p[0], p[1]), NOATTRS, NULL, &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, p[2]), NOATTRS, NULL, &k));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(k, p[3]), NOATTRS, NULL, &v));
  TRY(mlc_func_add_ret(f, v));
  TRY(mlc_func_add_ret(f, p[4]));
  TRY(mlc_func_add_ret(f, c));
  TRY(mlc_func_add_ret(f, v));
  TRY(mlc_func_add_ret(f, k));
  /* A second function: names are per function. */
  TRY(mlc_func_create(m, "helper", &g));
  TRY(mlc_func_add_param(g, "x", &TY(F32, 16), &p[0]));
  TRY(mlc_graph_emit1(g, MLC_OP_EXP, ARGS(p[0]), NOATTRS, NULL, &v));
  TRY(mlc_graph_emit1(g, MLC_OP_ADD, ARGS(v, c), NOATTRS, NULL, &v));
  return mlc_func_add_ret(g, v);
}

/* dce: a dead chain, and constants only the dead chain used. */
static mlc_status build_dead_chain(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *c0, *c1, *c2, *d, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 16), &x));
  TRY(cst(m, "unused", TY(F32, 16), NULL, &c0));
  TRY(cst(m, "w", TY(F32, 16), NULL, &c1));
  TRY(cst(m, "dead_only", TY(F32, 16), NULL, &c2));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(x), NOATTRS, ORG("Relu", "dead1"), &d));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(x, c1), NOATTRS, ORG("Mul", "live1"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(d, c2), NOATTRS, ORG("Add", "dead2"), &d));
  TRY(mlc_graph_emit1(f, MLC_OP_EXP, ARGS(d), NOATTRS, ORG("Exp", "dead3"), &d));
  TRY(mlc_graph_emit1(f, MLC_OP_SIGMOID, ARGS(v), NOATTRS, ORG("Sigmoid", "live2"), &v));
  return mlc_func_add_ret(f, v);
}

/* dce: a two-output call with one output used stays; a dead extern call goes. */
static mlc_status build_multi_output(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w, *o[2], *d, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 8, 8), &x));
  TRY(cst(m, "w", TY(F32, 8, 8), NULL, &w));
  TRY(mlc_graph_emit_call(f, MLC_CALL_TIR, "split_rows", ARGS(x), NOATTRS,
                          (mlc_type[]){TY(F32, 4, 8), TY(F32, 4, 8)}, 2, ORG("Split", "split"), o));
  TRY(mlc_graph_emit_call(f, MLC_CALL_DPS_PACKED, "ext.gemm", ARGS(o[0], w), NOATTRS, &TY(F32, 4, 8), 1,
                          ORG("MatMul", "unused_mm"), &d));
  TRY(mlc_graph_emit_call(f, MLC_CALL_TIR, "relu_4x8", ARGS(o[1]), NOATTRS, &TY(F32, 4, 8), 1, NULL, &v));
  return mlc_func_add_ret(f, v);
}

/* dce: two functions sharing the constant table; a function left without
** bindings loses its (empty) block. */
static mlc_status build_two_funcs(mlc_module *m) {
  mlc_func *f, *g;
  mlc_value *x, *y, *c[4], *v, *d;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_create(m, "aux", &g));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 4), &x));
  TRY(mlc_func_add_param(g, "y", &TY(F32, 4), &y));
  TRY(cst(m, "dead_in_main", TY(F32, 4, 4), NULL, &c[0]));
  TRY(cst(m, "used_by_aux", TY(F32, 4, 4), NULL, &c[1]));
  TRY(cst(m, "used_by_main", TY(F32, 4, 4), NULL, &c[2]));
  TRY(cst(m, "never_used", TY(F32, 4, 4), NULL, &c[3]));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(x, c[0]), NOATTRS, NULL, &d));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(x, c[2]), NOATTRS, NULL, &v));
  TRY(mlc_func_add_ret(f, v));
  TRY(mlc_func_add_ret(f, c[1]));
  TRY(mlc_graph_emit1(g, MLC_OP_MATMUL, ARGS(y, c[1]), NOATTRS, NULL, &d));
  TRY(mlc_graph_emit1(g, MLC_OP_NEG, ARGS(d), NOATTRS, NULL, &d));
  return mlc_func_add_ret(g, y);
}

/* fold_constant: a chain of constant ops feeding a use of the param. */
static mlc_status build_fold_chain(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *a, *b, *two, *v;
  float av[3] = {1, 2, 3}, bv[3] = {10, 20, 30}, twov = 2;
  m->fold = 0; /* leave the folding to the pass */
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 3), &x));
  TRY(cst(m, "a", TY(F32, 3), av, &a));
  TRY(cst(m, "b", TY(F32, 3), bv, &b));
  TRY(cst(m, "two", TY0(F32), &twov, &two));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(a, b), NOATTRS, ORG("Add", "ab"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(v, two), NOATTRS, ORG("Mul", "ab2"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(x, v), NOATTRS, ORG("Add", "out"), &v));
  return mlc_func_add_ret(f, v);
}

/* fold_constant: what stays: matmul/conv (OUT_EWISE_FUSABLE), uses of
** params, outputs above the size limit. */
static mlc_status build_fold_keep(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *a, *b, *s, *v, *big;
  float av[4] = {1, 2, 3, 4}, sv = 1;
  m->fold = 0;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 2, 2), &x));
  TRY(cst(m, "a", TY(F32, 2, 2), av, &a));
  TRY(cst(m, "b", TY(F32, 2, 2), av, &b));
  TRY(cst(m, "s", TY0(F32), &sv, &s));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(a, b), NOATTRS, ORG("MatMul", "const_mm"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(v), NOATTRS, NULL, &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, x), NOATTRS, NULL, &v));
  TRY(mlc_graph_emit1(f, MLC_OP_BROADCAST_TO, ARGS(s), ATTRS(INTS("shape", 8192, 8193)), ORG("Expand", "huge"),
                      &big));
  TRY(mlc_func_add_ret(f, v));
  return mlc_func_add_ret(f, big);
}

/* fold_constant then dce: folded values returned and used twice; the
** constants they came from are dropped. */
static mlc_status build_fold_dce(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *a, *b, *n, *v, *w;
  float av[4] = {1, -2, 3, -4}, bv[2] = {0.5f, 0.25f};
  m->fold = 0;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 2, 2), &x));
  TRY(cst(m, "a", TY(F32, 2, 2), av, &a));
  TRY(cst(m, "b", TY(F32, 2), bv, &b));
  TRY(mlc_graph_emit1(f, MLC_OP_NEG, ARGS(a), NOATTRS, ORG("Neg", "neg"), &n));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(n), NOATTRS, ORG("Relu", "r"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(v, b), NOATTRS, ORG("Mul", "scaled"), &w));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(x, w), NOATTRS, ORG("Add", "sum"), &w));
  TRY(mlc_graph_emit1(f, MLC_OP_SUB, ARGS(w, n), NOATTRS, ORG("Sub", "diff"), &w));
  TRY(mlc_func_add_ret(f, w));
  return mlc_func_add_ret(f, v);
}

typedef struct golden_case {
  const char *dir;    /* tests/golden/<dir>/ */
  const char *name;   /* <name>.out */
  mlc_status (*build)(mlc_module *m);
  const char *passes; /* comma-separated, NULL: print only */
  int needs_eval;     /* skipped while mlc_graph_eval is a stub */
} golden_case;

static const golden_case golden_cases[] = {
    {"print", "mlp", build_mlp, NULL, 0},
    {"print", "conv_net", build_conv_net, NULL, 0},
    {"print", "attrs_consts", build_attrs_consts, NULL, 0},
    {"print", "call_tir", build_call_tir, NULL, 0},
    {"print", "names", build_names, NULL, 0},
    {"dce", "dead_chain", build_dead_chain, "dce", 0},
    {"dce", "multi_output", build_multi_output, "dce", 0},
    {"dce", "two_funcs", build_two_funcs, "dce", 0},
    {"fold_constant", "chain", build_fold_chain, "fold_constant", 1},
    {"fold_constant", "keep", build_fold_keep, "fold_constant", 0},
    {"fold_constant", "fold_then_dce", build_fold_dce, "fold_constant,dce", 1},
    {NULL, NULL, NULL, NULL, 0},
};

/* ---- golden cases: runner ------------------------------------------------------ */

/* Runs the comma-separated |list| of passes with verification. */
static mlc_status run_pass_list(mlc_module *m, const char *list) {
  mlc_pass passes[16];
  int n = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < 16; t = strtok_r(NULL, ",", &save)) {
    const mlc_pass *p = mlc_pass_find(t);
    if (!p) return mlc_make_status(MLC_NOT_FOUND, "unknown pass %s", t);
    passes[n++] = *p;
  }
  mlc_pass_ctx ctx = {1, NULL, NULL, NULL};
  return mlc_pass_run(m, passes, n, &ctx);
}

/* The text a case produces (malloc'd), or NULL after reporting a failure. */
static char *golden_text(const golden_case *gc) {
  mlc_module *m = new_module();
  if (!m) return NULL;
  char *text = NULL;
  mlc_status s = gc->build(m);
  if (s) {
    printf("\n  golden %s/%s: building the module failed: %s\n", gc->dir, gc->name, mlc_status_message(s));
    mlc_status_free(s);
    CU_FAIL("golden case build");
    goto out;
  }
  if (!OK(mlc_graph_verify(m))) goto out;
  mlc_strbuf b = MLC_STRBUF_INIT;
  if (gc->passes) mlc_sb_puts(&b, "# ==== before ====\n");
  mlc_graph_print(m, &b);
  if (gc->passes) {
    if (!OK(run_pass_list(m, gc->passes))) {
      mlc_sb_fini(&b);
      goto out;
    }
    mlc_sb_printf(&b, "# ==== after %s ====\n", gc->passes);
    mlc_graph_print(m, &b);
  }
  CU_ASSERT(!b.oom);
  text = strdup(mlc_sb_str(&b));
  mlc_sb_fini(&b);
out:
  mlc_module_destroy(m);
  return text;
}

/* Line |n| (1-based) of |s| into |out|, "<end of file>" past the end. */
static void nth_line(const char *s, int n, char *out, size_t size) {
  for (int i = 1; i < n && s; i++) {
    s = strchr(s, '\n');
    if (s) s++;
  }
  if (!s || !*s) {
    snprintf(out, size, "<end of file>");
    return;
  }
  const char *e = strchr(s, '\n');
  size_t len = e ? (size_t)(e - s) : strlen(s);
  snprintf(out, size, "%.*s", (int)(len < size - 1 ? len : size - 1), s);
}

/* Reports the first line where |want| and |got| differ. */
static void report_diff(const char *path, const char *want, const char *got) {
  int line = 1;
  const char *a = want, *b = got;
  while (*a && *a == *b) {
    if (*a == '\n') line++;
    a++;
    b++;
  }
  char el[512], gl[512];
  nth_line(want, line, el, sizeof el);
  nth_line(got, line, gl, sizeof gl);
  printf("\n  golden mismatch: %s\n  first difference at line %d:\n    expected: %s\n    got:      %s\n"
         "  (rerun with MLC_UPDATE_GOLDEN=1 to accept the new output)\n",
         path, line, el, gl);
}

static void ensure_dir(const char *rel) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", mlc_test_src_path(rel));
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(buf, 0777);
      *p = '/';
    }
  mkdir(buf, 0777);
}

static void test_golden(void) {
  const char *upd = getenv("MLC_UPDATE_GOLDEN");
  int update = upd && strcmp(upd, "1") == 0;
  int eval = have_eval();
  for (const golden_case *gc = golden_cases; gc->dir; gc++) {
    if (gc->needs_eval && !eval) {
      printf("\n  golden %s/%s: skipped (no constant evaluator yet)", gc->dir, gc->name);
      continue;
    }
    char rel[512];
    snprintf(rel, sizeof rel, "tests/golden/%s/%s.out", gc->dir, gc->name);
    char *got = golden_text(gc);
    if (!got) continue;
    const char *path = mlc_test_src_path(rel);
    if (update) {
      char dir[512];
      snprintf(dir, sizeof dir, "tests/golden/%s", gc->dir);
      ensure_dir(dir);
      path = mlc_test_src_path(rel);
      CU_ASSERT(mlc_test_write_file(path, got, strlen(got)) == 0);
      printf("\n  golden %s: written", rel);
    } else {
      char *want = mlc_test_read_file(path, NULL);
      if (!want) {
        printf("\n  golden %s: cannot read %s (set MLC_SRCDIR, or MLC_UPDATE_GOLDEN=1 to create it)\n",
               rel, path);
        CU_FAIL("golden file missing");
      } else if (strcmp(want, got) != 0) {
        report_diff(path, want, got);
        CU_FAIL("golden mismatch");
      }
      free(want);
    }
    free(got);
  }
}

/* Each golden case's module also verifies and prints the same twice. */
static void test_golden_deterministic(void) {
  for (const golden_case *gc = golden_cases; gc->dir; gc++) {
    if (gc->needs_eval && !have_eval()) continue;
    char *a = golden_text(gc), *b = golden_text(gc);
    CU_ASSERT(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
  }
}

/* ---- module construction --------------------------------------------------------- */

static void test_module_build(void) {
  mlc_module *m = new_module();
  if (!m) return;
  int64_t n, n2, s0;
  mlc_func *f, *dup;
  mlc_value *x, *c, *o[2];
  MLC_TEST_OK_FATAL(mlc_module_sym(m, "n", &n));
  MLC_TEST_OK_FATAL(mlc_module_sym(m, "n", &n2));
  CU_ASSERT_EQUAL(n, n2);
  MLC_TEST_OK_FATAL(mlc_module_fresh_sym(m, &s0));
  CU_ASSERT_STRING_EQUAL(mlc_module_sym_name(m, s0), "s1");
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  EXPECT_ERR(mlc_func_create(m, "main", &dup), "already exists");
  CU_ASSERT_PTR_EQUAL(mlc_module_func(m, "main"), f);
  CU_ASSERT_PTR_NULL(mlc_module_func(m, "nope"));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, n, 4), &x));
  CU_ASSERT_EQUAL(x->kind, MLC_VALUE_PARAM);
  MLC_TEST_OK_FATAL(cst(m, "w", TY(F32, 4, 4), NULL, &c));
  CU_ASSERT_EQUAL(c->const_index, 0);
  CU_ASSERT_EQUAL(m->consts[0].nbytes, 64);
  EXPECT_ERR(mlc_module_add_const(m, "bad", &TY(F32, 4), "abc", 3, &c), "bad", "3 bytes");
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "two", ARGS(x, c), NOATTRS,
                         (mlc_type[]){TY(F32, n, 4), TY(I64, n)}, 2, NULL, o));
  CU_ASSERT_EQUAL(o[1]->def_output, 1);
  CU_ASSERT_PTR_EQUAL(o[0]->def, o[1]->def);
  CU_ASSERT_EQUAL(f->nblocks, 1);
  CU_ASSERT_EQUAL(f->blocks[0].n, 1);
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, o[0]));
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  mlc_module_destroy(m);
  mlc_module_destroy(NULL);
}

/* ---- printer --------------------------------------------------------------------- */

static void test_print_type(void) {
  mlc_module *m = new_module();
  if (!m) return;
  int64_t n;
  MLC_TEST_OK_FATAL(mlc_module_sym(m, "n", &n));
  struct {
    mlc_type t;
    const char *want;
  } cases[] = {
      {TY(F32, n, 3, 224, 224), "R.Tensor((n, 3, 224, 224), \"float32\")"},
      {TY(I64, 5), "R.Tensor((5,), \"int64\")"},
      {TY0(BOOL), "R.Tensor((), \"bool\")"},
      {TY(F16, 0, n), "R.Tensor((0, n), \"float16\")"},
      {TY(U8, MLC_DIM_SYM(7)), "R.Tensor((?,), \"uint8\")"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mlc_strbuf b = MLC_STRBUF_INIT;
    mlc_graph_print_type(m, &cases[i].t, &b);
    CU_ASSERT_STRING_EQUAL(mlc_sb_str(&b), cases[i].want);
    mlc_sb_fini(&b);
  }
  mlc_module_destroy(m);
}

/* Exact text of a tiny module that needs no inference rule. */
static void test_print_small(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *x, *c, *s, *v, *o[2];
  float sv = -0.1f;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 2, 3), &x));
  MLC_TEST_OK_FATAL(cst(m, "w", TY(F32, 3, 3), NULL, &c));
  MLC_TEST_OK_FATAL(cst(m, "s", TY0(F32), &sv, &s));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "mm", ARGS(x, c), NOATTRS, &TY(F32, 2, 3), 1, ORG("MatMul", "m\"1"),
                         &v));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_DPS_PACKED, "ext.f", ARGS(v, s), ATTRS(mlc_attr_int("k", -2)),
                         (mlc_type[]){TY(F32, 2, 3), TY(I32, 2)}, 2, NULL, o));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, o[1]));
  char *got = print_module(m);
  const char *want =
      "# constants: 2 (40 B)\n"
      "#   c0 \"w\": R.Tensor((3, 3), \"float32\")\n"
      "#   c1 \"s\": R.Tensor((), \"float32\")\n"
      "@I.ir_module\n"
      "class Module:\n"
      "    @R.function\n"
      "    def main(x: R.Tensor((2, 3), \"float32\")) -> R.Tensor((2,), \"int32\"):\n"
      "        with R.dataflow():\n"
      "            lv0: R.Tensor((2, 3), \"float32\") = R.call_tir(cls.mm, (x, c0), "
      "out_sinfo=R.Tensor((2, 3), \"float32\"))  # MatMul \"m\\\"1\"\n"
      "            (lv1, gv): R.Tuple(R.Tensor((2, 3), \"float32\"), R.Tensor((2,), \"int32\")) = "
      "R.call_dps_packed(\"ext.f\", (lv0, R.const(-0.1, \"float32\")), out_sinfo=[R.Tensor((2, 3), "
      "\"float32\"), R.Tensor((2,), \"int32\")], k=-2)\n"
      "            R.output(gv)\n"
      "        return gv\n";
  CU_ASSERT_STRING_EQUAL(got, want);
  if (strcmp(got, want) != 0) report_diff("(test_print_small)", want, got);
  free(got);
  mlc_module_destroy(m);
}

static void test_print_empty(void) {
  mlc_module *m = new_module();
  if (!m) return;
  char *got = print_module(m);
  CU_ASSERT_STRING_EQUAL(got, "@I.ir_module\nclass Module:\n    pass\n");
  free(got);
  mlc_func *f;
  mlc_value *x;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "id", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, NULL, &TY(I8, 1), &x));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, x));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, x));
  got = print_module(m);
  CU_ASSERT_STRING_EQUAL(got,
                         "@I.ir_module\nclass Module:\n    @R.function\n"
                         "    def id(p0: R.Tensor((1,), \"int8\")) -> R.Tuple(R.Tensor((1,), \"int8\"), "
                         "R.Tensor((1,), \"int8\")):\n        return (p0, p0)\n");
  free(got);
  mlc_module_destroy(m);
}

/* Inline constants of each dtype print their values. */
static void test_print_const_values(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *v[8];
  double d = 0.1;
  int32_t i32[3] = {-1, 0, 2147483647};
  uint64_t u64 = 18446744073709551615ull;
  uint16_t bf = 0x3fc0; /* 1.5 */
  uint8_t u8[2][2] = {{1, 2}, {3, 255}};
  float inf = 1.0f / 0.0f;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(cst(m, NULL, TY0(F64), &d, &v[0]));
  MLC_TEST_OK_FATAL(cst(m, NULL, TY(I32, 3), i32, &v[1]));
  MLC_TEST_OK_FATAL(cst(m, NULL, TY0(U64), &u64, &v[2]));
  MLC_TEST_OK_FATAL(cst(m, NULL, TY0(BF16), &bf, &v[3]));
  MLC_TEST_OK_FATAL(cst(m, NULL, TY(U8, 2, 1, 2), u8, &v[4]));
  MLC_TEST_OK_FATAL(cst(m, NULL, TY0(F32), &inf, &v[5]));
  MLC_TEST_OK_FATAL(cst(m, NULL, TY(F32, 0, 2), NULL, &v[6]));
  MLC_TEST_OK_FATAL(cst(m, NULL, TY(F32, 9), NULL, &v[7]));
  for (int i = 0; i < 8; i++) OK(mlc_func_add_ret(f, v[i]));
  char *got = print_module(m);
  CU_ASSERT_PTR_NOT_NULL(strstr(got, "#   c0: R.Tensor((), \"float64\")\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(got,
                                "return (R.const(0.1, \"float64\"), R.const([-1, 0, 2147483647], \"int32\"), "
                                "R.const(18446744073709551615, \"uint64\"), R.const(1.5, \"bfloat16\"), "
                                "R.const([[[1, 2]], [[3, 255]]], \"uint8\"), R.const(inf, \"float32\"), c6, c7)\n"));
  if (!strstr(got, "return (R.const(0.1")) printf("\n%s\n", got);
  free(got);
  mlc_module_destroy(m);
}

/* ---- Graphviz -------------------------------------------------------------------- */

/* Loose well-formedness: braces, balanced quotes per line, statements end in ';'. */
static int dot_well_formed(const char *s) {
  if (strncmp(s, "digraph \"", 9) != 0) return 0;
  int depth = 0, lines = 0;
  for (const char *l = s; *l;) {
    const char *e = strchr(l, '\n');
    if (!e) return 0; /* ends with a newline */
    int inq = 0;
    for (const char *p = l; p < e; p++) {
      if (inq && *p == '\\') {
        p++;
        continue;
      }
      if (*p == '"') inq = !inq;
      if (!inq && *p == '{') depth++;
      if (!inq && *p == '}') depth--;
    }
    if (inq || depth < 0) return 0;
    char last = e > l ? e[-1] : 0;
    if (last != ';' && last != '{' && last != '}') return 0;
    lines++;
    l = e + 1;
  }
  return depth == 0 && lines > 2;
}

static void test_dot(void) {
  mlc_module *m = new_module();
  if (!m) return;
  int64_t n;
  mlc_func *f;
  mlc_value *x, *w, *o[2], *v;
  MLC_TEST_OK_FATAL(mlc_module_sym(m, "n", &n));
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "in\"put", &TY(F32, n, 4), &x));
  MLC_TEST_OK_FATAL(cst(m, "we\"ird\\name", TY(F32, 4, 4), NULL, &w));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "split", ARGS(x), NOATTRS, (mlc_type[]){TY(F32, n, 2), TY(F32, n, 2)},
                         2, NULL, o));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_DPS_PACKED, "ext.\"q\"", ARGS(o[1], o[0], w), NOATTRS, &TY(F32, n, 4), 1,
                         NULL, &v));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, v));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, w));
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_graph_print_dot(m, f, &b);
  const char *s = mlc_sb_str(&b);
  CU_ASSERT(dot_well_formed(s));
  CU_ASSERT_PTR_NOT_NULL(strstr(s, "p0 [shape=ellipse, label=\"in_put\\n(n, 4) float32\"];"));
  CU_ASSERT_PTR_NOT_NULL(strstr(s, "c0 [shape=box, label=\"c0 we\\\"ird\\\\name\\n(4, 4) float32\"];"));
  CU_ASSERT_PTR_NOT_NULL(strstr(s, "b0 [shape=box, style=rounded, label=\"call_tir split\\n(n, 2) float32\\n(n, 2) float32\"];"));
  CU_ASSERT_PTR_NOT_NULL(strstr(s, "b1 [shape=box, style=rounded, label=\"call_dps_packed ext.\\\"q\\\"\\n(n, 4) float32\"];"));
  CU_ASSERT_PTR_NOT_NULL(strstr(s, "p0 -> b0;"));
  CU_ASSERT_PTR_NOT_NULL(strstr(s, "b0 -> b1 [label=\"1\"];\n  b0 -> b1 [label=\"0\"];\n  c0 -> b1;"));
  CU_ASSERT_PTR_NOT_NULL(strstr(s, "b1 -> out0;"));
  CU_ASSERT_PTR_NOT_NULL(strstr(s, "c0 -> out1;"));
  if (!dot_well_formed(s)) printf("\n%s\n", s);
  mlc_sb_fini(&b);
  mlc_module_destroy(m);
}

/* The golden modules' dot output is well formed too (needs inference). */
static void test_dot_golden_modules(void) {
  for (const golden_case *gc = golden_cases; gc->dir; gc++) {
    mlc_module *m = new_module();
    if (!m) return;
    if (OK(gc->build(m)))
      for (int i = 0; i < m->nfuncs; i++) {
        mlc_strbuf b = MLC_STRBUF_INIT;
        mlc_graph_print_dot(m, m->funcs[i], &b);
        CU_ASSERT(dot_well_formed(mlc_sb_str(&b)));
        mlc_sb_fini(&b);
      }
    mlc_module_destroy(m);
  }
}

/* ---- verifier -------------------------------------------------------------------- */

/* main(x: (4,)): lv0 = call_tir a(x, c0); gv = call_tir b(lv0) */
static mlc_module *small_tir_module(mlc_value **vals) {
  mlc_module *m = new_module();
  if (!m) return NULL;
  mlc_func *f;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 4), &vals[0]));
  MLC_TEST_OK_FATAL(cst(m, "c", TY(F32, 4), NULL, &vals[1]));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "a", ARGS(vals[0], vals[1]), NOATTRS, &TY(F32, 4), 1, NULL, &vals[2]));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "b", ARGS(vals[2]), NOATTRS, &TY(F32, 4), 1, NULL, &vals[3]));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, vals[3]));
  return m;
}

static void test_verify_tir(void) {
  mlc_value *v[4];
  mlc_module *m = small_tir_module(v);
  if (!m) return;
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  mlc_block *blk = &m->funcs[0]->blocks[0];
  /* use before definition: swap the two bindings */
  mlc_binding *t = blk->bindings[0];
  blk->bindings[0] = blk->bindings[1];
  blk->bindings[1] = t;
  EXPECT_ERR(mlc_graph_verify(m), "function \"main\", binding 0 (b)", "used before its definition");
  blk->bindings[1] = blk->bindings[0];
  blk->bindings[0] = t;
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  /* bad constant index */
  v[1]->const_index = 7;
  EXPECT_ERR(mlc_graph_verify(m), "binding 0 (a)", "arg 1", "constant index 7 out of range");
  v[1]->const_index = 0;
  /* constant data size */
  m->consts[0].nbytes = 12;
  EXPECT_ERR(mlc_graph_verify(m), "constant c0 \"c\"", "12 bytes");
  m->consts[0].nbytes = 16;
  /* SSA: the second binding redefines the first's output */
  blk->bindings[1]->outs[0] = v[2];
  EXPECT_ERR(mlc_graph_verify(m), "binding 1 (b)", "not SSA");
  blk->bindings[1]->outs[0] = v[3];
  /* a return that nothing defines */
  mlc_value fake = *v[3];
  fake.id = v[3]->id + 1000;
  m->funcs[0]->rets[0] = &fake;
  EXPECT_ERR(mlc_graph_verify(m), "return value 0", "out of range");
  m->funcs[0]->rets[0] = v[3];
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  mlc_module_destroy(m);
}

static void test_verify_scope(void) {
  mlc_value *v[4];
  mlc_module *m = small_tir_module(v);
  if (!m) return;
  mlc_func *g;
  mlc_value *y, *w;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "other", &g));
  MLC_TEST_OK_FATAL(mlc_func_add_param(g, "y", &TY(F32, 4), &y));
  /* a param of main used in "other" */
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(g, MLC_CALL_TIR, "c", ARGS(v[0]), NOATTRS, &TY(F32, 4), 1, NULL, &w));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(g, v[2]));
  const char *msg_parts[] = {"function \"other\", binding 0 (c)", "not a parameter of this function"};
  mlc_status s = mlc_graph_verify(m);
  CU_ASSERT_PTR_NOT_NULL(s);
  for (int i = 0; s && i < 2; i++) CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), msg_parts[i]));
  CU_ASSERT_PTR_NOT_NULL(s ? strstr(mlc_status_message(s), "\"other\", return value 0: value") : NULL);
  CU_ASSERT_PTR_NOT_NULL(s ? strstr(mlc_status_message(s), "2 problems") : NULL);
  CU_ASSERT_EQUAL(mlc_status_code(s), MLC_INTERNAL);
  mlc_status_free(s);
  mlc_module_destroy(m);
}

/* Op calls: arg counts and struct info against inference. */
static void test_verify_ops(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *x, *y, *v, *w;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 2, 3), &x));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "y", &TY(F32, 3), &y));
  if (!OK(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(x, y), NOATTRS, ORG("Add", "add0"), &v)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(v), NOATTRS, NULL, &w))) {
    mlc_module_destroy(m);
    return;
  }
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, w));
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  mlc_binding *add = v->def;
  /* wrong arg count */
  add->nargs = 1;
  EXPECT_ERR(mlc_graph_verify(m), "function \"main\", binding 0 (add, node \"add0\" (Add, opset 13))",
             "1 args, the op takes 2");
  add->nargs = 2;
  /* wrong output type after tampering */
  const int64_t bad[2] = {2, 4};
  const int64_t *saved = v->type.dims;
  v->type.dims = bad;
  EXPECT_ERR(mlc_graph_verify(m), "binding 0 (add", "output 0 has type R.Tensor((2, 4), \"float32\") but inference gives R.Tensor((2, 3), \"float32\")");
  v->type.dims = saved;
  v->type.dtype = MLC_DTYPE_F64;
  EXPECT_ERR(mlc_graph_verify(m), "binding 0 (add", "float64");
  v->type.dtype = MLC_DTYPE_F32;
  /* an op code out of range */
  add->op = MLC_OP_COUNT;
  EXPECT_ERR(mlc_graph_verify(m), "op code");
  add->op = MLC_OP_ADD;
  /* def/def_output */
  v->def_output = 1;
  EXPECT_ERR(mlc_graph_verify(m), "def/def_output");
  v->def_output = 0;
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  mlc_module_destroy(m);
}

/* ---- pass manager ---------------------------------------------------------------- */

static mlc_status pass_break(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)ctx;
  m->consts[0].nbytes++;
  return NULL;
}

static mlc_status pass_fail(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)m;
  (void)ctx;
  return mlc_make_status(MLC_INVALID_ARGUMENT, "it went wrong");
}

static int file_exists(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return access(path, F_OK) == 0;
}

static void rm_dir(const char *dir, const char *const *names) {
  char path[4096];
  for (; *names; names++) {
    snprintf(path, sizeof path, "%s/%s", dir, *names);
    unlink(path);
  }
  rmdir(dir);
}

static void test_pass_registry(void) {
  const mlc_pass *p = mlc_pass_find("dce");
  CU_ASSERT_PTR_NOT_NULL(p);
  CU_ASSERT(p && p->fn == mlc_pass_dce);
  p = mlc_pass_find("fold_constant");
  CU_ASSERT(p && p->fn == mlc_pass_fold_constant);
  CU_ASSERT_PTR_NULL(mlc_pass_find("no_such_pass"));
  CU_ASSERT_PTR_NULL(mlc_pass_find(NULL));
  int n = 0;
  for (const mlc_pass *q = mlc_passes; q->name; q++) n++;
  CU_ASSERT(n >= 2);
}

static void test_pass_dump_and_log(void) {
  mlc_value *v[4];
  mlc_module *m = small_tir_module(v);
  char *dir = mlc_test_tmpdir();
  if (!m || !dir) {
    CU_FAIL("setup");
    mlc_module_destroy(m);
    free(dir);
    return;
  }
  mlc_pass list[2] = {*mlc_pass_find("fold_constant"), *mlc_pass_find("dce")};
  FILE *log = tmpfile();
  mlc_pass_ctx ctx = {1, dir, NULL, log};
  MLC_TEST_OK_FATAL(mlc_pass_run(m, list, 2, &ctx));
  CU_ASSERT(file_exists(dir, "01_fold_constant.before.txt"));
  CU_ASSERT(file_exists(dir, "01_fold_constant.after.txt"));
  CU_ASSERT(file_exists(dir, "02_dce.before.txt"));
  CU_ASSERT(file_exists(dir, "02_dce.after.txt"));
  char path[4096];
  snprintf(path, sizeof path, "%s/02_dce.after.txt", dir);
  char *text = mlc_test_read_file(path, NULL);
  char *want = print_module(m);
  CU_ASSERT(text && strcmp(text, want) == 0);
  free(text);
  free(want);
  if (log) {
    char buf[256] = "";
    rewind(log);
    size_t r = fread(buf, 1, sizeof buf - 1, log);
    buf[r] = 0;
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "pass fold_constant: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, " ms\npass dce: "));
    fclose(log);
  }
  static const char *const files[] = {"01_fold_constant.before.txt", "01_fold_constant.after.txt",
                                      "02_dce.before.txt", "02_dce.after.txt", NULL};
  rm_dir(dir, files);
  /* A filter: only dce is dumped. */
  free(dir);
  dir = mlc_test_tmpdir();
  mlc_pass_ctx ctx2 = {0, dir, "inline, dce", NULL};
  MLC_TEST_OK_FATAL(mlc_pass_run(m, list, 2, &ctx2));
  CU_ASSERT(!file_exists(dir, "01_fold_constant.before.txt"));
  CU_ASSERT(file_exists(dir, "02_dce.before.txt"));
  CU_ASSERT(file_exists(dir, "02_dce.after.txt"));
  rm_dir(dir, files);
  free(dir);
  /* An unwritable dump directory is an error naming the pass. */
  mlc_pass_ctx ctx3 = {0, "/nonexistent-dir/x", "all", NULL};
  EXPECT_ERR(mlc_pass_run(m, list, 1, &ctx3), "pass fold_constant", "cannot write");
  mlc_module_destroy(m);
}

static void test_pass_errors(void) {
  mlc_value *v[4];
  mlc_module *m = small_tir_module(v);
  if (!m) return;
  mlc_pass breaker = {"breaker", pass_break}, failer = {"failer", pass_fail};
  mlc_pass_ctx verify = {1, NULL, NULL, NULL};
  EXPECT_ERR(mlc_pass_run(m, &failer, 1, NULL), "pass failer: it went wrong");
  EXPECT_ERR(mlc_pass_run(m, &breaker, 1, &verify), "after pass breaker", "graph verify", "constant c0");
  m->consts[0].nbytes--;
  MLC_TEST_OK_FATAL(mlc_pass_run(m, &breaker, 1, NULL)); /* no verification asked */
  m->consts[0].nbytes--;
  MLC_TEST_OK_FATAL(mlc_graph_pipeline(m, NULL));
  MLC_TEST_OK_FATAL(mlc_graph_pipeline(m, &verify));
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  mlc_module_destroy(m);
}

/* ---- dce ------------------------------------------------------------------------- */

static void test_dce(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *x, *c[3] = {NULL, NULL, NULL}, *d, *v;
  float vals[3][2] = {{1, 1}, {2, 2}, {3, 3}};
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 2), &x));
  /* fatal: a constant that was not made must not reach the graph (an
  ** injected allocation failure would leave c[i] unset) */
  for (int i = 0; i < 3; i++) MLC_TEST_OK_FATAL(cst(m, NULL, TY(F32, 2), vals[i], &c[i]));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "dead", ARGS(x, c[0]), NOATTRS, &TY(F32, 2), 1, NULL, &d));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "dead2", ARGS(d, c[1]), NOATTRS, &TY(F32, 2), 1, NULL, &d));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "live", ARGS(x, c[2]), NOATTRS, &TY(F32, 2), 1, NULL, &v));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, v));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, c[2]));
  MLC_TEST_OK_FATAL(mlc_pass_dce(m, NULL));
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  CU_ASSERT_EQUAL(f->nblocks, 1);
  CU_ASSERT_EQUAL(f->blocks[0].n, 1);
  CU_ASSERT_EQUAL(m->nconsts, 1);
  CU_ASSERT_EQUAL(c[2]->const_index, 0);
  CU_ASSERT_EQUAL(((float *)m->consts[0].data)[0], 3);
  /* Idempotent. */
  MLC_TEST_OK_FATAL(mlc_pass_dce(m, NULL));
  CU_ASSERT_EQUAL(f->blocks[0].n, 1);
  CU_ASSERT_EQUAL(m->nconsts, 1);
  /* Everything dead: the block goes; later emits open a new one. */
  f->rets[0] = x;
  f->nrets = 1;
  MLC_TEST_OK_FATAL(mlc_pass_dce(m, NULL));
  CU_ASSERT_EQUAL(f->nblocks, 0);
  CU_ASSERT_EQUAL(m->nconsts, 0);
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "again", ARGS(x), NOATTRS, &TY(F32, 2), 1, NULL, &v));
  CU_ASSERT_EQUAL(f->nblocks, 1);
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  mlc_module_destroy(m);
}

/* Bindings of non-dataflow blocks may have side effects: dce keeps them. */
static void test_dce_keeps_impure(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *x, *c, *d;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 2), &x));
  MLC_TEST_OK_FATAL(cst(m, "c", TY(F32, 16), NULL, &c));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_DPS_PACKED, "print", ARGS(x, c), NOATTRS, &TY(F32, 2), 1, NULL, &d));
  f->blocks[0].dataflow = 0;
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, x));
  MLC_TEST_OK_FATAL(mlc_pass_dce(m, NULL));
  CU_ASSERT_EQUAL(f->nblocks, 1);
  CU_ASSERT_EQUAL(f->blocks[0].n, 1);
  CU_ASSERT_EQUAL(m->nconsts, 1);
  char *text = print_module(m);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n        lv0: R.Tensor((2,), \"float32\") = R.call_dps_packed(\"print\", (x, c0)"));
  CU_ASSERT_PTR_NULL(strstr(text, "R.dataflow"));
  free(text);
  mlc_module_destroy(m);
}

/* ---- fold_constant --------------------------------------------------------------- */

static void test_fold_leaves_unfoldable(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *a, *b, *v, *w;
  float av[4] = {1, 2, 3, 4};
  m->fold = 0;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(cst(m, "a", TY(F32, 2, 2), av, &a));
  MLC_TEST_OK_FATAL(cst(m, "b", TY(F32, 2, 2), av, &b));
  if (!OK(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(a, b), NOATTRS, NULL, &v))) {
    mlc_module_destroy(m);
    return;
  }
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "t", ARGS(a, b), NOATTRS, &TY(F32, 2, 2), 1, NULL, &w));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, v));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, w));
  MLC_TEST_OK_FATAL(mlc_pass_fold_constant(m, NULL));
  CU_ASSERT_EQUAL(f->blocks[0].n, 2); /* matmul and call_tir stay */
  CU_ASSERT_EQUAL(m->nconsts, 2);
  CU_ASSERT_PTR_EQUAL(f->rets[0], v);
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  mlc_module_destroy(m);
}

static void test_fold(void) {
  if (!have_eval()) {
    printf("\n  (skipped: no constant evaluator yet)");
    return;
  }
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *x, *a, *b, *v, *w, *k;
  float av[2] = {1, 2}, bv[2] = {3, 4};
  m->fold = 0;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 2), &x));
  MLC_TEST_OK_FATAL(cst(m, "a", TY(F32, 2), av, &a));
  MLC_TEST_OK_FATAL(cst(m, "b", TY(F32, 2), bv, &b));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(a, b), NOATTRS, NULL, &v));  /* [4, 6] */
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(v, v), NOATTRS, NULL, &w));  /* [16, 36] */
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(x, w), NOATTRS, NULL, &k));  /* stays */
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, k));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, w));
  MLC_TEST_OK_FATAL(mlc_pass_fold_constant(m, NULL));
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  CU_ASSERT_EQUAL(f->blocks[0].n, 1);
  CU_ASSERT_EQUAL(m->nconsts, 4);
  const mlc_const *c = mlc_value_const(m, f->rets[1]);
  CU_ASSERT(c && ((float *)c->data)[0] == 16 && ((float *)c->data)[1] == 36);
  CU_ASSERT_PTR_EQUAL(k->def->args[1], f->rets[1]);
  MLC_TEST_OK_FATAL(mlc_pass_dce(m, NULL));
  CU_ASSERT_EQUAL(m->nconsts, 1);
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  mlc_module_destroy(m);
}

/* ---- registration ---------------------------------------------------------------- */

/* ---- plan_memory ------------------------------------------------------------ */

/* Storage of the value |v| as a simple scan over every storage chooses it
** (the plan_memory rules of graph/passes/plan_memory.c, written out
** independently): the smallest free storage that fits, else the largest free
** one, the lowest id among equals, else a new one. */
typedef struct ref_plan {
  int64_t bytes[8192];
  char busy[8192];
  int n;
} ref_plan;

static int ref_pick(ref_plan *r, int64_t need) {
  int best = -1;
  for (int i = 0; i < r->n; i++) {
    if (r->busy[i]) continue;
    if (best < 0) best = i;
    else if (need >= 0 && r->bytes[i] >= need && (r->bytes[best] < need || r->bytes[i] < r->bytes[best])) best = i;
    else if ((need < 0 || r->bytes[best] < need) && r->bytes[i] > r->bytes[best]) best = i;
  }
  if (best < 0) {
    best = r->n++;
    r->bytes[best] = 0;
  }
  r->busy[best] = 1;
  if (need < 0 || r->bytes[best] < 0) r->bytes[best] = -1;
  else if (need > r->bytes[best]) r->bytes[best] = need;
  return best;
}

/* Best fit, the largest when none fits, lowest id among equals; returned
** values get no storage. */
static void test_plan_memory_small(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *x, *a, *b, *c, *d, *e, *g;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 4), &x));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "k", ARGS(x), NOATTRS, &TY(F32, 16), 1, NULL, &a)); /* 64 B: s0 */
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "k", ARGS(x), NOATTRS, &TY(F32, 4), 1, NULL, &b));  /* 16 B: s1 */
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "k", ARGS(a, b), NOATTRS, &TY(F32, 2), 1, NULL, &c)); /* s2; s0, s1 free */
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "k", ARGS(c), NOATTRS, &TY(F32, 3), 1, NULL, &d));  /* 12 B: best fit s1 */
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "k", ARGS(d), NOATTRS, &TY(F32, 64), 1, NULL, &e)); /* 256 B: none fits: largest, s0 */
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "k", ARGS(e), NOATTRS, &TY(F32, 1), 1, NULL, &g));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, g));
  MLC_TEST_OK_FATAL(mlc_pass_plan_memory(m, NULL));
  CU_ASSERT_EQUAL(a->storage, 0);
  CU_ASSERT_EQUAL(b->storage, 1);
  CU_ASSERT_EQUAL(c->storage, 2);
  CU_ASSERT_EQUAL(d->storage, 1);
  CU_ASSERT_EQUAL(e->storage, 0);
  CU_ASSERT_EQUAL(g->storage, -1);
  CU_ASSERT_EQUAL(f->nstorages, 3);
  mlc_module_destroy(m);
}

/* Thousands of values of mixed sizes (some symbolic) and lifetimes, many
** live at once: the plan is the one the simple scan gives. */
static void test_plan_memory_many(void) {
  enum { N = 6000 };
  mlc_module *m = new_module();
  ref_plan *r = calloc(1, sizeof *r);
  mlc_value **vals = calloc(N + 1, sizeof *vals);
  int *last = calloc(N + 1, sizeof *last), *want = calloc(N + 1, sizeof *want);
  int (*args)[2] = calloc(N + 1, sizeof *args);
  if (!m || !r || !vals || !last || !want || !args) {
    CU_FAIL("out of memory");
    goto done;
  }
  mlc_func *f;
  int64_t sym;
  if (!OK(mlc_module_sym(m, "n", &sym))) goto done;
  if (!OK(mlc_func_create(m, "main", &f))) goto done;
  if (!OK(mlc_func_add_param(f, "x", &TY(F32, 4), &vals[0]))) goto done;
  uint32_t seed = 12345;
#define RNG() (seed = seed * 1103515245u + 12345u, (seed >> 8) & 0xffff)
  for (int i = 1; i <= N; i++) {
    /* mostly recent values, sometimes old ones: long and short lifetimes */
    for (int k = 0; k < 2; k++) {
      int back = RNG() % 8 == 0 ? (int)(RNG() % (unsigned)i) : (int)(RNG() % 4);
      args[i][k] = i - 1 - (back < i ? back : i - 1);
    }
    int64_t n = (RNG() % 13 == 0) ? sym : (int64_t)(1 + RNG() % 40);
    mlc_type t = {MLC_DTYPE_F32, 1, &n};
    if (!OK(mlc_graph_emit_call(f, MLC_CALL_TIR, "k", ARGS(vals[args[i][0]], vals[args[i][1]]), NOATTRS,
                                &t, 1, NULL, &vals[i])))
      goto done;
  }
#undef RNG
  if (!OK(mlc_func_add_ret(f, vals[N]))) goto done;
  if (!OK(mlc_pass_plan_memory(m, NULL))) goto done;
  for (int i = 0; i <= N; i++) last[i] = -1;
  for (int i = 1; i <= N; i++) last[args[i][0]] = last[args[i][1]] = i;
  for (int i = 1; i <= N; i++) {
    want[i] = -1;
    if (i < N) {
      int64_t numel = mlc_type_numel(&vals[i]->type);
      want[i] = ref_pick(r, numel < 0 ? -1 : numel * 4);
    }
    for (int k = 0; k < 2; k++) {
      int a = args[i][k];
      if (a > 0 && last[a] == i && want[a] >= 0 && r->busy[want[a]]) r->busy[want[a]] = 0;
    }
    if (i < N && last[i] < 0) r->busy[want[i]] = 0;
  }
  int same = 1;
  for (int i = 1; i <= N && same; i++)
    if (vals[i]->storage != want[i]) {
      same = 0;
      fprintf(stderr, "value %d: storage %d, the scan gives %d\n", i, vals[i]->storage, want[i]);
    }
  CU_ASSERT(same);
  CU_ASSERT_EQUAL(f->nstorages, r->n);
  CU_ASSERT(r->n > 100); /* many live at once */
done:
  free(args);
  free(want);
  free(last);
  free(vals);
  free(r);
  mlc_module_destroy(m);
}

/* A call_tir of pattern |pat| on |args| with one output of |t|. */
static mlc_value *kcall(mlc_func *f, mlc_pattern pat, mlc_value *const *args, int nargs, const mlc_type *t) {
  mlc_value *out = NULL;
  if (!OK(mlc_graph_emit_call(f, MLC_CALL_TIR, "k", args, nargs, NOATTRS, t, 1, NULL, &out))) return NULL;
  out->def->pattern = pat;
  return out;
}

/* relu -> exp -> add -> neg of one shape, elementwise and broadcast calls:
** exp and add write over their dying argument; relu reads a parameter
** and neg's output is returned, so neither has a storage to take. */
static void test_plan_memory_in_place(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *x, *z, *r, *e, *a, *y;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 2, 8), &x));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "z", &TY(F32, 8), &z));
  CU_ASSERT_PTR_NOT_NULL_FATAL(r = kcall(f, MLC_PATTERN_ELEMWISE, ARGS(x), &TY(F32, 2, 8)));
  CU_ASSERT_PTR_NOT_NULL_FATAL(e = kcall(f, MLC_PATTERN_ELEMWISE, ARGS(r), &TY(F32, 2, 8)));
  CU_ASSERT_PTR_NOT_NULL_FATAL(a = kcall(f, MLC_PATTERN_BROADCAST, ARGS(z, e), &TY(F32, 2, 8)));
  CU_ASSERT_PTR_NOT_NULL_FATAL(y = kcall(f, MLC_PATTERN_ELEMWISE, ARGS(a), &TY(F32, 2, 8)));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, y));
  MLC_TEST_OK_FATAL(mlc_pass_plan_memory(m, NULL));
  CU_ASSERT_EQUAL(r->storage, 0);
  CU_ASSERT_EQUAL(e->storage, 0);
  CU_ASSERT_EQUAL(a->storage, 0);
  CU_ASSERT_EQUAL(y->storage, -1);
  CU_ASSERT_EQUAL(f->nstorages, 1);
  mlc_module_destroy(m);
}

/* Where in place must not fire: each case is `t = k0(x); u = k(t, ...)`
** with a second use, a type or a call kind that forbids it; u then gets
** a storage of its own (t's is still live or u is not allowed to take it). */
static void test_plan_memory_not_in_place(void) {
  enum { LATER, PARAM, DTYPE, SHAPE, INJECTIVE, REDUCE, OPAQUE, MULTI, PACKED, RETURNED, NCASES };
  for (int c = 0; c < NCASES; c++) {
    mlc_module *m = new_module();
    if (!m) return;
    mlc_func *f;
    mlc_value *x, *t = NULL, *u = NULL, *outs[2] = {NULL, NULL};
    MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
    MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 4, 4), &x));
    static const int64_t d44[] = {4, 4}, d16[] = {16};
    mlc_type ty = {c == DTYPE ? MLC_DTYPE_I32 : MLC_DTYPE_F32, c == SHAPE ? 1 : 2, c == SHAPE ? d16 : d44};
    mlc_pattern pat = c == INJECTIVE ? MLC_PATTERN_INJECTIVE
                      : c == REDUCE  ? MLC_PATTERN_REDUCE
                      : c == OPAQUE  ? MLC_PATTERN_OPAQUE
                                     : MLC_PATTERN_ELEMWISE;
    CU_ASSERT_PTR_NOT_NULL_FATAL(t = kcall(f, MLC_PATTERN_ELEMWISE, ARGS(x), &TY(F32, 4, 4)));
    mlc_value *src = c == PARAM ? x : t;
    if (c == MULTI) {
      mlc_type two[2] = {TY(F32, 4, 4), TY(F32, 4, 4)};
      MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_TIR, "k2", ARGS(t), NOATTRS, two, 2, NULL, outs));
      outs[0]->def->pattern = MLC_PATTERN_ELEMWISE;
      u = outs[0];
    } else if (c == PACKED) {
      MLC_TEST_OK_FATAL(mlc_graph_emit_call(f, MLC_CALL_DPS_PACKED, "ext", ARGS(t), NOATTRS, &ty, 1, NULL, &u));
      u->def->pattern = MLC_PATTERN_ELEMWISE;
    } else {
      CU_ASSERT_PTR_NOT_NULL_FATAL(u = kcall(f, pat, ARGS(src), &ty));
    }
    mlc_value *last = u;
    if (c == LATER || c == PARAM) /* t lives on */
      CU_ASSERT_PTR_NOT_NULL_FATAL(last = kcall(f, MLC_PATTERN_BROADCAST, ARGS(u, t), &TY(F32, 4, 4)));
    if (c == MULTI) CU_ASSERT_PTR_NOT_NULL_FATAL(last = kcall(f, MLC_PATTERN_BROADCAST, ARGS(outs[0], outs[1]), &TY(F32, 4, 4)));
    mlc_value *y;
    CU_ASSERT_PTR_NOT_NULL_FATAL(y = kcall(f, MLC_PATTERN_OPAQUE, ARGS(last), &TY(F32, 1)));
    MLC_TEST_OK_FATAL(mlc_func_add_ret(f, y));
    if (c == RETURNED) MLC_TEST_OK_FATAL(mlc_func_add_ret(f, t));
    MLC_TEST_OK_FATAL(mlc_pass_plan_memory(m, NULL));
    if (u->storage < 0 || u->storage == t->storage) {
      fprintf(stderr, "\ncase %d: t in storage %d, u in storage %d\n", c, t->storage, u->storage);
      CU_FAIL("in place where it must not be");
    }
    if (c == LATER) CU_ASSERT_EQUAL(last->storage, u->storage); /* the add may: u and t die there */
    mlc_module_destroy(m);
  }
}

static void register_graph(void) {
  static const CU_TestInfo tests[] = {{"module_build", test_module_build}, CU_TEST_INFO_NULL};
  mlc_test_add_suite("graph", tests);
}

static void register_print(void) {
  static const CU_TestInfo tests[] = {{"print_type", test_print_type},
                                      {"print_small", test_print_small},
                                      {"print_empty", test_print_empty},
                                      {"print_const_values", test_print_const_values},
                                      {"dot", test_dot},
                                      {"dot_golden_modules", test_dot_golden_modules},
                                      CU_TEST_INFO_NULL};
  mlc_test_add_suite("print", tests);
}

static void register_verify(void) {
  static const CU_TestInfo tests[] = {{"verify_tir", test_verify_tir},
                                      {"verify_scope", test_verify_scope},
                                      {"verify_ops", test_verify_ops},
                                      CU_TEST_INFO_NULL};
  mlc_test_add_suite("verify", tests);
}

static void register_pass(void) {
  static const CU_TestInfo tests[] = {{"pass_registry", test_pass_registry},
                                      {"pass_dump_and_log", test_pass_dump_and_log},
                                      {"pass_errors", test_pass_errors},
                                      {"dce", test_dce},
                                      {"dce_keeps_impure", test_dce_keeps_impure},
                                      {"fold_leaves_unfoldable", test_fold_leaves_unfoldable},
                                      {"fold", test_fold},
                                      {"plan_memory_small", test_plan_memory_small},
                                      {"plan_memory_many", test_plan_memory_many},
                                      {"plan_memory_in_place", test_plan_memory_in_place},
                                      {"plan_memory_not_in_place", test_plan_memory_not_in_place},
                                      CU_TEST_INFO_NULL};
  mlc_test_add_suite("pass", tests);
}

static void register_golden(void) {
  static const CU_TestInfo tests[] = {{"golden", test_golden},
                                      {"golden_deterministic", test_golden_deterministic},
                                      CU_TEST_INFO_NULL};
  mlc_test_add_suite("golden", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_graph, register_print, register_verify,
                                             register_pass, register_golden, NULL};
  return mlc_test_main("test_graph", fns);
}
