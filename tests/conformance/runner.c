/*
** runner.c: the ONNX node conformance runner.
**
**   runner SUITE_DIR OPS_TSV OUT_RESULTS [--only NAME|GLOB ...] [--jobs N]
**          [--timeout S] [--threads T] [--passing FILE] [--write-passing FILE]
**
** For every SUITE_DIR/test_* directory (sorted by name) it compiles
** model.onnx with mlc_compile_file, loads the model .so through the loader
** library, binds test_data_set_0/input_<i>.pb in graph-input order, runs it
** and compares each output with output_<j>.pb by the ONNX backend rules:
** the same number of outputs, dtype and shape exactly; floats within
** atol + rtol*|expected| (rtol 1e-3, atol from OPS_TSV's atol column,
** default 1e-7), NaN in the same places, infinities equal; float16 and
** bfloat16 compared as floats; integers and bools exactly.
**
** Each test runs in a forked child, in its own process group and scratch
** directory (TMPDIR points there, so the compiler's own scratch files land
** in it too), under a time limit; a child killed by a signal is a crash, one
** past the limit a timeout, one that exits with an error status (a sanitizer
** report, before its result or a leak report after it) a crash as well.  The
** child reports "PASS" or "FAIL reason" on a pipe.  SKIP: test_bernoulli*
** and test_training_dropout* but test_training_dropout_zero_ratio* (random
** outputs).  Tests with sequence or optional inputs or outputs (found in
** model.onnx) FAIL with "sequence/optional values not supported" after the
** compiler has had its go at them.
**
** Results: "test_name PASS|FAIL|SKIP [reason]" lines, sorted, to stdout and
** OUT_RESULTS; then counts per tier (from OPS_TSV), the table of
** summary.py (beside OPS_TSV, run with /usr/bin/python3 when both exist),
** the most common failure reasons, and
**
**   conformance results: PASS p, FAIL f, SKIP s
**   conformance: N passed, M failed
**
** where M counts crashes, timeouts and regressions (tests named in the
** --passing list that no longer pass) and N the rest.  Ordinary failures
** (unsupported ops, wrong values) do not make the run fail.
**
** Exit status: 0; 1 if a test crashed or timed out or a test of the
** passing list regressed; 2 for bad usage or an unreadable suite.
*/
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"

extern char **environ;

#define RTOL 1e-3
#define DEFAULT_ATOL 1e-7
#define REASON_MAX 400
#define MAX_JOBS 64

/*
** In a sanitizer build, the sanitizer runtime of GCC <= 13 may take a
** dynamic TLS block of a dlopen'ed model for one with a pre-2.25 glibc
** header (when the block happens to start 16 bytes into a page) and read a
** garbage range from it; the leak checker then crashes at exit ("Tracer
** caught signal 11") on a test that passed.  Not intercepting
** __tls_get_addr avoids that.  ASAN_OPTIONS still overrides this; in a
** build without sanitizers the function is never called.
*/
const char *__asan_default_options(void);
__attribute__((visibility("default"), used)) const char *__asan_default_options(void) {
  return "intercept_tls_get_addr=0";
}

/* ---- small helpers ------------------------------------------------------ */

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) {
    fprintf(stderr, "runner: out of memory\n");
    exit(2);
  }
  return p;
}

static void *xrealloc(void *p, size_t size) {
  p = realloc(p, size ? size : 1);
  if (!p) {
    fprintf(stderr, "runner: out of memory\n");
    exit(2);
  }
  return p;
}

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = xcalloc(n, 1);
  memcpy(d, s, n);
  return d;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Reads the whole file |path| into a new buffer (NUL-terminated); NULL on error. */
static char *read_all(const char *path, size_t *out_n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *b = xcalloc(cap + 1, 1);
  size_t got;
  while ((got = fread(b + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      cap *= 2;
      b = xrealloc(b, cap + 1);
    }
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(b);
    return NULL;
  }
  b[n] = 0;
  if (out_n) *out_n = n;
  return b;
}

static void rm_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char *p = NULL;
    if (asprintf(&p, "%s/%s", dir, e->d_name) < 0) continue;
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
      rm_tree(p);
    else
      unlink(p);
    free(p);
  }
  closedir(d);
  rmdir(dir);
}

/* Appends printf-style text to |buf| (size |cap|), truncating. */
static void appendf(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t cap, const char *fmt, ...) {
  size_t n = strlen(buf);
  if (n + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, cap - n, fmt, ap);
  va_end(ap);
}

/* Makes |s| one line: newlines become "; ", tabs and control bytes spaces,
** runs of blanks one space; trims, and cuts at REASON_MAX bytes. */
static void one_line(char *s) {
  char *out = s, *in = s;
  int space = 0;
  while (*in && out - s < REASON_MAX) {
    unsigned char c = (unsigned char)*in++;
    if (c == '\n') {
      while (out > s && out[-1] == ' ') out--;
      if (out > s && out[-1] != ':' && out[-1] != ';') *out++ = ';';
      space = 1;
      continue;
    }
    if (c < 0x20 || c == ' ') {
      space = 1;
      continue;
    }
    if (space && out > s) *out++ = ' ';
    space = 0;
    *out++ = (char)c;
  }
  *out = 0;
  while (out > s && (out[-1] == ' ' || out[-1] == ';')) *--out = 0;
}

/* ---- ops.tsv ------------------------------------------------------------- */

typedef struct op_row {
  char *name;
  int tier; /* 0: unknown */
  double atol;
} op_row;

static op_row *g_ops;
static size_t g_nops;

static int cmp_op_row(const void *a, const void *b) {
  return strcmp(((const op_row *)a)->name, ((const op_row *)b)->name);
}

/* Loads the test_name, tier and atol columns (found by the header row). */
static int load_ops(const char *path) {
  char *text = read_all(path, NULL);
  if (!text) {
    fprintf(stderr, "runner: cannot read %s: %s\n", path, strerror(errno));
    return -1;
  }
  int c_name = -1, c_tier = -1, c_atol = -1;
  size_t cap = 0;
  char *save = NULL;
  int first = 1;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *cols[32];
    int nc = 0;
    for (char *p = line; nc < 32;) {
      cols[nc++] = p;
      char *t = strchr(p, '\t');
      if (!t) break;
      *t = 0;
      p = t + 1;
    }
    for (int i = 0; i < nc; i++) {
      size_t l = strlen(cols[i]);
      if (l && cols[i][l - 1] == '\r') cols[i][l - 1] = 0;
    }
    if (first) {
      first = 0;
      for (int i = 0; i < nc; i++) {
        if (!strcmp(cols[i], "test_name")) c_name = i;
        if (!strcmp(cols[i], "tier")) c_tier = i;
        if (!strcmp(cols[i], "atol")) c_atol = i;
      }
      if (c_name < 0) {
        fprintf(stderr, "runner: %s: no test_name column\n", path);
        free(text);
        return -1;
      }
      continue;
    }
    if (c_name >= nc || !cols[c_name][0]) continue;
    if (g_nops == cap) {
      cap = cap ? cap * 2 : 1024;
      g_ops = xrealloc(g_ops, cap * sizeof *g_ops);
    }
    op_row *r = &g_ops[g_nops++];
    r->name = xstrdup(cols[c_name]);
    r->tier = c_tier >= 0 && c_tier < nc ? atoi(cols[c_tier]) : 0;
    r->atol = DEFAULT_ATOL;
    if (c_atol >= 0 && c_atol < nc && cols[c_atol][0]) {
      char *end;
      double v = strtod(cols[c_atol], &end);
      if (end != cols[c_atol] && v >= 0 && isfinite(v)) r->atol = v;
    }
  }
  free(text);
  qsort(g_ops, g_nops, sizeof *g_ops, cmp_op_row);
  return 0;
}

