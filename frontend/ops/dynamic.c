/*
** dynamic.c: the run-time shape forms of the converters whose shape-defining
** input is not a constant (Reshape's shape, Slice's starts, Pad's pads,
** Range's limits, ...) and of the data-dependent NonZero.
**
** Each emits a shape function computing the output dims (or slice and pad
** parameters) at run time, define_dims binding fresh symbols to them, and
** the data op typed with those symbols:
**
**   p = reshape_dims(x, shape)          (validated at run time)
**   t = define_dims(p, dims=[s0, s1])
**   y = dyn_reshape(x, t, shape=[s0, s1])
**
** The converters in tensor.c and reduce.c call these only when the input is
** not a constant; constants keep the static path (resolved at compile time).
*/
#include <string.h>

#include "frontend/frontend_int.h"

/* Length of the integer vector |v| (rank 0 or 1, static). */
static mlc_status vec_len(mlc_fe_ctx *cx, const mlc_value *v, const char *what, int *out) {
  if (!mlc_dtype_is_int(v->type.dtype) || v->type.dtype == MLC_DTYPE_BOOL)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s must be integers, it is %s", what,
                        mlc_dtype_name(v->type.dtype));
  if (v->type.rank > 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s must be a vector, its shape is %s", what,
                        mlc_fe_shape_str(cx, &v->type));
  int64_t n = v->type.rank == 0 ? 1 : v->type.dims[0];
  if (MLC_DIM_IS_SYM(n))
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "%s of a length computed at run time is not supported", what);
  if (n > 64) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "%s has %lld entries (at most 64)", what, (long long)n);
  *out = (int)n;
  return NULL;
}

/*
** *tok = define_dims(p) binding |n| dims from entry |off| of p: fresh
** symbols, or the static extent known[i] where |known| has one (>= 0, checked
** at run time).  The dims go to |dims| (n entries).
*/
static mlc_status define(mlc_fe_ctx *cx, mlc_value *p, int64_t off, int n, const int64_t *known,
                         int64_t *dims, mlc_value **tok) {
  for (int i = 0; i < n; i++) {
    if (known && known[i] >= 0) dims[i] = known[i];
    else MLC_RETURN_IF_ERROR(mlc_module_fresh_sym(cx->mod, &dims[i]));
  }
  mlc_attr a[2] = {mlc_attr_ints("dims", dims, n), mlc_attr_int("offset", off)};
  return mlc_fe_emit(cx, MLC_OP_DEFINE_DIMS, &p, 1, a, 2, tok);
}

/* shape function |fn| on |args| giving |n| dims, then the data op |op| on
** (data, token) typed with them. */
static mlc_status dims_then(mlc_fe_ctx *cx, mlc_op fn, mlc_value *const *args, int nargs,
                            const mlc_attr *fattrs, int nfattrs, int n, mlc_op op, mlc_value *x,
                            mlc_value **out) {
  mlc_value *p, *t;
  int64_t dims[64];
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, fn, args, nargs, fattrs, nfattrs, &p));
  MLC_RETURN_IF_ERROR(define(cx, p, 0, n, NULL, dims, &t));
  mlc_value *da[2] = {x, t};
  mlc_attr s = mlc_attr_ints("shape", dims, n);
  return mlc_fe_emit(cx, op, da, 2, &s, 1, out);
}

mlc_status mlc_fe_dyn_reshape(mlc_fe_ctx *cx, mlc_value *x, mlc_value *shape, int allowzero,
                              mlc_value **out) {
  int k;
  MLC_RETURN_IF_ERROR(vec_len(cx, shape, "shape", &k));
  mlc_value *a[2] = {x, shape}, *p, *t;
  mlc_attr at = mlc_attr_int("allowzero", allowzero);
  /* A constant shape (a symbolic input the static path cannot resolve)
  ** keeps its positive entries, and 0 entries copying a static dim, static. */
  int64_t known[64], dims[64], *v = NULL;
  int nv = 0;
  if (mlc_fe_const(cx, shape)) MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, shape, "shape", &v, &nv));
  for (int i = 0; i < k; i++) {
    known[i] = v && i < nv && v[i] > 0 ? v[i] : -1;
    if (v && i < nv && v[i] == 0 && !allowzero && i < x->type.rank && x->type.dims[i] >= 0)
      known[i] = x->type.dims[i];
  }
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_RESHAPE_DIMS, a, 2, &at, 1, &p));
  MLC_RETURN_IF_ERROR(define(cx, p, 0, k, known, dims, &t));
  mlc_value *da[2] = {x, t};
  mlc_attr s = mlc_attr_ints("shape", dims, k);
  return mlc_fe_emit(cx, MLC_OP_DYN_RESHAPE, da, 2, &s, 1, out);
}

