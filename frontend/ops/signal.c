/*
** signal.c: converters of ONNX's signal and vision ops: DFT, STFT,
** HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix, GridSample,
** RoiAlign, Det, MaxUnpool, NonMaxSuppression and Unique.
**
** Sizes that ONNX gives as inputs (DFT's dft_length, STFT's frame_step and
** frame_length, a window's size, MelWeightMatrix's bin counts, MaxUnpool's
** output_shape) are used when compiling where they are constants.
** NonMaxSuppression's and Unique's output sizes depend on the data: a
** counting op, define_dims, then the op typed with the count.  Computed
** at run time, they go through signal_dims (or, for a plain size, a cast to
** an int64 vector), then define_dims, which checks the node's declared
** static output dims (a graph output or a value_info entry) and binds fresh
** symbols for the others, and the op typed with those dims takes
** define_dims' output as its last argument.  A window of constant size is
** a constant.
*/
#include <math.h>
#include <string.h>

#include "frontend/frontend_int.h"

#define ERR(code, ...) mlc_fe_error(cx, code, __VA_ARGS__)
#define MAX_RANK 16
#define LL(x) ((long long)(x))
#define PI 3.14159265358979323846

/* ---- helpers ------------------------------------------------------------ */

/* An optional input counts as absent when omitted or empty. */
static int present(const mlc_value *v) { return v && mlc_type_numel(&v->type) != 0; }

static int one_of(const char *s, const char *const *names) {
  for (int i = 0; names[i]; i++)
    if (strcmp(s, names[i]) == 0) return 1;
  return 0;
}

/* The dims of the node's declared output 0 (a graph output or a value_info
** entry of rank |rank|) into |dims|: >= 0 where static, -1 elsewhere. */
static void declared_dims(const mlc_fe_ctx *cx, const mlc_onnx_node *n, int rank, int64_t *dims) {
  const mlc_onnx_graph *g = cx->graph;
  for (int d = 0; d < rank; d++) dims[d] = -1;
  if (!g || n->noutputs < 1) return;
  for (int pass = 0; pass < 2; pass++) {
    int cnt = pass == 0 ? g->noutputs : g->nvalue_infos;
    const mlc_onnx_value_info *vis = pass == 0 ? g->outputs : g->value_infos;
    for (int i = 0; i < cnt; i++) {
      const mlc_onnx_value_info *vi = &vis[i];
      if (strcmp(vi->name, n->outputs[0]) != 0 || vi->kind != MLC_ONNX_VALUE_TENSOR || !vi->has_shape ||
          vi->rank != rank)
        continue;
      for (int d = 0; d < rank; d++) dims[d] = vi->dims[d].value >= 0 ? vi->dims[d].value : -1;
      return;
    }
  }
}

/*
** *tok = define_dims(p) binding |k| dims from entry |off| of p: the static
** extent known[i] where it is >= 0 (checked at run time), else a fresh
** symbol.  The dims go to |dims|.
*/
static mlc_status define(mlc_fe_ctx *cx, mlc_value *p, int64_t off, int k, const int64_t *known, int64_t *dims,
                         mlc_value **tok) {
  for (int i = 0; i < k; i++) {
    if (known[i] >= 0) dims[i] = known[i];
    else MLC_RETURN_IF_ERROR(mlc_module_fresh_sym(cx->mod, &dims[i]));
  }
  mlc_attr a[2] = {mlc_attr_ints("dims", dims, k), mlc_attr_int("offset", off)};
  return mlc_fe_emit(cx, MLC_OP_DEFINE_DIMS, &p, 1, a, 2, tok);
}

/* |v| holds one integer (a size input). */
static mlc_status need_int_scalar(mlc_fe_ctx *cx, const mlc_value *v, const char *what) {
  if (!mlc_dtype_is_int(v->type.dtype) || v->type.dtype == MLC_DTYPE_BOOL)
    return ERR(MLC_INVALID_ARGUMENT, "%s must be an integer, it is %s", what, mlc_dtype_name(v->type.dtype));
  if (mlc_type_numel(&v->type) != 1)
    return ERR(MLC_INVALID_ARGUMENT, "%s must have one element, its shape is %s", what,
               mlc_fe_shape_str(cx, &v->type));
  return NULL;
}

