/*
** rt_model.h: the model description the compiler emits and the runtime
** executes.
**
** A model.so is generated kernels + the description serialized as a blob
** (rt_blob.h) + a table of the kernels + the weights + the runtime's
** objects.  The runtime decodes the blob into these structs when the model
** is opened; steps and externs name their function by an index into the
** table, which the decoder turns into |fn|.  Nothing the compiler emits is
** C source, so no text of a model is ever compiled.
**
** Tensors are numbered 0..ntensors-1.  Each has a dtype, a rank and dims;
** a dim d >= 0 is static and d < 0 is symbolic variable k = -1 - d.  A
** variable is either input-bound, its value taken from the input shapes
** when a run starts (it occurs in some input's dims), or run-bound: defined
** by exactly one BIND_SYMS step from values the model computed (a Reshape's
** shape input, a NonZero count), valid from that step on.  Each tensor
** lives in one storage:
**
**   INPUT   loc = input index: the caller's DLTensor (validated, not copied);
**           an input with a default (an ONNX graph input that is also an
**           initializer) that the caller has not set, or has reset, is the
**           default's data in the weights instead (not copied either)
**   OUTPUT  loc = output index: a buffer the session owns and exposes
**   CONST   loc = byte offset into the weights blob (static dims only)
**   ARENA   loc = storage id in [0, nstorages): intermediates that share a
**           storage id share memory (the compiler's liveness plan says they
**           are never live together); a storage is sized for its largest
**           tensor at the bound dims.  A storage holding a tensor with
**           run-bound dims cannot be sized before the run: it is allocated
**           (grown) right before each step that writes one of its tensors,
**           as are outputs with run-bound dims
**
** Steps run in order.  A step calls a generated kernel (|fn|, the function
** table's entry |kernel|) or an external function found by |name| in the
** |externs| table at load time; both follow
** rt_abi.h.  Its arguments are tensor ids (passed as DLTensor*), symbolic
** variables (passed as MLC_ARG_INT pointing at the bound value) or
** immediates (MLC_ARG_INT pointing at the value).  |label| names the ONNX
** node for error messages.  Names starting with "mlc." are the runtime's
** own functions (shape functions such as "mlc.reshape_dims"), found in the
** runtime rather than in |externs|; they take int attributes as trailing
** immediates.
**
** A BIND_SYMS step calls nothing: args[0] is an int64 vector tensor v,
** args[1] an int64 tensor of the same length that receives a copy of v,
** args[2] an immediate offset o, and args[3 + i] either a SYM (a run-bound
** variable, set to v[o + i]) or an IMM (a static extent v[o + i] must
** equal).  A negative value or a mismatch is a run error naming the step's
** node.
**
** A symbol may also be derived: an expression of earlier symbols
** (mlc_rt_sym_def), such as a convolution's output height (H - 1) // 2 + 1.
** The runtime evaluates it as soon as the symbols it reads are bound: at
** the start of a run for expressions of input-bound symbols (so the arena
** is planned for them), after the BIND_SYMS step that binds the last of
** them otherwise.  A CHECK symbol equals its operand and fails the run,
** with its |where| text, when that is negative.
**
** Run-time control flow.  Steps normally run in order; five step kinds
** (calling nothing) jump, so that a region of steps runs once, not at all,
** or once per iteration.  Regions nest properly; T is a tensor arg, I an
** immediate:
**
**   IF        [T cond, T taken, I else]: taken (bool scalar) = cond != 0
**             (cond: one element); when false, continue after step |else|
**   ELSE      [T taken, T token, I end]: the then branch is done: continue
**             at step |end| (an END_IF whose first arg is the same taken);
**             the token (bool scalar) is not written
**   END_IF    [T taken, T then[n], T else[n], T out[n]]: out[i] = copy of
**             then[i] if taken, else of else[i]; a dim of out[i] that is a
**             symbol is set from the copied tensor (these symbols are
**             run-bound, defined by the END_IF), a static one is checked
**   LOOP      [T M, T cond, T init[c], T iter, T cond_in, T carried[c], I end]:
**             iter = 0, cond_in = cond, carried = copies of init; when
**             M <= 0 or !cond, continue at step |end| as a loop that ends
**   LOOP_END  [T M, T cond_out, T carried_out[c], T scan[s], T final[c],
**             T stacked[s], I loop, I c]: after an iteration: iter += 1,
**             cond_in = cond_out, carried = copies of carried_out, each
**             scan value appended to its stack; while iter < M and
**             cond_out, continue after step |loop| (the LOOP step, whose
**             iter, cond_in and carried tensors these are).  When the loop
**             ends: final = copies of carried, stacked[j] = the scan
**             values of the iterations one after another (dim 0, a
**             symbol the LOOP_END defines, = the number of iterations;
**             every iteration's value must have the same shape)
**
** Each tensor that a LOOP/LOOP_END pair writes lives (in the memory plan)
** across the whole loop, and so does every tensor defined before a loop and
** read in it.
**
** The runtime validates the whole description when the model is opened, so
** a malformed description is a load error, never a crash at run time.
*/
#ifndef MLC_RUNTIME_RT_MODEL_H
#define MLC_RUNTIME_RT_MODEL_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#include "runtime/rt_abi.h"

