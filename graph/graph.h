/*
** graph.h: the Relax-style graph IR (boundary of graph/).
**
** An mlc_module holds graph functions and a constant table.  A graph
** function has parameters, a sequence of blocks of bindings and the values
** it returns.  A binding is `outs = call(args, attrs)` where the call is
**
**   MLC_CALL_OP          a high-level op of ops.def      R.conv(x, w, ...)
**   MLC_CALL_TIR         a prim function, destination-passing
**                                                        R.call_tir(f, args, out_sinfo)
**   MLC_CALL_DPS_PACKED  an external function by name, destination-passing
**                                                        R.call_dps_packed("f", args, out_sinfo)
**   MLC_CALL_FUNC        a graph function of the module  cls.fused_conv_relu(args)
**                        (a fused group: a function marked primitive, which
**                        fuse_tir turns into one prim function)
**
** The module is the one IRModule of every level: graph functions, the prim
** functions that legalization and fuse_tir add (|prims|, a TensorIR module
** owned by the module) and the constant table.
**
** Every value has struct info (mlc_type): dtype and shape.  A dimension is an
** int64: >= 0 is a known extent, < 0 encodes a symbolic variable of the
** module (MLC_DIM_SYM), e.g. the batch `n` from an ONNX dim_param.
**
** The IR structs are visible (passes and lowering read them directly), but
** they are built only through the functions below, which keep the invariants
** the verifier checks: SSA (one definition per value), definitions before
** uses, struct info consistent with each op's inference rule.  All IR memory
** lives in the module's arena and is freed with the module; constant data is
** owned by the module's constant table.
*/
#ifndef MLC_GRAPH_GRAPH_H
#define MLC_GRAPH_GRAPH_H

#include <stdint.h>
#include <stdio.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/dtype.h"
#include "base/hash.h"
#include "base/status.h"
#include "base/strbuf.h"

/* ---- ops ---------------------------------------------------------------- */

typedef enum mlc_op {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) MLC_OP_##e,
#include "graph/ops.def"
#undef OP
  MLC_OP_COUNT
} mlc_op;

/* Fusion pattern kinds, ordered as in TVM (lower = more fusable). */
typedef enum mlc_pattern {
  MLC_PATTERN_ELEMWISE = 0,
  MLC_PATTERN_BROADCAST = 1,
  MLC_PATTERN_INJECTIVE = 2,
  MLC_PATTERN_REDUCE = 3,
  MLC_PATTERN_OUT_EWISE_FUSABLE = 4,
  MLC_PATTERN_OPAQUE = 8
} mlc_pattern;

extern const char *const mlc_op_name[MLC_OP_COUNT];
extern const mlc_pattern mlc_op_pattern[MLC_OP_COUNT];
extern const char *const mlc_op_synopsis[MLC_OP_COUNT];
extern const int mlc_op_min_args[MLC_OP_COUNT];
extern const int mlc_op_max_args[MLC_OP_COUNT]; /* -1: variadic */
/* MLC_OP_COUNT when |name| is not an op name. */
mlc_op mlc_op_from_name(const char *name);

/* Classes of dtypes (ops.def column `dtypes`): what argument 0 of an op
** may hold, checked once by mlc_graph_infer before the op's rule runs. */
typedef enum mlc_dtype_class {
  MLC_DCLASS_DATA,  /* anything, strings included */
  MLC_DCLASS_ANY,   /* anything but strings */
  MLC_DCLASS_NUM,   /* integers and floats */
  MLC_DCLASS_FLOAT, /* floats */
  MLC_DCLASS_INT,   /* integers */
  MLC_DCLASS_BOOL,  /* bool */
  MLC_DCLASS_INDEX  /* int32 or int64 */
} mlc_dtype_class;

extern const mlc_dtype_class mlc_op_dtypes[MLC_OP_COUNT];
/* 1 when |t| belongs to class |k|. */
int mlc_dtype_class_has(mlc_dtype_class k, mlc_dtype t);
/* "a floating-point type", ... for messages (static storage). */
const char *mlc_dtype_class_text(mlc_dtype_class k);
/* The ops.def names of each op's lowering rule ("lg_conv": mlc_lg_conv of
** lower/, "BUILTIN": a run-time built-in, "NONE") and evaluator family
** ("eval_unary", or "NONE": never folded); static storage. */
extern const char *const mlc_op_rule_name[MLC_OP_COUNT];
extern const char *const mlc_op_eval_name[MLC_OP_COUNT];
/* The attribute schema of each op (ops.def column `attrs`; static). */
extern const char *const mlc_op_attr_schema[MLC_OP_COUNT];

/* ---- types -------------------------------------------------------------- */

