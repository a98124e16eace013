/*
** alter_layout.c: convolutions in the blocked layout NCHW[x]c on CPU, as
** TVM's x86 AlterOpLayout with conv2d_NCHWc, and matmuls with a constant
** weight packed in blocks of columns (rule 5).
**
** 1. Convs.  Each 2-d conv of main with a known channel count (N, H, W may
**    be symbolic), float32, a
**    constant weight (and bias), groups 1 or depthwise (groups = C = K,
**    weight [K, 1, KH, KW]), whose output channels K divide by 16 (else
**    by 8; else the conv stays NCHW) becomes
**
**      x' = layout_transform(x, "NCHW", "NCHW{c}c")
**      y' = conv2d_nchwc(x', layout_transform(W, "OIHW", "OIHW{c}i{k}o"),
**                        reshape(bias, [K/k, k]))
**      y  = layout_transform(y', "NCHW{k}c", "NCHW")
**
**    with k = 16 (or 8) the output block, a multiple of the vector width,
**    and c the input block: the block x already has in blocked form when
**    it divides C, else 16, 8, C itself when C < 16 (the first conv of an
**    image model: c = 3), else the largest divisor of C below 16.  On a
**    target of 8-lane vectors (AVX2) the block is 32 first, for K and for
**    C, where it divides them: a block of 4 vectors lets rule T hold a
**    tile of 3 pixels by 4 vectors (12 of the 16 registers), 3 broadcasts
**    of the input and 4 weight loads per 12 FMAs, where 16 channels (2
**    vectors) allow 4 x 2 (4 broadcasts per 8 FMAs) on the widths 56, 28
**    and 7 of image models.  A
**    depthwise conv reads input channel = output channel: c = k, weight
**    packed "OIHW1i{k}o".  The weight and bias transforms are constant:
**    the fold_constant that follows packs them when compiling.
** 2. Pushing layouts.  Every value computed in blocked form keeps its twin
**    (value id -> blocked value and block).  A later op whose operands
**    have twins runs on them instead, its result gets a twin too:
**      - elementwise ops (pattern ELEMWISE: relu, clip, cast, ...);
**      - binary broadcast ops (add, multiply, ...) whose other operand is
**        an activation of the output's shape (brought into the same block:
**        the residual add), a one-element tensor, or a per-channel
**        constant ([C, 1, 1] / [1, C, 1, 1], reshaped to [1, C/b, 1, 1, b],
**        folded when compiling);
**      - max/avg pooling over H, W (a 3-d pool whose third window axis is
**        the block, of extent 1), sum/mean/max/min/prod over axes (2, 3)
**        with keepdims (a global average pool), concat along channels
**        whose parts divide by the block.
**    A twin needed in another block is transformed directly
**    ("NCHW16c" -> "NCHW8c"), never through NCHW.
** 3. Back.  Each rewritten op's original result becomes
**    layout_transform(y', "NCHW{k}c", "NCHW"), and its uses (ops that need
**    NCHW, the returned values) take that; the dce after fold_constant
**    drops the transforms nobody uses.  So transforms stay at the model's
**    edges and in front of ops that need NCHW (reshape, matmul, ...), and
**    a transform back followed by one forward never appears.
**
** 4. Lone cheap convs stay.  A conv that would be blocked alone (its input
**    not blocked, its result feeding no op that can run blocked on the way
**    to another blockable conv) pays both transforms for itself: it stays
**    NCHW when it does fewer than ISOLATED_MIN_WORK multiply-adds per
**    element they move, unless it is strided along the width.  (The
**    blocked kernel itself was never slower than the NCHW one on the convs
**    of ResNet-18/50, MobileNetV2 and SqueezeNet.)
**
**   before: lv0 = R.conv(x, W1); lv1 = R.relu(lv0); gv = R.conv(lv1, W2)
**   after:  x1 = R.layout_transform(x, src="NCHW", dst="NCHW16c")
**           c0 = R.conv2d_nchwc(x1, W1'); r0 = R.relu(c0)
**           c1 = R.conv2d_nchwc(r0, W2')
**           gv = R.layout_transform(c1, src="NCHW16c", dst="NCHW")
**   (W1', W2' packed constants after fold_constant and dce)
**
** 5. Matmuls with a constant weight.  A matmul a [..., M, K] @ b [K, N]
**    with b a float32 constant, N a multiple of the target's vector lanes
**    and of nb (below), and at least
**    MATMUL_MIN_WORK multiply-adds (a symbolic dim of a counts as large:
**    the packing is done when compiling, it costs nothing at run time)
**    becomes
**
**      y = matmul_packed(a, layout_transform(b, "KN", "NK{nb}n"))
**
**    with nb the width of the register tile that the default schedule's
**    rule T gives the matmul (the vector lanes x the columns of
**    mlc_tile_sizes, from the
**    row extent: M, or the innermost
**    batch dim when M is 1): wp [N/nb, K, nb], so the column vectors of a
**    tile read one contiguous row of nb floats per k (b's rows are N floats
**    apart), and a tile never straddles two blocks (48 columns of blocks of
**    64 would read two rows, and divide to find them).  A classifier's
**    matrix-vector product on AVX2 (1000 columns, tiles of 5 vectors of
**    8) so reads 25 contiguous blocks, where b's rows made each tile read
**    160 bytes every 4000: ResNet-50's 2048 -> 1000 0.55x at 1 thread,
**    0.66x at 2.  When the rows are
**    symbolic, nb = 64 if it divides N, else 32, else 16.  fold_constant packs the weight; a
**    weight that is an input (--params-as-inputs) is not constant and the
**    matmul stays.  The result keeps its layout: nothing else changes.
**
** The pass emits without folding (m->fold is 0 while it runs), so the
** packing is fold_constant's.  New bindings carry the origin of the op they
** replace.  Rewrites go through graph.h (insertion point, remove, subst).
*/
#include <stdio.h>
#include <string.h>

