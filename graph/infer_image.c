/*
** infer_image.c: struct-info inference of the image and indexing ops of
** ops.def: resize, gather_elements, gather_nd, scatter_elements,
** scatter_nd and max_pool_indices.
**
** As in infer.c, a rule validates its arguments' dtypes and ranks and every
** attribute it reads (the frontend normalizes them, but a rule never trusts
** them) and reports problems through mlc_graph_call_error, which names the
** ONNX node and the op.  Output dims live in the module arena.
**
** resize takes its output shape from attr sizes (the frontend resolves it
** from the ONNX sizes or scales, or binds symbols to the values resize_dims
** computes at run time); an input dim may be symbolic only where the resize
** leaves it alone (the same extent and a known scale of 1), where a
** constant scale gives floor(extent * scale) as a derived symbol (scales
** p / 2^k: mlc_dim_scale), where a static size comes with
** scales_from_sizes (the extent checked >= 1 at run time), or when the
** resize takes define_dims' output (attr dims_arg), whose resize_dims has
** checked the extents at run time.
*/
#include <stdio.h>
#include <string.h>

#define MLC_GRAPH_INFER_SHORTHANDS
#include "graph/graph_int.h"

/* Largest rank a rule handles (stack buffers). */
#define MAX_RANK 64


static mlc_status need_index(const mlc_call_info *ci, int i) {
  mlc_dtype t = mlc_graph_arg(ci, i)->dtype;
  if (t == MLC_DTYPE_I32 || t == MLC_DTYPE_I64) return NULL;
  return ERR("argument %d (indices) has dtype %s, expected int32 or int64", i, mlc_dtype_name(t));
}

/* A floats attribute of exactly |len| entries; *present = 0 when absent. */
static mlc_status attr_floats(const mlc_call_info *ci, const char *name, int len, const double **v,
                              int *present) {
  const mlc_attr *a = mlc_attrs_find(ci->attrs, ci->nattrs, name);
  *present = a != NULL;
  *v = NULL;
  if (!a) return NULL;
  if (a->kind != MLC_ATTR_FLOATS || a->n != len || (len > 0 && !a->floats))
    return ERR("attribute %s must be a list of %d floats", name, len);
  *v = a->floats;
  return NULL;
}

/* "(2, n, 3)" of |dims| for messages. */
static const char *shape_text(const mlc_call_info *ci, const int64_t *dims, int rank, char *buf,
                              size_t size) {
  size_t n = 0;
  n += (size_t)snprintf(buf, size, "(");
  for (int i = 0; i < rank && n < size; i++) {
    if (dims[i] >= 0) n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", LL(dims[i]));
    else n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", mlc_module_sym_name(ci->mod, dims[i]));
  }
  if (n < size) snprintf(buf + n, size - n, rank == 1 ? ",)" : ")");
  return buf;
}

/* ---- resize ------------------------------------------------------------- */

static const char *const resize_modes[] = {"nearest", "linear", "cubic", NULL};
static const char *const coord_modes[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                          "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                          NULL};
static const char *const nearest_modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                            "ceil", "simple", NULL};

/* A float vector argument of |len| entries (roi, scales). */
static mlc_status float_vec_arg(const mlc_call_info *ci, int i, const char *what, int64_t len) {
  const mlc_type *t = mlc_graph_arg(ci, i);
  if (!mlc_dtype_is_float(t->dtype))
    return ERR("%s (argument %d) has dtype %s, expected a float type", what, i, mlc_dtype_name(t->dtype));
  if (t->rank != 1 || t->dims[0] != len)
    return ERR("%s (argument %d) must have shape (%lld,)", what, i, LL(len));
  return NULL;
}

/* |d| as text: the number or the symbol's name. */
static const char *dim_text(const mlc_call_info *ci, int64_t d, char *buf, size_t size) {
  if (d >= 0) snprintf(buf, size, "%lld", LL(d));
  else snprintf(buf, size, "%s", mlc_module_sym_name(ci->mod, d));
  return buf;
}

/* floor(in * scale) of the symbolic extent |in| of axis |d|: the error of
** mlc_dim_scale names the node and the axis. */
static mlc_status scaled_extent(const mlc_call_info *ci, int d, int64_t in, double scale, int64_t *out) {
  mlc_status s = mlc_dim_scale(ci->mod, in, scale, ci->origin, out);
  if (!s) return NULL;
  mlc_status e = mlc_graph_call_error(ci, mlc_status_code(s), "axis %d: %s", d, mlc_status_message(s));
  mlc_status_free(s);
  return e;
}

