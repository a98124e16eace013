/*
** tensor.c: converters of ONNX's tensor (and generator) categories:
** Identity, Constant, Cast, Concat, Reshape, Flatten's relatives Squeeze and
** Unsqueeze, Transpose, Slice, Gather, Shape and Where.
**
** Constant shape-valued inputs (Reshape's shape, Slice's starts/ends/
** axes/steps, Squeeze/Unsqueeze axes, ...) give graph ops with resolved,
** normalized attributes (no 0/-1 in shapes, non-negative axes, clamped
** slice bounds); inputs computed at run time take the run-time shape forms
** of dynamic.c.  Symbolic dims pass through where the result is exactly a
** known extent or a single symbol.
*/
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "frontend/frontend_int.h"

/* ---- Identity, Constant, Cast ------------------------------------------- */

/* ONNX Identity-1,13,14,16: Y = X (the same value, no op) */
MLC_FE_CVT(identity) {
  (void)cx, (void)n, (void)nin, (void)nout;
  out[0] = in[0];
  return NULL;
}

MLC_FE_CHECK(constant) {
  (void)opset;
  const mlc_onnx_attr *v = mlc_fe_attr(n, "value");
  const mlc_onnx_attr *sv = mlc_fe_attr(n, "sparse_value");
  if (sv && sv->type == MLC_ONNX_ATTR_SPARSE_TENSOR && sv->sp && sv->sp->values->dtype == MLC_DTYPE_STRING)
    mlc_fe_problem(p, "string constants not supported");
  if (mlc_fe_attr(n, "value_string") || mlc_fe_attr(n, "value_strings"))
    mlc_fe_problem(p, "string constants not supported");
  if (v && v->type == MLC_ONNX_ATTR_TENSOR && v->t &&
      (v->t->dtype == MLC_DTYPE_STRING || v->t->dtype == MLC_DTYPE_INVALID))
    mlc_fe_problem(p, "value of element type %s not supported", mlc_onnx_dtype_name(v->t->onnx_type));
}

/* The most bytes a sparse_value may expand to: its dense form is built when
** compiling, and a few bytes of a file must not ask for terabytes. */
#define SPARSE_MAX_BYTES ((int64_t)1 << 30)

/*
** sparse_value (Constant-11+): the dense tensor of |sp|, zeros but at the
** indices (linear, or [NNZ, rank] coordinates), each checked to be in range.
*/
static mlc_status constant_sparse(mlc_fe_ctx *cx, const char *name, const mlc_onnx_sparse *sp,
                                  mlc_value **out) {
  const mlc_onnx_tensor *vals = sp->values, *idx = sp->indices;
  mlc_type ty = {vals->dtype, sp->rank, sp->dims};
  if (!mlc_type_size_ok(&ty) || mlc_type_numel(&ty) > SPARSE_MAX_BYTES / (int64_t)mlc_dtype_size(ty.dtype))
    return mlc_fe_error(cx, MLC_RESOURCE_EXHAUSTED, "sparse_value: the dense tensor is over %lld bytes",
                        (long long)SPARSE_MAX_BYTES);
  int64_t numel = mlc_type_numel(&ty), nnz = vals->dims[0];
  size_t es = mlc_dtype_size(ty.dtype);
  unsigned char *dense = mlc_mem_calloc(numel > 0 ? (size_t)numel : 1, es);
  if (!dense) return mlc_oom();
  const int64_t *ix = idx->data;
  const unsigned char *v = vals->data;
  for (int64_t i = 0; i < nnz; i++) {
    int64_t lin = 0;
    if (idx->rank == 1) {
      lin = ix[i];
      if (lin < 0 || lin >= numel) {
        mlc_mem_free(dense);
        return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "sparse_value: index %lld of value %lld is outside [0, %lld)",
                            (long long)lin, (long long)i, (long long)numel);
      }
    } else {
      for (int d = 0; d < sp->rank; d++) {
        int64_t c = ix[i * sp->rank + d];
        if (c < 0 || c >= sp->dims[d]) {
          mlc_mem_free(dense);
          return mlc_fe_error(cx, MLC_INVALID_ARGUMENT,
                              "sparse_value: coordinate %d of value %lld is %lld, outside [0, %lld)", d, (long long)i,
                              (long long)c, (long long)sp->dims[d]);
        }
        lin = lin * sp->dims[d] + c;
      }
    }
    memcpy(dense + (size_t)lin * es, v + (size_t)i * es, es);
  }
  mlc_status s = mlc_module_add_const(cx->mod, name, &ty, dense, (size_t)numel * es, out);
  mlc_mem_free(dense);
  return s;
}

/*
** ONNX Constant-1,9,11,12,13: Y = the value attribute (value tensor, from
** 11 sparse_value densified, from 12 value_float(s) / value_int(s)); the
** constant is named after Y.
*/
MLC_FE_CVT(constant) {
  (void)nin, (void)nout;
  const char *name = n->outputs[0];
  if (n->nattrs != 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "needs exactly one value attribute, got %d",
                        n->nattrs);
  const mlc_onnx_attr *a = &n->attrs[0];
  if (strcmp(a->name, "value") == 0) {
    const mlc_onnx_tensor *t = a->t;
    if (!t) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "attribute value has no tensor");
    mlc_type ty = {t->dtype, t->rank, t->dims};
    return mlc_module_add_const(cx->mod, name, &ty, t->data, t->nbytes, &out[0]);
  }
  if (strcmp(a->name, "sparse_value") == 0) {
    if (a->type != MLC_ONNX_ATTR_SPARSE_TENSOR || !a->sp)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "attribute sparse_value has no sparse tensor");
    return constant_sparse(cx, name, a->sp, &out[0]);
  }
  int64_t dim = a->n;
  if (strcmp(a->name, "value_float") == 0) {
    mlc_type ty = {MLC_DTYPE_F32, 0, NULL};
    return mlc_module_add_const(cx->mod, name, &ty, &a->f, sizeof(float), &out[0]);
  }
  if (strcmp(a->name, "value_floats") == 0) {
    mlc_type ty = {MLC_DTYPE_F32, 1, &dim};
    return mlc_module_add_const(cx->mod, name, &ty, a->floats, sizeof(float) * (size_t)a->n, &out[0]);
  }
  if (strcmp(a->name, "value_int") == 0) {
    mlc_type ty = {MLC_DTYPE_I64, 0, NULL};
    return mlc_module_add_const(cx->mod, name, &ty, &a->i, sizeof(int64_t), &out[0]);
  }
  if (strcmp(a->name, "value_ints") == 0) {
    mlc_type ty = {MLC_DTYPE_I64, 1, &dim};
    return mlc_module_add_const(cx->mod, name, &ty, a->ints, sizeof(int64_t) * (size_t)a->n, &out[0]);
  }
  return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "attribute \"%s\" not supported", a->name);
}

