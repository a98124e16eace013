/*
** mlc_runtime.h: the deployment API, the only header a program that runs a
** compiled model needs.
**
** A compiled model is one shared object (model.so) holding generated code,
** weights, the execution plan and its own copy of the runtime.  It exports a
** single versioned entry, mlc_model_entry_v1, that returns a table of the
** functions below; everything else in it is hidden.  The functions declared
** here live in the small loader library (libmlcload, which depends on libdl
** only): mlc_model_load dlopens a model with RTLD_LOCAL, checks the entry's
** ABI version and forwards every later call through that model's table, so
** several models compiled at different times can live in one process.
**
** A program that links one model.so directly (no dlopen) still links the
** loader and opens the model with:
**
**   mlc_model *m;
**   mlc_rt_status st = mlc_model_open_entry(mlc_model_entry_v1(), &m, err, sizeof err);
**
** Usage:
**
**   mlc_model *m;      mlc_model_load("model.so", &m, err, sizeof err);
**   mlc_session *s;    mlc_session_create(m, NULL, &s);     (one per thread)
**   mlc_session_set_input(s, 0, &x);                        (x: a DLTensor)
**   mlc_session_run(s);
**   const DLTensor *y; mlc_session_get_output(s, 0, &y);
**   mlc_session_free(s); mlc_model_free(m);
**
** Rules: every function checks its arguments (NULL handles are errors, never
** crashes) and reports failures as an mlc_rt_status with a message; every
** input tensor is validated against the model's signature; a model is
** read-only after loading, so sessions of one model may run concurrently on
** different threads (one session is used by one thread at a time).
** Tensors are DLPack DLTensors on the CPU, compact row-major.
**
** Files: mlc_model_load checks a model.so from its bytes before it loads
** it (an ELF shared object for this host, complete, with a model
** description that decodes), so a truncated, damaged or foreign file is an
** error naming the file, and no code of such a file runs.  The check and
** the load open the file twice: a file changed in between is not covered.
**
** Handles: a model or session handle carries a tag set when it is created
** and cleared when it is freed.  A call on memory that is not a handle of
** that kind (e.g. zeroed memory), or on a handle already freed, returns
** MLC_RT_INVALID_ARGUMENT (or the neutral value of an accessor) and sets
** mlc_model_last_error(); freeing it again is refused the same way instead
** of freeing twice.  This is best-effort: a freed handle's memory is kept,
** tag cleared, until 64 more handles have been freed, and only a handle in
** that window is recognized as freed; using a handle after that is
** undefined, as is passing a pointer to memory that is not readable.
*/
#ifndef MLC_MLC_RUNTIME_H
#define MLC_MLC_RUNTIME_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MLC_API
#if defined(__GNUC__)
#define MLC_API __attribute__((visibility("default")))
#else
#define MLC_API
#endif
#endif

/* A loaded model: read-only, shareable between threads. */
typedef struct mlc_model mlc_model;
/* One instance of a model: its own memory, threads and bound inputs. */
typedef struct mlc_session mlc_session;
/* The function table a model.so exports (layout private to the runtime). */
typedef struct mlc_rt_entry mlc_rt_entry;

/* Status codes. MLC_RT_OK is 0; every other value comes with a message. */
typedef enum mlc_rt_status {
  MLC_RT_OK = 0,
  MLC_RT_INVALID_ARGUMENT = 1, /* a NULL handle, bad index, or a tensor that does not fit */
  MLC_RT_NOT_FOUND = 2,        /* a file, name or external function is absent */
  MLC_RT_OUT_OF_MEMORY = 3,    /* an allocation failed */
  MLC_RT_RUNTIME_ERROR = 4,    /* a kernel failed, or a thread could not start */
  MLC_RT_ABI_MISMATCH = 5      /* the model was built for another runtime ABI */
} mlc_rt_status;

/* Short upper-case name of |st|, e.g. "INVALID_ARGUMENT". Static storage. */
MLC_API const char *mlc_rt_status_name(mlc_rt_status st);

/* ---- memory ------------------------------------------------------------- */

/*
** An allocator: realloc(self, p, old_size, new_size) allocates |new_size|
** bytes when |p| is NULL, frees |p| and returns NULL when |new_size| is 0,
** and returns NULL when it cannot allocate.  The runtime only allocates and
** frees (never resizes), always with |old_size| 0; blocks need the
** alignment of malloc's.
*/
typedef struct mlc_rt_allocator {
  void *self;
  void *(*realloc)(void *self, void *p, size_t old_size, size_t new_size);
} mlc_rt_allocator;

/*
** Makes |a| (copied; NULL = the C library's malloc and free, the default)
** the allocator of the loader and of every model loaded or opened after
** the call: such a model, its sessions and their thread pools take all
** their memory from it, and keep it until they are freed (models opened
** before keep theirs).  Not synchronized with loads on other threads: call
** it before them.  What the C library allocates on its own (dlopen, thread
** stacks) does not go through it.
*/
MLC_API void mlc_rt_set_allocator(const mlc_rt_allocator *a);

