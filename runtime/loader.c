/*
** loader.c: the public API of mlc_runtime.h, as the small library user
** programs link (libmlcload; it needs libdl and nothing else).
**
** mlc_model_load dlopens a model.so with RTLD_NOW | RTLD_LOCAL, takes its
** one exported symbol, mlc_model_entry_v1, checks the table's ABI version
** and size, and opens the model through it.  Every later call goes through
** the table of the model the handle came from, so models compiled at
** different times (each with its own runtime inside) coexist in a process.
** Before dlopen, the file is checked from its bytes (rt_so.h): an ELF
** shared object for this host whose segments all lie in the file and that
** holds a model description that decodes, so a truncated or foreign file
** is an error here rather than a crash inside dlopen.
**
** The public handles wrap the runtime's: a model holds the table, the
** runtime's model and the dlopen handle, reference-counted so that sessions
** keep their model's code mapped; a session holds the runtime's session
** and its model.  Each handle carries a tag (|magic|) set when it is made
** and cleared when it is freed, and every call checks it: a foreign pointer
** (memory that is not a handle) or a handle already freed is refused with
** MLC_RT_INVALID_ARGUMENT instead of being used.  So that the check of a
** freed handle reads memory that is still the loader's, a freed handle's
** memory is not given back at once: it waits, tag cleared, in a small
** per-process quarantine (QUARANTINE handles; the oldest is released when
** it is full).  Detection is best-effort beyond that: a handle freed more
** than QUARANTINE frees ago is gone.
*/
#include "config.h"
#include "runtime/rt_alloc.h"
#include "runtime/rt_entry.h"
#include "runtime/rt_model.h"
#include "runtime/rt_so.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MODEL_MAGIC 0x4d4c434du   /* "MCLM" */
#define SESSION_MAGIC 0x534c434du /* "MCLS" */
#define DEAD_MAGIC 0xdeadbeefu    /* a freed handle in the quarantine */
#define RELEASED_MAGIC 0xfeedfaceu /* a model freed by its owner, kept by its sessions */
#define QUARANTINE 64

struct mlc_model {
  uint32_t magic;
  mlc_rt_allocator alloc; /* of this struct, its sessions' and the model's own */
  const mlc_rt_entry *entry;
  mlc_rt_model *impl;
  void *dl;          /* NULL when opened from a linked-in entry */
  atomic_int refs;   /* 1 for the model + 1 per live session */
};

struct mlc_session {
  uint32_t magic;
  const mlc_rt_entry *entry;
  mlc_rt_session *impl;
  mlc_model *model;
};

typedef const mlc_rt_entry *(*entry_fn)(void);

static __thread char tls_err[1024];

/* The allocator models opened from now on take (mlc_rt_set_allocator). */
static mlc_rt_allocator loader_alloc;

void mlc_rt_set_allocator(const mlc_rt_allocator *a) {
  if (a) {
    loader_alloc = *a;
  } else {
    loader_alloc.self = NULL;
    loader_alloc.realloc = NULL;
  }
}

/* Records an error in the thread's last error and in (err, errlen). */
static mlc_rt_status fail(char *err, size_t errlen, mlc_rt_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static mlc_rt_status fail(char *err, size_t errlen, mlc_rt_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tls_err, sizeof tls_err, fmt, ap);
  va_end(ap);
  if (err && errlen) snprintf(err, errlen, "%s", tls_err);
  return st;
}

const char *mlc_rt_status_name(mlc_rt_status st) {
  switch (st) {
  case MLC_RT_OK: return "OK";
  case MLC_RT_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
  case MLC_RT_NOT_FOUND: return "NOT_FOUND";
  case MLC_RT_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
  case MLC_RT_RUNTIME_ERROR: return "RUNTIME_ERROR";
  case MLC_RT_ABI_MISMATCH: return "ABI_MISMATCH";
  }
  return "UNKNOWN";
}

const char *mlc_model_last_error(void) { return tls_err; }

/* ---- handle tags and the quarantine of freed handles ------------------- */

static pthread_mutex_t quarantine_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  void *h;
  mlc_rt_allocator a; /* the allocator |h| came from */
} quarantine[QUARANTINE];
static int quarantine_next;

