/*
** eval.c: compile-time evaluation of ops on constant arguments (constant
** folding), behind mlc_graph_eval.
**
** Evaluation is generic over dtypes: each element is loaded as a double
** (float dtypes) or an int64 (integers and bool; uint64 keeps its bits and
** is compared and divided unsigned), computed, and stored back with the
** output dtype's conversion.  float16 and bfloat16 are computed in float32
** and rounded to nearest even.  Data-movement ops copy raw elements and do
** not look at dtypes at all.
**
** The output types come from the op's inference rule (graph/infer.c); the
** evaluator reads the same attributes with the same defaults (the op's
** attribute schema where it has them), so a folded constant always has
** exactly the inferred type.  The evaluator of an op is the family its
** ops.def row names (eval column; the table at the end of this file is
** generated from it); ops whose row says NONE, and ops or dtypes a family
** has no semantics for, return MLC_UNIMPLEMENTED before allocating
** anything, and the builder keeps the call.  No family folds an op it does
** not know as anything else (identity included).
*/
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/half.h"
#include "graph/graph_int.h"

/* Largest rank evaluated (the inference rules allow the same). */
#define MAX_RANK 64
/* Most multiply-adds a folded matmul may take. */
#define MATMUL_MAX_WORK ((int64_t)1 << 28)

#define ERR(code, ...) mlc_graph_call_error(ci, (code), __VA_ARGS__)
#define LL(x) ((long long)(x))

/* The arguments every evaluator family takes (graph_int.h). */
#define EVAL_PARAMS \
  const mlc_call_info *ci, const mlc_type *ot, const void *const *in, void **out

typedef mlc_status (*mlc_eval_fn)(EVAL_PARAMS);

static const mlc_type *arg(const mlc_call_info *ci, int i) { return &ci->args[i]->type; }

/* ---- loading and storing elements --------------------------------------- */

static int is_f(mlc_dtype t) { return mlc_dtype_is_float(t); }

/* Element |i| of |p| as a double. */
static double ldf(const void *p, mlc_dtype t, int64_t i) {
  switch (t) {
  case MLC_DTYPE_F32: return ((const float *)p)[i];
  case MLC_DTYPE_F64: return ((const double *)p)[i];
  case MLC_DTYPE_F16: return mlc_f16_to_f32(((const uint16_t *)p)[i]);
  case MLC_DTYPE_BF16: return mlc_bf16_to_f32(((const uint16_t *)p)[i]);
  case MLC_DTYPE_I8: return ((const int8_t *)p)[i];
  case MLC_DTYPE_I16: return ((const int16_t *)p)[i];
  case MLC_DTYPE_I32: return ((const int32_t *)p)[i];
  case MLC_DTYPE_I64: return (double)((const int64_t *)p)[i];
  case MLC_DTYPE_U8: case MLC_DTYPE_BOOL: return ((const uint8_t *)p)[i];
  case MLC_DTYPE_U16: return ((const uint16_t *)p)[i];
  case MLC_DTYPE_U32: return ((const uint32_t *)p)[i];
  case MLC_DTYPE_U64: return (double)((const uint64_t *)p)[i];
  default: return 0;
  }
}

/* Element |i| of an integer or bool tensor as int64 (uint64: its bits). */
static int64_t ldi(const void *p, mlc_dtype t, int64_t i) {
  switch (t) {
  case MLC_DTYPE_I8: return ((const int8_t *)p)[i];
  case MLC_DTYPE_I16: return ((const int16_t *)p)[i];
  case MLC_DTYPE_I32: return ((const int32_t *)p)[i];
  case MLC_DTYPE_I64: return ((const int64_t *)p)[i];
  case MLC_DTYPE_U8: case MLC_DTYPE_BOOL: return ((const uint8_t *)p)[i];
  case MLC_DTYPE_U16: return ((const uint16_t *)p)[i];
  case MLC_DTYPE_U32: return ((const uint32_t *)p)[i];
  case MLC_DTYPE_U64: return (int64_t)((const uint64_t *)p)[i];
  default: return 0;
  }
}

/* A double truncated toward zero into int64 (or uint64 bits when |uns|),
** saturating; NaN gives 0. */
static int64_t f2i(double v, int uns) {
  if (v != v) return 0;
  if (uns && v >= 18446744073709551616.0) return -1;
  if (uns && v >= 9223372036854775808.0) return (int64_t)(uint64_t)v;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* Stores an integer: truncated to integer dtypes, converted to floats
** (|uns|: |v| holds uint64 bits). */
static void sti(void *p, mlc_dtype t, int64_t i, int64_t v, int uns) {
  switch (t) {
  case MLC_DTYPE_F32: ((float *)p)[i] = uns ? (float)(uint64_t)v : (float)v; break;
  case MLC_DTYPE_F64: ((double *)p)[i] = uns ? (double)(uint64_t)v : (double)v; break;
  case MLC_DTYPE_F16: ((uint16_t *)p)[i] = mlc_f32_to_f16(uns ? (float)(uint64_t)v : (float)v); break;
  case MLC_DTYPE_BF16: ((uint16_t *)p)[i] = mlc_f32_to_bf16(uns ? (float)(uint64_t)v : (float)v); break;
  case MLC_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)v; break;
  case MLC_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)v; break;
  case MLC_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)v; break;
  case MLC_DTYPE_I64: ((int64_t *)p)[i] = v; break;
  case MLC_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case MLC_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
  case MLC_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
  case MLC_DTYPE_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
  case MLC_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  default: break;
  }
}

