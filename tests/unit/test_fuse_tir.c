/*
** test_fuse_tir.c: CUnit suites for fuse_tir (lower/fuse_tir.c) and the
** default schedule of the fused kernels (lower/schedule_default.c).
**
** Each case describes a small graph: main's inputs, module constants, and
** a list of op calls reading inputs, constants and earlier calls' outputs.
** It is built twice: fused (the op calls in one primitive function that
** main calls with MLC_CALL_FUNC, as fuse_ops leaves a group) and unfused
** (the op calls in main).  The fused module goes through fuse_tir,
** legalize and the default schedule; the unfused one through legalize.
** Both are compiled, loaded, and main's call_tir steps run in order on the
** same seeded random inputs (for each batch size of a symbolic batch); the
** outputs must agree.  The graph and TIR text after fuse_tir and the
** scheduled TIR with its trace are compared with tests/golden/fuse_tir/
** NAME.out (MLC_UPDATE_GOLDEN=1 rewrites them).
*/
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/graph.h"
#include "graph/pass.h"
#include "lower/lower.h"
#include "lower/tir.h"
#include "runtime/rt_abi.h"
#include "tests/harness_kernel.h"
#include "tests/testutil.h"

/* ---- cases -------------------------------------------------------------- */

/* An argument: an input, a constant or an earlier op's output. */
#define IN(i) (i)
#define CST(k) (100 + (k))
#define OP(j) (200 + (j))
#define OPO(j, o) (200 + (j) + 20 * (o)) /* output o of op j */

typedef struct fop {
  mlc_op op;
  int nargs;
  int args[4];
  mlc_attr attrs[6];
} fop;

typedef struct fcase {
  const char *name;
  int ninputs;
  targ inputs[4];
  int nconsts;
  targ consts[3];
  double const_value[3]; /* a scalar constant's value (numel 1); others random */
  int nops;
  fop ops[6];
  int nrets;
  int rets[3];
  int nbatch;
  int64_t batch[3];
  int calls; /* calls of the fused function in main (default 1) */
} fcase;

static int nattrs_of(const fop *o) {
  int n = 0;
  while (n < 6 && o->attrs[n].name) n++;
  return n;
}

typedef struct built {
  mlc_module *gm;
  mlc_value *in[4];
  mlc_value *rets[8];
  int nrets;
} built;

/* The value an argument code names. */
static mlc_value *arg_value(mlc_value *const *in, mlc_value *const *cst, mlc_value *const (*outs)[MLC_MAX_OUTS],
                            int code) {
  if (code >= 200) return outs[(code - 200) % 20][(code - 200) / 20];
  if (code >= 100) return cst[code - 100];
  return in[code];
}

