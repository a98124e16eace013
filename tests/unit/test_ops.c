/*
** test_ops.c: the op table (graph/ops.def) row by row, and what it drives.
**
** table:     every row has a unique name that parses back, sane arg counts,
**            a well-formed attribute schema, a lowering rule that exists
**            (lg_X), is a built-in mlc_lg_builtin rewrites (BUILTIN) or is
**            explicitly NONE, and an evaluator name of the right form.
** schema:    defaults come from the schema; the verifier reports unknown
**            attributes and wrong kinds, and accepts the schema's own.
** dtypes:    the class of argument 0 is checked before the rule runs.
** no_fold:   an evaluator family given an op it has no semantics for
**            refuses (MLC_UNIMPLEMENTED) instead of folding it as identity,
**            and a call whose row has no evaluator stays a call.
** no_rule:   a lowering rule given an op it has no expression for reports
**            an error naming the node and op, not "out of memory".
** elemwise:  every elementwise or broadcast op with an evaluator is lowered,
**            compiled and run on a small example and agrees with its
**            evaluator (a row without a TIR expression or without scalar
**            semantics fails here, whatever the op).
*/
#include <stdio.h>
#include <string.h>

#include "graph/graph_int.h"
#include "lower/lower_int.h"
#include "tests/harness_kernel.h"
#include "tests/testutil.h"

/* ---- the table ------------------------------------------------------------ */

static void t_table(void) {
  int nbuiltin = 0;
  for (int i = 0; i < MLC_OP_COUNT; i++) {
    mlc_op op = (mlc_op)i;
    const char *name = mlc_op_name[op], *rule = mlc_op_rule_name[op], *ev = mlc_op_eval_name[op];
    CU_ASSERT_PTR_NOT_NULL_FATAL(name);
    CU_ASSERT(name[0] != 0);
    CU_ASSERT_EQUAL(mlc_op_from_name(name), op);
    CU_ASSERT(mlc_op_min_args[op] >= 0);
    CU_ASSERT(mlc_op_max_args[op] == -1 || mlc_op_max_args[op] >= mlc_op_min_args[op]);
    CU_ASSERT_PTR_NOT_NULL(mlc_op_synopsis[op]);
    if (!mlc_op_schema_ok(op)) {
      printf("\n  %s: malformed attribute schema \"%s\"", name, mlc_op_attr_schema[op]);
      CU_FAIL("attribute schema");
    }
    /* lowering: lg_X has its function, BUILTIN ops are rewritten, NONE has none */
    if (strncmp(rule, "lg_", 3) == 0) {
      CU_ASSERT_PTR_NOT_NULL(mlc_lg_rule(op));
    } else if (strcmp(rule, "BUILTIN") == 0) {
      mlc_module *gm = NULL;
      MLC_TEST_OK_FATAL(mlc_module_create(mlc_allocator_default(), &gm));
      mlc_binding b;
      memset(&b, 0, sizeof b);
      b.kind = MLC_CALL_OP;
      b.op = op;
      int done = 0;
      MLC_TEST_OK(mlc_lg_builtin(gm, &b, &done));
      if (!done) printf("\n  %s: BUILTIN in ops.def, but mlc_lg_builtin does not lower it", name);
      CU_ASSERT(done);
      CU_ASSERT_EQUAL(b.kind, MLC_CALL_DPS_PACKED);
      mlc_module_destroy(gm);
      nbuiltin++;
    } else {
      CU_ASSERT_STRING_EQUAL(rule, "NONE");
      CU_ASSERT_PTR_NULL(mlc_lg_rule(op));
    }
    CU_ASSERT(strncmp(ev, "eval_", 5) == 0 || strcmp(ev, "NONE") == 0);
    CU_ASSERT((unsigned)mlc_op_dtypes[op] <= MLC_DCLASS_INDEX);
    for (int j = 0; j < i; j++)
      if (strcmp(mlc_op_name[j], name) == 0) CU_FAIL("two rows with one name");
  }
  CU_ASSERT(nbuiltin > 0);
  CU_ASSERT_PTR_NULL(mlc_lg_rule(MLC_OP_COUNT));
}

