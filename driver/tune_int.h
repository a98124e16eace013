/*
** tune_int.h: private to the tuner (driver/tune*.c) and to compile's use
** of a tuning log.
**
** The log (tune_log.c) is a text file of JSON lines, one record per
** measured candidate of a task (a distinct kernel):
**
**   {"v": 1, "task": "3f0c...", "target": "llvm -mcpu=znver4", "features": "+avx2,...",
**    "kernel": "fused_matmul_add", "weight": 4, "default": false, "decisions": [2, 0, 1],
**    "trace": "b0 = sch.get_block(...)\n...", "ms": 0.0912, "times_ms": [...],
**    "x": [features of the cost model], "error": null, "validated": false}
**
** keyed by the task's structural hash (mlc_lower_func_key), the target
** and the CPU features; "ms" is the median time (null when the candidate
** failed: "error" says why).  "validated" marks the measurements of the
** final comparison of a task's best candidates with its default (measured
** side by side): when a task has such records, its best is taken among
** them.  Lines are appended as measurements arrive,
** so an interrupted run loses nothing; a line that does not parse, or of
** another version, is reported and skipped.
*/
#ifndef MLC_DRIVER_TUNE_INT_H
#define MLC_DRIVER_TUNE_INT_H

#include <stdint.h>
#include <stdio.h>

#include "base/status.h"
#include "codegen/target.h"
#include "lower/lower.h"

#define MLC_TUNE_LOG_VERSION 1
#define MLC_TUNE_MAX_TIMES 16

typedef struct mlc_tune_record {
  char task[17];
  char *target, *features, *kernel, *trace, *error;
  int weight;
  int is_default;
  int validated; /* a measurement of the final comparison (see tune.c) */
  int ndec;
  int64_t dec[MLC_LOWER_MAX_DECISIONS];
  double ms; /* median; < 0: failed */
  int ntimes;
  double times[MLC_TUNE_MAX_TIMES];
  int nx;
  float x[MLC_LOWER_NFEATURES];
} mlc_tune_record;

typedef struct mlc_tune_log {
  int n, cap;
  mlc_tune_record *recs;
} mlc_tune_log;

/* Reads the log at |path| into |log| (a missing file is an empty log).
** Each line that is not a valid record is reported through |warn| (may be
** NULL) as "PATH:LINE: why" and skipped. */
MLC_MUST_USE mlc_status mlc_drv_tune_log_read(const char *path, mlc_tune_log *log,
                                              void (*warn)(void *user, const char *line), void *user);
/* Appends a copy of |r| to |log|. */
MLC_MUST_USE mlc_status mlc_drv_tune_log_add(mlc_tune_log *log, const mlc_tune_record *r);
/* Writes |r| as one line to |f| and flushes it. */
MLC_MUST_USE mlc_status mlc_drv_tune_log_write(FILE *f, const mlc_tune_record *r);
void mlc_drv_tune_log_fini(mlc_tune_log *log);
/* The fastest successful record of the task (|task|, |target|, |features|),
** among the records of its last validation when it has one (a later run,
** e.g. after the default schedule changed, compares side by side again:
** its times are not compared with an earlier run's), or NULL; borrowed. */
const mlc_tune_record *mlc_drv_tune_log_best(const mlc_tune_log *log, const char *task, const char *target,
                                             const char *features);
/* Frees what |r| holds (not |r|). */
void mlc_drv_tune_record_fini(mlc_tune_record *r);

/* The target's key strings: its spec with the CPU ("llvm -mcpu=znver4")
** into |spec|, and its feature string (borrowed). */
void mlc_drv_tune_target_key(const mlc_target *t, char *spec, size_t n, const char **features);

/* ---- measuring (tune_measure.c) --------------------------------------------- */

typedef struct mlc_tune_cand {
  mlc_tir_module *tm; /* owns the lowered function */
  mlc_tir_func *fn;   /* lowered */
  char *trace;
  int ndec;
  int64_t dec[MLC_LOWER_MAX_DECISIONS];
  float x[MLC_LOWER_NFEATURES];
  char so[512];      /* the built library ("" until built) */
  int built;         /* 1 built, -1 failed */
  double ms;         /* median, < 0 failed */
  int ntimes;
  double times[MLC_TUNE_MAX_TIMES];
  char error[256];
} mlc_tune_cand;

typedef struct mlc_tune_measure_opts {
  const mlc_target *target;
  const char *workdir;
  int jobs;          /* parallel builds */
  int threads;       /* threads a kernel runs on */
  double min_ms;     /* the least time of one measurement (repeated calls) */
  int repeats;       /* measurements; the median is kept */
  double timeout_s;  /* a candidate that runs longer is killed: failed */
} mlc_tune_measure_opts;

void mlc_drv_tune_cand_free(mlc_tune_cand *c);
/* Builds each of |c[0..n)| into a shared object in |o->workdir|, |o->jobs|
** at a time, each in a child process (built / error set). */
void mlc_drv_tune_build(const mlc_tune_measure_opts *o, mlc_tune_cand **c, int n);
/* Times built candidate |c| in a child process on seeded random inputs
** (ms, times or error set).  |ref| is the file of the task's reference
** results: written when |write_ref|, else compared with (a candidate whose
** results differ has failed). */
void mlc_drv_tune_run(const mlc_tune_measure_opts *o, mlc_tune_cand *c, const char *ref, int write_ref);

/* ---- the cost model (tune_model.c) ------------------------------------------ */

typedef struct mlc_tune_model mlc_tune_model;
/* What ranks candidates: "xgboost X.Y.Z" or the fallback (static). */
const char *mlc_drv_tune_model_kind(void);
MLC_MUST_USE mlc_status mlc_drv_tune_model_create(uint64_t seed, mlc_tune_model **out);
void mlc_drv_tune_model_destroy(mlc_tune_model *m);
/* One measured sample: features and label (higher is faster). */
MLC_MUST_USE mlc_status mlc_drv_tune_model_add(mlc_tune_model *m, const float *x, double label);
/* Retrains on every sample (gradient-boosted trees). */
MLC_MUST_USE mlc_status mlc_drv_tune_model_fit(mlc_tune_model *m);
/* Scores of |n| rows of features |x| (higher: predicted faster) into
** |out|: the model's once fitted on enough samples, else seeded random
** values (*|trained| 0). */
MLC_MUST_USE mlc_status mlc_drv_tune_model_predict(mlc_tune_model *m, const float *x, int n, double *out,
                                                   int *trained);

/* ---- the model's kernels (compile.c) -------------------------------------- */

/* The model's kernels before scheduling, as the schedule pass saw them:
** name, TIR text and structural key (mlc_lower_func_key) of each. */
typedef struct mlc_tune_kernels {
  int n;
  char **name, **text;
  char (*key)[17];
} mlc_tune_kernels;
void mlc_drv_tune_kernels_fini(mlc_tune_kernels *k);

/* Imports |onnx_path| and runs the pipeline as compile does (no external
** libraries) for |target|: *|gm| (transferred) with its prim functions,
** |k| with each one before scheduling. */
MLC_MUST_USE mlc_status mlc_drv_lower_model(const char *onnx_path, const mlc_compile_options *o,
                                            const mlc_target *target, mlc_module **gm, mlc_tune_kernels *k);

#endif /* MLC_DRIVER_TUNE_INT_H */
