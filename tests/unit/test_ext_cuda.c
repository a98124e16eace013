/*
** test_ext_cuda.c: the CUDA providers' run-time wrappers (extern/rt_cublas.c,
** extern/rt_cublaslt.c, extern/rt_cudnn.c) called directly.
**
** Suite ext_cuda needs no GPU.  Its tensors say kDLCUDA but point at host
** memory that the wrappers never touch: with a table whose cuda_stream is
** missing (a CPU model's) or gives NULL, every wrapper fails naming itself;
** with a stream (a dummy), the argument checks (counts, dtype, device,
** ranks, shapes against the attributes, the bias's shape, overlaps, the
** clips and dilations cuDNN lacks, the activations cuBLASLt's epilogue
** does not take here) fail naming the function and what is wrong; and
** where libcuda.so.1 is absent, a valid call fails naming the library it
** cannot load.  Library names from MLC_CUBLAS_LIBRARY /
** MLC_CUBLASLT_LIBRARY / MLC_CUDNN_LIBRARY / MLC_CUDA_DRIVER_LIBRARY (a
** missing file, a library without the functions) are tried in a fresh
** process (this program, "--child N"), since each provider loads once per
** process.  The matmul wrappers' batch plan (rt_util.h) is checked on the
** host against every batch's offsets computed one by one.
**
** Suite ext_cuda_gpu runs where libcuda.so.1 loads and finds a device (it
** passes with a note elsewhere): a session of the test's own (primary
** context, a stream, device workspaces, session slots whose finalizers run
** at the end) runs matmul with every batch layout, cublaslt.matmul with
** and without its bias and relu over the same layouts, K = 0, a bias of
** shape [1, N], pointers aligned to 4 bytes only, each shape twice (the
** second call takes the cached algorithm) and another bias of the same
** shape, conv2d with groups,
** depthwise, dilation, strides, symmetric and asymmetric pads, bias,
** residual (also in Y's memory), relu and clip(0, 6), pooling (padding,
** ceil mode, count_include_pad both ways, asymmetric pads) and softmax and
** log-softmax on the last and a middle axis, against naive double
** references with float32 tolerances (TF32 would not pass them).  Outputs
** start as NaN, so a wrapper that reads Y where it should not is caught.
*/
#include <cuda.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "extern/rt_ext.h"
#include "extern/rt_util.h"
#include "tests/testutil.h"
#include "tests/unit/ext_conv_ref.h"

/* ---- the test's kernel contexts ----------------------------------------- */

typedef struct tctx {
  mlc_rt_ctx base;
  char err[512];
  void *stream;
  void *slots[MLC_RT_NSLOTS];
  void (*finis[MLC_RT_NSLOTS])(void *);
} tctx;

static int t_parallel_for(mlc_rt_ctx *ctx, int64_t n, mlc_rt_parallel_body body, void *closure) {
  (void)ctx;
  return n > 0 ? body(0, n, closure) : 0;
}

static void *t_ws_alloc(mlc_rt_ctx *ctx, uint64_t n) {
  (void)ctx;
  return malloc(n ? n : 1);
}

static void t_ws_free(mlc_rt_ctx *ctx, void *p) {
  (void)ctx;
  free(p);
}

static int t_set_error(mlc_rt_ctx *ctx, const char *msg) {
  snprintf(((tctx *)ctx)->err, sizeof ((tctx *)ctx)->err, "%s", msg);
  return -1;
}

static int t_check_failed(mlc_rt_ctx *ctx, const char *op, const char *msg, int64_t a, int64_t b, int64_t c) {
  (void)op, (void)a, (void)b, (void)c;
  return t_set_error(ctx, msg);
}

static int t_threads(mlc_rt_ctx *ctx) {
  (void)ctx;
  return 1;
}

static void **t_slot(mlc_rt_ctx *ctx, int32_t key, void (*fini)(void *)) {
  tctx *c = (tctx *)ctx;
  if (key < 0 || key >= MLC_RT_NSLOTS) return NULL;
  c->finis[key] = fini;
  return &c->slots[key];
}

static void *t_stream(mlc_rt_ctx *ctx) { return ((tctx *)ctx)->stream; }

/* A CPU model's table: no cuda_stream. */
static const mlc_rt_api api_cpu = {
    .parallel_for = t_parallel_for, .workspace_alloc = t_ws_alloc, .workspace_free = t_ws_free,
    .set_error = t_set_error, .check_failed = t_check_failed, .num_threads = t_threads, .session_slot = t_slot};
/* A table with cuda_stream, giving the context's stream (NULL or a dummy). */
static const mlc_rt_api api_stream = {
    .parallel_for = t_parallel_for, .workspace_alloc = t_ws_alloc, .workspace_free = t_ws_free,
    .set_error = t_set_error, .check_failed = t_check_failed, .num_threads = t_threads, .session_slot = t_slot,
    .cuda_stream = t_stream};

/* A dummy stream: the checks refuse the call before any library sees it. */
static char dummy_stream;

static void ctx_init(tctx *c, const mlc_rt_api *api, void *stream) {
  memset(c, 0, sizeof *c);
  c->base.api = api;
  c->stream = stream;
}

/* ---- tensors ------------------------------------------------------------ */

typedef struct tens {
  DLTensor t;
  int64_t shape[8];
  float *d;       /* host values */
  CUdeviceptr dp; /* the device copy (GPU suite), or 0 */
} tens;

/* A tensor of |shape| with pseudo-random values in [-1, 1], said to be on
** the GPU (its data the host copy until the GPU suite uploads it). */
static tens *mk(int rank, const int64_t *shape, unsigned seed) {
  tens *x = calloc(1, sizeof *x);
  int64_t n = 1;
  for (int i = 0; i < rank; i++) x->shape[i] = shape[i], n *= shape[i];
  x->d = calloc((size_t)(n ? n : 1), sizeof(float));
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    x->d[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
  }
  x->t.data = x->d;
  x->t.device.device_type = kDLCUDA;
  x->t.ndim = rank;
  x->t.dtype.code = kDLFloat;
  x->t.dtype.bits = 32;
  x->t.dtype.lanes = 1;
  x->t.shape = x->shape;
  return x;
}

static int64_t count(const tens *x) {
  int64_t n = 1;
  for (int i = 0; i < x->t.ndim; i++) n *= x->shape[i];
  return n;
}

/* Calls |fn| with tensors |ts| (|nt|) and ints |iv| (|ni|); its result. */
static int call(mlc_kernel_fn fn, tens **ts, int nt, const int64_t *iv, int ni, tctx *c) {
  void *args[32];
  int32_t codes[32];
  int n = 0;
  for (int i = 0; i < nt; i++) args[n] = &ts[i]->t, codes[n++] = MLC_ARG_TENSOR;
  for (int i = 0; i < ni; i++) args[n] = (void *)&iv[i], codes[n++] = MLC_ARG_INT;
  c->err[0] = 0;
  return fn(args, codes, n, &c->base);
}

/* The error of |c| contains |a| and |b| (either may be NULL). */
static int err_has(const tctx *c, const char *a, const char *b) {
  int ok = (!a || strstr(c->err, a)) && (!b || strstr(c->err, b));
  if (!ok) fprintf(stderr, "\nerror \"%s\": want \"%s\" and \"%s\"\n", c->err, a ? a : "", b ? b : "");
  return ok;
}

#define EXPECT_ERR(rc, c, a, b)   \
  do {                            \
    CU_ASSERT_NOT_EQUAL((rc), 0); \
    CU_ASSERT(err_has((c), (a), (b))); \
  } while (0)

static int64_t f32bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (int64_t)u;
}

/* ---- the valid calls of each wrapper, used by several tests -------------- */

typedef struct call_set {
  tens *t[5];
  int nt;
  int64_t iv[15];
  int ni;
} call_set;

static void set_free(call_set *s) {
  for (int i = 0; i < s->nt; i++)
    if (s->t[i]) free(s->t[i]->d), free(s->t[i]);
  memset(s, 0, sizeof *s);
}

/* matmul [2, 3] x [3, 4] -> [2, 4] */
static void set_matmul(call_set *s) {
  memset(s, 0, sizeof *s);
  s->t[0] = mk(2, (int64_t[]){2, 3}, 1);
  s->t[1] = mk(2, (int64_t[]){3, 4}, 2);
  s->t[2] = mk(2, (int64_t[]){2, 4}, 3);
  s->nt = 3;
}

