/*
** reduce.c: converters of ONNX's reduction category (ReduceMean, ReduceSum,
** ReduceMax, ReduceMin, ReduceProd, the composite reductions, ArgMax and
** ArgMin).
**
** Up to opset 17 (ReduceSum: 12) the axes are an attribute; from 18 (13)
** they are an optional input, and noop_with_empty_axes makes an empty list
** mean "no reduction" instead of "all axes"; axes computed at run time use
** dyn_reduce (dynamic.c).  The graph ops
** always get the full, sorted, non-negative list of axes.  ReduceSumSquare,
** ReduceL1, ReduceL2, ReduceLogSum and ReduceLogSumExp are composed of
** elementwise ops around sum (and max).
*/
#include "frontend/frontend_int.h"

/* Composite reductions, built from the graph's sum/mean/max/min/prod. */
typedef enum rkind {
  RK_PLAIN,      /* the op itself */
  RK_SUM_SQUARE, /* sum(x*x) */
  RK_L1,         /* sum(|x|) */
  RK_L2,         /* sqrt(sum(x*x)) */
  RK_LOG_SUM,    /* ln(sum(x)) */
  RK_LOG_SUM_EXP /* ln(sum(e^(x - m))) + m, m = max(x) */
} rkind;

/*
** Emits |op| (of |kind|) over |axes| (|naxes| < 0: absent).  Absent or empty
** axes mean all axes, unless |noop_empty| and the list is empty: then Y = X.
*/
static mlc_status reduce(mlc_fe_ctx *cx, mlc_value *x, mlc_op op, rkind kind, const int64_t *axes,
                         int naxes, int keepdims, int noop_empty, mlc_value **out) {
  int r = x->type.rank;
  if (naxes == 0 && noop_empty) {
    *out = x;
    return NULL;
  }
  int64_t *list = MLC_ARENA_ARRAY(cx->scratch, r > 0 ? (size_t)r : 1, int64_t);
  int64_t *kept = MLC_ARENA_ARRAY(cx->scratch, r > 0 ? (size_t)r : 1, int64_t);
  char *seen = MLC_ARENA_ARRAY(cx->scratch, r > 0 ? (size_t)r : 1, char);
  if (!list || !kept || !seen) return mlc_oom();
  if (naxes <= 0) {
    for (int i = 0; i < r; i++) seen[i] = 1;
  } else {
    for (int i = 0; i < naxes; i++) {
      int a;
      MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, axes[i], r, "axis", &a));
      if (seen[a])
        return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "axis %lld is repeated", (long long)axes[i]);
      seen[a] = 1;
    }
  }
  int k = 0, nk = 0;
  for (int i = 0; i < r; i++) {
    if (seen[i]) list[k++] = i;
    else kept[nk++] = x->type.dims[i];
  }
  keepdims = keepdims != 0;
  mlc_attr a[2] = {mlc_attr_ints("axes", list, k), mlc_attr_int("keepdims", keepdims)};
  mlc_value *t = x, *m = NULL;
  switch (kind) {
  case RK_PLAIN:
  case RK_LOG_SUM: break;
  case RK_SUM_SQUARE:
  case RK_L2: MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, x, x, &t)); break;
  case RK_L1: MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_ABS, x, &t)); break;
  case RK_LOG_SUM_EXP: {
    mlc_attr ak[2] = {a[0], mlc_attr_int("keepdims", 1)};
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_MAX, &x, 1, ak, 2, &m));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, x, m, &t));
    MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_EXP, t, &t));
    a[1] = mlc_attr_int("keepdims", 1);
    break;
  }
  }
  mlc_value *y;
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, op, &t, 1, a, 2, &y));
  switch (kind) {
  case RK_PLAIN:
  case RK_SUM_SQUARE:
  case RK_L1: break;
  case RK_L2: MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_SQRT, y, &y)); break;
  case RK_LOG_SUM: MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_LOG, y, &y)); break;
  case RK_LOG_SUM_EXP:
    MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_LOG, y, &y));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, y, m, &y));
    if (!keepdims) MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, y, kept, nk, &y));
    break;
  }
  *out = y;
  return NULL;
}

/* Axes from the attribute (opsets up to 17; ReduceSum up to 12). */
static mlc_status reduce_attr(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, mlc_op op,
                              rkind kind, mlc_value **out) {
  const int64_t *axes;
  int k = mlc_fe_attr_ints(n, "axes", &axes);
  return reduce(cx, x, op, kind, axes, k, (int)mlc_fe_attr_int(n, "keepdims", 1), 0, out);
}

