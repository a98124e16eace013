/*
** model.c: opening a model description (rt_model.h) and answering questions
** about it.
**
** mlc_rt_model_open checks everything a session will rely on, once, so the
** run path can index without checks: every tensor id, symbol, storage id,
** I/O index and weights range is in bounds, every symbol can be bound from
** an input dim or is defined by exactly one BIND_SYMS step before any step
** that uses it, I/O tensors and the inputs/outputs tables agree, and every
** external step resolves to a function in the model's externs table (or,
** for "mlc.*" names, to one of the runtime's built-ins), and the control
** flow steps (IF ... LOOP_END) have well-formed arguments and jump targets
** and nest properly (check_cf).  It also
** precomputes the flattened argument codes that all sessions share and
** what run-bound symbols need: which tensors have run-bound dims, which
** storages are sized step by step, and the first step naming each tensor.
** After opening, the model is never written, so sessions may share it
** across threads.
*/
#include "config.h"
#include "runtime/rt_blob.h"
#include "runtime/rt_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers shared by the runtime -------------------------------------- */

mlc_rt_status mlc_rt_errorf(char *buf, size_t len, mlc_rt_status st, const char *fmt, ...) {
  if (buf && len > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
  }
  return st;
}

void mlc_rt_dtype_str(DLDataType t, char *buf, size_t len) {
  static const char *const names[] = {"int", "uint", "float", "handle", "bfloat", "complex", "bool"};
  const char *base = t.code < sizeof names / sizeof names[0] ? names[t.code] : "code";
  int n;
  if (t.code < sizeof names / sizeof names[0])
    n = snprintf(buf, len, "%s%u", base, (unsigned)t.bits);
  else
    n = snprintf(buf, len, "code%u_%u", (unsigned)t.code, (unsigned)t.bits);
  if (t.lanes != 1 && n >= 0 && (size_t)n < len)
    snprintf(buf + n, len - (size_t)n, "x%u", (unsigned)t.lanes);
}

int mlc_rt_nbytes(DLDataType t, uint64_t numel, uint64_t *out) {
  uint64_t bits = (uint64_t)t.bits * t.lanes;
  if (bits != 0 && numel > (UINT64_MAX - 7) / bits) return -1;
  *out = (numel * bits + 7) / 8;
  return 0;
}

int mlc_rt_shape_size(DLDataType t, const int64_t *shape, int32_t ndim, uint64_t *numel,
                      uint64_t *nbytes, int32_t *bad) {
  uint64_t strided = 1, n, b = 0;
  int zero = 0;
  for (int32_t k = 0; k < ndim; k++)
    if (shape[k] < 0) {
      if (bad) *bad = k;
      return -1;
    }
  for (int32_t k = 0; k < ndim; k++) {
    uint64_t v = (uint64_t)shape[k];
    if (v == 0) {
      zero = 1;
      continue;
    }
    if (strided > (uint64_t)INT64_MAX / v) return -2;
    strided *= v;
  }
  n = zero ? 0 : strided;
  if (mlc_rt_nbytes(t, n, &b) != 0 || b > (uint64_t)INT64_MAX) return -2;
  if (numel) *numel = n;
  if (nbytes) *nbytes = b;
  return 0;
}

/* ---- validation --------------------------------------------------------- */

typedef struct checker {
  const mlc_rt_model_desc *d;
  char *err;
  size_t errlen;
} checker;

#define MODEL_NAME(d) ((d)->name ? (d)->name : "?")

static mlc_rt_status check_tensor(checker *c, int32_t id) {
  const mlc_rt_model_desc *d = c->d;
  const mlc_rt_tensor_desc *t = &d->tensors[id];
  char ty[32];
  mlc_rt_dtype_str(t->dtype, ty, sizeof ty);
  if (t->dtype.bits == 0 || t->dtype.lanes == 0)
    return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                         "model \"%s\": tensor %d: invalid dtype %s", MODEL_NAME(d), id, ty);
  if (t->ndim < 0 || t->ndim > MLC_RT_MAX_NDIM || (t->ndim > 0 && !t->dims))
    return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                         "model \"%s\": tensor %d: invalid rank %d", MODEL_NAME(d), id, t->ndim);
  int symbolic = 0;
  uint64_t numel = 1;
  for (int32_t k = 0; k < t->ndim; k++) {
    int64_t v = t->dims[k];
    if (v < 0) {
      if (-1 - v >= d->nsyms)
        return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                             "model \"%s\": tensor %d dim %d: symbol %lld out of range (%d symbols)",
                             MODEL_NAME(d), id, k, (long long)(-1 - v), d->nsyms);
      symbolic = 1;
    } else if (!symbolic && numel != 0) {
      if (v != 0 && numel > UINT64_MAX / (uint64_t)v) numel = UINT64_MAX;
      else numel *= (uint64_t)v;
    }
  }
  /* Whatever the symbols become, the strides of its static dims must fit. */
  uint64_t strided = 1;
  for (int32_t k = 0; k < t->ndim; k++) {
    uint64_t v = t->dims[k] > 0 ? (uint64_t)t->dims[k] : 1;
    if (strided > (uint64_t)INT64_MAX / v)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": tensor %d: the product of its dims overflows int64",
                           MODEL_NAME(d), id);
    strided *= v;
  }
  switch (t->storage) {
  case MLC_RT_STORAGE_INPUT:
  case MLC_RT_STORAGE_OUTPUT: {
    int out = t->storage == MLC_RT_STORAGE_OUTPUT;
    int32_t nio = out ? d->noutputs : d->ninputs;
    const mlc_rt_io_desc *io = out ? d->outputs : d->inputs;
    if (t->loc < 0 || t->loc >= nio || io[t->loc].tensor != id)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": tensor %d: %s %lld does not name it", MODEL_NAME(d), id,
                           out ? "output" : "input", (long long)t->loc);
    break;
  }
  case MLC_RT_STORAGE_CONST: {
    uint64_t nbytes;
    if (symbolic)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": tensor %d: a constant with symbolic dims", MODEL_NAME(d), id);
    if (numel == UINT64_MAX || mlc_rt_nbytes(t->dtype, numel, &nbytes) != 0 || t->loc < 0 ||
        (uint64_t)t->loc > d->weights_size || nbytes > d->weights_size - (uint64_t)t->loc)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": tensor %d: constant at offset %lld overruns the %llu-byte weights",
                           MODEL_NAME(d), id, (long long)t->loc, (unsigned long long)d->weights_size);
    if (nbytes > 0 && !d->weights)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": tensor %d: constant but no weights", MODEL_NAME(d), id);
    break;
  }
  case MLC_RT_STORAGE_ARENA:
    if (t->loc < 0 || t->loc >= d->nstorages)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": tensor %d: storage id %lld out of range (%d storages)",
                           MODEL_NAME(d), id, (long long)t->loc, d->nstorages);
    break;
  default:
    return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                         "model \"%s\": tensor %d: unknown storage kind %d", MODEL_NAME(d), id,
                         t->storage);
  }
  return MLC_RT_OK;
}

