/*
** harness_sched.c: a function and its scheduled form, run side by side.
*/
#include "tests/harness_sched.h"

#include <CUnit/CUnit.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/schedule/schedule.h"
#include "runtime/rt_abi.h"
#include "tests/harness_kernel.h"

#define MAXP 16

typedef int32_t (*kernel_fn)(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx);

static DLDataType dl_type(mlc_dtype t) {
  DLDataType d = {kDLFloat, (uint8_t)(mlc_dtype_size(t) * 8), 1};
  if (t == MLC_DTYPE_BF16) d.code = kDLBfloat;
  else if (mlc_dtype_is_float(t)) d.code = kDLFloat;
  else if (t == MLC_DTYPE_BOOL || !mlc_dtype_is_signed(t)) d.code = kDLUInt;
  else d.code = kDLInt;
  return d;
}

/* A header for |f| named |name| in |m| over the same body and parameters. */
static mlc_tir_func *alias(mlc_tir_module *m, const mlc_tir_func *f, const char *name) {
  mlc_tir_func *g = mlc_tir_func_new(m, name, f->nparams, f->params, f->body);
  if (!g) return NULL;
  for (int i = 0; i < f->nscalars; i++)
    if (mlc_tir_func_add_scalar(m, g, f->scalars[i].var, f->scalars[i].param, f->scalars[i].dim)) return NULL;
  if (mlc_tir_func_set_attr_bool(m, g, "tir.noalias", 1)) return NULL;
  return g;
}

static int64_t numel(const mlc_tir_buffer *b) {
  int64_t n = 1;
  for (int d = 0; d < b->rank; d++) {
    if (b->shape[d]->kind != MLC_TIR_INT_IMM) return -1;
    n *= b->shape[d]->int_value;
  }
  return n;
}

