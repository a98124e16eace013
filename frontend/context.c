/*
** context.c: what converters share (frontend_int.h): attributes with
** defaults, errors naming the node, constant inputs read as numbers, new
** small constants, emitting with the node's origin, axes and dim products;
** and one node through its converter (for the main graph and subgraphs).
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/half.h"
#include "base/hash.h"
#include "frontend/frontend_int.h"

/* ---- attributes --------------------------------------------------------- */

const mlc_onnx_attr *mlc_fe_attr(const mlc_onnx_node *n, const char *name) {
  for (int i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
  return NULL;
}

int64_t mlc_fe_attr_int(const mlc_onnx_node *n, const char *name, int64_t dflt) {
  const mlc_onnx_attr *a = mlc_fe_attr(n, name);
  return a && a->type == MLC_ONNX_ATTR_INT ? a->i : dflt;
}

double mlc_fe_attr_float(const mlc_onnx_node *n, const char *name, double dflt) {
  const mlc_onnx_attr *a = mlc_fe_attr(n, name);
  if (!a) return dflt;
  if (a->type == MLC_ONNX_ATTR_FLOAT) return a->f;
  if (a->type == MLC_ONNX_ATTR_INT) return (double)a->i;
  return dflt;
}

const char *mlc_fe_attr_str(const mlc_onnx_node *n, const char *name, const char *dflt) {
  const mlc_onnx_attr *a = mlc_fe_attr(n, name);
  return a && a->type == MLC_ONNX_ATTR_STRING && a->s ? a->s : dflt;
}

int mlc_fe_attr_ints(const mlc_onnx_node *n, const char *name, const int64_t **out) {
  const mlc_onnx_attr *a = mlc_fe_attr(n, name);
  if (!a || a->type != MLC_ONNX_ATTR_INTS) {
    *out = NULL;
    return -1;
  }
  *out = a->ints;
  return a->n;
}

int mlc_fe_output_used(const mlc_onnx_node *n, int i) {
  return i < n->noutputs && n->outputs[i] && n->outputs[i][0];
}

/* ---- errors ------------------------------------------------------------- */

const char *mlc_fe_node_label(const char *name, int index, int with_index, char *buf, size_t size) {
  if (!name || !name[0]) snprintf(buf, size, "node #%d", index);
  else if (with_index) snprintf(buf, size, "node \"%s\" #%d", name, index);
  else snprintf(buf, size, "node \"%s\"", name);
  return buf;
}

mlc_status mlc_fe_error(const mlc_fe_ctx *cx, mlc_code code, const char *fmt, ...) {
  char msg[1024], label[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  mlc_fe_node_label(cx->origin.node, cx->origin.index, 0, label, sizeof label);
  return mlc_make_status(code, "%s (%s, opset %d): %s", label, cx->origin.op_type, cx->origin.opset,
                         msg);
}

/* Element |i| of |data| (of |dt|) as a double; 0 for non-numeric types. */
static double load(mlc_dtype dt, const void *data, int64_t i) {
  switch (dt) {
  case MLC_DTYPE_F32: return ((const float *)data)[i];
  case MLC_DTYPE_F64: return ((const double *)data)[i];
  case MLC_DTYPE_F16: return mlc_f16_to_f32(((const uint16_t *)data)[i]);
  case MLC_DTYPE_BF16: return mlc_bf16_to_f32(((const uint16_t *)data)[i]);
  case MLC_DTYPE_I8: return ((const int8_t *)data)[i];
  case MLC_DTYPE_I16: return ((const int16_t *)data)[i];
  case MLC_DTYPE_I32: return ((const int32_t *)data)[i];
  case MLC_DTYPE_I64: return (double)((const int64_t *)data)[i];
  case MLC_DTYPE_U8: return ((const uint8_t *)data)[i];
  case MLC_DTYPE_U16: return ((const uint16_t *)data)[i];
  case MLC_DTYPE_U32: return ((const uint32_t *)data)[i];
  case MLC_DTYPE_U64: return (double)((const uint64_t *)data)[i];
  case MLC_DTYPE_BOOL: return ((const uint8_t *)data)[i] != 0;
  case MLC_DTYPE_STRING:
  case MLC_DTYPE_INVALID:
  case MLC_DTYPE_COUNT: break;
  }
  return 0;
}

/* Integer element |i| (exact for 64-bit types); *ok = 0 for non-integers. */
static int64_t load_int(mlc_dtype dt, const void *data, int64_t i, int *ok) {
  *ok = 1;
  switch (dt) {
  case MLC_DTYPE_I64: return ((const int64_t *)data)[i];
  case MLC_DTYPE_U64: {
    uint64_t u = ((const uint64_t *)data)[i];
    return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
  }
  case MLC_DTYPE_I8:
  case MLC_DTYPE_I16:
  case MLC_DTYPE_I32:
  case MLC_DTYPE_U8:
  case MLC_DTYPE_U16:
  case MLC_DTYPE_U32: return (int64_t)load(dt, data, i);
  default: *ok = 0; return 0;
  }
}

/* Clamps a double into the range of an integer type, truncating. */
static double clamp_int(double x, double lo, double hi) {
  if (isnan(x)) return 0;
  x = trunc(x);
  return x < lo ? lo : x > hi ? hi : x;
}

static void store(mlc_dtype dt, void *data, double x) {
  switch (dt) {
  case MLC_DTYPE_F32: *(float *)data = (float)x; break;
  case MLC_DTYPE_F64: *(double *)data = x; break;
  case MLC_DTYPE_F16: *(uint16_t *)data = mlc_f32_to_f16((float)x); break;
  case MLC_DTYPE_BF16: *(uint16_t *)data = mlc_f32_to_bf16((float)x); break;
  case MLC_DTYPE_I8: *(int8_t *)data = (int8_t)clamp_int(x, INT8_MIN, INT8_MAX); break;
  case MLC_DTYPE_I16: *(int16_t *)data = (int16_t)clamp_int(x, INT16_MIN, INT16_MAX); break;
  case MLC_DTYPE_I32: *(int32_t *)data = (int32_t)clamp_int(x, INT32_MIN, INT32_MAX); break;
  case MLC_DTYPE_I64:
    *(int64_t *)data = (int64_t)clamp_int(x, -9223372036854775808.0, 9223372036854774784.0);
    break;
  case MLC_DTYPE_U8: *(uint8_t *)data = (uint8_t)clamp_int(x, 0, UINT8_MAX); break;
  case MLC_DTYPE_U16: *(uint16_t *)data = (uint16_t)clamp_int(x, 0, UINT16_MAX); break;
  case MLC_DTYPE_U32: *(uint32_t *)data = (uint32_t)clamp_int(x, 0, UINT32_MAX); break;
  case MLC_DTYPE_U64: *(uint64_t *)data = (uint64_t)clamp_int(x, 0, 18446744073709549568.0); break;
  case MLC_DTYPE_BOOL: *(uint8_t *)data = x != 0; break;
  case MLC_DTYPE_STRING:
  case MLC_DTYPE_INVALID:
  case MLC_DTYPE_COUNT: break;
  }
}

double mlc_fe_elem_get(mlc_dtype dt, const void *data, int64_t i) { return load(dt, data, i); }

void mlc_fe_elem_set(mlc_dtype dt, void *data, int64_t i, double x) {
  store(dt, (char *)data + (size_t)i * mlc_dtype_size(dt), x);
}

/* ---- constants ---------------------------------------------------------- */

const mlc_const *mlc_fe_const(const mlc_fe_ctx *cx, const mlc_value *v) {
  return v ? mlc_value_const(cx->mod, v) : NULL;
}

mlc_status mlc_fe_const_ints(mlc_fe_ctx *cx, const mlc_value *v, const char *what, int64_t **out,
                             int *n) {
  const mlc_const *c = mlc_fe_const(cx, v);
  if (!c)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "%s computed at run time is not supported yet", what);
  if (c->type.rank > 1)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s must be a 1-D tensor, got rank %d", what,
                        c->type.rank);
  int64_t numel = mlc_type_numel(&c->type);
  if (numel < 0 || numel > 1 << 20)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s has too many elements", what);
  int64_t *d = MLC_ARENA_ARRAY(cx->scratch, numel ? (size_t)numel : 1, int64_t);
  if (!d) return mlc_oom();
  for (int64_t i = 0; i < numel; i++) {
    int ok;
    d[i] = load_int(c->type.dtype, c->data, i, &ok);
    if (!ok)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s must be an integer tensor, got %s", what,
                          mlc_dtype_name(c->type.dtype));
  }
  *out = d;
  *n = (int)numel;
  return NULL;
}

