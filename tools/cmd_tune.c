/*
** cmd_tune.c: `mlc-onnx tune MODEL.onnx -o LOG [options]`.
**
** Ctrl-C (SIGINT) sets the library's stop flag: the search ends after the
** measurement under way, and the log holds everything measured.  A
** second Ctrl-C ends the program at once (the log is still whole: each
** record is one line written at once).
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

const char tune_help[] =
    "usage: " PROG " tune MODEL.onnx -o LOG [--trials N] [--budget TIME] [--threads T]\n"
    "                     [--target TARGET] [--seed S] [--jobs J] [--min-ms MS]\n"
    "                     [--repeats R] [--timeout SEC] [-q]\n"
    "\n"
    "Tunes the model's kernels for this machine and writes what it measured to\n"
    "LOG, which '" PROG " compile MODEL.onnx --tune-log LOG' applies.\n"
    "\n"
    "The tasks are the model's distinct kernels (by structure and shapes; those\n"
    "of run-time shapes are not tuned), weighted by how often the model runs\n"
    "each.  A task's candidates are the default schedule rules with their\n"
    "parameters sampled (register tile rows and columns, loop order, vector\n"
    "lanes, partial reductions, parallel chunks, where a padded copy is made):\n"
    "first its default schedule, then rounds of mutations of the best found and\n"
    "fresh samples, ranked by a cost model (gradient-boosted trees on features\n"
    "of each candidate's loops, trained on the measurements; a seeded random\n"
    "order in a build without XGBoost).  Each candidate is compiled alone, in\n"
    "parallel, and timed in a child process on random inputs (the median of\n"
    "several measurements); one that crashes, hangs or computes other results\n"
    "than the default schedule is recorded as failed.  Progress goes to\n"
    "standard error.  Ctrl-C or the budget ends the search: every measurement\n"
    "is already in LOG.  Run again with the same LOG to resume.\n"
    "\n"
    "LOG is a text file of JSON lines, one per measured candidate (its task's\n"
    "structural hash, target and CPU features, its schedule trace with its\n"
    "decisions, its times); new records are appended.  A line that does not\n"
    "parse is reported and skipped.\n"
    "\n"
    "Options:\n"
    "  -o, --output LOG   the tuning log (required; created if missing)\n"
    "  --trials N         candidates to measure in all, LOG's records of the\n"
    "                     model's kernels included (default: 32 per task;\n"
    "                     with --budget alone, as many as the budget allows)\n"
    "  --budget TIME      stop after TIME: seconds, or with a unit: 90s, 10m,\n"
    "                     1h (default: none)\n"
    "  --threads T        threads each kernel runs on when measured (default 1)\n"
    "  --target TARGET    as for compile (CPU targets only; default the host)\n"
    "  --seed S           seeds every random choice (default 1): the same seed\n"
    "                     and LOG propose the same candidates\n"
    "  --jobs J           candidates compiled at once (default: the CPUs)\n"
    "  --min-ms MS        least time of one measurement (default 5)\n"
    "  --repeats R        measurements per candidate, the median kept\n"
    "                     (default 5, at most 16)\n"
    "  --timeout SEC      a candidate running longer fails (default 10)\n"
    "  -q, --quiet        no progress lines\n"
    "  -h, --help         show this help and exit\n";

static volatile int stop_flag;

static void on_sigint(int sig) {
  (void)sig;
  if (stop_flag) _Exit(130);
  stop_flag = 1;
}

static void progress(void *user, const char *line) {
  (void)user;
  fprintf(stderr, "%s\n", line);
  fflush(stderr);
}

/* The value of option |name| (as "--name=V" or the next argument). */
static int value(int argc, char **argv, int *i, const char *name, const char **out) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (!strncmp(a, name, n) && a[n] == '=') {
    *out = a + n + 1;
  } else {
    if (*i + 1 >= argc) return cli_usage_error("tune", "tune: %s needs a value", name);
    *out = argv[++*i];
  }
  if (!**out) return cli_usage_error("tune", "tune: %s needs a value", name);
  return 0;
}

static int is_opt(const char *a, const char *name) {
  size_t n = strlen(name);
  return !strncmp(a, name, n) && (a[n] == 0 || a[n] == '=');
}

