/*
** session.c: one executable instance of a model: bound inputs, the arena,
** output buffers, the thread pool, and the plan executor.
**
** At creation a session builds everything a run needs that does not depend
** on the input shapes: a DLTensor for every tensor of the model (constants
** point into the weights), the flattened argument arrays of every step
** (tensor args point at those DLTensors, symbolic args at the session's
** bound values, immediates at a private copy), and the thread pool.  An
** input with a default is bound to it (its data in the weights) until the
** caller sets it, and again when the caller passes NULL for it.
**
** A run binds the symbolic dims from the input shapes, then evaluates the
** derived ones (a conv's output height from its input's; a failed
** requirement is the run's error).  Only when the bound values differ from
** the last run's does it re-plan: fill the symbolic dims of every DLTensor,
** size each arena storage as the largest of its tensors, lay the storages
** out in one 64-byte aligned arena, and grow the arena and the output
** buffers if they are too small (an arena above MLC_RT_ARENA_KEEP is also
** given back when a run needs less than a quarter of it).  Symbols with a
** bound (compile --shape-bound) size the memory at the bound instead, so a
** bounded model allocates its arena once, and an input above a bound is
** refused.  Then it calls the
** steps in order with the session's context.  Kernel workspaces freed
** during a run are cached for the next, so repeated runs at the same shapes
** allocate nothing.
**
** A kernel that fails reports through set_error, or, for a check of model
** data (an index out of range), through check_failed: the op type and a
** constant message whose "$0".."$2" the session fills with the reported
** values.  The run's error then names the step and its ONNX node.  When
** threads of one parallel loop fail together, the error of the lowest
** loop chunk is kept (the thread pool runs every chunk before a failed
** one), so the message is the one a serial run would give.
**
** Symbols that the model computes (run-bound, defined by BIND_SYMS steps)
** change within a run: a BIND_SYMS step sets them from a computed vector,
** and each later step that names a tensor with such dims first refreshes
** that tensor's shape and, at the step that writes it, sizes its memory.
** Those tensors live in storages of their own kept outside the arena
** (grown, not copied: the plan guarantees that a storage's previous
** tensor is dead when the next one is written, except at a step that
** writes its output in place of an input of the same type, which never
** needs to grow it; should one grow, the input is copied over), or, for
** outputs, in the output buffers, grown the same way.
**
** Run-time control flow steps (rt_model.h) call nothing: the executor jumps.
** IF writes its taken flag and skips the then branch when false, ELSE
** skips the else branch, END_IF copies the taken branch's values into the
** If's outputs (binding the symbols that the branches' shapes define);
** LOOP and LOOP_END copy the loop-carried values between iterations and
** append each iteration's scan values to a stack of the session (grown to
** at most twice what the run needs), copied into the stacked output when
** the loop ends.
*/
#include "config.h"
#include "runtime/rt_cuda.h"
#include "runtime/rt_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct mlc_rt_session {
  mlc_rt_ctx ctx; /* first, so a kernel's ctx is the session */
  uint32_t magic; /* MLC_RT_SESSION_MAGIC while alive */
  const mlc_rt_model *model;
  mlc_rt_pool *pool;
  int32_t nthreads;
  DLTensor *tensors;       /* ntensors */
  int64_t *shapes;         /* the tensors' shape arrays, back to back */
  void **args;             /* every step's args, flattened like model->arg_codes */
  int64_t *imms;           /* the immediates args point at */
  int64_t *syms;           /* symbol values of the current plan */
  int64_t *bind;           /* symbol values being bound by a run */
  int64_t *plan_vals;      /* symbol values memory is sized for: the bounds
                           ** where the model has them, else |syms| */
  unsigned char *input_set;
  int planned;             /* tensors, arena and outputs match |syms| */
  uint64_t *storage_size;  /* nstorages */
  uint64_t *storage_off;
  void *arena;
  uint64_t arena_cap;
  void **out_buf;          /* noutputs */
  uint64_t *out_cap;
  void **late_buf;         /* nstorages: storages sized step by step */
  uint64_t *late_cap;
  int outputs_valid;       /* the last run succeeded */
  double *step_ms;         /* profiling: nsteps total milliseconds, NULL when off */
  int64_t prof_runs;       /* profiling: successful runs timed */
  int ran;                 /* a run was attempted */
  pthread_mutex_t mu;      /* guards kerr and the workspace cache: kernels run on any thread */
  int kerr_set;
  int64_t kerr_chunk;      /* the parallel loop chunk that set kerr (-1: none) */
  char kerr_op[64];        /* a failed check: the ONNX op type, else "" */
  char kerr[512];
  struct ws_block *ws_free; /* workspaces freed by kernels, kept for reuse */
  int32_t ws_nfree;
  void *slot[MLC_RT_NSLOTS]; /* mlc_rt_api.session_slot */
  void (*slot_fini[MLC_RT_NSLOTS])(void *);
  /* a CUDA model's session: the device side, and per input / output the
  ** device buffer a CPU tensor is copied to or from (|in_dev|, |in_host|:
  ** the caller's data when it is on the CPU, else NULL), the outputs'
  ** host copies as the caller sees them (|out_host_t|) */
  mlc_rt_cuda *cuda;
  void **in_dev;
  uint64_t *in_dev_cap;
  const void **in_host;
  void **out_host;
  DLTensor *out_host_t;
  unsigned char *out_copied; /* the host copy of the last run is made */
  struct cuda_ws *cws;      /* device workspaces: all allocated, free or not */
  int graphs_ok;            /* runs may be recorded as CUDA graphs (cuda_run) */
  int graph_seen;           /* a run with |graph_key| executed step by step */
  uint64_t graph_key;
  int32_t ncws, cws_cap;
  struct cf_stack *cf_stacks; /* ntensors (models with control flow): LOOP_END's scan stacks */
  void *cf_tmp;             /* LOOP_END: carried values staged when they swap */
  uint64_t cf_tmp_cap;
  char err[1024];
};

/* The scan values a loop's iterations produced so far, for one stacked
** output (by its tensor id), in memory grown as it fills. */
typedef struct cf_stack {
  void *p;
  uint64_t cap, used;
  int64_t count;                   /* iterations appended */
  int64_t shape[MLC_RT_MAX_NDIM];  /* the first one's shape */
} cf_stack;

typedef struct cuda_ws {
  void *p;
  uint64_t cap;
  int used;
} cuda_ws;

#define DESC(s) ((s)->model->desc)

/* Rounds |n| up to MLC_RT_ALIGN; 0 on overflow. */
/* Arenas up to this size are kept whatever the runs need (see plan). */
#define MLC_RT_ARENA_KEEP ((uint64_t)64 << 20)

static uint64_t round_up(uint64_t n) {
  if (n > UINT64_MAX - (MLC_RT_ALIGN - 1)) return 0;
  return (n + MLC_RT_ALIGN - 1) / MLC_RT_ALIGN * MLC_RT_ALIGN;
}

/* The allocator of |s|'s model (the C library for NULL). */
#define ALLOC(s) ((s) ? &(s)->model->alloc : NULL)

/* MLC_RT_ALIGN-aligned memory of at least |n| bytes (at least one block)
** from |s|'s allocator; released with mlc_rt_free_aligned(ALLOC(s), p). */
static void *alloc_aligned(const mlc_rt_session *s, uint64_t n) {
  uint64_t sz = round_up(n ? n : 1);
  if (!sz || sz > SIZE_MAX) return NULL;
  return mlc_rt_alloc_aligned(ALLOC(s), (size_t)sz, MLC_RT_ALIGN);
}

/* Memory for the arena and the outputs: device memory in a CUDA session. */
static void *mem_alloc(mlc_rt_session *s, uint64_t n) {
  if (!s->cuda) return alloc_aligned(s, n);
  void *p = NULL;
  return mlc_rt_cuda_alloc(s->cuda, n, &p) ? NULL : p;
}

static void mem_free(mlc_rt_session *s, void *p) {
  if (!p) return;
  if (s->cuda) mlc_rt_cuda_release(s->cuda, p);
  else mlc_rt_free_aligned(ALLOC(s), p);
}

/* ---- the API kernels see (rt_abi.h) ------------------------------------- */

static int api_parallel_for(mlc_rt_ctx *ctx, int64_t n, mlc_rt_parallel_body body,
                            void *closure) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  return mlc_rt_pool_run(s ? s->pool : NULL, n, body, closure);
}

static int api_parallel_for_grain(mlc_rt_ctx *ctx, int64_t n, int64_t grain, mlc_rt_parallel_body body,
                                  void *closure) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  return mlc_rt_pool_run_grain(s ? s->pool : NULL, n, grain, body, closure);
}

/*
** Workspaces: each block starts with a header one alignment unit long that
** records its capacity.  Freed blocks go to a small per-session cache and
** are handed out again (smallest that fits), so a kernel that takes the same
** scratch memory on every run stops allocating after the first.
*/
typedef struct ws_block {
  uint64_t cap; /* usable bytes after the header */
  struct ws_block *next;
} ws_block;

#define WS_HEADER MLC_RT_ALIGN
#define WS_MAX_CACHED 16

static void *api_workspace_alloc(mlc_rt_ctx *ctx, uint64_t nbytes) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  if (s) {
    pthread_mutex_lock(&s->mu);
    ws_block **best = NULL;
    for (ws_block **b = &s->ws_free; *b; b = &(*b)->next)
      if ((*b)->cap >= nbytes && (!best || (*b)->cap < (*best)->cap)) best = b;
    ws_block *blk = best ? *best : NULL;
    if (blk) {
      *best = blk->next;
      s->ws_nfree--;
    }
    pthread_mutex_unlock(&s->mu);
    if (blk) return (char *)blk + WS_HEADER;
  }
  uint64_t cap = round_up(nbytes ? nbytes : 1);
  if (!cap || cap > UINT64_MAX - WS_HEADER) return NULL;
  ws_block *blk = alloc_aligned(s, cap + WS_HEADER);
  if (!blk) return NULL;
  blk->cap = cap;
  blk->next = NULL;
  return (char *)blk + WS_HEADER;
}

