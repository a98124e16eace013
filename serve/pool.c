/*
** pool.c: the served models.  A slot (srv_model) is a name and a file; its
** current instance is the file loaded once, with one session per worker
** thread and a bounded queue of jobs in front of them.
**
** A worker owns its session for its whole life, so no two requests ever
** share one.  It takes the oldest job and, when --max-batch allows and the
** model's inputs and outputs all share a symbolic first dimension, the
** queued jobs whose other dimensions match, runs them as one batch and
** hands each its own rows.
**
** Reload loads the file into a new instance first (a file that does not
** load leaves the old one serving), then swaps the slot's pointer under its
** lock: new requests go to the new instance while the old one's workers
** finish its queue and leave; the last reference frees it.  Nothing is
** dropped.
*/
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "serve/serve_int.h"

/* Instances alive, for the drain at exit. */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t live_cv = PTHREAD_COND_INITIALIZER;
static int live;

/* Jobs one batched run may take. */
#define MAX_BATCH_JOBS 64

typedef struct worker {
  srv_instance *in;
  mlc_session *s;
} worker;

static void instance_free(srv_instance *in) {
  mlc_model_free(in->model);
  pthread_mutex_destroy(&in->mu);
  pthread_cond_destroy(&in->cv);
  free(in);
  pthread_mutex_lock(&live_mu);
  live--;
  pthread_cond_broadcast(&live_cv);
  pthread_mutex_unlock(&live_mu);
}

void srv_instance_release(srv_instance *in) {
  if (!in) return;
  pthread_mutex_lock(&in->mu);
  int left = --in->refs;
  pthread_mutex_unlock(&in->mu);
  if (left == 0) instance_free(in);
}

static int64_t rows_of(const srv_job *j) { return j->ninputs > 0 ? j->inputs[0].t.shape[0] : 1; }

static void *worker_main(void *arg) {
  worker *w = arg;
  srv_instance *in = w->in;
  srv_job *batch[MAX_BATCH_JOBS];
  pthread_mutex_lock(&in->mu);
  for (;;) {
    while (!in->head && !in->closed) pthread_cond_wait(&in->cv, &in->mu);
    if (!in->head) break; /* closed and empty */
    srv_job *first = in->head;
    in->head = first->next;
    int n = 1;
    batch[0] = first;
    if (in->cfg->max_batch > 1 && in->batch_axis_ok) {
      int64_t rows = rows_of(first);
      srv_job **link = &in->head;
      while (*link && n < MAX_BATCH_JOBS) {
        srv_job *j = *link;
        if (srv_job_batchable(first, j) && rows + rows_of(j) <= in->cfg->max_batch) {
          *link = j->next;
          batch[n++] = j;
          rows += rows_of(j);
        } else {
          link = &j->next;
        }
      }
    }
    if (n > 1 || !in->head) { /* the batch may have taken the last job */
      in->tail = NULL;
      for (srv_job *j = in->head; j; j = j->next) in->tail = j;
    }
    in->depth -= n;
    in->running += n;
    pthread_mutex_unlock(&in->mu);
    srv_infer_run(in->model, w->s, in->slot->name, batch, n, &in->slot->metrics);
    pthread_mutex_lock(&in->mu);
    in->running -= n;
    pthread_mutex_unlock(&in->mu);
    for (int j = 0; j < n; j++) batch[j]->done(batch[j]);
    pthread_mutex_lock(&in->mu);
  }
  pthread_mutex_unlock(&in->mu);
  mlc_session_free(w->s);
  free(w);
  srv_instance_release(in);
  return NULL;
}

