/*
** llvm_func.c: one prim func -> one kernel with the runtime ABI.
**
**   i32 sym(ptr args, ptr arg_codes, i32 nargs, ptr ctx)
**
** The entry checks, in order: the argument count; per argument its code
** (a tensor), that it is not NULL, its rank, dtype (code, bits, lanes) and
** that its shape array is present; then binds scalar parameters from
** shapes and checks every dimension against the parameter's shape.  Each
** failure calls ctx->api->set_error with a message naming the kernel and
** the argument and returns -1.  Data pointers are data + byte_offset.
*/
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_int.h"
#include "lower/tir_visit.h"
#include "runtime/rt_abi.h"

void cg_func_attrs(cg_module *cm, LLVMValueRef fn) {
  unsigned k = LLVMGetEnumAttributeKindForName("nounwind", 8);
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cm->ctx, k, 0));
  LLVMAddTargetDependentFunctionAttr(fn, "target-cpu", cm->target->cpu);
  if (cm->target->features[0]) LLVMAddTargetDependentFunctionAttr(fn, "target-features", cm->target->features);
}

/* A field of the DLTensor at |t|. */
static LLVMValueRef field(cg_func *cf, LLVMValueRef t, size_t off, LLVMTypeRef ty, const char *name) {
  cg_module *cm = cf->cm;
  LLVMValueRef o = LLVMConstInt(cm->t_i64, off, 0);
  LLVMValueRef p = LLVMBuildInBoundsGEP2(cm->b, cm->t_i8, t, &o, 1, "");
  return LLVMBuildLoad2(cm->b, ty, p, name);
}

/* The DLPack type code(s) and bits of |t|; code2 is an alternative or -1. */
static void dl_code(mlc_dtype t, int *code, int *code2, int *bits) {
  *code2 = -1;
  *bits = (int)mlc_dtype_size(t) * 8;
  if (t == MLC_DTYPE_BF16) *code = kDLBfloat;
  else if (mlc_dtype_is_float(t)) *code = kDLFloat;
  else if (t == MLC_DTYPE_BOOL) {
    *code = kDLUInt;
    *code2 = 6; /* kDLBool in DLPack >= 0.8 */
  } else if (mlc_dtype_is_signed(t)) *code = kDLInt;
  else *code = kDLUInt;
}

typedef struct buf_list {
  const mlc_tir_buffer **out;
  int *n, max;
} buf_list;

static int alloc_pre(void *ctx, const mlc_tir_stmt *s) {
  buf_list *l = ctx;
  if (s->kind == MLC_TIR_ALLOCATE && *l->n < l->max) l->out[(*l->n)++] = s->alloc.buffer;
  return s->kind == MLC_TIR_BLOCK ? MLC_TIR_VISIT_SKIP : MLC_TIR_VISIT_CONTINUE; /* refused by cg_stmt */
}

/* Collects the buffers |s| allocates. */
static void alloc_bufs(const mlc_tir_stmt *s, const mlc_tir_buffer **out, int *n, int max) {
  buf_list l = {out, n, max};
  mlc_tir_visitor v = {0};
  v.ctx = &l;
  v.pre_stmt = alloc_pre;
  mlc_tir_visit_stmt(&v, s);
}

