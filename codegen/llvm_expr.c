/*
** llvm_expr.c: TIR expressions -> LLVM values.
**
** Value types: ints as iN (signedness from the TIR dtype), bool as i1,
** float32 as float, float64 as double, and float16/bfloat16 as float: they
** are widened on load, computed in float32 and rounded to nearest even on
** store and on casts.  Integer division never traps (x / 0 == 0, INT_MIN /
** -1 wraps), float -> int casts saturate (NaN gives 0), and a select
** evaluates only the chosen arm when an arm reads memory.
**
** Vectors (expressions of lanes > 1) are LLVM vectors of the same value
** types: elementwise ops, compares giving <N x i1>, selects and casts map
** one to one; LLVM intrinsics take vectors (llvm.exp.v16f32, ...) and the
** libm functions codegen calls (tanh, erf, ...) run per lane.  A load or
** store whose last index is a ramp of stride 1 (the others scalars) is one
** contiguous vector access aligned to its element; any other is a gather
** or scatter (llvm.masked.gather / scatter).  Under a mask (cf->mask: a
** masked if, or the arm of a vector select that reads memory) accesses are
** masked, so lanes that are off touch no memory.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/cg_int.h"

LLVMTypeRef cg_value_type(cg_module *cm, mlc_dtype t) {
  switch (t) {
    case MLC_DTYPE_F32:
    case MLC_DTYPE_F16:
    case MLC_DTYPE_BF16: return cm->t_f32;
    case MLC_DTYPE_F64: return cm->t_f64;
    case MLC_DTYPE_I8:
    case MLC_DTYPE_U8: return cm->t_i8;
    case MLC_DTYPE_I16:
    case MLC_DTYPE_U16: return cm->t_i16;
    case MLC_DTYPE_I32:
    case MLC_DTYPE_U32: return cm->t_i32;
    case MLC_DTYPE_I64:
    case MLC_DTYPE_U64: return cm->t_i64;
    case MLC_DTYPE_BOOL: return cm->t_i1;
    default: return NULL;
  }
}

LLVMTypeRef cg_mem_type(cg_module *cm, mlc_dtype t) {
  switch (t) {
    case MLC_DTYPE_F16: return cm->t_half;
    case MLC_DTYPE_BF16: return cm->t_i16;
    case MLC_DTYPE_BOOL: return cm->t_i8;
    default: return cg_value_type(cm, t);
  }
}

LLVMTypeRef cg_vec_type(cg_module *cm, mlc_dtype t, int lanes) {
  LLVMTypeRef s = cg_value_type(cm, t);
  return (s && lanes > 1) ? LLVMVectorType(s, (unsigned)lanes) : s;
}

static int is_vec(LLVMTypeRef t) { return LLVMGetTypeKind(t) == LLVMVectorTypeKind; }
static LLVMTypeRef elem_of(LLVMTypeRef t) { return is_vec(t) ? LLVMGetElementType(t) : t; }

/* |elem| shaped like |like|: a vector of as many lanes, or |elem| itself. */
static LLVMTypeRef shaped(LLVMTypeRef elem, LLVMTypeRef like) {
  return is_vec(like) ? LLVMVectorType(elem, LLVMGetVectorSize(like)) : elem;
}

/* The scalar constant |c| in every lane of |ty| (|c| when |ty| is scalar).
** Lanes are at most MLC_TIR_MAX_LANES (cg_expr checks). */
static LLVMValueRef splat_const(LLVMTypeRef ty, LLVMValueRef c) {
  if (!is_vec(ty)) return c;
  unsigned n = LLVMGetVectorSize(ty);
  LLVMValueRef v[MLC_TIR_MAX_LANES];
  if (n > MLC_TIR_MAX_LANES) return LLVMGetPoison(ty);
  for (unsigned i = 0; i < n; i++) v[i] = c;
  return LLVMConstVector(v, n);
}

static LLVMValueRef iconst(LLVMTypeRef t, int64_t v) {
  return splat_const(t, LLVMConstInt(elem_of(t), (unsigned long long)v, 0));
}
static LLVMValueRef fconst(LLVMTypeRef t, double v) { return splat_const(t, LLVMConstReal(elem_of(t), v)); }

LLVMValueRef cg_splat(cg_func *cf, LLVMValueRef v, int lanes) {
  if (!v || lanes <= 1) return v;
  cg_module *cm = cf->cm;
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(v), (unsigned)lanes);
  LLVMValueRef one = LLVMBuildInsertElement(cm->b, LLVMGetPoison(vt), v, LLVMConstInt(cm->t_i32, 0, 0), "");
  LLVMValueRef zeros = LLVMConstNull(LLVMVectorType(cm->t_i32, (unsigned)lanes));
  return LLVMBuildShuffleVector(cm->b, one, LLVMGetPoison(vt), zeros, "");
}

static int is_fp(mlc_dtype t) { return mlc_dtype_is_float(t); }
static int is_uns(mlc_dtype t) { return !mlc_dtype_is_signed(t); } /* uints and bool */

/* ---- float16 / bfloat16 rounding ------------------------------------------- */

/* float -> bfloat16 bits, rounding to nearest even; NaN stays a quiet NaN. */
/* (Scalars or vectors: types and constants take the shape of the operand.) */
static LLVMValueRef f32_to_bf16_bits(cg_func *cf, LLVMValueRef x) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef i32 = shaped(cm->t_i32, LLVMTypeOf(x));
  LLVMValueRef bits = LLVMBuildBitCast(b, x, i32, "");
  LLVMValueRef hi = LLVMBuildLShr(b, bits, iconst(i32, 16), "");
  LLVMValueRef lsb = LLVMBuildAnd(b, hi, iconst(i32, 1), "");
  LLVMValueRef bias = LLVMBuildAdd(b, lsb, iconst(i32, 0x7fff), "");
  LLVMValueRef rnd = LLVMBuildLShr(b, LLVMBuildAdd(b, bits, bias, ""), iconst(i32, 16), "");
  LLVMValueRef qnan = LLVMBuildOr(b, hi, iconst(i32, 0x40), "");
  LLVMValueRef isnan = LLVMBuildFCmp(b, LLVMRealUNO, x, x, "");
  return LLVMBuildTrunc(b, LLVMBuildSelect(b, isnan, qnan, rnd, ""), shaped(cm->t_i16, i32), "");
}

