/*
** emit.c: the build driver of codegen.h: sets up LLVM for the target,
** emits every kernel, verifies the LLVM module, runs LLVM's O3 pipeline
** (new pass manager) and emits object code or IR text.  Each call owns its
** LLVMContext; LLVM's target registry is initialized once per process.
*/
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/outfile.h"
#include "codegen/cg_int.h"
#include "codegen/codegen.h"

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;

static void init_llvm(void) {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  /* the host's backend too, when it is not x86 */
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
}

void cg_fail(cg_module *cm, mlc_status st) {
  if (!cm->err) cm->err = st;
  else mlc_status_free(st);
}

void mlc_cg_free(void *p) { mlc_mem_free(p); }

typedef enum { OUT_OBJECT, OUT_IR, OUT_IR_OPT } out_kind;

static mlc_status llvm_error(const char *what, char *msg) {
  mlc_status st = mlc_make_status(MLC_INTERNAL, "codegen: %s: %s", what, msg ? msg : "(no message)");
  LLVMDisposeMessage(msg);
  return st;
}

mlc_status cg_optimize(cg_module *cm) {
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(opts, 1);
  LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
  LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
  LLVMPassBuilderOptionsSetLoopInterleaving(opts, 1);
  LLVMErrorRef e = LLVMRunPasses(cm->mod, "default<O3>", cm->tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (!e) return NULL;
  char *m = LLVMGetErrorMessage(e);
  mlc_status st = mlc_make_status(MLC_INTERNAL, "codegen: LLVM optimization failed: %s", m);
  LLVMDisposeErrorMessage(m);
  return st;
}

void cg_module_init(cg_module *cm, LLVMTargetMachineRef tm, const mlc_target *t, const char *name) {
  cm->target = t;
  cm->tm = tm;
  cm->ctx = LLVMContextCreate();
  cm->mod = LLVMModuleCreateWithNameInContext(name, cm->ctx);
  LLVMSetSourceFileName(cm->mod, name, strlen(name));
  LLVMSetTarget(cm->mod, t->triple);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(cm->tm);
  LLVMSetModuleDataLayout(cm->mod, td);
  LLVMDisposeTargetData(td);
  cm->b = LLVMCreateBuilderInContext(cm->ctx);
  cm->t_void = LLVMVoidTypeInContext(cm->ctx);
  cm->t_i1 = LLVMInt1TypeInContext(cm->ctx);
  cm->t_i8 = LLVMInt8TypeInContext(cm->ctx);
  cm->t_i16 = LLVMInt16TypeInContext(cm->ctx);
  cm->t_i32 = LLVMInt32TypeInContext(cm->ctx);
  cm->t_i64 = LLVMInt64TypeInContext(cm->ctx);
  cm->t_half = LLVMHalfTypeInContext(cm->ctx);
  cm->t_f32 = LLVMFloatTypeInContext(cm->ctx);
  cm->t_f64 = LLVMDoubleTypeInContext(cm->ctx);
  cm->t_ptr = LLVMPointerTypeInContext(cm->ctx, 0);
  cm->md_loop = LLVMGetMDKindIDInContext(cm->ctx, "llvm.loop", 9);
  cm->md_scope = LLVMGetMDKindIDInContext(cm->ctx, "alias.scope", 11);
  cm->md_noalias = LLVMGetMDKindIDInContext(cm->ctx, "noalias", 7);
}

void cg_module_fini(cg_module *cm) {
  if (cm->dev) {
    mlc_status_free(cm->dev->err);
    cg_module_fini(cm->dev);
    mlc_mem_free(cm->dev);
    cm->dev = NULL;
  }
  if (cm->b) LLVMDisposeBuilder(cm->b);
  if (cm->mod) LLVMDisposeModule(cm->mod);
  if (cm->ctx) LLVMContextDispose(cm->ctx);
  if (cm->tm) LLVMDisposeTargetMachine(cm->tm);
  cm->b = NULL;
  cm->mod = NULL;
  cm->ctx = NULL;
  cm->tm = NULL;
}

/* Builds |m| for |t|: the host's object or IR into *|out|; for a CUDA
** target the kernels' PTX into *|dev| (*|dev_size| bytes) when |dev| is
** not NULL (else a module that has device code is an error). */
static mlc_status build(const mlc_tir_module *m, const mlc_target *t, out_kind kind, void **out, size_t *out_size,
                        char **dev, size_t *dev_size) {
  *out = NULL;
  if (out_size) *out_size = 0;
  if (dev) *dev = NULL;
  if (dev_size) *dev_size = 0;
  if (!m || !t) return mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: missing module or target");
  MLC_RETURN_IF_ERROR(mlc_tir_verify_module(m));
  pthread_once(&llvm_once, init_llvm);

  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(t->triple, &target, &msg))
    return llvm_error("this LLVM has no backend for the target triple", msg);
  cg_module cm;
  memset(&cm, 0, sizeof cm);
  cm.ir = m;
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, t->triple, t->cpu, t->features,
                                                    LLVMCodeGenLevelAggressive, LLVMRelocPIC, LLVMCodeModelDefault);
  if (!tm) return mlc_make_status(MLC_INTERNAL, "codegen: cannot create an LLVM target machine for %s", t->triple);
  cg_module_init(&cm, tm, t, "mlc");

  for (int i = 0; i < m->nfuncs && !cm.err; i++) cg_kernel(&cm, m->funcs[i]);
  mlc_status st = cm.err;
  if (!st && LLVMVerifyModule(cm.mod, LLVMReturnStatusAction, &msg))
    st = llvm_error("LLVM rejected the generated IR", msg);
  else if (msg) LLVMDisposeMessage(msg);
  if (!st && cm.dev && !dev && kind == OUT_OBJECT)
    st = mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: the module has GPU kernels but no place for their code");
  if (!st && cm.dev && dev) st = cg_device_finish(&cm, dev, dev_size);
  if (!st && kind != OUT_IR) st = cg_optimize(&cm);
  if (!st && kind == OUT_OBJECT) {
    LLVMMemoryBufferRef mb = NULL;
    msg = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(cm.tm, cm.mod, LLVMObjectFile, &msg, &mb)) {
      st = llvm_error("LLVM could not emit object code", msg);
    } else {
      size_t n = LLVMGetBufferSize(mb);
      void *d = mlc_mem_alloc(n ? n : 1);
      if (!d) st = mlc_oom();
      else {
        memcpy(d, LLVMGetBufferStart(mb), n);
        *out = d;
        *out_size = n;
      }
      LLVMDisposeMemoryBuffer(mb);
    }
  } else if (!st) {
    char *text = LLVMPrintModuleToString(cm.mod);
    size_t n = strlen(text);
    char *d = mlc_mem_alloc(n + 1);
    if (!d) st = mlc_oom();
    else {
      memcpy(d, text, n + 1);
      *out = d;
      if (out_size) *out_size = n;
    }
    LLVMDisposeMessage(text);
  }
  if (st && dev && *dev) {
    mlc_mem_free(*dev);
    *dev = NULL;
  }
  cg_module_fini(&cm);
  return st;
}

