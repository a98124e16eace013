/*
** import.c: ONNX model view -> graph IR module (mlc_fe_import).
**
**   1. pre-flight check (check.c): every unsupported feature in one error;
**   2. initializers -> constants, graph inputs -> parameters of "main"
**      (dim_value -> extent, dim_param -> named symbol, neither -> fresh
**      symbol); an input that is also an initializer is a parameter whose
**      default is the initializer, or a constant (see below);
**      with params_as_inputs, floating-point initializers that size no
**      output are parameters with a known value instead (weights_as_params),
**      and so are the floating-point tensors of the main graph's Constant
**      nodes (exporters that write weights as Constant nodes get the same
**      model as those that write initializers; the node is not converted);
**   3. nodes sorted topologically (Kahn, smallest index first, so a file in
**      order keeps its order); a cycle is an error listing its nodes;
**   4. each node through its converter (convert_table.c), with its origin
**      for diagnostics; each produced value is named after its ONNX output;
**   5. graph outputs -> the function's return values.
** On any error the half-built module is destroyed.
**
** A graph input that is also an initializer is, for ONNX (IR version >= 4),
** an input whose initializer is a default the caller may override; before
** IR version 4 every initializer had to be listed as an input, and the
** initializer is the value (ONNX Runtime's reading too).  So, with IR
** version >= 4 and without fold_default_inputs, such an input whose
** initializer is floating-point and sizes no output (the initializers
** params_as_inputs would make inputs) stays a parameter at the graph
** input's place with the initializer as its default
** (mlc_func_set_param_default): nothing folds through it, and the compiled
** model uses the default when the caller does not set the input.  The
** others are constants, as every one is with fold_default_inputs or an
** older IR: an integer or bool initializer (a shape, axes, indices) or a
** float one that sizes an output (Resize's scales) is a value a node needs
** when compiling, and as a run-time input it would make static shapes
** dynamic or the node unsupported.  With params_as_inputs, every
** floating-point weight that sizes no output is a parameter with a known
** value (its initializer), which bind_params makes the input's default.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/hash.h"
#include "frontend/frontend_int.h"

typedef struct importer {
  int params_as_inputs; /* mlc_fe_options */
  int input_defaults;   /* inputs that are also initializers keep them as defaults */
  const mlc_fe_options *opt;
  mlc_hash weights;     /* weight name -> index + 1 in |wt|: made a parameter */
  const mlc_onnx_tensor **wt; /* initializers, then Constant-node tensors */
  int nwt;
  char *skip;           /* by node index: a Constant made a weight (not converted) */
  const mlc_onnx_model *om;
  const mlc_onnx_graph *g;
  mlc_module *m;
  mlc_func *f;
  int opset;
  mlc_arena *work;    /* topological order and per-node scratch */
  mlc_hash values;    /* ONNX value name -> mlc_value* */
  mlc_hash producers; /* ONNX value name -> producing node index + 1 */
  int *order;         /* node indices in topological order (|norder|; skipped nodes left out) */
  int norder;
} importer;

/* "node "x" #3 (Add)" for cycle and dependency messages. */
static void node_label(mlc_strbuf *b, const mlc_onnx_node *n) {
  char label[384];
  mlc_sb_printf(b, "%s (%s)", mlc_fe_node_label(n->name, n->index, 1, label, sizeof label), n->op_type);
}

