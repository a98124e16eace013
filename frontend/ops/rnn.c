/*
** rnn.c: converters of ONNX's recurrent ops RNN, LSTM and GRU.
**
** The time loop is unrolled at compile time when seq_length is static,
** into matmul, add, activation, strided_slice, where and concat graph ops;
** a seq_length known only at run time (a dim_param) makes it a run-time
** loop (cf_loop ... cf_loop_end, forward direction) whose body is one step.
** Per direction, the input projection X W^T + bias of all steps is one
** matmul over the whole sequence; each step slices its row, adds
** H_{t-1} R^T and applies the gate activations.  A state that is still the
** implicit zero (no initial_h / initial_c) is kept as NULL so that the
** first step skips the products with it.
**
** sequence_lens (a constant or a value computed at run time) masks the
** steps past each sequence's end with `where` on a per-batch comparison
** t < len[b]: the state is carried over and the step's output is zero.  The
** reverse direction runs the steps from the last one down; with the mask
** that is exactly ONNX's per-sequence reversal (a sequence starts at its
** own last valid step from the initial state).
**
** Activations (activations / activation_alpha / activation_beta) follow
** the ONNX list: Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu,
** ScaledTanh, HardSigmoid, Elu, Softsign, Softplus (names compared without
** case).  alpha and beta values are consumed in the order of the
** activations, only by the functions that take them; a missing value takes
** the function's default (LeakyRelu 0.01, ThresholdedRelu 1, Elu 1,
** HardSigmoid 0.2 / 0.5, Affine 1 / 0, ScaledTanh 1 / 1).  clip bounds the
** input of the gate activations f and g to [-clip, clip].
*/
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "frontend/frontend_int.h"

/* ---- op kinds and activations ------------------------------------------- */

enum { K_RNN, K_LSTM, K_GRU };

/* gates per op kind and activations per direction */
static const int kind_gates[] = {1, 4, 3};
static const int kind_nacts[] = {1, 3, 2};

enum {
  ACT_RELU, ACT_TANH, ACT_SIGMOID, ACT_AFFINE, ACT_LEAKY_RELU, ACT_THRESHOLDED_RELU,
  ACT_SCALED_TANH, ACT_HARD_SIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS, ACT_COUNT
};

static const struct {
  const char *name;
  int takes_alpha, takes_beta;
  double alpha, beta; /* defaults */
} act_info[ACT_COUNT] = {
    [ACT_RELU] = {"Relu", 0, 0, 0, 0},
    [ACT_TANH] = {"Tanh", 0, 0, 0, 0},
    [ACT_SIGMOID] = {"Sigmoid", 0, 0, 0, 0},
    [ACT_AFFINE] = {"Affine", 1, 1, 1.0, 0.0},
    [ACT_LEAKY_RELU] = {"LeakyRelu", 1, 0, 0.01, 0},
    [ACT_THRESHOLDED_RELU] = {"ThresholdedRelu", 1, 0, 1.0, 0},
    [ACT_SCALED_TANH] = {"ScaledTanh", 1, 1, 1.0, 1.0},
    [ACT_HARD_SIGMOID] = {"HardSigmoid", 1, 1, 0.2, 0.5},
    [ACT_ELU] = {"Elu", 1, 0, 1.0, 0},
    [ACT_SOFTSIGN] = {"Softsign", 0, 0, 0, 0},
    [ACT_SOFTPLUS] = {"Softplus", 0, 0, 0, 0},
};

typedef struct act {
  int kind;
  double alpha, beta;
} act;

#define MAX_ACTS 6 /* 3 per direction, 2 directions */

static int op_kind(const char *op_type) {
  return strcmp(op_type, "LSTM") == 0 ? K_LSTM : strcmp(op_type, "GRU") == 0 ? K_GRU : K_RNN;
}

/* 1 for forward, -1 reverse, 2 bidirectional, 0 unknown. */
static int direction_of(const mlc_onnx_node *n) {
  const char *d = mlc_fe_attr_str(n, "direction", "forward");
  if (strcmp(d, "forward") == 0) return 1;
  if (strcmp(d, "reverse") == 0) return -1;
  if (strcmp(d, "bidirectional") == 0) return 2;
  return 0;
}

/*
** The activations of |n| for |nd| directions into |out| (kind_nacts per
** direction, forward first).  On a problem, writes a message to |err| and
** returns -1.
*/
static int read_acts(const mlc_onnx_node *n, int kind, int nd, act *out, char *err, size_t errsz) {
  static const int dflt[3][3] = {{ACT_TANH}, {ACT_SIGMOID, ACT_TANH, ACT_TANH}, {ACT_SIGMOID, ACT_TANH}};
  int na = kind_nacts[kind];
  const mlc_onnx_attr *a = mlc_fe_attr(n, "activations");
  if (!a || a->type != MLC_ONNX_ATTR_STRINGS || a->n == 0) {
    for (int d = 0; d < nd; d++)
      for (int k = 0; k < na; k++) {
        act *x = &out[d * na + k];
        x->kind = dflt[kind][k];
        x->alpha = act_info[x->kind].alpha;
        x->beta = act_info[x->kind].beta;
      }
    return 0;
  }
  if (a->n != na * nd && a->n != na) {
    snprintf(err, errsz, "activations has %d entries, expected %d (%d per direction)", a->n, na * nd, na);
    return -1;
  }
  const mlc_onnx_attr *al = mlc_fe_attr(n, "activation_alpha"), *be = mlc_fe_attr(n, "activation_beta");
  int nal = al && al->type == MLC_ONNX_ATTR_FLOATS ? al->n : 0;
  int nbe = be && be->type == MLC_ONNX_ATTR_FLOATS ? be->n : 0;
  int ia = 0, ib = 0;
  for (int i = 0; i < a->n; i++) {
    const char *name = a->strings[i] ? a->strings[i] : "";
    int k = 0;
    while (k < ACT_COUNT && strcasecmp(name, act_info[k].name) != 0) k++;
    if (k == ACT_COUNT) {
      snprintf(err, errsz, "activation \"%s\" not supported", name);
      return -1;
    }
    act *x = &out[i];
    x->kind = k;
    x->alpha = act_info[k].alpha;
    x->beta = act_info[k].beta;
    if (act_info[k].takes_alpha && ia < nal) x->alpha = al->floats[ia++];
    if (act_info[k].takes_beta && ib < nbe) x->beta = be->floats[ib++];
  }
  if (a->n == na && nd == 2) memcpy(out + na, out, sizeof *out * (size_t)na);
  return 0;
}

