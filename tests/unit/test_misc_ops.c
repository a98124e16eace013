/*
** test_misc_ops.c: CUnit suites for the "other math, losses and
** normalization" ops, end to end and checked differentially.
**
** Each case is a one-node ONNX model written here (a small protobuf
** encoder below: ModelProto with one NodeProto, graph inputs, initializers
** for the inputs that must be constants, outputs), compiled with
** mlc_compile_file into a model .so, loaded through mlc/mlc_runtime.h, run
** on seeded random data and compared with a naive C reference computed in
** double precision: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
** (reductions, weights, ignore_index, N-d), Trilu (constant and run-time k),
** CumSum (exclusive, reverse, constant and run-time axis), Hardmax (old and
** new axis semantics), OneHot (constant and run-time depth), EyeLike, TopK
** (largest/smallest, ties, constant and run-time K), Einsum (matmul,
** diagonal, transpose, sums, implicit output, broadcast ellipsis),
** BatchNormalization in training mode, LRN, MeanVarianceNormalization and
** ReverseSequence.  Floats compare with rtol 1e-4 and atol 1e-5 (float64:
** 1e-9), integers exactly.  A second suite checks the errors: bad equations,
** bad reductions and out-of-range K name the node and the op, and the
** inference rules reject malformed calls.
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

/* ---- building cases -------------------------------------------------------------- */

#define D(...) (const int64_t[]){__VA_ARGS__}

/* Strides of a shape (row-major). */
static void strides(const int64_t *dims, int rank, int64_t *st) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) st[d] = s, s *= dims[d];
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---------------------------- */

/* The loss of log-probabilities lp [N, C, D] at targets t [N, D]. */
static void ref_nll(const double *lp, const double *t, const double *w, int64_t N, int64_t C, int64_t Dd,
                    const char *red, int has_ii, int64_t ii, double *out) {
  double sum = 0, wsum = 0;
  for (int64_t i = 0; i < N; i++)
    for (int64_t d = 0; d < Dd; d++) {
      int64_t c = (int64_t)t[i * Dd + d];
      double wt = has_ii && c == ii ? 0 : w ? w[c] : 1;
      double l = wt == 0 ? 0 : -lp[(i * C + c) * Dd + d] * wt;
      if (!strcmp(red, "none")) out[i * Dd + d] = l;
      sum += l;
      wsum += wt;
    }
  if (!strcmp(red, "sum")) out[0] = sum;
  if (!strcmp(red, "mean")) out[0] = w || has_ii ? sum / wsum : sum / (double)(N * Dd);
}

static void log_softmax1(const double *x, int64_t N, int64_t C, int64_t Dd, double *out) {
  for (int64_t i = 0; i < N; i++)
    for (int64_t d = 0; d < Dd; d++) {
      double mx = -INFINITY, s = 0;
      for (int64_t c = 0; c < C; c++) mx = fmax(mx, x[(i * C + c) * Dd + d]);
      for (int64_t c = 0; c < C; c++) s += exp(x[(i * C + c) * Dd + d] - mx);
      for (int64_t c = 0; c < C; c++) out[(i * C + c) * Dd + d] = x[(i * C + c) * Dd + d] - mx - log(s);
    }
}

