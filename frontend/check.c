/*
** check.c: the pre-flight check (STYLE R8, R15).
**
** Before anything is converted, every node of the model (subgraphs
** included) is looked up in the converter table, its input and output
** counts are checked against the op's schema (arity.def), its attributes
** are compared with the ones the converter accepts, and the row's check
** looks at attribute values; graph inputs, outputs and initializers are
** checked for types the compiler has no dtype for.  The model's names are
** checked too: graph inputs, outputs and initializers listed twice, a value
** defined twice (by two nodes, or by a node and a graph input or
** initializer of its graph or an enclosing one); an initializer that is
** also a graph input is allowed (older exporters list both).  So are the
** opset imports: the default domain's version must lie in
** [MLC_FE_OPSET_MIN, MLC_FE_OPSET_MAX], no domain imported twice, every
** node's domain imported.  Every problem becomes one line of a single
** error: MLC_INVALID_ARGUMENT when the model breaks an ONNX rule (its
** errors first), else MLC_UNIMPLEMENTED:
**
**   model uses 2 unsupported features:
**     node "n5" #5 (NonZero, opset 13): op not supported
**     node "c" #2 (Conv, opset 13): attribute "foo" not supported
**
**   model has 1 error:
**     node "k" #0 (Constant, opset 13): has 0 outputs, the op has 1
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

void mlc_fe_invalid(mlc_fe_problems *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mlc_sb_printf(&p->errors, "\n  %s: ", p->where ? p->where : "model");
  mlc_sb_vprintf(&p->errors, fmt, ap);
  va_end(ap);
  p->nerrors++;
}

/* ---- arity ---------------------------------------------------------------- */

/* "1", "1 to 3" or "at least 1" into |buf|. */
static const char *count_range(int mn, int mx, char *buf, size_t size) {
  if (mx == mn) snprintf(buf, size, "%d", mn);
  else if (mx < 0) snprintf(buf, size, "at least %d", mn);
  else snprintf(buf, size, "%d to %d", mn, mx);
  return buf;
}

/* The option letter of formal parameter |i| in |params| (a variadic last
** parameter repeats); 0 past the end. */
static char param_option(const char *params, int i) {
  size_t len = strlen(params);
  if ((size_t)i < len) return params[i];
  return len > 0 && params[len - 1] == 'v' ? 'v' : 0;
}

int mlc_fe_check_arity(const mlc_fe_row *r, const mlc_onnx_node *n, char *msg, size_t size) {
  char range[48];
  const mlc_fe_arity *a = mlc_fe_row_arity(r);
  if (!a) {
    snprintf(msg, size, "no input and output counts for version %d of the op (arity.def is out of date)",
             r->since);
    return -1;
  }
  if (n->ninputs < a->min_in || (a->max_in >= 0 && n->ninputs > a->max_in)) {
    snprintf(msg, size, "takes %s input%s, got %d", count_range(a->min_in, a->max_in, range, sizeof range),
             a->min_in == 1 && a->max_in <= 1 ? "" : "s", n->ninputs);
    return -1;
  }
  if (n->noutputs < a->min_out || (a->max_out >= 0 && n->noutputs > a->max_out)) {
    snprintf(msg, size, "has %d output%s, the op has %s", n->noutputs, n->noutputs == 1 ? "" : "s",
             count_range(a->min_out, a->max_out, range, sizeof range));
    return -1;
  }
  /* An empty name omits an optional value; required and variadic inputs
  ** need a value, required outputs a name (unused variadic outputs may
  ** stay unnamed). */
  for (int i = 0; i < n->ninputs; i++) {
    char opt = param_option(a->ins, i);
    if (!n->inputs[i][0] && opt != 'o') {
      snprintf(msg, size, "input %d is %s but empty", i,
               opt == 'v' ? "variadic (it cannot be omitted)" : "required");
      return -1;
    }
  }
  for (int i = 0; i < n->noutputs; i++)
    if (!n->outputs[i][0] && param_option(a->outs, i) == 's') {
      snprintf(msg, size, "output %d is required but its name is empty", i);
      return -1;
    }
  return 0;
}

