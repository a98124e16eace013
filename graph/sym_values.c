/*
** sym_values.c: the values of small integer vectors known when compiling
** though they are not constants (mlc_value.nsv).
**
** Exporters compute shapes from shapes: PyTorch writes an attention head
** split of x [N, T, 256] as
**
**   s = Shape(x); n = Gather(s, 0); t = Gather(s, 1)
**   y = Reshape(x, Concat(Unsqueeze(n), Unsqueeze(t), [4], [64]))
**
** With N and T symbolic nothing there is a constant, and a run-time reshape
** would give y fresh symbols that no later op can match with T (a matmul's
** inner dims would differ).  Tracking the values instead, shape_of(x) is
** [N, T, 256], the gathers N and T, the concat [N, T, 4, 64]: the reshape
** is static with symbolic dims (frontend/ops/tensor.c), and the shape ops
** die.  Each entry is an integer or a dim (a symbol, possibly derived:
** T * 4, (T + 1) // 2 from integer arithmetic on a known dim).
**
** Rules (a value is known when every argument is a known value or a small
** integer constant):
**   shape_of(x)                 the dims of x
**   take(v, i) (axis 0)         the entries at constant indices i
**   concat(v...) (axis 0)       the entries one after another
**   reshape (rank <= 1 to <= 1), cast (integer to integer): the same
**   strided_slice (rank 1)      the entries selected
**   add, subtract, multiply, divide, floor_divide: per entry (a scalar
**                               broadcast), on integers directly and on
**                               dims as mlc_dim_* arithmetic where it is
**                               one (dim + int, dim * int >= 0, dim / int
**                               > 0, dim + dim, dim * dim); anything else
**                               unknown
*/
#include <string.h>

#include "graph/graph_int.h"

#define MAX_SV 64

static int small_int(const mlc_type *t) {
  if (!mlc_dtype_is_int(t->dtype) || t->dtype == MLC_DTYPE_BOOL || t->dtype == MLC_DTYPE_U64) return 0;
  if (t->rank > 1) return 0;
  int64_t n = t->rank == 0 ? 1 : t->dims[0];
  return n >= 0 && n <= MAX_SV;
}

int mlc_value_sym_ints(mlc_module *m, const mlc_value *v, const int64_t **vals, uint64_t *sym, int *n) {
  if (!v || !small_int(&v->type)) return 0;
  if (v->nsv >= 0) {
    *vals = v->sv;
    *sym = v->sv_sym;
    *n = v->nsv;
    return 1;
  }
  const mlc_const *c = mlc_value_const(m, v);
  if (!c) return 0;
  int64_t len = v->type.rank == 0 ? 1 : v->type.dims[0];
  int64_t *out = MLC_ARENA_ARRAY(m->arena, (size_t)(len ? len : 1), int64_t);
  if (!out) return 0;
  for (int64_t i = 0; i < len; i++) {
    switch (v->type.dtype) {
      case MLC_DTYPE_I8: out[i] = ((const int8_t *)c->data)[i]; break;
      case MLC_DTYPE_I16: out[i] = ((const int16_t *)c->data)[i]; break;
      case MLC_DTYPE_I32: out[i] = ((const int32_t *)c->data)[i]; break;
      case MLC_DTYPE_I64: out[i] = ((const int64_t *)c->data)[i]; break;
      case MLC_DTYPE_U8: out[i] = ((const uint8_t *)c->data)[i]; break;
      case MLC_DTYPE_U16: out[i] = ((const uint16_t *)c->data)[i]; break;
      case MLC_DTYPE_U32: out[i] = ((const uint32_t *)c->data)[i]; break;
      default: return 0;
    }
  }
  *vals = out;
  *sym = 0;
  *n = (int)len;
  return 1;
}

/* Entry |i| of a known value (a scalar broadcasts). */
typedef struct kv {
  const int64_t *v;
  uint64_t sym;
  int n;
} kv;

static int get(mlc_module *m, const mlc_value *a, kv *k) { return mlc_value_sym_ints(m, a, &k->v, &k->sym, &k->n); }

static int is_sym(const kv *k, int i) { return k->n == 1 ? (int)(k->sym & 1) : (int)((k->sym >> i) & 1); }
static int64_t at(const kv *k, int i) { return k->n == 1 ? k->v[0] : k->v[i]; }

