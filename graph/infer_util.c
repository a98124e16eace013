/*
** infer_util.c: helpers the inference rule files (infer*.c) share: setting
** outputs, checking arguments' dtypes and ranks, and reading attributes
** with validation.  Every error goes through mlc_graph_call_error, so it
** names the ONNX node and the op.
*/
#include <string.h>

#define MLC_GRAPH_INFER_SHORTHANDS
#include "graph/graph_int.h"


/* ---- outputs and arguments ---------------------------------------------- */

mlc_status mlc_graph_set_out(const mlc_call_info *ci, mlc_type *outs, int k, mlc_dtype dt,
                             const int64_t *dims, int rank) {
  int64_t *d = mlc_module_dims(ci->mod, dims, rank);
  if (!d && rank > 0) return mlc_oom();
  outs[k].dtype = dt;
  outs[k].rank = rank;
  outs[k].dims = d;
  return NULL;
}

mlc_status mlc_graph_ret1(const mlc_call_info *ci, mlc_type *outs, int *nouts, mlc_dtype dt,
                          const int64_t *dims, int rank) {
  MLC_RETURN_IF_ERROR(mlc_graph_set_out(ci, outs, 0, dt, dims, rank));
  *nouts = 1;
  return NULL;
}

mlc_status mlc_graph_check_args(const mlc_call_info *ci, int max_rank) {
  for (int i = 0; i < ci->nargs; i++) {
    const mlc_type *t = mlc_graph_arg(ci, i);
    if (!mlc_graph_valid_dtype(t->dtype) || t->dtype == MLC_DTYPE_STRING)
      return ERR("argument %d has dtype %s, expected a numeric or bool type", i,
                 mlc_graph_valid_dtype(t->dtype) ? mlc_dtype_name(t->dtype) : "invalid");
    if (t->rank < 0) return ERR("argument %d has negative rank %d", i, t->rank);
    if (t->rank > max_rank) return UNIMPL("argument %d has rank %d (at most %d)", i, t->rank, max_rank);
  }
  return NULL;
}

/* ---- attributes --------------------------------------------------------- */

mlc_status mlc_graph_attr_int(const mlc_call_info *ci, const char *name, int64_t dflt, int64_t *out) {
  const mlc_attr *a = mlc_attrs_find(ci->attrs, ci->nattrs, name);
  *out = dflt;
  if (!a) return NULL;
  if (a->kind != MLC_ATTR_INT) return ERR("attribute %s must be an int", name);
  *out = a->i;
  return NULL;
}

mlc_status mlc_graph_attr_flag(const mlc_call_info *ci, const char *name, int dflt, int *out) {
  int64_t v;
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, name, dflt, &v));
  if (v != 0 && v != 1) return ERR("attribute %s = %lld must be 0 or 1", name, LL(v));
  if (out) *out = (int)v;
  return NULL;
}

mlc_status mlc_graph_attr_number(const mlc_call_info *ci, const char *name) {
  const mlc_attr *a = mlc_attrs_find(ci->attrs, ci->nattrs, name);
  if (a && a->kind != MLC_ATTR_FLOAT && a->kind != MLC_ATTR_INT)
    return ERR("attribute %s must be a number", name);
  return NULL;
}

mlc_status mlc_graph_attr_axis(const mlc_call_info *ci, const char *name, int rank, int64_t dflt,
                               int *out) {
  int64_t v;
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, name, dflt, &v));
  if (v < 0 || v >= rank) return ERR("%s %lld is out of range for rank %d", name, LL(v), rank);
  *out = (int)v;
  return NULL;
}

mlc_status mlc_graph_attr_choice(const mlc_call_info *ci, const char *name, const char *dflt,
                                 const char *const *allowed, const char **out) {
  const mlc_attr *a = mlc_attrs_find(ci->attrs, ci->nattrs, name);
  *out = dflt;
  if (!a) return NULL;
  if (a->kind != MLC_ATTR_STRING || !a->s) return ERR("attribute %s must be a string", name);
  for (const char *const *p = allowed; *p; p++)
    if (strcmp(a->s, *p) == 0) {
      *out = *p;
      return NULL;
    }
  return ERR("attribute %s = \"%s\" is not supported", name, a->s);
}
