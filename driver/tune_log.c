/*
** tune_log.c: the tuning log, JSON lines read and written with jansson
** (the record format is in tune_int.h).
*/
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "driver/driver_int.h"
#include "driver/tune_int.h"

void mlc_drv_tune_target_key(const mlc_target *t, char *spec, size_t n, const char **features) {
  if (t->device != MLC_TARGET_CPU || strstr(t->spec, "-mcpu=") || !t->cpu || !*t->cpu)
    snprintf(spec, n, "%s", t->spec);
  else
    snprintf(spec, n, "%s -mcpu=%s", t->spec, t->cpu);
  *features = t->features ? t->features : "";
}

void mlc_drv_tune_record_fini(mlc_tune_record *r) {
  mlc_mem_free(r->target);
  mlc_mem_free(r->features);
  mlc_mem_free(r->kernel);
  mlc_mem_free(r->trace);
  mlc_mem_free(r->error);
  memset(r, 0, sizeof *r);
}

void mlc_drv_tune_log_fini(mlc_tune_log *log) {
  for (int i = 0; i < log->n; i++) mlc_drv_tune_record_fini(&log->recs[i]);
  mlc_mem_free(log->recs);
  memset(log, 0, sizeof *log);
}

static char *dup_or_null(const char *s) { return s ? mlc_mem_strdup(s) : NULL; }

mlc_status mlc_drv_tune_log_add(mlc_tune_log *log, const mlc_tune_record *r) {
  if (log->n == log->cap) {
    int cap = log->cap ? 2 * log->cap : 64;
    mlc_tune_record *p = mlc_mem_realloc(log->recs, (size_t)cap * sizeof *p);
    if (!p) return mlc_oom();
    log->recs = p;
    log->cap = cap;
  }
  mlc_tune_record *d = &log->recs[log->n];
  *d = *r;
  d->target = dup_or_null(r->target);
  d->features = dup_or_null(r->features);
  d->kernel = dup_or_null(r->kernel);
  d->trace = dup_or_null(r->trace);
  d->error = dup_or_null(r->error);
  if ((r->target && !d->target) || (r->features && !d->features) || (r->kernel && !d->kernel) ||
      (r->trace && !d->trace) || (r->error && !d->error)) {
    mlc_drv_tune_record_fini(d);
    return mlc_oom();
  }
  log->n++;
  return NULL;
}

/* The record of the JSON object |o| into |r|; NULL, or why not (static). */
static const char *parse_record(json_t *o, mlc_tune_record *r) {
  memset(r, 0, sizeof *r);
  if (!json_is_object(o)) return "not a JSON object";
  json_t *v = json_object_get(o, "v");
  if (!json_is_integer(v)) return "no version field \"v\"";
  if (json_integer_value(v) != MLC_TUNE_LOG_VERSION) return "a record of another log version";
  const char *task = json_string_value(json_object_get(o, "task"));
  const char *target = json_string_value(json_object_get(o, "target"));
  const char *features = json_string_value(json_object_get(o, "features"));
  const char *trace = json_string_value(json_object_get(o, "trace"));
  if (!task || strlen(task) != 16 || strspn(task, "0123456789abcdef") != 16) return "no task hash \"task\"";
  if (!target || !features) return "no \"target\" or \"features\"";
  if (!trace) return "no \"trace\"";
  snprintf(r->task, sizeof r->task, "%s", task);
  json_t *ms = json_object_get(o, "ms");
  if (json_is_number(ms)) {
    r->ms = json_number_value(ms);
    if (!(r->ms > 0)) return "\"ms\" is not a positive time";
  } else if (json_is_null(ms)) {
    r->ms = -1;
  } else {
    return "no time \"ms\" (a number, or null for a failed candidate)";
  }
  json_t *w = json_object_get(o, "weight");
  r->weight = json_is_integer(w) && json_integer_value(w) > 0 && json_integer_value(w) < (1 << 30)
                  ? (int)json_integer_value(w) : 1;
  r->is_default = json_is_true(json_object_get(o, "default"));
  r->validated = json_is_true(json_object_get(o, "validated"));
  json_t *dec = json_object_get(o, "decisions");
  if (dec && !json_is_array(dec)) return "\"decisions\" is not a list";
  if (json_array_size(dec) > MLC_LOWER_MAX_DECISIONS) return "too many decisions";
  for (size_t i = 0; i < json_array_size(dec); i++) {
    json_t *d = json_array_get(dec, i);
    if (!json_is_integer(d) || json_integer_value(d) < 0 || json_integer_value(d) >= MLC_LOWER_MAX_CANDIDATES)
      return "a decision is not a candidate index";
    r->dec[r->ndec++] = json_integer_value(d);
  }
  json_t *ts = json_object_get(o, "times_ms");
  for (size_t i = 0; json_is_array(ts) && i < json_array_size(ts) && r->ntimes < MLC_TUNE_MAX_TIMES; i++)
    if (json_is_number(json_array_get(ts, i))) r->times[r->ntimes++] = json_number_value(json_array_get(ts, i));
  json_t *x = json_object_get(o, "x");
  if (json_is_array(x) && json_array_size(x) == MLC_LOWER_NFEATURES) {
    for (size_t i = 0; i < MLC_LOWER_NFEATURES; i++) r->x[i] = (float)json_number_value(json_array_get(x, i));
    r->nx = MLC_LOWER_NFEATURES;
  }
  const char *kernel = json_string_value(json_object_get(o, "kernel"));
  const char *error = json_string_value(json_object_get(o, "error"));
  r->target = mlc_mem_strdup(target);
  r->features = mlc_mem_strdup(features);
  r->trace = mlc_mem_strdup(trace);
  r->kernel = dup_or_null(kernel);
  r->error = dup_or_null(error);
  if (!r->target || !r->features || !r->trace || (kernel && !r->kernel) || (error && !r->error)) {
    mlc_drv_tune_record_fini(r);
    return "out of memory";
  }
  return NULL;
}

