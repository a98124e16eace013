/*
** cg_int.h: private state of the LLVM code generator (only the codegen/ sources include it).
**
** One cg_module per build call (its own LLVMContext).  One cg_func per LLVM
** function being emitted: a kernel, or a parallel loop body outlined from
** one.  The environment maps TIR variable ids to LLVM values and buffer ids
** to base pointers; it is rebound when entering an outlined function.
*/
#ifndef MLC_CODEGEN_CG_INT_H
#define MLC_CODEGEN_CG_INT_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "base/status.h"
#include "base/vec.h"
#include "codegen/target.h"
#include "lower/tir.h"

typedef struct cg_module {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMTargetMachineRef tm;
  const mlc_target *target;
  const mlc_tir_module *ir;
  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_half, t_f32, t_f64, t_ptr;
  unsigned md_loop, md_scope, md_noalias;
  mlc_status err; /* first error; emission stops producing useful code after it */
  /* CUDA (nvptx.c): in the host module, the device module its kernels'
  ** launches go to (made at the first launch, NULL before); in that
  ** device module, device = 1 and devt its target */
  struct cg_module *dev;
  int device;
  int nlaunch; /* device kernels made so far */
  mlc_target devt;
} cg_module;

#define CG_MAX_ENDS 64

typedef struct cg_func {
  cg_module *cm;
  const mlc_tir_func *f;
  const char *sym;        /* kernel symbol (messages, outlined names) */
  LLVMValueRef fn;        /* the function being emitted now */
  LLVMBasicBlockRef entry; /* its entry block (allocas) */
  LLVMValueRef ctx;       /* mlc_rt_ctx* in the current function */
  int nvars, nbufs;       /* 1 + the largest var / buffer id in the function */
  LLVMValueRef *vars;     /* by var id; NULL when not bound */
  LLVMValueRef *bufs;     /* base pointer by buffer id */
  MLC_VEC(LLVMValueRef) ws; /* live workspace allocations, innermost last */
  size_t ws_base;         /* first entry that belongs to the current function */
  int outlined;           /* inside an outlined parallel body */
  /* the loops around the code being emitted in the current function, for
  ** T.loop_end: each one's variable and the end of the iterations it runs
  ** (an outlined parallel loop's: its chunk's); innermost last */
  int nends;
  const mlc_tir_var *end_var[CG_MAX_ENDS];
  LLVMValueRef end_val[CG_MAX_ENDS];
  int npar;               /* outlined functions made so far */
  /* alias scopes when the function has tir.noalias: by buffer id */
  int noalias;
  int nscoped;
  int *scoped_ids;        /* buffer ids with a scope, in order */
  LLVMMetadataRef *scope; /* by buffer id, NULL if none */
  /* the lanes that run now, inside a masked region (an if on a vector
  ** condition, the arm of a vector select): <N x i1>, or NULL for all */
  LLVMValueRef mask;
  /* inside a device kernel (nvptx.c): its error word parameter, and the
  ** asserts emitted so far in it (site k is sites[k - 1]) */
  int device;
  LLVMValueRef err_word;
  MLC_VEC(const mlc_tir_stmt *) sites;
  size_t site_base; /* sites of the kernel being emitted start here */
} cg_func;

/* Records |st| (transferred) as the module's error unless one is set. */
void cg_fail(cg_module *cm, mlc_status st);

/* T.loop_end(|v|): the end of the iterations |v|'s loop runs around the
** code being emitted (llvm_stmt.c); NULL (an error recorded) outside it. */
LLVMValueRef cg_loop_end(cg_func *cf, const mlc_tir_var *v);

/* ---- llvm_expr.c ---- */
/* The LLVM type of values of |t| (f16/bf16 compute as float; bool is i1). */
LLVMTypeRef cg_value_type(cg_module *cm, mlc_dtype t);
/* The LLVM type of |t| in memory (half, i16 for bf16, i8 for bool). */
LLVMTypeRef cg_mem_type(cg_module *cm, mlc_dtype t);
/* cg_value_type of |t|, as <lanes x ...> when |lanes| > 1. */
LLVMTypeRef cg_vec_type(cg_module *cm, mlc_dtype t, int lanes);
/* |v| (a scalar) in |lanes| lanes (insertelement + shufflevector). */
LLVMValueRef cg_splat(cg_func *cf, LLVMValueRef v, int lanes);
/* Nonzero if the vector |mask| (<N x i1>) has a lane set. */
LLVMValueRef cg_any_lane(cg_func *cf, LLVMValueRef mask);
/* Emits |e| at the builder's position; NULL after an error. */
LLVMValueRef cg_expr(cg_func *cf, const mlc_tir_expr *e);
/* |v| of dtype |from| converted to |to| (value types). */
LLVMValueRef cg_convert(cg_func *cf, LLVMValueRef v, mlc_dtype from, mlc_dtype to);
/* The address of buffer[indices] (element type cg_mem_type). */
LLVMValueRef cg_address(cg_func *cf, const mlc_tir_buffer *buf, int n, mlc_tir_expr *const *idx);
/* Loads / stores one element, converting between value and memory types. */
LLVMValueRef cg_load_elem(cg_func *cf, const mlc_tir_buffer *buf, LLVMValueRef addr);
void cg_store_elem(cg_func *cf, const mlc_tir_buffer *buf, LLVMValueRef addr, LLVMValueRef v);
/* Stores the vector |v| at vector indices |idx| of |buf| under cf->mask
** (contiguous when the last index is a ramp of stride 1, else a scatter). */
void cg_store_vec(cg_func *cf, const mlc_tir_buffer *buf, int n, mlc_tir_expr *const *idx, LLVMValueRef v);
/* An i64 value of |e| (sign-extended when narrower). */
LLVMValueRef cg_expr_i64(cg_func *cf, const mlc_tir_expr *e);