#include "graph/graph_int.h"
#include "graph/pass.h"

/* Blocks a value may have twins in at once (e.g. 32, 16 and 8). */
#define MAX_TWINS 4

typedef struct twin {
  int64_t block;
  mlc_value *v;
} twin;

typedef struct lay {
  mlc_module *m;
  mlc_func *f;
  int nids;                      /* value ids at the start of the pass */
  twin (*twins)[MAX_TWINS];      /* by value id */
  char *feeds;                   /* by value id: flows into a blockable conv (rule 4) */
  mlc_subst subst;               /* original result -> its transform back */
  int block;                     /* insertion point: block of the current binding */
  int vector_bits;               /* the target's (0: 512), for register tile widths */
} lay;

static int has_id(const lay *L, const mlc_value *v) { return v && v->id >= 0 && v->id < L->nids; }

/* The twin of |v| in |block|, or any twin when |block| is 0; NULL if none. */
static twin *find_twin(lay *L, const mlc_value *v, int64_t block) {
  if (!has_id(L, v)) return NULL;
  for (int i = 0; i < MAX_TWINS; i++) {
    twin *t = &L->twins[v->id][i];
    if (t->v && (block == 0 || t->block == block)) return t;
  }
  return NULL;
}

static void set_twin(lay *L, const mlc_value *v, int64_t block, mlc_value *tv) {
  if (!has_id(L, v)) return;
  for (int i = 0; i < MAX_TWINS; i++) {
    twin *t = &L->twins[v->id][i];
    if (!t->v || t->block == block) {
      t->block = block;
      t->v = tv;
      return;
    }
  }
}

static void nchw_c(char *buf, size_t n, int64_t block) {
  snprintf(buf, n, "NCHW%lldc", (long long)block);
}

/* Emits layout_transform(|x|, src, dst) at the insertion point. */
static mlc_status transform(lay *L, mlc_value *x, const char *src, const char *dst, const mlc_origin *o,
                            mlc_value **out) {
  mlc_attr a[2] = {mlc_attr_str("src", src), mlc_attr_str("dst", dst)};
  return mlc_graph_emit1(L->f, MLC_OP_LAYOUT_TRANSFORM, &x, 1, a, 2, o, out);
}

