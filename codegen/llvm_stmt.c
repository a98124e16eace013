/*
** llvm_stmt.c: TIR statements -> LLVM control flow.
**
** Loops are bottom-tested with an i64 phi induction variable behind a
** guard; vectorized and unrolled loops carry llvm.loop metadata.  The
** function is in the lowered form of lower/tir_lower.h: a block left in it
** is an error (blocks are lowered to plain loops and stores before).
** A parallel loop is outlined into an internal function
**
**   i32 sym_parN(i64 begin, i64 end, ptr closure)
**
** whose closure (a stack struct in the caller) holds ctx, the loop start
** and every variable value and buffer pointer the body uses; the caller
** runs it with ctx->api->parallel_for and fails when that returns nonzero.
** Allocations take stack memory when local, constant and small, else
** ctx->api->workspace_alloc, freed when the body ends and on error exits.
** An assert branches to an error exit that reports through
** ctx->api->check_failed.  Stores of vectors and ifs on vector conditions
** (masked regions, cf->mask) are described in llvm_expr.c.
*/
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "codegen/cg_int.h"
#include "lower/tir_visit.h"
#include "runtime/rt_abi.h"

#define STACK_ALLOC_LIMIT 32768

/* ---- runtime calls and error exits ----------------------------------------- */

LLVMValueRef cg_api_fn(cg_func *cf, size_t offset) {
  cg_module *cm = cf->cm;
  LLVMValueRef api = LLVMBuildLoad2(cm->b, cm->t_ptr, cf->ctx, "api");
  LLVMValueRef off = LLVMConstInt(cm->t_i64, offset, 0);
  LLVMValueRef slot = LLVMBuildInBoundsGEP2(cm->b, cm->t_i8, api, &off, 1, "");
  return LLVMBuildLoad2(cm->b, cm->t_ptr, slot, "");
}

static void ws_free(cg_func *cf, LLVMValueRef p) {
  cg_module *cm = cf->cm;
  LLVMValueRef fn = cg_api_fn(cf, offsetof(mlc_rt_api, workspace_free));
  LLVMTypeRef params[2] = {cm->t_ptr, cm->t_ptr};
  LLVMTypeRef fty = LLVMFunctionType(cm->t_void, params, 2, 0);
  LLVMValueRef args[2] = {cf->ctx, p};
  LLVMBuildCall2(cm->b, fty, fn, args, 2, "");
}

void cg_emit_fail(cg_func *cf, const char *msg) {
  cg_module *cm = cf->cm;
  if (msg) {
    LLVMValueRef fn = cg_api_fn(cf, offsetof(mlc_rt_api, set_error));
    LLVMTypeRef params[2] = {cm->t_ptr, cm->t_ptr};
    LLVMTypeRef fty = LLVMFunctionType(cm->t_i32, params, 2, 0);
    LLVMValueRef args[2] = {cf->ctx, LLVMBuildGlobalStringPtr(cm->b, msg, "mlc.msg")};
    LLVMBuildCall2(cm->b, fty, fn, args, 2, "");
  }
  for (size_t i = cf->ws.len; i-- > cf->ws_base;) ws_free(cf, cf->ws.data[i]);
  LLVMBuildRet(cm->b, LLVMConstInt(cm->t_i32, (unsigned long long)-1, 1));
}

void cg_check(cg_func *cf, LLVMValueRef ok, const char *msg) {
  cg_module *cm = cf->cm;
  LLVMBasicBlockRef okb = LLVMCreateBasicBlockInContext(cm->ctx, "ok");
  LLVMBasicBlockRef fail = LLVMCreateBasicBlockInContext(cm->ctx, "fail");
  LLVMBuildCondBr(cm->b, ok, okb, fail);
  LLVMAppendExistingBasicBlock(cf->fn, fail);
  LLVMPositionBuilderAtEnd(cm->b, fail);
  cg_emit_fail(cf, msg);
  LLVMAppendExistingBasicBlock(cf->fn, okb);
  LLVMPositionBuilderAtEnd(cm->b, okb);
}

#define entry_alloca cg_entry_alloca

LLVMValueRef cg_entry_alloca(cg_func *cf, LLVMTypeRef ty, const char *name) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef tb = LLVMCreateBuilderInContext(cm->ctx);
  LLVMValueRef first = LLVMGetFirstInstruction(cf->entry);
  if (first) LLVMPositionBuilderBefore(tb, first);
  else LLVMPositionBuilderAtEnd(tb, cf->entry);
  LLVMValueRef a = LLVMBuildAlloca(tb, ty, name);
  LLVMSetAlignment(a, 64);
  LLVMDisposeBuilder(tb);
  return a;
}

