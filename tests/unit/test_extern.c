/*
** test_extern.c: the extern registry and the dispatch pass (extern.h).
**
** Each case builds a small graph function in C, runs the dispatch pass
** with some providers allowed, and checks what became a call_dps_packed:
** the callee, its tensor arguments, its "args" ints, which bindings the
** match absorbed and which stayed.  Also: a residual add two
** convolutions could both absorb goes to one of them only; a returned
** value is not absorbed; cublaslt.matmul takes a constant bias along N
** and a relu and nothing else (an add of a tensor, a bias along M, of
** another rank or not constant, GELU written out), and wins over
** cublas.matmul where it fuses more, whatever their order; the registry
** lists the runtime's built-ins; the
** plugin loader refuses what it should; the auto choice uses the timing
** cache and the measure function, keeps the fastest, and keeps generated
** code when nothing can be timed.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extern/extern.h"
#include "graph/pass.h"
#include "tests/graph_lit.h"
#include "tests/testutil.h"

#define OK(expr) MLC_TEST_OK(expr)

static mlc_module *new_module(void) {
  mlc_module *m = NULL;
  if (!OK(mlc_module_create(mlc_allocator_default(), &m))) return NULL;
  m->fold = 0;
  return mlc_test_hold(m);
}

static mlc_status cst(mlc_module *m, mlc_type t, mlc_value **out) {
  int64_t n = mlc_type_numel(&t);
  float *buf = calloc((size_t)(n ? n : 1), sizeof *buf);
  if (!buf) return mlc_oom();
  for (int64_t i = 0; i < n; i++) buf[i] = (float)(i % 7) * 0.125f - 0.25f;
  mlc_status s = mlc_module_add_const(m, NULL, &t, buf, (size_t)n * sizeof *buf, out);
  free(buf);
  return s;
}

static mlc_status run_dispatch(mlc_module *m, mlc_extern_options *o) {
  mlc_pipeline_options popt;
  memset(&popt, 0, sizeof popt);
  popt.dispatch = mlc_pass_dispatch;
  popt.ext = o;
  mlc_pass p = {"dispatch", mlc_pass_dispatch, NULL};
  mlc_pass_ctx ctx = {1, NULL, NULL, NULL, &popt, NULL, NULL};
  return mlc_pass_run(m, &p, 1, &ctx);
}

static mlc_binding *nth(const mlc_func *f, int i) {
  for (int b = 0; b < f->nblocks; b++) {
    if (i < f->blocks[b].n) return f->blocks[b].bindings[i];
    i -= f->blocks[b].n;
  }
  return NULL;
}

static int count(const mlc_func *f) {
  int n = 0;
  for (int b = 0; b < f->nblocks; b++) n += f->blocks[b].n;
  return n;
}

static const mlc_attr *args_attr(const mlc_binding *b) { return mlc_attrs_find(b->attrs, b->nattrs, "args"); }

/* x -> conv(w, bias) -> add(r) -> relu -> output, and r = conv(x) too. */
static mlc_status build_resblock(mlc_module *m, int with_relu) {
  mlc_func *f;
  TRY(mlc_func_create(m, "main", &f));
  mlc_value *x, *w1, *b1, *w2, *c1, *c2, *a, *y;
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 8, 10, 10), &x));
  TRY(cst(m, TY(F32, 8, 8, 3, 3), &w1));
  TRY(cst(m, TY(F32, 8), &b1));
  TRY(cst(m, TY(F32, 8, 8, 1, 1), &w2));
  TRY(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(x, w2), ATTRS(INTS("pads", 0, 0, 0, 0), mlc_attr_int("groups", 1)),
                      ORG("Conv", "short"), &c2));
  TRY(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(x, w1, b1),
                      ATTRS(INTS("pads", 1, 1, 1, 1), INTS("strides", 1, 1), mlc_attr_int("groups", 1)),
                      ORG("Conv", "main"), &c1));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(c1, c2), NOATTRS, ORG("Add", "add"), &a));
  if (with_relu) TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(a), NOATTRS, ORG("Relu", "relu"), &y));
  else y = a;
  return mlc_func_add_ret(f, y);
}