MLC_FE_CHECK(rnn) {
  (void)opset;
  int kind = op_kind(n->op_type);
  int dir = direction_of(n);
  if (!dir) mlc_fe_problem(p, "direction \"%s\" not supported", mlc_fe_attr_str(n, "direction", ""));
  int64_t layout = mlc_fe_attr_int(n, "layout", 0);
  if (layout != 0 && layout != 1) mlc_fe_problem(p, "layout %lld must be 0 or 1", (long long)layout);
  if (mlc_fe_attr(n, "hidden_size") && mlc_fe_attr_int(n, "hidden_size", 0) < 1)
    mlc_fe_problem(p, "hidden_size %lld must be positive", (long long)mlc_fe_attr_int(n, "hidden_size", 0));
  if (mlc_fe_attr(n, "clip") && !(mlc_fe_attr_float(n, "clip", 0) >= 0))
    mlc_fe_problem(p, "clip %g must not be negative", mlc_fe_attr_float(n, "clip", 0));
  act acts[MAX_ACTS];
  char err[256];
  if (read_acts(n, kind, dir == 2 ? 2 : 1, acts, err, sizeof err)) mlc_fe_problem(p, "%s", err);
}

/* ---- small emitters ------------------------------------------------------- */

/* x[begin:end] along |axis| (the other axes whole). */
static mlc_status slice_axis(mlc_fe_ctx *cx, mlc_value *x, int axis, int64_t begin, int64_t end,
                             mlc_value **out) {
  int r = x->type.rank;
  int64_t b[8], e[8], s[8];
  if (r > 8) return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "rank %d is too large", r);
  for (int i = 0; i < r; i++) {
    b[i] = 0;
    e[i] = MLC_DIM_IS_SYM(x->type.dims[i]) ? INT64_MAX : x->type.dims[i];
    s[i] = 1;
  }
  b[axis] = begin;
  e[axis] = end;
  mlc_attr at[3] = {mlc_attr_ints("begin", b, r), mlc_attr_ints("end", e, r), mlc_attr_ints("step", s, r)};
  return mlc_fe_emit(cx, MLC_OP_SLICE, &x, 1, at, 3, out);
}

/* x[i] of a tensor of rank >= 1: the slice along axis 0 without that axis. */
static mlc_status take0(mlc_fe_ctx *cx, mlc_value *x, int64_t i, mlc_value **out) {
  mlc_value *y;
  MLC_RETURN_IF_ERROR(slice_axis(cx, x, 0, i, i + 1, &y));
  return mlc_fe_reshape(cx, y, x->type.dims + 1, x->type.rank - 1, out);
}

static mlc_status transpose(mlc_fe_ctx *cx, mlc_value *x, const int64_t *perm, mlc_value **out) {
  mlc_attr a = mlc_attr_ints("perm", perm, x->type.rank);
  return mlc_fe_emit(cx, MLC_OP_TRANSPOSE, &x, 1, &a, 1, out);
}

/* The 2-D transpose of |x|. */
static mlc_status transpose2(mlc_fe_ctx *cx, mlc_value *x, mlc_value **out) {
  static const int64_t t2[2] = {1, 0};
  return transpose(cx, x, t2, out);
}

/* a + b where NULL stands for zero. */
static mlc_status add_opt(mlc_fe_ctx *cx, mlc_value *a, mlc_value *b, mlc_value **out) {
  if (!a || !b) {
    *out = a ? a : b;
    return NULL;
  }
  return mlc_fe_binary(cx, MLC_OP_ADD, a, b, out);
}

/* a * b, or NULL (zero) when either is NULL. */
static mlc_status mul_opt(mlc_fe_ctx *cx, mlc_value *a, mlc_value *b, mlc_value **out) {
  if (!a || !b) {
    *out = NULL;
    return NULL;
  }
  return mlc_fe_binary(cx, MLC_OP_MUL, a, b, out);
}

/* a @ b, or NULL (zero) when a is NULL. */
static mlc_status matmul_opt(mlc_fe_ctx *cx, mlc_value *a, mlc_value *b, mlc_value **out) {
  if (!a) {
    *out = NULL;
    return NULL;
  }
  return mlc_fe_binary(cx, MLC_OP_MATMUL, a, b, out);
}

