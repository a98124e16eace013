/*
** test_runtime.c: the deployable runtime (runtime/) and its public API.
**
** Most tests load tests/runtime/libtoy_model.so (a hand-written model built
** with the runtime's objects, see toy_model.c) through the loader, exactly
** as a user program would.  Suites: loader (load, I/O info, bad files, ABI
** checks, NULL handles), session (runs at several batch sizes against a
** reference, every input check, kernel errors), threads (the thread pool
** itself, and concurrent sessions), desc (description validation, through
** the runtime's internal open function).
*/
#include "config.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mlc/mlc_runtime.h"
#include "runtime/rt_blob.h"
#include "runtime/rt_int.h"
#include "runtime/rt_so.h"
#include "tests/testutil.h"

#define TOY_SO "tests/runtime/.libs/libtoy_model.so"
#define BADABI_SO "tests/runtime/.libs/libtoy_badabi.so"
#define COLS 4

static const float bias[COLS] = {0.5f, -1.0f, 0.0f, 2.0f};

static mlc_model *load_toy(void) {
  mlc_model *m = NULL;
  char err[512];
  mlc_rt_status st = mlc_model_load(mlc_test_build_path(TOY_SO), &m, err, sizeof err);
  if (st != MLC_RT_OK) fprintf(stderr, "load: %s\n", err);
  CU_ASSERT_EQUAL(st, MLC_RT_OK);
  return mlc_test_hold(m);
}

/* A compact CPU float32 tensor over |data|. */
static DLTensor f32_tensor(float *data, int ndim, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

/* Deterministic inputs for |batch| rows. */
static void fill_inputs(float *x, float *off, int64_t batch, int seed) {
  for (int64_t r = 0; r < batch; r++) {
    off[r] = (float)((r * 7 + seed) % 5) * 0.25f - 0.5f;
    for (int c = 0; c < COLS; c++)
      x[r * COLS + c] = (float)((r * 13 + c * 5 + seed) % 11) * 0.375f - 1.75f;
  }
}

/* The toy model in plain C, with the same float operations in the same order. */
static void reference(const float *x, const float *off, int64_t batch, float *z, float *rowsum) {
  for (int64_t r = 0; r < batch; r++) {
    float s = 0;
    for (int c = 0; c < COLS; c++) {
      float v = x[r * COLS + c] + bias[c] + off[r];
      v = v > 0 ? v : 0;
      z[r * COLS + c] = v * 2.0f;
      s += z[r * COLS + c];
    }
    rowsum[r] = s + 10.0f;
  }
}

/* Sets inputs for |batch| rows, runs, and compares with the reference bit for bit. */
static int run_and_check(mlc_session *s, int64_t batch, int seed) {
  int64_t nx = batch > 0 ? batch : 1;
  float *x = calloc((size_t)(nx * COLS), sizeof *x), *off = calloc((size_t)nx, sizeof *off);
  float *z = calloc((size_t)(nx * COLS), sizeof *z), *rs = calloc((size_t)nx, sizeof *rs);
  int ok = 0;
  if (!x || !off || !z || !rs) goto done;
  fill_inputs(x, off, batch, seed);
  reference(x, off, batch, z, rs);
  int64_t xs[2] = {batch, COLS}, os[1] = {batch};
  DLTensor tx = f32_tensor(x, 2, xs), to = f32_tensor(off, 1, os);
  if (mlc_session_set_input(s, 0, &tx) != MLC_RT_OK) goto done;
  if (mlc_session_set_input_by_name(s, "offset", &to) != MLC_RT_OK) goto done;
  if (mlc_session_run(s) != MLC_RT_OK) {
    fprintf(stderr, "run: %s\n", mlc_session_last_error(s));
    goto done;
  }
  const DLTensor *oz = NULL, *ors = NULL;
  if (mlc_session_get_output(s, 0, &oz) != MLC_RT_OK) goto done;
  if (mlc_session_get_output(s, 1, &ors) != MLC_RT_OK) goto done;
  /* a CPU model's output where it was computed is the same tensor */
  const DLTensor *dz = NULL;
  if (mlc_session_get_output_device(s, 0, &dz) != MLC_RT_OK || dz != oz) goto done;
  if (mlc_session_get_output_device(s, 2, &dz) != MLC_RT_INVALID_ARGUMENT || dz) goto done;
  if (oz->ndim != 2 || oz->shape[0] != batch || oz->shape[1] != COLS) goto done;
  if (ors->ndim != 1 || ors->shape[0] != batch) goto done;
  if (oz->device.device_type != kDLCPU || oz->dtype.code != kDLFloat || oz->dtype.bits != 32)
    goto done;
  if (batch > 0 && memcmp(oz->data, z, (size_t)(batch * COLS) * sizeof(float)) != 0) goto done;
  if (batch > 0 && memcmp(ors->data, rs, (size_t)batch * sizeof(float)) != 0) goto done;
  ok = 1;
done:
  free(x);
  free(off);
  free(z);
  free(rs);
  return ok;
}

/* ---- loader ------------------------------------------------------------- */

static void test_load_and_info(void) {
  mlc_model *m = load_toy();
  if (!m) return;
  CU_ASSERT_STRING_EQUAL(mlc_model_name(m), "toy");
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_model_manifest(m), "\"extern_calls\""));
  CU_ASSERT_EQUAL(mlc_model_num_inputs(m), 2);
  CU_ASSERT_EQUAL(mlc_model_num_outputs(m), 2);
  CU_ASSERT_STRING_EQUAL(mlc_model_input_name(m, 0), "x");
  CU_ASSERT_STRING_EQUAL(mlc_model_input_name(m, 1), "offset");
  CU_ASSERT_STRING_EQUAL(mlc_model_output_name(m, 0), "z");
  CU_ASSERT_STRING_EQUAL(mlc_model_output_name(m, 1), "rowsum");
  CU_ASSERT_PTR_NULL(mlc_model_input_name(m, 2));
  CU_ASSERT_PTR_NULL(mlc_model_output_name(m, -1));
  CU_ASSERT_EQUAL(mlc_model_input_index(m, "offset"), 1);
  CU_ASSERT_EQUAL(mlc_model_input_index(m, "nope"), -1);
  CU_ASSERT_EQUAL(mlc_model_input_index(m, NULL), -1);
  CU_ASSERT_EQUAL(mlc_model_output_index(m, "rowsum"), 1);
  DLDataType t = mlc_model_input_dtype(m, 0);
  CU_ASSERT(t.code == kDLFloat && t.bits == 32 && t.lanes == 1);
  t = mlc_model_output_dtype(m, 1);
  CU_ASSERT(t.code == kDLFloat && t.bits == 32 && t.lanes == 1);
  CU_ASSERT_EQUAL(mlc_model_input_dtype(m, 5).bits, 0);
  CU_ASSERT_EQUAL(mlc_model_input_ndim(m, 0), 2);
  CU_ASSERT_EQUAL(mlc_model_input_ndim(m, 1), 1);
  CU_ASSERT_EQUAL(mlc_model_input_ndim(m, 2), -1);
  CU_ASSERT_EQUAL(mlc_model_output_ndim(m, 0), 2);
  CU_ASSERT_EQUAL(mlc_model_input_dim(m, 0, 0), -1);
  CU_ASSERT_EQUAL(mlc_model_input_dim(m, 0, 1), 4);
  CU_ASSERT_EQUAL(mlc_model_input_dim(m, 0, 2), -1);
  CU_ASSERT_EQUAL(mlc_model_output_dim(m, 0, 1), 4);
  CU_ASSERT_STRING_EQUAL(mlc_model_input_dim_name(m, 0, 0), "batch");
  CU_ASSERT_PTR_NULL(mlc_model_input_dim_name(m, 0, 1));
  CU_ASSERT_STRING_EQUAL(mlc_model_output_dim_name(m, 1, 0), "batch");
  CU_ASSERT_EQUAL(mlc_model_input_has_default(m, 1), 0);
  CU_ASSERT_EQUAL(mlc_model_input_has_default(m, 2), 0);
  CU_ASSERT_EQUAL(mlc_model_input_has_default(NULL, 0), 0);
  CU_ASSERT_EQUAL(mlc_model_num_symbols(m), 1);
  CU_ASSERT_STRING_EQUAL(mlc_model_symbol_name(m, 0), "batch");
  CU_ASSERT_PTR_NULL(mlc_model_symbol_name(m, 1));
  /* Tools can reach the serialized description through the table. */
  const mlc_rt_entry *e = mlc_rt_model_entry_of(m);
  CU_ASSERT_FATAL(e && e->blob);
  mlc_rt_model_desc *d = NULL;
  char err[256];
  uint32_t n; /* the blob's size, from its header (little-endian, as this host) */
  memcpy(&n, e->blob + 20, sizeof n);
  CU_ASSERT_EQUAL(mlc_rt_desc_decode(NULL, e->blob, n, NULL, 0, NULL, &d, err, sizeof err), MLC_RT_OK);
  CU_ASSERT(d && d->abi_version == MLC_RT_DESC_VERSION && d->nkernels == 3);
  mlc_rt_desc_free(d);
  mlc_model_free(m);
}

static void test_load_errors(void) {
  mlc_model *m = (mlc_model *)1;
  char err[512];
  /* missing file */
  CU_ASSERT_EQUAL(mlc_model_load(mlc_test_build_path("tests/runtime/no-such.so"), &m, err, sizeof err),
                  MLC_RT_NOT_FOUND);
  CU_ASSERT_PTR_NULL(m);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "no-such.so"));
  CU_ASSERT_STRING_EQUAL(mlc_model_last_error(), err);
  /* a file that is not a shared object */
  char *dir = mlc_test_tmpdir();
  CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/notamodel.so", dir);
  CU_ASSERT_EQUAL(mlc_test_write_file(path, "hello\n", 6), 0);
  CU_ASSERT_EQUAL(mlc_model_load(path, &m, err, sizeof err), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NULL(m);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot load"));
  remove(path);
  rmdir(dir);
  free(dir);
  /* a shared object that is not a model: the C library itself */
  Dl_info info;
  if (dladdr((void *)&printf, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
    CU_ASSERT_EQUAL(mlc_model_load(info.dli_fname, &m, err, sizeof err), MLC_RT_INVALID_ARGUMENT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a model compiled by mlc-onnx"));
  }
  /* the description claims another version */
  CU_ASSERT_EQUAL(mlc_model_load(mlc_test_build_path(BADABI_SO), &m, err, sizeof err),
                  MLC_RT_ABI_MISMATCH);
  CU_ASSERT_PTR_NULL(m);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "999"));
  /* an entry table of another version */
  mlc_rt_entry fake;
  memset(&fake, 0, sizeof fake);
  fake.abi_version = MLC_RT_ENTRY_VERSION + 1;
  fake.size = sizeof fake;
  CU_ASSERT_EQUAL(mlc_model_open_entry(&fake, &m, err, sizeof err), MLC_RT_ABI_MISMATCH);
  CU_ASSERT_PTR_NULL(m);
  fake.abi_version = MLC_RT_ENTRY_VERSION;
  fake.size = 8;
  CU_ASSERT_EQUAL(mlc_model_open_entry(&fake, &m, NULL, 0), MLC_RT_ABI_MISMATCH);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_model_last_error(), "ABI"));
  /* NULL arguments */
  CU_ASSERT_EQUAL(mlc_model_load(NULL, &m, err, sizeof err), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_model_load(mlc_test_build_path(TOY_SO), NULL, NULL, 0),
                  MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_model_load("", &m, err, sizeof err), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_model_open_entry(NULL, &m, err, sizeof err), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_STRING_EQUAL(mlc_rt_status_name(MLC_RT_ABI_MISMATCH), "ABI_MISMATCH");
  CU_ASSERT_STRING_EQUAL(mlc_rt_status_name((mlc_rt_status)77), "UNKNOWN");
}

