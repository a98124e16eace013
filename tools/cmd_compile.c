/*
** cmd_compile.c: `mlc-onnx compile MODEL.onnx -o MODEL.so [options]`.
*/
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

const char compile_help[] =
    "usage: " PROG " compile MODEL.onnx -o OUTPUT.so [--target TARGET] [--dump-ir DIR]\n"
    "                        [--header FILE | --no-header] [--params-as-inputs]\n"
    "                        [--fold-default-inputs] [-q | -v]\n"
    "                        [--no-fold] [--no-fuse] [--no-layout]\n"
    "                        [--extern LIBS|auto|none] [--extern-lib PLUGIN.so ...]\n"
    "                        [--link-extern-lib] [--extern-cache FILE]\n"
    "                        [--input-shape NAME=DIMS ...] [--shape-bound SYM=N[,SYM=N...]]\n"
    "                        [--tune-log LOG]\n"
    "\n"
    "Compiles the ONNX model into one shared library: generated kernels, the\n"
    "weights (embedded, read-only), the execution plan and the runtime.  Any\n"
    "program loads it with mlc_model_load() from mlc/mlc_runtime.h.  A C header\n"
    "describing the model is written next to it (OUTPUT with .h).  The same model\n"
    "and options give a byte-identical library.  A C compiler (cc, or $MLC_CC)\n"
    "links the library.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE  the library to write (required)\n"
    "  --target TARGET    'llvm' (default: the host CPU and its features, e.g.\n"
    "                     AVX-512) or 'llvm -mcpu=NAME [-mattr=+f1,-f2]', or\n"
    "                     'cuda [-arch=sm_XX]' for NVIDIA GPUs: the kernels as PTX\n"
    "                     for sm_75 (default; the driver compiles it for any\n"
    "                     newer GPU) or the architecture named (sm_75, sm_80,\n"
    "                     sm_86, sm_87, sm_89, sm_90); the model then needs the\n"
    "                     NVIDIA driver where it runs, nothing more\n"
    "  --dump-ir DIR      write the IR after each stage into DIR (graph IR after\n"
    "                     import and each pass, TensorIR after legalization and\n"
    "                     scheduling, LLVM IR) and, in DIR/11_schedule/, each\n"
    "                     kernel's TIR before scheduling (KERNEL.tir) beside the\n"
    "                     schedule trace applied to it (KERNEL.trace; see\n"
    "                     '" PROG " schedule');\n"
    "                     DIR is created if missing\n"
    "  --input-shape NAME=DIMS\n"
    "                     compile for this shape of input NAME (repeatable):\n"
    "                     dims separated by 'x' (or ',' when a name holds an x),\n"
    "                     each an extent or a name that keeps the dim symbolic\n"
    "                     (x=1x3x640x640; x=1x3xHxW); a dim the model names is\n"
    "                     set on every input that has it; a static dim of the\n"
    "                     model must keep its extent\n"
    "  --shape-bound SYM=N[,SYM=N...]\n"
    "                     the largest values of symbolic dims: the arena is\n"
    "                     planned once for them (its size is reported) and a\n"
    "                     larger input is refused when the model runs\n"
    "  --tune-log LOG     apply a tuning log ('" PROG " tune'): each kernel with\n"
    "                     records for this target and CPU gets the schedule of\n"
    "                     its fastest one; the others, and those whose record\n"
    "                     no longer replays (a warning says so), keep the\n"
    "                     default schedule.  'inspect' on the library lists\n"
    "                     the tuned kernels\n"
    "  --header FILE      write the C header to FILE\n"
    "  --no-header        do not write a C header\n"
    "  --params-as-inputs the model's floating-point weights (initializers) are\n"
    "                     inputs of the library, after the graph inputs and named\n"
    "                     by the initializer, instead of constants embedded in\n"
    "                     it: one library serves several weight sets (nothing is\n"
    "                     folded into them; integer initializers such as shapes\n"
    "                     stay constants); weights in Constant nodes count as\n"
    "                     initializers.  Each such input has its initializer as\n"
    "                     its default: a caller sets only the weights it changes\n"
    "  --fold-default-inputs\n"
    "                     embed graph inputs that are also initializers as\n"
    "                     constants (the library has no such input).  By default\n"
    "                     (ONNX semantics) such an input stays an input whose\n"
    "                     default is its initializer: a run uses it unless the\n"
    "                     caller sets the input, and nothing is folded or packed\n"
    "                     through it (slower when an exporter lists every weight\n"
    "                     as an input, e.g. PyTorch's keep_initializers_as_inputs;\n"
    "                     compile then prints a note).  Integer ones (shapes,\n"
    "                     axes), float ones that size an output and those of\n"
    "                     models before IR version 4 are constants either way\n"
    "  -q, --quiet        no progress lines on standard error\n"
    "  -v, --verbose      also a line per step within the stages, with its\n"
    "                     wall-clock and CPU time in milliseconds\n"
    "  --no-fold          skip the folding passes: BatchNormalization into the\n"
    "                     convolution before it, simplify, cse\n"
    "  --no-fuse          one kernel per op: no fused kernels\n"
    "  --no-layout        convolutions stay in the model's NCHW layout (no\n"
    "                     blocked NCHW[x]c kernels)\n"
    "                     (these three measure what each pass group brings)\n"
    "  --extern LIBS      send the ops an external library implements to it:\n"
    "                     a comma-separated list in order of preference\n"
    "                     (openblas: matmul, convolutions as GEMM; onednn:\n"
    "                     convolutions with their bias, residual add and\n"
    "                     relu/clip, pooling, softmax, matmul; for cuda,\n"
    "                     cublas: matmul; cublaslt: matmul with its bias add\n"
    "                     along N and relu; cudnn: what onednn takes; a later\n"
    "                     library that fuses more of an op's epilogue wins\n"
    "                     over an earlier one), 'auto' (every\n"
    "                     library this build has: for each op, the generated\n"
    "                     kernel and each library are timed on the op's shapes\n"
    "                     and the fastest is kept; times are cached, so a\n"
    "                     second compile is quick; for cuda, cublas, cublaslt\n"
    "                     and cudnn are timed on this machine's GPU; without\n"
    "                     one, a rule: cublaslt takes the matmuls with a bias\n"
    "                     (and relu), cublas the other matmuls, the\n"
    "                     convolutions stay generated)\n"
    "                     or 'none' (the default:\n"
    "                     generated code only; the library then needs only\n"
    "                     libc, libm and pthreads).  'inspect' on the library\n"
    "                     shows which op went where and why\n"
    "  --extern-lib FILE  a plugin library (mlc/mlc_extern.h) whose functions\n"
    "                     take the ops they register, before any other library\n"
    "                     (repeatable).  The model records the plugin's file\n"
    "                     name and loads it at run time: already loaded in the\n"
    "                     process, else from the directories in\n"
    "                     $MLC_EXTERN_LIB_PATH, else next to the model\n"
    "  --link-extern-lib  link the plugins into the library instead (found\n"
    "                     again where they were given)\n"
    "  --extern-cache FILE  the timing cache of --extern auto (default\n"
    "                     $MLC_EXTERN_CACHE, else ~/.cache/mlc-onnx/\n"
    "                     extern-times.txt; '' for none).  auto then also\n"
    "                     times the whole model with its library calls\n"
    "                     against generated code only and keeps the faster;\n"
    "                     it measures on one thread per CPU, or on\n"
    "                     $MLC_EXTERN_THREADS threads\n"
    "  -h, --help         show this help and exit\n"
    "\n"
    "Each output replaces its file atomically (a temporary file renamed over it;\n"
    "mode 0755 for the library, 0644 otherwise, less the umask).  Refused before\n"
    "any work: an output path that is a symbolic link or exists and is not a\n"
    "regular file (e.g. /dev/null), an output or header that is MODEL itself\n"
    "(however spelled), a header that is the library, and a --dump-ir DIR that\n"
    "is a symbolic link.  DIR is created if missing.\n";