static mlc_rt_status check_io(checker *c, int out) {
  const mlc_rt_model_desc *d = c->d;
  int32_t n = out ? d->noutputs : d->ninputs;
  const mlc_rt_io_desc *io = out ? d->outputs : d->inputs;
  const char *what = out ? "output" : "input";
  if (n < 0 || (n > 0 && !io))
    return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                         "model \"%s\": invalid %s table", MODEL_NAME(d), what);
  for (int32_t i = 0; i < n; i++) {
    int32_t t = io[i].tensor;
    if (!io[i].name || t < 0 || t >= d->ntensors ||
        d->tensors[t].storage != (out ? MLC_RT_STORAGE_OUTPUT : MLC_RT_STORAGE_INPUT) ||
        d->tensors[t].loc != i)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": %s %d: no name, or its tensor is not %s storage %d",
                           MODEL_NAME(d), what, i, what, i);
  }
  return MLC_RT_OK;
}

/* Inputs with a default (their tensors already checked): every dim
** static, the data inside the weights and aligned to its element size
** (as mlc_rt_session_set_input requires of a caller's tensor); outputs
** have none. */
static mlc_rt_status check_defaults(checker *c) {
  const mlc_rt_model_desc *d = c->d;
  for (int32_t i = 0; i < d->noutputs; i++)
    if (d->outputs[i].has_default)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT, "model \"%s\": output %d has a default",
                           MODEL_NAME(d), i);
  for (int32_t i = 0; i < d->ninputs; i++) {
    const mlc_rt_io_desc *in = &d->inputs[i];
    if (!in->has_default) continue;
    const mlc_rt_tensor_desc *t = &d->tensors[in->tensor];
    for (int32_t k = 0; k < t->ndim; k++)
      if (t->dims[k] < 0)
        return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                             "model \"%s\": input %d (\"%s\") has a default but symbolic dim %d", MODEL_NAME(d),
                             i, in->name, k);
    uint64_t nbytes = 0;
    if (mlc_rt_shape_size(t->dtype, t->dims, t->ndim, NULL, &nbytes, NULL) != 0 || in->default_loc < 0 ||
        (uint64_t)in->default_loc > d->weights_size || nbytes > d->weights_size - (uint64_t)in->default_loc ||
        (nbytes > 0 && !d->weights))
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": input %d (\"%s\"): default at offset %lld overruns the %llu-byte weights",
                           MODEL_NAME(d), i, in->name, (long long)in->default_loc,
                           (unsigned long long)d->weights_size);
    unsigned elem = ((unsigned)t->dtype.bits * t->dtype.lanes + 7) / 8;
    if (elem <= MLC_RT_ALIGN && (elem & (elem - 1)) == 0 && (uint64_t)in->default_loc % elem != 0)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": input %d (\"%s\"): default at offset %lld is not aligned to %u bytes",
                           MODEL_NAME(d), i, in->name, (long long)in->default_loc, elem);
  }
  return MLC_RT_OK;
}

/* Finds an input dim that binds each symbol; every symbol that no
** BIND_SYMS step defines needs one, and those that one defines have none. */
static mlc_rt_status find_binders(checker *c, mlc_rt_model *m) {
  const mlc_rt_model_desc *d = c->d;
  for (int32_t k = 0; k < d->nsyms; k++) m->sym_input[k] = -1, m->sym_dim[k] = -1;
  for (int32_t i = 0; i < d->ninputs; i++) {
    const mlc_rt_tensor_desc *t = &d->tensors[d->inputs[i].tensor];
    for (int32_t j = 0; j < t->ndim; j++) {
      if (t->dims[j] >= 0) continue;
      int64_t k = -1 - t->dims[j];
      if (m->sym_bind_step[k] >= 0)
        return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                             "model \"%s\": symbolic dim \"%s\" of input %d is also computed by step %d",
                             MODEL_NAME(d), d->sym_names[k], i, m->sym_bind_step[k]);
      if (m->sym_input[k] < 0) {
        m->sym_input[k] = i;
        m->sym_dim[k] = j;
      }
    }
  }
  for (int32_t k = 0; k < d->nsyms; k++) {
    int derived = d->sym_defs && d->sym_defs[k].op != MLC_RT_SYM_FREE;
    if (derived && (m->sym_input[k] >= 0 || m->sym_bind_step[k] >= 0))
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": derived symbolic dim \"%s\" is also bound by %s",
                           MODEL_NAME(d), d->sym_names[k],
                           m->sym_input[k] >= 0 ? "an input's dims" : "a step");
    if (!derived && m->sym_input[k] < 0 && m->sym_bind_step[k] < 0)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": symbolic dim \"%s\" is not a dim of any input",
                           MODEL_NAME(d), d->sym_names[k]);
  }
  return MLC_RT_OK;
}