/* ---- attribute schema ---------------------------------------------------- */

static void t_schema(void) {
  mlc_attr_spec sp;
  CU_ASSERT(mlc_op_attr_spec(MLC_OP_LEAKY_RELU, "alpha", &sp));
  CU_ASSERT_EQUAL(sp.kind, 'f');
  CU_ASSERT(sp.has_default);
  CU_ASSERT_DOUBLE_EQUAL(sp.dflt, 0.01, 1e-12);
  CU_ASSERT(!mlc_op_attr_spec(MLC_OP_RELU, "alpha", &sp));
  /* defaults by op: the same name, different defaults */
  CU_ASSERT_DOUBLE_EQUAL(mlc_op_attr_float(MLC_OP_ELU, NULL, 0, "alpha"), 1.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(mlc_op_attr_float(MLC_OP_HARD_SIGMOID, NULL, 0, "alpha"), 0.2, 1e-12);
  mlc_attr a = mlc_attr_float("alpha", 0.5);
  CU_ASSERT_DOUBLE_EQUAL(mlc_op_attr_float(MLC_OP_ELU, &a, 1, "alpha"), 0.5, 0);
  CU_ASSERT_EQUAL(mlc_op_attr_int(MLC_OP_SUM, NULL, 0, "keepdims"), 1);
  CU_ASSERT_EQUAL(mlc_op_attr_int(MLC_OP_ISINF, NULL, 0, "detect_negative"), 1);

  char msg[160];
  mlc_attr ok[2] = {mlc_attr_ints("axes", (const int64_t[]){1}, 1), mlc_attr_int("keepdims", 0)};
  CU_ASSERT_EQUAL(mlc_op_check_attrs(MLC_OP_SUM, ok, 2, msg, sizeof msg), 0);
  mlc_attr num = mlc_attr_int("alpha", 2); /* a number attribute takes an int */
  CU_ASSERT_EQUAL(mlc_op_check_attrs(MLC_OP_ELU, &num, 1, msg, sizeof msg), 0);
  mlc_attr unknown = mlc_attr_int("axis", 0);
  CU_ASSERT_EQUAL(mlc_op_check_attrs(MLC_OP_SUM, &unknown, 1, msg, sizeof msg), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "unknown attribute axis"));
  mlc_attr kind = mlc_attr_str("keepdims", "yes");
  CU_ASSERT_EQUAL(mlc_op_check_attrs(MLC_OP_SUM, &kind, 1, msg, sizeof msg), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "attribute keepdims is a string"));
  mlc_attr twice[2] = {mlc_attr_int("keepdims", 0), mlc_attr_int("keepdims", 1)};
  CU_ASSERT_EQUAL(mlc_op_check_attrs(MLC_OP_SUM, twice, 2, msg, sizeof msg), -1);

  /* the verifier reports them with the binding */
  mlc_module *m = NULL;
  mlc_func *f = NULL;
  mlc_value *x = NULL, *y = NULL;
  MLC_TEST_OK_FATAL(mlc_module_create(mlc_allocator_default(), &m));
  mlc_test_hold(m);
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  mlc_type t = {MLC_DTYPE_F32, 1, (const int64_t[]){4}};
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &t, &x));
  mlc_attr good = mlc_attr_float("alpha", 0.1);
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_LEAKY_RELU, &x, 1, &good, 1, NULL, &y));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, y));
  MLC_TEST_OK(mlc_graph_verify(m));
  mlc_attr bad = mlc_attr_float("slope", 0.1); /* infer does not read it: only the schema knows */
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_LEAKY_RELU, &x, 1, &bad, 1, NULL, &y));
  MLC_TEST_ERR(mlc_graph_verify(m), MLC_INTERNAL, "leaky_relu", "unknown attribute slope", "alpha:f=0.01");
  mlc_module_destroy(m);
}