#define MLC_DIM_SYM(id) (-(int64_t)(id)-1)
#define MLC_DIM_IS_SYM(d) ((d) < 0)
#define MLC_DIM_SYM_ID(d) ((int)(-(d)-1))

/* Struct info of a tensor value. |dims| lives in the module arena. */
typedef struct mlc_type {
  mlc_dtype dtype;
  int rank;
  const int64_t *dims;
} mlc_type;

/* Number of elements when every dim is known; -1 if any is symbolic or on
** overflow. */
int64_t mlc_type_numel(const mlc_type *t);
int mlc_type_is_static(const mlc_type *t);
/* 1 when a tensor of |t| can exist: the product of its static dims (the
** symbolic ones count as 1) times the element size is at most INT64_MAX
** bytes, so element counts and byte sizes computed from it do not
** overflow. */
int mlc_type_size_ok(const mlc_type *t);
int mlc_type_equal(const mlc_type *a, const mlc_type *b);

/* ---- attributes --------------------------------------------------------- */

typedef enum mlc_attr_kind {
  MLC_ATTR_INT,
  MLC_ATTR_FLOAT,
  MLC_ATTR_STRING,
  MLC_ATTR_INTS,
  MLC_ATTR_FLOATS
} mlc_attr_kind;

typedef struct mlc_attr {
  const char *name;
  mlc_attr_kind kind;
  int64_t i;
  double f;
  const char *s;
  int n; /* length of ints / floats */
  const int64_t *ints;
  const double *floats;
} mlc_attr;

/* Literal builders for converters (the data is copied when the call is
** emitted, so stack arrays are fine). */
static inline mlc_attr mlc_attr_int(const char *name, int64_t v) {
  mlc_attr a = {name, MLC_ATTR_INT, v, 0, NULL, 0, NULL, NULL};
  return a;
}
static inline mlc_attr mlc_attr_float(const char *name, double v) {
  mlc_attr a = {name, MLC_ATTR_FLOAT, 0, v, NULL, 0, NULL, NULL};
  return a;
}
static inline mlc_attr mlc_attr_str(const char *name, const char *s) {
  mlc_attr a = {name, MLC_ATTR_STRING, 0, 0, s, 0, NULL, NULL};
  return a;
}
static inline mlc_attr mlc_attr_ints(const char *name, const int64_t *v, int n) {
  mlc_attr a = {name, MLC_ATTR_INTS, 0, 0, NULL, n, v, NULL};
  return a;
}
static inline mlc_attr mlc_attr_floats(const char *name, const double *v, int n) {
  mlc_attr a = {name, MLC_ATTR_FLOATS, 0, 0, NULL, n, NULL, v};
  return a;
}

/*
** One attribute of an op's schema (ops.def column `attrs`, entries
** "name:K" or "name:K=default"; K: i int, f number (float or int), s
** string, I ints, F floats).  |name| is NUL-terminated in the struct.
*/
typedef struct mlc_attr_spec {
  char name[40];
  char kind; /* 'i', 'f', 's', 'I' or 'F' */
  int has_default;
  double dflt; /* i and f defaults */
} mlc_attr_spec;

/* Looks |name| up in the schema of |op|: 1 and *out filled when the op has
** that attribute, else 0. */
int mlc_op_attr_spec(mlc_op op, const char *name, mlc_attr_spec *out);
/* 1 when |a| has a kind the spec allows (f also takes an int). */
int mlc_attr_spec_accepts(const mlc_attr_spec *spec, const mlc_attr *a);
/* Reads int/number attribute |name| of an |op| call: its value, else the
** schema's default (0 when the schema has none).  |attrs| borrowed. */
int64_t mlc_op_attr_int(mlc_op op, const mlc_attr *attrs, int n, const char *name);
double mlc_op_attr_float(mlc_op op, const mlc_attr *attrs, int n, const char *name);
/*
** Checks |attrs| against the schema of |op|: every name is in the schema
** with an accepted kind.  0 when they fit; else -1 with the first problem
** ("unknown attribute foo", "attribute alpha is a string, expected f") in
** |msg|[0..size).
*/
int mlc_op_check_attrs(mlc_op op, const mlc_attr *attrs, int n, char *msg, size_t size);
/* 1 when the schema text of |op| is well formed (for tests). */
int mlc_op_schema_ok(mlc_op op);

/* Lookup in an attribute list; NULL when absent. */
const mlc_attr *mlc_attrs_find(const mlc_attr *attrs, int n, const char *name);
int64_t mlc_attrs_int(const mlc_attr *attrs, int n, const char *name, int64_t dflt);
double mlc_attrs_float(const mlc_attr *attrs, int n, const char *name, double dflt);
const char *mlc_attrs_str(const mlc_attr *attrs, int n, const char *name, const char *dflt);

