/*
** test_onnx.c: CUnit suites for onnx/ (the ONNX loader).
**
** The fixtures come from tests/malformed/make_corpus.py: valid models whose
** view data is compared here with the numbers the script wrote, the
** malformed corpus listed in tests/malformed/MANIFEST (file, expected code,
** substring of the message), and run-time cases (symlink escapes, FIFOs,
** oversized files).  A fuzz-ish loop truncates and corrupts the valid
** fixtures and requires a clean status or success, never a crash or leak
** (the sanitizer build checks the latter).
*/
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/onnx.h"
#include "tests/testutil.h"

/* ---- helpers ------------------------------------------------------------------ */

static char *corpus_path(const char *name) {
  const char *p = mlc_test_src_path("tests/malformed");
  size_t n = strlen(p) + 1 + strlen(name) + 1;
  char *s = malloc(n);
  snprintf(s, n, "%s/%s", p, name);
  return s;
}

static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + 1 + strlen(name) + 1;
  char *s = malloc(n);
  snprintf(s, n, "%s/%s", dir, name);
  return s;
}

/* Loads a fixture; fails the test (and returns NULL) on error. */
static mlc_onnx_model *load_ok(const char *name) {
  char *path = corpus_path(name);
  mlc_onnx_model *m = NULL;
  mlc_status s = mlc_onnx_load_file(path, &m);
  if (s) {
    fprintf(stderr, "\n%s: %s: %s\n", name, mlc_code_name(mlc_status_code(s)),
            mlc_status_message(s));
    mlc_status_free(s);
  }
  CU_ASSERT_PTR_NOT_NULL(m);
  free(path);
  return m;
}

/* Expects |s| to carry |code| and a message containing |sub|; frees |s|. */
static int expect_error(mlc_status s, mlc_code code, const char *sub, const char *ctx) {
  int ok = s && mlc_status_code(s) == code && strstr(mlc_status_message(s), sub);
  if (!ok)
    fprintf(stderr, "\n%s: want %s \"%s\", got %s \"%s\"\n", ctx, mlc_code_name(code), sub,
            mlc_code_name(mlc_status_code(s)), mlc_status_message(s));
  CU_ASSERT(ok);
  mlc_status_free(s);
  return ok;
}

static const mlc_onnx_tensor *find_init(const mlc_onnx_graph *g, const char *name) {
  for (int i = 0; i < g->ninitializers; i++)
    if (strcmp(g->initializers[i].name, name) == 0) return &g->initializers[i];
  CU_FAIL("initializer not found");
  fprintf(stderr, "\nno initializer \"%s\"\n", name);
  return NULL;
}

static const mlc_onnx_node *find_node(const mlc_onnx_graph *g, const char *name) {
  for (int i = 0; i < g->nnodes; i++)
    if (strcmp(g->nodes[i].name, name) == 0) return &g->nodes[i];
  CU_FAIL("node not found");
  return NULL;
}

static const mlc_onnx_value_info *find_vi(const mlc_onnx_value_info *v, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(v[i].name, name) == 0) return &v[i];
  CU_FAIL("value info not found");
  return NULL;
}

/* Checks dtype, dims and alignment of |t|; returns its data. */
static const void *check_tensor(const mlc_onnx_tensor *t, mlc_dtype dt, int rank,
                                const int64_t *dims) {
  if (!t) return NULL;
  CU_ASSERT_EQUAL(t->dtype, dt);
  CU_ASSERT_EQUAL_FATAL(t->rank, rank);
  int64_t numel = 1;
  for (int i = 0; i < rank; i++) {
    CU_ASSERT_EQUAL(t->dims[i], dims[i]);
    numel *= dims[i];
  }
  CU_ASSERT_EQUAL(t->numel, numel);
  if (dt != MLC_DTYPE_STRING) {
    CU_ASSERT_EQUAL(t->nbytes, (size_t)numel * mlc_dtype_size(dt));
    if (numel) {
      CU_ASSERT_PTR_NOT_NULL_FATAL(t->data);
      CU_ASSERT_EQUAL((uintptr_t)t->data % 64, 0);
    }
  }
  return t->data;
}

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

/* ---- valid models ---------------------------------------------------------------- */