int mlc_fe_known_dims(mlc_fe_ctx *cx, const mlc_value *v, int64_t **dims, int *n) {
  const int64_t *vals;
  uint64_t sym;
  int k;
  if (!mlc_value_sym_ints(cx->mod, v, &vals, &sym, &k)) return 0;
  int64_t *d = MLC_ARENA_ARRAY(cx->scratch, k ? (size_t)k : 1, int64_t);
  if (!d) return 0;
  for (int i = 0; i < k; i++) {
    if (!((sym >> i) & 1) && vals[i] < 0) return 0;
    d[i] = vals[i];
  }
  *dims = d;
  *n = k;
  return 1;
}

mlc_status mlc_fe_const_scalar(mlc_fe_ctx *cx, const mlc_value *v, const char *what, double *out) {
  const mlc_const *c = mlc_fe_const(cx, v);
  if (!c)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "%s computed at run time is not supported yet", what);
  if (mlc_type_numel(&c->type) != 1 || c->type.dtype == MLC_DTYPE_STRING)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s must be a numeric scalar, got %s %s", what,
                        mlc_dtype_name(c->type.dtype), mlc_fe_shape_str(cx, &c->type));
  *out = load(c->type.dtype, c->data, 0);
  return NULL;
}

mlc_status mlc_fe_scalar(mlc_fe_ctx *cx, mlc_dtype dt, double x, mlc_value **out) {
  unsigned char buf[16] = {0};
  size_t sz = mlc_dtype_size(dt);
  if (sz == 0 || sz > sizeof buf)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "no scalar constants of type %s", mlc_dtype_name(dt));
  store(dt, buf, x);
  mlc_type t = {dt, 0, NULL};
  return mlc_module_add_const(cx->mod, NULL, &t, buf, sz, out);
}

