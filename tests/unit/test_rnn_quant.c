/*
** test_rnn_quant.c: the recurrent and quantized ops through the whole
** compile path (frontend/ops/rnn.c and frontend/ops/quant.c).
**
** Compiles each model of tests/rnn/ (written by make_models.py), loads it
** through mlc_model_load, binds the inputs listed in tests/rnn/expected.txt
** and compares every output (dtype and shape exactly, floats within 1e-4
** relative and 1e-5 absolute, integers exactly) with the values computed
** there in numpy: RNN, LSTM and GRU in all directions and layouts with
** run-time and constant sequence_lens, initial states, peepholes, clip,
** input_forget, linear_before_reset, the optional activations, a symbolic
** batch dim and a long sequence; QuantizeLinear, DequantizeLinear,
** DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul and
** QLinearConv with per-axis parameters, int8 and uint8, ties to even and
** saturation.  An RNN whose sequence length is symbolic runs as a run-time
** loop (checked at three lengths against a direct computation); an unknown
** activation must be refused with an error naming the node.
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"
#include "tests/harness.h"
#include "tests/testutil.h"

#define MAXT 9
#define MAXR 8

/* The element types of expected.txt. */
typedef enum { E_F32, E_I32, E_I64, E_U8, E_I8, E_COUNT } etype;

static const struct {
  const char *name;
  uint8_t code, bits;
} etypes[E_COUNT] = {
    [E_F32] = {"float32", kDLFloat, 32}, [E_I32] = {"int32", kDLInt, 32}, [E_I64] = {"int64", kDLInt, 64},
    [E_U8] = {"uint8", kDLUInt, 8},      [E_I8] = {"int8", kDLInt, 8},
};

/* One tensor of expected.txt. */
typedef struct ttensor {
  etype type;
  int rank;
  int64_t dims[MAXR];
  int64_t n;
  void *data;
} ttensor;

typedef struct tmodel {
  int nin, nout;
  ttensor in[MAXT], out[MAXT];
} tmodel;

static void tm_free(tmodel *m) {
  for (int i = 0; i < MAXT; i++) {
    free(m->in[i].data);
    free(m->out[i].data);
  }
  memset(m, 0, sizeof *m);
}

static void put(etype t, void *p, int64_t i, double v) {
  switch (t) {
    case E_F32: ((float *)p)[i] = (float)v; break;
    case E_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case E_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case E_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case E_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case E_COUNT: break;
  }
}

static double get(etype t, const void *p, int64_t i) {
  switch (t) {
    case E_F32: return ((const float *)p)[i];
    case E_I32: return ((const int32_t *)p)[i];
    case E_I64: return (double)((const int64_t *)p)[i];
    case E_U8: return ((const uint8_t *)p)[i];
    case E_I8: return ((const int8_t *)p)[i];
    case E_COUNT: break;
  }
  return 0;
}

/* Parses "<dtype> <rank> <dims> : <values>" into |t|; 0 on success. */
static int parse_tensor(char *p, ttensor *t) {
  char dt[16];
  int used = 0;
  if (sscanf(p, "%15s %d%n", dt, &t->rank, &used) != 2 || t->rank < 0 || t->rank > MAXR) return -1;
  p += used;
  int k = 0;
  while (k < E_COUNT && strcmp(dt, etypes[k].name) != 0) k++;
  if (k == E_COUNT) return -1;
  t->type = (etype)k;
  t->n = 1;
  for (int d = 0; d < t->rank; d++) {
    long long v;
    if (sscanf(p, "%lld%n", &v, &used) != 1) return -1;
    p += used;
    t->dims[d] = v;
    t->n *= v;
  }
  p = strchr(p, ':');
  if (!p) return -1;
  p++;
  t->data = calloc((size_t)(t->n ? t->n : 1), etypes[k].bits / 8);
  if (!t->data) return -1;
  for (int64_t i = 0; i < t->n; i++) {
    double v;
    if (sscanf(p, "%lf%n", &v, &used) != 1) return -1;
    p += used;
    put(t->type, t->data, i, v);
  }
  return 0;
}

/* The inputs and expected outputs of model |name|; 0 on success. */
static int read_expected(const char *name, tmodel *m) {
  size_t size;
  char *text = mlc_test_read_file(mlc_test_src_path("tests/rnn/expected.txt"), &size);
  memset(m, 0, sizeof *m);
  if (!text) return -1;
  int rc = 0;
  size_t len = strlen(name);
  for (char *line = strtok(text, "\n"); line && !rc; line = strtok(NULL, "\n")) {
    if (strncmp(line, name, len) != 0 || line[len] != ' ') continue;
    char *p = line + len + 1;
    int out = strncmp(p, "out ", 4) == 0, idx, used = 0;
    if (sscanf(p + (out ? 4 : 3), "%d%n", &idx, &used) != 1 || idx < 0 || idx >= MAXT) {
      rc = -1;
      break;
    }
    ttensor *t = out ? &m->out[idx] : &m->in[idx];
    if (t->data) {
      rc = -1;
      break;
    }
    rc = parse_tensor(p + (out ? 4 : 3) + used, t);
    if (out && idx + 1 > m->nout) m->nout = idx + 1;
    if (!out && idx + 1 > m->nin) m->nin = idx + 1;
  }
  free(text);
  return rc;
}

