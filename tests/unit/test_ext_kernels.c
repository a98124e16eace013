/*
** test_ext_kernels.c: the providers' run-time wrappers (extern/rt_*.c)
** called directly, against naive references computed here.
**
** The kernel context is the test's own: parallel_for runs the chunks on
** two threads (so the wrappers' splitting and their thread safety run),
** num_threads says 2, workspaces come from malloc.  Cases: matmul with
** odd sizes, batch broadcast both ways, M = 1; conv2d 1x1 (stride 1 and
** 2), 3x3 padded, 7x7 stride 2, grouped, depthwise (oneDNN), dilated, with
** bias, residual, relu and clip, batch 2, a constant weight called twice
** (the cached repack); pooling (max and average, padding, ceil mode's
** extra padding, global); softmax and log-softmax on the last and a middle
** axis; and argument errors, which must fail with a message.  A library
** this build lacks is skipped.
*/
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "extern/rt_ext.h"
#include "tests/testutil.h"
#include "tests/unit/ext_conv_ref.h"

/* ---- the test's kernel context ------------------------------------------ */

typedef struct tctx {
  mlc_rt_ctx base;
  char err[512];
} tctx;

typedef struct half_job {
  mlc_rt_parallel_body body;
  void *closure;
  int64_t begin, end;
  int rc;
} half_job;

static void *run_half(void *p) {
  half_job *h = p;
  h->rc = h->begin < h->end ? h->body(h->begin, h->end, h->closure) : 0;
  return NULL;
}

static int t_parallel_for(mlc_rt_ctx *ctx, int64_t n, mlc_rt_parallel_body body, void *closure) {
  (void)ctx;
  half_job a = {body, closure, 0, n / 2, 0}, b = {body, closure, n / 2, n, 0};
  pthread_t th;
  if (pthread_create(&th, NULL, run_half, &b) != 0) return body(0, n, closure);
  run_half(&a);
  pthread_join(th, NULL);
  return a.rc ? a.rc : b.rc;
}

static void *t_ws_alloc(mlc_rt_ctx *ctx, uint64_t n) {
  (void)ctx;
  void *p = NULL;
  return posix_memalign(&p, 64, n ? n : 1) == 0 ? p : NULL;
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
  return 2;
}

static const mlc_rt_api t_api = {t_parallel_for, t_ws_alloc, t_ws_free, t_set_error, t_check_failed, t_threads};

/* ---- tensors ------------------------------------------------------------ */

typedef struct tens {
  DLTensor t;
  int64_t shape[6];
  float *d;
} tens;

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
  x->t.device.device_type = kDLCPU;
  x->t.ndim = rank;
  x->t.dtype.code = kDLFloat;
  x->t.dtype.bits = 32;
  x->t.dtype.lanes = 1;
  x->t.shape = x->shape;
  return x;
}

static void rm(tens *x) {
  if (x) free(x->d);
  free(x);
}

static int64_t count(const tens *x) {
  int64_t n = 1;
  for (int i = 0; i < x->t.ndim; i++) n *= x->shape[i];
  return n;
}

