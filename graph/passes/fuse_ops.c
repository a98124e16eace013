/*
** fuse_ops.c: groups the op calls of main into primitive functions, one
** per kernel to be (TVM's FuseOps).
**
** Fusion reads only the pattern kinds of the calls (binding->pattern: the
** op table's, refined by annotate_pattern), never op names.  One forward
** walk over each dataflow block of main puts every op call in a group:
**
**   - an OPAQUE call, a call that is not an op call, or a call whose output
**     has a symbolic dim that none of its args has (a size defined at run
**     time), is a group of its own and never fuses;
**   - an OUT_EWISE_FUSABLE call (conv, matmul, pool, ...) starts a group:
**     its anchor.  The group then takes following ELEMWISE or BROADCAST
**     calls whose output has the anchor's output shape (bias add, scale,
**     relu, clip, residual add, GELU written out: the epilogue), and
**     nothing else: at most one anchor, no producers before it;
**   - a group without an anchor or a reduction takes following ELEMWISE,
**     BROADCAST, INJECTIVE and REDUCE calls (chains of elementwise and data
**     movement ops; a reduction takes its producers);
**   - a group with a REDUCE call takes following ELEMWISE, BROADCAST and
**     REDUCE calls (a reduction takes its epilogue, and reductions chain:
**     a layer normalization written as ReduceMean, Sub, Pow, ReduceMean,
**     Add, Sqrt, Div, Mul, Add, or a softmax as ReduceMax, Sub, Exp,
**     ReduceSum, Div, is one group).
** A call joins the group of one of its producers (in the same block) when
** that group takes it.  An anchored group is preferred (the first in the
** order of the args); otherwise the call joins every producer group that
** takes it, merging them (a diamond of elementwise ops is one group).  A
** merge is refused when a member would read a value that depends on the
** group through a call outside it (checked on the graph of groups: the
** groups stay a DAG, so they can be ordered), when the group would exceed
** MAX_GROUP calls, or when more than MLC_MAX_OUTS of its values would be
** used outside it.
**
** A member's output used outside its group (by a later binding of main that
** is not a member, or returned by main) is simply one more output of the
** group: the function returns it, and its users read the call's output.  A
** member of a reduction's prologue whose value is also needed elsewhere
** is thus computed once, by the fused kernel, and written out.
**
** Every group of two calls or more becomes a function of the module, with
** primitive = 1, named fused_<op>_<op>... (cut to about MAX_NAME
** characters, a numeric suffix when taken), whose
**   params   are the group's distinct non-constant external inputs, in order
**            of first use (constants stay constants),
**   bindings are the member op calls, in the order of main (topological),
**   returns  are the members' outputs used outside the group, in order of
**            definition (a group none of whose values is used returns its
**            last call's outputs).
** In main, the members are replaced by one binding that calls it,
** `outs = cls.fused_x(args)`, whose origin is the anchor's (else the first
** member's) and whose covered list holds the members' ONNX nodes in order;
** uses of the members' outputs read the call's outputs instead.  The call
** stands where the group's last member stood; a binding that was between
** the members and reads one of the group's values moves after the call
** (the block is ordered again, keeping the original order where it can).
** A group of one call stays a plain call.  Only main's dataflow blocks are
** fused; bindings of other blocks and other functions are left alone.
**
**   before: lv0 = R.conv(x, c0); lv1 = R.add(lv0, c1); lv2 = R.relu(lv1)
**           lv3 = R.max_pool(lv2); gv = R.softmax(lv3)
**   after:  main:  lv0 = cls.fused_conv_add_relu(x)  # covers Conv, Add, Relu
**                  lv1 = R.max_pool(lv0); gv = R.softmax(lv1)
**           fused_conv_add_relu(p0) (Primitive):
**                  lv0 = R.conv(p0, c0); lv1 = R.add(lv0, c1); gv = R.relu(lv1)
**
** The functions, bindings and values belong to the module (moved, not
** copied: a member binding keeps its outputs and origin); scratch memory
** lives in an arena freed when the pass returns.
*/
#include <stdio.h>
#include <string.h>

#include "graph/pass.h"

/* Calls in one group at most. */
#define MAX_GROUP 64
/* Length of a fused function's name before the numeric suffix. */
#define MAX_NAME 60

