/*
** harness_onnx.c: one-node ONNX cases (see harness.h): a protobuf writer for
** the model, compiling, running and comparing with the expected values.
*/
#include "tests/harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

/* ---- a protobuf writer ----------------------------------------------------------- */

typedef struct pb {
  unsigned char *d;
  size_t n, cap;
} pb;

static void pb_put(pb *b, const void *p, size_t n) {
  if (n == 0) return;
  if (b->n + n > b->cap) {
    size_t c = b->cap ? b->cap * 2 : 256;
    while (c < b->n + n) c *= 2;
    unsigned char *d = realloc(b->d, c);
    if (!d) abort(); /* test-only: out of memory */
    b->d = d;
    b->cap = c;
  }
  memcpy(b->d + b->n, p, n);
  b->n += n;
}

static void pb_varint(pb *b, uint64_t v) {
  unsigned char c[10];
  int k = 0;
  do {
    c[k] = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) c[k] |= 0x80;
    k++;
  } while (v);
  pb_put(b, c, (size_t)k);
}

static void pb_tag(pb *b, int field, int wt) { pb_varint(b, (uint64_t)field << 3 | (uint64_t)wt); }
static void pb_int(pb *b, int field, int64_t v) {
  pb_tag(b, field, 0);
  pb_varint(b, (uint64_t)v);
}
static void pb_bytes(pb *b, int field, const void *p, size_t n) {
  pb_tag(b, field, 2);
  pb_varint(b, n);
  pb_put(b, p, n);
}
static void pb_str(pb *b, int field, const char *s) { pb_bytes(b, field, s, strlen(s)); }
static void pb_msg(pb *b, int field, pb *sub) {
  pb_bytes(b, field, sub->d, sub->n);
  free(sub->d);
  memset(sub, 0, sizeof *sub);
}
static void pb_float(pb *b, int field, float f) {
  pb_tag(b, field, 5);
  pb_put(b, &f, 4);
}