static void test_null_handles(void) {
  const DLTensor *o = (const DLTensor *)1;
  mlc_session *s = (mlc_session *)1;
  CU_ASSERT_STRING_EQUAL(mlc_model_name(NULL), "");
  CU_ASSERT_STRING_EQUAL(mlc_model_manifest(NULL), "");
  CU_ASSERT_EQUAL(mlc_model_num_inputs(NULL), 0);
  CU_ASSERT_EQUAL(mlc_model_num_outputs(NULL), 0);
  CU_ASSERT_PTR_NULL(mlc_model_input_name(NULL, 0));
  CU_ASSERT_EQUAL(mlc_model_input_index(NULL, "x"), -1);
  CU_ASSERT_EQUAL(mlc_model_input_ndim(NULL, 0), -1);
  CU_ASSERT_EQUAL(mlc_model_input_dim(NULL, 0, 0), -1);
  CU_ASSERT_PTR_NULL(mlc_model_input_dim_name(NULL, 0, 0));
  CU_ASSERT_EQUAL(mlc_model_output_dtype(NULL, 0).bits, 0);
  CU_ASSERT_EQUAL(mlc_model_num_symbols(NULL), 0);
  CU_ASSERT_EQUAL(mlc_session_create(NULL, NULL, &s), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_model_last_error(), "NULL model"));
  CU_ASSERT_EQUAL(mlc_session_set_input(NULL, 0, NULL), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_session_set_input_by_name(NULL, "x", NULL), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_session_run(NULL), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_session_get_output(NULL, 0, &o), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NULL(o);
  CU_ASSERT_PTR_NOT_NULL(mlc_session_last_error(NULL));
  mlc_session_free(NULL);
  mlc_model_free(NULL);

  mlc_model *m = load_toy();
  if (!m) return;
  CU_ASSERT_EQUAL(mlc_session_create(m, NULL, NULL), MLC_RT_INVALID_ARGUMENT);
  mlc_session_options opts = {-3};
  CU_ASSERT_EQUAL(mlc_session_create(m, &opts, &s), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_model_last_error(), "num_threads"));
  opts.num_threads = 1;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, &opts, &s), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, NULL), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "NULL tensor"));
  CU_ASSERT_EQUAL(mlc_session_set_input_by_name(s, NULL, NULL), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_session_get_output(s, 0, NULL), MLC_RT_INVALID_ARGUMENT);
  mlc_session_free(s);
  mlc_model_free(m);
}

/* Two loads of one file, and a model opened from its entry directly. */
static void test_two_models_and_direct_entry(void) {
  mlc_model *a = load_toy(), *b = load_toy();
  if (!a || !b) {
    mlc_model_free(a);
    mlc_model_free(b);
    return;
  }
  mlc_session *sa, *sb;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(a, NULL, &sa), MLC_RT_OK);
  mlc_test_hold(sa);
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(b, NULL, &sb), MLC_RT_OK);
  mlc_test_hold(sb);
  mlc_model_free(a); /* the session keeps its model alive */
  CU_ASSERT(run_and_check(sa, 3, 1));
  CU_ASSERT(run_and_check(sb, 5, 2));
  mlc_session_free(sa);
  mlc_session_free(sb);
  mlc_model_free(b);

  /* As a program linked with the model would: call the entry, then open it. */
  void *dl = dlopen(mlc_test_build_path(TOY_SO), RTLD_NOW | RTLD_LOCAL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(dl);
  const mlc_rt_entry *(*entry)(void) = (const mlc_rt_entry *(*)(void))dlsym(dl, "mlc_model_entry_v1");
  CU_ASSERT_PTR_NOT_NULL(entry);
  if (entry) {
    mlc_model *m = NULL;
    char err[256];
    CU_ASSERT_EQUAL(mlc_model_open_entry(entry(), &m, err, sizeof err), MLC_RT_OK);
    mlc_session *s = NULL;
    CU_ASSERT_EQUAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
    CU_ASSERT(run_and_check(s, 2, 3));
    mlc_session_free(s);
    mlc_model_free(m);
  }
  dlclose(dl);
}

/* A foreign pointer (zeroed memory that is no handle) and handles used
** after their free are refused, and a second free is detected. */
static void test_bad_handles(void) {
  static uint64_t zero[64]; /* room for either handle */
  mlc_model *fm = (mlc_model *)zero;
  mlc_session *fs = (mlc_session *)zero;
  const DLTensor *o = (const DLTensor *)1;
  mlc_session *s = (mlc_session *)1;
  CU_ASSERT_STRING_EQUAL(mlc_model_name(fm), "");
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_model_last_error(), "not a model handle"));
  CU_ASSERT_EQUAL(mlc_model_num_inputs(fm), 0);
  CU_ASSERT_PTR_NULL(mlc_model_input_name(fm, 0));
  CU_ASSERT_EQUAL(mlc_model_input_index(fm, "x"), -1);
  CU_ASSERT_EQUAL(mlc_model_input_dtype(fm, 0).bits, 0);
  CU_ASSERT_EQUAL(mlc_session_create(fm, NULL, &s), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_EQUAL(mlc_session_set_input(fs, 0, NULL), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_session_run(fs), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_session_get_output(fs, 0, &o), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NULL(o);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(fs), "not a session"));
  mlc_session_free(fs);
  mlc_model_free(fm);
  for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++) CU_ASSERT_EQUAL(zero[i], 0);

  /* Double frees and calls after free: refused, nothing freed twice. */
  mlc_model *m = load_toy();
  if (!m) return;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s), MLC_RT_OK);
  mlc_session_free(s);
  mlc_session_free(s);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_model_last_error(), "session already freed"));
  CU_ASSERT_EQUAL(mlc_session_run(s), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "already freed"));
  /* A session keeps its model alive after the model's own free ... */
  mlc_session *s2 = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, NULL, &s2), MLC_RT_OK);
  mlc_model_free(m);
  CU_ASSERT(run_and_check(s2, 2, 1));
  /* ... but the model's handle is spent. */
  mlc_model_free(m);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_model_last_error(), "model already freed"));
  CU_ASSERT_EQUAL(mlc_model_num_inputs(m), 0);
  CU_ASSERT_EQUAL(mlc_session_create(m, NULL, &s), MLC_RT_INVALID_ARGUMENT);
  mlc_session_free(s2);
  mlc_model_free(m);
  mlc_session_free(s2);
  CU_ASSERT_EQUAL(mlc_model_num_outputs(m), 0);
}

/* ---- files: a model.so checked before it is loaded ---------------------- */

/* Writes |n| bytes of |data| to a file and loads it: 1 when that fails with
** a message naming the file (or, with |may_load|, loads and runs). */
static int load_damaged(const char *dir, const uint8_t *data, size_t n, int may_load,
                        const char *what) {
  char path[4200], err[1024];
  snprintf(path, sizeof path, "%s/damaged.so", dir);
  if (mlc_test_write_file(path, data, n) != 0) return 0;
  mlc_model *m = NULL;
  mlc_rt_status st = mlc_model_load(path, &m, err, sizeof err);
  int ok = st == MLC_RT_OK ? may_load : strstr(err, "damaged.so") != NULL;
  if (!ok) fprintf(stderr, "\n%s: %s\n", what, st == MLC_RT_OK ? "loaded" : err);
  mlc_model_free(m);
  remove(path);
  return ok;
}

/* Truncations: every length up to 4 KiB, then a spread to the end. */
static void test_truncated_so(void) {
  size_t n = 0;
  uint8_t *so = (uint8_t *)mlc_test_read_file(mlc_test_build_path(TOY_SO), &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(so);
  char *dir = mlc_test_tmpdir();
  CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
  char err[512];
  int bad = 0;
  for (size_t len = 0; len < n; len += len < 4096 ? 1 : n / 512 + 1) {
    mlc_rt_model_desc *d = (mlc_rt_model_desc *)1;
    if (mlc_rt_so_check_mem(NULL, so, len, &d, err, sizeof err) == MLC_RT_OK || d || !err[0]) bad++;
  }
  CU_ASSERT_EQUAL(bad, 0);
  for (size_t len = 0; len < n; len += len < 256 ? 7 : n / 61 + 1) {
    char what[64];
    snprintf(what, sizeof what, "truncated to %zu bytes", len);
    bad += !load_damaged(dir, so, len, 0, what);
  }
  CU_ASSERT_EQUAL(bad, 0);
  mlc_rt_model_desc *d = NULL;
  CU_ASSERT_EQUAL(mlc_rt_so_check_mem(NULL, so, n, &d, err, sizeof err), MLC_RT_OK);
  CU_ASSERT(d && d->ntensors == 8 && d->nkernels == 3 && strcmp(d->inputs[1].name, "offset") == 0);
  mlc_rt_desc_free(d);
  CU_ASSERT_EQUAL(mlc_rt_so_check_mem(NULL, NULL, 0, NULL, err, sizeof err), MLC_RT_INVALID_ARGUMENT);
  rmdir(dir);
  free(dir);
  free(so);
}

/* Byte flips in the ELF header and the program and section header tables:
** the check and the load fail cleanly, or the file still works. */
static void test_flipped_so(void) {
  size_t n = 0;
  uint8_t *so = (uint8_t *)mlc_test_read_file(mlc_test_build_path(TOY_SO), &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(so);
  CU_ASSERT_FATAL(n > 64);
  char *dir = mlc_test_tmpdir();
  CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
  uint64_t phoff, shoff;
  uint16_t phnum, shnum;
  memcpy(&phoff, so + 32, 8);
  memcpy(&shoff, so + 40, 8);
  memcpy(&phnum, so + 56, 2);
  memcpy(&shnum, so + 60, 2);
  CU_ASSERT_FATAL(phoff + phnum * 56u <= n && shoff + shnum * 64u <= n);
  size_t ranges[3][2] = {{0, 64}, {phoff, phoff + phnum * 56u}, {shoff, shoff + shnum * 64u}};
  static const uint8_t masks[] = {0xff, 0x01, 0x80, 0x10};
  int bad = 0, tried = 0;
  char err[512];
  for (int r = 0; r < 3; r++)
    for (size_t i = ranges[r][0]; i < ranges[r][1]; i++)
      for (size_t k = 0; k < sizeof masks; k++) {
        so[i] ^= masks[k];
        mlc_rt_model_desc *d = NULL;
        mlc_rt_status st = mlc_rt_so_check_mem(NULL, so, n, &d, err, sizeof err);
        mlc_rt_desc_free(d);
        if (st != MLC_RT_OK && !err[0]) bad++;
        /* Loading (dlopen) only where the check passes is what the
        ** loader does; load a sample of those, and every header flip. */
        if (r == 0 || (st == MLC_RT_OK && (i + k) % 5 == 0)) {
          char what[64];
          snprintf(what, sizeof what, "byte %zu ^ 0x%02x", i, masks[k]);
          bad += !load_damaged(dir, so, n, 1, what);
          tried++;
        }
        so[i] ^= masks[k];
      }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(tried > 256);
  rmdir(dir);
  free(dir);
  free(so);
}

/* ---- session ------------------------------------------------------------ */

static mlc_session *toy_session(mlc_model *m, int32_t threads) {
  mlc_session_options opts = {threads};
  mlc_session *s = NULL;
  CU_ASSERT_EQUAL(mlc_session_create(m, &opts, &s), MLC_RT_OK);
  return mlc_test_hold(s);
}

static void test_run_batches(void) {
  mlc_model *m = load_toy();
  if (!m) return;
  mlc_session *s = toy_session(m, 1);
  if (s) {
    CU_ASSERT(run_and_check(s, 1, 0));
    CU_ASSERT(run_and_check(s, 4, 1));
    CU_ASSERT(run_and_check(s, 4, 2)); /* same shapes again */
    CU_ASSERT(run_and_check(s, 0, 0)); /* empty batch */
    CU_ASSERT(run_and_check(s, 37, 3));
    CU_ASSERT(run_and_check(s, 1, 4));
    mlc_session_free(s);
  }
  s = toy_session(m, 4);
  if (s) {
    CU_ASSERT(run_and_check(s, 4, 5));
    CU_ASSERT(run_and_check(s, 1000, 6));
    CU_ASSERT(run_and_check(s, 1, 7));
    mlc_session_free(s);
  }
  mlc_model_free(m);
}

/* Memory grows only when shapes need more: buffers stay put otherwise. */
static void test_no_realloc_same_shapes(void) {
  mlc_model *m = load_toy();
  if (!m) return;
  mlc_session *s = toy_session(m, 2);
  const DLTensor *o = NULL;
  CU_ASSERT_FATAL(run_and_check(s, 16, 0));
  CU_ASSERT_EQUAL(mlc_session_get_output(s, 0, &o), MLC_RT_OK);
  void *first = o->data;
  CU_ASSERT(run_and_check(s, 16, 1));
  CU_ASSERT_EQUAL(mlc_session_get_output(s, 0, &o), MLC_RT_OK);
  CU_ASSERT_PTR_EQUAL(o->data, first);
  CU_ASSERT(run_and_check(s, 3, 2)); /* smaller: no new buffer */
  CU_ASSERT_EQUAL(mlc_session_get_output(s, 0, &o), MLC_RT_OK);
  CU_ASSERT_PTR_EQUAL(o->data, first);
  CU_ASSERT(run_and_check(s, 16, 3));
  CU_ASSERT_EQUAL(mlc_session_get_output(s, 0, &o), MLC_RT_OK);
  CU_ASSERT_PTR_EQUAL(o->data, first);
  CU_ASSERT_EQUAL((uintptr_t)o->data % 64, 0);
  mlc_session_free(s);
  mlc_model_free(m);
}

static void test_input_errors(void) {
  mlc_model *m = load_toy();
  if (!m) return;
  mlc_session *s = toy_session(m, 1);
  if (!s) {
    mlc_model_free(m);
    return;
  }
  float x[8 * COLS] = {0}, off[8] = {0};
  int64_t xs[2] = {2, COLS}, os[1] = {2};
  DLTensor tx = f32_tensor(x, 2, xs), to = f32_tensor(off, 1, os), bad;
  const DLTensor *out;
  const char *e;

  /* get_output before any run */
  CU_ASSERT_EQUAL(mlc_session_get_output(s, 0, &out), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "has not run"));
  /* missing input */
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_run(s), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "input \"offset\" (1) is not set"));
  CU_ASSERT_EQUAL(mlc_session_get_output(s, 0, &out), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "last run failed"));
  /* bad index / name */
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 2, &to), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "out of range"));
  CU_ASSERT_EQUAL(mlc_session_set_input(s, -1, &to), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_session_set_input_by_name(s, "y", &to), MLC_RT_NOT_FOUND);
  e = mlc_session_last_error(s);
  CU_ASSERT(strstr(e, "no input named \"y\"") && strstr(e, "\"offset\""));
  /* wrong dtype */
  bad = to;
  bad.dtype.bits = 64;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &bad), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "dtype float64, expected float32"));
  bad = to;
  bad.dtype.code = kDLInt;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &bad), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "int32"));
  bad = to;
  bad.dtype.lanes = 4;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &bad), MLC_RT_INVALID_ARGUMENT);
  /* wrong rank */
  bad = tx;
  bad.ndim = 1;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "input \"x\" (0): rank 1, expected 2"));
  /* wrong static dim, negative dim, NULL shape */
  int64_t xs_bad[2] = {2, 5};
  bad = tx;
  bad.shape = xs_bad;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "dim 1 is 5, expected 4"));
  int64_t xs_neg[2] = {-2, 4};
  bad.shape = xs_neg;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "negative"));
  bad.shape = NULL;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_INVALID_ARGUMENT);
  /* huge shape */
  int64_t xs_huge[2] = {INT64_MAX / 2, 4};
  bad.shape = xs_huge;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "too large"));
  /* device, data, strides, alignment */
  bad = tx;
  bad.device.device_type = kDLCUDA;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "kDLCPU"));
  bad = tx;
  bad.data = NULL;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "data is NULL"));
  int64_t st_ok[2] = {COLS, 1}, st_t[2] = {1, 2}, st_1[2] = {99, 1};
  bad = tx;
  bad.strides = st_ok;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_OK);
  bad.strides = st_t;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "strides"));
  int64_t xs1[2] = {1, COLS};
  bad.shape = xs1;
  bad.strides = st_1; /* size-1 dims may have any stride */
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_OK);
  bad = tx;
  bad.byte_offset = 2;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "aligned"));
  /* empty tensors may have NULL data */
  int64_t xs0[2] = {0, COLS}, os0[1] = {0};
  bad = f32_tensor(NULL, 2, xs0);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_OK);
  bad = f32_tensor(NULL, 1, os0);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &bad), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_run(s), MLC_RT_OK);
  /* a failed set_input unbinds the input */
  bad = tx;
  bad.dtype.bits = 16;
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &bad), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_session_run(s), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_session_last_error(s), "input \"x\" (0) is not set"));
  /* inputs that disagree about "batch" */
  int64_t os3[1] = {3};
  DLTensor to3 = f32_tensor(off, 1, os3);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &to3), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_run(s), MLC_RT_INVALID_ARGUMENT);
  e = mlc_session_last_error(s);
  CU_ASSERT_PTR_NOT_NULL(strstr(e, "input \"offset\" (1): dim 0 is 3, but symbolic dim \"batch\" is 2 "
                                   "from input \"x\" dim 0"));
  /* and then a good run */
  CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &to), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_run(s), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_get_output(s, 1, &out), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_session_get_output(s, 2, &out), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NULL(out);
  mlc_session_free(s);
  mlc_model_free(m);
}

