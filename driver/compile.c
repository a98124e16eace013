/*
** compile.c: mlc_compile_file, the whole compile path in order.
**
**   load .onnx -> import (frontend) -> the one pipeline (graph/pipeline.c:
**   graph passes, fuse_tir, legalize, schedule, lower_tir, plan_memory)
**   -> codegen (LLVM, object) -> archive (model.so + model.h)
**
** Each stage reports progress and, with a dump directory, writes the IR it
** produced.  Scratch files live in a private temporary directory that is
** removed at the end.
*/
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/outfile.h"
#include "base/sha256.h"
#include "base/strbuf.h"
#include "codegen/codegen.h"
#include "driver/driver_int.h"
#include "driver/tune_int.h"
#include "extern/extern.h"
#include "frontend/frontend.h"
#include "graph/pass.h"
#include "lower/lower.h"
#include "lower/tir_lower.h"
#include "onnx/onnx.h"

void mlc_compile_options_init(mlc_compile_options *o) { memset(o, 0, sizeof *o); }

typedef struct cstate {
  const mlc_compile_options *o;
  double step_wall, step_cpu; /* start of the current step (verbose) */
  double t_stage;             /* start of the current stage (progress) */
  mlc_lower_traces *traces;
} cstate;

static double clock_ms(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double now_ms(void) { return clock_ms(CLOCK_MONOTONIC); }

/* CPU time of this process and of its finished children (the C compiler). */
static double cpu_ms(void) {
  struct rusage ru;
  double ms = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
    ms += (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  return ms;
}

static void progress(cstate *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(cstate *c, const char *fmt, ...) {
  if (!c->o->progress) return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  c->o->progress(c->o->progress_user, line);
}

/* Verbose: one line for the step that ends now (wall-clock and CPU time,
** children included, since the previous step ended); the next step starts. */
static void step_done(cstate *c, const char *name) {
  double w = now_ms(), u = cpu_ms();
  if (c->o->verbose)
    progress(c, "      %-14s %9.1f ms  (cpu %9.1f ms)", name, w - c->step_wall, u - c->step_cpu);
  c->step_wall = w;
  c->step_cpu = u;
}

/* Verbose: the pass manager's log lines ("pass NAME: T ms"), one progress
** line each. */
static void forward_pass_log(cstate *c, char *log) {
  for (char *line = log; line && *line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    if (*line) progress(c, "      %s", line);
    line = nl ? nl + 1 : NULL;
  }
}

static mlc_status dump_text(cstate *c, const char *name, const char *text) {
  if (!c->o->dump_ir_dir) return NULL;
  char p[4096];
  snprintf(p, sizeof p, "%s/%s", c->o->dump_ir_dir, name);
  return mlc_drv_write_file(p, text, strlen(text));
}

static mlc_status dump_graph(cstate *c, const char *name, const mlc_module *m) {
  if (!c->o->dump_ir_dir) return NULL;
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_graph_print(m, &b);
  mlc_status s = b.oom ? mlc_oom() : dump_text(c, name, mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return s;
}

static mlc_status dump_tir(cstate *c, const char *name, const mlc_tir_module *m) {
  if (!c->o->dump_ir_dir) return NULL;
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_module(m, &b);
  mlc_status s = b.oom ? mlc_oom() : dump_text(c, name, mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return s;
}

/* 11_schedule/NAME.tir and NAME.trace for every kernel: its TIR before
** scheduling and the trace that scheduled it (`mlc-onnx schedule NAME.tir
** --trace NAME.trace` gives the kernel of 11_schedule.tir.txt). */
static mlc_status dump_schedules(cstate *c, const mlc_tir_module *m, const mlc_lower_traces *tr) {
  if (!c->o->dump_ir_dir) return NULL;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/11_schedule", c->o->dump_ir_dir);
  MLC_RETURN_IF_ERROR(mlc_out_mkdir(dir));
  for (int i = 0; i < m->nfuncs && i < tr->n; i++) {
    char name[160], file[256];
    size_t k = 0;
    for (const char *p = m->funcs[i]->name; *p && k < 120; p++) {
      char ch = *p;
      int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
      name[k++] = ok ? ch : '_';
    }
    name[k] = 0;
    mlc_strbuf b = MLC_STRBUF_INIT;
    mlc_tir_print_func(tr->before[i] ? tr->before[i] : m->funcs[i], &b);
    snprintf(file, sizeof file, "11_schedule/%s.tir", name);
    mlc_status s = b.oom ? mlc_oom() : dump_text(c, file, mlc_sb_str(&b));
    mlc_sb_fini(&b);
    snprintf(file, sizeof file, "11_schedule/%s.trace", name);
    if (!s) s = dump_text(c, file, tr->text[i] ? tr->text[i] : "");
    if (s) return s;
  }
  return NULL;
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static mlc_status hash_file(const char *path, char hex[65]) {
  FILE *f = fopen(path, "rb");
  if (!f) return mlc_make_status(MLC_IO_ERROR, "cannot read %s: %s", path, strerror(errno));
  mlc_sha256 c;
  mlc_sha256_init(&c);
  unsigned char buf[1 << 16], d[32];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) mlc_sha256_update(&c, buf, n);
  fclose(f);
  mlc_sha256_final(&c, d);
  for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
  return NULL;
}

static void rm_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char p[4096];
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
      rm_tree(p);
    else
      unlink(p);
  }
  closedir(d);
  rmdir(dir);
}

/* Checks the outputs before any work: the library |so| and the header |h|
** (NULL: none) must be writable (mlc_out_check: no link, no special file),
** neither may be the model |model| itself, and they must be two files. */
static mlc_status check_outputs(const char *model, const char *so, const char *h) {
  MLC_RETURN_IF_ERROR(mlc_out_check(so));
  if (mlc_out_same_file(so, model))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "output %s is the input model %s: refusing to overwrite it", so,
                           model);
  if (!h) return NULL;
  MLC_RETURN_IF_ERROR(mlc_out_check(h));
  if (mlc_out_same_file(h, model))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "header %s is the input model %s: refusing to overwrite it", h,
                           model);
  if (mlc_out_same_file(h, so))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "header %s is the same file as the output %s", h, so);
  return NULL;
}

static int count_kernels(const mlc_func *f) {
  int n = 0;
  for (int bi = 0; bi < f->nblocks; bi++) n += f->blocks[bi].n;
  return n;
}

/* The target as a command-line string naming the CPU ("llvm -mcpu=znver5"). */
static void target_spec(const mlc_target *t, char *buf, size_t n) {
  if (t->device != MLC_TARGET_CPU || strstr(t->spec, "-mcpu=") || !t->cpu || !*t->cpu)
    snprintf(buf, n, "%s", t->spec);
  else
    snprintf(buf, n, "%s -mcpu=%s", t->spec, t->cpu);
}

