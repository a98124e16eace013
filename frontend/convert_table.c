/*
** convert_table.c: the converter table (STYLE R15).
**
** One row per (ONNX op type, since_version), listed in convert.def: the
** converter, the attributes the converter accepts (with their ONNX
** attribute types; the A_ lists below) and an optional check of attribute
** values it cannot handle.  Rows are sorted by (op_type, since); a node
** gets the row with the highest since_version <= the model's opset (binary
** search).  Versions that only widened the type list share a converter
** with the version before them; they are listed so the table shows every
** version.  The input and output counts ONNX allows for each row are in
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

static const mlc_fe_row table[] = {
#define mlc_fe_chk_NONE NULL
#define R(op, since, fn, attrs, chk) {op, since, mlc_fe_cvt_##fn, attrs, mlc_fe_chk_##chk},
#include "frontend/convert.def"
#undef R
#undef mlc_fe_chk_NONE
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
