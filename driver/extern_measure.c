/*
** extern_measure.c: timing one call's candidates for `compile --extern
** auto` (driver_int.h, mlc_drv_measure).
**
** A probe is a module with one graph function that holds just the call:
** the bindings the match covers, re-emitted with their attributes; the
** call's constants copied (weights matter: a library may repack them),
** every other argument a parameter.  It is compiled like a model (with
** only the candidate's provider allowed, or none for generated code) into
** the scratch directory and run by `mlc-onnx run PROBE.so --bench N
** --json` in a child process on the threads the model will use (inputs:
** seeded random data) with its steps profiled: the candidate's time is
** the mean of its steps, less the layout conversions a probe of generated
** code has at its edges (returned apart: extern.h).  A probe that fails to
** compile or run is reported and not chosen.
*/
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/outfile.h"
#include "driver/driver_int.h"
#include "extern/extern.h"

/* Runs of each probe, after its warm-up. */
#define PROBE_RUNS 15
#define PROBE_WARMUP 3

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The mlc-onnx to run probes with: $MLC_CLI, else this program when it is
** mlc-onnx, else mlc-onnx from PATH. */
static char *find_cli(void) {
  const char *env = getenv("MLC_CLI");
  if (env && *env) return mlc_mem_strdup(env);
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = 0;
    const char *base = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;
    if (!strcmp(base, "mlc-onnx") || !strcmp(base, "lt-mlc-onnx")) return mlc_mem_strdup(self);
  }
  return mlc_mem_strdup("mlc-onnx");
}

/* The cache file: opts->extern_cache, $MLC_EXTERN_CACHE, the XDG cache
** directory or ~/.cache; NULL for none ("" given).  Its directory is
** created when missing. */
static char *cache_file(const mlc_compile_options *o) {
  const char *p = o->extern_cache;
  if (!p) p = getenv("MLC_EXTERN_CACHE");
  if (p) return *p ? mlc_mem_strdup(p) : NULL;
  char dir[PATH_MAX];
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg == '/') snprintf(dir, sizeof dir, "%s/mlc-onnx", xdg);
  else if (home && *home == '/') snprintf(dir, sizeof dir, "%s/.cache/mlc-onnx", home);
  else return NULL;
  char parent[PATH_MAX];
  snprintf(parent, sizeof parent, "%s", dir);
  char *sl = strrchr(parent, '/');
  if (sl && sl != parent) {
    *sl = 0;
    if (!is_dir(parent)) mkdir(parent, 0755);
  }
  if (!is_dir(dir) && mkdir(dir, 0755) != 0) return NULL;
  char file[PATH_MAX + 32];
  snprintf(file, sizeof file, "%s/extern-times.txt", dir);
  return mlc_mem_strdup(file);
}

mlc_status mlc_drv_measure_init(mlc_drv_measure *ms, const char *target_spec) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  const char *t = getenv("MLC_EXTERN_THREADS");
  ms->threads = t && atoi(t) > 0 ? atoi(t) : ncpu > 0 ? (int)ncpu : 1;
  char key[600];
  snprintf(key, sizeof key, "%s t%d", target_spec, ms->threads);
  ms->key = mlc_mem_strdup(key);
  ms->cli = find_cli();
  ms->cache_path = cache_file(ms->opts);
  const char *tmp = getenv("TMPDIR");
  char tmpl[PATH_MAX];
  snprintf(tmpl, sizeof tmpl, "%s/mlc-probe-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!ms->key || !ms->cli) return mlc_oom();
  if (!mkdtemp(tmpl)) return mlc_make_status(MLC_IO_ERROR, "cannot create a temporary directory: %s", strerror(errno));
  ms->workdir = mlc_mem_strdup(tmpl);
  if (!ms->workdir) {
    rmdir(tmpl);
    return mlc_oom();
  }
  return NULL;
}

