/*
** test_graph_passes.c: the graph passes bind_params, simplify,
** fold_scale_shift and cse.
**
** Golden tests: each case builds a small module in C, prints it, runs a list
** of passes (verifying the module after each) and prints it again; the text
** is compared with tests/passes/<dir>/<case>.out under $MLC_SRCDIR (with
** MLC_UPDATE_GOLDEN=1 the files are rewritten instead, as for
** tests/golden/).  Every case that the constant evaluator can run is also
** run on seeded inputs before and after the passes: the outputs must agree
** (the convolution cases have no evaluator: tests/passes/test_passes.sh
** checks them end to end).  Cases named keep_* are ones where the pass must
** not fire.  Unit tests check the names of outputs, bind_params with and
** without params_as_inputs, the fold pass group switch, the importer's
** params_as_inputs on models/cnn.onnx, and allocation failures.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend/frontend.h"
#include "graph/graph.h"
#include "graph/pass.h"
#include "onnx/onnx.h"
#include "tests/graph_lit.h"
#include "tests/testutil.h"

/* ---- helpers -------------------------------------------------------------- */

#define OK(expr) MLC_TEST_OK(expr)

static mlc_module *new_module(void) {
  mlc_module *m = NULL;
  if (!OK(mlc_module_create(mlc_allocator_default(), &m))) return NULL;
  m->fold = 0; /* the cases keep calls on constants for the passes to see */
  return mlc_test_hold(m);
}

/* A constant of |t| filled with a seeded ramp (|seed| varies it), or with
** |data| when not NULL. */
static mlc_status cst(mlc_module *m, const char *name, mlc_type t, const void *data, int seed, mlc_value **out) {
  int64_t n = mlc_type_numel(&t);
  size_t nb = (size_t)n * mlc_dtype_size(t.dtype);
  void *buf = malloc(nb ? nb : 1);
  if (!buf) return mlc_oom();
  if (data) memcpy(buf, data, nb);
  for (int64_t i = 0; !data && i < n; i++) {
    double v = 0.5 + 0.25 * (double)((i * 7 + seed * 3) % 11) - 1.0;
    if (t.dtype == MLC_DTYPE_F32) ((float *)buf)[i] = (float)v;
    else if (t.dtype == MLC_DTYPE_F64) ((double *)buf)[i] = v;
    else if (t.dtype == MLC_DTYPE_I64) ((int64_t *)buf)[i] = (int64_t)(i % 5);
    else memset((char *)buf + (size_t)i * mlc_dtype_size(t.dtype), 0, mlc_dtype_size(t.dtype));
  }
  mlc_status s = mlc_module_add_const(m, name, &t, buf, nb, out);
  free(buf);
  return s;
}

static int count_bindings(const mlc_func *f) {
  int n = 0;
  for (int b = 0; b < f->nblocks; b++) n += f->blocks[b].n;
  return n;
}

/* Runs the comma-separated |list| of passes with verification; |opt| may
** be NULL. */
static mlc_status run_passes(mlc_module *m, const char *list, const mlc_pipeline_options *opt) {
  mlc_pass passes[16];
  int n = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < 16; t = strtok_r(NULL, ",", &save)) {
    const mlc_pass *p = mlc_pass_find(t);
    if (!p) return mlc_make_status(MLC_NOT_FOUND, "unknown pass %s", t);
    passes[n++] = *p;
  }
  mlc_pass_ctx ctx = {1, NULL, NULL, NULL, opt, NULL, NULL};
  return mlc_pass_run(m, passes, n, &ctx);
}

/* ---- an interpreter over the constant evaluator --------------------------- */

typedef struct run_result {
  int n;
  mlc_dtype dt[8];
  int64_t numel[8];
  double *data[8]; /* malloc'd, as doubles */
} run_result;

static void result_fini(run_result *r) {
  for (int i = 0; i < r->n; i++) free(r->data[i]);
  memset(r, 0, sizeof *r);
}

static double as_double(const void *p, mlc_dtype t, int64_t i) {
  switch (t) {
  case MLC_DTYPE_F32: return ((const float *)p)[i];
  case MLC_DTYPE_F64: return ((const double *)p)[i];
  case MLC_DTYPE_I8: return ((const int8_t *)p)[i];
  case MLC_DTYPE_I32: return ((const int32_t *)p)[i];
  case MLC_DTYPE_I64: return (double)((const int64_t *)p)[i];
  case MLC_DTYPE_F16: case MLC_DTYPE_BF16: case MLC_DTYPE_I16: case MLC_DTYPE_U8:
  case MLC_DTYPE_U16: case MLC_DTYPE_U32: case MLC_DTYPE_U64: case MLC_DTYPE_BOOL:
  case MLC_DTYPE_STRING: case MLC_DTYPE_INVALID: case MLC_DTYPE_COUNT:
    break;
  }
  return NAN;
}

/* The inputs of parameter |i|: a seeded ramp of its type (malloc'd). */
static void *param_data(const mlc_value *p, int i) {
  int64_t n = mlc_type_numel(&p->type);
  size_t es = mlc_dtype_size(p->type.dtype);
  char *d = calloc((size_t)(n > 0 ? n : 1), es);
  for (int64_t k = 0; d && k < n; k++) {
    double v = sin((double)(k + 1) * 0.7 + i) * 2;
    if (p->type.dtype == MLC_DTYPE_F32) ((float *)d)[k] = (float)v;
    else if (p->type.dtype == MLC_DTYPE_F64) ((double *)d)[k] = v;
    else if (p->type.dtype == MLC_DTYPE_I8) ((int8_t *)d)[k] = (int8_t)(v * 50);
    else if (p->type.dtype == MLC_DTYPE_I32) ((int32_t *)d)[k] = (int32_t)(v * 1000);
  }
  return d;
}