/* The bytes of every intermediate tensor of |f| (each binding output that
** |f| does not return), as if none shared memory; -1 when one has a
** symbolic dim. */
static int64_t intermediate_bytes(const mlc_func *f) {
  int64_t total = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int k = 0; k < f->blocks[bi].n; k++) {
      const mlc_binding *bd = f->blocks[bi].bindings[k];
      for (int j = 0; j < bd->nouts; j++) {
        const mlc_value *v = bd->outs[j];
        int ret = 0;
        for (int r = 0; r < f->nrets && !ret; r++) ret = f->rets[r] == v;
        if (ret) continue;
        int64_t n = mlc_type_numel_bound(f->mod, &v->type); /* symbolic: at the bounds */
        int64_t size = (int64_t)mlc_dtype_size(v->type.dtype);
        if (n < 0 || (size && n > (INT64_MAX - total) / size)) return -1;
        total += n * size;
      }
    }
  return total;
}

/*
** The manifest: one JSON object that inspect shows.  Besides the options
** and the memory plan's sizes it has "plan", one entry per step of the
** plan in order, {"kernel": the function it calls, "nodes": the ONNX nodes
** it computes, [{"name", "op_type"}, ...]} (a fused kernel's member nodes;
** a plain op's node).  Names from the model are written only as JSON
** strings (mlc_sb_json_str), never as code.
*/
static void manifest_externs(const mlc_extern_options *ext, const mlc_func *f, mlc_strbuf *b);

/* ---- tuned schedules (--tune-log) ---------------------------------------- */

typedef struct tuned_ctx {
  mlc_tune_log log;
  char spec[512];
  const char *features;
  /* what the schedule pass was given: function, record */
  int n, cap;
  const mlc_tir_func **fs;
  const mlc_tune_record **rs;
} tuned_ctx;

/* The fastest record of |f|'s task, or NULL. */
static const mlc_tune_record *tuned_record(const tuned_ctx *t, const mlc_tir_func *f) {
  char key[17];
  mlc_lower_func_key(f, key);
  return mlc_drv_tune_log_best(&t->log, key, t->spec, t->features);
}

static const char *tuned_lookup(void *user, const mlc_tir_func *f) {
  tuned_ctx *t = user;
  const mlc_tune_record *r = tuned_record(t, f);
  if (!r) return NULL;
  if (t->n == t->cap) {
    int cap = t->cap ? 2 * t->cap : 64;
    const mlc_tir_func **fs = mlc_mem_realloc(t->fs, (size_t)cap * sizeof *fs);
    if (fs) t->fs = fs;
    const mlc_tune_record **rs = mlc_mem_realloc(t->rs, (size_t)cap * sizeof *rs);
    if (rs) t->rs = rs;
    if (!fs || !rs) return r->trace; /* out of memory: only the manifest misses it */
    t->cap = cap;
  }
  t->fs[t->n] = f;
  t->rs[t->n++] = r;
  return r->trace;
}

/* The default's time of |r|'s task (-1: none measured): its validated
** measurement when it has one (measured beside the tuned ones). */
static double tuned_default_ms(const tuned_ctx *t, const mlc_tune_record *r) {
  double ms = -1;
  int validated = 0;
  for (int i = 0; i < t->log.n; i++) { /* the last validated one, else the first */
    const mlc_tune_record *d = &t->log.recs[i];
    if (!d->is_default || d->ms <= 0 || strcmp(d->task, r->task) || strcmp(d->target, r->target) ||
        strcmp(d->features, r->features) || (ms > 0 && validated && !d->validated) ||
        (ms > 0 && !validated && !d->validated))
      continue;
    ms = d->ms;
    validated = d->validated;
  }
  return ms;
}

/* "tuned_kernels": each kernel scheduled by a tuning record, with the
** record's time and its task's default time (ms). */
static void manifest_tuned(const mlc_tir_module *tm, const mlc_lower_traces *tr, const tuned_ctx *t, mlc_strbuf *b) {
  mlc_sb_puts(b, ", \"tuned_kernels\": [");
  for (int i = 0, k = 0; t && tr && i < tr->n && i < tm->nfuncs; i++) {
    if (!tr->tuned || tr->tuned[i] != 1 || !tr->before[i]) continue;
    const mlc_tune_record *r = NULL;
    for (int j = 0; j < t->n && !r; j++)
      if (t->fs[j] == tr->before[i]) r = t->rs[j];
    if (!r) continue;
    double d = tuned_default_ms(t, r);
    mlc_sb_puts(b, k++ ? ", {\"kernel\": " : "{\"kernel\": ");
    mlc_sb_json_str(b, tm->funcs[i]->name);
    mlc_sb_printf(b, ", \"ms\": %.6g, \"default_ms\": ", r->ms);
    if (d > 0) mlc_sb_printf(b, "%.6g}", d);
    else mlc_sb_puts(b, "null}");
  }
  mlc_sb_putc(b, ']');
}

static mlc_status build_manifest(const char *onnx_path, const char *hash, const mlc_target *t,
                                 const mlc_tir_module *tm, const mlc_func *f, int64_t arena,
                                 int64_t inter, const char *extern_spec, const mlc_extern_options *ext,
                                 const char *devcode, const mlc_lower_traces *tr, const tuned_ctx *tuned,
                                 mlc_strbuf *b) {
  char spec[512];
  target_spec(t, spec, sizeof spec);
  mlc_sb_puts(b, "{\"compiler\": \"mlc-onnx " PACKAGE_VERSION "\", \"model\": ");
  mlc_sb_json_str(b, base_name(onnx_path));
  mlc_sb_printf(b, ", \"model_sha256\": \"%s\", \"target\": ", hash);
  mlc_sb_json_str(b, spec);
  mlc_sb_printf(b, ", \"vector_bits\": %u, \"options\": {\"target\": ", t->vector_bits);
  mlc_sb_json_str(b, spec);
  mlc_sb_puts(b, ", \"extern\": ");
  mlc_sb_json_str(b, extern_spec && *extern_spec ? extern_spec : "none");
  mlc_sb_printf(b, "}, \"arena_bytes\": %lld, \"intermediate_bytes\": %lld, "
                "\"steps\": %d, \"kernels\": [",
                (long long)arena, (long long)inter, count_kernels(f));
  for (int i = 0; i < tm->nfuncs; i++) {
    if (i) mlc_sb_puts(b, ", ");
    mlc_sb_json_str(b, tm->funcs[i]->name);
  }
  mlc_sb_puts(b, "], ");
  if (t->device == MLC_TARGET_CUDA) {
    /* the device kernels: the PTX's entries, in order */
    mlc_sb_puts(b, "\"device\": \"cuda\", \"device_arch\": ");
    mlc_sb_json_str(b, t->device_arch);
    mlc_sb_puts(b, ", \"device_kernels\": [");
    int nk = 0;
    for (const char *p = devcode; p && (p = strstr(p, ".entry ")); nk++) {
      p += 7;
      size_t n = strcspn(p, "( \n");
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
      if (nk) mlc_sb_puts(b, ", ");
      mlc_sb_json_str(b, name);
    }
    mlc_sb_puts(b, "], ");
  }
  manifest_externs(ext, f, b);
  manifest_tuned(tm, tr, tuned, b);
  mlc_sb_puts(b, ", \"plan\": [");
  int step = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int k = 0; k < f->blocks[bi].n; k++, step++) {
      const mlc_binding *bd = f->blocks[bi].bindings[k];
      int n = 0;
      const mlc_origin *nodes = mlc_binding_nodes(bd, &n);
      mlc_sb_puts(b, step ? ", {\"kernel\": " : "{\"kernel\": ");
      mlc_sb_json_str(b, bd->callee ? bd->callee : "");
      mlc_sb_puts(b, ", \"nodes\": [");
      for (int j = 0; j < n; j++) {
        mlc_sb_puts(b, j ? ", {\"name\": " : "{\"name\": ");
        mlc_sb_json_str(b, nodes[j].node ? nodes[j].node : "");
        mlc_sb_puts(b, ", \"op_type\": ");
        mlc_sb_json_str(b, nodes[j].op_type ? nodes[j].op_type : "");
        mlc_sb_putc(b, '}');
      }
      mlc_sb_puts(b, "]}");
    }
  mlc_sb_puts(b, "]}");
  return b->oom ? mlc_oom() : NULL;
}

