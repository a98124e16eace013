/*
** infer_signal.c: struct-info inference of the signal and vision ops of
** ops.def: dft, stft, window, mel_weight_matrix, signal_dims, grid_sample,
** roi_align, det, max_unpool, nms_count, non_max_suppression, unique_count
** and unique.
**
** As in infer.c, a rule validates its arguments' dtypes and ranks and every
** attribute it reads and reports problems through mlc_graph_call_error,
** which names the ONNX node and the op.  Output dims live in the module
** arena.
**
** Sizes that come from tensor values (a DFT length, STFT's frame step, a
** window size given as an input) are computed at run time by signal_dims
** (or a cast of the value), bound to symbols by define_dims, and the data
** op takes define_dims' output as its last argument (which orders it after
** the binding) and its output dims as attributes.  As with the run-time
** shape ops of infer_dyn.c, a rule cannot check symbolic output dims
** against values it does not know; it checks every static relation.  The
** ops whose output sizes depend on the data (non_max_suppression, unique)
** come in pairs: a count (int64 [1]) for define_dims, then the op typed
** with the symbol it binds.
*/
#include <stdio.h>
#include <string.h>

#define MLC_GRAPH_INFER_SHORTHANDS
#include "graph/graph_int.h"

/* Largest rank a rule handles (stack buffers). */
#define MAX_RANK 16


/* Arg |i| is a float tensor. */
static mlc_status need_float(const mlc_call_info *ci, int i, const char *what) {
  if (mlc_dtype_is_float(mlc_graph_arg(ci, i)->dtype)) return NULL;
  return ERR("%s (argument %d) has dtype %s, expected a float type", what, i, mlc_dtype_name(mlc_graph_arg(ci, i)->dtype));
}

/* Arg |i| holds one element (any rank) of a numeric dtype; |integer|: an
** integer dtype. */
static mlc_status need_scalar(const mlc_call_info *ci, int i, const char *what, int integer) {
  const mlc_type *t = mlc_graph_arg(ci, i);
  if (mlc_type_numel(t) != 1) return ERR("%s (argument %d) must have one element", what, i);
  if (!mlc_graph_is_num(t->dtype) || (integer && !mlc_dtype_is_int(t->dtype)))
    return ERR("%s (argument %d) has dtype %s, expected %s", what, i, mlc_dtype_name(t->dtype),
               integer ? "an integer type" : "a numeric type");
  return NULL;
}

/* Arg |i| is define_dims' output: an int64 vector of static length >= |len|. */
static mlc_status need_params(const mlc_call_info *ci, int i, int64_t len) {
  const mlc_type *t = mlc_graph_arg(ci, i);
  if (t->dtype != MLC_DTYPE_I64 || t->rank != 1 || t->dims[0] < len)
    return ERR("argument %d must be an int64 vector of at least %lld entries (define_dims' output)", i, LL(len));
  return NULL;
}

/* A dim attribute: a static extent >= |lo| or a symbol of the module;
** required unless |dflt| is given (not MISSING). */
#define MISSING INT64_MIN
static mlc_status attr_dim(const mlc_call_info *ci, const char *name, int64_t lo, int64_t dflt, int64_t *out) {
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, name, dflt, out));
  if (*out == MISSING) return ERR("attribute %s is required", name);
  if (MLC_DIM_IS_SYM(*out)) {
    if (MLC_DIM_SYM_ID(*out) >= ci->mod->nsyms) return ERR("attribute %s is an unknown symbol", name);
  } else if (*out < lo) {
    return ERR("attribute %s = %lld must be at least %lld", name, LL(*out), LL(lo));
  }
  return NULL;
}

