/*
** harness.h: the model harnesses shared by the compile-path test programs.
**
** One-node ONNX cases (mcase): a small protobuf encoder writes a ModelProto
** with one NodeProto, graph inputs, initializers for the inputs marked
** |init| and outputs (dims optionally declared as dim_params); the case is
** compiled with mlc_compile_file into a model .so in mlc_th_tmpdir, loaded
** through mlc/mlc_runtime.h, run, and every output compared with the case's
** expected values (floats with rtol 1e-4 and atol 1e-5, float64 1e-9,
** integers exactly).
**
** Compiling and loading a model file: mlc_th_compile and mlc_th_load.
** The temporary directory: mlc_th_tmp_init / mlc_th_tmp_clean as a suite's
** CUnit init/clean, or mlc_th_main for the whole program.
*/
#ifndef MLC_TESTS_HARNESS_H
#define MLC_TESTS_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "mlc/mlc.h"
#include "mlc/mlc_runtime.h"
#include "tests/testutil.h"

/* The temporary directory of the program (owned by the harness). */
extern char *mlc_th_tmpdir;

/* CUnit suite init: creates mlc_th_tmpdir; 0 on success. */
int mlc_th_tmp_init(void);
/* CUnit suite clean: removes mlc_th_tmpdir and its files. */
int mlc_th_tmp_clean(void);
/* mlc_test_main(|program|, |fns|) with mlc_th_tmpdir made before and
** removed after (kept when MLC_KEEP_TEMP is set); its exit status. */
int mlc_th_main(const char *program, const mlc_test_register_fn *fns);

/* Compiles |onnx| into mlc_th_tmpdir/<name>.so, written to |so| (|size|
** bytes); asserts success, printing "<prefix>compile <name>: <message>" on
** failure.  1 when it compiled. */
int mlc_th_compile(const char *onnx, const char *name, const char *prefix, char *so, size_t size);
/* Loads |so|; the model (transferred to the caller), or NULL after printing
** "<prefix>load <name>: <error>".  Asserts nothing. */
mlc_model *mlc_th_load(const char *so, const char *name, const char *prefix);

/* Runs |m| on the input |in| from 8 threads at once, each with a session
** of 2 threads doing |iters| runs: asserts that every run succeeds and
** gives the bits of the first 64 output values that all the others give. */
void mlc_th_check_concurrent(mlc_model *m, const DLTensor *in, int iters);

/* ---- one-node ONNX cases ---------------------------------------------------------- */

/* ONNX TensorProto.DataType codes */
enum { T_F32 = 1, T_U8 = 2, T_I32 = 6, T_I64 = 7, T_BOOL = 9, T_F64 = 11 };

/* kDLBool of DLPack >= 0.8 (older headers lack it). */
#define DL_BOOL 6
#define MLC_TH_MAXR 6
#define MLC_TH_MAXEL 4096

/* A tensor of a case: an input (graph input, or an initializer when |init|),
** or an expected output.  Values are doubles, converted to the dtype.
** Dims whose bit is set in |sym| are declared as dim_params ("d<i>"). */
typedef struct ten {
  const char *name; /* "" marks an omitted optional input */
  int type;         /* ONNX data type */
  int rank;
  int64_t dims[MLC_TH_MAXR];
  int init;
  unsigned sym;
  double v[MLC_TH_MAXEL];
} ten;

typedef struct attr {
  const char *name;
  char kind; /* 'i' int, 'f' float, 's' string, 'I' ints */
  int64_t i;
  double f;
  const char *s;
  int n;
  int64_t ints[8];
} attr;

typedef struct mcase {
  const char *name, *op;
  const char *node; /* the node's name; NULL: "node0" */
  int opset;
  int nin, nout, nattr;
  ten in[5], out[4];
  attr at[8];
} mcase;

/* The element count of |t|. */
int64_t mlc_th_numel_of(const ten *t);
/* The byte size of one element of ONNX type |type|. */
size_t mlc_th_tsize(int type);
/* Stores |v| converted to ONNX type |type| as element |i| of |p| (borrowed). */
void mlc_th_store(int type, void *p, int64_t i, double v);
/* The DLPack type of ONNX type |type|. */
DLDataType mlc_th_dl_of(int type);
/* Element |i| of |t| (borrowed) as a double. */
double mlc_th_load_dl(const DLTensor *t, int64_t i);
/* |t|'s values in its dtype (malloc'd, transferred to the caller). */
void *mlc_th_raw_of(const ten *t);
/* The serialized ModelProto of |c| (malloc'd bytes in *out, transferred);
** its size. */
size_t mlc_th_model_bytes(const mcase *c, unsigned char **out);
/* Writes |c|'s model and compiles it into |so| (|size| bytes); returns the
** status (transferred). */
mlc_status mlc_th_compile_case(const mcase *c, char *so, size_t size);
/* Compiles and runs |c|: *rs the run status (the session's last error in
** |err|); with |check|, compares every output. */
void mlc_th_run_model(const mcase *c, int check, mlc_rt_status *rs, char *err, size_t esize);
/* Compiles, runs and compares every output of |c|. */
void mlc_th_run_case(const mcase *c);
/* Compiling |c| fails with |code| and a message containing |a| and |b|
** (|b| may be NULL). */
void mlc_th_expect_error(const mcase *c, mlc_code code, const char *a, const char *b);
/* Compiling |c| works but running it fails with a message containing |a|. */
void mlc_th_expect_run_error(const mcase *c, const char *a);

/* ---- building cases ---------------------------------------------------------------- */

/* The state of mlc_th_urand (a program may reseed it before its tests). */
extern uint64_t mlc_th_rng;
/* A uniform double in [0, 1). */
double mlc_th_urand(void);
/* A tensor named |name| (borrowed) of |type| and shape; random values in
** [lo, hi) (integers: floor). */
ten mlc_th_tensor(const char *name, int type, int rank, const int64_t *dims, double lo, double hi);
/* An output tensor of zeros. */
ten mlc_th_output(const char *name, int type, int rank, const int64_t *dims);
/* A one-element tensor (rank 0, or rank 1 with |vec|) holding |v|. */
ten mlc_th_scalar(const char *name, int type, double v, int init, int vec);
/* Attributes (names and strings borrowed). */
attr mlc_th_aint(const char *name, int64_t v);
attr mlc_th_aflt(const char *name, double v);
attr mlc_th_astr(const char *name, const char *s);
attr mlc_th_aints(const char *name, int n, const int64_t *v);
/* A zeroed case (calloc'd, transferred to the caller). */
mcase *mlc_th_new_case(const char *name, const char *op, int opset);

#endif /* MLC_TESTS_HARNESS_H */