/* Sets each prim function's kernel symbol. */
static mlc_status name_kernels(mlc_tir_module *tm) {
  char sym[256];
  for (int i = 0; i < tm->nfuncs; i++) {
    snprintf(sym, sizeof sym, MLC_DRV_KERNEL_PREFIX "%s", tm->funcs[i]->name);
    MLC_RETURN_IF_ERROR(mlc_tir_func_set_attr_str(tm, tm->funcs[i], "global_symbol", sym));
  }
  return NULL;
}

/* A kernel that some step runs in place (an output in the storage of one
** of its arguments: plan_memory) loses tir.noalias, so code generation
** gives its buffers no disjoint alias scopes. */
static mlc_status mark_in_place_kernels(mlc_module *m, const mlc_func *f) {
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++) {
      const mlc_binding *b = f->blocks[bi].bindings[j];
      if (b->kind != MLC_CALL_TIR) continue;
      int shared = 0;
      for (int o = 0; o < b->nouts && !shared; o++)
        for (int a = 0; a < b->nargs && !shared; a++)
          shared = b->outs[o]->storage >= 0 && b->args[a]->storage == b->outs[o]->storage;
      mlc_tir_func *k = shared ? mlc_tir_module_find(m->prims, b->callee) : NULL;
      if (k) MLC_RETURN_IF_ERROR(mlc_tir_func_set_attr_bool(m->prims, k, "tir.noalias", 0));
    }
  return NULL;
}

/* After each pass of the pipeline: the stage's progress line, and the
** dumps of the prim functions after legalize (10_), schedule (11_) and
** lower_tir (12_). */
static mlc_status after_pass(void *user, const char *pass, mlc_module *m) {
  cstate *c = user;
  if (!strcmp(pass, "materialize_outputs")) {
    progress(c, "[2/6] graph passes (%.0f ms)", now_ms() - c->t_stage);
    c->t_stage = now_ms();
    return NULL;
  }
  if (!m->prims) return NULL;
  if (!strcmp(pass, "legalize")) {
    MLC_RETURN_IF_ERROR(name_kernels(m->prims));
    MLC_RETURN_IF_ERROR(dump_graph(c, "10_legalize.graph.txt", m));
    return dump_tir(c, "10_legalize.tir.txt", m->prims);
  }
  if (!strcmp(pass, "schedule")) {
    MLC_RETURN_IF_ERROR(dump_tir(c, "11_schedule.tir.txt", m->prims));
    return c->traces ? dump_schedules(c, m->prims, c->traces) : NULL;
  }
  if (!strcmp(pass, "lower_tir")) return dump_tir(c, "12_lowered.tir.txt", m->prims);
  return NULL;
}

/* The manifest's extern part: "extern_calls" (each step that calls an
** external library: its function, provider, library and ONNX node),
** "extern_libs" (the libraries the model needs at run time) and
** "extern_choices" (every call the dispatcher looked at: the candidates,
** their measured times in ms, a library's including the layout
** conversions "convert_ms", the choice and why). */
static void manifest_externs(const mlc_extern_options *ext, const mlc_func *f, mlc_strbuf *b) {
  const mlc_extern_provider *used[16];
  int nused = 0, first = 1, step = 0;
  mlc_sb_puts(b, "\"extern_calls\": [");
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int k = 0; k < f->blocks[bi].n; k++, step++) {
      const mlc_binding *bd = f->blocks[bi].bindings[k];
      if (bd->kind != MLC_CALL_DPS_PACKED || !strncmp(bd->callee, "mlc.", 4)) continue;
      const mlc_extern_kernel *ek = mlc_extern_lookup(ext, bd->callee);
      mlc_sb_printf(b, "%s{\"step\": %d, \"function\": ", first ? "" : ", ", step);
      mlc_sb_json_str(b, bd->callee);
      mlc_sb_puts(b, ", \"provider\": ");
      mlc_sb_json_str(b, ek ? ek->provider->name : "?");
      mlc_sb_puts(b, ", \"node\": ");
      mlc_sb_json_str(b, bd->origin.node ? bd->origin.node : "");
      mlc_sb_puts(b, ", \"op_type\": ");
      mlc_sb_json_str(b, bd->origin.op_type ? bd->origin.op_type : "");
      mlc_sb_putc(b, '}');
      first = 0;
      int seen = 0;
      for (int i = 0; ek && i < nused; i++) seen |= used[i] == ek->provider;
      if (ek && !seen && nused < 16) used[nused++] = ek->provider;
    }
  mlc_sb_puts(b, "], \"extern_libs\": [");
  for (int i = 0; i < nused; i++) {
    mlc_sb_puts(b, i ? ", {\"provider\": " : "{\"provider\": ");
    mlc_sb_json_str(b, used[i]->name);
    mlc_sb_puts(b, ", \"library\": ");
    mlc_sb_json_str(b, used[i]->library ? used[i]->library : "");
    mlc_sb_puts(b, ", \"version\": ");
    mlc_sb_json_str(b, used[i]->version ? used[i]->version : "");
    mlc_sb_printf(b, ", \"plugin\": %s}", used[i]->builtin ? "false" : "true");
  }
  mlc_sb_puts(b, "], ");
  if (ext && ext->model_mixed_ms > 0 && ext->model_generated_ms > 0)
    mlc_sb_printf(b, "\"extern_auto\": {\"model_with_libraries_ms\": %.4f, \"model_generated_ms\": %.4f, "
                  "\"kept\": \"%s\"}, ",
                  ext->model_mixed_ms, ext->model_generated_ms, ext->nproviders ? "libraries" : "generated");
  mlc_sb_puts(b, "\"extern_choices\": [");
  for (int i = 0; ext && i < ext->nchoices; i++) {
    const mlc_extern_choice *e = &ext->choices[i];
    mlc_sb_puts(b, i ? ", {\"node\": " : "{\"node\": ");
    mlc_sb_json_str(b, e->node);
    mlc_sb_puts(b, ", \"op\": ");
    mlc_sb_json_str(b, e->op);
    mlc_sb_puts(b, ", \"shape\": ");
    mlc_sb_json_str(b, e->shape ? e->shape : "");
    mlc_sb_puts(b, ", \"chosen\": ");
    mlc_sb_json_str(b, e->chosen);
    mlc_sb_puts(b, ", \"why\": ");
    mlc_sb_json_str(b, e->why ? e->why : "");
    if (e->convert > 0) mlc_sb_printf(b, ", \"convert_ms\": %.4f", e->convert * 1e3);
    mlc_sb_puts(b, ", \"candidates\": [");
    for (int j = 0; j < e->ncand; j++) {
      mlc_sb_puts(b, j ? ", {\"kernel\": " : "{\"kernel\": ");
      mlc_sb_json_str(b, e->cand[j]);
      if (e->seconds[j] > 0) mlc_sb_printf(b, ", \"ms\": %.4f}", e->seconds[j] * 1e3);
      else mlc_sb_puts(b, ", \"ms\": null}");
    }
    mlc_sb_puts(b, "]}");
  }
  mlc_sb_putc(b, ']');
}

