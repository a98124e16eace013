/*
** test_layout.c: the blocked-layout ops and the alter_layout pass
** (graph/infer_layout.c, graph/eval_layout.c, graph/passes/alter_layout.c).
**
**   layout      layout strings parsed and refused
**   infer       layout_transform and conv2d_nchwc struct info, and their
**               errors (which name the node)
**   eval        layout_transform's evaluator against plain loops, round
**               trips, and a change of block equal to going through NCHW
**   golden      alter_layout (then fold_constant and dce, as the pipeline
**               runs them) on small graphs: tests/golden/alter_layout/NAME.out,
**               rewritten with MLC_UPDATE_GOLDEN=1 (tests/golden/README.md);
**               plus the structural facts each case must show (counts of
**               transforms and blocked convs), which hold whatever the text
**   pass        the cases where the pass must not fire leave the module
**               unchanged
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/graph.h"
#include "graph/pass.h"
#include "tests/graph_lit.h"
#include "tests/testutil.h"

#define OK(expr) MLC_TEST_OK(expr)

static mlc_module *new_module(void) {
  mlc_module *m = NULL;
  if (!OK(mlc_module_create(mlc_allocator_default(), &m))) return NULL;
  return m;
}

/* A float32 constant of |t| filled with 0.01 * (i % 17) - 0.08. */
static mlc_status cst(mlc_module *m, const char *name, mlc_type t, mlc_value **out) {
  int64_t n = mlc_type_numel(&t);
  float *d = malloc(sizeof(float) * (size_t)(n ? n : 1));
  if (!d) return mlc_oom();
  for (int64_t i = 0; i < n; i++) d[i] = 0.01f * (float)(i % 17) - 0.08f;
  mlc_status s = mlc_module_add_const(m, name, &t, d, sizeof(float) * (size_t)n, out);
  free(d);
  return s;
}

/* ---- layout strings ---------------------------------------------------------- */

static void test_parse(void) {
  mlc_layout l;
  CU_ASSERT(mlc_layout_parse("NCHW", &l) == 0 && l.rank == 4 && l.factor[1] == 0);
  CU_ASSERT(mlc_layout_parse("NCHW16c", &l) == 0 && l.rank == 5 && l.axis[4] == 'c' && l.factor[4] == 16);
  CU_ASSERT(mlc_layout_parse("OIHW16i8o", &l) == 0 && l.rank == 6 && l.factor[4] == 16 && l.factor[5] == 8);
  static const char *const bad[] = {"", "NCHW16", "NCHWc", "NCHW0c", "NCHW16k", "NCCHW", "NCHW8c8c",
                                    "16cNCHW", "NC-HW", "NCHW99999999999999999c", NULL};
  for (const char *const *p = bad; *p; p++) {
    int r = mlc_layout_parse(*p, &l);
    if (r != -1) printf("\n  layout \"%s\" parsed", *p);
    CU_ASSERT(r == -1);
  }
  mlc_layout a, b;
  mlc_layout_map map;
  CU_ASSERT(mlc_layout_parse("NCHW", &a) == 0 && mlc_layout_parse("NCDW", &b) == 0);
  CU_ASSERT(mlc_layout_map_make(&a, &b, &map) == -1);
}

/* ---- inference ------------------------------------------------------------------ */

/* Infers |op| on |args| with the attrs; the status. */
static mlc_status infer(mlc_module *m, mlc_op op, mlc_value **args, int nargs, const mlc_attr *attrs, int nattrs,
                        mlc_type *out) {
  mlc_call_info ci = {m, op, nargs, args, nattrs, attrs, ORG("Conv", "c1")};
  int n = 0;
  return mlc_graph_infer(&ci, out, &n);
}

static int dims_are(const mlc_type *t, int rank, const int64_t *d) {
  if (t->rank != rank) return 0;
  for (int i = 0; i < rank; i++)
    if (t->dims[i] != d[i]) return 0;
  return 1;
}

static mlc_status lt(mlc_module *m, mlc_value *x, const char *src, const char *dst, mlc_type *out) {
  mlc_attr a[2] = {mlc_attr_str("src", src), mlc_attr_str("dst", dst)};
  return infer(m, MLC_OP_LAYOUT_TRANSFORM, &x, 1, a, 2, out);
}