/* ---- values, bindings, functions, module -------------------------------- */

typedef struct mlc_module mlc_module;
typedef struct mlc_func mlc_func;
typedef struct mlc_binding mlc_binding;

typedef enum mlc_value_kind {
  MLC_VALUE_PARAM, /* function parameter */
  MLC_VALUE_CONST, /* entry of the module's constant table */
  MLC_VALUE_VAR    /* output of a binding */
} mlc_value_kind;

typedef struct mlc_value {
  int id;              /* unique within the module */
  mlc_value_kind kind;
  const char *name;    /* source name (ONNX tensor name); may be NULL */
  mlc_type type;
  int const_index;     /* MLC_VALUE_CONST: index in the constant table */
  mlc_binding *def;    /* MLC_VALUE_VAR: defining binding */
  int def_output;      /* MLC_VALUE_VAR: which output of |def| */
  int storage;         /* memory plan: storage id of an intermediate, -1 if none */
  /* An integer vector (rank 0 or 1) whose values are known when compiling
  ** though it is no constant: shape_of(x) of x [N, T, 256] is [N, T, 256],
  ** and what gather, concat, slice, reshape, cast and integer arithmetic
  ** make of such values (sym_values.c).  |nsv| entries (-1: unknown);
  ** entry i is the dim (a symbol) sv[i] when bit i of |sv_sym| is set,
  ** else the integer sv[i]. */
  int nsv;
  const int64_t *sv;
  uint64_t sv_sym;
} mlc_value;

/* Where a binding came from, for diagnostics (STYLE R8). */
typedef struct mlc_origin {
  const char *node;    /* ONNX node name ("" if unnamed) */
  const char *op_type; /* ONNX op type */
  int opset;           /* opset the converter ran for */
  int index;           /* node index in the ONNX graph, -1 if none */
} mlc_origin;

typedef enum mlc_call_kind {
  MLC_CALL_OP,
  MLC_CALL_TIR,
  MLC_CALL_DPS_PACKED,
  MLC_CALL_FUNC
} mlc_call_kind;

struct mlc_binding {
  mlc_call_kind kind;
  mlc_op op;           /* MLC_CALL_OP */
  const char *callee;  /* MLC_CALL_TIR / MLC_CALL_DPS_PACKED: function name */
  int nargs;
  mlc_value **args;
  int nattrs;
  mlc_attr *attrs;
  int nouts;
  mlc_value **outs;
  mlc_origin origin;
  /* MLC_CALL_OP: fusion pattern kind of this call, the op table's unless
  ** annotate_pattern refined it from the shapes (a broadcast whose shapes
  ** are equal is elementwise). */
  mlc_pattern pattern;
  /* The ONNX nodes this call computes when it stands for several (a fused
  ** group, then its call_tir); 0: just |origin|.  Arena memory. */
  int ncovered;
  const mlc_origin *covered;
};

typedef struct mlc_block {
  int dataflow; /* 1: a dataflow block (pure, no side effects) */
  int n, cap;
  mlc_binding **bindings;
} mlc_block;

struct mlc_func {
  const char *name;
  mlc_module *mod;
  int nparams, cap_params;
  mlc_value **params;
  int nblocks, cap_blocks;
  mlc_block *blocks;
  int nrets, cap_rets;
  mlc_value **rets;
  int nstorages;       /* memory plan: storage ids in use (plan_memory) */
  int primitive;       /* 1: a fused group (Relax's attr Primitive), called by
                       ** MLC_CALL_FUNC bindings and lowered to one prim
                       ** function by fuse_tir; holds only MLC_CALL_OP bindings */
  int ins_block, ins_index; /* insertion point of new bindings (mlc_func_insert_at);
                       ** ins_block < 0: append to the current dataflow block */
  /* By parameter index (|nparam_values| entries, arena memory): the known
  ** value of a parameter (a weight imported as an input), which
  ** bind_params binds; NULL: none.  mlc_func_set_param_value. */
  int nparam_values;
  mlc_value **param_values;
  /* By parameter index (|nparam_defaults| entries, arena memory): the
  ** default value of a parameter of main (an ONNX graph input that is also
  ** an initializer): the compiled model uses it when the caller does not
  ** set that input.  Never substituted: the parameter stays an input, and
  ** nothing folds through it.  NULL: none.  mlc_func_set_param_default. */
  int nparam_defaults;
  mlc_value **param_defaults;
};

/* A constant: tensor data owned by the module (64-byte aligned). */
typedef struct mlc_const {
  const char *name;
  mlc_type type;
  void *data;
  size_t nbytes;
} mlc_const;