/* ---- llvm_stmt.c ---- */
void cg_stmt(cg_func *cf, const mlc_tir_stmt *s);
/* Calls ctx->api->set_error(ctx, msg) when |msg|, frees the live workspace
** allocations of the current function and returns -1.  Leaves the builder in
** a fresh unreachable block. */
void cg_emit_fail(cg_func *cf, const char *msg);
/* if (!ok) fail(msg); continues in the ok block. */
void cg_check(cg_func *cf, LLVMValueRef ok, const char *msg);
/* Loads the api function pointer at |offset| of ctx->api. */
LLVMValueRef cg_api_fn(cg_func *cf, size_t offset);

/* The variables and buffers (views with the buffers they view, and the
** variables of every buffer's shape) |s| uses: vars[id] / bufs[id] set to
** 1, both arrays cf->nvars / cf->nbufs long. */
void cg_uses(const mlc_tir_stmt *s, char *vars, char *bufs);
/* An alloca in the entry block of the current function. */
LLVMValueRef cg_entry_alloca(cg_func *cf, LLVMTypeRef ty, const char *name);

/* ---- emit.c ---- */
/* Sets up |cm| (zeroed) for target machine |tm| (transferred) and |t|. */
void cg_module_init(cg_module *cm, LLVMTargetMachineRef tm, const mlc_target *t, const char *name);
/* Frees what cg_module_init made (not the error). */
void cg_module_fini(cg_module *cm);
/* LLVM's O3 pipeline over |cm|'s module. */
mlc_status cg_optimize(cg_module *cm);

/* ---- nvptx.c: the CUDA backend ---- */
/* Host code of a CUDA target: whether |s| must run on the GPU (it touches
** memory, or is a loop); an if or assert on values alone stays on the host. */
int cg_needs_device(const cg_func *cf, const mlc_tir_stmt *s);
/* Emits |s| as a device kernel of cf->cm->dev and its launch (grid and
** block from the loops in |s| bound to blockIdx / threadIdx; one thread
** when none) at the builder's position, with the check of its asserts. */
void cg_launch(cg_func *cf, const mlc_tir_stmt *s);
/* Inside a device kernel: the thread index a loop bound to |tag| runs at
** (i64), or NULL after an error. */
LLVMValueRef cg_thread_index(cg_func *cf, const char *tag);
/* T.sync_threads(): inside a device kernel the thread block's barrier
** (bar.sync 0); in CPU code, where the threads run one after another,
** nothing.  Returns i32 0. */
LLVMValueRef cg_sync_threads(cg_func *cf);
/* T.warp_sum / warp_max / warp_min(|x|) (|op|; f32): inside a device
** kernel, |x| combined over the 32 lanes of the warp by a butterfly of
** shfl.sync.bfly, the result in every lane; elsewhere an error. */
LLVMValueRef cg_warp_reduce(cg_func *cf, mlc_tir_intrin op, mlc_dtype dt, LLVMValueRef x);
/* Inside a device kernel: the storage of shared-scope buffer |buf| of
** |count| elements of type |t|: a global of the thread block's shared
** address space (one per allocation), as a generic pointer. */
LLVMValueRef cg_shared_alloc(cg_func *cf, const mlc_tir_buffer *buf, LLVMTypeRef t, int64_t count);
/* Inside a device kernel: an assert's failure path (records its site and
** values in the error word, returns from the kernel); continues in the ok
** block. */
void cg_device_assert(cg_func *cf, const mlc_tir_stmt *s, LLVMValueRef ok);
/* The PTX of |host|'s device module (LLVM's O3, libdevice linked in for
** the math functions): *|out| (*|n| bytes, NUL-terminated) transferred. */
mlc_status cg_device_finish(cg_module *host, char **out, size_t *n);

/* ---- llvm_func.c ---- */
/* Emits the kernel for |f|. */
void cg_kernel(cg_module *cm, const mlc_tir_func *f);
/* Marks |fn| nounwind with the target's cpu and features. */
void cg_func_attrs(cg_module *cm, LLVMValueRef fn);

#endif /* MLC_CODEGEN_CG_INT_H */
