/*
** rt_onednn.c: the oneDNN provider's run-time wrappers (extern.h):
** "onednn.conv2d", "onednn.matmul", "onednn.max_pool2d",
** "onednn.avg_pool2d" and "onednn.softmax", in the kernel calling
** convention of mlc/mlc_extern.h, through oneDNN's C API.  Linked into a
** model.so (libmlcext_onednn.a, and -ldnnl) only when the dispatcher sent a
** call to oneDNN.
**
** Primitives.  A call's primitive depends on every shape and attribute; it
** is built on the first call with those (a primitive descriptor, the
** primitive and the reorders it needs) and kept in a process-wide cache
** (mutex, at most CACHE_MAX entries; a call that finds the cache full
** builds a transient one).  Convolutions let oneDNN choose its layouts
** (format any, usually blocked nChw16c): the plain NCHW input is reordered
** into its layout and the result back.  A constant weight (w_const) is
** reordered once, when its entry is built, and kept with the entry, which
** is keyed by the weight's address; any other weight is reordered on each
** call.  The residual add is a sum post-op (the residual copied into the
** destination first), relu and clip are eltwise post-ops.
**
** Concurrency and threads.  Primitives run with a user scratchpad taken
** from the session's workspace, so sessions may share cached primitives.
** oneDNN here runs on OpenMP: each call sets the calling thread's OpenMP
** thread count to the session's thread count.  The library is loaded at
** the first call (below), and stays loaded after the model is freed.
**
** Errors: every argument is checked (counts, float32, ranks, shapes against
** the attributes); a oneDNN failure is an error naming the function, what
** was being done and oneDNN's status.
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "extern/rt_ext.h"
#include "extern/rt_util.h"

/*
** The model does not link libdnnl: the first call loads it (dlopen) and
** takes these functions from it, each through a pointer of the header's
** type under the header's name.  Loading it late lets it start OpenMP with
** a short spin (GOMP_SPINCOUNT, unless the user set OpenMP's wait policy or
** spin count): OpenMP's idle threads otherwise spin for long after each
** call and take the cores from the session's own threads, which run the
** generated kernels in between.
*/
#define DNNL_FNS(X) \
  X(dnnl_dilated_convolution_forward_desc_init) \
  X(dnnl_engine_create) \
  X(dnnl_engine_destroy) \
  X(dnnl_logsoftmax_forward_desc_init) \
  X(dnnl_matmul_desc_init) \
  X(dnnl_memory_create) \
  X(dnnl_memory_desc_equal) \
  X(dnnl_memory_desc_get_size) \
  X(dnnl_memory_desc_init_by_tag) \
  X(dnnl_memory_destroy) \
  X(dnnl_pooling_v2_forward_desc_init) \
  X(dnnl_post_ops_append_eltwise) \
  X(dnnl_post_ops_append_sum) \
  X(dnnl_post_ops_create) \
  X(dnnl_post_ops_destroy) \
  X(dnnl_primitive_attr_create) \
  X(dnnl_primitive_attr_destroy) \
  X(dnnl_primitive_attr_set_post_ops) \
  X(dnnl_primitive_attr_set_scratchpad_mode) \
  X(dnnl_primitive_create) \
  X(dnnl_primitive_desc_create) \
  X(dnnl_primitive_desc_destroy) \
  X(dnnl_primitive_desc_query_md) \
  X(dnnl_primitive_destroy) \
  X(dnnl_primitive_execute) \
  X(dnnl_reorder_primitive_desc_create) \
  X(dnnl_softmax_forward_desc_init) \
  X(dnnl_status2str) \
  X(dnnl_stream_create) \
  X(dnnl_stream_destroy) \
  X(dnnl_stream_wait)

#define X(f) static __typeof__(f) *p_##f;
DNNL_FNS(X)
#undef X
static void (*p_omp_set_num_threads)(int);
static char load_error[512];

