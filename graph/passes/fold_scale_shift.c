/*
** fold_scale_shift.c: fold per-channel scales and shifts by constants into
** the constant weights of the convolution or matmul before them
** (BatchNormalization, which the frontend turns into a multiply and an add
** by per-channel constants, disappears into the weights).
**
** A producer is
**   conv(x, W[, b])   W a constant [M, C/g, k...]: the channel axis of its
**                     output is axis 1 (M channels);
**   matmul(x, W)      W a constant [K, N]: the channel axis is the last (N).
** Its single user (the producer's output is used once, not returned, in the
** same dataflow block) may be
**   multiply(y, s) / multiply(s, y)      conv:   W'[m] = W[m] * s[m], b' = b * s
**                                        matmul: W'[:, n] = W[:, n] * s[n]
**   add(y, t) / add(t, y), subtract(y, t)
**                                        conv:   b' = b + t (or -t; b = 0 when absent)
**                                        matmul: the add stays (a bias: fusion puts
**                                        it in the matmul's epilogue), and what
**                                        follows it folds into W and its constant
** where s and t are constants of the output's float dtype (float32, float64)
** that vary along the channel axis alone (every other dim 1: [C,1,1],
** [1,C,1,1], [C] when C is the last axis, a scalar) and leave the output's
** shape as it is.  The producer then computes the user's output (it takes
** over the user's output value, so its name stays) and the user goes.  The
** same is repeated on the new single user, so conv -> multiply -> add
** becomes one conv.  For matmul, the multiplies and adds after its bias
** add fold into W's columns and the bias: matmul -> add(c) -> multiply(s)
** -> add(t) (Gemm + BatchNormalization on [N, C]) becomes matmul(x, W*s)
** -> add(c*s + t).  A weight that is a parameter
** (--params-as-inputs) is never folded into.  The new weights are new
** constants (computed in double); the old ones are left for dce.
**
**   before: lv0 = R.conv(x, c0, c1, ...)             # Conv
**           lv1 = R.multiply(lv0, c2)                # BatchNormalization (c2: [8, 1, 1])
**           lv2 = R.add(lv1, c3)                     # BatchNormalization (c3: [8, 1, 1])
**           gv = R.relu(lv2)
**   after:  lv2 = R.conv(x, c4, c5, ...)             # Conv, covering Conv and BatchNormalization
**           gv = R.relu(lv2)                         (c4 = c0 * c2, c5 = c1 * c2 + c3)
*/
#include <string.h>

#include "graph/graph_int.h"
#include "graph/pass.h"

typedef struct folder {
  mlc_module *m;
  int nids;
  int *uses;          /* by value id: uses in the function (a return counts 2) */
  mlc_binding **user; /* by value id: the last binding that uses it */
  int *block;         /* by value id: the block of that binding */
  int cur_block;      /* the block being folded */
} folder;

static int is_float(mlc_dtype t) { return t == MLC_DTYPE_F32 || t == MLC_DTYPE_F64; }