/* Stores a double: rounded to float dtypes, truncated into integers. */
static void stf(void *p, mlc_dtype t, int64_t i, double v) {
  switch (t) {
  case MLC_DTYPE_F32: ((float *)p)[i] = (float)v; break;
  case MLC_DTYPE_F64: ((double *)p)[i] = v; break;
  case MLC_DTYPE_F16: ((uint16_t *)p)[i] = mlc_f32_to_f16((float)v); break;
  case MLC_DTYPE_BF16: ((uint16_t *)p)[i] = mlc_f32_to_bf16((float)v); break;
  case MLC_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  default: sti(p, t, i, f2i(v, t == MLC_DTYPE_U64), 0); break;
  }
}

/* ---- shapes, iteration, output ------------------------------------------ */

static int64_t numel(const mlc_type *t) { return mlc_type_numel(t); }

static int64_t prod(const int64_t *d, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; i++) n *= d[i];
  return n;
}

/* Row-major element strides of |t|. */
static void strides_of(const mlc_type *t, int64_t *st) {
  int64_t s = 1;
  for (int i = t->rank - 1; i >= 0; i--) {
    st[i] = s;
    s *= t->dims[i];
  }
}

/* Walks a multi-index over |shape| and keeps an element offset per input. */
typedef struct iter {
  int rank, n;
  int64_t shape[MAX_RANK], idx[MAX_RANK];
  int64_t st[3][MAX_RANK];
  int64_t off[3];
} iter;

static void iter_init(iter *it, const mlc_type *shape, int n) {
  memset(it, 0, sizeof *it);
  it->rank = shape->rank;
  it->n = n;
  memcpy(it->shape, shape->dims, sizeof(int64_t) * (size_t)shape->rank);
}

/* Input |k| of type |t| read broadcast (numpy, right-aligned) into the shape. */
static void iter_bcast(iter *it, int k, const mlc_type *t) {
  int64_t s = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    it->st[k][d + it->rank - t->rank] = t->dims[d] == 1 ? 0 : s;
    s *= t->dims[d];
  }
}

static void iter_next(iter *it) {
  for (int d = it->rank - 1; d >= 0; d--) {
    for (int k = 0; k < it->n; k++) it->off[k] += it->st[k][d];
    if (++it->idx[d] < it->shape[d]) return;
    for (int k = 0; k < it->n; k++) it->off[k] -= it->st[k][d] * it->shape[d];
    it->idx[d] = 0;
  }
}

static size_t nbytes_of(const mlc_type *t) {
  return (size_t)numel(t) * mlc_dtype_size(t->dtype);
}

/* Allocates the output data for |ot| into *out. */
static mlc_status alloc_out(const mlc_call_info *ci, const mlc_type *ot, void **out) {
  *out = mlc_const_alloc(ci->mod, nbytes_of(ot));
  return *out ? NULL : mlc_oom();
}

static mlc_status fail(const mlc_call_info *ci, const mlc_type *ot, void **out, mlc_status s) {
  mlc_const_free(ci->mod, *out, nbytes_of(ot));
  *out = NULL;
  return s;
}

/* ---- elementwise unary -------------------------------------------------- */

typedef struct uparams {
  double alpha, beta, gamma, lambd, bias, lo, hi;
} uparams;

/* The float attributes of the unary ops; defaults from the op's schema. */
static uparams read_uparams(const mlc_call_info *ci) {
  const mlc_attr *a = ci->attrs;
  int n = ci->nattrs;
  uparams p;
  p.alpha = mlc_op_attr_float(ci->op, a, n, "alpha");
  p.beta = mlc_op_attr_float(ci->op, a, n, "beta");
  p.gamma = mlc_op_attr_float(ci->op, a, n, "gamma");
  p.lambd = mlc_op_attr_float(ci->op, a, n, "lambd");
  p.bias = mlc_op_attr_float(ci->op, a, n, "bias");
  p.lo = mlc_attrs_float(a, n, "min", -INFINITY);
  p.hi = mlc_attrs_float(a, n, "max", INFINITY);
  return p;
}

