/*
** tensor_npy.c: tensors in NumPy .npy files, and seeded random tensors
** (libmlcnpy: base/ and libc only, linked into libmlc and into the
** deploy-side runner mlc-run; tensor_io.c adds ONNX TensorProto files).
**
** Reads .npy (format 1.0-3.0, little-endian or byte-free dtypes, C order)
** into DLTensors that own their data; writes .npy; makes seeded random
** tensors (the inputs `mlc-onnx run` and mlc-run make up).
**
** .npy header: "\x93NUMPY" major minor len(u16 LE; u32 for >= 2.0) then a
** Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (1, 784), }
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/outfile.h"
#include "base/strbuf.h"
#include "driver/tensor_npy.h"
#include "mlc/mlc.h"

#include <dlpack/dlpack.h>

/* A DLTensor with its shape and data in one allocation. */
typedef struct owned_tensor {
  DLTensor t;
  int64_t shape[64];
  void *data;
} owned_tensor;

/* The element count of |shape| in *out_n; 0 when the rank or a dim is
** out of range or the byte size could overflow. */
static int shape_numel(int ndim, const int64_t *shape, size_t *out_n) {
  if (ndim < 0 || ndim > 64) return 0;
  size_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0 || (shape[i] && n > SIZE_MAX / 64 / (size_t)shape[i])) return 0;
    n *= (size_t)shape[i];
  }
  *out_n = n;
  return 1;
}

static owned_tensor *new_tensor(DLDataType dt, int ndim, const int64_t *shape, int *overflow) {
  size_t elem = (size_t)(dt.bits / 8) * dt.lanes, n;
  *overflow = !shape_numel(ndim, shape, &n);
  if (*overflow) return NULL;
  owned_tensor *o = mlc_mem_calloc(1, sizeof *o);
  if (!o) return NULL;
  o->data = mlc_mem_aligned_alloc(((n * elem) + 63) / 64 * 64 + 64, 64);
  if (!o->data) {
    mlc_mem_free(o);
    return NULL;
  }
  memset(o->data, 0, ((n * elem) + 63) / 64 * 64 + 64);
  if (ndim) memcpy(o->shape, shape, sizeof(int64_t) * (size_t)ndim);
  o->t.data = o->data;
  o->t.device.device_type = kDLCPU;
  o->t.ndim = ndim;
  o->t.dtype = dt;
  o->t.shape = o->shape;
  return o;
}

DLTensor *mlc_drv_tensor_alloc(DLDataType dt, int ndim, const int64_t *shape, int *out_overflow) {
  owned_tensor *o = new_tensor(dt, ndim, shape, out_overflow);
  return o ? &o->t : NULL;
}

static size_t tensor_bytes(const DLTensor *t) {
  size_t n = (size_t)(t->dtype.bits / 8) * t->dtype.lanes;
  for (int i = 0; i < t->ndim; i++) n *= (size_t)t->shape[i];
  return n;
}

void mlc_tensor_free(DLTensor *t) {
  if (!t) return;
  owned_tensor *o = (owned_tensor *)t;
  mlc_mem_aligned_free(o->data);
  mlc_mem_free(o);
}

static const struct {
  const char *descr;
  uint8_t code, bits;
} npy_types[] = {
    {"f4", kDLFloat, 32}, {"f8", kDLFloat, 64}, {"f2", kDLFloat, 16}, {"i1", kDLInt, 8},
    {"i2", kDLInt, 16},   {"i4", kDLInt, 32},   {"i8", kDLInt, 64},   {"u1", kDLUInt, 8},
    {"u2", kDLUInt, 16},  {"u4", kDLUInt, 32},  {"u8", kDLUInt, 64},  {"b1", DL_BOOL, 8},
};

/* Finds 'key': in |h| and returns the text after the colon, or NULL. */
static const char *dict_value(const char *h, const char *key) {
  char pat[32];
  snprintf(pat, sizeof pat, "'%s'", key);
  const char *p = strstr(h, pat);
  if (!p) return NULL;
  p += strlen(pat);
  while (*p == ' ') p++;
  if (*p != ':') return NULL;
  p++;
  while (*p == ' ') p++;
  return p;
}

