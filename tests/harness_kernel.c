/*
** harness_kernel.c: the one-op differential harness of the legalization
** test programs (see harness_kernel.h): element access, seeded data, a
** serial runtime table, building and loading kernels, comparing.
*/
#include "tests/harness_kernel.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/half.h"
#include "codegen/codegen.h"
#include "lower/lower.h"
#include "lower/tir.h"
#include "lower/tir_lower.h"
#include "runtime/rt_abi.h"
#include "tests/testutil.h"

int mlc_th_int_atol;

/* ---- element access (float16/bfloat16 by their bits) ---------------------- */

double mlc_th_ldd(const void *p, mlc_dtype t, int64_t i) {
  switch (t) {
    case F32: return ((const float *)p)[i];
    case F64: return ((const double *)p)[i];
    case F16: return mlc_f16_to_f32(((const uint16_t *)p)[i]);
    case BF16: return mlc_bf16_to_f32(((const uint16_t *)p)[i]);
    case I8: return ((const int8_t *)p)[i];
    case MLC_DTYPE_I16: return ((const int16_t *)p)[i];
    case I32: return ((const int32_t *)p)[i];
    case I64: return (double)((const int64_t *)p)[i];
    case U8: case BOOL: return ((const uint8_t *)p)[i];
    case MLC_DTYPE_U16: return ((const uint16_t *)p)[i];
    case MLC_DTYPE_U32: return ((const uint32_t *)p)[i];
    case MLC_DTYPE_U64: return (double)((const uint64_t *)p)[i];
    default: return 0;
  }
}

int64_t mlc_th_ldi(const void *p, mlc_dtype t, int64_t i) {
  switch (t) {
    case I64: return ((const int64_t *)p)[i];
    case MLC_DTYPE_U64: return (int64_t)((const uint64_t *)p)[i];
    default: return (int64_t)mlc_th_ldd(p, t, i);
  }
}

void mlc_th_st(void *p, mlc_dtype t, int64_t i, double v) {
  switch (t) {
    case F32: ((float *)p)[i] = (float)v; break;
    case F64: ((double *)p)[i] = v; break;
    case F16: ((uint16_t *)p)[i] = mlc_f32_to_f16((float)v); break;
    case BF16: ((uint16_t *)p)[i] = mlc_f32_to_bf16((float)v); break;
    case I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case MLC_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case MLC_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case MLC_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case MLC_DTYPE_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    default: break;
  }
}

