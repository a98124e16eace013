/*
** infer.c: the struct-info inference rules of the graph IR (one rule per
** `infer` name in ops.def).
**
** A rule reads its arguments' types and the call's attributes, validates
** both (attributes are normalized by the frontend, but a rule never trusts
** them: bad axes, wrong list lengths, zero strides are errors, not crashes)
** and writes the output types, whose dims live in the module arena.
**
** Dims < 0 are symbolic variables.  Rules keep results exact: equal symbols
** match, 1 broadcasts against a symbol, a symbolic batch passes through
** windows and contractions; anything that would need symbolic arithmetic (a
** symbolic spatial extent, a concat along a symbolic axis) is reported as
** MLC_UNIMPLEMENTED.  Every error goes through mlc_graph_call_error, so it
** names the ONNX node and the op.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MLC_GRAPH_INFER_SHORTHANDS
#include "graph/graph_int.h"

/* Largest rank a rule handles (stack buffers). */
#define MAX_RANK 64


/* ---- text of shapes for messages ---------------------------------------- */

typedef struct sbuf {
  char s[256];
  size_t n;
} sbuf;

static void put(sbuf *b, const char *s) {
  size_t l = strlen(s);
  if (b->n + l + 8 >= sizeof b->s) {
    if (b->n + 4 < sizeof b->s) memcpy(b->s + b->n, "...", 4), b->n = sizeof b->s;
    return;
  }
  memcpy(b->s + b->n, s, l + 1);
  b->n += l;
}

/* "n" for a symbol, "3" for a known extent. */
static const char *dim_str(const mlc_call_info *ci, int64_t d, char *buf, size_t size) {
  if (d >= 0) snprintf(buf, size, "%lld", LL(d));
  else snprintf(buf, size, "%s", mlc_module_sym_name(ci->mod, d));
  return buf;
}

/* "(2, n, 3)"; "(3,)" for rank 1; "()" for a scalar. */
static const char *shape_str(const mlc_call_info *ci, const int64_t *dims, int rank, sbuf *b) {
  char d[64];
  b->n = 0;
  b->s[0] = 0;
  put(b, "(");
  for (int i = 0; i < rank; i++) {
    if (i) put(b, ", ");
    put(b, dim_str(ci, dims[i], d, sizeof d));
  }
  put(b, rank == 1 ? ",)" : ")");
  return b->s;
}

static const char *type_shape(const mlc_call_info *ci, const mlc_type *t, sbuf *b) {
  return shape_str(ci, t->dims, t->rank, b);
}

/* Every argument has a valid dtype and a rank this file handles. */
static mlc_status check_args(const mlc_call_info *ci) {
  for (int i = 0; i < ci->nargs; i++) {
    const mlc_type *t = mlc_graph_arg(ci, i);
    if (t->dtype <= MLC_DTYPE_INVALID || t->dtype >= MLC_DTYPE_COUNT)
      return ERR("argument %d has an invalid dtype (%d)", i, (int)t->dtype);
    if (t->rank < 0) return ERR("argument %d has negative rank %d", i, t->rank);
    if (t->rank > MAX_RANK)
      return UNIMPL("argument %d has rank %d (at most %d)", i, t->rank, MAX_RANK);
  }
  return NULL;
}

/* Classes of dtypes an argument may have (graph.h; the op's own class for
** argument 0 is checked by mlc_graph_infer before its rule runs). */

static mlc_status need(const mlc_call_info *ci, int i, mlc_dtype_class k) {
  mlc_dtype t = mlc_graph_arg(ci, i)->dtype;
  if (mlc_dtype_class_has(k, t)) return NULL;
  return ERR("argument %d has dtype %s, expected %s", i, mlc_dtype_name(t), mlc_dtype_class_text(k));
}

static mlc_status same_dtype(const mlc_call_info *ci, int i, int j) {
  mlc_dtype a = mlc_graph_arg(ci, i)->dtype, b = mlc_graph_arg(ci, j)->dtype;
  if (a == b) return NULL;
  return ERR("argument dtypes differ: %s (argument %d) and %s (argument %d)", mlc_dtype_name(a), i,
             mlc_dtype_name(b), j);
}

/* An ints attribute; *n = -1 when absent. */
static mlc_status attr_ints(const mlc_call_info *ci, const char *name, const int64_t **v, int *n) {
  const mlc_attr *a = mlc_attrs_find(ci->attrs, ci->nattrs, name);
  *v = NULL;
  *n = -1;
  if (!a) return NULL;
  if (a->kind != MLC_ATTR_INTS || a->n < 0 || (a->n > 0 && !a->ints))
    return ERR("attribute %s must be a list of ints", name);
  *v = a->ints;
  *n = a->n;
  return NULL;
}

/* An ints attribute of exactly |len| entries (all |dflt| when absent). */
static mlc_status attr_ints_len(const mlc_call_info *ci, const char *name, int len, int64_t dflt,
                                int64_t *out) {
  const int64_t *v;
  int n;
  MLC_RETURN_IF_ERROR(attr_ints(ci, name, &v, &n));
  if (n >= 0 && n != len) return ERR("attribute %s has %d entries, expected %d", name, n, len);
  for (int i = 0; i < len; i++) out[i] = n < 0 ? dflt : v[i];
  return NULL;
}

/* An ints attribute that must be present, with |len| entries. */
static mlc_status attr_ints_req(const mlc_call_info *ci, const char *name, int len, int64_t *out) {
  if (!mlc_attrs_find(ci->attrs, ci->nattrs, name)) return ERR("attribute %s is missing", name);
  return attr_ints_len(ci, name, len, 0, out);
}

/* A dim in an attribute: known (>= 0) or a symbol of the module. */
static int valid_dim(const mlc_call_info *ci, int64_t d) {
  return d >= 0 || d >= -(int64_t)ci->mod->nsyms;
}

