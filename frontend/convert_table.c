/*
** convert_table.c: the converter table (STYLE R15).
**
** One row per (ONNX op type, since_version): the converter, the attributes
** the converter accepts (with their ONNX attribute types) and an optional
** check of attribute values it cannot handle.  Rows are sorted by (op_type,
** since); a node gets the row with the highest since_version <= the model's
** opset (binary search).  Versions that only widened the type list share a
** converter with the version before them; they are listed so the table shows
** every version.  The input and output counts ONNX allows for each row are in
** arity.def, generated from the ONNX schemas by gen_arity.py: run it after
** adding a row (mlc_fe_table_ok fails until then).
*/
#include <string.h>

#include "frontend/frontend_int.h"

/* ---- accepted attributes ("name:T"; T: i int, f float, s string, t tensor,
**      I ints, F floats, S strings, T sparse tensor) ----------------------- */

static const char *const A_NONE[] = {NULL};
static const char *const A_CONSUMED[] = {"consumed_inputs:I", NULL};
static const char *const A_BCAST1[] = {"axis:i", "broadcast:i", "consumed_inputs:I", NULL};
static const char *const A_BCAST[] = {"axis:i", "broadcast:i", NULL};
static const char *const A_AXIS[] = {"axis:i", NULL};
static const char *const A_AXES[] = {"axes:I", NULL};
static const char *const A_PERM[] = {"perm:I", NULL};
static const char *const A_ALPHA1[] = {"alpha:f", "consumed_inputs:I", NULL};
static const char *const A_ALPHA[] = {"alpha:f", NULL};
static const char *const A_CLIP1[] = {"consumed_inputs:I", "max:f", "min:f", NULL};
static const char *const A_CLIP6[] = {"max:f", "min:f", NULL};
static const char *const A_GEMM1[] = {"alpha:f", "beta:f", "broadcast:i", "transA:i", "transB:i", NULL};
static const char *const A_GEMM7[] = {"alpha:f", "beta:f", "transA:i", "transB:i", NULL};
static const char *const A_CONV[] = {"auto_pad:s", "dilations:I", "group:i",
                                     "kernel_shape:I", "pads:I", "strides:I", NULL};
static const char *const A_MAXPOOL1[] = {"auto_pad:s", "kernel_shape:I", "pads:I", "strides:I", NULL};
static const char *const A_MAXPOOL8[] = {"auto_pad:s", "kernel_shape:I", "pads:I",
                                         "storage_order:i", "strides:I", NULL};
static const char *const A_MAXPOOL10[] = {"auto_pad:s", "ceil_mode:i", "dilations:I", "kernel_shape:I",
                                          "pads:I", "storage_order:i", "strides:I", NULL};
static const char *const A_AVGPOOL1[] = {"auto_pad:s", "kernel_shape:I", "pads:I", "strides:I", NULL};
static const char *const A_AVGPOOL7[] = {"auto_pad:s", "count_include_pad:i", "kernel_shape:I",
                                         "pads:I", "strides:I", NULL};
static const char *const A_AVGPOOL10[] = {"auto_pad:s", "ceil_mode:i", "count_include_pad:i",
                                          "kernel_shape:I", "pads:I", "strides:I", NULL};
static const char *const A_AVGPOOL19[] = {"auto_pad:s", "ceil_mode:i", "count_include_pad:i",
                                          "dilations:I", "kernel_shape:I", "pads:I", "strides:I", NULL};
static const char *const A_BN1[] = {"consumed_inputs:I", "epsilon:f", "is_test:i", "momentum:f",
                                    "spatial:i", NULL};
static const char *const A_BN6[] = {"epsilon:f", "is_test:i", "momentum:f", "spatial:i", NULL};
static const char *const A_BN7[] = {"epsilon:f", "momentum:f", "spatial:i", NULL};
static const char *const A_BN9[] = {"epsilon:f", "momentum:f", NULL};
static const char *const A_BN14[] = {"epsilon:f", "momentum:f", "training_mode:i", NULL};
static const char *const A_DROPOUT1[] = {"consumed_inputs:I", "is_test:i", "ratio:f", NULL};
static const char *const A_DROPOUT6[] = {"is_test:i", "ratio:f", NULL};
static const char *const A_DROPOUT7[] = {"ratio:f", NULL};
static const char *const A_DROPOUT12[] = {"seed:i", NULL};
static const char *const A_CAST1[] = {"to:s", NULL};
static const char *const A_CAST6[] = {"to:i", NULL};
static const char *const A_CONST1[] = {"value:t", NULL};
static const char *const A_CONST11[] = {"sparse_value:T", "value:t", NULL};
static const char *const A_CONST12[] = {"sparse_value:T", "value:t", "value_float:f", "value_floats:F",
                                        "value_int:i", "value_ints:I", "value_string:s",
                                        "value_strings:S", NULL};
static const char *const A_RESHAPE1[] = {"consumed_inputs:I", "shape:I", NULL};
static const char *const A_RESHAPE14[] = {"allowzero:i", NULL};
static const char *const A_SHAPE15[] = {"end:i", "start:i", NULL};
static const char *const A_SLICE1[] = {"axes:I", "ends:I", "starts:I", NULL};
static const char *const A_REDUCE[] = {"axes:I", "keepdims:i", NULL};
static const char *const A_REDUCE18[] = {"keepdims:i", "noop_with_empty_axes:i", NULL};

static const char *const A_ARG1[] = {"axis:i", "keepdims:i", NULL};
static const char *const A_ARG12[] = {"axis:i", "keepdims:i", "select_last_index:i", NULL};
static const char *const A_CONVT[] = {"auto_pad:s", "dilations:I", "group:i", "kernel_shape:I",
                                      "output_padding:I", "output_shape:I", "pads:I", "strides:I", NULL};
static const char *const A_HSIG1[] = {"alpha:f", "beta:f", "consumed_inputs:I", NULL};
static const char *const A_HSIG6[] = {"alpha:f", "beta:f", NULL};
static const char *const A_SELU1[] = {"alpha:f", "consumed_inputs:I", "gamma:f", NULL};
static const char *const A_SELU6[] = {"alpha:f", "gamma:f", NULL};
static const char *const A_LN[] = {"axis:i", "epsilon:f", "stash_type:i", NULL};
static const char *const A_PAD1[] = {"mode:s", "paddings:I", "value:f", NULL};
static const char *const A_PAD2[] = {"mode:s", "pads:I", "value:f", NULL};
static const char *const A_MODE[] = {"mode:s", NULL};
static const char *const A_SPLIT[] = {"axis:i", "split:I", NULL};
static const char *const A_SPLIT18[] = {"axis:i", "num_outputs:i", NULL};
static const char *const A_ISINF[] = {"detect_negative:i", "detect_positive:i", NULL};
static const char *const A_FMOD[] = {"fmod:i", NULL};
static const char *const A_DIRECTION[] = {"direction:s", NULL};
static const char *const A_SHRINK[] = {"bias:f", "lambd:f", NULL};
static const char *const A_COS[] = {"value:t", NULL};
/* control flow (subgraph.c) and text */
static const char *const A_IF[] = {"else_branch:g", "then_branch:g", NULL};
static const char *const A_LOOP[] = {"body:g", NULL};
static const char *const A_SCAN8[] = {"body:g", "directions:I", "num_scan_inputs:i", NULL};
static const char *const A_SCAN9[] = {"body:g", "num_scan_inputs:i", "scan_input_axes:I",
                                      "scan_input_directions:I", "scan_output_axes:I",
                                      "scan_output_directions:I", NULL};
