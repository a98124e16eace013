/*
** misc.c: converters of ONNX's other math, loss and normalization ops:
** NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, Trilu, CumSum,
** Hardmax, OneHot, EyeLike, TopK, Einsum, BatchNormalization in training
** mode, LRN, MeanVarianceNormalization and ReverseSequence.
**
** Most decompose into existing graph ops, exactly:
**   - the losses pick input[n, target[n, d], d] by comparing target with
**     an iota constant along the class axis, selecting with where and
**     summing over that axis (one element kept, the others zeros, so the
**     sum is that element; an out-of-range target picks nothing).  Hardmax
**     (argmax == iota) and OneHot (index == iota) are the same comparison.
**   - LRN's windowed sum of squares over channels is a convolution of the
**     squares with a kernel of ones (products by 1 are exact).
**   - MeanVarianceNormalization follows the ONNX function body.
** Trilu, CumSum, TopK, Einsum and ReverseSequence have their own graph ops.
** EyeLike becomes a constant.
*/
#include <string.h>

#include "frontend/frontend_int.h"

#define MAX_RANK 64

#define ERR(code, ...) mlc_fe_error(cx, (code), __VA_ARGS__)

/* A constant of integer dtype |dt| and shape [n, 1 x ones] holding 0..n-1
** (an iota along its first axis). */
static mlc_status iota(mlc_fe_ctx *cx, mlc_dtype dt, int64_t n, int ones, mlc_value **out) {
  int64_t dims[MAX_RANK];
  if (MLC_DIM_IS_SYM(n)) return ERR(MLC_UNIMPLEMENTED, "a symbolic extent along the indexed axis is not supported");
  if (ones + 1 > MAX_RANK) return ERR(MLC_UNIMPLEMENTED, "rank %d is too large", ones + 1);
  dims[0] = n;
  for (int i = 0; i < ones; i++) dims[1 + i] = 1;
  size_t nbytes = (size_t)n * mlc_dtype_size(dt);
  mlc_type t = {dt, ones + 1, dims};
  if (!nbytes) return mlc_module_add_const(cx->mod, NULL, &t, NULL, 0, out);
  void *data = mlc_const_alloc(cx->mod, nbytes);
  if (!data) return mlc_oom();
  for (int64_t i = 0; i < n; i++) mlc_fe_elem_set(dt, data, i, (double)i);
  return mlc_module_adopt_const(cx->mod, NULL, &t, data, nbytes, out);
}

/* |x| with a dim of extent 1 inserted at |axis|. */
static mlc_status unsqueeze(mlc_fe_ctx *cx, mlc_value *x, int axis, mlc_value **out) {
  int64_t dims[MAX_RANK];
  int r = x->type.rank;
  if (r + 1 > MAX_RANK) return ERR(MLC_UNIMPLEMENTED, "rank %d is too large", r + 1);
  for (int i = 0, j = 0; i <= r; i++) dims[i] = i == axis ? 1 : x->type.dims[j++];
  return mlc_fe_reshape(cx, x, dims, r + 1, out);
}

/* A reduction |op| of |x| over |axes| with |keepdims|. */
static mlc_status reduce(mlc_fe_ctx *cx, mlc_op op, mlc_value *x, const int64_t *axes, int naxes,
                         int keepdims, mlc_value **out) {
  mlc_attr a[2] = {mlc_attr_ints("axes", axes, naxes), mlc_attr_int("keepdims", keepdims)};
  return mlc_fe_emit(cx, op, &x, 1, a, 2, out);
}

/* sum over one axis, dropping it. */
static mlc_status sum_axis(mlc_fe_ctx *cx, mlc_value *x, int axis, mlc_value **out) {
  int64_t a = axis;
  return reduce(cx, MLC_OP_SUM, x, &a, 1, 0, out);
}

/* where(cond, a, b). */
static mlc_status where(mlc_fe_ctx *cx, mlc_value *cond, mlc_value *a, mlc_value *b, mlc_value **out) {
  mlc_value *args[3] = {cond, a, b};
  return mlc_fe_emit(cx, MLC_OP_WHERE, args, 3, NULL, 0, out);
}

static mlc_status cast(mlc_fe_ctx *cx, mlc_value *x, mlc_dtype dt, mlc_value **out) {
  if (x->type.dtype == dt) {
    *out = x;
    return NULL;
  }
  mlc_attr a = mlc_attr_int("dtype", (int64_t)dt);
  return mlc_fe_emit(cx, MLC_OP_CAST, &x, 1, &a, 1, out);
}

