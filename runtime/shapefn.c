/*
** shapefn.c: the runtime's built-in functions ("mlc.*" steps).
**
** Shapes that depend on tensor values are computed while the model runs by
** small host functions with the kernel calling convention of rt_abi.h:
**
**   mlc.reshape_dims(x, shape, out, allowzero)    ONNX Reshape's output dims
**   mlc.unsqueeze_dims(x, axes, out)              dims with 1s inserted
**   mlc.squeeze_dims(x, axes, out)                dims without axes of extent 1
**   mlc.reduce_dims(x, axes, out, keepdims, noop) reduced dims (1s; then squeezed)
**   mlc.expand_dims(x, shape, out)                numpy broadcast of dims and shape
**   mlc.tile_dims(x, repeats, out)                dims times repeats
**   mlc.pad_params(x, pads[, axes], out)          [padded dims, begins, ends]
**   mlc.slice_params(x, starts, ends[, axes[, steps]], out)
**                                                 [extents, begins, steps]
**   mlc.split_params(x, split, out, axis, index)  [extents, begins, steps] of a part
**   mlc.range_len(start, limit, delta, out)       [element count]
**   mlc.nonzero_count(x, out)                     [number of nonzero elements]
**   mlc.nonzero(x, n, out)                        int64 [rank, n] coordinates
**   mlc.compress_len(x, cond, out, axis)          [true entries of cond within the axis]
**   mlc.compress(x, cond, n, out, axis)           the slices of x where cond is true
**                                                 (axis -1: x flattened)
**   mlc.nms_count(boxes, scores, max, iou, score, out, center_point_box)
**                                                 [boxes NonMaxSuppression keeps]
**   mlc.nms(boxes, scores, max, iou, score, n, out, center_point_box)
**                                                 int64 [n, 3] rows [batch, class, box]
**   mlc.resize_dims(x, v, out)                    Resize's output dims: v = sizes
**                                                 (integers) or scales (floats)
**
** Tensor args are DLTensor*, trailing int attributes pointers to int64.
** The values are validated as ONNX specifies; a bad one is an error that
** says what does not fit (the session prefixes the step's node).  They run
** on the host thread: the vectors are a handful of numbers.
*/
#include "config.h"
#include "runtime/rt_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXR MLC_RT_MAX_NDIM

static const DLTensor *T(void **args, int i) { return (const DLTensor *)args[i]; }
static int64_t IMM(void **args, int i) { return *(const int64_t *)args[i]; }