/*
** Checks the derived symbols (operands are earlier symbols, constants in
** range for the operation) and records when each symbol's value is known:
** at the start of a run, or after the BIND_SYMS step binding the last
** run-bound symbol it reads.
*/
static mlc_rt_status check_sym_defs(checker *c, mlc_rt_model *m) {
  const mlc_rt_model_desc *d = c->d;
  for (int32_t k = 0; k < d->nsyms; k++) {
    const mlc_rt_sym_def *def = d->sym_defs ? &d->sym_defs[k] : NULL;
    m->sym_ready[k] = m->sym_bind_step[k];
    if (def && (def->bound < 0 || (def->bound > 0 && (def->op != MLC_RT_SYM_FREE || m->sym_input[k] < 0))))
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": symbolic dim \"%s\" has a bound (%lld) but is not an input's dim",
                           MODEL_NAME(d), d->sym_names[k], (long long)def->bound);
    if (def && def->bound > 0) m->has_bounds = 1;
    if (!def || def->op == MLC_RT_SYM_FREE) continue;
    m->has_derived = 1;
    int ok = def->op > 0 && def->op < MLC_RT_SYM_OP_COUNT && def->a >= 0 && def->a < k;
    if (ok && def->b_sym) ok = def->b >= 0 && def->b < k && def->op != MLC_RT_SYM_FLOORDIV &&
                               def->op != MLC_RT_SYM_CHECK;
    else if (ok && def->op == MLC_RT_SYM_MUL) ok = def->b >= 0;
    else if (ok && def->op == MLC_RT_SYM_FLOORDIV) ok = def->b >= 1;
    if (!ok)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": derived symbolic dim %d (\"%s\") is malformed (operation "
                           "%d, operands %lld, %lld)",
                           MODEL_NAME(d), k, d->sym_names[k], def->op, (long long)def->a,
                           (long long)def->b);
    int32_t r = m->sym_ready[def->a];
    if (def->b_sym && m->sym_ready[def->b] > r) r = m->sym_ready[def->b];
    m->sym_ready[k] = r;
  }
  return MLC_RT_OK;
}

static mlc_kernel_fn find_extern(const mlc_rt_model_desc *d, const mlc_rt_model *m, const char *name) {
  if (strncmp(name, "mlc.", 4) == 0) return mlc_rt_builtin_find(name);
  for (int32_t i = 0; i < d->nexterns; i++)
    if (d->externs[i].name && strcmp(d->externs[i].name, name) == 0)
      return !d->externs[i].plugin ? d->externs[i].fn : m->extern_fns ? m->extern_fns[i] : NULL;
  return NULL;
}

static mlc_rt_status check_steps(checker *c, mlc_rt_model *m) {
  const mlc_rt_model_desc *d = c->d;
  int64_t total = 0;
  for (int32_t i = 0; i < d->nsteps; i++) {
    const mlc_rt_step_desc *st = &d->steps[i];
    const char *label = st->label ? st->label : "";
    mlc_kernel_fn fn = NULL;
    if (st->kind == MLC_RT_STEP_KERNEL) {
      fn = st->fn;
      if (!fn)
        return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                             "model \"%s\": step %d (node \"%s\"): kernel \"%s\" has no function",
                             MODEL_NAME(d), i, label, st->name ? st->name : "?");
    } else if (st->kind == MLC_RT_STEP_EXTERN) {
      if (!st->name)
        return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                             "model \"%s\": step %d (node \"%s\"): external step without a name",
                             MODEL_NAME(d), i, label);
      fn = find_extern(d, m, st->name);
      m->step_lib[i] = strncmp(st->name, "mlc.", 4) != 0;
      if (!fn)
        return mlc_rt_errorf(c->err, c->errlen, MLC_RT_NOT_FOUND,
                             "model \"%s\": step %d (node \"%s\"): external function \"%s\" is not registered",
                             MODEL_NAME(d), i, label, st->name);
    } else if (st->kind != MLC_RT_STEP_BIND_SYMS && !mlc_rt_step_is_cf(st->kind)) {
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": step %d (node \"%s\"): unknown step kind %d",
                           MODEL_NAME(d), i, label, st->kind);
    }
    m->step_fns[i] = fn;
    if (st->nargs < 0 || (st->nargs > 0 && !st->args))
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": step %d (node \"%s\"): invalid argument list",
                           MODEL_NAME(d), i, label);
    for (int32_t a = 0; a < st->nargs; a++) {
      const mlc_rt_arg_desc *ad = &st->args[a];
      int ok = (ad->kind == MLC_RT_ARG_TENSOR && ad->value >= 0 && ad->value < d->ntensors) ||
               (ad->kind == MLC_RT_ARG_SYM && ad->value >= 0 && ad->value < d->nsyms) ||
               ad->kind == MLC_RT_ARG_IMM;
      if (!ok)
        return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                             "model \"%s\": step %d (node \"%s\"): argument %d (kind %d, value %lld) is invalid",
                             MODEL_NAME(d), i, label, a, ad->kind, (long long)ad->value);
      if (ad->kind == MLC_RT_ARG_IMM) m->nimms++;
    }
    m->arg_start[i] = total;
    total += st->nargs;
  }
  m->arg_start[d->nsteps] = total;
  m->nargs_total = total;
  if (total > 0) {
    m->arg_codes = mlc_rt_alloc(&m->alloc, (size_t)total * sizeof *m->arg_codes);
    if (!m->arg_codes)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_OUT_OF_MEMORY, "out of memory");
  }
  for (int32_t i = 0; i < d->nsteps; i++)
    for (int32_t a = 0; a < d->steps[i].nargs; a++)
      m->arg_codes[m->arg_start[i] + a] =
          d->steps[i].args[a].kind == MLC_RT_ARG_TENSOR ? MLC_ARG_TENSOR : MLC_ARG_INT;
  return MLC_RT_OK;
}

