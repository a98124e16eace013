/*
** test_ext_openblas.c: the OpenBLAS provider's wrappers (extern/rt_openblas.c)
** against naive references computed here in double precision.
**
** The wrappers are called directly through the kernel calling convention
** with a test mlc_rt_api whose parallel_for really runs the chunks on two
** threads (the caller and one pthread), so the cutting into pieces is
** exercised; each case also runs with one thread and with no num_threads.
** Suites: matmul (shapes, broadcast, folding, column pieces, empty and
** K = 0), conv2d (1x1, strides, padding, groups, dilation, bias,
** residual, in place, relu, clip, channel blocks), load (the
** environment is left as it was, the core type).  With MLC_BENCH set, the
** bench suite prints GFLOP/s of a 1024^3 sgemm and of a ResNet-50-like
** 3x3 convolution (and the naive loop's), asserting nothing.  Argument
** errors are tested in test_ext_kernels.
*/
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlc/mlc_extern.h"
#include "tests/testutil.h"

int mlc_ext_openblas_matmul(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);
int mlc_ext_openblas_conv2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);
int mlc_ext_openblas_coretype(char *buf, size_t n);

/* ---- a test runtime: two real threads --------------------------------- */

typedef struct test_ctx {
  mlc_rt_ctx base;
  int threads;         /* what num_threads says */
  int nerrors;
  char error[512];
  int live;            /* workspace blocks not yet freed */
} test_ctx;

/* Chunks run on the helper thread (the threading really happened). */
static atomic_int worker_chunks;

typedef struct half_job {
  mlc_rt_parallel_body body;
  void *closure;
  int64_t begin, end;
  int rc;
} half_job;

static void *run_half(void *p) {
  half_job *j = p;
  j->rc = 0;
  for (int64_t i = j->begin; i < j->end && !j->rc; i++) {
    j->rc = j->body(i, i + 1, j->closure);
    atomic_fetch_add(&worker_chunks, 1);
  }
  return NULL;
}

/* Chunks [0, n/2) on a new thread, [n/2, n) on the caller, one iteration each. */
static int t_parallel_for(mlc_rt_ctx *ctx, int64_t n, mlc_rt_parallel_body body, void *closure) {
  test_ctx *t = (test_ctx *)ctx;
  if (t->threads < 2 || n < 2) return n > 0 ? body(0, n, closure) : 0;
  half_job first = {body, closure, 0, n / 2, 0};
  pthread_t th;
  if (pthread_create(&th, NULL, run_half, &first)) return body(0, n, closure);
  int rc = 0;
  for (int64_t i = n / 2; i < n && !rc; i++) rc = body(i, i + 1, closure);
  pthread_join(th, NULL);
  return first.rc ? first.rc : rc;
}

static void *t_workspace_alloc(mlc_rt_ctx *ctx, uint64_t nbytes) {
  test_ctx *t = (test_ctx *)ctx;
  void *p = aligned_alloc(64, (size_t)((nbytes + 63) / 64 * 64 + 64));
  if (p) t->live++;
  return p;
}

static void t_workspace_free(mlc_rt_ctx *ctx, void *p) {
  test_ctx *t = (test_ctx *)ctx;
  if (p) t->live--;
  free(p);
}

static int t_set_error(mlc_rt_ctx *ctx, const char *msg) {
  test_ctx *t = (test_ctx *)ctx;
  t->nerrors++;
  snprintf(t->error, sizeof t->error, "%s", msg ? msg : "(null)");
  return -1;
}

static int t_num_threads(mlc_rt_ctx *ctx) {
  return ((test_ctx *)ctx)->threads;
}

static const mlc_rt_api api_threads = {t_parallel_for, t_workspace_alloc, t_workspace_free, t_set_error,
                                       NULL, t_num_threads};
/* A harness's table without num_threads (then one thread). */
static const mlc_rt_api api_no_count = {t_parallel_for, t_workspace_alloc, t_workspace_free, t_set_error,
                                        NULL, NULL};

static void ctx_init(test_ctx *t, int threads, const mlc_rt_api *api) {
  memset(t, 0, sizeof *t);
  t->base.api = api;
  t->threads = threads;
}

/* ---- data -------------------------------------------------------------- */

static uint32_t rng_state = 12345;