/* The twin of the NCHW value |v| in |block| (channels divide by it):
** recorded, converted from a twin in another block, or transformed from
** |v| itself. */
static mlc_status get_twin(lay *L, mlc_value *v, int64_t block, const mlc_origin *o, mlc_value **out) {
  char s[32], d[32];
  twin *t = find_twin(L, v, block);
  if (t) {
    *out = t->v;
    return NULL;
  }
  nchw_c(d, sizeof d, block);
  t = find_twin(L, v, 0);
  if (t) {
    nchw_c(s, sizeof s, t->block);
    MLC_RETURN_IF_ERROR(transform(L, t->v, s, d, o, out));
  } else {
    MLC_RETURN_IF_ERROR(transform(L, v, "NCHW", d, o, out));
  }
  set_twin(L, v, block, *out);
  return NULL;
}

/* A float32 [N, C, H, W] value with a known channel count (N, H and W may
** be symbolic: the blocked kernels handle any extent). */
static int is_nchw(const mlc_value *v) {
  return v && v->type.rank == 4 && v->type.dtype == MLC_DTYPE_F32 && !MLC_DIM_IS_SYM(v->type.dims[1]);
}

/* Elements of |t| with each symbolic dim counted as NOMINAL_EXTENT (for
** cost estimates only). */
#define NOMINAL_EXTENT 32
static int64_t numel_nominal(const mlc_type *t) {
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++) {
    int64_t e = MLC_DIM_IS_SYM(t->dims[d]) ? NOMINAL_EXTENT : t->dims[d];
    if (e && n > INT64_MAX / e) return INT64_MAX;
    n *= e;
  }
  return n;
}

/* The current binding |b| (at the insertion point) computed |tv| in
** |block| for its output: record the twin, emit the transform back,
** substitute it for the output and remove |b|. */
static mlc_status replace(lay *L, mlc_binding *b, mlc_value *tv, int64_t block) {
  char s[32];
  mlc_value *back;
  mlc_value *y = b->outs[0];
  nchw_c(s, sizeof s, block);
  MLC_RETURN_IF_ERROR(transform(L, tv, s, "NCHW", &b->origin, &back));
  set_twin(L, y, block, tv);
  back->name = y->name; /* it stands for |y|: a returned |y| keeps its output name */
  mlc_subst_set(&L->subst, y, back);
  mlc_func_remove_binding(L->f, L->block, L->f->ins_index);
  return NULL;
}

/* ---- convolutions ---------------------------------------------------------- */

/* The widest block on |L|'s target: 32 channels (4 vectors) where a
** vector holds 8 floats, else 16 (see the header, rule 1). */
static int64_t widest_block(const lay *L) { return L->vector_bits == 256 ? 32 : 16; }

/* The output block of |k| channels: the widest, 16 or 8 that divides it,
** or 0 (no block). */
static int64_t out_block(const lay *L, int64_t k) {
  for (int64_t b = widest_block(L); b >= 8; b /= 2)
    if (k % b == 0) return b;
  return 0;
}

/* The input block of |c| channels (see the header), |have| x's twin block
** or 0. */
static int64_t in_block(const lay *L, int64_t c, int64_t have) {
  if (have && c % have == 0) return have;
  int64_t b = out_block(L, c);
  if (b) return b;
  if (c < 16) return c;
  for (int64_t d = 15; d > 1; d--)
    if (c % d == 0) return d;
  return 1;
}

static int const_arg(const lay *L, const mlc_binding *b, int i) {
  return i >= b->nargs || mlc_value_const(L->m, b->args[i]) != NULL;
}

/* An ints attribute of exactly |n| entries, else the default; 0 when
** present with another length or kind. */
static int ints_of(const mlc_binding *b, const char *name, int n, int64_t dflt, int64_t *out) {
  const mlc_attr *a = mlc_attrs_find(b->attrs, b->nattrs, name);
  for (int i = 0; i < n; i++) out[i] = dflt;
  if (!a) return 1;
  if (a->kind != MLC_ATTR_INTS || a->n != n) return 0;
  for (int i = 0; i < n; i++) out[i] = a->ints[i];
  return 1;
}