/* ---- models ------------------------------------------------------------- */

/*
** Loads the compiled model at |path| (a path without '/' means the current
** directory, never a library search).  On success *|out| is a model
** transferred to the caller (free with mlc_model_free).  On failure *|out|
** is NULL and the message is written to |err| (|errlen| bytes, may be NULL/0)
** and kept as mlc_model_last_error().  |path| is borrowed.
*/
MLC_API mlc_rt_status mlc_model_load(const char *path, mlc_model **out, char *err,
                                     size_t errlen);

/*
** Opens the model whose entry table is |entry|, for programs that link a
** model.so directly: mlc_model_open_entry(mlc_model_entry_v1(), &m, ...).
** |entry| is borrowed (static storage of the model); the rest is as for
** mlc_model_load.
*/
MLC_API mlc_rt_status mlc_model_open_entry(const mlc_rt_entry *entry, mlc_model **out,
                                           char *err, size_t errlen);

/*
** The entry every model.so exports (defined by the model, not the loader).
** Returns its table, static storage.  Declared here for programs that link
** one model directly.
*/
MLC_API const mlc_rt_entry *mlc_model_entry_v1(void);

/*
** The message of the last failed mlc_model_load, mlc_model_open_entry or
** mlc_session_create on the calling thread ("" if none).  Thread-local
** storage, valid until the next such call on this thread.
*/
MLC_API const char *mlc_model_last_error(void);

/*
** Releases |m| (NULL-safe).  Sessions created from |m| keep it alive: the
** shared object is unloaded when the model and all its sessions are freed.
** |m| must not be used afterwards; a second free is refused (see Handles
** above).
*/
MLC_API void mlc_model_free(mlc_model *m);

/* The model's name; "" for NULL.  Borrowed from |m|. */
MLC_API const char *mlc_model_name(const mlc_model *m);
/* The compiler's manifest (JSON text: options, kernels, memory plan); "" for NULL.  Borrowed. */
MLC_API const char *mlc_model_manifest(const mlc_model *m);

/* Number of inputs / outputs; 0 for NULL. */
MLC_API int32_t mlc_model_num_inputs(const mlc_model *m);
MLC_API int32_t mlc_model_num_outputs(const mlc_model *m);

/* Name of input / output |i|; NULL for a NULL model or bad index.  Borrowed from |m|. */
MLC_API const char *mlc_model_input_name(const mlc_model *m, int32_t i);
MLC_API const char *mlc_model_output_name(const mlc_model *m, int32_t i);

/* Index of the input / output called |name| (borrowed); -1 if none. */
MLC_API int32_t mlc_model_input_index(const mlc_model *m, const char *name);
MLC_API int32_t mlc_model_output_index(const mlc_model *m, const char *name);

/*
** Element type of input / output |i|; {0, 0, 0} (bits 0) for a NULL model
** or bad index.
*/
MLC_API DLDataType mlc_model_input_dtype(const mlc_model *m, int32_t i);
MLC_API DLDataType mlc_model_output_dtype(const mlc_model *m, int32_t i);

/* Rank of input / output |i|; -1 for a NULL model or bad index. */
MLC_API int32_t mlc_model_input_ndim(const mlc_model *m, int32_t i);
MLC_API int32_t mlc_model_output_ndim(const mlc_model *m, int32_t i);

/*
** Size of dimension |d| of input / output |i|: >= 0 when static, -1 when
** symbolic (bound at run time from the inputs; see ..._dim_name) or when an
** argument is bad.
*/
MLC_API int64_t mlc_model_input_dim(const mlc_model *m, int32_t i, int32_t d);
MLC_API int64_t mlc_model_output_dim(const mlc_model *m, int32_t i, int32_t d);

/*
** Name of the symbolic dimension at dimension |d| of input / output |i|
** (e.g. "batch"); NULL when that dimension is static or an argument is bad.
** Borrowed from |m|.
*/
MLC_API const char *mlc_model_input_dim_name(const mlc_model *m, int32_t i, int32_t d);
MLC_API const char *mlc_model_output_dim_name(const mlc_model *m, int32_t i, int32_t d);

/*
** 1 when input |i| has a default value, 0 when it has none or an argument
** is bad.  An ONNX graph input that is also an initializer is compiled into
** such an input (see `mlc-onnx compile --help`): its initializer, stored in
** the model, is the value a run uses unless the caller sets the input.  Its
** dims are all static.
*/
MLC_API int32_t mlc_model_input_has_default(const mlc_model *m, int32_t i);