/*
** Parses the --extern choice |spec| (and the plugins) into |ext|:
** "none"/NULL, "auto" or a comma list of providers.  Plugins go first.
*/
/* Whether this machine can run CUDA: the driver loads and finds a device
** (then --extern auto times the libraries on it). */
static int cuda_device_present(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return 0;
  int (*init)(unsigned) = NULL, (*count)(int *) = NULL;
  void *a = dlsym(h, "cuInit"), *b = dlsym(h, "cuDeviceGetCount");
  memcpy(&init, &a, sizeof a);
  memcpy(&count, &b, sizeof b);
  int n = 0, ok = init && count && init(0) == 0 && count(&n) == 0 && n > 0;
  dlclose(h);
  return ok;
}

static mlc_status extern_setup(const mlc_compile_options *o, mlc_extern_options *ext, int device) {
  memset(ext, 0, sizeof *ext);
  if (device && o->nextern_plugins)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "--extern-lib: plugins serve the CPU target (llvm), not cuda");
  for (int i = 0; i < o->nextern_plugins; i++) {
    if (ext->nplugins >= (int)(sizeof ext->plugins / sizeof ext->plugins[0]))
      return mlc_make_status(MLC_INVALID_ARGUMENT, "--extern-lib: at most %d plugins",
                             (int)(sizeof ext->plugins / sizeof ext->plugins[0]));
    mlc_extern_plugin_lib *p = NULL;
    MLC_RETURN_IF_ERROR(mlc_extern_load_plugin(o->extern_plugins[i], &p));
    ext->plugins[ext->nplugins++] = p;
    for (int j = 0; j < ext->nplugins - 1; j++)
      if (!strcmp(ext->plugins[j]->provider.name, p->provider.name))
        return mlc_make_status(MLC_INVALID_ARGUMENT, "--extern-lib: two plugins named \"%s\" (%s, %s)",
                               p->provider.name, ext->plugins[j]->path, p->path);
    ext->providers[ext->nproviders++] = &p->provider;
  }
  const char *spec = o->extern_libs;
  if (!spec || !*spec || !strcmp(spec, "none")) return NULL;
  if (!strcmp(spec, "auto")) {
    /* CUDA: measured like the CPU's libraries where this machine has a
    ** GPU; else a rule, from what an H200 measured at batch 1: cuBLAS for
    ** matmuls (sgemm 4096^3 at 49 TFLOP/s against the generated kernel's
    ** 19), the generated convolutions over cuDNN's (mobilenet_v2 0.65 ms
    ** against 1.8 ms, resnet50 3.4 ms against 4.1 ms: one kernel per layer
    ** with its epilogue where cuDNN launches conv, bias and activation
    ** apart).  cuBLASLt is timed beside them on a GPU; in the rule it is
    ** listed after cuBLAS, so that the dispatcher gives it the matmuls
    ** whose bias add (and relu) its epilogue takes, one launch where
    ** cuBLAS leaves the epilogue a kernel of its own, and cuBLAS the
    ** others. */
    if (device && cuda_device_present()) {
      const mlc_extern_provider *gpu[] = {&mlc_extern_provider_cublas, &mlc_extern_provider_cublaslt,
                                          &mlc_extern_provider_cudnn};
      for (size_t i = 0; i < 3; i++)
        if (gpu[i]->available()) ext->providers[ext->nproviders++] = gpu[i];
      ext->auto_choice = 1;
      return NULL;
    }
    if (device) {
      const mlc_extern_provider *gpu[] = {&mlc_extern_provider_cublas, &mlc_extern_provider_cublaslt};
      for (size_t i = 0; i < 2; i++)
        if (gpu[i]->available()) ext->providers[ext->nproviders++] = gpu[i];
      return NULL;
    }
    const mlc_extern_provider *cpu[] = {&mlc_extern_provider_openblas, &mlc_extern_provider_onednn};
    for (size_t i = 0; i < 2; i++)
      if (cpu[i]->available()) ext->providers[ext->nproviders++] = cpu[i];
    ext->auto_choice = 1;
    return NULL;
  }
  for (const char *p = spec; *p;) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char name[64];
    if (n == 0 || n >= sizeof name)
      return mlc_make_status(MLC_INVALID_ARGUMENT, "--extern %s: an empty or overlong name in the list", spec);
    memcpy(name, p, n);
    name[n] = 0;
    const mlc_extern_provider *pv = mlc_extern_find_provider(name);
    if (!pv)
      return mlc_make_status(MLC_INVALID_ARGUMENT,
                             "--extern %s: unknown library \"%s\" (known: openblas, onednn, cublas, cublaslt, cudnn; or auto, "
                             "none)",
                             spec, name);
    if (pv->device != device)
      return mlc_make_status(MLC_INVALID_ARGUMENT, "--extern %s: %s serves the %s target, and this compile is for %s",
                             spec, name, pv->device ? "cuda" : "CPU (llvm)", device ? "cuda" : "the CPU");
    if (!pv->available())
      return mlc_make_status(MLC_INVALID_ARGUMENT, "--extern %s: this build has no %s (configure did not find it)",
                             spec, name);
    for (int j = 0; j < ext->nproviders; j++)
      if (ext->providers[j] == pv)
        return mlc_make_status(MLC_INVALID_ARGUMENT, "--extern %s: \"%s\" named twice", spec, name);
    if (ext->nproviders >= 8) return mlc_make_status(MLC_INVALID_ARGUMENT, "--extern %s: too many libraries", spec);
    ext->providers[ext->nproviders++] = pv;
    p += n;
    if (*p == ',') p++;
  }
  return NULL;
}

static void extern_cleanup(mlc_extern_options *ext) {
  mlc_extern_options_release(ext);
  for (int i = 0; i < ext->nplugins; i++) mlc_extern_plugin_free(ext->plugins[i]);
  ext->nplugins = 0;
}