typedef struct group {
  int n, cap;
  int *mem;    /* binding indices in the block, ascending */
  int anchor;  /* index of the OUT_EWISE_FUSABLE member, -1 if none */
  int nreduce; /* REDUCE members */
  int fusable; /* 0: a lone binding that never fuses */
  int alive;   /* 0: merged into another group */
  int maxpos;  /* index of the last member */
} group;

/* What replaces a group of two or more in main. */
typedef struct fused_call {
  mlc_func *fn;
  int nargs;
  mlc_value **args; /* main's values, in the order of fn's params */
} fused_call;

typedef struct fuser {
  mlc_module *m;
  mlc_func *f;
  mlc_arena *ar;  /* scratch of the whole pass */
  int nids;
  int *uses;      /* by value id: uses in the module (before the pass) */
  int *defpos;    /* by value id: defining binding in the current block, -1 */
  mlc_subst outs; /* main: member outputs -> the call's outputs */
  mlc_subst ins;  /* a fused function: external values -> its params */
  /* the block being fused */
  mlc_binding **b; /* its bindings, as they were */
  int n;
  int *grp;       /* by binding index: its group */
  group *g;
  int ng;
  int *seen, *inset, stamp; /* by group: DFS marks */
  int *stack;
  mlc_hash suffix; /* fused name -> the last numeric suffix given it (long, in ar) */
} fuser;

static int valid(const fuser *fz, const mlc_value *v) { return v && v->id >= 0 && v->id < fz->nids; }

/* The index in the block of the binding that defines |v|, or -1. */
static int producer(const fuser *fz, const mlc_value *v) {
  return valid(fz, v) && v->kind == MLC_VALUE_VAR ? fz->defpos[v->id] : -1;
}