/* One alias scope per buffer of |f| when its parameters do not overlap. */
static void setup_alias_scopes(cg_func *cf) {
  cg_module *cm = cf->cm;
  const mlc_tir_func *f = cf->f;
  const mlc_tir_attr *a = mlc_tir_func_attr(f, "tir.noalias");
  if (!a || a->kind == MLC_TIR_ATTR_STR || !a->i) return;
  enum { MAXB = 256 };
  const mlc_tir_buffer *bufs[MAXB];
  int n = 0;
  for (int i = 0; i < f->nparams && n < MAXB; i++) bufs[n++] = f->params[i];
  alloc_bufs(f->body, bufs, &n, MAXB);
  char name[512];
  snprintf(name, sizeof name, "mlc.%s", cf->sym);
  LLVMMetadataRef dname = LLVMMDStringInContext2(cm->ctx, name, strlen(name));
  LLVMMetadataRef domain = LLVMMDNodeInContext2(cm->ctx, &dname, 1);
  for (int i = 0; i < n; i++) {
    if (cf->scope[bufs[i]->id]) continue;
    snprintf(name, sizeof name, "mlc.%s.%s.%d", cf->sym, bufs[i]->name, i);
    LLVMMetadataRef ops[2] = {LLVMMDStringInContext2(cm->ctx, name, strlen(name)), domain};
    cf->scope[bufs[i]->id] = LLVMMDNodeInContext2(cm->ctx, ops, 2);
    cf->scoped_ids[cf->nscoped++] = bufs[i]->id;
  }
  for (int i = 0; i < f->nviews; i++)
    if (f->views[i]->view_of) cf->scope[f->views[i]->id] = cf->scope[f->views[i]->view_of->id];
  cf->noalias = 1;
}

