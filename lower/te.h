/*
** te.h: the tensor-expression builder (compute(shape, body) -> prim func).
**
** Legalization describes each op as tensors computed from other tensors,
** as TVM's te does:
**
**   A = placeholder("A", (n, 128), f32)
**   k = reduce_axis(128, "k")
**   Y = compute("Y", (n, 128), lambda i, j: sum(A[i, k] * B[k, j], k))
**   C = compute("C", (n, 128), lambda i, j: max(Y[i, j], 0))
**   f = create_prim_func("mm_relu", outputs [C], inputs [A, B])
**
** A compute's body is an expression of its index variables; reads of other
** tensors are mlc_te_load; a reduction (te_sum/max/min/prod over reduce
** axes) must be the whole body.  create_prim_func gives one block per
** compute stage, in creation order, inside serial loops (spatial axes
** outside, reduce axes inside); a reduction stage's block has reduce iter
** vars and a T.init() with the combiner's identity.  Stages that are not
** outputs become scratch buffers allocated around the body.  Shapes may use
** scalar variables (a symbolic extent `n`); each one is bound to the first
** parameter dimension that is exactly that variable.
** After mlc_te_unique_names, a name given twice in the builder (two ops'
** stages built into one prim function) is made unique with a suffix:
** T_add, T_add_1, ...
**
** A check stage (mlc_te_check) computes no tensor: it runs asserts of the
** inputs (an index read from a tensor lies in its range) over a loop nest
** of its own.  Every check stage is part of the prim function, in creation
** order with the compute stages, so stages created after it never see data
** it rejects.
**
** Errors (a load with the wrong number of indices, a reduction that is not
** the whole body, an input that is not listed) are sticky in the builder:
** the te_* expression helpers return NULL and the next mlc_te_compute or
** mlc_te_create_prim_func returns the status.
*/
#ifndef MLC_LOWER_TE_H
#define MLC_LOWER_TE_H

#include "lower/tir.h"

typedef struct mlc_te_builder mlc_te_builder;

/* A tensor: a placeholder (input) or a compute stage.  Fields are read-only
** for users; |scope| may be set on intermediate stages before
** create_prim_func (default global: runtime workspace; local: stack). */
typedef struct mlc_te_tensor {
  const char *name;
  mlc_dtype dtype;
  int rank;
  mlc_tir_expr **shape;
  mlc_tir_buffer *buffer; /* the buffer loads and stores of this tensor use */
  mlc_tir_scope scope;
  int is_compute;
  int index;              /* creation order in the builder */
  /* compute and check stages */
  int naxes;
  mlc_tir_var **axes;     /* the body's index variables */
  mlc_tir_expr *body;
  mlc_tir_stmt *check;    /* a check stage: its asserts (body and buffer are NULL) */
} mlc_te_tensor;

/* Returns the body of a compute at |idx| (|rank| int64 index expressions,
** borrowed); NULL after recording an error with mlc_te_fail. */
typedef mlc_tir_expr *(*mlc_te_body_fn)(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user);

/* A builder adding nodes to |m| (borrowed; must outlive the builder).
** *|out| transferred (destroy with mlc_te_builder_destroy). */
MLC_MUST_USE mlc_status mlc_te_builder_create(mlc_tir_module *m, mlc_te_builder **out);
/* Makes the names of the tensors |b| creates from now on unique among its
** tensors (fuse_tir: one prim function from several ops' rules). */
void mlc_te_unique_names(mlc_te_builder *b);
/* NULL-safe. Tensors stay valid (they live in the module's arena). */
void mlc_te_builder_destroy(mlc_te_builder *b);
/* The module the builder adds to. Borrowed. */
mlc_tir_module *mlc_te_module(mlc_te_builder *b);

/* An input tensor; |shape| (|rank| int64 exprs) copied.  *|out| borrowed
** (lives in the module). */
MLC_MUST_USE mlc_status mlc_te_placeholder(mlc_te_builder *b, const char *name, int rank,
                                           mlc_tir_expr *const *shape, mlc_dtype dtype,
                                           mlc_te_tensor **out);
/* A compute stage of |rank| dims, body from |fn(b, idx, user)|, dtype that
** of the body.  |axis_names| (may be NULL: i0, i1, ...) names the loops.
** *|out| borrowed. */
MLC_MUST_USE mlc_status mlc_te_compute(mlc_te_builder *b, const char *name, int rank,
                                       mlc_tir_expr *const *shape, const char *const *axis_names,
                                       mlc_te_body_fn fn, void *user, mlc_te_tensor **out);

/* Returns the statement (asserts, or a sequence of them) a check stage
** runs at |idx|; NULL after recording an error with mlc_te_fail. */
typedef mlc_tir_stmt *(*mlc_te_check_fn)(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user);

/* A check stage over |shape| (|rank| dims, loops named i0, i1, ...) running
** |fn(b, idx, user)|; it reads tensors with mlc_te_load like a compute. */
MLC_MUST_USE mlc_status mlc_te_check(mlc_te_builder *b, const char *name, int rank,
                                     mlc_tir_expr *const *shape, mlc_te_check_fn fn, void *user);

/* t[idx] inside a compute body (checks the index count). */
mlc_tir_expr *mlc_te_load(mlc_te_builder *b, mlc_te_tensor *t, int n, mlc_tir_expr *const *idx);
/* A new reduce axis over [0, extent) named |name|, as a variable
** reference to use in indices and to pass to te_sum and friends. */
mlc_tir_expr *mlc_te_reduce_axis(mlc_te_builder *b, mlc_tir_expr *extent, const char *name);
/* Reductions of |e| over |axes| (references from mlc_te_reduce_axis). */
mlc_tir_expr *mlc_te_sum(mlc_te_builder *b, mlc_tir_expr *e, mlc_tir_expr *const *axes, int n);
mlc_tir_expr *mlc_te_max(mlc_te_builder *b, mlc_tir_expr *e, mlc_tir_expr *const *axes, int n);
mlc_tir_expr *mlc_te_min(mlc_te_builder *b, mlc_tir_expr *e, mlc_tir_expr *const *axes, int n);
mlc_tir_expr *mlc_te_prod(mlc_te_builder *b, mlc_tir_expr *e, mlc_tir_expr *const *axes, int n);

/* Records |st| (transferred) as the builder's error unless one is set;
** returns NULL so a body callback can `return mlc_te_fail(b, ...)`. */
mlc_tir_expr *mlc_te_fail(mlc_te_builder *b, mlc_status st);

/*
** Builds a prim func named |name| whose parameters are |inputs| then
** |outputs| (destination passing), computing every stage the outputs need.
** Every placeholder reached must be among |inputs|.  The function has the
** attributes global_symbol = |name| and tir.noalias = True.  It is not added
** to the module (see mlc_tir_module_add).  *|out| borrowed (module arena).
*/
MLC_MUST_USE mlc_status mlc_te_create_prim_func(mlc_te_builder *b, const char *name, int nout,
                                                mlc_te_tensor *const *outputs, int nin,
                                                mlc_te_tensor *const *inputs, mlc_tir_func **out);

#endif /* MLC_LOWER_TE_H */
