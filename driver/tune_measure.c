/*
** tune_measure.c: building and timing the tuner's candidates.
**
** Build.  Each candidate (a lowered prim function in a module of its own)
** is compiled by the code generator into an object and linked by the C
** compiler ($MLC_CC, else cc) into a shared object of one kernel.  The
** builds run in child processes (forked: they inherit the lowered
** modules), |jobs| at a time; a candidate whose library is missing
** afterwards failed to build.
**
** Run.  Each candidate runs in a child process of its own, in a process
** group of its own (a Ctrl-C of the tuner does not reach it): it loads the
** library, gives the kernel tensors of its parameters' shapes filled from
** a fixed seed (floats uniform in [-1, 1), integers 0, valid as indices),
** calls it once, checks (or, for the task's default, writes) every
** parameter's contents against the task's reference results, then times
** |repeats| measurements, each of as many calls as last at least |min_ms|
** (a kernel of 20 us or more: each call after a cache flush, as its
** operands come from memory in a model, up to 64 calls), and reports the
** per-call times through a pipe.  A child that crashes,
** fails, computes other results or runs past |timeout_s| is recorded as
** failed and the tuner goes on.  Parallel loops run on a small thread pool
** of |threads| threads (the caller's included), as the runtime's would.
**
** For tests of the search: with MLC_TUNE_TEST_TIMES set, a candidate that
** ran and computed the right results is given a time that is a function
** of its trace (a hash), not the measured one, so that a run's choices
** can be compared with another's without the machine's noise.
*/
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "codegen/codegen.h"
#include "driver/driver_int.h"
#include "driver/tune_int.h"
#include "runtime/rt_abi.h"

void mlc_drv_tune_cand_free(mlc_tune_cand *c) {
  if (!c) return;
  mlc_tir_module_destroy(c->tm);
  mlc_mem_free(c->trace);
  if (c->so[0]) unlink(c->so);
  mlc_mem_free(c);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- building ---------------------------------------------------------------- */

static int build_one(const mlc_tune_measure_opts *o, mlc_tune_cand *c) {
  char obj[600], log[600];
  snprintf(obj, sizeof obj, "%s.o", c->so);
  snprintf(log, sizeof log, "%s.log", c->so);
  mlc_status s = mlc_cg_build(c->tm, o->target, obj);
  if (!s) {
    const char *cc = getenv("MLC_CC");
    const char *argv[] = {cc && *cc ? cc : "cc", "-shared", "-o", c->so, obj, NULL};
    s = mlc_drv_spawn(argv, NULL, log);
  }
  unlink(obj);
  unlink(log);
  if (s) { /* why, for the parent */
    char err[600];
    snprintf(err, sizeof err, "%s.err", c->so);
    FILE *f = fopen(err, "w");
    if (f) {
      fputs(mlc_status_message(s), f);
      fclose(f);
    }
    mlc_status_free(s);
    return 1;
  }
  return 0;
}

void mlc_drv_tune_build(const mlc_tune_measure_opts *o, mlc_tune_cand **c, int n) {
  static int serial;
  int jobs = o->jobs > 0 ? o->jobs : 1;
  for (int i = 0; i < n; i++) {
    snprintf(c[i]->so, sizeof c[i]->so, "%s/c%d.so", o->workdir, serial++);
    c[i]->built = 0;
  }
  pid_t pids[64];
  int np = 0;
  if (jobs > 64) jobs = 64;
  if (jobs > n) jobs = n;
  for (int w = 0; w < jobs; w++) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      /* the worker's messages would interleave with the progress lines */
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, 2), dup2(null, 1);
      for (int i = w; i < n; i += jobs) build_one(o, c[i]);
      _exit(0);
    }
    if (pid > 0) pids[np++] = pid;
    else
      for (int i = w; i < n; i += jobs) build_one(o, c[i]); /* no fork: here */
  }
  for (int i = 0; i < np; i++)
    while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR) {
    }
  for (int i = 0; i < n; i++) {
    struct stat st;
    c[i]->built = stat(c[i]->so, &st) == 0 ? 1 : -1;
    if (c[i]->built < 0) {
      char err[600], why[200] = "";
      snprintf(err, sizeof err, "%s.err", c[i]->so);
      FILE *f = fopen(err, "r");
      if (f) {
        size_t k = fread(why, 1, sizeof why - 1, f);
        why[k] = 0;
        fclose(f);
        unlink(err);
      }
      snprintf(c[i]->error, sizeof c[i]->error, "the candidate did not build%s%s", why[0] ? ": " : "", why);
      c[i]->ms = -1;
    }
  }
}

/* ---- the child's runtime: a thread pool, workspace, errors -------------------- */

static char rt_err[256];