/* The ONNX type code Cast's |to| names (an int, or a name before opset 6); 0 if none. */
static int cast_target(const mlc_onnx_node *n) {
  const mlc_onnx_attr *a = mlc_fe_attr(n, "to");
  if (!a) return 0;
  if (a->type == MLC_ONNX_ATTR_INT) return a->i > 0 && a->i < 1000 ? (int)a->i : 0;
  if (a->type == MLC_ONNX_ATTR_STRING && a->s)
    for (int code = 1; code < 64; code++)
      if (strcmp(mlc_onnx_dtype_name(code), a->s) == 0) return code;
  return 0;
}

MLC_FE_CHECK(cast) {
  (void)opset;
  int code = cast_target(n);
  mlc_dtype dt = code ? mlc_onnx_dtype(code) : MLC_DTYPE_INVALID;
  if (!mlc_fe_attr(n, "to")) return; /* reported when converting */
  if (dt == MLC_DTYPE_INVALID || dt == MLC_DTYPE_STRING) {
    const mlc_onnx_attr *a = mlc_fe_attr(n, "to");
    if (a->type == MLC_ONNX_ATTR_STRING) mlc_fe_problem(p, "cast to %s not supported", a->s ? a->s : "");
    else mlc_fe_problem(p, "cast to %s not supported", code ? mlc_onnx_dtype_name(code) : "an unknown type");
  }
}

/* ONNX Cast-1,6,9,13: Y = X converted to the element type |to| */
MLC_FE_CVT(cast) {
  (void)nin, (void)nout;
  if (!mlc_fe_attr(n, "to")) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "attribute to is required");
  mlc_dtype dt = mlc_onnx_dtype(cast_target(n));
  if (dt == in[0]->type.dtype) {
    out[0] = in[0];
    return NULL;
  }
  mlc_attr a = mlc_attr_int("dtype", (int64_t)dt);
  return mlc_fe_emit(cx, MLC_OP_CAST, &in[0], 1, &a, 1, &out[0]);
}

/* ---- Concat ------------------------------------------------------------- */

/* ONNX Concat-1,4,11,13: Y = inputs joined along axis (default 1 before 4;
** negative from 11) */
MLC_FE_CVT(concat) {
  (void)nout;
  const mlc_onnx_attr *ax = mlc_fe_attr(n, "axis");
  if (!ax && cx->opset >= 4) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "attribute axis is required");
  for (int i = 0; i < nin; i++)
    if (!in[i]) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "input %d is empty", i);
  int axis;
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, ax ? ax->i : 1, in[0]->type.rank, "axis", &axis));
  if (nin == 1) {
    out[0] = in[0];
    return NULL;
  }
  mlc_attr a = mlc_attr_int("axis", axis);
  return mlc_fe_emit(cx, MLC_OP_CONCAT, in, nin, &a, 1, &out[0]);
}

/* ---- Reshape ------------------------------------------------------------ */

/*
** Resolves ONNX reshape dims |shape| for input type |t| into |out|: 0 copies
** the input dim (unless |allowzero|), -1 is inferred from the element
** count.  Symbolic input dims must cancel against copied ones, or be
** exactly what -1 stands for.
*/
static mlc_status resolve_shape(mlc_fe_ctx *cx, const mlc_type *t, const int64_t *shape, int n,
                                int allowzero, int64_t *out) {
  int r = t->rank, infer = -1;
  /* Input: static product and the symbols (to be cancelled). */
  int64_t pin = 1, pout = 1;
  int64_t *syms = MLC_ARENA_ARRAY(cx->scratch, r > 0 ? (size_t)r : 1, int64_t);
  if (!syms) return mlc_oom();
  int nsyms = 0, zero_in = 0;
  for (int i = 0; i < r; i++) {
    int64_t d = t->dims[i];
    if (MLC_DIM_IS_SYM(d)) syms[nsyms++] = d;
    else if (d == 0) zero_in = 1;
    else if (pin > INT64_MAX / d) return mlc_fe_error(cx, MLC_OUT_OF_RANGE, "input size overflows");
    else pin *= d;
  }
  if (zero_in) pin = 0;
  for (int i = 0; i < n; i++) {
    int64_t d = shape[i];
    if (d == -1) {
      if (infer >= 0) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "shape has more than one -1");
      infer = i;
      continue;
    }
    if (d < -1) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "shape[%d] = %lld is invalid", i, (long long)d);
    if (d == 0 && !allowzero) {
      if (i >= r)
        return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "shape[%d] = 0 copies a dim the input %s lacks", i,
                            mlc_fe_shape_str(cx, t));
      d = t->dims[i];
    }
    out[i] = d;
    if (MLC_DIM_IS_SYM(d)) {
      for (int k = 0; k < nsyms; k++)
        if (syms[k] == d) {
          syms[k] = syms[--nsyms];
          break;
        }
    } else if (d == 0) {
      pout = 0;
    } else if (pout != 0) {
      if (pout > INT64_MAX / d) return mlc_fe_error(cx, MLC_OUT_OF_RANGE, "shape size overflows");
      pout *= d;
    }
  }
  /* The requested shape as written (0 and -1 are not dims here). */
  char want[512];
  size_t w = 0;
  want[w++] = '(';
  for (int i = 0; i < n && w < sizeof want - 32; i++)
    w += (size_t)snprintf(want + w, sizeof want - w, "%s%lld", i ? ", " : "", (long long)shape[i]);
  snprintf(want + w, sizeof want - w, "%s", n == 1 ? ",)" : ")");
  if (infer < 0) {
    if (nsyms == 0 && pin == pout) return NULL;
    if (nsyms == 0 || zero_in)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "cannot reshape %s (%lld elements) to %s",
                          mlc_fe_shape_str(cx, t), (long long)pin, want);
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "cannot prove that %s and %s have the same size",
                        mlc_fe_shape_str(cx, t), want);
  }
  if (allowzero && pout == 0)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "shape %s has both 0 and -1 with allowzero", want);
  if (pout == 0)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "cannot infer -1 in %s: the other dims have 0 elements",
                        want);
  if (nsyms == 0 || zero_in) {
    if (pin % pout != 0)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "cannot reshape %s (%lld elements) to %s",
                          mlc_fe_shape_str(cx, t), (long long)pin, want);
    out[infer] = pin / pout;
    return NULL;
  }
  if (nsyms == 1 && pin == pout) {
    out[infer] = syms[0];
    return NULL;
  }
  return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "-1 in %s is not a single dim of the input %s", want,
                      mlc_fe_shape_str(cx, t));
}

static mlc_status reshape(mlc_fe_ctx *cx, mlc_value *x, const int64_t *shape, int n, int allowzero,
                          mlc_value **out) {
  int64_t *dims = MLC_ARENA_ARRAY(cx->scratch, n > 0 ? (size_t)n : 1, int64_t);
  if (!dims) return mlc_oom();
  MLC_RETURN_IF_ERROR(resolve_shape(cx, &x->type, shape, n, allowzero, dims));
  return mlc_fe_reshape(cx, x, dims, n, out);
}

