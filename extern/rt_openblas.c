/*
** rt_openblas.c: the OpenBLAS provider's run-time wrappers (extern.h):
** "openblas.matmul" and "openblas.conv2d", in the kernel calling
** convention of mlc/mlc_extern.h.  Linked into a model.so (as
** libmlcext_openblas.a) only when the dispatcher sent a call to OpenBLAS.
**
** Loading.  The model does not link libopenblas: the first call loads it
** with dlopen, once per process.  OpenBLAS 0.3.21 picks its kernels when it
** initializes, from OPENBLAS_CORETYPE or its own CPU table, which does not
** know every AVX-512 CPU (it falls back to AVX2 kernels at half speed).  So
** before loading it: if the user has not set OPENBLAS_CORETYPE and the CPU
** has AVX-512 F, DQ, BW and VL, it is set to SkylakeX (OpenBLAS's AVX-512
** kernels); if OPENBLAS_NUM_THREADS is unset it is set to 1 (no thread pool
** of OpenBLAS's own).  Both are removed again right after, so the process's
** environment is left as it was.  If the library is already loaded in the
** process, it is used as it is.  A failure to load is an error of every
** call, naming the library.
**
** Threads.  OpenBLAS's thread count is global to the process, which would
** tie every session of a server to one count: it runs single-threaded
** (openblas_set_num_threads(1)) and each call is cut into pieces run on the
** session's threads (ctx->api->parallel_for), num_threads of them or more.
**
** Convolution is GEMM per image and group, Y[K/g, pixels] = W[K/g, C/g *
** KH * KW] x col[C/g * KH * KW, pixels]: a 1x1 convolution with stride 1
** and no padding reads X as col directly; any other copies a block of
** output pixels' columns (im2col) into a workspace sized to stay in the
** L2 cache.  The epilogue (bias, residual, relu or clip) is applied to each
** block right after its GEMM, while it is in cache.
*/
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extern/rt_ext.h"
#include "extern/rt_util.h"

/* cblas enums, as cblas.h numbers them */
enum { ROW_MAJOR = 101, NO_TRANS = 111 };

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c, int ldc);

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static sgemm_fn p_sgemm;
static char *(*p_corename)(void);
static char load_error[512];

#define LIB "libopenblas.so.0"

static int has_avx512(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
  return 0;
#endif
}

static void load(void) {
  void *h = dlopen(LIB, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) {
    int set_core = 0, set_threads = 0;
    if (!getenv("OPENBLAS_CORETYPE") && has_avx512()) set_core = setenv("OPENBLAS_CORETYPE", "SkylakeX", 1) == 0;
    if (!getenv("OPENBLAS_NUM_THREADS")) set_threads = setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0;
    h = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
    if (set_core) unsetenv("OPENBLAS_CORETYPE");
    if (set_threads) unsetenv("OPENBLAS_NUM_THREADS");
  }
  if (!h) {
    const char *e = dlerror();
    snprintf(load_error, sizeof load_error, "cannot load " LIB " (install libopenblas0): %s", e ? e : "?");
    return;
  }
  void *g = dlsym(h, "cblas_sgemm"), *t = dlsym(h, "openblas_set_num_threads"), *cn = dlsym(h, "openblas_get_corename");
  if (cn) memcpy(&p_corename, &cn, sizeof p_corename);
  if (!g) {
    snprintf(load_error, sizeof load_error, LIB " has no cblas_sgemm");
    return;
  }
  if (t) {
    void (*set_threads)(int);
    memcpy(&set_threads, &t, sizeof set_threads);
    set_threads(1);
  }
  memcpy(&p_sgemm, &g, sizeof p_sgemm);
}

/* Errors name the function: "openblas.FN: ..." (rt_util.h). */
#define fail(ctx, fn, ...) mlc_ext_fail((ctx), "openblas", (fn), __VA_ARGS__)

/* The kernels OpenBLAS chose ("SkylakeX", ...), into |buf|: 0, or -1 with
** the reason it cannot be loaded (for tests and diagnostics). */
int mlc_ext_openblas_coretype(char *buf, size_t n) {
  pthread_once(&load_once, load);
  const char *s = p_sgemm ? (p_corename ? p_corename() : "unknown") : load_error;
  snprintf(buf, n, "%s", s ? s : "unknown");
  return p_sgemm ? 0 : -1;
}