static double load(const void *p, mlc_dtype t, int64_t i) {
  return t == MLC_DTYPE_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static void store(void *p, mlc_dtype t, int64_t i, double v) {
  if (t == MLC_DTYPE_F32)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}

/*
** When the constant |c| broadcast against |y| (the producer's output) varies
** along |axis| alone and keeps |y|'s shape, returns 1 and sets *stride: the
** step between channel entries in |c|'s data (0: one value for all).
*/
static int per_channel(const mlc_const *c, const mlc_type *y, int axis, int64_t *stride) {
  const mlc_type *t = &c->type;
  if (t->dtype != y->dtype || t->rank > y->rank || !mlc_type_is_static(t)) return 0;
  int64_t channels = y->dims[axis];
  *stride = 0;
  for (int j = 0; j < t->rank; j++) {
    int k = j + y->rank - t->rank;
    int64_t d = t->dims[j];
    if (d == 1) continue;
    if (k != axis || d != channels) return 0;
    *stride = 1; /* every later dim of c is 1 */
  }
  return 1;
}

/* Storage for the data of a new constant of |t| (from mlc_const_alloc,
** transferred: adopt() or mlc_const_free). */
static mlc_status new_const(mlc_module *m, const mlc_type *t, void **data, size_t *nbytes) {
  int64_t n = mlc_type_numel(t);
  if (n < 0) return mlc_make_status(MLC_INTERNAL, "fold_scale_shift: a weight of unknown size");
  *nbytes = (size_t)n * mlc_dtype_size(t->dtype);
  *data = mlc_const_alloc(m, *nbytes ? *nbytes : 1);
  return *data ? NULL : mlc_oom();
}

static mlc_status adopt(mlc_module *m, const mlc_type *t, void *data, size_t nbytes, mlc_value **out) {
  return mlc_module_adopt_const(m, NULL, t, data, nbytes, out);
}

/* W'[m, ...] = W[m, ...] * s[m] for conv (|axis| 0 of W), W'[.., n] = W[.., n]
** * s[n] for matmul (|last| axis of W). */
static mlc_status scale_weight(mlc_module *m, const mlc_const *w, int last, const mlc_const *s,
                               int64_t sstride, mlc_value **out) {
  void *data;
  size_t nbytes;
  MLC_RETURN_IF_ERROR(new_const(m, &w->type, &data, &nbytes));
  int64_t n = mlc_type_numel(&w->type);
  int64_t ch = last ? w->type.dims[w->type.rank - 1] : w->type.dims[0];
  int64_t inner = ch > 0 ? n / ch : 0;
  mlc_dtype dt = w->type.dtype;
  for (int64_t i = 0; i < n; i++) {
    int64_t c = last ? i % ch : i / (inner ? inner : 1);
    store(data, dt, i, load(w->data, dt, i) * load(s->data, dt, c * sstride));
  }
  return adopt(m, &w->type, data, nbytes, out);
}

/* v'[c] = v[c] * s[c] + t[c] over |ch| channels of the vector |v| (NULL:
** zeros; its shape is |vt|), s (NULL: 1) and t (NULL: 0), |neg_t|: minus t. */
static mlc_status affine_vector(mlc_module *m, const mlc_type *vt, const mlc_const *v, int64_t vstride,
                                const mlc_const *s, int64_t sstride, const mlc_const *t,
                                int64_t tstride, int neg_t, mlc_value **out) {
  void *data;
  size_t nbytes;
  MLC_RETURN_IF_ERROR(new_const(m, vt, &data, &nbytes));
  int64_t n = mlc_type_numel(vt);
  mlc_dtype dt = vt->dtype;
  for (int64_t c = 0; c < n; c++) {
    double x = v ? load(v->data, dt, c * vstride) : 0;
    if (s) x *= load(s->data, dt, c * sstride);
    if (t) x += (neg_t ? -1 : 1) * load(t->data, dt, c * tstride);
    store(data, dt, c, x);
  }
  return adopt(m, vt, data, nbytes, out);
}

static int same_origin(const mlc_origin *a, const mlc_origin *b) {
  return a->index == b->index && a->opset == b->opset && strcmp(a->node ? a->node : "", b->node ? b->node : "") == 0 &&
         strcmp(a->op_type ? a->op_type : "", b->op_type ? b->op_type : "") == 0;
}

/* Adds the ONNX nodes of |u| to those |p| covers (each once). */
static mlc_status cover(mlc_module *m, mlc_binding *p, const mlc_binding *u) {
  if (p->ncovered == 0 && p->origin.op_type) MLC_RETURN_IF_ERROR(mlc_binding_add_covered(m, p, &p->origin));
  int n;
  const mlc_origin *o = mlc_binding_nodes(u, &n);
  for (int i = 0; i < n; i++) {
    int seen = 0;
    for (int k = 0; k < p->ncovered && !seen; k++) seen = same_origin(&p->covered[k], &o[i]);
    if (!seen) MLC_RETURN_IF_ERROR(mlc_binding_add_covered(m, p, &o[i]));
  }
  return NULL;
}

/* The producer |p| takes over the output of its user |u|, which goes. */
static mlc_status absorb(folder *fd, mlc_binding *p, mlc_binding *u) {
  MLC_RETURN_IF_ERROR(cover(fd->m, p, u));
  mlc_value *y = u->outs[0];
  p->outs[0] = y;
  y->def = p;
  y->def_output = 0;
  u->nouts = 0; /* marks |u| for removal */
  return NULL;
}

/* The constant argument of a binary |u| that is not |y|, and whether y is
** its first argument. */
static const mlc_const *other_const(const folder *fd, const mlc_binding *u, const mlc_value *y, int *y_first) {
  if (u->nargs != 2) return NULL;
  *y_first = u->args[0] == y;
  if (!*y_first && u->args[1] != y) return NULL;
  if (u->args[0] == u->args[1]) return NULL;
  const mlc_value *c = u->args[*y_first ? 1 : 0];
  return mlc_value_const(fd->m, c);
}

/* The single user of |y| (computed by |p|) when it is an op call of the
** block being folded and |y| is used nowhere else; NULL otherwise. */
static mlc_binding *single_user(const folder *fd, const mlc_binding *p, const mlc_value *y) {
  if (y->id < 0 || y->id >= fd->nids || fd->uses[y->id] != 1 || y->def != p) return NULL;
  mlc_binding *u = fd->user[y->id];
  if (!u || fd->block[y->id] != fd->cur_block || u->kind != MLC_CALL_OP || u->nouts != 1) return NULL;
  if (!mlc_type_equal(&u->outs[0]->type, &y->type)) return NULL;
  return u;
}

/* Folds what follows the conv |p| into it; *n counts the folds. */
static mlc_status fold_conv(folder *fd, mlc_binding *p, int *n) {
  mlc_module *m = fd->m;
  for (;;) {
    const mlc_const *w = mlc_value_const(m, p->args[1]);
    const mlc_const *b = p->nargs > 2 ? mlc_value_const(m, p->args[2]) : NULL;
    mlc_value *y = p->outs[0];
    if (!w || !is_float(w->type.dtype) || y->type.rank < 2 || w->type.rank < 1) return NULL;
    if (p->nargs > 2 && (!b || b->type.rank != 1)) return NULL;
    mlc_binding *u = single_user(fd, p, y);
    int y_first = 0;
    const mlc_const *c = u ? other_const(fd, u, y, &y_first) : NULL;
    int64_t cs;
    if (!c || !per_channel(c, &y->type, 1, &cs) || y->type.dims[1] != w->type.dims[0]) return NULL;
    int64_t ch = w->type.dims[0];
    int64_t bdims[1] = {ch};
    mlc_type bt;
    MLC_RETURN_IF_ERROR(mlc_module_type(m, w->type.dtype, bdims, 1, &bt));
    mlc_value *nw = p->args[1], *nb = NULL;
    if (u->op == MLC_OP_MUL) {
      MLC_RETURN_IF_ERROR(scale_weight(m, w, 0, c, cs, &nw));
      if (b) MLC_RETURN_IF_ERROR(affine_vector(m, &bt, b, 1, c, cs, NULL, 0, 0, &nb));
    } else if (u->op == MLC_OP_ADD || (u->op == MLC_OP_SUB && y_first)) {
      MLC_RETURN_IF_ERROR(affine_vector(m, &bt, b, 1, NULL, 0, c, cs, u->op == MLC_OP_SUB, &nb));
    } else {
      return NULL;
    }
    mlc_value *args[3] = {p->args[0], nw, nb};
    MLC_RETURN_IF_ERROR(mlc_binding_set_call(m, p, MLC_CALL_OP, NULL, args, nb ? 3 : 2));
    MLC_RETURN_IF_ERROR(absorb(fd, p, u));
    ++*n;
  }
}

/*
** After matmul |p| and its bias add |add| (add(y, c), c per channel along
** |axis|): folds the multiplies and adds that follow into W's columns and
** c.  *n counts the folds.
*/
static mlc_status fold_bias_chain(folder *fd, mlc_binding *p, mlc_binding *add, int axis, int *n) {
  mlc_module *m = fd->m;
  mlc_value *y = p->outs[0];
  for (;;) {
    int first = 0;
    const mlc_const *c = other_const(fd, add, y, &first), *k;
    mlc_value *z = add->outs[0];
    mlc_binding *u = single_user(fd, add, z);
    k = u ? other_const(fd, u, z, &first) : NULL;
    int64_t cs, ks;
    if (!c || !k || !per_channel(c, &y->type, axis, &cs) || !per_channel(k, &y->type, axis, &ks)) return NULL;
    const mlc_const *w = mlc_value_const(m, p->args[1]);
    int64_t dims[1] = {w->type.dims[1]};
    mlc_type bt;
    mlc_value *nb;
    MLC_RETURN_IF_ERROR(mlc_module_type(m, w->type.dtype, dims, 1, &bt));
    if (u->op == MLC_OP_MUL) {
      mlc_value *nw;
      MLC_RETURN_IF_ERROR(scale_weight(m, w, 1, k, ks, &nw));
      mlc_value *args[2] = {p->args[0], nw};
      MLC_RETURN_IF_ERROR(mlc_binding_set_call(m, p, MLC_CALL_OP, NULL, args, 2));
      MLC_RETURN_IF_ERROR(affine_vector(m, &bt, c, cs, k, ks, NULL, 0, 0, &nb));
    } else if (u->op == MLC_OP_ADD || (u->op == MLC_OP_SUB && first)) {
      MLC_RETURN_IF_ERROR(affine_vector(m, &bt, c, cs, NULL, 0, k, ks, u->op == MLC_OP_SUB, &nb));
    } else {
      return NULL;
    }
    mlc_value *na[2] = {y, nb};
    MLC_RETURN_IF_ERROR(mlc_binding_set_call(m, add, MLC_CALL_OP, NULL, na, 2));
    MLC_RETURN_IF_ERROR(absorb(fd, add, u));
    ++*n;
  }
}

/*
** Folds what follows the matmul |p| into it: multiplies into W's columns;
** after a bias add (which stays, for fusion to put in the matmul's
** epilogue), multiplies and adds into W's columns and the bias.  *n
** counts the folds.
*/
static mlc_status fold_matmul(folder *fd, mlc_binding *p, int *n) {
  mlc_module *m = fd->m;
  for (;;) {
    const mlc_const *w = mlc_value_const(m, p->args[1]);
    mlc_value *y = p->outs[0];
    if (!w || !is_float(w->type.dtype) || w->type.rank != 2 || y->type.rank < 1) return NULL;
    int axis = y->type.rank - 1;
    if (y->type.dims[axis] != w->type.dims[1]) return NULL;
    mlc_binding *u = single_user(fd, p, y);
    int y_first = 0;
    const mlc_const *c = u ? other_const(fd, u, y, &y_first) : NULL;
    int64_t cs;
    if (!c || !per_channel(c, &y->type, axis, &cs)) return NULL;
    if (u->op == MLC_OP_ADD) return fold_bias_chain(fd, p, u, axis, n);
    if (u->op != MLC_OP_MUL) return NULL;
    mlc_value *nw;
    MLC_RETURN_IF_ERROR(scale_weight(m, w, 1, c, cs, &nw));
    mlc_value *args[2] = {p->args[0], nw};
    MLC_RETURN_IF_ERROR(mlc_binding_set_call(m, p, MLC_CALL_OP, NULL, args, 2));
    MLC_RETURN_IF_ERROR(absorb(fd, p, u));
    ++*n;
  }
}

/* Records, for |f|, the uses of each value and the binding (with its block)
** that uses it last. */
static void scan_uses(folder *fd, mlc_func *f) {
  memset(fd->uses, 0, sizeof *fd->uses * (size_t)fd->nids);
  memset(fd->user, 0, sizeof *fd->user * (size_t)fd->nids);
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++) {
      mlc_binding *b = f->blocks[bi].bindings[j];
      for (int a = 0; a < b->nargs; a++) {
        const mlc_value *v = b->args[a];
        if (!v || v->id < 0 || v->id >= fd->nids) continue;
        fd->uses[v->id]++;
        fd->user[v->id] = b;
        fd->block[v->id] = bi;
      }
    }
  for (int i = 0; i < f->nrets; i++) {
    const mlc_value *v = f->rets[i];
    if (v && v->id >= 0 && v->id < fd->nids) fd->uses[v->id] += 2; /* never folded away */
  }
}

