/*
** eval_image.c: compile-time evaluation of the indexing ops of ops.def
** (gather_elements, gather_nd, scatter_elements, scatter_nd) on constant
** arguments, called by mlc_graph_eval (eval.c).
**
** Gathers and scatters without a reduction copy raw elements, so they work
** for every dtype; a scatter's add/mul/max/min computes in float64 for
** float32/float64 and in int64 (wrapping to the dtype) for integers.  An
** index outside [-n, n) of its axis is an error (MLC_OUT_OF_RANGE) worded
** as the lowered kernels report it at run time.  resize and
** max_pool_indices have no evaluator (MLC_UNIMPLEMENTED: the call is kept).
*/
#include <string.h>

#include "graph/graph_int.h"

#define MAX_RANK 64
#define ERR(code, ...) mlc_graph_call_error(ci, (code), __VA_ARGS__)
#define LL(x) ((long long)(x))

static const mlc_type *arg(const mlc_call_info *ci, int i) { return &ci->args[i]->type; }

static int64_t numel(const mlc_type *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

static size_t nbytes(const mlc_type *t) { return (size_t)numel(t) * mlc_dtype_size(t->dtype); }

/* Element |i| of an int32/int64 index tensor. */
static int64_t index_at(const void *p, mlc_dtype t, int64_t i) {
  if (t == MLC_DTYPE_I32) return ((const int32_t *)p)[i];
  return ((const int64_t *)p)[i];
}

/* Row-major offset of |idx| in |dims| (|rank| entries). */
static int64_t offset(const int64_t *dims, int rank, const int64_t *idx) {
  int64_t o = 0;
  for (int d = 0; d < rank; d++) o = o * dims[d] + idx[d];
  return o;
}

/* Advances |idx| over |dims|; 0 when it wraps around. */
static int advance(int64_t *idx, const int64_t *dims, int rank) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++idx[d] < dims[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

/* |v| wrapped (negative) and checked against extent |ext| of axis |axis|. */
static mlc_status norm_index(const mlc_call_info *ci, int64_t v, int64_t ext, int axis, int64_t *out) {
  if (v < -ext || v >= ext)
    return ERR(MLC_OUT_OF_RANGE, "index %lld out of range [%lld, %lld) on axis %d", LL(v), LL(-ext), LL(ext), axis);
  *out = v < 0 ? v + ext : v;
  return NULL;
}

/* ---- gathers ------------------------------------------------------------ */

static mlc_status eval_gather_elements(const mlc_call_info *ci, const mlc_type *ot, const void *const *in,
                                       void **out) {
  const mlc_type *x = arg(ci, 0), *ix = arg(ci, 1);
  int axis = (int)mlc_attrs_int(ci->attrs, ci->nattrs, "axis", 0);
  size_t es = mlc_dtype_size(x->dtype);
  int64_t n = numel(ot), idx[MAX_RANK] = {0}, xi[MAX_RANK];
  *out = mlc_const_alloc(ci->mod, nbytes(ot));
  if (!*out) return mlc_oom();
  for (int64_t e = 0; e < n; e++, advance(idx, ot->dims, ot->rank)) {
    memcpy(xi, idx, sizeof *xi * (size_t)x->rank);
    mlc_status s = norm_index(ci, index_at(in[1], ix->dtype, e), x->dims[axis], axis, &xi[axis]);
    if (s) {
      mlc_const_free(ci->mod, *out, nbytes(ot));
      *out = NULL;
      return s;
    }
    memcpy((char *)*out + (size_t)e * es, (const char *)in[0] + (size_t)offset(x->dims, x->rank, xi) * es, es);
  }
  return NULL;
}

static mlc_status eval_gather_nd(const mlc_call_info *ci, const mlc_type *ot, const void *const *in,
                                 void **out) {
  const mlc_type *x = arg(ci, 0), *ix = arg(ci, 1);
  int b = (int)mlc_attrs_int(ci->attrs, ci->nattrs, "batch_dims", 0), q = ix->rank;
  int k = (int)ix->dims[q - 1];
  size_t es = mlc_dtype_size(x->dtype);
  int64_t inner = 1, npos = 1, bsize = 1;
  for (int d = b + k; d < x->rank; d++) inner *= x->dims[d];
  for (int d = b; d < q - 1; d++) npos *= ix->dims[d];
  for (int d = 0; d < b; d++) bsize *= x->dims[d];
  int64_t bstride = 1; /* elements of x per batch entry */
  for (int d = b; d < x->rank; d++) bstride *= x->dims[d];
  *out = mlc_const_alloc(ci->mod, nbytes(ot));
  if (!*out) return mlc_oom();
  char *o = *out;
  for (int64_t bi = 0; bi < bsize; bi++)
    for (int64_t p = 0; p < npos; p++) {
      int64_t off = 0;
      for (int t = 0; t < k; t++) {
        int64_t v = 0;
        mlc_status s = norm_index(ci, index_at(in[1], ix->dtype, (bi * npos + p) * k + t), x->dims[b + t], b + t, &v);
        if (s) {
          mlc_const_free(ci->mod, *out, nbytes(ot));
          *out = NULL;
          return s;
        }
        off = off * x->dims[b + t] + v;
      }
      memcpy(o, (const char *)in[0] + (size_t)(bi * bstride + off * inner) * es, (size_t)inner * es);
      o += (size_t)inner * es;
    }
  return NULL;
}

/* ---- scatters ----------------------------------------------------------- */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static int reduction_of(const mlc_call_info *ci) {
  const char *r = mlc_attrs_str(ci->attrs, ci->nattrs, "reduction", "none");
  return strcmp(r, "add") == 0 ? RED_ADD : strcmp(r, "mul") == 0 ? RED_MUL : strcmp(r, "max") == 0 ? RED_MAX
         : strcmp(r, "min") == 0                                                                      ? RED_MIN
                                                                                                      : RED_NONE;
}

/* dst[0] = dst[0] (red) src[0], one element of |dt|. */
static void combine(mlc_dtype dt, int red, void *dst, const void *src) {
  size_t es = mlc_dtype_size(dt);
  if (red == RED_NONE) {
    memcpy(dst, src, es);
  } else if (dt == MLC_DTYPE_F32 || dt == MLC_DTYPE_F64) {
    double a = dt == MLC_DTYPE_F32 ? *(float *)dst : *(double *)dst;
    double u = dt == MLC_DTYPE_F32 ? *(const float *)src : *(const double *)src;
    double r = red == RED_ADD ? a + u : red == RED_MUL ? a * u : red == RED_MAX ? (a > u ? a : u) : (a < u ? a : u);
    if (dt == MLC_DTYPE_F32) *(float *)dst = (float)r;
    else *(double *)dst = r;
  } else { /* integers, little-endian: sign- or zero-extended into 64 bits */
    int64_t a = 0, u = 0;
    int sgn = mlc_dtype_is_signed(dt);
    memcpy(&a, dst, es);
    memcpy(&u, src, es);
    if (sgn && es < 8) {
      int sh = (int)(64 - 8 * es);
      a = (int64_t)((uint64_t)a << sh) >> sh;
      u = (int64_t)((uint64_t)u << sh) >> sh;
    }
    int64_t r;
    if (red == RED_ADD) r = (int64_t)((uint64_t)a + (uint64_t)u);
    else if (red == RED_MUL) r = (int64_t)((uint64_t)a * (uint64_t)u);
    else if (sgn || es < 8) r = red == RED_MAX ? (a > u ? a : u) : (a < u ? a : u);
    else r = red == RED_MAX ? ((uint64_t)a > (uint64_t)u ? a : u) : ((uint64_t)a < (uint64_t)u ? a : u);
    memcpy(dst, &r, es);
  }
}

/* The reduction is one this file computes for |dt|. */
static mlc_status check_reduction(const mlc_call_info *ci, int red, mlc_dtype dt) {
  if (red == RED_NONE || dt == MLC_DTYPE_F32 || dt == MLC_DTYPE_F64 || mlc_dtype_is_int(dt)) return NULL;
  return ERR(MLC_UNIMPLEMENTED, "no evaluator for this reduction of %s", mlc_dtype_name(dt));
}

static mlc_status eval_scatter_elements(const mlc_call_info *ci, const mlc_type *ot, const void *const *in,
                                        void **out) {
  const mlc_type *x = arg(ci, 0), *ix = arg(ci, 1);
  int axis = (int)mlc_attrs_int(ci->attrs, ci->nattrs, "axis", 0), red = reduction_of(ci);
  size_t es = mlc_dtype_size(x->dtype);
  int64_t n = numel(ix), idx[MAX_RANK] = {0}, xi[MAX_RANK];
  MLC_RETURN_IF_ERROR(check_reduction(ci, red, x->dtype));
  *out = mlc_const_alloc(ci->mod, nbytes(ot));
  if (!*out) return mlc_oom();
  memcpy(*out, in[0], nbytes(ot));
  for (int64_t e = 0; e < n; e++, advance(idx, ix->dims, ix->rank)) {
    memcpy(xi, idx, sizeof *xi * (size_t)x->rank);
    mlc_status s = norm_index(ci, index_at(in[1], ix->dtype, e), x->dims[axis], axis, &xi[axis]);
    if (s) {
      mlc_const_free(ci->mod, *out, nbytes(ot));
      *out = NULL;
      return s;
    }
    combine(x->dtype, red, (char *)*out + (size_t)offset(x->dims, x->rank, xi) * es,
            (const char *)in[2] + (size_t)e * es);
  }
  return NULL;
}

static mlc_status eval_scatter_nd(const mlc_call_info *ci, const mlc_type *ot, const void *const *in,
                                  void **out) {
  const mlc_type *x = arg(ci, 0), *ix = arg(ci, 1);
  int q = ix->rank, k = (int)ix->dims[q - 1], red = reduction_of(ci);
  size_t es = mlc_dtype_size(x->dtype);
  int64_t inner = 1, npos = 1;
  for (int d = k; d < x->rank; d++) inner *= x->dims[d];
  for (int d = 0; d < q - 1; d++) npos *= ix->dims[d];
  MLC_RETURN_IF_ERROR(check_reduction(ci, red, x->dtype));
  *out = mlc_const_alloc(ci->mod, nbytes(ot));
  if (!*out) return mlc_oom();
  memcpy(*out, in[0], nbytes(ot));
  for (int64_t p = 0; p < npos; p++) {
    int64_t off = 0;
    for (int t = 0; t < k; t++) {
      int64_t v = 0;
      mlc_status s = norm_index(ci, index_at(in[1], ix->dtype, p * k + t), x->dims[t], t, &v);
      if (s) {
        mlc_const_free(ci->mod, *out, nbytes(ot));
        *out = NULL;
        return s;
      }
      off = off * x->dims[t] + v;
    }
    for (int64_t j = 0; j < inner; j++)
      combine(x->dtype, red, (char *)*out + (size_t)(off * inner + j) * es,
              (const char *)in[2] + (size_t)(p * inner + j) * es);
  }
  return NULL;
}

mlc_status mlc_graph_eval_image(const mlc_call_info *ci, const mlc_type *ot, const void *const *in,
                                void **out) {
  for (int i = 0; i < ci->nargs; i++)
    if (arg(ci, i)->rank > MAX_RANK) return ERR(MLC_UNIMPLEMENTED, "no evaluator for rank %d", arg(ci, i)->rank);
  switch (ci->op) {
    case MLC_OP_GATHER_ELEMENTS: return eval_gather_elements(ci, ot, in, out);
    case MLC_OP_GATHER_ND: return eval_gather_nd(ci, ot, in, out);
    case MLC_OP_SCATTER_ELEMENTS: return eval_scatter_elements(ci, ot, in, out);
    case MLC_OP_SCATTER_ND: return eval_scatter_nd(ci, ot, in, out);
    default: return ERR(MLC_UNIMPLEMENTED, "no evaluator");
  }
}