/* A kernel that fails names the step and the ONNX node. */
static void test_kernel_error(void) {
  mlc_model *m = load_toy();
  if (!m) return;
  mlc_session *s = toy_session(m, 3);
  if (s) {
    float x[3 * COLS] = {1, 2, 3, 4, 1e38f, 1, 1, 1, 0, 0, 0, 0}, off[3] = {0, 0, 0};
    int64_t xs[2] = {3, COLS}, os[1] = {3};
    DLTensor tx = f32_tensor(x, 2, xs), to = f32_tensor(off, 1, os);
    const DLTensor *out;
    CU_ASSERT_EQUAL(mlc_session_set_input(s, 0, &tx), MLC_RT_OK);
    CU_ASSERT_EQUAL(mlc_session_set_input(s, 1, &to), MLC_RT_OK);
    CU_ASSERT_EQUAL(mlc_session_run(s), MLC_RT_RUNTIME_ERROR);
    CU_ASSERT_STRING_EQUAL(mlc_session_last_error(s),
                           "step 1 (node \"Scale_1\"): toy.scale: value too large");
    CU_ASSERT_EQUAL(mlc_session_get_output(s, 0, &out), MLC_RT_INVALID_ARGUMENT);
    /* The session is still usable. */
    CU_ASSERT(run_and_check(s, 3, 9));
    mlc_session_free(s);
  }
  mlc_model_free(m);
}

/* ---- threads ------------------------------------------------------------ */

typedef struct sum_job {
  atomic_llong sum;
  atomic_int calls;
  atomic_int *hits; /* per index, or NULL */
  mlc_rt_pool *pool;
  int nested;
  int64_t fail_at;
  int sleep_us;
  pthread_t seen[64];
  atomic_int nseen;
  pthread_mutex_t mu;
} sum_job;

static int sum_body(int64_t b, int64_t e, void *closure) {
  sum_job *j = closure;
  atomic_fetch_add(&j->calls, 1);
  if (j->sleep_us) usleep((useconds_t)j->sleep_us);
  pthread_mutex_lock(&j->mu);
  int known = 0, n = atomic_load(&j->nseen);
  for (int i = 0; i < n; i++) known |= pthread_equal(j->seen[i], pthread_self());
  if (!known && n < 64) {
    j->seen[n] = pthread_self();
    atomic_store(&j->nseen, n + 1);
  }
  pthread_mutex_unlock(&j->mu);
  long long s = 0;
  for (int64_t i = b; i < e; i++) {
    if (i == j->fail_at) return 7;
    s += i;
    if (j->hits) atomic_fetch_add(&j->hits[i], 1);
  }
  atomic_fetch_add(&j->sum, s);
  if (j->nested) {
    /* Nested loop: must run serially on this thread, without deadlock. */
    sum_job inner;
    memset(&inner, 0, sizeof inner);
    inner.fail_at = -1;
    pthread_mutex_init(&inner.mu, NULL);
    int rc = mlc_rt_pool_run(j->pool, 100, sum_body, &inner);
    int ok = rc == 0 && atomic_load(&inner.sum) == 4950 && atomic_load(&inner.calls) == 1 &&
             atomic_load(&inner.nseen) == 1 && pthread_equal(inner.seen[0], pthread_self());
    pthread_mutex_destroy(&inner.mu);
    if (!ok) return 99;
  }
  return 0;
}

static void job_init(sum_job *j, mlc_rt_pool *p) {
  memset(j, 0, sizeof *j);
  j->pool = p;
  j->fail_at = -1;
  pthread_mutex_init(&j->mu, NULL);
}

static void check_pool(int32_t threads) {
  mlc_rt_pool *p = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_pool_create(threads, &p), 0);
  CU_ASSERT_EQUAL(mlc_rt_pool_threads(p), threads);
  sum_job j;
  /* sum of chunks == serial sum; every index exactly once */
  const int64_t n = 100003;
  atomic_int *hits = calloc((size_t)n, sizeof *hits);
  job_init(&j, p);
  j.hits = hits;
  CU_ASSERT_EQUAL(mlc_rt_pool_run(p, n, sum_body, &j), 0);
  CU_ASSERT_EQUAL(atomic_load(&j.sum), (long long)n * (n - 1) / 2);
  int once = 1;
  for (int64_t i = 0; i < n; i++) once &= atomic_load(&hits[i]) == 1;
  CU_ASSERT(once);
  if (threads == 1) CU_ASSERT_EQUAL(atomic_load(&j.calls), 1); /* inline: one call */
  if (threads > 1) CU_ASSERT(atomic_load(&j.calls) >= threads);
  free(hits);
  pthread_mutex_destroy(&j.mu);
  /* small and empty ranges */
  for (int64_t k = 0; k < 10; k++) {
    job_init(&j, p);
    CU_ASSERT_EQUAL(mlc_rt_pool_run(p, k, sum_body, &j), 0);
    CU_ASSERT_EQUAL(atomic_load(&j.sum), (long long)k * (k - 1) / 2);
    pthread_mutex_destroy(&j.mu);
  }
  /* nested loops run serially */
  job_init(&j, p);
  j.nested = 1;
  CU_ASSERT_EQUAL(mlc_rt_pool_run(p, 64, sum_body, &j), 0);
  CU_ASSERT_EQUAL(atomic_load(&j.sum), 64 * 63 / 2);
  pthread_mutex_destroy(&j.mu);
  /* the first nonzero result comes back */
  job_init(&j, p);
  j.fail_at = 500;
  CU_ASSERT_EQUAL(mlc_rt_pool_run(p, 1000, sum_body, &j), 7);
  pthread_mutex_destroy(&j.mu);
  /* workers take part */
  if (threads > 1) {
    job_init(&j, p);
    j.sleep_us = 2000;
    CU_ASSERT_EQUAL(mlc_rt_pool_run(p, threads * 4, sum_body, &j), 0);
    CU_ASSERT(atomic_load(&j.nseen) >= 2);
    pthread_mutex_destroy(&j.mu);
  }
  /* many short loops in a row */
  int all = 1;
  for (int k = 0; k < 2000; k++) {
    job_init(&j, p);
    all &= mlc_rt_pool_run(p, 64, sum_body, &j) == 0 && atomic_load(&j.sum) == 64 * 63 / 2;
    pthread_mutex_destroy(&j.mu);
  }
  CU_ASSERT(all);
  mlc_rt_pool_destroy(p);
}

static void test_pool_1(void) { check_pool(1); }
static void test_pool_4(void) { check_pool(4); }

static void test_pool_misc(void) {
  mlc_rt_pool *p = (mlc_rt_pool *)1;
  CU_ASSERT_NOT_EQUAL(mlc_rt_pool_create(0, &p), 0);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_NOT_EQUAL(mlc_rt_pool_create(2, NULL), 0);
  CU_ASSERT_EQUAL(mlc_rt_pool_threads(NULL), 1);
  CU_ASSERT(mlc_rt_pool_resolve_threads(0) >= 1);
  CU_ASSERT_EQUAL(mlc_rt_pool_resolve_threads(3), 3);
  CU_ASSERT_EQUAL(mlc_rt_pool_resolve_threads(-1), -1);
  sum_job j;
  job_init(&j, NULL);
  CU_ASSERT_EQUAL(mlc_rt_pool_run(NULL, 10, sum_body, &j), 0);
  CU_ASSERT_EQUAL(atomic_load(&j.sum), 45);
  pthread_mutex_destroy(&j.mu);
  mlc_rt_pool_destroy(NULL);
}

/* The chunks a loop ran, as [begin, end) pairs. */
typedef struct range_job {
  pthread_mutex_t mu;
  int n;
  int64_t r[2 * 256];
} range_job;

static int range_body(int64_t b, int64_t e, void *closure) {
  range_job *j = closure;
  pthread_mutex_lock(&j->mu);
  if (j->n < 256) {
    j->r[2 * j->n] = b;
    j->r[2 * j->n + 1] = e;
    j->n++;
  }
  pthread_mutex_unlock(&j->mu);
  return 0;
}

/* Runs [0, n) with |grain| on |p|; returns the number of chunks, and
** whether every boundary is a multiple of |mult| and they cover [0, n)
** exactly once. */
static int grain_run(mlc_rt_pool *p, int64_t n, int64_t grain, int64_t mult, int *aligned) {
  range_job j;
  memset(&j, 0, sizeof j);
  pthread_mutex_init(&j.mu, NULL);
  CU_ASSERT_EQUAL(mlc_rt_pool_run_grain(p, n, grain, range_body, &j), 0);
  pthread_mutex_destroy(&j.mu);
  int64_t covered = 0;
  *aligned = 1;
  for (int i = 0; i < j.n; i++) {
    *aligned &= j.r[2 * i] % mult == 0 && j.r[2 * i + 1] % mult == 0;
    covered += j.r[2 * i + 1] - j.r[2 * i];
    for (int k = 0; k < i; k++) /* disjoint */
      CU_ASSERT(j.r[2 * i + 1] <= j.r[2 * k] || j.r[2 * k + 1] <= j.r[2 * i]);
  }
  CU_ASSERT_EQUAL(covered, n);
  return j.n;
}