/* Largest relative error of |got| against |want| (same count). */
static int close_to(const float *got, const float *want, int64_t n, const char *what) {
  for (int64_t i = 0; i < n; i++)
    if (!(fabsf(got[i] - want[i]) <= 1e-4f + 1e-4f * fabsf(want[i]))) {
      fprintf(stderr, "%s: element %lld: %g, want %g\n", what, (long long)i, got[i], want[i]);
      return 0;
    }
  return 1;
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

/* ---- matmul ------------------------------------------------------------- */

static void ref_matmul(const tens *a, const tens *b, tens *y) {
  int r = y->t.ndim;
  int64_t m = y->shape[r - 2], n = y->shape[r - 1], k = a->shape[a->t.ndim - 1];
  int64_t nb = count(y) / (m * n);
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

static void matmul_case(mlc_kernel_fn fn, int ra, const int64_t *sa, int rb, const int64_t *sb, int ry,
                        const int64_t *sy) {
  tens *a = mk(ra, sa, 1), *b = mk(rb, sb, 2), *y = mk(ry, sy, 3), *want = mk(ry, sy, 4);
  tctx c = {{&t_api}, ""};
  ref_matmul(a, b, want);
  tens *ts[3] = {a, b, y};
  int rc = call(fn, ts, 3, NULL, 0, &c);
  if (rc) fprintf(stderr, "matmul: %s\n", c.err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT(close_to(y->d, want->d, count(y), "matmul"));
  rm(a), rm(b), rm(y), rm(want);
}

static void matmul_cases(mlc_kernel_fn fn) {
  matmul_case(fn, 2, (int64_t[]){3, 5}, 2, (int64_t[]){5, 7}, 2, (int64_t[]){3, 7});
  matmul_case(fn, 4, (int64_t[]){2, 3, 17, 33}, 2, (int64_t[]){33, 65}, 4, (int64_t[]){2, 3, 17, 65});
  matmul_case(fn, 4, (int64_t[]){4, 1, 8, 16}, 3, (int64_t[]){3, 16, 9}, 4, (int64_t[]){4, 3, 8, 9});
  matmul_case(fn, 3, (int64_t[]){2, 64, 128}, 2, (int64_t[]){128, 96}, 3, (int64_t[]){2, 64, 96});
  matmul_case(fn, 2, (int64_t[]){1, 200}, 2, (int64_t[]){200, 300}, 2, (int64_t[]){1, 300});
  matmul_case(fn, 2, (int64_t[]){7, 3}, 3, (int64_t[]){5, 3, 2}, 3, (int64_t[]){5, 7, 2});
  /* errors: K disagrees; a float64 tensor; a missing argument */
  tens *a = mk(2, (int64_t[]){3, 5}, 1), *b = mk(2, (int64_t[]){4, 7}, 2), *y = mk(2, (int64_t[]){3, 7}, 3);
  tctx c = {{&t_api}, ""};
  tens *ts[3] = {a, b, y};
  CU_ASSERT_NOT_EQUAL(call(fn, ts, 3, NULL, 0, &c), 0);
  CU_ASSERT(c.err[0] != 0);
  b->shape[0] = 5;
  b->t.dtype.bits = 64;
  CU_ASSERT_NOT_EQUAL(call(fn, ts, 3, NULL, 0, &c), 0);
  b->t.dtype.bits = 32;
  CU_ASSERT_NOT_EQUAL(call(fn, ts, 2, NULL, 0, &c), 0);
  CU_ASSERT_EQUAL(call(fn, ts, 3, NULL, 0, &c), 0);
  rm(a), rm(b), rm(y);
}

/* ---- conv2d ------------------------------------------------------------- */

#ifdef MLC_HAVE_ONEDNN
#define mlc_ext_onednn_conv2d_if_any mlc_ext_onednn_conv2d
#else
#define mlc_ext_onednn_conv2d_if_any NULL
#endif


static int64_t f32bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (int64_t)u;
}

static void conv_case(mlc_kernel_fn fn, conv_p p, int w_const) {
  int64_t oh, ow;
  conv_out_hw(&p, &oh, &ow);
  tens *x = mk(4, (int64_t[]){p.n, p.c, p.h, p.w}, 11), *w = mk(4, (int64_t[]){p.k, p.c / p.g, p.kh, p.kw}, 12);
  tens *b = mk(1, (int64_t[]){p.k}, 13), *r = mk(4, (int64_t[]){p.n, p.k, oh, ow}, 14);
  tens *y = mk(4, (int64_t[]){p.n, p.k, oh, ow}, 15), *want = mk(4, (int64_t[]){p.n, p.k, oh, ow}, 16);
  conv_ref(&p, x->d, w->d, b->d, r->d, want->d);
  int64_t iv[15] = {p.dh, p.dw, p.g, p.pt, p.pl, p.pb, p.pr, p.sh, p.sw, p.bias, p.res, p.act,
                    f32bits(p.act == 2 ? p.lo : -3e38f), f32bits(p.act == 2 ? p.hi : 3e38f), w_const};
  tens *ts[5];
  int nt = 0;
  ts[nt++] = x;
  ts[nt++] = w;
  if (p.bias) ts[nt++] = b;
  if (p.res) ts[nt++] = r;
  ts[nt++] = y;
  tctx c = {{&t_api}, ""};
  for (int rep = 0; rep < (w_const ? 2 : 1); rep++) {
    memset(y->d, 0, sizeof(float) * (size_t)count(y));
    int rc = call(fn, ts, nt, iv, 15, &c);
    if (rc) fprintf(stderr, "conv2d: %s\n", c.err);
    CU_ASSERT_EQUAL(rc, 0);
    char what[128];
    snprintf(what, sizeof what, "conv2d %lldx%lld s%lld g%lld d%lld rep %d", (long long)p.kh, (long long)p.kw,
             (long long)p.sh, (long long)p.g, (long long)p.dh, rep);
    CU_ASSERT(close_to(y->d, want->d, count(y), what));
  }
  /* errors: Y of the wrong size, a count of ints that is not 15 */
  y->shape[3] += 1;
  CU_ASSERT_NOT_EQUAL(call(fn, ts, nt, iv, 15, &c), 0);
  CU_ASSERT(c.err[0] != 0);
  y->shape[3] -= 1;
  CU_ASSERT_NOT_EQUAL(call(fn, ts, nt, iv, 14, &c), 0);
  if (fn != mlc_ext_onednn_conv2d_if_any) { /* Y over X's memory: refused (OpenBLAS reads X while writing Y) */
    void *keep = y->t.data;
    y->t.data = x->d;
    CU_ASSERT_NOT_EQUAL(call(fn, ts, nt, iv, 15, &c), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.err, "overlaps"));
    y->t.data = keep;
  }
  rm(x), rm(w), rm(b), rm(r), rm(y), rm(want);
}

static void conv_cases(mlc_kernel_fn fn, int depthwise) {
  conv_p p1 = {1, 16, 9, 11, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0};
  conv_case(fn, p1, 1);
  conv_p p2 = {2, 8, 10, 10, 16, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0};
  conv_case(fn, p2, 0);
  conv_p p3 = {1, 8, 12, 13, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
  conv_case(fn, p3, 1);
  conv_p p4 = {1, 3, 23, 21, 8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0, 2, 0.0f, 6.0f};
  conv_case(fn, p4, 1);
  conv_p p5 = {2, 8, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 0, 0};
  conv_case(fn, p5, 0);
  conv_p p6 = {1, 4, 12, 12, 8, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 0, 0, 2, -0.5f, 0.5f};
  conv_case(fn, p6, 1);
  if (depthwise) {
    conv_p p7 = {1, 16, 14, 14, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16, 1, 0, 2, 0.0f, 6.0f};
    conv_case(fn, p7, 1);
  }
}

#ifdef MLC_HAVE_OPENBLAS
static void test_openblas(void) {
  matmul_cases(mlc_ext_openblas_matmul);
  conv_cases(mlc_ext_openblas_conv2d, 0);
}
#endif

/* ---- oneDNN: conv, pooling, softmax, matmul ------------------------------ */

#ifdef MLC_HAVE_ONEDNN
static void pool_case(int is_max, int64_t h, int64_t w, int64_t k, int64_t s, int64_t pad, int ceil_mode,
                      int incl) {
  int64_t span = h + 2 * pad - k;
  int64_t oh = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  int64_t span2 = w + 2 * pad - k;
  int64_t ow = (ceil_mode ? (span2 + s - 1) / s : span2 / s) + 1;
  tens *x = mk(4, (int64_t[]){2, 3, h, w}, 21), *y = mk(4, (int64_t[]){2, 3, oh, ow}, 22),
       *want = mk(4, (int64_t[]){2, 3, oh, ow}, 23);
  for (int64_t nc = 0; nc < 6; nc++)
    for (int64_t i = 0; i < oh; i++)
      for (int64_t j = 0; j < ow; j++) {
        double m = -INFINITY, sum = 0;
        int64_t cnt = 0, cnt_pad = 0;
        for (int64_t u = 0; u < k; u++)
          for (int64_t v = 0; v < k; v++) {
            int64_t iy = i * s - pad + u, ix = j * s - pad + v;
            if (iy < h + pad && ix < w + pad) cnt_pad++;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            double e = x->d[(nc * h + iy) * w + ix];
            m = e > m ? e : m;
            sum += e;
            cnt++;
          }
        want->d[(nc * oh + i) * ow + j] = (float)(is_max ? m : sum / (incl ? cnt_pad : cnt));
      }
  int64_t iv[11] = {k, k, pad, pad, pad, pad, s, s, 1, 1, incl};
  tens *ts[2] = {x, y};
  tctx c = {{&t_api}, ""};
  int rc = call(is_max ? mlc_ext_onednn_max_pool2d : mlc_ext_onednn_avg_pool2d, ts, 2, iv, 11, &c);
  if (rc) fprintf(stderr, "pool: %s\n", c.err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT(close_to(y->d, want->d, count(y), is_max ? "max_pool" : "avg_pool"));
  rm(x), rm(y), rm(want);
}

static void softmax_case(int rank, const int64_t *shape, int axis, int lg) {
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
  tens *ts[2] = {x, y};
  tctx c = {{&t_api}, ""};
  int rc = call(mlc_ext_onednn_softmax, ts, 2, iv, 2, &c);
  if (rc) fprintf(stderr, "softmax: %s\n", c.err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT(close_to(y->d, want->d, count(y), "softmax"));
  iv[0] = rank; /* axis out of range */
  CU_ASSERT_NOT_EQUAL(call(mlc_ext_onednn_softmax, ts, 2, iv, 2, &c), 0);
  rm(x), rm(y), rm(want);
}

static void test_onednn(void) {
  matmul_cases(mlc_ext_onednn_matmul);
  conv_cases(mlc_ext_onednn_conv2d, 1);
  pool_case(1, 12, 12, 3, 2, 1, 0, 0);
  pool_case(1, 8, 8, 2, 2, 0, 0, 0);
  pool_case(0, 7, 7, 7, 1, 0, 0, 0);
  pool_case(1, 10, 10, 3, 2, 0, 1, 0); /* ceil mode: one more window, its end padded */
  pool_case(0, 10, 10, 3, 2, 0, 1, 0);
  pool_case(0, 9, 9, 3, 2, 1, 0, 1);
  pool_case(0, 9, 9, 3, 2, 1, 0, 0);
  softmax_case(2, (int64_t[]){4, 33}, 1, 0);
  softmax_case(3, (int64_t[]){2, 5, 7}, 1, 0);
  softmax_case(3, (int64_t[]){2, 5, 7}, 2, 1);
}
#endif

static void reg(void) {
  static const CU_TestInfo tests[] = {
#ifdef MLC_HAVE_OPENBLAS
      {"openblas", test_openblas},
#endif
#ifdef MLC_HAVE_ONEDNN
      {"onednn", test_onednn},
#endif
      CU_TEST_INFO_NULL,
  };
  mlc_test_add_suite("ext_kernels", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {reg, NULL};
  return mlc_test_main("test_ext_kernels", fns);
}
