/*
** lower_passes.c: legalize, schedule and lower_tir as passes of the one
** pipeline (graph/pipeline.c) over the module's prim functions.
*/
#include "config.h"

#include "graph/pass.h"
#include "lower/lower.h"
#include "lower/tir_lower.h"

static void prims_free(mlc_tir_module *tm) { mlc_tir_module_destroy(tm); }
static void prims_print(const mlc_tir_module *tm, mlc_strbuf *b) { mlc_tir_print_module(tm, b); }

mlc_status mlc_lower_prims(mlc_module *m, mlc_tir_module **out) {
  if (!m->prims) {
    MLC_RETURN_IF_ERROR(mlc_tir_module_create(m->alloc, &m->prims));
    m->prims_free = prims_free;
    m->prims_print = prims_print;
  }
  *out = m->prims;
  return NULL;
}

static mlc_lower_options lower_options(const mlc_pass_ctx *ctx) {
  mlc_lower_options o = {0, 0, 0, 0, 0, NULL, NULL, NULL};
  if (ctx && ctx->opt) {
    o.num_threads = ctx->opt->num_threads;
    o.no_parallel = ctx->opt->no_parallel;
    o.no_vectorize = ctx->opt->no_vectorize;
    o.vector_bits = ctx->opt->vector_bits;
    o.device = ctx->opt->device;
    o.tuned = ctx->opt->tuned;
    o.tuned_user = ctx->opt->tuned_user;
  }
  return o;
}

mlc_status mlc_lower_pass_legalize(mlc_module *m, const mlc_pass_ctx *ctx) {
  mlc_tir_module *tm;
  MLC_RETURN_IF_ERROR(mlc_lower_prims(m, &tm));
  mlc_lower_options o = lower_options(ctx);
  return mlc_lower_legalize(m, tm, &o);
}

mlc_status mlc_lower_pass_schedule(mlc_module *m, const mlc_pass_ctx *ctx) {
  mlc_tir_module *tm;
  MLC_RETURN_IF_ERROR(mlc_lower_prims(m, &tm));
  mlc_lower_options o = lower_options(ctx);
  return mlc_lower_default_schedule(tm, &o, ctx && ctx->opt ? ctx->opt->traces : NULL);
}

mlc_status mlc_lower_pass_lower_tir(mlc_module *m, const mlc_pass_ctx *ctx) {
  mlc_tir_module *tm;
  MLC_RETURN_IF_ERROR(mlc_lower_prims(m, &tm));
  mlc_tir_lower_options lo = {0};
  lo.gpu = ctx && ctx->opt && ctx->opt->device == 2;
  return mlc_tir_lower_module(tm, &lo);
}
