/*
** layout.c: lowering rules of the blocked-layout ops (TOPI's
** layout_transform and x86 conv2d_NCHWc).
**
** layout_transform is one injective stage: each output element loads the
** input element that mlc_layout_map names, e.g. "NCHW" -> "NCHW16c":
**
**   y[n, C, h, w, c] = x[n, C*16 + c, h, w]
**
** conv2d_nchwc is one reduction stage over (input channel block, kh, kw,
** input channel in the block), the output's channel block innermost:
**
**   y[n, K, oh, ow, k] = sum over C, kh, kw, c of
**       x[n, C, oh*s - p + kh*d, ow*s - p + kw*d, c] * w[K, C, kh, kw, c, k]
**
** (depthwise: the input block K itself, y[..k] = sum over kh, kw of
** x[n, K, .., .., k] * w[K, 0, kh, kw, 0, k]), then the bias [K/k, k] added
** in a second stage.  The default schedule's vector rule makes k (16 or 8
** lanes) the vector loop inside the reduction: every output pixel
** accumulates one vector with contiguous weight loads.  A padded conv first
** copies its input into a buffer with the border of zeros (stage T_pad, a
** select), so that the reduction reads without bounds tests.
**
** matmul_packed is one reduction over k with the weight packed in blocks
** of NB columns (alter_layout packs a constant [K, N] as "NK{NB}n"):
**
**   y[..., m, n] = sum over k of a[..., m, k] * wp[n / NB, k, n % NB]
**
** then the bias [N] added in a second stage.  The default schedule's tile
** rule holds rows x 16-column vectors across k; with the weight packed,
** the vectors of one column block read one contiguous NB-float row of wp
** per k instead of rows N floats apart.
*/
#include <string.h>

#include "lower/lower_int.h"

#define M (c->tm)

static mlc_tir_expr *i64(mlc_lg_call *c, int64_t v) { return mlc_tir_i64(M, v); }

/* ---- layout_transform ------------------------------------------------------- */

typedef struct lt_ctx {
  mlc_lg_call *c;
  mlc_layout_map map;
} lt_ctx;

static mlc_tir_expr *lt_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  lt_ctx *l = user;
  mlc_lg_call *c = l->c;
  mlc_tir_expr *xi[MLC_LAYOUT_MAX_RANK];
  for (int i = 0; i < l->map.src_rank; i++) {
    mlc_tir_expr *v = idx[l->map.outer[i]];
    if (l->map.mul[i] != 1) v = mlc_tir_mul(M, v, i64(c, l->map.mul[i]));
    if (l->map.inner[i] >= 0) v = mlc_tir_add(M, v, idx[l->map.inner[i]]);
    if (l->map.div[i] != 1) v = mlc_tir_binary(M, MLC_TIR_FLOORDIV, v, i64(c, l->map.div[i]));
    if (l->map.mod[i]) v = mlc_tir_binary(M, MLC_TIR_FLOORMOD, v, i64(c, l->map.mod[i]));
    xi[i] = v;
  }
  return mlc_te_load(b, c->in[0], l->map.src_rank, xi);
}

/* y = x moved from layout src to dst (attrs, see mlc_layout_map) */
mlc_status mlc_lg_layout_transform(mlc_lg_call *c, mlc_te_tensor **out) {
  mlc_layout src, dst;
  lt_ctx l = {c, {0}};
  if (mlc_layout_parse(mlc_attrs_str(c->attrs, c->nattrs, "src", NULL), &src) ||
      mlc_layout_parse(mlc_attrs_str(c->attrs, c->nattrs, "dst", NULL), &dst) ||
      mlc_layout_map_make(&src, &dst, &l.map) || src.rank != c->arg_types[0].rank ||
      dst.rank != c->out_types[0].rank)
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "bad layouts");
  if (!c->in[0]) return mlc_lg_error(c, MLC_INTERNAL, "input inlined");
  mlc_tir_expr **shape = mlc_lg_shape(c, &c->out_types[0]);
  if (!shape) return mlc_oom();
  return mlc_te_compute(c->b, "T_layout_trans", c->out_types[0].rank, shape, NULL, lt_body, &l, out);
}

/* ---- conv2d_nchwc ------------------------------------------------------------- */

typedef struct nc_ctx {
  mlc_lg_call *c;
  int64_t stride[2], pad[4], dil[2];
  int depthwise;
  mlc_dtype acc;
  mlc_te_tensor *stage;
  mlc_te_tensor *padded; /* the input with its border of zeros, or NULL */
  int64_t flat;          /* a flat conv: the tile's rows (pixels), else 0 */
  int flat_copy;         /* a flat 1x1 conv: the input copied flat, [N, C, Q, T, c] */
  int flat_direct;       /* a flat 1x1 conv of stride 1: the input read in place */
  int64_t clamp_ow;      /* rows of a 1x1 conv wider than its output: ow read as min(ow, this) */
} nc_ctx;