static float frand(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static float *rand_buf(int64_t n) {
  float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
  for (int64_t i = 0; i < n; i++) p[i] = frand();
  return p;
}

static int64_t prod(const int64_t *s, int n) {
  int64_t r = 1;
  for (int i = 0; i < n; i++) r *= s[i];
  return r;
}

static DLTensor f32(void *data, int ndim, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

/* Whether |got| matches |ref| within |tol| (per element); prints the first miss. */
static int close_enough(const char *what, const float *got, const double *ref, const double *tol, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    if (!(fabs(got[i] - ref[i]) <= tol[i])) {
      fprintf(stderr, "\n%s: element %lld: %g, expected %g (tolerance %g)\n", what, (long long)i,
              (double)got[i], ref[i], tol[i]);
      return 0;
    }
  }
  return 1;
}

/* ---- matmul ----------------------------------------------------------- */

/* Y = A x B, numpy broadcast of the batch dims; |tol| from the sums of |a*b|. */
static void ref_matmul(const float *a, const int64_t *as, int ar, const float *b, const int64_t *bs, int br,
                       double *y, double *tol, const int64_t *ys, int yr) {
  int64_t m = as[ar - 2], k = as[ar - 1], n = bs[br - 1];
  int64_t nb = prod(ys, yr - 2);
  for (int64_t bi = 0; bi < nb; bi++) {
    int64_t ai = 0, bj = 0, rest = bi, amul = 1, bmul = 1;
    for (int d = yr - 3; d >= 0; d--) {
      int64_t idx = rest % ys[d];
      rest /= ys[d];
      int da = d - (yr - ar), db = d - (yr - br);
      if (da >= 0) {
        if (as[da] != 1) ai += idx * amul;
        amul *= as[da];
      }
      if (db >= 0) {
        if (bs[db] != 1) bj += idx * bmul;
        bmul *= bs[db];
      }
    }
    const float *pa = a + ai * m * k, *pb = b + bj * k * n;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0, sa = 0;
        for (int64_t l = 0; l < k; l++) {
          s += (double)pa[i * k + l] * pb[l * n + j];
          sa += fabs((double)pa[i * k + l] * pb[l * n + j]);
        }
        y[(bi * m + i) * n + j] = s;
        tol[(bi * m + i) * n + j] = 1e-4 * sa + 1e-6;
      }
  }
}

/* Runs matmul on the shapes with |threads| (0: no num_threads) and checks Y. */
static void check_matmul(int ar, const int64_t *as_in, int br, const int64_t *bs_in, int threads) {
  int64_t as[8], bs[8], ys[8];
  memcpy(as, as_in, ar * sizeof *as);
  memcpy(bs, bs_in, br * sizeof *bs);
  int yr = ar > br ? ar : br;
  for (int d = 0; d < yr - 2; d++) {
    int da = d - (yr - ar), db = d - (yr - br);
    int64_t x = da >= 0 ? as[da] : 1, z = db >= 0 ? bs[db] : 1;
    ys[d] = x == 1 ? z : x;
  }
  ys[yr - 2] = as[ar - 2];
  ys[yr - 1] = bs[br - 1];
  int64_t na = prod(as, ar), nb = prod(bs, br), ny = prod(ys, yr);
  float *a = rand_buf(na), *b = rand_buf(nb), *y = malloc((size_t)(ny ? ny : 1) * sizeof *y);
  double *ref = malloc((size_t)(ny ? ny : 1) * sizeof *ref);
  double *tol = malloc((size_t)(ny ? ny : 1) * sizeof *tol);
  for (int64_t i = 0; i < ny; i++) y[i] = NAN;
  ref_matmul(a, as, ar, b, bs, br, ref, tol, ys, yr);
  DLTensor ta = f32(a, ar, as), tb = f32(b, br, bs), ty = f32(y, yr, ys);
  void *args[3] = {&ta, &tb, &ty};
  int32_t codes[3] = {MLC_ARG_TENSOR, MLC_ARG_TENSOR, MLC_ARG_TENSOR};
  test_ctx t;
  ctx_init(&t, threads ? threads : 1, threads ? &api_threads : &api_no_count);
  int rc = mlc_ext_openblas_matmul(args, codes, 3, &t.base);
  if (rc) fprintf(stderr, "\nmatmul: %s\n", t.error);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(t.nerrors, 0);
  char what[64];
  snprintf(what, sizeof what, "matmul rank %d x %d, %d threads", ar, br, threads);
  CU_ASSERT(rc || close_enough(what, y, ref, tol, ny));
  free(a);
  free(b);
  free(y);
  free(ref);
  free(tol);
}