/* The one integer of |v| when it is a constant (*is_const = 1). */
static mlc_status const_int(mlc_fe_ctx *cx, const mlc_value *v, const char *what, int64_t *out, int *is_const) {
  MLC_RETURN_IF_ERROR(need_int_scalar(cx, v, what));
  *is_const = mlc_fe_const(cx, v) != NULL;
  if (!*is_const) return NULL;
  int64_t *vals;
  int cnt;
  /* Read as integers, a rank-0 one too (through a double, 2^63 - 1 would
  ** round to 2^63, which no int64 holds). */
  MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, v, what, &vals, &cnt));
  *out = vals[0];
  return NULL;
}

/* The integer |v| as an int64 [1] vector. */
static mlc_status as_vec1(mlc_fe_ctx *cx, mlc_value *v, mlc_value **out) {
  int64_t one = 1;
  if (v->type.dtype != MLC_DTYPE_I64) {
    mlc_attr a = mlc_attr_int("dtype", MLC_DTYPE_I64);
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CAST, &v, 1, &a, 1, &v));
  }
  return mlc_fe_reshape(cx, v, &one, 1, out);
}

/* attr output_datatype (default float) as a numeric mlc_dtype. */
static mlc_status out_dtype(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_dtype *out) {
  int64_t code = mlc_fe_attr_int(n, "output_datatype", 1);
  mlc_dtype dt = mlc_onnx_dtype((int)code);
  if (dt == MLC_DTYPE_INVALID || dt == MLC_DTYPE_STRING || dt == MLC_DTYPE_BOOL)
    return ERR(MLC_UNIMPLEMENTED, "output_datatype %lld is not supported", LL(code));
  *out = dt;
  return NULL;
}

/* An int attribute that must be 0 or 1. */
static mlc_status flag(mlc_fe_ctx *cx, const mlc_onnx_node *n, const char *name, int dflt, int *out) {
  int64_t v = mlc_fe_attr_int(n, name, dflt);
  *out = dflt;
  if (v != 0 && v != 1) return ERR(MLC_INVALID_ARGUMENT, "%s = %lld must be 0 or 1", name, LL(v));
  *out = (int)v;
  return NULL;
}

/* ---- DFT ------------------------------------------------------------------ */

/*
** y = DFT of |x| along |axis| (negative counts from the back), n points
** from |len| (NULL or empty: the axis extent).
*/
static mlc_status dft(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, mlc_value *len, int64_t axis,
                      mlc_value **out) {
  int inverse, onesided, r = x->type.rank;
  MLC_RETURN_IF_ERROR(flag(cx, n, "inverse", 0, &inverse));
  MLC_RETURN_IF_ERROR(flag(cx, n, "onesided", 0, &onesided));
  if (r < 2 || r > MAX_RANK) return ERR(MLC_INVALID_ARGUMENT, "input of rank %d", r);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r - 2)
    return ERR(MLC_INVALID_ARGUMENT, "axis %lld is out of range for input %s (the last dim holds the complex parts)",
               LL(axis), mlc_fe_shape_str(cx, &x->type));
  int64_t nlen = x->type.dims[axis], bins = 0;
  mlc_value *args[2] = {x, NULL};
  if (present(len)) {
    int is_const;
    MLC_RETURN_IF_ERROR(const_int(cx, len, "dft_length", &nlen, &is_const));
    if (is_const && nlen < 1) return ERR(MLC_INVALID_ARGUMENT, "dft_length %lld must be >= 1", LL(nlen));
    if (!is_const) { /* [n, bins] at run time */
      int64_t decl[MAX_RANK];
      mlc_value *p;
      declared_dims(cx, n, r, decl);
      mlc_attr a[2] = {mlc_attr_str("kind", "dft"), mlc_attr_int("onesided", onesided)};
      MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_SIGNAL_DIMS, &len, 1, a, 2, &p));
      MLC_RETURN_IF_ERROR(define(cx, p, 1, 1, &decl[axis], &bins, &args[1]));
      nlen = 0;
    }
  }
  if (nlen != 0) bins = MLC_DIM_IS_SYM(nlen) ? nlen : onesided ? nlen / 2 + 1 : nlen;
  mlc_attr a[5] = {mlc_attr_int("axis", axis), mlc_attr_int("inverse", inverse), mlc_attr_int("onesided", onesided),
                   mlc_attr_int("length", nlen), mlc_attr_int("bins", bins)};
  return mlc_fe_emit(cx, MLC_OP_DFT, args, args[1] ? 2 : 1, a, 5, out);
}