/* A line of the tuning log that was skipped, as a progress line. */
static void tune_log_warning(void *user, const char *line) { progress(user, "      warning: %s", line); }

/*
** The imported module |gm| to |out_so| (and header |h|, NULL: none): the
** pipeline (with |ext|'s dispatch), code generation, the manifest and the
** archive.  |onnx_path| and |hash| name the model in the manifest.
*/
static mlc_status compile_module(cstate *c, mlc_module *gm, const mlc_target *target, mlc_extern_options *ext,
                                 const char *onnx_path, const char *hash, const char *out_so, const char *h,
                                 double t_all) {
  mlc_tir_module *tm = NULL; /* the module's prim functions (owned by gm) */
  mlc_func *main_fn = NULL;
  mlc_lower_traces traces = {0, NULL, NULL, NULL, NULL};
  tuned_ctx tuned;
  memset(&tuned, 0, sizeof tuned);
  char *workdir = NULL;
  char *devcode = NULL; /* CUDA: the kernels' PTX */
  size_t devcode_size = 0;
  mlc_strbuf manifest = MLC_STRBUF_INIT;
  char *pass_log = NULL;
  size_t pass_log_len = 0;
  FILE *pass_log_f = NULL;
  mlc_status s = NULL;
  double t = now_ms();
  int cuda = target->device == MLC_TARGET_CUDA;
  /* MLC_GPU_SCHEDULE_ON_CPU=1 (tests): the GPU schedule in CPU code, whose
  ** thread-bound loops run serially, so the GPU schedules' meaning is
  ** checked where there is no GPU (device 1; CUDA is 2: its lowering
  ** turns reductions across a warp's threads into shuffles) */
  const char *gs = getenv("MLC_GPU_SCHEDULE_ON_CPU");
  int gpu_sched = cuda ? 2 : gs && !strcmp(gs, "1") ? 1 : 0;
  /* the blocked layouts are for CPU vector registers */
  /* --tune-log: the tuned schedules (CPU schedules only) */
  int use_tuned = c->o->tune_log && *c->o->tune_log && !gpu_sched;
  if (use_tuned) {
    if (access(c->o->tune_log, R_OK) != 0) {
      s = mlc_make_status(MLC_IO_ERROR, "cannot read the tuning log %s: %s", c->o->tune_log, strerror(errno));
      goto done;
    }
    if ((s = mlc_drv_tune_log_read(c->o->tune_log, &tuned.log, tune_log_warning, c))) goto done;
    mlc_drv_tune_target_key(target, tuned.spec, sizeof tuned.spec, &tuned.features);
  }
  mlc_pipeline_options popt = {c->o->no_fold, c->o->no_layout || gpu_sched, c->o->no_fuse, c->o->params_as_inputs, 0, 0, 0,
                               (int)target->vector_bits, c->o->dump_ir_dir || use_tuned ? &traces : NULL,
                               ext && ext->nproviders ? mlc_pass_dispatch : NULL, ext, gpu_sched,
                               use_tuned ? tuned_lookup : NULL, &tuned};
  mlc_pass_ctx pctx = {0, c->o->dump_ir_dir, "all", NULL, &popt, after_pass, c};
  if (c->o->verbose && c->o->progress) pctx.log = pass_log_f = open_memstream(&pass_log, &pass_log_len);
  c->t_stage = t;
  c->traces = &traces;
  if ((s = mlc_pipeline_run(gm, &pctx))) goto done;
  step_done(c, "pipeline");
  if (pass_log_f && fflush(pass_log_f) == 0) forward_pass_log(c, pass_log);
  tm = gm->prims;
  main_fn = mlc_module_func(gm, "main");
  if (!tm || !main_fn) {
    s = mlc_make_status(MLC_INTERNAL, "the pipeline left no prim functions or no main function");
    goto done;
  }
  if ((s = mark_in_place_kernels(gm, main_fn))) goto done;
  if (use_tuned) {
    int ntuned = 0, nfail = 0;
    for (int i = 0; i < traces.n; i++) {
      ntuned += traces.tuned[i] == 1;
      if (traces.tuned[i] < 0) {
        nfail++;
        progress(c, "      warning: the tuned schedule of %s does not replay (%s): the default schedule instead",
                 tm->funcs[i]->name, traces.why[i] ? traces.why[i] : "?");
      }
    }
    progress(c, "      tuned schedules for %d of %d kernels from %s%s", ntuned, tm->nfuncs, c->o->tune_log,
             nfail ? " (some records did not replay)" : "");
  }
  progress(c, "[3/6] lowered to %d prim functions (%.0f ms)", tm->nfuncs, now_ms() - c->t_stage);

  t = now_ms();
  const char *tmp = getenv("TMPDIR");
  char tmpl[4096];
  snprintf(tmpl, sizeof tmpl, "%s/mlc-onnx-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(tmpl)) {
    s = mlc_make_status(MLC_IO_ERROR, "cannot create a temporary directory: %s", strerror(errno));
    goto done;
  }
  workdir = mlc_mem_strdup(tmpl);
  if (!workdir) {
    rmdir(tmpl);
    s = mlc_oom();
    goto done;
  }
  char kobj[4200];
  snprintf(kobj, sizeof kobj, "%s/kernels.o", workdir);
  if ((s = mlc_cg_build_device(tm, target, kobj, &devcode, &devcode_size))) goto done;
  step_done(c, "codegen");
  if (c->o->dump_ir_dir) {
    char *ir = NULL;
    if ((s = mlc_cg_emit_llvm_ir(tm, target, 1, &ir))) goto done;
    s = dump_text(c, "20_codegen.ll", ir);
    mlc_cg_free(ir);
    if (s) goto done;
    if (devcode && (s = dump_text(c, "21_device.ptx", devcode))) goto done;
    step_done(c, "dump");
  }
  char spec[512];
  target_spec(target, spec, sizeof spec);
  progress(c, "[4/6] generated code for %s (%.0f ms)", spec, now_ms() - t);

  t = now_ms();
  int64_t arena = mlc_drv_arena_bytes(main_fn), inter = intermediate_bytes(main_fn);
  if ((s = build_manifest(onnx_path, hash, target, tm, main_fn, arena, inter, c->o->extern_libs, ext, devcode,
                             &traces, use_tuned ? &tuned : NULL,
                             &manifest)))
    goto done;
  char name[256];
  snprintf(name, sizeof name, "%s", base_name(onnx_path));
  char *dot = strrchr(name, '.');
  if (dot && dot != name) *dot = 0;
  mlc_drv_archive_args aa = {gm,     main_fn, kobj, mlc_sb_str(&manifest), name, workdir, out_so, h, NULL, target,
                             ext, c->o->link_extern_plugins, devcode, devcode_size};
  if ((s = mlc_drv_archive(&aa))) goto done;
  step_done(c, "archive");
  progress(c, "[5/6] linked %s (%.0f ms)", out_so, now_ms() - t);
  char arena_text[128];
  const char *at = "";
  for (int k = 0; k < gm->nsyms && !*at; k++)
    if (gm->sym_defs[k].bound > 0) at = " at the shape bounds";
  if (arena >= 0 && inter >= 0)
    snprintf(arena_text, sizeof arena_text, "arena %lld bytes%s (intermediates %lld bytes)", (long long)arena, at,
             (long long)inter);
  else if (arena >= 0) snprintf(arena_text, sizeof arena_text, "arena %lld bytes%s", (long long)arena, at);
  else snprintf(arena_text, sizeof arena_text, "arena depends on input or run-time dims");
  int next = 0;
  for (int bi = 0; bi < main_fn->nblocks; bi++)
    for (int k = 0; k < main_fn->blocks[bi].n; k++) {
      const mlc_binding *bd = main_fn->blocks[bi].bindings[k];
      next += bd->kind == MLC_CALL_DPS_PACKED && strncmp(bd->callee, "mlc.", 4) != 0;
    }
  char ext_text[64] = "";
  if (next) snprintf(ext_text, sizeof ext_text, ", %d external calls", next);
  progress(c, "[6/6] done in %.0f ms: %d steps, %d kernels%s, %s", now_ms() - t_all, count_kernels(main_fn),
           tm->nfuncs, ext_text, arena_text);
done:
  if (workdir) {
    if (!getenv("MLC_KEEP_TEMP")) rm_tree(workdir);
    mlc_mem_free(workdir);
  }
  mlc_sb_fini(&manifest);
  mlc_cg_free(devcode);
  if (pass_log_f) fclose(pass_log_f);
  free(pass_log);
  mlc_lower_traces_free(&traces);
  mlc_drv_tune_log_fini(&tuned.log);
  mlc_mem_free(tuned.fs);
  mlc_mem_free(tuned.rs);
  return s;
}

