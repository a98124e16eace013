/*
** test_signal_ops.c: CUnit suites for the signal and vision ops, end to
** end and checked differentially.
**
** Each case is a one-node ONNX model written here (a small protobuf
** encoder: ModelProto with one NodeProto, graph inputs, initializers for
** the inputs that must be constants, outputs, dims optionally declared as
** dim_params), compiled with mlc_compile_file into a model .so, loaded
** through mlc/mlc_runtime.h, run on seeded random data and compared with a
** naive C reference computed in double precision: DFT (real and complex,
** onesided, inverse, dft_length constant and at run time, DFT-20's axis
** input), STFT (constant and run-time frame_step and frame_length, windows,
** complex signals), the Hann, Hamming and Blackman windows (constant and
** run-time sizes, periodic and symmetric, float64 output), MelWeightMatrix,
** GridSample (every mode, padding mode and align_corners), RoiAlign (avg
** and max, both coordinate modes, fixed and adaptive sampling), Det
** (batches, singular matrices, a symbolic batch), MaxUnpool (max_pool
** indices, indices that leave their window, duplicates, constant and
** run-time output_shape), NonMaxSuppression (both box formats, thresholds,
** run-time limits) and Unique (sorted and in order of first occurrence,
** with and without axis).  Floats compare with rtol 1e-4 and atol 1e-5
** (float64: 1e-9), integers exactly.  A second suite checks that bad
** models and bad run-time sizes give errors naming the node and op, and
** the inference rules directly.
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"
#include "tests/harness.h"
#include "tests/testutil.h"

#define MAXR MLC_TH_MAXR
#define MAXEL MLC_TH_MAXEL
#define PI 3.14159265358979323846

/* ---- building cases -------------------------------------------------------------- */

#define D(...) (const int64_t[]){__VA_ARGS__}

/* The multi-index of flat |e| in |dims|. */
static void unflat(int64_t e, const int64_t *dims, int rank, int64_t *ix) {
  for (int d = rank - 1; d >= 0; d--) ix[d] = e % dims[d], e /= dims[d];
}

static int64_t flat(const int64_t *ix, const int64_t *dims, int rank) {
  int64_t f = 0;
  for (int d = 0; d < rank; d++) f = f * dims[d] + ix[d];
  return f;
}

/* ---- DFT, STFT --------------------------------------------------------------------------- */

/* The DFT of |x| (real [.., 1] or complex [.., 2]) along |axis| over |n|
** points into |y| (its dims set by the caller). */
static void ref_dft(const ten *x, int axis, int64_t n, int inverse, ten *y) {
  int r = x->rank, cpx = x->dims[r - 1] == 2;
  int64_t yi[MAXR], xi[MAXR], len = x->dims[axis] < n ? x->dims[axis] : n;
  double sign = inverse ? 1 : -1;
  for (int64_t e = 0; e < mlc_th_numel_of(y); e++) {
    unflat(e, y->dims, r, yi);
    int64_t k = yi[axis];
    double re = 0, im = 0;
    memcpy(xi, yi, sizeof xi);
    for (int64_t t = 0; t < len; t++) {
      xi[axis] = t;
      xi[r - 1] = 0;
      double xr = x->v[flat(xi, x->dims, r)], xm = 0;
      if (cpx) xi[r - 1] = 1, xm = x->v[flat(xi, x->dims, r)];
      double ph = sign * 2 * PI * (double)((k * t) % n) / (double)n;
      re += xr * cos(ph) - xm * sin(ph);
      im += xr * sin(ph) + xm * cos(ph);
    }
    double v = yi[r - 1] == 0 ? re : im;
    y->v[e] = inverse ? v / (double)n : v;
  }
}

/* One DFT case: x of |dims| (last 1 or 2); |len|: dft_length (0: absent,
** < 0: |-len| at run time); |opset| 20 passes the axis as an input. */
static void dft_case(const char *name, int opset, int rank, const int64_t *dims, int axis, int64_t len, int onesided,
                     int inverse, unsigned sym) {
  mcase *c = mlc_th_new_case(name, "DFT", opset);
  c->in[0] = mlc_th_tensor("x", T_F32, rank, dims, -2, 2);
  c->in[0].sym = sym;
  c->nin = 1;
  int64_t n = len ? (len < 0 ? -len : len) : dims[axis < 0 ? axis + rank : axis];
  int a = axis < 0 ? axis + rank : axis;
  if (len || opset >= 20) {
    c->in[c->nin++] = len ? mlc_th_scalar("n", T_I64, (double)n, len > 0, 0) : mlc_th_scalar("", T_I64, 0, 0, 0);
    if (!len) c->in[1].name = "";
  }
  if (opset >= 20) c->in[c->nin++] = mlc_th_scalar("axis", T_I64, axis, 1, 0);
  else c->at[c->nattr++] = mlc_th_aint("axis", axis);
  if (onesided) c->at[c->nattr++] = mlc_th_aint("onesided", 1);
  if (inverse) c->at[c->nattr++] = mlc_th_aint("inverse", 1);
  int64_t od[MAXR];
  memcpy(od, dims, sizeof *od * (size_t)rank);
  od[a] = onesided ? n / 2 + 1 : n;
  od[rank - 1] = 2;
  c->out[0] = mlc_th_output("y", T_F32, rank, od);
  c->out[0].sym = sym | (len < 0 ? 1u << a : 0); /* a run-time length: the extent undeclared */
  c->nout = 1;
  ref_dft(&c->in[0], a, n, inverse, &c->out[0]);
  mlc_th_run_case(c);
  free(c);
}

static void t_dft(void) {
  dft_case("dft_real_axis1", 17, 4, D(2, 8, 3, 1), 1, 0, 0, 0, 0);
  dft_case("dft_complex_inverse", 17, 3, D(2, 6, 2), 1, 0, 0, 1, 0);
  dft_case("dft_onesided_axis2", 17, 4, D(1, 3, 7, 1), 2, 0, 1, 0, 0);
  dft_case("dft_negative_axis", 17, 4, D(2, 5, 4, 2), -2, 0, 0, 0, 0);
  dft_case("dft_len_cut", 17, 3, D(2, 8, 1), 1, 5, 0, 0, 0);
  dft_case("dft_len_pad_onesided", 17, 3, D(2, 8, 1), 1, 12, 1, 0, 0);
  dft_case("dft_len_runtime", 17, 3, D(3, 7, 2), 1, -10, 0, 1, 0);
  dft_case("dft_len_runtime_onesided", 17, 3, D(2, 9, 1), 1, -6, 1, 0, 0);
  dft_case("dft20_default_axis", 20, 4, D(2, 3, 6, 1), -2, 0, 0, 0, 0);
  dft_case("dft_symbolic_batch", 17, 3, D(3, 9, 1), 1, 0, 1, 0, 1);
}

/* The STFT of signal |x| [B, L, 1 or 2] with |w| (NULL: ones). */
static void ref_stft(const ten *x, const double *w, int64_t step, int64_t n, ten *y) {
  int cpx = x->dims[2] == 2;
  for (int64_t e = 0; e < mlc_th_numel_of(y); e++) {
    int64_t yi[4];
    unflat(e, y->dims, 4, yi);
    double re = 0, im = 0;
    for (int64_t t = 0; t < n; t++) {
      int64_t base = (yi[0] * x->dims[1] + yi[1] * step + t) * x->dims[2];
      double wt = w ? w[t] : 1, xr = x->v[base] * wt, xm = cpx ? x->v[base + 1] * wt : 0;
      double ph = -2 * PI * (double)((yi[2] * t) % n) / (double)n;
      re += xr * cos(ph) - xm * sin(ph);
      im += xr * sin(ph) + xm * cos(ph);
    }
    y->v[e] = yi[3] == 0 ? re : im;
  }
}

