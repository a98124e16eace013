/*
** driver_int.h: private to driver/ (the library entry points of mlc.h).
**
** The archiver turns a lowered, memory-planned graph function plus the
** object code of its kernels into a deployable model.so: it encodes the
** model description (runtime/rt_model.h) as a blob (runtime/rt_blob.h) in
** an object emitted through LLVM, writes the weights as a blob, and links
** them with the embedded runtime archive using the system C compiler.
*/
#ifndef MLC_DRIVER_DRIVER_INT_H
#define MLC_DRIVER_DRIVER_INT_H

#include "base/status.h"
#include "base/strbuf.h"
#include "codegen/target.h"
#include "extern/extern.h"
#include "graph/graph.h"
#include "mlc/mlc.h"

typedef struct mlc_drv_archive_args {
  const mlc_module *gm;
  const mlc_func *fn;         /* lowered (call_tir / call_dps_packed) and planned */
  const char *kernels_obj;    /* object file with the generated kernels */
  const char *manifest_json;  /* embedded for inspect */
  const char *model_name;
  const char *workdir;        /* scratch directory (exists, writable) */
  const char *out_so;         /* where to write model.so */
  const char *out_h;          /* where to write model.h (NULL: none) */
  int64_t *out_arena_bytes;   /* static arena size, -1 when symbolic (may be NULL) */
  const mlc_target *target;   /* what model.o (description, kernel table) is built for */
  const mlc_extern_options *ext; /* the dispatcher's options (plugins); NULL: none */
  int link_plugins;           /* 1: link the plugins the model calls into it */
  const char *devcode;        /* a CUDA model's PTX (NULL for the CPU) */
  size_t devcode_size;
} mlc_drv_archive_args;

MLC_MUST_USE mlc_status mlc_drv_archive(const mlc_drv_archive_args *a);

/* Bytes of the intermediates' arena of planned |fn| at its static shapes;
** -1 when a storage has a symbolic size. */
int64_t mlc_drv_arena_bytes(const mlc_func *fn);

/* The kernel symbol for prim function |name| (a prefix keeps kernels apart
** from libc and libm names). */
#define MLC_DRV_KERNEL_PREFIX "mlc_k_"

/* Describes the compiled model at |path| (text, or JSON when |json|). */
MLC_MUST_USE mlc_status mlc_drv_inspect_so(const char *path, int json, mlc_strbuf *out);

/* Inspects the ONNX model in |data| (|size| bytes, borrowed) as
** mlc_inspect_file does a .onnx file: load (external data is refused),
** pre-flight check, import, and the report in |fmt| appended to |out|.
** |name| stands for the file in messages and the report. */
MLC_MUST_USE mlc_status mlc_drv_inspect_onnx_bytes(const void *data, size_t size, const char *name,
                                                   mlc_inspect_format fmt, mlc_strbuf *out);

/* Reads a tensor from the bytes of a .npy or TensorProto .pb file (|data|,
** |size| bytes, borrowed), as mlc_tensor_read_file reads the file; |name|
** stands for the file in messages.  *out is transferred (mlc_tensor_free). */
MLC_MUST_USE mlc_status mlc_drv_tensor_read_bytes(const void *data, size_t size, const char *name,
                                                  DLTensor **out);

/* Runs |argv| (argv[0] looked up in PATH) in directory |cwd| (NULL: here),
** stdout+stderr to |log_path|.  Error status with the log's tail if it fails. */
MLC_MUST_USE mlc_status mlc_drv_spawn(const char *const *argv, const char *cwd, const char *log_path);

/*
** The dispatcher's measurements (extern.h, mlc_extern_measure_fn) for
** `compile --extern auto`: each candidate for a call is compiled alone
** into a small model.so (the call's bindings, its constants, parameters
** for the rest) and timed by `mlc-onnx run --bench` in a child process,
** so the library initializes as it would in a server.
*/
typedef struct mlc_drv_measure {
  const mlc_compile_options *opts;
  const mlc_target *target;
  void (*progress)(void *user, const char *line);
  void *progress_user;
  mlc_extern_plugin_lib *const *ext_plugins;
  int ext_plugins_n;
  char *cache_path;   /* the timing cache file, or NULL */
  char *key;          /* target and threads, part of every cache key */
  char *workdir;      /* scratch directory of the probes */
  char *cli;          /* the mlc-onnx that runs them */
  int threads;        /* threads the probes run on */
  int nprobes;        /* probes compiled so far */
} mlc_drv_measure;

MLC_MUST_USE mlc_status mlc_drv_measure_init(mlc_drv_measure *ms, const char *target_spec);
void mlc_drv_measure_fini(mlc_drv_measure *ms);
double mlc_drv_measure_call(void *user, const mlc_module *m, const mlc_extern_kernel *k,
                            const mlc_extern_match *mt, double *convert, char *why, size_t whylen);
/* The cached verdict of the whole-model check of the model with sha256
** |hash|: 1 and the two times, or 0. */
int mlc_drv_measure_verdict(const mlc_drv_measure *ms, const char *hash, double *mixed_ms, double *gen_ms);
void mlc_drv_measure_save_verdict(const mlc_drv_measure *ms, const char *hash, double mixed_ms, double gen_ms);
/* Times two compiled models alternately (child processes, rounds of
** `mlc-onnx run --bench`): the median ms of each. */
MLC_MUST_USE mlc_status mlc_drv_measure_models(mlc_drv_measure *ms, const char *so_a, const char *so_b,
                                               double *a_ms, double *b_ms);
/* Compiles module |gm| (a probe: one call) to |out_so| with only |only|'s
** kernels allowed (NULL: generated code only); quiet (compile.c). */
MLC_MUST_USE mlc_status mlc_drv_compile_probe(const mlc_drv_measure *ms, mlc_module *gm,
                                              const mlc_extern_provider *only, const char *out_so);

/* Writes |n| bytes to |path|. */
MLC_MUST_USE mlc_status mlc_drv_write_file(const char *path, const void *data, size_t n);

#endif /* MLC_DRIVER_DRIVER_INT_H */