/* Do all inputs and outputs share one symbolic first dimension? */
static int batch_axis(const mlc_model *m) {
  const char *sym = NULL;
  int32_t nin = mlc_model_num_inputs(m), nout = mlc_model_num_outputs(m);
  if (nin < 1 || nout < 1) return 0;
  for (int32_t i = 0; i < nin + nout; i++) {
    int out = i >= nin;
    int32_t k = out ? i - nin : i;
    if ((out ? mlc_model_output_ndim(m, k) : mlc_model_input_ndim(m, k)) < 1) return 0;
    const char *s = out ? mlc_model_output_dim_name(m, k, 0) : mlc_model_input_dim_name(m, k, 0);
    if (!s || (sym && strcmp(s, sym) != 0)) return 0;
    sym = s;
  }
  return 1;
}

/* Where a reload opens its file from.  The dynamic loader takes a path it
** has loaded before for the object already loaded, so a model file
** replaced since would not be read again: a reload opens it through a
** symbolic link of a name never used before, made in a private directory
** and removed as soon as the file is loaded. */
static pthread_mutex_t link_mu = PTHREAD_MUTEX_INITIALIZER;
static char link_dir[256];
static unsigned link_seq;

static void remove_link_dir(void) {
  if (link_dir[0]) rmdir(link_dir);
}

