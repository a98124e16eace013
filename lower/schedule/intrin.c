/*
** intrin.c: the tensor intrinsics registry (intrin.h) and the intrinsics.
**
**   avx512_fma_f32x16    C[j] += A[0] * B[j], j < 16: one row of 16 float32
**                        lanes, a vectorized loop (one AVX-512 FMA)
**   avx512_fma_f32_6x16  C[i, j] += A[i, 0] * B[0, j], i < 6, j < 16: the
**                        rank-1 update of a 6x16 register tile (the step of
**                        a GEMM micro-kernel over k): 6 unrolled rows of
**                        one vectorized FMA each
**   dot_f32x16           C[0] += A[k] * B[k], k < 16: a reduction over 16
**                        lanes (products as one vector, then summed in order)
**
** Both are built with the TIR builders; the implementations stay TIR (loop
** kinds the vectorize pass and LLVM turn into vector code), never calls to
** an external library.
*/
#include <string.h>

#include "lower/schedule/intrin.h"

/*
** The rank-1 update C += A * B over a tile of |rows| x |cols| float32
** (|rows| 0: the one-row form with 1-D buffers A: (1,), B: (cols,),
** C: (cols,); else A: (rows, 1), B: (1, cols), C: (rows, cols)).
*/
static mlc_status fma_tile(mlc_tir_module *m, const char *name, int64_t rows, int64_t cols, mlc_tir_func **desc,
                           mlc_tir_func **impl) {
  const mlc_dtype f32 = MLC_DTYPE_F32, i64 = MLC_DTYPE_I64;
  int two = rows > 0;
  int64_t da[2] = {two ? rows : 1, 1}, db[2] = {1, cols}, dc[2] = {rows, cols};
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", f32, two ? 2 : 1, da, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", f32, two ? 2 : 1, two ? db : db + 1, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *C = mlc_tir_buffer_new_c(m, "C", f32, two ? 2 : 1, two ? dc : dc + 1, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *params[3] = {A, B, C};
  /* the update C[ci] = C[ci] + A[ai] * B[bi] over index variables i (two) and j */
  for (int pass = 0; pass < 2; pass++) {
    mlc_tir_var *i = mlc_tir_var_new(m, "i", i64), *j = mlc_tir_var_new(m, "j", i64);
    mlc_tir_var *vi = mlc_tir_var_new(m, "vi", i64), *vj = mlc_tir_var_new(m, "vj", i64);
    /* the description indexes with the block's variables, the implementation with the loops' */
    mlc_tir_expr *xi = mlc_tir_ref(m, pass ? i : vi), *xj = mlc_tir_ref(m, pass ? j : vj);
    mlc_tir_expr *zero = mlc_tir_i64(m, 0);
    mlc_tir_expr *ai[2] = {two ? xi : zero, zero}, *bi[2] = {zero, xj}, *ci[2] = {xi, xj};
    mlc_tir_expr *const *bidx = two ? bi : bi + 1, *const *cidx = two ? ci : ci + 1;
    int r = two ? 2 : 1;
    mlc_tir_expr *prod = mlc_tir_mul(m, mlc_tir_load(m, A, r, ai), mlc_tir_load(m, B, r, bidx));
    mlc_tir_stmt *st = mlc_tir_store(m, C, r, cidx, mlc_tir_add(m, mlc_tir_load(m, C, r, cidx), prod));
    if (pass == 0) {
      mlc_tir_iter_var its[2] = {
          {vi, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), mlc_tir_i64(m, rows), mlc_tir_ref(m, i)},
          {vj, MLC_TIR_ITER_SPATIAL, mlc_tir_i64(m, 0), mlc_tir_i64(m, cols), mlc_tir_ref(m, j)}};
      st = mlc_tir_block(m, "update", two ? 2 : 1, two ? its : its + 1, NULL, st);
    }
    st = mlc_tir_for(m, j, mlc_tir_i64(m, 0), mlc_tir_i64(m, cols),
                     pass ? MLC_TIR_FOR_VECTORIZED : MLC_TIR_FOR_SERIAL, NULL, st);
    if (two)
      st = mlc_tir_for(m, i, mlc_tir_i64(m, 0), mlc_tir_i64(m, rows),
                       pass ? MLC_TIR_FOR_UNROLLED : MLC_TIR_FOR_SERIAL, NULL, st);
    const char *fname = mlc_arena_printf(m->arena, "%s_%s", name, pass ? "impl" : "desc");
    mlc_tir_func *f = st && fname ? mlc_tir_func_new(m, fname, 3, params, st) : NULL;
    if (!f) return mlc_oom();
    *(pass ? impl : desc) = f;
  }
  return NULL;
}

static mlc_status fma_f32x16(mlc_tir_module *m, mlc_tir_func **desc, mlc_tir_func **impl) {
  return fma_tile(m, "avx512_fma_f32x16", 0, 16, desc, impl);
}

