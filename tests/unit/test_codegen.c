/*
** test_codegen.c: TensorIR -> LLVM -> object code, run for real.
**
** Kernels are built with te (and a few by hand), compiled with
** mlc_cg_build, linked into a shared object with the system C compiler
** (cc -shared -o k.so k.o -lm), dlopen'ed and called through the runtime ABI
** of rt_abi.h with DLTensors and a test-provided mlc_rt_api: a serial
** parallel_for that counts its calls and splits the range into chunks, and
** a threaded one on pthreads.  Results are compared with naive C references
** (exact for integers and 16-bit floats, 1e-5 relative for float32).
** Also: argument checks and their messages, workspace failures (also
** inside an outlined parallel body), --target parsing, identical object
** bytes for identical builds, and vector types in the IR of a vectorized
** loop on AVX-512 hosts.
*/
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "codegen/target.h"
#include "lower/te.h"
#include "lower/tir_lower.h"
#include "lower/tir.h"
#include "runtime/rt_abi.h"
#include "tests/testutil.h"

/* ---- status helpers -------------------------------------------------------------- */

#define OK(expr) MLC_TEST_OK(expr)
#define EXPECT_ERR(expr, code, ...) MLC_TEST_ERR((expr), (code), __VA_ARGS__)

/* ---- the test runtime ------------------------------------------------------------------ */

typedef struct test_ctx {
  mlc_rt_ctx base; /* first: kernels read base.api */
  pthread_mutex_t mu;
  char err[512];
  int par_calls, chunks;
  int allocs, frees;
  int fail_alloc; /* workspace_alloc returns NULL */
  int alloc_fail_after; /* > 0: fail once this many allocations succeeded */
} test_ctx;

static int serial_parallel_for(mlc_rt_ctx *ctx, int64_t n, mlc_rt_parallel_body body, void *closure) {
  test_ctx *c = (test_ctx *)ctx;
  c->par_calls++;
  for (int k = 0; k < 3; k++) { /* three chunks, so begin is not always 0 */
    int64_t b = n * k / 3, e = n * (k + 1) / 3;
    if (b >= e) continue;
    c->chunks++;
    int rc = body(b, e, closure);
    if (rc) return rc;
  }
  return 0;
}

typedef struct job {
  mlc_rt_parallel_body body;
  void *closure;
  int64_t b, e;
  int rc;
} job;

static void *run_job(void *p) {
  job *j = p;
  j->rc = j->body(j->b, j->e, j->closure);
  return NULL;
}

static int threaded_parallel_for(mlc_rt_ctx *ctx, int64_t n, mlc_rt_parallel_body body, void *closure) {
  test_ctx *c = (test_ctx *)ctx;
  enum { T = 4 };
  job jobs[T];
  pthread_t th[T];
  int started[T] = {0};
  __atomic_fetch_add(&c->par_calls, 1, __ATOMIC_SEQ_CST);
  for (int k = 0; k < T; k++) {
    jobs[k] = (job){body, closure, n * k / T, n * (k + 1) / T, 0};
    if (jobs[k].b < jobs[k].e) started[k] = pthread_create(&th[k], NULL, run_job, &jobs[k]) == 0;
    if (jobs[k].b < jobs[k].e && !started[k]) run_job(&jobs[k]);
  }
  int rc = 0;
  for (int k = 0; k < T; k++) {
    if (started[k]) pthread_join(th[k], NULL);
    if (!rc) rc = jobs[k].rc;
  }
  return rc;
}

static void *ws_alloc(mlc_rt_ctx *ctx, uint64_t n) {
  test_ctx *c = (test_ctx *)ctx;
  if (c->fail_alloc) return NULL;
  pthread_mutex_lock(&c->mu);
  int fail = c->alloc_fail_after > 0 && c->allocs >= c->alloc_fail_after;
  if (!fail) c->allocs++;
  pthread_mutex_unlock(&c->mu);
  if (fail) return NULL;
  return aligned_alloc(64, (n + 63) / 64 * 64);
}

static void ws_free(mlc_rt_ctx *ctx, void *p) {
  test_ctx *c = (test_ctx *)ctx;
  pthread_mutex_lock(&c->mu);
  c->frees++;
  pthread_mutex_unlock(&c->mu);
  free(p);
}

static int set_error(mlc_rt_ctx *ctx, const char *msg) {
  test_ctx *c = (test_ctx *)ctx;
  pthread_mutex_lock(&c->mu);
  snprintf(c->err, sizeof c->err, "%s", msg);
  pthread_mutex_unlock(&c->mu);
  return -1;
}

/* check_failed: "OP: MSG" with the values appended ("v0 v1 v2"). */
static int check_failed(mlc_rt_ctx *ctx, const char *op, const char *msg, int64_t v0, int64_t v1, int64_t v2) {
  test_ctx *c = (test_ctx *)ctx;
  pthread_mutex_lock(&c->mu);
  snprintf(c->err, sizeof c->err, "%s: %s [%lld %lld %lld]", op, msg, (long long)v0, (long long)v1, (long long)v2);
  pthread_mutex_unlock(&c->mu);
  return -1;
}

static const mlc_rt_api serial_api = {serial_parallel_for, ws_alloc, ws_free, set_error, check_failed};
static const mlc_rt_api threaded_api = {threaded_parallel_for, ws_alloc, ws_free, set_error, check_failed};

static void ctx_init(test_ctx *c, const mlc_rt_api *api) {
  memset(c, 0, sizeof *c);
  c->base.api = api;
  pthread_mutex_init(&c->mu, NULL);
}

static void ctx_fini(test_ctx *c) { pthread_mutex_destroy(&c->mu); }

/* ---- tensors ------------------------------------------------------------------------------ */

typedef struct tensor {
  DLTensor t;
  int64_t shape[8];
  size_t numel;
} tensor;

static void tensor_init(tensor *x, mlc_dtype dt, int ndim, const int64_t *shape) {
  memset(x, 0, sizeof *x);
  x->numel = 1;
  for (int i = 0; i < ndim; i++) {
    x->shape[i] = shape[i];
    x->numel *= (size_t)shape[i];
  }
  uint8_t code = dt == MLC_DTYPE_BF16 ? kDLBfloat : mlc_dtype_is_float(dt) ? kDLFloat
                 : (mlc_dtype_is_signed(dt)) ? kDLInt : kDLUInt;
  x->t.dtype.code = code;
  x->t.dtype.bits = (uint8_t)(mlc_dtype_size(dt) * 8);
  x->t.dtype.lanes = 1;
  x->t.ndim = ndim;
  x->t.shape = x->shape;
  x->t.device.device_type = kDLCPU;
  x->t.data = calloc(x->numel ? x->numel : 1, mlc_dtype_size(dt));
}

static void tensor_fini(tensor *x) { free(x->t.data); }

#define T1(x, dt, a) tensor_init((x), (dt), 1, (int64_t[]){a})
#define T2(x, dt, a, b) tensor_init((x), (dt), 2, (int64_t[]){a, b})

static int call_kernel(mlc_kernel_fn fn, test_ctx *c, int n, tensor *const *ts) {
  void *args[16];
  int32_t codes[16];
  for (int i = 0; i < n; i++) {
    args[i] = &ts[i]->t;
    codes[i] = MLC_ARG_TENSOR;
  }
  c->err[0] = 0;
  return fn(args, codes, n, &c->base);
}
#define CALL(fn, c, ...) \
  call_kernel((fn), (c), (int)(sizeof((tensor *[]){__VA_ARGS__}) / sizeof(tensor *)), (tensor *[]){__VA_ARGS__})

/* Deterministic pseudo-random numbers. */
static uint32_t rng_state = 12345;
static uint32_t rnd(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8;
}
static float frand(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() & 0xffff) / 65535.0f; }
static void fill_f32(tensor *x, float lo, float hi) {
  float *d = x->t.data;
  for (size_t i = 0; i < x->numel; i++) d[i] = frand(lo, hi);
}

static int close_f32(float got, float want) {
  if (isnan(want)) return isnan(got);
  return fabsf(got - want) <= 1e-5f * fabsf(want) + 1e-6f;
}

/* Counts mismatches of float32 arrays (prints the first). */
static int cmp_f32(const char *what, const float *got, const float *want, size_t n) {
  int bad = 0;
  for (size_t i = 0; i < n; i++)
    if (!close_f32(got[i], want[i]) && bad++ == 0)
      printf("\n  %s[%zu]: got %.9g, want %.9g\n", what, i, (double)got[i], (double)want[i]);
  return bad;
}

/* float16 / bfloat16 on the host, rounding to nearest even. */
static uint16_t f2h(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
  if (exp == 255) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  int e = (int)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t hm = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (hm & 1))) hm++;
    return (uint16_t)(sign | hm);
  }
  uint32_t hm = mant >> 13, rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (hm & 1))) {
    hm++;
    if (hm == 0x400u) {
      hm = 0;
      if (++e >= 31) return (uint16_t)(sign | 0x7c00u);
    }
  }
  return (uint16_t)(sign | ((uint32_t)e << 10) | hm);
}