static mlc_status fold_func(folder *fd, mlc_func *f, int *n) {
  scan_uses(fd, f);
  for (int bi = 0; bi < f->nblocks; bi++) {
    mlc_block *blk = &f->blocks[bi];
    if (!blk->dataflow) continue;
    fd->cur_block = bi;
    for (int j = 0; j < blk->n; j++) {
      mlc_binding *b = blk->bindings[j];
      if (b->kind != MLC_CALL_OP || b->nouts != 1 || b->nargs < 2) continue;
      if (b->op == MLC_OP_CONV) MLC_RETURN_IF_ERROR(fold_conv(fd, b, n));
      else if (b->op == MLC_OP_MATMUL) MLC_RETURN_IF_ERROR(fold_matmul(fd, b, n));
    }
    int kept = 0;
    for (int j = 0; j < blk->n; j++)
      if (blk->bindings[j]->nouts > 0) blk->bindings[kept++] = blk->bindings[j];
    blk->n = kept;
  }
  mlc_func_compact(f);
  return NULL;
}

/* The pass: rewrites |m| in place (new constants are owned by |m|); |ctx|
** is borrowed: with params_as_inputs nothing is folded into weights that
** are parameters anyway (they are not constants). */
mlc_status mlc_pass_fold_scale_shift(mlc_module *m, const mlc_pass_ctx *ctx) {
  folder fd;
  memset(&fd, 0, sizeof fd);
  fd.m = m;
  fd.nids = m->next_value_id > 0 ? m->next_value_id : 1;
  fd.uses = mlc_calloc(m->alloc, (size_t)fd.nids, sizeof *fd.uses);
  fd.block = mlc_calloc(m->alloc, (size_t)fd.nids, sizeof *fd.block);
  fd.user = mlc_calloc(m->alloc, (size_t)fd.nids, sizeof *fd.user);
  mlc_status s = fd.uses && fd.block && fd.user ? NULL : mlc_oom();
  int n = 0;
  for (int i = 0; i < m->nfuncs && !s; i++) s = fold_func(&fd, m->funcs[i], &n);
  if (!s && ctx && ctx->log && n) fprintf(ctx->log, "  fold_scale_shift: %d scales and shifts folded\n", n);
  mlc_free(m->alloc, fd.uses, sizeof *fd.uses * (size_t)fd.nids);
  mlc_free(m->alloc, fd.block, sizeof *fd.block * (size_t)fd.nids);
  mlc_free(m->alloc, fd.user, sizeof *fd.user * (size_t)fd.nids);
  return s;
}
