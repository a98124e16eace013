/*
** text.c: TfIdfVectorizer, decomposed into comparisons and sums.
**
** For each n-gram length n in [min_gram_length, max_gram_length] and each
** skip k (0 for unigrams, else 0..max_skip_count) the input's windows
** x[.., i + j*(k+1)] (j < n) are compared with the pool's n-grams:
**
**   m[.., i, g] = AND_j (x[.., i + j*(k+1)] == pool_n[g, j])
**   count_n[.., g] += sum_i m[.., i, g]
**
** then count_n @ onehot(ngram_indexes) puts each n-gram's count at its
** output position.  TF keeps the counts, IDF gives weight (or 1) where the
** count is positive, TFIDF multiplies the counts by the weights.  Only the
** integer pool (pool_int64s) is supported.
*/
#include <string.h>

#include "frontend/frontend_int.h"

#define MAX_OUT (1 << 20)

MLC_FE_CHECK(tfidf) {
  (void)opset;
  if (mlc_fe_attr(n, "pool_strings"))
    mlc_fe_problem(p, "pool_strings not supported (string n-grams; only pool_int64s)");
  const char *mode = mlc_fe_attr_str(n, "mode", "");
  if (strcmp(mode, "TF") != 0 && strcmp(mode, "IDF") != 0 && strcmp(mode, "TFIDF") != 0)
    mlc_fe_problem(p, "mode \"%s\" is not TF, IDF or TFIDF", mode);
}

static mlc_status cast(mlc_fe_ctx *cx, mlc_value *x, mlc_dtype dt, mlc_value **out) {
  mlc_attr a = mlc_attr_int("dtype", (int64_t)dt);
  return mlc_fe_emit(cx, MLC_OP_CAST, &x, 1, &a, 1, out);
}

/* a + b with NULL standing for zero. */
static mlc_status add_opt(mlc_fe_ctx *cx, mlc_value *a, mlc_value *b, mlc_value **out) {
  if (!a) {
    *out = b;
    return NULL;
  }
  return mlc_fe_binary(cx, MLC_OP_ADD, a, b, out);
}

/* A float32 constant of |dims| from |data| (copied). */
static mlc_status f32_const(mlc_fe_ctx *cx, const float *data, const int64_t *dims, int rank,
                            mlc_value **out) {
  mlc_type t = {MLC_DTYPE_F32, rank, dims};
  int64_t numel = 1;
  for (int i = 0; i < rank; i++) numel *= dims[i];
  return mlc_module_add_const(cx->mod, NULL, &t, data, (size_t)numel * sizeof(float), out);
}

/* Counts of the |G| n-grams of length |len| whose elements are pool[g*len +
** j] in |x| (rank r, static; last axis scanned), skips 0..|max_skip|:
** float32 [.., G]. */
static mlc_status count_grams(mlc_fe_ctx *cx, mlc_value *x, const int64_t *pool, int64_t G, int len,
                              int64_t max_skip, mlc_value **out) {
  int r = x->type.rank;
  int64_t C = x->type.dims[r - 1];
  mlc_value *acc = NULL;
  for (int64_t k = 0; k <= (len == 1 ? 0 : max_skip); k++) {
    int64_t s = k + 1, L = C - (len - 1) * s;
    if (L <= 0) break;
    mlc_value *match = NULL;
    for (int j = 0; j < len; j++) {
      int64_t b[2] = {0, j * s}, e[2] = {r == 2 ? x->type.dims[0] : 0, j * s + L}, st[2] = {1, 1};
      int64_t *bb = r == 2 ? b : b + 1, *ee = r == 2 ? e : e + 1;
      mlc_attr a[3] = {mlc_attr_ints("begin", bb, r), mlc_attr_ints("end", ee, r), mlc_attr_ints("step", st, r)};
      mlc_value *xs, *pv, *eq;
      MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_SLICE, &x, 1, a, 3, &xs));
      int64_t dims[3] = {x->type.dims[0], L, 1};
      MLC_RETURN_IF_ERROR(mlc_fe_reshape(cx, xs, r == 2 ? dims : dims + 1, r + 1, &xs));
      /* element j of every n-gram, in x's dtype */
      mlc_type pt = {x->type.dtype, 1, &G};
      size_t es = mlc_dtype_size(x->type.dtype);
      void *pd = mlc_const_alloc(cx->mod, (size_t)G * es);
      if (!pd) return mlc_oom();
      for (int64_t g = 0; g < G; g++) mlc_fe_elem_set(x->type.dtype, pd, g, (double)pool[g * len + j]);
      MLC_RETURN_IF_ERROR(mlc_module_adopt_const(cx->mod, NULL, &pt, pd, (size_t)G * es, &pv));
      MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_EQUAL, xs, pv, &eq));
      if (match) MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_LOGICAL_AND, match, eq, &match));
      else match = eq;
    }
    mlc_value *cnt;
    MLC_RETURN_IF_ERROR(cast(cx, match, MLC_DTYPE_F32, &cnt));
    int64_t axis = r - 1;
    mlc_attr ra[2] = {mlc_attr_ints("axes", &axis, 1), mlc_attr_int("keepdims", 0)};
    MLC_RETURN_IF_ERROR(mlc_fe_emit(cx, MLC_OP_SUM, &cnt, 1, ra, 2, &cnt));
    MLC_RETURN_IF_ERROR(add_opt(cx, acc, cnt, &acc));
  }
  *out = acc;
  return NULL;
}