/* The one-element numeric |v| as an int64 [1] vector (floats truncated). */
static mlc_status as_i64_vec(mlc_fe_ctx *cx, mlc_value *v, const char *what, mlc_value **out) {
  int64_t one = 1;
  if (!mlc_dtype_is_int(v->type.dtype) && !mlc_dtype_is_float(v->type.dtype))
    return ERR(MLC_INVALID_ARGUMENT, "%s must be numeric, got %s", what, mlc_dtype_name(v->type.dtype));
  if (v->type.rank > 1 || mlc_type_numel(&v->type) != 1)
    return ERR(MLC_INVALID_ARGUMENT, "%s must have one element, got %s", what, mlc_fe_shape_str(cx, &v->type));
  MLC_RETURN_IF_ERROR(cast(cx, v, MLC_DTYPE_I64, &v));
  return mlc_fe_reshape(cx, v, &one, 1, out);
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss -------------------- */

static int valid_reduction(const char *r) {
  return strcmp(r, "none") == 0 || strcmp(r, "sum") == 0 || strcmp(r, "mean") == 0;
}

MLC_FE_CHECK(loss) {
  (void)opset;
  const char *r = mlc_fe_attr_str(n, "reduction", "mean");
  if (!valid_reduction(r)) mlc_fe_problem(p, "reduction \"%s\" is not none, sum or mean", r);
}

/*
** The loss of log-probabilities |x| [N, C, d...] at integer |target|
** [N, d...] with optional |weight| [C] (NULL when absent):
**   loss[n, d] = -x[n, target[n, d], d] * w[n, d],
**   w[n, d] = weight[target[n, d]] (take; 1 without weight), 0 where target
**   is ignore_index,
** then reduced: none, sum, or mean = sum(loss) / sum(w) (the plain mean
** without weight and ignore_index).
*/
static mlc_status nll(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, mlc_value *target,
                      mlc_value *weight, mlc_value **out) {
  int r = x->type.rank;
  mlc_dtype dt = x->type.dtype, tt = target->type.dtype;
  const char *red = mlc_fe_attr_str(n, "reduction", "mean");
  int has_ii = mlc_fe_attr(n, "ignore_index") != NULL;
  if (r < 2) return ERR(MLC_INVALID_ARGUMENT, "input must have rank >= 2 (N, C, ...), got %s", mlc_fe_shape_str(cx, &x->type));
  if (!mlc_dtype_is_float(dt)) return ERR(MLC_INVALID_ARGUMENT, "input must be floating point, got %s", mlc_dtype_name(dt));
  if (!mlc_dtype_is_int(tt)) return ERR(MLC_INVALID_ARGUMENT, "target must be an integer tensor, got %s", mlc_dtype_name(tt));
  int bad = target->type.rank != r - 1;
  for (int i = 0; !bad && i < r - 1; i++) bad = target->type.dims[i] != x->type.dims[i ? i + 1 : 0];
  if (bad)
    return ERR(MLC_INVALID_ARGUMENT, "target %s must have the shape of input %s without axis 1",
               mlc_fe_shape_str(cx, &target->type), mlc_fe_shape_str(cx, &x->type));
  int64_t c = x->type.dims[1];
  if (weight && (weight->type.rank != 1 || weight->type.dims[0] != c || weight->type.dtype != dt))
    return ERR(MLC_INVALID_ARGUMENT, "weight %s %s must be [C] of the input's dtype",
               mlc_dtype_name(weight->type.dtype), mlc_fe_shape_str(cx, &weight->type));
  if (!valid_reduction(red)) return ERR(MLC_INVALID_ARGUMENT, "reduction \"%s\" is not none, sum or mean", red);
  mlc_value *zero, *one, *ign = NULL, *t = target, *io, *mask, *xt, *w = NULL, *loss;
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, dt, 0, &zero));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, dt, 1, &one));
  if (has_ii) { /* ignored targets become C: they select nothing */
    mlc_value *ii, *cc;
    MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, tt, (double)mlc_fe_attr_int(n, "ignore_index", 0), &ii));
    MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, tt, (double)c, &cc));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_EQUAL, target, ii, &ign));
    MLC_RETURN_IF_ERROR(where(cx, ign, cc, target, &t));
  }
  MLC_RETURN_IF_ERROR(unsqueeze(cx, t, 1, &t));
  MLC_RETURN_IF_ERROR(iota(cx, tt, c, r - 2, &io));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_EQUAL, t, io, &mask)); /* [N, C, d...] */
  MLC_RETURN_IF_ERROR(where(cx, mask, x, zero, &xt));
  MLC_RETURN_IF_ERROR(sum_axis(cx, xt, 1, &xt));
  if (weight) { /* ignored targets read weight[0] (then zeroed): take rejects out-of-range indices */
    mlc_attr a0 = mlc_attr_int("axis", 0);
    mlc_value *args[2] = {weight, target}, *z;
    if (ign) {
      MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, tt, 0, &z));
      MLC_RETURN_IF_ERROR(where(cx, ign, z, target, &args[1]));
    }
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_GATHER, args, 2, &a0, 1, &w));
    if (ign) MLC_RETURN_IF_ERROR(where(cx, ign, zero, w, &w));
  } else if (ign) {
    MLC_RETURN_IF_ERROR(where(cx, ign, zero, one, &w));
  }
  if (w) MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, xt, w, &xt));
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_NEG, xt, &loss));
  if (strcmp(red, "none") == 0) {
    *out = loss;
    return NULL;
  }
  if (strcmp(red, "sum") == 0 || w) MLC_RETURN_IF_ERROR(reduce(cx, MLC_OP_SUM, loss, NULL, 0, 0, &loss));
  if (strcmp(red, "sum") == 0) {
    *out = loss;
    return NULL;
  }
  if (!w) return reduce(cx, MLC_OP_MEAN, loss, NULL, 0, 0, out);
  MLC_RETURN_IF_ERROR(reduce(cx, MLC_OP_SUM, w, NULL, 0, 0, &w));
  return mlc_fe_binary(cx, MLC_OP_DIV, loss, w, out);
}