/* A shape attribute (required) with every dim valid; rank at most MAX_RANK. */
static mlc_status attr_shape(const mlc_call_info *ci, const char *name, int64_t *dims, int *rank) {
  const int64_t *v;
  int n;
  MLC_RETURN_IF_ERROR(attr_ints(ci, name, &v, &n));
  if (n < 0) return ERR("attribute %s is missing", name);
  if (n > MAX_RANK) return UNIMPL("attribute %s has rank %d (at most %d)", name, n, MAX_RANK);
  for (int i = 0; i < n; i++) {
    if (!valid_dim(ci, v[i]))
      return ERR("attribute %s[%d] = %lld is not a valid dim", name, i, LL(v[i]));
    dims[i] = v[i];
  }
  *rank = n;
  return NULL;
}

/* ---- overflow-checked dim arithmetic ------------------------------------ */

static int add_ovf(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r); }
static int mul_ovf(int64_t a, int64_t b, int64_t *r) { return __builtin_mul_overflow(a, b, r); }

/* ---- broadcasting ------------------------------------------------------- */

static int bcast_dim(int64_t a, int64_t b, int64_t *out) {
  if (a == b || b == 1) *out = a;
  else if (a == 1) *out = b;
  else return -1;
  return 0;
}

/* numpy broadcast of shapes |a| and |b| into |out| (may alias neither). */
static mlc_status bcast(const mlc_call_info *ci, const char *what, const int64_t *a, int ra,
                        const int64_t *b, int rb, int64_t *out, int *rout) {
  int r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
    if (bcast_dim(da, db, &out[i])) {
      sbuf x, y;
      return ERR("cannot broadcast %s %s and %s", what, shape_str(ci, a, ra, &x),
                 shape_str(ci, b, rb, &y));
    }
  }
  *rout = r;
  return NULL;
}

/* ---- elementwise -------------------------------------------------------- */

/* Float attributes a unary op reads (checked to be numbers). */
static mlc_status unary_attrs(const mlc_call_info *ci) {
  static const char *const names[] = {"alpha", "beta", "gamma", "lambd", "bias", "min", "max"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    MLC_RETURN_IF_ERROR(mlc_graph_attr_number(ci, names[i]));
  return NULL;
}

/* y = f(x): same type; softmax and log_softmax also check attr axis. */
mlc_status mlc_infer_unary(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(unary_attrs(ci));
  if (ci->op == MLC_OP_SOFTMAX || ci->op == MLC_OP_LOG_SOFTMAX) {
    int axis;
    MLC_RETURN_IF_ERROR(mlc_graph_attr_axis(ci, "axis", x->rank, x->rank - 1, &axis));
  }
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, x->dims, x->rank);
}

/* isnan/isinf: float x, bool y of the same shape. */
mlc_status mlc_infer_to_bool(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int f;
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "detect_positive", 1, &f));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "detect_negative", 1, &f));
  return mlc_graph_ret1(ci, outs, nouts, MLC_DTYPE_BOOL, x->dims, x->rank);
}

/* y = cast(x, attr dtype). */
mlc_status mlc_infer_cast(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t dt;
  MLC_RETURN_IF_ERROR(check_args(ci));
  if (!mlc_attrs_find(ci->attrs, ci->nattrs, "dtype")) return ERR("attribute dtype is missing");
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "dtype", 0, &dt));
  if (dt <= MLC_DTYPE_INVALID || dt >= MLC_DTYPE_COUNT || dt == MLC_DTYPE_STRING)
    return ERR("attribute dtype = %lld is not a castable dtype", LL(dt));
  return mlc_graph_ret1(ci, outs, nouts, (mlc_dtype)dt, x->dims, x->rank);
}

/* Broadcast shape of args 0 and 1 with |dt|; |same| requires equal dtypes. */
static mlc_status binary(const mlc_call_info *ci, mlc_type *outs, int *nouts, int same,
                         mlc_dtype dt) {
  const mlc_type *a = mlc_graph_arg(ci, 0), *b = mlc_graph_arg(ci, 1);
  int64_t dims[MAX_RANK];
  int rank, f;
  MLC_RETURN_IF_ERROR(need(ci, 1, mlc_op_dtypes[ci->op])); /* argument 0: mlc_graph_infer */
  if (same) MLC_RETURN_IF_ERROR(same_dtype(ci, 0, 1));
  if (ci->op == MLC_OP_MOD) MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "fmod", 0, &f));
  if (ci->op == MLC_OP_BITSHIFT) MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "right", 0, &f));
  MLC_RETURN_IF_ERROR(bcast(ci, "shapes", a->dims, a->rank, b->dims, b->rank, dims, &rank));
  return mlc_graph_ret1(ci, outs, nouts, dt, dims, rank);
}

/* y = a op b: equal dtypes, broadcast shape. */
mlc_status mlc_infer_binary(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  MLC_RETURN_IF_ERROR(check_args(ci));
  return binary(ci, outs, nouts, 1, mlc_graph_arg(ci, 0)->dtype);
}

/* y = a op b with the dtype of a (pow: the exponent's dtype may differ). */
mlc_status mlc_infer_binary_lhs(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  MLC_RETURN_IF_ERROR(check_args(ci));
  return binary(ci, outs, nouts, 0, mlc_graph_arg(ci, 0)->dtype);
}

/* y = a cmp b: equal dtypes, bool output. */
mlc_status mlc_infer_compare(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  MLC_RETURN_IF_ERROR(check_args(ci));
  return binary(ci, outs, nouts, 1, MLC_DTYPE_BOOL);
}

/* y = cond ? a : b: bool cond, equal dtypes of a and b, broadcast of all. */
mlc_status mlc_infer_where(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *c = mlc_graph_arg(ci, 0), *a = mlc_graph_arg(ci, 1), *b = mlc_graph_arg(ci, 2);
  int64_t d1[MAX_RANK], d2[MAX_RANK];
  int r1, r2;
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(need(ci, 1, MLC_DCLASS_ANY));
  MLC_RETURN_IF_ERROR(same_dtype(ci, 1, 2));
  MLC_RETURN_IF_ERROR(bcast(ci, "shapes", c->dims, c->rank, a->dims, a->rank, d1, &r1));
  MLC_RETURN_IF_ERROR(bcast(ci, "shapes", d1, r1, b->dims, b->rank, d2, &r2));
  return mlc_graph_ret1(ci, outs, nouts, a->dtype, d2, r2);
}

/* ---- reductions --------------------------------------------------------- */

