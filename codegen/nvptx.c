/*
** nvptx.c: the CUDA backend.  A CUDA target compiles each prim func into a
** host function with the kernel ABI of runtime/rt_abi.h (argument checks,
** scalar parameters bound from shapes, workspace allocation: all as for
** the CPU, in llvm_func.c and llvm_stmt.c) whose statements that touch
** memory run on the GPU: this file splits them off (the host/device split).
**
** At host level, each statement that must run on the device (a loop, a
** store, an evaluate, an if or assert that reads memory: cg_needs_device)
** becomes a device kernel in a second LLVM module, for the NVPTX target:
**
**   for bx in T.thread_binding(G, "blockIdx.x"):      kernel <sym>_k<N>(A, B, n, err)
**     for tx in T.thread_binding(256, "threadIdx.x"):   bx = ctaid.x, tx = tid.x
**       B[bx * 256 + tx] = ...                          B[bx * 256 + tx] = ...
**
** and in the host function a launch: grid and block from the extents of
** the loops the statement binds (evaluated on the host; 1 on axes it does
** not bind; a statement with no bound loop runs on one thread), the
** kernel's parameters the buffers (device pointers) and scalars it uses,
** through ctx->api->cuda_launch.  A bound loop in a kernel is no loop: its
** variable is the thread's index on its axis.
**
** Checks of model data (asserts) in a kernel record the first failure in
** the session's error word (atomic compare-and-swap: site number, then
** its three values) and return; after launching a kernel that has asserts
** the host waits for it (ctx->api->cuda_check) and reports the failed
** site's message through check_failed, so the run fails with the same
** message as on the CPU.
**
** The device module then gets CUDA's libdevice linked in for the math
** functions (expf, tanhf, erff, ... are __nv_* there; LLVM's math
** intrinsics the NVPTX backend cannot select are replaced by them), every
** function but the kernels internalized, LLVM's O3 pipeline, and PTX
** emitted as text (LLVMAssemblyFile).  The PTX goes into model.so; the
** runtime loads it with the CUDA driver, which compiles it for the GPU.
*/
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>

#include "base/alloc.h"
#include "codegen/cg_int.h"
#include "config.h"
#include "lower/tir_visit.h"
#include "runtime/rt_abi.h"

#ifndef MLC_CUDA_HOME
#define MLC_CUDA_HOME "/usr/local/cuda"
#endif

/* LLVM's calling convention number of PTX kernels (CallingConv::PTX_Kernel). */
#define PTX_KERNEL_CC 71
/* The PTX ISA version the kernels are written in (PTX 7.8: sm_50 .. sm_90). */
#define PTX_FEATURES "+ptx78"

/* ---- which statements run on the GPU --------------------------------------- */

static int load_pre(void *ctx, const mlc_tir_expr *e) {
  if (e->kind == MLC_TIR_LOAD) *(int *)ctx = 1;
  return MLC_TIR_VISIT_CONTINUE;
}

static int reads_memory(const mlc_tir_expr *e) {
  int found = 0;
  mlc_tir_visitor v = {0};
  v.ctx = &found;
  v.pre_expr = load_pre;
  if (e) mlc_tir_visit_expr(&v, e);
  return found;
}

int cg_needs_device(const cg_func *cf, const mlc_tir_stmt *s) {
  (void)cf;
  switch (s->kind) {
    case MLC_TIR_FOR:
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE: return 1;
    case MLC_TIR_IF: return reads_memory(s->if_.cond);
    case MLC_TIR_ASSERT: {
      int r = reads_memory(s->assert_.cond);
      for (int i = 0; i < s->assert_.nvals; i++) r |= reads_memory(s->assert_.vals[i]);
      return r;
    }
    default: return 0;
  }
}

/* ---- the device module --------------------------------------------------------- */

