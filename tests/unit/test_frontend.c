/*
** test_frontend.c: CUnit suites for frontend/ (ONNX view -> graph IR).
**
** The fixtures under tests/frontend/ come from tests/frontend/make_models.py:
**   fold_*.onnx  all inputs are initializers, so import folds every op into
**                a constant; the constants are compared with numpy's results
**                in tests/frontend/expected.txt;
**   others       keep graph inputs: parameter/return types and the op
**                histogram of "main" are checked, and nn.onnx is compared
**                with the golden text tests/frontend/nn.ir
**                (MLC_UPDATE_GOLDEN=1 rewrites it);
**   err_*.onnx   rejected with a message naming the node and the problem.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "frontend/frontend_int.h"
#include "tests/testutil.h"

/* ---- helpers ------------------------------------------------------------ */

static mlc_onnx_model *load(const char *name) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/frontend/%s.onnx", name);
  mlc_onnx_model *om = NULL;
  mlc_status s = mlc_onnx_load_file(mlc_test_src_path(rel), &om);
  if (s) {
    fprintf(stderr, "\nloading %s: %s\n", rel, mlc_status_message(s));
    mlc_status_free(s);
    return NULL;
  }
  return om;
}

/* Imports tests/frontend/|name|.onnx (or |path| when given); NULL on error
** (printed). |no_fold| keeps calls on constants. */
static mlc_module *import_path(const char *path, int no_fold) {
  mlc_onnx_model *om = NULL;
  mlc_status s = mlc_onnx_load_file(path, &om);
  mlc_module *m = NULL;
  if (!s) {
    mlc_fe_options opt = {no_fold};
    s = mlc_fe_import(om, &opt, &m);
  }
  mlc_onnx_model_destroy(om);
  if (!s) s = mlc_graph_verify(m);
  if (s) {
    fprintf(stderr, "\nimporting %s: %s\n", path, mlc_status_message(s));
    mlc_status_free(s);
    mlc_module_destroy(m);
    return NULL;
  }
  return m;
}

static mlc_module *import_ok(const char *name) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/frontend/%s.onnx", name);
  return import_path(mlc_test_src_path(rel), 0);
}

/* Imports a model that must fail; returns its message (malloc'd) and code. */
static char *import_err(const char *name, mlc_code *code) {
  mlc_onnx_model *om = load(name);
  if (!om) return NULL;
  mlc_module *m = NULL;
  mlc_status s = mlc_fe_import(om, NULL, &m);
  mlc_onnx_model_destroy(om);
  CU_ASSERT_PTR_NULL(m);
  mlc_module_destroy(m);
  if (!s) return NULL;
  *code = mlc_status_code(s);
  char *msg = strdup(mlc_status_message(s));
  mlc_status_free(s);
  return msg;
}

static int has(const char *msg, const char *needle) {
  int ok = msg && strstr(msg, needle) != NULL;
  if (!ok) fprintf(stderr, "\nmissing \"%s\" in:\n%s\n", needle, msg ? msg : "(no error)");
  return ok;
}

static mlc_func *main_of(mlc_module *m) { return mlc_module_func(m, "main"); }

/* Number of bindings of |f| calling |op| (MLC_OP_COUNT: all bindings). */
static int count_op(const mlc_func *f, mlc_op op) {
  int n = 0;
  for (int b = 0; b < f->nblocks; b++)
    for (int i = 0; i < f->blocks[b].n; i++)
      n += op == MLC_OP_COUNT || (f->blocks[b].bindings[i]->kind == MLC_CALL_OP &&
                                  f->blocks[b].bindings[i]->op == op);
  return n;
}

/* The first binding of |f| calling |op|. */
static const mlc_binding *find_op(const mlc_func *f, mlc_op op) {
  for (int b = 0; b < f->nblocks; b++)
    for (int i = 0; i < f->blocks[b].n; i++)
      if (f->blocks[b].bindings[i]->op == op) return f->blocks[b].bindings[i];
  return NULL;
}

/* Checks the type of |v| printed as R.Tensor(...). */
static int type_is(const mlc_module *m, const mlc_value *v, const char *want) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_graph_print_type(m, &v->type, &b);
  int ok = strcmp(mlc_sb_str(&b), want) == 0;
  if (!ok) fprintf(stderr, "\ntype %s, expected %s\n", mlc_sb_str(&b), want);
  mlc_sb_fini(&b);
  return ok;
}

static int ints_are(const mlc_binding *b, const char *name, const int64_t *want, int n) {
  const mlc_attr *a = b ? mlc_attrs_find(b->attrs, b->nattrs, name) : NULL;
  if (!a || a->kind != MLC_ATTR_INTS || a->n != n) return 0;
  for (int i = 0; i < n; i++)
    if (a->ints[i] != want[i]) return 0;
  return 1;
}

/* ---- the table ---------------------------------------------------------- */

