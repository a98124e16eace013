/*
** infer_misc.c: struct-info inference of the "other math" ops of ops.def:
** trilu, cumsum, topk, einsum and reverse_sequence.
**
** As in infer.c, a rule validates its arguments' dtypes and ranks and every
** attribute it reads (the frontend normalizes them, but a rule never trusts
** them) and reports problems through mlc_graph_call_error, which names the
** ONNX node and the op.  Output dims live in the module arena.
*/
#include <stdio.h>
#include <string.h>

#define MLC_GRAPH_INFER_SHORTHANDS
#include "graph/graph_int.h"

/* Largest rank a rule handles (stack buffers). */
#define MAX_RANK 64
/* Labels of an einsum equation: 'a'..'z', 'A'..'Z'. */
#define NLABELS 52


/* An axis attribute in [0, rank). */
static mlc_status attr_axis(const mlc_call_info *ci, const char *name, int rank, int64_t *out) {
  if (!mlc_attrs_find(ci->attrs, ci->nattrs, name)) return ERR("attribute %s is missing", name);
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, name, 0, out));
  if (*out < 0 || *out >= rank) return ERR("%s %lld is out of range for rank %d", name, LL(*out), rank);
  return NULL;
}

/* Argument |i| is an integer tensor of one element (a run-time scalar). */
static mlc_status int_scalar_arg(const mlc_call_info *ci, int i, const char *what) {
  const mlc_type *t = mlc_graph_arg(ci, i);
  if (!mlc_dtype_is_int(t->dtype))
    return ERR("%s (argument %d) has dtype %s, expected an integer type", what, i,
               mlc_dtype_name(t->dtype));
  if (t->rank > 1 || mlc_type_numel(t) != 1)
    return ERR("%s (argument %d) must have exactly one element", what, i);
  return NULL;
}

/* ---- trilu -------------------------------------------------------------- */

/* y = trilu(x[, k]): x of rank >= 2, same type out. */
mlc_status mlc_infer_trilu(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t k;
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  if (x->rank < 2) return ERR("input must have rank >= 2, got %d", x->rank);
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "upper", 1, NULL));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "k", 0, &k));
  if (ci->nargs > 1) MLC_RETURN_IF_ERROR(int_scalar_arg(ci, 1, "k"));
  *nouts = 1;
  return mlc_graph_set_out(ci, outs, 0, x->dtype, x->dims, x->rank);
}

/* ---- cumsum ------------------------------------------------------------- */

/* y = cumsum(x[, axis]): numeric x, same type out. */
mlc_status mlc_infer_cumsum(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t axis;
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  if (!mlc_graph_is_num(x->dtype)) return ERR("input has dtype %s, expected a numeric type", mlc_dtype_name(x->dtype));
  if (x->rank < 1) return ERR("input must have rank >= 1");
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "exclusive", 0, NULL));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "reverse", 0, NULL));
  if (ci->nargs > 1) MLC_RETURN_IF_ERROR(int_scalar_arg(ci, 1, "axis"));
  else MLC_RETURN_IF_ERROR(attr_axis(ci, "axis", x->rank, &axis));
  *nouts = 1;
  return mlc_graph_set_out(ci, outs, 0, x->dtype, x->dims, x->rank);
}

/* ---- topk --------------------------------------------------------------- */

/* values, indices = topk(x[, token]): x.shape with attr k along attr axis. */
mlc_status mlc_infer_topk(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0);
  int64_t axis, k, dims[MAX_RANK];
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  if (!mlc_graph_is_num(x->dtype)) return ERR("input has dtype %s, expected a numeric type", mlc_dtype_name(x->dtype));
  if (x->rank < 1) return ERR("input must have rank >= 1");
  MLC_RETURN_IF_ERROR(attr_axis(ci, "axis", x->rank, &axis));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "largest", 1, NULL));
  MLC_RETURN_IF_ERROR(mlc_graph_attr_flag(ci, "sorted", 1, NULL));
  if (!mlc_attrs_find(ci->attrs, ci->nattrs, "k")) return ERR("attribute k is missing");
  MLC_RETURN_IF_ERROR(mlc_graph_attr_int(ci, "k", 0, &k));
  int64_t d = x->dims[axis];
  if (ci->nargs > 1) { /* define_dims' output: orders the call after the binding of k */
    const mlc_type *t = mlc_graph_arg(ci, 1);
    if (t->dtype != MLC_DTYPE_I64 || t->rank != 1 || t->dims[0] < 0)
      return ERR("argument 1 must be a static int64 vector (from define_dims)");
  }
  if (k < 0 && (ci->nargs < 2 || MLC_DIM_SYM_ID(k) >= ci->mod->nsyms))
    return ERR("k = %lld must be >= 0 (or a symbol that define_dims defines)", LL(k));
  if (d >= 0 && k > d)
    return ERR("k = %lld is larger than the extent %lld of axis %lld", LL(k), LL(d), LL(axis));
  memcpy(dims, x->dims, sizeof *dims * (size_t)x->rank);
  dims[axis] = k;
  *nouts = 2;
  MLC_RETURN_IF_ERROR(mlc_graph_set_out(ci, outs, 0, x->dtype, dims, x->rank));
  return mlc_graph_set_out(ci, outs, 1, MLC_DTYPE_I64, dims, x->rank);
}