static float h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, x;
  if (exp == 0) {
    float f = ldexpf((float)mant, -24);
    return sign ? -f : f;
  }
  if (exp == 31) x = sign | 0x7f800000u | (mant << 13);
  else x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static uint16_t f2bf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x40u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static float bf2f(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* ---- building and loading ------------------------------------------------------------------- */

static char *tmpdir;
static int so_count;

typedef struct lib {
  void *handle;
  char so[4096];
} lib;

/* Compiles |m| for the host, links it into a .so and dlopens it. */
static int load_module(const mlc_tir_module *m, lib *out) {
  mlc_target *t;
  memset(out, 0, sizeof *out);
  if (!OK(mlc_target_host(&t))) return 0;
  char obj[4096], cmd[9000];
  snprintf(obj, sizeof obj, "%s/k%d.o", tmpdir, so_count);
  snprintf(out->so, sizeof out->so, "%s/k%d.so", tmpdir, so_count);
  so_count++;
  int ok = OK(mlc_cg_build(m, t, obj));
  mlc_target_destroy(t);
  if (!ok) return 0;
  snprintf(cmd, sizeof cmd, "cc -shared -o '%s' '%s' -lm", out->so, obj);
  if (system(cmd) != 0) {
    printf("\n  link failed: %s\n", cmd);
    CU_FAIL("cc -shared failed");
    return 0;
  }
  out->handle = dlopen(out->so, RTLD_NOW | RTLD_LOCAL);
  if (!out->handle) {
    printf("\n  dlopen: %s\n", dlerror());
    CU_FAIL("dlopen failed");
    return 0;
  }
  return 1;
}

static void unload(lib *l) {
  if (l->handle) dlclose(l->handle);
}

static mlc_kernel_fn sym(lib *l, const char *name) {
  void *p = dlsym(l->handle, name);
  if (!p) {
    printf("\n  missing symbol %s\n", name);
    CU_FAIL("missing kernel symbol");
  }
  mlc_kernel_fn fn;
  memcpy(&fn, &p, sizeof fn);
  return fn;
}

/* The |nth| loop (0-based, preorder) whose variable is called |name|. */
static mlc_tir_stmt *find_loop(mlc_tir_stmt *s, const char *name, int *nth) {
  if (!s) return NULL;
  mlc_tir_stmt *r = NULL;
  switch (s->kind) {
    case MLC_TIR_FOR:
      if (strcmp(s->loop.var->name, name) == 0 && (*nth)-- == 0) return s;
      return find_loop(s->loop.body, name, nth);
    case MLC_TIR_SEQ:
      for (int i = 0; i < s->seq.n && !r; i++) r = find_loop(s->seq.stmts[i], name, nth);
      return r;
    case MLC_TIR_ALLOCATE: return find_loop(s->alloc.body, name, nth);
    case MLC_TIR_BLOCK: return find_loop(s->block.body, name, nth);
    case MLC_TIR_IF:
      r = find_loop(s->if_.then_s, name, nth);
      return r ? r : find_loop(s->if_.else_s, name, nth);
    default: return NULL;
  }
}

static int set_kind(mlc_tir_func *f, const char *name, int nth, mlc_tir_for_kind kind) {
  mlc_tir_stmt *l = find_loop(f->body, name, &nth);
  if (!l) {
    printf("no loop %s in %s\n", name, f->name);
    return 0;
  }
  l->loop.kind = kind;
  return 1;
}

#define I64(v) mlc_tir_i64(m, (v))
#define REF(v) mlc_tir_ref(m, (v))
#define F32C(v) mlc_tir_float(m, MLC_DTYPE_F32, (v))
#define EX(...) (mlc_tir_expr *[]){__VA_ARGS__}
#define SHAPE(...) (int)(sizeof(EX(__VA_ARGS__)) / sizeof(mlc_tir_expr *)), EX(__VA_ARGS__)

/* ---- te bodies --------------------------------------------------------------------------- */

typedef struct kctx {
  mlc_te_tensor *t[8];
  mlc_tir_expr *r[4];
  int variant;
} kctx;

#define LD(c, k, ...) mlc_te_load(b, (c)->t[k], (int)(sizeof(EX(__VA_ARGS__)) / sizeof(mlc_tir_expr *)), EX(__VA_ARGS__))

/* C[i, j, k] = A[i, j, k] + B[j, 0] */
static mlc_tir_expr *add_bcast(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  mlc_tir_module *m = mlc_te_module(b);
  return mlc_tir_add(m, LD(c, 0, x[0], x[1], x[2]), LD(c, 1, x[1], I64(0)));
}

/* Y[i, j] = sum_k A[i, k] * B[k, j] */
static mlc_tir_expr *matmul(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  mlc_tir_module *m = mlc_te_module(b);
  return mlc_te_sum(b, mlc_tir_mul(m, LD(c, 0, x[0], c->r[0]), LD(c, 1, c->r[0], x[1])), c->r, 1);
}

/* C[i, j] = max(Y[i, j], 0) */
static mlc_tir_expr *relu(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  mlc_tir_module *m = mlc_te_module(b);
  return mlc_tir_max(m, LD(c, 2, x[0], x[1]), F32C(0));
}

/* S[i] = sum_k A[i, k] */
static mlc_tir_expr *row_sum(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  return mlc_te_sum(b, LD(c, 0, x[0], c->r[0]), c->r, 1);
}

/* O[n, k, y, x] = sum_{c, ry, rx} pad(I)[n, c, y + ry - 1, x + rx - 1] * W[k, c, ry, rx] */
static mlc_tir_expr *conv(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  mlc_tir_module *m = mlc_te_module(b);
  mlc_tir_expr *yy = mlc_tir_sub(m, mlc_tir_add(m, x[2], c->r[1]), I64(1));
  mlc_tir_expr *xx = mlc_tir_sub(m, mlc_tir_add(m, x[3], c->r[2]), I64(1));
  mlc_tir_expr *in = mlc_tir_binary(m, MLC_TIR_AND,
                                    mlc_tir_binary(m, MLC_TIR_AND, mlc_tir_binary(m, MLC_TIR_GE, yy, I64(0)),
                                                   mlc_tir_binary(m, MLC_TIR_LT, yy, I64(8))),
                                    mlc_tir_binary(m, MLC_TIR_AND, mlc_tir_binary(m, MLC_TIR_GE, xx, I64(0)),
                                                   mlc_tir_binary(m, MLC_TIR_LT, xx, I64(8))));
  mlc_tir_expr *v = mlc_tir_select(m, in, LD(c, 0, x[0], c->r[0], yy, xx), F32C(0));
  return mlc_te_sum(b, mlc_tir_mul(m, v, LD(c, 1, x[1], c->r[0], c->r[1], c->r[2])), c->r, 3);
}

/* unary math, by variant */
static mlc_tir_expr *math(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  mlc_tir_module *m = mlc_te_module(b);
  mlc_tir_expr *a = LD(c, 0, x[0]);
  mlc_tir_expr *abs_a = mlc_tir_call1(m, MLC_TIR_INTRIN_ABS, a);
  switch (c->variant) {
    case 0: return mlc_tir_call1(m, MLC_TIR_INTRIN_EXP, a);
    case 1: return mlc_tir_call1(m, MLC_TIR_INTRIN_TANH, a);
    case 2: return mlc_tir_call1(m, MLC_TIR_INTRIN_ERF, a);
    case 3: return mlc_tir_call1(m, MLC_TIR_INTRIN_SIGMOID, a);
    case 4: /* sqrt|a| + round(2.5 a) + floor(a) */
      return mlc_tir_add(m, mlc_tir_add(m, mlc_tir_call1(m, MLC_TIR_INTRIN_SQRT, abs_a),
                                        mlc_tir_call1(m, MLC_TIR_INTRIN_ROUND, mlc_tir_mul(m, a, F32C(2.5)))),
                         mlc_tir_call1(m, MLC_TIR_INTRIN_FLOOR, a));
    default: /* pow(|a|, 1.5) + log(|a| + 1) + sin(a) * cos(a) */
      return mlc_tir_add(m,
                         mlc_tir_add(m, mlc_tir_call(m, MLC_TIR_INTRIN_POW, 2, EX(abs_a, F32C(1.5))),
                                     mlc_tir_call1(m, MLC_TIR_INTRIN_LOG, mlc_tir_add(m, abs_a, F32C(1)))),
                         mlc_tir_mul(m, mlc_tir_call1(m, MLC_TIR_INTRIN_SIN, a), mlc_tir_call1(m, MLC_TIR_INTRIN_COS, a)));
  }
}

/* int64: A * B + A // 3 - B % 5 + truncdiv(A, B) + truncmod(A, 7) + min(A, B) - max(A, 2) */
static mlc_tir_expr *int64_body(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  mlc_tir_module *m = mlc_te_module(b);
  mlc_tir_expr *a = LD(c, 0, x[0]), *bb = LD(c, 1, x[0]);
  mlc_tir_expr *r = mlc_tir_mul(m, a, bb);
  r = mlc_tir_add(m, r, mlc_tir_binary(m, MLC_TIR_FLOORDIV, a, I64(3)));
  r = mlc_tir_sub(m, r, mlc_tir_binary(m, MLC_TIR_FLOORMOD, bb, I64(5)));
  r = mlc_tir_add(m, r, mlc_tir_binary(m, MLC_TIR_TRUNCDIV, a, bb));
  r = mlc_tir_add(m, r, mlc_tir_binary(m, MLC_TIR_TRUNCMOD, a, I64(7)));
  r = mlc_tir_add(m, r, mlc_tir_min(m, a, bb));
  r = mlc_tir_sub(m, r, mlc_tir_max(m, a, I64(2)));
  return mlc_tir_add(m, r, mlc_tir_binary(m, MLC_TIR_FLOORDIV, a, bb));
}

static int64_t ref_floordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b;
  if ((a % b != 0) && ((a % b < 0) != (b < 0))) q--;
  return q;
}
static int64_t ref_floormod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
static int64_t ref_truncdiv(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b; }
static int64_t ref_truncmod(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }

/* uint8, by variant: 0: A > B ? A - B : A + B (wrapping); 1: A > 100 (bool); 2: A // B */
static mlc_tir_expr *u8_body(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  mlc_tir_module *m = mlc_te_module(b);
  mlc_tir_expr *a = LD(c, 0, x[0]), *bb = LD(c, 1, x[0]);
  switch (c->variant) {
    case 0: return mlc_tir_select(m, mlc_tir_binary(m, MLC_TIR_GT, a, bb), mlc_tir_sub(m, a, bb), mlc_tir_add(m, a, bb));
    case 1: return mlc_tir_binary(m, MLC_TIR_GT, a, mlc_tir_int(m, MLC_DTYPE_U8, 100));
    default: return mlc_tir_binary(m, MLC_TIR_FLOORDIV, a, bb);
  }
}

/* 16-bit floats, by variant: 0: A * B + 1 (dtype of A); 1: f32(A) * 2; 2: cast(dtype, X * 3) */
static mlc_tir_expr *half_body(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  mlc_tir_module *m = mlc_te_module(b);
  mlc_dtype dt = c->t[0]->dtype;
  switch (c->variant) {
    case 0: return mlc_tir_add(m, mlc_tir_mul(m, LD(c, 0, x[0]), LD(c, 1, x[0])), mlc_tir_float(m, dt, 1));
    case 1: return mlc_tir_mul(m, mlc_tir_cast(m, MLC_DTYPE_F32, LD(c, 0, x[0])), F32C(2));
    default: return mlc_tir_cast(m, dt, mlc_tir_mul(m, LD(c, 2, x[0]), F32C(3)));
  }
}

/* B[i, j] = A[i, j] * 2 + 1 (symbolic rows) */
static mlc_tir_expr *scale(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  mlc_tir_module *m = mlc_te_module(b);
  return mlc_tir_add(m, mlc_tir_mul(m, LD(c, 0, x[0], x[1]), F32C(2)), F32C(1));
}

/* S[j] = sum_{i < n} A[i, j] (a reduction over the symbolic extent) */
static mlc_tir_expr *col_sum(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  return mlc_te_sum(b, LD(c, 0, c->r[0], x[0]), c->r, 1);
}

/* total = sum_{i, j} float64(A[i, j]) (a rank-0 output) */
static mlc_tir_expr *total(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  mlc_tir_module *m = mlc_te_module(b);
  (void)x;
  return mlc_te_sum(b, mlc_tir_cast(m, MLC_DTYPE_F64, LD(c, 0, c->r[0], c->r[1])), c->r, 2);
}

/* C[i] = A[i] + B[i] */
static mlc_tir_expr *vadd(mlc_te_builder *b, mlc_tir_expr *const *x, void *u) {
  kctx *c = u;
  mlc_tir_module *m = mlc_te_module(b);
  return mlc_tir_add(m, LD(c, 0, x[0]), LD(c, 1, x[0]));
}

/* ---- the kernel module --------------------------------------------------------------------- */

static const char *const IJ[] = {"i", "j"};

static mlc_status add_func(mlc_te_builder *b, const char *name, int nout, mlc_te_tensor **outs, int nin,
                           mlc_te_tensor **ins, mlc_tir_func **out) {
  mlc_tir_func *f;
  MLC_RETURN_IF_ERROR(mlc_te_create_prim_func(b, name, nout, outs, nin, ins, &f));
  MLC_RETURN_IF_ERROR(mlc_tir_module_add(mlc_te_module(b), f));
  if (out) *out = f;
  return NULL;
}

#define TRY(e) MLC_RETURN_IF_ERROR(e)

/* Every te kernel of the suite in one module. */
static mlc_status build_kernels(mlc_tir_module *m) {
  mlc_te_builder *b;
  TRY(mlc_te_builder_create(m, &b));
  mlc_status st = NULL;
  kctx c;
  mlc_te_tensor *o[8];
  mlc_tir_func *f;
#define S(e)              \
  do {                    \
    st = (e);             \
    if (st) goto done;    \
  } while (0)
  /* add with broadcasting */
  memset(&c, 0, sizeof c);
  S(mlc_te_placeholder(b, "A", SHAPE(I64(4), I64(3), I64(32)), MLC_DTYPE_F32, &c.t[0]));
  S(mlc_te_placeholder(b, "B", SHAPE(I64(3), I64(1)), MLC_DTYPE_F32, &c.t[1]));
  S(mlc_te_compute(b, "C", SHAPE(I64(4), I64(3), I64(32)), NULL, add_bcast, &c, &o[0]));
  S(add_func(b, "add_bcast", 1, o, 2, c.t, NULL));
  /* mm_relu, and a copy with both outer loops parallel */
  memset(&c, 0, sizeof c);
  S(mlc_te_placeholder(b, "A", SHAPE(I64(128), I64(128)), MLC_DTYPE_F32, &c.t[0]));
  S(mlc_te_placeholder(b, "B", SHAPE(I64(128), I64(128)), MLC_DTYPE_F32, &c.t[1]));
  c.r[0] = mlc_te_reduce_axis(b, I64(128), "k");
  S(mlc_te_compute(b, "Y", SHAPE(I64(128), I64(128)), IJ, matmul, &c, &c.t[2]));
  S(mlc_te_compute(b, "C", SHAPE(I64(128), I64(128)), IJ, relu, &c, &o[0]));
  S(add_func(b, "mm_relu", 1, o, 2, c.t, NULL));
  S(add_func(b, "mm_relu_par", 1, o, 2, c.t, &f));
  if (!set_kind(f, "i", 0, MLC_TIR_FOR_PARALLEL) || !set_kind(f, "i", 1, MLC_TIR_FOR_PARALLEL)) goto fail;
  /* reduction over an axis, and the same with an unrolled inner loop */
  memset(&c, 0, sizeof c);
  S(mlc_te_placeholder(b, "A", SHAPE(I64(16), I64(37)), MLC_DTYPE_F32, &c.t[0]));
  c.r[0] = mlc_te_reduce_axis(b, I64(37), "k");
  S(mlc_te_compute(b, "S", SHAPE(I64(16)), IJ, row_sum, &c, &o[0]));
  S(add_func(b, "row_sum", 1, o, 1, c.t, NULL));
  memset(&c, 0, sizeof c);
  S(mlc_te_placeholder(b, "A", SHAPE(I64(32), I64(4)), MLC_DTYPE_F32, &c.t[0]));
  c.r[0] = mlc_te_reduce_axis(b, I64(4), "k");
  S(mlc_te_compute(b, "S", SHAPE(I64(32)), IJ, row_sum, &c, &o[0]));
  S(add_func(b, "row_sum_unroll", 1, o, 1, c.t, &f));
  if (!set_kind(f, "k", 0, MLC_TIR_FOR_UNROLLED)) goto fail;
  /* conv2d with padding, 3 reduce axes */
  memset(&c, 0, sizeof c);
  S(mlc_te_placeholder(b, "I", SHAPE(I64(2), I64(3), I64(8), I64(8)), MLC_DTYPE_F32, &c.t[0]));
  S(mlc_te_placeholder(b, "W", SHAPE(I64(4), I64(3), I64(3), I64(3)), MLC_DTYPE_F32, &c.t[1]));
  c.r[0] = mlc_te_reduce_axis(b, I64(3), "rc");
  c.r[1] = mlc_te_reduce_axis(b, I64(3), "ry");
  c.r[2] = mlc_te_reduce_axis(b, I64(3), "rx");
  S(mlc_te_compute(b, "O", SHAPE(I64(2), I64(4), I64(8), I64(8)), (const char *const[]){"n", "k", "y", "x"}, conv, &c,
                   &o[0]));
  S(add_func(b, "conv2d", 1, o, 2, c.t, NULL));
  /* math intrinsics: six outputs */
  memset(&c, 0, sizeof c);
  S(mlc_te_placeholder(b, "A", SHAPE(I64(64)), MLC_DTYPE_F32, &c.t[0]));
  for (int v = 0; v < 6; v++) {
    c.variant = v;
    char name[8];
    snprintf(name, sizeof name, "M%d", v);
    S(mlc_te_compute(b, name, SHAPE(I64(64)), NULL, math, &c, &o[v]));
  }
  S(add_func(b, "math", 6, o, 1, c.t, NULL));
  /* int64 */
  memset(&c, 0, sizeof c);
  S(mlc_te_placeholder(b, "A", SHAPE(I64(40)), MLC_DTYPE_I64, &c.t[0]));
  S(mlc_te_placeholder(b, "B", SHAPE(I64(40)), MLC_DTYPE_I64, &c.t[1]));
  S(mlc_te_compute(b, "C", SHAPE(I64(40)), NULL, int64_body, &c, &o[0]));
  S(add_func(b, "int64_ops", 1, o, 2, c.t, NULL));
  /* uint8 */
  memset(&c, 0, sizeof c);
  S(mlc_te_placeholder(b, "A", SHAPE(I64(64)), MLC_DTYPE_U8, &c.t[0]));
  S(mlc_te_placeholder(b, "B", SHAPE(I64(64)), MLC_DTYPE_U8, &c.t[1]));
  for (int v = 0; v < 3; v++) {
    c.variant = v;
    S(mlc_te_compute(b, v == 0 ? "C" : v == 1 ? "D" : "E", SHAPE(I64(64)), NULL, u8_body, &c, &o[v]));
  }
  S(add_func(b, "uint8_ops", 3, o, 2, c.t, NULL));
  /* float16 and bfloat16 */
  for (int h = 0; h < 2; h++) {
    mlc_dtype dt = h ? MLC_DTYPE_BF16 : MLC_DTYPE_F16;
    memset(&c, 0, sizeof c);
    S(mlc_te_placeholder(b, "A", SHAPE(I64(50)), dt, &c.t[0]));
    S(mlc_te_placeholder(b, "B", SHAPE(I64(50)), dt, &c.t[1]));
    S(mlc_te_placeholder(b, "X", SHAPE(I64(50)), MLC_DTYPE_F32, &c.t[2]));
    for (int v = 0; v < 3; v++) {
      c.variant = v;
      S(mlc_te_compute(b, v == 0 ? "C" : v == 1 ? "F" : "H", SHAPE(I64(50)), NULL, half_body, &c, &o[v]));
    }
    S(add_func(b, h ? "bf16_ops" : "f16_ops", 3, o, 3, c.t, NULL));
  }
  /* symbolic rows n, serial and with a parallel outer loop; a sum over n */
  {
    mlc_tir_var *n = mlc_tir_var_new(m, "n", MLC_DTYPE_I64);
    memset(&c, 0, sizeof c);
    S(mlc_te_placeholder(b, "A", SHAPE(REF(n), I64(8)), MLC_DTYPE_F32, &c.t[0]));
    c.r[0] = mlc_te_reduce_axis(b, REF(n), "r");
    S(mlc_te_compute(b, "B", SHAPE(REF(n), I64(8)), IJ, scale, &c, &o[0]));
    S(mlc_te_compute(b, "S", SHAPE(I64(8)), IJ, col_sum, &c, &o[1]));
    S(add_func(b, "sym_scale", 2, o, 1, c.t, NULL));
    S(add_func(b, "sym_scale_par", 2, o, 1, c.t, &f));
    if (!set_kind(f, "i", 0, MLC_TIR_FOR_PARALLEL)) goto fail;
  }
  /* a rank-0 float64 result */
  memset(&c, 0, sizeof c);
  S(mlc_te_placeholder(b, "A", SHAPE(I64(5), I64(7)), MLC_DTYPE_F32, &c.t[0]));
  c.r[0] = mlc_te_reduce_axis(b, I64(5), "r0");
  c.r[1] = mlc_te_reduce_axis(b, I64(7), "r1");
  S(mlc_te_compute(b, "T", 0, NULL, NULL, total, &c, &o[0]));
  S(add_func(b, "total", 1, o, 1, c.t, NULL));
  /* vectorized add */
  memset(&c, 0, sizeof c);
  S(mlc_te_placeholder(b, "A", SHAPE(I64(1000)), MLC_DTYPE_F32, &c.t[0]));
  S(mlc_te_placeholder(b, "B", SHAPE(I64(1000)), MLC_DTYPE_F32, &c.t[1]));
  S(mlc_te_compute(b, "C", SHAPE(I64(1000)), IJ, vadd, &c, &o[0]));
  S(add_func(b, "vadd", 1, o, 2, c.t, &f));
  if (!set_kind(f, "i", 0, MLC_TIR_FOR_VECTORIZED)) goto fail;
#undef S
  goto done;
fail:
  st = mlc_make_status(MLC_INTERNAL, "test: a loop to mark is missing");
done:
  mlc_te_builder_destroy(b);
  return st;
}