static void api_workspace_free(mlc_rt_ctx *ctx, void *p) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  if (!p) return;
  ws_block *blk = (ws_block *)((char *)p - WS_HEADER);
  if (s) {
    pthread_mutex_lock(&s->mu);
    int keep = s->ws_nfree < WS_MAX_CACHED;
    if (keep) {
      blk->next = s->ws_free;
      s->ws_free = blk;
      s->ws_nfree++;
    }
    pthread_mutex_unlock(&s->mu);
    if (keep) return;
  }
  mlc_rt_free_aligned(ALLOC(s), blk);
}

/*
** Records the kernel error |op| (may be NULL) / |msg| unless one is kept
** that a serial run would have raised first: the first error of a step
** wins, except that an error from an earlier chunk of a parallel loop
** replaces one from a later chunk.
*/
static void keep_error(mlc_rt_session *s, const char *op, const char *msg) {
  int64_t chunk = mlc_rt_pool_current_chunk();
  pthread_mutex_lock(&s->mu);
  if (!s->kerr_set || (chunk >= 0 && s->kerr_chunk >= 0 && chunk < s->kerr_chunk)) {
    snprintf(s->kerr_op, sizeof s->kerr_op, "%s", op ? op : "");
    snprintf(s->kerr, sizeof s->kerr, "%s", msg ? msg : "(no message)");
    s->kerr_set = 1;
    s->kerr_chunk = chunk;
  }
  pthread_mutex_unlock(&s->mu);
}

static int api_set_error(mlc_rt_ctx *ctx, const char *msg) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  if (s) keep_error(s, NULL, msg);
  return -1;
}

/* |msg| with "$0".."$2" replaced by |v| in decimal, into |buf|. */
static void format_check(const char *msg, const int64_t *v, char *buf, size_t size) {
  size_t w = 0;
  for (const char *p = msg ? msg : ""; *p && w + 1 < size; p++) {
    if (p[0] == '$' && p[1] >= '0' && p[1] <= '2') {
      int n = snprintf(buf + w, size - w, "%lld", (long long)v[p[1] - '0']);
      w = n < 0 ? w : w + (size_t)n < size ? w + (size_t)n : size - 1;
      p++;
    } else {
      buf[w++] = *p;
    }
  }
  buf[w] = 0;
}

static int api_check_failed(mlc_rt_ctx *ctx, const char *op, const char *msg, int64_t v0, int64_t v1,
                            int64_t v2) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  if (!s) return -1;
  int64_t v[3] = {v0, v1, v2};
  char buf[512];
  format_check(msg, v, buf, sizeof buf);
  keep_error(s, op && *op ? op : "kernel", buf);
  return -1;
}

static int api_num_threads(mlc_rt_ctx *ctx) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  int32_t n = s && s->pool ? mlc_rt_pool_threads(s->pool) : 1;
  return n > 0 ? (int)n : 1;
}

static void **api_session_slot(mlc_rt_ctx *ctx, int32_t key, void (*fini)(void *)) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  if (!s || key < 0 || key >= MLC_RT_NSLOTS) return NULL;
  if (fini) s->slot_fini[key] = fini;
  return &s->slot[key];
}

/* ---- the API of a CUDA session -------------------------------------------- */

/* Device workspaces stay allocated and are handed out again (smallest free
** one that fits): the stream orders every use, so a workspace freed by one
** kernel may serve the next at once. */
static void *cuda_ws_alloc(mlc_rt_ctx *ctx, uint64_t nbytes) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  int32_t best = -1;
  pthread_mutex_lock(&s->mu);
  for (int32_t i = 0; i < s->ncws; i++)
    if (!s->cws[i].used && s->cws[i].cap >= nbytes && (best < 0 || s->cws[i].cap < s->cws[best].cap)) best = i;
  if (best >= 0) s->cws[best].used = 1;
  pthread_mutex_unlock(&s->mu);
  if (best >= 0) return s->cws[best].p;
  if (s->ncws == s->cws_cap) {
    int32_t cap = s->cws_cap ? 2 * s->cws_cap : 8;
    cuda_ws *t = mlc_rt_calloc(ALLOC(s), (size_t)cap, sizeof *t);
    if (!t) return NULL;
    if (s->ncws) memcpy(t, s->cws, (size_t)s->ncws * sizeof *t);
    mlc_rt_free(ALLOC(s), s->cws);
    s->cws = t;
    s->cws_cap = cap;
  }
  void *p = mem_alloc(s, nbytes);
  if (!p) {
    keep_error(s, NULL, mlc_rt_cuda_error(s->cuda));
    return NULL;
  }
  s->cws[s->ncws].p = p;
  s->cws[s->ncws].cap = nbytes;
  s->cws[s->ncws++].used = 1;
  return p;
}

static void cuda_ws_free(mlc_rt_ctx *ctx, void *p) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  for (int32_t i = 0; p && i < s->ncws; i++)
    if (s->cws[i].p == p) s->cws[i].used = 0;
}

static void *api_cuda_stream(mlc_rt_ctx *ctx) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  return s && s->cuda ? mlc_rt_cuda_stream(s->cuda) : NULL;
}

static int api_cuda_launch(mlc_rt_ctx *ctx, const char *name, const int64_t *dims, void **params, int32_t nparams) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  if (!s || !s->cuda) return -1;
  if (mlc_rt_cuda_launch(s->cuda, name, dims, params, nparams) == 0) return 0;
  keep_error(s, NULL, mlc_rt_cuda_error(s->cuda));
  return -1;
}

static int64_t api_cuda_check(mlc_rt_ctx *ctx, int64_t *vals) {
  mlc_rt_session *s = (mlc_rt_session *)ctx;
  if (!s || !s->cuda) return -1;
  int64_t r = mlc_rt_cuda_check(s->cuda, vals);
  if (r < 0) keep_error(s, NULL, mlc_rt_cuda_error(s->cuda));
  return r;
}

static const mlc_rt_api session_api = {api_parallel_for, api_workspace_alloc, api_workspace_free,
                                       api_set_error,    api_check_failed,    api_num_threads,
                                       api_session_slot, NULL,                NULL,
                                       NULL,             api_parallel_for_grain};
static const mlc_rt_api cuda_session_api = {api_parallel_for, cuda_ws_alloc,   cuda_ws_free,
                                            api_set_error,    api_check_failed, api_num_threads,
                                            api_session_slot, api_cuda_stream, api_cuda_launch,
                                            api_cuda_check,   api_parallel_for_grain};

/* ---- create / free ------------------------------------------------------ */

/* |s| is a live session (not NULL, not freed where that shows, not foreign). */
#define LIVE(s) ((s) && (s)->magic == MLC_RT_SESSION_MAGIC)

/* Frees |s|, live or half-built. */
static void destroy(mlc_rt_session *s) {
  if (s->cuda) (void)mlc_rt_cuda_sync(s->cuda);
  for (int i = 0; i < MLC_RT_NSLOTS; i++)
    if (s->slot[i] && s->slot_fini[i]) s->slot_fini[i](s->slot[i]);
  mlc_rt_pool_destroy(s->pool);
  for (int32_t i = 0; i < s->ncws; i++) mem_free(s, s->cws[i].p);
  mlc_rt_free(ALLOC(s), s->cws);
  if (s->in_dev)
    for (int32_t i = 0; i < DESC(s)->ninputs; i++) mem_free(s, s->in_dev[i]);
  if (s->out_host)
    for (int32_t i = 0; i < DESC(s)->noutputs; i++) mlc_rt_free_aligned(ALLOC(s), s->out_host[i]);
  mlc_rt_free(ALLOC(s), s->in_dev);
  mlc_rt_free(ALLOC(s), s->in_dev_cap);
  mlc_rt_free(ALLOC(s), s->in_host);
  mlc_rt_free(ALLOC(s), s->out_host);
  mlc_rt_free(ALLOC(s), s->out_host_t);
  mlc_rt_free(ALLOC(s), s->out_copied);
  while (s->ws_free) {
    ws_block *next = s->ws_free->next;
    mlc_rt_free_aligned(ALLOC(s), s->ws_free);
    s->ws_free = next;
  }
  if (s->out_buf)
    for (int32_t i = 0; i < DESC(s)->noutputs; i++) mem_free(s, s->out_buf[i]);
  mlc_rt_free(ALLOC(s), s->out_buf);
  mlc_rt_free(ALLOC(s), s->out_cap);
  mlc_rt_free(ALLOC(s), s->step_ms);
  if (s->late_buf)
    for (int32_t i = 0; i < DESC(s)->nstorages; i++) mlc_rt_free_aligned(ALLOC(s), s->late_buf[i]);
  mlc_rt_free(ALLOC(s), s->late_buf);
  mlc_rt_free(ALLOC(s), s->late_cap);
  if (s->cf_stacks)
    for (int32_t i = 0; i < DESC(s)->ntensors; i++) mlc_rt_free_aligned(ALLOC(s), s->cf_stacks[i].p);
  mlc_rt_free(ALLOC(s), s->cf_stacks);
  mlc_rt_free_aligned(ALLOC(s), s->cf_tmp);
  mem_free(s, s->arena);
  mlc_rt_cuda_free(s->cuda);
  mlc_rt_free(ALLOC(s), s->storage_size);
  mlc_rt_free(ALLOC(s), s->storage_off);
  mlc_rt_free(ALLOC(s), s->input_set);
  mlc_rt_free(ALLOC(s), s->bind);
  mlc_rt_free(ALLOC(s), s->syms);
  mlc_rt_free(ALLOC(s), s->plan_vals);
  mlc_rt_free(ALLOC(s), s->imms);
  mlc_rt_free(ALLOC(s), s->args);
  mlc_rt_free(ALLOC(s), s->shapes);
  mlc_rt_free(ALLOC(s), s->tensors);
  pthread_mutex_destroy(&s->mu);
  mlc_rt_free(ALLOC(s), s);
}

void mlc_rt_session_free(mlc_rt_session *s) {
  if (!LIVE(s)) return;
  s->magic = 0;
  destroy(s);
}

/* Binds input |index|, which has a default, to it: the weights' data
** (on a CUDA model's device), not copied. */
static void bind_default(mlc_rt_session *s, int32_t index) {
  const mlc_rt_model_desc *d = DESC(s);
  const mlc_rt_io_desc *in = &d->inputs[index];
  const mlc_rt_tensor_desc *td = &d->tensors[in->tensor];
  DLTensor *t = &s->tensors[in->tensor];
  const uint8_t *w = s->cuda ? (const uint8_t *)mlc_rt_cuda_weights(s->cuda) : d->weights;
  t->data = w ? (void *)(w + in->default_loc) : NULL;
  t->byte_offset = 0;
  for (int32_t k = 0; k < td->ndim; k++) t->shape[k] = td->dims[k];
  if (s->cuda) s->in_host[index] = NULL; /* already on the device */
  s->input_set[index] = 1;
}

