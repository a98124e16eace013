/*
** server.c: `mlc-serve` (and `mlc-onnx serve`), the Open Inference
** Protocol (KServe v2 REST) over HTTP/1.1, on libmicrohttpd.
**
** Endpoints:
**   GET  /v2/health/live, /v2/health/ready     liveness; ready = loaded, not draining
**   GET  /v2                                   server metadata
**   GET  /v2/models/{name}[/versions/1]        model metadata (-1 for symbolic dims)
**   GET  /v2/models/{name}[/versions/1]/ready
**   POST /v2/models/{name}[/versions/1]/infer  JSON, or JSON + binary tensors
**   POST /v2/repository/index                  the served models and their state
**   POST /v2/repository/models/{name}/load     reload the model's file (atomic swap)
**   POST /v2/repository/models/{name}/unload
**   GET  /metrics                              Prometheus text format
**
** libmicrohttpd's threads (--http-threads, each polling its share of the
** connections) run the handler.  A
** request's body is gathered (up to --max-body, else 413; a body still
** arriving after --timeout seconds is a 408), parsed and checked against
** the model (infer.c), queued on the model's current instance (pool.c;
** a full queue is a 503) and its connection suspended; the worker that
** runs it resumes the connection, and the handler, called again, sends
** the answer.  The main thread only waits for signals: SIGHUP reloads every
** model, SIGTERM and SIGINT stop accepting connections, wait for the
** requests in flight (up to --drain-timeout) and exit 0.
*/
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "serve/serve_int.h"

#ifndef PROG
#define PROG "mlc-serve"
#endif

const char serve_help[] =
    "usage: " PROG " MODEL.so|NAME=MODEL.so ... [--host ADDR] [--port N] [--sessions K]\n"
    "       [--threads T] [--max-queue Q] [--max-batch B] [--max-body BYTES] [--timeout S]\n"
    "       [--drain-timeout S] [--max-connections C] [--http-threads N]\n"
    "       [--access-log FILE|-|off]\n"
    "\n"
    "Serves compiled models over HTTP with the Open Inference Protocol (KServe v2\n"
    "REST, as Triton and MLServer speak it), so its clients, KServe and any load\n"
    "balancer that speaks the protocol work unchanged.  A model is served under\n"
    "the name of its file without \".so\" (or NAME=): /v2/models/NAME/infer.\n"
    "Needs the model loader, libmicrohttpd and jansson only: no compiler.\n"
    "\n"
    "Endpoints: GET /v2/health/live, /v2/health/ready, /v2, /v2/models/NAME,\n"
    "/v2/models/NAME/ready, /metrics (Prometheus); POST /v2/models/NAME/infer\n"
    "(JSON tensors, or the binary tensor extension: Inference-Header-Content-Length),\n"
    "/v2/repository/index, /v2/repository/models/NAME/load (reload the file)\n"
    "and /unload.  Errors are {\"error\": \"...\"} with 400 (bad request), 404\n"
    "(unknown model or path), 405, 408 (body too slow), 413 (body too large),\n"
    "500 (the model failed) or 503 (queue full, model not loaded).\n"
    "\n"
    "Options:\n"
    "  --host ADDR          address to listen on (default 127.0.0.1; 0.0.0.0 or ::\n"
    "                       for every interface)\n"
    "  --port N             port (default 8000; 0 picks a free one); the line\n"
    "                       \"" PROG ": listening on http://ADDR:PORT\" on standard\n"
    "                       output says where, once connections are accepted\n"
    "  --sessions K         sessions per model, each run by its own worker: up to K\n"
    "                       requests of a model run at once (default 1)\n"
    "  --threads T          threads of each session (default 0: one per CPU)\n"
    "  --max-queue Q        requests of a model waiting for a session before more\n"
    "                       are refused with 503 (default 64)\n"
    "  --max-batch B        a worker runs up to B rows of queued requests as one\n"
    "                       batch when every input and output of the model has the\n"
    "                       same symbolic first dimension (default 1: no batching)\n"
    "  --max-body BYTES     largest request body, suffixes K, M, G (default 64M)\n"
    "  --timeout S          a connection idle for S seconds is closed, a body still\n"
    "                       arriving after S seconds is answered 408 (default 30)\n"
    "  --drain-timeout S    on SIGTERM, how long to wait for requests in flight\n"
    "                       (default 30)\n"
    "  --max-connections C  open connections before new ones are refused (default 256)\n"
    "  --http-threads N     threads that read requests and parse their JSON (default:\n"
    "                       one per CPU, at most 4)\n"
    "  --access-log DEST    one JSON line per request: - standard error (default),\n"
    "                       off, or a file appended to\n"
    "  -h, --help           show this help and exit\n"
    "\n"
    "Signals: SIGHUP reloads every model from its file (replace the file by\n"
    "renaming a new one over it; a file that fails to load leaves the old model\n"
    "serving); SIGTERM or SIGINT stops accepting connections, finishes the\n"
    "requests in flight and exits 0.\n"
    "\n"
    "Exit status: 0 after a drain, 1 a model that does not load or a port that\n"
    "cannot be bound, 2 bad usage.\n";

