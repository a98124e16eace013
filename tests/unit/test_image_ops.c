/*
** test_image_ops.c: CUnit suites for the image and indexing ops (resize,
** gather_elements, gather_nd, scatter_elements, scatter_nd,
** max_pool_indices): their inference rules (graph/infer_image.c) and their
** lowering (lower/compute/image.c), checked differentially.
**
** The harness is tests/harness_kernel.c: each case builds a one-op graph module
** over parameters, legalizes it, verifies the prim function, compiles it
** with the code generator, loads it and calls the kernel on seeded random
** data (or fixed argument values, for resize's scales and roi) through the
** runtime ABI.  The expected outputs come from naive C references below,
** written from the ONNX reference implementations: resize interpolates one
** axis at a time over the n nearest neighbours of an edge-padded axis (as
** onnx's interpolate_nd does, except that align_corners and
** tf_crop_and_resize use the integer output length, as ONNX Runtime does);
** scatters write sequentially in the order of the updates.
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


static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* ---- resize: ONNX's reference algorithm (one axis at a time, the n nearest
**      neighbours of an edge-padded axis) ---------------------------------------------- */

typedef struct rref {
  const tcase *tc;
  const mlc_type *x, *y;
  const void *xd;
  const char *mode, *coord, *nearest;
  int excl;
  double a, extrap;
  double scale[MAXR], roi[2 * MAXR];
} rref;

static double rr_coord(const rref *R, int d, int64_t o) {
  double x = (double)o, s = R->scale[d];
  double in = (double)R->x->dims[d], out = (double)R->y->dims[d];
  const char *c = R->coord;
  if (strcmp(c, "align_corners") == 0) return out == 1 ? 0 : x * (in - 1) / (out - 1);
  if (strcmp(c, "asymmetric") == 0) return x / s;
  if (strcmp(c, "pytorch_half_pixel") == 0) return out > 1 ? (x + 0.5) / s - 0.5 : 0;
  if (strcmp(c, "tf_half_pixel_for_nn") == 0) return (x + 0.5) / s;
  if (strcmp(c, "tf_crop_and_resize") == 0) {
    double r0 = R->roi[d], r1 = R->roi[R->x->rank + d];
    if (out == 1) return (r1 - r0) * (in - 1) / 2 + r0 * (in - 1);
    return x * (r1 - r0) * (in - 1) / (out - 1) + r0 * (in - 1);
  }
  return (x + 0.5) / s - 0.5;
}

/* The interpolation weights for coordinate |x| (ratio in (0, 1]). */
static int rr_coeffs(const rref *R, double x, double *c) {
  int integer = x == floor(x);
  double r = integer ? 1 : x - floor(x), A = R->a;
  if (strcmp(R->mode, "nearest") == 0) {
    const char *m = R->nearest;
    if (integer) c[0] = 0, c[1] = 1;
    else if (strcmp(m, "round_prefer_ceil") == 0) c[0] = r < 0.5, c[1] = r >= 0.5;
    else if (strcmp(m, "floor") == 0) c[0] = 1, c[1] = 0;
    else if (strcmp(m, "ceil") == 0) c[0] = 0, c[1] = 1;
    else c[0] = r <= 0.5, c[1] = r > 0.5;
    return 2;
  }
  if (strcmp(R->mode, "linear") == 0) {
    c[0] = 1 - r, c[1] = r;
    return 2;
  }
  c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
  c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
  c[2] = ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1;
  c[3] = ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A;
  return 4;
}

/* The |n| positions nearest to |x| (ties: the smaller) of the axis of
** extent |in| padded by ceil(n/2) on both sides, ascending, unpadded. */
static void rr_neighbors(double x, int n, int64_t in, int64_t *idx) {
  int64_t p = (n + 1) / 2, lim = in + 2 * p;
  double xp = x + (double)p;
  int cnt = 0;
  int64_t pick[8];
  while (cnt < n) { /* selection: the best not yet taken */
    int64_t best = -1;
    for (int64_t j = 0; j < lim; j++) {
      int taken = 0;
      for (int t = 0; t < cnt; t++) taken |= pick[t] == j;
      if (taken) continue;
      if (best < 0 || fabs(xp - (double)j) < fabs(xp - (double)best)) best = j;
    }
    pick[cnt++] = best;
  }
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && pick[j - 1] > pick[j]; j--) {
      int64_t t = pick[j];
      pick[j] = pick[j - 1];
      pick[j - 1] = t;
    }
  for (int i = 0; i < n; i++) idx[i] = pick[i] - p;
}

static double rr_interp(const rref *R, int d, const int64_t *oi, int64_t *xi) {
  const mlc_type *x = R->x;
  if (d == x->rank) return mlc_th_ldd(R->xd, x->dtype, mlc_th_offset(x->dims, x->rank, xi));
  int64_t in = x->dims[d];
  double v = rr_coord(R, d, oi[d]);
  if (strcmp(R->coord, "tf_crop_and_resize") == 0 && (v < 0 || v > (double)(in - 1))) return R->extrap;
  if (strcmp(R->nearest, "simple") == 0 && strcmp(R->mode, "nearest") == 0) {
    xi[d] = clampi((int64_t)(R->scale[d] < 1 ? ceil(v) : trunc(v)), 0, in - 1);
    return rr_interp(R, d + 1, oi, xi);
  }
  double c[4], sum = 0, acc = 0;
  int64_t nb[4];
  int n = rr_coeffs(R, v, c);
  rr_neighbors(v, n, in, nb);
  if (R->excl) {
    for (int i = 0; i < n; i++) {
      if (nb[i] < 0 || nb[i] >= in) c[i] = 0;
      sum += c[i];
    }
    for (int i = 0; i < n; i++) c[i] /= sum;
  }
  for (int i = 0; i < n; i++) {
    if (c[i] == 0) continue;
    xi[d] = clampi(nb[i], 0, in - 1);
    acc += c[i] * rr_interp(R, d + 1, oi, xi);
  }
  return acc;
}