/* attr shape: |rank| dims, static (>= 0) or symbols of the module. */
static mlc_status attr_shape(const mlc_call_info *ci, int rank, const int64_t **out) {
  const mlc_attr *s = mlc_attrs_find(ci->attrs, ci->nattrs, "shape");
  if (!s || s->kind != MLC_ATTR_INTS || s->n != rank || (rank > 0 && !s->ints))
    return ERR("attribute shape must be a list of %d dims", rank);
  for (int i = 0; i < rank; i++)
    if (MLC_DIM_IS_SYM(s->ints[i]) && MLC_DIM_SYM_ID(s->ints[i]) >= ci->mod->nsyms)
      return ERR("shape[%d] is an unknown symbol", i);
  *out = s->ints;
  return NULL;
}

/* A dtype attribute (|dflt| when absent) that must be a numeric type. */
static mlc_status attr_dtype(const mlc_call_info *ci, mlc_dtype dflt, mlc_dtype *out) {
  int64_t v;
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "dtype", dflt, &v));
  if (v <= MLC_DTYPE_INVALID || v >= MLC_DTYPE_COUNT || !mlc_graph_is_num((mlc_dtype)v))
    return ERR("attribute dtype = %lld is not a numeric dtype", LL(v));
  *out = (mlc_dtype)v;
  return NULL;
}

/* A signal tensor [.., 1] (real) or [.., 2] (complex) of a float dtype. */
static mlc_status need_signal(const mlc_call_info *ci, int i, int min_rank) {
  const mlc_type *x = mlc_graph_arg(ci, i);
  MLC_RETURN_IF_ERROR(need_float(ci, i, "signal"));
  if (x->rank < min_rank) return ERR("the signal must have rank >= %d, it has %d", min_rank, x->rank);
  int64_t c = x->dims[x->rank - 1];
  if (c != 1 && c != 2) return ERR("the last dim of the signal must be 1 (real) or 2 (complex)");
  return NULL;
}

/* ---- dft ----------------------------------------------------------------- */

/* y = dft(x[, p]): x's dims with the axis extent bins and the last 2. */
mlc_status mlc_infer_dft(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  int64_t axis, len, bins, dims[MAX_RANK];
  int inverse, onesided;
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  MLC_RETURN_IF_ERROR(need_signal(ci, 0, 2));
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int r = x->rank;
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "axis", 1, &axis));
  if (axis < 0 || axis > r - 2) return ERR("axis %lld must be in [0, %d]", LL(axis), r - 2);
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "inverse", 0, &inverse));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "onesided", 0, &onesided));
  MLC_RETURN_IF_ERROR(attr_dim(ci, "length", 0, x->dims[axis], &len));
  if (len == 0) { /* n at run time */
    if (ci->nargs != 2) return ERR("length 0 (run time) needs define_dims' output as argument 1");
    MLC_RETURN_IF_ERROR(need_params(ci, 1, 1));
    MLC_RETURN_IF_ERROR(attr_dim(ci, "bins", 0, MISSING, &bins));
  } else {
    if (MLC_DIM_IS_SYM(len)) {
      int found = 0;
      for (int d = 0; d < r; d++) found |= x->dims[d] == len;
      if (!found) return ERR("the symbolic length must be a dim of the signal");
      if (onesided) return UNIMPL("a onesided DFT of symbolic length");
    }
    int64_t want = MLC_DIM_IS_SYM(len) ? len : onesided ? len / 2 + 1 : len;
    MLC_RETURN_IF_ERROR(attr_dim(ci, "bins", 0, want, &bins));
    if (bins != want) return ERR("bins must be %lld for length %lld", LL(want), LL(len));
    if (ci->nargs == 2) MLC_RETURN_IF_ERROR(need_params(ci, 1, 0));
  }
  memcpy(dims, x->dims, (size_t)r * sizeof *dims);
  dims[axis] = bins;
  dims[r - 1] = 2;
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, r);
}

/* ---- stft ---------------------------------------------------------------- */