static void test_initializers(void) {
  mlc_onnx_model *m = load_ok("ok_initializers.onnx");
  if (!m) return;
  const mlc_onnx_model_info *info = mlc_onnx_model_get_info(m);
  CU_ASSERT_EQUAL(info->ir_version, 8);
  CU_ASSERT_STRING_EQUAL(info->producer_name, "make_corpus");
  CU_ASSERT_STRING_EQUAL(info->producer_version, "1.0");
  CU_ASSERT_STRING_EQUAL(info->doc_string, "loader fixture");
  CU_ASSERT_EQUAL(info->nopsets, 2);
  CU_ASSERT_EQUAL(mlc_onnx_model_opset(m, ""), 13);
  CU_ASSERT_EQUAL(mlc_onnx_model_opset(m, "ai.onnx"), 13);
  CU_ASSERT_EQUAL(mlc_onnx_model_opset(m, NULL), 13);
  CU_ASSERT_EQUAL(mlc_onnx_model_opset(m, "test.domain"), 2);
  CU_ASSERT_EQUAL(mlc_onnx_model_opset(m, "other"), 0);
  const mlc_onnx_graph *g = info->graph;
  CU_ASSERT_STRING_EQUAL(g->name, "main");
  CU_ASSERT_EQUAL(g->ninitializers, 22);

  const float *f = check_tensor(find_init(g, "w_f32_raw"), MLC_DTYPE_F32, 2, DIMS(2, 3));
  for (int i = 0; f && i < 6; i++) CU_ASSERT_EQUAL(f[i], i * 0.5f - 1.0f);
  f = check_tensor(find_init(g, "w_f32_typed"), MLC_DTYPE_F32, 1, DIMS(3));
  if (f) CU_ASSERT(f[0] == 1.5f && f[1] == -2.25f && f[2] == 3.0f);
  const double *d = check_tensor(find_init(g, "w_f64"), MLC_DTYPE_F64, 1, DIMS(2));
  if (d) CU_ASSERT(d[0] == 0.1 && d[1] == -1e300);
  d = check_tensor(find_init(g, "w_f64_raw"), MLC_DTYPE_F64, 2, DIMS(2, 2));
  for (int i = 0; d && i < 4; i++) CU_ASSERT_EQUAL(d[i], i / 3.0);
  const int64_t *i64 = check_tensor(find_init(g, "w_i64"), MLC_DTYPE_I64, 1, DIMS(4));
  if (i64)
    CU_ASSERT(i64[0] == -(INT64_C(1) << 62) && i64[1] == -1 && i64[2] == 0 &&
              i64[3] == (INT64_C(1) << 62) + 5);
  const int32_t *i32 = check_tensor(find_init(g, "w_i32_raw"), MLC_DTYPE_I32, 2, DIMS(2, 2));
  if (i32) CU_ASSERT(i32[0] == -7 && i32[1] == 8 && i32[2] == INT32_MAX && i32[3] == INT32_MIN);
  const int8_t *i8 = check_tensor(find_init(g, "w_i8"), MLC_DTYPE_I8, 1, DIMS(4));
  if (i8) CU_ASSERT(i8[0] == -128 && i8[1] == -1 && i8[2] == 0 && i8[3] == 127);
  const uint8_t *u8 = check_tensor(find_init(g, "w_u8_raw"), MLC_DTYPE_U8, 1, DIMS(5));
  if (u8) CU_ASSERT(u8[0] == 0 && u8[1] == 1 && u8[2] == 127 && u8[3] == 128 && u8[4] == 255);
  const int16_t *i16 = check_tensor(find_init(g, "w_i16_raw"), MLC_DTYPE_I16, 1, DIMS(3));
  if (i16) CU_ASSERT(i16[0] == -32768 && i16[1] == 5 && i16[2] == 32767);
  const uint16_t *u16 = check_tensor(find_init(g, "w_u16"), MLC_DTYPE_U16, 1, DIMS(3));
  if (u16) CU_ASSERT(u16[0] == 0 && u16[1] == 1 && u16[2] == 65535);
  const uint8_t *b = check_tensor(find_init(g, "w_bool"), MLC_DTYPE_BOOL, 1, DIMS(4));
  if (b) CU_ASSERT(b[0] == 1 && b[1] == 0 && b[2] == 0 && b[3] == 1);
  b = check_tensor(find_init(g, "w_bool_raw"), MLC_DTYPE_BOOL, 1, DIMS(3));
  if (b) CU_ASSERT(b[0] == 1 && b[1] == 0 && b[2] == 1);
  const uint16_t *h = check_tensor(find_init(g, "w_f16"), MLC_DTYPE_F16, 1, DIMS(3));
  if (h) CU_ASSERT(h[0] == 0x3c00 && h[1] == 0xc000 && h[2] == 0x3800);
  h = check_tensor(find_init(g, "w_f16_raw"), MLC_DTYPE_F16, 1, DIMS(2));
  if (h) CU_ASSERT(h[0] == 0x3c00 && h[1] == 0xc000);
  h = check_tensor(find_init(g, "w_bf16"), MLC_DTYPE_BF16, 1, DIMS(2));
  if (h) CU_ASSERT(h[0] == 0x3f80 && h[1] == 0xc040);
  const uint32_t *u32 = check_tensor(find_init(g, "w_u32"), MLC_DTYPE_U32, 1, DIMS(2));
  if (u32) CU_ASSERT(u32[0] == 0 && u32[1] == UINT32_MAX);
  const uint64_t *u64 = check_tensor(find_init(g, "w_u64_raw"), MLC_DTYPE_U64, 1, DIMS(2));
  if (u64) CU_ASSERT(u64[0] == 1 && u64[1] == UINT64_MAX);
  u64 = check_tensor(find_init(g, "w_u64"), MLC_DTYPE_U64, 1, DIMS(1));
  if (u64) CU_ASSERT(u64[0] == (UINT64_C(1) << 63) + 1);
  const int64_t *sc = check_tensor(find_init(g, "w_scalar"), MLC_DTYPE_I64, 0, NULL);
  if (sc) CU_ASSERT_EQUAL(sc[0], 42);
  f = check_tensor(find_init(g, "w_big"), MLC_DTYPE_F32, 1, DIMS(64));
  for (int i = 0; f && i < 64; i++) CU_ASSERT_EQUAL(f[i], i * 0.25f);

  const mlc_onnx_tensor *t = find_init(g, "w_empty");
  check_tensor(t, MLC_DTYPE_F32, 2, DIMS(0, 3));
  if (t) CU_ASSERT(t->numel == 0 && t->nbytes == 0 && t->data == NULL);
  t = find_init(g, "w_str");
  check_tensor(t, MLC_DTYPE_STRING, 1, DIMS(3));
  if (t) {
    CU_ASSERT_EQUAL(t->onnx_type, 8);
    CU_ASSERT_PTR_NULL(t->data);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t->strings);
    CU_ASSERT_STRING_EQUAL(t->strings[0], "a");
    CU_ASSERT_EQUAL(t->string_lens[0], 1);
    CU_ASSERT_STRING_EQUAL(t->strings[1], "");
    CU_ASSERT_EQUAL(t->string_lens[1], 0);
    CU_ASSERT_EQUAL(t->string_lens[2], 3);
    CU_ASSERT(memcmp(t->strings[2], "x\0y", 4) == 0);
  }

  /* graph inputs, outputs, value infos */
  CU_ASSERT_EQUAL_FATAL(g->ninputs, 1);
  CU_ASSERT_STRING_EQUAL(g->inputs[0].name, "X");
  CU_ASSERT_EQUAL(g->inputs[0].kind, MLC_ONNX_VALUE_TENSOR);
  CU_ASSERT_EQUAL(g->inputs[0].dtype, MLC_DTYPE_F32);
  CU_ASSERT_EQUAL(g->inputs[0].onnx_type, 1);
  CU_ASSERT(g->inputs[0].has_shape && g->inputs[0].rank == 2);
  CU_ASSERT(g->inputs[0].dims[0].value == 2 && g->inputs[0].dims[1].value == 3);
  CU_ASSERT_PTR_NULL(g->inputs[0].dims[0].param);
  CU_ASSERT_EQUAL(g->noutputs, 1);
  CU_ASSERT_EQUAL_FATAL(g->nvalue_infos, 1);
  CU_ASSERT_STRING_EQUAL(g->value_infos[0].name, "Z");
  CU_ASSERT_EQUAL(g->value_infos[0].has_shape, 0);

  /* nodes and attributes */
  CU_ASSERT_EQUAL_FATAL(g->nnodes, 2);
  const mlc_onnx_node *add = &g->nodes[0];
  CU_ASSERT_STRING_EQUAL(add->op_type, "Add");
  CU_ASSERT_STRING_EQUAL(add->domain, "");
  CU_ASSERT_EQUAL(add->index, 0);
  CU_ASSERT_EQUAL_FATAL(add->ninputs, 2);
  CU_ASSERT_STRING_EQUAL(add->inputs[1], "w_f32_raw");
  CU_ASSERT_EQUAL(add->noutputs, 1);
  CU_ASSERT_EQUAL(add->nattrs, 0);
  CU_ASSERT_PTR_NULL(mlc_onnx_node_attr(add, "alpha"));
  const mlc_onnx_node *n = &g->nodes[1];
  CU_ASSERT_STRING_EQUAL(n->name, "attrs0");
  CU_ASSERT_STRING_EQUAL(n->domain, "test.domain");
  CU_ASSERT_EQUAL(n->index, 1);
  CU_ASSERT_EQUAL(n->nattrs, 10);
  const mlc_onnx_attr *a = mlc_onnx_node_attr(n, "alpha");
  CU_ASSERT(a && a->type == MLC_ONNX_ATTR_FLOAT && a->f == 0.25f);
  a = mlc_onnx_node_attr(n, "axis");
  CU_ASSERT(a && a->type == MLC_ONNX_ATTR_INT && a->i == -2);
  a = mlc_onnx_node_attr(n, "mode");
  CU_ASSERT(a && a->type == MLC_ONNX_ATTR_STRING && strcmp(a->s, "nearest") == 0 &&
            a->s_len == 7);
  a = mlc_onnx_node_attr(n, "scales");
  CU_ASSERT(a && a->type == MLC_ONNX_ATTR_FLOATS && a->n == 2 && a->floats[0] == 1.0f &&
            a->floats[1] == 2.5f);
  a = mlc_onnx_node_attr(n, "pads");
  CU_ASSERT(a && a->type == MLC_ONNX_ATTR_INTS && a->n == 3 && a->ints[0] == 0 &&
            a->ints[1] == 1 && a->ints[2] == -1);
  a = mlc_onnx_node_attr(n, "names");
  CU_ASSERT(a && a->type == MLC_ONNX_ATTR_STRINGS && a->n == 2 &&
            strcmp(a->strings[0], "p") == 0 && strcmp(a->strings[1], "qq") == 0);
  a = mlc_onnx_node_attr(n, "value");
  CU_ASSERT_FATAL(a && a->type == MLC_ONNX_ATTR_TENSOR && a->t);
  CU_ASSERT_STRING_EQUAL(a->t->name, "tv");
  i64 = check_tensor(a->t, MLC_DTYPE_I64, 1, DIMS(2));
  if (i64) CU_ASSERT(i64[0] == 3 && i64[1] == 4);
  a = mlc_onnx_node_attr(n, "vals");
  CU_ASSERT_FATAL(a && a->type == MLC_ONNX_ATTR_TENSORS && a->n == 2);
  f = check_tensor(&a->tensors[0], MLC_DTYPE_F32, 1, DIMS(1));
  if (f) CU_ASSERT_EQUAL(f[0], 7.0f);
  i32 = check_tensor(&a->tensors[1], MLC_DTYPE_I32, 1, DIMS(2));
  if (i32) CU_ASSERT(i32[0] == 1 && i32[1] == 2);
  a = mlc_onnx_node_attr(n, "old_i"); /* no type field: inferred */
  CU_ASSERT(a && a->type == MLC_ONNX_ATTR_INT && a->i == 5);
  a = mlc_onnx_node_attr(n, "empty_ints");
  CU_ASSERT(a && a->type == MLC_ONNX_ATTR_INTS && a->n == 0);
  mlc_onnx_model_destroy(m);
}

