/*
** test_indices.c: CUnit suite for indices read from model data (Gather,
** GatherElements, GatherND with and without batch_dims, ScatterElements,
** the deprecated Scatter and ScatterND), end to end.
**
** Each case is a one-node ONNX model (tests/harness.h) run two ways: with
** every input a graph input, compiled into kernels that check the indices
** at run time, and with every input an initializer, folded when compiling.
** In-range indices (negative ones included) give the same output both
** ways; an index too large or too negative is a run error naming the node,
** the op, the index and its range, and the same graph folded is a compile
** error (MLC_OUT_OF_RANGE) with the same words.  A large GatherElements,
** whose index check the default schedule runs as a parallel loop, reports
** the first bad index in loop order on every run.
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "lower/lower.h"
#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"
#include "tests/harness.h"
#include "tests/testutil.h"

#define D(...) (const int64_t[]){__VA_ARGS__}
#define MAXOUT 4096

/* ---- running a case ------------------------------------------------------------------ */

/* A run of |c|: compiled (|compile| the status, transferred), and when that
** worked loaded and run |runs| times on |data| (raw inputs in graph-input
** order; NULL: the cases' values) with |threads| threads.  out: output 0 as
** doubles (|nout| elements); err: the last run's error. */
typedef struct result {
  mlc_status compile;
  mlc_rt_status run;
  char err[512];
  int64_t nout;
  double out[MAXOUT];
} result;

static void run(const mcase *c, void *const *data, int runs, int32_t threads, result *r) {
  char so[4096];
  memset(r, 0, sizeof *r);
  r->run = MLC_RT_INVALID_ARGUMENT;
  r->compile = mlc_th_compile_case(c, so, sizeof so);
  if (r->compile) return;
  mlc_model *m = NULL;
  mlc_session *s = NULL;
  mlc_session_options opt = {threads};
  if (mlc_model_load(so, &m, r->err, sizeof r->err) != MLC_RT_OK) {
    CU_FAIL("load");
    return;
  }
  CU_ASSERT_EQUAL_FATAL(mlc_session_create(m, &opt, &s), MLC_RT_OK);
  void *bufs[5] = {0};
  int k = 0;
  for (int i = 0; i < c->nin; i++) {
    const ten *t = &c->in[i];
    if (t->init) continue;
    void *p = data ? data[k] : (bufs[i] = mlc_th_raw_of(t));
    DLTensor d = {p, {kDLCPU, 0}, t->rank, mlc_th_dl_of(t->type), (int64_t *)t->dims, NULL, 0};
    CU_ASSERT_EQUAL(mlc_session_set_input(s, k++, &d), MLC_RT_OK);
  }
  for (int i = 0; i < runs; i++) {
    r->run = mlc_session_run(s);
    snprintf(r->err, sizeof r->err, "%s", r->run == MLC_RT_OK ? "" : mlc_session_last_error(s));
  }
  const DLTensor *y = NULL;
  if (r->run == MLC_RT_OK && mlc_session_get_output(s, 0, &y) == MLC_RT_OK) {
    r->nout = 1;
    for (int d = 0; d < y->ndim; d++) r->nout *= y->shape[d];
    for (int64_t e = 0; e < r->nout && e < MAXOUT; e++) r->out[e] = mlc_th_load_dl(y, e);
  }
  for (int i = 0; i < 5; i++) free(bufs[i]);
  mlc_session_free(s);
  mlc_model_free(m);
}

/* Marks every input of |c| an initializer (|init|) or a graph input. */
static void set_init(mcase *c, int init) {
  for (int i = 0; i < c->nin; i++) c->in[i].init = init;
}

static int has(const char *msg, const char *a) {
  if (strstr(msg, a)) return 1;
  fprintf(stderr, "\n  missing \"%s\" in: %s\n", a, msg);
  return 0;
}