/* ---- loops --------------------------------------------------------------------- */

typedef struct cg_loop {
  LLVMValueRef iv, hi;
  LLVMBasicBlockRef pre, body, exit;
} cg_loop;

/* for iv in [lo, hi): ... (continues inside the body) */
static void loop_begin(cg_func *cf, cg_loop *l, LLVMValueRef lo, LLVMValueRef hi, const char *name) {
  cg_module *cm = cf->cm;
  l->hi = hi;
  l->pre = LLVMGetInsertBlock(cm->b);
  l->body = LLVMAppendBasicBlockInContext(cm->ctx, cf->fn, name);
  l->exit = LLVMCreateBasicBlockInContext(cm->ctx, "exit");
  LLVMBuildCondBr(cm->b, LLVMBuildICmp(cm->b, LLVMIntSLT, lo, hi, ""), l->body, l->exit);
  LLVMPositionBuilderAtEnd(cm->b, l->body);
  l->iv = LLVMBuildPhi(cm->b, cm->t_i64, name);
  LLVMAddIncoming(l->iv, &lo, &l->pre, 1);
}

static void loop_end(cg_func *cf, cg_loop *l, LLVMMetadataRef md) {
  cg_module *cm = cf->cm;
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(cm->b);
  LLVMValueRef next = LLVMBuildAdd(cm->b, l->iv, LLVMConstInt(cm->t_i64, 1, 0), "");
  LLVMSetNSW(next, 1);
  LLVMValueRef br = LLVMBuildCondBr(cm->b, LLVMBuildICmp(cm->b, LLVMIntSLT, next, l->hi, ""), l->body, l->exit);
  if (md) LLVMSetMetadata(br, cm->md_loop, LLVMMetadataAsValue(cm->ctx, md));
  LLVMAddIncoming(l->iv, &next, &latch, 1);
  LLVMAppendExistingBasicBlock(cf->fn, l->exit);
  LLVMPositionBuilderAtEnd(cm->b, l->exit);
}

static LLVMMetadataRef md_str(cg_module *cm, const char *s) { return LLVMMDStringInContext2(cm->ctx, s, strlen(s)); }

/* The self-referencing llvm.loop node for |kind| (NULL for plain loops);
** a serial loop with |unroll| > 1 (its "pragma_unroll_explicit"
** annotation) is unrolled |unroll| times. */
static LLVMMetadataRef loop_md(cg_module *cm, mlc_tir_for_kind kind, unsigned width, int64_t unroll) {
  LLVMMetadataRef ops[3], e[2];
  int n = 1;
  if (kind == MLC_TIR_FOR_VECTORIZED) {
    e[0] = md_str(cm, "llvm.loop.vectorize.enable");
    e[1] = LLVMValueAsMetadata(LLVMConstInt(cm->t_i1, 1, 0));
    ops[n++] = LLVMMDNodeInContext2(cm->ctx, e, 2);
    if (width >= 2) {
      e[0] = md_str(cm, "llvm.loop.vectorize.width");
      e[1] = LLVMValueAsMetadata(LLVMConstInt(cm->t_i32, width, 0));
      ops[n++] = LLVMMDNodeInContext2(cm->ctx, e, 2);
    }
  } else if (kind == MLC_TIR_FOR_UNROLLED) {
    e[0] = md_str(cm, "llvm.loop.unroll.full");
    ops[n++] = LLVMMDNodeInContext2(cm->ctx, e, 1);
  } else if (kind == MLC_TIR_FOR_SERIAL && unroll > 1) {
    e[0] = md_str(cm, "llvm.loop.unroll.count");
    e[1] = LLVMValueAsMetadata(LLVMConstInt(cm->t_i32, (unsigned long long)(unroll < 1024 ? unroll : 1024), 0));
    ops[n++] = LLVMMDNodeInContext2(cm->ctx, e, 2);
  } else {
    return NULL;
  }
  LLVMMetadataRef tmp = LLVMTemporaryMDNode(cm->ctx, NULL, 0);
  ops[0] = tmp;
  LLVMMetadataRef node = LLVMMDNodeInContext2(cm->ctx, ops, (size_t)n);
  LLVMMetadataReplaceAllUsesWith(tmp, node);
  return node;
}