static void check_external_values(const mlc_onnx_model *m) {
  const mlc_onnx_graph *g = mlc_onnx_model_get_info(m)->graph;
  const float *f = check_tensor(find_init(g, "ext_a"), MLC_DTYPE_F32, 2, DIMS(2, 2));
  if (f) CU_ASSERT(f[0] == 1 && f[1] == 2 && f[2] == 3 && f[3] == 4);
  const int64_t *i = check_tensor(find_init(g, "ext_b"), MLC_DTYPE_I64, 1, DIMS(3));
  if (i) CU_ASSERT(i[0] == 10 && i[1] == 20 && i[2] == 30);
  f = check_tensor(find_init(g, "ext_c"), MLC_DTYPE_F32, 1, DIMS(2));
  if (f) CU_ASSERT(f[0] == 5.5f && f[1] == 6.5f);
  const mlc_onnx_attr *a = mlc_onnx_node_attr(find_node(g, "const0"), "value");
  CU_ASSERT_FATAL(a && a->type == MLC_ONNX_ATTR_TENSOR);
  const int32_t *k = check_tensor(a->t, MLC_DTYPE_I32, 1, DIMS(2));
  if (k) CU_ASSERT(k[0] == 7 && k[1] == -7);
}

static void test_external(void) {
  mlc_onnx_model *m = load_ok("ok_external.onnx");
  if (m) check_external_values(m);
  mlc_onnx_model_destroy(m);

  /* From memory: with the folder it works, without one it is an error. */
  char *path = corpus_path("ok_external.onnx");
  size_t size;
  char *data = mlc_test_read_file(path, &size);
  CU_ASSERT_PTR_NOT_NULL_FATAL(data);
  m = NULL;
  mlc_status s = mlc_onnx_load_bytes(data, size, mlc_test_src_path("tests/malformed"), &m);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  if (m) check_external_values(m);
  mlc_onnx_model_destroy(m);
  m = (mlc_onnx_model *)1;
  expect_error(mlc_onnx_load_bytes(data, size, NULL, &m), MLC_INVALID_ARGUMENT,
               "initializer \"ext_a\": data is in external file \"ok_external.bin\"", "no folder");
  CU_ASSERT_PTR_NULL(m);
  free(data);
  free(path);
}