static void emit_entry(cg_func *cf) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  const mlc_tir_func *f = cf->f;
  LLVMValueRef args = LLVMGetParam(cf->fn, 0), codes = LLVMGetParam(cf->fn, 1);
  LLVMValueRef nargs = LLVMGetParam(cf->fn, 2);
  char msg[1024];
  snprintf(msg, sizeof msg, "kernel %s: expected %d arguments", cf->sym, f->nparams);
  cg_check(cf, LLVMBuildICmp(b, LLVMIntEQ, nargs, LLVMConstInt(cm->t_i32, (unsigned)f->nparams, 0), ""), msg);
  LLVMValueRef *shapes = mlc_mem_calloc((size_t)f->nparams + 1, sizeof *shapes);
  if (!shapes) {
    cg_fail(cm, mlc_oom());
    return;
  }
  for (int i = 0; i < f->nparams; i++) {
    const mlc_tir_buffer *buf = f->params[i];
    LLVMValueRef idx = LLVMConstInt(cm->t_i64, (unsigned)i, 0);
    LLVMValueRef code = LLVMBuildLoad2(b, cm->t_i32, LLVMBuildInBoundsGEP2(b, cm->t_i32, codes, &idx, 1, ""), "");
    snprintf(msg, sizeof msg, "kernel %s: argument %d (%s) is not a tensor", cf->sym, i, buf->name);
    cg_check(cf, LLVMBuildICmp(b, LLVMIntEQ, code, LLVMConstInt(cm->t_i32, MLC_ARG_TENSOR, 0), ""), msg);
    LLVMValueRef t = LLVMBuildLoad2(b, cm->t_ptr, LLVMBuildInBoundsGEP2(b, cm->t_ptr, args, &idx, 1, ""), buf->name);
    snprintf(msg, sizeof msg, "kernel %s: argument %d (%s) is NULL", cf->sym, i, buf->name);
    cg_check(cf, LLVMBuildIsNotNull(b, t, ""), msg);
    LLVMValueRef ndim = field(cf, t, offsetof(DLTensor, ndim), cm->t_i32, "ndim");
    snprintf(msg, sizeof msg, "kernel %s: argument %d (%s) must have rank %d", cf->sym, i, buf->name, buf->rank);
    cg_check(cf, LLVMBuildICmp(b, LLVMIntEQ, ndim, LLVMConstInt(cm->t_i32, (unsigned)buf->rank, 0), ""), msg);
    int c1, c2, bits;
    dl_code(buf->dtype, &c1, &c2, &bits);
    size_t dto = offsetof(DLTensor, dtype);
    LLVMValueRef dc = field(cf, t, dto + offsetof(DLDataType, code), cm->t_i8, "");
    LLVMValueRef db = field(cf, t, dto + offsetof(DLDataType, bits), cm->t_i8, "");
    LLVMValueRef dl = field(cf, t, dto + offsetof(DLDataType, lanes), cm->t_i16, "");
    LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntEQ, dc, LLVMConstInt(cm->t_i8, (unsigned)c1, 0), "");
    if (c2 >= 0) ok = LLVMBuildOr(b, ok, LLVMBuildICmp(b, LLVMIntEQ, dc, LLVMConstInt(cm->t_i8, (unsigned)c2, 0), ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, db, LLVMConstInt(cm->t_i8, (unsigned)bits, 0), ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, dl, LLVMConstInt(cm->t_i16, 1, 0), ""), "");
    snprintf(msg, sizeof msg, "kernel %s: argument %d (%s) must have dtype %s", cf->sym, i, buf->name,
             mlc_dtype_name(buf->dtype));
    cg_check(cf, ok, msg);
    LLVMValueRef data = field(cf, t, offsetof(DLTensor, data), cm->t_ptr, "");
    LLVMValueRef off = field(cf, t, offsetof(DLTensor, byte_offset), cm->t_i64, "");
    cf->bufs[buf->id] = LLVMBuildInBoundsGEP2(b, cm->t_i8, data, &off, 1, buf->name);
    if (buf->rank > 0) {
      shapes[i] = field(cf, t, offsetof(DLTensor, shape), cm->t_ptr, "shape");
      snprintf(msg, sizeof msg, "kernel %s: argument %d (%s) has no shape", cf->sym, i, buf->name);
      cg_check(cf, LLVMBuildIsNotNull(b, shapes[i], ""), msg);
    }
  }
  for (int i = 0; i < f->nviews; i++) /* a view is its parameter's memory */
    if (f->views[i]->view_of) cf->bufs[f->views[i]->id] = cf->bufs[f->views[i]->view_of->id];
  for (int k = 0; k < f->nscalars; k++) {
    const mlc_tir_scalar_param *sp = &f->scalars[k];
    LLVMValueRef d = LLVMConstInt(cm->t_i64, (unsigned)sp->dim, 0);
    LLVMValueRef v = LLVMBuildLoad2(b, cm->t_i64, LLVMBuildInBoundsGEP2(b, cm->t_i64, shapes[sp->param], &d, 1, ""),
                                    sp->var->name);
    cf->vars[sp->var->id] = v;
  }
  for (int i = 0; i < f->nparams && !cm->err; i++) {
    const mlc_tir_buffer *buf = f->params[i];
    for (int d = 0; d < buf->rank; d++) {
      LLVMValueRef want = cg_expr_i64(cf, buf->shape[d]);
      if (!want) break;
      LLVMValueRef di = LLVMConstInt(cm->t_i64, (unsigned)d, 0);
      LLVMValueRef got = LLVMBuildLoad2(b, cm->t_i64, LLVMBuildInBoundsGEP2(b, cm->t_i64, shapes[i], &di, 1, ""), "");
      mlc_strbuf e = MLC_STRBUF_INIT;
      mlc_tir_print_expr(buf->shape[d], &e);
      snprintf(msg, sizeof msg, "kernel %s: argument %d (%s): shape[%d] must be %s", cf->sym, i, buf->name, d,
               mlc_sb_str(&e));
      mlc_sb_fini(&e);
      cg_check(cf, LLVMBuildICmp(b, LLVMIntEQ, got, want, ""), msg);
    }
  }
  mlc_mem_free(shapes);
}

/* ---- id ranges: functions may come from another module's builders, so
** size the tables by the ids the function actually uses ---- */

typedef struct idmax {
  int var, buf;
} idmax;

static void max_var(idmax *x, const mlc_tir_var *v) {
  if (v && v->id + 1 > x->var) x->var = v->id + 1;
}

static int max_expr_pre(void *ctx, const mlc_tir_expr *e) {
  if (e->kind == MLC_TIR_VAR_REF) max_var(ctx, e->var);
  return MLC_TIR_VISIT_CONTINUE;
}

static int max_buf_cb(void *ctx, const mlc_tir_buffer *b);

static int max_stmt_pre(void *ctx, const mlc_tir_stmt *s) {
  if (s->kind == MLC_TIR_FOR) max_var(ctx, s->loop.var);
  return s->kind == MLC_TIR_BLOCK ? MLC_TIR_VISIT_SKIP : MLC_TIR_VISIT_CONTINUE; /* refused by cg_stmt */
}