static int store_bits_pre(void *ctx, const mlc_tir_stmt *s) {
  unsigned *m = ctx, x;
  if (s->kind == MLC_TIR_BLOCK) return MLC_TIR_VISIT_SKIP; /* refused by cg_block */
  if (s->kind != MLC_TIR_STORE) return MLC_TIR_VISIT_CONTINUE;
  mlc_dtype t = s->store.buffer->dtype;
  x = (t == MLC_DTYPE_F16 || t == MLC_DTYPE_BF16) ? 32 : (unsigned)mlc_dtype_size(t) * 8;
  if (x > *m) *m = x;
  return MLC_TIR_VISIT_SKIP;
}

/* The widest element (in bits, as computed) stored in |s|; 0 if none. */
static unsigned store_bits(const mlc_tir_stmt *s) {
  unsigned m = 0;
  mlc_tir_visitor v = {0};
  v.ctx = &m;
  v.pre_stmt = store_bits_pre;
  mlc_tir_visit_stmt(&v, s);
  return m;
}

/* ---- parallel outlining --------------------------------------------------------- */

typedef struct uses {
  char *vars, *bufs;
} uses;

/* Marks the variables and buffers (with the variables of their shapes) a
** statement uses. */
static int use_var_pre(void *ctx, const mlc_tir_expr *e) {
  uses *u = ctx;
  if (e->kind == MLC_TIR_VAR_REF) u->vars[e->var->id] = 1;
  return MLC_TIR_VISIT_CONTINUE;
}

static int use_buf(void *ctx, const mlc_tir_buffer *b) {
  uses *u = ctx;
  if (u->bufs[b->id]) return MLC_TIR_VISIT_CONTINUE;
  u->bufs[b->id] = 1;
  if (b->view_of) use_buf(u, b->view_of);
  mlc_tir_visitor v = {0};
  v.ctx = u;
  v.pre_expr = use_var_pre;
  v.buffer = use_buf;
  for (int i = 0; i < b->rank; i++) mlc_tir_visit_expr(&v, b->shape[i]);
  return MLC_TIR_VISIT_CONTINUE;
}

static int use_block_pre(void *ctx, const mlc_tir_stmt *s) {
  (void)ctx;
  return s->kind == MLC_TIR_BLOCK ? MLC_TIR_VISIT_SKIP : MLC_TIR_VISIT_CONTINUE; /* refused by cg_block */
}

static void use_stmt(uses *u, const mlc_tir_stmt *s) {
  mlc_tir_visitor v = {0};
  v.ctx = u;
  v.pre_expr = use_var_pre;
  v.pre_stmt = use_block_pre;
  v.buffer = use_buf;
  mlc_tir_visit_stmt(&v, s);
}

void cg_uses(const mlc_tir_stmt *s, char *vars, char *bufs) {
  uses u = {vars, bufs};
  use_stmt(&u, s);
}

/* |v|'s loop runs up to (not including) |end| around what is emitted next;
** pop by restoring cf->nends. */
static void push_end(cg_func *cf, const mlc_tir_var *v, LLVMValueRef end) {
  if (cf->nends == CG_MAX_ENDS) return; /* deeper: T.loop_end refused there */
  cf->end_var[cf->nends] = v;
  cf->end_val[cf->nends++] = end;
}

LLVMValueRef cg_loop_end(cg_func *cf, const mlc_tir_var *v) {
  for (int i = cf->nends; i-- > 0;)
    if (cf->end_var[i] == v) return cg_convert(cf, cf->end_val[i], MLC_DTYPE_I64, v->dtype);
  cg_fail(cf->cm, mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: kernel %s: T.loop_end(%s) outside %s's loop",
                                  cf->sym, v->name, v->name));
  return NULL;
}