static double softplus(double x) { return x > 30 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

/* *y = f(x) in floating point; 0 when |op| has no float semantics here. */
static int unary_f(mlc_op op, double x, const uparams *p, double *y) {
  double r;
  switch (op) {
  case MLC_OP_ABS: r = fabs(x); break;
  case MLC_OP_NEG: r = -x; break;
  case MLC_OP_RELU: r = x < 0 ? 0 : x; break;
  case MLC_OP_SIGMOID: r = 1 / (1 + exp(-x)); break;
  case MLC_OP_TANH: r = tanh(x); break;
  case MLC_OP_EXP: r = exp(x); break;
  case MLC_OP_LOG: r = log(x); break;
  case MLC_OP_SQRT: r = sqrt(x); break;
  case MLC_OP_RECIPROCAL: r = 1 / x; break;
  case MLC_OP_ERF: r = erf(x); break;
  case MLC_OP_FLOOR: r = floor(x); break;
  case MLC_OP_CEIL: r = ceil(x); break;
  case MLC_OP_ROUND: r = nearbyint(x); break;
  case MLC_OP_SIGN: r = x > 0 ? 1 : x < 0 ? -1 : x; break;
  case MLC_OP_SIN: r = sin(x); break;
  case MLC_OP_COS: r = cos(x); break;
  case MLC_OP_TAN: r = tan(x); break;
  case MLC_OP_ASIN: r = asin(x); break;
  case MLC_OP_ACOS: r = acos(x); break;
  case MLC_OP_ATAN: r = atan(x); break;
  case MLC_OP_SINH: r = sinh(x); break;
  case MLC_OP_COSH: r = cosh(x); break;
  case MLC_OP_ASINH: r = asinh(x); break;
  case MLC_OP_ACOSH: r = acosh(x); break;
  case MLC_OP_ATANH: r = atanh(x); break;
  case MLC_OP_SOFTPLUS: r = softplus(x); break;
  case MLC_OP_SOFTSIGN: r = x / (1 + fabs(x)); break;
  case MLC_OP_LEAKY_RELU: r = x >= 0 ? x : p->alpha * x; break;
  case MLC_OP_ELU: r = x >= 0 ? x : p->alpha * expm1(x); break;
  case MLC_OP_SELU: r = p->gamma * (x > 0 ? x : p->alpha * expm1(x)); break;
  case MLC_OP_CELU: r = fmax(0, x) + fmin(0, p->alpha * expm1(x / p->alpha)); break;
  case MLC_OP_HARD_SIGMOID: r = clampd(p->alpha * x + p->beta, 0, 1); break;
  case MLC_OP_HARD_SWISH: r = x * clampd(x / 6 + 0.5, 0, 1); break;
  case MLC_OP_THRESHOLDED_RELU: r = x > p->alpha ? x : 0; break;
  case MLC_OP_SHRINK: r = x < -p->lambd ? x + p->bias : x > p->lambd ? x - p->bias : 0; break;
  case MLC_OP_CLIP: r = x < p->lo ? p->lo : x > p->hi ? p->hi : x; break;
  default: return 0;
  }
  *y = r;
  return 1;
}

/* *y = f(x) on integers and bool (|uns|: uint64 bits); 0 when |op| has no
** integer semantics here. */
static int unary_i(mlc_op op, int64_t x, int uns, const uparams *p, int64_t *y) {
  double xd = uns ? (double)(uint64_t)x : (double)x;
  switch (op) {
  case MLC_OP_ABS: *y = uns || x >= 0 ? x : (int64_t)(0 - (uint64_t)x); return 1;
  case MLC_OP_NEG: *y = (int64_t)(0 - (uint64_t)x); return 1;
  case MLC_OP_RELU: *y = uns || x >= 0 ? x : 0; return 1;
  case MLC_OP_SIGN: *y = uns ? x != 0 : (x > 0) - (x < 0); return 1;
  case MLC_OP_LOGICAL_NOT: *y = !x; return 1;
  case MLC_OP_CLIP:
    *y = xd < p->lo ? f2i(ceil(p->lo), uns) : xd > p->hi ? f2i(floor(p->hi), uns) : x;
    return 1;
  default: return 0;
  }
}

mlc_status mlc_graph_eval_unary(EVAL_PARAMS) {
  const mlc_type *x = arg(ci, 0);
  int64_t n = numel(ot), yi;
  double yf;
  uparams p = read_uparams(ci);
  int uns = x->dtype == MLC_DTYPE_U64, isf = is_f(x->dtype);
  /* an op this family does not know is never folded (as identity or else) */
  if (isf ? !unary_f(ci->op, 0, &p, &yf) : !unary_i(ci->op, 0, uns, &p, &yi))
    return ERR(MLC_UNIMPLEMENTED, "no evaluator for %s", mlc_dtype_name(x->dtype));
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  for (int64_t i = 0; i < n; i++) {
    if (isf) {
      unary_f(ci->op, ldf(in[0], x->dtype, i), &p, &yf);
      stf(*out, ot->dtype, i, yf);
    } else {
      unary_i(ci->op, ldi(in[0], x->dtype, i), uns, &p, &yi);
      sti(*out, ot->dtype, i, yi, uns);
    }
  }
  return NULL;
}

/* isnan / isinf (attrs detect_positive, detect_negative). */
mlc_status mlc_graph_eval_to_bool(EVAL_PARAMS) {
  const mlc_type *x = arg(ci, 0);
  int64_t n = numel(ot);
  if (ci->op != MLC_OP_ISNAN && ci->op != MLC_OP_ISINF) return ERR(MLC_UNIMPLEMENTED, "no evaluator");
  int pos = (int)mlc_op_attr_int(ci->op, ci->attrs, ci->nattrs, "detect_positive");
  int neg = (int)mlc_op_attr_int(ci->op, ci->attrs, ci->nattrs, "detect_negative");
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  for (int64_t i = 0; i < n; i++) {
    double v = ldf(in[0], x->dtype, i);
    int r = ci->op == MLC_OP_ISNAN ? v != v : isinf(v) && (v > 0 ? pos : neg);
    ((uint8_t *)*out)[i] = (uint8_t)r;
  }
  return NULL;
}

/* y = x converted to the output dtype. */
mlc_status mlc_graph_eval_cast(EVAL_PARAMS) {
  const mlc_type *x = arg(ci, 0);
  int64_t n = numel(ot);
  int uns = x->dtype == MLC_DTYPE_U64;
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  for (int64_t i = 0; i < n; i++) {
    if (is_f(x->dtype)) stf(*out, ot->dtype, i, ldf(in[0], x->dtype, i));
    else sti(*out, ot->dtype, i, ldi(in[0], x->dtype, i), uns);
  }
  return NULL;
}

/* ---- elementwise binary ------------------------------------------------- */

static double max_f(double a, double b) { return a != a ? a : b != b ? b : a > b ? a : b; }
static double min_f(double a, double b) { return a != a ? a : b != b ? b : a < b ? a : b; }

/* a mod b: C fmod, or (|fmod| 0) with the sign of the divisor. */
static double mod_f(double a, double b, int fmod_) {
  double r = fmod(a, b);
  if (!fmod_ && r != 0 && (r < 0) != (b < 0)) r += b;
  return r;
}

/* *r = a op b in floating point; 0 when |op| has no float semantics here. */
static int binary_f(mlc_op op, double a, double b, int flag, double *r) {
  switch (op) {
  case MLC_OP_ADD: *r = a + b; return 1;
  case MLC_OP_SUB: *r = a - b; return 1;
  case MLC_OP_MUL: *r = a * b; return 1;
  case MLC_OP_DIV: *r = a / b; return 1;
  case MLC_OP_POW: *r = pow(a, b); return 1;
  case MLC_OP_MOD: *r = mod_f(a, b, flag); return 1;
  case MLC_OP_MAXIMUM: *r = max_f(a, b); return 1;
  case MLC_OP_MINIMUM: *r = min_f(a, b); return 1;
  case MLC_OP_PRELU: *r = a < 0 ? a * b : a; return 1;
  default: return 0;
  }
}

static int lt_i(int64_t a, int64_t b, int uns) { return uns ? (uint64_t)a < (uint64_t)b : a < b; }

/* Integer a^b with wrap-around; negative exponents truncate toward 0. */
static int64_t pow_i(int64_t a, int64_t b, int uns) {
  uint64_t r = 1, x = (uint64_t)a, e = (uint64_t)b;
  if (!uns && b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
  for (; e; e >>= 1, x *= x)
    if (e & 1) r *= x;
  return (int64_t)r;
}

static int64_t mod_i(int64_t a, int64_t b, int uns, int fmod_) {
  if (uns) return (int64_t)((uint64_t)a % (uint64_t)b);
  if (b == -1) return 0;
  int64_t r = a % b;
  if (!fmod_ && r != 0 && (r < 0) != (b < 0)) r += b;
  return r;
}

static int64_t div_i(int64_t a, int64_t b, int uns) {
  if (uns) return (int64_t)((uint64_t)a / (uint64_t)b);
  return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}

static int64_t shift_i(int64_t a, int64_t b, int uns, int right) {
  if ((uint64_t)b >= 64) return 0;
  if (!right) return (int64_t)((uint64_t)a << b);
  return uns ? (int64_t)((uint64_t)a >> b) : a >> b;
}

/* a op b on integers (|uns|: uint64 bits); -1 on division by zero, -2
** when |op| has no integer semantics here. */
static int binary_i(mlc_op op, int64_t a, int64_t b, int uns, int flag, int64_t *r) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  if ((op == MLC_OP_DIV || op == MLC_OP_MOD) && b == 0) return -1;
  switch (op) {
  case MLC_OP_ADD: *r = (int64_t)(ua + ub); break;
  case MLC_OP_SUB: *r = (int64_t)(ua - ub); break;
  case MLC_OP_MUL: *r = (int64_t)(ua * ub); break;
  case MLC_OP_DIV: *r = div_i(a, b, uns); break;
  case MLC_OP_MOD: *r = mod_i(a, b, uns, flag); break;
  case MLC_OP_POW: *r = pow_i(a, b, uns); break;
  case MLC_OP_MAXIMUM: *r = lt_i(a, b, uns) ? b : a; break;
  case MLC_OP_MINIMUM: *r = lt_i(b, a, uns) ? b : a; break;
  case MLC_OP_PRELU: *r = uns || a >= 0 ? a : (int64_t)(ua * ub); break;
  case MLC_OP_BITSHIFT: *r = shift_i(a, b, uns, flag); break;
  case MLC_OP_LOGICAL_AND: *r = a && b; break;
  case MLC_OP_LOGICAL_OR: *r = a || b; break;
  case MLC_OP_LOGICAL_XOR: *r = !a != !b; break;
  default: return -2;
  }
  return 0;
}

/* A comparison: -1, 0 or 1 into a bool per op. */
static int compare(mlc_op op, int c) {
  switch (op) {
  case MLC_OP_EQUAL: return c == 0;
  case MLC_OP_LESS: return c < 0;
  case MLC_OP_LESS_EQUAL: return c <= 0;
  case MLC_OP_GREATER: return c > 0;
  default: return c >= 0; /* greater_equal */
  }
}

static int is_compare(mlc_op op) {
  return op == MLC_OP_EQUAL || op == MLC_OP_LESS || op == MLC_OP_LESS_EQUAL ||
         op == MLC_OP_GREATER || op == MLC_OP_GREATER_EQUAL;
}

/* A broadcast binary op being evaluated. */
typedef struct bin {
  mlc_op op;
  const mlc_type *a, *b, *ot;
  const void *pa, *pb;
  void *po;
  int flag; /* mod: fmod; bitshift: right */
} bin;

/* Output element |i| from the inputs at the iterator's offsets; -1 on an
** integer division by zero. */
static int binary_elem(const bin *c, const iter *it, int64_t i) {
  mlc_dtype ta = c->a->dtype, tb = c->b->dtype;
  int64_t ia = it->off[0], ib = it->off[1];
  int uns = ta == MLC_DTYPE_U64;
  if (is_compare(c->op) && is_f(ta)) {
    double x = ldf(c->pa, ta, ia), y = ldf(c->pb, tb, ib);
    int r = x != x || y != y ? 0 : compare(c->op, (x > y) - (x < y)); /* NaN: unordered */
    ((uint8_t *)c->po)[i] = (uint8_t)r;
  } else if (is_compare(c->op)) {
    int64_t x = ldi(c->pa, ta, ia), y = ldi(c->pb, tb, ib);
    ((uint8_t *)c->po)[i] = (uint8_t)compare(c->op, lt_i(y, x, uns) - lt_i(x, y, uns));
  } else if (is_f(ta) || is_f(tb)) { /* pow: an integer base with a float exponent too */
    double r = 0;
    binary_f(c->op, ldf(c->pa, ta, ia), ldf(c->pb, tb, ib), c->flag, &r);
    stf(c->po, c->ot->dtype, i, r);
  } else {
    int64_t r;
    if (binary_i(c->op, ldi(c->pa, ta, ia), ldi(c->pb, tb, ib), uns, c->flag, &r)) return -1;
    sti(c->po, c->ot->dtype, i, r, uns);
  }
  return 0;
}

/* 1 when the family evaluates |op| on these dtypes (probed on 1 op 1). */
static int binary_known(mlc_op op, mlc_dtype ta, mlc_dtype tb) {
  double rf;
  int64_t ri;
  if (is_compare(op)) return 1;
  if (is_f(ta) || is_f(tb)) return binary_f(op, 1, 1, 0, &rf);
  return binary_i(op, 1, 1, ta == MLC_DTYPE_U64, 0, &ri) != -2;
}

/* y = a op b with numpy broadcasting. */
mlc_status mlc_graph_eval_binary(EVAL_PARAMS) {
  const mlc_type *a = arg(ci, 0), *b = arg(ci, 1);
  int64_t n = numel(ot);
  const char *flag = ci->op == MLC_OP_MOD ? "fmod" : "right";
  iter it;
  if (!binary_known(ci->op, a->dtype, b->dtype))
    return ERR(MLC_UNIMPLEMENTED, "no evaluator for %s", mlc_dtype_name(a->dtype));
  iter_init(&it, ot, 2);
  iter_bcast(&it, 0, a);
  iter_bcast(&it, 1, b);
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  int fl = (int)mlc_op_attr_int(ci->op, ci->attrs, ci->nattrs, flag);
  bin c = {ci->op, a, b, ot, in[0], in[1], *out, fl};
  for (int64_t i = 0; i < n; i++, iter_next(&it))
    if (binary_elem(&c, &it, i))
      return fail(ci, ot, out, ERR(MLC_INVALID_ARGUMENT, "integer division by zero"));
  return NULL;
}

/* y = cond ? a : b with broadcasting (raw element copies). */
mlc_status mlc_graph_eval_where(EVAL_PARAMS) {
  int64_t n = numel(ot);
  size_t es = mlc_dtype_size(ot->dtype);
  iter it;
  iter_init(&it, ot, 3);
  for (int k = 0; k < 3; k++) iter_bcast(&it, k, arg(ci, k));
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  for (int64_t i = 0; i < n; i++, iter_next(&it)) {
    int k = ((const uint8_t *)in[0])[it.off[0]] ? 1 : 2;
    memcpy((char *)*out + (size_t)i * es, (const char *)in[k] + (size_t)it.off[k] * es, es);
  }
  return NULL;
}

/* ---- reductions --------------------------------------------------------- */

/* Marks reduced axes as the inference rule does (attr axes; empty = all). */
static void reduced_axes(const mlc_call_info *ci, int rank, unsigned char *red) {
  const mlc_attr *a = mlc_attrs_find(ci->attrs, ci->nattrs, "axes");
  int all = !a || a->kind != MLC_ATTR_INTS || a->n == 0;
  memset(red, all, (size_t)rank);
  for (int i = 0; !all && i < a->n; i++) red[a->ints[i]] = 1;
}

/* Smallest and largest value of an integer dtype (uint64: bits). */
static void int_range(mlc_dtype t, int64_t *lo, int64_t *hi) {
  int bits = (int)mlc_dtype_size(t) * 8;
  *lo = 0;
  if (t == MLC_DTYPE_BOOL) *hi = 1;
  else if (t == MLC_DTYPE_U64) *hi = -1; /* all bits set */
  else if (!mlc_dtype_is_signed(t)) *hi = (int64_t)((1ull << bits) - 1);
  else if (bits == 64) *lo = INT64_MIN, *hi = INT64_MAX;
  else *hi = ((int64_t)1 << (bits - 1)) - 1, *lo = -*hi - 1;
}

/* Accumulator state of a reduction. */
typedef struct racc {
  double *f;
  int64_t *i;
} racc;

static void reduce_init(mlc_op op, mlc_dtype t, racc *a, int64_t n) {
  int64_t lo = 0, hi = 0;
  double f0 = op == MLC_OP_PROD  ? 1
              : op == MLC_OP_MAX ? -INFINITY
              : op == MLC_OP_MIN ? INFINITY
                                 : 0;
  if (!is_f(t)) int_range(t, &lo, &hi);
  int64_t i0 = op == MLC_OP_PROD ? 1 : op == MLC_OP_MAX ? lo : op == MLC_OP_MIN ? hi : 0;
  for (int64_t k = 0; k < n; k++) {
    if (a->f) a->f[k] = f0;
    else a->i[k] = i0;
  }
}

static void reduce_step(mlc_op op, racc *a, int64_t o, const void *p, mlc_dtype t, int64_t i) {
  int uns = t == MLC_DTYPE_U64;
  if (a->f) {
    double v = ldf(p, t, i), *r = &a->f[o];
    if (op == MLC_OP_PROD) *r *= v;
    else if (op == MLC_OP_MAX) *r = v != v || v > *r ? v : *r;
    else if (op == MLC_OP_MIN) *r = v != v || v < *r ? v : *r;
    else *r += v;
    return;
  }
  int64_t v = ldi(p, t, i), *r = &a->i[o];
  if (op == MLC_OP_PROD) *r = (int64_t)((uint64_t)*r * (uint64_t)v);
  else if (op == MLC_OP_MAX) *r = lt_i(*r, v, uns) ? v : *r;
  else if (op == MLC_OP_MIN) *r = lt_i(v, *r, uns) ? v : *r;
  else *r = (int64_t)((uint64_t)*r + (uint64_t)v);
}

/* Stores the accumulators (mean divides by |count|); -1: integer mean of nothing. */
static int reduce_store(mlc_op op, const racc *a, const mlc_type *ot, void *po, int64_t count) {
  int64_t n = numel(ot);
  int uns = ot->dtype == MLC_DTYPE_U64;
  for (int64_t k = 0; k < n; k++) {
    if (a->f) stf(po, ot->dtype, k, op == MLC_OP_MEAN ? a->f[k] / (double)count : a->f[k]);
    else if (op == MLC_OP_MEAN && count == 0) return -1;
    else sti(po, ot->dtype, k, op == MLC_OP_MEAN ? div_i(a->i[k], count, uns) : a->i[k], uns);
  }
  return 0;
}

/* 1 for the ops the reduction family evaluates (others are never folded). */
static int is_reduce(mlc_op op) {
  return op == MLC_OP_SUM || op == MLC_OP_MEAN || op == MLC_OP_MAX || op == MLC_OP_MIN ||
         op == MLC_OP_PROD;
}

mlc_status mlc_graph_eval_reduce(EVAL_PARAMS) {
  const mlc_type *x = arg(ci, 0);
  if (!is_reduce(ci->op)) return ERR(MLC_UNIMPLEMENTED, "no evaluator");
  unsigned char red[MAX_RANK];
  int64_t n = numel(x), nout = numel(ot), ost = 1;
  size_t abytes = sizeof(double) * (size_t)(nout ? nout : 1);
  racc acc = {NULL, NULL};
  iter it;
  reduced_axes(ci, x->rank, red);
  iter_init(&it, x, 1);
  for (int d = x->rank - 1; d >= 0; d--) { /* output offsets of kept axes */
    it.st[0][d] = red[d] ? 0 : ost;
    ost *= red[d] ? 1 : x->dims[d];
  }
  void *mem = mlc_alloc(ci->mod->alloc, abytes);
  if (!mem) return mlc_oom();
  if (is_f(x->dtype)) acc.f = mem;
  else acc.i = mem;
  reduce_init(ci->op, x->dtype, &acc, nout);
  for (int64_t i = 0; i < n; i++, iter_next(&it))
    reduce_step(ci->op, &acc, it.off[0], in[0], x->dtype, i);
  mlc_status s = alloc_out(ci, ot, out);
  if (!s && reduce_store(ci->op, &acc, ot, *out, nout ? n / nout : 0))
    s = fail(ci, ot, out, ERR(MLC_INVALID_ARGUMENT, "integer mean over an empty set"));
  mlc_free(ci->mod->alloc, mem, abytes);
  return s;
}

/* outer x extent x inner view of |t| around |axis|. */
static void split_axis(const mlc_type *t, int axis, int64_t *outer, int64_t *ext, int64_t *inner) {
  *outer = prod(t->dims, 0, axis);
  *ext = t->dims[axis];
  *inner = prod(t->dims, axis + 1, t->rank);
}

/* Whether element |j| beats the best so far |b| (argmax: greater). */
static int arg_better(const void *p, mlc_dtype t, int64_t j, int64_t b, int max, int last) {
  int c;
  if (is_f(t)) {
    double x = ldf(p, t, j), y = ldf(p, t, b);
    c = (x > y) - (x < y);
  } else {
    int64_t x = ldi(p, t, j), y = ldi(p, t, b);
    int uns = t == MLC_DTYPE_U64;
    c = lt_i(y, x, uns) - lt_i(x, y, uns);
  }
  if (!max) c = -c;
  return c > 0 || (last && c == 0);
}

mlc_status mlc_graph_eval_argreduce(EVAL_PARAMS) {
  const mlc_type *x = arg(ci, 0);
  int axis = (int)mlc_attrs_int(ci->attrs, ci->nattrs, "axis", 0);
  int last = (int)mlc_attrs_int(ci->attrs, ci->nattrs, "select_last_index", 0);
  int64_t outer, ext, inner;
  int max = ci->op == MLC_OP_ARGMAX;
  if (!max && ci->op != MLC_OP_ARGMIN) return ERR(MLC_UNIMPLEMENTED, "no evaluator");
  split_axis(x, axis, &outer, &ext, &inner);
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * ext * inner + i, best = 0;
      for (int64_t j = 1; j < ext; j++)
        if (arg_better(in[0], x->dtype, base + j * inner, base + best * inner, max, last))
          best = j;
      ((int64_t *)*out)[o * inner + i] = best;
    }
  return NULL;
}