/* conv 3x3, pad 1: X [1, 4, 6, 6], W [8, 4, 3, 3], bias -> Y [1, 8, 6, 6], relu */
static void set_conv(call_set *s) {
  memset(s, 0, sizeof *s);
  s->t[0] = mk(4, (int64_t[]){1, 4, 6, 6}, 1);
  s->t[1] = mk(4, (int64_t[]){8, 4, 3, 3}, 2);
  s->t[2] = mk(1, (int64_t[]){8}, 3);
  s->t[3] = mk(4, (int64_t[]){1, 8, 6, 6}, 4);
  s->nt = 4;
  int64_t iv[15] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, f32bits(-3e38f), f32bits(3e38f), 1};
  memcpy(s->iv, iv, sizeof iv);
  s->ni = 15;
}

/* cublaslt.matmul [2, 3] x [3, 4] + bias [4], relu -> [2, 4] */
static void set_matmul_lt(call_set *s) {
  memset(s, 0, sizeof *s);
  s->t[0] = mk(2, (int64_t[]){2, 3}, 1);
  s->t[1] = mk(2, (int64_t[]){3, 4}, 2);
  s->t[2] = mk(1, (int64_t[]){4}, 3);
  s->t[3] = mk(2, (int64_t[]){2, 4}, 4);
  s->nt = 4;
  s->iv[0] = 1; /* has_bias */
  s->iv[1] = 1; /* relu */
  s->ni = 2;
}

/* pool 3x3, stride 2, pad 1: X [1, 2, 8, 8] -> Y [1, 2, 4, 4] */
static void set_pool(call_set *s) {
  memset(s, 0, sizeof *s);
  s->t[0] = mk(4, (int64_t[]){1, 2, 8, 8}, 1);
  s->t[1] = mk(4, (int64_t[]){1, 2, 4, 4}, 2);
  s->nt = 2;
  int64_t iv[11] = {3, 3, 1, 1, 1, 1, 2, 2, 1, 1, 0};
  memcpy(s->iv, iv, sizeof(int64_t) * 11);
  s->ni = 11;
}

/* softmax over axis 1 of [2, 5, 3] */
static void set_softmax(call_set *s) {
  memset(s, 0, sizeof *s);
  s->t[0] = mk(3, (int64_t[]){2, 5, 3}, 1);
  s->t[1] = mk(3, (int64_t[]){2, 5, 3}, 2);
  s->nt = 2;
  s->iv[0] = 1;
  s->iv[1] = 0;
  s->ni = 2;
}

typedef struct wrapper {
  const char *name; /* as errors name it */
  mlc_kernel_fn fn;
  void (*set)(call_set *s);
  const char *lib;  /* the provider's library, as its load errors name it */
} wrapper;

static const wrapper wrappers[] = {
    {"cublas.matmul", mlc_ext_cublas_matmul, set_matmul, "libcublas"},
    {"cudnn.conv2d", mlc_ext_cudnn_conv2d, set_conv, "libcudnn"},
    {"cudnn.max_pool2d", mlc_ext_cudnn_max_pool2d, set_pool, "libcudnn"},
    {"cudnn.avg_pool2d", mlc_ext_cudnn_avg_pool2d, set_pool, "libcudnn"},
    {"cudnn.softmax", mlc_ext_cudnn_softmax, set_softmax, "libcudnn"},
    {"cublaslt.matmul", mlc_ext_cublaslt_matmul, set_matmul_lt, "libcublasLt"},
};
#define NWRAPPERS ((int)(sizeof wrappers / sizeof wrappers[0]))

/* ---- no stream: a CPU model's session ------------------------------------ */

static void test_no_stream(void) {
  for (int i = 0; i < NWRAPPERS; i++) {
    call_set s;
    wrappers[i].set(&s);
    tctx c;
    ctx_init(&c, &api_cpu, NULL); /* no cuda_stream in the table */
    EXPECT_ERR(call(wrappers[i].fn, s.t, s.nt, s.iv, s.ni, &c), &c, wrappers[i].name, "no CUDA stream");
    ctx_init(&c, &api_stream, NULL); /* cuda_stream gives NULL */
    EXPECT_ERR(call(wrappers[i].fn, s.t, s.nt, s.iv, s.ni, &c), &c, wrappers[i].name, "no CUDA stream");
    for (int k = 0; k < MLC_RT_NSLOTS; k++) CU_ASSERT_PTR_NULL(c.slots[k]); /* nothing made */
    set_free(&s);
  }
}

/* ---- argument checks ------------------------------------------------------ */

static void test_matmul_checks(void) {
  tctx c;
  ctx_init(&c, &api_stream, &dummy_stream);
  call_set s;
  set_matmul(&s);
  mlc_kernel_fn fn = mlc_ext_cublas_matmul;
  EXPECT_ERR(call(fn, s.t, 2, NULL, 0, &c), &c, "cublas.matmul", "takes A, B and Y (2 arguments)");
  int64_t one = 1;
  EXPECT_ERR(call(fn, s.t, 3, &one, 1, &c), &c, "cublas.matmul", "takes A, B and Y (4 arguments)");
  s.t[1]->t.dtype.bits = 64;
  EXPECT_ERR(call(fn, s.t, 3, NULL, 0, &c), &c, "cublas.matmul", "compact float32");
  s.t[1]->t.dtype.bits = 32;
  s.t[2]->t.device.device_type = kDLCPU;
  EXPECT_ERR(call(fn, s.t, 3, NULL, 0, &c), &c, "cublas.matmul", "CUDA device memory");
  s.t[2]->t.device.device_type = kDLCUDA;
  s.t[0]->t.ndim = 1;
  EXPECT_ERR(call(fn, s.t, 3, NULL, 0, &c), &c, "cublas.matmul", "ranks 1 x 2 -> 2");
  s.t[0]->t.ndim = 2;
  s.t[1]->shape[0] = 5; /* K 3 against 5 */
  EXPECT_ERR(call(fn, s.t, 3, NULL, 0, &c), &c, "cublas.matmul", "shapes disagree");
  s.t[1]->shape[0] = 3;
  s.t[2]->shape[1] = 5; /* N */
  EXPECT_ERR(call(fn, s.t, 3, NULL, 0, &c), &c, "cublas.matmul", "[.., 2, 5]: shapes disagree");
  s.t[2]->shape[1] = 4;
  void *keep = s.t[2]->t.data;
  s.t[2]->t.data = s.t[0]->d; /* Y over A */
  EXPECT_ERR(call(fn, s.t, 3, NULL, 0, &c), &c, "cublas.matmul", "Y overlaps A");
  s.t[2]->t.data = keep;
  set_free(&s);
  /* batch dims that do not broadcast */
  tens *a = mk(3, (int64_t[]){2, 3, 4}, 1), *b = mk(3, (int64_t[]){3, 4, 5}, 2), *y = mk(3, (int64_t[]){2, 3, 5}, 3);
  tens *ts[3] = {a, b, y};
  EXPECT_ERR(call(fn, ts, 3, NULL, 0, &c), &c, "cublas.matmul", "batch dim 0: 2 and 3 do not broadcast to 2");
  /* an empty Y: nothing to do, nothing loaded */
  b->shape[0] = 2, y->shape[2] = 0, b->shape[2] = 0;
  CU_ASSERT_EQUAL(call(fn, ts, 3, NULL, 0, &c), 0);
  CU_ASSERT_STRING_EQUAL(c.err, "");
  for (int i = 0; i < 3; i++) free(ts[i]->d), free(ts[i]);
  CU_ASSERT_PTR_NULL(c.slots[MLC_RT_SLOT_CUBLAS]);
}

