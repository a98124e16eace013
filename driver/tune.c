/*
** tune.c: mlc_tune_file, the auto-tuner.
**
** Tasks.  The model is compiled as compile does, up to its scheduled prim
** functions; each distinct unscheduled function (mlc_lower_func_key: its
** structure and shapes) with constant shapes is a task, weighted by the
** number of steps of the model that call it.
**
** Search space.  The default CPU rules with their parameters sampled
** (lower.h, mlc_lower_tuning): every candidate is the rules' schedule for
** one vector of decisions, and its trace (decisions recorded) replays.
**
** Search.  First the default schedule of every task is measured (it is
** the reference whose results every candidate must reproduce, and the
** first record of the task, so that a tuned kernel is never slower than
** the default).  Then rounds, each for the task with the most to gain
** (its weight times its best time, less for tasks tried often): a pool of
** candidates, most of them mutations of one of the best measured so far
** (one or two decisions changed), the rest drawn afresh; the cost model
** ranks the pool and the best few of them, and one drawn at random, are
** built in parallel and measured one by one (tune_measure.c).  Every
** measurement is appended to the log at once.  The search ends when the
** trials (the log's included) are spent, the budget of time is, no task
** has new candidates, or the caller's stop flag is set (Ctrl-C).
**
** Determinism.  Everything drawn comes from the seed (and the task, round
** and candidate numbers), and the cost model is trained deterministically:
** with the same seed and log, the same candidates are proposed as long as
** the measurements rank them the same way (test_tune.sh checks a whole
** search with times that are a function of each trace:
** MLC_TUNE_TEST_TIMES, tune_measure.c).
**
** Ranking quality.  In each round the trained model ranked, its scores
** (predicted before the measurements) are compared with the measured
** times of the batch: the summary gives the share of pairs it ordered as
** measured, how often its first pick measured fastest, and the mean speedup
** of its picks against that of the batch's one random pick.
*/
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/outfile.h"
#include "driver/driver_int.h"
#include "driver/tune_int.h"
#include "lower/tir_lower.h"

void mlc_tune_options_init(mlc_tune_options *o) {
  memset(o, 0, sizeof *o);
  o->threads = 1;
  o->seed = 1;
  o->min_ms = 5;
  o->repeats = 5;
  o->timeout_s = 10;
}

#define POOL 32    /* candidates proposed per round */
#define BATCH 8    /* measured per round, at most */
#define TOP 4      /* parents: among the best this many */

typedef struct meas {
  int ndec;
  int64_t dec[MLC_LOWER_MAX_DECISIONS];
  int ncand[MLC_LOWER_MAX_DECISIONS];
  double ms; /* < 0: failed */
} meas;

typedef struct task {
  char key[17];
  const mlc_tir_func *before; /* parsed, for its shapes */
  const char *name, *text;
  int weight;
  int index;
  double default_ms, best_ms;
  int trials, rounds, exhausted, dropped, validated;
  int new_trials;      /* measured in this run */
  int log_validated;   /* the log holds a validation of it */
  int default_changed; /* the log's default records have another trace */
  char ref[600];
  int nmeas, capmeas;
  meas *meas;
} task;

typedef struct tuner {
  const mlc_tune_options *o;
  mlc_tune_measure_opts mo;
  mlc_lower_options lo;
  char spec[512];
  const char *features;
  FILE *log;
  const char *log_path;
  mlc_tune_model *model;
  task *tasks;
  int ntasks;
  int used, target_trials, new_trials;
  double t0, deadline;
  /* how the cost model's ranking of each round's batch compared with the
  ** measurements (see rank_quality) */
  int rq_rounds, rq_top1, rq_pairs, rq_concordant, rq_nmodel, rq_nrandom;
  double rq_model_speedup, rq_random_speedup;
} tuner;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void say(const tuner *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const tuner *t, const char *fmt, ...) {
  if (!t->o->progress) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  t->o->progress(t->o->progress_user, line);
}

static void warn_line(void *user, const char *line) {
  const tuner *t = user;
  say(t, "warning: %s", line);
}

static int stopping(const tuner *t) {
  return (t->o->stop && *t->o->stop) || (t->deadline > 0 && now_s() >= t->deadline);
}

static uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x ? x : 1;
}

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s;
}

