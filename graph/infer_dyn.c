/*
** infer_dyn.c: inference rules of the run-time shape ops (ops.def section
** "run-time shapes").
**
** A shape that depends on tensor values (Reshape's shape input, Slice's
** starts, NonZero's count) is computed while the model runs, in three
** steps:
**
**   p = reshape_dims(x, shape)                shape function: int64 [k]
**   t = define_dims(p, dims=[s0, s1])         binds fresh symbols s0, s1
**   y = dyn_reshape(x, t, shape=[s0, s1])     data op typed with them
**
** Shape functions have static output types (their length follows from the
** ranks and vector lengths); they validate the values at run time.  The
** data ops' rules cannot check their attr shape against the values (they
** are not known before the run), so they trust it: it must hold symbols
** that an earlier define_dims defined (the verifier checks that) or
** static extents.  Their last tensor argument is define_dims' output, which
** keeps them after the binding in any order of the bindings.
*/
#include <string.h>

#define MLC_GRAPH_INFER_SHORTHANDS
#include "graph/graph_int.h"

#define MAX_RANK 64

/* Arg |i| is a vector of integers of static length; its length in *n. */
static mlc_status int_vector(const mlc_call_info *ci, int i, const char *what, int64_t *n) {
  const mlc_type *t = mlc_graph_arg(ci, i);
  if (!mlc_dtype_is_int(t->dtype) || t->dtype == MLC_DTYPE_BOOL)
    return ERR("%s (argument %d) must be integers, it is %s", what, i, mlc_dtype_name(t->dtype));
  if (t->rank > 1) return ERR("%s (argument %d) must be a vector, it has rank %d", what, i, t->rank);
  *n = t->rank == 0 ? 1 : t->dims[0];
  if (*n < 0) return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "%s of symbolic length", what);
  return NULL;
}

/* A one-element (scalar) arg |i| of a numeric dtype. */
static mlc_status scalar_arg(const mlc_call_info *ci, int i, const char *what) {
  const mlc_type *t = mlc_graph_arg(ci, i);
  if (mlc_type_numel(t) != 1)
    return ERR("%s (argument %d) must have one element", what, i);
  if (t->dtype == MLC_DTYPE_STRING || t->dtype == MLC_DTYPE_BOOL)
    return ERR("%s (argument %d) must be numeric", what, i);
  return NULL;
}

