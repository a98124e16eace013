/*
** tune_model.c: the tuner's cost model.
**
** Gradient-boosted regression trees (XGBoost's C API) over the features of
** each measured candidate's lowered function (mlc_lower_features), with
** its speed relative to its task's default schedule as the label, retrained
** from scratch as measurements arrive (a few hundred samples: milliseconds).
** One thread and the exact tree method, seeded: the same samples give the
** same model and the same ranking.
**
** Without XGBoost (configure says so) the ranking is seeded random: the
** search is then a random and evolutionary one that measures what it
** proposes, in the order drawn.
*/
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "driver/tune_int.h"

#ifdef MLC_HAVE_XGBOOST
#include <xgboost/c_api.h>
#endif

/* Samples before the model ranks (fewer: random order). */
#define MIN_SAMPLES 8
#define ROUNDS 40

struct mlc_tune_model {
  uint64_t rng;
  int n, cap;
  float *x;     /* n rows of MLC_LOWER_NFEATURES */
  float *y;
  int fitted_n; /* samples the booster was fitted on */
#ifdef MLC_HAVE_XGBOOST
  BoosterHandle booster;
#endif
};

const char *mlc_drv_tune_model_kind(void) {
#ifdef MLC_HAVE_XGBOOST
  static char kind[64];
  int a = 0, b = 0, c = 0;
  XGBoostVersion(&a, &b, &c);
  snprintf(kind, sizeof kind, "xgboost %d.%d.%d", a, b, c);
  return kind;
#else
  return "random ranking (built without xgboost)";
#endif
}

mlc_status mlc_drv_tune_model_create(uint64_t seed, mlc_tune_model **out) {
  mlc_tune_model *m = mlc_mem_calloc(1, sizeof *m);
  if (!m) return mlc_oom();
  m->rng = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  if (!m->rng) m->rng = 1;
  *out = m;
  return NULL;
}

void mlc_drv_tune_model_destroy(mlc_tune_model *m) {
  if (!m) return;
#ifdef MLC_HAVE_XGBOOST
  if (m->booster) XGBoosterFree(m->booster);
#endif
  mlc_mem_free(m->x);
  mlc_mem_free(m->y);
  mlc_mem_free(m);
}

mlc_status mlc_drv_tune_model_add(mlc_tune_model *m, const float *x, double label) {
  if (m->n == m->cap) {
    int cap = m->cap ? 2 * m->cap : 256;
    float *nx = mlc_mem_realloc(m->x, (size_t)cap * MLC_LOWER_NFEATURES * sizeof *nx);
    if (!nx) return mlc_oom();
    m->x = nx;
    float *ny = mlc_mem_realloc(m->y, (size_t)cap * sizeof *ny);
    if (!ny) return mlc_oom();
    m->y = ny;
    m->cap = cap;
  }
  memcpy(&m->x[(size_t)m->n * MLC_LOWER_NFEATURES], x, MLC_LOWER_NFEATURES * sizeof *x);
  m->y[m->n++] = (float)label;
  return NULL;
}

#ifdef MLC_HAVE_XGBOOST
static mlc_status xgb_error(const char *what) {
  return mlc_make_status(MLC_INTERNAL, "xgboost %s: %s", what, XGBGetLastError());
}
#endif

mlc_status mlc_drv_tune_model_fit(mlc_tune_model *m) {
#ifdef MLC_HAVE_XGBOOST
  if (m->n < MIN_SAMPLES || m->n == m->fitted_n) return NULL;
  DMatrixHandle d = NULL;
  BoosterHandle b = NULL;
  if (XGDMatrixCreateFromMat(m->x, (bst_ulong)m->n, MLC_LOWER_NFEATURES, -1e30f, &d)) return xgb_error("matrix");
  mlc_status s = NULL;
  if (XGDMatrixSetFloatInfo(d, "label", m->y, (bst_ulong)m->n)) s = xgb_error("labels");
  if (!s && XGBoosterCreate(&d, 1, &b)) s = xgb_error("booster");
  static const char *const params[][2] = {
      {"objective", "reg:squarederror"}, {"max_depth", "6"}, {"eta", "0.2"}, {"min_child_weight", "1"},
      {"subsample", "1"}, {"tree_method", "exact"}, {"nthread", "1"}, {"seed", "0"}, {"verbosity", "0"}};
  for (size_t i = 0; !s && i < sizeof params / sizeof params[0]; i++)
    if (XGBoosterSetParam(b, params[i][0], params[i][1])) s = xgb_error("parameters");
  for (int it = 0; !s && it < ROUNDS; it++)
    if (XGBoosterUpdateOneIter(b, it, d)) s = xgb_error("training");
  XGDMatrixFree(d);
  if (s) {
    if (b) XGBoosterFree(b);
    return s;
  }
  if (m->booster) XGBoosterFree(m->booster);
  m->booster = b;
  m->fitted_n = m->n;
#else
  (void)m;
#endif
  return NULL;
}

mlc_status mlc_drv_tune_model_predict(mlc_tune_model *m, const float *x, int n, double *out, int *trained) {
  *trained = 0;
#ifdef MLC_HAVE_XGBOOST
  if (m->booster && n > 0) {
    DMatrixHandle d = NULL;
    bst_ulong len = 0;
    const float *res = NULL;
    if (XGDMatrixCreateFromMat(x, (bst_ulong)n, MLC_LOWER_NFEATURES, -1e30f, &d)) return xgb_error("matrix");
    int bad = XGBoosterPredict(m->booster, d, 0, 0, 0, &len, &res);
    if (!bad && len == (bst_ulong)n)
      for (int i = 0; i < n; i++) out[i] = res[i];
    XGDMatrixFree(d);
    if (bad) return xgb_error("prediction");
    if (len == (bst_ulong)n) {
      *trained = 1;
      return NULL;
    }
  }
#else
  (void)x;
#endif
  for (int i = 0; i < n; i++) {
    m->rng ^= m->rng << 13, m->rng ^= m->rng >> 7, m->rng ^= m->rng << 17;
    out[i] = (double)(m->rng >> 11) / 9007199254740992.0;
  }
  return NULL;
}