static void test_matmul_lt_checks(void) {
  tctx c;
  ctx_init(&c, &api_stream, &dummy_stream);
  call_set s;
  set_matmul_lt(&s);
  mlc_kernel_fn fn = mlc_ext_cublaslt_matmul;
  const char *name = "cublaslt.matmul";
  EXPECT_ERR(call(fn, s.t, 4, s.iv, 1, &c), &c, name, "takes A, B, [bias], Y, has_bias and act (5 arguments)");
  EXPECT_ERR(call(fn, s.t, 2, s.iv, 2, &c), &c, name, "(4 arguments)");
  s.iv[0] = 0;
  EXPECT_ERR(call(fn, s.t, 4, s.iv, 2, &c), &c, name, "4 tensors for has_bias 0");
  s.iv[0] = 1;
  tens *nob[3] = {s.t[0], s.t[1], s.t[3]};
  EXPECT_ERR(call(fn, nob, 3, s.iv, 2, &c), &c, name, "3 tensors for has_bias 1");
  s.iv[1] = 2; /* clip */
  EXPECT_ERR(call(fn, s.t, 4, s.iv, 2, &c), &c, name, "act 2: cuBLASLt's epilogue here is none (0) or relu (1)");
  s.iv[1] = 1;
  s.t[2]->t.dtype.bits = 16;
  EXPECT_ERR(call(fn, s.t, 4, s.iv, 2, &c), &c, name, "compact float32");
  s.t[2]->t.dtype.bits = 32;
  s.t[2]->t.device.device_type = kDLCPU;
  EXPECT_ERR(call(fn, s.t, 4, s.iv, 2, &c), &c, name, "CUDA device memory");
  s.t[2]->t.device.device_type = kDLCUDA;
  s.t[1]->shape[0] = 5; /* K 3 against 5 */
  EXPECT_ERR(call(fn, s.t, 4, s.iv, 2, &c), &c, name, "shapes disagree");
  s.t[1]->shape[0] = 3;
  /* the bias: N values along Y's last axis, leading dims 1 */
  s.t[2]->shape[0] = 5;
  EXPECT_ERR(call(fn, s.t, 4, s.iv, 2, &c), &c, name, "the bias must be 4 values along Y's last axis");
  s.t[2]->shape[0] = 2, s.t[2]->shape[1] = 4, s.t[2]->t.ndim = 2; /* a bias along M too */
  EXPECT_ERR(call(fn, s.t, 4, s.iv, 2, &c), &c, name, "([4] or [1, .., 4])");
  s.t[2]->shape[0] = 4, s.t[2]->t.ndim = 1;
  void *keep = s.t[3]->t.data;
  s.t[3]->t.data = s.t[2]->d; /* Y over the bias */
  EXPECT_ERR(call(fn, s.t, 4, s.iv, 2, &c), &c, name, "Y overlaps the bias");
  s.t[3]->t.data = s.t[1]->d; /* Y over B */
  EXPECT_ERR(call(fn, s.t, 4, s.iv, 2, &c), &c, name, "Y overlaps B");
  s.t[3]->t.data = keep;
  /* an empty Y: nothing to do, nothing loaded */
  s.t[0]->shape[0] = 0, s.t[3]->shape[0] = 0;
  CU_ASSERT_EQUAL(call(fn, s.t, 4, s.iv, 2, &c), 0);
  CU_ASSERT_STRING_EQUAL(c.err, "");
  set_free(&s);
  for (int k = 0; k < MLC_RT_NSLOTS; k++) CU_ASSERT_PTR_NULL(c.slots[k]);
}

/* The batch plan of a matmul [ra] x [rb] -> [ry]: the outer loop's offsets
** and the inner batches' strides give each batch of Y, in order, the
** offsets into A and B that broadcasting gives it. */
static void plan_case(int ra, const int64_t *sa, int rb, const int64_t *sb, int ry, const int64_t *sy,
                      int64_t want_inner, int want_tall) {
  tens *a = mk(ra, sa, 1), *b = mk(rb, sb, 2), *y = mk(ry, sy, 3);
  tctx c;
  ctx_init(&c, &api_stream, &dummy_stream);
  mlc_ext_mm mm;
  CU_ASSERT_EQUAL_FATAL(mlc_ext_matmul_shapes(&c.base, "test", &a->t, &b->t, &y->t, &mm), 0);
  mlc_ext_mm_plan p;
  mlc_ext_mm_plan_make(&mm, &y->t, &p);
  CU_ASSERT_EQUAL(p.inner, want_inner);
  CU_ASSERT_EQUAL(p.tall, want_tall);
  CU_ASSERT_EQUAL(p.outer * p.inner, mm.nbatch);
  int64_t m = mm.m, n = mm.n, k = mm.k, bad = 0;
  for (int64_t bi = 0; bi < mm.nbatch; bi++) {
    /* the batch's offsets one by one, as numpy broadcasts */
    int64_t ao = 0, bo = 0, rem = bi, as = m * k, bs = k * n;
    for (int d = ry - 3; d >= 0; d--) {
      int64_t i = rem % sy[d];
      rem /= sy[d];
      int da = d - (ry - ra), db = d - (ry - rb);
      if (da >= 0) {
        if (sa[da] != 1) ao += i * as;
        as *= sa[da];
      }
      if (db >= 0) {
        if (sb[db] != 1) bo += i * bs;
        bs *= sb[db];
      }
    }
    int64_t o = bi / p.inner, in = bi % p.inner, pa, pb;
    mlc_ext_mm_outer(&mm, &y->t, &p, o, &pa, &pb);
    if (pa + in * p.sa != ao || pb + in * p.sb != bo) bad++;
  }
  CU_ASSERT_EQUAL(bad, 0);
  free(a->d), free(a), free(b->d), free(b), free(y->d), free(y);
}

static void test_matmul_plan(void) {
  plan_case(2, (int64_t[]){3, 5}, 2, (int64_t[]){5, 7}, 2, (int64_t[]){3, 7}, 1, 0);
  plan_case(4, (int64_t[]){2, 3, 17, 33}, 2, (int64_t[]){33, 65}, 4, (int64_t[]){2, 3, 17, 65}, 6, 1); /* tall */
  plan_case(4, (int64_t[]){4, 1, 8, 16}, 3, (int64_t[]){3, 16, 9}, 4, (int64_t[]){4, 3, 8, 9}, 3, 0); /* loop + strided */
  plan_case(2, (int64_t[]){7, 3}, 3, (int64_t[]){5, 3, 2}, 3, (int64_t[]){5, 7, 2}, 5, 0);          /* A shared */
  plan_case(3, (int64_t[]){6, 4, 5}, 3, (int64_t[]){6, 5, 3}, 3, (int64_t[]){6, 4, 3}, 6, 0);       /* both batched */
  plan_case(4, (int64_t[]){2, 1, 4, 5}, 4, (int64_t[]){1, 3, 5, 6}, 4, (int64_t[]){2, 3, 4, 6}, 3, 0); /* crossed */
  plan_case(4, (int64_t[]){1, 2, 4, 5}, 4, (int64_t[]){3, 1, 5, 6}, 4, (int64_t[]){3, 2, 4, 6}, 2, 1); /* tall, looped */
  plan_case(5, (int64_t[]){2, 1, 3, 4, 5}, 3, (int64_t[]){3, 5, 6}, 5, (int64_t[]){2, 1, 3, 4, 6}, 3, 0); /* a 1 between */
  plan_case(3, (int64_t[]){1, 4, 5}, 3, (int64_t[]){1, 5, 6}, 3, (int64_t[]){1, 4, 6}, 1, 0);       /* one batch */
}

static void test_conv_checks(void) {
  tctx c;
  ctx_init(&c, &api_stream, &dummy_stream);
  call_set s;
  set_conv(&s);
  mlc_kernel_fn fn = mlc_ext_cudnn_conv2d;
  EXPECT_ERR(call(fn, s.t, s.nt, s.iv, 14, &c), &c, "cudnn.conv2d", "15 ints (18 arguments)");
  EXPECT_ERR(call(fn, s.t, 3, s.iv, 15, &c), &c, "cudnn.conv2d", "3 tensors for has_bias 1");
  s.t[3]->shape[3] = 5; /* Y's width */
  EXPECT_ERR(call(fn, s.t, s.nt, s.iv, 15, &c), &c, "cudnn.conv2d", "the convolution gives [1, 8, 6, 6]");
  s.t[3]->shape[3] = 6;
  s.iv[2] = 3; /* groups 3 for 4 channels */
  EXPECT_ERR(call(fn, s.t, s.nt, s.iv, 15, &c), &c, "cudnn.conv2d", "groups 3: they disagree");
  s.iv[2] = 1;
  s.t[2]->shape[0] = 7;
  EXPECT_ERR(call(fn, s.t, s.nt, s.iv, 15, &c), &c, "cudnn.conv2d", "bias has 7 values for 8 filters");
  s.t[2]->shape[0] = 8;
  s.t[1]->t.dtype.code = kDLInt;
  EXPECT_ERR(call(fn, s.t, s.nt, s.iv, 15, &c), &c, "cudnn.conv2d", "compact float32");
  s.t[1]->t.dtype.code = kDLFloat;
  s.t[0]->t.device.device_type = kDLCPU;
  EXPECT_ERR(call(fn, s.t, s.nt, s.iv, 15, &c), &c, "cudnn.conv2d", "CUDA device memory");
  s.t[0]->t.device.device_type = kDLCUDA;
  /* clip: only clip(0, max > 0) */
  s.iv[11] = 2, s.iv[12] = f32bits(-1.0f), s.iv[13] = f32bits(1.0f);
  EXPECT_ERR(call(fn, s.t, s.nt, s.iv, 15, &c), &c, "cudnn.conv2d", "clip(-1, 1) is not supported");
  s.iv[12] = f32bits(0.0f), s.iv[13] = f32bits(-2.0f);
  EXPECT_ERR(call(fn, s.t, s.nt, s.iv, 15, &c), &c, "cudnn.conv2d", "clip(0, -2) is not supported");
  s.iv[11] = 1;
  s.iv[7] = 0; /* stride 0 */
  EXPECT_ERR(call(fn, s.t, s.nt, s.iv, 15, &c), &c, "cudnn.conv2d", "bad attributes");
  s.iv[7] = 1;
  void *keep = s.t[3]->t.data;
  s.t[3]->t.data = s.t[0]->d; /* Y over X */
  EXPECT_ERR(call(fn, s.t, s.nt, s.iv, 15, &c), &c, "cudnn.conv2d", "Y overlaps its input X");
  s.t[3]->t.data = keep;
  set_free(&s);
  CU_ASSERT_PTR_NULL(c.slots[MLC_RT_SLOT_CUDNN]);
}