/* Whether conv |b| may run blocked (see the header, rule 1). */
static int blockable(const lay *L, const mlc_binding *b) {
  int64_t v[4];
  if (b->kind != MLC_CALL_OP || b->op != MLC_OP_CONV || b->nargs < 2 || b->nouts != 1) return 0;
  const mlc_value *x = b->args[0], *w = b->args[1];
  if (!is_nchw(x) || !is_nchw(b->outs[0])) return 0;
  if (w->type.rank != 4 || !mlc_type_is_static(&w->type) || !const_arg(L, b, 1) || !const_arg(L, b, 2)) return 0;
  if (!ints_of(b, "strides", 2, 1, v) || !ints_of(b, "pads", 4, 0, v) || !ints_of(b, "dilations", 2, 1, v)) return 0;
  int64_t groups = mlc_attrs_int(b->attrs, b->nattrs, "groups", 1), c = x->type.dims[1], k = w->type.dims[0];
  if (groups != 1 && !(groups == c && k == c && w->type.dims[1] == 1)) return 0;
  return out_block(L, k) != 0;
}

/* Rule 4: a conv that would be blocked alone (its input not blocked yet,
** its result feeding nothing that can run blocked) pays a transform of its
** input and one of its output; it stays NCHW when it does fewer than
** ISOLATED_MIN_WORK multiply-adds per element those transforms move
** (measured: a lone 1x1 conv from 16 to 32 channels at 112x112, 11 per
** element, runs 2x slower blocked; the 7x7 stem of ResNet, 124 per
** element, 4x faster).  A conv strided along the width is blocked
** whatever its work: the NCHW kernel vectorizes the output width, so it
** reads its input in strided lanes (SqueezeNet's 3x3 stem alone, stride
** 2, 23 per element: 15x faster blocked, transforms included). */
#define ISOLATED_MIN_WORK 32

static int isolated_and_cheap(lay *L, const mlc_binding *b) {
  const mlc_value *x = b->args[0], *y = b->outs[0];
  const mlc_type *w = &b->args[1]->type;
  if (find_twin(L, x, 0) || L->feeds[y->id]) return 0;
  int64_t st[2];
  ints_of(b, "strides", 2, 1, st);
  if (st[1] != 1) return 0;
  int64_t macs = numel_nominal(&y->type), moved = numel_nominal(&x->type) + numel_nominal(&y->type);
  for (int d = 1; d < 4; d++) macs *= w->dims[d];
  return macs / ISOLATED_MIN_WORK < moved;
}

static mlc_status conv(lay *L, mlc_binding *b) {
  if (!blockable(L, b) || isolated_and_cheap(L, b)) return NULL;
  mlc_value *x = b->args[0], *w = b->args[1];
  int64_t st[2], pads[4], dil[2];
  ints_of(b, "strides", 2, 1, st);
  ints_of(b, "pads", 4, 0, pads);
  ints_of(b, "dilations", 2, 1, dil);
  int64_t groups = mlc_attrs_int(b->attrs, b->nattrs, "groups", 1);
  int64_t c = x->type.dims[1], k = w->type.dims[0];
  int depthwise = groups != 1;
  twin *have = find_twin(L, x, 0);
  int64_t kb = out_block(L, k), cb;
  if (depthwise) {
    if (have && have->block == out_block(L, have->block) && k % have->block == 0) kb = have->block;
    cb = kb;
  } else {
    cb = in_block(L, c, have ? have->block : 0);
  }
  const mlc_origin *o = &b->origin;
  char wl[48];
  mlc_value *xb, *wb, *args[3];
  MLC_RETURN_IF_ERROR(get_twin(L, x, cb, o, &xb));
  snprintf(wl, sizeof wl, "OIHW%lldi%lldo", (long long)(depthwise ? 1 : cb), (long long)kb);
  MLC_RETURN_IF_ERROR(transform(L, w, "OIHW", wl, o, &wb));
  args[0] = xb;
  args[1] = wb;
  if (b->nargs > 2) {
    int64_t shape[2] = {k / kb, kb};
    mlc_attr a = mlc_attr_ints("shape", shape, 2);
    MLC_RETURN_IF_ERROR(mlc_graph_emit1(L->f, MLC_OP_RESHAPE, &b->args[2], 1, &a, 1, o, &args[2]));
  }
  mlc_attr attrs[4] = {mlc_attr_ints("strides", st, 2), mlc_attr_ints("pads", pads, 4),
                       mlc_attr_ints("dilations", dil, 2), mlc_attr_int("groups", groups)};
  mlc_value *y;
  MLC_RETURN_IF_ERROR(mlc_graph_emit1(L->f, MLC_OP_CONV2D_NCHWC, args, b->nargs, attrs, 4, o, &y));
  return replace(L, b, y, kb);
}