static void test_conv_epilogue(void) {
  mlc_module *m = new_module();
  if (!m || !OK(build_resblock(m, 1))) return;
  mlc_extern_options o;
  memset(&o, 0, sizeof o);
  o.providers[o.nproviders++] = &mlc_extern_provider_onednn;
  if (!OK(run_dispatch(m, &o))) return;
  mlc_func *f = mlc_module_func(m, "main");
  /* the shortcut conv comes first and takes the add (the main conv is its
  ** residual) and the relu; the main conv, whose only user is taken, keeps
  ** its bias alone: two calls, nothing else */
  CU_ASSERT_EQUAL_FATAL(count(f), 2);
  mlc_binding *mc = nth(f, 0), *c = nth(f, 1);
  CU_ASSERT_EQUAL(mc->kind, MLC_CALL_DPS_PACKED);
  CU_ASSERT_STRING_EQUAL(mc->callee, "onednn.conv2d");
  CU_ASSERT_EQUAL(mc->nargs, 3);
  CU_ASSERT_EQUAL(args_attr(mc)->ints[11], MLC_EXT_ACT_NONE);
  CU_ASSERT_EQUAL(c->kind, MLC_CALL_DPS_PACKED);
  CU_ASSERT_STRING_EQUAL(c->callee, "onednn.conv2d");
  CU_ASSERT_EQUAL_FATAL(c->nargs, 3); /* x, w, residual */
  CU_ASSERT_PTR_EQUAL(c->args[2], mc->outs[0]);
  CU_ASSERT_STRING_EQUAL(c->origin.node, "short");
  CU_ASSERT_EQUAL(c->ncovered, 3);
  const mlc_attr *a = args_attr(c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_EQUAL_FATAL(a->n, 15);
  /* dilations 1 1, groups 1, pads 0 0 0 0, strides 1 1, no bias, residual, relu */
  int64_t want[] = {1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1, MLC_EXT_ACT_RELU};
  for (int i = 0; i < 12; i++) CU_ASSERT_EQUAL(a->ints[i], want[i]);
  CU_ASSERT_EQUAL(a->ints[14], 1); /* w_const */
  CU_ASSERT_PTR_EQUAL(f->rets[0], c->outs[0]);
  CU_ASSERT_EQUAL(o.nchoices, 2);
  OK(mlc_graph_verify(m));
}

/* Without a relu the add's output is returned: still absorbed (the call
** produces it); with openblas the same shapes match openblas.conv2d. */
static void test_conv_blas_returned(void) {
  mlc_module *m = new_module();
  if (!m || !OK(build_resblock(m, 0))) return;
  mlc_extern_options o;
  memset(&o, 0, sizeof o);
  o.providers[o.nproviders++] = &mlc_extern_provider_openblas;
  if (!OK(run_dispatch(m, &o))) return;
  mlc_func *f = mlc_module_func(m, "main");
  CU_ASSERT_EQUAL_FATAL(count(f), 2);
  mlc_binding *c = nth(f, 1);
  CU_ASSERT_STRING_EQUAL(c->callee, "openblas.conv2d");
  CU_ASSERT_EQUAL(c->nargs, 3);
  CU_ASSERT_EQUAL(args_attr(c)->ints[11], MLC_EXT_ACT_NONE);
  CU_ASSERT_PTR_EQUAL(f->rets[0], c->outs[0]);
}

/* A conv whose output is also returned keeps its relu separate. */
static void test_returned_not_absorbed(void) {
  mlc_module *m = new_module();
  mlc_func *f;
  mlc_value *x, *w, *c, *y;
  if (!m || !OK(mlc_func_create(m, "main", &f)) || !OK(mlc_func_add_param(f, "x", &TY(F32, 2, 4, 6, 6), &x)) ||
      !OK(cst(m, TY(F32, 4, 2, 3, 3), &w)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(x, w), ATTRS(mlc_attr_int("groups", 2)), ORG("Conv", "c"), &c)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(c), NOATTRS, ORG("Relu", "r"), &y)) || !OK(mlc_func_add_ret(f, c)) ||
      !OK(mlc_func_add_ret(f, y)))
    return;
  mlc_extern_options o;
  memset(&o, 0, sizeof o);
  o.providers[o.nproviders++] = &mlc_extern_provider_openblas;
  o.providers[o.nproviders++] = &mlc_extern_provider_onednn;
  if (!OK(run_dispatch(m, &o))) return;
  CU_ASSERT_EQUAL_FATAL(count(f), 2);
  CU_ASSERT_STRING_EQUAL(nth(f, 0)->callee, "openblas.conv2d"); /* first in the list */
  CU_ASSERT_EQUAL(args_attr(nth(f, 0))->ints[2], 2);             /* groups */
  CU_ASSERT_EQUAL(nth(f, 1)->kind, MLC_CALL_OP);
}

