/*
** fuzz_tensor.c: libFuzzer target for the tensor file readers of
** driver/tensor_io.c (`mlc-onnx run --input FILE`).
**
** Each input is the bytes of a .npy file (it starts with "\x93NUMPY") or
** of an ONNX TensorProto .pb file (anything else; external data is
** refused), read as mlc_tensor_read_file reads the file.  A tensor that
** loads is checked for a shape that matches its data and then freed.
*/
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "driver/driver_int.h"
#include "fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DLTensor *t = NULL;
  mlc_status s = mlc_drv_tensor_read_bytes(data, size, "fuzz.tensor", &t);
  if (s) {
    if (t || !mlc_status_message(s)[0]) __builtin_trap();
    mlc_status_free(s);
    return 0;
  }
  /* Read every byte the shape claims: ASan reports a buffer that is short. */
  size_t n = (size_t)(t->dtype.bits / 8) * t->dtype.lanes;
  for (int i = 0; i < t->ndim; i++) {
    if (t->shape[i] < 0) __builtin_trap();
    n *= (size_t)t->shape[i];
  }
  volatile uint8_t sink = 0;
  for (size_t i = 0; i < n; i++) sink ^= ((const uint8_t *)t->data)[i];
  (void)sink;
  mlc_tensor_free(t);
  return 0;
}