/* ---- einsum ------------------------------------------------------------- */

/* Index of a label letter, -1 for anything else. */
static int label_index(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

/* Merges |d| into the extent |*e| of a label (|*seen| 0: not seen yet);
** size 1 broadcasts.  0 on a conflict. */
static int merge_extent(int64_t *e, unsigned char *seen, int64_t d) {
  if (!*seen || *e == 1) *e = d;
  else if (d != 1 && d != *e) return 0;
  *seen = 1;
  return 1;
}

/* y = einsum(args): the equation "in0,in1,...->out" in letters only; each
** operand has one letter per dim; output letters are distinct and appear in
** some operand. */
mlc_status mlc_infer_einsum(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_attr *eq = mlc_attrs_find(ci->attrs, ci->nattrs, "equation");
  int64_t ext[NLABELS] = {0}, dims[MAX_RANK];
  unsigned char used[NLABELS] = {0};
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  if (!eq || eq->kind != MLC_ATTR_STRING || !eq->s) return ERR("attribute equation (a string) is missing");
  for (int i = 0; i < ci->nargs; i++) {
    if (!mlc_graph_is_num(mlc_graph_arg(ci, i)->dtype))
      return ERR("argument %d has dtype %s, expected a numeric type", i, mlc_dtype_name(mlc_graph_arg(ci, i)->dtype));
    if (mlc_graph_arg(ci, i)->dtype != mlc_graph_arg(ci, 0)->dtype)
      return ERR("argument dtypes differ: %s (argument 0) and %s (argument %d)",
                 mlc_dtype_name(mlc_graph_arg(ci, 0)->dtype), mlc_dtype_name(mlc_graph_arg(ci, i)->dtype), i);
  }
  const char *p = eq->s;
  for (int op = 0; op < ci->nargs; op++) {
    const mlc_type *t = mlc_graph_arg(ci, op);
    int r = 0;
    for (; *p && *p != ',' && *p != '-'; p++, r++) {
      int l = label_index(*p);
      if (l < 0) return ERR("equation \"%s\": '%c' is not a label letter", eq->s, *p);
      if (r >= t->rank) return ERR("equation \"%s\": operand %d has more labels than its rank %d", eq->s, op, t->rank);
      if (!merge_extent(&ext[l], &used[l], t->dims[r]))
        return ERR("equation \"%s\": label '%c' has extents %lld and %lld", eq->s, *p, LL(ext[l]),
                   LL(t->dims[r]));
    }
    if (r != t->rank) return ERR("equation \"%s\": operand %d has %d labels for rank %d", eq->s, op, r, t->rank);
    if (op + 1 < ci->nargs) {
      if (*p != ',') return ERR("equation \"%s\" has fewer operands than the %d arguments", eq->s, ci->nargs);
      p++;
    }
  }
  if (p[0] != '-' || p[1] != '>') return ERR("equation \"%s\" must be explicit (\"...->...\") with one term per argument", eq->s);
  p += 2;
  unsigned char seen[NLABELS] = {0};
  int r = 0;
  for (; *p; p++) {
    int l = label_index(*p);
    if (l < 0 || !used[l] || seen[l])
      return ERR("equation \"%s\": output label '%c' is not a label of the operands or repeats", eq->s, *p);
    if (r >= MAX_RANK) return UNIMPL("output rank above %d", MAX_RANK);
    seen[l] = 1;
    dims[r++] = ext[l];
  }
  *nouts = 1;
  return mlc_graph_set_out(ci, outs, 0, mlc_graph_arg(ci, 0)->dtype, dims, r);
}

/* ---- reverse_sequence --------------------------------------------------- */

/* y = reverse_sequence(x, lens): lens 1-D integer of x's batch extent. */
mlc_status mlc_infer_reverse_sequence(const mlc_call_info *ci, mlc_type *outs, int *nouts) {
  const mlc_type *x = mlc_graph_arg(ci, 0), *lens = mlc_graph_arg(ci, 1);
  int64_t ba, ta;
  MLC_RETURN_IF_ERROR(mlc_graph_check_args(ci, MAX_RANK));
  if (x->rank < 2) return ERR("input must have rank >= 2, got %d", x->rank);
  MLC_RETURN_IF_ERROR(attr_axis(ci, "batch_axis", x->rank, &ba));
  MLC_RETURN_IF_ERROR(attr_axis(ci, "time_axis", x->rank, &ta));
  if (ba == ta) return ERR("batch_axis and time_axis are both %lld", LL(ba));
  if (!mlc_dtype_is_int(lens->dtype))
    return ERR("lens has dtype %s, expected an integer type", mlc_dtype_name(lens->dtype));
  if (lens->rank != 1 || lens->dims[0] != x->dims[ba])
    return ERR("lens must be 1-D with the batch extent of the input");
  *nouts = 1;
  return mlc_graph_set_out(ci, outs, 0, x->dtype, x->dims, x->rank);
}
