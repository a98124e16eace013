/*
** install_app.c: a program built against an installed mlc-onnx the way a
** server's build is, with mlc/mlc_runtime.h and the flags of
** `pkg-config --cflags --libs mlc-runtime` alone (tests/cli/test_install.sh
** builds it as C and as C++, linked to libmlcload.so and to libmlcload.a).
**
**   install_app MODEL.so INPUT.npy EXPECTED.npy
**
** Runs the model on a float32 .npy file as input 0 and compares output 0
** with another (rtol 1e-3, atol 1e-4).  Prints one line; exit status 0
** when they agree, 1 otherwise, 2 on bad usage.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlc/mlc_runtime.h>

/* A little-endian float32, C-order .npy file (format 1.0): its data (free
   it) and shape, at most 8 dims; NULL when it is not one. */
static float *read_npy(const char *path, int64_t *shape, int *ndim, size_t *count) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char pre[10];
  float *data = NULL;
  if (fread(pre, 1, 10, f) == 10 && memcmp(pre, "\x93NUMPY\x01", 7) == 0) {
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    char *h = (char *)calloc(hlen + 1, 1);
    const char *p = NULL;
    if (h && fread(h, 1, hlen, f) == hlen && strstr(h, "'<f4'") && strstr(h, "'fortran_order': False") &&
        (p = strstr(h, "'shape'")) != NULL && (p = strchr(p, '(')) != NULL) {
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
      data = (float *)malloc(n ? n * sizeof *data : 1);
      if (data && fread(data, sizeof *data, n, f) != n) {
        free(data);
        data = NULL;
      }
      *count = n;
    }
    free(h);
  }
  fclose(f);
  return data;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: install_app MODEL.so INPUT.npy EXPECTED.npy\n");
    return 2;
  }
  int64_t in_shape[8], want_shape[8];
  int in_ndim = 0, want_ndim = 0;
  size_t in_n = 0, want_n = 0;
  float *in = read_npy(argv[2], in_shape, &in_ndim, &in_n);
  float *want = read_npy(argv[3], want_shape, &want_ndim, &want_n);
  char err[512] = "";
  mlc_model *model = NULL;
  mlc_session *sess = NULL;
  const DLTensor *out = NULL;
  int rc = 1;
  if (!in || !want)
    fprintf(stderr, "install_app: %s: not a float32 .npy file\n", in ? argv[3] : argv[2]);
  else if (mlc_model_load(argv[1], &model, err, sizeof err) != MLC_RT_OK)
    fprintf(stderr, "install_app: %s\n", err);
  else if (mlc_session_create(model, NULL, &sess) != MLC_RT_OK)
    fprintf(stderr, "install_app: %s\n", mlc_model_last_error());
  else {
    DLTensor x;
    memset(&x, 0, sizeof x);
    x.data = in;
    x.device.device_type = kDLCPU;
    x.ndim = in_ndim;
    x.dtype.code = kDLFloat;
    x.dtype.bits = 32;
    x.dtype.lanes = 1;
    x.shape = in_shape;
    if (mlc_session_set_input(sess, 0, &x) != MLC_RT_OK || mlc_session_run(sess) != MLC_RT_OK ||
        mlc_session_get_output(sess, 0, &out) != MLC_RT_OK)
      fprintf(stderr, "install_app: %s\n", mlc_session_last_error(sess));
    else if (out->dtype.code != kDLFloat || out->dtype.bits != 32 || out->ndim != want_ndim ||
             memcmp(out->shape, want_shape, (size_t)want_ndim * sizeof *want_shape) != 0)
      fprintf(stderr, "install_app: output 0 is not a float32 tensor of the expected shape\n");
    else {
      const float *y = (const float *)out->data;
      double worst = 0;
      size_t bad = 0;
      for (size_t i = 0; i < want_n; i++) {
        double d = (double)y[i] - want[i], w = want[i];
        if (d < 0) d = -d;
        if (w < 0) w = -w;
        if (!(d <= 1e-4 + 1e-3 * w)) bad++;
        if (d > worst) worst = d;
      }
      printf("%s: output \"%s\" (%zu values) %s (max |diff| %.3g)\n", mlc_model_name(model),
             mlc_model_output_name(model, 0), want_n, bad ? "differs" : "matches", worst);
      rc = bad ? 1 : 0;
    }
  }
  mlc_session_free(sess);
  mlc_model_free(model);
  free(in);
  free(want);
  return rc;
}
