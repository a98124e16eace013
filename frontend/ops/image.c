/*
** image.c: converters of ONNX's image and indexing ops: Resize and
** Upsample, GatherElements, GatherND, ScatterElements (and the older
** Scatter), ScatterND.  MaxPool's Indices output is converted in nn.c.
**
** Resize's output shape comes from its sizes input, or floor(input *
** scales); both must be constants at compile time, except when the node's
** output has a fully static declared shape (a graph output or a value_info
** entry), which then gives the output shape: a scales input computed at
** run time is read by the kernel (coordinates use the given scales, not
** output / input), a sizes input computed at run time is not read at all
** (scales are output / input of the declared shape).  A roi input is used
** only by tf_crop_and_resize, as an attribute when constant, else read by
** the kernel.
*/
#include <math.h>
#include <string.h>

#include "frontend/frontend_int.h"

/* ---- Resize, Upsample --------------------------------------------------- */

static int one_of(const char *s, const char *const *names) {
  for (int i = 0; names[i]; i++)
    if (strcmp(s, names[i]) == 0) return 1;
  return 0;
}

static const char *const resize_modes[] = {"nearest", "linear", "cubic", NULL};
static const char *const upsample_modes[] = {"nearest", "linear", "bilinear", NULL};
static const char *const coord_modes[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                          "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                          NULL};
static const char *const nearest_modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                            "ceil", NULL};

MLC_FE_CHECK(resize) {
  const char *mode = mlc_fe_attr_str(n, "mode", "nearest");
  if (!one_of(mode, opset >= 11 ? resize_modes : upsample_modes))
    mlc_fe_problem(p, "mode \"%s\" not supported", mode);
  if (opset < 11) return;
  const char *ct = mlc_fe_attr_str(n, "coordinate_transformation_mode", "half_pixel");
  if (!one_of(ct, coord_modes)) mlc_fe_problem(p, "coordinate_transformation_mode \"%s\" not supported", ct);
  const char *nm = mlc_fe_attr_str(n, "nearest_mode", "round_prefer_floor");
  if (!one_of(nm, nearest_modes)) mlc_fe_problem(p, "nearest_mode \"%s\" not supported", nm);
  int64_t ex = mlc_fe_attr_int(n, "exclude_outside", 0);
  if (ex != 0 && ex != 1) mlc_fe_problem(p, "exclude_outside %lld must be 0 or 1", (long long)ex);
}

/* The declared static shape of the node's output 0 (a graph output or a
** value_info entry) of rank |rank| into |dims|; 0 when there is none. */
static int declared_shape(const mlc_fe_ctx *cx, const mlc_onnx_node *n, int rank, int64_t *dims) {
  const mlc_onnx_graph *g = cx->graph;
  if (!g || n->noutputs < 1) return 0;
  const char *name = n->outputs[0];
  for (int pass = 0; pass < 2; pass++) {
    int cnt = pass == 0 ? g->noutputs : g->nvalue_infos;
    const mlc_onnx_value_info *vis = pass == 0 ? g->outputs : g->value_infos;
    for (int i = 0; i < cnt; i++) {
      const mlc_onnx_value_info *vi = &vis[i];
      if (strcmp(vi->name, name) != 0 || vi->kind != MLC_ONNX_VALUE_TENSOR || !vi->has_shape ||
          vi->rank != rank)
        continue;
      int ok = 1;
      for (int d = 0; d < rank && ok; d++) {
        ok = vi->dims[d].value >= 0;
        dims[d] = vi->dims[d].value;
      }
      if (ok) return 1;
    }
  }
  return 0;
}

/* An optional input counts as absent when omitted or empty. */
static int present(const mlc_value *v) { return v && mlc_type_numel(&v->type) != 0; }

/* A constant float vector of |len| entries into |dst|; *is_const = 0 (and
** nothing read) when |v| is computed at run time. */
static mlc_status const_floats(mlc_fe_ctx *cx, const mlc_value *v, const char *what, int len,
                               double *dst, int *is_const) {
  const mlc_const *k = mlc_fe_const(cx, v);
  *is_const = k != NULL;
  if (v->type.rank != 1 || v->type.dims[0] != len)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s %s must have %d entries", what,
                        mlc_fe_shape_str(cx, &v->type), len);
  if (!mlc_dtype_is_float(v->type.dtype))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s must be a float tensor, got %s", what,
                        mlc_dtype_name(v->type.dtype));
  for (int i = 0; k && i < len; i++) dst[i] = mlc_fe_elem_get(k->type.dtype, k->data, i);
  return NULL;
}

#define MAX_RESIZE_RANK 16

/* What a Resize or Upsample node asks for, before emitting. */
typedef struct rs_node {
  mlc_value *x, *roi, *scales, *sizes; /* NULL when absent */
  const char *mode, *coord, *nearest;
  double scales_attr[MAX_RESIZE_RANK]; /* constant scales, when present */
  int has_scales_attr;
} rs_node;