/* Marks the reduced axes of a rank-|rank| input in |red| (all when empty). */
static mlc_status reduce_axes(const mlc_call_info *ci, int rank, unsigned char *red) {
  const int64_t *v;
  int n;
  MLC_RETURN_IF_ERROR(attr_ints(ci, "axes", &v, &n));
  memset(red, n > 0 ? 0 : 1, (size_t)rank);
  for (int i = 0; i < n; i++) {
    if (v[i] < 0 || v[i] >= rank)
      return ERR("axis %lld is out of range for rank %d", LL(v[i]), rank);
    if (red[v[i]]) return ERR("axis %lld is repeated in axes", LL(v[i]));
    red[v[i]] = 1;
  }
  return NULL;
}

/* Output dims of reducing |x| over |red|. */
static int reduced_dims(const mlc_type *x, const unsigned char *red, int keep, int64_t *dims) {
  int r = 0;
  for (int i = 0; i < x->rank; i++) {
    if (!red[i]) dims[r++] = x->dims[i];
    else if (keep) dims[r++] = 1;
  }
  return r;
}

/* sum/mean/max/min/prod over attr axes (empty = all), attr keepdims. */
mlc_status mlc_infer_reduce(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  unsigned char red[MAX_RANK];
  int64_t dims[MAX_RANK];
  int keep;
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(reduce_axes(ci, x->rank, red));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "keepdims", 1, &keep));
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, reduced_dims(x, red, keep, dims));
}

/* argmax/argmin along attr axis: int64 indices. */
mlc_status mlc_infer_argreduce(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  unsigned char red[MAX_RANK];
  int64_t dims[MAX_RANK];
  int axis, keep, last;
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_axis(ci, "axis", x->rank, 0, &axis));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "keepdims", 1, &keep));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "select_last_index", 0, &last));
  if (x->dims[axis] == 0) return ERR("axis %d has extent 0: no element to select", axis);
  memset(red, 0, (size_t)x->rank);
  red[axis] = 1;
  return mlc_graph_ret1(ci, outs, nouts, MLC_DTYPE_I64, dims, reduced_dims(x, red, keep, dims));
}

/* layer_norm(x, scale, bias): scale and bias broadcast into x[axis:]. */
static mlc_status check_layer_norm(const mlc_call_info *ci) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int axis;
  MLC_RETURN_IF_ERROR(mlc_graph_attr_axis(ci, "axis", x->rank, x->rank - 1, &axis));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_number(ci, "epsilon"));
  for (int i = 1; i < 3; i++) {
    const mlc_type *p = mlc_graph_arg(ci, i);
    int off = x->rank - p->rank;
    MLC_RETURN_IF_ERROR(same_dtype(ci, 0, i));
    for (int d = 0; d < p->rank; d++)
      if (off < axis || (p->dims[d] != 1 && p->dims[d] != x->dims[off + d])) {
        sbuf a, b;
        return ERR("argument %d of shape %s does not broadcast to the dims of %s from axis %d", i,
                   type_shape(ci, p, &a), type_shape(ci, x, &b), axis);
      }
  }
  return NULL;
}

/* y has the type of argument 0. */
mlc_status mlc_infer_first(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  MLC_RETURN_IF_ERROR(check_args(ci));
  if (ci->op == MLC_OP_LAYER_NORM) MLC_RETURN_IF_ERROR(check_layer_norm(ci));
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, x->dims, x->rank);
}

/* ---- matmul ------------------------------------------------------------- */

/* numpy matmul: 1-D operands are promoted (and the unit dim dropped again),
** batch dims broadcast, inner dims must agree. */
mlc_status mlc_infer_matmul(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *a = mlc_graph_arg(ci, 0), *b = mlc_graph_arg(ci, 1);
  int64_t dims[MAX_RANK + 2];
  int rank;
  sbuf x, y;
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(same_dtype(ci, 0, 1));
  if (a->rank < 1 || b->rank < 1)
    return ERR("operands must have rank >= 1, got %d and %d", a->rank, b->rank);
  int64_t ka = a->dims[a->rank - 1], kb = b->dims[b->rank == 1 ? 0 : b->rank - 2];
  if (ka != kb)
    return ERR("inner dims differ: %s @ %s", type_shape(ci, a, &x), type_shape(ci, b, &y));
  int ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
  MLC_RETURN_IF_ERROR(bcast(ci, "batch shapes", a->dims, ba, b->dims, bb, dims, &rank));
  if (a->rank > 1) dims[rank++] = a->dims[a->rank - 2];
  if (b->rank > 1) dims[rank++] = b->dims[b->rank - 1];
  return mlc_graph_ret1(ci, outs, nouts, a->dtype, dims, rank);
}

/* ---- windows: conv, conv_transpose, pools ------------------------------- */

typedef struct win {
  int k; /* spatial rank */
  int64_t kernel[MAX_RANK], stride[MAX_RANK], pad[2 * MAX_RANK], dil[MAX_RANK];
} win;

/* Reads strides, pads and (when |dil|) dilations for |k| spatial axes. */
static mlc_status read_win(const mlc_call_info *ci, int k, int dil, win *w) {
  w->k = k;
  MLC_RETURN_IF_ERROR(attr_ints_len(ci, "strides", k, 1, w->stride));
  MLC_RETURN_IF_ERROR(attr_ints_len(ci, "pads", 2 * k, 0, w->pad));
  MLC_RETURN_IF_ERROR(attr_ints_len(ci, "dilations", k, 1, w->dil));
  for (int i = 0; i < k; i++) {
    if (w->stride[i] < 1) return ERR("strides[%d] = %lld must be >= 1", i, LL(w->stride[i]));
    if (w->dil[i] < 1) return ERR("dilations[%d] = %lld must be >= 1", i, LL(w->dil[i]));
    if (!dil && w->dil[i] != 1)
      return UNIMPL("dilations are not supported (dilations[%d] = %lld)", i, LL(w->dil[i]));
  }
  for (int i = 0; i < 2 * k; i++)
    if (w->pad[i] < 0) return ERR("pads[%d] = %lld must be >= 0", i, LL(w->pad[i]));
  return NULL;
}