static int build_case(const fcase *fc, int fused, built *bt) {
  memset(bt, 0, sizeof *bt);
  mlc_module *gm = NULL;
  mlc_func *main_f = NULL, *g = NULL;
  mlc_value *cst[3], *gin[4], *outs[6][MLC_MAX_OUTS];
  int64_t dims[8][MAXR];
  uint64_t rng = 0x9e3779b97f4a7c15ULL;
  if (!MLC_TEST_OK(mlc_module_create(mlc_allocator_default(), &gm))) return 0;
  bt->gm = gm;
  if (fc->nbatch) {
    int64_t n = 0;
    if (!MLC_TEST_OK(mlc_module_sym(gm, "n", &n))) return 0;
  }
  gm->fold = 0;
  if (!MLC_TEST_OK(mlc_func_create(gm, "main", &main_f))) return 0;
  for (int i = 0; i < fc->ninputs; i++) {
    memcpy(dims[i], fc->inputs[i].dims, sizeof dims[i]);
    mlc_type t = {fc->inputs[i].dt, fc->inputs[i].rank, dims[i]};
    char name[16];
    snprintf(name, sizeof name, "x%d", i);
    if (!MLC_TEST_OK(mlc_func_add_param(main_f, name, &t, &bt->in[i]))) return 0;
  }
  for (int k = 0; k < fc->nconsts; k++) {
    mlc_type t = {fc->consts[k].dt, fc->consts[k].rank, (int64_t *)fc->consts[k].dims};
    size_t nb = mlc_th_nbytes(&t);
    void *data = calloc(nb ? nb : 1, 1);
    int64_t n = mlc_th_numel(&t);
    for (int64_t e = 0; e < n; e++)
      mlc_th_st(data, t.dtype, e, n == 1 ? fc->const_value[k] : mlc_th_unit(&rng) * 2 - 1);
    char name[16];
    snprintf(name, sizeof name, "c%d", k);
    int ok = MLC_TEST_OK(mlc_module_add_const(gm, name, &t, data, nb, &cst[k]));
    free(data);
    if (!ok) return 0;
  }
  mlc_func *f = main_f;
  if (fused) {
    if (!MLC_TEST_OK(mlc_func_create(gm, "fused_group", &g))) return 0;
    g->primitive = 1;
    for (int i = 0; i < fc->ninputs; i++)
      if (!MLC_TEST_OK(mlc_func_add_param(g, bt->in[i]->name, &bt->in[i]->type, &gin[i]))) return 0;
    f = g;
  }
  for (int j = 0; j < fc->nops; j++) {
    const fop *o = &fc->ops[j];
    mlc_value *args[4];
    for (int i = 0; i < o->nargs; i++) args[i] = arg_value(fused ? gin : bt->in, cst, outs, o->args[i]);
    char node[32];
    snprintf(node, sizeof node, "n%d", j);
    mlc_origin org = {node, "Test", 17, j};
    int nouts = 0;
    if (!MLC_TEST_OK(mlc_graph_emit(f, o->op, args, o->nargs, o->attrs, nattrs_of(o), &org, outs[j], &nouts)))
      return 0;
  }
  mlc_value *rv[3];
  for (int i = 0; i < fc->nrets; i++) rv[i] = arg_value(fused ? gin : bt->in, cst, outs, fc->rets[i]);
  if (!fused) {
    for (int i = 0; i < fc->nrets; i++) {
      bt->rets[bt->nrets++] = rv[i];
      if (!MLC_TEST_OK(mlc_func_add_ret(main_f, rv[i]))) return 0;
    }
    return 1;
  }
  mlc_type ot[3];
  for (int i = 0; i < fc->nrets; i++) {
    ot[i] = rv[i]->type;
    if (!MLC_TEST_OK(mlc_func_add_ret(g, rv[i]))) return 0;
  }
  for (int c = 0; c < (fc->calls ? fc->calls : 1); c++) {
    mlc_value *co[3];
    mlc_origin org = {"fused", "Test", 17, -1};
    if (!MLC_TEST_OK(mlc_graph_emit_call(main_f, MLC_CALL_FUNC, "fused_group", bt->in, fc->ninputs, NULL, 0, ot,
                                         fc->nrets, &org, co)))
      return 0;
    for (int j = 0; j < fc->nops; j++) {
      mlc_origin cov = {"", "Test", 17, j};
      char node[32];
      snprintf(node, sizeof node, "n%d", j);
      cov.node = node;
      if (!MLC_TEST_OK(mlc_binding_add_covered(gm, co[0]->def, &cov))) return 0;
    }
    for (int i = 0; i < fc->nrets; i++) {
      bt->rets[bt->nrets++] = co[i];
      if (!MLC_TEST_OK(mlc_func_add_ret(main_f, co[i]))) return 0;
    }
  }
  return 1;
}

/* ---- running main --------------------------------------------------------- */

static DLDataType dl_type(mlc_dtype t) {
  DLDataType d = {kDLFloat, (uint8_t)(mlc_dtype_size(t) * 8), 1};
  if (mlc_dtype_is_float(t)) d.code = kDLFloat;
  else if (t == BOOL || !mlc_dtype_is_signed(t)) d.code = kDLUInt;
  else d.code = kDLInt;
  return d;
}

