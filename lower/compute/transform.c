/*
** transform.c: lowering rules for data movement (TOPI's transform.h):
** reshape, permute_dims, concat, strided_slice, take, broadcast_to, pad,
** tile and shape_of.
**
** Each is one compute stage whose body is a load of the input at an index
** computed from the output index; nothing here looks at the dtype, so every
** dtype moves (bool and the 16-bit floats included).  Reads are kept
** in bounds: concat and constant padding choose between loads with select
** (only the chosen arm is evaluated), take wraps negative indices after a
** check stage has rejected any index outside [-n, n) with an error.  Symbolic extents are expressions of the
** function's shape variables (reshape of an `n`-batched tensor unravels
** with `n` in the strides).
*/
#include <string.h>

#include "lower/lower_int.h"

#define M (c->tm)
#define MAX_RANK 16

static mlc_tir_expr *i64(mlc_lg_call *c, int64_t v) { return mlc_tir_i64(M, v); }

static mlc_tir_expr *and2(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) {
  return a ? mlc_tir_binary(M, MLC_TIR_AND, a, b) : b;
}

static mlc_status check_rank(mlc_lg_call *c) {
  if (c->arg_types[0].rank > MAX_RANK || c->out_types[0].rank > MAX_RANK)
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "rank above %d", MAX_RANK);
  return NULL;
}

/* ---- reshape ---------------------------------------------------------------- */

/* Row-major: the output index flattened, then unravelled over the input's
** dims.  Trailing dims that the two shapes share map straight through. */
static mlc_tir_expr *reshape_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  const mlc_type *x = &c->arg_types[0], *y = &c->out_types[0];
  mlc_tir_expr *xi[MAX_RANK];
  int rx = x->rank, ry = y->rank, t = 0;
  while (t < rx && t < ry && x->dims[rx - 1 - t] == y->dims[ry - 1 - t]) t++;
  for (int j = 0; j < t; j++) xi[rx - 1 - j] = idx[ry - 1 - j];
  int px = rx - t, py = ry - t; /* the differing prefixes */
  mlc_tir_expr *flat = i64(c, 0);
  for (int d = 0; d < py; d++) flat = mlc_tir_add(M, mlc_tir_mul(M, flat, mlc_lg_dim(c, y, d)), idx[d]);
  for (int d = px - 1; d >= 0; d--) {
    if (d == 0) {
      xi[0] = flat;
      break;
    }
    mlc_tir_expr *ext = mlc_lg_dim(c, x, d);
    xi[d] = mlc_tir_binary(M, MLC_TIR_FLOORMOD, flat, ext);
    flat = mlc_tir_binary(M, MLC_TIR_FLOORDIV, flat, ext);
  }
  return mlc_lg_arg_load(c, 0, xi);
}

/* y = x viewed with attr shape */
mlc_status mlc_lg_reshape(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  return mlc_lg_compute(c, 0, "T_reshape", reshape_body, out);
}

/* ---- permute_dims ------------------------------------------------------------- */

static mlc_tir_expr *transpose_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  int r = c->arg_types[0].rank;
  const mlc_attr *perm = mlc_lg_attr(c, "perm");
  int given = perm && perm->kind == MLC_ATTR_INTS && perm->n == r;
  mlc_tir_expr *xi[MAX_RANK];
  for (int i = 0; i < r; i++) {
    int64_t p = given ? perm->ints[i] : r - 1 - i;
    if (p < 0 || p >= r) return NULL;
    xi[p] = idx[i];
  }
  return mlc_lg_arg_load(c, 0, xi);
}

/* y[i...] = x[i permuted back]: axis perm[i] of x is axis i of y */
mlc_status mlc_lg_transpose(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  return mlc_lg_compute(c, 0, "T_transpose", transpose_body, out);
}

/* ---- concat ------------------------------------------------------------------ */

static mlc_tir_expr *concat_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  int r = c->out_types[0].rank, axis = (int)mlc_lg_int(c, "axis", 0);
  mlc_tir_expr *off[64], *xi[MAX_RANK];
  int last = -1;
  off[0] = i64(c, 0);
  for (int k = 0; k < c->nargs; k++) {
    off[k + 1] = mlc_tir_add(M, off[k], mlc_lg_dim(c, &c->arg_types[k], axis));
    if (c->arg_types[k].dims[axis] != 0) last = k;
  }
  if (last < 0) return mlc_lg_imm(c, c->out_types[0].dtype, 0); /* empty output */
  mlc_tir_expr *e = NULL;
  for (int k = last; k >= 0; k--) {
    if (c->arg_types[k].dims[axis] == 0) continue;
    for (int d = 0; d < r; d++) xi[d] = d == axis ? mlc_tir_sub(M, idx[d], off[k]) : idx[d];
    mlc_tir_expr *v = mlc_lg_arg_load(c, k, xi);
    e = e ? mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_LT, idx[axis], off[k + 1]), v, e) : v;
  }
  return e;
}