/* A number in [lo, hi] from |v|; nonzero if not. */
static int number(const char *v, double lo, double hi, double *out) {
  char *e;
  double d = strtod(v, &e);
  if (e == v || *e || !(d >= lo && d <= hi)) return 1;
  *out = d;
  return 0;
}

/* "90", "90s", "10m", "1.5h" in seconds; < 0 if not. */
static double duration(const char *v) {
  char *e;
  double d = strtod(v, &e);
  if (e == v || !(d > 0)) return -1;
  if (!*e || !strcmp(e, "s")) return d;
  if (!strcmp(e, "m")) return d * 60;
  if (!strcmp(e, "h")) return d * 3600;
  return -1;
}

int cmd_tune(int argc, char **argv) {
  const char *model = NULL, *out = NULL, *v = NULL;
  mlc_tune_options o;
  mlc_tune_options_init(&o);
  o.progress = progress;
  int dashdash = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int rc = 0;
    double d = 0;
    if (!dashdash && a[0] == '-' && a[1]) {
      if (!strcmp(a, "--")) dashdash = 1;
      else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
        fputs(tune_help, stdout);
        return EXIT_OK;
      } else if (!strcmp(a, "-o") || is_opt(a, "--output")) {
        if (out) return cli_usage_error("tune", "tune: -o given twice");
        rc = value(argc, argv, &i, !strcmp(a, "-o") ? "-o" : "--output", &out);
      } else if (is_opt(a, "--target")) {
        rc = value(argc, argv, &i, "--target", &o.target);
      } else if (is_opt(a, "--trials")) {
        if (!(rc = value(argc, argv, &i, "--trials", &v)) && number(v, 1, 1e7, &d))
          return cli_usage_error("tune", "tune: --trials %s: expected a count >= 1", v);
        o.trials = (int)d;
      } else if (is_opt(a, "--budget")) {
        if (!(rc = value(argc, argv, &i, "--budget", &v)) && (o.budget_s = duration(v)) < 0)
          return cli_usage_error("tune", "tune: --budget %s: expected a time such as 600, 90s, 10m or 1h", v);
      } else if (is_opt(a, "--threads")) {
        if (!(rc = value(argc, argv, &i, "--threads", &v)) && number(v, 1, 256, &d))
          return cli_usage_error("tune", "tune: --threads %s: expected 1 to 256", v);
        o.threads = (int)d;
      } else if (is_opt(a, "--jobs")) {
        if (!(rc = value(argc, argv, &i, "--jobs", &v)) && number(v, 1, 64, &d))
          return cli_usage_error("tune", "tune: --jobs %s: expected 1 to 64", v);
        o.jobs = (int)d;
      } else if (is_opt(a, "--seed")) {
        if (!(rc = value(argc, argv, &i, "--seed", &v)) && number(v, 0, 9007199254740992.0, &d))
          return cli_usage_error("tune", "tune: --seed %s: expected a number >= 0", v);
        o.seed = (uint64_t)d;
      } else if (is_opt(a, "--min-ms")) {
        if (!(rc = value(argc, argv, &i, "--min-ms", &v)) && number(v, 0.01, 10000, &d))
          return cli_usage_error("tune", "tune: --min-ms %s: expected 0.01 to 10000", v);
        o.min_ms = d;
      } else if (is_opt(a, "--repeats")) {
        if (!(rc = value(argc, argv, &i, "--repeats", &v)) && number(v, 1, 16, &d))
          return cli_usage_error("tune", "tune: --repeats %s: expected 1 to 16", v);
        o.repeats = (int)d;
      } else if (is_opt(a, "--timeout")) {
        if (!(rc = value(argc, argv, &i, "--timeout", &v)) && number(v, 0.1, 86400, &d))
          return cli_usage_error("tune", "tune: --timeout %s: expected 0.1 to 86400 seconds", v);
        o.timeout_s = d;
      } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
        o.progress = NULL;
      } else {
        return cli_usage_error("tune", "tune: unknown option '%s'", a);
      }
      if (rc) return rc;
    } else {
      if (model) return cli_usage_error("tune", "tune: one MODEL only (extra argument '%s')", a);
      model = a;
    }
  }
  if (!model) return cli_usage_error("tune", "tune: no MODEL given");
  if (!out) return cli_usage_error("tune", "tune: no log given (-o LOG)");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  o.stop = &stop_flag;
  mlc_status s = mlc_tune_file(model, out, &o);
  return s ? cli_report(s) : EXIT_OK;
}