/* x must be [N, C, d1..dk] with known channels (spatial extents may be
** symbolic: the output's are then derived symbols). */
static mlc_status window_input(const mlc_call_info *ci, const mlc_type *x, int known_c) {
  sbuf s;
  if (x->rank < 3)
    return ERR("input %s must have rank >= 3 (N, C, spatial...)", type_shape(ci, x, &s));
  if (known_c && x->dims[1] < 0)
    return UNIMPL("symbolic channel count %s", mlc_module_sym_name(ci->mod, x->dims[1]));
  return NULL;
}

/* Padded extent and effective kernel extent of spatial axis |i|. */
static mlc_status extents(const mlc_call_info *ci, const win *w, int i, int64_t d, int64_t *padded,
                          int64_t *ek) {
  if (mul_ovf(w->dil[i], w->kernel[i] - 1, ek) || add_ovf(*ek, 1, ek) ||
      add_ovf(d, w->pad[i], padded) || add_ovf(*padded, w->pad[w->k + i], padded))
    return ERR("spatial axis %d: window arithmetic overflows", i);
  return NULL;
}

/* Symbolic |d|: the output extent as a derived symbol, and the run-time
** requirement that the padded input holds one window. */
static mlc_status window_out_sym(const mlc_call_info *ci, const win *w, int i, int64_t d, int ceil,
                                 int64_t *out) {
  mlc_module *m = ci->mod;
  int64_t ek, c, n, chk, s = w->stride[i];
  if (mul_ovf(w->dil[i], w->kernel[i] - 1, &ek) || add_ovf(ek, 1, &ek) ||
      add_ovf(w->pad[i], w->pad[w->k + i], &c) || add_ovf(c, -ek, &c))
    return ERR("spatial axis %d: window arithmetic overflows", i);
  MLC_RETURN_IF_ERROR(mlc_dim_add_const(m, d, c, ci->origin, &n)); /* n = d + pb + pe - ek */
  if (c < 0) {
    char what[160];
    snprintf(what, sizeof what, "spatial axis %d: the padded input is smaller than the kernel (%lld)",
             i, LL(ek));
    MLC_RETURN_IF_ERROR(mlc_dim_check(m, n, ci->origin, what, &chk));
  }
  if (!ceil) {
    MLC_RETURN_IF_ERROR(mlc_dim_floordiv_const(m, n, s, ci->origin, &n));
    return mlc_dim_add_const(m, n, 1, ci->origin, out);
  }
  /* ceil: ceil(n / s) + 1, less the last window unless it starts inside the
  ** input or its left padding: min(that, (d + pb - 1) // s + 1) */
  int64_t a, b;
  MLC_RETURN_IF_ERROR(mlc_dim_add_const(m, n, s - 1, ci->origin, &a));
  MLC_RETURN_IF_ERROR(mlc_dim_floordiv_const(m, a, s, ci->origin, &a));
  MLC_RETURN_IF_ERROR(mlc_dim_add_const(m, a, 1, ci->origin, &a));
  MLC_RETURN_IF_ERROR(mlc_dim_add_const(m, d, w->pad[i] - 1, ci->origin, &b));
  MLC_RETURN_IF_ERROR(mlc_dim_floordiv_const(m, b, s, ci->origin, &b));
  MLC_RETURN_IF_ERROR(mlc_dim_add_const(m, b, 1, ci->origin, &b));
  return mlc_dim_min(m, a, b, ci->origin, out);
}

/* out = floor((d + pb + pe - ek) / stride) + 1 (ceil: ONNX ceil_mode rule). */
static mlc_status window_out(const mlc_call_info *ci, const win *w, int i, int64_t d, int ceil,
                             int64_t *out) {
  int64_t padded = 0, ek = 0;
  if (d < 0) return window_out_sym(ci, w, i, d, ceil, out);
  MLC_RETURN_IF_ERROR(extents(ci, w, i, d, &padded, &ek));
  if (padded < ek) {
    *out = 0;
    if (d == 0) return NULL;
    return ERR("spatial axis %d: kernel extent %lld exceeds padded input extent %lld", i, LL(ek),
               LL(padded));
  }
  int64_t n = padded - ek, s = w->stride[i];
  *out = n / s + 1;
  if (ceil && n % s) { /* the extra window must start inside the input or left padding */
    int64_t start;
    *out += 1;
    if (mul_ovf(*out - 1, s, &start) || start >= d + w->pad[i]) *out -= 1;
  }
  return NULL;
}

/* Kernel extents from the weight's spatial dims (must be known, >= 1). */
static mlc_status weight_kernel(const mlc_call_info *ci, const mlc_type *wt, win *w) {
  sbuf s;
  for (int i = 0; i < wt->rank; i++)
    if (wt->dims[i] < 0) return UNIMPL("symbolic weight shape %s", type_shape(ci, wt, &s));
  for (int i = 0; i < w->k; i++) {
    w->kernel[i] = wt->dims[2 + i];
    if (w->kernel[i] < 1) return ERR("weight %s has an empty kernel", type_shape(ci, wt, &s));
  }
  return NULL;
}

/* Common checks of conv and conv_transpose: dtypes, ranks, groups, window. */
static mlc_status conv_common(const mlc_call_info *ci, int64_t *groups, win *w) {
  const mlc_type *x = mlc_graph_arg(ci, 0), *wt = mlc_graph_arg(ci, 1);
  sbuf s, t;
  MLC_RETURN_IF_ERROR(same_dtype(ci, 0, 1));
  MLC_RETURN_IF_ERROR(window_input(ci, x, 1));
  if (wt->rank != x->rank)
    return ERR("weight %s must have the rank of input %s", type_shape(ci, wt, &s),
               type_shape(ci, x, &t));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "groups", 1, groups));
  if (*groups < 1) return ERR("groups = %lld must be >= 1", LL(*groups));
  MLC_RETURN_IF_ERROR(read_win(ci, x->rank - 2, 1, w));
  return weight_kernel(ci, wt, w);
}

/* The optional bias (argument 2) must be [nout] of the input's dtype. */
static mlc_status check_bias(const mlc_call_info *ci, int64_t nout) {
  sbuf s;
  if (ci->nargs < 3) return NULL;
  const mlc_type *b = mlc_graph_arg(ci, 2);
  MLC_RETURN_IF_ERROR(same_dtype(ci, 0, 2));
  if (b->rank != 1 || b->dims[0] != nout)
    return ERR("bias %s must have shape (%lld,)", type_shape(ci, b, &s), LL(nout));
  return NULL;
}

