/* infer.c: STUB, replaced by the inference rules. */
#include "graph/graph_int.h"
mlc_status mlc_infer_argreduce(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_binary(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_binary_lhs(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_broadcast_to(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_cast(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_compare(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_concat(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_conv(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_conv_transpose(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_first(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_gather(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_matmul(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_pad(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_pool(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_reduce(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_reshape(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_shape_of(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_slice(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_tile(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_to_bool(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_transpose(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_unary(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
mlc_status mlc_infer_where(const mlc_call_info *ci, mlc_type *outs, int *nouts) { (void)outs; (void)nouts; return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no inference rule yet"); }