typedef struct server {
  srv_config cfg;
  srv_model *models;
  int nmodels;
  srv_metrics other; /* requests that name no model */
  struct MHD_Daemon *d;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int in_flight;
  int draining;
  FILE *log;
  pthread_mutex_t log_mu;
} server;

static server S;

typedef struct req {
  double t0;
  struct MHD_Connection *conn;
  char method[8];
  char *path;
  char *body;
  size_t len, cap;
  int answered;       /* a response is queued */
  int early;          /* answered before the body ended: the rest is dropped */
  int too_large;      /* the body passed --max-body: the rest is dropped */
  size_t dropped;
  int waiting;        /* suspended, waiting for a worker or a reload */
  int ready;          /* the worker (or reload) is done: |resp| or the job's */
  srv_job *job;
  srv_model *slot;    /* the model it names, if any */
  srv_response resp;
  int status;
  size_t out_bytes;
  char *error;
  char *id;
} req;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- answers ------------------------------------------------------------ */

static enum MHD_Result send_response(req *r, srv_response *resp, const char *ctype) {
  struct MHD_Response *mr = MHD_create_response_from_buffer(resp->len, resp->body, MHD_RESPMEM_MUST_FREE);
  if (!mr) return MHD_NO;
  resp->body = NULL;
  if (!ctype) ctype = resp->header_len ? "application/octet-stream" : "application/json";
  MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
  if (resp->header_len) {
    char n[32];
    snprintf(n, sizeof n, "%zu", resp->header_len);
    MHD_add_response_header(mr, "Inference-Header-Content-Length", n);
  }
  if (resp->status == 405) MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW, r->slot ? "GET, POST" : "GET");
  pthread_mutex_lock(&S.mu);
  int draining = S.draining;
  pthread_mutex_unlock(&S.mu);
  if (draining || r->early) MHD_add_response_header(mr, MHD_HTTP_HEADER_CONNECTION, "close");
  r->status = resp->status;
  r->out_bytes = resp->len;
  free(r->error);
  r->error = resp->error;
  resp->error = NULL;
  r->answered = 1;
  enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)resp->status, mr);
  MHD_destroy_response(mr);
  return ret;
}