static const char *const A_TFIDF[] = {"max_gram_length:i", "max_skip_count:i", "min_gram_length:i",
                                      "mode:s", "ngram_counts:I", "ngram_indexes:I", "pool_int64s:I",
                                      "pool_strings:S", "weights:F", NULL};

static const char *const A_IN1[] = {"consumed_inputs:I", "epsilon:f", NULL};
static const char *const A_IN6[] = {"epsilon:f", NULL};
static const char *const A_BLOCK[] = {"blocksize:i", NULL};
static const char *const A_BLOCK11[] = {"blocksize:i", "mode:s", NULL};
/* other math, losses and normalization */
static const char *const A_LOSS[] = {"ignore_index:i", "reduction:s", NULL};
static const char *const A_TRILU[] = {"upper:i", NULL};
static const char *const A_CUMSUM[] = {"exclusive:i", "reverse:i", NULL};
static const char *const A_EYELIKE[] = {"dtype:i", "k:i", NULL};
static const char *const A_TOPK1[] = {"axis:i", "k:i", NULL};
static const char *const A_TOPK11[] = {"axis:i", "largest:i", "sorted:i", NULL};
static const char *const A_EINSUM[] = {"equation:s", NULL};
static const char *const A_LRN[] = {"alpha:f", "beta:f", "bias:f", "size:i", NULL};
static const char *const A_REVSEQ[] = {"batch_axis:i", "time_axis:i", NULL};
/* image and indexing ops */
static const char *const A_RESIZE11[] = {"coordinate_transformation_mode:s", "cubic_coeff_a:f",
                                         "exclude_outside:i", "extrapolation_value:f", "mode:s",
                                         "nearest_mode:s", NULL};
static const char *const A_UPSAMPLE7[] = {"mode:s", "scales:F", NULL};
static const char *const A_BATCH_DIMS[] = {"batch_dims:i", NULL};
static const char *const A_SCATTER16[] = {"axis:i", "reduction:s", NULL};
static const char *const A_REDUCTION[] = {"reduction:s", NULL};
/* recurrent and quantized ops */
#define A_RNN_COMMON "activation_alpha:F", "activation_beta:F", "activations:S", "clip:f", "direction:s", \
                     "hidden_size:i"
static const char *const A_RNN1[] = {A_RNN_COMMON, "output_sequence:i", NULL};
static const char *const A_RNN7[] = {A_RNN_COMMON, NULL};
static const char *const A_RNN14[] = {A_RNN_COMMON, "layout:i", NULL};
static const char *const A_LSTM1[] = {A_RNN_COMMON, "input_forget:i", "output_sequence:i", NULL};
static const char *const A_LSTM7[] = {A_RNN_COMMON, "input_forget:i", NULL};
static const char *const A_LSTM14[] = {A_RNN_COMMON, "input_forget:i", "layout:i", NULL};
static const char *const A_GRU3[] = {A_RNN_COMMON, "linear_before_reset:i", "output_sequence:i", NULL};
static const char *const A_GRU7[] = {A_RNN_COMMON, "linear_before_reset:i", NULL};
static const char *const A_GRU14[] = {A_RNN_COMMON, "layout:i", "linear_before_reset:i", NULL};

/* signal and vision ops */
static const char *const A_DFT17[] = {"axis:i", "inverse:i", "onesided:i", NULL};
static const char *const A_DFT20[] = {"inverse:i", "onesided:i", NULL};
static const char *const A_ONESIDED[] = {"onesided:i", NULL};
static const char *const A_WINDOW[] = {"output_datatype:i", "periodic:i", NULL};
static const char *const A_OUT_DTYPE[] = {"output_datatype:i", NULL};
static const char *const A_GRIDSAMPLE[] = {"align_corners:i", "mode:s", "padding_mode:s", NULL};
static const char *const A_ROIALIGN10[] = {"mode:s", "output_height:i", "output_width:i", "sampling_ratio:i",
                                           "spatial_scale:f", NULL};
static const char *const A_ROIALIGN16[] = {"coordinate_transformation_mode:s", "mode:s", "output_height:i",
                                           "output_width:i", "sampling_ratio:i", "spatial_scale:f", NULL};
static const char *const A_MAXUNPOOL[] = {"kernel_shape:I", "pads:I", "strides:I", NULL};
static const char *const A_NMS[] = {"center_point_box:i", NULL};
static const char *const A_UNIQUE[] = {"axis:i", "sorted:i", NULL};