static mlc_status node_error(const importer *im, const mlc_onnx_node *n, mlc_code code,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static mlc_status node_error(const importer *im, const mlc_onnx_node *n, mlc_code code,
                             const char *fmt, ...) {
  char msg[1024], label[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mlc_make_status(code, "%s (%s, opset %d): %s",
                         mlc_fe_node_label(n->name, n->index, 1, label, sizeof label), n->op_type,
                         im->opset, msg);
}

/* ---- constants and parameters ------------------------------------------- */

/* 1 when a node of the main graph reads |name| as an input that sizes its
** output (so it must stay a constant for the shapes to stay static). */
static int sizes_output(const importer *im, const char *name) {
  for (int i = 0; i < im->g->nnodes; i++) {
    const mlc_onnx_node *n = &im->g->nodes[i];
    if (!mlc_fe_is_default_domain(n->domain)) continue;
    for (int k = 0; k < n->ninputs; k++) {
      if (strcmp(n->inputs[k], name) != 0) continue;
      if (strcmp(n->op_type, "Range") == 0) return 1;
      if (strcmp(n->op_type, "Resize") == 0 && (k == 1 || k == 2)) return 1;
      if (strcmp(n->op_type, "Upsample") == 0 && k == 1) return 1;
    }
  }
  return 0;
}

/* 1 when initializer |t| becomes a parameter (params_as_inputs). */
static int weight_param(const importer *im, const mlc_onnx_tensor *t) {
  return im->params_as_inputs && mlc_dtype_is_float(t->dtype) && !sizes_output(im, t->name);
}

/* The tensor of Constant node |n| when it is a weight with params_as_inputs
** (a floating-point value tensor that sizes no output); NULL otherwise. */
static const mlc_onnx_tensor *constant_weight(const importer *im, const mlc_onnx_node *n) {
  if (!im->params_as_inputs || strcmp(n->op_type, "Constant") != 0 || !mlc_fe_is_default_domain(n->domain) ||
      n->noutputs != 1 || !n->outputs[0][0] || n->nattrs != 1 || strcmp(n->attrs[0].name, "value") != 0 ||
      n->attrs[0].type != MLC_ONNX_ATTR_TENSOR || !n->attrs[0].t)
    return NULL;
  const mlc_onnx_tensor *t = n->attrs[0].t;
  return mlc_dtype_is_float(t->dtype) && !sizes_output(im, n->outputs[0]) ? t : NULL;
}

/* Records |t|, named |name|, as weight |k| (a parameter added by add_params). */
static mlc_status add_weight(importer *im, const char *name, const mlc_onnx_tensor *t) {
  im->wt[im->nwt++] = t;
  return mlc_hash_put(&im->weights, name, (void *)(intptr_t)im->nwt) ? mlc_oom() : NULL;
}

static mlc_status add_initializers(importer *im) {
  size_t nn = im->g->nnodes > 0 ? (size_t)im->g->nnodes : 1;
  im->wt = MLC_ARENA_ARRAY(im->work, (size_t)im->g->ninitializers + nn, const mlc_onnx_tensor *);
  im->skip = MLC_ARENA_ARRAY(im->work, nn, char);
  if (!im->wt || !im->skip) return mlc_oom();
  for (int i = 0; i < im->g->ninitializers; i++) {
    const mlc_onnx_tensor *t = &im->g->initializers[i];
    if (mlc_hash_get(&im->values, t->name) || mlc_hash_get(&im->weights, t->name))
      return mlc_make_status(MLC_INVALID_ARGUMENT, "initializer \"%s\" is defined twice", t->name);
    if (weight_param(im, t)) {
      MLC_RETURN_IF_ERROR(add_weight(im, t->name, t));
      continue;
    }
    mlc_type ty = {t->dtype, t->rank, t->dims};
    mlc_value *v;
    MLC_RETURN_IF_ERROR(mlc_module_add_const(im->m, t->name, &ty, t->data, t->nbytes, &v));
    if (mlc_hash_put(&im->values, v->name, v)) return mlc_oom();
  }
  for (int i = 0; i < im->g->nnodes; i++) {
    const mlc_onnx_node *n = &im->g->nodes[i];
    const mlc_onnx_tensor *t = constant_weight(im, n);
    if (!t) continue;
    const char *name = n->outputs[0];
    if (mlc_hash_get(&im->values, name) || mlc_hash_get(&im->weights, name))
      return node_error(im, n, MLC_INVALID_ARGUMENT, "output \"%s\" is defined more than once", name);
    MLC_RETURN_IF_ERROR(add_weight(im, name, t));
    im->skip[i] = 1;
  }
  return NULL;
}

/* Weight |t| named |name| as a parameter of main whose known value is its
** data. */
static mlc_status add_weight_param(importer *im, const char *name, const mlc_onnx_tensor *t) {
  mlc_type ty = {t->dtype, t->rank, t->dims};
  if (!mlc_type_size_ok(&ty))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "weight \"%s\": the byte size of its shape overflows int64",
                           name);
  mlc_value *c, *v;
  MLC_RETURN_IF_ERROR(mlc_module_add_const(im->m, name, &ty, t->data, t->nbytes, &c));
  MLC_RETURN_IF_ERROR(mlc_func_add_param(im->f, name, &ty, &v));
  MLC_RETURN_IF_ERROR(mlc_func_set_param_value(im->f, im->f->nparams - 1, c));
  return mlc_hash_put(&im->values, v->name, v) ? mlc_oom() : NULL;
}

/* Graph input |name|, which is also the initializer whose constant is
** |c|: a parameter with |c| as its default, or (still) |c| itself. */
static mlc_status add_default_param(importer *im, const char *name, mlc_value *c) {
  if (!im->input_defaults || c->kind != MLC_VALUE_CONST || !mlc_dtype_is_float(c->type.dtype) ||
      !mlc_type_is_static(&c->type) || sizes_output(im, name))
    return NULL;
  mlc_value *v;
  MLC_RETURN_IF_ERROR(mlc_func_add_param(im->f, name, &c->type, &v));
  MLC_RETURN_IF_ERROR(mlc_func_set_param_default(im->f, im->f->nparams - 1, c));
  return mlc_hash_put(&im->values, v->name, v) ? mlc_oom() : NULL;
}

static mlc_status add_params(importer *im) {
  for (int i = 0; i < im->g->ninputs; i++) {
    const mlc_onnx_value_info *vi = &im->g->inputs[i];
    mlc_value *init = mlc_hash_get(&im->values, vi->name);
    if (init) { /* an input that is also an initializer (not a weight) */
      MLC_RETURN_IF_ERROR(add_default_param(im, vi->name, init));
      continue;
    }
    intptr_t w = (intptr_t)mlc_hash_get(&im->weights, vi->name);
    if (w > 0) { /* the same, kept an input: here, with its default */
      MLC_RETURN_IF_ERROR(add_weight_param(im, vi->name, im->wt[w - 1]));
      continue;
    }
    int rank = mlc_fe_input_rank(vi, im->opt);
    if (vi->kind != MLC_ONNX_VALUE_TENSOR || vi->dtype == MLC_DTYPE_INVALID || rank < 0)
      return mlc_make_status(MLC_UNIMPLEMENTED, "input \"%s\": needs a tensor type with a shape (or --input-shape)",
                             vi->name);
    int64_t *dims = MLC_ARENA_ARRAY(im->work, rank > 0 ? (size_t)rank : 1, int64_t);
    if (!dims) return mlc_oom();
    for (int d = 0; d < rank; d++) MLC_RETURN_IF_ERROR(mlc_fe_input_dim(im->m, im->g, im->opt, vi, d, &dims[d]));
    mlc_type ty = {vi->dtype, rank, dims};
    if (!mlc_type_size_ok(&ty))
      return mlc_make_status(MLC_INVALID_ARGUMENT, "input \"%s\": the byte size of its shape overflows int64",
                             vi->name);
    mlc_value *v;
    MLC_RETURN_IF_ERROR(mlc_func_add_param(im->f, vi->name, &ty, &v));
    if (mlc_hash_put(&im->values, v->name, v)) return mlc_oom();
  }
  /* Then the other weights: initializers in their order, then Constant
  ** nodes in theirs. */
  for (int i = 0; i < im->g->ninitializers; i++) {
    const mlc_onnx_tensor *t = &im->g->initializers[i];
    if (mlc_hash_get(&im->weights, t->name) && !mlc_hash_get(&im->values, t->name))
      MLC_RETURN_IF_ERROR(add_weight_param(im, t->name, t));
  }
  for (int i = 0; i < im->g->nnodes; i++)
    if (im->skip[i]) {
      const mlc_onnx_node *n = &im->g->nodes[i];
      if (!mlc_hash_get(&im->values, n->outputs[0]))
        MLC_RETURN_IF_ERROR(add_weight_param(im, n->outputs[0], n->attrs[0].t));
    }
  return NULL;
}

/* ---- topological sort --------------------------------------------------- */

static void heap_push(int *h, int *n, int x) {
  int i = (*n)++;
  while (i > 0 && h[(i - 1) / 2] > x) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = x;
}

static int heap_pop(int *h, int *n) {
  int top = h[0], x = h[--*n], i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && h[c + 1] < h[c]) c++;
    if (h[c] >= x) break;
    h[i] = h[c];
    i = c;
  }
  if (*n > 0) h[i] = x;
  return top;
}