/* ONNX NegativeLogLikelihoodLoss-12,13: loss of log-probabilities input
** [N, C, d...] at target [N, d...], optional weight [C], ignore_index,
** reduction none|sum|mean (default mean). */
MLC_FE_CVT(nll_loss) {
  (void)nout;
  return nll(cx, n, in[0], in[1], nin > 2 ? in[2] : NULL, &out[0]);
}

/* ONNX SoftmaxCrossEntropyLoss-12,13: NegativeLogLikelihoodLoss of
** log_softmax(scores, axis 1); the optional second output is that
** log_softmax. */
MLC_FE_CVT(sce_loss) {
  mlc_value *x = in[0], *lp;
  if (x->type.rank < 2)
    return ERR(MLC_INVALID_ARGUMENT, "scores must have rank >= 2 (N, C, ...), got %s", mlc_fe_shape_str(cx, &x->type));
  mlc_attr a = mlc_attr_int("axis", 1);
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_LOG_SOFTMAX, &x, 1, &a, 1, &lp));
  MLC_RETURN_IF_ERROR(nll(cx, n, lp, in[1], nin > 2 ? in[2] : NULL, &out[0]));
  if (nout > 1) out[1] = lp;
  return NULL;
}

/* ---- Trilu, CumSum ------------------------------------------------------ */

/* ONNX Trilu-14: x (rank >= 2) with the lower (upper=1, default) or upper
** triangle below/above diagonal k zeroed; k from the optional input (a
** constant becomes an attribute, a run-time one stays an argument). */
MLC_FE_CVT(trilu) {
  (void)nout;
  mlc_value *x = in[0], *k = nin > 1 ? in[1] : NULL;
  if (x->type.rank < 2)
    return ERR(MLC_INVALID_ARGUMENT, "input must have rank >= 2, got %s", mlc_fe_shape_str(cx, &x->type));
  mlc_attr a[2] = {mlc_attr_int("upper", mlc_fe_attr_int(n, "upper", 1) != 0), mlc_attr_int("k", 0)};
  if (k && mlc_fe_const(cx, k)) {
    int64_t *v;
    int cnt;
    MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, k, "k", &v, &cnt));
    if (cnt != 1) return ERR(MLC_INVALID_ARGUMENT, "k must have one element, got %d", cnt);
    a[1].i = v[0];
    k = NULL;
  }
  mlc_value *args[2] = {x, k};
  return mlc_fe_emit(cx, MLC_OP_TRILU, args, k ? 2 : 1, a, 2, &out[0]);
}

/* ONNX CumSum-11,14: cumulative sum along the axis input (negative counts
** from the back), exclusive and reverse; a run-time axis is read by the
** kernel. */
MLC_FE_CVT(cumsum) {
  (void)nin, (void)nout;
  mlc_value *x = in[0], *axis = in[1];
  if (x->type.rank < 1) return ERR(MLC_INVALID_ARGUMENT, "input must have rank >= 1");
  mlc_attr a[3] = {mlc_attr_int("exclusive", mlc_fe_attr_int(n, "exclusive", 0) != 0),
                   mlc_attr_int("reverse", mlc_fe_attr_int(n, "reverse", 0) != 0), mlc_attr_int("axis", 0)};
  if (mlc_fe_const(cx, axis)) {
    int64_t *v;
    int cnt, ax;
    MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, axis, "axis", &v, &cnt));
    if (cnt != 1) return ERR(MLC_INVALID_ARGUMENT, "axis must have one element, got %d", cnt);
    MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, v[0], x->type.rank, "axis", &ax));
    a[2].i = ax;
    return mlc_fe_emit(cx, MLC_OP_CUMSUM, &x, 1, a, 3, &out[0]);
  }
  mlc_value *args[2] = {x, axis};
  return mlc_fe_emit(cx, MLC_OP_CUMSUM, args, 2, a, 2, &out[0]);
}

/* ---- Hardmax ------------------------------------------------------------ */