/* ONNX DFT-17: attr axis (default 1), inverse, onesided; input dft_length. */
MLC_FE_CVT(dft_v17) {
  (void)nout;
  return dft(cx, n, in[0], nin > 1 ? in[1] : NULL, mlc_fe_attr_int(n, "axis", 1), &out[0]);
}

/* ONNX DFT-20: the axis is input 2 (default -2), a constant. */
MLC_FE_CVT(dft_v20) {
  (void)nout;
  int64_t axis = -2;
  if (nin > 2 && present(in[2])) {
    int is_const;
    MLC_RETURN_IF_ERROR(const_int(cx, in[2], "axis", &axis, &is_const));
    if (!is_const) return ERR(MLC_UNIMPLEMENTED, "an axis computed at run time is not supported");
  }
  return dft(cx, n, in[0], nin > 1 ? in[1] : NULL, axis, &out[0]);
}

/* ---- STFT ----------------------------------------------------------------- */

/*
** ONNX STFT-17: signal [batch, length, 1 or 2], frame_step, optional window
** and frame_length (the DFT length: frame_length, else the window's
** length), attr onesided (default 1).  Output [batch, frames, bins, 2]
** with frames = (length - n) / step + 1.
*/
MLC_FE_CVT(stft) {
  (void)nout;
  mlc_value *x = in[0], *stepv = in[1], *w = nin > 2 && present(in[2]) ? in[2] : NULL;
  mlc_value *lenv = nin > 3 && present(in[3]) ? in[3] : NULL;
  int onesided, step_c, len_c = 1;
  int64_t step, len = 0;
  MLC_RETURN_IF_ERROR(flag(cx, n, "onesided", 1, &onesided));
  if (x->type.rank != 3) return ERR(MLC_INVALID_ARGUMENT, "signal %s must be [batch, length, 1 or 2]",
                                    mlc_fe_shape_str(cx, &x->type));
  MLC_RETURN_IF_ERROR(const_int(cx, stepv, "frame_step", &step, &step_c));
  if (step_c && step < 1) return ERR(MLC_INVALID_ARGUMENT, "frame_step %lld must be >= 1", LL(step));
  if (w && w->type.rank != 1) return ERR(MLC_INVALID_ARGUMENT, "window %s must be 1-D", mlc_fe_shape_str(cx, &w->type));
  if (lenv) {
    MLC_RETURN_IF_ERROR(const_int(cx, lenv, "frame_length", &len, &len_c));
    if (len_c && len < 1) return ERR(MLC_INVALID_ARGUMENT, "frame_length %lld must be >= 1", LL(len));
  } else if (w) {
    len = w->type.dims[0];
    len_c = !MLC_DIM_IS_SYM(len);
    if (len_c && len < 1) return ERR(MLC_INVALID_ARGUMENT, "the window is empty");
  } else {
    return ERR(MLC_INVALID_ARGUMENT, "STFT needs a window or a frame_length");
  }
  if (w && len_c && w->type.dims[0] >= 0 && w->type.dims[0] != len)
    return ERR(MLC_INVALID_ARGUMENT, "the window has %lld entries, frame_length is %lld", LL(w->type.dims[0]), LL(len));
  int64_t L = x->type.dims[1];
  mlc_value *args[3] = {x, NULL, NULL};
  int na = 1;
  if (w) args[na++] = w;
  mlc_attr a[6] = {mlc_attr_int("onesided", onesided), mlc_attr_int("window", w != NULL),
                   mlc_attr_int("step", step_c ? step : 0), mlc_attr_int("length", len_c ? len : 0),
                   mlc_attr_int("frames", 0), mlc_attr_int("bins", 0)};
  if (step_c && len_c && L >= 0) {
    if (len > L) return ERR(MLC_INVALID_ARGUMENT, "the frame length %lld exceeds the signal length %lld", LL(len), LL(L));
    a[4].i = (L - len) / step + 1;
    a[5].i = onesided ? len / 2 + 1 : len;
    return mlc_fe_emit(cx, MLC_OP_STFT, args, na, a, 6, &out[0]);
  }
  /* [frames, bins, step, n] at run time */
  mlc_value *nv = lenv, *p;
  if (!nv && len_c) MLC_RETURN_IF_ERROR(mlc_fe_const_i64(cx, &len, 1, &nv));
  if (!nv) MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_SHAPE_OF, &w, 1, NULL, 0, &nv));
  mlc_value *sa[3] = {x, stepv, nv};
  mlc_attr da[2] = {mlc_attr_str("kind", "stft"), mlc_attr_int("onesided", onesided)};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_SIGNAL_DIMS, sa, 3, da, 2, &p));
  int64_t decl[4], known[2], dims[2];
  declared_dims(cx, n, 4, decl);
  known[0] = decl[1];
  known[1] = len_c ? (onesided ? len / 2 + 1 : len) : decl[2];
  MLC_RETURN_IF_ERROR(define(cx, p, 0, 2, known, dims, &args[na++]));
  a[4].i = dims[0];
  a[5].i = dims[1];
  return mlc_fe_emit(cx, MLC_OP_STFT, args, na, a, 6, &out[0]);
}