mlc_status mlc_fe_dyn_unsqueeze(mlc_fe_ctx *cx, mlc_value *x, mlc_value *axes, mlc_value **out) {
  int k;
  MLC_RETURN_IF_ERROR(vec_len(cx, axes, "axes", &k));
  if (x->type.rank + k > 64) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "output rank above 64");
  mlc_value *a[2] = {x, axes};
  return dims_then(cx, MLC_OP_UNSQUEEZE_DIMS, a, 2, NULL, 0, x->type.rank + k, MLC_OP_DYN_RESHAPE, x, out);
}

mlc_status mlc_fe_dyn_squeeze(mlc_fe_ctx *cx, mlc_value *x, mlc_value *axes, mlc_value **out) {
  int k;
  MLC_RETURN_IF_ERROR(vec_len(cx, axes, "axes", &k));
  if (k > x->type.rank)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%d axes to squeeze for an input of rank %d", k, x->type.rank);
  mlc_value *a[2] = {x, axes};
  return dims_then(cx, MLC_OP_SQUEEZE_DIMS, a, 2, NULL, 0, x->type.rank - k, MLC_OP_DYN_RESHAPE, x, out);
}

mlc_status mlc_fe_dyn_expand(mlc_fe_ctx *cx, mlc_value *x, mlc_value *shape, mlc_value **out) {
  int k;
  MLC_RETURN_IF_ERROR(vec_len(cx, shape, "shape", &k));
  mlc_value *a[2] = {x, shape};
  int r = x->type.rank > k ? x->type.rank : k;
  return dims_then(cx, MLC_OP_EXPAND_DIMS, a, 2, NULL, 0, r, MLC_OP_DYN_BROADCAST, x, out);
}

mlc_status mlc_fe_dyn_tile(mlc_fe_ctx *cx, mlc_value *x, mlc_value *repeats, mlc_value **out) {
  int k;
  MLC_RETURN_IF_ERROR(vec_len(cx, repeats, "repeats", &k));
  if (k != x->type.rank)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "repeats has %d entries for an input of rank %d", k,
                        x->type.rank);
  mlc_value *a[2] = {x, repeats};
  return dims_then(cx, MLC_OP_TILE_DIMS, a, 2, NULL, 0, k, MLC_OP_DYN_TILE, x, out);
}

mlc_status mlc_fe_dyn_const_of_shape(mlc_fe_ctx *cx, mlc_value *value, mlc_value *shape, mlc_value **out) {
  int k;
  MLC_RETURN_IF_ERROR(vec_len(cx, shape, "shape", &k));
  mlc_value *s = shape, *t;
  int64_t dims[64], one = 1;
  if (s->type.dtype != MLC_DTYPE_I64) {
    mlc_attr c = mlc_attr_int("dtype", MLC_DTYPE_I64);
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CAST, &s, 1, &c, 1, &s));
  }
  if (s->type.rank == 0) {
    mlc_attr r = mlc_attr_ints("shape", &one, 1);
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_RESHAPE, &s, 1, &r, 1, &s));
  }
  MLC_RETURN_IF_ERROR(define(cx, s, 0, k, NULL, dims, &t));
  mlc_value *da[2] = {value, t};
  mlc_attr sa = mlc_attr_ints("shape", dims, k);
  return mlc_fe_emit(cx, MLC_OP_DYN_BROADCAST, da, 2, &sa, 1, out);
}

