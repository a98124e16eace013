/*
** extern.h: external kernels (boundary of extern/).
**
** The registry lists every function a model's call_dps_packed steps may
** name: the providers' wrappers (OpenBLAS, oneDNN: extern/rt_<provider>.c,
** linked into a model.so only when it calls them), the runtime's own
** built-ins ("mlc.*", runtime/shapefn.c, which legalize emits) and the
** functions of the user's plugins (mlc/mlc_extern.h, loaded with
** mlc_extern_load_plugin).  Each entry names the graph pattern it
** implements and a match() that says whether it takes one call of the
** graph, with its dtypes, shapes, attributes and what follows it (a
** convolution's bias add, residual add and relu or clip).
**
** The dispatch pass (mlc_pass_dispatch, a graph pass that runs after
** folding and before alter_layout) turns each call that an allowed kernel
** matches into R.call_dps_packed("openblas.matmul", args) and leaves the
** rest for generated code.  Without the auto choice the first allowed
** library that takes a call gets it, unless a later built-in one takes
** more of its epilogue (cublaslt.matmul a matmul's bias and relu, which
** cublas.matmul leaves): then the one that takes the most, the earliest
** among equals; a plugin listed first keeps what it takes.  With the
** auto choice it keeps, per call, the
** faster of generated code and each candidate, timed at compile time
** (mlc_extern_options.measure) and cached by op, shapes, target and
** library version.
**
** Call convention (mlc/mlc_extern.h): the tensors (inputs, then the
** output), then one MLC_ARG_INT per value of the call's attribute "args"
** (ints, which the match builds; a float travels as the bits of its
** float32).  The providers' calls carry these:
**
**   *.matmul     A [..., M, K], B [..., K, N] -> Y [..., M, N], float32,
**                ranks >= 2, leading dims broadcast (numpy); no attributes
**                (but cublaslt.matmul:)
**   cublaslt.matmul
**                A, B as *.matmul, [bias: N values along Y's last axis, a
**                constant [N] or [1, .., 1, N]] -> Y [..., M, N], float32;
**                y = act(a @ b + bias); attributes has_bias, act (0 none,
**                1 relu)
**   *.conv2d     X [N, C, H, W], W [K, C/g, KH, KW], [bias [K]],
**                [residual R, shaped as Y], -> Y [N, K, OH, OW], float32;
**                y = act(conv(x, w) + bias + r); attributes dilations (2),
**                groups, pads (4: top, left, bottom, right), strides (2),
**                has_bias, has_residual, act (0 none, 1 relu, 2 clip),
**                clip_min, clip_max (float32 bits), w_const (W is a
**                constant of the model: a wrapper may cache a repacked copy
**                keyed by its address)
**   onednn.max_pool2d, onednn.avg_pool2d
**                X [N, C, H, W] -> Y [N, C, OH, OW], float32; attributes
**                kernel (2), pads (4), strides (2), dilations (2),
**                count_include_pad (avg; else 0); padding past the end
**                that ceil_mode adds is implied by Y's shape
**   onednn.softmax
**                X -> Y, float32; attributes axis (>= 0), log (0 or 1)
*/
#ifndef MLC_EXTERN_EXTERN_H
#define MLC_EXTERN_EXTERN_H

#include <stdio.h>

#include "graph/graph.h"
#include "graph/pass.h"
#include "mlc/mlc_extern.h"

/* Activation codes of the conv2d attribute act. */
enum { MLC_EXT_ACT_NONE = 0, MLC_EXT_ACT_RELU = 1, MLC_EXT_ACT_CLIP = 2 };

#define MLC_EXT_MAX_ARGS 8
#define MLC_EXT_MAX_ATTRS 24
#define MLC_EXT_MAX_ABSORB 6

/* One call a kernel takes: the bindings it replaces (the matched op first,
** then the epilogue it absorbs, each the only use of the one before), the
** call's tensor arguments and attributes.  The output is that of the last
** binding. */
typedef struct mlc_extern_match {
  mlc_binding *bindings[MLC_EXT_MAX_ABSORB];
  int nbindings;
  mlc_value *args[MLC_EXT_MAX_ARGS];
  int nargs;
  int64_t attrs[MLC_EXT_MAX_ATTRS];
  int nattrs;
} mlc_extern_match;

/* Where a match() looks: the binding, its function and module, the use
** count of every value (by id; returned values count) and, by id, the
** binding that uses it last (its only user when the count is 1). */
typedef struct mlc_extern_site {
  mlc_module *m;
  mlc_func *f;
  mlc_binding *b;
  const int *uses;
  mlc_binding *const *user;
  mlc_binding *const *taken; /* bindings an earlier match replaced: not to be taken again */
  int ntaken;
} mlc_extern_site;

typedef struct mlc_extern_kernel mlc_extern_kernel;

typedef struct mlc_extern_provider {
  const char *name;      /* "openblas", "onednn", "mlc", or a plugin's name */
  const char *library;   /* what a model.so needs at run time ("libopenblas.so.0"); NULL: nothing */
  const char *version;   /* of the library, for the timing cache ("0.3.21") */
  const char *ldflags;   /* what the archiver adds to the link ("-ldnnl"); NULL: nothing */
  int builtin;           /* 1: part of this build (openblas, onednn, mlc); 0: a plugin */
  int (*available)(void); /* the library can be used here (configured and loadable) */
  const char *plugin_path; /* a plugin: the file given to --extern-lib */
  const char *plugin_file; /* a plugin: its file name, which the model records */
  int device;            /* the target it serves: 0 the CPU (plugins too), 1 CUDA */
} mlc_extern_provider;

