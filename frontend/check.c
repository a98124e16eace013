/*
** check.c: the pre-flight check (STYLE R8, R15).
**
** Before anything is converted, every node of the model (subgraphs
** included) is looked up in the converter table, its attributes are
** compared with the ones the converter accepts, and the row's check looks
** at attribute values; graph inputs, outputs and initializers are checked
** for types the compiler has no dtype for.  Every problem becomes one line
** of a single MLC_UNIMPLEMENTED error:
**
**   model uses 2 unsupported features:
**     node "n5" #5 (NonZero, opset 13): op not supported
**     node "c" #2 (Conv, opset 13): attribute "foo" not supported
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/hash.h"
#include "frontend/frontend_int.h"

#define MAX_DEPTH 32

void mlc_fe_problem(mlc_fe_problems *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mlc_sb_printf(&p->text, "\n  %s: ", p->where ? p->where : "model");
  mlc_sb_vprintf(&p->text, fmt, ap);
  va_end(ap);
  p->count++;
}

int mlc_fe_is_default_domain(const char *domain) {
  return !domain || !domain[0] || strcmp(domain, "ai.onnx") == 0;
}

int mlc_fe_model_opset(const mlc_onnx_model *om) {
  int64_t v = mlc_onnx_model_opset(om, "");
  if (v <= 0) v = mlc_onnx_model_opset(om, "ai.onnx");
  if (v <= 0) {
    /* IR versions before 3 had no opset_import: their ops are version 1. */
    const mlc_onnx_model_info *info = mlc_onnx_model_get_info(om);
    return info->ir_version < 3 ? 1 : 0;
  }
  return v > 1000000 ? 1000000 : (int)v;
}

static const char *attr_type_name(mlc_onnx_attr_type t) {
  switch (t) {
  case MLC_ONNX_ATTR_FLOAT: return "FLOAT";
  case MLC_ONNX_ATTR_INT: return "INT";
  case MLC_ONNX_ATTR_STRING: return "STRING";
  case MLC_ONNX_ATTR_TENSOR: return "TENSOR";
  case MLC_ONNX_ATTR_GRAPH: return "GRAPH";
  case MLC_ONNX_ATTR_FLOATS: return "FLOATS";
  case MLC_ONNX_ATTR_INTS: return "INTS";
  case MLC_ONNX_ATTR_STRINGS: return "STRINGS";
  case MLC_ONNX_ATTR_TENSORS: return "TENSORS";
  case MLC_ONNX_ATTR_GRAPHS: return "GRAPHS";
  case MLC_ONNX_ATTR_SPARSE_TENSOR: return "SPARSE_TENSOR";
  case MLC_ONNX_ATTR_SPARSE_TENSORS: return "SPARSE_TENSORS";
  case MLC_ONNX_ATTR_TYPE_PROTO: return "TYPE_PROTO";
  case MLC_ONNX_ATTR_TYPE_PROTOS: return "TYPE_PROTOS";
  case MLC_ONNX_ATTR_UNDEFINED: break;
  }
  return "UNDEFINED";
}

/* The attribute type a table letter stands for. */
static mlc_onnx_attr_type letter_type(char c) {
  switch (c) {
  case 'i': return MLC_ONNX_ATTR_INT;
  case 'f': return MLC_ONNX_ATTR_FLOAT;
  case 's': return MLC_ONNX_ATTR_STRING;
  case 't': return MLC_ONNX_ATTR_TENSOR;
  case 'I': return MLC_ONNX_ATTR_INTS;
  case 'F': return MLC_ONNX_ATTR_FLOATS;
  case 'S': return MLC_ONNX_ATTR_STRINGS;
  case 'g': return MLC_ONNX_ATTR_GRAPH;
  case 'T': return MLC_ONNX_ATTR_SPARSE_TENSOR;
  default: return MLC_ONNX_ATTR_UNDEFINED;
  }
}

static void check_attrs(mlc_fe_problems *p, const mlc_fe_row *r, const mlc_onnx_node *n) {
  for (int i = 0; i < n->nattrs; i++) {
    const mlc_onnx_attr *a = &n->attrs[i];
    const char *spec = NULL;
    size_t len = strlen(a->name);
    for (const char *const *s = r->attrs; *s; s++)
      if (strncmp(*s, a->name, len) == 0 && (*s)[len] == ':') spec = *s;
    if (!spec) {
      mlc_fe_problem(p, "attribute \"%s\" not supported", a->name);
      continue;
    }
    mlc_onnx_attr_type want = letter_type(spec[len + 1]);
    if (a->type != want)
      mlc_fe_problem(p, "attribute \"%s\" is %s, expected %s", a->name, attr_type_name(a->type),
                     attr_type_name(want));
  }
}

static void check_graph(mlc_fe_problems *p, const mlc_onnx_model *om, const mlc_onnx_graph *g,
                        int opset, const char *graph_label, int depth);

