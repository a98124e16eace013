/*
 * serve_load.c: an HTTP/1.1 load generator for the inference server, the
 * measuring half of bench/serve.sh.
 *
 *   cc -std=gnu11 -O2 -pthread -o serve_load serve_load.c -lm
 *   serve_load --url http://HOST:PORT/PATH [--body FILE] [--header 'K: V']...
 *              [--connections C] (--requests N | --duration S) [--warmup W]
 *              [--timeout S] [--method M] [--check-same] [--json]
 *
 * Each of C threads holds one keep-alive connection and sends requests one
 * after another (POST with the body of FILE and a Content-Length, GET
 * without a body unless --method says otherwise), reading each whole
 * response: status line, headers, then a Content-Length, chunked or
 * until-close body.  A connection the server closes (Connection: close, an
 * HTTP/1.0 answer, an idle keep-alive connection it dropped) is opened
 * again and counted as a reconnect; a request that found its reused
 * connection already closed before any byte of the answer is sent once
 * more.  --requests N shares N attempts among the threads; --duration S
 * sends for S seconds (answers in flight then still count).  Before the
 * clock starts each thread sends W warm-up requests (--warmup, default 0)
 * that count nowhere (their first 2xx body may become --check-same's
 * reference).  Latency is the CLOCK_MONOTONIC time from the first
 * byte sent to the last byte of the answer.  Errors (a failed connect, a
 * timeout, a connection closed mid-answer, a malformed answer) are counted
 * by kind; a timeout (--timeout, default 10 s) bounds the connect and each
 * request.  --check-same compares every 2xx body with the first one and
 * counts the mismatches.
 *
 * Prints requests (answers received), errors, non-2xx, reconnects, elapsed
 * seconds, requests/s and latency mean/p50/p90/p99/max in ms as a table,
 * or one JSON object with --json.  Exit status: 0 when every attempt got a
 * 2xx answer (and, with --check-same, the same body), 1 otherwise, 2 on bad
 * usage.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNECTIONS 4096
#define MAX_HEADER_BYTES (64 * 1024)
#define MAX_BODY_BYTES ((size_t)1 << 30)

/* error kinds */
enum { E_CONNECT, E_SEND, E_TIMEOUT, E_CLOSED, E_MALFORMED, E_KINDS };
static const char *const error_names[E_KINDS] = {"connect", "send", "timeout", "closed", "malformed"};

/* ---- options and shared state ---- */

static struct {
    const char *url;
    char *host, *port, *path;
    const char *method;
    char *request; /* request head and body, sent as is */
    size_t request_len;
    int connections;
    long requests;     /* > 0: attempts in all; 0: --duration */
    double duration_s; /* > 0 with --duration */
    long warmup;
    double timeout_s;
    int check_same, json;
    struct addrinfo *addrs;
} opt = {.connections = 1, .timeout_s = 10.0};

static atomic_long attempts_left; /* --requests */
static double t_start, t_stop;    /* set by main between the barriers */
static pthread_barrier_t ready, go;

/* the first 2xx body, for --check-same; set once */
static _Atomic(char *) ref_body;
static size_t ref_len;
static pthread_mutex_t ref_lock = PTHREAD_MUTEX_INITIALIZER;

/* the first error message, printed to stderr at the end */
static char first_error[256];
static pthread_mutex_t error_lock = PTHREAD_MUTEX_INITIALIZER;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void note_error(const char *fmt, ...) {
    pthread_mutex_lock(&error_lock);
    if (!first_error[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(first_error, sizeof first_error, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&error_lock);
}

/* ---- per-thread state ---- */

typedef struct {
    long requests, non2xx, reconnects, mismatches;
    long errors[E_KINDS];
    long status[600]; /* answers by status code */
    double *lat_ms;
    size_t nlat, caplat;
} stats;

typedef struct {
    int fd;
    long served; /* answers on this connection */
    char *buf;   /* received bytes not yet consumed */
    size_t len, cap;
    char *body; /* a decoded chunked body */
    size_t body_cap;
    stats st;
    int opened;   /* connections opened so far */
    int counting; /* past the warm-up */
} worker;

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "serve_load: out of memory\n");
        exit(1);
    }
    return q;
}

/* ---- sockets ---- */

static void close_conn(worker *w) {
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    w->served = 0;
    w->len = 0;
}