static void test_pool_checks(void) {
  tctx c;
  ctx_init(&c, &api_stream, &dummy_stream);
  for (int is_max = 0; is_max < 2; is_max++) {
    mlc_kernel_fn fn = is_max ? mlc_ext_cudnn_max_pool2d : mlc_ext_cudnn_avg_pool2d;
    const char *name = is_max ? "cudnn.max_pool2d" : "cudnn.avg_pool2d";
    call_set s;
    set_pool(&s);
    EXPECT_ERR(call(fn, s.t, 2, s.iv, 10, &c), &c, name, "takes X, Y and 11 ints (12 arguments)");
    s.t[0]->t.ndim = 3;
    EXPECT_ERR(call(fn, s.t, 2, s.iv, 11, &c), &c, name, "rank 4");
    s.t[0]->t.ndim = 4;
    s.iv[8] = 2; /* dilation */
    EXPECT_ERR(call(fn, s.t, 2, s.iv, 11, &c), &c, name, "dilations 2 x 1: cuDNN pooling has no dilation");
    s.iv[8] = 1;
    s.t[1]->shape[2] = 6;
    EXPECT_ERR(call(fn, s.t, 2, s.iv, 11, &c), &c, name, "Y [.., 6, 4] does not follow from X [.., 8, 8]");
    s.t[1]->shape[2] = 4;
    s.t[1]->shape[1] = 3;
    EXPECT_ERR(call(fn, s.t, 2, s.iv, 11, &c), &c, name, "batch or channels");
    s.t[1]->shape[1] = 2;
    s.iv[0] = 0;
    EXPECT_ERR(call(fn, s.t, 2, s.iv, 11, &c), &c, name, "bad attributes");
    s.iv[0] = 3;
    void *keep = s.t[1]->t.data;
    s.t[1]->t.data = s.t[0]->d;
    EXPECT_ERR(call(fn, s.t, 2, s.iv, 11, &c), &c, name, "Y overlaps X");
    s.t[1]->t.data = keep;
    set_free(&s);
  }
  /* count_include_pad with ceil mode's extra padding: X 8, kernel 3, stride 2, no pads, Y 4 */
  tens *x = mk(4, (int64_t[]){1, 1, 8, 8}, 1), *y = mk(4, (int64_t[]){1, 1, 4, 4}, 2);
  tens *ts[2] = {x, y};
  int64_t iv[11] = {3, 3, 0, 0, 0, 0, 2, 2, 1, 1, 1};
  EXPECT_ERR(call(mlc_ext_cudnn_avg_pool2d, ts, 2, iv, 11, &c), &c, "cudnn.avg_pool2d",
             "count_include_pad with ceil_mode's extra padding");
  free(x->d), free(x), free(y->d), free(y);
  CU_ASSERT_PTR_NULL(c.slots[MLC_RT_SLOT_CUDNN]);
}

static void test_softmax_checks(void) {
  tctx c;
  ctx_init(&c, &api_stream, &dummy_stream);
  call_set s;
  set_softmax(&s);
  mlc_kernel_fn fn = mlc_ext_cudnn_softmax;
  EXPECT_ERR(call(fn, s.t, 2, s.iv, 1, &c), &c, "cudnn.softmax", "takes X, Y, axis and log (3 arguments)");
  s.iv[0] = 3;
  EXPECT_ERR(call(fn, s.t, 2, s.iv, 2, &c), &c, "cudnn.softmax", "bad axis 3 or log 0");
  s.iv[0] = 1, s.iv[1] = 2;
  EXPECT_ERR(call(fn, s.t, 2, s.iv, 2, &c), &c, "cudnn.softmax", "bad axis 1 or log 2");
  s.iv[1] = 1;
  s.t[1]->shape[2] = 4;
  EXPECT_ERR(call(fn, s.t, 2, s.iv, 2, &c), &c, "cudnn.softmax", "Y's shape differs from X's");
  s.t[1]->shape[2] = 3;
  s.t[1]->t.ndim = 2;
  EXPECT_ERR(call(fn, s.t, 2, s.iv, 2, &c), &c, "cudnn.softmax", "one rank");
  s.t[1]->t.ndim = 3;
  s.t[0]->t.device.device_type = kDLCPU;
  EXPECT_ERR(call(fn, s.t, 2, s.iv, 2, &c), &c, "cudnn.softmax", "CUDA device memory");
  s.t[0]->t.device.device_type = kDLCUDA;
  /* an empty tensor: nothing to do, nothing loaded */
  s.t[0]->shape[0] = s.t[1]->shape[0] = 0;
  CU_ASSERT_EQUAL(call(fn, s.t, 2, s.iv, 2, &c), 0);
  set_free(&s);
  CU_ASSERT_PTR_NULL(c.slots[MLC_RT_SLOT_CUDNN]);
}

/* ---- loading -------------------------------------------------------------- */

static int have_driver(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return h != NULL;
}

/* Without the driver: each valid call fails naming what it cannot load,
** every time (the provider loads once per process). */
static void test_loading_no_driver(void) {
  if (have_driver()) {
    printf("(libcuda.so.1 loads here: the GPU suite runs instead) ");
    return;
  }
  for (int i = 0; i < NWRAPPERS; i++) {
    call_set s;
    wrappers[i].set(&s);
    tctx c;
    ctx_init(&c, &api_stream, &dummy_stream);
    for (int rep = 0; rep < 2; rep++) {
      EXPECT_ERR(call(wrappers[i].fn, s.t, s.nt, s.iv, s.ni, &c), &c, wrappers[i].name, ": cannot load ");
      /* the provider's library if it is absent too, else the driver */
      CU_ASSERT(strstr(c.err, "libcuda.so.1") || strstr(c.err, wrappers[i].lib));
    }
    for (int k = 0; k < MLC_RT_NSLOTS; k++) CU_ASSERT_PTR_NULL(c.slots[k]);
    set_free(&s);
  }
}