void mlc_drv_measure_fini(mlc_drv_measure *ms) {
  DIR *d = ms->workdir && !getenv("MLC_KEEP_TEMP") ? opendir(ms->workdir) : NULL;
  for (struct dirent *e; d && (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[PATH_MAX + 300];
    snprintf(p, sizeof p, "%s/%s", ms->workdir, e->d_name);
    unlink(p);
  }
  if (d) {
    closedir(d);
    rmdir(ms->workdir);
  }
  mlc_mem_free(ms->workdir);
  mlc_mem_free(ms->cli);
  mlc_mem_free(ms->key);
  mlc_mem_free(ms->cache_path);
  memset(ms, 0, sizeof *ms);
}

/* ---- the probe module --------------------------------------------------- */

/* |v| of |m| in probe |pm|: the same constant, a value already emitted, or
** a new parameter. */
static mlc_status probe_value(const mlc_module *m, mlc_module *pm, mlc_func *pf, mlc_value **map, mlc_value *v,
                              mlc_value **out) {
  if (map[v->id]) {
    *out = map[v->id];
    return NULL;
  }
  mlc_type t;
  int64_t dims[64];
  if (v->type.rank > 64) return mlc_make_status(MLC_UNIMPLEMENTED, "rank %d", v->type.rank);
  for (int d = 0; d < v->type.rank; d++) {
    if (v->type.dims[d] < 0) return mlc_make_status(MLC_UNIMPLEMENTED, "a shape with run-time dims");
    dims[d] = v->type.dims[d];
  }
  MLC_RETURN_IF_ERROR(mlc_module_type(pm, v->type.dtype, dims, v->type.rank, &t));
  if (v->kind == MLC_VALUE_CONST) {
    const mlc_const *c = mlc_value_const(m, v);
    if (!c) return mlc_make_status(MLC_INTERNAL, "constant without data");
    MLC_RETURN_IF_ERROR(mlc_module_add_const(pm, c->name, &t, c->data, c->nbytes, out));
  } else {
    char name[32];
    snprintf(name, sizeof name, "in%d", pf->nparams);
    MLC_RETURN_IF_ERROR(mlc_func_add_param(pf, name, &t, out));
  }
  map[v->id] = *out;
  return NULL;
}

static mlc_status build_probe(const mlc_module *m, const mlc_extern_match *mt, mlc_module **out) {
  mlc_module *pm = NULL;
  MLC_RETURN_IF_ERROR(mlc_module_create(m->alloc, &pm));
  pm->fold = 0;
  mlc_value **map = mlc_mem_calloc((size_t)m->next_value_id + 1, sizeof *map);
  mlc_func *pf = NULL;
  mlc_status s = map ? mlc_func_create(pm, "main", &pf) : mlc_oom();
  mlc_value *last = NULL;
  for (int i = 0; !s && i < mt->nbindings; i++) {
    const mlc_binding *b = mt->bindings[i];
    if (b->kind != MLC_CALL_OP || b->nouts != 1) {
      s = mlc_make_status(MLC_UNIMPLEMENTED, "not a single-output op call");
      break;
    }
    mlc_value *args[16];
    if (b->nargs > 16) s = mlc_make_status(MLC_UNIMPLEMENTED, "%d arguments", b->nargs);
    for (int a = 0; !s && a < b->nargs; a++) s = probe_value(m, pm, pf, map, b->args[a], &args[a]);
    if (s) break;
    s = mlc_graph_emit1(pf, b->op, args, b->nargs, b->attrs, b->nattrs, &b->origin, &last);
    if (!s) map[b->outs[0]->id] = last;
  }
  if (!s && last) s = mlc_func_add_ret(pf, last);
  mlc_mem_free(map);
  if (s) {
    mlc_module_destroy(pm);
    return s;
  }
  *out = pm;
  return NULL;
}

/* The start of the file at |path| (at most |size| - 1 bytes) into |buf|,
** NUL-terminated: 1, or 0 when it cannot be read. */
static int read_log(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, size - 1, f);
  fclose(f);
  buf[n] = 0;
  return 1;
}

/* From the JSON `mlc-onnx run --json --bench --profile` printed (in
** |log|): the seconds per run of the steps, *|convert| those of the
** layout conversions among them (steps whose function is a
** layout_transform, or a fused kernel that starts with one); < 0 if the
** profile is not there.  Parsed, not trusted: the probe is ours, but a
** line that does not fit is a failed measurement. */
static double read_profile(const char *log_path, double *convert) {
  static char buf[1 << 16];
  if (!read_log(log_path, buf, sizeof buf)) return -1;
  const char *p = strstr(buf, "\"profile\": [");
  if (!p) return -1;
  double total = 0, conv = 0;
  int steps = 0;
  for (const char *q = strstr(p, "\"function\": \""); q; q = strstr(q + 1, "\"function\": \"")) {
    const char *name = q + 13, *ms = strstr(q, "\"ms\": ");
    if (!ms) return -1;
    char *end;
    double v = strtod(ms + 6, &end);
    if (end == ms + 6 || v < 0) return -1;
    total += v;
    if (!strncmp(name, "layout_transform", 16) || !strncmp(name, "fused_layout_transform", 22)) conv += v;
    steps++;
  }
  if (!steps) return -1;
  *convert = conv * 1e-3;
  return (total - conv) * 1e-3;
}

