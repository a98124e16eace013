/*
** onnx_tensor.c: TensorProto -> mlc_onnx_tensor.
**
** A TensorProto holds its data in exactly one of: raw_data (little-endian
** bytes), one typed field (float_data, int32_data, int64_data, double_data,
** uint64_data, string_data: which one depends on the data type) or an
** external file.  This file maps the data type, checks the dims and the
** element count, checks the size of whichever source is used against the
** shape, and decodes it into a 64-byte aligned native array.
*/
#include "onnx/onnx_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- data types ----------------------------------------------------------- */

/* TensorProto.DataType codes, in code order (ORDER DATATYPE). */
static const struct {
  const char *name;
  mlc_dtype dtype;
} onnx_types[] = {
    {"UNDEFINED", MLC_DTYPE_INVALID},      /* 0 */
    {"FLOAT", MLC_DTYPE_F32},              /* 1 */
    {"UINT8", MLC_DTYPE_U8},               /* 2 */
    {"INT8", MLC_DTYPE_I8},                /* 3 */
    {"UINT16", MLC_DTYPE_U16},             /* 4 */
    {"INT16", MLC_DTYPE_I16},              /* 5 */
    {"INT32", MLC_DTYPE_I32},              /* 6 */
    {"INT64", MLC_DTYPE_I64},              /* 7 */
    {"STRING", MLC_DTYPE_STRING},          /* 8 */
    {"BOOL", MLC_DTYPE_BOOL},              /* 9 */
    {"FLOAT16", MLC_DTYPE_F16},            /* 10 */
    {"DOUBLE", MLC_DTYPE_F64},             /* 11 */
    {"UINT32", MLC_DTYPE_U32},             /* 12 */
    {"UINT64", MLC_DTYPE_U64},             /* 13 */
    {"COMPLEX64", MLC_DTYPE_INVALID},      /* 14 */
    {"COMPLEX128", MLC_DTYPE_INVALID},     /* 15 */
    {"BFLOAT16", MLC_DTYPE_BF16},          /* 16 */
    {"FLOAT8E4M3FN", MLC_DTYPE_INVALID},   /* 17 */
    {"FLOAT8E4M3FNUZ", MLC_DTYPE_INVALID}, /* 18 */
    {"FLOAT8E5M2", MLC_DTYPE_INVALID},     /* 19 */
    {"FLOAT8E5M2FNUZ", MLC_DTYPE_INVALID}, /* 20 */
    {"UINT4", MLC_DTYPE_INVALID},          /* 21 */
    {"INT4", MLC_DTYPE_INVALID},           /* 22 */
    {"FLOAT4E2M1", MLC_DTYPE_INVALID},     /* 23 */
    {"FLOAT8E8M0", MLC_DTYPE_INVALID},     /* 24 */
};
#define NTYPES ((int)(sizeof onnx_types / sizeof onnx_types[0]))

mlc_dtype mlc_onnx_dtype(int onnx_type) {
  return onnx_type >= 0 && onnx_type < NTYPES ? onnx_types[onnx_type].dtype : MLC_DTYPE_INVALID;
}

const char *mlc_onnx_value_kind_name(mlc_onnx_value_kind k) {
  switch (k) {
    case MLC_ONNX_VALUE_TENSOR: return "tensor";
    case MLC_ONNX_VALUE_SEQUENCE: return "sequence";
    case MLC_ONNX_VALUE_MAP: return "map";
    case MLC_ONNX_VALUE_OPTIONAL: return "optional";
    case MLC_ONNX_VALUE_SPARSE_TENSOR: return "sparse_tensor";
    case MLC_ONNX_VALUE_UNKNOWN: break;
  }
  return "unknown";
}

const char *mlc_onnx_dtype_name(int onnx_type) {
  return onnx_type >= 0 && onnx_type < NTYPES ? onnx_types[onnx_type].name : "UNKNOWN";
}