/* Runs wrapper |w|'s valid call in a fresh process (this program again,
** "--child INDEX", with |env|=|val| set): its error message into |out|
** (empty when it succeeded). */
static void child_call(const wrapper *w, const char *env, const char *val, char *out, size_t n) {
  int fd[2];
  out[0] = 0;
  if (pipe(fd) != 0) return;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], 1);
    setenv(env, val, 1);
    char idx[16];
    snprintf(idx, sizeof idx, "%d", (int)(w - wrappers));
    execl("/proc/self/exe", "test_ext_cuda", "--child", idx, (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  size_t got = 0;
  ssize_t r;
  while (pid > 0 && got + 1 < n && (r = read(fd[0], out + got, n - 1 - got)) > 0) got += (size_t)r;
  out[got] = 0;
  close(fd[0]);
  if (pid > 0) waitpid(pid, NULL, 0);
}

/* The child of child_call: wrapper |i|'s valid call; its error on stdout. */
static int child_main(int i) {
  if (i < 0 || i >= NWRAPPERS) return 2;
  call_set s;
  wrappers[i].set(&s);
  tctx c;
  ctx_init(&c, &api_stream, &dummy_stream);
  if (call(wrappers[i].fn, s.t, s.nt, s.iv, s.ni, &c)) fputs(c.err, stdout);
  set_free(&s);
  return 0;
}

static int msg_has(const char *msg, const char *a, const char *b) {
  int ok = strstr(msg, a) && (!b || strstr(msg, b));
  if (!ok) fprintf(stderr, "\nerror \"%s\": want \"%s\" and \"%s\"\n", msg, a, b ? b : "");
  return ok;
}

/* The library names the environment gives: a missing file, a library
** without the functions; each error names the library and why. */
static void test_loading_names(void) {
  char msg[600];
  const wrapper *mm = &wrappers[0], *cv = &wrappers[1], *sm = &wrappers[4], *lt = &wrappers[5];
  child_call(mm, "MLC_CUBLAS_LIBRARY", "/nonexistent/libcublas.so.13", msg, sizeof msg);
  CU_ASSERT(msg_has(msg, "cublas.matmul: cannot load /nonexistent/libcublas.so.13 (", "[from MLC_CUBLAS_LIBRARY]"));
  CU_ASSERT(msg_has(msg, "No such file", NULL));
  child_call(mm, "MLC_CUBLAS_LIBRARY", "libm.so.6", msg, sizeof msg);
  CU_ASSERT(msg_has(msg, "cublas.matmul: libm.so.6 has no cublasCreate_v2", NULL));
  child_call(lt, "MLC_CUBLASLT_LIBRARY", "/nonexistent/libcublasLt.so.13", msg, sizeof msg);
  CU_ASSERT(msg_has(msg, "cublaslt.matmul: cannot load /nonexistent/libcublasLt.so.13 (", "[from MLC_CUBLASLT_LIBRARY]"));
  CU_ASSERT(msg_has(msg, "No such file", NULL));
  child_call(lt, "MLC_CUBLASLT_LIBRARY", "libm.so.6", msg, sizeof msg);
  CU_ASSERT(msg_has(msg, "cublaslt.matmul: libm.so.6 has no cublasLtCreate", NULL));
  child_call(cv, "MLC_CUDNN_LIBRARY", "/nonexistent/libcudnn.so.9", msg, sizeof msg);
  CU_ASSERT(msg_has(msg, "cudnn.conv2d: cannot load /nonexistent/libcudnn.so.9 (", "[from MLC_CUDNN_LIBRARY]"));
  child_call(sm, "MLC_CUDNN_LIBRARY", "libm.so.6", msg, sizeof msg);
  CU_ASSERT(msg_has(msg, "cudnn.softmax: libm.so.6 has no cudnnActivationForward", NULL));
  /* the driver, where the provider's library itself loads */
  void *cublas = dlopen("libcublas.so.13", RTLD_LAZY | RTLD_LOCAL), *cudnn = dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_LOCAL);
  if (cublas) {
    child_call(mm, "MLC_CUDA_DRIVER_LIBRARY", "/nonexistent/libcuda.so.1", msg, sizeof msg);
    CU_ASSERT(msg_has(msg, "cublas.matmul: cannot load /nonexistent/libcuda.so.1 (", "[from MLC_CUDA_DRIVER_LIBRARY]"));
  }
  void *cublaslt = dlopen("libcublasLt.so.13", RTLD_LAZY | RTLD_LOCAL);
  if (cublaslt) {
    child_call(lt, "MLC_CUDA_DRIVER_LIBRARY", "/nonexistent/libcuda.so.1", msg, sizeof msg);
    CU_ASSERT(msg_has(msg, "cublaslt.matmul: cannot load /nonexistent/libcuda.so.1 (", "[from MLC_CUDA_DRIVER_LIBRARY]"));
    child_call(lt, "MLC_CUDA_DRIVER_LIBRARY", "libm.so.6", msg, sizeof msg);
    CU_ASSERT(msg_has(msg, "cublaslt.matmul: libm.so.6 has no cuGetErrorName", NULL));
  }
  if (cudnn) {
    child_call(cv, "MLC_CUDA_DRIVER_LIBRARY", "libm.so.6", msg, sizeof msg);
    CU_ASSERT(msg_has(msg, "cudnn.conv2d: libm.so.6 has no cuGetErrorName", NULL));
  }
  if (!cublas || !cudnn || !cublaslt) printf("(cuBLAS, cuBLASLt or cuDNN absent: their driver checks skipped) ");
}

/* ---- the GPU suite ---------------------------------------------------------- */

#define CU_FNS(X)                 \
  X(cuInit)                       \
  X(cuDeviceGetCount)             \
  X(cuDeviceGet)                  \
  X(cuDevicePrimaryCtxRetain)     \
  X(cuDevicePrimaryCtxRelease_v2) \
  X(cuCtxSetCurrent)              \
  X(cuStreamCreate)               \
  X(cuStreamDestroy_v2)           \
  X(cuStreamSynchronize)          \
  X(cuMemAlloc_v2)                \
  X(cuMemFree_v2)                 \
  X(cuMemcpyHtoD_v2)              \
  X(cuMemcpyDtoH_v2)              \
  X(cuGetErrorName)

static struct {
  int tried, ok;
  CUdevice dev;
  CUcontext cx;
  CUstream st;
#define X(f) __typeof__(f) *f;
  CU_FNS(X)
#undef X
} G;

/* The GPU suite's session; its slots' finalizers run at the suite's end. */
static tctx gs;

/* Opens the GPU once (gs runs on its stream): 1 when there is one to run on. */
static int gpu(void) {
  if (G.tried) return G.ok;
  G.tried = 1;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return 0;
#define X(f)                                  \
  {                                           \
    void *p = dlsym(h, #f);                   \
    if (!p) return 0;                         \
    memcpy(&G.f, &p, sizeof p);               \
  }
  CU_FNS(X)
#undef X
  int n = 0;
  if (G.cuInit(0) != CUDA_SUCCESS || G.cuDeviceGetCount(&n) != CUDA_SUCCESS || n < 1) return 0;
  if (G.cuDeviceGet(&G.dev, 0) != CUDA_SUCCESS || G.cuDevicePrimaryCtxRetain(&G.cx, G.dev) != CUDA_SUCCESS) return 0;
  if (G.cuCtxSetCurrent(G.cx) != CUDA_SUCCESS || G.cuStreamCreate(&G.st, 0) != CUDA_SUCCESS) return 0;
  gs.stream = G.st;
  G.ok = 1;
  return 1;
}

static void *g_ws_alloc(mlc_rt_ctx *ctx, uint64_t n) {
  (void)ctx;
  CUdeviceptr p = 0;
  return G.cuMemAlloc_v2(&p, n ? n : 1) == CUDA_SUCCESS ? (void *)(uintptr_t)p : NULL;
}

static void g_ws_free(mlc_rt_ctx *ctx, void *p) {
  (void)ctx;
  G.cuStreamSynchronize(G.st);
  G.cuMemFree_v2((CUdeviceptr)(uintptr_t)p);
}

static const mlc_rt_api api_gpu = {
    .parallel_for = t_parallel_for, .workspace_alloc = g_ws_alloc, .workspace_free = g_ws_free,
    .set_error = t_set_error, .check_failed = t_check_failed, .num_threads = t_threads, .session_slot = t_slot,
    .cuda_stream = t_stream};


static void session_end(tctx *c) {
  for (int k = 0; k < MLC_RT_NSLOTS; k++)
    if (c->slots[k] && c->finis[k]) c->finis[k](c->slots[k]), c->slots[k] = NULL;
}

/* Uploads |x| (its device copy becomes its data). */
static int up(tens *x) {
  size_t b = sizeof(float) * (size_t)(count(x) ? count(x) : 1);
  if (!x->dp && G.cuMemAlloc_v2(&x->dp, b) != CUDA_SUCCESS) return 0;
  x->t.data = (void *)(uintptr_t)x->dp;
  return !count(x) || G.cuMemcpyHtoD_v2(x->dp, x->d, sizeof(float) * (size_t)count(x)) == CUDA_SUCCESS;
}

/* Fills |x|'s host copy with NaN and uploads it. */
static int up_nan(tens *x) {
  for (int64_t i = 0; i < count(x); i++) x->d[i] = NAN;
  return up(x);
}

static int down(tens *x) {
  return G.cuStreamSynchronize(G.st) == CUDA_SUCCESS &&
         (!count(x) || G.cuMemcpyDtoH_v2(x->d, x->dp, sizeof(float) * (size_t)count(x)) == CUDA_SUCCESS);
}

static void rm(tens *x) {
  if (!x) return;
  if (x->dp) G.cuMemFree_v2(x->dp);
  free(x->d);
  free(x);
}

static int close_to(const float *got, const float *want, int64_t n, const char *what) {
  for (int64_t i = 0; i < n; i++)
    if (!(fabsf(got[i] - want[i]) <= 1e-4f + 1e-4f * fabsf(want[i]))) {
      fprintf(stderr, "\n%s: element %lld: %g, want %g\n", what, (long long)i, got[i], want[i]);
      return 0;
    }
  return 1;
}

/* Runs |fn| on the GPU: the tensors uploaded (the last, the output, as
** NaN unless |keep_out|), then the output read back. */
static int gpu_run(mlc_kernel_fn fn, tens **ts, int nt, const int64_t *iv, int ni, int keep_out, const char *what) {
  for (int i = 0; i < nt - 1; i++)
    if (!up(ts[i])) return 0;
  if (!(keep_out ? up(ts[nt - 1]) : up_nan(ts[nt - 1]))) return 0;
  int rc = call(fn, ts, nt, iv, ni, &gs);
  if (rc) fprintf(stderr, "\n%s: %s\n", what, gs.err);
  return rc == 0 && down(ts[nt - 1]);
}

/* -- matmul -- */

static void ref_matmul(const tens *a, const tens *b, tens *y) {
  int r = y->t.ndim;
  int64_t m = y->shape[r - 2], n = y->shape[r - 1], k = a->shape[a->t.ndim - 1];
  int64_t nb = m > 0 && n > 0 ? count(y) / (m * n) : 0;
  for (int64_t bi = 0; bi < nb; bi++) {
    int64_t ao = 0, bo = 0, rem = bi, as = m * k, bs = k * n;
    for (int d = r - 3; d >= 0; d--) {
      int64_t i = rem % y->shape[d];
      rem /= y->shape[d];
      int da = d - (r - a->t.ndim), db = d - (r - b->t.ndim);
      if (da >= 0) {
        if (a->shape[da] != 1) ao += i * as;
        as *= a->shape[da];
      }
      if (db >= 0) {
        if (b->shape[db] != 1) bo += i * bs;
        bs *= b->shape[db];
      }
    }
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t q = 0; q < k; q++) s += (double)a->d[ao + i * k + q] * b->d[bo + q * n + j];
        y->d[bi * m * n + i * n + j] = (float)s;
      }
  }
}