static void test_infer_transform(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *x, *xb, *w, *xs;
  mlc_type t;
  int64_t n;
  CU_ASSERT_FATAL(OK(mlc_func_create(m, "main", &f)));
  CU_ASSERT_FATAL(OK(mlc_module_sym(m, "n", &n)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "x", &TY(F32, 1, 32, 7, 5), &x)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "xb", &TY(F32, 1, 2, 7, 5, 16), &xb)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "w", &TY(F32, 64, 32, 3, 3), &w)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "xs", &TY(F32, n, 32, 7, 5), &xs)));
  if (OK(lt(m, x, "NCHW", "NCHW16c", &t))) CU_ASSERT(dims_are(&t, 5, (int64_t[]){1, 2, 7, 5, 16}));
  if (OK(lt(m, x, "NCHW", "NCHW32c", &t))) CU_ASSERT(dims_are(&t, 5, (int64_t[]){1, 1, 7, 5, 32}));
  if (OK(lt(m, xb, "NCHW16c", "NCHW", &t))) CU_ASSERT(dims_are(&t, 4, (int64_t[]){1, 32, 7, 5}));
  if (OK(lt(m, xb, "NCHW16c", "NCHW8c", &t))) CU_ASSERT(dims_are(&t, 5, (int64_t[]){1, 4, 7, 5, 8}));
  if (OK(lt(m, w, "OIHW", "OIHW16i16o", &t))) CU_ASSERT(dims_are(&t, 6, (int64_t[]){4, 2, 3, 3, 16, 16}));
  if (OK(lt(m, x, "NCHW", "NHWC", &t))) CU_ASSERT(dims_are(&t, 4, (int64_t[]){1, 7, 5, 32}));
  /* the unblocked batch may be symbolic */
  if (OK(lt(m, xs, "NCHW", "NCHW16c", &t))) CU_ASSERT(t.dims[0] == n);
  MLC_TEST_ERR(lt(m, x, "NCHW", "NCHW3c", &t), MLC_INVALID_ARGUMENT, "c1", "does not divide by its block 3");
  MLC_TEST_ERR(lt(m, x, "NCHW", "NCHW16x", &t), MLC_INVALID_ARGUMENT, "dst", "is not a layout");
  MLC_TEST_ERR(lt(m, x, "NCHW", "NCDW", &t), MLC_INVALID_ARGUMENT, "do not have the same axes");
  MLC_TEST_ERR(lt(m, x, "NCHW16c", "NCHW", &t), MLC_INVALID_ARGUMENT, "rank 4", "rank 5");
  MLC_TEST_ERR(lt(m, xb, "NCHW8c", "NCHW", &t), MLC_INVALID_ARGUMENT, "not its block 8");
  MLC_TEST_ERR(lt(m, xs, "NCHW", "NCHW16n", &t), MLC_UNIMPLEMENTED, "symbolic");
  MLC_TEST_ERR(infer(m, MLC_OP_LAYOUT_TRANSFORM, &x, 1, NULL, 0, &t), MLC_INVALID_ARGUMENT, "src is missing");
  mlc_module_destroy(m);
}

static mlc_status nchwc(mlc_module *m, mlc_value **args, int nargs, int64_t groups, int64_t stride, mlc_type *out) {
  mlc_attr a[4] = {INTS("strides", stride, stride), INTS("pads", 1, 1, 1, 1), INTS("dilations", 1, 1),
                   mlc_attr_int("groups", groups)};
  return infer(m, MLC_OP_CONV2D_NCHWC, args, nargs, a, 4, out);
}

static void test_infer_conv(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *x, *w, *b, *dw, *bad_w, *bad_b, *xi, *wi;
  mlc_type t;
  CU_ASSERT_FATAL(OK(mlc_func_create(m, "main", &f)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "x", &TY(F32, 1, 2, 9, 9, 16), &x)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "w", &TY(F32, 4, 2, 3, 3, 16, 16), &w)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "b", &TY(F32, 4, 16), &b)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "dw", &TY(F32, 2, 1, 3, 3, 1, 16), &dw)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "bad_w", &TY(F32, 4, 2, 3, 3, 8, 16), &bad_w)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "bad_b", &TY(F32, 64), &bad_b)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "xi", &TY(I32, 1, 2, 9, 9, 16), &xi)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "wi", &TY(I32, 4, 2, 3, 3, 16, 16), &wi)));
  if (OK(nchwc(m, (mlc_value *[]){x, w, b}, 3, 1, 1, &t))) CU_ASSERT(dims_are(&t, 5, (int64_t[]){1, 4, 9, 9, 16}));
  if (OK(nchwc(m, (mlc_value *[]){x, w}, 2, 1, 2, &t))) CU_ASSERT(dims_are(&t, 5, (int64_t[]){1, 4, 5, 5, 16}));
  if (OK(nchwc(m, (mlc_value *[]){x, dw}, 2, 32, 1, &t))) CU_ASSERT(dims_are(&t, 5, (int64_t[]){1, 2, 9, 9, 16}));
  MLC_TEST_ERR(nchwc(m, (mlc_value *[]){x, bad_w}, 2, 1, 1, &t), MLC_INVALID_ARGUMENT, "c1", "weight input blocks");
  MLC_TEST_ERR(nchwc(m, (mlc_value *[]){x, w, bad_b}, 3, 1, 1, &t), MLC_INVALID_ARGUMENT, "bias must have shape (4, 16)");
  MLC_TEST_ERR(nchwc(m, (mlc_value *[]){x, w}, 2, 2, 1, &t), MLC_INVALID_ARGUMENT, "groups 2", "depthwise");
  MLC_TEST_ERR(nchwc(m, (mlc_value *[]){x, dw}, 2, 16, 1, &t), MLC_INVALID_ARGUMENT, "groups 16");
  MLC_TEST_ERR(nchwc(m, (mlc_value *[]){w, x}, 2, 1, 1, &t), MLC_INVALID_ARGUMENT, "rank 6 and weight rank 5");
  MLC_TEST_ERR(nchwc(m, (mlc_value *[]){xi, wi}, 2, 1, 1, &t), MLC_UNIMPLEMENTED, "int32");
  mlc_attr huge[2] = {INTS("dilations", INT64_MAX / 2 + 1, 1), INTS("pads", 0, 0, 0, 0)};
  MLC_TEST_ERR(infer(m, MLC_OP_CONV2D_NCHWC, (mlc_value *[]){x, w}, 2, huge, 2, &t), MLC_INVALID_ARGUMENT, "overflows");
  mlc_attr neg[1] = {INTS("strides", 0, 1)};
  MLC_TEST_ERR(infer(m, MLC_OP_CONV2D_NCHWC, (mlc_value *[]){x, w}, 2, neg, 1, &t), MLC_INVALID_ARGUMENT, "bad window");
  mlc_module_destroy(m);
}