const char *mlc_onnx_shape_str(char *buf, size_t n, const int64_t *dims, size_t rank) {
  size_t k = 0;
  if (n == 0) return buf;
  buf[0] = 0;
  k += (size_t)snprintf(buf + k, n - k, "(");
  for (size_t i = 0; i < rank && k < n; i++) {
    if (i == 8 && rank > 10) {
      k += (size_t)snprintf(buf + k, n - k, ", ... %zu dims", rank);
      break;
    }
    k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)dims[i]);
  }
  if (k < n) snprintf(buf + k, n - k, ")");
  return buf;
}

/* ---- data sources ----------------------------------------------------------- */

typedef enum {
  SRC_RAW,
  SRC_FLOAT,
  SRC_INT32,
  SRC_INT64,
  SRC_DOUBLE,
  SRC_UINT64,
  SRC_STRING,
  SRC_EXTERNAL,
  SRC_COUNT
} source;

static const char *const source_names[SRC_COUNT] = {
    "raw_data", "float_data", "int32_data", "int64_data",
    "double_data", "uint64_data", "string_data", "external data"};

/* The typed field that holds |dt|. */
static source typed_source(mlc_dtype dt) {
  switch (dt) {
    case MLC_DTYPE_F32: return SRC_FLOAT;
    case MLC_DTYPE_F64: return SRC_DOUBLE;
    case MLC_DTYPE_I64: return SRC_INT64;
    case MLC_DTYPE_U32:
    case MLC_DTYPE_U64: return SRC_UINT64;
    case MLC_DTYPE_STRING: return SRC_STRING;
    default: return SRC_INT32; /* int8/16/32, uint8/16, bool, float16, bfloat16 */
  }
}

static size_t typed_count(const Onnx__TensorProto *tp, source s) {
  switch (s) {
    case SRC_FLOAT: return tp->n_float_data;
    case SRC_INT32: return tp->n_int32_data;
    case SRC_INT64: return tp->n_int64_data;
    case SRC_DOUBLE: return tp->n_double_data;
    case SRC_UINT64: return tp->n_uint64_data;
    case SRC_STRING: return tp->n_string_data;
    default: return 0;
  }
}

/* Raw and external data are little-endian; swap to native order. */
static void to_native(void *p, size_t nbytes, size_t esize) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  unsigned char *b = p;
  for (size_t i = 0; esize > 1 && i + esize <= nbytes; i += esize)
    for (size_t j = 0; j < esize / 2; j++) {
      unsigned char t = b[i + j];
      b[i + j] = b[i + esize - 1 - j];
      b[i + esize - 1 - j] = t;
    }
#else
  (void)p;
  (void)nbytes;
  (void)esize;
#endif
}

static int little_endian_host(void) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return 0;
#else
  return 1;
#endif
}

/* A fresh aligned buffer of |n| bytes, owned by |c|. */
static mlc_status new_buffer(mlc_onnx_ctx *c, size_t n, void **out) {
  void *p = mlc_onnx_aligned_alloc(n);
  if (!p) return mlc_oom();
  MLC_RETURN_IF_ERROR(mlc_onnx_ctx_own(c, p));
  *out = p;
  return NULL;
}

/* raw_data: adopt the block when it is aligned, else copy it. */
static mlc_status decode_raw(mlc_onnx_ctx *c, Onnx__TensorProto *tp, size_t esize,
                             mlc_onnx_tensor *t) {
  void *src = tp->raw_data.data;
  if (((uintptr_t)src % MLC_ONNX_ALIGN) == 0 && little_endian_host()) {
    tp->raw_data.data = NULL; /* adopted: protobuf-c must not free it */
    tp->raw_data.len = 0;
    tp->has_raw_data = 0;
    MLC_RETURN_IF_ERROR(mlc_onnx_ctx_own(c, src));
    t->data = src;
    return NULL;
  }
  void *dst = NULL;
  MLC_RETURN_IF_ERROR(new_buffer(c, t->nbytes, &dst));
  memcpy(dst, src, t->nbytes);
  to_native(dst, t->nbytes, esize);
  t->data = dst;
  return NULL;
}

