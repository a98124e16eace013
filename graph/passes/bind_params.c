/*
** bind_params.c: (being written; a no-op until then).
*/
#include "graph/pass.h"

mlc_status mlc_pass_bind_params(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)m;
  (void)ctx;
  return NULL;
}