/* A decimal extent in [0, INT64_MAX] of |n| characters at |p|; -1 if not. */
static int64_t parse_extent(const char *p, size_t n) {
  int64_t v = 0;
  if (n == 0 || n > 19) return -1;
  for (size_t i = 0; i < n; i++) {
    if (p[i] < '0' || p[i] > '9') return -1;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, p[i] - '0', &v)) return -1;
  }
  return v;
}

/* --input-shape "NAME=1x3xHxW" into |sh| (memory from |ar|). */
static mlc_status parse_input_shape(mlc_arena *ar, const char *spec, mlc_fe_input_shape *sh) {
  const char *eq = strrchr(spec, '=');
  if (!eq || eq == spec)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "--input-shape \"%s\": expected NAME=DIMS (e.g. x=1x3x224x224)", spec);
  const char *dims = eq + 1;
  char sep = strchr(dims, ',') ? ',' : 'x';
  int rank = *dims ? 1 : 0;
  for (const char *p = dims; *p; p++) rank += *p == sep;
  if (rank > 64) return mlc_make_status(MLC_INVALID_ARGUMENT, "--input-shape \"%s\": more than 64 dims", spec);
  char *name = mlc_arena_strndup(ar, spec, (size_t)(eq - spec));
  int64_t *d = MLC_ARENA_ARRAY(ar, (size_t)rank + 1, int64_t);
  const char **syms = MLC_ARENA_ARRAY(ar, (size_t)rank + 1, const char *);
  if (!name || !d || !syms) return mlc_oom();
  const char *p = dims;
  for (int i = 0; i < rank; i++) {
    const char *e = strchr(p, sep);
    size_t n = e ? (size_t)(e - p) : strlen(p);
    d[i] = parse_extent(p, n);
    syms[i] = NULL;
    if (d[i] < 0) {
      int ident = n > 0 && !(p[0] >= '0' && p[0] <= '9');
      for (size_t k = 0; ident && k < n; k++) ident = p[k] > ' ' && p[k] < 0x7f && p[k] != '=';
      if (!ident)
        return mlc_make_status(MLC_INVALID_ARGUMENT,
                               "--input-shape \"%s\": dim %d \"%.*s\" is neither an extent nor a symbol name", spec,
                               i, (int)n, p);
      if (!(syms[i] = mlc_arena_strndup(ar, p, n))) return mlc_oom();
    }
    p += n + (e != NULL);
  }
  sh->name = name;
  sh->rank = rank;
  sh->dims = d;
  sh->syms = syms;
  return NULL;
}

/* --shape-bound "H=2048,W=2048" applied to |m|'s symbols. */
static mlc_status apply_shape_bounds(mlc_module *m, const char *spec) {
  const char *p = spec;
  while (*p) {
    const char *e = strchr(p, ','), *end = e ? e : p + strlen(p);
    const char *eq = memchr(p, '=', (size_t)(end - p));
    int64_t v = eq ? parse_extent(eq + 1, (size_t)(end - eq - 1)) : -1;
    if (!eq || eq == p || v < 1)
      return mlc_make_status(MLC_INVALID_ARGUMENT,
                             "--shape-bound \"%s\": expected NAME=BOUND[,NAME=BOUND...] with bounds >= 1", spec);
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(eq - p), p);
    mlc_status s = mlc_module_bound_sym(m, name, v);
    if (s) {
      mlc_status w = mlc_make_status(mlc_status_code(s), "--shape-bound: %s", mlc_status_message(s));
      mlc_status_free(s);
      return w;
    }
    p = e ? e + 1 : end;
  }
  return NULL;
}

/*
** A progress note on the graph inputs that are also initializers, once
** imported into |gm|: how many stay inputs with a default (nothing folds
** through them, which can make a model whose exporter lists every weight
** as an input much slower) and how many became constants.
*/
static void default_inputs_note(cstate *c, const mlc_onnx_model *om, const mlc_module *gm) {
  const mlc_onnx_graph *g = mlc_onnx_model_get_info(om)->graph;
  const mlc_func *f = mlc_module_func(gm, "main");
  if (!f || !g->ninitializers || !c->o->progress) return;
  mlc_hash inits = MLC_HASH_INIT, params = MLC_HASH_INIT;
  int ok = 1, kept = 0, folded = 0;
  for (int i = 0; i < g->ninitializers && ok; i++) ok = !mlc_hash_put(&inits, g->initializers[i].name, (void *)1);
  for (int i = 0; i < f->nparams && ok; i++)
    if (f->params[i]->name && mlc_func_param_default(f, i)) ok = !mlc_hash_put(&params, f->params[i]->name, (void *)1);
  const char *first = NULL;
  for (int i = 0; i < g->ninputs && ok; i++) {
    const char *name = g->inputs[i].name;
    if (!mlc_hash_get(&inits, name)) continue;
    if (mlc_hash_get(&params, name)) {
      kept++;
    } else {
      folded++;
      if (!first) first = name;
    }
  }
  mlc_hash_fini(&inits);
  mlc_hash_fini(&params);
  if (!ok) return;
  if (kept == 1 && !c->o->params_as_inputs)
    progress(c, "      note: 1 graph input that is also an initializer stays an input with the initializer as its "
             "default (ONNX semantics; nothing is folded or packed through it); --fold-default-inputs embeds it "
             "as a constant, faster if no caller sets it");
  else if (kept > 1 && !c->o->params_as_inputs)
    progress(c, "      note: %d graph inputs that are also initializers stay inputs with the initializers as their "
             "defaults (ONNX semantics; nothing is folded or packed through them); --fold-default-inputs embeds "
             "them as constants, faster if no caller sets them", kept);
  if (folded && !c->o->fold_default_inputs) {
    char name[80];
    snprintf(name, sizeof name, "%s", first);
    for (char *p = name; *p; p++)
      if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) *p = '?';
    int f1 = folded == 1;
    progress(c, "      note: %d graph input%s that %s also %s (\"%s\"%s) %s embedded as %s: %s", folded,
             f1 ? "" : "s", f1 ? "is" : "are", f1 ? "an initializer" : "initializers", name, f1 ? "" : ", ...",
             f1 ? "is" : "are", f1 ? "a constant" : "constants",
             mlc_onnx_model_get_info(om)->ir_version < 4
                 ? "before IR version 4, an initializer listed as an input is not overridable"
                 : "integer, bool or output-sizing values, which nodes need when compiling");
  }
}