static int same_shape(const mlc_type *a, const mlc_type *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

/* Whether symbol |d| is a dim of one of |b|'s args. */
static int arg_has_sym(const mlc_binding *b, int64_t d) {
  for (int a = 0; a < b->nargs; a++)
    for (int i = 0; b->args[a] && i < b->args[a]->type.rank; i++)
      if (b->args[a]->type.dims[i] == d) return 1;
  return 0;
}

/* Whether symbol |d| is a dim of |b|'s args or derived from such (a
** conv's output height from its input's H): the fused function then
** computes it from what its params bind. */
static int derivable(const mlc_module *m, const mlc_binding *b, int64_t d, int depth) {
  if (arg_has_sym(b, d)) return 1;
  const mlc_sym_def *def = mlc_module_sym_def(m, d);
  if (!def || def->op == MLC_SYM_FREE || depth > 64) return 0;
  return derivable(m, b, def->a, depth + 1) && (!def->b_sym || derivable(m, b, def->b, depth + 1));
}

/* Whether |b| may be a member of a group: an op call, not OPAQUE, whose
** outputs' symbolic dims all come from its args (so a fused function's
** params bind every symbol of its body). */
static int fusable(const mlc_module *m, const mlc_binding *b) {
  if (b->kind != MLC_CALL_OP || (unsigned)b->op >= MLC_OP_COUNT || b->pattern == MLC_PATTERN_OPAQUE)
    return 0;
  if (b->nouts < 1 || !b->outs) return 0;
  for (int o = 0; o < b->nouts; o++) {
    if (!b->outs[o]) return 0;
    const mlc_type *t = &b->outs[o]->type;
    for (int i = 0; i < t->rank; i++)
      if (MLC_DIM_IS_SYM(t->dims[i]) && !derivable(m, b, t->dims[i], 0)) return 0;
  }
  return 1;
}

/* Whether group |g| takes |b| (a fusable call that reads one of its
** values), by the pattern kinds alone. */
static int takes(const fuser *fz, const group *g, const mlc_binding *b) {
  mlc_pattern p = b->pattern;
  if (!g->fusable) return 0;
  if (g->anchor >= 0) {
    const mlc_binding *a = fz->b[g->anchor];
    return (p == MLC_PATTERN_ELEMWISE || p == MLC_PATTERN_BROADCAST) && b->nouts == 1 &&
           same_shape(&b->outs[0]->type, &a->outs[0]->type);
  }
  if (g->nreduce > 0) return p == MLC_PATTERN_ELEMWISE || p == MLC_PATTERN_BROADCAST || p == MLC_PATTERN_REDUCE;
  return p == MLC_PATTERN_ELEMWISE || p == MLC_PATTERN_BROADCAST || p == MLC_PATTERN_INJECTIVE ||
         p == MLC_PATTERN_REDUCE;
}

/* Pushes the groups that produce the args of binding |x| (other than
** |self|) and are not yet seen; 1 when one of them is in the set being
** formed. */
static int push_producers(fuser *fz, int x, int self, int *top) {
  const mlc_binding *b = fz->b[x];
  for (int a = 0; a < b->nargs; a++) {
    int q = producer(fz, b->args[a]);
    if (q < 0) continue;
    int h = fz->grp[q];
    if (h == self) continue;
    if (fz->inset[h] == fz->stamp) {
      if (self >= 0) return 1; /* a path left the set and came back */
      continue;                /* the set's own value */
    }
    if (fz->seen[h] == fz->stamp) continue;
    fz->seen[h] = fz->stamp;
    fz->stack[(*top)++] = h;
  }
  return 0;
}

/*
** Whether the groups |set| (|ns| of them) and the binding |x| (in none yet)
** as one group would depend on themselves through a group outside: a DFS
** over the groups that produce their inputs, each taken whole (the groups
** are the nodes of the graph the block is ordered by).  A group whose
** members all come before the first of the set's (its maxpos below) reads
** nothing the set makes, so no path through it comes back: the search
** stops there, and stays near the set in a long chain (an LSTM unrolled
** over 1000 steps, 19,000 bindings, took seconds without the bound).
*/
static int makes_cycle(fuser *fz, const int *set, int ns, int x) {
  fz->stamp++;
  int lo = x;
  for (int i = 0; i < ns; i++) {
    fz->inset[set[i]] = fz->stamp;
    if (fz->g[set[i]].n && fz->g[set[i]].mem[0] < lo) lo = fz->g[set[i]].mem[0];
  }
  int top = 0;
  push_producers(fz, x, -1, &top);
  for (int i = 0; i < ns; i++)
    for (int k = 0; k < fz->g[set[i]].n; k++) push_producers(fz, fz->g[set[i]].mem[k], -1, &top);
  while (top > 0) {
    int h = fz->stack[--top];
    if (fz->g[h].maxpos < lo) continue;
    for (int k = 0; k < fz->g[h].n; k++)
      if (push_producers(fz, fz->g[h].mem[k], h, &top)) return 1;
  }
  return 0;
}

/* Whether |v| is an output of one of the |n| bindings |mem|. */
static int defined_in(const fuser *fz, const mlc_value *v, const int *mem, int n) {
  int q = producer(fz, v);
  for (int i = 0; q >= 0 && i < n; i++)
    if (mem[i] == q) return 1;
  return 0;
}

/* The number of values of the bindings |mem| (|n|) used outside them. */
static int escapes(const fuser *fz, const int *mem, int n) {
  int count = 0;
  for (int i = 0; i < n; i++) {
    const mlc_binding *b = fz->b[mem[i]];
    for (int o = 0; o < b->nouts; o++) {
      const mlc_value *v = b->outs[o];
      int inner = 0;
      for (int j = 0; j < n; j++)
        for (int a = 0; a < fz->b[mem[j]]->nargs; a++) inner += fz->b[mem[j]]->args[a] == v;
      if (valid(fz, v) && fz->uses[v->id] > inner) count++;
    }
  }
  return count;
}

/* Whether the groups |set| (|ns|) and binding |x| make a valid group. */
static int can_merge(fuser *fz, const int *set, int ns, int x) {
  int mem[MAX_GROUP], n = 0;
  for (int i = 0; i < ns; i++) {
    if (n + fz->g[set[i]].n > MAX_GROUP - 1) return 0;
    memcpy(&mem[n], fz->g[set[i]].mem, sizeof *mem * (size_t)fz->g[set[i]].n);
    n += fz->g[set[i]].n;
  }
  mem[n++] = x;
  return escapes(fz, mem, n) <= MLC_MAX_OUTS && !makes_cycle(fz, set, ns, x);
}

/* A new group holding binding |x| alone. */
static mlc_status new_group(fuser *fz, int x) {
  const mlc_binding *b = fz->b[x];
  group *g = &fz->g[fz->ng];
  g->fusable = fusable(fz->m, b);
  g->cap = g->fusable ? MAX_GROUP : 1;
  g->mem = MLC_ARENA_ARRAY(fz->ar, (size_t)g->cap, int);
  if (!g->mem) return mlc_oom();
  g->mem[0] = x;
  g->n = 1;
  g->anchor = g->fusable && b->pattern == MLC_PATTERN_OUT_EWISE_FUSABLE ? x : -1;
  g->nreduce = g->fusable && b->pattern == MLC_PATTERN_REDUCE;
  g->alive = 1;
  g->maxpos = x;
  fz->grp[x] = fz->ng++;
  return NULL;
}

/* Moves the members of group |from| into |to| (kept ascending). */
static void merge_into(fuser *fz, int to, int from) {
  group *a = &fz->g[to], *b = &fz->g[from];
  int mem[MAX_GROUP], n = 0, i = 0, j = 0;
  while (i < a->n || j < b->n)
    mem[n++] = j >= b->n || (i < a->n && a->mem[i] < b->mem[j]) ? a->mem[i++] : b->mem[j++];
  memcpy(a->mem, mem, sizeof *mem * (size_t)n);
  a->n = n;
  for (int k = 0; k < b->n; k++) fz->grp[b->mem[k]] = to;
  if (b->anchor >= 0) a->anchor = b->anchor;
  a->nreduce += b->nreduce;
  if (b->maxpos > a->maxpos) a->maxpos = b->maxpos;
  b->alive = 0;
  b->n = 0;
}

/* Puts binding |x| (the last so far) in a group. */
static mlc_status place(fuser *fz, int x) {
  const mlc_binding *b = fz->b[x];
  MLC_RETURN_IF_ERROR(new_group(fz, x));
  int self = fz->grp[x];
  if (!fz->g[self].fusable || fz->g[self].anchor >= 0) return NULL;
  /* The groups of its producers, in the order of the args. */
  int cand[MLC_MAX_OUTS * 4], nc = 0;
  for (int a = 0; a < b->nargs && nc < (int)(sizeof cand / sizeof *cand); a++) {
    int q = producer(fz, b->args[a]);
    if (q < 0) continue;
    int h = fz->grp[q], dup = 0;
    for (int k = 0; k < nc; k++) dup |= cand[k] == h;
    if (!dup && takes(fz, &fz->g[h], b)) cand[nc++] = h;
  }
  int set[sizeof cand / sizeof *cand], ns = 0;
  for (int k = 0; k < nc && ns == 0; k++)
    if (fz->g[cand[k]].anchor >= 0 && can_merge(fz, &cand[k], 1, x)) set[ns++] = cand[k];
  for (int k = 0; k < nc && (ns == 0 || fz->g[set[0]].anchor < 0); k++) {
    if (fz->g[cand[k]].anchor >= 0) continue;
    set[ns++] = cand[k];
    if (!can_merge(fz, set, ns, x)) ns--;
  }
  if (ns == 0) return NULL;
  for (int k = 1; k < ns; k++) merge_into(fz, set[0], set[k]);
  merge_into(fz, set[0], self);
  return NULL;
}

/* A function name fused_<op>_<op>... unique in the module (in |buf|); the
** numeric suffixes of a name go on from the last one given (a model of
** thousands of alike groups would otherwise try them all from 1). */
static mlc_status fused_name(fuser *fz, const group *g, char *buf, size_t size) {
  size_t len = (size_t)snprintf(buf, size, "fused");
  for (int k = 0; k < g->n; k++) {
    const char *op = mlc_op_name[fz->b[g->mem[k]]->op];
    if (len + 1 + strlen(op) > MAX_NAME) break;
    len += (size_t)snprintf(buf + len, size - len, "_%s", op);
  }
  if (!mlc_module_func(fz->m, buf)) return NULL;
  long *last = mlc_hash_get(&fz->suffix, buf);
  if (!last) { /* the name's first repeat: a counter, under a copy of the name */
    const char *key = mlc_arena_strdup(fz->ar, buf);
    last = MLC_ARENA_NEW(fz->ar, long);
    if (!key || !last || mlc_hash_put(&fz->suffix, key, last)) return mlc_oom();
  }
  do
    snprintf(buf + len, size - len, "%ld", ++*last);
  while (mlc_module_func(fz->m, buf));
  return NULL;
}

/* Makes the function of group |g| (two members or more), moving its
** members into it, and fills |call|. */
static mlc_status build_func(fuser *fz, const group *g, fused_call *call) {
  char name[MAX_NAME + 32];
  MLC_RETURN_IF_ERROR(fused_name(fz, g, name, sizeof name));
  mlc_func *fn;
  MLC_RETURN_IF_ERROR(mlc_func_create(fz->m, name, &fn));
  fn->primitive = 1;
  int cap = 0;
  for (int k = 0; k < g->n; k++) cap += fz->b[g->mem[k]]->nargs;
  call->args = MLC_ARENA_ARRAY(fz->ar, (size_t)(cap ? cap : 1), mlc_value *);
  if (!call->args) return mlc_oom();
  call->fn = fn;
  call->nargs = 0;
  mlc_status s = NULL;
  for (int k = 0; k < g->n && !s; k++) {
    mlc_binding *b = fz->b[g->mem[k]];
    for (int a = 0; a < b->nargs && !s; a++) {
      mlc_value *v = b->args[a];
      if (!v || v->kind == MLC_VALUE_CONST || defined_in(fz, v, g->mem, g->n) || mlc_subst_get(&fz->ins, v) != v)
        continue;
      mlc_value *p;
      s = mlc_func_add_param(fn, NULL, &v->type, &p);
      if (!s && !mlc_subst_set(&fz->ins, v, p))
        s = mlc_make_status(MLC_INTERNAL, "fuse_ops: value %d is newer than the pass", v->id);
      if (!s) call->args[call->nargs++] = v;
    }
    if (!s) s = mlc_func_append_binding(fn, b);
  }
  if (!s) mlc_subst_apply(&fz->ins, fn);
  for (int i = 0; i < call->nargs; i++) mlc_subst_set(&fz->ins, call->args[i], NULL);
  if (s) return s;
  for (int k = 0; k < g->n; k++) {
    const mlc_binding *b = fz->b[g->mem[k]];
    for (int o = 0; o < b->nouts; o++) {
      mlc_value *v = b->outs[o];
      int inner = 0;
      for (int j = 0; j < g->n; j++)
        for (int a = 0; a < fz->b[g->mem[j]]->nargs; a++) inner += fz->b[g->mem[j]]->args[a] == v;
      if (valid(fz, v) && fz->uses[v->id] > inner) MLC_RETURN_IF_ERROR(mlc_func_add_ret(fn, v));
    }
  }
  const mlc_binding *last = fz->b[g->mem[g->n - 1]];
  for (int o = 0; fn->nrets == 0 && o < last->nouts; o++) MLC_RETURN_IF_ERROR(mlc_func_add_ret(fn, last->outs[o]));
  if (fn->nrets > MLC_MAX_OUTS)
    return mlc_make_status(MLC_INTERNAL, "fuse_ops: %s returns %d values (at most %d)", name, fn->nrets,
                           MLC_MAX_OUTS);
  return NULL;
}

/* Emits the call of |call|'s function for group |g| at main's insertion
** point, and maps the members' outputs to the call's. */
static mlc_status emit_call(fuser *fz, const group *g, const fused_call *call) {
  mlc_func *fn = call->fn;
  mlc_type types[MLC_MAX_OUTS];
  mlc_value *outs[MLC_MAX_OUTS];
  for (int i = 0; i < fn->nrets; i++) types[i] = fn->rets[i]->type;
  const mlc_binding *head = fz->b[g->anchor >= 0 ? g->anchor : g->mem[0]];
  MLC_RETURN_IF_ERROR(mlc_graph_emit_call(fz->f, MLC_CALL_FUNC, fn->name, call->args, call->nargs, NULL, 0,
                                          types, fn->nrets, &head->origin, outs));
  mlc_binding *cb = outs[0]->def;
  for (int k = 0; k < g->n; k++) {
    int nn;
    const mlc_origin *o = mlc_binding_nodes(fz->b[g->mem[k]], &nn);
    for (int i = 0; i < nn; i++) MLC_RETURN_IF_ERROR(mlc_binding_add_covered(fz->m, cb, &o[i]));
  }
  /* The call's outputs keep the values' source names (a model output's
  ** name is what the API shows). */
  for (int i = 0; i < fn->nrets; i++) {
    outs[i]->name = fn->rets[i]->name;
    mlc_subst_set(&fz->outs, fn->rets[i], outs[i]);
  }
  return NULL;
}

/* Min-heap of group ids by the position of their last member. */
static void heap_push(const fuser *fz, int *heap, int *n, int x) {
  int i = (*n)++;
  while (i > 0 && fz->g[heap[(i - 1) / 2]].maxpos > fz->g[x].maxpos) {
    heap[i] = heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  heap[i] = x;
}

static int heap_pop(const fuser *fz, int *heap, int *n) {
  int top = heap[0], x = heap[--(*n)], i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && fz->g[heap[c + 1]].maxpos < fz->g[heap[c]].maxpos) c++;
    if (fz->g[heap[c]].maxpos >= fz->g[x].maxpos) break;
    heap[i] = heap[c];
    i = c;
  }
  if (*n > 0) heap[i] = x;
  return top;
}