/* One loss case: input [N, C, spatial...], |weight|, |red|, ignore_index. */
static void loss_case(const char *name, int sce, int rank, const int64_t *dims, int weight, const char *red,
                      int has_ii, int64_t ii, int log_prob) {
  mcase *c = mlc_th_new_case(name, sce ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss", 13);
  int64_t N = dims[0], C = dims[1], Dd = 1, td[MAXR];
  for (int i = 2; i < rank; i++) Dd *= dims[i];
  td[0] = N;
  for (int i = 2; i < rank; i++) td[i - 1] = dims[i];
  c->in[0] = mlc_th_tensor("x", T_F32, rank, dims, -2, 2);
  c->in[1] = mlc_th_tensor("t", T_I64, rank - 1, td, 0, (double)C);
  if (has_ii) /* make some targets ignored */
    for (int64_t i = 0; i < N * Dd; i += 3) c->in[1].v[i] = (double)ii;
  c->nin = 2;
  if (weight) c->in[c->nin++] = mlc_th_tensor("w", T_F32, 1, &C, 0.1, 2);
  c->at[c->nattr++] = mlc_th_astr("reduction", red);
  if (has_ii) c->at[c->nattr++] = mlc_th_aint("ignore_index", ii);
  int none = !strcmp(red, "none");
  c->out[0] = mlc_th_output("loss", T_F32, none ? rank - 1 : 0, td);
  c->nout = 1;
  static double lp[MAXEL];
  if (sce) log_softmax1(c->in[0].v, N, C, Dd, lp);
  else memcpy(lp, c->in[0].v, sizeof(double) * (size_t)(N * C * Dd));
  ref_nll(lp, c->in[1].v, weight ? c->in[2].v : NULL, N, C, Dd, red, has_ii, ii, c->out[0].v);
  if (log_prob) {
    c->out[1] = mlc_th_output("log_prob", T_F32, rank, dims);
    memcpy(c->out[1].v, lp, sizeof(double) * (size_t)(N * C * Dd));
    c->nout = 2;
  }
  mlc_th_run_case(c);
  free(c);
}

static void t_nll(void) {
  loss_case("nll_nc_none", 0, 2, D(3, 5), 0, "none", 0, 0, 0);
  loss_case("nll_nc_mean", 0, 2, D(4, 3), 0, "mean", 0, 0, 0);
  loss_case("nll_ncd_sum_w", 0, 3, D(2, 4, 3), 1, "sum", 0, 0, 0);
  loss_case("nll_ncdd_mean_w_ii", 0, 4, D(2, 3, 2, 3), 1, "mean", 1, 1, 0);
  loss_case("nll_ncd_mean_negii", 0, 3, D(3, 4, 2), 0, "mean", 1, -1, 0);
  loss_case("nll_ncd_none_w_highii", 0, 3, D(2, 5, 3), 1, "none", 1, 10, 0);
}

static void t_sce(void) {
  loss_case("sce_nc_mean", 1, 2, D(3, 5), 0, "mean", 0, 0, 0);
  loss_case("sce_nc_none_logprob", 1, 2, D(3, 5), 0, "none", 0, 0, 1);
  loss_case("sce_ncd_mean_w_ii_logprob", 1, 3, D(2, 4, 3), 1, "mean", 1, 2, 1);
  loss_case("sce_ncddd_sum_negii", 1, 5, D(2, 3, 2, 2, 2), 0, "sum", 1, -5, 0);
}

/* ---- Trilu, CumSum ------------------------------------------------------------------ */

static void trilu_case(const char *name, int upper, int rank, const int64_t *dims, int has_k, int64_t k,
                       int k_const) {
  mcase *c = mlc_th_new_case(name, "Trilu", 14);
  c->in[0] = mlc_th_tensor("x", T_I64, rank, dims, -9, 9);
  c->nin = 1;
  if (has_k) {
    c->in[1] = mlc_th_tensor("k", T_I64, 0, NULL, 0, 0);
    c->in[1].v[0] = (double)k;
    c->in[1].init = k_const;
    c->nin = 2;
  }
  c->at[c->nattr++] = mlc_th_aint("upper", upper);
  c->out[0] = mlc_th_output("y", T_I64, rank, dims);
  c->nout = 1;
  int64_t R = dims[rank - 2], C = dims[rank - 1];
  for (int64_t e = 0; e < mlc_th_numel_of(&c->in[0]); e++) {
    int64_t j = e % C, i = (e / C) % R;
    int keep = upper ? j - i >= k : j - i <= k;
    c->out[0].v[e] = keep ? c->in[0].v[e] : 0;
  }
  mlc_th_run_case(c);
  free(c);
}

static void t_trilu(void) {
  trilu_case("triu_default", 1, 2, D(4, 5), 0, 0, 0);
  trilu_case("tril_default", 0, 2, D(4, 5), 0, 0, 0);
  trilu_case("triu_k_runtime", 1, 3, D(2, 3, 4), 1, -1, 0);
  trilu_case("tril_k_runtime", 0, 2, D(5, 3), 1, 2, 0);
  trilu_case("triu_k_const", 1, 2, D(3, 6), 1, 2, 1);
  trilu_case("tril_k_out", 0, 2, D(3, 4), 1, -7, 0);
  trilu_case("triu_empty", 1, 2, D(0, 4), 1, 1, 0);
}

static void cumsum_case(const char *name, int type, int rank, const int64_t *dims, int64_t axis, int axis_const,
                        int excl, int rev) {
  mcase *c = mlc_th_new_case(name, "CumSum", 14);
  c->in[0] = mlc_th_tensor("x", type, rank, dims, -4, 5);
  c->in[1] = mlc_th_tensor("axis", T_I32, 0, NULL, 0, 0);
  c->in[1].v[0] = (double)axis;
  c->in[1].init = axis_const;
  c->nin = 2;
  if (excl) c->at[c->nattr++] = mlc_th_aint("exclusive", 1);
  if (rev) c->at[c->nattr++] = mlc_th_aint("reverse", 1);
  c->out[0] = mlc_th_output("y", type, rank, dims);
  c->nout = 1;
  int64_t st[MAXR], a = axis < 0 ? axis + rank : axis;
  strides(dims, rank, st);
  for (int64_t e = 0; e < mlc_th_numel_of(&c->in[0]); e++) {
    int64_t i = (e / st[a]) % dims[a];
    double acc = 0;
    for (int64_t t = 0; t < dims[a]; t++) {
      int take = rev ? (excl ? t > i : t >= i) : (excl ? t < i : t <= i);
      if (take) acc += c->in[0].v[e + (t - i) * st[a]];
    }
    c->out[0].v[e] = acc;
  }
  mlc_th_run_case(c);
  free(c);
}

static void t_cumsum(void) {
  cumsum_case("cumsum_1d", T_F64, 1, D(7), 0, 1, 0, 0);
  cumsum_case("cumsum_2d_axis1_excl", T_F32, 2, D(3, 5), 1, 1, 1, 0);
  cumsum_case("cumsum_3d_axis0_rev", T_I32, 3, D(4, 2, 3), 0, 1, 0, 1);
  cumsum_case("cumsum_3d_rev_excl_i64", T_I64, 3, D(2, 5, 3), 1, 1, 1, 1);
  cumsum_case("cumsum_runtime_axis", T_F32, 3, D(2, 5, 3), 1, 0, 0, 0);
  cumsum_case("cumsum_runtime_neg_axis", T_F32, 3, D(3, 2, 6), -1, 0, 1, 1);
}

/* ---- Hardmax, OneHot, EyeLike --------------------------------------------------------- */

static void hardmax_case(const char *name, int opset, int rank, const int64_t *dims, int64_t axis, int ties) {
  mcase *c = mlc_th_new_case(name, "Hardmax", opset);
  c->in[0] = mlc_th_tensor("x", T_F32, rank, dims, -3, 3);
  if (ties)
    for (int64_t e = 0; e < mlc_th_numel_of(&c->in[0]); e++) c->in[0].v[e] = floor(c->in[0].v[e]);
  c->nin = 1;
  c->at[c->nattr++] = mlc_th_aint("axis", axis);
  c->out[0] = mlc_th_output("y", T_F32, rank, dims);
  c->nout = 1;
  int64_t a = axis < 0 ? axis + rank : axis, outer = 1, inner = 1;
  if (opset < 13) { /* coerced to 2-D at axis: the max over dims axis.. */
    for (int d = 0; d < a; d++) outer *= dims[d];
    inner = mlc_th_numel_of(&c->in[0]) / outer;
    for (int64_t o = 0; o < outer; o++) {
      int64_t best = 0;
      for (int64_t i = 1; i < inner; i++)
        if (c->in[0].v[o * inner + i] > c->in[0].v[o * inner + best]) best = i;
      for (int64_t i = 0; i < inner; i++) c->out[0].v[o * inner + i] = i == best;
    }
  } else {
    int64_t st[MAXR];
    strides(dims, rank, st);
    for (int64_t e = 0; e < mlc_th_numel_of(&c->in[0]); e++) {
      int64_t i = (e / st[a]) % dims[a], base = e - i * st[a], best = 0;
      for (int64_t t = 1; t < dims[a]; t++)
        if (c->in[0].v[base + t * st[a]] > c->in[0].v[base + best * st[a]]) best = t;
      c->out[0].v[e] = i == best;
    }
  }
  mlc_th_run_case(c);
  free(c);
}

static void t_hardmax(void) {
  hardmax_case("hardmax13_last", 13, 3, D(2, 3, 4), -1, 0);
  hardmax_case("hardmax13_axis0_ties", 13, 3, D(3, 2, 4), 0, 1);
  hardmax_case("hardmax11_axis1", 11, 3, D(2, 3, 4), 1, 1);
  hardmax_case("hardmax1_axis2", 1, 3, D(2, 3, 4), 2, 0);
}

static void onehot_case(const char *name, int itype, int rank, const int64_t *idims, int64_t depth, int depth_const,
                        int64_t axis, int vtype) {
  mcase *c = mlc_th_new_case(name, "OneHot", 11);
  c->in[0] = mlc_th_tensor("indices", itype, rank, idims, -(double)depth - 2, (double)depth + 2);
  c->in[1] = mlc_th_tensor("depth", T_F32, 0, NULL, 0, 0);
  c->in[1].v[0] = (double)depth;
  c->in[1].init = depth_const;
  c->in[2] = mlc_th_tensor("values", vtype, 1, D(2), 0, 0);
  c->in[2].v[0] = -3;
  c->in[2].v[1] = 7;
  c->nin = 3;
  c->at[c->nattr++] = mlc_th_aint("axis", axis);
  int64_t a = axis < 0 ? axis + rank + 1 : axis, od[MAXR], st[MAXR];
  for (int d = 0, j = 0; d <= rank; d++) od[d] = d == a ? depth : idims[j++];
  c->out[0] = mlc_th_output("y", vtype, rank + 1, od);
  c->nout = 1;
  strides(od, rank + 1, st);
  for (int64_t e = 0; e < mlc_th_numel_of(&c->out[0]); e++) {
    int64_t p = (e / st[a]) % depth, outer = e / (st[a] * depth), inner = e % st[a];
    int64_t ix = (int64_t)c->in[0].v[outer * st[a] + inner];
    if (ix < 0) ix += depth;
    c->out[0].v[e] = ix == p ? 7 : -3;
  }
  mlc_th_run_case(c);
  free(c);
}

static void t_onehot(void) {
  onehot_case("onehot_const_last", T_I64, 2, D(2, 3), 5, 1, -1, T_F32);
  onehot_case("onehot_const_axis0_float", T_F32, 1, D(6), 4, 1, 0, T_I32);
  onehot_case("onehot_runtime_axis1", T_I32, 2, D(3, 2), 6, 0, 1, T_F32);
  onehot_case("onehot_runtime_neg_axis", T_I64, 2, D(2, 4), 3, 0, -2, T_I64);
}

static void eyelike_case(const char *name, int64_t rows, int64_t cols, int64_t k, int dtype) {
  mcase *c = mlc_th_new_case(name, "EyeLike", 9);
  c->in[0] = mlc_th_tensor("x", T_I32, 2, D(rows, cols), 0, 9);
  c->nin = 1;
  if (k) c->at[c->nattr++] = mlc_th_aint("k", k);
  if (dtype) c->at[c->nattr++] = mlc_th_aint("dtype", dtype);
  c->out[0] = mlc_th_output("y", dtype ? dtype : T_I32, 2, D(rows, cols));
  c->nout = 1;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) c->out[0].v[i * cols + j] = j - i == k;
  mlc_th_run_case(c);
  free(c);
}

