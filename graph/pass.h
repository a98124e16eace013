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

typedef struct mlc_pass_ctx {
  int verify;              /* run mlc_graph_verify after every pass */
  const char *dump_dir;    /* write <dir>/<NN>_<pass>.{before,after}.txt; NULL: none */
  const char *dump_filter; /* comma-separated pass names to dump, "all" or NULL (= all) */
  FILE *log;               /* progress lines ("pass fold_constant: 3 ms"); NULL: quiet */
} mlc_pass_ctx;

typedef mlc_status (*mlc_pass_fn)(mlc_module *m, const mlc_pass_ctx *ctx);

typedef struct mlc_pass {
  const char *name;
  mlc_pass_fn fn;
} mlc_pass;

/* The passes. */
mlc_status mlc_pass_fold_constant(mlc_module *m, const mlc_pass_ctx *ctx);
mlc_status mlc_pass_dce(mlc_module *m, const mlc_pass_ctx *ctx);
mlc_status mlc_pass_plan_memory(mlc_module *m, const mlc_pass_ctx *ctx);

/* Every registered pass, NULL-terminated by name. */
extern const mlc_pass mlc_passes[];
/* The pass named |name|, or NULL. */
const mlc_pass *mlc_pass_find(const char *name);

/* Runs |n| passes in order on |m|. Stops at the first error, which names
** the pass. */
MLC_MUST_USE mlc_status mlc_pass_run(mlc_module *m, const mlc_pass *passes, int n,
                                     const mlc_pass_ctx *ctx);

/* The default graph pipeline (graph/pipeline.c). */
MLC_MUST_USE mlc_status mlc_graph_pipeline(mlc_module *m, const mlc_pass_ctx *ctx);

#endif /* MLC_GRAPH_PASS_H */