static enum MHD_Result send_error(req *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static enum MHD_Result send_error(req *r, int status, const char *fmt, ...) {
  srv_response resp = {0};
  va_list ap;
  va_start(ap, fmt);
  srv_response_verror(&resp, status, fmt, ap);
  va_end(ap);
  return send_response(r, &resp, NULL);
}

static enum MHD_Result send_json(req *r, int status, json_t *j) {
  srv_response resp = {0};
  srv_response_json(&resp, status, j);
  return send_response(r, &resp, NULL);
}

/* Answers |status| on the socket itself and closes the connection: for a
** body that is still arriving (a slow client), which libmicrohttpd lets no
** handler answer.  Nothing else has been sent on the connection then (an
** interim "100 Continue" at most), and the answer is short enough for the
** socket's buffer. */
static enum MHD_Result abort_with(req *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static enum MHD_Result abort_with(req *r, int status, const char *fmt, ...) {
  srv_response resp = {0};
  va_list ap;
  va_start(ap, fmt);
  srv_response_verror(&resp, status, fmt, ap);
  va_end(ap);
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (ci && resp.body) {
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                      "Connection: close\r\n\r\n",
                      status, status == 408 ? "Request Timeout" : "Content Too Large", resp.len);
    if (send(ci->connect_fd, head, (size_t)hl, MSG_NOSIGNAL | MSG_DONTWAIT) == hl)
      (void)!send(ci->connect_fd, resp.body, resp.len, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  r->status = status;
  r->out_bytes = resp.len;
  free(r->error);
  r->error = resp.error;
  resp.error = NULL;
  free(resp.body);
  r->answered = 1;
  return MHD_NO;
}

/* ---- routes ------------------------------------------------------------- */

static srv_model *find_model(const char *name, size_t n) {
  for (int i = 0; i < S.nmodels; i++)
    if (strlen(S.models[i].name) == n && memcmp(S.models[i].name, name, n) == 0) return &S.models[i];
  return NULL;
}

static void job_done(srv_job *job) {
  req *r = job->done_arg;
  r->ready = 1;
  MHD_resume_connection(r->conn);
}

static enum MHD_Result infer(req *r) {
  srv_model *slot = r->slot;
  long long hl = 0;
  const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Inference-Header-Content-Length");
  if (h) {
    char *end;
    errno = 0;
    hl = strtoll(h, &end, 10);
    if (errno || end == h || *end || hl < 0) hl = -1;
  }
  /* Suspended before the job is queued, so that a worker quick enough to
  ** finish it first still finds the connection suspended to resume. */
  MHD_suspend_connection(r->conn);
  r->waiting = 1;
  for (int tries = 0;; tries++) {
    srv_instance *in = srv_model_acquire(slot);
    if (!in) {
      srv_response_error(&r->resp, 503, "model \"%s\" is not loaded", slot->name);
      break;
    }
    srv_job *job = srv_infer_parse(in->model, r->body, r->len, hl, &r->resp);
    if (!job) {
      srv_instance_release(in);
      break;
    }
    job->done = job_done;
    job->done_arg = r;
    r->job = job;
    int rc = srv_instance_submit(in, job);
    srv_instance_release(in);
    if (rc == 0) return MHD_YES; /* the worker resumes the connection */
    r->job = NULL;
    srv_job_free(job);
    if (rc == 503) {
      srv_response_error(&r->resp, 503, "model \"%s\": %d requests are queued already; try again later",
                         slot->name, S.cfg.max_queue);
      break;
    }
    if (tries == 3) { /* reloaded under us again and again */
      srv_response_error(&r->resp, 503, "model \"%s\" is being reloaded; try again", slot->name);
      break;
    }
  }
  r->ready = 1;
  MHD_resume_connection(r->conn);
  return MHD_YES;
}

typedef struct reload_task {
  req *r;
  int unload;
} reload_task;

static void *reload_main(void *arg) {
  reload_task *t = arg;
  req *r = t->r;
  if (t->unload) {
    srv_model_close(r->slot);
    srv_response_json(&r->resp, 200, json_pack("{s:s,s:b}", "name", r->slot->name, "ready", 0));
  } else {
    char err[1024];
    if (srv_model_reload(r->slot, &S.cfg, err, sizeof err) == 0) {
      fprintf(stderr, PROG ": reloaded model \"%s\" from %s\n", r->slot->name, r->slot->path);
      srv_response_json(&r->resp, 200, json_pack("{s:s,s:b}", "name", r->slot->name, "ready", 1));
    } else {
      fprintf(stderr, PROG ": model \"%s\" not reloaded: %s\n", r->slot->name, err);
      srv_response_error(&r->resp, 500, "model \"%s\" not reloaded (the loaded one keeps serving): %s",
                         r->slot->name, err);
    }
  }
  free(t);
  r->ready = 1;
  MHD_resume_connection(r->conn);
  return NULL;
}

/* Load or unload on a thread of its own, the connection suspended meanwhile:
** loading a large model must not stall the other connections. */
static enum MHD_Result repository_load(req *r, int unload) {
  reload_task *t = malloc(sizeof *t);
  pthread_t th;
  pthread_attr_t attr;
  if (!t) return send_error(r, 500, "out of memory");
  t->r = r;
  t->unload = unload;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  MHD_suspend_connection(r->conn);
  r->waiting = 1;
  if (pthread_create(&th, &attr, reload_main, t) != 0) {
    free(t);
    srv_response_error(&r->resp, 500, "cannot start a thread to load the model");
    r->ready = 1;
    MHD_resume_connection(r->conn);
  }
  pthread_attr_destroy(&attr);
  return MHD_YES;
}

static int model_ready(srv_model *slot) {
  srv_instance *in = srv_model_acquire(slot);
  srv_instance_release(in);
  return in != NULL;
}

static enum MHD_Result metrics(req *r) {
  srv_metrics_row *rows = calloc((size_t)S.nmodels + 1, sizeof *rows);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!rows || !f) {
    free(rows);
    if (f) fclose(f);
    free(text);
    return send_error(r, 500, "out of memory");
  }
  rows[0] = (srv_metrics_row){"", &S.other, 0, 0, 0, 0};
  for (int i = 0; i < S.nmodels; i++) {
    srv_model *slot = &S.models[i];
    srv_metrics_row *row = &rows[i + 1];
    *row = (srv_metrics_row){slot->name, &slot->metrics, 1, 0, 0, 0};
    srv_instance *in = srv_model_acquire(slot);
    if (in) {
      pthread_mutex_lock(&in->mu);
      row->queue = in->depth;
      row->running = in->running;
      pthread_mutex_unlock(&in->mu);
      row->ready = 1;
      srv_instance_release(in);
    }
  }
  srv_metrics_print(f, rows, S.nmodels + 1);
  fclose(f);
  free(rows);
  srv_response resp = {.status = 200, .body = text, .len = len};
  return send_response(r, &resp, "text/plain; version=0.0.4; charset=utf-8");
}

static enum MHD_Result route(req *r) {
  const char *p = r->path;
  int get = strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0;
  int post = strcmp(r->method, "POST") == 0;
#define METHOD(ok)                                                       \
  do {                                                                   \
    if (!(ok)) return send_error(r, 405, "%s is not allowed on %s", r->method, p); \
  } while (0)
  if (strcmp(p, "/v2/health/live") == 0) {
    METHOD(get);
    return send_json(r, 200, json_pack("{s:b}", "live", 1));
  }
  if (strcmp(p, "/v2/health/ready") == 0) {
    METHOD(get);
    pthread_mutex_lock(&S.mu);
    int ready = !S.draining;
    pthread_mutex_unlock(&S.mu);
    for (int i = 0; i < S.nmodels && ready; i++) ready = model_ready(&S.models[i]);
    return send_json(r, ready ? 200 : 400, json_pack("{s:b}", "ready", ready));
  }
  if (strcmp(p, "/v2") == 0 || strcmp(p, "/v2/") == 0) {
    METHOD(get);
    return send_json(r, 200, json_pack("{s:s,s:s,s:[s,s]}", "name", "mlc-onnx", "version", PACKAGE_VERSION,
                                       "extensions", "binary_tensor_data", "model_repository"));
  }
  if (strcmp(p, "/metrics") == 0) {
    METHOD(get);
    return metrics(r);
  }
  if (strcmp(p, "/v2/repository/index") == 0) {
    METHOD(post);
    json_t *a = json_array();
    for (int i = 0; i < S.nmodels && a; i++)
      json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "name", S.models[i].name, "version", "1", "state",
                                         model_ready(&S.models[i]) ? "READY" : "UNAVAILABLE"));
    return send_json(r, 200, a);
  }
  const char *rest = NULL;
  int repo = 0;
  if (strncmp(p, "/v2/models/", 11) == 0) rest = p + 11;
  else if (strncmp(p, "/v2/repository/models/", 22) == 0) rest = p + 22, repo = 1;
  if (!rest) return send_error(r, 404, "no such endpoint: %s", p);
  size_t n = strcspn(rest, "/");
  r->slot = find_model(rest, n);
  if (!r->slot) return send_error(r, 404, "no model \"%.*s\" is served here", (int)(n < 200 ? n : 200), rest);
  const char *tail = rest + n;
  if (repo) {
    if (strcmp(tail, "/load") == 0 || strcmp(tail, "/unload") == 0) {
      METHOD(post);
      return repository_load(r, tail[1] == 'u');
    }
    return send_error(r, 404, "no such endpoint: %s", p);
  }
  if (strncmp(tail, "/versions/", 10) == 0) {
    const char *v = tail + 10;
    size_t vn = strcspn(v, "/");
    if (vn != 1 || v[0] != '1')
      return send_error(r, 404, "model \"%s\" has no version \"%.*s\" (its one version is 1)", r->slot->name,
                        (int)(vn < 64 ? vn : 64), v);
    tail = v + vn;
  }
  if (*tail == 0 || strcmp(tail, "/") == 0) {
    METHOD(get);
    srv_instance *in = srv_model_acquire(r->slot);
    if (!in) return send_error(r, 503, "model \"%s\" is not loaded", r->slot->name);
    json_t *j = srv_model_metadata(in->model, r->slot->name);
    srv_instance_release(in);
    return send_json(r, 200, j);
  }
  if (strcmp(tail, "/ready") == 0) {
    METHOD(get);
    int ready = model_ready(r->slot);
    return send_json(r, ready ? 200 : 400, json_pack("{s:s,s:b}", "name", r->slot->name, "ready", ready));
  }
  if (strcmp(tail, "/infer") == 0) {
    METHOD(post);
    return infer(r);
  }
  return send_error(r, 404, "no such endpoint: %s", p);
#undef METHOD
}