static void progress(void *user, const char *line) {
  (void)user;
  fprintf(stderr, "%s\n", line);
  fflush(stderr);
}

/* Takes the value of option |a| (either "--opt=value" or the next
** argument); an empty value only when |empty_ok|. */
static int opt_value_any(int argc, char **argv, int *i, const char *name, const char **out, int empty_ok) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) == 0 && a[n] == '=') {
    *out = a + n + 1;
  } else {
    if (*i + 1 >= argc) return cli_usage_error("compile", "compile: %s needs a value", name);
    *out = argv[++*i];
  }
  if (!**out && !empty_ok) return cli_usage_error("compile", "compile: %s needs a value", name);
  return 0;
}

static int opt_value(int argc, char **argv, int *i, const char *name, const char **out) {
  return opt_value_any(argc, argv, i, name, out, 0);
}

static int is_opt(const char *a, const char *name) {
  size_t n = strlen(name);
  return strncmp(a, name, n) == 0 && (a[n] == 0 || a[n] == '=');
}

int cmd_compile(int argc, char **argv) {
  const char *model = NULL, *out = NULL;
  mlc_compile_options o;
  mlc_compile_options_init(&o);
  o.progress = progress;
  int no_header = 0, dashdash = 0, quiet = 0;
  const char *plugins[8], *shapes[64];
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int rc = 0;
    if (!dashdash && a[0] == '-' && a[1]) {
      if (!strcmp(a, "--")) dashdash = 1;
      else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
        fputs(compile_help, stdout);
        return EXIT_OK;
      } else if (!strcmp(a, "-o") || is_opt(a, "--output")) {
        if (out) return cli_usage_error("compile", "compile: -o given twice");
        rc = opt_value(argc, argv, &i, !strcmp(a, "-o") ? "-o" : "--output", &out);
      } else if (is_opt(a, "--target")) rc = opt_value(argc, argv, &i, "--target", &o.target);
      else if (is_opt(a, "--dump-ir")) rc = opt_value(argc, argv, &i, "--dump-ir", &o.dump_ir_dir);
      else if (is_opt(a, "--header")) rc = opt_value(argc, argv, &i, "--header", &o.header_path);
      else if (is_opt(a, "--tune-log")) rc = opt_value(argc, argv, &i, "--tune-log", &o.tune_log);
      else if (!strcmp(a, "--no-header")) no_header = 1;
      else if (!strcmp(a, "--params-as-inputs")) o.params_as_inputs = 1;
      else if (!strcmp(a, "--fold-default-inputs")) o.fold_default_inputs = 1;
      else if (!strcmp(a, "--no-fold")) o.no_fold = 1;
      else if (!strcmp(a, "--no-fuse")) o.no_fuse = 1;
      else if (!strcmp(a, "--no-layout")) o.no_layout = 1;
      else if (is_opt(a, "--extern-lib")) {
        if (o.nextern_plugins >= 8) return cli_usage_error("compile", "compile: at most 8 --extern-lib");
        rc = opt_value(argc, argv, &i, "--extern-lib", &plugins[o.nextern_plugins]);
        if (!rc) o.nextern_plugins++;
        o.extern_plugins = plugins;
      } else if (is_opt(a, "--extern-cache")) {
        rc = opt_value_any(argc, argv, &i, "--extern-cache", &o.extern_cache, 1);
      } else if (is_opt(a, "--extern")) rc = opt_value(argc, argv, &i, "--extern", &o.extern_libs);
      else if (!strcmp(a, "--link-extern-lib")) o.link_extern_plugins = 1;
      else if (is_opt(a, "--input-shape")) {
        if (o.ninput_shapes >= 64) return cli_usage_error("compile", "compile: at most 64 --input-shape");
        rc = opt_value(argc, argv, &i, "--input-shape", &shapes[o.ninput_shapes]);
        if (!rc) o.ninput_shapes++;
        o.input_shapes = shapes;
      } else if (is_opt(a, "--shape-bound")) {
        if (o.shape_bounds) return cli_usage_error("compile", "compile: --shape-bound given twice (list the bounds in one)");
        rc = opt_value(argc, argv, &i, "--shape-bound", &o.shape_bounds);
      }
      else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) quiet = 1;
      else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) o.verbose = 1;
      else return cli_usage_error("compile", "compile: unknown option '%s'", a);
      if (rc) return rc;
    } else {
      if (model) return cli_usage_error("compile", "compile: one MODEL only (extra argument '%s')", a);
      model = a;
    }
  }
  if (!model) return cli_usage_error("compile", "compile: no MODEL given");
  if (!out) return cli_usage_error("compile", "compile: no output given (-o OUTPUT.so)");
  if (no_header && o.header_path) return cli_usage_error("compile", "compile: --header and --no-header exclude one another");
  if (quiet && o.verbose) return cli_usage_error("compile", "compile: -q and -v exclude one another");
  if (o.extern_libs && strcmp(o.extern_libs, "auto") && strcmp(o.extern_libs, "none")) {
    /* a list of known names, each once (whether this build has them is
    ** the compiler's to say) */
    const char *known[] = {"openblas", "onednn", "cublas", "cublaslt", "cudnn"};
    int seen[5] = {0, 0, 0, 0, 0};
    for (const char *p = o.extern_libs;;) {
      size_t n = strcspn(p, ",");
      int k = -1;
      for (int i = 0; i < 5; i++)
        if (n == strlen(known[i]) && !strncmp(p, known[i], n)) k = i;
      if (k < 0 || seen[k]++)
        return cli_usage_error("compile", "compile: --extern %s: %s \"%.*s\" (libraries: openblas, onednn, cublas, cublaslt, cudnn; or auto, none)",
                               o.extern_libs, k < 0 ? "unknown library" : "twice", (int)n, p);
      if (!p[n]) break;
      p += n + 1;
    }
  }
  if (o.link_extern_plugins && !o.nextern_plugins)
    return cli_usage_error("compile", "compile: --link-extern-lib without --extern-lib");
  if (quiet) o.progress = NULL;
  if (no_header) o.header_path = "";
  mlc_status s = mlc_compile_file(model, out, &o);
  return s ? cli_report(s) : EXIT_OK;
}