static void ref_resize(const tcase *tc, const mlc_type *at, const void *const *in, const mlc_type *ot, void *out) {
  int na = mlc_th_nattrs_of(tc);
  rref R;
  memset(&R, 0, sizeof R);
  R.tc = tc;
  R.x = &at[0];
  R.y = ot;
  R.xd = in[0];
  R.mode = mlc_attrs_str(tc->attrs, na, "mode", "nearest");
  R.coord = mlc_attrs_str(tc->attrs, na, "coordinate_transformation_mode", "half_pixel");
  R.nearest = mlc_attrs_str(tc->attrs, na, "nearest_mode", "round_prefer_floor");
  R.excl = (int)mlc_th_attr_i(tc, "exclude_outside", 0);
  R.a = mlc_attrs_float(tc->attrs, na, "cubic_coeff_a", -0.75);
  R.extrap = mlc_attrs_float(tc->attrs, na, "extrapolation_value", 0);
  int r = R.x->rank, roi_arg = (int)mlc_th_attr_i(tc, "roi_arg", 0), k = 1;
  const mlc_attr *sa = mlc_attrs_find(tc->attrs, na, "scales"), *ra = mlc_attrs_find(tc->attrs, na, "roi");
  for (int d = 0; d < r; d++) R.roi[d] = 0, R.roi[r + d] = 1;
  if (roi_arg)
    for (int i = 0; i < 2 * r; i++) R.roi[i] = mlc_th_ldd(in[k], at[k].dtype, i);
  else if (ra)
    for (int i = 0; i < 2 * r; i++) R.roi[i] = ra->floats[i];
  k += roi_arg;
  for (int d = 0; d < r; d++) R.scale[d] = sa ? sa->floats[d] : mlc_th_ldd(in[k], at[k].dtype, d);
  int64_t oi[MAXR] = {0}, xi[MAXR];
  int64_t n = mlc_th_numel(ot);
  for (int64_t e = 0; e < n; e++, mlc_th_advance(oi, ot->dims, ot->rank)) {
    double v = rr_interp(&R, 0, oi, xi);
    if (mlc_dtype_is_int(ot->dtype)) v = trunc(v);
    mlc_th_st(out, ot->dtype, e, v);
  }
}

/* ---- gathers ------------------------------------------------------------------------------ */

static void ref_gather_elements(const tcase *tc, const mlc_type *at, const void *const *in, const mlc_type *ot,
                                void *out) {
  const mlc_type *x = &at[0], *ix = &at[1];
  int axis = (int)mlc_th_attr_i(tc, "axis", 0);
  int64_t oi[MAXR] = {0}, xi[MAXR], n = mlc_th_numel(ot);
  for (int64_t e = 0; e < n; e++, mlc_th_advance(oi, ot->dims, ot->rank)) {
    int64_t v = mlc_th_ldi(in[1], ix->dtype, e);
    memcpy(xi, oi, sizeof xi);
    xi[axis] = v < 0 ? v + x->dims[axis] : v;
    mlc_th_st(out, ot->dtype, e, mlc_th_ldd(in[0], x->dtype, mlc_th_offset(x->dims, x->rank, xi)));
  }
}

static void ref_gather_nd(const tcase *tc, const mlc_type *at, const void *const *in, const mlc_type *ot,
                          void *out) {
  const mlc_type *x = &at[0], *ix = &at[1];
  int b = (int)mlc_th_attr_i(tc, "batch_dims", 0), q = ix->rank, k = (int)ix->dims[q - 1];
  int64_t oi[2 * MAXR] = {0}, xi[MAXR], ii[MAXR], n = mlc_th_numel(ot);
  for (int64_t e = 0; e < n; e++, mlc_th_advance(oi, ot->dims, ot->rank)) {
    for (int d = 0; d < q - 1; d++) ii[d] = oi[d];
    for (int d = 0; d < b; d++) xi[d] = oi[d];
    for (int t = 0; t < k; t++) {
      ii[q - 1] = t;
      int64_t v = mlc_th_ldi(in[1], ix->dtype, mlc_th_offset(ix->dims, q, ii));
      xi[b + t] = v < 0 ? v + x->dims[b + t] : v;
    }
    for (int d = b + k; d < x->rank; d++) xi[d] = oi[q - 1 + d - b - k];
    mlc_th_st(out, ot->dtype, e, mlc_th_ldd(in[0], x->dtype, mlc_th_offset(x->dims, x->rank, xi)));
  }
}

/* ---- scatters: sequential writes in row-major order of the updates ----------------------- */

static double combine(const char *red, double a, double u) {
  if (strcmp(red, "add") == 0) return a + u;
  if (strcmp(red, "mul") == 0) return a * u;
  if (strcmp(red, "max") == 0) return a > u ? a : u;
  if (strcmp(red, "min") == 0) return a < u ? a : u;
  return u;
}

static void ref_scatter_elements(const tcase *tc, const mlc_type *at, const void *const *in,
                                 const mlc_type *ot, void *out) {
  const mlc_type *x = &at[0], *ix = &at[1];
  int axis = (int)mlc_th_attr_i(tc, "axis", 0);
  const char *red = mlc_attrs_str(tc->attrs, mlc_th_nattrs_of(tc), "reduction", "none");
  memcpy(out, in[0], mlc_th_nbytes(ot));
  int64_t p[MAXR] = {0}, xi[MAXR];
  if (mlc_th_any_zero(ix->dims, ix->rank)) return;
  do {
    int64_t e = mlc_th_offset(ix->dims, ix->rank, p), v = mlc_th_ldi(in[1], ix->dtype, e);
    memcpy(xi, p, sizeof xi);
    xi[axis] = v < 0 ? v + x->dims[axis] : v;
    int64_t o = mlc_th_offset(x->dims, x->rank, xi);
    mlc_th_st(out, ot->dtype, o, combine(red, mlc_th_ldd(out, ot->dtype, o), mlc_th_ldd(in[2], at[2].dtype, e)));
  } while (mlc_th_advance(p, ix->dims, ix->rank));
}

