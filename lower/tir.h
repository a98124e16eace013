/*
** tir.h: TensorIR, the loop-level IR (boundary of lower/).
**
** A TIR module holds prim functions.  A prim function takes buffers (its
** parameters, in order: the generated kernel's arguments) and runs a
** statement tree over them: loop nests whose loops are serial, parallel,
** vectorized, unrolled or bound to GPU threads, buffer stores, conditionals,
** local allocations, and blocks.  A block is the unit that schedules move
** around (the seeds' `with T.block("Y")`): it names iteration variables,
** each spatial or reduce, with a domain and a binding to the surrounding
** loop variables, and an optional init statement that runs when every
** reduce iteration variable is at the start of its domain.
**
** Scalar parameters (a symbolic extent `n`) are variables bound from a
** parameter buffer's shape: `n = shape[0] of param 0`.  Every expression
** node carries its dtype and its number of lanes; index arithmetic is int64.
**
** Vectors (what the vectorize pass makes of a `T.vectorized` loop): an
** expression of |lanes| > 1 is a vector of that many elements of its dtype
** (printed "float32x16").  T.Ramp(base, stride, lanes) is the integer vector
** base + i * stride for lane i; T.Broadcast(value, lanes) repeats a scalar.
** Binary ops, selects, casts and calls take operands of equal lanes and
** give that many; a load whose indices include vectors (every vector index
** of the same lanes, scalar indices shared by all lanes) reads one element
** per lane, and a store with vector indices writes a vector value of those
** lanes.  An `if` whose condition is a bool vector is a masked region: its
** branches (stores, evaluates and such ifs only) run per lane, the then
** branch on the lanes where the condition holds, the else branch on the
** others; a lane that is off reads and writes nothing.  Likewise a vector
** select evaluates each arm only on the lanes that take it.
**
** The IR structs are visible (schedules, lowering and codegen read them),
** but they are built through the builders below.  All nodes live in the
** module's arena and are freed with the module.  Builders never fail
** loudly: on out-of-memory, or when given a NULL child, they return NULL,
** so a whole tree can be built and checked once at the end (the arena's
** oom flag is sticky, see mlc_tir_module_oom).  Builders fold trivial
** integer arithmetic on constants (1 + 2 -> 3, x * 1 -> x, x + 0 -> x).
** Malformed trees (an index count that does not match a buffer's rank,
** mismatched dtypes, undefined variables) are built as given and reported
** by mlc_tir_verify_func.
*/
#ifndef MLC_LOWER_TIR_H
#define MLC_LOWER_TIR_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/hash.h"
#include "base/dtype.h"
#include "base/status.h"
#include "base/strbuf.h"

typedef struct mlc_tir_module mlc_tir_module;
typedef struct mlc_tir_var mlc_tir_var;
typedef struct mlc_tir_buffer mlc_tir_buffer;
typedef struct mlc_tir_expr mlc_tir_expr;
typedef struct mlc_tir_stmt mlc_tir_stmt;
typedef struct mlc_tir_func mlc_tir_func;
typedef struct mlc_tir_attr mlc_tir_attr;

/* ---- variables and buffers ---------------------------------------------- */

/* A variable: a loop or block iteration variable (int64), or a scalar
** parameter such as a symbolic extent `n`.  |id| is unique in the module
** (dense, from 0), so passes can keep per-variable tables. */
struct mlc_tir_var {
  const char *name;
  mlc_dtype dtype;
  int id;
};

typedef enum mlc_tir_scope {
  MLC_TIR_SCOPE_GLOBAL = 0, /* function parameters; scratch from the runtime workspace */
  MLC_TIR_SCOPE_LOCAL = 1,  /* private to one thread (stack when small) */
  MLC_TIR_SCOPE_SHARED = 2  /* shared by a GPU thread block; CPU code treats it as global */
} mlc_tir_scope;

/* A multi-dimensional array of |dtype|, compact row-major.  |shape| holds
** |rank| int64 expressions, which may use scalar parameters.  |id| is unique
** in the module.  A view (|view_of| set) names the memory of a parameter
** with another shape: lowering's flattened 1-D view of an N-D parameter,
** declared in the function's |views|. */
struct mlc_tir_buffer {
  const char *name;
  mlc_dtype dtype;
  int rank;
  mlc_tir_expr **shape;
  mlc_tir_scope scope;
  int id;
  mlc_tir_buffer *view_of; /* NULL, or the parameter whose memory this buffer views */
};

/* ---- expressions -------------------------------------------------------- */