mlc_status mlc_fe_const_i64(mlc_fe_ctx *cx, const int64_t *v, int n, mlc_value **out) {
  int64_t dim = n;
  mlc_type t = {MLC_DTYPE_I64, 1, &dim};
  return mlc_module_add_const(cx->mod, NULL, &t, v, sizeof(int64_t) * (size_t)n, out);
}

/* ---- emitting ----------------------------------------------------------- */

mlc_status mlc_fe_emit(mlc_fe_ctx *cx, mlc_op op, mlc_value *const *args, int nargs,
                       const mlc_attr *attrs, int nattrs, mlc_value **out) {
  return mlc_graph_emit1(cx->fn, op, args, nargs, attrs, nattrs, &cx->origin, out);
}

mlc_status mlc_fe_unary(mlc_fe_ctx *cx, mlc_op op, mlc_value *x, mlc_value **out) {
  return mlc_fe_emit(cx, op, &x, 1, NULL, 0, out);
}

mlc_status mlc_fe_binary(mlc_fe_ctx *cx, mlc_op op, mlc_value *a, mlc_value *b, mlc_value **out) {
  mlc_value *args[2] = {a, b};
  return mlc_fe_emit(cx, op, args, 2, NULL, 0, out);
}

mlc_status mlc_fe_reshape(mlc_fe_ctx *cx, mlc_value *x, const int64_t *dims, int rank,
                          mlc_value **out) {
  if (x->type.rank == rank && (rank == 0 || memcmp(x->type.dims, dims, sizeof *dims * (size_t)rank) == 0)) {
    *out = x;
    return NULL;
  }
  mlc_attr a = mlc_attr_ints("shape", dims, rank);
  return mlc_fe_emit(cx, MLC_OP_RESHAPE, &x, 1, &a, 1, out);
}

/* ---- shapes ------------------------------------------------------------- */

mlc_status mlc_fe_axis(const mlc_fe_ctx *cx, int64_t axis, int rank, const char *what, int *out) {
  if (axis < -(int64_t)rank || axis >= rank)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s %lld is out of range for rank %d", what,
                        (long long)axis, rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return NULL;
}