/* Fills the DLTensors (static dims, constants) and the step args. */
static void build_tensors_and_args(mlc_rt_session *s) {
  const mlc_rt_model *m = s->model;
  const mlc_rt_model_desc *d = m->desc;
  int64_t off = 0;
  for (int32_t i = 0; i < d->ntensors; i++) {
    const mlc_rt_tensor_desc *td = &d->tensors[i];
    DLTensor *t = &s->tensors[i];
    t->device.device_type = s->cuda ? kDLCUDA : kDLCPU;
    t->device.device_id = 0;
    t->ndim = td->ndim;
    t->dtype = td->dtype;
    t->shape = s->shapes + off;
    t->strides = NULL;
    t->byte_offset = 0;
    for (int32_t k = 0; k < td->ndim; k++) t->shape[k] = td->dims[k] >= 0 ? td->dims[k] : 0;
    off += td->ndim;
    const uint8_t *w = s->cuda ? (const uint8_t *)mlc_rt_cuda_weights(s->cuda) : d->weights;
    t->data = td->storage == MLC_RT_STORAGE_CONST ? (void *)(w + td->loc) : NULL;
  }
  int64_t imm = 0;
  for (int32_t i = 0; i < d->nsteps; i++) {
    const mlc_rt_step_desc *st = &d->steps[i];
    void **args = s->args + m->arg_start[i];
    for (int32_t a = 0; a < st->nargs; a++) {
      const mlc_rt_arg_desc *ad = &st->args[a];
      if (ad->kind == MLC_RT_ARG_TENSOR) {
        args[a] = &s->tensors[ad->value];
      } else if (ad->kind == MLC_RT_ARG_SYM) {
        args[a] = &s->syms[ad->value];
      } else {
        s->imms[imm] = ad->value;
        args[a] = &s->imms[imm++];
      }
    }
  }
  for (int32_t i = 0; i < d->ninputs; i++)
    if (d->inputs[i].has_default) bind_default(s, i);
}

mlc_rt_status mlc_rt_session_create(const mlc_rt_model *m, int32_t num_threads,
                                    mlc_rt_session **out, char *err, size_t errlen) {
  if (err && errlen) err[0] = 0;
  if (!out) return mlc_rt_errorf(err, errlen, MLC_RT_INVALID_ARGUMENT, "NULL output pointer");
  *out = NULL;
  if (!m) return mlc_rt_errorf(err, errlen, MLC_RT_INVALID_ARGUMENT, "NULL model");
  if (m->magic != MLC_RT_MODEL_MAGIC)
    return mlc_rt_errorf(err, errlen, MLC_RT_INVALID_ARGUMENT, "not an open model");
  int32_t nthreads = mlc_rt_pool_resolve_threads(num_threads);
  if (nthreads < 0)
    return mlc_rt_errorf(err, errlen, MLC_RT_INVALID_ARGUMENT,
                         "num_threads is %d; use 0 (one per CPU) or a positive count", num_threads);
  const mlc_rt_model_desc *d = m->desc;
  mlc_rt_session *s = mlc_rt_calloc(&m->alloc, 1, sizeof *s);
  if (!s) return mlc_rt_errorf(err, errlen, MLC_RT_OUT_OF_MEMORY, "out of memory");
  if (pthread_mutex_init(&s->mu, NULL) != 0) {
    mlc_rt_free(&m->alloc, s);
    return mlc_rt_errorf(err, errlen, MLC_RT_RUNTIME_ERROR, "cannot create a mutex");
  }
  s->ctx.api = &session_api;
  s->model = m;
  s->nthreads = nthreads;
  /* One extra element everywhere keeps every array non-NULL. */
  s->tensors = mlc_rt_calloc(&m->alloc, (size_t)d->ntensors + 1, sizeof *s->tensors);
  s->shapes = mlc_rt_calloc(&m->alloc, (size_t)m->nshape_total + 1, sizeof *s->shapes);
  s->args = mlc_rt_calloc(&m->alloc, (size_t)m->nargs_total + 1, sizeof *s->args);
  s->imms = mlc_rt_calloc(&m->alloc, (size_t)m->nimms + 1, sizeof *s->imms);
  s->syms = mlc_rt_calloc(&m->alloc, (size_t)d->nsyms + 1, sizeof *s->syms);
  s->bind = mlc_rt_calloc(&m->alloc, (size_t)d->nsyms + 1, sizeof *s->bind);
  s->plan_vals = mlc_rt_calloc(&m->alloc, (size_t)d->nsyms + 1, sizeof *s->plan_vals);
  s->input_set = mlc_rt_calloc(&m->alloc, (size_t)d->ninputs + 1, 1);
  s->storage_size = mlc_rt_calloc(&m->alloc, (size_t)d->nstorages + 1, sizeof *s->storage_size);
  s->storage_off = mlc_rt_calloc(&m->alloc, (size_t)d->nstorages + 1, sizeof *s->storage_off);
  s->out_buf = mlc_rt_calloc(&m->alloc, (size_t)d->noutputs + 1, sizeof *s->out_buf);
  s->out_cap = mlc_rt_calloc(&m->alloc, (size_t)d->noutputs + 1, sizeof *s->out_cap);
  s->late_buf = mlc_rt_calloc(&m->alloc, (size_t)d->nstorages + 1, sizeof *s->late_buf);
  s->late_cap = mlc_rt_calloc(&m->alloc, (size_t)d->nstorages + 1, sizeof *s->late_cap);
  if (m->has_cf) s->cf_stacks = mlc_rt_calloc(&m->alloc, (size_t)d->ntensors + 1, sizeof *s->cf_stacks);
  if (!s->tensors || !s->shapes || !s->args || !s->imms || !s->syms || !s->bind || !s->plan_vals ||
      !s->input_set || !s->storage_size || !s->storage_off || !s->out_buf || !s->out_cap ||
      !s->late_buf || !s->late_cap || (m->has_cf && !s->cf_stacks)) {
    destroy(s);
    return mlc_rt_errorf(err, errlen, MLC_RT_OUT_OF_MEMORY, "out of memory");
  }
  if (d->device == kDLCUDA) {
    char cerr[1024];
    s->ctx.api = &cuda_session_api;
    s->in_dev = mlc_rt_calloc(&m->alloc, (size_t)d->ninputs + 1, sizeof *s->in_dev);
    s->in_dev_cap = mlc_rt_calloc(&m->alloc, (size_t)d->ninputs + 1, sizeof *s->in_dev_cap);
    s->in_host = mlc_rt_calloc(&m->alloc, (size_t)d->ninputs + 1, sizeof *s->in_host);
    s->out_host = mlc_rt_calloc(&m->alloc, (size_t)d->noutputs + 1, sizeof *s->out_host);
    s->out_host_t = mlc_rt_calloc(&m->alloc, (size_t)d->noutputs + 1, sizeof *s->out_host_t);
    s->out_copied = mlc_rt_calloc(&m->alloc, (size_t)d->noutputs + 1, 1);
    if (!s->in_dev || !s->in_dev_cap || !s->in_host || !s->out_host || !s->out_host_t || !s->out_copied) {
      destroy(s);
      return mlc_rt_errorf(err, errlen, MLC_RT_OUT_OF_MEMORY, "out of memory");
    }
    if (mlc_rt_cuda_create(0, m->devcode, d->weights, d->weights_size, &s->cuda, cerr, sizeof cerr)) {
      destroy(s);
      return mlc_rt_errorf(err, errlen, MLC_RT_RUNTIME_ERROR, "cannot run model \"%s\" on CUDA: %s", d->name, cerr);
    }
    nthreads = 1; /* the host only launches */
    const char *g = getenv("MLC_CUDA_GRAPHS");
    s->graphs_ok = !(g && !strcmp(g, "0"));
    /* a library call the capture refuses (a copy from pageable host memory)
    ** makes the capture fail: cuda_run then runs step by step */
  }
  s->nthreads = nthreads;
  build_tensors_and_args(s);
  if (nthreads > 1) {
    int rc = mlc_rt_pool_create_with(&m->alloc, nthreads, &s->pool);
    if (rc) {
      destroy(s);
      return mlc_rt_errorf(err, errlen, MLC_RT_RUNTIME_ERROR,
                           "cannot start a thread pool of %d threads: %s", nthreads, strerror(rc));
    }
  }
  s->magic = MLC_RT_SESSION_MAGIC;
  *out = s;
  return MLC_RT_OK;
}

int32_t mlc_rt_session_num_threads(const mlc_rt_session *s) { return LIVE(s) ? s->nthreads : 0; }

mlc_rt_ctx *mlc_rt_session_ctx(mlc_rt_session *s) { return LIVE(s) ? &s->ctx : NULL; }

const char *mlc_rt_session_last_error(const mlc_rt_session *s) {
  if (!s) return "invalid session (NULL)";
  return LIVE(s) ? s->err : "invalid session (freed, or not a session)";
}

/* ---- inputs ------------------------------------------------------------- */

/* "(5, -1)" of |n| int64 values into |buf|. */
static void vec_str(const int64_t *v, int64_t n, char *buf, size_t size) {
  size_t w = (size_t)snprintf(buf, size, "(");
  for (int64_t i = 0; i < n && w + 24 < size; i++)
    w += (size_t)snprintf(buf + w, size - w, "%s%lld", i ? ", " : "", (long long)v[i]);
  if (w + 4 < size) snprintf(buf + w, size - w, "%s", n == 1 ? ",)" : ")");
}

#define SERR(s, st, ...) mlc_rt_errorf((s)->err, sizeof (s)->err, (st), __VA_ARGS__)

/* Checks that |t| (with |ndim| dims) is compact row-major. */
static int strides_compact(const DLTensor *t) {
  if (!t->strides) return 1;
  int64_t expect = 1;
  for (int32_t k = t->ndim - 1; k >= 0; k--) {
    if (t->shape[k] == 0) return 1; /* empty: any strides describe it */
    if (t->shape[k] != 1 && t->strides[k] != expect) return 0;
    expect *= t->shape[k];
  }
  return 1;
}