/* conv: x [N, C, d...], w [M, C/groups, k...], bias [M] -> [N, M, out...]. */
mlc_status mlc_infer_conv(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0), *wt = mlc_graph_arg(ci, 1);
  int64_t groups, dims[MAX_RANK], cg;
  win w;
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(conv_common(ci, &groups, &w));
  int64_t m = wt->dims[0];
  if (mul_ovf(wt->dims[1], groups, &cg)) return ERR("weight channels*groups overflows");
  if (cg != x->dims[1])
    return ERR("input channels %lld != weight channels*groups %lld", LL(x->dims[1]), LL(cg));
  if (m % groups)
    return ERR("output channels %lld are not divisible by groups %lld", LL(m), LL(groups));
  MLC_RETURN_IF_ERROR(check_bias(ci, m));
  dims[0] = x->dims[0];
  dims[1] = m;
  for (int i = 0; i < w.k; i++)
    MLC_RETURN_IF_ERROR(window_out(ci, &w, i, x->dims[2 + i], 0, &dims[2 + i]));
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, x->rank);
}

/* out = stride*(d-1) + output_padding + dil*(k-1) + 1 - pb - pe. */
static mlc_status transpose_out(const mlc_call_info *ci, const win *w, int i, int64_t d, int64_t op,
                                int64_t *out) {
  int64_t padded = 0, ek = 0, v;
  if (d == 0) return ERR("spatial axis %d has extent 0", i);
  MLC_RETURN_IF_ERROR(extents(ci, w, i, 0, &padded, &ek));
  if (d < 0) { /* stride*d + (output_padding + ek - stride - pads), >= 1 */
    int64_t c, chk;
    if (add_ovf(op, ek, &c) || add_ovf(c, -w->stride[i], &c) || add_ovf(c, -padded, &c))
      return ERR("spatial axis %d: window arithmetic overflows", i);
    MLC_RETURN_IF_ERROR(mlc_dim_mul_const(ci->mod, d, w->stride[i], ci->origin, &v));
    MLC_RETURN_IF_ERROR(mlc_dim_add_const(ci->mod, v, c, ci->origin, out));
    if (c >= 1) return NULL;
    MLC_RETURN_IF_ERROR(mlc_dim_add_const(ci->mod, *out, -1, ci->origin, &v));
    char what[128];
    snprintf(what, sizeof what, "spatial axis %d: the output extent is < 1 (the pads crop all of it)", i);
    return mlc_dim_check(ci->mod, v, ci->origin, what, &chk);
  }
  if (mul_ovf(w->stride[i], d - 1, &v) || add_ovf(v, op, &v) || add_ovf(v, ek, &v))
    return ERR("spatial axis %d: window arithmetic overflows", i);
  *out = v - padded;
  if (*out < 1) return ERR("spatial axis %d: output extent %lld < 1", i, LL(*out));
  return NULL;
}

/* conv_transpose: x [N, C, d...], w [C, M/groups, k...] -> [N, M, out...]. */
mlc_status mlc_infer_conv_transpose(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0), *wt = mlc_graph_arg(ci, 1);
  int64_t groups, dims[MAX_RANK], opad[MAX_RANK], m;
  win w;
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(conv_common(ci, &groups, &w));
  MLC_RETURN_IF_ERROR(attr_ints_len(ci, "output_padding", w.k, 0, opad));
  if (wt->dims[0] != x->dims[1])
    return ERR("input channels %lld != weight input channels %lld", LL(x->dims[1]),
               LL(wt->dims[0]));
  if (x->dims[1] % groups)
    return ERR("input channels %lld are not divisible by groups %lld", LL(x->dims[1]), LL(groups));
  if (mul_ovf(wt->dims[1], groups, &m)) return ERR("output channels overflow");
  MLC_RETURN_IF_ERROR(check_bias(ci, m));
  dims[0] = x->dims[0];
  dims[1] = m;
  for (int i = 0; i < w.k; i++) {
    if (opad[i] < 0 || (opad[i] >= w.stride[i] && opad[i] >= w.dil[i]))
      return ERR("output_padding[%d] = %lld must be >= 0 and less than the stride or dilation", i,
                 LL(opad[i]));
    MLC_RETURN_IF_ERROR(transpose_out(ci, &w, i, x->dims[2 + i], opad[i], &dims[2 + i]));
  }
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, x->rank);
}

/* max_pool/avg_pool: x [N, C, d...] -> [N, C, out...]. */
mlc_status mlc_infer_pool(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t dims[MAX_RANK];
  int ceil, cip;
  win w;
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(window_input(ci, x, 0));
  MLC_RETURN_IF_ERROR(read_win(ci, x->rank - 2, ci->op == MLC_OP_MAX_POOL, &w));
  MLC_RETURN_IF_ERROR(attr_ints_req(ci, "kernel", w.k, w.kernel));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "ceil_mode", 0, &ceil));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "count_include_pad", 0, &cip));
  for (int i = 0; i < w.k; i++) {
    int64_t padded = 0, ek = 0;
    if (w.kernel[i] < 1) return ERR("kernel[%d] = %lld must be >= 1", i, LL(w.kernel[i]));
    MLC_RETURN_IF_ERROR(extents(ci, &w, i, 0, &padded, &ek));
    if (w.pad[i] >= ek || w.pad[w.k + i] >= ek)
      return ERR("pads %lld, %lld of spatial axis %d must be smaller than the kernel extent %lld",
                 LL(w.pad[i]), LL(w.pad[w.k + i]), i, LL(ek));
  }
  dims[0] = x->dims[0];
  dims[1] = x->dims[1];
  for (int i = 0; i < w.k; i++)
    MLC_RETURN_IF_ERROR(window_out(ci, &w, i, x->dims[2 + i], ceil, &dims[2 + i]));
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, x->rank);
}

/* ---- data movement ------------------------------------------------------ */