/* Depthwise: oneDNN only; matmul: rank >= 2 float32 only. */
static void test_depthwise_and_matmul(void) {
  mlc_module *m = new_module();
  mlc_func *f;
  mlc_value *x, *w, *c, *a, *b, *v, *mm1, *mm2, *u;
  if (!m || !OK(mlc_func_create(m, "main", &f)) || !OK(mlc_func_add_param(f, "x", &TY(F32, 1, 4, 6, 6), &x)) ||
      !OK(cst(m, TY(F32, 4, 1, 3, 3), &w)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(x, w), ATTRS(mlc_attr_int("groups", 4)), ORG("Conv", "dw"), &c)) ||
      !OK(mlc_func_add_param(f, "a", &TY(F32, 3, 5, 7), &a)) || !OK(cst(m, TY(F32, 7, 2), &b)) ||
      !OK(mlc_func_add_param(f, "v", &TY(F32, 7), &v)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(a, b), NOATTRS, ORG("MatMul", "mm"), &mm1)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(a, v), NOATTRS, ORG("MatMul", "mv"), &mm2)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(mm1), NOATTRS, ORG("Relu", "r"), &u)) ||
      !OK(mlc_func_add_ret(f, c)) || !OK(mlc_func_add_ret(f, u)) || !OK(mlc_func_add_ret(f, mm2)))
    return;
  mlc_extern_options o;
  memset(&o, 0, sizeof o);
  o.providers[o.nproviders++] = &mlc_extern_provider_openblas;
  if (!OK(run_dispatch(m, &o))) return;
  CU_ASSERT_EQUAL(nth(f, 0)->kind, MLC_CALL_OP); /* depthwise: not openblas */
  CU_ASSERT_STRING_EQUAL(nth(f, 1)->callee, "openblas.matmul");
  CU_ASSERT_EQUAL(nth(f, 2)->kind, MLC_CALL_OP); /* a vector operand */
  CU_ASSERT_EQUAL(nth(f, 3)->kind, MLC_CALL_OP); /* matmul takes no epilogue */
  o.nproviders = 0;
  o.providers[o.nproviders++] = &mlc_extern_provider_onednn;
  if (!OK(run_dispatch(m, &o))) return;
  CU_ASSERT_STRING_EQUAL(nth(f, 0)->callee, "onednn.conv2d");
  CU_ASSERT_EQUAL(args_attr(nth(f, 0))->ints[2], 4);
}

/* ---- cublaslt.matmul ------------------------------------------------- */

/* A [.., 16, 32] (rank |ra|) x W [32, 8] (constant), then add(|other|) when
** |other| (its shape |os|, rank |orank|; constant or a parameter, first or
** second argument), then relu when |relu|; the last value returned. */
typedef struct lt_graph {
  int ra;
  int orank;
  int64_t os[3];
  int other_const, other_first, relu;
} lt_graph;

static mlc_func *build_lt(mlc_module *m, const lt_graph *g) {
  mlc_func *f;
  mlc_value *a, *w, *y, *o;
  mlc_type ta = g->ra == 3 ? TY(F32, 2, 16, 32) : TY(F32, 16, 32);
  if (!OK(mlc_func_create(m, "main", &f)) || !OK(mlc_func_add_param(f, "a", &ta, &a)) ||
      !OK(cst(m, TY(F32, 32, 8), &w)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(a, w), NOATTRS, ORG("MatMul", "mm"), &y)))
    return NULL;
  if (g->orank) {
    mlc_type to = {MLC_DTYPE_F32, g->orank, g->os};
    if (!OK(g->other_const ? cst(m, to, &o) : mlc_func_add_param(f, "o", &to, &o))) return NULL;
    mlc_value *x0 = g->other_first ? o : y, *x1 = g->other_first ? y : o;
    if (!OK(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(x0, x1), NOATTRS, ORG("Add", "bias"), &y))) return NULL;
  }
  if (g->relu && !OK(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(y), NOATTRS, ORG("Relu", "relu"), &y))) return NULL;
  return OK(mlc_func_add_ret(f, y)) ? f : NULL;
}