static LLVMValueRef bf16_bits_to_f32(cg_func *cf, LLVMValueRef h) {
  cg_module *cm = cf->cm;
  LLVMTypeRef i32 = shaped(cm->t_i32, LLVMTypeOf(h));
  LLVMValueRef w = LLVMBuildZExt(cm->b, h, i32, "");
  w = LLVMBuildShl(cm->b, w, iconst(i32, 16), "");
  return LLVMBuildBitCast(cm->b, w, shaped(cm->t_f32, i32), "");
}

/* Rounds a float (or double) value to |t|'s precision, as a float. */
static LLVMValueRef round_to(cg_func *cf, LLVMValueRef x, mlc_dtype t) {
  cg_module *cm = cf->cm;
  LLVMTypeRef xt = LLVMTypeOf(x);
  if (t == MLC_DTYPE_F16) {
    LLVMValueRef h = LLVMBuildFPTrunc(cm->b, x, shaped(cm->t_half, xt), "");
    return LLVMBuildFPExt(cm->b, h, shaped(cm->t_f32, xt), "");
  }
  if (elem_of(xt) == cm->t_f64) x = LLVMBuildFPTrunc(cm->b, x, shaped(cm->t_f32, xt), "");
  if (t == MLC_DTYPE_BF16) return bf16_bits_to_f32(cf, f32_to_bf16_bits(cf, x));
  return x;
}

/* |v| rounded to bfloat16 on the host, for constants. */
static double bf16_round_const(double v) {
  float f = (float)v;
  if (isnan(f)) return v;
  uint32_t u;
  memcpy(&u, &f, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  memcpy(&f, &u, 4);
  return f;
}

/* ---- casts ---------------------------------------------------------------------- */

static LLVMValueRef intrinsic(cg_func *cf, const char *name, LLVMTypeRef *over, int nover, LLVMValueRef *args,
                              int nargs) {
  cg_module *cm = cf->cm;
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) {
    cg_fail(cm, mlc_make_status(MLC_INTERNAL, "codegen: LLVM has no intrinsic %s", name));
    return NULL;
  }
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cm->mod, id, over, (size_t)nover);
  LLVMTypeRef fty = LLVMIntrinsicGetType(cm->ctx, id, over, (size_t)nover);
  return LLVMBuildCall2(cm->b, fty, fn, args, (unsigned)nargs, "");
}

LLVMValueRef cg_convert(cg_func *cf, LLVMValueRef v, mlc_dtype from, mlc_dtype to) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  if (!v) return NULL;
  if (from == to) return v;
  LLVMTypeRef sty = cg_value_type(cm, to);
  if (!sty) {
    cg_fail(cm, mlc_make_status(MLC_UNIMPLEMENTED, "codegen: cast to %s", mlc_dtype_name(to)));
    return NULL;
  }
  LLVMTypeRef vt = LLVMTypeOf(v), ty = shaped(sty, vt);
  if (to == MLC_DTYPE_BOOL) {
    if (is_fp(from)) return LLVMBuildFCmp(b, LLVMRealUNE, v, fconst(vt, 0.0), "");
    return LLVMBuildICmp(b, LLVMIntNE, v, iconst(vt, 0), "");
  }
  if (!is_fp(from) && !is_fp(to)) {
    unsigned fw = LLVMGetIntTypeWidth(elem_of(vt)), tw = LLVMGetIntTypeWidth(sty);
    if (fw == tw) return v;
    if (fw > tw) return LLVMBuildTrunc(b, v, ty, "");
    return is_uns(from) ? LLVMBuildZExt(b, v, ty, "") : LLVMBuildSExt(b, v, ty, "");
  }
  if (!is_fp(from)) { /* int -> float */
    LLVMValueRef f = is_uns(from) ? LLVMBuildUIToFP(b, v, ty, "") : LLVMBuildSIToFP(b, v, ty, "");
    return (to == MLC_DTYPE_F16 || to == MLC_DTYPE_BF16) ? round_to(cf, f, to) : f;
  }
  if (!is_fp(to)) { /* float -> int, saturating */
    LLVMTypeRef over[2] = {ty, vt};
    return intrinsic(cf, is_uns(to) ? "llvm.fptoui.sat" : "llvm.fptosi.sat", over, 2, &v, 1);
  }
  /* float -> float */
  if (to == MLC_DTYPE_F64) return LLVMBuildFPExt(b, v, ty, "");
  if (from == MLC_DTYPE_F64 && to == MLC_DTYPE_F16) {
    LLVMValueRef h = LLVMBuildFPTrunc(b, v, shaped(cm->t_half, vt), "");
    return LLVMBuildFPExt(b, h, shaped(cm->t_f32, vt), "");
  }
  if (to == MLC_DTYPE_F32) return from == MLC_DTYPE_F64 ? LLVMBuildFPTrunc(b, v, ty, "") : v;
  return round_to(cf, v, to); /* to f16 / bf16 */
}

/* ---- memory ------------------------------------------------------------------ */

LLVMValueRef cg_expr_i64(cg_func *cf, const mlc_tir_expr *e) {
  LLVMValueRef v = cg_expr(cf, e);
  if (!v) return NULL;
  return cg_convert(cf, v, e->dtype, MLC_DTYPE_I64);
}

LLVMValueRef cg_address(cg_func *cf, const mlc_tir_buffer *buf, int n, mlc_tir_expr *const *idx) {
  cg_module *cm = cf->cm;
  LLVMValueRef base = cf->bufs[buf->id];
  if (!base) {
    cg_fail(cm, mlc_make_status(MLC_INTERNAL, "codegen: kernel %s: buffer %s used outside its scope", cf->sym,
                                buf->name));
    return NULL;
  }
  /* the lowered form indexes flat buffers: the offset is the one index */
  if (n != 1) {
    cg_fail(cm, mlc_make_status(MLC_INVALID_ARGUMENT,
                                "codegen: kernel %s: access to buffer %s with %d indices (flatten the function's "
                                "buffers with mlc_tir_lower_func first)",
                                cf->sym, buf->name, n));
    return NULL;
  }
  LLVMValueRef off = cg_expr_i64(cf, idx[0]);
  if (!off) return NULL;
  return LLVMBuildInBoundsGEP2(cm->b, cg_mem_type(cm, buf->dtype), base, &off, 1, "");
}