/* ---- the handler -------------------------------------------------------- */

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **con_cls) {
  (void)cls;
  (void)version;
  req *r = *con_cls;
  if (!r) { /* the headers are in */
    if (!(r = calloc(1, sizeof *r))) return MHD_NO;
    r->t0 = now_s();
    r->conn = c;
    snprintf(r->method, sizeof r->method, "%s", method);
    if (!(r->path = strdup(url))) {
      free(r);
      return MHD_NO;
    }
    *con_cls = r;
    /* the model it names, for the metrics of an answer given before routing */
    const char *rest = strncmp(url, "/v2/models/", 11) == 0 ? url + 11
                       : strncmp(url, "/v2/repository/models/", 22) == 0 ? url + 22 : NULL;
    if (rest) r->slot = find_model(rest, strcspn(rest, "/"));
    pthread_mutex_lock(&S.mu);
    S.in_flight++;
    pthread_mutex_unlock(&S.mu);
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
      char *end;
      errno = 0;
      unsigned long long n = strtoull(cl, &end, 10);
      if (!errno && end != cl && !*end && n > S.cfg.max_body) {
        r->early = 1;
        return send_error(r, 413, "the body (%llu bytes) is larger than this server takes (%zu bytes; --max-body)",
                          n, S.cfg.max_body);
      }
    }
    return MHD_YES;
  }
  if (*upload_size) {
    size_t n = *upload_size;
    *upload_size = 0;
    if (now_s() - r->t0 > S.cfg.timeout_s)
      return abort_with(r, 408, "the body did not arrive within %d seconds (--timeout)", S.cfg.timeout_s);
    if (r->too_large || n > S.cfg.max_body - r->len) {
      /* libmicrohttpd answers only before the body or after it: the rest
      ** is read and dropped (up to a bound), then 413 is the answer. */
      r->too_large = 1;
      r->dropped += n;
      if (r->dropped > 4 * S.cfg.max_body)
        return abort_with(r, 413, "the body is larger than this server takes (%zu bytes; --max-body)",
                          S.cfg.max_body);
      return MHD_YES;
    }
    if (r->len + n > r->cap) {
      size_t cap = r->cap ? r->cap : 4096;
      while (cap < r->len + n) cap *= 2;
      if (cap > S.cfg.max_body) cap = S.cfg.max_body;
      char *b = realloc(r->body, cap);
      if (!b) return send_error(r, 500, "out of memory reading the body");
      r->body = b;
      r->cap = cap;
    }
    memcpy(r->body + r->len, upload, n);
    r->len += n;
    return MHD_YES;
  }
  if (r->answered) return MHD_YES;
  if (r->too_large) {
    r->early = 1;
    return send_error(r, 413, "the body is larger than this server takes (%zu bytes; --max-body)", S.cfg.max_body);
  }
  if (r->waiting) {
    if (!r->ready) return MHD_YES;
    r->waiting = 0;
    if (r->job) {
      free(r->id);
      r->id = r->job->id ? strdup(r->job->id) : NULL;
      return send_response(r, &r->job->resp, NULL);
    }
    return send_response(r, &r->resp, NULL);
  }
  return route(r);
}