/* The concrete type of |v| for batch |n| (dims into |dims|). */
static mlc_type concrete(const mlc_value *v, int64_t n, int64_t *dims) {
  mlc_type t = v->type;
  for (int d = 0; d < t.rank; d++) dims[d] = MLC_DIM_IS_SYM(t.dims[d]) ? n : t.dims[d];
  t.dims = dims;
  return t;
}

/* Runs main of |gm| (every binding a call_tir of |h|) on |in|; the returned
** values' data to out[i] (malloc'd).  0 on a failure (asserted). */
static int run_main(mlc_module *gm, void *h, int64_t n, void *const *in, void **out) {
  mlc_func *f = mlc_module_func(gm, "main");
  size_t nv = (size_t)gm->next_value_id;
  void **data = calloc(nv, sizeof *data);
  char *owned = calloc(nv, 1);
  int ok = f != NULL && data && owned;
  for (int i = 0; ok && i < f->nparams; i++) data[f->params[i]->id] = in[i];
  for (int bi = 0; ok && bi < f->nblocks; bi++)
    for (int k = 0; ok && k < f->blocks[bi].n; k++) {
      mlc_binding *b = f->blocks[bi].bindings[k];
      CU_ASSERT_EQUAL(b->kind, MLC_CALL_TIR);
      if (b->kind != MLC_CALL_TIR || b->nargs + b->nouts > 16) {
        ok = 0;
        break;
      }
      mlc_kernel_fn fn = NULL;
      *(void **)&fn = dlsym(h, b->callee);
      CU_ASSERT_PTR_NOT_NULL(fn);
      if (!fn) {
        ok = 0;
        break;
      }
      DLTensor t[16];
      int64_t shapes[16][MAXR];
      void *kargs[16];
      int32_t codes[16] = {0};
      int nk = 0;
      for (int i = 0; i < b->nargs + b->nouts; i++) {
        mlc_value *v = i < b->nargs ? b->args[i] : b->outs[i - b->nargs];
        mlc_type ct = concrete(v, n, shapes[nk]);
        if (v->kind == MLC_VALUE_CONST) data[v->id] = mlc_value_const(gm, v)->data;
        if (i >= b->nargs) {
          size_t nb = mlc_th_nbytes(&ct);
          data[v->id] = malloc(nb ? nb : 1);
          memset(data[v->id], 0xa5, nb ? nb : 1);
          owned[v->id] = 1;
        }
        memset(&t[nk], 0, sizeof t[nk]);
        t[nk].data = data[v->id];
        t[nk].device.device_type = kDLCPU;
        t[nk].ndim = ct.rank;
        t[nk].dtype = dl_type(ct.dtype);
        t[nk].shape = shapes[nk];
        kargs[nk] = &t[nk];
        nk++;
      }
      int rc = fn(kargs, codes, nk, mlc_th_rt_ctx());
      if (rc) fprintf(stderr, "\n%s failed: %s\n", b->callee, mlc_th_rt_error());
      CU_ASSERT_EQUAL(rc, 0);
      ok = rc == 0;
    }
  for (int i = 0; ok && i < f->nrets; i++) {
    int64_t dims[MAXR];
    mlc_type ct = concrete(f->rets[i], n, dims);
    size_t nb = mlc_th_nbytes(&ct);
    out[i] = malloc(nb ? nb : 1);
    memcpy(out[i], data[f->rets[i]->id], nb);
  }
  for (size_t i = 0; i < nv && data; i++)
    if (owned && owned[i]) free(data[i]);
  free(data);
  free(owned);
  return ok;
}

/* ---- golden text ------------------------------------------------------------ */