/* Element count of |t|.  The session has sized every tensor a step names
** (mlc_rt_shape_size: the product of its nonzero dims fits in int64), so a
** zero dim anywhere gives 0 and the product never overflows. */
static int64_t numel(const DLTensor *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; i++)
    if (t->shape[i] == 0) return 0;
  for (int32_t i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

static const char *base(const DLTensor *t) { return (const char *)t->data + t->byte_offset; }
static int64_t *out64(const DLTensor *t) { return (int64_t *)(void *)((char *)t->data + t->byte_offset); }

/* Element |i| of an integer tensor as int64 (unsigned 64-bit values above
** INT64_MAX saturate). */
static int64_t get_i(const DLTensor *t, int64_t i) {
  const char *p = base(t);
  int u = t->dtype.code == kDLUInt || t->dtype.code == 6;
  switch (t->dtype.bits) {
    case 8: return u ? (int64_t)((const uint8_t *)p)[i] : (int64_t)((const int8_t *)p)[i];
    case 16: return u ? (int64_t)((const uint16_t *)p)[i] : (int64_t)((const int16_t *)p)[i];
    case 32: return u ? (int64_t)((const uint32_t *)p)[i] : (int64_t)((const int32_t *)p)[i];
    default: {
      if (!u) return ((const int64_t *)p)[i];
      uint64_t v = ((const uint64_t *)p)[i];
      return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
    }
  }
}

/* Element 0 of a numeric scalar as a double; 0 when the dtype is unknown. */
static double get_d(const DLTensor *t) {
  const char *p = base(t);
  if (t->dtype.code == kDLFloat && t->dtype.bits == 32) return ((const float *)p)[0];
  if (t->dtype.code == kDLFloat && t->dtype.bits == 64) return ((const double *)p)[0];
  if (t->dtype.code == kDLFloat || t->dtype.code == kDLBfloat) return NAN;
  return (double)get_i(t, 0);
}

static int fail(mlc_rt_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(mlc_rt_ctx *ctx, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ctx->api->set_error(ctx, msg);
}

/* "(2, 3, 4)" of |n| values into |buf|. */
static const char *list_str(const int64_t *v, int64_t n, char *buf, size_t size) {
  size_t w = 0;
  buf[0] = 0;
  w += (size_t)snprintf(buf, size, "(");
  for (int64_t i = 0; i < n && w + 24 < size; i++)
    w += (size_t)snprintf(buf + w, size - w, "%s%lld", i ? ", " : "", (long long)v[i]);
  if (w + 4 < size) snprintf(buf + w, size - w, "%s", n == 1 ? ",)" : ")");
  return buf;
}

static const char *dims_str(const DLTensor *t, char *buf, size_t size) {
  return list_str(t->shape, t->ndim, buf, size);
}

/* Reads an integer vector (the arg's whole data) into |v| (at most MAXR). */
static int read_vec(mlc_rt_ctx *ctx, const DLTensor *t, const char *what, int64_t *v, int64_t *n) {
  *n = numel(t);
  if (*n > 2 * MAXR) return fail(ctx, "%s has %lld entries (at most %d)", what, (long long)*n, 2 * MAXR);
  for (int64_t i = 0; i < *n; i++) v[i] = get_i(t, i);
  return 0;
}

/* Normalizes |axes|[0..k) against |rank| (negative from the back), each
** once; |mark| (rank entries) receives which were named. */
static int norm_axes(mlc_rt_ctx *ctx, int64_t *axes, int64_t k, int64_t rank, unsigned char *mark) {
  memset(mark, 0, (size_t)(rank > 0 ? rank : 1));
  for (int64_t i = 0; i < k; i++) {
    int64_t a = axes[i];
    if (a < -rank || a >= rank)
      return fail(ctx, "axis %lld is out of range for rank %lld", (long long)a, (long long)rank);
    if (a < 0) a += rank;
    if (mark[a]) return fail(ctx, "axis %lld is repeated", (long long)axes[i]);
    mark[a] = 1;
    axes[i] = a;
  }
  return 0;
}

/* Checks that the output vector has |n| entries. */
static int check_out(mlc_rt_ctx *ctx, const DLTensor *o, int64_t n) {
  if (numel(o) != n)
    return fail(ctx, "internal: the computed vector has %lld entries, expected %lld",
                (long long)numel(o), (long long)n);
  return 0;
}

/* ---- shape functions ----------------------------------------------------- */

/* reshape_dims(x, shape, out, allowzero): 0 copies x's dim (unless
** allowzero), one -1 takes the rest of the element count. */
static int reshape_dims(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 4) return fail(ctx, "reshape_dims: %d args", n);
  const DLTensor *x = T(args, 0);
  int64_t s[2 * MAXR], k, d[2 * MAXR], infer = -1, prod = 1, total = numel(x);
  int allowzero = IMM(args, 3) != 0;
  char b1[256], b2[256];
  if (read_vec(ctx, T(args, 1), "shape", s, &k)) return -1;
  for (int64_t i = 0; i < k; i++) {
    int64_t v = s[i];
    if (v == -1) {
      if (infer >= 0) return fail(ctx, "shape %s has more than one -1", list_str(s, k, b1, sizeof b1));
      infer = i;
      continue;
    }
    if (v < -1) return fail(ctx, "shape %s has the invalid entry %lld", list_str(s, k, b1, sizeof b1), (long long)v);
    if (v == 0 && !allowzero) {
      if (i >= x->ndim)
        return fail(ctx, "shape %s: entry %lld is 0 but the input %s has no dim %lld",
                    list_str(s, k, b1, sizeof b1), (long long)i, dims_str(x, b2, sizeof b2), (long long)i);
      v = x->shape[i];
    }
    d[i] = v;
    if (prod != 0 && v > 0 && prod > INT64_MAX / v) return fail(ctx, "shape %s overflows", list_str(s, k, b1, sizeof b1));
    prod *= v;
  }
  if (infer >= 0) {
    if (prod == 0 && total != 0)
      return fail(ctx, "cannot reshape %s (%lld elements) to %s: -1 with a 0 dim",
                  dims_str(x, b1, sizeof b1), (long long)total, list_str(s, k, b2, sizeof b2));
    d[infer] = prod == 0 ? 0 : total / prod;
    if (prod != 0 && total % prod != 0) d[infer] = -1;
    else if (prod != 0) prod *= d[infer];
    else prod = total;
  }
  if ((infer >= 0 && d[infer] < 0) || prod != total)
    return fail(ctx, "cannot reshape %s (%lld elements) to %s", dims_str(x, b1, sizeof b1),
                (long long)total, list_str(s, k, b2, sizeof b2));
  if (check_out(ctx, T(args, 2), k)) return -1;
  memcpy(out64(T(args, 2)), d, sizeof *d * (size_t)k);
  return 0;
}

/* unsqueeze_dims(x, axes, out): 1s at the axes of the output. */
static int unsqueeze_dims(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 3) return fail(ctx, "unsqueeze_dims: %d args", n);
  const DLTensor *x = T(args, 0);
  int64_t a[2 * MAXR], k, d[2 * MAXR];
  unsigned char mark[3 * MAXR];
  if (read_vec(ctx, T(args, 1), "axes", a, &k)) return -1;
  int64_t r = x->ndim + k;
  if (r > MAXR) return fail(ctx, "output rank %lld is too large", (long long)r);
  if (norm_axes(ctx, a, k, r, mark)) return -1;
  for (int64_t i = 0, j = 0; i < r; i++) d[i] = mark[i] ? 1 : x->shape[j++];
  if (check_out(ctx, T(args, 2), r)) return -1;
  memcpy(out64(T(args, 2)), d, sizeof *d * (size_t)r);
  return 0;
}