/* Marks |h| (whose tag is at |magic|) dead and parks its memory; the
** oldest parked handle is released. */
static void retire(void *h, uint32_t *magic, mlc_rt_allocator a) {
  pthread_mutex_lock(&quarantine_mu);
  *magic = DEAD_MAGIC;
  void *old = quarantine[quarantine_next].h;
  mlc_rt_allocator old_a = quarantine[quarantine_next].a;
  quarantine[quarantine_next].h = h;
  quarantine[quarantine_next].a = a;
  quarantine_next = (quarantine_next + 1) % QUARANTINE;
  pthread_mutex_unlock(&quarantine_mu);
  if (old) mlc_rt_free(&old_a, old);
}

/* NULL when |m| is a live model; else why not, for messages. */
static const char *bad_model(const mlc_model *m) {
  if (!m) return "NULL model";
  if (m->magic == MODEL_MAGIC) return NULL;
  return m->magic == DEAD_MAGIC || m->magic == RELEASED_MAGIC ? "model already freed"
                                                              : "not a model handle";
}

static const char *bad_session(const mlc_session *s) {
  if (!s) return "NULL session";
  if (s->magic == SESSION_MAGIC) return NULL;
  return s->magic == DEAD_MAGIC || s->magic == RELEASED_MAGIC ? "session already freed"
                                                              : "not a session handle";
}

/* The live model |m|, or NULL after recording why not (for |who|). */
static const mlc_model *live_model(const mlc_model *m, const char *who) {
  const char *why = bad_model(m);
  if (!why) return m;
  if (m) fail(NULL, 0, MLC_RT_INVALID_ARGUMENT, "%s: %s", who, why);
  return NULL;
}

static mlc_session *live_session(mlc_session *s, const char *who) {
  const char *why = bad_session(s);
  if (!why) return s;
  if (s) fail(NULL, 0, MLC_RT_INVALID_ARGUMENT, "%s: %s", who, why);
  return NULL;
}

/* Opens the model behind |entry|; |dl| (may be NULL) is owned by the model on success. */
static mlc_rt_status open_entry(const mlc_rt_entry *entry, void *dl, const char *what,
                                mlc_model **out, char *err, size_t errlen) {
  if (entry->abi_version != MLC_RT_ENTRY_VERSION || entry->size < MLC_RT_ENTRY_MIN_SIZE)
    return fail(err, errlen, MLC_RT_ABI_MISMATCH,
                "%s: model entry ABI version %u (%u-byte table), but this loader reads version %u "
                "(%u-byte table); rebuild the model or the program",
                what, entry->abi_version, entry->size, MLC_RT_ENTRY_VERSION,
                (unsigned)sizeof(mlc_rt_entry));
  mlc_rt_allocator a = loader_alloc;
  mlc_model *m = mlc_rt_calloc(&a, 1, sizeof *m);
  if (!m) return fail(err, errlen, MLC_RT_OUT_OF_MEMORY, "%s: out of memory", what);
  m->alloc = a;
  char msg[sizeof tls_err];
  msg[0] = 0;
  mlc_rt_status st = entry->model_open_with(&a, &m->impl, msg, sizeof msg);
  if (st != MLC_RT_OK) {
    mlc_rt_free(&a, m);
    return fail(err, errlen, st, "%s: %s", what, msg[0] ? msg : mlc_rt_status_name(st));
  }
  m->entry = entry;
  m->dl = dl;
  atomic_init(&m->refs, 1);
  m->magic = MODEL_MAGIC;
  *out = m;
  tls_err[0] = 0;
  if (err && errlen) err[0] = 0;
  return MLC_RT_OK;
}

mlc_rt_status mlc_model_open_entry(const mlc_rt_entry *entry, mlc_model **out, char *err,
                                   size_t errlen) {
  if (out) *out = NULL;
  if (!entry || !out)
    return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "mlc_model_open_entry: NULL %s",
                !entry ? "entry" : "output pointer");
  return open_entry(entry, NULL, "model", out, err, errlen);
}

