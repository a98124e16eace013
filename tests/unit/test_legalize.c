/*
** test_legalize.c: CUnit suites for legalization (lower/legalize.c and the
** rules of lower/compute/), checked differentially.
**
** Each case builds a one-op graph module over parameters, legalizes it into
** a TIR module, verifies the prim function, compiles it with the code
** generator into a shared object, loads it and calls the kernel on seeded
** random data through the runtime ABI (rt_abi.h, with a serial runtime table
** supplied by the harness, tests/harness_kernel.c).  The expected output comes from the graph's reference
** evaluator (mlc_graph_eval) on the same data, or, for ops it does not
** evaluate (conv, conv_transpose, pools, layer_norm), from a naive C
** reference below.  Symbolic batch dims are bound by calling one kernel with
** tensors of several batch sizes.  Integers compare exactly, floats with a
** relative and absolute tolerance chosen by dtype.
**
** MLC_TEST_PRINT_TIR=1 prints every legalized prim function.
*/
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "graph/graph.h"
#include "lower/lower.h"
#include "lower/tir.h"
#include "runtime/rt_abi.h"
#include "tests/harness_kernel.h"
#include "tests/testutil.h"


/* conv: y[n, m, o] = sum x[n, g*cg + c, o*s - p + k*d] * w[m, c, k] + bias[m] */
static void ref_conv(const tcase *tc, const mlc_type *at, const void *const *in, const mlc_type *ot, void *out) {
  const mlc_type *x = &at[0], *w = &at[1];
  int k = x->rank - 2;
  int64_t g = mlc_th_attr_i(tc, "groups", 1), cg = w->dims[1], mg = w->dims[0] / g;
  int64_t oi[MAXR] = {0}, ki[MAXR], xi[MAXR], wi[MAXR];
  int64_t n = mlc_th_numel(ot);
  for (int64_t e = 0; e < n; e++, mlc_th_advance(oi, ot->dims, ot->rank)) {
    double acc = tc->nargs > 2 ? mlc_th_ldd(in[2], at[2].dtype, oi[1]) : 0;
    for (int64_t c = 0; c < cg; c++) {
      memset(ki, 0, sizeof ki);
      do {
        int ok = 1;
        xi[0] = oi[0], xi[1] = oi[1] / mg * cg + c;
        wi[0] = oi[1], wi[1] = c;
        for (int i = 0; i < k; i++) {
          xi[2 + i] = oi[2 + i] * mlc_th_attr_at(tc, "strides", i, 1) - mlc_th_attr_at(tc, "pads", i, 0) +
                      ki[i] * mlc_th_attr_at(tc, "dilations", i, 1);
          wi[2 + i] = ki[i];
          ok &= xi[2 + i] >= 0 && xi[2 + i] < x->dims[2 + i];
        }
        if (ok) acc += mlc_th_ldd(in[0], x->dtype, mlc_th_offset(x->dims, x->rank, xi)) * mlc_th_ldd(in[1], w->dtype, mlc_th_offset(w->dims, w->rank, wi));
      } while (mlc_th_advance(ki, w->dims + 2, k));
    }
    mlc_th_st(out, ot->dtype, e, acc);
  }
}

/* conv_transpose, scattering: y[n, g*mg + mo, i*s - p + k*d] += x[n, ci, i] * w[ci, mo, k] */
static void ref_conv_transpose(const tcase *tc, const mlc_type *at, const void *const *in, const mlc_type *ot,
                               void *out) {
  const mlc_type *x = &at[0], *w = &at[1];
  int k = x->rank - 2;
  int64_t g = mlc_th_attr_i(tc, "groups", 1), cg = x->dims[1] / g, mg = w->dims[1];
  int64_t n = mlc_th_numel(ot);
  double *acc = calloc((size_t)(n ? n : 1), sizeof *acc);
  int64_t xi[MAXR] = {0}, ki[MAXR], wi[MAXR], yi[MAXR];
  if (!mlc_th_any_zero(x->dims, x->rank))
    do {
      double xv = mlc_th_ldd(in[0], x->dtype, mlc_th_offset(x->dims, x->rank, xi));
      for (int64_t mo = 0; mo < mg; mo++) {
        memset(ki, 0, sizeof ki);
        do {
          int ok = 1;
          yi[0] = xi[0], yi[1] = xi[1] / cg * mg + mo;
          wi[0] = xi[1], wi[1] = mo;
          for (int i = 0; i < k; i++) {
            yi[2 + i] = xi[2 + i] * mlc_th_attr_at(tc, "strides", i, 1) - mlc_th_attr_at(tc, "pads", i, 0) +
                        ki[i] * mlc_th_attr_at(tc, "dilations", i, 1);
            wi[2 + i] = ki[i];
            ok &= yi[2 + i] >= 0 && yi[2 + i] < ot->dims[2 + i];
          }
          if (ok) acc[mlc_th_offset(ot->dims, ot->rank, yi)] += xv * mlc_th_ldd(in[1], w->dtype, mlc_th_offset(w->dims, w->rank, wi));
        } while (mlc_th_advance(ki, w->dims + 2, k));
      }
    } while (mlc_th_advance(xi, x->dims, x->rank));
  int64_t oi[MAXR] = {0};
  for (int64_t e = 0; e < n; e++, mlc_th_advance(oi, ot->dims, ot->rank))
    mlc_th_st(out, ot->dtype, e, acc[e] + (tc->nargs > 2 ? mlc_th_ldd(in[2], at[2].dtype, oi[1]) : 0));
  free(acc);
}

/* max_pool / avg_pool by enumerating each window. */
static void ref_pool(const tcase *tc, const mlc_type *at, const void *const *in, const mlc_type *ot, void *out) {
  const mlc_type *x = &at[0];
  int k = x->rank - 2, is_max = tc->op == MLC_OP_MAX_POOL;
  int cip = (int)mlc_th_attr_i(tc, "count_include_pad", 0);
  int64_t kd[MAXR], oi[MAXR] = {0}, ki[MAXR], xi[MAXR], n = mlc_th_numel(ot);
  for (int i = 0; i < k; i++) kd[i] = mlc_th_attr_at(tc, "kernel", i, 1);
  for (int64_t e = 0; e < n; e++, mlc_th_advance(oi, ot->dims, ot->rank)) {
    double acc = is_max ? -INFINITY : 0;
    int64_t count = 0;
    memset(ki, 0, sizeof ki);
    do {
      int inside = 1, inpad = 1;
      xi[0] = oi[0], xi[1] = oi[1];
      for (int i = 0; i < k; i++) {
        int64_t pb = mlc_th_attr_at(tc, "pads", i, 0), pe = mlc_th_attr_at(tc, "pads", k + i, 0);
        xi[2 + i] = oi[2 + i] * mlc_th_attr_at(tc, "strides", i, 1) - pb + ki[i] * mlc_th_attr_at(tc, "dilations", i, 1);
        inside &= xi[2 + i] >= 0 && xi[2 + i] < x->dims[2 + i];
        inpad &= xi[2 + i] >= -pb && xi[2 + i] < x->dims[2 + i] + pe;
      }
      count += cip ? inpad : inside;
      if (inside) {
        double v = mlc_th_ldd(in[0], x->dtype, mlc_th_offset(x->dims, x->rank, xi));
        acc = is_max ? (v > acc ? v : acc) : acc + v;
      }
    } while (mlc_th_advance(ki, kd, k));
    mlc_th_st(out, ot->dtype, e, is_max ? acc : acc / (double)count);
  }
}

