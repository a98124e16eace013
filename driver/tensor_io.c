/*
** tensor_io.c: tensors in files, for `mlc-onnx run` and tests.
**
** Reads NumPy .npy and ONNX TensorProto .pb files into DLTensors that own
** their data (mlc_tensor_read_file, chosen by the file's content).  The
** .npy side, writing .npy and the random tensors are tensor_npy.c's
** (libmlcnpy, which the deploy-side runner links without protobuf).
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/driver_int.h"
#include "driver/tensor_npy.h"
#include "mlc/mlc.h"
#include "onnx/onnx.h"

#include <dlpack/dlpack.h>

static DLDataType dl_of(mlc_dtype t, int *ok) {
  DLDataType d = {kDLFloat, 32, 1};
  *ok = 1;
  switch (t) {
    case MLC_DTYPE_F32: break;
    case MLC_DTYPE_F64: d.bits = 64; break;
    case MLC_DTYPE_F16: d.bits = 16; break;
    case MLC_DTYPE_BF16: d.code = kDLBfloat; d.bits = 16; break;
    case MLC_DTYPE_I8: d.code = kDLInt; d.bits = 8; break;
    case MLC_DTYPE_I16: d.code = kDLInt; d.bits = 16; break;
    case MLC_DTYPE_I32: d.code = kDLInt; d.bits = 32; break;
    case MLC_DTYPE_I64: d.code = kDLInt; d.bits = 64; break;
    case MLC_DTYPE_U8: d.code = kDLUInt; d.bits = 8; break;
    case MLC_DTYPE_U16: d.code = kDLUInt; d.bits = 16; break;
    case MLC_DTYPE_U32: d.code = kDLUInt; d.bits = 32; break;
    case MLC_DTYPE_U64: d.code = kDLUInt; d.bits = 64; break;
    case MLC_DTYPE_BOOL: d.code = DL_BOOL; d.bits = 8; break;
    default: *ok = 0;
  }
  return d;
}

/* Copies the loaded tensor |t| of |h| (freed here) into a DLTensor. */
static mlc_status from_pb(const char *path, mlc_onnx_tensor_file *h, const mlc_onnx_tensor *t,
                          DLTensor **out) {
  int ok;
  DLDataType dt = dl_of(t->dtype, &ok);
  mlc_status s = NULL;
  if (!ok) {
    s = mlc_make_status(MLC_UNIMPLEMENTED, "%s: %s tensors are not supported as inputs", path,
                        mlc_dtype_name(t->dtype));
  } else {
    int overflow;
    DLTensor *o = mlc_drv_tensor_alloc(dt, t->rank, t->dims, &overflow);
    if (!o)
      s = overflow ? mlc_make_status(MLC_INVALID_ARGUMENT, "%s: shape too large", path) : mlc_oom();
    else {
      if (t->nbytes) memcpy(o->data, t->data, t->nbytes);
      *out = o;
    }
  }
  mlc_onnx_tensor_file_free(h);
  return s;
}

static mlc_status read_pb(const char *path, DLTensor **out) {
  mlc_onnx_tensor_file *h = NULL;
  const mlc_onnx_tensor *t = NULL;
  MLC_RETURN_IF_ERROR(mlc_onnx_load_tensor_file(path, &h, &t));
  return from_pb(path, h, t, out);
}

mlc_status mlc_drv_tensor_read_bytes(const void *data, size_t size, const char *name,
                                     DLTensor **out) {
  *out = NULL;
  if (size >= 6 && memcmp(data, "\x93NUMPY", 6) == 0) return mlc_drv_npy_read_bytes(data, size, name, out);
  mlc_onnx_tensor_file *h = NULL;
  const mlc_onnx_tensor *t = NULL;
  MLC_RETURN_IF_ERROR(mlc_onnx_load_tensor_bytes(data, size, NULL, name, &h, &t));
  return from_pb(name, h, t, out);
}

mlc_status mlc_tensor_read_file(const char *path, DLTensor **out) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return mlc_make_status(errno == ENOENT ? MLC_NOT_FOUND : MLC_IO_ERROR, "cannot open %s: %s",
                                 path, strerror(errno));
  unsigned char magic[6] = {0};
  size_t got = fread(magic, 1, 6, f);
  fclose(f);
  if (got == 6 && memcmp(magic, "\x93NUMPY", 6) == 0) return mlc_drv_npy_read_file(path, out);
  return read_pb(path, out);
}
