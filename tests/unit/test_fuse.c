/*
** test_fuse.c: unit and golden tests of annotate_pattern and fuse_ops, and
** of the verifier's checks of primitive functions.
**
** Golden tests: each case builds a module in C, prints it, runs
** annotate_pattern and fuse_ops (verifying after each) and prints it again;
** the text is compared with tests/golden/fuse_ops/<case>.out under
** $MLC_SRCDIR.  With MLC_UPDATE_GOLDEN=1 the files are rewritten instead
** (tests/golden/README.md).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* A constant of |t| filled with |fill| (float32) or zeros. */
static mlc_status cst(mlc_module *m, const char *name, mlc_type t, float fill, mlc_value **out) {
  size_t n = (size_t)mlc_type_numel(&t), nb = n * mlc_dtype_size(t.dtype);
  float *data = calloc(1, nb ? nb : 1);
  if (!data) return mlc_oom();
  for (size_t i = 0; t.dtype == MLC_DTYPE_F32 && i < n; i++) data[i] = fill;
  mlc_status s = mlc_module_add_const(m, name, &t, data, nb, out);
  free(data);
  return s;
}

/* A scalar float32 constant. */
static mlc_status scalar(mlc_module *m, float v, mlc_value **out) { return cst(m, NULL, TY0(F32), v, out); }

static mlc_status conv(mlc_func *f, mlc_value *x, mlc_value *w, const char *node, mlc_value **out) {
  return mlc_graph_emit1(f, MLC_OP_CONV, ARGS(x, w),
                         ATTRS(INTS("strides", 1, 1), INTS("pads", 1, 1, 1, 1), INTS("dilations", 1, 1),
                               mlc_attr_int("groups", 1)),
                         ORG("Conv", node), out);
}

/* Emits a decomposed layer normalization of |x| over its last axis. */
static mlc_status layer_norm(mlc_func *f, mlc_value *x, mlc_value *gamma, mlc_value *beta, const char *pre,
                             mlc_value **out) {
  mlc_module *m = f->mod;
  mlc_value *mean, *d, *two, *p, *var, *eps, *e, *s, *n, *g;
  int last = x->type.rank - 1;
  char node[64];
  (void)pre;
  TRY(scalar(m, 2, &two));
  TRY(scalar(m, 1e-5f, &eps));
#define NODE(s) (snprintf(node, sizeof node, "%s/%s", pre, (s)), node)
  TRY(mlc_graph_emit1(f, MLC_OP_MEAN, ARGS(x), ATTRS(INTS("axes", last), mlc_attr_int("keepdims", 1)),
                      ORG("ReduceMean", NODE("mean")), &mean));
  TRY(mlc_graph_emit1(f, MLC_OP_SUB, ARGS(x, mean), NOATTRS, ORG("Sub", NODE("sub")), &d));
  TRY(mlc_graph_emit1(f, MLC_OP_POW, ARGS(d, two), NOATTRS, ORG("Pow", NODE("pow")), &p));
  TRY(mlc_graph_emit1(f, MLC_OP_MEAN, ARGS(p), ATTRS(INTS("axes", last), mlc_attr_int("keepdims", 1)),
                      ORG("ReduceMean", NODE("var")), &var));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(var, eps), NOATTRS, ORG("Add", NODE("eps")), &e));
  TRY(mlc_graph_emit1(f, MLC_OP_SQRT, ARGS(e), NOATTRS, ORG("Sqrt", NODE("sqrt")), &s));
  TRY(mlc_graph_emit1(f, MLC_OP_DIV, ARGS(d, s), NOATTRS, ORG("Div", NODE("div")), &n));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(n, gamma), NOATTRS, ORG("Mul", NODE("scale")), &g));
#undef NODE
  snprintf(node, sizeof node, "%s/shift", pre);
  return mlc_graph_emit1(f, MLC_OP_ADD, ARGS(g, beta), NOATTRS, ORG("Add", node), out);
}

/* ---- golden cases: builders ------------------------------------------------- */

/* conv, bias add, relu: one group anchored by the conv. */
static mlc_status build_conv_add_relu(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w, *b, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 3, 8, 8), &x));
  TRY(cst(m, "w", TY(F32, 4, 3, 3, 3), 0.5f, &w));
  TRY(cst(m, "b", TY(F32, 4, 1, 1), 0.25f, &b));
  TRY(conv(f, x, w, "conv", &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, b), NOATTRS, ORG("Add", "bias"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(v), NOATTRS, ORG("Relu", "relu"), &v));
  return mlc_func_add_ret(f, v);
}