/* 1 at the first maximum of |x| along |axis|, 0 elsewhere:
** cast(argmax(x, axis, keepdims) == iota along axis). */
static mlc_status hardmax(mlc_fe_ctx *cx, mlc_value *x, int axis, mlc_value **out) {
  int r = x->type.rank;
  mlc_value *am, *io, *eq;
  mlc_attr a[2] = {mlc_attr_int("axis", axis), mlc_attr_int("keepdims", 1)};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_ARGMAX, &x, 1, a, 2, &am));
  MLC_RETURN_IF_ERROR(iota(cx, MLC_DTYPE_I64, x->type.dims[axis], r - 1 - axis, &io));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_EQUAL, am, io, &eq));
  return cast(cx, eq, x->type.dtype, out);
}

/* ONNX Hardmax-1,11: the input coerced to 2-D at axis (default 1), hardmax
** along the second dim, reshaped back. */
MLC_FE_CVT(hardmax_v1) {
  (void)nin, (void)nout;
  mlc_value *x = in[0], *y;
  int r = x->type.rank;
  int64_t axis = mlc_fe_attr_int(n, "axis", 1), d[2];
  if (axis < 0) axis += r;
  if (r < 1 || axis < 0 || axis > r)
    return ERR(MLC_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)mlc_fe_attr_int(n, "axis", 1), r);
  MLC_RETURN_IF_ERROR(mlc_fe_dim_product(cx, x->type.dims, (int)axis, "the outer dim", &d[0]));
  MLC_RETURN_IF_ERROR(mlc_fe_dim_product(cx, x->type.dims + axis, r - (int)axis, "the inner dim", &d[1]));
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, x, d, 2, &y));
  MLC_RETURN_IF_ERROR(hardmax(cx, y, 1, &y));
  return mlc_fe_reshape(cx, y, x->type.dims, r, &out[0]);
}

/* ONNX Hardmax-13: 1 at the first maximum along axis (default -1). */
MLC_FE_CVT(hardmax_v13) {
  (void)nin, (void)nout;
  int axis;
  if (in[0]->type.rank < 1) return ERR(MLC_INVALID_ARGUMENT, "input must have rank >= 1");
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "axis", -1), in[0]->type.rank, "axis", &axis));
  return hardmax(cx, in[0], axis, &out[0]);
}

/* ---- OneHot, EyeLike ---------------------------------------------------- */

/*
** ONNX OneHot-9,11: y has the indices' shape with depth inserted at axis
** (default -1); y = values[1] where the index (cast to int64; negative ones
** + depth) equals the position along axis, else values[0].  A depth
** computed at run time gives a run-time extent (an iota from dyn_range).
*/
MLC_FE_CVT(one_hot) {
  (void)nin, (void)nout;
  mlc_value *idx = in[0], *vals = in[2], *io, *mask, *k, *on, *off, *zero, *dep;
  int r = idx->type.rank, axis;
  if (vals->type.rank != 1 || vals->type.dims[0] != 2)
    return ERR(MLC_INVALID_ARGUMENT, "values must be [off_value, on_value], got %s", mlc_fe_shape_str(cx, &vals->type));
  if (!mlc_dtype_is_float(idx->type.dtype) && !mlc_dtype_is_int(idx->type.dtype))
    return ERR(MLC_INVALID_ARGUMENT, "indices must be numeric, got %s", mlc_dtype_name(idx->type.dtype));
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "axis", -1), r + 1, "axis", &axis));
  MLC_RETURN_IF_ERROR(cast(cx, idx, MLC_DTYPE_I64, &idx));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_I64, 0, &zero));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_I64, 1, &k));
  if (mlc_fe_const(cx, in[1])) {
    double depth_v;
    MLC_RETURN_IF_ERROR(mlc_fe_const_scalar(cx, in[1], "depth", &depth_v));
    if (!(depth_v >= 1) || depth_v > (double)(1 << 26))
      return ERR(MLC_INVALID_ARGUMENT, "depth %g must be a positive count", depth_v);
    MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_I64, (double)(int64_t)depth_v, &dep));
    MLC_RETURN_IF_ERROR(iota(cx, MLC_DTYPE_I64, (int64_t)depth_v, r - axis, &io));
  } else { /* an iota of run-time length: range(0, depth, 1), then [depth, 1...] */
    int64_t dims[MAX_RANK];
    MLC_RETURN_IF_ERROR(as_i64_vec(cx, in[1], "depth", &dep));
    MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, dep, NULL, 0, &dep));
    MLC_RETURN_IF_ERROR(mlc_fe_dyn_range(cx, zero, dep, k, &io));
    if (r - axis + 1 > MAX_RANK) return ERR(MLC_UNIMPLEMENTED, "rank %d is too large", r + 1);
    dims[0] = io->type.dims[0];
    for (int i = 1; i <= r - axis; i++) dims[i] = 1;
    MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, io, dims, r - axis + 1, &io));
  }
  mlc_value *neg, *wrapped;
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_LESS, idx, zero, &neg));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, idx, dep, &wrapped));
  MLC_RETURN_IF_ERROR(where(cx, neg, wrapped, idx, &idx));
  MLC_RETURN_IF_ERROR(unsqueeze(cx, idx, axis, &idx));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_EQUAL, idx, io, &mask));
  mlc_attr a0 = mlc_attr_int("axis", 0);
  mlc_value *args[2] = {vals, k};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_GATHER, args, 2, &a0, 1, &on));
  args[1] = zero;
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_GATHER, args, 2, &a0, 1, &off));
  return where(cx, mask, on, off, &out[0]);
}