struct mlc_extern_kernel {
  const char *name;      /* the callee of call_dps_packed: "openblas.matmul" */
  const mlc_extern_provider *provider;
  const char *pattern;   /* what it implements: "matmul", "conv2d(+bias)(+add)(+relu|clip)" */
  const char *symbol;    /* its function in the provider's archive; NULL: runtime built-in or plugin */
  /* Whether it takes |s|->b (1, filling |mt|) or not (0).  NULL: never
  ** matched (the runtime built-ins, which legalize emits). */
  int (*match)(const mlc_extern_kernel *k, const mlc_extern_site *s, mlc_extern_match *mt);
  const mlc_extern_fn *plugin_fn; /* a plugin's function; NULL otherwise */
  mlc_op op;             /* a plugin's function: the op it implements */
};

/* The op call of |s|'s function that is the only use of |v|, or NULL (used
** more than once, returned, not at all, or taken by an earlier match). */
mlc_binding *mlc_extern_sole_user(const mlc_extern_site *s, const mlc_value *v);

/* The built-in registry: NULL-terminated by name. */
extern const mlc_extern_kernel mlc_extern_builtin_kernels[];
/* The built-in providers. */
extern const mlc_extern_provider mlc_extern_provider_openblas, mlc_extern_provider_onednn,
    mlc_extern_provider_mlc, mlc_extern_provider_cublas, mlc_extern_provider_cublaslt, mlc_extern_provider_cudnn;

/* The built-in kernel called |name|, or NULL. */
const mlc_extern_kernel *mlc_extern_find(const char *name);
/* The built-in provider called |name| ("openblas", "onednn"), or NULL. */
const mlc_extern_provider *mlc_extern_find_provider(const char *name);

/* A loaded plugin library: its provider record and kernels. */
typedef struct mlc_extern_plugin_lib {
  mlc_extern_provider provider;
  mlc_extern_kernel *kernels;
  int nkernels;
  void *handle;          /* dlopen handle */
  char *path, *file;
} mlc_extern_plugin_lib;

/* Loads the plugin at |path| (dlopen, its mlc_extern_plugin_v1 table,
** checked: ABI, names, ops); *|out| transferred (mlc_extern_plugin_free). */
MLC_MUST_USE mlc_status mlc_extern_load_plugin(const char *path, mlc_extern_plugin_lib **out);
void mlc_extern_plugin_free(mlc_extern_plugin_lib *p);

/*
** Times one candidate for one call: returns the time in seconds of running
** |k| (NULL: the generated kernel) on the call of |mt| (the bindings,
** arguments, attributes it would replace), or < 0 when it cannot be timed
** (the reason in *|why|).  Compiled alone, generated code converts its
** input and output between the model's layout and its blocked one, which
** it does not do inside a model: those conversions are not counted in the
** time but returned in *|convert| (seconds; 0 when none), since a library
** call amid generated code needs them instead.  Supplied by the driver,
** which can compile and run.
*/
typedef double (*mlc_extern_measure_fn)(void *user, const mlc_module *m, const mlc_extern_kernel *k,
                                        const mlc_extern_match *mt, double *convert, char *why, size_t whylen);

/* One decision of the dispatcher, for the manifest and inspect. */
typedef struct mlc_extern_choice {
  const char *node;      /* ONNX node of the matched op ("" if none) */
  const char *op;        /* graph op name */
  const char *shape;     /* "1x64x56x56 * 64x64x1x1", arena-owned text */
  const char *chosen;    /* the kernel's name, or "generated" */
  const char *why;       /* "--extern openblas", "measured", "only candidate", ... */
  int ncand;
  const char *cand[4];   /* "generated", kernel names */
  double seconds[4];     /* measured time per candidate (< 0: not measured); a library's
                         ** includes |convert| */
  double convert;        /* seconds of the layout conversions a library call needs amid
                         ** generated code (0: none) */
} mlc_extern_choice;

typedef struct mlc_extern_options {
  /* Allowed providers in order of preference (built-in ones and loaded
  ** plugins); none: dispatch does nothing. */
  const mlc_extern_provider *providers[8];
  int nproviders;
  mlc_extern_plugin_lib *plugins[4];
  int nplugins;
  int auto_choice;       /* 1: time the candidates and keep the fastest (needs measure) */
  mlc_extern_measure_fn measure;
  void *measure_user;
  const char *cache_path; /* the timing cache file (auto); NULL: none */
  const char *target_key; /* target text for the cache key ("llvm -mcpu=znver4") */
  /* Filled by the pass: every decision, in graph order (arena of the
  ** module). */
  mlc_extern_choice *choices;
  int nchoices;
  /* auto's check of the whole model (the driver's): the model with the
  ** chosen library calls and with generated code only, ms per run (0: not
  ** checked), for the manifest. */
  double model_mixed_ms, model_generated_ms;
  /* auto: the timings read and measured, kept across runs of the pass
  ** with these options (the pass makes it; mlc_extern_options_release). */
  struct mlc_extern_times *times;
} mlc_extern_options;

/* Frees what the pass kept in |o| (its timings); |o| itself is the caller's. */
void mlc_extern_options_release(mlc_extern_options *o);

/* The dispatch pass (STYLE R16 signature); its options come from
** ctx->opt->ext (NULL or no providers: nothing to do). */
mlc_status mlc_pass_dispatch(mlc_module *m, const mlc_pass_ctx *ctx);

/* The kernel called |name| among the built-ins and |opt|'s plugins, or NULL. */
const mlc_extern_kernel *mlc_extern_lookup(const mlc_extern_options *opt, const char *name);

#endif /* MLC_EXTERN_EXTERN_H */