/*
** How a symbolic dim gets its value.  A free symbol is bound from an input's
** shape (a dim_param) or computed by the model (define_dims); a derived one
** is an expression of earlier symbols, e.g. a convolution's output height
** (H + 2p - k) // s + 1 as floordiv(add(H, 2p - k), s) + 1, which the
** runtime evaluates once the symbols it reads are bound, failing when the
** value is negative (an input smaller than a kernel).  Operand |a| is a
** symbol (dim encoding); |b| a symbol when |b_sym|, else a constant.
*/
typedef enum mlc_sym_op {
  MLC_SYM_FREE = 0,
  MLC_SYM_ADD = 1,      /* a + b */
  MLC_SYM_MUL = 2,      /* a * b, b a constant >= 0 or a symbol */
  MLC_SYM_FLOORDIV = 3, /* floor(a / b), b a constant >= 1 */
  MLC_SYM_MIN = 4,
  MLC_SYM_MAX = 5,
  MLC_SYM_CHECK = 6 /* a, which must be >= 0: else the run fails naming |where| */
} mlc_sym_op;

typedef struct mlc_sym_def {
  mlc_sym_op op;
  int b_sym;
  int64_t a, b;
  const char *where; /* the node that first needed it ("node \"c1\" (Conv)"), or NULL */
  int64_t bound;     /* free symbols: the largest value allowed (compile --shape-bound), 0: none */
} mlc_sym_def;

/* The module is visible for reading; mutate it through the functions. */
struct mlc_module {
  mlc_allocator alloc;
  mlc_arena *arena;
  int nfuncs, cap_funcs;
  mlc_func **funcs;
  mlc_hash func_index; /* name -> function (NULL once removed), for mlc_module_func */
  int nconsts, cap_consts;
  mlc_const *consts;
  int nsyms, cap_syms;
  const char **syms; /* names of symbolic dims */
  int cap_sym_defs;
  mlc_sym_def *sym_defs; /* nsyms entries: how each symbol gets its value */
  int next_value_id;
  int fold; /* emit folds calls whose args are all constants (default 1) */
  /* The prim functions (a TensorIR module, lower/tir.h), NULL until
  ** legalization creates them; owned, freed by |prims_free|. */
  struct mlc_tir_module *prims;
  void (*prims_free)(struct mlc_tir_module *);
  /* Appends the prim functions' text to a string buffer (the printer). */
  void (*prims_print)(const struct mlc_tir_module *, mlc_strbuf *);
};

/* Creates an empty module. |out| is transferred to the caller. */
MLC_MUST_USE mlc_status mlc_module_create(mlc_allocator a, mlc_module **out);
/* Frees the module, its IR and its constants. NULL-safe. */
void mlc_module_destroy(mlc_module *m);
/* The function named |name|, or NULL. Borrowed. */
mlc_func *mlc_module_func(const mlc_module *m, const char *name);

/* Symbolic dims: interns |name| and returns its dim encoding in *out_dim. */
MLC_MUST_USE mlc_status mlc_module_sym(mlc_module *m, const char *name, int64_t *out_dim);
/* A fresh symbol ("s0", "s1", ...) for an unknown extent. */
MLC_MUST_USE mlc_status mlc_module_fresh_sym(mlc_module *m, int64_t *out_dim);
/* Name of a symbolic |dim| (borrowed); "?" if not a symbol of |m|. */
const char *mlc_module_sym_name(const mlc_module *m, int64_t dim);
/* The definition of symbolic |dim|, or NULL if not a symbol of |m|. */
const mlc_sym_def *mlc_module_sym_def(const mlc_module *m, int64_t dim);

/*
** Arithmetic on dims, known or symbolic.  Known operands fold (an error when
** the result overflows); a symbolic one gives a derived symbol, simplified
** (x + 0 = x, (x + a) + b = x + (a + b), x * 1 = x, x // 1 = x, min(x, x) = x)
** and interned, so that equal expressions are one symbol: two branches of a
** network that shrink H alike have the same extent.  |c| is a signed
** constant; |a| and |b| are dims.  |origin| (may be NULL) names the node
** for the run-time error when the value turns out negative.
*/
MLC_MUST_USE mlc_status mlc_dim_add_const(mlc_module *m, int64_t a, int64_t c, const mlc_origin *origin,
                                          int64_t *out);
MLC_MUST_USE mlc_status mlc_dim_add(mlc_module *m, int64_t a, int64_t b, const mlc_origin *origin,
                                    int64_t *out);
MLC_MUST_USE mlc_status mlc_dim_mul_const(mlc_module *m, int64_t a, int64_t c, const mlc_origin *origin,
                                          int64_t *out);