/* ---- windows ---------------------------------------------------------------- */

/* The window |kind| at |i| of |size| points (periodic or symmetric), as the
** window op's kernel computes it. */
static double window_at(const char *kind, int periodic, int64_t size, int64_t i) {
  int64_t N = periodic ? size : size - 1;
  if (N < 1) N = 1;
  double a = 2 * PI * (double)i / (double)N;
  if (strcmp(kind, "hamming") == 0) return 25.0 / 46.0 - 21.0 / 46.0 * cos(a);
  if (strcmp(kind, "blackman") == 0) return 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
  return 0.5 - 0.5 * cos(a);
}

/* A window of the size input: a constant for a constant size, else the
** window op over a define_dims'd size. */
static mlc_status window(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *size, const char *kind, mlc_value **out) {
  int periodic, is_const;
  int64_t N;
  mlc_dtype dt;
  MLC_RETURN_IF_ERROR(flag(cx, n, "periodic", 1, &periodic));
  MLC_RETURN_IF_ERROR(out_dtype(cx, n, &dt));
  MLC_RETURN_IF_ERROR(const_int(cx, size, "size", &N, &is_const));
  if (is_const) {
    if (N < 0) return ERR(MLC_INVALID_ARGUMENT, "size %lld must be >= 0", LL(N));
    if (N > (1 << 26)) return ERR(MLC_UNIMPLEMENTED, "a window of %lld points is too large", LL(N));
    mlc_type t = {dt, 1, &N};
    size_t nbytes = (size_t)N * mlc_dtype_size(dt);
    if (!nbytes) return mlc_module_add_const(cx->mod, NULL, &t, NULL, 0, out);
    void *data = mlc_const_alloc(cx->mod, nbytes);
    if (!data) return mlc_oom();
    for (int64_t i = 0; i < N; i++) mlc_fe_elem_set(dt, data, i, window_at(kind, periodic, N, i));
    return mlc_module_adopt_const(cx->mod, NULL, &t, data, nbytes, out);
  }
  mlc_value *p, *tok;
  int64_t decl[1], dim;
  declared_dims(cx, n, 1, decl);
  MLC_RETURN_IF_ERROR(as_vec1(cx, size, &p));
  MLC_RETURN_IF_ERROR(define(cx, p, 0, 1, decl, &dim, &tok));
  mlc_attr a[4] = {mlc_attr_str("kind", kind), mlc_attr_int("periodic", periodic), mlc_attr_int("dtype", dt),
                   mlc_attr_ints("shape", &dim, 1)};
  return mlc_fe_emit(cx, MLC_OP_WINDOW, &tok, 1, a, 4, out);
}

/* ONNX HannWindow-17: 0.5 - 0.5 cos(2 pi i / N). */
MLC_FE_CVT(hann_window) {
  (void)nin, (void)nout;
  return window(cx, n, in[0], "hann", &out[0]);
}

/* ONNX HammingWindow-17: 25/46 - 21/46 cos(2 pi i / N). */
MLC_FE_CVT(hamming_window) {
  (void)nin, (void)nout;
  return window(cx, n, in[0], "hamming", &out[0]);
}

