/*
** infer_layout.c: data layout strings and the struct-info inference of the
** blocked-layout ops of ops.def, layout_transform, conv2d_nchwc and
** matmul_packed, which alter_layout (graph/passes/alter_layout.c)
** introduces.
**
** A layout names the meaning of each dim: "NCHW16c" is a 5-d tensor
** [N, C/16, H, W, 16] whose channel ch sits at [.., ch / 16, .., ch % 16].
**
**   layout_transform(x [1, 32, 8, 8], src "NCHW", dst "NCHW16c")   -> [1, 2, 8, 8, 16]
**   layout_transform(w [64, 32, 3, 3], src "OIHW", dst "OIHW16i16o") -> [4, 2, 3, 3, 16, 16]
**   conv2d_nchwc(x [1, 2, 8, 8, 16], w [4, 2, 3, 3, 16, 16], pads 1) -> [1, 4, 8, 8, 16]
**   matmul_packed(a [2, 5, 32], wp [3, 32, 32], bias [96])         -> [2, 5, 96]
**
** A split axis must be static and divisible by its block (no padding): the
** pass only blocks channel counts that divide.  Errors name the ONNX node
** (mlc_graph_call_error).
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MLC_GRAPH_INFER_SHORTHANDS
#include "graph/graph_int.h"

/* ---- layout strings ----------------------------------------------------- */

int mlc_layout_parse(const char *s, mlc_layout *out) {
  memset(out, 0, sizeof *out);
  if (!s || !*s) return -1;
  int seen[26] = {0}, blocked[26] = {0};
  while (*s) {
    if (out->rank >= MLC_LAYOUT_MAX_RANK) return -1;
    int64_t f = 0;
    if (*s >= '0' && *s <= '9') {
      while (*s >= '0' && *s <= '9') {
        if (f > ((int64_t)1 << 40)) return -1;
        f = f * 10 + (*s++ - '0');
      }
      if (f < 1 || !(*s >= 'a' && *s <= 'z')) return -1;
      int a = *s - 'a';
      if (!seen[a] || blocked[a]) return -1; /* a block follows its primal axis, once */
      blocked[a] = 1;
    } else if (*s >= 'A' && *s <= 'Z') {
      int a = *s - 'A';
      if (seen[a]) return -1;
      seen[a] = 1;
    } else {
      return -1;
    }
    out->axis[out->rank] = *s++;
    out->factor[out->rank] = f;
    out->rank++;
  }
  return 0;
}

/* The dim of |l| holding axis letter |ch|, or -1. */
static int find_axis(const mlc_layout *l, char ch) {
  for (int i = 0; i < l->rank; i++)
    if (l->axis[i] == ch) return i;
  return -1;
}

static char lower_of(char c) { return (char)(c - 'A' + 'a'); }
static char upper_of(char c) { return (char)(c - 'a' + 'A'); }

int mlc_layout_map_make(const mlc_layout *src, const mlc_layout *dst, mlc_layout_map *out) {
  int np_src = 0, np_dst = 0;
  memset(out, 0, sizeof *out);
  out->src_rank = src->rank;
  for (int i = 0; i < dst->rank; i++) np_dst += dst->factor[i] == 0;
  for (int i = 0; i < src->rank; i++) {
    char ch = src->axis[i];
    char up = src->factor[i] ? upper_of(ch) : ch;
    np_src += src->factor[i] == 0;
    int o = find_axis(dst, up);
    if (o < 0) return -1;
    int in = find_axis(dst, lower_of(up));
    int sb = find_axis(src, lower_of(up));
    out->outer[i] = o;
    out->inner[i] = in;
    out->mul[i] = in >= 0 ? dst->factor[in] : 1;
    /* the primal coordinate p = y[o] * g + y[in]; src's outer dim reads
    ** p / f, its block p % f */
    if (src->factor[i]) {
      out->div[i] = 1;
      out->mod[i] = src->factor[i];
    } else {
      out->div[i] = sb >= 0 ? src->factor[sb] : 1;
      out->mod[i] = 0;
    }
  }
  return np_src == np_dst ? 0 : -1;
}