/* Two residual blocks: the residual add joins the second conv's group (the
** first conv's group also takes an add of its shape, but the add reads the
** second conv, which reads the first group: a cycle). */
static mlc_status build_conv_residual(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w1, *w2, *b, *r1, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 4, 8, 8), &x));
  TRY(cst(m, "w1", TY(F32, 4, 4, 3, 3), 0.5f, &w1));
  TRY(cst(m, "w2", TY(F32, 4, 4, 3, 3), 0.25f, &w2));
  TRY(cst(m, "b", TY(F32, 4, 1, 1), 0.125f, &b));
  TRY(conv(f, x, w1, "conv1", &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, b), NOATTRS, ORG("Add", "bias1"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(v), NOATTRS, ORG("Relu", "relu1"), &r1));
  TRY(conv(f, r1, w2, "conv2", &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, b), NOATTRS, ORG("Add", "bias2"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(r1, v), NOATTRS, ORG("Add", "residual"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(v), NOATTRS, ORG("Relu", "relu2"), &v));
  return mlc_func_add_ret(f, v);
}

/* matmul, bias add and GELU x*0.5*(1+erf(x/sqrt2)) written out, on a
** symbolic batch: one group; its params carry the symbol. */
static mlc_status build_matmul_gelu(mlc_module *m) {
  int64_t n;
  mlc_func *f;
  mlc_value *x, *w, *b, *h, *v, *sq2, *one, *half;
  TRY(mlc_module_sym(m, "n", &n));
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, n, 8), &x));
  TRY(cst(m, "w", TY(F32, 8, 16), 0.5f, &w));
  TRY(cst(m, "b", TY(F32, 16), 0.25f, &b));
  TRY(scalar(m, 1.4142135f, &sq2));
  TRY(scalar(m, 1, &one));
  TRY(scalar(m, 0.5f, &half));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(x, w), NOATTRS, ORG("MatMul", "fc"), &h));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(h, b), NOATTRS, ORG("Add", "fc.bias"), &h));
  TRY(mlc_graph_emit1(f, MLC_OP_DIV, ARGS(h, sq2), NOATTRS, ORG("Div", "gelu/div"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ERF, ARGS(v), NOATTRS, ORG("Erf", "gelu/erf"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, one), NOATTRS, ORG("Add", "gelu/add"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(h, v), NOATTRS, ORG("Mul", "gelu/mul"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(v, half), NOATTRS, ORG("Mul", "gelu/half"), &v));
  return mlc_func_add_ret(f, v);
}

/* A layer normalization written out (ReduceMean, Sub, Pow, ReduceMean,
** Add, Sqrt, Div, Mul, Add) of a matmul with a residual add: the matmul
** group takes the adds, the normalization is one group of its own (its
** Sub also fits the matmul's group by shape, but reads the mean, which
** reads that group). */
static mlc_status build_layer_norm(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w, *b, *g, *be, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 2, 4, 8), &x));
  TRY(cst(m, "w", TY(F32, 8, 8), 0.5f, &w));
  TRY(cst(m, "b", TY(F32, 8), 0.25f, &b));
  TRY(cst(m, "gamma", TY(F32, 8), 1.5f, &g));
  TRY(cst(m, "beta", TY(F32, 8), -0.5f, &be));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(x, w), NOATTRS, ORG("MatMul", "proj"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, b), NOATTRS, ORG("Add", "proj.bias"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(x, v), NOATTRS, ORG("Add", "residual"), &v));
  TRY(layer_norm(f, v, g, be, "norm", &v));
  return mlc_func_add_ret(f, v);
}