static int ready(mlc_rt_ctx *ctx, const char *fn) {
  pthread_once(&load_once, load);
  return p_sgemm ? 1 : (fail(ctx, fn, "%s", load_error), 0);
}

static int nthreads(mlc_rt_ctx *ctx) {
  int n = ctx->api->num_threads ? ctx->api->num_threads(ctx) : 1;
  return n < 1 ? 1 : n;
}


/* ---- matmul ------------------------------------------------------------- */


typedef struct mm_job {
  const float *a, *b;
  float *y;
  int64_t m, n, k;
  int64_t nbatch;
  const int64_t *aoff, *boff; /* per batch: element offsets of its A and B */
  int64_t mchunk, nchunk, mparts, nparts;
} mm_job;

static int mm_body(int64_t begin, int64_t end, void *closure) {
  const mm_job *j = closure;
  for (int64_t it = begin; it < end; it++) {
    int64_t per = j->mparts * j->nparts;
    int64_t bi = it / per, r = it % per;
    int64_t m0 = (r / j->nparts) * j->mchunk, n0 = (r % j->nparts) * j->nchunk;
    int64_t mm = j->m - m0 < j->mchunk ? j->m - m0 : j->mchunk;
    int64_t nn = j->n - n0 < j->nchunk ? j->n - n0 : j->nchunk;
    if (mm <= 0 || nn <= 0) continue;
    const float *a = j->a + j->aoff[bi] + m0 * j->k;
    const float *b = j->b + j->boff[bi] + n0;
    float *y = j->y + bi * j->m * j->n + m0 * j->n + n0;
    p_sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, (int)mm, (int)nn, (int)j->k, 1.0f, a, (int)j->k, b, (int)j->n, 0.0f, y,
            (int)j->n);
  }
  return 0;
}

/* Pieces of an m x n GEMM repeated |nbatch| times for |t| threads: the
** chunk sizes of rows and columns (each piece at least about 16 rows or 64
** columns, so OpenBLAS keeps its speed). */
static void split(int64_t nbatch, int64_t m, int64_t n, int t, int64_t *mchunk, int64_t *nchunk) {
  *mchunk = m;
  *nchunk = n;
  if (t <= 1 || nbatch >= 2 * t) return;
  int64_t want = (t * 2 + nbatch - 1) / nbatch; /* pieces per batch */
  int64_t mp = m / 16 < want ? (m / 16 > 0 ? m / 16 : 1) : want;
  int64_t np = mp < want ? (want + mp - 1) / mp : 1;
  if (np > n / 64) np = n / 64 > 0 ? n / 64 : 1;
  *mchunk = (m + mp - 1) / mp;
  *nchunk = (n + np - 1) / np;
  if (np > 1) *nchunk = (*nchunk + 15) / 16 * 16;
}