static void test_table(void) {
  CU_ASSERT(mlc_fe_table_ok());
  int first;
  const mlc_fe_row *r = mlc_fe_lookup("Softmax", 12, &first);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->since, 11);
  CU_ASSERT_EQUAL(first, 1);
  CU_ASSERT_EQUAL(mlc_fe_lookup("Softmax", 13, NULL)->since, 13);
  CU_ASSERT_EQUAL(mlc_fe_lookup("Softmax", 17, NULL)->since, 13);
  CU_ASSERT_EQUAL(mlc_fe_lookup("Softmax", 1, NULL)->since, 1);
  CU_ASSERT_EQUAL(mlc_fe_lookup("Abs", 5, NULL)->since, 1);
  CU_ASSERT_EQUAL(mlc_fe_lookup("Xor", 100, NULL)->since, 7);
  CU_ASSERT_EQUAL(mlc_fe_lookup("Reshape", 4, NULL)->since, 1);
  CU_ASSERT_EQUAL(mlc_fe_lookup("Reshape", 5, NULL)->since, 5);
  CU_ASSERT_EQUAL(mlc_fe_lookup("ReduceMean", 18, NULL)->since, 18);
  CU_ASSERT_PTR_NULL(mlc_fe_lookup("LessOrEqual", 11, &first));
  CU_ASSERT_EQUAL(first, 12);
  CU_ASSERT_PTR_NULL(mlc_fe_lookup("StringNormalizer", 13, &first));
  CU_ASSERT_EQUAL(first, 0);
  CU_ASSERT_PTR_NULL(mlc_fe_lookup("", 13, NULL));
  CU_ASSERT_PTR_NULL(mlc_fe_lookup("zzz", 13, NULL));

  static const char *const required[] = {
      "Conv", "Gemm", "MatMul", "Relu", "Clip", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "MaxPool",
      "GlobalAveragePool", "Flatten", "Concat", "Reshape", "Transpose", "Slice", "Gather", "Shape",
      "Softmax", "ReduceMean", "Identity", "Constant", "BatchNormalization", "AveragePool", "Sigmoid",
      "Tanh", "LeakyRelu", "Unsqueeze", "Squeeze", NULL};
  int n = mlc_fe_num_supported();
  CU_ASSERT(n >= 31);
  for (int i = 1; i < n; i++) CU_ASSERT(strcmp(mlc_fe_supported_op(i - 1), mlc_fe_supported_op(i)) < 0);
  CU_ASSERT_PTR_NULL(mlc_fe_supported_op(n));
  for (const char *const *op = required; *op; op++) {
    int found = 0;
    for (int i = 0; i < n; i++) found |= strcmp(mlc_fe_supported_op(i), *op) == 0;
    CU_ASSERT(found);
    if (!found) fprintf(stderr, "\nno converter for %s\n", *op);
  }
}

/* ---- numeric checks through folding ------------------------------------- */

#define MAX_VALUES 4096

typedef struct expected {
  char model[64];
  int index;
  char dtype[16];
  int rank;
  int64_t dims[8];
  int n;
  double values[MAX_VALUES];
} expected;

/* Parses one line of expected.txt; 0 when it is not an entry. */
static int parse_expected(char *line, expected *e) {
  if (line[0] == '#' || !line[0]) return 0;
  char *p = line, *end;
  int used;
  if (sscanf(p, "%63s %d %15s %d%n", e->model, &e->index, e->dtype, &e->rank, &used) != 4) return 0;
  p += used;
  if (e->rank < 0 || e->rank > 8) return 0;
  for (int i = 0; i < e->rank; i++) e->dims[i] = strtoll(p, &p, 10);
  p = strchr(p, ':');
  if (!p) return 0;
  p++;
  e->n = 0;
  for (;;) {
    double v = strtod(p, &end);
    if (end == p) break;
    if (e->n == MAX_VALUES) return 0;
    e->values[e->n++] = v;
    p = end;
  }
  return 1;
}

static double element(const mlc_const *c, int64_t i) {
  switch (c->type.dtype) {
  case MLC_DTYPE_F32: return ((const float *)c->data)[i];
  case MLC_DTYPE_I64: return (double)((const int64_t *)c->data)[i];
  case MLC_DTYPE_I32: return ((const int32_t *)c->data)[i];
  case MLC_DTYPE_BOOL: return ((const uint8_t *)c->data)[i];
  default: return NAN;
  }
}

/* Compares return |e->index| of |m| with |e|. */
static int check_expected(const mlc_module *m, const expected *e) {
  const mlc_func *f = mlc_module_func(m, "main");
  if (!f || e->index >= f->nrets) return 0;
  const mlc_value *v = f->rets[e->index];
  const mlc_const *c = mlc_value_const(m, v);
  if (!c) {
    fprintf(stderr, "\n%s output %d was not folded\n", e->model, e->index);
    return 0;
  }
  if (strcmp(mlc_dtype_name(c->type.dtype), e->dtype) != 0 || c->type.rank != e->rank) {
    fprintf(stderr, "\n%s output %d: %s rank %d, expected %s rank %d\n", e->model, e->index,
            mlc_dtype_name(c->type.dtype), c->type.rank, e->dtype, e->rank);
    return 0;
  }
  for (int i = 0; i < e->rank; i++)
    if (c->type.dims[i] != e->dims[i]) {
      fprintf(stderr, "\n%s output %d: dim %d is %lld, expected %lld\n", e->model, e->index, i,
              (long long)c->type.dims[i], (long long)e->dims[i]);
      return 0;
    }
  if (mlc_type_numel(&c->type) != e->n) return 0;
  for (int i = 0; i < e->n; i++) {
    double got = element(c, i), want = e->values[i];
    if (fabs(got - want) > 1e-5 + 1e-5 * fabs(want)) {
      fprintf(stderr, "\n%s output %d: element %d is %.9g, expected %.9g\n", e->model, e->index, i, got,
              want);
      return 0;
    }
  }
  return 1;
}