/* squeeze_dims(x, axes, out): the dims not named (each named one is 1). */
static int squeeze_dims(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 3) return fail(ctx, "squeeze_dims: %d args", n);
  const DLTensor *x = T(args, 0);
  int64_t a[2 * MAXR], k, d[MAXR], r = 0;
  unsigned char mark[MAXR + 1];
  char b[256];
  if (read_vec(ctx, T(args, 1), "axes", a, &k)) return -1;
  if (norm_axes(ctx, a, k, x->ndim, mark)) return -1;
  for (int32_t i = 0; i < x->ndim; i++) {
    if (!mark[i]) d[r++] = x->shape[i];
    else if (x->shape[i] != 1)
      return fail(ctx, "cannot squeeze dim %d of %s: it is not 1", i, dims_str(x, b, sizeof b));
  }
  if (check_out(ctx, T(args, 2), r)) return -1;
  memcpy(out64(T(args, 2)), d, sizeof *d * (size_t)r);
  return 0;
}

/* reduce_dims(x, axes, out, keepdims, noop_with_empty_axes). */
static int reduce_dims(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 5) return fail(ctx, "reduce_dims: %d args", n);
  const DLTensor *x = T(args, 0);
  int64_t a[2 * MAXR], k, d[2 * MAXR], r = x->ndim, m = r;
  unsigned char mark[MAXR + 1];
  if (read_vec(ctx, T(args, 1), "axes", a, &k)) return -1;
  if (norm_axes(ctx, a, k, r, mark)) return -1;
  if (k == 0 && !IMM(args, 4)) memset(mark, 1, (size_t)(r > 0 ? r : 1));
  for (int64_t i = 0; i < r; i++) d[i] = mark[i] ? 1 : x->shape[i];
  if (!IMM(args, 3))
    for (int64_t i = 0; i < r; i++)
      if (!mark[i]) d[m++] = x->shape[i];
  if (check_out(ctx, T(args, 2), m)) return -1;
  memcpy(out64(T(args, 2)), d, sizeof *d * (size_t)m);
  return 0;
}

/* expand_dims(x, shape, out): numpy broadcast, aligned at the back. */
static int expand_dims(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 3) return fail(ctx, "expand_dims: %d args", n);
  const DLTensor *x = T(args, 0);
  int64_t s[2 * MAXR], k, d[2 * MAXR];
  char b1[256], b2[256];
  if (read_vec(ctx, T(args, 1), "shape", s, &k)) return -1;
  int64_t rx = x->ndim, r = rx > k ? rx : k;
  if (r > MAXR) return fail(ctx, "output rank %lld is too large", (long long)r);
  for (int64_t i = 0; i < r; i++) {
    int64_t a = i - (r - rx) >= 0 ? x->shape[i - (r - rx)] : 1;
    int64_t v = i - (r - k) >= 0 ? s[i - (r - k)] : 1;
    if (v < 0) return fail(ctx, "shape %s has the negative dim %lld", list_str(s, k, b1, sizeof b1), (long long)v);
    if (a == v || v == 1) d[i] = a;
    else if (a == 1) d[i] = v;
    else
      return fail(ctx, "cannot expand %s to %s", dims_str(x, b1, sizeof b1), list_str(s, k, b2, sizeof b2));
  }
  if (check_out(ctx, T(args, 2), r)) return -1;
  memcpy(out64(T(args, 2)), d, sizeof *d * (size_t)r);
  return 0;
}