int64_t mlc_th_sched_diff(mlc_tir_module *m, const mlc_tir_func *ref, const mlc_tir_func *got, const char *name) {
  CU_ASSERT_EQUAL_FATAL(ref->nparams, got->nparams);
  if (ref->nparams > MAXP) {
    CU_FAIL("too many parameters");
    return -1;
  }
  /* A module of its own, sharing the nodes of |m| (and its id space). */
  mlc_tir_module *tm = NULL;
  mlc_status s = mlc_tir_module_create(mlc_allocator_default(), &tm);
  CU_ASSERT_PTR_NULL_FATAL(s);
  tm->num_vars = m->num_vars;
  tm->num_buffers = m->num_buffers;
  mlc_tir_func *a = alias(tm, ref, "ref_kernel"), *b = alias(tm, got, "sch_kernel");
  s = mlc_tir_module_add(tm, a);
  if (!s) s = mlc_tir_module_add(tm, b);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  void *h = s ? NULL : mlc_th_load_tir(tm, name);
  int64_t bad = -1;
  kernel_fn fa = NULL, fb = NULL;
  if (h) {
    *(void **)&fa = dlsym(h, "ref_kernel");
    *(void **)&fb = dlsym(h, "sch_kernel");
  }
  if (fa && fb) {
    void *da[MAXP], *db[MAXP];
    DLTensor ta[MAXP], tb[MAXP];
    int64_t shapes[MAXP][8];
    void *ka[MAXP], *kb[MAXP];
    int32_t codes[MAXP] = {0};
    uint64_t rng = 0x5eed;
    for (const char *p = name; *p; p++) rng = rng * 131 + (unsigned char)*p;
    int np = ref->nparams, ok = 1;
    for (int i = 0; i < np; i++) {
      const mlc_tir_buffer *pb = ref->params[i];
      int64_t n = numel(pb);
      if (n < 0 || pb->rank > 8) {
        fprintf(stderr, "\n%s: parameter %s has a symbolic shape\n", name, pb->name);
        ok = 0;
        da[i] = db[i] = NULL;
        continue;
      }
      size_t nb = (size_t)n * mlc_dtype_size(pb->dtype);
      da[i] = calloc(nb ? nb : 1, 1);
      db[i] = calloc(nb ? nb : 1, 1);
      for (int64_t k = 0; k < n; k++) {
        double v = mlc_dtype_is_float(pb->dtype) ? -2 + 4 * mlc_th_unit(&rng)
                                                 : (double)(int64_t)(mlc_th_next(&rng) % 7);
        mlc_th_st(da[i], pb->dtype, k, v);
      }
      memcpy(db[i], da[i], nb);
      for (int d = 0; d < pb->rank; d++) shapes[i][d] = pb->shape[d]->int_value;
      memset(&ta[i], 0, sizeof ta[i]);
      ta[i].device.device_type = kDLCPU;
      ta[i].ndim = pb->rank;
      ta[i].dtype = dl_type(pb->dtype);
      ta[i].shape = shapes[i];
      tb[i] = ta[i];
      ta[i].data = da[i];
      tb[i].data = db[i];
      ka[i] = &ta[i];
      kb[i] = &tb[i];
    }
    CU_ASSERT(ok);
    if (ok) {
      int ra = fa(ka, codes, np, mlc_th_rt_ctx());
      if (ra) fprintf(stderr, "\n%s: reference kernel failed: %s\n", name, mlc_th_rt_error());
      int rb = fb(kb, codes, np, mlc_th_rt_ctx());
      if (rb) fprintf(stderr, "\n%s: scheduled kernel failed: %s\n", name, mlc_th_rt_error());
      CU_ASSERT_EQUAL(ra, 0);
      CU_ASSERT_EQUAL(rb, 0);
      if (!ra && !rb) {
        bad = 0;
        for (int i = 0; i < np; i++) {
          const mlc_tir_buffer *pb = ref->params[i];
          int64_t n = numel(pb);
          for (int64_t k = 0; k < n; k++) {
            double x = mlc_th_ldd(da[i], pb->dtype, k), y = mlc_th_ldd(db[i], pb->dtype, k);
            int same = mlc_dtype_is_float(pb->dtype)
                           ? (isnan(x) && isnan(y)) || fabs(x - y) <= 1e-4 + 1e-4 * fabs(x)
                           : mlc_th_ldi(da[i], pb->dtype, k) == mlc_th_ldi(db[i], pb->dtype, k);
            if (!same) {
              if (bad < 5)
                fprintf(stderr, "\n%s: %s[%lld]: unscheduled %.9g, scheduled %.9g\n", name, pb->name,
                        (long long)k, x, y);
              bad++;
            }
          }
        }
      }
    }
    for (int i = 0; i < np; i++) {
      free(da[i]);
      free(db[i]);
    }
  } else {
    CU_FAIL("scheduled kernels not built");
  }
  if (h) dlclose(h);
  mlc_tir_module_destroy(tm);
  return bad;
}

int64_t mlc_th_sched_same(mlc_tir_module *m, const mlc_tir_func *ref, const mlc_tir_func *got, const char *name) {
  int64_t bad = mlc_th_sched_diff(m, ref, got, name);
  CU_ASSERT_EQUAL(bad, 0);
  return bad;
}

/* ---- sample functions ------------------------------------------------------------ */

static mlc_tir_iter_var iter(mlc_tir_module *m, mlc_tir_var *v, mlc_tir_iter_kind k, int64_t ext,
                             mlc_tir_var *loop) {
  mlc_tir_iter_var it = {v, k, mlc_tir_i64(m, 0), mlc_tir_i64(m, ext), mlc_tir_ref(m, loop)};
  return it;
}