static void test_infer_matmul_packed(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *a, *as, *w, *wp, *b, *bad_w, *bad_b, *ai;
  mlc_type t;
  int64_t n;
  CU_ASSERT_FATAL(OK(mlc_func_create(m, "main", &f)));
  CU_ASSERT_FATAL(OK(mlc_module_sym(m, "n", &n)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "a", &TY(F32, 2, 5, 32), &a)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "as", &TY(F32, n, 32), &as)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "w", &TY(F32, 32, 96), &w)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "wp", &TY(F32, 3, 32, 32), &wp)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "b", &TY(F32, 96), &b)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "bad_w", &TY(F32, 3, 16, 32), &bad_w)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "bad_b", &TY(F32, 3, 32), &bad_b)));
  CU_ASSERT_FATAL(OK(mlc_func_add_param(f, "ai", &TY(I32, 5, 32), &ai)));
  if (OK(lt(m, w, "KN", "NK32n", &t))) CU_ASSERT(dims_are(&t, 3, (int64_t[]){3, 32, 32}));
  if (OK(infer(m, MLC_OP_MATMUL_PACKED, (mlc_value *[]){a, wp, b}, 3, NULL, 0, &t)))
    CU_ASSERT(dims_are(&t, 3, (int64_t[]){2, 5, 96}));
  if (OK(infer(m, MLC_OP_MATMUL_PACKED, (mlc_value *[]){as, wp}, 2, NULL, 0, &t)))
    CU_ASSERT(dims_are(&t, 2, (int64_t[]){n, 96}));
  MLC_TEST_ERR(infer(m, MLC_OP_MATMUL_PACKED, (mlc_value *[]){a, bad_w}, 2, NULL, 0, &t), MLC_INVALID_ARGUMENT, "c1",
               "inner dims differ");
  MLC_TEST_ERR(infer(m, MLC_OP_MATMUL_PACKED, (mlc_value *[]){a, wp, bad_b}, 3, NULL, 0, &t), MLC_INVALID_ARGUMENT,
               "bias must have shape (96)");
  MLC_TEST_ERR(infer(m, MLC_OP_MATMUL_PACKED, (mlc_value *[]){a, w}, 2, NULL, 0, &t), MLC_INVALID_ARGUMENT,
               "weight rank 2");
  MLC_TEST_ERR(infer(m, MLC_OP_MATMUL_PACKED, (mlc_value *[]){ai, wp}, 2, NULL, 0, &t), MLC_INVALID_ARGUMENT, "int32");
  mlc_module_destroy(m);
}

/* ---- the evaluator ----------------------------------------------------------------- */