/* Version of the layout below; bump it whenever a struct here changes. */
#define MLC_RT_DESC_VERSION 6

/* Where a tensor lives (mlc_rt_tensor_desc.storage). */
enum mlc_rt_storage {
  MLC_RT_STORAGE_INPUT = 0,
  MLC_RT_STORAGE_OUTPUT = 1,
  MLC_RT_STORAGE_CONST = 2,
  MLC_RT_STORAGE_ARENA = 3
};

/* What a step argument is (mlc_rt_arg_desc.kind). */
enum mlc_rt_arg_kind {
  MLC_RT_ARG_TENSOR = 0, /* value = tensor id; passed as DLTensor* */
  MLC_RT_ARG_SYM = 1,    /* value = symbolic variable; passed as int64_t* */
  MLC_RT_ARG_IMM = 2     /* value = the integer itself; passed as int64_t* */
};

/* What a step calls (mlc_rt_step_desc.kind). */
enum mlc_rt_step_kind {
  MLC_RT_STEP_KERNEL = 0, /* fn: a generated kernel in this model */
  MLC_RT_STEP_EXTERN = 1, /* name: an entry of the model's externs table, or "mlc.*" */
  MLC_RT_STEP_BIND_SYMS = 2, /* defines run-bound symbols from a computed vector */
  /* run-time control flow (see above); no function */
  MLC_RT_STEP_IF = 3,
  MLC_RT_STEP_ELSE = 4,
  MLC_RT_STEP_END_IF = 5,
  MLC_RT_STEP_LOOP = 6,
  MLC_RT_STEP_LOOP_END = 7
};

/* How a symbol gets its value (mlc_rt_sym_def.op). */
enum mlc_rt_sym_op {
  MLC_RT_SYM_FREE = 0,     /* input-bound or run-bound */
  MLC_RT_SYM_ADD = 1,      /* a + b */
  MLC_RT_SYM_MUL = 2,      /* a * b, b a constant >= 0 or a symbol */
  MLC_RT_SYM_FLOORDIV = 3, /* floor(a / b), b a constant >= 1 */
  MLC_RT_SYM_MIN = 4,
  MLC_RT_SYM_MAX = 5,
  MLC_RT_SYM_CHECK = 6,    /* a, which must be >= 0 */
  MLC_RT_SYM_OP_COUNT = 7
};

/* A derived symbol: |op| of symbol |a| (an index lower than this symbol's)
** and |b|, a symbol index when |b_sym|, else a constant. */
typedef struct mlc_rt_sym_def {
  int32_t op;        /* enum mlc_rt_sym_op */
  int32_t b_sym;
  int64_t a, b;
  const char *where; /* CHECK: the requirement and its node, for the error; else NULL */
  int64_t bound;     /* FREE: the largest value allowed (0: none); the arena is
                     ** planned for the bounds (derived symbols at their
                     ** operands' bounds), once */
} mlc_rt_sym_def;

typedef struct mlc_rt_tensor_desc {
  DLDataType dtype;    /* code/bits/lanes as in DLPack, e.g. {kDLFloat, 32, 1} */
  int32_t ndim;        /* rank, 0..MLC_RT_MAX_NDIM */
  const int64_t *dims; /* ndim entries (NULL if ndim == 0); -1-k = symbol k */
  int32_t storage;     /* enum mlc_rt_storage */
  int64_t loc;         /* input/output index, weights byte offset, or storage id */
} mlc_rt_tensor_desc;