static void ref_scatter_nd(const tcase *tc, const mlc_type *at, const void *const *in, const mlc_type *ot,
                           void *out) {
  const mlc_type *x = &at[0], *ix = &at[1], *u = &at[2];
  const char *red = mlc_attrs_str(tc->attrs, mlc_th_nattrs_of(tc), "reduction", "none");
  int q = ix->rank, k = (int)ix->dims[q - 1], m = q - 1;
  memcpy(out, in[0], mlc_th_nbytes(ot));
  int64_t p[MAXR] = {0}, xi[MAXR], ui[2 * MAXR], ii[MAXR];
  if (mlc_th_any_zero(ix->dims, m)) return;
  do {
    for (int d = 0; d < m; d++) ii[d] = ui[d] = p[d];
    for (int t = 0; t < k; t++) {
      ii[m] = t;
      int64_t v = mlc_th_ldi(in[1], ix->dtype, mlc_th_offset(ix->dims, q, ii));
      xi[t] = v < 0 ? v + x->dims[t] : v;
    }
    int64_t tail[MAXR] = {0};
    do {
      for (int d = k; d < x->rank; d++) xi[d] = ui[m + d - k] = tail[d - k];
      int64_t o = mlc_th_offset(x->dims, x->rank, xi);
      double uv = mlc_th_ldd(in[2], u->dtype, mlc_th_offset(u->dims, u->rank, ui));
      mlc_th_st(out, ot->dtype, o, combine(red, mlc_th_ldd(out, ot->dtype, o), uv));
    } while (mlc_th_advance(tail, x->dims + k, x->rank - k));
  } while (mlc_th_advance(p, ix->dims, m));
}

/* ---- max_pool_indices: the first maximum scanning each window row-major ---------------- */

static void ref_pool_indices(const tcase *tc, const mlc_type *at, const void *const *in, const mlc_type *ot,
                             void *out) {
  const mlc_type *x = &at[0];
  int k = x->rank - 2, so = (int)mlc_th_attr_i(tc, "storage_order", 0);
  int64_t kd[MAXR], oi[MAXR] = {0}, ki[MAXR], xi[MAXR], best[MAXR], n = mlc_th_numel(ot);
  for (int i = 0; i < k; i++) kd[i] = mlc_th_attr_at(tc, "kernel", i, 1);
  for (int64_t e = 0; e < n; e++, mlc_th_advance(oi, ot->dims, ot->rank)) {
    double bv = 0;
    int found = 0;
    memset(ki, 0, sizeof ki);
    do {
      int inside = 1;
      for (int i = 0; i < k; i++) {
        xi[i] = oi[2 + i] * mlc_th_attr_at(tc, "strides", i, 1) - mlc_th_attr_at(tc, "pads", i, 0) +
                ki[i] * mlc_th_attr_at(tc, "dilations", i, 1);
        inside &= xi[i] >= 0 && xi[i] < x->dims[2 + i];
      }
      if (!inside) continue;
      int64_t full[MAXR] = {oi[0], oi[1]};
      for (int i = 0; i < k; i++) full[2 + i] = xi[i];
      double v = mlc_th_ldd(in[0], x->dtype, mlc_th_offset(x->dims, x->rank, full));
      if (!found || v > bv) {
        found = 1, bv = v;
        memcpy(best, xi, sizeof best);
      }
    } while (mlc_th_advance(ki, kd, k));
    int64_t sp = 0, spatial = 1;
    for (int i = 0; i < k; i++) spatial *= x->dims[2 + i];
    if (so == 0)
      for (int i = 0; i < k; i++) sp = sp * x->dims[2 + i] + best[i];
    else
      for (int i = k - 1; i >= 0; i--) sp = sp * x->dims[2 + i] + best[i];
    mlc_th_st(out, ot->dtype, e, (double)((oi[0] * x->dims[1] + oi[1]) * spatial + sp));
  }
}

/* ---- index generators ---------------------------------------------------------------- */

/* The extent indexed by element |e| of indices (type |t|) of case |tc|. */
static int64_t index_extent(const tcase *tc, const mlc_type *t, int64_t e) {
  const targ *x = &tc->args[0];
  if (tc->op == MLC_OP_GATHER_ELEMENTS || tc->op == MLC_OP_SCATTER_ELEMENTS)
    return x->dims[mlc_th_attr_i(tc, "axis", 0)];
  int64_t k = t->dims[t->rank - 1];
  int64_t b = tc->op == MLC_OP_GATHER_ND ? mlc_th_attr_i(tc, "batch_dims", 0) : 0;
  return x->dims[b + e % k];
}

/* indices (argument 1) in [-extent, extent); other arguments uniform. */
static void gen_index(const tcase *tc, int i, const mlc_type *t, void *data, uint64_t *rng) {
  if (i != 1) {
    tcase plain = *tc;
    plain.gen = NULL;
    mlc_th_fill(&plain, i, t, data, rng);
    return;
  }
  for (int64_t e = 0; e < mlc_th_numel(t); e++) {
    int64_t ext = index_extent(tc, t, e);
    mlc_th_st(data, t->dtype, e, (double)((int64_t)(mlc_th_next(rng) % (uint64_t)(2 * ext)) - ext));
  }
}

/* ---- resize -------------------------------------------------------------------------------- */

#define RESIZE(...) {.op = MLC_OP_RESIZE, .ref = ref_resize, __VA_ARGS__}