/* A grain keeps each run of |grain| iterations in one chunk where there
** are enough runs for the threads; otherwise the loop is chunked as if it
** had none. */
static void test_pool_grain(void) {
  mlc_rt_pool *p = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_pool_create(2, &p), 0);
  int aligned;
  /* 16 panels of 17 rows (a 3x3 conv at 7x7): one chunk per panel */
  CU_ASSERT_EQUAL(grain_run(p, 16 * 17, 17, 17, &aligned), 16);
  CU_ASSERT(aligned);
  /* 64 runs of 3: at most 32 chunks, each of whole runs */
  CU_ASSERT_EQUAL(grain_run(p, 64 * 3, 3, 3, &aligned), 32);
  CU_ASSERT(aligned);
  /* without the grain the same loop's chunks cut the runs */
  CU_ASSERT_EQUAL(grain_run(p, 16 * 17, 1, 1, &aligned), 32);
  grain_run(p, 16 * 17, 1, 17, &aligned);
  CU_ASSERT(!aligned);
  /* too few runs for 2 threads (3 < 8): plain chunks */
  CU_ASSERT_EQUAL(grain_run(p, 3 * 17, 17, 1, &aligned), 32);
  /* a grain that does not divide the loop, or is not positive: plain */
  CU_ASSERT_EQUAL(grain_run(p, 16 * 17 + 1, 17, 1, &aligned), 32);
  CU_ASSERT_EQUAL(grain_run(p, 100, 0, 1, &aligned), 32);
  CU_ASSERT_EQUAL(grain_run(p, 100, -5, 1, &aligned), 32);
  mlc_rt_pool_destroy(p);
  /* no pool: one serial call */
  CU_ASSERT_EQUAL(grain_run(NULL, 16 * 17, 17, 1, &aligned), 1);
}

/* Idle workers sleep: an idle pool burns (almost) no CPU. */
static void test_pool_idle(void) {
  mlc_rt_pool *p = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_pool_create(4, &p), 0);
  sum_job j;
  job_init(&j, p);
  CU_ASSERT_EQUAL(mlc_rt_pool_run(p, 1000, sum_body, &j), 0);
  pthread_mutex_destroy(&j.mu);
  struct timespec a, b;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  usleep(200000);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  double cpu = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
  CU_ASSERT(cpu < 0.05);
  mlc_rt_pool_destroy(p);
}

typedef struct thread_arg {
  const mlc_model *m;
  int id;
  int ok;
} thread_arg;

static void *session_thread(void *arg) {
  thread_arg *a = arg;
  mlc_session_options opts = {a->id % 3 + 1};
  mlc_session *s = NULL;
  a->ok = mlc_session_create(a->m, &opts, &s) == MLC_RT_OK;
  static const int64_t batches[] = {1, 4, 7, 64, 4, 0, 33};
  for (int it = 0; a->ok && it < 30; it++)
    a->ok = run_and_check(s, batches[(it + a->id) % 7], it * 8 + a->id);
  mlc_session_free(s);
  return NULL;
}

/* 8 threads, each with its own session of one model, running at once. */
static void test_concurrent_sessions(void) {
  mlc_model *m = load_toy();
  if (!m) return;
  pthread_t th[8];
  thread_arg args[8];
  for (int i = 0; i < 8; i++) {
    args[i].m = m;
    args[i].id = i;
    args[i].ok = 0;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, session_thread, &args[i]), 0);
  }
  for (int i = 0; i < 8; i++) {
    pthread_join(th[i], NULL);
    CU_ASSERT(args[i].ok);
  }
  mlc_model_free(m);
}

/* ---- description validation --------------------------------------------- */

static int k_copy(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  if (nargs != 2 || codes[0] != MLC_ARG_TENSOR || codes[1] != MLC_ARG_TENSOR)
    return ctx->api->set_error(ctx, "k_copy: bad args");
  DLTensor *a = args[0], *b = args[1];
  int64_t n = 1;
  for (int i = 0; i < a->ndim; i++) n *= a->shape[i];
  memcpy(b->data, a->data, (size_t)n * 4);
  return 0;
}

static int k_silent_fail(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  return 3;
}

static const uint8_t v_weights[64] __attribute__((aligned(64))) = {0};
static const int64_t v_dims_n[] = {-1};
static const int64_t v_dims_8[] = {8};
static const int64_t v_dims_huge[] = {0, INT64_C(1) << 40, INT64_C(1) << 40};
static mlc_rt_tensor_desc v_tensors[3];
static mlc_rt_io_desc v_inputs[1], v_outputs[1];
static mlc_rt_arg_desc v_args[2];
static mlc_rt_step_desc v_steps[1];
static mlc_rt_extern_desc v_externs[1];
static const char *const v_syms[] = {"n"};

/* A valid one-step model: out = copy(in), in: float32[n]; tensor 2 a constant. */
static mlc_rt_model_desc valid_desc(void) {
  mlc_rt_tensor_desc t0 = {{kDLFloat, 32, 1}, 1, v_dims_n, MLC_RT_STORAGE_INPUT, 0};
  mlc_rt_tensor_desc t1 = {{kDLFloat, 32, 1}, 1, v_dims_n, MLC_RT_STORAGE_OUTPUT, 0};
  mlc_rt_tensor_desc t2 = {{kDLFloat, 32, 1}, 1, v_dims_8, MLC_RT_STORAGE_CONST, 32};
  v_tensors[0] = t0;
  v_tensors[1] = t1;
  v_tensors[2] = t2;
  v_inputs[0] = (mlc_rt_io_desc){"in", 0, 0, 0};
  v_outputs[0] = (mlc_rt_io_desc){"out", 1, 0, 0};
  v_args[0].kind = MLC_RT_ARG_TENSOR;
  v_args[0].value = 0;
  v_args[1].kind = MLC_RT_ARG_TENSOR;
  v_args[1].value = 1;
  v_steps[0].kind = MLC_RT_STEP_EXTERN;
  v_steps[0].name = "copy";
  v_steps[0].fn = NULL;
  v_steps[0].label = "Identity_0";
  v_steps[0].nargs = 2;
  v_steps[0].args = v_args;
  v_externs[0].name = "copy";
  v_externs[0].fn = k_copy;
  mlc_rt_model_desc d;
  memset(&d, 0, sizeof d);
  d.abi_version = MLC_RT_DESC_VERSION;
  d.kernel_abi = MLC_RT_ABI_VERSION;
  d.name = "v";
  d.nsyms = 1;
  d.sym_names = v_syms;
  d.ntensors = 3;
  d.tensors = v_tensors;
  d.ninputs = 1;
  d.inputs = v_inputs;
  d.noutputs = 1;
  d.outputs = v_outputs;
  d.nsteps = 1;
  d.steps = v_steps;
  d.nexterns = 1;
  d.externs = v_externs;
  d.weights = v_weights;
  d.weights_size = sizeof v_weights;
  return d;
}

/* Opens |d|; expects |want|, and an error containing |needle| if not OK. */
static int open_expect(const mlc_rt_model_desc *d, mlc_rt_status want, const char *needle) {
  mlc_rt_model *m = NULL;
  char err[512] = "";
  mlc_rt_status st = mlc_rt_model_open(d, &m, err, sizeof err);
  int ok = st == want && (st == MLC_RT_OK ? m != NULL : m == NULL);
  if (st != MLC_RT_OK && needle && !strstr(err, needle)) ok = 0;
  if (!ok) fprintf(stderr, "open_expect: status %d, error: %s\n", st, err);
  mlc_rt_model_close(m);
  return ok;
}

/* ---- inputs with a default ---------------------------------------------- */

/* out = copy(in), in: float32[8] whose default is the 8 floats at byte 32
** of the weights (1..8); the caller's arrays. */
static const float def_weights[32] __attribute__((aligned(64))) = {[8] = 1, 2, 3, 4, 5, 6, 7, 8};
static void def_desc(mlc_rt_model_desc *d, mlc_rt_tensor_desc *t, mlc_rt_io_desc *in, mlc_rt_io_desc *out,
                     mlc_rt_arg_desc *a, mlc_rt_step_desc *st, mlc_rt_extern_desc *ex) {
  DLDataType f32 = {kDLFloat, 32, 1};
  t[0] = (mlc_rt_tensor_desc){f32, 1, v_dims_8, MLC_RT_STORAGE_INPUT, 0};
  t[1] = (mlc_rt_tensor_desc){f32, 1, v_dims_8, MLC_RT_STORAGE_OUTPUT, 0};
  in[0] = (mlc_rt_io_desc){"in", 0, 1, 32};
  out[0] = (mlc_rt_io_desc){"out", 1, 0, 0};
  a[0] = (mlc_rt_arg_desc){MLC_RT_ARG_TENSOR, 0};
  a[1] = (mlc_rt_arg_desc){MLC_RT_ARG_TENSOR, 1};
  st[0] = (mlc_rt_step_desc){MLC_RT_STEP_EXTERN, "copy", NULL, "Identity_0", 2, a, -1};
  ex[0] = (mlc_rt_extern_desc){"copy", k_copy, 0, NULL};
  memset(d, 0, sizeof *d);
  d->abi_version = MLC_RT_DESC_VERSION;
  d->kernel_abi = MLC_RT_ABI_VERSION;
  d->name = "def";
  d->ntensors = 2;
  d->tensors = t;
  d->ninputs = 1;
  d->inputs = in;
  d->noutputs = 1;
  d->outputs = out;
  d->nsteps = 1;
  d->steps = st;
  d->nexterns = 1;
  d->externs = ex;
  d->weights = (const uint8_t *)def_weights;
  d->weights_size = sizeof def_weights;
}

/* Runs |s| and checks that its output is 8 floats, |first| + i. */
static void def_run_expect(mlc_rt_session *s, float first) {
  mlc_rt_status rs = mlc_rt_session_run(s);
  if (rs != MLC_RT_OK) fprintf(stderr, "run: %s\n", mlc_rt_session_last_error(s));
  CU_ASSERT_EQUAL_FATAL(rs, MLC_RT_OK);
  const DLTensor *o = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_session_get_output(s, 0, &o), MLC_RT_OK);
  int bad = 0;
  for (int i = 0; i < 8; i++) bad += ((const float *)o->data)[i] != first + (float)i;
  CU_ASSERT_EQUAL(bad, 0);
}