static void alias_md(cg_func *cf, LLVMValueRef inst, const mlc_tir_buffer *buf) {
  cg_module *cm = cf->cm;
  if (!cf->noalias || !cf->scope[buf->id]) return;
  LLVMMetadataRef own = cf->scope[buf->id]; /* a view shares its parameter's scope */
  LLVMMetadataRef others[256];
  int n = 0;
  for (int i = 0; i < cf->nscoped && n < 256; i++)
    if (cf->scope[cf->scoped_ids[i]] != own) others[n++] = cf->scope[cf->scoped_ids[i]];
  LLVMSetMetadata(inst, cm->md_scope, LLVMMetadataAsValue(cm->ctx, LLVMMDNodeInContext2(cm->ctx, &own, 1)));
  if (n)
    LLVMSetMetadata(inst, cm->md_noalias,
                    LLVMMetadataAsValue(cm->ctx, LLVMMDNodeInContext2(cm->ctx, others, (size_t)n)));
}

/* A value of |buf|'s memory type (scalar or vector) as a value type. */
static LLVMValueRef from_mem(cg_func *cf, const mlc_tir_buffer *buf, LLVMValueRef v) {
  cg_module *cm = cf->cm;
  LLVMTypeRef vt = LLVMTypeOf(v);
  switch (buf->dtype) {
    case MLC_DTYPE_F16: return LLVMBuildFPExt(cm->b, v, shaped(cm->t_f32, vt), "");
    case MLC_DTYPE_BF16: return bf16_bits_to_f32(cf, v);
    case MLC_DTYPE_BOOL: return LLVMBuildICmp(cm->b, LLVMIntNE, v, iconst(vt, 0), "");
    default: return v;
  }
}

/* A value (scalar or vector) in |buf|'s memory type. */
static LLVMValueRef to_mem(cg_func *cf, const mlc_tir_buffer *buf, LLVMValueRef v) {
  cg_module *cm = cf->cm;
  LLVMTypeRef vt = LLVMTypeOf(v);
  switch (buf->dtype) {
    case MLC_DTYPE_F16: return LLVMBuildFPTrunc(cm->b, v, shaped(cm->t_half, vt), "");
    case MLC_DTYPE_BF16: return f32_to_bf16_bits(cf, v);
    case MLC_DTYPE_BOOL: return LLVMBuildZExt(cm->b, v, shaped(cm->t_i8, vt), "");
    default: return v;
  }
}

LLVMValueRef cg_load_elem(cg_func *cf, const mlc_tir_buffer *buf, LLVMValueRef addr) {
  cg_module *cm = cf->cm;
  LLVMTypeRef mt = cg_mem_type(cm, buf->dtype);
  LLVMValueRef v = LLVMBuildLoad2(cm->b, mt, addr, "");
  LLVMSetAlignment(v, (unsigned)mlc_dtype_size(buf->dtype));
  alias_md(cf, v, buf);
  return from_mem(cf, buf, v);
}

void cg_store_elem(cg_func *cf, const mlc_tir_buffer *buf, LLVMValueRef addr, LLVMValueRef v) {
  cg_module *cm = cf->cm;
  LLVMValueRef st = LLVMBuildStore(cm->b, to_mem(cf, buf, v), addr);
  LLVMSetAlignment(st, (unsigned)mlc_dtype_size(buf->dtype));
  alias_md(cf, st, buf);
}

/* ---- vector memory access --------------------------------------------------------- */

/* Nonzero if indices |idx| address |lanes| consecutive elements: the last
** is a ramp of stride 1, the others scalars. */
static int contiguous(int n, mlc_tir_expr *const *idx) {
  if (n == 0) return 0;
  for (int d = 0; d < n - 1; d++)
    if (idx[d]->lanes != 1) return 0;
  const mlc_tir_expr *last = idx[n - 1];
  return last->kind == MLC_TIR_RAMP && mlc_tir_is_const(last->ramp.stride, 1);
}

/* The address of the first element of a contiguous access. */
static LLVMValueRef first_address(cg_func *cf, const mlc_tir_buffer *buf, int n, mlc_tir_expr *const *idx) {
  mlc_tir_expr *first[16];
  if (n > 16) {
    cg_fail(cf->cm, mlc_make_status(MLC_UNIMPLEMENTED, "codegen: kernel %s: buffer %s of rank %d (vector access)",
                                    cf->sym, buf->name, n));
    return NULL;
  }
  memcpy(first, idx, sizeof *first * (size_t)n);
  first[n - 1] = idx[n - 1]->ramp.base;
  return cg_address(cf, buf, n, first);
}

/* <lanes x ptr>: the address of each lane's element. */
static LLVMValueRef lane_addresses(cg_func *cf, const mlc_tir_buffer *buf, int n, mlc_tir_expr *const *idx,
                                   int lanes) {
  cg_module *cm = cf->cm;
  LLVMValueRef base = cf->bufs[buf->id];
  if (!base) {
    cg_fail(cm, mlc_make_status(MLC_INTERNAL, "codegen: kernel %s: buffer %s used outside its scope", cf->sym,
                                buf->name));
    return NULL;
  }
  LLVMValueRef off = n ? NULL : cg_splat(cf, LLVMConstInt(cm->t_i64, 0, 0), lanes);
  for (int d = 0; d < n; d++) {
    LLVMValueRef i = cg_convert(cf, cg_expr(cf, idx[d]), idx[d]->dtype, MLC_DTYPE_I64);
    if (!i) return NULL;
    if (!is_vec(LLVMTypeOf(i))) i = cg_splat(cf, i, lanes);
    if (off) {
      LLVMValueRef ext = cg_expr_i64(cf, buf->shape[d]);
      if (!ext) return NULL;
      off = LLVMBuildAdd(cm->b, LLVMBuildMul(cm->b, off, cg_splat(cf, ext, lanes), ""), i, "");
    } else {
      off = i;
    }
  }
  return LLVMBuildInBoundsGEP2(cm->b, cg_mem_type(cm, buf->dtype), base, &off, 1, "");
}

static LLVMValueRef all_lanes(cg_func *cf, int lanes) {
  return iconst(LLVMVectorType(cf->cm->t_i1, (unsigned)lanes), 1);
}

/* The alignment of a contiguous vector access at index |idx| of |buf|: in
** a GPU kernel a shared buffer's storage is aligned to 16 bytes
** (cg_shared_alloc), so an index known to be a multiple of a power of two
** aligns the access that far (ld.shared.v4); otherwise the element's. */
static unsigned vector_align(const cg_func *cf, const mlc_tir_buffer *buf, int n, mlc_tir_expr *const *idx) {
  unsigned esize = (unsigned)mlc_dtype_size(buf->dtype);
  if (!cf->device || buf->scope != MLC_TIR_SCOPE_SHARED || n != 1 || idx[0]->kind != MLC_TIR_RAMP) return esize;
  int64_t m = mlc_tir_known_multiple(idx[0]->ramp.base), a = (int64_t)esize * m;
  return a >= 16 ? 16 : (unsigned)a;
}