/* ---- access log and accounting ------------------------------------------ */

static void log_request(req *r, struct MHD_Connection *c, double seconds, int complete) {
  if (!S.log) return;
  char host[NI_MAXHOST] = "", serv[NI_MAXSERV] = "", remote[NI_MAXHOST + NI_MAXSERV + 4] = "";
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (ci && ci->client_addr) {
    socklen_t sl = ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (getnameinfo(ci->client_addr, sl, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) == 0)
      snprintf(remote, sizeof remote, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, serv);
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char when[64];
  snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
           tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
  json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:i,s:I,s:I,s:f}", "time", when, "remote", remote, "method", r->method,
                        "path", r->path, "status", r->status, "bytes_in", (json_int_t)r->len, "bytes_out",
                        (json_int_t)r->out_bytes, "ms", seconds * 1e3);
  if (!j) return;
  if (r->slot) json_object_set_new(j, "model", json_string(r->slot->name));
  if (r->id) json_object_set_new(j, "id", json_string(r->id));
  if (r->error) json_object_set_new(j, "error", json_string(r->error));
  if (!complete) json_object_set_new(j, "complete", json_false());
  char *line = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6));
  json_decref(j);
  if (!line) return;
  pthread_mutex_lock(&S.log_mu);
  fprintf(S.log, "%s\n", line);
  fflush(S.log);
  pthread_mutex_unlock(&S.log_mu);
  free(line);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe) {
  (void)cls;
  req *r = *con_cls;
  if (!r) return;
  double dt = now_s() - r->t0;
  srv_metrics_request(r->slot ? &r->slot->metrics : &S.other, r->status, dt);
  log_request(r, c, dt, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);
  srv_job_free(r->job);
  free(r->resp.body);
  free(r->resp.error);
  free(r->body);
  free(r->path);
  free(r->error);
  free(r->id);
  free(r);
  *con_cls = NULL;
  pthread_mutex_lock(&S.mu);
  S.in_flight--;
  pthread_cond_broadcast(&S.cv);
  pthread_mutex_unlock(&S.mu);
}