/* Dispatches |g| with the providers |pv| (|n|): the function after it. */
static mlc_func *dispatch_lt(const lt_graph *g, const mlc_extern_provider *const *pv, int n, mlc_extern_options *o) {
  mlc_module *m = new_module();
  mlc_func *f = m ? build_lt(m, g) : NULL;
  memset(o, 0, sizeof *o);
  for (int i = 0; i < n; i++) o->providers[o->nproviders++] = pv[i];
  return f && OK(run_dispatch(m, o)) ? f : NULL;
}

static void test_cublaslt_matmul(void) {
  if (!mlc_extern_provider_cublaslt.available()) {
    printf("(this build has no CUDA: skipped) ");
    return;
  }
  const mlc_extern_provider *lt[] = {&mlc_extern_provider_cublaslt};
  mlc_extern_options o;
  /* a constant bias [8] and a relu: one call A, W, bias with has_bias, relu */
  lt_graph g = {2, 1, {8}, 1, 0, 1};
  mlc_func *f = dispatch_lt(&g, lt, 1, &o);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL_FATAL(count(f), 1);
  mlc_binding *c = nth(f, 0);
  CU_ASSERT_STRING_EQUAL(c->callee, "cublaslt.matmul");
  CU_ASSERT_EQUAL_FATAL(c->nargs, 3);
  CU_ASSERT_EQUAL(c->args[2]->kind, MLC_VALUE_CONST);
  CU_ASSERT_EQUAL(c->ncovered, 3); /* matmul, add, relu */
  const mlc_attr *a = args_attr(c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_EQUAL_FATAL(a->n, 2);
  CU_ASSERT_EQUAL(a->ints[0], 1);
  CU_ASSERT_EQUAL(a->ints[1], MLC_EXT_ACT_RELU);
  CU_ASSERT_PTR_EQUAL(f->rets[0], c->outs[0]);
  CU_ASSERT_STRING_EQUAL(c->origin.node, "mm");
  /* the bias first (add(bias, mm)), batched A, a bias [1, 8], no relu */
  g = (lt_graph){3, 1, {8}, 1, 1, 0};
  f = dispatch_lt(&g, lt, 1, &o);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL_FATAL(count(f), 1);
  CU_ASSERT_EQUAL(nth(f, 0)->nargs, 3);
  CU_ASSERT_EQUAL(args_attr(nth(f, 0))->ints[1], MLC_EXT_ACT_NONE);
  g = (lt_graph){2, 2, {1, 8}, 1, 0, 0};
  f = dispatch_lt(&g, lt, 1, &o);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(count(f), 1);
  /* relu with no bias */
  g = (lt_graph){2, 0, {0}, 0, 0, 1};
  f = dispatch_lt(&g, lt, 1, &o);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL_FATAL(count(f), 1);
  CU_ASSERT_EQUAL(nth(f, 0)->nargs, 2);
  CU_ASSERT_EQUAL(args_attr(nth(f, 0))->ints[0], 0);
  CU_ASSERT_EQUAL(args_attr(nth(f, 0))->ints[1], MLC_EXT_ACT_RELU);
  /* what the epilogue does not compute stays an add (and the relu after
  ** it): an add of a tensor [16, 8], a bias along M [16, 1], a bias [1, 1,
  ** 8] that makes Y rank 3, a [8] that is no constant */
  static const lt_graph keep[] = {
      {2, 2, {16, 8}, 0, 0, 1}, {2, 2, {16, 8}, 1, 0, 1}, {2, 2, {16, 1}, 1, 0, 1},
      {2, 3, {1, 1, 8}, 1, 0, 1}, {2, 1, {8}, 0, 0, 1},
  };
  for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
    f = dispatch_lt(&keep[i], lt, 1, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(count(f), 3);
    CU_ASSERT_STRING_EQUAL(nth(f, 0)->callee, "cublaslt.matmul");
    CU_ASSERT_EQUAL(nth(f, 0)->nargs, 2);
    CU_ASSERT_EQUAL(args_attr(nth(f, 0))->ints[0], 0);
    CU_ASSERT_EQUAL(args_attr(nth(f, 0))->ints[1], MLC_EXT_ACT_NONE);
    CU_ASSERT_EQUAL(nth(f, 1)->kind, MLC_CALL_OP);
    CU_ASSERT_EQUAL(nth(f, 1)->op, MLC_OP_ADD);
    CU_ASSERT_EQUAL(nth(f, 2)->op, MLC_OP_RELU);
  }
}

/* GELU written out as exporters write ONNX's (x/2 (1 + erf(x / sqrt 2))):
** not cuBLASLt's (tanh) GELU, so the bias goes with the matmul and the
** GELU stays. */
static void test_cublaslt_gelu_stays(void) {
  if (!mlc_extern_provider_cublaslt.available()) {
    printf("(this build has no CUDA: skipped) ");
    return;
  }
  mlc_module *m = new_module();
  mlc_func *f;
  mlc_value *a, *w, *bias, *h, *v, *sq2, *one, *half;
  if (!m || !OK(mlc_func_create(m, "main", &f)) || !OK(mlc_func_add_param(f, "a", &TY(F32, 16, 32), &a)) ||
      !OK(cst(m, TY(F32, 32, 8), &w)) || !OK(cst(m, TY(F32, 8), &bias)) || !OK(cst(m, TY(F32, 1), &sq2)) ||
      !OK(cst(m, TY(F32, 1), &one)) || !OK(cst(m, TY(F32, 1), &half)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(a, w), NOATTRS, ORG("MatMul", "mm"), &h)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(h, bias), NOATTRS, ORG("Add", "bias"), &h)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_DIV, ARGS(h, sq2), NOATTRS, ORG("Div", "gelu/div"), &v)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_ERF, ARGS(v), NOATTRS, ORG("Erf", "gelu/erf"), &v)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, one), NOATTRS, ORG("Add", "gelu/add"), &v)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(h, v), NOATTRS, ORG("Mul", "gelu/mul"), &v)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(v, half), NOATTRS, ORG("Mul", "gelu/half"), &v)) ||
      !OK(mlc_func_add_ret(f, v)))
    return;
  mlc_extern_options o;
  memset(&o, 0, sizeof o);
  o.providers[o.nproviders++] = &mlc_extern_provider_cublaslt;
  if (!OK(run_dispatch(m, &o))) return;
  /* the add's output has two users (the div and the mul): not even the
  ** bias is taken, the matmul alone is */
  /* the call makes the biased value, which the GELU's div and mul read */
  CU_ASSERT_EQUAL_FATAL(count(f), 6);
  CU_ASSERT_STRING_EQUAL(nth(f, 0)->callee, "cublaslt.matmul");
  CU_ASSERT_EQUAL(nth(f, 0)->nargs, 3);
  CU_ASSERT_EQUAL(args_attr(nth(f, 0))->ints[0], 1);
  CU_ASSERT_EQUAL(args_attr(nth(f, 0))->ints[1], MLC_EXT_ACT_NONE);
  CU_ASSERT_EQUAL(nth(f, 1)->op, MLC_OP_DIV);
  CU_ASSERT_PTR_EQUAL(nth(f, 1)->args[0], nth(f, 0)->outs[0]);
  for (int i = 1; i < 6; i++) CU_ASSERT_EQUAL(nth(f, i)->kind, MLC_CALL_OP);
}

