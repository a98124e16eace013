/*
** cg_stub.c: codegen.h and target.h when the build has no LLVM: every
** entry point reports that code generation is not available.
*/
#include "codegen/codegen.h"

#include <stdlib.h>

static mlc_status no_llvm(void) {
  return mlc_make_status(MLC_UNIMPLEMENTED,
                         "code generation is not available: mlc-onnx was built without LLVM (install llvm-19-dev "
                         "and re-run configure)");
}

const mlc_target_kind *const mlc_target_kinds[] = {NULL};

mlc_status mlc_target_host(mlc_target **out) {
  *out = NULL;
  return no_llvm();
}

mlc_status mlc_target_parse(const char *spec, mlc_target **out) {
  (void)spec;
  *out = NULL;
  return no_llvm();
}

void mlc_target_destroy(mlc_target *t) { (void)t; }

void mlc_target_describe(const mlc_target *t, mlc_strbuf *out) {
  (void)t;
  mlc_sb_puts(out, "none (built without LLVM)");
}

mlc_status mlc_cg_build(const mlc_tir_module *m, const mlc_target *t, const char *obj_path) {
  (void)m, (void)t, (void)obj_path;
  return no_llvm();
}

mlc_status mlc_cg_build_mem(const mlc_tir_module *m, const mlc_target *t, void **out_data, size_t *out_size) {
  (void)m, (void)t;
  *out_data = NULL;
  *out_size = 0;
  return no_llvm();
}

mlc_status mlc_cg_emit_llvm_ir(const mlc_tir_module *m, const mlc_target *t, int optimize, char **out_text) {
  (void)m, (void)t, (void)optimize;
  *out_text = NULL;
  return no_llvm();
}

mlc_status mlc_cg_build_device(const mlc_tir_module *m, const mlc_target *t, const char *obj_path, char **devcode,
                               size_t *devcode_size) {
  (void)m, (void)t, (void)obj_path;
  *devcode = NULL;
  *devcode_size = 0;
  return no_llvm();
}

mlc_status mlc_cg_build_model_object(const mlc_target *t, const void *blob, size_t blob_size, const char *devcode,
                                     size_t devcode_size, const char *const *fn_syms, int nfns, const char *obj_path) {
  (void)t, (void)blob, (void)blob_size, (void)devcode, (void)devcode_size, (void)fn_syms, (void)nfns, (void)obj_path;
  return no_llvm();
}

void mlc_cg_free(void *p) { mlc_mem_free(p); }