/* One STFT case: |win| 1 passes a window of |n| points, |with_len| the
** frame_length; |rt| bit 0: frame_step at run time, bit 1: frame_length. */
static void stft_case(const char *name, const int64_t *dims, int64_t step, int64_t n, int win, int with_len,
                      int onesided, int rt) {
  mcase *c = mlc_th_new_case(name, "STFT", 17);
  c->in[0] = mlc_th_tensor("signal", T_F32, 3, dims, -1, 1);
  c->in[1] = mlc_th_scalar("step", T_I64, (double)step, !(rt & 1), 0);
  c->nin = 2;
  if (win) c->in[2] = mlc_th_tensor("window", T_F32, 1, &n, 0, 1);
  else c->in[2] = mlc_th_scalar("", T_F32, 0, 0, 0);
  if (win || with_len) c->nin = 3;
  if (with_len) c->in[c->nin++] = mlc_th_scalar("len", T_I64, (double)n, !(rt & 2), 0);
  if (!onesided) c->at[c->nattr++] = mlc_th_aint("onesided", 0);
  int64_t frames = (dims[1] - n) / step + 1, bins = onesided ? n / 2 + 1 : n;
  c->out[0] = mlc_th_output("y", T_F32, 4, D(dims[0], frames, bins, 2));
  c->nout = 1;
  ref_stft(&c->in[0], win ? c->in[2].v : NULL, step, n, &c->out[0]);
  mlc_th_run_case(c);
  free(c);
}

static void t_stft(void) {
  stft_case("stft_const", D(1, 64, 1), 8, 16, 0, 1, 1, 0);
  stft_case("stft_window_runtime_step", D(2, 50, 1), 7, 12, 1, 0, 0, 1);
  stft_case("stft_complex_window", D(2, 40, 2), 3, 10, 1, 0, 0, 0);
  stft_case("stft_runtime_all", D(1, 37, 1), 5, 9, 1, 1, 1, 3);
  stft_case("stft_runtime_len_only", D(2, 30, 1), 4, 8, 0, 1, 1, 2);
}

/* ---- windows, MelWeightMatrix ------------------------------------------------------------- */

static double ref_window(const char *op, int periodic, int64_t size, int64_t i) {
  int64_t N = periodic ? size : size - 1;
  double a = 2 * PI * (double)i / (double)(N < 1 ? 1 : N);
  if (!strcmp(op, "HammingWindow")) return 25.0 / 46.0 - 21.0 / 46.0 * cos(a);
  if (!strcmp(op, "BlackmanWindow")) return 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
  return 0.5 - 0.5 * cos(a);
}

static void window_case(const char *name, const char *op, int64_t size, int periodic, int size_const, int type,
                        int size_type) {
  mcase *c = mlc_th_new_case(name, op, 17);
  c->in[0] = mlc_th_scalar("size", size_type, (double)size, size_const, 0);
  c->nin = 1;
  if (!periodic) c->at[c->nattr++] = mlc_th_aint("periodic", 0);
  if (type != T_F32) c->at[c->nattr++] = mlc_th_aint("output_datatype", type);
  c->out[0] = mlc_th_output("y", type, 1, &size);
  c->nout = 1;
  for (int64_t i = 0; i < size; i++) c->out[0].v[i] = ref_window(op, periodic, size, i);
  mlc_th_run_case(c);
  free(c);
}

static void t_windows(void) {
  static const char *const ops[] = {"HannWindow", "HammingWindow", "BlackmanWindow"};
  static const char *const names[3][4] = {
      {"hann_const", "hann_sym_runtime", "hann_f64_runtime", "hann_sym_const_f64"},
      {"hamming_const", "hamming_sym_runtime", "hamming_f64_runtime", "hamming_sym_const_f64"},
      {"blackman_const", "blackman_sym_runtime", "blackman_f64_runtime", "blackman_sym_const_f64"}};
  for (int k = 0; k < 3; k++) {
    window_case(names[k][0], ops[k], 10, 1, 1, T_F32, T_I32);
    window_case(names[k][1], ops[k], 13, 0, 0, T_F32, T_I64);
    window_case(names[k][2], ops[k], 7, 1, 0, T_F64, T_I32);
    window_case(names[k][3], ops[k], 9, 0, 1, T_F64, T_I64);
  }
  window_case("hann_one_symmetric", "HannWindow", 1, 0, 0, T_F32, T_I32);
  window_case("hann_empty", "HannWindow", 0, 1, 1, T_F32, T_I32);
}

/* The ONNX reference of MelWeightMatrix. */
static void ref_mel(int64_t mels, int64_t dl, int64_t sr, double lo, double hi, ten *y) {
  int64_t bins = dl / 2 + 1, f[64];
  double lm = 2595 * log10(1 + lo / 700), hm = 2595 * log10(1 + hi / 700), step = (hm - lm) / (double)(mels + 2);
  for (int64_t i = 0; i < mels + 2; i++) {
    double hz = 700 * (pow(10, ((double)i * step + lm) / 2595) - 1);
    f[i] = (int64_t)floor((double)(dl + 1) * hz / (double)sr);
  }
  memset(y->v, 0, sizeof(double) * (size_t)(bins * mels));
  for (int64_t i = 0; i < mels; i++) {
    int64_t l = f[i], ce = f[i + 1], h = f[i + 2];
    if (ce == l) y->v[ce * mels + i] = 1;
    else
      for (int64_t j = l; j <= ce; j++) y->v[j * mels + i] = (double)(j - l) / (double)(ce - l);
    if (h > ce)
      for (int64_t j = ce; j < h; j++) y->v[j * mels + i] = (double)(h - j) / (double)(h - ce);
  }
}

static void mel_case(const char *name, int64_t mels, int64_t dl, int64_t sr, double lo, double hi, int consts,
                     int type) {
  mcase *c = mlc_th_new_case(name, "MelWeightMatrix", 17);
  c->in[0] = mlc_th_scalar("num_mel_bins", T_I32, (double)mels, consts, 0);
  c->in[1] = mlc_th_scalar("dft_length", T_I64, (double)dl, consts, 0);
  c->in[2] = mlc_th_scalar("sample_rate", T_I32, (double)sr, consts, 0);
  c->in[3] = mlc_th_scalar("lower", T_F32, lo, consts, 0);
  c->in[4] = mlc_th_scalar("upper", T_F32, hi, consts, 0);
  c->nin = 5;
  if (type != T_F32) c->at[c->nattr++] = mlc_th_aint("output_datatype", type);
  c->out[0] = mlc_th_output("y", type, 2, D(dl / 2 + 1, mels));
  c->nout = 1;
  ref_mel(mels, dl, sr, (float)lo, (float)hi, &c->out[0]);
  mlc_th_run_case(c);
  free(c);
}

static void t_mel(void) {
  mel_case("mel_const", 8, 16, 8192, 0, 4096, 1, T_F32);
  mel_case("mel_runtime", 10, 64, 16000, 20, 8000, 0, T_F32);
  mel_case("mel_runtime_f64", 12, 100, 22050, 50, 11025, 0, T_F64);
}

