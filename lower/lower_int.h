/*
** lower_int.h: private to legalization (lower/legalize.c, lower/compute/,
** lower/fuse_tir.c).
**
** A lowering rule gets one graph op call (struct info of its args and
** outputs, attributes, origin) and a te builder with one placeholder per
** tensor argument, and returns the compute stages of its outputs:
**
**   mlc_status rule(mlc_lg_call *c, mlc_te_tensor **out);
**
** Rules read their inputs through mlc_lg_in / mlc_lg_arg_load, which also
** handle scalar constants inlined as immediates (c->in[i] is NULL then).
*/
#ifndef MLC_LOWER_LOWER_INT_H
#define MLC_LOWER_LOWER_INT_H

#include "lower/lower.h"
#include "lower/te.h"

typedef struct mlc_lg_call {
  const mlc_module *gm;
  mlc_tir_module *tm;
  mlc_te_builder *b;
  mlc_op op;
  const mlc_binding *binding;
  int nargs;
  const mlc_type *arg_types; /* [nargs] */
  const mlc_attr *attrs;
  int nattrs;
  int nouts;
  const mlc_type *out_types; /* [nouts] */
  mlc_te_tensor **in;        /* [nargs]: placeholder, or NULL when inlined */
  const double *scalar;      /* [nargs]: value of an inlined scalar constant */
  mlc_tir_var **sym_vars;    /* [gm->nsyms]: scalar vars, created on demand */
  const char *name;          /* prim function name being built */
  /* [gm->nsyms] or NULL (all): the symbols a dim of the prim function's
  ** parameters binds; a derived symbol that none binds is computed from
  ** its operands (a fused conv's inner extent from the input's H). */
  const unsigned char *sym_bound;
  int vector_bits; /* the target's widest vector (0: 512), for register tiles */
} mlc_lg_call;

/* Marks in |bound| ([gm->nsyms], zeroed by the caller) the symbols of |t|'s dims. */
void mlc_lg_mark_syms(const mlc_type *t, unsigned char *bound);

typedef mlc_status (*mlc_lg_fn)(mlc_lg_call *c, mlc_te_tensor **out);

/* The rule of |op|, or NULL when it has none (legalize.c's table). */
mlc_lg_fn mlc_lg_rule(mlc_op op);

/* Shape of graph type |t| as TIR int64 exprs (symbolic dims -> scalar
** vars).  Arena memory; NULL on OOM. */
mlc_tir_expr **mlc_lg_shape(mlc_lg_call *c, const mlc_type *t);
/* Extent of dim |d| of |t| as an expr. */
mlc_tir_expr *mlc_lg_dim(mlc_lg_call *c, const mlc_type *t, int d);

/* Value of arg |i| at |idx| (rank of the arg's type): a load, or the
** inlined scalar immediate. */
mlc_tir_expr *mlc_lg_arg_load(mlc_lg_call *c, int i, mlc_tir_expr *const *idx);
/* Value of arg |i| broadcast (numpy rules) to an output index |idx| of rank
** |rank|: leading dims dropped, dims of extent 1 read at 0. */
mlc_tir_expr *mlc_lg_arg_bcast(mlc_lg_call *c, int i, int rank, mlc_tir_expr *const *idx);

/* An immediate of |dtype| with value |v| (ints: rounded toward zero,
** saturated to 64 bits, wrapped to the dtype, as the evaluator does). */
mlc_tir_expr *mlc_lg_imm(mlc_lg_call *c, mlc_dtype dtype, double v);

/* One output of |c->out_types[k]| computed elementwise by |fn|. */
mlc_status mlc_lg_compute(mlc_lg_call *c, int k, const char *name, mlc_te_body_fn fn,
                          mlc_te_tensor **out);