/* The library's functions by their own names, from here on. */
#define dnnl_dilated_convolution_forward_desc_init (*p_dnnl_dilated_convolution_forward_desc_init)
#define dnnl_engine_create (*p_dnnl_engine_create)
#define dnnl_engine_destroy (*p_dnnl_engine_destroy)
#define dnnl_logsoftmax_forward_desc_init (*p_dnnl_logsoftmax_forward_desc_init)
#define dnnl_matmul_desc_init (*p_dnnl_matmul_desc_init)
#define dnnl_memory_create (*p_dnnl_memory_create)
#define dnnl_memory_desc_equal (*p_dnnl_memory_desc_equal)
#define dnnl_memory_desc_get_size (*p_dnnl_memory_desc_get_size)
#define dnnl_memory_desc_init_by_tag (*p_dnnl_memory_desc_init_by_tag)
#define dnnl_memory_destroy (*p_dnnl_memory_destroy)
#define dnnl_pooling_v2_forward_desc_init (*p_dnnl_pooling_v2_forward_desc_init)
#define dnnl_post_ops_append_eltwise (*p_dnnl_post_ops_append_eltwise)
#define dnnl_post_ops_append_sum (*p_dnnl_post_ops_append_sum)
#define dnnl_post_ops_create (*p_dnnl_post_ops_create)
#define dnnl_post_ops_destroy (*p_dnnl_post_ops_destroy)
#define dnnl_primitive_attr_create (*p_dnnl_primitive_attr_create)
#define dnnl_primitive_attr_destroy (*p_dnnl_primitive_attr_destroy)
#define dnnl_primitive_attr_set_post_ops (*p_dnnl_primitive_attr_set_post_ops)
#define dnnl_primitive_attr_set_scratchpad_mode (*p_dnnl_primitive_attr_set_scratchpad_mode)
#define dnnl_primitive_create (*p_dnnl_primitive_create)
#define dnnl_primitive_desc_create (*p_dnnl_primitive_desc_create)
#define dnnl_primitive_desc_destroy (*p_dnnl_primitive_desc_destroy)
#define dnnl_primitive_desc_query_md (*p_dnnl_primitive_desc_query_md)
#define dnnl_primitive_destroy (*p_dnnl_primitive_destroy)
#define dnnl_primitive_execute (*p_dnnl_primitive_execute)
#define dnnl_reorder_primitive_desc_create (*p_dnnl_reorder_primitive_desc_create)
#define dnnl_softmax_forward_desc_init (*p_dnnl_softmax_forward_desc_init)
#define dnnl_status2str (*p_dnnl_status2str)
#define dnnl_stream_create (*p_dnnl_stream_create)
#define dnnl_stream_destroy (*p_dnnl_stream_destroy)
#define dnnl_stream_wait (*p_dnnl_stream_wait)

#define CACHE_MAX 512
#define MAX_RANK 12

/* ---- errors and common checks ----------------------------------------- */

/* Errors name the function: "onednn.FN: ..." (rt_util.h). */
#define fail(ctx, fn, ...) mlc_ext_fail((ctx), "onednn", (fn), __VA_ARGS__)


static void set_threads(mlc_rt_ctx *ctx) {
  int n = ctx->api->num_threads ? ctx->api->num_threads(ctx) : 1;
  if (p_omp_set_num_threads) p_omp_set_num_threads(n < 1 ? 1 : n);
}

/* ---- the engine --------------------------------------------------------- */

static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
static dnnl_engine_t engine;
static dnnl_status_t engine_status = dnnl_runtime_error;

/* Loads oneDNN (see above) and creates the engine.  oneDNN and its
** OpenMP runtime stay loaded in the process (RTLD_NODELETE): OpenMP's
** worker threads outlive a call and a model. */
static void make_engine(void) {
  int set_spin = 0;
  if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT") &&
      !dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD))
    set_spin = setenv("GOMP_SPINCOUNT", "20000", 1) == 0;
  void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (set_spin) unsetenv("GOMP_SPINCOUNT");
  if (!h) {
    const char *e = dlerror();
    snprintf(load_error, sizeof load_error, "cannot load libdnnl.so.2 (install libdnnl2): %s", e ? e : "?");
    return;
  }