/* ---- GridSample ---------------------------------------------------------------------------- */

static double gs_reflect(double v, double lo2, double hi2) {
  if (lo2 == hi2) return 0;
  double mn = lo2 / 2, span = (hi2 - lo2) / 2;
  v = fabs(v - mn);
  double extra = fmod(v, span);
  int flips = (int)floor(v / span);
  return flips % 2 == 0 ? extra + mn : span - extra + mn;
}

static double gs_pad(double v, int64_t size, int pad, int ac) {
  if (pad == 0) return v;
  if (pad == 2) v = ac ? gs_reflect(v, 0, 2.0 * (double)(size - 1)) : gs_reflect(v, -1, 2.0 * (double)size - 1);
  return fmin(fmax(v, 0), (double)(size - 1));
}

static double gs_cc1(double x) { return ((1.25 * x - 2.25) * x) * x + 1; }
static double gs_cc2(double x) { return ((-0.75 * x + 3.75) * x - 6) * x + 3; }

/* PyTorch's grid_sample (mode 0 bilinear, 1 nearest, 2 bicubic; pad 0
** zeros, 1 border, 2 reflection). */
static void ref_grid_sample(const ten *x, const ten *g, int mode, int pad, int ac, ten *y) {
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], Ho = g->dims[1], Wo = g->dims[2];
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++)
      for (int64_t i = 0; i < Ho; i++)
        for (int64_t j = 0; j < Wo; j++) {
          const double *gp = &g->v[((n * Ho + i) * Wo + j) * 2];
          const double *img = &x->v[(n * C + ch) * H * W];
          double ux = ac ? (gp[0] + 1) / 2 * (double)(W - 1) : ((gp[0] + 1) * (double)W - 1) / 2;
          double uy = ac ? (gp[1] + 1) / 2 * (double)(H - 1) : ((gp[1] + 1) * (double)H - 1) / 2;
          double out = 0;
#define PIX(yy, xx) ((yy) >= 0 && (yy) < H && (xx) >= 0 && (xx) < W ? img[(yy) * W + (xx)] : 0.0)
          if (mode == 2) {
            double x0 = floor(ux), y0 = floor(uy), tx = ux - x0, ty = uy - y0;
            double wx[4] = {gs_cc2(tx + 1), gs_cc1(tx), gs_cc1(1 - tx), gs_cc2(2 - tx)};
            double wy[4] = {gs_cc2(ty + 1), gs_cc1(ty), gs_cc1(1 - ty), gs_cc2(2 - ty)};
            for (int a = 0; a < 4; a++)
              for (int b = 0; b < 4; b++) {
                int64_t yy = (int64_t)gs_pad(y0 - 1 + a, H, pad, ac), xx = (int64_t)gs_pad(x0 - 1 + b, W, pad, ac);
                out += wy[a] * wx[b] * PIX(yy, xx);
              }
          } else {
            double px = gs_pad(ux, W, pad, ac), py = gs_pad(uy, H, pad, ac);
            if (mode == 1) {
              int64_t yy = (int64_t)nearbyint(py), xx = (int64_t)nearbyint(px);
              out = PIX(yy, xx);
            } else {
              int64_t x0 = (int64_t)floor(px), y0 = (int64_t)floor(py);
              double lx = px - (double)x0, ly = py - (double)y0;
              out = PIX(y0, x0) * (1 - lx) * (1 - ly) + PIX(y0, x0 + 1) * lx * (1 - ly) +
                    PIX(y0 + 1, x0) * (1 - lx) * ly + PIX(y0 + 1, x0 + 1) * lx * ly;
            }
          }
#undef PIX
          y->v[((n * C + ch) * Ho + i) * Wo + j] = out;
        }
}

static void t_grid_sample(void) {
  static const char *const modes[] = {"bilinear", "nearest", "bicubic"};
  static const char *const pads[] = {"zeros", "border", "reflection"};
  static char names[18][48];
  int k = 0;
  for (int m = 0; m < 3; m++)
    for (int p = 0; p < 3; p++)
      for (int ac = 0; ac < 2; ac++, k++) {
        snprintf(names[k], sizeof names[k], "gs_%s_%s_ac%d", modes[m], pads[p], ac);
        mcase *c = mlc_th_new_case(names[k], "GridSample", 16);
        c->in[0] = mlc_th_tensor("x", T_F32, 4, D(2, 3, 5, 7), -3, 3);
        c->in[1] = mlc_th_tensor("grid", T_F32, 4, D(2, 4, 6, 2), -1.4, 1.4);
        c->nin = 2;
        c->at[c->nattr++] = mlc_th_astr("mode", modes[m]);
        c->at[c->nattr++] = mlc_th_astr("padding_mode", pads[p]);
        c->at[c->nattr++] = mlc_th_aint("align_corners", ac);
        c->out[0] = mlc_th_output("y", T_F32, 4, D(2, 3, 4, 6));
        c->nout = 1;
        ref_grid_sample(&c->in[0], &c->in[1], m, p, ac, &c->out[0]);
        mlc_th_run_case(c);
        free(c);
      }
  /* GridSample-20's mode names, a symbolic batch */
  mcase *c = mlc_th_new_case("gs20_cubic_symbolic", "GridSample", 20);
  c->in[0] = mlc_th_tensor("x", T_F32, 4, D(3, 2, 4, 4), -1, 1);
  c->in[0].sym = 1;
  c->in[1] = mlc_th_tensor("grid", T_F32, 4, D(3, 3, 2, 2), -1, 1);
  c->in[1].sym = 1;
  c->nin = 2;
  c->at[c->nattr++] = mlc_th_astr("mode", "cubic");
  c->out[0] = mlc_th_output("y", T_F32, 4, D(3, 2, 3, 2));
  c->out[0].sym = 1;
  c->nout = 1;
  ref_grid_sample(&c->in[0], &c->in[1], 2, 0, 0, &c->out[0]);
  mlc_th_run_case(c);
  free(c);
}

/* ---- RoiAlign --------------------------------------------------------------------------------- */