static const op_row *find_op(const char *name) {
  op_row key = {(char *)name, 0, 0};
  return g_nops ? bsearch(&key, g_ops, g_nops, sizeof *g_ops, cmp_op_row) : NULL;
}

/* ---- the graph's inputs and outputs, from model.onnx --------------------- */

/*
** A minimal protobuf reader, enough to learn the name and kind (tensor,
** sequence, map, optional, sparse tensor) of each graph input and output:
** ModelProto.graph = 7; GraphProto.initializer = 5, input = 11, output = 12;
** ValueInfoProto.name = 1, type = 2; TypeProto.tensor_type = 1,
** sequence_type = 4, map_type = 5, sparse_tensor_type = 8,
** optional_type = 9; TensorProto.name = 8.
*/
enum { KIND_UNKNOWN = 0, KIND_TENSOR = 1, KIND_SEQUENCE = 4, KIND_MAP = 5, KIND_SPARSE = 8, KIND_OPTIONAL = 9 };

#define SIG_MAX 256

typedef struct value_sig {
  char name[128];
  int kind;
  int elem_type; /* TensorProto.DataType of a tensor; 0 if unknown */
} value_sig;

typedef struct model_sig {
  int nin, nout;
  value_sig in[SIG_MAX], out[SIG_MAX];
} model_sig;

typedef struct pb {
  const unsigned char *p, *end;
} pb;

static int pb_varint(pb *b, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64 && b->p < b->end; shift += 7) {
    unsigned char c = *b->p++;
    *v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) return 0;
  }
  return -1;
}

/* Reads one field: its number, and for length-delimited fields the payload
** in |sub|, for varints the value in |g_varint|; other wire types are
** skipped.  -1 at malformed input. */
static uint64_t g_varint;

static int pb_next(pb *b, uint32_t *field, int *wt, pb *sub) {
  uint64_t key, v;
  if (pb_varint(b, &key) != 0) return -1;
  *field = (uint32_t)(key >> 3);
  *wt = (int)(key & 7);
  switch (*wt) {
    case 0: return pb_varint(b, &g_varint);
    case 1:
      if (b->end - b->p < 8) return -1;
      b->p += 8;
      return 0;
    case 5:
      if (b->end - b->p < 4) return -1;
      b->p += 4;
      return 0;
    case 2:
      if (pb_varint(b, &v) != 0 || v > (uint64_t)(b->end - b->p)) return -1;
      sub->p = b->p;
      sub->end = b->p + v;
      b->p += v;
      return 0;
    default: return -1;
  }
}

static void pb_copy_str(const pb *s, char *dst, size_t cap) {
  size_t n = (size_t)(s->end - s->p);
  if (n >= cap) n = cap - 1;
  memcpy(dst, s->p, n);
  dst[n] = 0;
}

static int parse_value_info(pb vi, value_sig *out) {
  uint32_t f;
  int wt;
  pb sub;
  out->name[0] = 0;
  out->kind = KIND_UNKNOWN;
  out->elem_type = 0;
  while (vi.p < vi.end) {
    if (pb_next(&vi, &f, &wt, &sub) != 0) return -1;
    if (wt != 2) continue;
    if (f == 1) pb_copy_str(&sub, out->name, sizeof out->name);
    if (f == 2) {
      pb ty = sub, inner;
      uint32_t tf;
      int twt;
      while (ty.p < ty.end) {
        if (pb_next(&ty, &tf, &twt, &inner) != 0) return -1;
        if (twt == 2 && (tf == 1 || tf == 4 || tf == 5 || tf == 8 || tf == 9)) out->kind = (int)tf;
        if (twt == 2 && tf == 1) { /* TypeProto.Tensor: elem_type = 1 */
          pb tt = inner, s3;
          uint32_t ef;
          int ewt;
          while (tt.p < tt.end) {
            if (pb_next(&tt, &ef, &ewt, &s3) != 0) return -1;
            if (ef == 1 && ewt == 0) out->elem_type = (int)g_varint;
          }
        }
      }
    }
  }
  return 0;
}

/* Fills |sig| from the model at |path|; -1 if it cannot be read or parsed. */
static int read_model_sig(const char *path, model_sig *sig) {
  size_t n;
  char *data = read_all(path, &n);
  sig->nin = sig->nout = 0;
  if (!data) return -1;
  pb m = {(const unsigned char *)data, (const unsigned char *)data + n}, g = {NULL, NULL}, sub;
  uint32_t f;
  int wt, rc = -1, have_graph = 0;
  while (m.p < m.end) {
    if (pb_next(&m, &f, &wt, &sub) != 0) goto done;
    if (f == 7 && wt == 2) {
      g = sub;
      have_graph = 1;
    }
  }
  if (!have_graph) goto done;
  /* Initializer names first: graph inputs that are initializers are not inputs. */
  char (*inits)[128] = NULL;
  int ninit = 0;
  pb scan = g;
  while (scan.p < scan.end) {
    if (pb_next(&scan, &f, &wt, &sub) != 0) goto done_inits;
    if (f == 5 && wt == 2) {
      pb t = sub, s2;
      uint32_t tf;
      int twt;
      inits = xrealloc(inits, (size_t)(ninit + 1) * sizeof *inits);
      inits[ninit][0] = 0;
      while (t.p < t.end) {
        if (pb_next(&t, &tf, &twt, &s2) != 0) goto done_inits;
        if (tf == 8 && twt == 2) pb_copy_str(&s2, inits[ninit], sizeof inits[ninit]);
      }
      ninit++;
    }
  }
  while (g.p < g.end) {
    if (pb_next(&g, &f, &wt, &sub) != 0) goto done_inits;
    if (wt != 2 || (f != 11 && f != 12)) continue;
    value_sig v;
    if (parse_value_info(sub, &v) != 0) goto done_inits;
    if (f == 11) {
      int init = 0;
      for (int i = 0; i < ninit; i++) init |= !strcmp(inits[i], v.name);
      if (init) continue;
      if (sig->nin == SIG_MAX) goto done_inits;
      sig->in[sig->nin++] = v;
    } else {
      if (sig->nout == SIG_MAX) goto done_inits;
      sig->out[sig->nout++] = v;
    }
  }
  rc = 0;
done_inits:
  free(inits);
done:
  free(data);
  return rc;
}