static void cg_parallel(cg_func *cf, const mlc_tir_stmt *s, LLVMValueRef mn, LLVMValueRef ext) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  int nv = cf->nvars, nb = cf->nbufs;
  uses u = {mlc_mem_calloc((size_t)nv + 1, 1), mlc_mem_calloc((size_t)nb + 1, 1)};
  LLVMValueRef *vals = mlc_mem_calloc((size_t)(nv + nb) + 2, sizeof *vals);
  int *ids = mlc_mem_calloc((size_t)(nv + nb) + 2, sizeof *ids); /* var id, or -1 - buffer id */
  LLVMTypeRef *tys = mlc_mem_calloc((size_t)(nv + nb) + 2, sizeof *tys);
  LLVMValueRef *saved_vars = mlc_mem_alloc(sizeof *saved_vars * ((size_t)nv + 1));
  LLVMValueRef *saved_bufs = mlc_mem_alloc(sizeof *saved_bufs * ((size_t)nb + 1));
  if (!u.vars || !u.bufs || !vals || !ids || !tys || !saved_vars || !saved_bufs) {
    cg_fail(cm, mlc_oom());
    goto done;
  }
  use_stmt(&u, s->loop.body);
  /* closure layout: ctx, start, then captured values by id */
  int n = 0;
  vals[n] = cf->ctx;
  ids[n++] = 0;
  vals[n] = mn;
  ids[n++] = 0;
  for (int i = 0; i < nv; i++)
    if (u.vars[i] && cf->vars[i] && i != s->loop.var->id) {
      vals[n] = cf->vars[i];
      ids[n++] = i;
    }
  for (int i = 0; i < nb; i++)
    if (u.bufs[i] && cf->bufs[i]) {
      vals[n] = cf->bufs[i];
      ids[n++] = -1 - i;
    }
  for (int i = 0; i < n; i++) tys[i] = LLVMTypeOf(vals[i]);
  LLVMTypeRef sty = LLVMStructTypeInContext(cm->ctx, tys, (unsigned)n, 0);
  LLVMValueRef clo = entry_alloca(cf, sty, "closure");
  for (int i = 0; i < n; i++) LLVMBuildStore(b, vals[i], LLVMBuildStructGEP2(b, sty, clo, (unsigned)i, ""));

  /* the outlined body */
  char name[512];
  snprintf(name, sizeof name, "%s_par%d", cf->sym, cf->npar++);
  LLVMTypeRef params[3] = {cm->t_i64, cm->t_i64, cm->t_ptr};
  LLVMTypeRef bty = LLVMFunctionType(cm->t_i32, params, 3, 0);
  LLVMValueRef fn = LLVMAddFunction(cm->mod, name, bty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_func_attrs(cm, fn);
  LLVMSetValueName2(LLVMGetParam(fn, 0), "begin", 5);
  LLVMSetValueName2(LLVMGetParam(fn, 1), "end", 3);
  LLVMSetValueName2(LLVMGetParam(fn, 2), "closure", 7);

  LLVMBasicBlockRef back = LLVMGetInsertBlock(b);
  LLVMValueRef save_fn = cf->fn, save_ctx = cf->ctx;
  LLVMBasicBlockRef save_entry = cf->entry;
  size_t save_base = cf->ws_base;
  int save_outlined = cf->outlined;
  memcpy(saved_vars, cf->vars, sizeof *saved_vars * (size_t)nv);
  memcpy(saved_bufs, cf->bufs, sizeof *saved_bufs * (size_t)nb);
  memset(cf->vars, 0, sizeof *cf->vars * (size_t)nv);
  memset(cf->bufs, 0, sizeof *cf->bufs * (size_t)nb);
  cf->fn = fn;
  cf->entry = LLVMAppendBasicBlockInContext(cm->ctx, fn, "entry");
  cf->ws_base = cf->ws.len;
  cf->outlined = 1;
  LLVMPositionBuilderAtEnd(b, cf->entry);
  LLVMValueRef cp = LLVMGetParam(fn, 2);
  LLVMValueRef start = NULL;
  for (int i = 0; i < n; i++) {
    LLVMValueRef v = LLVMBuildLoad2(b, tys[i], LLVMBuildStructGEP2(b, sty, cp, (unsigned)i, ""), "");
    if (i == 0) cf->ctx = v;
    else if (i == 1) start = v;
    else if (ids[i] >= 0) cf->vars[ids[i]] = v;
    else cf->bufs[-1 - ids[i]] = v;
  }
  cg_loop l;
  int save_nends = cf->nends;
  cf->nends = 0; /* the caller's loops are not around code in this function */
  loop_begin(cf, &l, LLVMGetParam(fn, 0), LLVMGetParam(fn, 1), s->loop.var->name);
  cf->vars[s->loop.var->id] =
      cg_convert(cf, LLVMBuildAdd(b, start, l.iv, s->loop.var->name), MLC_DTYPE_I64, s->loop.var->dtype);
  push_end(cf, s->loop.var, LLVMBuildAdd(b, start, LLVMGetParam(fn, 1), ""));
  cg_stmt(cf, s->loop.body);
  cf->nends = save_nends;
  loop_end(cf, &l, NULL);
  LLVMBuildRet(b, LLVMConstInt(cm->t_i32, 0, 0));

  /* back in the caller */
  cf->fn = save_fn;
  cf->ctx = save_ctx;
  cf->entry = save_entry;
  cf->ws_base = save_base;
  cf->outlined = save_outlined;
  memcpy(cf->vars, saved_vars, sizeof *saved_vars * (size_t)nv);
  memcpy(cf->bufs, saved_bufs, sizeof *saved_bufs * (size_t)nb);
  LLVMPositionBuilderAtEnd(b, back);
  {
    LLVMBasicBlockRef run = LLVMAppendBasicBlockInContext(cm->ctx, cf->fn, "par.run");
    LLVMBasicBlockRef after = LLVMCreateBasicBlockInContext(cm->ctx, "par.done");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGT, ext, LLVMConstInt(cm->t_i64, 0, 0), ""), run, after);
    LLVMPositionBuilderAtEnd(b, run);
    LLVMValueRef pf = cg_api_fn(cf, offsetof(mlc_rt_api, parallel_for));
    LLVMTypeRef pp[4] = {cm->t_ptr, cm->t_i64, cm->t_ptr, cm->t_ptr};
    LLVMTypeRef pty = LLVMFunctionType(cm->t_i32, pp, 4, 0);
    LLVMValueRef args[4] = {cf->ctx, ext, fn, clo};
    const mlc_tir_attr *ga = mlc_tir_stmt_annot(s, "parallel_grain");
    LLVMValueRef rc;
    if (ga && ga->kind == MLC_TIR_ATTR_INT && ga->i > 1) {
      /* api->parallel_for_grain where the table has it, else parallel_for */
      LLVMValueRef gf = cg_api_fn(cf, offsetof(mlc_rt_api, parallel_for_grain));
      LLVMBasicBlockRef bg = LLVMAppendBasicBlockInContext(cm->ctx, cf->fn, "par.grain");
      LLVMBasicBlockRef bp = LLVMAppendBasicBlockInContext(cm->ctx, cf->fn, "par.plain");
      LLVMBasicBlockRef bj = LLVMAppendBasicBlockInContext(cm->ctx, cf->fn, "par.called");
      LLVMBuildCondBr(b, LLVMBuildIsNotNull(b, gf, ""), bg, bp);
      LLVMPositionBuilderAtEnd(b, bg);
      LLVMTypeRef gp[5] = {cm->t_ptr, cm->t_i64, cm->t_i64, cm->t_ptr, cm->t_ptr};
      LLVMValueRef gargs[5] = {cf->ctx, ext, LLVMConstInt(cm->t_i64, (unsigned long long)ga->i, 0), fn, clo};
      LLVMValueRef rg = LLVMBuildCall2(b, LLVMFunctionType(cm->t_i32, gp, 5, 0), gf, gargs, 5, "rc");
      LLVMBuildBr(b, bj);
      LLVMPositionBuilderAtEnd(b, bp);
      LLVMValueRef rp = LLVMBuildCall2(b, pty, pf, args, 4, "rc");
      LLVMBuildBr(b, bj);
      LLVMPositionBuilderAtEnd(b, bj);
      rc = LLVMBuildPhi(b, cm->t_i32, "rc");
      LLVMValueRef iv[2] = {rg, rp};
      LLVMBasicBlockRef ib[2] = {bg, bp};
      LLVMAddIncoming(rc, iv, ib, 2);
    } else {
      rc = LLVMBuildCall2(b, pty, pf, args, 4, "rc");
    }
    cg_check(cf, LLVMBuildICmp(b, LLVMIntEQ, rc, LLVMConstInt(cm->t_i32, 0, 0), ""), NULL);
    LLVMBuildBr(b, after);
    LLVMAppendExistingBasicBlock(cf->fn, after);
    LLVMPositionBuilderAtEnd(b, after);
  }