mlc_rt_status mlc_model_load(const char *path, mlc_model **out, char *err, size_t errlen) {
  if (out) *out = NULL;
  if (!path || !out)
    return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "mlc_model_load: NULL %s",
                !path ? "path" : "output pointer");
  if (!*path) return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "mlc_model_load: empty path");
  /* A bare file name must not send dlopen searching the library path. */
  size_t n = strlen(path);
  char *file = mlc_rt_alloc(&loader_alloc, n + 3);
  if (!file) return fail(err, errlen, MLC_RT_OUT_OF_MEMORY, "%s: out of memory", path);
  snprintf(file, n + 3, "%s%s", strchr(path, '/') ? "" : "./", path);
  if (access(file, R_OK) != 0) {
    int e = errno;
    mlc_rt_free(&loader_alloc, file);
    return fail(err, errlen, e == ENOENT ? MLC_RT_NOT_FOUND : MLC_RT_INVALID_ARGUMENT, "%s: %s",
                path, strerror(e));
  }
  /* Nothing of the file runs (no dlopen) until its bytes check out. */
  char bad[sizeof tls_err];
  mlc_rt_status cst = mlc_rt_so_check_file(&loader_alloc, path, NULL, bad, sizeof bad);
  if (cst != MLC_RT_OK) {
    mlc_rt_free(&loader_alloc, file);
    return fail(err, errlen, cst, "%s: cannot load the model: %s", path, bad);
  }
  dlerror();
  void *dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  mlc_rt_free(&loader_alloc, file);
  if (!dl) {
    const char *why = dlerror();
    return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "%s: cannot load the model: %s", path,
                why ? why : "unknown dlopen error");
  }
  void *sym = dlsym(dl, "mlc_model_entry_v1");
  if (!sym) {
    dlclose(dl);
    return fail(err, errlen, MLC_RT_INVALID_ARGUMENT,
                "%s: not a compiled model (no mlc_model_entry_v1), or one built for another loader",
                path);
  }
  const mlc_rt_entry *entry = ((entry_fn)sym)();
  if (!entry) {
    dlclose(dl);
    return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "%s: the model's entry returned NULL", path);
  }
  mlc_rt_status st = open_entry(entry, dl, path, out, err, errlen);
  if (st != MLC_RT_OK) dlclose(dl);
  return st;
}

/* Drops one reference; the last one closes the model and unloads its code. */
static void release_model(mlc_model *m) {
  if (atomic_fetch_sub(&m->refs, 1) != 1) return;
  m->entry->model_close(m->impl);
  if (m->dl) dlclose(m->dl);
  mlc_rt_allocator a = m->alloc;
  retire(m, &m->magic, a);
}

void mlc_model_free(mlc_model *m) {
  if (!m) return;
  /* Claim the handle's own reference once: a second free finds the tag
  ** already cleared (the model may live on while sessions hold it). */
  uint32_t want = MODEL_MAGIC;
  pthread_mutex_lock(&quarantine_mu);
  int live = m->magic == want;
  if (live) m->magic = RELEASED_MAGIC;
  pthread_mutex_unlock(&quarantine_mu);
  if (!live) {
    fail(NULL, 0, MLC_RT_INVALID_ARGUMENT, "mlc_model_free: %s", bad_model(m));
    return;
  }
  release_model(m);
}

const mlc_rt_entry *mlc_rt_model_entry_of(const mlc_model *m) {
  return live_model(m, "mlc_rt_model_entry_of") ? m->entry : NULL;
}

/* ---- model accessors: forwarded to the model's runtime ------------------- */

#define LIVE_M(m) live_model((m), __func__)

const char *mlc_model_name(const mlc_model *m) {
  return LIVE_M(m) ? m->entry->model_name(m->impl) : "";
}

const char *mlc_model_manifest(const mlc_model *m) {
  return LIVE_M(m) ? m->entry->model_manifest(m->impl) : "";
}

int32_t mlc_model_num_inputs(const mlc_model *m) {
  return LIVE_M(m) ? m->entry->model_num_io(m->impl, 0) : 0;
}

int32_t mlc_model_num_outputs(const mlc_model *m) {
  return LIVE_M(m) ? m->entry->model_num_io(m->impl, 1) : 0;
}

const char *mlc_model_input_name(const mlc_model *m, int32_t i) {
  return LIVE_M(m) ? m->entry->model_io_name(m->impl, 0, i) : NULL;
}