/*
** Runs main of |m| on the seeded inputs with mlc_graph_eval, binding by
** binding.  MLC_UNIMPLEMENTED when a call has no evaluator.
*/
static mlc_status interpret(mlc_module *m, run_result *r) {
  memset(r, 0, sizeof *r);
  mlc_func *f = mlc_module_func(m, "main");
  if (!f) return mlc_make_status(MLC_NOT_FOUND, "no main");
  int nids = m->next_value_id;
  void **val = calloc((size_t)nids + 1, sizeof *val);
  size_t *sz = calloc((size_t)nids + 1, sizeof *sz); /* computed values: bytes to free */
  char *owned = calloc((size_t)nids + 1, 1);          /* 1: malloc'd param, 2: const_alloc'd */
  mlc_status s = val && sz && owned ? NULL : mlc_oom();
  for (int i = 0; !s && i < f->nparams; i++) {
    val[f->params[i]->id] = param_data(f->params[i], i);
    owned[f->params[i]->id] = 1;
  }
  for (int bi = 0; !s && bi < f->nblocks; bi++)
    for (int j = 0; !s && j < f->blocks[bi].n; j++) {
      const mlc_binding *b = f->blocks[bi].bindings[j];
      if (b->kind != MLC_CALL_OP || b->nargs > 8 || b->nouts > 1) {
        s = mlc_make_status(MLC_UNIMPLEMENTED, "not an op call");
        break;
      }
      const void *in[8];
      for (int a = 0; a < b->nargs; a++) {
        const mlc_const *c = mlc_value_const(m, b->args[a]);
        in[a] = c ? c->data : val[b->args[a]->id];
      }
      mlc_call_info ci = {m, b->op, b->nargs, b->args, b->nattrs, b->attrs, &b->origin};
      void *out[1] = {NULL};
      s = mlc_graph_eval(&ci, &b->outs[0]->type, 1, in, out);
      if (s) break;
      int id = b->outs[0]->id;
      val[id] = out[0];
      owned[id] = 2;
      sz[id] = (size_t)mlc_type_numel(&b->outs[0]->type) * mlc_dtype_size(b->outs[0]->type.dtype);
    }
  for (int i = 0; !s && i < f->nrets && i < 8; i++) {
    const mlc_value *v = f->rets[i];
    const mlc_const *c = mlc_value_const(m, v);
    const void *d = c ? c->data : val[v->id];
    int64_t n = mlc_type_numel(&v->type);
    r->dt[i] = v->type.dtype;
    r->numel[i] = n;
    r->data[i] = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t k = 0; r->data[i] && k < n; k++) r->data[i][k] = as_double(d, v->type.dtype, k);
    r->n = i + 1;
  }
  for (int i = 0; val && owned && i < nids; i++) {
    if (owned[i] == 1) free(val[i]);
    if (owned[i] == 2) mlc_const_free(m, val[i], sz[i]);
  }
  free(val);
  free(sz);
  free(owned);
  if (s) result_fini(r);
  return s;
}

/* Outputs agree: same count, dtypes and sizes, values within 1e-5 relative. */
static int results_agree(const run_result *a, const run_result *b, char *why, size_t size) {
  if (a->n != b->n) {
    snprintf(why, size, "%d outputs, then %d", a->n, b->n);
    return 0;
  }
  for (int i = 0; i < a->n; i++) {
    if (a->dt[i] != b->dt[i] || a->numel[i] != b->numel[i]) {
      snprintf(why, size, "output %d changed dtype or size", i);
      return 0;
    }
    for (int64_t k = 0; k < a->numel[i]; k++) {
      double x = a->data[i][k], y = b->data[i][k];
      if (!(fabs(x - y) <= 1e-5 * (1 + fabs(x)))) {
        snprintf(why, size, "output %d element %lld: %.9g, then %.9g", i, (long long)k, x, y);
        return 0;
      }
    }
  }
  return 1;
}

/* ---- golden cases: simplify ------------------------------------------------ */