mlc_rt_status mlc_rt_session_set_input(mlc_rt_session *s, int32_t index, const DLTensor *t) {
  if (!LIVE(s)) return MLC_RT_INVALID_ARGUMENT;
  const mlc_rt_model_desc *d = DESC(s);
  if (index < 0 || index >= d->ninputs)
    return SERR(s, MLC_RT_INVALID_ARGUMENT, "input index %d is out of range (the model has %d inputs)",
                index, d->ninputs);
  const char *name = d->inputs[index].name;
  int32_t tid = d->inputs[index].tensor;
  const mlc_rt_tensor_desc *td = &d->tensors[tid];
  if (!t && d->inputs[index].has_default) {
    bind_default(s, index);
    return MLC_RT_OK;
  }
  s->input_set[index] = 0;
  if (!t)
    return SERR(s, MLC_RT_INVALID_ARGUMENT, "input \"%s\" (%d): NULL tensor (only an input with a default takes NULL)",
                name, index);
  if (t->device.device_type != kDLCPU && !(s->cuda && t->device.device_type == kDLCUDA))
    return SERR(s, MLC_RT_INVALID_ARGUMENT,
                "input \"%s\" (%d): device type %d, but this model takes %s", name, index,
                (int)t->device.device_type,
                s->cuda ? "CPU (kDLCPU) or CUDA (kDLCUDA) tensors" : "CPU (kDLCPU) tensors");
  /* bool is code 6 (kDLBool of DLPack >= 0.8); uint8 bytes are taken too. */
  int bool_ok = td->dtype.code == 6 && t->dtype.bits == 8 && t->dtype.lanes == 1 &&
                (t->dtype.code == 6 || t->dtype.code == kDLUInt);
  if (!bool_ok && (t->dtype.code != td->dtype.code || t->dtype.bits != td->dtype.bits ||
                   t->dtype.lanes != td->dtype.lanes)) {
    char got[32], want[32];
    mlc_rt_dtype_str(t->dtype, got, sizeof got);
    mlc_rt_dtype_str(td->dtype, want, sizeof want);
    return SERR(s, MLC_RT_INVALID_ARGUMENT, "input \"%s\" (%d): dtype %s, expected %s", name, index,
                got, want);
  }
  if (t->ndim != td->ndim)
    return SERR(s, MLC_RT_INVALID_ARGUMENT, "input \"%s\" (%d): rank %d, expected %d", name, index,
                t->ndim, td->ndim);
  if (t->ndim > 0 && !t->shape)
    return SERR(s, MLC_RT_INVALID_ARGUMENT, "input \"%s\" (%d): NULL shape", name, index);
  for (int32_t k = 0; k < t->ndim; k++) {
    int64_t v = t->shape[k];
    if (v < 0)
      return SERR(s, MLC_RT_INVALID_ARGUMENT, "input \"%s\" (%d): dim %d is negative (%lld)", name,
                  index, k, (long long)v);
    if (td->dims[k] >= 0 && v != td->dims[k])
      return SERR(s, MLC_RT_INVALID_ARGUMENT, "input \"%s\" (%d): dim %d is %lld, expected %lld",
                  name, index, k, (long long)v, (long long)td->dims[k]);
  }
  uint64_t numel = 0;
  if (mlc_rt_shape_size(t->dtype, t->shape, t->ndim, &numel, NULL, NULL) != 0) {
    char buf[512];
    vec_str(t->shape, t->ndim, buf, sizeof buf);
    return SERR(s, MLC_RT_INVALID_ARGUMENT,
                "input \"%s\" (%d): shape %s is too large (its element count, a stride or its byte "
                "size overflows int64)",
                name, index, buf);
  }
  if (numel > 0) {
    if (!t->data)
      return SERR(s, MLC_RT_INVALID_ARGUMENT, "input \"%s\" (%d): data is NULL", name, index);
    if (!strides_compact(t))
      return SERR(s, MLC_RT_INVALID_ARGUMENT,
                  "input \"%s\" (%d): strides are not compact row-major (copy it to a compact tensor)",
                  name, index);
    unsigned elem = ((unsigned)t->dtype.bits * t->dtype.lanes + 7) / 8;
    uintptr_t addr = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
    if (elem <= MLC_RT_ALIGN && (elem & (elem - 1)) == 0 && addr % elem != 0)
      return SERR(s, MLC_RT_INVALID_ARGUMENT, "input \"%s\" (%d): data is not aligned to %u bytes",
                  name, index, elem);
  }
  DLTensor *dst = &s->tensors[tid];
  dst->data = t->data;
  dst->byte_offset = numel > 0 ? t->byte_offset : 0;
  if (s->cuda) /* a CPU tensor is copied to the device when the run starts */
    s->in_host[index] = t->device.device_type == kDLCPU ? (const char *)t->data + dst->byte_offset : NULL;
  for (int32_t k = 0; k < t->ndim; k++) dst->shape[k] = t->shape[k];
  s->input_set[index] = 1;
  return MLC_RT_OK;
}

mlc_rt_status mlc_rt_session_set_input_by_name(mlc_rt_session *s, const char *name,
                                               const DLTensor *t) {
  if (!LIVE(s)) return MLC_RT_INVALID_ARGUMENT;
  if (!name) return SERR(s, MLC_RT_INVALID_ARGUMENT, "NULL input name");
  const mlc_rt_model_desc *d = DESC(s);
  for (int32_t i = 0; i < d->ninputs; i++)
    if (strcmp(d->inputs[i].name, name) == 0) return mlc_rt_session_set_input(s, i, t);
  char list[256] = "";
  size_t used = 0;
  for (int32_t i = 0; i < d->ninputs && used + 1 < sizeof list; i++) {
    int n = snprintf(list + used, sizeof list - used, "%s\"%s\"", i ? ", " : "", d->inputs[i].name);
    if (n < 0) break;
    used += (size_t)n;
  }
  return SERR(s, MLC_RT_NOT_FOUND, "no input named \"%s\" (inputs: %s)", name, list);
}

/* ---- run ---------------------------------------------------------------- */

/*
** Evaluates into |vals| the derived symbols known after step |ready| (-1:
** those of input-bound symbols, at the start of a run).  A CHECK whose
** operand is negative, or arithmetic that overflows, fails the run.
*/
static mlc_rt_status eval_derived(mlc_rt_session *s, int64_t *vals, int32_t ready) {
  const mlc_rt_model *m = s->model;
  const mlc_rt_model_desc *d = m->desc;
  for (int32_t k = 0; d->sym_defs && k < d->nsyms; k++) {
    const mlc_rt_sym_def *def = &d->sym_defs[k];
    if (def->op == MLC_RT_SYM_FREE || m->sym_ready[k] != ready) continue;
    int64_t a = vals[def->a], b = def->b_sym ? vals[def->b] : def->b, v = 0;
    int ovf = 0;
    switch (def->op) {
      case MLC_RT_SYM_ADD: ovf = __builtin_add_overflow(a, b, &v); break;
      case MLC_RT_SYM_MUL: ovf = __builtin_mul_overflow(a, b, &v); break;
      case MLC_RT_SYM_FLOORDIV: v = a >= 0 ? a / b : -((-(a + 1)) / b) - 1; break;
      case MLC_RT_SYM_MIN: v = a < b ? a : b; break;
      case MLC_RT_SYM_MAX: v = a > b ? a : b; break;
      default: v = a; break; /* CHECK */
    }
    if (ovf)
      return SERR(s, MLC_RT_INVALID_ARGUMENT, "symbolic dim \"%s\" overflows for the input shapes",
                  d->sym_names[k]);
    if (def->op == MLC_RT_SYM_CHECK && v < 0)
      return SERR(s, MLC_RT_INVALID_ARGUMENT, "%s (\"%s\" is %lld for the input shapes)",
                  def->where ? def->where : "a shape requirement fails", d->sym_names[def->a],
                  (long long)v);
    vals[k] = v;
  }
  return MLC_RT_OK;
}

/* Binds every symbol from the input shapes into s->bind. */
static mlc_rt_status bind_symbols(mlc_rt_session *s) {
  const mlc_rt_model *m = s->model;
  const mlc_rt_model_desc *d = m->desc;
  for (int32_t k = 0; k < d->nsyms; k++)
    s->bind[k] = m->sym_ready[k] >= 0 ? s->syms[k] : -1; /* run-bound: never replans */
  for (int32_t i = 0; i < d->ninputs; i++) {
    int32_t tid = d->inputs[i].tensor;
    const mlc_rt_tensor_desc *td = &d->tensors[tid];
    const int64_t *shape = s->tensors[tid].shape;
    for (int32_t j = 0; j < td->ndim; j++) {
      if (td->dims[j] >= 0) continue;
      int64_t k = -1 - td->dims[j];
      if (s->bind[k] < 0) {
        s->bind[k] = shape[j];
        int64_t bound = d->sym_defs ? d->sym_defs[k].bound : 0;
        if (bound > 0 && shape[j] > bound)
          return SERR(s, MLC_RT_INVALID_ARGUMENT,
                      "input \"%s\" (%d): dim %d (\"%s\") is %lld, above its bound %lld (the model was "
                      "compiled with --shape-bound %s=%lld)",
                      d->inputs[i].name, i, j, d->sym_names[k], (long long)shape[j], (long long)bound,
                      d->sym_names[k], (long long)bound);
      } else if (s->bind[k] != shape[j]) {
        /* The binder is the first occurrence, which model.c recorded. */
        int32_t bi = m->sym_input[k], bj = m->sym_dim[k];
        return SERR(s, MLC_RT_INVALID_ARGUMENT,
                    "input \"%s\" (%d): dim %d is %lld, but symbolic dim \"%s\" is %lld from input "
                    "\"%s\" dim %d",
                    d->inputs[i].name, i, j, (long long)shape[j], d->sym_names[k],
                    (long long)s->bind[k], d->inputs[bi].name, bj);
      }
    }
  }
  return eval_derived(s, s->bind, -1);
}

