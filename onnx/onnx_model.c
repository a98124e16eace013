/*
** onnx_model.c: ModelProto -> mlc_onnx_model views, and the API of onnx.h.
**
** After unpacking, every graph (and every subgraph held in a GRAPH or GRAPHS
** attribute, to MLC_ONNX_MAX_GRAPH_DEPTH levels) is copied into plain views
** in the model's arena: nodes with their attributes, initializers (decoded
** by onnx_tensor.c), inputs, outputs and value infos.  Then the protobuf
** structs are freed; the model keeps only the views and the tensor data.
** Errors name the place: 'node "If_0" (If): attribute "then_branch":
** initializer "w": raw_data has 10 bytes, shape (2, 3) float32 needs 24'.
*/
#include "onnx/onnx_int.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

struct mlc_onnx_model {
  mlc_onnx_ctx *ctx; /* owns the model struct itself, the views and the data */
  mlc_onnx_model_info info;
};

struct mlc_onnx_tensor_file {
  mlc_onnx_ctx *ctx;
  mlc_onnx_tensor t;
};

/* Longest name quoted into a message prefix. */
#define NAME_MAX_SHOWN 200

static mlc_status build_graph(mlc_onnx_ctx *c, Onnx__GraphProto *g, int depth,
                              mlc_onnx_graph *out);

static const char *str_or_empty(const char *s) { return s ? s : ""; }

static mlc_status dup_str(mlc_onnx_ctx *c, const char *s, const char **out) {
  *out = mlc_arena_strdup(c->arena, s ? s : "");
  return *out ? NULL : mlc_oom();
}

static mlc_status check_count(size_t n, const char *what, const char *field) {
  if (n > INT_MAX)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: %zu %s is too many", what, n, field);
  return NULL;
}

/* ---- value infos ------------------------------------------------------------ */

/* Fills dtype and shape of |vi| from a tensor type's fields. */
static mlc_status set_tensor_type(mlc_onnx_ctx *c, int has_elem, int32_t elem,
                                  const Onnx__TensorShapeProto *shape, const char *what,
                                  mlc_onnx_value_info *vi) {
  vi->onnx_type = has_elem ? elem : 0;
  vi->dtype = mlc_onnx_dtype(vi->onnx_type);
  if (!shape) return NULL;
  MLC_RETURN_IF_ERROR(check_count(shape->n_dim, what, "dims"));
  vi->has_shape = 1;
  vi->rank = (int)shape->n_dim;
  if (!shape->n_dim) return NULL;
  mlc_onnx_dim *dims = MLC_ARENA_ARRAY(c->arena, shape->n_dim, mlc_onnx_dim);
  if (!dims) return mlc_oom();
  for (size_t i = 0; i < shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = shape->dim[i];
    dims[i].value = -1;
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      /* A negative dim_value is not meaningful; like an absent one, it is unknown. */
      if (d->dim_value >= 0) dims[i].value = d->dim_value;
    } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
               d->dim_param && d->dim_param[0]) {
      dims[i].param = mlc_arena_strdup(c->arena, d->dim_param);
      if (!dims[i].param) return mlc_oom();
    }
  }
  vi->dims = dims;
  return NULL;
}

/* type = tensor_type | sequence_type | map_type | optional_type | sparse_tensor_type.
** Sequences, optionals and maps report the tensor type they hold (looking
** through nested sequences and optionals; a map through its value type). */
static mlc_status build_value_info(mlc_onnx_ctx *c, const Onnx__ValueInfoProto *v,
                                   const char *what, mlc_onnx_value_info *vi) {
  memset(vi, 0, sizeof *vi);
  MLC_RETURN_IF_ERROR(dup_str(c, v->name, &vi->name));
  vi->kind = MLC_ONNX_VALUE_UNKNOWN;
  vi->dtype = MLC_DTYPE_INVALID;
  const Onnx__TypeProto *t = v->type;
  if (!t) return NULL;
  switch (t->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: vi->kind = MLC_ONNX_VALUE_TENSOR; break;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: vi->kind = MLC_ONNX_VALUE_SPARSE_TENSOR; break;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: vi->kind = MLC_ONNX_VALUE_SEQUENCE; break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: vi->kind = MLC_ONNX_VALUE_OPTIONAL; break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: vi->kind = MLC_ONNX_VALUE_MAP; break;
    default: return NULL; /* no type, or one this onnx.proto does not know */
  }
  /* The wire-depth check bounds this walk. */
  while (t) {
    switch (t->value_case) {
      case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        if (!t->tensor_type) return NULL;
        return set_tensor_type(c, t->tensor_type->has_elem_type, t->tensor_type->elem_type,
                               t->tensor_type->shape, what, vi);
      case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        if (!t->sparse_tensor_type) return NULL;
        return set_tensor_type(c, t->sparse_tensor_type->has_elem_type,
                               t->sparse_tensor_type->elem_type, t->sparse_tensor_type->shape,
                               what, vi);
      case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        t = t->sequence_type ? t->sequence_type->elem_type : NULL;
        break;
      case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        t = t->optional_type ? t->optional_type->elem_type : NULL;
        break;
      case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        t = t->map_type ? t->map_type->value_type : NULL;
        break;
      default: return NULL;
    }
  }
  return NULL;
}