/* buffer[idx] as a vector of |lanes| (cf->mask applies). */
static LLVMValueRef load_vec(cg_func *cf, const mlc_tir_buffer *buf, int n, mlc_tir_expr *const *idx, int lanes) {
  cg_module *cm = cf->cm;
  LLVMTypeRef mt = LLVMVectorType(cg_mem_type(cm, buf->dtype), (unsigned)lanes);
  LLVMValueRef align = LLVMConstInt(cm->t_i32, mlc_dtype_size(buf->dtype), 0);
  LLVMValueRef mask = cf->mask, v;
  if (mask && LLVMGetVectorSize(LLVMTypeOf(mask)) != (unsigned)lanes) {
    cg_fail(cm, mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: kernel %s: a load of %d lanes under a mask of %u",
                                cf->sym, lanes, LLVMGetVectorSize(LLVMTypeOf(mask))));
    return NULL;
  }
  if (contiguous(n, idx)) {
    LLVMValueRef p = first_address(cf, buf, n, idx);
    if (!p) return NULL;
    if (mask) {
      LLVMTypeRef over[2] = {mt, cm->t_ptr};
      LLVMValueRef args[4] = {p, align, mask, LLVMGetPoison(mt)};
      v = intrinsic(cf, "llvm.masked.load", over, 2, args, 4);
    } else {
      v = LLVMBuildLoad2(cm->b, mt, p, "");
      LLVMSetAlignment(v, vector_align(cf, buf, n, idx));
    }
  } else {
    LLVMValueRef ps = lane_addresses(cf, buf, n, idx, lanes);
    if (!ps) return NULL;
    LLVMTypeRef over[2] = {mt, LLVMTypeOf(ps)};
    LLVMValueRef args[4] = {ps, align, mask ? mask : all_lanes(cf, lanes), LLVMGetPoison(mt)};
    v = intrinsic(cf, "llvm.masked.gather", over, 2, args, 4);
  }
  if (!v) return NULL;
  alias_md(cf, v, buf);
  return from_mem(cf, buf, v);
}

void cg_store_vec(cg_func *cf, const mlc_tir_buffer *buf, int n, mlc_tir_expr *const *idx, LLVMValueRef v) {
  cg_module *cm = cf->cm;
  if (!v) return;
  if (!is_vec(LLVMTypeOf(v))) {
    cg_fail(cm, mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: kernel %s: a scalar stored at vector indices of %s",
                                cf->sym, buf->name));
    return;
  }
  int lanes = (int)LLVMGetVectorSize(LLVMTypeOf(v));
  LLVMValueRef mask = cf->mask, st;
  if (mask && LLVMGetVectorSize(LLVMTypeOf(mask)) != (unsigned)lanes) {
    cg_fail(cm, mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: kernel %s: a store of %d lanes under a mask of %u",
                                cf->sym, lanes, LLVMGetVectorSize(LLVMTypeOf(mask))));
    return;
  }
  LLVMValueRef align = LLVMConstInt(cm->t_i32, mlc_dtype_size(buf->dtype), 0);
  if (contiguous(n, idx)) {
    LLVMValueRef p = first_address(cf, buf, n, idx);
    if (!p) return;
    v = to_mem(cf, buf, v);
    if (mask) {
      LLVMTypeRef over[2] = {LLVMTypeOf(v), cm->t_ptr};
      LLVMValueRef args[4] = {v, p, align, mask};
      st = intrinsic(cf, "llvm.masked.store", over, 2, args, 4);
    } else {
      st = LLVMBuildStore(cm->b, v, p);
      LLVMSetAlignment(st, vector_align(cf, buf, n, idx));
    }
  } else {
    LLVMValueRef ps = lane_addresses(cf, buf, n, idx, lanes);
    if (!ps) return;
    v = to_mem(cf, buf, v);
    LLVMTypeRef over[2] = {LLVMTypeOf(v), LLVMTypeOf(ps)};
    LLVMValueRef args[4] = {v, ps, align, mask ? mask : all_lanes(cf, lanes)};
    st = intrinsic(cf, "llvm.masked.scatter", over, 2, args, 4);
  }
  if (st) alias_md(cf, st, buf);
}

LLVMValueRef cg_any_lane(cg_func *cf, LLVMValueRef mask) {
  LLVMTypeRef t = LLVMTypeOf(mask);
  return intrinsic(cf, "llvm.vector.reduce.or", &t, 1, &mask, 1);
}

/* ---- arithmetic ------------------------------------------------------------------- */

/* Integer division and remainder with the IR's no-trap semantics. */
static LLVMValueRef int_divmod(cg_func *cf, mlc_tir_binop op, mlc_dtype t, LLVMValueRef a, LLVMValueRef bv) {
  LLVMBuilderRef b = cf->cm->b;
  LLVMTypeRef ty = LLVMTypeOf(a);
  LLVMValueRef zero = iconst(ty, 0), one = iconst(ty, 1);
  LLVMValueRef bz = LLVMBuildICmp(b, LLVMIntEQ, bv, zero, "");
  int div = op == MLC_TIR_FLOORDIV || op == MLC_TIR_TRUNCDIV || op == MLC_TIR_DIV;
  if (is_uns(t)) {
    LLVMValueRef d = LLVMBuildSelect(b, bz, one, bv, "");
    LLVMValueRef r = div ? LLVMBuildUDiv(b, a, d, "") : LLVMBuildURem(b, a, d, "");
    return LLVMBuildSelect(b, bz, zero, r, "");
  }
  LLVMValueRef bm1 = LLVMBuildICmp(b, LLVMIntEQ, bv, iconst(ty, -1), "");
  LLVMValueRef special = LLVMBuildOr(b, bz, bm1, "");
  LLVMValueRef d = LLVMBuildSelect(b, special, one, bv, "");
  LLVMValueRef q = LLVMBuildSDiv(b, a, d, "");
  LLVMValueRef r = LLVMBuildSRem(b, a, d, "");
  int floor = op == MLC_TIR_FLOORDIV || op == MLC_TIR_FLOORMOD || op == MLC_TIR_DIV;
  LLVMValueRef res = div ? q : r;
  if (floor) {
    /* adjust when the remainder is nonzero and its sign differs from b's */
    LLVMValueRef rnz = LLVMBuildICmp(b, LLVMIntNE, r, zero, "");
    LLVMValueRef sdiff = LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildXor(b, r, bv, ""), zero, "");
    LLVMValueRef adj = LLVMBuildAnd(b, rnz, sdiff, "");
    LLVMValueRef fixed = div ? LLVMBuildSub(b, q, one, "") : LLVMBuildAdd(b, r, bv, "");
    res = LLVMBuildSelect(b, adj, fixed, res, "");
  }
  LLVMValueRef sp = div ? LLVMBuildSelect(b, bz, zero, LLVMBuildSub(b, zero, a, ""), "") : zero;
  return LLVMBuildSelect(b, special, sp, res, "");
}

