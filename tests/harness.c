/*
** harness.c: the model harnesses of the compile-path test programs (see
** harness.h): the temporary directory, compiling and loading model files
** (public API only, so that programs linking libmlc can use it).
*/
#include "tests/harness.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *mlc_th_tmpdir;

int mlc_th_tmp_init(void) {
  mlc_th_tmpdir = mlc_test_tmpdir();
  return mlc_th_tmpdir ? 0 : -1;
}

int mlc_th_tmp_clean(void) {
  if (mlc_th_tmpdir) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", mlc_th_tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", mlc_th_tmpdir);
  }
  free(mlc_th_tmpdir);
  mlc_th_tmpdir = NULL;
  return 0;
}

int mlc_th_main(const char *program, const mlc_test_register_fn *fns) {
  mlc_th_tmpdir = mlc_test_tmpdir();
  int rc = mlc_test_main(program, fns);
  if (!getenv("MLC_KEEP_TEMP")) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", mlc_th_tmpdir);
    if (system(cmd) != 0) rc = rc ? rc : 0;
  }
  free(mlc_th_tmpdir);
  mlc_th_tmpdir = NULL;
  return rc;
}

int mlc_th_compile(const char *onnx, const char *name, const char *prefix, char *so, size_t size) {
  snprintf(so, size, "%s/%s.so", mlc_th_tmpdir, name);
  mlc_status s = mlc_compile_file(onnx, so, NULL);
  if (s) fprintf(stderr, "%scompile %s: %s\n", prefix, name, mlc_status_message(s));
  CU_ASSERT_PTR_NULL(s);
  mlc_status_free(s);
  return s == NULL;
}

mlc_model *mlc_th_load(const char *so, const char *name, const char *prefix) {
  char err[512];
  mlc_model *m = NULL;
  if (mlc_model_load(so, &m, err, sizeof err) != MLC_RT_OK) {
    fprintf(stderr, "%sload %s: %s\n", prefix, name, err);
    m = NULL;
  }
  return m;
}