#define X(f)                                                            \
  {                                                                     \
    void *sym = dlsym(h, #f);                                           \
    if (!sym) {                                                         \
      snprintf(load_error, sizeof load_error, "libdnnl.so.2 has no " #f); \
      return;                                                           \
    }                                                                   \
    memcpy(&p_##f, &sym, sizeof sym);                                   \
  }
  DNNL_FNS(X)
#undef X
  void *g = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  void *st = g ? dlsym(g, "omp_set_num_threads") : NULL;
  if (st) memcpy(&p_omp_set_num_threads, &st, sizeof st);
  engine_status = dnnl_engine_create(&engine, dnnl_cpu, 0);
  if (engine_status != dnnl_success)
    snprintf(load_error, sizeof load_error, "creating the CPU engine: %s", dnnl_status2str(engine_status));
}

static int have_engine(mlc_rt_ctx *ctx, const char *fn) {
  pthread_once(&engine_once, make_engine);
  if (engine_status == dnnl_success) return 1;
  fail(ctx, fn, "%s", load_error[0] ? load_error : "oneDNN is not available");
  return 0;
}

/* The plain row-major tag of |rank| dims. */
static dnnl_format_tag_t plain_tag(int rank) {
  static const dnnl_format_tag_t tags[MAX_RANK + 1] = {
      dnnl_format_tag_undef, dnnl_a,      dnnl_ab,      dnnl_abc,      dnnl_abcd,      dnnl_abcde,      dnnl_abcdef,
      dnnl_abcdefg,          dnnl_abcdefgh, dnnl_abcdefghi, dnnl_abcdefghij, dnnl_abcdefghijk, dnnl_abcdefghijkl};
  return rank >= 1 && rank <= MAX_RANK ? tags[rank] : dnnl_format_tag_undef;
}

/* ---- the cache of built primitives --------------------------------------- */

enum { K_CONV = 1, K_MATMUL, K_MAXPOOL, K_AVGPOOL, K_SOFTMAX };

typedef struct key {
  int kind;
  int n; /* values used in v */
  int64_t v[64];
  const void *w; /* a constant weight's address, or NULL */
} key;

typedef struct entry {
  key k;
  dnnl_primitive_t prim;
  dnnl_primitive_t src_in, dst_out, wei_in, res_in; /* reorders; NULL: none needed */
  dnnl_memory_desc_t src_md, wei_md, dst_md;        /* the layouts the primitive reads and writes */
  size_t src_bytes, wei_bytes, dst_bytes, scratch_bytes;
  dnnl_memory_desc_t scratch_md;
  void *wei_const;                                  /* the reordered constant weight (aligned) */
  int dst_plain;                                    /* dst_md is the plain layout of Y */
  int src_plain, wei_plain;
} entry;

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static entry *cache[CACHE_MAX];
static int ncache;

static void entry_free(entry *e) {
  if (!e) return;
  dnnl_primitive_t ps[] = {e->prim, e->src_in, e->dst_out, e->wei_in, e->res_in};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
    if (ps[i]) dnnl_primitive_destroy(ps[i]);
  free(e->wei_const);
  free(e);
}

static entry *cache_find(const key *k) {
  pthread_mutex_lock(&cache_mu);
  entry *found = NULL;
  for (int i = 0; i < ncache && !found; i++)
    if (cache[i]->k.kind == k->kind && cache[i]->k.n == k->n && cache[i]->k.w == k->w &&
        memcmp(cache[i]->k.v, k->v, sizeof k->v[0] * (size_t)k->n) == 0)
      found = cache[i];
  pthread_mutex_unlock(&cache_mu);
  return found;
}

/* Adds |e|; 1 when kept, 0 when the cache is full or another thread
** added the same key first (the caller then uses *|use| and frees |e|). */
static int cache_add(entry *e, entry **use) {
  pthread_mutex_lock(&cache_mu);
  *use = e;
  for (int i = 0; i < ncache; i++)
    if (cache[i]->k.kind == e->k.kind && cache[i]->k.n == e->k.n && cache[i]->k.w == e->k.w &&
        memcmp(cache[i]->k.v, e->k.v, sizeof e->k.v[0] * (size_t)e->k.n) == 0) {
      *use = cache[i];
      pthread_mutex_unlock(&cache_mu);
      return 0;
    }
  int kept = ncache < CACHE_MAX;
  if (kept) cache[ncache++] = e;
  pthread_mutex_unlock(&cache_mu);
  return kept;
}

/* When the model is unloaded: its cached primitives and the engine go
** (oneDNN itself stays loaded, so this is safe after the last call). */
__attribute__((destructor)) static void release_all(void) {
  pthread_mutex_lock(&cache_mu);
  for (int i = 0; i < ncache; i++) entry_free(cache[i]);
  ncache = 0;
  pthread_mutex_unlock(&cache_mu);
  if (engine_status == dnnl_success && p_dnnl_engine_destroy) p_dnnl_engine_destroy(engine);
}

static void key_add(key *k, int64_t v) {
  if (k->n < (int)(sizeof k->v / sizeof k->v[0])) k->v[k->n++] = v;
}

static void key_dims(key *k, const DLTensor *t) {
  key_add(k, t->ndim);
  for (int i = 0; i < t->ndim; i++) key_add(k, t->shape[i]);
}

/* A reorder from |from| to |to|, or NULL (and 1) when they are the same. */
static dnnl_status_t make_reorder(const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                                  dnnl_primitive_t *out) {
  *out = NULL;
  if (dnnl_memory_desc_equal(from, to)) return dnnl_success;
  dnnl_primitive_desc_t pd;
  dnnl_status_t st = dnnl_reorder_primitive_desc_create(&pd, from, engine, to, engine, NULL);
  if (st != dnnl_success) return st;
  st = dnnl_primitive_create(out, pd);
  dnnl_primitive_desc_destroy(pd);
  return st;
}

/* Runs |p| on |nargs| (arg, memory) pairs on a fresh stream. */
static dnnl_status_t run(dnnl_primitive_t p, int nargs, const dnnl_exec_arg_t *args) {
  dnnl_stream_t s;
  dnnl_status_t st = dnnl_stream_create(&s, engine, dnnl_stream_default_flags);
  if (st != dnnl_success) return st;
  st = dnnl_primitive_execute(p, s, nargs, args);
  if (st == dnnl_success) st = dnnl_stream_wait(s);
  dnnl_stream_destroy(s);
  return st;
}

/* A memory object of |md| over |ptr|. */
static dnnl_status_t mem(const dnnl_memory_desc_t *md, void *ptr, dnnl_memory_t *out) {
  return dnnl_memory_create(out, md, engine, ptr);
}

/* Reorders |ptr| (layout |from|) into |dst| (layout |to|) with |r|. */
static dnnl_status_t reorder_run(dnnl_primitive_t r, const dnnl_memory_desc_t *from, const void *ptr,
                                 const dnnl_memory_desc_t *to, void *dst) {
  dnnl_memory_t a = NULL, b = NULL;
  dnnl_status_t st = mem(from, (void *)ptr, &a);
  if (st == dnnl_success) st = mem(to, dst, &b);
  if (st == dnnl_success) {
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, a}, {DNNL_ARG_TO, b}};
    st = run(r, 2, args);
  }
  if (a) dnnl_memory_destroy(a);
  if (b) dnnl_memory_destroy(b);
  return st;
}