/* layer_norm over dims axis.. with scale and bias broadcast into them. */
static void ref_layer_norm(const tcase *tc, const mlc_type *at, const void *const *in, const mlc_type *ot,
                           void *out) {
  const mlc_type *x = &at[0];
  int axis = (int)mlc_th_attr_i(tc, "axis", x->rank - 1);
  double eps = mlc_attrs_float(tc->attrs, mlc_th_nattrs_of(tc), "epsilon", 1e-5);
  int64_t inner = 1, outer = 1;
  for (int d = 0; d < x->rank; d++) *(d < axis ? &outer : &inner) *= x->dims[d];
  for (int64_t o = 0; o < outer; o++) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; i++) mean += mlc_th_ldd(in[0], x->dtype, o * inner + i);
    mean /= (double)inner;
    for (int64_t i = 0; i < inner; i++) {
      double dv = mlc_th_ldd(in[0], x->dtype, o * inner + i) - mean;
      var += dv * dv;
    }
    var /= (double)inner;
    for (int64_t i = 0; i < inner; i++) {
      double p[2];
      for (int a = 0; a < 2; a++) { /* scale, bias: broadcast by their trailing dims */
        const mlc_type *t = &at[1 + a];
        int64_t off = 0, rem = i, st = 1;
        for (int d = x->rank - 1; d >= axis; d--) {
          int64_t id = rem % x->dims[d];
          rem /= x->dims[d];
          int td = d - (x->rank - t->rank);
          if (td < 0) continue;
          if (t->dims[td] != 1) off += id * st;
          st *= t->dims[td];
        }
        p[a] = mlc_th_ldd(in[1 + a], t->dtype, off);
      }
      double v = (mlc_th_ldd(in[0], x->dtype, o * inner + i) - mean) / sqrt(var + eps);
      mlc_th_st(out, ot->dtype, o * inner + i, v * p[0] + p[1]);
    }
  }
}

/* argmax/argmin as numpy does it: the first NaN wins. */
static void ref_arg_nan(const tcase *tc, const mlc_type *at, const void *const *in, const mlc_type *ot, void *out) {
  const mlc_type *x = &at[0];
  int axis = (int)mlc_th_attr_i(tc, "axis", 0), is_max = tc->op == MLC_OP_ARGMAX;
  int64_t outer = 1, inner = 1, ext = x->dims[axis];
  for (int d = 0; d < x->rank; d++)
    if (d != axis) *(d < axis ? &outer : &inner) *= x->dims[d];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t best = 0;
      for (int64_t j = 0; j < ext; j++) {
        double v = mlc_th_ldd(in[0], x->dtype, (o * ext + j) * inner + i);
        double bv = mlc_th_ldd(in[0], x->dtype, (o * ext + best) * inner + i);
        if (isnan(bv)) break;
        if (isnan(v) || (is_max ? v > bv : v < bv)) best = j;
      }
      mlc_th_st(out, ot->dtype, o * inner + i, (double)best);
    }
}

/* uniform data with every third element NaN */
static void gen_nans(const tcase *tc, int i, const mlc_type *t, void *data, uint64_t *rng) {
  (void)tc, (void)i;
  for (int64_t k = 0; k < mlc_th_numel(t); k++) mlc_th_st(data, t->dtype, k, mlc_th_next(rng) % 3 == 0 ? NAN : mlc_th_unit(rng));
}

/* random bits (integers of the full range) */
static void gen_bits(const tcase *tc, int i, const mlc_type *t, void *data, uint64_t *rng) {
  (void)tc, (void)i;
  for (size_t k = 0; k < mlc_th_nbytes(t); k++) ((unsigned char *)data)[k] = (unsigned char)(mlc_th_next(rng) >> 32);
}

/* take indices: in [-dim, dim) of the gathered axis (argument 0's attr axis). */
static int64_t take_extent;
static void gen_take(const tcase *tc, int i, const mlc_type *t, void *data, uint64_t *rng) {
  if (i == 0) {
    tcase plain = *tc;
    plain.gen = NULL;
    mlc_th_fill(&plain, i, t, data, rng);
    take_extent = t->dims[mlc_th_attr_i(tc, "axis", 0)];
    return;
  }
  for (int64_t k = 0; k < mlc_th_numel(t); k++)
    mlc_th_st(data, t->dtype, k, (double)((int64_t)(mlc_th_next(rng) % (uint64_t)(2 * take_extent)) - take_extent));
}

/* ---- reductions ------------------------------------------------------------------------ */

static void t_sum(void) {
  tcase a = {.name = "sum_axis1", .op = MLC_OP_SUM, .nargs = 1, .args = {{F32, 3, {3, 4, 5}}},
             .attrs = {AINTS("axes", 1), AINT("keepdims", 0)}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "sum_all_keep", .op = MLC_OP_SUM, .nargs = 1, .args = {{F32, 3, {2, 3, 4}}}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "sum_i8_wrap", .op = MLC_OP_SUM, .nargs = 1, .args = {{I8, 2, {3, 40}}},
             .attrs = {AINTS("axes", 1)}, .ilo = -100, .ihi = 100};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "sum_f16", .op = MLC_OP_SUM, .nargs = 1, .args = {{F16, 2, {4, 33}}},
             .attrs = {AINTS("axes", 1)}};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "sum_sym", .op = MLC_OP_SUM, .nargs = 1, .args = {{F32, 2, {N_, 8}}},
             .attrs = {AINTS("axes", 1), AINT("keepdims", 0)}, .nbatch = 3, .batch = {1, 3, 5}};
  mlc_th_kernel_case(&e);
  tcase g = {.name = "sum_empty_axis", .op = MLC_OP_SUM, .nargs = 1, .args = {{F32, 2, {0, 3}}},
             .attrs = {AINTS("axes", 0)}};
  mlc_th_kernel_case(&g);
  tcase h = {.name = "max_empty_axis", .op = MLC_OP_MAX, .nargs = 1, .args = {{I32, 2, {2, 0}}},
             .attrs = {AINTS("axes", 1), AINT("keepdims", 0)}};
  mlc_th_kernel_case(&h);
  tcase f = {.name = "sum_over_sym", .op = MLC_OP_SUM, .nargs = 1, .args = {{I32, 2, {N_, 3}}},
             .attrs = {AINTS("axes", 0)}, .nbatch = 3, .batch = {1, 4, 2}};
  mlc_th_kernel_case(&f);
}

