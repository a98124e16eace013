/*
** inspect_so.c: `inspect model.so`: what the compiler decided.
**
** Reads the file, never loads it: the ELF headers are checked and the
** model description section found and decoded (runtime/rt_so.h, the same
** checks the loader makes before dlopen), so nothing of the model runs,
** not even its constructors.  Shown: the I/O signature (and which inputs
** have a default value), symbolic dims, the steps and kernels (and which
** calls go to external libraries), storages,
** weights, and the manifest the compiler embedded (compiler version,
** source model hash, target, options, arena and intermediate bytes), and
** for every step of the plan the ONNX nodes it computes (the manifest's
** "plan": a fused kernel lists all its member nodes).  The manifest is
** parsed (manifest.h, jansson) and written again, escaped, so a damaged or
** hostile one is reported as unreadable, never copied into the report.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "driver/driver_int.h"
#include "driver/manifest.h"
#include "runtime/rt_blob.h"
#include "runtime/rt_so.h"

/* |s| as a JSON string, valid UTF-8 whatever bytes it holds. */
static void jstr(mlc_strbuf *b, const char *s) { mlc_json_write_bytes(b, s, s ? strlen(s) : 0); }

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
      jstr(b, -1 - v < d->nsyms ? d->sym_names[-1 - v] : "?");
    else
      mlc_sb_puts(b, -1 - v < d->nsyms ? d->sym_names[-1 - v] : "?");
  }
  if (!json && t->ndim == 1) mlc_sb_putc(b, ',');
  mlc_sb_puts(b, json ? "]" : ")");
}

/* Value of the top-level integer |key| of the manifest, or -1. */
/* The manifest's "tuned_kernels" entry of kernel |name|, or NULL. */
static const json_t *tuned_kernel(const json_t *man, const char *name) {
  const json_t *a = man ? json_object_get(man, "tuned_kernels") : NULL;
  for (size_t i = 0; json_is_array(a) && i < json_array_size(a); i++) {
    const char *k = json_string_value(json_object_get(json_array_get(a, i), "kernel"));
    if (k && !strcmp(k, name)) return json_array_get(a, i);
  }
  return NULL;
}

static long long manifest_int(const json_t *m, const char *key) {
  const json_t *v = json_object_get(m, key);
  return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

/* Longest part of a node name the text report shows. */
#define TEXT_NAME_MAX 200

/* |s| for a terminal, in quotes when |quote|: '"' (quoted) and '\\'
** escaped, control bytes as \xNN, a name longer than TEXT_NAME_MAX bytes
** cut and marked with its length. */
static void put_name(mlc_strbuf *b, const char *s, int quote) {
  size_t n = strlen(s);
  if (quote) mlc_sb_putc(b, '"');
  for (size_t i = 0; i < n && i < TEXT_NAME_MAX; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c == '"' && quote) || c == '\\') mlc_sb_printf(b, "\\%c", c);
    else if (c == '\n') mlc_sb_puts(b, "\\n");
    else if (c < 0x20 || c == 0x7f) mlc_sb_printf(b, "\\x%02x", c);
    else mlc_sb_putc(b, (char)c);
  }
  if (quote) mlc_sb_putc(b, '"');
  if (n > TEXT_NAME_MAX) mlc_sb_printf(b, "... (%zu bytes)", n);
}

/*
** The manifest's "plan" when it describes the steps of |d|: an array with
** one entry per step, each {"kernel": the step's function name, "nodes":
** [{"name": string, "op_type": string}, ...]}; NULL otherwise (a model
** compiled before plans were recorded, or a manifest that does not agree
** with the description).
*/
static const json_t *manifest_plan(const mlc_rt_model_desc *d, const json_t *m) {
  const json_t *plan = json_object_get(m, "plan");
  if (!json_is_array(plan) || json_array_size(plan) != (size_t)d->nsteps) return NULL;
  for (int i = 0; i < d->nsteps; i++) {
    const json_t *e = json_array_get(plan, (size_t)i), *nodes = json_object_get(e, "nodes");
    const char *k = json_string_value(json_object_get(e, "kernel"));
    if (!k || strcmp(k, d->steps[i].name ? d->steps[i].name : "") != 0) return NULL;
    if (!json_is_array(nodes)) return NULL;
    for (size_t j = 0; j < json_array_size(nodes); j++)
      if (!json_is_string(json_object_get(json_array_get(nodes, j), "name")) ||
          !json_is_string(json_object_get(json_array_get(nodes, j), "op_type")))
        return NULL;
  }
  return plan;
}