static void test_fold_numeric(void) {
  char *text = mlc_test_read_file(mlc_test_src_path("tests/frontend/expected.txt"), NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  expected *e = malloc(sizeof *e);
  mlc_module *m = NULL;
  char current[64] = "";
  int entries = 0, models = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (!parse_expected(line, e)) continue;
    if (strcmp(current, e->model) != 0) {
      mlc_module_destroy(m);
      snprintf(current, sizeof current, "%s", e->model);
      m = import_ok(current);
      CU_ASSERT_PTR_NOT_NULL(m);
      if (m) {
        /* Everything folds: no bindings are left. */
        CU_ASSERT_EQUAL(count_op(main_of(m), MLC_OP_COUNT), 0);
        models++;
      }
    }
    if (!m) continue;
    int ok = check_expected(m, e);
    CU_ASSERT(ok);
    entries++;
  }
  mlc_module_destroy(m);
  CU_ASSERT(models >= 14);
  CU_ASSERT(entries >= 50);
  free(e);
  free(text);
}

/* With no_fold the calls stay (and the model still verifies). */
static void test_no_fold(void) {
  mlc_module *m = import_path(mlc_test_src_path("tests/frontend/fold_math.onnx"), 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_func *f = main_of(m);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_ADD), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_CLIP), 2);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_MAXIMUM), 2);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_MINIMUM), 0);
  CU_ASSERT_EQUAL(f->nrets, 14);
  CU_ASSERT_PTR_NULL(mlc_value_const(m, f->rets[0]));
  CU_ASSERT_STRING_EQUAL(f->rets[0]->name, "add");
  mlc_module_destroy(m);
}

/* ---- structure: types and op histograms --------------------------------- */

static void test_nn(void) {
  mlc_module *m = import_ok("nn");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_func *f = main_of(m);
  CU_ASSERT_EQUAL_FATAL(f->nparams, 1);
  CU_ASSERT(type_is(m, f->params[0], "R.Tensor((N, 3, 8, 8), \"float32\")"));
  CU_ASSERT_EQUAL_FATAL(f->nrets, 2);
  CU_ASSERT(type_is(m, f->rets[0], "R.Tensor((N, 2), \"float32\")"));
  CU_ASSERT(type_is(m, f->rets[1], "R.Tensor((4,), \"int64\")"));
  CU_ASSERT_STRING_EQUAL(f->rets[0]->name, "y");
  CU_ASSERT_STRING_EQUAL(f->rets[1]->name, "shape");
  /* conv, bn as multiply + add, relu, pools, gap as mean, flatten as
  ** reshape, gemm as matmul + add (the transposed weight folds), softmax,
  ** shape of a symbolic input as shape_of. */
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_CONV), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_MUL), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_ADD), 2);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_RELU), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_MAX_POOL), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_AVG_POOL), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_MEAN), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_RESHAPE), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_MATMUL), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_SOFTMAX), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_SHAPE_OF), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_COUNT), 12);
  /* SAME_UPPER, stride 2, kernel 3 on 8: one pad at the end. */
  const mlc_binding *conv = find_op(f, MLC_OP_CONV);
  static const int64_t pads[4] = {0, 0, 1, 1}, two[2] = {2, 2}, one[2] = {1, 1};
  CU_ASSERT(ints_are(conv, "pads", pads, 4));
  CU_ASSERT(ints_are(conv, "strides", two, 2));
  CU_ASSERT(ints_are(conv, "dilations", one, 2));
  CU_ASSERT_STRING_EQUAL(conv->origin.node, "conv1");
  CU_ASSERT_STRING_EQUAL(conv->origin.op_type, "Conv");
  CU_ASSERT_EQUAL(conv->origin.opset, 13);
  CU_ASSERT_EQUAL(conv->origin.index, 0);
  const mlc_binding *mean = find_op(f, MLC_OP_MEAN);
  static const int64_t spatial[2] = {2, 3};
  CU_ASSERT(ints_are(mean, "axes", spatial, 2));
  CU_ASSERT_EQUAL(mlc_attrs_int(mean->attrs, mean->nattrs, "keepdims", 0), 1);
  CU_ASSERT_EQUAL(mlc_attrs_int(find_op(f, MLC_OP_SOFTMAX)->attrs, 1, "axis", -1), 1);

  /* The printed module against the golden text. */
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_graph_print(m, &b);
  const char *golden = mlc_test_src_path("tests/frontend/nn.ir");
  const char *upd = getenv("MLC_UPDATE_GOLDEN");
  if (upd && *upd && strcmp(upd, "0") != 0)
    CU_ASSERT_EQUAL(mlc_test_write_file(golden, mlc_sb_str(&b), b.len), 0);
  char *want = mlc_test_read_file(golden, NULL);
  CU_ASSERT_PTR_NOT_NULL(want);
  if (want && strcmp(want, mlc_sb_str(&b)) != 0) {
    fprintf(stderr, "\n%s differs; got:\n%s\n", golden, mlc_sb_str(&b));
    CU_FAIL("golden IR differs");
  }
  free(want);
  mlc_sb_fini(&b);
  mlc_module_destroy(m);
}