/* Every no-op goes; outputs keep their names. */
static mlc_status build_simplify_noops(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *v, *w;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 2, 3), &x));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(x), NOATTRS, ORG("Relu", "relu"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_COPY, ARGS(v), NOATTRS, ORG("Identity", "id"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(v), ATTRS(INTS("shape", 2, 3)), ORG("Reshape", "same"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_TRANSPOSE, ARGS(v), ATTRS(INTS("perm", 0, 1)), ORG("Transpose", "ident"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_CAST, ARGS(v), ATTRS(mlc_attr_int("dtype", MLC_DTYPE_F32)), ORG("Cast", "same"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_BROADCAST_TO, ARGS(v), ATTRS(INTS("shape", 2, 3)), ORG("Expand", "same"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_SLICE, ARGS(v), ATTRS(INTS("begin", 0, 0), INTS("end", 2, 3), INTS("step", 1, 1)),
                      ORG("Slice", "all"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_CONCAT, ARGS(v), ATTRS(mlc_attr_int("axis", 0)), ORG("Concat", "one"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_EXP, ARGS(v), NOATTRS, ORG("Exp", "exp"), &w));
  v->name = "y";
  w->name = "z";
  TRY(mlc_func_add_ret(f, v));
  return mlc_func_add_ret(f, w);
}

/* Chains collapse: reshapes, permutes (to the identity and not), exact casts. */
static mlc_status build_simplify_chains(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *k, *v, *p, *c, *i8;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 2, 12), &x));
  TRY(mlc_func_add_param(f, "k", &TY(I8, 4), &k));
  TRY(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(x), ATTRS(INTS("shape", 4, 6)), ORG("Reshape", "r1"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(v), ATTRS(INTS("shape", 3, 8)), ORG("Reshape", "r2"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(v), ATTRS(INTS("shape", 2, 3, 4)), ORG("Reshape", "r3"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_TRANSPOSE, ARGS(v), ATTRS(INTS("perm", 1, 2, 0)), ORG("Transpose", "t1"), &p));
  TRY(mlc_graph_emit1(f, MLC_OP_TRANSPOSE, ARGS(p), ATTRS(INTS("perm", 2, 0, 1)), ORG("Transpose", "t2"), &p));
  TRY(mlc_graph_emit1(f, MLC_OP_TRANSPOSE, ARGS(p), ATTRS(INTS("perm", 0, 2, 1)), ORG("Transpose", "t3"), &p));
  TRY(mlc_graph_emit1(f, MLC_OP_TRANSPOSE, ARGS(p), ATTRS(INTS("perm", 1, 0, 2)), ORG("Transpose", "t4"), &p));
  TRY(mlc_graph_emit1(f, MLC_OP_CAST, ARGS(p), ATTRS(mlc_attr_int("dtype", MLC_DTYPE_F64)), ORG("Cast", "up"), &c));
  TRY(mlc_graph_emit1(f, MLC_OP_CAST, ARGS(c), ATTRS(mlc_attr_int("dtype", MLC_DTYPE_F32)), ORG("Cast", "down"), &c));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(c), NOATTRS, ORG("Relu", "relu"), &c));
  TRY(mlc_graph_emit1(f, MLC_OP_CAST, ARGS(k), ATTRS(mlc_attr_int("dtype", MLC_DTYPE_I32)), ORG("Cast", "w1"), &i8));
  TRY(mlc_graph_emit1(f, MLC_OP_CAST, ARGS(i8), ATTRS(mlc_attr_int("dtype", MLC_DTYPE_I64)), ORG("Cast", "w2"), &i8));
  TRY(mlc_graph_emit1(f, MLC_OP_CAST, ARGS(i8), ATTRS(mlc_attr_int("dtype", MLC_DTYPE_F64)), ORG("Cast", "w3"), &i8));
  TRY(mlc_func_add_ret(f, c));
  return mlc_func_add_ret(f, i8);
}

/* What must stay: a narrowing cast in a chain, a cast through an int, a
** reversing slice of the same shape, a real reshape and permute. */
static mlc_status build_simplify_keep(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *a, *b, *r, *t, *s;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 2, 3), &x));
  TRY(mlc_graph_emit1(f, MLC_OP_CAST, ARGS(x), ATTRS(mlc_attr_int("dtype", MLC_DTYPE_F16)), ORG("Cast", "narrow"), &a));
  TRY(mlc_graph_emit1(f, MLC_OP_CAST, ARGS(a), ATTRS(mlc_attr_int("dtype", MLC_DTYPE_F32)), ORG("Cast", "back"), &a));
  TRY(mlc_graph_emit1(f, MLC_OP_CAST, ARGS(x), ATTRS(mlc_attr_int("dtype", MLC_DTYPE_I32)), ORG("Cast", "trunc"), &b));
  TRY(mlc_graph_emit1(f, MLC_OP_CAST, ARGS(b), ATTRS(mlc_attr_int("dtype", MLC_DTYPE_F32)), ORG("Cast", "float"), &b));
  TRY(mlc_graph_emit1(f, MLC_OP_SLICE, ARGS(x), ATTRS(INTS("begin", 1, 2), INTS("end", -1, -1), INTS("step", -1, -1)),
                      ORG("Slice", "reverse"), &s));
  TRY(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(x), ATTRS(INTS("shape", 3, 2)), ORG("Reshape", "real"), &r));
  TRY(mlc_graph_emit1(f, MLC_OP_TRANSPOSE, ARGS(x), ATTRS(INTS("perm", 1, 0)), ORG("Transpose", "real"), &t));
  TRY(mlc_func_add_ret(f, a));
  TRY(mlc_func_add_ret(f, b));
  TRY(mlc_func_add_ret(f, s));
  TRY(mlc_func_add_ret(f, r));
  return mlc_func_add_ret(f, t);
}

/* ---- golden cases: fold_scale_shift --------------------------------------- */