static void t_eyelike(void) {
  eyelike_case("eyelike_square", 4, 4, 0, 0);
  eyelike_case("eyelike_k_f64", 3, 5, 2, T_F64);
  eyelike_case("eyelike_neg_k_bool", 4, 3, -1, T_BOOL);
}

/* ---- TopK ------------------------------------------------------------------------------- */

static void topk_case(const char *name, int opset, int rank, const int64_t *dims, int64_t axis, int64_t k,
                      int k_const, int largest, int ties) {
  mcase *c = mlc_th_new_case(name, "TopK", opset);
  c->in[0] = mlc_th_tensor("x", T_F32, rank, dims, -4, 4);
  if (ties)
    for (int64_t e = 0; e < mlc_th_numel_of(&c->in[0]); e++) c->in[0].v[e] = floor(c->in[0].v[e]);
  c->nin = 1;
  if (opset >= 10) {
    c->in[1] = mlc_th_tensor("k", T_I64, 1, D(1), 0, 0);
    c->in[1].v[0] = (double)k;
    c->in[1].init = k_const;
    c->nin = 2;
  } else {
    c->at[c->nattr++] = mlc_th_aint("k", k);
  }
  c->at[c->nattr++] = mlc_th_aint("axis", axis);
  if (opset >= 11 && !largest) c->at[c->nattr++] = mlc_th_aint("largest", 0);
  int64_t a = axis < 0 ? axis + rank : axis, od[MAXR], st[MAXR], ost[MAXR];
  memcpy(od, dims, sizeof(int64_t) * (size_t)rank);
  od[a] = k;
  c->out[0] = mlc_th_output("values", T_F32, rank, od);
  c->out[1] = mlc_th_output("indices", T_I64, rank, od);
  c->nout = 2;
  strides(dims, rank, st);
  strides(od, rank, ost);
  for (int64_t e = 0; e < mlc_th_numel_of(&c->out[0]); e++) {
    int64_t r = (e / ost[a]) % k, rest = e - r * ost[a];
    /* the input line: same indices except along the axis */
    int64_t base = 0, rem = rest;
    for (int d = 0; d < rank; d++) {
      int64_t i = rem / ost[d];
      rem %= ost[d];
      if (d != a) base += i * st[d];
    }
    int used[64] = {0};
    int64_t pick = -1;
    for (int64_t q = 0; q <= r; q++) { /* selection: the r-th best, ties by lower index */
      pick = -1;
      for (int64_t t = 0; t < dims[a]; t++) {
        if (used[t]) continue;
        double v = c->in[0].v[base + t * st[a]];
        if (pick < 0) pick = t;
        else {
          double b = c->in[0].v[base + pick * st[a]];
          if (largest ? v > b : v < b) pick = t;
        }
      }
      used[pick] = 1;
    }
    c->out[0].v[e] = c->in[0].v[base + pick * st[a]];
    c->out[1].v[e] = (double)pick;
  }
  mlc_th_run_case(c);
  free(c);
}