int64_t mlc_th_numel(const mlc_type *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

size_t mlc_th_nbytes(const mlc_type *t) { return (size_t)mlc_th_numel(t) * mlc_dtype_size(t->dtype); }
int mlc_th_nattrs_of(const tcase *tc) {
  int n = 0;
  while (n < 12 && tc->attrs[n].name) n++;
  return n;
}

/* ---- random data ------------------------------------------------------------ */

uint64_t mlc_th_next(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}
double mlc_th_unit(uint64_t *s) { return (double)(mlc_th_next(s) >> 11) / 9007199254740992.0; }

static uint64_t seed_of(const char *name, int k) {
  uint64_t h = 1469598103934665603ull;
  for (const char *p = name; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  return (h ^ (uint64_t)(k + 1) * 0x9e3779b97f4a7c15ull) | 1;
}

void mlc_th_fill(const tcase *tc, int i, const mlc_type *t, void *data, uint64_t *rng) {
  if (tc->fixed[i]) {
    for (int64_t k = 0; k < mlc_th_numel(t); k++) mlc_th_st(data, t->dtype, k, tc->fixed[i][k]);
    return;
  }
  if (tc->gen) {
    tc->gen(tc, i, t, data, rng);
    return;
  }
  double lo = tc->lo || tc->hi ? tc->lo : -2, hi = tc->lo || tc->hi ? tc->hi : 2;
  int64_t ilo = tc->ilo || tc->ihi ? tc->ilo : -9, ihi = tc->ilo || tc->ihi ? tc->ihi : 9;
  if (mlc_dtype_is_int(t->dtype) && !mlc_dtype_is_signed(t->dtype) && ilo < 0) ilo = 0;
  int64_t n = mlc_th_numel(t);
  for (int64_t k = 0; k < n; k++) {
    if (t->dtype == BOOL)
      mlc_th_st(data, BOOL, k, (double)(mlc_th_next(rng) & 1));
    else if (mlc_dtype_is_int(t->dtype) || tc->ints)
      mlc_th_st(data, t->dtype, k, (double)(ilo + (int64_t)(mlc_th_next(rng) % (uint64_t)(ihi - ilo + 1))));
    else
      mlc_th_st(data, t->dtype, k, lo + (hi - lo) * mlc_th_unit(rng));
  }
}

/* ---- the serial runtime the kernels call -------------------------------------- */

static char rt_error[512];

static int rt_parallel_for(mlc_rt_ctx *ctx, int64_t n, mlc_rt_parallel_body body, void *closure) {
  (void)ctx;
  return n > 0 ? body(0, n, closure) : 0;
}
static void *rt_ws_alloc(mlc_rt_ctx *ctx, uint64_t size) {
  (void)ctx;
  void *p = NULL;
  return posix_memalign(&p, 64, size ? (size_t)size : 1) ? NULL : p;
}
static void rt_ws_free(mlc_rt_ctx *ctx, void *p) {
  (void)ctx;
  free(p);
}
static int rt_set_error(mlc_rt_ctx *ctx, const char *msg) {
  (void)ctx;
  snprintf(rt_error, sizeof rt_error, "%s", msg ? msg : "");
  return -1;
}

static int rt_check_failed(mlc_rt_ctx *ctx, const char *op, const char *msg, int64_t v0, int64_t v1,
                           int64_t v2) {
  (void)ctx;
  snprintf(rt_error, sizeof rt_error, "%s: %s (%lld, %lld, %lld)", op ? op : "", msg ? msg : "", (long long)v0,
           (long long)v1, (long long)v2);
  return -1;
}

static const mlc_rt_api rt_api = {rt_parallel_for, rt_ws_alloc, rt_ws_free, rt_set_error, rt_check_failed};
static mlc_rt_ctx rt_ctx = {&rt_api};

static DLDataType dl_type(mlc_dtype t) {
  DLDataType d = {kDLFloat, (uint8_t)(mlc_dtype_size(t) * 8), 1};
  if (t == BF16) d.code = kDLBfloat;
  else if (mlc_dtype_is_float(t)) d.code = kDLFloat;
  else if (t == BOOL || !mlc_dtype_is_signed(t)) d.code = kDLUInt;
  else d.code = kDLInt;
  return d;
}

static DLTensor dl_tensor(void *data, const mlc_type *t, int64_t *shape) {
  DLTensor x;
  memset(&x, 0, sizeof x);
  for (int i = 0; i < t->rank; i++) shape[i] = t->dims[i];
  x.data = data;
  x.device.device_type = kDLCPU;
  x.ndim = t->rank;
  x.dtype = dl_type(t->dtype);
  x.shape = shape;
  return x;
}

/* ---- building kernels ------------------------------------------------------------ */

static char *tmpdir;
static mlc_target *target;
static int nbuilt;
static int print_tir;
static int vectorize_all; /* MLC_TEST_VECTORIZE: see load_module */

int mlc_th_kernel_init(void) {
  tmpdir = mlc_test_tmpdir();
  mlc_status s = mlc_target_host(&target);
  if (s) fprintf(stderr, "host target: %s\n", mlc_status_message(s));
  mlc_status_free(s);
  const char *p = getenv("MLC_TEST_PRINT_TIR");
  print_tir = p && *p && strcmp(p, "0") != 0;
  p = getenv("MLC_TEST_VECTORIZE");
  vectorize_all = p && *p && strcmp(p, "0") != 0;
  return tmpdir && target ? 0 : 1;
}

int mlc_th_kernel_clean(void) {
  mlc_target_destroy(target);
  target = NULL;
  if (tmpdir) rmdir(tmpdir);
  free(tmpdir);
  tmpdir = NULL;
  return 0;
}

static void print_module(const mlc_tir_module *tm) {
  mlc_strbuf sb = MLC_STRBUF_INIT;
  mlc_tir_print_module(tm, &sb);
  fprintf(stderr, "%s\n", mlc_sb_str(&sb));
  mlc_sb_fini(&sb);
}

/* Marks every serial innermost loop of |s| with a constant extent of 2 to
** MLC_TIR_MAX_LANES vectorized; nonzero if |s| holds a loop. */
static int mark_innermost(mlc_tir_stmt *s) {
  if (!s) return 0;
  int r = 0;
  switch (s->kind) {
    case MLC_TIR_FOR:
      if (!mark_innermost(s->loop.body) && s->loop.kind == MLC_TIR_FOR_SERIAL &&
          s->loop.extent->kind == MLC_TIR_INT_IMM && s->loop.extent->int_value >= 2 &&
          s->loop.extent->int_value <= MLC_TIR_MAX_LANES)
        s->loop.kind = MLC_TIR_FOR_VECTORIZED;
      return 1;
    case MLC_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++) r |= mark_innermost(s->seq.stmts[i]);
      return r;
    case MLC_TIR_IF: return mark_innermost(s->if_.then_s) | mark_innermost(s->if_.else_s);
    case MLC_TIR_ALLOCATE: return mark_innermost(s->alloc.body);
    case MLC_TIR_BLOCK: return mark_innermost(s->block.init) | mark_innermost(s->block.body);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return 0;
  }
  return 0;
}

/* With MLC_TEST_VECTORIZE=1, the innermost loops of every lowered function
** of |tm| are marked vectorized and the vectorize pass runs on them: the
** cases then check explicitly vectorized kernels (where the pass takes the
** loop) against their references. */
static mlc_status vectorize_innermost(mlc_tir_module *tm) {
  for (int i = 0; i < tm->nfuncs; i++) {
    mark_innermost(tm->funcs[i]->body);
    MLC_RETURN_IF_ERROR(mlc_tir_vectorize_func(tm, tm->funcs[i]));
    MLC_RETURN_IF_ERROR(mlc_tir_verify_func(tm->funcs[i]));
  }
  return NULL;
}

/* Lowers |tm| (verifying after every pass), compiles it and loads it; the
** dlopen handle, or NULL after a failed assertion. */
static void *load_module(mlc_tir_module *tm, const char *name) {
  char obj[4200], so[4200], cmd[9000];
  int k = nbuilt++;
  snprintf(obj, sizeof obj, "%s/k%d.o", tmpdir, k);
  snprintf(so, sizeof so, "%s/k%d.so", tmpdir, k);
  mlc_tir_lower_options lo = {0, 0, 1};
  mlc_status s = mlc_tir_lower_module(tm, &lo);
  if (!s && vectorize_all) s = vectorize_innermost(tm);
  if (s) {
    fprintf(stderr, "\n%s: lower: %s\n", name, mlc_status_message(s));
    print_module(tm);
  } else if (print_tir) {
    print_module(tm);
  }
  if (!s) s = mlc_cg_build(tm, target, obj);
  if (s) {
    fprintf(stderr, "\n%s: codegen: %s\n", name, mlc_status_message(s));
    print_module(tm);
  }
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  if (s) return NULL;
  snprintf(cmd, sizeof cmd, "cc -shared -o '%s' '%s' -lm", so, obj);
  int rc = system(cmd);
  CU_ASSERT_EQUAL(rc, 0);
  unlink(obj);
  void *h = rc == 0 ? dlopen(so, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (rc == 0 && !h) fprintf(stderr, "\n%s: dlopen: %s\n", name, dlerror());
  CU_ASSERT_PTR_NOT_NULL(h);
  unlink(so);
  return h;
}

/* ---- comparing ----------------------------------------------------------------- */

static void tolerances(const tcase *tc, mlc_dtype t, double *rtol, double *atol) {
  *rtol = 1e-5, *atol = 1e-6;
  if (t == F64) *rtol = 1e-12, *atol = 1e-12;
  if (t == F16) *rtol = 2e-3, *atol = 2e-3;
  if (t == BF16) *rtol = 1.6e-2, *atol = 1e-2;
  if (tc->rtol) *rtol = tc->rtol;
  if (tc->atol) *atol = tc->atol;
}

/* Number of elements of |got| that differ from |want|; prints the first few. */
static int64_t compare(const tcase *tc, int64_t batch, const mlc_type *ot, const void *want, const void *got) {
  int64_t n = mlc_th_numel(ot), bad = 0;
  double rtol, atol;
  tolerances(tc, ot->dtype, &rtol, &atol);
  for (int64_t i = 0; i < n; i++) {
    int ok;
    if (mlc_dtype_is_float(ot->dtype)) {
      double w = mlc_th_ldd(want, ot->dtype, i), g = mlc_th_ldd(got, ot->dtype, i);
      ok = (isnan(w) && isnan(g)) || w == g || fabs(w - g) <= atol + rtol * fabs(w);
      if (!ok && bad < 5)
        fprintf(stderr, "\n%s (n=%lld): element %lld: want %.9g, got %.9g", tc->name, (long long)batch,
                (long long)i, w, g);
    } else {
      int64_t w = mlc_th_ldi(want, ot->dtype, i), g = mlc_th_ldi(got, ot->dtype, i);
      ok = w == g || (mlc_th_int_atol && tc->atol && llabs(w - g) <= (int64_t)tc->atol);
      if (!ok && bad < 5)
        fprintf(stderr, "\n%s (n=%lld): element %lld: want %lld, got %lld", tc->name, (long long)batch,
                (long long)i, (long long)w, (long long)g);
    }
    bad += !ok;
  }
  if (bad) fprintf(stderr, "\n%s (n=%lld): %lld of %lld elements differ\n", tc->name, (long long)batch,
                   (long long)bad, (long long)n);
  return bad;
}

/* ---- running one case ------------------------------------------------------------ */

static mlc_origin origin_of(const tcase *tc) {
  mlc_origin o = {tc->name, "Test", 17, 0};
  return o;
}

/* The expected output for concrete args |at| / |in|: *out (malloc'd) and *ot. */
static int expected(const tcase *tc, int64_t batch, const mlc_type *at, void *const *in, mlc_type *ot,
                    int64_t *odims, void **out) {
  mlc_module *rm = NULL;
  mlc_func *f = NULL;
  mlc_value *args[4];
  int nouts = 0, ok = 0;
  mlc_origin o = origin_of(tc);
  *out = NULL;
  if (!MLC_TEST_OK(mlc_module_create(mlc_allocator_default(), &rm))) return 0;
  int built = MLC_TEST_OK(mlc_func_create(rm, "ref", &f));
  for (int i = 0; built && i < tc->nargs; i++)
    built = MLC_TEST_OK(mlc_func_add_param(f, NULL, &at[i], &args[i]));
  if (!built) {
    mlc_module_destroy(rm);
    return 0;
  }
  /* shape attributes name the batch symbol: the concrete call has its value */
  mlc_attr attrs[12];
  int64_t shape[MAXR];
  int na = mlc_th_nattrs_of(tc);
  memcpy(attrs, tc->attrs, sizeof attrs);
  for (int i = 0; i < na; i++)
    if ((strcmp(attrs[i].name, "shape") == 0 || strcmp(attrs[i].name, "sizes") == 0) && attrs[i].n <= MAXR) {
      for (int d = 0; d < attrs[i].n; d++) shape[d] = attrs[i].ints[d] == N_ ? batch : attrs[i].ints[d];
      attrs[i].ints = shape;
    }
  mlc_call_info ci = {rm, tc->op, tc->nargs, args, na, attrs, &o};
  mlc_type outs[MLC_MAX_OUTS];
  mlc_status s = mlc_graph_infer(&ci, outs, &nouts);
  if (s) fprintf(stderr, "\n%s: reference inference: %s\n", tc->name, mlc_status_message(s));
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  if (!s && nouts == 1) {
    *ot = outs[0];
    memcpy(odims, outs[0].dims, sizeof *odims * (size_t)outs[0].rank);
    ot->dims = odims;
    size_t nb = mlc_th_nbytes(ot);
    *out = calloc(nb ? nb : 1, 1);
    if (tc->ref) {
      tc->ref(tc, at, (const void *const *)in, ot, *out);
      ok = 1;
    } else {
      void *r = NULL;
      s = mlc_graph_eval(&ci, outs, 1, (const void *const *)in, &r);
      if (s) fprintf(stderr, "\n%s: reference evaluation: %s\n", tc->name, mlc_status_message(s));
      CU_ASSERT_PTR_NULL(s);
      mlc_status_free(s);
      if (!s) {
        memcpy(*out, r, nb);
        mlc_const_free(rm, r, nb);
        ok = 1;
      }
    }
  }
  mlc_module_destroy(rm);
  return ok;
}

/* Legalizes and compiles |tc|, then runs it for each batch size. */
void mlc_th_kernel_case(const tcase *tc) {
  mlc_module *gm = NULL;
  mlc_tir_module *tm = NULL;
  mlc_func *f = NULL;
  mlc_value *args[4], *out = NULL;
  mlc_origin o = origin_of(tc);
  if (!target) {
    CU_FAIL("no code generation target");
    return;
  }
  MLC_TEST_OK_FATAL(mlc_module_create(mlc_allocator_default(), &gm));
  mlc_test_hold(gm);
  MLC_TEST_OK_FATAL(mlc_tir_module_create(mlc_allocator_default(), &tm));
  mlc_test_hold(tm);
  if (tc->nbatch) {
    int64_t n = 0;
    MLC_TEST_OK_FATAL(mlc_module_sym(gm, "n", &n));
    CU_ASSERT_EQUAL(n, N_);
  }
  MLC_TEST_OK_FATAL(mlc_func_create(gm, "main", &f));
  for (int i = 0; i < tc->nargs; i++) {
    mlc_type t = {tc->args[i].dt, tc->args[i].rank, tc->args[i].dims};
    MLC_TEST_OK_FATAL(mlc_func_add_param(f, NULL, &t, &args[i]));
  }
  mlc_status s = mlc_graph_emit1(f, tc->op, args, tc->nargs, tc->attrs, mlc_th_nattrs_of(tc), &o, &out);
  if (s) fprintf(stderr, "\n%s: emit: %s\n", tc->name, mlc_status_message(s));
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  void *h = NULL;
  mlc_kernel_fn fn = NULL;
  mlc_binding *b = out ? out->def : NULL;
  if (!s && b) {
    MLC_TEST_OK_FATAL(mlc_func_add_ret(f, out));
    mlc_lower_options opt = {0, 1, 0};
    s = mlc_lower_legalize(gm, tm, &opt);
    if (s) fprintf(stderr, "\n%s: legalize: %s\n", tc->name, mlc_status_message(s));
    CU_ASSERT_PTR_NULL(s);
    mlc_status_free(s);
    if (!s) {
      CU_ASSERT_EQUAL(b->kind, MLC_CALL_TIR);
      CU_ASSERT_EQUAL(tm->nfuncs, 1);
      if (print_tir) print_module(tm);
      s = mlc_tir_verify_module(tm);
      if (s) {
        fprintf(stderr, "\n%s: verify: %s\n", tc->name, mlc_status_message(s));
        print_module(tm);
      }
      CU_ASSERT_PTR_NULL(s);
      mlc_status_free(s);
    }
    if (!s && b->kind == MLC_CALL_TIR) h = load_module(tm, tc->name);
    if (h) {
      *(void **)&fn = dlsym(h, b->callee);
      CU_ASSERT_PTR_NOT_NULL(fn);
    }
  }
  for (int r = 0; fn && r < (tc->nbatch ? tc->nbatch : 1); r++) {
    int64_t batch = tc->nbatch ? tc->batch[r] : 0;
    mlc_type at[4], ot;
    int64_t adims[4][MAXR], odims[64];
    void *in[4] = {0}, *want = NULL, *got = NULL;
    uint64_t rng = seed_of(tc->name, (int)batch);
    for (int i = 0; i < tc->nargs; i++) {
      at[i].dtype = tc->args[i].dt;
      at[i].rank = tc->args[i].rank;
      for (int d = 0; d < at[i].rank; d++) adims[i][d] = tc->args[i].dims[d] == N_ ? batch : tc->args[i].dims[d];
      at[i].dims = adims[i];
      size_t nb = mlc_th_nbytes(&at[i]);
      in[i] = calloc(nb ? nb : 1, 1);
      mlc_th_fill(tc, i, &at[i], in[i], &rng);
    }
    if (expected(tc, batch, at, in, &ot, odims, &want)) {
      size_t nb = mlc_th_nbytes(&ot);
      got = malloc(nb ? nb : 1);
      memset(got, 0xa5, nb ? nb : 1); /* poison: every element must be written */
      DLTensor t[5];
      int64_t shapes[5][MAXR + 64];
      void *kargs[5];
      int32_t codes[5] = {0};
      int nk = 0;
      for (int i = 0; i < tc->nargs; i++) {
        t[nk] = dl_tensor(in[i], &at[i], shapes[nk]);
        kargs[nk] = &t[nk];
        nk++;
      }
      t[nk] = dl_tensor(got, &ot, shapes[nk]);
      kargs[nk] = &t[nk];
      nk++;
      rt_error[0] = 0;
      int rc = fn(kargs, codes, nk, &rt_ctx);
      if (rc) fprintf(stderr, "\n%s (n=%lld): kernel failed: %s\n", tc->name, (long long)batch, rt_error);
      CU_ASSERT_EQUAL(rc, 0);
      if (rc == 0) {
        int64_t bad = compare(tc, batch, &ot, want, got);
        CU_ASSERT_EQUAL(bad, 0);
        if (bad && !print_tir) print_module(tm);
      }
    }
    for (int i = 0; i < tc->nargs; i++) free(in[i]);
    free(want);
    free(got);
  }
  if (h) dlclose(h);
  mlc_tir_module_destroy(tm);
  mlc_module_destroy(gm);
}


/* ---- C references ------------------------------------------------------------------------ */

int64_t mlc_th_attr_i(const tcase *tc, const char *name, int64_t dflt) {
  return mlc_attrs_int(tc->attrs, mlc_th_nattrs_of(tc), name, dflt);
}

/* attr |name| entry |i| (|dflt| when absent). */
int64_t mlc_th_attr_at(const tcase *tc, const char *name, int i, int64_t dflt) {
  const mlc_attr *a = mlc_attrs_find(tc->attrs, mlc_th_nattrs_of(tc), name);
  return a && a->kind == MLC_ATTR_INTS && i < a->n ? a->ints[i] : dflt;
}

/* Row-major offset of |idx| in |dims|. */
int64_t mlc_th_offset(const int64_t *dims, int rank, const int64_t *idx) {
  int64_t o = 0;
  for (int d = 0; d < rank; d++) o = o * dims[d] + idx[d];
  return o;
}

/* Advances the multi-index |idx| over |dims|; 0 when it wraps around. */
int mlc_th_advance(int64_t *idx, const int64_t *dims, int rank) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++idx[d] < dims[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

int mlc_th_any_zero(const int64_t *dims, int rank) {
  for (int d = 0; d < rank; d++)
    if (dims[d] == 0) return 1;
  return 0;
}
/* ---- for other harnesses -------------------------------------------------------- */

void *mlc_th_load_tir(mlc_tir_module *tm, const char *name) { return load_module(tm, name); }
mlc_rt_ctx *mlc_th_rt_ctx(void) { return &rt_ctx; }
const char *mlc_th_rt_error(void) { return rt_error; }