static void t_mean_prod(void) {
  tcase a = {.name = "mean_axes02", .op = MLC_OP_MEAN, .nargs = 1, .args = {{F32, 3, {4, 3, 5}}},
             .attrs = {AINTS("axes", 0, 2)}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "mean_i32_trunc", .op = MLC_OP_MEAN, .nargs = 1, .args = {{I32, 2, {3, 5}}},
             .attrs = {AINTS("axes", 1), AINT("keepdims", 0)}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "mean_f64_scalar", .op = MLC_OP_MEAN, .nargs = 1, .args = {{F64, 2, {3, 7}}},
             .attrs = {AINT("keepdims", 0)}};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "prod_axis1", .op = MLC_OP_PROD, .nargs = 1, .args = {{F32, 2, {3, 4}}},
             .attrs = {AINTS("axes", 1)}, .lo = 0.5, .hi = 1.5};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "mean_sym", .op = MLC_OP_MEAN, .nargs = 1, .args = {{F32, 3, {N_, 2, 6}}},
             .attrs = {AINTS("axes", 0, 2)}, .nbatch = 2, .batch = {1, 3}};
  mlc_th_kernel_case(&e);
  tcase f = {.name = "prod_bf16", .op = MLC_OP_PROD, .nargs = 1, .args = {{BF16, 2, {2, 5}}},
             .attrs = {AINTS("axes", 1)}, .lo = 0.5, .hi = 1.5};
  mlc_th_kernel_case(&f);
}

static void t_max_min(void) {
  tcase a = {.name = "max_axis2", .op = MLC_OP_MAX, .nargs = 1, .args = {{F32, 3, {2, 3, 7}}},
             .attrs = {AINTS("axes", 2)}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "min_i32_axis0", .op = MLC_OP_MIN, .nargs = 1, .args = {{I32, 2, {5, 6}}},
             .attrs = {AINTS("axes", 0), AINT("keepdims", 0)}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "max_bool", .op = MLC_OP_MAX, .nargs = 1, .args = {{BOOL, 2, {3, 4}}},
             .attrs = {AINTS("axes", 1)}};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "min_u8_all", .op = MLC_OP_MIN, .nargs = 1, .args = {{U8, 3, {2, 3, 4}}},
             .ilo = 3, .ihi = 250};
  mlc_th_kernel_case(&d);
  tcase u1 = {.name = "max_u64", .op = MLC_OP_MAX, .nargs = 1, .args = {{MLC_DTYPE_U64, 2, {3, 9}}},
              .attrs = {AINTS("axes", 1)}, .gen = gen_bits};
  mlc_th_kernel_case(&u1);
  tcase u2 = {.name = "min_i64", .op = MLC_OP_MIN, .nargs = 1, .args = {{I64, 2, {3, 9}}},
              .attrs = {AINTS("axes", 1)}, .gen = gen_bits};
  mlc_th_kernel_case(&u2);
  tcase u3 = {.name = "mean_u32", .op = MLC_OP_MEAN, .nargs = 1, .args = {{MLC_DTYPE_U32, 2, {3, 9}}},
              .attrs = {AINTS("axes", 1)}, .gen = gen_bits};
  mlc_th_kernel_case(&u3);
  tcase u4 = {.name = "mean_i16", .op = MLC_OP_MEAN, .nargs = 1, .args = {{MLC_DTYPE_I16, 2, {3, 9}}},
              .attrs = {AINTS("axes", 1)}, .gen = gen_bits};
  mlc_th_kernel_case(&u4);
  tcase e = {.name = "max_f16", .op = MLC_OP_MAX, .nargs = 1, .args = {{F16, 2, {6, 5}}},
             .attrs = {AINTS("axes", 0)}};
  mlc_th_kernel_case(&e);
}

static void t_argreduce(void) {
  tcase a = {.name = "argmax_ties", .op = MLC_OP_ARGMAX, .nargs = 1, .args = {{F32, 2, {4, 6}}},
             .attrs = {AINT("axis", 1)}, .ints = 1, .ilo = 0, .ihi = 3};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "argmax_last", .op = MLC_OP_ARGMAX, .nargs = 1, .args = {{F32, 3, {3, 5, 2}}},
             .attrs = {AINT("axis", 1), AINT("select_last_index", 1), AINT("keepdims", 0)},
             .ints = 1, .ilo = 0, .ihi = 2};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "argmin_i32", .op = MLC_OP_ARGMIN, .nargs = 1, .args = {{I32, 2, {7, 3}}},
             .attrs = {AINT("axis", 0), AINT("keepdims", 0)}, .ilo = -2, .ihi = 2};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "argmin_last_f16", .op = MLC_OP_ARGMIN, .nargs = 1, .args = {{F16, 2, {3, 8}}},
             .attrs = {AINT("axis", 1), AINT("select_last_index", 1)}, .ints = 1, .ilo = -1, .ihi = 1};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "argmax_nan", .op = MLC_OP_ARGMAX, .nargs = 1, .args = {{F32, 2, {6, 5}}},
             .attrs = {AINT("axis", 1)}, .ref = ref_arg_nan, .gen = gen_nans};
  mlc_th_kernel_case(&e);
  tcase f = {.name = "argmin_nan_f64", .op = MLC_OP_ARGMIN, .nargs = 1, .args = {{F64, 2, {5, 6}}},
             .attrs = {AINT("axis", 0)}, .ref = ref_arg_nan, .gen = gen_nans};
  mlc_th_kernel_case(&f);
  tcase u = {.name = "argmax_u64", .op = MLC_OP_ARGMAX, .nargs = 1, .args = {{MLC_DTYPE_U64, 2, {4, 7}}},
             .attrs = {AINT("axis", 1)}, .gen = gen_bits};
  mlc_th_kernel_case(&u);
  tcase g = {.name = "argmax_sym", .op = MLC_OP_ARGMAX, .nargs = 1, .args = {{I8, 2, {N_, 9}}},
             .attrs = {AINT("axis", 1)}, .nbatch = 2, .batch = {2, 5}};
  mlc_th_kernel_case(&g);
}

/* ---- softmax, layer_norm ------------------------------------------------------------------ */

static void t_softmax(void) {
  tcase a = {.name = "softmax_last", .op = MLC_OP_SOFTMAX, .nargs = 1, .args = {{F32, 2, {3, 7}}},
             .lo = -10, .hi = 10};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "softmax_axis0", .op = MLC_OP_SOFTMAX, .nargs = 1, .args = {{F32, 2, {5, 3}}},
             .attrs = {AINT("axis", 0)}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "log_softmax_axis1", .op = MLC_OP_LOG_SOFTMAX, .nargs = 1, .args = {{F32, 3, {2, 3, 8}}},
             .attrs = {AINT("axis", 1)}, .lo = -5, .hi = 5};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "softmax_f16", .op = MLC_OP_SOFTMAX, .nargs = 1, .args = {{F16, 2, {4, 16}}}};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "softmax_sym", .op = MLC_OP_SOFTMAX, .nargs = 1, .args = {{F64, 2, {N_, 10}}},
             .nbatch = 3, .batch = {1, 2, 7}, .lo = -50, .hi = 50};
  mlc_th_kernel_case(&e);
  tcase f = {.name = "softmax_large", .op = MLC_OP_SOFTMAX, .nargs = 1, .args = {{F32, 1, {6}}},
             .lo = 500, .hi = 1000}; /* stable: no overflow */
  mlc_th_kernel_case(&f);
}