/* y = args joined along attr axis: a select chain over the offsets */
mlc_status mlc_lg_concat(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  if (c->nargs > 63) return mlc_lg_error(c, MLC_UNIMPLEMENTED, "concat of %d arguments", c->nargs);
  int axis = (int)mlc_lg_int(c, "axis", 0);
  if (axis < 0 || axis >= c->out_types[0].rank)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "axis %d out of range", axis);
  return mlc_lg_compute(c, 0, "T_concat", concat_body, out);
}

/* ---- strided_slice ------------------------------------------------------------ */

/* begin at or beyond this (either sign) reaches past any extent */
#define SLICE_FAR ((int64_t)INT32_MAX)

static mlc_tir_expr *slice_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  const mlc_type *x = &c->arg_types[0];
  const mlc_attr *ba = mlc_lg_attr(c, "begin"), *sa = mlc_lg_attr(c, "step");
  mlc_tir_expr *xi[MAX_RANK];
  for (int d = 0; d < x->rank; d++) {
    int64_t step = sa->ints[d], v = ba->ints[d], ext = x->dims[d];
    if (MLC_DIM_IS_SYM(ext)) { /* begin as ONNX gives it: clamped with the extent read at run time */
      if (v == 0 && step == 1) {
        xi[d] = idx[d];
        continue;
      }
      mlc_tir_expr *e = mlc_lg_dim(c, x, d), *at;
      if (v >= 0) at = mlc_tir_min(M, i64(c, v > SLICE_FAR ? SLICE_FAR : v), step > 0 ? e : mlc_tir_sub(M, e, i64(c, 1)));
      else at = mlc_tir_max(M, mlc_tir_add(M, e, i64(c, v < -SLICE_FAR ? -SLICE_FAR : v)), i64(c, 0));
      xi[d] = mlc_tir_add(M, at, mlc_tir_mul(M, idx[d], i64(c, step)));
      continue;
    }
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? ext : ext - 1;
    v = v < lo ? lo : v > hi ? hi : v;
    xi[d] = mlc_tir_add(M, i64(c, v), mlc_tir_mul(M, idx[d], i64(c, step)));
  }
  return mlc_lg_arg_load(c, 0, xi);
}

/* y[i] = x[begin + i*step] per axis (begin clamped as in inference; on a
** symbolic axis begin counts from the end when negative) */
mlc_status mlc_lg_slice(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  int r = c->arg_types[0].rank;
  const mlc_attr *ba = mlc_lg_attr(c, "begin"), *sa = mlc_lg_attr(c, "step");
  if (!ba || !sa || ba->kind != MLC_ATTR_INTS || sa->kind != MLC_ATTR_INTS || ba->n != r || sa->n != r)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "begin and step need %d entries", r);
  for (int d = 0; d < r; d++) {
    int64_t ext = c->arg_types[0].dims[d];
    if (sa->ints[d] == 0) return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "step[%d] is 0", d);
    (void)ext;
  }
  return mlc_lg_compute(c, 0, "T_strided_slice", slice_body, out);
}

/* ---- take ---------------------------------------------------------------------- */

static mlc_tir_expr *take_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  const mlc_type *x = &c->arg_types[0], *it = &c->arg_types[1];
  int axis = (int)mlc_lg_int(c, "axis", 0);
  if (x->dims[axis] == 0) return mlc_lg_imm(c, x->dtype, 0); /* nothing to read */
  mlc_tir_expr *ii[MAX_RANK], *xi[MAX_RANK];
  for (int d = 0; d < it->rank; d++) ii[d] = idx[axis + d];
  mlc_tir_expr *ext = mlc_lg_dim(c, x, axis);
  mlc_tir_expr *v = mlc_tir_cast(M, MLC_DTYPE_I64, mlc_lg_arg_load(c, 1, ii));
  v = mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_LT, v, i64(c, 0)), mlc_tir_add(M, v, ext), v);
  for (int d = 0; d < x->rank; d++)
    xi[d] = d < axis ? idx[d] : d == axis ? v : idx[d - 1 + it->rank];
  return mlc_lg_arg_load(c, 0, xi);
}

/* y = x.take(indices, axis): negative indices wrap; an index outside
** [-n, n) stops the kernel with an error (the check stage runs first) */
mlc_status mlc_lg_gather(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  int axis = (int)mlc_lg_int(c, "axis", 0);
  if (axis < 0 || axis >= c->arg_types[0].rank)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "axis %d out of range", axis);
  if (!mlc_dtype_is_int(c->arg_types[1].dtype))
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "indices of dtype %s", mlc_dtype_name(c->arg_types[1].dtype));
  MLC_RETURN_IF_ERROR(mlc_lg_check_indices(c, 1, axis, 0));
  return mlc_lg_compute(c, 0, "T_take", take_body, out);
}

/* ---- broadcast_to ----------------------------------------------------------------- */

static mlc_tir_expr *bcast_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  return mlc_lg_arg_bcast(c, 0, c->out_types[0].rank, idx);
}

/* y = x broadcast (numpy) to attr shape */
mlc_status mlc_lg_broadcast_to(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  return mlc_lg_compute(c, 0, "T_broadcast_to", bcast_body, out);
}