/* waits until fd is ready for |events| or the deadline passes: 1 ready, 0 timeout, -1 error */
static int wait_fd(int fd, short events, double deadline) {
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) return 0;
        struct pollfd p = {.fd = fd, .events = events};
        int ms = left * 1e3 > INT_MAX ? INT_MAX : (int)ceil(left * 1e3);
        int r = poll(&p, 1, ms);
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) return -1;
    }
}

/* opens a connection (non-blocking, TCP_NODELAY); 0 on success */
static int open_conn(worker *w) {
    close_conn(w);
    double deadline = now_s() + opt.timeout_s;
    int err = 0;
    for (struct addrinfo *a = opt.addrs; a; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            w->fd = fd;
            break;
        }
        if (errno == EINPROGRESS) {
            int r = wait_fd(fd, POLLOUT, deadline);
            socklen_t sl = sizeof err;
            if (r == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) == 0 && err == 0) {
                w->fd = fd;
                break;
            }
            if (r == 0) err = ETIMEDOUT;
        } else {
            err = errno;
        }
        close(fd);
    }
    if (w->fd < 0) {
        note_error("connect to %s:%s: %s", opt.host, opt.port, strerror(err ? err : ECONNREFUSED));
        return -1;
    }
    if (w->opened++ > 0 && w->counting) w->st.reconnects++;
    return 0;
}

/* sends the request; -1 on success, else an error kind (E_CLOSED: the peer had closed) */
static int send_request(worker *w, double deadline) {
    size_t off = 0;
    while (off < opt.request_len) {
        ssize_t n = send(w->fd, opt.request + off, opt.request_len - off, MSG_NOSIGNAL);
        if (n > 0) {
            off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int r = wait_fd(w->fd, POLLOUT, deadline);
            if (r == 1) continue;
            if (r == 0) {
                note_error("timeout sending the request");
                return E_TIMEOUT;
            }
        }
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET) && off == 0) return E_CLOSED;
        note_error("send: %s", n < 0 ? strerror(errno) : "no progress");
        return E_SEND;
    }
    return -1;
}

/* receives more bytes into w->buf: > 0 bytes read, 0 end of stream, -1 error, -2 timeout */
static int recv_more(worker *w, double deadline) {
    if (w->cap - w->len < 16384) {
        w->cap = w->cap ? w->cap * 2 : 65536;
        w->buf = xrealloc(w->buf, w->cap);
    }
    for (;;) {
        ssize_t n = recv(w->fd, w->buf + w->len, w->cap - w->len, 0);
        if (n > 0) {
            w->len += (size_t)n;
            return 1;
        }
        if (n == 0) return 0;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        int r = wait_fd(w->fd, POLLIN, deadline);
        if (r == 0) return -2;
        if (r < 0) return -1;
    }
}

/* ---- response parsing ---- */

typedef struct {
    int status, minor; /* HTTP/1.minor */
    size_t head_len;   /* status line and headers with the blank line */
    int has_length, chunked, close;
    size_t length;
} head;

static const char *find_crlfcrlf(const char *p, size_t n) {
    for (size_t i = 0; i + 3 < n; i++)
        if (p[i] == '\r' && p[i + 1] == '\n' && p[i + 2] == '\r' && p[i + 3] == '\n') return p + i;
    return NULL;
}

/* whether the comma-separated header value [v, e) holds |tok| (any case) */
static int has_token(const char *v, const char *e, const char *tok) {
    size_t tl = strlen(tok);
    while (v < e) {
        while (v < e && (*v == ' ' || *v == '\t' || *v == ',')) v++;
        const char *s = v;
        while (v < e && *v != ',') v++;
        const char *t = v;
        while (t > s && (t[-1] == ' ' || t[-1] == '\t')) t--;
        if ((size_t)(t - s) == tl && strncasecmp(s, tok, tl) == 0) return 1;
    }
    return 0;
}