static mlc_status fma_f32_6x16(mlc_tir_module *m, mlc_tir_func **desc, mlc_tir_func **impl) {
  return fma_tile(m, "avx512_fma_f32_6x16", 6, 16, desc, impl);
}

/*
** C[0] += sum over k < 16 of A[k] * B[k], float32.  The implementation
** multiplies the 16 lanes at once into a local vector, then adds the
** products to C[0] in the description's order (the same result, bit for
** bit).
*/
static mlc_status dot_f32x16(mlc_tir_module *m, mlc_tir_func **desc, mlc_tir_func **impl) {
  const mlc_dtype f32 = MLC_DTYPE_F32, i64 = MLC_DTYPE_I64;
  const int64_t d16 = 16, d1 = 1;
  mlc_tir_buffer *A = mlc_tir_buffer_new_c(m, "A", f32, 1, &d16, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *B = mlc_tir_buffer_new_c(m, "B", f32, 1, &d16, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *C = mlc_tir_buffer_new_c(m, "C", f32, 1, &d1, MLC_TIR_SCOPE_GLOBAL);
  mlc_tir_buffer *acc = mlc_tir_buffer_new_c(m, "acc", f32, 1, &d16, MLC_TIR_SCOPE_LOCAL);
  mlc_tir_buffer *params[3] = {A, B, C};
  mlc_tir_expr *zero = mlc_tir_i64(m, 0);
  /* the description */
  mlc_tir_var *k = mlc_tir_var_new(m, "k", i64), *vk = mlc_tir_var_new(m, "vk", i64);
  mlc_tir_expr *x = mlc_tir_ref(m, vk);
  mlc_tir_expr *upd = mlc_tir_add(m, mlc_tir_load(m, C, 1, &zero),
                                  mlc_tir_mul(m, mlc_tir_load(m, A, 1, &x), mlc_tir_load(m, B, 1, &x)));
  mlc_tir_iter_var it = {vk, MLC_TIR_ITER_REDUCE, mlc_tir_i64(m, 0), mlc_tir_i64(m, 16), mlc_tir_ref(m, k)};
  mlc_tir_stmt *d = mlc_tir_block(m, "update", 1, &it, NULL, mlc_tir_store(m, C, 1, &zero, upd));
  d = mlc_tir_for(m, k, mlc_tir_i64(m, 0), mlc_tir_i64(m, 16), MLC_TIR_FOR_SERIAL, NULL, d);
  /* the implementation */
  mlc_tir_var *k1 = mlc_tir_var_new(m, "k", i64), *k2 = mlc_tir_var_new(m, "k", i64);
  mlc_tir_expr *x1 = mlc_tir_ref(m, k1), *x2 = mlc_tir_ref(m, k2);
  mlc_tir_stmt *mul = mlc_tir_store(m, acc, 1, &x1, mlc_tir_mul(m, mlc_tir_load(m, A, 1, &x1), mlc_tir_load(m, B, 1, &x1)));
  mul = mlc_tir_for(m, k1, mlc_tir_i64(m, 0), mlc_tir_i64(m, 16), MLC_TIR_FOR_VECTORIZED, NULL, mul);
  mlc_tir_stmt *sum = mlc_tir_store(m, C, 1, &zero, mlc_tir_add(m, mlc_tir_load(m, C, 1, &zero), mlc_tir_load(m, acc, 1, &x2)));
  sum = mlc_tir_for(m, k2, mlc_tir_i64(m, 0), mlc_tir_i64(m, 16), MLC_TIR_FOR_SERIAL, NULL, sum);
  mlc_tir_stmt *p = mlc_tir_allocate(m, acc, mlc_tir_seq2(m, mul, sum));
  *desc = d ? mlc_tir_func_new(m, "dot_f32x16_desc", 3, params, d) : NULL;
  *impl = p ? mlc_tir_func_new(m, "dot_f32x16_impl", 3, params, p) : NULL;
  return *desc && *impl ? NULL : mlc_oom();
}

static const mlc_sch_intrin intrins[] = {
    {"avx512_fma_f32x16", "C[j] += A[0] * B[j] for 16 float32 lanes", fma_f32x16},
    {"avx512_fma_f32_6x16", "C[i, j] += A[i, 0] * B[0, j] over a 6x16 float32 register tile", fma_f32_6x16},
    {"dot_f32x16", "C[0] += A[k] * B[k] summed over 16 float32 lanes (a reduction)", dot_f32x16},
};

int mlc_sch_intrin_count(void) { return (int)(sizeof intrins / sizeof intrins[0]); }

const mlc_sch_intrin *mlc_sch_intrin_at(int i) {
  return i >= 0 && i < mlc_sch_intrin_count() ? &intrins[i] : NULL;
}

const mlc_sch_intrin *mlc_sch_intrin_find(const char *name) {
  for (int i = 0; name && i < mlc_sch_intrin_count(); i++)
    if (strcmp(intrins[i].name, name) == 0) return &intrins[i];
  return NULL;
}

/* ---- checks ---------------------------------------------------------------------- */

static int has_block(const mlc_tir_stmt *st) {
  if (!st) return 0;
  switch (st->kind) {
    case MLC_TIR_BLOCK: return 1;
    case MLC_TIR_FOR: return has_block(st->loop.body);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++)
        if (has_block(st->seq.stmts[i])) return 1;
      return 0;
    case MLC_TIR_IF: return has_block(st->if_.then_s) || has_block(st->if_.else_s);
    case MLC_TIR_ALLOCATE: return has_block(st->alloc.body);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return 0;
  }
  return 0;
}

static int expr_loads(const mlc_tir_expr *e, const mlc_tir_buffer *b) {
  if (!e) return 0;
  switch (e->kind) {
    case MLC_TIR_LOAD:
      if (e->load.buffer == b) return 1;
      for (int i = 0; i < e->load.n; i++)
        if (expr_loads(e->load.indices[i], b)) return 1;
      return 0;
    case MLC_TIR_BINARY: return expr_loads(e->bin.a, b) || expr_loads(e->bin.b, b);
    case MLC_TIR_NOT:
    case MLC_TIR_CAST: return expr_loads(e->un.a, b);
    case MLC_TIR_SELECT: return expr_loads(e->select.c, b) || expr_loads(e->select.t, b) || expr_loads(e->select.f, b);
    case MLC_TIR_CALL:
      for (int i = 0; i < e->call.n; i++)
        if (expr_loads(e->call.args[i], b)) return 1;
      return 0;
    case MLC_TIR_RAMP: return expr_loads(e->ramp.base, b) || expr_loads(e->ramp.stride, b);
    case MLC_TIR_BROADCAST: return expr_loads(e->un.a, b);
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF:
    case MLC_TIR_REDUCE: return 0;
  }
  return 0;
}

/* Nonzero if |st| stores to or loads from |b|. */
static int accesses(const mlc_tir_stmt *st, const mlc_tir_buffer *b) {
  if (!st) return 0;
  switch (st->kind) {
    case MLC_TIR_BLOCK: return accesses(st->block.init, b) || accesses(st->block.body, b);
    case MLC_TIR_FOR: return accesses(st->loop.body, b);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++)
        if (accesses(st->seq.stmts[i], b)) return 1;
      return 0;
    case MLC_TIR_IF: return expr_loads(st->if_.cond, b) || accesses(st->if_.then_s, b) || accesses(st->if_.else_s, b);
    case MLC_TIR_ALLOCATE: return accesses(st->alloc.body, b);
    case MLC_TIR_STORE:
      if (st->store.buffer == b || expr_loads(st->store.value, b)) return 1;
      for (int i = 0; i < st->store.n; i++)
        if (expr_loads(st->store.indices[i], b)) return 1;
      return 0;
    case MLC_TIR_EVALUATE: return expr_loads(st->eval.value, b);
    case MLC_TIR_ASSERT: return 0;
  }
  return 0;
}

