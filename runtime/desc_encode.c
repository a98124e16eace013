/*
** desc_encode.c: an mlc_rt_model_desc -> the blob of rt_blob.h.
**
** Used by the compiler's archiver (which builds the description as structs
** from the planned graph) and by the runtime tests' hand-written model.
** Two passes: count what each table needs, then write the records; strings
** are copied byte for byte into the string table, so any name (quotes,
** newlines, non-UTF-8 bytes) reads back exactly.  libc only.
*/
#include "config.h"
#include "runtime/rt_alloc.h"
#include "runtime/rt_blob.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct writer {
  uint8_t *p;      /* NULL while counting */
  uint64_t str;    /* bytes of strings so far */
  uint64_t str_at; /* offset of the string table */
  char *err;
  size_t errlen;
} writer;

static void wr32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void wr64(uint8_t *p, uint64_t v) {
  wr32(p, (uint32_t)v);
  wr32(p + 4, (uint32_t)(v >> 32));
}

static mlc_rt_status fail(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static mlc_rt_status fail(writer *w, const char *fmt, ...) {
  if (w->err && w->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, w->errlen, fmt, ap);
    va_end(ap);
  }
  return MLC_RT_INVALID_ARGUMENT;
}

/* Appends |s| (with its NUL) to the string table; its offset. */
static uint32_t put_str(writer *w, const char *s) {
  uint64_t at = w->str, n = strlen(s) + 1;
  if (w->p) memcpy(w->p + w->str_at + at, s, n);
  w->str += n;
  return (uint32_t)at; /* the final size check covers overflow */
}

enum { T_SYMS, T_TENSORS, T_DIMS, T_INPUTS, T_OUTPUTS, T_STEPS, T_ARGS, T_EXTERNS, T_KERNELS,
       T_STRINGS, T_COUNT };
static const uint32_t rec_size[T_COUNT] = {40, 24, 8, 16, 8, 24, 16, 12, 4, 1};

/* Checks what the encoder relies on. */
static mlc_rt_status check(writer *w, const mlc_rt_model_desc *d, int32_t nfns) {
  if (nfns < 0) return fail(w, "negative function count");
  if (!d->name) return fail(w, "model without a name");
  if (d->nsyms < 0 || d->ntensors < 0 || d->ninputs < 0 || d->noutputs < 0 || d->nsteps < 0 ||
      d->nexterns < 0 || d->nkernels < 0 || d->nstorages < 0 ||
      (d->nsyms && !d->sym_names) || (d->ntensors && !d->tensors) ||
      (d->ninputs && !d->inputs) || (d->noutputs && !d->outputs) || (d->nsteps && !d->steps) ||
      (d->nexterns && !d->externs) || (d->nkernels && !d->kernel_names))
    return fail(w, "negative count or missing table");
  for (int32_t i = 0; i < d->nsyms; i++)
    if (!d->sym_names[i]) return fail(w, "symbol %d has no name", i);
  for (int32_t i = 0; d->sym_defs && i < d->nsyms; i++)
    if (d->sym_defs[i].op < 0 || d->sym_defs[i].op >= MLC_RT_SYM_OP_COUNT)
      return fail(w, "symbol %d: operation %d", i, d->sym_defs[i].op);
  for (int32_t i = 0; i < d->nkernels; i++)
    if (!d->kernel_names[i]) return fail(w, "kernel %d has no name", i);
  for (int32_t i = 0; i < d->ntensors; i++)
    if (d->tensors[i].ndim < 0 || d->tensors[i].ndim > MLC_RT_MAX_NDIM ||
        (d->tensors[i].ndim && !d->tensors[i].dims))
      return fail(w, "tensor %d: rank %d", i, d->tensors[i].ndim);
  for (int32_t i = 0; i < d->ninputs; i++) {
    if (!d->inputs[i].name) return fail(w, "input %d has no name", i);
    if (d->inputs[i].has_default && d->inputs[i].default_loc < 0)
      return fail(w, "input %d: default at offset %lld", i, (long long)d->inputs[i].default_loc);
  }
  for (int32_t i = 0; i < d->noutputs; i++)
    if (!d->outputs[i].name || d->outputs[i].has_default)
      return fail(w, "output %d has no name, or a default", i);
  for (int32_t i = 0; i < d->nsteps; i++) {
    const mlc_rt_step_desc *s = &d->steps[i];
    if (!s->name || s->nargs < 0 || (s->nargs && !s->args))
      return fail(w, "step %d: no name or invalid arguments", i);
    if (s->kind == MLC_RT_STEP_KERNEL && (s->kernel < 0 || s->kernel >= nfns))
      return fail(w, "step %d: function index %d (%d functions)", i, s->kernel, nfns);
  }
  for (int32_t i = 0; i < d->nexterns; i++) {
    const mlc_rt_extern_desc *e = &d->externs[i];
    int linked = e->kernel >= 0 && e->kernel < nfns && !e->plugin;
    int plugin = e->kernel == -1 && mlc_rt_plain_file_name(e->plugin);
    if (!e->name || (!linked && !plugin))
      return fail(w, "extern %d: no name, or neither a function index (%d) nor a plugin file name", i,
                  e->kernel);
  }
  return MLC_RT_OK;
}