/* a * b of two dims (a product of symbols: T * N). */
MLC_MUST_USE mlc_status mlc_dim_mul(mlc_module *m, int64_t a, int64_t b, const mlc_origin *origin, int64_t *out);
/* Splits dim |d| into a known factor and symbols: a product x * c or x * y
** of derived symbols is taken apart (for comparing sizes).  Multiplies
** *|known| and appends the symbols to syms (*|nsyms|, room for |max|);
** -1 on overflow or when |max| is too small. */
int mlc_dim_factors(const mlc_module *m, int64_t d, int64_t *known, int64_t *syms, int *nsyms, int max);
MLC_MUST_USE mlc_status mlc_dim_floordiv_const(mlc_module *m, int64_t a, int64_t c,
                                               const mlc_origin *origin, int64_t *out);
MLC_MUST_USE mlc_status mlc_dim_min(mlc_module *m, int64_t a, int64_t b, const mlc_origin *origin,
                                    int64_t *out);
MLC_MUST_USE mlc_status mlc_dim_max(mlc_module *m, int64_t a, int64_t b, const mlc_origin *origin,
                                    int64_t *out);
/* Known values of an integer vector (see mlc_value.nsv). */
typedef struct mlc_known_values {
  int n;
  uint64_t sym;
  int64_t v[64];
} mlc_known_values;
/* What |op| computes (one output of type |t|) of its args' known values or
** small integer constants, into *|k|; 0 when not known (sym_values.c).
** mlc_graph_emit folds a result of integers only into a constant
** (mlc_graph_known_const) and gives any other to the binding's output
** (mlc_value_set_known); both fail only on out-of-memory. */
int mlc_graph_known_values(mlc_module *m, mlc_op op, mlc_value *const *args, int nargs, const mlc_attr *attrs,
                           int nattrs, const mlc_origin *origin, const mlc_type *t, mlc_known_values *k);
MLC_MUST_USE mlc_status mlc_graph_known_const(mlc_module *m, const mlc_type *t, const mlc_known_values *k,
                                              mlc_value **out);
MLC_MUST_USE mlc_status mlc_value_set_known(mlc_module *m, mlc_value *v, const mlc_known_values *k);
/* The known values of integer vector |v|: its data when it is a constant
** of at most 64 entries, else its nsv values.  *|vals| (n entries, borrowed
** or in |m|'s arena), *|sym| the symbol mask; 0 when unknown. */
int mlc_value_sym_ints(mlc_module *m, const mlc_value *v, const int64_t **vals, uint64_t *sym, int *n);

/* floor(a * scale) for a scale that is exactly p / 2^k (k <= 30; 2.0, 0.5,
** 1.5, 1.25, ...): a floordiv of a product, so exact for every a.  Another
** scale (1/3 in floating point, NaN, <= 0) is MLC_UNIMPLEMENTED (symbolic a)
** or MLC_INVALID_ARGUMENT (<= 0 or not finite). */
MLC_MUST_USE mlc_status mlc_dim_scale(mlc_module *m, int64_t a, double scale, const mlc_origin *origin,
                                      int64_t *out);
/* Bounds symbol |name| (a free symbol of |m|) by |bound| >= 1: an error
** naming the symbols when there is no such symbol. */
MLC_MUST_USE mlc_status mlc_module_bound_sym(mlc_module *m, const char *name, int64_t bound);
/* The largest value |dim| takes within the bounds: itself when known, a
** derived symbol evaluated at its operands' largest values (every operation
** grows with its operands); -1 when a symbol it depends on has no bound. */
int64_t mlc_module_dim_bound(const mlc_module *m, int64_t dim);
/* Elements of |t| at the bounds of its symbolic dims; -1 when unbounded or
** when the count overflows. */
int64_t mlc_type_numel_bound(const mlc_module *m, const mlc_type *t);

/* |a| itself, with the requirement that it is >= 0 when the model runs (a
** known |a| < 0 is an error now); |what| says what the requirement means
** ("the input is smaller than the kernel"). */
MLC_MUST_USE mlc_status mlc_dim_check(mlc_module *m, int64_t a, const mlc_origin *origin, const char *what,
                                      int64_t *out);

/* A copy of |dims| in the module arena (NULL only on OOM when rank > 0). */
int64_t *mlc_module_dims(mlc_module *m, const int64_t *dims, int rank);
/* Makes a type whose dims are copied into the module arena. */
MLC_MUST_USE mlc_status mlc_module_type(mlc_module *m, mlc_dtype dt, const int64_t *dims,
                                        int rank, mlc_type *out);

/*
** Adds a constant of |type| whose |nbytes| bytes are copied from |data|
** (borrowed).  nbytes must equal numel * dtype size.  Returns the constant
** value in *out (owned by the module).
*/
MLC_MUST_USE mlc_status mlc_module_add_const(mlc_module *m, const char *name, const mlc_type *type,
                                             const void *data, size_t nbytes, mlc_value **out);
