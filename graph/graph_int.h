/*
** graph_int.h: private to the graph module sources (STYLE R4).
**
** Declarations of the per-op inference rules named in ops.def and of the
** helpers the graph files share.
*/
#ifndef MLC_GRAPH_GRAPH_INT_H
#define MLC_GRAPH_GRAPH_INT_H

#include "graph/graph.h"

typedef mlc_status (*mlc_infer_fn)(const mlc_call_info *ci, mlc_type *outs, int *nouts);

/* One rule per distinct `infer` name in ops.def (graph/infer*.c). */
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) \
  mlc_status mlc_##inf(const mlc_call_info *ci, mlc_type *outs, int *nouts);
#include "graph/ops.def"
#undef OP

/*
** One evaluator per distinct `eval` name in ops.def (graph/eval*.c), called
** by mlc_graph_eval (as mlc_graph_<eval>) for a call |ci| with a single output |ot| whose
** arguments are constants |in|: *out receives data from mlc_const_alloc
** (transferred); MLC_UNIMPLEMENTED (nothing allocated) for an op, dtype or
** attribute value the family does not evaluate, and the call stays.  A
** row whose evaluator is NONE is never folded (mlc_graph_NONE is declared
** here but never defined; eval.c's table maps it to NULL).
*/
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) \
  mlc_status mlc_graph_##ev(const mlc_call_info *ci, const mlc_type *ot, const void *const *in, void **out);
#include "graph/ops.def"
#undef OP

/* Error with the call's origin ("node "x" (Conv, opset 13): op conv: ..."). */
mlc_status mlc_graph_call_error(const mlc_call_info *ci, mlc_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- helpers of the inference rules (graph/infer_util.c) ---------------
** They take the call |ci| (borrowed) and report errors through
** mlc_graph_call_error, so messages name the node and the op. */

/* The type of argument |i| (borrowed from the call). */
static inline const mlc_type *mlc_graph_arg(const mlc_call_info *ci, int i) {
  return &ci->args[i]->type;
}

/* |t| is a dtype of the enum (not INVALID or COUNT). */
static inline int mlc_graph_valid_dtype(mlc_dtype t) {
  return t > MLC_DTYPE_INVALID && t < MLC_DTYPE_COUNT;
}

/* |t| is an integer or float dtype (not bool or string). */
static inline int mlc_graph_is_num(mlc_dtype t) {
  return mlc_dtype_is_float(t) || mlc_dtype_is_int(t);
}

/* Output |k| gets |dt| and |dims| (borrowed) copied into the module arena. */
mlc_status mlc_graph_set_out(const mlc_call_info *ci, mlc_type *outs, int k, mlc_dtype dt,
                             const int64_t *dims, int rank);
/* The single output gets |dt| and |dims| (copied, as mlc_graph_set_out);
** *nouts = 1. */
mlc_status mlc_graph_ret1(const mlc_call_info *ci, mlc_type *outs, int *nouts, mlc_dtype dt,
                          const int64_t *dims, int rank);
/* Every argument has a valid non-string dtype and a rank <= |max_rank|
** (MLC_UNIMPLEMENTED above it). */
mlc_status mlc_graph_check_args(const mlc_call_info *ci, int max_rank);

/* An int attribute (|dflt| when absent). */
mlc_status mlc_graph_attr_int(const mlc_call_info *ci, const char *name, int64_t dflt, int64_t *out);
/* An int attribute that must be 0 or 1 (|dflt| when absent); |out| may be
** NULL to only check it. */
mlc_status mlc_graph_attr_flag(const mlc_call_info *ci, const char *name, int dflt, int *out);
/* Checks that attribute |name|, when present, is a number (float or int). */
mlc_status mlc_graph_attr_number(const mlc_call_info *ci, const char *name);
/* An axis attribute in [0, rank) (|dflt| when absent); no negative axes
** (the frontend normalizes them). */
mlc_status mlc_graph_attr_axis(const mlc_call_info *ci, const char *name, int rank, int64_t dflt,
                               int *out);
/* A string attribute that must be one of |allowed| (NULL-terminated);
** *out borrows the matching entry of |allowed| (or |dflt| when absent). */
mlc_status mlc_graph_attr_choice(const mlc_call_info *ci, const char *name, const char *dflt,
                                 const char *const *allowed, const char **out);

/* Shorthands of the inference rule files, which name their call |ci|:
** they define MLC_GRAPH_INFER_SHORTHANDS before including this header. */
#ifdef MLC_GRAPH_INFER_SHORTHANDS
#define ERR(...) mlc_graph_call_error(ci, MLC_INVALID_ARGUMENT, __VA_ARGS__)
#define UNIMPL(...) mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, __VA_ARGS__)
#define LL(x) ((long long)(x))
#endif

/*
** Whether outputs of |types| (|nouts|) computed from constant inputs of
** |in_bytes| bytes in all may be folded: each static and not a string, and
** together at most MLC_FOLD_MAX_BYTES or MLC_FOLD_GROWTH times the inputs'
** bytes, whichever is larger.  So folding never makes the weights much
** larger than the data the model itself holds (a Transpose or Cast of a
** weight folds whatever its size; a Tile, Expand or ConstantOfShape that
** would blow a few bytes up into megabytes stays a call computed at run
** time), and the compile time it costs stays linear in the model's size.
*/
#define MLC_FOLD_MAX_BYTES ((size_t)4 << 20)
#define MLC_FOLD_GROWTH 4
int mlc_fold_size_ok(const mlc_type *types, int nouts, size_t in_bytes);

#endif /* MLC_GRAPH_GRAPH_INT_H */