done:
  mlc_mem_free(u.vars);
  mlc_mem_free(u.bufs);
  mlc_mem_free(vals);
  mlc_mem_free(ids);
  mlc_mem_free(tys);
  mlc_mem_free(saved_vars);
  mlc_mem_free(saved_bufs);
}

/* ---- statements ---------------------------------------------------------------- */

static void cg_for(cg_func *cf, const mlc_tir_stmt *s) {
  cg_module *cm = cf->cm;
  LLVMValueRef mn = cg_expr_i64(cf, s->loop.min);
  LLVMValueRef ext = mn ? cg_expr_i64(cf, s->loop.extent) : NULL;
  if (!ext) return;
  if (s->loop.kind == MLC_TIR_FOR_THREAD_BINDING && cf->device) {
    /* the launch has exactly |ext| threads on this axis */
    const mlc_tir_var *v = s->loop.var;
    LLVMValueRef saved = cf->vars[v->id];
    LLVMValueRef t = cg_thread_index(cf, s->loop.thread);
    if (!t) return;
    LLVMValueRef iv = LLVMBuildAdd(cm->b, mn, t, v->name);
    cf->vars[v->id] = cg_convert(cf, iv, MLC_DTYPE_I64, v->dtype);
    int save_nends = cf->nends;
    /* each thread runs one iteration */
    push_end(cf, v, LLVMBuildAdd(cm->b, iv, LLVMConstInt(cm->t_i64, 1, 0), ""));
    cg_stmt(cf, s->loop.body);
    cf->nends = save_nends;
    cf->vars[v->id] = saved;
    return;
  }
  if (s->loop.kind == MLC_TIR_FOR_PARALLEL && !cf->outlined && !cf->device) {
    cg_parallel(cf, s, mn, ext);
    return;
  }
  LLVMValueRef hi = LLVMBuildAdd(cm->b, mn, ext, "");
  const mlc_tir_var *v = s->loop.var;
  LLVMValueRef saved = cf->vars[v->id];
  cg_loop l;
  loop_begin(cf, &l, mn, hi, v->name);
  cf->vars[v->id] = cg_convert(cf, l.iv, MLC_DTYPE_I64, v->dtype);
  int save_nends = cf->nends;
  push_end(cf, v, hi);
  cg_stmt(cf, s->loop.body);
  cf->nends = save_nends;
  unsigned width = 0;
  if (s->loop.kind == MLC_TIR_FOR_VECTORIZED) {
    unsigned bits = store_bits(s->loop.body);
    width = cm->target->vector_bits / (bits ? bits : 32);
  }
  const mlc_tir_attr *ua = mlc_tir_stmt_annot(s, "pragma_unroll_explicit");
  loop_end(cf, &l, loop_md(cm, s->loop.kind, width, ua && ua->kind == MLC_TIR_ATTR_INT ? ua->i : 0));
  cf->vars[v->id] = saved;
}