static void t_topk(void) {
  topk_case("topk1_attr_k", 1, 2, D(3, 6), 1, 3, 1, 1, 0);
  topk_case("topk10_const_k_axis0", 10, 3, D(5, 2, 3), 0, 2, 1, 1, 0);
  topk_case("topk11_smallest_ties", 11, 2, D(4, 7), -1, 4, 1, 0, 1);
  topk_case("topk11_largest_ties", 11, 2, D(3, 9), 1, 9, 1, 1, 1);
  topk_case("topk11_runtime_k", 11, 2, D(3, 5), 1, 2, 0, 1, 0);
  topk_case("topk11_runtime_k_middle", 11, 3, D(2, 6, 3), 1, 4, 0, 0, 1);
}

/* ---- Einsum ----------------------------------------------------------------------------- */

static int lbl(char ch) { return ch >= 'a' && ch <= 'z' ? ch - 'a' : 26 + ch - 'A'; }

/* Reference of an explicit letters-only equation over |n| inputs. */
static void ref_einsum(const char *eq, const ten *in, int n, ten *out) {
  int64_t ext[52] = {0};
  int used[52] = {0}, labels[52], nl = 0;
  const char *terms[5], *p = eq;
  for (int k = 0; k < n; k++) {
    terms[k] = p;
    for (int d = 0; *p != ',' && *p != '-'; p++, d++) {
      int l = lbl(*p);
      if (in[k].dims[d] != 1 || !used[l]) ext[l] = in[k].dims[d] > ext[l] ? in[k].dims[d] : ext[l];
      if (!used[l]) labels[nl++] = l, used[l] = 1;
    }
    p++;
  }
  const char *o = strstr(eq, "->") + 2;
  int64_t ost[MAXR], on = (int64_t)strlen(o);
  strides(out->dims, out->rank, ost);
  memset(out->v, 0, sizeof out->v);
  int64_t val[52] = {0}, total = 1;
  for (int i = 0; i < nl; i++) total *= ext[labels[i]];
  for (int64_t it = 0; it < total; it++) {
    int64_t r = it;
    for (int i = nl - 1; i >= 0; i--) val[labels[i]] = r % ext[labels[i]], r /= ext[labels[i]];
    double prod = 1;
    for (int k = 0; k < n; k++) {
      int64_t st[MAXR], off = 0;
      strides(in[k].dims, in[k].rank, st);
      for (int d = 0; d < in[k].rank; d++) off += (in[k].dims[d] == 1 ? 0 : val[lbl(terms[k][d])]) * st[d];
      prod *= in[k].v[off];
    }
    int64_t off = 0;
    for (int d = 0; d < on; d++) off += val[lbl(o[d])] * ost[d];
    out->v[off] += prod;
  }
}