/* An ints attribute of |n| entries (|dflt| when absent or of another length). */
static void ints_attr(mlc_lg_call *c, const char *name, int n, int64_t dflt, int64_t *out) {
  const mlc_attr *a = mlc_lg_attr(c, name);
  int ok = a && a->kind == MLC_ATTR_INTS && a->n == n;
  for (int i = 0; i < n; i++) out[i] = ok ? a->ints[i] : dflt;
}

/* Flat pixel p = q * T + t of a flat conv (q, t: idx[2], idx[3]), or
** min(p, |last|) when |last| >= 0: sets its output row p / OW and column
** p % OW in o[0], o[1]; returns p. */
static mlc_tir_expr *flat_pixel(nc_ctx *n, mlc_tir_expr *const *idx, int64_t last, mlc_tir_expr **o) {
  mlc_lg_call *c = n->c;
  mlc_tir_expr *p = mlc_tir_add(M, mlc_tir_mul(M, idx[2], i64(c, n->flat)), idx[3]);
  if (last >= 0) p = mlc_tir_min(M, p, i64(c, last));
  mlc_tir_expr *w = i64(c, c->out_types[0].dims[3]);
  o[0] = mlc_tir_binary(M, MLC_TIR_FLOORDIV, p, w);
  o[1] = mlc_tir_binary(M, MLC_TIR_FLOORMOD, p, w);
  return p;
}

static mlc_tir_expr *nc_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  nc_ctx *n = user;
  mlc_lg_call *c = n->c;
  const mlc_type *x = &c->arg_types[0], *wt = &c->arg_types[1];
  mlc_tir_expr *axes[4], *xi[5], *wi[6], *cond = NULL;
  int na = 0;
  mlc_tir_expr *rco = n->depthwise ? NULL : mlc_te_reduce_axis(b, i64(c, wt->dims[1]), "rco");
  if (rco) axes[na++] = rco;
  mlc_tir_expr *rk[2];
  rk[0] = mlc_te_reduce_axis(b, i64(c, wt->dims[2]), "rkh");
  rk[1] = mlc_te_reduce_axis(b, i64(c, wt->dims[3]), "rkw");
  axes[na++] = rk[0];
  axes[na++] = rk[1];
  mlc_tir_expr *rci = n->depthwise ? NULL : mlc_te_reduce_axis(b, i64(c, wt->dims[4]), "rci");
  if (rci) axes[na++] = rci;
  xi[0] = idx[0];
  xi[1] = n->depthwise ? idx[1] : rco;
  xi[4] = n->depthwise ? idx[4] : rci;
  mlc_tir_expr *o[2] = {idx[2], idx[3]};
  if (n->flat && !n->flat_copy) {
    /* in place: pixel min(p, H * W - 1), the last tile's extra pixels
    ** repeating the last */
    flat_pixel(n, idx, n->flat_direct ? x->dims[2] * x->dims[3] - 1 : -1, o);
  } else if (n->clamp_ow) { /* the extra columns read the last one again */
    o[1] = mlc_tir_min(M, o[1], i64(c, n->clamp_ow));
  }
  for (int i = 0; i < 2; i++) {
    /* the flat copy holds the strided pixels */
    mlc_tir_expr *p = n->flat_copy ? o[i] : mlc_tir_mul(M, o[i], i64(c, n->stride[i]));
    if (n->pad[i] && !n->padded) p = mlc_tir_sub(M, p, i64(c, n->pad[i]));
    p = mlc_tir_add(M, p, n->dil[i] == 1 ? rk[i] : mlc_tir_mul(M, rk[i], i64(c, n->dil[i])));
    xi[2 + i] = p;
    if (n->padded) continue;
    if (n->pad[i] > 0) cond = cond ? mlc_tir_binary(M, MLC_TIR_AND, cond, mlc_tir_binary(M, MLC_TIR_GE, p, i64(c, 0)))
                                   : mlc_tir_binary(M, MLC_TIR_GE, p, i64(c, 0));
    if (n->pad[2 + i] > 0) {
      mlc_tir_expr *lt = mlc_tir_binary(M, MLC_TIR_LT, p, mlc_lg_dim(c, x, 2 + i));
      cond = cond ? mlc_tir_binary(M, MLC_TIR_AND, cond, lt) : lt;
    }
  }
  wi[0] = idx[1];
  wi[1] = n->depthwise ? i64(c, 0) : rco;
  wi[2] = rk[0];
  wi[3] = rk[1];
  wi[4] = n->depthwise ? i64(c, 0) : rci;
  wi[5] = idx[4];
  mlc_tir_expr *xv = n->padded ? mlc_te_load(b, n->padded, 5, xi) : mlc_lg_arg_load(c, 0, xi);
  mlc_tir_expr *p = mlc_tir_mul(M, mlc_tir_cast(M, n->acc, xv),
                                mlc_tir_cast(M, n->acc, mlc_lg_arg_load(c, 1, wi)));
  if (cond) p = mlc_tir_select(M, cond, p, mlc_lg_imm(c, n->acc, 0));
  return mlc_te_sum(b, p, axes, na);
}