/* parses the head of w->buf[0, end + 4); 0 on success, -1 malformed (why in *why) */
static int parse_head(const char *buf, const char *end, head *h, const char **why) {
    memset(h, 0, sizeof *h);
    h->head_len = (size_t)(end - buf) + 4;
    const char *p = buf, *eol = memchr(p, '\r', (size_t)(end - p) + 1);
    /* status line: HTTP/1.x SP ddd [SP reason] */
    if (!eol || eol[1] != '\n' || eol - p < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[7] < '0' || p[7] > '9' || p[8] != ' ' ||
        p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' ||
        (eol - p > 12 && p[12] != ' ')) {
        *why = "bad status line";
        return -1;
    }
    h->minor = p[7] - '0';
    h->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    int keep_alive = 0, close = 0;
    for (p = eol + 2; p < end + 2; p = eol + 2) {
        eol = memchr(p, '\r', (size_t)(end + 2 - p));
        if (!eol || eol[1] != '\n') {
            *why = "bad header line";
            return -1;
        }
        const char *colon = memchr(p, ':', (size_t)(eol - p));
        if (!colon || colon == p) {
            *why = "header line without a name";
            return -1;
        }
        const char *v = colon + 1;
        while (v < eol && (*v == ' ' || *v == '\t')) v++;
        size_t nl = (size_t)(colon - p);
        if (nl == 14 && strncasecmp(p, "content-length", nl) == 0) {
            size_t n = 0;
            const char *d = v;
            for (; d < eol && *d >= '0' && *d <= '9'; d++) {
                if (n > MAX_BODY_BYTES) break;
                n = n * 10 + (size_t)(*d - '0');
            }
            while (d < eol && (*d == ' ' || *d == '\t')) d++;
            if (d == v || d != eol || n > MAX_BODY_BYTES || (h->has_length && n != h->length)) {
                *why = "bad Content-Length";
                return -1;
            }
            h->has_length = 1;
            h->length = n;
        } else if (nl == 17 && strncasecmp(p, "transfer-encoding", nl) == 0) {
            if (has_token(v, eol, "chunked")) h->chunked = 1;
        } else if (nl == 10 && strncasecmp(p, "connection", nl) == 0) {
            if (has_token(v, eol, "close")) close = 1;
            if (has_token(v, eol, "keep-alive")) keep_alive = 1;
        }
    }
    h->close = close || (h->minor == 0 && !keep_alive);
    if (h->chunked) h->has_length = 0; /* chunked wins over a length (RFC 9112 6.3) */
    return 0;
}

/* decodes the chunked body at buf[0, n) into w->body: > 0 the encoded
 * length once complete (*out_len the decoded one), 0 more bytes needed,
 * -1 malformed */
static long decode_chunked(worker *w, const char *buf, size_t n, size_t *out_len) {
    size_t i = 0, out = 0;
    for (;;) {
        /* size line: hex [;ext] CRLF */
        size_t size = 0;
        int digits = 0;
        for (; i < n; i++, digits++) {
            char c = buf[i];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) break;
            if (size > MAX_BODY_BYTES) return -1;
            size = size * 16 + (size_t)d;
        }
        if (i == n) return 0;
        if (!digits || size > MAX_BODY_BYTES || out + size > MAX_BODY_BYTES) return -1;
        while (i < n && buf[i] != '\r') {
            if (buf[i] == '\n') return -1;
            i++;
        }
        if (i + 1 >= n) return 0;
        if (buf[i + 1] != '\n') return -1;
        i += 2;
        if (size == 0) {
            /* trailers, then a blank line */
            for (;;) {
                const char *e = i < n ? memchr(buf + i, '\r', n - i) : NULL;
                if (!e || (size_t)(e - buf) + 1 >= n) return 0;
                if (e[1] != '\n') return -1;
                size_t line = (size_t)(e - buf) - i;
                i = (size_t)(e - buf) + 2;
                if (line == 0) {
                    *out_len = out;
                    return (long)i;
                }
            }
        }
        if (n - i < size + 2) return 0;
        if (buf[i + size] != '\r' || buf[i + size + 1] != '\n') return -1;
        if (out + size > w->body_cap) {
            w->body_cap = (out + size) * 2;
            w->body = xrealloc(w->body, w->body_cap);
        }
        memcpy(w->body + out, buf + i, size);
        out += size;
        i += size + 2;
    }
}

/* ---- one request ---- */

enum { REQ_OK, REQ_STALE, REQ_ERROR };