/* By hand: for i in parallel(8): T = workspace[16]; T[j] = A[i, j] * 2; O[i, j] = T[j] + 1 */
static mlc_status build_par_alloc(mlc_tir_module *m) {
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", MLC_DTYPE_F32, 2, (int64_t[]){8, 16}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *O = mlc_tir_buffer_new_c(m, "O", MLC_DTYPE_F32, 2, (int64_t[]){8, 16}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *T = mlc_tir_buffer_new_c(m, "T", MLC_DTYPE_F32, 1, (int64_t[]){16}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *L = mlc_tir_buffer_new_c(m, "L", MLC_DTYPE_F32, 1, (int64_t[]){16}, MLC_TIR_SCOPE_LOCAL);
  mlc_tir_var *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64);
  mlc_tir_var *j = mlc_tir_var_new(m, "j", MLC_DTYPE_I64), *j2 = mlc_tir_var_new(m, "j", MLC_DTYPE_I64);
  mlc_tir_var *j3 = mlc_tir_var_new(m, "j", MLC_DTYPE_I64);
  mlc_tir_stmt *s1 = mlc_tir_for(m, j, I64(0), I64(16), MLC_TIR_FOR_SERIAL, NULL,
                                 mlc_tir_store(m, T, 1, EX(REF(j)), mlc_tir_mul(m, mlc_tir_load(m, A, 2, EX(REF(i), REF(j))), F32C(2))));
  mlc_tir_stmt *s2 = mlc_tir_for(m, j2, I64(0), I64(16), MLC_TIR_FOR_SERIAL, NULL,
                                 mlc_tir_store(m, L, 1, EX(REF(j2)), mlc_tir_add(m, mlc_tir_load(m, T, 1, EX(REF(j2))), F32C(1))));
  mlc_tir_stmt *s3 = mlc_tir_for(m, j3, I64(0), I64(16), MLC_TIR_FOR_SERIAL, NULL,
                                 mlc_tir_store(m, O, 2, EX(REF(i), REF(j3)), mlc_tir_load(m, L, 1, EX(REF(j3)))));
  mlc_tir_stmt *body = mlc_tir_allocate(m, T, mlc_tir_allocate(m, L, mlc_tir_seq(m, 3, (mlc_tir_stmt *[]){s1, s2, s3})));
  body = mlc_tir_for(m, i, I64(0), I64(8), MLC_TIR_FOR_PARALLEL, NULL, body);
  mlc_tir_func *f = mlc_tir_func_new(m, "par_alloc", 2, (mlc_tir_buffer *[]){A, O}, body);
  return mlc_tir_module_add(m, f);
}

/* By hand, a check inside a parallel loop with a workspace live:
**   for i in parallel(1024): T = workspace[1]
**     assert B[i] in [0, 100), ("Gather", "index $0 out of range [$1, $2) at $0", B[i], 0, 100)
**     T[0] = B[i] * 2; O[i] = T[0] */
static mlc_status build_par_assert(mlc_tir_module *m) {
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", MLC_DTYPE_I32, 1, (int64_t[]){1024}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *O = mlc_tir_buffer_new_c(m, "O", MLC_DTYPE_I64, 1, (int64_t[]){1024}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *T = mlc_tir_buffer_new_c(m, "T", MLC_DTYPE_I64, 1, (int64_t[]){1}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = mlc_tir_var_new(m, "i", MLC_DTYPE_I64);
  mlc_tir_expr *v = mlc_tir_cast(m, MLC_DTYPE_I64, mlc_tir_load(m, B, 1, EX(REF(i))));
  mlc_tir_expr *ok = mlc_tir_binary(m, MLC_TIR_LT, mlc_tir_cast(m, MLC_DTYPE_U64, v), mlc_tir_int(m, MLC_DTYPE_U64, 100));
  mlc_tir_stmt *chk = mlc_tir_assert(m, ok, "Gather", "index $0 out of range [$1, $2)", 3,
                                     (mlc_tir_expr *[]){v, I64(0), I64(100)});
  mlc_tir_stmt *st = mlc_tir_store(m, T, 1, EX(I64(0)), mlc_tir_mul(m, v, I64(2)));
  mlc_tir_stmt *out = mlc_tir_store(m, O, 1, EX(REF(i)), mlc_tir_load(m, T, 1, EX(I64(0))));
  mlc_tir_stmt *body = mlc_tir_allocate(m, T, mlc_tir_seq(m, 3, (mlc_tir_stmt *[]){chk, st, out}));
  body = mlc_tir_for(m, i, I64(0), I64(1024), MLC_TIR_FOR_PARALLEL, NULL, body);
  mlc_tir_func *f = mlc_tir_func_new(m, "par_assert", 2, (mlc_tir_buffer *[]){B, O}, body);
  return mlc_tir_module_add(m, f);
}