/* tile_dims(x, repeats, out). */
static int tile_dims(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 3) return fail(ctx, "tile_dims: %d args", n);
  const DLTensor *x = T(args, 0);
  int64_t rep[2 * MAXR], k, d[MAXR];
  if (read_vec(ctx, T(args, 1), "repeats", rep, &k)) return -1;
  if (k != x->ndim) return fail(ctx, "repeats has %lld entries for rank %d", (long long)k, x->ndim);
  for (int64_t i = 0; i < k; i++) {
    if (rep[i] < 0) return fail(ctx, "repeats[%lld] = %lld is negative", (long long)i, (long long)rep[i]);
    if (rep[i] > 0 && x->shape[i] > INT64_MAX / rep[i]) return fail(ctx, "tiled dim %lld overflows", (long long)i);
    d[i] = x->shape[i] * rep[i];
  }
  if (check_out(ctx, T(args, 2), k)) return -1;
  memcpy(out64(T(args, 2)), d, sizeof *d * (size_t)k);
  return 0;
}

/* pad_params(x, pads[, axes], out): [padded dims, begins, ends]. */
static int pad_params(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 3 && n != 4) return fail(ctx, "pad_params: %d args", n);
  const DLTensor *x = T(args, 0);
  int64_t p[2 * MAXR], k, ax[2 * MAXR], na = x->ndim, r = x->ndim, d[3 * MAXR];
  unsigned char mark[MAXR + 1];
  char b[256];
  if (read_vec(ctx, T(args, 1), "pads", p, &k)) return -1;
  if (n == 4) {
    if (read_vec(ctx, T(args, 2), "axes", ax, &na)) return -1;
    if (norm_axes(ctx, ax, na, r, mark)) return -1;
  } else {
    for (int64_t i = 0; i < na; i++) ax[i] = i;
  }
  if (k != 2 * na) return fail(ctx, "pads has %lld entries for %lld axes", (long long)k, (long long)na);
  for (int64_t i = 0; i < 3 * r; i++) d[i] = i < r ? x->shape[i] : 0;
  for (int64_t i = 0; i < na; i++) {
    int64_t a = ax[i], pb = p[i], pe = p[na + i];
    d[r + a] = pb;
    d[2 * r + a] = pe;
    __int128 sum = (__int128)d[a] + pb + pe; /* exact: three int64 values */
    /* the padded dim, and the input index (output index - begin) of every element */
    if (sum > INT64_MAX || sum - pb > INT64_MAX)
      return fail(ctx, "pads %lld, %lld of axis %lld make the %s input's dim overflow int64",
                  (long long)pb, (long long)pe, (long long)a, dims_str(x, b, sizeof b));
    d[a] = sum < 0 ? -1 : (int64_t)sum;
    if (d[a] < 0)
      return fail(ctx, "pads %lld, %lld of axis %lld crop more than the %s input has", (long long)pb,
                  (long long)pe, (long long)a, dims_str(x, b, sizeof b));
  }
  if (check_out(ctx, T(args, n - 1), 3 * r)) return -1;
  memcpy(out64(T(args, n - 1)), d, sizeof *d * (size_t)(3 * r));
  return 0;
}

/* Extent of x[b:e:step] along a dim of extent |dim| with b, e clamped. */
static int64_t slice_extent(int64_t dim, int64_t b, int64_t e, int64_t step, int64_t *begin) {
  if (b < 0) b += dim; /* no overflow: dim >= 0 */
  if (e < 0) e += dim;
  if (step > 0) {
    b = b < 0 ? 0 : b > dim ? dim : b;
    e = e < 0 ? 0 : e > dim ? dim : e;
    *begin = b;
    return e > b ? (e - b - 1) / step + 1 : 0; /* no overflow for any step */
  }
  if (dim == 0) {
    *begin = 0;
    return 0;
  }
  b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
  e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
  *begin = b;
  if (b <= e) return 0;
  uint64_t span = (uint64_t)(b - e), s = (uint64_t)(-(step + 1)) + 1;
  return (int64_t)((span + s - 1) / s);
}