/*
** Bytes of tensor |t| at its current shape into *|nbytes|; an error naming
** step |step| (the one that writes it; -1: none) when a dim is negative or
** its element count, a stride or its bytes overflow int64.  |why| ends the
** message ("for the input shapes").
*/
static mlc_rt_status size_tensor(mlc_rt_session *s, int32_t t, int32_t step, const char *why,
                                 uint64_t *nbytes) {
  const mlc_rt_model_desc *d = DESC(s);
  const DLTensor *dt = &s->tensors[t];
  int rc = mlc_rt_shape_size(dt->dtype, dt->shape, dt->ndim, NULL, nbytes, NULL);
  if (rc == 0) return MLC_RT_OK;
  char where[320] = "", buf[512];
  if (step >= 0)
    snprintf(where, sizeof where, "step %d (node \"%s\"): ", step,
             d->steps[step].label ? d->steps[step].label : "");
  vec_str(dt->shape, dt->ndim, buf, sizeof buf);
  if (rc == -1)
    return SERR(s, MLC_RT_INVALID_ARGUMENT, "%stensor %d has a negative dim: shape %s", where, t, buf);
  return SERR(s, MLC_RT_INVALID_ARGUMENT,
              "%stensor %d of shape %s is too large %s (its element count, a stride or its byte "
              "size overflows int64)",
              where, t, buf, why);
}

/* Sizes and lays out memory for the symbol values in s->bind. */
static mlc_rt_status plan(mlc_rt_session *s) {
  const mlc_rt_model_desc *d = DESC(s);
  mlc_rt_status st;
  s->planned = 0;
  for (int32_t k = 0; k < d->nsyms; k++) s->syms[k] = s->bind[k];
  for (int32_t k = 0; k < d->nsyms; k++) {
    int64_t bound = d->sym_defs && d->sym_defs[k].op == MLC_RT_SYM_FREE ? d->sym_defs[k].bound : 0;
    s->plan_vals[k] = bound > 0 ? bound : s->syms[k];
  }
  if (s->model->has_bounds && (st = eval_derived(s, s->plan_vals, -1)) != MLC_RT_OK) return st;
  for (int32_t i = 0; i < d->nstorages; i++) s->storage_size[i] = 0;
  for (int32_t i = 0; i < d->ntensors; i++) {
    const mlc_rt_tensor_desc *td = &d->tensors[i];
    DLTensor *t = &s->tensors[i];
    for (int32_t k = 0; k < td->ndim; k++)
      t->shape[k] = td->dims[k] >= 0 ? td->dims[k] : s->syms[-1 - td->dims[k]];
    if (td->storage != MLC_RT_STORAGE_ARENA && td->storage != MLC_RT_STORAGE_OUTPUT) continue;
    if (s->model->tensor_late[i]) continue; /* sized at the step that writes it */
    uint64_t nbytes = 0;
    if ((st = size_tensor(s, i, s->model->tensor_first[i], "for the input shapes", &nbytes)) !=
        MLC_RT_OK)
      return st;
    if (s->model->has_bounds) { /* sized for the bounds: the arena is planned once */
      int64_t shape[MLC_RT_MAX_NDIM];
      uint64_t at_bounds = 0;
      for (int32_t k = 0; k < td->ndim; k++) shape[k] = td->dims[k] >= 0 ? td->dims[k] : s->plan_vals[-1 - td->dims[k]];
      if (mlc_rt_shape_size(t->dtype, shape, td->ndim, NULL, &at_bounds, NULL) == 0 && at_bounds > nbytes)
        nbytes = at_bounds;
    }
    if (td->storage == MLC_RT_STORAGE_ARENA) {
      if (nbytes > s->storage_size[td->loc]) s->storage_size[td->loc] = nbytes;
    } else if (nbytes > s->out_cap[td->loc] || !s->out_buf[td->loc]) {
      void *p = mem_alloc(s, nbytes);
      void *h = s->cuda && p ? alloc_aligned(s, nbytes) : NULL;
      if (!p || (s->cuda && !h)) {
        mem_free(s, p);
        return SERR(s, MLC_RT_OUT_OF_MEMORY, "out of memory for output \"%s\" (%llu bytes)%s%s",
                    d->outputs[td->loc].name, (unsigned long long)nbytes, s->cuda ? ": " : "",
                    s->cuda ? mlc_rt_cuda_error(s->cuda) : "");
      }
      mem_free(s, s->out_buf[td->loc]);
      s->out_buf[td->loc] = p;
      s->out_cap[td->loc] = round_up(nbytes ? nbytes : 1);
      if (s->cuda) {
        mlc_rt_free_aligned(ALLOC(s), s->out_host[td->loc]);
        s->out_host[td->loc] = h;
      }
    }
  }
  uint64_t total = 0;
  for (int32_t i = 0; i < d->nstorages; i++) {
    uint64_t sz = round_up(s->storage_size[i]);
    if (s->storage_size[i] && !sz) total = UINT64_MAX;
    s->storage_off[i] = total;
    total = total > UINT64_MAX - sz ? UINT64_MAX : total + sz;
  }
  if (total > (uint64_t)INT64_MAX)
    return SERR(s, MLC_RT_INVALID_ARGUMENT, "the arena is too large for the input shapes");
  /* Grown when too small; given back when a run needs less than a quarter
  ** of a large arena, so that one large input does not hold its memory for
  ** every later run (a bounded model's arena never changes). */
  int shrink = s->arena && s->arena_cap > MLC_RT_ARENA_KEEP && total < s->arena_cap / 4;
  if (total > s->arena_cap || !s->arena || shrink) {
    mem_free(s, s->arena);
    s->arena_cap = 0;
    s->arena = mem_alloc(s, total);
    if (!s->arena)
      return SERR(s, MLC_RT_OUT_OF_MEMORY, "out of memory for the %llu-byte arena%s%s",
                  (unsigned long long)total, s->cuda ? ": " : "", s->cuda ? mlc_rt_cuda_error(s->cuda) : "");
    s->arena_cap = round_up(total ? total : 1);
  }
  for (int32_t i = 0; i < d->ntensors; i++) {
    const mlc_rt_tensor_desc *td = &d->tensors[i];
    if (s->model->tensor_late[i]) continue;
    if (td->storage == MLC_RT_STORAGE_ARENA)
      s->tensors[i].data = (char *)s->arena + s->storage_off[td->loc];
    else if (td->storage == MLC_RT_STORAGE_OUTPUT)
      s->tensors[i].data = s->out_buf[td->loc];
  }
  s->planned = 1;
  return MLC_RT_OK;
}

/* BIND_SYMS step |i|: copies the vector and sets (or checks) the symbols. */
static mlc_rt_status bind_step(mlc_rt_session *s, int32_t i) {
  const mlc_rt_step_desc *st = &DESC(s)->steps[i];
  const DLTensor *v = &s->tensors[st->args[0].value], *o = &s->tensors[st->args[1].value];
  const int64_t *src = (const int64_t *)(const void *)((const char *)v->data + v->byte_offset);
  int64_t n = v->shape[0], off = st->args[2].value;
  const char *label = st->label ? st->label : "";
  if (n > 0) memcpy((char *)o->data + o->byte_offset, src, (size_t)n * sizeof *src);
  for (int32_t a = 3; a < st->nargs; a++) {
    int64_t val = src[off + a - 3];
    const mlc_rt_arg_desc *ad = &st->args[a];
    if (val >= 0 && (ad->kind == MLC_RT_ARG_SYM || val == ad->value)) {
      if (ad->kind == MLC_RT_ARG_SYM) s->syms[ad->value] = val;
      continue;
    }
    char buf[512];
    vec_str(src + off, st->nargs - 3, buf, sizeof buf);
    if (val < 0)
      return SERR(s, MLC_RT_INVALID_ARGUMENT,
                  "step %d (node \"%s\"): computed dimension %d is %lld (computed shape %s)", i,
                  label, a - 3, (long long)val, buf);
    return SERR(s, MLC_RT_INVALID_ARGUMENT,
                "step %d (node \"%s\"): computed dimension %d is %lld, the model was compiled for "
                "%lld (computed shape %s)",
                i, label, a - 3, (long long)val, (long long)ad->value, buf);
  }
  return eval_derived(s, s->syms, i);
}

/*
** Before step |i|, which names tensors with run-bound dims or sized step by
** step: refreshes their shapes from the current symbols and gives memory to
** those it writes (the tensors it names first).
*/
static mlc_rt_status give_memory(mlc_rt_session *s, int32_t t, int32_t i);

static mlc_rt_status prepare_step(mlc_rt_session *s, int32_t i) {
  const mlc_rt_model *m = s->model;
  const mlc_rt_model_desc *d = m->desc;
  const mlc_rt_step_desc *st = &d->steps[i];
  for (int32_t a = 0; a < st->nargs; a++) {
    if (st->args[a].kind != MLC_RT_ARG_TENSOR) continue;
    int32_t t = (int32_t)st->args[a].value;
    const mlc_rt_tensor_desc *td = &d->tensors[t];
    DLTensor *dt = &s->tensors[t];
    if (m->tensor_run[t])
      for (int32_t k = 0; k < td->ndim; k++)
        dt->shape[k] = td->dims[k] >= 0 ? td->dims[k] : s->syms[-1 - td->dims[k]];
    if (!m->tensor_late[t] || m->tensor_first[t] != i) continue;
    mlc_rt_status rs = give_memory(s, t, i);
    if (rs != MLC_RT_OK) return rs;
  }
  return MLC_RT_OK;
}