/* softmax / log_softmax along attr axis (default: the last). */
mlc_status mlc_graph_eval_softmax(EVAL_PARAMS) {
  const mlc_type *x = arg(ci, 0);
  if (ci->op != MLC_OP_SOFTMAX && ci->op != MLC_OP_LOG_SOFTMAX) return ERR(MLC_UNIMPLEMENTED, "no evaluator");
  int axis = (int)mlc_attrs_int(ci->attrs, ci->nattrs, "axis", x->rank - 1);
  int64_t outer, ext, inner;
  split_axis(x, axis, &outer, &ext, &inner);
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * ext * inner + i;
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < ext; j++) mx = max_f(mx, ldf(in[0], x->dtype, base + j * inner));
      for (int64_t j = 0; j < ext; j++) sum += exp(ldf(in[0], x->dtype, base + j * inner) - mx);
      for (int64_t j = 0; j < ext; j++) {
        double v = ldf(in[0], x->dtype, base + j * inner) - mx;
        double y = ci->op == MLC_OP_SOFTMAX ? exp(v) / sum : v - log(sum);
        stf(*out, ot->dtype, base + j * inner, y);
      }
    }
  return NULL;
}

/* ---- data movement ------------------------------------------------------ */

/* copy / reshape: the same bytes. */
mlc_status mlc_graph_eval_copy(EVAL_PARAMS) {
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  memcpy(*out, in[0], nbytes_of(ot));
  return NULL;
}