/* Builds the entry's primitive from op descriptor |op| and |attr|, with its
** layouts; reorders for the plain |src|, |wei|, |dst| layouts (NULL: none
** of that kind).  |sq|/|wq|/|dq|: the query kinds of its src, weights, dst. */
static dnnl_status_t build(entry *e, const void *op, dnnl_primitive_attr_t attr, const dnnl_memory_desc_t *src,
                           const dnnl_memory_desc_t *wei, const dnnl_memory_desc_t *dst) {
  dnnl_primitive_desc_t pd;
  dnnl_status_t st = dnnl_primitive_desc_create(&pd, op, attr, engine, NULL);
  if (st != dnnl_success) return st;
  const dnnl_memory_desc_t *q;
  if (src && (q = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0))) e->src_md = *q;
  if (wei && (q = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0))) e->wei_md = *q;
  if (dst && (q = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0))) e->dst_md = *q;
  if ((q = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0))) {
    e->scratch_md = *q;
    e->scratch_bytes = dnnl_memory_desc_get_size(q);
  }
  st = dnnl_primitive_create(&e->prim, pd);
  dnnl_primitive_desc_destroy(pd);
  if (st != dnnl_success) return st;
  if (src) {
    e->src_plain = dnnl_memory_desc_equal(src, &e->src_md);
    e->src_bytes = dnnl_memory_desc_get_size(&e->src_md);
    if ((st = make_reorder(src, &e->src_md, &e->src_in)) != dnnl_success) return st;
  }
  if (wei) {
    e->wei_plain = dnnl_memory_desc_equal(wei, &e->wei_md);
    e->wei_bytes = dnnl_memory_desc_get_size(&e->wei_md);
    if ((st = make_reorder(wei, &e->wei_md, &e->wei_in)) != dnnl_success) return st;
  }
  if (dst) {
    e->dst_plain = dnnl_memory_desc_equal(dst, &e->dst_md);
    e->dst_bytes = dnnl_memory_desc_get_size(&e->dst_md);
    if ((st = make_reorder(&e->dst_md, dst, &e->dst_out)) != dnnl_success) return st;
    if ((st = make_reorder(dst, &e->dst_md, &e->res_in)) != dnnl_success) return st;
  }
  return dnnl_success;
}

static void *ws(mlc_rt_ctx *ctx, size_t n) { return n ? ctx->api->workspace_alloc(ctx, (uint64_t)n) : NULL; }

static void ws_free(mlc_rt_ctx *ctx, void *p) {
  if (p) ctx->api->workspace_free(ctx, p);
}

/* ---- conv2d ------------------------------------------------------------- */

enum { ACT_NONE = MLC_EXT_RT_NONE, ACT_RELU = MLC_EXT_RT_RELU, ACT_CLIP = MLC_EXT_RT_CLIP };