static mlc_status build_value_infos(mlc_onnx_ctx *c, Onnx__ValueInfoProto **v, size_t n,
                                    const char *kind, int *out_n,
                                    const mlc_onnx_value_info **out) {
  MLC_RETURN_IF_ERROR(check_count(n, "graph", kind));
  *out_n = (int)n;
  *out = NULL;
  if (!n) return NULL;
  mlc_onnx_value_info *vis = MLC_ARENA_ARRAY(c->arena, n, mlc_onnx_value_info);
  if (!vis) return mlc_oom();
  for (size_t i = 0; i < n; i++) {
    char what[NAME_MAX_SHOWN + 40];
    snprintf(what, sizeof what, "%s \"%.*s\"", kind, NAME_MAX_SHOWN, str_or_empty(v[i]->name));
    MLC_RETURN_IF_ERROR(build_value_info(c, v[i], what, &vis[i]));
  }
  *out = vis;
  return NULL;
}

/* ---- attributes ------------------------------------------------------------- */

/* Field names of the attribute types, indexed by type (ORDER ATTRTYPE). */
static const char *const attr_type_names[] = {
    "UNDEFINED", "FLOAT",   "INT",     "STRING",  "TENSOR",        "GRAPH",
    "FLOATS",    "INTS",    "STRINGS", "TENSORS", "GRAPHS",        "SPARSE_TENSOR",
    "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
static const char *const attr_field_names[] = {
    "",       "f",    "i",       "s",       "t",              "g",          "floats", "ints",
    "strings", "tensors", "graphs", "sparse_tensor", "sparse_tensors", "tp", "type_protos"};
#define NATTR_TYPES 15

/* Bit (1 << type) for every value field that is set. */
static unsigned attr_fields(const Onnx__AttributeProto *a) {
  unsigned m = 0;
  if (a->has_f) m |= 1u << MLC_ONNX_ATTR_FLOAT;
  if (a->has_i) m |= 1u << MLC_ONNX_ATTR_INT;
  if (a->has_s) m |= 1u << MLC_ONNX_ATTR_STRING;
  if (a->t) m |= 1u << MLC_ONNX_ATTR_TENSOR;
  if (a->g) m |= 1u << MLC_ONNX_ATTR_GRAPH;
  if (a->sparse_tensor) m |= 1u << MLC_ONNX_ATTR_SPARSE_TENSOR;
  if (a->tp) m |= 1u << MLC_ONNX_ATTR_TYPE_PROTO;
  if (a->n_floats) m |= 1u << MLC_ONNX_ATTR_FLOATS;
  if (a->n_ints) m |= 1u << MLC_ONNX_ATTR_INTS;
  if (a->n_strings) m |= 1u << MLC_ONNX_ATTR_STRINGS;
  if (a->n_tensors) m |= 1u << MLC_ONNX_ATTR_TENSORS;
  if (a->n_graphs) m |= 1u << MLC_ONNX_ATTR_GRAPHS;
  if (a->n_sparse_tensors) m |= 1u << MLC_ONNX_ATTR_SPARSE_TENSORS;
  if (a->n_type_protos) m |= 1u << MLC_ONNX_ATTR_TYPE_PROTOS;
  return m;
}

static int is_list_type(int t) {
  return t == MLC_ONNX_ATTR_FLOATS || t == MLC_ONNX_ATTR_INTS || t == MLC_ONNX_ATTR_STRINGS ||
         t == MLC_ONNX_ATTR_TENSORS || t == MLC_ONNX_ATTR_GRAPHS ||
         t == MLC_ONNX_ATTR_SPARSE_TENSORS || t == MLC_ONNX_ATTR_TYPE_PROTOS;
}

static int lowest_bit(unsigned m) {
  for (int i = 0; i < NATTR_TYPES; i++)
    if (m & (1u << i)) return i;
  return 0;
}

/* The attribute's type: the declared one, checked against the fields that
** are set, or (type 0, old IR versions) the one field that is set. */
static mlc_status attr_type(const Onnx__AttributeProto *a, const char *what, int *out) {
  unsigned set = attr_fields(a);
  int type = a->has_type ? (int)a->type : 0;
  if (type == 0) {
    if (set == 0)
      return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: no type and no value", what);
    int first = lowest_bit(set);
    if (set & (set - 1)) {
      int second = lowest_bit(set & (set - 1));
      return mlc_make_status(MLC_INVALID_ARGUMENT,
                             "%s: no type, and values in more than one field (%s and %s)", what,
                             attr_field_names[first], attr_field_names[second]);
    }
    *out = first;
    return NULL;
  }
  if (type < 0 || type >= NATTR_TYPES)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: unknown attribute type %d", what, type);
  unsigned bit = 1u << type;
  if (set & ~bit) {
    int f = lowest_bit(set & ~bit);
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: type is %s but a value is given in field %s (for %s)", what,
                           attr_type_names[type], attr_field_names[f], attr_type_names[f]);
  }
  if (!(set & bit) && !is_list_type(type))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: type is %s but field %s is not set", what,
                           attr_type_names[type], attr_field_names[type]);
  *out = type;
  return NULL;
}