/*
** |c| with the index input |ix| set to |idx|: NULL |bad| -- runs at run
** time and with constant inputs, same outputs; else both fail: the run
** naming the node and "<op>: <bad>", and with constant inputs the compile,
** naming the node, the op and |fwant| (MLC_OUT_OF_RANGE when it is |bad|),
** or with a NULL |fwant| the run as before (ops without an evaluator keep
** their call).
*/
static void verdicts_of(mcase *c, int ix, const double *idx, const char *op, const char *bad, const char *fwant) {
  static result rt, fold;
  char want[256];
  memcpy(c->in[ix].v, idx, sizeof(double) * (size_t)mlc_th_numel_of(&c->in[ix]));
  set_init(c, 0);
  run(c, NULL, 1, 0, &rt);
  set_init(c, 1);
  run(c, NULL, 1, 0, &fold);
  CU_ASSERT_PTR_NULL(rt.compile);
  if (!bad) {
    if (fold.compile) fprintf(stderr, "\n%s: folded: %s\n", c->name, mlc_status_message(fold.compile));
    if (rt.run) fprintf(stderr, "\n%s: run: %s\n", c->name, rt.err);
    CU_ASSERT_PTR_NULL(fold.compile);
    CU_ASSERT_EQUAL(rt.run, MLC_RT_OK);
    CU_ASSERT_EQUAL(fold.run, MLC_RT_OK);
    CU_ASSERT(rt.nout > 0 && rt.nout == fold.nout);
    int64_t diff = 0; /* sums may round differently (float32 in the kernel) */
    for (int64_t e = 0; e < rt.nout && e < MAXOUT; e++)
      diff += fabs(rt.out[e] - fold.out[e]) > 1e-5 * (1 + fabs(fold.out[e]));
    if (diff) fprintf(stderr, "\n%s: %lld outputs differ\n", c->name, (long long)diff);
    CU_ASSERT_EQUAL(diff, 0);
  } else {
    CU_ASSERT_NOT_EQUAL(rt.run, MLC_RT_OK);
    snprintf(want, sizeof want, "%s: %s", op, bad);
    CU_ASSERT(has(rt.err, "node \"node0\"") && has(rt.err, want));
    if (!fwant) {
      CU_ASSERT_PTR_NULL(fold.compile);
      CU_ASSERT_NOT_EQUAL(fold.run, MLC_RT_OK);
      CU_ASSERT(has(fold.err, "node \"node0\"") && has(fold.err, want));
    }
    CU_ASSERT(fold.compile || !fwant);
    if (fold.compile) {
      const char *msg = mlc_status_message(fold.compile);
      snprintf(want, sizeof want, "(%s, opset", op);
      if (fwant == bad) CU_ASSERT_EQUAL(mlc_status_code(fold.compile), MLC_OUT_OF_RANGE);
      CU_ASSERT(has(msg, "node \"node0\"") && has(msg, want) && has(msg, fwant));
    }
  }
  mlc_status_free(rt.compile);
  mlc_status_free(fold.compile);
}

static void verdicts(mcase *c, int ix, const double *idx, const char *op, const char *bad) {
  verdicts_of(c, ix, idx, op, bad, bad);
}

/* A case of |op| over f32 data |dd| and int64 indices |id|. */
static mcase *gather_case(const char *name, const char *op, int opset, int dr, const int64_t *dd, int ir,
                          const int64_t *id) {
  mcase *c = mlc_th_new_case(name, op, opset);
  c->in[0] = mlc_th_tensor("x", T_F32, dr, dd, -4, 4);
  c->in[1] = mlc_th_output("i", T_I64, ir, id);
  c->nin = 2;
  c->nout = 1;
  return c;
}

/* ---- gathers ------------------------------------------------------------------------ */

static void t_gather(void) {
  /* y[a, i, j, c] = x[a, idx[i, j], c]: axis 1 of extent 5 */
  mcase *c = gather_case("gather", "Gather", 13, 3, D(2, 5, 3), 2, D(2, 2));
  c->out[0] = mlc_th_output("y", T_F32, 4, D(2, 2, 2, 3));
  c->at[0] = mlc_th_aint("axis", 1);
  c->nattr = 1;
  verdicts(c, 1, (const double[]){0, -5, 4, -1}, "Gather", NULL);
  verdicts(c, 1, (const double[]){0, 5, 4, -1}, "Gather", "index 5 out of range [-5, 5) on axis 1");
  verdicts(c, 1, (const double[]){0, 1, -6, -1}, "Gather", "index -6 out of range [-5, 5) on axis 1");
  free(c);
}

static void t_gather_elements(void) {
  mcase *c = gather_case("gather_elements", "GatherElements", 13, 2, D(3, 4), 2, D(3, 2));
  c->out[0] = mlc_th_output("y", T_F32, 2, D(3, 2));
  c->at[0] = mlc_th_aint("axis", 1);
  c->nattr = 1;
  verdicts(c, 1, (const double[]){0, 3, -4, -1, 2, 1}, "GatherElements", NULL);
  verdicts(c, 1, (const double[]){0, 3, -4, -1, 4, 1}, "GatherElements", "index 4 out of range [-4, 4) on axis 1");
  verdicts(c, 1, (const double[]){0, -5, 1, 1, 1, 1}, "GatherElements",
           "index -5 out of range [-4, 4) on axis 1");
  free(c);
}

