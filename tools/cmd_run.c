/*
** cmd_run.c: `mlc-onnx run MODEL.so [--input FILE | --input NAME=FILE ...]
** [--output-dir D] [--bench N] [--warmup W] [--threads T] [--seed S] [--json]`.
**
** Loads a compiled model through mlc/mlc_runtime.h, binds the inputs (files
** in graph-input order or by name; the rest their defaults or seeded
** random data), runs it
** (or times N runs), prints the outputs and writes them as .npy files.
** Built with MLC_RUNNER it is the deploy-side runner mlc-run
** (tools/mlc-run.c): the same command, reading .npy files only.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlc/mlc_runtime.h"
#include "tools/cli.h"

#ifdef MLC_RUNNER
/* mlc-run: .npy files only (libmlcnpy; no protobuf), one command. */
#include "driver/tensor_npy.h"
#define read_input mlc_drv_npy_read_file
#define RUN_ ""
#define INDENT "               "
#else
#define read_input mlc_tensor_read_file
#define RUN_ "run: "
#define INDENT "                    "
#endif

const char run_help[] =
    "usage: " RUN_CMD " MODEL.so [--input FILE | --input NAME=FILE ...] [--output-dir DIR]\n"
    INDENT "[--bench N] [--warmup W] [--threads T] [--seed S] [--json] [--profile]\n"
    "\n"
#ifdef MLC_RUNNER
    "Runs a compiled model without the compiler: this program needs the C\n"
    "library alone (no LLVM, no protobuf); a model needs what it was built with\n"
    "(an external library such as OpenBLAS; for CUDA, the NVIDIA driver and\n"
    "cuBLAS/cuDNN), found by the dynamic loader.  It runs as `mlc-onnx run`\n"
    "does: the same random inputs, outputs and JSON.  Inputs are NumPy .npy\n"
    "files, given in graph-input order (--input FILE) or by name (--input\n"
#else
    "Runs a compiled model.  Inputs are NumPy .npy files or ONNX TensorProto .pb\n"
    "files, given in graph-input order (--input FILE) or by name (--input\n"
#endif
    "NAME=FILE); inputs not given take their default value when the model has\n"
    "one (an ONNX input that is also an initializer), else seeded random data\n"
    "(symbolic dimensions taken as 1).  Prints each output's name, dtype, shape and first\n"
    "values.\n"
    "\n"
    "Options:\n"
    "  --input FILE, --input NAME=FILE   an input (repeatable)\n"
    "  --output-dir DIR   write the outputs as DIR/output_0.npy, DIR/output_1.npy, ...\n"    "                     (DIR is created if missing; DIR or a file in it that is\n"
    "                     a symbolic link is refused; files are replaced atomically)\n"
    "  --bench N          time N runs (after the warm-up) and report the latency\n"
    "  --warmup W         untimed runs before timing (default 3 with --bench)\n"
    "  --threads T        threads of the session (default 0: one per CPU)\n"
    "  --seed S           seed of the random inputs (default 0)\n"
    "  --json             print one JSON object: outputs (name, dtype, shape) and,\n"
    "                     with --bench, \"latency_ms\": {\"median\", \"min\", \"p90\"}\n"
    "  --profile          time each step of the timed runs (the one run without\n"
    "                     --bench) and print its mean milliseconds, function and\n"
    "                     ONNX node (with --json: \"profile\": [{\"step\", \"function\",\n"
    "                     \"node\", \"ms\"}, ...])\n"
    "  -h, --help         show this help and exit\n"
#ifdef MLC_RUNNER
    "\n"
    "Exit status: 0 success, 1 an error about the model or an input (named in\n"
    "the message), 2 bad usage.\n"
#endif
    ;

#define MAX_INPUTS 256

static const char *dtype_name(DLDataType t) {
  static char buf[32];
  const char *base = t.code == kDLFloat ? "float" : t.code == kDLInt ? "int" : t.code == kDLUInt ? "uint"
                     : t.code == kDLBfloat ? "bfloat" : t.code == 6 ? "bool" : "unknown";
  if (t.code == 6) return "bool";
  snprintf(buf, sizeof buf, "%s%d", base, t.bits);
  return buf;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double elem(const DLTensor *t, size_t i) {
  const char *p = (const char *)t->data + t->byte_offset;
  switch (t->dtype.code) {
    case kDLFloat:
      return t->dtype.bits == 64 ? ((const double *)p)[i] : t->dtype.bits == 32 ? ((const float *)p)[i] : 0;
    case kDLInt:
      switch (t->dtype.bits) {
        case 8: return ((const int8_t *)p)[i];
        case 16: return ((const int16_t *)p)[i];
        case 32: return ((const int32_t *)p)[i];
        default: return (double)((const int64_t *)p)[i];
      }
    default:
      switch (t->dtype.bits) {
        case 8: return ((const uint8_t *)p)[i];
        case 16: return ((const uint16_t *)p)[i];
        case 32: return ((const uint32_t *)p)[i];
        default: return (double)((const uint64_t *)p)[i];
      }
  }
}

static void print_json_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
    else putchar(*s);
  }
  putchar('"');
}