/* Concatenation of |v|[0..n) along |axis|, in groups small enough for
** one prim function each. */
static mlc_status concat_many(mlc_fe_ctx *cx, mlc_value **v, int n, int axis, mlc_value **out) {
  enum { GROUP = 32 };
  mlc_attr a = mlc_attr_int("axis", axis);
  while (n > GROUP) {
    int m = 0;
    for (int i = 0; i < n; i += GROUP) {
      int k = n - i < GROUP ? n - i : GROUP;
      if (k == 1) v[m] = v[i];
      else MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CONCAT, v + i, k, &a, 1, &v[m]));
      m++;
    }
    n = m;
  }
  if (n == 1) {
    *out = v[0];
    return NULL;
  }
  return mlc_fe_emit(cx, MLC_OP_CONCAT, v, n, &a, 1, out);
}

/* f(clip(x)) for activation |a| (|clip| < 0: no clip). */
static mlc_status activate(mlc_fe_ctx *cx, const act *a, double clip, mlc_value *x, mlc_value **out) {
  mlc_dtype dt = x->type.dtype;
  mlc_value *s, *y = x;
  if (clip >= 0) {
    mlc_attr c[2] = {mlc_attr_float("min", -clip), mlc_attr_float("max", clip)};
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CLIP, &y, 1, c, 2, &y));
  }
  switch (a->kind) {
    case ACT_RELU: return mlc_fe_unary(cx, MLC_OP_RELU, y, out);
    case ACT_TANH: return mlc_fe_unary(cx, MLC_OP_TANH, y, out);
    case ACT_SIGMOID: return mlc_fe_unary(cx, MLC_OP_SIGMOID, y, out);
    case ACT_SOFTSIGN: return mlc_fe_unary(cx, MLC_OP_SOFTSIGN, y, out);
    case ACT_SOFTPLUS: return mlc_fe_unary(cx, MLC_OP_SOFTPLUS, y, out);
    case ACT_AFFINE: /* alpha*x + beta */
      MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, dt, a->alpha, &s));
      MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, y, s, &y));
      MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, dt, a->beta, &s));
      return mlc_fe_binary(cx, MLC_OP_ADD, y, s, out);
    case ACT_SCALED_TANH: /* alpha*tanh(beta*x) */
      MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, dt, a->beta, &s));
      MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, y, s, &y));
      MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_TANH, y, &y));
      MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, dt, a->alpha, &s));
      return mlc_fe_binary(cx, MLC_OP_MUL, y, s, out);
    case ACT_LEAKY_RELU:
    case ACT_THRESHOLDED_RELU:
    case ACT_ELU: {
      mlc_op op = a->kind == ACT_LEAKY_RELU ? MLC_OP_LEAKY_RELU
                  : a->kind == ACT_ELU     ? MLC_OP_ELU
                                           : MLC_OP_THRESHOLDED_RELU;
      mlc_attr at = mlc_attr_float("alpha", a->alpha);
      return mlc_fe_emit(cx, op, &y, 1, &at, 1, out);
    }
    case ACT_HARD_SIGMOID: {
      mlc_attr at[2] = {mlc_attr_float("alpha", a->alpha), mlc_attr_float("beta", a->beta)};
      return mlc_fe_emit(cx, MLC_OP_HARD_SIGMOID, &y, 1, at, 2, out);
    }
    default: return mlc_fe_error(cx, MLC_INTERNAL, "activation %d", a->kind);
  }
}

/* ---- one direction -------------------------------------------------------- */

/* What all steps of one node share. */
typedef struct rnn_cfg {
  int kind, G;       /* op kind, gates */
  int64_t T, B, I, H; /* seq_length, batch (may be symbolic), input and hidden size */
  mlc_dtype dt;
  double clip;       /* < 0: none */
  int input_forget, lbr;
  mlc_value *X;      /* [T, B, I] */
  mlc_value *W, *R, *Bias, *h0, *c0, *P; /* as given (layout 0), optional ones may be NULL */
  mlc_value *lens2;  /* sequence_lens as [B, 1], NULL: no mask */
  int want_y;
} rnn_cfg;

/* The results of one direction. */
typedef struct rnn_dir_out {
  mlc_value **ys; /* [T] of [B, H] in time order (when want_y) */
  mlc_value *y;   /* run-time sequence length: all outputs, [T, 1, B, H] */
  mlc_value *h, *c; /* final states [B, H] */
} rnn_dir_out;

/* XW [T, B, k] of X and the rows [r0, r1) of the direction's W [G*H, I],
** plus |bias| [k] (may be NULL). */
static mlc_status project(mlc_fe_ctx *cx, const rnn_cfg *c, mlc_value *Wd, int64_t r0, int64_t r1,
                          mlc_value *bias, mlc_value **out) {
  mlc_value *w = Wd, *y;
  if (r0 != 0 || r1 != Wd->type.dims[0]) MLC_RETURN_IF_ERROR(slice_axis(cx, Wd, 0, r0, r1, &w));
  MLC_RETURN_IF_ERROR(transpose2(cx, w, &w));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MATMUL, c->X, w, &y));
  return add_opt(cx, y, bias, out);
}