/* One entry of an integer binary op; 0 when it is no dim arithmetic we
** track (the whole value is then unknown). */
static int binary_entry(mlc_module *m, mlc_op op, const kv *a, const kv *b, int i, const mlc_origin *o,
                        int64_t *out, int *out_sym) {
  int sa = is_sym(a, i), sb = is_sym(b, i);
  int64_t x = at(a, i), y = at(b, i);
  mlc_status st = NULL;
  *out_sym = 1;
  if (!sa && !sb) { /* integers: as the evaluator computes them (truncating division) */
    *out_sym = 0;
    switch (op) {
      case MLC_OP_ADD: return !__builtin_add_overflow(x, y, out);
      case MLC_OP_SUB: return !__builtin_sub_overflow(x, y, out);
      case MLC_OP_MUL: return !__builtin_mul_overflow(x, y, out);
      case MLC_OP_DIV:
        if (y == 0 || (x == INT64_MIN && y == -1)) return 0;
        *out = x / y;
        return 1;
      default: return 0;
    }
  }
  switch (op) {
    case MLC_OP_ADD:
      if (sa && sb) st = mlc_dim_add(m, x, y, o, out);
      else st = sa ? mlc_dim_add_const(m, x, y, o, out) : mlc_dim_add_const(m, y, x, o, out);
      break;
    case MLC_OP_SUB:
      if (!sa || sb) return 0; /* dim - int only */
      if (y == INT64_MIN) return 0;
      st = mlc_dim_add_const(m, x, -y, o, out);
      break;
    case MLC_OP_MUL:
      if (sa && sb) {
        st = mlc_dim_mul(m, x, y, o, out);
        break;
      }
      if ((sa ? y : x) < 0) return 0;
      st = sa ? mlc_dim_mul_const(m, x, y, o, out) : mlc_dim_mul_const(m, y, x, o, out);
      break;
    case MLC_OP_DIV: /* a dim is >= 0: truncation is the floor */
      if (!sa || sb || y < 1) return 0;
      st = mlc_dim_floordiv_const(m, x, y, o, out);
      break;
    default: return 0;
  }
  if (st) {
    mlc_status_free(st);
    return 0;
  }
  /* a result that folded to a known extent is an integer */
  if (!MLC_DIM_IS_SYM(*out)) *out_sym = 0;
  return 1;
}

static const mlc_attr *attr(const mlc_attr *attrs, int n, const char *name) {
  return mlc_attrs_find(attrs, n, name);
}