/* ---- comparing tensors --------------------------------------------------- */

#define DL_BOOL_CODE 6

static void dtype_name(DLDataType t, char *buf, size_t cap) {
  const char *base = "?";
  switch (t.code) {
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLFloat: base = "float"; break;
    case kDLBfloat: base = "bfloat"; break;
    case DL_BOOL_CODE: base = "bool"; break;
    default: break;
  }
  if (t.code == DL_BOOL_CODE && t.bits == 8)
    snprintf(buf, cap, "bool");
  else
    snprintf(buf, cap, "%s%u", base, (unsigned)t.bits);
  if (t.lanes != 1) appendf(buf, cap, "x%u", (unsigned)t.lanes);
}

static void shape_str(const DLTensor *t, char *buf, size_t cap) {
  buf[0] = 0;
  appendf(buf, cap, "(");
  for (int i = 0; i < t->ndim; i++) appendf(buf, cap, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
  appendf(buf, cap, t->ndim == 1 ? ",)" : ")");
}

static double half_to_double(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0)
    v = ldexp((double)man, -24);
  else if (exp == 31)
    v = man ? NAN : INFINITY;
  else
    v = ldexp((double)(man | 0x400), exp - 25);
  return sign ? -v : v;
}

static double bf16_to_double(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static double float_at(const DLTensor *t, const char *d, size_t i) {
  if (t->dtype.code == kDLBfloat) {
    uint16_t h;
    memcpy(&h, d + 2 * i, 2);
    return bf16_to_double(h);
  }
  switch (t->dtype.bits) {
    case 16: {
      uint16_t h;
      memcpy(&h, d + 2 * i, 2);
      return half_to_double(h);
    }
    case 32: {
      float f;
      memcpy(&f, d + 4 * i, 4);
      return f;
    }
    default: {
      double v;
      memcpy(&v, d + 8 * i, 8);
      return v;
    }
  }
}

/* Integer element |i| as int64 (|is_unsigned|: as uint64 bits). */
static uint64_t int_at(const DLTensor *t, const char *d, size_t i) {
  int sgn = t->dtype.code == kDLInt;
  switch (t->dtype.bits) {
    case 8: return sgn ? (uint64_t)(int64_t)((const int8_t *)d)[i] : ((const uint8_t *)d)[i];
    case 16: {
      uint16_t v;
      memcpy(&v, d + 2 * i, 2);
      return sgn ? (uint64_t)(int64_t)(int16_t)v : v;
    }
    case 32: {
      uint32_t v;
      memcpy(&v, d + 4 * i, 4);
      return sgn ? (uint64_t)(int64_t)(int32_t)v : v;
    }
    default: {
      uint64_t v;
      memcpy(&v, d + 8 * i, 8);
      return v;
    }
  }
}

static void int_str(const DLTensor *t, uint64_t v, char *buf, size_t cap) {
  if (t->dtype.code == kDLInt)
    snprintf(buf, cap, "%lld", (long long)(int64_t)v);
  else
    snprintf(buf, cap, "%llu", (unsigned long long)v);
}

/* Compares output |j| (|a|, the model's) with |e| (expected).  Returns 0
** when they match, else 1 with the reason in |why|. */
static int compare(int j, const DLTensor *a, const DLTensor *e, double atol, char *why, size_t cap) {
  char s1[256], s2[256];
  if (a->dtype.code != e->dtype.code || a->dtype.bits != e->dtype.bits || a->dtype.lanes != e->dtype.lanes) {
    dtype_name(a->dtype, s1, sizeof s1);
    dtype_name(e->dtype, s2, sizeof s2);
    why[0] = 0;
    appendf(why, cap, "output %d: dtype %s expected %s", j, s1, s2);
    return 1;
  }
  int same = a->ndim == e->ndim;
  for (int i = 0; same && i < a->ndim; i++) same = a->shape[i] == e->shape[i];
  if (!same) {
    shape_str(a, s1, sizeof s1);
    shape_str(e, s2, sizeof s2);
    why[0] = 0;
    appendf(why, cap, "output %d: shape %s expected %s", j, s1, s2);
    return 1;
  }
  size_t n = 1;
  for (int i = 0; i < e->ndim; i++) n *= (size_t)e->shape[i];
  if (n == 0) return 0;
  if (!a->data) {
    snprintf(why, cap, "output %d: no data", j);
    return 1;
  }
  const char *da = (const char *)a->data + a->byte_offset, *de = (const char *)e->data + e->byte_offset;
  size_t nbad = 0;
  if (e->dtype.code == kDLFloat || e->dtype.code == kDLBfloat) {
    size_t worst = 0, first_special = (size_t)-1;
    double worst_err = -1;
    for (size_t i = 0; i < n; i++) {
      double x = float_at(a, da, i), y = float_at(e, de, i), err = -1;
      int bad;
      if (isnan(x) || isnan(y))
        bad = isnan(x) != isnan(y);
      else if (isinf(x) || isinf(y))
        bad = x != y;
      else {
        err = fabs(x - y);
        bad = err > atol + RTOL * fabs(y);
      }
      if (!bad) continue;
      nbad++;
      if (err < 0) {
        if (first_special == (size_t)-1) first_special = i;
      } else if (err > worst_err) {
        worst_err = err;
        worst = i;
      }
    }
    if (!nbad) return 0;
    size_t at = worst_err >= 0 ? worst : first_special;
    snprintf(why, cap, "output %d: ", j);
    if (worst_err >= 0) appendf(why, cap, "max abs err %.2e at index %zu", worst_err, at);
    else appendf(why, cap, "NaN/inf mismatch at index %zu", at);
    appendf(why, cap, " (got %.7g, expected %.7g; %zu of %zu values differ)", float_at(a, da, at),
            float_at(e, de, at), nbad, n);
    return 1;
  }
  if (e->dtype.code == kDLInt || e->dtype.code == kDLUInt || e->dtype.code == DL_BOOL_CODE) {
    size_t first = 0;
    for (size_t i = 0; i < n; i++)
      if (int_at(a, da, i) != int_at(e, de, i)) {
        if (!nbad) first = i;
        nbad++;
      }
    if (!nbad) return 0;
    int_str(a, int_at(a, da, first), s1, sizeof s1);
    int_str(e, int_at(e, de, first), s2, sizeof s2);
    why[0] = 0;
    appendf(why, cap, "output %d: %zu of %zu values differ, first at index %zu (got %s, expected %s)", j, nbad,
            n, first, s1, s2);
    return 1;
  }
  dtype_name(e->dtype, s1, sizeof s1);
  snprintf(why, cap, "output %d: cannot compare %s values", j, s1);
  return 1;
}

/* ---- one test, in the child ---------------------------------------------- */

static int g_threads = 2;

/* Copies the message of |s| into |why| after |prefix|: the test directory
** and the compiler's "model.onnx: " annotation are dropped, and the lines
** after the first are kept, joined with "; ". */
static void status_reason(const char *prefix, const char *dir, const char *msg, char *why, size_t cap) {
  char *m = xstrdup(msg ? msg : "");
  size_t dl = strlen(dir);
  for (char *p; dl && (p = strstr(m, dir));) {
    size_t skip = dl + (p[dl] == '/');
    memmove(p, p + skip, strlen(p + skip) + 1);
  }
  char *start = m;
  while (!strncmp(start, "model.onnx: ", 12)) start += 12;
  snprintf(why, cap, "%s%s", prefix, start);
  free(m);
  one_line(why);
}

static int count_files(const char *dir, const char *stem) {
  int n = 0;
  for (;; n++) {
    char p[4096];
    snprintf(p, sizeof p, "%s/test_data_set_0/%s_%d.pb", dir, stem, n);
    if (!is_file(p)) return n;
  }
}

static int read_tensors(const char *dir, const char *stem, int n, DLTensor **ts, char *why, size_t cap) {
  for (int i = 0; i < n; i++) {
    char p[4096];
    snprintf(p, sizeof p, "%s/test_data_set_0/%s_%d.pb", dir, stem, i);
    mlc_status s = mlc_tensor_read_file(p, &ts[i]);
    if (s) {
      char pre[64];
      snprintf(pre, sizeof pre, "reading %s_%d.pb: ", stem, i);
      status_reason(pre, dir, mlc_status_message(s), why, cap);
      mlc_status_free(s);
      return -1;
    }
  }
  return 0;
}

/* The suite stores bfloat16 tensors as uint16 TensorProtos holding the bit
** patterns (numpy has no bfloat16): such a tensor of a value the graph
** declares bfloat16 (TensorProto.BFLOAT16 = 16) is taken as bfloat16. */
static void fix_bf16(DLTensor **ts, int n, const value_sig *vs, int nv) {
  for (int i = 0; i < n && i < nv; i++)
    if (ts[i] && vs[i].elem_type == 16 && ts[i]->dtype.code == kDLUInt && ts[i]->dtype.bits == 16)
      ts[i]->dtype.code = kDLBfloat;
}

/* Runs the test in |dir| with scratch directory |tmp|; 0 = pass, else the
** reason is in |why|. */
static int run_test(const char *dir, const char *tmp, double atol, char *why, size_t cap) {
  char model_path[4096], so_path[4096];
  snprintf(model_path, sizeof model_path, "%s/model.onnx", dir);
  snprintf(so_path, sizeof so_path, "%s/model.so", tmp);
  static model_sig sig;
  int have_sig = read_model_sig(model_path, &sig) == 0, non_tensor = 0;
  for (int i = 0; have_sig && i < sig.nin; i++) non_tensor |= sig.in[i].kind != KIND_TENSOR;
  for (int i = 0; have_sig && i < sig.nout; i++) non_tensor |= sig.out[i].kind != KIND_TENSOR;

  mlc_compile_options o;
  mlc_compile_options_init(&o);
  o.header_path = "";
  mlc_status s = mlc_compile_file(model_path, so_path, &o);
  if (non_tensor) {
    /* The compiler must refuse these with a clear error; either way the
    ** runner cannot feed or check them. */
    if (s)
      status_reason("compile: ", dir, mlc_status_message(s), why, cap);
    else
      snprintf(why, cap, "sequence/optional values not supported (by the runner; compile succeeded)");
    mlc_status_free(s);
    return 1;
  }
  if (s) {
    status_reason("compile: ", dir, mlc_status_message(s), why, cap);
    mlc_status_free(s);
    return 1;
  }

  int nin = count_files(dir, "input"), nout = count_files(dir, "output"), rc = 1;
  DLTensor **ins = xcalloc((size_t)nin + 1, sizeof *ins), **exp = xcalloc((size_t)nout + 1, sizeof *exp);
  mlc_model *m = NULL;
  mlc_session *x = NULL;
  if (read_tensors(dir, "input", nin, ins, why, cap) || read_tensors(dir, "output", nout, exp, why, cap)) goto done;
  if (have_sig) {
    fix_bf16(ins, nin, sig.in, sig.nin);
    fix_bf16(exp, nout, sig.out, sig.nout);
  }

  char err[1024] = "";
  if (mlc_model_load(so_path, &m, err, sizeof err) != MLC_RT_OK) {
    status_reason("load: ", dir, err, why, cap);
    goto done;
  }
  if (mlc_model_num_inputs(m) != nin) {
    snprintf(why, cap, "run: the model has %d inputs, the test %d", (int)mlc_model_num_inputs(m), nin);
    goto done;
  }
  if (mlc_model_num_outputs(m) != nout) {
    snprintf(why, cap, "output count %d expected %d", (int)mlc_model_num_outputs(m), nout);
    goto done;
  }
  for (int i = 0; have_sig && i < nin && i < sig.nin; i++) {
    const char *nm = mlc_model_input_name(m, i);
    if (!nm || strcmp(nm, sig.in[i].name) != 0) {
      snprintf(why, cap, "run: input %d is named \"%s\", the graph's \"%s\"", i, nm ? nm : "(null)",
               sig.in[i].name);
      one_line(why);
      goto done;
    }
  }
  mlc_session_options so;
  memset(&so, 0, sizeof so);
  so.num_threads = g_threads;
  if (mlc_session_create(m, &so, &x) != MLC_RT_OK) {
    status_reason("run: creating a session: ", dir, mlc_model_last_error(), why, cap);
    goto done;
  }
  for (int i = 0; i < nin; i++)
    if (mlc_session_set_input(x, i, ins[i]) != MLC_RT_OK) {
      char pre[64];
      snprintf(pre, sizeof pre, "run: input %d: ", i);
      status_reason(pre, dir, mlc_session_last_error(x), why, cap);
      goto done;
    }
  if (mlc_session_run(x) != MLC_RT_OK) {
    status_reason("run: ", dir, mlc_session_last_error(x), why, cap);
    goto done;
  }
  for (int j = 0; j < nout; j++) {
    const DLTensor *y = NULL;
    if (mlc_session_get_output(x, j, &y) != MLC_RT_OK || !y) {
      char pre[64];
      snprintf(pre, sizeof pre, "run: output %d: ", j);
      status_reason(pre, dir, mlc_session_last_error(x), why, cap);
      goto done;
    }
    if (compare(j, y, exp[j], atol, why, cap)) goto done;
  }
  rc = 0;
done:
  mlc_session_free(x);
  mlc_model_free(m);
  for (int i = 0; i < nin; i++) mlc_tensor_free(ins[i]);
  for (int j = 0; j < nout; j++) mlc_tensor_free(exp[j]);
  free(ins);
  free(exp);
  return rc;
}

/* ---- the parent: tests, jobs, results ------------------------------------- */

typedef enum { ST_NONE, ST_PASS, ST_FAIL, ST_SKIP } status_kind;

typedef struct test {
  char *name, *dir;
  int tier;
  double atol;
  status_kind st;
  int crash, timeout; /* kinds of FAIL that make the run fail */
  char *reason;
  double seconds; /* wall time of its child */
} test;

typedef struct job {
  int active;
  size_t ti;
  pid_t pid;
  int fd;
  double t0;
  char tmp[4096];
  char buf[4096];
  size_t len;
} job;

static volatile sig_atomic_t g_stop;

static void on_signal(int sig) { g_stop = sig; }

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int skipped_by_rule(const char *name, const char **why) {
  if (!fnmatch("test_bernoulli*", name, 0)) {
    *why = "output comes from numpy's random generator";
    return 1;
  }
  if (!fnmatch("test_training_dropout*", name, 0) && fnmatch("test_training_dropout_zero_ratio*", name, 0)) {
    *why = "output depends on the reference's random mask";
    return 1;
  }
  return 0;
}

/* The child: runs test |t| and writes its result line to |fd|. */
static void child_main(const test *t, const char *tmp, int fd) {
  char log[4200];
  snprintf(log, sizeof log, "%s/log.txt", tmp);
  int lf = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (lf >= 0) {
    dup2(lf, 1);
    dup2(lf, 2);
    close(lf);
  }
  int nf = open("/dev/null", O_RDONLY);
  if (nf >= 0) {
    dup2(nf, 0);
    close(nf);
  }
  setenv("TMPDIR", tmp, 1);
  char why[REASON_MAX + 64] = "";
  int rc = run_test(t->dir, tmp, t->atol, why, sizeof why);
  char line[REASON_MAX + 80];
  if (rc == 0)
    snprintf(line, sizeof line, "PASS\n");
  else {
    one_line(why);
    snprintf(line, sizeof line, "FAIL %s\n", why[0] ? why : "(no reason)");
  }
  size_t n = strlen(line), off = 0;
  while (off < n) {
    ssize_t w = write(fd, line + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (size_t)w;
  }
  close(fd);
  fflush(stdout);
  fflush(stderr);
  /* exit (not _exit): a leak checker, if any, runs at exit. */
  exit(0);
}

static int start_job(job *j, test *t, size_t ti, const char *root) {
  if (snprintf(j->tmp, sizeof j->tmp, "%s/%s", root, t->name) >= (int)sizeof j->tmp) {
    fprintf(stderr, "runner: path too long: %s/%s\n", root, t->name);
    return -1;
  }
  if (mkdir(j->tmp, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "runner: cannot create %s: %s\n", j->tmp, strerror(errno));
    return -1;
  }
  int p[2];
  if (pipe(p) != 0) {
    fprintf(stderr, "runner: pipe: %s\n", strerror(errno));
    return -1;
  }
  fcntl(p[0], F_SETFD, FD_CLOEXEC);
  fcntl(p[1], F_SETFD, FD_CLOEXEC);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "runner: fork: %s\n", strerror(errno));
    close(p[0]);
    close(p[1]);
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    close(p[0]);
    child_main(t, j->tmp, p[1]);
    _exit(0);
  }
  setpgid(pid, pid);
  close(p[1]);
  fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
  j->active = 1;
  j->ti = ti;
  j->pid = pid;
  j->fd = p[0];
  j->t0 = now_s();
  j->len = 0;
  j->buf[0] = 0;
  return 0;
}