int mlc_ext_onednn_conv2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  mlc_ext_conv cv;
  char msg[256];
  if (mlc_ext_conv_read(args, codes, nargs, &cv, msg, sizeof msg)) return fail(ctx, "conv2d", "%s", msg);
  const DLTensor *X = cv.x, *W = cv.w, *Bi = cv.bias, *R = cv.res, *Y = cv.y;
  const int64_t *at = cv.at;
  int64_t dh = cv.dh, dw = cv.dw, groups = cv.groups, pt = cv.pt, pl = cv.pl, pb = cv.pb, pr = cv.pr, sh = cv.sh,
          sw = cv.sw, act = cv.act, w_const = cv.w_const;
  int64_t n = cv.n, c = cv.c, h = cv.h, wd = cv.wd, k = cv.k, kh = cv.kh, kw = cv.kw, oh = cv.oh, ow = cv.ow;
  if (mlc_ext_numel(Y) == 0) return 0;
  if (mlc_ext_numel(X) == 0 || mlc_ext_numel(W) == 0) return fail(ctx, "conv2d", "an empty input or weight");
  if (!have_engine(ctx, "conv2d")) return -1;
  key kk;
  memset(&kk, 0, sizeof kk);
  kk.kind = K_CONV;
  key_dims(&kk, X);
  key_dims(&kk, W);
  for (int i = 0; i < 15; i++) key_add(&kk, at[i]);
  kk.w = w_const ? mlc_ext_data(W) : NULL;
  entry *e = cache_find(&kk), *fresh = NULL;
  dnnl_status_t st = dnnl_success;
  const char *doing = "";
  dnnl_dims_t xd = {n, c, h, wd}, yd = {n, k, oh, ow}, bd = {k};
  dnnl_dims_t wdims = {groups, k / groups, c / groups, kh, kw};
  dnnl_memory_desc_t x_md, y_md, w_md, b_md, x_any, y_any, w_any;
  int wr = groups > 1 ? 5 : 4;
  if (groups == 1) memcpy(wdims, (dnnl_dims_t){k, c, kh, kw}, sizeof(int64_t) * 4);
  dnnl_memory_desc_init_by_tag(&x_md, 4, xd, dnnl_f32, dnnl_abcd);
  dnnl_memory_desc_init_by_tag(&y_md, 4, yd, dnnl_f32, dnnl_abcd);
  dnnl_memory_desc_init_by_tag(&w_md, wr, wdims, dnnl_f32, plain_tag(wr));
  dnnl_memory_desc_init_by_tag(&b_md, 1, bd, dnnl_f32, dnnl_a);
  if (!e) {
    fresh = calloc(1, sizeof *fresh);
    if (!fresh) return fail(ctx, "conv2d", "out of memory");
    fresh->k = kk;
    dnnl_memory_desc_init_by_tag(&x_any, 4, xd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&y_any, 4, yd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&w_any, wr, wdims, dnnl_f32, dnnl_format_tag_any);
    dnnl_dims_t strides = {sh, sw}, dil = {dh - 1, dw - 1}, padl = {pt, pl}, padr = {pb, pr};
    dnnl_convolution_desc_t cd;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    doing = "describing the convolution";
    st = dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &x_any,
                                                     &w_any, Bi ? &b_md : NULL, &y_any, strides, dil, padl, padr);
    if (st == dnnl_success) st = dnnl_primitive_attr_create(&attr);
    if (st == dnnl_success) st = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (st == dnnl_success) st = dnnl_post_ops_create(&po);
    if (st == dnnl_success && R) st = dnnl_post_ops_append_sum(po, 1.0f);
    if (st == dnnl_success && act == ACT_RELU) st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
    if (st == dnnl_success && act == ACT_CLIP) {
      uint32_t lo = (uint32_t)at[12], hi = (uint32_t)at[13];
      float flo, fhi;
      memcpy(&flo, &lo, sizeof flo);
      memcpy(&fhi, &hi, sizeof fhi);
      st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, flo, fhi);
    }
    if (st == dnnl_success) st = dnnl_primitive_attr_set_post_ops(attr, po);
    if (st == dnnl_success) {
      doing = "creating the convolution primitive";
      st = build(fresh, &cd, attr, &x_md, &w_md, &y_md);
    }
    if (po) dnnl_post_ops_destroy(po);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (st == dnnl_success && w_const) {
      doing = "reordering the weights";
      if (fresh->wei_plain) {
        fresh->wei_const = NULL; /* the model's own copy is in the right layout */
      } else if (posix_memalign(&fresh->wei_const, 64, fresh->wei_bytes ? fresh->wei_bytes : 64) != 0) {
        fresh->wei_const = NULL;
        st = dnnl_out_of_memory;
      } else {
        set_threads(ctx);
        st = reorder_run(fresh->wei_in, &w_md, mlc_ext_data(W), &fresh->wei_md, fresh->wei_const);
      }
    }
    if (st != dnnl_success) {
      entry_free(fresh);
      return fail(ctx, "conv2d", "%s: %s", doing, dnnl_status2str(st));
    }
    if (cache_add(fresh, &e)) fresh = NULL;
    else if (e != fresh) {
      entry_free(fresh);
      fresh = NULL;
    }
  }
  set_threads(ctx);
  /* buffers in the primitive's layouts, where they are not the plain ones */
  void *xs = e->src_in ? ws(ctx, e->src_bytes) : NULL, *ys = e->dst_plain ? NULL : ws(ctx, e->dst_bytes);
  void *wsb = e->wei_plain || (w_const && e->wei_const) ? NULL : ws(ctx, e->wei_bytes);
  void *scratch = ws(ctx, e->scratch_bytes);
  dnnl_memory_t mx = NULL, mw = NULL, mb = NULL, my = NULL, msc = NULL;
  if ((e->src_in && !xs) || (!e->dst_plain && !ys) || (!e->wei_plain && !(w_const && e->wei_const) && !wsb) ||
      (e->scratch_bytes && !scratch)) {
    st = dnnl_out_of_memory;
    doing = "allocating workspace";
  }
  float *y = mlc_ext_data(Y);
  void *ybuf = e->dst_plain ? (void *)y : ys;
  if (st == dnnl_success && e->src_in) {
    doing = "reordering the input";
    st = reorder_run(e->src_in, &x_md, mlc_ext_data(X), &e->src_md, xs);
  }
  const void *wptr = e->wei_plain ? mlc_ext_data(W) : w_const && e->wei_const ? e->wei_const : wsb;
  if (st == dnnl_success && !e->wei_plain && !(w_const && e->wei_const)) {
    doing = "reordering the weights";
    st = reorder_run(e->wei_in, &w_md, mlc_ext_data(W), &e->wei_md, wsb);
  }
  if (st == dnnl_success && R) {
    doing = "placing the residual";
    if (e->dst_plain) {
      if (mlc_ext_data(R) != y) memmove(y, mlc_ext_data(R), sizeof(float) * (size_t)mlc_ext_numel(Y));
    } else {
      st = reorder_run(e->res_in, &y_md, mlc_ext_data(R), &e->dst_md, ys);
    }
  }
  if (st == dnnl_success) {
    doing = "running the convolution";
    st = mem(&e->src_md, e->src_in ? xs : (void *)mlc_ext_data(X), &mx);
    if (st == dnnl_success) st = mem(&e->wei_md, (void *)wptr, &mw);
    if (st == dnnl_success && Bi) st = mem(&b_md, mlc_ext_data(Bi), &mb);
    if (st == dnnl_success) st = mem(&e->dst_md, ybuf, &my);
    if (st == dnnl_success && e->scratch_bytes) st = mem(&e->scratch_md, scratch, &msc);
    if (st == dnnl_success) {
      dnnl_exec_arg_t a[5];
      int na = 0;
      a[na++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, mx};
      a[na++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, mw};
      if (mb) a[na++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, mb};
      a[na++] = (dnnl_exec_arg_t){DNNL_ARG_DST, my};
      if (msc) a[na++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, msc};
      st = run(e->prim, na, a);
    }
  }
  if (st == dnnl_success && !e->dst_plain) {
    doing = "reordering the output";
    st = reorder_run(e->dst_out, &e->dst_md, ys, &y_md, y);
  }
  dnnl_memory_t ms[] = {mx, mw, mb, my, msc};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
    if (ms[i]) dnnl_memory_destroy(ms[i]);
  ws_free(ctx, xs);
  ws_free(ctx, ys);
  ws_free(ctx, wsb);
  ws_free(ctx, scratch);
  entry_free(fresh);
  return st == dnnl_success ? 0 : fail(ctx, "conv2d", "%s: %s", doing, dnnl_status2str(st));
}