/* softmax is OPAQUE: it stays alone between two matmuls; the same softmax
** written out (ReduceMax, Sub, Exp, ReduceSum, Div) is one group. */
static mlc_status build_softmax(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w, *v, *mx, *e, *sum;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 4, 8), &x));
  TRY(cst(m, "w", TY(F32, 8, 8), 0.5f, &w));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(x, w), NOATTRS, ORG("MatMul", "mm1"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_SOFTMAX, ARGS(v), ATTRS(mlc_attr_int("axis", 1)), ORG("Softmax", "softmax"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(v, w), NOATTRS, ORG("MatMul", "mm2"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MAX, ARGS(v), ATTRS(INTS("axes", 1), mlc_attr_int("keepdims", 1)),
                      ORG("ReduceMax", "sm/max"), &mx));
  TRY(mlc_graph_emit1(f, MLC_OP_SUB, ARGS(v, mx), NOATTRS, ORG("Sub", "sm/sub"), &e));
  TRY(mlc_graph_emit1(f, MLC_OP_EXP, ARGS(e), NOATTRS, ORG("Exp", "sm/exp"), &e));
  TRY(mlc_graph_emit1(f, MLC_OP_SUM, ARGS(e), ATTRS(INTS("axes", 1), mlc_attr_int("keepdims", 1)),
                      ORG("ReduceSum", "sm/sum"), &sum));
  TRY(mlc_graph_emit1(f, MLC_OP_DIV, ARGS(e, sum), NOATTRS, ORG("Div", "sm/div"), &v));
  return mlc_func_add_ret(f, v);
}

/* Diamonds: exp -> (negative, sqrt) -> add is one group; exp -> softmax ->
** add(exp, softmax) must not fuse the add with the exp (the softmax, not
** fusable, would read the group and be read by it). */
static mlc_status build_diamond(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *a, *b, *c, *d, *s;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 4, 8), &x));
  TRY(mlc_graph_emit1(f, MLC_OP_EXP, ARGS(x), NOATTRS, ORG("Exp", "e1"), &a));
  TRY(mlc_graph_emit1(f, MLC_OP_NEG, ARGS(a), NOATTRS, ORG("Neg", "left"), &b));
  TRY(mlc_graph_emit1(f, MLC_OP_SQRT, ARGS(a), NOATTRS, ORG("Sqrt", "right"), &c));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(b, c), NOATTRS, ORG("Add", "join"), &d));
  TRY(mlc_graph_emit1(f, MLC_OP_SOFTMAX, ARGS(d), ATTRS(mlc_attr_int("axis", 1)), ORG("Softmax", "sm"), &s));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(d, s), NOATTRS, ORG("Add", "around"), &d));
  return mlc_func_add_ret(f, d);
}

/* A cycle that only the graph of groups shows: g2 = {exp y, add} reads
** softmax(exp x); joining "both" (which reads exp x and exp y) to exp x's
** group would make that group read g2, which reads the softmax, which
** reads the group.  "both" joins g2 instead. */
static mlc_status build_cycle_through_group(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *y, *a, *b, *s, *c, *d;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 4, 8), &x));
  TRY(mlc_func_add_param(f, "y", &TY(F32, 4, 8), &y));
  TRY(mlc_graph_emit1(f, MLC_OP_EXP, ARGS(x), NOATTRS, ORG("Exp", "ex"), &a));
  TRY(mlc_graph_emit1(f, MLC_OP_EXP, ARGS(y), NOATTRS, ORG("Exp", "ey"), &b));
  TRY(mlc_graph_emit1(f, MLC_OP_SOFTMAX, ARGS(a), ATTRS(mlc_attr_int("axis", 1)), ORG("Softmax", "sm"), &s));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(b, s), NOATTRS, ORG("Add", "g2"), &c));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(a, b), NOATTRS, ORG("Add", "both"), &d));
  TRY(mlc_func_add_ret(f, c));
  return mlc_func_add_ret(f, d);
}