/* ONNX BlackmanWindow-17: 0.42 - 0.5 cos(2 pi i / N) + 0.08 cos(4 pi i / N). */
MLC_FE_CVT(blackman_window) {
  (void)nin, (void)nout;
  return window(cx, n, in[0], "blackman", &out[0]);
}

/* ---- MelWeightMatrix ---------------------------------------------------------- */

/* ONNX MelWeightMatrix-17: [dft_length/2 + 1, num_mel_bins] in attr
** output_datatype (default float). */
MLC_FE_CVT(mel_weight_matrix) {
  (void)nin, (void)nout;
  static const char *const what[] = {"num_mel_bins", "dft_length", "sample_rate"};
  int64_t v[3], known[2], dims[2];
  int is_c[3];
  mlc_dtype dt;
  MLC_RETURN_IF_ERROR(out_dtype(cx, n, &dt));
  for (int i = 0; i < 3; i++) MLC_RETURN_IF_ERROR(const_int(cx, in[i], what[i], &v[i], &is_c[i]));
  for (int i = 3; i < 5; i++)
    if (!mlc_dtype_is_float(in[i]->type.dtype) || mlc_type_numel(&in[i]->type) != 1)
      return ERR(MLC_INVALID_ARGUMENT, "%s must be a float scalar", i == 3 ? "lower_edge_hertz" : "upper_edge_hertz");
  if (is_c[0] && v[0] < 0) return ERR(MLC_INVALID_ARGUMENT, "num_mel_bins %lld must be >= 0", LL(v[0]));
  if (is_c[1] && v[1] < 1) return ERR(MLC_INVALID_ARGUMENT, "dft_length %lld must be >= 1", LL(v[1]));
  mlc_value *args[6] = {in[0], in[1], in[2], in[3], in[4], NULL};
  if (is_c[0] && is_c[1]) {
    dims[0] = v[1] / 2 + 1;
    dims[1] = v[0];
  } else {
    mlc_value *p;
    mlc_attr k = mlc_attr_str("kind", "mel");
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_SIGNAL_DIMS, args, 2, &k, 1, &p));
    declared_dims(cx, n, 2, known);
    if (is_c[1]) known[0] = v[1] / 2 + 1;
    if (is_c[0]) known[1] = v[0];
    MLC_RETURN_IF_ERROR(define(cx, p, 0, 2, known, dims, &args[5]));
  }
  mlc_attr a[2] = {mlc_attr_int("dtype", dt), mlc_attr_ints("shape", dims, 2)};
  return mlc_fe_emit(cx, MLC_OP_MEL_WEIGHTS, args, args[5] ? 6 : 5, a, 2, &out[0]);
}

/* ---- GridSample ------------------------------------------------------------------ */

static const char *const gs_modes16[] = {"bilinear", "nearest", "bicubic", NULL};
static const char *const gs_modes20[] = {"linear", "nearest", "cubic", NULL};
static const char *const gs_pads[] = {"zeros", "border", "reflection", NULL};

MLC_FE_CHECK(grid_sample) {
  const char *mode = mlc_fe_attr_str(n, "mode", opset >= 20 ? "linear" : "bilinear");
  if (!one_of(mode, opset >= 20 ? gs_modes20 : gs_modes16)) mlc_fe_problem(p, "mode \"%s\" not supported", mode);
  const char *pad = mlc_fe_attr_str(n, "padding_mode", "zeros");
  if (!one_of(pad, gs_pads)) mlc_fe_problem(p, "padding_mode \"%s\" not supported", pad);
}

/* ONNX GridSample-16 (modes bilinear, nearest, bicubic) and -20 (linear,
** nearest, cubic): 4-D inputs. */
MLC_FE_CVT(grid_sample) {
  (void)nin, (void)nout;
  int ac;
  const char *mode = mlc_fe_attr_str(n, "mode", cx->opset >= 20 ? "linear" : "bilinear");
  if (strcmp(mode, "linear") == 0) mode = "bilinear";
  else if (strcmp(mode, "cubic") == 0) mode = "bicubic";
  MLC_RETURN_IF_ERROR(flag(cx, n, "align_corners", 0, &ac));
  if (in[0]->type.rank != 4)
    return ERR(MLC_UNIMPLEMENTED, "input %s: only 4-D inputs are supported", mlc_fe_shape_str(cx, &in[0]->type));
  mlc_attr a[3] = {mlc_attr_str("mode", mode), mlc_attr_str("padding_mode", mlc_fe_attr_str(n, "padding_mode", "zeros")),
                   mlc_attr_int("align_corners", ac)};
  return mlc_fe_emit(cx, MLC_OP_GRID_SAMPLE, in, 2, a, 3, &out[0]);
}