static void matmul_case(int ra, const int64_t *sa, int rb, const int64_t *sb, int ry, const int64_t *sy) {
  tens *a = mk(ra, sa, 1), *b = mk(rb, sb, 2), *y = mk(ry, sy, 3), *want = mk(ry, sy, 4);
  ref_matmul(a, b, want);
  tens *ts[3] = {a, b, y};
  char what[64];
  snprintf(what, sizeof what, "matmul %dx%d->%d M %lld", ra, rb, ry, (long long)sy[ry - 2]);
  CU_ASSERT(gpu_run(mlc_ext_cublas_matmul, ts, 3, NULL, 0, 0, what));
  CU_ASSERT(close_to(y->d, want->d, count(y), what));
  rm(a), rm(b), rm(y), rm(want);
}

static void test_gpu_matmul(void) {
  if (!gpu()) {
    printf("(no CUDA device: skipped) ");
    return;
  }
  matmul_case(2, (int64_t[]){3, 5}, 2, (int64_t[]){5, 7}, 2, (int64_t[]){3, 7});
  matmul_case(2, (int64_t[]){64, 256}, 2, (int64_t[]){256, 96}, 2, (int64_t[]){64, 96});
  matmul_case(4, (int64_t[]){2, 3, 17, 33}, 2, (int64_t[]){33, 65}, 4, (int64_t[]){2, 3, 17, 65}); /* tall */
  matmul_case(4, (int64_t[]){4, 1, 8, 16}, 3, (int64_t[]){3, 16, 9}, 4, (int64_t[]){4, 3, 8, 9});  /* loop + strided */
  matmul_case(3, (int64_t[]){2, 64, 128}, 2, (int64_t[]){128, 96}, 3, (int64_t[]){2, 64, 96});
  matmul_case(2, (int64_t[]){1, 200}, 2, (int64_t[]){200, 300}, 2, (int64_t[]){1, 300});
  matmul_case(2, (int64_t[]){7, 3}, 3, (int64_t[]){5, 3, 2}, 3, (int64_t[]){5, 7, 2});             /* A shared */
  matmul_case(3, (int64_t[]){6, 4, 5}, 3, (int64_t[]){6, 5, 3}, 3, (int64_t[]){6, 4, 3});          /* both batched */
  matmul_case(4, (int64_t[]){2, 1, 4, 5}, 4, (int64_t[]){1, 3, 5, 6}, 4, (int64_t[]){2, 3, 4, 6}); /* crossed */
  matmul_case(2, (int64_t[]){3, 0}, 2, (int64_t[]){0, 4}, 2, (int64_t[]){3, 4});                   /* K = 0 */
  /* a second session has a handle of its own */
  tctx other;
  ctx_init(&other, &api_gpu, G.st);
  tens *a = mk(2, (int64_t[]){4, 4}, 5), *b = mk(2, (int64_t[]){4, 4}, 6), *y = mk(2, (int64_t[]){4, 4}, 7);
  tens *ts[3] = {a, b, y};
  CU_ASSERT(up(a) && up(b) && up(y));
  CU_ASSERT_EQUAL(call(mlc_ext_cublas_matmul, ts, 3, NULL, 0, &other), 0);
  CU_ASSERT_PTR_NOT_NULL(other.slots[MLC_RT_SLOT_CUBLAS]);
  CU_ASSERT_PTR_NOT_NULL(gs.slots[MLC_RT_SLOT_CUBLAS]);
  CU_ASSERT(other.slots[MLC_RT_SLOT_CUBLAS] != gs.slots[MLC_RT_SLOT_CUBLAS]);
  CU_ASSERT(down(y));
  session_end(&other);
  rm(a), rm(b), rm(y);
}

/* -- cublaslt.matmul -- */

/* Uploads |x| |shift| floats into a device buffer of its own (its data the
** buffer, its byte_offset the shift); NaN in place of its values if |nan|. */
static int up_at(tens *x, int shift, int nan) {
  int64_t cnt = count(x);
  float *h = calloc((size_t)(cnt + shift + 1), sizeof(float));
  if (!h) return 0;
  for (int64_t i = 0; i < cnt; i++) h[shift + i] = nan ? NAN : x->d[i];
  int ok = x->dp || G.cuMemAlloc_v2(&x->dp, sizeof(float) * (size_t)(cnt + shift + 1)) == CUDA_SUCCESS;
  ok = ok && G.cuMemcpyHtoD_v2(x->dp, h, sizeof(float) * (size_t)(cnt + shift + 1)) == CUDA_SUCCESS;
  x->t.data = (void *)(uintptr_t)x->dp;
  x->t.byte_offset = sizeof(float) * (uint64_t)shift;
  free(h);
  return ok;
}

/* Reads |x| back from where up_at put it. */
static int down_at(tens *x, int shift) {
  int64_t cnt = count(x);
  float *h = calloc((size_t)(cnt + shift + 1), sizeof(float));
  int ok = h && G.cuStreamSynchronize(G.st) == CUDA_SUCCESS &&
           G.cuMemcpyDtoH_v2(h, x->dp, sizeof(float) * (size_t)(cnt + shift + 1)) == CUDA_SUCCESS;
  if (ok) memcpy(x->d, h + shift, sizeof(float) * (size_t)cnt);
  free(h);
  return ok;
}