static void t_gather_nd(void) {
  /* k = 2: rows and columns of a [3, 4] matrix */
  mcase *c = gather_case("gather_nd", "GatherND", 13, 2, D(3, 4), 2, D(2, 2));
  c->out[0] = mlc_th_output("y", T_F32, 1, D(2));
  verdicts(c, 1, (const double[]){-3, 3, 2, -4}, "GatherND", NULL);
  verdicts(c, 1, (const double[]){0, 3, 2, 4}, "GatherND", "index 4 out of range [-4, 4) on axis 1");
  verdicts(c, 1, (const double[]){-4, 0, 0, 0}, "GatherND", "index -4 out of range [-3, 3) on axis 0");
  free(c);
  /* batch_dims 1: indices [2, 2, 1] index axis 1 (extent 3) of each batch */
  c = gather_case("gather_nd_batch", "GatherND", 13, 3, D(2, 3, 4), 3, D(2, 2, 1));
  c->out[0] = mlc_th_output("y", T_F32, 3, D(2, 2, 4));
  c->at[0] = mlc_th_aint("batch_dims", 1);
  c->nattr = 1;
  verdicts(c, 1, (const double[]){0, -3, 2, -1}, "GatherND", NULL);
  verdicts(c, 1, (const double[]){0, 1, 3, 1}, "GatherND", "index 3 out of range [-3, 3) on axis 1");
  verdicts(c, 1, (const double[]){-4, 1, 2, 1}, "GatherND", "index -4 out of range [-3, 3) on axis 1");
  free(c);
}

/* ---- scatters ------------------------------------------------------------------------ */

static mcase *scatter_case(const char *name, const char *op, int opset, int ir, const int64_t *id, int ur,
                           const int64_t *ud) {
  mcase *c = gather_case(name, op, opset, 2, D(4, 3), ir, id);
  c->in[2] = mlc_th_tensor("u", T_F32, ur, ud, 10, 20);
  c->nin = 3;
  c->out[0] = mlc_th_output("y", T_F32, 2, D(4, 3));
  return c;
}

static void t_scatter_elements(void) {
  static const char *const ops[2] = {"ScatterElements", "Scatter"};
  static const int opsets[2] = {13, 10};
  for (int k = 0; k < 2; k++) {
    mcase *c = scatter_case(ops[k], ops[k], opsets[k], 2, D(2, 3), 2, D(2, 3));
    verdicts(c, 1, (const double[]){0, -1, 2, -4, 1, 3}, ops[k], NULL);
    verdicts(c, 1, (const double[]){0, 1, 2, 3, 4, 0}, ops[k], "index 4 out of range [-4, 4) on axis 0");
    verdicts(c, 1, (const double[]){0, 1, -5, 3, 2, 0}, ops[k], "index -5 out of range [-4, 4) on axis 0");
    /* axis 1 and a reduction */
    c->at[0] = mlc_th_aint("axis", 1);
    c->nattr = 1;
    if (k == 0) {
      c->at[1] = mlc_th_astr("reduction", "add");
      c->nattr = 2;
      c->opset = 16;
    }
    verdicts(c, 1, (const double[]){0, -1, 2, -3, 1, 1}, ops[k], NULL);
    verdicts(c, 1, (const double[]){0, 1, 2, 0, 1, 3}, ops[k], "index 3 out of range [-3, 3) on axis 1");
    free(c);
  }
}

static void t_scatter_nd(void) {
  /* rows of a [4, 3] matrix */
  mcase *c = scatter_case("scatter_nd", "ScatterND", 13, 2, D(2, 1), 2, D(2, 3));
  verdicts(c, 1, (const double[]){-1, 1}, "ScatterND", NULL);
  verdicts(c, 1, (const double[]){0, 4}, "ScatterND", "index 4 out of range [-4, 4) on axis 0");
  verdicts(c, 1, (const double[]){-5, 0}, "ScatterND", "index -5 out of range [-4, 4) on axis 0");
  free(c);
  /* elements: the second coordinate checked against axis 1 */
  c = scatter_case("scatter_nd_elems", "ScatterND", 16, 2, D(2, 2), 1, D(2));
  c->at[0] = mlc_th_astr("reduction", "mul");
  c->nattr = 1;
  verdicts(c, 1, (const double[]){3, -3, -4, 2}, "ScatterND", NULL);
  verdicts(c, 1, (const double[]){3, 0, 1, 3}, "ScatterND", "index 3 out of range [-3, 3) on axis 1");
  free(c);
}