/* cublas and cublaslt both allowed: a matmul with a bias goes to cublaslt
** in either order, a plain one to the first listed. */
static void test_cublaslt_preferred(void) {
  if (!mlc_extern_provider_cublaslt.available()) {
    printf("(this build has no CUDA: skipped) ");
    return;
  }
  const mlc_extern_provider *both[] = {&mlc_extern_provider_cublas, &mlc_extern_provider_cublaslt};
  const mlc_extern_provider *rev[] = {&mlc_extern_provider_cublaslt, &mlc_extern_provider_cublas};
  mlc_extern_options o;
  lt_graph bias = {2, 1, {8}, 1, 0, 1}, plain = {2, 0, {0}, 0, 0, 0};
  mlc_func *f = dispatch_lt(&bias, both, 2, &o);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL_FATAL(count(f), 1);
  CU_ASSERT_STRING_EQUAL(nth(f, 0)->callee, "cublaslt.matmul");
  CU_ASSERT_EQUAL_FATAL(o.nchoices, 1);
  CU_ASSERT_STRING_EQUAL(o.choices[0].chosen, "cublaslt.matmul");
  CU_ASSERT_PTR_NOT_NULL(strstr(o.choices[0].why, "fuses more"));
  CU_ASSERT_EQUAL(o.choices[0].ncand, 3);
  f = dispatch_lt(&bias, rev, 2, &o);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_STRING_EQUAL(nth(f, 0)->callee, "cublaslt.matmul");
  CU_ASSERT_STRING_EQUAL(o.choices[0].why, "first allowed library that takes it");
  f = dispatch_lt(&plain, both, 2, &o);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_STRING_EQUAL(nth(f, 0)->callee, "cublas.matmul");
  f = dispatch_lt(&plain, rev, 2, &o);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_STRING_EQUAL(nth(f, 0)->callee, "cublaslt.matmul");
  /* a bias add cublaslt does not take: equal, the first listed */
  lt_graph full = {2, 2, {16, 8}, 1, 0, 0};
  f = dispatch_lt(&full, both, 2, &o);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_STRING_EQUAL(nth(f, 0)->callee, "cublas.matmul");
  CU_ASSERT_EQUAL(count(f), 2);
}