/* Copies every element of the iteration (input 0 at it->off[0]). */
static void gather_elems(iter *it, const mlc_type *ot, const void *src, void *dst) {
  int64_t n = numel(ot);
  size_t es = mlc_dtype_size(ot->dtype);
  for (int64_t i = 0; i < n; i++, iter_next(it))
    memcpy((char *)dst + (size_t)i * es, (const char *)src + (size_t)it->off[0] * es, es);
}

mlc_status mlc_graph_eval_transpose(EVAL_PARAMS) {
  const mlc_type *x = arg(ci, 0);
  const mlc_attr *perm = mlc_attrs_find(ci->attrs, ci->nattrs, "perm");
  int64_t st[MAX_RANK];
  iter it;
  strides_of(x, st);
  iter_init(&it, ot, 1);
  for (int i = 0; i < x->rank; i++)
    it.st[0][i] = st[perm && perm->n == x->rank ? perm->ints[i] : x->rank - 1 - i];
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  gather_elems(&it, ot, in[0], *out);
  return NULL;
}

mlc_status mlc_graph_eval_broadcast_to(EVAL_PARAMS) {
  iter it;
  iter_init(&it, ot, 1);
  iter_bcast(&it, 0, arg(ci, 0));
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  gather_elems(&it, ot, in[0], *out);
  return NULL;
}