static void test_subgraph(void) {
  mlc_onnx_model *m = load_ok("ok_subgraph.onnx");
  if (!m) return;
  const mlc_onnx_graph *g = mlc_onnx_model_get_info(m)->graph;
  const mlc_onnx_node *if0 = find_node(g, "if0");
  CU_ASSERT_FATAL(if0 != NULL);
  const mlc_onnx_attr *a = mlc_onnx_node_attr(if0, "then_branch");
  CU_ASSERT_FATAL(a && a->type == MLC_ONNX_ATTR_GRAPH && a->g && a->n == 1);
  const mlc_onnx_graph *then_g = a->g;
  CU_ASSERT_STRING_EQUAL(then_g->name, "then");
  const float *f = check_tensor(find_init(then_g, "then_w"), MLC_DTYPE_F32, 1, DIMS(2));
  if (f) CU_ASSERT(f[0] == 1 && f[1] == 2);
  CU_ASSERT_EQUAL_FATAL(then_g->nnodes, 2);
  CU_ASSERT_EQUAL(then_g->noutputs, 1);
  const mlc_onnx_node *if1 = find_node(then_g, "if1");
  CU_ASSERT_FATAL(if1 != NULL);
  a = mlc_onnx_node_attr(if1, "then_branch");
  CU_ASSERT_FATAL(a && a->g);
  CU_ASSERT_STRING_EQUAL(a->g->name, "then2");
  f = check_tensor(find_init(a->g, "then2_w"), MLC_DTYPE_F32, 1, DIMS(2));
  if (f) CU_ASSERT(f[0] == 5 && f[1] == 6);
  a = mlc_onnx_node_attr(if0, "else_branch");
  CU_ASSERT_FATAL(a && a->g);
  f = check_tensor(find_init(a->g, "else_w"), MLC_DTYPE_F32, 1, DIMS(2));
  if (f) CU_ASSERT(f[0] == 3 && f[1] == 4);

  const mlc_onnx_node *multi = find_node(g, "multi0");
  CU_ASSERT_FATAL(multi != NULL);
  a = mlc_onnx_node_attr(multi, "bodies");
  CU_ASSERT_FATAL(a && a->type == MLC_ONNX_ATTR_GRAPHS && a->n == 2 && a->graphs);
  CU_ASSERT_STRING_EQUAL(a->graphs[0]->name, "b0");
  CU_ASSERT_STRING_EQUAL(a->graphs[1]->name, "b1");
  f = check_tensor(find_init(a->graphs[1], "b1_w"), MLC_DTYPE_F32, 1, DIMS(2));
  if (f) CU_ASSERT(f[0] == 11 && f[1] == 12);
  mlc_onnx_model_destroy(m);
}

