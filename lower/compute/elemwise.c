/*
** elemwise.c: lowering rules for elementwise unary, broadcast binary and
** where (TOPI's elemwise.h / broadcast.h).
**
** Every rule is one compute stage over the output's index space; arguments
** are read with numpy broadcasting through mlc_lg_arg_bcast.  Integer
** division and modulo follow ONNX (truncating Div; Mod with fmod=0 takes
** the divisor's sign); division by zero yields 0 rather than trapping.
*/
#include <math.h>

#include "lower/lower_int.h"

#define M (c->tm)

static int out_rank(mlc_lg_call *c) { return c->out_types[0].rank; }

static mlc_tir_expr *fimm(mlc_lg_call *c, mlc_dtype dt, double v) { return mlc_lg_imm(c, dt, v); }

/* Float math on |x| in the compute dtype (f16/bf16 are widened by codegen). */
static mlc_tir_expr *call1(mlc_lg_call *c, mlc_tir_intrin op, mlc_tir_expr *x) {
  return mlc_tir_call1(M, op, x);
}

/* An op routed to this family without an expression here (its ops.def row
** names the wrong rule, or the expression was never written): an error
** naming the node and op, recorded in the builder. */
static mlc_tir_expr *no_expr(mlc_lg_call *c) {
  return mlc_te_fail(c->b, mlc_lg_error(c, MLC_UNIMPLEMENTED, "no %s expression for this op in the elementwise rules",
                                        c->nargs == 1 ? "unary" : "binary"));
}

/* Float attribute |name| of the call, or its default from the op's schema. */
static double attr_f(mlc_lg_call *c, const char *name) {
  return mlc_op_attr_float(c->op, c->attrs, c->nattrs, name);
}