/* An OPAQUE op in the middle of a chain cuts it. */
static mlc_status build_opaque_middle(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w, *b, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 3, 8, 8), &x));
  TRY(cst(m, "w", TY(F32, 4, 3, 3, 3), 0.5f, &w));
  TRY(cst(m, "b", TY(F32, 4, 1, 1), 0.25f, &b));
  TRY(conv(f, x, w, "conv", &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, b), NOATTRS, ORG("Add", "bias"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_SOFTMAX, ARGS(v), ATTRS(mlc_attr_int("axis", 1)), ORG("Softmax", "sm"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_EXP, ARGS(v), NOATTRS, ORG("Exp", "exp"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_NEG, ARGS(v), NOATTRS, ORG("Neg", "neg"), &v));
  return mlc_func_add_ret(f, v);
}

/* Members' outputs used outside the group: the conv's by a softmax that
** stood between the members (it moves after the call), the add's by
** main's return; the function returns both, in order of definition. */
static mlc_status build_multi_output(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w, *b, *c, *s, *a, *r;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 3, 8, 8), &x));
  TRY(cst(m, "w", TY(F32, 4, 3, 3, 3), 0.5f, &w));
  TRY(cst(m, "b", TY(F32, 4, 1, 1), 0.25f, &b));
  TRY(conv(f, x, w, "conv", &c));
  TRY(mlc_graph_emit1(f, MLC_OP_SOFTMAX, ARGS(c), ATTRS(mlc_attr_int("axis", 1)), ORG("Softmax", "sm"), &s));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(c, b), NOATTRS, ORG("Add", "bias"), &a));
  TRY(mlc_graph_emit1(f, MLC_OP_RELU, ARGS(a), NOATTRS, ORG("Relu", "relu"), &r));
  TRY(mlc_func_add_ret(f, r));
  TRY(mlc_func_add_ret(f, a));
  return mlc_func_add_ret(f, s);
}

/* A group whose last member comes late ({exp, add}) read by a softmax
** read by an earlier group ({negative, sqrt}): the calls go in the order
** of what they read, not of their last members. */
static mlc_status build_reorder(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *y, *a, *s, *b, *d;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 4, 8), &x));
  TRY(mlc_func_add_param(f, "y", &TY(F32, 4, 8), &y));
  TRY(mlc_graph_emit1(f, MLC_OP_EXP, ARGS(x), NOATTRS, ORG("Exp", "early"), &a));
  TRY(mlc_graph_emit1(f, MLC_OP_SOFTMAX, ARGS(a), ATTRS(mlc_attr_int("axis", 1)), ORG("Softmax", "sm"), &s));
  TRY(mlc_graph_emit1(f, MLC_OP_NEG, ARGS(s), NOATTRS, ORG("Neg", "neg"), &b));
  TRY(mlc_graph_emit1(f, MLC_OP_SQRT, ARGS(b), NOATTRS, ORG("Sqrt", "sqrt"), &b));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(a, y), NOATTRS, ORG("Add", "late"), &d));
  TRY(mlc_func_add_ret(f, b));
  return mlc_func_add_ret(f, d);
}