/* x[n, C, h - pad_top, w - pad_left, c] inside x, else 0 */
static mlc_tir_expr *nc_pad_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  nc_ctx *n = user;
  mlc_lg_call *c = n->c;
  const mlc_type *x = &c->arg_types[0];
  mlc_tir_expr *xi[5] = {idx[0], idx[1], NULL, NULL, idx[4]}, *cond = NULL;
  for (int i = 0; i < 2; i++) {
    mlc_tir_expr *p = mlc_tir_sub(M, idx[2 + i], i64(c, n->pad[i]));
    mlc_tir_expr *in = mlc_tir_binary(M, MLC_TIR_AND, mlc_tir_binary(M, MLC_TIR_GE, p, i64(c, 0)),
                                      mlc_tir_binary(M, MLC_TIR_LT, p, mlc_lg_dim(c, x, 2 + i)));
    cond = cond ? mlc_tir_binary(M, MLC_TIR_AND, cond, in) : in;
    xi[2 + i] = p;
  }
  return mlc_tir_select(M, cond, mlc_lg_arg_load(c, 0, xi), mlc_lg_imm(c, x->dtype, 0));
}

/* A flat 1x1 conv's input copy [N, C, Q, T, c]: pixel p = q * T + t of x
** (row p / W, column p % W) below H * W, else 0. */
static mlc_tir_expr *nc_flat_pad_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  nc_ctx *n = user;
  mlc_lg_call *c = n->c;
  const mlc_type *x = &c->arg_types[0];
  const mlc_type *ot = &c->out_types[0];
  mlc_tir_expr *o[2];
  mlc_tir_expr *p = flat_pixel(n, idx, -1, o);
  mlc_tir_expr *xi[5] = {idx[0], idx[1], mlc_tir_mul(M, o[0], i64(c, n->stride[0])),
                         mlc_tir_mul(M, o[1], i64(c, n->stride[1])), idx[4]};
  mlc_tir_expr *in = mlc_tir_binary(M, MLC_TIR_LT, p, i64(c, ot->dims[2] * ot->dims[3]));
  return mlc_tir_select(M, in, mlc_lg_arg_load(c, 0, xi), mlc_lg_imm(c, x->dtype, 0));
}

/* The accumulator plus bias[K, k] (argument 2, when present), converted. */
static mlc_tir_expr *nc_bias_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  nc_ctx *n = user;
  mlc_lg_call *c = n->c;
  mlc_tir_expr *v;
  if (n->flat) { /* pixel p = oh * OW + ow at [p / T, p % T] */
    mlc_tir_expr *p = mlc_tir_add(M, mlc_tir_mul(M, idx[2], i64(c, c->out_types[0].dims[3])), idx[3]);
    mlc_tir_expr *t = i64(c, n->flat);
    mlc_tir_expr *ai[5] = {idx[0], idx[1], mlc_tir_binary(M, MLC_TIR_FLOORDIV, p, t),
                           mlc_tir_binary(M, MLC_TIR_FLOORMOD, p, t), idx[4]};
    v = mlc_te_load(b, n->stage, 5, ai);
  } else {
    v = mlc_te_load(b, n->stage, n->stage->rank, idx);
  }
  if (c->nargs > 2) {
    mlc_tir_expr *bi[2] = {idx[1], idx[4]};
    v = mlc_tir_add(M, v, mlc_tir_cast(M, n->acc, mlc_lg_arg_load(c, 2, bi)));
  }
  return mlc_tir_cast(M, c->out_types[0].dtype, v);
}

/* The columns of rule T's tile: the block's vectors when the channel
** block spans several (16 channels in 8-lane vectors), else the output
** channel chunks (one for a depthwise conv, which reads its own channel). */
static int64_t tile_cols(const mlc_type *ot, int depthwise, const mlc_tile_limits *lim) {
  if (ot->dims[4] > lim->lanes && ot->dims[4] % lim->lanes == 0) return ot->dims[4] / lim->lanes;
  return depthwise ? 1 : ot->dims[1];
}