/* Product of the known dims and the sorted symbols of a shape (a derived
** x * c or x * y taken apart, so that [N, T * 4, 64] and [N, T, 256]
** agree). */
static int shape_parts(const mlc_module *m, const int64_t *dims, int rank, int64_t *known, int64_t *syms,
                       int *nsyms) {
  *known = 1;
  *nsyms = 0;
  for (int i = 0; i < rank; i++)
    if (mlc_dim_factors(m, dims[i], known, syms, nsyms, MAX_RANK)) return -1;
  for (int i = 1; i < *nsyms; i++) /* insertion sort: ranks are small */
    for (int j = i; j > 0 && syms[j - 1] > syms[j]; j--) {
      int64_t t = syms[j];
      syms[j] = syms[j - 1];
      syms[j - 1] = t;
    }
  return 0;
}

/* y = x viewed with attr shape; element counts must agree. */
mlc_status mlc_infer_reshape(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t dims[MAX_RANK], kx, ky, sx[MAX_RANK], sy[MAX_RANK];
  int rank, nx, ny;
  sbuf a, b;
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(attr_shape(ci, "shape", dims, &rank));
  if (shape_parts(ci->mod, x->dims, x->rank, &kx, sx, &nx) || shape_parts(ci->mod, dims, rank, &ky, sy, &ny))
    return ERR("element count overflows");
  int ok = kx == ky && nx == ny && memcmp(sx, sy, sizeof *sx * (size_t)nx) == 0;
  if (!ok && !(kx == 0 && ky == 0))
    return ERR("cannot reshape %s to %s: element counts differ", type_shape(ci, x, &a),
               shape_str(ci, dims, rank, &b));
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, rank);
}

/* y = x with axes permuted by attr perm (reversed when absent). */
mlc_status mlc_infer_transpose(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t perm[MAX_RANK], dims[MAX_RANK];
  unsigned char seen[MAX_RANK] = {0};
  MLC_RETURN_IF_ERROR(check_args(ci));
  for (int i = 0; i < x->rank; i++) perm[i] = x->rank - 1 - i;
  if (mlc_attrs_find(ci->attrs, ci->nattrs, "perm"))
    MLC_RETURN_IF_ERROR(attr_ints_len(ci, "perm", x->rank, 0, perm));
  for (int i = 0; i < x->rank; i++) {
    if (perm[i] < 0 || perm[i] >= x->rank || seen[perm[i]])
      return ERR("perm is not a permutation of the %d axes (entry %d = %lld)", x->rank, i,
                 LL(perm[i]));
    seen[perm[i]] = 1;
    dims[i] = x->dims[perm[i]];
  }
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, x->rank);
}

/* Extent of the concat axis: the sum of the extents, known or symbolic. */
static mlc_status concat_extent(const mlc_call_info *ci, int axis, int64_t *out) {
  int64_t sum = 0;
  for (int i = 0; i < ci->nargs; i++) {
    int64_t d = mlc_graph_arg(ci, i)->dims[axis];
    if (d >= 0 && sum >= 0) {
      if (add_ovf(sum, d, &sum)) return ERR("concatenated extent overflows");
    } else {
      MLC_RETURN_IF_ERROR(mlc_dim_add(ci->mod, sum, d, ci->origin, &sum));
    }
  }
  *out = sum;
  return NULL;
}

/* y = args joined along attr axis: same dtype and rank, other dims equal. */
mlc_status mlc_infer_concat(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t dims[MAX_RANK];
  int axis;
  sbuf a, b;
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_axis(ci, "axis", x->rank, 0, &axis));
  for (int i = 1; i < ci->nargs; i++) {
    const mlc_type *y = mlc_graph_arg(ci, i);
    MLC_RETURN_IF_ERROR(same_dtype(ci, 0, i));
    int bad = y->rank != x->rank;
    for (int d = 0; !bad && d < x->rank; d++) bad = d != axis && y->dims[d] != x->dims[d];
    if (bad)
      return ERR("argument %d of shape %s does not match %s outside axis %d", i,
                 type_shape(ci, y, &a), type_shape(ci, x, &b), axis);
  }
  memcpy(dims, x->dims, sizeof *dims * (size_t)x->rank);
  MLC_RETURN_IF_ERROR(concat_extent(ci, axis, &dims[axis]));
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, x->rank);
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Extent of x[begin:end:step] along an axis of known extent |d|.  begin and
** end are absolute indices (for a negative step, end = -1 runs through 0). */
static int64_t slice_extent(int64_t d, int64_t begin, int64_t end, int64_t step) {
  int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? d : d - 1;
  int64_t b = clamp64(begin, lo, hi), e = clamp64(end, lo, hi);
  uint64_t n = step > 0 ? (uint64_t)(e - b) : (uint64_t)(b - e);
  uint64_t s = step > 0 ? (uint64_t)step : -(uint64_t)step;
  if ((step > 0 && e <= b) || (step < 0 && b <= e)) return 0;
  return (int64_t)(n / s + (n % s != 0));
}

/* ---- slices of symbolic extent ---- */

/* begin, end or step at or beyond this (either sign) reach past any extent. */
#define SLICE_FAR ((int64_t)INT32_MAX)

/* 1 when dim |x| is never negative: known >= 0, a free or checked symbol,
** or arithmetic that keeps that. */
static int dim_nonneg(const mlc_module *m, int64_t x, int depth) {
  if (!MLC_DIM_IS_SYM(x)) return x >= 0;
  const mlc_sym_def *d = mlc_module_sym_def(m, x);
  if (!d || depth > 64) return 0;
  int b = d->b_sym ? dim_nonneg(m, d->b, depth + 1) : d->b >= 0;
  switch (d->op) {
    case MLC_SYM_FREE:
    case MLC_SYM_CHECK: return 1;
    case MLC_SYM_MUL:
    case MLC_SYM_FLOORDIV: return dim_nonneg(m, d->a, depth + 1);
    case MLC_SYM_ADD:
    case MLC_SYM_MIN: return dim_nonneg(m, d->a, depth + 1) && b;
    case MLC_SYM_MAX: return dim_nonneg(m, d->a, depth + 1) || b;
    default: return 0;
  }
}