/* The producer (node index) of |name|, or -1 for graph inputs/initializers. */
static int producer_of(const importer *im, const char *name) {
  if (mlc_hash_get(&im->values, name)) return -1;
  return (int)(intptr_t)mlc_hash_get(&im->producers, name) - 1;
}

/* Describes one cycle among the nodes left with pending inputs. */
static mlc_status cycle_error(importer *im, const int *indeg, const char *done) {
  const mlc_onnx_graph *g = im->g;
  int nn = g->nnodes, start = -1;
  for (int i = 0; i < nn && start < 0; i++)
    if (!done[i]) start = i;
  int *step = MLC_ARENA_ARRAY(im->work, (size_t)nn, int);
  int *path = MLC_ARENA_ARRAY(im->work, (size_t)nn + 1, int);
  if (!step || !path) return mlc_oom();
  for (int i = 0; i < nn; i++) step[i] = -1;
  /* Walk from consumer to a pending producer until a node repeats. */
  int u = start, len = 0;
  while (step[u] < 0) {
    step[u] = len;
    path[len++] = u;
    int next = -1;
    const mlc_onnx_node *n = &g->nodes[u];
    for (int k = 0; k < n->ninputs && next < 0; k++) {
      if (!n->inputs[k][0]) continue;
      int p = producer_of(im, n->inputs[k]);
      if (p >= 0 && !done[p]) next = p;
    }
    if (next < 0 || indeg[u] == 0) break; /* cannot happen: pending nodes have pending inputs */
    u = next;
  }
  int first = step[u] >= 0 ? step[u] : 0;
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_sb_puts(&b, "graph has a cycle: ");
  /* path holds consumer -> producer; print in data-flow order. */
  for (int k = len - 1; k >= first; k--) {
    node_label(&b, &g->nodes[path[k]]);
    mlc_sb_puts(&b, " -> ");
  }
  node_label(&b, &g->nodes[path[len - 1]]);
  mlc_status s = b.oom ? mlc_oom() : mlc_make_status(MLC_INVALID_ARGUMENT, "%s", mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return s;
}

static mlc_status sort_nodes(importer *im) {
  const mlc_onnx_graph *g = im->g;
  int nn = g->nnodes;
  size_t sz = nn > 0 ? (size_t)nn : 1;
  for (int i = 0; i < nn; i++) {
    const mlc_onnx_node *n = &g->nodes[i];
    if (im->skip[i]) continue; /* its output is a parameter already */
    for (int k = 0; k < n->noutputs; k++) {
      const char *o = n->outputs[k];
      if (!o[0]) continue;
      if (mlc_hash_get(&im->values, o) || mlc_hash_get(&im->producers, o))
        return node_error(im, n, MLC_INVALID_ARGUMENT, "output \"%s\" is defined more than once", o);
      if (mlc_hash_put(&im->producers, o, (void *)(intptr_t)(i + 1))) return mlc_oom();
    }
  }
  /* Edges producer -> consumer, one per input use, as CSR arrays. */
  int *indeg = MLC_ARENA_ARRAY(im->work, sz, int);
  int *start = MLC_ARENA_ARRAY(im->work, sz + 1, int);
  char *done = MLC_ARENA_ARRAY(im->work, sz, char);
  if (!indeg || !start || !done) return mlc_oom();
  size_t nedges = 0;
  for (int i = 0; i < nn; i++) {
    const mlc_onnx_node *n = &g->nodes[i];
    for (int k = 0; k < n->ninputs; k++) {
      const char *in = n->inputs[k];
      if (!in[0] || mlc_hash_get(&im->values, in)) continue;
      int p = producer_of(im, in);
      if (p < 0)
        return node_error(im, n, MLC_INVALID_ARGUMENT,
                          "input \"%s\" is not a graph input, an initializer or the output of any node",
                          in);
      start[p + 1]++;
      indeg[i]++;
      nedges++;
    }
  }
  for (int i = 0; i < nn; i++) start[i + 1] += start[i];
  int *fill = MLC_ARENA_ARRAY(im->work, sz, int);
  int *cons = MLC_ARENA_ARRAY(im->work, nedges ? nedges : 1, int);
  int *heap = MLC_ARENA_ARRAY(im->work, sz, int);
  im->order = MLC_ARENA_ARRAY(im->work, sz, int);
  if (!fill || !cons || !heap || !im->order) return mlc_oom();
  for (int i = 0; i < nn; i++) {
    const mlc_onnx_node *n = &g->nodes[i];
    for (int k = 0; k < n->ninputs; k++) {
      const char *in = n->inputs[k];
      if (!in[0]) continue;
      int p = producer_of(im, in);
      if (p >= 0) cons[start[p] + fill[p]++] = i;
    }
  }
  int nheap = 0, norder = 0, nskip = 0;
  for (int i = 0; i < nn; i++) {
    if (im->skip[i]) done[i] = 1, nskip++;
    else if (indeg[i] == 0) heap_push(heap, &nheap, i);
  }
  while (nheap > 0) {
    int u = heap_pop(heap, &nheap);
    done[u] = 1;
    im->order[norder++] = u;
    for (int e = start[u]; e < start[u + 1]; e++)
      if (--indeg[cons[e]] == 0) heap_push(heap, &nheap, cons[e]);
  }
  im->norder = norder;
  if (norder + nskip < nn) return cycle_error(im, indeg, done);
  return NULL;
}

static mlc_status add_returns(importer *im) {
  for (int i = 0; i < im->g->noutputs; i++) {
    const mlc_onnx_value_info *vi = &im->g->outputs[i];
    mlc_value *v = mlc_hash_get(&im->values, vi->name);
    if (!v)
      return mlc_make_status(MLC_INVALID_ARGUMENT,
                             "graph output \"%s\" is not a graph input, an initializer or the output of any node",
                             vi->name);
    if (vi->kind == MLC_ONNX_VALUE_TENSOR && vi->dtype != MLC_DTYPE_INVALID && vi->dtype != v->type.dtype)
      return mlc_make_status(MLC_INVALID_ARGUMENT, "graph output \"%s\" is declared %s but computes %s",
                             vi->name, mlc_dtype_name(vi->dtype), mlc_dtype_name(v->type.dtype));
    MLC_RETURN_IF_ERROR(mlc_func_add_ret(im->f, v));
  }
  return NULL;
}

static mlc_status run(importer *im) {
  MLC_RETURN_IF_ERROR(mlc_func_create(im->m, "main", &im->f));
  MLC_RETURN_IF_ERROR(add_initializers(im));
  MLC_RETURN_IF_ERROR(add_params(im));
  MLC_RETURN_IF_ERROR(sort_nodes(im));
  /* Each node through its converter (context.c), in sorted order: every
  ** producer ran before its consumers. */
  mlc_fe_scope top = {&im->values, NULL};
  mlc_fe_ctx base = {im->m, im->f, im->opset, NULL, {NULL, NULL, 0, 0}, im->work, im->g, &top};
  mlc_arena_mark mark = mlc_arena_get_mark(im->work);
  for (int k = 0; k < im->norder; k++) {
    MLC_RETURN_IF_ERROR(mlc_fe_convert_node(&base, &im->values, &im->g->nodes[im->order[k]]));
    mlc_arena_reset(im->work, mark);
  }
  return add_returns(im);
}

mlc_status mlc_fe_import(const mlc_onnx_model *om, const mlc_fe_options *opt, mlc_module **out) {
  *out = NULL;
  MLC_RETURN_IF_ERROR(mlc_fe_check(om));
  importer im;
  memset(&im, 0, sizeof im);
  im.om = om;
  im.g = mlc_onnx_model_get_info(om)->graph;
  im.opset = mlc_fe_model_opset(om);
  mlc_hash h0 = MLC_HASH_INIT;
  im.values = h0;
  im.producers = h0;
  im.weights = h0;
  im.params_as_inputs = opt && opt->params_as_inputs;
  im.input_defaults = !(opt && opt->fold_default_inputs) && mlc_onnx_model_get_info(om)->ir_version >= 4;
  im.opt = opt;
  MLC_RETURN_IF_ERROR(mlc_fe_pins_check(im.g, opt));
  mlc_status s = mlc_module_create(mlc_allocator_default(), &im.m);
  if (s) return s;
  im.m->fold = !(opt && opt->no_fold);
  im.work = mlc_arena_create(mlc_allocator_default());
  s = im.work ? run(&im) : mlc_oom();
  mlc_hash_fini(&im.values);
  mlc_hash_fini(&im.producers);
  mlc_hash_fini(&im.weights);
  mlc_arena_destroy(im.work);
  if (s) {
    mlc_module_destroy(im.m);
    return s;
  }
  *out = im.m;
  return NULL;
}