static int load_model(srv_model *slot, mlc_model **m, char *err, size_t errlen) {
  if (slot->loads == 0) return mlc_model_load(slot->path, m, err, errlen) == MLC_RT_OK ? 0 : -1;
  char *real = realpath(slot->path, NULL);
  if (!real) {
    snprintf(err, errlen, "%s: %s", slot->path, strerror(errno));
    return -1;
  }
  char link[320];
  pthread_mutex_lock(&link_mu);
  if (!link_dir[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(link_dir, sizeof link_dir, "%s/mlc-serve.XXXXXX", tmp && *tmp && strlen(tmp) < 200 ? tmp : "/tmp");
    if (!mkdtemp(link_dir)) link_dir[0] = 0;
    else atexit(remove_link_dir);
  }
  unsigned seq = ++link_seq;
  int have_dir = link_dir[0] != 0;
  snprintf(link, sizeof link, "%s/%u.so", link_dir, seq);
  pthread_mutex_unlock(&link_mu);
  if (!have_dir || symlink(real, link) != 0) {
    snprintf(err, errlen, "%s: cannot make a link to reload it from: %s", slot->path, strerror(errno));
    free(real);
    return -1;
  }
  free(real);
  mlc_rt_status st = mlc_model_load(link, m, err, errlen);
  unlink(link);
  if (st == MLC_RT_OK) return 0;
  /* name the file, not the link, in the message */
  char *at = strstr(err, link);
  if (at) {
    char rest[1024];
    snprintf(rest, sizeof rest, "%s", at + strlen(link));
    snprintf(at, errlen - (size_t)(at - err), "%s%s", slot->path, rest);
  }
  return -1;
}

srv_instance *srv_instance_open(srv_model *slot, const srv_config *cfg, char *err, size_t errlen) {
  mlc_model *m = NULL;
  if (load_model(slot, &m, err, errlen) != 0) return NULL;
  for (int32_t i = 0; i < mlc_model_num_inputs(m); i++)
    if (!srv_dtype_name(mlc_model_input_dtype(m, i))) {
      snprintf(err, errlen, "%s: input \"%s\" has a datatype the inference protocol has no name for",
               slot->path, mlc_model_input_name(m, i));
      mlc_model_free(m);
      return NULL;
    }
  srv_instance *in = calloc(1, sizeof *in);
  worker **ws = calloc((size_t)cfg->sessions, sizeof *ws);
  if (!in || !ws) {
    snprintf(err, errlen, "out of memory");
    free(in);
    free(ws);
    mlc_model_free(m);
    return NULL;
  }
  in->slot = slot;
  in->model = m;
  in->cfg = cfg;
  in->refs = 1;
  in->batch_axis_ok = batch_axis(m);
  pthread_mutex_init(&in->mu, NULL);
  pthread_cond_init(&in->cv, NULL);
  pthread_mutex_lock(&live_mu);
  live++;
  pthread_mutex_unlock(&live_mu);
  mlc_session_options opts = {.num_threads = cfg->threads};
  int ok = 1;
  for (int k = 0; k < cfg->sessions && ok; k++) {
    if (!(ws[k] = calloc(1, sizeof *ws[k]))) {
      snprintf(err, errlen, "out of memory");
      ok = 0;
    } else if (mlc_session_create(m, &opts, &ws[k]->s) != MLC_RT_OK) {
      snprintf(err, errlen, "%s: session %d: %s", slot->path, k, mlc_model_last_error());
      ok = 0;
    }
    if (ws[k]) ws[k]->in = in;
  }
  for (int k = 0; k < cfg->sessions && ok; k++) {
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_mutex_lock(&in->mu);
    in->refs++;
    in->nworkers++;
    pthread_mutex_unlock(&in->mu);
    if (pthread_create(&th, &attr, worker_main, ws[k]) != 0) {
      snprintf(err, errlen, "%s: cannot start worker %d", slot->path, k);
      pthread_mutex_lock(&in->mu);
      in->refs--;
      in->nworkers--;
      pthread_mutex_unlock(&in->mu);
      ok = 0;
    } else {
      ws[k] = NULL; /* the worker owns it now */
    }
    pthread_attr_destroy(&attr);
  }
  for (int k = 0; k < cfg->sessions; k++)
    if (ws[k]) {
      mlc_session_free(ws[k]->s);
      free(ws[k]);
    }
  free(ws);
  if (!ok) { /* workers already started leave when they see it closed */
    pthread_mutex_lock(&in->mu);
    in->closed = 1;
    pthread_cond_broadcast(&in->cv);
    pthread_mutex_unlock(&in->mu);
    srv_instance_release(in);
    return NULL;
  }
  return in;
}

srv_instance *srv_model_acquire(srv_model *slot) {
  pthread_mutex_lock(&slot->mu);
  srv_instance *in = slot->cur;
  if (in) {
    pthread_mutex_lock(&in->mu);
    in->refs++;
    pthread_mutex_unlock(&in->mu);
  }
  pthread_mutex_unlock(&slot->mu);
  return in;
}

int srv_instance_submit(srv_instance *in, srv_job *job) {
  pthread_mutex_lock(&in->mu);
  if (in->closed) {
    pthread_mutex_unlock(&in->mu);
    return -1;
  }
  if (in->depth >= in->cfg->max_queue) {
    pthread_mutex_unlock(&in->mu);
    return 503;
  }
  job->next = NULL;
  job->in = in;
  if (in->tail) in->tail->next = job;
  else in->head = job;
  in->tail = job;
  in->depth++;
  pthread_cond_signal(&in->cv);
  pthread_mutex_unlock(&in->mu);
  return 0;
}

static void instance_close(srv_instance *in) {
  if (!in) return;
  pthread_mutex_lock(&in->mu);
  in->closed = 1;
  pthread_cond_broadcast(&in->cv);
  pthread_mutex_unlock(&in->mu);
  srv_instance_release(in); /* the slot's reference */
}

int srv_model_reload(srv_model *slot, const srv_config *cfg, char *err, size_t errlen) {
  srv_instance *fresh = srv_instance_open(slot, cfg, err, errlen);
  if (!fresh) return -1;
  pthread_mutex_lock(&slot->mu);
  srv_instance *old = slot->cur;
  slot->cur = fresh;
  slot->loads++;
  pthread_mutex_unlock(&slot->mu);
  instance_close(old);
  return 0;
}

void srv_model_close(srv_model *slot) {
  pthread_mutex_lock(&slot->mu);
  srv_instance *old = slot->cur;
  slot->cur = NULL;
  pthread_mutex_unlock(&slot->mu);
  instance_close(old);
}

int srv_instances_wait(double seconds) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += (time_t)seconds;
  until.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&live_mu);
  while (live > 0)
    if (pthread_cond_timedwait(&live_cv, &live_mu, &until) != 0) break;
  int left = live;
  pthread_mutex_unlock(&live_mu);
  return left == 0 ? 0 : -1;
}