/* ---- RoiAlign -------------------------------------------------------------------- */

static const char *const roi_modes[] = {"avg", "max", NULL};
static const char *const roi_ctm[] = {"half_pixel", "output_half_pixel", NULL};

MLC_FE_CHECK(roi_align) {
  const char *mode = mlc_fe_attr_str(n, "mode", "avg");
  if (!one_of(mode, roi_modes)) mlc_fe_problem(p, "mode \"%s\" not supported", mode);
  if (opset >= 16) {
    const char *ct = mlc_fe_attr_str(n, "coordinate_transformation_mode", "half_pixel");
    if (!one_of(ct, roi_ctm)) mlc_fe_problem(p, "coordinate_transformation_mode \"%s\" not supported", ct);
  }
}

/* ONNX RoiAlign-10 (no pixel shift) and -16 (coordinate_transformation_mode,
** default half_pixel). */
MLC_FE_CVT(roi_align) {
  (void)nin, (void)nout;
  int hp = cx->opset >= 16 &&
           strcmp(mlc_fe_attr_str(n, "coordinate_transformation_mode", "half_pixel"), "half_pixel") == 0;
  int64_t oh = mlc_fe_attr_int(n, "output_height", 1), ow = mlc_fe_attr_int(n, "output_width", 1);
  int64_t sr = mlc_fe_attr_int(n, "sampling_ratio", 0);
  if (oh < 1 || ow < 1)
    return ERR(MLC_INVALID_ARGUMENT, "output_height %lld and output_width %lld must be >= 1", LL(oh), LL(ow));
  if (sr < 0) return ERR(MLC_INVALID_ARGUMENT, "sampling_ratio %lld must be >= 0", LL(sr));
  mlc_attr a[6] = {mlc_attr_str("mode", mlc_fe_attr_str(n, "mode", "avg")), mlc_attr_int("output_height", oh),
                   mlc_attr_int("output_width", ow), mlc_attr_int("sampling_ratio", sr),
                   mlc_attr_float("spatial_scale", mlc_fe_attr_float(n, "spatial_scale", 1.0)),
                   mlc_attr_int("half_pixel", hp)};
  return mlc_fe_emit(cx, MLC_OP_ROI_ALIGN, in, 3, a, 6, &out[0]);
}

/* ---- Det, MaxUnpool ----------------------------------------------------------------- */

/* ONNX Det-11: determinants of the matrices [*, M, M]. */
MLC_FE_CVT(det) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_emit(cx, MLC_OP_DET, in, 1, NULL, 0, &out[0]);
}