int mlc_ext_openblas_matmul(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  if (nargs != 3 || mlc_ext_ntensors(codes, nargs) != 3) return fail(ctx, "matmul", "takes A, B and Y (%d arguments)", nargs);
  const DLTensor *A = args[0], *B = args[1], *Y = args[2];
  if (!mlc_ext_f32(A, -1) || !mlc_ext_f32(B, -1) || !mlc_ext_f32(Y, -1))
    return fail(ctx, "matmul", "A, B and Y must be compact float32 tensors");
  mlc_ext_mm shp;
  if (mlc_ext_matmul_shapes(ctx, "openblas", A, B, Y, &shp)) return -1;
  int64_t m = shp.m, n = shp.n, k = shp.k, nbatch = shp.nbatch, *astr = shp.astr, *bstr = shp.bstr;
  int br = shp.br;
  if (mlc_ext_numel(Y) == 0) return 0;
  if (k == 0) {
    memset(mlc_ext_data(Y), 0, sizeof(float) * (size_t)mlc_ext_numel(Y));
    return 0;
  }
  if (!ready(ctx, "matmul")) return -1;
  /* B shared by every batch and A's batches contiguous: one tall GEMM */
  int shared_b = 1, dense_a = 1;
  for (int d = 0; d < br; d++) {
    shared_b &= bstr[d] == 0;
    dense_a &= astr[d] != 0 || Y->shape[d] == 1;
  }
  int64_t mm = m, nb = nbatch;
  if (shared_b && dense_a && nbatch > 1) {
    mm = m * nbatch;
    nb = 1;
  }
  if (mm > INT_MAX) return fail(ctx, "matmul", "%lld rows", (long long)mm);
  int64_t *offs = ctx->api->workspace_alloc(ctx, sizeof(int64_t) * 2 * (uint64_t)nb);
  if (!offs) return fail(ctx, "matmul", "out of memory");
  for (int64_t bi = 0; bi < nb; bi++) {
    int64_t rem = bi, ao = 0, bo = 0;
    for (int d = br - 1; d >= 0 && nb > 1; d--) {
      int64_t i = rem % Y->shape[d];
      rem /= Y->shape[d];
      ao += i * astr[d];
      bo += i * bstr[d];
    }
    offs[bi] = ao;
    offs[nb + bi] = bo;
  }
  mm_job j;
  memset(&j, 0, sizeof j);
  j.a = mlc_ext_data(A);
  j.b = mlc_ext_data(B);
  j.y = mlc_ext_data(Y);
  j.m = mm;
  j.n = n;
  j.k = k;
  j.nbatch = nb;
  j.aoff = offs;
  j.boff = offs + nb;
  split(nb, mm, n, nthreads(ctx), &j.mchunk, &j.nchunk);
  j.mparts = (mm + j.mchunk - 1) / j.mchunk;
  j.nparts = (n + j.nchunk - 1) / j.nchunk;
  int64_t items = nb * j.mparts * j.nparts;
  int rc = items > 1 ? ctx->api->parallel_for(ctx, items, mm_body, &j) : mm_body(0, 1, &j);
  ctx->api->workspace_free(ctx, offs);
  return rc;
}

/* ---- conv2d ------------------------------------------------------------- */

enum { ACT_NONE = MLC_EXT_RT_NONE, ACT_RELU = MLC_EXT_RT_RELU, ACT_CLIP = MLC_EXT_RT_CLIP };

/* Bytes of im2col panel each piece aims for (about an L2 cache's half). */
#define COL_BYTES (4 * 1024 * 1024)

typedef struct conv_job {
  mlc_rt_ctx *ctx;
  const float *x, *w, *bias, *res;
  float *y;
  int64_t n, c, h, wd, k, kh, kw, oh, ow;
  int64_t sh, sw, pt, pl, dh, dw, groups;
  int64_t cg, kg, rows; /* channels and filters per group; rows = cg * kh * kw */
  int64_t tile, ntiles, kchunk, kparts;
  int direct;           /* 1x1, stride 1, no padding: X is the column matrix */
  int res_in_y;         /* the residual is Y itself: the GEMM adds onto it */
  int act;
  float lo, hi;
} conv_job;

/* Columns of output pixels [p0, p0 + np) of image |img|, group |g| into
** col [rows, np]: per filter tap and output row, the zeros left of the
** input, the strided run inside it (a copy when the stride is 1), the zeros
** right of it. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void im2col(const conv_job *j, int64_t img, int64_t g, int64_t p0, int64_t np, float *restrict col) {
  const float *x = j->x + (img * j->c + g * j->cg) * j->h * j->wd;
  for (int64_t c = 0; c < j->cg; c++)
    for (int64_t u = 0; u < j->kh; u++)
      for (int64_t v = 0; v < j->kw; v++) {
        float *restrict dst = col + ((c * j->kh + u) * j->kw + v) * np;
        const float *xc = x + c * j->h * j->wd;
        /* output columns whose input column is inside: [lo, hi) */
        int64_t off = j->pl - v * j->dw;
        int64_t lo = off > 0 ? (off + j->sw - 1) / j->sw : 0;
        int64_t hi = (j->wd - 1 + off) >= 0 ? (j->wd - 1 + off) / j->sw + 1 : 0;
        if (hi > j->ow) hi = j->ow;
        if (lo > hi) lo = hi;
        for (int64_t q = 0; q < np;) {
          int64_t p = p0 + q, oy = p / j->ow, ox = p % j->ow;
          int64_t run = j->ow - ox < np - q ? j->ow - ox : np - q; /* to the row's end */
          int64_t iy = oy * j->sh - j->pt + u * j->dh;
          float *restrict d = dst + q;
          if (iy < 0 || iy >= j->h) {
            for (int64_t e = 0; e < run; e++) d[e] = 0.0f;
          } else {
            const float *row = xc + iy * j->wd - off;
            int64_t e = 0, end = ox + run;
            for (; ox + e < lo && e < run; e++) d[e] = 0.0f;
            int64_t stop = (hi < end ? hi : end) - ox;
            if (j->sw == 1)
              for (; e < stop; e++) d[e] = row[ox + e];
            else
              for (; e < stop; e++) d[e] = row[(ox + e) * j->sw];
            for (; e < run; e++) d[e] = 0.0f;
          }
          q += run;
        }
      }
}