/* X(ENUM, printed form, is_comparison) -- ORDER BINOP */
#define MLC_TIR_BINOPS(X)          \
  X(ADD, "+", 0)                   \
  X(SUB, "-", 0)                   \
  X(MUL, "*", 0)                   \
  X(DIV, "/", 0)        /* float division; ints use FLOORDIV */ \
  X(FLOORDIV, "//", 0)  /* rounds toward -inf; x // 0 == 0 */   \
  X(FLOORMOD, "%", 0)   /* sign of the divisor; x % 0 == 0 */   \
  X(TRUNCDIV, "T.truncdiv", 0) /* rounds toward zero, as C */   \
  X(TRUNCMOD, "T.truncmod", 0) /* sign of the dividend, as C fmod */ \
  X(MIN, "T.min", 0)               \
  X(MAX, "T.max", 0)  /* a > b ? a : b (min: a < b ? a : b) */  \
  X(EQ, "==", 1)                   \
  X(NE, "!=", 1)                   \
  X(LT, "<", 1)                    \
  X(LE, "<=", 1)                   \
  X(GT, ">", 1)                    \
  X(GE, ">=", 1)                   \
  X(AND, "and", 0)    /* logical on bool, bitwise on ints */    \
  X(OR, "or", 0)

typedef enum mlc_tir_binop {
#define X(e, s, c) MLC_TIR_##e,
  MLC_TIR_BINOPS(X)
#undef X
  MLC_TIR_BINOP_COUNT
} mlc_tir_binop;

/* X(ENUM, name, nargs) -- float math unless noted.  ORDER INTRIN */
#define MLC_TIR_INTRINS(X)                                  \
  X(EXP, "exp", 1)                                          \
  X(EXP2, "exp2", 1)                                        \
  X(LOG, "log", 1)                                          \
  X(LOG2, "log2", 1)                                        \
  X(SQRT, "sqrt", 1)                                        \
  X(RSQRT, "rsqrt", 1)     /* 1 / sqrt(x) */                \
  X(TANH, "tanh", 1)                                        \
  X(SIGMOID, "sigmoid", 1) /* 1 / (1 + exp(-x)) */          \
  X(ERF, "erf", 1)                                          \
  X(POW, "pow", 2)                                          \
  X(ABS, "abs", 1)         /* ints too */                   \
  X(FLOOR, "floor", 1)                                      \
  X(CEIL, "ceil", 1)                                        \
  X(ROUND, "round", 1)     /* half to even */               \
  X(TRUNC, "trunc", 1)                                      \
  X(SIN, "sin", 1)                                          \
  X(COS, "cos", 1)                                          \
  X(TAN, "tan", 1)                                          \
  X(ASIN, "asin", 1)                                        \
  X(ACOS, "acos", 1)                                        \
  X(ATAN, "atan", 1)                                        \
  X(SINH, "sinh", 1)                                        \
  X(COSH, "cosh", 1)                                        \
  X(ASINH, "asinh", 1)                                      \
  X(ACOSH, "acosh", 1)                                      \
  X(ATANH, "atanh", 1)                                      \
  X(ISNAN, "isnan", 1)     /* result bool */                \
  X(ISINF, "isinf", 1)     /* result bool */          \
  X(SYNC_THREADS, "sync_threads", 0) /* a GPU thread block's barrier (int32 0; statements only) */ \
  X(WARP_SUM, "warp_sum", 1) /* x summed over the 32 threads of a GPU warp, in each */ \
  X(WARP_MAX, "warp_max", 1) /* ... their largest x */        \
  X(WARP_MIN, "warp_min", 1) /* ... their smallest x */      \
  X(PREFETCH, "prefetch", 1) /* T.prefetch(B[i]): fetch B[i]'s cache line early, a hint (int32 0; statements) */ \
  X(LOOP_END, "loop_end", 1) /* of loop variable x: the end of the iterations run now (a parallel loop's chunk) */

typedef enum mlc_tir_intrin {
#define X(e, s, n) MLC_TIR_INTRIN_##e,
  MLC_TIR_INTRINS(X)
#undef X
  MLC_TIR_INTRIN_COUNT
} mlc_tir_intrin;

/* Combiners of a reduction (tensor-expression bodies only). */
typedef enum mlc_tir_reduce_op {
  MLC_TIR_REDUCE_SUM, /* identity 0 */
  MLC_TIR_REDUCE_PROD, /* identity 1 */
  MLC_TIR_REDUCE_MIN, /* identity +inf / the dtype's largest value */
  MLC_TIR_REDUCE_MAX  /* identity -inf / the dtype's smallest value */
} mlc_tir_reduce_op;