static cg_module *dev_module(cg_module *host) {
  if (host->dev) return host->dev;
  const mlc_target *t = host->target;
  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &target, &msg)) {
    cg_fail(host, mlc_make_status(MLC_UNIMPLEMENTED, "codegen: this LLVM has no NVPTX backend: %s",
                                  msg ? msg : "(no message)"));
    LLVMDisposeMessage(msg);
    return NULL;
  }
  cg_module *d = mlc_mem_calloc(1, sizeof *d);
  if (!d) {
    cg_fail(host, mlc_oom());
    return NULL;
  }
  d->devt = *t;
  d->devt.triple = "nvptx64-nvidia-cuda";
  d->devt.cpu = t->device_arch ? t->device_arch : "sm_75";
  d->devt.features = PTX_FEATURES;
  d->devt.vector_bits = 128;
  d->devt.device = MLC_TARGET_CUDA;
  d->device = 1;
  d->ir = host->ir;
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, d->devt.triple, d->devt.cpu, d->devt.features,
                                                    LLVMCodeGenLevelAggressive, LLVMRelocDefault,
                                                    LLVMCodeModelDefault);
  if (!tm) {
    mlc_mem_free(d);
    cg_fail(host, mlc_make_status(MLC_INTERNAL, "codegen: cannot create an LLVM target machine for NVPTX %s",
                                  t->device_arch ? t->device_arch : ""));
    return NULL;
  }
  cg_module_init(d, tm, &d->devt, "mlc_cuda");
  host->dev = d;
  return d;
}

/* Thread axes: blockIdx.x/y/z are grid dims 0..2, threadIdx.x/y/z block dims 3..5. */
static int axis_of(const char *tag) {
  static const char *const tags[6] = {"blockIdx.x", "blockIdx.y", "blockIdx.z",
                                      "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  for (int i = 0; tag && i < 6; i++)
    if (strcmp(tag, tags[i]) == 0) return i;
  return -1;
}

LLVMValueRef cg_thread_index(cg_func *cf, const char *tag) {
  static const char *const sregs[6] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
                                       "llvm.nvvm.read.ptx.sreg.ctaid.z", "llvm.nvvm.read.ptx.sreg.tid.x",
                                       "llvm.nvvm.read.ptx.sreg.tid.y",   "llvm.nvvm.read.ptx.sreg.tid.z"};
  cg_module *cm = cf->cm;
  int a = axis_of(tag);
  unsigned id = a >= 0 ? LLVMLookupIntrinsicID(sregs[a], strlen(sregs[a])) : 0;
  if (!id) {
    cg_fail(cm, mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: kernel %s: unknown thread axis \"%s\"", cf->sym,
                                tag ? tag : ""));
    return NULL;
  }
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cm->mod, id, NULL, 0);
  LLVMTypeRef fty = LLVMIntrinsicGetType(cm->ctx, id, NULL, 0);
  LLVMValueRef v = LLVMBuildCall2(cm->b, fty, fn, NULL, 0, "");
  return LLVMBuildZExt(cm->b, v, cm->t_i64, tag);
}

LLVMValueRef cg_sync_threads(cg_func *cf) {
  cg_module *cm = cf->cm;
  static const char name[] = "llvm.nvvm.barrier0";
  /* on the CPU, a thread block's threads run one after another: each
  ** runs its cooperative copies whole (a loop bound to threadIdx is a loop
  ** there), so nothing is left to wait for */
  if (!cf->device) return LLVMConstInt(cm->t_i32, 0, 0);
  unsigned id = LLVMLookupIntrinsicID(name, sizeof name - 1);
  if (!id) {
    cg_fail(cm, mlc_make_status(MLC_INTERNAL, "codegen: kernel %s: LLVM lacks %s", cf->sym, name));
    return NULL;
  }
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cm->mod, id, NULL, 0);
  LLVMBuildCall2(cm->b, LLVMIntrinsicGetType(cm->ctx, id, NULL, 0), fn, NULL, 0, "");
  return LLVMConstInt(cm->t_i32, 0, 0);
}