/* conv + multiply + add (BatchNormalization), and a conv without bias + add. */
static mlc_status build_fss_conv(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w, *b, *s, *t, *w2, *t2, *v;
  mlc_attr conv[4] = {INTS("strides", 1, 1), INTS("pads", 0, 0, 0, 0), INTS("dilations", 1, 1),
                      mlc_attr_int("groups", 1)};
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 2, 4, 4), &x));
  TRY(cst(m, "w", TY(F32, 3, 2, 1, 1), NULL, 1, &w));
  TRY(cst(m, "b", TY(F32, 3), NULL, 2, &b));
  TRY(cst(m, "s", TY(F32, 3, 1, 1), (float[]){2, 0.5f, -1}, 0, &s));
  TRY(cst(m, "t", TY(F32, 1, 3, 1, 1), (float[]){1, 2, 3}, 0, &t));
  TRY(cst(m, "w2", TY(F32, 3, 3, 1, 1), NULL, 3, &w2));
  TRY(cst(m, "t2", TY0(F32), (float[]){0.25f}, 0, &t2));
  TRY(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(x, w, b), conv, 4, ORG("Conv", "conv"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(v, s), NOATTRS, ORG("BatchNormalization", "bn"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(t, v), NOATTRS, ORG("BatchNormalization", "bn"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(v), NOATTRS, ORG("Relu", "relu"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(v, w2), conv, 4, ORG("Conv", "conv2"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_SUB, ARGS(v, t2), NOATTRS, ORG("Sub", "shift"), &v));
  v->name = "y";
  return mlc_func_add_ret(f, v);
}

/* Must not fire: a conv whose output has two users, a scale along the
** wrong axis, a weight that is a parameter, a scale that is not a
** constant, a scale that grows the output. */
static mlc_status build_fss_keep_conv(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *wp, *w, *s, *sw, *big, *v, *u, *r, *q, *g, *h;
  mlc_attr conv[4] = {INTS("strides", 1, 1), INTS("pads", 0, 0, 0, 0), INTS("dilations", 1, 1),
                      mlc_attr_int("groups", 1)};
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 2, 2, 2), &x));
  TRY(mlc_func_add_param(f, "wp", &TY(F32, 2, 2, 1, 1), &wp));
  TRY(cst(m, "w", TY(F32, 2, 2, 1, 1), NULL, 1, &w));
  TRY(cst(m, "s", TY(F32, 2, 1, 1), NULL, 2, &s));
  TRY(cst(m, "s_w_axis", TY(F32, 1, 1, 2), NULL, 3, &sw)); /* 2 channels, but along W */
  TRY(cst(m, "s_big", TY(F32, 2, 1, 2, 1, 1), NULL, 4, &big));
  TRY(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(x, w), conv, 4, ORG("Conv", "two_users"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(v, s), NOATTRS, ORG("Mul", "m1"), &u));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(u, v), NOATTRS, ORG("Add", "a1"), &u));
  TRY(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(u, w), conv, 4, ORG("Conv", "wrong_axis"), &r));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(r, sw), NOATTRS, ORG("Mul", "m2"), &r));
  TRY(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(r, wp), conv, 4, ORG("Conv", "param_weight"), &q));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(q, s), NOATTRS, ORG("Mul", "m3"), &q));
  TRY(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(q, w), conv, 4, ORG("Conv", "var_scale"), &g));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(g, x), NOATTRS, ORG("Mul", "m4"), &g));
  TRY(mlc_graph_emit1(f, MLC_OP_CONV, ARGS(g, w), conv, 4, ORG("Conv", "grows"), &h));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(h, big), NOATTRS, ORG("Mul", "m5"), &h));
  return mlc_func_add_ret(f, h);
}

/* matmul -> multiply; matmul -> add -> multiply -> add (Gemm +
** BatchNormalization on [N, C]); float64. */
static mlc_status build_fss_matmul(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w1, *s1, *w2, *b2, *s2, *t2, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F64, 2, 3, 4), &x));
  TRY(cst(m, "w1", TY(F64, 4, 5), NULL, 1, &w1));
  TRY(cst(m, "s1", TY(F64, 1, 5), NULL, 2, &s1));
  TRY(cst(m, "w2", TY(F64, 5, 2), NULL, 3, &w2));
  TRY(cst(m, "b2", TY(F64, 2), NULL, 4, &b2));
  TRY(cst(m, "s2", TY(F64, 2), (double[]){3, -0.5}, 0, &s2));
  TRY(cst(m, "t2", TY(F64, 1, 1, 2), (double[]){0.125, 4}, 0, &t2));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(x, w1), NOATTRS, ORG("MatMul", "mm1"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(s1, v), NOATTRS, ORG("Mul", "scale1"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(v, w2), NOATTRS, ORG("Gemm", "fc"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, b2), NOATTRS, ORG("Gemm", "fc"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(v, s2), NOATTRS, ORG("BatchNormalization", "bn"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, t2), NOATTRS, ORG("BatchNormalization", "bn"), &v));
  return mlc_func_add_ret(f, v);
}

/* Must not fire: a matmul scaled along its rows, a matmul whose output is
** returned, an int matmul. */
static mlc_status build_fss_keep_matmul(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *k, *w, *wi, *rows, *s, *si, *v, *o, *i;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 3, 4), &x));
  TRY(mlc_func_add_param(f, "k", &TY(I32, 3, 4), &k));
  TRY(cst(m, "w", TY(F32, 4, 5), NULL, 1, &w));
  TRY(cst(m, "wi", TY(I32, 4, 5), NULL, 0, &wi));
  TRY(cst(m, "rows", TY(F32, 3, 1), NULL, 2, &rows));
  TRY(cst(m, "s", TY(F32, 5), NULL, 3, &s));
  TRY(cst(m, "si", TY(I32, 5), NULL, 0, &si));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(x, w), NOATTRS, ORG("MatMul", "rows"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(v, rows), NOATTRS, ORG("Mul", "by_row"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(x, w), NOATTRS, ORG("MatMul", "returned"), &o));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(o, s), NOATTRS, ORG("Mul", "scaled"), &s));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(k, wi), NOATTRS, ORG("MatMul", "int"), &i));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(i, si), NOATTRS, ORG("Mul", "int_scale"), &i));
  TRY(mlc_func_add_ret(f, v));
  TRY(mlc_func_add_ret(f, o));
  TRY(mlc_func_add_ret(f, s));
  return mlc_func_add_ret(f, i);
}

/* ---- golden cases: cse ------------------------------------------------------ */