/* An input with a default runs without being set (its default, read where
** it is stored), with the caller's value once set, with the default again
** after a NULL set; a malformed default is a load error, and the default
** survives the blob. */
static void test_input_defaults(void) {
  mlc_rt_model_desc d;
  mlc_rt_tensor_desc t[2];
  mlc_rt_io_desc in[1], out[1];
  mlc_rt_arg_desc a[2];
  mlc_rt_step_desc st[1];
  mlc_rt_extern_desc ex[1];
  def_desc(&d, t, in, out, a, st, ex);
  mlc_rt_model *m = NULL;
  char err[512] = "";
  mlc_rt_status rs = mlc_rt_model_open(&d, &m, err, sizeof err);
  if (rs != MLC_RT_OK) fprintf(stderr, "open: %s\n", err);
  CU_ASSERT_EQUAL_FATAL(rs, MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_model_input_has_default(m, 0), 1);
  CU_ASSERT_EQUAL(mlc_rt_model_input_has_default(m, 1), 0);
  CU_ASSERT_EQUAL(mlc_rt_model_input_has_default(NULL, 0), 0);
  mlc_rt_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_session_create(m, 1, &s, err, sizeof err), MLC_RT_OK);
  def_run_expect(s, 1.0f); /* never set: the default */
  float x[8];
  for (int i = 0; i < 8; i++) x[i] = 10.0f + (float)i;
  int64_t shape[1] = {8}, wrong[1] = {7};
  DLTensor xt = f32_tensor(x, 1, shape);
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, &xt), MLC_RT_OK);
  def_run_expect(s, 10.0f); /* set: the caller's */
  def_run_expect(s, 10.0f); /* and it stays set */
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, NULL), MLC_RT_OK);
  def_run_expect(s, 1.0f); /* reset: the default again */
  CU_ASSERT_EQUAL(mlc_rt_session_set_input_by_name(s, "in", &xt), MLC_RT_OK);
  def_run_expect(s, 10.0f);
  CU_ASSERT_EQUAL(mlc_rt_session_set_input_by_name(s, "in", NULL), MLC_RT_OK);
  def_run_expect(s, 1.0f);
  /* the caller's value is validated as any input's; a failed set leaves
  ** the input unbound, not silently at its default */
  DLTensor bad = f32_tensor(x, 1, wrong);
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, &bad), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_rt_session_last_error(s), "dim 0 is 7, expected 8"));
  CU_ASSERT_EQUAL(mlc_rt_session_run(s), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_rt_session_last_error(s), "pass NULL for its default"));
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, NULL), MLC_RT_OK);
  def_run_expect(s, 1.0f);
  mlc_rt_session_free(s);
  mlc_rt_model_close(m);

  /* NULL is an error for an input without a default */
  def_desc(&d, t, in, out, a, st, ex);
  in[0].has_default = 0;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_model_open(&d, &m, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_model_input_has_default(m, 0), 0);
  CU_ASSERT_EQUAL_FATAL(mlc_rt_session_create(m, 1, &s, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_run(s), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_rt_session_last_error(s), "input \"in\" (0) is not set"));
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, NULL), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_rt_session_last_error(s), "NULL tensor"));
  mlc_rt_session_free(s);
  mlc_rt_model_close(m);

  /* malformed defaults: past the weights, negative, misaligned, with a
  ** symbolic dim; an output with a default */
  static const char *const syms[] = {"n"};
  def_desc(&d, t, in, out, a, st, ex);
  in[0].default_loc = 128 - 28; /* 32 bytes from 100: 4 past the end */
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "input 0 (\"in\"): default at offset 100 overruns the 128-byte weights"));
  in[0].default_loc = INT64_MAX;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "overruns"));
  in[0].default_loc = -64;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "default at offset -64 overruns"));
  in[0].default_loc = 34;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "default at offset 34 is not aligned to 4 bytes"));
  in[0].default_loc = 96; /* the last 32 bytes: fine */
  CU_ASSERT(open_expect(&d, MLC_RT_OK, NULL));
  d.weights = NULL;
  d.weights_size = 0;
  in[0].default_loc = 0;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "overruns the 0-byte weights"));
  def_desc(&d, t, in, out, a, st, ex);
  d.nsyms = 1;
  d.sym_names = syms;
  t[0].dims = v_dims_n;
  t[1].dims = v_dims_n;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "input 0 (\"in\") has a default but symbolic dim 0"));
  def_desc(&d, t, in, out, a, st, ex);
  out[0].has_default = 1;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "output 0 has a default"));

  /* through the blob: the default's offset travels (and its absence) */
  def_desc(&d, t, in, out, a, st, ex);
  uint8_t *enc = NULL;
  size_t len = 0;
  mlc_rt_model_desc *dd = NULL;
  mlc_kernel_fn fns[1] = {k_copy};
  CU_ASSERT_EQUAL_FATAL(mlc_rt_desc_encode(NULL, &d, 1, &enc, &len, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_EQUAL_FATAL(mlc_rt_desc_decode(NULL, enc, len, fns, 1, (const uint8_t *)def_weights, &dd, err,
                                           sizeof err), MLC_RT_OK);
  CU_ASSERT(dd->inputs[0].has_default == 1 && dd->inputs[0].default_loc == 32 && !dd->outputs[0].has_default);
  mlc_rt_desc_free(dd);
  /* a hostile offset in the blob decodes, and opening refuses it */
  uint32_t in_off;
  memcpy(&in_off, enc + 48 + 8 * 3 + 4, 4); /* the inputs table */
  uint64_t far = UINT64_C(1) << 40;
  memcpy(enc + in_off + 8, &far, 8);
  CU_ASSERT_EQUAL_FATAL(mlc_rt_desc_decode(NULL, enc, len, fns, 1, (const uint8_t *)def_weights, &dd, err,
                                           sizeof err), MLC_RT_OK);
  CU_ASSERT(open_expect(dd, MLC_RT_INVALID_ARGUMENT, "overruns"));
  mlc_rt_desc_free(dd);
  free(enc);
  in[0].has_default = 0;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_desc_encode(NULL, &d, 1, &enc, &len, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_EQUAL_FATAL(mlc_rt_desc_decode(NULL, enc, len, fns, 1, NULL, &dd, err, sizeof err), MLC_RT_OK);
  CU_ASSERT(dd->inputs[0].has_default == 0);
  mlc_rt_desc_free(dd);
  free(enc);
  /* the encoder refuses what it cannot write */
  in[0].has_default = 1;
  in[0].default_loc = -1;
  CU_ASSERT_EQUAL(mlc_rt_desc_encode(NULL, &d, 1, &enc, &len, err, sizeof err), MLC_RT_INVALID_ARGUMENT);
  in[0].default_loc = 32;
  out[0].has_default = 1;
  CU_ASSERT_EQUAL(mlc_rt_desc_encode(NULL, &d, 1, &enc, &len, err, sizeof err), MLC_RT_INVALID_ARGUMENT);
}

/* ---- run-time control flow steps ---------------------------------------- */

/* out = cond ? then (1.0) : else (2.0) as IF, ELSE, END_IF steps; the
** arrays are the caller's (|a| 10 args, |st| 3 steps). */
static const float cf_weights[32] __attribute__((aligned(64))) = {1.0f, [16] = 2.0f};
static const int64_t cf_dims1[] = {1};
static void cf_desc(mlc_rt_model_desc *d, mlc_rt_tensor_desc *t, mlc_rt_io_desc *in, mlc_rt_io_desc *out,
                    mlc_rt_arg_desc *a, mlc_rt_step_desc *st) {
  DLDataType b8 = {6, 8, 1}, f32 = {kDLFloat, 32, 1};
  t[0] = (mlc_rt_tensor_desc){b8, 0, NULL, MLC_RT_STORAGE_INPUT, 0};
  t[1] = (mlc_rt_tensor_desc){f32, 1, cf_dims1, MLC_RT_STORAGE_OUTPUT, 0};
  t[2] = (mlc_rt_tensor_desc){b8, 0, NULL, MLC_RT_STORAGE_ARENA, 0};
  t[3] = (mlc_rt_tensor_desc){b8, 0, NULL, MLC_RT_STORAGE_ARENA, 1};
  t[4] = (mlc_rt_tensor_desc){f32, 1, cf_dims1, MLC_RT_STORAGE_CONST, 0};
  t[5] = (mlc_rt_tensor_desc){f32, 1, cf_dims1, MLC_RT_STORAGE_CONST, 64};
  in[0] = (mlc_rt_io_desc){"cond", 0};
  out[0] = (mlc_rt_io_desc){"out", 1};
  static const mlc_rt_arg_desc args[10] = {
      {MLC_RT_ARG_TENSOR, 0}, {MLC_RT_ARG_TENSOR, 2}, {MLC_RT_ARG_IMM, 1},                         /* IF */
      {MLC_RT_ARG_TENSOR, 2}, {MLC_RT_ARG_TENSOR, 3}, {MLC_RT_ARG_IMM, 2},                         /* ELSE */
      {MLC_RT_ARG_TENSOR, 2}, {MLC_RT_ARG_TENSOR, 4}, {MLC_RT_ARG_TENSOR, 5}, {MLC_RT_ARG_TENSOR, 1}}; /* END_IF */
  memcpy(a, args, sizeof args);
  static const int32_t kinds[3] = {MLC_RT_STEP_IF, MLC_RT_STEP_ELSE, MLC_RT_STEP_END_IF};
  static const int32_t first[4] = {0, 3, 6, 10};
  for (int i = 0; i < 3; i++)
    st[i] = (mlc_rt_step_desc){kinds[i], "mlc.cf", NULL, "if_0", first[i + 1] - first[i], a + first[i], -1};
  memset(d, 0, sizeof *d);
  d->abi_version = MLC_RT_DESC_VERSION;
  d->kernel_abi = MLC_RT_ABI_VERSION;
  d->name = "cf";
  d->ntensors = 6;
  d->tensors = t;
  d->ninputs = 1;
  d->inputs = in;
  d->noutputs = 1;
  d->outputs = out;
  d->nstorages = 2;
  d->nsteps = 3;
  d->steps = st;
  d->weights = (const uint8_t *)cf_weights;
  d->weights_size = sizeof cf_weights;
}

/* The control flow steps run (both branches) and a malformed one is a load
** error naming the step, never a crash. */
static void test_desc_control_flow(void) {
  mlc_rt_model_desc d;
  mlc_rt_tensor_desc t[6];
  mlc_rt_io_desc in[1], out[1];
  mlc_rt_arg_desc a[10];
  mlc_rt_step_desc st[3];
  cf_desc(&d, t, in, out, a, st);
  mlc_rt_model *m = NULL;
  char err[512] = "";
  mlc_rt_status rs = mlc_rt_model_open(&d, &m, err, sizeof err);
  if (rs != MLC_RT_OK) fprintf(stderr, "open: %s\n", err);
  CU_ASSERT_EQUAL_FATAL(rs, MLC_RT_OK);
  mlc_rt_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_session_create(m, 1, &s, err, sizeof err), MLC_RT_OK);
  for (int c = 0; c < 2; c++) {
    unsigned char cond = (unsigned char)(c == 0);
    DLTensor x;
    memset(&x, 0, sizeof x);
    x.data = &cond;
    x.device.device_type = kDLCPU;
    x.dtype = (DLDataType){6, 8, 1};
    CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, &x), MLC_RT_OK);
    CU_ASSERT_EQUAL(mlc_rt_session_run(s), MLC_RT_OK);
    const DLTensor *o = NULL;
    CU_ASSERT_EQUAL(mlc_rt_session_get_output(s, 0, &o), MLC_RT_OK);
    CU_ASSERT(o && ((const float *)o->data)[0] == (c == 0 ? 1.0f : 2.0f));
  }
  mlc_rt_session_free(s);
  mlc_rt_model_close(m);
  /* a jump out of range, a jump to the wrong step, an arg of the wrong
  ** kind or type, a missing arg, a region left open, an ELSE without IF */
  cf_desc(&d, t, in, out, a, st);
  a[2].value = 7;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "step 0 (node \"if_0\"): malformed control flow step"));
  cf_desc(&d, t, in, out, a, st);
  a[5].value = 0;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "step 1 (node \"if_0\"): malformed control flow step"));
  cf_desc(&d, t, in, out, a, st);
  a[2].kind = MLC_RT_ARG_TENSOR;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "malformed control flow step"));
  cf_desc(&d, t, in, out, a, st);
  a[1].value = 4; /* taken: a float constant */
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "malformed control flow step"));
  cf_desc(&d, t, in, out, a, st);
  st[2].nargs = 3;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "step 2 (node \"if_0\"): malformed control flow step"));
  cf_desc(&d, t, in, out, a, st);
  a[9].value = 0; /* END_IF writing the input */
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "malformed control flow step"));
  cf_desc(&d, t, in, out, a, st);
  d.nsteps = 2;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "malformed control flow step"));
  cf_desc(&d, t, in, out, a, st);
  d.nsteps = 1;
  a[2].value = 0;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "malformed control flow step"));
  cf_desc(&d, t, in, out, a, st);
  d.steps = st + 1;
  d.nsteps = 2;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "malformed control flow step"));
  cf_desc(&d, t, in, out, a, st);
  st[0].kind = MLC_RT_STEP_LOOP;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "malformed control flow step"));
}

