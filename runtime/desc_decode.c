/*
** desc_decode.c: the blob of rt_blob.h -> an mlc_rt_model_desc.
**
** The input may be any bytes (a truncated or hostile model.so, a fuzzer's
** buffer): every read is bounds-checked against the blob, every count is
** checked against the room its table has before anything is allocated, and
** the result is one allocation holding the description, its tables and a
** copy of the string table.  libc only.
*/
#include "config.h"
#include "runtime/rt_alloc.h"
#include "runtime/rt_blob.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_SYMS, T_TENSORS, T_DIMS, T_INPUTS, T_OUTPUTS, T_STEPS, T_ARGS, T_EXTERNS, T_KERNELS,
       T_STRINGS, T_COUNT };

static const uint32_t rec_size[T_COUNT] = {40, 24, 8, 16, 8, 24, 16, 12, 4, 1};
static const char *const table_name[T_COUNT] = {"symbols", "tensors", "dims", "inputs", "outputs",
                                                "steps", "args", "externs", "kernels", "strings"};

typedef struct reader {
  const uint8_t *p;
  uint32_t size;
  uint32_t count[T_COUNT], off[T_COUNT];
  char *err;
  size_t errlen;
} reader;

static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static mlc_rt_status bad(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static mlc_rt_status bad(reader *r, const char *fmt, ...) {
  if (r->err && r->errlen) {
    int n = snprintf(r->err, r->errlen, "malformed model description: ");
    if (n >= 0 && (size_t)n < r->errlen) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  return MLC_RT_INVALID_ARGUMENT;
}

/* Record |i| of table |t| (i < count, checked by the caller's loop). */
static const uint8_t *rec(const reader *r, int t, uint32_t i) {
  return r->p + r->off[t] + (size_t)i * rec_size[t];
}

/* Checks string offset |s| of |what| (entry |i|); 0 ok. */
static int check_str(reader *r, uint32_t s, const char *what, uint32_t i) {
  uint32_t n = r->count[T_STRINGS];
  if (s >= n || !memchr(r->p + r->off[T_STRINGS] + s, 0, n - s)) {
    bad(r, "%s %u: string at %u is outside the %u-byte string table or not NUL-terminated", what,
        i, s, n);
    return -1;
  }
  return 0;
}

/* Rounds |n| up to a multiple of 8. */
static uint64_t up8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

/* Room before a decoded description for the allocator that made it (a
** multiple of 16, so the description keeps malloc's alignment). */
#define DESC_PREFIX ((sizeof(mlc_rt_allocator) + 15) & ~(size_t)15)

mlc_rt_status mlc_rt_desc_decode(const mlc_rt_allocator *a, const uint8_t *data, size_t n, const mlc_kernel_fn *fns,
                                 int32_t nfns, const uint8_t *weights, mlc_rt_model_desc **out,
                                 char *err, size_t errlen) {
  reader r;
  memset(&r, 0, sizeof r);
  r.err = err;
  r.errlen = errlen;
  if (err && errlen) err[0] = 0;
  if (!out) return bad(&r, "NULL output pointer");
  *out = NULL;
  if (!data) return bad(&r, "no data");
  if (n < MLC_RT_BLOB_HEADER_SIZE) return bad(&r, "%zu bytes, shorter than its header", n);
  if (memcmp(data, MLC_RT_BLOB_MAGIC, 8) != 0) return bad(&r, "bad magic");
  uint32_t version = rd32(data + 8), kabi = rd32(data + 12);
  if (version != MLC_RT_DESC_VERSION || kabi != MLC_RT_ABI_VERSION) {
    if (err && errlen)
      snprintf(err, errlen,
               "model description version %u / kernel ABI %u, but this runtime reads version %u / "
               "kernel ABI %u; recompile the model",
               version, kabi, MLC_RT_DESC_VERSION, MLC_RT_ABI_VERSION);
    return MLC_RT_ABI_MISMATCH;
  }
  uint32_t hsize = rd32(data + 16), total = rd32(data + 20);
  if (hsize != MLC_RT_BLOB_HEADER_SIZE) return bad(&r, "header size %u", hsize);
  if (total < hsize || total > n)
    return bad(&r, "claims %u bytes, but %zu are there", total, n);
  r.p = data;
  r.size = total;
  uint32_t blob_nfns = rd32(data + 24);
  if (blob_nfns > INT32_MAX) return bad(&r, "%u functions", blob_nfns);
  if (fns && (int64_t)blob_nfns != nfns)
    return bad(&r, "names %u functions, but the model has %d", blob_nfns, nfns);
  for (int t = 0; t < T_COUNT; t++) {
    r.count[t] = rd32(data + 48 + 8 * t);
    r.off[t] = rd32(data + 52 + 8 * t);
    if (r.count[t] > INT32_MAX || r.off[t] < hsize || r.off[t] > total ||
        r.count[t] > (total - r.off[t]) / rec_size[t])
      return bad(&r, "table %s (%u entries at offset %u) does not fit in %u bytes", table_name[t],
                 r.count[t], r.off[t], total);
  }
  uint32_t name = rd32(data + 28), manifest = rd32(data + 32), nstorages = rd32(data + 36);
  uint32_t device = rd32(data + 128);
  if (device != kDLCPU && device != kDLCUDA) return bad(&r, "device type %u (expected CPU or CUDA)", device);
  if (check_str(&r, name, "model name", 0)) return MLC_RT_INVALID_ARGUMENT;
  if (manifest != MLC_RT_BLOB_NONE && check_str(&r, manifest, "manifest", 0))
    return MLC_RT_INVALID_ARGUMENT;
  if (nstorages > INT32_MAX) return bad(&r, "%u storages", nstorages);

  /* Check every record before allocating. */
  for (uint32_t i = 0; i < r.count[T_SYMS]; i++) {
    const uint8_t *q = rec(&r, T_SYMS, i);
    uint32_t where = rd32(q + 4);
    if (check_str(&r, rd32(q), "symbol", i)) return MLC_RT_INVALID_ARGUMENT;
    if (where != MLC_RT_BLOB_NONE && check_str(&r, where, "symbol requirement", i))
      return MLC_RT_INVALID_ARGUMENT;
  }
  for (uint32_t i = 0; i < r.count[T_KERNELS]; i++)
    if (check_str(&r, rd32(rec(&r, T_KERNELS, i)), "kernel", i)) return MLC_RT_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < r.count[T_TENSORS]; i++) {
    const uint8_t *q = rec(&r, T_TENSORS, i);
    int32_t ndim = (int32_t)rd32(q + 4);
    uint32_t first = rd32(q + 12);
    if (ndim < 0 || ndim > MLC_RT_MAX_NDIM)
      return bad(&r, "tensor %u: rank %d", i, ndim);
    if ((uint64_t)first + (uint64_t)ndim > r.count[T_DIMS])
      return bad(&r, "tensor %u: dims %u..%u outside the %u dims", i, first, first + ndim,
                 r.count[T_DIMS]);
  }
  for (int io = 0; io < 2; io++) {
    int t = io ? T_OUTPUTS : T_INPUTS;
    for (uint32_t i = 0; i < r.count[t]; i++) {
      const uint8_t *q = rec(&r, t, i);
      int32_t tensor = (int32_t)rd32(q + 4);
      if (check_str(&r, rd32(q), io ? "output" : "input", i)) return MLC_RT_INVALID_ARGUMENT;
      if (tensor < 0 || (uint32_t)tensor >= r.count[T_TENSORS])
        return bad(&r, "%s %u: tensor %d out of range (%u tensors)", io ? "output" : "input", i,
                   tensor, r.count[T_TENSORS]);
    }
  }
  for (uint32_t i = 0; i < r.count[T_STEPS]; i++) {
    const uint8_t *q = rec(&r, T_STEPS, i);
    int32_t kind = (int32_t)rd32(q), fn = (int32_t)rd32(q + 12);
    uint32_t nargs = rd32(q + 16), first = rd32(q + 20);
    if (check_str(&r, rd32(q + 4), "step name", i) || check_str(&r, rd32(q + 8), "step label", i))
      return MLC_RT_INVALID_ARGUMENT;
    if (kind == MLC_RT_STEP_KERNEL ? fn < 0 || (uint32_t)fn >= blob_nfns : fn != -1)
      return bad(&r, "step %u: function index %d (%u functions)", i, fn, blob_nfns);
    if ((uint64_t)first + nargs > r.count[T_ARGS])
      return bad(&r, "step %u: args %u..%llu outside the %u args", i, first,
                 (unsigned long long)first + nargs, r.count[T_ARGS]);
  }
  for (uint32_t i = 0; i < r.count[T_EXTERNS]; i++) {
    const uint8_t *q = rec(&r, T_EXTERNS, i);
    int32_t fn = (int32_t)rd32(q + 4);
    uint32_t pl = rd32(q + 8);
    if (check_str(&r, rd32(q), "extern", i)) return MLC_RT_INVALID_ARGUMENT;
    if (pl == MLC_RT_BLOB_NONE) {
      if (fn < 0 || (uint32_t)fn >= blob_nfns)
        return bad(&r, "extern %u: function index %d (%u functions)", i, fn, blob_nfns);
      continue;
    }
    if (fn != -1) return bad(&r, "extern %u: both a function index and a plugin", i);
    if (check_str(&r, pl, "extern plugin", i)) return MLC_RT_INVALID_ARGUMENT;
    if (!mlc_rt_plain_file_name((const char *)r.p + r.off[T_STRINGS] + pl))
      return bad(&r, "extern %u: the plugin is not a plain file name", i);
  }

  /* One block: the struct, then each table, then the strings. */
  uint64_t o_syms = up8(sizeof(mlc_rt_model_desc));
  uint64_t o_symdefs = up8(o_syms + (uint64_t)r.count[T_SYMS] * sizeof(char *));
  uint64_t o_tensors = up8(o_symdefs + (uint64_t)r.count[T_SYMS] * sizeof(mlc_rt_sym_def));
  uint64_t o_dims = up8(o_tensors + (uint64_t)r.count[T_TENSORS] * sizeof(mlc_rt_tensor_desc));
  uint64_t o_in = up8(o_dims + (uint64_t)r.count[T_DIMS] * sizeof(int64_t));
  uint64_t o_out = up8(o_in + (uint64_t)r.count[T_INPUTS] * sizeof(mlc_rt_io_desc));
  uint64_t o_steps = up8(o_out + (uint64_t)r.count[T_OUTPUTS] * sizeof(mlc_rt_io_desc));
  uint64_t o_args = up8(o_steps + (uint64_t)r.count[T_STEPS] * sizeof(mlc_rt_step_desc));
  uint64_t o_ext = up8(o_args + (uint64_t)r.count[T_ARGS] * sizeof(mlc_rt_arg_desc));
  uint64_t o_plug = up8(o_ext + (uint64_t)r.count[T_EXTERNS] * sizeof(mlc_rt_extern_desc));
  uint64_t o_kern = up8(o_plug + (uint64_t)r.count[T_EXTERNS] * sizeof(char *));
  uint64_t o_str = up8(o_kern + (uint64_t)r.count[T_KERNELS] * sizeof(char *));
  uint64_t size = o_str + r.count[T_STRINGS] + 1;
  if (size > SIZE_MAX - DESC_PREFIX) return bad(&r, "too large for this machine");
  /* The allocator the block came from sits just before the description. */
  char *raw = mlc_rt_calloc(a, 1, (size_t)size + DESC_PREFIX);
  if (raw) {
    mlc_rt_allocator owner = {NULL, NULL};
    if (a) owner = *a;
    memcpy(raw, &owner, sizeof owner);
  }
  char *block = raw ? raw + DESC_PREFIX : NULL;
  if (!block) {
    if (err && errlen) snprintf(err, errlen, "out of memory decoding the model description");
    return MLC_RT_OUT_OF_MEMORY;
  }
  mlc_rt_model_desc *d = (mlc_rt_model_desc *)block;
  char *strings = block + o_str;
  memcpy(strings, data + r.off[T_STRINGS], r.count[T_STRINGS]);
#define STR(s) ((const char *)strings + (s))
  d->abi_version = version;
  d->kernel_abi = kabi;
  d->name = STR(name);
  d->manifest = manifest == MLC_RT_BLOB_NONE ? NULL : STR(manifest);
  d->nstorages = (int32_t)nstorages;
  d->weights_size = rd64(data + 40);
  d->device = (int32_t)device;
  d->weights = weights;

  const char **syms = (const char **)(block + o_syms);
  mlc_rt_sym_def *symdefs = (mlc_rt_sym_def *)(block + o_symdefs);
  for (uint32_t i = 0; i < r.count[T_SYMS]; i++) {
    const uint8_t *q = rec(&r, T_SYMS, i);
    uint32_t where = rd32(q + 4);
    syms[i] = STR(rd32(q));
    symdefs[i].where = where == MLC_RT_BLOB_NONE ? NULL : STR(where);
    symdefs[i].op = (int32_t)rd32(q + 8); /* checked by mlc_rt_model_open */
    symdefs[i].b_sym = (int32_t)rd32(q + 12);
    symdefs[i].a = (int64_t)rd64(q + 16);
    symdefs[i].b = (int64_t)rd64(q + 24);
    symdefs[i].bound = (int64_t)rd64(q + 32);
  }
  d->nsyms = (int32_t)r.count[T_SYMS];
  d->sym_names = r.count[T_SYMS] ? syms : NULL;
  d->sym_defs = r.count[T_SYMS] ? symdefs : NULL;

  int64_t *dims = (int64_t *)(block + o_dims);
  for (uint32_t i = 0; i < r.count[T_DIMS]; i++) dims[i] = (int64_t)rd64(rec(&r, T_DIMS, i));
  mlc_rt_tensor_desc *tensors = (mlc_rt_tensor_desc *)(block + o_tensors);
  for (uint32_t i = 0; i < r.count[T_TENSORS]; i++) {
    const uint8_t *q = rec(&r, T_TENSORS, i);
    mlc_rt_tensor_desc *t = &tensors[i];
    t->dtype.code = q[0];
    t->dtype.bits = q[1];
    t->dtype.lanes = (uint16_t)(q[2] | q[3] << 8);
    t->ndim = (int32_t)rd32(q + 4);
    t->storage = (int32_t)rd32(q + 8);
    t->dims = t->ndim ? dims + rd32(q + 12) : NULL;
    t->loc = (int64_t)rd64(q + 16);
  }
  d->ntensors = (int32_t)r.count[T_TENSORS];
  d->tensors = r.count[T_TENSORS] ? tensors : NULL;

  for (int io = 0; io < 2; io++) {
    int t = io ? T_OUTPUTS : T_INPUTS;
    mlc_rt_io_desc *v = (mlc_rt_io_desc *)(block + (io ? o_out : o_in));
    for (uint32_t i = 0; i < r.count[t]; i++) {
      v[i].name = STR(rd32(rec(&r, t, i)));
      v[i].tensor = (int32_t)rd32(rec(&r, t, i) + 4);
      /* a default's offset is checked by mlc_rt_model_open */
      uint64_t def = io ? UINT64_MAX : rd64(rec(&r, t, i) + 8);
      v[i].has_default = def != UINT64_MAX;
      v[i].default_loc = v[i].has_default ? (int64_t)def : 0;
    }
    if (io) d->noutputs = (int32_t)r.count[t], d->outputs = r.count[t] ? v : NULL;
    else d->ninputs = (int32_t)r.count[t], d->inputs = r.count[t] ? v : NULL;
  }

  mlc_rt_arg_desc *args = (mlc_rt_arg_desc *)(block + o_args);
  for (uint32_t i = 0; i < r.count[T_ARGS]; i++) {
    args[i].kind = (int32_t)rd32(rec(&r, T_ARGS, i));
    args[i].value = (int64_t)rd64(rec(&r, T_ARGS, i) + 8);
  }
  mlc_rt_step_desc *steps = (mlc_rt_step_desc *)(block + o_steps);
  for (uint32_t i = 0; i < r.count[T_STEPS]; i++) {
    const uint8_t *q = rec(&r, T_STEPS, i);
    mlc_rt_step_desc *st = &steps[i];
    st->kind = (int32_t)rd32(q);
    st->name = STR(rd32(q + 4));
    st->label = STR(rd32(q + 8));
    st->kernel = (int32_t)rd32(q + 12);
    st->fn = fns && st->kernel >= 0 ? fns[st->kernel] : NULL;
    st->nargs = (int32_t)rd32(q + 16);
    st->args = st->nargs ? args + rd32(q + 20) : NULL;
  }
  d->nsteps = (int32_t)r.count[T_STEPS];
  d->steps = r.count[T_STEPS] ? steps : NULL;

  mlc_rt_extern_desc *ext = (mlc_rt_extern_desc *)(block + o_ext);
  const char **plugins = (const char **)(block + o_plug);
  int32_t nplugins = 0;
  for (uint32_t i = 0; i < r.count[T_EXTERNS]; i++) {
    const uint8_t *q = rec(&r, T_EXTERNS, i);
    uint32_t pl = rd32(q + 8);
    ext[i].name = STR(rd32(q));
    ext[i].kernel = (int32_t)rd32(q + 4);
    ext[i].plugin = NULL;
    ext[i].fn = fns && ext[i].kernel >= 0 ? fns[ext[i].kernel] : NULL;
    if (pl == MLC_RT_BLOB_NONE) continue;
    ext[i].plugin = STR(pl);
    /* the plugins, each named once, in order of first use */
    int seen = 0;
    for (int32_t k = 0; k < nplugins && !seen; k++) seen = !strcmp(plugins[k], ext[i].plugin);
    if (!seen) plugins[nplugins++] = ext[i].plugin;
  }
  d->nexterns = (int32_t)r.count[T_EXTERNS];
  d->externs = r.count[T_EXTERNS] ? ext : NULL;
  d->nplugins = nplugins;
  d->plugins = nplugins ? plugins : NULL;

  const char **kern = (const char **)(block + o_kern);
  for (uint32_t i = 0; i < r.count[T_KERNELS]; i++) kern[i] = STR(rd32(rec(&r, T_KERNELS, i)));
  d->nkernels = (int32_t)r.count[T_KERNELS];
  d->kernel_names = r.count[T_KERNELS] ? kern : NULL;
#undef STR
  *out = d;
  return MLC_RT_OK;
}

void mlc_rt_desc_free(mlc_rt_model_desc *d) {
  if (!d) return;
  char *raw = (char *)d - DESC_PREFIX;
  mlc_rt_allocator owner;
  memcpy(&owner, raw, sizeof owner);
  mlc_rt_free(&owner, raw);
}