/* onnxruntime's RoiAlign. */
static void ref_roi_align(const ten *x, const ten *rois, const ten *bi, int64_t oh, int64_t ow, int64_t sr,
                          double scale, int hp, int max, ten *y) {
  int64_t C = x->dims[1], H = x->dims[2], W = x->dims[3], R = rois->dims[0];
  double off = hp ? 0.5 : 0;
  for (int64_t r = 0; r < R; r++) {
    const double *ro = &rois->v[r * 4];
    double x1 = ro[0] * scale - off, y1 = ro[1] * scale - off;
    double rw = ro[2] * scale - off - x1, rh = ro[3] * scale - off - y1;
    if (!hp) rw = fmax(rw, 1), rh = fmax(rh, 1);
    double bh = rh / (double)oh, bw = rw / (double)ow;
    int64_t gh = sr > 0 ? sr : (int64_t)ceil(rh / (double)oh), gw = sr > 0 ? sr : (int64_t)ceil(rw / (double)ow);
    if (gh < 0) gh = 0;
    if (gw < 0) gw = 0;
    double cnt = (double)(gh * gw > 1 ? gh * gw : 1);
    const double *img0 = &x->v[(int64_t)bi->v[r] * C * H * W];
    for (int64_t ch = 0; ch < C; ch++)
      for (int64_t ph = 0; ph < oh; ph++)
        for (int64_t pw = 0; pw < ow; pw++) {
          const double *img = img0 + ch * H * W;
          double acc = 0, mx = 0;
          int any = 0;
          for (int64_t iy = 0; iy < gh; iy++)
            for (int64_t ix = 0; ix < gw; ix++) {
              double yy = y1 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
              double xx = x1 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
              double v[4] = {0, 0, 0, 0}, w[4] = {0, 0, 0, 0};
              if (!(yy < -1 || yy > (double)H || xx < -1 || xx > (double)W)) {
                yy = fmax(yy, 0), xx = fmax(xx, 0);
                int64_t yl = (int64_t)yy, xl = (int64_t)xx, yh, xh;
                if (yl >= H - 1) yh = yl = H - 1, yy = (double)yl;
                else yh = yl + 1;
                if (xl >= W - 1) xh = xl = W - 1, xx = (double)xl;
                else xh = xl + 1;
                double ly = yy - (double)yl, lx = xx - (double)xl, hy = 1 - ly, hx = 1 - lx;
                w[0] = hy * hx, w[1] = hy * lx, w[2] = ly * hx, w[3] = ly * lx;
                v[0] = img[yl * W + xl], v[1] = img[yl * W + xh], v[2] = img[yh * W + xl], v[3] = img[yh * W + xh];
              }
              double s = 0, m = w[0] * v[0];
              for (int k = 0; k < 4; k++) s += w[k] * v[k], m = fmax(m, w[k] * v[k]);
              acc += s;
              mx = any ? fmax(mx, m) : m;
              any = 1;
            }
          y->v[((r * C + ch) * oh + ph) * ow + pw] = max ? mx : acc / cnt;
        }
  }
}

static void roi_case(const char *name, int opset, int max, int hp, int64_t sr, double scale) {
  mcase *c = mlc_th_new_case(name, "RoiAlign", opset);
  int64_t R = 5;
  c->in[0] = mlc_th_tensor("x", T_F32, 4, D(2, 3, 12, 10), -1, 1);
  c->in[1] = mlc_th_tensor("rois", T_F32, 2, D(R, 4), 0, 1);
  c->in[2] = mlc_th_tensor("batch", T_I64, 1, &R, 0, 2);
  double rv[5][4] = {{0, 0, 9, 11}, {1.5, 2.2, 6.3, 8.9}, {-3, -2, 4, 5}, {7, 3, 13, 16}, {5, 6, 4.5, 6}};
  for (int r = 0; r < R; r++)
    for (int k = 0; k < 4; k++) c->in[1].v[r * 4 + k] = (float)(rv[r][k] / scale);
  c->nin = 3;
  int64_t oh = 3, ow = 4;
  if (max) c->at[c->nattr++] = mlc_th_astr("mode", "max");
  c->at[c->nattr++] = mlc_th_aint("output_height", oh);
  c->at[c->nattr++] = mlc_th_aint("output_width", ow);
  if (sr) c->at[c->nattr++] = mlc_th_aint("sampling_ratio", sr);
  if (scale != 1) c->at[c->nattr++] = mlc_th_aflt("spatial_scale", scale);
  if (opset >= 16) c->at[c->nattr++] = mlc_th_astr("coordinate_transformation_mode", hp ? "half_pixel" : "output_half_pixel");
  c->out[0] = mlc_th_output("y", T_F32, 4, D(R, 3, oh, ow));
  c->nout = 1;
  ref_roi_align(&c->in[0], &c->in[1], &c->in[2], oh, ow, sr, (float)scale, opset >= 16 && hp, max, &c->out[0]);
  mlc_th_run_case(c);
  free(c);
}

static void t_roi_align(void) {
  roi_case("roi_avg_half_pixel_sr2", 16, 0, 1, 2, 1);
  roi_case("roi_avg_output_half_pixel_adaptive", 16, 0, 0, 0, 1);
  roi_case("roi_max_half_pixel_adaptive", 16, 1, 1, 0, 1);
  roi_case("roi_max_output_half_pixel_sr3", 16, 1, 0, 3, 1);
  roi_case("roi10_scale", 10, 0, 0, 0, 0.5);
  roi_case("roi_avg_half_pixel_scale", 16, 0, 1, 1, 0.25);
}

/* ---- Det, MaxUnpool ------------------------------------------------------------------------- */

/* Determinant by cofactor expansion along the first row (n <= 6). */
static double ref_det(const double *a, int n) {
  if (n == 0) return 1;
  if (n == 1) return a[0];
  double sub[36], s = 0;
  for (int j = 0; j < n; j++) {
    int k = 0;
    for (int r = 1; r < n; r++)
      for (int q = 0; q < n; q++)
        if (q != j) sub[k++] = a[r * n + q];
    s += (j % 2 ? -1 : 1) * a[j] * ref_det(sub, n - 1);
  }
  return s;
}

static void det_case(const char *name, int rank, const int64_t *dims, int singular, unsigned sym) {
  mcase *c = mlc_th_new_case(name, "Det", 11);
  c->in[0] = mlc_th_tensor("x", T_F32, rank, dims, -2, 2);
  c->in[0].sym = sym;
  c->nin = 1;
  int64_t m = dims[rank - 1], nb = mlc_th_numel_of(&c->in[0]) / (m > 0 ? m * m : 1);
  if (singular) /* matrix 0: a zero column; matrix 1: two equal rows */
    for (int64_t i = 0; i < m; i++) {
      c->in[0].v[i * m + m - 1] = 0;
      if (nb > 1 && m > 1) c->in[0].v[m * m + m + i] = c->in[0].v[m * m + i];
    }
  c->out[0] = mlc_th_output("y", T_F32, rank - 2, dims);
  c->out[0].sym = sym;
  c->nout = 1;
  for (int64_t b = 0; b < nb; b++) c->out[0].v[b] = ref_det(&c->in[0].v[b * m * m], (int)m);
  mlc_th_run_case(c);
  free(c);
}

static void t_det(void) {
  det_case("det_2x2", 2, D(2, 2), 0, 0);
  det_case("det_batch_3x3", 3, D(3, 3, 3), 0, 0);
  det_case("det_batch_5x5", 4, D(2, 2, 5, 5), 0, 0);
  det_case("det_singular", 3, D(2, 4, 4), 1, 0);
  det_case("det_1x1", 3, D(4, 1, 1), 0, 0);
  det_case("det_symbolic_batch", 3, D(3, 4, 4), 0, 1);
}

/* MaxUnpool of |x| with flat |indices| into |y| (zeros elsewhere; the last
** write wins). */
static void ref_unpool(const ten *x, const ten *ix, ten *y) {
  memset(y->v, 0, sizeof(double) * (size_t)mlc_th_numel_of(y));
  for (int64_t e = 0; e < mlc_th_numel_of(x); e++) {
    int64_t t = (int64_t)ix->v[e];
    if (t >= 0 && t < mlc_th_numel_of(y)) y->v[t] = x->v[e];
  }
}