typedef struct pool {
  pthread_mutex_t mu;
  pthread_cond_t go, done;
  int nthreads, gen, pending, err;
  int64_t n;
  mlc_rt_parallel_body body;
  void *closure;
} pool;
static pool P = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 1, 0, 0, 0, 0, NULL,
                 NULL};

static void run_chunk(int id) {
  int64_t b = P.n * id / P.nthreads, e = P.n * (id + 1) / P.nthreads;
  int r = b < e ? P.body(b, e, P.closure) : 0;
  if (r) {
    pthread_mutex_lock(&P.mu);
    P.err = r;
    pthread_mutex_unlock(&P.mu);
  }
}

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg, seen = 0;
  for (;;) {
    pthread_mutex_lock(&P.mu);
    while (P.gen == seen) pthread_cond_wait(&P.go, &P.mu);
    seen = P.gen;
    pthread_mutex_unlock(&P.mu);
    run_chunk(id);
    pthread_mutex_lock(&P.mu);
    if (--P.pending == 0) pthread_cond_signal(&P.done);
    pthread_mutex_unlock(&P.mu);
  }
  return NULL;
}

static int rt_parallel_for(mlc_rt_ctx *ctx, int64_t n, mlc_rt_parallel_body body, void *closure) {
  (void)ctx;
  if (n <= 0) return 0;
  if (P.nthreads <= 1 || n == 1) return body(0, n, closure);
  pthread_mutex_lock(&P.mu);
  P.n = n;
  P.body = body;
  P.closure = closure;
  P.err = 0;
  P.pending = P.nthreads - 1;
  P.gen++;
  pthread_cond_broadcast(&P.go);
  pthread_mutex_unlock(&P.mu);
  run_chunk(0);
  pthread_mutex_lock(&P.mu);
  while (P.pending > 0) pthread_cond_wait(&P.done, &P.mu);
  int r = P.err;
  pthread_mutex_unlock(&P.mu);
  return r;
}
static void *rt_ws_alloc(mlc_rt_ctx *ctx, uint64_t size) {
  (void)ctx;
  void *p = NULL;
  return posix_memalign(&p, 64, size ? (size_t)size : 1) ? NULL : p;
}
static void rt_ws_free(mlc_rt_ctx *ctx, void *p) {
  (void)ctx;
  free(p);
}
static int rt_set_error(mlc_rt_ctx *ctx, const char *msg) {
  (void)ctx;
  snprintf(rt_err, sizeof rt_err, "%s", msg ? msg : "");
  return -1;
}
static int rt_check_failed(mlc_rt_ctx *ctx, const char *op, const char *msg, int64_t v0, int64_t v1, int64_t v2) {
  (void)ctx;
  snprintf(rt_err, sizeof rt_err, "%s: %s (%lld, %lld, %lld)", op ? op : "", msg ? msg : "", (long long)v0,
           (long long)v1, (long long)v2);
  return -1;
}
static int rt_num_threads(mlc_rt_ctx *ctx) {
  (void)ctx;
  return P.nthreads;
}
static const mlc_rt_api rt_api = {rt_parallel_for, rt_ws_alloc, rt_ws_free, rt_set_error, rt_check_failed,
                                  rt_num_threads, NULL, NULL, NULL, NULL};
static mlc_rt_ctx rt_ctx = {&rt_api};

/* ---- the child -------------------------------------------------------------------- */

/* Calls of at least FLUSH_MIN_S are timed with the caches flushed
** (FLUSH_BYTES written first), at most FLUSH_MAX_CALLS per measurement. */
#define FLUSH_MIN_S 20e-6
#define FLUSH_BYTES ((size_t)8 << 20)
#define FLUSH_MAX_CALLS 64

static DLDataType dl_type(mlc_dtype t) {
  DLDataType d = {kDLFloat, (uint8_t)(mlc_dtype_size(t) * 8), 1};
  if (t == MLC_DTYPE_BF16) d.code = kDLBfloat;
  else if (mlc_dtype_is_float(t)) d.code = kDLFloat;
  else if (t == MLC_DTYPE_BOOL || !mlc_dtype_is_signed(t)) d.code = kDLUInt;
  else d.code = kDLInt;
  return d;
}

/* Compares |got| with |want| (|n| elements of |t|): 0, or the first
** mismatching element + 1. */
static int64_t differs(const void *want, const void *got, int64_t n, mlc_dtype t) {
  if (t == MLC_DTYPE_F32 || t == MLC_DTYPE_F64) {
    for (int64_t i = 0; i < n; i++) {
      double w = t == MLC_DTYPE_F32 ? ((const float *)want)[i] : ((const double *)want)[i];
      double g = t == MLC_DTYPE_F32 ? ((const float *)got)[i] : ((const double *)got)[i];
      if (isnan(w) && isnan(g)) continue;
      if (!(fabs(w - g) <= 1e-3 + 1e-3 * fabs(w))) return i + 1;
    }
    return 0;
  }
  if (mlc_dtype_is_float(t)) return 0; /* half types: not compared */
  size_t es = mlc_dtype_size(t);
  for (int64_t i = 0; i < n; i++)
    if (memcmp((const char *)want + (size_t)i * es, (const char *)got + (size_t)i * es, es)) return i + 1;
  return 0;
}