/* Writes (or, with w->p NULL, counts) everything; table counts to |count|. */
static void emit(writer *w, const mlc_rt_model_desc *d, int32_t nfns, const uint32_t *off,
                 uint32_t *count) {
  uint8_t *p = w->p;
  uint32_t ndims = 0, nargs = 0;
  w->str = 0;
  uint32_t name = put_str(w, d->name);
  uint32_t manifest = d->manifest ? put_str(w, d->manifest) : MLC_RT_BLOB_NONE;
  for (int32_t i = 0; i < d->nsyms; i++) {
    const mlc_rt_sym_def *def = d->sym_defs ? &d->sym_defs[i] : NULL;
    uint32_t s = put_str(w, d->sym_names[i]);
    uint32_t where = def && def->where ? put_str(w, def->where) : MLC_RT_BLOB_NONE;
    if (p) {
      uint8_t *q = p + off[T_SYMS] + 40 * (size_t)i;
      wr32(q, s);
      wr32(q + 4, where);
      wr32(q + 8, def ? (uint32_t)def->op : 0);
      wr32(q + 12, def ? (uint32_t)def->b_sym : 0);
      wr64(q + 16, def ? (uint64_t)def->a : 0);
      wr64(q + 24, def ? (uint64_t)def->b : 0);
      wr64(q + 32, def ? (uint64_t)def->bound : 0);
    }
  }
  for (int32_t i = 0; i < d->nkernels; i++) {
    uint32_t s = put_str(w, d->kernel_names[i]);
    if (p) wr32(p + off[T_KERNELS] + 4 * (size_t)i, s);
  }
  for (int32_t i = 0; i < d->ntensors; i++) {
    const mlc_rt_tensor_desc *t = &d->tensors[i];
    if (p) {
      uint8_t *q = p + off[T_TENSORS] + 24 * (size_t)i;
      q[0] = t->dtype.code;
      q[1] = t->dtype.bits;
      q[2] = (uint8_t)t->dtype.lanes;
      q[3] = (uint8_t)(t->dtype.lanes >> 8);
      wr32(q + 4, (uint32_t)t->ndim);
      wr32(q + 8, (uint32_t)t->storage);
      wr32(q + 12, ndims);
      wr64(q + 16, (uint64_t)t->loc);
      for (int32_t k = 0; k < t->ndim; k++)
        wr64(p + off[T_DIMS] + 8 * ((size_t)ndims + (size_t)k), (uint64_t)t->dims[k]);
    }
    ndims += (uint32_t)t->ndim;
  }
  for (int io = 0; io < 2; io++) {
    int32_t n = io ? d->noutputs : d->ninputs;
    const mlc_rt_io_desc *v = io ? d->outputs : d->inputs;
    for (int32_t i = 0; i < n; i++) {
      uint32_t s = put_str(w, v[i].name);
      if (p) {
        uint8_t *q = p + off[io ? T_OUTPUTS : T_INPUTS] + (io ? 8 : 16) * (size_t)i;
        wr32(q, s);
        wr32(q + 4, (uint32_t)v[i].tensor);
        if (!io) wr64(q + 8, v[i].has_default ? (uint64_t)v[i].default_loc : UINT64_MAX);
      }
    }
  }
  for (int32_t i = 0; i < d->nsteps; i++) {
    const mlc_rt_step_desc *s = &d->steps[i];
    uint32_t sn = put_str(w, s->name), sl = put_str(w, s->label ? s->label : "");
    if (p) {
      uint8_t *q = p + off[T_STEPS] + 24 * (size_t)i;
      wr32(q, (uint32_t)s->kind);
      wr32(q + 4, sn);
      wr32(q + 8, sl);
      wr32(q + 12, (uint32_t)(s->kind == MLC_RT_STEP_KERNEL ? s->kernel : -1));
      wr32(q + 16, (uint32_t)s->nargs);
      wr32(q + 20, nargs);
      for (int32_t a = 0; a < s->nargs; a++) {
        uint8_t *r = p + off[T_ARGS] + 16 * ((size_t)nargs + (size_t)a);
        wr32(r, (uint32_t)s->args[a].kind);
        wr32(r + 4, 0);
        wr64(r + 8, (uint64_t)s->args[a].value);
      }
    }
    nargs += (uint32_t)s->nargs;
  }
  for (int32_t i = 0; i < d->nexterns; i++) {
    uint32_t s = put_str(w, d->externs[i].name);
    uint32_t pl = d->externs[i].plugin ? put_str(w, d->externs[i].plugin) : MLC_RT_BLOB_NONE;
    if (p) {
      wr32(p + off[T_EXTERNS] + 12 * (size_t)i, s);
      wr32(p + off[T_EXTERNS] + 12 * (size_t)i + 4, (uint32_t)d->externs[i].kernel);
      wr32(p + off[T_EXTERNS] + 12 * (size_t)i + 8, pl);
    }
  }
  count[T_SYMS] = (uint32_t)d->nsyms;
  count[T_TENSORS] = (uint32_t)d->ntensors;
  count[T_DIMS] = ndims;
  count[T_INPUTS] = (uint32_t)d->ninputs;
  count[T_OUTPUTS] = (uint32_t)d->noutputs;
  count[T_STEPS] = (uint32_t)d->nsteps;
  count[T_ARGS] = nargs;
  count[T_EXTERNS] = (uint32_t)d->nexterns;
  count[T_KERNELS] = (uint32_t)d->nkernels;
  count[T_STRINGS] = (uint32_t)w->str;
  if (p) {
    memcpy(p, MLC_RT_BLOB_MAGIC, 8);
    wr32(p + 8, d->abi_version);
    wr32(p + 12, d->kernel_abi);
    wr32(p + 16, MLC_RT_BLOB_HEADER_SIZE);
    wr32(p + 24, (uint32_t)nfns);
    wr32(p + 28, name);
    wr32(p + 32, manifest);
    wr32(p + 36, (uint32_t)d->nstorages);
    wr64(p + 40, d->weights_size);
    wr32(p + 128, d->device == kDLCUDA ? (uint32_t)kDLCUDA : (uint32_t)kDLCPU);
    for (int t = 0; t < T_COUNT; t++) {
      wr32(p + 48 + 8 * t, count[t]);
      wr32(p + 52 + 8 * t, off[t]);
    }
  }
}