mlc_status mlc_drv_tune_log_read(const char *path, mlc_tune_log *log, void (*warn)(void *user, const char *line),
                                 void *user) {
  memset(log, 0, sizeof *log);
  FILE *f = fopen(path, "r");
  if (!f) {
    if (errno == ENOENT) return NULL;
    return mlc_make_status(MLC_IO_ERROR, "cannot read the tuning log %s: %s", path, strerror(errno));
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int lineno = 0;
  mlc_status s = NULL;
  while (!s && (len = getline(&line, &cap, f)) >= 0) {
    lineno++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
    if (len == 0) continue;
    json_error_t err;
    json_t *o = json_loadb(line, (size_t)len, 0, &err);
    const char *why = NULL;
    char msg[600];
    mlc_tune_record r;
    memset(&r, 0, sizeof r);
    if (!o) {
      snprintf(msg, sizeof msg, "%s:%d: skipped: not JSON (%s, column %d)", path, lineno, err.text, err.column);
    } else if ((why = parse_record(o, &r))) {
      snprintf(msg, sizeof msg, "%s:%d: skipped: %s", path, lineno, why);
    } else {
      s = mlc_drv_tune_log_add(log, &r);
      mlc_drv_tune_record_fini(&r);
      msg[0] = 0;
    }
    json_decref(o);
    if (msg[0] && warn) warn(user, msg);
  }
  free(line);
  fclose(f);
  if (s) mlc_drv_tune_log_fini(log);
  return s;
}

mlc_status mlc_drv_tune_log_write(FILE *f, const mlc_tune_record *r) {
  json_t *o = json_object();
  if (!o) return mlc_oom();
  json_t *dec = json_array(), *ts = json_array(), *x = json_array();
  int bad = !dec || !ts || !x;
  for (int i = 0; !bad && i < r->ndec; i++) bad |= json_array_append_new(dec, json_integer(r->dec[i]));
  for (int i = 0; !bad && i < r->ntimes; i++) bad |= json_array_append_new(ts, json_real(r->times[i]));
  for (int i = 0; !bad && i < r->nx; i++) bad |= json_array_append_new(x, json_real(r->x[i]));
  bad = bad || json_object_set_new(o, "v", json_integer(MLC_TUNE_LOG_VERSION)) ||
        json_object_set_new(o, "task", json_string(r->task)) ||
        json_object_set_new(o, "target", json_string(r->target ? r->target : "")) ||
        json_object_set_new(o, "features", json_string(r->features ? r->features : "")) ||
        json_object_set_new(o, "kernel", r->kernel ? json_string(r->kernel) : json_null()) ||
        json_object_set_new(o, "weight", json_integer(r->weight)) ||
        json_object_set_new(o, "default", json_boolean(r->is_default)) ||
        json_object_set_new(o, "decisions", dec) ||
        json_object_set_new(o, "trace", json_string(r->trace ? r->trace : "")) ||
        json_object_set_new(o, "ms", r->ms > 0 ? json_real(r->ms) : json_null()) ||
        json_object_set_new(o, "times_ms", ts) || json_object_set_new(o, "x", x) ||
        json_object_set_new(o, "error", r->error ? json_string(r->error) : json_null()) ||
        json_object_set_new(o, "validated", json_boolean(r->validated));
  char *text = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(7));
  json_decref(o);
  if (!text) return mlc_oom();
  int ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF && fflush(f) == 0;
  free(text);
  return ok ? NULL : mlc_make_status(MLC_IO_ERROR, "cannot write the tuning log: %s", strerror(errno));
}

const mlc_tune_record *mlc_drv_tune_log_best(const mlc_tune_log *log, const char *task, const char *target,
                                             const char *features) {
  const mlc_tune_record *best = NULL;
  int validated = 0, from = 0;
  for (int i = 0; i < log->n; i++) {
    const mlc_tune_record *r = &log->recs[i];
    if (strcmp(r->task, task) || strcmp(r->target, target) || strcmp(r->features, features)) continue;
    validated |= r->validated && r->ms > 0;
    if (r->validated && r->is_default) from = i; /* the last validation starts with its default */
  }
  for (int i = validated ? from : 0; i < log->n; i++) {
    const mlc_tune_record *r = &log->recs[i];
    if (r->ms <= 0 || (validated && !r->validated) || strcmp(r->task, task) || strcmp(r->target, target) ||
        strcmp(r->features, features))
      continue;
    if (!best || r->ms < best->ms) best = r;
  }
  return best;
}