/*
** The groups of the block in an order where each comes after the groups it
** reads (Kahn's algorithm, taking next the ready group whose last member
** came first): *|out| (arena) receives the ids of the live groups, *|nout|
** their number.  Reads the members' args as they are in main, so it runs
** before build_func moves them.
*/
static mlc_status order_groups(fuser *fz, int **out, int *nout) {
  int ng = fz->ng, nedges = 0;
  int *indeg = MLC_ARENA_ARRAY(fz->ar, (size_t)ng + 1, int);
  int *first = MLC_ARENA_ARRAY(fz->ar, (size_t)ng + 2, int);
  int *fill = MLC_ARENA_ARRAY(fz->ar, (size_t)ng + 1, int);
  int *heap = MLC_ARENA_ARRAY(fz->ar, (size_t)ng + 1, int);
  int *order = MLC_ARENA_ARRAY(fz->ar, (size_t)ng + 1, int);
  if (!indeg || !first || !fill || !heap || !order) return mlc_oom();
  /* Edges producer group -> reader group, one per arg read across groups,
  ** stored by producer. */
  for (int x = 0; x < fz->n; x++)
    for (int a = 0; a < fz->b[x]->nargs; a++) {
      int q = producer(fz, fz->b[x]->args[a]);
      if (q < 0 || fz->grp[q] == fz->grp[x]) continue;
      first[fz->grp[q] + 1]++;
      indeg[fz->grp[x]]++;
      nedges++;
    }
  for (int h = 0; h < ng; h++) first[h + 1] += first[h];
  int *succ = MLC_ARENA_ARRAY(fz->ar, (size_t)nedges + 1, int);
  if (!succ) return mlc_oom();
  memcpy(fill, first, sizeof *fill * (size_t)ng);
  for (int x = 0; x < fz->n; x++)
    for (int a = 0; a < fz->b[x]->nargs; a++) {
      int q = producer(fz, fz->b[x]->args[a]);
      if (q >= 0 && fz->grp[q] != fz->grp[x]) succ[fill[fz->grp[q]]++] = fz->grp[x];
    }
  int nh = 0, k = 0, done = 0;
  for (int h = 0; h < ng; h++)
    if (fz->g[h].alive && indeg[h] == 0) heap_push(fz, heap, &nh, h);
  while (nh > 0) {
    int h = heap_pop(fz, heap, &nh);
    order[k++] = h;
    done += fz->g[h].n;
    for (int e = first[h]; e < first[h + 1]; e++)
      if (--indeg[succ[e]] == 0) heap_push(fz, heap, &nh, succ[e]);
  }
  if (done != fz->n)
    return mlc_make_status(MLC_INTERNAL, "fuse_ops: the groups of function \"%s\" form a cycle", fz->f->name);
  *out = order;
  *nout = k;
  return NULL;
}

