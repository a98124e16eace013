/*
** test_tir_lower.c: the lowering passes of lower/tir_lower.h.
**
** Each case builds a function with the TIR builders, prints it before and
** after one pass (or the whole pipeline) and compares the text with
** tests/golden/tir_lower/NAME.out (rewritten with MLC_UPDATE_GOLDEN=1);
** the lowered functions are then compiled, loaded and run on random data
** against a C reference.  The refusals (code generation of a block, passes
** run out of order, malformed blocks and views) have their errors checked.
** The legalized kernels of every op go through lowering in the kernel
** harness (test_legalize and friends), which is the wide numerical check.
*/
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "codegen/target.h"
#include "lower/tir.h"
#include "lower/tir_lower.h"
#include "runtime/rt_abi.h"
#include "tests/testutil.h"

#define OK(expr) MLC_TEST_OK(expr)
#define EXPECT_ERR(expr, code, ...) MLC_TEST_ERR((expr), (code), __VA_ARGS__)

#define I64(v) mlc_tir_i64(m, (v))
#define REF(v) mlc_tir_ref(m, (v))
#define F32(v) mlc_tir_float(m, MLC_DTYPE_F32, (v))
#define IDX(...) (int)(sizeof((mlc_tir_expr *[]){__VA_ARGS__}) / sizeof(mlc_tir_expr *)), (mlc_tir_expr *[]){__VA_ARGS__}
#define LD(b, ...) mlc_tir_load(m, (b), IDX(__VA_ARGS__))
#define ST(b, v, ...) mlc_tir_store(m, (b), IDX(__VA_ARGS__), (v))
#define FOR(v, n, body) mlc_tir_for(m, (v), I64(0), I64(n), MLC_TIR_FOR_SERIAL, NULL, (body))
#define VAR(name) mlc_tir_var_new(m, (name), MLC_DTYPE_I64)

static char *tmpdir;

static mlc_tir_module *new_module(void) {
  mlc_tir_module *m = NULL;
  if (!OK(mlc_tir_module_create(mlc_allocator_default(), &m))) return NULL;
  return mlc_test_hold(m);
}

static mlc_tir_buffer *buf2(mlc_tir_module *m, const char *name, int64_t a, int64_t b) {
  const int64_t d[2] = {a, b};
  return mlc_tir_buffer_new_c(m, name, MLC_DTYPE_F32, 2, d, MLC_TIR_SCOPE_GLOBAL);
}
static mlc_tir_buffer *buf1(mlc_tir_module *m, const char *name, int64_t a) {
  return mlc_tir_buffer_new_c(m, name, MLC_DTYPE_F32, 1, &a, MLC_TIR_SCOPE_GLOBAL);
}

static mlc_tir_iter_var iter(mlc_tir_module *m, mlc_tir_var *v, mlc_tir_iter_kind k, int64_t ext, mlc_tir_expr *bind) {
  mlc_tir_iter_var it = {v, k, mlc_tir_i64(m, 0), mlc_tir_i64(m, ext), bind};
  return it;
}

static mlc_tir_func *func(mlc_tir_module *m, const char *name, int n, mlc_tir_buffer *const *params,
                          mlc_tir_stmt *body) {
  mlc_tir_func *f = mlc_tir_func_new(m, name, n, params, body);
  if (!f || !OK(mlc_tir_func_set_attr_bool(m, f, "tir.noalias", 1))) return NULL;
  return f;
}

static void append_func(mlc_strbuf *b, const char *title, const mlc_tir_func *f) {
  mlc_sb_printf(b, "# %s\n", title);
  mlc_tir_print_func(f, b);
}

/* Compares |text| with tests/golden/tir_lower/|name|.out (or rewrites it). */
static void golden(const char *name, const char *text) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/golden/tir_lower/%s.out", name);
  const char *path = mlc_test_src_path(rel);
  const char *upd = getenv("MLC_UPDATE_GOLDEN");
  if (upd && strcmp(upd, "1") == 0) {
    CU_ASSERT_EQUAL(mlc_test_write_file(path, text, strlen(text)), 0);
    return;
  }
  char *want = mlc_test_read_file(path, NULL);
  if (!want) {
    printf("\n  missing golden file %s (run with MLC_UPDATE_GOLDEN=1)\n", path);
    CU_FAIL("missing golden file");
    return;
  }
  if (strcmp(want, text) != 0) {
    int line = 1;
    const char *a = want, *b = text;
    while (*a && *a == *b) {
      if (*a == '\n') line++;
      a++, b++;
    }
    printf("\n  %s differs at line %d\n--- expected\n%s--- actual\n%s", path, line, want, text);
    CU_FAIL("golden mismatch");
  }
  free(want);
}

/* Prints |f|, runs |pass| (NULL: the whole pipeline) and prints it again
** into golden |name|; the function is verified after. */
static void check_pass(const char *name, mlc_tir_module *m, mlc_tir_func *f, mlc_tir_pass_fn pass,
                       const char *pass_name) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_FATAL(OK(mlc_tir_verify_func(f)));
  mlc_strbuf b = MLC_STRBUF_INIT;
  append_func(&b, "before", f);
  mlc_tir_lower_options opt = {0, 0, 1};
  int ok = pass ? OK(pass(m, f)) : OK(mlc_tir_lower_func(m, f, &opt));
  CU_ASSERT(ok);
  if (ok) {
    mlc_sb_printf(&b, "\n");
    append_func(&b, pass_name, f);
    CU_ASSERT(OK(mlc_tir_verify_func(f)));
  }
  CU_ASSERT(!b.oom);
  golden(name, mlc_sb_str(&b));
  mlc_sb_fini(&b);
}

/* ---- running lowered kernels -------------------------------------------------------- */

/* The chunks parallel loops run in (0: one), one after another. */
static int64_t chunk_size;
static int serial_for(mlc_rt_ctx *ctx, int64_t n, mlc_rt_parallel_body body, void *closure) {
  (void)ctx;
  int64_t c = chunk_size > 0 ? chunk_size : n;
  for (int64_t b = 0; b < n; b += c) {
    int rc = body(b, b + c < n ? b + c : n, closure);
    if (rc) return rc;
  }
  return 0;
}
static void *ws_alloc(mlc_rt_ctx *ctx, uint64_t n) {
  (void)ctx;
  return malloc(n ? n : 1);
}
static void ws_free(mlc_rt_ctx *ctx, void *p) {
  (void)ctx;
  free(p);
}
static char rt_err[512];
static int set_error(mlc_rt_ctx *ctx, const char *msg) {
  (void)ctx;
  snprintf(rt_err, sizeof rt_err, "%s", msg);
  return -1;
}
static int check_failed(mlc_rt_ctx *ctx, const char *op, const char *msg, int64_t a, int64_t b, int64_t c) {
  (void)ctx, (void)a, (void)b, (void)c;
  snprintf(rt_err, sizeof rt_err, "%s: %s", op, msg);
  return -1;
}
static const mlc_rt_api api = {serial_for, ws_alloc, ws_free, set_error, check_failed};

/* A float32 argument. */
typedef struct arg {
  float *data;
  int rank;
  int64_t shape[4];
} arg;

static int64_t numel(const arg *a) {
  int64_t n = 1;
  for (int i = 0; i < a->rank; i++) n *= a->shape[i];
  return n;
}

