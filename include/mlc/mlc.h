/*
** mlc.h: the compiler library's public API.
**
** Everything a program needs to drive mlc-onnx as a library: status values,
** and (as the compile path grows) the compiler entry points.  Handles are
** opaque; ownership of every pointer is stated on each function.
*/
#ifndef MLC_MLC_H
#define MLC_MLC_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MLC_API __attribute__((visibility("default")))
#define MLC_MUST_USE __attribute__((warn_unused_result))
#else
#define MLC_API
#define MLC_MUST_USE
#endif

/* Canonical error codes. MLC_OK is 0. */
typedef enum mlc_code {
  MLC_OK = 0,
  MLC_INVALID_ARGUMENT = 1, /* the input (model, option, tensor) is wrong */
  MLC_UNIMPLEMENTED = 2,    /* valid, but not supported by this build */
  MLC_OUT_OF_RANGE = 3,     /* a size, index or offset is out of bounds */
  MLC_RESOURCE_EXHAUSTED = 4, /* out of memory */
  MLC_INTERNAL = 5,         /* a bug: an invariant did not hold */
  MLC_NOT_FOUND = 6,        /* a named thing (file, input, function) is absent */
  MLC_IO_ERROR = 7          /* reading or writing a file failed */
} mlc_code;

/*
** A status: NULL means success; anything else is an error that carries a
** code and a message.  A non-NULL status is owned by whoever receives it and
** must be released with mlc_status_free (NULL-safe).
*/
typedef struct mlc_status_s *mlc_status;

/* The code of |s| (MLC_OK for NULL). |s| is borrowed. */
MLC_API mlc_code mlc_status_code(mlc_status s);
/* The message of |s| ("" for NULL); borrowed, valid until |s| is freed. */
MLC_API const char *mlc_status_message(mlc_status s);
/* Short upper-case name of |code|, e.g. "INVALID_ARGUMENT". Static storage. */
MLC_API const char *mlc_code_name(mlc_code code);
/* Releases |s|. NULL-safe. */
MLC_API void mlc_status_free(mlc_status s);

/* ---- inspecting models -------------------------------------------------- */

typedef enum mlc_inspect_format {
  MLC_INSPECT_TEXT, /* human-readable summary */
  MLC_INSPECT_JSON, /* the same facts as one JSON object */
  MLC_INSPECT_IR,   /* the graph IR after import, TVMScript-like */
  MLC_INSPECT_DOT   /* Graphviz dot of the main graph function */
} mlc_inspect_format;

/*
** Describes the model at |path| (.onnx) in |fmt|.  On success *|out_text| is
** a NUL-terminated string transferred to the caller (free with
** mlc_string_free).  Errors name the node, op and problem; an unsupported
** model gives one error listing every unsupported op, attribute or dtype.
*/
MLC_API MLC_MUST_USE mlc_status mlc_inspect_file(const char *path, mlc_inspect_format fmt,
                                                 char **out_text);

/* ---- compiling models --------------------------------------------------- */