static DLTensor dl(const ttensor *t, int64_t *shape) {
  DLTensor x;
  memset(&x, 0, sizeof x);
  for (int d = 0; d < t->rank; d++) shape[d] = t->dims[d];
  x.data = t->data;
  x.device.device_type = kDLCPU;
  x.ndim = t->rank;
  x.dtype.code = etypes[t->type].code;
  x.dtype.bits = etypes[t->type].bits;
  x.dtype.lanes = 1;
  x.shape = shape;
  return x;
}

/* Number of elements of |y| that differ from |want| (-1: dtype or shape). */
static int64_t compare(const char *name, int k, const DLTensor *y, const ttensor *want) {
  int same = y->ndim == want->rank && y->dtype.bits == etypes[want->type].bits &&
             y->dtype.code == etypes[want->type].code;
  for (int d = 0; same && d < want->rank; d++) same = y->shape[d] == want->dims[d];
  if (!same) {
    fprintf(stderr, "\n%s: output %d has another shape or dtype\n", name, k);
    return -1;
  }
  int64_t bad = 0;
  const char *yd = (const char *)y->data + y->byte_offset;
  for (int64_t i = 0; i < want->n; i++) {
    double w = get(want->type, want->data, i), g = get(want->type, yd, i);
    int ok = want->type == E_F32 ? fabs(w - g) <= 1e-5 + 1e-4 * fabs(w) : w == g;
    if (!ok && bad++ < 4)
      fprintf(stderr, "\n%s: output %d element %lld: want %.9g, got %.9g", name, k, (long long)i, w, g);
  }
  return bad;
}

/* Compiles, runs and checks tests/rnn/<name>.onnx. */
static void run_model(const char *name) {
  char onnx[4096], so[4096];
  tmodel tm;
  snprintf(onnx, sizeof onnx, "%s%s.onnx", mlc_test_src_path("tests/rnn/"), name);
  int rd = read_expected(name, &tm);
  CU_ASSERT_EQUAL(rd, 0);
  CU_ASSERT(tm.nout > 0);
  if (rd || tm.nout == 0) {
    fprintf(stderr, "\n%s: no usable entry in expected.txt\n", name);
    tm_free(&tm);
    return;
  }
  int failed = !mlc_th_compile(onnx, name, "\n", so, sizeof so);
  mlc_model *m = failed ? NULL : mlc_th_load(so, name, "\n");
  if (!failed && !m) CU_FAIL("load");
  mlc_session *ss = NULL;
  if (m) CU_ASSERT_EQUAL(mlc_session_create(m, NULL, &ss), MLC_RT_OK);
  if (ss) {
    int64_t shapes[MAXT][MAXR];
    DLTensor in[MAXT];
    int ok = 1;
    for (int i = 0; i < tm.nin; i++) {
      in[i] = dl(&tm.in[i], shapes[i]);
      ok &= mlc_session_set_input(ss, i, &in[i]) == MLC_RT_OK;
    }
    CU_ASSERT(ok);
    int rc = mlc_session_run(ss);
    if (rc != MLC_RT_OK) fprintf(stderr, "\nrun %s: %s\n", name, mlc_session_last_error(ss));
    CU_ASSERT_EQUAL(rc, MLC_RT_OK);
    CU_ASSERT_EQUAL(mlc_model_num_outputs(m), tm.nout);
    for (int k = 0; rc == MLC_RT_OK && k < tm.nout; k++) {
      const DLTensor *y = NULL;
      CU_ASSERT_EQUAL(mlc_session_get_output(ss, k, &y), MLC_RT_OK);
      if (y) CU_ASSERT_EQUAL(compare(name, k, y, &tm.out[k]), 0);
    }
    mlc_session_free(ss);
  }
  mlc_model_free(m);
  remove(so);
  tm_free(&tm);
}

/* Compiling tests/rnn/<name>.onnx fails with |code| and a message that
** contains |a| and |b|. */
static void expect_error(const char *name, mlc_code code, const char *a, const char *b) {
  char onnx[4096], so[4096];
  snprintf(onnx, sizeof onnx, "%s%s.onnx", mlc_test_src_path("tests/rnn/"), name);
  snprintf(so, sizeof so, "%s/%s.so", mlc_th_tmpdir, name);
  mlc_status s = mlc_compile_file(onnx, so, NULL);
  CU_ASSERT_PTR_NOT_NULL(s);
  if (!s) return;
  const char *msg = mlc_status_message(s);
  int ok = mlc_status_code(s) == code && strstr(msg, a) && strstr(msg, b);
  if (!ok) fprintf(stderr, "\n%s: unexpected error (%d): %s\n", name, (int)mlc_status_code(s), msg);
  CU_ASSERT(ok);
  mlc_status_free(s);
}

