/*
** pass.c: the graph pass registry and the pass manager (STYLE R16, R18).
**
** mlc_pass_run runs a list of passes in order.  Around each pass it can
** write the module's text to <dump_dir>/<NN>_<pass>.before.txt and
** .after.txt (NN = 1-based position in the list), verify the module after
** the pass, and log the pass's wall time.  The first error stops the run;
** its message is prefixed with the pass's name.
*/
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/outfile.h"
#include "graph/pass.h"

const mlc_pass mlc_passes[] = {
    {"bind_params", mlc_pass_bind_params, NULL},
    {"fold_constant", mlc_pass_fold_constant, NULL},
    {"fold_scale_shift", mlc_pass_fold_scale_shift, "fold"},
    {"simplify", mlc_pass_simplify, "fold"},
    {"cse", mlc_pass_cse, "fold"},
    {"dce", mlc_pass_dce, NULL},
    {"alter_layout", mlc_pass_alter_layout, "layout"},
    {"annotate_pattern", mlc_pass_annotate_pattern, "fuse"},
    {"fuse_ops", mlc_pass_fuse_ops, "fuse"},
    {"materialize_outputs", mlc_pass_materialize_outputs, NULL},
    {"plan_memory", mlc_pass_plan_memory, NULL},
    {NULL, NULL, NULL},
};

/* The registered pass named |name| (borrowed), or NULL; static storage. */
const mlc_pass *mlc_pass_find(const char *name) {
  if (!name) return NULL;
  for (const mlc_pass *p = mlc_passes; p->name; p++)
    if (strcmp(p->name, name) == 0) return p;
  return NULL;
}

/* Whether |name| is in the comma-separated |filter| (NULL, "" or "all": every pass). */
static int filter_match(const char *filter, const char *name) {
  if (!filter || !*filter || strcmp(filter, "all") == 0) return 1;
  size_t n = strlen(name);
  const char *s = filter;
  while (*s) {
    while (*s == ' ' || *s == ',') s++;
    const char *e = s;
    while (*e && *e != ',') e++;
    const char *t = e;
    while (t > s && t[-1] == ' ') t--;
    if ((size_t)(t - s) == n && strncmp(s, name, n) == 0) return 1;
    if ((size_t)(t - s) == 3 && strncmp(s, "all", 3) == 0) return 1;
    s = e;
  }
  return 0;
}

/* Writes the module's text to <dir>/<NN>_<pass>.<when>.txt. */
static mlc_status dump(const mlc_module *m, const char *dir, int index, const char *pass,
                       const char *when) {
  char path[4096];
  int len = snprintf(path, sizeof path, "%s/%02d_%s.%s.txt", dir, index, pass, when);
  if (len < 0 || (size_t)len >= sizeof path)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "dump path too long: %s/...", dir);
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_graph_print(m, &b);
  if (b.oom) {
    mlc_sb_fini(&b);
    return mlc_oom();
  }
  mlc_status s = mlc_out_write_file(path, mlc_sb_str(&b), b.len, 0);
  mlc_sb_fini(&b);
  return s ? mlc_status_annotate(s, "IR dump") : NULL;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Runs |passes| (borrowed) on |m| (modified in place) with |ctx| (borrowed,
** NULL: quiet, no verification).  The first error is returned, transferred,
** prefixed with the pass name. */
mlc_status mlc_pass_run(mlc_module *m, const mlc_pass *passes, int n, const mlc_pass_ctx *ctx) {
  static const mlc_pass_ctx quiet = {0, NULL, NULL, NULL, NULL, NULL, NULL};
  if (!ctx) ctx = &quiet;
  for (int i = 0; i < n; i++) {
    const mlc_pass *p = &passes[i];
    const char *name = p->name ? p->name : "?";
    if (!p->fn) return mlc_make_status(MLC_INTERNAL, "pass %s: no function", name);
    if (p->group && ctx->opt &&
        ((!strcmp(p->group, "fold") && ctx->opt->no_fold) || (!strcmp(p->group, "fuse") && ctx->opt->no_fuse) ||
         (!strcmp(p->group, "layout") && ctx->opt->no_layout)))
      continue;
    int dumping = ctx->dump_dir && filter_match(ctx->dump_filter, name);
    if (dumping)
      MLC_RETURN_IF_ERROR(mlc_status_annotate(dump(m, ctx->dump_dir, i + 1, name, "before"),
                                              "pass %s", name));
    double t0 = now_ms();
    mlc_status s = p->fn(m, ctx);
    if (s) return mlc_status_annotate(s, "pass %s", name);
    double t1 = now_ms();
    if (ctx->log) {
      fprintf(ctx->log, "pass %s: %.1f ms\n", name, t1 - t0);
      fflush(ctx->log);
    }
    if (dumping)
      MLC_RETURN_IF_ERROR(mlc_status_annotate(dump(m, ctx->dump_dir, i + 1, name, "after"),
                                              "pass %s", name));
    if (ctx->verify) {
      s = mlc_graph_verify(m);
      if (s) return mlc_status_annotate(s, "after pass %s", name);
    }
    if (ctx->after) MLC_RETURN_IF_ERROR(ctx->after(ctx->after_user, name, m));
  }
  return NULL;
}