/* Largest tensor rank a description may use. */
#define MLC_RT_MAX_NDIM 64

typedef struct mlc_rt_io_desc {
  const char *name;    /* the ONNX graph input/output name */
  int32_t tensor;      /* its tensor id (storage INPUT/OUTPUT with loc = this index) */
  int32_t has_default; /* inputs only: 1 when the input has a default value */
  int64_t default_loc; /* has_default: the byte offset of the default's data in
                       ** the weights (its shape: the tensor's dims, all static) */
} mlc_rt_io_desc;

typedef struct mlc_rt_arg_desc {
  int32_t kind;  /* enum mlc_rt_arg_kind */
  int64_t value; /* tensor id, symbol index or immediate */
} mlc_rt_arg_desc;

typedef struct mlc_rt_step_desc {
  int32_t kind;                /* enum mlc_rt_step_kind */
  const char *name;            /* kernel name (inspect) or the extern's registered name */
  mlc_kernel_fn fn;            /* KERNEL: the function; EXTERN: NULL (resolved by name) */
  const char *label;           /* ONNX node name for errors ("" if none) */
  int32_t nargs;
  const mlc_rt_arg_desc *args; /* nargs entries */
  int32_t kernel;              /* KERNEL: index of |fn| in the function table; else -1 */
} mlc_rt_step_desc;

/*
** One external function the model may call: a name and its implementation,
** either linked into the model (a provider's wrapper: |kernel| indexes the
** function table, |plugin| is NULL) or exported by a plugin library
** (|plugin| is its file name, |kernel| is -1; the function is found by
** name when the model is opened).
*/
typedef struct mlc_rt_extern_desc {
  const char *name;   /* e.g. "openblas.matmul", "myops.linear" */
  mlc_kernel_fn fn;
  int32_t kernel;     /* index of |fn| in the function table, or -1 */
  const char *plugin; /* the plugin's file name ("libmyops.so"), or NULL */
} mlc_rt_extern_desc;

/* 1 when |s| may name a plugin: a plain file name (printable ASCII, no
** space, no '/', not empty, not "." or ".."), so a model can only name a
** file the runtime looks for in the places it chooses. */
static inline int mlc_rt_plain_file_name(const char *s) {
  if (!s || !*s || (s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2])))) return 0;
  for (; *s; s++)
    if (*s <= 0x20 || *s >= 0x7f || *s == '/') return 0;
  return 1;
}

typedef struct mlc_rt_model_desc {
  uint32_t abi_version; /* MLC_RT_DESC_VERSION */
  uint32_t kernel_abi;  /* MLC_RT_ABI_VERSION of rt_abi.h the kernels follow */
  const char *name;     /* model name */
  const char *manifest; /* JSON text for inspect (options, kernels, plan); may be NULL */

  int32_t nsyms;
  const char *const *sym_names; /* nsyms names, e.g. "batch" */
  const mlc_rt_sym_def *sym_defs; /* nsyms entries, or NULL: every symbol free */

  int32_t ntensors;
  const mlc_rt_tensor_desc *tensors;

  int32_t ninputs;
  const mlc_rt_io_desc *inputs;
  int32_t noutputs;
  const mlc_rt_io_desc *outputs;

  int32_t nstorages; /* ARENA storage ids are 0..nstorages-1 */

  int32_t nsteps;
  const mlc_rt_step_desc *steps;

  int32_t nexterns; /* the registry EXTERN steps are resolved from */
  const mlc_rt_extern_desc *externs;

  /* The plugin libraries the externs name, each once (filled by the
  ** decoder; the encoder reads the externs' |plugin| instead). */
  int32_t nplugins;
  const char *const *plugins;

  int32_t nkernels; /* summary for inspect: the generated kernels' names */
  const char *const *kernel_names;

  /* Where the model runs: kDLCPU, or kDLCUDA (every tensor but the
  ** inputs and outputs the caller sees lives in device memory, and the
  ** kernels launch device code through mlc_rt_api.cuda_launch). */
  int32_t device;
  const uint8_t *weights; /* the constants blob, 64-byte aligned; NULL if empty */
  uint64_t weights_size;
} mlc_rt_model_desc;

#endif /* MLC_RUNTIME_RT_MODEL_H */