/* ---- dtype classes -------------------------------------------------------- */

static void t_dtypes(void) {
  mlc_module *m = NULL;
  mlc_func *f = NULL;
  mlc_value *xi = NULL, *xb = NULL, *y = NULL;
  mlc_origin o = {"n1", "Sqrt", 13, 1};
  MLC_TEST_OK_FATAL(mlc_module_create(mlc_allocator_default(), &m));
  mlc_test_hold(m);
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  mlc_type ti = {MLC_DTYPE_I32, 1, (const int64_t[]){4}}, tb = {MLC_DTYPE_BOOL, 1, (const int64_t[]){4}};
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "xi", &ti, &xi));
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "xb", &tb, &xb));
  MLC_TEST_ERR(mlc_graph_emit1(f, MLC_OP_SQRT, &xi, 1, NULL, 0, &o, &y), MLC_INVALID_ARGUMENT, "node \"n1\"",
               "sqrt", "argument 0 has dtype int32, expected a floating-point type");
  MLC_TEST_ERR(mlc_graph_emit1(f, MLC_OP_SUM, &xb, 1, NULL, 0, &o, &y), MLC_INVALID_ARGUMENT,
               "expected a numeric type");
  /* must not fire: integer abs, bool max */
  MLC_TEST_OK(mlc_graph_emit1(f, MLC_OP_ABS, &xi, 1, NULL, 0, &o, &y));
  MLC_TEST_OK(mlc_graph_emit1(f, MLC_OP_MAX, &xb, 1, NULL, 0, &o, &y));
  /* binary ops check argument 1 against the same class */
  mlc_value *ab[2] = {xb, xi};
  MLC_TEST_ERR(mlc_graph_emit1(f, MLC_OP_LOGICAL_AND, ab, 2, NULL, 0, &o, &y), MLC_INVALID_ARGUMENT,
               "argument 1 has dtype int32, expected bool");
  mlc_module_destroy(m);
}

/* ---- evaluators that have no semantics refuse ---------------------------- */

static void t_no_fold(void) {
  mlc_module *m = NULL;
  MLC_TEST_OK_FATAL(mlc_module_create(mlc_allocator_default(), &m));
  mlc_test_hold(m);
  float xs[3] = {1, -2, 0.5f};
  mlc_type t = {MLC_DTYPE_F32, 1, (const int64_t[]){3}};
  mlc_value *x = NULL;
  MLC_TEST_OK_FATAL(mlc_module_add_const(m, "x", &t, xs, sizeof xs, &x));
  mlc_value *args[2] = {x, x};
  const void *in[2] = {xs, xs};
  void *out[1] = {NULL};
  /* the unary family given an op without float semantics there (isnan is
  ** eval_to_bool's): it used to come back as a copy of x */
  mlc_call_info ci = {m, MLC_OP_ISNAN, 1, args, 0, NULL, NULL};
  MLC_TEST_ERR(mlc_graph_eval_unary(&ci, &t, in, out), MLC_UNIMPLEMENTED, "isnan", "no evaluator");
  CU_ASSERT_PTR_NULL(out[0]);
  /* the same for the binary family (where is not one of its ops) */
  ci.op = MLC_OP_WHERE;
  ci.nargs = 2;
  MLC_TEST_ERR(mlc_graph_eval_binary(&ci, &t, in, out), MLC_UNIMPLEMENTED, "no evaluator");
  CU_ASSERT_PTR_NULL(out[0]);
  ci.op = MLC_OP_LAYER_NORM; /* and reductions */
  ci.nargs = 1;
  MLC_TEST_ERR(mlc_graph_eval_reduce(&ci, &t, in, out), MLC_UNIMPLEMENTED, "no evaluator");
  /* must still fire for its own ops */
  ci.op = MLC_OP_ABS;
  MLC_TEST_OK_FATAL(mlc_graph_eval_unary(&ci, &t, in, out));
  CU_ASSERT_DOUBLE_EQUAL(((float *)out[0])[1], 2.0, 0);
  mlc_const_free(m, out[0], sizeof xs);

  /* a row with eval NONE: never folded, the call stays */
  mlc_func *f = NULL;
  mlc_value *y = NULL;
  float ws[3] = {1, 2, 3};
  mlc_type tx = {MLC_DTYPE_F32, 3, (const int64_t[]){1, 1, 3}}, tw = {MLC_DTYPE_F32, 3, (const int64_t[]){1, 1, 1}};
  mlc_value *cx = NULL, *cw = NULL;
  MLC_TEST_OK_FATAL(mlc_module_add_const(m, "cx", &tx, ws, sizeof ws, &cx));
  MLC_TEST_OK_FATAL(mlc_module_add_const(m, "cw", &tw, ws, sizeof(float), &cw));
  MLC_TEST_OK_FATAL(mlc_func_create(m, "main", &f));
  CU_ASSERT_STRING_EQUAL(mlc_op_eval_name[MLC_OP_CONV], "NONE");
  mlc_value *cargs[2] = {cx, cw};
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_CONV, cargs, 2, NULL, 0, NULL, &y));
  CU_ASSERT_PTR_NULL(mlc_value_const(m, y));
  /* and one with an evaluator folds */
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_NEG, &cx, 1, NULL, 0, NULL, &y));
  CU_ASSERT_PTR_NOT_NULL(mlc_value_const(m, y));
  mlc_module_destroy(m);
}