/* y = act(y + bias + r) on filters [k0, k0 + nk), pixels [p0, p0 + np). */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void epilogue(const conv_job *j, int64_t img, int64_t k0, int64_t nk, int64_t p0, int64_t np) {
  int64_t plane = j->oh * j->ow;
  float lo = j->act == ACT_RELU ? 0.0f : j->act == ACT_CLIP ? j->lo : -__FLT_MAX__;
  float hi = j->act == ACT_CLIP ? j->hi : __FLT_MAX__;
  for (int64_t kk = k0; kk < k0 + nk; kk++) {
    float *restrict y = j->y + (img * j->k + kk) * plane + p0;
    const float *restrict r = j->res ? j->res + (img * j->k + kk) * plane + p0 : NULL;
    float b = j->bias ? j->bias[kk] : 0.0f;
    if (r)
      for (int64_t q = 0; q < np; q++) {
        float v = y[q] + b + r[q];
        v = v < lo ? lo : v;
        y[q] = v > hi ? hi : v;
      }
    else
      for (int64_t q = 0; q < np; q++) {
        float v = y[q] + b;
        v = v < lo ? lo : v;
        y[q] = v > hi ? hi : v;
      }
  }
}

static int conv_body(int64_t begin, int64_t end, void *closure) {
  const conv_job *j = closure;
  float *col = NULL;
  if (!j->direct) {
    col = j->ctx->api->workspace_alloc(j->ctx, sizeof(float) * (uint64_t)(j->rows * j->tile));
    if (!col) return fail(j->ctx, "conv2d", "out of memory for a %lld x %lld column block", (long long)j->rows,
                          (long long)j->tile);
  }
  int64_t plane = j->oh * j->ow;
  int epi = j->bias || j->res || j->act != ACT_NONE;
  for (int64_t it = begin; it < end; it++) {
    int64_t kp = it % j->kparts, rest = it / j->kparts;
    int64_t t = rest % j->ntiles, ig = rest / j->ntiles;
    int64_t g = ig % j->groups, img = ig / j->groups;
    int64_t p0 = t * j->tile, np = plane - p0 < j->tile ? plane - p0 : j->tile;
    int64_t k0 = kp * j->kchunk, nk = j->kg - k0 < j->kchunk ? j->kg - k0 : j->kchunk;
    if (np <= 0 || nk <= 0) continue;
    const float *bm;
    int64_t ldb;
    if (j->direct) {
      bm = j->x + (img * j->c + g * j->cg) * plane + p0;
      ldb = plane;
    } else {
      im2col(j, img, g, p0, np, col);
      bm = col;
      ldb = np;
    }
    const float *a = j->w + (g * j->kg + k0) * j->rows;
    float *y = j->y + (img * j->k + g * j->kg + k0) * plane + p0;
    p_sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, (int)nk, (int)np, (int)j->rows, 1.0f, a, (int)j->rows, bm, (int)ldb,
            j->res_in_y ? 1.0f : 0.0f, y, (int)plane);
    if (epi) epilogue(j, img, g * j->kg + k0, nk, p0, np);
  }
  if (col) j->ctx->api->workspace_free(j->ctx, col);
  return 0;
}