/*
** |st| of a static conversion; when it is MLC_UNIMPLEMENTED (symbolic input
** dims the static path cannot resolve), the run-time shape form |dyn| on the
** same (constant) inputs instead.
*/
static mlc_status fallback(mlc_fe_ctx *cx, mlc_status st,
                           mlc_status (*dyn)(mlc_fe_ctx *, mlc_value *, mlc_value *, int, mlc_value **),
                           mlc_value *x, mlc_value *v, int flag, mlc_value **out) {
  if (!st || mlc_status_code(st) != MLC_UNIMPLEMENTED) return st;
  mlc_status d = dyn(cx, x, v, flag, out);
  if (d) {
    mlc_status_free(d);
    return st;
  }
  mlc_status_free(st);
  return NULL;
}

/* ONNX Reshape-1: Y = X with the shape attribute (0 copies, -1 infers) */
MLC_FE_CVT(reshape_v1) {
  (void)nin, (void)nout;
  const int64_t *shape;
  int k = mlc_fe_attr_ints(n, "shape", &shape);
  if (k < 0) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "attribute shape is required");
  return reshape(cx, in[0], shape, k, 0, &out[0]);
}

/* Product of the known dims and the symbols of |dims| (derived products
** taken apart) into *known, syms (*nsyms, room for 64); -1 on overflow. */
static int dims_parts(mlc_fe_ctx *cx, const int64_t *dims, int r, int64_t *known, int64_t *syms, int *nsyms) {
  *known = 1;
  *nsyms = 0;
  for (int i = 0; i < r; i++)
    if (mlc_dim_factors(cx->mod, dims[i], known, syms, nsyms, 64)) return -1;
  return 0;
}

/*
** Reshape to a shape whose values are known when compiling though some are
** dims (mlc_value.nsv: [N, T, 4, 64] from Shape, Gather and Concat): 0
** copies (unless allowzero), -1 is what the input's size leaves (the
** symbols of the other dims cancelled against the input's, at most one
** left, times a whole ratio).  MLC_UNIMPLEMENTED when it cannot be
** resolved (the caller falls back to the run-time form).
*/
static mlc_status reshape_known(mlc_fe_ctx *cx, mlc_value *x, const int64_t *vals, uint64_t sym, int k,
                                int allowzero, mlc_value **out) {
  int64_t dims[64], sin[64], sout[64], kin, kout;
  int infer = -1, nin, nout, r = x->type.rank;
  if (k > 64 || r > 64) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "shape of more than 64 dims");
  for (int i = 0; i < k; i++) {
    int64_t v = vals[i];
    if ((sym >> i) & 1) {
      dims[i] = v;
    } else if (v == -1) {
      if (infer >= 0) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "shape has more than one -1");
      infer = i;
      dims[i] = 1;
    } else if (v == 0 && !allowzero) {
      if (i >= r) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "shape[%d] = 0 copies a dim the input lacks", i);
      dims[i] = x->type.dims[i];
    } else if (v < 0) {
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "shape[%d] = %lld is invalid", i, (long long)v);
    } else {
      dims[i] = v;
    }
  }
  if (infer >= 0) {
    if (dims_parts(cx, x->type.dims, r, &kin, sin, &nin) || dims_parts(cx, dims, k, &kout, sout, &nout))
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "the shape's size overflows");
    for (int j = 0; j < nout; j++) { /* cancel the output's symbols against the input's */
      int f = -1;
      for (int q = 0; q < nin && f < 0; q++)
        if (sin[q] == sout[j]) f = q;
      if (f < 0) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "-1 with symbols the input does not have");
      sin[f] = sin[--nin];
    }
    if (kout == 0 || kin % kout || nin > 1)
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "cannot infer -1 from the input's symbolic size");
    if (nin == 0) dims[infer] = kin / kout;
    else MLC_RETURN_IF_ERROR(mlc_dim_mul_const(cx->mod, sin[0], kin / kout, NULL, &dims[infer]));
  }
  mlc_status st = mlc_fe_reshape(cx, x, dims, k, out);
  if (st && mlc_status_code(st) == MLC_INVALID_ARGUMENT) { /* sizes not provably equal: run-time form */
    mlc_status w = mlc_fe_error(cx, MLC_UNIMPLEMENTED, "%s", mlc_status_message(st));
    mlc_status_free(st);
    return w;
  }
  return st;
}

/* ONNX Reshape-5,13,14: Y = X with the shape input, a constant (allowzero from 14) */
MLC_FE_CVT(reshape_v5) {
  (void)nin, (void)nout;
  int64_t *shape;
  int k;
  const int64_t *known;
  uint64_t sym;
  int allowzero = (int)mlc_fe_attr_int(n, "allowzero", 0);
  if (!mlc_fe_const(cx, in[1]) && mlc_value_sym_ints(cx->mod, in[1], &known, &sym, &k)) {
    /* a shape computed from shapes: static, with symbolic dims */
    mlc_status st = reshape_known(cx, in[0], known, sym, k, allowzero, &out[0]);
    if (!st || mlc_status_code(st) != MLC_UNIMPLEMENTED) return st;
    mlc_status_free(st);
  }
  if (!mlc_fe_const(cx, in[1])) /* run-time shape: dims computed while running */
    return mlc_fe_dyn_reshape(cx, in[0], in[1], (int)mlc_fe_attr_int(n, "allowzero", 0), &out[0]);
  MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[1], "shape", &shape, &k));
  return fallback(cx, reshape(cx, in[0], shape, k, (int)mlc_fe_attr_int(n, "allowzero", 0), &out[0]),
                  mlc_fe_dyn_reshape, in[0], in[1], (int)mlc_fe_attr_int(n, "allowzero", 0), &out[0]);
}

/* ---- Squeeze, Unsqueeze ------------------------------------------------- */

/* Drops the dims of |x| named by |axes| (|k| < 0: every dim of extent 1). */
static mlc_status squeeze(mlc_fe_ctx *cx, mlc_value *x, const int64_t *axes, int k, mlc_value **out) {
  int r = x->type.rank;
  char *drop = MLC_ARENA_ARRAY(cx->scratch, r > 0 ? (size_t)r : 1, char);
  int64_t *dims = MLC_ARENA_ARRAY(cx->scratch, r > 0 ? (size_t)r : 1, int64_t);
  if (!drop || !dims) return mlc_oom();
  if (k < 0) {
    for (int i = 0; i < r; i++) {
      if (MLC_DIM_IS_SYM(x->type.dims[i]))
        return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                            "squeeze without axes needs static dims, the input is %s",
                            mlc_fe_shape_str(cx, &x->type));
      drop[i] = x->type.dims[i] == 1;
    }
  }
  for (int i = 0; i < k; i++) {
    int a;
    MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, axes[i], r, "axis", &a));
    if (drop[a]) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "axis %lld is repeated", (long long)axes[i]);
    int64_t d = x->type.dims[a];
    if (MLC_DIM_IS_SYM(d))
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "cannot squeeze the symbolic dim %d of %s", a,
                          mlc_fe_shape_str(cx, &x->type));
    if (d != 1)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "cannot squeeze dim %d of %s: it is not 1", a,
                          mlc_fe_shape_str(cx, &x->type));
    drop[a] = 1;
  }
  int nr = 0;
  for (int i = 0; i < r; i++)
    if (!drop[i]) dims[nr++] = x->type.dims[i];
  return mlc_fe_reshape(cx, x, dims, nr, out);
}