static void test_desc_validation(void) {
  mlc_rt_model_desc d = valid_desc();
  CU_ASSERT(open_expect(&d, MLC_RT_OK, NULL));
  CU_ASSERT(open_expect(NULL, MLC_RT_INVALID_ARGUMENT, "NULL"));

  d = valid_desc();
  d.abi_version = MLC_RT_DESC_VERSION + 1;
  CU_ASSERT(open_expect(&d, MLC_RT_ABI_MISMATCH, "version"));
  d = valid_desc();
  d.kernel_abi = 0;
  CU_ASSERT(open_expect(&d, MLC_RT_ABI_MISMATCH, "kernel ABI"));
  d = valid_desc();
  v_steps[0].name = "nope";
  CU_ASSERT(open_expect(&d, MLC_RT_NOT_FOUND,
                        "step 0 (node \"Identity_0\"): external function \"nope\" is not registered"));
  d = valid_desc();
  v_steps[0].kind = MLC_RT_STEP_KERNEL;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "has no function"));
  d = valid_desc();
  v_steps[0].kind = 9;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "unknown step kind"));
  d = valid_desc();
  v_args[1].value = 3;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "argument 1"));
  d = valid_desc();
  v_args[1].kind = MLC_RT_ARG_SYM;
  v_args[1].value = 1;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "argument 1"));
  d = valid_desc();
  v_tensors[1].storage = MLC_RT_STORAGE_ARENA;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "output 0"));
  d = valid_desc();
  v_tensors[2].storage = MLC_RT_STORAGE_ARENA;
  v_tensors[2].loc = 0;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "storage id 0 out of range"));
  d = valid_desc();
  v_tensors[2].loc = 40; /* 40 + 32 > 64 */
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "overruns"));
  d = valid_desc();
  v_tensors[2].dims = v_dims_n;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "symbolic"));
  d = valid_desc();
  v_tensors[2].ndim = 3; /* (0, 2^40, 2^40): empty, but its strides overflow */
  v_tensors[2].dims = v_dims_huge;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "tensor 2: the product of its dims overflows int64"));
  d = valid_desc();
  v_tensors[2].storage = 7;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "unknown storage"));
  d = valid_desc();
  v_tensors[2].dtype.bits = 0;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "invalid dtype"));
  d = valid_desc();
  v_tensors[2].ndim = MLC_RT_MAX_NDIM + 1;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "invalid rank"));
  d = valid_desc();
  d.nsyms = 0; /* dims now name a symbol that does not exist */
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "symbol 0 out of range"));
  d = valid_desc();
  v_tensors[0].dims = v_dims_8; /* "n" now only occurs in the output */
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "symbolic dim \"n\" is not a dim of any input"));
  d = valid_desc();
  d.weights = v_weights + 1;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "aligned"));
  d = valid_desc();
  d.ntensors = -1;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "malformed"));
  d = valid_desc();
  v_inputs[0].tensor = 1;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "input 0"));
  d = valid_desc();
  v_inputs[0].name = NULL;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "input 0"));
  mlc_rt_model *m = (mlc_rt_model *)1;
  CU_ASSERT_EQUAL(mlc_rt_model_open(&d, NULL, NULL, 0), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(mlc_rt_model_open(NULL, &m, NULL, 0), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NULL(m);
}

/* ---- sizes that overflow ----------------------------------------------------- */

/* Fills output args[2] (float32, any shape) with 1s. */
static int k_fill(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  (void)codes;
  if (nargs != 3) return ctx->api->set_error(ctx, "k_fill: bad args");
  DLTensor *o = args[2];
  int64_t n = 1;
  for (int i = 0; i < o->ndim; i++) n *= o->shape[i];
  for (int64_t i = 0; i < n; i++) ((float *)o->data)[i] = 1;
  return 0;
}

static const int64_t o_dims_n[] = {-1}, o_dims_m[] = {-2}, o_dims_nm[] = {-1, -2},
                     o_dims_abc[] = {-3, -4, -5};
static const char *const o_syms[] = {"n", "m", "a", "b", "c"};

/* out[n, m] = fill(x[n], y[m]); a third input z[a, b, c] is only checked. */
static void outer_desc(mlc_rt_model_desc *d, mlc_rt_tensor_desc *t, mlc_rt_io_desc *in,
                       mlc_rt_io_desc *out, mlc_rt_arg_desc *args, mlc_rt_step_desc *st,
                       mlc_rt_extern_desc *ex) {
  const DLDataType f = {kDLFloat, 32, 1};
  t[0] = (mlc_rt_tensor_desc){f, 1, o_dims_n, MLC_RT_STORAGE_INPUT, 0};
  t[1] = (mlc_rt_tensor_desc){f, 1, o_dims_m, MLC_RT_STORAGE_INPUT, 1};
  t[2] = (mlc_rt_tensor_desc){f, 2, o_dims_nm, MLC_RT_STORAGE_OUTPUT, 0};
  t[3] = (mlc_rt_tensor_desc){f, 3, o_dims_abc, MLC_RT_STORAGE_INPUT, 2};
  static const char *const names[] = {"x", "y", "z"};
  for (int i = 0; i < 3; i++) in[i] = (mlc_rt_io_desc){names[i], i == 2 ? 3 : i, 0, 0};
  out[0] = (mlc_rt_io_desc){"out", 2, 0, 0};
  for (int i = 0; i < 3; i++) args[i].kind = MLC_RT_ARG_TENSOR, args[i].value = i;
  memset(st, 0, sizeof *st);
  st->kind = MLC_RT_STEP_EXTERN;
  st->name = "fill";
  st->label = "Outer_0";
  st->nargs = 3;
  st->args = args;
  memset(ex, 0, sizeof *ex);
  ex->name = "fill";
  ex->fn = k_fill;
  memset(d, 0, sizeof *d);
  d->abi_version = MLC_RT_DESC_VERSION;
  d->kernel_abi = MLC_RT_ABI_VERSION;
  d->name = "outer";
  d->nsyms = 5;
  d->sym_names = o_syms;
  d->ntensors = 4;
  d->tensors = t;
  d->ninputs = 3;
  d->inputs = in;
  d->noutputs = 1;
  d->outputs = out;
  d->nsteps = 1;
  d->steps = st;
  d->nexterns = 1;
  d->externs = ex;
  d->weights = v_weights;
  d->weights_size = sizeof v_weights;
}

/* An error of |s| that contains |want|. */
static int err_is(const mlc_rt_session *s, const char *want) {
  const char *e = mlc_rt_session_last_error(s);
  if (!strstr(e, want)) fprintf(stderr, "unexpected error: %s\n", e);
  return strstr(e, want) != NULL;
}

/*
** Input shapes whose element count, a stride or bytes overflow int64 are
** refused by set_input; a tensor whose dims come from several inputs and
** whose size overflows is a run error naming the step that writes it.
*/
static void test_size_overflow(void) {
  mlc_rt_model_desc d;
  mlc_rt_tensor_desc t[4];
  mlc_rt_io_desc in[3], out[1];
  mlc_rt_arg_desc args[3];
  mlc_rt_step_desc st[1];
  mlc_rt_extern_desc ex[1];
  outer_desc(&d, t, in, out, args, st, ex);
  mlc_rt_model *m = NULL;
  char err[256];
  CU_ASSERT_EQUAL_FATAL(mlc_rt_model_open(&d, &m, err, sizeof err), MLC_RT_OK);
  mlc_rt_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_session_create(m, 1, &s, err, sizeof err), MLC_RT_OK);
  static float buf[16];
  int64_t xs[1] = {2}, ys[1] = {3}, zs[3] = {1, 1, 1};
  DLTensor x = f32_tensor(buf, 1, xs), y = f32_tensor(buf, 1, ys), z = f32_tensor(buf, 3, zs);
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, &x), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 1, &y), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 2, &z), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_run(s), MLC_RT_OK);
  const DLTensor *o = NULL;
  CU_ASSERT_EQUAL(mlc_rt_session_get_output(s, 0, &o), MLC_RT_OK);
  CU_ASSERT(o && o->shape[0] == 2 && o->shape[1] == 3 && ((const float *)o->data)[5] == 1);

  /* (2^40, 2^40, 1): 2^80 elements */
  zs[0] = zs[1] = INT64_C(1) << 40;
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 2, &z), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT(err_is(s, "input \"z\" (2): shape (1099511627776, 1099511627776, 1) is too large"));
  /* (2^40, 2^40, 0) is empty, but its strides overflow int64 */
  zs[2] = 0;
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 2, &z), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT(err_is(s, "input \"z\" (2): shape (1099511627776, 1099511627776, 0) is too large"));
  /* 2^62 float32 elements fit in int64, their bytes do not */
  zs[0] = INT64_C(1) << 62, zs[1] = zs[2] = 1;
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 2, &z), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT(err_is(s, "is too large"));
  zs[0] = 0, zs[1] = INT64_MAX / 4, zs[2] = 0; /* empty, strides fit */
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 2, &z), MLC_RT_OK);

  /* x and y fit, out (2^33, 2^33) does not: the step that writes it fails */
  xs[0] = ys[0] = INT64_C(1) << 33;
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, &x), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 1, &y), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_run(s), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT(err_is(s, "step 0 (node \"Outer_0\"): tensor 2 of shape (8589934592, 8589934592) is too "
                      "large for the input shapes"));
  CU_ASSERT_NOT_EQUAL(mlc_rt_session_get_output(s, 0, &o), MLC_RT_OK);
  /* and the session runs again */
  xs[0] = 4, ys[0] = 2;
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, &x), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 1, &y), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_run(s), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_get_output(s, 0, &o), MLC_RT_OK);
  CU_ASSERT(o && o->shape[0] == 4 && o->shape[1] == 2 && ((const float *)o->data)[7] == 1);
  mlc_rt_session_free(s);
  mlc_rt_model_close(m);

  /* the helper itself */
  uint64_t n = 0, b = 0;
  int32_t bad = -1;
  const DLDataType f = {kDLFloat, 32, 1}, u8 = {kDLUInt, 8, 1};
  CU_ASSERT(mlc_rt_shape_size(f, (int64_t[]){2, 3}, 2, &n, &b, NULL) == 0 && n == 6 && b == 24);
  CU_ASSERT(mlc_rt_shape_size(f, (int64_t[]){4, -1}, 2, &n, &b, &bad) == -1 && bad == 1);
  CU_ASSERT(mlc_rt_shape_size(u8, (int64_t[]){INT64_C(1) << 60}, 1, &n, &b, NULL) == 0 && b == UINT64_C(1) << 60);
  CU_ASSERT(mlc_rt_shape_size(f, (int64_t[]){INT64_MAX}, 1, &n, &b, NULL) == -2);
  CU_ASSERT(mlc_rt_shape_size(u8, (int64_t[]){INT64_C(1) << 62, 2}, 2, &n, &b, NULL) == -2);
  CU_ASSERT(mlc_rt_shape_size(u8, (int64_t[]){0, INT64_C(1) << 32, INT64_C(1) << 31}, 3, &n, &b, NULL) == -2);
  CU_ASSERT(mlc_rt_shape_size(u8, (int64_t[]){0, INT64_MAX}, 2, &n, &b, NULL) == 0 && n == 0 && b == 0);
}

/* A kernel context that keeps the last error message. */
static char sf_msg[512];
static int sf_set_error(mlc_rt_ctx *ctx, const char *msg) {
  (void)ctx;
  snprintf(sf_msg, sizeof sf_msg, "%s", msg);
  return -1;
}

/* Calls the built-in |name| with |n| args; 0 ok, else the error is in sf_msg. */
static int call_builtin(const char *name, void **args, int32_t n) {
  static const mlc_rt_api api = {NULL, NULL, NULL, sf_set_error, NULL};
  mlc_rt_ctx ctx = {&api};
  int32_t codes[8] = {0};
  mlc_kernel_fn fn = mlc_rt_builtin_find(name);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fn);
  sf_msg[0] = 0;
  return fn(args, codes, n, &ctx);
}

static DLTensor i64_tensor(int64_t *data, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype = (DLDataType){kDLInt, 64, 1};
  t.shape = shape;
  return t;
}

/* Shape functions whose values would overflow int64 are errors. */
static void test_shapefn_overflow(void) {
  static float xd[10];
  int64_t xs[1] = {10}, two[1] = {2}, one[1] = {1}, three[1] = {3};
  DLTensor x = f32_tensor(xd, 1, xs);
  /* Pad: begin and end crop 2^63 - 2 each (the sum wraps to a positive dim) */
  int64_t pads[2], res[3];
  DLTensor tp = i64_tensor(pads, two), tr = i64_tensor(res, three);
  void *pa[3] = {&x, &tp, &tr};
  pads[0] = pads[1] = -(INT64_MAX - 1);
  CU_ASSERT_NOT_EQUAL(call_builtin("mlc.pad_params", pa, 3), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(sf_msg, "crop more than the (10,) input has"));
  /* a crop of 2^63 - 2 and a pad of 2^63 - 2: input indices overflow */
  pads[1] = INT64_MAX - 1;
  CU_ASSERT_NOT_EQUAL(call_builtin("mlc.pad_params", pa, 3), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(sf_msg, "overflow int64"));
  pads[0] = 0, pads[1] = INT64_MAX - 10; /* 10 + (2^63 - 11): fits */
  CU_ASSERT_EQUAL(call_builtin("mlc.pad_params", pa, 3), 0);
  CU_ASSERT(res[0] == INT64_MAX && res[1] == 0 && res[2] == INT64_MAX - 10);
  pads[1] = INT64_MAX - 9;
  CU_ASSERT_NOT_EQUAL(call_builtin("mlc.pad_params", pa, 3), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(sf_msg, "overflow int64"));
  pads[0] = -3, pads[1] = 2;
  CU_ASSERT_EQUAL(call_builtin("mlc.pad_params", pa, 3), 0);
  CU_ASSERT(res[0] == 9 && res[1] == -3 && res[2] == 2);

  /* Slice with a step near 2^63: one element, no wrapped extent */
  int64_t st[1] = {0}, en[1] = {10}, ax[1] = {0}, sp[1] = {INT64_MAX};
  DLTensor ts = i64_tensor(st, one), te = i64_tensor(en, one), ta = i64_tensor(ax, one),
           tsp = i64_tensor(sp, one);
  void *sa[6] = {&x, &ts, &te, &ta, &tsp, &tr};
  CU_ASSERT_EQUAL(call_builtin("mlc.slice_params", sa, 6), 0);
  CU_ASSERT(res[0] == 1 && res[1] == 0 && res[2] == INT64_MAX);
  st[0] = 3, sp[0] = INT64_MAX - 1;
  CU_ASSERT_EQUAL(call_builtin("mlc.slice_params", sa, 6), 0);
  CU_ASSERT(res[0] == 1 && res[1] == 3);
  st[0] = 1, sp[0] = 4; /* 1, 5, 9 */
  CU_ASSERT_EQUAL(call_builtin("mlc.slice_params", sa, 6), 0);
  CU_ASSERT(res[0] == 3 && res[1] == 1 && res[2] == 4);

  /* Split sizes whose sum overflows */
  int64_t split[2] = {INT64_MAX, 1}, axis = 0, index = 0;
  DLTensor tsplit = i64_tensor(split, two);
  void *spa[5] = {&x, &tsplit, &tr, &axis, &index};
  CU_ASSERT_NOT_EQUAL(call_builtin("mlc.split_params", spa, 5), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(sf_msg, "overflows int64"));
}