typedef enum mlc_tir_expr_kind {
  MLC_TIR_INT_IMM,   /* int_value, wrapped to dtype (u64 as its bit pattern); bool is 0/1 */
  MLC_TIR_FLOAT_IMM, /* float_value */
  MLC_TIR_VAR_REF,   /* var */
  MLC_TIR_BINARY,    /* bin.a OP bin.b; comparisons give bool */
  MLC_TIR_NOT,       /* not un.a (bool), ~un.a (ints) */
  MLC_TIR_SELECT,    /* select.c ? select.t : select.f -- only the chosen arm is evaluated */
  MLC_TIR_CAST,      /* un.a converted to dtype (float -> int saturates, NaN -> 0) */
  MLC_TIR_LOAD,      /* load.buffer[load.indices[0 .. n-1]] */
  MLC_TIR_CALL,      /* call.op(call.args) */
  MLC_TIR_REDUCE,    /* reduce.op over reduce.axes of reduce.source (te only) */
  MLC_TIR_RAMP,      /* ramp.base + i * ramp.stride in lane i (scalar ints, lanes > 1) */
  MLC_TIR_BROADCAST  /* scalar un.a in every lane */
} mlc_tir_expr_kind;

/* Most lanes a vector expression may have. */
#define MLC_TIR_MAX_LANES 64
#define MLC_TIR_MAX_LANES_STR "64"


/* A block iteration variable, or a reduction axis of a te reduction:
** |var| ranges over [min, min + extent); inside a block it takes the value
** of |binding| (an expression of the enclosing loop variables). */
typedef enum mlc_tir_iter_kind { MLC_TIR_ITER_SPATIAL = 0, MLC_TIR_ITER_REDUCE = 1 } mlc_tir_iter_kind;

typedef struct mlc_tir_iter_var {
  mlc_tir_var *var;
  mlc_tir_iter_kind kind;
  mlc_tir_expr *min, *extent;
  mlc_tir_expr *binding; /* NULL for te reduction axes */
} mlc_tir_iter_var;

struct mlc_tir_expr {
  mlc_tir_expr_kind kind;
  mlc_dtype dtype; /* of each lane */
  int lanes;       /* 1: a scalar; > 1: a vector (see the top of this file) */
  union {
    int64_t int_value;
    double float_value;
    mlc_tir_var *var;
    struct {
      mlc_tir_binop op;
      mlc_tir_expr *a, *b;
    } bin;
    struct {
      mlc_tir_expr *a;
    } un;
    struct {
      mlc_tir_expr *c, *t, *f;
    } select;
    struct {
      mlc_tir_expr *base, *stride;
    } ramp;
    struct {
      mlc_tir_buffer *buffer;
      int n;
      mlc_tir_expr **indices;
    } load;
    struct {
      mlc_tir_intrin op;
      int n;
      mlc_tir_expr **args;
    } call;
    struct {
      mlc_tir_reduce_op op;
      mlc_tir_expr *source;
      int naxes;
      mlc_tir_iter_var *axes;
    } reduce;
  };
};

/* ---- statements --------------------------------------------------------- */

typedef enum mlc_tir_for_kind {
  MLC_TIR_FOR_SERIAL = 0,
  MLC_TIR_FOR_PARALLEL,   /* iterations run on the runtime's thread pool */
  MLC_TIR_FOR_VECTORIZED, /* vectorize this loop */
  MLC_TIR_FOR_UNROLLED,   /* unroll this loop fully */
  MLC_TIR_FOR_THREAD_BINDING /* bound to a GPU thread axis (thread tag); serial on CPUs */
} mlc_tir_for_kind;

/* A rectangular region of a buffer: per dimension [min, min + extent). */
typedef struct mlc_tir_region {
  mlc_tir_buffer *buffer;
  int n;
  mlc_tir_expr **min;
  mlc_tir_expr **extent;
} mlc_tir_region;

typedef enum mlc_tir_stmt_kind {
  MLC_TIR_FOR,      /* for var in [min, min + extent): body */
  MLC_TIR_SEQ,      /* stmts[0]; ...; stmts[n-1] */
  MLC_TIR_STORE,    /* buffer[indices] = value */
  MLC_TIR_IF,       /* if cond: then_s else: else_s (else_s may be NULL) */
  MLC_TIR_ALLOCATE, /* buffer (not a parameter) lives while body runs */
  MLC_TIR_EVALUATE, /* evaluate value, drop the result */
  MLC_TIR_BLOCK,    /* bind iter vars; if predicate: (init when reduce vars start); body */
  MLC_TIR_ASSERT    /* if not cond: fail the kernel with op, msg and vals (see below) */
} mlc_tir_stmt_kind;

/* Most values an assert reports. */
#define MLC_TIR_ASSERT_MAX_VALS 3