/*
** The output width the accumulator covers: the width itself, or up to an
** eighth more (on 8-lane targets at least 2 more) if the default
** schedule's register tile for the target (rows of the width by columns
** of output channel chunks or of the block's vectors, mlc_tile_sizes)
** then loads less per FMA, counting the extra columns as waste; but only
** when the tile at the width itself loads more than 0.8 vectors per FMA,
** except for the 4 columns of a 32-channel block on 8-lane targets.  On
** an 8-lane target (12 accumulators) a width of 13 in 16-channel blocks
** (2 columns) has no tile of 2 columns: 14 would tile as 7 x 1 (8 loads
** per 7 FMAs), 15 tiles as 5 x 2 (7 per 10; SqueezeNet's 13x13 convs
** 0.69-0.77x against 7 x 1 on 14); in 32-channel blocks (4 columns) 56
** tiles as 57, 3 x 4 (ResNet-50 0.93x, median of 80 runs), and 7 as 9.
** The extra columns read zeros from the padded copy and are never stored.
*/
static int64_t acc_width(const mlc_type *ot, int depthwise, int vector_bits) {
  int64_t ow = ot->dims[3], best_w = ow;
  mlc_tile_limits lim = mlc_tile_limits_for(vector_bits);
  if (ot->dims[4] % (lim.lanes / 2) || ow < 2) return ow;
  int64_t cols = tile_cols(ot, depthwise, &lim), r, cc;
  mlc_tile_sizes(ow, cols, &lim, &r, &cc);
  /* a tile good enough: extra columns cost more (7 x 2 beat 8 x 4 on 7,
  ** 16 lanes); but a 32-channel block of 8-lane vectors (4 columns) tiles
  ** 56 as 4 x 2 of its vectors and 57 as 3 x 4: 3 broadcasts of the input
  ** per 12 FMAs, not 4 per 8 */
  if ((lim.lanes >= 16 || cols < 4 || depthwise) && (double)(r * cc) / (double)(r + cc) >= 1.25)
    return ow;
  double best = 0;
  /* up to an eighth more; on 8-lane targets at least 2 more (13 as 15: a
  ** 5 x 2 tile instead of 7 x 1 on 14, SqueezeNet's 13x13 convs) */
  int64_t extra = ow / 8 > 1 ? ow / 8 : 1;
  if (lim.lanes < 16 && extra < 2) extra = 2;
  for (int64_t w = ow; w <= ow + extra; w++) {
    mlc_tile_sizes(w, cols, &lim, &r, &cc);
    double score = (double)(r * cc) / (double)(r + cc) * (double)ow / (double)w;
    if (score > best * 1.05) { /* an extra column must pay for itself */
      best = score;
      best_w = w;
    }
  }
  return best_w;
}

/* Rows of the register tile rule T gives a conv of symbolic output width:
** those of a wide row (mlc_tile_sizes for 64 columns). */
#define NC_NOMINAL_WIDTH 64

/*
** On 8-lane targets, where the register tile on the rows of the output
** (acc_width) wastes part of a short width, a conv may tile its pixels
** flattened instead: the accumulator is [N, K, Q, T, k], T the tile's
** rows, Q * T the output's pixels rounded up to whole tiles; the output
** takes pixel oh * OW + ow from [p / T, p % T].  A width of 7 in
** 32-channel blocks tiles as 3 x 4 on 9 columns (7 of 9 computed columns
** kept), 28 as 3 x 4 on 30; flat, 49 pixels tile as 3 x 4 on 51, 784 on
** 786.  Three ways to read the input:
**
**  - a 1x1 conv of stride 1 without padding reads its input in place, at
**    pixel min(p, H * W - 1): the pixels of NCHWc are flat already, and
**    the last tile's extra pixels read the last one again (their sums are
**    never stored);
**  - a strided 1x1 conv without padding reads a copy of its input of the
**    same flat shape (the pixels the stride picks, zeros after the last):
**    a matrix product over the pixels, whose loads are contiguous;
**  - any other conv reads its padded copy at row (p / OW) * s + kh * d,
**    column (p % OW) * s + kw * d (the copy has the rows the last tile
**    reaches); the tile's pixels are unrolled, so each has its row and
**    column computed once per tile, outside the reduction.
**
** Flat, the epilogue runs after the whole accumulator (or a panel of
** it), not under its tile.  So a stride-1 1x1 conv goes flat only where
** the flat tile's share of kept work beats the rows' by 3% with a
** reduction of 256 or more (14x14 and 28x28, whose rows compute 15 and
** 30 columns: 1024->256 at 14x14 0.93-0.95x, 512->128 at 28x28
** 0.93-0.95x, 256->1024 at 14x14 0.94x), by 15% with a shorter one (7x7;
** at 28x28 a reduction of 128, 128->512, was 1.10x slower flat, 64->256
** at 56x56 1.3x); others wherever the flat tile keeps more, except a conv
** whose reduction is shorter than 256 (the stem's 3 channels x 3 x 3,
** 1.6x slower flat: its tile is mostly the epilogue).  ResNet-18 0.88-0.92x,
** ResNet-50 0.94-0.96x.  Only for tiles of 4 columns (32-channel blocks):
** in 16-channel blocks the flat tile is 6 pixels x 2 vectors, which LLVM
** keeps in registers only by spilling (a 1x1 conv 2048->512 at 7x7 1.26x
** slower than its rows, a 3x3 conv of 512 at 7x7 1.9-2.6x; SqueezeNet 0.97x
** without them).  Returns T, or 0 for the rows.
*/
#define NC_FLAT_MIN_GAIN 1.15
#define NC_FLAT_DIRECT_GAIN 1.03
#define NC_FLAT_MIN_REDUCTION 256
/* rows a flat tile may take: a number every row count up to 6 divides */
#define NC_FLAT_NOMINAL_ROWS 60