/* ---- matmuls with a constant weight (rule 5) ------------------------------ */

/* Below this many multiply-adds a matmul stays (packing would not pay for
** the extra constant). */
#define MATMUL_MIN_WORK ((int64_t)1 << 16)

/* The column block of a matmul of |a| [..., M, K] by a weight of |n|
** columns (see the header). */
static int64_t matmul_block(const lay *L, const mlc_type *a, int64_t n) {
  int64_t rows = 1;
  for (int d = a->rank - 2; d >= 0; d--) {
    if (MLC_DIM_IS_SYM(a->dims[d])) return n % 64 == 0 ? 64 : n % 32 == 0 ? 32 : 16;
    if (a->dims[d] >= 2) {
      rows = a->dims[d];
      break;
    }
  }
  mlc_tile_limits lim = mlc_tile_limits_for(L->vector_bits);
  int64_t r, c;
  mlc_tile_sizes(rows, n / lim.lanes, &lim, &r, &c);
  return lim.lanes * c;
}

static mlc_status matmul(lay *L, mlc_binding *b) {
  if (b->nargs != 2 || b->nouts != 1) return NULL;
  mlc_value *a = b->args[0], *w = b->args[1];
  const mlc_type *at = &a->type, *wt = &w->type;
  if (at->rank < 2 || at->dtype != MLC_DTYPE_F32 || wt->rank != 2 || wt->dtype != MLC_DTYPE_F32 ||
      !mlc_type_is_static(wt) || !mlc_value_const(L->m, w))
    return NULL;
  int64_t k = wt->dims[0], n = wt->dims[1], work = k * n;
  mlc_tile_limits lim = mlc_tile_limits_for(L->vector_bits);
  if (n % lim.lanes || k < 1 || at->dims[at->rank - 1] != k) return NULL;
  for (int d = 0; d < at->rank - 1; d++) {
    if (at->dims[d] == 0) return NULL;
    if (MLC_DIM_IS_SYM(at->dims[d])) work = MATMUL_MIN_WORK;
    else if (work < MATMUL_MIN_WORK) work *= at->dims[d];
  }
  if (work < MATMUL_MIN_WORK) return NULL;
  int64_t nb = matmul_block(L, at, n);
  if (n % nb) return NULL;
  char wl[32];
  snprintf(wl, sizeof wl, "NK%lldn", (long long)nb);
  mlc_value *args[2] = {a, NULL}, *y;
  MLC_RETURN_IF_ERROR(transform(L, w, "KN", wl, &b->origin, &args[1]));
  MLC_RETURN_IF_ERROR(mlc_graph_emit1(L->f, MLC_OP_MATMUL_PACKED, args, 2, NULL, 0, &b->origin, &y));
  y->name = b->outs[0]->name;
  mlc_subst_set(&L->subst, b->outs[0], y);
  mlc_func_remove_binding(L->f, L->block, L->f->ins_index);
  return NULL;
}

/* ---- ops that follow the layout ------------------------------------------ */