/* Loads and imports the model at |onnx_path|; *|out| transferred. */
static mlc_status import_model(cstate *c, const char *onnx_path, mlc_module **out) {
  mlc_onnx_model *om = NULL;
  *out = NULL;
  mlc_arena *ar = mlc_arena_create(mlc_allocator_default());
  if (!ar) return mlc_oom();
  int n = c->o->ninput_shapes > 0 ? c->o->ninput_shapes : 0;
  mlc_fe_input_shape *shapes = MLC_ARENA_ARRAY(ar, (size_t)n + 1, mlc_fe_input_shape);
  mlc_status s = shapes ? NULL : mlc_oom();
  for (int i = 0; i < n && !s; i++) s = parse_input_shape(ar, c->o->input_shapes[i], &shapes[i]);
  if (!s) s = mlc_onnx_load_file(onnx_path, &om);
  if (!s) {
    step_done(c, "load");
    mlc_fe_options fopt = {0, c->o->params_as_inputs, n, shapes, c->o->fold_default_inputs};
    s = mlc_fe_import(om, &fopt, out);
    if (!s) default_inputs_note(c, om, *out);
    mlc_onnx_model_destroy(om);
  }
  if (!s && c->o->shape_bounds && *c->o->shape_bounds) s = apply_shape_bounds(*out, c->o->shape_bounds);
  if (s && *out) {
    mlc_module_destroy(*out);
    *out = NULL;
  }
  mlc_arena_destroy(ar);
  if (!s) step_done(c, "import");
  return s;
}

mlc_status mlc_compile_file(const char *onnx_path, const char *out_so, const mlc_compile_options *opts) {
  mlc_compile_options dflt;
  mlc_compile_options_init(&dflt);
  cstate c = {opts ? opts : &dflt, now_ms(), cpu_ms(), 0, NULL};
  if (!onnx_path || !out_so) return mlc_make_status(MLC_INVALID_ARGUMENT, "no input or output path");
  mlc_module *gm = NULL;
  mlc_target *target = NULL;
  mlc_extern_options ext;
  memset(&ext, 0, sizeof ext);
  mlc_drv_measure measure;
  memset(&measure, 0, sizeof measure);
  mlc_status s = NULL;
  double t = now_ms(), t_all = t;
  char hash[65];

  char hpath[PATH_MAX + 8];
  const char *h = c.o->header_path;
  if (!h) {
    snprintf(hpath, sizeof hpath, "%s", out_so);
    char *e = strrchr(hpath, '.'), *sl = strrchr(hpath, '/');
    if (e && (!sl || e > sl)) *e = 0;
    strncat(hpath, ".h", sizeof hpath - strlen(hpath) - 1);
    h = hpath;
  } else if (!*h) {
    h = NULL;
  }
  if ((s = check_outputs(onnx_path, out_so, h))) goto done;
  if (c.o->dump_ir_dir && (s = mlc_out_mkdir(c.o->dump_ir_dir))) goto done;
  s = c.o->target && *c.o->target && strcmp(c.o->target, "llvm") != 0
          ? mlc_target_parse(c.o->target, &target)
          : mlc_target_host(&target);
  if (s) goto done;
  if ((s = extern_setup(c.o, &ext, target->device == MLC_TARGET_CUDA))) goto done;
  if ((s = hash_file(onnx_path, hash))) goto done;
  step_done(&c, "setup");
  if ((s = import_model(&c, onnx_path, &gm))) goto done;
  progress(&c, "[1/6] imported %s (%.0f ms)", base_name(onnx_path), now_ms() - t);
  if ((s = dump_graph(&c, "00_import.txt", gm))) goto done;
  if (c.o->dump_ir_dir) step_done(&c, "dump");
  if (!ext.auto_choice) {
    s = compile_module(&c, gm, target, &ext, onnx_path, hash, out_so, h, t_all);
    goto done;
  }
  /*
  ** auto: the per-op choices (each call's candidates timed alone), then the
  ** model with them against the model with generated code only, both timed
  ** whole, since a library call amid generated code costs more than it
  ** does alone (layout conversions, fusions it breaks, threads); the
  ** faster is compiled into the output.  The verdict is cached with the
  ** per-op times.
  */
  {
    char spec[512];
    target_spec(target, spec, sizeof spec);
    measure.opts = c.o;
    measure.target = target;
    measure.progress = c.o->progress;
    measure.progress_user = c.o->progress_user;
    measure.ext_plugins = ext.plugins;
    measure.ext_plugins_n = ext.nplugins;
    if ((s = mlc_drv_measure_init(&measure, spec))) goto done;
    ext.measure = mlc_drv_measure_call;
    ext.measure_user = &measure;
    ext.cache_path = measure.cache_path;
    ext.target_key = measure.key;
    char so_mixed[PATH_MAX + 32], so_gen[PATH_MAX + 32];
    snprintf(so_mixed, sizeof so_mixed, "%s/auto_mixed.so", measure.workdir);
    snprintf(so_gen, sizeof so_gen, "%s/auto_generated.so", measure.workdir);
    progress(&c, "      auto: choosing per op");
    /* the two candidates are compiled quietly, without dumps */
    mlc_compile_options qo = *c.o;
    qo.progress = NULL;
    qo.dump_ir_dir = NULL;
    qo.verbose = 0;
    cstate qc = {&qo, now_ms(), cpu_ms(), 0, NULL};
    double mixed_ms = -1, gen_ms = -1;
    int cached = mlc_drv_measure_verdict(&measure, hash, &mixed_ms, &gen_ms);
    if (cached) {
      /* only the choices, for the manifest: the graph passes, no code */
      int cuda = target->device == MLC_TARGET_CUDA;
      mlc_pipeline_options popt = {c.o->no_fold, c.o->no_layout || cuda, c.o->no_fuse, c.o->params_as_inputs, 0, 0, 0,
                                   (int)target->vector_bits, NULL, mlc_pass_dispatch, &ext, cuda};
      mlc_pass_ctx pctx = {0, NULL, NULL, NULL, &popt, NULL, NULL};
      s = mlc_graph_pipeline(gm, &pctx);
    } else {
      s = compile_module(&qc, gm, target, &ext, onnx_path, hash, so_mixed, NULL, t_all);
    }
    if (s) goto done;
    mlc_module *gm_mixed = gm; /* its arena holds the choices */
    gm = NULL;
    int nlib = 0;
    for (int i = 0; i < ext.nchoices; i++) nlib += strcmp(ext.choices[i].chosen, "generated") != 0;
    int use_gen = 0;
    if (nlib > 0 && cached) {
      use_gen = gen_ms <= mixed_ms;
    } else if (nlib > 0) {
      mlc_extern_options none;
      memset(&none, 0, sizeof none);
      if (!(s = import_model(&qc, onnx_path, &gm)))
        s = compile_module(&qc, gm, target, &none, onnx_path, hash, so_gen, NULL, t_all);
      mlc_module_destroy(gm);
      gm = NULL;
      if (!s && (s = mlc_drv_measure_models(&measure, so_mixed, so_gen, &mixed_ms, &gen_ms))) {
        mlc_module_destroy(gm_mixed);
        goto done;
      }
      if (!s) mlc_drv_measure_save_verdict(&measure, hash, mixed_ms, gen_ms);
      use_gen = gen_ms <= mixed_ms;
    }
    if (s) {
      mlc_module_destroy(gm_mixed);
      goto done;
    }
    if (nlib > 0)
      progress(&c, "      auto: %d ops to libraries, the model %.3f ms; generated code only %.3f ms: %s", nlib,
               mixed_ms, gen_ms, use_gen ? "generated code kept" : "the libraries kept");
    /* the output: the winner again, its manifest with the choices and the verdict */
    mlc_extern_options fin = ext;
    if (use_gen) {
      fin.nproviders = 0;
      fin.auto_choice = 0;
    } else {
      fin.nchoices = 0;
      fin.choices = NULL;
    }
    fin.model_mixed_ms = mixed_ms;
    fin.model_generated_ms = gen_ms;
    if (!(s = import_model(&c, onnx_path, &gm)))
      s = compile_module(&c, gm, target, &fin, onnx_path, hash, out_so, h, t_all);
    mlc_module_destroy(gm_mixed);
  }
done:
  mlc_drv_measure_fini(&measure);
  extern_cleanup(&ext);
  mlc_target_destroy(target);
  mlc_module_destroy(gm);
  return s ? mlc_status_annotate(s, "%s", base_name(onnx_path)) : NULL;
}