/* Evaluates layout_transform of |x| (|n| floats of |xt|); malloc'd result. */
static float *eval_lt(mlc_module *m, const mlc_type *xt, const float *x, const char *src, const char *dst,
                      mlc_type *ot) {
  mlc_value *v;
  if (!OK(mlc_module_add_const(m, NULL, xt, x, sizeof(float) * (size_t)mlc_type_numel(xt), &v))) return NULL;
  mlc_attr a[2] = {mlc_attr_str("src", src), mlc_attr_str("dst", dst)};
  mlc_call_info ci = {m, MLC_OP_LAYOUT_TRANSFORM, 1, &v, 2, a, NULL};
  int n = 0;
  if (!OK(mlc_graph_infer(&ci, ot, &n))) return NULL;
  const void *in[1] = {x};
  void *out[1] = {NULL};
  if (!OK(mlc_graph_eval(&ci, ot, 1, in, out))) return NULL;
  size_t nb = sizeof(float) * (size_t)mlc_type_numel(ot);
  float *r = malloc(nb);
  if (r) memcpy(r, out[0], nb);
  mlc_const_free(m, out[0], nb);
  return r;
}

static void test_eval(void) {
  mlc_module *m = new_module();
  if (!m) return;
  enum { N = 2, C = 32, H = 3, W = 5, K = 48 };
  static float x[N * C * H * W], w[K * C * 3 * 3];
  for (int i = 0; i < N * C * H * W; i++) x[i] = (float)i;
  for (int i = 0; i < K * C * 9; i++) w[i] = (float)i;
  mlc_type xt = TY(F32, N, C, H, W), wt = TY(F32, K, C, 3, 3), t16, t8, tb, tw, t8d;
  float *b16 = eval_lt(m, &xt, x, "NCHW", "NCHW16c", &t16);
  float *b8 = b16 ? eval_lt(m, &t16, b16, "NCHW16c", "NCHW8c", &t8) : NULL;
  float *back = b8 ? eval_lt(m, &t8, b8, "NCHW8c", "NCHW", &tb) : NULL;
  float *direct8 = eval_lt(m, &xt, x, "NCHW", "NCHW8c", &t8d);
  float *pw = eval_lt(m, &wt, w, "OIHW", "OIHW16i16o", &tw);
  CU_ASSERT_FATAL(b16 && b8 && back && direct8 && pw);
  int bad = 0;
  /* plain loops: y[n, C, h, w, c] = x[n, 16*C + c, h, w] */
  for (int n = 0; n < N; n++)
    for (int ch = 0; ch < C; ch++)
      for (int h = 0; h < H; h++)
        for (int ww = 0; ww < W; ww++) {
          float v = x[((n * C + ch) * H + h) * W + ww];
          bad += b16[(((n * (C / 16) + ch / 16) * H + h) * W + ww) * 16 + ch % 16] != v;
          bad += b8[(((n * (C / 8) + ch / 8) * H + h) * W + ww) * 8 + ch % 8] != v;
        }
  CU_ASSERT(bad == 0);
  CU_ASSERT(memcmp(back, x, sizeof x) == 0);
  CU_ASSERT(mlc_type_equal(&t8, &t8d) && memcmp(b8, direct8, sizeof x) == 0);
  /* w' [K/16, C/16, kh, kw, 16i, 16o] = w[16*K' + o, 16*C' + i, kh, kw] */
  bad = 0;
  for (int o = 0; o < K; o++)
    for (int i = 0; i < C; i++)
      for (int kk = 0; kk < 9; kk++) {
        int64_t at = ((((int64_t)(o / 16) * (C / 16) + i / 16) * 9 + kk) * 16 + i % 16) * 16 + o % 16;
        bad += pw[at] != w[(o * C + i) * 9 + kk];
      }
  CU_ASSERT(bad == 0);
  free(b16);
  free(b8);
  free(back);
  free(direct8);
  free(pw);
  mlc_module_destroy(m);
}

/* ---- alter_layout: goldens ------------------------------------------------------- */

static mlc_status conv(mlc_func *f, mlc_value *x, mlc_value *w, mlc_value *b, int64_t groups, const char *node,
                       mlc_value **out) {
  mlc_attr a[4] = {INTS("strides", 1, 1), INTS("pads", 1, 1, 1, 1), INTS("dilations", 1, 1),
                   mlc_attr_int("groups", groups)};
  mlc_value *args[3] = {x, w, b};
  return mlc_graph_emit1(f, MLC_OP_CONV, args, b ? 3 : 2, a, 4, ORG("Conv", node), out);
}

/* A 1x1 conv, stride 1, no padding. */
static mlc_status pointwise(mlc_func *f, mlc_value *x, mlc_value *w, const char *node, mlc_value **out) {
  mlc_attr a[4] = {INTS("strides", 1, 1), INTS("pads", 0, 0, 0, 0), INTS("dilations", 1, 1), mlc_attr_int("groups", 1)};
  return mlc_graph_emit1(f, MLC_OP_CONV, (mlc_value *[]){x, w}, 2, a, 4, ORG("Conv", node), out);
}

