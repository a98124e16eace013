/*
** frontend_int.h: private to frontend/ (STYLE R4).
**
** The converter table (convert_table.c), the converter context and the
** helpers converters share (context.c): attribute access with defaults,
** constant inputs read as numbers, emitting graph ops with the node's
** origin, and errors that name the node:
**
**   node "conv1" (Conv, opset 13): kernel_shape has 3 entries, weight has 2 spatial dims
**
** A converter turns one ONNX node into graph IR, only through graph.h's
** builders (mlc_graph_emit*, mlc_module_add_const, ...).  It receives the
** node's input values (NULL for an omitted optional input) and fills one
** value per node output (it may leave an output NULL only when its name is
** empty, i.e. unused).  Converters run after the pre-flight check, so the
** attributes they read have the declared types.
*/
#ifndef MLC_FRONTEND_FRONTEND_INT_H
#define MLC_FRONTEND_FRONTEND_INT_H

#include <stdint.h>

#include "base/arena.h"
#include "base/hash.h"
#include "base/strbuf.h"
#include "frontend/frontend.h"

/* ---- converter context -------------------------------------------------- */

typedef struct mlc_fe_ctx {
  mlc_module *mod;
  mlc_func *fn;               /* the function being built ("main") */
  int opset;                  /* the model's opset of the default domain */
  const mlc_onnx_node *node;  /* the node being converted */
  mlc_origin origin;          /* its origin, passed to every emit */
  mlc_arena *scratch;         /* reset after each node */
  const mlc_onnx_graph *graph; /* the graph being converted (declared types); may be NULL */
  const struct mlc_fe_scope *scope; /* ONNX names visible to the node (subgraph.c); may be NULL */
} mlc_fe_ctx;

typedef mlc_status (*mlc_fe_cvt_fn)(mlc_fe_ctx *cx, const mlc_onnx_node *n,
                                    mlc_value *const *in, int nin, mlc_value **out, int nout);

/* The opsets of the default domain this build takes: the versions the
** converter table knows (no row has a since_version above the maximum). */
#define MLC_FE_OPSET_MIN 1
#define MLC_FE_OPSET_MAX 20

/* The model's opset of the default domain ("" or "ai.onnx"; its first
** import); 1 for models older than opset_import; 0 when a newer model
** declares none (check.c).  The pre-flight check refuses versions outside
** [MLC_FE_OPSET_MIN, MLC_FE_OPSET_MAX]. */
int mlc_fe_model_opset(const mlc_onnx_model *om);
/* 1 for "" (or NULL) and "ai.onnx". */
int mlc_fe_is_default_domain(const char *domain);

/* ---- pre-flight problems ------------------------------------------------ */

/* Collects the lines of the pre-flight error (frontend/check.c): features
** this build does not support, and errors (what ONNX does not allow). */
typedef struct mlc_fe_problems {
  mlc_strbuf text;
  int count;
  mlc_strbuf errors;
  int nerrors;
  const char *where; /* prefix of the current node's lines: node "x" #3 (Op, opset 13) */
} mlc_fe_problems;