/* Duplicates merge, also through chains and equal small constants;
** different attributes do not. */
static mlc_status build_cse_merge(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *c1, *c2, *a, *b, *a2, *b2, *p, *q, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 2, 3), &x));
  TRY(cst(m, "one", TY0(F32), (float[]){1}, 0, &c1));
  TRY(cst(m, "one_again", TY0(F32), (float[]){1}, 0, &c2));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(x), NOATTRS, ORG("Relu", "r1"), &a));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(x), NOATTRS, ORG("Relu", "r2"), &b));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(a, c1), NOATTRS, ORG("Add", "a1"), &a2));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(b, c2), NOATTRS, ORG("Add", "a2"), &b2));
  TRY(mlc_graph_emit1(f, MLC_OP_TRANSPOSE, ARGS(a2), ATTRS(INTS("perm", 1, 0)), ORG("Transpose", "t1"), &p));
  TRY(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(b2), ATTRS(INTS("shape", 3, 2)), ORG("Reshape", "r"), &q));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(p, q), NOATTRS, ORG("Add", "sum"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(a2, b2), NOATTRS, ORG("Mul", "prod"), &p));
  v->name = "y";
  p->name = "z";
  TRY(mlc_func_add_ret(f, v));
  return mlc_func_add_ret(f, p);
}

/* Must not merge: calls in a non-dataflow block, reductions over other
** axes, leaky_relu with another alpha.  Two outputs that are the same call merge, and keep their names
** (the second through a copy). */
static mlc_status build_cse_keep(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *a, *b, *s0, *s1, *l1, *l2, *o1, *o2;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 2, 3), &x));
  TRY(mlc_graph_emit1(f, MLC_OP_EXP, ARGS(x), NOATTRS, ORG("Exp", "e1"), &a));
  TRY(mlc_graph_emit1(f, MLC_OP_EXP, ARGS(x), NOATTRS, ORG("Exp", "e2"), &b));
  f->blocks[0].dataflow = 0;
  TRY(mlc_graph_emit1(f, MLC_OP_SUM, ARGS(a), ATTRS(INTS("axes", 0), mlc_attr_int("keepdims", 0)), ORG("ReduceSum", "s0"),
                      &s0));
  TRY(mlc_graph_emit1(f, MLC_OP_SUM, ARGS(a), ATTRS(INTS("axes", 1), mlc_attr_int("keepdims", 0)), ORG("ReduceSum", "s1"),
                      &s1));
  TRY(mlc_graph_emit1(f, MLC_OP_LEAKY_RELU, ARGS(x), ATTRS(mlc_attr_float("alpha", 0.1)), ORG("LeakyRelu", "l1"), &l1));
  TRY(mlc_graph_emit1(f, MLC_OP_LEAKY_RELU, ARGS(x), ATTRS(mlc_attr_float("alpha", 0.2)), ORG("LeakyRelu", "l2"), &l2));
  TRY(mlc_graph_emit1(f, MLC_OP_SUB, ARGS(l1, l2), NOATTRS, ORG("Sub", "ldiff"), &l1));
  TRY(mlc_graph_emit1(f, MLC_OP_SIGMOID, ARGS(b), NOATTRS, ORG("Sigmoid", "o1"), &o1));
  TRY(mlc_graph_emit1(f, MLC_OP_SIGMOID, ARGS(b), NOATTRS, ORG("Sigmoid", "o2"), &o2));
  o1->name = "first";
  o2->name = "second";
  TRY(mlc_func_add_ret(f, s0));
  TRY(mlc_func_add_ret(f, s1));
  TRY(mlc_func_add_ret(f, o1));
  TRY(mlc_func_add_ret(f, o2));
  return mlc_func_add_ret(f, l1);
}

/* ---- golden cases: bind_params ---------------------------------------------- */

/* A weight imported as a parameter with its known value, bound. */
static mlc_status build_bind(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w, *wc, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 2, 3), &x));
  TRY(mlc_func_add_param(f, "fc.weight", &TY(F32, 3, 4), &w));
  TRY(cst(m, "fc.weight", TY(F32, 3, 4), NULL, 1, &wc));
  TRY(mlc_func_set_param_value(f, 1, wc));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(x, w), NOATTRS, ORG("MatMul", "fc"), &v));
  return mlc_func_add_ret(f, v);
}

typedef struct golden_case {
  const char *dir;    /* tests/passes/<dir>/ */
  const char *name;   /* <name>.out */
  mlc_status (*build)(mlc_module *m);
  const char *passes; /* comma-separated */
  int numeric;        /* 1: the evaluator runs it before and after */
} golden_case;

static const golden_case golden_cases[] = {
    {"simplify", "noops", build_simplify_noops, "simplify,dce", 1},
    {"simplify", "chains", build_simplify_chains, "simplify,dce", 1},
    {"simplify", "keep", build_simplify_keep, "simplify,dce", 1},
    {"fold_scale_shift", "conv", build_fss_conv, "fold_scale_shift,dce", 0},
    {"fold_scale_shift", "keep_conv", build_fss_keep_conv, "fold_scale_shift,dce", 0},
    {"fold_scale_shift", "matmul", build_fss_matmul, "fold_scale_shift,dce", 1},
    {"fold_scale_shift", "keep_matmul", build_fss_keep_matmul, "fold_scale_shift,dce", 1},
    {"cse", "merge", build_cse_merge, "cse,dce", 1},
    {"cse", "keep", build_cse_keep, "cse,dce", 1},
    {"bind_params", "bind", build_bind, "bind_params,dce", 0},
    {NULL, NULL, NULL, NULL, 0},
};

/* ---- golden runner ------------------------------------------------------------ */