/* sparse_tensor = values (TensorProto, [NNZ]) indices (INT64 TensorProto,
** [NNZ] or [NNZ, rank]) dims: the view of mlc_onnx_sparse. */
static mlc_status build_sparse(mlc_onnx_ctx *c, Onnx__SparseTensorProto *sp, const char *what,
                               const mlc_onnx_sparse **out) {
  if (!sp->values || !sp->indices)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: sparse tensor without %s", what,
                           sp->values ? "indices" : "values");
  if (sp->n_dims > INT_MAX)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: sparse tensor with %zu dims", what, sp->n_dims);
  mlc_onnx_sparse *v = MLC_ARENA_NEW(c->arena, mlc_onnx_sparse);
  mlc_onnx_tensor *vals = MLC_ARENA_NEW(c->arena, mlc_onnx_tensor);
  mlc_onnx_tensor *idx = MLC_ARENA_NEW(c->arena, mlc_onnx_tensor);
  if (!v || !vals || !idx) return mlc_oom();
  char tw[NAME_MAX_SHOWN + 60];
  snprintf(tw, sizeof tw, "%s: sparse values", what);
  MLC_RETURN_IF_ERROR(mlc_onnx_tensor_build(c, sp->values, tw, vals));
  snprintf(tw, sizeof tw, "%s: sparse indices", what);
  MLC_RETURN_IF_ERROR(mlc_onnx_tensor_build(c, sp->indices, tw, idx));
  for (size_t i = 0; i < sp->n_dims; i++)
    if (sp->dims[i] < 0)
      return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: sparse tensor dim %zu is negative (%lld)", what, i,
                             (long long)sp->dims[i]);
  int64_t nnz = vals->rank == 1 ? vals->dims[0] : -1;
  int linear = idx->rank == 1 && idx->dims[0] == nnz;
  int coords = idx->rank == 2 && idx->dims[0] == nnz && idx->dims[1] == (int64_t)sp->n_dims;
  if (nnz < 0 || idx->dtype != MLC_DTYPE_I64 || (!linear && !coords))
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: sparse tensor needs values of shape [NNZ] and INT64 indices of shape [NNZ] "
                           "or [NNZ, %zu]",
                           what, sp->n_dims);
  v->values = vals;
  v->indices = idx;
  v->rank = (int)sp->n_dims;
  v->dims = NULL;
  if (sp->n_dims && !(v->dims = mlc_arena_memdup(c->arena, sp->dims, sp->n_dims * sizeof(int64_t))))
    return mlc_oom();
  *out = v;
  return NULL;
}