static void test_registry(void) {
  const mlc_extern_kernel *k = mlc_extern_find("mlc.reshape_dims");
  CU_ASSERT_PTR_NOT_NULL_FATAL(k);
  CU_ASSERT_PTR_NULL(k->match);
  CU_ASSERT_PTR_EQUAL(k->provider, &mlc_extern_provider_mlc);
  CU_ASSERT_EQUAL(k->op, MLC_OP_RESHAPE_DIMS);
  k = mlc_extern_find("openblas.matmul");
  CU_ASSERT_PTR_NOT_NULL_FATAL(k);
  CU_ASSERT_STRING_EQUAL(k->symbol, "mlc_ext_openblas_matmul");
  CU_ASSERT_PTR_NULL(mlc_extern_find("nosuch.fn"));
  CU_ASSERT_PTR_EQUAL(mlc_extern_find_provider("onednn"), &mlc_extern_provider_onednn);
  CU_ASSERT_PTR_EQUAL(mlc_extern_find_provider("cublaslt"), &mlc_extern_provider_cublaslt);
  k = mlc_extern_find("cublaslt.matmul");
  CU_ASSERT_PTR_NOT_NULL_FATAL(k);
  CU_ASSERT_STRING_EQUAL(k->symbol, "mlc_ext_cublaslt_matmul");
  CU_ASSERT_EQUAL(k->provider->device, 1);
  CU_ASSERT_PTR_NULL(mlc_extern_find_provider("mlc"));
  /* every name is unique */
  for (const mlc_extern_kernel *a = mlc_extern_builtin_kernels; a->name; a++)
    for (const mlc_extern_kernel *b = a + 1; b->name; b++) CU_ASSERT(strcmp(a->name, b->name) != 0);
}

static void test_plugin_errors(void) {
  mlc_extern_plugin_lib *p = NULL;
  mlc_status s = mlc_extern_load_plugin("/nonexistent/libnothing.so", &p);
  CU_ASSERT_PTR_NOT_NULL(s);
  CU_ASSERT_PTR_NULL(p);
  if (s) CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), "libnothing.so"));
  mlc_status_free(s);
  /* a shared library that is no plugin: libc has no mlc_extern_plugin_v1 */
  s = mlc_extern_load_plugin("libc.so.6", &p);
  CU_ASSERT_PTR_NOT_NULL(s);
  mlc_status_free(s);
  s = mlc_extern_load_plugin("", &p);
  CU_ASSERT_PTR_NOT_NULL(s);
  mlc_status_free(s);
}

/* ---- auto ------------------------------------------------------------ */

typedef struct fake_times {
  double generated, blas, dnnl; /* < 0: cannot time */
  int calls;
  double convert;               /* the generated probe's layout conversions */
} fake_times;

static double fake_measure(void *user, const mlc_module *m, const mlc_extern_kernel *k, const mlc_extern_match *mt,
                           double *convert, char *why, size_t whylen) {
  (void)m;
  (void)mt;
  fake_times *t = user;
  t->calls++;
  if (convert) *convert = t->convert;
  double r = !k ? t->generated : k->provider == &mlc_extern_provider_openblas ? t->blas : t->dnnl;
  if (r < 0) snprintf(why, whylen, "fake failure");
  return r;
}

static mlc_module *matmul_module(void) {
  mlc_module *m = new_module();
  mlc_func *f;
  mlc_value *a, *b, *y;
  if (!m || !OK(mlc_func_create(m, "main", &f)) || !OK(mlc_func_add_param(f, "a", &TY(F32, 16, 32), &a)) ||
      !OK(cst(m, TY(F32, 32, 8), &b)) ||
      !OK(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(a, b), NOATTRS, ORG("MatMul", "mm"), &y)) ||
      !OK(mlc_func_add_ret(f, y)))
    return NULL;
  return m;
}