/* An int64 vector tensor id (for BIND_SYMS args); its length in *n. */
static int int64_vector(const mlc_rt_model_desc *d, const mlc_rt_arg_desc *a, int64_t *n) {
  if (a->kind != MLC_RT_ARG_TENSOR || a->value < 0 || a->value >= d->ntensors) return 0;
  const mlc_rt_tensor_desc *t = &d->tensors[a->value];
  if (t->dtype.code != kDLInt || t->dtype.bits != 64 || t->dtype.lanes != 1 || t->ndim != 1 ||
      t->dims[0] < 0)
    return 0;
  *n = t->dims[0];
  return 1;
}

/*
** Checks the BIND_SYMS steps (args: vector, copy, offset, then SYM/IMM per
** entry) and records which step defines each run-bound symbol.
*/
static mlc_rt_status scan_binds(checker *c, mlc_rt_model *m) {
  const mlc_rt_model_desc *d = c->d;
  for (int32_t k = 0; k < d->nsyms; k++) m->sym_bind_step[k] = -1;
  for (int32_t i = 0; i < d->nsteps; i++) {
    const mlc_rt_step_desc *st = &d->steps[i];
    if (st->kind != MLC_RT_STEP_BIND_SYMS) continue;
    const char *label = st->label ? st->label : "";
    int64_t n0, n1;
    int ok = st->nargs >= 3 && st->args && int64_vector(d, &st->args[0], &n0) &&
             int64_vector(d, &st->args[1], &n1) && n0 == n1 &&
             st->args[2].kind == MLC_RT_ARG_IMM && st->args[2].value >= 0 &&
             st->args[2].value + (st->nargs - 3) <= n0;
    for (int32_t a = 3; ok && a < st->nargs; a++) {
      const mlc_rt_arg_desc *ad = &st->args[a];
      if (ad->kind == MLC_RT_ARG_IMM) ok = ad->value >= 0;
      else if (ad->kind != MLC_RT_ARG_SYM || ad->value < 0 || ad->value >= d->nsyms) ok = 0;
      else if (m->sym_bind_step[ad->value] >= 0)
        return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                             "model \"%s\": step %d (node \"%s\"): symbolic dim \"%s\" is already "
                             "computed by step %d",
                             MODEL_NAME(d), i, label, d->sym_names[ad->value],
                             m->sym_bind_step[ad->value]);
      else m->sym_bind_step[ad->value] = i;
    }
    if (!ok)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": step %d (node \"%s\"): malformed symbol binding (wants an "
                           "int64 vector, its copy, an offset, then one symbol or extent per entry)",
                           MODEL_NAME(d), i, label);
  }
  return MLC_RT_OK;
}

/*
** What run-bound symbols need: tensors with run-bound dims, which storages
** and outputs are allocated at the step that writes them (the first step
** naming a tensor), and a check that every step uses a run-bound symbol
** only after the step that defines it.
*/
static mlc_rt_status plan_run_bound(checker *c, mlc_rt_model *m) {
  const mlc_rt_model_desc *d = c->d;
  for (int32_t t = 0; t < d->ntensors; t++) {
    const mlc_rt_tensor_desc *td = &d->tensors[t];
    m->tensor_first[t] = -1;
    for (int32_t k = 0; k < td->ndim; k++)
      if (td->dims[k] < 0 && m->sym_ready[-1 - td->dims[k]] >= 0) m->tensor_run[t] = 1;
    if (m->tensor_run[t]) m->has_run_syms = 1;
    if (m->tensor_run[t] && td->storage == MLC_RT_STORAGE_ARENA) m->storage_late[td->loc] = 1;
  }
  for (int32_t t = 0; t < d->ntensors; t++) {
    const mlc_rt_tensor_desc *td = &d->tensors[t];
    m->tensor_late[t] = (td->storage == MLC_RT_STORAGE_ARENA && m->storage_late[td->loc]) ||
                        (td->storage == MLC_RT_STORAGE_OUTPUT && m->tensor_run[t]);
  }
  for (int32_t i = 0; i < d->nsteps; i++) {
    const mlc_rt_step_desc *st = &d->steps[i];
    for (int32_t a = 0; a < st->nargs; a++) {
      if (st->args[a].kind != MLC_RT_ARG_TENSOR) continue;
      int32_t t = (int32_t)st->args[a].value;
      const mlc_rt_tensor_desc *td = &d->tensors[t];
      if (m->tensor_first[t] < 0) m->tensor_first[t] = i;
      if (m->tensor_run[t] || m->tensor_late[t]) m->step_dyn[i] = 1;
      for (int32_t k = 0; k < td->ndim; k++) {
        if (td->dims[k] >= 0) continue;
        int32_t b = m->sym_ready[-1 - td->dims[k]];
        /* a control flow step defines the symbols of the tensors it writes */
        if (b > i || (b == i && !mlc_rt_step_is_cf(st->kind)))
          return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                               "model \"%s\": step %d (node \"%s\"): tensor %d uses symbolic dim "
                               "\"%s\" before step %d computes it",
                               MODEL_NAME(d), i, st->label ? st->label : "", t,
                               d->sym_names[-1 - td->dims[k]], b);
      }
    }
  }
  for (int32_t t = 0; t < d->ntensors; t++)
    if (m->tensor_late[t] && m->tensor_first[t] < 0 && d->tensors[t].storage == MLC_RT_STORAGE_OUTPUT)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": output tensor %d has computed dims but no step writes it",
                           MODEL_NAME(d), t);
  return MLC_RT_OK;
}

/* ---- run-time control flow steps ---------------------------------------- */