/* The case's text (malloc'd), or NULL after reporting a failure.  Checks
** the outputs before and after when the case asks. */
static char *golden_text(const golden_case *gc) {
  mlc_module *m = new_module();
  if (!m) return NULL;
  char *text = NULL;
  run_result before = {0}, after = {0};
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_status s = gc->build(m);
  if (s) {
    printf("\n  %s/%s: building the module failed: %s\n", gc->dir, gc->name, mlc_status_message(s));
    mlc_status_free(s);
    CU_FAIL("golden case build");
    goto out;
  }
  if (!OK(mlc_graph_verify(m))) goto out;
  if (gc->numeric && !OK(interpret(m, &before))) goto out;
  mlc_sb_puts(&b, "# ==== before ====\n");
  mlc_graph_print(m, &b);
  if (!OK(run_passes(m, gc->passes, NULL))) goto out;
  mlc_sb_printf(&b, "# ==== after %s ====\n", gc->passes);
  mlc_graph_print(m, &b);
  if (gc->numeric) {
    char why[256];
    if (!OK(interpret(m, &after))) goto out;
    if (!results_agree(&before, &after, why, sizeof why)) {
      printf("\n  %s/%s: the passes changed the outputs: %s\n", gc->dir, gc->name, why);
      CU_FAIL("outputs changed");
    }
  }
  CU_ASSERT(!b.oom);
  text = strdup(mlc_sb_str(&b));
out:
  mlc_sb_fini(&b);
  result_fini(&before);
  result_fini(&after);
  mlc_module_destroy(m);
  return text;
}

static void test_golden(void) {
  const char *upd = getenv("MLC_UPDATE_GOLDEN");
  int update = upd && strcmp(upd, "1") == 0;
  for (const golden_case *gc = golden_cases; gc->dir; gc++) {
    char rel[512];
    snprintf(rel, sizeof rel, "tests/passes/%s/%s.out", gc->dir, gc->name);
    char *got = golden_text(gc);
    if (!got) continue;
    const char *path = mlc_test_src_path(rel);
    if (update) {
      char dir[512];
      snprintf(dir, sizeof dir, "%s", mlc_test_src_path("tests/passes"));
      mkdir(dir, 0777);
      snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/%s", gc->dir);
      mkdir(dir, 0777);
      CU_ASSERT(mlc_test_write_file(mlc_test_src_path(rel), got, strlen(got)) == 0);
      printf("\n  %s: written", rel);
    } else {
      char *want = mlc_test_read_file(path, NULL);
      if (!want) {
        printf("\n  %s: cannot read %s (set MLC_SRCDIR, or MLC_UPDATE_GOLDEN=1 to create it)\n", rel, path);
        CU_FAIL("golden file missing");
      } else if (strcmp(want, got) != 0) {
        int line = 1;
        for (const char *p = want, *q = got; *p && *p == *q; p++, q++) line += *p == '\n';
        printf("\n  golden mismatch: %s (first difference at line %d; MLC_UPDATE_GOLDEN=1 accepts)\n", path, line);
        CU_FAIL("golden mismatch");
      }
      free(want);
    }
    free(got);
  }
}

/* ---- unit tests ----------------------------------------------------------------- */

static const char *ret_name(const mlc_module *m, int i) {
  const mlc_func *f = mlc_module_func(m, "main");
  return f && i < f->nrets && f->rets[i]->name ? f->rets[i]->name : "(none)";
}

/* The outputs keep their names when their values are replaced. */
static void test_output_names(void) {
  mlc_module *m = new_module();
  if (!m) return;
  MLC_TEST_OK_FATAL(build_simplify_noops(m));
  MLC_TEST_OK_FATAL(run_passes(m, "simplify,dce", NULL));
  CU_ASSERT_STRING_EQUAL(ret_name(m, 0), "y"); /* relu's value, renamed */
  CU_ASSERT_STRING_EQUAL(ret_name(m, 1), "z");
  mlc_module_destroy(m);

  m = new_module();
  if (!m) return;
  MLC_TEST_OK_FATAL(build_cse_keep(m));
  MLC_TEST_OK_FATAL(run_passes(m, "cse,dce", NULL));
  CU_ASSERT_STRING_EQUAL(ret_name(m, 2), "first");
  CU_ASSERT_STRING_EQUAL(ret_name(m, 3), "second"); /* a copy of "first" */
  mlc_func *f = mlc_module_func(m, "main");
  CU_ASSERT(f && f->rets[2] != f->rets[3]);
  mlc_module_destroy(m);

  /* A returned no-op of a parameter: a copy with the output's name. */
  m = new_module();
  if (!m) return;
  mlc_value *x, *v;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 4), &x));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(x), ATTRS(INTS("shape", 4)), NULL, &v));
  v->name = "out";
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, v));
  MLC_TEST_OK_FATAL(run_passes(m, "simplify,dce", NULL));
  CU_ASSERT_STRING_EQUAL(ret_name(m, 0), "out");
  CU_ASSERT(f->rets[0]->kind == MLC_VALUE_VAR && f->rets[0]->def && f->rets[0]->def->op == MLC_OP_COPY);
  CU_ASSERT_STRING_EQUAL(x->name, "x");
  mlc_module_destroy(m);

  /* fold_scale_shift: the conv takes over the name of the last shift. */
  m = new_module();
  if (!m) return;
  MLC_TEST_OK_FATAL(build_fss_conv(m));
  MLC_TEST_OK_FATAL(run_passes(m, "fold_scale_shift,dce", NULL));
  f = mlc_module_func(m, "main");
  CU_ASSERT_STRING_EQUAL(ret_name(m, 0), "y");
  CU_ASSERT_EQUAL(count_bindings(f), 3); /* conv, relu, conv */
  CU_ASSERT(f->rets[0]->def && f->rets[0]->def->op == MLC_OP_CONV && f->rets[0]->def->nargs == 3);
  mlc_module_destroy(m);
}