static void drain(job *j) {
  for (;;) {
    if (j->len + 1 >= sizeof j->buf) {
      char tmp[256];
      if (read(j->fd, tmp, sizeof tmp) <= 0) return;
      continue;
    }
    ssize_t r = read(j->fd, j->buf + j->len, sizeof j->buf - 1 - j->len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return;
    j->len += (size_t)r;
    j->buf[j->len] = 0;
  }
}

/* The first line of the child's log that names a sanitizer or a fatal
** error, for a crash's reason; "" if none.  Prints the log's tail. */
static void crash_detail(const job *j, const char *name, char *out, size_t cap) {
  char p[4200];
  snprintf(p, sizeof p, "%s/log.txt", j->tmp);
  out[0] = 0;
  char *log = read_all(p, NULL);
  if (!log) return;
  static const char *keys[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                               "ERROR: UndefinedBehaviorSanitizer", "Assertion", "SUMMARY:"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0] && !out[0]; k++) {
    char *hit = strstr(log, keys[k]);
    if (!hit) continue;
    char *bol = hit;
    while (bol > log && bol[-1] != '\n') bol--;
    char *eol = strchr(hit, '\n');
    size_t n = eol ? (size_t)(eol - bol) : strlen(bol);
    if (n >= cap) n = cap - 1;
    memcpy(out, bol, n);
    out[n] = 0;
    one_line(out);
  }
  /* The tail of the log (last 40 lines) helps find the cause. */
  size_t len = strlen(log);
  if (len) {
    char *q = log + len;
    int lines = 0;
    while (q > log && lines <= 40)
      if (*--q == '\n') lines++;
    printf("---- %s: log tail ----\n%s%s%s---- end of %s log ----\n", name, q == log ? "" : "...\n",
           q == log ? q : q + 1, log[len - 1] == '\n' ? "" : "\n", name);
  }
  free(log);
}