/* ---- the suite's shared library ------------------------------------------------------------------ */

static lib kl;
static mlc_tir_module *km;

static int suite_init(void) {
  tmpdir = mlc_test_tmpdir();
  if (!tmpdir) return 1;
  if (mlc_tir_module_create(mlc_allocator_default(), &km)) return 1;
  mlc_status st = build_kernels(km);
  if (!st) st = build_par_alloc(km);
  if (!st) st = build_par_assert(km);
  /* code generation reads the lowered form; without compaction, so the
  ** small scratch buffers these tests allocate stay workspace allocations */
  mlc_tir_lower_options lo = {1, 0, 1};
  if (!st) st = mlc_tir_lower_module(km, &lo);
  if (st) {
    printf("building kernels: %s\n", mlc_status_message(st));
    mlc_status_free(st);
    return 1;
  }
  return 0;
}

static int suite_clean(void) {
  unload(&kl);
  mlc_tir_module_destroy(km);
  if (tmpdir) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    free(tmpdir);
  }
  return 0;
}

/* Loads the kernel library once (the first test that needs it). */
static int need_lib(void) {
  if (kl.handle) return 1;
  return load_module(km, &kl);
}

/* ---- tests --------------------------------------------------------------------------------------- */

static void test_add_bcast(void) {
  if (!need_lib()) return;
  tensor A, B, C;
  tensor_init(&A, MLC_DTYPE_F32, 3, (int64_t[]){4, 3, 32});
  T2(&B, MLC_DTYPE_F32, 3, 1);
  tensor_init(&C, MLC_DTYPE_F32, 3, (int64_t[]){4, 3, 32});
  fill_f32(&A, -2, 2);
  fill_f32(&B, -2, 2);
  test_ctx c;
  ctx_init(&c, &serial_api);
  CU_ASSERT_EQUAL(CALL(sym(&kl, "add_bcast"), &c, &A, &B, &C), 0);
  float want[384];
  const float *a = A.t.data, *bb = B.t.data;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 32; k++) want[(i * 3 + j) * 32 + k] = a[(i * 3 + j) * 32 + k] + bb[j];
  CU_ASSERT_EQUAL(cmp_f32("C", C.t.data, want, 384), 0);
  /* byte_offset is honoured */
  float *base = calloc(384 + 16, 4);
  memcpy(base + 16, A.t.data, 384 * 4);
  void *save = A.t.data;
  A.t.data = base;
  A.t.byte_offset = 64;
  memset(C.t.data, 0, 384 * 4);
  CU_ASSERT_EQUAL(CALL(sym(&kl, "add_bcast"), &c, &A, &B, &C), 0);
  CU_ASSERT_EQUAL(cmp_f32("C (offset)", C.t.data, want, 384), 0);
  A.t.data = save;
  free(base);
  ctx_fini(&c);
  tensor_fini(&A);
  tensor_fini(&B);
  tensor_fini(&C);
}

static void ref_mm_relu(const float *a, const float *b, float *c) {
  for (int i = 0; i < 128; i++)
    for (int j = 0; j < 128; j++) {
      float y = 0;
      for (int k = 0; k < 128; k++) y = y + a[i * 128 + k] * b[k * 128 + j];
      c[i * 128 + j] = y > 0 ? y : 0;
    }
}

static void test_mm_relu(void) {
  if (!need_lib()) return;
  tensor A, B, C;
  T2(&A, MLC_DTYPE_F32, 128, 128);
  T2(&B, MLC_DTYPE_F32, 128, 128);
  T2(&C, MLC_DTYPE_F32, 128, 128);
  fill_f32(&A, -1, 1);
  fill_f32(&B, -1, 1);
  float *want = malloc(128 * 128 * 4);
  ref_mm_relu(A.t.data, B.t.data, want);
  static const char *const names[2] = {"mm_relu", "mm_relu_par"};
  for (int v = 0; v < 2; v++)
    for (int api = 0; api < 2; api++) {
      test_ctx c;
      ctx_init(&c, api ? &threaded_api : &serial_api);
      memset(C.t.data, 0, 128 * 128 * 4);
      CU_ASSERT_EQUAL(CALL(sym(&kl, names[v]), &c, &A, &B, &C), 0);
      CU_ASSERT_EQUAL(cmp_f32(names[v], C.t.data, want, 128 * 128), 0);
      CU_ASSERT_EQUAL(c.allocs, 1); /* Y from the workspace */
      CU_ASSERT_EQUAL(c.frees, 1);
      CU_ASSERT_EQUAL(c.par_calls, v ? 2 : 0);
      if (v && !api) CU_ASSERT_EQUAL(c.chunks, 6);
      ctx_fini(&c);
    }
  free(want);
  tensor_fini(&A);
  tensor_fini(&B);
  tensor_fini(&C);
}

static void test_reductions(void) {
  if (!need_lib()) return;
  test_ctx c;
  ctx_init(&c, &serial_api);
  /* row sum */
  tensor A, S;
  T2(&A, MLC_DTYPE_F32, 16, 37);
  T1(&S, MLC_DTYPE_F32, 16);
  fill_f32(&A, -3, 3);
  CU_ASSERT_EQUAL(CALL(sym(&kl, "row_sum"), &c, &A, &S), 0);
  float want[32];
  const float *a = A.t.data;
  for (int i = 0; i < 16; i++) {
    float s = 0;
    for (int k = 0; k < 37; k++) s += a[i * 37 + k];
    want[i] = s;
  }
  CU_ASSERT_EQUAL(cmp_f32("row_sum", S.t.data, want, 16), 0);
  tensor_fini(&A);
  tensor_fini(&S);
  /* unrolled inner loop */
  T2(&A, MLC_DTYPE_F32, 32, 4);
  T1(&S, MLC_DTYPE_F32, 32);
  fill_f32(&A, -3, 3);
  CU_ASSERT_EQUAL(CALL(sym(&kl, "row_sum_unroll"), &c, &A, &S), 0);
  a = A.t.data;
  for (int i = 0; i < 32; i++) want[i] = ((0.0f + a[i * 4]) + a[i * 4 + 1]) + a[i * 4 + 2] + a[i * 4 + 3];
  CU_ASSERT_EQUAL(cmp_f32("row_sum_unroll", S.t.data, want, 32), 0);
  tensor_fini(&A);
  tensor_fini(&S);
  /* conv2d */
  tensor I, W, O;
  tensor_init(&I, MLC_DTYPE_F32, 4, (int64_t[]){2, 3, 8, 8});
  tensor_init(&W, MLC_DTYPE_F32, 4, (int64_t[]){4, 3, 3, 3});
  tensor_init(&O, MLC_DTYPE_F32, 4, (int64_t[]){2, 4, 8, 8});
  fill_f32(&I, -1, 1);
  fill_f32(&W, -1, 1);
  CU_ASSERT_EQUAL(CALL(sym(&kl, "conv2d"), &c, &I, &W, &O), 0);
  const float *in = I.t.data, *w = W.t.data;
  float *ow = malloc(2 * 4 * 64 * 4);
  for (int n = 0; n < 2; n++)
    for (int k = 0; k < 4; k++)
      for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++) {
          float s = 0;
          for (int rc = 0; rc < 3; rc++)
            for (int ry = 0; ry < 3; ry++)
              for (int rx = 0; rx < 3; rx++) {
                int yy = y + ry - 1, xx = x + rx - 1;
                float v = (yy >= 0 && yy < 8 && xx >= 0 && xx < 8) ? in[((n * 3 + rc) * 8 + yy) * 8 + xx] : 0.0f;
                s = s + v * w[((k * 3 + rc) * 3 + ry) * 3 + rx];
              }
          ow[((n * 4 + k) * 8 + y) * 8 + x] = s;
        }
  CU_ASSERT_EQUAL(cmp_f32("conv2d", O.t.data, ow, 2 * 4 * 64), 0);
  free(ow);
  tensor_fini(&I);
  tensor_fini(&W);
  tensor_fini(&O);
  /* rank 0 output, float64 */
  tensor X, T;
  T2(&X, MLC_DTYPE_F32, 5, 7);
  tensor_init(&T, MLC_DTYPE_F64, 0, NULL);
  T.t.shape = NULL;
  fill_f32(&X, -1, 1);
  CU_ASSERT_EQUAL(CALL(sym(&kl, "total"), &c, &X, &T), 0);
  double tw = 0;
  for (int i = 0; i < 35; i++) tw += (double)((float *)X.t.data)[i];
  CU_ASSERT_DOUBLE_EQUAL(*(double *)T.t.data, tw, 1e-12);
  tensor_fini(&X);
  tensor_fini(&T);
  ctx_fini(&c);
}