static void check_golden(const char *name, const char *got) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/golden/fuse_tir/%s.out", name);
  const char *upd = getenv("MLC_UPDATE_GOLDEN");
  const char *path = mlc_test_src_path(rel);
  if (upd && strcmp(upd, "1") == 0) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", mlc_test_src_path("tests/golden/fuse_tir"));
    mkdir(dir, 0777);
    CU_ASSERT(mlc_test_write_file(path, got, strlen(got)) == 0);
    return;
  }
  char *want = mlc_test_read_file(path, NULL);
  if (!want) {
    printf("\n  golden %s missing (MLC_UPDATE_GOLDEN=1 creates it)\n", rel);
    CU_FAIL("golden file missing");
    return;
  }
  if (strcmp(want, got) != 0) {
    printf("\n  golden mismatch: %s (rerun with MLC_UPDATE_GOLDEN=1 to accept the new output)\n%s\n", rel, got);
    CU_FAIL("golden mismatch");
  }
  free(want);
}

/* ---- the differential check ------------------------------------------------ */

static int print_tir;

/* Lowers |bt->gm| (fused: fuse_tir first; then legalize and, when |sched|,
** the default schedule) and loads it.  The text after fuse_tir and after
** the schedule into |text| when not NULL. */
static void *lower_and_load(const char *name, built *bt, int fused, int sched, mlc_strbuf *text) {
  mlc_module *gm = bt->gm;
  mlc_tir_module *tm = NULL;
  if (fused) {
    if (!MLC_TEST_OK(mlc_lower_pass_fuse_tir(gm, NULL))) return NULL;
    if (text) {
      mlc_sb_puts(text, "# after fuse_tir\n");
      mlc_graph_print(gm, text);
    }
  }
  if (!MLC_TEST_OK(mlc_lower_pass_legalize(gm, NULL))) return NULL;
  if (!MLC_TEST_OK(mlc_lower_prims(gm, &tm))) return NULL;
  if (!MLC_TEST_OK(mlc_tir_verify_module(tm))) return NULL;
  if (sched) {
    mlc_lower_options opt = {0, 0, 0};
    mlc_lower_traces tr = {0};
    int ok = MLC_TEST_OK(mlc_lower_default_schedule(tm, &opt, &tr));
    if (ok && text) {
      mlc_sb_puts(text, "\n# after the default schedule\n");
      for (int i = 0; i < tm->nfuncs; i++) {
        mlc_sb_printf(text, "## trace of %s\n%s", tm->funcs[i]->name, tr.text[i]);
        mlc_tir_print_func(tm->funcs[i], text);
      }
    }
    mlc_lower_traces_free(&tr);
    if (!ok || !MLC_TEST_OK(mlc_tir_verify_module(tm))) return NULL;
  }
  if (print_tir) {
    mlc_strbuf b = MLC_STRBUF_INIT;
    mlc_tir_print_module(tm, &b);
    printf("\n%s (%s):\n%s\n", name, fused ? "fused" : "unfused", mlc_sb_str(&b));
    mlc_sb_fini(&b);
  }
  void *h = mlc_th_load_tir(tm, name);
  if (print_tir) {
    mlc_strbuf b = MLC_STRBUF_INIT;
    mlc_tir_print_module(tm, &b);
    printf("\n%s (%s), lowered:\n%s\n", name, fused ? "fused" : "unfused", mlc_sb_str(&b));
    mlc_sb_fini(&b);
  }
  return h;
}