/* Chains over symbolic dims: rewritten only where inference agrees. */
static void test_symbolic_chains(void) {
  mlc_module *m = new_module();
  if (!m) return;
  int64_t n;
  mlc_func *f;
  mlc_value *x, *v, *t;
  MLC_TEST_OK_FATAL(mlc_module_sym(m, "n", &n));
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, n, 2, 2), &x));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(x), ATTRS(INTS("shape", n, 4)), NULL, &v));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(v), ATTRS(INTS("shape", n, 2, 2)), NULL, &v));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_TRANSPOSE, ARGS(v), ATTRS(INTS("perm", 1, 0, 2)), NULL, &t));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_TRANSPOSE, ARGS(t), ATTRS(INTS("perm", 1, 0, 2)), NULL, &t));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, t));
  MLC_TEST_OK_FATAL(run_passes(m, "simplify,dce", NULL));
  CU_ASSERT_EQUAL(count_bindings(f), 1); /* the returned x's copy */
  CU_ASSERT(f->rets[0]->def && f->rets[0]->def->op == MLC_OP_COPY && f->rets[0]->def->args[0] == x);
  mlc_module_destroy(m);
}

/* bind_params binds known values unless the weights stay inputs, which
** then have them as defaults. */
static void test_bind_params(void) {
  for (int keep = 0; keep < 2; keep++) {
    mlc_module *m = new_module();
    if (!m) return;
    MLC_TEST_OK_FATAL(build_bind(m));
    mlc_pipeline_options opt;
    memset(&opt, 0, sizeof opt);
    opt.params_as_inputs = keep;
    MLC_TEST_OK_FATAL(run_passes(m, "bind_params,dce", &opt));
    mlc_func *f = mlc_module_func(m, "main");
    CU_ASSERT_EQUAL(f->nparams, keep ? 2 : 1);
    CU_ASSERT_PTR_NULL(mlc_func_param_value(f, 1));
    CU_ASSERT_EQUAL(m->nconsts, 1); /* the known value: the input's default, or used */
    CU_ASSERT_EQUAL(mlc_func_param_default(f, 1) != NULL, keep);
    CU_ASSERT_PTR_NULL(mlc_func_param_default(f, 0));
    const mlc_binding *b = f->blocks[0].bindings[0];
    CU_ASSERT_EQUAL(b->args[1]->kind, keep ? MLC_VALUE_PARAM : MLC_VALUE_CONST);
    mlc_module_destroy(m);
  }
  /* No known values: nothing changes. */
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *x;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 4), &x));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, x));
  MLC_TEST_OK_FATAL(run_passes(m, "bind_params", NULL));
  CU_ASSERT_EQUAL(f->nparams, 1);
  CU_ASSERT_PTR_EQUAL(f->rets[0], x);
  MLC_TEST_ERR(mlc_func_set_param_value(f, 3, NULL), MLC_INTERNAL, "no parameter 3");
  mlc_module_destroy(m);
}

/* A parameter's default (an ONNX input that is also an initializer) is
** never bound or folded: the parameter stays, its uses stay, dce keeps the
** constant, and removing an earlier parameter moves the default along. */
static void test_param_defaults(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *x, *b, *bc, *v, *sym_p;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 2, 3), &x));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "b", &TY(F32, 3), &b));
  MLC_TEST_OK_FATAL(cst(m, "b", TY(F32, 3), NULL, 1, &bc));
  MLC_TEST_OK_FATAL(mlc_func_set_param_default(f, 1, bc));
  MLC_TEST_ERR(mlc_func_set_param_default(f, 0, bc), MLC_INTERNAL, "not a static constant of its type");
  MLC_TEST_ERR(mlc_func_set_param_default(f, 2, NULL), MLC_INTERNAL, "no parameter 2");
  MLC_TEST_ERR(mlc_func_set_param_default(f, 1, x), MLC_INTERNAL, "not a static constant");
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(x, b), NOATTRS, ORG("Add", "add"), &v));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, v));
  mlc_pipeline_options opt;
  memset(&opt, 0, sizeof opt);
  MLC_TEST_OK_FATAL(run_passes(m, "bind_params,fold_constant,dce", &opt));
  CU_ASSERT_EQUAL(f->nparams, 2);
  CU_ASSERT_PTR_EQUAL(f->blocks[0].bindings[0]->args[1], b);
  CU_ASSERT_EQUAL(m->nconsts, 1);
  CU_ASSERT_PTR_EQUAL(mlc_func_param_default(f, 1), bc);
  CU_ASSERT_PTR_NULL(mlc_func_param_value(f, 1));
  /* the first parameter goes: the default follows "b" to index 0 */
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "p", &TY(F32, 3), &sym_p));
  mlc_func_remove_param(f, 0);
  CU_ASSERT_PTR_EQUAL(f->params[0], b);
  CU_ASSERT_PTR_EQUAL(mlc_func_param_default(f, 0), bc);
  CU_ASSERT_PTR_NULL(mlc_func_param_default(f, 1));
  MLC_TEST_OK(mlc_func_set_param_default(f, 0, NULL));
  CU_ASSERT_PTR_NULL(mlc_func_param_default(f, 0));
  mlc_module_destroy(m);
}

/* The fold group: switched off, simplify, fold_scale_shift and cse do not run. */
static void test_fold_group(void) {
  int n[2];
  for (int off = 0; off < 2; off++) {
    mlc_module *m = new_module();
    if (!m) return;
    MLC_TEST_OK_FATAL(build_fss_conv(m));
    mlc_pipeline_options opt;
    memset(&opt, 0, sizeof opt);
    opt.no_fold = off;
    opt.no_fuse = 1;
    opt.no_layout = 1;
    mlc_pass_ctx ctx = {1, NULL, NULL, NULL, &opt, NULL, NULL};
    MLC_TEST_OK_FATAL(mlc_graph_pipeline(m, &ctx));
    n[off] = count_bindings(mlc_module_func(m, "main"));
    mlc_module_destroy(m);
  }
  CU_ASSERT(n[0] < n[1]);
}

