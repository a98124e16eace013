/*
** annotate_pattern.c: refines each op call's fusion pattern kind
** (binding->pattern) from the shapes it is called with, for fuse_ops.
**
** Every op call first gets its op's kind from the op table (ops.def), so
** the pass can run any number of times; then:
**
**   - a BROADCAST call whose tensor args all have the output's shape, or
**     are scalars (every dim 1, rank 0 included), is ELEMWISE: each output
**     element reads the elements at its own index (or the one element).
**
** Injective ops keep their kind even when the output has the input's
** shape: a transpose of a square matrix keeps its type and still moves
** elements.
**
** Dims compare exactly: two symbolic dims are the same only when they are
** the same symbol.  Only MLC_CALL_OP bindings carry a pattern; calls of
** prim, external or graph functions are left alone.
**
**   before: lv1 = R.add(lv0, c0)   # lv0, c0, lv1 (1, 8, 4, 4): broadcast
**           lv2 = R.add(lv1, c1)   # c1 (8, 1, 1): broadcast
**           lv3 = R.add(lv2, c2)   # c2 (): broadcast
**   after:  lv1: elemwise, lv2: broadcast, lv3: elemwise
** (the printed text stays the same: the pattern is an annotation that
** fuse_ops reads.)
*/
#include "graph/pass.h"

/* Every dim of |t| is 1 (rank 0 included). */
static int is_scalar(const mlc_type *t) {
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] != 1) return 0;
  return 1;
}

static int same_shape(const mlc_type *a, const mlc_type *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

/* The refined pattern of the op call |b|. */
static mlc_pattern refine(const mlc_binding *b) {
  mlc_pattern p = mlc_op_pattern[b->op];
  if (b->nouts != 1 || !b->outs[0]) return p;
  const mlc_type *out = &b->outs[0]->type;
  if (p == MLC_PATTERN_BROADCAST) {
    for (int i = 0; i < b->nargs; i++)
      if (!same_shape(&b->args[i]->type, out) && !is_scalar(&b->args[i]->type)) return p;
    return MLC_PATTERN_ELEMWISE;
  }
  return p;
}

/* The pass: sets the pattern of every op call of every function of |m|;
** |ctx| is borrowed and unused.  Never fails. */
mlc_status mlc_pass_annotate_pattern(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)ctx;
  for (int fi = 0; fi < m->nfuncs; fi++) {
    mlc_func *f = m->funcs[fi];
    for (int bi = 0; bi < f->nblocks; bi++)
      for (int j = 0; j < f->blocks[bi].n; j++) {
        mlc_binding *b = f->blocks[bi].bindings[j];
        if (b->kind == MLC_CALL_OP && (unsigned)b->op < MLC_OP_COUNT) b->pattern = refine(b);
      }
  }
  return NULL;
}
