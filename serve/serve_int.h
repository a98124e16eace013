/*
** serve_int.h: the inference server's parts (serve/), shared between its
** files and nothing else.
**
**   server.c   the HTTP side (libmicrohttpd): routing, request bodies,
**              suspend/resume around inference, access log, signals, drain
**   pool.c     models: a slot per served name holding the current instance
**              (a loaded model.so, its sessions, a bounded job queue and one
**              worker thread per session), reload by swapping instances
**   infer.c    the Open Inference Protocol's tensors: a request (JSON, or
**              JSON + the binary tensor extension) checked against the
**              model's signature, run on a session, and the response built
**   metrics.c  counters and histograms, printed in Prometheus' text format
**
** Threads: libmicrohttpd's polling threads run the handlers; inference
** runs on the workers, which own one session each, so a session is only
** ever used by its worker.  A request waiting for a worker has its
** connection suspended; the worker resumes it when the response is ready.
** The library never exits on a bad request: every failure is an HTTP
** status with {"error": "..."}.
*/
#ifndef MLC_SERVE_INT_H
#define MLC_SERVE_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mlc/mlc_runtime.h"

/* ---- configuration --------------------------------------------------- */

typedef struct srv_config {
  const char *host;        /* address to bind (default 127.0.0.1) */
  int port;                /* 0 = any free port, printed when listening */
  int sessions;            /* sessions (= workers) per model */
  int threads;             /* threads per session (mlc_session_options) */
  int max_queue;           /* queued requests per model before 503 */
  int max_batch;           /* rows one run may gather from queued requests */
  size_t max_body;         /* request body bytes before 413 */
  int timeout_s;           /* idle connection / slow request limit */
  int drain_s;             /* how long SIGTERM waits for requests in flight */
  int max_connections;     /* open connections before new ones are refused */
  int http_threads;        /* libmicrohttpd's polling threads */
  const char *access_log;  /* "-" stderr, "off", or a file appended to */
} srv_config;

/* ---- metrics (metrics.c) --------------------------------------------- */

#define SRV_NBUCKETS 14
/* HTTP statuses counted one by one; others fall in the last slot. */
#define SRV_NCODES 10
extern const int srv_codes[SRV_NCODES];

typedef struct srv_metrics {
  pthread_mutex_t mu;
  uint64_t requests[SRV_NCODES];          /* by status (srv_codes) */
  uint64_t lat_bucket[SRV_NBUCKETS + 1];  /* request latency, cumulative at print */
  double lat_sum;
  uint64_t lat_count;
  double infer_sum;                       /* seconds in mlc_session_run */
  uint64_t infer_count;                   /* runs */
  uint64_t batched_requests;              /* requests that shared a run */
} srv_metrics;

void srv_metrics_init(srv_metrics *m);
void srv_metrics_fini(srv_metrics *m);
/* Counts one answered request: |status|, |seconds| from its first byte. */
void srv_metrics_request(srv_metrics *m, int status, double seconds);
/* Counts one run of |nreq| requests taking |seconds|. */
void srv_metrics_infer(srv_metrics *m, int nreq, double seconds);
/* One row of GET /metrics: a model's counters and gauges (|is_model| 0
** for the requests that name no model, |model| ""). */
typedef struct srv_metrics_row {
  const char *model;
  srv_metrics *m;
  int is_model, queue, running, ready;
} srv_metrics_row;
/* Prints |rows| in Prometheus' text format, each family once. */
void srv_metrics_print(FILE *f, const srv_metrics_row *rows, int n);

/* ---- models and workers (pool.c) -------------------------------------- */

typedef struct srv_job srv_job;
typedef struct srv_instance srv_instance;

/* One served name.  |cur| changes on reload, under |mu|. */
typedef struct srv_model {
  char *name;      /* the name in /v2/models/{name} */
  char *path;      /* the model.so it is (re)loaded from */
  pthread_mutex_t mu;
  srv_instance *cur;
  srv_metrics metrics;
  uint64_t loads;  /* successful loads, the first one included */
} srv_model;

