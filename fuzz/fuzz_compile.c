/*
** fuzz_compile.c: libFuzzer target for the compiler past the importer.
**
** Each input is the bytes of a .onnx file.  What imports (fuzz_inspect
** covers what does not) goes through the whole pipeline compile runs:
** the graph passes (with the graph verifier after each), legalization to
** prim functions, the default schedules, TIR lowering; then code
** generation to LLVM IR (verified by LLVM, not optimized: the object file
** and the archive are LLVM's and the linker's work).  The input's size
** picks the CPU the schedules are for (size % 2: an AVX2 target, 8 lanes,
** or an AVX-512 one, 16), so the mutator reaches both rule sets without a
** byte that would shift the protobuf.  An error status is a fine answer; a
** crash, a leak, undefined behaviour or a hang is a finding.
*/
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "codegen/codegen.h"
#include "codegen/target.h"
#include "frontend/frontend.h"
#include "fuzz/fuzz.h"
#include "graph/graph.h"
#include "graph/pass.h"
#include "onnx/onnx.h"

/* Triple and CPU spelled out: the same code whatever the host. */
static const char *const targets[2] = {"llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3",
                                       "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4"};

/* Touch the message: a status must always carry one. */
static void check_status(mlc_status s) {
  if (s && !mlc_status_message(s)[0]) __builtin_trap();
  mlc_status_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlc_onnx_model *om = NULL;
  mlc_module *gm = NULL;
  mlc_target *t = NULL;
  mlc_status s = mlc_onnx_load_bytes(data, size, NULL, &om);
  if (!s) s = mlc_fe_import(om, NULL, &gm);
  mlc_onnx_model_destroy(om);
  if (s) {
    check_status(s);
    return 0;
  }
  s = mlc_target_parse(targets[size % 2], &t);
  if (!s) {
    mlc_pipeline_options popt = {0};
    popt.vector_bits = (int)t->vector_bits;
    mlc_pass_ctx pctx = {1, NULL, NULL, NULL, &popt, NULL, NULL};
    s = mlc_pipeline_run(gm, &pctx);
  }
  if (!s && gm->prims) {
    char *ir = NULL;
    s = mlc_cg_emit_llvm_ir(gm->prims, t, 0, &ir);
    mlc_cg_free(ir);
  }
  check_status(s);
  mlc_target_destroy(t);
  mlc_module_destroy(gm);
  return 0;
}