static void t_layer_norm(void) {
  tcase a = {.name = "layer_norm_last", .op = MLC_OP_LAYER_NORM, .nargs = 3,
             .args = {{F32, 3, {2, 3, 8}}, {F32, 1, {8}}, {F32, 1, {8}}}, .ref = ref_layer_norm,
             .rtol = 1e-4, .atol = 1e-5};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "layer_norm_axis1", .op = MLC_OP_LAYER_NORM, .nargs = 3,
             .args = {{F32, 3, {2, 4, 5}}, {F32, 2, {4, 5}}, {F32, 1, {5}}},
             .attrs = {AINT("axis", 1), AFLT("epsilon", 1e-3)}, .ref = ref_layer_norm,
             .rtol = 1e-4, .atol = 1e-5};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "layer_norm_sym_f16", .op = MLC_OP_LAYER_NORM, .nargs = 3,
             .args = {{F16, 2, {N_, 12}}, {F16, 1, {12}}, {F16, 1, {1}}}, .ref = ref_layer_norm,
             .nbatch = 2, .batch = {1, 3}, .rtol = 4e-3, .atol = 4e-3};
  mlc_th_kernel_case(&c);
}

/* ---- matmul -------------------------------------------------------------------------------- */

static void t_matmul(void) {
  tcase a = {.name = "matmul_2d", .op = MLC_OP_MATMUL, .nargs = 2, .args = {{F32, 2, {5, 7}}, {F32, 2, {7, 3}}}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "matmul_batch_bcast", .op = MLC_OP_MATMUL, .nargs = 2,
             .args = {{F32, 4, {2, 1, 4, 5}}, {F32, 3, {3, 5, 6}}}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "matmul_vec_mat", .op = MLC_OP_MATMUL, .nargs = 2, .args = {{F32, 1, {5}}, {F32, 3, {2, 5, 3}}}};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "matmul_mat_vec", .op = MLC_OP_MATMUL, .nargs = 2, .args = {{F64, 2, {4, 5}}, {F64, 1, {5}}}};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "matmul_dot", .op = MLC_OP_MATMUL, .nargs = 2, .args = {{F32, 1, {9}}, {F32, 1, {9}}}};
  mlc_th_kernel_case(&e);
  tcase f = {.name = "matmul_i32", .op = MLC_OP_MATMUL, .nargs = 2, .args = {{I32, 2, {3, 6}}, {I32, 2, {6, 4}}}};
  mlc_th_kernel_case(&f);
  tcase g = {.name = "matmul_f16", .op = MLC_OP_MATMUL, .nargs = 2, .args = {{F16, 2, {8, 16}}, {F16, 2, {16, 4}}},
             .rtol = 3e-3, .atol = 3e-3};
  mlc_th_kernel_case(&g);
  tcase k0 = {.name = "matmul_k0", .op = MLC_OP_MATMUL, .nargs = 2, .args = {{F32, 2, {2, 0}}, {F32, 2, {0, 3}}}};
  mlc_th_kernel_case(&k0);
  tcase h = {.name = "matmul_sym", .op = MLC_OP_MATMUL, .nargs = 2, .args = {{F32, 3, {N_, 4, 8}}, {F32, 2, {8, 3}}},
             .nbatch = 3, .batch = {1, 2, 3}};
  mlc_th_kernel_case(&h);
}

/* ---- conv, conv_transpose --------------------------------------------------------------------- */

static void t_conv(void) {
  tcase a = {.name = "conv2d_bias_pad", .op = MLC_OP_CONV, .nargs = 3,
             .args = {{F32, 4, {1, 3, 7, 7}}, {F32, 4, {4, 3, 3, 3}}, {F32, 1, {4}}},
             .attrs = {AINTS("pads", 1, 1, 1, 1)}, .ref = ref_conv};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "conv2d_groups_stride_dil", .op = MLC_OP_CONV, .nargs = 2,
             .args = {{F32, 4, {2, 4, 9, 8}}, {F32, 4, {6, 2, 3, 2}}},
             .attrs = {AINT("groups", 2), AINTS("strides", 2, 1), AINTS("dilations", 2, 2),
                       AINTS("pads", 1, 2, 3, 0)},
             .ref = ref_conv};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "conv1d_depthwise", .op = MLC_OP_CONV, .nargs = 2,
             .args = {{F32, 3, {1, 4, 10}}, {F32, 3, {4, 1, 3}}},
             .attrs = {AINT("groups", 4), AINTS("strides", 2), AINTS("pads", 1, 1)}, .ref = ref_conv};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "conv3d", .op = MLC_OP_CONV, .nargs = 3,
             .args = {{F32, 5, {1, 2, 5, 5, 4}}, {F32, 5, {3, 2, 2, 3, 2}}, {F32, 1, {3}}},
             .attrs = {AINTS("pads", 1, 0, 1, 0, 1, 1)}, .ref = ref_conv};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "conv2d_i32", .op = MLC_OP_CONV, .nargs = 2,
             .args = {{I32, 4, {1, 2, 5, 5}}, {I32, 4, {2, 2, 3, 3}}}, .attrs = {AINTS("pads", 0, 1, 2, 0)},
             .ref = ref_conv};
  mlc_th_kernel_case(&e);
  tcase f = {.name = "conv2d_sym", .op = MLC_OP_CONV, .nargs = 3,
             .args = {{F32, 4, {N_, 2, 6, 6}}, {F32, 4, {3, 2, 3, 3}}, {F32, 1, {3}}},
             .attrs = {AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1)}, .ref = ref_conv,
             .nbatch = 2, .batch = {1, 3}};
  mlc_th_kernel_case(&f);
  tcase g = {.name = "conv2d_f16", .op = MLC_OP_CONV, .nargs = 2,
             .args = {{F16, 4, {1, 3, 5, 5}}, {F16, 4, {2, 3, 3, 3}}}, .attrs = {AINTS("pads", 1, 1, 1, 1)},
             .ref = ref_conv, .rtol = 4e-3, .atol = 4e-3};
  mlc_th_kernel_case(&g);
}

static void t_conv_transpose(void) {
  tcase a = {.name = "convt2d_stride_outpad", .op = MLC_OP_CONV_TRANSPOSE, .nargs = 3,
             .args = {{F32, 4, {1, 3, 4, 4}}, {F32, 4, {3, 2, 3, 3}}, {F32, 1, {2}}},
             .attrs = {AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1), AINTS("output_padding", 1, 1)},
             .ref = ref_conv_transpose};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "convt1d_groups_dil", .op = MLC_OP_CONV_TRANSPOSE, .nargs = 2,
             .args = {{F32, 3, {2, 4, 5}}, {F32, 3, {4, 3, 3}}},
             .attrs = {AINT("groups", 2), AINTS("strides", 3), AINTS("dilations", 2), AINTS("pads", 2, 1)},
             .ref = ref_conv_transpose};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "convt2d_plain", .op = MLC_OP_CONV_TRANSPOSE, .nargs = 2,
             .args = {{F64, 4, {1, 2, 3, 3}}, {F64, 4, {2, 3, 2, 2}}}, .ref = ref_conv_transpose};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "convt2d_sym", .op = MLC_OP_CONV_TRANSPOSE, .nargs = 2,
             .args = {{F32, 4, {N_, 2, 3, 2}}, {F32, 4, {2, 2, 3, 2}}},
             .attrs = {AINTS("strides", 2, 3), AINTS("pads", 0, 1, 1, 0)}, .ref = ref_conv_transpose,
             .nbatch = 2, .batch = {1, 2}};
  mlc_th_kernel_case(&d);
}

/* ---- pooling ------------------------------------------------------------------------------------ */