struct mlc_tir_stmt {
  mlc_tir_stmt_kind kind;
  const char *origin; /* producing graph node name for diagnostics, or NULL */
  union {
    struct {
      mlc_tir_var *var;
      mlc_tir_expr *min, *extent;
      mlc_tir_for_kind kind;
      const char *thread; /* thread tag, e.g. "blockIdx.x" (THREAD_BINDING only) */
      mlc_tir_stmt *body;
      int nannots; /* annotations (keys unique), printed annotations={...} */
      mlc_tir_attr *annots;
    } loop;
    struct {
      int n;
      mlc_tir_stmt **stmts;
    } seq;
    struct {
      mlc_tir_buffer *buffer;
      int n;
      mlc_tir_expr **indices;
      mlc_tir_expr *value;
    } store;
    struct {
      mlc_tir_expr *cond;
      mlc_tir_stmt *then_s, *else_s;
    } if_;
    struct {
      mlc_tir_buffer *buffer;
      mlc_tir_stmt *body;
    } alloc;
    struct {
      mlc_tir_expr *value;
    } eval;
    struct {
      const char *name;
      int niters;
      mlc_tir_iter_var *iters;
      mlc_tir_expr *predicate; /* NULL: always true */
      int nreads, nwrites;     /* optional access regions (0 when unknown) */
      mlc_tir_region *reads, *writes;
      mlc_tir_stmt *init; /* NULL, or run when every reduce iter var == its min */
      mlc_tir_stmt *body;
      int nannots; /* annotations (keys unique), printed T.block_attr({...}) */
      mlc_tir_attr *annots;
    } block;
    /* A check of model data (an index read from a tensor): when |cond| is
    ** false the kernel stops and returns an error (also from inside a
    ** parallel loop), reporting |op| (the ONNX op type), |msg| with "$0",
    ** "$1", "$2" replaced by the int64 values of |vals| (evaluated only on
    ** failure).  |op| and |msg| are the compiler's own text: they become
    ** constant strings of the kernel, never model text. */
    struct {
      mlc_tir_expr *cond;
      const char *op, *msg;
      int nvals;
      mlc_tir_expr *vals[MLC_TIR_ASSERT_MAX_VALS];
    } assert_;
  };
};

/* ---- functions and modules ---------------------------------------------- */

/* |var| = shape[dim] of params[param]. */
typedef struct mlc_tir_scalar_param {
  mlc_tir_var *var;
  int param, dim;
} mlc_tir_scalar_param;

/* A key and a value: function attributes, and the annotations of loops and
** blocks (schedule hints such as "pragma_unroll_explicit": 4; codegen
** ignores keys it does not know). */
typedef enum mlc_tir_attr_kind {
  MLC_TIR_ATTR_STR,
  MLC_TIR_ATTR_INT,
  MLC_TIR_ATTR_BOOL,
  MLC_TIR_ATTR_FLOAT /* |f|; annotations only */
} mlc_tir_attr_kind;

struct mlc_tir_attr {
  const char *key;
  mlc_tir_attr_kind kind;
  const char *s;
  int64_t i;
  double f;
};

/* A prim function.  Attributes the code generator reads: "global_symbol"
** (the kernel's symbol; default: |name|) and "tir.noalias" (parameters
** do not overlap).  "tir.lowered" marks the plain form of tir_lower.h (no
** blocks, 1-D accesses); |views| then declares the flat views of
** parameters the body accesses (printed `A_1 = T.Buffer((16384,),
** "float32", data=A.data)`). */
struct mlc_tir_func {
  const char *name;
  int nparams;
  mlc_tir_buffer **params;
  int nscalars;
  mlc_tir_scalar_param *scalars;
  mlc_tir_stmt *body;
  int nattrs;
  mlc_tir_attr *attrs;
  int nviews;
  mlc_tir_buffer **views; /* each with view_of one of |params| */
};

struct mlc_tir_module {
  mlc_arena *arena;
  int nfuncs, cap_funcs;
  mlc_tir_func **funcs;
  mlc_hash by_name; /* prim func name -> index in funcs + 1 */
  int num_vars;    /* ids handed out so far */
  int num_buffers;
};