/* Fills |ix| with the flat argmax of each max_pool window of a random input
** of |in_dims| (what MaxPool's Indices output holds). */
static void pool_indices(const int64_t *in_dims, int rank, const int64_t *k, const int64_t *s, const int64_t *pads,
                         ten *ix) {
  int sp = rank - 2;
  int64_t pi[MAXR], wi[MAXR];
  for (int64_t e = 0; e < mlc_th_numel_of(ix); e++) {
    unflat(e, ix->dims, rank, pi);
    int64_t best = -1;
    double bv = -1;
    int64_t taps = 1;
    for (int d = 0; d < sp; d++) taps *= k[d];
    for (int64_t t = 0; t < taps; t++) {
      int64_t r = t, ok = 1;
      wi[0] = pi[0], wi[1] = pi[1];
      for (int d = sp - 1; d >= 0; d--) {
        wi[d + 2] = pi[d + 2] * s[d] - pads[d] + r % k[d];
        r /= k[d];
        ok &= wi[d + 2] >= 0 && wi[d + 2] < in_dims[d + 2];
      }
      double v = mlc_th_urand();
      if (ok && v > bv) bv = v, best = flat(wi, in_dims, rank);
    }
    ix->v[e] = (double)best;
  }
}

/* One MaxUnpool case; |mode| 0: max_pool indices, 1: random indices into
** the whole output (other channels, duplicates); |os| 0: no output_shape,
** 1: a constant one, 2: at run time. */
static void unpool_case(const char *name, int rank, const int64_t *xdims, const int64_t *k, const int64_t *s,
                        const int64_t *pads, const int64_t *odims, int mode, int os) {
  mcase *c = mlc_th_new_case(name, "MaxUnpool", 11);
  int sp = rank - 2;
  c->in[0] = mlc_th_tensor("x", T_F32, rank, xdims, 1, 5);
  c->in[1] = mlc_th_tensor("i", T_I64, rank, xdims, 0, 0);
  c->nin = 2;
  int64_t on = 1;
  for (int d = 0; d < rank; d++) on *= odims[d];
  if (mode == 0) pool_indices(odims, rank, k, s, pads, &c->in[1]);
  else
    for (int64_t e = 0; e < mlc_th_numel_of(&c->in[1]); e++) c->in[1].v[e] = floor(mlc_th_urand() * (double)on);
  if (os) {
    int64_t r = rank;
    c->in[2] = mlc_th_tensor("shape", T_I64, 1, &r, 0, 0);
    for (int d = 0; d < rank; d++) c->in[2].v[d] = (double)odims[d];
    c->in[2].init = os == 1;
    c->nin = 3;
  }
  c->at[c->nattr++] = mlc_th_aints("kernel_shape", sp, k);
  c->at[c->nattr++] = mlc_th_aints("strides", sp, s);
  int64_t pp[8];
  for (int d = 0; d < sp; d++) pp[d] = pads[d], pp[sp + d] = pads[sp + d];
  c->at[c->nattr++] = mlc_th_aints("pads", 2 * sp, pp);
  c->out[0] = mlc_th_output("y", T_F32, rank, odims);
  if (os == 2 && mode == 0) c->out[0].sym = 0xc; /* undeclared spatial extents */
  c->nout = 1;
  ref_unpool(&c->in[0], &c->in[1], &c->out[0]);
  mlc_th_run_case(c);
  free(c);
}

static void t_max_unpool(void) {
  /* the default output: (in - 1) * stride + kernel - pads */
  unpool_case("unpool_2d_pool_indices", 4, D(2, 3, 3, 3), D(2, 2), D(2, 2), D(0, 0, 0, 0), D(2, 3, 6, 6), 0, 0);
  unpool_case("unpool_2d_overlap_pads", 4, D(1, 2, 4, 3), D(3, 3), D(2, 2), D(1, 0, 0, 1), D(1, 2, 8, 6), 0, 0);
  unpool_case("unpool_1d", 3, D(2, 2, 4), D(3), D(2), D(1, 1), D(2, 2, 7), 0, 0);
  unpool_case("unpool_irregular_dups", 4, D(1, 2, 3, 3), D(2, 2), D(2, 2), D(0, 0, 0, 0), D(1, 2, 6, 6), 1, 0);
  unpool_case("unpool_shape_const", 4, D(1, 2, 3, 3), D(2, 2), D(2, 2), D(0, 0, 0, 0), D(1, 2, 7, 7), 0, 1);
  unpool_case("unpool_shape_runtime", 4, D(1, 1, 2, 3), D(2, 2), D(2, 2), D(0, 0, 0, 0), D(1, 1, 5, 7), 0, 2);
  unpool_case("unpool_shape_runtime_irregular", 4, D(2, 1, 2, 2), D(2, 2), D(2, 2), D(0, 0, 0, 0), D(2, 1, 5, 4), 1, 2);
}

/* ---- NonMaxSuppression, Unique ----------------------------------------------------------------- */

static void nms_corners(const double *b, int cpb, double *c) {
  if (cpb) {
    c[0] = b[1] - b[3] / 2, c[2] = b[1] + b[3] / 2, c[1] = b[0] - b[2] / 2, c[3] = b[0] + b[2] / 2;
  } else {
    c[0] = fmin(b[0], b[2]), c[2] = fmax(b[0], b[2]), c[1] = fmin(b[1], b[3]), c[3] = fmax(b[1], b[3]);
  }
}

static double iou(const double *a, const double *b) {
  double h = fmin(a[2], b[2]) - fmax(a[0], b[0]), w = fmin(a[3], b[3]) - fmax(a[1], b[1]);
  if (h <= 0 || w <= 0) return 0;
  double in = h * w, ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - in;
  return ua > 0 ? in / ua : 0;
}

/* Greedy NMS: rows [batch, class, box] into |y| (its first dim set). */
static void ref_nms(const ten *bx, const ten *sc, int64_t maxo, double thr_iou, double thr_s, int cpb, ten *y) {
  int64_t B = bx->dims[0], N = bx->dims[1], C = sc->dims[1], rows = 0;
  for (int64_t b = 0; b < B; b++)
    for (int64_t c = 0; c < C; c++) {
      int used[64] = {0}, kept[64], nk = 0;
      for (;;) { /* the best remaining candidate */
        int64_t best = -1;
        for (int64_t i = 0; i < N; i++) {
          double s = sc->v[(b * C + c) * N + i];
          if (used[i] || !(s > thr_s)) continue;
          if (best < 0 || s > sc->v[(b * C + c) * N + best]) best = i;
        }
        if (best < 0 || nk >= maxo) break;
        used[best] = 1;
        double cb[4], ck[4];
        nms_corners(&bx->v[(b * N + best) * 4], cpb, cb);
        int keep = 1;
        for (int k = 0; k < nk && keep; k++) {
          nms_corners(&bx->v[(b * N + kept[k]) * 4], cpb, ck);
          keep = !(iou(ck, cb) > thr_iou);
        }
        if (keep) kept[nk++] = (int)best;
      }
      for (int k = 0; k < nk; k++, rows++) {
        y->v[rows * 3] = (double)b, y->v[rows * 3 + 1] = (double)c, y->v[rows * 3 + 2] = kept[k];
      }
    }
  y->dims[0] = rows;
}