/* The unary op |c->op| applied to |x| (dtype |dt|). */
static mlc_tir_expr *unary_expr(mlc_lg_call *c, mlc_tir_expr *x, mlc_dtype dt) {
  if (!x) return NULL;
  int isf = mlc_dtype_is_float(dt);
  mlc_tir_expr *zero = fimm(c, dt, 0), *one = fimm(c, dt, 1);
  switch (c->op) {
    case MLC_OP_COPY: return x;
    case MLC_OP_ABS: return call1(c, MLC_TIR_INTRIN_ABS, x);
    case MLC_OP_NEG: return mlc_tir_sub(M, zero, x);
    case MLC_OP_RELU: return mlc_tir_max(M, x, zero);
    case MLC_OP_SIGMOID: return call1(c, MLC_TIR_INTRIN_SIGMOID, x);
    case MLC_OP_TANH: return call1(c, MLC_TIR_INTRIN_TANH, x);
    case MLC_OP_EXP: return call1(c, MLC_TIR_INTRIN_EXP, x);
    case MLC_OP_LOG: return call1(c, MLC_TIR_INTRIN_LOG, x);
    case MLC_OP_SQRT: return call1(c, MLC_TIR_INTRIN_SQRT, x);
    case MLC_OP_RECIPROCAL: return mlc_tir_binary(M, MLC_TIR_DIV, one, x);
    case MLC_OP_ERF: return call1(c, MLC_TIR_INTRIN_ERF, x);
    case MLC_OP_FLOOR: return isf ? call1(c, MLC_TIR_INTRIN_FLOOR, x) : x;
    case MLC_OP_CEIL: return isf ? call1(c, MLC_TIR_INTRIN_CEIL, x) : x;
    case MLC_OP_ROUND: return isf ? call1(c, MLC_TIR_INTRIN_ROUND, x) : x;
    case MLC_OP_SIGN:
      return mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_GT, x, zero), one,
                            mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_LT, x, zero),
                                           fimm(c, dt, -1), zero));
    case MLC_OP_SIN: return call1(c, MLC_TIR_INTRIN_SIN, x);
    case MLC_OP_COS: return call1(c, MLC_TIR_INTRIN_COS, x);
    case MLC_OP_TAN: return call1(c, MLC_TIR_INTRIN_TAN, x);
    case MLC_OP_ASIN: return call1(c, MLC_TIR_INTRIN_ASIN, x);
    case MLC_OP_ACOS: return call1(c, MLC_TIR_INTRIN_ACOS, x);
    case MLC_OP_ATAN: return call1(c, MLC_TIR_INTRIN_ATAN, x);
    case MLC_OP_SINH: return call1(c, MLC_TIR_INTRIN_SINH, x);
    case MLC_OP_COSH: return call1(c, MLC_TIR_INTRIN_COSH, x);
    case MLC_OP_ASINH: return call1(c, MLC_TIR_INTRIN_ASINH, x);
    case MLC_OP_ACOSH: return call1(c, MLC_TIR_INTRIN_ACOSH, x);
    case MLC_OP_ATANH: return call1(c, MLC_TIR_INTRIN_ATANH, x);
    case MLC_OP_SOFTPLUS: /* log(1 + e^x), stable: max(x,0) + log(1 + e^-|x|) */
      return mlc_tir_add(M, mlc_tir_max(M, x, zero),
                         call1(c, MLC_TIR_INTRIN_LOG,
                               mlc_tir_add(M, one, call1(c, MLC_TIR_INTRIN_EXP,
                                                         mlc_tir_sub(M, zero, call1(c, MLC_TIR_INTRIN_ABS, x))))));
    case MLC_OP_SOFTSIGN:
      return mlc_tir_binary(M, MLC_TIR_DIV, x, mlc_tir_add(M, one, call1(c, MLC_TIR_INTRIN_ABS, x)));
    case MLC_OP_LOGICAL_NOT: return mlc_tir_not(M, x);
    case MLC_OP_ISNAN: return isf ? call1(c, MLC_TIR_INTRIN_ISNAN, x) : mlc_tir_int(M, MLC_DTYPE_BOOL, 0);
    case MLC_OP_ISINF: {
      int pos = (int)attr_f(c, "detect_positive"), neg = (int)attr_f(c, "detect_negative");
      if (!isf || (!pos && !neg)) return mlc_tir_int(M, MLC_DTYPE_BOOL, 0);
      mlc_tir_expr *inf = call1(c, MLC_TIR_INTRIN_ISINF, x);
      if (pos && neg) return inf;
      return mlc_tir_binary(M, MLC_TIR_AND, inf,
                            mlc_tir_binary(M, pos ? MLC_TIR_GT : MLC_TIR_LT, x, zero));
    }
    case MLC_OP_LEAKY_RELU: {
      mlc_tir_expr *a = fimm(c, dt, attr_f(c, "alpha"));
      return mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_GE, x, zero), x, mlc_tir_mul(M, a, x));
    }
    case MLC_OP_ELU: {
      mlc_tir_expr *a = fimm(c, dt, attr_f(c, "alpha"));
      return mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_GE, x, zero), x,
                            mlc_tir_mul(M, a, mlc_tir_sub(M, call1(c, MLC_TIR_INTRIN_EXP, x), one)));
    }
    case MLC_OP_SELU: {
      mlc_tir_expr *a = fimm(c, dt, attr_f(c, "alpha"));
      mlc_tir_expr *g = fimm(c, dt, attr_f(c, "gamma"));
      return mlc_tir_mul(M, g, mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_GT, x, zero), x,
                                              mlc_tir_mul(M, a, mlc_tir_sub(M, call1(c, MLC_TIR_INTRIN_EXP, x), one))));
    }
    case MLC_OP_CELU: {
      double alpha = attr_f(c, "alpha");
      mlc_tir_expr *a = fimm(c, dt, alpha);
      mlc_tir_expr *e = mlc_tir_sub(M, call1(c, MLC_TIR_INTRIN_EXP, mlc_tir_binary(M, MLC_TIR_DIV, x, a)), one);
      return mlc_tir_add(M, mlc_tir_max(M, x, zero), mlc_tir_min(M, zero, mlc_tir_mul(M, a, e)));
    }
    case MLC_OP_HARD_SIGMOID: {
      mlc_tir_expr *a = fimm(c, dt, attr_f(c, "alpha"));
      mlc_tir_expr *b = fimm(c, dt, attr_f(c, "beta"));
      return mlc_tir_max(M, zero, mlc_tir_min(M, one, mlc_tir_add(M, mlc_tir_mul(M, a, x), b)));
    }
    case MLC_OP_HARD_SWISH: {
      mlc_tir_expr *h = mlc_tir_max(M, zero, mlc_tir_min(M, one, mlc_tir_add(M, mlc_tir_mul(M, fimm(c, dt, 1.0 / 6.0), x), fimm(c, dt, 0.5))));
      return mlc_tir_mul(M, x, h);
    }
    case MLC_OP_THRESHOLDED_RELU: {
      mlc_tir_expr *a = fimm(c, dt, attr_f(c, "alpha"));
      return mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_GT, x, a), x, zero);
    }
    case MLC_OP_SHRINK: {
      double lambd = attr_f(c, "lambd"), bias = attr_f(c, "bias");
      mlc_tir_expr *l = fimm(c, dt, lambd), *nl = fimm(c, dt, -lambd), *bb = fimm(c, dt, bias);
      return mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_LT, x, nl), mlc_tir_add(M, x, bb),
                            mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_GT, x, l), mlc_tir_sub(M, x, bb), zero));
    }
    case MLC_OP_CLIP: {
      const mlc_attr *lo = mlc_lg_attr(c, "min"), *hi = mlc_lg_attr(c, "max");
      mlc_tir_expr *y = x;
      double l = lo ? (lo->kind == MLC_ATTR_INT ? (double)lo->i : lo->f) : 0;
      double h = hi ? (hi->kind == MLC_ATTR_INT ? (double)hi->i : hi->f) : 0;
      if (!isf) { /* integer bounds: rounded inward, within the dtype (as the evaluator does) */
        double bits = (double)mlc_dtype_size(dt) * 8;
        double tmin = mlc_dtype_is_signed(dt) ? -pow(2, bits - 1) : 0;
        double tmax = mlc_dtype_is_signed(dt) ? pow(2, bits - 1) - 1 : pow(2, bits) - 1;
        l = fmax(ceil(l), tmin);
        h = fmin(floor(h), tmax);
      }
      if (lo) y = mlc_tir_max(M, y, fimm(c, dt, l));
      if (hi) y = mlc_tir_min(M, y, fimm(c, dt, h));
      return y;
    }
    case MLC_OP_CAST: return mlc_tir_cast(M, c->out_types[0].dtype, x);
    default: return no_expr(c);
  }
}