static mlc_status read_npy(const char *path, const unsigned char *b, size_t size, DLTensor **out) {
  if (size < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: not a .npy file (bad magic)", path);
  int major = b[6];
  size_t hlen, off;
  if (major == 1) {
    hlen = (size_t)b[8] | (size_t)b[9] << 8;
    off = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: truncated .npy header", path);
    hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    off = 12;
  } else {
    return mlc_make_status(MLC_UNIMPLEMENTED, "%s: .npy format version %d not supported", path, major);
  }
  if (hlen > size - off) return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: truncated .npy header", path);
  char *h = mlc_mem_alloc(hlen + 1);
  if (!h) return mlc_oom();
  memcpy(h, b + off, hlen);
  h[hlen] = 0;
  mlc_status s = NULL;
  const char *d = dict_value(h, "descr"), *fo = dict_value(h, "fortran_order"),
             *sh = dict_value(h, "shape");
  /* descr is a quoted string: its closing quote bounds every read of it. */
  const char *q = d && *d == '\'' ? strchr(d + 1, '\'') : NULL;
  if (!q || !fo || !sh || *sh != '(') {
    s = mlc_make_status(MLC_INVALID_ARGUMENT, "%s: malformed .npy header", path);
    goto done;
  }
  if (strncmp(fo, "False", 5) != 0) {
    s = mlc_make_status(MLC_UNIMPLEMENTED, "%s: Fortran-order arrays are not supported", path);
    goto done;
  }
  /* 'Ecc': byte order E, type code cc. */
  char endian = q == d + 4 ? d[1] : 0;
  int ti = -1;
  for (size_t i = 0; endian && i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (strncmp(d + 2, npy_types[i].descr, 2) == 0) ti = (int)i;
  if (ti < 0 || endian == '>' || (endian != '<' && endian != '|' && endian != '=')) {
    s = mlc_make_status(MLC_UNIMPLEMENTED, "%s: numpy dtype %.*s not supported", path,
                        (int)(q - d + 1), d);
    goto done;
  }
  int64_t shape[64];
  int ndim = 0;
  const char *p = sh + 1;
  for (;;) {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') break;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno || v < 0 || ndim == 64) {
      s = mlc_make_status(MLC_INVALID_ARGUMENT, "%s: bad shape in .npy header", path);
      goto done;
    }
    shape[ndim++] = v;
    p = end;
  }
  DLDataType dt = {npy_types[ti].code, npy_types[ti].bits, 1};
  /* The data must be there before the tensor is allocated: a header of a
  ** few bytes may claim gigabytes. */
  size_t numel;
  if (!shape_numel(ndim, shape, &numel)) {
    s = mlc_make_status(MLC_INVALID_ARGUMENT, "%s: shape too large", path);
    goto done;
  }
  size_t need = numel * (npy_types[ti].bits / 8);
  if (size - off - hlen < need) {
    s = mlc_make_status(MLC_INVALID_ARGUMENT, "%s: .npy data has %zu bytes, shape needs %zu", path,
                        size - off - hlen, need);
    goto done;
  }
  int overflow;
  owned_tensor *o = new_tensor(dt, ndim, shape, &overflow);
  if (!o) {
    s = overflow ? mlc_make_status(MLC_INVALID_ARGUMENT, "%s: shape too large", path) : mlc_oom();
    goto done;
  }
  memcpy(o->data, b + off + hlen, need);
  *out = &o->t;
done:
  mlc_mem_free(h);
  return s;
}

mlc_status mlc_drv_npy_read_bytes(const void *data, size_t size, const char *name, DLTensor **out) {
  *out = NULL;
  return read_npy(name, data, size, out);
}

mlc_status mlc_drv_npy_read_file(const char *path, DLTensor **out) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return mlc_make_status(errno == ENOENT ? MLC_NOT_FOUND : MLC_IO_ERROR, "cannot open %s: %s",
                                 path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: not a regular file", path);
  }
  long size = (long)st.st_size;
  if (size < 0 || size > (1L << 31)) {
    fclose(f);
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: file too large", path);
  }
  unsigned char *b = mlc_mem_alloc((size_t)size + 1);
  if (!b || fread(b, 1, (size_t)size, f) != (size_t)size) {
    mlc_mem_free(b);
    fclose(f);
    return mlc_make_status(MLC_IO_ERROR, "cannot read %s", path);
  }
  fclose(f);
  mlc_status s = read_npy(path, b, (size_t)size, out);
  mlc_mem_free(b);
  return s;
}