static void check_body(worker *w, const char *body, size_t len) {
    char *ref = atomic_load_explicit(&ref_body, memory_order_acquire);
    if (!ref) {
        pthread_mutex_lock(&ref_lock);
        ref = atomic_load_explicit(&ref_body, memory_order_relaxed);
        if (!ref) {
            char *copy = xrealloc(NULL, len);
            memcpy(copy, body, len);
            ref_len = len;
            atomic_store_explicit(&ref_body, copy, memory_order_release);
            pthread_mutex_unlock(&ref_lock);
            return;
        }
        pthread_mutex_unlock(&ref_lock);
    }
    if (len != ref_len || memcmp(body, ref, len) != 0) {
        w->st.mismatches++;
        size_t i = 0;
        while (i < len && i < ref_len && body[i] == ref[i]) i++;
        note_error("body differs from the first 2xx body at byte %zu (%zu bytes, first had %zu)", i, len, ref_len);
    }
}

/* sends one request and reads its answer; REQ_OK with *status set, REQ_STALE
 * when a reused connection was found closed before any answer, REQ_ERROR
 * with the kind counted (when |count|) and the connection closed */
static int do_request(worker *w, int count, int *status) {
    double deadline = now_s() + opt.timeout_s;
    int reused = w->served > 0, kind;
    const char *why = "";
    if (w->len) {
        kind = E_MALFORMED;
        why = "bytes after the previous answer";
        note_error("%s", why);
        goto fail;
    }
    kind = send_request(w, deadline);
    if (kind == E_CLOSED && reused) return REQ_STALE;
    if (kind == E_CLOSED) note_error("connection closed by the server before the request was sent");
    if (kind >= 0) goto fail;
    for (;;) { /* answers until one that is not 1xx */
        head h;
        const char *end = NULL;
        size_t scanned = 0;
        for (;;) {
            end = find_crlfcrlf(w->buf + scanned, w->len - scanned);
            if (end && (size_t)(end - w->buf) + 4 <= MAX_HEADER_BYTES) break;
            if (end || w->len > MAX_HEADER_BYTES) {
                kind = E_MALFORMED;
                note_error("answer head longer than %d bytes", MAX_HEADER_BYTES);
                goto fail;
            }
            scanned = w->len > 3 ? w->len - 3 : 0;
            int r = recv_more(w, deadline);
            if (r > 0) continue;
            if (r == 0 && w->len == 0 && reused) return REQ_STALE;
            if (r == -1 && errno == ECONNRESET && w->len == 0 && reused) return REQ_STALE;
            kind = r == -2 ? E_TIMEOUT : E_CLOSED;
            note_error(r == -2 ? "timeout waiting for the answer head (%zu bytes so far)"
                               : "connection closed during the answer head (%zu bytes so far)",
                       w->len);
            goto fail;
        }
        if (parse_head(w->buf, end, &h, &why)) {
            kind = E_MALFORMED;
            note_error("malformed answer: %s", why);
            goto fail;
        }
        int no_body = (h.status >= 100 && h.status < 200) || h.status == 204 || h.status == 304 ||
                      strcmp(opt.method, "HEAD") == 0;
        const char *body = NULL;
        size_t body_len = 0, consumed = h.head_len;
        int until_close = 0;
        for (;;) {
            size_t avail = w->len - h.head_len;
            if (no_body) {
                break;
            } else if (h.chunked) {
                long r = decode_chunked(w, w->buf + h.head_len, avail, &body_len);
                if (r < 0) {
                    kind = E_MALFORMED;
                    note_error("malformed answer: bad chunked body");
                    goto fail;
                }
                if (r > 0) {
                    body = w->body;
                    consumed += (size_t)r;
                    break;
                }
            } else if (h.has_length) {
                if (avail >= h.length) {
                    body = w->buf + h.head_len;
                    body_len = h.length;
                    consumed += h.length;
                    break;
                }
            } else if (avail > MAX_BODY_BYTES) {
                kind = E_MALFORMED;
                note_error("answer body longer than %zu bytes", MAX_BODY_BYTES);
                goto fail;
            }
            int r = recv_more(w, deadline);
            if (r > 0) continue;
            if (r == 0 && !h.chunked && !h.has_length) { /* body until close */
                body = w->buf + h.head_len;
                body_len = avail;
                consumed = w->len;
                until_close = 1;
                break;
            }
            kind = r == -2 ? E_TIMEOUT : E_CLOSED;
            note_error(r == -2 ? "timeout waiting for the answer body" : "connection closed during the answer body");
            goto fail;
        }
        if (h.status >= 100 && h.status < 200) { /* interim answer: drop it, read the next */
            memmove(w->buf, w->buf + consumed, w->len - consumed);
            w->len -= consumed;
            continue;
        }
        *status = h.status;
        if (h.status < 200 || h.status > 299) {
            char snip[81];
            size_t k = 0;
            for (; body && k < body_len && k < sizeof snip - 1; k++)
                snip[k] = body[k] >= ' ' && body[k] < 0x7f ? body[k] : '.';
            snip[k] = 0;
            note_error("status %d answered (body: '%s%s')", h.status, snip, body_len > k ? "..." : "");
        }
        if (opt.check_same && h.status >= 200 && h.status < 300) check_body(w, body ? body : "", body_len);
        w->served++;
        if (until_close || h.close) {
            close_conn(w);
        } else {
            memmove(w->buf, w->buf + consumed, w->len - consumed);
            w->len -= consumed;
        }
        return REQ_OK;
    }
fail:
    if (count) w->st.errors[kind]++;
    close_conn(w);
    return REQ_ERROR;
}