static void cg_if(cg_func *cf, LLVMValueRef c, const mlc_tir_stmt *then_s, const mlc_tir_stmt *else_s) {
  cg_module *cm = cf->cm;
  LLVMBasicBlockRef bt = LLVMAppendBasicBlockInContext(cm->ctx, cf->fn, "then");
  LLVMBasicBlockRef be = else_s ? LLVMCreateBasicBlockInContext(cm->ctx, "else") : NULL;
  LLVMBasicBlockRef bj = LLVMCreateBasicBlockInContext(cm->ctx, "endif");
  LLVMBuildCondBr(cm->b, c, bt, be ? be : bj);
  LLVMPositionBuilderAtEnd(cm->b, bt);
  cg_stmt(cf, then_s);
  LLVMBuildBr(cm->b, bj);
  if (be) {
    LLVMAppendExistingBasicBlock(cf->fn, be);
    LLVMPositionBuilderAtEnd(cm->b, be);
    cg_stmt(cf, else_s);
    LLVMBuildBr(cm->b, bj);
  }
  LLVMAppendExistingBasicBlock(cf->fn, bj);
  LLVMPositionBuilderAtEnd(cm->b, bj);
}

/*
** An if on a vector condition: the then branch runs with the mask narrowed
** to the lanes where |c| holds, the else branch to the others; each is
** skipped when its mask has no lane set.
*/
static void masked_branch(cg_func *cf, LLVMValueRef mask, const mlc_tir_stmt *s) {
  cg_module *cm = cf->cm;
  LLVMValueRef any = cg_any_lane(cf, mask);
  if (!any) return;
  LLVMBasicBlockRef run = LLVMAppendBasicBlockInContext(cm->ctx, cf->fn, "lanes");
  LLVMBasicBlockRef done = LLVMCreateBasicBlockInContext(cm->ctx, "lanes.done");
  LLVMBuildCondBr(cm->b, any, run, done);
  LLVMPositionBuilderAtEnd(cm->b, run);
  LLVMValueRef saved = cf->mask;
  cf->mask = mask;
  cg_stmt(cf, s);
  cf->mask = saved;
  LLVMBuildBr(cm->b, done);
  LLVMAppendExistingBasicBlock(cf->fn, done);
  LLVMPositionBuilderAtEnd(cm->b, done);
}