double mlc_drv_measure_call(void *user, const mlc_module *m, const mlc_extern_kernel *k, const mlc_extern_match *mt,
                            double *convert, char *why, size_t whylen) {
  mlc_drv_measure *ms = user;
  mlc_module *pm = NULL;
  mlc_status s = build_probe(m, mt, &pm);
  int id = ms->nprobes++;
  char so[PATH_MAX + 64], log[PATH_MAX + 64];
  snprintf(so, sizeof so, "%s/probe%d.so", ms->workdir, id);
  snprintf(log, sizeof log, "%s/probe%d.log", ms->workdir, id);
  if (!s) s = mlc_drv_compile_probe(ms, pm, k ? k->provider : NULL, so);
  mlc_module_destroy(pm);
  double secs = -1;
  if (!s) {
    char runs[16], warm[16], threads[16];
    snprintf(runs, sizeof runs, "%d", PROBE_RUNS);
    snprintf(warm, sizeof warm, "%d", PROBE_WARMUP);
    snprintf(threads, sizeof threads, "%d", ms->threads);
    const char *argv[] = {ms->cli, "run",    so,     "--bench", runs,      "--warmup",
                          warm,    "--threads", threads, "--json",  "--profile", NULL};
    double cv = 0;
    s = mlc_drv_spawn(argv, NULL, log);
    if (!s && (secs = read_profile(log, &cv)) < 0) s = mlc_make_status(MLC_INTERNAL, "no profile in the output of run");
    if (!s && convert) *convert = cv;
  }
  if (s) {
    snprintf(why, whylen, "%s", mlc_status_message(s));
    mlc_status_free(s);
    return -1;
  }
  if (ms->progress) {
    char line[256];
    snprintf(line, sizeof line, "      timed %-18s %8.3f ms", k ? k->name : "generated", secs * 1e3);
    if (!k && convert && *convert > 0)
      snprintf(line + strlen(line), sizeof line - strlen(line), " (+ %.3f ms of layout conversions)", *convert * 1e3);
    ms->progress(ms->progress_user, line);
  }
  return secs;
}

/* ---- the whole-model check ------------------------------------------------ */

/* Rounds of timing the two models, and runs per round. */
#define MODEL_ROUNDS 3
#define MODEL_RUNS 10

/* The cache lines of the verdict: "model HASH KEY with-libraries" and
** "... generated", each a time in ms (the timing cache's format). */
static void verdict_key(const mlc_drv_measure *ms, const char *hash, const char *which, char *buf, size_t n) {
  snprintf(buf, n, "model %s %s %s", hash, ms->key, which);
}

int mlc_drv_measure_verdict(const mlc_drv_measure *ms, const char *hash, double *mixed_ms, double *gen_ms) {
  FILE *f = ms->cache_path ? fopen(ms->cache_path, "r") : NULL;
  if (!f) return 0;
  char km[1024], kg[1024], line[2048];
  verdict_key(ms, hash, "with-libraries", km, sizeof km);
  verdict_key(ms, hash, "generated", kg, sizeof kg);
  double m = -1, g = -1;
  while (fgets(line, sizeof line, f)) {
    char *tab = strrchr(line, '\t');
    if (!tab) continue;
    *tab = 0;
    double v = strtod(tab + 1, NULL);
    if (v <= 0) continue;
    if (!strcmp(line, km)) m = v;
    else if (!strcmp(line, kg)) g = v;
  }
  fclose(f);
  if (m <= 0 || g <= 0) return 0;
  *mixed_ms = m;
  *gen_ms = g;
  return 1;
}

void mlc_drv_measure_save_verdict(const mlc_drv_measure *ms, const char *hash, double mixed_ms, double gen_ms) {
  FILE *f = ms->cache_path ? fopen(ms->cache_path, "a") : NULL;
  if (!f) return;
  char k[1024];
  verdict_key(ms, hash, "with-libraries", k, sizeof k);
  fprintf(f, "%s\t%.9g\n", k, mixed_ms);
  verdict_key(ms, hash, "generated", k, sizeof k);
  fprintf(f, "%s\t%.9g\n", k, gen_ms);
  fclose(f);
}

/* The median latency (ms) `run --json --bench` printed into |log|; < 0 if none. */
static double read_median(const char *log) {
  static char buf[1 << 14];
  if (!read_log(log, buf, sizeof buf)) return -1;
  const char *p = strstr(buf, "\"median\": ");
  if (!p) return -1;
  char *end;
  double v = strtod(p + 10, &end);
  return end == p + 10 || v <= 0 ? -1 : v;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

mlc_status mlc_drv_measure_models(mlc_drv_measure *ms, const char *so_a, const char *so_b, double *a_ms,
                                  double *b_ms) {
  double t[2][MODEL_ROUNDS];
  char runs[16], threads[16], log[PATH_MAX + 32];
  snprintf(runs, sizeof runs, "%d", MODEL_RUNS);
  snprintf(threads, sizeof threads, "%d", ms->threads);
  snprintf(log, sizeof log, "%s/model.log", ms->workdir);
  if (ms->progress) ms->progress(ms->progress_user, "      auto: timing the model with the libraries and without");
  for (int r = 0; r < MODEL_ROUNDS; r++)
    for (int w = 0; w < 2; w++) {
      const char *argv[] = {ms->cli, "run", w ? so_b : so_a, "--bench", runs, "--warmup", "2",
                            "--threads", threads, "--json", NULL};
      mlc_status s = mlc_drv_spawn(argv, NULL, log);
      if (s) return mlc_status_annotate(s, "timing the compiled model");
      if ((t[w][r] = read_median(log)) < 0) return mlc_make_status(MLC_INTERNAL, "no latency in the output of run");
    }
  for (int w = 0; w < 2; w++) qsort(t[w], MODEL_ROUNDS, sizeof t[w][0], cmp_double);
  *a_ms = t[0][MODEL_ROUNDS / 2];
  *b_ms = t[1][MODEL_ROUNDS / 2];
  return NULL;
}