static void run_case(const fcase *fc) {
  built fb = {0}, ub = {0};
  mlc_strbuf text = MLC_STRBUF_INIT;
  void *fh = NULL, *uh = NULL;
  int ok = build_case(fc, 1, &fb) && build_case(fc, 0, &ub);
  if (ok) {
    fh = lower_and_load(fc->name, &fb, 1, 1, &text);
    uh = lower_and_load(fc->name, &ub, 0, 0, NULL);
    /* every fused call became a call_tir; the primitive function left */
    CU_ASSERT_PTR_NULL(mlc_module_func(fb.gm, "fused_group"));
    check_golden(fc->name, mlc_sb_str(&text));
  }
  for (int r = 0; fh && uh && r < (fc->nbatch ? fc->nbatch : 1); r++) {
    int64_t n = fc->nbatch ? fc->batch[r] : 0;
    void *in[4] = {0}, *fo[8] = {0}, *uo[8] = {0};
    uint64_t rng = 0x1234567ULL + (uint64_t)n;
    for (int i = 0; i < fc->ninputs; i++) {
      int64_t dims[MAXR];
      mlc_type t = concrete(fb.in[i], n, dims);
      size_t nb = mlc_th_nbytes(&t);
      in[i] = calloc(nb ? nb : 1, 1);
      int64_t ne = mlc_th_numel(&t);
      for (int64_t e = 0; e < ne; e++) mlc_th_st(in[i], t.dtype, e, mlc_th_unit(&rng) * 4 - 2);
    }
    if (run_main(fb.gm, fh, n, in, fo) && run_main(ub.gm, uh, n, in, uo)) {
      mlc_func *uf = mlc_module_func(ub.gm, "main");
      for (int i = 0; i < fb.nrets; i++) {
        const mlc_value *uv = uf->rets[i % uf->nrets];
        int64_t dims[MAXR];
        mlc_type t = concrete(uv, n, dims);
        int64_t ne = mlc_th_numel(&t), bad = 0;
        for (int64_t e = 0; e < ne; e++) {
          double a = mlc_th_ldd(fo[i], t.dtype, e), b = mlc_th_ldd(uo[i % uf->nrets], t.dtype, e);
          if (!(fabs(a - b) <= 1e-4 + 1e-4 * fabs(b))) {
            if (!bad) fprintf(stderr, "\n%s (n=%lld): output %d element %lld: %g, unfused %g\n", fc->name,
                              (long long)n, i, (long long)e, a, b);
            bad++;
          }
        }
        CU_ASSERT_EQUAL(bad, 0);
      }
    }
    for (int i = 0; i < 4; i++) free(in[i]);
    for (int i = 0; i < 8; i++) {
      free(fo[i]);
      free(uo[i]);
    }
  }
  if (fh) dlclose(fh);
  if (uh) dlclose(uh);
  mlc_sb_fini(&text);
  mlc_module_destroy(fb.gm);
  mlc_module_destroy(ub.gm);
}

/* ---- the cases ------------------------------------------------------------------ */

static void t_conv_add_relu(void) {
  fcase c = {.name = "conv_add_relu", .ninputs = 1, .inputs = {{F32, 4, {1, 8, 12, 12}}},
             .nconsts = 2, .consts = {{F32, 4, {16, 8, 3, 3}}, {F32, 3, {16, 1, 1}}},
             .nops = 3,
             .ops = {{MLC_OP_CONV, 2, {IN(0), CST(0)}, {AINTS("pads", 1, 1, 1, 1)}},
                     {MLC_OP_ADD, 2, {OP(0), CST(1)}, {ANONE}},
                     {MLC_OP_RELU, 1, {OP(1)}, {ANONE}}},
             .nrets = 1, .rets = {OP(2)}};
  run_case(&c);
}

static void t_matmul_add(void) {
  fcase c = {.name = "matmul_add", .ninputs = 2, .inputs = {{F32, 2, {6, 32}}, {F32, 1, {24}}},
             .nconsts = 1, .consts = {{F32, 2, {32, 24}}},
             .nops = 2,
             .ops = {{MLC_OP_MATMUL, 2, {IN(0), CST(0)}, {ANONE}}, {MLC_OP_ADD, 2, {OP(0), IN(1)}, {ANONE}}},
             .nrets = 1, .rets = {OP(1)}};
  run_case(&c);
}