static void cg_masked_if(cg_func *cf, LLVMValueRef c, const mlc_tir_stmt *then_s, const mlc_tir_stmt *else_s) {
  LLVMBuilderRef b = cf->cm->b;
  LLVMValueRef on = cf->mask ? LLVMBuildAnd(b, cf->mask, c, "") : c;
  masked_branch(cf, on, then_s);
  if (else_s) {
    LLVMValueRef off = LLVMBuildNot(b, c, "");
    masked_branch(cf, cf->mask ? LLVMBuildAnd(b, cf->mask, off, "") : off, else_s);
  }
}

/* Blocks are lowered before code generation (mlc_tir_lower_func). */
static void cg_block(cg_func *cf, const mlc_tir_stmt *s) {
  cg_fail(cf->cm, mlc_make_status(MLC_INVALID_ARGUMENT,
                                  "codegen: kernel %s: block \"%s\" is not lowered (lower the function with "
                                  "mlc_tir_lower_func before code generation)",
                                  cf->sym, s->block.name));
}

static void cg_allocate(cg_func *cf, const mlc_tir_stmt *s) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  const mlc_tir_buffer *buf = s->alloc.buffer;
  LLVMTypeRef mt = cg_mem_type(cm, buf->dtype);
  int constant = 1;
  int64_t count = 1;
  LLVMValueRef n = LLVMConstInt(cm->t_i64, 1, 0);
  for (int i = 0; i < buf->rank; i++) {
    const mlc_tir_expr *e = buf->shape[i];
    if (e->kind == MLC_TIR_INT_IMM && e->int_value >= 0 && count <= INT64_MAX / (e->int_value ? e->int_value : 1))
      count *= e->int_value;
    else
      constant = 0;
    LLVMValueRef d = cg_expr_i64(cf, e);
    if (!d) return;
    n = LLVMBuildMul(b, n, d, "");
  }
  size_t esize = mlc_dtype_size(buf->dtype);
  LLVMValueRef p;
  int from_ws = 0;
  if (cf->device && !(constant && count <= STACK_ALLOC_LIMIT / (int64_t)esize)) {
    cg_fail(cm, mlc_make_status(MLC_UNIMPLEMENTED,
                                "codegen: kernel %s: buffer %s is allocated inside a GPU kernel with a size that is "
                                "not a small constant",
                                cf->sym, buf->name));
    return;
  }
  /* a CUDA model's host code allocates device memory (the workspace) */
  int host_of_gpu = !cf->device && cm->target->device == MLC_TARGET_CUDA;
  if (cf->device && buf->scope == MLC_TIR_SCOPE_SHARED) {
    p = cg_shared_alloc(cf, buf, mt, count);
  } else if ((cf->device || (buf->scope != MLC_TIR_SCOPE_GLOBAL && !host_of_gpu)) && constant &&
             count <= STACK_ALLOC_LIMIT / (int64_t)esize) {
    p = entry_alloca(cf, LLVMArrayType2(mt, (uint64_t)(count ? count : 1)), buf->name);
  } else {
    LLVMValueRef bytes = LLVMBuildMul(b, n, LLVMConstInt(cm->t_i64, esize, 0), "");
    LLVMValueRef pos = LLVMBuildICmp(b, LLVMIntSGT, bytes, LLVMConstInt(cm->t_i64, 0, 0), "");
    bytes = LLVMBuildSelect(b, pos, bytes, LLVMConstInt(cm->t_i64, 1, 0), "");
    LLVMValueRef fn = cg_api_fn(cf, offsetof(mlc_rt_api, workspace_alloc));
    LLVMTypeRef params[2] = {cm->t_ptr, cm->t_i64};
    LLVMTypeRef fty = LLVMFunctionType(cm->t_ptr, params, 2, 0);
    LLVMValueRef args[2] = {cf->ctx, bytes};
    p = LLVMBuildCall2(b, fty, fn, args, 2, buf->name);
    char msg[512];
    snprintf(msg, sizeof msg, "kernel %s: cannot allocate workspace for buffer %s", cf->sym, buf->name);
    cg_check(cf, LLVMBuildIsNotNull(b, p, ""), msg);
    if (mlc_vec_push(&cf->ws, p)) {
      cg_fail(cm, mlc_oom());
      return;
    }
    from_ws = 1;
  }
  LLVMValueRef saved = cf->bufs[buf->id];
  cf->bufs[buf->id] = p;
  cg_stmt(cf, s->alloc.body);
  cf->bufs[buf->id] = saved;
  if (from_ws) {
    cf->ws.len--;
    ws_free(cf, p);
  }
}

