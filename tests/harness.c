/*
** harness.c: the model harnesses of the compile-path test programs (see
** harness.h): the temporary directory, compiling and loading model files
** (public API only, so that programs linking libmlc can use it).
*/
#include "tests/harness.h"

#include <pthread.h>
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
  mlc_test_rmtree(mlc_th_tmpdir);
  free(mlc_th_tmpdir);
  mlc_th_tmpdir = NULL;
  return 0;
}

int mlc_th_main(const char *program, const mlc_test_register_fn *fns) {
  mlc_th_tmpdir = mlc_test_tmpdir();
  int rc = mlc_test_main(program, fns);
  mlc_test_rmtree(mlc_th_tmpdir);
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

typedef struct th_worker {
  mlc_model *m;
  const DLTensor *in;
  int iters;
  float out[64];
  int n, ok;
} th_worker;

static void *th_work(void *p) {
  th_worker *w = p;
  mlc_session *s = NULL;
  mlc_session_options o = {2};
  if (mlc_session_create(w->m, &o, &s) != MLC_RT_OK) return NULL;
  w->ok = 1;
  for (int it = 0; it < w->iters && w->ok; it++) {
    const DLTensor *got = NULL;
    if (mlc_session_set_input(s, 0, w->in) || mlc_session_run(s) || mlc_session_get_output(s, 0, &got)) {
      w->ok = 0;
      break;
    }
    size_t n = 1;
    for (int d = 0; d < got->ndim; d++) n *= (size_t)got->shape[d];
    w->n = n > 64 ? 64 : (int)n;
    if (it == 0) memcpy(w->out, got->data, sizeof(float) * (size_t)w->n);
    else if (memcmp(w->out, got->data, sizeof(float) * (size_t)w->n) != 0) w->ok = 0;
  }
  mlc_session_free(s);
  return NULL;
}

void mlc_th_check_concurrent(mlc_model *m, const DLTensor *in, int iters) {
  th_worker w[8];
  pthread_t th[8];
  for (int i = 0; i < 8; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].m = m;
    w[i].in = in;
    w[i].iters = iters;
    CU_ASSERT_EQUAL(pthread_create(&th[i], NULL, th_work, &w[i]), 0);
  }
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 8; i++) {
    CU_ASSERT(w[i].ok);
    CU_ASSERT_EQUAL(w[i].n, w[0].n);
    CU_ASSERT_EQUAL(memcmp(w[i].out, w[0].out, sizeof(float) * (size_t)w[0].n), 0);
  }
}
