/*
** inspect_so.c: `inspect model.so`: what the compiler decided.
**
** Reads the file, never loads it: the ELF headers are checked and the
** model description section found and decoded (runtime/rt_so.h, the same
** checks the loader makes before dlopen), so nothing of the model runs,
** not even its constructors.  Shown: the I/O signature, symbolic dims, the
** steps and kernels (and which calls go to external libraries), storages,
** weights, and the manifest the compiler embedded (compiler version,
** source model hash, target, options, arena bytes).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "driver/driver_int.h"
#include "runtime/rt_blob.h"
#include "runtime/rt_so.h"

static const char *dl_name(DLDataType t, char *buf, size_t n) {
  const char *base = t.code == kDLFloat ? "float" : t.code == kDLInt ? "int" : t.code == kDLUInt ? "uint"
                     : t.code == kDLBfloat ? "bfloat" : "?";
  if (t.code == 6) return "bool";
  snprintf(buf, n, "%s%d", base, t.bits);
  return buf;
}

static void shape_of(const mlc_rt_model_desc *d, const mlc_rt_tensor_desc *t, int json, mlc_strbuf *b) {
  mlc_sb_puts(b, json ? "[" : "(");
  for (int i = 0; i < t->ndim; i++) {
    if (i) mlc_sb_puts(b, ", ");
    int64_t v = t->dims[i];
    if (v >= 0)
      mlc_sb_printf(b, "%lld", (long long)v);
    else if (json)
      mlc_sb_json_str(b, -1 - v < d->nsyms ? d->sym_names[-1 - v] : "?");
    else
      mlc_sb_puts(b, -1 - v < d->nsyms ? d->sym_names[-1 - v] : "?");
  }
  if (!json && t->ndim == 1) mlc_sb_putc(b, ',');
  mlc_sb_puts(b, json ? "]" : ")");
}

/* Value of a top-level numeric key in the manifest, or -1. */
static long long manifest_int(const char *m, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\": ", key);
  const char *p = m ? strstr(m, pat) : NULL;
  return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

static void io_list(const mlc_rt_model_desc *d, int out, int json, mlc_strbuf *b) {
  int n = out ? d->noutputs : d->ninputs;
  const mlc_rt_io_desc *io = out ? d->outputs : d->inputs;
  char nb[32];
  for (int i = 0; i < n; i++) {
    const mlc_rt_tensor_desc *t = &d->tensors[io[i].tensor];
    if (json) {
      mlc_sb_puts(b, i ? ", {\"name\": " : "{\"name\": ");
      mlc_sb_json_str(b, io[i].name);
      mlc_sb_printf(b, ", \"dtype\": \"%s\", \"shape\": ", dl_name(t->dtype, nb, sizeof nb));
      shape_of(d, t, 1, b);
      mlc_sb_putc(b, '}');
    } else {
      mlc_sb_printf(b, "  %d %s: %s ", i, io[i].name, dl_name(t->dtype, nb, sizeof nb));
      shape_of(d, t, 0, b);
      mlc_sb_putc(b, '\n');
    }
  }
}

/* A run-time shape step: a binding of symbols or one of the runtime's
** "mlc.*" built-ins. */
static int is_shape_step(const mlc_rt_step_desc *st) {
  return st->kind == MLC_RT_STEP_BIND_SYMS ||
         (st->kind == MLC_RT_STEP_EXTERN && st->name && strncmp(st->name, "mlc.", 4) == 0);
}

