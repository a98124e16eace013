/*
** eval_layout.c: compile-time evaluation of layout_transform, so that
** fold_constant packs constant weights into their blocked layout when
** compiling (alter_layout emits `layout_transform(W, "OIHW", "OIHW16i16o")`
** and the folder replaces it by the packed constant).
**
** Elements are moved raw (any dtype): each output element reads the input
** element that mlc_layout_map names.  conv2d_nchwc and matmul_packed have
** no evaluator (alter_layout only creates them with a non-constant input).
*/
#include <string.h>

#include "graph/graph_int.h"

mlc_status mlc_graph_eval_layout(const mlc_call_info *ci, const mlc_type *ot, const void *const *in,
                                 void **out) {
  if (ci->op != MLC_OP_LAYOUT_TRANSFORM) return mlc_graph_call_error(ci, MLC_UNIMPLEMENTED, "no evaluator");
  mlc_layout src, dst;
  mlc_layout_map map;
  const mlc_type *x = &ci->args[0]->type;
  if (mlc_layout_parse(mlc_attrs_str(ci->attrs, ci->nattrs, "src", NULL), &src) ||
      mlc_layout_parse(mlc_attrs_str(ci->attrs, ci->nattrs, "dst", NULL), &dst) ||
      mlc_layout_map_make(&src, &dst, &map) || src.rank != x->rank || dst.rank != ot->rank)
    return mlc_graph_call_error(ci, MLC_INVALID_ARGUMENT, "bad layouts");
  int64_t n = mlc_type_numel(ot), xst[MLC_LAYOUT_MAX_RANK], y[MLC_LAYOUT_MAX_RANK] = {0};
  size_t es = mlc_dtype_size(ot->dtype);
  int64_t s = 1;
  for (int i = x->rank - 1; i >= 0; i--) {
    xst[i] = s;
    s *= x->dims[i];
  }
  *out = mlc_const_alloc(ci->mod, (size_t)n * es);
  if (!*out) return mlc_oom();
  for (int64_t e = 0; e < n; e++) {
    int64_t off = 0;
    for (int i = 0; i < map.src_rank; i++) {
      int64_t v = y[map.outer[i]] * map.mul[i] + (map.inner[i] >= 0 ? y[map.inner[i]] : 0);
      v /= map.div[i];
      if (map.mod[i]) v %= map.mod[i];
      off += v * xst[i];
    }
    memcpy((char *)*out + (size_t)e * es, (const char *)in[0] + (size_t)off * es, es);
    for (int d = ot->rank - 1; d >= 0; d--) { /* the next output index */
      if (++y[d] < ot->dims[d]) break;
      y[d] = 0;
    }
  }
  return NULL;
}