static void einsum_case(const char *name, const char *eq, const char *explicit_eq, int n, const int64_t *const *dims,
                        const int *ranks, int orank, const int64_t *odims) {
  mcase *c = mlc_th_new_case(name, "Einsum", 12);
  static const char *const names[] = {"a", "b", "c"};
  for (int k = 0; k < n; k++) c->in[k] = mlc_th_tensor(names[k], T_F64, ranks[k], dims[k], -2, 2);
  c->nin = n;
  c->at[c->nattr++] = mlc_th_astr("equation", eq);
  c->out[0] = mlc_th_output("y", T_F64, orank, odims);
  c->nout = 1;
  ref_einsum(explicit_eq, c->in, n, &c->out[0]);
  mlc_th_run_case(c);
  free(c);
}

static void t_einsum(void) {
  einsum_case("einsum_batch_matmul", "bij, bjk -> bik", "bij,bjk->bik", 2,
              (const int64_t *const[]){D(3, 2, 4), D(3, 4, 5)}, (const int[]){3, 3}, 3, D(3, 2, 5));
  einsum_case("einsum_diagonal", "...ii->...i", "Aii->Ai", 1, (const int64_t *const[]){D(2, 4, 4)},
              (const int[]){3}, 2, D(2, 4));
  einsum_case("einsum_transpose", "ij->ji", "ij->ji", 1, (const int64_t *const[]){D(3, 5)}, (const int[]){2}, 2,
              D(5, 3));
  einsum_case("einsum_sum_all", "ij->", "ij->", 1, (const int64_t *const[]){D(3, 5)}, (const int[]){2}, 0, D(1));
  einsum_case("einsum_implicit", "kj,ji", "kj,ji->ik", 2, (const int64_t *const[]){D(3, 4), D(4, 2)},
              (const int[]){2, 2}, 2, D(2, 3));
  einsum_case("einsum_inner", "i,i", "i,i->", 2, (const int64_t *const[]){D(6), D(6)}, (const int[]){1, 1}, 0, D(1));
  einsum_case("einsum_ellipsis_bcast", "...ij,...jk->...ik", "BCij,Cjk->BCik", 2,
              (const int64_t *const[]){D(2, 1, 3, 4), D(3, 4, 2)}, (const int[]){4, 3}, 4, D(2, 3, 3, 2));
  einsum_case("einsum_three", "ab,bc,cd->ad", "ab,bc,cd->ad", 3,
              (const int64_t *const[]){D(2, 3), D(3, 4), D(4, 2)}, (const int[]){2, 2, 2}, 2, D(2, 2));
}

/* ---- BatchNormalization (training), LRN, MVN, ReverseSequence ------------------------------ */

static void t_batchnorm_training(void) {
  int64_t N = 2, C = 3, S = 4;
  mcase *c = mlc_th_new_case("bn_training", "BatchNormalization", 15);
  c->in[0] = mlc_th_tensor("x", T_F32, 4, D(N, C, 2, 2), -2, 2);
  c->in[1] = mlc_th_tensor("s", T_F32, 1, &C, 0.5, 1.5);
  c->in[2] = mlc_th_tensor("b", T_F32, 1, &C, -1, 1);
  c->in[3] = mlc_th_tensor("mean", T_F32, 1, &C, -1, 1);
  c->in[4] = mlc_th_tensor("var", T_F32, 1, &C, 0.5, 1.5);
  c->nin = 5;
  double eps = 1e-2, mom = 0.8;
  c->at[c->nattr++] = mlc_th_aint("training_mode", 1);
  c->at[c->nattr++] = mlc_th_aflt("epsilon", eps);
  c->at[c->nattr++] = mlc_th_aflt("momentum", mom);
  c->out[0] = mlc_th_output("y", T_F32, 4, D(N, C, 2, 2));
  c->out[1] = mlc_th_output("rm", T_F32, 1, &C);
  c->out[2] = mlc_th_output("rv", T_F32, 1, &C);
  c->nout = 3;
  eps = (float)eps, mom = (float)mom;
  for (int64_t ch = 0; ch < C; ch++) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < N; i++)
      for (int64_t s = 0; s < S; s++) m += c->in[0].v[(i * C + ch) * S + s];
    m /= (double)(N * S);
    for (int64_t i = 0; i < N; i++)
      for (int64_t s = 0; s < S; s++) v += pow(c->in[0].v[(i * C + ch) * S + s] - m, 2);
    v /= (double)(N * S);
    for (int64_t i = 0; i < N; i++)
      for (int64_t s = 0; s < S; s++) {
        int64_t e = (i * C + ch) * S + s;
        c->out[0].v[e] = (c->in[0].v[e] - m) / sqrt(v + eps) * c->in[1].v[ch] + c->in[2].v[ch];
      }
    c->out[1].v[ch] = c->in[3].v[ch] * mom + m * (1 - mom);
    c->out[2].v[ch] = c->in[4].v[ch] * mom + v * (1 - mom);
  }
  mlc_th_run_case(c);
  free(c);
}

