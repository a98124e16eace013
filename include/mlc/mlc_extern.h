/*
** mlc_extern.h: external kernels, the header a plugin library needs.
**
** Every kernel a model runs, generated or external, has one calling
** convention, destination passing (the seeds' call_dps_packed):
**
**   int fn(void **args, const int32_t *arg_codes, int32_t nargs, mlc_rt_ctx *ctx);
**
** args[i] is a DLTensor* (code MLC_ARG_TENSOR; on the CPU, compact
** row-major, data at data + byte_offset) or a pointer to an int64_t (code
** MLC_ARG_INT).  The tensors come first: the op's inputs in order, then its
** outputs, which the caller allocated (the kernel writes them and allocates
** nothing it returns).  Then the op's attributes as MLC_ARG_INTs, the
** attributes sorted by name: an int is one value, a list of ints one value
** per element, a float the bits of its float32 (low 32 bits); string and
** float-list attributes are not passed.  The kernel returns 0, or
** nonzero after ctx->api->set_error.  It reaches the runtime only through
** ctx->api: the session's threads (parallel_for, num_threads), scratch
** memory, errors.
**
** A plugin is a shared library that exports
**
**   const mlc_extern_plugin *mlc_extern_plugin_v1(void);
**
** returning a static table of its functions, each registered under a name
** ("myops.linear", prefixed by the plugin's name) with the graph op it
** implements ("matmul", "relu", "add", "conv", ...; `mlc-onnx compile
** --extern-lib libmyops.so` dispatches every call of that op the function
** supports to it) and an optional supports() check.  The model records
** which plugin it needs; at load the runtime finds it already loaded in
** the process (a model compiled with --link-extern-lib, or a program that
** linked it), else in the directories of MLC_EXTERN_LIB_PATH
** (colon-separated), else next to model.so; a missing plugin or function is
** a load error naming both.
**
** Example (the seeds' env.linear):
**
**   static int linear(void **a, const int32_t *c, int32_t n, mlc_rt_ctx *ctx) { ... }
**   static const mlc_extern_fn fns[] = {{"myops.linear", "matmul", linear, NULL}};
**   static const mlc_extern_plugin plugin = {MLC_EXTERN_PLUGIN_ABI, "myops", 1, fns};
**   MLC_EXTERN_EXPORT const mlc_extern_plugin *mlc_extern_plugin_v1(void) { return &plugin; }
*/
#ifndef MLC_MLC_EXTERN_H
#define MLC_MLC_EXTERN_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MLC_EXTERN_EXPORT __attribute__((visibility("default")))
#else
#define MLC_EXTERN_EXPORT
#endif

/* Version of the calling convention below (appending to mlc_rt_api keeps it). */
#define MLC_RT_ABI_VERSION 2

typedef struct mlc_rt_ctx mlc_rt_ctx;

/* Runs iterations [begin, end) of a parallel loop. 0 ok, nonzero error. */
typedef int (*mlc_rt_parallel_body)(int64_t begin, int64_t end, void *closure);