/* y = stft(signal[, window][, p]): [B, frames, bins, 2]. */
mlc_status mlc_infer_stft(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  int64_t step, len, frames, bins;
  int onesided, win;
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  MLC_RETURN_IF_ERROR(need_signal(ci, 0, 3));
  const mlc_type *x = mlc_graph_arg(ci, 0);
  if (x->rank != 3) return ERR("the signal must be [batch, length, 1 or 2], it has rank %d", x->rank);
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "onesided", 1, &onesided));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "window", 0, &win));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "step", 0, &step));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "length", 0, &len));
  if (step < 0 || len < 0) return ERR("step and length must be >= 0 (0: at run time)");
  int has_p = ci->nargs > 1 + win;
  if (ci->nargs > 2 + win) return ERR("takes at most %d arguments with window = %d", 2 + win, win);
  if (win) {
    if (ci->nargs < 2) return ERR("window = 1 but no window argument");
    const mlc_type *w = mlc_graph_arg(ci, 1);
    if (w->rank != 1 || w->dtype != x->dtype)
      return ERR("the window must be a vector of the signal's dtype %s", mlc_dtype_name(x->dtype));
    if (len > 0 && w->dims[0] >= 0 && w->dims[0] != len)
      return ERR("the window has %lld entries, the frame length is %lld", LL(w->dims[0]), LL(len));
  }
  if (has_p) MLC_RETURN_IF_ERROR(need_params(ci, ci->nargs - 1, 4));
  else if (step == 0 || len == 0) return ERR("step or length 0 (run time) needs define_dims' output as the last argument");
  int64_t sig = x->dims[1], fdflt = MISSING, bdflt = MISSING;
  if (step > 0 && len > 0 && sig >= 0) {
    if (len > sig) return ERR("the frame length %lld exceeds the signal length %lld", LL(len), LL(sig));
    fdflt = (sig - len) / step + 1;
  }
  if (len > 0) bdflt = onesided ? len / 2 + 1 : len;
  MLC_RETURN_IF_ERROR(attr_dim(ci, "frames", 0, fdflt, &frames));
  MLC_RETURN_IF_ERROR(attr_dim(ci, "bins", 0, bdflt, &bins));
  if (fdflt != MISSING && frames != fdflt) return ERR("frames must be %lld", LL(fdflt));
  if (bdflt != MISSING && bins != bdflt) return ERR("bins must be %lld", LL(bdflt));
  if ((MLC_DIM_IS_SYM(frames) || MLC_DIM_IS_SYM(bins)) && !has_p)
    return ERR("symbolic output dims need define_dims' output as the last argument");
  int64_t dims[4] = {x->dims[0], frames, bins, 2};
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, 4);
}

/* ---- window, mel_weight_matrix, signal_dims ------------------------------- */

static const char *const window_kinds[] = {"hann", "hamming", "blackman", NULL};

/* y = window(n): attr shape [N] in attr dtype. */
mlc_status mlc_infer_window(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const char *kind;
  const int64_t *shape;
  int periodic;
  mlc_dtype dt;
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  MLC_RETURN_IF_ERROR(need_scalar(ci, 0, "the size", 1));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_choice(ci, "kind", "hann", window_kinds, &kind));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "periodic", 1, &periodic));
  MLC_RETURN_IF_ERROR(attr_dtype(ci, MLC_DTYPE_F32, &dt));
  MLC_RETURN_IF_ERROR(attr_shape(ci, 1, &shape));
  return mlc_graph_ret1(ci, outs, nouts, dt, shape, 1);
}

/* y = mel_weight_matrix(num_mel_bins, dft_length, sample_rate, lower, upper[, p]). */
mlc_status mlc_infer_mel_weights(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  static const char *const what[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                                     "upper_edge_hertz"};
  const int64_t *shape;
  mlc_dtype dt;
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  for (int i = 0; i < 5; i++) MLC_RETURN_IF_ERROR(need_scalar(ci, i, what[i], i < 3));
  if (ci->nargs == 6) MLC_RETURN_IF_ERROR(need_params(ci, 5, 0));
  MLC_RETURN_IF_ERROR(attr_dtype(ci, MLC_DTYPE_F32, &dt));
  MLC_RETURN_IF_ERROR(attr_shape(ci, 2, &shape));
  if ((MLC_DIM_IS_SYM(shape[0]) || MLC_DIM_IS_SYM(shape[1])) && ci->nargs != 6)
    return ERR("symbolic output dims need define_dims' output as argument 5");
  return mlc_graph_ret1(ci, outs, nouts, dt, shape, 2);
}