static void test_auto(void) {
  char cache[] = "/tmp/mlc-test-extern-XXXXXX";
  int fd = mkstemp(cache);
  CU_ASSERT_FATAL(fd >= 0);
  close(fd);
  fake_times t = {2e-3, 1e-3, 3e-3, 0, 0};
  mlc_extern_options o;
  memset(&o, 0, sizeof o);
  o.providers[o.nproviders++] = &mlc_extern_provider_openblas;
  o.providers[o.nproviders++] = &mlc_extern_provider_onednn;
  o.auto_choice = 1;
  o.measure = fake_measure;
  o.measure_user = &t;
  o.cache_path = cache;
  o.target_key = "test-target";
  mlc_module *m = matmul_module();
  if (!m || !OK(run_dispatch(m, &o))) goto out;
  CU_ASSERT_EQUAL(t.calls, 3);
  CU_ASSERT_STRING_EQUAL(nth(mlc_module_func(m, "main"), 0)->callee, "openblas.matmul");
  CU_ASSERT_EQUAL_FATAL(o.nchoices, 1);
  CU_ASSERT_EQUAL(o.choices[0].ncand, 3);
  CU_ASSERT_DOUBLE_EQUAL(o.choices[0].seconds[1], 1e-3, 1e-12);
  /* a second compile reads the cache: nothing measured, same choice even
  ** if the measure would now say otherwise */
  t.calls = 0;
  t.blas = 9;
  o.nchoices = 0;
  m = matmul_module();
  if (!m || !OK(run_dispatch(m, &o))) goto out;
  CU_ASSERT_EQUAL(t.calls, 0);
  CU_ASSERT_STRING_EQUAL(nth(mlc_module_func(m, "main"), 0)->callee, "openblas.matmul");
  /* another target: measured again; generated code is fastest now */
  o.target_key = "other-target";
  t.generated = 0.5e-3;
  o.nchoices = 0;
  m = matmul_module();
  if (!m || !OK(run_dispatch(m, &o))) goto out;
  CU_ASSERT_EQUAL(t.calls, 3);
  CU_ASSERT_EQUAL(nth(mlc_module_func(m, "main"), 0)->kind, MLC_CALL_OP);
  CU_ASSERT_STRING_EQUAL(o.choices[0].chosen, "generated");
  t.calls = 0;
  /* a library amid generated code pays the conversions: 1.0 + 1.5 > 2.0 */
  o.target_key = "fourth-target";
  t.generated = 2e-3, t.blas = 1e-3, t.dnnl = 3e-3, t.convert = 1.5e-3;
  o.nchoices = 0;
  m = matmul_module();
  if (!m || !OK(run_dispatch(m, &o))) goto out;
  CU_ASSERT_EQUAL(nth(mlc_module_func(m, "main"), 0)->kind, MLC_CALL_OP);
  CU_ASSERT_DOUBLE_EQUAL(o.choices[0].seconds[1], 2.5e-3, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(o.choices[0].convert, 1.5e-3, 1e-12);
  t.convert = 0;
  /* nothing can be timed: generated code stays */
  o.target_key = "third-target";
  t.generated = t.blas = t.dnnl = -1;
  o.nchoices = 0;
  m = matmul_module();
  if (!m || !OK(run_dispatch(m, &o))) goto out;
  CU_ASSERT_EQUAL(nth(mlc_module_func(m, "main"), 0)->kind, MLC_CALL_OP);
out:
  mlc_extern_options_release(&o);
  unlink(cache);
}

static void register_extern(void) {
  static const CU_TestInfo tests[] = {
      {"conv_epilogue", test_conv_epilogue},
      {"conv_blas_returned", test_conv_blas_returned},
      {"returned_not_absorbed", test_returned_not_absorbed},
      {"depthwise_and_matmul", test_depthwise_and_matmul},
      {"cublaslt_matmul", test_cublaslt_matmul},
      {"cublaslt_gelu_stays", test_cublaslt_gelu_stays},
      {"cublaslt_preferred", test_cublaslt_preferred},
      {"registry", test_registry},
      {"plugin_errors", test_plugin_errors},
      {"auto", test_auto},
      CU_TEST_INFO_NULL,
  };
  mlc_test_add_suite("extern", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_extern, NULL};
  return mlc_test_main("test_extern", fns);
}
