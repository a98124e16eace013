/*
** frontend.h: ONNX graph -> graph IR (boundary of frontend/).
**
** One converter per (ONNX op type, since_version) in a sorted table
** (frontend/convert_table.c); for each node the converter with the highest
** since_version <= the model's opset runs.  Converters build graph IR only
** through graph.h, with full dtype and shape inference.  Initializers and
** Constant nodes become constants; dim_param becomes a symbolic dimension;
** nodes may come in any order (they are sorted; a cycle is an error).
**
** Before converting anything, a pre-flight check lists every unsupported op,
** opset, attribute or dtype of the model, each with its node, in one error.
*/
#ifndef MLC_FRONTEND_FRONTEND_H
#define MLC_FRONTEND_FRONTEND_H

#include "base/status.h"
#include "graph/graph.h"
#include "onnx/onnx.h"

typedef struct mlc_fe_options {
  int no_fold; /* 1: keep calls on constants (default folds them) */
  /* 1: floating-point initializers become parameters of main (after the
  ** graph inputs, in initializer order; one a graph input names stays at
  ** that input's place), named by the initializer, each with its data as
  ** the parameter's known value (mlc_func_set_param_value), so nothing
  ** folds through them until bind_params binds them or leaves them inputs.
  ** Integer and bool initializers (shapes, axes, indices), and float ones
  ** a node reads to size its output (Resize's roi and scales, Upsample's
  ** scales, Range's inputs), stay constants.  The floating-point value
  ** tensors of the main graph's Constant nodes count as initializers named
  ** by the node's output (the node is then not converted). */
  int params_as_inputs;
  /* Shapes the user gives graph inputs (input_shape.c); NULL: none. */
  int ninput_shapes;
  const struct mlc_fe_input_shape *input_shapes;
  /* A graph input that is also an initializer is, in ONNX (IR version
  ** >= 4), an input whose initializer is a default the caller may
  ** override.  0 (default): one whose initializer is floating-point and
  ** sizes no output (as params_as_inputs chooses weights) is a parameter
  ** at the graph input's place with the initializer as its default
  ** (mlc_func_set_param_default; nothing folds through it); the others,
  ** and all of them in models of IR version < 4, are constants and no
  ** parameter.  1: every one is a constant (folded and packed like any
  ** weight; the compiled model has no such input), for exporters that list
  ** every weight as an input (PyTorch's keep_initializers_as_inputs).
  ** With params_as_inputs, floating-point weights are parameters anyway
  ** (their initializers become their defaults: bind_params). */
  int fold_default_inputs;
} mlc_fe_options;

/* One graph input's shape as the user gives it (compile --input-shape). */
typedef struct mlc_fe_input_shape {
  const char *name;        /* the graph input */
  int rank;
  const int64_t *dims;     /* rank entries: >= 0 an extent, -1 the symbol syms[d] */
  const char *const *syms; /* rank entries (those of extents unused) */
} mlc_fe_input_shape;

/*
** Pre-flight: returns NULL when every node of |om| (subgraphs included) has a
** converter for the model's opset, the input and output counts its op's
** schema allows and only supported attributes and dtypes, and the model's
** names and opset imports follow ONNX's rules; otherwise one status whose
** message lists every problem on its own line, each naming the node, op type
** and opset (or the name): MLC_INVALID_ARGUMENT when any breaks an ONNX rule,
** else MLC_UNIMPLEMENTED.  The status is transferred to the caller.
*/
MLC_MUST_USE mlc_status mlc_fe_check(const mlc_onnx_model *om);

/*
** Imports |om| into a new module with one graph function "main" (graph
** inputs become its parameters, in order, but for those that are also
** initializers and become constants (see fold_default_inputs); graph
** outputs its return values).  Runs mlc_fe_check first.  |opt| may be NULL.
** |out| is transferred to the caller.
*/
MLC_MUST_USE mlc_status mlc_fe_import(const mlc_onnx_model *om, const mlc_fe_options *opt,
                                      mlc_module **out);

/* Number of ONNX op types with a converter, and the i-th name (sorted). */
int mlc_fe_num_supported(void);
const char *mlc_fe_supported_op(int i);

#endif /* MLC_FRONTEND_FRONTEND_H */