/* relu(x'), clip(x'), ...: the same op on the twin. */
static mlc_status elemwise(lay *L, mlc_binding *b) {
  if (b->nargs != 1 || b->nouts != 1 || b->outs[0]->type.rank != 4) return NULL;
  twin *t = find_twin(L, b->args[0], 0);
  if (!t) return NULL;
  mlc_value *y, *a = t->v;
  int64_t block = t->block;
  MLC_RETURN_IF_ERROR(mlc_graph_emit1(L->f, b->op, &a, 1, b->attrs, b->nattrs, &b->origin, &y));
  return replace(L, b, y, block);
}

/* Whether |v| broadcasts to [N, C, H, W] as a per-channel vector (its
** dims right-aligned: C on axis 1, 1 elsewhere, rank >= 3). */
static int per_channel(const mlc_value *v, int64_t c) {
  const mlc_type *t = &v->type;
  if (t->rank < 3 || t->rank > 4 || !mlc_type_is_static(t)) return 0;
  for (int d = 0; d < t->rank; d++) {
    int axis = d + 4 - t->rank;
    if (t->dims[d] != (axis == 1 ? c : 1)) return 0;
  }
  return 1;
}

/* add(x', y'), multiply(x', scale [C, 1, 1]), ...: operands in the block. */
static mlc_status broadcast(lay *L, mlc_binding *b) {
  const mlc_type *ot = &b->outs[0]->type;
  if (b->nargs != 2 || b->nouts != 1 || ot->rank != 4 || MLC_DIM_IS_SYM(ot->dims[1])) return NULL;
  int64_t block = 0;
  for (int i = 0; i < 2 && !block; i++) {
    twin *t = mlc_type_equal(&b->args[i]->type, ot) ? find_twin(L, b->args[i], 0) : NULL;
    if (t) block = t->block;
  }
  if (!block) return NULL;
  int kind[2]; /* 0 activation, 1 one element, 2 per-channel constant */
  for (int i = 0; i < 2; i++) {
    const mlc_value *v = b->args[i];
    if (mlc_type_equal(&v->type, ot) && (find_twin(L, v, 0) || is_nchw(v)))
      kind[i] = 0;
    else if (mlc_type_numel(&v->type) == 1 && v->type.rank <= 4)
      kind[i] = 1;
    else if (mlc_value_const(L->m, v) && per_channel(v, ot->dims[1]))
      kind[i] = 2;
    else
      return NULL;
  }
  mlc_value *args[2], *y;
  for (int i = 0; i < 2; i++) {
    args[i] = b->args[i];
    if (kind[i] == 0) {
      MLC_RETURN_IF_ERROR(get_twin(L, b->args[i], block, &b->origin, &args[i]));
    } else if (kind[i] == 2) {
      int64_t shape[5] = {1, ot->dims[1] / block, 1, 1, block};
      mlc_attr a = mlc_attr_ints("shape", shape, 5);
      MLC_RETURN_IF_ERROR(mlc_graph_emit1(L->f, MLC_OP_RESHAPE, &b->args[i], 1, &a, 1, &b->origin, &args[i]));
    }
  }
  MLC_RETURN_IF_ERROR(mlc_graph_emit1(L->f, b->op, args, 2, b->attrs, b->nattrs, &b->origin, &y));
  return replace(L, b, y, block);
}