LLVMValueRef cg_warp_reduce(cg_func *cf, mlc_tir_intrin op, mlc_dtype dt, LLVMValueRef x) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  static const char name[] = "llvm.nvvm.shfl.sync.bfly.f32";
  unsigned id = LLVMLookupIntrinsicID(name, sizeof name - 1);
  if (!cf->device || dt != MLC_DTYPE_F32 || LLVMGetTypeKind(LLVMTypeOf(x)) != LLVMFloatTypeKind || !id) {
    cg_fail(cm, mlc_make_status(MLC_UNIMPLEMENTED, "codegen: kernel %s: T.%s of %s %s", cf->sym,
                                mlc_tir_intrin_name(op), mlc_dtype_name(dt),
                                cf->device ? "(float32 only)" : "outside a GPU kernel"));
    return NULL;
  }
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cm->mod, id, NULL, 0);
  LLVMTypeRef fty = LLVMIntrinsicGetType(cm->ctx, id, NULL, 0);
  for (unsigned lane = 16; lane >= 1; lane /= 2) {
    /* all 32 lanes; the lane |lane| apart (xor); clamp 31 */
    LLVMValueRef args[4] = {LLVMConstInt(cm->t_i32, 0xffffffffu, 0), x, LLVMConstInt(cm->t_i32, lane, 0),
                            LLVMConstInt(cm->t_i32, 31, 0)};
    LLVMValueRef y = LLVMBuildCall2(b, fty, fn, args, 4, "");
    if (op == MLC_TIR_INTRIN_WARP_SUM) {
      x = LLVMBuildFAdd(b, x, y, "");
    } else { /* as T.max / T.min: the first operand where the comparison fails (NaN) */
      int mn = op == MLC_TIR_INTRIN_WARP_MIN;
      x = LLVMBuildSelect(b, LLVMBuildFCmp(b, mn ? LLVMRealOLT : LLVMRealOGT, x, y, ""), x, y, "");
    }
  }
  return x;
}

/* NVPTX's address space of a thread block's shared memory. */
#define NVPTX_SHARED_AS 3

LLVMValueRef cg_shared_alloc(cg_func *cf, const mlc_tir_buffer *buf, LLVMTypeRef t, int64_t count) {
  cg_module *cm = cf->cm;
  /* named after the kernel only: a buffer's name may come from the model,
  ** and a global's name is written into the PTX (LLVM numbers repeats) */
  char name[160];
  snprintf(name, sizeof name, "%s.shared", cf->sym);
  LLVMTypeRef at = LLVMArrayType2(t, (uint64_t)(count > 0 ? count : 1));
  LLVMValueRef g = LLVMAddGlobalInAddressSpace(cm->mod, at, name, NVPTX_SHARED_AS);
  LLVMSetLinkage(g, LLVMInternalLinkage);
  LLVMSetInitializer(g, LLVMGetUndef(at));
  LLVMSetAlignment(g, 16);
  return LLVMBuildAddrSpaceCast(cm->b, g, cm->t_ptr, "shared");
}

/* The bound loops of a statement: the first loop on each axis. */
typedef struct bound {
  const mlc_tir_stmt *loop[6];
  const mlc_tir_stmt *bad; /* a loop on an unknown axis, or a second one whose extent differs */
} bound;

static int bound_pre(void *ctx, const mlc_tir_stmt *s) {
  bound *b = ctx;
  if (s->kind != MLC_TIR_FOR || s->loop.kind != MLC_TIR_FOR_THREAD_BINDING) return MLC_TIR_VISIT_CONTINUE;
  int a = axis_of(s->loop.thread);
  if (a < 0) {
    if (!b->bad) b->bad = s;
  } else if (!b->loop[a]) {
    b->loop[a] = s;
  } else if (!mlc_tir_expr_equal(b->loop[a]->loop.extent, s->loop.extent) && !b->bad) {
    b->bad = s;
  }
  return MLC_TIR_VISIT_CONTINUE;
}

/* The device module's type for a host value's type |t|. */
static LLVMTypeRef dev_type(cg_module *dm, LLVMTypeRef t) {
  switch (LLVMGetTypeKind(t)) {
    case LLVMIntegerTypeKind: return LLVMIntTypeInContext(dm->ctx, LLVMGetIntTypeWidth(t));
    case LLVMFloatTypeKind: return dm->t_f32;
    case LLVMDoubleTypeKind: return dm->t_f64;
    case LLVMHalfTypeKind: return dm->t_half;
    default: return dm->t_ptr;
  }
}