mlc_status mlc_fe_dim_product(const mlc_fe_ctx *cx, const int64_t *dims, int n, const char *what,
                              int64_t *out) {
  int64_t p = 1, sym = 0;
  int nsym = 0, zero = 0;
  for (int i = 0; i < n; i++) {
    if (MLC_DIM_IS_SYM(dims[i])) {
      nsym++;
      sym = dims[i];
    } else if (dims[i] == 0) {
      zero = 1;
    } else {
      if (p > INT64_MAX / dims[i])
        return mlc_fe_error(cx, MLC_OUT_OF_RANGE, "%s overflows int64", what);
      p *= dims[i];
    }
  }
  if (zero) p = 0;
  if (nsym == 0 || zero) {
    *out = p;
    return NULL;
  }
  if (nsym == 1 && p == 1) {
    *out = sym;
    return NULL;
  }
  return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                      "%s is a product of symbolic dims and is not supported yet", what);
}

const char *mlc_fe_shape_str(mlc_fe_ctx *cx, const mlc_type *t) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_sb_putc(&b, '(');
  for (int i = 0; i < t->rank; i++) {
    if (i) mlc_sb_puts(&b, ", ");
    if (MLC_DIM_IS_SYM(t->dims[i])) mlc_sb_puts(&b, mlc_module_sym_name(cx->mod, t->dims[i]));
    else mlc_sb_printf(&b, "%lld", (long long)t->dims[i]);
  }
  mlc_sb_puts(&b, t->rank == 1 ? ",)" : ")");
  const char *s = mlc_arena_strdup(cx->scratch, b.oom ? "(?)" : mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return s ? s : "(?)";
}

/* ---- one node ------------------------------------------------------------ */

mlc_status mlc_fe_convert_node(const mlc_fe_ctx *base, mlc_hash *vals, const mlc_onnx_node *n) {
  mlc_fe_ctx cx = *base;
  mlc_origin origin = {n->name, n->op_type, base->opset, n->index};
  cx.node = n;
  cx.origin = origin;
  /* The pre-flight check lets no such node through. */
  if (!mlc_fe_is_default_domain(n->domain))
    return mlc_fe_error(&cx, MLC_UNIMPLEMENTED, "op of domain \"%s\" not supported", n->domain);
  const mlc_fe_row *r = mlc_fe_lookup(n->op_type, cx.opset, NULL);
  if (!r || !r->cvt) return mlc_fe_error(&cx, MLC_INTERNAL, "%s", "no converter");
  /* The pre-flight check has reported this already; checked again so that
  ** no converter ever sees a node with too few or too many names. */
  char msg[256];
  if (mlc_fe_check_arity(r, n, msg, sizeof msg))
    return mlc_fe_error(&cx, MLC_INVALID_ARGUMENT, "%s", msg);
  int nin = n->ninputs, nout = n->noutputs;
  mlc_value **in = MLC_ARENA_ARRAY(cx.scratch, nin > 0 ? (size_t)nin : 1, mlc_value *);
  mlc_value **out = MLC_ARENA_ARRAY(cx.scratch, nout > 0 ? (size_t)nout : 1, mlc_value *);
  if (!in || !out) return mlc_oom();
  for (int i = 0; i < nin; i++) {
    if (!n->inputs[i][0]) continue; /* an omitted optional input stays NULL */
    in[i] = mlc_fe_scope_get(cx.scope, n->inputs[i]);
    if (!in[i]) /* callers convert a node once all its inputs have values */
      return mlc_fe_error(&cx, MLC_INTERNAL, "input \"%s\" has no value", n->inputs[i]);
  }
  MLC_RETURN_IF_ERROR(r->cvt(&cx, n, in, nin, out, nout));
  for (int i = 0; i < nout; i++) {
    const char *name = n->outputs[i];
    if (!name[0]) continue;
    if (!out[i])
      return mlc_fe_error(&cx, MLC_INTERNAL, "converter produced no value for output \"%s\"", name);
    if (!out[i]->name) {
      out[i]->name = mlc_arena_strdup(cx.mod->arena, name);
      if (!out[i]->name) return mlc_oom();
    }
    /* The map's key must outlive it: use the ONNX view's string. */
    if (mlc_hash_put(vals, name, out[i])) return mlc_oom();
  }
  return NULL;
}