/* R rows [r0, r1) of the direction's R [G*H, H], transposed: [H, r1 - r0]. */
static mlc_status rec_weight(mlc_fe_ctx *cx, mlc_value *Rd, int64_t r0, int64_t r1, mlc_value **out) {
  mlc_value *r = Rd;
  if (r0 != 0 || r1 != Rd->type.dims[0]) MLC_RETURN_IF_ERROR(slice_axis(cx, Rd, 0, r0, r1, &r));
  return transpose2(cx, r, out);
}

/* bias[k0:k1] + bias[k0 + off : k1 + off] of a direction's B [2*G*H] (Wb + Rb). */
static mlc_status bias_sum(mlc_fe_ctx *cx, mlc_value *Bd, int64_t k0, int64_t k1, int64_t off,
                           mlc_value **out) {
  mlc_value *wb, *rb;
  MLC_RETURN_IF_ERROR(slice_axis(cx, Bd, 0, k0, k1, &wb));
  MLC_RETURN_IF_ERROR(slice_axis(cx, Bd, 0, k0 + off, k1 + off, &rb));
  return mlc_fe_binary(cx, MLC_OP_ADD, wb, rb, out);
}

/* The weights one direction's steps share (cell). */
typedef struct cell_w {
  mlc_value *rt, *rt_h, *rb_h, *pi, *po, *pf, *one, *zero;
  const act *af, *ag, *ah;
} cell_w;

/*
** One step: from the projected input |xt| (GRU: and |xh_t|, the h gate's),
** the states |h| and |cs| (NULL: zero), and the step's time index |tv| (a
** scalar of sequence_lens' dtype, for the mask) -> the new states and the
** step's output.
*/
static mlc_status cell(mlc_fe_ctx *cx, const rnn_cfg *c, const cell_w *w, mlc_value *xt, mlc_value *xh_t,
                       mlc_value *tv, mlc_value *h, mlc_value *cs, mlc_value **out_h, mlc_value **out_c,
                       mlc_value **out_y) {
  int64_t H = c->H;
  mlc_value *rt = w->rt, *rt_h = w->rt_h, *rb_h = w->rb_h, *pi = w->pi, *po = w->po, *pf = w->pf;
  mlc_value *one = w->one, *zero = w->zero;
  const act *af = w->af, *ag = w->ag, *ah = w->ah;
  mlc_value *g, *hn = NULL, *cn = NULL;
  MLC_RETURN_IF_ERROR(matmul_opt(cx, h, rt, &g));
  MLC_RETURN_IF_ERROR(add_opt(cx, xt, g, &g));
  if (c->kind == K_RNN) {
    MLC_RETURN_IF_ERROR(activate(cx, af, c->clip, g, &hn));
  } else if (c->kind == K_LSTM) {
    mlc_value *gi, *go, *gf, *gc, *tmp;
    MLC_RETURN_IF_ERROR(slice_axis(cx, g, 1, 0, H, &gi));
    MLC_RETURN_IF_ERROR(slice_axis(cx, g, 1, H, 2 * H, &go));
    MLC_RETURN_IF_ERROR(slice_axis(cx, g, 1, 3 * H, 4 * H, &gc));
    MLC_RETURN_IF_ERROR(mul_opt(cx, pi, cs, &tmp));
    MLC_RETURN_IF_ERROR(add_opt(cx, gi, tmp, &gi));
    MLC_RETURN_IF_ERROR(activate(cx, af, c->clip, gi, &gi));
    MLC_RETURN_IF_ERROR(activate(cx, ag, c->clip, gc, &gc));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, gi, gc, &cn));
    if (cs) { /* f * C_{t-1} (a zero state needs no forget gate) */
      if (c->input_forget) {
        MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, one, gi, &gf));
      } else {
        MLC_RETURN_IF_ERROR(slice_axis(cx, g, 1, 2 * H, 3 * H, &gf));
        MLC_RETURN_IF_ERROR(mul_opt(cx, pf, cs, &tmp));
        MLC_RETURN_IF_ERROR(add_opt(cx, gf, tmp, &gf));
        MLC_RETURN_IF_ERROR(activate(cx, af, c->clip, gf, &gf));
      }
      MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, gf, cs, &tmp));
      MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_ADD, tmp, cn, &cn));
    }
    MLC_RETURN_IF_ERROR(mul_opt(cx, po, cn, &tmp));
    MLC_RETURN_IF_ERROR(add_opt(cx, go, tmp, &go));
    MLC_RETURN_IF_ERROR(activate(cx, af, c->clip, go, &go));
    MLC_RETURN_IF_ERROR(activate(cx, ah, -1, cn, &tmp));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, go, tmp, &hn));
  } else { /* GRU */
    mlc_value *z, *r, *hh, *xh, *tmp;
    MLC_RETURN_IF_ERROR(slice_axis(cx, g, 1, 0, H, &z));
    MLC_RETURN_IF_ERROR(slice_axis(cx, g, 1, H, 2 * H, &r));
    MLC_RETURN_IF_ERROR(activate(cx, af, c->clip, z, &z));
    MLC_RETURN_IF_ERROR(activate(cx, af, c->clip, r, &r));
    if (c->lbr) { /* r * (H R_h^T + Rb_h) */
      MLC_RETURN_IF_ERROR(matmul_opt(cx, h, rt_h, &hh));
      MLC_RETURN_IF_ERROR(add_opt(cx, hh, rb_h, &hh));
      MLC_RETURN_IF_ERROR(mul_opt(cx, r, hh, &hh));
    } else { /* (r * H) R_h^T + Rb_h */
      MLC_RETURN_IF_ERROR(mul_opt(cx, r, h, &hh));
      MLC_RETURN_IF_ERROR(matmul_opt(cx, hh, rt_h, &hh));
      MLC_RETURN_IF_ERROR(add_opt(cx, hh, rb_h, &hh));
    }
    xh = xh_t;
    MLC_RETURN_IF_ERROR(add_opt(cx, xh, hh, &xh));
    MLC_RETURN_IF_ERROR(activate(cx, ag, c->clip, xh, &xh));
    /* (1 - z) * h~ + z * H_{t-1} */
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_SUB, one, z, &tmp));
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MUL, tmp, xh, &hn));
    MLC_RETURN_IF_ERROR(mul_opt(cx, z, h, &tmp));
    MLC_RETURN_IF_ERROR(add_opt(cx, hn, tmp, &hn));
  }
  mlc_value *y = hn;
  if (c->lens2) { /* past a sequence's end: keep the state, output zero */
    mlc_value *m;
    MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_GREATER, c->lens2, tv, &m));
    mlc_value *a3[3] = {m, hn, zero};
    if (c->want_y) MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_WHERE, a3, 3, NULL, 0, &y));
    a3[2] = h ? h : zero;
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_WHERE, a3, 3, NULL, 0, &hn));
    if (cn) {
      a3[1] = cn;
      a3[2] = cs ? cs : zero;
      MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_WHERE, a3, 3, NULL, 0, &cn));
    }
  }
  *out_h = hn;
  *out_c = cn;
  *out_y = y;
  return NULL;
}