static void t_lstm(void) {
  run_model("lstm_bidi");
  run_model("lstm_rev_layout1");
  run_model("lstm_const");
  run_model("lstm_sym_batch");
}

static void t_gru(void) {
  run_model("gru_bidi_lbr");
  run_model("gru_rev_layout1");
  run_model("gru_v3");
}

static void t_rnn(void) {
  run_model("rnn_bidi");
  run_model("rnn_thresholded");
  run_model("rnn_softplus");
  run_model("rnn_long");
}

/* rnn_symbolic_seq: X [T, 1, 2] with T a dim_param runs as a run-time loop;
** Y = h_t = tanh(W x_t + R h_{t-1}) (h_0 = 0) for T = 3, then 1, then 5. */
static void t_rnn_symbolic_seq(void) {
  char onnx[4096], so[4096];
  snprintf(onnx, sizeof onnx, "%srnn_symbolic_seq.onnx", mlc_test_src_path("tests/rnn/"));
  if (!mlc_th_compile(onnx, "rnn_symbolic_seq", "", so, sizeof so)) return;
  mlc_model *m = mlc_th_load(so, "rnn_symbolic_seq", "");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  mlc_session *ss = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &ss), MLC_RT_OK);
  static const float W[4] = {0.5f, -1.0f, 0.25f, 0.75f}, R[4] = {-0.5f, 0.3f, 0.8f, -0.2f};
  static const int64_t lens[3] = {3, 1, 5};
  int64_t ws[3] = {1, 2, 2};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLTensor tw = {(void *)W, {kDLCPU, 0}, 3, f32, ws, NULL, 0}, tr = {(void *)R, {kDLCPU, 0}, 3, f32, ws, NULL, 0};
  CU_ASSERT_EQUAL(mlc_session_set_input(ss, 1, &tw), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(ss, 2, &tr), MLC_RT_OK);
  for (int c = 0; c < 3; c++) {
    int64_t T = lens[c], xs[3] = {T, 1, 2};
    float x[10], want[10], h[2] = {0, 0};
    for (int i = 0; i < 2 * T; i++) x[i] = (float)(i % 3) - 0.7f * (float)c;
    for (int t = 0; t < T; t++) {
      float a = W[0] * x[2 * t] + W[1] * x[2 * t + 1] + R[0] * h[0] + R[1] * h[1];
      float b = W[2] * x[2 * t] + W[3] * x[2 * t + 1] + R[2] * h[0] + R[3] * h[1];
      h[0] = tanhf(a);
      h[1] = tanhf(b);
      want[2 * t] = h[0];
      want[2 * t + 1] = h[1];
    }
    DLTensor tx = {x, {kDLCPU, 0}, 3, f32, xs, NULL, 0};
    CU_ASSERT_EQUAL(mlc_session_set_input(ss, 0, &tx), MLC_RT_OK);
    if (mlc_session_run(ss) != MLC_RT_OK) {
      fprintf(stderr, "rnn_symbolic_seq: %s\n", mlc_session_last_error(ss));
      CU_FAIL("run failed");
      continue;
    }
    const DLTensor *y = NULL;
    CU_ASSERT_EQUAL_FATAL(mlc_session_get_output(ss, 0, &y), MLC_RT_OK);
    CU_ASSERT_EQUAL_FATAL(y->ndim, 4);
    CU_ASSERT_EQUAL(y->shape[0], T);
    CU_ASSERT(y->shape[1] == 1 && y->shape[2] == 1 && y->shape[3] == 2);
    for (int i = 0; y->shape[0] == T && i < 2 * T; i++)
      CU_ASSERT(fabsf(((const float *)y->data)[i] - want[i]) < 1e-5f);
  }
  mlc_session_free(ss);
  mlc_model_free(m);
}

static void t_rnn_errors(void) {
  expect_error("rnn_bad_act", MLC_UNIMPLEMENTED, "node \"gru\"", "activation \"Swish\" not supported");
}

static void t_quantize(void) {
  run_model("quant_axis0_i8");
  run_model("quant_v10_i32");
  run_model("dequant_axis_i8");
  run_model("dequant_i32");
  run_model("dynquant");
  run_model("dynquant_zero");
}

static void t_integer_products(void) {
  run_model("matmulint");
  run_model("convint");
  run_model("qlinear_matmul");
  run_model("qlinear_conv");
}

static void register_suites(void) {
  static const CU_TestInfo tests[] = {
      {"lstm", t_lstm},
      {"gru", t_gru},
      {"rnn", t_rnn},
      {"rnn_symbolic_seq", t_rnn_symbolic_seq},
      {"rnn_errors", t_rnn_errors},
      {"quantize", t_quantize},
      {"integer_products", t_integer_products},
      CU_TEST_INFO_NULL,
  };
  CU_pSuite s = CU_add_suite("rnn_quant", mlc_th_tmp_init, mlc_th_tmp_clean);
  for (const CU_TestInfo *t = tests; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_rnn_quant", fns);
}