static void t_elemwise_chain(void) {
  fcase c = {.name = "elemwise_chain", .ninputs = 2, .inputs = {{F32, 2, {7, 33}}, {F32, 2, {7, 33}}},
             .nconsts = 1, .consts = {{F32, 0, {0}}}, .const_value = {0.5},
             .nops = 4,
             .ops = {{MLC_OP_MUL, 2, {IN(0), CST(0)}, {ANONE}},
                     {MLC_OP_ADD, 2, {OP(0), IN(1)}, {ANONE}},
                     {MLC_OP_TANH, 1, {OP(1)}, {ANONE}},
                     {MLC_OP_SUB, 2, {OP(2), IN(0)}, {ANONE}}},
             .nrets = 1, .rets = {OP(3)}};
  run_case(&c);
}

static void t_reduce_epilogue(void) {
  fcase c = {.name = "reduce_epilogue", .ninputs = 1, .inputs = {{F32, 3, {4, 9, 20}}},
             .nconsts = 1, .consts = {{F32, 0, {0}}}, .const_value = {0.25},
             .nops = 3,
             .ops = {{MLC_OP_SUM, 1, {IN(0)}, {AINTS("axes", 2), AINT("keepdims", 0)}},
                     {MLC_OP_MUL, 2, {OP(0), CST(0)}, {ANONE}},
                     {MLC_OP_EXP, 1, {OP(1)}, {ANONE}}},
             .nrets = 1, .rets = {OP(2)}};
  run_case(&c);
}

static void t_two_outputs(void) {
  fcase c = {.name = "two_outputs", .ninputs = 2, .inputs = {{F32, 2, {5, 16}}, {F32, 2, {5, 16}}},
             .nops = 3,
             .ops = {{MLC_OP_ADD, 2, {IN(0), IN(1)}, {ANONE}},
                     {MLC_OP_RELU, 1, {OP(0)}, {ANONE}},
                     {MLC_OP_SIGMOID, 1, {OP(0)}, {ANONE}}},
             .nrets = 2, .rets = {OP(1), OP(0)}};
  run_case(&c);
}

static void t_const_tensor(void) {
  fcase c = {.name = "const_tensor", .ninputs = 1, .inputs = {{F32, 2, {3, 10}}},
             .nconsts = 2, .consts = {{F32, 2, {3, 10}}, {F32, 1, {10}}},
             .nops = 3,
             .ops = {{MLC_OP_MUL, 2, {IN(0), CST(0)}, {ANONE}},
                     {MLC_OP_ADD, 2, {OP(0), CST(1)}, {ANONE}},
                     {MLC_OP_MAXIMUM, 2, {OP(1), CST(0)}, {ANONE}}},
             .nrets = 1, .rets = {OP(2)}};
  run_case(&c);
}

static void t_symbolic_batch(void) {
  fcase c = {.name = "symbolic_batch", .ninputs = 2, .inputs = {{F32, 2, {N_, 16}}, {F32, 1, {8}}},
             .nconsts = 1, .consts = {{F32, 2, {16, 8}}},
             .nops = 3,
             .ops = {{MLC_OP_MATMUL, 2, {IN(0), CST(0)}, {ANONE}},
                     {MLC_OP_ADD, 2, {OP(0), IN(1)}, {ANONE}},
                     {MLC_OP_RELU, 1, {OP(1)}, {ANONE}}},
             .nrets = 1, .rets = {OP(2)}, .nbatch = 3, .batch = {1, 3, 7}};
  run_case(&c);
}

static void t_softmax_group(void) {
  fcase c = {.name = "softmax_scale", .ninputs = 1, .inputs = {{F32, 2, {4, 50}}},
             .nconsts = 1, .consts = {{F32, 0, {0}}}, .const_value = {0.125},
             .nops = 2,
             .ops = {{MLC_OP_MUL, 2, {IN(0), CST(0)}, {ANONE}}, {MLC_OP_SOFTMAX, 1, {OP(0)}, {AINT("axis", 1)}}},
             .nrets = 1, .rets = {OP(1)}};
  run_case(&c);
}