/*
** Gives tensor |t|, sized step by step, memory for its current shape at
** step |i| (the step that writes it): its storage or output buffer, grown
** when too small.
*/
static mlc_rt_status give_memory(mlc_rt_session *s, int32_t t, int32_t i) {
  const mlc_rt_model *m = s->model;
  const mlc_rt_model_desc *d = m->desc;
  const mlc_rt_step_desc *st = &d->steps[i];
  const mlc_rt_tensor_desc *td = &d->tensors[t];
  DLTensor *dt = &s->tensors[t];
  {
    uint64_t nbytes = 0;
    mlc_rt_status rs = size_tensor(s, t, i, "for the computed dims", &nbytes);
    if (rs != MLC_RT_OK) return rs;
    int out = td->storage == MLC_RT_STORAGE_OUTPUT;
    void **buf = out ? &s->out_buf[td->loc] : &s->late_buf[td->loc];
    uint64_t *cap = out ? &s->out_cap[td->loc] : &s->late_cap[td->loc];
    if (!*buf || nbytes > *cap) {
      /* The storage's previous tensor is dead unless this step reads it
      ** (an output written in place of an input): then it is copied over
      ** and every tensor of this step in the storage moves along. */
      int32_t reads = -1;
      for (int32_t r = 0; !out && *buf && r < st->nargs && reads < 0; r++) {
        int32_t u = (int32_t)st->args[r].value;
        if (st->args[r].kind == MLC_RT_ARG_TENSOR && u != t && d->tensors[u].storage == MLC_RT_STORAGE_ARENA &&
            d->tensors[u].loc == td->loc && m->tensor_first[u] < i)
          reads = u;
      }
      void *p = alloc_aligned(s, nbytes);
      if (!p)
        return SERR(s, MLC_RT_OUT_OF_MEMORY, "step %d (node \"%s\"): out of memory (%llu bytes)", i,
                    st->label ? st->label : "", (unsigned long long)nbytes);
      if (reads >= 0) {
        memcpy(p, *buf, (size_t)*cap);
        for (int32_t r = 0; r < st->nargs; r++) {
          int32_t u = (int32_t)st->args[r].value;
          if (st->args[r].kind == MLC_RT_ARG_TENSOR && d->tensors[u].storage == MLC_RT_STORAGE_ARENA &&
              d->tensors[u].loc == td->loc)
            s->tensors[u].data = p;
        }
      }
      mlc_rt_free_aligned(ALLOC(s), *buf);
      *buf = p;
      *cap = round_up(nbytes ? nbytes : 1);
    }
    dt->data = *buf;
  }
  return MLC_RT_OK;
}

/* CUDA: each input set as a CPU tensor copied into its device buffer. */
static mlc_rt_status cuda_inputs(mlc_rt_session *s) {
  const mlc_rt_model_desc *d = DESC(s);
  for (int32_t i = 0; i < d->ninputs; i++) {
    if (!s->in_host[i]) continue;
    DLTensor *t = &s->tensors[d->inputs[i].tensor];
    uint64_t nbytes = 0;
    if (mlc_rt_shape_size(t->dtype, t->shape, t->ndim, NULL, &nbytes, NULL) != 0)
      return SERR(s, MLC_RT_INVALID_ARGUMENT, "input \"%s\" (%d) is too large", d->inputs[i].name, i);
    if (nbytes > s->in_dev_cap[i] || !s->in_dev[i]) {
      mem_free(s, s->in_dev[i]);
      s->in_dev_cap[i] = 0;
      if (!(s->in_dev[i] = mem_alloc(s, nbytes)))
        return SERR(s, MLC_RT_OUT_OF_MEMORY, "input \"%s\" (%d): %s", d->inputs[i].name, i,
                    mlc_rt_cuda_error(s->cuda));
      s->in_dev_cap[i] = nbytes;
    }
    if (mlc_rt_cuda_to_device(s->cuda, s->in_dev[i], s->in_host[i], nbytes))
      return SERR(s, MLC_RT_RUNTIME_ERROR, "input \"%s\" (%d): %s", d->inputs[i].name, i,
                  mlc_rt_cuda_error(s->cuda));
    t->data = s->in_dev[i];
    t->byte_offset = 0;
  }
  return MLC_RT_OK;
}

/* CUDA: the end of a run: its kernels done (their errors are the run's);
** the outputs stay on the device until asked for on the host. */
static mlc_rt_status cuda_outputs(mlc_rt_session *s) {
  memset(s->out_copied, 0, (size_t)DESC(s)->noutputs);
  if (mlc_rt_cuda_sync(s->cuda)) return SERR(s, MLC_RT_RUNTIME_ERROR, "%s", mlc_rt_cuda_error(s->cuda));
  return MLC_RT_OK;
}

/* CUDA: output |i| of the last run copied to its host buffer (once per run). */
static mlc_rt_status cuda_output_to_host(mlc_rt_session *s, int32_t i) {
  const mlc_rt_model_desc *d = DESC(s);
  if (s->out_copied[i]) return MLC_RT_OK;
  const DLTensor *t = &s->tensors[d->outputs[i].tensor];
  DLTensor *h = &s->out_host_t[i];
  *h = *t;
  h->device.device_type = kDLCPU;
  h->data = s->out_host[i];
  h->byte_offset = 0;
  uint64_t nbytes = 0;
  if (mlc_rt_shape_size(t->dtype, t->shape, t->ndim, NULL, &nbytes, NULL) != 0) nbytes = 0;
  if (mlc_rt_cuda_to_host(s->cuda, h->data, (const char *)t->data + t->byte_offset, nbytes) ||
      mlc_rt_cuda_sync(s->cuda))
    return SERR(s, MLC_RT_RUNTIME_ERROR, "output \"%s\" (%d): %s", d->outputs[i].name, i,
                mlc_rt_cuda_error(s->cuda));
  s->out_copied[i] = 1;
  return MLC_RT_OK;
}

/* ---- run-time control flow (rt_model.h: IF ... LOOP_END) ----------------- */

static const char *step_label(const mlc_rt_session *s, int32_t i) {
  const char *l = DESC(s)->steps[i].label;
  return l ? l : "";
}

static void *tensor_data(const DLTensor *t) { return (char *)t->data + t->byte_offset; }

/* The one element of |t| (a condition or a count) as a double; 0 when
** |t| is empty. */
static double one_value(const DLTensor *t) {
  const void *p = tensor_data(t);
  if (!p) return 0;
  switch (t->dtype.code) {
    case kDLFloat:
      return t->dtype.bits == 64 ? *(const double *)p : t->dtype.bits == 32 ? *(const float *)p : 0;
    case kDLInt:
      return t->dtype.bits == 64 ? (double)*(const int64_t *)p : t->dtype.bits == 32 ? *(const int32_t *)p
             : t->dtype.bits == 16 ? *(const int16_t *)p : *(const int8_t *)p;
    default:
      return t->dtype.bits == 64 ? (double)*(const uint64_t *)p : t->dtype.bits == 32 ? *(const uint32_t *)p
             : t->dtype.bits == 16 ? *(const uint16_t *)p : *(const uint8_t *)p;
  }
}

static int64_t one_int(const DLTensor *t) {
  const void *p = tensor_data(t);
  return p ? *(const int64_t *)p : 0;
}

/* Tensor |t|'s shape from the current symbols (when it has run-bound dims). */
static void refresh_shape(mlc_rt_session *s, int32_t t) {
  const mlc_rt_tensor_desc *td = &DESC(s)->tensors[t];
  if (!s->model->tensor_run[t]) return;
  for (int32_t k = 0; k < td->ndim; k++)
    s->tensors[t].shape[k] = td->dims[k] >= 0 ? td->dims[k] : s->syms[-1 - td->dims[k]];
}

/*
** Gives tensor |t|, which step |i| writes, the shape |shape|: a dim that is
** a symbol step |i| defines takes the value; any other must equal it (an
** error naming the node otherwise).  Memory follows when |t| is sized step
** by step.
*/
static mlc_rt_status set_shape(mlc_rt_session *s, int32_t t, const int64_t *shape, int32_t i) {
  const mlc_rt_model *m = s->model;
  const mlc_rt_tensor_desc *td = &m->desc->tensors[t];
  DLTensor *dt = &s->tensors[t];
  for (int32_t k = 0; k < td->ndim; k++) {
    int64_t want = td->dims[k] >= 0 ? td->dims[k] : s->syms[-1 - td->dims[k]];
    if (td->dims[k] < 0 && m->sym_bind_step[-1 - td->dims[k]] == i) {
      s->syms[-1 - td->dims[k]] = want = shape[k];
    } else if (want != shape[k]) {
      char got[256], exp[256];
      vec_str(shape, td->ndim, got, sizeof got);
      for (int32_t q = 0; q < td->ndim; q++) dt->shape[q] = td->dims[q] >= 0 ? td->dims[q] : s->syms[-1 - td->dims[q]];
      vec_str(dt->shape, td->ndim, exp, sizeof exp);
      return SERR(s, MLC_RT_INVALID_ARGUMENT,
                  "step %d (node \"%s\"): a value of shape %s where the model was compiled for %s", i,
                  step_label(s, i), got, exp);
    }
  }
  for (int32_t k = 0; k < td->ndim; k++) dt->shape[k] = shape[k];
  return m->tensor_late[t] ? give_memory(s, t, i) : MLC_RT_OK;
}

/* Tensor |dst| = a copy of |src| (same dtype and rank), at step |i|. */
static mlc_rt_status copy_tensor(mlc_rt_session *s, int32_t dst, int32_t src, int32_t i) {
  refresh_shape(s, src);
  const DLTensor *x = &s->tensors[src];
  mlc_rt_status st = set_shape(s, dst, x->shape, i);
  if (st != MLC_RT_OK || dst == src) return st;
  uint64_t nbytes = 0;
  if ((st = size_tensor(s, src, i, "", &nbytes)) != MLC_RT_OK) return st;
  if (nbytes) memmove(tensor_data(&s->tensors[dst]), tensor_data(x), (size_t)nbytes);
  return MLC_RT_OK;
}

/* A LOOP step's tensor arg |a|. */
#define LOOP_T(lp, a) ((int32_t)(lp)->args[a].value)

/* The loop ends at its LOOP_END step |e|: the final carried values and the
** stacked scan outputs. */
static mlc_rt_status loop_finish(mlc_rt_session *s, int32_t e) {
  const mlc_rt_step_desc *st = &DESC(s)->steps[e];
  int32_t n = st->nargs, k = (int32_t)st->args[n - 1].value, ns = (n - 4 - 2 * k) / 2;
  const mlc_rt_step_desc *lp = &DESC(s)->steps[st->args[n - 2].value];
  mlc_rt_status rs;
  for (int32_t j = 0; j < k; j++)
    if ((rs = copy_tensor(s, LOOP_T(st, 2 + k + ns + j), LOOP_T(lp, 4 + k + j), e)) != MLC_RT_OK) return rs;
  for (int32_t j = 0; j < ns; j++) {
    int32_t y = LOOP_T(st, 2 + 2 * k + ns + j), x = LOOP_T(st, 2 + k + j);
    cf_stack *c = &s->cf_stacks[y];
    int64_t shape[MLC_RT_MAX_NDIM];
    int32_t r = s->tensors[x].ndim;
    if (c->count == 0) { /* no iteration: the value's dims as far as they are known */
      refresh_shape(s, x);
      for (int32_t q = 0; q < r; q++) c->shape[q] = s->tensors[x].shape[q];
    }
    shape[0] = c->count;
    for (int32_t q = 0; q < r; q++) shape[1 + q] = c->shape[q];
    if ((rs = set_shape(s, y, shape, e)) != MLC_RT_OK) return rs;
    if (c->used) memcpy(tensor_data(&s->tensors[y]), c->p, (size_t)c->used);
  }
  return MLC_RT_OK;
}