static void t_pool(void) {
  tcase a = {.name = "max_pool_pad", .op = MLC_OP_MAX_POOL, .nargs = 1, .args = {{F32, 4, {1, 2, 7, 7}}},
             .attrs = {AINTS("kernel", 3, 3), AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1)}, .ref = ref_pool};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "max_pool_ceil", .op = MLC_OP_MAX_POOL, .nargs = 1, .args = {{F32, 4, {1, 1, 6, 6}}},
             .attrs = {AINTS("kernel", 3, 3), AINTS("strides", 2, 2), AINT("ceil_mode", 1)}, .ref = ref_pool,
             .lo = -3, .hi = -1};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "max_pool_dil", .op = MLC_OP_MAX_POOL, .nargs = 1, .args = {{F32, 4, {1, 2, 9, 9}}},
             .attrs = {AINTS("kernel", 2, 3), AINTS("dilations", 2, 3), AINTS("pads", 1, 0, 1, 2)}, .ref = ref_pool};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "max_pool_i8_1d", .op = MLC_OP_MAX_POOL, .nargs = 1, .args = {{I8, 3, {2, 3, 11}}},
             .attrs = {AINTS("kernel", 4), AINTS("strides", 3), AINTS("pads", 2, 2)}, .ref = ref_pool,
             .ilo = -120, .ihi = 120};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "avg_pool_exclude_pad", .op = MLC_OP_AVG_POOL, .nargs = 1, .args = {{F32, 4, {1, 2, 6, 6}}},
             .attrs = {AINTS("kernel", 3, 3), AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1)}, .ref = ref_pool};
  mlc_th_kernel_case(&e);
  tcase f = {.name = "avg_pool_include_pad_ceil", .op = MLC_OP_AVG_POOL, .nargs = 1,
             .args = {{F32, 4, {1, 1, 7, 8}}},
             .attrs = {AINTS("kernel", 3, 2), AINTS("strides", 2, 3), AINTS("pads", 1, 0, 1, 1),
                       AINT("ceil_mode", 1), AINT("count_include_pad", 1)},
             .ref = ref_pool};
  mlc_th_kernel_case(&f);
  tcase g = {.name = "avg_pool_ceil_exclude", .op = MLC_OP_AVG_POOL, .nargs = 1, .args = {{F32, 4, {1, 1, 4, 4}}},
             .attrs = {AINTS("kernel", 3, 3), AINTS("strides", 2, 2), AINT("ceil_mode", 1)}, .ref = ref_pool};
  mlc_th_kernel_case(&g);
  tcase h = {.name = "avg_pool_f16_sym", .op = MLC_OP_AVG_POOL, .nargs = 1, .args = {{F16, 4, {N_, 3, 5, 5}}},
             .attrs = {AINTS("kernel", 2, 2), AINTS("pads", 0, 0, 1, 1)}, .ref = ref_pool,
             .nbatch = 2, .batch = {1, 2}};
  mlc_th_kernel_case(&h);
  tcase i = {.name = "max_pool_3d", .op = MLC_OP_MAX_POOL, .nargs = 1, .args = {{F64, 5, {1, 1, 4, 5, 3}}},
             .attrs = {AINTS("kernel", 2, 2, 2), AINTS("pads", 1, 0, 0, 0, 1, 1)}, .ref = ref_pool};
  mlc_th_kernel_case(&i);
}

/* ---- data movement ------------------------------------------------------------------------------ */

static void t_reshape(void) {
  tcase a = {.name = "reshape_merge", .op = MLC_OP_RESHAPE, .nargs = 1, .args = {{F32, 3, {2, 3, 4}}},
             .attrs = {AINTS("shape", 3, 8)}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "reshape_split_i64", .op = MLC_OP_RESHAPE, .nargs = 1, .args = {{I64, 2, {6, 4}}},
             .attrs = {AINTS("shape", 2, 3, 2, 2)}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "reshape_sym_flatten", .op = MLC_OP_RESHAPE, .nargs = 1, .args = {{F32, 3, {N_, 3, 4}}},
             .attrs = {AINTS("shape", N_, 12)}, .nbatch = 3, .batch = {1, 2, 5}};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "reshape_sym_unflatten", .op = MLC_OP_RESHAPE, .nargs = 1, .args = {{F16, 2, {N_, 12}}},
             .attrs = {AINTS("shape", N_, 2, 6)}, .nbatch = 2, .batch = {1, 3}};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "reshape_sym_move", .op = MLC_OP_RESHAPE, .nargs = 1, .args = {{U8, 3, {2, N_, 3}}},
             .attrs = {AINTS("shape", 6, N_)}, .nbatch = 2, .batch = {1, 4}};
  mlc_th_kernel_case(&e);
  tcase f = {.name = "reshape_to_scalar", .op = MLC_OP_RESHAPE, .nargs = 1, .args = {{F32, 2, {1, 1}}},
             .attrs = {{"shape", MLC_ATTR_INTS, 0, 0, NULL, 0, NULL, NULL}}};
  mlc_th_kernel_case(&f);
}

static void t_transpose(void) {
  tcase a = {.name = "permute_201", .op = MLC_OP_TRANSPOSE, .nargs = 1, .args = {{F32, 3, {2, 3, 4}}},
             .attrs = {AINTS("perm", 2, 0, 1)}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "permute_default_bf16", .op = MLC_OP_TRANSPOSE, .nargs = 1, .args = {{BF16, 3, {2, 5, 3}}}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "permute_sym_bool", .op = MLC_OP_TRANSPOSE, .nargs = 1, .args = {{BOOL, 3, {N_, 2, 3}}},
             .attrs = {AINTS("perm", 1, 2, 0)}, .nbatch = 2, .batch = {1, 3}};
  mlc_th_kernel_case(&c);
}

static void t_concat(void) {
  tcase a = {.name = "concat_axis1", .op = MLC_OP_CONCAT, .nargs = 3,
             .args = {{F32, 3, {2, 1, 3}}, {F32, 3, {2, 4, 3}}, {F32, 3, {2, 2, 3}}}, .attrs = {AINT("axis", 1)}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "concat_empty_part", .op = MLC_OP_CONCAT, .nargs = 3,
             .args = {{I32, 2, {0, 3}}, {I32, 2, {2, 3}}, {I32, 2, {3, 3}}}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "concat_sym", .op = MLC_OP_CONCAT, .nargs = 2,
             .args = {{F16, 2, {N_, 2}}, {F16, 2, {N_, 3}}}, .attrs = {AINT("axis", 1)}, .nbatch = 2, .batch = {1, 3}};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "concat_one", .op = MLC_OP_CONCAT, .nargs = 1, .args = {{F32, 1, {5}}}};
  mlc_th_kernel_case(&d);
}