/* ---- plain-layout primitives: pooling, softmax, matmul ------------------ */

/* Runs entry |e| (built on plain layouts) with inputs |in| (DNNL arg ids
** |ids|, |nin| of them, descriptors |mds|) and output |out|. */
static dnnl_status_t run_plain(mlc_rt_ctx *ctx, entry *e, int nin, const int *ids, const dnnl_memory_desc_t *mds,
                               void *const *in, const dnnl_memory_desc_t *out_md, void *out) {
  void *scratch = ws(ctx, e->scratch_bytes);
  if (e->scratch_bytes && !scratch) return dnnl_out_of_memory;
  dnnl_memory_t m[4] = {NULL, NULL, NULL, NULL};
  dnnl_exec_arg_t a[4];
  int na = 0;
  dnnl_status_t st = dnnl_success;
  for (int i = 0; i < nin && st == dnnl_success; i++) {
    st = mem(&mds[i], in[i], &m[na]);
    if (st == dnnl_success) a[na] = (dnnl_exec_arg_t){ids[i], m[na]}, na++;
  }
  if (st == dnnl_success && (st = mem(out_md, out, &m[na])) == dnnl_success) a[na] = (dnnl_exec_arg_t){DNNL_ARG_DST, m[na]}, na++;
  if (st == dnnl_success && e->scratch_bytes && (st = mem(&e->scratch_md, scratch, &m[na])) == dnnl_success)
    a[na] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, m[na]}, na++;
  if (st == dnnl_success) {
    set_threads(ctx);
    st = run(e->prim, na, a);
  }
  for (int i = 0; i < na; i++) dnnl_memory_destroy(a[i].memory);
  if (st != dnnl_success && na < 4 && m[na]) dnnl_memory_destroy(m[na]);
  ws_free(ctx, scratch);
  return st;
}

/* The entry of |kk| built from op descriptor |op| (plain layouts), cached. */
static entry *plain_entry(mlc_rt_ctx *ctx, const char *fn, const key *kk, const void *op, entry **fresh) {
  entry *e = cache_find(kk);
  *fresh = NULL;
  if (e) return e;
  entry *f = calloc(1, sizeof *f);
  if (!f) {
    fail(ctx, fn, "out of memory");
    return NULL;
  }
  f->k = *kk;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_status_t st = dnnl_primitive_attr_create(&attr);
  if (st == dnnl_success) st = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  if (st == dnnl_success) st = build(f, op, attr, NULL, NULL, NULL);
  if (attr) dnnl_primitive_attr_destroy(attr);
  if (st != dnnl_success) {
    entry_free(f);
    fail(ctx, fn, "creating the primitive: %s", dnnl_status2str(st));
    return NULL;
  }
  if (cache_add(f, &e)) return e;
  if (e != f) {
    entry_free(f);
    return e;
  }
  *fresh = f; /* cache full: used once, freed by the caller */
  return f;
}