/* Runs in the child; writes "T t0 t1 ..." or "E why" to |fd|. */
static void child(const mlc_tune_measure_opts *o, const mlc_tune_cand *c, const char *ref, int write_ref, int fd) {
  char out[2048];
  int n = 0;
#define FAIL(...)                                   \
  do {                                              \
    n = snprintf(out, sizeof out, "E " __VA_ARGS__); \
    goto done;                                      \
  } while (0)
  void *h = dlopen(c->so, RTLD_NOW | RTLD_LOCAL);
  if (!h) FAIL("cannot load the candidate: %s", dlerror());
  const char *sym = mlc_tir_func_symbol(c->fn);
  mlc_kernel_fn fn = NULL;
  void *p = dlsym(h, sym ? sym : c->fn->name);
  memcpy(&fn, &p, sizeof p);
  if (!fn) FAIL("no kernel %s in the candidate", sym ? sym : c->fn->name);
  const mlc_tir_func *f = c->fn;
  int np = f->nparams;
  DLTensor *t = calloc((size_t)np + 1, sizeof *t);
  void **args = calloc((size_t)np + 1, sizeof *args);
  int32_t *codes = calloc((size_t)np + 1, sizeof *codes);
  int64_t *shapes = calloc((size_t)np * 16 + 1, sizeof *shapes);
  size_t *bytes = calloc((size_t)np + 1, sizeof *bytes);
  if (!t || !args || !codes || !shapes || !bytes) FAIL("out of memory");
  uint64_t rng = 0x2545f4914f6cdd1dull;
  for (int i = 0; i < np; i++) {
    const mlc_tir_buffer *b = f->params[i];
    int64_t numel = 1;
    if (b->rank > 16) FAIL("parameter %d has rank %d", i, b->rank);
    for (int d = 0; d < b->rank; d++) {
      shapes[i * 16 + d] = b->shape[d]->int_value;
      numel *= b->shape[d]->int_value;
    }
    bytes[i] = (size_t)numel * mlc_dtype_size(b->dtype);
    void *data = NULL;
    if (posix_memalign(&data, 64, bytes[i] ? bytes[i] : 1)) FAIL("out of memory");
    memset(data, 0, bytes[i]);
    for (int64_t k = 0; k < numel; k++) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      double u = (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
      if (b->dtype == MLC_DTYPE_F32) ((float *)data)[k] = (float)u;
      else if (b->dtype == MLC_DTYPE_F64) ((double *)data)[k] = u;
    }
    t[i].data = data;
    t[i].device.device_type = kDLCPU;
    t[i].ndim = b->rank;
    t[i].dtype = dl_type(b->dtype);
    t[i].shape = &shapes[i * 16];
    args[i] = &t[i];
  }
  double t0 = now_s();
  if (fn(args, codes, np, &rt_ctx)) FAIL("the kernel failed: %s", rt_err);
  double first = now_s() - t0;
  if (ref && write_ref) {
    FILE *rf = fopen(ref, "wb");
    for (int i = 0; rf && i < np; i++) fwrite(t[i].data, 1, bytes[i], rf);
    if (!rf || fclose(rf)) FAIL("cannot write the reference results %s", ref);
  } else if (ref) {
    FILE *rf = fopen(ref, "rb");
    if (!rf) FAIL("no reference results (%s)", ref);
    for (int i = 0; i < np; i++) {
      void *want = malloc(bytes[i] ? bytes[i] : 1);
      if (!want || fread(want, 1, bytes[i], rf) != bytes[i]) FAIL("short reference results");
      int64_t d = differs(want, t[i].data, (int64_t)(bytes[i] / mlc_dtype_size(f->params[i]->dtype)),
                          f->params[i]->dtype);
      free(want);
      if (d) FAIL("wrong results: parameter %s, element %lld", f->params[i]->name, (long long)(d - 1));
    }
    fclose(rf);
  }
  /* calls per measurement: enough for min_ms (from the first call, then
  ** from a calibration round) */
  double per = first > 1e-7 ? first : 1e-7;
  if (per * 1e3 > o->timeout_s * 1e3 / (o->repeats + 2)) { /* too slow for more */
    n = snprintf(out, sizeof out, "T %.9g", per * 1e3);
    goto done;
  }
  t0 = now_s();
  int calib = per < 1e-3 ? 3 : 1;
  for (int k = 0; k < calib; k++) fn(args, codes, np, &rt_ctx);
  per = (now_s() - t0) / calib;
  if (per < 1e-7) per = 1e-7;
  int64_t inner = (int64_t)ceil(o->min_ms * 1e-3 / per);
  if (inner < 1) inner = 1;
  /* kernels long enough to stream their operands from memory in a model
  ** (other kernels ran in between) are timed one call at a time after the
  ** caches are flushed, as in the model and not with the operands left in
  ** cache by the previous call */
  int flush = per >= FLUSH_MIN_S;
  static volatile unsigned char *junk;
  if (flush && !junk) junk = malloc(FLUSH_BYTES);
  if (!junk) flush = 0;
  if (flush && inner > FLUSH_MAX_CALLS) inner = FLUSH_MAX_CALLS;
  n = snprintf(out, sizeof out, "T");
  for (int r = 0; r < o->repeats && r < MLC_TUNE_MAX_TIMES; r++) {
    double total = 0;
    t0 = now_s();
    for (int64_t k = 0; k < inner; k++) {
      if (flush) {
        for (size_t b = 0; b < FLUSH_BYTES; b += 64) junk[b]++;
        t0 = now_s();
      }
      if (fn(args, codes, np, &rt_ctx)) FAIL("the kernel failed: %s", rt_err);
      if (flush) total += now_s() - t0;
    }
    if (!flush) total = now_s() - t0;
    n += snprintf(out + n, sizeof out - (size_t)n, " %.9g", total * 1e3 / (double)inner);
  }
#undef FAIL
done:
  if (n > 0) {
    ssize_t w = write(fd, out, (size_t)n < sizeof out ? (size_t)n : sizeof out - 1);
    (void)w;
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

void mlc_drv_tune_run(const mlc_tune_measure_opts *o, mlc_tune_cand *c, const char *ref, int write_ref) {
  c->ms = -1;
  c->ntimes = 0;
  if (c->built != 1) return;
  int fds[2];
  if (pipe(fds)) {
    snprintf(c->error, sizeof c->error, "pipe: %s", strerror(errno));
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(c->error, sizeof c->error, "fork: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    setpgid(0, 0);
    close(fds[0]);
    P.nthreads = o->threads > 0 ? o->threads : 1;
    for (int i = 1; i < P.nthreads; i++) {
      pthread_t th;
      if (pthread_create(&th, NULL, worker, (void *)(intptr_t)i)) P.nthreads = i;
    }
    child(o, c, ref, write_ref, fds[1]);
    _exit(0);
  }
  setpgid(pid, pid);
  close(fds[1]);
  char buf[2048];
  size_t got = 0;
  double deadline = now_s() + o->timeout_s;
  int timed_out = 0;
  for (;;) {
    double left = deadline - now_s();
    if (left <= 0) {
      timed_out = 1;
      break;
    }
    struct pollfd pf = {fds[0], POLLIN, 0};
    int r = poll(&pf, 1, (int)(left * 1e3) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t k = read(fds[0], buf + got, sizeof buf - 1 - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += (size_t)k;
    if (got >= sizeof buf - 1) break;
  }
  buf[got] = 0;
  close(fds[0]);
  if (timed_out) kill(-pid, SIGKILL), kill(pid, SIGKILL);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    snprintf(c->error, sizeof c->error, "ran past the timeout (%.0f s)", o->timeout_s);
    return;
  }
  if (WIFSIGNALED(st)) {
    snprintf(c->error, sizeof c->error, "crashed (signal %d)", WTERMSIG(st));
    return;
  }
  if (buf[0] == 'E') {
    snprintf(c->error, sizeof c->error, "%.200s", buf + 2);
    return;
  }
  if (buf[0] != 'T') {
    snprintf(c->error, sizeof c->error, "the measurement reported nothing");
    return;
  }
  char *p = buf + 1;
  while (c->ntimes < MLC_TUNE_MAX_TIMES) {
    char *e;
    double v = strtod(p, &e);
    if (e == p) break;
    c->times[c->ntimes++] = v;
    p = e;
  }
  if (c->ntimes == 0) {
    snprintf(c->error, sizeof c->error, "the measurement reported no time");
    return;
  }
  double sorted[MLC_TUNE_MAX_TIMES];
  memcpy(sorted, c->times, (size_t)c->ntimes * sizeof sorted[0]);
  qsort(sorted, (size_t)c->ntimes, sizeof sorted[0], cmp_double);
  c->ms = sorted[c->ntimes / 2];
  if (!(c->ms > 0)) c->ms = 1e-6;
  c->error[0] = 0;
  const char *test_times = getenv("MLC_TUNE_TEST_TIMES");
  if (test_times && *test_times && c->trace) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *q = c->trace; *q; q++) h = (h ^ (unsigned char)*q) * 1099511628211ull;
    c->ms = 0.5 + (double)(h % 1000) / 1000.0;
    for (int i = 0; i < c->ntimes; i++) c->times[i] = c->ms;
  }
}