const char *mlc_model_output_name(const mlc_model *m, int32_t i) {
  return LIVE_M(m) ? m->entry->model_io_name(m->impl, 1, i) : NULL;
}

static int32_t io_index(const mlc_model *m, int output, const char *name) {
  if (!live_model(m, output ? "mlc_model_output_index" : "mlc_model_input_index") || !name)
    return -1;
  int32_t n = m->entry->model_num_io(m->impl, output);
  for (int32_t i = 0; i < n; i++) {
    const char *s = m->entry->model_io_name(m->impl, output, i);
    if (s && strcmp(s, name) == 0) return i;
  }
  return -1;
}

int32_t mlc_model_input_index(const mlc_model *m, const char *name) { return io_index(m, 0, name); }

int32_t mlc_model_output_index(const mlc_model *m, const char *name) {
  return io_index(m, 1, name);
}

static DLDataType io_dtype(const mlc_model *m, int output, int32_t i) {
  if (!live_model(m, output ? "mlc_model_output_dtype" : "mlc_model_input_dtype")) {
    DLDataType none = {0, 0, 0};
    return none;
  }
  return m->entry->model_io_dtype(m->impl, output, i);
}

DLDataType mlc_model_input_dtype(const mlc_model *m, int32_t i) { return io_dtype(m, 0, i); }
DLDataType mlc_model_output_dtype(const mlc_model *m, int32_t i) { return io_dtype(m, 1, i); }

int32_t mlc_model_input_ndim(const mlc_model *m, int32_t i) {
  return LIVE_M(m) ? m->entry->model_io_ndim(m->impl, 0, i) : -1;
}

int32_t mlc_model_output_ndim(const mlc_model *m, int32_t i) {
  return LIVE_M(m) ? m->entry->model_io_ndim(m->impl, 1, i) : -1;
}

int64_t mlc_model_input_dim(const mlc_model *m, int32_t i, int32_t d) {
  return LIVE_M(m) ? m->entry->model_io_dim(m->impl, 0, i, d) : -1;
}

int64_t mlc_model_output_dim(const mlc_model *m, int32_t i, int32_t d) {
  return LIVE_M(m) ? m->entry->model_io_dim(m->impl, 1, i, d) : -1;
}

const char *mlc_model_input_dim_name(const mlc_model *m, int32_t i, int32_t d) {
  return LIVE_M(m) ? m->entry->model_io_dim_name(m->impl, 0, i, d) : NULL;
}

const char *mlc_model_output_dim_name(const mlc_model *m, int32_t i, int32_t d) {
  return LIVE_M(m) ? m->entry->model_io_dim_name(m->impl, 1, i, d) : NULL;
}

int32_t mlc_model_num_symbols(const mlc_model *m) {
  return LIVE_M(m) ? m->entry->model_num_symbols(m->impl) : 0;
}

const char *mlc_model_symbol_name(const mlc_model *m, int32_t k) {
  return LIVE_M(m) ? m->entry->model_symbol_name(m->impl, k) : NULL;
}

/* ---- sessions ----------------------------------------------------------- */

mlc_rt_status mlc_session_create(const mlc_model *m, const mlc_session_options *opts,
                                 mlc_session **out) {
  if (out) *out = NULL;
  if (!m || !out)
    return fail(NULL, 0, MLC_RT_INVALID_ARGUMENT, "mlc_session_create: NULL %s",
                !m ? "model" : "output pointer");
  if (bad_model(m))
    return fail(NULL, 0, MLC_RT_INVALID_ARGUMENT, "mlc_session_create: %s", bad_model(m));
  mlc_session *s = mlc_rt_calloc(&m->alloc, 1, sizeof *s);
  if (!s) return fail(NULL, 0, MLC_RT_OUT_OF_MEMORY, "mlc_session_create: out of memory");
  char msg[sizeof tls_err];
  msg[0] = 0;
  mlc_rt_status st =
      m->entry->session_create(m->impl, opts ? opts->num_threads : 0, &s->impl, msg, sizeof msg);
  if (st != MLC_RT_OK) {
    mlc_rt_free(&m->alloc, s);
    return fail(NULL, 0, st, "mlc_session_create: %s", msg[0] ? msg : mlc_rt_status_name(st));
  }
  mlc_model *mm = (mlc_model *)m; /* only the reference count changes */
  atomic_fetch_add(&mm->refs, 1);
  s->entry = m->entry;
  s->model = mm;
  s->magic = SESSION_MAGIC;
  *out = s;
  return MLC_RT_OK;
}

