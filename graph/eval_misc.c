/*
** eval_misc.c: compile-time evaluation (constant folding) of the "other
** math" ops: trilu and reverse_sequence on any dtype (they move raw
** elements; trilu's zeros are all-zero bytes, which is 0 in every numeric
** dtype and false), cumsum on float32, float64, int32 and int64 (floats
** summed in their own precision along the scan, integers wrapping); a
** run-time cumsum axis outside [-r, r) or a reverse_sequence length
** outside [0, T] is an error (MLC_OUT_OF_RANGE), as in the kernels.  topk (two outputs) and einsum are not evaluated:
** the builder keeps those calls.
*/
#include <stdint.h>
#include <string.h>

#include "graph/graph_int.h"

#define MAX_RANK 64

#define ERR(code, ...) mlc_graph_call_error(ci, (code), __VA_ARGS__)

static const mlc_type *arg(const mlc_call_info *ci, int i) { return &ci->args[i]->type; }

static int64_t numel(const mlc_type *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

static size_t nbytes_of(const mlc_type *t) { return (size_t)numel(t) * mlc_dtype_size(t->dtype); }

/* Element |i| of integer data of |dt| as int64 (0 for other dtypes). */
static int64_t load_int(mlc_dtype dt, const void *p, int64_t i) {
  switch (dt) {
  case MLC_DTYPE_I8: return ((const int8_t *)p)[i];
  case MLC_DTYPE_I16: return ((const int16_t *)p)[i];
  case MLC_DTYPE_I32: return ((const int32_t *)p)[i];
  case MLC_DTYPE_I64: return ((const int64_t *)p)[i];
  case MLC_DTYPE_U8: return ((const uint8_t *)p)[i];
  case MLC_DTYPE_U16: return ((const uint16_t *)p)[i];
  case MLC_DTYPE_U32: return ((const uint32_t *)p)[i];
  case MLC_DTYPE_U64: return (int64_t)((const uint64_t *)p)[i];
  default: return 0;
  }
}

/* Row-major strides of |t| (in elements). */
static void strides_of(const mlc_type *t, int64_t *st) {
  int64_t s = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    st[d] = s;
    s *= t->dims[d];
  }
}

/* The one element of integer argument |i|. */
static int64_t scalar_arg(const mlc_call_info *ci, const void *const *in, int i) {
  return load_int(arg(ci, i)->dtype, in[i], 0);
}

/* ---- trilu -------------------------------------------------------------- */

static mlc_status eval_trilu(const mlc_call_info *ci, const mlc_type *ot, const void *const *in,
                             void *out) {
  const mlc_type *x = arg(ci, 0);
  int r = x->rank, upper = mlc_attrs_int(ci->attrs, ci->nattrs, "upper", 1) != 0;
  int64_t k = ci->nargs > 1 ? scalar_arg(ci, in, 1) : mlc_attrs_int(ci->attrs, ci->nattrs, "k", 0);
  int64_t rows = x->dims[r - 2], cols = x->dims[r - 1], n = numel(ot);
  size_t es = mlc_dtype_size(x->dtype);
  for (int64_t e = 0; e < n; e++) {
    int64_t j = e % cols, i = (e / cols) % rows;
    int keep = upper ? j - i >= k : j - i <= k;
    if (keep) memcpy((char *)out + (size_t)e * es, (const char *)in[0] + (size_t)e * es, es);
    else memset((char *)out + (size_t)e * es, 0, es);
  }
  return NULL;
}

/* ---- cumsum ------------------------------------------------------------- */

static mlc_status eval_cumsum(const mlc_call_info *ci, const mlc_type *ot, const void *const *in,
                              void *out) {
  const mlc_type *x = arg(ci, 0);
  int r = x->rank;
  int64_t axis = ci->nargs > 1 ? scalar_arg(ci, in, 1) : mlc_attrs_int(ci->attrs, ci->nattrs, "axis", 0);
  int excl = mlc_attrs_int(ci->attrs, ci->nattrs, "exclusive", 0) != 0;
  int rev = mlc_attrs_int(ci->attrs, ci->nattrs, "reverse", 0) != 0;
  int64_t st[MAX_RANK] = {0};
  if (axis < 0) axis += r; /* checked by mlc_graph_eval_misc */
  strides_of(x, st);
  int64_t len = x->dims[axis], step = st[axis], total = numel(x);
  int64_t lines = len ? total / len : 0;
  for (int64_t l = 0; l < lines; l++) {
    /* the line's first element: outer index * (len * step) + inner index */
    int64_t base = (l / step) * len * step + l % step;
    double fs = 0;
    uint64_t is = 0;
    for (int64_t q = 0; q < len; q++) {
      int64_t t = rev ? len - 1 - q : q, e = base + t * step;
      switch (x->dtype) {
      case MLC_DTYPE_F32: {
        float v = ((const float *)in[0])[e];
        if (excl) ((float *)out)[e] = (float)fs;
        fs = (float)(fs + v);
        if (!excl) ((float *)out)[e] = (float)fs;
        break;
      }
      case MLC_DTYPE_F64: {
        double v = ((const double *)in[0])[e];
        if (excl) ((double *)out)[e] = fs;
        fs += v;
        if (!excl) ((double *)out)[e] = fs;
        break;
      }
      case MLC_DTYPE_I32: {
        uint64_t v = (uint64_t)(int64_t)((const int32_t *)in[0])[e];
        if (excl) ((int32_t *)out)[e] = (int32_t)(uint32_t)is;
        is += v;
        if (!excl) ((int32_t *)out)[e] = (int32_t)(uint32_t)is;
        break;
      }
      default: { /* int64 */
        uint64_t v = (uint64_t)((const int64_t *)in[0])[e];
        if (excl) ((int64_t *)out)[e] = (int64_t)is;
        is += v;
        if (!excl) ((int64_t *)out)[e] = (int64_t)is;
        break;
      }
      }
    }
  }
  return NULL;
}

