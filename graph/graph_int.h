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

/* One rule per distinct `infer` name in ops.def (graph/infer.c). */
#define OP(e, name, pat, mn, mx, inf, syn) \
  mlc_status mlc_##inf(const mlc_call_info *ci, mlc_type *outs, int *nouts);
#include "graph/ops.def"
#undef OP

/* Error with the call's origin ("node "x" (Conv, opset 13): op conv: ..."). */
mlc_status mlc_graph_call_error(const mlc_call_info *ci, mlc_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Evaluators of the "other math" ops (graph/eval_misc.c), called by
** mlc_graph_eval for a single output |ot|: *out receives data from
** mlc_const_alloc (transferred); MLC_UNIMPLEMENTED for ops and dtypes it does
** not evaluate. */
mlc_status mlc_graph_eval_misc(const mlc_call_info *ci, const mlc_type *ot, const void *const *in,
                               void **out);

/* Evaluators of the image and indexing ops (graph/eval_image.c), the same
** contract as mlc_graph_eval_misc. */
mlc_status mlc_graph_eval_image(const mlc_call_info *ci, const mlc_type *ot, const void *const *in,
                                void **out);

#endif /* MLC_GRAPH_GRAPH_INT_H */