/* y = resize(x[, roi][, scales][, dims]) to attr sizes. */
mlc_status mlc_infer_resize(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  const char *mode, *coord, *nearest;
  int roi_arg, scales_arg, dims_arg, derived, excl, has_scales, has_roi;
  const double *scales, *roi;
  char a[64], b[64];
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  int r = x->rank;
  if (r < 1) return ERR("input must have rank >= 1");
  MLC_RETURN_IF_ERROR(mlc_graph_attr_choice(ci, "mode", "nearest", resize_modes, &mode));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_choice(ci, "coordinate_transformation_mode", "half_pixel", coord_modes, &coord));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_choice(ci, "nearest_mode", "round_prefer_floor", nearest_modes, &nearest));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "exclude_outside", 0, &excl));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "roi_arg", 0, &roi_arg));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "scales_arg", 0, &scales_arg));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "scales_from_sizes", 0, &derived));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "dims_arg", 0, &dims_arg));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_number(ci, "cubic_coeff_a"));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_number(ci, "extrapolation_value"));
  if (strcmp(mode, "nearest") != 0 && !mlc_graph_is_num(x->dtype))
    return ERR("%s resize of dtype %s (numeric types only)", mode, mlc_dtype_name(x->dtype));
  int want = 1 + roi_arg + scales_arg + dims_arg;
  if (ci->nargs != want)
    return ERR("takes %d arguments with roi_arg = %d, scales_arg = %d and dims_arg = %d, got %d", want,
               roi_arg, scales_arg, dims_arg, ci->nargs);
  if (roi_arg) MLC_RETURN_IF_ERROR(float_vec_arg(ci, 1, "roi", 2 * (int64_t)r));
  if (scales_arg) MLC_RETURN_IF_ERROR(float_vec_arg(ci, 1 + roi_arg, "scales", r));
  if (dims_arg) {
    const mlc_type *t = mlc_graph_arg(ci, want - 1);
    if (t->dtype != MLC_DTYPE_I64 || t->rank != 1 || t->dims[0] < 0)
      return ERR("argument %d must be a static int64 vector (from define_dims)", want - 1);
  }
  MLC_RETURN_IF_ERROR(attr_floats(ci, "scales", r, &scales, &has_scales));
  MLC_RETURN_IF_ERROR(attr_floats(ci, "roi", 2 * r, &roi, &has_roi));
  if (scales_arg + has_scales + derived > 1)
    return ERR("scales must be one of an argument, an attribute or scales_from_sizes");
  if (roi_arg && has_roi) return ERR("roi is both an argument and an attribute");
  if (!scales_arg && !has_scales && !derived) return ERR("attribute scales is missing");
  const mlc_attr *sz = mlc_attrs_find(ci->attrs, ci->nattrs, "sizes");
  if (!sz) return ERR("attribute sizes is missing");
  if (sz->kind != MLC_ATTR_INTS || sz->n != r || (r > 0 && !sz->ints))
    return ERR("attribute sizes must be a list of %d ints", r);
  int identity_coord = strcmp(coord, "tf_crop_and_resize") != 0 && strcmp(coord, "tf_half_pixel_for_nn") != 0;
  for (int d = 0; d < r; d++) {
    int64_t in = x->dims[d], o = sz->ints[d];
    if (o < -(int64_t)ci->mod->nsyms) return ERR("sizes[%d] = %lld is not a valid dim", d, LL(o));
    if (has_scales && !(scales[d] > 0)) return ERR("scales[%d] = %g must be > 0", d, scales[d]);
    /* A symbolic axis resized to a symbolic size other than floor(in *
    ** scale), or a symbolic size of a static empty axis, needs the sizes
    ** computed and checked at run time (resize_dims). */
    if (in < 0 && dims_arg) continue;
    if (in < 0) {
      int kept = o == in && identity_coord && ((has_scales && scales[d] == 1.0) || derived);
      if (kept) continue;
      if (has_scales && strcmp(coord, "tf_crop_and_resize") != 0) { /* floor(in * scale), a derived symbol */
        int64_t ext;
        MLC_RETURN_IF_ERROR(scaled_extent(ci, d, in, scales[d], &ext));
        if (o != ext)
          return ERR("sizes[%d] = %s is not floor(%s * %g) = %s", d, dim_text(ci, o, a, sizeof a),
                     mlc_module_sym_name(ci->mod, in), scales[d], dim_text(ci, ext, b, sizeof b));
      } else if (derived && o >= 0) { /* a static size: the input must not be empty */
        int64_t chk;
        char what[128];
        snprintf(what, sizeof what, "axis %d of extent 0 cannot be resized to %lld", d, LL(o));
        if (o > 0) {
          MLC_RETURN_IF_ERROR(mlc_dim_add_const(ci->mod, in, -1, ci->origin, &chk));
          MLC_RETURN_IF_ERROR(mlc_dim_check(ci->mod, chk, ci->origin, what, &chk));
        }
      } else {
        return UNIMPL("resizing axis %d of symbolic extent %s%s", d, mlc_module_sym_name(ci->mod, in),
                      has_scales ? " with tf_crop_and_resize" : " to a symbolic size");
      }
    } else if (in == 0 && o != 0 && !(o < 0 && dims_arg)) {
      return ERR("axis %d has extent 0 but the output extent is %s", d,
                 o < 0 ? mlc_module_sym_name(ci->mod, o) : "nonzero");
    }
  }
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, sz->ints, r);
}

