/*
** inspect.c: mlc_inspect_file, the library side of `mlc-onnx inspect`.
**
** For a .onnx file it loads the model (onnx.h views only; no protobuf here),
** gathers the facts a user asks first (IR version, producer, opsets, the
** I/O signature with symbolic dims by name, node count, op histogram,
** parameter count and bytes), then asks the frontend for its verdict: the
** pre-flight check (every unsupported op, opset, attribute or dtype in one
** error) and a full import, so that shape-inference errors surface too.  An
** unsupported or inconsistent model is an error, never a report.
**
** Formats: TEXT (aligned summary), JSON (one object, same facts), IR (the
** imported module printed TVMScript-like) and DOT (Graphviz of "main").
** Compiled models (.so) are recognized by their ELF magic and described by
** inspect_so.c.
*/
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mlc/mlc.h"
#include "base/dtype.h"
#include "base/hash.h"
#include "base/status.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "driver/driver_int.h"
#include "frontend/frontend.h"
#include "graph/graph.h"
#include "onnx/onnx.h"

/* One row of the op histogram; strings are borrowed from the model views. */
typedef struct op_count {
  const char *domain; /* "" for the default domain */
  const char *op;
  int64_t count;
} op_count;

/* What TEXT and JSON report.  Borrowed views of the loaded model. */
typedef struct facts {
  const char *path;
  const mlc_onnx_model_info *info;
  const mlc_onnx_graph *g;
  mlc_hash inits;          /* initializer names, to drop them from inputs */
  MLC_VEC(op_count) ops;   /* sorted: count desc, then name */
  int64_t params;          /* initializer + Constant elements */
  int64_t param_bytes;
  const mlc_module *mod;   /* the imported module */
  int64_t bindings;        /* bindings of "main" */
} facts;

/* ---- small helpers ------------------------------------------------------ */

static int64_t sat_add(int64_t a, int64_t b) {
  if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
  return a + b;
}

static const char *str_or_empty(const char *s) { return s ? s : ""; }