/* x[begin:end:step]: the output extents come from inference; only the
** clamped begin is needed (for a negative step, begin is clamped to d-1). */
mlc_status mlc_graph_eval_slice(EVAL_PARAMS) {
  const mlc_type *x = arg(ci, 0);
  const mlc_attr *b = mlc_attrs_find(ci->attrs, ci->nattrs, "begin");
  const mlc_attr *s = mlc_attrs_find(ci->attrs, ci->nattrs, "step");
  int64_t st[MAX_RANK];
  iter it;
  strides_of(x, st);
  iter_init(&it, ot, 1);
  for (int i = 0; i < x->rank; i++) {
    int64_t step = s->ints[i], d = x->dims[i], v = b->ints[i];
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? d : d - 1;
    v = v < lo ? lo : v > hi ? hi : v;
    /* With one element on an axis the step is never taken: any int64 step
    ** is valid there, and st * step could overflow. */
    it.st[0][i] = ot->dims[i] > 1 ? st[i] * step : 0;
    if (ot->dims[i] > 0) it.off[0] += v * st[i];
  }
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  gather_elems(&it, ot, in[0], *out);
  return NULL;
}

mlc_status mlc_graph_eval_concat(EVAL_PARAMS) {
  int axis = (int)mlc_attrs_int(ci->attrs, ci->nattrs, "axis", 0);
  size_t es = mlc_dtype_size(ot->dtype), pos = 0;
  int64_t outer = prod(ot->dims, 0, axis), inner = prod(ot->dims, axis + 1, ot->rank);
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  for (int64_t o = 0; o < outer; o++)
    for (int k = 0; k < ci->nargs; k++) {
      size_t chunk = (size_t)(arg(ci, k)->dims[axis] * inner) * es;
      memcpy((char *)*out + pos, (const char *)in[k] + (size_t)o * chunk, chunk);
      pos += chunk;
    }
  return NULL;
}