typedef struct mlc_rt_api {
  /* Splits [0, n) into chunks run on the session's thread pool (the caller
  ** thread takes part); returns when all are done: 0, or the first nonzero
  ** body result. */
  int (*parallel_for)(mlc_rt_ctx *ctx, int64_t n, mlc_rt_parallel_body body, void *closure);
  /* Scratch memory for one kernel call, 64-byte aligned; NULL on failure. */
  void *(*workspace_alloc)(mlc_rt_ctx *ctx, uint64_t nbytes);
  void (*workspace_free)(mlc_rt_ctx *ctx, void *p);
  /* Records an error message for the session; returns -1 for convenience. */
  int (*set_error)(mlc_rt_ctx *ctx, const char *msg);
  /* Records that a check of model data failed (an index out of its
  ** range): |op| is the ONNX op type, |msg| the compiler's constant text in
  ** which "$0", "$1" and "$2" stand for |v0|, |v1| and |v2| in decimal.  The
  ** runtime adds the step's ONNX node.  Returns -1 for convenience.  When
  ** several threads of one parallel loop fail, the message kept is that of
  ** the first failing iteration in loop order. */
  int (*check_failed)(mlc_rt_ctx *ctx, const char *op, const char *msg, int64_t v0, int64_t v1,
                      int64_t v2);
  /* The number of threads parallel_for runs on (>= 1), so that a kernel
  ** can cut its work into that many pieces.  May be NULL in a table of a
  ** test harness: then 1. */
  int (*num_threads)(mlc_rt_ctx *ctx);
  /* A per-session slot |key| (0 .. MLC_RT_NSLOTS-1) where a library keeps
  ** its handle for the session (cuBLAS: MLC_RT_SLOT_CUBLAS, cuDNN:
  ** MLC_RT_SLOT_CUDNN, cuBLASLt: MLC_RT_SLOT_CUBLASLT): a pointer to the slot, NULL at first; |fini| (may
  ** be NULL) is called with the slot's value when the session is freed if
  ** the value is not NULL then.  NULL for a key out of range. */
  void **(*session_slot)(mlc_rt_ctx *ctx, int32_t key, void (*fini)(void *));
  /* ---- CUDA models (NULL in a CPU model's table) ----
  ** In a CUDA model every tensor a kernel gets is in device memory
  ** (device_type kDLCUDA; data is a CUdeviceptr) and workspace_alloc gives
  ** device memory.  Kernels run in the order of the session's stream. */
  /* The session's CUstream; the session's CUDA context is current on the
  ** calling thread while a kernel runs. */
  void *(*cuda_stream)(mlc_rt_ctx *ctx);
  /* Launches the model's device function |name| (a kernel of its PTX) on
  ** the stream with grid dims[0..2] and block dims[3..5] and the kernel's
  ** |nparams| parameters (params[i] points at each, as cuLaunchKernel takes
  ** them; the runtime appends the session's error word, an int64_t[4] in
  ** device memory).  0, or nonzero after recording the error. */
  int (*cuda_launch)(mlc_rt_ctx *ctx, const char *name, const int64_t *dims, void **params, int32_t nparams);
  /* Waits for the stream and reads the error word a device kernel sets
  ** when a check of model data fails: 0 (none, vals untouched) or the
  ** failed check's site (>= 1) with its three values in |vals|, after which
  ** the word is cleared.  Nonzero negative: a CUDA error (recorded). */
  int64_t (*cuda_check)(mlc_rt_ctx *ctx, int64_t *vals);
  /* parallel_for whose chunks are whole runs of |grain| iterations where
  ** there are enough of them for the threads (a kernel whose parallel loop
  ** fuses its output-channel panels with the rows of each: a thread then
  ** streams a panel's weights alone); else as parallel_for.  |grain|
  ** divides |n|.  May be NULL in a table of a test harness: then
  ** parallel_for. */
  int (*parallel_for_grain)(mlc_rt_ctx *ctx, int64_t n, int64_t grain, mlc_rt_parallel_body body,
                            void *closure);
} mlc_rt_api;

/* Slots of mlc_rt_api.session_slot. */
#define MLC_RT_NSLOTS 8
#define MLC_RT_SLOT_CUBLAS 0
#define MLC_RT_SLOT_CUDNN 1
#define MLC_RT_SLOT_CUBLASLT 2

/* The context handed to kernels; the runtime's private state follows. */
struct mlc_rt_ctx {
  const mlc_rt_api *api;
};

enum mlc_rt_arg_code {
  MLC_ARG_TENSOR = 0, /* args[i] is a DLTensor* */
  MLC_ARG_INT = 1     /* args[i] points to an int64_t */
};

typedef int (*mlc_kernel_fn)(void **args, const int32_t *arg_codes, int32_t nargs,
                             mlc_rt_ctx *ctx);

/* ---- plugins ------------------------------------------------------------ */

#define MLC_EXTERN_PLUGIN_ABI 1

typedef struct mlc_extern_fn {
  /* "plugin.function": the name the model's steps call (ASCII letters,
  ** digits, '_' and '.'; it starts with the plugin's name and a '.'). */
  const char *name;
  /* The graph op it implements, as `mlc-onnx inspect --ir` prints ops
  ** ("matmul", "add", "relu", "conv", "softmax", ...). */
  const char *op;
  mlc_kernel_fn fn;
  /* Whether fn takes a call: the op's |nargs| inputs then its output in
  ** |t| (dtype and shape; data NULL; a dimension that is only known at run
  ** time is -1), and the integer attributes the call will pass (|attrs|,
  ** |nattrs| values).  Nonzero: take it.  NULL: every call of the op whose
  ** tensors are all float32. */
  int (*supports)(const DLTensor *t, int32_t nargs, const int64_t *attrs, int32_t nattrs);
} mlc_extern_fn;

typedef struct mlc_extern_plugin {
  uint32_t abi;              /* MLC_EXTERN_PLUGIN_ABI */
  const char *name;          /* the plugin's name, the prefix of its functions' names */
  int32_t nfns;
  const mlc_extern_fn *fns;
} mlc_extern_plugin;

/* What a plugin exports (static storage). */
typedef const mlc_extern_plugin *(*mlc_extern_plugin_entry)(void);
#define MLC_EXTERN_PLUGIN_SYMBOL "mlc_extern_plugin_v1"

#ifdef __cplusplus
}
#endif

#endif /* MLC_MLC_EXTERN_H */