/* max(x + c, lo) */
static mlc_status dim_add_max(const mlc_call_info *ci, int64_t x, int64_t c, int64_t lo, int64_t *out) {
  int64_t v;
  MLC_RETURN_IF_ERROR(mlc_dim_add_const(ci->mod, x, c, ci->origin, &v));
  if (lo == 0 && dim_nonneg(ci->mod, v, 0)) {
    *out = v;
    return NULL;
  }
  return mlc_dim_max(ci->mod, v, lo, ci->origin, out);
}

/*
** The extent of x[b:e:s] along axis |i| of symbolic extent |t|, with b and
** e as ONNX gives them (negative counts from the end; clamped as
** slice_extent does).  Each clamped index is, as a function of t,
** min(c, t) (P(c), c >= 0) or max(t + c, lo) (Q(c), c <= 0); for a negative
** step both are shifted by one (begin in [1, t], end in [0, t]).  The count
** of steps d = hi - lo is then an expression of min, max and constants,
** which exists whenever d grows with t; the other (rare) slices, such as
** x[-3:5], are UNIMPLEMENTED here (the frontend slices them at run time).
*/
static mlc_status slice_sym_extent(const mlc_call_info *ci, int i, int64_t t, int64_t b, int64_t e, int64_t s,
                                   int64_t *out) {
  mlc_module *m = ci->mod;
  int neg = s < 0;
  int64_t k = neg ? (s < -SLICE_FAR ? SLICE_FAR : -s) : (s > SLICE_FAR ? SLICE_FAR : s);
  int64_t hi, lo, d;
  int hq, lq, hq1 = 0; /* Q forms; hq1: hi is max(t + hi, 1) (a negative step's begin) */
  /* clamp the constants: far ends become 0 or t (t = Q(0)) */
  if (b > SLICE_FAR) b = SLICE_FAR;
  if (e > SLICE_FAR) e = SLICE_FAR;
  if (b < -SLICE_FAR) b = -SLICE_FAR;
  if (e < -SLICE_FAR) e = -SLICE_FAR;
  if (!neg) { /* hi = end, lo = begin */
    hq = e < 0 || e == SLICE_FAR;
    hi = e == SLICE_FAR ? 0 : e == -SLICE_FAR ? (hq = 0, 0) : e;
    lq = b < 0 || b == SLICE_FAR;
    lo = b == SLICE_FAR ? 0 : b == -SLICE_FAR ? (lq = 0, 0) : b;
  } else { /* hi = begin + 1 in [1, t], lo = end + 1 in [0, t] */
    hq = b < 0 || b == SLICE_FAR;
    hi = b == SLICE_FAR ? 0 : b == -SLICE_FAR ? (hq = 0, 1) : b + 1;
    hq1 = hq && b < -1; /* b = -1: max(t, 1) is t where the slice is not empty */
    lq = e < 0 || e == SLICE_FAR;
    lo = e == SLICE_FAR ? 0 : e == -SLICE_FAR ? (lq = 0, 0) : e + 1;
  }
  if (!hq && !lq) { /* min(h, t) - min(l, t) = min(max(t - l, 0), h - l) */
    if (hi <= lo) {
      *out = 0;
      return NULL;
    }
    MLC_RETURN_IF_ERROR(dim_add_max(ci, t, -lo, 0, &d));
    if (hi < SLICE_FAR) MLC_RETURN_IF_ERROR(mlc_dim_min(m, d, hi - lo, ci->origin, &d));
  } else if (hq && !lq) {
    if (hq1 && lo == 0) { /* t > 0: max(t + h, 1), else 0 */
      MLC_RETURN_IF_ERROR(dim_add_max(ci, t, hi, 1, &d));
      MLC_RETURN_IF_ERROR(mlc_dim_min(m, t, d, ci->origin, &d));
    } else { /* max(t + h, 0) - min(l, t) = max(t + h - l, 0) */
      MLC_RETURN_IF_ERROR(dim_add_max(ci, t, hi - lo, 0, &d));
    }
  } else if (hq && lq) { /* max(t + h, 0) - max(t + l, 0) = min(max(t + h, 0), h - l) */
    if (hi <= lo) {
      if (hq1) return UNIMPL("slice [%lld:%lld:%lld] of axis %d of symbolic extent %s (clamped to one "
                             "element on short axes)", LL(b), LL(e), LL(s), i, mlc_module_sym_name(m, t));
      *out = 0;
      return NULL;
    }
    MLC_RETURN_IF_ERROR(dim_add_max(ci, t, hi, hq1 ? 1 : 0, &d));
    MLC_RETURN_IF_ERROR(mlc_dim_min(m, d, hi - lo, ci->origin, &d));
    if (hq1) MLC_RETURN_IF_ERROR(mlc_dim_min(m, t, d, ci->origin, &d));
  } else { /* min(h, t) - max(t + l, 0): shrinks as t grows */
    if (hi == 0 || lo == 0) {
      *out = 0;
      return NULL;
    }
    return UNIMPL("slice [%lld:%lld:%lld] of axis %d of symbolic extent %s: its extent is no min/max "
                  "expression of %s", LL(b), LL(e), LL(s), i, mlc_module_sym_name(m, t),
                  mlc_module_sym_name(m, t));
  }
  if (k == 1) {
    *out = d;
    return NULL;
  }
  MLC_RETURN_IF_ERROR(mlc_dim_add_const(m, d, k - 1, ci->origin, &d)); /* ceil(d / k) */
  return mlc_dim_floordiv_const(m, d, k, ci->origin, out);
}

/* y = x[begin:end:step] per axis.  On a known extent begin and end are
** absolute indices; on a symbolic one they are ONNX's (negative counts from
** the end), the extent a derived symbol. */
mlc_status mlc_infer_slice(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t b[MAX_RANK], e[MAX_RANK], s[MAX_RANK], dims[MAX_RANK];
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(attr_ints_req(ci, "begin", x->rank, b));
  MLC_RETURN_IF_ERROR(attr_ints_req(ci, "end", x->rank, e));
  MLC_RETURN_IF_ERROR(attr_ints_req(ci, "step", x->rank, s));
  for (int i = 0; i < x->rank; i++) {
    int64_t d = x->dims[i];
    if (s[i] == 0) return ERR("step[%d] is 0", i);
    if (d >= 0) dims[i] = slice_extent(d, b[i], e[i], s[i]);
    else if (b[i] == 0 && s[i] == 1 && e[i] >= INT32_MAX) dims[i] = d;
    else MLC_RETURN_IF_ERROR(slice_sym_extent(ci, i, d, b[i], e[i], s[i], &dims[i]));
  }
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, x->rank);
}