/* Same, taking ownership of |data|, which must come from mlc_const_alloc. */
MLC_MUST_USE mlc_status mlc_module_adopt_const(mlc_module *m, const char *name,
                                               const mlc_type *type, void *data, size_t nbytes,
                                               mlc_value **out);
/* 64-byte aligned storage for constant data, from the module's allocator. */
void *mlc_const_alloc(mlc_module *m, size_t nbytes);
void mlc_const_free(mlc_module *m, void *data, size_t nbytes);
/* The constant behind a MLC_VALUE_CONST value (NULL for other kinds). */
const mlc_const *mlc_value_const(const mlc_module *m, const mlc_value *v);

/* Creates a function named |name| (unique in the module). */
MLC_MUST_USE mlc_status mlc_func_create(mlc_module *m, const char *name, mlc_func **out);
/* Appends a parameter. */
MLC_MUST_USE mlc_status mlc_func_add_param(mlc_func *f, const char *name, const mlc_type *type,
                                           mlc_value **out);
/* Records that parameter |i| of |f| has the known value |c| (a constant of
** the module with the parameter's type; NULL clears it): bind_params may
** bind the parameter to it (an ONNX initializer imported as an input). */
MLC_MUST_USE mlc_status mlc_func_set_param_value(mlc_func *f, int i, mlc_value *c);
/* The known value of parameter |i| of |f|, or NULL. Borrowed. */
mlc_value *mlc_func_param_value(const mlc_func *f, int i);
/* Records that parameter |i| of |f| has the default value |c| (a constant
** of the module with the parameter's type, all dims static; NULL clears
** it): an input of the compiled model that the caller may leave unset. */
MLC_MUST_USE mlc_status mlc_func_set_param_default(mlc_func *f, int i, mlc_value *c);
/* The default value of parameter |i| of |f|, or NULL. Borrowed. */
mlc_value *mlc_func_param_default(const mlc_func *f, int i);
/* Removes parameter |i| of |f| (and its known and default values); the
** caller has replaced its uses. */
void mlc_func_remove_param(mlc_func *f, int i);
/* Appends |v| to the values |f| returns. */
MLC_MUST_USE mlc_status mlc_func_add_ret(mlc_func *f, mlc_value *v);

/* ---- rewriting (passes and stages change functions only through these) -- */

/*
** Makes new bindings of |f| (mlc_graph_emit*, mlc_func_append_binding) go
** before binding |index| of block |block| (index == block length: at its
** end), each one after the previous, until mlc_func_append_at_end.
*/
void mlc_func_insert_at(mlc_func *f, int block, int index);
void mlc_func_append_at_end(mlc_func *f);
/* Moves the existing binding |b| into |f| at the insertion point; the caller
** removes it from where it was (mlc_func_remove_binding). */
MLC_MUST_USE mlc_status mlc_func_append_binding(mlc_func *f, mlc_binding *b);
/* Removes binding |index| of block |block| now (blocks left empty stay
** until mlc_func_compact). */
void mlc_func_remove_binding(mlc_func *f, int block, int index);
/* Drops empty blocks. */
void mlc_func_compact(mlc_func *f);
/* Removes the function |f| from its module (its IR stays in the arena). */
void mlc_module_remove_func(mlc_module *m, mlc_func *f);

/* Rewrites binding |b| in place into a call of |kind| to |callee| on |args|
** (copied), keeping its outputs, origin, attributes and the op it came
** from (legalization: R.conv(...) -> R.call_tir(cls.conv, ...)). */
MLC_MUST_USE mlc_status mlc_binding_set_call(mlc_module *m, mlc_binding *b, mlc_call_kind kind,
                                             const char *callee, mlc_value *const *args, int nargs);
/* Replaces |b|'s attributes by a copy of |attrs|. */
MLC_MUST_USE mlc_status mlc_binding_set_attrs(mlc_module *m, mlc_binding *b, const mlc_attr *attrs,
                                              int nattrs);
/* Appends |o| (copied) to the ONNX nodes |b| covers. */
MLC_MUST_USE mlc_status mlc_binding_add_covered(mlc_module *m, mlc_binding *b, const mlc_origin *o);
/* The ONNX nodes |b| covers: its covered list, or its origin alone.
** *|n| receives the count; borrowed. */
const mlc_origin *mlc_binding_nodes(const mlc_binding *b, int *n);