/*
** ONNX MaxUnpool-9,11: zeros of the output shape (the output_shape input,
** else (in - 1) * stride + kernel - pads per spatial axis) with
** y.flat[I[e]] = X[e].
*/
MLC_FE_CVT(max_unpool) {
  (void)nout;
  mlc_value *x = in[0], *args[3] = {in[0], in[1], NULL};
  int r = x->type.rank, k = r - 2;
  const int64_t *ks, *ss, *ps;
  int64_t strides[MAX_RANK], pads[2 * MAX_RANK], shape[MAX_RANK];
  if (r < 3 || r > MAX_RANK) return ERR(MLC_INVALID_ARGUMENT, "input %s must be [N, C, D1, ...]", mlc_fe_shape_str(cx, &x->type));
  if (mlc_fe_attr_ints(n, "kernel_shape", &ks) != k)
    return ERR(MLC_INVALID_ARGUMENT, "kernel_shape must have %d entries", k);
  int nss = mlc_fe_attr_ints(n, "strides", &ss), nps = mlc_fe_attr_ints(n, "pads", &ps);
  if ((nss >= 0 && nss != k) || (nps >= 0 && nps != 2 * k))
    return ERR(MLC_INVALID_ARGUMENT, "strides must have %d entries and pads %d", k, 2 * k);
  for (int d = 0; d < k; d++) {
    strides[d] = nss >= 0 ? ss[d] : 1;
    pads[d] = nps >= 0 ? ps[d] : 0;
    pads[k + d] = nps >= 0 ? ps[k + d] : 0;
    if (ks[d] < 1 || strides[d] < 1 || pads[d] < 0 || pads[k + d] < 0)
      return ERR(MLC_INVALID_ARGUMENT, "kernel_shape, strides or pads out of range on axis %d", d);
  }
  mlc_value *os = nin > 2 && in[2] && in[2]->type.rank == 1 && in[2]->type.dims[0] != 0 ? in[2] : NULL;
  if (os) {
    if (os->type.dims[0] != r) return ERR(MLC_INVALID_ARGUMENT, "output_shape must have %d entries", r);
    if (mlc_fe_const(cx, os)) {
      int64_t *v;
      int cnt;
      MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, os, "output_shape", &v, &cnt));
      for (int d = 0; d < r; d++) {
        if (v[d] < 0) return ERR(MLC_INVALID_ARGUMENT, "output_shape[%d] = %lld is negative", d, LL(v[d]));
        shape[d] = v[d];
      }
    } else {
      int64_t decl[MAX_RANK];
      if (os->type.dtype != MLC_DTYPE_I64) return ERR(MLC_INVALID_ARGUMENT, "output_shape must be int64");
      declared_dims(cx, n, r, decl);
      MLC_RETURN_IF_ERROR(define(cx, os, 0, r, decl, shape, &args[2]));
    }
  } else {
    shape[0] = x->type.dims[0];
    shape[1] = x->type.dims[1];
    for (int d = 0; d < k; d++) {
      int64_t e = x->type.dims[d + 2];
      if (MLC_DIM_IS_SYM(e)) return ERR(MLC_UNIMPLEMENTED, "spatial dims of the input must be static");
      /* (e - 1) * stride + kernel - pads, checked: the values come from the model */
      int64_t o;
      if (__builtin_mul_overflow(e - 1, strides[d], &o) || __builtin_add_overflow(o, ks[d], &o) || __builtin_sub_overflow(o, pads[d], &o) ||
          __builtin_sub_overflow(o, pads[k + d], &o))
        return ERR(MLC_INVALID_ARGUMENT, "the output extent of axis %d overflows int64", d + 2);
      shape[d + 2] = o;
      if (shape[d + 2] < 0) return ERR(MLC_INVALID_ARGUMENT, "the output extent of axis %d is negative", d + 2);
    }
  }
  mlc_attr a[4] = {mlc_attr_ints("kernel", ks, k), mlc_attr_ints("strides", strides, k),
                   mlc_attr_ints("pads", pads, 2 * k), mlc_attr_ints("shape", shape, r)};
  return mlc_fe_emit(cx, MLC_OP_MAX_UNPOOL, args, args[2] ? 3 : 2, a, 4, &out[0]);
}

/* ---- NonMaxSuppression, Unique ---------------------------------------------------------- */