mlc_status mlc_cg_build_mem(const mlc_tir_module *m, const mlc_target *t, void **out_data, size_t *out_size) {
  return build(m, t, OUT_OBJECT, out_data, out_size, NULL, NULL);
}

mlc_status mlc_cg_build_device(const mlc_tir_module *m, const mlc_target *t, const char *obj_path, char **devcode,
                               size_t *devcode_size) {
  void *d;
  size_t n;
  MLC_RETURN_IF_ERROR(build(m, t, OUT_OBJECT, &d, &n, devcode, devcode_size));
  mlc_status st = mlc_out_write_file(obj_path, d, n, 0);
  mlc_mem_free(d);
  if (st && *devcode) {
    mlc_mem_free(*devcode);
    *devcode = NULL;
  }
  return st ? mlc_status_annotate(st, "codegen") : NULL;
}

mlc_status mlc_cg_build(const mlc_tir_module *m, const mlc_target *t, const char *obj_path) {
  void *d;
  size_t n;
  MLC_RETURN_IF_ERROR(build(m, t, OUT_OBJECT, &d, &n, NULL, NULL));
  mlc_status st = mlc_out_write_file(obj_path, d, n, 0);
  mlc_mem_free(d);
  return st ? mlc_status_annotate(st, "codegen") : NULL;
}

mlc_status mlc_cg_emit_llvm_ir(const mlc_tir_module *m, const mlc_target *t, int optimize_ir, char **out_text) {
  void *d;
  char *dev = NULL;
  size_t dev_size = 0;
  mlc_status st = build(m, t, optimize_ir ? OUT_IR_OPT : OUT_IR, &d, NULL, t && t->device ? &dev : NULL, &dev_size);
  mlc_mem_free(dev);
  *out_text = st ? NULL : d;
  return st;
}

/* ---- the model object: the description blob and the function table ------ */

