/*
** dtype.c: tables of dtype.h.
*/
#include "base/dtype.h"

#include <string.h>

static const char *const names[MLC_DTYPE_COUNT] = {
    "invalid",
#define X(e, n, b) n,
    MLC_DTYPES(X)
#undef X
};
static const unsigned char sizes[MLC_DTYPE_COUNT] = {
    0,
#define X(e, n, b) b,
    MLC_DTYPES(X)
#undef X
};

const char *mlc_dtype_name(mlc_dtype t) {
  return (unsigned)t < MLC_DTYPE_COUNT ? names[t] : "invalid";
}
size_t mlc_dtype_size(mlc_dtype t) { return (unsigned)t < MLC_DTYPE_COUNT ? sizes[t] : 0; }

mlc_dtype mlc_dtype_from_name(const char *name) {
  for (int i = 1; i < MLC_DTYPE_COUNT; i++)
    if (strcmp(names[i], name) == 0) return (mlc_dtype)i;
  return MLC_DTYPE_INVALID;
}

int mlc_dtype_is_float(mlc_dtype t) {
  return t == MLC_DTYPE_F32 || t == MLC_DTYPE_F64 || t == MLC_DTYPE_F16 || t == MLC_DTYPE_BF16;
}
int mlc_dtype_is_int(mlc_dtype t) { return t >= MLC_DTYPE_I8 && t <= MLC_DTYPE_U64; }
int mlc_dtype_is_signed(mlc_dtype t) {
  return mlc_dtype_is_float(t) || (t >= MLC_DTYPE_I8 && t <= MLC_DTYPE_I64);
}