static LLVMValueRef call_f(cg_func *cf, const char *intr, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  return intrinsic(cf, intr, &t, 1, &x, 1);
}

/* |v| with fp contraction allowed: a multiply feeding an add becomes one
** fused multiply-add (one rounding instead of two). */
static LLVMValueRef contract(LLVMValueRef v) {
  if (v && LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v))
    LLVMSetFastMathFlags(v, LLVMGetFastMathFlags(v) | LLVMFastMathAllowContract);
  return v;
}

static LLVMValueRef binary(cg_func *cf, const mlc_tir_expr *e) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  mlc_dtype t = e->bin.a->dtype;
  LLVMValueRef x = cg_expr(cf, e->bin.a);
  LLVMValueRef y = x ? cg_expr(cf, e->bin.b) : NULL;
  if (!x || !y) return NULL;
  int fp = is_fp(t), uns = is_uns(t);
  switch (e->bin.op) {
    case MLC_TIR_ADD: return fp ? contract(LLVMBuildFAdd(b, x, y, "")) : LLVMBuildAdd(b, x, y, "");
    case MLC_TIR_SUB: return fp ? contract(LLVMBuildFSub(b, x, y, "")) : LLVMBuildSub(b, x, y, "");
    case MLC_TIR_MUL: return fp ? contract(LLVMBuildFMul(b, x, y, "")) : LLVMBuildMul(b, x, y, "");
    case MLC_TIR_DIV:
    case MLC_TIR_FLOORDIV:
    case MLC_TIR_TRUNCDIV:
      if (fp) {
        LLVMValueRef q = LLVMBuildFDiv(b, x, y, "");
        if (e->bin.op == MLC_TIR_DIV) return q;
        return call_f(cf, e->bin.op == MLC_TIR_FLOORDIV ? "llvm.floor" : "llvm.trunc", q);
      }
      return int_divmod(cf, e->bin.op, t, x, y);
    case MLC_TIR_FLOORMOD:
      if (fp) {
        LLVMValueRef fl = call_f(cf, "llvm.floor", LLVMBuildFDiv(b, x, y, ""));
        return fl ? LLVMBuildFSub(b, x, LLVMBuildFMul(b, fl, y, ""), "") : NULL;
      }
      return int_divmod(cf, e->bin.op, t, x, y);
    case MLC_TIR_TRUNCMOD:
      if (fp) return LLVMBuildFRem(b, x, y, "");
      return int_divmod(cf, e->bin.op, t, x, y);
    case MLC_TIR_MIN:
    case MLC_TIR_MAX: {
      int mn = e->bin.op == MLC_TIR_MIN;
      LLVMValueRef c = fp ? LLVMBuildFCmp(b, mn ? LLVMRealOLT : LLVMRealOGT, x, y, "")
                          : LLVMBuildICmp(b, mn ? (uns ? LLVMIntULT : LLVMIntSLT) : (uns ? LLVMIntUGT : LLVMIntSGT),
                                          x, y, "");
      return LLVMBuildSelect(b, c, x, y, "");
    }
    case MLC_TIR_EQ:
      return fp ? LLVMBuildFCmp(b, LLVMRealOEQ, x, y, "") : LLVMBuildICmp(b, LLVMIntEQ, x, y, "");
    case MLC_TIR_NE:
      return fp ? LLVMBuildFCmp(b, LLVMRealUNE, x, y, "") : LLVMBuildICmp(b, LLVMIntNE, x, y, "");
    case MLC_TIR_LT:
      return fp ? LLVMBuildFCmp(b, LLVMRealOLT, x, y, "") : LLVMBuildICmp(b, uns ? LLVMIntULT : LLVMIntSLT, x, y, "");
    case MLC_TIR_LE:
      return fp ? LLVMBuildFCmp(b, LLVMRealOLE, x, y, "") : LLVMBuildICmp(b, uns ? LLVMIntULE : LLVMIntSLE, x, y, "");
    case MLC_TIR_GT:
      return fp ? LLVMBuildFCmp(b, LLVMRealOGT, x, y, "") : LLVMBuildICmp(b, uns ? LLVMIntUGT : LLVMIntSGT, x, y, "");
    case MLC_TIR_GE:
      return fp ? LLVMBuildFCmp(b, LLVMRealOGE, x, y, "") : LLVMBuildICmp(b, uns ? LLVMIntUGE : LLVMIntSGE, x, y, "");
    case MLC_TIR_AND: return LLVMBuildAnd(b, x, y, "");
    case MLC_TIR_OR: return LLVMBuildOr(b, x, y, "");
    case MLC_TIR_BINOP_COUNT: break;
  }
  cg_fail(cm, mlc_make_status(MLC_INTERNAL, "codegen: unknown binary op %d", (int)e->bin.op));
  return NULL;
}

static LLVMValueRef libm_scalar(cg_func *cf, const char *fname, LLVMValueRef *args, int n);

/* A libm function of one or two float/double args, declared as pure; on
** vectors, called once per lane. */
static LLVMValueRef libm(cg_func *cf, const char *fname, LLVMValueRef *args, int n) {
  cg_module *cm = cf->cm;
  LLVMTypeRef t = LLVMTypeOf(args[0]);
  if (!is_vec(t)) return libm_scalar(cf, fname, args, n);
  LLVMValueRef r = LLVMGetPoison(t);
  for (unsigned i = 0; i < LLVMGetVectorSize(t); i++) {
    LLVMValueRef lane = LLVMConstInt(cm->t_i32, i, 0), a[2];
    for (int k = 0; k < n; k++) a[k] = LLVMBuildExtractElement(cm->b, args[k], lane, "");
    r = LLVMBuildInsertElement(cm->b, r, libm_scalar(cf, fname, a, n), lane, "");
  }
  return r;
}