static void fmt_time(double s, char *buf, size_t n) {
  if (s < 0) s = 0;
  if (s < 60) snprintf(buf, n, "%.0fs", s);
  else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
  else snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* ---- tasks ------------------------------------------------------------------- */

static int static_shapes(const mlc_tir_func *f) {
  if (f->nscalars > 0 || f->nparams == 0) return 0;
  for (int i = 0; i < f->nparams; i++)
    for (int d = 0; d < f->params[i]->rank; d++)
      if (f->params[i]->shape[d]->kind != MLC_TIR_INT_IMM) return 0;
  return 1;
}

static int calls_of(const mlc_module *gm, const char *name) {
  int n = 0;
  for (int fi = 0; fi < gm->nfuncs; fi++) {
    const mlc_func *f = gm->funcs[fi];
    for (int bi = 0; bi < f->nblocks; bi++)
      for (int k = 0; k < f->blocks[bi].n; k++) {
        const mlc_binding *b = f->blocks[bi].bindings[k];
        n += b->kind == MLC_CALL_TIR && b->callee && !strcmp(b->callee, name);
      }
  }
  return n;
}

/* The tasks of the kernels |kn| (parsed into |src|) of |gm|. */
static mlc_status find_tasks(tuner *t, const mlc_module *gm, const mlc_tune_kernels *kn, mlc_tir_module *src) {
  t->tasks = mlc_mem_calloc((size_t)kn->n + 1, sizeof *t->tasks);
  if (!t->tasks) return mlc_oom();
  int skipped = 0;
  for (int i = 0; i < kn->n; i++) {
    mlc_tir_func *f = NULL;
    if (!kn->text[i]) continue;
    MLC_RETURN_IF_ERROR(mlc_tir_parse_func(src, kn->text[i], strlen(kn->text[i]), kn->name[i], &f));
    if (!static_shapes(f)) {
      skipped++;
      continue;
    }
    const char *key = kn->key[i];
    int w = calls_of(gm, kn->name[i]);
    if (w < 1) w = 1;
    int j = 0;
    while (j < t->ntasks && strcmp(t->tasks[j].key, key)) j++;
    if (j < t->ntasks) {
      t->tasks[j].weight += w;
      continue;
    }
    task *k = &t->tasks[t->ntasks];
    memcpy(k->key, key, sizeof k->key);
    k->before = f;
    k->name = kn->name[i];
    k->text = kn->text[i];
    k->weight = w;
    k->index = t->ntasks++;
    k->default_ms = k->best_ms = -1;
  }
  say(t, "[tune] %d tasks from %d kernels%s", t->ntasks, kn->n,
      skipped ? " (kernels of run-time shapes are not tuned)" : "");
  return NULL;
}

static mlc_status add_meas(task *k, const int64_t *dec, const int *ncand, int ndec, double ms) {
  if (k->nmeas == k->capmeas) {
    int cap = k->capmeas ? 2 * k->capmeas : 32;
    meas *p = mlc_mem_realloc(k->meas, (size_t)cap * sizeof *p);
    if (!p) return mlc_oom();
    k->meas = p;
    k->capmeas = cap;
  }
  meas *m = &k->meas[k->nmeas++];
  memset(m, 0, sizeof *m);
  m->ndec = ndec;
  for (int i = 0; i < ndec; i++) {
    m->dec[i] = dec[i];
    m->ncand[i] = ncand ? ncand[i] : MLC_LOWER_MAX_CANDIDATES;
  }
  m->ms = ms;
  if (ms > 0 && (k->best_ms < 0 || ms < k->best_ms)) k->best_ms = ms;
  return NULL;
}

/* Nonzero when the decision vectors are the same (missing ones are 0:
** the default's). */
static int same_dec(const int64_t *a, int na, const int64_t *b, int nb) {
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++)
    if ((i < na ? a[i] : 0) != (i < nb ? b[i] : 0)) return 0;
  return 1;
}

static int seen(const task *k, const int64_t *dec, int ndec) {
  for (int i = 0; i < k->nmeas; i++)
    if (same_dec(k->meas[i].dec, k->meas[i].ndec, dec, ndec)) return 1;
  return 0;
}

/* ---- candidates -------------------------------------------------------------- */