static mlc_tir_expr *unary_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)b;
  return unary_expr(c, mlc_lg_arg_load(c, 0, idx), c->arg_types[0].dtype);
}

/* y = f(x) */
mlc_status mlc_lg_unary(mlc_lg_call *c, mlc_te_tensor **out) {
  return mlc_lg_compute(c, 0, "T_unary", unary_body, out);
}

/* Integer division/modulo with ONNX semantics and no trap on zero. */
static mlc_tir_expr *int_divmod(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b, int is_mod,
                                int fmod, mlc_dtype dt) {
  mlc_tir_binop op = is_mod ? (fmod ? MLC_TIR_TRUNCMOD : MLC_TIR_FLOORMOD) : MLC_TIR_TRUNCDIV;
  if (!mlc_dtype_is_signed(dt) && is_mod) op = MLC_TIR_TRUNCMOD;
  return mlc_tir_binary(M, op, a, b);
}

static mlc_tir_expr *binary_expr(mlc_lg_call *c, mlc_tir_expr *a, mlc_tir_expr *b) {
  if (!a || !b) return NULL;
  mlc_dtype dt = c->arg_types[0].dtype;
  int isf = mlc_dtype_is_float(dt);
  switch (c->op) {
    case MLC_OP_ADD: return mlc_tir_add(M, a, b);
    case MLC_OP_SUB: return mlc_tir_sub(M, a, b);
    case MLC_OP_MUL: return mlc_tir_mul(M, a, b);
    case MLC_OP_DIV: return isf ? mlc_tir_binary(M, MLC_TIR_DIV, a, b) : int_divmod(c, a, b, 0, 0, dt);
    case MLC_OP_MOD: {
      int fmod = (int)attr_f(c, "fmod");
      if (isf) { /* a - b * trunc(a / b) (fmod) or with floor (sign of divisor) */
        mlc_tir_expr *q = call1(c, fmod ? MLC_TIR_INTRIN_TRUNC : MLC_TIR_INTRIN_FLOOR,
                                mlc_tir_binary(M, MLC_TIR_DIV, a, b));
        return mlc_tir_sub(M, a, mlc_tir_mul(M, b, q));
      }
      return int_divmod(c, a, b, 1, fmod, dt);
    }
    case MLC_OP_POW: {
      if (c->arg_types[1].dtype != dt) b = mlc_tir_cast(M, isf ? dt : MLC_DTYPE_F64, b);
      if (isf) return mlc_tir_call(M, MLC_TIR_INTRIN_POW, 2, (mlc_tir_expr *[]){a, b});
      mlc_tir_expr *fa = mlc_tir_cast(M, MLC_DTYPE_F64, a);
      mlc_tir_expr *fb = mlc_tir_cast(M, MLC_DTYPE_F64, b);
      return mlc_tir_cast(M, dt, mlc_tir_call(M, MLC_TIR_INTRIN_POW, 2, (mlc_tir_expr *[]){fa, fb}));
    }
    case MLC_OP_MAXIMUM: return mlc_tir_max(M, a, b);
    case MLC_OP_MINIMUM: return mlc_tir_min(M, a, b);
    case MLC_OP_PRELU:
      return mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_GE, a, mlc_lg_imm(c, dt, 0)), a, mlc_tir_mul(M, a, b));
    case MLC_OP_EQUAL: return mlc_tir_binary(M, MLC_TIR_EQ, a, b);
    case MLC_OP_LESS: return mlc_tir_binary(M, MLC_TIR_LT, a, b);
    case MLC_OP_LESS_EQUAL: return mlc_tir_binary(M, MLC_TIR_LE, a, b);
    case MLC_OP_GREATER: return mlc_tir_binary(M, MLC_TIR_GT, a, b);
    case MLC_OP_GREATER_EQUAL: return mlc_tir_binary(M, MLC_TIR_GE, a, b);
    case MLC_OP_LOGICAL_AND: return mlc_tir_binary(M, MLC_TIR_AND, a, b);
    case MLC_OP_LOGICAL_OR: return mlc_tir_binary(M, MLC_TIR_OR, a, b);
    case MLC_OP_LOGICAL_XOR: return mlc_tir_binary(M, MLC_TIR_NE, a, b);
    case MLC_OP_BITSHIFT: {
      /* a << b == a * 2^b and a >> b == a // 2^b for unsigned a; shifts of
      ** the full width or more give 0. */
      int right = (int)attr_f(c, "right");
      int bits = (int)mlc_dtype_size(dt) * 8;
      mlc_tir_expr *p = mlc_tir_cast(M, dt, mlc_tir_call(M, MLC_TIR_INTRIN_POW, 2,
                                     (mlc_tir_expr *[]){mlc_tir_float(M, MLC_DTYPE_F64, 2.0),
                                                        mlc_tir_cast(M, MLC_DTYPE_F64, b)}));
      mlc_tir_expr *r = right ? mlc_tir_binary(M, MLC_TIR_FLOORDIV, a, p) : mlc_tir_mul(M, a, p);
      return mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_GE, b, mlc_lg_imm(c, dt, bits)),
                            mlc_lg_imm(c, dt, 0), r);
    }
    default: return no_expr(c);
  }
}