static int same_shape(const mlc_tir_buffer *a, const mlc_tir_buffer *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return 0;
  for (int d = 0; d < a->rank; d++)
    if (a->shape[d]->kind != MLC_TIR_INT_IMM || b->shape[d]->kind != MLC_TIR_INT_IMM ||
        a->shape[d]->int_value != b->shape[d]->int_value)
      return 0;
  return 1;
}

mlc_status mlc_sch_intrin_build(mlc_tir_module *m, const mlc_sch_intrin *in, mlc_tir_func **desc,
                                mlc_tir_func **impl) {
  mlc_tir_func *d = NULL, *p = NULL;
  MLC_RETURN_IF_ERROR(in->build(m, &d, &p));
  if (d->nparams != p->nparams)
    return mlc_make_status(MLC_INTERNAL, "tensor intrinsic \"%s\": %d description parameters, %d implementation ones",
                           in->name, d->nparams, p->nparams);
  for (int i = 0; i < d->nparams; i++) {
    if (!same_shape(d->params[i], p->params[i]))
      return mlc_make_status(MLC_INTERNAL, "tensor intrinsic \"%s\": parameter %d differs in dtype or shape", in->name,
                             i);
    if (!accesses(d->body, d->params[i]))
      return mlc_make_status(MLC_INTERNAL, "tensor intrinsic \"%s\": the description does not access %s", in->name,
                             d->params[i]->name);
  }
  const mlc_tir_stmt *st = d->body;
  while (st && st->kind == MLC_TIR_FOR) st = st->loop.body;
  if (!st || st->kind != MLC_TIR_BLOCK)
    return mlc_make_status(MLC_INTERNAL, "tensor intrinsic \"%s\": the description is not loops around one block",
                           in->name);
  if (has_block(p->body))
    return mlc_make_status(MLC_INTERNAL, "tensor intrinsic \"%s\": the implementation has a block", in->name);
  MLC_RETURN_IF_ERROR(mlc_tir_verify_func(d));
  MLC_RETURN_IF_ERROR(mlc_tir_verify_func(p));
  *desc = d;
  *impl = p;
  return NULL;
}