/* conv-relu-conv: one transform in, one out; the weights packed. */
static mlc_status build_conv_relu_conv(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w1, *b1, *w2, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 16, 8, 8), &x));
  TRY(cst(m, "w1", TY(F32, 32, 16, 3, 3), &w1));
  TRY(cst(m, "b1", TY(F32, 32), &b1));
  TRY(cst(m, "w2", TY(F32, 16, 32, 3, 3), &w2));
  TRY(conv(f, x, w1, b1, 1, "conv1", &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, &v, 1, NULL, 0, ORG("Relu", "relu1"), &v));
  TRY(conv(f, v, w2, NULL, 1, "conv2", &v));
  return mlc_func_add_ret(f, v);
}

/* A residual block: conv, per-channel scale and shift (a batch norm), add
** of the block's input, relu, then a global average pool and flatten. */
static mlc_status build_residual(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w0, *w1, *sc, *sh, *x0, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 3, 8, 8), &x));
  TRY(cst(m, "w0", TY(F32, 16, 3, 3, 3), &w0));
  TRY(cst(m, "w1", TY(F32, 16, 16, 3, 3), &w1));
  TRY(cst(m, "scale", TY(F32, 16, 1, 1), &sc));
  TRY(cst(m, "shift", TY(F32, 1, 16, 1, 1), &sh));
  TRY(conv(f, x, w0, NULL, 1, "stem", &x0));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, &x0, 1, NULL, 0, ORG("Relu", "stem.relu"), &x0));
  TRY(conv(f, x0, w1, NULL, 1, "conv", &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, (mlc_value *[]){v, sc}, 2, NULL, 0, ORG("Mul", "bn.mul"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, (mlc_value *[]){v, sh}, 2, NULL, 0, ORG("Add", "bn.add"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, (mlc_value *[]){v, x0}, 2, NULL, 0, ORG("Add", "residual"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, &v, 1, NULL, 0, ORG("Relu", "relu"), &v));
  mlc_attr ma[2] = {INTS("axes", 2, 3), mlc_attr_int("keepdims", 1)};
  TRY(mlc_graph_emit1(f, MLC_OP_MEAN, &v, 1, ma, 2, ORG("GlobalAveragePool", "gap"), &v));
  mlc_attr ra = INTS("shape", 1, 16);
  TRY(mlc_graph_emit1(f, MLC_OP_RESHAPE, &v, 1, &ra, 1, ORG("Flatten", "flat"), &v));
  return mlc_func_add_ret(f, v);
}

/* Output channels 12 (not a multiple of 8): the conv stays NCHW. */
static mlc_status build_odd_channels(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 16, 8, 8), &x));
  TRY(cst(m, "w", TY(F32, 12, 16, 3, 3), &w));
  TRY(conv(f, x, w, NULL, 1, "conv12", &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, &v, 1, NULL, 0, ORG("Relu", "relu"), &v));
  return mlc_func_add_ret(f, v);
}

/* groups 2: the conv stays NCHW, and so does the relu after it. */
static mlc_status build_groups2(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 32, 8, 8), &x));
  TRY(cst(m, "w", TY(F32, 32, 16, 3, 3), &w));
  TRY(conv(f, x, w, NULL, 2, "grouped", &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, &v, 1, NULL, 0, ORG("Relu", "relu"), &v));
  return mlc_func_add_ret(f, v);
}

/* A pointwise conv to 24 channels (block 8), a depthwise conv (block 8, as
** its input), clip, then a conv to 32 channels (block 16) and a max pool;
** the pooled value and the 24-channel activation both returned. */
static mlc_status build_blocks(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w0, *wd, *w2, *a, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 16, 8, 8), &x));
  TRY(cst(m, "w0", TY(F32, 24, 16, 1, 1), &w0));
  TRY(cst(m, "wd", TY(F32, 24, 1, 3, 3), &wd));
  TRY(cst(m, "w2", TY(F32, 32, 24, 1, 1), &w2));
  TRY(pointwise(f, x, w0, "expand", &a));
  TRY(conv(f, a, wd, NULL, 24, "depthwise", &v));
  mlc_attr clip[2] = {mlc_attr_float("min", 0), mlc_attr_float("max", 6)};
  TRY(mlc_graph_emit1(f, MLC_OP_CLIP, &v, 1, clip, 2, ORG("Clip", "relu6"), &v));
  TRY(pointwise(f, v, w2, "project", &v));
  mlc_attr mp[3] = {INTS("kernel", 2, 2), INTS("strides", 2, 2), INTS("pads", 0, 0, 0, 0)};
  TRY(mlc_graph_emit1(f, MLC_OP_MAX_POOL, &v, 1, mp, 3, ORG("MaxPool", "pool"), &v));
  TRY(mlc_func_add_ret(f, v));
  return mlc_func_add_ret(f, a);
}