/* LOOP_END step |e|: appends each scan value of the iteration to its stack. */
static mlc_rt_status loop_append(mlc_rt_session *s, int32_t e, int32_t k, int32_t ns) {
  const mlc_rt_step_desc *st = &DESC(s)->steps[e];
  for (int32_t j = 0; j < ns; j++) {
    int32_t x = LOOP_T(st, 2 + k + j), y = LOOP_T(st, 2 + 2 * k + ns + j);
    cf_stack *c = &s->cf_stacks[y];
    DLTensor *xt = &s->tensors[x];
    refresh_shape(s, x);
    if (c->count == 0) {
      for (int32_t q = 0; q < xt->ndim; q++) c->shape[q] = xt->shape[q];
    } else if (memcmp(c->shape, xt->shape, sizeof *c->shape * (size_t)xt->ndim) != 0) {
      char a[256], b[256];
      vec_str(c->shape, xt->ndim, a, sizeof a);
      vec_str(xt->shape, xt->ndim, b, sizeof b);
      return SERR(s, MLC_RT_INVALID_ARGUMENT,
                  "step %d (node \"%s\"): scan output %d has shape %s in iteration 0 but %s in iteration %lld",
                  e, step_label(s, e), j, a, b, (long long)c->count);
    }
    uint64_t nbytes = 0;
    mlc_rt_status rs = size_tensor(s, x, e, "", &nbytes);
    if (rs != MLC_RT_OK) return rs;
    if (nbytes > UINT64_MAX / 2 - c->used)
      return SERR(s, MLC_RT_OUT_OF_MEMORY, "step %d (node \"%s\"): scan output %d is too large", e,
                  step_label(s, e), j);
    if (c->used + nbytes > c->cap) { /* grows to at most twice what the run needs */
      uint64_t cap = c->cap ? c->cap : 256;
      while (cap < c->used + nbytes) cap *= 2;
      void *p = alloc_aligned(s, cap);
      if (!p)
        return SERR(s, MLC_RT_OUT_OF_MEMORY, "step %d (node \"%s\"): out of memory for scan output %d (%llu bytes)",
                    e, step_label(s, e), j, (unsigned long long)cap);
      if (c->used) memcpy(p, c->p, (size_t)c->used);
      mlc_rt_free_aligned(ALLOC(s), c->p);
      c->p = p;
      c->cap = cap;
    }
    if (nbytes) memcpy((char *)c->p + c->used, tensor_data(xt), (size_t)nbytes);
    c->used += nbytes;
    c->count++;
  }
  return MLC_RT_OK;
}

/* LOOP_END step |e|: carried = carried_out; the values that are themselves
** carried tensors of another position are staged first (a swap). */
static mlc_rt_status loop_carry(mlc_rt_session *s, int32_t e, const mlc_rt_step_desc *lp, int32_t k) {
  const mlc_rt_step_desc *st = &DESC(s)->steps[e];
  uint64_t need = 0;
  int staged = 0;
  for (int32_t j = 0; j < k; j++)
    for (int32_t q = 0; q < k; q++)
      if (q != j && LOOP_T(st, 2 + j) == LOOP_T(lp, 4 + k + q)) staged = 1;
  mlc_rt_status rs;
  if (!staged) {
    for (int32_t j = 0; j < k; j++)
      if ((rs = copy_tensor(s, LOOP_T(lp, 4 + k + j), LOOP_T(st, 2 + j), e)) != MLC_RT_OK) return rs;
    return MLC_RT_OK;
  }
  /* stage every value, then copy: shapes first (they may name symbols) */
  int64_t shapes[16][MLC_RT_MAX_NDIM];
  uint64_t sizes[16];
  if (k > 16) return SERR(s, MLC_RT_INVALID_ARGUMENT, "step %d (node \"%s\"): more than 16 swapped loop values", e, step_label(s, e));
  for (int32_t j = 0; j < k; j++) {
    int32_t x = LOOP_T(st, 2 + j);
    refresh_shape(s, x);
    if ((rs = size_tensor(s, x, e, "", &sizes[j])) != MLC_RT_OK) return rs;
    memcpy(shapes[j], s->tensors[x].shape, sizeof(int64_t) * (size_t)s->tensors[x].ndim);
    need += (sizes[j] + 63) & ~(uint64_t)63;
  }
  if (need > s->cf_tmp_cap || !s->cf_tmp) {
    void *p = alloc_aligned(s, need ? need : 64);
    if (!p) return SERR(s, MLC_RT_OUT_OF_MEMORY, "step %d (node \"%s\"): out of memory", e, step_label(s, e));
    mlc_rt_free_aligned(ALLOC(s), s->cf_tmp);
    s->cf_tmp = p;
    s->cf_tmp_cap = need ? need : 64;
  }
  uint64_t at = 0;
  for (int32_t j = 0; j < k; j++) {
    if (sizes[j]) memcpy((char *)s->cf_tmp + at, tensor_data(&s->tensors[LOOP_T(st, 2 + j)]), (size_t)sizes[j]);
    at += (sizes[j] + 63) & ~(uint64_t)63;
  }
  at = 0;
  for (int32_t j = 0; j < k; j++) {
    int32_t y = LOOP_T(lp, 4 + k + j);
    if ((rs = set_shape(s, y, shapes[j], e)) != MLC_RT_OK) return rs;
    if (sizes[j]) memcpy(tensor_data(&s->tensors[y]), (char *)s->cf_tmp + at, (size_t)sizes[j]);
    at += (sizes[j] + 63) & ~(uint64_t)63;
  }
  return MLC_RT_OK;
}

/* Memory for the scalar |t| that step |i| writes, when its storage is
** sized step by step. */
static mlc_rt_status scalar_memory(mlc_rt_session *s, int32_t t, int32_t i) {
  return s->model->tensor_late[t] ? give_memory(s, t, i) : MLC_RT_OK;
}

/* Control flow step |i|; *next receives the step to run next. */
static mlc_rt_status cf_step(mlc_rt_session *s, int32_t i, int32_t *next) {
  const mlc_rt_step_desc *st = &DESC(s)->steps[i];
  int32_t n = st->nargs;
  mlc_rt_status rs;
  *next = i + 1;
  switch (st->kind) {
    case MLC_RT_STEP_IF: {
      unsigned char taken = one_value(&s->tensors[LOOP_T(st, 0)]) != 0;
      if ((rs = scalar_memory(s, LOOP_T(st, 1), i)) != MLC_RT_OK) return rs;
      *(unsigned char *)tensor_data(&s->tensors[LOOP_T(st, 1)]) = taken;
      if (!taken) *next = (int32_t)st->args[2].value + 1;
      return MLC_RT_OK;
    }
    case MLC_RT_STEP_ELSE:
      *next = (int32_t)st->args[2].value;
      return MLC_RT_OK;
    case MLC_RT_STEP_END_IF: {
      int32_t k = (n - 1) / 3;
      int taken = *(const unsigned char *)tensor_data(&s->tensors[LOOP_T(st, 0)]) != 0;
      for (int32_t j = 0; j < k; j++)
        if ((rs = copy_tensor(s, LOOP_T(st, 1 + 2 * k + j), LOOP_T(st, 1 + (taken ? 0 : k) + j), i)) != MLC_RT_OK)
          return rs;
      return MLC_RT_OK;
    }
    case MLC_RT_STEP_LOOP: {
      int32_t k = (n - 5) / 2, e = (int32_t)st->args[n - 1].value;
      const mlc_rt_step_desc *es = &DESC(s)->steps[e];
      int32_t ek = (int32_t)es->args[es->nargs - 1].value, ns = (es->nargs - 4 - 2 * ek) / 2;
      int64_t trips = one_int(&s->tensors[LOOP_T(st, 0)]);
      unsigned char go = one_value(&s->tensors[LOOP_T(st, 1)]) != 0;
      if ((rs = scalar_memory(s, LOOP_T(st, 2 + k), i)) != MLC_RT_OK ||
          (rs = scalar_memory(s, LOOP_T(st, 3 + k), i)) != MLC_RT_OK)
        return rs;
      *(int64_t *)tensor_data(&s->tensors[LOOP_T(st, 2 + k)]) = 0;
      *(unsigned char *)tensor_data(&s->tensors[LOOP_T(st, 3 + k)]) = go;
      for (int32_t j = 0; j < k; j++)
        if ((rs = copy_tensor(s, LOOP_T(st, 4 + k + j), LOOP_T(st, 2 + j), i)) != MLC_RT_OK) return rs;
      for (int32_t j = 0; j < ns; j++) {
        cf_stack *c = &s->cf_stacks[LOOP_T(es, 2 + 2 * ek + ns + j)];
        c->used = 0;
        c->count = 0;
      }
      if (trips > 0 && go) return MLC_RT_OK;
      *next = e + 1;
      return loop_finish(s, e);
    }
    case MLC_RT_STEP_LOOP_END: {
      int32_t k = (int32_t)st->args[n - 1].value, ns = (n - 4 - 2 * k) / 2;
      int32_t l = (int32_t)st->args[n - 2].value;
      const mlc_rt_step_desc *lp = &DESC(s)->steps[l];
      int64_t trips = one_int(&s->tensors[LOOP_T(st, 0)]);
      unsigned char go = one_value(&s->tensors[LOOP_T(st, 1)]) != 0;
      int64_t *iter = tensor_data(&s->tensors[LOOP_T(lp, 2 + k)]);
      if ((rs = loop_append(s, i, k, ns)) != MLC_RT_OK) return rs;
      if ((rs = loop_carry(s, i, lp, k)) != MLC_RT_OK) return rs;
      *(unsigned char *)tensor_data(&s->tensors[LOOP_T(lp, 3 + k)]) = go;
      *iter += 1;
      if (*iter < trips && go) {
        *next = l + 1;
        return MLC_RT_OK;
      }
      return loop_finish(s, i);
    }
    default:
      return SERR(s, MLC_RT_RUNTIME_ERROR, "step %d: not a control flow step", i);
  }
}