/* The candidate of |tune|'s decisions (NULL: the default) for task |k|:
** scheduled, lowered, its features.  *|out| NULL when the schedule fails. */
static mlc_status make_cand(tuner *t, const task *k, mlc_lower_tuning *tune, mlc_tune_cand **out) {
  *out = NULL;
  mlc_tune_cand *c = mlc_mem_calloc(1, sizeof *c);
  if (!c) return mlc_oom();
  mlc_lower_options lo = t->lo;
  lo.tune = tune;
  mlc_tir_func *f = NULL, *src = NULL;
  /* the task's function parsed into the candidate's module (a schedule
  ** copies a function within its module) */
  mlc_status s = mlc_tir_module_create(mlc_allocator_default(), &c->tm);
  if (!s) s = mlc_tir_parse_func(c->tm, k->text, strlen(k->text), k->name, &src);
  if (!s) s = mlc_lower_schedule_func(c->tm, src, &lo, &f, &c->trace);
  if (!s) s = mlc_tir_module_add(c->tm, f);
  if (!s) s = mlc_tir_lower_module(c->tm, NULL);
  if (!s) {
    c->fn = c->tm->funcs[0];
    s = mlc_lower_features(c->fn, c->x);
  }
  if (s) {
    mlc_drv_tune_cand_free(c);
    /* a candidate the primitives refuse is no candidate; out of memory is */
    if (mlc_status_code(s) == MLC_RESOURCE_EXHAUSTED) return s;
    mlc_status_free(s);
    return NULL;
  }
  if (tune) {
    c->ndec = tune->ndecisions;
    memcpy(c->dec, tune->decisions, (size_t)c->ndec * sizeof c->dec[0]);
  }
  c->ms = -1;
  *out = c;
  return NULL;
}

/* Appends |c|'s measurement of task |k| to the log and the model. */
static mlc_status record(tuner *t, task *k, const mlc_tune_cand *c, const int *ncand, int is_default, int validated) {
  mlc_tune_record r;
  memset(&r, 0, sizeof r);
  memcpy(r.task, k->key, sizeof r.task);
  r.target = t->spec;
  r.features = (char *)t->features;
  r.kernel = (char *)k->name;
  r.trace = c->trace;
  r.error = c->ms > 0 ? NULL : (char *)c->error;
  r.weight = k->weight;
  r.is_default = is_default;
  r.validated = validated;
  r.ndec = c->ndec;
  memcpy(r.dec, c->dec, (size_t)c->ndec * sizeof r.dec[0]);
  r.ms = c->ms;
  r.ntimes = c->ntimes;
  memcpy(r.times, c->times, (size_t)c->ntimes * sizeof r.times[0]);
  r.nx = MLC_LOWER_NFEATURES;
  memcpy(r.x, c->x, sizeof r.x);
  MLC_RETURN_IF_ERROR(mlc_drv_tune_log_write(t->log, &r));
  MLC_RETURN_IF_ERROR(add_meas(k, c->dec, ncand, c->ndec, c->ms));
  k->trials++;
  t->used++;
  if (k->default_ms > 0) MLC_RETURN_IF_ERROR(mlc_drv_tune_model_add(t->model, c->x, c->ms > 0 ? k->default_ms / c->ms : 0));
  return NULL;
}

/* ---- defaults --------------------------------------------------------------- */

static mlc_status measure_defaults(tuner *t, const mlc_tune_log *log) {
  mlc_tune_cand **cs = mlc_mem_calloc((size_t)t->ntasks + 1, sizeof *cs);
  if (!cs) return mlc_oom();
  mlc_status s = NULL;
  int n = 0;
  for (int i = 0; i < t->ntasks && !s; i++) {
    task *k = &t->tasks[i];
    snprintf(k->ref, sizeof k->ref, "%s/ref_%s.bin", t->mo.workdir, k->key);
    s = make_cand(t, k, NULL, &cs[i]);
    if (!s && !cs[i]) {
      k->dropped = 1;
      say(t, "[tune] %s: no default schedule: not tuned", k->name);
    }
  }
  mlc_tune_cand **built = mlc_mem_calloc((size_t)t->ntasks + 1, sizeof *built);
  if (!built) s = s ? s : mlc_oom();
  for (int i = 0; !s && i < t->ntasks; i++)
    if (cs[i]) built[n++] = cs[i];
  if (!s && n) {
    say(t, "[tune] building the %d default kernels", n);
    mlc_drv_tune_build(&t->mo, built, n);
  }
  for (int i = 0; !s && i < t->ntasks; i++) {
    task *k = &t->tasks[i];
    if (!cs[i]) continue;
    mlc_drv_tune_run(&t->mo, cs[i], k->ref, 1);
    if (cs[i]->ms <= 0) {
      k->dropped = 1;
      say(t, "[tune] %s: its default schedule does not run here (%s): not tuned", k->name, cs[i]->error);
      continue;
    }
    k->default_ms = cs[i]->ms;
    /* the log's records of the task */
    int had_default = 0, other_default = 0;
    for (int j = 0; j < log->n && !s; j++) {
      const mlc_tune_record *r = &log->recs[j];
      if (strcmp(r->task, k->key) || strcmp(r->target, t->spec) || strcmp(r->features, t->features)) continue;
      /* a default of an earlier version of the rules is just a candidate */
      int same = r->is_default && r->trace && cs[i]->trace && !strcmp(r->trace, cs[i]->trace);
      had_default |= same;
      other_default |= r->is_default && !same;
      k->log_validated |= r->validated;
      s = add_meas(k, r->dec, NULL, r->ndec, r->ms);
      k->trials++;
      t->used++;
      if (!s && r->nx == MLC_LOWER_NFEATURES)
        s = mlc_drv_tune_model_add(t->model, r->x, r->ms > 0 ? k->default_ms / r->ms : 0);
    }
    if (!s && other_default && !had_default) {
      k->default_changed = 1;
      say(t, "[tune] %s: the default schedule changed since the log was written: measuring it again", k->name);
    }
    if (!s && !had_default) s = record(t, k, cs[i], NULL, 1, 0);
    else if (!s && (k->best_ms < 0 || cs[i]->ms < k->best_ms)) k->best_ms = cs[i]->ms;
    if (stopping(t)) break;
  }
  for (int i = 0; i < t->ntasks; i++) mlc_drv_tune_cand_free(cs[i]);
  mlc_mem_free(cs);
  mlc_mem_free(built);
  return s;
}