/* max_pool / avg_pool over H, W: a 3-d pool of the twin whose third
** window axis is the block, with kernel, stride and dilation 1, no pads. */
static mlc_status pool(lay *L, mlc_binding *b) {
  int64_t kernel[3], st[3], pads[6], dil[3];
  twin *t = b->nargs == 1 && b->nouts == 1 && b->args[0]->type.rank == 4 ? find_twin(L, b->args[0], 0) : NULL;
  if (!t || !mlc_attrs_find(b->attrs, b->nattrs, "kernel")) return NULL;
  if (!ints_of(b, "kernel", 2, 1, kernel) || !ints_of(b, "strides", 2, 1, st) || !ints_of(b, "pads", 4, 0, pads) ||
      !ints_of(b, "dilations", 2, 1, dil))
    return NULL;
  kernel[2] = st[2] = dil[2] = 1;
  int64_t p6[6] = {pads[0], pads[1], 0, pads[2], pads[3], 0};
  memcpy(pads, p6, sizeof pads);
  mlc_attr attrs[16];
  int n = 0;
  for (int i = 0; i < b->nattrs && n < 12; i++) {
    const char *nm = b->attrs[i].name;
    if (strcmp(nm, "kernel") && strcmp(nm, "strides") && strcmp(nm, "pads") && strcmp(nm, "dilations"))
      attrs[n++] = b->attrs[i];
  }
  attrs[n++] = mlc_attr_ints("kernel", kernel, 3);
  attrs[n++] = mlc_attr_ints("strides", st, 3);
  attrs[n++] = mlc_attr_ints("pads", pads, 6);
  if (mlc_attrs_find(b->attrs, b->nattrs, "dilations")) attrs[n++] = mlc_attr_ints("dilations", dil, 3);
  mlc_value *y, *a = t->v;
  int64_t block = t->block;
  MLC_RETURN_IF_ERROR(mlc_graph_emit1(L->f, b->op, &a, 1, attrs, n, &b->origin, &y));
  return replace(L, b, y, block);
}

/* sum/mean/max/min/prod over H, W with keepdims: the same axes of the twin. */
static mlc_status reduce(lay *L, mlc_binding *b) {
  const mlc_attr *ax = mlc_attrs_find(b->attrs, b->nattrs, "axes");
  if (b->nargs != 1 || b->nouts != 1 || b->args[0]->type.rank != 4) return NULL;
  if (!ax || ax->kind != MLC_ATTR_INTS || ax->n < 1 || mlc_attrs_int(b->attrs, b->nattrs, "keepdims", 1) != 1)
    return NULL;
  for (int i = 0; i < ax->n; i++)
    if (ax->ints[i] != 2 && ax->ints[i] != 3) return NULL;
  return elemwise(L, b); /* kept dims: the same op on the twin */
}

/* concat along channels of parts that all divide by the block of the
** first part with a twin. */
static mlc_status concat(lay *L, mlc_binding *b) {
  if (b->nouts != 1 || b->nargs < 1 || b->nargs > 64 || !is_nchw(b->outs[0]) ||
      mlc_attrs_int(b->attrs, b->nattrs, "axis", -1) != 1)
    return NULL;
  int64_t block = 0;
  for (int i = 0; i < b->nargs && !block; i++) {
    twin *t = find_twin(L, b->args[i], 0);
    if (t) block = t->block;
  }
  if (!block) return NULL;
  for (int i = 0; i < b->nargs; i++)
    if (!is_nchw(b->args[i]) || b->args[i]->type.dims[1] % block) return NULL;
  mlc_value *args[64], *y;
  for (int i = 0; i < b->nargs; i++) MLC_RETURN_IF_ERROR(get_twin(L, b->args[i], block, &b->origin, &args[i]));
  MLC_RETURN_IF_ERROR(mlc_graph_emit1(L->f, b->op, args, b->nargs, b->attrs, b->nattrs, &b->origin, &y));
  return replace(L, b, y, block);
}

/* Ops whose result can run blocked when their operand does (rule 2). */
static int follows(const mlc_binding *b) {
  if (b->kind != MLC_CALL_OP || (unsigned)b->op >= MLC_OP_COUNT) return 0;
  switch (b->op) {
  case MLC_OP_MAX_POOL: case MLC_OP_AVG_POOL: case MLC_OP_SUM: case MLC_OP_MEAN: case MLC_OP_MAX:
  case MLC_OP_MIN: case MLC_OP_PROD: case MLC_OP_CONCAT:
    return 1;
  case MLC_OP_BROADCAST_TO: case MLC_OP_WHERE: return 0;
  default: break;
  }
  return mlc_op_pattern[b->op] == MLC_PATTERN_ELEMWISE || mlc_op_pattern[b->op] == MLC_PATTERN_BROADCAST;
}