/* A loaded model.so with its sessions and queue; reference-counted: the
** slot holds one reference, each job one, each running worker one. */
struct srv_instance {
  srv_model *slot;
  mlc_model *model;
  const srv_config *cfg;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  srv_job *head, *tail;
  int depth;       /* queued jobs */
  int running;     /* jobs being run */
  int closed;      /* no more jobs: workers finish the queue and leave */
  int refs;
  int nworkers;
  int batch_axis_ok; /* every input and output has the same symbolic dim 0 */
};

/* Loads |slot|->path into a new instance (sessions created, workers
** started).  On failure returns NULL and writes why into |err|. */
srv_instance *srv_instance_open(srv_model *slot, const srv_config *cfg, char *err, size_t errlen);
/* Takes a reference on |slot|'s current instance (NULL when none). */
srv_instance *srv_model_acquire(srv_model *slot);
void srv_instance_release(srv_instance *in);
/* Loads |slot|'s file again and swaps it in; the old instance finishes
** what it queued.  Returns 0, or -1 with |err| (the old one stays). */
int srv_model_reload(srv_model *slot, const srv_config *cfg, char *err, size_t errlen);
/* Closes |slot|'s instance (workers finish their queue and stop). */
void srv_model_close(srv_model *slot);
/* Waits until every instance ever opened has been freed, up to |seconds|;
** returns 0 when all are. */
int srv_instances_wait(double seconds);

/* Queues |job| on |in|.  Returns 0, or 503 when the queue is full, or -1
** when |in| is closed (the caller retries on the slot's current one). */
int srv_instance_submit(srv_instance *in, srv_job *job);

/* ---- requests (infer.c) ----------------------------------------------- */

typedef struct srv_tensor {
  int32_t index;        /* model input index */
  DLTensor t;           /* data owned (64-byte aligned), shape in |shape| */
  int64_t shape[8];
} srv_tensor;

typedef struct srv_outreq {
  int32_t index;        /* model output index */
  int binary;           /* answer as raw bytes (binary tensor extension) */
} srv_outreq;

/* What a worker hands back to the HTTP side. */
typedef struct srv_response {
  int status;
  char *body;           /* malloc'ed */
  size_t len;
  size_t header_len;    /* > 0: the JSON header's length (binary extension) */
  char *error;          /* the message of a non-2xx answer (for the log) */
} srv_response;

struct srv_job {
  srv_job *next;
  srv_instance *in;     /* the instance it was queued on (a reference) */
  char *id;             /* the request's "id", echoed */
  int ninputs;
  srv_tensor *inputs;
  int noutputs;         /* 0: all outputs, as JSON unless |all_binary| */
  srv_outreq *outputs;
  int all_binary;
  srv_response resp;
  /* completion: called by the worker with the response filled in */
  void (*done)(srv_job *job);
  void *done_arg;
};

/* Parses an infer request (|body|, |len| bytes; |header_len| > 0 when the
** binary extension's Inference-Header-Content-Length was given, else 0,
** -1 when that header was malformed) against |m|'s signature.  Returns a
** job, or NULL with *|resp| holding the 4xx answer. */
srv_job *srv_infer_parse(const mlc_model *m, const char *body, size_t len, long long header_len,
                         srv_response *resp);
void srv_job_free(srv_job *job);
/* Can |a| and |b| share one run along dimension 0? */
int srv_job_batchable(const srv_job *a, const srv_job *b);
/* Runs |jobs| (|n| >= 1 jobs that can share a run) on |s|, filling each
** job's response; the model's name is |name|. */
void srv_infer_run(const mlc_model *m, mlc_session *s, const char *name, srv_job **jobs, int n,
                   srv_metrics *metrics);

/* The error answer {"error": msg} with |status|. */
void srv_response_error(srv_response *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void srv_response_verror(srv_response *r, int status, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* A JSON answer from |json| (the reference is taken over). */
struct json_t;
void srv_response_json(srv_response *r, int status, struct json_t *json);

/* Protocol datatype name of |t| ("FP32", "INT64", ...); NULL if none. */
const char *srv_dtype_name(DLDataType t);
/* GET /v2/models/{name}: the model's metadata. */
struct json_t *srv_model_metadata(const mlc_model *m, const char *name);

/* ---- the server (server.c) -------------------------------------------- */

extern const char serve_help[];
/* `mlc-serve` / `mlc-onnx serve`: argv[0] is the first argument after the
** command.  Returns the exit status. */
int serve_main(int argc, char **argv);

#endif /* MLC_SERVE_INT_H */