/* Adds one problem line "  <where>: <message>" (an unsupported feature). */
void mlc_fe_problem(mlc_fe_problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds one error line "  <where>: <message>" (an invalid model). */
void mlc_fe_invalid(mlc_fe_problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Per-row check of attribute values (and output use) a converter cannot
** handle; reports each with mlc_fe_problem. */
typedef void (*mlc_fe_check_fn)(mlc_fe_problems *p, const mlc_onnx_node *n, int opset);

/* ---- the converter table (convert_table.c) ------------------------------ */

typedef struct mlc_fe_row {
  const char *op_type;
  int since;                  /* ONNX since_version of this op version */
  mlc_fe_cvt_fn cvt;          /* NULL: this version exists but is not supported */
  const char *const *attrs;   /* accepted attributes "name:T" (T: i f s t I F S g), NULL-terminated */
  mlc_fe_check_fn check;      /* optional */
} mlc_fe_row;

/* The table (static storage), sorted by (op_type, since); |*n| receives
** its length. */
const mlc_fe_row *mlc_fe_table(int *n);
/*
** The row (static storage) for |op_type| at |opset|: the highest since <=
** opset.  NULL when no row of the op has since <= opset; *|first_since| (may be NULL) receives the lowest
** since of the op (0 if none) so callers can say why nothing matched.
*/
const mlc_fe_row *mlc_fe_lookup(const char *op_type, int opset, int *first_since);
/* 1 when the table is sorted and well-formed, with an arity per row (for
** tests). */
int mlc_fe_table_ok(void);

/* The input and output counts ONNX allows for one op version, from its
** schema (arity.def, written by gen_arity.py). */
typedef struct mlc_fe_arity {
  int min_in, max_in;   /* max -1: variadic */
  int min_out, max_out; /* max -1: variadic */
  /* One letter per formal parameter: s single (required: an empty name is
  ** an error), o optional (an empty name omits it), v variadic (the last
  ** parameter, repeated; empty input names are errors). */
  const char *ins, *outs;
} mlc_fe_arity;
/* The arity of row |r| (static storage); NULL when arity.def lacks it. */
const mlc_fe_arity *mlc_fe_row_arity(const mlc_fe_row *r);
/*
** Checks the input and output names of |n| against the arity of |r|: the
** counts (empty names included, as ONNX counts them) and no empty name
** where a value is required.  0 when they fit; else -1 with the problem
** ("takes 2 inputs, got 1") in |msg|[0..size).
*/
int mlc_fe_check_arity(const mlc_fe_row *r, const mlc_onnx_node *n, char *msg, size_t size);

/* ---- attributes --------------------------------------------------------- */

/* The attribute |name| of |n| or NULL (borrowed from the ONNX view). */
const mlc_onnx_attr *mlc_fe_attr(const mlc_onnx_node *n, const char *name);
/* Typed reads with a default for an absent attribute (strings borrowed). */
int64_t mlc_fe_attr_int(const mlc_onnx_node *n, const char *name, int64_t dflt);
double mlc_fe_attr_float(const mlc_onnx_node *n, const char *name, double dflt);
const char *mlc_fe_attr_str(const mlc_onnx_node *n, const char *name, const char *dflt);
/* The INTS attribute |name|: count in the return value, data in *out
** (borrowed); -1 when absent. */
int mlc_fe_attr_ints(const mlc_onnx_node *n, const char *name, const int64_t **out);
/* 1 when output |i| of |n| exists and has a non-empty name. */
int mlc_fe_output_used(const mlc_onnx_node *n, int i);

/* ---- errors ------------------------------------------------------------- */

/* "node "conv1" #3" (with |with_index|) or "node "conv1""; "node #3" when
** |name| is empty.  Returns |buf|. */
const char *mlc_fe_node_label(const char *name, int index, int with_index, char *buf, size_t size);

/* ---- input_shape.c: the user's input shapes ------------------------------- */

/* Checks the pinned shapes of |opt| against |g|'s inputs. */
MLC_MUST_USE mlc_status mlc_fe_pins_check(const mlc_onnx_graph *g, const mlc_fe_options *opt);
/* Rank of input |vi|; -1: unknown. */
int mlc_fe_input_rank(const mlc_onnx_value_info *vi, const mlc_fe_options *opt);
/* Dim |d| of input |vi|: pinned (directly, or through its dim_param),
** else the model's (dim_value, dim_param symbol, or a fresh symbol). */
MLC_MUST_USE mlc_status mlc_fe_input_dim(mlc_module *m, const mlc_onnx_graph *g, const mlc_fe_options *opt,
                                         const mlc_onnx_value_info *vi, int d, int64_t *out);
/* An error "node "x" (Op, opset N): <message>" with |code|; transferred to
** the caller. */
mlc_status mlc_fe_error(const mlc_fe_ctx *cx, mlc_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- constants ---------------------------------------------------------- */

/* The constant behind |v|, or NULL when |v| is NULL or not a constant
** (borrowed from the module). */
const mlc_const *mlc_fe_const(const mlc_fe_ctx *cx, const mlc_value *v);
/*
** Reads the integer constant |v| (rank 0 or 1, any integer dtype) into
** scratch memory: *out is borrowed from cx->scratch (valid until the node
** is done), *n its length.
** |what| names the input in errors: not a constant -> MLC_UNIMPLEMENTED
** "<what> computed at run time is not supported yet".
*/
MLC_MUST_USE mlc_status mlc_fe_const_ints(mlc_fe_ctx *cx, const mlc_value *v, const char *what,
                                          int64_t **out, int *n);
/*
** |v| as dims known when compiling: a constant of entries >= 0, or an
** integer vector whose values the graph knows (mlc_value.nsv: a shape
** computed from shapes), entries >= 0 or symbols.  1 with *|dims| (scratch)
** and *|n|; 0 otherwise (then nothing is reported).
*/
int mlc_fe_known_dims(mlc_fe_ctx *cx, const mlc_value *v, int64_t **dims, int *n);

/* Reads the one-element constant |v| (any numeric dtype) as a double. */
MLC_MUST_USE mlc_status mlc_fe_const_scalar(mlc_fe_ctx *cx, const mlc_value *v, const char *what,
                                            double *out);
/* Element |i| of numeric |data| of |dt| as a double, and the reverse (rounded
** or saturated as a conversion to |dt| does). */
double mlc_fe_elem_get(mlc_dtype dt, const void *data, int64_t i);
void mlc_fe_elem_set(mlc_dtype dt, void *data, int64_t i, double x);
/* A new rank-0 constant of |dt| holding |x| (rounded as the dtype does);
** *out is owned by the module. */
MLC_MUST_USE mlc_status mlc_fe_scalar(mlc_fe_ctx *cx, mlc_dtype dt, double x, mlc_value **out);
/* A new 1-D int64 constant holding a copy of |v|[0..n); *out is owned by
** the module. */
MLC_MUST_USE mlc_status mlc_fe_const_i64(mlc_fe_ctx *cx, const int64_t *v, int n,
                                         mlc_value **out);

/* ---- emitting ----------------------------------------------------------- */

/* mlc_graph_emit1 on the context's function with the node's origin: |args|
** and |attrs| are borrowed (copied into the IR); *out is owned by the
** module.  Calls on constants fold. */
MLC_MUST_USE mlc_status mlc_fe_emit(mlc_fe_ctx *cx, mlc_op op, mlc_value *const *args, int nargs,
                                    const mlc_attr *attrs, int nattrs, mlc_value **out);
/* Unary and binary shorthands (no attributes). */
MLC_MUST_USE mlc_status mlc_fe_unary(mlc_fe_ctx *cx, mlc_op op, mlc_value *x, mlc_value **out);
MLC_MUST_USE mlc_status mlc_fe_binary(mlc_fe_ctx *cx, mlc_op op, mlc_value *a, mlc_value *b,
                                      mlc_value **out);
/* reshape |x| to |dims| (resolved; symbolic dims allowed; borrowed);
** returns |x| itself when its shape already is |dims|. */
MLC_MUST_USE mlc_status mlc_fe_reshape(mlc_fe_ctx *cx, mlc_value *x, const int64_t *dims, int rank,
                                       mlc_value **out);

/* ---- shapes ------------------------------------------------------------- */

/* Normalizes |axis| against |rank| (negative counts from the back); error
** naming |what| when out of [-rank, rank). */
MLC_MUST_USE mlc_status mlc_fe_axis(const mlc_fe_ctx *cx, int64_t axis, int rank, const char *what,
                                    int *out);
/*
** The product of |dims|[0..n) as one dim: a constant when all are static, a
** symbol when exactly one is symbolic and the others multiply to 1.  Else
** MLC_UNIMPLEMENTED naming |what|.
*/
MLC_MUST_USE mlc_status mlc_fe_dim_product(const mlc_fe_ctx *cx, const int64_t *dims, int n,
                                           const char *what, int64_t *out);
/* "(n, 3, 224, 224)" ("(4,)" for rank 1) of a type, for messages; the
** string is borrowed from cx->scratch. */
const char *mlc_fe_shape_str(mlc_fe_ctx *cx, const mlc_type *t);

/* ---- converters (the files under frontend/ops/); one per row of the table
**      (convert.def) ---------------------------------------------------- */

#define MLC_FE_CVT(name)                                                                     \
  mlc_status mlc_fe_cvt_##name(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *const *in, \
                               int nin, mlc_value **out, int nout)
#define MLC_FE_CHECK(name) void mlc_fe_chk_##name(mlc_fe_problems *p, const mlc_onnx_node *n, int opset)

/* Every converter and check the table names (convert.def); a row naming
** one that is defined nowhere fails to link.  (mlc_fe_chk_NONE, declared
** for rows without a check, is never defined or used.) */
#define R(op, since, fn, attrs, chk) MLC_FE_CVT(fn); MLC_FE_CHECK(chk);
#include "frontend/convert.def"
#undef R

/* math.c: emits binary |op| on the node's two inputs, with the legacy (opset < 7)
** broadcast/axis attributes applied. */
MLC_MUST_USE mlc_status mlc_fe_binary_node(mlc_fe_ctx *cx, const mlc_onnx_node *n,
                                           mlc_value *const *in, mlc_op op, mlc_value **out);
/* dynamic.c: run-time shape forms, used when the shape-defining input is not
** a constant (args borrowed; *out owned by the module) */
MLC_MUST_USE mlc_status mlc_fe_dyn_reshape(mlc_fe_ctx *cx, mlc_value *x, mlc_value *shape,
                                           int allowzero, mlc_value **out);
MLC_MUST_USE mlc_status mlc_fe_dyn_unsqueeze(mlc_fe_ctx *cx, mlc_value *x, mlc_value *axes,
                                             mlc_value **out);
MLC_MUST_USE mlc_status mlc_fe_dyn_squeeze(mlc_fe_ctx *cx, mlc_value *x, mlc_value *axes,
                                           mlc_value **out);
MLC_MUST_USE mlc_status mlc_fe_dyn_expand(mlc_fe_ctx *cx, mlc_value *x, mlc_value *shape,
                                          mlc_value **out);
MLC_MUST_USE mlc_status mlc_fe_dyn_tile(mlc_fe_ctx *cx, mlc_value *x, mlc_value *repeats,
                                        mlc_value **out);
/* |value|: the one-element fill (a constant) */
MLC_MUST_USE mlc_status mlc_fe_dyn_const_of_shape(mlc_fe_ctx *cx, mlc_value *value,
                                                  mlc_value *shape, mlc_value **out);
/* |axes|, |steps| may be NULL */
MLC_MUST_USE mlc_status mlc_fe_dyn_slice(mlc_fe_ctx *cx, mlc_value *x, mlc_value *starts,
                                         mlc_value *ends, mlc_value *axes, mlc_value *steps,
                                         mlc_value **out);
/* |value|, |axes| may be NULL; mode from |n| */
MLC_MUST_USE mlc_status mlc_fe_dyn_pad(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x,
                                       mlc_value *pads, mlc_value *value, mlc_value *axes,
                                       mlc_value **out);
/* |axis| normalized; one output per used output of |n| */
MLC_MUST_USE mlc_status mlc_fe_dyn_split(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *x,
                                         int axis, mlc_value *split, mlc_value **out, int nout);
MLC_MUST_USE mlc_status mlc_fe_dyn_range(mlc_fe_ctx *cx, mlc_value *start, mlc_value *limit,
                                         mlc_value *delta, mlc_value **out);
/* |kind|: sum, mean, max, min or prod */
MLC_MUST_USE mlc_status mlc_fe_dyn_reduce(mlc_fe_ctx *cx, mlc_value *x, mlc_value *axes,
                                          const char *kind, int keepdims, int noop_empty,
                                          mlc_value **out);
/* subgraph.c: control flow, its subgraphs inlined into the function */
/* A name scope: ONNX value names -> values (|values| borrowed), with the
** enclosing scope searched after it. */
typedef struct mlc_fe_scope {
  const mlc_hash *values;
  const struct mlc_fe_scope *parent;
} mlc_fe_scope;
/* The value named |name| in |scope| or an enclosing one; NULL if none
** (borrowed from the module). */
mlc_value *mlc_fe_scope_get(const mlc_fe_scope *scope, const char *name);
/*
** Converts node |n| (borrowed) through its converter in |base|'s function:
** a copy of |base| (mod, fn, opset, scratch, graph and scope set; borrowed)
** with the node and its origin filled in is what the converter gets.  Its
** inputs are looked up in base->scope (omitted optional inputs are NULL);
** its outputs are named after the ONNX outputs and put in |vals| (borrowed;
** keys borrowed from |n|, values owned by the module).  Per-node arrays come
** from base->scratch, which the caller resets.
*/
MLC_MUST_USE mlc_status mlc_fe_convert_node(const mlc_fe_ctx *base, mlc_hash *vals,
                                            const mlc_onnx_node *n);
/*
** Converts the subgraph |g| (borrowed) into cx's function: its formal inputs
** bound to |args|[0..nargs) (borrowed; nargs must equal g's input count),
** its initializers and Constant nodes as constants, other names looked up in
** cx->scope.  outs[0..g->noutputs) receive its outputs (owned by the module).
** |what| names the subgraph in errors ("then_branch").
*/
MLC_MUST_USE mlc_status mlc_fe_inline_graph(mlc_fe_ctx *cx, const mlc_onnx_graph *g, const char *what,
                                            mlc_value *const *args, int nargs, mlc_value **outs);

#endif /* MLC_FRONTEND_FRONTEND_INT_H */