static void test_dim_param(void) {
  mlc_onnx_model *m = load_ok("ok_dim_param.onnx");
  if (!m) return;
  CU_ASSERT_EQUAL(mlc_onnx_model_opset(m, ""), 15);
  CU_ASSERT_EQUAL(mlc_onnx_model_opset(m, "ai.onnx"), 15);
  const mlc_onnx_graph *g = mlc_onnx_model_get_info(m)->graph;
  const mlc_onnx_value_info *x = find_vi(g->inputs, g->ninputs, "X");
  CU_ASSERT_FATAL(x && x->has_shape && x->rank == 3);
  CU_ASSERT_EQUAL(x->kind, MLC_ONNX_VALUE_TENSOR);
  CU_ASSERT(x->dims[0].value == -1 && x->dims[0].param && strcmp(x->dims[0].param, "N") == 0);
  CU_ASSERT(x->dims[1].value == 3 && x->dims[1].param == NULL);
  CU_ASSERT(x->dims[2].value == -1 && x->dims[2].param == NULL);
  const mlc_onnx_value_info *v = find_vi(g->inputs, g->ninputs, "S");
  CU_ASSERT_FATAL(v != NULL);
  CU_ASSERT(v->kind == MLC_ONNX_VALUE_SEQUENCE && v->dtype == MLC_DTYPE_I64 && v->onnx_type == 7);
  CU_ASSERT(v->has_shape && v->rank == 1 && v->dims[0].value == -1 &&
            strcmp(v->dims[0].param, "L") == 0);
  v = find_vi(g->inputs, g->ninputs, "O");
  CU_ASSERT_FATAL(v != NULL);
  CU_ASSERT(v->kind == MLC_ONNX_VALUE_OPTIONAL && v->dtype == MLC_DTYPE_F32 && v->rank == 1 &&
            v->dims[0].value == 2);
  v = find_vi(g->inputs, g->ninputs, "M");
  CU_ASSERT_FATAL(v != NULL);
  CU_ASSERT(v->kind == MLC_ONNX_VALUE_MAP && v->dtype == MLC_DTYPE_F64 && v->has_shape &&
            v->rank == 0);
  v = find_vi(g->value_infos, g->nvalue_infos, "SP");
  CU_ASSERT_FATAL(v != NULL);
  CU_ASSERT(v->kind == MLC_ONNX_VALUE_SPARSE_TENSOR && v->dtype == MLC_DTYPE_F32 &&
            v->rank == 2 && v->dims[1].value == 4);
  v = find_vi(g->value_infos, g->nvalue_infos, "U");
  CU_ASSERT_FATAL(v != NULL);
  CU_ASSERT(v->kind == MLC_ONNX_VALUE_UNKNOWN && v->dtype == MLC_DTYPE_INVALID &&
            v->onnx_type == 0 && !v->has_shape);
  v = find_vi(g->value_infos, g->nvalue_infos, "NS");
  CU_ASSERT_FATAL(v != NULL);
  CU_ASSERT(v->kind == MLC_ONNX_VALUE_TENSOR && v->dtype == MLC_DTYPE_I32 && !v->has_shape);
  v = find_vi(g->outputs, g->noutputs, "Y");
  CU_ASSERT(v && v->rank == 3 && v->dims[0].param && strcmp(v->dims[0].param, "N") == 0);
  mlc_onnx_model_destroy(m);
}

/* 64 levels of GRAPH attributes below the main graph: the deepest accepted. */
static void test_deep64(void) {
  mlc_onnx_model *m = load_ok("ok_deep64.onnx");
  if (!m) return;
  const mlc_onnx_graph *g = mlc_onnx_model_get_info(m)->graph;
  int depth = 0;
  for (;;) {
    CU_ASSERT_EQUAL_FATAL(g->nnodes, 1);
    const mlc_onnx_attr *a = mlc_onnx_node_attr(&g->nodes[0], "body");
    if (!a) break;
    CU_ASSERT_FATAL(a->type == MLC_ONNX_ATTR_GRAPH && a->g);
    g = a->g;
    depth++;
  }
  CU_ASSERT_EQUAL(depth, 64);
  CU_ASSERT_STRING_EQUAL(g->name, "g64");
  CU_ASSERT_STRING_EQUAL(g->nodes[0].op_type, "Identity");
  mlc_onnx_model_destroy(m);
}

/* Graph-level problems are the frontend's: the loader accepts these. */
static void test_frontend_fixtures(void) {
  const char *names[] = {"cycle.onnx", "missing_input.onnx", "unknown_op.onnx"};
  for (int i = 0; i < 3; i++) {
    mlc_onnx_model *m = load_ok(names[i]);
    if (m) CU_ASSERT(mlc_onnx_model_get_info(m)->graph->nnodes >= 1);
    mlc_onnx_model_destroy(m);
  }
}