static uint32_t rng = 7;
static float frand(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void arg_init(arg *a, int rank, int64_t d0, int64_t d1) {
  a->rank = rank;
  a->shape[0] = d0;
  a->shape[1] = d1;
  a->data = mlc_test_hold(calloc((size_t)numel(a), sizeof(float)));
  for (int64_t i = 0; i < numel(a); i++) a->data[i] = frand();
}

/* Compiles |m| (lowered), loads it and runs |sym| on |args|; 0 on success. */
static int run(mlc_tir_module *m, const char *sym, int n, arg *args) {
  mlc_target *t = NULL;
  if (!OK(mlc_target_host(&t))) return -1;
  static int count;
  char obj[4200], so[4200], cmd[9000];
  snprintf(obj, sizeof obj, "%s/k%d.o", tmpdir, count);
  snprintf(so, sizeof so, "%s/k%d.so", tmpdir, count++);
  int ok = OK(mlc_cg_build(m, t, obj));
  mlc_target_destroy(t);
  if (!ok) return -1;
  snprintf(cmd, sizeof cmd, "cc -shared -o '%s' '%s' -lm", so, obj);
  int rc = system(cmd);
  CU_ASSERT_EQUAL(rc, 0);
  unlink(obj);
  void *h = rc == 0 ? dlopen(so, RTLD_NOW | RTLD_LOCAL) : NULL;
  unlink(so);
  CU_ASSERT_PTR_NOT_NULL(h);
  if (!h) return -1;
  mlc_kernel_fn fn;
  *(void **)&fn = dlsym(h, sym);
  CU_ASSERT_PTR_NOT_NULL(fn);
  rc = -1;
  if (fn) {
    DLTensor ts[8];
    void *ptrs[8];
    int32_t codes[8];
    for (int i = 0; i < n; i++) {
      memset(&ts[i], 0, sizeof ts[i]);
      ts[i].data = args[i].data;
      ts[i].ndim = args[i].rank;
      ts[i].shape = args[i].shape;
      ts[i].dtype.code = kDLFloat;
      ts[i].dtype.bits = 32;
      ts[i].dtype.lanes = 1;
      ts[i].device.device_type = kDLCPU;
      ptrs[i] = &ts[i];
      codes[i] = MLC_ARG_TENSOR;
    }
    mlc_rt_ctx ctx = {&api};
    rt_err[0] = 0;
    rc = fn(ptrs, codes, n, &ctx);
    if (rc) printf("\n  %s: %s\n", sym, rt_err);
  }
  dlclose(h);
  return rc;
}

static int close_to(float got, double want) { return fabs(got - want) <= 1e-4 * fabs(want) + 1e-4; }

/* ---- matmul in several loop orders ------------------------------------------------- */

/* Y[i, j] = sum_k A[i, k] * B[k, j] for 16x16x16 (k split into ko*4 + ki
** when |split|), loops nested in |order| ("ijk", "ikj", "i k j" ...: one
** letter per loop, 'o' and 'r' for ko and ki). */
static mlc_tir_func *matmul(mlc_tir_module *m, const char *name, const char *order, int split) {
  mlc_tir_buffer *A = buf2(m, "A", 16, 16), *B = buf2(m, "B", 16, 16), *Y = buf2(m, "Y", 16, 16);
  mlc_tir_var *i = VAR("i"), *j = VAR("j"), *k = VAR("k"), *ko = VAR("ko"), *ki = VAR("ki");
  mlc_tir_var *vi = VAR("vi"), *vj = VAR("vj"), *vk = VAR("vk");
  mlc_tir_expr *kb = split ? mlc_tir_add(m, mlc_tir_mul(m, REF(ko), I64(4)), REF(ki)) : REF(k);
  mlc_tir_iter_var its[3] = {iter(m, vi, MLC_TIR_ITER_SPATIAL, 16, REF(i)), iter(m, vj, MLC_TIR_ITER_SPATIAL, 16, REF(j)),
                             iter(m, vk, MLC_TIR_ITER_REDUCE, 16, kb)};
  mlc_tir_stmt *init = ST(Y, F32(0), REF(vi), REF(vj));
  mlc_tir_expr *upd = mlc_tir_add(m, LD(Y, REF(vi), REF(vj)), mlc_tir_mul(m, LD(A, REF(vi), REF(vk)), LD(B, REF(vk), REF(vj))));
  mlc_tir_stmt *s = mlc_tir_block(m, "Y", 3, its, init, ST(Y, upd, REF(vi), REF(vj)));
  for (size_t n = strlen(order); n-- > 0;) {
    switch (order[n]) {
      case 'i': s = FOR(i, 16, s); break;
      case 'j': s = FOR(j, 16, s); break;
      case 'k': s = FOR(k, 16, s); break;
      case 'o': s = FOR(ko, 4, s); break;
      case 'r': s = FOR(ki, 4, s); break;
      default: break;
    }
  }
  mlc_tir_buffer *params[3] = {A, B, Y};
  return func(m, name, 3, params, s);
}

static void check_matmul(mlc_tir_module *m, const char *name) {
  arg a[3];
  arg_init(&a[0], 2, 16, 16);
  arg_init(&a[1], 2, 16, 16);
  arg_init(&a[2], 2, 16, 16); /* garbage in Y: the init must run */
  if (run(m, name, 3, a) != 0) {
    CU_FAIL("kernel failed");
    return;
  }
  int bad = 0;
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      double s = 0;
      for (int k = 0; k < 16; k++) s += (double)a[0].data[i * 16 + k] * a[1].data[k * 16 + j];
      if (!close_to(a[2].data[i * 16 + j], s) && bad++ < 3)
        printf("\n  %s: Y[%d, %d] = %g, want %g\n", name, i, j, a[2].data[i * 16 + j], s);
    }
  CU_ASSERT_EQUAL(bad, 0);
}

/* The init goes once before the reduce loops when they are innermost. */
static void test_init_hoisted(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_func *f = matmul(m, "mm", "ijk", 0);
  check_pass("init_hoisted", m, f, mlc_tir_pass_lower_blocks, "lower_blocks");
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  CU_ASSERT(OK(mlc_tir_lower_module(m, NULL)));
  check_matmul(m, "mm");
}

/* Split reduce loops, both innermost: hoisted before ko. */
static void test_init_hoisted_split(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_func *f = matmul(m, "mm", "ijor", 1);
  check_pass("init_hoisted_split", m, f, mlc_tir_pass_lower_blocks, "lower_blocks");
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  CU_ASSERT(OK(mlc_tir_lower_module(m, NULL)));
  check_matmul(m, "mm");
}

/* A spatial loop inside the reduce loop (after a reorder): guarded init. */
static void test_init_guarded(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_func *f = matmul(m, "mm", "ikj", 0);
  check_pass("init_guarded", m, f, mlc_tir_pass_lower_blocks, "lower_blocks");
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  CU_ASSERT(OK(mlc_tir_lower_module(m, NULL)));
  check_matmul(m, "mm");
}

/* A partial nest: j between ko and ki.  Guarded on ko * 4 + ki == 0. */
static void test_init_partial_nest(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_func *f = matmul(m, "mm", "iojr", 1);
  check_pass("init_partial_nest", m, f, mlc_tir_pass_lower_blocks, "lower_blocks");
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  CU_ASSERT(OK(mlc_tir_lower_module(m, NULL)));
  check_matmul(m, "mm");
}

/* The whole pipeline on matmul: flat views of the parameters. */
static void test_pipeline_matmul(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_func *f = matmul(m, "mm", "ijk", 0);
  check_pass("pipeline_matmul", m, f, NULL, "lowered");
  CU_ASSERT(mlc_tir_func_is_lowered(f));
  CU_ASSERT_PTR_NULL(mlc_tir_find_block(f->body));
  CU_ASSERT_EQUAL(f->nviews, 3);
  /* lowering a lowered function changes nothing */
  mlc_tir_stmt *body = f->body;
  CU_ASSERT(OK(mlc_tir_lower_func(m, f, NULL)));
  CU_ASSERT_PTR_EQUAL(f->body, body);
  CU_ASSERT_EQUAL(f->nviews, 3);
}

/* ---- predicates, opaque blocks, unit loops ------------------------------------------- */

/* B[v] = A[v] * 2 for v = io * 4 + ii < 10: the predicate becomes an if. */
static mlc_tir_func *scale_split(mlc_tir_module *m) {
  mlc_tir_buffer *A = buf1(m, "A", 10), *B = buf1(m, "B", 10);
  mlc_tir_var *io = VAR("io"), *ii = VAR("ii"), *v = VAR("v");
  mlc_tir_iter_var it = iter(m, v, MLC_TIR_ITER_SPATIAL, 10, mlc_tir_add(m, mlc_tir_mul(m, REF(io), I64(4)), REF(ii)));
  mlc_tir_stmt *blk = mlc_tir_block(m, "B", 1, &it, NULL, ST(B, mlc_tir_mul(m, LD(A, REF(v)), F32(2)), REF(v)));
  mlc_tir_block_set_predicate(blk, mlc_tir_binary(m, MLC_TIR_LT, it.binding, I64(10)));
  mlc_tir_buffer *params[2] = {A, B};
  return func(m, "scale", 2, params, FOR(io, 3, FOR(ii, 4, blk)));
}