void cg_device_assert(cg_func *cf, const mlc_tir_stmt *s, LLVMValueRef ok) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  if (mlc_vec_push(&cf->sites, s)) {
    cg_fail(cm, mlc_oom());
    return;
  }
  int64_t site = (int64_t)(cf->sites.len - cf->site_base);
  LLVMBasicBlockRef okb = LLVMCreateBasicBlockInContext(cm->ctx, "check.ok");
  LLVMBasicBlockRef fail = LLVMCreateBasicBlockInContext(cm->ctx, "check.fail");
  LLVMBasicBlockRef rec = LLVMCreateBasicBlockInContext(cm->ctx, "check.record");
  LLVMBasicBlockRef out = LLVMCreateBasicBlockInContext(cm->ctx, "check.return");
  LLVMBuildCondBr(b, ok, okb, fail);
  LLVMAppendExistingBasicBlock(cf->fn, fail);
  LLVMPositionBuilderAtEnd(b, fail);
  LLVMValueRef vals[MLC_TIR_ASSERT_MAX_VALS];
  for (int i = 0; i < MLC_TIR_ASSERT_MAX_VALS; i++) {
    vals[i] = i < s->assert_.nvals ? cg_expr_i64(cf, s->assert_.vals[i]) : LLVMConstInt(cm->t_i64, 0, 0);
    if (!vals[i]) return;
  }
  /* the first failure wins: its site, then its values */
  LLVMValueRef x = LLVMBuildAtomicCmpXchg(b, cf->err_word, LLVMConstInt(cm->t_i64, 0, 0),
                                         LLVMConstInt(cm->t_i64, (unsigned long long)site, 0),
                                         LLVMAtomicOrderingSequentiallyConsistent,
                                         LLVMAtomicOrderingSequentiallyConsistent, 0);
  LLVMBuildCondBr(b, LLVMBuildExtractValue(b, x, 1, ""), rec, out);
  LLVMAppendExistingBasicBlock(cf->fn, rec);
  LLVMPositionBuilderAtEnd(b, rec);
  for (int i = 0; i < MLC_TIR_ASSERT_MAX_VALS; i++) {
    LLVMValueRef idx = LLVMConstInt(cm->t_i64, (unsigned)(i + 1), 0);
    LLVMBuildStore(b, vals[i], LLVMBuildInBoundsGEP2(b, cm->t_i64, cf->err_word, &idx, 1, ""));
  }
  LLVMBuildBr(b, out);
  LLVMAppendExistingBasicBlock(cf->fn, out);
  LLVMPositionBuilderAtEnd(b, out);
  LLVMBuildRetVoid(b);
  LLVMAppendExistingBasicBlock(cf->fn, okb);
  LLVMPositionBuilderAtEnd(b, okb);
}

/* After a launch of a kernel with |nsites| asserts: wait, read the error
** word, and fail with the failed site's message. */
static void check_sites(cg_func *cf, size_t base, size_t nsites) {
  cg_module *cm = cf->cm;
  LLVMBuilderRef b = cm->b;
  LLVMValueRef vals = cg_entry_alloca(cf, LLVMArrayType2(cm->t_i64, 3), "check.vals");
  LLVMValueRef fn = cg_api_fn(cf, offsetof(mlc_rt_api, cuda_check));
  LLVMTypeRef cp[2] = {cm->t_ptr, cm->t_ptr};
  LLVMValueRef ca[2] = {cf->ctx, vals};
  LLVMValueRef site = LLVMBuildCall2(b, LLVMFunctionType(cm->t_i64, cp, 2, 0), fn, ca, 2, "site");
  cg_check(cf, LLVMBuildICmp(b, LLVMIntSGE, site, LLVMConstInt(cm->t_i64, 0, 0), ""), NULL);
  for (size_t k = 0; k < nsites; k++) {
    const mlc_tir_stmt *s = cf->sites.data[base + k];
    LLVMBasicBlockRef hit = LLVMCreateBasicBlockInContext(cm->ctx, "site.failed");
    LLVMBasicBlockRef next = LLVMCreateBasicBlockInContext(cm->ctx, "site.next");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, site, LLVMConstInt(cm->t_i64, k + 1, 0), ""), hit, next);
    LLVMAppendExistingBasicBlock(cf->fn, hit);
    LLVMPositionBuilderAtEnd(b, hit);
    LLVMValueRef args[6] = {cf->ctx, LLVMBuildGlobalStringPtr(b, s->assert_.op, "mlc.op"),
                            LLVMBuildGlobalStringPtr(b, s->assert_.msg, "mlc.check"), NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
      LLVMValueRef idx = LLVMConstInt(cm->t_i64, (unsigned)i, 0);
      args[3 + i] = LLVMBuildLoad2(b, cm->t_i64, LLVMBuildInBoundsGEP2(b, cm->t_i64, vals, &idx, 1, ""), "");
    }
    LLVMValueRef cf_fn = cg_api_fn(cf, offsetof(mlc_rt_api, check_failed));
    LLVMTypeRef params[6] = {cm->t_ptr, cm->t_ptr, cm->t_ptr, cm->t_i64, cm->t_i64, cm->t_i64};
    LLVMBuildCall2(b, LLVMFunctionType(cm->t_i32, params, 6, 0), cf_fn, args, 6, "");
    cg_emit_fail(cf, NULL);
    LLVMAppendExistingBasicBlock(cf->fn, next);
    LLVMPositionBuilderAtEnd(b, next);
  }
}