static void t_resize_nearest(void) {
  static const char *const coords[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                                       "tf_half_pixel_for_nn"};
  static const char *const modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  char names[20][64];
  int k = 0;
  for (int ci = 0; ci < 5; ci++)
    for (int mi = 0; mi < 4; mi++, k++) {
      if (ci >= 3 && mi >= 2) continue;
      snprintf(names[k], sizeof names[k], "nearest_%s_%s", coords[ci], modes[mi]);
      /* 4 -> 7 (1.75) and 5 -> 3 (0.6), as sizes give them */
      tcase a = RESIZE(.name = names[k], .nargs = 1, .args = {{F32, 4, {1, 2, 4, 5}}},
                       .attrs = {AINTS("sizes", 1, 2, 7, 3), AFLTS("scales", 1, 1, 1.75, 0.6),
                                 ASTR("mode", "nearest"), ASTR("coordinate_transformation_mode", coords[ci]),
                                 ASTR("nearest_mode", modes[mi])});
      mlc_th_kernel_case(&a);
    }
  /* scales that do not divide: the coordinates use the scale, not out / in */
  tcase b = RESIZE(.name = "nearest_scales_0p6", .nargs = 1, .args = {{I8, 4, {1, 1, 2, 4}}},
                   .attrs = {AINTS("sizes", 1, 1, 1, 2), AFLTS("scales", 1, 1, 0.6, 0.6), ASTR("mode", "nearest")});
  mlc_th_kernel_case(&b);
  tcase c = RESIZE(.name = "nearest_bool_1d", .nargs = 1, .args = {{BOOL, 1, {5}}},
                   .attrs = {AINTS("sizes", 13), AFLTS("scales", 2.6), ASTR("mode", "nearest")});
  mlc_th_kernel_case(&c);
}

/* Upsample / Resize-10: asymmetric coordinates, ceil when shrinking, else truncate. */
static void t_resize_simple(void) {
  tcase a = RESIZE(.name = "simple_up", .nargs = 1, .args = {{F32, 4, {1, 1, 2, 2}}},
                   .attrs = {AINTS("sizes", 1, 1, 4, 6), AFLTS("scales", 1, 1, 2, 3), ASTR("mode", "nearest"),
                             ASTR("coordinate_transformation_mode", "asymmetric"), ASTR("nearest_mode", "simple")});
  mlc_th_kernel_case(&a);
  tcase b = RESIZE(.name = "simple_down", .nargs = 1, .args = {{F32, 4, {1, 1, 5, 7}}},
                   .attrs = {AINTS("sizes", 1, 1, 2, 3), AFLTS("scales", 1, 1, 0.5, 0.5), ASTR("mode", "nearest"),
                             ASTR("coordinate_transformation_mode", "asymmetric"), ASTR("nearest_mode", "simple")});
  mlc_th_kernel_case(&b);
  tcase c = RESIZE(.name = "simple_linear", .nargs = 1, .args = {{F32, 4, {1, 2, 3, 3}}},
                   .attrs = {AINTS("sizes", 1, 2, 6, 7), AFLTS("scales", 1, 1, 2, 2.5), ASTR("mode", "linear"),
                             ASTR("coordinate_transformation_mode", "asymmetric"), ASTR("nearest_mode", "simple")});
  mlc_th_kernel_case(&c);
}