static void t_slice(void) {
  tcase a = {.name = "slice_step2", .op = MLC_OP_SLICE, .nargs = 1, .args = {{F32, 2, {6, 7}}},
             .attrs = {AINTS("begin", 1, 0), AINTS("end", 6, 7), AINTS("step", 2, 3)}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "slice_negative_step", .op = MLC_OP_SLICE, .nargs = 1, .args = {{I32, 2, {6, 7}}},
             .attrs = {AINTS("begin", 5, 6), AINTS("end", 0, -1), AINTS("step", -1, -2)}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "slice_clamped", .op = MLC_OP_SLICE, .nargs = 1, .args = {{F32, 2, {4, 5}}},
             .attrs = {AINTS("begin", 10, 1), AINTS("end", -1, 100), AINTS("step", -2, 1)}};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "slice_sym_batch", .op = MLC_OP_SLICE, .nargs = 1, .args = {{F32, 2, {N_, 8}}},
             .attrs = {AINTS("begin", 0, 2), AINTS("end", INT64_MAX, 7), AINTS("step", 1, 2)},
             .nbatch = 2, .batch = {1, 3}};
  mlc_th_kernel_case(&d);
}

static void t_take(void) {
  tcase a = {.name = "take_axis0_neg", .op = MLC_OP_GATHER, .nargs = 2, .args = {{F32, 2, {5, 3}}, {I64, 2, {2, 3}}},
             .gen = gen_take};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "take_axis1_i32_f16", .op = MLC_OP_GATHER, .nargs = 2,
             .args = {{F16, 3, {2, 6, 3}}, {I32, 1, {4}}}, .attrs = {AINT("axis", 1)}, .gen = gen_take};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "take_scalar_index", .op = MLC_OP_GATHER, .nargs = 2,
             .args = {{I64, 2, {4, 3}}, {I64, 0, {0}}}, .attrs = {AINT("axis", 1)}, .gen = gen_take};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "take_sym_indices", .op = MLC_OP_GATHER, .nargs = 2,
             .args = {{F32, 2, {7, 2}}, {I64, 1, {N_}}}, .gen = gen_take, .nbatch = 3, .batch = {1, 5, 0}};
  mlc_th_kernel_case(&d);
}

static void t_broadcast_tile(void) {
  tcase a = {.name = "broadcast_to", .op = MLC_OP_BROADCAST_TO, .nargs = 1, .args = {{F32, 2, {3, 1}}},
             .attrs = {AINTS("shape", 2, 3, 4)}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "broadcast_to_sym", .op = MLC_OP_BROADCAST_TO, .nargs = 1, .args = {{I8, 2, {1, 3}}},
             .attrs = {AINTS("shape", N_, 3)}, .nbatch = 2, .batch = {1, 4}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "tile", .op = MLC_OP_TILE, .nargs = 1, .args = {{F32, 2, {2, 3}}},
             .attrs = {AINTS("repeats", 2, 3)}};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "tile_sym", .op = MLC_OP_TILE, .nargs = 1, .args = {{I32, 3, {N_, 1, 2}}},
             .attrs = {AINTS("repeats", 1, 3, 2)}, .nbatch = 2, .batch = {1, 2}};
  mlc_th_kernel_case(&d);
}

static void t_pad(void) {
  tcase a = {.name = "pad_constant", .op = MLC_OP_PAD, .nargs = 1, .args = {{F32, 2, {3, 4}}},
             .attrs = {AINTS("pads", 1, 0, 2, 1), AFLT("value", 1.5)}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "pad_crop", .op = MLC_OP_PAD, .nargs = 1, .args = {{I32, 2, {5, 6}}},
             .attrs = {AINTS("pads", -1, 2, 1, -3), AFLT("value", -7)}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "pad_reflect", .op = MLC_OP_PAD, .nargs = 1, .args = {{F32, 2, {3, 4}}},
             .attrs = {AINTS("pads", 2, 1, 1, 3), ASTR("mode", "reflect")}};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "pad_edge_i32", .op = MLC_OP_PAD, .nargs = 1, .args = {{I32, 3, {2, 3, 2}}},
             .attrs = {AINTS("pads", 0, 2, 3, 1, 1, 0), ASTR("mode", "edge")}};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "pad_sym_bf16", .op = MLC_OP_PAD, .nargs = 1, .args = {{BF16, 2, {N_, 3}}},
             .attrs = {AINTS("pads", 0, 1, 0, 2)}, .nbatch = 2, .batch = {1, 3}};
  mlc_th_kernel_case(&e);
  tcase f = {.name = "pad_reflect_len1", .op = MLC_OP_PAD, .nargs = 1, .args = {{F32, 2, {1, 3}}},
             .attrs = {AINTS("pads", 0, 2, 0, 2), ASTR("mode", "reflect")}};
  mlc_th_kernel_case(&f);
}

static void t_shape_of(void) {
  tcase a = {.name = "shape_of", .op = MLC_OP_SHAPE_OF, .nargs = 1, .args = {{F32, 3, {2, 3, 5}}}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "shape_of_sym", .op = MLC_OP_SHAPE_OF, .nargs = 1, .args = {{F16, 3, {4, N_, 5}}},
             .nbatch = 2, .batch = {1, 6}};
  mlc_th_kernel_case(&b);
}

/* ---- the elementwise rules (elemwise.c) ------------------------------------------------ */

static void t_elemwise(void) {
  tcase a = {.name = "add_bcast", .op = MLC_OP_ADD, .nargs = 2, .args = {{F32, 2, {3, 4}}, {F32, 1, {4}}}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "where_bcast", .op = MLC_OP_WHERE, .nargs = 3,
             .args = {{BOOL, 2, {3, 1}}, {I32, 1, {4}}, {I32, 2, {3, 4}}}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "relu_f16_sym", .op = MLC_OP_RELU, .nargs = 1, .args = {{F16, 2, {N_, 5}}},
             .nbatch = 2, .batch = {1, 3}};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "cast_f32_i32", .op = MLC_OP_CAST, .nargs = 1, .args = {{F32, 1, {9}}},
             .attrs = {AINT("dtype", MLC_DTYPE_I32)}, .lo = -50, .hi = 50};
  mlc_th_kernel_case(&d);
}