/* Emits resize for |r| (scales or sizes, not both). */
static mlc_status emit_resize(mlc_fe_ctx *cx, const mlc_onnx_node *n, rs_node *r, mlc_value **out) {
  mlc_value *x = r->x;
  int rank = x->type.rank;
  int64_t dims[MAX_RESIZE_RANK];
  double scales[MAX_RESIZE_RANK], roi[2 * MAX_RESIZE_RANK];
  int scales_arg = 0, roi_arg = 0, has_roi = 0, is_const;
  if (rank < 1 || rank > MAX_RESIZE_RANK)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "input rank %d (1 to %d)", rank, MAX_RESIZE_RANK);
  if (!!r->sizes + (!!r->scales || r->has_scales_attr) != 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "exactly one of scales and sizes must be given");
  if (r->sizes) {
    int64_t *sz;
    int cnt;
    if (mlc_fe_const(cx, r->sizes)) {
      MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, r->sizes, "sizes", &sz, &cnt));
      if (cnt != rank)
        return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "sizes has %d entries, the input %s has rank %d", cnt,
                            mlc_fe_shape_str(cx, &x->type), rank);
      memcpy(dims, sz, sizeof *dims * (size_t)rank);
    } else if (!declared_shape(cx, n, rank, dims)) {
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                          "sizes computed at run time needs a declared static output shape");
    }
    for (int d = 0; d < rank; d++) {
      int64_t in = x->type.dims[d];
      if (dims[d] < 0) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "sizes[%d] = %lld is negative", d, (long long)dims[d]);
      if (MLC_DIM_IS_SYM(in))
        return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "resizing the symbolic axis %d of %s to a fixed size", d,
                            mlc_fe_shape_str(cx, &x->type));
      scales[d] = in > 0 ? (double)dims[d] / (double)in : 1.0;
    }
  } else {
    if (r->has_scales_attr) {
      memcpy(scales, r->scales_attr, sizeof *scales * (size_t)rank);
      is_const = 1;
    } else {
      MLC_RETURN_IF_ERROR(const_floats(cx, r->scales, "scales", rank, scales, &is_const));
    }
    if (is_const) {
      for (int d = 0; d < rank; d++) {
        int64_t in = x->type.dims[d];
        if (!(scales[d] > 0) || !isfinite(scales[d]))
          return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "scales[%d] = %g must be > 0", d, scales[d]);
        if (MLC_DIM_IS_SYM(in)) {
          if (scales[d] != 1.0)
            return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "scaling the symbolic axis %d of %s", d,
                                mlc_fe_shape_str(cx, &x->type));
          dims[d] = in;
        } else {
          double o = floor(scales[d] * (double)in);
          if (o > (double)(INT64_C(1) << 40))
            return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "scales[%d] = %g gives a too large output", d, scales[d]);
          dims[d] = (int64_t)o;
        }
      }
    } else if (declared_shape(cx, n, rank, dims)) {
      scales_arg = 1;
    } else {
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                          "scales computed at run time needs a declared static output shape");
    }
  }
  if (strcmp(r->coord, "tf_crop_and_resize") == 0 && r->roi) {
    MLC_RETURN_IF_ERROR(const_floats(cx, r->roi, "roi", 2 * rank, roi, &is_const));
    has_roi = is_const;
    roi_arg = !is_const;
  }
  const char *mode = strcmp(r->mode, "bilinear") == 0 ? "linear" : r->mode;
  mlc_attr a[12];
  int na = 0;
  a[na++] = mlc_attr_ints("sizes", dims, rank);
  a[na++] = mlc_attr_str("mode", mode);
  a[na++] = mlc_attr_str("coordinate_transformation_mode", r->coord);
  a[na++] = mlc_attr_str("nearest_mode", r->nearest);
  a[na++] = mlc_attr_float("cubic_coeff_a", mlc_fe_attr_float(n, "cubic_coeff_a", -0.75));
  a[na++] = mlc_attr_int("exclude_outside", mlc_fe_attr_int(n, "exclude_outside", 0) != 0);
  a[na++] = mlc_attr_float("extrapolation_value", mlc_fe_attr_float(n, "extrapolation_value", 0.0));
  if (scales_arg) a[na++] = mlc_attr_int("scales_arg", 1);
  else a[na++] = mlc_attr_floats("scales", scales, rank);
  if (roi_arg) a[na++] = mlc_attr_int("roi_arg", 1);
  if (has_roi) a[na++] = mlc_attr_floats("roi", roi, 2 * rank);
  mlc_value *args[3];
  int nargs = 0;
  args[nargs++] = x;
  if (roi_arg) args[nargs++] = r->roi;
  if (scales_arg) args[nargs++] = r->scales;
  return mlc_fe_emit(cx, MLC_OP_RESIZE, args, nargs, a, na, out);
}