mlc_tir_func *mlc_th_mm_relu(mlc_tir_module *m, int64_t n) {
  const int64_t dims[2] = {n, n};
  const mlc_dtype f32 = MLC_DTYPE_F32, i64 = MLC_DTYPE_I64;
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", f32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", f32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *C = mlc_tir_buffer_new_c(m, "C", f32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *Y = mlc_tir_buffer_new_c(m, "Y", f32, 2, dims, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_var *i = mlc_tir_var_new(m, "i", i64), *j = mlc_tir_var_new(m, "j", i64), *k = mlc_tir_var_new(m, "k", i64);
  mlc_tir_var *vi = mlc_tir_var_new(m, "vi", i64), *vj = mlc_tir_var_new(m, "vj", i64);
  mlc_tir_var *vk = mlc_tir_var_new(m, "vk", i64);
  mlc_tir_iter_var its[3] = {iter(m, vi, MLC_TIR_ITER_SPATIAL, n, i), iter(m, vj, MLC_TIR_ITER_SPATIAL, n, j),
                             iter(m, vk, MLC_TIR_ITER_REDUCE, n, k)};
  mlc_tir_expr *yij[2] = {mlc_tir_ref(m, vi), mlc_tir_ref(m, vj)};
  mlc_tir_expr *aik[2] = {mlc_tir_ref(m, vi), mlc_tir_ref(m, vk)};
  mlc_tir_expr *bkj[2] = {mlc_tir_ref(m, vk), mlc_tir_ref(m, vj)};
  mlc_tir_stmt *init = mlc_tir_store(m, Y, 2, yij, mlc_tir_float(m, f32, 0));
  mlc_tir_expr *prod = mlc_tir_mul(m, mlc_tir_load(m, A, 2, aik), mlc_tir_load(m, B, 2, bkj));
  mlc_tir_stmt *upd = mlc_tir_store(m, Y, 2, yij, mlc_tir_add(m, mlc_tir_load(m, Y, 2, yij), prod));
  mlc_tir_stmt *s1 = mlc_tir_block(m, "Y", 3, its, init, upd);
  s1 = mlc_tir_for(m, k, mlc_tir_i64(m, 0), mlc_tir_i64(m, n), MLC_TIR_FOR_SERIAL, NULL, s1);
  s1 = mlc_tir_for(m, j, mlc_tir_i64(m, 0), mlc_tir_i64(m, n), MLC_TIR_FOR_SERIAL, NULL, s1);
  s1 = mlc_tir_for(m, i, mlc_tir_i64(m, 0), mlc_tir_i64(m, n), MLC_TIR_FOR_SERIAL, NULL, s1);
  mlc_tir_var *i2 = mlc_tir_var_new(m, "i", i64), *j2 = mlc_tir_var_new(m, "j", i64);
  mlc_tir_var *vi2 = mlc_tir_var_new(m, "vi", i64), *vj2 = mlc_tir_var_new(m, "vj", i64);
  mlc_tir_iter_var its2[2] = {iter(m, vi2, MLC_TIR_ITER_SPATIAL, n, i2), iter(m, vj2, MLC_TIR_ITER_SPATIAL, n, j2)};
  mlc_tir_expr *cij[2] = {mlc_tir_ref(m, vi2), mlc_tir_ref(m, vj2)};
  mlc_tir_stmt *st = mlc_tir_store(m, C, 2, cij, mlc_tir_max(m, mlc_tir_load(m, Y, 2, cij), mlc_tir_float(m, f32, 0)));
  mlc_tir_stmt *s2 = mlc_tir_block(m, "C", 2, its2, NULL, st);
  s2 = mlc_tir_for(m, j2, mlc_tir_i64(m, 0), mlc_tir_i64(m, n), MLC_TIR_FOR_SERIAL, NULL, s2);
  s2 = mlc_tir_for(m, i2, mlc_tir_i64(m, 0), mlc_tir_i64(m, n), MLC_TIR_FOR_SERIAL, NULL, s2);
  mlc_tir_stmt *body = mlc_tir_allocate(m, Y, mlc_tir_seq2(m, s1, s2));
  mlc_tir_buffer *params[3] = {A, B, C};
  mlc_tir_func *f = mlc_tir_func_new(m, "mm_relu", 3, params, body);
  if (!f || mlc_tir_func_set_attr_str(m, f, "global_symbol", "mm_relu") ||
      mlc_tir_func_set_attr_bool(m, f, "tir.noalias", 1))
    return NULL;
  return f;
}

/* ---- text helpers ------------------------------------------------------------------ */

mlc_tir_module *mlc_th_tir_module(void) {
  mlc_tir_module *m = NULL;
  mlc_status s = mlc_tir_module_create(mlc_allocator_default(), &m);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  return m;
}

char *mlc_th_print_func(const mlc_tir_func *f) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_func(f, &b);
  CU_ASSERT(!b.oom);
  char *s = strdup(b.len ? mlc_sb_str(&b) : "");
  mlc_sb_fini(&b);
  return s;
}

char *mlc_th_print_trace(const mlc_sch *s) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_sch_print_trace(s, &b);
  CU_ASSERT(!b.oom);
  char *t = strdup(b.len ? mlc_sb_str(&b) : "");
  mlc_sb_fini(&b);
  return t;
}