/* one attempt: connects when needed, retries once on a stale connection;
 * records the answer's latency and status when |count| */
static void attempt(worker *w, int count) {
    for (int tries = 0; tries < 2; tries++) {
        if (w->fd < 0 && open_conn(w)) {
            if (count) w->st.errors[E_CONNECT]++;
            struct timespec pause = {0, 10 * 1000 * 1000}; /* no busy loop against a closed port */
            nanosleep(&pause, NULL);
            return;
        }
        double t0 = now_s();
        int status = 0, r = do_request(w, count, &status);
        double ms = (now_s() - t0) * 1e3;
        if (r == REQ_STALE) {
            close_conn(w);
            continue;
        }
        if (r == REQ_OK && count) {
            stats *s = &w->st;
            s->requests++;
            if (status < 200 || status > 299) s->non2xx++;
            if (status >= 100 && status < 600) s->status[status]++;
            if (s->nlat == s->caplat) {
                s->caplat = s->caplat ? s->caplat * 2 : 4096;
                s->lat_ms = xrealloc(s->lat_ms, s->caplat * sizeof *s->lat_ms);
            }
            s->lat_ms[s->nlat++] = ms;
        }
        return;
    }
    /* closed again right after the reconnect */
    if (count) w->st.errors[E_CLOSED]++;
    note_error("connection closed by the server before any answer, twice");
    close_conn(w);
}

static void *run_worker(void *arg) {
    worker *w = arg;
    for (long i = 0; i < opt.warmup; i++) attempt(w, 0);
    pthread_barrier_wait(&ready);
    pthread_barrier_wait(&go);
    w->counting = 1;
    if (opt.requests > 0) {
        while (atomic_fetch_sub(&attempts_left, 1) > 0) attempt(w, 1);
    } else {
        while (now_s() < t_stop) attempt(w, 1);
    }
    close_conn(w);
    return NULL;
}

/* ---- setup ---- */

static void usage(FILE *f) {
    fputs("usage: serve_load --url http://HOST[:PORT][/PATH] [--body FILE] [--header 'K: V']...\n"
          "                  [--connections C] (--requests N | --duration S) [--warmup W]\n"
          "                  [--timeout S] [--method M] [--check-same] [--json]\n"
          "  --url URL          the target (http only; HOST may be [IPv6])\n"
          "  --body FILE        the request body (sent with Content-Length; default none)\n"
          "  --header 'K: V'    an extra request header (repeatable)\n"
          "  --connections C    keep-alive connections, one thread each (default 1)\n"
          "  --requests N       N requests in all, shared by the connections\n"
          "  --duration S       send for S seconds instead\n"
          "  --warmup W         W uncounted requests per connection first (default 0)\n"
          "  --timeout S        bound on a connect and on each request, seconds (default 10)\n"
          "  --method M         request method (default POST with --body, else GET)\n"
          "  --check-same       count 2xx bodies that differ from the first 2xx body\n"
          "  --json             print one JSON object instead of a table\n"
          "exit status: 0 all answers 2xx (and the same), 1 otherwise, 2 bad usage\n",
          f);
}

static _Noreturn void bad_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("serve_load: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
    va_end(ap);
    usage(stderr);
    exit(2);
}