/* On an 8-lane target (AVX2): 32-channel blocks where they divide the
** channels, else 16: a 3x3 conv 64 -> 64 in NCHW32c, a 1x1 conv to 48
** channels (NCHW16c out of NCHW32c), a depthwise conv in the 16 it gets,
** a 1x1 conv back to 32 channels (NCHW32c out of NCHW16c). */
static mlc_status build_blocks_8lanes(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w0, *w1, *wd, *w2, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 64, 8, 8), &x));
  TRY(cst(m, "w0", TY(F32, 64, 64, 3, 3), &w0));
  TRY(cst(m, "w1", TY(F32, 48, 64, 1, 1), &w1));
  TRY(cst(m, "wd", TY(F32, 48, 1, 3, 3), &wd));
  TRY(cst(m, "w2", TY(F32, 32, 48, 1, 1), &w2));
  TRY(conv(f, x, w0, NULL, 1, "conv3x3", &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, &v, 1, NULL, 0, ORG("Relu", "relu"), &v));
  TRY(pointwise(f, v, w1, "to48", &v));
  TRY(conv(f, v, wd, NULL, 48, "depthwise", &v));
  TRY(pointwise(f, v, w2, "to32", &v));
  return mlc_func_add_ret(f, v);
}

/* A lone conv between NCHW edges: blocked when it does enough work per
** element the two transforms move (3x3, 64 to 64 channels: 288), not when
** it does little (1x1, 16 to 32 channels: 11), unless it is strided along
** the width (the same 1x1 conv with stride 2). */
static mlc_status build_lone(mlc_module *m, int64_t c, int64_t k, int64_t ks, int64_t stride) {
  mlc_func *f;
  mlc_value *x, *w, *v;
  mlc_attr a[2] = {mlc_attr_ints("pads", (int64_t[]){ks / 2, ks / 2, ks / 2, ks / 2}, 4),
                   mlc_attr_ints("strides", (int64_t[]){stride, stride}, 2)};
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, c, 8, 8), &x));
  TRY(cst(m, "w", TY(F32, k, c, ks, ks), &w));
  TRY(mlc_graph_emit1(f, MLC_OP_CONV, (mlc_value *[]){x, w}, 2, a, 2, ORG("Conv", "lone"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, &v, 1, NULL, 0, ORG("Relu", "relu"), &v));
  return mlc_func_add_ret(f, v);
}
static mlc_status build_lone_heavy(mlc_module *m) { return build_lone(m, 64, 64, 3, 1); }
static mlc_status build_lone_cheap(mlc_module *m) { return build_lone(m, 16, 32, 1, 1); }
static mlc_status build_lone_strided(mlc_module *m) { return build_lone(m, 16, 32, 1, 2); }

/* A residual add of a concat in block 8 (8 + 24 channels) and a conv in
** block 16: the conv's result moves to block 8 directly ("NCHW16c" ->
** "NCHW8c"), never through NCHW. */
static mlc_status build_convert_block(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *wa, *wb, *wc, *a, *b, *c, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 16, 8, 8), &x));
  TRY(cst(m, "wa", TY(F32, 8, 16, 3, 3), &wa));
  TRY(cst(m, "wb", TY(F32, 24, 16, 3, 3), &wb));
  TRY(cst(m, "wc", TY(F32, 32, 16, 3, 3), &wc));
  TRY(conv(f, x, wa, NULL, 1, "a", &a));
  TRY(conv(f, x, wb, NULL, 1, "b", &b));
  TRY(conv(f, x, wc, NULL, 1, "c", &c));
  mlc_attr ax = mlc_attr_int("axis", 1);
  TRY(mlc_graph_emit1(f, MLC_OP_CONCAT, (mlc_value *[]){a, b}, 2, &ax, 1, ORG("Concat", "cat"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, (mlc_value *[]){v, c}, 2, NULL, 0, ORG("Add", "sum"), &v));
  return mlc_func_add_ret(f, v);
}

/* A symbolic batch: the conv stays NCHW. */
static mlc_status build_symbolic(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w, *v;
  int64_t n;
  TRY(mlc_module_sym(m, "n", &n));
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, n, 16, 8, 8), &x));
  TRY(cst(m, "w", TY(F32, 16, 16, 3, 3), &w));
  TRY(conv(f, x, w, NULL, 1, "conv", &v));
  return mlc_func_add_ret(f, v);
}