/* ---- gather_elements, gather_nd ----------------------------------------- */

/* y = gather_elements(x, indices, axis): the shape of indices. */
mlc_status mlc_infer_gather_elements(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0), *ix = mlc_graph_arg(ci, 1);
  int axis;
  char a[256], b[256];
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  MLC_RETURN_IF_ERROR(need_index(ci, 1));
  if (x->rank < 1) return ERR("input must have rank >= 1");
  MLC_RETURN_IF_ERROR(mlc_graph_attr_axis(ci, "axis", x->rank, 0, &axis));
  if (ix->rank != x->rank)
    return ERR("indices %s must have the rank of the input %s", shape_text(ci, ix->dims, ix->rank, a, sizeof a),
               shape_text(ci, x->dims, x->rank, b, sizeof b));
  for (int d = 0; d < x->rank; d++) {
    int64_t di = ix->dims[d], dx = x->dims[d];
    if (d == axis) continue;
    if ((di >= 0 && dx >= 0 && di > dx) || (di < 0 && di != dx))
      return ERR("indices %s exceed the input %s on axis %d", shape_text(ci, ix->dims, ix->rank, a, sizeof a),
                 shape_text(ci, x->dims, x->rank, b, sizeof b), d);
  }
  if (x->dims[axis] == 0 && mlc_type_numel(ix) != 0) return ERR("gathering from an empty axis %d", axis);
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, ix->dims, ix->rank);
}

/* y = gather_nd(x, indices, batch_dims): indices.shape[:-1] + x.shape[b+k:]. */
mlc_status mlc_infer_gather_nd(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0), *ix = mlc_graph_arg(ci, 1);
  int64_t b, dims[2 * MAX_RANK];
  char s1[256], s2[256];
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  MLC_RETURN_IF_ERROR(need_index(ci, 1));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "batch_dims", 0, &b));
  int r = x->rank, q = ix->rank;
  if (r < 1 || q < 1) return ERR("input and indices must have rank >= 1, got %d and %d", r, q);
  if (b < 0 || b >= q || b >= r)
    return ERR("batch_dims %lld must be less than the ranks %d (input) and %d (indices)", LL(b), r, q);
  int64_t k = ix->dims[q - 1];
  if (k < 0) return UNIMPL("the last dim of indices must be static");
  if (k < 1 || k > r - b)
    return ERR("the last dim of indices %s must be in [1, %lld]", shape_text(ci, ix->dims, q, s1, sizeof s1),
               LL(r - b));
  for (int d = 0; d < b; d++)
    if (ix->dims[d] != x->dims[d])
      return ERR("batch dim %d differs: input %s, indices %s", d, shape_text(ci, x->dims, r, s1, sizeof s1),
                 shape_text(ci, ix->dims, q, s2, sizeof s2));
  int n = 0;
  for (int d = 0; d < q - 1; d++) dims[n++] = ix->dims[d];
  for (int d = (int)(b + k); d < r; d++) dims[n++] = x->dims[d];
  if (n > MAX_RANK) return UNIMPL("output rank %d (at most %d)", n, MAX_RANK);
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, n);
}

/* ---- scatter_elements, scatter_nd --------------------------------------- */

static const char *const reductions[] = {"none", "add", "mul", "max", "min", NULL};