/* Two calls of one fused function share its prim function. */
static void t_shared(void) {
  fcase c = {.name = "shared_calls", .ninputs = 2, .inputs = {{F32, 2, {4, 8}}, {F32, 2, {4, 8}}},
             .nops = 2,
             .ops = {{MLC_OP_ADD, 2, {IN(0), IN(1)}, {ANONE}}, {MLC_OP_RELU, 1, {OP(0)}, {ANONE}}},
             .nrets = 1, .rets = {OP(1)}, .calls = 2};
  run_case(&c);
  built bt;
  if (!build_case(&c, 1, &bt)) {
    mlc_module_destroy(bt.gm);
    return;
  }
  /* a second primitive function with the same members, and one differing in
  ** its wiring (relu of the second input): one prim function for the first two */
  mlc_func *main_f = mlc_module_func(bt.gm, "main"), *g2 = NULL, *g3 = NULL;
  mlc_value *p[2], *q[2], *y = NULL, *z = NULL, *o2 = NULL, *o3 = NULL;
  MLC_TEST_OK_FATAL(mlc_func_create(bt.gm, "fused_other", &g2));
  MLC_TEST_OK_FATAL(mlc_func_create(bt.gm, "fused_wired", &g3));
  g2->primitive = g3->primitive = 1;
  for (int i = 0; i < 2; i++) {
    MLC_TEST_OK_FATAL(mlc_func_add_param(g2, NULL, &bt.in[i]->type, &p[i]));
    MLC_TEST_OK_FATAL(mlc_func_add_param(g3, NULL, &bt.in[i]->type, &q[i]));
  }
  MLC_TEST_OK_FATAL(mlc_graph_emit1(g2, MLC_OP_ADD, p, 2, NULL, 0, NULL, &y));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(g2, MLC_OP_RELU, &y, 1, NULL, 0, NULL, &y));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(g2, y));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(g3, MLC_OP_ADD, q, 2, NULL, 0, NULL, &z));
  MLC_TEST_OK_FATAL(mlc_graph_emit1(g3, MLC_OP_RELU, &q[1], 1, NULL, 0, NULL, &z));
  MLC_TEST_OK_FATAL(mlc_func_add_ret(g3, z));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(main_f, MLC_CALL_FUNC, "fused_other", bt.in, 2, NULL, 0, &y->type, 1,
                                        NULL, &o2));
  MLC_TEST_OK_FATAL(mlc_graph_emit_call(main_f, MLC_CALL_FUNC, "fused_wired", bt.in, 2, NULL, 0, &z->type, 1,
                                        NULL, &o3));
  MLC_TEST_OK_FATAL(mlc_lower_pass_fuse_tir(bt.gm, NULL));
  mlc_tir_module *tm = bt.gm->prims;
  CU_ASSERT_PTR_NOT_NULL_FATAL(tm);
  CU_ASSERT_EQUAL(tm->nfuncs, 2);
  CU_ASSERT_STRING_EQUAL(o2->def->callee, "fused_group");
  CU_ASSERT_STRING_EQUAL(o3->def->callee, "fused_wired");
  CU_ASSERT_EQUAL(bt.gm->nfuncs, 1); /* only main is left */
  mlc_module_destroy(bt.gm);
}

/* A module without primitive functions: fuse_tir changes nothing. */
static void t_no_groups(void) {
  fcase c = {.name = "no_groups", .ninputs = 2, .inputs = {{F32, 2, {4, 8}}, {F32, 2, {4, 8}}},
             .nops = 2,
             .ops = {{MLC_OP_ADD, 2, {IN(0), IN(1)}, {ANONE}}, {MLC_OP_RELU, 1, {OP(0)}, {ANONE}}},
             .nrets = 1, .rets = {OP(1)}};
  built bt;
  if (build_case(&c, 0, &bt)) {
    mlc_strbuf a = MLC_STRBUF_INIT, b = MLC_STRBUF_INIT;
    mlc_graph_print(bt.gm, &a);
    MLC_TEST_OK(mlc_lower_pass_fuse_tir(bt.gm, NULL));
    mlc_graph_print(bt.gm, &b);
    CU_ASSERT_STRING_EQUAL(mlc_sb_str(&a), mlc_sb_str(&b));
    CU_ASSERT_PTR_NULL(bt.gm->prims);
    mlc_sb_fini(&a);
    mlc_sb_fini(&b);
  }
  mlc_module_destroy(bt.gm);
}