/* Axes computed at run time: dyn_reduce between the composites' elementwise
** steps (ReduceLogSumExp is not supported in this form). */
static mlc_status reduce_dyn(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, mlc_value *axes,
                             mlc_op op, rkind kind, mlc_value **out) {
  const char *k = op == MLC_OP_MEAN ? "mean" : op == MLC_OP_MAX ? "max" : op == MLC_OP_MIN ? "min"
                : op == MLC_OP_PROD ? "prod" : "sum";
  mlc_value *t = x, *y;
  switch (kind) {
  case RK_PLAIN:
  case RK_LOG_SUM: break;
  case RK_SUM_SQUARE:
  case RK_L2: MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, x, x, &t)); break;
  case RK_L1: MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_ABS, x, &t)); break;
  case RK_LOG_SUM_EXP:
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "axes computed at run time are not supported yet");
  }
  MLC_RETURN_IF_ERROR(mlc_fe_dyn_reduce(cx, t, axes, k, (int)mlc_fe_attr_int(n, "keepdims", 1),
                                        (int)mlc_fe_attr_int(n, "noop_with_empty_axes", 0), &y));
  if (kind == RK_L2) MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_SQRT, y, &y));
  if (kind == RK_LOG_SUM) MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_LOG, y, &y));
  *out = y;
  return NULL;
}

/* Axes from the optional second input (opset 18; ReduceSum 13); absent
** axes are an empty list. */
static mlc_status reduce_input(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *const *in, int nin,
                               mlc_op op, rkind kind, mlc_value **out) {
  int64_t *axes = NULL;
  int k = 0;
  if (nin > 1 && in[1] && !mlc_fe_const(cx, in[1]) && mlc_type_numel(&in[1]->type) != 0)
    return reduce_dyn(cx, n, in[0], in[1], op, kind, out);
  if (nin > 1 && in[1] && !mlc_fe_const(cx, in[1])) k = 0; /* an empty run-time list */
  else if (nin > 1 && in[1]) MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[1], "axes", &axes, &k));
  return reduce(cx, in[0], op, kind, axes, k, (int)mlc_fe_attr_int(n, "keepdims", 1),
                (int)mlc_fe_attr_int(n, "noop_with_empty_axes", 0), out);
}

/* ONNX ReduceMean-1,11,13: Y = mean of X over axes (attribute; all if absent) */
MLC_FE_CVT(reduce_mean_v1) {
  (void)nin, (void)nout;
  return reduce_attr(cx, n, in[0], MLC_OP_MEAN, RK_PLAIN, &out[0]);
}

/* ONNX ReduceMean-18: Y = mean of X over axes (optional input) */
MLC_FE_CVT(reduce_mean_v18) {
  (void)nout;
  return reduce_input(cx, n, in, nin, MLC_OP_MEAN, RK_PLAIN, &out[0]);
}

/* ONNX ReduceSum-1,11: Y = sum of X over axes (attribute) */
MLC_FE_CVT(reduce_sum_v1) {
  (void)nin, (void)nout;
  return reduce_attr(cx, n, in[0], MLC_OP_SUM, RK_PLAIN, &out[0]);
}

/* ONNX ReduceSum-13: Y = sum of X over axes (optional input) */
MLC_FE_CVT(reduce_sum_v13) {
  (void)nout;
  return reduce_input(cx, n, in, nin, MLC_OP_SUM, RK_PLAIN, &out[0]);
}

/* ONNX ReduceMax-1,11,12,13: Y = max of X over axes (attribute) */
MLC_FE_CVT(reduce_max_v1) {
  (void)nin, (void)nout;
  return reduce_attr(cx, n, in[0], MLC_OP_MAX, RK_PLAIN, &out[0]);
}

/* ONNX ReduceMax-18: Y = max of X over axes (optional input) */
MLC_FE_CVT(reduce_max_v18) {
  (void)nout;
  return reduce_input(cx, n, in, nin, MLC_OP_MAX, RK_PLAIN, &out[0]);
}

/* ONNX ReduceMin-1,11,12,13: Y = min of X over axes (attribute) */
MLC_FE_CVT(reduce_min_v1) {
  (void)nin, (void)nout;
  return reduce_attr(cx, n, in[0], MLC_OP_MIN, RK_PLAIN, &out[0]);
}

/* ONNX ReduceMin-18: Y = min of X over axes (optional input) */
MLC_FE_CVT(reduce_min_v18) {
  (void)nout;
  return reduce_input(cx, n, in, nin, MLC_OP_MIN, RK_PLAIN, &out[0]);
}

/* ONNX ReduceProd-1,11,13: Y = product of X over axes (attribute) */
MLC_FE_CVT(reduce_prod_v1) {
  (void)nin, (void)nout;
  return reduce_attr(cx, n, in[0], MLC_OP_PROD, RK_PLAIN, &out[0]);
}