/* y = take(x, indices, axis): x.shape[:axis] + indices.shape + x.shape[axis+1:]. */
mlc_status mlc_infer_gather(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0), *idx = mlc_graph_arg(ci, 1);
  int64_t dims[2 * MAX_RANK];
  int axis, r = 0;
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(need(ci, 1, MLC_DCLASS_INDEX));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_axis(ci, "axis", x->rank, 0, &axis));
  for (int i = 0; i < axis; i++) dims[r++] = x->dims[i];
  for (int i = 0; i < idx->rank; i++) dims[r++] = idx->dims[i];
  for (int i = axis + 1; i < x->rank; i++) dims[r++] = x->dims[i];
  if (r > MAX_RANK) return UNIMPL("output rank %d (at most %d)", r, MAX_RANK);
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, r);
}

/* y = x broadcast to attr shape (numpy, one-directional). */
mlc_status mlc_infer_broadcast_to(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t shape[MAX_RANK], dims[MAX_RANK];
  int rank, r;
  sbuf a, b;
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(attr_shape(ci, "shape", shape, &rank));
  mlc_status s = bcast(ci, "shapes", x->dims, x->rank, shape, rank, dims, &r);
  int bad = s || r != rank || memcmp(dims, shape, sizeof *dims * (size_t)rank) != 0;
  mlc_status_free(s);
  if (bad)
    return ERR("cannot broadcast shape %s to %s", type_shape(ci, x, &a),
               shape_str(ci, shape, rank, &b));
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, shape, rank);
}

/* One axis of pad: d + pb + pe, checked against the mode. */
static mlc_status pad_axis(const mlc_call_info *ci, int i, int64_t d, int64_t pb, int64_t pe,
                           const char *mode, int64_t *out) {
  if (d < 0) { /* d + pb + pe, with the mode's requirement checked when the model runs */
    int64_t c, chk, need = 0;
    char what[160];
    if (add_ovf(pb, pe, &c)) return ERR("axis %d: padded extent overflows", i);
    MLC_RETURN_IF_ERROR(mlc_dim_add_const(ci->mod, d, c, ci->origin, out));
    if (strcmp(mode, "reflect") == 0 && (pb > 0 || pe > 0)) {
      need = (pb > pe ? pb : pe) + 1;
      snprintf(what, sizeof what, "axis %d: reflect pads %lld, %lld need an extent of at least %lld",
               i, LL(pb), LL(pe), LL(need));
    } else if (strcmp(mode, "edge") == 0 && (pb > 0 || pe > 0)) {
      need = 1;
      snprintf(what, sizeof what, "axis %d: edge padding of an empty axis", i);
    } else if (pb < 0 || pe < 0) {
      need = (pb < 0 ? -pb : 0) + (pe < 0 ? -pe : 0);
      snprintf(what, sizeof what, "axis %d: pads %lld, %lld crop more than the extent", i, LL(pb),
               LL(pe));
    }
    if (need == 0) return NULL;
    int64_t v;
    MLC_RETURN_IF_ERROR(mlc_dim_add_const(ci->mod, d, -need, ci->origin, &v));
    return mlc_dim_check(ci->mod, v, ci->origin, what, &chk);
  }
  if (add_ovf(d, pb, out) || add_ovf(*out, pe, out))
    return ERR("axis %d: padded extent overflows", i);
  if (*out < 0)
    return ERR("axis %d: pads %lld, %lld crop more than the extent %lld", i, LL(pb), LL(pe),
               LL(d));
  if (strcmp(mode, "reflect") == 0 && (pb >= d || pe >= d) && (pb > 0 || pe > 0))
    return ERR("axis %d: reflect pads %lld, %lld must be less than the extent %lld", i, LL(pb),
               LL(pe), LL(d));
  if (strcmp(mode, "edge") == 0 && d == 0 && (pb > 0 || pe > 0))
    return ERR("axis %d: edge padding of an empty axis", i);
  return NULL;
}

/* y = pad(x, pads, mode, value). */
mlc_status mlc_infer_pad(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t pads[2 * MAX_RANK], dims[MAX_RANK];
  const mlc_attr *m = mlc_attrs_find(ci->attrs, ci->nattrs, "mode");
  const char *mode = m && m->kind == MLC_ATTR_STRING && m->s ? m->s : "constant";
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(attr_ints_req(ci, "pads", 2 * x->rank, pads));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_number(ci, "value"));
  if (m && m->kind != MLC_ATTR_STRING) return ERR("attribute mode must be a string");
  if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
    return ERR("mode \"%s\" is not constant, reflect or edge", mode);
  for (int i = 0; i < x->rank; i++)
    MLC_RETURN_IF_ERROR(pad_axis(ci, i, x->dims[i], pads[i], pads[x->rank + i], mode, &dims[i]));
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, x->rank);
}

/* y = x repeated attr repeats times per axis. */
mlc_status mlc_infer_tile(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t rep[MAX_RANK], dims[MAX_RANK];
  MLC_RETURN_IF_ERROR(check_args(ci));
  MLC_RETURN_IF_ERROR(attr_ints_req(ci, "repeats", x->rank, rep));
  for (int i = 0; i < x->rank; i++) {
    int64_t d = x->dims[i];
    if (rep[i] < 0) return ERR("repeats[%d] = %lld must be >= 0", i, LL(rep[i]));
    if (d < 0) MLC_RETURN_IF_ERROR(mlc_dim_mul_const(ci->mod, d, rep[i], ci->origin, &dims[i]));
    else if (mul_ovf(d, rep[i], &dims[i])) return ERR("axis %d: tiled extent overflows", i);
  }
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, x->rank);
}

/* y = shape of x: int64 [rank]. */
mlc_status mlc_infer_shape_of(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  int64_t n = mlc_graph_arg(ci, 0)->rank;
  MLC_RETURN_IF_ERROR(check_args(ci));
  return mlc_graph_ret1(ci, outs, nouts, MLC_DTYPE_I64, &n, 1);
}