static void check_matmul_all(int ar, const int64_t *as, int br, const int64_t *bs) {
  check_matmul(ar, as, br, bs, 1);
  check_matmul(ar, as, br, bs, 2);
  check_matmul(ar, as, br, bs, 0);
}

#define SHAPE(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]){__VA_ARGS__}

static void test_matmul_plain(void) {
  check_matmul_all(SHAPE(3, 5), SHAPE(5, 7));
  check_matmul_all(SHAPE(256, 64), SHAPE(64, 128));
  check_matmul_all(SHAPE(33, 1), SHAPE(1, 17));
}

static void test_matmul_batched(void) {
  /* B one matrix: A folded into one GEMM of 2*3*17 rows */
  check_matmul_all(SHAPE(2, 3, 17, 33), SHAPE(33, 65));
  check_matmul_all(SHAPE(2, 64, 128), SHAPE(128, 96));
  check_matmul_all(SHAPE(3, 19, 24), SHAPE(1, 1, 24, 10)); /* B's size-1 batch dims: Y [1,3,19,10] */
  /* both batched, B broadcast over A's leading dim */
  check_matmul_all(SHAPE(2, 3, 17, 33), SHAPE(3, 33, 65));
  check_matmul_all(SHAPE(4, 1, 8, 16), SHAPE(3, 16, 9));  /* Y [4,3,8,9] */
  check_matmul_all(SHAPE(1, 5, 8, 16), SHAPE(4, 1, 16, 9)); /* Y [4,5,8,9] */
  check_matmul_all(SHAPE(7, 9), SHAPE(4, 9, 11));           /* A one matrix, B batched */
  check_matmul_all(SHAPE(6, 40, 72), SHAPE(6, 72, 50));
}

static void test_matmul_vector(void) {
  /* M = 1: few rows, the pieces are columns */
  check_matmul_all(SHAPE(1, 300), SHAPE(300, 1000));
  check_matmul_all(SHAPE(5, 1, 64), SHAPE(5, 64, 40));
  check_matmul_all(SHAPE(1, 512), SHAPE(512, 33));
  check_matmul_all(SHAPE(2, 700), SHAPE(700, 9)); /* N = 9 */
}

/* Empty Y and K = 0 (Y all zero). */
static void test_matmul_empty(void) {
  check_matmul_all(SHAPE(0, 5), SHAPE(5, 3));
  check_matmul_all(SHAPE(2, 0, 4, 5), SHAPE(5, 3));
  check_matmul_all(SHAPE(3, 0), SHAPE(0, 4));
  check_matmul_all(SHAPE(2, 3, 0), SHAPE(2, 0, 4));
}



/* Both threads ran chunks of one call. */
static void test_matmul_threads(void) {
  atomic_store(&worker_chunks, 0);
  check_matmul(SHAPE(200, 64), SHAPE(64, 90), 2);
  CU_ASSERT(atomic_load(&worker_chunks) > 0);
  atomic_store(&worker_chunks, 0);
  check_matmul(SHAPE(3, 5), SHAPE(5, 7), 2); /* a small call is one piece */
  CU_ASSERT_EQUAL(atomic_load(&worker_chunks), 0);
}

/* ---- conv2d ----------------------------------------------------------- */

typedef struct conv_case {
  int64_t n, c, h, w, k, kh, kw;
  int64_t sh, sw, dh, dw, pt, pl, pb, pr, g;
  int bias, res, act; /* act: 0 none, 1 relu, 2 clip */
  float lo, hi;
  int in_place;       /* the residual is Y's own buffer */
} conv_case;