/* |opt| bit 0: iou_threshold given, bit 1: score_threshold given, bit 2:
** max_output_boxes_per_class at run time. */
static void nms_case(const char *name, int opset, int cpb, int64_t B, int64_t N, int64_t C, int64_t maxo, int opt) {
  mcase *c = mlc_th_new_case(name, "NonMaxSuppression", opset);
  c->in[0] = mlc_th_tensor("boxes", T_F32, 3, D(B, N, 4), 0, 1);
  for (int64_t i = 0; i < B * N; i++) { /* boxes of size 1 to 4 in a 10 x 10 area */
    double *b = &c->in[0].v[i * 4], y0 = floor(mlc_th_urand() * 8 * 4) / 4, x0 = floor(mlc_th_urand() * 8 * 4) / 4;
    double h = 1 + floor(mlc_th_urand() * 12) / 4, w = 1 + floor(mlc_th_urand() * 12) / 4;
    if (cpb) b[0] = x0 + w / 2, b[1] = y0 + h / 2, b[2] = w, b[3] = h;
    else if (i % 3 == 1) b[0] = y0 + h, b[1] = x0 + w, b[2] = y0, b[3] = x0; /* flipped corners */
    else b[0] = y0, b[1] = x0, b[2] = y0 + h, b[3] = x0 + w;
  }
  c->in[1] = mlc_th_tensor("scores", T_F32, 3, D(B, C, N), 0, 1);
  c->in[2] = mlc_th_scalar("max", T_I64, (double)maxo, !(opt & 4), 1);
  c->in[3] = mlc_th_scalar("iou", T_F32, 0.3, 0, 1);
  c->in[4] = mlc_th_scalar("score", T_F32, 0.25, 0, 1);
  if (!(opt & 1)) c->in[3].name = "";
  c->nin = opt & 2 ? 5 : 4;
  if (cpb) c->at[c->nattr++] = mlc_th_aint("center_point_box", 1);
  c->out[0] = mlc_th_output("selected", T_I64, 2, D(0, 3));
  c->out[0].sym = cpb; /* the count undeclared */
  c->nout = 1;
  ref_nms(&c->in[0], &c->in[1], maxo, opt & 1 ? (float)0.3 : 0, opt & 2 ? (float)0.25 : -INFINITY, cpb, &c->out[0]);
  mlc_th_run_case(c);
  free(c);
}

static void t_nms(void) {
  nms_case("nms_corners_all", 11, 0, 2, 20, 3, 5, 3);
  nms_case("nms_center_runtime_max", 11, 1, 1, 25, 2, 6, 7);
  nms_case("nms10_no_score_threshold", 10, 0, 2, 15, 1, 20, 1);
  nms_case("nms_no_thresholds", 11, 0, 1, 12, 2, 3, 0);
}

/* Unique of the slices along |axis| (-1: flattened) into y, indices,
** inverse, counts (dims set here). */
static void ref_unique(const ten *x, int axis, int sorted, ten *out) {
  int r = x->rank;
  int64_t A = 1, N, B = 1;
  if (axis < 0) N = mlc_th_numel_of(x);
  else {
    for (int d = 0; d < axis; d++) A *= x->dims[d];
    N = x->dims[axis];
    for (int d = axis + 1; d < r; d++) B *= x->dims[d];
  }
  int64_t K = A * B, order[256], first[256], u = 0;
#define EL(j, e) x->v[((e) / B * N + (j)) * B + (e) % B]
  for (int64_t j = 0; j < N; j++) {
    int64_t f = -1;
    for (int64_t q = 0; q < u && f < 0; q++) {
      int eq = 1;
      for (int64_t e = 0; e < K && eq; e++) eq = EL(first[q], e) == EL(j, e);
      if (eq) f = q;
    }
    if (f < 0) first[u++] = j;
  }
  for (int64_t q = 0; q < u; q++) order[q] = q;
  if (sorted) /* insertion sort of the first occurrences, lexicographic */
    for (int64_t q = 1; q < u; q++)
      for (int64_t p = q; p > 0; p--) {
        int64_t a = first[order[p - 1]], b = first[order[p]], e = 0;
        while (e < K && EL(a, e) == EL(b, e)) e++;
        if (e < K && EL(b, e) < EL(a, e)) {
          int64_t t = order[p];
          order[p] = order[p - 1], order[p - 1] = t;
        } else {
          break;
        }
      }
  for (int64_t p = 0; p < u; p++) {
    int64_t j = first[order[p]];
    out[1].v[p] = (double)j;
    out[3].v[p] = 0;
    for (int64_t a = 0; a < A; a++)
      for (int64_t b = 0; b < B; b++) out[0].v[(a * u + p) * B + b] = x->v[(a * N + j) * B + b];
  }
  for (int64_t j = 0; j < N; j++)
    for (int64_t p = 0; p < u; p++) {
      int eq = 1;
      for (int64_t e = 0; e < K && eq; e++) eq = EL(first[order[p]], e) == EL(j, e);
      if (eq) {
        out[2].v[j] = (double)p;
        out[3].v[p] += 1;
        break;
      }
    }
#undef EL
  if (axis < 0) out[0].rank = 1, out[0].dims[0] = u;
  else {
    out[0].rank = r;
    memcpy(out[0].dims, x->dims, sizeof x->dims);
    out[0].dims[axis] = u;
  }
  out[1].dims[0] = out[3].dims[0] = u;
  out[2].dims[0] = N;
}

static void unique_case(const char *name, int type, int rank, const int64_t *dims, int axis, int sorted, int levels) {
  mcase *c = mlc_th_new_case(name, "Unique", 11);
  c->in[0] = mlc_th_tensor("x", type, rank, dims, 0, levels);
  if (type == T_F32)
    for (int64_t e = 0; e < mlc_th_numel_of(&c->in[0]); e++) c->in[0].v[e] = floor(c->in[0].v[e]) - 1.5;
  c->nin = 1;
  if (axis != INT32_MIN) c->at[c->nattr++] = mlc_th_aint("axis", axis);
  if (!sorted) c->at[c->nattr++] = mlc_th_aint("sorted", 0);
  c->out[0] = mlc_th_output("y", type, 1, D(0));
  c->out[1] = mlc_th_output("indices", T_I64, 1, D(0));
  c->out[2] = mlc_th_output("inverse", T_I64, 1, D(0));
  c->out[3] = mlc_th_output("counts", T_I64, 1, D(0));
  c->nout = 4;
  if (!sorted) c->out[0].sym = c->out[1].sym = c->out[3].sym = 1; /* the count undeclared */
  ref_unique(&c->in[0], axis == INT32_MIN ? -1 : axis < 0 ? axis + rank : axis, sorted, c->out);
  mlc_th_run_case(c);
  free(c);
}

static void t_unique(void) {
  unique_case("unique_flat_sorted", T_F32, 2, D(4, 5), INT32_MIN, 1, 6);
  unique_case("unique_flat_first_order", T_I64, 1, D(17), INT32_MIN, 0, 5);
  unique_case("unique_axis0_sorted", T_F32, 2, D(7, 3), 0, 1, 2);
  unique_case("unique_axis1_first_order", T_I32, 3, D(2, 6, 2), 1, 0, 2);
  unique_case("unique_negative_axis", T_F32, 3, D(2, 2, 8), -1, 1, 2);
}

/* ---- errors ----------------------------------------------------------------------------------- */