/* Every unary op on float32 (and the ones that take integers on int32),
** in a range where each is defined. */
static void t_unary_sweep(void) {
  static const struct {
    mlc_op op;
    double lo, hi;
  } ops[] = {
      {MLC_OP_ABS, -2, 2},        {MLC_OP_NEG, -2, 2},         {MLC_OP_RELU, -2, 2},
      {MLC_OP_SIGMOID, -5, 5},    {MLC_OP_TANH, -3, 3},        {MLC_OP_EXP, -3, 3},
      {MLC_OP_LOG, 0.1, 5},       {MLC_OP_SQRT, 0, 5},         {MLC_OP_RECIPROCAL, 0.5, 3},
      {MLC_OP_ERF, -2, 2},        {MLC_OP_FLOOR, -5, 5},       {MLC_OP_CEIL, -5, 5},
      {MLC_OP_ROUND, -5, 5},      {MLC_OP_SIGN, -2, 2},        {MLC_OP_SIN, -3, 3},
      {MLC_OP_COS, -3, 3},        {MLC_OP_TAN, -1, 1},         {MLC_OP_ASIN, -0.9, 0.9},
      {MLC_OP_ACOS, -0.9, 0.9},   {MLC_OP_ATAN, -3, 3},        {MLC_OP_SINH, -2, 2},
      {MLC_OP_COSH, -2, 2},       {MLC_OP_ASINH, -3, 3},       {MLC_OP_ACOSH, 1.1, 4},
      {MLC_OP_ATANH, -0.9, 0.9},  {MLC_OP_SOFTPLUS, -5, 5},    {MLC_OP_SOFTSIGN, -3, 3},
      {MLC_OP_LEAKY_RELU, -2, 2}, {MLC_OP_ELU, -2, 2},         {MLC_OP_SELU, -2, 2},
      {MLC_OP_CELU, -2, 2},       {MLC_OP_HARD_SIGMOID, -4, 4}, {MLC_OP_HARD_SWISH, -4, 4},
      {MLC_OP_THRESHOLDED_RELU, -2, 2}, {MLC_OP_SHRINK, -2, 2}, {MLC_OP_COPY, -2, 2},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "unary_%s", mlc_op_name[ops[i].op]);
    tcase a = {.name = name, .op = ops[i].op, .nargs = 1, .args = {{F32, 2, {3, 5}}}, .lo = ops[i].lo,
               .hi = ops[i].hi, .rtol = 2e-6, .atol = 1e-6};
    mlc_th_kernel_case(&a);
  }
  static const mlc_op iops[] = {MLC_OP_ABS, MLC_OP_NEG, MLC_OP_RELU, MLC_OP_SIGN, MLC_OP_COPY};
  for (size_t i = 0; i < sizeof iops / sizeof iops[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "unary_i32_%s", mlc_op_name[iops[i]]);
    tcase a = {.name = name, .op = iops[i], .nargs = 1, .args = {{I32, 1, {19}}}};
    mlc_th_kernel_case(&a);
  }
  tcase c = {.name = "clip_f32", .op = MLC_OP_CLIP, .nargs = 1, .args = {{F32, 1, {20}}},
             .attrs = {AFLT("min", -0.5), AFLT("max", 1.25)}};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "clip_i32_frac", .op = MLC_OP_CLIP, .nargs = 1, .args = {{I32, 1, {20}}},
             .attrs = {AFLT("min", -3.5), AFLT("max", 4.5)}};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "clip_i32_frac2", .op = MLC_OP_CLIP, .nargs = 1, .args = {{I32, 1, {20}}},
             .attrs = {AFLT("min", 1.5), AFLT("max", -0.5 + 6)}};
  mlc_th_kernel_case(&e);
  tcase e2 = {.name = "clip_i8_huge", .op = MLC_OP_CLIP, .nargs = 1, .args = {{I8, 1, {20}}},
              .attrs = {AFLT("min", -1e30), AFLT("max", 1e30)}, .ilo = -128, .ihi = 127};
  mlc_th_kernel_case(&e2);
  tcase f = {.name = "isinf_pos", .op = MLC_OP_ISINF, .nargs = 1, .args = {{F32, 1, {12}}},
             .attrs = {AINT("detect_negative", 0)}, .gen = gen_nans};
  mlc_th_kernel_case(&f);
  tcase g = {.name = "isnan", .op = MLC_OP_ISNAN, .nargs = 1, .args = {{F32, 1, {12}}}, .gen = gen_nans};
  mlc_th_kernel_case(&g);
  tcase h = {.name = "logical_not", .op = MLC_OP_LOGICAL_NOT, .nargs = 1, .args = {{BOOL, 1, {12}}}};
  mlc_th_kernel_case(&h);
}

/* Every broadcast binary op, on floats and integers. */
static void t_binary_sweep(void) {
  static const mlc_op fops[] = {MLC_OP_ADD, MLC_OP_SUB, MLC_OP_MUL, MLC_OP_DIV, MLC_OP_POW,
                                MLC_OP_MOD, MLC_OP_MAXIMUM, MLC_OP_MINIMUM, MLC_OP_PRELU,
                                MLC_OP_EQUAL, MLC_OP_LESS, MLC_OP_LESS_EQUAL, MLC_OP_GREATER,
                                MLC_OP_GREATER_EQUAL};
  for (size_t i = 0; i < sizeof fops / sizeof fops[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "binary_f32_%s", mlc_op_name[fops[i]]);
    tcase a = {.name = name, .op = fops[i], .nargs = 2, .args = {{F32, 2, {3, 4}}, {F32, 2, {1, 4}}},
               .lo = 0.25, .hi = 3, .rtol = 2e-6};
    mlc_th_kernel_case(&a);
    snprintf(name, sizeof name, "binary_i32_%s", mlc_op_name[fops[i]]);
    tcase b = {.name = name, .op = fops[i], .nargs = 2, .args = {{I32, 2, {3, 4}}, {I32, 1, {4}}},
               .ilo = 1, .ihi = 7};
    mlc_th_kernel_case(&b);
    snprintf(name, sizeof name, "binary_i8neg_%s", mlc_op_name[fops[i]]);
    tcase c = {.name = name, .op = fops[i], .nargs = 2, .args = {{I8, 2, {3, 4}}, {I8, 1, {4}}},
               .ilo = -5, .ihi = -1};
    mlc_th_kernel_case(&c);
  }
  tcase m = {.name = "mod_fmod_f32", .op = MLC_OP_MOD, .nargs = 2, .args = {{F32, 1, {10}}, {F32, 1, {10}}},
             .attrs = {AINT("fmod", 1)}, .lo = -3, .hi = 3, .atol = 1e-5};
  mlc_th_kernel_case(&m);
  tcase n = {.name = "mod_fmod_i32", .op = MLC_OP_MOD, .nargs = 2, .args = {{I32, 1, {10}}, {I32, 1, {10}}},
             .attrs = {AINT("fmod", 1)}, .ilo = -7, .ihi = 7};
  n.ilo = 1;
  mlc_th_kernel_case(&n);
  static const mlc_op lops[] = {MLC_OP_LOGICAL_AND, MLC_OP_LOGICAL_OR, MLC_OP_LOGICAL_XOR};
  for (size_t i = 0; i < 3; i++) {
    char name[64];
    snprintf(name, sizeof name, "binary_%s", mlc_op_name[lops[i]]);
    tcase a = {.name = name, .op = lops[i], .nargs = 2, .args = {{BOOL, 2, {3, 4}}, {BOOL, 2, {3, 1}}}};
    mlc_th_kernel_case(&a);
  }
  tcase s1 = {.name = "bitshift_left_u8", .op = MLC_OP_BITSHIFT, .nargs = 2, .args = {{U8, 1, {10}}, {U8, 1, {10}}},
              .ilo = 0, .ihi = 9};
  mlc_th_kernel_case(&s1);
  tcase s2 = {.name = "bitshift_right_u8", .op = MLC_OP_BITSHIFT, .nargs = 2, .args = {{U8, 1, {10}}, {U8, 1, {10}}},
              .attrs = {AINT("right", 1)}, .ilo = 0, .ihi = 9};
  mlc_th_kernel_case(&s2);
}

/* ---- the pass itself: dedup, errors ------------------------------------------------------ */