/* Refills block |bi| of main with the groups in |order| (|n|): a call for
** each group of two or more (|calls|, by group id), the binding itself for
** the others. */
static mlc_status rewrite_block(fuser *fz, int bi, const int *order, int n, const fused_call *calls) {
  mlc_block *blk = &fz->f->blocks[bi];
  while (blk->n > 0) mlc_func_remove_binding(fz->f, bi, blk->n - 1);
  mlc_func_insert_at(fz->f, bi, 0);
  mlc_status s = NULL;
  for (int k = 0; k < n && !s; k++) {
    const group *g = &fz->g[order[k]];
    s = g->n >= 2 ? emit_call(fz, g, &calls[order[k]]) : mlc_func_append_binding(fz->f, fz->b[g->mem[0]]);
  }
  mlc_func_append_at_end(fz->f);
  return s;
}

/* Fuses dataflow block |bi| of main. */
static mlc_status fuse_block(fuser *fz, int bi) {
  mlc_block *blk = &fz->f->blocks[bi];
  int n = blk->n;
  if (n < 2) return NULL;
  fz->n = n;
  fz->b = mlc_arena_memdup(fz->ar, blk->bindings, sizeof *fz->b * (size_t)n);
  fz->grp = MLC_ARENA_ARRAY(fz->ar, (size_t)n, int);
  fz->g = MLC_ARENA_ARRAY(fz->ar, (size_t)n, group);
  fz->seen = MLC_ARENA_ARRAY(fz->ar, (size_t)n, int);
  fz->inset = MLC_ARENA_ARRAY(fz->ar, (size_t)n, int);
  fz->stack = MLC_ARENA_ARRAY(fz->ar, (size_t)n, int);
  fused_call *calls = MLC_ARENA_ARRAY(fz->ar, (size_t)n, fused_call);
  if (!fz->b || !fz->grp || !fz->g || !fz->seen || !fz->inset || !fz->stack || !calls) return mlc_oom();
  fz->ng = 0;
  fz->stamp = 0;
  for (int x = 0; x < n; x++)
    for (int o = 0; o < fz->b[x]->nouts; o++)
      if (valid(fz, fz->b[x]->outs[o])) fz->defpos[fz->b[x]->outs[o]->id] = x;
  mlc_status s = NULL;
  for (int x = 0; x < n && !s; x++) s = place(fz, x);
  int *order = NULL, norder = 0;
  if (!s) s = order_groups(fz, &order, &norder);
  /* The functions, in the order of their calls. */
  for (int k = 0; k < norder && !s; k++)
    if (fz->g[order[k]].n >= 2) s = build_func(fz, &fz->g[order[k]], &calls[order[k]]);
  if (!s) s = rewrite_block(fz, bi, order, norder, calls);
  for (int x = 0; x < n; x++)
    for (int o = 0; o < fz->b[x]->nouts; o++)
      if (valid(fz, fz->b[x]->outs[o])) fz->defpos[fz->b[x]->outs[o]->id] = -1;
  return s;
}