int mlc_ext_openblas_conv2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  mlc_ext_conv cv;
  char msg[256];
  if (mlc_ext_conv_read(args, codes, nargs, &cv, msg, sizeof msg)) return fail(ctx, "conv2d", "%s", msg);
  conv_job j;
  memset(&j, 0, sizeof j);
  j.ctx = ctx;
  j.n = cv.n, j.c = cv.c, j.h = cv.h, j.wd = cv.wd, j.k = cv.k, j.kh = cv.kh, j.kw = cv.kw;
  j.groups = cv.groups, j.cg = cv.c / cv.groups, j.kg = cv.k / cv.groups;
  j.oh = cv.oh, j.ow = cv.ow, j.sh = cv.sh, j.sw = cv.sw, j.pt = cv.pt, j.pl = cv.pl, j.dh = cv.dh, j.dw = cv.dw;
  j.rows = j.cg * j.kh * j.kw;
  if (j.rows > INT_MAX || j.oh * j.ow > INT_MAX || j.kg > INT_MAX) return fail(ctx, "conv2d", "a dimension over %d", INT_MAX);
  j.act = cv.act, j.lo = cv.lo, j.hi = cv.hi;
  if (mlc_ext_numel(cv.y) == 0) return 0;
  j.x = mlc_ext_data(cv.x), j.w = mlc_ext_data(cv.w), j.y = mlc_ext_data(cv.y);
  j.bias = cv.bias ? mlc_ext_data(cv.bias) : NULL;
  j.res = cv.res ? mlc_ext_data(cv.res) : NULL;
  /* Y may be the residual's memory (then the GEMM adds onto it), never
  ** overlap X, W, the bias or part of the residual */
  size_t yb = sizeof(float) * (size_t)mlc_ext_numel(cv.y);
  const DLTensor *ins[4] = {cv.x, cv.w, cv.bias, cv.res};
  for (int i = 0; i < 4; i++) {
    if (!ins[i] || (i == 3 && j.res == j.y)) continue;
    const char *a = (const char *)mlc_ext_data(ins[i]), *ye = (const char *)j.y;
    size_t ab = sizeof(float) * (size_t)mlc_ext_numel(ins[i]);
    if (ab && a < ye + yb && ye < a + ab)
      return fail(ctx, "conv2d", "Y overlaps its %s", i == 0 ? "input X" : i == 1 ? "weight" : i == 2 ? "bias" : "residual");
  }
  if (j.res == j.y) {
    j.res_in_y = 1;
    j.res = NULL;
  }
  int64_t oh = j.oh, ow = j.ow, sh = j.sh, sw = j.sw, pt = cv.pt, pl = cv.pl, pb = cv.pb, pr = cv.pr, groups = j.groups;
  if (j.rows == 0) {
    if (!j.res_in_y) memset(j.y, 0, sizeof(float) * (size_t)mlc_ext_numel(cv.y));
    for (int64_t img = 0; img < j.n; img++) epilogue(&j, img, 0, j.k, 0, oh * ow);
    return 0;
  }
  if (!ready(ctx, "conv2d")) return -1;
  int64_t plane = oh * ow;
  j.direct = j.kh == 1 && j.kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && pb == 0 && pr == 0;
  int64_t tile = j.direct ? plane : COL_BYTES / (int64_t)sizeof(float) / j.rows;
  tile = tile < 64 ? 64 : tile / 16 * 16;
  if (tile > plane) tile = plane;
  int t = nthreads(ctx);
  int64_t ntiles = (plane + tile - 1) / tile;
  /* enough pieces for the threads: smaller pixel tiles, then filter chunks */
  while (t > 1 && j.n * groups * ntiles < 2 * t && tile >= 128) {
    tile = (tile / 2 + 15) / 16 * 16;
    ntiles = (plane + tile - 1) / tile;
  }
  j.tile = tile, j.ntiles = ntiles;
  j.kchunk = j.kg, j.kparts = 1;
  if (t > 1 && j.n * groups * ntiles < t && j.kg >= 32) {
    int64_t want = (t + j.n * groups * ntiles - 1) / (j.n * groups * ntiles);
    j.kchunk = ((j.kg + want - 1) / want + 15) / 16 * 16;
    j.kparts = (j.kg + j.kchunk - 1) / j.kchunk;
  }
  int64_t items = j.n * groups * ntiles * j.kparts;
  return items > 1 ? ctx->api->parallel_for(ctx, items, conv_body, &j) : conv_body(0, 1, &j);
}