static mlc_status build_attr(mlc_onnx_ctx *c, Onnx__AttributeProto *a, int index, int depth,
                             mlc_onnx_attr *out) {
  memset(out, 0, sizeof *out);
  char what[NAME_MAX_SHOWN + 40];
  if (!a->name || !a->name[0])
    return mlc_make_status(MLC_INVALID_ARGUMENT, "attribute #%d has no name", index);
  snprintf(what, sizeof what, "attribute \"%.*s\"", NAME_MAX_SHOWN, a->name);
  MLC_RETURN_IF_ERROR(dup_str(c, a->name, &out->name));
  if (a->ref_attr_name && a->ref_attr_name[0])
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: refers to attribute \"%s\" of an enclosing function (only valid "
                           "inside function bodies)",
                           what, a->ref_attr_name);
  int type = 0;
  MLC_RETURN_IF_ERROR(attr_type(a, what, &type));
  out->type = (mlc_onnx_attr_type)type;
  mlc_arena *ar = c->arena;
  mlc_status s = NULL;
  switch (out->type) {
    case MLC_ONNX_ATTR_FLOAT: out->f = a->f; break;
    case MLC_ONNX_ATTR_INT: out->i = a->i; break;
    case MLC_ONNX_ATTR_STRING:
      out->s = mlc_arena_strndup(ar, a->s.len ? (const char *)a->s.data : "", a->s.len);
      if (!out->s) return mlc_oom();
      out->s_len = a->s.len;
      break;
    case MLC_ONNX_ATTR_FLOATS:
      MLC_RETURN_IF_ERROR(check_count(a->n_floats, what, "floats"));
      out->n = (int)a->n_floats;
      if (out->n && !(out->floats = mlc_arena_memdup(ar, a->floats, a->n_floats * sizeof(float))))
        return mlc_oom();
      break;
    case MLC_ONNX_ATTR_INTS:
      MLC_RETURN_IF_ERROR(check_count(a->n_ints, what, "ints"));
      out->n = (int)a->n_ints;
      if (out->n && !(out->ints = mlc_arena_memdup(ar, a->ints, a->n_ints * sizeof(int64_t))))
        return mlc_oom();
      break;
    case MLC_ONNX_ATTR_STRINGS: {
      MLC_RETURN_IF_ERROR(check_count(a->n_strings, what, "strings"));
      out->n = (int)a->n_strings;
      if (!out->n) break;
      char **strs = MLC_ARENA_ARRAY(ar, a->n_strings, char *);
      if (!strs) return mlc_oom();
      for (size_t i = 0; i < a->n_strings; i++) {
        const ProtobufCBinaryData *b = &a->strings[i];
        strs[i] = mlc_arena_strndup(ar, b->len ? (const char *)b->data : "", b->len);
        if (!strs[i]) return mlc_oom();
      }
      out->strings = (const char *const *)strs;
      break;
    }
    case MLC_ONNX_ATTR_TENSOR: {
      mlc_onnx_tensor *t = MLC_ARENA_NEW(ar, mlc_onnx_tensor);
      if (!t) return mlc_oom();
      char tw[NAME_MAX_SHOWN + 60];
      snprintf(tw, sizeof tw, "%s: tensor \"%.*s\"", what, NAME_MAX_SHOWN,
               str_or_empty(a->t->name));
      MLC_RETURN_IF_ERROR(mlc_onnx_tensor_build(c, a->t, tw, t));
      out->t = t;
      out->n = 1;
      break;
    }
    case MLC_ONNX_ATTR_TENSORS: {
      MLC_RETURN_IF_ERROR(check_count(a->n_tensors, what, "tensors"));
      out->n = (int)a->n_tensors;
      if (!out->n) break;
      mlc_onnx_tensor *ts = MLC_ARENA_ARRAY(ar, a->n_tensors, mlc_onnx_tensor);
      if (!ts) return mlc_oom();
      for (size_t i = 0; i < a->n_tensors; i++) {
        char tw[NAME_MAX_SHOWN * 2 + 60];
        snprintf(tw, sizeof tw, "%s: tensor #%zu \"%.*s\"", what, i, NAME_MAX_SHOWN,
                 str_or_empty(a->tensors[i]->name));
        MLC_RETURN_IF_ERROR(mlc_onnx_tensor_build(c, a->tensors[i], tw, &ts[i]));
      }
      out->tensors = ts;
      break;
    }
    case MLC_ONNX_ATTR_GRAPH:
    case MLC_ONNX_ATTR_GRAPHS: {
      size_t n = out->type == MLC_ONNX_ATTR_GRAPH ? 1 : a->n_graphs;
      Onnx__GraphProto **gs = out->type == MLC_ONNX_ATTR_GRAPH ? &a->g : a->graphs;
      MLC_RETURN_IF_ERROR(check_count(n, what, "graphs"));
      out->n = (int)n;
      if (!n) break;
      if (depth + 1 > MLC_ONNX_MAX_GRAPH_DEPTH)
        return mlc_make_status(MLC_INVALID_ARGUMENT,
                               "%s: subgraphs nested deeper than %d levels", what,
                               MLC_ONNX_MAX_GRAPH_DEPTH);
      mlc_onnx_graph *g = MLC_ARENA_ARRAY(ar, n, mlc_onnx_graph);
      const mlc_onnx_graph **gp = MLC_ARENA_ARRAY(ar, n, const mlc_onnx_graph *);
      if (!g || !gp) return mlc_oom();
      for (size_t i = 0; i < n; i++) {
        s = build_graph(c, gs[i], depth + 1, &g[i]);
        if (s) {
          if (out->type == MLC_ONNX_ATTR_GRAPHS) s = mlc_status_annotate(s, "graph #%zu", i);
          return mlc_status_annotate(s, "%s", what);
        }
        gp[i] = &g[i];
      }
      if (out->type == MLC_ONNX_ATTR_GRAPH)
        out->g = &g[0];
      else
        out->graphs = gp;
      break;
    }
    case MLC_ONNX_ATTR_SPARSE_TENSOR:
      MLC_RETURN_IF_ERROR(build_sparse(c, a->sparse_tensor, what, &out->sp));
      out->n = 1;
      break;
    case MLC_ONNX_ATTR_TYPE_PROTO: out->n = 1; break; /* kind only: no view of the value */
    case MLC_ONNX_ATTR_SPARSE_TENSORS:
      MLC_RETURN_IF_ERROR(check_count(a->n_sparse_tensors, what, "sparse tensors"));
      out->n = (int)a->n_sparse_tensors;
      break;
    case MLC_ONNX_ATTR_TYPE_PROTOS:
      MLC_RETURN_IF_ERROR(check_count(a->n_type_protos, what, "type protos"));
      out->n = (int)a->n_type_protos;
      break;
    case MLC_ONNX_ATTR_UNDEFINED: break;
  }
  return NULL;
}