static void test_math(void) {
  if (!need_lib()) return;
  tensor A, M[6];
  T1(&A, MLC_DTYPE_F32, 64);
  float *a = A.t.data;
  for (int i = 0; i < 64; i++) a[i] = (float)(i - 32) / 8.0f; /* includes exact halves for round */
  for (int v = 0; v < 6; v++) T1(&M[v], MLC_DTYPE_F32, 64);
  test_ctx c;
  ctx_init(&c, &serial_api);
  CU_ASSERT_EQUAL(CALL(sym(&kl, "math"), &c, &A, &M[0], &M[1], &M[2], &M[3], &M[4], &M[5]), 0);
  float want[6][64];
  for (int i = 0; i < 64; i++) {
    float x = a[i], ax = fabsf(x);
    want[0][i] = expf(x);
    want[1][i] = tanhf(x);
    want[2][i] = erff(x);
    want[3][i] = 1.0f / (1.0f + expf(-x));
    want[4][i] = sqrtf(ax) + rintf(x * 2.5f) + floorf(x);
    want[5][i] = powf(ax, 1.5f) + logf(ax + 1.0f) + sinf(x) * cosf(x);
  }
  static const char *const what[6] = {"exp", "tanh", "erf", "sigmoid", "sqrt+round+floor", "pow+log+sin*cos"};
  for (int v = 0; v < 6; v++) CU_ASSERT_EQUAL(cmp_f32(what[v], M[v].t.data, want[v], 64), 0);
  ctx_fini(&c);
  tensor_fini(&A);
  for (int v = 0; v < 6; v++) tensor_fini(&M[v]);
}

static void test_ints(void) {
  if (!need_lib()) return;
  test_ctx c;
  ctx_init(&c, &serial_api);
  /* int64 with floor and trunc division, zero and -1 divisors, min/max */
  tensor A, B, C;
  T1(&A, MLC_DTYPE_I64, 40);
  T1(&B, MLC_DTYPE_I64, 40);
  T1(&C, MLC_DTYPE_I64, 40);
  int64_t *a = A.t.data, *b = B.t.data, *cc = C.t.data;
  for (int i = 0; i < 40; i++) {
    a[i] = (int64_t)(rnd() % 2001) - 1000;
    b[i] = (int64_t)(rnd() % 41) - 20;
  }
  b[0] = 0, b[1] = -1, a[2] = INT64_MIN, b[2] = -1, a[3] = -7, b[3] = 2;
  CU_ASSERT_EQUAL(CALL(sym(&kl, "int64_ops"), &c, &A, &B, &C), 0);
  int bad = 0;
  for (int i = 0; i < 40; i++) {
    uint64_t r = (uint64_t)a[i] * (uint64_t)b[i];
    r += (uint64_t)ref_floordiv(a[i], 3);
    r -= (uint64_t)ref_floormod(b[i], 5);
    r += (uint64_t)ref_truncdiv(a[i], b[i]);
    r += (uint64_t)ref_truncmod(a[i], 7);
    r += (uint64_t)(a[i] < b[i] ? a[i] : b[i]);
    r -= (uint64_t)(a[i] > 2 ? a[i] : 2);
    r += (uint64_t)ref_floordiv(a[i], b[i]);
    if ((int64_t)r != cc[i] && bad++ == 0)
      printf("\n  int64 [%d] a=%lld b=%lld: got %lld want %lld\n", i, (long long)a[i], (long long)b[i],
             (long long)cc[i], (long long)r);
  }
  CU_ASSERT_EQUAL(bad, 0);
  tensor_fini(&A);
  tensor_fini(&B);
  tensor_fini(&C);
  /* uint8: unsigned compare, wrapping, bool output, division by zero */
  tensor U, V, W, D, E;
  T1(&U, MLC_DTYPE_U8, 64);
  T1(&V, MLC_DTYPE_U8, 64);
  T1(&W, MLC_DTYPE_U8, 64);
  T1(&D, MLC_DTYPE_BOOL, 64);
  T1(&E, MLC_DTYPE_U8, 64);
  uint8_t *u = U.t.data, *v = V.t.data;
  for (int i = 0; i < 64; i++) {
    u[i] = (uint8_t)rnd();
    v[i] = (uint8_t)rnd();
  }
  u[0] = 200, v[0] = 100, u[1] = 100, v[1] = 200, v[2] = 0, u[3] = 101, u[4] = 100;
  CU_ASSERT_EQUAL(CALL(sym(&kl, "uint8_ops"), &c, &U, &V, &W, &D, &E), 0);
  const uint8_t *w = W.t.data, *d = D.t.data, *e = E.t.data;
  bad = 0;
  for (int i = 0; i < 64; i++) {
    uint8_t wc = (uint8_t)(u[i] > v[i] ? u[i] - v[i] : u[i] + v[i]);
    uint8_t dc = u[i] > 100;
    uint8_t ec = v[i] ? u[i] / v[i] : 0;
    if ((w[i] != wc || d[i] != dc || e[i] != ec) && bad++ == 0)
      printf("\n  uint8 [%d] %u %u: got %u %u %u want %u %u %u\n", i, u[i], v[i], w[i], d[i], e[i], wc, dc, ec);
  }
  CU_ASSERT_EQUAL(bad, 0);
  tensor_fini(&U);
  tensor_fini(&V);
  tensor_fini(&W);
  tensor_fini(&D);
  tensor_fini(&E);
  ctx_fini(&c);
}

static void test_half(void) {
  if (!need_lib()) return;
  for (int h = 0; h < 2; h++) {
    mlc_dtype dt = h ? MLC_DTYPE_BF16 : MLC_DTYPE_F16;
    uint16_t (*to)(float) = h ? f2bf : f2h;
    float (*from)(uint16_t) = h ? bf2f : h2f;
    tensor A, B, X, C, F, H;
    T1(&A, dt, 50);
    T1(&B, dt, 50);
    T1(&X, MLC_DTYPE_F32, 50);
    T1(&C, dt, 50);
    T1(&F, MLC_DTYPE_F32, 50);
    T1(&H, dt, 50);
    uint16_t *a = A.t.data, *b = B.t.data;
    float *x = X.t.data;
    for (int i = 0; i < 50; i++) {
      a[i] = to(frand(-8, 8));
      b[i] = to(frand(-8, 8));
      x[i] = frand(-100, 100);
    }
    x[0] = 1.0f + 1.0f / 2048; /* a tie for float16: rounds to even */
    x[1] = 65504.0f;           /* float16 max; times 3 overflows to inf */
    x[2] = 1e-7f;              /* a float16 subnormal */
    x[3] = NAN;
    test_ctx c;
    ctx_init(&c, &serial_api);
    CU_ASSERT_EQUAL(CALL(sym(&kl, h ? "bf16_ops" : "f16_ops"), &c, &A, &B, &X, &C, &F, &H), 0);
    const uint16_t *cc = C.t.data, *hh = H.t.data;
    const float *ff = F.t.data;
    int bad = 0;
    for (int i = 0; i < 50; i++) {
      uint16_t wc = to(from(a[i]) * from(b[i]) + 1.0f);
      float wf = from(a[i]) * 2.0f;
      uint16_t wh = to(x[i] * 3.0f);
      int nan_ok = isnan(x[i]) && isnan(from(hh[i]));
      if ((cc[i] != wc || ff[i] != wf || (hh[i] != wh && !nan_ok)) && bad++ == 0)
        printf("\n  %s [%d]: got %04x %g %04x want %04x %g %04x\n", mlc_dtype_name(dt), i, cc[i], (double)ff[i], hh[i],
               wc, (double)wf, wh);
    }
    CU_ASSERT_EQUAL(bad, 0);
    ctx_fini(&c);
    tensor_fini(&A);
    tensor_fini(&B);
    tensor_fini(&X);
    tensor_fini(&C);
    tensor_fini(&F);
    tensor_fini(&H);
  }
}

static void test_symbolic(void) {
  if (!need_lib()) return;
  static const int ns[3] = {5, 13, 1};
  for (int v = 0; v < 2; v++)
    for (int k = 0; k < 3; k++) {
      int n = ns[k];
      tensor A, B, S;
      T2(&A, MLC_DTYPE_F32, n, 8);
      T2(&B, MLC_DTYPE_F32, n, 8);
      T1(&S, MLC_DTYPE_F32, 8);
      fill_f32(&A, -2, 2);
      test_ctx c;
      ctx_init(&c, v ? &threaded_api : &serial_api);
      CU_ASSERT_EQUAL(CALL(sym(&kl, v ? "sym_scale_par" : "sym_scale"), &c, &A, &B, &S), 0);
      float wb[13 * 8], ws[8] = {0};
      const float *a = A.t.data;
      for (int i = 0; i < n * 8; i++) wb[i] = a[i] * 2.0f + 1.0f;
      for (int j = 0; j < 8; j++)
        for (int i = 0; i < n; i++) ws[j] += a[i * 8 + j];
      CU_ASSERT_EQUAL(cmp_f32("sym B", B.t.data, wb, (size_t)n * 8), 0);
      CU_ASSERT_EQUAL(cmp_f32("sym S", S.t.data, ws, 8), 0);
      CU_ASSERT_EQUAL(c.par_calls, v ? 1 : 0);
      /* B with another row count: a shape error naming the kernel */
      tensor B2;
      T2(&B2, MLC_DTYPE_F32, n + 1, 8);
      CU_ASSERT_NOT_EQUAL(CALL(sym(&kl, "sym_scale"), &c, &A, &B2, &S), 0);
      CU_ASSERT_STRING_EQUAL(c.err, "kernel sym_scale: argument 1 (B): shape[0] must be n");
      tensor_fini(&B2);
      ctx_fini(&c);
      tensor_fini(&A);
      tensor_fini(&B);
      tensor_fini(&S);
    }
}