static void t_errors(void) {
  mcase *c = mlc_th_new_case("err_dft_axis", "DFT", 17);
  c->in[0] = mlc_th_tensor("x", T_F32, 3, D(2, 4, 1), 0, 1);
  c->nin = 1;
  c->at[c->nattr++] = mlc_th_aint("axis", 2);
  c->out[0] = mlc_th_output("y", T_F32, 3, D(2, 4, 2));
  c->nout = 1;
  mlc_th_expect_error(c, MLC_INVALID_ARGUMENT, "DFT", "axis 2 is out of range");
  c->at[0].i = 1;
  c->in[0].dims[2] = 3; /* neither real nor complex */
  mlc_th_expect_error(c, MLC_INVALID_ARGUMENT, "node0", "1 (real) or 2 (complex)");
  free(c);

  c = mlc_th_new_case("err_stft_no_length", "STFT", 17);
  c->in[0] = mlc_th_tensor("signal", T_F32, 3, D(1, 32, 1), 0, 1);
  c->in[1] = mlc_th_scalar("step", T_I64, 4, 1, 0);
  c->nin = 2;
  c->out[0] = mlc_th_output("y", T_F32, 4, D(1, 1, 1, 2));
  c->nout = 1;
  mlc_th_expect_error(c, MLC_INVALID_ARGUMENT, "STFT", "window or a frame_length");
  c->in[2] = mlc_th_scalar("", T_F32, 0, 0, 0);
  c->in[3] = mlc_th_scalar("len", T_I64, 40, 1, 0);
  c->nin = 4;
  mlc_th_expect_error(c, MLC_INVALID_ARGUMENT, "STFT", "exceeds the signal length");
  free(c);

  c = mlc_th_new_case("err_grid_sample_5d", "GridSample", 16);
  c->in[0] = mlc_th_tensor("x", T_F32, 5, D(1, 1, 2, 2, 2), 0, 1);
  c->in[1] = mlc_th_tensor("grid", T_F32, 5, D(1, 2, 2, 2, 3), 0, 1);
  c->nin = 2;
  c->out[0] = mlc_th_output("y", T_F32, 5, D(1, 1, 2, 2, 2));
  c->nout = 1;
  mlc_th_expect_error(c, MLC_UNIMPLEMENTED, "GridSample", "4-D");
  free(c);

  c = mlc_th_new_case("err_grid_sample_mode", "GridSample", 16);
  c->in[0] = mlc_th_tensor("x", T_F32, 4, D(1, 1, 2, 2), 0, 1);
  c->in[1] = mlc_th_tensor("grid", T_F32, 4, D(1, 2, 2, 2), 0, 1);
  c->nin = 2;
  c->at[c->nattr++] = mlc_th_astr("mode", "linear"); /* GridSample-20's name */
  c->out[0] = mlc_th_output("y", T_F32, 4, D(1, 1, 2, 2));
  c->nout = 1;
  mlc_th_expect_error(c, MLC_UNIMPLEMENTED, "GridSample", "linear");
  free(c);

  c = mlc_th_new_case("err_det_square", "Det", 11);
  c->in[0] = mlc_th_tensor("x", T_F32, 2, D(2, 3), 0, 1);
  c->nin = 1;
  c->out[0] = mlc_th_output("y", T_F32, 0, NULL);
  c->nout = 1;
  mlc_th_expect_error(c, MLC_INVALID_ARGUMENT, "node0", "square");
  free(c);

  c = mlc_th_new_case("err_unpool_kernel", "MaxUnpool", 11);
  c->in[0] = mlc_th_tensor("x", T_F32, 4, D(1, 1, 2, 2), 0, 1);
  c->in[1] = mlc_th_tensor("i", T_I64, 4, D(1, 1, 2, 2), 0, 4);
  c->nin = 2;
  c->at[c->nattr++] = mlc_th_aints("kernel_shape", 1, D(2));
  c->out[0] = mlc_th_output("y", T_F32, 4, D(1, 1, 4, 4));
  c->nout = 1;
  mlc_th_expect_error(c, MLC_INVALID_ARGUMENT, "MaxUnpool", "kernel_shape");
  free(c);

  c = mlc_th_new_case("err_window_size", "HannWindow", 17);
  c->in[0] = mlc_th_scalar("size", T_I32, -3, 1, 0);
  c->nin = 1;
  c->out[0] = mlc_th_output("y", T_F32, 1, D(3));
  c->nout = 1;
  mlc_th_expect_error(c, MLC_INVALID_ARGUMENT, "HannWindow", "size -3");
  free(c);

  c = mlc_th_new_case("err_roi_mode", "RoiAlign", 16);
  c->in[0] = mlc_th_tensor("x", T_F32, 4, D(1, 1, 4, 4), 0, 1);
  c->in[1] = mlc_th_tensor("rois", T_F32, 2, D(1, 4), 0, 3);
  c->in[2] = mlc_th_tensor("b", T_I64, 1, D(1), 0, 0);
  c->nin = 3;
  c->at[c->nattr++] = mlc_th_astr("mode", "min");
  c->out[0] = mlc_th_output("y", T_F32, 4, D(1, 1, 1, 1));
  c->nout = 1;
  mlc_th_expect_error(c, MLC_UNIMPLEMENTED, "RoiAlign", "mode \"min\"");
  free(c);

  /* sizes computed at run time: a bad value fails the run, naming the values */
  c = mlc_th_new_case("err_stft_step_zero", "STFT", 17);
  c->in[0] = mlc_th_tensor("signal", T_F32, 3, D(1, 32, 1), 0, 1);
  c->in[1] = mlc_th_scalar("step", T_I64, 0, 0, 0);
  c->in[2] = mlc_th_scalar("", T_F32, 0, 0, 0);
  c->in[3] = mlc_th_scalar("len", T_I64, 8, 1, 0);
  c->nin = 4;
  c->out[0] = mlc_th_output("y", T_F32, 4, D(1, 1, 5, 2));
  c->out[0].sym = 2;
  c->nout = 1;
  mlc_th_expect_run_error(c, "computed dimension");
  c->in[1].v[0] = 4;
  c->in[3].init = 0;
  c->in[3].v[0] = 33; /* longer than the signal */
  mlc_th_expect_run_error(c, "computed dimension");
  free(c);

  c = mlc_th_new_case("err_window_runtime_size", "HammingWindow", 17);
  c->in[0] = mlc_th_scalar("size", T_I64, -2, 0, 0);
  c->nin = 1;
  c->out[0] = mlc_th_output("y", T_F32, 1, D(2));
  c->out[0].sym = 1;
  c->nout = 1;
  mlc_th_expect_run_error(c, "computed dimension");
  free(c);

  c = mlc_th_new_case("err_dft_runtime_length", "DFT", 17);
  c->in[0] = mlc_th_tensor("x", T_F32, 3, D(1, 4, 1), 0, 1);
  c->in[1] = mlc_th_scalar("n", T_I64, 0, 0, 0);
  c->nin = 2;
  c->out[0] = mlc_th_output("y", T_F32, 3, D(1, 4, 2));
  c->out[0].sym = 2;
  c->nout = 1;
  mlc_th_expect_run_error(c, "computed dimension");
  free(c);
}

/* ---- inference rules -------------------------------------------------------------------------- */