int mlc_fe_is_default_domain(const char *domain) {
  return !domain || !domain[0] || strcmp(domain, "ai.onnx") == 0;
}

int mlc_fe_model_opset(const mlc_onnx_model *om) {
  const mlc_onnx_model_info *info = mlc_onnx_model_get_info(om);
  for (int i = 0; i < info->nopsets; i++)
    if (mlc_fe_is_default_domain(info->opsets[i].domain)) {
      int64_t v = info->opsets[i].version; /* out of range: an error of the pre-flight check */
      return v < 0 ? 0 : v > 1000000 ? 1000000 : (int)v;
    }
  /* IR versions before 3 had no opset_import: their ops are version 1. */
  return info->ir_version < 3 ? 1 : 0;
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

/* ---- names ---------------------------------------------------------------- */

/* What defines a name: the defining node's view, or one of these. */
static const char INPUT_TAG[] = "a graph input", INIT_TAG[] = "an initializer";

/* The names one graph has defined so far, and those of the enclosing graph
** that were defined before the node holding this graph: what ONNX's single
** static assignment rule compares a node's outputs with. */
typedef struct names {
  mlc_hash defs; /* name -> INPUT_TAG, INIT_TAG or the defining node */
  const struct names *parent;
} names;

/* What defines |name| in |nm| or an enclosing graph, described in |buf|;
** NULL when nothing does. */
static const char *defined_by(const names *nm, const char *name, char *buf, size_t size) {
  for (int depth = 0; nm; nm = nm->parent, depth++) {
    const void *d = mlc_hash_get(&nm->defs, name);
    if (!d) continue;
    const char *outer = depth ? " of an enclosing graph" : "";
    if (d == INPUT_TAG || d == INIT_TAG) {
      snprintf(buf, size, "%s%s", (const char *)d, outer);
    } else {
      const mlc_onnx_node *n = d;
      char label[384];
      snprintf(buf, size, "an output of %s (%s)%s",
               mlc_fe_node_label(n->name, n->index, 1, label, sizeof label), n->op_type, outer);
    }
    return buf;
  }
  return NULL;
}

/* Graph inputs, initializers and outputs listed twice; records the inputs
** and initializers of |g| in |nm|.  An initializer may also be an input. */
static void check_graph_names(mlc_fe_problems *p, const mlc_onnx_graph *g, const char *graph_label,
                              names *nm) {
  char where[512];
  const char *what = graph_label ? "" : "graph ";
  snprintf(where, sizeof where, "graph \"%s\"", graph_label ? graph_label : "");
  p->where = graph_label ? where : NULL;
  for (int i = 0; i < g->ninputs; i++) {
    const char *name = g->inputs[i].name;
    if (mlc_hash_get(&nm->defs, name))
      mlc_fe_invalid(p, "%sinput \"%s\" is listed more than once", what, name);
    else if (mlc_hash_put(&nm->defs, name, (void *)INPUT_TAG)) p->text.oom = 1;
  }
  for (int i = 0; i < g->ninitializers; i++) {
    const char *name = g->initializers[i].name;
    const void *d = mlc_hash_get(&nm->defs, name);
    if (d == INIT_TAG) mlc_fe_invalid(p, "initializer \"%s\" is listed more than once", name);
    else if (mlc_hash_put(&nm->defs, name, (void *)INIT_TAG)) p->text.oom = 1;
  }
  mlc_hash outs = MLC_HASH_INIT;
  for (int i = 0; i < g->noutputs; i++) {
    const char *name = g->outputs[i].name;
    if (mlc_hash_get(&outs, name)) mlc_fe_invalid(p, "%soutput \"%s\" is listed more than once", what, name);
    else if (mlc_hash_put(&outs, name, (void *)name)) p->text.oom = 1;
  }
  mlc_hash_fini(&outs);
  p->where = NULL;
}

/* The outputs of |n| against the names defined before it (in its graph and
** the enclosing ones). */
static void check_node_outputs(mlc_fe_problems *p, const mlc_onnx_node *n, const names *nm) {
  char by[768];
  for (int k = 0; k < n->noutputs; k++) {
    const char *o = n->outputs[k];
    int twice = 0;
    for (int j = 0; j < k && o[0]; j++) twice |= strcmp(n->outputs[j], o) == 0;
    if (twice) mlc_fe_invalid(p, "output \"%s\" is defined more than once: the node lists it twice", o);
    else if (o[0] && defined_by(nm, o, by, sizeof by))
      mlc_fe_invalid(p, "output \"%s\" is defined more than once: it is also %s", o, by);
  }
}

/* ---- nodes and graphs ------------------------------------------------------ */

static void check_graph(mlc_fe_problems *p, const mlc_onnx_model *om, const mlc_onnx_graph *g,
                        int opset, const char *graph_label, int depth, const names *parent);

static void check_node(mlc_fe_problems *p, const mlc_onnx_model *om, const mlc_onnx_node *n,
                       int opset, const char *graph_label, int depth, names *nm) {
  char where[768], label[384];
  const char *in = graph_label ? " in graph \"" : "";
  const char *lbl = graph_label ? graph_label : "";
  const char *close = graph_label ? "\"" : "";
  mlc_fe_node_label(n->name, n->index, 1, label, sizeof label);
  if (!mlc_fe_is_default_domain(n->domain)) {
    int64_t version = mlc_onnx_model_opset(om, n->domain);
    snprintf(where, sizeof where, "%s%s%s%s (%s.%s, opset %lld)", label, in, lbl, close, n->domain,
             n->op_type, (long long)version);
    p->where = where;
    if (version <= 0) mlc_fe_invalid(p, "its domain \"%s\" is not imported by the model", n->domain);
    else mlc_fe_problem(p, "op not supported (domain \"%s\")", n->domain);
  } else {
    snprintf(where, sizeof where, "%s%s%s%s (%s, opset %d)", label, in, lbl, close, n->op_type, opset);
    p->where = where;
    int first = 0;
    const mlc_fe_row *r = mlc_fe_lookup(n->op_type, opset, &first);
    char msg[256];
    if (opset < MLC_FE_OPSET_MIN || opset > MLC_FE_OPSET_MAX)
      ; /* reported once for the model */
    else if (!r && first > 0)
      mlc_fe_problem(p, "op does not exist before opset %d", first);
    else if (!r)
      mlc_fe_problem(p, "op not supported");
    else if (mlc_fe_check_arity(r, n, msg, sizeof msg))
      mlc_fe_invalid(p, "%s", msg);
    else if (!r->cvt)
      mlc_fe_problem(p, "version %d of the op not supported", r->since);
    else {
      check_attrs(p, r, n);
      if (r->check) r->check(p, n, opset);
    }
  }
  check_node_outputs(p, n, nm);
  /* Subgraphs (If, Loop, Scan bodies): they see the names defined before
  ** this node, and may reuse the names of its outputs. */
  for (int i = 0; i < n->nattrs; i++) {
    const mlc_onnx_attr *a = &n->attrs[i];
    if (a->type == MLC_ONNX_ATTR_GRAPH && a->g)
      check_graph(p, om, a->g, opset, a->g->name, depth + 1, nm);
    if (a->type == MLC_ONNX_ATTR_GRAPHS)
      for (int k = 0; k < a->n; k++)
        if (a->graphs[k]) check_graph(p, om, a->graphs[k], opset, a->graphs[k]->name, depth + 1, nm);
  }
  for (int k = 0; k < n->noutputs; k++) {
    const char *o = n->outputs[k];
    if (o[0] && !mlc_hash_get(&nm->defs, o) && mlc_hash_put(&nm->defs, o, (void *)n)) p->text.oom = 1;
  }
  p->where = NULL;
}

static void check_graph(mlc_fe_problems *p, const mlc_onnx_model *om, const mlc_onnx_graph *g,
                        int opset, const char *graph_label, int depth, const names *parent) {
  if (depth > MAX_DEPTH) {
    p->where = NULL;
    mlc_fe_problem(p, "subgraphs nested more than %d deep", MAX_DEPTH);
    return;
  }
  names nm = {MLC_HASH_INIT, parent};
  check_graph_names(p, g, graph_label, &nm);
  for (int i = 0; i < g->nnodes; i++) check_node(p, om, &g->nodes[i], opset, graph_label, depth, &nm);
  mlc_hash_fini(&nm.defs);
}

/* ---- the model -------------------------------------------------------------- */

/* The opset imports: each domain once, the default domain's version one
** this build takes; and the IR version. */
static void check_opsets(mlc_fe_problems *p, const mlc_onnx_model_info *info) {
  for (int i = 0; i < info->nopsets; i++) {
    const mlc_onnx_opset *o = &info->opsets[i];
    int dflt = mlc_fe_is_default_domain(o->domain);
    for (int j = 0; j < i; j++) {
      const mlc_onnx_opset *q = &info->opsets[j];
      if (dflt ? mlc_fe_is_default_domain(q->domain) : strcmp(o->domain, q->domain) == 0) {
        mlc_fe_invalid(p, "domain \"%s\" is imported more than once (opsets %lld and %lld)",
                       dflt ? "ai.onnx" : o->domain, (long long)q->version, (long long)o->version);
        break;
      }
    }
    if (dflt && o->version < 1)
      mlc_fe_invalid(p, "opset %lld of the default domain is not a valid version (this build supports opsets "
                     "%d to %d)", (long long)o->version, MLC_FE_OPSET_MIN, MLC_FE_OPSET_MAX);
    else if (dflt && (o->version < MLC_FE_OPSET_MIN || o->version > MLC_FE_OPSET_MAX))
      mlc_fe_problem(p, "opset %lld of the default domain is not supported (this build supports opsets "
                     "%d to %d)", (long long)o->version, MLC_FE_OPSET_MIN, MLC_FE_OPSET_MAX);
  }
  if (info->ir_version < 1)
    mlc_fe_invalid(p, "ir_version %lld is not valid (IR versions start at 1)", (long long)info->ir_version);
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
  mlc_fe_problems p = {MLC_STRBUF_INIT, 0, MLC_STRBUF_INIT, 0, NULL};
  char where[512];

  check_opsets(&p, info);
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
  int uses_default = 0, imports_default = 0;
  for (int i = 0; i < g->nnodes; i++) uses_default |= mlc_fe_is_default_domain(g->nodes[i].domain);
  for (int i = 0; i < info->nopsets; i++) imports_default |= mlc_fe_is_default_domain(info->opsets[i].domain);
  if (opset <= 0 && !imports_default && uses_default)
    mlc_fe_invalid(&p, "no opset of the default ONNX domain is imported");
  check_graph(&p, om, g, opset, NULL, 0, NULL);

  mlc_status s = NULL;
  if (p.text.oom || p.errors.oom) s = mlc_oom();
  else if (p.nerrors && p.count)
    s = mlc_make_status(MLC_INVALID_ARGUMENT, "model has %d error%s:%s\nand uses %d unsupported feature%s:%s",
                        p.nerrors, p.nerrors == 1 ? "" : "s", mlc_sb_str(&p.errors), p.count,
                        p.count == 1 ? "" : "s", mlc_sb_str(&p.text));
  else if (p.nerrors)
    s = mlc_make_status(MLC_INVALID_ARGUMENT, "model has %d error%s:%s", p.nerrors, p.nerrors == 1 ? "" : "s",
                        mlc_sb_str(&p.errors));
  else if (p.count)
    s = mlc_make_status(MLC_UNIMPLEMENTED, "model uses %d unsupported feature%s:%s", p.count,
                        p.count == 1 ? "" : "s", mlc_sb_str(&p.text));
  mlc_sb_fini(&p.text);
  mlc_sb_fini(&p.errors);
  return s;
}
