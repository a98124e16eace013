/*
** pipeline.c: the default order of the graph passes (STYLE R16).
**
** The list is spelled out here, in the order the passes run.  Builds
** configured with --enable-debug (MLC_DEBUG) verify the module after every
** pass even when the context does not ask for it.
*/
#include "config.h"

#include "graph/pass.h"

static const mlc_pass pipeline[] = {
    {"fold_constant", mlc_pass_fold_constant},
    {"dce", mlc_pass_dce},
};

/* Runs the default passes on |m| (modified in place); |ctx| is borrowed
** (NULL: quiet).  Errors are transferred to the caller. */
mlc_status mlc_graph_pipeline(mlc_module *m, const mlc_pass_ctx *ctx) {
  mlc_pass_ctx c = {0, NULL, NULL, NULL};
  if (ctx) c = *ctx;
#ifdef MLC_DEBUG
  c.verify = 1;
#endif
  return mlc_pass_run(m, pipeline, (int)(sizeof pipeline / sizeof pipeline[0]), &c);
}
