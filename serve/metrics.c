/*
** metrics.c: what GET /metrics shows, per served model, in Prometheus'
** text exposition format (version 0.0.4):
**
**   mlc_requests_total{model,code}           counter: answered requests by status
**   mlc_request_duration_seconds{model}      histogram: first byte to answer
**   mlc_inference_duration_seconds{model}    summary (sum, count): time in runs
**   mlc_batched_requests_total{model}        counter: requests that shared a run
**   mlc_queue_depth{model}, mlc_running{model}, mlc_model_ready{model}   gauges
**
** Requests for no model (health, server metadata, unknown paths) count
** under model="".
*/
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"

const int srv_codes[SRV_NCODES] = {200, 400, 404, 405, 408, 413, 500, 503, 0, 0};

/* Upper bounds of the latency buckets, in seconds (+Inf follows). */
static const double bounds[SRV_NBUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                            0.1,    0.25,  0.5,    1,     2.5,  5,    10};

void srv_metrics_init(srv_metrics *m) {
  memset(m, 0, sizeof *m);
  pthread_mutex_init(&m->mu, NULL);
}

void srv_metrics_fini(srv_metrics *m) { pthread_mutex_destroy(&m->mu); }

void srv_metrics_request(srv_metrics *m, int status, double seconds) {
  int k = SRV_NCODES - 1;
  for (int i = 0; i < SRV_NCODES - 1; i++)
    if (srv_codes[i] == status) {
      k = i;
      break;
    }
  int b = 0;
  while (b < SRV_NBUCKETS && seconds > bounds[b]) b++;
  pthread_mutex_lock(&m->mu);
  m->requests[k]++;
  m->lat_bucket[b]++;
  m->lat_sum += seconds;
  m->lat_count++;
  pthread_mutex_unlock(&m->mu);
}

void srv_metrics_infer(srv_metrics *m, int nreq, double seconds) {
  pthread_mutex_lock(&m->mu);
  m->infer_sum += seconds;
  m->infer_count++;
  if (nreq > 1) m->batched_requests += (uint64_t)nreq;
  pthread_mutex_unlock(&m->mu);
}

/* A label value: backslash, quote and newline escaped. */
static void label(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '\\' || *s == '"') fputc('\\', f), fputc(*s, f);
    else if (*s == '\n') fputs("\\n", f);
    else fputc(*s, f);
  }
}

typedef struct snap {
  srv_metrics c;
  const srv_metrics_row *r;
} snap;

static void head(FILE *f, const char *name, const char *type, const char *help) {
  fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void lbl(FILE *f, const char *metric, const char *model) {
  fputs(metric, f);
  fputs("{model=\"", f);
  label(f, model);
  fputc('"', f);
}

void srv_metrics_print(FILE *f, const srv_metrics_row *rows, int n) {
  snap *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
  if (!s) return;
  for (int k = 0; k < n; k++) {
    pthread_mutex_lock(&rows[k].m->mu);
    s[k].c = *rows[k].m;
    pthread_mutex_unlock(&rows[k].m->mu);
    s[k].r = &rows[k];
  }
  head(f, "mlc_requests_total", "counter", "Answered HTTP requests by model and status.");
  for (int k = 0; k < n; k++)
    for (int i = 0; i < SRV_NCODES; i++) {
      if (!s[k].c.requests[i]) continue;
      lbl(f, "mlc_requests_total", s[k].r->model);
      if (srv_codes[i]) fprintf(f, ",code=\"%d\"} %llu\n", srv_codes[i], (unsigned long long)s[k].c.requests[i]);
      else fprintf(f, ",code=\"other\"} %llu\n", (unsigned long long)s[k].c.requests[i]);
    }
  head(f, "mlc_request_duration_seconds", "histogram", "Time from a request's arrival to its answer.");
  for (int k = 0; k < n; k++) {
    uint64_t cum = 0;
    for (int b = 0; b <= SRV_NBUCKETS; b++) {
      cum += s[k].c.lat_bucket[b];
      lbl(f, "mlc_request_duration_seconds_bucket", s[k].r->model);
      if (b < SRV_NBUCKETS) fprintf(f, ",le=\"%g\"} %llu\n", bounds[b], (unsigned long long)cum);
      else fprintf(f, ",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    }
    lbl(f, "mlc_request_duration_seconds_sum", s[k].r->model);
    fprintf(f, "} %.6f\n", s[k].c.lat_sum);
    lbl(f, "mlc_request_duration_seconds_count", s[k].r->model);
    fprintf(f, "} %llu\n", (unsigned long long)s[k].c.lat_count);
  }
  head(f, "mlc_inference_duration_seconds", "summary", "Time spent in the model's runs.");
  for (int k = 0; k < n; k++) {
    if (!s[k].r->is_model) continue;
    lbl(f, "mlc_inference_duration_seconds_sum", s[k].r->model);
    fprintf(f, "} %.6f\n", s[k].c.infer_sum);
    lbl(f, "mlc_inference_duration_seconds_count", s[k].r->model);
    fprintf(f, "} %llu\n", (unsigned long long)s[k].c.infer_count);
  }
  head(f, "mlc_batched_requests_total", "counter", "Requests that shared a run with others (--max-batch).");
  for (int k = 0; k < n; k++)
    if (s[k].r->is_model) {
      lbl(f, "mlc_batched_requests_total", s[k].r->model);
      fprintf(f, "} %llu\n", (unsigned long long)s[k].c.batched_requests);
    }
  head(f, "mlc_queue_depth", "gauge", "Requests waiting for a session.");
  for (int k = 0; k < n; k++)
    if (s[k].r->is_model) {
      lbl(f, "mlc_queue_depth", s[k].r->model);
      fprintf(f, "} %d\n", s[k].r->queue);
    }
  head(f, "mlc_running", "gauge", "Requests being run.");
  for (int k = 0; k < n; k++)
    if (s[k].r->is_model) {
      lbl(f, "mlc_running", s[k].r->model);
      fprintf(f, "} %d\n", s[k].r->running);
    }
  head(f, "mlc_model_ready", "gauge", "1 when the model is loaded and taking requests.");
  for (int k = 0; k < n; k++)
    if (s[k].r->is_model) {
      lbl(f, "mlc_model_ready", s[k].r->model);
      fprintf(f, "} %d\n", s[k].r->ready);
    }
  free(s);
}