/* A value substitution: uses of |from| become |to|. */
typedef struct mlc_subst {
  mlc_allocator alloc;
  int n;
  mlc_value **to; /* by value id */
} mlc_subst;
MLC_MUST_USE mlc_status mlc_subst_init(mlc_subst *s, const mlc_module *m);
/* |from| must be a value that existed at mlc_subst_init, or the call is a
** no-op returning 0 (1 on success).  |to| NULL clears |from|'s entry (the
** map can then be reused). */
int mlc_subst_set(mlc_subst *s, const mlc_value *from, mlc_value *to);
/* What |v| becomes (following chains); |v| itself when not substituted. */
mlc_value *mlc_subst_get(const mlc_subst *s, mlc_value *v);
/* Rewrites every argument of |f|'s bindings and its returned values. */
void mlc_subst_apply(const mlc_subst *s, mlc_func *f);
void mlc_subst_fini(mlc_subst *s);
/*
** mlc_subst_apply that keeps the names of the values |f| returns (the names
** of a model's outputs): a returned value that the substitution replaces
** hands its name to the replacement when that is a computed value (a VAR)
** that |f| returns nowhere else; otherwise (a parameter, a constant, a value
** returned twice) the replacement is returned through a new R.copy, with
** the old name, appended to |f|'s last dataflow block.
*/
MLC_MUST_USE mlc_status mlc_subst_apply_keep_names(const mlc_subst *s, mlc_func *f);

/* The number of uses of each value of |m| (args of bindings of every
** function and returned values), by id: *|out| (|m|->next_value_id ints)
** transferred, free with mlc_free(m->alloc, ...). */
MLC_MUST_USE mlc_status mlc_module_use_counts(const mlc_module *m, int **out);

/* Everything needed to infer, fold or describe one op call. */
typedef struct mlc_call_info {
  mlc_module *mod;
  mlc_op op;
  int nargs;
  mlc_value *const *args;
  int nattrs;
  const mlc_attr *attrs;
  const mlc_origin *origin;
} mlc_call_info;

#define MLC_MAX_OUTS 16

/*
** Emits `outs = op(args, attrs)` at the end of |f|'s current dataflow block.
** Infers the output struct info with the op's rule; when every arg is a
** constant and the module folds (m->fold), evaluates the call at compile time
** instead and returns constants.  |nouts| receives the number of outputs
** (capacity MLC_MAX_OUTS).  Attribute arrays and strings are copied.  Errors
** name |origin|'s node and op type.
*/
MLC_MUST_USE mlc_status mlc_graph_emit(mlc_func *f, mlc_op op, mlc_value *const *args, int nargs,
                                       const mlc_attr *attrs, int nattrs,
                                       const mlc_origin *origin, mlc_value **outs, int *nouts);
/* Single-output convenience form of mlc_graph_emit. */
MLC_MUST_USE mlc_status mlc_graph_emit1(mlc_func *f, mlc_op op, mlc_value *const *args, int nargs,
                                        const mlc_attr *attrs, int nattrs,
                                        const mlc_origin *origin, mlc_value **out);
/*
** Emits `outs = op(args, attrs)` as a block of its own that is not a
** dataflow block, at the end of |f| (never folded): the markers of run-time
** control flow (cf_if, cf_loop, ...), which no pass merges, fuses, moves or
** removes, and which no dataflow block spans.  As mlc_graph_emit otherwise.
*/
MLC_MUST_USE mlc_status mlc_graph_emit_region(mlc_func *f, mlc_op op, mlc_value *const *args, int nargs,
                                              const mlc_attr *attrs, int nattrs,
                                              const mlc_origin *origin, mlc_value **outs, int *nouts);
/*
** Emits `outs = call_tir(callee, args)` or `call_dps_packed` with the given
** output types (destination-passing: outputs are allocated by the caller),
** or MLC_CALL_FUNC `outs = callee(args)` of a graph function of the module.
*/
MLC_MUST_USE mlc_status mlc_graph_emit_call(mlc_func *f, mlc_call_kind kind, const char *callee,
                                            mlc_value *const *args, int nargs,
                                            const mlc_attr *attrs, int nattrs,
                                            const mlc_type *out_types, int nouts,
                                            const mlc_origin *origin, mlc_value **outs);

/* Infers the output types of a call without emitting it. */
MLC_MUST_USE mlc_status mlc_graph_infer(const mlc_call_info *ci, mlc_type *outs, int *nouts);
/*
** Evaluates an op on constant arguments (compile-time folding).  |in| holds
** each arg's data, |out_types| the inferred types; on success *out[i] is
** data from mlc_const_alloc (transferred).  MLC_UNIMPLEMENTED when the op or
** dtype has no evaluator (the caller then keeps the call).
*/
MLC_MUST_USE mlc_status mlc_graph_eval(const mlc_call_info *ci, const mlc_type *out_types,
                                       int nouts, const void *const *in, void **out);

/* ---- data layouts (graph/infer_layout.c) -------------------------------- */