static void test_api_edges(void) {
  mlc_onnx_model *m = (mlc_onnx_model *)1;
  expect_error(mlc_onnx_load_file(NULL, &m), MLC_INVALID_ARGUMENT, "no path", "NULL path");
  CU_ASSERT_PTR_NULL(m);
  expect_error(mlc_onnx_load_file("", &m), MLC_INVALID_ARGUMENT, "no path", "empty path");
  expect_error(mlc_onnx_load_bytes(NULL, 0, NULL, &m), MLC_INVALID_ARGUMENT, "has no graph",
               "empty bytes");
  expect_error(mlc_onnx_load_bytes(NULL, 5, NULL, &m), MLC_INVALID_ARGUMENT, "data is NULL",
               "NULL bytes");
  mlc_onnx_model_destroy(NULL);
  mlc_onnx_tensor_file_free(NULL);
  CU_ASSERT_PTR_NULL(mlc_onnx_model_get_info(NULL));
  CU_ASSERT_EQUAL(mlc_onnx_model_opset(NULL, ""), 0);
  CU_ASSERT_PTR_NULL(mlc_onnx_node_attr(NULL, "x"));

  CU_ASSERT_EQUAL(mlc_onnx_dtype(1), MLC_DTYPE_F32);
  CU_ASSERT_EQUAL(mlc_onnx_dtype(16), MLC_DTYPE_BF16);
  CU_ASSERT_EQUAL(mlc_onnx_dtype(8), MLC_DTYPE_STRING);
  CU_ASSERT_EQUAL(mlc_onnx_dtype(14), MLC_DTYPE_INVALID);
  CU_ASSERT_EQUAL(mlc_onnx_dtype(0), MLC_DTYPE_INVALID);
  CU_ASSERT_EQUAL(mlc_onnx_dtype(-3), MLC_DTYPE_INVALID);
  CU_ASSERT_EQUAL(mlc_onnx_dtype(1000), MLC_DTYPE_INVALID);
  CU_ASSERT_STRING_EQUAL(mlc_onnx_dtype_name(1), "FLOAT");
  CU_ASSERT_STRING_EQUAL(mlc_onnx_dtype_name(15), "COMPLEX128");
  CU_ASSERT_STRING_EQUAL(mlc_onnx_dtype_name(19), "FLOAT8E5M2");
  CU_ASSERT_STRING_EQUAL(mlc_onnx_dtype_name(1000), "UNKNOWN");
  CU_ASSERT_STRING_EQUAL(mlc_onnx_dtype_name(-1), "UNKNOWN");
}

/* ---- tensor files ------------------------------------------------------------------ */

static void test_tensor_files(void) {
  mlc_onnx_tensor_file *h = NULL;
  const mlc_onnx_tensor *t = NULL;
  char *path = corpus_path("ok_tensor.pb");
  mlc_status s = mlc_onnx_load_tensor_file(path, &h, &t);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  free(path);
  if (t) {
    CU_ASSERT_STRING_EQUAL(t->name, "t0");
    const float *f = check_tensor(t, MLC_DTYPE_F32, 2, DIMS(2, 3));
    for (int i = 0; f && i < 6; i++) CU_ASSERT_EQUAL(f[i], i * 1.5f);
  }
  mlc_onnx_tensor_file_free(h);

  path = corpus_path("ok_tensor_i64.pb");
  s = mlc_onnx_load_tensor_file(path, &h, &t);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  free(path);
  if (t) {
    const int64_t *v = check_tensor(t, MLC_DTYPE_I64, 1, DIMS(2));
    if (v) CU_ASSERT(v[0] == 5 && v[1] == -6);
  }
  mlc_onnx_tensor_file_free(h);

  path = corpus_path("ok_tensor_str.pb");
  s = mlc_onnx_load_tensor_file(path, &h, &t);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  free(path);
  if (t) {
    check_tensor(t, MLC_DTYPE_STRING, 1, DIMS(2));
    CU_ASSERT_STRING_EQUAL(t->strings[0], "hello");
    CU_ASSERT_STRING_EQUAL(t->strings[1], "w\xc3\xb6rld");
    CU_ASSERT_EQUAL(t->string_lens[1], 6);
  }
  mlc_onnx_tensor_file_free(h);

  path = corpus_path("bad_varint.onnx");
  expect_error(mlc_onnx_load_tensor_file(path, &h, &t), MLC_INVALID_ARGUMENT,
               "not a valid TensorProto: protobuf parse failed", "bad tensor file");
  CU_ASSERT(h == NULL && t == NULL);
  free(path);
  path = corpus_path("no_such.pb");
  expect_error(mlc_onnx_load_tensor_file(path, &h, &t), MLC_NOT_FOUND, "not found",
               "missing tensor file");
  free(path);
}

