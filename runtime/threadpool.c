/*
** threadpool.c: the session's thread pool, which runs the parallel loops of
** generated kernels (mlc_rt_api.parallel_for).
**
** A pool of N threads is the caller plus N-1 workers.  Idle workers sleep
** on a condition variable.  A worker that has just finished a loop first
** watches for the next one for at most SPIN_NS (a model runs its parallel
** loops back to back, and a wake-up through the condition variable costs
** more than a short kernel); the caller likewise watches its loop's last
** chunks finish before it sleeps.  Past that bound nothing spins: between
** inferences every worker sleeps.  A loop publishes one job (body,
** closure, n, chunk count) under the mutex, bumps the generation and wakes
** the workers; every thread, the caller included, then takes chunks until
** none are left.  Chunks are contiguous ranges, CHUNKS_PER_THREAD per
** thread, with sizes differing by at most one.  A loop may ask for
** chunks of whole runs of |grain| iterations (mlc_rt_pool_run_grain): a
** kernel whose parallel loop fuses output-channel panels with the rows of
** each then gives each panel, and the streaming of its weights, to one
** thread, where two threads taking alternate halves of every panel both
** wait for the same weights to arrive from memory.
**
** Chunks are taken from one atomic ticket holding the generation in its
** high bits and the next chunk in its low bits, so a worker that wakes late
** (after its loop has finished, or even after the next one started) can
** never take a chunk of a job it did not read: its compare-and-swap fails
** on the generation.  Hence the caller waits only for the chunks to finish,
** not for every worker to wake up, and a short loop costs little more than
** its own work even when workers are slow to be scheduled.  After a chunk
** fails, the chunks after it are still taken (so the count completes) but
** their bodies are skipped; chunks before it still run, so the lowest
** failing chunk is the one a serial run would have failed in.
**
** A loop started from inside a body (any pool's) runs serially on the
** calling thread: a thread-local flag marks threads that are running a
** body, which makes nesting deadlock-free.
*/
#include "config.h"
#include "runtime/rt_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Chunks per thread: enough that a thread slowed down (a core shared with
** another process) leaves little of the loop to wait for.  Measured on a
** 2-core host whose second core was partly busy: 16 against 4, resnet50
** at 2 threads 0.97x (median of 100 runs interleaved), mobilenet_v2 0.96x,
** resnet18 and squeezenet 1.00x. */
#define CHUNKS_PER_THREAD 16
/* How long a thread watches for work (or for its loop to end) before it
** sleeps, in nanoseconds. */
#define SPIN_NS 100000
/* A grain is kept when it leaves at least this many runs per thread, for
** balance (fewer: the loop is chunked as if it had none).  A 3x3 conv of
** 512 channels at 7x7 in 16 panels of 17 row blocks, at 2 threads: 0.82x
** against halves of panels. */
#define POOL_GRAIN_MIN_UNITS 4
#define MAX_THREADS 1024
#define CHUNK_BITS 24 /* nchunks <= MAX_THREADS * CHUNKS_PER_THREAD < 2^24 */
#define CHUNK_MASK ((UINT64_C(1) << CHUNK_BITS) - 1)
#define GEN_MASK (UINT64_MAX >> CHUNK_BITS)

struct mlc_rt_pool {
  mlc_rt_allocator alloc; /* of the pool and its thread table */
  pthread_mutex_t mu;
  pthread_cond_t work_cv; /* workers wait here for a new generation */
  pthread_cond_t done_cv; /* the caller waits here for remaining == 0 */
  pthread_t *threads;
  int32_t nworkers;
  int shutdown;
  int busy;     /* a loop is running */
  uint64_t gen; /* bumped once per loop */
  /* The current job (written under mu, with gen). */
  mlc_rt_parallel_body body;
  void *closure;
  int64_t n;
  int64_t nchunks;
  int64_t grain; /* chunks are whole runs of grain iterations */
  atomic_uint_fast64_t ticket;    /* (gen << CHUNK_BITS) | next chunk */
  atomic_int_fast64_t remaining;  /* chunks not yet finished */
  atomic_int_fast64_t fail_chunk; /* lowest failed chunk so far: skip those after it */
  int64_t err_chunk;              /* lowest failing chunk (under mu) */
  int err_rc;
  atomic_int idle;                /* 1: workers sleep at once instead of watching (mlc_rt_pool_idle) */
};

/* Nonzero while this thread runs a loop body. */
static __thread int tls_in_body;
/* The chunk whose body this thread runs (-1: none). */
static __thread int64_t tls_chunk = -1;

int64_t mlc_rt_pool_current_chunk(void) { return tls_chunk; }

/* Lowers |a| to |c| if |c| is smaller. */
static void atomic_min64(atomic_int_fast64_t *a, int64_t c) {
  int_fast64_t v = atomic_load(a);
  while (c < v && !atomic_compare_exchange_weak(a, &v, c)) {
  }
}

int32_t mlc_rt_pool_resolve_threads(int32_t requested) {
  if (requested < 0) return -1;
  if (requested == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    requested = n > 0 ? (n > MAX_THREADS ? MAX_THREADS : (int32_t)n) : 1;
  }
  return requested > MAX_THREADS ? MAX_THREADS : requested;
}