mlc_rt_status mlc_rt_desc_encode(const mlc_rt_allocator *a, const mlc_rt_model_desc *d, int32_t nfns, uint8_t **out,
                                 size_t *out_size, char *err, size_t errlen) {
  writer w;
  memset(&w, 0, sizeof w);
  w.err = err;
  w.errlen = errlen;
  if (err && errlen) err[0] = 0;
  if (!out || !out_size || !d) return fail(&w, "NULL argument");
  *out = NULL;
  *out_size = 0;
  mlc_rt_status st = check(&w, d, nfns);
  if (st != MLC_RT_OK) return st;
  /* Count, lay the tables out 8-byte aligned, then write. */
  uint32_t off[T_COUNT], count[T_COUNT];
  uint64_t sizes[T_COUNT];
  memset(off, 0, sizeof off);
  uint64_t ndims = 0, nargs = 0;
  for (int32_t i = 0; i < d->ntensors; i++) ndims += (uint64_t)d->tensors[i].ndim;
  for (int32_t i = 0; i < d->nsteps; i++) nargs += (uint64_t)d->steps[i].nargs;
  emit(&w, d, nfns, off, count); /* w.p NULL: counts the string table's bytes */
  uint64_t strings = w.str;
  sizes[T_SYMS] = (uint64_t)d->nsyms;
  sizes[T_TENSORS] = (uint64_t)d->ntensors;
  sizes[T_DIMS] = ndims;
  sizes[T_INPUTS] = (uint64_t)d->ninputs;
  sizes[T_OUTPUTS] = (uint64_t)d->noutputs;
  sizes[T_STEPS] = (uint64_t)d->nsteps;
  sizes[T_ARGS] = nargs;
  sizes[T_EXTERNS] = (uint64_t)d->nexterns;
  sizes[T_KERNELS] = (uint64_t)d->nkernels;
  sizes[T_STRINGS] = strings;
  uint64_t at = MLC_RT_BLOB_HEADER_SIZE;
  for (int t = 0; t < T_COUNT; t++) {
    if (at > UINT32_MAX) break;
    off[t] = (uint32_t)at;
    at = (at + sizes[t] * rec_size[t] + 7) & ~(uint64_t)7;
  }
  if (at > UINT32_MAX) return fail(&w, "model description over 4 GiB");
  w.p = mlc_rt_calloc(a, 1, (size_t)at);
  if (!w.p) {
    if (err && errlen) snprintf(err, errlen, "out of memory encoding the model description");
    return MLC_RT_OUT_OF_MEMORY;
  }
  w.str_at = off[T_STRINGS];
  emit(&w, d, nfns, off, count);
  wr32(w.p + 20, (uint32_t)at);
  *out = w.p;
  *out_size = (size_t)at;
  return MLC_RT_OK;
}