/* Y = act(A B + bias) against ref_matmul, the bias of rank |bias_rank|
** ([N] or [1, N]; 0: none); A, B, Y and the bias |shift| floats past the
** start of their device buffers, so that with a shift cuBLASLt gets
** pointers aligned to 4 bytes only.  Three calls: the second takes the cached
** algorithm, the third another bias of the same shape. */
static void lt_case(int ra, const int64_t *sa, int rb, const int64_t *sb, int ry, const int64_t *sy, int bias_rank,
                    int relu, int shift) {
  int64_t n = sy[ry - 1], bshape[2] = {1, n};
  tens *a = mk(ra, sa, 41), *b = mk(rb, sb, 42), *y = mk(ry, sy, 43), *want = mk(ry, sy, 44);
  tens *bias[2] = {NULL, NULL};
  if (bias_rank) bias[0] = mk(bias_rank, bshape + 2 - bias_rank, 45), bias[1] = mk(bias_rank, bshape + 2 - bias_rank, 46);
  int64_t iv[2] = {bias_rank != 0, relu};
  char what[96];
  snprintf(what, sizeof what, "cublaslt %dx%d->%d M %lld N %lld bias rank %d relu %d shift %d", ra, rb, ry,
           (long long)sy[ry - 2], (long long)n, bias_rank, relu, shift);
  for (int rep = 0; rep < 3; rep++) {
    tens *bi = bias[rep == 2];
    ref_matmul(a, b, want);
    for (int64_t i = 0; i < count(want); i++) {
      float v = want->d[i] + (bi ? bi->d[i % n] : 0.0f);
      want->d[i] = relu && v < 0 ? 0.0f : v;
    }
    tens *ts[4];
    int nt = 0;
    ts[nt++] = a, ts[nt++] = b;
    if (bi) ts[nt++] = bi;
    ts[nt++] = y;
    CU_ASSERT_FATAL(up_at(a, shift, 0) && up_at(b, shift, 0) && up_at(y, shift, 1) && (!bi || up_at(bi, shift, 0)));
    int rc = call(mlc_ext_cublaslt_matmul, ts, nt, iv, 2, &gs);
    if (rc) fprintf(stderr, "\n%s: %s\n", what, gs.err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_FATAL(down_at(y, shift));
    CU_ASSERT(close_to(y->d, want->d, count(y), what));
  }
  rm(a), rm(b), rm(y), rm(want), rm(bias[0]), rm(bias[1]);
}

static void test_gpu_matmul_lt(void) {
  if (!gpu()) {
    printf("(no CUDA device: skipped) ");
    return;
  }
  /* ra, A, rb, B, ry, Y, bias rank (0: none), relu, shift */
  lt_case(2, (int64_t[]){3, 5}, 2, (int64_t[]){5, 7}, 2, (int64_t[]){3, 7}, 1, 0, 0);
  lt_case(2, (int64_t[]){64, 256}, 2, (int64_t[]){256, 96}, 2, (int64_t[]){64, 96}, 1, 1, 0);
  lt_case(2, (int64_t[]){64, 256}, 2, (int64_t[]){256, 96}, 2, (int64_t[]){64, 96}, 0, 1, 0);  /* relu alone */
  lt_case(2, (int64_t[]){64, 256}, 2, (int64_t[]){256, 96}, 2, (int64_t[]){64, 96}, 0, 0, 0);  /* plain */
  lt_case(2, (int64_t[]){1, 200}, 2, (int64_t[]){200, 300}, 2, (int64_t[]){1, 300}, 2, 1, 0); /* bias [1, N] */
  lt_case(3, (int64_t[]){1, 16, 32}, 2, (int64_t[]){32, 64}, 3, (int64_t[]){1, 16, 64}, 1, 1, 0); /* the encoder's */
  lt_case(4, (int64_t[]){2, 3, 17, 33}, 2, (int64_t[]){33, 65}, 4, (int64_t[]){2, 3, 17, 65}, 1, 1, 0); /* tall */
  lt_case(4, (int64_t[]){4, 1, 8, 16}, 3, (int64_t[]){3, 16, 9}, 4, (int64_t[]){4, 3, 8, 9}, 1, 1, 0);  /* loop + strided */
  lt_case(2, (int64_t[]){7, 3}, 3, (int64_t[]){5, 3, 2}, 3, (int64_t[]){5, 7, 2}, 1, 0, 0);             /* A shared */
  lt_case(3, (int64_t[]){6, 4, 5}, 3, (int64_t[]){6, 5, 3}, 3, (int64_t[]){6, 4, 3}, 2, 1, 0);          /* both batched */
  lt_case(4, (int64_t[]){2, 1, 4, 5}, 4, (int64_t[]){1, 3, 5, 6}, 4, (int64_t[]){2, 3, 4, 6}, 1, 1, 0); /* crossed */
  lt_case(2, (int64_t[]){33, 65}, 2, (int64_t[]){65, 31}, 2, (int64_t[]){33, 31}, 1, 1, 1);            /* 4-byte aligned */
  lt_case(3, (int64_t[]){2, 9, 17}, 3, (int64_t[]){2, 17, 5}, 3, (int64_t[]){2, 9, 5}, 1, 1, 3);       /* batched, 4-byte */
  lt_case(2, (int64_t[]){3, 0}, 2, (int64_t[]){0, 4}, 2, (int64_t[]){3, 4}, 1, 0, 0);                  /* K = 0: the bias */
  lt_case(3, (int64_t[]){2, 3, 0}, 2, (int64_t[]){0, 4}, 3, (int64_t[]){2, 3, 4}, 1, 1, 0);            /* K = 0, relu */
  lt_case(2, (int64_t[]){3, 0}, 2, (int64_t[]){0, 4}, 2, (int64_t[]){3, 4}, 0, 0, 0);                  /* K = 0: zeros */
}

/* -- conv2d -- */


static void conv_case(conv_p p) {
  int64_t oh, ow;
  conv_out_hw(&p, &oh, &ow);
  tens *x = mk(4, (int64_t[]){p.n, p.c, p.h, p.w}, 11), *w = mk(4, (int64_t[]){p.k, p.c / p.g, p.kh, p.kw}, 12);
  tens *b = mk(1, (int64_t[]){p.k}, 13), *r = mk(4, (int64_t[]){p.n, p.k, oh, ow}, 14);
  tens *y = mk(4, (int64_t[]){p.n, p.k, oh, ow}, 15), *want = mk(4, (int64_t[]){p.n, p.k, oh, ow}, 16);
  conv_ref(&p, x->d, w->d, b->d, r->d, want->d);
  int64_t iv[15] = {p.dh, p.dw, p.g, p.pt, p.pl, p.pb, p.pr, p.sh, p.sw, p.bias, p.res, p.act,
                    f32bits(p.act == 2 ? p.lo : -3e38f), f32bits(p.act == 2 ? p.hi : 3e38f), 1};
  tens *ts[5];
  int nt = 0;
  ts[nt++] = x;
  ts[nt++] = w;
  if (p.bias) ts[nt++] = b;
  if (p.res && !p.res_in_y) ts[nt++] = r;
  if (p.res_in_y) { /* Y holds the residual; R is Y's memory */
    memcpy(y->d, r->d, sizeof(float) * (size_t)count(y));
    ts[nt++] = y;
  }
  ts[nt++] = y;
  char what[128];
  snprintf(what, sizeof what, "conv2d %lldx%lld s%lld g%lld d%lld pads %lld %lld %lld %lld b%d r%d a%d",
           (long long)p.kh, (long long)p.kw, (long long)p.sh, (long long)p.g, (long long)p.dh, (long long)p.pt,
           (long long)p.pl, (long long)p.pb, (long long)p.pr, p.bias, p.res, p.act);
  for (int rep = 0; rep < 2; rep++) { /* the second call takes the cached entry */
    if (p.res_in_y) memcpy(y->d, r->d, sizeof(float) * (size_t)count(y));
    CU_ASSERT(gpu_run(mlc_ext_cudnn_conv2d, ts, nt, iv, 15, p.res_in_y, what));
    CU_ASSERT(close_to(y->d, want->d, count(y), what));
  }
  rm(x), rm(w), rm(b), rm(r), rm(y), rm(want);
}

static void test_gpu_conv(void) {
  if (!gpu()) {
    printf("(no CUDA device: skipped) ");
    return;
  }
  /* n c h w k kh kw sh sw pt pl pb pr dh dw g bias res act lo hi res_in_y */
  conv_case((conv_p){1, 16, 9, 11, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0, 0});  /* 1x1, fused */
  conv_case((conv_p){2, 8, 10, 10, 16, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0}); /* residual */
  conv_case((conv_p){1, 8, 12, 13, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0}); /* bias+res+relu */
  conv_case((conv_p){1, 8, 12, 13, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1}); /* residual in Y */
  conv_case((conv_p){1, 3, 23, 21, 8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0, 2, 0, 6, 0});  /* relu6 */
  conv_case((conv_p){2, 8, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 0, 0, 0});   /* grouped */
  conv_case((conv_p){1, 4, 12, 12, 8, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 0, 0, 0, 0, 0, 0});  /* dilated */
  conv_case((conv_p){1, 16, 14, 14, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16, 1, 0, 2, 0, 6, 0}); /* depthwise */
  conv_case((conv_p){1, 8, 11, 10, 8, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0});  /* asymmetric */
  conv_case((conv_p){2, 6, 9, 8, 4, 2, 3, 1, 2, 1, 0, 0, 2, 1, 1, 1, 0, 1, 1, 0, 0, 0});    /* asymmetric */
  conv_case((conv_p){1, 32, 16, 16, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}); /* K = 288 */
  /* clip(-0.5, 0.5): refused */
  tens *x = mk(4, (int64_t[]){1, 2, 4, 4}, 1), *w = mk(4, (int64_t[]){2, 2, 1, 1}, 2), *y = mk(4, (int64_t[]){1, 2, 4, 4}, 3);
  tens *ts[3] = {x, w, y};
  int64_t iv[15] = {1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 2, f32bits(-0.5f), f32bits(0.5f), 0};
  CU_ASSERT(up(x) && up(w) && up(y));
  EXPECT_ERR(call(mlc_ext_cudnn_conv2d, ts, 3, iv, 15, &gs), &gs, "cudnn.conv2d", "clip(-0.5, 0.5) is not supported");
  rm(x), rm(w), rm(y);
}

/* -- pooling -- */

/* X [2, 3, h, w], window k, stride s, pads t l b r; Y's size from |ceil_mode|. */
static void pool_case(int is_max, int64_t h, int64_t w, int64_t k, int64_t s, int64_t pt, int64_t pl, int64_t pb,
                      int64_t pr, int ceil_mode, int incl) {
  int64_t sh = h + pt + pb - k, sw = w + pl + pr - k;
  int64_t oh = (ceil_mode ? (sh + s - 1) / s : sh / s) + 1, ow = (ceil_mode ? (sw + s - 1) / s : sw / s) + 1;
  tens *x = mk(4, (int64_t[]){2, 3, h, w}, 21), *y = mk(4, (int64_t[]){2, 3, oh, ow}, 22),
       *want = mk(4, (int64_t[]){2, 3, oh, ow}, 23);
  for (int64_t nc = 0; nc < 6; nc++)
    for (int64_t i = 0; i < oh; i++)
      for (int64_t j = 0; j < ow; j++) {
        double m = -INFINITY, sum = 0;
        int64_t cnt = 0, cnt_pad = 0;
        for (int64_t u = 0; u < k; u++)
          for (int64_t v = 0; v < k; v++) {
            int64_t iy = i * s - pt + u, ix = j * s - pl + v;
            if (iy < h + pb && ix < w + pr) cnt_pad++;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            double e = x->d[(nc * h + iy) * w + ix];
            m = e > m ? e : m;
            sum += e;
            cnt++;
          }
        want->d[(nc * oh + i) * ow + j] = (float)(is_max ? m : sum / (incl ? cnt_pad : cnt));
      }
  int64_t iv[11] = {k, k, pt, pl, pb, pr, s, s, 1, 1, incl};
  tens *ts[2] = {x, y};
  char what[128];
  snprintf(what, sizeof what, "%s %lldx%lld k%lld s%lld pads %lld %lld %lld %lld ceil %d incl %d",
           is_max ? "max_pool" : "avg_pool", (long long)h, (long long)w, (long long)k, (long long)s, (long long)pt,
           (long long)pl, (long long)pb, (long long)pr, ceil_mode, incl);
  for (int rep = 0; rep < 2; rep++) {
    CU_ASSERT(gpu_run(is_max ? mlc_ext_cudnn_max_pool2d : mlc_ext_cudnn_avg_pool2d, ts, 2, iv, 11, 0, what));
    CU_ASSERT(close_to(y->d, want->d, count(y), what));
  }
  rm(x), rm(y), rm(want);
}

static void test_gpu_pool(void) {
  if (!gpu()) {
    printf("(no CUDA device: skipped) ");
    return;
  }
  pool_case(1, 12, 12, 3, 2, 1, 1, 1, 1, 0, 0);
  pool_case(1, 8, 8, 2, 2, 0, 0, 0, 0, 0, 0);
  pool_case(0, 7, 7, 7, 1, 0, 0, 0, 0, 0, 0); /* global */
  pool_case(1, 10, 10, 3, 2, 0, 0, 0, 0, 1, 0); /* ceil mode: one more window, its end padded */
  pool_case(0, 10, 10, 3, 2, 0, 0, 0, 0, 1, 0);
  pool_case(0, 9, 9, 3, 2, 1, 1, 1, 1, 0, 1);
  pool_case(0, 9, 9, 3, 2, 1, 1, 1, 1, 0, 0);
  pool_case(0, 8, 8, 3, 2, 1, 1, 1, 1, 0, 0); /* the end pad unused */
  pool_case(1, 9, 8, 3, 2, 0, 1, 2, 0, 0, 0); /* asymmetric */
  pool_case(0, 9, 8, 3, 2, 0, 1, 2, 0, 0, 0);
  pool_case(0, 9, 8, 3, 2, 0, 1, 2, 0, 0, 1);
  pool_case(0, 12, 12, 3, 2, 1, 1, 1, 1, 1, 0); /* ceil mode's extra padding beyond the pads */
  pool_case(1, 12, 12, 3, 2, 1, 1, 1, 1, 1, 0);
}

/* -- softmax -- */

static void softmax_case(int rank, const int64_t *shape, int axis, int lg, int in_place) {
  tens *x = mk(rank, shape, 31), *y = mk(rank, shape, 32), *want = mk(rank, shape, 33);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= shape[d];
  for (int d = axis + 1; d < rank; d++) inner *= shape[d];
  int64_t n = shape[axis];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double m = -INFINITY, s = 0;
      for (int64_t a = 0; a < n; a++) m = fmax(m, x->d[(o * n + a) * inner + i]);
      for (int64_t a = 0; a < n; a++) s += exp(x->d[(o * n + a) * inner + i] - m);
      for (int64_t a = 0; a < n; a++) {
        double v = x->d[(o * n + a) * inner + i] - m;
        want->d[(o * n + a) * inner + i] = (float)(lg ? v - log(s) : exp(v) / s);
      }
    }
  int64_t iv[2] = {axis, lg};
  char what[64];
  snprintf(what, sizeof what, "softmax rank %d axis %d log %d%s", rank, axis, lg, in_place ? " in place" : "");
  tens *ts[2] = {x, in_place ? x : y};
  CU_ASSERT(gpu_run(mlc_ext_cudnn_softmax, ts, 2, iv, 2, in_place, what));
  CU_ASSERT(close_to(ts[1]->d, want->d, count(x), what));
  rm(x), rm(y), rm(want);
}