mlc_status mlc_tensor_write_npy(const char *path, const DLTensor *t) {
  const char *descr = NULL;
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (npy_types[i].code == t->dtype.code && npy_types[i].bits == t->dtype.bits) descr = npy_types[i].descr;
  if (!descr || t->dtype.lanes != 1)
    return mlc_make_status(MLC_UNIMPLEMENTED, "%s: this dtype has no .npy form", path);
  mlc_strbuf h = MLC_STRBUF_INIT;
  mlc_sb_printf(&h, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                descr[1] == '1' ? '|' : '<', descr);
  for (int i = 0; i < t->ndim; i++) mlc_sb_printf(&h, "%lld, ", (long long)t->shape[i]);
  if (t->ndim > 1) h.len -= 2, h.data[h.len] = 0;
  if (t->ndim == 1) h.len -= 1, h.data[h.len] = 0;
  mlc_sb_puts(&h, "), }");
  while ((10 + h.len + 1) % 64) mlc_sb_putc(&h, ' ');
  mlc_sb_putc(&h, '\n');
  if (h.oom) {
    mlc_sb_fini(&h);
    return mlc_oom();
  }
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(h.len & 0xff),
                           (unsigned char)(h.len >> 8)};
  size_t nb = tensor_bytes(t);
  mlc_outfile f;
  mlc_status s = mlc_out_open(&f, path, 0);
  if (!s) s = mlc_out_write(&f, pre, 10);
  if (!s) s = mlc_out_write(&f, h.data, h.len);
  if (!s && nb) s = mlc_out_write(&f, (const char *)t->data + t->byte_offset, nb);
  mlc_sb_fini(&h);
  if (s) {
    mlc_out_abort(&f);
    return s;
  }
  return mlc_out_commit(&f);
}

/* splitmix64 */
static uint64_t next_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

mlc_status mlc_tensor_random(DLDataType dt, int ndim, const int64_t *shape, uint64_t seed,
                             DLTensor **out) {
  int overflow;
  owned_tensor *o = new_tensor(dt, ndim, shape, &overflow);
  if (!o) return overflow ? mlc_make_status(MLC_INVALID_ARGUMENT, "shape too large") : mlc_oom();
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
  uint64_t st = seed;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = next_rand(&st);
    double u = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
    if (dt.code == kDLFloat && dt.bits == 32) ((float *)o->data)[i] = (float)(u * 2 - 1);
    else if (dt.code == kDLFloat && dt.bits == 64) ((double *)o->data)[i] = u * 2 - 1;
    else if (dt.code == DL_BOOL) ((uint8_t *)o->data)[i] = r & 1;
    else if (dt.code == kDLInt || dt.code == kDLUInt) {
      int64_t v = (int64_t)(r % 10);
      switch (dt.bits) {
        case 8: ((int8_t *)o->data)[i] = (int8_t)v; break;
        case 16: ((int16_t *)o->data)[i] = (int16_t)v; break;
        case 32: ((int32_t *)o->data)[i] = (int32_t)v; break;
        default: ((int64_t *)o->data)[i] = v; break;
      }
    } else if (dt.bits == 16) { /* float16 / bfloat16: small values via bit patterns */
      float f = (float)(u * 2 - 1);
      uint32_t b;
      memcpy(&b, &f, 4);
      uint16_t h = dt.code == kDLBfloat ? (uint16_t)(b >> 16) : 0;
      if (dt.code != kDLBfloat) { /* float16 from float (values in [-1, 1)) */
        uint32_t sign = (b >> 16) & 0x8000;
        int e = (int)((b >> 23) & 0xff) - 127 + 15;
        h = e <= 0 ? (uint16_t)sign : (uint16_t)(sign | (uint32_t)e << 10 | ((b >> 13) & 0x3ff));
      }
      ((uint16_t *)o->data)[i] = h;
    }
  }
  *out = &o->t;
  return NULL;
}