void cg_launch(cg_func *cf, const mlc_tir_stmt *s) {
  cg_module *hm = cf->cm;
  cg_module *dm = dev_module(hm);
  if (!dm) return;
  LLVMBuilderRef hb = hm->b;
  int nv = cf->nvars, nb = cf->nbufs;
  char *uv = mlc_mem_calloc((size_t)nv + 1, 1), *ub = mlc_mem_calloc((size_t)nb + 1, 1);
  LLVMValueRef *hvals = mlc_mem_calloc((size_t)(nv + nb) + 1, sizeof *hvals);
  int *ids = mlc_mem_calloc((size_t)(nv + nb) + 1, sizeof *ids); /* var id, or -1 - buffer id */
  LLVMTypeRef *dtys = mlc_mem_calloc((size_t)(nv + nb) + 2, sizeof *dtys);
  LLVMValueRef *saved_vars = mlc_mem_alloc(sizeof *saved_vars * ((size_t)nv + 1));
  LLVMValueRef *saved_bufs = mlc_mem_alloc(sizeof *saved_bufs * ((size_t)nb + 1));
  int *same = NULL;
  if (!uv || !ub || !hvals || !ids || !dtys || !saved_vars || !saved_bufs) {
    cg_fail(hm, mlc_oom());
    goto done;
  }
  bound bd;
  memset(&bd, 0, sizeof bd);
  mlc_tir_visitor vis = {0};
  vis.ctx = &bd;
  vis.pre_stmt = bound_pre;
  mlc_tir_visit_stmt(&vis, s);
  if (bd.bad) {
    cg_fail(hm, mlc_make_status(MLC_UNIMPLEMENTED,
                                "codegen: kernel %s: loop %s is bound to thread axis \"%s\", which is unknown or "
                                "bound before with another extent",
                                cf->sym, bd.bad->loop.var->name, bd.bad->loop.thread ? bd.bad->loop.thread : ""));
    goto done;
  }
  /* launch dims, on the host */
  LLVMValueRef dims[6];
  for (int a = 0; a < 6; a++) {
    dims[a] = bd.loop[a] ? cg_expr_i64(cf, bd.loop[a]->loop.extent) : LLVMConstInt(hm->t_i64, 1, 0);
    if (!dims[a]) goto done;
  }
  /* parameters: the buffers, then the scalars the statement uses */
  cg_uses(s, uv, ub);
  int n = 0;
  /* one parameter per distinct pointer (a view and its buffer share one) */
  same = mlc_mem_calloc((size_t)nb + 1, sizeof *same);
  if (!same) {
    cg_fail(hm, mlc_oom());
    goto done;
  }
  for (int i = 0; i < nb; i++) {
    same[i] = -1;
    if (!ub[i] || !cf->bufs[i]) continue;
    for (int k = 0; k < n && same[i] < 0; k++)
      if (hvals[k] == cf->bufs[i]) same[i] = k;
    if (same[i] >= 0) continue;
    same[i] = n;
    hvals[n] = cf->bufs[i];
    ids[n++] = -1 - i;
  }
  int nbparams = n;
  for (int i = 0; i < nv; i++)
    if (uv[i] && cf->vars[i]) {
      hvals[n] = cf->vars[i];
      ids[n++] = i;
    }
  for (int i = 0; i < n; i++) dtys[i] = dev_type(dm, LLVMTypeOf(hvals[i]));
  dtys[n] = dm->t_ptr; /* the error word */
  char name[512];
  snprintf(name, sizeof name, "%s_k%d", cf->sym, hm->nlaunch++);
  LLVMValueRef kfn = LLVMAddFunction(dm->mod, name, LLVMFunctionType(dm->t_void, dtys, (unsigned)n + 1, 0));
  LLVMSetFunctionCallConv(kfn, PTX_KERNEL_CC);
  unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
  LLVMAddAttributeAtIndex(kfn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(dm->ctx, nounwind, 0));
  LLVMAddTargetDependentFunctionAttr(kfn, "target-cpu", dm->devt.cpu);
  LLVMAddTargetDependentFunctionAttr(kfn, "target-features", dm->devt.features);
  /* distinct buffers of a function marked tir.noalias do not overlap */
  const mlc_tir_attr *na = mlc_tir_func_attr(cf->f, "tir.noalias");
  if (na && na->kind != MLC_TIR_ATTR_STR && na->i) {
    unsigned k = LLVMGetEnumAttributeKindForName("noalias", 7);
    for (int i = 0; i < nbparams; i++)
      LLVMAddAttributeAtIndex(kfn, (unsigned)i + 1, LLVMCreateEnumAttribute(dm->ctx, k, 0));
  }

  /* the kernel, in the device module */
  LLVMValueRef save_fn = cf->fn, save_ctx = cf->ctx, save_mask = cf->mask, save_err = cf->err_word;
  LLVMBasicBlockRef save_entry = cf->entry;
  int save_noalias = cf->noalias;
  size_t save_base = cf->site_base;
  memcpy(saved_vars, cf->vars, sizeof *saved_vars * (size_t)nv);
  memcpy(saved_bufs, cf->bufs, sizeof *saved_bufs * (size_t)nb);
  memset(cf->vars, 0, sizeof *cf->vars * (size_t)nv);
  memset(cf->bufs, 0, sizeof *cf->bufs * (size_t)nb);
  cf->cm = dm;
  cf->fn = kfn;
  cf->ctx = NULL;
  cf->mask = NULL;
  cf->noalias = 0;
  cf->device = 1;
  cf->site_base = cf->sites.len;
  cf->entry = LLVMAppendBasicBlockInContext(dm->ctx, kfn, "entry");
  LLVMPositionBuilderAtEnd(dm->b, cf->entry);
  for (int i = 0; i < n; i++)
    if (ids[i] >= 0) cf->vars[ids[i]] = LLVMGetParam(kfn, (unsigned)i);
  for (int i = 0; i < nb; i++)
    if (same[i] >= 0) cf->bufs[i] = LLVMGetParam(kfn, (unsigned)same[i]);
  cf->err_word = LLVMGetParam(kfn, (unsigned)n);
  int save_nends = cf->nends;
  cf->nends = 0; /* the host's loops are not around the kernel's code */
  cg_stmt(cf, s);
  cf->nends = save_nends;
  if (!dm->err) LLVMBuildRetVoid(dm->b);
  size_t nsites = cf->sites.len - cf->site_base, base = cf->site_base;
  cf->cm = hm;
  cf->fn = save_fn;
  cf->ctx = save_ctx;
  cf->mask = save_mask;
  cf->noalias = save_noalias;
  cf->device = 0;
  cf->err_word = save_err;
  cf->entry = save_entry;
  cf->site_base = save_base;
  memcpy(cf->vars, saved_vars, sizeof *saved_vars * (size_t)nv);
  memcpy(cf->bufs, saved_bufs, sizeof *saved_bufs * (size_t)nb);
  if (dm->err) {
    cg_fail(hm, dm->err);
    dm->err = NULL;
    goto done;
  }

  /* the launch, in the host function */
  LLVMValueRef dv = cg_entry_alloca(cf, LLVMArrayType2(hm->t_i64, 6), "launch.dims");
  for (int a = 0; a < 6; a++) {
    LLVMValueRef idx = LLVMConstInt(hm->t_i64, (unsigned)a, 0);
    LLVMBuildStore(hb, dims[a], LLVMBuildInBoundsGEP2(hb, hm->t_i64, dv, &idx, 1, ""));
  }
  LLVMValueRef pv = cg_entry_alloca(cf, LLVMArrayType2(hm->t_ptr, (uint64_t)(n ? n : 1)), "launch.params");
  for (int i = 0; i < n; i++) {
    LLVMValueRef slot = cg_entry_alloca(cf, LLVMTypeOf(hvals[i]), "launch.param");
    LLVMBuildStore(hb, hvals[i], slot);
    LLVMValueRef idx = LLVMConstInt(hm->t_i64, (unsigned)i, 0);
    LLVMBuildStore(hb, slot, LLVMBuildInBoundsGEP2(hb, hm->t_ptr, pv, &idx, 1, ""));
  }
  LLVMValueRef lf = cg_api_fn(cf, offsetof(mlc_rt_api, cuda_launch));
  LLVMTypeRef lp[5] = {hm->t_ptr, hm->t_ptr, hm->t_ptr, hm->t_ptr, hm->t_i32};
  LLVMValueRef la[5] = {cf->ctx, LLVMBuildGlobalStringPtr(hb, name, "mlc.kernel"), dv, pv,
                        LLVMConstInt(hm->t_i32, (unsigned)n, 0)};
  LLVMValueRef rc = LLVMBuildCall2(hb, LLVMFunctionType(hm->t_i32, lp, 5, 0), lf, la, 5, "rc");
  cg_check(cf, LLVMBuildICmp(hb, LLVMIntEQ, rc, LLVMConstInt(hm->t_i32, 0, 0), ""), NULL);
  if (nsites) check_sites(cf, base, nsites);
  cf->sites.len = base;
done:
  mlc_mem_free(same);
  mlc_mem_free(uv);
  mlc_mem_free(ub);
  mlc_mem_free(hvals);
  mlc_mem_free(ids);
  mlc_mem_free(dtys);
  mlc_mem_free(saved_vars);
  mlc_mem_free(saved_bufs);
}