static void test_gpu_softmax(void) {
  if (!gpu()) {
    printf("(no CUDA device: skipped) ");
    return;
  }
  softmax_case(2, (int64_t[]){4, 33}, 1, 0, 0);
  softmax_case(3, (int64_t[]){2, 5, 7}, 1, 0, 0);
  softmax_case(3, (int64_t[]){2, 5, 7}, 2, 1, 0);
  softmax_case(4, (int64_t[]){2, 3, 4, 5}, 0, 1, 0);
  softmax_case(1, (int64_t[]){1000}, 0, 0, 0);
  softmax_case(2, (int64_t[]){3, 17}, 1, 0, 1);
}

/* The session ends: its finalizers free the handles and caches. */
static void test_gpu_session_end(void) {
  if (!gpu()) {
    printf("(no CUDA device: skipped) ");
    return;
  }
  CU_ASSERT_PTR_NOT_NULL(gs.slots[MLC_RT_SLOT_CUBLAS]);
  CU_ASSERT_PTR_NOT_NULL(gs.slots[MLC_RT_SLOT_CUDNN]);
  CU_ASSERT_PTR_NOT_NULL(gs.slots[MLC_RT_SLOT_CUBLASLT]);
  session_end(&gs);
  CU_ASSERT_EQUAL(G.cuStreamSynchronize(G.st), CUDA_SUCCESS);
  G.cuStreamDestroy_v2(G.st);
  G.cuDevicePrimaryCtxRelease_v2(G.dev);
}

static void reg(void) {
  static const CU_TestInfo tests[] = {
      {"no_stream", test_no_stream},
      {"matmul_checks", test_matmul_checks},
      {"matmul_lt_checks", test_matmul_lt_checks},
      {"matmul_plan", test_matmul_plan},
      {"conv_checks", test_conv_checks},
      {"pool_checks", test_pool_checks},
      {"softmax_checks", test_softmax_checks},
      {"loading_no_driver", test_loading_no_driver},
      {"loading_names", test_loading_names},
      CU_TEST_INFO_NULL,
  };
  mlc_test_add_suite("ext_cuda", tests);
  static const CU_TestInfo gpu_tests[] = {
      {"matmul", test_gpu_matmul},
      {"matmul_lt", test_gpu_matmul_lt},
      {"conv2d", test_gpu_conv},
      {"pool", test_gpu_pool},
      {"softmax", test_gpu_softmax},
      {"session_end", test_gpu_session_end},
      CU_TEST_INFO_NULL,
  };
  mlc_test_add_suite("ext_cuda_gpu", gpu_tests);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0) return child_main(atoi(argv[2]));
  ctx_init(&gs, &api_gpu, NULL);
  static const mlc_test_register_fn fns[] = {reg, NULL};
  return mlc_test_main("test_ext_cuda", fns);
}