static LLVMValueRef libm_scalar(cg_func *cf, const char *fname, LLVMValueRef *args, int n) {
  cg_module *cm = cf->cm;
  LLVMTypeRef t = LLVMTypeOf(args[0]);
  char name[32];
  /* on the GPU, libdevice's (codegen/nvptx.c) */
  snprintf(name, sizeof name, "%s%s%s", cm->device ? "__nv_" : "", fname, t == cm->t_f32 ? "f" : "");
  LLVMTypeRef params[2] = {t, t};
  LLVMTypeRef fty = LLVMFunctionType(t, params, (unsigned)n, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(cm->mod, name);
  if (!fn) {
    fn = LLVMAddFunction(cm->mod, name, fty);
    static const char *const attrs[] = {"nounwind", "willreturn", "nosync", "nofree"};
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
      unsigned k = LLVMGetEnumAttributeKindForName(attrs[i], strlen(attrs[i]));
      LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cm->ctx, k, 0));
    }
    /* memory(none): these functions read and write no memory we can see */
    unsigned mk = LLVMGetEnumAttributeKindForName("memory", 6);
    if (mk) LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cm->ctx, mk, 0));
  }
  return LLVMBuildCall2(cm->b, fty, fn, args, (unsigned)n, "");
}

/*
** e^x for float32 (scalar or vector) inline, so that a vector of lanes is
** a few vector instructions instead of one libm call per lane (softmax,
** sigmoid): Cephes' expf, within 2 ulp.  x = n ln2 + r with n the nearest
** integer to x / ln2 and |r| <= ln2 / 2 (ln2 in two parts, exact n ln2_hi);
** e^r = 1 + r + r^2 p(r), p of degree 5; 2^n as 2^(n/2) 2^(n - n/2), two normal
** powers whose product overflows to inf or underflows to 0 as e^x does.
** x is clamped to [-104, 88.7228] first (n fits); NaN stays NaN, x above
** 88.7228 (e^x above FLT_MAX) gives inf.  Other types: llvm.exp.
*/
/* 2^|n| as float32 (of type |t|) for int32 |n| in [-126, 127]: the bits
** of the exponent field. */
static LLVMValueRef pow2_f32(LLVMBuilderRef b, LLVMValueRef n, LLVMTypeRef t) {
  LLVMTypeRef it = LLVMTypeOf(n);
  return LLVMBuildBitCast(b, LLVMBuildShl(b, LLVMBuildAdd(b, n, iconst(it, 127), ""), iconst(it, 23), ""), t, "");
}

static LLVMValueRef exp_f(cg_func *cf, LLVMValueRef x) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  if (elem_of(t) != cm->t_f32) return call_f(cf, "llvm.exp", x);
  LLVMTypeRef it = shaped(cm->t_i32, t);
  LLVMValueRef hi_args[2] = {x, fconst(t, 88.72283935546875)};
  LLVMValueRef c = intrinsic(cf, "llvm.minnum", &t, 1, hi_args, 2);
  LLVMValueRef lo_args[2] = {c, fconst(t, -104.0)};
  c = c ? intrinsic(cf, "llvm.maxnum", &t, 1, lo_args, 2) : NULL;
  if (!c) return NULL;
  LLVMValueRef n = call_f(cf, "llvm.roundeven", contract(LLVMBuildFMul(b, c, fconst(t, 1.44269504088896341), "")));
  if (!n) return NULL;
  LLVMValueRef r = contract(LLVMBuildFSub(b, c, contract(LLVMBuildFMul(b, n, fconst(t, 0.693359375), "")), ""));
  r = contract(LLVMBuildFSub(b, r, contract(LLVMBuildFMul(b, n, fconst(t, -2.12194440e-4), "")), ""));
  static const double coef[] = {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                                4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1};
  LLVMValueRef p = fconst(t, coef[0]);
  for (int i = 1; i < 6; i++)
    p = contract(LLVMBuildFAdd(b, contract(LLVMBuildFMul(b, p, r, "")), fconst(t, coef[i]), ""));
  LLVMValueRef r2 = contract(LLVMBuildFMul(b, r, r, ""));
  p = contract(LLVMBuildFAdd(b, contract(LLVMBuildFMul(b, p, r2, "")), r, ""));
  p = contract(LLVMBuildFAdd(b, p, fconst(t, 1.0), ""));
  /* 2^n1 * 2^n2, n1 = n / 2 (truncated), n2 = n - n1, both in [-75, 64] */
  LLVMValueRef ni = LLVMBuildFPToSI(b, n, it, "");
  LLVMValueRef n1 = LLVMBuildSDiv(b, ni, iconst(it, 2), "");
  LLVMValueRef n2 = LLVMBuildSub(b, ni, n1, "");
  LLVMValueRef s1 = pow2_f32(b, n1, t), s2 = pow2_f32(b, n2, t);
  LLVMValueRef y = LLVMBuildFMul(b, LLVMBuildFMul(b, p, s1, ""), s2, "");
  LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGT, x, fconst(t, 88.72283935546875), "");
  y = LLVMBuildSelect(b, big, fconst(t, INFINITY), y, "");
  LLVMValueRef nan = LLVMBuildFCmp(b, LLVMRealUNO, x, x, "");
  return LLVMBuildSelect(b, nan, x, y, "");
}

/* T.prefetch(B[i]): llvm.prefetch of B[i]'s address, a read, locality 2
** (x86 prefetcht1: into L2, not L1, where what is prefetched, the next
** panel's block of a tiled kernel's operand, would evict the block in use
** before its time); nothing in a GPU kernel. */
static LLVMValueRef prefetch(cg_func *cf, const mlc_tir_expr *ld) {
  cg_module *cm = cf->cm;
  LLVMValueRef zero = LLVMConstInt(cm->t_i32, 0, 0);
  if (cf->device) return zero;
  LLVMValueRef p = cg_address(cf, ld->load.buffer, ld->load.n, ld->load.indices);
  if (!p) return NULL;
  LLVMValueRef args[4] = {p, zero, LLVMConstInt(cm->t_i32, 2, 0), LLVMConstInt(cm->t_i32, 1, 0)};
  LLVMTypeRef pt = LLVMTypeOf(p);
  return intrinsic(cf, "llvm.prefetch", &pt, 1, args, 4) ? zero : NULL;
}