static void lrn_case(const char *name, int rank, const int64_t *dims, int64_t size) {
  mcase *c = mlc_th_new_case(name, "LRN", 13);
  double alpha = 2e-3, beta = 0.6, bias = 1.5;
  c->in[0] = mlc_th_tensor("x", T_F32, rank, dims, -3, 3);
  c->nin = 1;
  c->at[c->nattr++] = mlc_th_aint("size", size);
  c->at[c->nattr++] = mlc_th_aflt("alpha", alpha);
  c->at[c->nattr++] = mlc_th_aflt("beta", beta);
  c->at[c->nattr++] = mlc_th_aflt("bias", bias);
  c->out[0] = mlc_th_output("y", T_F32, rank, dims);
  c->nout = 1;
  alpha = (float)alpha, beta = (float)beta, bias = (float)bias;
  int64_t st[MAXR], C = dims[1], lo = (size - 1) / 2, hi = size - 1 - lo;
  strides(dims, rank, st);
  for (int64_t e = 0; e < mlc_th_numel_of(&c->in[0]); e++) {
    int64_t ch = (e / st[1]) % C;
    double sq = 0;
    for (int64_t q = ch - lo; q <= ch + hi; q++)
      if (q >= 0 && q < C) sq += pow(c->in[0].v[e + (q - ch) * st[1]], 2);
    c->out[0].v[e] = c->in[0].v[e] / pow(bias + alpha / (double)size * sq, beta);
  }
  mlc_th_run_case(c);
  free(c);
}

static void t_lrn(void) {
  lrn_case("lrn_4d_size3", 4, D(2, 5, 3, 2), 3);
  lrn_case("lrn_3d_size4", 3, D(2, 6, 3), 4);
}

static void t_mvn(void) {
  mcase *c = mlc_th_new_case("mvn_axes_0_2", "MeanVarianceNormalization", 13);
  int64_t dims[3] = {3, 2, 4}, st[3];
  c->in[0] = mlc_th_tensor("x", T_F32, 3, dims, -2, 2);
  c->nin = 1;
  c->at[0].name = "axes", c->at[0].kind = 'I', c->at[0].n = 2, c->at[0].ints[0] = 0, c->at[0].ints[1] = -1;
  c->nattr = 1;
  c->out[0] = mlc_th_output("y", T_F32, 3, dims);
  c->nout = 1;
  strides(dims, 3, st);
  for (int64_t ch = 0; ch < 2; ch++) {
    double m = 0, m2 = 0;
    for (int64_t i = 0; i < 3; i++)
      for (int64_t j = 0; j < 4; j++) {
        double v = c->in[0].v[i * st[0] + ch * st[1] + j];
        m += v, m2 += v * v;
      }
    m /= 12, m2 /= 12;
    for (int64_t i = 0; i < 3; i++)
      for (int64_t j = 0; j < 4; j++) {
        int64_t e = i * st[0] + ch * st[1] + j;
        c->out[0].v[e] = (c->in[0].v[e] - m) / (sqrt(m2 - m * m) + 1e-9);
      }
  }
  mlc_th_run_case(c);
  free(c);
}

static void revseq_case(const char *name, int64_t batch_axis, int64_t time_axis, int rank, const int64_t *dims) {
  mcase *c = mlc_th_new_case(name, "ReverseSequence", 10);
  c->in[0] = mlc_th_tensor("x", T_F32, rank, dims, -5, 5);
  int64_t B = dims[batch_axis], T = dims[time_axis], st[MAXR];
  c->in[1] = mlc_th_tensor("lens", T_I64, 1, &B, 1, (double)T + 1);
  c->nin = 2;
  c->at[c->nattr++] = mlc_th_aint("batch_axis", batch_axis);
  c->at[c->nattr++] = mlc_th_aint("time_axis", time_axis);
  c->out[0] = mlc_th_output("y", T_F32, rank, dims);
  c->nout = 1;
  strides(dims, rank, st);
  for (int64_t e = 0; e < mlc_th_numel_of(&c->in[0]); e++) {
    int64_t b = (e / st[batch_axis]) % B, t = (e / st[time_axis]) % T, len = (int64_t)c->in[1].v[b];
    int64_t src = t < len ? len - 1 - t : t;
    c->out[0].v[e] = c->in[0].v[e + (src - t) * st[time_axis]];
  }
  mlc_th_run_case(c);
  free(c);
}

static void t_reverse_sequence(void) {
  revseq_case("revseq_time_major", 1, 0, 3, D(5, 3, 2));
  revseq_case("revseq_batch_major", 0, 1, 2, D(4, 6));
}

/* ---- errors --------------------------------------------------------------------------------- */