/*
** The time loop of one (forward) direction when the sequence length is
** known only at run time: a run-time loop (cf_loop ... cf_loop_end) of T
** iterations carrying the states; iteration t reads row t of the
** projections, and the outputs [1, B, H] are stacked into res->y
** ([T, 1, B, H]).  Zero initial states become constants (a static batch).
*/
static mlc_status run_dynamic(mlc_fe_ctx *cx, const rnn_cfg *c, const cell_w *w, mlc_value *xw, mlc_value *xw_h,
                              mlc_value *h, mlc_value *cs, rnn_dir_out *res) {
  int lstm = c->kind == K_LSTM, nc = lstm ? 2 : 1;
  int64_t bh[2] = {c->B, c->H};
  mlc_value *st[2] = {h, cs};
  for (int k = 0; k < nc; k++) {
    if (st[k]) continue;
    if (MLC_DIM_IS_SYM(c->B))
      return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                          "a run-time sequence length with a symbolic batch needs initial_h (and initial_c)");
    MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, w->zero, (int64_t[]){1, 1}, 2, &st[k]));
    mlc_attr a = mlc_attr_ints("shape", bh, 2);
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_BROADCAST_TO, &st[k], 1, &a, 1, &st[k]));
  }
  mlc_value *len, *yes, *args[5], *vals[4], *outs[3];
  MLC_RETURN_IF_ERROR(mlc_fe_unary(cx, MLC_OP_SHAPE_OF, c->X, &len));
  MLC_RETURN_IF_ERROR(take0(cx, len, 0, &len));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_BOOL, 1, &yes));
  args[0] = len;
  args[1] = yes;
  args[2] = st[0];
  args[3] = st[1];
  int n = 0;
  MLC_RETURN_IF_ERROR(mlc_graph_emit_region(cx->fn, MLC_OP_CF_LOOP, args, 2 + nc, NULL, 0, &cx->origin, vals, &n));
  mlc_value *t = vals[0], *xt, *xh = NULL, *tv = NULL, *hn, *cn, *y, *ga[2] = {xw, t};
  mlc_attr ax = mlc_attr_int("axis", 0);
  MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_GATHER, ga, 2, &ax, 1, &xt));
  if (c->kind == K_GRU) {
    ga[0] = xw_h;
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_GATHER, ga, 2, &ax, 1, &xh));
  }
  if (c->lens2) {
    mlc_attr a = mlc_attr_int("dtype", c->lens2->type.dtype);
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_CAST, &t, 1, &a, 1, &tv));
  }
  MLC_RETURN_IF_ERROR(cell(cx, c, w, xt, xh, tv, vals[2], lstm ? vals[3] : NULL, &hn, &cn, &y));
  MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, y, (int64_t[]){1, c->B, c->H}, 3, &y));
  int64_t sym;
  MLC_RETURN_IF_ERROR(mlc_module_fresh_sym(cx->mod, &sym));
  args[2] = hn;
  args[2 + (nc - 1)] = lstm ? cn : hn;
  args[2 + nc] = y;
  mlc_attr a[2] = {mlc_attr_int("ncarry", nc), mlc_attr_ints("dims", &sym, 1)};
  MLC_RETURN_IF_ERROR(mlc_graph_emit_region(cx->fn, MLC_OP_CF_LOOP_END, args, 3 + nc, a, 2, &cx->origin, outs, &n));
  res->h = outs[0];
  res->c = lstm ? outs[1] : NULL;
  res->y = outs[nc];
  return NULL;
}