/*
** A data layout string, as TVM writes them: one upper-case letter per
** primal axis ("NCHW", "OIHW"), and a block of a primal axis as a factor
** and the axis' lower-case letter after it ("NCHW16c": channels split into
** C = channel / 16 and c = channel % 16; "OIHW16i16o").  Each primal axis
** appears once, each block at most once and only after its primal axis.
*/
#define MLC_LAYOUT_MAX_RANK 16
typedef struct mlc_layout {
  int rank;
  char axis[MLC_LAYOUT_MAX_RANK];      /* 'A'..'Z' primal, 'a'..'z' block */
  int64_t factor[MLC_LAYOUT_MAX_RANK]; /* block extent; 0 for a primal axis */
} mlc_layout;

/* Parses |s| into *|out|; 0 on success, -1 when |s| is no valid layout. */
int mlc_layout_parse(const char *s, mlc_layout *out);

/*
** How layout_transform reads its input: for output index y (|dst| dims),
** input dim i reads ((y[outer[i]] * mul[i] + (inner[i] >= 0 ? y[inner[i]] : 0))
** / div[i]) % mod[i] (mod[i] == 0: no modulo), i.e. the primal coordinate
** rebuilt from |dst|'s axes, then split as |src| splits it.
*/
typedef struct mlc_layout_map {
  int src_rank;
  int outer[MLC_LAYOUT_MAX_RANK], inner[MLC_LAYOUT_MAX_RANK];
  int64_t mul[MLC_LAYOUT_MAX_RANK], div[MLC_LAYOUT_MAX_RANK], mod[MLC_LAYOUT_MAX_RANK];
} mlc_layout_map;

/* The map from |dst| back to |src| (both parsed, with the same primal
** axes); 0 on success, -1 when their primal axes differ. */
int mlc_layout_map_make(const mlc_layout *src, const mlc_layout *dst, mlc_layout_map *out);

/*
** Register tiles (graph/infer_layout.c), shared by the default schedule's
** rule T, which tiles a reduction, and alter_layout, which packs a matmul
** weight in blocks of the tile's width.  A tile is rows x columns of
** vectors of |lanes| float32 held across the reduction, at most |max_acc|
** accumulators (of the target's vector registers, the rest holding the
** columns, the broadcasts and what LLVM's scheduling keeps live: 28
** spilled in resnet50's 3x3 convs on AVX-512) and |max_cols| columns.
*/
typedef struct mlc_tile_limits {
  int64_t lanes, max_acc, max_cols;
} mlc_tile_limits;
/* The limits on a target whose widest vector is |vector_bits| (0: 512):
** 16 lanes, 24 accumulators of 32 registers and 4 columns (AVX-512), else
** 8 lanes (4 for 128 bits), 12 of 16 and 5 columns (so that 125 columns,
** 1000 channels in 8-lane blocks, tile as 2 x 5, measured 1.1x faster than
** 7 x 1 on AVX2, and a classifier's 1 x 1000 product as 1 x 5). */
mlc_tile_limits mlc_tile_limits_for(int vector_bits);
/* How good an |r| x |c| tile is (higher is better): first the share of
** the FMA pipes it can keep busy, each step of the reduction issuing r * c
** FMAs and r + c loads (vectors and broadcasts), two of each per cycle,
** with at least 8 accumulators in flight to cover the FMA's latency (a
** 2 x 2 tile waits on it half the time); then FMAs per load. */
double mlc_tile_score(int64_t r, int64_t c);
/* Tile sizes: rows *|r| (a divisor of |rows|) by columns *|c| (a divisor of
** |cols| vectors), the best mlc_tile_score, ties to the larger tile. */
void mlc_tile_sizes(int64_t rows, int64_t cols, const mlc_tile_limits *l, int64_t *r, int64_t *c);

/* "node \"conv1\" (Conv, opset 13)" for messages; "" for a NULL origin. */
const char *mlc_origin_str(const mlc_origin *o, char *buf, size_t size);

/* ---- printing, verifying, passes ---------------------------------------- */

/* Prints |m| in TVMScript-like text to |b|. */
void mlc_graph_print(const mlc_module *m, mlc_strbuf *b);
/* Prints a type like R.Tensor((n, 3, 224, 224), "float32"). */
void mlc_graph_print_type(const mlc_module *m, const mlc_type *t, mlc_strbuf *b);
/* Graphviz dot of the function |f|. */
void mlc_graph_print_dot(const mlc_module *m, const mlc_func *f, mlc_strbuf *b);
/* Checks SSA, def-before-use, arg counts, struct info against inference. */
MLC_MUST_USE mlc_status mlc_graph_verify(const mlc_module *m);

#endif /* MLC_GRAPH_GRAPH_H */