/* Where nothing fuses: a reduction after a conv, data movement after a
** reduction, and an add after a matmul whose output is broadcast larger
** than the matmul's. */
static mlc_status build_no_fusion(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *w, *w2, *c3, *v;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 1, 3, 8, 8), &x));
  TRY(cst(m, "w", TY(F32, 4, 3, 3, 3), 0.5f, &w));
  TRY(cst(m, "w2", TY(F32, 4, 8), 0.25f, &w2));
  TRY(cst(m, "c3", TY(F32, 3, 1, 8), 1, &c3));
  TRY(conv(f, x, w, "conv", &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MEAN, ARGS(v), ATTRS(INTS("axes", 2, 3), mlc_attr_int("keepdims", 1)),
                      ORG("GlobalAveragePool", "gap"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(v), ATTRS(INTS("shape", 1, 4)), ORG("Flatten", "flat"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_MATMUL, ARGS(v, w2), NOATTRS, ORG("MatMul", "fc"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, c3), NOATTRS, ORG("Add", "wide"), &v));
  return mlc_func_add_ret(f, v);
}

/* Chains of elementwise and data movement ops fuse; a reduction takes
** them as its prologue, but data movement after it starts a new group. */
static mlc_status build_injective_chain(mlc_module *m) {
  mlc_func *f;
  mlc_value *x, *y, *v, *u;
  TRY(mlc_func_create(m, "main", &f));
  TRY(mlc_func_add_param(f, "x", &TY(F32, 4, 6), &x));
  TRY(mlc_func_add_param(f, "y", &TY(F32, 6, 4), &y));
  TRY(mlc_graph_emit1(f, MLC_OP_TRANSPOSE, ARGS(x), ATTRS(INTS("perm", 1, 0)), ORG("Transpose", "t"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(v, y), NOATTRS, ORG("Add", "add"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(v), ATTRS(INTS("shape", 3, 8)), ORG("Reshape", "r"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_SUM, ARGS(v), ATTRS(INTS("axes", 1), mlc_attr_int("keepdims", 0)),
                      ORG("ReduceSum", "sum"), &v));
  TRY(mlc_graph_emit1(f, MLC_OP_RESHAPE, ARGS(v), ATTRS(INTS("shape", 1, 3)), ORG("Reshape", "r2"), &u));
  TRY(mlc_graph_emit1(f, MLC_OP_TANH, ARGS(u), NOATTRS, ORG("Tanh", "tanh"), &u));
  return mlc_func_add_ret(f, u);
}

/* A block that is not a dataflow block is left alone. */
static mlc_status build_not_dataflow(mlc_module *m) {
  TRY(build_conv_add_relu(m));
  mlc_func *f = mlc_module_func(m, "main");
  f->blocks[0].dataflow = 0;
  return NULL;
}

typedef struct golden_case {
  const char *name; /* tests/golden/fuse_ops/<name>.out */
  mlc_status (*build)(mlc_module *m);
} golden_case;

static const golden_case golden_cases[] = {
    {"conv_add_relu", build_conv_add_relu},
    {"conv_residual", build_conv_residual},
    {"matmul_gelu", build_matmul_gelu},
    {"layer_norm", build_layer_norm},
    {"softmax", build_softmax},
    {"diamond", build_diamond},
    {"cycle_through_group", build_cycle_through_group},
    {"opaque_middle", build_opaque_middle},
    {"multi_output", build_multi_output},
    {"reorder", build_reorder},
    {"no_fusion", build_no_fusion},
    {"injective_chain", build_injective_chain},
    {"not_dataflow", build_not_dataflow},
    {NULL, NULL},
};

/* ---- golden cases: runner ---------------------------------------------------- */

/* annotate_pattern then fuse_ops, verifying after each. */
static mlc_status run_fusion(mlc_module *m) {
  mlc_pass passes[2] = {*mlc_pass_find("annotate_pattern"), *mlc_pass_find("fuse_ops")};
  mlc_pass_ctx ctx = {1, NULL, NULL, NULL, NULL, NULL, NULL};
  return mlc_pass_run(m, passes, 2, &ctx);
}

/* The text a case produces (malloc'd), or NULL after reporting a failure. */
static char *golden_text(const golden_case *gc) {
  mlc_module *m = new_module();
  if (!m) return NULL;
  char *text = NULL;
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_status s = gc->build(m);
  if (!s) s = mlc_graph_verify(m);
  if (s) {
    printf("\n  golden fuse_ops/%s: building the module failed: %s\n", gc->name, mlc_status_message(s));
    mlc_status_free(s);
    CU_FAIL("golden case build");
    goto out;
  }
  mlc_sb_puts(&b, "# ==== before ====\n");
  mlc_graph_print(m, &b);
  if (!OK(run_fusion(m))) goto out;
  mlc_sb_puts(&b, "# ==== after annotate_pattern,fuse_ops ====\n");
  mlc_graph_print(m, &b);
  CU_ASSERT(!b.oom);
  text = strdup(mlc_sb_str(&b));
out:
  mlc_sb_fini(&b);
  mlc_module_destroy(m);
  return text;
}

/* Line |n| (1-based) of |s| into |out|. */
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

static void test_golden(void) {
  const char *upd = getenv("MLC_UPDATE_GOLDEN");
  int update = upd && strcmp(upd, "1") == 0;
  for (const golden_case *gc = golden_cases; gc->name; gc++) {
    char rel[512];
    snprintf(rel, sizeof rel, "tests/golden/fuse_ops/%s.out", gc->name);
    char *got = golden_text(gc);
    if (!got) continue;
    if (update) {
      mkdir(mlc_test_src_path("tests/golden/fuse_ops"), 0777);
      const char *path = mlc_test_src_path(rel);
      CU_ASSERT(mlc_test_write_file(path, got, strlen(got)) == 0);
      printf("\n  golden %s: written", rel);
    } else {
      const char *path = mlc_test_src_path(rel);
      char *want = mlc_test_read_file(path, NULL);
      if (!want) {
        printf("\n  golden %s: cannot read %s (set MLC_SRCDIR, or MLC_UPDATE_GOLDEN=1 to create it)\n", rel, path);
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

/* Each case gives the same text twice, and fusing again changes nothing. */
static void test_deterministic_and_stable(void) {
  for (const golden_case *gc = golden_cases; gc->name; gc++) {
    char *a = golden_text(gc), *b = golden_text(gc);
    CU_ASSERT(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
    mlc_module *m = new_module();
    if (!m) return;
    if (OK(gc->build(m)) && OK(run_fusion(m))) {
      mlc_strbuf t1 = MLC_STRBUF_INIT, t2 = MLC_STRBUF_INIT;
      mlc_graph_print(m, &t1);
      if (OK(run_fusion(m))) mlc_graph_print(m, &t2);
      if (strcmp(mlc_sb_str(&t1), mlc_sb_str(&t2)) != 0) {
        printf("\n  fuse_ops/%s: a second fusion changed the module\n", gc->name);
        CU_FAIL("second fusion");
      }
      mlc_sb_fini(&t1);
      mlc_sb_fini(&t2);
    }
    mlc_module_destroy(m);
  }
}

/* ---- unit tests --------------------------------------------------------------- */

/* Finds the first op call of |op| in |f|. */
static mlc_binding *find_op(const mlc_func *f, mlc_op op) {
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++)
      if (f->blocks[bi].bindings[j]->kind == MLC_CALL_OP && f->blocks[bi].bindings[j]->op == op)
        return f->blocks[bi].bindings[j];
  return NULL;
}

static void test_annotate(void) {
  mlc_module *m = new_module();
  if (!m) return;
  int64_t n;
  mlc_func *f;
  mlc_value *x, *y, *c, *s, *one, *v[6];
  MLC_TEST_OK_FATAL(mlc_module_sym(m, "n", &n));
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, n, 4, 3), &x));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "y", &TY(F32, n, 4, 3), &y));
  MLC_TEST_OK_FATAL(cst(m, "c", TY(F32, 4, 1), 1, &c));
  MLC_TEST_OK_FATAL(cst(m, "s", TY0(F32), 1, &s));
  MLC_TEST_OK_FATAL(cst(m, "one", TY(F32, 1, 1, 1), 1, &one));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(x, y), NOATTRS, NULL, &v[0]));   /* same shapes */
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_MUL, ARGS(v[0], c), NOATTRS, NULL, &v[1])); /* broadcast */
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_SUB, ARGS(s, v[1]), NOATTRS, NULL, &v[2])); /* scalar */
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_DIV, ARGS(v[2], one), NOATTRS, NULL, &v[3])); /* all-ones */
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_TRANSPOSE, ARGS(v[3]), ATTRS(INTS("perm", 0, 1, 2)), NULL, &v[4]));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_SOFTMAX, ARGS(v[4]), ATTRS(mlc_attr_int("axis", 2)), NULL, &v[5]));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, v[5]));
  for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(v[i]->def->pattern, mlc_op_pattern[v[i]->def->op]);
  for (int round = 0; round < 2; round++) { /* the pass can run again */
    MLC_TEST_OK_FATAL(mlc_pass_annotate_pattern(m, NULL));
    CU_ASSERT_EQUAL(v[0]->def->pattern, MLC_PATTERN_ELEMWISE);
    CU_ASSERT_EQUAL(v[1]->def->pattern, MLC_PATTERN_BROADCAST);
    CU_ASSERT_EQUAL(v[2]->def->pattern, MLC_PATTERN_ELEMWISE);
    CU_ASSERT_EQUAL(v[3]->def->pattern, MLC_PATTERN_ELEMWISE);
    CU_ASSERT_EQUAL(v[4]->def->pattern, MLC_PATTERN_INJECTIVE); /* even when the shape stays */
    CU_ASSERT_EQUAL(v[5]->def->pattern, MLC_PATTERN_OPAQUE);
  }
  /* a symbolic dim against a static one is a broadcast */
  mlc_value *z, *w;
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "z", &TY(F32, 1, 4, 3), &z));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_ADD, ARGS(x, z), NOATTRS, NULL, &w));
  MLC_TEST_OK_FATAL(mlc_pass_annotate_pattern(m, NULL));
  CU_ASSERT_EQUAL(w->def->pattern, MLC_PATTERN_BROADCAST);
  mlc_module_destroy(m);
}