static void test_predicate(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_func *f = scale_split(m);
  check_pass("predicate", m, f, mlc_tir_pass_lower_blocks, "lower_blocks");
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  CU_ASSERT(OK(mlc_tir_lower_module(m, NULL)));
  arg a[2];
  arg_init(&a[0], 1, 10, 0);
  arg_init(&a[1], 1, 10, 0);
  if (run(m, "scale", 2, a) == 0) {
    for (int i = 0; i < 10; i++) CU_ASSERT(close_to(a[1].data[i], 2.0 * a[0].data[i]));
  } else {
    CU_FAIL("kernel failed");
  }
}

/* An opaque root block with an allocation, unit loops, a rank-0 buffer. */
static void test_opaque_and_unit(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_buffer *A = buf2(m, "A", 1, 8), *B = buf2(m, "B", 1, 8);
  mlc_tir_buffer *T = buf2(m, "Tmp", 1, 8);
  mlc_tir_buffer *S = mlc_tir_buffer_new_c(m, "S", MLC_DTYPE_F32, 0, NULL, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i0 = VAR("i0"), *j = VAR("j"), *v0 = VAR("v0"), *vj = VAR("vj");
  mlc_tir_var *i1 = VAR("i0"), *j1 = VAR("j"), *w0 = VAR("v0"), *wj = VAR("vj");
  mlc_tir_iter_var its[2] = {iter(m, v0, MLC_TIR_ITER_SPATIAL, 1, REF(i0)), iter(m, vj, MLC_TIR_ITER_SPATIAL, 8, REF(j))};
  mlc_tir_iter_var its2[2] = {iter(m, w0, MLC_TIR_ITER_SPATIAL, 1, REF(i1)), iter(m, wj, MLC_TIR_ITER_SPATIAL, 8, REF(j1))};
  mlc_tir_stmt *t = mlc_tir_block(m, "T", 2, its, NULL, ST(T, mlc_tir_add(m, LD(A, REF(v0), REF(vj)), LD(S)), REF(v0), REF(vj)));
  mlc_tir_stmt *b = mlc_tir_block(m, "B", 2, its2, NULL, ST(B, LD(T, REF(w0), REF(wj)), REF(w0), REF(wj)));
  mlc_tir_stmt *body = mlc_tir_seq(m, 3, (mlc_tir_stmt *[]){mlc_tir_store(m, S, 0, NULL, F32(1)), FOR(i0, 1, FOR(j, 8, t)),
                                                             FOR(i1, 1, FOR(j1, 8, b))});
  body = mlc_tir_allocate(m, T, mlc_tir_allocate(m, S, body));
  mlc_tir_stmt *root = mlc_tir_block(m, "root", 0, NULL, NULL, body);
  mlc_tir_buffer *params[2] = {A, B};
  mlc_tir_func *f = func(m, "add_one", 2, params, root);
  check_pass("opaque_and_unit", m, f, NULL, "lowered");
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  arg a[2];
  arg_init(&a[0], 2, 1, 8);
  arg_init(&a[1], 2, 1, 8);
  if (run(m, "add_one", 2, a) == 0) {
    for (int i = 0; i < 8; i++) CU_ASSERT(close_to(a[1].data[i], a[0].data[i] + 1.0));
  } else {
    CU_FAIL("kernel failed");
  }
}

/* The unit-loop pass alone: the binding folds. */
static void test_unit_loops(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_buffer *A = buf2(m, "A", 4, 8);
  mlc_tir_var *io = VAR("io"), *ii = VAR("ii"), *j = VAR("j");
  mlc_tir_stmt *s = ST(A, F32(0), mlc_tir_add(m, mlc_tir_mul(m, REF(io), I64(4)), REF(ii)), REF(j));
  s = FOR(io, 1, FOR(ii, 4, mlc_tir_for(m, j, I64(3), I64(1), MLC_TIR_FOR_PARALLEL, NULL, s)));
  /* a GPU thread axis of extent 1 stays */
  s = mlc_tir_for(m, VAR("tx"), I64(0), I64(1), MLC_TIR_FOR_THREAD_BINDING, "threadIdx.x", s);
  mlc_tir_func *f = func(m, "zero", 1, &A, s);
  check_pass("unit_loops", m, f, mlc_tir_pass_remove_unit_loops, "remove_unit_loops");
}

/* A vectorized inner loop: after flattening, the vectorize pass (last in
** the pipeline) turns it into contiguous vector accesses. */
static void test_pipeline_vectorized(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_buffer *A = buf2(m, "A", 4, 16), *B = buf2(m, "B", 4, 16);
  mlc_tir_var *i = VAR("i"), *j = VAR("j"), *vi = VAR("vi"), *vj = VAR("vj");
  mlc_tir_iter_var its[2] = {iter(m, vi, MLC_TIR_ITER_SPATIAL, 4, REF(i)), iter(m, vj, MLC_TIR_ITER_SPATIAL, 16, REF(j))};
  mlc_tir_stmt *blk = mlc_tir_block(m, "B", 2, its, NULL, ST(B, mlc_tir_mul(m, LD(A, REF(vi), REF(vj)), F32(2)), REF(vi), REF(vj)));
  mlc_tir_stmt *body = FOR(i, 4, mlc_tir_for(m, j, I64(0), I64(16), MLC_TIR_FOR_VECTORIZED, NULL, blk));
  mlc_tir_buffer *params[2] = {A, B};
  mlc_tir_func *f = func(m, "double", 2, params, body);
  check_pass("pipeline_vectorized", m, f, NULL, "lowered");
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  arg a[2];
  arg_init(&a[0], 2, 4, 16);
  arg_init(&a[1], 2, 4, 16);
  if (run(m, "double", 2, a) == 0) {
    for (int x = 0; x < 64; x++) CU_ASSERT(close_to(a[1].data[x], 2.0 * a[0].data[x]));
  } else {
    CU_FAIL("kernel failed");
  }
}

/* ---- simplify ------------------------------------------------------------------------ */

static void test_simplify(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_buffer *A = buf1(m, "A", 8), *B = buf1(m, "B", 8);
  mlc_tir_var *i = VAR("i"), *j = VAR("j"), *k = VAR("k");
  mlc_tir_stmt *noop = ST(A, LD(A, REF(i)), REF(i));
  mlc_tir_stmt *keep = ST(A, LD(A, mlc_tir_add(m, REF(i), I64(1))), REF(i));
  mlc_tir_stmt *taken = mlc_tir_if(m, mlc_tir_binary(m, MLC_TIR_LT, I64(1), I64(2)), ST(B, F32(1), REF(i)), ST(B, F32(2), REF(i)));
  mlc_tir_stmt *dead = mlc_tir_if(m, mlc_tir_binary(m, MLC_TIR_GT, I64(1), I64(2)), ST(B, F32(3), REF(i)), NULL);
  mlc_tir_stmt *body = mlc_tir_seq(m, 4, (mlc_tir_stmt *[]){noop, keep, taken, dead});
  mlc_tir_stmt *empty_loop = FOR(j, 8, ST(B, LD(B, REF(j)), REF(j)));
  mlc_tir_stmt *zero_trip = FOR(k, 0, ST(B, F32(5), REF(k)));
  body = mlc_tir_seq(m, 3, (mlc_tir_stmt *[]){FOR(i, 7, body), empty_loop, zero_trip});
  mlc_tir_buffer *params[2] = {A, B};
  mlc_tir_func *f = func(m, "simp", 2, params, body);
  check_pass("simplify", m, f, mlc_tir_pass_simplify, "simplify");
}

/* ---- flatten ---------------------------------------------------------------------------- */

static void test_flatten_symbolic(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_var *n = VAR("n");
  mlc_tir_expr *shape[3] = {REF(n), I64(3), I64(4)};
  mlc_tir_buffer *A = mlc_tir_buffer_new(m, "A", MLC_DTYPE_F32, 3, shape, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new(m, "B", MLC_DTYPE_F32, 3, shape, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *T = mlc_tir_buffer_new(m, "Tmp", MLC_DTYPE_F32, 3, shape, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *a = VAR("a"), *b = VAR("b"), *c = VAR("c");
  mlc_tir_stmt *s = ST(T, LD(A, REF(a), REF(b), REF(c)), REF(a), REF(b), REF(c));
  mlc_tir_stmt *s2 = ST(B, LD(T, REF(a), REF(b), REF(c)), REF(a), REF(b), REF(c));
  s = mlc_tir_for(m, a, I64(0), REF(n), MLC_TIR_FOR_SERIAL, NULL, FOR(b, 3, FOR(c, 4, mlc_tir_seq2(m, s, s2))));
  mlc_tir_buffer *params[2] = {A, B};
  mlc_tir_func *f = func(m, "copy", 2, params, mlc_tir_allocate(m, T, s));
  CU_ASSERT_FATAL(OK(mlc_tir_func_add_scalar(m, f, n, 0, 0)));
  check_pass("flatten_symbolic", m, f, mlc_tir_pass_flatten_buffers, "flatten_buffers");
  CU_ASSERT(OK(mlc_tir_func_set_attr_bool(m, f, "tir.lowered", 1)));
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  arg x[2] = {{NULL, 3, {5, 3, 4, 0}}, {NULL, 3, {5, 3, 4, 0}}};
  x[0].data = mlc_test_hold(calloc(60, sizeof(float)));
  x[1].data = mlc_test_hold(calloc(60, sizeof(float)));
  for (int i = 0; i < 60; i++) x[0].data[i] = (float)i;
  if (run(m, "copy", 2, x) == 0) {
    for (int i = 0; i < 60; i++) CU_ASSERT_EQUAL(x[1].data[i], (float)i);
  } else {
    CU_FAIL("kernel failed");
  }
}

/* ---- compact ---------------------------------------------------------------------------- */

/* A cache_write tile: C_l[io*8 + ii, jo*8 + ji] only inside one (io, jo)
** iteration, so it moves into jo and shrinks to 8x8 (local). */
/* |fused|: one parallel loop f over (io, jo) = (f / 4, f % 4), whose
** steps no region start describes: the tile still moves in, as each
** iteration writes all of it before reading it.  |fused| 2: the output
** nest reads one row past the tile, so it stays out.  |fused| 3: f over
** (io, jo / 2) around a serial loop g over jo % 2: the tile moves into g.
** |fused| 4: as 1 with each column loop split in two (steps 4 and 1). */
static mlc_tir_func *tiled_matmul_v(mlc_tir_module *m, int fused) {
  mlc_tir_buffer *A = buf2(m, "A", 32, 32), *B = buf2(m, "B", 32, 32), *C = buf2(m, "C", 32, 32);
  mlc_tir_buffer *L = buf2(m, "C_l", 32, 32);
  mlc_tir_var *io = VAR("io"), *jo = VAR("jo"), *k = VAR("k"), *fv = VAR("f");
  mlc_tir_var *ii[3] = {VAR("ii"), VAR("ii"), VAR("ii")}, *ji[3] = {VAR("ji"), VAR("ji"), VAR("ji")};
  mlc_tir_var *jl[3] = {VAR("jl"), VAR("jl"), VAR("jl")};
  mlc_tir_expr *r[3], *c[3];
  mlc_tir_var *g = VAR("g");
  mlc_tir_expr *ioe = fused ? mlc_tir_binary(m, MLC_TIR_FLOORDIV, REF(fv), I64(fused == 3 ? 2 : 4)) : REF(io);
  mlc_tir_expr *joe = fused ? mlc_tir_binary(m, MLC_TIR_FLOORMOD, REF(fv), I64(4)) : REF(jo);
  if (fused == 3) /* jo = (f % 2) * 2 + g, g a serial loop inside f */
    joe = mlc_tir_add(m, mlc_tir_mul(m, mlc_tir_binary(m, MLC_TIR_FLOORMOD, REF(fv), I64(2)), I64(2)), REF(g));
  for (int x = 0; x < 3; x++) {
    r[x] = mlc_tir_add(m, mlc_tir_mul(m, ioe, I64(8)), REF(ii[x]));
    c[x] = mlc_tir_add(m, mlc_tir_mul(m, joe, I64(8)), REF(ji[x]));
    if (fused == 4) /* columns ji * 4 + jl: a lanes loop inside a columns loop */
      c[x] = mlc_tir_add(m, mlc_tir_add(m, mlc_tir_mul(m, joe, I64(8)), mlc_tir_mul(m, REF(ji[x]), I64(4))), REF(jl[x]));
  }
#define COLS(x, s) (fused == 4 ? FOR(ji[x], 2, FOR(jl[x], 4, s)) : FOR(ji[x], 8, s))
  mlc_tir_stmt *init = FOR(ii[0], 8, COLS(0, ST(L, F32(0), r[0], c[0])));
  mlc_tir_expr *upd = mlc_tir_add(m, LD(L, r[1], c[1]), mlc_tir_mul(m, LD(A, r[1], REF(k)), LD(B, REF(k), c[1])));
  mlc_tir_stmt *acc = FOR(k, 32, FOR(ii[1], 8, COLS(1, ST(L, upd, r[1], c[1]))));
  mlc_tir_expr *rd = fused == 2 ? mlc_tir_binary(m, MLC_TIR_FLOORMOD, mlc_tir_add(m, r[2], I64(1)), I64(32)) : r[2];
  mlc_tir_stmt *out = FOR(ii[2], 8, COLS(2, ST(C, LD(L, rd, c[2]), r[2], c[2])));
#undef COLS
  mlc_tir_stmt *body = mlc_tir_seq(m, 3, (mlc_tir_stmt *[]){init, acc, out});
  if (fused == 3)
    body = mlc_tir_allocate(m, L, mlc_tir_for(m, fv, I64(0), I64(8), MLC_TIR_FOR_PARALLEL, NULL, FOR(g, 2, body)));
  else if (fused)
    body = mlc_tir_allocate(m, L, mlc_tir_for(m, fv, I64(0), I64(16), MLC_TIR_FOR_PARALLEL, NULL, body));
  else
    body = mlc_tir_allocate(m, L, FOR(io, 4, mlc_tir_for(m, jo, I64(0), I64(4), MLC_TIR_FOR_PARALLEL, NULL, body)));
  mlc_tir_buffer *params[3] = {A, B, C};
  return func(m, "tiled", 3, params, body);
}

static mlc_tir_func *tiled_matmul(mlc_tir_module *m) { return tiled_matmul_v(m, 0); }

/* Lowers |f| (tiled_matmul_v's kernel) and compares it with a plain matmul. */
static void check_tiled_matmul(mlc_tir_module *m, mlc_tir_func *f) {
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  CU_ASSERT(OK(mlc_tir_lower_module(m, NULL)));
  arg a[3];
  for (int i = 0; i < 3; i++) arg_init(&a[i], 2, 32, 32);
  if (run(m, "tiled", 3, a) != 0) {
    CU_FAIL("kernel failed");
    return;
  }
  int bad = 0;
  for (int i = 0; i < 32; i++)
    for (int j = 0; j < 32; j++) {
      double want = 0;
      for (int k = 0; k < 32; k++) want += (double)a[0].data[i * 32 + k] * a[1].data[k * 32 + j];
      if (!close_to(a[2].data[i * 32 + j], want)) bad++;
    }
  CU_ASSERT_EQUAL(bad, 0);
}

static void test_compact_tile(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_func *f = tiled_matmul(m);
  check_pass("compact_tile", m, f, mlc_tir_pass_compact_buffers, "compact_buffers");
  const mlc_tir_stmt *s = f->body;
  CU_ASSERT_EQUAL_FATAL(s->kind, MLC_TIR_FOR);
  CU_ASSERT_EQUAL_FATAL(s->loop.body->kind, MLC_TIR_FOR);
  s = s->loop.body->loop.body;
  CU_ASSERT_EQUAL_FATAL(s->kind, MLC_TIR_ALLOCATE);
  CU_ASSERT_EQUAL(s->alloc.buffer->scope, MLC_TIR_SCOPE_LOCAL);
  CU_ASSERT(mlc_tir_is_const(s->alloc.buffer->shape[0], 8) && mlc_tir_is_const(s->alloc.buffer->shape[1], 8));
  check_tiled_matmul(m, f);
}

static void test_compact_fused(void) {
  for (int v = 1; v <= 4; v++) {
    mlc_tir_module *m = new_module();
    if (!m) return;
    mlc_tir_func *f = tiled_matmul_v(m, v);
    CU_ASSERT(OK(mlc_tir_pass_compact_buffers(m, f)));
    const mlc_tir_stmt *s = f->body;
    if (v == 2) { /* not moved: the iterations read each other's rows */
      CU_ASSERT(s->kind == MLC_TIR_ALLOCATE && mlc_tir_is_const(s->alloc.buffer->shape[0], 32));
      continue;
    }
    CU_ASSERT_EQUAL_FATAL(s->kind, MLC_TIR_FOR);
    s = s->loop.body;
    if (v == 3) { /* through the serial loop all accesses share */
      CU_ASSERT_EQUAL_FATAL(s->kind, MLC_TIR_FOR);
      s = s->loop.body;
    }
    CU_ASSERT_EQUAL_FATAL(s->kind, MLC_TIR_ALLOCATE);
    CU_ASSERT_EQUAL(s->alloc.buffer->scope, MLC_TIR_SCOPE_LOCAL);
    CU_ASSERT(mlc_tir_is_const(s->alloc.buffer->shape[0], 8) && mlc_tir_is_const(s->alloc.buffer->shape[1], 8));
    check_tiled_matmul(m, f);
  }
}

/* A row carried across the iterations of k: it shrinks to that row but
** stays outside k (the iterations share it). */
static void test_compact_carried(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_buffer *A = buf2(m, "A", 4, 16), *B = buf1(m, "B", 16), *acc = buf2(m, "acc", 4, 16);
  mlc_tir_var *k = VAR("k"), *i = VAR("i");
  mlc_tir_expr *first = mlc_tir_binary(m, MLC_TIR_EQ, REF(k), I64(0));
  mlc_tir_expr *v = mlc_tir_add(m, mlc_tir_select(m, first, F32(0), LD(acc, I64(1), REF(i))), LD(A, REF(k), REF(i)));
  mlc_tir_stmt *body = mlc_tir_seq2(m, ST(acc, v, I64(1), REF(i)), ST(B, LD(acc, I64(1), REF(i)), REF(i)));
  mlc_tir_buffer *params[2] = {A, B};
  mlc_tir_func *f = func(m, "colsum", 2, params, mlc_tir_allocate(m, acc, FOR(k, 4, FOR(i, 16, body))));
  check_pass("compact_carried", m, f, mlc_tir_pass_compact_buffers, "compact_buffers");
  CU_ASSERT_EQUAL(f->body->kind, MLC_TIR_ALLOCATE); /* not moved */
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  CU_ASSERT(OK(mlc_tir_lower_module(m, NULL)));
  arg a[2];
  arg_init(&a[0], 2, 4, 16);
  arg_init(&a[1], 1, 16, 0);
  if (run(m, "colsum", 2, a) != 0) {
    CU_FAIL("kernel failed");
    return;
  }
  for (int x = 0; x < 16; x++) {
    double want = 0;
    for (int y = 0; y < 4; y++) want += a[0].data[y * 16 + x];
    CU_ASSERT(close_to(a[1].data[x], want));
  }
}

/* Symbolic extents and loads in indices keep the allocation as it is. */
static void test_compact_keeps(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_var *n = VAR("n");
  mlc_tir_expr *shape[1] = {REF(n)};
  mlc_tir_buffer *A = mlc_tir_buffer_new(m, "A", MLC_DTYPE_F32, 1, shape, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *T = mlc_tir_buffer_new(m, "Tmp", MLC_DTYPE_F32, 1, shape, MLC_TIR_SCOPE_GLOBAL);
  const int64_t four = 4;
  mlc_tir_buffer *I = mlc_tir_buffer_new_c(m, "I", MLC_DTYPE_I64, 1, &four, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *G = buf1(m, "G", 16);
  mlc_tir_var *i = VAR("i"), *j = VAR("j");
  mlc_tir_var *i2 = VAR("i");
  mlc_tir_stmt *s1 = mlc_tir_seq2(m, mlc_tir_for(m, i, I64(0), REF(n), MLC_TIR_FOR_SERIAL, NULL, ST(T, LD(A, REF(i)), REF(i))),
                                  mlc_tir_for(m, i2, I64(0), REF(n), MLC_TIR_FOR_SERIAL, NULL, ST(A, LD(T, REF(i2)), REF(i2))));
  mlc_tir_stmt *s2 = FOR(j, 4, mlc_tir_seq2(m, ST(G, F32(1), LD(I, REF(j))), ST(I, mlc_tir_cast(m, MLC_DTYPE_I64, LD(G, LD(I, REF(j)))), REF(j))));
  mlc_tir_buffer *params[2] = {A, I};
  mlc_tir_stmt *body = mlc_tir_seq2(m, mlc_tir_allocate(m, T, s1), mlc_tir_allocate(m, G, s2));
  mlc_tir_func *f = func(m, "keeps", 2, params, body);
  CU_ASSERT_FATAL(OK(mlc_tir_func_add_scalar(m, f, n, 0, 0)));
  mlc_tir_stmt *before = f->body;
  CU_ASSERT(OK(mlc_tir_pass_compact_buffers(m, f)));
  CU_ASSERT_PTR_EQUAL(f->body, before);
  if (f->body != before) {
    mlc_strbuf b = MLC_STRBUF_INIT;
    mlc_tir_print_func(f, &b);
    printf("\n%s", mlc_sb_str(&b));
    mlc_sb_fini(&b);
  }
}

/* ---- shared buffers of a GPU thread block ------------------------------------------ */

static int count_syncs(const mlc_tir_stmt *s) {
  if (!s) return 0;
  switch (s->kind) {
    case MLC_TIR_FOR: return count_syncs(s->loop.body);
    case MLC_TIR_ALLOCATE: return count_syncs(s->alloc.body);
    case MLC_TIR_IF: return count_syncs(s->if_.then_s) + count_syncs(s->if_.else_s);
    case MLC_TIR_SEQ: {
      int n = 0;
      for (int i = 0; i < s->seq.n; i++) n += count_syncs(s->seq.stmts[i]);
      return n;
    }
    case MLC_TIR_EVALUATE:
      return s->eval.value->kind == MLC_TIR_CALL && s->eval.value->call.op == MLC_TIR_INTRIN_SYNC_THREADS;
    default: return 0;
  }
}

/* The shared allocations of |s| (at most 4): their element counts. */
static int shared_sizes(const mlc_tir_stmt *s, int64_t *sizes, int n) {
  if (!s) return n;
  switch (s->kind) {
    case MLC_TIR_FOR: return shared_sizes(s->loop.body, sizes, n);
    case MLC_TIR_IF: return shared_sizes(s->if_.else_s, sizes, shared_sizes(s->if_.then_s, sizes, n));
    case MLC_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++) n = shared_sizes(s->seq.stmts[i], sizes, n);
      return n;
    case MLC_TIR_ALLOCATE: {
      const mlc_tir_buffer *b = s->alloc.buffer;
      if (b->scope == MLC_TIR_SCOPE_SHARED && n < 4) {
        int64_t c = 1;
        for (int d = 0; d < b->rank; d++) c *= b->shape[d]->kind == MLC_TIR_INT_IMM ? b->shape[d]->int_value : -1;
        sizes[n++] = c;
      }
      return shared_sizes(s->alloc.body, sizes, n);
    }
    default: return n;
  }
}

/*
** The GPU schedule with shared-memory tiles (tests/schedule/
** gpu_shared_tiles: 64 threads copy 32 x 16 panels of A and 16 x 32 of B
** per step of k, each then computes a 4 x 4 tile from them): lowered, each
** shared buffer shrinks to its panel (the region spans the threads, which
** fill it together) inside the k loop, a barrier comes before the copies
** (the last step's reads) and one after them (this step's reads); run on
** the CPU, where the threads run one after another and each copies the
** whole panel itself, it computes A B + bias.
*/
static void test_shared_tiles(void) {
  mlc_tir_module *m = new_module();
  char *src = mlc_test_hold(mlc_test_read_file(mlc_test_src_path("tests/schedule/gpu_shared_tiles.expected"), NULL));
  if (!m || !src) {
    CU_FAIL("cannot read tests/schedule/gpu_shared_tiles.expected");
    return;
  }
  mlc_tir_func *f = NULL;
  CU_ASSERT_FATAL(OK(mlc_tir_parse_func(m, src, strlen(src), "gpu_shared_tiles", &f)));
  check_pass("shared_tiles", m, f, NULL, "lowered");
  int64_t sizes[4];
  CU_ASSERT_EQUAL(shared_sizes(f->body, sizes, 0), 2);
  CU_ASSERT(sizes[0] == 512 && sizes[1] == 512);
  CU_ASSERT_EQUAL(count_syncs(f->body), 2);
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  arg a[4];
  arg_init(&a[0], 2, 128, 64);
  arg_init(&a[1], 2, 64, 256);
  arg_init(&a[2], 1, 256, 0);
  arg_init(&a[3], 2, 128, 256);
  if (run(m, "mm_bias", 4, a) != 0) {
    CU_FAIL("kernel failed");
    return;
  }
  int bad = 0;
  for (int i = 0; i < 128; i++)
    for (int j = 0; j < 256; j++) {
      double want = a[2].data[j];
      for (int k = 0; k < 64; k++) want += (double)a[0].data[i * 64 + k] * a[1].data[k * 256 + j];
      if (!close_to(a[3].data[i * 256 + j], want)) bad++;
    }
  CU_ASSERT_EQUAL(bad, 0);
}

/* thread_sync alone: a barrier between a shared write and the read after
** it (the pass compares buffers, not indices: another thread's element may
** be read); an error where the barrier would be under a condition; none
** outside a loop bound to threadIdx. */
static void test_thread_sync(void) {
  static const char good[] =
      "@T.prim_func\n"
      "def rev(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
      "    T.func_attr({\"global_symbol\": \"rev\", \"tir.noalias\": True})\n"
      "    for t in T.thread_binding(64, thread=\"threadIdx.x\"):\n"
      "        S = T.alloc_buffer((64,), \"float32\", scope=\"shared\")\n"
      "        S[t] = A[t]\n"
      "        B[t] = S[63 - t]\n";
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_tir_func *f = NULL;
  CU_ASSERT_FATAL(OK(mlc_tir_parse_func(m, good, strlen(good), "good", &f)));
  check_pass("thread_sync", m, f, mlc_tir_pass_thread_sync, "thread_sync");
  CU_ASSERT_EQUAL(count_syncs(f->body), 1);
  /* the same under a condition of the thread's index */
  char bad[1024];
  const char *cut = strstr(good, "        S[t] = A[t]");
  CU_ASSERT_FATAL(cut != NULL);
  snprintf(bad, sizeof bad, "%.*s        if t < 32:\n            S[t] = A[t]\n            B[t] = S[63 - t]\n",
           (int)(cut - good), good);
  mlc_tir_func *g = NULL;
  CU_ASSERT_FATAL(OK(mlc_tir_parse_func(m, bad, strlen(bad), "bad", &g)));
  EXPECT_ERR(mlc_tir_pass_thread_sync(m, g), MLC_UNIMPLEMENTED, "under a condition");
  /* outside a thread loop (CPU code): no barrier */
  static const char cpu[] =
      "@T.prim_func\n"
      "def cpu(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
      "    T.func_attr({\"global_symbol\": \"cpu\", \"tir.noalias\": True})\n"
      "    S = T.alloc_buffer((64,), \"float32\", scope=\"shared\")\n"
      "    for t in range(64):\n"
      "        S[t] = A[t]\n"
      "    for t in range(64):\n"
      "        B[t] = S[63 - t]\n";
  mlc_tir_func *h = NULL;
  CU_ASSERT_FATAL(OK(mlc_tir_parse_func(m, cpu, strlen(cpu), "cpu", &h)));
  CU_ASSERT(OK(mlc_tir_pass_thread_sync(m, h)));
  CU_ASSERT_EQUAL(count_syncs(h->body), 0);
}

static int count_calls_expr(const mlc_tir_expr *e, mlc_tir_intrin op) {
  if (!e) return 0;
  switch (e->kind) {
    case MLC_TIR_CALL: {
      int n = e->call.op == op;
      for (int i = 0; i < e->call.n; i++) n += count_calls_expr(e->call.args[i], op);
      return n;
    }
    case MLC_TIR_BINARY: return count_calls_expr(e->bin.a, op) + count_calls_expr(e->bin.b, op);
    default: return 0;
  }
}

static int count_calls(const mlc_tir_stmt *s, mlc_tir_intrin op) {
  if (!s) return 0;
  switch (s->kind) {
    case MLC_TIR_FOR: return count_calls(s->loop.body, op);
    case MLC_TIR_ALLOCATE: return count_calls(s->alloc.body, op);
    case MLC_TIR_IF: return count_calls(s->if_.then_s, op) + count_calls(s->if_.else_s, op);
    case MLC_TIR_SEQ: {
      int n = 0;
      for (int i = 0; i < s->seq.n; i++) n += count_calls(s->seq.stmts[i], op);
      return n;
    }
    case MLC_TIR_STORE: return count_calls_expr(s->store.value, op);
    case MLC_TIR_EVALUATE: return count_calls_expr(s->eval.value, op);
    default: return 0;
  }
}

/*
** A row max across a warp (tests/schedule/gpu_warp_reduce: each lane's
** partial max over 4 of the row's 128 elements in a register, the 32
** combined by the write-back whose reduce loop is bound to threadIdx.x).
** Lowered for a GPU, the write-back is a warp_max of each lane's partial
** result stored by lane 0, and each lane's partial results shrink to one
** register; lowered for the CPU (the loops run in turn, no shuffle) it
** stays a loop, and computes each row's max.
*/
static void test_warp_reduce(void) {
  char *src = mlc_test_hold(mlc_test_read_file(mlc_test_src_path("tests/schedule/gpu_warp_reduce.expected"), NULL));
  if (!src) {
    CU_FAIL("cannot read tests/schedule/gpu_warp_reduce.expected");
    return;
  }
  for (int gpu = 1; gpu >= 0; gpu--) {
    mlc_tir_module *m = new_module();
    mlc_tir_func *f = NULL;
    if (!m) return;
    CU_ASSERT_FATAL(OK(mlc_tir_parse_func(m, src, strlen(src), "gpu_warp_reduce", &f)));
    if (gpu) {
      mlc_strbuf b = MLC_STRBUF_INIT;
      append_func(&b, "before", f);
      mlc_tir_lower_options opt = {0, 0, 1, 1};
      CU_ASSERT_FATAL(OK(mlc_tir_lower_func(m, f, &opt)));
      mlc_sb_printf(&b, "\n");
      append_func(&b, "lowered for a GPU", f);
      golden("warp_reduce", mlc_sb_str(&b));
      mlc_sb_fini(&b);
      CU_ASSERT_EQUAL(count_calls(f->body, MLC_TIR_INTRIN_WARP_MAX), 1);
      continue;
    }
    mlc_tir_lower_options opt = {0, 0, 1, 0};
    CU_ASSERT_FATAL(OK(mlc_tir_lower_func(m, f, &opt)));
    CU_ASSERT_EQUAL(count_calls(f->body, MLC_TIR_INTRIN_WARP_MAX), 0);
    CU_ASSERT(OK(mlc_tir_module_add(m, f)));
    arg a[2];
    arg_init(&a[0], 2, 64, 128);
    arg_init(&a[1], 1, 64, 0);
    if (run(m, "rowmax", 2, a) != 0) {
      CU_FAIL("kernel failed");
      return;
    }
    int bad = 0;
    for (int i = 0; i < 64; i++) {
      float want = -3.4028234663852886e+38f;
      for (int k = 0; k < 128; k++) want = a[0].data[i * 128 + k] > want ? a[0].data[i * 128 + k] : want;
      bad += a[1].data[i] != want;
    }
    CU_ASSERT_EQUAL(bad, 0);
  }
  /* a reduce loop over 16 threads is no warp: the GPU lowering refuses it */
  static const char half[] =
      "@T.prim_func\n"
      "def half(A: T.Buffer((16,), \"float32\"), S: T.Buffer((1,), \"float32\")):\n"
      "    T.func_attr({\"global_symbol\": \"half\", \"tir.noalias\": True})\n"
      "    for k in T.thread_binding(16, thread=\"threadIdx.x\"):\n"
      "        with T.block(\"S\"):\n"
      "            vk = T.axis.reduce(16, k)\n"
      "            with T.init():\n"
      "                S[0] = T.float32(0)\n"
      "            S[0] = S[0] + A[vk]\n";
  mlc_tir_module *m = new_module();
  mlc_tir_func *f = NULL;
  if (!m) return;
  CU_ASSERT_FATAL(OK(mlc_tir_parse_func(m, half, strlen(half), "half", &f)));
  mlc_tir_lower_options opt = {0, 0, 1, 1};
  EXPECT_ERR(mlc_tir_lower_func(m, f, &opt), MLC_UNIMPLEMENTED, "reduces across the threads");
}

/* ---- software prefetch of the next panel ------------------------------------------- */

/* C[p * 6 + r, j] = sum_k A[r, k] * W[p * 256 + k, j]: 4 panels of W (256
** rows of 16), each read by 6 rows (the loop over r inside k). */
static const char pf_panels[] =
    "@T.prim_func\n"
    "def panels(A: T.Buffer((6, 256), \"float32\"), W: T.Buffer((1024, 16), \"float32\"),\n"
    "           C: T.Buffer((24, 16), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"panels\", \"tir.noalias\": True})\n"
    "    for p in T.parallel(4, annotations={\"software_prefetch\": \"W\"}):\n"
    "        for r, j in T.grid(6, 16):\n"
    "            C[p * 6 + r, j] = T.float32(0)\n"
    "        for k, r, j in T.grid(256, 6, 16):\n"
    "            C[p * 6 + r, j] = C[p * 6 + r, j] + A[r, k] * W[p * 256 + k, j]\n";

/* The same with 64 rows of W per panel, and each panel's 6 rows in 3
** iterations of the parallel loop of 2 rows each (parallel_grain 3). */
static const char pf_rows[] =
    "@T.prim_func\n"
    "def rows(A: T.Buffer((6, 64), \"float32\"), W: T.Buffer((256, 16), \"float32\"),\n"
    "         C: T.Buffer((24, 16), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"rows\", \"tir.noalias\": True})\n"
    "    for f in T.parallel(12, annotations={\"parallel_grain\": 3, \"software_prefetch\": \"W\"}):\n"
    "        for r, j in T.grid(2, 16):\n"
    "            C[f // 3 * 6 + f % 3 * 2 + r, j] = T.float32(0)\n"
    "        for k, r, j in T.grid(64, 2, 16):\n"
    "            C[f // 3 * 6 + f % 3 * 2 + r, j] = C[f // 3 * 6 + f % 3 * 2 + r, j]"
    " + A[f % 3 * 2 + r, k] * W[f // 3 * 64 + k, j]\n";

/* A matrix-vector product: each panel's block of W is read once. */
static const char pf_once[] =
    "@T.prim_func\n"
    "def once(A: T.Buffer((1, 256), \"float32\"), W: T.Buffer((1024, 16), \"float32\"),\n"
    "         C: T.Buffer((4, 16), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"once\", \"tir.noalias\": True})\n"
    "    for p in T.parallel(4, annotations={\"software_prefetch\": \"W\"}):\n"
    "        for j in range(16):\n"
    "            C[p, j] = T.float32(0)\n"
    "        for k, j in T.grid(256, 16):\n"
    "            C[p, j] = C[p, j] + A[0, k] * W[p * 256 + k, j]\n";

/* Lowers |src| (function |sym|) whole and checks the prefetches it gets
** (|want|), their golden text (|golden_name|, when not NULL), that code
** generation makes them llvm.prefetch, and the numbers: C[p * rows + r, j]
** = sum_k A[r, k] * W[p * kn + k, j] for |panels| panels of |rows| rows. */
static void check_prefetch(const char *src, const char *sym, const char *golden_name, int want, int kn) {
  mlc_tir_module *m = new_module();
  mlc_tir_func *f = NULL;
  if (!m) return;
  CU_ASSERT_FATAL(OK(mlc_tir_parse_func(m, src, strlen(src), sym, &f)));
  if (golden_name) check_pass(golden_name, m, f, NULL, "lowered");
  else CU_ASSERT_FATAL(OK(mlc_tir_lower_func(m, f, NULL)));
  CU_ASSERT_EQUAL(count_calls(f->body, MLC_TIR_INTRIN_PREFETCH), want);
  /* the text reads back as it was */
  mlc_strbuf a1 = MLC_STRBUF_INIT, a2 = MLC_STRBUF_INIT;
  mlc_tir_print_func(f, &a1);
  mlc_tir_module *m2 = new_module();
  mlc_tir_func *f2 = NULL;
  CU_ASSERT_FATAL(m2 && OK(mlc_tir_parse_func(m2, mlc_sb_str(&a1), a1.len, sym, &f2)));
  CU_ASSERT(OK(mlc_tir_verify_func(f2)));
  mlc_tir_print_func(f2, &a2);
  CU_ASSERT_STRING_EQUAL(mlc_sb_str(&a1), mlc_sb_str(&a2));
  mlc_sb_fini(&a1);
  mlc_sb_fini(&a2);
  CU_ASSERT_FATAL(OK(mlc_tir_module_add(m, f)));
  mlc_target *t = NULL;
  if (OK(mlc_target_host(&t))) {
    char *ir = NULL;
    if (OK(mlc_cg_emit_llvm_ir(m, t, 0, &ir))) {
      CU_ASSERT_EQUAL(strstr(ir, "@llvm.prefetch") != NULL, want > 0);
      mlc_cg_free(ir);
    }
    mlc_target_destroy(t);
  }
  int64_t rows = f->params[0]->shape[0]->int_value, cn = f->params[2]->shape[0]->int_value;
  arg a[3];
  arg_init(&a[0], 2, rows, kn);
  arg_init(&a[1], 2, 1024 * kn / 256, 16);
  arg_init(&a[2], 2, cn, 16);
  if (run(m, sym, 3, a) != 0) {
    CU_FAIL("kernel failed");
    return;
  }
  int bad = 0;
  for (int64_t p = 0; p < cn / rows; p++)
    for (int64_t r = 0; r < rows; r++)
      for (int j = 0; j < 16; j++) {
        double s = 0;
        for (int k = 0; k < kn; k++) s += (double)a[0].data[r * kn + k] * a[1].data[(p * kn + k) * 16 + j];
        bad += !close_to(a[2].data[(p * rows + r) * 16 + j], s);
      }
  CU_ASSERT_EQUAL(bad, 0);
}

/*
** Prefetches of the next panel's block of W: one per iteration of k (256
** lines of 16 floats, 256 iterations) in "panels"; in "rows" 22 at the
** top of each iteration of the parallel loop (64 lines over 3 iterations
** per panel); none where each panel's block is read once ("once"), where
** the annotation names no operand, or without the annotation.
*/
static void test_prefetch(void) {
  check_prefetch(pf_panels, "panels", "prefetch_panels", 1, 256);
  check_prefetch(pf_rows, "rows", "prefetch_rows", 1, 64);
  /* in chunks (of threads) of one panel, and of half a panel */
  chunk_size = 1;
  check_prefetch(pf_panels, "panels", NULL, 1, 256);
  chunk_size = 2;
  check_prefetch(pf_rows, "rows", NULL, 1, 64);
  chunk_size = 0;
  check_prefetch(pf_once, "once", NULL, 0, 256);
  char src[2048];
  const char *w = strstr(pf_panels, "\"software_prefetch\": \"W\"");
  CU_ASSERT_FATAL(w != NULL);
  snprintf(src, sizeof src, "%.*s\"software_prefetch\": \"X\"%s", (int)(w - pf_panels), pf_panels,
           w + strlen("\"software_prefetch\": \"W\""));
  check_prefetch(src, "panels", NULL, 0, 256);
}

/* T.loop_end(i): in a parallel loop run in chunks of 3, each chunk's end;
** in a serial loop, its end. */
static void test_loop_end(void) {
  static const char src[] =
      "@T.prim_func\n"
      "def ends(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
      "    T.func_attr({\"global_symbol\": \"ends\", \"tir.noalias\": True})\n"
      "    for i in T.parallel(8):\n"
      "        B[i] = A[i] + T.Cast(\"float32\", T.loop_end(i))\n"
      "    for j in range(2, 4):\n"
      "        B[j] = B[j] + T.Cast(\"float32\", T.loop_end(j) * 100)\n";
  mlc_tir_module *m = new_module();
  mlc_tir_func *f = NULL;
  if (!m) return;
  CU_ASSERT_FATAL(OK(mlc_tir_parse_func(m, src, strlen(src), "ends", &f)));
  CU_ASSERT_FATAL(OK(mlc_tir_lower_func(m, f, NULL)));
  CU_ASSERT_FATAL(OK(mlc_tir_module_add(m, f)));
  arg a[2];
  arg_init(&a[0], 1, 8, 0);
  arg_init(&a[1], 1, 8, 0);
  chunk_size = 3;
  int rc = run(m, "ends", 2, a);
  chunk_size = 0;
  if (rc != 0) {
    CU_FAIL("kernel failed");
    return;
  }
  static const float want[8] = {3, 3, 403, 406, 6, 6, 8, 8};
  for (int i = 0; i < 8; i++) CU_ASSERT(close_to(a[1].data[i], a[0].data[i] + want[i]));
  /* a variable of no loop around it */
  static const char bad[] =
      "@T.prim_func\n"
      "def bad(A: T.Buffer((8,), \"float32\")):\n"
      "    T.func_attr({\"global_symbol\": \"bad\", \"tir.noalias\": True})\n"
      "    for i in T.parallel(8):\n"
      "        for j in range(8):\n"
      "            A[j] = T.float32(0)\n"
      "        A[i] = T.Cast(\"float32\", T.loop_end(i + 1))\n";
  mlc_tir_func *g = NULL;
  CU_ASSERT_FATAL(OK(mlc_tir_parse_func(m, bad, strlen(bad), "bad", &g)));
  EXPECT_ERR(mlc_tir_verify_func(g), MLC_INVALID_ARGUMENT, "loop_end of anything but a loop variable");
}

/* ---- refusals ------------------------------------------------------------------------- */

static void test_errors(void) {
  mlc_tir_module *m = new_module();
  if (!m) return;
  mlc_target *t = NULL;
  /* code generation refuses a block */
  mlc_tir_func *f = matmul(m, "mm", "ijk", 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_FATAL(OK(mlc_tir_module_add(m, f)));
  if (OK(mlc_target_host(&t))) {
    char *ir = NULL;
    EXPECT_ERR(mlc_cg_emit_llvm_ir(m, t, 0, &ir), MLC_INVALID_ARGUMENT, "kernel mm", "block \"Y\" is not lowered");
    /* ... and an access that is not flat */
    CU_ASSERT(OK(mlc_tir_pass_lower_blocks(m, f)));
    EXPECT_ERR(mlc_cg_emit_llvm_ir(m, t, 0, &ir), MLC_INVALID_ARGUMENT, "kernel mm", "buffer", "with 2 indices");
    CU_ASSERT(OK(mlc_tir_pass_flatten_buffers(m, f)));
    if (OK(mlc_cg_emit_llvm_ir(m, t, 0, &ir))) mlc_cg_free(ir);
    mlc_target_destroy(t);
  }
  /* passes that need lower_blocks first */
  mlc_tir_func *g = matmul(m, "mm2", "ijk", 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  EXPECT_ERR(mlc_tir_pass_flatten_buffers(m, g), MLC_INVALID_ARGUMENT, "flatten_buffers", "\"mm2\"", "block \"Y\"",
             "lower_blocks first");
  EXPECT_ERR(mlc_tir_pass_compact_buffers(m, g), MLC_INVALID_ARGUMENT, "compact_buffers", "\"mm2\"", "block \"Y\"");
  /* a block iteration variable without binding */
  mlc_tir_stmt *blk = (mlc_tir_stmt *)mlc_tir_find_block(g->body);
  CU_ASSERT_PTR_NOT_NULL_FATAL(blk);
  blk->block.iters[1].binding = NULL;
  EXPECT_ERR(mlc_tir_lower_func(m, g, NULL), MLC_INVALID_ARGUMENT, "prim func \"mm2\"", "lower_blocks",
             "block \"Y\"", "iter var vj has no binding");
  CU_ASSERT(!mlc_tir_func_is_lowered(g));
  /* views */
  mlc_tir_buffer *X = buf2(m, "X", 2, 2);
  mlc_tir_buffer *V = mlc_tir_buffer_view(m, X, 1, (mlc_tir_expr *[]){I64(4)});
  EXPECT_ERR(mlc_tir_func_add_view(m, f, V), MLC_INVALID_ARGUMENT, "\"mm\"", "X is not a view of a parameter");
  CU_ASSERT_FATAL(f->nviews > 0);
  f->views[0]->view_of = X; /* broken by hand: the verifier says so */
  EXPECT_ERR(mlc_tir_verify_func(f), MLC_INVALID_ARGUMENT, "view A is not a view of a parameter");
  EXPECT_ERR(mlc_tir_lower_func(NULL, f, NULL), MLC_INVALID_ARGUMENT, "no function");
  EXPECT_ERR(mlc_tir_lower_module(NULL, NULL), MLC_INVALID_ARGUMENT, "no module");
}

static int suite_init(void) {
  tmpdir = mlc_test_tmpdir();
  return tmpdir ? 0 : 1;
}

static int suite_clean(void) {
  if (tmpdir) rmdir(tmpdir);
  free(tmpdir);
  tmpdir = NULL;
  return 0;
}

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"init_hoisted", test_init_hoisted},
                                      {"init_hoisted_split", test_init_hoisted_split},
                                      {"init_guarded", test_init_guarded},
                                      {"init_partial_nest", test_init_partial_nest},
                                      {"pipeline_matmul", test_pipeline_matmul},
                                      {"predicate", test_predicate},
                                      {"opaque_and_unit", test_opaque_and_unit},
                                      {"unit_loops", test_unit_loops},
                                      {"pipeline_vectorized", test_pipeline_vectorized},
                                      {"simplify", test_simplify},
                                      {"flatten_symbolic", test_flatten_symbolic},
                                      {"compact_tile", test_compact_tile},
                                      {"compact_carried", test_compact_carried},
                                      {"compact_fused", test_compact_fused},
                                      {"compact_keeps", test_compact_keeps},
                                      {"shared_tiles", test_shared_tiles},
                                      {"thread_sync", test_thread_sync},
                                      {"warp_reduce", test_warp_reduce},
                                      {"prefetch", test_prefetch},
                                      {"loop_end", test_loop_end},
                                      {"errors", test_errors},
                                      {NULL, NULL}};
  CU_pSuite s = CU_add_suite("tir_lower", suite_init, suite_clean);
  if (!s) return;
  for (const CU_TestInfo *t = tests; t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_tir_lower", fns);
}