static void t_errors(void) {
  mcase *c = mlc_th_new_case("err_einsum_terms", "Einsum", 12);
  c->in[0] = mlc_th_tensor("a", T_F32, 2, D(2, 3), 0, 1);
  c->nin = 1;
  c->at[c->nattr++] = mlc_th_astr("equation", "ij,jk->ik");
  c->out[0] = mlc_th_output("y", T_F32, 2, D(2, 3));
  c->nout = 1;
  mlc_th_expect_error(c, MLC_INVALID_ARGUMENT, "Einsum", "node0");
  c->at[0].s = "ij->iq";
  mlc_th_expect_error(c, MLC_INVALID_ARGUMENT, "einsum", "node0");
  c->at[0].s = "i->i";
  mlc_th_expect_error(c, MLC_INVALID_ARGUMENT, "Einsum", "labels");
  free(c);

  c = mlc_th_new_case("err_nll_reduction", "NegativeLogLikelihoodLoss", 13);
  c->in[0] = mlc_th_tensor("x", T_F32, 2, D(2, 3), 0, 1);
  c->in[1] = mlc_th_tensor("t", T_I64, 1, D(2), 0, 3);
  c->nin = 2;
  c->at[c->nattr++] = mlc_th_astr("reduction", "avg");
  c->out[0] = mlc_th_output("y", T_F32, 0, NULL);
  c->nout = 1;
  mlc_th_expect_error(c, MLC_UNIMPLEMENTED, "NegativeLogLikelihoodLoss", "avg");
  c->at[0].s = "mean";
  c->in[1].dims[0] = 3; /* target does not match the batch */
  mlc_th_expect_error(c, MLC_INVALID_ARGUMENT, "NegativeLogLikelihoodLoss", "target");
  free(c);

  c = mlc_th_new_case("err_topk_k", "TopK", 11);
  c->in[0] = mlc_th_tensor("x", T_F32, 2, D(2, 3), 0, 1);
  c->in[1] = mlc_th_tensor("k", T_I64, 1, D(1), 0, 0);
  c->in[1].v[0] = 4;
  c->in[1].init = 1;
  c->nin = 2;
  c->out[0] = mlc_th_output("v", T_F32, 2, D(2, 3));
  c->out[1] = mlc_th_output("i", T_I64, 2, D(2, 3));
  c->nout = 2;
  mlc_th_expect_error(c, MLC_INVALID_ARGUMENT, "TopK", "out of range");
  free(c);

  c = mlc_th_new_case("err_bn_stats_inference", "BatchNormalization", 15);
  for (int i = 0; i < 5; i++) c->in[i] = mlc_th_tensor((const char *[]){"x", "s", "b", "m", "v"}[i], T_F32, i ? 1 : 2, i ? D(3) : D(2, 3), 0, 1);
  c->nin = 5;
  c->out[0] = mlc_th_output("y", T_F32, 2, D(2, 3));
  c->out[1] = mlc_th_output("rm", T_F32, 1, D(3));
  c->nout = 2;
  mlc_th_expect_error(c, MLC_UNIMPLEMENTED, "BatchNormalization", "training_mode");
  free(c);
}

/* Inference rules reject malformed calls of the graph ops directly. */
static void t_infer(void) {
  mlc_module *m = NULL;
  mlc_func *f = NULL;
  mlc_value *x = NULL, *y = NULL, *outs[MLC_MAX_OUTS];
  int nouts = 0;
  CU_ASSERT_PTR_NULL_FATAL(mlc_module_create(mlc_allocator_default(), &m));
  CU_ASSERT_PTR_NULL(mlc_func_create(m, "main", &f));
  mlc_type t = {MLC_DTYPE_F32, 2, (const int64_t[]){3, 4}};
  CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "x", &t, &x));
  static const struct {
    mlc_op op;
    mlc_attr a[3];
    int na;
  } bad[] = {
      {MLC_OP_EINSUM, {{"equation", MLC_ATTR_STRING, 0, 0, "ij", 0, NULL, NULL}}, 1},
      {MLC_OP_EINSUM, {{"equation", MLC_ATTR_STRING, 0, 0, "ij->ii", 0, NULL, NULL}}, 1},
      {MLC_OP_EINSUM, {{"equation", MLC_ATTR_STRING, 0, 0, "i1->i", 0, NULL, NULL}}, 1},
      {MLC_OP_CUMSUM, {{"axis", MLC_ATTR_INT, 2, 0, NULL, 0, NULL, NULL}}, 1},
      {MLC_OP_CUMSUM, {{"axis", MLC_ATTR_INT, 0, 0, NULL, 0, NULL, NULL}, {"reverse", MLC_ATTR_INT, 2, 0, NULL, 0, NULL, NULL}}, 2},
      {MLC_OP_TOPK, {{"axis", MLC_ATTR_INT, 1, 0, NULL, 0, NULL, NULL}, {"k", MLC_ATTR_INT, 5, 0, NULL, 0, NULL, NULL}}, 2},
      {MLC_OP_TOPK, {{"axis", MLC_ATTR_INT, 1, 0, NULL, 0, NULL, NULL}, {"k", MLC_ATTR_INT, -1, 0, NULL, 0, NULL, NULL}}, 2},
      {MLC_OP_TRILU, {{"upper", MLC_ATTR_INT, 3, 0, NULL, 0, NULL, NULL}}, 1},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    mlc_status s = mlc_graph_emit1(f, bad[i].op, &x, 1, bad[i].a, bad[i].na, NULL, &y);
    if (!s) fprintf(stderr, "\ninfer case %zu was accepted\n", i);
    CU_ASSERT_PTR_NOT_NULL(s);
    CU_ASSERT_EQUAL(mlc_status_code(s), MLC_INVALID_ARGUMENT);
    mlc_status_free(s);
  }
  /* topk: two outputs, values of x's dtype and int64 indices */
  mlc_attr ka[2] = {mlc_attr_int("axis", 1), mlc_attr_int("k", 2)};
  CU_ASSERT_PTR_NULL(mlc_graph_emit(f, MLC_OP_TOPK, &x, 1, ka, 2, NULL, outs, &nouts));
  CU_ASSERT_EQUAL(nouts, 2);
  if (nouts == 2) {
    CU_ASSERT_EQUAL(outs[0]->type.dtype, MLC_DTYPE_F32);
    CU_ASSERT_EQUAL(outs[1]->type.dtype, MLC_DTYPE_I64);
    CU_ASSERT_EQUAL(outs[1]->type.dims[0], 3);
    CU_ASSERT_EQUAL(outs[1]->type.dims[1], 2);
  }
  /* einsum broadcasting: [3, 4] x [1, 4] -> [3] */
  mlc_value *w = NULL, *args[2];
  mlc_type t1 = {MLC_DTYPE_F32, 2, (const int64_t[]){1, 4}};
  CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "w", &t1, &w));
  args[0] = x, args[1] = w;
  mlc_attr ea = mlc_attr_str("equation", "ij,ij->i");
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_EINSUM, args, 2, &ea, 1, NULL, &y));
  if (y) CU_ASSERT(y->type.rank == 1 && y->type.dims[0] == 3);
  mlc_module_destroy(m);
}