/* Fusion follows binding->pattern, not op names: a relu marked OPAQUE
** stays alone. */
static void test_fuse_reads_pattern(void) {
  mlc_module *m = new_module();
  if (!m) return;
  MLC_TEST_OK_FATAL(build_conv_add_relu(m));
  mlc_func *f = mlc_module_func(m, "main");
  find_op(f, MLC_OP_RELU)->pattern = MLC_PATTERN_OPAQUE;
  MLC_TEST_OK_FATAL(mlc_pass_fuse_ops(m, NULL));
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  CU_ASSERT_EQUAL(m->nfuncs, 2);
  CU_ASSERT_PTR_NOT_NULL(mlc_module_func(m, "fused_conv_add"));
  CU_ASSERT_PTR_NOT_NULL(find_op(f, MLC_OP_RELU));
  mlc_module_destroy(m);
}

/* A chain longer than a group may be: groups of 64 calls at most. */
static void test_fuse_bound(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *v;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 16), &v));
  for (int i = 0; i < 150; i++)
    MLC_TEST_OK_FATAL(mlc_graph_emit1(f, i % 2 ? MLC_OP_RELU : MLC_OP_EXP, ARGS(v), NOATTRS, ORG("Relu", ""), &v));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, v));
  MLC_TEST_OK_FATAL(run_fusion(m));
  CU_ASSERT_EQUAL(m->nfuncs, 4);
  CU_ASSERT_EQUAL(f->nblocks, 1);
  CU_ASSERT_EQUAL(f->blocks[0].n, 3);
  int sizes[3] = {0};
  for (int i = 1; i < m->nfuncs && i < 4; i++) {
    CU_ASSERT(m->funcs[i]->primitive);
    sizes[i - 1] = m->funcs[i]->blocks[0].n;
  }
  CU_ASSERT_EQUAL(sizes[0], 64);
  CU_ASSERT_EQUAL(sizes[1], 64);
  CU_ASSERT_EQUAL(sizes[2], 22);
  /* each call covers its members' nodes */
  CU_ASSERT_EQUAL(f->blocks[0].bindings[0]->ncovered, 64);
  CU_ASSERT_EQUAL(f->blocks[0].bindings[2]->ncovered, 22);
  mlc_module_destroy(m);
}