static int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1) {
  return (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
}

static void ref_conv(const conv_case *cc, const float *x, const float *w, const float *bias, const float *r,
                     double *y, double *tol) {
  int64_t oh = out_dim(cc->h, cc->kh, cc->sh, cc->dh, cc->pt, cc->pb);
  int64_t ow = out_dim(cc->w, cc->kw, cc->sw, cc->dw, cc->pl, cc->pr);
  int64_t cg = cc->c / cc->g, kg = cc->k / cc->g;
  for (int64_t n = 0; n < cc->n; n++)
    for (int64_t k = 0; k < cc->k; k++)
      for (int64_t i = 0; i < oh; i++)
        for (int64_t j = 0; j < ow; j++) {
          double s = 0, sa = 0;
          int64_t g = k / kg;
          for (int64_t c = 0; c < cg; c++)
            for (int64_t u = 0; u < cc->kh; u++)
              for (int64_t v = 0; v < cc->kw; v++) {
                int64_t ih = i * cc->sh - cc->pt + u * cc->dh, iw = j * cc->sw - cc->pl + v * cc->dw;
                if (ih < 0 || ih >= cc->h || iw < 0 || iw >= cc->w) continue;
                double p = (double)x[((n * cc->c + g * cg + c) * cc->h + ih) * cc->w + iw] *
                           w[((k * cg + c) * cc->kh + u) * cc->kw + v];
                s += p;
                sa += fabs(p);
              }
          int64_t o = ((n * cc->k + k) * oh + i) * ow + j;
          if (bias) s += bias[k];
          if (r) s += r[o];
          if (cc->act == 1) s = s < 0 ? 0 : s;
          if (cc->act == 2) s = s < cc->lo ? cc->lo : s > cc->hi ? cc->hi : s;
          y[o] = s;
          tol[o] = 1e-4 * sa + 1e-5;
        }
}

static int64_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (int64_t)u;
}

/* Fills the conv2d call for |cc| into |args|/|codes| (tensors, then 15 ints); the count. */
static int conv_args(const conv_case *cc, DLTensor *tx, DLTensor *tw, DLTensor *tb, DLTensor *tr,
                     DLTensor *ty, int64_t *attrs, void **args, int32_t *codes) {
  int n = 0;
  args[n++] = tx;
  args[n++] = tw;
  if (cc->bias) args[n++] = tb;
  if (cc->res) args[n++] = tr;
  args[n++] = ty;
  for (int i = 0; i < n; i++) codes[i] = MLC_ARG_TENSOR;
  int64_t v[15] = {cc->dh, cc->dw, cc->g, cc->pt, cc->pl, cc->pb, cc->pr, cc->sh, cc->sw,
                   cc->bias, cc->res, cc->act, f32_bits(cc->lo), f32_bits(cc->hi), 1};
  for (int i = 0; i < 15; i++) {
    attrs[i] = v[i];
    args[n] = &attrs[i];
    codes[n++] = MLC_ARG_INT;
  }
  return n;
}

static void check_conv(const conv_case *cc, int threads) {
  int64_t oh = out_dim(cc->h, cc->kh, cc->sh, cc->dh, cc->pt, cc->pb);
  int64_t ow = out_dim(cc->w, cc->kw, cc->sw, cc->dw, cc->pl, cc->pr);
  int64_t xs[4] = {cc->n, cc->c, cc->h, cc->w}, ws[4] = {cc->k, cc->c / cc->g, cc->kh, cc->kw};
  int64_t bs[1] = {cc->k}, ys[4] = {cc->n, cc->k, oh, ow};
  int64_t ny = prod(ys, 4);
  float *x = rand_buf(prod(xs, 4)), *w = rand_buf(prod(ws, 4)), *b = rand_buf(cc->k), *r = rand_buf(ny);
  float *y = malloc((size_t)ny * sizeof *y);
  double *ref = malloc((size_t)ny * sizeof *ref), *tol = malloc((size_t)ny * sizeof *tol);
  ref_conv(cc, x, w, cc->bias ? b : NULL, cc->res ? r : NULL, ref, tol);
  if (cc->in_place) memcpy(y, r, (size_t)ny * sizeof *y);
  else for (int64_t i = 0; i < ny; i++) y[i] = NAN;
  DLTensor tx = f32(x, 4, xs), tw = f32(w, 4, ws), tb = f32(b, 1, bs), tr = f32(cc->in_place ? y : r, 4, ys);
  DLTensor ty = f32(y, 4, ys);
  void *args[20];
  int32_t codes[20];
  int64_t attrs[15];
  int nargs = conv_args(cc, &tx, &tw, &tb, &tr, &ty, attrs, args, codes);
  test_ctx t;
  ctx_init(&t, threads ? threads : 1, threads ? &api_threads : &api_no_count);
  int rc = mlc_ext_openblas_conv2d(args, codes, nargs, &t.base);
  if (rc) fprintf(stderr, "\nconv2d: %s\n", t.error);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(t.live, 0);
  char what[160];
  snprintf(what, sizeof what,
           "conv2d %lldx%lldx%lldx%lld k%lld %lldx%lld s%lld,%lld d%lld,%lld g%lld, %d threads",
           (long long)cc->n, (long long)cc->c, (long long)cc->h, (long long)cc->w, (long long)cc->k,
           (long long)cc->kh, (long long)cc->kw, (long long)cc->sh, (long long)cc->sw, (long long)cc->dh,
           (long long)cc->dw, (long long)cc->g, threads);
  CU_ASSERT(rc || close_enough(what, y, ref, tol, ny));
  free(x);
  free(w);
  free(b);
  free(r);
  free(y);
  free(ref);
  free(tol);
}

