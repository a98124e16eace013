/*
** fuse_tir.c: every call of a primitive graph function (a fused group)
** becomes call_tir of one prim function (FuseTIR).
*/
#include "config.h"

#include "graph/pass.h"
#include "lower/lower.h"

mlc_status mlc_lower_pass_fuse_tir(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)ctx;
  for (int i = 0; i < m->nfuncs; i++)
    if (m->funcs[i]->primitive)
      return mlc_make_status(MLC_UNIMPLEMENTED, "fuse_tir: primitive function \"%s\" not lowered yet",
                             m->funcs[i]->name);
  return NULL;
}