/* ---- rounds ------------------------------------------------------------------ */

static int cmp_meas(const void *a, const void *b) {
  double x = ((const meas *)a)->ms, y = ((const meas *)b)->ms;
  if (x <= 0) x = 1e300;
  if (y <= 0) y = 1e300;
  return x < y ? -1 : x > y;
}

/* The task with the most to gain, or NULL. */
static task *pick_task(tuner *t) {
  task *best = NULL;
  double bv = -1;
  for (int i = 0; i < t->ntasks; i++) {
    task *k = &t->tasks[i];
    if (k->dropped || k->exhausted || k->best_ms <= 0) continue;
    double v = k->weight * k->best_ms / sqrt(1.0 + k->trials);
    if (v > bv) bv = v, best = k;
  }
  return best;
}

/*
** The cost model's ranking against the measured one, for a round whose
** batch the trained model ranked (|score| predicted before the
** measurements: out of sample).  Over the batch's successful candidates:
** pairs whose order the model got right (Kendall's concordance), whether
** its first pick measured the fastest, and the mean speedup over the
** default of the model's picks against that of the one drawn at random
** (|random_slot|, -1 when none).
*/
static void rank_quality(tuner *t, const task *k, mlc_tune_cand **batch, const double *bscore, int nb,
                         int random_slot) {
  int ok = 0, fastest = -1;
  for (int i = 0; i < nb; i++) {
    if (batch[i]->ms <= 0) continue;
    ok++;
    if (fastest < 0 || batch[i]->ms < batch[fastest]->ms) fastest = i;
    if (k->default_ms <= 0) continue;
    if (i == random_slot) {
      t->rq_random_speedup += k->default_ms / batch[i]->ms;
      t->rq_nrandom++;
    } else {
      t->rq_model_speedup += k->default_ms / batch[i]->ms;
      t->rq_nmodel++;
    }
  }
  if (ok < 2) return;
  t->rq_rounds++;
  t->rq_top1 += fastest == 0;
  for (int i = 0; i < nb; i++)
    for (int j = i + 1; j < nb; j++) {
      if (batch[i]->ms <= 0 || batch[j]->ms <= 0 || bscore[i] == bscore[j] || batch[i]->ms == batch[j]->ms) continue;
      t->rq_pairs++;
      t->rq_concordant += (bscore[i] > bscore[j]) == (batch[i]->ms < batch[j]->ms);
    }
}