mlc_status mlc_drv_inspect_so(const char *path, int json, mlc_strbuf *b) {
  char err[1024];
  mlc_rt_model_desc *d = NULL;
  mlc_rt_status rs = mlc_rt_so_check_file(NULL, path, &d, err, sizeof err);
  if (rs == MLC_RT_ABI_MISMATCH) return mlc_make_status(MLC_UNIMPLEMENTED, "%s: %s", path, err);
  if (rs == MLC_RT_OUT_OF_MEMORY) return mlc_oom();
  if (rs != MLC_RT_OK) return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: %s", path, err);
  /* external calls; run-time shape steps: the runtime's "mlc.*" built-ins
  ** and the symbol bindings */
  int next = 0, nshape = 0;
  for (int i = 0; i < d->nsteps; i++) {
    int shape = is_shape_step(&d->steps[i]);
    nshape += shape;
    next += !shape && d->steps[i].kind == MLC_RT_STEP_EXTERN;
  }
  long long arena = manifest_int(d->manifest, "arena_bytes");
  if (json) {
    mlc_sb_puts(b, "{\"file\": ");
    mlc_sb_json_str(b, path);
    mlc_sb_puts(b, ", \"name\": ");
    mlc_sb_json_str(b, d->name);
    mlc_sb_puts(b, ", \"inputs\": [");
    io_list(d, 0, 1, b);
    mlc_sb_puts(b, "], \"outputs\": [");
    io_list(d, 1, 1, b);
    mlc_sb_puts(b, "], \"symbols\": [");
    for (int i = 0; i < d->nsyms; i++) {
      if (i) mlc_sb_puts(b, ", ");
      mlc_sb_json_str(b, d->sym_names[i]);
    }
    mlc_sb_printf(b, "], \"steps\": %d, \"kernels\": [", d->nsteps);
    for (int i = 0; i < d->nkernels; i++) {
      if (i) mlc_sb_puts(b, ", ");
      mlc_sb_json_str(b, d->kernel_names[i]);
    }
    mlc_sb_puts(b, "], \"extern_calls\": [");
    for (int i = 0, k = 0; i < d->nsteps; i++) {
      if (d->steps[i].kind != MLC_RT_STEP_EXTERN || is_shape_step(&d->steps[i])) continue;
      mlc_sb_puts(b, k++ ? ", {\"function\": " : "{\"function\": ");
      mlc_sb_json_str(b, d->steps[i].name);
      mlc_sb_puts(b, ", \"node\": ");
      mlc_sb_json_str(b, d->steps[i].label);
      mlc_sb_putc(b, '}');
    }
    mlc_sb_puts(b, "], \"shape_steps\": [");
    for (int i = 0, k = 0; i < d->nsteps; i++) {
      if (!is_shape_step(&d->steps[i])) continue;
      mlc_sb_puts(b, k++ ? ", {\"function\": " : "{\"function\": ");
      mlc_sb_json_str(b, d->steps[i].name);
      mlc_sb_puts(b, ", \"node\": ");
      mlc_sb_json_str(b, d->steps[i].label);
      mlc_sb_putc(b, '}');
    }
    mlc_sb_printf(b, "], \"arena_bytes\": %lld, \"storages\": %d, \"weights_bytes\": %llu, \"manifest\": %s",
                  arena, d->nstorages, (unsigned long long)d->weights_size,
                  d->manifest && *d->manifest ? d->manifest : "null");
    /* "options" at the top level too, as the command line documents. */
    const char *opt = d->manifest ? strstr(d->manifest, "\"options\": ") : NULL;
    if (opt) {
      const char *end = strchr(opt, '}');
      if (end) mlc_sb_printf(b, ", %.*s", (int)(end - opt + 1), opt);
    }
    mlc_sb_puts(b, "}\n");
  } else {
    mlc_sb_printf(b, "compiled model %s (%s)\n", d->name, path);
    mlc_sb_printf(b, "manifest: %s\n", d->manifest ? d->manifest : "(none)");
    mlc_sb_printf(b, "inputs (%d):\n", d->ninputs);
    io_list(d, 0, 0, b);
    mlc_sb_printf(b, "outputs (%d):\n", d->noutputs);
    io_list(d, 1, 0, b);
    if (d->nsyms) {
      mlc_sb_puts(b, "symbolic dims:");
      for (int i = 0; i < d->nsyms; i++) mlc_sb_printf(b, " %s", d->sym_names[i]);
      mlc_sb_putc(b, '\n');
    }
    mlc_sb_printf(b, "plan: %d steps (%d generated kernels, %d external calls", d->nsteps,
                  d->nsteps - next - nshape, next);
    if (nshape) mlc_sb_printf(b, ", %d run-time shape steps", nshape);
    mlc_sb_printf(b, "), %d tensors, %d arena storages\n", d->ntensors, d->nstorages);
    if (arena >= 0)
      mlc_sb_printf(b, "arena: %lld bytes\n", arena);
    else if (nshape)
      mlc_sb_puts(b, "arena: depends on input or run-time dims\n");
    else
      mlc_sb_puts(b, "arena: depends on the symbolic dims\n");
    mlc_sb_printf(b, "weights: %llu bytes\n", (unsigned long long)d->weights_size);
    mlc_sb_printf(b, "kernels (%d):\n", d->nkernels);
    for (int i = 0; i < d->nkernels; i++) {
      int uses = 0;
      for (int k = 0; k < d->nsteps; k++) uses += d->steps[k].name && !strcmp(d->steps[k].name, d->kernel_names[i]);
      mlc_sb_printf(b, "  %-28s x%d\n", d->kernel_names[i], uses);
    }
    if (next) {
      mlc_sb_puts(b, "external calls:\n");
      for (int i = 0; i < d->nsteps; i++)
        if (d->steps[i].kind == MLC_RT_STEP_EXTERN && !is_shape_step(&d->steps[i]))
          mlc_sb_printf(b, "  %s (node \"%s\")\n", d->steps[i].name, d->steps[i].label);
    }
    if (nshape) {
      mlc_sb_puts(b, "run-time shapes:\n");
      for (int i = 0; i < d->nsteps; i++) {
        const mlc_rt_step_desc *st = &d->steps[i];
        if (!is_shape_step(st)) continue;
        if (st->kind != MLC_RT_STEP_BIND_SYMS) {
          mlc_sb_printf(b, "  step %d: %s (node \"%s\")\n", i, st->name, st->label);
          continue;
        }
        mlc_sb_printf(b, "  step %d: define", i);
        for (int a = 3; a < st->nargs; a++) {
          if (st->args[a].kind == MLC_RT_ARG_SYM && st->args[a].value >= 0 && st->args[a].value < d->nsyms)
            mlc_sb_printf(b, "%s %s", a > 3 ? "," : "", d->sym_names[st->args[a].value]);
          else
            mlc_sb_printf(b, "%s %lld", a > 3 ? "," : "", (long long)st->args[a].value);
        }
        mlc_sb_printf(b, " (node \"%s\")\n", st->label);
      }
    }
  }
  mlc_rt_desc_free(d);
  return NULL;
}