static mlc_status write_obj(const char *path, const void *d, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return mlc_make_status(MLC_IO_ERROR, "codegen: cannot create %s", path);
  size_t w = n ? fwrite(d, 1, n, f) : 0;
  if (fclose(f) != 0 || w != n) return mlc_make_status(MLC_IO_ERROR, "codegen: cannot write %s", path);
  return NULL;
}

/* A hidden, constant global |name| = |init| in |mod|. */
static LLVMValueRef add_const(LLVMModuleRef mod, const char *name, LLVMValueRef init, unsigned align) {
  LLVMValueRef g = LLVMAddGlobal(mod, LLVMTypeOf(init), name);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMExternalLinkage);
  LLVMSetVisibility(g, LLVMHiddenVisibility);
  LLVMSetAlignment(g, align);
  return g;
}

mlc_status mlc_cg_build_model_object(const mlc_target *t, const void *blob, size_t blob_size, const char *devcode,
                                     size_t devcode_size, const char *const *fn_syms, int nfns, const char *obj_path) {
  if (!t || !blob || nfns < 0 || (nfns && !fn_syms) || !obj_path || blob_size > 0xffffffffu ||
      devcode_size > 0xffffffffu || (devcode_size && !devcode))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "codegen: bad arguments for the model object");
  pthread_once(&llvm_once, init_llvm);
  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(t->triple, &target, &msg))
    return llvm_error("this LLVM has no backend for the target triple", msg);
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, t->triple, t->cpu, t->features, LLVMCodeGenLevelDefault,
                                                    LLVMRelocPIC, LLVMCodeModelDefault);
  if (!tm) return mlc_make_status(MLC_INTERNAL, "codegen: cannot create an LLVM target machine for %s", t->triple);
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("mlc_model", ctx);
  LLVMSetSourceFileName(mod, "mlc_model", 9);
  LLVMSetTarget(mod, t->triple);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(mod, td);
  LLVMDisposeTargetData(td);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), i64 = LLVMInt64TypeInContext(ctx);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
  mlc_status st = NULL;
  /* The blob: bytes, never text, in its own read-only section. */
  LLVMValueRef g = add_const(mod, "mlc_model_blob", LLVMConstStringInContext(ctx, blob, (unsigned)blob_size, 1), 8);
  LLVMSetSection(g, ".mlc_model");
  add_const(mod, "mlc_model_blob_size", LLVMConstInt(i64, blob_size, 0), 8);
  /* The device code (PTX, NUL-terminated; empty for the CPU), as bytes. */
  add_const(mod, "mlc_model_devcode",
            LLVMConstStringInContext(ctx, devcode_size ? devcode : "", (unsigned)devcode_size, 0), 8);
  add_const(mod, "mlc_model_devcode_size", LLVMConstInt(i64, devcode_size, 0), 8);
  /* The function table the blob's indices refer to (one NULL past the end). */
  LLVMTypeRef params[4] = {ptr, ptr, i32, ptr};
  LLVMTypeRef fty = LLVMFunctionType(i32, params, 4, 0);
  LLVMValueRef *fns = mlc_mem_alloc(sizeof *fns * ((size_t)nfns + 1));
  if (!fns) st = mlc_oom();
  for (int i = 0; !st && i < nfns; i++) {
    LLVMValueRef f = LLVMGetNamedFunction(mod, fn_syms[i]);
    if (!f) {
      f = LLVMAddFunction(mod, fn_syms[i], fty);
      LLVMSetVisibility(f, LLVMHiddenVisibility);
    }
    fns[i] = f;
  }
  if (!st) {
    fns[nfns] = LLVMConstPointerNull(ptr);
    add_const(mod, "mlc_model_kernels", LLVMConstArray2(ptr, fns, (uint64_t)nfns + 1), 8);
    add_const(mod, "mlc_model_nkernels", LLVMConstInt(i32, (unsigned long long)nfns, 0), 4);
    if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) st = llvm_error("LLVM rejected the model object", msg);
    else if (msg) LLVMDisposeMessage(msg);
  }
  mlc_mem_free(fns);
  if (!st) {
    LLVMMemoryBufferRef mb = NULL;
    msg = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &msg, &mb)) {
      st = llvm_error("LLVM could not emit the model object", msg);
    } else {
      st = write_obj(obj_path, LLVMGetBufferStart(mb), LLVMGetBufferSize(mb));
      LLVMDisposeMemoryBuffer(mb);
    }
  }
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  return st;
}