/* ---- PTX ------------------------------------------------------------------------- */

/* LLVM math intrinsics the NVPTX backend cannot select, and libdevice's
** functions for them. */
static const struct {
  const char *intr, *nv;
} math_map[] = {
    {"llvm.exp.f32", "__nv_expf"},   {"llvm.exp.f64", "__nv_exp"},   {"llvm.exp2.f32", "__nv_exp2f"},
    {"llvm.exp2.f64", "__nv_exp2"},  {"llvm.log.f32", "__nv_logf"},  {"llvm.log.f64", "__nv_log"},
    {"llvm.log2.f32", "__nv_log2f"}, {"llvm.log2.f64", "__nv_log2"}, {"llvm.sin.f32", "__nv_sinf"},
    {"llvm.sin.f64", "__nv_sin"},    {"llvm.cos.f32", "__nv_cosf"},  {"llvm.cos.f64", "__nv_cos"},
    {"llvm.pow.f32", "__nv_powf"},   {"llvm.pow.f64", "__nv_pow"},
};

/* Replaces the math intrinsics by libdevice calls; 1 when some function
** of libdevice is called. */
static int use_libdevice(cg_module *dm) {
  int need = 0;
  LLVMValueRef dead[64];
  int ndead = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(dm->mod); fn; fn = LLVMGetNextFunction(fn)) {
    size_t len;
    const char *nm = LLVMGetValueName2(fn, &len);
    if (!LLVMIsDeclaration(fn)) continue;
    if (strncmp(nm, "__nv_", 5) == 0) need = 1;
    for (size_t i = 0; i < sizeof math_map / sizeof *math_map; i++) {
      if (strcmp(nm, math_map[i].intr) != 0) continue;
      LLVMTypeRef fty = LLVMGlobalGetValueType(fn);
      LLVMValueRef nv = LLVMGetNamedFunction(dm->mod, math_map[i].nv);
      if (!nv) nv = LLVMAddFunction(dm->mod, math_map[i].nv, fty);
      LLVMReplaceAllUsesWith(fn, nv);
      if (ndead < 64) dead[ndead++] = fn;
      need = 1;
    }
  }
  for (int i = 0; i < ndead; i++) LLVMDeleteFunction(dead[i]);
  return need;
}