static LLVMValueRef call(cg_func *cf, const mlc_tir_expr *e) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  LLVMValueRef a[2] = {NULL, NULL};
  if (e->call.op == MLC_TIR_INTRIN_SYNC_THREADS) return cg_sync_threads(cf);
  if (e->call.op == MLC_TIR_INTRIN_PREFETCH) return prefetch(cf, e->call.args[0]);
  if (e->call.op == MLC_TIR_INTRIN_LOOP_END) return cg_loop_end(cf, e->call.args[0]->var);
  if (e->call.op == MLC_TIR_INTRIN_WARP_SUM || e->call.op == MLC_TIR_INTRIN_WARP_MAX ||
      e->call.op == MLC_TIR_INTRIN_WARP_MIN) {
    LLVMValueRef x = cg_expr(cf, e->call.args[0]);
    return x ? cg_warp_reduce(cf, e->call.op, e->call.args[0]->dtype, x) : NULL;
  }
  for (int i = 0; i < e->call.n && i < 2; i++) {
    a[i] = cg_expr(cf, e->call.args[i]);
    if (!a[i]) return NULL;
  }
  mlc_dtype at = e->call.args[0]->dtype;
  LLVMValueRef x = a[0];
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef r = NULL;
  if (!is_fp(at)) {
    if (e->call.op == MLC_TIR_INTRIN_ABS) {
      if (is_uns(at)) return x;
      LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, x, iconst(t, 0), "");
      return LLVMBuildSelect(b, neg, LLVMBuildSub(b, iconst(t, 0), x, ""), x, "");
    }
    cg_fail(cm, mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: kernel %s: %s of %s", cf->sym,
                                mlc_tir_intrin_name(e->call.op), mlc_dtype_name(at)));
    return NULL;
  }
  LLVMValueRef one = fconst(t, 1.0);
  switch (e->call.op) {
    case MLC_TIR_INTRIN_EXP: r = exp_f(cf, x); break;
    case MLC_TIR_INTRIN_EXP2: r = call_f(cf, "llvm.exp2", x); break;
    case MLC_TIR_INTRIN_LOG: r = call_f(cf, "llvm.log", x); break;
    case MLC_TIR_INTRIN_LOG2: r = call_f(cf, "llvm.log2", x); break;
    case MLC_TIR_INTRIN_SQRT: r = call_f(cf, "llvm.sqrt", x); break;
    case MLC_TIR_INTRIN_RSQRT: {
      LLVMValueRef s = call_f(cf, "llvm.sqrt", x);
      r = s ? LLVMBuildFDiv(b, one, s, "") : NULL;
      break;
    }
    case MLC_TIR_INTRIN_TANH: r = libm(cf, "tanh", a, 1); break;
    case MLC_TIR_INTRIN_SIGMOID: {
      LLVMValueRef ex = exp_f(cf, LLVMBuildFNeg(b, x, ""));
      r = ex ? LLVMBuildFDiv(b, one, LLVMBuildFAdd(b, one, ex, ""), "") : NULL;
      break;
    }
    case MLC_TIR_INTRIN_ERF: r = libm(cf, "erf", a, 1); break;
    case MLC_TIR_INTRIN_POW: {
      LLVMValueRef args[2] = {a[0], a[1]};
      r = intrinsic(cf, "llvm.pow", &t, 1, args, 2);
      break;
    }
    case MLC_TIR_INTRIN_ABS: r = call_f(cf, "llvm.fabs", x); break;
    case MLC_TIR_INTRIN_FLOOR: r = call_f(cf, "llvm.floor", x); break;
    case MLC_TIR_INTRIN_CEIL: r = call_f(cf, "llvm.ceil", x); break;
    case MLC_TIR_INTRIN_ROUND: r = call_f(cf, "llvm.roundeven", x); break;
    case MLC_TIR_INTRIN_TRUNC: r = call_f(cf, "llvm.trunc", x); break;
    case MLC_TIR_INTRIN_SIN: r = call_f(cf, "llvm.sin", x); break;
    case MLC_TIR_INTRIN_COS: r = call_f(cf, "llvm.cos", x); break;
    case MLC_TIR_INTRIN_TAN: r = libm(cf, "tan", a, 1); break;
    case MLC_TIR_INTRIN_ASIN: r = libm(cf, "asin", a, 1); break;
    case MLC_TIR_INTRIN_ACOS: r = libm(cf, "acos", a, 1); break;
    case MLC_TIR_INTRIN_ATAN: r = libm(cf, "atan", a, 1); break;
    case MLC_TIR_INTRIN_SINH: r = libm(cf, "sinh", a, 1); break;
    case MLC_TIR_INTRIN_COSH: r = libm(cf, "cosh", a, 1); break;
    case MLC_TIR_INTRIN_ASINH: r = libm(cf, "asinh", a, 1); break;
    case MLC_TIR_INTRIN_ACOSH: r = libm(cf, "acosh", a, 1); break;
    case MLC_TIR_INTRIN_ATANH: r = libm(cf, "atanh", a, 1); break;
    case MLC_TIR_INTRIN_ISNAN: return LLVMBuildFCmp(b, LLVMRealUNO, x, x, "");
    case MLC_TIR_INTRIN_ISINF: {
      LLVMValueRef ab = call_f(cf, "llvm.fabs", x);
      return ab ? LLVMBuildFCmp(b, LLVMRealOEQ, ab, fconst(t, INFINITY), "") : NULL;
    }
    case MLC_TIR_INTRIN_SYNC_THREADS:
    case MLC_TIR_INTRIN_PREFETCH:
    case MLC_TIR_INTRIN_LOOP_END:
    case MLC_TIR_INTRIN_WARP_SUM:
    case MLC_TIR_INTRIN_WARP_MAX:
    case MLC_TIR_INTRIN_WARP_MIN:
    case MLC_TIR_INTRIN_COUNT: break;
  }
  if (!r) {
    if (!cm->err) cg_fail(cm, mlc_make_status(MLC_INTERNAL, "codegen: intrinsic %d", (int)e->call.op));
    return NULL;
  }
  /* f16 / bf16 results are rounded like any other f16 / bf16 value would be
  ** when stored; keep float precision until then. */
  return r;
}

/* The current mask narrowed to the lanes of |c| (or of not |c|). */
static LLVMValueRef narrow_mask(cg_func *cf, LLVMValueRef c, int negate) {
  LLVMBuilderRef b = cf->cm->b;
  if (negate) c = LLVMBuildNot(b, c, "");
  return cf->mask ? LLVMBuildAnd(b, cf->mask, c, "") : c;
}