/* ---- the model's kernels, for the tuner -------------------------------------- */

void mlc_drv_tune_kernels_fini(mlc_tune_kernels *k) {
  for (int i = 0; i < k->n; i++) {
    if (k->name) mlc_mem_free(k->name[i]);
    if (k->text) mlc_mem_free(k->text[i]);
  }
  mlc_mem_free(k->name);
  mlc_mem_free(k->text);
  mlc_mem_free(k->key);
  memset(k, 0, sizeof *k);
}

typedef struct snap {
  mlc_lower_traces *traces;
  mlc_tune_kernels *k;
} snap;

/* After the schedule pass: each kernel before scheduling, as text (lowering
** rewrites what it shares with the scheduled copy). */
static mlc_status snapshot(void *user, const char *pass, mlc_module *m) {
  snap *sn = user;
  if (!strcmp(pass, "legalize") && m->prims) return name_kernels(m->prims); /* as compile names them */
  if (strcmp(pass, "schedule")) return NULL;
  mlc_tune_kernels *k = sn->k;
  int n = sn->traces->n;
  k->name = mlc_mem_calloc((size_t)n + 1, sizeof *k->name);
  k->text = mlc_mem_calloc((size_t)n + 1, sizeof *k->text);
  k->key = mlc_mem_calloc((size_t)n + 1, sizeof *k->key);
  if (!k->name || !k->text || !k->key) return mlc_oom();
  k->n = n;
  for (int i = 0; i < n; i++) {
    const mlc_tir_func *f = sn->traces->before[i];
    if (!f) continue;
    mlc_strbuf b = MLC_STRBUF_INIT;
    mlc_tir_print_func(f, &b);
    k->text[i] = b.oom ? NULL : mlc_mem_strdup(mlc_sb_str(&b));
    mlc_sb_fini(&b);
    k->name[i] = mlc_mem_strdup(f->name);
    if (!k->text[i] || !k->name[i]) return mlc_oom();
    mlc_lower_func_key(f, k->key[i]);
  }
  return NULL;
}

mlc_status mlc_drv_lower_model(const char *onnx_path, const mlc_compile_options *o, const mlc_target *target,
                               mlc_module **gm, mlc_tune_kernels *k) {
  cstate c = {o, now_ms(), cpu_ms(), 0, NULL};
  mlc_lower_traces traces;
  memset(&traces, 0, sizeof traces);
  memset(k, 0, sizeof *k);
  *gm = NULL;
  MLC_RETURN_IF_ERROR(import_model(&c, onnx_path, gm));
  mlc_pipeline_options popt = {o->no_fold, o->no_layout, o->no_fuse, o->params_as_inputs, 0, 0, 0,
                               (int)target->vector_bits, &traces, NULL, NULL, 0, NULL, NULL};
  snap sn = {&traces, k};
  mlc_pass_ctx pctx = {0, NULL, NULL, NULL, &popt, snapshot, &sn};
  mlc_status s = mlc_pipeline_run(*gm, &pctx);
  if (!s && !(*gm)->prims) s = mlc_make_status(MLC_INTERNAL, "the pipeline left no prim functions");
  mlc_lower_traces_free(&traces);
  if (s) {
    mlc_drv_tune_kernels_fini(k);
    mlc_module_destroy(*gm);
    *gm = NULL;
  }
  return s;
}

/* ---- compiling one call, for the dispatcher's measurements ---------------- */

mlc_status mlc_drv_compile_probe(const mlc_drv_measure *ms, mlc_module *gm, const mlc_extern_provider *only,
                                 const char *out_so) {
  mlc_compile_options o;
  mlc_compile_options_init(&o);
  o.no_fold = ms->opts->no_fold;
  o.no_fuse = ms->opts->no_fuse;
  o.no_layout = ms->opts->no_layout;
  o.link_extern_plugins = 1; /* the probe runs without the plugin path */
  cstate c = {&o, now_ms(), cpu_ms(), 0, NULL};
  mlc_extern_options ext;
  memset(&ext, 0, sizeof ext);
  if (only) ext.providers[ext.nproviders++] = only;
  for (int i = 0; only && i < ms->ext_plugins_n; i++) ext.plugins[ext.nplugins++] = ms->ext_plugins[i];
  return compile_module(&c, gm, ms->target, &ext, "probe.onnx", "", out_so, NULL, now_ms());
}