/* ---- options ------------------------------------------------------------ */

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *fmt, ...) {
  va_list ap;
  fputs(PROG ": ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\n(see '" PROG " --help')\n", stderr);
  return 2;
}

/* An integer in [lo, hi]; -1 when |s| is not one. */
static long long parse_int(const char *s, long long lo, long long hi) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return -1;
  return v;
}

/* Bytes with an optional K, M or G suffix; 0 when |s| is not a size. */
static size_t parse_size(const char *s) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || s[0] == '-') return 0;
  unsigned long long mul = 1;
  if (*end == 'K' || *end == 'k') mul = 1ULL << 10, end++;
  else if (*end == 'M' || *end == 'm') mul = 1ULL << 20, end++;
  else if (*end == 'G' || *end == 'g') mul = 1ULL << 30, end++;
  if (*end || v > (1ULL << 40) / mul) return 0;
  return (size_t)(v * mul);
}

static int add_model(const char *arg) {
  const char *eq = strchr(arg, '=');
  const char *slash = strchr(arg, '/');
  char *name, *path;
  if (eq && (!slash || eq < slash)) {
    name = strndup(arg, (size_t)(eq - arg));
    path = strdup(eq + 1);
  } else {
    const char *base = strrchr(arg, '/');
    base = base ? base + 1 : arg;
    size_t n = strlen(base);
    if (n > 3 && strcmp(base + n - 3, ".so") == 0) n -= 3;
    name = strndup(base, n);
    path = strdup(arg);
  }
  if (!name || !path) {
    free(name);
    free(path);
    return usage("out of memory");
  }
  if (!*name || strchr(name, '/') || strchr(name, '?') || strchr(name, '#') || !*path) {
    int rc = usage("bad model argument '%s': give MODEL.so or NAME=MODEL.so (a name without '/', '?' or '#')", arg);
    free(name);
    free(path);
    return rc;
  }
  if (find_model(name, strlen(name))) {
    int rc = usage("two models are called \"%s\": name one of them with NAME=MODEL.so", name);
    free(name);
    free(path);
    return rc;
  }
  srv_model *ms = realloc(S.models, (size_t)(S.nmodels + 1) * sizeof *ms);
  if (!ms) {
    free(name);
    free(path);
    return usage("out of memory");
  }
  S.models = ms;
  srv_model *m = &S.models[S.nmodels++];
  memset(m, 0, sizeof *m);
  m->name = name;
  m->path = path;
  return 0;
}