/* The padded copy's shape for static H and W: [N, C, H + pads, W + pads,
** c], the batch as the input has it (symbolic or not). */
static void padded_shape(nc_ctx *n, mlc_tir_expr **ps) {
  mlc_lg_call *c = n->c;
  const mlc_type *x = &c->arg_types[0];
  for (int d = 0; d < 5; d++)
    ps[d] = d == 2 || d == 3 ? i64(c, x->dims[d] + n->pad[d - 2] + n->pad[d]) : mlc_lg_dim(c, x, d);
}

/* whether a flat conv reads its input in place or through a flat copy,
** not its padded copy: a 1x1 conv without padding (see flat_rows) */
static int flat_1x1(const nc_ctx *n, const mlc_type *wt) {
  return wt->dims[2] == 1 && wt->dims[3] == 1 && !n->pad[0] && !n->pad[1] && !n->pad[2] && !n->pad[3];
}

/* whether a flat conv reads its input in place: a 1x1 conv of stride 1
** without padding, whose pixels are flat already */
static int flat_in_place(const nc_ctx *n, const mlc_type *wt) {
  return flat_1x1(n, wt) && n->stride[0] == 1 && n->stride[1] == 1;
}

static int64_t flat_rows(const nc_ctx *n, const mlc_type *x, const mlc_type *wt, const mlc_type *ot, int64_t aw,
                         int vector_bits) {
  mlc_tile_limits lim = mlc_tile_limits_for(vector_bits);
  if (lim.lanes >= 16 || n->depthwise || ot->dims[4] % (lim.lanes / 2)) return 0;
  if (MLC_DIM_IS_SYM(x->dims[2]) || MLC_DIM_IS_SYM(x->dims[3])) return 0;
  int one = flat_1x1(n, wt), direct = flat_in_place(n, wt);
  int64_t reduction = x->dims[1] * x->dims[4] * wt->dims[2] * wt->dims[3];
  if (!one && reduction < NC_FLAT_MIN_REDUCTION) return 0;
  int64_t cols = tile_cols(ot, 0, &lim), r, cc, tr, tc;
  if (cols < 4) return 0;
  mlc_tile_sizes(aw, cols, &lim, &r, &cc);
  double rows = (double)(r * cc) / (double)(r + cc) * (double)ot->dims[3] / (double)aw;
  mlc_tile_sizes(NC_FLAT_NOMINAL_ROWS, cols, &lim, &tr, &tc);
  int64_t p = ot->dims[2] * ot->dims[3], pp = (p + tr - 1) / tr * tr;
  double flat = (double)(tr * tc) / (double)(tr + tc) * (double)p / (double)pp;
  double gain = !direct ? 1.0 : reduction >= NC_FLAT_MIN_REDUCTION ? NC_FLAT_DIRECT_GAIN : NC_FLAT_MIN_GAIN;
  return tr > 1 && flat > rows * gain ? tr : 0;
}