/* Shape functions: int64 vectors whose length follows from the ranks. */
mlc_status mlc_infer_shape_fn(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  int64_t r = ci->nargs > 0 ? mlc_graph_arg(ci, 0)->rank : 0, n = 0, k = 0;
  if (r > MAX_RANK) return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "rank %lld", LL(r));
  switch (ci->op) {
    case MLC_OP_RESHAPE_DIMS: MLC_RETURN_IF_ERROR(int_vector(ci, 1, "shape", &n)); break;
    case MLC_OP_UNSQUEEZE_DIMS:
      MLC_RETURN_IF_ERROR(int_vector(ci, 1, "axes", &k));
      n = r + k;
      break;
    case MLC_OP_SQUEEZE_DIMS:
      MLC_RETURN_IF_ERROR(int_vector(ci, 1, "axes", &k));
      if (k > r) return ERR("%lld axes to squeeze, the input has rank %lld", LL(k), LL(r));
      n = r - k;
      break;
    case MLC_OP_REDUCE_DIMS:
      MLC_RETURN_IF_ERROR(int_vector(ci, 1, "axes", &k));
      if (k > r) return ERR("%lld axes to reduce, the input has rank %lld", LL(k), LL(r));
      n = r;
      if (!mlc_attrs_int(ci->attrs, ci->nattrs, "keepdims", 1)) n += r - k;
      break;
    case MLC_OP_EXPAND_DIMS:
      MLC_RETURN_IF_ERROR(int_vector(ci, 1, "shape", &k));
      n = k > r ? k : r;
      break;
    case MLC_OP_TILE_DIMS:
      MLC_RETURN_IF_ERROR(int_vector(ci, 1, "repeats", &k));
      if (k != r) return ERR("repeats has %lld entries for an input of rank %lld", LL(k), LL(r));
      n = r;
      break;
    case MLC_OP_PAD_PARAMS: {
      MLC_RETURN_IF_ERROR(int_vector(ci, 1, "pads", &k));
      int64_t na = r;
      if (ci->nargs > 2) MLC_RETURN_IF_ERROR(int_vector(ci, 2, "axes", &na));
      if (k != 2 * na) return ERR("pads has %lld entries for %lld axes", LL(k), LL(na));
      n = 3 * r;
      break;
    }
    case MLC_OP_SLICE_PARAMS: {
      static const char *const what[] = {"", "starts", "ends", "axes", "steps"};
      MLC_RETURN_IF_ERROR(int_vector(ci, 1, what[1], &k));
      for (int i = 2; i < ci->nargs; i++) {
        int64_t ki;
        MLC_RETURN_IF_ERROR(int_vector(ci, i, what[i], &ki));
        if (ki != k) return ERR("starts has %lld entries, %s %lld", LL(k), what[i], LL(ki));
      }
      if (k > r) return ERR("%lld slice axes for an input of rank %lld", LL(k), LL(r));
      n = 3 * r;
      break;
    }
    case MLC_OP_SPLIT_PARAMS: {
      MLC_RETURN_IF_ERROR(int_vector(ci, 1, "split", &k));
      int64_t axis = mlc_attrs_int(ci->attrs, ci->nattrs, "axis", 0);
      int64_t index = mlc_attrs_int(ci->attrs, ci->nattrs, "index", 0);
      if (axis < 0 || axis >= r) return ERR("axis %lld out of range for rank %lld", LL(axis), LL(r));
      if (index < 0 || index >= k) return ERR("part %lld of %lld", LL(index), LL(k));
      n = 3 * r;
      break;
    }
    case MLC_OP_RANGE_LEN:
      for (int i = 0; i < 3; i++) MLC_RETURN_IF_ERROR(scalar_arg(ci, i, i == 0 ? "start" : i == 1 ? "limit" : "delta"));
      n = 1;
      break;
    case MLC_OP_NONZERO_COUNT:
      if (mlc_graph_arg(ci, 0)->dtype == MLC_DTYPE_STRING) return ERR("string input");
      n = 1;
      break;
    case MLC_OP_COMPRESS_LEN: {
      int64_t axis = mlc_attrs_int(ci->attrs, ci->nattrs, "axis", -1);
      if (mlc_graph_arg(ci, 1)->dtype != MLC_DTYPE_BOOL || mlc_graph_arg(ci, 1)->rank != 1)
        return ERR("condition must be a bool vector");
      if (axis < -1 || axis >= r) return ERR("axis %lld out of range for rank %lld", LL(axis), LL(r));
      n = 1;
      break;
    }
    case MLC_OP_RESIZE_DIMS: {
      const mlc_type *v = mlc_graph_arg(ci, 1);
      if (r < 1) return ERR("the input must have rank >= 1");
      if (v->dtype == MLC_DTYPE_F32 || v->dtype == MLC_DTYPE_F64) {
        if (v->rank != 1 || v->dims[0] != r)
          return ERR("scales (argument 1) must be a vector of %lld entries", LL(r));
      } else if (mlc_dtype_is_float(v->dtype)) {
        return ERR("scales (argument 1) must be float32 or float64, it is %s", mlc_dtype_name(v->dtype));
      } else {
        MLC_RETURN_IF_ERROR(int_vector(ci, 1, "sizes", &k));
        if (v->rank != 1 || k != r) return ERR("sizes (argument 1) must be a vector of %lld entries", LL(r));
      }
      n = r;
      break;
    }
    default: return mlc_graph_call_error(ci, MLC_INTERNAL, "not a shape function");
  }
  return mlc_graph_ret1(ci, outs, nouts, MLC_DTYPE_I64, &n, 1);
}

/* y = v: int64 [k]; attr dims has at most k - offset entries. */
mlc_status mlc_infer_define_dims(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *v = mlc_graph_arg(ci, 0);
  if (v->dtype != MLC_DTYPE_I64 || v->rank != 1 || v->dims[0] < 0)
    return ERR("the dims vector must be int64 of static length");
  const mlc_attr *d = mlc_attrs_find(ci->attrs, ci->nattrs, "dims");
  if (!d || d->kind != MLC_ATTR_INTS) return ERR("attribute dims (ints) is required");
  int64_t off = mlc_attrs_int(ci->attrs, ci->nattrs, "offset", 0);
  if (off < 0 || off + d->n > v->dims[0])
    return ERR("dims has %d entries from offset %lld, the vector has %lld", d->n, LL(off),
               LL(v->dims[0]));
  for (int i = 0; i < d->n; i++)
    if (MLC_DIM_IS_SYM(d->ints[i]) && MLC_DIM_SYM_ID(d->ints[i]) >= ci->mod->nsyms)
      return ERR("dims[%d] is an unknown symbol", i);
  return mlc_graph_ret1(ci, outs, nouts, v->dtype, v->dims, 1);
}