static const char *const dims_kinds[] = {"dft", "stft", "mel", NULL};

/* int64 [2] (dft, mel) or [4] (stft). */
mlc_status mlc_infer_signal_dims(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const char *kind;
  int onesided;
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_choice(ci, "kind", NULL, dims_kinds, &kind));
  if (!kind) return ERR("attribute kind is required");
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "onesided", 0, &onesided));
  int64_t n = 2;
  if (strcmp(kind, "dft") == 0) {
    if (ci->nargs != 1) return ERR("kind dft takes 1 argument (n)");
    MLC_RETURN_IF_ERROR(need_scalar(ci, 0, "n", 1));
  } else if (strcmp(kind, "stft") == 0) {
    if (ci->nargs != 3) return ERR("kind stft takes 3 arguments (signal, step, n)");
    if (mlc_graph_arg(ci, 0)->rank != 3) return ERR("the signal must have rank 3");
    MLC_RETURN_IF_ERROR(need_scalar(ci, 1, "step", 1));
    MLC_RETURN_IF_ERROR(need_scalar(ci, 2, "n", 1));
    n = 4;
  } else {
    if (ci->nargs != 2) return ERR("kind mel takes 2 arguments (num_mel_bins, dft_length)");
    MLC_RETURN_IF_ERROR(need_scalar(ci, 0, "num_mel_bins", 1));
    MLC_RETURN_IF_ERROR(need_scalar(ci, 1, "dft_length", 1));
  }
  return mlc_graph_ret1(ci, outs, nouts, MLC_DTYPE_I64, &n, 1);
}

/* ---- grid_sample, roi_align ----------------------------------------------- */

static const char *const gs_modes[] = {"bilinear", "nearest", "bicubic", NULL};
static const char *const gs_pads[] = {"zeros", "border", "reflection", NULL};

/* y = grid_sample(x [N, C, H, W], grid [N, Ho, Wo, 2]): [N, C, Ho, Wo]. */
mlc_status mlc_infer_grid_sample(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const char *mode, *pad;
  int ac;
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  const mlc_type *x = mlc_graph_arg(ci, 0), *g = mlc_graph_arg(ci, 1);
  if (!mlc_graph_is_num(x->dtype)) return ERR("input of dtype %s (numeric types only)", mlc_dtype_name(x->dtype));
  MLC_RETURN_IF_ERROR(need_float(ci, 1, "grid"));
  if (x->rank != 4) return UNIMPL("input of rank %d (only 4-D inputs)", x->rank);
  if (g->rank != 4 || g->dims[3] != 2) return ERR("grid must be [N, H_out, W_out, 2]");
  if (g->dims[0] != x->dims[0]) return ERR("grid and input differ in the batch dim");
  MLC_RETURN_IF_ERROR(mlc_graph_attr_choice(ci, "mode", "bilinear", gs_modes, &mode));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_choice(ci, "padding_mode", "zeros", gs_pads, &pad));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "align_corners", 0, &ac));
  int64_t dims[4] = {x->dims[0], x->dims[1], g->dims[1], g->dims[2]};
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, 4);
}

static const char *const roi_modes[] = {"avg", "max", NULL};