/* ---- layout_transform ----------------------------------------------------- */

/* Reads and parses the layout attribute |name| into *|l|. */
static mlc_status layout_attr(const mlc_call_info *ci, const char *name, mlc_layout *l) {
  const mlc_attr *a = mlc_attrs_find(ci->attrs, ci->nattrs, name);
  if (!a) return ERR("attribute %s is missing", name);
  if (a->kind != MLC_ATTR_STRING || !a->s) return ERR("attribute %s must be a string", name);
  if (mlc_layout_parse(a->s, l)) return ERR("attribute %s = \"%s\" is not a layout", name, a->s);
  return NULL;
}

/* x of layout src -> y of layout dst; any dtype (data movement). */
mlc_status mlc_infer_layout_transform(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  mlc_layout src, dst;
  mlc_layout_map map;
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t primal[26], dims[MLC_LAYOUT_MAX_RANK];
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MLC_LAYOUT_MAX_RANK));
  MLC_RETURN_IF_ERROR(layout_attr(ci, "src", &src));
  MLC_RETURN_IF_ERROR(layout_attr(ci, "dst", &dst));
  if (mlc_layout_map_make(&src, &dst, &map))
    return ERR("layouts %s and %s do not have the same axes", mlc_attrs_str(ci->attrs, ci->nattrs, "src", ""),
               mlc_attrs_str(ci->attrs, ci->nattrs, "dst", ""));
  if (x->rank != src.rank)
    return ERR("input of rank %d does not have layout %s (rank %d)", x->rank,
               mlc_attrs_str(ci->attrs, ci->nattrs, "src", ""), src.rank);
  /* the primal extents, from src */
  for (int i = 0; i < src.rank; i++) {
    if (src.factor[i]) continue;
    int a = src.axis[i] - 'A', b = find_axis(&src, lower_of(src.axis[i]));
    int split = b >= 0 || find_axis(&dst, lower_of(src.axis[i])) >= 0;
    if (split && MLC_DIM_IS_SYM(x->dims[i]))
      return UNIMPL("axis %c (dim %d) is symbolic and blocked", src.axis[i], i);
    primal[a] = x->dims[i];
    if (b >= 0) {
      if (x->dims[b] != src.factor[b])
        return ERR("dim %d of the input has extent %lld, not its block %lld", b, LL(x->dims[b]),
                   LL(src.factor[b]));
      if (x->dims[i] > INT64_MAX / src.factor[b]) return ERR("axis %c overflows", src.axis[i]);
      primal[a] = x->dims[i] * src.factor[b];
    }
  }
  for (int i = 0; i < dst.rank; i++) {
    if (dst.factor[i]) {
      dims[i] = dst.factor[i];
      continue;
    }
    int a = dst.axis[i] - 'A', b = find_axis(&dst, lower_of(dst.axis[i]));
    dims[i] = primal[a];
    if (b >= 0) {
      if (primal[a] % dst.factor[b])
        return ERR("axis %c of extent %lld does not divide by its block %lld", dst.axis[i],
                   LL(primal[a]), LL(dst.factor[b]));
      dims[i] = primal[a] / dst.factor[b];
    }
  }
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, dst.rank);
}

/* ---- conv2d_nchwc --------------------------------------------------------- */

/* An ints attribute of exactly |n| entries (|dflt| each when absent). */
static mlc_status ints_n(const mlc_call_info *ci, const char *name, int n, int64_t dflt, int64_t *out) {
  const mlc_attr *a = mlc_attrs_find(ci->attrs, ci->nattrs, name);
  for (int i = 0; i < n; i++) out[i] = dflt;
  if (!a) return NULL;
  if (a->kind != MLC_ATTR_INTS || a->n != n) return ERR("attribute %s must be %d ints", name, n);
  for (int i = 0; i < n; i++) out[i] = a->ints[i];
  return NULL;
}