/* ---- reverse_sequence --------------------------------------------------- */

static mlc_status eval_reverse_sequence(const mlc_call_info *ci, const mlc_type *ot,
                                        const void *const *in, void *out) {
  const mlc_type *x = arg(ci, 0), *lt = arg(ci, 1);
  int ba = (int)mlc_attrs_int(ci->attrs, ci->nattrs, "batch_axis", 1);
  int ta = (int)mlc_attrs_int(ci->attrs, ci->nattrs, "time_axis", 0);
  int64_t st[MAX_RANK] = {0}, n = numel(ot);
  size_t es = mlc_dtype_size(x->dtype);
  strides_of(x, st);
  int64_t T = x->dims[ta];
  for (int64_t e = 0; e < n; e++) {
    int64_t b = (e / st[ba]) % x->dims[ba], t = (e / st[ta]) % T;
    int64_t len = load_int(lt->dtype, in[1], b); /* checked by mlc_graph_eval_misc */
    int64_t src = t < len ? e + (len - 1 - 2 * t) * st[ta] : e;
    memcpy((char *)out + (size_t)e * es, (const char *)in[0] + (size_t)src * es, es);
  }
  return NULL;
}

/* A run-time cumsum axis outside [-r, r) and reverse_sequence lengths
** outside [0, T] are errors, worded as the kernels report them. */
static mlc_status check_values(const mlc_call_info *ci, const void *const *in) {
  const mlc_type *x = arg(ci, 0);
  if (ci->op == MLC_OP_CUMSUM && ci->nargs > 1) {
    int64_t a = scalar_arg(ci, in, 1);
    if (a < -x->rank || a >= x->rank)
      return ERR(MLC_OUT_OF_RANGE, "axis %lld out of range [%d, %d)", (long long)a, -x->rank, x->rank);
  }
  if (ci->op == MLC_OP_REVERSE_SEQUENCE) {
    int64_t T = x->dims[mlc_attrs_int(ci->attrs, ci->nattrs, "time_axis", 0)];
    for (int64_t b = 0; b < numel(arg(ci, 1)); b++) {
      int64_t len = load_int(arg(ci, 1)->dtype, in[1], b);
      if (len < 0 || len > T)
        return ERR(MLC_OUT_OF_RANGE, "sequence length %lld out of range [0, %lld)", (long long)len,
                   (long long)(T + 1));
    }
  }
  return NULL;
}

mlc_status mlc_graph_eval_misc(const mlc_call_info *ci, const mlc_type *ot, const void *const *in,
                               void **out) {
  mlc_dtype dt = ot->dtype;
  if (ci->op == MLC_OP_CUMSUM && dt != MLC_DTYPE_F32 && dt != MLC_DTYPE_F64 && dt != MLC_DTYPE_I32 &&
      dt != MLC_DTYPE_I64)
    return ERR(MLC_UNIMPLEMENTED, "no evaluator for %s", mlc_dtype_name(dt));
  if (ci->op != MLC_OP_TRILU && ci->op != MLC_OP_CUMSUM && ci->op != MLC_OP_REVERSE_SEQUENCE)
    return ERR(MLC_UNIMPLEMENTED, "no evaluator");
  if (ot->rank > MAX_RANK) return ERR(MLC_UNIMPLEMENTED, "rank %d", ot->rank);
  MLC_RETURN_IF_ERROR(check_values(ci, in));
  *out = mlc_const_alloc(ci->mod, nbytes_of(ot));
  if (!*out) return mlc_oom();
  switch (ci->op) {
  case MLC_OP_TRILU: return eval_trilu(ci, ot, in, *out);
  case MLC_OP_CUMSUM: return eval_cumsum(ci, ot, in, *out);
  default: return eval_reverse_sequence(ci, ot, in, *out);
  }
}