/* ---- a rule without an expression for an op ----------------------------- */

static void t_no_rule(void) {
  mlc_module *gm = NULL;
  mlc_tir_module *tm = NULL;
  mlc_func *f = NULL;
  mlc_value *x = NULL, *y = NULL;
  mlc_origin o = {"node_q", "Relu", 14, 3};
  MLC_TEST_OK_FATAL(mlc_module_create(mlc_allocator_default(), &gm));
  mlc_test_hold(gm);
  MLC_TEST_OK_FATAL(mlc_tir_module_create(mlc_allocator_default(), &tm));
  mlc_test_hold(tm);
  MLC_TEST_OK_FATAL(mlc_func_create(gm, "main", &f));
  mlc_type t = {MLC_DTYPE_F32, 1, (const int64_t[]){4}};
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &t, &x));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_RELU, &x, 1, NULL, 0, &o, &y));
  mlc_binding *b = f->blocks[0].bindings[0];
  /* the unary rule asked for an op it has no expression for */
  mlc_tir_var *syms[1] = {NULL};
  mlc_te_tensor *in[1] = {NULL}, *outs[1] = {NULL};
  mlc_lg_call c = {gm, tm, NULL, MLC_OP_MATMUL, b, 1, &t, NULL, 0, 1, &t, in, (const double[]){0}, syms, "k"};
  MLC_TEST_OK_FATAL(mlc_te_builder_create(tm, &c.b));
  mlc_tir_expr *shape[1] = {mlc_tir_i64(tm, 4)};
  MLC_TEST_OK(mlc_te_placeholder(c.b, "A", 1, shape, MLC_DTYPE_F32, &in[0]));
  mlc_status s = mlc_lg_unary(&c, outs);
  mlc_te_builder_destroy(c.b);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(mlc_status_code(s), MLC_UNIMPLEMENTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), "node_q"));
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), "matmul"));
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), "no unary expression"));
  CU_ASSERT_PTR_NULL(strstr(mlc_status_message(s), "out of memory"));
  mlc_status_free(s);
  /* must not fire: the rule for its own op */
  c.op = MLC_OP_RELU;
  MLC_TEST_OK_FATAL(mlc_te_builder_create(tm, &c.b));
  MLC_TEST_OK(mlc_te_placeholder(c.b, "A", 1, shape, MLC_DTYPE_F32, &in[0]));
  MLC_TEST_OK(mlc_lg_unary(&c, outs));
  mlc_te_builder_destroy(c.b);
  mlc_tir_module_destroy(tm);
  mlc_module_destroy(gm);
}

