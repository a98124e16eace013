/*
** image.c: converters of ONNX's image and indexing ops: Resize and
** Upsample, GatherElements, GatherND, ScatterElements (and the older
** Scatter), ScatterND.  MaxPool's Indices output is converted in nn.c.
**
** Resize's output shape comes from its sizes input, or floor(input *
** scales) (in double, as the ONNX reference computes it).  When those are
** constants (or sizes is built from Shape of tensors, the way exporters
** write it, and fits the input) the shape is known when compiling.
** Otherwise it is computed while the model runs: resize_dims, then
** define_dims, which checks the node's declared static output dims (a graph
** output or a value_info entry) and binds fresh symbols for the others,
** then the resize typed with them.  A scales input computed at run time is
** read by the kernel (coordinates use the given scales, not output /
** input); run-time sizes give scales output / input.  A roi input is used
** only by tf_crop_and_resize, as an attribute when constant, else read by
** the kernel; it does not change the output shape (as in the ONNX
** reference).
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

/* The dims of the node's declared output 0 (a graph output or a value_info
** entry of rank |rank|) into |dims|: >= 0 where static, -1 elsewhere (all
** -1 when none is declared). */
static void declared_dims(const mlc_fe_ctx *cx, const mlc_onnx_node *n, int rank, int64_t *dims) {
  const mlc_onnx_graph *g = cx->graph;
  for (int d = 0; d < rank; d++) dims[d] = -1;
  if (!g || n->noutputs < 1) return;
  const char *name = n->outputs[0];
  for (int pass = 0; pass < 2; pass++) {
    int cnt = pass == 0 ? g->noutputs : g->nvalue_infos;
    const mlc_onnx_value_info *vis = pass == 0 ? g->outputs : g->value_infos;
    for (int i = 0; i < cnt; i++) {
      const mlc_onnx_value_info *vi = &vis[i];
      if (strcmp(vi->name, name) != 0 || vi->kind != MLC_ONNX_VALUE_TENSOR || !vi->has_shape ||
          vi->rank != rank)
        continue;
      for (int d = 0; d < rank; d++) dims[d] = vi->dims[d].value >= 0 ? vi->dims[d].value : -1;
      return;
    }
  }
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

/*
** Element |i| (row-major) of the integer tensor |v| when the graph shows
** it: a constant >= 0, or a dim (static or symbolic) of a tensor that
** shape_of read, passed through strided_slice, concat, take with constant
** indices, reshape and casts to int64 -- the way exporters build Resize's
** sizes from Shape(x).  1 with the dim in *out; 0 when not known.
*/
static int trace_dim(mlc_fe_ctx *cx, const mlc_value *v, int64_t i, int depth, int64_t *out) {
  const mlc_type *t = &v->type;
  int64_t ne = mlc_type_numel(t);
  if (depth > 16 || i < 0 || i >= ne || !mlc_dtype_is_int(t->dtype) || t->dtype == MLC_DTYPE_BOOL) return 0;
  const mlc_const *k = mlc_fe_const(cx, v);
  if (k) {
    double e = mlc_fe_elem_get(k->type.dtype, k->data, i);
    if (!(e >= 0 && e < 9.0e15)) return 0;
    *out = (int64_t)e;
    return 1;
  }
  const mlc_binding *b = v->kind == MLC_VALUE_VAR ? v->def : NULL;
  if (!b || b->kind != MLC_CALL_OP || b->nouts != 1) return 0;
  const mlc_type *a0 = &b->args[0]->type;
  switch (b->op) {
    case MLC_OP_SHAPE_OF:
      if (i >= a0->rank) return 0;
      *out = a0->dims[i];
      return 1;
    case MLC_OP_RESHAPE: return trace_dim(cx, b->args[0], i, depth + 1, out);
    case MLC_OP_CAST:
      if (t->dtype != MLC_DTYPE_I64) return 0;
      return trace_dim(cx, b->args[0], i, depth + 1, out);
    case MLC_OP_SLICE: { /* a 1-D slice: begin + i*step, begin clamped as infer_slice does */
      const mlc_attr *ba = mlc_attrs_find(b->attrs, b->nattrs, "begin");
      const mlc_attr *sa = mlc_attrs_find(b->attrs, b->nattrs, "step");
      if (a0->rank != 1 || a0->dims[0] < 0 || !ba || !sa || ba->kind != MLC_ATTR_INTS ||
          sa->kind != MLC_ATTR_INTS || ba->n != 1 || sa->n != 1 || sa->ints[0] == 0)
        return 0;
      int64_t len = a0->dims[0], step = sa->ints[0], lo = step > 0 ? 0 : -1, hi = step > 0 ? len : len - 1;
      int64_t at = ba->ints[0] < lo ? lo : ba->ints[0] > hi ? hi : ba->ints[0];
      if (step > INT32_MAX || step < -INT32_MAX || i > INT32_MAX) return 0;
      return trace_dim(cx, b->args[0], at + i * step, depth + 1, out);
    }
    case MLC_OP_CONCAT: /* 1-D parts */
      if (t->rank != 1) return 0;
      for (int a = 0; a < b->nargs; a++) {
        int64_t len = b->args[a]->type.rank == 1 ? b->args[a]->type.dims[0] : -1;
        if (len < 0) return 0;
        if (i < len) return trace_dim(cx, b->args[a], i, depth + 1, out);
        i -= len;
      }
      return 0;
    case MLC_OP_GATHER: { /* take from a 1-D vector at constant indices */
      const mlc_const *ix = mlc_fe_const(cx, b->args[1]);
      if (a0->rank != 1 || a0->dims[0] < 0 || !ix || mlc_attrs_int(b->attrs, b->nattrs, "axis", 0) != 0)
        return 0;
      double e = mlc_fe_elem_get(ix->type.dtype, ix->data, i);
      if (e < 0) e += (double)a0->dims[0];
      if (!(e >= 0 && e < (double)a0->dims[0])) return 0;
      return trace_dim(cx, b->args[0], (int64_t)e, depth + 1, out);
    }
    default: return 0;
  }
}

#define MAX_RESIZE_RANK 16

/* What a Resize or Upsample node asks for, before emitting. */
typedef struct rs_node {
  mlc_value *x, *roi, *scales, *sizes; /* NULL when absent */
  const char *mode, *coord, *nearest;
  double scales_attr[MAX_RESIZE_RANK]; /* constant scales, when present */
  int has_scales_attr;
} rs_node;

/*
** The output dims of a resize whose dims are computed at run time from |v|
** (sizes or scales):
**
**   p = resize_dims(x, v)                        validated at run time
**   t = define_dims(p, dims=[2, s0, ...])        declared static dims checked
**
** Into |dims| go, per axis, the dim |known| has (>= 0 static, or a symbol
** that equals the computed value by construction), else the declared
** static dim, else a fresh symbol; *tok receives t.
*/
static mlc_status runtime_dims(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, mlc_value *v,
                               const int64_t *known, const int *is_known, int64_t *dims, mlc_value **tok) {
  int rank = x->type.rank;
  int64_t decl[MAX_RESIZE_RANK], bind[MAX_RESIZE_RANK];
  mlc_value *args[2] = {x, v}, *p;
  declared_dims(cx, n, rank, decl);
  for (int d = 0; d < rank; d++) {
    if (is_known[d] && known[d] >= 0 && decl[d] >= 0 && known[d] != decl[d])
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT,
                          "the declared output shape has %lld on axis %d, the resize gives %lld",
                          (long long)decl[d], d, (long long)known[d]);
    if (is_known[d] && known[d] >= 0) bind[d] = known[d];
    else if (decl[d] >= 0) bind[d] = decl[d];
    else MLC_RETURN_IF_ERROR(mlc_module_fresh_sym(cx->mod, &bind[d]));
    dims[d] = is_known[d] && decl[d] < 0 ? known[d] : bind[d];
  }
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_RESIZE_DIMS, args, 2, NULL, 0, &p));
  mlc_attr a[2] = {mlc_attr_ints("dims", bind, rank), mlc_attr_int("offset", 0)};
  return mlc_fe_emit(cx, MLC_OP_DEFINE_DIMS, &p, 1, a, 2, tok);
}