/* The runtime without the loader: a session on an in-process description. */
/* ---- derived symbols ------------------------------------------------------------ */

/* out = fill(in, in) where in: float32[n] and out: float32[(n-3)//2], with
** check(n-3) the requirement n >= 3 (symbols 1..4 derived). */
static const char *const ds_names[] = {"n", "n-3", "check(n-3)", "(n-3)//2", "max(n, (n-3)//2)"};
static mlc_rt_sym_def ds_defs[5];
static const int64_t ds_dims_in[] = {-1}, ds_dims_out[] = {-4}, ds_dims_both[] = {-1, -4};
static mlc_rt_tensor_desc ds_tensors[2];
static mlc_rt_io_desc ds_in[1], ds_out[1];
static mlc_rt_arg_desc ds_args[3];
static mlc_rt_step_desc ds_steps[1];
static mlc_rt_extern_desc ds_ext[1];

static mlc_rt_model_desc derived_desc(void) {
  mlc_rt_sym_def defs[5] = {{MLC_RT_SYM_FREE, 0, 0, 0, NULL},
                            {MLC_RT_SYM_ADD, 0, 0, -3, NULL},
                            {MLC_RT_SYM_CHECK, 0, 1, 0, "node \"c\" (Conv): the input is too short"},
                            {MLC_RT_SYM_FLOORDIV, 0, 1, 2, NULL},
                            {MLC_RT_SYM_MAX, 1, 0, 3, NULL}};
  memcpy(ds_defs, defs, sizeof defs);
  mlc_rt_tensor_desc t0 = {{kDLFloat, 32, 1}, 1, ds_dims_in, MLC_RT_STORAGE_INPUT, 0};
  mlc_rt_tensor_desc t1 = {{kDLFloat, 32, 1}, 1, ds_dims_out, MLC_RT_STORAGE_OUTPUT, 0};
  ds_tensors[0] = t0;
  ds_tensors[1] = t1;
  ds_in[0].name = "in";
  ds_in[0].tensor = 0;
  ds_out[0].name = "out";
  ds_out[0].tensor = 1;
  for (int i = 0; i < 3; i++) {
    ds_args[i].kind = MLC_RT_ARG_TENSOR;
    ds_args[i].value = i < 2 ? 0 : 1;
  }
  mlc_rt_step_desc st = {MLC_RT_STEP_EXTERN, "fill", NULL, "c", 3, ds_args, -1};
  ds_steps[0] = st;
  ds_ext[0].name = "fill";
  ds_ext[0].fn = k_fill;
  ds_ext[0].kernel = 0;
  mlc_rt_model_desc d;
  memset(&d, 0, sizeof d);
  d.abi_version = MLC_RT_DESC_VERSION;
  d.kernel_abi = MLC_RT_ABI_VERSION;
  d.name = "derived";
  d.nsyms = 5;
  d.sym_names = ds_names;
  d.sym_defs = ds_defs;
  d.ntensors = 2;
  d.tensors = ds_tensors;
  d.ninputs = 1;
  d.inputs = ds_in;
  d.noutputs = 1;
  d.outputs = ds_out;
  d.nsteps = 1;
  d.steps = ds_steps;
  d.nexterns = 1;
  d.externs = ds_ext;
  return d;
}

/* Derived symbols: evaluated from the input shapes for every run, their
** requirement failing the run with its text; malformed ones refused at load;
** and the description's blob keeps them. */
static void test_derived_symbols(void) {
  mlc_rt_model_desc d = derived_desc();
  mlc_rt_model *m = NULL;
  mlc_rt_session *s = NULL;
  char err[256];
  CU_ASSERT_EQUAL_FATAL(mlc_rt_model_open(&d, &m, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_EQUAL_FATAL(mlc_rt_session_create(m, 1, &s, err, sizeof err), MLC_RT_OK);
  float in[40] = {0};
  int64_t ns[3] = {10, 40, 3}, want[3] = {3, 18, 0};
  for (int i = 0; i < 3; i++) {
    int64_t shape[1] = {ns[i]};
    DLTensor t = f32_tensor(in, 1, shape);
    const DLTensor *o = NULL;
    CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, &t), MLC_RT_OK);
    CU_ASSERT_EQUAL(mlc_rt_session_run(s), MLC_RT_OK);
    CU_ASSERT_EQUAL(mlc_rt_session_get_output(s, 0, &o), MLC_RT_OK);
    CU_ASSERT(o && o->ndim == 1 && o->shape[0] == want[i]);
    if (o && o->shape[0] > 0) CU_ASSERT(((const float *)o->data)[o->shape[0] - 1] == 1);
  }
  int64_t short_shape[1] = {2};
  DLTensor t = f32_tensor(in, 1, short_shape);
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, &t), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_run(s), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_rt_session_last_error(s), "node \"c\" (Conv): the input is too short"));
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_rt_session_last_error(s), "\"n-3\" is -1"));
  mlc_rt_session_free(s);
  mlc_rt_model_close(m);

  /* encoded and decoded: the same definitions */
  uint8_t *blob = NULL;
  size_t size = 0;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_desc_encode(NULL, &d, 1, &blob, &size, err, sizeof err), MLC_RT_OK);
  mlc_rt_model_desc *back = NULL;
  CU_ASSERT_EQUAL(mlc_rt_desc_decode(NULL, blob, size, NULL, 1, NULL, &back, err, sizeof err), MLC_RT_OK);
  if (back) {
    CU_ASSERT_EQUAL(back->nsyms, 5);
    for (int k = 0; k < 5; k++) {
      CU_ASSERT_EQUAL(back->sym_defs[k].op, ds_defs[k].op);
      CU_ASSERT_EQUAL(back->sym_defs[k].a, ds_defs[k].a);
      CU_ASSERT_EQUAL(back->sym_defs[k].b, ds_defs[k].b);
      CU_ASSERT_EQUAL(back->sym_defs[k].b_sym, ds_defs[k].b_sym);
    }
    CU_ASSERT_STRING_EQUAL(back->sym_defs[2].where, ds_defs[2].where);
    CU_ASSERT_PTR_NULL(back->sym_defs[1].where);
  }
  mlc_rt_desc_free(back);
  free(blob);

  d = derived_desc();
  ds_defs[3].a = 3; /* reads itself */
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "derived symbolic dim 3 (\"(n-3)//2\") is malformed"));
  d = derived_desc();
  ds_defs[3].b = 0; /* a division by 0 */
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "malformed"));
  d = derived_desc();
  ds_defs[1].op = 99;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "malformed"));
  d = derived_desc();
  ds_tensors[0].ndim = 2; /* an input's dim that is derived */
  ds_tensors[0].dims = ds_dims_both;
  CU_ASSERT(open_expect(&d, MLC_RT_INVALID_ARGUMENT, "derived symbolic dim \"(n-3)//2\" is also bound"));
}

static void test_inprocess_session(void) {
  mlc_rt_model_desc d = valid_desc();
  mlc_rt_model *m = NULL;
  char err[256];
  CU_ASSERT_EQUAL_FATAL(mlc_rt_model_open(&d, &m, err, sizeof err), MLC_RT_OK);
  mlc_rt_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_session_create(m, 2, &s, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_num_threads(s), 2);
  CU_ASSERT_PTR_NOT_NULL(mlc_rt_session_ctx(s));
  float in[5] = {1, 2, 3, 4, 5};
  int64_t shape[1] = {5};
  DLTensor t = f32_tensor(in, 1, shape);
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, &t), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_run(s), MLC_RT_OK);
  const DLTensor *o = NULL;
  CU_ASSERT_EQUAL(mlc_rt_session_get_output(s, 0, &o), MLC_RT_OK);
  CU_ASSERT(o && o->shape[0] == 5 && memcmp(o->data, in, sizeof in) == 0);
  /* Workspaces: aligned, and a freed block is reused by the next request it fits. */
  mlc_rt_ctx *ctx = mlc_rt_session_ctx(s);
  void *w1 = ctx->api->workspace_alloc(ctx, 1000);
  void *w2 = ctx->api->workspace_alloc(ctx, 0);
  CU_ASSERT(w1 && w2 && w1 != w2 && (uintptr_t)w1 % 64 == 0 && (uintptr_t)w2 % 64 == 0);
  memset(w1, 1, 1000);
  ctx->api->workspace_free(ctx, w1);
  CU_ASSERT_PTR_EQUAL(ctx->api->workspace_alloc(ctx, 900), w1);
  void *w3 = ctx->api->workspace_alloc(ctx, 5000);
  CU_ASSERT(w3 && w3 != w1);
  ctx->api->workspace_free(ctx, w3);
  ctx->api->workspace_free(ctx, w1);
  ctx->api->workspace_free(ctx, NULL);
  void *many[20];
  for (int i = 0; i < 20; i++) many[i] = ctx->api->workspace_alloc(ctx, 64);
  for (int i = 0; i < 20; i++) ctx->api->workspace_free(ctx, many[i]);
  ctx->api->workspace_free(ctx, w2);
  mlc_rt_session_free(s);
  mlc_rt_model_close(m);

  /* A kernel that fails without a message still gets a clear error. */
  d = valid_desc();
  v_externs[0].fn = k_silent_fail;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_model_open(&d, &m, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_EQUAL_FATAL(mlc_rt_session_create(m, 1, &s, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, &t), MLC_RT_OK);
  CU_ASSERT_EQUAL(mlc_rt_session_run(s), MLC_RT_RUNTIME_ERROR);
  CU_ASSERT_STRING_EQUAL(mlc_rt_session_last_error(s),
                         "step 0 (node \"Identity_0\"): copy failed (returned 3)");
  mlc_rt_session_free(s);
  mlc_rt_model_close(m);
  v_externs[0].fn = k_copy;
}

static void test_dtype_str(void) {
  char b[32];
  DLDataType t = {kDLFloat, 16, 1};
  mlc_rt_dtype_str(t, b, sizeof b);
  CU_ASSERT_STRING_EQUAL(b, "float16");
  t.code = kDLBfloat;
  mlc_rt_dtype_str(t, b, sizeof b);
  CU_ASSERT_STRING_EQUAL(b, "bfloat16");
  t.code = kDLUInt;
  t.bits = 8;
  t.lanes = 4;
  mlc_rt_dtype_str(t, b, sizeof b);
  CU_ASSERT_STRING_EQUAL(b, "uint8x4");
  t.code = 42;
  t.lanes = 1;
  mlc_rt_dtype_str(t, b, sizeof b);
  CU_ASSERT_STRING_EQUAL(b, "code42_8");
  uint64_t n;
  DLDataType i4 = {kDLInt, 4, 1};
  CU_ASSERT(mlc_rt_nbytes(i4, 3, &n) == 0 && n == 2);
  DLDataType f = {kDLFloat, 32, 1};
  CU_ASSERT(mlc_rt_nbytes(f, UINT64_MAX / 4, &n) != 0);
}