/* Creates an empty module.  *|out| is transferred to the caller (destroy with
** mlc_tir_module_destroy). */
MLC_MUST_USE mlc_status mlc_tir_module_create(mlc_allocator a, mlc_tir_module **out);
/* Frees |m| and every node built in it. NULL-safe. */
void mlc_tir_module_destroy(mlc_tir_module *m);
/* Nonzero once a builder ran out of memory in |m|. */
int mlc_tir_module_oom(const mlc_tir_module *m);
/* Adds |f| (built in |m|; retained by the module).  Fails on a NULL |f|
** (a builder ran out of memory) or when a function of the same name exists. */
MLC_MUST_USE mlc_status mlc_tir_module_add(mlc_tir_module *m, mlc_tir_func *f);
/* Puts |repl| (built in |m|) in the place of |old| (a function of |m|),
** e.g. a scheduled copy in the place of the function it was made from. */
MLC_MUST_USE mlc_status mlc_tir_module_replace(mlc_tir_module *m, const mlc_tir_func *old, mlc_tir_func *repl);
/* The function named |name|, or NULL.  Borrowed. */
mlc_tir_func *mlc_tir_module_find(const mlc_tir_module *m, const char *name);

/* ---- builders: every result lives in |m|'s arena (borrowed by the caller);
** strings and arrays passed in are copied; nodes passed in are retained
** (shared, not copied).  NULL on out-of-memory or when a child is NULL.
** Each sets the result's lanes from its operands (the widest, so that a
** mismatch is built as given and reported by the verifier). ---- */

mlc_tir_var *mlc_tir_var_new(mlc_tir_module *m, const char *name, mlc_dtype dtype);
mlc_tir_buffer *mlc_tir_buffer_new(mlc_tir_module *m, const char *name, mlc_dtype dtype, int rank,
                                   mlc_tir_expr *const *shape, mlc_tir_scope scope);
/* A buffer of constant shape |dims|. */
mlc_tir_buffer *mlc_tir_buffer_new_c(mlc_tir_module *m, const char *name, mlc_dtype dtype,
                                     int rank, const int64_t *dims, mlc_tir_scope scope);
/* A view of |base|'s memory (same name, dtype and scope) with shape
** |shape| (|rank| expressions). */
mlc_tir_buffer *mlc_tir_buffer_view(mlc_tir_module *m, mlc_tir_buffer *base, int rank,
                                    mlc_tir_expr *const *shape);

mlc_tir_expr *mlc_tir_int(mlc_tir_module *m, mlc_dtype dtype, int64_t v);
mlc_tir_expr *mlc_tir_i64(mlc_tir_module *m, int64_t v);
mlc_tir_expr *mlc_tir_float(mlc_tir_module *m, mlc_dtype dtype, double v);
mlc_tir_expr *mlc_tir_ref(mlc_tir_module *m, mlc_tir_var *v);
/* a OP b.  The result has a's dtype (bool for comparisons).  DIV on ints
** builds FLOORDIV.  Constant int operands are folded. */
mlc_tir_expr *mlc_tir_binary(mlc_tir_module *m, mlc_tir_binop op, mlc_tir_expr *a, mlc_tir_expr *b);
mlc_tir_expr *mlc_tir_add(mlc_tir_module *m, mlc_tir_expr *a, mlc_tir_expr *b);
mlc_tir_expr *mlc_tir_sub(mlc_tir_module *m, mlc_tir_expr *a, mlc_tir_expr *b);
mlc_tir_expr *mlc_tir_mul(mlc_tir_module *m, mlc_tir_expr *a, mlc_tir_expr *b);
mlc_tir_expr *mlc_tir_min(mlc_tir_module *m, mlc_tir_expr *a, mlc_tir_expr *b);
mlc_tir_expr *mlc_tir_max(mlc_tir_module *m, mlc_tir_expr *a, mlc_tir_expr *b);
mlc_tir_expr *mlc_tir_not(mlc_tir_module *m, mlc_tir_expr *a);
/* c ? t : f; only the chosen arm is evaluated (safe around loads). */
mlc_tir_expr *mlc_tir_select(mlc_tir_module *m, mlc_tir_expr *c, mlc_tir_expr *t, mlc_tir_expr *f);
mlc_tir_expr *mlc_tir_cast(mlc_tir_module *m, mlc_dtype dtype, mlc_tir_expr *a);
/* buffer[indices[0..n-1]] (n should equal the rank; the verifier checks). */
mlc_tir_expr *mlc_tir_load(mlc_tir_module *m, mlc_tir_buffer *buffer, int n,
                           mlc_tir_expr *const *indices);
/* op(args); the dtype is args[0]'s (bool for isnan/isinf). */
mlc_tir_expr *mlc_tir_call(mlc_tir_module *m, mlc_tir_intrin op, int n, mlc_tir_expr *const *args);
mlc_tir_expr *mlc_tir_call1(mlc_tir_module *m, mlc_tir_intrin op, mlc_tir_expr *a);
/* A te reduction: op over |axes| (reduce iter vars without binding). */
mlc_tir_expr *mlc_tir_reduce(mlc_tir_module *m, mlc_tir_reduce_op op, mlc_tir_expr *source,
                             int naxes, const mlc_tir_iter_var *axes);