int64_t mlc_th_numel_of(const ten *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

size_t mlc_th_tsize(int type) {
  switch (type) {
    case T_F64: case T_I64: return 8;
    case T_F32: case T_I32: return 4;
    default: return 1;
  }
}

void mlc_th_store(int type, void *p, int64_t i, double v) {
  switch (type) {
    case T_F32: ((float *)p)[i] = (float)v; break;
    case T_F64: ((double *)p)[i] = v; break;
    case T_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case T_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case T_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: ((uint8_t *)p)[i] = (uint8_t)v; break;
  }
}

DLDataType mlc_th_dl_of(int type) {
  DLDataType d = {kDLFloat, 32, 1};
  switch (type) {
    case T_F64: d.bits = 64; break;
    case T_I32: d.code = kDLInt; break;
    case T_I64: d.code = kDLInt, d.bits = 64; break;
    case T_BOOL: d.code = DL_BOOL, d.bits = 8; break;
    case T_U8: d.code = kDLUInt, d.bits = 8; break;
    default: break;
  }
  return d;
}

double mlc_th_load_dl(const DLTensor *t, int64_t i) {
  const char *p = (const char *)t->data + t->byte_offset;
  switch (t->dtype.code) {
    case kDLFloat: return t->dtype.bits == 64 ? ((const double *)p)[i] : ((const float *)p)[i];
    case kDLInt:
      return t->dtype.bits == 64 ? (double)((const int64_t *)p)[i] : ((const int32_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
  }
}

void *mlc_th_raw_of(const ten *t) {
  int64_t n = mlc_th_numel_of(t);
  void *d = calloc((size_t)(n ? n : 1), mlc_th_tsize(t->type));
  if (!d) abort();
  for (int64_t i = 0; i < n; i++) mlc_th_store(t->type, d, i, t->v[i]);
  return d;
}

static void value_info(pb *g, int field, const ten *t) {
  pb vi = {0}, tp = {0}, tt = {0}, sh = {0};
  for (int i = 0; i < t->rank; i++) {
    pb dim = {0};
    if (t->sym >> i & 1) {
      char nm[32];
      snprintf(nm, sizeof nm, "d%d", i); /* dims at one position share a name */
      pb_str(&dim, 2, nm);
    } else {
      pb_int(&dim, 1, t->dims[i]);
    }
    pb_msg(&sh, 1, &dim);
  }
  pb_int(&tt, 1, t->type);
  pb_msg(&tt, 2, &sh);
  pb_msg(&tp, 1, &tt);
  pb_str(&vi, 1, t->name);
  pb_msg(&vi, 2, &tp);
  pb_msg(g, field, &vi);
}

/* The serialized ModelProto of |c| (malloc'd bytes in *out). */
size_t mlc_th_model_bytes(const mcase *c, unsigned char **out) {
  pb m = {0}, g = {0}, nd = {0}, op = {0};
  for (int i = 0; i < c->nin; i++) pb_str(&nd, 1, c->in[i].name);
  for (int i = 0; i < c->nout; i++) pb_str(&nd, 2, c->out[i].name);
  pb_str(&nd, 3, c->node ? c->node : "node0");
  pb_str(&nd, 4, c->op);
  for (int i = 0; i < c->nattr; i++) {
    const attr *a = &c->at[i];
    pb at = {0};
    pb_str(&at, 1, a->name);
    switch (a->kind) {
      case 'f': pb_float(&at, 2, (float)a->f), pb_int(&at, 20, 1); break;
      case 's': pb_str(&at, 4, a->s), pb_int(&at, 20, 3); break;
      case 'I':
        for (int k = 0; k < a->n; k++) pb_int(&at, 8, a->ints[k]);
        pb_int(&at, 20, 7);
        break;
      default: pb_int(&at, 3, a->i), pb_int(&at, 20, 2); break;
    }
    pb_msg(&nd, 5, &at);
  }
  pb_msg(&g, 1, &nd);
  pb_str(&g, 2, c->name);
  for (int i = 0; i < c->nin; i++) {
    const ten *t = &c->in[i];
    if (!t->name[0] || !t->init) continue;
    pb tp = {0};
    for (int d = 0; d < t->rank; d++) pb_int(&tp, 1, t->dims[d]);
    pb_int(&tp, 2, t->type);
    pb_str(&tp, 8, t->name);
    void *raw = mlc_th_raw_of(t);
    pb_bytes(&tp, 9, raw, (size_t)mlc_th_numel_of(t) * mlc_th_tsize(t->type));
    free(raw);
    pb_msg(&g, 5, &tp);
  }
  for (int i = 0; i < c->nin; i++)
    if (c->in[i].name[0] && !c->in[i].init) value_info(&g, 11, &c->in[i]);
  for (int i = 0; i < c->nout; i++) value_info(&g, 12, &c->out[i]);
  pb_int(&m, 1, 8);
  pb_int(&op, 2, c->opset);
  pb_msg(&m, 8, &op);
  pb_msg(&m, 7, &g);
  *out = m.d;
  return m.n;
}

/* Writes |c|'s model and compiles it; returns the status (transferred). */
mlc_status mlc_th_compile_case(const mcase *c, char *so, size_t size) {
  char path[4096];
  unsigned char *bytes;
  size_t n = mlc_th_model_bytes(c, &bytes);
  snprintf(path, sizeof path, "%s/%s.onnx", mlc_th_tmpdir, c->name);
  snprintf(so, size, "%s/%s.so", mlc_th_tmpdir, c->name);
  int w = mlc_test_write_file(path, bytes, n);
  free(bytes);
  if (w) return mlc_make_status(MLC_IO_ERROR, "cannot write %s", path);
  return mlc_compile_file(path, so, NULL);
}

/* Compiles and runs |c|: *rs the run status (the session's last error in
** |err|); with |check|, compares every output. */
void mlc_th_run_model(const mcase *c, int check, mlc_rt_status *rs, char *err, size_t esize) {
  char so[4096];
  *rs = MLC_RT_INVALID_ARGUMENT;
  err[0] = 0;
  mlc_status st = mlc_th_compile_case(c, so, sizeof so);
  if (st) fprintf(stderr, "\n%s: compile: %s\n", c->name, mlc_status_message(st));
  CU_ASSERT_PTR_NULL(st);
  mlc_status_free(st);
  if (st) return;
  mlc_model *m = NULL;
  mlc_session *s = NULL;
  if (mlc_model_load(so, &m, err, esize) != MLC_RT_OK) {
    fprintf(stderr, "\n%s: load: %s\n", c->name, err);
    CU_FAIL("load");
    return;
  }
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  void *bufs[5] = {0};
  int k = 0;
  for (int i = 0; i < c->nin; i++) {
    const ten *t = &c->in[i];
    if (!t->name[0] || t->init) continue;
    bufs[i] = mlc_th_raw_of(t);
    DLTensor d = {bufs[i], {kDLCPU, 0}, t->rank, mlc_th_dl_of(t->type), (int64_t *)t->dims, NULL, 0};
    CU_ASSERT_EQUAL(mlc_session_set_input(s, k++, &d), MLC_RT_OK);
  }
  *rs = mlc_session_run(s);
  if (*rs != MLC_RT_OK) snprintf(err, esize, "%s", mlc_session_last_error(s));
  if (*rs != MLC_RT_OK && check) fprintf(stderr, "\n%s: run: %s\n", c->name, err);
  for (int j = 0; check && *rs == MLC_RT_OK && j < c->nout; j++) {
    const ten *want = &c->out[j];
    const DLTensor *got = NULL;
    CU_ASSERT_EQUAL(mlc_session_get_output(s, j, &got), MLC_RT_OK);
    if (!got) continue;
    DLDataType wd = mlc_th_dl_of(want->type);
    int ok = got->ndim == want->rank && got->dtype.code == wd.code && got->dtype.bits == wd.bits;
    for (int d = 0; ok && d < want->rank; d++) ok = got->shape[d] == want->dims[d];
    if (!ok) {
      fprintf(stderr, "\n%s: output %d: dtype or shape differs (ndim %d", c->name, j, got->ndim);
      for (int d = 0; d < got->ndim; d++) fprintf(stderr, "%s%lld", d ? ", " : ": ", (long long)got->shape[d]);
      fprintf(stderr, ")\n");
      CU_FAIL("output type");
      continue;
    }
    int64_t bad = 0, first = -1;
    double tol_r = want->type == T_F64 ? 1e-9 : 1e-4, tol_a = want->type == T_F64 ? 1e-9 : 1e-5;
    int isf = want->type == T_F32 || want->type == T_F64;
    for (int64_t e = 0; e < mlc_th_numel_of(want); e++) {
      double g = mlc_th_load_dl(got, e), x = want->v[e];
      int same = isf ? fabs(g - x) <= tol_a + tol_r * fabs(x) : g == x;
      if (!same && bad++ == 0) first = e;
    }
    if (bad)
      fprintf(stderr, "\n%s: output %d: %lld mismatches, first at %lld: got %.9g, want %.9g\n", c->name, j,
              (long long)bad, (long long)first, mlc_th_load_dl(got, first), want->v[first]);
    CU_ASSERT_EQUAL(bad, 0);
  }
  for (int i = 0; i < 5; i++) free(bufs[i]);
  mlc_session_free(s);
  mlc_model_free(m);
}

void mlc_th_run_case(const mcase *c) {
  mlc_rt_status rs;
  char err[512];
  mlc_th_run_model(c, 1, &rs, err, sizeof err);
  CU_ASSERT_EQUAL(rs, MLC_RT_OK);
}

/* Compiling |c| fails with |code| and a message containing |a| and |b|. */
void mlc_th_expect_error(const mcase *c, mlc_code code, const char *a, const char *b) {
  char so[4096];
  mlc_status st = mlc_th_compile_case(c, so, sizeof so);
  CU_ASSERT_PTR_NOT_NULL(st);
  if (!st) return;
  const char *msg = mlc_status_message(st);
  int ok = mlc_status_code(st) == code && strstr(msg, a) && (!b || strstr(msg, b));
  if (!ok) fprintf(stderr, "\n%s: unexpected error (%d): %s\n", c->name, (int)mlc_status_code(st), msg);
  CU_ASSERT(ok);
  mlc_status_free(st);
}

/* Compiling |c| works but running it fails with a message containing |a|. */
void mlc_th_expect_run_error(const mcase *c, const char *a) {
  mlc_rt_status rs;
  char err[512];
  mlc_th_run_model(c, 0, &rs, err, sizeof err);
  CU_ASSERT_NOT_EQUAL(rs, MLC_RT_OK);
  if (rs != MLC_RT_OK && !strstr(err, a)) {
    fprintf(stderr, "\n%s: unexpected run error: %s\n", c->name, err);
    CU_FAIL("run error");
  }
}

/* ---- building cases -------------------------------------------------------------- */

uint64_t mlc_th_rng = 0x9e3779b97f4a7c15ull;
double mlc_th_urand(void) {
  mlc_th_rng ^= mlc_th_rng << 13;
  mlc_th_rng ^= mlc_th_rng >> 7;
  mlc_th_rng ^= mlc_th_rng << 17;
  return (double)(mlc_th_rng >> 11) / 9007199254740992.0;
}

/* A tensor named |name| of |type| and shape; random values in [lo, hi)
** (integers: floor). */
ten mlc_th_tensor(const char *name, int type, int rank, const int64_t *dims, double lo, double hi) {
  ten t;
  memset(&t, 0, sizeof t);
  t.name = name;
  t.type = type;
  t.rank = rank;
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  int isf = type == T_F32 || type == T_F64;
  for (int64_t i = 0; i < mlc_th_numel_of(&t); i++) {
    double v = lo + (hi - lo) * mlc_th_urand();
    if (type == T_F32) v = (float)v;
    t.v[i] = isf ? v : floor(v);
  }
  return t;
}

ten mlc_th_output(const char *name, int type, int rank, const int64_t *dims) {
  return mlc_th_tensor(name, type, rank, dims, 0, 0);
}

/* A one-element tensor (rank 0, or rank 1 with |vec|) holding |v|. */
ten mlc_th_scalar(const char *name, int type, double v, int init, int vec) {
  int64_t one = 1;
  ten t = mlc_th_tensor(name, type, vec, &one, 0, 0);
  t.v[0] = v;
  t.init = init;
  return t;
}

attr mlc_th_aint(const char *name, int64_t v) {
  attr a = {name, 'i', v, 0, NULL, 0, {0}};
  return a;
}
attr mlc_th_aflt(const char *name, double v) {
  attr a = {name, 'f', 0, v, NULL, 0, {0}};
  return a;
}
attr mlc_th_astr(const char *name, const char *s) {
  attr a = {name, 's', 0, 0, s, 0, {0}};
  return a;
}
attr mlc_th_aints(const char *name, int n, const int64_t *v) {
  attr a = {name, 'I', 0, 0, NULL, n, {0}};
  for (int i = 0; i < n && i < 8; i++) a.ints[i] = v[i];
  return a;
}

mcase *mlc_th_new_case(const char *name, const char *op, int opset) {
  mcase *c = calloc(1, sizeof *c);
  if (!c) abort();
  c->name = name;
  c->op = op;
  c->opset = opset;
  return c;
}