static int pool(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx, int is_max) {
  const char *fn = is_max ? "max_pool2d" : "avg_pool2d";
  if (mlc_ext_ntensors(codes, nargs) != 2 || nargs != 2 + 11)
    return fail(ctx, fn, "takes X, Y and 11 ints (%d arguments)", nargs);
  const DLTensor *X = args[0], *Y = args[1];
  int64_t at[11];
  for (int i = 0; i < 11; i++) at[i] = *(const int64_t *)args[2 + i];
  int64_t kh = at[0], kw = at[1], pt = at[2], pl = at[3], pb = at[4], pr = at[5], sh = at[6], sw = at[7],
          dh = at[8], dw = at[9], incl = at[10];
  if (!mlc_ext_f32(X, 4) || !mlc_ext_f32(Y, 4)) return fail(ctx, fn, "X and Y must be compact float32 of rank 4");
  if (kh < 1 || kw < 1 || sh < 1 || sw < 1 || dh < 1 || dw < 1 || pt < 0 || pl < 0 || pb < 0 || pr < 0)
    return fail(ctx, fn, "bad attributes");
  int64_t n = X->shape[0], c = X->shape[1], h = X->shape[2], wd = X->shape[3], oh = Y->shape[2], ow = Y->shape[3];
  if (Y->shape[0] != n || Y->shape[1] != c || oh < 1 || ow < 1)
    return fail(ctx, fn, "Y's batch or channels differ from X's, or Y is empty");
  /* the end padding Y's shape implies (ceil_mode adds some) */
  int64_t eh = (kh - 1) * dh + 1, ew = (kw - 1) * dw + 1;
  int64_t prb = (oh - 1) * sh + eh - h - pt, prr = (ow - 1) * sw + ew - wd - pl;
  if (prb < pb - sh + 1 || prr < pr - sw + 1 || prb < 0 || prr < 0 || prb > pb + sh - 1 || prr > pr + sw - 1)
    return fail(ctx, fn, "Y [.., %lld, %lld] does not follow from X [.., %lld, %lld] and the attributes",
                (long long)oh, (long long)ow, (long long)h, (long long)wd);
  if (!is_max && incl && (prb > pb || prr > pr))
    return fail(ctx, fn, "count_include_pad with ceil_mode's extra padding is not supported");
  if (mlc_ext_numel(X) == 0) return fail(ctx, fn, "empty input");
  if (!have_engine(ctx, fn)) return -1;
  key kk;
  memset(&kk, 0, sizeof kk);
  kk.kind = is_max ? K_MAXPOOL : K_AVGPOOL;
  key_dims(&kk, X);
  key_dims(&kk, Y);
  for (int i = 0; i < 11; i++) key_add(&kk, at[i]);
  dnnl_dims_t xd = {n, c, h, wd}, yd = {n, c, oh, ow};
  dnnl_memory_desc_t x_md, y_md;
  dnnl_memory_desc_init_by_tag(&x_md, 4, xd, dnnl_f32, dnnl_abcd);
  dnnl_memory_desc_init_by_tag(&y_md, 4, yd, dnnl_f32, dnnl_abcd);
  dnnl_pooling_v2_desc_t pd;
  dnnl_dims_t strides = {sh, sw}, kern = {kh, kw}, dil = {dh - 1, dw - 1}, padl = {pt, pl},
              padr = {prb > 0 ? prb : 0, prr > 0 ? prr : 0};
  dnnl_alg_kind_t alg = is_max ? dnnl_pooling_max : incl ? dnnl_pooling_avg_include_padding : dnnl_pooling_avg_exclude_padding;
  dnnl_status_t st = dnnl_pooling_v2_forward_desc_init(&pd, dnnl_forward_inference, alg, &x_md, &y_md, strides, kern,
                                                        dil, padl, padr);
  if (st != dnnl_success) return fail(ctx, fn, "describing the pooling: %s", dnnl_status2str(st));
  entry *fresh, *e = plain_entry(ctx, fn, &kk, &pd, &fresh);
  if (!e) return -1;
  int ids[1] = {DNNL_ARG_SRC};
  void *in[1] = {mlc_ext_data(X)};
  st = run_plain(ctx, e, 1, ids, &x_md, in, &y_md, mlc_ext_data(Y));
  entry_free(fresh);
  return st == dnnl_success ? 0 : fail(ctx, fn, "running the pooling: %s", dnnl_status2str(st));
}

int mlc_ext_onednn_max_pool2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  return pool(args, codes, nargs, ctx, 1);
}

int mlc_ext_onednn_avg_pool2d(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  return pool(args, codes, nargs, ctx, 0);
}