/* The nodes of step |i| of a plan from manifest_plan (NULL: none). */
static const json_t *step_nodes(const json_t *plan, int i) {
  return plan ? json_object_get(json_array_get(plan, (size_t)i), "nodes") : NULL;
}

/* Appends the JSON string |v| (a string of a checked plan). */
static void put_jstr(mlc_strbuf *b, const json_t *v) {
  mlc_json_write_bytes(b, json_string_value(v), json_string_length(v));
}

static const char *step_kind(const mlc_rt_step_desc *st) {
  switch (st->kind) {
    case MLC_RT_STEP_KERNEL: return "kernel";
    case MLC_RT_STEP_EXTERN: return "extern";
    case MLC_RT_STEP_IF: return "if";
    case MLC_RT_STEP_ELSE: return "else";
    case MLC_RT_STEP_END_IF: return "end_if";
    case MLC_RT_STEP_LOOP: return "loop";
    case MLC_RT_STEP_LOOP_END: return "loop_end";
    default: return "bind_syms";
  }
}

/* "steps": one object per step of the plan, with the ONNX nodes it covers
** (null when the manifest does not record them). */
static void steps_json(const mlc_rt_model_desc *d, const json_t *plan, mlc_strbuf *b) {
  mlc_sb_puts(b, "[");
  for (int i = 0; i < d->nsteps; i++) {
    const mlc_rt_step_desc *st = &d->steps[i];
    const char *name = st->name ? st->name : "";
    mlc_sb_printf(b, "%s{\"step\": %d, \"kind\": \"%s\", \"kernel\": ", i ? ", " : "", i, step_kind(st));
    mlc_json_write_bytes(b, name, strlen(name));
    mlc_sb_puts(b, ", \"nodes\": ");
    const json_t *nodes = step_nodes(plan, i);
    if (!nodes) {
      mlc_sb_puts(b, "null}");
      continue;
    }
    mlc_sb_putc(b, '[');
    for (size_t j = 0; j < json_array_size(nodes); j++) {
      const json_t *nd = json_array_get(nodes, j);
      mlc_sb_puts(b, j ? ", {\"name\": " : "{\"name\": ");
      put_jstr(b, json_object_get(nd, "name"));
      mlc_sb_puts(b, ", \"op_type\": ");
      put_jstr(b, json_object_get(nd, "op_type"));
      mlc_sb_putc(b, '}');
    }
    mlc_sb_puts(b, "]}");
  }
  mlc_sb_putc(b, ']');
}

/* The text list of steps: `  3    fused_conv2d_add_relu: "conv1" (Conv), "relu1" (Relu)` */
static void steps_text(const mlc_rt_model_desc *d, const json_t *plan, mlc_strbuf *b) {
  mlc_sb_printf(b, "steps (%d)%s:\n", d->nsteps,
                plan || !d->nsteps ? "" : " (the ONNX nodes of each are not recorded in this model)");
  for (int i = 0; i < d->nsteps; i++) {
    const mlc_rt_step_desc *st = &d->steps[i];
    mlc_sb_printf(b, "  %-4d ", i);
    put_name(b, st->name ? st->name : "", 0);
    const json_t *nodes = step_nodes(plan, i);
    if (!nodes) {
      mlc_sb_puts(b, " (node ");
      put_name(b, st->label ? st->label : "", 1);
      mlc_sb_puts(b, ")\n");
      continue;
    }
    mlc_sb_puts(b, ":");
    for (size_t j = 0; j < json_array_size(nodes); j++) {
      const json_t *nd = json_array_get(nodes, j);
      mlc_sb_puts(b, j ? ", " : " ");
      put_name(b, json_string_value(json_object_get(nd, "name")), 1);
      mlc_sb_puts(b, " (");
      put_name(b, json_string_value(json_object_get(nd, "op_type")), 0);
      mlc_sb_putc(b, ')');
    }
    if (!json_array_size(nodes)) mlc_sb_puts(b, " (no ONNX node)");
    mlc_sb_putc(b, '\n');
  }
}

