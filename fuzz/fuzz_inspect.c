/*
** fuzz_inspect.c: libFuzzer target for the ONNX loader and importer.
**
** Each input is the bytes of a .onnx file and goes the way mlc_inspect_file
** takes a file: the loader (protobuf unpacking, views, tensor data checks;
** external data is refused since there is no folder), the frontend's
** pre-flight check, the import with type and shape inference, and the
** report.  The report's format follows the input's size (size % 4: text,
** JSON, IR, DOT), so the mutator reaches every printer without a format
** byte that would shift the protobuf.  An error status is a fine answer;
** a crash, a leak, undefined behaviour or a hang is a finding.
*/
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "base/strbuf.h"
#include "driver/driver_int.h"
#include "fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const mlc_inspect_format formats[4] = {MLC_INSPECT_TEXT, MLC_INSPECT_JSON, MLC_INSPECT_IR,
                                                MLC_INSPECT_DOT};
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_status s = mlc_drv_inspect_onnx_bytes(data, size, "fuzz.onnx", formats[size % 4], &b);
  /* Touch the message: a status must always carry one. */
  if (s && !mlc_status_message(s)[0]) __builtin_trap();
  mlc_status_free(s);
  mlc_sb_fini(&b);
  return 0;
}
