/*
** fuzz_tir.c: libFuzzer target for the TIR text parser (lower/tir_parse.c).
**
** Each input is TVMScript-like text.  It is parsed into a fresh module;
** an error status is a fine answer (it must carry a message).  Text that
** parses is verified (any answer is fine), printed, and parsed again: the
** printer's own output must always parse, and printing that must give the
** same text (print -> parse -> print is identical).  A crash, a leak,
** undefined behaviour, a hang or a broken round trip is a finding.
*/
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/status.h"
#include "base/strbuf.h"
#include "fuzz/fuzz.h"
#include "lower/tir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlc_tir_module *m = NULL, *m2 = NULL;
  mlc_strbuf a = MLC_STRBUF_INIT, b = MLC_STRBUF_INIT;
  if (mlc_tir_module_create(mlc_allocator_default(), &m)) return 0;
  mlc_status s = mlc_tir_parse_module(m, (const char *)data, size, "fuzz.tir");
  if (s) {
    if (!mlc_status_message(s)[0]) __builtin_trap();
    mlc_status_free(s);
    goto done;
  }
  for (int i = 0; i < m->nfuncs; i++) mlc_status_free(mlc_tir_verify_func(m->funcs[i]));
  mlc_tir_print_module(m, &a);
  if (a.oom || mlc_tir_module_create(mlc_allocator_default(), &m2)) goto done;
  s = mlc_tir_parse_module(m2, mlc_sb_str(&a), a.len, "printed.tir");
  if (s) {
    if (mlc_status_code(s) != MLC_RESOURCE_EXHAUSTED) __builtin_trap(); /* the printer's text must parse */
    mlc_status_free(s);
    goto done;
  }
  mlc_tir_print_module(m2, &b);
  if (!b.oom && (a.len != b.len || memcmp(mlc_sb_str(&a), mlc_sb_str(&b), a.len) != 0)) __builtin_trap();
done:
  mlc_sb_fini(&a);
  mlc_sb_fini(&b);
  mlc_tir_module_destroy(m2);
  mlc_tir_module_destroy(m);
  return 0;
}