/*
** ONNX NonMaxSuppression-10,11: int64 [n, 3] rows [batch, class, box]; the
** optional inputs default to max_output_boxes_per_class 0 (no rows),
** iou_threshold 0 and no score threshold.  n is known only at run time:
** nms_count, define_dims, then non_max_suppression.
*/
MLC_FE_CVT(nms) {
  (void)nout;
  mlc_value *args[6] = {in[0], in[1], nin > 2 ? in[2] : NULL, nin > 3 ? in[3] : NULL, nin > 4 ? in[4] : NULL, NULL};
  int cpb;
  MLC_RETURN_IF_ERROR(flag(cx, n, "center_point_box", 0, &cpb));
  mlc_dtype ft = in[0]->type.dtype;
  if (ft != MLC_DTYPE_F32 && ft != MLC_DTYPE_F64) return ERR(MLC_UNIMPLEMENTED, "boxes of dtype %s", mlc_dtype_name(ft));
  int64_t maxo = 0, zero_rows[2] = {0, 3};
  int is_const = 1;
  if (present(args[2])) MLC_RETURN_IF_ERROR(const_int(cx, args[2], "max_output_boxes_per_class", &maxo, &is_const));
  if (is_const && maxo <= 0) { /* no rows */
    mlc_type t = {MLC_DTYPE_I64, 2, zero_rows};
    return mlc_module_add_const(cx->mod, NULL, &t, NULL, 0, &out[0]);
  }
  if (!present(args[3])) MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, ft, 0, &args[3]));
  if (!present(args[4])) MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, ft, -INFINITY, &args[4]));
  for (int i = 3; i < 5; i++)
    if (!mlc_dtype_is_float(args[i]->type.dtype) || mlc_type_numel(&args[i]->type) != 1)
      return ERR(MLC_INVALID_ARGUMENT, "%s must be a float scalar", i == 3 ? "iou_threshold" : "score_threshold");
  mlc_value *p;
  mlc_attr a[2] = {mlc_attr_int("center_point_box", cpb), mlc_attr_ints("shape", NULL, 0)};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_NMS_COUNT, args, 5, a, 1, &p));
  int64_t decl[2], dims[2];
  declared_dims(cx, n, 2, decl);
  MLC_RETURN_IF_ERROR(define(cx, p, 0, 1, decl, dims, &args[5]));
  dims[1] = 3;
  a[1] = mlc_attr_ints("shape", dims, 2);
  return mlc_fe_emit(cx, MLC_OP_NMS, args, 6, a, 2, &out[0]);
}

/*
** ONNX Unique-11: the distinct elements of the flattened input, or (attr
** axis) the distinct slices along the axis, sorted (attr sorted, default 1)
** or in order of first occurrence, with the first-occurrence indices, the
** inverse indices and the counts.  The input is viewed as [A, N, B] (the
** dims before the axis, the axis, the dims after); the number of distinct
** slices U is known only at run time (unique_count, define_dims).
*/
MLC_FE_CVT(unique) {
  (void)nin;
  mlc_value *x = in[0], *x3, *p, *args[2];
  int r = x->type.rank, axis = -1, sorted;
  MLC_RETURN_IF_ERROR(flag(cx, n, "sorted", 1, &sorted));
  if (r > MAX_RANK) return ERR(MLC_UNIMPLEMENTED, "rank %d is too large", r);
  if (mlc_fe_attr(n, "axis")) MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "axis", 0), r, "axis", &axis));
  int64_t d3[3];
  if (axis < 0) {
    d3[0] = d3[2] = 1;
    MLC_RETURN_IF_ERROR(mlc_fe_dim_product(cx, x->type.dims, r, "the input size", &d3[1]));
  } else {
    MLC_RETURN_IF_ERROR(mlc_fe_dim_product(cx, x->type.dims, axis, "the dims before the axis", &d3[0]));
    d3[1] = x->type.dims[axis];
    MLC_RETURN_IF_ERROR(mlc_fe_dim_product(cx, x->type.dims + axis + 1, r - axis - 1, "the dims after the axis", &d3[2]));
  }
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, x, d3, 3, &x3));
  mlc_attr sa = mlc_attr_int("sorted", sorted);
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_UNIQUE_COUNT, &x3, 1, &sa, 1, &p));
  int64_t decl[MAX_RANK], u;
  declared_dims(cx, n, axis < 0 ? 1 : r, decl);
  MLC_RETURN_IF_ERROR(define(cx, p, 0, 1, &decl[axis < 0 ? 0 : axis], &u, &args[1]));
  args[0] = x3;
  mlc_attr a[2] = {sa, mlc_attr_int("count", u)};
  mlc_value *outs[MLC_MAX_OUTS];
  int no;
  MLC_RETURN_IF_ERROR(mlc_graph_emit(cx->fn, MLC_OP_UNIQUE, args, 2, a, 2, &cx->origin, outs, &no));
  int64_t yd[MAX_RANK];
  if (axis < 0) {
    yd[0] = u;
  } else {
    memcpy(yd, x->type.dims, sizeof *yd * (size_t)r);
    yd[axis] = u;
  }
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, outs[0], yd, axis < 0 ? 1 : r, &out[0]));
  for (int i = 1; i < 4 && i < nout; i++) out[i] = outs[i];
  return NULL;
}