/* ---- other indices and positions read from data ------------------------------------------- */

static void t_reverse_sequence(void) {
  mcase *c = gather_case("reverse_sequence", "ReverseSequence", 10, 2, D(4, 2), 1, D(2));
  c->out[0] = mlc_th_output("y", T_F32, 2, D(4, 2));
  c->at[0] = mlc_th_aint("time_axis", 0);
  c->at[1] = mlc_th_aint("batch_axis", 1);
  c->nattr = 2;
  verdicts(c, 1, (const double[]){4, 0}, "ReverseSequence", NULL);
  verdicts(c, 1, (const double[]){5, 1}, "ReverseSequence", "sequence length 5 out of range [0, 5)");
  verdicts(c, 1, (const double[]){2, -1}, "ReverseSequence", "sequence length -1 out of range [0, 5)");
  free(c);
}

static void t_cumsum_axis(void) {
  mcase *c = gather_case("cumsum_axis", "CumSum", 14, 2, D(2, 3), 0, NULL);
  c->out[0] = mlc_th_output("y", T_F32, 2, D(2, 3));
  /* a constant axis is read when importing: an error there */
  verdicts(c, 1, (const double[]){-2}, "CumSum", NULL);
  verdicts_of(c, 1, (const double[]){2}, "CumSum", "axis 2 out of range [-2, 2)", "axis 2 ");
  verdicts_of(c, 1, (const double[]){-3}, "CumSum", "axis -3 out of range [-2, 2)", "axis -3 ");
  free(c);
}

static void t_roi_align(void) {
  mcase *c = mlc_th_new_case("roi_align", "RoiAlign", 16);
  c->in[0] = mlc_th_tensor("x", T_F32, 4, D(2, 1, 4, 4), -4, 4);
  c->in[1] = mlc_th_tensor("rois", T_F32, 2, D(2, 4), 0, 3);
  c->in[2] = mlc_th_output("b", T_I64, 1, D(2));
  c->nin = 3;
  c->out[0] = mlc_th_output("y", T_F32, 4, D(2, 1, 1, 1));
  c->nout = 1;
  verdicts_of(c, 2, (const double[]){1, 0}, "RoiAlign", NULL, NULL);
  verdicts_of(c, 2, (const double[]){0, 2}, "RoiAlign", "batch index 2 out of range [0, 2)", NULL);
  verdicts_of(c, 2, (const double[]){-1, 0}, "RoiAlign", "batch index -1 out of range [0, 2)", NULL);
  free(c);
}

static void t_max_unpool(void) {
  mcase *c = gather_case("max_unpool", "MaxUnpool", 11, 4, D(1, 1, 2, 2), 4, D(1, 1, 2, 2));
  c->out[0] = mlc_th_output("y", T_F32, 4, D(1, 1, 4, 4));
  c->at[0] = mlc_th_aints("kernel_shape", 2, D(2, 2));
  c->at[1] = mlc_th_aints("strides", 2, D(2, 2));
  c->nattr = 2;
  verdicts_of(c, 1, (const double[]){0, 3, 9, 15}, "MaxUnpool", NULL, NULL);
  verdicts_of(c, 1, (const double[]){0, 16, 9, 15}, "MaxUnpool", "index 16 out of range [0, 16) into the output", NULL);
  verdicts_of(c, 1, (const double[]){0, 3, -1, 15}, "MaxUnpool", "index -1 out of range [0, 16) into the output", NULL);
  free(c);
}

/* ---- a check inside a parallel loop --------------------------------------------------- */

#define PR 64
#define PC 1024