/* The vector base + i * stride, i < |lanes| (|base| and |stride| scalar
** integers of one dtype); |lanes| == 1 gives |base|. */
mlc_tir_expr *mlc_tir_ramp(mlc_tir_module *m, mlc_tir_expr *base, mlc_tir_expr *stride, int lanes);
/* |value| (a scalar) in |lanes| lanes; |lanes| == 1 gives |value|. */
mlc_tir_expr *mlc_tir_broadcast(mlc_tir_module *m, mlc_tir_expr *value, int lanes);
/* The identity of |op| for |dtype| (0, 1, +-inf or the integer limits). */
mlc_tir_expr *mlc_tir_reduce_identity(mlc_tir_module *m, mlc_tir_reduce_op op, mlc_dtype dtype);

mlc_tir_stmt *mlc_tir_for(mlc_tir_module *m, mlc_tir_var *var, mlc_tir_expr *min,
                          mlc_tir_expr *extent, mlc_tir_for_kind kind, const char *thread,
                          mlc_tir_stmt *body);
/* A loop like |loop| (its variable, kind, thread tag and annotations,
** shared) over [min, min + extent) around |body|: what passes that
** rebuild a loop use, so that nothing of it is lost. */
mlc_tir_stmt *mlc_tir_for_like(mlc_tir_module *m, const mlc_tir_stmt *loop, mlc_tir_expr *min, mlc_tir_expr *extent,
                               mlc_tir_stmt *body);
/* Flattens nested sequences; one statement gives that statement.  NULL
** entries make the result NULL. */
mlc_tir_stmt *mlc_tir_seq(mlc_tir_module *m, int n, mlc_tir_stmt *const *stmts);
mlc_tir_stmt *mlc_tir_seq2(mlc_tir_module *m, mlc_tir_stmt *a, mlc_tir_stmt *b);
mlc_tir_stmt *mlc_tir_store(mlc_tir_module *m, mlc_tir_buffer *buffer, int n,
                            mlc_tir_expr *const *indices, mlc_tir_expr *value);
mlc_tir_stmt *mlc_tir_if(mlc_tir_module *m, mlc_tir_expr *cond, mlc_tir_stmt *then_s,
                         mlc_tir_stmt *else_s /* may be NULL */);
mlc_tir_stmt *mlc_tir_allocate(mlc_tir_module *m, mlc_tir_buffer *buffer, mlc_tir_stmt *body);
mlc_tir_stmt *mlc_tir_evaluate(mlc_tir_module *m, mlc_tir_expr *value);
/* A block; |iters| (copied) must have bindings.  |init| may be NULL. */
mlc_tir_stmt *mlc_tir_block(mlc_tir_module *m, const char *name, int niters,
                            const mlc_tir_iter_var *iters, mlc_tir_stmt *init,
                            mlc_tir_stmt *body);
/* assert |cond| (bool), else fail with |op| and |msg| reporting |vals|
** (|nvals| int64 expressions, at most MLC_TIR_ASSERT_MAX_VALS). */
mlc_tir_stmt *mlc_tir_assert(mlc_tir_module *m, mlc_tir_expr *cond, const char *op, const char *msg,
                             int nvals, mlc_tir_expr *const *vals);
/* Sets a block's predicate (NULL clears it). Returns |block|. */
mlc_tir_stmt *mlc_tir_block_set_predicate(mlc_tir_stmt *block, mlc_tir_expr *pred);
/* The position in |block|'s iteration variables of the one |e| names (a
** variable reference), or -1 when |e| is not one of them. */
int mlc_tir_block_iter_index(const mlc_tir_stmt *block, const mlc_tir_expr *e);
/* Sets a block's access regions (arrays copied). Returns |block| or NULL on oom. */
mlc_tir_stmt *mlc_tir_block_set_regions(mlc_tir_module *m, mlc_tir_stmt *block, int nreads,
                                        const mlc_tir_region *reads, int nwrites,
                                        const mlc_tir_region *writes);

/* A prim function over |params| (copied array).  Not yet in the module. */
mlc_tir_func *mlc_tir_func_new(mlc_tir_module *m, const char *name, int nparams,
                               mlc_tir_buffer *const *params, mlc_tir_stmt *body);
/* Binds scalar |var| = shape[dim] of params[param]. */
MLC_MUST_USE mlc_status mlc_tir_func_add_scalar(mlc_tir_module *m, mlc_tir_func *f,
                                                mlc_tir_var *var, int param, int dim);