/*
** conv2d_nchwc of symbolic spatial extents.  The accumulator's width is the
** output width rounded up to the register tile's rows, tr:
** ((OW + tr - 1) // tr) * tr, so that rule T splits it into whole tiles with
** no bounds test in the micro-kernel (at most tr - 1 extra columns per row,
** reading zeros from the padded copy, never stored): the fast path of a
** static width, for any width.
*/
static mlc_status nc_symbolic(mlc_lg_call *c, nc_ctx *n, mlc_tir_expr **shape, const char *const *names,
                              mlc_te_tensor **out) {
  const mlc_type *x = &c->arg_types[0], *wt = &c->arg_types[1], *ot = &c->out_types[0];
  mlc_tile_limits lim = mlc_tile_limits_for(c->vector_bits);
  int64_t tr = 1, tc = 1;
  if (ot->dims[4] % (lim.lanes / 2) == 0) mlc_tile_sizes(NC_NOMINAL_WIDTH, tile_cols(ot, n->depthwise, &lim), &lim, &tr, &tc);
  mlc_tir_expr *aw = shape[3];
  if (tr > 1)
    aw = mlc_tir_mul(M, mlc_tir_binary(M, MLC_TIR_FLOORDIV, mlc_tir_add(M, shape[3], i64(c, tr - 1)), i64(c, tr)),
                     i64(c, tr));
  /* The padded copy holds what the accumulator reads, in terms of the
  ** output's extents: (OH - 1) * stride + (KH - 1) * dil + 1 rows and
  ** (aw - 1) * stride + (KW - 1) * dil + 1 columns (the input's last rows
  ** and columns no window reaches are left out; the extra columns are
  ** zeros), so that the schedule proves a tile's part of it in bounds and
  ** keeps it in a small buffer of its own. */
  mlc_tir_expr *ps[5];
  for (int d = 0; d < 5; d++) ps[d] = mlc_lg_dim(c, x, d);
  mlc_tir_expr *ends[2] = {shape[2], aw};
  for (int i = 0; i < 2; i++)
    ps[2 + i] = mlc_tir_add(M, mlc_tir_mul(M, ends[i], i64(c, n->stride[i])),
                            i64(c, (wt->dims[2 + i] - 1) * n->dil[i] + 1 - n->stride[i]));
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_pad", 5, ps, NULL, nc_pad_body, n, &n->padded));
  mlc_tir_expr *as[5] = {shape[0], shape[1], shape[2], aw, shape[4]};
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_conv2d_nchwc_acc", 5, as, names, nc_body, n, &n->stage));
  return mlc_te_compute(c->b, "T_conv2d_nchwc", 5, shape, NULL, nc_bias_body, n, out);
}