static void finish_job(job *j, test *t, int status, int timed_out, int timeout_s) {
  drain(j);
  close(j->fd);
  j->active = 0;
  t->seconds = now_s() - j->t0;
  char *line = j->buf;
  char *nl = strchr(line, '\n');
  if (nl) *nl = 0;
  int have = !strncmp(line, "PASS", 4) || !strncmp(line, "FAIL", 4);
  char detail[512] = "", reason[REASON_MAX + 600] = "";
  if (timed_out) {
    t->st = ST_FAIL;
    t->timeout = 1;
    snprintf(reason, sizeof reason, "timeout (%d s)", timeout_s);
  } else if (WIFSIGNALED(status)) {
    t->st = ST_FAIL;
    t->crash = 1;
    crash_detail(j, t->name, detail, sizeof detail);
    snprintf(reason, sizeof reason, "crash: signal %d%s%s", WTERMSIG(status), detail[0] ? ": " : "", detail);
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !have) {
    t->st = ST_FAIL;
    t->crash = 1;
    crash_detail(j, t->name, detail, sizeof detail);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    snprintf(reason, sizeof reason, "crash: exit %d %s%s%s", code,
             have ? "after the test finished" : "without a result", detail[0] ? ": " : "", detail);
  } else if (!strncmp(line, "PASS", 4)) {
    t->st = ST_PASS;
  } else {
    t->st = ST_FAIL;
    snprintf(reason, sizeof reason, "%s", line[4] == ' ' ? line + 5 : "(no reason)");
  }
  one_line(reason);
  t->reason = xstrdup(reason);
  rm_tree(j->tmp);
}