/* ONNX TfIdfVectorizer-9 */
MLC_FE_CVT(tfidf) {
  (void)nin, (void)nout;
  mlc_value *x = in[0];
  mlc_dtype dt = x->type.dtype;
  if (dt != MLC_DTYPE_I32 && dt != MLC_DTYPE_I64)
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "input of %s not supported (int32 or int64 only)",
                        mlc_dtype_name(dt));
  int r = x->type.rank;
  if (r != 1 && r != 2)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "input must be [C] or [N, C], its shape is %s",
                        mlc_fe_shape_str(cx, &x->type));
  if (!mlc_type_is_static(&x->type))
    return mlc_fe_error(cx, MLC_UNIMPLEMENTED, "an input shape computed at run time (%s) is not supported",
                        mlc_fe_shape_str(cx, &x->type));
  int64_t minn = mlc_fe_attr_int(n, "min_gram_length", 1), maxn = mlc_fe_attr_int(n, "max_gram_length", 1);
  int64_t max_skip = mlc_fe_attr_int(n, "max_skip_count", 0);
  const char *mode = mlc_fe_attr_str(n, "mode", "TF");
  const int64_t *counts, *idx, *pool;
  int ncounts = mlc_fe_attr_ints(n, "ngram_counts", &counts);
  int nidx = mlc_fe_attr_ints(n, "ngram_indexes", &idx);
  int npool = mlc_fe_attr_ints(n, "pool_int64s", &pool);
  if (ncounts < 0 || nidx < 0 || npool < 0)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "needs ngram_counts, ngram_indexes and pool_int64s");
  if (minn < 1 || maxn < minn || max_skip < 0 || max_skip > 4096)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT,
                        "min_gram_length %lld, max_gram_length %lld, max_skip_count %lld are invalid",
                        (long long)minn, (long long)maxn, (long long)max_skip);
  /* number of n-grams in the pool, per length */
  int64_t total = 0, maxidx = -1;
  for (int i = 0; i < ncounts; i++) {
    int64_t st = counts[i], en = i + 1 < ncounts ? counts[i + 1] : npool;
    if (st < 0 || en < st || en > npool || (en - st) % (i + 1) != 0)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT,
                          "ngram_counts[%d] = %lld does not split pool_int64s (%d entries) into %d-grams",
                          i, (long long)st, npool, i + 1);
    total += (en - st) / (i + 1);
  }
  if (total != nidx)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "the pool has %lld n-grams but ngram_indexes has %d",
                        (long long)total, nidx);
  for (int i = 0; i < nidx; i++) {
    if (idx[i] < 0 || idx[i] >= MAX_OUT)
      return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "ngram_indexes[%d] = %lld is out of range", i,
                          (long long)idx[i]);
    if (idx[i] > maxidx) maxidx = idx[i];
  }
  int64_t O = maxidx + 1;
  if (O < 1) return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "ngram_indexes is empty");
  const mlc_onnx_attr *wa = mlc_fe_attr(n, "weights");
  if (wa && wa->n < O)
    return mlc_fe_error(cx, MLC_INVALID_ARGUMENT, "weights has %d entries for %lld outputs", wa->n,
                        (long long)O);

  mlc_value *y = NULL;
  int64_t goff = 0;
  for (int i = 0; i < ncounts; i++) {
    int len = i + 1;
    int64_t st = counts[i], en = i + 1 < ncounts ? counts[i + 1] : npool, G = (en - st) / len;
    if (G > 0 && len >= minn && len <= maxn) {
      mlc_value *cnt = NULL;
      MLC_RETURN_IF_ERROR(count_grams(cx, x, pool + st, G, len, max_skip, &cnt));
      if (cnt) {
        float *map = MLC_ARENA_ARRAY(cx->scratch, (size_t)(G * O), float);
        if (!map) return mlc_oom();
        memset(map, 0, (size_t)(G * O) * sizeof *map);
        for (int64_t g = 0; g < G; g++) map[g * O + idx[goff + g]] = 1.0f;
        int64_t md[2] = {G, O};
        mlc_value *mv, *part;
        MLC_RETURN_IF_ERROR(f32_const(cx, map, md, 2, &mv));
        MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_MATMUL, cnt, mv, &part));
        MLC_RETURN_IF_ERROR(add_opt(cx, y, part, &y));
      }
    }
    goff += G;
  }
  int64_t od[2] = {r == 2 ? x->type.dims[0] : O, O};
  if (!y) {
    int64_t numel = r == 2 ? od[0] * O : O;
    float *z = MLC_ARENA_ARRAY(cx->scratch, (size_t)numel, float);
    if (!z) return mlc_oom();
    memset(z, 0, (size_t)numel * sizeof *z);
    return f32_const(cx, z, r == 2 ? od : od + 1, r, &out[0]);
  }
  if (strcmp(mode, "TF") == 0 || (!wa && strcmp(mode, "TFIDF") == 0)) {
    out[0] = y;
    return NULL;
  }
  float *w = MLC_ARENA_ARRAY(cx->scratch, (size_t)O, float);
  if (!w) return mlc_oom();
  for (int64_t i = 0; i < O; i++) w[i] = wa ? wa->floats[i] : 1.0f;
  mlc_value *wv;
  MLC_RETURN_IF_ERROR(f32_const(cx, w, &O, 1, &wv));
  if (strcmp(mode, "TFIDF") == 0) return mlc_fe_binary(cx, MLC_OP_MUL, y, wv, &out[0]);
  /* IDF: the weight where the n-gram occurs */
  mlc_value *zero, *pos;
  MLC_RETURN_IF_ERROR(mlc_fe_scalar(cx, MLC_DTYPE_F32, 0, &zero));
  MLC_RETURN_IF_ERROR(mlc_fe_binary(cx, MLC_OP_GREATER, y, zero, &pos));
  mlc_value *args[3] = {pos, wv, zero};
  return mlc_fe_emit(cx, MLC_OP_WHERE, args, 3, NULL, 0, &out[0]);
}
