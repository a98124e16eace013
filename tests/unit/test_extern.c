/*
** test_extern.c: the extern registry and the dispatch pass (extern.h).
**
** Each case builds a small graph function in C, runs the dispatch pass
** with some providers allowed, and checks what became a call_dps_packed:
** the callee, its tensor arguments, its "args" ints, which bindings the
** match absorbed and which stayed.  Also: a residual add two
** convolutions could both absorb goes to one of them only; a returned
** value is not absorbed; the registry lists the runtime's built-ins; the
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