/* The importer's params_as_inputs on the bundled CNN: every float
** initializer a parameter with its known value; bound again, the pipeline
** gives what the default import gives. */
static void test_import_params(void) {
  const char *path = mlc_test_src_path("models/cnn.onnx");
  mlc_onnx_model *om = NULL;
  if (!OK(mlc_onnx_load_file(path, &om))) return;
  int nb[2] = {0, 0}, ninit = mlc_onnx_model_get_info(om)->graph->ninitializers;
  for (int pai = 0; pai < 2; pai++) {
    mlc_fe_options fo = {0, pai};
    mlc_module *m = NULL;
    if (!OK(mlc_fe_import(om, &fo, &m))) break;
    mlc_func *f = mlc_module_func(m, "main");
    CU_ASSERT_EQUAL(f->nparams, pai ? 1 + ninit : 1);
    if (pai) {
      CU_ASSERT_STRING_EQUAL(f->params[1]->name, "stem.conv.weight");
      CU_ASSERT_PTR_NOT_NULL(mlc_func_param_value(f, 1));
      CU_ASSERT_PTR_NULL(mlc_func_param_value(f, 0));
    }
    mlc_pipeline_options opt;
    memset(&opt, 0, sizeof opt);
    opt.no_fuse = opt.no_layout = 1;
    mlc_pass_ctx ctx = {1, NULL, NULL, NULL, &opt, NULL, NULL};
    if (OK(mlc_graph_pipeline(m, &ctx))) {
      nb[pai] = count_bindings(f);
      CU_ASSERT_EQUAL(f->nparams, 1);
    }
    mlc_module_destroy(m);
  }
  CU_ASSERT(nb[0] > 0 && nb[0] == nb[1]);
  /* Kept as inputs: the same number of parameters after the pipeline, and
  ** no batch norm folded (the weights are not constants); each weight is
  ** its input's default, and no other weight data is left. */
  mlc_fe_options fo = {0, 1};
  mlc_module *m = NULL;
  if (OK(mlc_fe_import(om, &fo, &m))) {
    mlc_pipeline_options opt;
    memset(&opt, 0, sizeof opt);
    opt.no_fuse = opt.no_layout = 1;
    opt.params_as_inputs = 1;
    mlc_pass_ctx ctx = {1, NULL, NULL, NULL, &opt, NULL, NULL};
    if (OK(mlc_graph_pipeline(m, &ctx))) {
      mlc_func *f = mlc_module_func(m, "main");
      CU_ASSERT_EQUAL(f->nparams, 1 + ninit);
      CU_ASSERT(count_bindings(f) > nb[0]);
      CU_ASSERT_PTR_NULL(mlc_func_param_default(f, 0));
      int ndefaults = 0;
      for (int i = 1; i < f->nparams; i++) {
        const mlc_value *c = mlc_func_param_default(f, i);
        ndefaults += c != NULL;
        CU_ASSERT(c && mlc_type_equal(&c->type, &f->params[i]->type));
      }
      CU_ASSERT_EQUAL(ndefaults, ninit);
      for (int i = 0; i < m->nconsts; i++) { /* every large constant is a default */
        int is_default = 0;
        for (int k = 1; k < f->nparams; k++) {
          const mlc_value *c = mlc_func_param_default(f, k);
          is_default |= c && c->const_index == i;
        }
        CU_ASSERT(is_default || m->consts[i].nbytes < 64);
      }
    }
    mlc_module_destroy(m);
  }
  mlc_onnx_model_destroy(om);
}

/* Allocation failures in the passes: an error status, never a crash or a
** leak. */
static void test_alloc_failures(void) {
  static const struct {
    mlc_status (*build)(mlc_module *m);
    const char *passes;
  } cases[] = {
      {build_simplify_chains, "simplify"},
      {build_fss_conv, "fold_scale_shift"},
      {build_fss_matmul, "fold_scale_shift"},
      {build_cse_merge, "cse"},
      {build_bind, "bind_params"},
  };
  int failed_runs = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (unsigned long long k = 1; k < 400; k++) {
      mlc_module *m = new_module();
      if (!m || !OK(cases[c].build(m))) return;
      if (mlc_test_fail_alloc(k) < 0) {
        mlc_module_destroy(m);
        return;
      }
      mlc_status s = run_passes(m, cases[c].passes, NULL);
      int hit = mlc_test_fail_alloc(0);
      if (s) CU_ASSERT_EQUAL(mlc_status_code(s), MLC_RESOURCE_EXHAUSTED);
      failed_runs += s != NULL;
      mlc_status_free(s);
      mlc_module_destroy(m);
      if (!hit) break;
    }
  CU_ASSERT(failed_runs > 10); /* the loop reached the passes' allocations */
}

static void register_passes(void) {
  static const CU_TestInfo tests[] = {
      {"golden", test_golden},
      {"output_names", test_output_names},
      {"symbolic_chains", test_symbolic_chains},
      {"bind_params", test_bind_params},
      {"fold_group", test_fold_group},
      {"import_params_as_inputs", test_import_params},
      {"param_defaults", test_param_defaults},
      {"alloc_failures", test_alloc_failures},
      CU_TEST_INFO_NULL,
  };
  mlc_test_add_suite("graph_passes", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_passes, NULL};
  return mlc_test_main("test_graph_passes", fns);
}
