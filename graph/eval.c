/* eval.c: STUB, replaced by the constant evaluator. */
#include "graph/graph_int.h"
mlc_status mlc_graph_eval(const mlc_call_info *ci, const mlc_type *out_types, int nouts,
                          const void *const *in, void **out) {
  (void)out_types; (void)nouts; (void)in; (void)out;
  return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no evaluator");
}