/* Inserts dims of extent 1 at |axes| (positions in the output). */
static mlc_status unsqueeze(mlc_fe_ctx *cx, mlc_value *x, const int64_t *axes, int k, mlc_value **out) {
  int r = x->type.rank, nr = r + k;
  char *ins = MLC_ARENA_ARRAY(cx->scratch, (size_t)nr + 1, char);
  int64_t *dims = MLC_ARENA_ARRAY(cx->scratch, (size_t)nr + 1, int64_t);
  if (!ins || !dims) return mlc_oom();
  for (int i = 0; i < k; i++) {
    int a;
    MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, axes[i], nr, "axis", &a));
    if (ins[a]) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "axis %lld is repeated", (long long)axes[i]);
    ins[a] = 1;
  }
  for (int i = 0, j = 0; i < nr; i++) dims[i] = ins[i] ? 1 : x->type.dims[j++];
  return mlc_fe_reshape(cx, x, dims, nr, out);
}

/* ONNX Squeeze-1,11: Y = X without the dims of extent 1 named by axes
** (attribute; all such dims if absent; negative from 11) */
MLC_FE_CVT(squeeze_v1) {
  (void)nin, (void)nout;
  const int64_t *axes;
  int k = mlc_fe_attr_ints(n, "axes", &axes);
  return squeeze(cx, in[0], axes, k, &out[0]);
}

/* ONNX Squeeze-13: as Squeeze-11 with axes as an optional constant input */
MLC_FE_CVT(squeeze_v13) {
  (void)n, (void)nout;
  int64_t *axes = NULL;
  int k = -1;
  if (nin > 1 && in[1] && !mlc_fe_const(cx, in[1])) return mlc_fe_dyn_squeeze(cx, in[0], in[1], &out[0]);
  if (nin > 1 && in[1]) MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[1], "axes", &axes, &k));
  return squeeze(cx, in[0], axes, k, &out[0]);
}

/* ONNX Unsqueeze-1,11: Y = X with dims of extent 1 inserted at axes (attribute) */
MLC_FE_CVT(unsqueeze_v1) {
  (void)nin, (void)nout;
  const int64_t *axes;
  int k = mlc_fe_attr_ints(n, "axes", &axes);
  if (k < 0) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "attribute axes is required");
  return unsqueeze(cx, in[0], axes, k, &out[0]);
}

/* ONNX Unsqueeze-13: as Unsqueeze-11 with axes as a constant input */
MLC_FE_CVT(unsqueeze_v13) {
  (void)n, (void)nin, (void)nout;
  int64_t *axes;
  int k;
  if (!mlc_fe_const(cx, in[1])) return mlc_fe_dyn_unsqueeze(cx, in[0], in[1], &out[0]);
  MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[1], "axes", &axes, &k));
  return unsqueeze(cx, in[0], axes, k, &out[0]);
}

/* ---- Transpose ---------------------------------------------------------- */

/* ONNX Transpose-1,13: Y = X with axes permuted by perm (default: reversed) */
MLC_FE_CVT(transpose) {
  (void)nin, (void)nout;
  mlc_value *x = in[0];
  int r = x->type.rank;
  const int64_t *pa;
  int k = mlc_fe_attr_ints(n, "perm", &pa);
  int64_t *perm = MLC_ARENA_ARRAY(cx->scratch, r > 0 ? (size_t)r : 1, int64_t);
  char *seen = MLC_ARENA_ARRAY(cx->scratch, r > 0 ? (size_t)r : 1, char);
  if (!perm || !seen) return mlc_oom();
  if (k >= 0 && k != r)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "perm has %d entries for an input of rank %d", k, r);
  int ident = 1;
  for (int i = 0; i < r; i++) {
    int64_t p = k >= 0 ? pa[i] : r - 1 - i;
    if (p < 0 || p >= r || seen[p])
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "perm is not a permutation of 0..%d", r - 1);
    seen[p] = 1;
    perm[i] = p;
    ident &= p == i;
  }
  if (ident) {
    out[0] = x;
    return NULL;
  }
  mlc_attr a = mlc_attr_ints("perm", perm, r);
  return mlc_fe_emit(cx, MLC_OP_TRANSPOSE, &x, 1, &a, 1, &out[0]);
}

/* ---- Slice -------------------------------------------------------------- */

/* Ends at or beyond this reach the end of a symbolic dim. */
#define END_OF_DIM ((int64_t)1 << 31)

/*
** x[starts:ends:steps] on |axes| (NULL: 0..k-1; |steps| NULL: 1), clamped
** as ONNX does: negative indices count from the end; then starts and ends
** are clamped to [0, d] for positive steps, to [0, d-1] (starts) and
** [-1, d-1] (ends) for negative ones.  On a symbolic dim starts and ends
** stay as given (the slice op's convention there: inference derives the
** extent as a symbol of the dim, lowering clamps with the run-time extent);
** a slice whose extent is no such expression is UNIMPLEMENTED, and
** slice_v10 then slices at run time.
*/
static mlc_status slice(mlc_fe_ctx *cx, mlc_value *x, const int64_t *starts, const int64_t *ends,
                        const int64_t *axes, const int64_t *steps, int k, mlc_value **out) {
  int r = x->type.rank;
  size_t sz = r > 0 ? (size_t)r : 1;
  int64_t *b = MLC_ARENA_ARRAY(cx->scratch, sz, int64_t);
  int64_t *e = MLC_ARENA_ARRAY(cx->scratch, sz, int64_t);
  int64_t *s = MLC_ARENA_ARRAY(cx->scratch, sz, int64_t);
  char *seen = MLC_ARENA_ARRAY(cx->scratch, sz, char);
  if (!b || !e || !s || !seen) return mlc_oom();
  for (int i = 0; i < r; i++) { /* untouched axes: whole (symbolic: to the end) */
    b[i] = 0;
    e[i] = MLC_DIM_IS_SYM(x->type.dims[i]) ? INT64_MAX : x->type.dims[i];
    s[i] = 1;
  }
  int whole = 1;
  for (int i = 0; i < k; i++) {
    int a;
    MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, axes ? axes[i] : i, r, "axis", &a));
    if (seen[a])
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "axis %lld is repeated", (long long)(axes ? axes[i] : i));
    seen[a] = 1;
    int64_t d = x->type.dims[a], st = steps ? steps[i] : 1, lo = starts[i], hi = ends[i];
    if (st == 0) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "step of axis %d is 0", a);
    if (MLC_DIM_IS_SYM(d)) { /* as given: inference derives the extent, lowering clamps at run time */
      if (st == 1 && lo == 0 && hi >= END_OF_DIM) continue;
      b[a] = lo;
      e[a] = hi;
      s[a] = st;
      whole = 0;
      continue;
    }
    if (lo < 0) lo += d;
    if (hi < 0) hi += d;
    if (st > 0) {
      lo = lo < 0 ? 0 : lo > d ? d : lo;
      hi = hi < 0 ? 0 : hi > d ? d : hi;
    } else if (d == 0) {
      lo = hi = 0;
    } else {
      lo = lo < 0 ? 0 : lo > d - 1 ? d - 1 : lo;
      hi = hi < -1 ? -1 : hi > d - 1 ? d - 1 : hi;
    }
    b[a] = lo;
    e[a] = hi;
    s[a] = st;
    whole &= lo == 0 && hi == d && st == 1;
  }
  if (whole) {
    *out = x;
    return NULL;
  }
  mlc_attr at[3] = {mlc_attr_ints("begin", b, r), mlc_attr_ints("end", e, r), mlc_attr_ints("step", s, r)};
  return mlc_fe_emit(cx, MLC_OP_SLICE, &x, 1, at, 3, out);
}