static mlc_status run_direction(mlc_fe_ctx *cx, const rnn_cfg *c, int d, int reverse, const act *acts,
                                rnn_dir_out *res) {
  int64_t H = c->H, G = c->G, T = c->T;
  mlc_value *Wd, *Rd, *Bd = NULL, *h = NULL, *cs = NULL, *pi = NULL, *po = NULL, *pf = NULL;
  MLC_RETURN_IF_ERROR(take0(cx, c->W, d, &Wd));
  MLC_RETURN_IF_ERROR(take0(cx, c->R, d, &Rd));
  if (c->Bias) MLC_RETURN_IF_ERROR(take0(cx, c->Bias, d, &Bd));
  if (c->h0) MLC_RETURN_IF_ERROR(take0(cx, c->h0, d, &h));
  if (c->c0) MLC_RETURN_IF_ERROR(take0(cx, c->c0, d, &cs));
  if (c->P) {
    mlc_value *Pd;
    MLC_RETURN_IF_ERROR(take0(cx, c->P, d, &Pd));
    MLC_RETURN_IF_ERROR(slice_axis(cx, Pd, 0, 0, H, &pi));
    MLC_RETURN_IF_ERROR(slice_axis(cx, Pd, 0, H, 2 * H, &po));
    MLC_RETURN_IF_ERROR(slice_axis(cx, Pd, 0, 2 * H, 3 * H, &pf));
  }
  /* input projections and recurrent weights */
  mlc_value *xw = NULL, *xw_h = NULL, *rt = NULL, *rt_h = NULL, *rb_h = NULL, *bias = NULL;
  if (c->kind == K_GRU) { /* z and r: Wb + Rb in the projection; h: Wb there, Rb per step */
    if (Bd) MLC_RETURN_IF_ERROR(bias_sum(cx, Bd, 0, 2 * H, G * H, &bias));
    MLC_RETURN_IF_ERROR(project(cx, c, Wd, 0, 2 * H, bias, &xw));
    bias = NULL;
    if (Bd) {
      MLC_RETURN_IF_ERROR(slice_axis(cx, Bd, 0, 2 * H, 3 * H, &bias));
      MLC_RETURN_IF_ERROR(slice_axis(cx, Bd, 0, 5 * H, 6 * H, &rb_h));
    }
    MLC_RETURN_IF_ERROR(project(cx, c, Wd, 2 * H, 3 * H, bias, &xw_h));
    MLC_RETURN_IF_ERROR(rec_weight(cx, Rd, 0, 2 * H, &rt));
    MLC_RETURN_IF_ERROR(rec_weight(cx, Rd, 2 * H, 3 * H, &rt_h));
  } else {
    if (Bd) MLC_RETURN_IF_ERROR(bias_sum(cx, Bd, 0, G * H, G * H, &bias));
    MLC_RETURN_IF_ERROR(project(cx, c, Wd, 0, G * H, bias, &xw));
    MLC_RETURN_IF_ERROR(rec_weight(cx, Rd, 0, G * H, &rt));
  }
  mlc_value *one = NULL, *zero = NULL;
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, c->dt, 1.0, &one));
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, c->dt, 0.0, &zero));
  const act *af = &acts[0], *ag = &acts[1 % kind_nacts[c->kind]], *ah = &acts[2 % kind_nacts[c->kind]];

  cell_w w = {rt, rt_h, rb_h, pi, po, pf, one, zero, af, ag, ah};
  if (MLC_DIM_IS_SYM(T)) return run_dynamic(cx, c, &w, xw, xw_h, h, cs, res);
  for (int64_t s = 0; s < T; s++) {
    int64_t t = reverse ? T - 1 - s : s;
    mlc_value *xt, *xh = NULL, *tv = NULL, *hn, *cn, *y;
    MLC_RETURN_IF_ERROR(take0(cx, xw, t, &xt));
    if (c->kind == K_GRU) MLC_RETURN_IF_ERROR(take0(cx, xw_h, t, &xh));
    if (c->lens2) MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, c->lens2->type.dtype, (double)t, &tv));
    MLC_RETURN_IF_ERROR(cell(cx, c, &w, xt, xh, tv, h, cs, &hn, &cn, &y));
    if (c->want_y) res->ys[t] = y;
    h = hn;
    cs = cn;
  }
  res->h = h;
  res->c = cs;
  return NULL;
}

/* ---- the converter -------------------------------------------------------- */

static mlc_value *opt_in(mlc_value *const *in, int nin, int i) { return i < nin ? in[i] : NULL; }

/* Checks that |v| has rank |rank| and, where static, the dims |want| (< 0
** or MLC_DIM_IS_SYM: any). */
static mlc_status check_shape(mlc_fe_ctx *cx, const char *what, const mlc_value *v, int rank,
                              const int64_t *want) {
  int ok = v->type.rank == rank;
  for (int i = 0; ok && i < rank; i++) {
    int64_t d = v->type.dims[i], w = want[i];
    if (!MLC_DIM_IS_SYM(d) && w >= 0 && !MLC_DIM_IS_SYM(w) && d != w) ok = 0;
  }
  if (ok) return NULL;
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_sb_putc(&b, '(');
  for (int i = 0; i < rank; i++) {
    if (i) mlc_sb_puts(&b, ", ");
    if (want[i] >= 0 && !MLC_DIM_IS_SYM(want[i])) mlc_sb_printf(&b, "%lld", (long long)want[i]);
    else mlc_sb_puts(&b, "_");
  }
  mlc_sb_puts(&b, rank == 1 ? ",)" : ")");
  mlc_status s = b.oom ? mlc_oom()
                       : mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s has shape %s, expected %s", what,
                                      mlc_fe_shape_str(cx, &v->type), mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return s;
}