static long parse_long(const char *name, const char *s, long lo, long hi) {
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (errno || e == s || *e || v < lo || v > hi) bad_usage("%s wants an integer in [%ld, %ld], not '%s'", name, lo, hi, s);
    return v;
}

static double parse_seconds(const char *name, const char *s) {
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (errno || e == s || *e || !(v > 0) || v > 1e6) bad_usage("%s wants a positive number of seconds, not '%s'", name, s);
    return v;
}

static char *xstrndup(const char *s, size_t n) {
    char *d = xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

static void parse_url(const char *url) {
    if (strncasecmp(url, "http://", 7) != 0) bad_usage("--url must start with http:// ('%s')", url);
    const char *p = url + 7, *slash = strchr(p, '/');
    const char *auth_end = slash ? slash : p + strlen(p);
    opt.path = xstrndup(slash ? slash : "/", slash ? strlen(slash) : 1);
    const char *host_end, *colon = NULL;
    if (*p == '[') {
        const char *rb = memchr(p, ']', (size_t)(auth_end - p));
        if (!rb || rb == p + 1) bad_usage("bad IPv6 host in '%s'", url);
        opt.host = xstrndup(p + 1, (size_t)(rb - p - 1));
        host_end = rb + 1;
        if (host_end < auth_end) {
            if (*host_end != ':') bad_usage("bad URL '%s'", url);
            colon = host_end;
        }
    } else {
        colon = memchr(p, ':', (size_t)(auth_end - p));
        host_end = colon ? colon : auth_end;
        if (host_end == p) bad_usage("no host in '%s'", url);
        opt.host = xstrndup(p, (size_t)(host_end - p));
    }
    if (strpbrk(opt.host, "@ \t")) bad_usage("bad host in '%s'", url);
    if (colon) {
        opt.port = xstrndup(colon + 1, (size_t)(auth_end - colon - 1));
        parse_long("the URL's port", opt.port, 1, 65535);
    } else {
        opt.port = xstrndup("80", 2);
    }
    for (const char *c = opt.path; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f) bad_usage("the URL's path has a space or control character");
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) bad_usage("cannot read --body '%s': %s", path, strerror(errno));
    char *d = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 65536) d = xrealloc(d, cap = cap * 2 + 65536);
        size_t r = fread(d + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    if (ferror(f)) bad_usage("cannot read --body '%s'", path);
    fclose(f);
    *len = n;
    return d;
}

typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) b->p = xrealloc(b->p, b->cap = (b->n + n + 1) * 2);
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_printf(sbuf *b, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        fprintf(stderr, "serve_load: request line too long\n");
        exit(2);
    }
    sb_add(b, tmp, (size_t)n);
}

/* ---- report ---- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* nearest-rank percentile of sorted v[0, n) */
static double pct(const double *v, size_t n, double p) {
    size_t k = (size_t)ceil(p / 100.0 * (double)n);
    return v[k ? k - 1 : 0];
}

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