static void test_vectorized(void) {
  if (!need_lib()) return;
  tensor A, B, C;
  T1(&A, MLC_DTYPE_F32, 1000);
  T1(&B, MLC_DTYPE_F32, 1000);
  T1(&C, MLC_DTYPE_F32, 1000);
  fill_f32(&A, -5, 5);
  fill_f32(&B, -5, 5);
  test_ctx c;
  ctx_init(&c, &serial_api);
  CU_ASSERT_EQUAL(CALL(sym(&kl, "vadd"), &c, &A, &B, &C), 0);
  float want[1000];
  for (int i = 0; i < 1000; i++) want[i] = ((float *)A.t.data)[i] + ((float *)B.t.data)[i];
  CU_ASSERT_EQUAL(cmp_f32("vadd", C.t.data, want, 1000), 0);
  ctx_fini(&c);
  tensor_fini(&A);
  tensor_fini(&B);
  tensor_fini(&C);
  /* the IR: loop metadata before optimization, vectors after */
  mlc_tir_module *m;
  mlc_target *t;
  if (!OK(mlc_tir_module_create(mlc_allocator_default(), &m))) return;
  mlc_tir_func *f = mlc_tir_module_find(km, "vadd");
  CU_ASSERT(OK(mlc_tir_module_add(m, f)));
  if (OK(mlc_target_host(&t))) {
    char *ir = NULL;
    if (OK(mlc_cg_emit_llvm_ir(m, t, 0, &ir))) {
      CU_ASSERT_PTR_NOT_NULL(strstr(ir, "llvm.loop.vectorize.enable"));
      CU_ASSERT_PTR_NOT_NULL(strstr(ir, "define i32 @vadd(ptr"));
      mlc_cg_free(ir);
    }
    if (OK(mlc_cg_emit_llvm_ir(m, t, 1, &ir))) {
      char want_ty[32];
      snprintf(want_ty, sizeof want_ty, "<%u x float>", t->vector_bits / 32);
      if (strstr(t->features, "+avx512f")) {
        CU_ASSERT_EQUAL(t->vector_bits, 512);
        CU_ASSERT_PTR_NOT_NULL(strstr(ir, "<16 x float>"));
      } else {
        printf("(no avx512f on this host: checking %s) ", want_ty);
        CU_ASSERT_PTR_NOT_NULL(strstr(ir, want_ty));
      }
      mlc_cg_free(ir);
    }
    mlc_target_destroy(t);
  }
  mlc_tir_module_destroy(m); /* f lives in km's arena */
}

static void test_parallel_alloc(void) {
  if (!need_lib()) return;
  tensor A, O;
  T2(&A, MLC_DTYPE_F32, 8, 16);
  T2(&O, MLC_DTYPE_F32, 8, 16);
  fill_f32(&A, -1, 1);
  float want[128];
  for (int i = 0; i < 128; i++) want[i] = ((float *)A.t.data)[i] * 2 + 1;
  for (int api = 0; api < 2; api++) {
    test_ctx c;
    ctx_init(&c, api ? &threaded_api : &serial_api);
    CU_ASSERT_EQUAL(CALL(sym(&kl, "par_alloc"), &c, &A, &O), 0);
    CU_ASSERT_EQUAL(cmp_f32("par_alloc", O.t.data, want, 128), 0);
    CU_ASSERT_EQUAL(c.allocs, 8); /* one T per iteration, on any thread */
    CU_ASSERT_EQUAL(c.frees, 8);
    /* the workspace fails inside the outlined body: the error comes back */
    c.alloc_fail_after = c.allocs + 3;
    CU_ASSERT_NOT_EQUAL(CALL(sym(&kl, "par_alloc"), &c, &A, &O), 0);
    CU_ASSERT_STRING_EQUAL(c.err, "kernel par_alloc: cannot allocate workspace for buffer T");
    CU_ASSERT_EQUAL(c.allocs, c.frees);
    ctx_fini(&c);
  }
  /* mm_relu's scratch Y cannot be allocated */
  tensor X, Y, Z;
  T2(&X, MLC_DTYPE_F32, 128, 128);
  T2(&Y, MLC_DTYPE_F32, 128, 128);
  T2(&Z, MLC_DTYPE_F32, 128, 128);
  test_ctx c;
  ctx_init(&c, &serial_api);
  c.fail_alloc = 1;
  CU_ASSERT_NOT_EQUAL(CALL(sym(&kl, "mm_relu"), &c, &X, &Y, &Z), 0);
  CU_ASSERT_STRING_EQUAL(c.err, "kernel mm_relu: cannot allocate workspace for buffer Y");
  ctx_fini(&c);
  tensor_fini(&X);
  tensor_fini(&Y);
  tensor_fini(&Z);
  tensor_fini(&A);
  tensor_fini(&O);
}

/* An assert failing inside an outlined parallel body: the kernel returns
** nonzero, check_failed got the op, message and values, and every
** workspace taken was freed (serial and threaded). */
static void test_parallel_assert(void) {
  if (!need_lib()) return;
  const mlc_rt_api *apis[2] = {&serial_api, &threaded_api};
  for (int k = 0; k < 2; k++) {
    test_ctx c;
    tensor B, O;
    ctx_init(&c, apis[k]);
    T1(&B, MLC_DTYPE_I32, 1024);
    T1(&O, MLC_DTYPE_I64, 1024);
    int32_t *b = B.t.data;
    for (int j = 0; j < 1024; j++) b[j] = j % 100;
    CU_ASSERT_EQUAL(CALL(sym(&kl, "par_assert"), &c, &B, &O), 0);
    int bad = 0;
    for (int j = 0; j < 1024; j++) bad += ((int64_t *)O.t.data)[j] != 2 * (j % 100);
    CU_ASSERT_EQUAL(bad, 0);
    b[700] = 100;
    CU_ASSERT_NOT_EQUAL(CALL(sym(&kl, "par_assert"), &c, &B, &O), 0);
    CU_ASSERT_STRING_EQUAL(c.err, "Gather: index $0 out of range [$1, $2) [100 0 100]");
    b[700] = 0;
    b[3] = -1;
    CU_ASSERT_NOT_EQUAL(CALL(sym(&kl, "par_assert"), &c, &B, &O), 0);
    CU_ASSERT_STRING_EQUAL(c.err, "Gather: index $0 out of range [$1, $2) [-1 0 100]");
    CU_ASSERT_EQUAL(c.allocs, c.frees);
    if (k == 1) CU_ASSERT(c.par_calls > 0);
    tensor_fini(&B);
    tensor_fini(&O);
    ctx_fini(&c);
  }
}

static void test_bad_args(void) {
  if (!need_lib()) return;
  mlc_kernel_fn fn = sym(&kl, "mm_relu");
  tensor A, B, C, D;
  T2(&A, MLC_DTYPE_F32, 128, 128);
  T2(&B, MLC_DTYPE_F32, 128, 128);
  T2(&C, MLC_DTYPE_F32, 128, 128);
  T2(&D, MLC_DTYPE_F64, 128, 128);
  test_ctx c;
  ctx_init(&c, &serial_api);
  CU_ASSERT_NOT_EQUAL(CALL(fn, &c, &A, &B), 0);
  CU_ASSERT_STRING_EQUAL(c.err, "kernel mm_relu: expected 3 arguments");
  void *args[3] = {&A.t, &B.t, &C.t};
  int32_t codes[3] = {MLC_ARG_TENSOR, MLC_ARG_INT, MLC_ARG_TENSOR};
  CU_ASSERT_NOT_EQUAL(fn(args, codes, 3, &c.base), 0);
  CU_ASSERT_STRING_EQUAL(c.err, "kernel mm_relu: argument 1 (B) is not a tensor");
  codes[1] = MLC_ARG_TENSOR;
  args[2] = NULL;
  CU_ASSERT_NOT_EQUAL(fn(args, codes, 3, &c.base), 0);
  CU_ASSERT_STRING_EQUAL(c.err, "kernel mm_relu: argument 2 (C) is NULL");
  CU_ASSERT_NOT_EQUAL(CALL(fn, &c, &A, &D, &C), 0);
  CU_ASSERT_STRING_EQUAL(c.err, "kernel mm_relu: argument 1 (B) must have dtype float32");
  C.t.ndim = 1;
  CU_ASSERT_NOT_EQUAL(CALL(fn, &c, &A, &B, &C), 0);
  CU_ASSERT_STRING_EQUAL(c.err, "kernel mm_relu: argument 2 (C) must have rank 2");
  C.t.ndim = 2;
  C.shape[1] = 127;
  CU_ASSERT_NOT_EQUAL(CALL(fn, &c, &A, &B, &C), 0);
  CU_ASSERT_STRING_EQUAL(c.err, "kernel mm_relu: argument 2 (C): shape[1] must be 128");
  C.shape[1] = 128;
  CU_ASSERT_EQUAL(CALL(fn, &c, &A, &B, &C), 0);
  CU_ASSERT_EQUAL(c.allocs, c.frees);
  ctx_fini(&c);
  tensor_fini(&A);
  tensor_fini(&B);
  tensor_fini(&C);
  tensor_fini(&D);
}