/* attr reduction; combining reductions need a numeric dtype. */
static mlc_status scatter_reduction(const mlc_call_info *ci) {
  const char *red;
  MLC_RETURN_IF_ERROR(mlc_graph_attr_choice(ci, "reduction", "none", reductions, &red));
  if (strcmp(red, "none") != 0 && !mlc_graph_is_num(mlc_graph_arg(ci, 0)->dtype))
    return ERR("reduction %s of dtype %s", red, mlc_dtype_name(mlc_graph_arg(ci, 0)->dtype));
  if (mlc_graph_arg(ci, 2)->dtype != mlc_graph_arg(ci, 0)->dtype)
    return ERR("updates have dtype %s, the input %s", mlc_dtype_name(mlc_graph_arg(ci, 2)->dtype),
               mlc_dtype_name(mlc_graph_arg(ci, 0)->dtype));
  return NULL;
}

/* y = scatter_elements(x, indices, updates, axis): the type of x. */
mlc_status mlc_infer_scatter_elements(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0), *ix = mlc_graph_arg(ci, 1), *u = mlc_graph_arg(ci, 2);
  int axis;
  char a[256], b[256];
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  MLC_RETURN_IF_ERROR(need_index(ci, 1));
  MLC_RETURN_IF_ERROR(scatter_reduction(ci));
  if (x->rank < 1) return ERR("input must have rank >= 1");
  MLC_RETURN_IF_ERROR(mlc_graph_attr_axis(ci, "axis", x->rank, 0, &axis));
  if (!mlc_type_equal(&(mlc_type){ix->dtype, u->rank, u->dims}, ix))
    return ERR("updates %s must have the shape of indices %s", shape_text(ci, u->dims, u->rank, a, sizeof a),
               shape_text(ci, ix->dims, ix->rank, b, sizeof b));
  if (ix->rank != x->rank)
    return ERR("indices %s must have the rank of the input %s", shape_text(ci, ix->dims, ix->rank, a, sizeof a),
               shape_text(ci, x->dims, x->rank, b, sizeof b));
  for (int d = 0; d < x->rank; d++) {
    int64_t di = ix->dims[d], dx = x->dims[d];
    if (d == axis) continue;
    if ((di >= 0 && dx >= 0 && di > dx) || (di < 0 && di != dx))
      return ERR("indices %s exceed the input %s on axis %d", shape_text(ci, ix->dims, ix->rank, a, sizeof a),
                 shape_text(ci, x->dims, x->rank, b, sizeof b), d);
  }
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, x->dims, x->rank);
}

/* y = scatter_nd(x, indices, updates): the type of x. */
mlc_status mlc_infer_scatter_nd(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0), *ix = mlc_graph_arg(ci, 1), *u = mlc_graph_arg(ci, 2);
  char a[256], b[256];
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  MLC_RETURN_IF_ERROR(need_index(ci, 1));
  MLC_RETURN_IF_ERROR(scatter_reduction(ci));
  int r = x->rank, q = ix->rank;
  if (r < 1 || q < 1) return ERR("input and indices must have rank >= 1, got %d and %d", r, q);
  int64_t k = ix->dims[q - 1];
  if (k < 0) return UNIMPL("the last dim of indices must be static");
  if (k < 1 || k > r)
    return ERR("the last dim of indices %s must be in [1, %d]", shape_text(ci, ix->dims, q, a, sizeof a), r);
  int bad = u->rank != q - 1 + r - (int)k;
  for (int d = 0; !bad && d < q - 1; d++) bad = u->dims[d] != ix->dims[d];
  for (int d = (int)k; !bad && d < r; d++) bad = u->dims[q - 1 + d - k] != x->dims[d];
  if (bad)
    return ERR("updates %s must have shape indices.shape[:-1] + input.shape[%lld:] (indices %s)",
               shape_text(ci, u->dims, u->rank, a, sizeof a), LL(k), shape_text(ci, ix->dims, q, b, sizeof b));
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, x->dims, x->rank);
}

/* ---- max_pool_indices --------------------------------------------------- */

/* The shape max_pool gives, as int64. */
mlc_status mlc_infer_pool_indices(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  int so;
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "storage_order", 0, &so));
  mlc_call_info pool = *ci;
  pool.op = MLC_OP_MAX_POOL;
  MLC_RETURN_IF_ERROR(mlc_infer_pool(&pool, outs, nouts));
  outs[0].dtype = MLC_DTYPE_I64;
  return NULL;
}