static mlc_status one_round(tuner *t, task *k, int budget) {
  uint64_t rng = mix(mix(t->o->seed, (uint64_t)strtoull(k->key, NULL, 16)), (uint64_t)k->rounds + 1);
  k->rounds++;
  /* parents: the best measured */
  meas *sorted = mlc_mem_alloc((size_t)(k->nmeas ? k->nmeas : 1) * sizeof *sorted);
  if (!sorted) return mlc_oom();
  memcpy(sorted, k->meas, (size_t)k->nmeas * sizeof *sorted);
  qsort(sorted, (size_t)k->nmeas, sizeof *sorted, cmp_meas);
  int nparents = 0;
  while (nparents < k->nmeas && nparents < TOP && sorted[nparents].ms > 0) nparents++;
  mlc_tune_cand *pool[POOL];
  int ncand[POOL][MLC_LOWER_MAX_DECISIONS];
  int np = 0;
  mlc_status s = NULL;
  for (int a = 0; a < POOL * 2 && np < POOL && !s; a++) {
    mlc_lower_tuning tu;
    memset(&tu, 0, sizeof tu);
    int64_t forced[MLC_LOWER_MAX_DECISIONS];
    tu.seed = next(&rng);
    if (nparents && next(&rng) % 4 != 0) { /* a mutation */
      const meas *p = &sorted[next(&rng) % (uint64_t)nparents];
      int n = p->ndec;
      for (int i = 0; i < MLC_LOWER_MAX_DECISIONS; i++) forced[i] = i < n ? p->dec[i] : 0;
      int width = n > 0 ? n : 4; /* the default's: its decisions are all 0 */
      int changes = 1 + (next(&rng) % 3 == 0);
      for (int c = 0; c < changes; c++) {
        int pos = (int)(next(&rng) % (uint64_t)width);
        int nc = pos < n && p->ncand[pos] > 1 ? p->ncand[pos] : MLC_LOWER_MAX_CANDIDATES;
        forced[pos] = (forced[pos] + 1 + (int64_t)(next(&rng) % (uint64_t)(nc - 1))) % nc;
      }
      tu.nforced = width > n ? width : n;
      tu.forced = forced;
    }
    mlc_tune_cand *c = NULL;
    s = make_cand(t, k, &tu, &c);
    if (s || !c) continue;
    int dup = seen(k, c->dec, c->ndec);
    for (int j = 0; j < np && !dup; j++) dup = same_dec(pool[j]->dec, pool[j]->ndec, c->dec, c->ndec);
    if (dup) {
      mlc_drv_tune_cand_free(c);
      continue;
    }
    memcpy(ncand[np], tu.ncandidates, sizeof ncand[np]);
    pool[np++] = c;
  }
  mlc_mem_free(sorted);
  if (!s && np == 0) {
    k->exhausted = 1;
    say(t, "[tune] %s: no new candidates (%d measured): done", k->name, k->nmeas);
    return NULL;
  }
  /* rank: the model's best, and one drawn among the rest */
  float *x = s ? NULL : mlc_mem_alloc((size_t)np * MLC_LOWER_NFEATURES * sizeof *x);
  double score[POOL];
  int trained = 0, order[POOL];
  if (!s && !x) s = mlc_oom();
  for (int i = 0; !s && i < np; i++) memcpy(&x[i * MLC_LOWER_NFEATURES], pool[i]->x, sizeof pool[i]->x);
  if (!s) s = mlc_drv_tune_model_predict(t->model, x, np, score, &trained);
  mlc_mem_free(x);
  for (int i = 0; i < np; i++) order[i] = i;
  for (int i = 1; i < np; i++) /* by score, descending (stable) */
    for (int j = i; j > 0 && score[order[j]] > score[order[j - 1]]; j--) {
      int tmp = order[j];
      order[j] = order[j - 1];
      order[j - 1] = tmp;
    }
  int nb = budget < BATCH ? budget : BATCH;
  if (nb > np) nb = np;
  if (nb >= 2 && np > nb) { /* exploration: the last slot drawn among the rest */
    int r = nb - 1 + (int)(next(&rng) % (uint64_t)(np - nb + 1));
    int tmp = order[nb - 1];
    order[nb - 1] = order[r];
    order[r] = tmp;
  }
  mlc_tune_cand *batch[BATCH];
  double bscore[BATCH];
  for (int i = 0; i < nb; i++) batch[i] = pool[order[i]], bscore[i] = score[order[i]];
  int random_slot = nb >= 2 && np > nb ? nb - 1 : -1;
  if (!s && nb > 0 && !stopping(t)) {
    mlc_drv_tune_build(&t->mo, batch, nb);
    for (int i = 0; i < nb && !s && !(t->o->stop && *t->o->stop); i++) {
      double left = t->deadline > 0 ? t->deadline - now_s() : 1e9;
      if (left <= 0) break;
      mlc_tune_measure_opts mo = t->mo;
      if (mo.timeout_s > left + 1) mo.timeout_s = left + 1;
      mlc_drv_tune_run(&mo, batch[i], k->ref, 0);
      if (batch[i]->ms <= 0 && t->deadline > 0 && now_s() >= t->deadline) break; /* cut by the budget */
      s = record(t, k, batch[i], ncand[order[i]], 0, 0);
      k->new_trials++;
      t->new_trials++;
    }
    if (!s && trained && !(t->o->stop && *t->o->stop)) rank_quality(t, k, batch, bscore, nb, random_slot);
  }
  for (int i = 0; i < np; i++) mlc_drv_tune_cand_free(pool[i]);
  if (!s) s = mlc_drv_tune_model_fit(t->model);
  if (s) return s;
  char el[32], left[32];
  double elapsed = now_s() - t->t0;
  fmt_time(elapsed, el, sizeof el);
  if (t->deadline > 0) {
    fmt_time(t->deadline - now_s(), left, sizeof left);
  } else {
    double rate = t->new_trials > 0 ? elapsed / t->new_trials : 0;
    fmt_time(rate * (t->target_trials - t->used), left, sizeof left);
  }
  int done = 0;
  for (int i = 0; i < t->ntasks; i++) done += t->tasks[i].exhausted || t->tasks[i].dropped;
  char of[32] = "";
  if (t->target_trials < INT_MAX) snprintf(of, sizeof of, "/%d", t->target_trials);
  say(t, "[tune] %d%s trials, %d/%d tasks done | %s (x%d): %d trials, best %.4f ms (default %.4f ms, %.2fx)%s | "
      "%s elapsed, about %s left",
      t->used, of, done, t->ntasks, k->name, k->weight, k->trials, k->best_ms, k->default_ms,
      k->default_ms / k->best_ms, trained ? "" : " [model not yet trained]", el, left);
  return NULL;
}

