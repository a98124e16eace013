/*
** input_shape.c: the user's shapes for graph inputs (compile --input-shape
** NAME=1x3x640x640, or NAME=1x3xHxW to keep some dims symbolic).
**
** A pinned input takes the given dims.  A dim the model names with a
** dim_param carries its pin to every input with that dim_param: pinning
** x [N, 3, H, W] to 1x3x640x640 makes a mask [N, H, W] 1x640x640 too, so
** the model stays consistent.  A dim the model declares static keeps its
** extent: a pin to another value or to a symbol is an error, as is a pin
** of an unknown input, of another rank, or two pins giving one dim_param
** two values.
*/
#include <string.h>

#include "frontend/frontend_int.h"

static const mlc_onnx_value_info *find_input(const mlc_onnx_graph *g, const char *name) {
  for (int i = 0; i < g->ninputs; i++)
    if (strcmp(g->inputs[i].name, name) == 0) return &g->inputs[i];
  return NULL;
}

static const mlc_fe_input_shape *find_pin(const mlc_fe_options *opt, const char *name) {
  for (int i = 0; opt && i < opt->ninput_shapes; i++)
    if (strcmp(opt->input_shapes[i].name, name) == 0) return &opt->input_shapes[i];
  return NULL;
}

/* "640" or "H" for messages. */
static const char *pin_str(const mlc_fe_input_shape *p, int d, char *buf, size_t n) {
  if (p->dims[d] >= 0) snprintf(buf, n, "%lld", (long long)p->dims[d]);
  else snprintf(buf, n, "%s", p->syms[d]);
  return buf;
}

/* The pin of dim_param |param| through another input's pin, or NULL
** (its input and axis in *|pin|, *|axis|). */
static const mlc_fe_input_shape *param_pin(const mlc_onnx_graph *g, const mlc_fe_options *opt,
                                           const char *param, int *axis) {
  for (int i = 0; opt && i < opt->ninput_shapes; i++) {
    const mlc_fe_input_shape *p = &opt->input_shapes[i];
    const mlc_onnx_value_info *vi = find_input(g, p->name);
    for (int d = 0; vi && vi->has_shape && d < vi->rank && d < p->rank; d++)
      if (vi->dims[d].param && strcmp(vi->dims[d].param, param) == 0) {
        *axis = d;
        return p;
      }
  }
  return NULL;
}

mlc_status mlc_fe_pins_check(const mlc_onnx_graph *g, const mlc_fe_options *opt) {
  char a[64], b[64];
  for (int i = 0; opt && i < opt->ninput_shapes; i++) {
    const mlc_fe_input_shape *p = &opt->input_shapes[i];
    const mlc_onnx_value_info *vi = find_input(g, p->name);
    if (!vi) return mlc_make_status(MLC_INVALID_ARGUMENT, "--input-shape: the model has no input \"%s\"", p->name);
    for (int j = 0; j < i; j++)
      if (strcmp(opt->input_shapes[j].name, p->name) == 0)
        return mlc_make_status(MLC_INVALID_ARGUMENT, "--input-shape: input \"%s\" is given twice", p->name);
    if (!vi->has_shape) continue;
    if (vi->rank != p->rank)
      return mlc_make_status(MLC_INVALID_ARGUMENT, "--input-shape: input \"%s\" has rank %d, the shape given has %d",
                             p->name, vi->rank, p->rank);
    for (int d = 0; d < p->rank; d++) {
      const mlc_onnx_dim *od = &vi->dims[d];
      if (od->value >= 0 && p->dims[d] != od->value)
        return mlc_make_status(MLC_INVALID_ARGUMENT,
                               "--input-shape: dim %d of input \"%s\" is %lld in the model, not %s", d, p->name,
                               (long long)od->value, pin_str(p, d, a, sizeof a));
      int k;
      const mlc_fe_input_shape *q = od->param ? param_pin(g, opt, od->param, &k) : NULL;
      if (q && q != p) {
        int same = q->dims[k] == p->dims[d] && (p->dims[d] >= 0 || strcmp(q->syms[k], p->syms[d]) == 0);
        if (!same)
          return mlc_make_status(MLC_INVALID_ARGUMENT,
                                 "--input-shape: dim \"%s\" is %s by input \"%s\" but %s by input \"%s\"",
                                 od->param, pin_str(q, k, a, sizeof a), q->name, pin_str(p, d, b, sizeof b), p->name);
      }
    }
  }
  return NULL;
}

int mlc_fe_input_rank(const mlc_onnx_value_info *vi, const mlc_fe_options *opt) {
  (void)opt; /* the pre-flight refuses inputs without a shape */
  return vi->has_shape ? vi->rank : -1;
}

/* Dim |pin| gives: its extent, or the symbol it names. */
static mlc_status pinned(mlc_module *m, const mlc_fe_input_shape *p, int d, int64_t *out) {
  if (p->dims[d] >= 0) {
    *out = p->dims[d];
    return NULL;
  }
  return mlc_module_sym(m, p->syms[d], out);
}

mlc_status mlc_fe_input_dim(mlc_module *m, const mlc_onnx_graph *g, const mlc_fe_options *opt,
                            const mlc_onnx_value_info *vi, int d, int64_t *out) {
  const mlc_fe_input_shape *p = find_pin(opt, vi->name);
  if (p) return pinned(m, p, d, out);
  const mlc_onnx_dim *od = &vi->dims[d];
  if (od->value >= 0) {
    *out = od->value;
    return NULL;
  }
  if (od->param && od->param[0]) {
    int k;
    const mlc_fe_input_shape *q = param_pin(g, opt, od->param, &k);
    if (q) return pinned(m, q, k, out);
    return mlc_module_sym(m, od->param, out);
  }
  return mlc_module_fresh_sym(m, out);
}