/* Typed fields: one stored value per element, narrowed to the dtype. */
static mlc_status decode_typed(mlc_onnx_ctx *c, const Onnx__TensorProto *tp, source s,
                               mlc_onnx_tensor *t) {
  size_t n = (size_t)t->numel;
  if (s == SRC_STRING) {
    char **strs = MLC_ARENA_ARRAY(c->arena, n, char *);
    size_t *lens = MLC_ARENA_ARRAY(c->arena, n, size_t);
    if (!strs || !lens) return mlc_oom();
    for (size_t i = 0; i < n; i++) {
      const ProtobufCBinaryData *b = &tp->string_data[i];
      strs[i] = mlc_arena_strndup(c->arena, b->len ? (const char *)b->data : "", b->len);
      if (!strs[i]) return mlc_oom(); /* embedded NULs are kept: lens[i] counts them */
      lens[i] = b->len;
    }
    t->strings = (const char *const *)strs;
    t->string_lens = lens;
    return NULL;
  }
  void *dst = NULL;
  MLC_RETURN_IF_ERROR(new_buffer(c, t->nbytes, &dst));
  t->data = dst;
  switch (t->dtype) {
    case MLC_DTYPE_F32: memcpy(dst, tp->float_data, n * sizeof(float)); break;
    case MLC_DTYPE_F64: memcpy(dst, tp->double_data, n * sizeof(double)); break;
    case MLC_DTYPE_I64: memcpy(dst, tp->int64_data, n * sizeof(int64_t)); break;
    case MLC_DTYPE_U64: memcpy(dst, tp->uint64_data, n * sizeof(uint64_t)); break;
    case MLC_DTYPE_U32:
      for (size_t i = 0; i < n; i++) ((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
      break;
    case MLC_DTYPE_I32: memcpy(dst, tp->int32_data, n * sizeof(int32_t)); break;
    case MLC_DTYPE_I16:
      for (size_t i = 0; i < n; i++) ((int16_t *)dst)[i] = (int16_t)tp->int32_data[i];
      break;
    case MLC_DTYPE_I8:
      for (size_t i = 0; i < n; i++) ((int8_t *)dst)[i] = (int8_t)tp->int32_data[i];
      break;
    case MLC_DTYPE_U8:
      for (size_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = (uint8_t)tp->int32_data[i];
      break;
    case MLC_DTYPE_BOOL:
      for (size_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = tp->int32_data[i] != 0;
      break;
    case MLC_DTYPE_U16:
    case MLC_DTYPE_F16:
    case MLC_DTYPE_BF16: /* float16 and bfloat16 travel as uint16 bit patterns */
      for (size_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = (uint16_t)tp->int32_data[i];
      break;
    default:
      return mlc_make_status(MLC_INTERNAL, "tensor \"%s\": no typed decoder for %s", t->name,
                             mlc_dtype_name(t->dtype));
  }
  return NULL;
}

/* Parses a non-negative decimal integer (digits only, fits int64). */
static int parse_u63(const char *s, uint64_t *out) {
  uint64_t v = 0;
  if (!s || !*s) return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    unsigned d = (unsigned)(*s - '0');
    if (v > ((uint64_t)INT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* external_data = { key, value }: location (required), offset, length, checksum. */
static mlc_status decode_external(mlc_onnx_ctx *c, const Onnx__TensorProto *tp, const char *what,
                                  size_t esize, const char *shape, mlc_onnx_tensor *t) {
  const char *location = NULL, *offset_s = NULL, *length_s = NULL;
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const char *k = tp->external_data[i]->key ? tp->external_data[i]->key : "";
    const char *v = tp->external_data[i]->value ? tp->external_data[i]->value : "";
    const char **slot = strcmp(k, "location") == 0 ? &location
                        : strcmp(k, "offset") == 0 ? &offset_s
                        : strcmp(k, "length") == 0 ? &length_s
                                                   : NULL;
    if (!slot) continue; /* checksum and unknown keys are ignored */
    if (*slot)
      return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: external data key \"%s\" given twice",
                             what, k);
    *slot = v;
  }
  if (!location)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: external data has no \"location\"", what);
  uint64_t offset = 0, length = 0;
  if (offset_s && parse_u63(offset_s, &offset))
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: external data offset \"%s\" (in \"%s\") is not a non-negative "
                           "decimal integer",
                           what, offset_s, location);
  if (length_s && parse_u63(length_s, &length))
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: external data length \"%s\" (in \"%s\") is not a non-negative "
                           "decimal integer",
                           what, length_s, location);
  int fd;
  uint64_t fsize;
  MLC_RETURN_IF_ERROR(mlc_onnx_open_external(c, what, location, &fd, &fsize));
  mlc_status s = NULL;
  if (offset > fsize) {
    s = mlc_make_status(MLC_INVALID_ARGUMENT,
                        "%s: external data offset %llu is past the end of \"%s\" (%llu bytes)",
                        what, (unsigned long long)offset, location, (unsigned long long)fsize);
  } else if (length_s && length > fsize - offset) {
    s = mlc_make_status(MLC_INVALID_ARGUMENT,
                        "%s: external data at offset %llu, length %llu runs past the end of "
                        "\"%s\" (%llu bytes)",
                        what, (unsigned long long)offset, (unsigned long long)length, location,
                        (unsigned long long)fsize);
  } else {
    if (!length_s) length = fsize - offset;
    if (length != (uint64_t)t->nbytes)
      s = mlc_make_status(MLC_INVALID_ARGUMENT,
                          "%s: external data in \"%s\" has %llu bytes, shape %s %s needs %zu",
                          what, location, (unsigned long long)length, shape,
                          mlc_dtype_name(t->dtype), t->nbytes);
  }
  if (!s && t->nbytes > 0) {
    void *dst = NULL;
    s = new_buffer(c, t->nbytes, &dst);
    if (!s) s = mlc_onnx_pread_all(fd, dst, t->nbytes, offset, what, location);
    if (!s) {
      to_native(dst, t->nbytes, esize);
      t->data = dst;
    }
  }
  close(fd);
  return s;
}

/* ---- the tensor ------------------------------------------------------------ */

mlc_status mlc_onnx_tensor_build(mlc_onnx_ctx *c, Onnx__TensorProto *tp, const char *what,
                                 mlc_onnx_tensor *t) {
  memset(t, 0, sizeof *t);
  t->name = mlc_arena_strdup(c->arena, tp->name ? tp->name : "");
  if (!t->name) return mlc_oom();
  int code = tp->has_data_type ? tp->data_type : 0;
  t->onnx_type = code;
  if (code == 0)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: data_type is missing (UNDEFINED)", what);
  t->dtype = mlc_onnx_dtype(code);
  if (t->dtype == MLC_DTYPE_INVALID)
    return mlc_make_status(code > 0 ? MLC_UNIMPLEMENTED : MLC_INVALID_ARGUMENT,
                           "%s: data type %s (%d) is not supported", what,
                           mlc_onnx_dtype_name(code), code);
  if (tp->segment)
    return mlc_make_status(MLC_UNIMPLEMENTED, "%s: segmented tensors are not supported", what);

  /* dims and element count */
  if (tp->n_dims > INT_MAX)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: %zu dims is too many", what, tp->n_dims);
  t->rank = (int)tp->n_dims;
  char shape[160];
  mlc_onnx_shape_str(shape, sizeof shape, tp->dims, tp->n_dims);
  int any_zero = 0;
  for (size_t i = 0; i < tp->n_dims; i++) {
    if (tp->dims[i] < 0)
      return mlc_make_status(MLC_INVALID_ARGUMENT,
                             "%s: dim %zu of shape %s is negative (dims must be >= 0)", what, i,
                             shape);
    if (tp->dims[i] == 0) any_zero = 1;
  }
  int64_t numel = 1;
  if (any_zero) {
    numel = 0;
  } else {
    for (size_t i = 0; i < tp->n_dims; i++) {
      if (numel > INT64_MAX / tp->dims[i])
        return mlc_make_status(MLC_INVALID_ARGUMENT,
                               "%s: the element count of shape %s overflows", what, shape);
      numel *= tp->dims[i];
    }
  }
  size_t esize = mlc_dtype_size(t->dtype);
  size_t nbytes;
  int too_big = mlc_mul_size((size_t)numel, esize, &nbytes) != 0;
#if SIZE_MAX < INT64_MAX
  too_big |= (uint64_t)numel > SIZE_MAX;
#endif
  if (too_big)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: the byte size of shape %s %s overflows",
                           what, shape, mlc_dtype_name(t->dtype));
  if (tp->n_dims) {
    int64_t *dims = MLC_ARENA_ARRAY(c->arena, tp->n_dims, int64_t);
    if (!dims) return mlc_oom();
    memcpy(dims, tp->dims, tp->n_dims * sizeof *dims);
    t->dims = dims;
  }
  t->numel = numel;
  t->nbytes = nbytes;

  /* exactly one data source */
  int external = 0;
  if (tp->has_data_location) {
    if (tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
      external = 1;
    else if (tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT)
      return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: unknown data_location %d", what,
                             (int)tp->data_location);
  }
  if (!external && tp->n_external_data)
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: external_data is given but data_location is not EXTERNAL", what);
  int given[SRC_COUNT] = {0}, ngiven = 0;
  given[SRC_RAW] = tp->has_raw_data;
  for (int s = SRC_FLOAT; s <= SRC_STRING; s++) given[s] = typed_count(tp, (source)s) > 0;
  given[SRC_EXTERNAL] = external;
  source src = SRC_COUNT, other = SRC_COUNT;
  for (int s = 0; s < SRC_COUNT; s++) {
    if (!given[s]) continue;
    ngiven++;
    if (src == SRC_COUNT)
      src = (source)s;
    else if (other == SRC_COUNT)
      other = (source)s;
  }
  if (ngiven > 1)
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: data is given in both %s and %s (exactly one source allowed)",
                           what, source_names[src], source_names[other]);
  if (ngiven == 0) {
    if (numel == 0) {
      if (t->dtype == MLC_DTYPE_STRING) {
        t->strings = MLC_ARENA_ARRAY(c->arena, 1, const char *);
        t->string_lens = MLC_ARENA_ARRAY(c->arena, 1, size_t);
        if (!t->strings || !t->string_lens) return mlc_oom();
      }
      return NULL;
    }
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: shape %s %s has %lld elements but no data",
                           what, shape, mlc_dtype_name(t->dtype), (long long)numel);
  }
  if (t->dtype == MLC_DTYPE_STRING && (src == SRC_RAW || src == SRC_EXTERNAL))
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: STRING tensors must hold their data in string_data, not %s", what,
                           source_names[src]);

  switch (src) {
    case SRC_RAW:
      if (tp->raw_data.len != nbytes)
        return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: raw_data has %zu bytes, shape %s %s "
                               "needs %zu",
                               what, tp->raw_data.len, shape, mlc_dtype_name(t->dtype), nbytes);
      return nbytes ? decode_raw(c, tp, esize, t) : NULL;
    case SRC_EXTERNAL:
      return decode_external(c, tp, what, esize, shape, t);
    default: {
      source want = typed_source(t->dtype);
      if (src != want)
        return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: %s given for a %s tensor (expects %s)",
                               what, source_names[src], mlc_onnx_dtype_name(code),
                               source_names[want]);
      size_t n = typed_count(tp, src);
      if ((uint64_t)n != (uint64_t)numel)
        return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: %s has %zu values, shape %s %s needs "
                               "%lld",
                               what, source_names[src], n, shape, mlc_dtype_name(t->dtype),
                               (long long)numel);
      return decode_typed(c, tp, src, t);
    }
  }
}
