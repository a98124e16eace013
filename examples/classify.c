/*
** classify.c: run a compiled classifier and print its top classes.
**
**   mlc-onnx compile model.onnx -o model.so
**   classify model.so input.npy [k]
**
** Loads model.so through mlc/mlc_runtime.h (nothing else from mlc-onnx),
** feeds it one float32 .npy tensor as input 0, runs it and prints the k
** highest scores of output 0 with their class indices.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlc/mlc_runtime.h"

/* Reads a little-endian float32, C-order .npy file (format 1.0). */
static float *read_npy_f32(const char *path, int64_t *shape, int *ndim) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char pre[10];
  float *data = NULL;
  if (fread(pre, 1, 10, f) == 10 && memcmp(pre, "\x93NUMPY\x01", 7) == 0) {
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    char *h = calloc(hlen + 1, 1);
    if (h && fread(h, 1, hlen, f) == hlen && strstr(h, "'<f4'") && strstr(h, "'fortran_order': False")) {
      const char *p = strchr(strstr(h, "'shape'"), '(');
      size_t n = 1;
      *ndim = 0;
      while (p && *ndim < 8) {
        char *end;
        long long v = strtoll(p + 1, &end, 10);
        if (end == p + 1) break;
        shape[(*ndim)++] = v;
        n *= (size_t)v;
        p = strchr(end, ',');
      }
      data = malloc(n * sizeof *data);
      if (data && fread(data, sizeof *data, n, f) != n) {
        free(data);
        data = NULL;
      }
    }
    free(h);
  }
  fclose(f);
  return data;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s model.so input.npy [k]\n", argv[0]);
    return 2;
  }
  int k = argc > 3 ? atoi(argv[3]) : 5;
  char err[512];
  mlc_model *model = NULL;
  if (mlc_model_load(argv[1], &model, err, sizeof err) != MLC_RT_OK) {
    fprintf(stderr, "classify: %s\n", err);
    return 1;
  }
  int64_t shape[8];
  int ndim = 0;
  float *data = read_npy_f32(argv[2], shape, &ndim);
  if (!data) {
    fprintf(stderr, "classify: %s: not a float32 .npy file\n", argv[2]);
    mlc_model_free(model);
    return 1;
  }
  DLTensor input = {data, {kDLCPU, 0}, ndim, {kDLFloat, 32, 1}, shape, NULL, 0};
  mlc_session *sess = NULL;
  const DLTensor *out = NULL;
  int rc = 1;
  if (mlc_session_create(model, NULL, &sess) != MLC_RT_OK)
    fprintf(stderr, "classify: %s\n", mlc_model_last_error());
  else if (mlc_session_set_input(sess, 0, &input) != MLC_RT_OK || mlc_session_run(sess) != MLC_RT_OK ||
           mlc_session_get_output(sess, 0, &out) != MLC_RT_OK)
    fprintf(stderr, "classify: %s\n", mlc_session_last_error(sess));
  else if (out->dtype.code != kDLFloat || out->dtype.bits != 32)
    fprintf(stderr, "classify: output 0 is not float32\n");
  else {
    int64_t n = out->ndim ? out->shape[out->ndim - 1] : 1;
    const float *score = out->data;
    printf("model %s, output \"%s\" (%lld classes)\n", mlc_model_name(model),
           mlc_model_output_name(model, 0), (long long)n);
    char *taken = calloc((size_t)n, 1);
    for (int r = 0; r < k && r < n && taken; r++) {
      int64_t best = -1;
      for (int64_t i = 0; i < n; i++)
        if (!taken[i] && (best < 0 || score[i] > score[best])) best = i;
      taken[best] = 1;
      printf("%d. class %lld  score %.6f\n", r + 1, (long long)best, score[best]);
    }
    free(taken);
    rc = 0;
  }
  mlc_session_free(sess);
  free(data);
  mlc_model_free(model);
  return rc;
}
