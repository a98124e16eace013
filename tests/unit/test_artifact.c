/*
** test_artifact.c: the compiled artifact against hostile input.
**
** Suites: names (graph input, output, initializer and node names with
** comment delimiters, quotes, newlines, $(...), backslashes, trigraphs,
** non-UTF-8 bytes and 64 KiB compile into a model that runs right, whose
** names read back byte for byte, and whose model.h compiles and holds
** nothing unescaped), attack (names written as C that would run code when
** the model loads or embed a host file: compile, load, run and inspect,
** and nothing ran, nothing was embedded), files (inspect and load of
** truncated or damaged model.so files, and of a library with a
** constructor: errors, never a crash, and nothing of the file runs).
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"
#include "tests/harness.h"

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* |needle| (|n| bytes) occurs in |hay| (|size| bytes). */
static int contains(const char *hay, size_t size, const char *needle, size_t n) {
  for (size_t i = 0; n <= size && i + n <= size; i++)
    if (memcmp(hay + i, needle, n) == 0) return 1;
  return 0;
}

static int count(const char *s, const char *needle) {
  int k = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) k++;
  return k;
}

/* Inspects |so| as text and JSON; 1 when both work. */
static int inspect_ok(const char *so) {
  int ok = 1;
  for (int json = 0; json < 2; json++) {
    char *text = NULL;
    mlc_status st = mlc_inspect_file(so, json ? MLC_INSPECT_JSON : MLC_INSPECT_TEXT, &text);
    if (st) {
      fprintf(stderr, "\ninspect %s: %s\n", so, mlc_status_message(st));
      mlc_status_free(st);
      ok = 0;
    }
    mlc_string_free(text);
  }
  return ok;
}

/* ---- names -------------------------------------------------------------- */

#define LONG_NAME 65536

static void test_hostile_names(void) {
  static char long_name[LONG_NAME + 1];
  static const char pattern[] = "*/ /* \" \\ ?\?/ \n $(x) ";
  for (size_t i = 0; i < LONG_NAME; i++) long_name[i] = pattern[i % (sizeof pattern - 1)];
  long_name[LONG_NAME - 1] = 'y';
  const char *names[] = {
      "a */ int oops; /* \"quoted\" 'single'",
      "b\nline two\r\n\t$(touch pwned) `id` \\ back\\slash",
      "c ?\?/ ?\?= ?\?( trigraphs ?\?! /* open",
      "d \xff\xfe\x80 not utf-8 \xc3\x28 \x01\x1f\x7f",
  };
  int64_t dims[] = {4};
  mcase *c = mlc_th_new_case("hostile", "Sum", 13);
  for (int i = 0; i < 4; i++) c->in[i] = mlc_th_tensor(names[i], T_F32, 1, dims, -2, 2);
  c->in[2].init = 1; /* an initializer with a hostile name */
  c->nin = 4;
  c->out[0] = mlc_th_output(long_name, T_F32, 1, dims);
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 4; i++) c->out[0].v[k] += c->in[i].v[k];
  c->nout = 1;
  c->node = "node */ #include \"/etc/passwd\" /* \n ?\?/";
  mlc_th_run_case(c); /* compiles, runs, compares the output */

  char so[4096], h[4096];
  snprintf(so, sizeof so, "%s/hostile.so", mlc_th_tmpdir);
  snprintf(h, sizeof h, "%s/hostile.h", mlc_th_tmpdir);
  mlc_model *m = mlc_th_load(so, "hostile", "");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(mlc_model_num_inputs(m), 3);
  const int graph_inputs[] = {0, 1, 3};
  for (int i = 0; i < 3 && i < mlc_model_num_inputs(m); i++) {
    const char *got = mlc_model_input_name(m, i);
    CU_ASSERT(got && strcmp(got, names[graph_inputs[i]]) == 0);
  }
  const char *out = mlc_model_output_name(m, 0);
  CU_ASSERT(out && strlen(out) == LONG_NAME && strcmp(out, long_name) == 0);
  CU_ASSERT_EQUAL(mlc_model_input_index(m, names[3]), 2);
  mlc_model_free(m);
  CU_ASSERT(inspect_ok(so));

  /* model.h: escaped names, three comments, no control or non-ASCII byte. */
  size_t n = 0;
  char *text = mlc_test_read_file(h, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT(n < 8192);
  int clean = 1;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)text[i];
    if ((ch < 0x20 && ch != '\n') || ch >= 0x7f) clean = 0;
  }
  CU_ASSERT(clean);
  CU_ASSERT_EQUAL(count(text, "/*"), 3);
  CU_ASSERT_EQUAL(count(text, "*/"), 3);
  CU_ASSERT_PTR_NULL(strstr(text, "?\?"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "(65536 bytes)"));
  free(text);
  char cmd[16384], log[4200];
  snprintf(log, sizeof log, "%s/hostile_h.log", mlc_th_tmpdir);
  snprintf(cmd, sizeof cmd,
           "printf '#include \"%s\"\\nint main(void) { return MLC_MODEL_HOSTILE_NUM_INPUTS - 3; }\\n' "
           "| cc -std=c11 -trigraphs -Wall -Werror -I'%s' -x c -o '%s/hostile_h' - > '%s' 2>&1 && "
           "'%s/hostile_h'",
           h, mlc_test_src_path("include"), mlc_th_tmpdir, log, mlc_th_tmpdir);
  int rc = system(cmd);
  if (rc != 0) fprintf(stderr, "\nmodel.h does not compile (%d), see %s\n", rc, log);
  CU_ASSERT_EQUAL(rc, 0);
  free(c);
}