/* take(x, indices, axis); negative indices wrap, others must be in range. */
mlc_status mlc_graph_eval_gather(EVAL_PARAMS) {
  const mlc_type *x = arg(ci, 0), *ix = arg(ci, 1);
  int axis = (int)mlc_attrs_int(ci->attrs, ci->nattrs, "axis", 0);
  int64_t outer, ext, inner, nidx = numel(ix);
  size_t es = mlc_dtype_size(x->dtype);
  split_axis(x, axis, &outer, &ext, &inner);
  for (int64_t j = 0; j < nidx; j++) {
    int64_t v = ldi(in[1], ix->dtype, j);
    if (v < -ext || v >= ext)
      return ERR(MLC_OUT_OF_RANGE, "index %lld out of range [%lld, %lld) on axis %d", LL(v), LL(-ext),
                 LL(ext), axis);
  }
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < nidx; j++) {
      int64_t v = ldi(in[1], ix->dtype, j);
      v += v < 0 ? ext : 0;
      memcpy((char *)*out + (size_t)((o * nidx + j) * inner) * es,
             (const char *)in[0] + (size_t)((o * ext + v) * inner) * es, (size_t)inner * es);
    }
  return NULL;
}

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE };

/* Source index along one axis for output index |o|; -1: the pad value. */
static int64_t pad_src(int64_t o, int64_t pb, int64_t d, int mode) {
  int64_t i = o - pb;
  if (i >= 0 && i < d) return i;
  if (mode == PAD_CONSTANT) return -1;
  if (mode == PAD_EDGE) return i < 0 ? 0 : d - 1;
  if (d == 1) return 0;
  int64_t period = 2 * (d - 1);
  i = ((i % period) + period) % period;
  return i < d ? i : period - i;
}

/* Offset in x of output multi-index |idx|; -1 for the pad value. */
static int64_t pad_offset(const mlc_type *x, const int64_t *idx, const int64_t *pads,
                          const int64_t *st, int mode) {
  int64_t off = 0;
  for (int d = 0; d < x->rank; d++) {
    int64_t s = pad_src(idx[d], pads[d], x->dims[d], mode);
    if (s < 0) return -1;
    off += s * st[d];
  }
  return off;
}

mlc_status mlc_graph_eval_pad(EVAL_PARAMS) {
  const mlc_type *x = arg(ci, 0);
  const mlc_attr *pads = mlc_attrs_find(ci->attrs, ci->nattrs, "pads");
  const char *m = mlc_attrs_str(ci->attrs, ci->nattrs, "mode", "constant");
  int mode = strcmp(m, "reflect") == 0 ? PAD_REFLECT
             : strcmp(m, "edge") == 0  ? PAD_EDGE
                                       : PAD_CONSTANT;
  int64_t st[MAX_RANK], n = numel(ot);
  size_t es = mlc_dtype_size(x->dtype);
  unsigned char value[8];
  iter it;
  stf(value, x->dtype, 0, mlc_attrs_float(ci->attrs, ci->nattrs, "value", 0.0));
  strides_of(x, st);
  iter_init(&it, ot, 0);
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  for (int64_t i = 0; i < n; i++, iter_next(&it)) {
    int64_t off = pad_offset(x, it.idx, pads->ints, st, mode);
    const void *src = off < 0 ? (const void *)value : (const char *)in[0] + (size_t)off * es;
    memcpy((char *)*out + (size_t)i * es, src, es);
  }
  return NULL;
}