int main(int argc, char **argv) {
    const char *body_path = NULL;
    sbuf extra = {0};
    int have_requests = 0, have_duration = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        char name[32];
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (eq && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = 0;
            val = eq + 1;
            a = name;
        }
        int flag = !strcmp(a, "--json") || !strcmp(a, "--check-same") || !strcmp(a, "-h") || !strcmp(a, "--help");
        static const char *const valued[] = {"--url",      "--body",    "--header", "--connections", "--requests",
                                             "--duration", "--warmup",  "--timeout", "--method"};
        int known = flag;
        for (size_t k = 0; k < sizeof valued / sizeof *valued; k++) known |= !strcmp(a, valued[k]);
        if (!known) bad_usage("unknown argument '%s'", argv[i]);
        if (flag && val) bad_usage("%s takes no value", a);
        if (!flag && !val) {
            if (i + 1 >= argc) bad_usage("%s wants a value", a);
            val = argv[++i];
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            opt.json = 1;
        } else if (!strcmp(a, "--check-same")) {
            opt.check_same = 1;
        } else if (!strcmp(a, "--url")) {
            opt.url = val;
        } else if (!strcmp(a, "--body")) {
            body_path = val;
        } else if (!strcmp(a, "--header")) {
            const char *c = strchr(val, ':');
            if (!c || c == val || strpbrk(val, "\r\n")) bad_usage("--header wants 'Name: value', not '%s'", val);
            sb_add(&extra, val, strlen(val));
            sb_add(&extra, "\r\n", 2);
        } else if (!strcmp(a, "--connections")) {
            opt.connections = (int)parse_long(a, val, 1, MAX_CONNECTIONS);
        } else if (!strcmp(a, "--requests")) {
            opt.requests = parse_long(a, val, 1, 1000000000000L);
            have_requests = 1;
        } else if (!strcmp(a, "--duration")) {
            opt.duration_s = parse_seconds(a, val);
            have_duration = 1;
        } else if (!strcmp(a, "--warmup")) {
            opt.warmup = parse_long(a, val, 0, 1000000000000L);
        } else if (!strcmp(a, "--timeout")) {
            opt.timeout_s = parse_seconds(a, val);
        } else if (!strcmp(a, "--method")) {
            for (const char *c = val; *c; c++)
                if (*c < 'A' || *c > 'Z') bad_usage("--method wants an upper-case token, not '%s'", val);
            if (!*val) bad_usage("--method wants a token");
            opt.method = val;
        } else {
            bad_usage("unknown argument '%s'", argv[i]);
        }
    }
    if (!opt.url) bad_usage("--url is required");
    if (have_requests == have_duration) bad_usage("give one of --requests and --duration");
    parse_url(opt.url);
    size_t body_len = 0;
    char *body = body_path ? read_file(body_path, &body_len) : NULL;
    if (!opt.method) opt.method = body_path ? "POST" : "GET";

    /* the request, built once */
    sbuf req = {0};
    int v6 = strchr(opt.host, ':') != NULL;
    sb_printf(&req, "%s %s HTTP/1.1\r\nHost: %s%s%s", opt.method, opt.path, v6 ? "[" : "", opt.host, v6 ? "]" : "");
    if (strcmp(opt.port, "80")) sb_printf(&req, ":%s", opt.port);
    sb_add(&req, "\r\n", 2);
    if (body_path || (strcmp(opt.method, "GET") && strcmp(opt.method, "HEAD")))
        sb_printf(&req, "Content-Length: %zu\r\n", body_len);
    if (extra.n) sb_add(&req, extra.p, extra.n);
    sb_add(&req, "\r\n", 2);
    if (body_len) sb_add(&req, body, body_len);
    free(body);
    opt.request = req.p;
    opt.request_len = req.n;

    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    int gr = getaddrinfo(opt.host, opt.port, &hints, &opt.addrs);
    if (gr) {
        fprintf(stderr, "serve_load: cannot resolve '%s': %s\n", opt.host, gai_strerror(gr));
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);

    int nc = opt.connections;
    worker *ws = calloc((size_t)nc, sizeof *ws);
    pthread_t *tids = calloc((size_t)nc, sizeof *tids);
    if (!ws || !tids) {
        fprintf(stderr, "serve_load: out of memory\n");
        return 1;
    }
    atomic_store(&attempts_left, opt.requests);
    pthread_barrier_init(&ready, NULL, (unsigned)nc + 1);
    pthread_barrier_init(&go, NULL, (unsigned)nc + 1);
    for (int i = 0; i < nc; i++) {
        ws[i].fd = -1;
        int e = pthread_create(&tids[i], NULL, run_worker, &ws[i]);
        if (e) {
            fprintf(stderr, "serve_load: cannot start thread %d: %s\n", i, strerror(e));
            exit(1);
        }
    }
    pthread_barrier_wait(&ready);
    t_start = now_s();
    t_stop = t_start + opt.duration_s;
    pthread_barrier_wait(&go);
    for (int i = 0; i < nc; i++) pthread_join(tids[i], NULL);
    double elapsed = now_s() - t_start;

    /* totals */
    stats t = {0};
    for (int i = 0; i < nc; i++) {
        stats *s = &ws[i].st;
        t.requests += s->requests;
        t.non2xx += s->non2xx;
        t.reconnects += s->reconnects;
        t.mismatches += s->mismatches;
        for (int k = 0; k < E_KINDS; k++) t.errors[k] += s->errors[k];
        for (int k = 0; k < 600; k++) t.status[k] += s->status[k];
        t.lat_ms = xrealloc(t.lat_ms, (t.nlat + s->nlat) * sizeof *t.lat_ms);
        if (s->nlat) memcpy(t.lat_ms + t.nlat, s->lat_ms, s->nlat * sizeof *s->lat_ms);
        t.nlat += s->nlat;
    }
    long errors = 0;
    for (int k = 0; k < E_KINDS; k++) errors += t.errors[k];
    qsort(t.lat_ms, t.nlat, sizeof *t.lat_ms, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < t.nlat; i++) sum += t.lat_ms[i];
    size_t n = t.nlat;
    double rate = elapsed > 0 ? (double)t.requests / elapsed : 0;
    const char *lat_names[] = {"mean", "p50", "p90", "p99", "max"};
    double lat[5] = {0};
    if (n) {
        lat[0] = sum / (double)n;
        lat[1] = pct(t.lat_ms, n, 50);
        lat[2] = pct(t.lat_ms, n, 90);
        lat[3] = pct(t.lat_ms, n, 99);
        lat[4] = t.lat_ms[n - 1];
    }

    if (opt.json) {
        printf("{\"url\":");
        json_string(opt.url);
        printf(",\"method\":");
        json_string(opt.method);
        printf(",\"connections\":%d,\"requests\":%ld,\"errors\":%ld,\"error_kinds\":{", nc, t.requests, errors);
        for (int k = 0; k < E_KINDS; k++) printf("%s\"%s\":%ld", k ? "," : "", error_names[k], t.errors[k]);
        printf("},\"non_2xx\":%ld,\"statuses\":{", t.non2xx);
        for (int k = 0, first = 1; k < 600; k++)
            if (t.status[k]) {
                printf("%s\"%d\":%ld", first ? "" : ",", k, t.status[k]);
                first = 0;
            }
        printf("},\"reconnects\":%ld,", t.reconnects);
        if (opt.check_same) printf("\"mismatches\":%ld,", t.mismatches);
        printf("\"elapsed_s\":%.4f,\"requests_per_s\":%.2f,\"latency_ms\":{", elapsed, rate);
        for (int k = 0; k < 5; k++) {
            if (n)
                printf("%s\"%s\":%.4f", k ? "," : "", lat_names[k], lat[k]);
            else
                printf("%s\"%s\":null", k ? "," : "", lat_names[k]);
        }
        printf("}}\n");
    } else {
        printf("url          %s %s\n", opt.method, opt.url);
        printf("connections  %d\n", nc);
        printf("requests     %ld\n", t.requests);
        printf("errors       %ld", errors);
        if (errors) {
            const char *sep = " (";
            for (int k = 0; k < E_KINDS; k++)
                if (t.errors[k]) {
                    printf("%s%s %ld", sep, error_names[k], t.errors[k]);
                    sep = ", ";
                }
            printf(")");
        }
        printf("\nnon-2xx      %ld", t.non2xx);
        if (t.non2xx) {
            const char *sep = " (";
            for (int k = 0; k < 600; k++)
                if (t.status[k] && (k < 200 || k > 299)) {
                    printf("%s%d: %ld", sep, k, t.status[k]);
                    sep = ", ";
                }
            printf(")");
        }
        printf("\nreconnects   %ld\n", t.reconnects);
        if (opt.check_same) printf("mismatches   %ld\n", t.mismatches);
        printf("elapsed s    %.3f\n", elapsed);
        printf("requests/s   %.1f\n", rate);
        printf("latency ms  ");
        for (int k = 0; k < 5; k++) {
            if (n)
                printf(" %s %.3f", lat_names[k], lat[k]);
            else
                printf(" %s -", lat_names[k]);
        }
        printf("\n");
    }
    fflush(stdout);
    if (first_error[0] && (errors || t.non2xx || t.mismatches)) fprintf(stderr, "serve_load: first problem: %s\n", first_error);

    for (int i = 0; i < nc; i++) {
        free(ws[i].buf);
        free(ws[i].body);
        free(ws[i].st.lat_ms);
    }
    free(ws);
    free(tids);
    free(t.lat_ms);
    free(extra.p);
    free(req.p);
    free(atomic_load(&ref_body));
    free(opt.host);
    free(opt.port);
    free(opt.path);
    freeaddrinfo(opt.addrs);
    return errors || t.non2xx || t.mismatches || t.requests == 0 ? 1 : 0;
}