/* A member that covers several ONNX nodes passes them all to the call; a
** value returned by main keeps its name through the call. */
static void test_fuse_covered(void) {
  mlc_module *m = new_module();
  if (!m) return;
  MLC_TEST_OK_FATAL(build_conv_add_relu(m));
  mlc_func *f = mlc_module_func(m, "main");
  mlc_binding *c = find_op(f, MLC_OP_CONV);
  MLC_TEST_OK_FATAL(mlc_binding_add_covered(m, c, ORG("Conv", "conv")));
  MLC_TEST_OK_FATAL(mlc_binding_add_covered(m, c, ORG("BatchNormalization", "bn")));
  f->rets[0]->name = "y"; /* the model's output name */
  MLC_TEST_OK_FATAL(run_fusion(m));
  mlc_binding *call = f->blocks[0].bindings[0];
  CU_ASSERT_EQUAL(call->kind, MLC_CALL_FUNC);
  CU_ASSERT_PTR_EQUAL(f->rets[0], call->outs[0]);
  CU_ASSERT(call->outs[0]->name && strcmp(call->outs[0]->name, "y") == 0);
  CU_ASSERT_STRING_EQUAL(call->origin.node, "conv");
  int n;
  const mlc_origin *o = mlc_binding_nodes(call, &n);
  CU_ASSERT_EQUAL(n, 4);
  if (n == 4) {
    CU_ASSERT_STRING_EQUAL(o[0].node, "conv");
    CU_ASSERT_STRING_EQUAL(o[1].node, "bn");
    CU_ASSERT_STRING_EQUAL(o[2].node, "bias");
    CU_ASSERT_STRING_EQUAL(o[3].node, "relu");
  }
  mlc_module_destroy(m);
}

