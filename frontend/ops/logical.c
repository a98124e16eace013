/*
** logical.c: converters of ONNX's logical category: comparisons (bool
** results), And/Or/Xor/Not.  Before opset 7 the binary ones take the legacy
** broadcast/axis attributes (math.c aligns them).
*/
#include "frontend/frontend_int.h"

/* ONNX Equal-1,7,11,13: C = A == B */
MLC_FE_CVT(equal) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_EQUAL, &out[0]);
}

/* ONNX Less-1,7,9,13: C = A < B */
MLC_FE_CVT(less) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_LESS, &out[0]);
}

/* ONNX LessOrEqual-12,16: C = A <= B */
MLC_FE_CVT(less_equal) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_LESS_EQUAL, &out[0]);
}

/* ONNX Greater-1,7,9,13: C = A > B */
MLC_FE_CVT(greater) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_GREATER, &out[0]);
}

/* ONNX GreaterOrEqual-12,16: C = A >= B */
MLC_FE_CVT(greater_equal) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_GREATER_EQUAL, &out[0]);
}

/* ONNX And-1,7: C = A && B */
MLC_FE_CVT(and) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_LOGICAL_AND, &out[0]);
}

/* ONNX Or-1,7: C = A || B */
MLC_FE_CVT(or) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_LOGICAL_OR, &out[0]);
}

/* ONNX Xor-1,7: C = A != B (bool) */
MLC_FE_CVT(xor) {
  (void)nin, (void)nout;
  return mlc_fe_binary_node(cx, n, in, MLC_OP_LOGICAL_XOR, &out[0]);
}

/* ONNX Not-1: Y = !X */
MLC_FE_CVT(not) {
  (void)n, (void)nin, (void)nout;
  return mlc_fe_unary(cx, MLC_OP_LOGICAL_NOT, in[0], &out[0]);
}