/* y = roi_align(x [N, C, H, W], rois [R, 4], batch_indices [R]): [R, C, oh, ow]. */
mlc_status mlc_infer_roi_align(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const char *mode;
  int64_t oh, ow, sr;
  int hp;
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  const mlc_type *x = mlc_graph_arg(ci, 0), *r = mlc_graph_arg(ci, 1), *b = mlc_graph_arg(ci, 2);
  MLC_RETURN_IF_ERROR(need_float(ci, 0, "input"));
  MLC_RETURN_IF_ERROR(need_float(ci, 1, "rois"));
  if (!mlc_dtype_is_int(b->dtype) || b->dtype == MLC_DTYPE_BOOL)
    return ERR("batch_indices must be integers, they are %s", mlc_dtype_name(b->dtype));
  if (x->rank != 4) return ERR("input must be [N, C, H, W], it has rank %d", x->rank);
  if (r->rank != 2 || r->dims[1] != 4) return ERR("rois must be [num_rois, 4]");
  if (b->rank != 1 || b->dims[0] != r->dims[0]) return ERR("batch_indices must be [num_rois]");
  MLC_RETURN_IF_ERROR(mlc_graph_attr_choice(ci, "mode", "avg", roi_modes, &mode));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "output_height", 1, &oh));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "output_width", 1, &ow));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "sampling_ratio", 0, &sr));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "half_pixel", 1, &hp));
  const mlc_attr *sc = mlc_attrs_find(ci->attrs, ci->nattrs, "spatial_scale");
  if (sc && sc->kind != MLC_ATTR_FLOAT) return ERR("attribute spatial_scale must be a float");
  if (oh < 1 || ow < 1) return ERR("output_height and output_width must be >= 1");
  if (sr < 0) return ERR("sampling_ratio must be >= 0");
  int64_t dims[4] = {r->dims[0], x->dims[1], oh, ow};
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, 4);
}

/* ---- det, max_unpool --------------------------------------------------- */

/* y = det(x [.., M, M]): [..]. */
mlc_status mlc_infer_det(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  MLC_RETURN_IF_ERROR(need_float(ci, 0, "input"));
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int r = x->rank;
  if (r < 2) return ERR("input must have rank >= 2, it has %d", r);
  if (x->dims[r - 1] != x->dims[r - 2]) return ERR("the matrices must be square");
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, x->dims, r - 2);
}

/* y = max_unpool(x, indices[, p]): attr shape. */
mlc_status mlc_infer_max_unpool(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  const mlc_type *x = mlc_graph_arg(ci, 0), *ix = mlc_graph_arg(ci, 1);
  int r = x->rank, k = r - 2;
  const int64_t *shape;
  if (!mlc_graph_is_num(x->dtype)) return ERR("input of dtype %s (numeric types only)", mlc_dtype_name(x->dtype));
  if (r < 3) return ERR("input must be [N, C, D1, ...], it has rank %d", r);
  if (ix->dtype != MLC_DTYPE_I64) return ERR("indices must be int64, they are %s", mlc_dtype_name(ix->dtype));
  if (!mlc_type_equal(&(mlc_type){x->dtype, ix->rank, ix->dims}, x)) return ERR("indices must have the input's shape");
  if (ci->nargs == 3) MLC_RETURN_IF_ERROR(need_params(ci, 2, 0));
  static const char *const names[] = {"kernel", "strides", "pads"};
  for (int i = 0; i < 3; i++) {
    const mlc_attr *a = mlc_attrs_find(ci->attrs, ci->nattrs, names[i]);
    int want = i == 2 ? 2 * k : k;
    if (!a || a->kind != MLC_ATTR_INTS || a->n != want || (want > 0 && !a->ints))
      return ERR("attribute %s must be a list of %d ints", names[i], want);
    for (int j = 0; j < want; j++)
      if (a->ints[j] < (i == 2 ? 0 : 1)) return ERR("%s[%d] = %lld is out of range", names[i], j, LL(a->ints[j]));
  }
  MLC_RETURN_IF_ERROR(attr_shape(ci, r, &shape));
  int sym = 0;
  for (int d = 0; d < r; d++) sym |= MLC_DIM_IS_SYM(shape[d]) && shape[d] != x->dims[d];
  if (sym && ci->nargs != 3) return ERR("symbolic output dims need define_dims' output as argument 2");
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, shape, r);
}

/* ---- nms_count, non_max_suppression --------------------------------------- */