/* A 1-D float64 constant of |v|[0..n). */
static mlc_status const_f64(mlc_fe_ctx *cx, const double *v, int n, mlc_value **out) {
  int64_t dim = n;
  mlc_type t = {MLC_DTYPE_F64, 1, &dim};
  return mlc_module_add_const(cx->mod, NULL, &t, v, sizeof(double) * (size_t)n, out);
}

/*
** Emits resize for |r| (scales or sizes, not both).  Constant sizes or
** scales on a static input give static output dims here.  Otherwise (run
** time values, or a symbolic input axis that changes) the dims come from
** runtime_dims and the resize takes its token (dims_arg): run-time sizes
** give scales output / input per axis (scales_from_sizes), run-time scales
** are read by the kernel.
*/
static mlc_status emit_resize(mlc_fe_ctx *cx, const mlc_onnx_node *n, rs_node *r, mlc_value **out) {
  mlc_value *x = r->x, *v = NULL, *tok = NULL;
  int rank = x->type.rank;
  int64_t dims[MAX_RESIZE_RANK], known[MAX_RESIZE_RANK];
  int is_known[MAX_RESIZE_RANK] = {0};
  double scales[MAX_RESIZE_RANK], roi[2 * MAX_RESIZE_RANK];
  int scales_arg = 0, scales_attr = 1, roi_arg = 0, has_roi = 0, is_const;
  /* coordinate modes that map a kept axis onto itself (a symbolic one then
  ** needs no run-time dims) */
  int ident = strcmp(r->coord, "tf_crop_and_resize") != 0 && strcmp(r->coord, "tf_half_pixel_for_nn") != 0;
  if (rank < 1 || rank > MAX_RESIZE_RANK)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "input rank %d (1 to %d)", rank, MAX_RESIZE_RANK);
  if (!!r->sizes + (!!r->scales || r->has_scales_attr) != 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "exactly one of scales and sizes must be given");
  if (r->sizes) {
    const mlc_type *st = &r->sizes->type;
    if (st->rank != 1 || st->dims[0] != rank)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "sizes %s must have %d entries (the rank of %s)",
                          mlc_fe_shape_str(cx, st), rank, mlc_fe_shape_str(cx, &x->type));
    int all = 1, sym_in = 0;
    for (int d = 0; d < rank; d++) {
      is_known[d] = trace_dim(cx, r->sizes, d, 0, &known[d]);
      int64_t in = x->type.dims[d];
      /* statically right: a static size of a static axis, the axis' own
      ** symbol, or a static size of a symbolic axis (the scale output /
      ** input read at run time) */
      all &= is_known[d] && ((known[d] == in && (in >= 0 || ident)) ||
                             (known[d] >= 0 && in >= 0 && (in > 0 || known[d] == 0)) ||
                             (known[d] >= 0 && in < 0));
      sym_in |= in < 0 && known[d] != in;
    }
    if (all) {
      memcpy(dims, known, sizeof *dims * (size_t)rank);
      for (int d = 0; d < rank; d++) {
        int64_t in = x->type.dims[d];
        scales[d] = in == dims[d] ? 1.0 : (double)dims[d] / (double)in;
      }
      if (sym_in) scales_attr = 0; /* scales_from_sizes */
    } else {
      if (mlc_fe_const(cx, r->sizes)) { /* a bad entry: say which */
        int64_t *sz;
        int cnt;
        MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, r->sizes, "sizes", &sz, &cnt));
        for (int d = 0; d < rank; d++)
          if (sz[d] < 0)
            return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "sizes[%d] = %lld is negative", d,
                                (long long)sz[d]);
          else if (sz[d] > (INT64_C(1) << 40)) /* as for scales: no tensor that large */
            return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "sizes[%d] = %lld gives a too large output", d,
                                (long long)sz[d]);
          else if (x->type.dims[d] == 0 && sz[d] != 0)
            return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "sizes[%d] = %lld for the empty axis %d of %s", d,
                                (long long)sz[d], d, mlc_fe_shape_str(cx, &x->type));
      }
      v = r->sizes;
      scales_attr = 0;
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
          dims[d] = in;
          if (scales[d] == 1.0 && ident) continue;
          /* floor(in * scale) as a derived symbol when exact, else at run time */
          mlc_status st = strcmp(r->coord, "tf_crop_and_resize") == 0
                              ? mlc_make_status(MLC_UNIMPLEMENTED, "tf_crop_and_resize")
                              : mlc_dim_scale(cx->mod, in, scales[d], &cx->origin, &dims[d]);
          if (st && mlc_status_code(st) != MLC_UNIMPLEMENTED) return st;
          mlc_status_free(st);
          if (st && !v) MLC_RETURN_IF_ERROR(const_f64(cx, scales, rank, &v));
        } else {
          double o = floor(scales[d] * (double)in);
          if (o > (double)(INT64_C(1) << 40))
            return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "scales[%d] = %g gives a too large output", d, scales[d]);
          dims[d] = (int64_t)o;
        }
      }
      /* a symbolic axis scaled: its dims at run time; the rest are static */
      for (int d = 0; v && d < rank; d++) {
        is_known[d] = !MLC_DIM_IS_SYM(x->type.dims[d]) || scales[d] == 1.0;
        known[d] = dims[d];
      }
    } else {
      v = r->scales;
      scales_arg = 1;
      scales_attr = 0;
    }
  }
  if (v) MLC_RETURN_IF_ERROR(runtime_dims(cx, n, x, v, known, is_known, dims, &tok));
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
  else if (scales_attr) a[na++] = mlc_attr_floats("scales", scales, rank);
  else a[na++] = mlc_attr_int("scales_from_sizes", 1);
  if (roi_arg) a[na++] = mlc_attr_int("roi_arg", 1);
  if (has_roi) a[na++] = mlc_attr_floats("roi", roi, 2 * rank);
  if (tok) a[na++] = mlc_attr_int("dims_arg", 1);
  mlc_value *args[4];
  int nargs = 0;
  args[nargs++] = x;
  if (roi_arg) args[nargs++] = r->roi;
  if (scales_arg) args[nargs++] = r->scales;
  if (tok) args[nargs++] = tok;
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