static void check_node(mlc_fe_problems *p, const mlc_onnx_model *om, const mlc_onnx_node *n,
                       int opset, const char *graph_label, int depth) {
  char where[768], label[384];
  const char *in = graph_label ? " in graph \"" : "";
  const char *lbl = graph_label ? graph_label : "";
  const char *close = graph_label ? "\"" : "";
  mlc_fe_node_label(n->name, n->index, 1, label, sizeof label);
  if (!mlc_fe_is_default_domain(n->domain)) {
    snprintf(where, sizeof where, "%s%s%s%s (%s.%s, opset %lld)", label, in, lbl, close, n->domain,
             n->op_type, (long long)mlc_onnx_model_opset(om, n->domain));
    p->where = where;
    mlc_fe_problem(p, "op not supported (domain \"%s\")", n->domain);
  } else {
    snprintf(where, sizeof where, "%s%s%s%s (%s, opset %d)", label, in, lbl, close, n->op_type, opset);
    p->where = where;
    int first = 0;
    const mlc_fe_row *r = mlc_fe_lookup(n->op_type, opset, &first);
    if (opset <= 0)
      ; /* reported once for the model */
    else if (!r && first > 0)
      mlc_fe_problem(p, "op does not exist before opset %d", first);
    else if (!r)
      mlc_fe_problem(p, "op not supported");
    else if (!r->cvt)
      mlc_fe_problem(p, "version %d of the op not supported", r->since);
    else {
      check_attrs(p, r, n);
      if (r->check) r->check(p, n, opset);
    }
  }
  /* Subgraphs (If, Loop, Scan bodies). */
  for (int i = 0; i < n->nattrs; i++) {
    const mlc_onnx_attr *a = &n->attrs[i];
    if (a->type == MLC_ONNX_ATTR_GRAPH && a->g)
      check_graph(p, om, a->g, opset, a->g->name, depth + 1);
    if (a->type == MLC_ONNX_ATTR_GRAPHS)
      for (int k = 0; k < a->n; k++)
        if (a->graphs[k]) check_graph(p, om, a->graphs[k], opset, a->graphs[k]->name, depth + 1);
  }
  p->where = NULL;
}

static void check_graph(mlc_fe_problems *p, const mlc_onnx_model *om, const mlc_onnx_graph *g,
                        int opset, const char *graph_label, int depth) {
  if (depth > MAX_DEPTH) {
    p->where = NULL;
    mlc_fe_problem(p, "subgraphs nested more than %d deep", MAX_DEPTH);
    return;
  }
  for (int i = 0; i < g->nnodes; i++) check_node(p, om, &g->nodes[i], opset, graph_label, depth);
}

/* Graph inputs (|is_input|) and outputs. */
static void check_value_info(mlc_fe_problems *p, const mlc_onnx_value_info *v, int is_input) {
  char where[512];
  snprintf(where, sizeof where, "%s \"%s\"", is_input ? "input" : "output", v->name);
  p->where = where;
  const char *what = is_input ? "inputs" : "outputs";
  if (v->kind == MLC_ONNX_VALUE_UNKNOWN) {
    if (is_input) mlc_fe_problem(p, "no type given (untyped inputs are not supported)");
  } else if (v->kind != MLC_ONNX_VALUE_TENSOR) {
    mlc_fe_problem(p, "%s %s not supported", mlc_onnx_value_kind_name(v->kind), what);
  } else if (v->onnx_type && (v->dtype == MLC_DTYPE_INVALID || v->dtype == MLC_DTYPE_STRING)) {
    mlc_fe_problem(p, "element type %s not supported", mlc_onnx_dtype_name(v->onnx_type));
  } else if (is_input && v->onnx_type == 0) {
    mlc_fe_problem(p, "no element type given (untyped inputs are not supported)");
  } else if (is_input && !v->has_shape) {
    mlc_fe_problem(p, "no shape given (inputs of unknown rank are not supported)");
  }
  p->where = NULL;
}

mlc_status mlc_fe_check(const mlc_onnx_model *om) {
  const mlc_onnx_model_info *info = mlc_onnx_model_get_info(om);
  const mlc_onnx_graph *g = info->graph;
  if (!g) return mlc_make_status(MLC_INVALID_ARGUMENT, "model has no graph");
  int opset = mlc_fe_model_opset(om);
  mlc_fe_problems p = {MLC_STRBUF_INIT, 0, NULL};
  char where[512];

  /* Inputs that are also initializers (old opsets) are constants: their
  ** initializer is checked instead. */
  mlc_hash inits = MLC_HASH_INIT;
  for (int i = 0; i < g->ninitializers; i++)
    if (mlc_hash_put(&inits, g->initializers[i].name, (void *)&g->initializers[i])) p.text.oom = 1;
  for (int i = 0; i < g->ninputs; i++)
    if (!mlc_hash_get(&inits, g->inputs[i].name)) check_value_info(&p, &g->inputs[i], 1);
  mlc_hash_fini(&inits);
  for (int i = 0; i < g->ninitializers; i++) {
    const mlc_onnx_tensor *t = &g->initializers[i];
    if (t->dtype == MLC_DTYPE_STRING || t->dtype == MLC_DTYPE_INVALID) {
      snprintf(where, sizeof where, "initializer \"%s\"", t->name);
      p.where = where;
      mlc_fe_problem(&p, "element type %s not supported", mlc_onnx_dtype_name(t->onnx_type));
      p.where = NULL;
    }
  }
  for (int i = 0; i < g->noutputs; i++) check_value_info(&p, &g->outputs[i], 0);
  int uses_default = 0;
  for (int i = 0; i < g->nnodes; i++) uses_default |= mlc_fe_is_default_domain(g->nodes[i].domain);
  if (opset <= 0 && uses_default) mlc_fe_problem(&p, "no opset of the default ONNX domain is imported");
  check_graph(&p, om, g, opset, NULL, 0);

  mlc_status s = NULL;
  if (p.text.oom) s = mlc_oom();
  else if (p.count)
    s = mlc_make_status(MLC_UNIMPLEMENTED, "model uses %d unsupported feature%s:%s", p.count,
                        p.count == 1 ? "" : "s", mlc_sb_str(&p.text));
  mlc_sb_fini(&p.text);
  return s;
}