/* Arg |a| of step |st| is a tensor (its id in *t) / an immediate. */
static int arg_t(const mlc_rt_model_desc *d, const mlc_rt_step_desc *st, int32_t a, int32_t *t) {
  if (a < 0 || a >= st->nargs || st->args[a].kind != MLC_RT_ARG_TENSOR || st->args[a].value < 0 ||
      st->args[a].value >= d->ntensors)
    return 0;
  *t = (int32_t)st->args[a].value;
  return 1;
}
static int arg_i(const mlc_rt_step_desc *st, int32_t a, int64_t *v) {
  if (a < 0 || a >= st->nargs || st->args[a].kind != MLC_RT_ARG_IMM) return 0;
  *v = st->args[a].value;
  return 1;
}

/* Tensor |t| has static dims whose product is 1 (a scalar condition or count). */
static int one_element(const mlc_rt_tensor_desc *t) {
  for (int32_t k = 0; k < t->ndim; k++)
    if (t->dims[k] != 1) return 0;
  return t->dtype.lanes == 1 && (t->dtype.bits == 8 || t->dtype.bits == 16 || t->dtype.bits == 32 ||
                                 t->dtype.bits == 64) &&
         (t->dtype.code == kDLInt || t->dtype.code == kDLUInt || t->dtype.code == kDLFloat || t->dtype.code == 6);
}
static int is_scalar(const mlc_rt_tensor_desc *t, int code, int bits) {
  return t->ndim == 0 && t->dtype.code == code && t->dtype.bits == bits && t->dtype.lanes == 1;
}
/* |dst| can receive copies of |src|: same dtype and rank, and |dst| is
** written by the model (not an input or a constant). */
static int copyable(const mlc_rt_tensor_desc *dst, const mlc_rt_tensor_desc *src) {
  return dst->dtype.code == src->dtype.code && dst->dtype.bits == src->dtype.bits &&
         dst->dtype.lanes == src->dtype.lanes && dst->ndim == src->ndim &&
         dst->storage != MLC_RT_STORAGE_INPUT && dst->storage != MLC_RT_STORAGE_CONST;
}

/* Symbol |k| is a dim of some input. */
static int input_sym(const mlc_rt_model_desc *d, int64_t k) {
  for (int32_t i = 0; i < d->ninputs; i++) {
    const mlc_rt_tensor_desc *t = &d->tensors[d->inputs[i].tensor];
    for (int32_t j = 0; j < t->ndim; j++)
      if (t->dims[j] == -1 - k) return 1;
  }
  return 0;
}

/* The symbols among the dims of tensor |t| that no input and no earlier
** step binds are defined by step |i| (END_IF, LOOP_END). */
static void cf_defines(const mlc_rt_model_desc *d, mlc_rt_model *m, int32_t t, int32_t i) {
  const mlc_rt_tensor_desc *td = &d->tensors[t];
  for (int32_t k = 0; k < td->ndim; k++) {
    int64_t sym = -1 - td->dims[k];
    if (td->dims[k] < 0 && d->sym_defs && d->sym_defs[sym].op != MLC_RT_SYM_FREE) continue; /* derived */
    if (td->dims[k] < 0 && m->sym_bind_step[sym] < 0 && !input_sym(d, sym)) m->sym_bind_step[sym] = i;
  }
}