/* Names are cut at an op boundary and made unique with a number. */
static void test_fuse_names(void) {
  mlc_module *m = new_module();
  if (!m) return;
  mlc_func *f;
  mlc_value *x, *v, *w;
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &TY(F32, 4, 4), &x));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_EXP, ARGS(x), NOATTRS, NULL, &v));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_NEG, ARGS(v), NOATTRS, NULL, &v));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_SOFTMAX, ARGS(v), ATTRS(mlc_attr_int("axis", 1)), NULL, &v));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_EXP, ARGS(v), NOATTRS, NULL, &v));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_NEG, ARGS(v), NOATTRS, NULL, &v));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_SOFTMAX, ARGS(v), ATTRS(mlc_attr_int("axis", 1)), NULL, &w));
  for (int i = 0; i < 12; i++)
    MLC_TEST_OK_FATAL(mlc_graph_emit1(f, i % 2 ? MLC_OP_HARD_SIGMOID : MLC_OP_THRESHOLDED_RELU, ARGS(w), NOATTRS,
                                      NULL, &w));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, w));
  MLC_TEST_OK_FATAL(run_fusion(m));
  CU_ASSERT_EQUAL(m->nfuncs, 4);
  CU_ASSERT_PTR_NOT_NULL(mlc_module_func(m, "fused_exp_negative"));
  CU_ASSERT_PTR_NOT_NULL(mlc_module_func(m, "fused_exp_negative1"));
  CU_ASSERT_PTR_NOT_NULL(mlc_module_func(m, "fused_thresholded_relu_hard_sigmoid_thresholded_relu"));
  mlc_module_destroy(m);
}

/* Allocation failures anywhere in the pass give an error, never a crash
** or a leak (the module is then only destroyed). */
static void test_fuse_oom(void) {
  /* installs the failing allocator before the modules take the default */
  if (mlc_test_fail_alloc(0) < 0) return;
  unsigned long long n;
  for (n = 1; n < 5000; n++) {
    mlc_module *m = new_module();
    if (!m) return;
    if (!OK(build_layer_norm(m)) || !OK(mlc_pass_annotate_pattern(m, NULL))) {
      mlc_module_destroy(m);
      return;
    }
    if (mlc_test_fail_alloc(n) < 0) {
      mlc_module_destroy(m);
      return;
    }
    mlc_status s = mlc_pass_fuse_ops(m, NULL);
    int failed = mlc_test_fail_alloc(0);
    CU_ASSERT(failed ? s != NULL : s == NULL);
    mlc_status_free(s);
    mlc_module_destroy(m);
    if (!failed) break;
  }
  CU_ASSERT(n > 5 && n < 5000); /* the pass allocates, and ends */
}

/* The verifier's checks of primitive functions. */
static void test_verify_primitive(void) {
  mlc_module *m = new_module();
  if (!m) return;
  MLC_TEST_OK_FATAL(build_conv_add_relu(m));
  MLC_TEST_OK_FATAL(run_fusion(m));
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  mlc_func *f = mlc_module_func(m, "main"), *g = mlc_module_func(m, "fused_conv_add_relu");
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  mlc_binding *call = f->blocks[0].bindings[0], *relu = g->blocks[0].bindings[2];
  /* a primitive function holds op calls only */
  relu->kind = MLC_CALL_TIR;
  relu->callee = "relu";
  EXPECT_ERR(mlc_graph_verify(m), "function \"fused_conv_add_relu\", binding 2 (relu",
             "a primitive function holds op calls only");
  relu->kind = MLC_CALL_OP;
  relu->callee = NULL;
  /* it is called by a function call only */
  call->kind = MLC_CALL_TIR;
  EXPECT_ERR(mlc_graph_verify(m), "function \"main\", binding 0 (fused_conv_add_relu",
             "calls the primitive function \"fused_conv_add_relu\" with call_tir");
  call->kind = MLC_CALL_FUNC;
  /* main is not primitive */
  f->primitive = 1;
  EXPECT_ERR(mlc_graph_verify(m), "the entry cannot be primitive");
  f->primitive = 0;
  MLC_TEST_OK_FATAL(mlc_graph_verify(m));
  mlc_module_destroy(m);
}

static void register_fuse(void) {
  static const CU_TestInfo golden[] = {{"golden", test_golden},
                                       {"deterministic_and_stable", test_deterministic_and_stable},
                                       CU_TEST_INFO_NULL};
  static const CU_TestInfo unit[] = {{"annotate", test_annotate},
                                     {"reads_pattern", test_fuse_reads_pattern},
                                     {"bound", test_fuse_bound},
                                     {"covered", test_fuse_covered},
                                     {"names", test_fuse_names},
                                     {"oom", test_fuse_oom},
                                     {"verify_primitive", test_verify_primitive},
                                     CU_TEST_INFO_NULL};
  mlc_test_add_suite("fuse_golden", golden);
  mlc_test_add_suite("fuse", unit);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_fuse, NULL};
  return mlc_test_main("test_fuse", fns);
}