/* slice_params(x, starts, ends[, axes[, steps]], out): [extents, begins, steps]. */
static int slice_params(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n < 4 || n > 6) return fail(ctx, "slice_params: %d args", n);
  const DLTensor *x = T(args, 0);
  int64_t st[2 * MAXR], en[2 * MAXR], ax[2 * MAXR], sp[2 * MAXR], k, k2, r = x->ndim, d[3 * MAXR];
  unsigned char mark[MAXR + 1];
  if (read_vec(ctx, T(args, 1), "starts", st, &k) || read_vec(ctx, T(args, 2), "ends", en, &k2)) return -1;
  if (k2 != k) return fail(ctx, "starts has %lld entries, ends %lld", (long long)k, (long long)k2);
  if (n >= 5) {
    if (read_vec(ctx, T(args, 3), "axes", ax, &k2)) return -1;
    if (k2 != k) return fail(ctx, "starts has %lld entries, axes %lld", (long long)k, (long long)k2);
  } else {
    if (k > r) return fail(ctx, "%lld starts for rank %lld", (long long)k, (long long)r);
    for (int64_t i = 0; i < k; i++) ax[i] = i;
  }
  if (norm_axes(ctx, ax, k, r, mark)) return -1;
  if (n == 6) {
    if (read_vec(ctx, T(args, 4), "steps", sp, &k2)) return -1;
    if (k2 != k) return fail(ctx, "starts has %lld entries, steps %lld", (long long)k, (long long)k2);
  } else {
    for (int64_t i = 0; i < k; i++) sp[i] = 1;
  }
  for (int64_t i = 0; i < r; i++) d[i] = x->shape[i], d[r + i] = 0, d[2 * r + i] = 1;
  for (int64_t i = 0; i < k; i++) {
    int64_t a = ax[i];
    if (sp[i] == 0) return fail(ctx, "the step of axis %lld is 0", (long long)a);
    if (sp[i] == INT64_MIN) sp[i] = -INT64_MAX;
    d[a] = slice_extent(x->shape[a], st[i], en[i], sp[i], &d[r + a]);
    d[2 * r + a] = sp[i];
  }
  if (check_out(ctx, T(args, n - 1), 3 * r)) return -1;
  memcpy(out64(T(args, n - 1)), d, sizeof *d * (size_t)(3 * r));
  return 0;
}

/* split_params(x, split, out, axis, index): the part |index| along |axis|. */
static int split_params(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 5) return fail(ctx, "split_params: %d args", n);
  const DLTensor *x = T(args, 0);
  int64_t s[2 * MAXR], k, r = x->ndim, axis = IMM(args, 3), index = IMM(args, 4), d[3 * MAXR];
  char b[256];
  if (read_vec(ctx, T(args, 1), "split", s, &k)) return -1;
  if (axis < 0 || axis >= r || index < 0 || index >= k) return fail(ctx, "split part %lld of %lld on axis %lld", (long long)index, (long long)k, (long long)axis);
  int64_t sum = 0, at = 0;
  for (int64_t i = 0; i < k; i++) {
    if (s[i] < 0) return fail(ctx, "split %s has a negative entry", list_str(s, k, b, sizeof b));
    if (sum > INT64_MAX - s[i]) return fail(ctx, "split %s overflows int64", list_str(s, k, b, sizeof b));
    if (i == index) at = sum;
    sum += s[i];
  }
  if (sum != x->shape[axis])
    return fail(ctx, "split %s sums to %lld, axis %lld has %lld", list_str(s, k, b, sizeof b),
                (long long)sum, (long long)axis, (long long)x->shape[axis]);
  for (int64_t i = 0; i < r; i++) d[i] = x->shape[i], d[r + i] = 0, d[2 * r + i] = 1;
  d[axis] = s[index];
  d[r + axis] = at;
  if (check_out(ctx, T(args, 2), 3 * r)) return -1;
  memcpy(out64(T(args, 2)), d, sizeof *d * (size_t)(3 * r));
  return 0;
}

/* range_len(start, limit, delta, out): max(ceil((limit - start) / delta), 0). */
static int range_len(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 4) return fail(ctx, "range_len: %d args", n);
  const DLTensor *a = T(args, 0);
  int64_t len;
  if (a->dtype.code == kDLFloat || a->dtype.code == kDLBfloat) {
    double s = get_d(a), l = get_d(T(args, 1)), dl = get_d(T(args, 2));
    if (dl == 0 || dl != dl || s != s || l != l) return fail(ctx, "delta is 0 or a value is NaN");
    double c = ceil((l - s) / dl);
    if (!(c < 9.0e15)) return fail(ctx, "a range of %g elements is too large", c);
    len = c > 0 ? (int64_t)c : 0;
  } else {
    int64_t s = get_i(a, 0), l = get_i(T(args, 1), 0), dl = get_i(T(args, 2), 0);
    if (dl == 0) return fail(ctx, "delta is 0");
    double span = (double)l - (double)s;
    if ((span > 0) != (dl > 0) || span == 0) len = 0;
    else {
      __int128 num = (__int128)l - s, den = dl;
      __int128 q = num / den + ((num % den) != 0);
      if (q > ((__int128)1 << 53)) return fail(ctx, "the range is too large");
      len = (int64_t)q;
    }
  }
  if (check_out(ctx, T(args, 3), 1)) return -1;
  out64(T(args, 3))[0] = len;
  return 0;
}

