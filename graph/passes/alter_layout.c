/*
** alter_layout.c: (being written; a no-op until then).
*/
#include "graph/pass.h"

mlc_status mlc_pass_alter_layout(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)m;
  (void)ctx;
  return NULL;
}