static int parse_args(int argc, char **argv) {
  srv_config *c = &S.cfg;
  *c = (srv_config){.host = "127.0.0.1",
                    .port = 8000,
                    .sessions = 1,
                    .threads = 0,
                    .max_queue = 64,
                    .max_batch = 1,
                    .max_body = 64u << 20,
                    .timeout_s = 30,
                    .drain_s = 30,
                    .max_connections = 256,
                    .access_log = "-"};
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(serve_help, stdout);
      return -1;
    }
    if (a[0] != '-' || !a[1]) {
      int rc = add_model(a);
      if (rc) return rc;
      continue;
    }
    static const char *const with_value[] = {"--host", "--port", "--sessions", "--threads", "--max-queue",
                                             "--max-batch", "--max-body", "--timeout", "--drain-timeout",
                                             "--max-connections", "--access-log", "--http-threads"};
    int known = 0;
    for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++) known |= strcmp(a, with_value[k]) == 0;
    if (!known) return usage("unknown option '%s'", a);
    if (i + 1 >= argc) return usage("%s needs a value", a);
    const char *v = argv[++i];
    long long n = 0;
    if (strcmp(a, "--host") == 0) c->host = v;
    else if (strcmp(a, "--access-log") == 0) c->access_log = v;
    else if (strcmp(a, "--max-body") == 0) {
      if (!(c->max_body = parse_size(v))) return usage("--max-body: '%s' is not a size in bytes (e.g. 64M)", v);
    } else if (strcmp(a, "--port") == 0) {
      if ((n = parse_int(v, 0, 65535)) < 0) return usage("--port: '%s' is not a port (0 to 65535)", v);
      c->port = (int)n;
    } else if (strcmp(a, "--threads") == 0) {
      if ((n = parse_int(v, 0, 1024)) < 0) return usage("--threads: '%s' is not a count (0 to 1024)", v);
      c->threads = (int)n;
    } else {
      if ((n = parse_int(v, 1, 1 << 20)) < 0) return usage("%s: '%s' is not a count (1 or more)", a, v);
      if (strcmp(a, "--sessions") == 0) c->sessions = (int)(n > 256 ? 256 : n);
      else if (strcmp(a, "--max-queue") == 0) c->max_queue = (int)n;
      else if (strcmp(a, "--max-batch") == 0) c->max_batch = (int)n;
      else if (strcmp(a, "--timeout") == 0) c->timeout_s = (int)n;
      else if (strcmp(a, "--drain-timeout") == 0) c->drain_s = (int)n;
      else if (strcmp(a, "--http-threads") == 0) c->http_threads = (int)(n > 64 ? 64 : n);
      else c->max_connections = (int)n;
    }
  }
  if (!S.nmodels) return usage("no model given");
  if (!c->http_threads) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    c->http_threads = ncpu < 1 ? 1 : ncpu > 4 ? 4 : (int)ncpu;
  }
  return 0;
}

/* ---- main --------------------------------------------------------------- */

static int start_daemon(void) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
  struct addrinfo *ai = NULL;
  char port[16];
  snprintf(port, sizeof port, "%d", S.cfg.port);
  int e = getaddrinfo(S.cfg.host, port, &hints, &ai);
  if (e != 0 || !ai) {
    fprintf(stderr, PROG ": error: cannot listen on %s: %s\n", S.cfg.host, gai_strerror(e));
    return -1;
  }
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
  S.d = MHD_start_daemon(flags, (uint16_t)S.cfg.port, NULL, NULL, handler, NULL,
                         MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)S.cfg.timeout_s,
                         MHD_OPTION_CONNECTION_LIMIT, (unsigned int)S.cfg.max_connections,
                         MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)S.cfg.http_threads,
                         MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                         MHD_OPTION_END);
  freeaddrinfo(ai);
  if (!S.d) {
    fprintf(stderr, PROG ": error: cannot listen on %s port %d (in use, or not an address of this host?)\n",
            S.cfg.host, S.cfg.port);
    return -1;
  }
  const union MHD_DaemonInfo *di = MHD_get_daemon_info(S.d, MHD_DAEMON_INFO_BIND_PORT);
  int bound = di ? di->port : S.cfg.port;
  printf(PROG ": listening on http://%s%s%s:%d\n", strchr(S.cfg.host, ':') ? "[" : "", S.cfg.host,
         strchr(S.cfg.host, ':') ? "]" : "", bound);
  fflush(stdout);
  return 0;
}