/*
** Checks the control flow steps (rt_model.h): their argument layouts, types
** and jump targets, and that their regions nest (an IF's ELSE and END_IF,
** a LOOP's LOOP_END, pair up in order).  Records the run-bound symbols that
** END_IF and LOOP_END steps define.
*/
static mlc_rt_status check_cf(checker *c, mlc_rt_model *m) {
  const mlc_rt_model_desc *d = c->d;
  int32_t *stack = NULL, top = 0;
  mlc_rt_status rs = MLC_RT_OK;
  for (int32_t i = 0; i < d->nsteps; i++) m->has_cf |= mlc_rt_step_is_cf(d->steps[i].kind);
  if (!m->has_cf) return MLC_RT_OK;
  if (d->device == kDLCUDA)
    return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                         "model \"%s\": run-time control flow runs on the CPU only", MODEL_NAME(d));
  stack = mlc_rt_calloc(&m->alloc, (size_t)d->nsteps + 1, sizeof *stack);
  if (!stack) return mlc_rt_errorf(c->err, c->errlen, MLC_RT_OUT_OF_MEMORY, "out of memory");
  for (int32_t i = 0; i < d->nsteps && rs == MLC_RT_OK; i++) {
    const mlc_rt_step_desc *st = &d->steps[i];
    int32_t n = st->nargs, t0, t1, t2, t3;
    int64_t v0 = 0, v1 = 0;
    int ok = 1;
    const mlc_rt_step_desc *open = top > 0 ? &d->steps[stack[top - 1]] : NULL;
    switch (st->kind) {
      case MLC_RT_STEP_IF:
        ok = n == 3 && arg_t(d, st, 0, &t0) && arg_t(d, st, 1, &t1) && arg_i(st, 2, &v0) &&
             one_element(&d->tensors[t0]) && is_scalar(&d->tensors[t1], 6, 8) &&
             copyable(&d->tensors[t1], &d->tensors[t1]) && v0 > i && v0 < d->nsteps;
        if (ok) stack[top++] = i;
        break;
      case MLC_RT_STEP_ELSE:
        ok = n == 3 && arg_t(d, st, 0, &t0) && arg_t(d, st, 1, &t1) && arg_i(st, 2, &v0) && open &&
             open->kind == MLC_RT_STEP_IF &&
             open->args[2].value == i && open->args[1].value == t0 && v0 > i && v0 < d->nsteps;
        if (ok) stack[top - 1] = i;
        break;
      case MLC_RT_STEP_END_IF: {
        int32_t k = (n - 1) / 3;
        ok = n >= 4 && (n - 1) % 3 == 0 && arg_t(d, st, 0, &t0) && open && open->kind == MLC_RT_STEP_ELSE &&
             open->args[2].value == i && open->args[0].value == t0;
        for (int32_t j = 0; ok && j < k; j++) {
          ok = arg_t(d, st, 1 + j, &t1) && arg_t(d, st, 1 + k + j, &t2) && arg_t(d, st, 1 + 2 * k + j, &t3) &&
               copyable(&d->tensors[t3], &d->tensors[t1]) && copyable(&d->tensors[t3], &d->tensors[t2]);
          if (ok) cf_defines(d, m, t3, i);
        }
        if (ok) top--;
        break;
      }
      case MLC_RT_STEP_LOOP: {
        int32_t k = (n - 5) / 2;
        ok = n >= 5 && (n - 5) % 2 == 0 && arg_t(d, st, 0, &t0) && arg_t(d, st, 1, &t1) &&
             arg_i(st, n - 1, &v0) && one_element(&d->tensors[t0]) && d->tensors[t0].dtype.code == kDLInt &&
             d->tensors[t0].dtype.bits == 64 && one_element(&d->tensors[t1]) && arg_t(d, st, 2 + k, &t2) &&
             arg_t(d, st, 3 + k, &t3) && is_scalar(&d->tensors[t2], kDLInt, 64) &&
             is_scalar(&d->tensors[t3], 6, 8) && copyable(&d->tensors[t2], &d->tensors[t2]) &&
             copyable(&d->tensors[t3], &d->tensors[t3]) && v0 > i && v0 < d->nsteps;
        for (int32_t j = 0; ok && j < k; j++)
          ok = arg_t(d, st, 2 + j, &t1) && arg_t(d, st, 4 + k + j, &t2) &&
               copyable(&d->tensors[t2], &d->tensors[t1]);
        if (ok) stack[top++] = i;
        break;
      }
      case MLC_RT_STEP_LOOP_END: {
        ok = n >= 4 && arg_i(st, n - 2, &v0) && arg_i(st, n - 1, &v1) && open &&
             open->kind == MLC_RT_STEP_LOOP && v0 == stack[top - 1] && open->args[open->nargs - 1].value == i &&
             v1 >= 0 && v1 == (open->nargs - 5) / 2 && (n - 4 - 2 * v1) >= 0 && (n - 4 - 2 * v1) % 2 == 0 &&
             arg_t(d, st, 0, &t0) && arg_t(d, st, 1, &t1) && one_element(&d->tensors[t0]) &&
             d->tensors[t0].dtype.code == kDLInt && d->tensors[t0].dtype.bits == 64 && one_element(&d->tensors[t1]);
        if (!ok) break;
        int32_t k = (int32_t)v1, s = (n - 4 - 2 * k) / 2;
        for (int32_t j = 0; ok && j < k; j++) {
          int32_t carried = (int32_t)open->args[4 + k + j].value;
          ok = arg_t(d, st, 2 + j, &t1) && arg_t(d, st, 2 + k + s + j, &t2) &&
               copyable(&d->tensors[carried], &d->tensors[t1]) && copyable(&d->tensors[t2], &d->tensors[carried]);
        }
        for (int32_t j = 0; ok && j < s; j++) {
          ok = arg_t(d, st, 2 + k + j, &t1) && arg_t(d, st, 2 + 2 * k + s + j, &t2);
          const mlc_rt_tensor_desc *x = ok ? &d->tensors[t1] : NULL, *y = ok ? &d->tensors[t2] : NULL;
          ok = ok && y->ndim == x->ndim + 1 && y->dtype.code == x->dtype.code && y->dtype.bits == x->dtype.bits &&
               y->dtype.lanes == x->dtype.lanes && y->storage != MLC_RT_STORAGE_INPUT &&
               y->storage != MLC_RT_STORAGE_CONST && y->dims[0] < 0;
          for (int32_t q = 0; ok && q < x->ndim; q++) ok = y->dims[1 + q] == x->dims[q];
          if (ok) {
            cf_defines(d, m, t2, i);
            ok = m->sym_bind_step[-1 - y->dims[0]] == i; /* the count: this step's own symbol */
          }
        }
        if (ok) top--;
        break;
      }
      default:
        continue;
    }
    if (!ok)
      rs = mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                         "model \"%s\": step %d (node \"%s\"): malformed control flow step (kind %d): its "
                         "arguments, their types or its jump target do not fit, or its region does not nest",
                         MODEL_NAME(d), i, st->label ? st->label : "", st->kind);
  }
  if (rs == MLC_RT_OK && top > 0)
    rs = mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                       "model \"%s\": the control flow region of step %d is not closed", MODEL_NAME(d),
                       stack[top - 1]);
  mlc_rt_free(&m->alloc, stack);
  return rs;
}