MLC_FE_CHECK(eye_like) {
  (void)opset;
  const mlc_onnx_attr *a = mlc_fe_attr(n, "dtype");
  if (a) {
    mlc_dtype dt = mlc_onnx_dtype((int)a->i);
    if (dt == MLC_DTYPE_INVALID || dt == MLC_DTYPE_STRING)
      mlc_fe_problem(p, "dtype %lld not supported", (long long)a->i);
  }
}

/* ONNX EyeLike-9: a constant of the input's (static, 2-D) shape with ones on
** diagonal k, in attr dtype (default: the input's). */
MLC_FE_CVT(eye_like) {
  (void)nin, (void)nout;
  const mlc_type *xt = &in[0]->type;
  mlc_dtype dt = xt->dtype;
  const mlc_onnx_attr *da = mlc_fe_attr(n, "dtype");
  if (da) dt = mlc_onnx_dtype((int)da->i);
  if (dt == MLC_DTYPE_INVALID || dt == MLC_DTYPE_STRING)
    return ERR(MLC_UNIMPLEMENTED, "output dtype not supported");
  if (xt->rank != 2) return ERR(MLC_INVALID_ARGUMENT, "input must be 2-D, got %s", mlc_fe_shape_str(cx, xt));
  if (!mlc_type_is_static(xt))
    return ERR(MLC_UNIMPLEMENTED, "input shape %s must be static", mlc_fe_shape_str(cx, xt));
  int64_t rows = xt->dims[0], cols = xt->dims[1], k = mlc_fe_attr_int(n, "k", 0);
  if (rows > 0 && cols > (1 << 28) / rows) return ERR(MLC_UNIMPLEMENTED, "output %s is too large", mlc_fe_shape_str(cx, xt));
  size_t nbytes = (size_t)(rows * cols) * mlc_dtype_size(dt);
  mlc_type t = {dt, 2, xt->dims};
  if (!nbytes) return mlc_module_add_const(cx->mod, NULL, &t, NULL, 0, &out[0]);
  void *data = mlc_const_alloc(cx->mod, nbytes);
  if (!data) return mlc_oom();
  memset(data, 0, nbytes);
  for (int64_t i = 0; i < rows && k < cols && k > -rows; i++) /* then i + k does not overflow */
    if (i + k >= 0 && i + k < cols) mlc_fe_elem_set(dt, data, i * cols + i + k, 1);
  return mlc_module_adopt_const(cx->mod, NULL, &t, data, nbytes, &out[0]);
}

/* ---- TopK --------------------------------------------------------------- */

/*
** ONNX TopK-1,10,11: the k largest (largest=1, default) or smallest
** elements along axis (default -1) and their int64 indices, sorted (ties:
** the lower index first); k is attr k (1) or the input K (10+).  A K
** computed at run time defines a symbol (define_dims) for the output
** extent.
*/
MLC_FE_CVT(topk) {
  mlc_value *x = in[0], *args[2] = {x, NULL};
  int r = x->type.rank, axis;
  int64_t k;
  if (r < 1) return ERR(MLC_INVALID_ARGUMENT, "input must have rank >= 1");
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "axis", -1), r, "axis", &axis));
  int64_t d = x->type.dims[axis];
  if (nin > 1 && in[1] && !mlc_fe_const(cx, in[1])) {
    mlc_value *p;
    MLC_RETURN_IF_ERROR(as_i64_vec(cx, in[1], "K", &p));
    MLC_RETURN_IF_ERROR(mlc_module_fresh_sym(cx->mod, &k));
    mlc_attr da[2] = {mlc_attr_ints("dims", &k, 1), mlc_attr_int("offset", 0)};
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_DEFINE_DIMS, &p, 1, da, 2, &args[1]));
  } else if (nin > 1 && in[1]) {
    int64_t *v;
    int cnt;
    MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[1], "K", &v, &cnt));
    if (cnt != 1) return ERR(MLC_INVALID_ARGUMENT, "K must have one element, got %d", cnt);
    k = v[0];
  } else {
    if (!mlc_fe_attr(n, "k")) return ERR(MLC_INVALID_ARGUMENT, "attribute k is required");
    k = mlc_fe_attr_int(n, "k", 0);
  }
  if (!args[1] && (k < 0 || (!MLC_DIM_IS_SYM(d) && k > d)))
    return ERR(MLC_INVALID_ARGUMENT, "k = %lld is out of range for axis %d of %s", (long long)k, axis,
               mlc_fe_shape_str(cx, &x->type));
  mlc_attr a[4] = {mlc_attr_int("k", k), mlc_attr_int("axis", axis),
                   mlc_attr_int("largest", mlc_fe_attr_int(n, "largest", 1) != 0), mlc_attr_int("sorted", 1)};
  mlc_value *outs[MLC_MAX_OUTS];
  int no;
  MLC_RETURN_IF_ERROR(mlc_graph_emit(cx->fn, MLC_OP_TOPK, args, args[1] ? 2 : 1, a, 4, &cx->origin, outs, &no));
  out[0] = outs[0];
  if (nout > 1) out[1] = outs[1];
  return NULL;
}