/* ---- nodes and graphs -------------------------------------------------------- */

static mlc_status dup_names(mlc_onnx_ctx *c, char **names, size_t n, const char *what,
                            const char *field, int *out_n, const char *const **out) {
  MLC_RETURN_IF_ERROR(check_count(n, what, field));
  *out_n = (int)n;
  *out = NULL;
  if (!n) return NULL;
  const char **v = MLC_ARENA_ARRAY(c->arena, n, const char *);
  if (!v) return mlc_oom();
  for (size_t i = 0; i < n; i++) MLC_RETURN_IF_ERROR(dup_str(c, names[i], &v[i]));
  *out = v;
  return NULL;
}

static mlc_status build_node(mlc_onnx_ctx *c, Onnx__NodeProto *n, int index, int depth,
                             mlc_onnx_node *out) {
  memset(out, 0, sizeof *out);
  out->index = index;
  MLC_RETURN_IF_ERROR(dup_str(c, n->name, &out->name));
  MLC_RETURN_IF_ERROR(dup_str(c, n->op_type, &out->op_type));
  MLC_RETURN_IF_ERROR(dup_str(c, n->domain, &out->domain));
  if (!out->op_type[0]) return mlc_make_status(MLC_INVALID_ARGUMENT, "op_type is empty");
  MLC_RETURN_IF_ERROR(dup_names(c, n->input, n->n_input, "node", "inputs", &out->ninputs,
                                &out->inputs));
  MLC_RETURN_IF_ERROR(dup_names(c, n->output, n->n_output, "node", "outputs", &out->noutputs,
                                &out->outputs));
  MLC_RETURN_IF_ERROR(check_count(n->n_attribute, "node", "attributes"));
  out->nattrs = (int)n->n_attribute;
  if (!out->nattrs) return NULL;
  mlc_onnx_attr *attrs = MLC_ARENA_ARRAY(c->arena, n->n_attribute, mlc_onnx_attr);
  if (!attrs) return mlc_oom();
  for (size_t i = 0; i < n->n_attribute; i++)
    MLC_RETURN_IF_ERROR(build_attr(c, n->attribute[i], (int)i, depth, &attrs[i]));
  out->attrs = attrs;
  return NULL;
}