static void test_batchnorm_param(void) {
  mlc_module *m = import_ok("batchnorm");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_func *f = main_of(m);
  CU_ASSERT(type_is(m, f->params[0], "R.Tensor((N, 3, 4, 4), \"float32\")"));
  CU_ASSERT(type_is(m, f->rets[0], "R.Tensor((N, 3, 4, 4), \"float32\")"));
  /* Only x * s + b is left; s and b are [3, 1, 1] constants. */
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_MUL), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_ADD), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_COUNT), 2);
  const mlc_binding *mul = find_op(f, MLC_OP_MUL);
  CU_ASSERT_FATAL(mul && mul->nargs == 2);
  CU_ASSERT(type_is(m, mul->args[1], "R.Tensor((3, 1, 1), \"float32\")"));
  CU_ASSERT_PTR_NOT_NULL(mlc_value_const(m, mul->args[1]));
  mlc_module_destroy(m);
}

static void test_gemm(void) {
  mlc_module *m = import_ok("gemm_const");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_func *f = main_of(m);
  /* A' and alpha*B' fold; the matmul stays; beta*C folds; the add stays. */
  CU_ASSERT_EQUAL(f->nparams, 0);
  CU_ASSERT(type_is(m, f->rets[0], "R.Tensor((3, 5), \"float32\")"));
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_MATMUL), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_ADD), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_COUNT), 2);
  const mlc_binding *mm = find_op(f, MLC_OP_MATMUL);
  CU_ASSERT(type_is(m, mm->args[0], "R.Tensor((3, 4), \"float32\")"));
  CU_ASSERT(type_is(m, mm->args[1], "R.Tensor((4, 5), \"float32\")"));
  mlc_module_destroy(m);

  m = import_ok("gemm_param");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  f = main_of(m);
  CU_ASSERT(type_is(m, f->params[0], "R.Tensor((5, M), \"float32\")"));
  CU_ASSERT(type_is(m, f->rets[0], "R.Tensor((M, 4), \"float32\")"));
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_TRANSPOSE), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_MATMUL), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_COUNT), 2);
  mlc_module_destroy(m);
}

static void test_symbolic(void) {
  mlc_module *m = import_ok("symbolic");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_func *f = main_of(m);
  CU_ASSERT(type_is(m, f->params[0], "R.Tensor((N, 3, 4), \"float32\")"));
  CU_ASSERT_EQUAL_FATAL(f->nrets, 2);
  CU_ASSERT(type_is(m, f->rets[0], "R.Tensor((N, 12), \"float32\")"));
  CU_ASSERT(type_is(m, f->rets[1], "R.Tensor((N, 1, 8), \"float32\")"));
  /* Nodes come in any order: the reshape (node #1) runs first. */
  CU_ASSERT_EQUAL_FATAL(count_op(f, MLC_OP_COUNT), 4);
  const mlc_binding *first = f->blocks[0].bindings[0];
  CU_ASSERT_EQUAL(first->op, MLC_OP_RESHAPE);
  CU_ASSERT_EQUAL(first->origin.index, 1);
  const mlc_binding *sl = find_op(f, MLC_OP_SLICE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sl);
  static const int64_t begin[3] = {0, 0, 2}, step[3] = {1, 1, 1};
  CU_ASSERT(ints_are(sl, "begin", begin, 3));
  CU_ASSERT(ints_are(sl, "step", step, 3));
  mlc_module_destroy(m);
}

static void test_symbolic_more(void) {
  mlc_module *m = import_ok("symbolic_v15");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_func *f = main_of(m);
  CU_ASSERT_EQUAL_FATAL(f->nrets, 5);
  /* Shape of the symbolic batch: shape_of + strided_slice; of static dims: a constant. */
  CU_ASSERT(type_is(m, f->rets[0], "R.Tensor((1,), \"int64\")"));
  CU_ASSERT_PTR_NULL(mlc_value_const(m, f->rets[0]));
  const mlc_const *inner = mlc_value_const(m, f->rets[1]);
  CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
  CU_ASSERT(type_is(m, f->rets[1], "R.Tensor((2,), \"int64\")"));
  CU_ASSERT(((const int64_t *)inner->data)[0] == 3 && ((const int64_t *)inner->data)[1] == 4);
  CU_ASSERT(type_is(m, f->rets[2], "R.Tensor((N, 12), \"float32\")"));
  CU_ASSERT(type_is(m, f->rets[3], "R.Tensor((N, 12), \"float32\")"));
  CU_ASSERT(type_is(m, f->rets[4], "R.Tensor((), \"int64\")"));
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_SHAPE_OF), 2);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_SLICE), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_PROD), 1);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_RESHAPE), 2);
  mlc_module_destroy(m);

  m = import_ok("symbolic_softmax_v11");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  f = main_of(m);
  CU_ASSERT(type_is(m, f->rets[0], "R.Tensor((N, 3, 4), \"float32\")"));
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_RESHAPE), 2);
  CU_ASSERT_EQUAL(count_op(f, MLC_OP_SOFTMAX), 1);
  const mlc_binding *sm = find_op(f, MLC_OP_SOFTMAX);
  CU_ASSERT(type_is(m, sm->args[0], "R.Tensor((N, 12), \"float32\")"));
  CU_ASSERT_EQUAL(mlc_attrs_int(sm->attrs, sm->nattrs, "axis", -1), 1);
  mlc_module_destroy(m);
}