/* Bounds of chunk |c| of |nchunks| over [0, n): sizes differ by at most one. */
static void chunk_range(int64_t n, int64_t nchunks, int64_t c, int64_t *b, int64_t *e) {
  int64_t base = n / nchunks, rem = n % nchunks;
  *b = c * base + (c < rem ? c : rem);
  *e = *b + base + (c < rem ? 1 : 0);
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Watches |*v| for at most SPIN_NS while |keep(v, arg)| holds; returns
** nonzero when it stopped holding. */
static int spin_while(int (*keep)(const void *, uint64_t), const void *v, uint64_t arg) {
  int64_t end = 0;
  for (unsigned i = 0;; i++) {
    if (!keep(v, arg)) return 1;
    if ((i & 255) == 0) {
      int64_t t = now_ns();
      if (!end) end = t + SPIN_NS;
      else if (t >= end) return 0;
    }
    cpu_relax();
  }
}

/* The ticket still holds generation |seen|: no new loop yet. */
static int same_gen(const void *ticket, uint64_t seen) {
  uint64_t v = atomic_load_explicit((atomic_uint_fast64_t *)ticket, memory_order_acquire);
  return (v >> CHUNK_BITS) == (seen & GEN_MASK);
}

/* A worker keeps watching: no new loop yet, and the pool is not told to
** go idle. */
static int worker_keep(const void *pool, uint64_t seen) {
  const mlc_rt_pool *p = pool;
  return !atomic_load_explicit(&((mlc_rt_pool *)p)->idle, memory_order_relaxed) && same_gen(&p->ticket, seen);
}

/* Chunks of the loop are still running. */
static int chunks_left(const void *remaining, uint64_t unused) {
  (void)unused;
  return atomic_load_explicit((atomic_int_fast64_t *)remaining, memory_order_acquire) > 0;
}

/* Takes the next chunk of generation |gen|; -1 when it has none left. */
static int64_t take_chunk(mlc_rt_pool *p, uint64_t gen, int64_t nchunks) {
  uint64_t v = atomic_load_explicit(&p->ticket, memory_order_acquire);
  for (;;) {
    if ((v >> CHUNK_BITS) != (gen & GEN_MASK) || (int64_t)(v & CHUNK_MASK) >= nchunks) return -1;
    if (atomic_compare_exchange_weak_explicit(&p->ticket, &v, v + 1, memory_order_acq_rel,
                                              memory_order_acquire))
      return (int64_t)(v & CHUNK_MASK);
  }
}

/* Takes and runs chunks of job |gen| (|n| iterations in runs of |grain|)
** until none are left. */
static void run_chunks(mlc_rt_pool *p, uint64_t gen, mlc_rt_parallel_body body, void *closure,
                       int64_t n, int64_t nchunks, int64_t grain) {
  tls_in_body++;
  for (;;) {
    int64_t c = take_chunk(p, gen, nchunks);
    if (c < 0) break;
    if (c < atomic_load_explicit(&p->fail_chunk, memory_order_relaxed)) {
      int64_t b, e;
      chunk_range(n / grain, nchunks, c, &b, &e);
      b *= grain;
      e *= grain;
      tls_chunk = c;
      int rc = body(b, e, closure);
      tls_chunk = -1;
      if (rc) {
        pthread_mutex_lock(&p->mu);
        if (!p->err_rc || c < p->err_chunk) {
          p->err_rc = rc;
          p->err_chunk = c;
        }
        pthread_mutex_unlock(&p->mu);
        atomic_min64(&p->fail_chunk, c);
      }
    }
    if (atomic_fetch_sub_explicit(&p->remaining, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->done_cv);
      pthread_mutex_unlock(&p->mu);
    }
  }
  tls_in_body--;
}

static void *worker_main(void *arg) {
  mlc_rt_pool *p = arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    if (!p->shutdown && p->gen == seen) { /* watch for the next loop a while */
      pthread_mutex_unlock(&p->mu);
      spin_while(worker_keep, p, seen);
      pthread_mutex_lock(&p->mu);
    }
    while (!p->shutdown && p->gen == seen) pthread_cond_wait(&p->work_cv, &p->mu);
    if (p->shutdown) break;
    seen = p->gen;
    mlc_rt_parallel_body body = p->body;
    void *closure = p->closure;
    int64_t n = p->n, nchunks = p->nchunks, grain = p->grain;
    pthread_mutex_unlock(&p->mu);
    run_chunks(p, seen, body, closure, n, nchunks, grain);
    pthread_mutex_lock(&p->mu);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* Stops and joins the first |started| workers. */
static void stop_workers(mlc_rt_pool *p, int32_t started) {
  pthread_mutex_lock(&p->mu);
  p->shutdown = 1;
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->mu);
  for (int32_t i = 0; i < started; i++) pthread_join(p->threads[i], NULL);
}

int mlc_rt_pool_create(int32_t nthreads, mlc_rt_pool **out) {
  return mlc_rt_pool_create_with(NULL, nthreads, out);
}

int mlc_rt_pool_create_with(const mlc_rt_allocator *a, int32_t nthreads, mlc_rt_pool **out) {
  if (!out) return EINVAL;
  *out = NULL;
  if (nthreads < 1 || nthreads > MAX_THREADS) return EINVAL;
  mlc_rt_pool *p = mlc_rt_calloc(a, 1, sizeof *p);
  if (!p) return ENOMEM;
  if (a) p->alloc = *a;
  p->nworkers = nthreads - 1;
  atomic_init(&p->ticket, 0);
  atomic_init(&p->remaining, 0);
  atomic_init(&p->fail_chunk, INT64_MAX);
  atomic_init(&p->idle, 0);
  if (p->nworkers > 0) {
    p->threads = mlc_rt_calloc(&p->alloc, (size_t)p->nworkers, sizeof *p->threads);
    if (!p->threads) {
      mlc_rt_free(a, p);
      return ENOMEM;
    }
  }
  int rc = pthread_mutex_init(&p->mu, NULL);
  if (rc) {
    mlc_rt_free(&p->alloc, p->threads);
    mlc_rt_free(a, p);
    return rc;
  }
  if ((rc = pthread_cond_init(&p->work_cv, NULL)) != 0) {
    pthread_mutex_destroy(&p->mu);
    mlc_rt_free(&p->alloc, p->threads);
    mlc_rt_free(a, p);
    return rc;
  }
  if ((rc = pthread_cond_init(&p->done_cv, NULL)) != 0) {
    pthread_cond_destroy(&p->work_cv);
    pthread_mutex_destroy(&p->mu);
    mlc_rt_free(&p->alloc, p->threads);
    mlc_rt_free(a, p);
    return rc;
  }
  for (int32_t i = 0; i < p->nworkers; i++) {
    rc = pthread_create(&p->threads[i], NULL, worker_main, p);
    if (rc) {
      stop_workers(p, i);
      p->nworkers = 0;
      mlc_rt_pool_destroy(p);
      return rc;
    }
  }
  *out = p;
  return 0;
}

void mlc_rt_pool_destroy(mlc_rt_pool *p) {
  if (!p) return;
  if (p->nworkers > 0) stop_workers(p, p->nworkers);
  pthread_cond_destroy(&p->done_cv);
  pthread_cond_destroy(&p->work_cv);
  pthread_mutex_destroy(&p->mu);
  mlc_rt_free(&p->alloc, p->threads);
  mlc_rt_allocator a = p->alloc;
  mlc_rt_free(&a, p);
}

int32_t mlc_rt_pool_threads(const mlc_rt_pool *p) { return p ? p->nworkers + 1 : 1; }

static int run_serial(int64_t n, mlc_rt_parallel_body body, void *closure) {
  int64_t chunk = tls_chunk; /* a nested loop stays in its outer chunk */
  if (!tls_in_body) tls_chunk = 0;
  tls_in_body++;
  int rc = body(0, n, closure);
  tls_in_body--;
  tls_chunk = chunk;
  return rc;
}

int mlc_rt_pool_run(mlc_rt_pool *p, int64_t n, mlc_rt_parallel_body body, void *closure) {
  return mlc_rt_pool_run_grain(p, n, 1, body, closure);
}

int mlc_rt_pool_run_grain(mlc_rt_pool *p, int64_t n, int64_t grain, mlc_rt_parallel_body body,
                          void *closure) {
  if (!body) return -1;
  if (n <= 0) return 0;
  if (!p || p->nworkers == 0 || n == 1 || tls_in_body) return run_serial(n, body, closure);
  int64_t threads = (int64_t)p->nworkers + 1;
  if (grain < 1 || n % grain || n / grain < threads * POOL_GRAIN_MIN_UNITS) grain = 1;
  pthread_mutex_lock(&p->mu);
  if (p->busy) {
    pthread_mutex_unlock(&p->mu);
    return run_serial(n, body, closure);
  }
  int64_t want = threads * CHUNKS_PER_THREAD, units = n / grain;
  int64_t nchunks = units < want ? units : want;
  uint64_t gen = ++p->gen;
  p->busy = 1;
  p->body = body;
  p->closure = closure;
  p->n = n;
  p->nchunks = nchunks;
  p->grain = grain;
  p->err_rc = 0;
  p->err_chunk = 0;
  atomic_store(&p->fail_chunk, INT64_MAX);
  atomic_store(&p->remaining, nchunks);
  atomic_store_explicit(&p->ticket, (gen & GEN_MASK) << CHUNK_BITS, memory_order_release);
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->mu);

  run_chunks(p, gen, body, closure, n, nchunks, grain);

  spin_while(chunks_left, &p->remaining, 0);
  pthread_mutex_lock(&p->mu);
  while (atomic_load(&p->remaining) > 0) pthread_cond_wait(&p->done_cv, &p->mu);
  int rc = p->err_rc;
  p->busy = 0;
  pthread_mutex_unlock(&p->mu);
  return rc;
}

void mlc_rt_pool_idle(mlc_rt_pool *p, int idle) {
  if (p) atomic_store_explicit(&p->idle, idle ? 1 : 0, memory_order_relaxed);
}