static int is_default_domain(const char *d) {
  return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

static const char *domain_name(const char *d) { return is_default_domain(d) ? "ai.onnx" : d; }

/* Appends |s| for a terminal: control bytes become \xNN, the rest verbatim. */
static void put_text(mlc_strbuf *b, const char *s) {
  for (const unsigned char *p = (const unsigned char *)str_or_empty(s); *p; p++) {
    if (*p < 0x20 || *p == 0x7f)
      mlc_sb_printf(b, "\\x%02x", *p);
    else
      mlc_sb_putc(b, (char)*p);
  }
}

/* Appends the display name of an op type: "Conv", or "domain:Op" outside the default domain. */
static void put_op_name(mlc_strbuf *b, const op_count *o, int json) {
  if (json) {
    if (is_default_domain(o->domain)) {
      mlc_sb_json_str(b, o->op);
    } else {
      mlc_strbuf tmp = MLC_STRBUF_INIT;
      mlc_sb_printf(&tmp, "%s:%s", o->domain, o->op);
      if (tmp.oom) b->oom = 1;
      mlc_sb_json_str(b, mlc_sb_str(&tmp));
      mlc_sb_fini(&tmp);
    }
    return;
  }
  if (!is_default_domain(o->domain)) {
    put_text(b, o->domain);
    mlc_sb_putc(b, ':');
  }
  put_text(b, o->op);
}

static size_t op_name_len(const op_count *o) {
  size_t n = strlen(str_or_empty(o->op));
  if (!is_default_domain(o->domain)) n += strlen(o->domain) + 1;
  return n;
}

static int cmp_ops(const void *pa, const void *pb) {
  const op_count *a = pa, *b = pb;
  if (a->count != b->count) return a->count > b->count ? -1 : 1;
  int c = strcmp(str_or_empty(a->op), str_or_empty(b->op));
  if (c) return c;
  return strcmp(domain_name(a->domain), domain_name(b->domain));
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* ---- gathering facts ---------------------------------------------------- */

/* Adds one node's op type to the histogram. */
static mlc_status count_op(facts *f, const mlc_onnx_node *n) {
  const char *dom = str_or_empty(n->domain), *op = str_or_empty(n->op_type);
  for (size_t i = 0; i < f->ops.len; i++) {
    op_count *o = &f->ops.data[i];
    if (strcmp(o->op, op) == 0 &&
        (strcmp(o->domain, dom) == 0 || (is_default_domain(o->domain) && is_default_domain(dom)))) {
      o->count++;
      return NULL;
    }
  }
  op_count o = {dom, op, 1};
  if (mlc_vec_push(&f->ops, o)) return mlc_oom();
  return NULL;
}

static int64_t tensor_bytes(const mlc_onnx_tensor *t) {
  if (t->dtype != MLC_DTYPE_STRING) return (int64_t)t->nbytes;
  int64_t n = 0;
  for (int64_t i = 0; t->string_lens && i < t->numel; i++) n = sat_add(n, (int64_t)t->string_lens[i]);
  return n;
}

/* Elements and bytes held by a Constant node's value attribute. */
static void count_constant(facts *f, const mlc_onnx_node *n) {
  for (int i = 0; i < n->nattrs; i++) {
    const mlc_onnx_attr *a = &n->attrs[i];
    const char *name = str_or_empty(a->name);
    int64_t elems = 0, bytes = 0;
    if (strcmp(name, "value") == 0 && a->type == MLC_ONNX_ATTR_TENSOR && a->t) {
      elems = a->t->numel;
      bytes = tensor_bytes(a->t);
    } else if (strcmp(name, "value_float") == 0) {
      elems = 1, bytes = 4;
    } else if (strcmp(name, "value_floats") == 0) {
      elems = a->n, bytes = (int64_t)a->n * 4;
    } else if (strcmp(name, "value_int") == 0) {
      elems = 1, bytes = 8;
    } else if (strcmp(name, "value_ints") == 0) {
      elems = a->n, bytes = (int64_t)a->n * 8;
    } else if (strcmp(name, "value_string") == 0) {
      elems = 1, bytes = (int64_t)a->s_len;
    } else if (strcmp(name, "value_strings") == 0) {
      elems = a->n;
      for (int k = 0; a->strings && k < a->n; k++) bytes = sat_add(bytes, (int64_t)strlen(str_or_empty(a->strings[k])));
    } else {
      continue;
    }
    if (elems < 0) elems = 0;
    f->params = sat_add(f->params, elems);
    f->param_bytes = sat_add(f->param_bytes, bytes);
  }
}

static mlc_status gather(facts *f) {
  const mlc_onnx_graph *g = f->g;
  for (int i = 0; i < g->ninitializers; i++) {
    const mlc_onnx_tensor *t = &g->initializers[i];
    if (t->name && *t->name && mlc_hash_put(&f->inits, t->name, (void *)t)) return mlc_oom();
    f->params = sat_add(f->params, t->numel);
    f->param_bytes = sat_add(f->param_bytes, tensor_bytes(t));
  }
  for (int i = 0; i < g->nnodes; i++) {
    const mlc_onnx_node *n = &g->nodes[i];
    MLC_RETURN_IF_ERROR(count_op(f, n));
    if (is_default_domain(n->domain) && strcmp(str_or_empty(n->op_type), "Constant") == 0)
      count_constant(f, n);
  }
  if (f->ops.len > 1) qsort(f->ops.data, f->ops.len, sizeof *f->ops.data, cmp_ops);
  return NULL;
}

/* Graph inputs that are not initializers (old opsets list both). */
static int is_real_input(const facts *f, const mlc_onnx_value_info *v) {
  return !(v->name && mlc_hash_get(&f->inits, v->name));
}

/* ---- types and shapes --------------------------------------------------- */

/* The element type: "float32", an ONNX name in lower case ("complex64") for
** types mlc does not compute with, or "unknown". */
static void put_dtype(mlc_strbuf *b, const mlc_onnx_value_info *v) {
  if (v->dtype != MLC_DTYPE_INVALID) {
    mlc_sb_puts(b, mlc_dtype_name(v->dtype));
    return;
  }
  const char *n = v->onnx_type ? mlc_onnx_dtype_name(v->onnx_type) : NULL;
  if (!n || !*n) {
    mlc_sb_puts(b, "unknown");
    return;
  }
  for (const char *p = n; *p; p++) {
    char c = *p;
    mlc_sb_putc(b, (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c);
  }
}

/* Text form of a value's type: "float32", "sequence(float32)", "map". */
static void put_type_text(mlc_strbuf *b, const mlc_onnx_value_info *v) {
  switch (v->kind) {
    case MLC_ONNX_VALUE_TENSOR: put_dtype(b, v); return;
    case MLC_ONNX_VALUE_MAP:
    case MLC_ONNX_VALUE_UNKNOWN: mlc_sb_puts(b, mlc_onnx_value_kind_name(v->kind)); return;
    case MLC_ONNX_VALUE_SEQUENCE:
    case MLC_ONNX_VALUE_OPTIONAL:
    case MLC_ONNX_VALUE_SPARSE_TENSOR:
      mlc_sb_printf(b, "%s(", mlc_onnx_value_kind_name(v->kind));
      put_dtype(b, v);
      mlc_sb_putc(b, ')');
      return;
  }
  mlc_sb_puts(b, "unknown");
}

/* Text shape: [1, N, ?, 3]; "?" when the rank is unknown. */
static void put_shape_text(mlc_strbuf *b, const mlc_onnx_value_info *v) {
  if (!v->has_shape || v->rank < 0 || (v->rank > 0 && !v->dims)) {
    mlc_sb_puts(b, "?");
    return;
  }
  mlc_sb_putc(b, '[');
  for (int i = 0; i < v->rank; i++) {
    const mlc_onnx_dim *d = &v->dims[i];
    if (i) mlc_sb_puts(b, ", ");
    if (d->param && *d->param)
      put_text(b, d->param);
    else if (d->value >= 0)
      mlc_sb_printf(b, "%" PRId64, d->value);
    else
      mlc_sb_putc(b, '?');
  }
  mlc_sb_putc(b, ']');
}

/* JSON shape: [1, "N", null, 3]; null when the rank is unknown. */
static void put_shape_json(mlc_strbuf *b, const mlc_onnx_value_info *v) {
  if (!v->has_shape || v->rank < 0 || (v->rank > 0 && !v->dims)) {
    mlc_sb_puts(b, "null");
    return;
  }
  mlc_sb_putc(b, '[');
  for (int i = 0; i < v->rank; i++) {
    const mlc_onnx_dim *d = &v->dims[i];
    if (i) mlc_sb_putc(b, ',');
    if (d->param && *d->param)
      mlc_sb_json_str(b, d->param);
    else if (d->value >= 0)
      mlc_sb_printf(b, "%" PRId64, d->value);
    else
      mlc_sb_puts(b, "null");
  }
  mlc_sb_putc(b, ']');
}

/* ---- TEXT ---------------------------------------------------------------- */

static void put_io_text(mlc_strbuf *b, const facts *f, const char *title,
                        const mlc_onnx_value_info *vs, int n, int skip_inits) {
  int count = 0;
  size_t width = 0;
  for (int i = 0; i < n; i++) {
    if (skip_inits && !is_real_input(f, &vs[i])) continue;
    size_t w = strlen(str_or_empty(vs[i].name));
    if (w > width) width = w;
    count++;
  }
  if (width > 40) width = 40;
  mlc_sb_printf(b, "%-12s %d\n", title, count);
  for (int i = 0; i < n; i++) {
    const mlc_onnx_value_info *v = &vs[i];
    if (skip_inits && !is_real_input(f, v)) continue;
    mlc_sb_puts(b, "  ");
    size_t start = b->len;
    if (v->name && *v->name)
      put_text(b, v->name);
    else
      mlc_sb_puts(b, "\"\"");
    for (size_t w = b->len - start; w < width; w++) mlc_sb_putc(b, ' ');
    mlc_sb_puts(b, "  ");
    put_type_text(b, v);
    mlc_sb_putc(b, ' ');
    put_shape_text(b, v);
    mlc_sb_putc(b, '\n');
  }
}

static void render_text(mlc_strbuf *b, const facts *f) {
  const mlc_onnx_model_info *in = f->info;
  mlc_sb_puts(b, "file:        ");
  put_text(b, f->path);
  mlc_sb_printf(b, "\nir_version:  %" PRId64 "\n", in->ir_version);
  mlc_sb_puts(b, "producer:    ");
  put_text(b, in->producer_name);
  if (in->producer_version && *in->producer_version) {
    mlc_sb_putc(b, ' ');
    put_text(b, in->producer_version);
  }
  if (!(in->producer_name && *in->producer_name) && !(in->producer_version && *in->producer_version))
    mlc_sb_puts(b, "(none)");
  mlc_sb_puts(b, "\nopsets:      ");
  for (int i = 0; i < in->nopsets; i++) {
    if (i) mlc_sb_puts(b, ", ");
    put_text(b, domain_name(in->opsets[i].domain));
    mlc_sb_printf(b, " %" PRId64, in->opsets[i].version);
  }
  if (in->nopsets == 0) mlc_sb_puts(b, "(none)");
  mlc_sb_putc(b, '\n');
  put_io_text(b, f, "inputs:", f->g->inputs, f->g->ninputs, 1);
  put_io_text(b, f, "outputs:", f->g->outputs, f->g->noutputs, 0);
  mlc_sb_printf(b, "nodes:       %d\n", f->g->nnodes);
  mlc_sb_printf(b, "ops:         %zu\n", f->ops.len);
  size_t width = 0;
  for (size_t i = 0; i < f->ops.len; i++) {
    size_t w = op_name_len(&f->ops.data[i]);
    if (w > width) width = w;
  }
  if (width > 40) width = 40;
  for (size_t i = 0; i < f->ops.len; i++) {
    mlc_sb_puts(b, "  ");
    size_t start = b->len;
    put_op_name(b, &f->ops.data[i], 0);
    for (size_t w = b->len - start; w < width; w++) mlc_sb_putc(b, ' ');
    mlc_sb_printf(b, "  %" PRId64 "\n", f->ops.data[i].count);
  }
  mlc_sb_printf(b, "params:      %" PRId64 " (%" PRId64 " bytes)\n", f->params, f->param_bytes);
  mlc_sb_printf(b, "import:      ok, %" PRId64 " binding%s, %d constant%s\n", f->bindings,
                f->bindings == 1 ? "" : "s", f->mod->nconsts, f->mod->nconsts == 1 ? "" : "s");
  const mlc_func *mainf = mlc_module_func(f->mod, "main");
  for (int i = 0; mainf && i < mainf->nrets; i++) {
    mlc_sb_puts(b, "  returns    ");
    mlc_graph_print_type(f->mod, &mainf->rets[i]->type, b);
    mlc_sb_putc(b, '\n');
  }
}

/* ---- JSON ---------------------------------------------------------------- */

static void put_io_json(mlc_strbuf *b, const facts *f, const mlc_onnx_value_info *vs, int n,
                        int skip_inits) {
  mlc_sb_putc(b, '[');
  int first = 1;
  for (int i = 0; i < n; i++) {
    const mlc_onnx_value_info *v = &vs[i];
    if (skip_inits && !is_real_input(f, v)) continue;
    if (!first) mlc_sb_putc(b, ',');
    first = 0;
    mlc_sb_puts(b, "{\"name\":");
    mlc_sb_json_str(b, str_or_empty(v->name));
    mlc_sb_puts(b, ",\"kind\":");
    mlc_sb_json_str(b, mlc_onnx_value_kind_name(v->kind));
    mlc_sb_puts(b, ",\"dtype\":\"");
    put_dtype(b, v);
    mlc_sb_puts(b, "\",\"shape\":");
    put_shape_json(b, v);
    mlc_sb_putc(b, '}');
  }
  mlc_sb_putc(b, ']');
}

static void render_json(mlc_strbuf *b, const facts *f) {
  const mlc_onnx_model_info *in = f->info;
  mlc_sb_puts(b, "{\"file\":");
  mlc_sb_json_str(b, f->path);
  mlc_sb_printf(b, ",\"ir_version\":%" PRId64 ",\"producer\":", in->ir_version);
  {
    mlc_strbuf p = MLC_STRBUF_INIT;
    mlc_sb_puts(&p, str_or_empty(in->producer_name));
    if (in->producer_version && *in->producer_version) {
      if (p.len) mlc_sb_putc(&p, ' ');
      mlc_sb_puts(&p, in->producer_version);
    }
    if (p.oom) b->oom = 1;
    mlc_sb_json_str(b, mlc_sb_str(&p));
    mlc_sb_fini(&p);
  }
  mlc_sb_puts(b, ",\"graph\":");
  mlc_sb_json_str(b, str_or_empty(f->g->name));
  mlc_sb_puts(b, ",\"opsets\":[");
  for (int i = 0; i < in->nopsets; i++) {
    if (i) mlc_sb_putc(b, ',');
    mlc_sb_puts(b, "{\"domain\":");
    mlc_sb_json_str(b, domain_name(in->opsets[i].domain));
    mlc_sb_printf(b, ",\"version\":%" PRId64 "}", in->opsets[i].version);
  }
  mlc_sb_puts(b, "],\"inputs\":");
  put_io_json(b, f, f->g->inputs, f->g->ninputs, 1);
  mlc_sb_puts(b, ",\"outputs\":");
  put_io_json(b, f, f->g->outputs, f->g->noutputs, 0);
  mlc_sb_printf(b, ",\"nodes\":%d,\"ops\":{", f->g->nnodes);
  for (size_t i = 0; i < f->ops.len; i++) {
    if (i) mlc_sb_putc(b, ',');
    put_op_name(b, &f->ops.data[i], 1);
    mlc_sb_printf(b, ":%" PRId64, f->ops.data[i].count);
  }
  mlc_sb_printf(b, "},\"params\":{\"count\":%" PRId64 ",\"bytes\":%" PRId64 "}", f->params,
                f->param_bytes);
  mlc_sb_printf(b, ",\"import\":{\"bindings\":%" PRId64 ",\"constants\":%d}}\n", f->bindings,
                f->mod->nconsts);
}

/* ---- entry points ------------------------------------------------------- */

/* Sets *is_so when |path| (not named .onnx) is an ELF shared object. */
static mlc_status probe_compiled(const char *path, int *is_so) {
  *is_so = 0;
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return mlc_make_status(MLC_IO_ERROR, "%s: is a directory, not a model file", path);
  /* Only a regular file is opened here: a FIFO would block; the loader
  ** explains what is wrong with anything else. */
  if (ends_with(path, ".onnx") || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return NULL;
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL; /* the loader reports why it cannot be read */
  unsigned char magic[4] = {0};
  size_t n = fread(magic, 1, sizeof magic, fp);
  fclose(fp);
  *is_so = n == 4 && memcmp(magic, "\x7f" "ELF", 4) == 0;
  return NULL;
}

/* Prefixes |s| with the model path unless its message already names it. */
static mlc_status with_path(mlc_status s, const char *path) {
  if (!s || strstr(mlc_status_message(s), path)) return s;
  return mlc_status_annotate(s, "%s", path);
}

static int64_t count_bindings(const mlc_module *m) {
  const mlc_func *f = mlc_module_func(m, "main");
  int64_t n = 0;
  for (int i = 0; f && i < f->nblocks; i++) n += f->blocks[i].n;
  return n;
}

/* Describes the loaded model |om| (borrowed), named |path| in the report. */
static mlc_status describe(const char *path, mlc_onnx_model *om, mlc_inspect_format fmt,
                           mlc_strbuf *b) {
  mlc_module *mod = NULL;
  facts f;
  memset(&f, 0, sizeof f);
  mlc_status s = NULL;
  f.path = path;
  f.info = mlc_onnx_model_get_info(om);
  if (!f.info || !f.info->graph) {
    s = mlc_make_status(MLC_INVALID_ARGUMENT, "%s: the model has no graph", path);
    goto done;
  }
  f.g = f.info->graph;
  if (fmt == MLC_INSPECT_TEXT || fmt == MLC_INSPECT_JSON) {
    s = gather(&f);
    if (s) goto done;
  }
  /* The frontend's verdict: every unsupported feature at once, then a full
  ** import so that type and shape errors surface as well. */
  s = mlc_fe_check(om);
  if (!s) s = mlc_fe_import(om, NULL, &mod);
  if (s) {
    s = with_path(s, path);
    goto done;
  }
  f.mod = mod;
  f.bindings = count_bindings(mod);
  switch (fmt) {
    case MLC_INSPECT_TEXT: render_text(b, &f); break;
    case MLC_INSPECT_JSON: render_json(b, &f); break;
    case MLC_INSPECT_IR: mlc_graph_print(mod, b); break;
    case MLC_INSPECT_DOT: {
      const mlc_func *mainf = mlc_module_func(mod, "main");
      if (!mainf) {
        s = mlc_make_status(MLC_INTERNAL, "%s: the imported module has no function \"main\"", path);
        goto done;
      }
      mlc_graph_print_dot(mod, mainf, b);
      break;
    }
  }
  if (b->len && b->data[b->len - 1] != '\n') mlc_sb_putc(b, '\n');
done:
  mlc_module_destroy(mod);
  mlc_vec_free(&f.ops);
  mlc_hash_fini(&f.inits);
  return s;
}

static mlc_status inspect_onnx(const char *path, mlc_inspect_format fmt, mlc_strbuf *b) {
  mlc_onnx_model *om = NULL;
  mlc_status s = mlc_onnx_load_file(path, &om);
  if (s) return with_path(s, path);
  s = describe(path, om, fmt, b);
  mlc_onnx_model_destroy(om);
  return s;
}

mlc_status mlc_drv_inspect_onnx_bytes(const void *data, size_t size, const char *name,
                                      mlc_inspect_format fmt, mlc_strbuf *out) {
  if (fmt != MLC_INSPECT_TEXT && fmt != MLC_INSPECT_JSON && fmt != MLC_INSPECT_IR &&
      fmt != MLC_INSPECT_DOT)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: unknown inspect format %d", name, (int)fmt);
  mlc_onnx_model *om = NULL;
  mlc_status s = mlc_onnx_load_bytes(data, size, NULL, &om);
  if (s) return with_path(s, name);
  s = describe(name, om, fmt, out);
  mlc_onnx_model_destroy(om);
  if (!s && out->oom) s = mlc_oom();
  return s;
}

MLC_API mlc_status mlc_inspect_file(const char *path, mlc_inspect_format fmt, char **out_text) {
  if (!out_text) return mlc_make_status(MLC_INVALID_ARGUMENT, "mlc_inspect_file: out_text is NULL");
  *out_text = NULL;
  if (!path || !*path) return mlc_make_status(MLC_INVALID_ARGUMENT, "mlc_inspect_file: no path given");
  if (fmt != MLC_INSPECT_TEXT && fmt != MLC_INSPECT_JSON && fmt != MLC_INSPECT_IR &&
      fmt != MLC_INSPECT_DOT)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "mlc_inspect_file: unknown format %d", (int)fmt);
  int is_so;
  MLC_RETURN_IF_ERROR(probe_compiled(path, &is_so));
  if (is_so && (fmt == MLC_INSPECT_IR || fmt == MLC_INSPECT_DOT))
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: --ir and --dot describe ONNX models; inspect the .onnx it was compiled from",
                           path);
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_status s = is_so ? mlc_drv_inspect_so(path, fmt == MLC_INSPECT_JSON, &b) : inspect_onnx(path, fmt, &b);
  if (!s && b.oom) s = mlc_oom();
  if (s) {
    mlc_sb_fini(&b);
    return s;
  }
  if (!b.data) {
    /* Nothing printed: still hand back an empty string the caller can free. */
    b.data = mlc_mem_calloc(1, 1);
    if (!b.data) return mlc_oom();
  }
  *out_text = b.data;
  return NULL;
}

MLC_API void mlc_string_free(char *s) { mlc_mem_free(s); }