/* y[n, K, oh, ow, k] = sum over C, kh, kw, c of x[n, C, oh*s - p + kh*d, ow*s - p + kw*d, c]
** * w[K, C, kh, kw, c, k] (+ bias[K, k]); depthwise: C = K, c = k */
mlc_status mlc_lg_conv2d_nchwc(mlc_lg_call *c, mlc_te_tensor **out) {
  const mlc_type *x = &c->arg_types[0], *wt = &c->arg_types[1];
  nc_ctx n;
  memset(&n, 0, sizeof n);
  n.c = c;
  if (x->rank != 5 || wt->rank != 6 || !mlc_dtype_is_float(x->dtype))
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "input [N, C, H, W, c] and weight [K, C, KH, KW, c, k] of floats expected");
  if (MLC_DIM_IS_SYM(x->dims[1]) || MLC_DIM_IS_SYM(x->dims[4]))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "symbolic channel blocks");
  if (!c->in[0] || !c->in[1]) return mlc_lg_error(c, MLC_INTERNAL, "input inlined");
  ints_attr(c, "strides", 2, 1, n.stride);
  ints_attr(c, "pads", 4, 0, n.pad);
  ints_attr(c, "dilations", 2, 1, n.dil);
  n.depthwise = mlc_lg_int(c, "groups", 1) != 1;
  n.acc = x->dtype == MLC_DTYPE_F16 || x->dtype == MLC_DTYPE_BF16 ? MLC_DTYPE_F32 : x->dtype;
  const mlc_type *ot = &c->out_types[0];
  mlc_tir_expr **shape = mlc_lg_shape(c, ot);
  if (!shape) return mlc_oom();
  static const char *const names[5] = {"n", "oc_chunk", "oh", "ow", "oc_block"};
  if (MLC_DIM_IS_SYM(x->dims[2]) || MLC_DIM_IS_SYM(x->dims[3]) || MLC_DIM_IS_SYM(ot->dims[3]))
    return nc_symbolic(c, &n, shape, names, out);
  int64_t aw = acc_width(ot, n.depthwise, c->vector_bits);
  n.flat = flat_rows(&n, x, wt, ot, aw, c->vector_bits);
  if (n.flat) {
    int64_t q = (ot->dims[2] * ot->dims[3] + n.flat - 1) / n.flat;
    n.flat_direct = flat_in_place(&n, wt);
    n.flat_copy = flat_1x1(&n, wt) && !n.flat_direct;
    if (n.flat_copy) {
      mlc_tir_expr *ps[5] = {mlc_lg_dim(c, x, 0), i64(c, x->dims[1]), i64(c, q), i64(c, n.flat), i64(c, x->dims[4])};
      MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_pad", 5, ps, NULL, nc_flat_pad_body, &n, &n.padded));
    } else if (!n.flat_direct) {
      mlc_tir_expr *ps[5];
      padded_shape(&n, ps);
      int64_t rows = (q * n.flat - 1) / ot->dims[3] * n.stride[0] + (wt->dims[2] - 1) * n.dil[0] + 1;
      if (rows > x->dims[2] + n.pad[0] + n.pad[2]) ps[2] = i64(c, rows);
      MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_pad", 5, ps, NULL, nc_pad_body, &n, &n.padded));
    }
    mlc_tir_expr *as[5] = {shape[0], shape[1], i64(c, q), i64(c, n.flat), shape[4]};
    static const char *const flat_names[5] = {"n", "oc_chunk", "pq", "pt", "oc_block"};
    MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_conv2d_nchwc_acc", 5, as, flat_names, nc_body, &n, &n.stage));
    return mlc_te_compute(c->b, "T_conv2d_nchwc", 5, shape, NULL, nc_bias_body, &n, out);
  }
  /* A padded copy of the input first: the reduction's inner loop then has
  ** no bounds test (the default schedule keeps the copy, rule F1); it
  ** also covers the accumulator's extra columns.  A 1x1 conv without
  ** padding needs none: its extra columns read the last column again
  ** (their sums are never stored), where a copy of 56 columns to 57 cost
  ** a 1x1 conv 256->64 at 56x56 (a reduction of 256 per tile) 10%. */
  if (aw > ot->dims[3] && flat_1x1(&n, wt)) n.clamp_ow = ot->dims[3] - 1;
  else if (n.pad[0] || n.pad[1] || n.pad[2] || n.pad[3] || aw > ot->dims[3]) {
    mlc_tir_expr *ps[5];
    padded_shape(&n, ps);
    int64_t need = (aw - 1) * n.stride[1] + (wt->dims[3] - 1) * n.dil[1] + 1;
    if (need > x->dims[3] + n.pad[1] + n.pad[3]) ps[3] = i64(c, need);
    MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_pad", 5, ps, NULL, nc_pad_body, &n, &n.padded));
  }
  if (c->nargs < 3 && n.acc == ot->dtype && aw == ot->dims[3])
    return mlc_te_compute(c->b, "T_conv2d_nchwc", 5, shape, names, nc_body, &n, out);
  mlc_tir_expr *as[5] = {shape[0], shape[1], shape[2], i64(c, aw), shape[4]};
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_conv2d_nchwc_acc", 5, as, names, nc_body, &n, &n.stage));
  return mlc_te_compute(c->b, "T_conv2d_nchwc", 5, shape, NULL, nc_bias_body, &n, out);
}

/* ---- matmul_packed ------------------------------------------------------------- */

typedef struct mp_ctx {
  mlc_lg_call *c;
  mlc_dtype acc;
  mlc_te_tensor *stage;
  mlc_tir_expr *row0;     /* symbolic rows: the first row the stage computes (NULL: 0) */
  mlc_te_tensor *main_, *tail; /* symbolic rows: the whole tiles and the rest */
  mlc_tir_expr *mm;       /* symbolic rows: the rows of whole tiles */
} mp_ctx;

static mlc_tir_expr *mp_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mp_ctx *p = user;
  mlc_lg_call *c = p->c;
  const mlc_type *a = &c->arg_types[0], *wt = &c->arg_types[1];
  int r = a->rank;
  mlc_tir_expr *ai[MLC_LAYOUT_MAX_RANK], *wi[3];
  mlc_tir_expr *k = mlc_te_reduce_axis(b, i64(c, wt->dims[1]), "k");
  for (int d = 0; d < r - 1; d++) ai[d] = idx[d];
  if (p->row0 && r >= 2) ai[r - 2] = mlc_tir_add(M, p->row0, idx[r - 2]);
  ai[r - 1] = k;
  mlc_tir_expr *n = idx[r - 1], *nb = i64(c, wt->dims[2]);
  wi[0] = mlc_tir_binary(M, MLC_TIR_FLOORDIV, n, nb);
  wi[1] = k;
  wi[2] = mlc_tir_binary(M, MLC_TIR_FLOORMOD, n, nb);
  mlc_tir_expr *v = mlc_tir_mul(M, mlc_tir_cast(M, p->acc, mlc_lg_arg_load(c, 0, ai)),
                                mlc_tir_cast(M, p->acc, mlc_lg_arg_load(c, 1, wi)));
  return mlc_te_sum(b, v, &k, 1);
}