/* ONNX Slice-1: Y = X[starts:ends] on axes (attributes) */
MLC_FE_CVT(slice_v1) {
  (void)nin, (void)nout;
  const int64_t *st, *en, *ax;
  int ks = mlc_fe_attr_ints(n, "starts", &st), ke = mlc_fe_attr_ints(n, "ends", &en);
  int ka = mlc_fe_attr_ints(n, "axes", &ax);
  if (ks < 0 || ke < 0) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "attributes starts and ends are required");
  if (ks != ke || (ka >= 0 && ka != ks))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "starts, ends and axes have %d, %d and %d entries", ks, ke, ka);
  return slice(cx, in[0], st, en, ka >= 0 ? ax : NULL, NULL, ks, &out[0]);
}

/* ONNX Slice-10,11,13: Y = X[starts:ends:steps] on axes (constant inputs) */
MLC_FE_CVT(slice_v10) {
  (void)n, (void)nout;
  int64_t *st, *en, *ax = NULL, *sp = NULL;
  int ks, ke, ka = -1, kp = -1;
  int dyn = !mlc_fe_const(cx, in[1]) || !mlc_fe_const(cx, in[2]);
  for (int i = 3; i < nin && i < 5; i++) dyn |= in[i] && !mlc_fe_const(cx, in[i]);
  if (dyn) /* run-time starts/ends/axes/steps */
    return mlc_fe_dyn_slice(cx, in[0], in[1], in[2], nin > 3 ? in[3] : NULL, nin > 4 ? in[4] : NULL, &out[0]);
  MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[1], "starts", &st, &ks));
  MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[2], "ends", &en, &ke));
  if (nin > 3 && in[3]) MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[3], "axes", &ax, &ka));
  if (nin > 4 && in[4]) MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[4], "steps", &sp, &kp));
  if (ks != ke || (ka >= 0 && ka != ks) || (kp >= 0 && kp != ks))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "starts, ends, axes and steps have %d, %d, %d and %d entries",
                        ks, ke, ka, kp);
  mlc_status s = slice(cx, in[0], st, en, ax, sp, ks, &out[0]);
  if (s && mlc_status_code(s) == MLC_UNIMPLEMENTED) { /* a symbolic dim: slice at run time */
    mlc_status d = mlc_fe_dyn_slice(cx, in[0], in[1], in[2], nin > 3 ? in[3] : NULL, nin > 4 ? in[4] : NULL,
                                    &out[0]);
    if (!d) {
      mlc_status_free(s);
      return NULL;
    }
    mlc_status_free(d);
  }
  return s;
}

/* ---- Gather, Shape, Where ----------------------------------------------- */

/* ONNX Gather-1,11,13: Y = X indexed along axis by indices (negative wrap) */
MLC_FE_CVT(gather) {
  (void)nin, (void)nout;
  int axis;
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "axis", 0), in[0]->type.rank, "axis", &axis));
  mlc_attr a = mlc_attr_int("axis", axis);
  return mlc_fe_emit(cx, MLC_OP_GATHER, in, 2, &a, 1, &out[0]);
}

/*
** ONNX Shape-1,13,15: Y = the shape of X as int64 (dims start..end from 15):
** a constant when those dims are static, else shape_of (+ strided_slice).
*/
MLC_FE_CVT(shape) {
  (void)nin, (void)nout;
  mlc_value *x = in[0];
  int64_t r = x->type.rank;
  int64_t lo = mlc_fe_attr_int(n, "start", 0), hi = mlc_fe_attr_int(n, "end", r);
  if (lo < 0) lo += r;
  if (hi < 0) hi += r;
  lo = lo < 0 ? 0 : lo > r ? r : lo;
  hi = hi < 0 ? 0 : hi > r ? r : hi;
  if (hi < lo) hi = lo;
  int stat = 1;
  for (int64_t i = lo; i < hi; i++) stat &= !MLC_DIM_IS_SYM(x->type.dims[i]);
  if (stat) return mlc_fe_const_i64(cx, x->type.dims + lo, (int)(hi - lo), &out[0]);
  mlc_value *s;
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_SHAPE_OF, x, &s));
  if (lo == 0 && hi == r) {
    out[0] = s;
    return NULL;
  }
  int64_t one = 1;
  mlc_attr a[3] = {mlc_attr_ints("begin", &lo, 1), mlc_attr_ints("end", &hi, 1), mlc_attr_ints("step", &one, 1)};
  return mlc_fe_emit(cx, MLC_OP_SLICE, &s, 1, a, 3, &out[0]);
}

/* ONNX Where-9,16: Y = cond ? A : B (numpy broadcasting) */
MLC_FE_CVT(where) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_emit(cx, MLC_OP_WHERE, in, 3, NULL, 0, &out[0]);
}

/* ---- CastLike, ConstantOfShape, Expand, Size ---------------------------- */

/* ONNX CastLike-15: Y = X converted to the element type of target_type */
MLC_FE_CVT(cast_like) {
  (void)n, (void)nin, (void)nout;
  if (in[0]->type.dtype == in[1]->type.dtype) {
    out[0] = in[0];
    return NULL;
  }
  mlc_attr a = mlc_attr_int("dtype", (int64_t)in[1]->type.dtype);
  return mlc_fe_emit(cx, MLC_OP_CAST, &in[0], 1, &a, 1, &out[0]);
}

MLC_FE_CHECK(constant_of_shape) {
  (void)opset;
  const mlc_onnx_attr *v = mlc_fe_attr(n, "value");
  if (v && v->t && (v->t->dtype == MLC_DTYPE_STRING || v->t->dtype == MLC_DTYPE_INVALID))
    mlc_fe_problem(p, "value of element type %s not supported", mlc_onnx_dtype_name(v->t->onnx_type));
}

/* Broadcasts |x| to |dims| (resolved), or returns |x| when it has them. */
static mlc_status broadcast_to(mlc_fe_ctx *cx, mlc_value *x, const int64_t *dims, int rank, mlc_value **out) {
  if (x->type.rank == rank && (rank == 0 || memcmp(x->type.dims, dims, sizeof *dims * (size_t)rank) == 0)) {
    *out = x;
    return NULL;
  }
  mlc_attr a = mlc_attr_ints("shape", dims, rank);
  return mlc_fe_emit(cx, MLC_OP_BROADCAST_TO, &x, 1, &a, 1, out);
}