/* Number of symbolic dimensions, and the name of symbol |k| (borrowed; NULL if bad). */
MLC_API int32_t mlc_model_num_symbols(const mlc_model *m);
MLC_API const char *mlc_model_symbol_name(const mlc_model *m, int32_t k);

/* ---- sessions ----------------------------------------------------------- */

/*
** Session options.  Zero-initialize, then set what you need; a NULL options
** pointer means all defaults.
*/
typedef struct mlc_session_options {
  /* Threads that run a session's parallel loops, the calling thread
  ** included: 0 = one per online CPU (default), 1 = no extra threads. */
  int32_t num_threads;
} mlc_session_options;

/*
** Creates a session of |m| (borrowed; kept alive by the session) with
** |opts| (borrowed, NULL = defaults).  On success *|out| is transferred to
** the caller (free with mlc_session_free); on failure it is NULL and the
** message is mlc_model_last_error().
*/
MLC_API mlc_rt_status mlc_session_create(const mlc_model *m, const mlc_session_options *opts,
                                         mlc_session **out);

/* Stops the session's threads and releases it and its memory (NULL-safe);
** a second free is refused (see Handles above). */
MLC_API void mlc_session_free(mlc_session *s);

/*
** Binds input |index| to |t|.  The DLTensor struct and its shape are copied
** (it need not outlive the call); its data is borrowed, not copied, and must
** stay valid and unchanged while any later mlc_session_run uses it.  Checks
** device (kDLCPU; for a model compiled for CUDA also kDLCUDA: device
** memory of the session's GPU, used where it is, not copied), dtype, rank, each static dimension, non-negative sizes,
** compact row-major strides (NULL or compact), non-NULL data unless empty,
** and element alignment.  An input stays bound for later runs until it is
** set again.  On error the input is left unbound.
**
** Defaults: an input with a default (mlc_model_input_has_default) is bound
** to its default when the session is created; setting it overrides the
** default, and passing NULL for |t| binds it to its default again (for an
** input without a default, NULL is an error).  A default is used where it
** is stored, not copied.
*/
MLC_API mlc_rt_status mlc_session_set_input(mlc_session *s, int32_t index, const DLTensor *t);
/* As mlc_session_set_input, by input name (borrowed); MLC_RT_NOT_FOUND if none. */
MLC_API mlc_rt_status mlc_session_set_input_by_name(mlc_session *s, const char *name,
                                                    const DLTensor *t);

/*
** Runs the model on the bound inputs (every input must be bound: set, or
** at its default): binds the symbolic dimensions from the
** input shapes (inputs that disagree about one are an error), sizes the
** session's memory (grown only when the shapes need more, so repeated runs
** at the same shapes allocate nothing) and executes every step.  A failing
** step gives MLC_RT_RUNTIME_ERROR with "step N (node \"NAME\"): why".
*/
MLC_API mlc_rt_status mlc_session_run(mlc_session *s);

/*
** Output |index| of the last successful run.  *|out| is borrowed from |s|:
** the DLTensor (its data and shape) is owned by the session and valid until
** the next mlc_session_run or mlc_session_free.  Error if no run succeeded
** since the last one started.  For a model compiled for CUDA the tensor is
** a copy in host memory (kDLCPU), made at the first call after each run.
*/
MLC_API mlc_rt_status mlc_session_get_output(mlc_session *s, int32_t index,
                                             const DLTensor **out);

/*
** As mlc_session_get_output, but where the model computed it: for a model
** compiled for CUDA, the output in the session's device memory (kDLCUDA;
** no copy is made; valid until the next run or free), for a CPU model the
** same tensor as mlc_session_get_output.
*/
MLC_API mlc_rt_status mlc_session_get_output_device(mlc_session *s, int32_t index,
                                                    const DLTensor **out);

/*
** The message of the last failed call on |s| ("" if none).  Borrowed from
** |s|, valid until the next call on it.
*/
MLC_API const char *mlc_session_last_error(const mlc_session *s);

/*
** Profiling: with |enable| nonzero, every later successful run of |s| adds
** each step's wall-clock time (a generated kernel, an external library's
** call, a run-time shape step) to a total kept per step; turning it on
** again restarts the totals, |enable| 0 stops and drops them.
*/
MLC_API mlc_rt_status mlc_session_set_profiling(mlc_session *s, int enable);

/*
** The profile of |s|: returns the number of steps (0 when profiling is off
** or |s| is not a session) and, for 0 <= |i| < that number, step |i|'s
** function name (a kernel, "openblas.conv2d", ...), ONNX node and mean
** milliseconds per profiled run into the pointers that are not NULL (the
** strings borrowed from the model).
*/
MLC_API int32_t mlc_session_profile(const mlc_session *s, int32_t i, const char **name, const char **node,
                                    double *ms);

#ifdef __cplusplus
}
#endif

#endif /* MLC_MLC_RUNTIME_H */
