/*
** fuzz_compile.c: libFuzzer target for the compiler past the importer.
**
** Each input is the bytes of a .onnx file.  What imports (fuzz_inspect
** covers what does not) goes through the whole pipeline compile runs:
** the graph passes (with the graph verifier after each), legalization to
** prim functions, the default schedules, TIR lowering; then code
** generation to LLVM IR (verified by LLVM, not optimized: the object file
** and the archive are LLVM's and the linker's work).  The input's size
** picks the CPU the schedules are for (size % 2: an AVX2 target, 8 lanes,
** or an AVX-512 one, 16), so the mutator reaches both rule sets without a
** byte that would shift the protobuf.  An error status is a fine answer; a
** crash, a leak, undefined behaviour or a hang is a finding.
**
** Most byte-level mutations of a protobuf make it unreadable, so the
** target has a mutator of its own (LLVMFuzzerCustomMutator): it unpacks
** the model and changes one thing the compiler must cope with (a graph
** input's dim, to a number or a symbol; an integer or float attribute; an
** initializer's dim, its data resized to match; a node's op for another
** of the same arity; a node's input for another name; the opset), and
** packs it again; a quarter of the time, or when the input does not
** unpack, libFuzzer's own mutation instead.
*/
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "codegen/codegen.h"
#include "codegen/target.h"
#include "frontend/frontend.h"
#include "fuzz/fuzz.h"
#include "graph/graph.h"
#include "graph/pass.h"
#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"

#include <stdlib.h>
#include <string.h>

/* Triple and CPU spelled out: the same code whatever the host. */
static const char *const targets[2] = {"llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3",
                                       "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4"};

/* Touch the message: a status must always carry one. */
static void check_status(mlc_status s) {
  if (s && !mlc_status_message(s)[0]) __builtin_trap();
  mlc_status_free(s);
}

/* ---- the mutator ------------------------------------------------------------ */

/* libFuzzer's byte mutation; absent where replay.c is the main (there the
** mutator is never called). */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size) __attribute__((weak));
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed);

static uint64_t rnd(uint64_t *st) {
  *st = *st * 6364136223846793005u + 1442695040888963407u;
  return *st >> 33;
}

/* Extents and values where shape rules and schedules change their minds. */
static const int64_t ints[] = {-3, -2, -1, 0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 15, 16, 17, 31, 32, 33, 48, 64, 100, 1000};
static const float floats[] = {0.0f, 0.5f, -1.0f, 1.0f, 2.0f, 1e-6f, 1e30f, -1e30f};
static const char *const syms[] = {"N", "H", "W", "T"};
/* Ops that take the same inputs and attributes' kinds, to swap for each
** other (each group ends with NULL). */
static const char *const groups[] = {"Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Sqrt", "Erf", "Softplus", NULL,
                                     "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", NULL,
                                     "MaxPool", "AveragePool", "LpPool", NULL,
                                     "Conv", "ConvTranspose", NULL,
                                     "MatMul", "Add", "Mul", NULL,
                                     "ReduceMean", "ReduceSum", "ReduceMax", "ReduceL2", NULL,
                                     "Softmax", "LogSoftmax", "Hardmax", NULL,
                                     "GlobalAveragePool", "GlobalMaxPool", "Relu", NULL,
                                     NULL};

/* A pointer slot changed to point at what the message does not own, put
** back before the message is freed. */
typedef struct {
  char **slot;
  char *was;
} undo;

static int64_t pick_int(uint64_t *st) { return ints[rnd(st) % (sizeof ints / sizeof ints[0])]; }

/* Bytes per element of a tensor's dtype for raw data; 0: leave it alone. */
static size_t elem_size(int32_t t) {
  switch (t) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return 4;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return 8;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return 1;
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return 2;
  default: return 0;
  }
}