/* Waits up to |seconds| for the requests in flight; returns how many are left. */
static int drain(double seconds) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += (time_t)seconds;
  pthread_mutex_lock(&S.mu);
  while (S.in_flight > 0)
    if (pthread_cond_timedwait(&S.cv, &S.mu, &until) != 0) break;
  int left = S.in_flight;
  pthread_mutex_unlock(&S.mu);
  return left;
}

int serve_main(int argc, char **argv) {
  memset(&S, 0, sizeof S);
  int rc = parse_args(argc, argv);
  if (rc) return rc < 0 ? 0 : rc;
  pthread_mutex_init(&S.mu, NULL);
  pthread_cond_init(&S.cv, NULL);
  pthread_mutex_init(&S.log_mu, NULL);
  srv_metrics_init(&S.other);
  if (strcmp(S.cfg.access_log, "-") == 0) S.log = stderr;
  else if (strcmp(S.cfg.access_log, "off") != 0 && !(S.log = fopen(S.cfg.access_log, "a"))) {
    fprintf(stderr, PROG ": error: cannot open the access log %s: %s\n", S.cfg.access_log, strerror(errno));
    return 1;
  }
  /* Every thread started from here on (workers, libmicrohttpd's) inherits
  ** these signals blocked; the main thread takes them with sigwait. */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  for (int i = 0; i < S.nmodels; i++) {
    srv_model *m = &S.models[i];
    char err[1024];
    pthread_mutex_init(&m->mu, NULL);
    srv_metrics_init(&m->metrics);
    if (srv_model_reload(m, &S.cfg, err, sizeof err) != 0) {
      fprintf(stderr, PROG ": error: %s\n", err);
      return 1;
    }
    srv_instance *in = srv_model_acquire(m);
    fprintf(stderr, PROG ": model \"%s\" from %s: %d inputs, %d outputs, %d session%s%s\n", m->name, m->path,
            (int)mlc_model_num_inputs(in->model), (int)mlc_model_num_outputs(in->model), S.cfg.sessions,
            S.cfg.sessions == 1 ? "" : "s",
            S.cfg.max_batch > 1 ? (in->batch_axis_ok ? ", batched" : ", not batched (no shared batch dimension)") : "");
    srv_instance_release(in);
  }
  if (start_daemon() != 0) return 1;
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGPIPE) continue;
    if (sig == SIGHUP) {
      for (int i = 0; i < S.nmodels; i++) {
        char err[1024];
        if (srv_model_reload(&S.models[i], &S.cfg, err, sizeof err) == 0)
          fprintf(stderr, PROG ": reloaded model \"%s\" from %s\n", S.models[i].name, S.models[i].path);
        else
          fprintf(stderr, PROG ": model \"%s\" not reloaded (the loaded one keeps serving): %s\n", S.models[i].name,
                  err);
      }
      continue;
    }
    break;
  }
  fprintf(stderr, PROG ": draining (up to %d s)\n", S.cfg.drain_s);
  pthread_mutex_lock(&S.mu);
  S.draining = 1;
  pthread_mutex_unlock(&S.mu);
  MHD_socket lfd = MHD_quiesce_daemon(S.d);
  if (lfd != MHD_INVALID_SOCKET) close(lfd);
  int left = drain(S.cfg.drain_s);
  if (left > 0) {
    fprintf(stderr, PROG ": %d request%s still in flight after %d s; exiting\n", left, left == 1 ? "" : "s",
            S.cfg.drain_s);
    return 1;
  }
  MHD_stop_daemon(S.d);
  for (int i = 0; i < S.nmodels; i++) srv_model_close(&S.models[i]);
  if (srv_instances_wait(S.cfg.drain_s) != 0) {
    fprintf(stderr, PROG ": the models' workers did not stop; exiting\n");
    return 1;
  }
  for (int i = 0; i < S.nmodels; i++) {
    srv_metrics_fini(&S.models[i].metrics);
    pthread_mutex_destroy(&S.models[i].mu);
    free(S.models[i].name);
    free(S.models[i].path);
  }
  free(S.models);
  srv_metrics_fini(&S.other);
  if (S.log && S.log != stderr) fclose(S.log);
  fprintf(stderr, PROG ": stopped\n");
  return 0;
}