/* ---- validation ---------------------------------------------------------------- */

#define VALIDATE_TOP 3
#define VALIDATE_ROUNDS 3

/*
** The final comparison: the best candidates of a task were each measured
** once, at different times, and the best of many noisy measurements is
** biased low.  So the default and the VALIDATE_TOP best are measured again
** side by side, in VALIDATE_ROUNDS interleaved rounds, and logged as
** validated records (the median of their rounds): compile takes its
** choice among those.
*/
static mlc_status validate(tuner *t, task *k) {
  meas *sorted = mlc_mem_alloc((size_t)(k->nmeas ? k->nmeas : 1) * sizeof *sorted);
  if (!sorted) return mlc_oom();
  memcpy(sorted, k->meas, (size_t)k->nmeas * sizeof *sorted);
  qsort(sorted, (size_t)k->nmeas, sizeof *sorted, cmp_meas);
  mlc_tune_cand *c[VALIDATE_TOP + 1];
  int nc = 0;
  mlc_status s = make_cand(t, k, NULL, &c[nc]);
  if (!s && c[nc]) nc++;
  for (int i = 0; !s && i < k->nmeas && nc < VALIDATE_TOP + 1 && nc > 0; i++) {
    const meas *m = &sorted[i];
    if (m->ms <= 0 || same_dec(m->dec, m->ndec, NULL, 0)) continue;
    int dup = 0;
    for (int j = 1; j < nc && !dup; j++) dup = same_dec(c[j]->dec, c[j]->ndec, m->dec, m->ndec);
    if (dup) continue;
    mlc_lower_tuning tu;
    memset(&tu, 0, sizeof tu);
    tu.nforced = m->ndec;
    tu.forced = m->dec;
    s = make_cand(t, k, &tu, &c[nc]);
    if (!s && c[nc]) nc++;
  }
  mlc_mem_free(sorted);
  if (!s && nc > 1) {
    double med[VALIDATE_TOP + 1][VALIDATE_ROUNDS];
    int ok[VALIDATE_TOP + 1];
    mlc_drv_tune_build(&t->mo, c, nc);
    for (int i = 0; i < nc; i++) ok[i] = c[i]->built == 1;
    for (int r = 0; r < VALIDATE_ROUNDS && !(t->o->stop && *t->o->stop); r++)
      for (int i = 0; i < nc; i++) {
        if (!ok[i]) continue;
        mlc_drv_tune_run(&t->mo, c[i], k->ref, 0);
        ok[i] = c[i]->ms > 0;
        med[i][r] = c[i]->ms;
      }
    if (!(t->o->stop && *t->o->stop)) {
      double def = -1, best = -1;
      for (int i = 0; i < nc && !s; i++) {
        if (ok[i]) {
          double v[VALIDATE_ROUNDS];
          memcpy(v, med[i], sizeof v);
          for (int a = 1; a < VALIDATE_ROUNDS; a++) /* sort */
            for (int b = a; b > 0 && v[b] < v[b - 1]; b--) {
              double tmp = v[b];
              v[b] = v[b - 1];
              v[b - 1] = tmp;
            }
          c[i]->ms = v[VALIDATE_ROUNDS / 2];
          c[i]->ntimes = VALIDATE_ROUNDS;
          memcpy(c[i]->times, med[i], sizeof med[i]);
          if (i == 0) def = c[i]->ms;
          if (best < 0 || c[i]->ms < best) best = c[i]->ms;
        } else {
          c[i]->ms = -1;
        }
        s = record(t, k, c[i], NULL, i == 0, 1);
      }
      if (!s && def > 0 && best > 0) {
        k->default_ms = def;
        k->best_ms = best;
        say(t, "[tune] %s: side by side, default %.4f ms, best %.4f ms (%.2fx)", k->name, def, best, def / best);
      }
    }
  }
  for (int i = 0; i < nc; i++) mlc_drv_tune_cand_free(c[i]);
  return s;
}