/* The pass: fuses main of |m| in place; |ctx| is borrowed and unused.
** Errors (out of memory, a broken invariant) are transferred. */
mlc_status mlc_pass_fuse_ops(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)ctx;
  mlc_func *f = mlc_module_func(m, "main");
  if (!f) return NULL;
  fuser fz;
  memset(&fz, 0, sizeof fz);
  fz.m = m;
  fz.f = f;
  fz.nids = m->next_value_id > 0 ? m->next_value_id : 1;
  fz.ar = mlc_arena_create(m->alloc);
  if (!fz.ar) return mlc_oom();
  mlc_status s = mlc_module_use_counts(m, &fz.uses);
  if (!s) s = mlc_subst_init(&fz.outs, m);
  if (!s) s = mlc_subst_init(&fz.ins, m);
  fz.defpos = s ? NULL : MLC_ARENA_ARRAY(fz.ar, (size_t)fz.nids, int);
  if (!s && !fz.defpos) s = mlc_oom();
  for (int i = 0; !s && i < fz.nids; i++) fz.defpos[i] = -1;
  /* The blocks keep their number: a block is never emptied. */
  for (int bi = 0; !s && bi < f->nblocks; bi++)
    if (f->blocks[bi].dataflow) s = fuse_block(&fz, bi);
  if (!s) mlc_subst_apply(&fz.outs, f);
  mlc_subst_fini(&fz.ins);
  mlc_subst_fini(&fz.outs);
  if (fz.uses) mlc_free(m->alloc, fz.uses, sizeof *fz.uses * (size_t)fz.nids);
  mlc_hash_fini(&fz.suffix);
  mlc_arena_destroy(fz.ar);
  return s;
}