/* The pattern of the call_tir is the highest of its members; covered stays. */
static void t_pattern_covered(void) {
  fcase c = {.name = "pattern", .ninputs = 1, .inputs = {{F32, 2, {6, 32}}},
             .nconsts = 1, .consts = {{F32, 2, {32, 24}}},
             .nops = 2,
             .ops = {{MLC_OP_MATMUL, 2, {IN(0), CST(0)}, {ANONE}}, {MLC_OP_RELU, 1, {OP(0)}, {ANONE}}},
             .nrets = 1, .rets = {OP(1)}};
  built bt;
  if (build_case(&c, 1, &bt)) {
    mlc_binding *b = bt.rets[0]->def;
    MLC_TEST_OK(mlc_lower_pass_fuse_tir(bt.gm, NULL));
    CU_ASSERT_EQUAL(b->kind, MLC_CALL_TIR);
    CU_ASSERT_EQUAL(b->pattern, mlc_op_pattern[MLC_OP_MATMUL]);
    CU_ASSERT_EQUAL(b->ncovered, 2);
    CU_ASSERT_EQUAL(b->nargs, 2); /* the input, then the weight constant */
    CU_ASSERT_EQUAL(b->args[1]->kind, MLC_VALUE_CONST);
  }
  mlc_module_destroy(bt.gm);
}

/* A member without a lowering rule: an error naming the function and node. */
static void t_error(void) {
  fcase c = {.name = "error", .ninputs = 2, .inputs = {{F32, 2, {4, 8}}, {F32, 2, {4, 8}}},
             .nops = 2,
             .ops = {{MLC_OP_ADD, 2, {IN(0), IN(1)}, {ANONE}}, {MLC_OP_RELU, 1, {OP(0)}, {ANONE}}},
             .nrets = 1, .rets = {OP(1)}};
  built bt;
  /* a member reading a value defined outside the group */
  if (build_case(&c, 1, &bt)) {
    mlc_func *g = mlc_module_func(bt.gm, "fused_group");
    mlc_binding *relu = g->blocks[0].bindings[1];
    relu->args[0] = bt.in[0]; /* main's parameter, not the group's */
    MLC_TEST_ERR(mlc_lower_pass_fuse_tir(bt.gm, NULL), MLC_INVALID_ARGUMENT, "fused function \"fused_group\"",
                 "node \"n1\"", "no parameter of the fused function");
  }
  mlc_module_destroy(bt.gm);
}

static void register_suites(void) {
  print_tir = getenv("MLC_TEST_PRINT_TIR") && strcmp(getenv("MLC_TEST_PRINT_TIR"), "1") == 0;
  static const CU_TestInfo pass[] = {
      {"shared", t_shared},
      {"no_groups", t_no_groups},
      {"pattern_covered", t_pattern_covered},
      {"errors", t_error},
      CU_TEST_INFO_NULL,
  };
  static const CU_TestInfo numeric[] = {
      {"conv_add_relu", t_conv_add_relu},
      {"matmul_add", t_matmul_add},
      {"elemwise_chain", t_elemwise_chain},
      {"reduce_epilogue", t_reduce_epilogue},
      {"two_outputs", t_two_outputs},
      {"const_tensor", t_const_tensor},
      {"symbolic_batch", t_symbolic_batch},
      {"softmax_scale", t_softmax_group},
      CU_TEST_INFO_NULL,
  };
  CU_pSuite s = CU_add_suite("fuse_tir_numeric", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (const CU_TestInfo *t = numeric; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
  s = CU_add_suite("fuse_tir_pass", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (const CU_TestInfo *t = pass; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_fuse_tir", fns);
}