/* graph = name, nodes, initializers, inputs, outputs, value_info. */
static mlc_status build_graph(mlc_onnx_ctx *c, Onnx__GraphProto *g, int depth,
                              mlc_onnx_graph *out) {
  memset(out, 0, sizeof *out);
  MLC_RETURN_IF_ERROR(dup_str(c, g->name, &out->name));
  if (g->n_sparse_initializer)
    return mlc_make_status(MLC_UNIMPLEMENTED,
                           "graph \"%.*s\": sparse initializer \"%.*s\" is not supported",
                           NAME_MAX_SHOWN, out->name, NAME_MAX_SHOWN,
                           str_or_empty(g->sparse_initializer[0]->values
                                            ? g->sparse_initializer[0]->values->name
                                            : NULL));

  MLC_RETURN_IF_ERROR(check_count(g->n_initializer, "graph", "initializers"));
  out->ninitializers = (int)g->n_initializer;
  if (g->n_initializer) {
    mlc_onnx_tensor *ts = MLC_ARENA_ARRAY(c->arena, g->n_initializer, mlc_onnx_tensor);
    if (!ts) return mlc_oom();
    for (size_t i = 0; i < g->n_initializer; i++) {
      char iw[NAME_MAX_SHOWN + 40];
      snprintf(iw, sizeof iw, "initializer \"%.*s\"", NAME_MAX_SHOWN,
               str_or_empty(g->initializer[i]->name));
      MLC_RETURN_IF_ERROR(mlc_onnx_tensor_build(c, g->initializer[i], iw, &ts[i]));
    }
    out->initializers = ts;
  }
  MLC_RETURN_IF_ERROR(
      build_value_infos(c, g->input, g->n_input, "graph input", &out->ninputs, &out->inputs));
  MLC_RETURN_IF_ERROR(
      build_value_infos(c, g->output, g->n_output, "graph output", &out->noutputs, &out->outputs));
  MLC_RETURN_IF_ERROR(build_value_infos(c, g->value_info, g->n_value_info, "value_info",
                                        &out->nvalue_infos, &out->value_infos));

  MLC_RETURN_IF_ERROR(check_count(g->n_node, "graph", "nodes"));
  out->nnodes = (int)g->n_node;
  if (!g->n_node) return NULL;
  mlc_onnx_node *nodes = MLC_ARENA_ARRAY(c->arena, g->n_node, mlc_onnx_node);
  if (!nodes) return mlc_oom();
  for (size_t i = 0; i < g->n_node; i++) {
    mlc_status s = build_node(c, g->node[i], (int)i, depth, &nodes[i]);
    if (s) {
      const Onnx__NodeProto *n = g->node[i];
      if (n->name && n->name[0])
        return mlc_status_annotate(s, "node \"%.*s\" (%.*s)", NAME_MAX_SHOWN, n->name,
                                   NAME_MAX_SHOWN, str_or_empty(n->op_type));
      return mlc_status_annotate(s, "node #%zu (%.*s)", i, NAME_MAX_SHOWN,
                                 str_or_empty(n->op_type));
    }
  }
  out->nodes = nodes;
  return NULL;
}