static void check_conv_all(conv_case cc) {
  check_conv(&cc, 1);
  check_conv(&cc, 2);
  check_conv(&cc, 0);
}

/* n c h w k kh kw  sh sw dh dw  pt pl pb pr g  bias res act lo hi in_place */
static void test_conv_1x1(void) {
  check_conv_all((conv_case){2, 16, 9, 11, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0});
  check_conv_all((conv_case){2, 8, 10, 9, 12, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0});
  check_conv_all((conv_case){1, 64, 28, 28, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0});
  /* padded 1x1 */
  check_conv_all((conv_case){2, 6, 5, 5, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0});
}

static void test_conv_3x3(void) {
  check_conv_all((conv_case){2, 5, 13, 14, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0});
  check_conv_all((conv_case){1, 64, 20, 20, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0});
  /* strides 2, 1 */
  check_conv_all((conv_case){2, 4, 9, 12, 6, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0});
  check_conv_all((conv_case){1, 3, 31, 29, 8, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1, 1, 0, 2, 0.0f, 6.0f, 0});
  check_conv_all((conv_case){2, 3, 11, 10, 5, 2, 4, 1, 3, 1, 1, 0, 2, 1, 0, 1, 0, 1, 2, -0.5f, 0.5f, 0});
}

static void test_conv_groups_dilation(void) {
  check_conv_all((conv_case){2, 8, 10, 10, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 0, 0, 0, 0, 0});
  /* depthwise */
  check_conv_all((conv_case){2, 8, 9, 7, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8, 1, 1, 1, 0, 0, 0});
  check_conv_all((conv_case){2, 6, 12, 11, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 0, 1, 0, 0, 0});
  check_conv_all((conv_case){1, 4, 13, 15, 6, 3, 2, 1, 2, 2, 3, 1, 2, 0, 1, 2, 0, 1, 0, 0, 0, 0});
}

/* Residual computed in place, channel blocks (few pixels, many channels), big pads. */
static void test_conv_special(void) {
  check_conv_all((conv_case){2, 5, 8, 8, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1});
  check_conv_all((conv_case){1, 16, 16, 16, 16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1});
  check_conv_all((conv_case){1, 16, 4, 4, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0});
  check_conv_all((conv_case){1, 2, 3, 3, 3, 3, 3, 1, 1, 1, 1, 4, 4, 4, 4, 1, 1, 0, 0, 0, 0, 0});
  atomic_store(&worker_chunks, 0);
  conv_case big = {1, 32, 24, 24, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0};
  check_conv(&big, 2);
  CU_ASSERT(atomic_load(&worker_chunks) > 0);
}


/* ---- loading ----------------------------------------------------------- */

static char *env_core, *env_threads; /* as the program started */

static int same_env(const char *name, const char *before) {
  const char *now = getenv(name);
  return before ? now && !strcmp(now, before) : !now;
}

static void test_load_env(void) {
  check_matmul(SHAPE(4, 4), SHAPE(4, 4), 1); /* loads the library if not yet */
  CU_ASSERT(same_env("OPENBLAS_CORETYPE", env_core));
  CU_ASSERT(same_env("OPENBLAS_NUM_THREADS", env_threads));
  char core[64];
  CU_ASSERT_EQUAL(mlc_ext_openblas_coretype(core, sizeof core), 0);
  CU_ASSERT(core[0] != 0);
  if (getenv("MLC_BENCH")) printf("\nOpenBLAS core: %s\n", core);
}

/* ---- bench (MLC_BENCH) -------------------------------------------------- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best time of |reps| calls of |fn| on |args|. */
static double best_time(int (*fn)(void **, const int32_t *, int32_t, mlc_rt_ctx *), void **args,
                        const int32_t *codes, int nargs, int threads, int reps) {
  test_ctx t;
  ctx_init(&t, threads, &api_threads);
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    if (fn(args, codes, nargs, &t.base)) {
      fprintf(stderr, "bench: %s\n", t.error);
      return -1;
    }
    double dt = now_s() - t0;
    best = dt < best ? dt : best;
  }
  return best;
}

