/*
** pass.h: graph passes and the pass manager (STYLE R16).
**
** Every pass has one signature and lives in its own file under
** graph/passes/.  The pass manager runs a list of passes in order,
** verifying the module after each one (when asked) and dumping it before
** and after the passes named in the context's dump filter.
*/
#ifndef MLC_GRAPH_PASS_H
#define MLC_GRAPH_PASS_H

#include "graph/graph.h"

struct mlc_lower_traces;
struct mlc_target;
struct mlc_extern_options;
struct mlc_pass_ctx;

/*
** What the pipeline is asked to do (compile's options).  The pass groups
** can be switched off one by one, to measure what each one brings:
**   fold    fold_scale_shift, simplify, cse (import's folding of constant
**           subgraphs and fold_constant always run)
**   layout  alter_layout (blocked NCHW[x]c convolutions)
**   fuse    annotate_pattern, fuse_ops, fuse_tir
*/
struct mlc_tir_func;
typedef struct mlc_pipeline_options {
  int no_fold, no_layout, no_fuse;
  int params_as_inputs;    /* bind_params leaves weights as parameters of main */
  int num_threads;         /* threads the model is expected to run on (0: unknown) */
  int no_parallel;         /* 1: keep every loop serial */
  int no_vectorize;        /* 1: no vector loops in the default schedule */
  int vector_bits;         /* the target's widest vector (128, 256, 512; 0: 512) */
  struct mlc_lower_traces *traces; /* receives the schedule's traces; NULL: none */
  /* The extern stage's dispatch pass (extern/extern.h: mlc_pass_dispatch)
  ** and its options, which it also fills with its decisions; run after
  ** the first dce when set.  NULL: no dispatch (everything generated). */
  mlc_status (*dispatch)(struct mlc_module *m, const struct mlc_pass_ctx *ctx);
  struct mlc_extern_options *ext;
  int device;              /* 0 the CPU; 2 CUDA (codegen/target.h); 1 CUDA's schedules run
                              serially on the CPU (tests) */
  /* Tuned schedules (lower/lower.h: mlc_lower_tuned_fn): the schedule pass
  ** asks for each prim function's trace; NULL: the default rules only. */
  const char *(*tuned)(void *user, const struct mlc_tir_func *f);
  void *tuned_user;
} mlc_pipeline_options;

typedef struct mlc_pass_ctx {
  int verify;              /* run mlc_graph_verify after every pass */
  const char *dump_dir;    /* write <dir>/<NN>_<pass>.{before,after}.txt; NULL: none */
  const char *dump_filter; /* comma-separated pass names to dump, "all" or NULL (= all) */
  FILE *log;               /* progress lines ("pass fold_constant: 3 ms"); NULL: quiet */
  const mlc_pipeline_options *opt; /* NULL: every pass group on, defaults */
  /* Called after each pass that ran (NULL: none), e.g. to dump the prim
  ** functions after legalize; an error stops the pipeline. */
  mlc_status (*after)(void *user, const char *pass, mlc_module *m);
  void *after_user;
} mlc_pass_ctx;

typedef mlc_status (*mlc_pass_fn)(mlc_module *m, const mlc_pass_ctx *ctx);

typedef struct mlc_pass {
  const char *name;
  mlc_pass_fn fn;
  const char *group;       /* "fold", "layout", "fuse" or NULL (always runs) */
} mlc_pass;

/* The graph passes (graph/passes/, one per file). */
mlc_status mlc_pass_bind_params(mlc_module *m, const mlc_pass_ctx *ctx);
mlc_status mlc_pass_fold_constant(mlc_module *m, const mlc_pass_ctx *ctx);
mlc_status mlc_pass_fold_scale_shift(mlc_module *m, const mlc_pass_ctx *ctx);
mlc_status mlc_pass_simplify(mlc_module *m, const mlc_pass_ctx *ctx);
mlc_status mlc_pass_cse(mlc_module *m, const mlc_pass_ctx *ctx);
mlc_status mlc_pass_dce(mlc_module *m, const mlc_pass_ctx *ctx);
mlc_status mlc_pass_alter_layout(mlc_module *m, const mlc_pass_ctx *ctx);
mlc_status mlc_pass_annotate_pattern(mlc_module *m, const mlc_pass_ctx *ctx);
mlc_status mlc_pass_fuse_ops(mlc_module *m, const mlc_pass_ctx *ctx);
mlc_status mlc_pass_materialize_outputs(mlc_module *m, const mlc_pass_ctx *ctx);
mlc_status mlc_pass_plan_memory(mlc_module *m, const mlc_pass_ctx *ctx);

/* Every registered pass, NULL-terminated by name. */
extern const mlc_pass mlc_passes[];
/* The pass named |name|, or NULL. */
const mlc_pass *mlc_pass_find(const char *name);

/* Runs |n| passes in order on |m|. Stops at the first error, which names
** the pass. */
MLC_MUST_USE mlc_status mlc_pass_run(mlc_module *m, const mlc_pass *passes, int n,
                                     const mlc_pass_ctx *ctx);

/* The graph-level passes of the pipeline, up to materialize_outputs
** (graph/pipeline.c). */
MLC_MUST_USE mlc_status mlc_graph_pipeline(mlc_module *m, const mlc_pass_ctx *ctx);
/* The whole pipeline: graph passes, fuse_tir, legalize, schedule,
** lower_tir, plan_memory.  Afterwards m->prims holds the lowered kernels. */
MLC_MUST_USE mlc_status mlc_pipeline_run(mlc_module *m, const mlc_pass_ctx *ctx);

#endif /* MLC_GRAPH_PASS_H */