/* model = ir_version, opset_import, producer, graph. */
static mlc_status build_model(mlc_onnx_ctx *c, const Onnx__ModelProto *mp,
                              mlc_onnx_model_info *info) {
  info->ir_version = mp->has_ir_version ? mp->ir_version : 0;
  info->model_version = mp->has_model_version ? mp->model_version : 0;
  MLC_RETURN_IF_ERROR(dup_str(c, mp->producer_name, &info->producer_name));
  MLC_RETURN_IF_ERROR(dup_str(c, mp->producer_version, &info->producer_version));
  MLC_RETURN_IF_ERROR(dup_str(c, mp->domain, &info->domain));
  MLC_RETURN_IF_ERROR(dup_str(c, mp->doc_string, &info->doc_string));
  MLC_RETURN_IF_ERROR(check_count(mp->n_opset_import, "model", "opset imports"));
  info->nopsets = (int)mp->n_opset_import;
  if (mp->n_opset_import) {
    mlc_onnx_opset *ops = MLC_ARENA_ARRAY(c->arena, mp->n_opset_import, mlc_onnx_opset);
    if (!ops) return mlc_oom();
    for (size_t i = 0; i < mp->n_opset_import; i++) {
      MLC_RETURN_IF_ERROR(dup_str(c, mp->opset_import[i]->domain, &ops[i].domain));
      ops[i].version = mp->opset_import[i]->has_version ? mp->opset_import[i]->version : 0;
    }
    info->opsets = ops;
  }
  if (!mp->graph)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "not a valid ONNX model: it has no graph");
  mlc_onnx_graph *g = MLC_ARENA_NEW(c->arena, mlc_onnx_graph);
  if (!g) return mlc_oom();
  MLC_RETURN_IF_ERROR(build_graph(c, mp->graph, 0, g));
  info->graph = g;
  return NULL;
}

/* ---- API --------------------------------------------------------------------- */

/*
** Unpacks and builds a model from |data| (borrowed); |base_dir| (copied;
** with |dir_of_path|, the folder of that path) resolves external data.
** |release| (transferred; may be NULL) is freed as soon as |data| has been
** unpacked, which keeps a file's bytes and the views from both being held.
*/
static mlc_status load(const void *data, size_t size, void *release, const char *base_dir,
                       int dir_of_path, mlc_onnx_model **out) {
  mlc_onnx_ctx *c = mlc_onnx_ctx_create(NULL);
  mlc_onnx_model *m = c ? MLC_ARENA_NEW(c->arena, mlc_onnx_model) : NULL;
  if (c && base_dir)
    c->base_dir = dir_of_path ? mlc_onnx_dirname(c, base_dir)
                              : mlc_arena_strdup(c->arena, base_dir);
  if (!m || (base_dir && !c->base_dir)) {
    mlc_onnx_aligned_free(release);
    mlc_onnx_ctx_destroy(c);
    return mlc_oom();
  }
  m->ctx = c;
  ProtobufCMessage *pb;
  mlc_status s = mlc_onnx_unpack(&onnx__model_proto__descriptor, data, size, "ONNX model",
                                 "an ONNX file", &pb);
  mlc_onnx_aligned_free(release);
  if (s) {
    mlc_onnx_ctx_destroy(c);
    return s;
  }
  s = build_model(c, (Onnx__ModelProto *)pb, &m->info);
  protobuf_c_message_free_unpacked(pb, &mlc_onnx_pb_allocator);
  if (!s && mlc_arena_oom(c->arena)) s = mlc_oom();
  if (s) {
    mlc_onnx_ctx_destroy(c);
    return s;
  }
  *out = m;
  return NULL;
}

mlc_status mlc_onnx_load_bytes(const void *data, size_t size, const char *base_dir,
                               mlc_onnx_model **out) {
  if (!out) return mlc_make_status(MLC_INVALID_ARGUMENT, "mlc_onnx_load_bytes: out is NULL");
  *out = NULL;
  if (!data && size)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "mlc_onnx_load_bytes: data is NULL");
  return load(data ? data : "", size, NULL, base_dir, 0, out);
}

mlc_status mlc_onnx_load_file(const char *path, mlc_onnx_model **out) {
  if (!out) return mlc_make_status(MLC_INVALID_ARGUMENT, "mlc_onnx_load_file: out is NULL");
  *out = NULL;
  if (!path || !*path)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "mlc_onnx_load_file: no path given");
  void *data;
  size_t size;
  MLC_RETURN_IF_ERROR(mlc_onnx_read_file(path, "model", &data, &size));
  return load(data, size, data, path, 1, out);
}

void mlc_onnx_model_destroy(mlc_onnx_model *m) {
  if (m) mlc_onnx_ctx_destroy(m->ctx);
}

const mlc_onnx_model_info *mlc_onnx_model_get_info(const mlc_onnx_model *m) {
  return m ? &m->info : NULL;
}