/* ---- the entry point --------------------------------------------------------- */

mlc_status mlc_tune_file(const char *onnx_path, const char *log_path, const mlc_tune_options *opts) {
  mlc_tune_options dflt;
  mlc_tune_options_init(&dflt);
  const mlc_tune_options *o = opts ? opts : &dflt;
  if (!onnx_path || !log_path) return mlc_make_status(MLC_INVALID_ARGUMENT, "no model or log path");
  if (o->trials < 0) return mlc_make_status(MLC_INVALID_ARGUMENT, "trials %d < 0", o->trials);
  if (o->threads < 0 || o->threads > 256)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "threads %d not in 1..256", o->threads);
  if (mlc_out_same_file(log_path, onnx_path))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "the log %s is the model %s: refusing to write it", log_path,
                           onnx_path);
  tuner t;
  memset(&t, 0, sizeof t);
  t.o = o;
  t.log_path = log_path;
  t.t0 = now_s();
  t.deadline = o->budget_s > 0 ? t.t0 + o->budget_s : 0;
  mlc_target *target = NULL;
  mlc_module *gm = NULL;
  mlc_tune_kernels kn;
  memset(&kn, 0, sizeof kn);
  mlc_tir_module *src = NULL;
  mlc_tune_log log;
  memset(&log, 0, sizeof log);
  char workdir[4096] = "";
  mlc_status s = o->target && *o->target && strcmp(o->target, "llvm") != 0 ? mlc_target_parse(o->target, &target)
                                                                          : mlc_target_host(&target);
  if (!s && target->device != MLC_TARGET_CPU)
    s = mlc_make_status(MLC_UNIMPLEMENTED, "tune: only CPU targets (llvm) are tuned, not %s", target->spec);
  if (!s) s = mlc_out_check(log_path);
  if (s) goto done;
  mlc_drv_tune_target_key(target, t.spec, sizeof t.spec, &t.features);
  if ((s = mlc_drv_tune_log_read(log_path, &log, warn_line, &t))) goto done;
  {
    mlc_compile_options co;
    mlc_compile_options_init(&co);
    co.target = o->target;
    if ((s = mlc_drv_lower_model(onnx_path, &co, target, &gm, &kn))) goto done;
  }
  t.lo.num_threads = o->threads > 0 ? o->threads : 1;
  t.lo.vector_bits = (int)target->vector_bits;
  if ((s = mlc_tir_module_create(mlc_allocator_default(), &src))) goto done;
  if ((s = find_tasks(&t, gm, &kn, src))) goto done;
  {
    const char *tmp = getenv("TMPDIR");
    snprintf(workdir, sizeof workdir, "%s/mlc-tune-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(workdir)) {
      s = mlc_make_status(MLC_IO_ERROR, "cannot create a temporary directory: %s", strerror(errno));
      workdir[0] = 0;
      goto done;
    }
  }
  t.mo.target = target;
  t.mo.workdir = workdir;
  {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    t.mo.jobs = o->jobs > 0 ? o->jobs : ncpu > 0 ? (int)ncpu : 1;
  }
  t.mo.threads = o->threads > 0 ? o->threads : 1;
  t.mo.min_ms = o->min_ms > 0 ? o->min_ms : 5;
  t.mo.repeats = o->repeats > 0 && o->repeats <= MLC_TUNE_MAX_TIMES ? o->repeats : 5;
  t.mo.timeout_s = o->timeout_s > 0 ? o->timeout_s : 10;
  if ((s = mlc_drv_tune_model_create(o->seed, &t.model))) goto done;
  t.log = fopen(log_path, "a");
  if (!t.log) {
    s = mlc_make_status(MLC_IO_ERROR, "cannot write the tuning log %s: %s", log_path, strerror(errno));
    goto done;
  }
  say(&t, "[tune] target %s; ranking: %s; %d thread%s per kernel; log %s (%d records read)", t.spec,
      mlc_drv_tune_model_kind(), t.mo.threads, t.mo.threads > 1 ? "s" : "", log_path, log.n);
  if ((s = measure_defaults(&t, &log))) goto done;
  int live = 0;
  for (int i = 0; i < t.ntasks; i++) live += !t.tasks[i].dropped;
  /* a budget without a number of trials: as many as it allows */
  t.target_trials = o->trials > 0 ? o->trials : o->budget_s > 0 ? INT_MAX : 32 * (live > 0 ? live : 1);
  if (t.used >= t.target_trials)
    say(&t, "[tune] the log already holds %d trials of these tasks (of %d asked): nothing to do", t.used,
        t.target_trials);
  if (!s) s = mlc_drv_tune_model_fit(t.model);
  /* the search leaves a tenth of the budget to the validation */
  double end = t.deadline;
  if (t.deadline > 0) t.deadline = t.t0 + 0.9 * o->budget_s;
  while (!s && t.used < t.target_trials && !stopping(&t)) {
    task *k = pick_task(&t);
    if (!k) break;
    s = one_round(&t, k, t.target_trials - t.used);
  }
  t.deadline = end;
  /* validation of the tasks a candidate seemed to speed up, those that
  ** weigh most first */
  for (int pass = 0; !s && pass < t.ntasks && !stopping(&t); pass++) {
    task *k = NULL;
    for (int i = 0; i < t.ntasks; i++) {
      task *q = &t.tasks[i];
      /* a default that changed since the log was written is compared with
      ** the log's best even when it measured faster than them: they were
      ** measured at another time */
      if (q->dropped || q->validated || q->best_ms <= 0 || (q->best_ms >= q->default_ms && !q->default_changed))
        continue;
      if (q->log_validated && q->new_trials == 0 && !q->default_changed) continue; /* nothing new since */
      if (!k || q->weight * q->default_ms > k->weight * k->default_ms) k = q;
    }
    if (!k) break;
    k->validated = 1;
    s = validate(&t, k);
  }
  if (s) goto done;
  /* the summary */
  {
    double before = 0, after = 0;
    for (int i = 0; i < t.ntasks; i++) {
      const task *k = &t.tasks[i];
      if (k->dropped || k->default_ms <= 0) continue;
      before += k->weight * k->default_ms;
      after += k->weight * (k->best_ms > 0 ? k->best_ms : k->default_ms);
      say(&t, "[tune]   %-40s x%-3d %4d trials  default %.4f ms  best %.4f ms  %.2fx", k->name, k->weight, k->trials,
          k->default_ms, k->best_ms, k->default_ms / k->best_ms);
    }
    char el[32];
    fmt_time(now_s() - t.t0, el, sizeof el);
    const char *why = o->stop && *o->stop ? " (interrupted)" : t.deadline > 0 && now_s() >= t.deadline ? " (budget spent)" : "";
    if (t.rq_rounds > 0) {
      say(&t,
          "[tune] cost model against the measurements, over the %d rounds it ranked: %.0f%% of %d pairs in the "
          "measured order; its first pick the fastest in %d (%.0f%%)",
          t.rq_rounds, t.rq_pairs ? 100.0 * t.rq_concordant / t.rq_pairs : 0.0, t.rq_pairs, t.rq_top1,
          100.0 * t.rq_top1 / t.rq_rounds);
      if (t.rq_nmodel > 0 && t.rq_nrandom > 0)
        say(&t, "[tune] its picks ran at %.2fx the default on average (%d), the random picks at %.2fx (%d)",
            t.rq_model_speedup / t.rq_nmodel, t.rq_nmodel, t.rq_random_speedup / t.rq_nrandom, t.rq_nrandom);
    } else {
      say(&t, "[tune] the cost model ranked no round (too few measurements to train it)");
    }
    say(&t, "[tune] done%s: %d trials (%d new) in %s; the kernels' time per run %.3f ms -> %.3f ms (%.2fx); log %s", why,
        t.used, t.new_trials, el, before, after, after > 0 ? before / after : 1.0, log_path);
  }
done:
  if (t.log && fclose(t.log) && !s)
    s = mlc_make_status(MLC_IO_ERROR, "cannot write the tuning log %s: %s", log_path, strerror(errno));
  for (int i = 0; i < t.ntasks; i++) {
    if (t.tasks[i].ref[0]) unlink(t.tasks[i].ref);
    mlc_mem_free(t.tasks[i].meas);
  }
  if (workdir[0]) rmdir(workdir); /* its files went as they were used */
  mlc_mem_free(t.tasks);
  mlc_drv_tune_model_destroy(t.model);
  mlc_drv_tune_log_fini(&log);
  mlc_drv_tune_kernels_fini(&kn);
  mlc_tir_module_destroy(src);
  mlc_module_destroy(gm);
  mlc_target_destroy(target);
  return s ? mlc_status_annotate(s, "tune") : NULL;
}