/* Executes every step (the run's inputs bound and memory planned). */
static mlc_rt_status run_steps(mlc_rt_session *s) {
  const mlc_rt_model *m = s->model;
  const mlc_rt_model_desc *d = m->desc;
  mlc_rt_status st;
  for (int32_t i = 0; i < d->nsteps; i++) {
    int64_t a = m->arg_start[i];
    if (mlc_rt_step_is_cf(d->steps[i].kind)) {
      int32_t next;
      if ((st = cf_step(s, i, &next)) != MLC_RT_OK) return st;
      /* the symbols it defined: the derived ones that read them */
      if (m->has_derived && (st = eval_derived(s, s->syms, i)) != MLC_RT_OK) return st;
      i = next - 1;
      continue;
    }
    if (m->step_dyn[i] && (st = prepare_step(s, i)) != MLC_RT_OK) return st;
    if (d->steps[i].kind == MLC_RT_STEP_BIND_SYMS) {
      if ((st = bind_step(s, i)) != MLC_RT_OK) return st;
      continue;
    }
    struct timespec t0, t1;
    if (s->step_ms) clock_gettime(CLOCK_MONOTONIC, &t0);
    /* a library's call may run its own threads: ours sleep meanwhile */
    if (m->step_lib[i]) mlc_rt_pool_idle(s->pool, 1);
    int rc = m->step_fns[i](s->args + a, m->arg_codes + a, d->steps[i].nargs, &s->ctx);
    if (m->step_lib[i]) mlc_rt_pool_idle(s->pool, 0);
    if (s->step_ms) {
      if (s->cuda) (void)mlc_rt_cuda_sync(s->cuda); /* the step's time, not its launch's */
      clock_gettime(CLOCK_MONOTONIC, &t1);
      s->step_ms[i] += (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    }
    if (rc != 0) {
      const char *label = d->steps[i].label ? d->steps[i].label : "";
      if (s->kerr_set && s->kerr_op[0]) /* a failed check: the op, then what */
        return SERR(s, MLC_RT_RUNTIME_ERROR, "step %d (node \"%s\"): %s: %s", i, label, s->kerr_op,
                    s->kerr);
      if (s->kerr_set)
        return SERR(s, MLC_RT_RUNTIME_ERROR, "step %d (node \"%s\"): %s", i, label, s->kerr);
      return SERR(s, MLC_RT_RUNTIME_ERROR, "step %d (node \"%s\"): %s failed (returned %d)", i,
                  label, d->steps[i].name ? d->steps[i].name : "kernel", rc);
    }
  }
  return MLC_RT_OK;
}

/* What a captured run depends on: the addresses of the inputs, the arena
** and the outputs, and the symbols' values (FNV-1a). */
static uint64_t run_key(const mlc_rt_session *s) {
  const mlc_rt_model_desc *d = DESC(s);
  uint64_t h = 1469598103934665603ull;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
  for (int32_t i = 0; i < d->ninputs; i++) {
    const DLTensor *t = &s->tensors[d->inputs[i].tensor];
    MIX((uintptr_t)t->data);
    MIX(t->byte_offset);
  }
  for (int32_t i = 0; i < d->noutputs; i++) MIX((uintptr_t)s->out_buf[i]);
  for (int32_t k = 0; k < d->nsyms; k++) MIX(s->syms[k]);
  MIX((uintptr_t)s->arena);
#undef MIX
  return h;
}

/*
** A CUDA run.  The first run with given addresses and shapes executes step
** by step (libraries choose their algorithms, workspaces are allocated);
** the second records its launches as a graph (no step runs on the host
** after that); later ones launch the graph.  A run that cannot be recorded
** (a check of model data waits for its kernel) executes step by step, and
** the session does not try again.  Not while profiling, and not with
** MLC_CUDA_GRAPHS=0.
*/
static mlc_rt_status cuda_run(mlc_rt_session *s) {
  uint64_t key = run_key(s);
  if (key != s->graph_key) {
    mlc_rt_cuda_graph_drop(s->cuda);
    s->graph_key = key;
    s->graph_seen = 0;
  }
  if (s->step_ms || !s->graphs_ok) return run_steps(s);
  if (mlc_rt_cuda_graph_ready(s->cuda))
    return mlc_rt_cuda_graph_launch(s->cuda) ? SERR(s, MLC_RT_RUNTIME_ERROR, "%s", mlc_rt_cuda_error(s->cuda))
                                              : MLC_RT_OK;
  if (s->graph_seen && mlc_rt_cuda_capture_begin(s->cuda) == 0) {
    mlc_rt_status st = run_steps(s);
    if (mlc_rt_cuda_capture_end(s->cuda, st == MLC_RT_OK) == 0 && st == MLC_RT_OK && mlc_rt_cuda_graph_ready(s->cuda))
      return mlc_rt_cuda_graph_launch(s->cuda) ? SERR(s, MLC_RT_RUNTIME_ERROR, "%s", mlc_rt_cuda_error(s->cuda))
                                                : MLC_RT_OK;
    s->graphs_ok = 0; /* nothing recorded ran: run step by step */
    s->kerr_set = 0;
  }
  mlc_rt_status st = run_steps(s);
  if (st == MLC_RT_OK) s->graph_seen = 1;
  return st;
}

mlc_rt_status mlc_rt_session_run(mlc_rt_session *s) {
  if (!LIVE(s)) return MLC_RT_INVALID_ARGUMENT;
  const mlc_rt_model *m = s->model;
  const mlc_rt_model_desc *d = m->desc;
  s->outputs_valid = 0;
  s->ran = 1;
  for (int32_t i = 0; i < d->ninputs; i++)
    if (!s->input_set[i])
      return SERR(s, MLC_RT_INVALID_ARGUMENT, "input \"%s\" (%d) is not set%s", d->inputs[i].name, i,
                  d->inputs[i].has_default ? " (its last setting failed; set it, or pass NULL for its default)" : "");
  mlc_rt_status st = bind_symbols(s);
  if (st != MLC_RT_OK) return st;
  if (!s->planned || (d->nsyms > 0 && memcmp(s->bind, s->syms, (size_t)d->nsyms * sizeof *s->syms))) {
    st = plan(s);
    if (st != MLC_RT_OK) return st;
  }
  s->kerr_set = 0;
  if (s->cuda) {
    if ((st = cuda_inputs(s)) != MLC_RT_OK || (st = cuda_run(s)) != MLC_RT_OK) return st;
  } else if ((st = run_steps(s)) != MLC_RT_OK) {
    return st;
  }
  if (s->cuda && (st = cuda_outputs(s)) != MLC_RT_OK) return st;
  s->outputs_valid = 1;
  if (s->step_ms) s->prof_runs++;
  return MLC_RT_OK;
}

mlc_rt_status mlc_rt_session_set_profiling(mlc_rt_session *s, int enable) {
  if (!LIVE(s)) return MLC_RT_INVALID_ARGUMENT;
  mlc_rt_free(ALLOC(s), s->step_ms);
  s->step_ms = NULL;
  s->prof_runs = 0;
  if (!enable) return MLC_RT_OK;
  int32_t n = DESC(s)->nsteps;
  s->step_ms = mlc_rt_calloc(ALLOC(s), (size_t)(n > 0 ? n : 1), sizeof *s->step_ms);
  return s->step_ms ? MLC_RT_OK : SERR(s, MLC_RT_OUT_OF_MEMORY, "out of memory for the profile");
}

int32_t mlc_rt_session_profile(const mlc_rt_session *s, int32_t i, const char **name, const char **node,
                               double *ms) {
  if (!LIVE(s) || !s->step_ms) return 0;
  const mlc_rt_model_desc *d = DESC(s);
  if (i >= 0 && i < d->nsteps) {
    const mlc_rt_step_desc *st = &d->steps[i];
    if (name) *name = st->kind == MLC_RT_STEP_BIND_SYMS ? "define_dims" : st->name ? st->name : "";
    if (node) *node = st->label ? st->label : "";
    if (ms) *ms = s->prof_runs ? s->step_ms[i] / (double)s->prof_runs : 0.0;
  }
  return d->nsteps;
}

mlc_rt_status mlc_rt_session_get_output(mlc_rt_session *s, int32_t index, const DLTensor **out) {
  if (out) *out = NULL;
  if (!LIVE(s)) return MLC_RT_INVALID_ARGUMENT;
  const mlc_rt_model_desc *d = DESC(s);
  if (!out) return SERR(s, MLC_RT_INVALID_ARGUMENT, "NULL output pointer");
  if (index < 0 || index >= d->noutputs)
    return SERR(s, MLC_RT_INVALID_ARGUMENT,
                "output index %d is out of range (the model has %d outputs)", index, d->noutputs);
  if (!s->outputs_valid)
    return SERR(s, MLC_RT_INVALID_ARGUMENT,
                "output \"%s\" (%d) is not available: %s", d->outputs[index].name, index,
                s->ran ? "the last run failed" : "the session has not run yet");
  if (s->cuda) {
    mlc_rt_status st = cuda_output_to_host(s, index);
    if (st != MLC_RT_OK) return st;
    *out = &s->out_host_t[index];
    return MLC_RT_OK;
  }
  *out = &s->tensors[d->outputs[index].tensor];
  return MLC_RT_OK;
}

mlc_rt_status mlc_rt_session_get_output_device(mlc_rt_session *s, int32_t index, const DLTensor **out) {
  if (out) *out = NULL;
  if (!LIVE(s)) return MLC_RT_INVALID_ARGUMENT;
  if (!s->cuda) return mlc_rt_session_get_output(s, index, out);
  const mlc_rt_model_desc *d = DESC(s);
  if (!out) return SERR(s, MLC_RT_INVALID_ARGUMENT, "NULL output pointer");
  if (index < 0 || index >= d->noutputs)
    return SERR(s, MLC_RT_INVALID_ARGUMENT, "output index %d is out of range (the model has %d outputs)", index,
                d->noutputs);
  if (!s->outputs_valid)
    return SERR(s, MLC_RT_INVALID_ARGUMENT, "output \"%s\" (%d) is not available: %s", d->outputs[index].name,
                index, s->ran ? "the last run failed" : "the session has not run yet");
  *out = &s->tensors[d->outputs[index].tensor];
  return MLC_RT_OK;
}