/* The blob decoder on any bytes: every truncation and byte flip of the
** toy's blob is an error or a description, never a crash; a round trip
** keeps every string exactly. */
static void test_blob_robust(void) {
  mlc_model *m = load_toy();
  if (!m) return;
  const mlc_rt_entry *e = mlc_rt_model_entry_of(m);
  uint32_t n;
  memcpy(&n, e->blob + 20, sizeof n);
  uint8_t *blob = malloc(n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(blob);
  memcpy(blob, e->blob, n);
  mlc_model_free(m);
  char err[512];
  mlc_rt_model_desc *d = NULL;
  int bad = 0;
  for (uint32_t len = 0; len < n; len++) {
    uint8_t *cut = malloc(len ? len : 1); /* exactly |len| bytes, for ASan */
    memcpy(cut, blob, len);
    if (mlc_rt_desc_decode(NULL, cut, len, NULL, 0, NULL, &d, err, sizeof err) == MLC_RT_OK || d) bad++;
    free(cut);
  }
  CU_ASSERT_EQUAL(bad, 0);
  for (uint32_t i = 0; i < n; i++)
    for (int bit = 0; bit < 8; bit++) {
      blob[i] ^= (uint8_t)(1u << bit);
      if (mlc_rt_desc_decode(NULL, blob, n, NULL, 0, NULL, &d, err, sizeof err) == MLC_RT_OK) {
        /* still well-formed: every table is usable */
        for (int32_t k = 0; k < d->ninputs; k++) bad += (size_t)d->inputs[k].tensor >= (size_t)d->ntensors;
        for (int32_t k = 0; k < d->nsteps; k++) bad += strlen(d->steps[k].label) > n;
        mlc_rt_desc_free(d);
      } else if (d || !err[0]) {
        bad++;
      }
      d = NULL;
      blob[i] ^= (uint8_t)(1u << bit);
    }
  CU_ASSERT_EQUAL(bad, 0);
  free(blob);

  /* Round trip of hostile strings, and the encoder's own checks. */
  mlc_rt_model_desc v = valid_desc();
  static const char *const syms[] = {"n */ \"\n\xff\x01"};
  v.sym_names = syms;
  v.name = "model \"*/ /*\" \xfe";
  v_inputs[0].name = "in\nput ?\?/ $(x)";
  v_externs[0].kernel = 0;
  uint8_t *enc = NULL;
  size_t len = 0;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_desc_encode(NULL, &v, 1, &enc, &len, err, sizeof err), MLC_RT_OK);
  mlc_kernel_fn fns[1] = {k_copy};
  CU_ASSERT_EQUAL_FATAL(mlc_rt_desc_decode(NULL, enc, len, fns, 1, v_weights, &d, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_STRING_EQUAL(d->name, v.name);
  CU_ASSERT_STRING_EQUAL(d->sym_names[0], syms[0]);
  CU_ASSERT_STRING_EQUAL(d->inputs[0].name, v_inputs[0].name);
  CU_ASSERT(d->externs[0].fn == k_copy && d->weights == v_weights && d->nsteps == 1);
  CU_ASSERT(open_expect(d, MLC_RT_OK, NULL));
  mlc_rt_desc_free(d);
  CU_ASSERT_EQUAL(mlc_rt_desc_decode(NULL, enc, len, fns, 2, NULL, &d, err, sizeof err),
                  MLC_RT_INVALID_ARGUMENT);
  enc[8] = 2; /* another version */
  CU_ASSERT_EQUAL(mlc_rt_desc_decode(NULL, enc, len, NULL, 0, NULL, &d, err, sizeof err), MLC_RT_ABI_MISMATCH);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "version 2"));
  free(enc);
  v_externs[0].kernel = 1; /* out of range */
  CU_ASSERT_EQUAL(mlc_rt_desc_encode(NULL, &v, 1, &enc, &len, err, sizeof err), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NULL(enc);
  v_externs[0].kernel = 0;

  /* A plugin's function: its file name travels, the decoder lists the
  ** plugin once; opening looks for it and fails naming it. */
  v_externs[0].kernel = -1;
  v_externs[0].plugin = "libnosuchplugin.so";
  CU_ASSERT_EQUAL_FATAL(mlc_rt_desc_encode(NULL, &v, 1, &enc, &len, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_EQUAL_FATAL(mlc_rt_desc_decode(NULL, enc, len, fns, 1, v_weights, &d, err, sizeof err), MLC_RT_OK);
  CU_ASSERT_EQUAL(d->nplugins, 1);
  CU_ASSERT_STRING_EQUAL(d->plugins[0], "libnosuchplugin.so");
  CU_ASSERT_STRING_EQUAL(d->externs[0].plugin, "libnosuchplugin.so");
  CU_ASSERT_EQUAL(d->externs[0].kernel, -1);
  mlc_rt_model *pm = NULL;
  CU_ASSERT_EQUAL(mlc_rt_model_open(d, &pm, err, sizeof err), MLC_RT_NOT_FOUND);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "libnosuchplugin.so"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, v_externs[0].name));
  mlc_rt_desc_free(d);
  /* a path is refused by the encoder and, written by hand, by the decoder */
  free(enc);
  v_externs[0].plugin = "../libx.so";
  CU_ASSERT_EQUAL(mlc_rt_desc_encode(NULL, &v, 1, &enc, &len, err, sizeof err), MLC_RT_INVALID_ARGUMENT);
  v_externs[0].plugin = "libx_so_xxx";
  CU_ASSERT_EQUAL_FATAL(mlc_rt_desc_encode(NULL, &v, 1, &enc, &len, err, sizeof err), MLC_RT_OK);
  uint8_t *hit = memmem(enc, len, "libx_so_xxx", 11);
  CU_ASSERT_PTR_NOT_NULL_FATAL(hit);
  hit[4] = '/';
  CU_ASSERT_EQUAL(mlc_rt_desc_decode(NULL, enc, len, fns, 1, v_weights, &d, err, sizeof err), MLC_RT_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "plain file name"));
  free(enc);
  v_externs[0].plugin = NULL;
  v_externs[0].kernel = 0;
}

/* ---- registration ------------------------------------------------------- */

static void register_loader(void) {
  static const CU_TestInfo tests[] = {
      {"load_and_info", test_load_and_info},
      {"load_errors", test_load_errors},
      {"null_handles", test_null_handles},
      {"bad_handles", test_bad_handles},
      {"truncated_so", test_truncated_so},
      {"flipped_so", test_flipped_so},
      {"two_models_and_direct_entry", test_two_models_and_direct_entry},
      {NULL, NULL}};
  mlc_test_add_suite("loader", tests);
}

/* Whether k_inc's last call found a and b at one address. */
static int inc_same_memory;

/* b[i] = a[i] + 1 where a has an element i, else 1: args a, b (float32). */
static int k_inc(void **args, const int32_t *codes, int32_t nargs, mlc_rt_ctx *ctx) {
  (void)codes;
  if (nargs != 2) return ctx->api->set_error(ctx, "k_inc: bad args");
  const DLTensor *a = args[0], *b = args[1];
  inc_same_memory = a->data == b->data;
  for (int64_t i = 0; i < b->shape[0]; i++)
    ((float *)b->data)[i] = (i < a->shape[0] ? ((const float *)a->data)[i] : 0) + 1;
  return 0;
}

/*
** An output written in place of its input (one storage) where the storage
** must grow at that step: the sizes are computed (run-bound symbols k, j),
** so the storage is allocated step by step, and the step that reads A[k]
** and writes B[j], j > k, finds the storage too small.  A's values must
** survive the growth: out = [2] * k + [1] * (j - k).
*/
static void test_in_place_growth(void) {
  static const int64_t dims_2[] = {2}, dims_k[] = {-1}, dims_j[] = {-2};
  static const char *const syms[] = {"k", "j"};
  const DLDataType f = {kDLFloat, 32, 1}, i64 = {kDLInt, 64, 1};
  mlc_rt_tensor_desc t[5] = {{i64, 1, dims_2, MLC_RT_STORAGE_INPUT, 0}, {i64, 1, dims_2, MLC_RT_STORAGE_ARENA, 1},
                             {f, 1, dims_k, MLC_RT_STORAGE_ARENA, 0},   {f, 1, dims_j, MLC_RT_STORAGE_ARENA, 0},
                             {f, 1, dims_j, MLC_RT_STORAGE_OUTPUT, 0}};
  mlc_rt_io_desc in[1] = {{"v", 0}}, out[1] = {{"out", 4}};
  mlc_rt_arg_desc a_bind[5] = {{MLC_RT_ARG_TENSOR, 0}, {MLC_RT_ARG_TENSOR, 1}, {MLC_RT_ARG_IMM, 0},
                               {MLC_RT_ARG_SYM, 0}, {MLC_RT_ARG_SYM, 1}};
  mlc_rt_arg_desc a_fill[3] = {{MLC_RT_ARG_TENSOR, 0}, {MLC_RT_ARG_TENSOR, 0}, {MLC_RT_ARG_TENSOR, 2}};
  mlc_rt_arg_desc a_inc[2] = {{MLC_RT_ARG_TENSOR, 2}, {MLC_RT_ARG_TENSOR, 3}};
  mlc_rt_arg_desc a_copy[2] = {{MLC_RT_ARG_TENSOR, 3}, {MLC_RT_ARG_TENSOR, 4}};
  mlc_rt_step_desc st[4] = {{MLC_RT_STEP_BIND_SYMS, "mlc.define_dims", NULL, "Shape", 5, a_bind, -1},
                            {MLC_RT_STEP_EXTERN, "fill", NULL, "Fill", 3, a_fill, -1},
                            {MLC_RT_STEP_EXTERN, "inc", NULL, "Inc", 2, a_inc, -1},
                            {MLC_RT_STEP_EXTERN, "copy", NULL, "Copy", 2, a_copy, -1}};
  mlc_rt_extern_desc ex[3] = {{"fill", k_fill, 0}, {"inc", k_inc, 1}, {"copy", k_copy, 2}};
  mlc_rt_model_desc d;
  memset(&d, 0, sizeof d);
  d.abi_version = MLC_RT_DESC_VERSION;
  d.kernel_abi = MLC_RT_ABI_VERSION;
  d.name = "grow";
  d.nsyms = 2;
  d.sym_names = syms;
  d.ntensors = 5;
  d.tensors = t;
  d.ninputs = 1;
  d.inputs = in;
  d.noutputs = 1;
  d.outputs = out;
  d.nstorages = 2;
  d.nsteps = 4;
  d.steps = st;
  d.nexterns = 3;
  d.externs = ex;
  d.weights = v_weights;
  d.weights_size = sizeof v_weights;
  mlc_rt_model *m = NULL;
  char err[256] = "";
  CU_ASSERT_EQUAL_FATAL(mlc_rt_model_open(&d, &m, err, sizeof err), MLC_RT_OK);
  mlc_rt_session *s = NULL;
  CU_ASSERT_EQUAL_FATAL(mlc_rt_session_create(m, 1, &s, err, sizeof err), MLC_RT_OK);
  /* k = 3 (12 bytes: one 64-byte block), then j = 40 (160 bytes): B grows the storage */
  for (int run = 0; run < 2; run++) {
    int64_t v[2] = {3 + run, 40 + 40 * run}, vs[1] = {2};
    DLTensor x = {v, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, vs, NULL, 0};
    CU_ASSERT_EQUAL(mlc_rt_session_set_input(s, 0, &x), MLC_RT_OK);
    if (mlc_rt_session_run(s) != MLC_RT_OK) {
      fprintf(stderr, "\nrun: %s\n", mlc_rt_session_last_error(s));
      CU_FAIL("run failed");
      continue;
    }
    const DLTensor *o = NULL;
    CU_ASSERT_EQUAL(mlc_rt_session_get_output(s, 0, &o), MLC_RT_OK);
    CU_ASSERT(inc_same_memory); /* A moved with the storage, not left in freed memory */
    int good = o && o->shape[0] == v[1];
    for (int64_t i = 0; good && i < v[1]; i++) good = ((const float *)o->data)[i] == (i < v[0] ? 2.0f : 1.0f);
    CU_ASSERT(good);
  }
  mlc_rt_session_free(s);
  mlc_rt_model_close(m);
}

static void register_session(void) {
  static const CU_TestInfo tests[] = {{"run_batches", test_run_batches},
                                      {"no_realloc_same_shapes", test_no_realloc_same_shapes},
                                      {"input_errors", test_input_errors},
                                      {"kernel_error", test_kernel_error},
                                      {"size_overflow", test_size_overflow},
                                      {"shapefn_overflow", test_shapefn_overflow},
                                      {"in_place_growth", test_in_place_growth},
                                      {NULL, NULL}};
  mlc_test_add_suite("session", tests);
}

static void register_threads(void) {
  static const CU_TestInfo tests[] = {{"pool_1", test_pool_1},
                                      {"pool_4", test_pool_4},
                                      {"pool_misc", test_pool_misc},
                                      {"pool_idle", test_pool_idle},
                                      {"pool_grain", test_pool_grain},
                                      {"concurrent_sessions", test_concurrent_sessions},
                                      {NULL, NULL}};
  mlc_test_add_suite("threads", tests);
}

static void register_desc(void) {
  static const CU_TestInfo tests[] = {{"desc_validation", test_desc_validation},
                                      {"derived_symbols", test_derived_symbols},
                                      {"desc_control_flow", test_desc_control_flow},
                                      {"inprocess_session", test_inprocess_session},
                                      {"dtype_str", test_dtype_str},
                                      {"blob_robust", test_blob_robust},
                                      {"input_defaults", test_input_defaults},
                                      {NULL, NULL}};
  mlc_test_add_suite("desc", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_loader, register_session, register_threads,
                                             register_desc, NULL};
  return mlc_test_main("test_runtime", fns);
}