/* The row of the whole tiles' stage or of the tail's. */
static mlc_tir_expr *mp_rows_load(mlc_te_builder *b, mp_ctx *p, mlc_tir_expr *const *idx) {
  mlc_lg_call *c = p->c;
  int r = p->main_->rank;
  mlc_tir_expr *ti[MLC_LAYOUT_MAX_RANK];
  for (int d = 0; d < r; d++) ti[d] = idx[d];
  ti[r - 2] = mlc_tir_sub(M, idx[r - 2], p->mm);
  return mlc_tir_select(M, mlc_tir_binary(M, MLC_TIR_LT, idx[r - 2], p->mm), mlc_te_load(b, p->main_, r, idx),
                        mlc_te_load(b, p->tail, r, ti));
}

/* The accumulator plus bias[n] (argument 2, when present), converted. */
static mlc_tir_expr *mp_bias_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  mp_ctx *p = user;
  mlc_lg_call *c = p->c;
  mlc_tir_expr *v = p->main_ ? mp_rows_load(b, p, idx) : mlc_te_load(b, p->stage, p->stage->rank, idx);
  if (c->nargs > 2) {
    mlc_tir_expr *bi = idx[(p->main_ ? p->main_->rank : p->stage->rank) - 1];
    v = mlc_tir_add(M, v, mlc_tir_cast(M, p->acc, mlc_lg_arg_load(c, 2, &bi)));
  }
  return mlc_tir_cast(M, c->out_types[0].dtype, v);
}

/* y[..., m, n] = sum over k of a[..., m, k] * wp[n / NB, k, n % NB] (+ bias[n]) */
mlc_status mlc_lg_matmul_packed(mlc_lg_call *c, mlc_te_tensor **out) {
  const mlc_type *a = &c->arg_types[0], *wt = &c->arg_types[1];
  if (a->rank < 2 || a->rank > MLC_LAYOUT_MAX_RANK || wt->rank != 3 || !mlc_dtype_is_float(a->dtype))
    return mlc_lg_error(c, MLC_INVALID_ARGUMENT, "input [..., M, K] and weight [N/NB, K, NB] of floats expected");
  mp_ctx p = {c, a->dtype == MLC_DTYPE_F16 || a->dtype == MLC_DTYPE_BF16 ? MLC_DTYPE_F32 : a->dtype, NULL,
              NULL, NULL, NULL, NULL};
  const mlc_type *ot = &c->out_types[0];
  mlc_tir_expr **shape = mlc_lg_shape(c, ot);
  if (!shape) return mlc_oom();
  int r = ot->rank;
  if (MLC_DIM_IS_SYM(ot->dims[r - 2]) && ot->dims[r - 1] % 16 == 0) {
    /* Symbolic rows (a sequence length): the rows of whole register tiles,
    ** (M // tr) * tr, a stage the default schedule tiles with no bounds
    ** test, then the other M % tr rows in a stage of their own, joined
    ** (with the bias) in the output.  tr is the tile's rows (as rule T
    ** picks them for a wide row count, mlc_tile_sizes). */
    mlc_tile_limits lim = mlc_tile_limits_for(c->vector_bits);
    int64_t tr = 1, tc = 1;
    mlc_tile_sizes(64, ot->dims[r - 1] / lim.lanes, &lim, &tr, &tc);
    if (tr > 1) {
      mlc_tir_expr *rows = shape[r - 2], *ms[MLC_LAYOUT_MAX_RANK], *ts[MLC_LAYOUT_MAX_RANK];
      p.mm = mlc_tir_mul(M, mlc_tir_binary(M, MLC_TIR_FLOORDIV, rows, i64(c, tr)), i64(c, tr));
      for (int d = 0; d < r; d++) ms[d] = ts[d] = shape[d];
      ms[r - 2] = p.mm;
      ts[r - 2] = mlc_tir_sub(M, rows, p.mm);
      MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_matmul_packed_tiles", r, ms, NULL, mp_body, &p, &p.main_));
      p.row0 = p.mm;
      MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_matmul_packed_rest", r, ts, NULL, mp_body, &p, &p.tail));
      p.row0 = NULL;
      return mlc_te_compute(c->b, "T_matmul_packed", r, shape, NULL, mp_bias_body, &p, out);
    }
  }
  if (c->nargs < 3 && p.acc == ot->dtype)
    return mlc_te_compute(c->b, "T_matmul_packed", ot->rank, shape, NULL, mp_body, &p, out);
  MLC_RETURN_IF_ERROR(mlc_te_compute(c->b, "T_matmul_packed_acc", ot->rank, shape, NULL, mp_body, &p, &p.stage));
  return mlc_te_compute(c->b, "T_matmul_packed", ot->rank, shape, NULL, mp_bias_body, &p, out);
}