/* ---- attack ------------------------------------------------------------- */

/* Names that, pasted into C source, close the initializer they sit in and
** define a constructor that creates a marker file, and a top-level asm
** that embeds a host file. */
static void test_injection(void) {
  char marker[4096], secret[4096], so[4096], token[64];
  snprintf(marker, sizeof marker, "%s/pwned", mlc_th_tmpdir);
  snprintf(secret, sizeof secret, "%s/secret.txt", mlc_th_tmpdir);
  snprintf(token, sizeof token, "SECRET-%ld-%d-TOKEN", (long)getpid(), 7 * 6);
  CU_ASSERT_EQUAL_FATAL(mlc_test_write_file(secret, token, strlen(token)), 0);
  char ctor[8192], incbin[8192];
  snprintf(ctor, sizeof ctor,
           "x */ }; extern int creat(const char *, unsigned int); "
           "__attribute__((constructor)) static void pwn(void) { creat(\"%s\", 0644); } "
           "static const mlc_rt_tensor_desc pad0[] = { /*",
           marker);
  snprintf(incbin, sizeof incbin,
           "y */ }; __asm__(\".pushsection .rodata.pwn, \\\"a\\\"\\n.incbin \\\"%s\\\"\\n.popsection\"); "
           "static const mlc_rt_tensor_desc pad1[] = { /*",
           secret);
  int64_t dims[] = {2, 3};
  mcase *c = mlc_th_new_case("inject", "Add", 14);
  c->in[0] = mlc_th_tensor(ctor, T_F32, 2, dims, -1, 1);
  c->in[1] = mlc_th_tensor(incbin, T_F32, 2, dims, -1, 1);
  c->nin = 2;
  c->out[0] = mlc_th_output("z", T_F32, 2, dims);
  for (int k = 0; k < 6; k++) c->out[0].v[k] = c->in[0].v[k] + c->in[1].v[k];
  c->nout = 1;
  c->node = ctor;
  snprintf(so, sizeof so, "%s/inject.so", mlc_th_tmpdir);
  mlc_status st = mlc_th_compile_case(c, so, sizeof so);
  CU_ASSERT_PTR_NULL(st);
  mlc_status_free(st);
  CU_ASSERT(!exists(marker)); /* compiling ran nothing */
  size_t n = 0;
  char *bytes = mlc_test_read_file(so, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);
  CU_ASSERT(!contains(bytes, n, token, strlen(token))); /* nothing embedded */
  free(bytes);
  CU_ASSERT(inspect_ok(so));
  CU_ASSERT(!exists(marker)); /* inspecting ran nothing */
  mlc_th_run_case(c); /* loads, runs and compares */
  CU_ASSERT(!exists(marker));
  mlc_model *m = mlc_th_load(so, "inject", "");
  CU_ASSERT_PTR_NOT_NULL(m);
  if (m) CU_ASSERT(mlc_model_input_name(m, 0) && strcmp(mlc_model_input_name(m, 0), ctor) == 0);
  mlc_model_free(m);
  CU_ASSERT(!exists(marker));
  unlink(marker);
  free(c);
}

/* ---- files -------------------------------------------------------------- */