/* feeds[v] for every value of main: v is the input of a blockable conv, or
** an operand of an op that follows the layout whose result feeds one.
** Uses follow definitions: one backward walk. */
static void find_feeds(lay *L) {
  mlc_func *f = L->f;
  for (int bi = f->nblocks - 1; bi >= 0; bi--)
    for (int j = f->blocks[bi].n - 1; j >= 0; j--) {
      const mlc_binding *b = f->blocks[bi].bindings[j];
      if (blockable(L, b)) {
        if (has_id(L, b->args[0])) L->feeds[b->args[0]->id] = 1;
      } else if (follows(b) && b->nouts == 1 && has_id(L, b->outs[0]) && L->feeds[b->outs[0]->id]) {
        for (int a = 0; a < b->nargs; a++)
          if (has_id(L, b->args[a]) && b->args[a]->type.rank == 4) L->feeds[b->args[a]->id] = 1;
      }
    }
}

/* Rewrites the binding at the insertion point when its op allows. */
static mlc_status visit(lay *L, mlc_binding *b) {
  if (b->kind != MLC_CALL_OP || (unsigned)b->op >= MLC_OP_COUNT) return NULL;
  switch (b->op) {
  case MLC_OP_CONV: return conv(L, b);
  case MLC_OP_MATMUL: return matmul(L, b);
  case MLC_OP_MAX_POOL: case MLC_OP_AVG_POOL: return pool(L, b);
  case MLC_OP_SUM: case MLC_OP_MEAN: case MLC_OP_MAX: case MLC_OP_MIN: case MLC_OP_PROD: return reduce(L, b);
  case MLC_OP_CONCAT: return concat(L, b);
  case MLC_OP_BROADCAST_TO: case MLC_OP_WHERE: return NULL;
  default: break;
  }
  if (mlc_op_pattern[b->op] == MLC_PATTERN_ELEMWISE) return elemwise(L, b);
  if (mlc_op_pattern[b->op] == MLC_PATTERN_BROADCAST) return broadcast(L, b);
  return NULL;
}

static mlc_status run(lay *L) {
  mlc_func *f = L->f;
  for (int bi = 0; bi < f->nblocks; bi++) {
    L->block = bi;
    for (int j = 0; j < f->blocks[bi].n;) {
      mlc_binding *b = f->blocks[bi].bindings[j];
      int n = f->blocks[bi].n;
      mlc_func_insert_at(f, bi, j);
      mlc_status s = visit(L, b);
      if (s) return mlc_status_annotate(s, "alter_layout");
      /* next: the binding after |b|, or after what replaced it (a rewrite
      ** emits at least the new op and the transform back) */
      j = f->blocks[bi].n == n ? j + 1 : f->ins_index;
    }
  }
  mlc_func_append_at_end(f);
  mlc_subst_apply(&L->subst, f);
  return NULL;
}

/* The pass: rewrites main of |m| in place; |ctx| is borrowed (its target
** vector width). */
mlc_status mlc_pass_alter_layout(mlc_module *m, const mlc_pass_ctx *ctx) {
  mlc_func *f = mlc_module_func(m, "main");
  if (!f || m->next_value_id <= 0) return NULL;
  lay L;
  memset(&L, 0, sizeof L);
  L.m = m;
  L.f = f;
  L.nids = m->next_value_id;
  L.vector_bits = ctx && ctx->opt ? ctx->opt->vector_bits : 0;
  L.twins = mlc_calloc(m->alloc, (size_t)L.nids, sizeof *L.twins);
  L.feeds = mlc_calloc(m->alloc, (size_t)L.nids, 1);
  mlc_status s = L.twins && L.feeds ? mlc_subst_init(&L.subst, m) : mlc_oom();
  if (!s) find_feeds(&L);
  int fold = m->fold;
  m->fold = 0;
  if (!s) s = run(&L);
  m->fold = fold;
  mlc_subst_fini(&L.subst);
  mlc_free(m->alloc, L.twins, sizeof *L.twins * (size_t)L.nids);
  mlc_free(m->alloc, L.feeds, (size_t)L.nids);
  return s;
}