/* x [N, C/c, H, W, c], w [K/k, C/c, KH, KW, c, k] (depthwise: [K/k, 1, KH,
** KW, 1, k], groups = C = K, c = k), bias [K/k, k] -> [N, K/k, OH, OW, k] */
mlc_status mlc_infer_conv2d_nchwc(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0), *w = mlc_graph_arg(ci, 1);
  int64_t st[2], pads[4], dil[2], groups, dims[5];
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, 6));
  if (!mlc_dtype_is_float(x->dtype)) return UNIMPL("dtype %s", mlc_dtype_name(x->dtype));
  for (int i = 1; i < ci->nargs; i++)
    if (mlc_graph_arg(ci, i)->dtype != x->dtype)
      return ERR("argument %d has dtype %s, not the input's %s", i, mlc_dtype_name(mlc_graph_arg(ci, i)->dtype),
                 mlc_dtype_name(x->dtype));
  if (x->rank != 5 || w->rank != 6) return ERR("input rank %d and weight rank %d must be 5 and 6", x->rank, w->rank);
  if (MLC_DIM_IS_SYM(x->dims[1]) || MLC_DIM_IS_SYM(x->dims[4]))
    return UNIMPL("symbolic channel blocks");
  for (int i = 0; i < 6; i++)
    if (MLC_DIM_IS_SYM(w->dims[i]) || w->dims[i] < 1) return ERR("weight dim %d must be static and >= 1", i);
  MLC_RETURN_IF_ERROR(ints_n(ci, "strides", 2, 1, st));
  MLC_RETURN_IF_ERROR(ints_n(ci, "pads", 4, 0, pads));
  MLC_RETURN_IF_ERROR(ints_n(ci, "dilations", 2, 1, dil));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "groups", 1, &groups));
  int64_t cb = x->dims[4], cin = x->dims[1] * cb, kb = w->dims[5], k = w->dims[0] * kb;
  if (groups == 1) {
    if (w->dims[1] != x->dims[1] || w->dims[4] != cb)
      return ERR("weight input blocks [%lld, .., %lld] do not match the input's [%lld, .., %lld]", LL(w->dims[1]),
                 LL(w->dims[4]), LL(x->dims[1]), LL(cb));
  } else {
    if (groups != cin || k != cin || w->dims[1] != 1 || w->dims[4] != 1 || kb != cb)
      return ERR("groups %lld: only depthwise (groups = input channels %lld = output channels, weight "
                 "[K/k, 1, KH, KW, 1, k] with k the input's block %lld) is supported",
                 LL(groups), LL(cin), LL(cb));
  }
  if (ci->nargs > 2) {
    const mlc_type *b = mlc_graph_arg(ci, 2);
    if (b->rank != 2 || b->dims[0] != w->dims[0] || b->dims[1] != kb)
      return ERR("bias must have shape (%lld, %lld)", LL(w->dims[0]), LL(kb));
  }
  dims[0] = x->dims[0];
  dims[1] = w->dims[0];
  dims[4] = kb;
  for (int i = 0; i < 2; i++) {
    if (st[i] < 1 || dil[i] < 1 || pads[i] < 0 || pads[2 + i] < 0)
      return ERR("bad window attributes on spatial axis %d", i);
    int64_t ek, padded;
    if (__builtin_mul_overflow(dil[i], w->dims[2 + i] - 1, &ek) || __builtin_add_overflow(ek, 1, &ek) ||
        __builtin_add_overflow(x->dims[2 + i], pads[i], &padded) ||
        __builtin_add_overflow(padded, pads[2 + i], &padded))
      return ERR("spatial axis %d: window arithmetic overflows", i);
    if (MLC_DIM_IS_SYM(x->dims[2 + i])) { /* (d + pads - ek) // stride + 1, as conv's rule */
      int64_t n, chk;
      MLC_RETURN_IF_ERROR(mlc_dim_add_const(ci->mod, x->dims[2 + i], pads[i] + pads[2 + i] - ek, ci->origin, &n));
      if (pads[i] + pads[2 + i] < ek)
        MLC_RETURN_IF_ERROR(mlc_dim_check(ci->mod, n, ci->origin, "the padded input is smaller than the kernel", &chk));
      MLC_RETURN_IF_ERROR(mlc_dim_floordiv_const(ci->mod, n, st[i], ci->origin, &n));
      MLC_RETURN_IF_ERROR(mlc_dim_add_const(ci->mod, n, 1, ci->origin, &dims[2 + i]));
      continue;
    }
    if (padded < ek) return ERR("spatial axis %d: kernel extent %lld exceeds padded input extent %lld", i, LL(ek), LL(padded));
    dims[2 + i] = (padded - ek) / st[i] + 1;
  }
  return mlc_graph_ret1(ci, outs, nouts, x->dtype, dims, 5);
}