static mlc_status link_libdevice(cg_module *dm) {
  const char *env = getenv("MLC_CUDA_LIBDEVICE");
  char path[4096];
  if (env && *env) snprintf(path, sizeof path, "%s", env);
  else snprintf(path, sizeof path, "%s/nvvm/libdevice/libdevice.10.bc", MLC_CUDA_HOME);
  LLVMMemoryBufferRef mb = NULL;
  char *msg = NULL;
  if (LLVMCreateMemoryBufferWithContentsOfFile(path, &mb, &msg)) {
    mlc_status st = mlc_make_status(MLC_NOT_FOUND,
                                    "codegen: the CUDA target needs CUDA's libdevice for its math functions, and "
                                    "%s cannot be read (%s); set MLC_CUDA_LIBDEVICE to its path",
                                    path, msg ? msg : "no message");
    LLVMDisposeMessage(msg);
    return st;
  }
  LLVMModuleRef lib = NULL;
  int bad = LLVMParseBitcodeInContext2(dm->ctx, mb, &lib);
  LLVMDisposeMemoryBuffer(mb);
  if (bad) return mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: %s is not LLVM bitcode", path);
  LLVMSetTarget(lib, LLVMGetTarget(dm->mod));
  LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(dm->mod));
  if (LLVMLinkModules2(dm->mod, lib)) return mlc_make_status(MLC_INTERNAL, "codegen: linking %s failed", path);
  return NULL;
}