/* ONNX ConstantOfShape-9: Y = a tensor of the shape input filled with value
** (a one-element tensor; default float32 0) */
MLC_FE_CVT(constant_of_shape) {
  (void)nin, (void)nout;
  int64_t *shape = NULL;
  int k = 0, dyn = !mlc_fe_const(cx, in[0]); /* run-time shape */
  int known = dyn && mlc_fe_known_dims(cx, in[0], &shape, &k); /* computed from shapes: dims */
  if (known) dyn = 0;
  else if (!dyn) MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[0], "shape", &shape, &k));
  for (int i = 0; i < k && !known; i++)
    if (shape[i] < 0)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "shape[%d] = %lld is negative", i, (long long)shape[i]);
  const mlc_onnx_attr *v = mlc_fe_attr(n, "value");
  mlc_value *s;
  if (v && v->t) {
    if (v->t->numel != 1)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "value must have one element, it has %lld",
                          (long long)v->t->numel);
    mlc_type t = {v->t->dtype, 0, NULL};
    MLC_RETURN_IF_ERROR(mlc_module_add_const(cx->mod, NULL, &t, v->t->data, v->t->nbytes, &s));
  } else {
    MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_F32, 0, &s));
  }
  if (dyn) return mlc_fe_dyn_const_of_shape(cx, s, in[0], &out[0]);
  return broadcast_to(cx, s, shape, k, &out[0]);
}

/* ONNX Expand-8,13: Y = X broadcast with the shape input (numpy rules, both ways) */
MLC_FE_CVT(expand) {
  (void)n, (void)nin, (void)nout;
  mlc_value *x = in[0];
  int64_t *shape;
  int k;
  int known = !mlc_fe_const(cx, in[1]) && mlc_fe_known_dims(cx, in[1], &shape, &k); /* from shapes: dims */
  if (!known && !mlc_fe_const(cx, in[1])) return mlc_fe_dyn_expand(cx, x, in[1], &out[0]); /* run-time shape */
  if (!known) MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[1], "shape", &shape, &k));
  int rx = x->type.rank, r = rx > k ? rx : k;
  int64_t *dims = MLC_ARENA_ARRAY(cx->scratch, r > 0 ? (size_t)r : 1, int64_t);
  if (!dims) return mlc_oom();
  for (int i = 0; i < r; i++) {
    int64_t a = i - (r - rx) >= 0 ? x->type.dims[i - (r - rx)] : 1;
    int64_t b = i - (r - k) >= 0 ? shape[i - (r - k)] : 1;
    if (b < 0 && !known) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "shape has the negative dim %lld", (long long)b);
    if (a == b || b == 1) dims[i] = a;
    else if (a == 1) dims[i] = b;
    else if (known) return mlc_fe_dyn_expand(cx, x, in[1], &out[0]); /* decided when running */
    else if (MLC_DIM_IS_SYM(a))
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "cannot tell whether the symbolic dim %s is 1 or %lld",
                          mlc_module_sym_name(cx->mod, a), (long long)b);
    else
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "cannot broadcast %s to the shape given",
                          mlc_fe_shape_str(cx, &x->type));
  }
  return broadcast_to(cx, x, dims, r, &out[0]);
}

/* ONNX Size-1,13: Y = the number of elements of X (int64 scalar) */
MLC_FE_CVT(size) {
  (void)n, (void)nin, (void)nout;
  mlc_value *x = in[0];
  int64_t numel = mlc_type_numel(&x->type);
  if (numel < 0 && mlc_type_is_static(&x->type))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "the element count of %s overflows int64",
                        mlc_fe_shape_str(cx, &x->type));
  if (numel >= 0) {
    mlc_type t = {MLC_DTYPE_I64, 0, NULL};
    return mlc_module_add_const(cx->mod, NULL, &t, &numel, sizeof numel, &out[0]);
  }
  mlc_value *s;
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_SHAPE_OF, x, &s));
  int64_t zero = 0;
  mlc_attr a[2] = {mlc_attr_ints("axes", &zero, 1), mlc_attr_int("keepdims", 0)};
  return mlc_fe_emit(cx, MLC_OP_PROD, &s, 1, a, 2, &out[0]);
}

/* ---- Split -------------------------------------------------------------- */

/*
** Splits |x| along |axis| into |nout| parts of |sizes| (NULL: equal parts,
** the last one smaller when |uneven|), one strided_slice each.
*/
static mlc_status split(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, int64_t axis_attr,
                        const int64_t *sizes, int nsizes, int uneven, mlc_value **out, int nout) {
  int r = x->type.rank, axis;
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, axis_attr, r, "axis", &axis));
  int64_t d = x->type.dims[axis];
  if (MLC_DIM_IS_SYM(d))
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "splitting the symbolic dim %d of %s is not supported yet",
                        axis, mlc_fe_shape_str(cx, &x->type));
  int64_t *len = MLC_ARENA_ARRAY(cx->scratch, (size_t)nout + 1, int64_t);
  if (!len) return mlc_oom();
  if (sizes) {
    if (nsizes != nout)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "split has %d entries for %d outputs", nsizes, nout);
    int64_t sum = 0;
    for (int i = 0; i < nout; i++) {
      if (sizes[i] < 0) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "split[%d] is negative", i);
      len[i] = sizes[i];
      if (__builtin_add_overflow(sum, sizes[i], &sum))
        return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "split sums to more than int64 can hold (split[%d] is %lld)",
                            i, (long long)sizes[i]);
    }
    if (sum != d)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "split sums to %lld, the axis has %lld", (long long)sum,
                          (long long)d);
  } else {
    int64_t part = d / nout + (uneven && d % nout != 0);
    if (!uneven && d % nout != 0)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "axis of %lld cannot be split into %d equal parts",
                          (long long)d, nout);
    int64_t used = 0; /* <= d: no overflow */
    for (int i = 0; i < nout; i++) {
      len[i] = d - used < part ? d - used : part;
      used += len[i];
    }
  }
  size_t sz = r > 0 ? (size_t)r : 1;
  int64_t *b = MLC_ARENA_ARRAY(cx->scratch, sz, int64_t), *e = MLC_ARENA_ARRAY(cx->scratch, sz, int64_t);
  int64_t *s = MLC_ARENA_ARRAY(cx->scratch, sz, int64_t);
  if (!b || !e || !s) return mlc_oom();
  for (int i = 0; i < r; i++) {
    b[i] = 0;
    e[i] = MLC_DIM_IS_SYM(x->type.dims[i]) ? INT64_MAX : x->type.dims[i];
    s[i] = 1;
  }
  int64_t at = 0;
  for (int i = 0; i < nout; i++) {
    b[axis] = at;
    e[axis] = at + len[i];
    at += len[i];
    if (!mlc_fe_output_used(n, i)) continue;
    if (nout == 1) {
      out[i] = x;
      continue;
    }
    mlc_attr a[3] = {mlc_attr_ints("begin", b, r), mlc_attr_ints("end", e, r), mlc_attr_ints("step", s, r)};
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_SLICE, &x, 1, a, 3, &out[i]));
  }
  return NULL;
}