mlc_status mlc_graph_eval_tile(EVAL_PARAMS) {
  const mlc_type *x = arg(ci, 0);
  int64_t st[MAX_RANK], n = numel(ot);
  size_t es = mlc_dtype_size(x->dtype);
  iter it;
  strides_of(x, st);
  iter_init(&it, ot, 0);
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  for (int64_t i = 0; i < n; i++, iter_next(&it)) {
    int64_t off = 0;
    for (int d = 0; d < x->rank; d++) off += it.idx[d] % x->dims[d] * st[d];
    memcpy((char *)*out + (size_t)i * es, (const char *)in[0] + (size_t)off * es, es);
  }
  return NULL;
}

mlc_status mlc_graph_eval_shape_of(EVAL_PARAMS) {
  const mlc_type *x = arg(ci, 0);
  if (!mlc_type_is_static(x)) return ERR(MLC_UNIMPLEMENTED, "shape_of a symbolic shape");
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  memcpy(*out, x->dims, sizeof(int64_t) * (size_t)x->rank);
  return NULL;
}

/* ---- matmul ------------------------------------------------------------- */

/* One [m, k] @ [k, n] product at element offsets |oa|, |ob|, |oc|. */
static void matmul_one(const mlc_type *ta, const void *a, int64_t oa, const void *b, int64_t ob,
                       const mlc_type *ot, void *c, int64_t oc, int64_t m, int64_t k, int64_t n) {
  mlc_dtype t = ta->dtype;
  int uns = t == MLC_DTYPE_U64;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double sf = 0;
      uint64_t si = 0;
      for (int64_t p = 0; p < k; p++) {
        if (is_f(t)) sf += ldf(a, t, oa + i * k + p) * ldf(b, t, ob + p * n + j);
        else si += (uint64_t)ldi(a, t, oa + i * k + p) * (uint64_t)ldi(b, t, ob + p * n + j);
      }
      if (is_f(t)) stf(c, ot->dtype, oc + i * n + j, sf);
      else sti(c, ot->dtype, oc + i * n + j, (int64_t)si, uns);
    }
}

/* The batch part of operand |t| (its dims before the last two) as a type. */
static mlc_type batch_type(const mlc_type *t) {
  mlc_type b = *t;
  b.rank = t->rank > 2 ? t->rank - 2 : 0;
  return b;
}

mlc_status mlc_graph_eval_matmul(EVAL_PARAMS) {
  const mlc_type *a = arg(ci, 0), *b = arg(ci, 1);
  int64_t k = a->dims[a->rank - 1];
  int64_t m = a->rank > 1 ? a->dims[a->rank - 2] : 1, n = b->rank > 1 ? b->dims[b->rank - 1] : 1;
  mlc_type ba = batch_type(a), bb = batch_type(b), bo = *ot;
  bo.rank = ot->rank - (a->rank > 1) - (b->rank > 1);
  int64_t nb = numel(&bo);
  if (k && nb * m * n > MATMUL_MAX_WORK / k)
    return ERR(MLC_UNIMPLEMENTED, "matmul too large to fold");
  iter it;
  iter_init(&it, &bo, 2);
  iter_bcast(&it, 0, &ba);
  iter_bcast(&it, 1, &bb);
  MLC_RETURN_IF_ERROR(alloc_out(ci, ot, out));
  for (int64_t i = 0; i < nb; i++, iter_next(&it))
    matmul_one(a, in[0], it.off[0] * m * k, in[1], it.off[1] * k * n, ot, *out, i * m * n, m, k, n);
  return NULL;
}

/* ---- dispatch ----------------------------------------------------------- */

/* Whether the evaluator handles these types (static, not string, rank). */
static int evaluable(const mlc_call_info *ci, const mlc_type *ot) {
  if (ot->dtype == MLC_DTYPE_STRING || ot->rank > MAX_RANK || numel(ot) < 0) return 0;
  for (int i = 0; i < ci->nargs; i++) {
    const mlc_type *t = arg(ci, i);
    if (t->dtype <= MLC_DTYPE_INVALID || t->dtype >= MLC_DTYPE_STRING) return 0;
    if (t->rank > MAX_RANK || numel(t) < 0) return 0;
  }
  return ot->dtype > MLC_DTYPE_INVALID && ot->dtype < MLC_DTYPE_STRING;
}

/* The evaluator of each op (ops.def column `eval`; NONE: not folded). */
#define mlc_graph_NONE NULL
static const mlc_eval_fn evaluators[MLC_OP_COUNT] = {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) mlc_graph_##ev,
#include "graph/ops.def"
#undef OP
};
#undef mlc_graph_NONE

mlc_status mlc_graph_eval(const mlc_call_info *ci, const mlc_type *out_types, int nouts,
                          const void *const *in, void **out) {
  if ((unsigned)ci->op >= MLC_OP_COUNT)
    return mlc_make_status(MLC_INTERNAL, "op code %d out of range", (int)ci->op);
  if (nouts != 1) return ERR(MLC_UNIMPLEMENTED, "no evaluator for %d outputs", nouts);
  if (ci->op == MLC_OP_SHAPE_OF && ci->nargs == 1 && !mlc_type_is_static(arg(ci, 0)))
    return ERR(MLC_UNIMPLEMENTED, "shape_of a symbolic shape");
  if (!evaluable(ci, &out_types[0])) return ERR(MLC_UNIMPLEMENTED, "no evaluator for these types");
  out[0] = NULL;
  if (!evaluators[ci->op]) return ERR(MLC_UNIMPLEMENTED, "no evaluator");
  return evaluators[ci->op](ci, &out_types[0], in, out);
}
