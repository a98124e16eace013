/*
** dtype.h: element types shared by every stage.
**
** The enum values are the project's own; onnx/ maps ONNX TensorProto codes to
** them and runtime/ maps them to DLPack's DLDataType.
*/
#ifndef MLC_BASE_DTYPE_H
#define MLC_BASE_DTYPE_H

#include <stddef.h>

/* X(ENUM, name, bytes) -- ORDER DTYPE */
#define MLC_DTYPES(X)   \
  X(F32, "float32", 4)  \
  X(F64, "float64", 8)  \
  X(F16, "float16", 2)  \
  X(BF16, "bfloat16", 2)\
  X(I8, "int8", 1)      \
  X(I16, "int16", 2)    \
  X(I32, "int32", 4)    \
  X(I64, "int64", 8)    \
  X(U8, "uint8", 1)     \
  X(U16, "uint16", 2)   \
  X(U32, "uint32", 4)   \
  X(U64, "uint64", 8)   \
  X(BOOL, "bool", 1)    \
  X(STRING, "string", 0)

typedef enum mlc_dtype {
  MLC_DTYPE_INVALID = 0,
#define X(e, n, b) MLC_DTYPE_##e,
  MLC_DTYPES(X)
#undef X
  MLC_DTYPE_COUNT
} mlc_dtype;

/* "float32", ...; "invalid" for out-of-range values. */
const char *mlc_dtype_name(mlc_dtype t);
/* Bytes per element (0 for string and invalid). */
size_t mlc_dtype_size(mlc_dtype t);
/* Parses a name from mlc_dtype_name; MLC_DTYPE_INVALID if unknown. */
mlc_dtype mlc_dtype_from_name(const char *name);
int mlc_dtype_is_float(mlc_dtype t);  /* f16, bf16, f32, f64 */
int mlc_dtype_is_int(mlc_dtype t);    /* signed or unsigned integers */
int mlc_dtype_is_signed(mlc_dtype t); /* signed ints and floats */

#endif /* MLC_BASE_DTYPE_H */