/* Whether element |i| of |x| is nonzero (floats by value, -0 is zero). */
static int nonzero_at(const DLTensor *x, int64_t i) {
  const char *p = base(x);
  if (x->dtype.code == kDLFloat && x->dtype.bits == 32) return ((const float *)p)[i] != 0;
  if (x->dtype.code == kDLFloat && x->dtype.bits == 64) return ((const double *)p)[i] != 0;
  if ((x->dtype.code == kDLFloat || x->dtype.code == kDLBfloat) && x->dtype.bits == 16)
    return (((const uint16_t *)p)[i] & 0x7fff) != 0;
  return get_i(x, i) != 0;
}

/* nonzero_count(x, out). */
static int nonzero_count(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 2) return fail(ctx, "nonzero_count: %d args", n);
  const DLTensor *x = T(args, 0);
  int64_t cnt = 0, ne = numel(x);
  for (int64_t i = 0; i < ne; i++) cnt += nonzero_at(x, i);
  if (check_out(ctx, T(args, 1), 1)) return -1;
  out64(T(args, 1))[0] = cnt;
  return 0;
}

/* nonzero(x, n, out): out[d, j] = coordinate d of the j-th nonzero element. */
static int nonzero(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 3) return fail(ctx, "nonzero: %d args", n);
  const DLTensor *x = T(args, 0), *o = T(args, 2);
  int64_t ne = numel(x), r = x->ndim, cnt = o->ndim == 2 ? o->shape[1] : -1, j = 0;
  if (o->ndim != 2 || o->shape[0] != r) return fail(ctx, "internal: output of nonzero is not (rank, n)");
  int64_t *y = out64(o);
  for (int64_t i = 0; i < ne; i++) {
    if (!nonzero_at(x, i)) continue;
    if (j >= cnt) return fail(ctx, "more nonzero elements than counted");
    int64_t rest = i;
    for (int64_t d = r - 1; d >= 0; d--) {
      y[d * cnt + j] = x->shape[d] ? rest % x->shape[d] : 0;
      rest = x->shape[d] ? rest / x->shape[d] : 0;
    }
    j++;
  }
  if (j != cnt) return fail(ctx, "fewer nonzero elements than counted");
  return 0;
}

/* The extent compress selects from: dim |axis| of |x|, or its size (-1). */
static int64_t compress_extent(const DLTensor *x, int64_t axis) {
  return axis < 0 ? numel(x) : x->shape[axis];
}

/* compress_len(x, cond, out, axis). */
static int compress_len(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 4) return fail(ctx, "compress_len: %d args", n);
  const DLTensor *x = T(args, 0), *c = T(args, 1);
  int64_t axis = IMM(args, 3), len = numel(c), ext, cnt = 0;
  if (axis >= x->ndim) return fail(ctx, "axis %lld out of range", (long long)axis);
  ext = compress_extent(x, axis);
  if (len > ext)
    return fail(ctx, "the condition has %lld entries, the axis %lld", (long long)len, (long long)ext);
  for (int64_t i = 0; i < len; i++) cnt += base(c)[i] != 0;
  if (check_out(ctx, T(args, 2), 1)) return -1;
  out64(T(args, 2))[0] = cnt;
  return 0;
}

/* compress(x, cond, n, out, axis): copies the selected slices in order. */
static int compress(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 5) return fail(ctx, "compress: %d args", n);
  const DLTensor *x = T(args, 0), *c = T(args, 1), *o = T(args, 3);
  int64_t axis = IMM(args, 4), len = numel(c), ext = compress_extent(x, axis), outer = 1, inner = 1;
  size_t esize = ((size_t)x->dtype.bits * x->dtype.lanes + 7) / 8;
  if (axis >= 0) {
    for (int64_t d = 0; d < axis; d++) outer *= x->shape[d];
    for (int64_t d = axis + 1; d < x->ndim; d++) inner *= x->shape[d];
  }
  if (len > ext) len = ext;
  int64_t cnt = 0;
  for (int64_t j = 0; j < len; j++) cnt += base(c)[j] != 0;
  if (numel(o) != outer * cnt * inner) return fail(ctx, "internal: compress output size");
  const char *src = base(x);
  char *dst = (char *)o->data + o->byte_offset;
  size_t row = (size_t)inner * esize;
  for (int64_t a = 0; a < outer; a++)
    for (int64_t j = 0; j < len; j++)
      if (base(c)[j]) {
        memcpy(dst, src + ((size_t)(a * ext + j)) * row, row);
        dst += row;
      }
  return 0;
}