/* Data ops: the output has attr shape (trusted); the args are checked. */
mlc_status mlc_infer_dyn_data(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_attr *s = mlc_attrs_find(ci->attrs, ci->nattrs, "shape");
  if (!s || s->kind != MLC_ATTR_INTS) return ERR("attribute shape (ints) is required");
  if (s->n > MAX_RANK) return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "rank %d", s->n);
  for (int i = 0; i < s->n; i++)
    if (MLC_DIM_IS_SYM(s->ints[i]) && MLC_DIM_SYM_ID(s->ints[i]) >= ci->mod->nsyms)
      return ERR("shape[%d] is an unknown symbol", i);
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int tok = ci->op == MLC_OP_DYN_RANGE || ci->op == MLC_OP_COMPRESS ? 2 : 1;
  const mlc_type *t = mlc_graph_arg(ci, tok);
  if (t->dtype != MLC_DTYPE_I64 || t->rank != 1 || t->dims[0] < 0)
    return ERR("argument %d must be a static int64 vector (from define_dims)", tok);
  int64_t r = x->rank;
  mlc_dtype dt = x->dtype;
  switch (ci->op) {
    case MLC_OP_DYN_RESHAPE: break;
    case MLC_OP_DYN_BROADCAST:
      if (s->n < r) return ERR("cannot broadcast rank %lld to rank %d", LL(r), s->n);
      break;
    case MLC_OP_DYN_TILE:
    case MLC_OP_DYN_REDUCE:
      if (s->n != r) return ERR("shape has %d dims for an input of rank %lld", s->n, LL(r));
      if (ci->op == MLC_OP_DYN_REDUCE) {
        const char *kind = mlc_attrs_str(ci->attrs, ci->nattrs, "kind", "");
        if (strcmp(kind, "sum") && strcmp(kind, "mean") && strcmp(kind, "max") &&
            strcmp(kind, "min") && strcmp(kind, "prod"))
          return ERR("kind \"%s\" is not sum, mean, max, min or prod", kind);
        if (t->dims[0] < r) return ERR("the dims vector is shorter than the rank");
      }
      break;
    case MLC_OP_DYN_SLICE:
    case MLC_OP_DYN_PAD:
      if (s->n != r) return ERR("shape has %d dims for an input of rank %lld", s->n, LL(r));
      if (t->dims[0] != 3 * r) return ERR("the params vector must have %lld entries", LL(3 * r));
      if (ci->op == MLC_OP_DYN_PAD) {
        const char *mode = mlc_attrs_str(ci->attrs, ci->nattrs, "mode", "constant");
        if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
          return ERR("mode \"%s\" is not constant, reflect or edge", mode);
        if (ci->nargs > 2) {
          MLC_RETURN_IF_ERROR(scalar_arg(ci, 2, "value"));
          if (mlc_graph_arg(ci, 2)->dtype != dt) return ERR("value has another dtype than x");
        }
      }
      break;
    case MLC_OP_DYN_RANGE:
      if (s->n != 1) return ERR("a range is 1-D");
      MLC_RETURN_IF_ERROR(scalar_arg(ci, 0, "start"));
      MLC_RETURN_IF_ERROR(scalar_arg(ci, 1, "delta"));
      if (mlc_graph_arg(ci, 1)->dtype != dt) return ERR("start and delta differ in dtype");
      break;
    case MLC_OP_COMPRESS: {
      int64_t axis = mlc_attrs_int(ci->attrs, ci->nattrs, "axis", -1);
      if (axis < -1 || axis >= r) return ERR("axis %lld out of range for rank %lld", LL(axis), LL(r));
      if (mlc_graph_arg(ci, 1)->dtype != MLC_DTYPE_BOOL || mlc_graph_arg(ci, 1)->rank != 1)
        return ERR("condition must be a bool vector");
      int bad = axis < 0 ? s->n != 1 : s->n != r;
      for (int i = 0; !bad && axis >= 0 && i < r; i++) bad = i != axis && s->ints[i] != x->dims[i];
      if (bad) return ERR("shape does not match the input outside the compressed axis");
      if (dt == MLC_DTYPE_STRING) return ERR("string input");
      break;
    }
    case MLC_OP_NONZERO:
      if (s->n != 2 || s->ints[0] != r) return ERR("shape must be (rank, count)");
      if (dt == MLC_DTYPE_STRING) return ERR("string input");
      dt = MLC_DTYPE_I64;
      break;
    default: return mlc_graph_call_error(ci, MLC_INTERNAL, "not a run-time shape data op");
  }
  return mlc_graph_ret1(ci, outs, nouts, dt, s->ints, s->n);
}