/* The known values of |op|'s result of type |t| into out (*|n| entries,
** *|symp| the symbol mask); 0 when not known. */
static int known_values(mlc_module *m, mlc_op op, mlc_value *const *args, int nargs, const mlc_attr *attrs,
                        int nattrs, const mlc_origin *origin, const mlc_type *t, int64_t *out, uint64_t *symp,
                        int *np) {
  uint64_t sym = 0;
  int n = 0;
  if (!small_int(t)) return 0;
  kv a, b;
  switch (op) {
    case MLC_OP_SHAPE_OF: {
      const mlc_type *x = &args[0]->type;
      if (x->rank > MAX_SV) return 0;
      for (int i = 0; i < x->rank; i++) {
        out[n] = x->dims[i];
        if (MLC_DIM_IS_SYM(x->dims[i])) sym |= (uint64_t)1 << n;
        n++;
      }
      break;
    }
    case MLC_OP_GATHER: {
      if (nargs != 2 || mlc_attrs_int(attrs, nattrs, "axis", 0) != 0 || !get(m, args[0], &a) || !get(m, args[1], &b) ||
          b.sym)
        return 0;
      for (int i = 0; i < b.n; i++) {
        int64_t j = b.v[i] < 0 ? b.v[i] + a.n : b.v[i];
        if (j < 0 || j >= a.n) return 0;
        out[n] = a.v[j];
        if ((a.sym >> j) & 1) sym |= (uint64_t)1 << n;
        n++;
      }
      break;
    }
    case MLC_OP_CONCAT:
      if (mlc_attrs_int(attrs, nattrs, "axis", 0) != 0 && t->rank == 1) return 0;
      for (int k = 0; k < nargs; k++) {
        if (!get(m, args[k], &a) || n + a.n > MAX_SV) return 0;
        for (int i = 0; i < a.n; i++) {
          out[n] = a.v[i];
          if ((a.sym >> i) & 1) sym |= (uint64_t)1 << n;
          n++;
        }
      }
      break;
    case MLC_OP_RESHAPE:
    case MLC_OP_CAST:
      if (nargs != 1 || !get(m, args[0], &a) || !small_int(&args[0]->type)) return 0;
      if (op == MLC_OP_CAST && a.sym && mlc_dtype_size(t->dtype) < 8) return 0; /* dims may not fit */
      if (op == MLC_OP_CAST && t->dtype != MLC_DTYPE_I64 && t->dtype != MLC_DTYPE_I32) return 0;
      for (int i = 0; op == MLC_OP_CAST && t->dtype == MLC_DTYPE_I32 && i < a.n; i++)
        if (!((a.sym >> i) & 1) && (a.v[i] < INT32_MIN || a.v[i] > INT32_MAX)) return 0;
      n = a.n;
      memcpy(out, a.v, sizeof *out * (size_t)n);
      sym = a.sym;
      break;
    case MLC_OP_SLICE: {
      const mlc_attr *be = attr(attrs, nattrs, "begin"), *en = attr(attrs, nattrs, "end"),
                     *stp = attr(attrs, nattrs, "step");
      if (nargs != 1 || args[0]->type.rank != 1 || !get(m, args[0], &a) || !be || !en || !stp || be->n != 1 ||
          en->n != 1 || stp->n != 1 || stp->ints[0] == 0)
        return 0;
      for (int64_t i = be->ints[0]; stp->ints[0] > 0 ? i < en->ints[0] : i > en->ints[0]; i += stp->ints[0]) {
        if (i < 0 || i >= a.n || n >= MAX_SV) return 0;
        out[n] = a.v[i];
        if ((a.sym >> i) & 1) sym |= (uint64_t)1 << n;
        n++;
      }
      break;
    }
    case MLC_OP_ADD:
    case MLC_OP_SUB:
    case MLC_OP_MUL:
    case MLC_OP_DIV: {
      if (nargs != 2 || !get(m, args[0], &a) || !get(m, args[1], &b)) return 0;
      if (a.n != b.n && a.n != 1 && b.n != 1) return 0;
      n = a.n > b.n ? a.n : b.n;
      for (int i = 0; i < n; i++) {
        int s;
        if (!binary_entry(m, op, &a, &b, i, origin, &out[i], &s)) return 0;
        if (s) sym |= (uint64_t)1 << i;
      }
      break;
    }
    default: return 0;
  }
  int64_t len = t->rank == 0 ? 1 : t->dims[0];
  if (len != n) return 0; /* the type disagrees: leave it unknown */
  *symp = sym;
  *np = n;
  return 1;
}

int mlc_graph_known_values(mlc_module *m, mlc_op op, mlc_value *const *args, int nargs, const mlc_attr *attrs,
                          int nattrs, const mlc_origin *origin, const mlc_type *t, mlc_known_values *k) {
  return known_values(m, op, args, nargs, attrs, nattrs, origin, t, k->v, &k->sym, &k->n);
}

mlc_status mlc_value_set_known(mlc_module *m, mlc_value *v, const mlc_known_values *k) {
  int64_t *sv = MLC_ARENA_ARRAY(m->arena, (size_t)(k->n ? k->n : 1), int64_t);
  if (!sv) return mlc_oom();
  memcpy(sv, k->v, sizeof *sv * (size_t)k->n);
  v->sv = sv;
  v->sv_sym = k->sym;
  v->nsv = k->n;
  return NULL;
}

mlc_status mlc_graph_known_const(mlc_module *m, const mlc_type *t, const mlc_known_values *k, mlc_value **out) {
  size_t es = mlc_dtype_size(t->dtype);
  unsigned char buf[MAX_SV * 8];
  for (int i = 0; i < k->n; i++) {
    int64_t v = k->v[i];
    switch (t->dtype) { /* as a conversion to the dtype: the low bytes (little-endian) */
      case MLC_DTYPE_I8: case MLC_DTYPE_U8: buf[i] = (unsigned char)v; break;
      default: memcpy(buf + (size_t)i * es, &v, es); break;
    }
  }
  return mlc_module_add_const(m, NULL, t, buf, es * (size_t)k->n, out);
}