/* Constant folding: trilu, cumsum and reverse_sequence on constants fold. */
static void t_fold(void) {
  mlc_module *m = NULL;
  mlc_func *f = NULL;
  mlc_value *k = NULL, *y = NULL, *l = NULL, *args[2];
  CU_ASSERT_PTR_NULL_FATAL(mlc_module_create(mlc_allocator_default(), &m));
  CU_ASSERT_PTR_NULL(mlc_func_create(m, "main", &f));
  float data[6] = {1, 2, 3, 4, 5, 6};
  int64_t lens[2] = {2, 1};
  mlc_type t = {MLC_DTYPE_F32, 2, (const int64_t[]){2, 3}};
  mlc_type lt = {MLC_DTYPE_I64, 1, (const int64_t[]){2}};
  CU_ASSERT_PTR_NULL(mlc_module_add_const(m, "k", &t, data, sizeof data, &k));
  CU_ASSERT_PTR_NULL(mlc_module_add_const(m, "l", &lt, lens, sizeof lens, &l));
  mlc_attr tu[2] = {mlc_attr_int("upper", 1), mlc_attr_int("k", 1)};
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_TRILU, &k, 1, tu, 2, NULL, &y));
  const mlc_const *cst = y ? mlc_value_const(m, y) : NULL;
  CU_ASSERT_PTR_NOT_NULL(cst);
  if (cst) {
    static const float want[6] = {0, 2, 3, 0, 0, 6};
    CU_ASSERT(memcmp(cst->data, want, sizeof want) == 0);
  }
  mlc_attr ca[3] = {mlc_attr_int("axis", 1), mlc_attr_int("reverse", 1), mlc_attr_int("exclusive", 1)};
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_CUMSUM, &k, 1, ca, 3, NULL, &y));
  cst = y ? mlc_value_const(m, y) : NULL;
  CU_ASSERT_PTR_NOT_NULL(cst);
  if (cst) {
    static const float want[6] = {5, 3, 0, 11, 6, 0};
    CU_ASSERT(memcmp(cst->data, want, sizeof want) == 0);
  }
  args[0] = k, args[1] = l;
  mlc_attr ra[2] = {mlc_attr_int("batch_axis", 0), mlc_attr_int("time_axis", 1)};
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_REVERSE_SEQUENCE, args, 2, ra, 2, NULL, &y));
  cst = y ? mlc_value_const(m, y) : NULL;
  CU_ASSERT_PTR_NOT_NULL(cst);
  if (cst) {
    static const float want[6] = {2, 1, 3, 4, 5, 6};
    CU_ASSERT(memcmp(cst->data, want, sizeof want) == 0);
  }
  mlc_module_destroy(m);
}

/* ---- registration -------------------------------------------------------------------------- */

static void register_suites(void) {
  static const CU_TestInfo ops[] = {
      {"nll_loss", t_nll},
      {"softmax_cross_entropy", t_sce},
      {"trilu", t_trilu},
      {"cumsum", t_cumsum},
      {"hardmax", t_hardmax},
      {"onehot", t_onehot},
      {"eyelike", t_eyelike},
      {"topk", t_topk},
      {"einsum", t_einsum},
      {"batchnorm_training", t_batchnorm_training},
      {"lrn", t_lrn},
      {"mvn", t_mvn},
      {"reverse_sequence", t_reverse_sequence},
      {"errors", t_errors},
      CU_TEST_INFO_NULL,
  };
  static const CU_TestInfo graph[] = {
      {"infer", t_infer},
      {"fold", t_fold},
      CU_TEST_INFO_NULL,
  };
  mlc_test_add_suite("misc_graph", graph);
  CU_pSuite s = CU_add_suite("misc_ops", mlc_th_tmp_init, mlc_th_tmp_clean);
  for (const CU_TestInfo *t = ops; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_misc_ops", fns);
}