static void max_walk(idmax *x, const mlc_tir_expr *e, const mlc_tir_stmt *s) {
  mlc_tir_visitor v = {0};
  v.ctx = x;
  v.pre_expr = max_expr_pre;
  v.pre_stmt = max_stmt_pre;
  v.buffer = max_buf_cb;
  if (e) mlc_tir_visit_expr(&v, e);
  if (s) mlc_tir_visit_stmt(&v, s);
}

static void max_buf(idmax *x, const mlc_tir_buffer *b) {
  if (!b || b->id + 1 <= x->buf) return;
  x->buf = b->id + 1;
  for (int i = 0; i < b->rank; i++) max_walk(x, b->shape[i], NULL);
}

static int max_buf_cb(void *ctx, const mlc_tir_buffer *b) {
  max_buf(ctx, b);
  return MLC_TIR_VISIT_CONTINUE;
}

void cg_kernel(cg_module *cm, const mlc_tir_func *f) {
  cg_func cf;
  memset(&cf, 0, sizeof cf);
  cf.cm = cm;
  cf.f = f;
  cf.sym = mlc_tir_func_symbol(f);
  if (LLVMGetNamedFunction(cm->mod, cf.sym)) {
    cg_fail(cm, mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: two prim funcs have the symbol \"%s\"", cf.sym));
    return;
  }
  idmax ids = {0, 0};
  for (int i = 0; i < f->nparams; i++) max_buf(&ids, f->params[i]);
  for (int i = 0; i < f->nviews; i++) max_buf(&ids, f->views[i]);
  for (int i = 0; i < f->nscalars; i++) max_var(&ids, f->scalars[i].var);
  max_walk(&ids, NULL, f->body);
  int nv = cf.nvars = ids.var, nb = cf.nbufs = ids.buf;
  cf.vars = mlc_mem_calloc((size_t)nv + 1, sizeof *cf.vars);
  cf.bufs = mlc_mem_calloc((size_t)nb + 1, sizeof *cf.bufs);
  cf.scope = mlc_mem_calloc((size_t)nb + 1, sizeof *cf.scope);
  cf.scoped_ids = mlc_mem_calloc((size_t)nb + 1, sizeof *cf.scoped_ids);
  if (!cf.vars || !cf.bufs || !cf.scope || !cf.scoped_ids) {
    cg_fail(cm, mlc_oom());
    goto done;
  }
  LLVMTypeRef params[4] = {cm->t_ptr, cm->t_ptr, cm->t_i32, cm->t_ptr};
  LLVMTypeRef fty = LLVMFunctionType(cm->t_i32, params, 4, 0);
  cf.fn = LLVMAddFunction(cm->mod, cf.sym, fty);
  cg_func_attrs(cm, cf.fn);
  static const char *const pn[4] = {"args", "arg_codes", "nargs", "ctx"};
  for (unsigned i = 0; i < 4; i++) LLVMSetValueName2(LLVMGetParam(cf.fn, i), pn[i], strlen(pn[i]));
  cf.ctx = LLVMGetParam(cf.fn, 3);
  cf.entry = LLVMAppendBasicBlockInContext(cm->ctx, cf.fn, "entry");
  LLVMPositionBuilderAtEnd(cm->b, cf.entry);
  setup_alias_scopes(&cf);
  emit_entry(&cf);
  if (!cm->err) cg_stmt(&cf, f->body);
  if (!cm->err) LLVMBuildRet(cm->b, LLVMConstInt(cm->t_i32, 0, 0));
  if (cm->err) cm->err = mlc_status_annotate(cm->err, "prim func \"%s\"", f->name);
done:
  mlc_vec_free(&cf.ws);
  mlc_vec_free(&cf.sites);
  mlc_mem_free(cf.vars);
  mlc_mem_free(cf.bufs);
  mlc_mem_free(cf.scope);
  mlc_mem_free(cf.scoped_ids);
}