typedef struct mlc_compile_options {
  /* Code generation target: NULL or "llvm" for the host CPU (its features,
  ** e.g. AVX-512, are used), or "llvm -mcpu=NAME [-mattr=+f1,-f2]
  ** [-mtriple=T]".  Borrowed. */
  const char *target;
  /* Directory that receives the IR after each stage (created if missing);
  ** NULL: none.  Borrowed. */
  const char *dump_ir_dir;
  /* Where to write the C header describing the model; NULL: the output path
  ** with its extension replaced by ".h"; "" for no header.  Borrowed. */
  const char *header_path;
  /* Called with one line per stage (progress); NULL: quiet. */
  void (*progress)(void *user, const char *line);
  void *progress_user;
  /* Nonzero: also one progress line per step within the stages (setup,
  ** load, import, each graph pass, legalize, schedule, plan_memory,
  ** codegen, archive) with its wall-clock and CPU time. */
  int verbose;
  /* Nonzero: the model's weights (ONNX initializers) stay inputs of the
  ** compiled model's API instead of constants bound into it, so one library
  ** serves several weight sets (no folding into them, no packing); each
  ** such input has its initializer as its default value
  ** (mlc_model_input_has_default), so a caller sets only those it
  ** changes. */
  int params_as_inputs;
  /* Nonzero: switch a group of graph passes off, to measure what it brings:
  ** fold (BatchNormalization into convolutions, simplify, cse), fuse
  ** (fused kernels), layout (blocked NCHW[x]c convolutions). */
  int no_fold, no_fuse, no_layout;
  /* External libraries the dispatcher may send ops to: NULL or "none"
  ** (generated code only), "auto" (every library this build has; for each
  ** op it can take, the generated kernel and each library are timed at
  ** compile time on the op's shapes and the fastest is kept), or a
  ** comma-separated list in order of preference ("openblas,onednn": the
  ** first that takes an op gets it).  Borrowed. */
  const char *extern_libs;
  /* Plugin libraries (mlc/mlc_extern.h) whose functions the dispatcher
  ** sends their ops to, before any other library: |nextern_plugins| paths,
  ** borrowed.  The model records each plugin's file name and loads it at
  ** run time, unless |link_extern_plugins| links them into the library. */
  const char *const *extern_plugins;
  int nextern_plugins;
  int link_extern_plugins;
  /* "auto": the file that caches measured times (NULL: $MLC_EXTERN_CACHE,
  ** else $XDG_CACHE_HOME/mlc-onnx/extern-times.txt, else
  ** ~/.cache/mlc-onnx/extern-times.txt; "" for none).  Borrowed. */
  const char *extern_cache;
  /* Shapes of graph inputs, each "NAME=1x3x640x640": an extent per dim, or
  ** a name that keeps the dim symbolic under that name ("x=1x3xHxW"); dims
  ** separated by 'x', or by ',' (needed when a name holds an x).  A dim the
  ** model names (a dim_param) is pinned on every input that has it.
  ** |ninput_shapes| strings, borrowed. */
  const char *const *input_shapes;
  int ninput_shapes;
  /* Upper bounds of symbolic dims, "H=2048,W=2048": the arena is planned
  ** once for them (compile reports its size) and a larger input is refused
  ** when the model runs.  NULL: none.  Borrowed. */
  const char *shape_bounds;
  /* A graph input that is also an initializer is, in ONNX, an input whose
  ** initializer is a default the caller may override.  0 (default): such
  ** an input stays an input of the compiled model with the initializer as
  ** its default value (nothing is folded through it), when the model's IR
  ** version is 4 or later and the initializer is floating-point and sizes
  ** no output; the others (integer ones such as shapes and axes, Resize's
  ** scales) are constants.  Nonzero: every such input is a constant, as
  ** fast as any weight (folded, packed), and the compiled model has no
  ** such input: for exporters that list every weight as an input
  ** (PyTorch's keep_initializers_as_inputs).  --params-as-inputs keeps
  ** floating-point weights inputs whatever this says. */
  int fold_default_inputs;
  /* A tuning log (mlc_tune_file): each kernel whose task has records for
  ** this target and CPU gets the schedule of its fastest record (its trace
  ** replayed); kernels without one, or whose record no longer replays
  ** (reported), keep the default schedule.  NULL: none.  Borrowed. */
  const char *tune_log;
} mlc_compile_options;

/* Fills |o| with the defaults (host target, no dumps, header next to the .so). */
MLC_API void mlc_compile_options_init(mlc_compile_options *o);

/*
** Compiles the ONNX model at |onnx_path| into the shared library |out_so|
** (kernels, weights, execution plan and runtime in one file; load it with
** mlc/mlc_runtime.h).  |opts| may be NULL (defaults).  Errors name the node,
** op and problem; an unsupported model lists every unsupported feature.
** The same model and options give a byte-identical library.
*/
MLC_API MLC_MUST_USE mlc_status mlc_compile_file(const char *onnx_path, const char *out_so,
                                                 const mlc_compile_options *opts);

/* ---- tuning ---------------------------------------------------------------- */

typedef struct mlc_tune_options {
  /* As mlc_compile_options.target (CPU targets only).  Borrowed. */
  const char *target;
  /* Measured candidates in all, the log's records of the model's tasks
  ** included (so a second run with the same number resumes an
  ** interrupted one); 0: 32 per task. */
  int trials;
  /* Wall-clock budget in seconds (0: none): the search stops when it is
  ** spent, with what it found in the log. */
  double budget_s;
  /* Threads each kernel runs on when measured (default 1). */
  int threads;
  /* Seeds every random choice of the search (default 1). */
  uint64_t seed;
  /* Candidates built at once (child processes); 0: one per CPU. */
  int jobs;
  /* Each measurement calls the kernel for at least |min_ms| ms (default
  ** 5); |repeats| measurements (default 5), the median kept; a candidate
  ** running past |timeout_s| seconds (default 10) fails. */
  double min_ms;
  int repeats;
  double timeout_s;
  /* One line per step of the search (NULL: quiet). */
  void (*progress)(void *user, const char *line);
  void *progress_user;
  /* Polled: nonzero stops the search soon (e.g. set by a SIGINT handler);
  ** what was measured is in the log.  NULL: never.  Borrowed. */
  volatile const int *stop;
} mlc_tune_options;