/* A graph input that is also an initializer is a parameter whose default
** is the initializer (the matmul reads the parameter), or, with
** fold_default_inputs, a constant and no parameter. */
static void test_init_input(void) {
  mlc_module *m = import_ok("init_input");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_func *f = main_of(m);
  CU_ASSERT_EQUAL_FATAL(f->nparams, 2);
  CU_ASSERT_STRING_EQUAL(f->params[0]->name, "x");
  CU_ASSERT_STRING_EQUAL(f->params[1]->name, "w");
  CU_ASSERT_PTR_NULL(mlc_func_param_default(f, 0));
  const mlc_value *def = mlc_func_param_default(f, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(def);
  const mlc_const *c = mlc_value_const(m, def);
  CU_ASSERT(c && c->nbytes == 6 * sizeof(float) && ((const float *)c->data)[5] == 1.0f);
  CU_ASSERT_PTR_NULL(mlc_func_param_value(f, 1)); /* nothing binds it */
  const mlc_binding *mm = find_op(f, MLC_OP_MATMUL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(mm);
  CU_ASSERT_PTR_EQUAL(mm->args[1], f->params[1]);
  CU_ASSERT(type_is(m, f->rets[0], "R.Tensor((2, 2), \"float32\")"));
  mlc_module_destroy(m);

  mlc_onnx_model *om = load("init_input");
  CU_ASSERT_PTR_NOT_NULL_FATAL(om);
  mlc_fe_options opt;
  memset(&opt, 0, sizeof opt);
  opt.fold_default_inputs = 1;
  m = NULL;
  mlc_status s = mlc_fe_import(om, &opt, &m);
  mlc_onnx_model_destroy(om);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  f = main_of(m);
  CU_ASSERT_EQUAL_FATAL(f->nparams, 1);
  CU_ASSERT_STRING_EQUAL(f->params[0]->name, "x");
  mm = find_op(f, MLC_OP_MATMUL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(mm);
  CU_ASSERT_PTR_NOT_NULL(mlc_value_const(m, mm->args[1]));
  mlc_module_destroy(m);
}

/* The bundled end-to-end models import and verify. */
static void test_models(void) {
  static const char *const models[] = {"models/mlp.onnx", "models/mlp_dyn.onnx", "models/cnn.onnx",
                                       "models/encoder.onnx", NULL};
  for (const char *const *p = models; *p; p++) {
    const char *path = mlc_test_src_path(*p);
    FILE *fp = fopen(path, "rb");
    if (!fp) continue; /* not bundled in this tree */
    fclose(fp);
    mlc_module *m = import_path(path, 0);
    CU_ASSERT_PTR_NOT_NULL(m);
    mlc_module_destroy(m);
  }
}

/* ---- errors ------------------------------------------------------------- */

static void test_preflight(void) {
  mlc_code code = MLC_OK;
  char *msg = import_err("err_preflight", &code);
  CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
  CU_ASSERT_EQUAL(code, MLC_UNIMPLEMENTED);
  CU_ASSERT(has(msg, "model uses 4 unsupported features:\n"));
  CU_ASSERT(has(msg, "\n  input \"s\": element type STRING not supported"));
  CU_ASSERT(has(msg, "\n  node \"conv\" #0 (Conv, opset 13): attribute \"foo\" not supported"));
  CU_ASSERT(has(msg, "\n  node \"fancy\" #1 (FancyOp, opset 13): op not supported"));
  CU_ASSERT(has(msg, "\n  node \"fused\" #2 (com.microsoft.FusedConv, opset 1): op not supported "
                     "(domain \"com.microsoft\")"));
  CU_ASSERT(!has(msg, "MaxPool")); /* its Indices output is supported */
  free(msg);
  /* mlc_fe_check alone says the same; a clean model passes. */
  mlc_onnx_model *om = load("err_preflight");
  CU_ASSERT_PTR_NOT_NULL_FATAL(om);
  mlc_status s = mlc_fe_check(om);
  CU_ASSERT_EQUAL(mlc_status_code(s), MLC_UNIMPLEMENTED);
  mlc_status_free(s);
  mlc_onnx_model_destroy(om);
  om = load("nn");
  CU_ASSERT_PTR_NOT_NULL_FATAL(om);
  MLC_TEST_OK(mlc_fe_check(om));
  mlc_onnx_model_destroy(om);
}

static void test_errors(void) {
  mlc_code code = MLC_OK;
  char *msg = import_err("err_cycle", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "graph has a cycle: "));
  CU_ASSERT(has(msg, "node \"a\" #1 (Add)"));
  CU_ASSERT(has(msg, "node \"b\" #2 (Relu)"));
  CU_ASSERT(has(msg, "node \"c\" #3 (Neg)"));
  CU_ASSERT(msg && !strstr(msg, "fine"));
  free(msg);

  msg = import_err("err_missing", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "node \"adder\" #0 (Add, opset 13): input \"nowhere\" is not a graph input, an "
                     "initializer or the output of any node"));
  free(msg);

  msg = import_err("err_arity", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "model has 1 error:\n  node \"half_add\" #0 (Add, opset 13): takes 2 inputs, got 1"));
  free(msg);

  /* a shape computed at run time takes the run-time shape form (test_dynamic runs it) */
  mlc_module *dm = import_path(mlc_test_src_path("tests/frontend/err_reshape_dyn.onnx"), 0);
  CU_ASSERT_PTR_NOT_NULL(dm);
  if (dm) {
    mlc_strbuf b = MLC_STRBUF_INIT;
    mlc_graph_print(dm, &b);
    CU_ASSERT(has(mlc_sb_str(&b), "R.define_dims("));
    mlc_sb_fini(&b);
    MLC_TEST_OK(mlc_graph_verify(dm));
  }
  mlc_module_destroy(dm);

  msg = import_err("err_conv_channels", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "node \"conv_bad\" (Conv, opset 13): the input (1, 3, 8, 8) has 3 channels, "
                     "the weight (4, 2, 3, 3) expects 2 (group 1)"));
  free(msg);

  msg = import_err("err_kernel_shape", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "node \"conv1\" (Conv, opset 13): kernel_shape has 3 entries, weight has 2 "
                     "spatial dims"));
  free(msg);
}