/* nms_count: int64 [1]; non_max_suppression: int64 [attr shape[0], 3]. */
mlc_status mlc_infer_nms(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  int cpb;
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  const mlc_type *bx = mlc_graph_arg(ci, 0), *sc = mlc_graph_arg(ci, 1);
  MLC_RETURN_IF_ERROR(need_float(ci, 0, "boxes"));
  MLC_RETURN_IF_ERROR(need_float(ci, 1, "scores"));
  if (bx->dtype != MLC_DTYPE_F32 && bx->dtype != MLC_DTYPE_F64) return UNIMPL("boxes of dtype %s", mlc_dtype_name(bx->dtype));
  if (sc->dtype != bx->dtype) return ERR("scores and boxes differ in dtype");
  if (bx->rank != 3 || bx->dims[2] != 4) return ERR("boxes must be [num_batches, num_boxes, 4]");
  if (sc->rank != 3 || sc->dims[0] != bx->dims[0] || sc->dims[2] != bx->dims[1])
    return ERR("scores must be [num_batches, num_classes, num_boxes] for boxes of the same batches and boxes");
  MLC_RETURN_IF_ERROR(need_scalar(ci, 2, "max_output_boxes_per_class", 1));
  MLC_RETURN_IF_ERROR(need_scalar(ci, 3, "iou_threshold", 0));
  MLC_RETURN_IF_ERROR(need_scalar(ci, 4, "score_threshold", 0));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "center_point_box", 0, &cpb));
  int64_t one = 1;
  if (ci->op == MLC_OP_NMS_COUNT) return mlc_graph_ret1(ci, outs, nouts, MLC_DTYPE_I64, &one, 1);
  const mlc_attr *s = mlc_attrs_find(ci->attrs, ci->nattrs, "shape");
  if (!s || s->kind != MLC_ATTR_INTS || s->n != 2 || !s->ints || s->ints[1] != 3)
    return ERR("attribute shape must be [count, 3]");
  if (MLC_DIM_IS_SYM(s->ints[0]) && MLC_DIM_SYM_ID(s->ints[0]) >= ci->mod->nsyms) return ERR("shape[0] is an unknown symbol");
  MLC_RETURN_IF_ERROR(need_params(ci, 5, 0));
  return mlc_graph_ret1(ci, outs, nouts, MLC_DTYPE_I64, s->ints, 2);
}

/* ---- unique_count, unique -------------------------------------------------- */

/* unique_count: int64 [1]; unique: y [A, U, B], indices [U], inverse [N],
** counts [U]. */
mlc_status mlc_infer_unique(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  int sorted;
  int64_t u;
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  const mlc_type *x = mlc_graph_arg(ci, 0);
  if (!mlc_graph_is_num(x->dtype)) return ERR("input of dtype %s (numeric types only)", mlc_dtype_name(x->dtype));
  if (x->rank != 3) return ERR("input must be [A, N, B], it has rank %d", x->rank);
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "sorted", 1, &sorted));
  int64_t one = 1;
  if (ci->op == MLC_OP_UNIQUE_COUNT) return mlc_graph_ret1(ci, outs, nouts, MLC_DTYPE_I64, &one, 1);
  MLC_RETURN_IF_ERROR(need_params(ci, 1, 0));
  MLC_RETURN_IF_ERROR(attr_dim(ci, "count", 0, MISSING, &u));
  if (u >= 0 && x->dims[1] >= 0 && u > x->dims[1]) return ERR("count %lld exceeds the %lld slices", LL(u), LL(x->dims[1]));
  int64_t yd[3] = {x->dims[0], u, x->dims[2]};
  mlc_dtype dts[4] = {x->dtype, MLC_DTYPE_I64, MLC_DTYPE_I64, MLC_DTYPE_I64};
  const int64_t *shp[4] = {yd, &u, &x->dims[1], &u};
  int ranks[4] = {3, 1, 1, 1};
  for (int i = 0; i < 4; i++) {
    int64_t *d = mlc_module_dims(ci->mod, shp[i], ranks[i]);
    if (!d) return mlc_oom();
    outs[i].dtype = dts[i];
    outs[i].rank = ranks[i];
    outs[i].dims = d;
  }
  *nouts = 4;
  return NULL;
}