static void print_result(FILE *f, const test *t) {
  static const char *names[] = {"?", "PASS", "FAIL", "SKIP"};
  fprintf(f, "%s %s%s%s\n", t->name, names[t->st], t->reason && t->reason[0] ? " " : "", t->reason ? t->reason : "");
}

/* ---- failure reasons, grouped --------------------------------------------- */

typedef struct group {
  char *key;
  int n;
} group;

static group *g_groups;
static size_t g_ngroups, g_capgroups;

static void add_group(const char *key) {
  for (size_t i = 0; i < g_ngroups; i++)
    if (!strcmp(g_groups[i].key, key)) {
      g_groups[i].n++;
      return;
    }
  if (g_ngroups == g_capgroups) {
    g_capgroups = g_capgroups ? g_capgroups * 2 : 64;
    g_groups = xrealloc(g_groups, g_capgroups * sizeof *g_groups);
  }
  g_groups[g_ngroups].key = xstrdup(key);
  g_groups[g_ngroups++].n = 1;
}

static int cmp_group(const void *a, const void *b) {
  const group *x = a, *y = b;
  if (x->n != y->n) return y->n - x->n;
  return strcmp(x->key, y->key);
}

/* Drops the quoted name after each |pat| ("node \"n\" " -> "node ") or the
** number ("node #3 " -> "node "), keeping |pat|'s first |keep| bytes. */
static void drop_after(char *k, const char *pat, size_t keep) {
  size_t pl = strlen(pat);
  for (char *p = k; (p = strstr(p, pat));) {
    char *q = p + pl;
    if (pat[pl - 1] == '"') {
      q = strchr(q, '"');
      if (!q) return;
      q++;
    } else {
      while (*q >= '0' && *q <= '9') q++;
    }
    while (*q == ' ') q++;
    memmove(p + keep, q, strlen(q) + 1);
    p += keep;
  }
}

/* Makes alike problems share one key: no node, graph, input or output
** names, and "(Op, opset N)" becomes "Op". */
static void normalize_key(char *k) {
  drop_after(k, "node \"", 0);
  drop_after(k, "node #", 0);
  drop_after(k, "in graph \"", 0);
  drop_after(k, "input \"", 6);
  drop_after(k, "output \"", 7);
  for (char *p = k; (p = strchr(p, '('));) {
    char *c = strstr(p, ", opset ");
    char *close = c ? strchr(c, ')') : NULL;
    int ok = c && close && !memchr(p, ' ', (size_t)(c - p));
    for (char *d = c ? c + 8 : NULL; ok && d < close; d++) ok = *d >= '0' && *d <= '9';
    if (!ok) {
      p++;
      continue;
    }
    memmove(c, close + 1, strlen(close + 1) + 1); /* drop ", opset N)" */
    memmove(p, p + 1, strlen(p + 1) + 1);         /* drop "(" */
  }
  for (char *p; (p = strstr(k, " :"));) memmove(p, p + 1, strlen(p + 1) + 1);
  one_line(k);
}

/* One test's failure counted once per distinct problem it reports. */
static void group_reason(const char *reason) {
  char *r = xstrdup(reason);
  char *keys[64];
  int nk = 0;
  if (!strncmp(r, "compile: ", 9) && strstr(r, "unsupported feature")) {
    /* "compile: model uses N unsupported features: a; b; c" */
    char *list = strstr(r, "features:");
    if (!list) list = strstr(r, "feature:");
    list = list ? strchr(list, ':') + 1 : r + 9;
    char *save = NULL;
    for (char *it = strtok_r(list, ";", &save); it && nk < 64; it = strtok_r(NULL, ";", &save)) {
      while (*it == ' ') it++;
      if (*it) keys[nk++] = it;
    }
  } else if (!strncmp(r, "output ", 7)) {
    char *paren = strstr(r, " at index");
    if (paren) *paren = 0;
    char *c = strstr(r, ": max abs err");
    if (c) strcpy(c, ": values differ");
    c = strstr(r, " values differ, first");
    if (c) strcpy(c, ": values differ");
    keys[nk++] = r;
  } else {
    keys[nk++] = r;
  }
  for (int i = 0; i < nk; i++) {
    char k[REASON_MAX + 64];
    snprintf(k, sizeof k, "%s%s", !strncmp(r, "compile: ", 9) && keys[i] != r ? "compile: " : "", keys[i]);
    normalize_key(k);
    int dup = 0;
    for (int q = 0; q < i; q++) {
      char k2[REASON_MAX + 64];
      snprintf(k2, sizeof k2, "%s%s", !strncmp(r, "compile: ", 9) && keys[q] != r ? "compile: " : "", keys[q]);
      normalize_key(k2);
      dup |= !strcmp(k, k2);
    }
    if (!dup) add_group(k);
  }
  free(r);
}

/* ---- main ---------------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr,
          "usage: runner SUITE_DIR OPS_TSV OUT_RESULTS [--only NAME|GLOB ...] [--jobs N]\n"
          "              [--timeout S] [--threads T] [--passing FILE] [--write-passing FILE]\n");
}

static char **load_names(const char *path, size_t *out_n) {
  char *text = read_all(path, NULL);
  *out_n = 0;
  if (!text) return NULL;
  char **names = NULL;
  size_t n = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    while (*line == ' ' || *line == '\t') line++;
    if (!*line || *line == '#') continue;
    char *end = line;
    while (*end && *end != ' ' && *end != '\t' && *end != '\r') end++;
    *end = 0;
    names = xrealloc(names, (n + 1) * sizeof *names);
    names[n++] = xstrdup(line);
  }
  free(text);
  *out_n = n;
  return names;
}

static test *find_test(test *ts, size_t n, const char *name) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(ts[mid].name, name);
    if (!c) return &ts[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

static int parse_int(const char *s, int lo, int hi, int *out) {
  char *end;
  errno = 0;
  long v = s ? strtol(s, &end, 10) : 0;
  if (!s || end == s || *end || errno || v < lo || v > hi) return -1;
  *out = (int)v;
  return 0;
}

/* The run's state lives in globals so that a leak checker in a test's
** child (a fork of this process) sees it as reachable. */
static test *g_ts;
static char **g_names, **g_only;