/* Bytes of static tensor |t| (a default's; the file is not validated):
** 0 for a symbolic dim or an overflow. */
static uint64_t default_bytes(const mlc_rt_tensor_desc *t) {
  uint64_t n = ((uint64_t)t->dtype.bits * t->dtype.lanes + 7) / 8;
  for (int32_t k = 0; k < t->ndim; k++) {
    if (t->dims[k] < 0 || (t->dims[k] > 0 && n > UINT64_MAX / (uint64_t)t->dims[k])) return 0;
    n *= (uint64_t)t->dims[k];
  }
  return n;
}

static void io_list(const mlc_rt_model_desc *d, int out, int json, mlc_strbuf *b) {
  int n = out ? d->noutputs : d->ninputs;
  const mlc_rt_io_desc *io = out ? d->outputs : d->inputs;
  char nb[32];
  for (int i = 0; i < n; i++) {
    const mlc_rt_tensor_desc *t = &d->tensors[io[i].tensor];
    if (json) {
      mlc_sb_puts(b, i ? ", {\"name\": " : "{\"name\": ");
      jstr(b, io[i].name);
      mlc_sb_printf(b, ", \"dtype\": \"%s\", \"shape\": ", dl_name(t->dtype, nb, sizeof nb));
      shape_of(d, t, 1, b);
      if (!out) mlc_sb_printf(b, ", \"has_default\": %s", io[i].has_default ? "true" : "false");
      mlc_sb_putc(b, '}');
    } else {
      mlc_sb_printf(b, "  %d %s: %s ", i, io[i].name, dl_name(t->dtype, nb, sizeof nb));
      shape_of(d, t, 0, b);
      if (!out && io[i].has_default)
        mlc_sb_printf(b, "  (default: %llu bytes at weights offset %lld)", (unsigned long long)default_bytes(t),
                      (long long)io[i].default_loc);
      mlc_sb_putc(b, '\n');
    }
  }
}

/* A string member of |o| for a terminal (put_name), or "". */
static void put_member(mlc_strbuf *b, const json_t *o, const char *key, int quote) {
  const char *v = json_string_value(json_object_get(o, key));
  put_name(b, v ? v : "", quote);
}