static void t_resize_linear(void) {
  static const char *const coords[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"};
  char names[8][64];
  for (int ci = 0; ci < 4; ci++) {
    snprintf(names[ci], sizeof names[ci], "linear_up_%s", coords[ci]);
    tcase a = RESIZE(.name = names[ci], .nargs = 1, .args = {{F32, 4, {2, 1, 3, 4}}},
                     .attrs = {AINTS("sizes", 2, 1, 7, 9), AFLTS("scales", 1, 1, 7.0 / 3, 9.0 / 4),
                               ASTR("mode", "linear"), ASTR("coordinate_transformation_mode", coords[ci])});
    mlc_th_kernel_case(&a);
    snprintf(names[4 + ci], sizeof names[4 + ci], "linear_down_%s", coords[ci]);
    tcase b = RESIZE(.name = names[4 + ci], .nargs = 1, .args = {{F32, 4, {1, 2, 8, 5}}},
                     .attrs = {AINTS("sizes", 1, 2, 3, 1), AFLTS("scales", 1, 1, 0.4, 0.3),
                               ASTR("mode", "linear"), ASTR("coordinate_transformation_mode", coords[ci])});
    mlc_th_kernel_case(&b);
  }
  /* every axis resized (trilinear and more), float64 */
  tcase c = RESIZE(.name = "linear_3d_f64", .nargs = 1, .args = {{F64, 3, {3, 2, 4}}},
                   .attrs = {AINTS("sizes", 5, 3, 2), AFLTS("scales", 5.0 / 3, 1.5, 0.5), ASTR("mode", "linear")});
  mlc_th_kernel_case(&c);
  /* integers: interpolated in float64, truncated (an exact integer may
  ** come out just below itself in either summation order: atol 1) */
  tcase d = RESIZE(.name = "linear_u8", .nargs = 1, .args = {{U8, 4, {1, 3, 4, 4}}},
                   .attrs = {AINTS("sizes", 1, 3, 6, 10), AFLTS("scales", 1, 1, 1.5, 2.5), ASTR("mode", "linear")},
                   .ilo = 0, .ihi = 255, .atol = 1);
  mlc_th_kernel_case(&d);
  tcase e = RESIZE(.name = "linear_f16", .nargs = 1, .args = {{F16, 4, {1, 1, 3, 5}}},
                   .attrs = {AINTS("sizes", 1, 1, 5, 8), AFLTS("scales", 1, 1, 5.0 / 3, 1.6), ASTR("mode", "linear")});
  mlc_th_kernel_case(&e);
  /* the same shape and scale 1 everywhere: a copy, symbolic batch allowed */
  tcase f = RESIZE(.name = "linear_identity_sym", .nargs = 1, .args = {{F32, 4, {N_, 2, 3, 3}}},
                   .attrs = {AINTS("sizes", N_, 2, 3, 3), AFLTS("scales", 1, 1, 1, 1), ASTR("mode", "linear")},
                   .nbatch = 2, .batch = {1, 3});
  mlc_th_kernel_case(&f);
  tcase g = RESIZE(.name = "linear_sym_batch", .nargs = 1, .args = {{F32, 4, {N_, 2, 3, 3}}},
                   .attrs = {AINTS("sizes", N_, 2, 5, 2), AFLTS("scales", 1, 1, 5.0 / 3, 2.0 / 3), ASTR("mode", "linear")},
                   .nbatch = 2, .batch = {2, 1});
  mlc_th_kernel_case(&g);
}

static void t_resize_cubic(void) {
  tcase a = RESIZE(.name = "cubic_up", .nargs = 1, .args = {{F32, 4, {1, 2, 4, 4}}},
                   .attrs = {AINTS("sizes", 1, 2, 8, 8), AFLTS("scales", 1, 1, 2, 2), ASTR("mode", "cubic")});
  mlc_th_kernel_case(&a);
  tcase b = RESIZE(.name = "cubic_down_exclude", .nargs = 1, .args = {{F32, 4, {1, 1, 5, 6}}},
                   .attrs = {AINTS("sizes", 1, 1, 4, 4), AFLTS("scales", 1, 1, 0.8, 0.7), ASTR("mode", "cubic"),
                             AFLT("cubic_coeff_a", -0.5), AINT("exclude_outside", 1)});
  mlc_th_kernel_case(&b);
  tcase c = RESIZE(.name = "cubic_up_exclude", .nargs = 1, .args = {{F32, 4, {1, 1, 4, 3}}},
                   .attrs = {AINTS("sizes", 1, 1, 8, 7), AFLTS("scales", 1, 1, 2, 7.0 / 3), ASTR("mode", "cubic"),
                             AFLT("cubic_coeff_a", -0.5), AINT("exclude_outside", 1)});
  mlc_th_kernel_case(&c);
  tcase d = RESIZE(.name = "cubic_align", .nargs = 1, .args = {{F32, 4, {1, 1, 4, 5}}},
                   .attrs = {AINTS("sizes", 1, 1, 7, 3), AFLTS("scales", 1, 1, 1.75, 0.6), ASTR("mode", "cubic"),
                             ASTR("coordinate_transformation_mode", "align_corners")});
  mlc_th_kernel_case(&d);
  tcase e = RESIZE(.name = "cubic_asym_f64", .nargs = 1, .args = {{F64, 2, {4, 4}}},
                   .attrs = {AINTS("sizes", 8, 6), AFLTS("scales", 2, 1.5), ASTR("mode", "cubic"),
                             ASTR("coordinate_transformation_mode", "asymmetric")});
  mlc_th_kernel_case(&e);
}

/* scales and roi as arguments (run-time values), tf_crop_and_resize */
static void t_resize_args(void) {
  static const double sc[] = {1, 1, 0.6, 2.5}, sc2[] = {1, 1, 1.5, 2};
  static const double roi[] = {0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7}, roi2[] = {0, 0, 0.1, 0.25, 1, 1, 0.8, 0.5};
  tcase a = RESIZE(.name = "scales_arg_nearest", .nargs = 2, .args = {{F32, 4, {1, 2, 4, 5}}, {F32, 1, {4}}},
                   .attrs = {AINTS("sizes", 1, 2, 2, 12), AINT("scales_arg", 1), ASTR("mode", "nearest")},
                   .fixed = {NULL, sc});
  mlc_th_kernel_case(&a);
  tcase b = RESIZE(.name = "scales_arg_linear", .nargs = 2, .args = {{F32, 4, {1, 2, 4, 5}}, {F32, 1, {4}}},
                   .attrs = {AINTS("sizes", 1, 2, 2, 12), AINT("scales_arg", 1), ASTR("mode", "linear")},
                   .fixed = {NULL, sc});
  mlc_th_kernel_case(&b);
  tcase c = RESIZE(.name = "scales_arg_cubic", .nargs = 2, .args = {{F32, 4, {1, 1, 4, 4}}, {F32, 1, {4}}},
                   .attrs = {AINTS("sizes", 1, 1, 6, 8), AINT("scales_arg", 1), ASTR("mode", "cubic")},
                   .fixed = {NULL, sc2});
  mlc_th_kernel_case(&c);
  tcase d = RESIZE(.name = "crop_linear_roi_arg", .nargs = 2, .args = {{F32, 4, {1, 1, 4, 4}}, {F32, 1, {8}}},
                   .attrs = {AINTS("sizes", 1, 1, 3, 3), AFLTS("scales", 1, 1, 0.75, 0.75), AINT("roi_arg", 1),
                             ASTR("mode", "linear"), ASTR("coordinate_transformation_mode", "tf_crop_and_resize"),
                             AFLT("extrapolation_value", 10)},
                   .fixed = {NULL, roi});
  mlc_th_kernel_case(&d);
  tcase e = RESIZE(.name = "crop_nearest_roi_attr", .nargs = 1, .args = {{F32, 4, {1, 2, 5, 6}}},
                   .attrs = {AINTS("sizes", 1, 2, 4, 3), AFLTS("scales", 1, 1, 0.8, 0.5),
                             AFLTS("roi", 0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7), ASTR("mode", "nearest"),
                             ASTR("coordinate_transformation_mode", "tf_crop_and_resize"),
                             AFLT("extrapolation_value", -3)});
  mlc_th_kernel_case(&e);
  tcase f = RESIZE(.name = "crop_cubic_both_args", .nargs = 3,
                   .args = {{F32, 4, {1, 1, 6, 6}}, {F32, 1, {8}}, {F32, 1, {4}}},
                   .attrs = {AINTS("sizes", 1, 1, 4, 1), AINT("roi_arg", 1), AINT("scales_arg", 1),
                             ASTR("mode", "cubic"), ASTR("coordinate_transformation_mode", "tf_crop_and_resize")},
                   .fixed = {NULL, roi2, sc2});
  mlc_th_kernel_case(&f);
}

/* ---- gathers ----------------------------------------------------------------------------- */

static void t_gather_elements(void) {
  tcase a = {.name = "gather_elements_axis1", .op = MLC_OP_GATHER_ELEMENTS, .nargs = 2,
             .args = {{F32, 3, {3, 4, 5}}, {I64, 3, {2, 6, 5}}}, .attrs = {AINT("axis", 1)},
             .ref = ref_gather_elements, .gen = gen_index};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "gather_elements_axis0_i32", .op = MLC_OP_GATHER_ELEMENTS, .nargs = 2,
             .args = {{I32, 2, {4, 3}}, {I32, 2, {5, 2}}}, .attrs = {AINT("axis", 0)},
             .ref = ref_gather_elements, .gen = gen_index};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "gather_elements_last_bool", .op = MLC_OP_GATHER_ELEMENTS, .nargs = 2,
             .args = {{BOOL, 2, {3, 7}}, {I64, 2, {3, 2}}}, .attrs = {AINT("axis", 1)},
             .ref = ref_gather_elements, .gen = gen_index};
  mlc_th_kernel_case(&c);
}