/* resize_dims(x, v, out): ONNX Resize's output dims, v = sizes (integers)
** or scales (float32/float64: floor(x_d * v[d]) computed in double, as the
** ONNX reference does). */
static int resize_dims(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  if (n != 3) return fail(ctx, "resize_dims: %d args", n);
  const DLTensor *x = T(args, 0), *v = T(args, 1);
  int64_t r = x->ndim, k = numel(v), d[MAXR];
  int is_float = v->dtype.code == kDLFloat && (v->dtype.bits == 32 || v->dtype.bits == 64);
  const char *what = is_float ? "scales" : "sizes";
  char b[256];
  if (k != r || r > MAXR)
    return fail(ctx, "%s has %lld entries, the input %s has rank %lld", what, (long long)k,
                dims_str(x, b, sizeof b), (long long)r);
  for (int64_t i = 0; i < r; i++) {
    int64_t in = x->shape[i];
    if (is_float) {
      double sc = v->dtype.bits == 32 ? (double)((const float *)(const void *)base(v))[i]
                                      : ((const double *)(const void *)base(v))[i];
      if (!(sc > 0) || isinf(sc))
        return fail(ctx, "scales[%lld] = %g must be a finite number > 0", (long long)i, sc);
      double o = floor(sc * (double)in);
      if (o > (double)(INT64_C(1) << 40))
        return fail(ctx, "scales[%lld] = %g makes axis %lld of the input %s too large", (long long)i, sc,
                    (long long)i, dims_str(x, b, sizeof b));
      d[i] = (int64_t)o;
    } else if (v->dtype.code == kDLInt || v->dtype.code == kDLUInt) {
      d[i] = get_i(v, i);
      if (d[i] < 0) return fail(ctx, "sizes[%lld] = %lld is negative", (long long)i, (long long)d[i]);
      if (in == 0 && d[i] != 0)
        return fail(ctx, "sizes[%lld] = %lld: axis %lld of the input %s is empty", (long long)i,
                    (long long)d[i], (long long)i, dims_str(x, b, sizeof b));
    } else {
      return fail(ctx, "resize_dims: sizes or scales of an unsupported dtype");
    }
  }
  if (check_out(ctx, T(args, 2), r)) return -1;
  memcpy(out64(T(args, 2)), d, sizeof *d * (size_t)r);
  return 0;
}

/* ---- non_max_suppression ------------------------------------------------- */

typedef struct nms_cand {
  double score;
  int64_t box;
} nms_cand;

/* Descending score, then ascending box index. */
static int nms_order(const void *a, const void *b) {
  const nms_cand *x = a, *y = b;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  return (x->box > y->box) - (x->box < y->box);
}