/* Error naming the node, op and problem. */
mlc_status mlc_lg_error(mlc_lg_call *c, mlc_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
** Checks of model data.  A kernel stops with an error naming the ONNX op
** (and, added by the runtime, the node) when an index read from a tensor
** is out of its range, as the constant folder does at compile time.
**
** mlc_lg_onnx_op: the op type the message names: the call's ONNX op type
** (letters, digits and '_' only, as the converter table spells it), else
** the graph op's name.  Arena memory.
**
** mlc_lg_assert_range: assert lo <= v < hi (one unsigned compare of v - lo
** against hi - lo; |v|, |lo| and |hi| int64), reporting "<what> V out of
** range [LO, HI)<where>" (|what|, |where| compiler text).
**
** mlc_lg_check_indices: a check stage over the int index argument |arg|:
** every element lies in [-n, n) where n is the extent of axis |axis| of
** argument 0 (negative indices wrap).  With |nd|, the last dim of the
** indices runs over the axes |axis| + t (gather_nd, scatter_nd) and the
** stage over the other dims.  Created before the stages reading the
** indices, so those never see an index out of range.
**
** mlc_lg_check_values: a check stage over every element v of the int
** argument |arg|: lo <= v < hi (|lo|, |hi| int64), reported as in
** mlc_lg_assert_range.
*/
const char *mlc_lg_onnx_op(mlc_lg_call *c);
mlc_tir_stmt *mlc_lg_assert_range(mlc_lg_call *c, mlc_tir_expr *v, mlc_tir_expr *lo, mlc_tir_expr *hi,
                                  const char *what, const char *where);
mlc_status mlc_lg_check_indices(mlc_lg_call *c, int arg, int axis, int nd);
mlc_status mlc_lg_check_values(mlc_lg_call *c, int arg, mlc_tir_expr *lo, mlc_tir_expr *hi, const char *what,
                               const char *where);

/*
** Shared with fuse_tir (lower/fuse_tir.c), which builds one prim function
** from several op calls with the same rules:
**
** mlc_lg_inline_scalar: 1 when argument |i| of op call |b| is a scalar
** constant that legalization folds into the kernel as an immediate (its
** value to *|out|); such an argument leaves the call.
**
** mlc_lg_call_key: appends to |k| the canonical text of op call |b| with
** the arguments |inl| marks inlined (values |scalar|): op, ONNX op type of
** the ops whose kernels check data, argument and output types, attributes.
** Equal keys give equal kernels.
*/
int mlc_lg_inline_scalar(const mlc_module *gm, const mlc_binding *b, int i, double *out);
void mlc_lg_call_key(const mlc_module *gm, const mlc_binding *b, const int *inl, const double *scalar,
                     mlc_strbuf *k);
/* mlc_lg_fresh_name: the first of |base|, |base|1, ... not in |names| (a
** set of arena strings), added to it; |next| remembers per base where to
** resume.  NULL when out of memory.  Strings in |tm|'s arena. */
struct mlc_hash;
/* mlc_lg_input_name: the name of input |i| of a kernel (A, B, ..., Z, A26,
** ...).  mlc_lg_apply_rule: runs the lowering rule of |c|'s op (an error
** when it has none or leaves an output unset).  mlc_lg_name_error: |s|
** with |c|'s node and op in front unless a rule's error already names them
** (NULL stays NULL). */
void mlc_lg_input_name(int i, char *buf, size_t n);
mlc_status mlc_lg_apply_rule(mlc_lg_call *c, mlc_te_tensor **outs);
mlc_status mlc_lg_name_error(mlc_lg_call *c, mlc_status s);
const char *mlc_lg_fresh_name(mlc_tir_module *tm, struct mlc_hash *names, struct mlc_hash *next, const char *base);

/* Attribute access (defaults when absent). */
int64_t mlc_lg_int(mlc_lg_call *c, const char *name, int64_t dflt);
double mlc_lg_float(mlc_lg_call *c, const char *name, double dflt);
const mlc_attr *mlc_lg_attr(mlc_lg_call *c, const char *name);

/* Rules, one per distinct `lower` name of ops.def (files under
** lower/compute/); a name that is not defined fails to link. */
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) mlc_status mlc_##lw(mlc_lg_call *c, mlc_te_tensor **out);
#include "graph/ops.def"
#undef OP

/* Rewrites shape functions, nonzero and define_dims into call_dps_packed of
** the runtime's built-ins (see lower.h); *done = 1 when |b| was one.
** Attributes are rebuilt in |gm|'s arena. */
mlc_status mlc_lg_builtin(mlc_module *gm, mlc_binding *b, int *done);

#endif /* MLC_LOWER_LOWER_INT_H */