/* ONNX Split-1,2,11: outputs = X cut along axis by the split attribute (or,
** in 1, the second input), else in equal parts */
MLC_FE_CVT(split_v1) {
  const int64_t *sizes = NULL;
  int64_t *sz2 = NULL;
  int k = mlc_fe_attr_ints(n, "split", &sizes);
  if (nin > 1 && in[1]) {
    MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[1], "split", &sz2, &k));
    sizes = sz2;
  }
  return split(cx, n, in[0], mlc_fe_attr_int(n, "axis", 0), k >= 0 ? sizes : NULL, k, 0, out, nout);
}

/* Split with a run-time split input: one dynamic slice per output. */
static mlc_status split_dyn(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *const *in, mlc_value **out,
                            int nout) {
  int axis;
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, mlc_fe_attr_int(n, "axis", 0), in[0]->type.rank, "axis", &axis));
  return mlc_fe_dyn_split(cx, n, in[0], axis, in[1], out, nout);
}

/* ONNX Split-13: as Split-11 with split as an optional constant input */
MLC_FE_CVT(split_v13) {
  int64_t *sizes = NULL;
  int k = -1;
  if (nin > 1 && in[1] && !mlc_fe_const(cx, in[1])) return split_dyn(cx, n, in, out, nout);
  if (nin > 1 && in[1]) MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[1], "split", &sizes, &k));
  return split(cx, n, in[0], mlc_fe_attr_int(n, "axis", 0), sizes, k, 0, out, nout);
}

/* ONNX Split-18: as Split-13; without split, num_outputs parts of
** ceil(d / num_outputs), the last one smaller */
MLC_FE_CVT(split_v18) {
  int64_t *sizes = NULL;
  int k = -1;
  if (nin > 1 && in[1] && !mlc_fe_const(cx, in[1])) return split_dyn(cx, n, in, out, nout);
  if (nin > 1 && in[1]) MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[1], "split", &sizes, &k));
  if (!sizes && mlc_fe_attr_int(n, "num_outputs", nout) != nout)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "num_outputs is %lld, the node has %d outputs",
                        (long long)mlc_fe_attr_int(n, "num_outputs", nout), nout);
  return split(cx, n, in[0], mlc_fe_attr_int(n, "axis", 0), sizes, k, 1, out, nout);
}

/* ---- Tile, Pad, Range --------------------------------------------------- */

static mlc_status tile(mlc_fe_ctx *cx, mlc_value *x, const int64_t *rep, int k, mlc_value **out) {
  if (k != x->type.rank)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "repeats has %d entries for an input of rank %d", k,
                        x->type.rank);
  int ones = 1;
  for (int i = 0; i < k; i++) {
    if (rep[i] < 0) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "repeats[%d] is negative", i);
    ones &= rep[i] == 1;
  }
  if (ones) {
    *out = x;
    return NULL;
  }
  mlc_attr a = mlc_attr_ints("repeats", rep, k);
  return mlc_fe_emit(cx, MLC_OP_TILE, &x, 1, &a, 1, out);
}

/* ONNX Tile-1: Y = X repeated tiles times along axis (scalar inputs) */
MLC_FE_CVT(tile_v1) {
  (void)n, (void)nin, (void)nout;
  double tiles, axis;
  MLC_RETURN_IF_ERROR(mlc_fe_const_scalar(cx, in[1], "tiles", &tiles));
  MLC_RETURN_IF_ERROR(mlc_fe_const_scalar(cx, in[2], "axis", &axis));
  int r = in[0]->type.rank, a;
  /* Out of int64 (or NaN): no valid axis or count; the conversion would be undefined. */
  if (!(fabs(axis) < 0x1p62) || !(tiles >= 0 && tiles < 0x1p62))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "tiles %g or axis %g is out of range", tiles, axis);
  MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, (int64_t)axis, r, "axis", &a));
  int64_t *rep = MLC_ARENA_ARRAY(cx->scratch, r > 0 ? (size_t)r : 1, int64_t);
  if (!rep) return mlc_oom();
  for (int i = 0; i < r; i++) rep[i] = i == a ? (int64_t)tiles : 1;
  return tile(cx, in[0], rep, r, &out[0]);
}

/* ONNX Tile-6,13: Y = X repeated repeats[i] times along each axis i */
MLC_FE_CVT(tile_v6) {
  (void)n, (void)nin, (void)nout;
  int64_t *rep;
  int k;
  if (!mlc_fe_const(cx, in[1])) return mlc_fe_dyn_tile(cx, in[0], in[1], &out[0]); /* run-time repeats */
  MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[1], "repeats", &rep, &k));
  return tile(cx, in[0], rep, k, &out[0]);
}

MLC_FE_CHECK(pad) {
  (void)opset;
  const char *mode = mlc_fe_attr_str(n, "mode", "constant");
  if (strcmp(mode, "constant") != 0 && strcmp(mode, "reflect") != 0 && strcmp(mode, "edge") != 0)
    mlc_fe_problem(p, "mode \"%s\" not supported", mode);
}

static mlc_status pad(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x, const int64_t *pads, int k,
                      double value, mlc_value **out) {
  if (k != 2 * x->type.rank)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "pads has %d entries for an input of rank %d", k,
                        x->type.rank);
  int zero = 1;
  for (int i = 0; i < k; i++) zero &= pads[i] == 0;
  if (zero) {
    *out = x;
    return NULL;
  }
  mlc_attr a[3] = {mlc_attr_ints("pads", pads, k), mlc_attr_str("mode", mlc_fe_attr_str(n, "mode", "constant")),
                   mlc_attr_float("value", value)};
  return mlc_fe_emit(cx, MLC_OP_PAD, &x, 1, a, 3, out);
}

/* ONNX Pad-1,2: Y = X padded by the attribute paddings (1) / pads (2)
** (begins then ends), mode constant|reflect|edge, value */
MLC_FE_CVT(pad_v1) {
  (void)nin, (void)nout;
  const int64_t *pads;
  int k = mlc_fe_attr_ints(n, cx->opset < 2 ? "paddings" : "pads", &pads);
  if (k < 0) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "attribute %s is required", cx->opset < 2 ? "paddings" : "pads");
  return pad(cx, n, in[0], pads, k, mlc_fe_attr_float(n, "value", 0), &out[0]);
}