mlc_status mlc_fe_dyn_slice(mlc_fe_ctx *cx, mlc_value *x, mlc_value *starts, mlc_value *ends,
                            mlc_value *axes, mlc_value *steps, mlc_value **out) {
  int k, r = x->type.rank;
  MLC_RETURN_IF_ERROR(vec_len(cx, starts, "starts", &k));
  if (steps && !axes) { /* axes 0..k-1 */
    int64_t ax[64];
    for (int i = 0; i < k; i++) ax[i] = i;
    MLC_RETURN_IF_ERROR(mlc_fe_const_i64(cx, ax, k, &axes));
  }
  mlc_value *a[5] = {x, starts, ends, axes, steps};
  int na = steps ? 5 : axes ? 4 : 3;
  mlc_value *p, *t;
  int64_t dims[64];
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_SLICE_PARAMS, a, na, NULL, 0, &p));
  MLC_RETURN_IF_ERROR(define(cx, p, 0, r, NULL, dims, &t));
  mlc_value *da[2] = {x, t};
  mlc_attr s = mlc_attr_ints("shape", dims, r);
  return mlc_fe_emit(cx, MLC_OP_DYN_SLICE, da, 2, &s, 1, out);
}

mlc_status mlc_fe_dyn_pad(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, mlc_value *pads,
                          mlc_value *value, mlc_value *axes, mlc_value **out) {
  int r = x->type.rank;
  mlc_value *a[3] = {x, pads, axes}, *p, *t;
  int64_t dims[64];
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_PAD_PARAMS, a, axes ? 3 : 2, NULL, 0, &p));
  MLC_RETURN_IF_ERROR(define(cx, p, 0, r, NULL, dims, &t));
  double v = 0;
  if (value && mlc_fe_const(cx, value)) {
    MLC_RETURN_IF_ERROR(mlc_fe_const_scalar(cx, value, "constant_value", &v));
    value = NULL;
  }
  if (value && value->type.dtype != x->type.dtype)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "constant_value is %s, the input %s",
                        mlc_dtype_name(value->type.dtype), mlc_dtype_name(x->type.dtype));
  mlc_value *da[3] = {x, t, value};
  mlc_attr at[3] = {mlc_attr_ints("shape", dims, r), mlc_attr_str("mode", mlc_fe_attr_str(n, "mode", "constant")),
                    mlc_attr_float("value", v)};
  return mlc_fe_emit(cx, MLC_OP_DYN_PAD, da, value ? 3 : 2, at, 3, out);
}

mlc_status mlc_fe_dyn_split(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, int axis,
                            mlc_value *split, mlc_value **out, int nout) {
  int k, r = x->type.rank;
  MLC_RETURN_IF_ERROR(vec_len(cx, split, "split", &k));
  if (k != nout)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "split has %d entries for %d outputs", k, nout);
  int64_t known[64], dims[64];
  for (int i = 0; i < r; i++) known[i] = i == axis ? -1 : x->type.dims[i];
  for (int i = 0; i < nout; i++) {
    if (!mlc_fe_output_used(n, i)) continue;
    mlc_value *a[2] = {x, split}, *p, *t;
    mlc_attr at[2] = {mlc_attr_int("axis", axis), mlc_attr_int("index", i)};
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_SPLIT_PARAMS, a, 2, at, 2, &p));
    MLC_RETURN_IF_ERROR(define(cx, p, 0, r, known, dims, &t));
    mlc_value *da[2] = {x, t};
    mlc_attr s = mlc_attr_ints("shape", dims, r);
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_DYN_SLICE, da, 2, &s, 1, &out[i]));
  }
  return NULL;
}

mlc_status mlc_fe_dyn_range(mlc_fe_ctx *cx, mlc_value *start, mlc_value *limit, mlc_value *delta,
                            mlc_value **out) {
  mlc_value *a[3] = {start, limit, delta}, *p, *t;
  int64_t dims[1];
  for (int i = 0; i < 3; i++)
    if (mlc_type_numel(&a[i]->type) != 1 || a[i]->type.dtype != start->type.dtype)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "start, limit and delta must be scalars of one type");
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_RANGE_LEN, a, 3, NULL, 0, &p));
  MLC_RETURN_IF_ERROR(define(cx, p, 0, 1, NULL, dims, &t));
  mlc_value *da[3] = {start, delta, t};
  mlc_attr s = mlc_attr_ints("shape", dims, 1);
  return mlc_fe_emit(cx, MLC_OP_DYN_RANGE, da, 3, &s, 1, out);
}