/* A matmul a @ w of a constant (or, |param|, an input) weight. */
static mlc_status build_matmul(mlc_module *m, mlc_type at, mlc_type wt, int param, int bias) {
  mlc_func *f;
  mlc_value *a, *w, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "a", &at, &a));
  if (param)
    TRY(mlc_func_add_param(f, "w", &wt, &w));
  else
    TRY(cst(m, "w", wt, &w));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, (mlc_value *[]){a, w}, 2, NULL, 0, ORG("MatMul", "mm"), &v));
  if (bias) {
    mlc_value *b;
    TRY(cst(m, "bias", TY(F32, wt.dims[1]), &b));
    TRY(mlc_graph_emit1(f, MLC_OP_ADD, (mlc_value *[]){v, b}, 2, NULL, 0, ORG("Add", "bias"), &v));
  }
  return mlc_func_add_ret(f, v);
}
/* batched [2, 16, 64] @ [64, 96]: blocks of 48 columns (the schedule tiles 8 rows
** by 3 vectors), the bias add stays */
static mlc_status build_matmul_batched(mlc_module *m) {
  return build_matmul(m, TY(F32, 2, 16, 64), TY(F32, 64, 96), 0, 1);
}
/* [n, 128] @ [128, 64], n symbolic: blocks of 64 */
static mlc_status build_matmul_symbolic(mlc_module *m) {
  int64_t n;
  TRY(mlc_module_sym(m, "n", &n));
  return build_matmul(m, TY(F32, n, 128), TY(F32, 128, 64), 0, 0);
}
/* 16 x 32 x 48 multiply-adds: too little work, the matmul stays */
static mlc_status build_matmul_small(mlc_module *m) {
  return build_matmul(m, TY(F32, 16, 32), TY(F32, 32, 48), 0, 0);
}
/* N = 40, not a multiple of 16: the matmul stays */
static mlc_status build_matmul_n40(mlc_module *m) { return build_matmul(m, TY(F32, 64, 64), TY(F32, 64, 40), 0, 0); }
/* the weight an input (--params-as-inputs): the matmul stays */
static mlc_status build_matmul_input_weight(mlc_module *m) {
  return build_matmul(m, TY(F32, 64, 64), TY(F32, 64, 64), 1, 0);
}

typedef struct golden_case {
  const char *name;
  mlc_status (*build)(mlc_module *m);
  int convs, transforms; /* after: conv2d_nchwc and layout_transform bindings */
  int unchanged;         /* the pass must not fire */
  int packed;            /* after: matmul_packed bindings */
  int vector_bits;       /* the target's (0: 512) */
} golden_case;

static const golden_case cases[] = {
    {"conv_relu_conv", build_conv_relu_conv, 2, 2, 0},
    {"residual", build_residual, 2, 2, 0},
    {"blocks", build_blocks, 3, 3, 0},
    {"odd_channels", build_odd_channels, 0, 0, 1},
    {"groups2", build_groups2, 0, 0, 1},
    {"symbolic", build_symbolic, 1, 2, 0}, /* a symbolic batch: blocked all the same */
    {"lone_heavy", build_lone_heavy, 1, 2, 0},
    {"lone_cheap", build_lone_cheap, 0, 0, 1},
    {"lone_strided", build_lone_strided, 1, 2, 0},
    {"convert_block", build_convert_block, 3, 3, 0},
    {"blocks_8lanes", build_blocks_8lanes, 4, 2, 0, 0, 256},
    {"matmul_batched", build_matmul_batched, 0, 0, 0, 1},
    {"matmul_symbolic", build_matmul_symbolic, 0, 0, 0, 1},
    {"matmul_small", build_matmul_small, 0, 0, 1},
    {"matmul_n40", build_matmul_n40, 0, 0, 1},
    {"matmul_input_weight", build_matmul_input_weight, 0, 0, 1},
    {NULL, NULL, 0, 0, 0, 0},
};

static mlc_status run_passes(mlc_module *m, int vector_bits) {
  static const char *const names[] = {"alter_layout", "fold_constant", "dce"};
  mlc_pass passes[3];
  for (int i = 0; i < 3; i++) {
    const mlc_pass *p = mlc_pass_find(names[i]);
    if (!p) return mlc_make_status(MLC_NOT_FOUND, "no pass %s", names[i]);
    passes[i] = *p;
  }
  mlc_pipeline_options opt;
  memset(&opt, 0, sizeof opt);
  opt.vector_bits = vector_bits;
  mlc_pass_ctx ctx = {1, NULL, NULL, NULL, vector_bits ? &opt : NULL, NULL, NULL};
  return mlc_pass_run(m, passes, 3, &ctx);
}

/* |nchw_convs|: the convs and matmuls left as they were. */
static void count_ops(const mlc_module *m, int *convs, int *transforms, int *nchw_convs, int *packed) {
  *convs = *transforms = *nchw_convs = *packed = 0;
  const mlc_func *f = mlc_module_func(m, "main");
  for (int bi = 0; f && bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++) {
      const mlc_binding *b = f->blocks[bi].bindings[j];
      if (b->kind != MLC_CALL_OP) continue;
      *convs += b->op == MLC_OP_CONV2D_NCHWC;
      *transforms += b->op == MLC_OP_LAYOUT_TRANSFORM;
      *nchw_convs += b->op == MLC_OP_CONV || b->op == MLC_OP_MATMUL;
      *packed += b->op == MLC_OP_MATMUL_PACKED;
    }
}