/* c ? t : f, evaluating only the chosen arm when an arm reads memory (for
** a vector condition: each arm's memory accesses masked to its lanes). */
static LLVMValueRef select_expr(cg_func *cf, const mlc_tir_expr *e) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  /* one condition for all lanes: a branch, so that a scalar load under it
  ** (broadcast to the lanes) is not run where the condition is false */
  int uniform = e->select.c->kind == MLC_TIR_BROADCAST && !cf->mask;
  LLVMValueRef c = cg_expr(cf, uniform ? e->select.c->un.a : e->select.c);
  if (!c) return NULL;
  if (is_vec(LLVMTypeOf(c)) && (mlc_tir_expr_has_load(e->select.t) || mlc_tir_expr_has_load(e->select.f))) {
    LLVMValueRef saved = cf->mask, on = narrow_mask(cf, c, 0), off = narrow_mask(cf, c, 1);
    cf->mask = on;
    LLVMValueRef t = cg_expr(cf, e->select.t);
    cf->mask = off;
    LLVMValueRef f = t ? cg_expr(cf, e->select.f) : NULL;
    cf->mask = saved;
    return f ? LLVMBuildSelect(b, c, t, f, "") : NULL;
  }
  if (!mlc_tir_expr_has_load(e->select.t) && !mlc_tir_expr_has_load(e->select.f)) {
    LLVMValueRef t = cg_expr(cf, e->select.t);
    LLVMValueRef f = t ? cg_expr(cf, e->select.f) : NULL;
    return f ? LLVMBuildSelect(b, c, t, f, "") : NULL;
  }
  LLVMBasicBlockRef bt = LLVMAppendBasicBlockInContext(cm->ctx, cf->fn, "sel.t");
  LLVMBasicBlockRef bf = LLVMAppendBasicBlockInContext(cm->ctx, cf->fn, "sel.f");
  LLVMBasicBlockRef bj = LLVMAppendBasicBlockInContext(cm->ctx, cf->fn, "sel.join");
  LLVMBuildCondBr(b, c, bt, bf);
  LLVMPositionBuilderAtEnd(b, bt);
  LLVMValueRef tv = cg_expr(cf, e->select.t);
  LLVMBasicBlockRef et = LLVMGetInsertBlock(b);
  LLVMBuildBr(b, bj);
  LLVMPositionBuilderAtEnd(b, bf);
  LLVMValueRef fv = tv ? cg_expr(cf, e->select.f) : NULL;
  LLVMBasicBlockRef ef = LLVMGetInsertBlock(b);
  LLVMBuildBr(b, bj);
  LLVMPositionBuilderAtEnd(b, bj);
  if (!tv || !fv) return NULL;
  LLVMValueRef phi = LLVMBuildPhi(b, LLVMTypeOf(tv), "");
  LLVMValueRef vals[2] = {tv, fv};
  LLVMBasicBlockRef blocks[2] = {et, ef};
  LLVMAddIncoming(phi, vals, blocks, 2);
  return phi;
}

LLVMValueRef cg_expr(cg_func *cf, const mlc_tir_expr *e) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  if (cm->err) return NULL;
  LLVMTypeRef ty = cg_value_type(cm, e->dtype);
  if (!ty) {
    cg_fail(cm, mlc_make_status(MLC_UNIMPLEMENTED, "codegen: kernel %s: dtype %s", cf->sym, mlc_dtype_name(e->dtype)));
    return NULL;
  }
  if (e->lanes < 1 || e->lanes > MLC_TIR_MAX_LANES) {
    cg_fail(cm, mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: kernel %s: an expression of %d lanes", cf->sym,
                                e->lanes));
    return NULL;
  }
  switch (e->kind) {
    case MLC_TIR_INT_IMM: return LLVMConstInt(ty, (unsigned long long)e->int_value, 0);
    case MLC_TIR_FLOAT_IMM:
      if (e->dtype == MLC_DTYPE_F16) return LLVMBuildFPExt(b, LLVMConstReal(cm->t_half, e->float_value), cm->t_f32, "");
      if (e->dtype == MLC_DTYPE_BF16) return LLVMConstReal(cm->t_f32, bf16_round_const(e->float_value));
      return LLVMConstReal(ty, e->float_value);
    case MLC_TIR_VAR_REF: {
      LLVMValueRef v = cf->vars[e->var->id];
      if (!v)
        cg_fail(cm, mlc_make_status(MLC_INTERNAL, "codegen: kernel %s: variable %s used outside its scope", cf->sym,
                                    e->var->name));
      return v;
    }
    case MLC_TIR_BINARY: return binary(cf, e);
    case MLC_TIR_NOT: {
      LLVMValueRef a = cg_expr(cf, e->un.a);
      return a ? LLVMBuildNot(b, a, "") : NULL;
    }
    case MLC_TIR_SELECT: return select_expr(cf, e);
    case MLC_TIR_CAST: return cg_convert(cf, cg_expr(cf, e->un.a), e->un.a->dtype, e->dtype);
    case MLC_TIR_LOAD: {
      if (e->lanes > 1) return load_vec(cf, e->load.buffer, e->load.n, e->load.indices, e->lanes);
      LLVMValueRef addr = cg_address(cf, e->load.buffer, e->load.n, e->load.indices);
      return addr ? cg_load_elem(cf, e->load.buffer, addr) : NULL;
    }
    case MLC_TIR_CALL: return call(cf, e);
    case MLC_TIR_REDUCE:
      cg_fail(cm, mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: kernel %s: te reduction left in the IR", cf->sym));
      return NULL;
    case MLC_TIR_RAMP: { /* splat(base) + splat(stride) * <0, 1, ..., lanes-1> */
      LLVMValueRef base = cg_expr(cf, e->ramp.base);
      LLVMValueRef stride = base ? cg_expr(cf, e->ramp.stride) : NULL;
      if (!stride) return NULL;
      LLVMValueRef steps[MLC_TIR_MAX_LANES];
      for (int i = 0; i < e->lanes; i++) steps[i] = LLVMConstInt(ty, (unsigned long long)i, 0);
      LLVMValueRef iota = LLVMConstVector(steps, (unsigned)e->lanes);
      return LLVMBuildAdd(b, cg_splat(cf, base, e->lanes), LLVMBuildMul(b, cg_splat(cf, stride, e->lanes), iota, ""), "");
    }
    case MLC_TIR_BROADCAST: return cg_splat(cf, cg_expr(cf, e->un.a), e->lanes);
  }
  return NULL;
}