mlc_status mlc_fe_dyn_reduce(mlc_fe_ctx *cx, mlc_value *x, mlc_value *axes, const char *kind,
                             int keepdims, int noop_empty, mlc_value **out) {
  int k, r = x->type.rank;
  MLC_RETURN_IF_ERROR(vec_len(cx, axes, "axes", &k));
  if (k > r) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%d axes for an input of rank %d", k, r);
  mlc_value *a[2] = {x, axes}, *p, *t, *y;
  int64_t dims[64], kept[64];
  mlc_attr at[2] = {mlc_attr_int("keepdims", keepdims != 0), mlc_attr_int("noop_with_empty_axes", noop_empty)};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_REDUCE_DIMS, a, 2, at, 2, &p));
  MLC_RETURN_IF_ERROR(define(cx, p, 0, r, NULL, dims, &t));
  mlc_value *da[2] = {x, t};
  mlc_attr s[2] = {mlc_attr_ints("shape", dims, r), mlc_attr_str("kind", kind)};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_DYN_REDUCE, da, 2, s, 2, &y));
  if (keepdims) {
    *out = y;
    return NULL;
  }
  MLC_RETURN_IF_ERROR(define(cx, t, r, r - k, NULL, kept, &t));
  mlc_value *ra[2] = {y, t};
  mlc_attr rs = mlc_attr_ints("shape", kept, r - k);
  return mlc_fe_emit(cx, MLC_OP_DYN_RESHAPE, ra, 2, &rs, 1, out);
}

/* ONNX Compress-9,11: Y = the slices of input along axis (flattened input
** when absent; negative from 11) where the bool condition is true (its
** length may be less than the axis; the rest counts as false) */
MLC_FE_CVT(compress) {
  (void)nin, (void)nout;
  mlc_value *x = in[0], *c = in[1], *p, *t;
  int r = x->type.rank, axis = -1;
  const mlc_onnx_attr *ax = mlc_fe_attr(n, "axis");
  if (ax) MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, ax->i, r, "axis", &axis));
  if (c->type.dtype != MLC_DTYPE_BOOL || c->type.rank != 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "condition must be a 1-D bool tensor");
  if (x->type.dtype == MLC_DTYPE_STRING) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "Compress of strings");
  if (r > 64) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "rank above 64");
  int64_t dims[64], cnt;
  mlc_value *a[2] = {x, c};
  mlc_attr at = mlc_attr_int("axis", axis);
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_COMPRESS_LEN, a, 2, &at, 1, &p));
  MLC_RETURN_IF_ERROR(define(cx, p, 0, 1, NULL, &cnt, &t));
  int rank = axis < 0 ? 1 : r;
  for (int i = 0; i < rank; i++) dims[i] = axis < 0 || i == axis ? cnt : x->type.dims[i];
  mlc_value *da[3] = {x, c, t};
  mlc_attr s[2] = {mlc_attr_ints("shape", dims, rank), at};
  return mlc_fe_emit(cx, MLC_OP_COMPRESS, da, 3, s, 2, &out[0]);
}

/* ONNX NonZero-9,13: Y = int64 [rank, n]: the indices of the nonzero
** elements of X in row-major order (n known only at run time) */
MLC_FE_CVT(nonzero) {
  (void)n, (void)nin, (void)nout;
  mlc_value *x = in[0], *p, *t;
  int64_t dims[2];
  if (x->type.dtype == MLC_DTYPE_STRING)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "NonZero of strings");
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_NONZERO_COUNT, &x, 1, NULL, 0, &p));
  MLC_RETURN_IF_ERROR(define(cx, p, 0, 1, NULL, &dims[1], &t));
  dims[0] = x->type.rank;
  mlc_value *da[2] = {x, t};
  mlc_attr s = mlc_attr_ints("shape", dims, 2);
  return mlc_fe_emit(cx, MLC_OP_NONZERO, da, 2, &s, 1, &out[0]);
}