/* ---- pad -------------------------------------------------------------------------- */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE };

static mlc_tir_expr *pad_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  const mlc_type *x = &c->arg_types[0];
  const mlc_attr *pads = mlc_lg_attr(c, "pads");
  const char *ms = mlc_attrs_str(c->attrs, c->nattrs, "mode", "constant");
  int mode = strcmp(ms, "reflect") == 0 ? PAD_REFLECT : strcmp(ms, "edge") == 0 ? PAD_EDGE : PAD_CONSTANT;
  mlc_tir_expr *xi[MAX_RANK], *inside = NULL;
  for (int d = 0; d < x->rank; d++) {
    int64_t pb = pads->ints[d], pe = pads->ints[x->rank + d], ext = x->dims[d];
    mlc_tir_expr *i = mlc_tir_sub(M, idx[d], i64(c, pb));
    xi[d] = i;
    if (pb <= 0 && pe <= 0) continue; /* a crop or nothing: always inside */
    /* a symbolic extent is read from the shape; the runtime checked that it
    ** is large enough for the mode (the inference rule's requirement) */
    mlc_tir_expr *e = mlc_lg_dim(c, x, d);
    if (mode == PAD_CONSTANT) {
      if (pb > 0) inside = and2(c, inside, mlc_tir_binary(M, MLC_TIR_GE, i, i64(c, 0)));
      if (pe > 0) inside = and2(c, inside, mlc_tir_binary(M, MLC_TIR_LT, i, e));
    } else if (mode == PAD_EDGE || ext == 1) {
      xi[d] = mlc_tir_max(M, mlc_tir_min(M, i, mlc_tir_sub(M, e, i64(c, 1))), i64(c, 0));
    } else { /* reflect: fold i into [0, 2(ext-1)), then mirror the upper half */
      mlc_tir_expr *period = mlc_tir_mul(M, mlc_tir_sub(M, e, i64(c, 1)), i64(c, 2));
      mlc_tir_expr *f = mlc_tir_binary(M, MLC_TIR_FLOORMOD, i, period);
      xi[d] = mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_LT, f, e), f, mlc_tir_sub(M, period, f));
    }
  }
  mlc_tir_expr *v = mlc_lg_arg_load(c, 0, xi);
  if (!inside) return v;
  return mlc_tir_select(M, inside, v, mlc_lg_imm(c, x->dtype, mlc_lg_float(c, "value", 0.0)));
}

/* y = x padded by attr pads (begins then ends; negative crops), attr mode
** constant (attr value), reflect or edge */
mlc_status mlc_lg_pad(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  const mlc_type *x = &c->arg_types[0];
  const mlc_attr *pads = mlc_lg_attr(c, "pads");
  if (!pads || pads->kind != MLC_ATTR_INTS || pads->n != 2 * x->rank)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "pads needs %d entries", 2 * x->rank);
  for (int d = 0; d < x->rank; d++) {
    int padded = pads->ints[d] > 0 || pads->ints[x->rank + d] > 0;
    if (padded && x->dims[d] == 0 && c->out_types[0].dims[d] > 0 &&
        strcmp(mlc_attrs_str(c->attrs, c->nattrs, "mode", "constant"), "constant") != 0)
      return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "reflect or edge padding of empty axis %d", d);
  }
  return mlc_lg_compute(c, 0, "T_pad", pad_body, out);
}

/* ---- tile -------------------------------------------------------------------------- */

static mlc_tir_expr *tile_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  const mlc_type *x = &c->arg_types[0], *y = &c->out_types[0];
  mlc_tir_expr *xi[MAX_RANK];
  for (int d = 0; d < x->rank; d++)
    xi[d] = y->dims[d] == x->dims[d] ? idx[d]
                                     : mlc_tir_binary(M, MLC_TIR_FLOORMOD, idx[d], mlc_lg_dim(c, x, d));
  return mlc_lg_arg_load(c, 0, xi);
}

/* y[i] = x[i mod dim] per axis */
mlc_status mlc_lg_tile(mlc_lg_call *c, mlc_te_tensor **out) {
  MLC_RETURN_IF_ERROR(check_rank(c));
  return mlc_lg_compute(c, 0, "T_tile", tile_body, out);
}

/* ---- shape_of ---------------------------------------------------------------------- */

static mlc_tir_expr *shape_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  const mlc_type *x = &c->arg_types[0];
  if (x->rank == 0) return i64(c, 0); /* empty output */
  mlc_tir_expr *e = mlc_lg_dim(c, x, x->rank - 1);
  for (int d = x->rank - 2; d >= 0; d--)
    e = mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_EQ, idx[0], i64(c, d)), mlc_lg_dim(c, x, d), e);
  return e;
}

/* y = the shape of x as int64 (symbolic dims read from the argument's shape) */
mlc_status mlc_lg_shape_of(mlc_lg_call *c, mlc_te_tensor **out) {
  return mlc_lg_compute(c, 0, "T_shape_of", shape_body, out);
}