static mlc_rt_status check_desc(checker *c, mlc_rt_model *m) {
  const mlc_rt_model_desc *d = c->d;
  if (d->abi_version != MLC_RT_DESC_VERSION || d->kernel_abi != MLC_RT_ABI_VERSION)
    return mlc_rt_errorf(c->err, c->errlen, MLC_RT_ABI_MISMATCH,
                         "model \"%s\": description version %u / kernel ABI %u, but this runtime "
                         "reads version %u / kernel ABI %u",
                         MODEL_NAME(d), d->abi_version, d->kernel_abi, MLC_RT_DESC_VERSION,
                         MLC_RT_ABI_VERSION);
  if (d->nsyms < 0 || (d->nsyms > 0 && !d->sym_names) || d->ntensors < 0 ||
      (d->ntensors > 0 && !d->tensors) || d->nstorages < 0 || d->nsteps < 0 ||
      (d->nsteps > 0 && !d->steps) || d->nexterns < 0 || (d->nexterns > 0 && !d->externs) ||
      d->nkernels < 0 || (d->nkernels > 0 && !d->kernel_names))
    return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                         "model \"%s\": malformed description (negative count or missing table)",
                         MODEL_NAME(d));
  if (d->weights_size > 0 && (!d->weights || (uintptr_t)d->weights % MLC_RT_ALIGN != 0))
    return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                         "model \"%s\": weights missing or not %d-byte aligned", MODEL_NAME(d),
                         MLC_RT_ALIGN);
  for (int32_t k = 0; k < d->nsyms; k++)
    if (!d->sym_names[k])
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": symbol %d has no name", MODEL_NAME(d), k);
  mlc_rt_status st = check_io(c, 0);
  if (st == MLC_RT_OK) st = check_io(c, 1);
  for (int32_t i = 0; st == MLC_RT_OK && i < d->ntensors; i++) {
    st = check_tensor(c, i);
    m->nshape_total += d->tensors[i].ndim;
  }
  if (st == MLC_RT_OK) st = check_defaults(c);
  if (st == MLC_RT_OK) st = scan_binds(c, m);
  if (st == MLC_RT_OK) st = check_cf(c, m);
  if (st == MLC_RT_OK) st = find_binders(c, m);
  if (st == MLC_RT_OK) st = check_sym_defs(c, m);
  if (st == MLC_RT_OK && d->nplugins > 0) {
    if (d->nplugins > d->nexterns || !d->plugins)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT, "model \"%s\": %d plugins for %d externs",
                           MODEL_NAME(d), d->nplugins, d->nexterns);
    for (int32_t p = 0; p < d->nplugins; p++)
      if (!mlc_rt_plain_file_name(d->plugins[p]))
        return mlc_rt_errorf(c->err, c->errlen, MLC_RT_INVALID_ARGUMENT,
                             "model \"%s\": plugin %d is not a plain file name", MODEL_NAME(d), p);
    m->plugins = mlc_rt_calloc(&m->alloc, (size_t)d->nplugins, sizeof *m->plugins);
    m->extern_fns = mlc_rt_calloc(&m->alloc, (size_t)d->nexterns, sizeof *m->extern_fns);
    if (!m->plugins || !m->extern_fns)
      return mlc_rt_errorf(c->err, c->errlen, MLC_RT_OUT_OF_MEMORY, "out of memory");
    st = mlc_rt_plugins_load(d, m->plugins, m->extern_fns, c->err, c->errlen);
  }
  if (st == MLC_RT_OK) st = check_steps(c, m);
  if (st == MLC_RT_OK) st = plan_run_bound(c, m);
  return st;
}

mlc_rt_status mlc_rt_model_open(const mlc_rt_model_desc *desc, mlc_rt_model **out, char *err,
                                size_t errlen) {
  return mlc_rt_model_open_with(desc, NULL, out, err, errlen);
}

mlc_rt_status mlc_rt_model_open_with(const mlc_rt_model_desc *desc, const mlc_rt_allocator *a,
                                     mlc_rt_model **out, char *err, size_t errlen) {
  if (err && errlen) err[0] = 0;
  if (!out) return mlc_rt_errorf(err, errlen, MLC_RT_INVALID_ARGUMENT, "NULL output pointer");
  *out = NULL;
  if (!desc) return mlc_rt_errorf(err, errlen, MLC_RT_INVALID_ARGUMENT, "NULL model description");
  mlc_rt_model *m = mlc_rt_calloc(a, 1, sizeof *m);
  if (!m) return mlc_rt_errorf(err, errlen, MLC_RT_OUT_OF_MEMORY, "out of memory");
  m->desc = desc;
  if (a) m->alloc = *a;
  checker c = {desc, err, errlen};
  int32_t nsteps = desc->nsteps > 0 ? desc->nsteps : 0;
  int32_t nsyms = desc->nsyms > 0 ? desc->nsyms : 0;
  m->step_fns = mlc_rt_calloc(&m->alloc, (size_t)nsteps + 1, sizeof *m->step_fns);
  m->arg_start = mlc_rt_calloc(&m->alloc, (size_t)nsteps + 1, sizeof *m->arg_start);
  m->sym_input = mlc_rt_calloc(&m->alloc, (size_t)nsyms + 1, sizeof *m->sym_input);
  m->sym_dim = mlc_rt_calloc(&m->alloc, (size_t)nsyms + 1, sizeof *m->sym_dim);
  int32_t nt = desc->ntensors > 0 ? desc->ntensors : 0;
  int32_t nst = desc->nstorages > 0 ? desc->nstorages : 0;
  m->sym_bind_step = mlc_rt_calloc(&m->alloc, (size_t)nsyms + 1, sizeof *m->sym_bind_step);
  m->sym_ready = mlc_rt_calloc(&m->alloc, (size_t)nsyms + 1, sizeof *m->sym_ready);
  m->tensor_run = mlc_rt_calloc(&m->alloc, (size_t)nt + 1, 1);
  m->tensor_late = mlc_rt_calloc(&m->alloc, (size_t)nt + 1, 1);
  m->tensor_first = mlc_rt_calloc(&m->alloc, (size_t)nt + 1, sizeof *m->tensor_first);
  m->storage_late = mlc_rt_calloc(&m->alloc, (size_t)nst + 1, 1);
  m->step_dyn = mlc_rt_calloc(&m->alloc, (size_t)nsteps + 1, 1);
  m->step_lib = mlc_rt_calloc(&m->alloc, (size_t)nsteps + 1, 1);
  mlc_rt_status st;
  if (!m->step_fns || !m->arg_start || !m->sym_input || !m->sym_dim || !m->sym_bind_step || !m->sym_ready ||
      !m->tensor_run || !m->tensor_late || !m->tensor_first || !m->storage_late || !m->step_dyn ||
      !m->step_lib)
    st = mlc_rt_errorf(err, errlen, MLC_RT_OUT_OF_MEMORY, "out of memory");
  else
    st = check_desc(&c, m);
  if (st == MLC_RT_OK && desc->device == kDLCUDA) {
    /* the CUDA runtime sizes device memory once per input shape, and its
    ** built-in shape functions would read device memory on the host */
    for (int32_t i = 0; st == MLC_RT_OK && i < nsteps; i++) {
      const mlc_rt_step_desc *sd = &desc->steps[i];
      if (sd->kind == MLC_RT_STEP_BIND_SYMS || (sd->name && strncmp(sd->name, "mlc.", 4) == 0))
        st = mlc_rt_errorf(err, errlen, MLC_RT_INVALID_ARGUMENT,
                           "step %d (node \"%s\") computes a shape at run time, which CUDA models do not support "
                           "yet",
                           i, sd->label ? sd->label : "");
    }
  } else if (st == MLC_RT_OK && desc->device != kDLCPU && desc->device != 0) {
    st = mlc_rt_errorf(err, errlen, MLC_RT_INVALID_ARGUMENT, "device type %d is not supported", (int)desc->device);
  }
  if (st != MLC_RT_OK) {
    mlc_rt_model_close(m);
    return st;
  }
  m->magic = MLC_RT_MODEL_MAGIC;
  *out = m;
  return MLC_RT_OK;
}