int main(int argc, char **argv) {
  const char *pos[3] = {NULL, NULL, NULL}, *passing = NULL, *write_passing = NULL;
  int npos = 0, timeout_s = 60;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = ncpu > 0 ? (int)(ncpu < MAX_JOBS ? ncpu : MAX_JOBS) : 1;
  size_t nonly = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--only")) {
      int any = 0;
      while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
        g_only = xrealloc(g_only, (nonly + 1) * sizeof *g_only);
        g_only[nonly++] = argv[++i];
        any = 1;
      }
      if (!any) {
        usage();
        return 2;
      }
    } else if (!strcmp(a, "--jobs")) {
      if (parse_int(i + 1 < argc ? argv[++i] : NULL, 1, MAX_JOBS, &jobs)) {
        usage();
        return 2;
      }
    } else if (!strcmp(a, "--timeout")) {
      if (parse_int(i + 1 < argc ? argv[++i] : NULL, 1, 86400, &timeout_s)) {
        usage();
        return 2;
      }
    } else if (!strcmp(a, "--threads")) {
      if (parse_int(i + 1 < argc ? argv[++i] : NULL, 0, 1024, &g_threads)) {
        usage();
        return 2;
      }
    } else if (!strcmp(a, "--passing") && i + 1 < argc) {
      passing = argv[++i];
    } else if (!strcmp(a, "--write-passing") && i + 1 < argc) {
      write_passing = argv[++i];
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage();
      return 0;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "runner: unknown option %s\n", a);
      usage();
      return 2;
    } else if (npos < 3) {
      pos[npos++] = a;
    } else {
      usage();
      return 2;
    }
  }
  if (npos != 3) {
    usage();
    return 2;
  }
  const char *suite = pos[0], *ops_tsv = pos[1], *out_path = pos[2];
  if (load_ops(ops_tsv) != 0) return 2;

  /* The tests: directories named test_*, sorted. */
  DIR *d = opendir(suite);
  if (!d) {
    fprintf(stderr, "runner: cannot open %s: %s\n", suite, strerror(errno));
    return 2;
  }
  size_t nnames = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, "test_", 5) != 0) continue;
    char *p = NULL;
    if (asprintf(&p, "%s/%s", suite, e->d_name) < 0) continue;
    int dir = is_dir(p);
    free(p);
    if (!dir) continue;
    if (nonly) {
      int hit = 0;
      for (size_t k = 0; k < nonly && !hit; k++) hit = !fnmatch(g_only[k], e->d_name, 0);
      if (!hit) continue;
    }
    g_names = xrealloc(g_names, (nnames + 1) * sizeof *g_names);
    g_names[nnames++] = xstrdup(e->d_name);
  }
  closedir(d);
  if (nnames) qsort(g_names, nnames, sizeof *g_names, cmp_str);
  if (!nnames) {
    fprintf(stderr, "runner: no test_* directories in %s%s\n", suite, nonly ? " match --only" : "");
    return 2;
  }
  g_ts = xcalloc(nnames, sizeof *g_ts);
  test *ts = g_ts;
  for (size_t i = 0; i < nnames; i++) {
    test *t = &ts[i];
    t->name = g_names[i];
    if (asprintf(&t->dir, "%s/%s", suite, g_names[i]) < 0) return 2;
    const op_row *r = find_op(t->name);
    t->tier = r ? r->tier : 0;
    t->atol = r ? r->atol : DEFAULT_ATOL;
  }

  const char *tmpenv = getenv("TMPDIR");
  char root[4096];
  snprintf(root, sizeof root, "%s/mlc-conformance-XXXXXX", tmpenv && *tmpenv ? tmpenv : "/tmp");
  if (!mkdtemp(root)) {
    fprintf(stderr, "runner: cannot create a temporary directory: %s\n", strerror(errno));
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  printf("conformance: %zu tests, %d jobs, timeout %d s, %d threads per session\n", nnames, jobs, timeout_s,
         g_threads);
  double t_start = now_s();
  job js[MAX_JOBS];
  memset(js, 0, sizeof js);
  size_t next = 0, printed = 0, done = 0;
  while (done < nnames && !g_stop) {
    /* Start jobs (skips are decided here, without a child). */
    for (int k = 0; k < jobs && next < nnames; k++) {
      if (js[k].active) continue;
      test *t = &ts[next];
      const char *why;
      if (skipped_by_rule(t->name, &why)) {
        t->st = ST_SKIP;
        t->reason = xstrdup(why);
        next++;
        done++;
        k--;
        continue;
      }
      if (start_job(&js[k], t, next, root) != 0) {
        t->st = ST_FAIL;
        t->crash = 1;
        t->reason = xstrdup("crash: the runner could not start the test");
        done++;
      }
      next++;
    }
    struct pollfd pfd[MAX_JOBS];
    int np = 0;
    for (int k = 0; k < jobs; k++)
      if (js[k].active) {
        pfd[np].fd = js[k].fd;
        pfd[np].events = POLLIN;
        np++;
      }
    if (np) poll(pfd, (nfds_t)np, 50);
    for (int k = 0; k < jobs; k++) {
      job *j = &js[k];
      if (!j->active) continue;
      drain(j);
      int status = 0;
      pid_t r = waitpid(j->pid, &status, WNOHANG);
      if (r == j->pid) {
        kill(-j->pid, SIGKILL); /* leftovers of the group, if any */
        finish_job(j, &ts[j->ti], status, 0, timeout_s);
        done++;
      } else if (now_s() - j->t0 > timeout_s) {
        kill(-j->pid, SIGKILL);
        waitpid(j->pid, &status, 0);
        finish_job(j, &ts[j->ti], status, 1, timeout_s);
        done++;
      }
    }
    while (printed < nnames && ts[printed].st != ST_NONE) print_result(stdout, &ts[printed++]);
    fflush(stdout);
  }
  if (g_stop) {
    for (int k = 0; k < jobs; k++)
      if (js[k].active) {
        kill(-js[k].pid, SIGKILL);
        waitpid(js[k].pid, NULL, 0);
        close(js[k].fd);
      }
    rm_tree(root);
    fprintf(stderr, "runner: interrupted by signal %d\n", (int)g_stop);
    return 1;
  }
  rm_tree(root);
  double elapsed = now_s() - t_start;

  /* Results file. */
  char *tmp_out = NULL;
  if (asprintf(&tmp_out, "%s.tmp", out_path) < 0) return 2;
  FILE *f = fopen(tmp_out, "w");
  if (!f) {
    fprintf(stderr, "runner: cannot write %s: %s\n", tmp_out, strerror(errno));
    return 2;
  }
  for (size_t i = 0; i < nnames; i++) print_result(f, &ts[i]);
  if (fclose(f) != 0 || rename(tmp_out, out_path) != 0) {
    fprintf(stderr, "runner: cannot write %s: %s\n", out_path, strerror(errno));
    return 2;
  }
  free(tmp_out);

  /* Counts per tier. */
  int cnt[5][5]; /* [tier 0..3, 4 = all][PASS FAIL SKIP crash timeout] */
  memset(cnt, 0, sizeof cnt);
  int ncrash = 0, ntimeout = 0, npass = 0, nfail = 0, nskip = 0;
  for (size_t i = 0; i < nnames; i++) {
    const test *t = &ts[i];
    int tier = t->tier >= 1 && t->tier <= 3 ? t->tier : 0;
    int col = t->st == ST_PASS ? 0 : t->st == ST_SKIP ? 2 : 1;
    cnt[tier][col]++;
    cnt[4][col]++;
    if (t->crash) cnt[tier][3]++, cnt[4][3]++, ncrash++;
    if (t->timeout) cnt[tier][4]++, cnt[4][4]++, ntimeout++;
    npass += col == 0;
    nfail += col == 1;
    nskip += col == 2;
  }
  printf("\nconformance: %zu tests in %.0f s\n", nnames, elapsed);
  printf("%-8s %6s %6s %6s %6s %6s %8s\n", "tier", "tests", "pass", "fail", "skip", "crash", "timeout");
  for (int tier = 1; tier <= 4; tier++) {
    int *c = cnt[tier == 4 ? 0 : tier];
    if (tier == 4 && c[0] + c[1] + c[2] == 0) continue;
    char label[16];
    snprintf(label, sizeof label, tier == 4 ? "no tier" : "tier%d", tier);
    printf("%-8s %6d %6d %6d %6d %6d %8d\n", label, c[0] + c[1] + c[2], c[0], c[1], c[2], c[3], c[4]);
  }
  printf("%-8s %6d %6d %6d %6d %6d %8d\n", "all", cnt[4][0] + cnt[4][1] + cnt[4][2], cnt[4][0], cnt[4][1],
         cnt[4][2], cnt[4][3], cnt[4][4]);

  /* summary.py beside ops.tsv. */
  char *ops_copy = xstrdup(ops_tsv), *slash = strrchr(ops_copy, '/'), *summary = NULL;
  if (slash)
    *slash = 0;
  else
    strcpy(ops_copy, ".");
  if (asprintf(&summary, "%s/summary.py", ops_copy) < 0) return 2;
  if (is_file("/usr/bin/python3") && is_file(summary)) {
    printf("\nsummary.py:\n");
    fflush(stdout);
    const char *av[] = {"/usr/bin/python3", summary, "--ops", ops_tsv, out_path, NULL};
    pid_t pid;
    if (posix_spawn(&pid, av[0], NULL, NULL, (char *const *)av, environ) == 0) waitpid(pid, NULL, 0);
  }
  free(summary);
  free(ops_copy);

  /* Most common failure reasons. */
  for (size_t i = 0; i < nnames; i++)
    if (ts[i].st == ST_FAIL && ts[i].reason) group_reason(ts[i].reason);
  if (g_ngroups) {
    qsort(g_groups, g_ngroups, sizeof *g_groups, cmp_group);
    printf("\nmost common failure reasons (tests):\n");
    for (size_t i = 0; i < g_ngroups && i < 40; i++) printf("  %4d  %s\n", g_groups[i].n, g_groups[i].key);
    if (g_ngroups > 40) printf("  ... %zu more\n", g_ngroups - 40);
  }

  /* The slowest tests, to keep the suite's time in view. */
  {
    size_t top[5];
    int ntop = 0;
    for (size_t i = 0; i < nnames; i++) {
      if (ts[i].seconds <= 0) continue;
      int at;
      if (ntop < 5)
        at = ntop++;
      else if (ts[i].seconds > ts[top[4]].seconds)
        at = 4;
      else
        continue;
      top[at] = i;
      for (; at > 0 && ts[top[at - 1]].seconds < ts[top[at]].seconds; at--) {
        size_t tmp = top[at - 1];
        top[at - 1] = top[at];
        top[at] = tmp;
      }
    }
    if (ntop) {
      printf("\nslowest tests:");
      for (int i = 0; i < ntop; i++) printf("%s %s %.1f s", i ? "," : "", ts[top[i]].name, ts[top[i]].seconds);
      printf("\n");
    }
  }

  /* Crashes and timeouts, listed again. */
  if (ncrash + ntimeout) {
    printf("\ncrashes and timeouts (%d):\n", ncrash + ntimeout);
    for (size_t i = 0; i < nnames; i++)
      if (ts[i].crash || ts[i].timeout) printf("  %s: %s\n", ts[i].name, ts[i].reason);
  }

  /* Regressions against the passing list; a crash or timeout of a listed
  ** test is counted once. */
  int nreg = 0, nbad = ncrash + ntimeout;
  if (passing) {
    size_t np;
    char **pn = load_names(passing, &np);
    if (!pn && !is_file(passing)) {
      fprintf(stderr, "runner: cannot read %s\n", passing);
      return 2;
    }
    size_t nmissing = 0;
    for (size_t i = 0; i < np; i++) {
      int selected = !nonly;
      for (size_t k = 0; k < nonly && !selected; k++) selected = !fnmatch(g_only[k], pn[i], 0);
      const test *t = find_test(ts, nnames, pn[i]);
      if (!t) {
        if (selected) {
          if (!nmissing) printf("\nwarning: tests of the passing list not in the suite:\n");
          printf("  %s\n", pn[i]);
          nmissing++;
        }
      } else if (t->st != ST_PASS) {
        if (!nreg) printf("\nREGRESSIONS (tests of %s that no longer pass):\n", passing);
        printf("  %s %s\n", t->name, t->reason ? t->reason : "");
        nreg++;
        if (!t->crash && !t->timeout) nbad++;
      }
      free(pn[i]);
    }
    free(pn);
    if (!nreg) printf("\nno regressions against %s (%zu tests)\n", passing, np);
  }

  if (write_passing) {
    FILE *wp = fopen(write_passing, "w");
    if (!wp) {
      fprintf(stderr, "runner: cannot write %s: %s\n", write_passing, strerror(errno));
      return 2;
    }
    fprintf(wp, "# Node conformance tests that pass; a test listed here that fails is a regression.\n");
    for (size_t i = 0; i < nnames; i++)
      if (ts[i].st == ST_PASS) fprintf(wp, "%s\n", ts[i].name);
    if (fclose(wp) != 0) {
      fprintf(stderr, "runner: cannot write %s\n", write_passing);
      return 2;
    }
    printf("wrote %d passing tests to %s\n", npass, write_passing);
  }

  printf("\nconformance results: PASS %d, FAIL %d, SKIP %d (crash %d, timeout %d, regressions %d)\n", npass,
         nfail, nskip, ncrash, ntimeout, nreg);
  printf("conformance: %d passed, %d failed\n", (int)nnames - nbad, nbad);
  for (size_t i = 0; i < nnames; i++) {
    free(ts[i].name);
    free(ts[i].dir);
    free(ts[i].reason);
  }
  free(g_ts);
  free(g_names);
  free(g_only);
  for (size_t i = 0; i < g_ngroups; i++) free(g_groups[i].key);
  free(g_groups);
  for (size_t i = 0; i < g_nops; i++) free(g_ops[i].name);
  free(g_ops);
  return nbad ? 1 : 0;
}