/* Declares |view| (a view of one of |f|'s parameters) in |f|'s views. */
MLC_MUST_USE mlc_status mlc_tir_func_add_view(mlc_tir_module *m, mlc_tir_func *f, mlc_tir_buffer *view);
/* Sets attribute |key| (replacing).  Strings copied. */
MLC_MUST_USE mlc_status mlc_tir_func_set_attr_str(mlc_tir_module *m, mlc_tir_func *f,
                                                  const char *key, const char *value);
MLC_MUST_USE mlc_status mlc_tir_func_set_attr_int(mlc_tir_module *m, mlc_tir_func *f,
                                                  const char *key, int64_t value);
MLC_MUST_USE mlc_status mlc_tir_func_set_attr_bool(mlc_tir_module *m, mlc_tir_func *f,
                                                   const char *key, int value);
/* The attribute |key| of |f|, or NULL.  Borrowed. */
const mlc_tir_attr *mlc_tir_func_attr(const mlc_tir_func *f, const char *key);
/* The kernel symbol: the "global_symbol" attribute, else the name. Borrowed. */
const char *mlc_tir_func_symbol(const mlc_tir_func *f);

/* The annotation |key| of a loop or block |st|, or NULL.  Borrowed. */
const mlc_tir_attr *mlc_tir_stmt_annot(const mlc_tir_stmt *st, const char *key);
/* Sets annotation |a| (key and string copied) on a loop or block |st|,
** replacing one of the same key; the array is rebuilt, so copies sharing
** the old one keep it.  Returns |st|, or NULL on oom or when |st| is not a
** loop or block. */
mlc_tir_stmt *mlc_tir_stmt_set_annot(mlc_tir_module *m, mlc_tir_stmt *st, const mlc_tir_attr *a);
/* Removes annotation |key| of a loop or block |st| (the array is rebuilt);
** 1 if it was there, 0 if not, -1 on oom. */
int mlc_tir_stmt_remove_annot(mlc_tir_module *m, mlc_tir_stmt *st, const char *key);

/* ---- copying and substitution ------------------------------------------- */

/* What a copy replaces: variable vars[i] by values[i] (an expression),
** buffer bufs_from[i] by bufs_to[i]; with |fresh_vars|, variables defined
** inside the copied tree (loop and block iteration variables) get fresh
** copies so the copy can sit next to the original. */
typedef struct mlc_tir_subst {
  int nvars;
  mlc_tir_var *const *vars;
  mlc_tir_expr *const *values;
  int nbufs;
  mlc_tir_buffer *const *bufs_from;
  mlc_tir_buffer *const *bufs_to;
  int fresh_vars;
} mlc_tir_subst;

/* Deep copy of |e| / |s| into |m| applying |sub| (NULL: plain copy).  The
** copy goes through the builders, so it is folded again (substituting i = 0
** into i * 16 + j gives j).  Variables and buffers that are not replaced
** are shared with the original.  NULL on out-of-memory. */
mlc_tir_expr *mlc_tir_expr_copy(mlc_tir_module *m, const mlc_tir_expr *e, const mlc_tir_subst *sub);
mlc_tir_stmt *mlc_tir_stmt_copy(mlc_tir_module *m, const mlc_tir_stmt *s, const mlc_tir_subst *sub);

/* ---- vectorization (pass_vectorize.c) ----------------------------------- */

/*
** Replaces each vectorizable `T.vectorized` loop of |f| (lowered form: no
** blocks inside the loop) by its body over vectors of the loop's extent
** (rules at the top of pass_vectorize.c); other loops stay as they are,
** serial with the vectorize hint.  New nodes live in |m|; |f|'s body is
** replaced.  Fails only on out-of-memory.
*/
MLC_MUST_USE mlc_status mlc_tir_vectorize_func(mlc_tir_module *m, mlc_tir_func *f);
#define MLC_TIR_HAVE_VECTORIZE 1 /* for the lowering pipeline (tir_lower.c) */
/* Nonzero if mlc_tir_vectorize_func would vectorize |loop| (borrowed), a
** loop of |f| (borrowed; NULL: parameters do not overlap); else 0 with the
** reason appended to |why| (NULL: not wanted). */
int mlc_tir_vectorize_check(const mlc_tir_func *f, const mlc_tir_stmt *loop, mlc_strbuf *why);