#define R(op, since, fn, attrs, chk) {op, since, fn, attrs, chk}
/* Rows of unary elementwise ops: v1 (consumed_inputs), v6, v13. */
#define UNARY3(op, fn)                         \
  R(op, 1, mlc_fe_cvt_##fn, A_CONSUMED, NULL), \
  R(op, 6, mlc_fe_cvt_##fn, A_NONE, NULL),     \
  R(op, 13, mlc_fe_cvt_##fn, A_NONE, NULL)
/* Arithmetic binaries: v1 (legacy broadcast + consumed_inputs), v6
** (legacy broadcast), v7 (numpy broadcasting), v13, v14 (types). */
#define ARITH(op, fn)                        \
  R(op, 1, mlc_fe_cvt_##fn, A_BCAST1, NULL), \
  R(op, 6, mlc_fe_cvt_##fn, A_BCAST, NULL),  \
  R(op, 7, mlc_fe_cvt_##fn, A_NONE, NULL),   \
  R(op, 13, mlc_fe_cvt_##fn, A_NONE, NULL),  \
  R(op, 14, mlc_fe_cvt_##fn, A_NONE, NULL)
/* Variadic Max/Min: v1 (consumed_inputs), v6, v8 (broadcasting), v12, v13. */
#define VARIADIC(op, fn)                       \
  R(op, 1, mlc_fe_cvt_##fn, A_CONSUMED, NULL), \
  R(op, 6, mlc_fe_cvt_##fn, A_NONE, NULL),     \
  R(op, 8, mlc_fe_cvt_##fn, A_NONE, NULL)

static const mlc_fe_row table[] = {
    UNARY3("Abs", abs),
    R("Acos", 7, mlc_fe_cvt_acos, A_NONE, NULL),
    R("Acosh", 9, mlc_fe_cvt_acosh, A_NONE, NULL),
    ARITH("Add", add),
    R("And", 1, mlc_fe_cvt_and, A_BCAST, NULL),
    R("And", 7, mlc_fe_cvt_and, A_NONE, NULL),
    R("ArgMax", 1, mlc_fe_cvt_argmax, A_ARG1, NULL),
    R("ArgMax", 11, mlc_fe_cvt_argmax, A_ARG1, NULL),
    R("ArgMax", 12, mlc_fe_cvt_argmax, A_ARG12, NULL),
    R("ArgMax", 13, mlc_fe_cvt_argmax, A_ARG12, NULL),
    R("ArgMin", 1, mlc_fe_cvt_argmin, A_ARG1, NULL),
    R("ArgMin", 11, mlc_fe_cvt_argmin, A_ARG1, NULL),
    R("ArgMin", 12, mlc_fe_cvt_argmin, A_ARG12, NULL),
    R("ArgMin", 13, mlc_fe_cvt_argmin, A_ARG12, NULL),
    R("Asin", 7, mlc_fe_cvt_asin, A_NONE, NULL),
    R("Asinh", 9, mlc_fe_cvt_asinh, A_NONE, NULL),
    R("Atan", 7, mlc_fe_cvt_atan, A_NONE, NULL),
    R("Atanh", 9, mlc_fe_cvt_atanh, A_NONE, NULL),
    R("AveragePool", 1, mlc_fe_cvt_average_pool, A_AVGPOOL1, mlc_fe_chk_average_pool),
    R("AveragePool", 7, mlc_fe_cvt_average_pool, A_AVGPOOL7, mlc_fe_chk_average_pool),
    R("AveragePool", 10, mlc_fe_cvt_average_pool, A_AVGPOOL10, mlc_fe_chk_average_pool),
    R("AveragePool", 11, mlc_fe_cvt_average_pool, A_AVGPOOL10, mlc_fe_chk_average_pool),
    R("AveragePool", 19, mlc_fe_cvt_average_pool, A_AVGPOOL19, mlc_fe_chk_average_pool),
    R("BatchNormalization", 1, mlc_fe_cvt_batch_norm, A_BN1, mlc_fe_chk_batch_norm),
    R("BatchNormalization", 6, mlc_fe_cvt_batch_norm, A_BN6, mlc_fe_chk_batch_norm),
    R("BatchNormalization", 7, mlc_fe_cvt_batch_norm, A_BN7, mlc_fe_chk_batch_norm),
    R("BatchNormalization", 9, mlc_fe_cvt_batch_norm, A_BN9, mlc_fe_chk_batch_norm),
    R("BatchNormalization", 14, mlc_fe_cvt_batch_norm_v14, A_BN14, mlc_fe_chk_batch_norm_v14),
    R("BatchNormalization", 15, mlc_fe_cvt_batch_norm_v14, A_BN14, mlc_fe_chk_batch_norm_v14),
    R("BitShift", 11, mlc_fe_cvt_bitshift, A_DIRECTION, mlc_fe_chk_bitshift),
    R("BlackmanWindow", 17, mlc_fe_cvt_blackman_window, A_WINDOW, NULL),
    R("Cast", 1, mlc_fe_cvt_cast, A_CAST1, mlc_fe_chk_cast),
    R("Cast", 6, mlc_fe_cvt_cast, A_CAST6, mlc_fe_chk_cast),
    R("Cast", 9, mlc_fe_cvt_cast, A_CAST6, mlc_fe_chk_cast),
    R("Cast", 13, mlc_fe_cvt_cast, A_CAST6, mlc_fe_chk_cast),
    R("CastLike", 15, mlc_fe_cvt_cast_like, A_NONE, NULL),
    UNARY3("Ceil", ceil),
    R("Celu", 12, mlc_fe_cvt_celu, A_ALPHA, NULL),
    R("Clip", 1, mlc_fe_cvt_clip_v1, A_CLIP1, NULL),
    R("Clip", 6, mlc_fe_cvt_clip_v1, A_CLIP6, NULL),
    R("Clip", 11, mlc_fe_cvt_clip_v11, A_NONE, NULL),
    R("Clip", 12, mlc_fe_cvt_clip_v11, A_NONE, NULL),
    R("Clip", 13, mlc_fe_cvt_clip_v11, A_NONE, NULL),
    R("Compress", 9, mlc_fe_cvt_compress, A_AXIS, NULL),
    R("Compress", 11, mlc_fe_cvt_compress, A_AXIS, NULL),
    R("Concat", 1, mlc_fe_cvt_concat, A_AXIS, NULL),
    R("Concat", 4, mlc_fe_cvt_concat, A_AXIS, NULL),
    R("Concat", 11, mlc_fe_cvt_concat, A_AXIS, NULL),
    R("Concat", 13, mlc_fe_cvt_concat, A_AXIS, NULL),
    R("Constant", 1, mlc_fe_cvt_constant, A_CONST1, mlc_fe_chk_constant),
    R("Constant", 9, mlc_fe_cvt_constant, A_CONST1, mlc_fe_chk_constant),
    R("Constant", 11, mlc_fe_cvt_constant, A_CONST11, mlc_fe_chk_constant),
    R("Constant", 12, mlc_fe_cvt_constant, A_CONST12, mlc_fe_chk_constant),
    R("Constant", 13, mlc_fe_cvt_constant, A_CONST12, mlc_fe_chk_constant),
    R("ConstantOfShape", 9, mlc_fe_cvt_constant_of_shape, A_COS, mlc_fe_chk_constant_of_shape),
    R("Conv", 1, mlc_fe_cvt_conv, A_CONV, mlc_fe_chk_conv),
    R("Conv", 11, mlc_fe_cvt_conv, A_CONV, mlc_fe_chk_conv),
    R("ConvInteger", 10, mlc_fe_cvt_conv_integer, A_CONV, mlc_fe_chk_conv),
    R("ConvTranspose", 1, mlc_fe_cvt_conv_transpose, A_CONVT, mlc_fe_chk_conv_transpose),
    R("ConvTranspose", 11, mlc_fe_cvt_conv_transpose, A_CONVT, mlc_fe_chk_conv_transpose),
    R("Cos", 7, mlc_fe_cvt_cos, A_NONE, NULL),
    R("Cosh", 9, mlc_fe_cvt_cosh, A_NONE, NULL),
    R("CumSum", 11, mlc_fe_cvt_cumsum, A_CUMSUM, NULL),
    R("CumSum", 14, mlc_fe_cvt_cumsum, A_CUMSUM, NULL),
    R("DFT", 17, mlc_fe_cvt_dft_v17, A_DFT17, NULL),
    R("DFT", 20, mlc_fe_cvt_dft_v20, A_DFT20, NULL),
    R("DepthToSpace", 1, mlc_fe_cvt_depth_to_space, A_BLOCK, NULL),
    R("DepthToSpace", 11, mlc_fe_cvt_depth_to_space, A_BLOCK11, mlc_fe_chk_depth_to_space),
    R("DepthToSpace", 13, mlc_fe_cvt_depth_to_space, A_BLOCK11, mlc_fe_chk_depth_to_space),
    R("DequantizeLinear", 10, mlc_fe_cvt_dequantize_linear, A_NONE, NULL),
    R("DequantizeLinear", 13, mlc_fe_cvt_dequantize_linear, A_AXIS, NULL),
    R("Det", 11, mlc_fe_cvt_det, A_NONE, NULL),
    ARITH("Div", div),
    R("Dropout", 1, mlc_fe_cvt_dropout, A_DROPOUT1, NULL),
    R("Dropout", 6, mlc_fe_cvt_dropout, A_DROPOUT6, NULL),
    R("Dropout", 7, mlc_fe_cvt_dropout, A_DROPOUT7, NULL),
    R("Dropout", 10, mlc_fe_cvt_dropout, A_DROPOUT7, NULL),
    R("Dropout", 12, mlc_fe_cvt_dropout, A_DROPOUT12, NULL),
    R("Dropout", 13, mlc_fe_cvt_dropout, A_DROPOUT12, NULL),
    R("DynamicQuantizeLinear", 11, mlc_fe_cvt_dynamic_quantize_linear, A_NONE, NULL),
    R("Einsum", 12, mlc_fe_cvt_einsum, A_EINSUM, NULL),
    R("Elu", 1, mlc_fe_cvt_elu, A_ALPHA1, NULL),
    R("Elu", 6, mlc_fe_cvt_elu, A_ALPHA, NULL),
    R("Equal", 1, mlc_fe_cvt_equal, A_BCAST, NULL),
    R("Equal", 7, mlc_fe_cvt_equal, A_NONE, NULL),
    R("Equal", 11, mlc_fe_cvt_equal, A_NONE, NULL),
    R("Equal", 13, mlc_fe_cvt_equal, A_NONE, NULL),
    R("Erf", 9, mlc_fe_cvt_erf, A_NONE, NULL),
    R("Erf", 13, mlc_fe_cvt_erf, A_NONE, NULL),
    UNARY3("Exp", exp),
    R("Expand", 8, mlc_fe_cvt_expand, A_NONE, NULL),
    R("Expand", 13, mlc_fe_cvt_expand, A_NONE, NULL),
    R("EyeLike", 9, mlc_fe_cvt_eye_like, A_EYELIKE, mlc_fe_chk_eye_like),
    R("Flatten", 1, mlc_fe_cvt_flatten, A_AXIS, NULL),
    R("Flatten", 9, mlc_fe_cvt_flatten, A_AXIS, NULL),
    R("Flatten", 11, mlc_fe_cvt_flatten, A_AXIS, NULL),
    R("Flatten", 13, mlc_fe_cvt_flatten, A_AXIS, NULL),
    UNARY3("Floor", floor),
    R("GRU", 1, mlc_fe_cvt_gru, A_RNN1, mlc_fe_chk_rnn),
    R("GRU", 3, mlc_fe_cvt_gru, A_GRU3, mlc_fe_chk_rnn),
    R("GRU", 7, mlc_fe_cvt_gru, A_GRU7, mlc_fe_chk_rnn),
    R("GRU", 14, mlc_fe_cvt_gru, A_GRU14, mlc_fe_chk_rnn),
    R("Gather", 1, mlc_fe_cvt_gather, A_AXIS, NULL),
    R("Gather", 11, mlc_fe_cvt_gather, A_AXIS, NULL),
    R("Gather", 13, mlc_fe_cvt_gather, A_AXIS, NULL),
    R("GatherElements", 11, mlc_fe_cvt_gather_elements, A_AXIS, NULL),
    R("GatherElements", 13, mlc_fe_cvt_gather_elements, A_AXIS, NULL),
    R("GatherND", 11, mlc_fe_cvt_gather_nd, A_NONE, NULL),
    R("GatherND", 12, mlc_fe_cvt_gather_nd, A_BATCH_DIMS, NULL),
    R("GatherND", 13, mlc_fe_cvt_gather_nd, A_BATCH_DIMS, NULL),
    R("Gemm", 1, mlc_fe_cvt_gemm, A_GEMM1, NULL),
    R("Gemm", 6, mlc_fe_cvt_gemm, A_GEMM1, NULL),
    R("Gemm", 7, mlc_fe_cvt_gemm, A_GEMM7, NULL),
    R("Gemm", 9, mlc_fe_cvt_gemm, A_GEMM7, NULL),
    R("Gemm", 11, mlc_fe_cvt_gemm, A_GEMM7, NULL),
    R("Gemm", 13, mlc_fe_cvt_gemm, A_GEMM7, NULL),
    R("GlobalAveragePool", 1, mlc_fe_cvt_global_average_pool, A_NONE, NULL),
    R("GlobalMaxPool", 1, mlc_fe_cvt_global_max_pool, A_NONE, NULL),
    R("Greater", 1, mlc_fe_cvt_greater, A_BCAST, NULL),
    R("Greater", 7, mlc_fe_cvt_greater, A_NONE, NULL),
    R("Greater", 9, mlc_fe_cvt_greater, A_NONE, NULL),
    R("Greater", 13, mlc_fe_cvt_greater, A_NONE, NULL),
    R("GreaterOrEqual", 12, mlc_fe_cvt_greater_equal, A_NONE, NULL),
    R("GreaterOrEqual", 16, mlc_fe_cvt_greater_equal, A_NONE, NULL),
    R("GridSample", 16, mlc_fe_cvt_grid_sample, A_GRIDSAMPLE, mlc_fe_chk_grid_sample),
    R("GridSample", 20, mlc_fe_cvt_grid_sample, A_GRIDSAMPLE, mlc_fe_chk_grid_sample),
    R("HammingWindow", 17, mlc_fe_cvt_hamming_window, A_WINDOW, NULL),
    R("HannWindow", 17, mlc_fe_cvt_hann_window, A_WINDOW, NULL),
    R("HardSigmoid", 1, mlc_fe_cvt_hard_sigmoid, A_HSIG1, NULL),
    R("HardSigmoid", 6, mlc_fe_cvt_hard_sigmoid, A_HSIG6, NULL),
    R("HardSwish", 14, mlc_fe_cvt_hard_swish, A_NONE, NULL),
    R("Hardmax", 1, mlc_fe_cvt_hardmax_v1, A_AXIS, NULL),
    R("Hardmax", 11, mlc_fe_cvt_hardmax_v1, A_AXIS, NULL),
    R("Hardmax", 13, mlc_fe_cvt_hardmax_v13, A_AXIS, NULL),
    R("Identity", 1, mlc_fe_cvt_identity, A_NONE, NULL),
    R("Identity", 13, mlc_fe_cvt_identity, A_NONE, NULL),
    R("Identity", 14, mlc_fe_cvt_identity, A_NONE, NULL),
    R("Identity", 16, mlc_fe_cvt_identity, A_NONE, NULL),
    R("If", 1, mlc_fe_cvt_if, A_IF, NULL),
    R("If", 11, mlc_fe_cvt_if, A_IF, NULL),
    R("If", 13, mlc_fe_cvt_if, A_IF, NULL),
    R("If", 16, mlc_fe_cvt_if, A_IF, NULL),
    R("InstanceNormalization", 1, mlc_fe_cvt_instance_norm, A_IN1, NULL),
    R("InstanceNormalization", 6, mlc_fe_cvt_instance_norm, A_IN6, NULL),
    R("IsInf", 10, mlc_fe_cvt_isinf, A_ISINF, NULL),
    R("IsNaN", 9, mlc_fe_cvt_isnan, A_NONE, NULL),
    R("IsNaN", 13, mlc_fe_cvt_isnan, A_NONE, NULL),
    R("LRN", 1, mlc_fe_cvt_lrn, A_LRN, NULL),
    R("LRN", 13, mlc_fe_cvt_lrn, A_LRN, NULL),
    R("LSTM", 1, mlc_fe_cvt_lstm, A_LSTM1, mlc_fe_chk_rnn),
    R("LSTM", 7, mlc_fe_cvt_lstm, A_LSTM7, mlc_fe_chk_rnn),
    R("LSTM", 14, mlc_fe_cvt_lstm, A_LSTM14, mlc_fe_chk_rnn),
    R("LayerNormalization", 17, mlc_fe_cvt_layer_norm, A_LN, mlc_fe_chk_layer_norm),
    R("LeakyRelu", 1, mlc_fe_cvt_leaky_relu, A_ALPHA1, NULL),
    R("LeakyRelu", 6, mlc_fe_cvt_leaky_relu, A_ALPHA, NULL),
    R("LeakyRelu", 16, mlc_fe_cvt_leaky_relu, A_ALPHA, NULL),
    R("Less", 1, mlc_fe_cvt_less, A_BCAST, NULL),
    R("Less", 7, mlc_fe_cvt_less, A_NONE, NULL),
    R("Less", 9, mlc_fe_cvt_less, A_NONE, NULL),
    R("Less", 13, mlc_fe_cvt_less, A_NONE, NULL),
    R("LessOrEqual", 12, mlc_fe_cvt_less_equal, A_NONE, NULL),
    R("LessOrEqual", 16, mlc_fe_cvt_less_equal, A_NONE, NULL),
    UNARY3("Log", log),
    R("LogSoftmax", 1, mlc_fe_cvt_log_softmax_v1, A_AXIS, NULL),
    R("LogSoftmax", 11, mlc_fe_cvt_log_softmax_v1, A_AXIS, NULL),
    R("LogSoftmax", 13, mlc_fe_cvt_log_softmax_v13, A_AXIS, NULL),
    R("Loop", 1, mlc_fe_cvt_loop, A_LOOP, NULL),
    R("Loop", 11, mlc_fe_cvt_loop, A_LOOP, NULL),
    R("Loop", 13, mlc_fe_cvt_loop, A_LOOP, NULL),
    R("Loop", 16, mlc_fe_cvt_loop, A_LOOP, NULL),
    R("MatMul", 1, mlc_fe_cvt_matmul, A_NONE, NULL),
    R("MatMul", 9, mlc_fe_cvt_matmul, A_NONE, NULL),
    R("MatMul", 13, mlc_fe_cvt_matmul, A_NONE, NULL),
    R("MatMulInteger", 10, mlc_fe_cvt_matmul_integer, A_NONE, NULL),
    VARIADIC("Max", max),
    R("Max", 12, mlc_fe_cvt_max, A_NONE, NULL),
    R("Max", 13, mlc_fe_cvt_max, A_NONE, NULL),
    R("MaxPool", 1, mlc_fe_cvt_max_pool, A_MAXPOOL1, mlc_fe_chk_max_pool),
    R("MaxPool", 8, mlc_fe_cvt_max_pool, A_MAXPOOL8, mlc_fe_chk_max_pool),
    R("MaxPool", 10, mlc_fe_cvt_max_pool, A_MAXPOOL10, mlc_fe_chk_max_pool),
    R("MaxPool", 11, mlc_fe_cvt_max_pool, A_MAXPOOL10, mlc_fe_chk_max_pool),
    R("MaxPool", 12, mlc_fe_cvt_max_pool, A_MAXPOOL10, mlc_fe_chk_max_pool),
    R("MaxUnpool", 9, mlc_fe_cvt_max_unpool, A_MAXUNPOOL, NULL),
    R("MaxUnpool", 11, mlc_fe_cvt_max_unpool, A_MAXUNPOOL, NULL),
    VARIADIC("Mean", mean),
    R("Mean", 13, mlc_fe_cvt_mean, A_NONE, NULL),
    R("MeanVarianceNormalization", 9, mlc_fe_cvt_mvn, A_AXES, NULL),
    R("MeanVarianceNormalization", 13, mlc_fe_cvt_mvn, A_AXES, NULL),
    R("MelWeightMatrix", 17, mlc_fe_cvt_mel_weight_matrix, A_OUT_DTYPE, NULL),
    VARIADIC("Min", min),
    R("Min", 12, mlc_fe_cvt_min, A_NONE, NULL),
    R("Min", 13, mlc_fe_cvt_min, A_NONE, NULL),
    R("Mod", 10, mlc_fe_cvt_mod, A_FMOD, NULL),
    R("Mod", 13, mlc_fe_cvt_mod, A_FMOD, NULL),
    ARITH("Mul", mul),
    UNARY3("Neg", neg),
    R("NegativeLogLikelihoodLoss", 12, mlc_fe_cvt_nll_loss, A_LOSS, mlc_fe_chk_loss),
    R("NegativeLogLikelihoodLoss", 13, mlc_fe_cvt_nll_loss, A_LOSS, mlc_fe_chk_loss),
    R("NonMaxSuppression", 10, mlc_fe_cvt_nms, A_NMS, NULL),
    R("NonMaxSuppression", 11, mlc_fe_cvt_nms, A_NMS, NULL),
    R("NonZero", 9, mlc_fe_cvt_nonzero, A_NONE, NULL),
    R("NonZero", 13, mlc_fe_cvt_nonzero, A_NONE, NULL),
    R("Not", 1, mlc_fe_cvt_not, A_NONE, NULL),
    R("OneHot", 9, mlc_fe_cvt_one_hot, A_AXIS, NULL),
    R("OneHot", 11, mlc_fe_cvt_one_hot, A_AXIS, NULL),
    R("Or", 1, mlc_fe_cvt_or, A_BCAST, NULL),
    R("Or", 7, mlc_fe_cvt_or, A_NONE, NULL),
    R("PRelu", 1, mlc_fe_cvt_prelu, A_CONSUMED, NULL),
    R("PRelu", 6, mlc_fe_cvt_prelu, A_NONE, NULL),
    R("PRelu", 7, mlc_fe_cvt_prelu, A_NONE, NULL),
    R("PRelu", 9, mlc_fe_cvt_prelu, A_NONE, NULL),
    R("PRelu", 16, mlc_fe_cvt_prelu, A_NONE, NULL),
    R("Pad", 1, mlc_fe_cvt_pad_v1, A_PAD1, mlc_fe_chk_pad),
    R("Pad", 2, mlc_fe_cvt_pad_v1, A_PAD2, mlc_fe_chk_pad),
    R("Pad", 11, mlc_fe_cvt_pad_v11, A_MODE, mlc_fe_chk_pad),
    R("Pad", 13, mlc_fe_cvt_pad_v11, A_MODE, mlc_fe_chk_pad),
    R("Pad", 18, mlc_fe_cvt_pad_v11, A_MODE, mlc_fe_chk_pad),
    R("Pow", 1, mlc_fe_cvt_pow, A_BCAST, NULL),
    R("Pow", 7, mlc_fe_cvt_pow, A_NONE, NULL),
    R("Pow", 12, mlc_fe_cvt_pow, A_NONE, NULL),
    R("Pow", 13, mlc_fe_cvt_pow, A_NONE, NULL),
    R("Pow", 15, mlc_fe_cvt_pow, A_NONE, NULL),
    R("QLinearConv", 10, mlc_fe_cvt_qlinear_conv, A_CONV, mlc_fe_chk_conv),
    R("QLinearMatMul", 10, mlc_fe_cvt_qlinear_matmul, A_NONE, NULL),
    R("QuantizeLinear", 10, mlc_fe_cvt_quantize_linear, A_NONE, NULL),
    R("QuantizeLinear", 13, mlc_fe_cvt_quantize_linear, A_AXIS, NULL),
    R("RNN", 1, mlc_fe_cvt_rnn, A_RNN1, mlc_fe_chk_rnn),
    R("RNN", 7, mlc_fe_cvt_rnn, A_RNN7, mlc_fe_chk_rnn),
    R("RNN", 14, mlc_fe_cvt_rnn, A_RNN14, mlc_fe_chk_rnn),
    R("Range", 11, mlc_fe_cvt_range, A_NONE, NULL),
    UNARY3("Reciprocal", reciprocal),
    R("ReduceL1", 1, mlc_fe_cvt_reduce_l1_v1, A_REDUCE, NULL),
    R("ReduceL1", 11, mlc_fe_cvt_reduce_l1_v1, A_REDUCE, NULL),
    R("ReduceL1", 13, mlc_fe_cvt_reduce_l1_v1, A_REDUCE, NULL),
    R("ReduceL1", 18, mlc_fe_cvt_reduce_l1_v18, A_REDUCE18, NULL),
    R("ReduceL2", 1, mlc_fe_cvt_reduce_l2_v1, A_REDUCE, NULL),
    R("ReduceL2", 11, mlc_fe_cvt_reduce_l2_v1, A_REDUCE, NULL),
    R("ReduceL2", 13, mlc_fe_cvt_reduce_l2_v1, A_REDUCE, NULL),
    R("ReduceL2", 18, mlc_fe_cvt_reduce_l2_v18, A_REDUCE18, NULL),
    R("ReduceLogSum", 1, mlc_fe_cvt_reduce_log_sum_v1, A_REDUCE, NULL),
    R("ReduceLogSum", 11, mlc_fe_cvt_reduce_log_sum_v1, A_REDUCE, NULL),
    R("ReduceLogSum", 13, mlc_fe_cvt_reduce_log_sum_v1, A_REDUCE, NULL),
    R("ReduceLogSum", 18, mlc_fe_cvt_reduce_log_sum_v18, A_REDUCE18, NULL),
    R("ReduceLogSumExp", 1, mlc_fe_cvt_reduce_log_sum_exp_v1, A_REDUCE, NULL),
    R("ReduceLogSumExp", 11, mlc_fe_cvt_reduce_log_sum_exp_v1, A_REDUCE, NULL),
    R("ReduceLogSumExp", 13, mlc_fe_cvt_reduce_log_sum_exp_v1, A_REDUCE, NULL),
    R("ReduceLogSumExp", 18, mlc_fe_cvt_reduce_log_sum_exp_v18, A_REDUCE18, NULL),
    R("ReduceMax", 1, mlc_fe_cvt_reduce_max_v1, A_REDUCE, NULL),
    R("ReduceMax", 11, mlc_fe_cvt_reduce_max_v1, A_REDUCE, NULL),
    R("ReduceMax", 12, mlc_fe_cvt_reduce_max_v1, A_REDUCE, NULL),
    R("ReduceMax", 13, mlc_fe_cvt_reduce_max_v1, A_REDUCE, NULL),
    R("ReduceMax", 18, mlc_fe_cvt_reduce_max_v18, A_REDUCE18, NULL),
    R("ReduceMean", 1, mlc_fe_cvt_reduce_mean_v1, A_REDUCE, NULL),
    R("ReduceMean", 11, mlc_fe_cvt_reduce_mean_v1, A_REDUCE, NULL),
    R("ReduceMean", 13, mlc_fe_cvt_reduce_mean_v1, A_REDUCE, NULL),
    R("ReduceMean", 18, mlc_fe_cvt_reduce_mean_v18, A_REDUCE18, NULL),
    R("ReduceMin", 1, mlc_fe_cvt_reduce_min_v1, A_REDUCE, NULL),
    R("ReduceMin", 11, mlc_fe_cvt_reduce_min_v1, A_REDUCE, NULL),
    R("ReduceMin", 12, mlc_fe_cvt_reduce_min_v1, A_REDUCE, NULL),
    R("ReduceMin", 13, mlc_fe_cvt_reduce_min_v1, A_REDUCE, NULL),
    R("ReduceMin", 18, mlc_fe_cvt_reduce_min_v18, A_REDUCE18, NULL),
    R("ReduceProd", 1, mlc_fe_cvt_reduce_prod_v1, A_REDUCE, NULL),
    R("ReduceProd", 11, mlc_fe_cvt_reduce_prod_v1, A_REDUCE, NULL),
    R("ReduceProd", 13, mlc_fe_cvt_reduce_prod_v1, A_REDUCE, NULL),
    R("ReduceProd", 18, mlc_fe_cvt_reduce_prod_v18, A_REDUCE18, NULL),
    R("ReduceSum", 1, mlc_fe_cvt_reduce_sum_v1, A_REDUCE, NULL),
    R("ReduceSum", 11, mlc_fe_cvt_reduce_sum_v1, A_REDUCE, NULL),
    R("ReduceSum", 13, mlc_fe_cvt_reduce_sum_v13, A_REDUCE18, NULL),
    R("ReduceSumSquare", 1, mlc_fe_cvt_reduce_sum_square_v1, A_REDUCE, NULL),
    R("ReduceSumSquare", 11, mlc_fe_cvt_reduce_sum_square_v1, A_REDUCE, NULL),
    R("ReduceSumSquare", 13, mlc_fe_cvt_reduce_sum_square_v1, A_REDUCE, NULL),
    R("ReduceSumSquare", 18, mlc_fe_cvt_reduce_sum_square_v18, A_REDUCE18, NULL),
    R("Relu", 1, mlc_fe_cvt_relu, A_CONSUMED, NULL),
    R("Relu", 6, mlc_fe_cvt_relu, A_NONE, NULL),
    R("Relu", 13, mlc_fe_cvt_relu, A_NONE, NULL),
    R("Relu", 14, mlc_fe_cvt_relu, A_NONE, NULL),
    R("Reshape", 1, mlc_fe_cvt_reshape_v1, A_RESHAPE1, NULL),
    R("Reshape", 5, mlc_fe_cvt_reshape_v5, A_NONE, NULL),
    R("Reshape", 13, mlc_fe_cvt_reshape_v5, A_NONE, NULL),
    R("Reshape", 14, mlc_fe_cvt_reshape_v5, A_RESHAPE14, NULL),
    R("Resize", 10, mlc_fe_cvt_resize_v10, A_MODE, mlc_fe_chk_resize),
    R("Resize", 11, mlc_fe_cvt_resize_v11, A_RESIZE11, mlc_fe_chk_resize),
    R("Resize", 13, mlc_fe_cvt_resize_v11, A_RESIZE11, mlc_fe_chk_resize),
    R("ReverseSequence", 10, mlc_fe_cvt_reverse_sequence, A_REVSEQ, NULL),
    R("RoiAlign", 10, mlc_fe_cvt_roi_align, A_ROIALIGN10, mlc_fe_chk_roi_align),
    R("RoiAlign", 16, mlc_fe_cvt_roi_align, A_ROIALIGN16, mlc_fe_chk_roi_align),
    R("Round", 11, mlc_fe_cvt_round, A_NONE, NULL),
    R("STFT", 17, mlc_fe_cvt_stft, A_ONESIDED, NULL),
    R("Scan", 8, mlc_fe_cvt_scan_v8, A_SCAN8, NULL),
    R("Scan", 9, mlc_fe_cvt_scan_v9, A_SCAN9, NULL),
    R("Scan", 11, mlc_fe_cvt_scan_v9, A_SCAN9, NULL),
    R("Scan", 16, mlc_fe_cvt_scan_v9, A_SCAN9, NULL),
    R("Scatter", 9, mlc_fe_cvt_scatter_elements, A_AXIS, NULL),
    R("Scatter", 11, mlc_fe_cvt_scatter_elements, A_AXIS, NULL),
    R("ScatterElements", 11, mlc_fe_cvt_scatter_elements, A_AXIS, NULL),
    R("ScatterElements", 13, mlc_fe_cvt_scatter_elements, A_AXIS, NULL),
    R("ScatterElements", 16, mlc_fe_cvt_scatter_elements, A_SCATTER16, mlc_fe_chk_scatter),
    R("ScatterElements", 18, mlc_fe_cvt_scatter_elements, A_SCATTER16, mlc_fe_chk_scatter),
    R("ScatterND", 11, mlc_fe_cvt_scatter_nd, A_NONE, NULL),
    R("ScatterND", 13, mlc_fe_cvt_scatter_nd, A_NONE, NULL),
    R("ScatterND", 16, mlc_fe_cvt_scatter_nd, A_REDUCTION, mlc_fe_chk_scatter),
    R("ScatterND", 18, mlc_fe_cvt_scatter_nd, A_REDUCTION, mlc_fe_chk_scatter),
    R("Selu", 1, mlc_fe_cvt_selu, A_SELU1, NULL),
    R("Selu", 6, mlc_fe_cvt_selu, A_SELU6, NULL),
    R("Shape", 1, mlc_fe_cvt_shape, A_NONE, NULL),
    R("Shape", 13, mlc_fe_cvt_shape, A_NONE, NULL),
    R("Shape", 15, mlc_fe_cvt_shape, A_SHAPE15, NULL),
    R("Shrink", 9, mlc_fe_cvt_shrink, A_SHRINK, NULL),
    UNARY3("Sigmoid", sigmoid),
    R("Sign", 9, mlc_fe_cvt_sign, A_NONE, NULL),
    R("Sign", 13, mlc_fe_cvt_sign, A_NONE, NULL),
    R("Sin", 7, mlc_fe_cvt_sin, A_NONE, NULL),
    R("Sinh", 9, mlc_fe_cvt_sinh, A_NONE, NULL),
    R("Size", 1, mlc_fe_cvt_size, A_NONE, NULL),
    R("Size", 13, mlc_fe_cvt_size, A_NONE, NULL),
    R("Slice", 1, mlc_fe_cvt_slice_v1, A_SLICE1, NULL),
    R("Slice", 10, mlc_fe_cvt_slice_v10, A_NONE, NULL),
    R("Slice", 11, mlc_fe_cvt_slice_v10, A_NONE, NULL),
    R("Slice", 13, mlc_fe_cvt_slice_v10, A_NONE, NULL),
    R("Softmax", 1, mlc_fe_cvt_softmax_v1, A_AXIS, NULL),
    R("Softmax", 11, mlc_fe_cvt_softmax_v1, A_AXIS, NULL),
    R("Softmax", 13, mlc_fe_cvt_softmax_v13, A_AXIS, NULL),
    R("SoftmaxCrossEntropyLoss", 12, mlc_fe_cvt_sce_loss, A_LOSS, mlc_fe_chk_loss),
    R("SoftmaxCrossEntropyLoss", 13, mlc_fe_cvt_sce_loss, A_LOSS, mlc_fe_chk_loss),
    R("Softplus", 1, mlc_fe_cvt_softplus, A_NONE, NULL),
    R("Softsign", 1, mlc_fe_cvt_softsign, A_NONE, NULL),
    R("SpaceToDepth", 1, mlc_fe_cvt_space_to_depth, A_BLOCK, NULL),
    R("SpaceToDepth", 13, mlc_fe_cvt_space_to_depth, A_BLOCK, NULL),
    R("Split", 1, mlc_fe_cvt_split_v1, A_SPLIT, NULL),
    R("Split", 2, mlc_fe_cvt_split_v1, A_SPLIT, NULL),
    R("Split", 11, mlc_fe_cvt_split_v1, A_SPLIT, NULL),
    R("Split", 13, mlc_fe_cvt_split_v13, A_AXIS, NULL),
    R("Split", 18, mlc_fe_cvt_split_v18, A_SPLIT18, NULL),
    UNARY3("Sqrt", sqrt),
    R("Squeeze", 1, mlc_fe_cvt_squeeze_v1, A_AXES, NULL),
    R("Squeeze", 11, mlc_fe_cvt_squeeze_v1, A_AXES, NULL),
    R("Squeeze", 13, mlc_fe_cvt_squeeze_v13, A_NONE, NULL),
    ARITH("Sub", sub),
    VARIADIC("Sum", sum),
    R("Sum", 13, mlc_fe_cvt_sum, A_NONE, NULL),
    R("Tan", 7, mlc_fe_cvt_tan, A_NONE, NULL),
    UNARY3("Tanh", tanh),
    R("TfIdfVectorizer", 9, mlc_fe_cvt_tfidf, A_TFIDF, mlc_fe_chk_tfidf),
    R("ThresholdedRelu", 10, mlc_fe_cvt_thresholded_relu, A_ALPHA, NULL),
    R("Tile", 1, mlc_fe_cvt_tile_v1, A_NONE, NULL),
    R("Tile", 6, mlc_fe_cvt_tile_v6, A_NONE, NULL),
    R("Tile", 13, mlc_fe_cvt_tile_v6, A_NONE, NULL),
    R("TopK", 1, mlc_fe_cvt_topk, A_TOPK1, NULL),
    R("TopK", 10, mlc_fe_cvt_topk, A_AXIS, NULL),
    R("TopK", 11, mlc_fe_cvt_topk, A_TOPK11, NULL),
    R("Transpose", 1, mlc_fe_cvt_transpose, A_PERM, NULL),
    R("Transpose", 13, mlc_fe_cvt_transpose, A_PERM, NULL),
    R("Trilu", 14, mlc_fe_cvt_trilu, A_TRILU, NULL),
    R("Unique", 11, mlc_fe_cvt_unique, A_UNIQUE, NULL),
    R("Unsqueeze", 1, mlc_fe_cvt_unsqueeze_v1, A_AXES, NULL),
    R("Unsqueeze", 11, mlc_fe_cvt_unsqueeze_v1, A_AXES, NULL),
    R("Unsqueeze", 13, mlc_fe_cvt_unsqueeze_v13, A_NONE, NULL),
    R("Upsample", 7, mlc_fe_cvt_upsample, A_UPSAMPLE7, mlc_fe_chk_resize),
    R("Upsample", 9, mlc_fe_cvt_upsample, A_MODE, mlc_fe_chk_resize),
    R("Upsample", 10, mlc_fe_cvt_upsample, A_MODE, mlc_fe_chk_resize),
    R("Where", 9, mlc_fe_cvt_where, A_NONE, NULL),
    R("Where", 16, mlc_fe_cvt_where, A_NONE, NULL),
    R("Xor", 1, mlc_fe_cvt_xor, A_BCAST, NULL),
    R("Xor", 7, mlc_fe_cvt_xor, A_NONE, NULL),
};

#define NROWS ((int)(sizeof table / sizeof table[0]))

const mlc_fe_row *mlc_fe_table(int *n) {
  *n = NROWS;
  return table;
}

/* Orders (op, since) pairs as the table is sorted. */
static int cmp_key(const char *op, int since, const mlc_fe_row *r) {
  int c = strcmp(op, r->op_type);
  if (c) return c;
  return since < r->since ? -1 : since > r->since;
}

/* ---- arity (arity.def) --------------------------------------------------- */

typedef struct arity_row {
  const char *op_type;
  int since;
  mlc_fe_arity a;
} arity_row;

static const arity_row arities[] = {
#define MLC_ARITY(op, since, min_in, max_in, min_out, max_out, ins, outs) \
  {op, since, {min_in, max_in, min_out, max_out, ins, outs}},
#include "frontend/arity.def"
#undef MLC_ARITY
};

#define NARITIES ((int)(sizeof arities / sizeof arities[0]))

const mlc_fe_arity *mlc_fe_row_arity(const mlc_fe_row *r) {
  int lo = 0, hi = NARITIES;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    int c = strcmp(r->op_type, arities[mid].op_type);
    if (!c) c = r->since < arities[mid].since ? -1 : r->since > arities[mid].since;
    if (!c) return &arities[mid].a;
    if (c < 0) hi = mid;
    else lo = mid + 1;
  }
  return NULL;
}

/* 1 when |a| is consistent: counts in order, one letter per formal
** parameter, a variadic one only last and then max -1. */
static int arity_ok(const mlc_fe_arity *a) {
  const char *const lists[2] = {a->ins, a->outs};
  const int mins[2] = {a->min_in, a->min_out}, maxs[2] = {a->max_in, a->max_out};
  for (int k = 0; k < 2; k++) {
    size_t len = strlen(lists[k]);
    int variadic = len > 0 && lists[k][len - 1] == 'v';
    if (mins[k] < 0 || (maxs[k] >= 0 && maxs[k] < mins[k])) return 0;
    if (strspn(lists[k], "so") != len - (size_t)variadic) return 0;
    if (variadic ? maxs[k] != -1 : maxs[k] != (int)len) return 0;
  }
  return 1;
}

const mlc_fe_row *mlc_fe_lookup(const char *op_type, int opset, int *first_since) {
  /* lo = the first row > (op_type, opset); the answer is the row before it. */
  int lo = 0, hi = NROWS;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (cmp_key(op_type, opset, &table[mid]) >= 0) lo = mid + 1;
    else hi = mid;
  }
  if (first_since) {
    /* The op's first row is at or after the first row >= (op_type, 0). */
    int a = 0, b = NROWS;
    while (a < b) {
      int mid = a + (b - a) / 2;
      if (cmp_key(op_type, 0, &table[mid]) > 0) a = mid + 1;
      else b = mid;
    }
    *first_since = a < NROWS && strcmp(table[a].op_type, op_type) == 0 ? table[a].since : 0;
  }
  if (lo > 0 && strcmp(table[lo - 1].op_type, op_type) == 0) return &table[lo - 1];
  return NULL;
}

int mlc_fe_table_ok(void) {
  if (NARITIES != NROWS) return 0; /* arity.def has rows the table lacks */
  for (int i = 0; i < NROWS; i++) {
    const mlc_fe_row *r = &table[i];
    if (!r->op_type || r->since < 1 || r->since > MLC_FE_OPSET_MAX || !r->attrs) return 0;
    const mlc_fe_arity *ar = mlc_fe_row_arity(r);
    if (!ar || !arity_ok(ar)) return 0;
    if (i > 0 && cmp_key(table[i - 1].op_type, table[i - 1].since, r) >= 0) return 0;
    for (const char *const *a = r->attrs; *a; a++) {
      const char *colon = strchr(*a, ':');
      if (!colon || !strchr("ifstIFSgT", colon[1]) || colon[1] == 0 || colon[2]) return 0;
    }
  }
  return 1;
}

int mlc_fe_num_supported(void) {
  int n = 0;
  for (int i = 0; i < NROWS; i++)
    if (i == 0 || strcmp(table[i - 1].op_type, table[i].op_type) != 0) n++;
  return n;
}

const char *mlc_fe_supported_op(int k) {
  int n = 0;
  for (int i = 0; i < NROWS; i++)
    if (i == 0 || strcmp(table[i - 1].op_type, table[i].op_type) != 0) {
      if (n == k) return table[i].op_type;
      n++;
    }
  return NULL;
}