/* ---- Einsum ------------------------------------------------------------- */

static int is_label(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }

/*
** ONNX Einsum-12: the equation normalized into the explicit letters-only
** form the graph op takes: spaces dropped, each "..." replaced by letters
** the equation does not use (one per broadcast dim, right-aligned across
** operands), and an implicit output made explicit (the ellipsis dims, then
** the labels used exactly once, in alphabetical order).
*/
MLC_FE_CVT(einsum) {
  (void)nout;
  const char *eq = mlc_fe_attr_str(n, "equation", NULL);
  if (!eq) return ERR(MLC_INVALID_ARGUMENT, "attribute equation is required");
  size_t len = strlen(eq);
  if (len > 4096) return ERR(MLC_UNIMPLEMENTED, "equation is too long");
  char s[4100], ell[64], outbuf[8192];
  size_t m = 0;
  for (size_t i = 0; i < len; i++)
    if (eq[i] != ' ') s[m++] = eq[i];
  s[m] = 0;
  int count[128] = {0}, nell = 0;
  char *arrow = strstr(s, "->");
  const char *lhs_end = arrow ? arrow : s + m;
  /* pass 1: per operand, count labels and find its ellipsis */
  int op = 0, nl = 0, has_ell = 0;
  int ell_dims[64];
  for (const char *p = s;; p++) {
    if (p == lhs_end || *p == ',') {
      if (op >= nin || op >= 64) return ERR(MLC_INVALID_ARGUMENT, "equation \"%s\" has more terms than the %d inputs", eq, nin);
      int r = in[op]->type.rank, e = r - nl;
      if (e < 0 || (!has_ell && e != 0))
        return ERR(MLC_INVALID_ARGUMENT, "equation \"%s\": term %d has %d labels for input rank %d", eq, op, nl, r);
      ell_dims[op] = e;
      if (e > nell) nell = e;
      op++, nl = 0, has_ell = 0;
      if (p == lhs_end) break;
    } else if (p[0] == '.' && p[1] == '.' && p[2] == '.' && !has_ell) {
      has_ell = 1;
      p += 2;
    } else if (is_label(*p)) {
      nl++;
      count[(unsigned char)*p]++;
    } else {
      return ERR(MLC_INVALID_ARGUMENT, "equation \"%s\": unexpected character '%c'", eq, *p);
    }
  }
  if (op != nin) return ERR(MLC_INVALID_ARGUMENT, "equation \"%s\" has %d terms for %d inputs", eq, op, nin);
  if (arrow)
    for (const char *p = arrow + 2; *p; p++)
      if (is_label(*p)) count[(unsigned char)*p] += 0x10000; /* used on the right: never an ellipsis letter */
  /* letters for the ellipsis dims */
  int ne = 0;
  for (int ch = 'A'; ch <= 'z' && ne < nell; ch++)
    if (is_label((char)ch) && !count[ch]) ell[ne++] = (char)ch;
  if (ne < nell) return ERR(MLC_UNIMPLEMENTED, "equation \"%s\": too many labels", eq);
  /* pass 2: write the normalized equation */
  size_t o = 0;
  op = 0;
  for (const char *p = s; p <= lhs_end && o + 80 < sizeof outbuf; p++) {
    if (p == lhs_end) break;
    if (*p == ',') {
      outbuf[o++] = ',';
      op++;
    } else if (*p == '.') {
      for (int i = nell - ell_dims[op]; i < nell; i++) outbuf[o++] = ell[i];
      p += 2;
    } else {
      outbuf[o++] = *p;
    }
  }
  outbuf[o++] = '-';
  outbuf[o++] = '>';
  if (arrow) {
    for (const char *p = arrow + 2; *p && o + 80 < sizeof outbuf; p++) {
      if (*p == '.' && p[1] == '.' && p[2] == '.') {
        for (int i = 0; i < nell; i++) outbuf[o++] = ell[i];
        p += 2;
      } else if (is_label(*p)) {
        outbuf[o++] = *p;
      } else {
        return ERR(MLC_INVALID_ARGUMENT, "equation \"%s\": unexpected character '%c' in the output", eq, *p);
      }
    }
  } else {
    for (int i = 0; i < nell; i++) outbuf[o++] = ell[i];
    for (int ch = 'A'; ch <= 'z'; ch++)
      if (is_label((char)ch) && count[ch] == 1) outbuf[o++] = (char)ch;
  }
  outbuf[o] = 0;
  mlc_attr a = mlc_attr_str("equation", outbuf);
  return mlc_fe_emit(cx, MLC_OP_EINSUM, in, nin, &a, 1, &out[0]);
}