/* ONNX Upsample-7 (attr scales), -9, -10 (scales input) and Resize-10:
** nearest (ceil when downsampling, else floor) or linear on input
** coordinate x_out / scale. */
static mlc_status legacy_resize(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *const *in, int nin,
                                mlc_value **out) {
  rs_node r;
  memset(&r, 0, sizeof r);
  r.x = in[0];
  r.mode = mlc_fe_attr_str(n, "mode", "nearest");
  r.coord = "asymmetric";
  r.nearest = "simple";
  if (nin > 1) {
    r.scales = in[1];
  } else {
    const mlc_onnx_attr *s = mlc_fe_attr(n, "scales");
    if (!s || s->type != MLC_ONNX_ATTR_FLOATS)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "attribute scales is required");
    if (s->n != r.x->type.rank)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "scales has %d entries, the input %s has rank %d", s->n,
                          mlc_fe_shape_str(cx, &r.x->type), r.x->type.rank);
    if (s->n > MAX_RESIZE_RANK)
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "input rank %d (at most %d)", s->n, MAX_RESIZE_RANK);
    for (int i = 0; i < s->n; i++) r.scales_attr[i] = s->floats[i];
    r.has_scales_attr = 1;
  }
  return emit_resize(cx, n, &r, out);
}

/* ONNX Upsample-7,9,10: Y = X scaled up by scales (nearest or linear) */
MLC_FE_CVT(upsample) {
  (void)nout;
  return legacy_resize(cx, n, in, nin, &out[0]);
}

/* ONNX Resize-10: Y = X resized by the scales input (Upsample's rules) */
MLC_FE_CVT(resize_v10) {
  (void)nout;
  return legacy_resize(cx, n, in, nin, &out[0]);
}

/*
** ONNX Resize-11,13: Y = X resized to sizes or by scales (one of them given,
** the other omitted or empty), with the coordinate transformation mode
** (roi for tf_crop_and_resize), nearest_mode, cubic_coeff_a, exclude_outside
** and extrapolation_value.
*/
MLC_FE_CVT(resize_v11) {
  (void)nout;
  rs_node r;
  memset(&r, 0, sizeof r);
  r.x = in[0];
  r.roi = nin > 1 && present(in[1]) ? in[1] : NULL;
  r.scales = nin > 2 && present(in[2]) ? in[2] : NULL;
  r.sizes = nin > 3 && present(in[3]) ? in[3] : NULL;
  r.mode = mlc_fe_attr_str(n, "mode", "nearest");
  r.coord = mlc_fe_attr_str(n, "coordinate_transformation_mode", "half_pixel");
  r.nearest = mlc_fe_attr_str(n, "nearest_mode", "round_prefer_floor");
  if (mlc_fe_attr_int(n, "exclude_outside", 0) && strcmp(r.mode, "cubic") != 0)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "exclude_outside needs mode cubic");
  return emit_resize(cx, n, &r, &out[0]);
}

/* ---- GatherElements, GatherND ------------------------------------------- */

/* ONNX GatherElements-11,13: Y[i] = X[i with axis replaced by indices[i]] */
MLC_FE_CVT(gather_elements) {
  (void)nin, (void)nout;
  int axis;
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "axis", 0), in[0]->type.rank, "axis", &axis));
  mlc_attr a = mlc_attr_int("axis", axis);
  return mlc_fe_emit(cx, MLC_OP_GATHER_ELEMENTS, in, 2, &a, 1, &out[0]);
}

/* ONNX GatherND-11,12,13: Y = slices of X at the index tuples in the last
** dim of indices (batch_dims from 12) */
MLC_FE_CVT(gather_nd) {
  (void)nin, (void)nout;
  mlc_attr a = mlc_attr_int("batch_dims", mlc_fe_attr_int(n, "batch_dims", 0));
  return mlc_fe_emit(cx, MLC_OP_GATHER_ND, in, 2, &a, 1, &out[0]);
}

/* ---- ScatterElements, Scatter, ScatterND -------------------------------- */

static const char *const scatter_reductions[] = {"none", "add", "mul", "max", "min", NULL};

MLC_FE_CHECK(scatter) {
  const char *red = mlc_fe_attr_str(n, "reduction", "none");
  int nred = opset >= 18 ? 5 : 3;
  int ok = 0;
  for (int i = 0; i < nred; i++) ok |= strcmp(red, scatter_reductions[i]) == 0;
  if (!ok) mlc_fe_problem(p, "reduction \"%s\" not supported", red);
}

/* ONNX ScatterElements-11,13,16,18 and Scatter-9,11: Y = X with updates
** written (or combined by reduction: add, mul from 16, max, min from 18)
** along axis at indices */
MLC_FE_CVT(scatter_elements) {
  (void)nin, (void)nout;
  int axis;
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "axis", 0), in[0]->type.rank, "axis", &axis));
  mlc_attr a[2] = {mlc_attr_int("axis", axis), mlc_attr_str("reduction", mlc_fe_attr_str(n, "reduction", "none"))};
  return mlc_fe_emit(cx, MLC_OP_SCATTER_ELEMENTS, in, 3, a, 2, &out[0]);
}

/* ONNX ScatterND-11,13,16,18: Y = X with the updates slices written (or
** combined by reduction) at the index tuples in the last dim of indices */
MLC_FE_CVT(scatter_nd) {
  (void)nin, (void)nout;
  mlc_attr a = mlc_attr_str("reduction", mlc_fe_attr_str(n, "reduction", "none"));
  return mlc_fe_emit(cx, MLC_OP_SCATTER_ND, in, 3, &a, 1, &out[0]);
}