int mlc_ext_onednn_softmax(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  if (mlc_ext_ntensors(codes, nargs) != 2 || nargs != 4) return fail(ctx, "softmax", "takes X, Y, axis and log (%d arguments)", nargs);
  const DLTensor *X = args[0], *Y = args[1];
  int64_t axis = *(const int64_t *)args[2], lg = *(const int64_t *)args[3];
  if (!mlc_ext_f32(X, -1) || !mlc_ext_f32(Y, X->ndim) || X->ndim < 1 || X->ndim > 6)
    return fail(ctx, "softmax", "X and Y must be compact float32 of one rank in 1..6");
  for (int d = 0; d < X->ndim; d++)
    if (X->shape[d] != Y->shape[d]) return fail(ctx, "softmax", "Y's shape differs from X's");
  if (axis < 0 || axis >= X->ndim || (lg != 0 && lg != 1)) return fail(ctx, "softmax", "bad axis %lld or log %lld", (long long)axis, (long long)lg);
  if (mlc_ext_numel(X) == 0) return 0;
  if (!have_engine(ctx, "softmax")) return -1;
  key kk;
  memset(&kk, 0, sizeof kk);
  kk.kind = K_SOFTMAX;
  key_dims(&kk, X);
  key_add(&kk, axis);
  key_add(&kk, lg);
  dnnl_dims_t d;
  for (int i = 0; i < X->ndim; i++) d[i] = X->shape[i];
  dnnl_memory_desc_t md;
  dnnl_memory_desc_init_by_tag(&md, X->ndim, d, dnnl_f32, plain_tag(X->ndim));
  dnnl_softmax_desc_t sd;
  dnnl_logsoftmax_desc_t ld;
  dnnl_status_t st = lg ? dnnl_logsoftmax_forward_desc_init(&ld, dnnl_forward_inference, &md, (int)axis)
                        : dnnl_softmax_forward_desc_init(&sd, dnnl_forward_inference, &md, (int)axis);
  if (st != dnnl_success) return fail(ctx, "softmax", "describing the softmax: %s", dnnl_status2str(st));
  entry *fresh, *e = plain_entry(ctx, "softmax", &kk, lg ? (const void *)&ld : (const void *)&sd, &fresh);
  if (!e) return -1;
  int ids[1] = {DNNL_ARG_SRC};
  void *in[1] = {mlc_ext_data(X)};
  st = run_plain(ctx, e, 1, ids, &md, in, &md, mlc_ext_data(Y));
  entry_free(fresh);
  return st == dnnl_success ? 0 : fail(ctx, "softmax", "running the softmax: %s", dnnl_status2str(st));
}

int mlc_ext_onednn_matmul(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  if (nargs != 3 || mlc_ext_ntensors(codes, nargs) != 3) return fail(ctx, "matmul", "takes A, B and Y (%d arguments)", nargs);
  const DLTensor *A = args[0], *B = args[1], *Y = args[2];
  if (!mlc_ext_f32(A, -1) || !mlc_ext_f32(B, -1) || !mlc_ext_f32(Y, -1))
    return fail(ctx, "matmul", "A, B and Y must be compact float32 tensors");
  int r = Y->ndim;
  if (A->ndim < 2 || B->ndim < 2 || r != (A->ndim > B->ndim ? A->ndim : B->ndim))
    return fail(ctx, "matmul", "ranks %d x %d -> %d: want both >= 2 and Y of the larger", A->ndim, B->ndim, r);
  /* both padded with leading 1s to Y's rank */
  dnnl_dims_t ad, bd, yd;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - A->ndim), ib = i - (r - B->ndim);
    ad[i] = ia >= 0 ? A->shape[ia] : 1;
    bd[i] = ib >= 0 ? B->shape[ib] : 1;
    yd[i] = Y->shape[i];
  }
  if (ad[r - 1] != bd[r - 2] || yd[r - 2] != ad[r - 2] || yd[r - 1] != bd[r - 1])
    return fail(ctx, "matmul", "the matrix dims disagree");
  for (int i = 0; i < r - 2; i++)
    if ((ad[i] != yd[i] && ad[i] != 1) || (bd[i] != yd[i] && bd[i] != 1))
      return fail(ctx, "matmul", "batch dim %d: %lld and %lld do not broadcast to %lld", i, (long long)ad[i],
                  (long long)bd[i], (long long)yd[i]);
  if (mlc_ext_numel(Y) == 0) return 0;
  if (ad[r - 1] == 0) {
    memset(mlc_ext_data(Y), 0, sizeof(float) * (size_t)mlc_ext_numel(Y));
    return 0;
  }
  if (!have_engine(ctx, "matmul")) return -1;
  key kk;
  memset(&kk, 0, sizeof kk);
  kk.kind = K_MATMUL;
  key_add(&kk, r);
  for (int i = 0; i < r; i++) key_add(&kk, ad[i]), key_add(&kk, bd[i]);
  dnnl_memory_desc_t a_md, b_md, y_md;
  dnnl_memory_desc_init_by_tag(&a_md, r, ad, dnnl_f32, plain_tag(r));
  dnnl_memory_desc_init_by_tag(&b_md, r, bd, dnnl_f32, plain_tag(r));
  dnnl_memory_desc_init_by_tag(&y_md, r, yd, dnnl_f32, plain_tag(r));
  dnnl_matmul_desc_t md;
  dnnl_status_t st = dnnl_matmul_desc_init(&md, &a_md, &b_md, NULL, &y_md);
  if (st != dnnl_success) return fail(ctx, "matmul", "describing the matmul: %s", dnnl_status2str(st));
  entry *fresh, *e = plain_entry(ctx, "matmul", &kk, &md, &fresh);
  if (!e) return -1;
  int ids[2] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS};
  dnnl_memory_desc_t mds[2] = {a_md, b_md};
  void *in[2] = {mlc_ext_data(A), mlc_ext_data(B)};
  st = run_plain(ctx, e, 2, ids, mds, in, &y_md, mlc_ext_data(Y));
  entry_free(fresh);
  return st == dnnl_success ? 0 : fail(ctx, "matmul", "running the matmul: %s", dnnl_status2str(st));
}