/* ---- BatchNormalization (training mode) ----------------------------------- */

MLC_FE_CHECK(batch_norm_v14) {
  (void)opset;
  if (mlc_fe_attr_int(n, "training_mode", 0) != 0) return;
  for (int i = 1; i < n->noutputs; i++)
    if (mlc_fe_output_used(n, i)) {
      mlc_fe_problem(p, "outputs running_mean and running_var need training_mode=1");
      break;
    }
}

/*
** ONNX BatchNormalization-14,15.  Inference (training_mode=0): as in nn.c.
** Training: the batch statistics over every axis but 1,
**   mean = mean(X), var = mean((X - mean)^2) (population variance),
**   Y = (X - mean) * scale / sqrt(var + epsilon) + B,
**   running_mean = input_mean * momentum + mean * (1 - momentum),
**   running_var = input_var * momentum + var * (1 - momentum).
*/
MLC_FE_CVT(batch_norm_v14) {
  if (mlc_fe_attr_int(n, "training_mode", 0) == 0) return mlc_fe_cvt_batch_norm(cx, n, in, nin, out, nout);
  mlc_value *x = in[0], *scale = in[1], *bias = in[2], *imean = in[3], *ivar = in[4];
  int r = x->type.rank;
  if (r < 2 || r > MAX_RANK)
    return ERR(MLC_INVALID_ARGUMENT, "input must have rank >= 2 (N, C, ...), got %s", mlc_fe_shape_str(cx, &x->type));
  for (int i = 1; i < 5; i++)
    if (in[i]->type.rank != 1)
      return ERR(MLC_INVALID_ARGUMENT, "input %d must be 1-D (C), got %s", i, mlc_fe_shape_str(cx, &in[i]->type));
  int64_t axes[MAX_RANK], cd[MAX_RANK];
  int na = 0;
  for (int i = 0; i < r; i++)
    if (i != 1) axes[na++] = i;
  cd[0] = x->type.dims[1];
  for (int i = 1; i < r - 1; i++) cd[i] = 1;
  double eps = mlc_fe_attr_float(n, "epsilon", 1e-5), mom = mlc_fe_attr_float(n, "momentum", 0.9);
  mlc_dtype dt = x->type.dtype;
  mlc_value *mean, *mean_r, *d, *var, *e, *s, *y, *b;
  MLC_RETURN_IF_ERROR(reduce(cx, MLC_OP_MEAN, x, axes, na, 0, &mean));
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, mean, cd, r - 1, &mean_r));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, x, mean_r, &d));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, d, d, &var));
  MLC_RETURN_IF_ERROR(reduce(cx, MLC_OP_MEAN, var, axes, na, 0, &var));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, dt, eps, &e));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, var, e, &s));
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_SQRT, s, &s));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_DIV, scale, s, &s));
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, s, cd, r - 1, &s));
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, bias, cd, r - 1, &b));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, d, s, &y));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, y, b, &out[0]));
  mlc_value *stat[2] = {mean, var}, *run[2] = {imean, ivar};
  for (int i = 0; i < 2 && i + 1 < nout; i++) {
    if (!mlc_fe_output_used(n, i + 1)) continue;
    mlc_value *m1, *m2, *t1, *t2;
    MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, run[i]->type.dtype, mom, &m1));
    MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, dt, 1 - mom, &m2));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, run[i], m1, &t1));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, stat[i], m2, &t2));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, t1, t2, &out[i + 1]));
  }
  return NULL;
}

/* ---- LRN, MeanVarianceNormalization --------------------------------------- */