static int default_domain(const char *d) { return !d || !*d || strcmp(d, "ai.onnx") == 0; }

int64_t mlc_onnx_model_opset(const mlc_onnx_model *m, const char *domain) {
  if (!m) return 0;
  int want_default = default_domain(domain);
  for (int i = 0; i < m->info.nopsets; i++) {
    const char *d = m->info.opsets[i].domain;
    if (want_default ? default_domain(d) : strcmp(d, domain) == 0) return m->info.opsets[i].version;
  }
  return 0;
}

const mlc_onnx_attr *mlc_onnx_node_attr(const mlc_onnx_node *n, const char *name) {
  if (!n || !name) return NULL;
  for (int i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
  return NULL;
}

/*
** Unpacks and builds a tensor file from |data| (borrowed); |base_dir|
** (copied; with |dir_of_path|, the folder of that path) resolves external
** data.  |release| (transferred; may be NULL) is freed once |data| is
** unpacked.  Errors name |shown|.
*/
static mlc_status load_tensor(const void *data, size_t size, void *release, const char *base_dir,
                              int dir_of_path, const char *shown, mlc_onnx_tensor_file **out_holder,
                              const mlc_onnx_tensor **out) {
  mlc_onnx_ctx *c = mlc_onnx_ctx_create(NULL);
  mlc_onnx_tensor_file *h = c ? MLC_ARENA_NEW(c->arena, mlc_onnx_tensor_file) : NULL;
  if (c && base_dir)
    c->base_dir = dir_of_path ? mlc_onnx_dirname(c, base_dir)
                              : mlc_arena_strdup(c->arena, base_dir);
  if (!h || (base_dir && !c->base_dir)) {
    mlc_onnx_aligned_free(release);
    mlc_onnx_ctx_destroy(c);
    return mlc_oom();
  }
  h->ctx = c;
  ProtobufCMessage *pb;
  mlc_status s = mlc_onnx_unpack(&onnx__tensor_proto__descriptor, data, size, "TensorProto",
                                 "a TensorProto file", &pb);
  mlc_onnx_aligned_free(release);
  if (!s) {
    Onnx__TensorProto *tp = (Onnx__TensorProto *)pb;
    char what[NAME_MAX_SHOWN + 40];
    snprintf(what, sizeof what, "tensor \"%.*s\"", NAME_MAX_SHOWN, str_or_empty(tp->name));
    s = mlc_onnx_tensor_build(c, tp, what, &h->t);
    protobuf_c_message_free_unpacked(pb, &mlc_onnx_pb_allocator);
  }
  if (!s && mlc_arena_oom(c->arena)) s = mlc_oom();
  if (s) {
    mlc_onnx_ctx_destroy(c);
    return mlc_status_annotate(s, "%s", shown);
  }
  *out_holder = h;
  *out = &h->t;
  return NULL;
}

mlc_status mlc_onnx_load_tensor_file(const char *path, mlc_onnx_tensor_file **out_holder,
                                     const mlc_onnx_tensor **out) {
  if (!out_holder || !out)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "mlc_onnx_load_tensor_file: out is NULL");
  *out_holder = NULL;
  *out = NULL;
  if (!path || !*path)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "mlc_onnx_load_tensor_file: no path given");
  void *data;
  size_t size;
  MLC_RETURN_IF_ERROR(mlc_onnx_read_file(path, "tensor file", &data, &size));
  return load_tensor(data, size, data, path, 1, path, out_holder, out);
}

mlc_status mlc_onnx_load_tensor_bytes(const void *data, size_t size, const char *base_dir,
                                      const char *name, mlc_onnx_tensor_file **out_holder,
                                      const mlc_onnx_tensor **out) {
  if (!out_holder || !out)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "mlc_onnx_load_tensor_bytes: out is NULL");
  *out_holder = NULL;
  *out = NULL;
  if (!data && size)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "mlc_onnx_load_tensor_bytes: data is NULL");
  return load_tensor(data ? data : "", size, NULL, base_dir, 0, name ? name : "tensor bytes",
                     out_holder, out);
}

void mlc_onnx_tensor_file_free(mlc_onnx_tensor_file *h) {
  if (h) mlc_onnx_ctx_destroy(h->ctx);
}