static mlc_tir_expr *binary_body(mlc_te_builder *bld, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)bld;
  int r = out_rank(c);
  return binary_expr(c, mlc_lg_arg_bcast(c, 0, r, idx), mlc_lg_arg_bcast(c, 1, r, idx));
}

/* y = a OP b with numpy broadcasting */
mlc_status mlc_lg_binary(mlc_lg_call *c, mlc_te_tensor **out) {
  return mlc_lg_compute(c, 0, "T_binary", binary_body, out);
}

static mlc_tir_expr *where_body(mlc_te_builder *bld, mlc_tir_expr *const *idx, void *user) {
  mlc_lg_call *c = user;
  (void)bld;
  int r = out_rank(c);
  mlc_tir_expr *cond = mlc_lg_arg_bcast(c, 0, r, idx);
  mlc_tir_expr *a = mlc_lg_arg_bcast(c, 1, r, idx), *b = mlc_lg_arg_bcast(c, 2, r, idx);
  if (!cond || !a || !b) return NULL;
  return mlc_tir_select(M, cond, a, b);
}

/* y = cond ? a : b with numpy broadcasting */
mlc_status mlc_lg_where(mlc_lg_call *c, mlc_te_tensor **out) {
  return mlc_lg_compute(c, 0, "T_where", where_body, out);
}