static void test_targets(void) {
  mlc_target *t;
  if (OK(mlc_target_host(&t))) {
    CU_ASSERT(t->vector_bits >= 128);
    CU_ASSERT_STRING_EQUAL(t->spec, "llvm");
    mlc_strbuf b = MLC_STRBUF_INIT;
    mlc_target_describe(t, &b);
    CU_ASSERT_PTR_NOT_NULL(strstr(mlc_sb_str(&b), "-mcpu="));
    mlc_sb_fini(&b);
    mlc_target_destroy(t);
  }
  if (OK(mlc_target_parse("llvm", &t))) mlc_target_destroy(t);
  int x86 = 0;
  if (OK(mlc_target_host(&t))) {
    x86 = strcmp(t->kind->name, "x86_64") == 0;
    mlc_target_destroy(t);
  }
  if (x86) {
    static const struct {
      const char *spec, *cpu;
      unsigned bits;
    } ok[] = {{"llvm -mcpu=znver4", "znver4", 512},
              {"llvm -mcpu=haswell", "haswell", 256},
              {"llvm -mcpu=x86-64", "x86-64", 128},
              {"llvm -mcpu=skylake-avx512 -mattr=-avx512f", "skylake-avx512", 256},
              {"llvm  -mcpu=x86-64  -mattr=+avx2,+fma", "x86-64", 256},
              {"llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=icelake-server", "icelake-server", 512}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
      if (!OK(mlc_target_parse(ok[i].spec, &t))) continue;
      CU_ASSERT_STRING_EQUAL(t->cpu, ok[i].cpu);
      CU_ASSERT_EQUAL(t->vector_bits, ok[i].bits);
      mlc_target_destroy(t);
    }
  }
  EXPECT_ERR(mlc_target_parse("llvm -mcpu=znver9", &t), MLC_INVALID_ARGUMENT, "unknown CPU \"znver9\"",
             x86 ? "did you mean one of: znver1" : "");
  EXPECT_ERR(mlc_target_parse("llvm -mcpu=", &t), MLC_INVALID_ARGUMENT, "empty -mcpu=");
  EXPECT_ERR(mlc_target_parse("llvm -O3", &t), MLC_INVALID_ARGUMENT, "unknown option \"-O3\"");
  EXPECT_ERR(mlc_target_parse("llvm -mattr=avx2", &t), MLC_INVALID_ARGUMENT, "bad -mattr=avx2");
  EXPECT_ERR(mlc_target_parse("tvm", &t), MLC_INVALID_ARGUMENT, "unknown target kind \"tvm\"");
  /* cuda: the host for the launching code, PTX for an architecture */
  if (OK(mlc_target_parse("cuda", &t))) {
    CU_ASSERT_EQUAL(t->device, MLC_TARGET_CUDA);
    CU_ASSERT_STRING_EQUAL(t->device_arch, "sm_75");
    CU_ASSERT_STRING_EQUAL(t->spec, "cuda -arch=sm_75");
    mlc_target_destroy(t);
  }
  if (OK(mlc_target_parse("cuda  -arch=sm_90", &t))) {
    CU_ASSERT_STRING_EQUAL(t->device_arch, "sm_90");
    mlc_target_destroy(t);
  }
  EXPECT_ERR(mlc_target_parse("cuda -arch=sm_35", &t), MLC_INVALID_ARGUMENT, "unknown GPU architecture \"sm_35\"",
             "sm_90");
  EXPECT_ERR(mlc_target_parse("cuda -mcpu=x", &t), MLC_INVALID_ARGUMENT, "unknown option \"-mcpu=x\"");
  EXPECT_ERR(mlc_target_parse("", &t), MLC_INVALID_ARGUMENT, "empty target string");
  EXPECT_ERR(mlc_target_parse("llvm -mtriple=riscv64-unknown-linux-gnu", &t), MLC_INVALID_ARGUMENT,
             "unsupported architecture");
  CU_ASSERT_PTR_NULL(t);
  mlc_target_destroy(NULL);
}

/* A kernel built for an older CPU runs here too; codegen errors are statuses. */
static void test_other_cpu(void) {
  if (!need_lib()) return;
  mlc_target *t;
  if (!OK(mlc_target_host(&t))) return;
  int x86 = strcmp(t->kind->name, "x86_64") == 0;
  mlc_target_destroy(t);
  if (!x86 || !OK(mlc_target_parse("llvm -mcpu=x86-64-v2", &t))) return;
  mlc_tir_module *m;
  if (!OK(mlc_tir_module_create(mlc_allocator_default(), &m))) {
    mlc_target_destroy(t);
    return;
  }
  CU_ASSERT(OK(mlc_tir_module_add(m, mlc_tir_module_find(km, "vadd"))));
  char obj[4096], so[4096], cmd[9000];
  snprintf(obj, sizeof obj, "%s/v2.o", tmpdir);
  snprintf(so, sizeof so, "%s/v2.so", tmpdir);
  if (OK(mlc_cg_build(m, t, obj))) {
    snprintf(cmd, sizeof cmd, "cc -shared -o '%s' '%s' -lm", so, obj);
    CU_ASSERT_EQUAL(system(cmd), 0);
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    CU_ASSERT_PTR_NOT_NULL(h);
    if (h) {
      lib l;
      l.handle = h;
      tensor A, B, C;
      T1(&A, MLC_DTYPE_F32, 1000);
      T1(&B, MLC_DTYPE_F32, 1000);
      T1(&C, MLC_DTYPE_F32, 1000);
      fill_f32(&A, -1, 1);
      fill_f32(&B, -1, 1);
      test_ctx c;
      ctx_init(&c, &serial_api);
      CU_ASSERT_EQUAL(CALL(sym(&l, "vadd"), &c, &A, &B, &C), 0);
      CU_ASSERT(((float *)C.t.data)[999] == ((float *)A.t.data)[999] + ((float *)B.t.data)[999]);
      ctx_fini(&c);
      tensor_fini(&A);
      tensor_fini(&B);
      tensor_fini(&C);
      dlclose(h);
    }
  }
  /* an ill-formed module is rejected by the verifier before LLVM sees it */
  mlc_tir_buffer *X = mlc_tir_buffer_new_c(m, "X", MLC_DTYPE_F32, 1, (int64_t[]){4}, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *g = mlc_tir_var_new(m, "g", MLC_DTYPE_I64);
  mlc_tir_func *bad = mlc_tir_func_new(m, "bad", 1, &X, mlc_tir_store(m, X, 1, EX(REF(g)), F32C(0)));
  CU_ASSERT(OK(mlc_tir_module_add(m, bad)));
  EXPECT_ERR(mlc_cg_build(m, t, obj), MLC_INVALID_ARGUMENT, "prim func \"bad\"", "variable g is used before");
  /* unwritable output path */
  m->nfuncs--;
  EXPECT_ERR(mlc_cg_build(m, t, "/nonexistent-dir/x.o"), MLC_IO_ERROR, "cannot create");
  mlc_tir_module_destroy(m);
  mlc_target_destroy(t);
}

static void test_deterministic(void) {
  mlc_target *t;
  if (!OK(mlc_target_host(&t))) return;
  void *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  if (OK(mlc_cg_build_mem(km, t, &a, &na)) && OK(mlc_cg_build_mem(km, t, &b, &nb))) {
    CU_ASSERT(na > 0);
    CU_ASSERT_EQUAL(na, nb);
    CU_ASSERT(na == nb && memcmp(a, b, na) == 0);
  }
  mlc_cg_free(a);
  mlc_cg_free(b);
  /* an object file on disk has the same bytes */
  char obj[4096];
  snprintf(obj, sizeof obj, "%s/det.o", tmpdir);
  if (OK(mlc_cg_build(km, t, obj)) && OK(mlc_cg_build_mem(km, t, &a, &na))) {
    size_t nf = 0;
    char *d = mlc_test_read_file(obj, &nf);
    CU_ASSERT(d && nf == na && memcmp(d, a, na) == 0);
    free(d);
    mlc_cg_free(a);
  }
  mlc_target_destroy(t);
}

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{"targets", test_targets},
                                      {"add_bcast", test_add_bcast},
                                      {"mm_relu", test_mm_relu},
                                      {"reductions", test_reductions},
                                      {"math", test_math},
                                      {"ints", test_ints},
                                      {"half", test_half},
                                      {"symbolic", test_symbolic},
                                      {"vectorized", test_vectorized},
                                      {"parallel_alloc", test_parallel_alloc},
                                      {"parallel_assert", test_parallel_assert},
                                      {"bad_args", test_bad_args},
                                      {"other_cpu", test_other_cpu},
                                      {"deterministic", test_deterministic},
                                      {NULL, NULL}};
  CU_pSuite s = CU_add_suite("codegen", suite_init, suite_clean);
  if (!s) return;
  for (const CU_TestInfo *t = tests; t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_codegen", fns);
}