static void test_bench(void) {
  if (!getenv("MLC_BENCH")) return;
  int64_t s[2] = {1024, 1024};
  float *a = rand_buf(1 << 20), *b = rand_buf(1 << 20), *y = malloc(sizeof(float) << 20);
  DLTensor ta = f32(a, 2, s), tb = f32(b, 2, s), ty = f32(y, 2, s);
  void *args[3] = {&ta, &tb, &ty};
  int32_t codes[3] = {0, 0, 0};
  for (int th = 1; th <= 2; th++) {
    double dt = best_time(mlc_ext_openblas_matmul, args, codes, 3, th, 7);
    printf("\nsgemm 1024^3, %d thread%s: %.2f ms, %.1f GFLOP/s", th, th > 1 ? "s" : "", dt * 1e3,
           2.0 * 1024 * 1024 * 1024 / dt * 1e-9);
  }
  free(a);
  free(b);
  free(y);
  conv_case cc = {1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0};
  int64_t xs[4] = {1, 64, 56, 56}, ws[4] = {64, 64, 3, 3}, bs[1] = {64};
  float *x = rand_buf(64 * 56 * 56), *w = rand_buf(64 * 64 * 9), *bb = rand_buf(64);
  float *yy = malloc(sizeof(float) * 64 * 56 * 56);
  DLTensor tx = f32(x, 4, xs), tw = f32(w, 4, ws), tbb = f32(bb, 1, bs), tyy = f32(yy, 4, xs);
  void *cargs[20];
  int32_t ccodes[20];
  int64_t attrs[15];
  int n = conv_args(&cc, &tx, &tw, &tbb, NULL, &tyy, attrs, cargs, ccodes);
  double gflop = 2.0 * 64 * 56 * 56 * 64 * 9 * 1e-9;
  for (int th = 1; th <= 2; th++) {
    double dt = best_time(mlc_ext_openblas_conv2d, cargs, ccodes, n, th, 9);
    printf("\nconv 1x64x56x56 64->64 3x3 pad 1 (+bias, relu), %d thread%s: %.3f ms, %.1f GFLOP/s", th,
           th > 1 ? "s" : "", dt * 1e3, gflop / dt);
  }
  double *ref = malloc(sizeof(double) * 64 * 56 * 56), *tol = malloc(sizeof(double) * 64 * 56 * 56);
  double t0 = now_s();
  ref_conv(&cc, x, w, bb, NULL, ref, tol);
  double dt = now_s() - t0;
  printf("\nconv naive direct loop (double), 1 thread: %.1f ms, %.2f GFLOP/s\n", dt * 1e3, gflop / dt);
  free(x);
  free(w);
  free(bb);
  free(yy);
  free(ref);
  free(tol);
}

/* ---- registration ------------------------------------------------------- */

static void register_matmul(void) {
  static const CU_TestInfo tests[] = {{"plain", test_matmul_plain},
                                      {"batched", test_matmul_batched},
                                      {"vector", test_matmul_vector},
                                      {"empty", test_matmul_empty},
                                      {"threads", test_matmul_threads},
                                      {NULL, NULL}};
  mlc_test_add_suite("matmul", tests);
}

static void register_conv(void) {
  static const CU_TestInfo tests[] = {{"1x1", test_conv_1x1},
                                      {"3x3", test_conv_3x3},
                                      {"groups_dilation", test_conv_groups_dilation},
                                      {"special", test_conv_special},
                                      {NULL, NULL}};
  mlc_test_add_suite("conv2d", tests);
}

static void register_load(void) {
  static const CU_TestInfo tests[] = {{"env", test_load_env}, {"bench", test_bench}, {NULL, NULL}};
  mlc_test_add_suite("load", tests);
}

int main(void) {
  const char *c = getenv("OPENBLAS_CORETYPE"), *t = getenv("OPENBLAS_NUM_THREADS");
  env_core = c ? strdup(c) : NULL;
  env_threads = t ? strdup(t) : NULL;
  static const mlc_test_register_fn fns[] = {register_load, register_matmul, register_conv, NULL};
  int rc = mlc_test_main("test_ext_openblas", fns);
  free(env_core);
  free(env_threads);
  return rc;
}