/* ---- matmul_packed ------------------------------------------------------- */

/* a [..., M, K], wp [N/NB, K, NB], bias [N] -> [..., M, N] */
mlc_status mlc_infer_matmul_packed(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *a = mlc_graph_arg(ci, 0), *w = mlc_graph_arg(ci, 1);
  int64_t dims[MLC_LAYOUT_MAX_RANK];
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MLC_LAYOUT_MAX_RANK));
  for (int i = 1; i < ci->nargs; i++)
    if (mlc_graph_arg(ci, i)->dtype != a->dtype)
      return ERR("argument %d has dtype %s, not the input's %s", i, mlc_dtype_name(mlc_graph_arg(ci, i)->dtype),
                 mlc_dtype_name(a->dtype));
  if (a->rank < 2 || w->rank != 3) return ERR("input rank %d and weight rank %d must be >= 2 and 3", a->rank, w->rank);
  for (int i = 0; i < 3; i++)
    if (MLC_DIM_IS_SYM(w->dims[i]) || w->dims[i] < 1) return ERR("weight dim %d must be static and >= 1", i);
  if (a->dims[a->rank - 1] != w->dims[1])
    return ERR("inner dims differ: input's last dim is not the weight's %lld", LL(w->dims[1]));
  int64_t n = w->dims[0] * w->dims[2];
  if (ci->nargs > 2) {
    const mlc_type *b = mlc_graph_arg(ci, 2);
    if (b->rank != 1 || b->dims[0] != n) return ERR("bias must have shape (%lld)", LL(n));
  }
  for (int i = 0; i < a->rank - 1; i++) dims[i] = a->dims[i];
  dims[a->rank - 1] = n;
  return mlc_graph_ret1(ci, outs, nouts, a->dtype, dims, a->rank);
}

/* ---- register tiles --------------------------------------------------------- */

mlc_tile_limits mlc_tile_limits_for(int vector_bits) {
  int bits = vector_bits ? vector_bits : 512;
  mlc_tile_limits l = {bits >= 128 ? bits / 32 : 4, bits >= 512 ? 24 : 12, bits >= 512 ? 4 : 5};
  return l;
}

/* Accumulators that hide the FMA's latency: 4 cycles on two pipes. */
#define TILE_MIN_ACC 8

double mlc_tile_score(int64_t r, int64_t c) {
  double fmas = (double)(r * c), loads = (double)(r + c), cycles = fmas;
  if (cycles < TILE_MIN_ACC) cycles = TILE_MIN_ACC;
  if (cycles < loads) cycles = loads;
  /* the share of the FMA pipes kept busy first, in steps of 1/1000, then
  ** FMAs per load (below 3, so below the first's steps) */
  return floor(fmas / cycles * 1000.0 + 0.5) * 100.0 + fmas / loads;
}

/* Largest divisor of |e| that is at most |cap|. */
static int64_t divisor_at_most(int64_t e, int64_t cap) {
  for (int64_t d = cap < e ? cap : e; d > 1; d--)
    if (e % d == 0) return d;
  return 1;
}

void mlc_tile_sizes(int64_t rows, int64_t cols, const mlc_tile_limits *l, int64_t *r, int64_t *c) {
  double best = 0;
  *r = *c = 1;
  for (int64_t cc = 1; cc <= l->max_cols && cc <= cols; cc++) {
    if (cols % cc) continue;
    int64_t rr = divisor_at_most(rows, l->max_acc / cc);
    double score = mlc_tile_score(rr, cc);
    if (score > best + 1e-9 || (score > best - 1e-9 && rr * cc > *r * *c)) {
      best = score;
      *r = rr;
      *c = cc;
    }
  }
}