/* ONNX ReduceProd-18: Y = product of X over axes (optional input) */
MLC_FE_CVT(reduce_prod_v18) {
  (void)nout;
  return reduce_input(cx, n, in, nin, MLC_OP_PROD, RK_PLAIN, &out[0]);
}

/* ONNX ReduceSumSquare-1,11,13: Y = sum of X*X over axes (attribute) */
MLC_FE_CVT(reduce_sum_square_v1) {
  (void)nin, (void)nout;
  return reduce_attr(cx, n, in[0], MLC_OP_SUM, RK_SUM_SQUARE, &out[0]);
}

/* ONNX ReduceSumSquare-18: Y = sum of X*X over axes (optional input) */
MLC_FE_CVT(reduce_sum_square_v18) {
  (void)nout;
  return reduce_input(cx, n, in, nin, MLC_OP_SUM, RK_SUM_SQUARE, &out[0]);
}

/* ONNX ReduceL1-1,11,13: Y = sum of |X| over axes (attribute) */
MLC_FE_CVT(reduce_l1_v1) {
  (void)nin, (void)nout;
  return reduce_attr(cx, n, in[0], MLC_OP_SUM, RK_L1, &out[0]);
}

/* ONNX ReduceL1-18: Y = sum of |X| over axes (optional input) */
MLC_FE_CVT(reduce_l1_v18) {
  (void)nout;
  return reduce_input(cx, n, in, nin, MLC_OP_SUM, RK_L1, &out[0]);
}

/* ONNX ReduceL2-1,11,13: Y = sqrt of the sum of X*X over axes (attribute) */
MLC_FE_CVT(reduce_l2_v1) {
  (void)nin, (void)nout;
  return reduce_attr(cx, n, in[0], MLC_OP_SUM, RK_L2, &out[0]);
}

/* ONNX ReduceL2-18: Y = sqrt of the sum of X*X over axes (optional input) */
MLC_FE_CVT(reduce_l2_v18) {
  (void)nout;
  return reduce_input(cx, n, in, nin, MLC_OP_SUM, RK_L2, &out[0]);
}

/* ONNX ReduceLogSum-1,11,13: Y = ln of the sum of X over axes (attribute) */
MLC_FE_CVT(reduce_log_sum_v1) {
  (void)nin, (void)nout;
  return reduce_attr(cx, n, in[0], MLC_OP_SUM, RK_LOG_SUM, &out[0]);
}

/* ONNX ReduceLogSum-18: Y = ln of the sum of X over axes (optional input) */
MLC_FE_CVT(reduce_log_sum_v18) {
  (void)nout;
  return reduce_input(cx, n, in, nin, MLC_OP_SUM, RK_LOG_SUM, &out[0]);
}

/* ONNX ReduceLogSumExp-1,11,13: Y = ln of the sum of e^X (computed as ln(sum(e^(X - max))) + max) over axes (attribute) */
MLC_FE_CVT(reduce_log_sum_exp_v1) {
  (void)nin, (void)nout;
  return reduce_attr(cx, n, in[0], MLC_OP_SUM, RK_LOG_SUM_EXP, &out[0]);
}

/* ONNX ReduceLogSumExp-18: Y = ln of the sum of e^X (computed as ln(sum(e^(X - max))) + max) over axes (optional input) */
MLC_FE_CVT(reduce_log_sum_exp_v18) {
  (void)nout;
  return reduce_input(cx, n, in, nin, MLC_OP_SUM, RK_LOG_SUM_EXP, &out[0]);
}

/* Index of the max/min along axis (default 0), keepdims, select_last_index (12+). */
static mlc_status arg_reduce(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, mlc_op op,
                             mlc_value **out) {
  int axis;
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "axis", 0), x->type.rank, "axis", &axis));
  mlc_attr a[3] = {mlc_attr_int("axis", axis), mlc_attr_int("keepdims", mlc_fe_attr_int(n, "keepdims", 1) != 0),
                   mlc_attr_int("select_last_index", mlc_fe_attr_int(n, "select_last_index", 0) != 0)};
  return mlc_fe_emit(cx, op, &x, 1, a, 3, out);
}

/* ONNX ArgMax-1,11,12,13: Y = int64 index of the max of X along axis */
MLC_FE_CVT(argmax) {
  (void)nin, (void)nout;
  return arg_reduce(cx, n, in[0], MLC_OP_ARGMAX, &out[0]);
}

/* ONNX ArgMin-1,11,12,13: Y = int64 index of the min of X along axis */
MLC_FE_CVT(argmin) {
  (void)nin, (void)nout;
  return arg_reduce(cx, n, in[0], MLC_OP_ARGMIN, &out[0]);
}