/* Unsupported types, attributes and subgraph ops: one list. */
static void test_preflight_types(void) {
  mlc_code code = MLC_OK;
  char *msg = import_err("err_types", &code);
  CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
  CU_ASSERT_EQUAL(code, MLC_UNIMPLEMENTED);
  CU_ASSERT(has(msg, "model uses 8 unsupported features:\n"));
  CU_ASSERT(has(msg, "\n  input \"noshape\": no shape given (inputs of unknown rank are not supported)"));
  CU_ASSERT(has(msg, "\n  input \"seq\": sequence inputs not supported"));
  CU_ASSERT(has(msg, "\n  input \"cplx\": element type COMPLEX64 not supported"));
  CU_ASSERT(has(msg, "\n  output \"seq\": sequence outputs not supported"));
  CU_ASSERT(has(msg, "\n  node \"strconst\" #0 (Constant, opset 13): string constants not supported"));
  CU_ASSERT(!has(msg, "(If, opset 13)")); /* If is supported; its branch's op is not */
  CU_ASSERT(has(msg, "\n  node \"inner\" #0 in graph \"then_branch\" (FooBar, opset 13): op not supported"));
  CU_ASSERT(has(msg, "\n  node \"relu\" #2 (Relu, opset 13): attribute \"alpha\" not supported"));
  CU_ASSERT(has(msg, "\n  node \"softmax\" #3 (Softmax, opset 13): attribute \"axis\" is FLOAT, expected INT"));
  free(msg);
}

static void test_errors_graph(void) {
  mlc_code code = MLC_OK;
  char *msg = import_err("err_dup", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "node \"second\" #1 (Neg, opset 13): output \"y\" is defined more than once"));
  free(msg);

  msg = import_err("err_output", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "graph output \"ghost\" is not a graph input, an initializer or the output of any node"));
  free(msg);

  /* -1 in (-1, 4) against the input (N, M, 4) is not a single input dim:
  ** the run-time shape form, the static 4 kept. */
  mlc_module *m = import_path(mlc_test_src_path("tests/frontend/err_reshape_sym.onnx"), 0);
  CU_ASSERT_PTR_NOT_NULL(m);
  if (m) {
    mlc_strbuf b = MLC_STRBUF_INIT;
    mlc_graph_print(m, &b);
    CU_ASSERT(has(mlc_sb_str(&b), "R.dyn_reshape(x, lv1, shape=[s2, 4])"));
    mlc_sb_fini(&b);
  }
  mlc_module_destroy(m);
}

/* ---- validation: arity, sizes, names, opsets ------------------------------ */