static void t_gather_nd(void) {
  tcase a = {.name = "gather_nd_k1", .op = MLC_OP_GATHER_ND, .nargs = 2,
             .args = {{F32, 3, {4, 3, 2}}, {I64, 3, {2, 2, 1}}}, .ref = ref_gather_nd, .gen = gen_index};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "gather_nd_full", .op = MLC_OP_GATHER_ND, .nargs = 2,
             .args = {{F64, 3, {4, 3, 2}}, {I32, 2, {5, 3}}}, .ref = ref_gather_nd, .gen = gen_index};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "gather_nd_batch1", .op = MLC_OP_GATHER_ND, .nargs = 2,
             .args = {{I32, 4, {2, 3, 4, 2}}, {I64, 3, {2, 5, 2}}}, .attrs = {AINT("batch_dims", 1)},
             .ref = ref_gather_nd, .gen = gen_index};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "gather_nd_batch2", .op = MLC_OP_GATHER_ND, .nargs = 2,
             .args = {{F32, 3, {2, 3, 5}}, {I64, 3, {2, 3, 1}}}, .attrs = {AINT("batch_dims", 2)},
             .ref = ref_gather_nd, .gen = gen_index};
  mlc_th_kernel_case(&d);
}

/* ---- scatters ------------------------------------------------------------------------------ */

static void t_scatter_elements(void) {
  static const char *const reds[] = {"none", "add", "mul", "max", "min"};
  char names[5][64];
  for (int i = 0; i < 5; i++) {
    snprintf(names[i], sizeof names[i], "scatter_elements_%s", reds[i]);
    /* 6 indices per row into 4 positions: duplicates */
    tcase a = {.name = names[i], .op = MLC_OP_SCATTER_ELEMENTS, .nargs = 3,
               .args = {{F32, 3, {2, 4, 3}}, {I64, 3, {2, 6, 2}}, {F32, 3, {2, 6, 2}}},
               .attrs = {AINT("axis", 1), ASTR("reduction", reds[i])}, .ref = ref_scatter_elements,
               .gen = gen_index};
    mlc_th_kernel_case(&a);
  }
  tcase b = {.name = "scatter_elements_axis0_i32", .op = MLC_OP_SCATTER_ELEMENTS, .nargs = 3,
             .args = {{I32, 2, {5, 3}}, {I32, 2, {2, 3}}, {I32, 2, {2, 3}}}, .attrs = {AINT("axis", 0)},
             .ref = ref_scatter_elements, .gen = gen_index};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "scatter_elements_add_i64_last", .op = MLC_OP_SCATTER_ELEMENTS, .nargs = 3,
             .args = {{I64, 2, {3, 4}}, {I64, 2, {3, 7}}, {I64, 2, {3, 7}}},
             .attrs = {AINT("axis", 1), ASTR("reduction", "add")}, .ref = ref_scatter_elements, .gen = gen_index};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "scatter_elements_bool", .op = MLC_OP_SCATTER_ELEMENTS, .nargs = 3,
             .args = {{BOOL, 1, {6}}, {I64, 1, {3}}, {BOOL, 1, {3}}}, .attrs = {AINT("axis", 0)},
             .ref = ref_scatter_elements, .gen = gen_index};
  mlc_th_kernel_case(&d);
}

static void t_scatter_nd(void) {
  static const char *const reds[] = {"none", "add", "mul", "max", "min"};
  char names[5][64];
  for (int i = 0; i < 5; i++) {
    snprintf(names[i], sizeof names[i], "scatter_nd_k1_%s", reds[i]);
    tcase a = {.name = names[i], .op = MLC_OP_SCATTER_ND, .nargs = 3,
               .args = {{F32, 3, {4, 3, 2}}, {I64, 3, {2, 3, 1}}, {F32, 4, {2, 3, 3, 2}}},
               .attrs = {ASTR("reduction", reds[i])}, .ref = ref_scatter_nd, .gen = gen_index};
    mlc_th_kernel_case(&a);
  }
  tcase b = {.name = "scatter_nd_full", .op = MLC_OP_SCATTER_ND, .nargs = 3,
             .args = {{F32, 3, {3, 2, 4}}, {I64, 2, {7, 3}}, {F32, 1, {7}}}, .ref = ref_scatter_nd, .gen = gen_index};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "scatter_nd_k2_add_i32", .op = MLC_OP_SCATTER_ND, .nargs = 3,
             .args = {{I32, 3, {3, 2, 4}}, {I32, 2, {5, 2}}, {I32, 2, {5, 4}}},
             .attrs = {ASTR("reduction", "add")}, .ref = ref_scatter_nd, .gen = gen_index};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "scatter_nd_single", .op = MLC_OP_SCATTER_ND, .nargs = 3,
             .args = {{F32, 2, {3, 4}}, {I64, 1, {1}}, {F32, 1, {4}}}, .ref = ref_scatter_nd, .gen = gen_index};
  mlc_th_kernel_case(&d);
}