static char *text_of(const mlc_module *m) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_graph_print(m, &b);
  char *s = b.oom ? NULL : strdup(mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return s;
}

static void test_golden(void) {
  const char *upd = getenv("MLC_UPDATE_GOLDEN");
  int update = upd && strcmp(upd, "1") == 0;
  for (const golden_case *gc = cases; gc->name; gc++) {
    mlc_module *m = new_module();
    if (!m) return;
    char *before = NULL, *after = NULL;
    if (!OK(gc->build(m)) || !OK(mlc_graph_verify(m)) || !(before = text_of(m)) ||
        !OK(run_passes(m, gc->vector_bits)) || !(after = text_of(m))) {
      printf("\n  case %s failed", gc->name);
      free(before);
      mlc_module_destroy(m);
      continue;
    }
    int convs, transforms, nchw, packed;
    count_ops(m, &convs, &transforms, &nchw, &packed);
    if (convs != gc->convs || transforms != gc->transforms || packed != gc->packed)
      printf("\n  alter_layout %s: %d blocked convs, %d transforms, %d packed matmuls; expected %d, %d and %d",
             gc->name, convs, transforms, packed, gc->convs, gc->transforms, gc->packed);
    CU_ASSERT(convs == gc->convs && transforms == gc->transforms && packed == gc->packed);
    if (gc->unchanged) {
      CU_ASSERT(strcmp(before, after) == 0);
      CU_ASSERT(nchw > 0);
    }
    mlc_strbuf t = MLC_STRBUF_INIT;
    mlc_sb_printf(&t, "# ==== before ====\n%s# ==== after alter_layout,fold_constant,dce ====\n%s", before, after);
    char rel[256];
    snprintf(rel, sizeof rel, "tests/golden/alter_layout/%s.out", gc->name);
    const char *path = mlc_test_src_path(rel);
    if (update) {
      char dir[4096];
      snprintf(dir, sizeof dir, "%s", mlc_test_src_path("tests/golden/alter_layout"));
      mkdir(dir, 0777);
      CU_ASSERT(mlc_test_write_file(path, mlc_sb_str(&t), t.len) == 0);
      printf("\n  golden %s: written", rel);
    } else {
      char *want = mlc_test_read_file(path, NULL);
      if (!want || strcmp(want, mlc_sb_str(&t)) != 0) {
        printf("\n  golden %s differs (rerun with MLC_UPDATE_GOLDEN=1 to accept the new output)\n%s", rel,
               mlc_sb_str(&t));
        CU_FAIL("golden mismatch");
      }
      free(want);
    }
    mlc_sb_fini(&t);
    free(before);
    free(after);
    mlc_module_destroy(m);
  }
}

/* The output of a rewritten op keeps its value for every NCHW use: the
** returned value of blocks is a transform back, never the blocked twin. */
static void test_returns_nchw(void) {
  mlc_module *m = new_module();
  if (!m) return;
  if (OK(build_blocks(m)) && OK(run_passes(m, 0))) {
    const mlc_func *f = mlc_module_func(m, "main");
    CU_ASSERT_FATAL(f && f->nrets == 2);
    CU_ASSERT(f->rets[0]->type.rank == 4 && f->rets[0]->type.dims[1] == 32);
    CU_ASSERT(f->rets[1]->type.rank == 4 && f->rets[1]->type.dims[1] == 24);
    for (int i = 0; i < 2; i++)
      CU_ASSERT(f->rets[i]->def && f->rets[i]->def->op == MLC_OP_LAYOUT_TRANSFORM);
  }
  mlc_module_destroy(m);
}

static void register_all(void) {
  static const CU_TestInfo layout[] = {{"parse", test_parse}, CU_TEST_INFO_NULL};
  static const CU_TestInfo inf[] = {{"transform", test_infer_transform}, {"conv2d_nchwc", test_infer_conv},
                                    {"matmul_packed", test_infer_matmul_packed},
                                    CU_TEST_INFO_NULL};
  static const CU_TestInfo ev[] = {{"layout_transform", test_eval}, CU_TEST_INFO_NULL};
  static const CU_TestInfo pass[] = {{"golden", test_golden}, {"returns_nchw", test_returns_nchw},
                                     CU_TEST_INFO_NULL};
  mlc_test_add_suite("layout", layout);
  mlc_test_add_suite("infer", inf);
  mlc_test_add_suite("eval", ev);
  mlc_test_add_suite("alter_layout", pass);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_all, NULL};
  return mlc_test_main("test_layout", fns);
}