/* ONNX Pad-11,13,18: Y = X padded by the constant input pads, constant_value
** (optional), on axes (optional, 18) */
MLC_FE_CVT(pad_v11) {
  (void)nout;
  mlc_value *x = in[0];
  int64_t *pads, *axes = NULL;
  int k, ka = -1, r = x->type.rank;
  double value = 0;
  mlc_value *vin = nin > 2 ? in[2] : NULL, *ain = nin > 3 ? in[3] : NULL;
  if (!mlc_fe_const(cx, in[1]) || (vin && !mlc_fe_const(cx, vin)) || (ain && !mlc_fe_const(cx, ain)))
    return mlc_fe_dyn_pad(cx, n, x, in[1], vin, ain, &out[0]); /* run-time pads or value */
  MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[1], "pads", &pads, &k));
  if (nin > 2 && in[2]) MLC_RETURN_IF_ERROR(mlc_fe_const_scalar(cx, in[2], "constant_value", &value));
  if (nin > 3 && in[3]) MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, in[3], "axes", &axes, &ka));
  if (axes) {
    if (k != 2 * ka)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "pads has %d entries for %d axes", k, ka);
    int64_t *full = MLC_ARENA_ARRAY(cx->scratch, 2 * (size_t)r + 1, int64_t);
    if (!full) return mlc_oom();
    for (int i = 0; i < ka; i++) {
      int a;
      MLC_RETURN_IF_ERROR(mlc_fe_axis(cx, axes[i], r, "axis", &a));
      full[a] = pads[i];
      full[r + a] = pads[ka + i];
    }
    pads = full;
    k = 2 * r;
  }
  return pad(cx, n, x, pads, k, value, &out[0]);
}

/* ONNX Range-11: Y = start, start+delta, ... below limit (constant inputs:
** folded into a constant) */
MLC_FE_CVT(range) {
  (void)n, (void)nin, (void)nout;
  double v[3];
  static const char *const what[3] = {"start", "limit", "delta"};
  if (!mlc_fe_const(cx, in[0]) || !mlc_fe_const(cx, in[1]) || !mlc_fe_const(cx, in[2]))
    return mlc_fe_dyn_range(cx, in[0], in[1], in[2], &out[0]); /* length computed at run time */
  for (int i = 0; i < 3; i++) MLC_RETURN_IF_ERROR(mlc_fe_const_scalar(cx, in[i], what[i], &v[i]));
  mlc_dtype dt = in[0]->type.dtype;
  if (v[2] == 0) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "delta is 0");
  double cnt = ceil((v[1] - v[0]) / v[2]);
  if (!(cnt >= 0)) cnt = 0;
  if (cnt > (1 << 26)) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "a range of %.0f elements is too large", cnt);
  int64_t len = (int64_t)cnt;
  size_t nbytes = (size_t)len * mlc_dtype_size(dt);
  void *data = mlc_const_alloc(cx->mod, nbytes ? nbytes : 1);
  if (!data) return mlc_oom();
  for (int64_t i = 0; i < len; i++) mlc_fe_elem_set(dt, data, i, v[0] + (double)i * v[2]);
  mlc_type t = {dt, 1, &len};
  if (!nbytes) { /* adopt wants exactly numel * size bytes */
    mlc_const_free(cx->mod, data, 1);
    return mlc_module_add_const(cx->mod, NULL, &t, NULL, 0, &out[0]);
  }
  return mlc_module_adopt_const(cx->mod, NULL, &t, data, nbytes, &out[0]);
}

/* ---- DepthToSpace, SpaceToDepth ----------------------------------------- */

MLC_FE_CHECK(depth_to_space) {
  (void)opset;
  const char *mode = mlc_fe_attr_str(n, "mode", "DCR");
  if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0) mlc_fe_problem(p, "mode \"%s\" not supported", mode);
}

/* reshape(x, d1) -> permute_dims(perm) -> reshape(d2) */
static mlc_status shuffle(mlc_fe_ctx *cx, mlc_value *x, const int64_t *d1, int r1, const int64_t *perm,
                          const int64_t *d2, int r2, mlc_value **out) {
  mlc_value *y;
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, x, d1, r1, &y));
  mlc_attr a = mlc_attr_ints("perm", perm, r1);
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_TRANSPOSE, &y, 1, &a, 1, &y));
  return mlc_fe_reshape(cx, y, d2, r2, out);
}

/* The static C, H, W of a 4-D input and the blocksize attribute. */
static mlc_status space_dims(mlc_fe_ctx *cx, const mlc_onnx_node *n, const mlc_value *x, int64_t *c,
                             int64_t *h, int64_t *w, int64_t *b) {
  if (x->type.rank != 4)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "input must be 4-D, got %s", mlc_fe_shape_str(cx, &x->type));
  *c = x->type.dims[1], *h = x->type.dims[2], *w = x->type.dims[3];
  *b = mlc_fe_attr_int(n, "blocksize", 0);
  if (*b < 1) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "blocksize must be >= 1");
  if (MLC_DIM_IS_SYM(*c) || MLC_DIM_IS_SYM(*h) || MLC_DIM_IS_SYM(*w))
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "needs static C, H, W, the input is %s",
                        mlc_fe_shape_str(cx, &x->type));
  return NULL;
}

/*
** ONNX DepthToSpace-1,11,13: [N, C, H, W] -> [N, C/b^2, H*b, W*b]; mode DCR
** (default) reads depth as (b, b, C/b^2), CRD as (C/b^2, b, b).
*/
MLC_FE_CVT(depth_to_space) {
  (void)nin, (void)nout;
  mlc_value *x = in[0];
  int64_t c, h, w, b;
  MLC_RETURN_IF_ERROR(space_dims(cx, n, x, &c, &h, &w, &b));
  int64_t bb, hb, wb;
  if (__builtin_mul_overflow(b, b, &bb) || __builtin_mul_overflow(h, b, &hb) || __builtin_mul_overflow(w, b, &wb))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "blocksize %lld: the output extents overflow int64", (long long)b);
  if (c % bb != 0)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%lld channels are not divisible by blocksize^2 = %lld",
                        (long long)c, (long long)bb);
  int64_t nb = x->type.dims[0], cc = c / bb;
  int64_t d2[4] = {nb, cc, hb, wb};
  if (strcmp(mlc_fe_attr_str(n, "mode", "DCR"), "CRD") == 0) {
    int64_t d1[6] = {nb, cc, b, b, h, w}, perm[6] = {0, 1, 4, 2, 5, 3};
    return shuffle(cx, x, d1, 6, perm, d2, 4, &out[0]);
  }
  int64_t d1[6] = {nb, b, b, cc, h, w}, perm[6] = {0, 3, 4, 1, 5, 2};
  return shuffle(cx, x, d1, 6, perm, d2, 4, &out[0]);
}

/* ONNX SpaceToDepth-1,13: [N, C, H, W] -> [N, C*b^2, H/b, W/b] (DCR order) */
MLC_FE_CVT(space_to_depth) {
  (void)nin, (void)nout;
  mlc_value *x = in[0];
  int64_t c, h, w, b;
  MLC_RETURN_IF_ERROR(space_dims(cx, n, x, &c, &h, &w, &b));
  if (h % b != 0 || w % b != 0)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "spatial dims %s are not divisible by blocksize %lld",
                        mlc_fe_shape_str(cx, &x->type), (long long)b);
  int64_t nb = x->type.dims[0], cbb;
  if (__builtin_mul_overflow(c, b, &cbb) || __builtin_mul_overflow(cbb, b, &cbb))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "blocksize %lld: the output channels overflow int64", (long long)b);
  int64_t d1[6] = {nb, c, h / b, b, w / b, b}, perm[6] = {0, 3, 5, 1, 2, 4};
  int64_t d2[4] = {nb, cbb, h / b, w / b};
  return shuffle(cx, x, d1, 6, perm, d2, 4, &out[0]);
}