/* The evaluator (constant folding) as the reference: kernel and evaluator agree. */
static void t_indexing_eval(void) {
  tcase a = {.name = "eval_gather_elements", .op = MLC_OP_GATHER_ELEMENTS, .nargs = 2,
             .args = {{F32, 3, {3, 4, 5}}, {I32, 3, {3, 2, 5}}}, .attrs = {AINT("axis", 1)}, .gen = gen_index};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "eval_gather_nd_batch1", .op = MLC_OP_GATHER_ND, .nargs = 2,
             .args = {{I8, 4, {2, 3, 4, 2}}, {I64, 3, {2, 5, 2}}}, .attrs = {AINT("batch_dims", 1)},
             .gen = gen_index};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "eval_scatter_elements_mul", .op = MLC_OP_SCATTER_ELEMENTS, .nargs = 3,
             .args = {{F64, 2, {4, 3}}, {I64, 2, {6, 3}}, {F64, 2, {6, 3}}},
             .attrs = {AINT("axis", 0), ASTR("reduction", "mul")}, .gen = gen_index};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "eval_scatter_elements_min_i16", .op = MLC_OP_SCATTER_ELEMENTS, .nargs = 3,
             .args = {{MLC_DTYPE_I16, 2, {3, 4}}, {I64, 2, {3, 5}}, {MLC_DTYPE_I16, 2, {3, 5}}},
             .attrs = {AINT("axis", 1), ASTR("reduction", "min")}, .gen = gen_index};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "eval_scatter_nd_add_u8", .op = MLC_OP_SCATTER_ND, .nargs = 3,
             .args = {{U8, 3, {3, 2, 4}}, {I64, 2, {6, 2}}, {U8, 2, {6, 4}}},
             .attrs = {ASTR("reduction", "add")}, .gen = gen_index, .ihi = 200};
  mlc_th_kernel_case(&e);
  tcase f = {.name = "eval_scatter_nd_none", .op = MLC_OP_SCATTER_ND, .nargs = 3,
             .args = {{F32, 3, {3, 2, 4}}, {I64, 3, {2, 2, 3}}, {F32, 2, {2, 2}}}, .gen = gen_index};
  mlc_th_kernel_case(&f);
}

/* ---- max_pool_indices ---------------------------------------------------------------------- */

#define POOLIDX(...) {.op = MLC_OP_MAX_POOL_INDICES, .nargs = 1, .ref = ref_pool_indices, __VA_ARGS__}

static void t_pool_indices(void) {
  /* small integers in floats: ties, the first maximum wins */
  tcase a = POOLIDX(.name = "pool_idx_pads", .args = {{F32, 4, {2, 3, 5, 5}}},
                    .attrs = {AINTS("kernel", 3, 3), AINTS("pads", 1, 1, 1, 1)}, .ints = 1, .ilo = 0, .ihi = 3);
  mlc_th_kernel_case(&a);
  tcase b = POOLIDX(.name = "pool_idx_colmajor", .args = {{F32, 4, {1, 2, 5, 6}}},
                    .attrs = {AINTS("kernel", 2, 2), AINTS("strides", 2, 2), AINT("storage_order", 1)});
  mlc_th_kernel_case(&b);
  tcase c = POOLIDX(.name = "pool_idx_dil_ceil", .args = {{F32, 4, {1, 1, 8, 7}}},
                    .attrs = {AINTS("kernel", 2, 3), AINTS("strides", 2, 2), AINTS("dilations", 2, 1),
                              AINTS("pads", 0, 1, 1, 1), AINT("ceil_mode", 1)},
                    .ints = 1, .ilo = -2, .ihi = 2);
  mlc_th_kernel_case(&c);
  tcase d = POOLIDX(.name = "pool_idx_1d_i8", .args = {{I8, 3, {2, 2, 9}}},
                    .attrs = {AINTS("kernel", 3), AINTS("strides", 2), AINTS("pads", 1, 1)});
  mlc_th_kernel_case(&d);
  tcase e = POOLIDX(.name = "pool_idx_3d_colmajor", .args = {{F64, 5, {1, 2, 3, 4, 3}}},
                    .attrs = {AINTS("kernel", 2, 2, 2), AINTS("pads", 0, 1, 0, 1, 0, 1), AINT("storage_order", 1)});
  mlc_th_kernel_case(&e);
  tcase f = POOLIDX(.name = "pool_idx_sym_batch", .args = {{F32, 4, {N_, 3, 4, 4}}},
                    .attrs = {AINTS("kernel", 2, 2), AINTS("strides", 2, 2)}, .nbatch = 2, .batch = {1, 3});
  mlc_th_kernel_case(&f);
}

/* ---- inference errors ------------------------------------------------------------------------- */

/* Emits |op| on params of |types| with |attrs|; the status (transferred). */
static mlc_status emit_status(mlc_op op, const mlc_type *types, int n, const mlc_attr *attrs, int na) {
  mlc_module *gm = NULL;
  mlc_func *f = NULL;
  mlc_value *args[4], *out = NULL;
  mlc_origin o = {"bad_node_3", "Test", 17, 3};
  CU_ASSERT_PTR_NULL_FATAL(mlc_module_create(mlc_allocator_default(), &gm));
  CU_ASSERT_PTR_NULL(mlc_func_create(gm, "main", &f));
  for (int i = 0; i < n; i++) CU_ASSERT_PTR_NULL(mlc_func_add_param(f, NULL, &types[i], &args[i]));
  mlc_status s = mlc_graph_emit1(f, op, args, n, attrs, na, &o, &out);
  mlc_module_destroy(gm);
  return s;
}