/* Element |i| of a float32 or float64 tensor. */
static double get_f(const DLTensor *t, int64_t i) {
  const void *p = base(t);
  return t->dtype.bits == 64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* The corners [ymin, xmin, ymax, xmax] of the box at element |off| of |bx|:
** [y1, x1, y2, x2] (any diagonal) or, with |cpb|, [xc, yc, w, h]. */
static void nms_box(const DLTensor *bx, int64_t off, int64_t cpb, double *c) {
  double v[4];
  for (int k = 0; k < 4; k++) v[k] = get_f(bx, off + k);
  if (cpb) {
    c[0] = v[1] - v[3] / 2, c[2] = v[1] + v[3] / 2;
    c[1] = v[0] - v[2] / 2, c[3] = v[0] + v[2] / 2;
  } else {
    c[0] = fmin(v[0], v[2]), c[2] = fmax(v[0], v[2]);
    c[1] = fmin(v[1], v[3]), c[3] = fmax(v[1], v[3]);
  }
}

/* Whether boxes |a| and |b| overlap with IoU > |thr| (onnxruntime's rule:
** empty boxes and intersections never suppress). */
static int nms_suppress(const double *a, const double *b, double thr) {
  double ymin = fmax(a[0], b[0]), ymax = fmin(a[2], b[2]);
  double xmin = fmax(a[1], b[1]), xmax = fmin(a[3], b[3]);
  if (xmax <= xmin || ymax <= ymin) return 0;
  double inter = (xmax - xmin) * (ymax - ymin);
  double a1 = (a[2] - a[0]) * (a[3] - a[1]), a2 = (b[2] - b[0]) * (b[3] - b[1]);
  double uni = a1 + a2 - inter;
  if (inter <= 0 || a1 <= 0 || a2 <= 0 || uni <= 0) return 0;
  return inter / uni > thr;
}

/* Greedy NMS of every batch and class: args boxes [B, N, 4], scores
** [B, C, N], max_output_boxes, iou_threshold, score_threshold.  The kept
** rows [batch, class, box] go to |rows| (|cap| rows; NULL: count only);
** their number to *count. */
static int nms_run(mlc_rt_ctx *ctx, void **args, int64_t cpb, int64_t *rows, int64_t cap, int64_t *count) {
  const DLTensor *bx = T(args, 0), *sc = T(args, 1);
  int64_t B = bx->shape[0], N = bx->shape[1], C = sc->shape[1], maxo = get_i(T(args, 2), 0);
  double iou = get_d(T(args, 3)), thr = get_d(T(args, 4));
  *count = 0;
  if (maxo <= 0 || N == 0 || B == 0 || C == 0) return 0;
  if (maxo > N) maxo = N;
  /* scratch from the session's workspace: candidates, kept boxes, corners */
  uint64_t nc = sizeof(nms_cand) * (uint64_t)N, nk = sizeof(int64_t) * (uint64_t)maxo;
  char *ws = ctx->api->workspace_alloc(ctx, nc + nk + sizeof(double) * 4 * (uint64_t)N);
  if (!ws) return fail(ctx, "non_max_suppression: out of memory for %lld boxes", (long long)N);
  nms_cand *cand = (nms_cand *)(void *)ws;
  int64_t *kept = (int64_t *)(void *)(ws + nc);
  double *corners = (double *)(void *)(ws + nc + nk);
  int rc = 0;
  for (int64_t b = 0; b < B && !rc; b++) {
    for (int64_t i = 0; i < N; i++) nms_box(bx, (b * N + i) * 4, cpb, corners + 4 * i);
    for (int64_t c = 0; c < C && !rc; c++) {
      int64_t n = 0, nkept = 0;
      for (int64_t i = 0; i < N; i++) {
        double s = get_f(sc, (b * C + c) * N + i);
        if (s > thr) cand[n].score = s, cand[n++].box = i;
      }
      qsort(cand, (size_t)n, sizeof *cand, nms_order);
      for (int64_t j = 0; j < n && nkept < maxo; j++) {
        int keep = 1;
        for (int64_t k = 0; k < nkept && keep; k++) keep = !nms_suppress(corners + 4 * kept[k], corners + 4 * cand[j].box, iou);
        if (keep) kept[nkept++] = cand[j].box;
      }
      for (int64_t k = 0; k < nkept && !rc; k++, (*count)++) {
        if (!rows) continue;
        if (*count >= cap) {
          rc = fail(ctx, "non_max_suppression: more boxes kept than counted");
          break;
        }
        rows[3 * *count] = b, rows[3 * *count + 1] = c, rows[3 * *count + 2] = kept[k];
      }
    }
  }
  ctx->api->workspace_free(ctx, ws);
  return rc;
}

/* nms_count(boxes, scores, max, iou, score, out, center_point_box). */
static int nms_count(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  int64_t cnt;
  if (n != 7) return fail(ctx, "nms_count: %d args", n);
  if (nms_run(ctx, args, IMM(args, 6), NULL, 0, &cnt)) return -1;
  if (check_out(ctx, T(args, 5), 1)) return -1;
  out64(T(args, 5))[0] = cnt;
  return 0;
}

/* nms(boxes, scores, max, iou, score, n, out, center_point_box): the rows. */
static int nms(void **args, const int32_t *codes, int32_t n, mlc_rt_ctx *ctx) {
  (void)codes;
  int64_t cnt;
  if (n != 8) return fail(ctx, "nms: %d args", n);
  const DLTensor *o = T(args, 6);
  if (o->ndim != 2 || o->shape[1] != 3) return fail(ctx, "internal: output of nms is not (n, 3)");
  if (nms_run(ctx, args, IMM(args, 7), out64(o), o->shape[0], &cnt)) return -1;
  if (cnt != o->shape[0]) return fail(ctx, "non_max_suppression: fewer boxes kept than counted");
  return 0;
}

/* ---- the table ------------------------------------------------------------ */

static const struct {
  const char *name;
  mlc_kernel_fn fn;
} builtins[] = {
#define BUILTIN(e, fn, a0, d0, a1, d1) {"mlc." #fn, fn},
#include "runtime/rt_builtins.def"
#undef BUILTIN
};

mlc_kernel_fn mlc_rt_builtin_find(const char *name) {
  if (!name || strncmp(name, "mlc.", 4) != 0) return NULL;
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    if (strcmp(builtins[i].name, name) == 0) return builtins[i].fn;
  return NULL;
}