/* Two identical calls share one prim function; a different one gets its own. */
static void t_dedup(void) {
  mlc_module *gm = NULL;
  mlc_tir_module *tm = NULL;
  mlc_func *f = NULL;
  mlc_value *x = NULL, *y1 = NULL, *y2 = NULL, *y3 = NULL;
  int64_t n;
  MLC_TEST_OK_FATAL(mlc_module_create(mlc_allocator_default(), &gm));
  mlc_test_hold(gm);
  MLC_TEST_OK_FATAL(mlc_tir_module_create(mlc_allocator_default(), &tm));
  mlc_test_hold(tm);
  MLC_TEST_OK_FATAL(mlc_module_sym(gm, "n", &n));
  MLC_TEST_OK_FATAL(mlc_func_create(gm, "main", &f));
  mlc_type t = {F32, 2, (const int64_t[]){N_, 4}};
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &t, &x));
  mlc_attr ax[] = {AINT("axis", 1)}, ax0[] = {AINT("axis", 0)};
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_SOFTMAX, &x, 1, ax, 1, NULL, &y1));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_SOFTMAX, &y1, 1, ax, 1, NULL, &y2));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_SOFTMAX, &y2, 1, ax0, 1, NULL, &y3));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, y3));
  MLC_TEST_OK_FATAL(mlc_lower_legalize(gm, tm, NULL));
  CU_ASSERT_EQUAL(tm->nfuncs, 2);
  CU_ASSERT_EQUAL(y1->def->kind, MLC_CALL_TIR);
  CU_ASSERT_EQUAL(y3->def->kind, MLC_CALL_TIR);
  CU_ASSERT_STRING_EQUAL(y1->def->callee, y2->def->callee);
  CU_ASSERT_STRING_NOT_EQUAL(y1->def->callee, y3->def->callee);
  CU_ASSERT_PTR_NOT_NULL(mlc_tir_module_find(tm, y1->def->callee));
  CU_ASSERT_PTR_NOT_NULL(mlc_tir_module_find(tm, y3->def->callee));
  MLC_TEST_OK(mlc_tir_verify_module(tm));
  mlc_tir_module_destroy(tm);
  mlc_module_destroy(gm);
}

/* |n| leaky_relu calls in a chain from a new module's "x", each with its own
** alpha (so its own prim function), legalized into |tm|. */
static void legalize_leaky_chain(mlc_tir_module *tm, int n, double alpha0) {
  mlc_module *gm = NULL;
  mlc_func *f = NULL;
  mlc_value *v = NULL;
  CU_ASSERT_PTR_NULL_FATAL(mlc_module_create(mlc_allocator_system(), &gm));
  CU_ASSERT_PTR_NULL(mlc_func_create(gm, "main", &f));
  mlc_type t = {F32, 1, (const int64_t[]){4}};
  CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "x", &t, &v));
  for (int i = 0; i < n; i++) {
    mlc_attr a[] = {AFLT("alpha", alpha0 + i * 1e-3)};
    CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_LEAKY_RELU, &v, 1, a, 1, NULL, &v));
  }
  CU_ASSERT_PTR_NULL(mlc_func_add_ret(f, v));
  mlc_status s = mlc_lower_legalize(gm, tm, NULL);
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  /* the callee names outlive gm: check them here */
  int i = 0;
  for (int k = 0; k < f->blocks[0].n; k++, i++) {
    const mlc_binding *b = f->blocks[0].bindings[k];
    CU_ASSERT_EQUAL(b->kind, MLC_CALL_TIR);
    CU_ASSERT_PTR_NOT_NULL(mlc_tir_module_find(tm, b->callee));
  }
  CU_ASSERT_EQUAL(i, n);
  mlc_module_destroy(gm);
}

/* Distinct calls of one op get the names op, op1, op2, ... in call order;
** a second legalization into the same TIR module goes on after the names
** it holds; every name is found by mlc_tir_module_find. */
static void t_names(void) {
  mlc_tir_module *tm = NULL;
  CU_ASSERT_PTR_NULL_FATAL(mlc_tir_module_create(mlc_allocator_system(), &tm));
  legalize_leaky_chain(tm, 300, 0.1);
  legalize_leaky_chain(tm, 5, 0.9);
  CU_ASSERT_EQUAL_FATAL(tm->nfuncs, 305);
  char want[32];
  for (int i = 0; i < tm->nfuncs; i++) {
    if (i) snprintf(want, sizeof want, "leaky_relu%d", i);
    else snprintf(want, sizeof want, "leaky_relu");
    CU_ASSERT_STRING_EQUAL(tm->funcs[i]->name, want);
    CU_ASSERT_PTR_EQUAL(mlc_tir_module_find(tm, want), tm->funcs[i]);
  }
  CU_ASSERT_PTR_NULL(mlc_tir_module_find(tm, "leaky_relu305"));
  CU_ASSERT_PTR_NULL(mlc_tir_module_find(tm, "leaky"));
  mlc_tir_module_destroy(tm);
}

/* A call without a lowering (a string tensor) is UNIMPLEMENTED and names the node. */
static void t_unimplemented(void) {
  mlc_module *gm = NULL;
  mlc_tir_module *tm = NULL;
  mlc_func *f = NULL;
  mlc_value *x = NULL, *y = NULL;
  mlc_origin o = {"names_node_7", "Identity", 13, 7};
  MLC_TEST_OK_FATAL(mlc_module_create(mlc_allocator_default(), &gm));
  mlc_test_hold(gm);
  MLC_TEST_OK_FATAL(mlc_tir_module_create(mlc_allocator_default(), &tm));
  mlc_test_hold(tm);
  MLC_TEST_OK_FATAL(mlc_func_create(gm, "main", &f));
  mlc_type t = {MLC_DTYPE_STRING, 1, (const int64_t[]){3}};
  MLC_TEST_OK_FATAL(mlc_func_add_param(f, "x", &t, &x));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(f, MLC_OP_COPY, &x, 1, NULL, 0, &o, &y));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(f, y));
  mlc_status s = mlc_lower_legalize(gm, tm, NULL);
  CU_ASSERT_PTR_NOT_NULL(s);
  CU_ASSERT_EQUAL(mlc_status_code(s), MLC_UNIMPLEMENTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), "names_node_7"));
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), "copy"));
  mlc_status_free(s);
  CU_ASSERT_EQUAL(tm->nfuncs, 0);
  mlc_tir_module_destroy(tm);
  mlc_module_destroy(gm);
}

static void register_suites(void) {
  static const CU_TestInfo legalize[] = {
      {"sum", t_sum},
      {"mean_prod", t_mean_prod},
      {"max_min", t_max_min},
      {"argmax_argmin", t_argreduce},
      {"softmax", t_softmax},
      {"layer_norm", t_layer_norm},
      {"matmul", t_matmul},
      {"conv", t_conv},
      {"conv_transpose", t_conv_transpose},
      {"pool", t_pool},
      {"reshape", t_reshape},
      {"permute_dims", t_transpose},
      {"concat", t_concat},
      {"strided_slice", t_slice},
      {"take", t_take},
      {"broadcast_to_tile", t_broadcast_tile},
      {"pad", t_pad},
      {"shape_of", t_shape_of},
      {"elemwise", t_elemwise},
      {"unary_sweep", t_unary_sweep},
      {"binary_sweep", t_binary_sweep},
      CU_TEST_INFO_NULL,
  };
  static const CU_TestInfo pass[] = {
      {"dedup", t_dedup},
      {"names", t_names},
      {"unimplemented", t_unimplemented},
      CU_TEST_INFO_NULL,
  };
  mlc_test_add_suite("legalize_pass", pass);
  CU_pSuite s = CU_add_suite("legalize_numeric", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (const CU_TestInfo *t = legalize; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_legalize", fns);
}