/*
** assert: one conditional branch on the fast path (weighted as never
** taken); the failure block evaluates the reported values, calls
** ctx->api->check_failed with the constant op and message, and leaves
** through the function's error exit (inside an outlined parallel body too:
** it returns nonzero, and parallel_for hands that to the kernel).
*/
static void cg_assert(cg_func *cf, const mlc_tir_stmt *s) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  LLVMValueRef ok = cg_expr(cf, s->assert_.cond);
  if (!ok) return;
  if (cf->device) {
    cg_device_assert(cf, s, ok);
    return;
  }
  LLVMBasicBlockRef okb = LLVMCreateBasicBlockInContext(cm->ctx, "check.ok");
  LLVMBasicBlockRef fail = LLVMCreateBasicBlockInContext(cm->ctx, "check.fail");
  LLVMValueRef br = LLVMBuildCondBr(b, ok, okb, fail);
  LLVMMetadataRef w[3] = {md_str(cm, "branch_weights"),
                          LLVMValueAsMetadata(LLVMConstInt(cm->t_i32, 1 << 20, 0)),
                          LLVMValueAsMetadata(LLVMConstInt(cm->t_i32, 1, 0))};
  unsigned prof = LLVMGetMDKindIDInContext(cm->ctx, "prof", 4);
  LLVMSetMetadata(br, prof, LLVMMetadataAsValue(cm->ctx, LLVMMDNodeInContext2(cm->ctx, w, 3)));
  LLVMAppendExistingBasicBlock(cf->fn, fail);
  LLVMPositionBuilderAtEnd(b, fail);
  LLVMValueRef args[6] = {cf->ctx, LLVMBuildGlobalStringPtr(b, s->assert_.op, "mlc.op"),
                          LLVMBuildGlobalStringPtr(b, s->assert_.msg, "mlc.check"), NULL, NULL, NULL};
  for (int i = 0; i < MLC_TIR_ASSERT_MAX_VALS; i++) {
    args[3 + i] = i < s->assert_.nvals ? cg_expr_i64(cf, s->assert_.vals[i]) : LLVMConstInt(cm->t_i64, 0, 0);
    if (!args[3 + i]) return;
  }
  LLVMValueRef fn = cg_api_fn(cf, offsetof(mlc_rt_api, check_failed));
  LLVMTypeRef params[6] = {cm->t_ptr, cm->t_ptr, cm->t_ptr, cm->t_i64, cm->t_i64, cm->t_i64};
  LLVMTypeRef fty = LLVMFunctionType(cm->t_i32, params, 6, 0);
  LLVMBuildCall2(b, fty, fn, args, 6, "");
  cg_emit_fail(cf, NULL);
  LLVMAppendExistingBasicBlock(cf->fn, okb);
  LLVMPositionBuilderAtEnd(b, okb);
}

void cg_stmt(cg_func *cf, const mlc_tir_stmt *s) {
  cg_module *cm = cf->cm;
  if (cm->err) return;
  if (!cf->device && cm->target->device == MLC_TARGET_CUDA && cg_needs_device(cf, s)) {
    cg_launch(cf, s);
    return;
  }
  switch (s->kind) {
    case MLC_TIR_FOR: cg_for(cf, s); break;
    case MLC_TIR_SEQ:
      for (int i = 0; i < s->seq.n && !cm->err; i++) cg_stmt(cf, s->seq.stmts[i]);
      break;
    case MLC_TIR_STORE: {
      LLVMValueRef v = cg_expr(cf, s->store.value);
      if (v && s->store.value->lanes > 1) {
        cg_store_vec(cf, s->store.buffer, s->store.n, s->store.indices, v);
        break;
      }
      LLVMValueRef addr = v ? cg_address(cf, s->store.buffer, s->store.n, s->store.indices) : NULL;
      if (addr) cg_store_elem(cf, s->store.buffer, addr, v);
      break;
    }
    case MLC_TIR_IF: {
      LLVMValueRef c = cg_expr(cf, s->if_.cond);
      if (c && s->if_.cond->lanes > 1) cg_masked_if(cf, c, s->if_.then_s, s->if_.else_s);
      else if (c) cg_if(cf, c, s->if_.then_s, s->if_.else_s);
      break;
    }
    case MLC_TIR_ALLOCATE: cg_allocate(cf, s); break;
    case MLC_TIR_EVALUATE: (void)cg_expr(cf, s->eval.value); break;
    case MLC_TIR_BLOCK: cg_block(cf, s); break;
    case MLC_TIR_ASSERT: cg_assert(cf, s); break;
  }
}