/* The arity of every row: the counts the ONNX schemas give (spot checks of
** arity.def) and a row for every version. */
static void test_arity_table(void) {
  static const struct {
    const char *op;
    int opset, min_in, max_in, min_out, max_out;
  } want[] = {
      {"Constant", 13, 0, 0, 1, 1}, {"Split", 13, 1, 2, 1, -1}, {"Split", 11, 1, 1, 1, -1},
      {"Split", 18, 1, 2, 1, -1},   {"Concat", 13, 1, -1, 1, 1}, {"Clip", 13, 1, 3, 1, 1},
      {"If", 16, 1, 1, 1, -1},      {"Loop", 16, 2, -1, 1, -1},  {"Scan", 9, 1, -1, 1, -1},
      {"Dropout", 13, 1, 3, 1, 2},  {"LSTM", 14, 3, 8, 0, 3},    {"Pad", 18, 2, 4, 1, 1},
      {"BatchNormalization", 9, 5, 5, 1, 5}, {"BatchNormalization", 15, 5, 5, 1, 3},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const mlc_fe_row *r = mlc_fe_lookup(want[i].op, want[i].opset, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    const mlc_fe_arity *a = mlc_fe_row_arity(r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    int ok = a->min_in == want[i].min_in && a->max_in == want[i].max_in && a->min_out == want[i].min_out &&
             a->max_out == want[i].max_out;
    if (!ok) fprintf(stderr, "\n%s-%d: arity %d..%d -> %d..%d\n", want[i].op, r->since, a->min_in, a->max_in,
                     a->min_out, a->max_out);
    CU_ASSERT(ok);
  }
  int n;
  const mlc_fe_row *rows = mlc_fe_table(&n);
  for (int i = 0; i < n; i++) CU_ASSERT_PTR_NOT_NULL(mlc_fe_row_arity(&rows[i]));
}

/* Constant and Split with no outputs (top level and in a branch): errors of
** the pre-flight check, no converter runs. */
static void test_no_outputs(void) {
  mlc_code code = MLC_OK;
  char *msg = import_err("err_no_outputs", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "model has 2 errors:\n"));
  CU_ASSERT(has(msg, "\n  node \"k\" #0 (Constant, opset 13): has 0 outputs, the op has 1"));
  CU_ASSERT(has(msg, "\n  node \"cut\" #1 (Split, opset 13): has 0 outputs, the op has at least 1"));
  free(msg);
  msg = import_err("err_no_outputs_if", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "model has 1 error:\n  node \"k_then\" #0 in graph \"then_branch\" (Constant, opset 13): "
                     "has 0 outputs, the op has 1"));
  free(msg);
}

static void test_arity_errors(void) {
  mlc_code code = MLC_OK;
  char *msg = import_err("err_arity_all", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "model has 6 errors:\n"));
  CU_ASSERT(has(msg, "\n  node \"few\" #0 (Add, opset 13): takes 2 inputs, got 1"));
  CU_ASSERT(has(msg, "\n  node \"many_in\" #1 (Relu, opset 13): takes 1 input, got 2"));
  CU_ASSERT(has(msg, "\n  node \"many_out\" #2 (Relu, opset 13): has 2 outputs, the op has 1"));
  CU_ASSERT(has(msg, "\n  node \"empty_in\" #3 (Add, opset 13): input 0 is required but empty"));
  CU_ASSERT(has(msg, "\n  node \"empty_out\" #4 (Neg, opset 13): output 0 is required but its name is empty"));
  CU_ASSERT(has(msg, "\n  node \"empty_var\" #5 (Concat, opset 13): input 1 is variadic (it cannot be "
                     "omitted) but empty"));
  CU_ASSERT(msg && !strstr(msg, "clip_ok") && !strstr(msg, "drop_ok"));
  free(msg);
}

/* Split sizes whose sum overflows int64. */
static void test_split_overflow(void) {
  mlc_code code = MLC_OK;
  char *msg = import_err("err_split_overflow", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "node \"cut\" (Split, opset 13): split sums to more than int64 can hold"));
  free(msg);
}

/* Sizes from the model whose arithmetic overflows int64: an error naming
** the node, not a wrapped value (or, under UBSan, a report). */
static void test_size_overflow(void) {
  static const struct {
    const char *model, *want;
  } cases[] = {
      {"err_conv_pad_overflow", "node \"conv\" (Conv, opset 13): auto_pad SAME_UPPER: the padding of spatial "
                                "axis 0 overflows int64"},
      {"err_convt_pad_overflow", "node \"convt\" (ConvTranspose, opset 13): the output extent or padding of "
                                 "spatial axis 0 overflows int64"},
      {"err_d2s_overflow", "node \"d2s\" (DepthToSpace, opset 13): blocksize 4294967296: the output extents "
                           "overflow int64"},
      {"err_cos_overflow", "node \"fill\" (ConstantOfShape, opset 13): broadcast_to: output 0 of shape "
                           "(1099511627776, 1099511627776) float32: its byte size overflows int64"},
      {"err_input_overflow", "input \"big\": the byte size of its shape overflows int64"},
      {"err_unpool_overflow", "node \"unpool\" (MaxUnpool, opset 11): the output extent of axis 2 overflows "
                              "int64"},
      {"err_resize_sizes", "node \"resize\" (Resize, opset 13): sizes[2] = 9223372036854775807 gives a too large "
                           "output"},
      {"err_lstm_hidden", "node \"lstm\" (LSTM, opset 14): hidden_size 4611686018427387904 is too large (the "
                          "gate sizes overflow int64)"},
      {"err_dft_length", "node \"dft\" (DFT, opset 17): dft: output 0 of shape (1, 9223372036854775807, 2) "
                         "float32: its byte size overflows int64"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mlc_code code = MLC_OK;
    char *msg = import_err(cases[i].model, &code);
    CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
    CU_ASSERT(has(msg, cases[i].want));
    free(msg);
  }
  /* A stride of 2^63 - 1 is fine: one output position (SAME_UPPER pads
  ** computed without overflow). */
  mlc_module *m = import_ok("conv_huge_stride");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT(type_is(m, main_of(m)->rets[0], "R.Tensor((1, 4, 1, 8), \"float32\")"));
  mlc_module_destroy(m);
}

static void test_names(void) {
  mlc_code code = MLC_OK;
  char *msg = import_err("err_names", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "model has 8 errors:\n"));
  CU_ASSERT(has(msg, "\n  model: graph input \"x\" is listed more than once"));
  CU_ASSERT(has(msg, "\n  model: initializer \"w\" is listed more than once"));
  CU_ASSERT(has(msg, "\n  model: graph output \"y\" is listed more than once"));
  CU_ASSERT(has(msg, "\n  node \"second\" #1 (Neg, opset 13): output \"r\" is defined more than once: it is "
                     "also an output of node \"first\" #0 (Relu)"));
  CU_ASSERT(has(msg, "\n  node \"shadow_input\" #2 (Neg, opset 13): output \"x\" is defined more than once: it "
                     "is also a graph input"));
  CU_ASSERT(has(msg, "\n  node \"shadow_init\" #3 (Neg, opset 13): output \"w\" is defined more than once: it "
                     "is also an initializer"));
  CU_ASSERT(has(msg, "\n  node \"twice\" #4 (Dropout, opset 13): output \"u\" is defined more than once: the "
                     "node lists it twice"));
  CU_ASSERT(has(msg, "\n  node \"t_neg\" #0 in graph \"then_branch\" (Neg, opset 13): output \"r\" is defined "
                     "more than once: it is also an output of node \"first\" #0 (Relu) of an enclosing graph"));
  /* A branch may reuse the name of its If's output; an initializer may
  ** also be a graph input. */
  CU_ASSERT(msg && !strstr(msg, "e_id") && !strstr(msg, "is also a graph input, "));
  free(msg);
  /* init_input.onnx lists its initializer among the inputs too. */
  mlc_onnx_model *om = load("init_input");
  CU_ASSERT_PTR_NOT_NULL_FATAL(om);
  MLC_TEST_OK(mlc_fe_check(om));
  mlc_onnx_model_destroy(om);
}