/* |v| ([a, b, H] in layout 1: [b, a, H]) as layout 0. */
static mlc_status state_layout0(mlc_fe_ctx *cx, int layout, mlc_value *v, mlc_value **out) {
  static const int64_t p3[3] = {1, 0, 2};
  if (!v || !layout || v->type.rank != 3) {
    *out = v;
    return NULL;
  }
  return transpose(cx, v, p3, out);
}

/* Finals [B, H] of the directions as [nd, B, H] (layout 1: [B, nd, H]). */
static mlc_status stack_states(mlc_fe_ctx *cx, const rnn_cfg *c, int layout, mlc_value **st, int nd,
                               mlc_value **out) {
  static const int64_t p3[3] = {1, 0, 2};
  int64_t d3[3] = {1, c->B, c->H};
  mlc_value *v[2];
  for (int d = 0; d < nd; d++) MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, st[d], d3, 3, &v[d]));
  mlc_value *y;
  MLC_RETURN_IF_ERROR(concat_many(cx, v, nd, 0, &y));
  if (layout) return transpose(cx, y, p3, out);
  *out = y;
  return NULL;
}

/* The shared converter of RNN, LSTM and GRU (every version). */
static mlc_status convert(mlc_fe_ctx *cx, const mlc_onnx_node *n, mlc_value *const *in, int nin,
                          mlc_value **out, int nout, int kind) {
  mlc_value *X = in[0], *W = in[1], *R = in[2];
  rnn_cfg c;
  memset(&c, 0, sizeof c);
  c.kind = kind;
  c.G = kind_gates[kind];
  c.dt = X->type.dtype;
  if (!mlc_dtype_is_float(c.dt))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "X must be a float tensor, got %s", mlc_dtype_name(c.dt));
  if (W->type.dtype != c.dt || R->type.dtype != c.dt)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "W and R must have X's dtype %s", mlc_dtype_name(c.dt));
  int dir = direction_of(n), nd = dir == 2 ? 2 : 1;
  if (!dir)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "direction \"%s\" not supported",
                        mlc_fe_attr_str(n, "direction", ""));
  int layout = (int)mlc_fe_attr_int(n, "layout", 0);
  if (X->type.rank != 3)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "X must have rank 3, got %s", mlc_fe_shape_str(cx, &X->type));
  if (layout) {
    static const int64_t p3[3] = {1, 0, 2};
    MLC_RETURN_IF_ERROR(transpose(cx, X, p3, &X));
  }
  c.X = X;
  c.T = X->type.dims[0];
  c.B = X->type.dims[1];
  c.I = X->type.dims[2];
  if (MLC_DIM_IS_SYM(c.T) && dir != 1)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED,
                        "the sequence length of X %s is symbolic: a run-time time loop supports the "
                        "forward direction only",
                        mlc_fe_shape_str(cx, &in[0]->type));
  if (c.T == 0)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "an empty sequence (X %s) is not supported",
                        mlc_fe_shape_str(cx, &in[0]->type));
  if (R->type.rank != 3 || MLC_DIM_IS_SYM(R->type.dims[2]))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "R must have rank 3 and a static hidden size, got %s",
                        mlc_fe_shape_str(cx, &R->type));
  c.H = mlc_fe_attr_int(n, "hidden_size", R->type.dims[2]);
  int64_t GH, GH2;
  if (__builtin_mul_overflow(c.G, c.H, &GH) || __builtin_mul_overflow(GH, 2, &GH2) || c.H > INT64_MAX / 3)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "hidden_size %lld is too large (the gate sizes overflow int64)",
                        (long long)c.H);
  MLC_RETURN_IF_ERROR(check_shape(cx, "W", W, 3, (int64_t[]){nd, GH, c.I}));
  MLC_RETURN_IF_ERROR(check_shape(cx, "R", R, 3, (int64_t[]){nd, GH, c.H}));
  c.W = W;
  c.R = R;
  c.Bias = opt_in(in, nin, 3);
  mlc_value *lens = opt_in(in, nin, 4);
  if (c.Bias) {
    if (c.Bias->type.dtype != c.dt)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "B must have X's dtype %s", mlc_dtype_name(c.dt));
    MLC_RETURN_IF_ERROR(check_shape(cx, "B", c.Bias, 2, (int64_t[]){nd, GH2}));
  }
  MLC_RETURN_IF_ERROR(state_layout0(cx, layout, opt_in(in, nin, 5), &c.h0));
  if (c.h0) {
    if (c.h0->type.dtype != c.dt)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "initial_h must have X's dtype %s", mlc_dtype_name(c.dt));
    MLC_RETURN_IF_ERROR(check_shape(cx, "initial_h", c.h0, 3, (int64_t[]){nd, c.B, c.H}));
  }
  if (kind == K_LSTM) {
    MLC_RETURN_IF_ERROR(state_layout0(cx, layout, opt_in(in, nin, 6), &c.c0));
    c.P = opt_in(in, nin, 7);
    if (c.c0) {
      if (c.c0->type.dtype != c.dt)
        return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "initial_c must have X's dtype %s", mlc_dtype_name(c.dt));
      MLC_RETURN_IF_ERROR(check_shape(cx, "initial_c", c.c0, 3, (int64_t[]){nd, c.B, c.H}));
    }
    if (c.P) {
      if (c.P->type.dtype != c.dt)
        return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "P must have X's dtype %s", mlc_dtype_name(c.dt));
      MLC_RETURN_IF_ERROR(check_shape(cx, "P", c.P, 2, (int64_t[]){nd, 3 * c.H}));
    }
    c.input_forget = mlc_fe_attr_int(n, "input_forget", 0) != 0;
  }
  if (kind == K_GRU) c.lbr = mlc_fe_attr_int(n, "linear_before_reset", 0) != 0;
  c.clip = mlc_fe_attr(n, "clip") ? mlc_fe_attr_float(n, "clip", 0) : -1;
  if (lens) {
    if (!mlc_dtype_is_int(lens->type.dtype))
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "sequence_lens must be an integer tensor, got %s",
                          mlc_dtype_name(lens->type.dtype));
    MLC_RETURN_IF_ERROR(check_shape(cx, "sequence_lens", lens, 1, (int64_t[]){c.B}));
    const mlc_const *k = mlc_fe_const(cx, lens);
    int full = 0;
    if (k) { /* every sequence spans the whole X: no mask */
      int64_t *v;
      int m;
      MLC_RETURN_IF_ERROR(mlc_fe_const_ints(cx, lens, "sequence_lens", &v, &m));
      full = 1;
      for (int i = 0; i < m; i++) full &= v[i] >= c.T;
    }
    if (!full) MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, lens, (int64_t[]){c.B, 1}, 2, &c.lens2));
  }
  act acts[MAX_ACTS];
  char err[256];
  if (read_acts(n, kind, nd, acts, err, sizeof err))
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "%s", err);
  c.want_y = mlc_fe_output_used(n, 0);

  rnn_dir_out res[2];
  memset(res, 0, sizeof res);
  for (int d = 0; d < nd; d++) {
    if (c.want_y && !MLC_DIM_IS_SYM(c.T)) {
      res[d].ys = MLC_ARENA_ARRAY(cx->scratch, (size_t)c.T, mlc_value *);
      if (!res[d].ys) return mlc_oom();
    }
    int reverse = dir == -1 || d == 1;
    MLC_RETURN_IF_ERROR(run_direction(cx, &c, d, reverse, acts + d * kind_nacts[kind], &res[d]));
  }
  if (c.want_y) { /* [T, nd, B, H] (layout 1: [B, T, nd, H]) */
    mlc_value *dirs[2];
    int64_t d3[3] = {1, c.B, c.H}, d4[4] = {c.T, 1, c.B, c.H};
    for (int d = 0; d < nd; d++) {
      if (res[d].y) {
        dirs[d] = res[d].y;
        continue;
      }
      for (int64_t t = 0; t < c.T; t++)
        MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, res[d].ys[t], d3, 3, &res[d].ys[t]));
      mlc_value *y;
      MLC_RETURN_IF_ERROR(concat_many(cx, res[d].ys, (int)c.T, 0, &y));
      MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, y, d4, 4, &dirs[d]));
    }
    mlc_value *y;
    MLC_RETURN_IF_ERROR(concat_many(cx, dirs, nd, 1, &y));
    if (layout) {
      static const int64_t p4[4] = {2, 0, 1, 3};
      MLC_RETURN_IF_ERROR(transpose(cx, y, p4, &y));
    }
    out[0] = y;
  }
  mlc_value *st[2];
  if (mlc_fe_output_used(n, 1)) {
    for (int d = 0; d < nd; d++) st[d] = res[d].h;
    MLC_RETURN_IF_ERROR(stack_states(cx, &c, layout, st, nd, &out[1]));
  }
  if (kind == K_LSTM && mlc_fe_output_used(n, 2)) {
    for (int d = 0; d < nd; d++) st[d] = res[d].c;
    MLC_RETURN_IF_ERROR(stack_states(cx, &c, layout, st, nd, &out[2]));
  }
  (void)nout;
  return NULL;
}