mlc_status cg_device_finish(cg_module *host, char **out, size_t *n) {
  cg_module *dm = host->dev;
  *out = NULL;
  *n = 0;
  if (!dm) return NULL;
  if (use_libdevice(dm)) MLC_RETURN_IF_ERROR(link_libdevice(dm));
  /* libdevice's __nvvm_reflect("__CUDA_FTZ"): no flush to zero */
  LLVMAddModuleFlag(dm->mod, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz", 16,
                    LLVMValueAsMetadata(LLVMConstInt(dm->t_i32, 0, 0)));
  for (LLVMValueRef fn = LLVMGetFirstFunction(dm->mod); fn; fn = LLVMGetNextFunction(fn))
    if (!LLVMIsDeclaration(fn) && LLVMGetFunctionCallConv(fn) != PTX_KERNEL_CC) LLVMSetLinkage(fn, LLVMInternalLinkage);
  char *msg = NULL;
  if (LLVMVerifyModule(dm->mod, LLVMReturnStatusAction, &msg)) {
    mlc_status st = mlc_make_status(MLC_INTERNAL, "codegen: LLVM rejected the GPU kernels' IR: %s", msg);
    LLVMDisposeMessage(msg);
    return st;
  }
  LLVMDisposeMessage(msg);
  msg = NULL;
  MLC_RETURN_IF_ERROR(cg_optimize(dm));
  LLVMMemoryBufferRef mb = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(dm->tm, dm->mod, LLVMAssemblyFile, &msg, &mb)) {
    mlc_status st = mlc_make_status(MLC_INTERNAL, "codegen: LLVM could not emit PTX: %s", msg ? msg : "");
    LLVMDisposeMessage(msg);
    return st;
  }
  size_t len = LLVMGetBufferSize(mb);
  char *d = mlc_mem_alloc(len + 1);
  if (!d) {
    LLVMDisposeMemoryBuffer(mb);
    return mlc_oom();
  }
  memcpy(d, LLVMGetBufferStart(mb), len);
  d[len] = 0;
  LLVMDisposeMemoryBuffer(mb);
  *out = d;
  *n = len;
  return NULL;
}