/* The dispatcher's decisions of the manifest ("extern_choices"): per op
** it looked at, the candidates with their measured times, the choice and
** why. */
static void dispatch_text(const json_t *man, mlc_strbuf *b) {
  const json_t *au = json_object_get(man, "extern_auto");
  const json_t *mm = json_object_get(au, "model_with_libraries_ms"), *gm = json_object_get(au, "model_generated_ms");
  if (json_is_number(mm) && json_is_number(gm))
    mlc_sb_printf(b, "auto: the model with the library calls chosen below ran %.3f ms, with generated code only "
                  "%.3f ms: %s\n",
                  json_number_value(mm), json_number_value(gm),
                  json_number_value(gm) <= json_number_value(mm) ? "generated code kept" : "the libraries kept");
  const json_t *ch = json_object_get(man, "extern_choices");
  if (!json_is_array(ch) || json_array_size(ch) == 0) return;
  mlc_sb_printf(b, "dispatch (%zu ops an external library takes):\n", json_array_size(ch));
  for (size_t i = 0; i < json_array_size(ch); i++) {
    const json_t *e = json_array_get(ch, i);
    mlc_sb_puts(b, "  ");
    put_member(b, e, "op", 0);
    mlc_sb_putc(b, ' ');
    put_member(b, e, "node", 1);
    mlc_sb_putc(b, ' ');
    put_member(b, e, "shape", 0);
    mlc_sb_puts(b, " -> ");
    put_member(b, e, "chosen", 0);
    mlc_sb_puts(b, " (");
    put_member(b, e, "why", 0);
    mlc_sb_puts(b, ")");
    const json_t *c = json_object_get(e, "candidates");
    int timed = 0;
    for (size_t j = 0; json_is_array(c) && j < json_array_size(c); j++)
      timed |= json_is_number(json_object_get(json_array_get(c, j), "ms"));
    for (size_t j = 0; timed && j < json_array_size(c); j++) {
      const json_t *cj = json_array_get(c, j);
      mlc_sb_puts(b, j ? ", " : ": ");
      put_member(b, cj, "kernel", 0);
      const json_t *ms = json_object_get(cj, "ms");
      if (json_is_number(ms)) mlc_sb_printf(b, " %.3f ms", json_number_value(ms));
      else mlc_sb_puts(b, " (not timed)");
    }
    const json_t *cv = json_object_get(e, "convert_ms");
    if (timed && json_is_number(cv))
      mlc_sb_printf(b, " (a library's time includes %.3f ms of layout conversions)", json_number_value(cv));
    mlc_sb_putc(b, '\n');
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
  /* The manifest is text from the file: parsed, and shown only as JSON
  ** written again (escaped), never copied as it is. */
  json_t *man = NULL;
  mlc_status ms = d->manifest && *d->manifest ? mlc_manifest_parse(d->manifest, strlen(d->manifest), &man) : NULL;
  if (ms && mlc_status_code(ms) == MLC_RESOURCE_EXHAUSTED) {
    mlc_rt_desc_free(d);
    return ms;
  }
  const json_t *plan = manifest_plan(d, man);
  long long arena = manifest_int(man, "arena_bytes"), inter = manifest_int(man, "intermediate_bytes");
  if (json) {
    mlc_sb_puts(b, "{\"file\": ");
    jstr(b, path);
    mlc_sb_puts(b, ", \"name\": ");
    jstr(b, d->name);
    mlc_sb_puts(b, ", \"inputs\": [");
    io_list(d, 0, 1, b);
    mlc_sb_puts(b, "], \"outputs\": [");
    io_list(d, 1, 1, b);
    mlc_sb_puts(b, "], \"symbols\": [");
    for (int i = 0; i < d->nsyms; i++) {
      if (i) mlc_sb_puts(b, ", ");
      jstr(b, d->sym_names[i]);
    }
    mlc_sb_printf(b, "], \"device\": \"%s\", \"nsteps\": %d, \"steps\": ", d->device == kDLCUDA ? "cuda" : "cpu",
                  d->nsteps);
    steps_json(d, plan, b);
    mlc_sb_puts(b, ", \"kernels\": [");
    for (int i = 0; i < d->nkernels; i++) {
      if (i) mlc_sb_puts(b, ", ");
      jstr(b, d->kernel_names[i]);
    }
    mlc_sb_puts(b, "], \"tuned_kernels\": [");
    const json_t *tks = man ? json_object_get(man, "tuned_kernels") : NULL;
    for (size_t i = 0; json_is_array(tks) && i < json_array_size(tks); i++) {
      const char *k = json_string_value(json_object_get(json_array_get(tks, i), "kernel"));
      if (!k) continue;
      if (i) mlc_sb_puts(b, ", ");
      jstr(b, k);
    }
    mlc_sb_puts(b, "], \"extern_calls\": [");
    for (int i = 0, k = 0; i < d->nsteps; i++) {
      if (d->steps[i].kind != MLC_RT_STEP_EXTERN || is_shape_step(&d->steps[i])) continue;
      mlc_sb_puts(b, k++ ? ", {\"function\": " : "{\"function\": ");
      jstr(b, d->steps[i].name);
      mlc_sb_puts(b, ", \"node\": ");
      jstr(b, d->steps[i].label);
      mlc_sb_putc(b, '}');
    }
    mlc_sb_puts(b, "], \"plugins\": [");
    for (int i = 0; i < d->nplugins; i++) {
      if (i) mlc_sb_puts(b, ", ");
      jstr(b, d->plugins[i]);
    }
    mlc_sb_puts(b, "], \"shape_steps\": [");
    for (int i = 0, k = 0; i < d->nsteps; i++) {
      if (!is_shape_step(&d->steps[i])) continue;
      mlc_sb_puts(b, k++ ? ", {\"function\": " : "{\"function\": ");
      jstr(b, d->steps[i].name);
      mlc_sb_puts(b, ", \"node\": ");
      jstr(b, d->steps[i].label);
      mlc_sb_putc(b, '}');
    }
    mlc_sb_printf(b, "], \"arena_bytes\": %lld, \"intermediate_bytes\": %lld, \"storages\": %d, "
                  "\"weights_bytes\": %llu, \"manifest\": ",
                  arena, inter, d->nstorages, (unsigned long long)d->weights_size);
    /* the plan is "steps" above */
    mlc_manifest_write(b, man, "plan");
    if (ms) {
      mlc_sb_puts(b, ", \"manifest_error\": ");
      jstr(b, mlc_status_message(ms));
    }
    /* "options" at the top level too, as the command line documents. */
    const json_t *opt = json_object_get(man, "options");
    if (opt) {
      mlc_sb_puts(b, ", \"options\": ");
      mlc_manifest_write(b, opt, NULL);
    }
    mlc_sb_puts(b, "}\n");
  } else {
    mlc_sb_printf(b, "compiled model %s (%s)\n", d->name, path);
    mlc_sb_puts(b, "manifest: ");
    if (man) mlc_manifest_write(b, man, "plan");
    else if (ms) mlc_sb_printf(b, "(unreadable: %s)", mlc_status_message(ms));
    else mlc_sb_puts(b, "(none)");
    mlc_sb_putc(b, '\n');
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
    if (arena >= 0 && inter >= 0)
      mlc_sb_printf(b, "arena: %lld bytes (intermediates %lld bytes)\n", arena, inter);
    else if (arena >= 0)
      mlc_sb_printf(b, "arena: %lld bytes\n", arena);
    else if (!man)
      mlc_sb_puts(b, "arena: not recorded (no readable manifest)\n");
    else if (nshape)
      mlc_sb_puts(b, "arena: depends on input or run-time dims\n");
    else
      mlc_sb_puts(b, "arena: depends on the symbolic dims\n");
    mlc_sb_printf(b, "weights: %llu bytes\n", (unsigned long long)d->weights_size);
    if (d->device == kDLCUDA)
      mlc_sb_puts(b, "device: CUDA (the kernels below launch the GPU kernels of the manifest's device_kernels)\n");
    mlc_sb_printf(b, "kernels (%d):\n", d->nkernels);
    for (int i = 0; i < d->nkernels; i++) {
      int uses = 0;
      for (int k = 0; k < d->nsteps; k++) uses += d->steps[k].name && !strcmp(d->steps[k].name, d->kernel_names[i]);
      mlc_sb_printf(b, "  %-28s x%d", d->kernel_names[i], uses);
      const json_t *tk = tuned_kernel(man, d->kernel_names[i]);
      if (tk) {
        double tms = json_number_value(json_object_get(tk, "ms")), dm = json_number_value(json_object_get(tk, "default_ms"));
        if (dm > 0 && tms > 0) mlc_sb_printf(b, "  tuned: %.4f ms (default %.4f ms, %.2fx)", tms, dm, dm / tms);
        else mlc_sb_puts(b, "  tuned");
      }
      mlc_sb_putc(b, '\n');
    }
    if (next) {
      mlc_sb_puts(b, "external calls:\n");
      for (int i = 0; i < d->nsteps; i++)
        if (d->steps[i].kind == MLC_RT_STEP_EXTERN && !is_shape_step(&d->steps[i])) {
          mlc_sb_puts(b, "  ");
          put_name(b, d->steps[i].name, 0);
          mlc_sb_puts(b, " (node ");
          put_name(b, d->steps[i].label ? d->steps[i].label : "", 1);
          mlc_sb_puts(b, ")\n");
        }
    }
    if (d->nplugins) {
      mlc_sb_puts(b, "plugins:");
      for (int i = 0; i < d->nplugins; i++) {
        mlc_sb_putc(b, ' ');
        put_name(b, d->plugins[i], 0);
      }
      mlc_sb_puts(b, " (loaded with the model: already in the process, else from MLC_EXTERN_LIB_PATH, else next to it)\n");
    }
    dispatch_text(man, b);
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
    steps_text(d, plan, b);
  }
  json_decref(man);
  mlc_status_free(ms);
  mlc_rt_desc_free(d);
  return NULL;
}