/* ONNX RNN-1,7,14: Ht = f(Xt W^T + Ht-1 R^T + Wb + Rb) (f = Tanh) */
MLC_FE_CVT(rnn) { return convert(cx, n, in, nin, out, nout, K_RNN); }

/*
** ONNX LSTM-1,7,14: gates i, o, f, c with f = Sigmoid, g = h = Tanh:
** it = f(Xt Wi^T + Ht-1 Ri^T + Pi (.) Ct-1 + Wbi + Rbi), ft likewise (or
** 1 - it with input_forget), ct = g(Xt Wc^T + Ht-1 Rc^T + Wbc + Rbc),
** Ct = ft (.) Ct-1 + it (.) ct, ot = f(... + Po (.) Ct), Ht = ot (.) h(Ct).
*/
MLC_FE_CVT(lstm) { return convert(cx, n, in, nin, out, nout, K_LSTM); }

/*
** ONNX GRU-1,3,7,14: gates z, r, h with f = Sigmoid, g = Tanh:
** zt = f(Xt Wz^T + Ht-1 Rz^T + Wbz + Rbz), rt likewise,
** ht = g(Xt Wh^T + (rt (.) Ht-1) Rh^T + Rbh + Wbh) (linear_before_reset:
** g(Xt Wh^T + rt (.) (Ht-1 Rh^T + Rbh) + Wbh)), Ht = (1 - zt) (.) ht + zt (.) Ht-1.
*/
MLC_FE_CVT(gru) { return convert(cx, n, in, nin, out, nout, K_GRU); }
