/*
** rt_int.h: the runtime's private interface, for the runtime sources only (and the
** runtime's unit test).
**
** model.c validates a description (rt_model.h) into an mlc_rt_model;
** session.c runs it; threadpool.c runs parallel loops; entry.c puts them in
** the exported table (rt_entry.h).  Every function here is hidden inside a
** model.so.  Errors are mlc_rt_status codes plus a message written with
** mlc_rt_errorf.
*/
#ifndef MLC_RUNTIME_RT_INT_H
#define MLC_RUNTIME_RT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "mlc/mlc_runtime.h"
#include "runtime/rt_abi.h"
#include "runtime/rt_alloc.h"
#include "runtime/rt_entry.h"
#include "runtime/rt_model.h"

/* Alignment of the arena, of each storage in it, and of outputs and workspaces. */
#define MLC_RT_ALIGN 64

/* ---- messages ----------------------------------------------------------- */

/* Formats into |buf| (|len| bytes; nothing if NULL/0) and returns |st|. */
mlc_rt_status mlc_rt_errorf(char *buf, size_t len, mlc_rt_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes "float32", "int64", "uint8x4", ... for |t| into |buf| (|len| bytes). */
void mlc_rt_dtype_str(DLDataType t, char *buf, size_t len);

/* ---- the opened model (model.c) ----------------------------------------- */

/* Handle tags, set when a handle is created and cleared when it is freed,
** so a call on a foreign or freed handle is refused where that is
** detectable (see mlc_runtime.h on the limits). */
#define MLC_RT_MODEL_MAGIC 0x4d6c6352u   /* "RcLM" */
#define MLC_RT_SESSION_MAGIC 0x536c6352u /* "RclS" */

struct mlc_rt_model {
  uint32_t magic;            /* MLC_RT_MODEL_MAGIC while open */
  const mlc_rt_model_desc *desc;
  mlc_rt_model_desc *owned_desc; /* freed on close (a decoded blob), or NULL */
  mlc_rt_allocator alloc;    /* of the model, its sessions and their pools */
  mlc_kernel_fn *step_fns;   /* nsteps: kernels and resolved externs */
  int64_t *arg_start;        /* nsteps + 1: offsets into the flattened args */
  int32_t *arg_codes;        /* all steps' MLC_ARG_* codes, flattened */
  int64_t nargs_total;
  int64_t nimms;             /* immediates among the args */
  int64_t nshape_total;      /* sum of the tensors' ranks */
  int32_t *sym_input;        /* nsyms: an input that binds each symbol ... */
  int32_t *sym_dim;          /* ... and the dim of it (-1, -1: run-bound) */
  /* run-bound symbols (BIND_SYMS steps) */
  int32_t *sym_bind_step;    /* nsyms: the step that defines it, -1: input-bound */
  int32_t *sym_ready;        /* nsyms: the BIND_SYMS step after which its value is
                             ** known (a derived symbol: its operands'), -1: at the start */
  unsigned char *tensor_run; /* ntensors: 1 when a dim is run-bound */
  unsigned char *tensor_late;/* ntensors: 1 when allocated at its first step */
  int32_t *tensor_first;     /* ntensors: first step naming it, -1: none */
  unsigned char *storage_late; /* nstorages: 1 when sized step by step */
  unsigned char *step_dyn;   /* nsteps: names a tensor with run-bound dims */
  unsigned char *step_lib;   /* nsteps: calls an external library (not a "mlc.*" built-in) */
  int has_run_syms;
  int has_bounds;            /* some input-bound symbol has a bound */
  int has_derived;           /* some symbol is derived (mlc_rt_sym_def) */
  int has_cf;                /* the model has run-time control flow steps (IF ... LOOP_END) */
  void **plugins;            /* desc->nplugins handles of the plugin libraries */
  mlc_kernel_fn *extern_fns; /* desc->nexterns: a plugin's functions, resolved at open */
  const char *devcode;       /* a CUDA model's PTX (NUL-terminated), set by entry.c; else NULL */
};

/*
** Validates |desc| (borrowed; must outlive the model) and resolves its
** external steps.  On success *|out| is transferred to the caller (close
** with mlc_rt_model_close); on failure the reason is written to |err|.
*/
mlc_rt_status mlc_rt_model_open(const mlc_rt_model_desc *desc, mlc_rt_model **out, char *err,
                                size_t errlen);
/* As mlc_rt_model_open, allocating through |a| (copied; NULL = the C library). */
mlc_rt_status mlc_rt_model_open_with(const mlc_rt_model_desc *desc, const mlc_rt_allocator *a,
                                     mlc_rt_model **out, char *err, size_t errlen);
/* 1 when |kind| is a run-time control flow step (IF ... LOOP_END). */
static inline int mlc_rt_step_is_cf(int32_t kind) {
  return kind >= MLC_RT_STEP_IF && kind <= MLC_RT_STEP_LOOP_END;
}

/* Releases |m| (NULL-safe). */
void mlc_rt_model_close(mlc_rt_model *m);

/* Accessors behind the entry table; neutral values for NULL or bad indices
** (see mlc_runtime.h).  Strings are borrowed from the description. */
const char *mlc_rt_model_name(const mlc_rt_model *m);
const char *mlc_rt_model_manifest(const mlc_rt_model *m);
int32_t mlc_rt_model_num_io(const mlc_rt_model *m, int output);
const char *mlc_rt_model_io_name(const mlc_rt_model *m, int output, int32_t i);
DLDataType mlc_rt_model_io_dtype(const mlc_rt_model *m, int output, int32_t i);
int32_t mlc_rt_model_io_ndim(const mlc_rt_model *m, int output, int32_t i);
int64_t mlc_rt_model_io_dim(const mlc_rt_model *m, int output, int32_t i, int32_t d);
const char *mlc_rt_model_io_dim_name(const mlc_rt_model *m, int output, int32_t i, int32_t d);
int32_t mlc_rt_model_num_symbols(const mlc_rt_model *m);
/* 1 when input |i| has a default value (0 otherwise or for a bad argument). */
int32_t mlc_rt_model_input_has_default(const mlc_rt_model *m, int32_t i);
const char *mlc_rt_model_symbol_name(const mlc_rt_model *m, int32_t k);

/* Bytes of |numel| elements of |t| into *|out|; 0 ok, -1 on overflow. */
int mlc_rt_nbytes(DLDataType t, uint64_t numel, uint64_t *out);

/*
** Element count and bytes of a tensor of dtype |t| and the |ndim| dims
** |shape| into *|numel| and *|nbytes| (either may be NULL).  0 when every
** dim is >= 0, the product of the nonzero dims (so every row-major stride,
** even of an empty tensor) fits in int64 and so do the bytes; -1 for a
** negative dim (its index in *|bad|, may be NULL), -2 when a product
** overflows.
*/
int mlc_rt_shape_size(DLDataType t, const int64_t *shape, int32_t ndim, uint64_t *numel,
                      uint64_t *nbytes, int32_t *bad);

/* ---- built-in functions (shapefn.c) ------------------------------------- */

/* The runtime's own function named |name| ("mlc.reshape_dims", ...), or
** NULL when |name| names none. */
mlc_kernel_fn mlc_rt_builtin_find(const char *name);

/* ---- plugins (plugin.c) ------------------------------------------------- */

/*
** Loads the plugins |d| names (d->plugins) into |handles| (nplugins
** entries, NULL-initialized; close them with mlc_rt_plugins_close even on
** failure) and resolves each extern of a plugin into |fns| (nexterns
** entries).  Errors name the model, the plugin, the places tried and the
** function.
*/
mlc_rt_status mlc_rt_plugins_load(const mlc_rt_model_desc *d, void **handles, mlc_kernel_fn *fns, char *err,
                                  size_t errlen);
void mlc_rt_plugins_close(void **handles, int32_t n);

/* ---- sessions (session.c) ----------------------------------------------- */

/*
** Creates a session of |m| (borrowed; must outlive the session) with
** |num_threads| threads (0 = online CPUs).  *|out| transferred; errors to |err|.
*/
mlc_rt_status mlc_rt_session_create(const mlc_rt_model *m, int32_t num_threads,
                                    mlc_rt_session **out, char *err, size_t errlen);
/* Releases |s| and joins its threads (NULL-safe). */
void mlc_rt_session_free(mlc_rt_session *s);
/* The API operations; see mlc_runtime.h for their contracts. */
mlc_rt_status mlc_rt_session_set_input(mlc_rt_session *s, int32_t index, const DLTensor *t);
mlc_rt_status mlc_rt_session_set_input_by_name(mlc_rt_session *s, const char *name,
                                               const DLTensor *t);
mlc_rt_status mlc_rt_session_run(mlc_rt_session *s);
mlc_rt_status mlc_rt_session_get_output(mlc_rt_session *s, int32_t index, const DLTensor **out);
mlc_rt_status mlc_rt_session_get_output_device(mlc_rt_session *s, int32_t index, const DLTensor **out);
const char *mlc_rt_session_last_error(const mlc_rt_session *s);
mlc_rt_status mlc_rt_session_set_profiling(mlc_rt_session *s, int enable);
int32_t mlc_rt_session_profile(const mlc_rt_session *s, int32_t i, const char **name, const char **node,
                               double *ms);
/* Threads the session runs loops on, the caller included (>= 1; 0 for NULL). */
int32_t mlc_rt_session_num_threads(const mlc_rt_session *s);
/* The session's kernel context (borrowed), for calling kernels by hand. */
mlc_rt_ctx *mlc_rt_session_ctx(mlc_rt_session *s);

/* ---- thread pool (threadpool.c) ----------------------------------------- */

typedef struct mlc_rt_pool mlc_rt_pool;

/*
** Resolves a num_threads option: 0 -> online CPUs; clamped to [1, 1024].
** -1 for a negative request.
*/
int32_t mlc_rt_pool_resolve_threads(int32_t requested);

/*
** Starts a pool running loops on |nthreads| threads, the caller included
** (so nthreads - 1 workers; 1 = none, loops run inline).  *|out| is
** transferred (destroy with mlc_rt_pool_destroy).  Returns 0, or an errno
** value when a thread or the memory could not be had.
*/
int mlc_rt_pool_create(int32_t nthreads, mlc_rt_pool **out);
/* As mlc_rt_pool_create, allocating through |a| (copied; NULL = the C library). */
int mlc_rt_pool_create_with(const mlc_rt_allocator *a, int32_t nthreads, mlc_rt_pool **out);
/* Wakes and joins the workers and frees |p| (NULL-safe). No loop may be running. */
void mlc_rt_pool_destroy(mlc_rt_pool *p);
/* Threads of |p|, the caller included (1 for NULL). */
int32_t mlc_rt_pool_threads(const mlc_rt_pool *p);
/* |idle| 1: the workers stop watching for the next loop and sleep until it
** comes, leaving the cores to something else (an external library's own
** threads); 0: they watch again after each loop. */
void mlc_rt_pool_idle(mlc_rt_pool *p, int idle);
/*
** Runs |body| over [0, |n|) split into contiguous chunks on |p|'s threads
** and the calling thread; returns 0 or the nonzero result of the lowest
** failing chunk (chunks after a failed one are skipped, every chunk before
** it runs, so the lowest failing chunk holds the first failing iteration).
** Runs serially as body(0, n) when |p| is NULL or has no workers, when
** called from inside a body (nesting), or when |p| is busy with another
** caller.
*/
int mlc_rt_pool_run(mlc_rt_pool *p, int64_t n, mlc_rt_parallel_body body, void *closure);
/*
** mlc_rt_pool_run whose chunks are whole runs of |grain| iterations when
** |grain| divides |n| and the runs number at least POOL_GRAIN_MIN_UNITS
** per thread; else exactly mlc_rt_pool_run.
*/
int mlc_rt_pool_run_grain(mlc_rt_pool *p, int64_t n, int64_t grain, mlc_rt_parallel_body body,
                          void *closure);
/*
** The chunk of the parallel loop the calling thread runs a body of (chunks
** are numbered in loop order; a serial run is chunk 0), or -1 outside any
** body.  Lets errors raised by bodies be ordered as a serial run would.
*/
int64_t mlc_rt_pool_current_chunk(void);

#endif /* MLC_RUNTIME_RT_INT_H */