/* ---- every elementwise op: kernel == evaluator -------------------------- */

/* The dtype a class is sampled with. */
static mlc_dtype sample_dtype(mlc_dtype_class k) {
  switch (k) {
  case MLC_DCLASS_BOOL: return MLC_DTYPE_BOOL;
  case MLC_DCLASS_INT: return MLC_DTYPE_I32;
  case MLC_DCLASS_INDEX: return MLC_DTYPE_I64;
  case MLC_DCLASS_DATA: case MLC_DCLASS_ANY: case MLC_DCLASS_NUM: case MLC_DCLASS_FLOAT: break;
  }
  return MLC_DTYPE_F32;
}

/* Attributes an op's inference requires (the schema gives no default). */
static void required_attrs(tcase *tc) {
  if (tc->op == MLC_OP_CAST) tc->attrs[0] = (mlc_attr)AINT("dtype", MLC_DTYPE_F64);
}

static void run_elemwise(mlc_op op, mlc_dtype dt, int *count) {
  char name[96];
  int nargs = mlc_op_min_args[op];
  snprintf(name, sizeof name, "table_%s_%s", mlc_op_name[op], mlc_dtype_name(dt));
  tcase tc;
  memset(&tc, 0, sizeof tc);
  tc.name = name;
  tc.op = op;
  tc.nargs = nargs;
  for (int i = 0; i < nargs; i++) tc.args[i] = (targ){dt, 2, {2, 3}};
  if (op == MLC_OP_WHERE) { /* bool condition, data of any type */
    tc.args[1].dt = tc.args[2].dt = MLC_DTYPE_F32;
  }
  if (nargs == 2) tc.args[1] = (targ){dt, 1, {3}}; /* broadcast */
  /* values where every op of the families is defined and no integer divides by 0 */
  tc.lo = nargs == 1 ? -0.9 : 0.25;
  tc.hi = nargs == 1 ? 0.9 : 2;
  tc.ilo = nargs == 1 ? -9 : 1;
  tc.ihi = 7;
  tc.rtol = 1e-5;
  tc.atol = 1e-6;
  required_attrs(&tc);
  mlc_th_kernel_case(&tc);
  (*count)++;
}

static void t_elemwise(void) {
  int count = 0;
  for (int i = 0; i < MLC_OP_COUNT; i++) {
    mlc_op op = (mlc_op)i;
    mlc_pattern p = mlc_op_pattern[op];
    if ((p != MLC_PATTERN_ELEMWISE && p != MLC_PATTERN_BROADCAST) || strcmp(mlc_op_eval_name[op], "NONE") == 0)
      continue;
    if (op == MLC_OP_BROADCAST_TO) continue; /* data movement: its shape attr is the case (test_legalize) */
    mlc_dtype dt = sample_dtype(mlc_op_dtypes[op]);
    run_elemwise(op, dt, &count);
    /* numeric classes: the integer path too */
    if (mlc_op_dtypes[op] == MLC_DCLASS_NUM || mlc_op_dtypes[op] == MLC_DCLASS_ANY)
      run_elemwise(op, MLC_DTYPE_I32, &count);
  }
  CU_ASSERT(count > 60);
}

static void register_suites(void) {
  static const CU_TestInfo table[] = {
      {"table", t_table},     {"schema", t_schema},   {"dtypes", t_dtypes},
      {"no_fold", t_no_fold}, {"no_rule", t_no_rule}, CU_TEST_INFO_NULL,
  };
  static const CU_TestInfo numeric[] = {
      {"elemwise", t_elemwise},
      CU_TEST_INFO_NULL,
  };
  mlc_test_add_suite("ops_table", table);
  CU_pSuite s = CU_add_suite("ops_numeric", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (const CU_TestInfo *t = numeric; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_ops", fns);
}