void mlc_rt_model_close(mlc_rt_model *m) {
  if (!m) return;
  m->magic = 0;
  if (m->plugins) mlc_rt_plugins_close(m->plugins, m->desc ? m->desc->nplugins : 0);
  mlc_rt_free(&m->alloc, m->plugins);
  mlc_rt_free(&m->alloc, m->extern_fns);
  mlc_rt_desc_free(m->owned_desc);
  mlc_rt_free(&m->alloc, m->step_fns);
  mlc_rt_free(&m->alloc, m->arg_start);
  mlc_rt_free(&m->alloc, m->arg_codes);
  mlc_rt_free(&m->alloc, m->sym_input);
  mlc_rt_free(&m->alloc, m->sym_dim);
  mlc_rt_free(&m->alloc, m->sym_bind_step);
  mlc_rt_free(&m->alloc, m->sym_ready);
  mlc_rt_free(&m->alloc, m->tensor_run);
  mlc_rt_free(&m->alloc, m->tensor_late);
  mlc_rt_free(&m->alloc, m->tensor_first);
  mlc_rt_free(&m->alloc, m->storage_late);
  mlc_rt_free(&m->alloc, m->step_dyn);
  mlc_rt_free(&m->alloc, m->step_lib);
  mlc_rt_allocator a = m->alloc;
  mlc_rt_free(&a, m);
}

/* ---- accessors ---------------------------------------------------------- */

/* |m| when it is an open model, else NULL. */
static const mlc_rt_model *live(const mlc_rt_model *m) {
  return m && m->magic == MLC_RT_MODEL_MAGIC ? m : NULL;
}

const char *mlc_rt_model_name(const mlc_rt_model *m) {
  m = live(m);
  return m && m->desc->name ? m->desc->name : "";
}

const char *mlc_rt_model_manifest(const mlc_rt_model *m) {
  m = live(m);
  return m && m->desc->manifest ? m->desc->manifest : "";
}

int32_t mlc_rt_model_num_io(const mlc_rt_model *m, int output) {
  m = live(m);
  if (!m) return 0;
  return output ? m->desc->noutputs : m->desc->ninputs;
}

/* The tensor of input/output |i|, or NULL. */
static const mlc_rt_tensor_desc *io_tensor(const mlc_rt_model *m, int output, int32_t i) {
  if (!m || i < 0 || i >= mlc_rt_model_num_io(m, output)) return NULL;
  const mlc_rt_io_desc *io = output ? m->desc->outputs : m->desc->inputs;
  return &m->desc->tensors[io[i].tensor];
}

const char *mlc_rt_model_io_name(const mlc_rt_model *m, int output, int32_t i) {
  if (!io_tensor(m, output, i)) return NULL;
  return (output ? m->desc->outputs : m->desc->inputs)[i].name;
}

DLDataType mlc_rt_model_io_dtype(const mlc_rt_model *m, int output, int32_t i) {
  const mlc_rt_tensor_desc *t = io_tensor(m, output, i);
  if (!t) {
    DLDataType none = {0, 0, 0};
    return none;
  }
  return t->dtype;
}

int32_t mlc_rt_model_io_ndim(const mlc_rt_model *m, int output, int32_t i) {
  const mlc_rt_tensor_desc *t = io_tensor(m, output, i);
  return t ? t->ndim : -1;
}

int64_t mlc_rt_model_io_dim(const mlc_rt_model *m, int output, int32_t i, int32_t d) {
  const mlc_rt_tensor_desc *t = io_tensor(m, output, i);
  if (!t || d < 0 || d >= t->ndim) return -1;
  return t->dims[d] >= 0 ? t->dims[d] : -1;
}

const char *mlc_rt_model_io_dim_name(const mlc_rt_model *m, int output, int32_t i, int32_t d) {
  const mlc_rt_tensor_desc *t = io_tensor(m, output, i);
  if (!t || d < 0 || d >= t->ndim || t->dims[d] >= 0) return NULL;
  return m->desc->sym_names[-1 - t->dims[d]];
}

int32_t mlc_rt_model_input_has_default(const mlc_rt_model *m, int32_t i) {
  return io_tensor(m, 0, i) ? m->desc->inputs[i].has_default != 0 : 0;
}

int32_t mlc_rt_model_num_symbols(const mlc_rt_model *m) {
  m = live(m);
  return m ? m->desc->nsyms : 0;
}

const char *mlc_rt_model_symbol_name(const mlc_rt_model *m, int32_t k) {
  m = live(m);
  if (!m || k < 0 || k >= m->desc->nsyms) return NULL;
  return m->desc->sym_names[k];
}