int cmd_run(int argc, char **argv) {
  const char *model_path = NULL, *outdir = NULL;
  const char *inputs[MAX_INPUTS];
  int ninputs = 0, json = 0, threads = 0, profile = 0;
  long bench = 0, warmup = -1;
  unsigned long long seed = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    if (a[0] == '-' && a[1]) {
      const char *eq = strchr(a, '=');
      size_t n = eq && a[1] == '-' ? (size_t)(eq - a) : strlen(a);
      char name[64];
      snprintf(name, sizeof name, "%.*s", (int)n, a);
      if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
        fputs(run_help, stdout);
        return EXIT_OK;
      }
      if (!strcmp(name, "--json")) {
        json = 1;
        continue;
      }
      if (!strcmp(name, "--profile")) {
        profile = 1;
        continue;
      }
      if (strcmp(name, "--input") && strcmp(name, "--output-dir") && strcmp(name, "--bench") &&
          strcmp(name, "--warmup") && strcmp(name, "--threads") && strcmp(name, "--seed"))
        return cli_usage_error("run", RUN_ "unknown option '%s'", a);
      if (eq && a[1] == '-') v = eq + 1;
      else if (i + 1 < argc) v = argv[++i];
      if (!v || !*v) return cli_usage_error("run", RUN_ "%s needs a value", name);
      char *end;
      if (!strcmp(name, "--input")) {
        if (ninputs == MAX_INPUTS) return cli_usage_error("run", RUN_ "too many --input");
        inputs[ninputs++] = v;
      } else if (!strcmp(name, "--output-dir")) {
        outdir = v;
      } else {
        long long x = strtoll(v, &end, 10);
        if (*end || x < 0 || x > 1000000000)
          return cli_usage_error("run", RUN_ "%s needs a non-negative integer, not '%s'", name, v);
        if (!strcmp(name, "--bench")) bench = (long)x;
        else if (!strcmp(name, "--warmup")) warmup = (long)x;
        else if (!strcmp(name, "--threads")) threads = (int)x;
        else seed = (unsigned long long)x;
      }
    } else {
      if (model_path) return cli_usage_error("run", RUN_ "one MODEL only (extra argument '%s')", a);
      model_path = a;
    }
  }
  if (!model_path) return cli_usage_error("run", RUN_ "no MODEL given");
  if (warmup < 0) warmup = bench ? 3 : 0;

  char err[1024];
  mlc_model *m = NULL;
  if (mlc_model_load(model_path, &m, err, sizeof err) != MLC_RT_OK) return cli_error("%s", err);
  int nin = mlc_model_num_inputs(m), nout = mlc_model_num_outputs(m), rc = EXIT_ERROR;
  DLTensor **tensors = calloc((size_t)nin + 1, sizeof *tensors);
  double *lat = calloc((size_t)bench + 1, sizeof *lat);
  mlc_session *s = NULL;
  if (!tensors || !lat) {
    cli_error("out of memory");
    goto done;
  }
  /* Inputs from files: positional ones in order, NAME=FILE by name. */
  int next = 0;
  for (int k = 0; k < ninputs; k++) {
    const char *spec = inputs[k], *eq = strchr(spec, '=');
    int idx = -1;
    const char *file = spec;
    if (eq) {
      char name[512];
      snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
      idx = mlc_model_input_index(m, name);
      if (idx >= 0) file = eq + 1;
    }
    if (idx < 0) {
      while (next < nin && tensors[next]) next++;
      idx = next;
    }
    if (idx >= nin) {
      cli_error("%d --input given, but the model has %d input%s", ninputs, nin, nin == 1 ? "" : "s");
      goto done;
    }
    if (tensors[idx]) {
      cli_error("input \"%s\" given twice", mlc_model_input_name(m, idx));
      goto done;
    }
    mlc_status st = read_input(file, &tensors[idx]);
    if (st) {
      cli_report(st);
      goto done;
    }
  }
  for (int i = 0; i < nin; i++) {
    if (tensors[i]) continue;
    if (mlc_model_input_has_default(m, i)) { /* left NULL: the session uses the default */
      if (!json) fprintf(stderr, "input %d \"%s\": its default\n", i, mlc_model_input_name(m, i));
      continue;
    }
    int64_t shape[64];
    int nd = mlc_model_input_ndim(m, i);
    for (int d = 0; d < nd && d < 64; d++) {
      int64_t v = mlc_model_input_dim(m, i, d);
      shape[d] = v < 0 ? 1 : v;
    }
    mlc_status st = mlc_tensor_random(mlc_model_input_dtype(m, i), nd, shape, seed + (uint64_t)i, &tensors[i]);
    if (st) {
      cli_report(st);
      goto done;
    }
    if (!json) fprintf(stderr, "input %d \"%s\": random data (seed %llu)\n", i, mlc_model_input_name(m, i), seed + (unsigned long long)i);
  }
  mlc_session_options so = {threads};
  if (mlc_session_create(m, &so, &s) != MLC_RT_OK) {
    cli_error("%s", mlc_model_last_error());
    goto done;
  }
  for (int i = 0; i < nin; i++)
    if (mlc_session_set_input(s, i, tensors[i]) != MLC_RT_OK) {
      cli_error("%s", mlc_session_last_error(s));
      goto done;
    }
  for (long k = 0; k < warmup + (bench ? bench : 1); k++) {
    if (profile && k == warmup && mlc_session_set_profiling(s, 1) != MLC_RT_OK) {
      cli_error("%s", mlc_session_last_error(s));
      goto done;
    }
    double t0 = now_ms();
    if (mlc_session_run(s) != MLC_RT_OK) {
      cli_error("%s", mlc_session_last_error(s));
      goto done;
    }
    if (k >= warmup && bench) lat[k - warmup] = now_ms() - t0;
  }
  if (outdir) {
    mlc_status st = mlc_dir_create(outdir);
    if (st) {
      cli_report(st);
      goto done;
    }
  }
  if (json) printf("{\"model\": "), print_json_str(mlc_model_name(m)), printf(", \"outputs\": [");
  for (int o = 0; o < nout; o++) {
    const DLTensor *t = NULL;
    if (mlc_session_get_output(s, o, &t) != MLC_RT_OK) {
      cli_error("%s", mlc_session_last_error(s));
      goto done;
    }
    if (outdir) {
      char p[4096];
      snprintf(p, sizeof p, "%s/output_%d.npy", outdir, o);
      mlc_status st = mlc_tensor_write_npy(p, t);
      if (st) {
        cli_report(st);
        goto done;
      }
    }
    size_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
    if (json) {
      printf("%s{\"name\": ", o ? ", " : "");
      print_json_str(mlc_model_output_name(m, o));
      printf(", \"dtype\": \"%s\", \"shape\": [", dtype_name(t->dtype));
      for (int d = 0; d < t->ndim; d++) printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
      printf("]}");
    } else {
      printf("output %d \"%s\": %s (", o, mlc_model_output_name(m, o), dtype_name(t->dtype));
      for (int d = 0; d < t->ndim; d++) printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
      printf(t->ndim == 1 ? ",)" : ")");
      int fp = t->dtype.code == kDLFloat && (t->dtype.bits == 32 || t->dtype.bits == 64);
      int ip = t->dtype.code == kDLInt || t->dtype.code == kDLUInt || t->dtype.code == 6;
      if (fp || ip) {
        printf(" [");
        for (size_t i = 0; i < n && i < 6; i++) printf(fp ? "%s%.6g" : "%s%.0f", i ? ", " : "", elem(t, i));
        printf(n > 6 ? ", ...]" : "]");
      }
      printf("\n");
    }
  }
  if (profile) {
    int32_t ns = mlc_session_profile(s, -1, NULL, NULL, NULL);
    if (json) printf("], \"profile\": [");
    else printf("profile (mean ms per run, %d steps):\n", ns);
    for (int32_t i = 0; i < ns; i++) {
      const char *fn = "", *node = "";
      double ms = 0;
      mlc_session_profile(s, i, &fn, &node, &ms);
      if (json) {
        printf("%s{\"step\": %d, \"function\": ", i ? ", " : "", i);
        print_json_str(fn);
        printf(", \"node\": ");
        print_json_str(node);
        printf(", \"ms\": %.5f}", ms);
      } else {
        printf("  %4d %10.4f  %s", i, ms, fn);
        if (*node) printf(" (node "), print_json_str(node), printf(")");
        printf("\n");
      }
    }
  }
  if (bench) {
    qsort(lat, (size_t)bench, sizeof *lat, cmp_double);
    double med = bench % 2 ? lat[bench / 2] : (lat[bench / 2 - 1] + lat[bench / 2]) / 2;
    double p90 = lat[(size_t)((bench - 1) * 0.9 + 0.5)];
    if (json)
      printf("], \"latency_ms\": {\"median\": %.4f, \"min\": %.4f, \"p90\": %.4f}, \"runs\": %ld, \"threads\": %d}\n",
             med, lat[0], p90, bench, threads);
    else
      printf("latency over %ld runs (%s%.0d): median %.3f ms, min %.3f ms, p90 %.3f ms\n", bench,
             threads ? "threads " : "one thread per CPU", threads, med, lat[0], p90);
  } else if (json) {
    printf("]}\n");
  }
  rc = EXIT_OK;
done:
  for (int i = 0; tensors && i < nin; i++) mlc_tensor_free(tensors[i]);
  free(tensors);
  free(lat);
  mlc_session_free(s);
  mlc_model_free(m);
  return rc;
}