/* One change to |m|; 0 when the one drawn had nothing to change. */
static int mutate(Onnx__ModelProto *m, uint64_t *st, undo *u) {
  Onnx__GraphProto *g = m->graph;
  if (!g) return 0;
  switch (rnd(st) % 7) {
  case 0: { /* a graph input's dim: a number, or a symbol */
    if (!g->n_input) return 0;
    Onnx__ValueInfoProto *v = g->input[rnd(st) % g->n_input];
    if (!v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !v->type->tensor_type->shape ||
        !v->type->tensor_type->shape->n_dim)
      return 0;
    Onnx__TensorShapeProto *sh = v->type->tensor_type->shape;
    Onnx__TensorShapeProto__Dimension *d = sh->dim[rnd(st) % sh->n_dim];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) free(d->dim_param);
    if (rnd(st) % 4 == 0) {
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      d->dim_param = strdup(syms[rnd(st) % (sizeof syms / sizeof syms[0])]);
      if (!d->dim_param) d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET;
    } else {
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      d->dim_value = pick_int(st);
    }
    return 1;
  }
  case 1: case 2: { /* an attribute's number */
    if (!g->n_node) return 0;
    Onnx__NodeProto *n = g->node[rnd(st) % g->n_node];
    if (!n->n_attribute) return 0;
    Onnx__AttributeProto *a = n->attribute[rnd(st) % n->n_attribute];
    if (a->has_i) a->i = pick_int(st);
    else if (a->has_f) a->f = floats[rnd(st) % (sizeof floats / sizeof floats[0])];
    else if (a->n_ints && rnd(st) % 5 == 0) a->n_ints--; /* one fewer */
    else if (a->n_ints) a->ints[rnd(st) % a->n_ints] = pick_int(st);
    else if (a->n_floats) a->floats[rnd(st) % a->n_floats] = floats[rnd(st) % (sizeof floats / sizeof floats[0])];
    else return 0;
    return 1;
  }
  case 3: { /* an initializer's dim, its raw data resized to match */
    if (!g->n_initializer) return 0;
    Onnx__TensorProto *t = g->initializer[rnd(st) % g->n_initializer];
    size_t es = elem_size(t->data_type);
    if (!t->n_dims || !t->has_raw_data || !es) return 0;
    size_t k = rnd(st) % t->n_dims;
    int64_t v = pick_int(st), numel = 1;
    if (v < 0) v = -v;
    t->dims[k] = v;
    for (size_t i = 0; i < t->n_dims; i++) {
      if (t->dims[i] > 0 && numel > (int64_t)(16384 / es) / t->dims[i]) return 0;
      numel *= t->dims[i] > 0 ? t->dims[i] : 0;
    }
    size_t bytes = (size_t)numel * es;
    uint8_t *d = malloc(bytes ? bytes : 1);
    if (!d) return 0;
    for (size_t i = 0; i < bytes; i++) d[i] = t->raw_data.len ? t->raw_data.data[i % t->raw_data.len] : 0;
    free(t->raw_data.data);
    t->raw_data.data = d;
    t->raw_data.len = bytes;
    return 1;
  }
  case 4: { /* a node's op, for another of its group */
    if (!g->n_node) return 0;
    Onnx__NodeProto *n = g->node[rnd(st) % g->n_node];
    if (!n->op_type) return 0;
    for (size_t i = 0; groups[i] || groups[i + 1]; i++) {
      if (!groups[i] || strcmp(groups[i], n->op_type)) continue;
      size_t b = i, e = i;
      while (b > 0 && groups[b - 1]) b--;
      while (groups[e]) e++;
      u->slot = &n->op_type;
      u->was = n->op_type;
      n->op_type = (char *)groups[b + rnd(st) % (e - b)];
      return 1;
    }
    return 0;
  }
  case 5: { /* a node's input, for another value's name */
    if (!g->n_node) return 0;
    Onnx__NodeProto *n = g->node[rnd(st) % g->n_node];
    if (!n->n_input) return 0;
    char **slot = &n->input[rnd(st) % n->n_input];
    size_t pool = g->n_input + g->n_initializer;
    for (size_t i = 0; i < g->n_node; i++) pool += g->node[i]->n_output;
    if (!pool) return 0;
    size_t k = rnd(st) % pool;
    char *name = NULL;
    if (k < g->n_input) name = g->input[k]->name;
    else if ((k -= g->n_input) < g->n_initializer) name = g->initializer[k]->name;
    else {
      k -= g->n_initializer;
      for (size_t i = 0; i < g->n_node && !name; i++) {
        if (k < g->node[i]->n_output) name = g->node[i]->output[k];
        else k -= g->node[i]->n_output;
      }
    }
    if (!name) return 0;
    u->slot = slot;
    u->was = *slot;
    *slot = name;
    return 1;
  }
  default: { /* the default domain's opset */
    for (size_t i = 0; i < m->n_opset_import; i++) {
      Onnx__OperatorSetIdProto *o = m->opset_import[i];
      if (o->domain && *o->domain) continue;
      o->has_version = 1;
      o->version = 7 + (int64_t)(rnd(st) % 15);
      return 1;
    }
    return 0;
  }
  }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed) {
  uint64_t st = seed * 2654435761u + 1;
  Onnx__ModelProto *m = rnd(&st) % 4 ? onnx__model_proto__unpack(NULL, size, data) : NULL;
  if (!m) return LLVMFuzzerMutate ? LLVMFuzzerMutate(data, size, max_size) : size;
  undo u[4] = {{0}};
  int nu = 0, changed = 0;
  for (int k = 1 + (int)(rnd(&st) % 3); k > 0 && nu < 4; k--) {
    changed |= mutate(m, &st, &u[nu]);
    if (u[nu].slot) nu++;
  }
  size_t n = onnx__model_proto__get_packed_size(m);
  if (changed && n <= max_size) size = onnx__model_proto__pack(m, data);
  while (nu > 0) nu--, *u[nu].slot = u[nu].was; /* the message owns the old ones */
  onnx__model_proto__free_unpacked(m, NULL);
  if (!changed || n > max_size) return LLVMFuzzerMutate ? LLVMFuzzerMutate(data, size, max_size) : size;
  return size;
}

/* ---- the target --------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlc_onnx_model *om = NULL;
  mlc_module *gm = NULL;
  mlc_target *t = NULL;
  mlc_status s = mlc_onnx_load_bytes(data, size, NULL, &om);
  if (!s) s = mlc_fe_import(om, NULL, &gm);
  mlc_onnx_model_destroy(om);
  if (s) {
    check_status(s);
    return 0;
  }
  s = mlc_target_parse(targets[size % 2], &t);
  if (!s) {
    mlc_pipeline_options popt = {0};
    popt.vector_bits = (int)t->vector_bits;
    mlc_pass_ctx pctx = {1, NULL, NULL, NULL, &popt, NULL, NULL};
    s = mlc_pipeline_run(gm, &pctx);
  }
  if (!s && gm->prims) {
    char *ir = NULL;
    s = mlc_cg_emit_llvm_ir(gm->prims, t, 0, &ir);
    mlc_cg_free(ir);
  }
  check_status(s);
  mlc_target_destroy(t);
  mlc_module_destroy(gm);
  return 0;
}
