/*
** pipeline.c: the one pipeline, from the imported graph to prim functions
** ready for code generation, in the order the passes run (STYLE R16).
**
** Graph passes rewrite the graph functions; fuse_tir and legalize turn op
** calls into call_tir of prim functions of the same module; schedule and
** lower_tir rewrite the prim functions; plan_memory assigns storages.  A
** pass of a group that the options switch off (mlc_pipeline_options) does
** not run.  Builds configured with --enable-debug (MLC_DEBUG) verify the
** module after every pass even when the context does not ask for it.
*/
#include "config.h"

#include <string.h>

#include "graph/pass.h"
#include "lower/lower.h"

/* Up to materialize_outputs: the graph-level passes. */
static const mlc_pass graph_passes[] = {
    {"bind_params", mlc_pass_bind_params, NULL},
    {"fold_constant", mlc_pass_fold_constant, NULL},
    {"simplify", mlc_pass_simplify, "fold"},
    {"fold_scale_shift", mlc_pass_fold_scale_shift, "fold"},
    {"cse", mlc_pass_cse, "fold"},
    {"dce", mlc_pass_dce, NULL},
    {"alter_layout", mlc_pass_alter_layout, "layout"},
    {"fold_constant", mlc_pass_fold_constant, "layout"},
    {"dce", mlc_pass_dce, "layout"},
    {"annotate_pattern", mlc_pass_annotate_pattern, "fuse"},
    {"fuse_ops", mlc_pass_fuse_ops, "fuse"},
    {"materialize_outputs", mlc_pass_materialize_outputs, NULL},
};

/* Then lowering to TensorIR and the memory plan. */
static const mlc_pass lower_passes[] = {
    {"fuse_tir", mlc_lower_pass_fuse_tir, "fuse"},
    {"legalize", mlc_lower_pass_legalize, NULL},
    {"schedule", mlc_lower_pass_schedule, NULL},
    {"lower_tir", mlc_lower_pass_lower_tir, NULL},
    {"plan_memory", mlc_pass_plan_memory, NULL},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

static mlc_pass_ctx context(const mlc_pass_ctx *ctx) {
  mlc_pass_ctx c = {0, NULL, NULL, NULL, NULL, NULL, NULL};
  if (ctx) c = *ctx;
#ifdef MLC_DEBUG
  c.verify = 1;
#endif
  return c;
}

/* The graph passes into |all| (room for COUNT(graph_passes) + 1), with
** the extern stage's dispatch pass after the first dce when the options
** carry one (graph/ does not link extern/: the driver supplies it); their
** number. */
static int with_dispatch(const mlc_pass_ctx *c, mlc_pass *all) {
  int n = 0, placed = 0;
  for (int i = 0; i < COUNT(graph_passes); i++) {
    all[n++] = graph_passes[i];
    if (!placed && c->opt && c->opt->dispatch && !strcmp(graph_passes[i].name, "dce")) {
      all[n++] = (mlc_pass){"dispatch", c->opt->dispatch, NULL};
      placed = 1;
    }
  }
  return n;
}

/* The graph-level passes on |m| (modified in place); |ctx| is borrowed
** (NULL: quiet, every group on).  Errors are transferred to the caller. */
mlc_status mlc_graph_pipeline(mlc_module *m, const mlc_pass_ctx *ctx) {
  mlc_pass_ctx c = context(ctx);
  mlc_pass all[COUNT(graph_passes) + 1];
  int n = with_dispatch(&c, all);
  return mlc_pass_run(m, all, n, &c);
}

/* The whole pipeline: the graph passes, then lowering and the memory plan.
** Dumps are numbered in one sequence across both lists. */
mlc_status mlc_pipeline_run(mlc_module *m, const mlc_pass_ctx *ctx) {
  mlc_pass_ctx c = context(ctx);
  mlc_pass all[COUNT(graph_passes) + 1 + COUNT(lower_passes)];
  int n = with_dispatch(&c, all);
  for (int i = 0; i < COUNT(lower_passes); i++) all[n++] = lower_passes[i];
  return mlc_pass_run(m, all, n, &c);
}
