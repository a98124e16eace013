/*
** harness_kernel.h: the one-op differential harness shared by the
** legalization test programs (test_legalize, test_image_ops).
**
** A case (tcase) names one graph op over parameters of given types (dims
** N_ are the symbolic batch n).  mlc_th_kernel_case builds the one-op graph
** module, legalizes it, verifies the prim function, compiles it with the
** code generator into an object, links it with cc into a shared object,
** loads it and calls the kernel with DLTensors through a serial mlc_rt_api
** table, on seeded random data (or fixed argument values) for each batch
** size.  The expected output comes from the case's C reference, or from the
** graph's reference evaluator (mlc_graph_eval).  Integers compare exactly,
** floats with a relative and absolute tolerance chosen by dtype (or the
** case's).  float16/bfloat16 elements convert with base/half.h.
**
** The suite using mlc_th_kernel_case takes mlc_th_kernel_init and
** mlc_th_kernel_clean as its CUnit init/clean functions.
** MLC_TEST_PRINT_TIR=1 prints every legalized prim function.
*/
#ifndef MLC_TESTS_HARNESS_KERNEL_H
#define MLC_TESTS_HARNESS_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

#define MAXR 8
#define F32 MLC_DTYPE_F32
#define F64 MLC_DTYPE_F64
#define F16 MLC_DTYPE_F16
#define BF16 MLC_DTYPE_BF16
#define I8 MLC_DTYPE_I8
#define I32 MLC_DTYPE_I32
#define I64 MLC_DTYPE_I64
#define U8 MLC_DTYPE_U8
#define BOOL MLC_DTYPE_BOOL
#define N_ (-1) /* the symbolic batch n (the first symbol of the module) */

#define AINT(n, v) {n, MLC_ATTR_INT, v, 0, NULL, 0, NULL, NULL}
#define AFLT(n, v) {n, MLC_ATTR_FLOAT, 0, v, NULL, 0, NULL, NULL}
#define ASTR(n, v) {n, MLC_ATTR_STRING, 0, 0, v, 0, NULL, NULL}
#define AINTS(n, ...)                                                                   \
  {n, MLC_ATTR_INTS, 0, 0, NULL, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
   (const int64_t[]){__VA_ARGS__}, NULL}
#define AFLTS(n, ...)                                                                   \
  {n, MLC_ATTR_FLOATS, 0, 0, NULL, (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), NULL, \
   (const double[]){__VA_ARGS__}}
#define ANONE {NULL, MLC_ATTR_INT, 0, 0, NULL, 0, NULL, NULL}

/* ---- cases ------------------------------------------------------------------ */

typedef struct targ {
  mlc_dtype dt;
  int rank;
  int64_t dims[MAXR]; /* N_: the symbolic batch */
} targ;

struct tcase;
/* A reference: |out| (of type |ot|) from the concrete args. */
typedef void (*ref_fn)(const struct tcase *tc, const mlc_type *at, const void *const *in,
                       const mlc_type *ot, void *out);
/* Fills argument |i| (type |t|) instead of the uniform generator. */
typedef void (*gen_fn)(const struct tcase *tc, int i, const mlc_type *t, void *data, uint64_t *rng);

typedef struct tcase {
  const char *name;
  mlc_op op;
  int nargs;
  targ args[4];
  mlc_attr attrs[12]; /* up to the first with a NULL name */
  int nbatch;        /* values of n to run (0: no symbolic dims) */
  int64_t batch[3];
  ref_fn ref;        /* NULL: mlc_graph_eval */
  gen_fn gen;
  int ints;          /* float args hold small integers (ties) */
  double lo, hi;     /* float range, default [-2, 2] */
  int64_t ilo, ihi;  /* integer range, default [-9, 9] */
  double rtol, atol; /* 0: by dtype */
  const double *fixed[4]; /* fixed contents of an argument (NULL: generated) */
} tcase;

/* Nonzero: a case's atol also bounds integer differences (truncated
** interpolations); 0 (the default): integers compare exactly. */
extern int mlc_th_int_atol;

/* ---- element access (borrowed buffers, |i| an element index) ----------------- */

/* Element |i| of |p| (of dtype |t|) as a double. */
double mlc_th_ldd(const void *p, mlc_dtype t, int64_t i);
/* Element |i| of |p| as an int64 (exact for 64-bit integers). */
int64_t mlc_th_ldi(const void *p, mlc_dtype t, int64_t i);
/* Stores |v| converted to |t| as element |i| of |p|. */
void mlc_th_st(void *p, mlc_dtype t, int64_t i, double v);
/* The element count of |t| (borrowed). */
int64_t mlc_th_numel(const mlc_type *t);
/* The byte size of a dense tensor of type |t| (borrowed). */
size_t mlc_th_nbytes(const mlc_type *t);
/* The number of attributes of |tc| (up to the first with a NULL name). */
int mlc_th_nattrs_of(const tcase *tc);

/* ---- random data ------------------------------------------------------------ */

/* The next xorshift64 value of the state *s. */
uint64_t mlc_th_next(uint64_t *s);
/* A uniform double in [0, 1) from the state *s. */
double mlc_th_unit(uint64_t *s);
/* Fills argument |i| of |tc| (type |t|) into |data| (borrowed), with the
** case's generator, its fixed values or uniform values in its ranges. */
void mlc_th_fill(const tcase *tc, int i, const mlc_type *t, void *data, uint64_t *rng);

/* ---- running ------------------------------------------------------------------ */

/* CUnit suite init: a temporary directory and the host target; 0 on success. */
int mlc_th_kernel_init(void);
/* CUnit suite clean: frees what mlc_th_kernel_init made. */
int mlc_th_kernel_clean(void);
/* Legalizes and compiles |tc| (borrowed), then runs and checks it for each
** batch size, with CUnit assertions. */
void mlc_th_kernel_case(const tcase *tc);

/* ---- helpers for C references ------------------------------------------------- */

/* Integer attribute |name| of |tc| (|dflt| when absent). */
int64_t mlc_th_attr_i(const tcase *tc, const char *name, int64_t dflt);
/* Entry |i| of the ints attribute |name| of |tc| (|dflt| when absent). */
int64_t mlc_th_attr_at(const tcase *tc, const char *name, int i, int64_t dflt);
/* Row-major offset of |idx| in |dims|. */
int64_t mlc_th_offset(const int64_t *dims, int rank, const int64_t *idx);
/* Advances the multi-index |idx| over |dims|; 0 when it wraps around. */
int mlc_th_advance(int64_t *idx, const int64_t *dims, int rank);
/* Nonzero when one of |dims| is 0. */
int mlc_th_any_zero(const int64_t *dims, int rank);

#endif /* MLC_TESTS_HARNESS_KERNEL_H */

/* ---- for other harnesses -------------------------------------------------------- */

struct mlc_tir_module;
struct mlc_rt_ctx;
/* Lowers |tm| (in place), compiles it to a shared object and dlopens it;
** the handle, or NULL after a failed CUnit assertion (messages name
** |name|). */
void *mlc_th_load_tir(struct mlc_tir_module *tm, const char *name);
/* The serial runtime context kernels are called with; its last error text. */
struct mlc_rt_ctx *mlc_th_rt_ctx(void);
const char *mlc_th_rt_error(void);