static void expect_error(mlc_status s, mlc_code code, const char *text) {
  CU_ASSERT_PTR_NOT_NULL(s);
  if (!s) return;
  CU_ASSERT_EQUAL(mlc_status_code(s), code);
  if (!strstr(mlc_status_message(s), text) || !strstr(mlc_status_message(s), "bad_node_3"))
    fprintf(stderr, "\nunexpected message: %s (wanted \"%s\")\n", mlc_status_message(s), text);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), text));
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), "bad_node_3"));
  mlc_status_free(s);
}

static void t_infer_errors(void) {
  int64_t d4[] = {1, 1, 4, 4}, d2[] = {2, 3}, d1[] = {4}, d3[] = {2, 2, 3};
  mlc_type x = {F32, 4, d4}, i2 = {I64, 2, d2}, f2 = {F32, 2, d2}, v4 = {F32, 1, d1}, i3 = {I64, 3, d3};
  mlc_attr r1[] = {AINTS("sizes", 1, 1, 8, 8), ASTR("mode", "bicubic"), AFLTS("scales", 1, 1, 2, 2)};
  expect_error(emit_status(MLC_OP_RESIZE, &x, 1, r1, 3), MLC_INVALID_ARGUMENT, "bicubic");
  mlc_attr r2[] = {AINTS("sizes", 1, 1, 8)};
  expect_error(emit_status(MLC_OP_RESIZE, &x, 1, r2, 1), MLC_INVALID_ARGUMENT, "scales");
  mlc_attr r3[] = {AINTS("sizes", 1, 1, 8, 8), AINT("scales_arg", 1)};
  mlc_type xs[2] = {x, i2};
  expect_error(emit_status(MLC_OP_RESIZE, xs, 2, r3, 2), MLC_INVALID_ARGUMENT, "scales");
  mlc_type xv[2] = {x, v4};
  CU_ASSERT_PTR_NULL(emit_status(MLC_OP_RESIZE, xv, 2, r3, 2));
  mlc_attr r4[] = {AINTS("sizes", 1, 1, 8, 8), AFLTS("scales", 1, 1, 2, 0)};
  expect_error(emit_status(MLC_OP_RESIZE, &x, 1, r4, 2), MLC_INVALID_ARGUMENT, "must be > 0");
  mlc_attr g1[] = {AINT("axis", 2)};
  mlc_type ge[2] = {f2, i2};
  expect_error(emit_status(MLC_OP_GATHER_ELEMENTS, ge, 2, g1, 1), MLC_INVALID_ARGUMENT, "axis 2");
  mlc_type ge2[2] = {f2, f2};
  expect_error(emit_status(MLC_OP_GATHER_ELEMENTS, ge2, 2, NULL, 0), MLC_INVALID_ARGUMENT, "int32 or int64");
  mlc_type gn[2] = {f2, i3};
  expect_error(emit_status(MLC_OP_GATHER_ND, gn, 2, NULL, 0), MLC_INVALID_ARGUMENT, "last dim of indices");
  mlc_type se[3] = {f2, i2, x};
  expect_error(emit_status(MLC_OP_SCATTER_ELEMENTS, se, 3, NULL, 0), MLC_INVALID_ARGUMENT, "updates");
  mlc_attr s1[] = {ASTR("reduction", "avg")};
  mlc_type se2[3] = {f2, i2, f2};
  expect_error(emit_status(MLC_OP_SCATTER_ELEMENTS, se2, 3, s1, 1), MLC_INVALID_ARGUMENT, "avg");
  mlc_type sn[3] = {f2, i2, f2};
  expect_error(emit_status(MLC_OP_SCATTER_ND, sn, 3, NULL, 0), MLC_INVALID_ARGUMENT, "last dim of indices");
  mlc_attr p1[] = {AINTS("kernel", 2, 2), AINT("storage_order", 2)};
  expect_error(emit_status(MLC_OP_MAX_POOL_INDICES, &x, 1, p1, 2), MLC_INVALID_ARGUMENT, "storage_order");
  mlc_attr p2[] = {AINTS("kernel", 2, 2)};
  mlc_module *m2 = NULL;
  CU_ASSERT_PTR_NULL_FATAL(mlc_module_create(mlc_allocator_default(), &m2));
  mlc_func *f = NULL;
  mlc_value *xv1 = NULL, *y = NULL;
  mlc_origin o = {"ok_node", "Test", 17, 0};
  CU_ASSERT_PTR_NULL(mlc_func_create(m2, "main", &f));
  CU_ASSERT_PTR_NULL(mlc_func_add_param(f, NULL, &x, &xv1));
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_MAX_POOL_INDICES, &xv1, 1, p2, 1, &o, &y));
  if (y) {
    CU_ASSERT_EQUAL(y->type.dtype, I64);
    CU_ASSERT_EQUAL(y->type.rank, 4);
    CU_ASSERT_EQUAL(y->type.dims[2], 3);
  }
  mlc_module_destroy(m2);
}

static void register_suites(void) {
  static const CU_TestInfo numeric[] = {
      {"resize_nearest", t_resize_nearest},
      {"resize_simple", t_resize_simple},
      {"resize_linear", t_resize_linear},
      {"resize_cubic", t_resize_cubic},
      {"resize_args_crop", t_resize_args},
      {"gather_elements", t_gather_elements},
      {"gather_nd", t_gather_nd},
      {"scatter_elements", t_scatter_elements},
      {"scatter_nd", t_scatter_nd},
      {"max_pool_indices", t_pool_indices},
      {"indexing_vs_evaluator", t_indexing_eval},
      CU_TEST_INFO_NULL,
  };
  static const CU_TestInfo infer[] = {
      {"errors", t_infer_errors},
      CU_TEST_INFO_NULL,
  };
  mlc_test_add_suite("image_infer", infer);
  CU_pSuite s = CU_add_suite("image_numeric", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (const CU_TestInfo *t = numeric; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  mlc_th_int_atol = 1; /* atol: truncated interpolations */
  return mlc_test_main("test_image_ops", fns);
}