/* Fills |o| with the defaults above. */
MLC_API void mlc_tune_options_init(mlc_tune_options *o);

/*
** Tunes the kernels of the ONNX model at |onnx_path| for the target:
** searches the schedules of each distinct kernel (the default rules with
** their parameters sampled, ranked by a cost model trained on the
** measurements, each measured in a child process) and appends every
** measurement to the log |log_path| (JSON lines; created if missing; an
** existing log is read first and its records of the model's kernels
** count as trials already done).  `compile` with the log
** (mlc_compile_options.tune_log) applies the fastest schedule of each
** kernel.  |opts| may be NULL (defaults).
*/
MLC_API MLC_MUST_USE mlc_status mlc_tune_file(const char *onnx_path, const char *log_path,
                                              const mlc_tune_options *opts);

/* ---- schedules ----------------------------------------------------------- */

/* mlc_schedule_file flags. */
enum {
  MLC_SCHEDULE_PRINT_TRACE = 1 /* append the applied trace, as comment lines */
};

/*
** Experimenting with TensorIR schedules: reads the prim function(s) in the
** TIR text file |tir_path| (as `compile --dump-ir` writes them), takes the
** one named |func| (NULL: the file must hold exactly one), applies the
** schedule trace in the file |trace_path| (NULL: none; one primitive per
** line, e.g. `l1, l2 = sch.split(loop=l0, factors=[None, 4])`) and returns
** in *|out_text| (transferred; mlc_string_free) the scheduled function as
** TIR text.  A primitive that refuses (it would change what the function
** computes) is an error naming the trace line, the primitive and why.
*/
MLC_API MLC_MUST_USE mlc_status mlc_schedule_file(const char *tir_path, const char *func, const char *trace_path,
                                                  int flags, char **out_text);

/* ---- tensors in files ---------------------------------------------------- */

/*
** Reads a tensor from a NumPy .npy file or a serialized ONNX TensorProto
** (.pb), chosen by the file's content.  *|out| is transferred: free it with
** mlc_tensor_free.  The data is 64-byte aligned, on the CPU.
*/
MLC_API MLC_MUST_USE mlc_status mlc_tensor_read_file(const char *path, DLTensor **out);
/* Writes |t| (borrowed, compact, on the CPU) as the .npy file |path|, as
** mlc_file_write writes a file (a symbolic link or a file that is not a
** regular one at |path| is refused; the file is replaced atomically). */
MLC_API MLC_MUST_USE mlc_status mlc_tensor_write_npy(const char *path, const DLTensor *t);
/* A tensor of |dtype| and |shape| (copied) filled from a seeded generator:
** floats uniform in [-1, 1), integers in [0, 10), bools 0/1.  *|out|
** transferred (mlc_tensor_free). */
MLC_API MLC_MUST_USE mlc_status mlc_tensor_random(DLDataType dtype, int ndim, const int64_t *shape,
                                                  uint64_t seed, DLTensor **out);
/* Frees a tensor returned by the functions above. NULL-safe. */
MLC_API void mlc_tensor_free(DLTensor *t);

/* ---- writing files ------------------------------------------------------ */

/*
** Writes |n| bytes of |data| (borrowed) to |path| as the library writes every
** output: into a new temporary file in |path|'s folder, which then replaces
** |path| atomically (mode 0644 less the umask).  Refused with
** MLC_INVALID_ARGUMENT, naming the path: a |path| that is a symbolic link
** (never followed), that exists and is not a regular file (a directory,
** device, FIFO or socket), or that is the same file as |input| (borrowed;
** NULL: none), compared by device and inode, so another spelling of it or a
** hard link is caught.  On error |path| is as it was and no temporary file
** is left.
*/
MLC_API MLC_MUST_USE mlc_status mlc_file_write(const char *path, const void *data, size_t n,
                                               const char *input);
/*
** Creates the directory |dir| (borrowed) for output files, and its missing
** parents, with mode 0755 less the umask; an existing directory is fine.
** Refused with MLC_INVALID_ARGUMENT: a |dir| that is a symbolic link, or
** that exists and is not a directory (folders above it are taken as given).
*/
MLC_API MLC_MUST_USE mlc_status mlc_dir_create(const char *dir);

/* Frees a string returned by the library. NULL-safe. */
MLC_API void mlc_string_free(char *s);

/* The library's version string, e.g. "0.1.0". Static storage. */
MLC_API const char *mlc_version(void);

#ifdef __cplusplus
}
#endif
#endif /* MLC_MLC_H */