/* A model.so to damage: the one of a small Add model. */
static char *small_model(size_t *n, char *so, size_t size) {
  int64_t dims[] = {3};
  mcase *c = mlc_th_new_case("small", "Add", 14);
  c->in[0] = mlc_th_tensor("a", T_F32, 1, dims, -1, 1);
  c->in[1] = mlc_th_tensor("b", T_F32, 1, dims, -1, 1);
  c->in[1].init = 1;
  c->nin = 2;
  c->out[0] = mlc_th_output("s", T_F32, 1, dims);
  c->nout = 1;
  mlc_status st = mlc_th_compile_case(c, so, size);
  free(c);
  if (st) {
    fprintf(stderr, "\nsmall: %s\n", mlc_status_message(st));
    mlc_status_free(st);
    return NULL;
  }
  return mlc_test_read_file(so, n);
}

/* Inspect and load of |data| (|n| bytes) written as a file fail cleanly,
** each naming the file. 1 when they do. */
static int damaged_fails(const char *data, size_t n, const char *what) {
  char path[4096], err[1024];
  snprintf(path, sizeof path, "%s/damaged.so", mlc_th_tmpdir);
  if (mlc_test_write_file(path, data, n) != 0) return 0;
  int ok = 1;
  char *text = NULL;
  mlc_status st = mlc_inspect_file(path, MLC_INSPECT_TEXT, &text);
  if (!st || !strstr(mlc_status_message(st), "damaged.so")) {
    fprintf(stderr, "\n%s: inspect %s\n", what, st ? mlc_status_message(st) : "succeeded");
    ok = 0;
  }
  mlc_status_free(st);
  mlc_string_free(text);
  mlc_model *m = NULL;
  mlc_rt_status rs = mlc_model_load(path, &m, err, sizeof err);
  if (rs == MLC_RT_OK || !strstr(err, "damaged.so")) {
    fprintf(stderr, "\n%s: load %s\n", what, rs == MLC_RT_OK ? "succeeded" : err);
    ok = 0;
  }
  mlc_model_free(m);
  return ok;
}

static void test_truncated(void) {
  char so[4096];
  size_t n = 0;
  char *data = small_model(&n, so, sizeof so);
  CU_ASSERT_PTR_NOT_NULL_FATAL(data);
  /* Every length up to the headers, then a spread to the end. */
  int bad = 0, tried = 0;
  for (size_t len = 0; len < n; len += len < 256 ? 1 : len < 4096 ? 61 : n / 97 + 1) {
    char what[64];
    snprintf(what, sizeof what, "truncated to %zu of %zu bytes", len, n);
    bad += !damaged_fails(data, len, what);
    tried++;
  }
  for (size_t cut = 1; cut <= 64; cut++) bad += !damaged_fails(data, n - cut, "cut at the end");
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(tried > 300);
  free(data);
}

static void test_ctor_not_run(void) {
  char dir[4096], marker[4200], cmd[16384];
  snprintf(dir, sizeof dir, "%s", mlc_th_tmpdir);
  snprintf(marker, sizeof marker, "%s/ctor_ran", dir);
  snprintf(cmd, sizeof cmd,
           "printf '#include <fcntl.h>\\n#include <unistd.h>\\n"
           "__attribute__((constructor)) static void run(void) { close(creat(\"%s\", 0644)); }\\n"
           "int mlc_model_entry_v1;\\n' | cc -shared -fPIC -x c -o '%s/ctor.so' - && "
           "test -f '%s/ctor.so'",
           marker, dir, dir);
  CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
  char so[4200];
  snprintf(so, sizeof so, "%s/ctor.so", dir);
  char *text = NULL;
  mlc_status st = mlc_inspect_file(so, MLC_INSPECT_JSON, &text);
  CU_ASSERT_PTR_NOT_NULL(st);
  if (st) CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(st), "not a model compiled by mlc-onnx"));
  mlc_status_free(st);
  mlc_string_free(text);
  CU_ASSERT(!exists(marker));
  mlc_model *m = NULL;
  char err[1024];
  CU_ASSERT_EQUAL(mlc_model_load(so, &m, err, sizeof err), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT(!exists(marker));
  unlink(marker);
}

/* ---- registration ------------------------------------------------------- */

static void register_names(void) {
  static const CU_TestInfo tests[] = {{"hostile_names", test_hostile_names}, {NULL, NULL}};
  mlc_test_add_suite("names", tests);
}

static void register_attack(void) {
  static const CU_TestInfo tests[] = {{"injection", test_injection}, {NULL, NULL}};
  mlc_test_add_suite("attack", tests);
}

static void register_files(void) {
  static const CU_TestInfo tests[] = {
      {"truncated", test_truncated}, {"ctor_not_run", test_ctor_not_run}, {NULL, NULL}};
  mlc_test_add_suite("files", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_names, register_attack, register_files, NULL};
  return mlc_th_main("test_artifact", fns);
}