static void t_infer(void) {
  mlc_module *m = NULL;
  mlc_func *f = NULL;
  mlc_value *x = NULL, *s = NULL, *y = NULL, *outs[MLC_MAX_OUTS];
  int nouts = 0;
  CU_ASSERT_PTR_NULL_FATAL(mlc_module_create(mlc_allocator_default(), &m));
  CU_ASSERT_PTR_NULL(mlc_func_create(m, "main", &f));
  mlc_type xt = {MLC_DTYPE_F32, 3, D(2, 8, 1)}, st = {MLC_DTYPE_F32, 3, D(1, 64, 1)};
  CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "x", &xt, &x));
  CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "s", &st, &s));
  /* dft: onesided bins; a wrong bins attribute is rejected */
  mlc_attr da[3] = {mlc_attr_int("axis", 1), mlc_attr_int("onesided", 1), mlc_attr_int("length", 8)};
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_DFT, &x, 1, da, 3, NULL, &y));
  if (y) CU_ASSERT(y->type.rank == 3 && y->type.dims[1] == 5 && y->type.dims[2] == 2);
  mlc_attr db[2] = {mlc_attr_int("axis", 1), mlc_attr_int("bins", 7)};
  mlc_status e = mlc_graph_emit1(f, MLC_OP_DFT, &x, 1, db, 2, NULL, &y);
  CU_ASSERT(e && strstr(mlc_status_message(e), "bins"));
  mlc_status_free(e);
  mlc_attr dc[2] = {mlc_attr_int("axis", 2), mlc_attr_int("length", 0)};
  e = mlc_graph_emit1(f, MLC_OP_DFT, &x, 1, dc, 2, NULL, &y);
  CU_ASSERT_PTR_NOT_NULL(e);
  mlc_status_free(e);
  /* stft: static frames and bins */
  mlc_attr sa[2] = {mlc_attr_int("step", 8), mlc_attr_int("length", 16)};
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_STFT, &s, 1, sa, 2, NULL, &y));
  if (y) CU_ASSERT(y->type.rank == 4 && y->type.dims[1] == 7 && y->type.dims[2] == 9 && y->type.dims[3] == 2);
  mlc_attr sb[1] = {mlc_attr_int("step", 8)}; /* length at run time needs the params */
  e = mlc_graph_emit1(f, MLC_OP_STFT, &s, 1, sb, 1, NULL, &y);
  CU_ASSERT(e && strstr(mlc_status_message(e), "define_dims"));
  mlc_status_free(e);
  /* det drops the matrix dims */
  mlc_value *mtx = NULL;
  mlc_type mt = {MLC_DTYPE_F64, 3, D(3, 4, 4)};
  CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "m", &mt, &mtx));
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_DET, &mtx, 1, NULL, 0, NULL, &y));
  if (y) CU_ASSERT(y->type.rank == 1 && y->type.dims[0] == 3 && y->type.dtype == MLC_DTYPE_F64);
  /* unique: four outputs */
  mlc_value *cnt = NULL, *tok = NULL, *ua[2];
  mlc_attr us = mlc_attr_int("sorted", 1);
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_UNIQUE_COUNT, &x, 1, &us, 1, NULL, &cnt));
  int64_t u = 0;
  CU_ASSERT_PTR_NULL(mlc_module_fresh_sym(m, &u));
  mlc_attr dd[2] = {mlc_attr_ints("dims", &u, 1), mlc_attr_int("offset", 0)};
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_DEFINE_DIMS, &cnt, 1, dd, 2, NULL, &tok));
  ua[0] = x, ua[1] = tok;
  mlc_attr uc[2] = {us, mlc_attr_int("count", u)};
  CU_ASSERT_PTR_NULL(mlc_graph_emit(f, MLC_OP_UNIQUE, ua, 2, uc, 2, NULL, outs, &nouts));
  CU_ASSERT_EQUAL(nouts, 4);
  if (nouts == 4) {
    CU_ASSERT(outs[0]->type.rank == 3 && outs[0]->type.dims[1] == u && outs[0]->type.dtype == MLC_DTYPE_F32);
    CU_ASSERT(outs[2]->type.rank == 1 && outs[2]->type.dims[0] == 8 && outs[2]->type.dtype == MLC_DTYPE_I64);
    CU_ASSERT(outs[3]->type.dims[0] == u);
  }
  /* grid_sample needs grid [N, H, W, 2]; max_unpool needs 2k pads */
  mlc_value *img = NULL, *grid = NULL, *ga[2];
  mlc_type it = {MLC_DTYPE_F32, 4, D(1, 2, 4, 4)}, gt = {MLC_DTYPE_F32, 4, D(1, 3, 3, 3)};
  CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "img", &it, &img));
  CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "grid", &gt, &grid));
  ga[0] = img, ga[1] = grid;
  e = mlc_graph_emit1(f, MLC_OP_GRID_SAMPLE, ga, 2, NULL, 0, NULL, &y);
  CU_ASSERT(e && strstr(mlc_status_message(e), "grid"));
  mlc_status_free(e);
  mlc_value *idx = NULL;
  mlc_type ixt = {MLC_DTYPE_I64, 4, D(1, 2, 4, 4)};
  CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "idx", &ixt, &idx));
  ga[1] = idx;
  mlc_attr ma[4] = {mlc_attr_ints("kernel", D(2, 2), 2), mlc_attr_ints("strides", D(2, 2), 2),
                    mlc_attr_ints("pads", D(0, 0), 2), mlc_attr_ints("shape", D(1, 2, 8, 8), 4)};
  e = mlc_graph_emit1(f, MLC_OP_MAX_UNPOOL, ga, 2, ma, 4, NULL, &y);
  CU_ASSERT(e && strstr(mlc_status_message(e), "pads"));
  mlc_status_free(e);
  ma[2] = mlc_attr_ints("pads", D(0, 0, 0, 0), 4);
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_MAX_UNPOOL, ga, 2, ma, 4, NULL, &y));
  if (y) CU_ASSERT(y->type.rank == 4 && y->type.dims[3] == 8);
  /* signal_dims of an stft: int64 [4] */
  mlc_value *k8 = NULL, *sd = NULL, *sda[3];
  CU_ASSERT_PTR_NULL(mlc_module_add_const(m, "k8", &(mlc_type){MLC_DTYPE_I64, 0, NULL}, D(8), 8, &k8));
  sda[0] = s, sda[1] = k8, sda[2] = k8;
  mlc_attr ka = mlc_attr_str("kind", "stft");
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_SIGNAL_DIMS, sda, 3, &ka, 1, NULL, &sd));
  if (sd) CU_ASSERT(sd->type.dtype == MLC_DTYPE_I64 && sd->type.rank == 1 && sd->type.dims[0] == 4);
  mlc_module_destroy(m);
}

/* ---- registration -------------------------------------------------------------------------- */

static void register_suites(void) {
  static const CU_TestInfo ops[] = {
      {"dft", t_dft},
      {"stft", t_stft},
      {"windows", t_windows},
      {"mel_weight_matrix", t_mel},
      {"grid_sample", t_grid_sample},
      {"roi_align", t_roi_align},
      {"det", t_det},
      {"max_unpool", t_max_unpool},
      {"non_max_suppression", t_nms},
      {"unique", t_unique},
      {"errors", t_errors},
      CU_TEST_INFO_NULL,
  };
  static const CU_TestInfo graph[] = {
      {"infer", t_infer},
      CU_TEST_INFO_NULL,
  };
  mlc_test_add_suite("signal_graph", graph);
  CU_pSuite su = CU_add_suite("signal_ops", mlc_th_tmp_init, mlc_th_tmp_clean);
  for (const CU_TestInfo *t = ops; su && t->pName; t++) CU_add_test(su, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  mlc_th_rng = 0x243f6a8885a308d3ull; /* this program's data */
  return mlc_test_main("test_signal_ops", fns);
}
