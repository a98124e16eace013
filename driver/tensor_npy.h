/*
** tensor_npy.h: tensors in NumPy .npy files and seeded random tensors
** (driver/tensor_npy.c, the library libmlcnpy).
**
** The part of mlc.h's "tensors in files" that needs base/ and libc alone:
** mlc_tensor_write_npy, mlc_tensor_random and mlc_tensor_free are defined
** there, and the .npy reader below.  libmlc links it (tensor_io.c adds the
** ONNX TensorProto reader and mlc_tensor_read_file), and so does the
** deploy-side runner mlc-run, which has no protobuf.
*/
#ifndef MLC_DRIVER_TENSOR_NPY_H
#define MLC_DRIVER_TENSOR_NPY_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "base/status.h"

/* DL_BOOL of DLPack >= 0.8 (Debian 12 ships 0.6). */
#ifndef DL_BOOL
#define DL_BOOL 6
#endif

/* A tensor of |dt| and |shape| (|ndim| dims, copied) with zeroed, 64-byte
** aligned data on the CPU; transferred (mlc_tensor_free).  NULL when out of
** memory, or (*|out_overflow| set) when the rank or the size is out of range. */
DLTensor *mlc_drv_tensor_alloc(DLDataType dt, int ndim, const int64_t *shape, int *out_overflow);

/* Reads a tensor from the bytes of a .npy file (|data|, |size| bytes,
** borrowed); |name| stands for the file in messages.  *|out| is transferred
** (mlc_tensor_free).  Bytes that are not a .npy file are an error. */
MLC_MUST_USE mlc_status mlc_drv_npy_read_bytes(const void *data, size_t size, const char *name,
                                              DLTensor **out);

/* Reads the .npy file |path| (borrowed), as mlc_drv_npy_read_bytes reads its
** bytes; a file that is missing, unreadable or not a .npy file is an error
** naming |path|.  *|out| is transferred (mlc_tensor_free). */
MLC_MUST_USE mlc_status mlc_drv_npy_read_file(const char *path, DLTensor **out);

#endif /* MLC_DRIVER_TENSOR_NPY_H */