void mlc_session_free(mlc_session *s) {
  if (!s) return;
  pthread_mutex_lock(&quarantine_mu);
  int live = s->magic == SESSION_MAGIC;
  if (live) s->magic = RELEASED_MAGIC;
  pthread_mutex_unlock(&quarantine_mu);
  if (!live) {
    fail(NULL, 0, MLC_RT_INVALID_ARGUMENT, "mlc_session_free: %s", bad_session(s));
    return;
  }
  s->entry->session_free(s->impl);
  mlc_model *m = s->model;
  retire(s, &s->magic, m->alloc);
  release_model(m);
}

mlc_rt_status mlc_session_set_input(mlc_session *s, int32_t index, const DLTensor *t) {
  return live_session(s, __func__) ? s->entry->session_set_input(s->impl, index, t)
                                    : MLC_RT_INVALID_ARGUMENT;
}

mlc_rt_status mlc_session_set_input_by_name(mlc_session *s, const char *name, const DLTensor *t) {
  return live_session(s, __func__) ? s->entry->session_set_input_by_name(s->impl, name, t)
                                    : MLC_RT_INVALID_ARGUMENT;
}

mlc_rt_status mlc_session_run(mlc_session *s) {
  return live_session(s, __func__) ? s->entry->session_run(s->impl) : MLC_RT_INVALID_ARGUMENT;
}

mlc_rt_status mlc_session_get_output(mlc_session *s, int32_t index, const DLTensor **out) {
  if (!live_session(s, __func__)) {
    if (out) *out = NULL;
    return MLC_RT_INVALID_ARGUMENT;
  }
  return s->entry->session_get_output(s->impl, index, out);
}

/* |s|'s table has the function at |off| (a table built before it was
** appended lacks it). */
#define HAS_FN(s, member) ((s)->entry->size >= offsetof(mlc_rt_entry, member) + sizeof((s)->entry->member) && \
                           (s)->entry->member)

mlc_rt_status mlc_session_set_profiling(mlc_session *s, int enable) {
  if (!live_session(s, __func__)) return MLC_RT_INVALID_ARGUMENT;
  if (!HAS_FN(s, session_set_profiling))
    return fail(NULL, 0, MLC_RT_ABI_MISMATCH, "mlc_session_set_profiling: the model was built by a compiler without profiling");
  return s->entry->session_set_profiling(s->impl, enable);
}

mlc_rt_status mlc_session_get_output_device(mlc_session *s, int32_t index, const DLTensor **out) {
  if (!live_session(s, __func__)) {
    if (out) *out = NULL;
    return MLC_RT_INVALID_ARGUMENT;
  }
  /* a model from before device outputs runs on the CPU: the same tensor */
  if (!HAS_FN(s, session_get_output_device)) return s->entry->session_get_output(s->impl, index, out);
  return s->entry->session_get_output_device(s->impl, index, out);
}

int32_t mlc_model_input_has_default(const mlc_model *m, int32_t i) {
  /* a model from before defaults has none */
  if (!LIVE_M(m) || !HAS_FN(m, model_input_has_default)) return 0;
  return m->entry->model_input_has_default(m->impl, i);
}

int32_t mlc_session_profile(const mlc_session *s, int32_t i, const char **name, const char **node, double *ms) {
  if (!s || bad_session(s) || !HAS_FN(s, session_profile)) return 0;
  return s->entry->session_profile(s->impl, i, name, node, ms);
}

const char *mlc_session_last_error(const mlc_session *s) {
  if (!s) return "invalid session (NULL)";
  if (bad_session(s)) return s->magic == DEAD_MAGIC || s->magic == RELEASED_MAGIC
                                 ? "invalid session (already freed)"
                                 : "invalid session (not a session handle)";
  return s->entry->session_last_error(s->impl);
}