/* The index check of gather_elements over [PR, PC] indices runs in a
** parallel loop of the default schedule. */
static void check_parallel_schedule(void) {
  mlc_module *m = NULL;
  mlc_func *f = NULL;
  mlc_value *x = NULL, *ix = NULL, *y = NULL;
  mlc_tir_module *tm = NULL;
  CU_ASSERT_PTR_NULL_FATAL(mlc_module_create(mlc_allocator_system(), &m));
  CU_ASSERT_PTR_NULL(mlc_func_create(m, "main", &f));
  mlc_type xt = {MLC_DTYPE_F32, 2, D(PR, PC)}, it = {MLC_DTYPE_I64, 2, D(PR, PC)};
  CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "x", &xt, &x));
  CU_ASSERT_PTR_NULL(mlc_func_add_param(f, "i", &it, &ix));
  mlc_value *args[2] = {x, ix};
  mlc_attr a = mlc_attr_int("axis", 1);
  CU_ASSERT_PTR_NULL(mlc_graph_emit1(f, MLC_OP_GATHER_ELEMENTS, args, 2, &a, 1, NULL, &y));
  CU_ASSERT_PTR_NULL(mlc_func_add_ret(f, y));
  CU_ASSERT_PTR_NULL_FATAL(mlc_tir_module_create(mlc_allocator_system(), &tm));
  CU_ASSERT_PTR_NULL(mlc_lower_legalize(m, tm, NULL));
  CU_ASSERT_PTR_NULL(mlc_lower_default_schedule(tm, NULL, NULL));
  mlc_strbuf sb = MLC_STRBUF_INIT;
  mlc_tir_print_module(tm, &sb);
  const char *txt = mlc_sb_str(&sb), *check = strstr(txt, "T_check_indices"), *par = strstr(txt, "T.parallel");
  CU_ASSERT(check && par && par < check && strstr(txt, "assert "));
  mlc_sb_fini(&sb);
  mlc_tir_module_destroy(tm);
  mlc_module_destroy(m);
}

/* A [PR, PC] tensor of |type| whose values the test supplies (more than a
** ten holds). */
static ten big(const char *name, int type) {
  ten t;
  memset(&t, 0, sizeof t);
  t.name = name;
  t.type = type;
  t.rank = 2;
  t.dims[0] = PR;
  t.dims[1] = PC;
  return t;
}

static void t_parallel(void) {
  check_parallel_schedule();
  mcase *c = mlc_th_new_case("gather_elements_parallel", "GatherElements", 13);
  c->in[0] = big("x", T_F32);
  c->in[1] = big("i", T_I64);
  c->nin = 2;
  c->out[0] = big("y", T_F32);
  c->nout = 1;
  c->at[0] = mlc_th_aint("axis", 1);
  c->nattr = 1;
  float *xd = malloc(sizeof(float) * PR * PC);
  int64_t *id = malloc(sizeof(int64_t) * PR * PC);
  CU_ASSERT_PTR_NOT_NULL_FATAL(xd && id);
  for (int64_t e = 0; e < PR * PC; e++) {
    xd[e] = (float)e;
    id[e] = (e * 7919) % (2 * PC) - PC; /* all of [-PC, PC) */
  }
  void *data[2] = {xd, id};
  static result r;
  run(c, data, 1, 4, &r);
  CU_ASSERT_PTR_NULL(r.compile);
  CU_ASSERT_EQUAL(r.run, MLC_RT_OK);
  int bad = 0;
  for (int64_t e = 0; e < MAXOUT && e < r.nout; e++) {
    int64_t j = id[e] < 0 ? id[e] + PC : id[e];
    bad += r.out[e] != (double)(e / PC * PC + j);
  }
  CU_ASSERT_EQUAL(bad, 0);
  /* two bad indices in different chunks, the later one failing fast: the
  ** first in loop order is reported, on every run */
  id[PR * PC - 1] = -PC - 1;
  id[PR * PC / 2 + 3] = PC + 5;
  run(c, data, 20, 4, &r);
  CU_ASSERT_NOT_EQUAL(r.run, MLC_RT_OK);
  CU_ASSERT(has(r.err, "node \"node0\"") && has(r.err, "GatherElements: index 1029 out of range [-1024, 1024) on axis 1"));
  mlc_status_free(r.compile);
  free(xd);
  free(id);
  free(c);
}

/* ---- registration -------------------------------------------------------------------- */

static void register_suites(void) {
  static const CU_TestInfo tests[] = {
      {"gather", t_gather},
      {"gather_elements", t_gather_elements},
      {"gather_nd", t_gather_nd},
      {"scatter_elements", t_scatter_elements},
      {"scatter_nd", t_scatter_nd},
      {"reverse_sequence", t_reverse_sequence},
      {"cumsum_axis", t_cumsum_axis},
      {"roi_align", t_roi_align},
      {"max_unpool", t_max_unpool},
      {"parallel", t_parallel},
      CU_TEST_INFO_NULL,
  };
  CU_pSuite su = CU_add_suite("indices", mlc_th_tmp_init, mlc_th_tmp_clean);
  for (const CU_TestInfo *t = tests; su && t->pName; t++) CU_add_test(su, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  mlc_th_rng = 0x6a09e667f3bcc908ull; /* this program's data */
  return mlc_test_main("test_indices", fns);
}