/* The same tensor file from memory: the same view; messages name the given
** name; external data needs a folder. */
static void test_tensor_bytes(void) {
  char *path = corpus_path("ok_tensor.pb");
  size_t size;
  char *data = mlc_test_read_file(path, &size);
  free(path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(data);
  mlc_onnx_tensor_file *h = NULL;
  const mlc_onnx_tensor *t = NULL;
  mlc_status s = mlc_onnx_load_tensor_bytes(data, size, NULL, "mem.pb", &h, &t);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  if (t) {
    CU_ASSERT_STRING_EQUAL(t->name, "t0");
    const float *f = check_tensor(t, MLC_DTYPE_F32, 2, DIMS(2, 3));
    for (int i = 0; f && i < 6; i++) CU_ASSERT_EQUAL(f[i], i * 1.5f);
  }
  mlc_onnx_tensor_file_free(h);
  /* Cut short: an error that names "mem.pb", nothing handed out. */
  h = (mlc_onnx_tensor_file *)1;
  expect_error(mlc_onnx_load_tensor_bytes(data, size - 3, NULL, "mem.pb", &h, &t),
               MLC_INVALID_ARGUMENT, "mem.pb", "truncated tensor bytes");
  CU_ASSERT(h == NULL && t == NULL);
  free(data);
  expect_error(mlc_onnx_load_tensor_bytes(NULL, 4, NULL, "mem.pb", &h, &t), MLC_INVALID_ARGUMENT,
               "data is NULL", "NULL tensor bytes");
}

/* ---- the malformed corpus -------------------------------------------------------------- */

static void test_manifest(void) {
  char *path = corpus_path("MANIFEST");
  char *text = mlc_test_read_file(path, NULL);
  free(path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  int cases = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#' || !line[0]) continue;
    char *sp1 = strchr(line, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    CU_ASSERT_FATAL(sp2 != NULL);
    *sp1 = *sp2 = 0;
    const char *file = line, *code_name = sp1 + 1, *sub = sp2 + 1;
    mlc_code code = MLC_OK;
    for (int c = MLC_INVALID_ARGUMENT; c <= MLC_IO_ERROR; c++)
      if (strcmp(mlc_code_name((mlc_code)c), code_name) == 0) code = (mlc_code)c;
    CU_ASSERT(code != MLC_OK);
    char *fp = corpus_path(file);
    mlc_onnx_model *m = (mlc_onnx_model *)1;
    expect_error(mlc_onnx_load_file(fp, &m), code, sub, file);
    CU_ASSERT_PTR_NULL(m);
    /* The same bytes from memory, resolving external data in the same folder. */
    size_t size;
    char *data = mlc_test_read_file(fp, &size);
    CU_ASSERT_PTR_NOT_NULL(data);
    if (data)
      expect_error(mlc_onnx_load_bytes(data, size, mlc_test_src_path("tests/malformed"), &m),
                   code, sub, file);
    free(data);
    free(fp);
    cases++;
  }
  free(text);
  CU_ASSERT(cases >= 40);
}

static void test_symlink_escape(void) {
  char *root = mlc_test_tmpdir();
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  char *a = join(root, "A"), *bdir = join(root, "B");
  CU_ASSERT_FATAL(mkdir(a, 0700) == 0 && mkdir(bdir, 0700) == 0);
  char *src = corpus_path("ext_symlink.onnx");
  size_t size;
  char *model = mlc_test_read_file(src, &size);
  CU_ASSERT_PTR_NOT_NULL_FATAL(model);
  char *mpath = join(a, "model.onnx");
  CU_ASSERT_FATAL(mlc_test_write_file(mpath, model, size) == 0);
  const float vals[4] = {1, 2, 3, 4};
  char *outside = join(bdir, "w.bin");
  CU_ASSERT_FATAL(mlc_test_write_file(outside, vals, sizeof vals) == 0);
  char *link = join(a, "link");

  /* A/link -> ../B: the data file resolves outside A. */
  CU_ASSERT_FATAL(symlink("../B", link) == 0);
  mlc_onnx_model *m = NULL;
  expect_error(mlc_onnx_load_file(mpath, &m), MLC_INVALID_ARGUMENT,
               "initializer \"w\": external data location \"link/w.bin\" resolves outside the "
               "model's folder",
               "symlink escape");
  /* The same through an absolute link target. */
  unlink(link);
  CU_ASSERT_FATAL(symlink(bdir, link) == 0);
  expect_error(mlc_onnx_load_file(mpath, &m), MLC_INVALID_ARGUMENT, "resolves outside",
               "absolute symlink escape");

  /* A/link -> inner (inside A): accepted. */
  unlink(link);
  char *inner = join(a, "inner");
  CU_ASSERT_FATAL(mkdir(inner, 0700) == 0);
  char *inside = join(inner, "w.bin");
  CU_ASSERT_FATAL(mlc_test_write_file(inside, vals, sizeof vals) == 0);
  CU_ASSERT_FATAL(symlink("inner", link) == 0);
  mlc_status s = mlc_onnx_load_file(mpath, &m);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  if (m) {
    const float *f = check_tensor(&mlc_onnx_model_get_info(m)->graph->initializers[0],
                                  MLC_DTYPE_F32, 2, DIMS(2, 2));
    if (f) CU_ASSERT(f[0] == 1 && f[3] == 4);
  }
  mlc_onnx_model_destroy(m);
  /* Loaded through a relative path: the folder is the model's, not the cwd. */
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) && chdir(root) == 0) {
    m = NULL;
    s = mlc_onnx_load_file("A/model.onnx", &m);
    CU_ASSERT_PTR_NULL(s);
    mlc_status_free(s);
    mlc_onnx_model_destroy(m);
    CU_ASSERT(chdir(cwd) == 0);
  }

  unlink(link);
  unlink(inside);
  rmdir(inner);
  unlink(outside);
  unlink(mpath);
  rmdir(a);
  rmdir(bdir);
  rmdir(root);
  free(inside);
  free(inner);
  free(link);
  free(outside);
  free(mpath);
  free(model);
  free(src);
  free(a);
  free(bdir);
  free(root);
}