static void test_opsets(void) {
  mlc_code code = MLC_OK;
  char *msg = import_err("err_opset99", &code);
  CU_ASSERT_EQUAL(code, MLC_UNIMPLEMENTED);
  CU_ASSERT(has(msg, "model uses 1 unsupported feature:\n  model: opset 99 of the default domain is not "
                     "supported (this build supports opsets 1 to 20)"));
  free(msg);
  msg = import_err("err_opset0", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "model has 1 error:\n  model: opset 0 of the default domain is not a valid version (this "
                     "build supports opsets 1 to 20)"));
  free(msg);
  msg = import_err("err_opset_twice", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "model has 1 error:\n  model: domain \"ai.onnx\" is imported more than once (opsets 13 "
                     "and 15)"));
  free(msg);
  msg = import_err("err_domain", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "model has 1 error:\n  node \"f\" #1 (com.example.Fancy, opset 0): its domain "
                     "\"com.example\" is not imported by the model"));
  free(msg);
  msg = import_err("err_ir_version", &code);
  CU_ASSERT_EQUAL(code, MLC_INVALID_ARGUMENT);
  CU_ASSERT(has(msg, "model has 1 error:\n  model: ir_version 0 is not valid (IR versions start at 1)"));
  free(msg);
  /* The lowest and highest opsets: no row is newer than the highest. */
  mlc_module *m = import_ok("opset1");
  CU_ASSERT_PTR_NOT_NULL(m);
  mlc_module_destroy(m);
  int n;
  const mlc_fe_row *rows = mlc_fe_table(&n);
  for (int i = 0; i < n; i++) CU_ASSERT(rows[i].since >= MLC_FE_OPSET_MIN && rows[i].since <= MLC_FE_OPSET_MAX);
}

static void register_suites(void) {
  static const CU_TestInfo table[] = {{"table", test_table}, CU_TEST_INFO_NULL};
  static const CU_TestInfo fold[] = {{"numeric", test_fold_numeric}, {"no_fold", test_no_fold},
                                     CU_TEST_INFO_NULL};
  static const CU_TestInfo structure[] = {{"nn", test_nn},
                                          {"batchnorm_param", test_batchnorm_param},
                                          {"gemm", test_gemm},
                                          {"symbolic", test_symbolic},
                                          {"symbolic_more", test_symbolic_more},
                                          {"init_input", test_init_input},
                                          {"models", test_models},
                                          CU_TEST_INFO_NULL};
  static const CU_TestInfo errors[] = {{"preflight", test_preflight},
                                       {"preflight_types", test_preflight_types},
                                       {"errors", test_errors},
                                       {"errors_graph", test_errors_graph},
                                       CU_TEST_INFO_NULL};
  static const CU_TestInfo validation[] = {{"arity_table", test_arity_table},
                                           {"no_outputs", test_no_outputs},
                                           {"arity_errors", test_arity_errors},
                                           {"split_overflow", test_split_overflow},
                                           {"size_overflow", test_size_overflow},
                                           {"names", test_names},
                                           {"opsets", test_opsets},
                                           CU_TEST_INFO_NULL};
  mlc_test_add_suite("convert_table", table);
  mlc_test_add_suite("import_fold", fold);
  mlc_test_add_suite("import_structure", structure);
  mlc_test_add_suite("import_errors", errors);
  mlc_test_add_suite("import_validation", validation);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_frontend", fns);
}