/* Nonzero if |e| is the constant |v|. */
int mlc_tir_is_const(const mlc_tir_expr *e, int64_t v);
/* A number that int expression |e| is provably a multiple of: a power of
** two, at most 2^20 (0 counts as 2^20); 1 when nothing is known.  From
** constants, sums, differences, products and remainders. */
int64_t mlc_tir_known_multiple(const mlc_tir_expr *e);
/* Nonzero if |a| and |b| are the same tree: same kinds, dtypes, lanes,
** operators and constants (floats bit for bit), the same variables and
** buffers (by identity).  Te reductions are never equal. */
int mlc_tir_expr_equal(const mlc_tir_expr *a, const mlc_tir_expr *b);
/* Nonzero if |e| reads variable |v| / any buffer. */
int mlc_tir_expr_uses_var(const mlc_tir_expr *e, const mlc_tir_var *v);
int mlc_tir_expr_has_load(const mlc_tir_expr *e);

/* The printed form of |dtype| with |lanes| ("float32", "float32x16") into
** |buf| of |size| bytes (truncated to fit).  Returns |buf|. */
const char *mlc_tir_dtype_str(mlc_dtype dtype, int lanes, char *buf, size_t size);

/* Names for diagnostics and printers (static storage). */
const char *mlc_tir_binop_name(mlc_tir_binop op);
const char *mlc_tir_intrin_name(mlc_tir_intrin op);
int mlc_tir_intrin_nargs(mlc_tir_intrin op);
const char *mlc_tir_for_kind_name(mlc_tir_for_kind k);
const char *mlc_tir_reduce_op_name(mlc_tir_reduce_op op);

/* ---- printer (tir_print.c) ----------------------------------------------- */

/*
** TVMScript-like text, deterministic:
**
**   @T.prim_func
**   def mm_relu(A: T.Buffer((128, 128), "float32"), ...):
**       T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
**       Y = T.alloc_buffer((128, 128), "float32")
**       for i, j, k in T.grid(128, 128, 128):
**           with T.block("Y"):
**               vi = T.axis.spatial(128, i)
**               vk = T.axis.reduce(128, k)
**               with T.init():
**                   Y[vi, vj] = T.float32(0)
**               Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
**
** Functions with scalar parameters take T.handle arguments and bind them with
** `n = T.int64()` and `A = T.match_buffer(var_A, (n, 4), "float32")`.
** Variables that would shadow a different variable of the same name in scope
** are printed with a suffix (i_1).  Appends to |out| (check out->oom).
*/
void mlc_tir_print_module(const mlc_tir_module *m, mlc_strbuf *out);
void mlc_tir_print_func(const mlc_tir_func *f, mlc_strbuf *out);
void mlc_tir_print_stmt(const mlc_tir_stmt *s, int indent, mlc_strbuf *out);
void mlc_tir_print_expr(const mlc_tir_expr *e, mlc_strbuf *out);

/* ---- parser (tir_parse.c) ------------------------------------------------ */

/*
** Reads the text the printer writes (above) back into TIR, so that
** print -> parse -> print is identical: expressions are built as written
** (no folding), a T.grid is a nest of serial loops, the statements after
** `Y = T.alloc_buffer(...)` are its body, a scalar parameter is bound by its
** `# A.shape[0]` comment (else to the first dimension that is exactly it).
** Loop and block iteration variables take their extent's integer dtype.
*/
/* Parses every prim function in |src| (|len| bytes, need not be NUL-terminated)
** into |m| and adds them to it.  Errors name |srcname|:LINE:COL and what was
** expected.  Never crashes on any input; recursion depth is bounded. */
MLC_MUST_USE mlc_status mlc_tir_parse_module(mlc_tir_module *m, const char *src, size_t len,
                                             const char *srcname);
/* Parses exactly one prim function; *|out| is built in |m| but not added. */
MLC_MUST_USE mlc_status mlc_tir_parse_func(mlc_tir_module *m, const char *src, size_t len,
                                           const char *srcname, mlc_tir_func **out);

/* ---- verifier (tir_verify.c) --------------------------------------------- */

/*
** Checks |f|: variables defined before use (and not redefined while in
** scope), buffers are parameters or allocated around their uses, index
** counts equal ranks, operand and store dtypes agree, loop bounds and
** indices are integers, conditions are bool, lanes agree (operands of equal
** lanes, ramps over scalar integers, stores of a vector value at vector
** indices, only stores, evaluates and ifs under a vector condition), block
** iteration variables
** (reduce ones never index a buffer the block writes; an init only in blocks
** with reduce variables), no parallel loop inside another parallel loop,
** no te reductions left.  Every problem found is listed in one status
** (INVALID_ARGUMENT) that names the function and the offending node.
** Returns NULL when |f| is well formed.  Result transferred to the caller.
*/
MLC_MUST_USE mlc_status mlc_tir_verify_func(const mlc_tir_func *f);
/* Verifies every function of |m| (and the module's oom flag). */
MLC_MUST_USE mlc_status mlc_tir_verify_module(const mlc_tir_module *m);

#endif /* MLC_LOWER_TIR_H */