/*
** ONNX LRN-1,13: y = x / (bias + alpha / size * square_sum)^beta with
** square_sum[n, c, ...] the sum of x^2 over channels
** [c - floor((size-1)/2), c + ceil((size-1)/2)] within [0, C).  The window
** sum is a convolution of x^2 viewed as [N, 1, C, prod(spatial)] with a
** [1, 1, size, 1] kernel of ones, padded by those half-widths.
*/
MLC_FE_CVT(lrn) {
  (void)nin, (void)nout;
  mlc_value *x = in[0];
  const mlc_type *t = &x->type;
  int r = t->rank;
  int64_t size = mlc_fe_attr_int(n, "size", 0);
  if (!mlc_fe_attr(n, "size") || size < 1) return ERR(MLC_INVALID_ARGUMENT, "attribute size must be >= 1");
  if (r < 2) return ERR(MLC_INVALID_ARGUMENT, "input must have rank >= 2 (N, C, ...), got %s", mlc_fe_shape_str(cx, t));
  if (!mlc_dtype_is_float(t->dtype)) return ERR(MLC_INVALID_ARGUMENT, "input must be floating point");
  if (size > (1 << 20)) return ERR(MLC_UNIMPLEMENTED, "size %lld is too large", (long long)size);
  double alpha = mlc_fe_attr_float(n, "alpha", 1e-4), beta = mlc_fe_attr_float(n, "beta", 0.75);
  double bias = mlc_fe_attr_float(n, "bias", 1.0);
  int64_t v[4], lo = (size - 1) / 2, hi = size - 1 - lo;
  v[0] = t->dims[0];
  v[1] = 1;
  v[2] = t->dims[1];
  MLC_RETURN_IF_ERROR(mlc_fe_dim_product(cx, t->dims + 2, r - 2, "the spatial size", &v[3]));
  mlc_value *sq, *w, *y, *k;
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, x, x, &sq));
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, sq, v, 4, &sq));
  int64_t wd[4] = {1, 1, size, 1};
  mlc_type wt = {t->dtype, 4, wd};
  size_t nbytes = (size_t)size * mlc_dtype_size(t->dtype);
  void *data = mlc_const_alloc(cx->mod, nbytes);
  if (!data) return mlc_oom();
  for (int64_t i = 0; i < size; i++) mlc_fe_elem_set(t->dtype, data, i, 1);
  MLC_RETURN_IF_ERROR(mlc_module_adopt_const(cx->mod, NULL, &wt, data, nbytes, &w));
  int64_t strides[2] = {1, 1}, dil[2] = {1, 1}, pads[4] = {lo, 0, hi, 0};
  mlc_attr a[4] = {mlc_attr_ints("strides", strides, 2), mlc_attr_ints("pads", pads, 4),
                   mlc_attr_ints("dilations", dil, 2), mlc_attr_int("groups", 1)};
  mlc_value *args[2] = {sq, w};
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CONV, args, 2, a, 4, &sq));
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, sq, t->dims, r, &sq));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, t->dtype, alpha / (double)size, &k));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, sq, k, &y));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, t->dtype, bias, &k));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, y, k, &y));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, t->dtype, beta, &k));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_POW, y, k, &y));
  return mlc_fe_binary(cx, MLC_OP_DIV, x, y, &out[0]);
}

/*
** ONNX MeanVarianceNormalization-9,13, as its function body: over axes
** (default [0, 2, 3]), mean = mean(X), var = mean(X^2) - mean^2,
** Y = (X - mean) / (sqrt(var) + 1e-9).
*/
MLC_FE_CVT(mvn) {
  (void)nin, (void)nout;
  mlc_value *x = in[0];
  int r = x->type.rank;
  int64_t axes[MAX_RANK];
  const int64_t *av;
  int na = mlc_fe_attr_ints(n, "axes", &av);
  static const int64_t dflt[3] = {0, 2, 3};
  if (na < 0) av = dflt, na = 3;
  if (na > MAX_RANK) return ERR(MLC_UNIMPLEMENTED, "too many axes");
  for (int i = 0; i < na; i++) {
    int ax;
    MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, av[i], r, "axis", &ax));
    axes[i] = ax;
  }
  if (!mlc_dtype_is_float(x->type.dtype)) return ERR(MLC_INVALID_ARGUMENT, "input must be floating point");
  mlc_value *mean, *x2, *ex2, *m2, *var, *d, *e;
  MLC_RETURN_IF_ERROR(reduce(cx, MLC_OP_MEAN, x, axes, na, 1, &mean));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, x, x, &x2));
  MLC_RETURN_IF_ERROR(reduce(cx, MLC_OP_MEAN, x2, axes, na, 1, &ex2));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, mean, mean, &m2));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, ex2, m2, &var));
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_SQRT, var, &var));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, x->type.dtype, 1e-9, &e));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, var, e, &var));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, x, mean, &d));
  return mlc_fe_binary(cx, MLC_OP_DIV, d, var, &out[0]);
}

/* ---- ReverseSequence ---------------------------------------------------- */

/* ONNX ReverseSequence-10: for each batch b (along batch_axis, default 1)
** the first sequence_lens[b] steps along time_axis (default 0) reversed. */
MLC_FE_CVT(reverse_sequence) {
  (void)nin, (void)nout;
  mlc_value *x = in[0];
  int r = x->type.rank, ba, ta;
  if (r < 2) return ERR(MLC_INVALID_ARGUMENT, "input must have rank >= 2, got %s", mlc_fe_shape_str(cx, &x->type));
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "batch_axis", 1), r, "batch_axis", &ba));
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "time_axis", 0), r, "time_axis", &ta));
  mlc_attr a[2] = {mlc_attr_int("batch_axis", ba), mlc_attr_int("time_axis", ta)};
  return mlc_fe_emit(cx, MLC_OP_REVERSE_SEQUENCE, in, 2, a, 2, &out[0]);
}