static void test_not_regular(void) {
  mlc_onnx_model *m = NULL;
  char *dir = corpus_path("");
  expect_error(mlc_onnx_load_file(dir, &m), MLC_INVALID_ARGUMENT, "is not a regular file",
               "directory");
  free(dir);
  char *missing = corpus_path("no_such_model.onnx");
  expect_error(mlc_onnx_load_file(missing, &m), MLC_NOT_FOUND, "not found", "missing");
  free(missing);

  char *root = mlc_test_tmpdir();
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  char *fifo = join(root, "fifo.onnx");
  if (mkfifo(fifo, 0600) == 0) { /* must not block waiting for a writer */
    expect_error(mlc_onnx_load_file(fifo, &m), MLC_INVALID_ARGUMENT, "is not a regular file",
                 "fifo");
    unlink(fifo);
  }
  /* A sparse file just over 2 GiB. */
  char *big = join(root, "big.onnx");
  int fd = open(big, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd >= 0) {
    if (ftruncate(fd, ((off_t)2 << 30) + 1) == 0)
      expect_error(mlc_onnx_load_file(big, &m), MLC_INVALID_ARGUMENT,
                   "is 2147483649 bytes; protobuf files are limited to 2 GiB", "big file");
    close(fd);
    unlink(big);
  }
  rmdir(root);
  free(big);
  free(fifo);
  free(root);
}

/* ---- fuzz-ish: truncations and byte flips of the valid fixtures ------------------------ */

static uint32_t lcg(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

/* Loads |size| bytes; success or any status is fine, a crash or leak is not. */
static void load_any(const char *data, size_t size, int *ok, int *failed) {
  mlc_onnx_model *m = NULL;
  mlc_status s = mlc_onnx_load_bytes(data, size, mlc_test_src_path("tests/malformed"), &m);
  if (s) {
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT(mlc_status_code(s) != MLC_OK && mlc_status_message(s)[0] != 0);
    mlc_status_free(s);
    (*failed)++;
  } else {
    CU_ASSERT_PTR_NOT_NULL(m);
    const mlc_onnx_model_info *info = mlc_onnx_model_get_info(m);
    CU_ASSERT(info && info->graph);
    mlc_onnx_model_destroy(m);
    (*ok)++;
  }
}

static void test_fuzz(void) {
  const char *fixtures[] = {"ok_initializers.onnx", "ok_subgraph.onnx", "ok_external.onnx",
                            "ok_dim_param.onnx"};
  uint32_t seed = 12345;
  for (int k = 0; k < 4; k++) {
    char *path = corpus_path(fixtures[k]);
    size_t size;
    char *orig = mlc_test_read_file(path, &size);
    free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(orig);
    char *buf = malloc(size + 1);
    int ok = 0, failed = 0;
    /* Every truncation. */
    for (size_t n = 0; n < size; n++) {
      memcpy(buf, orig, n);
      load_any(buf, n, &ok, &failed);
    }
    /* Byte flips at a few hundred positions: xor, 0x00, 0xff and 0x80. */
    for (int i = 0; i < 300; i++) {
      size_t pos = lcg(&seed) % size;
      const unsigned char repl[4] = {(unsigned char)(orig[pos] ^ (1 + lcg(&seed) % 255)), 0x00,
                                     0xff, 0x80};
      for (int r = 0; r < 4; r++) {
        memcpy(buf, orig, size);
        buf[pos] = (char)repl[r];
        load_any(buf, size, &ok, &failed);
      }
    }
    /* The untouched bytes load. */
    int ok0 = ok;
    load_any(orig, size, &ok, &failed);
    CU_ASSERT_EQUAL(ok, ok0 + 1);
    CU_ASSERT(failed > 0);
    free(buf);
    free(orig);
  }
}

static void register_all(void) {
  static const CU_TestInfo model_tests[] = {
      {"initializers", test_initializers}, {"external", test_external},
      {"subgraph", test_subgraph},         {"deep64", test_deep64},
      {"dim_param", test_dim_param},
      {"frontend_fixtures", test_frontend_fixtures}, {"api_edges", test_api_edges},
      {NULL, NULL}};
  static const CU_TestInfo tensor_tests[] = {
      {"tensor_files", test_tensor_files}, {"tensor_bytes", test_tensor_bytes}, {NULL, NULL}};
  static const CU_TestInfo malformed_tests[] = {{"manifest", test_manifest},
                                                {"symlink_escape", test_symlink_escape},
                                                {"not_regular", test_not_regular},
                                                {"fuzz", test_fuzz},
                                                {NULL, NULL}};
  mlc_test_add_suite("onnx_model", model_tests);
  mlc_test_add_suite("onnx_tensor", tensor_tests);
  mlc_test_add_suite("onnx_malformed", malformed_tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_all, NULL};
  return mlc_test_main("test_onnx", fns);
}
