/*
** plan_memory.c: static memory planning by liveness (StaticPlanBlockMemory),
** with outputs written in place where that is legal.
**
** Every intermediate value (a binding output that the function does not
** return) gets a storage id; values whose lifetimes do not overlap share a
** storage.  A value is live from the binding that defines it to the last
** binding that reads it.  A binding's outputs are placed before its dead
** inputs are released, so in general no kernel writes over its own inputs.
** A storage is sized for its largest value (at run time, when symbolic dims
** are bound), so when choosing a free storage for a value of known size the
** pass takes the smallest one that is large enough (best fit), else the
** largest one (the lowest id among equals).  The free storages are kept in
** a treap ordered by (bytes, id), so each choice is one descent and the pass
** takes O(n log n) for n values, however many storages are free at once.
** Returned values get no storage: they live in the output buffers the
** runtime owns.
**
** In place.  A binding `y = call_tir(k, args)` writes y into the storage of
** an argument a (the first that qualifies) when
**   - the call's pattern kind (binding->pattern: the op's, kept by
**     legalize; a fused call's is its group's highest member pattern) is
**     elementwise or broadcast, and the call has one output;
**   - a is an intermediate with a storage (not a parameter, a constant or
**     a returned value) whose last use is this binding;
**   - a has exactly y's type: dtype and shape (symbolic dims the same
**     symbols), so the storage, already sized for a, holds y.
** y then takes a's storage and a's storage is not released.  For example
** (s: storage ids)
**
**   before:  t1 = relu(x)   s0        after:  t1 = relu(x)   s0
**            t2 = exp(t1)   s1                t2 = exp(t1)   s0 (in place)
**            t3 = add(t2,z) s0                t3 = add(t2,z) s0 (in place)
**            y  = neg(t3)   (returned)        y  = neg(t3)   (returned)
**
** Why the kernel computes the same thing: a kernel of an elementwise or
** broadcast call reads each argument of the output's shape at the output
** element's own index: out[i] = f(a[i], b[bcast(i)], ...), and a fused
** group of such ops is a composition of such maps.  Broadcasting only
** grows shapes, so every member on the path from a (of the output's shape)
** to the output has that shape, and a is read at index i only.  A loop
** nest may be split, reordered, vectorized or parallelized, and a fused
** kernel may compute a member into a buffer of its own first, but each
** out[i] is written once, after every read of a[i] that feeds it (its
** value depends on them), and no read of a[j] feeds any out[i], i != j.
** So when out and a are the same memory, the write of out[i] lands where
** only a[i] was, which nothing reads afterwards.  The same holds for the
** code generator's alias scopes ("tir.noalias"): moving a load of a[i]
** below the store of out[i] would break the data dependency, and the
** loads of other elements are unaffected by it.  An injective op (a
** transpose, a gather), a reduction, an opaque kernel, an external
** function or a call with several outputs may read a[j] after writing
** out[i] = a[j]'s memory, and is never planned in place.
**
** Run-time loops.  Between cf_loop and cf_loop_end the bindings run once
** per iteration: a value defined before the loop and read in its body lives
** until cf_loop_end, and so do the body's inputs, cf_loop's outputs, which
** cf_loop_end writes for the next iteration (extend_loops).  The branches
** of a run-time If need nothing: in binding order, a value either branch
** reads stays live through both.
**
** The runtime sizes an arena storage for the largest of its tensors and
** points each tensor at it, so an input and an output sharing a storage at
** one step need nothing more; a storage sized as the run goes (computed
** dims) never grows at such a step, as both have one type, and should it,
** the runtime copies the input along (runtime/session.c).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph/pass.h"

typedef struct storage {
  int64_t bytes; /* largest static size seen; -1 if some value is symbolic */
  int free;
  int left, right; /* children in the treap of free storages; -1: none */
  uint32_t prio;   /* treap priority: a max-heap on it */
} storage;

static int64_t value_bytes(const mlc_value *v) {
  int64_t n = mlc_type_numel(&v->type);
  if (n < 0) return -1;
  return n * (int64_t)mlc_dtype_size(v->type.dtype);
}

/* ---- the treap of free storages, ordered by (bytes, id) ------------------ */

/* A fixed pseudo-random priority for storage |id| (the same plan every run). */
static uint32_t mix(int id) {
  uint32_t x = (uint32_t)id + 0x9e3779b9u;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/* Whether storage |a| comes before the key (|bytes|, |id|). */
static int before(const storage *st, int a, int64_t bytes, int id) {
  return st[a].bytes < bytes || (st[a].bytes == bytes && a < id);
}

/* Splits |t| into the storages before (|bytes|, |id|) and the others. */
static void split(storage *st, int t, int64_t bytes, int id, int *lo, int *hi) {
  if (t < 0) {
    *lo = *hi = -1;
  } else if (before(st, t, bytes, id)) {
    split(st, st[t].right, bytes, id, &st[t].right, hi);
    *lo = t;
  } else {
    split(st, st[t].left, bytes, id, lo, &st[t].left);
    *hi = t;
  }
}

/* Joins |a| and |b|, every storage of |a| ordered before those of |b|. */
static int merge(storage *st, int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  if (st[a].prio >= st[b].prio) {
    st[a].right = merge(st, st[a].right, b);
    return a;
  }
  st[b].left = merge(st, a, st[b].left);
  return b;
}

static void release(storage *st, int *root, int id) {
  if (st[id].free) return;
  st[id].free = 1;
  st[id].left = st[id].right = -1;
  int lo, hi;
  split(st, *root, st[id].bytes, id, &lo, &hi);
  *root = merge(st, merge(st, lo, id), hi);
}

static void take(storage *st, int *root, int id) {
  int lo, mid, hi;
  split(st, *root, st[id].bytes, id, &lo, &hi);
  split(st, hi, st[id].bytes, id + 1, &mid, &hi);
  *root = merge(st, lo, hi);
  st[id].free = 0;
}

/* The first free storage of at least |bytes| bytes in (bytes, id) order, or -1. */
static int lower_bound(const storage *st, int t, int64_t bytes) {
  int best = -1;
  while (t >= 0) {
    if (st[t].bytes >= bytes) {
      best = t;
      t = st[t].left;
    } else {
      t = st[t].right;
    }
  }
  return best;
}

/* Picks a free storage for |need| bytes (-1: unknown), or -1 for a new one:
** the smallest that is large enough, else the largest; the lowest id among
** storages of one size. */
static int pick(const storage *st, int root, int64_t need) {
  if (root < 0) return -1;
  int fit = need >= 0 ? lower_bound(st, root, need) : -1;
  if (fit >= 0) return fit;
  int t = root;
  while (st[t].right >= 0) t = st[t].right;
  return lower_bound(st, root, st[t].bytes);
}

/* The argument of |b| (at position |pos|) whose storage its output may
** take (see the header), or NULL. */
static mlc_value *in_place_arg(const mlc_binding *b, int pos, const int *last_use,
                               const char *released) {
  if (b->kind != MLC_CALL_TIR || b->nouts != 1) return NULL;
  if (b->pattern != MLC_PATTERN_ELEMWISE && b->pattern != MLC_PATTERN_BROADCAST) return NULL;
  const mlc_value *out = b->outs[0];
  for (int a = 0; a < b->nargs; a++) {
    mlc_value *v = b->args[a];
    if (v->kind == MLC_VALUE_VAR && v->storage >= 0 && last_use[v->id] == pos && !released[v->id] &&
        mlc_type_equal(&v->type, &out->type))
      return v;
  }
  return NULL;
}

/*
** Run-time loops (cf_loop ... cf_loop_end): the body's bindings run once per
** iteration, so a value defined before a loop and read inside it stays live
** until the loop's end, and the body's inputs (cf_loop's outputs), which
** cf_loop_end writes for the next iteration, live until the end too.
** Raises |last_use| (by value id, positions in binding order) accordingly.
*/
static mlc_status extend_loops(const mlc_func *f, int nv, int *last_use) {
  int npos = 0, nloops = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int k = 0; k < f->blocks[bi].n; k++, npos++)
      nloops += f->blocks[bi].bindings[k]->op == MLC_OP_CF_LOOP && f->blocks[bi].bindings[k]->kind != MLC_CALL_TIR;
  if (nloops == 0) return NULL;
  int *def = mlc_mem_alloc(sizeof(int) * (size_t)(nv ? nv : 1));
  int *in = mlc_mem_alloc(sizeof(int) * (size_t)(npos ? npos : 1)); /* innermost loop around a position */
  int *begin = mlc_mem_alloc(sizeof(int) * (size_t)nloops), *end = mlc_mem_alloc(sizeof(int) * (size_t)nloops);
  int *parent = mlc_mem_alloc(sizeof(int) * (size_t)nloops);
  mlc_status s = NULL;
  if (!def || !in || !begin || !end || !parent) {
    s = mlc_oom();
    goto done;
  }
  for (int i = 0; i < nv; i++) def[i] = -1;
  int pos = 0, nl = 0, top = -1;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int k = 0; k < f->blocks[bi].n; k++, pos++) {
      const mlc_binding *b = f->blocks[bi].bindings[k];
      int loop_op = b->kind != MLC_CALL_TIR && b->kind != MLC_CALL_FUNC;
      in[pos] = top;
      if (loop_op && b->op == MLC_OP_CF_LOOP && nl < nloops) {
        begin[nl] = pos;
        end[nl] = -1;
        parent[nl] = top;
        top = nl++;
      } else if (loop_op && b->op == MLC_OP_CF_LOOP_END && top >= 0) {
        end[top] = pos;
        top = parent[top];
      }
      for (int o = 0; o < b->nouts; o++) def[b->outs[o]->id] = pos;
    }
  pos = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int k = 0; k < f->blocks[bi].n; k++, pos++) {
      const mlc_binding *b = f->blocks[bi].bindings[k];
      for (int a = 0; a < b->nargs; a++) {
        const mlc_value *v = b->args[a];
        if (v->kind != MLC_VALUE_VAR) continue;
        for (int l = in[pos]; l >= 0 && begin[l] > def[v->id]; l = parent[l])
          if (end[l] > last_use[v->id]) last_use[v->id] = end[l];
      }
    }
  for (int l = 0; l < nl; l++) {
    if (end[l] < 0) continue;
    pos = 0;
    for (int bi = 0; bi < f->nblocks; bi++)
      for (int k = 0; k < f->blocks[bi].n; k++, pos++)
        if (pos == begin[l]) {
          const mlc_binding *b = f->blocks[bi].bindings[k];
          for (int o = 0; o < b->nouts; o++)
            if (end[l] > last_use[b->outs[o]->id]) last_use[b->outs[o]->id] = end[l];
        }
  }
done:
  mlc_mem_free(def);
  mlc_mem_free(in);
  mlc_mem_free(begin);
  mlc_mem_free(end);
  mlc_mem_free(parent);
  return s;
}

static mlc_status plan_func(mlc_module *m, mlc_func *f) {
  int nv = m->next_value_id;
  int *last_use = mlc_mem_alloc(sizeof(int) * (size_t)(nv ? nv : 1));
  char *is_ret = mlc_mem_calloc((size_t)(nv ? nv : 1), 1);
  char *released = mlc_mem_calloc((size_t)(nv ? nv : 1), 1);
  storage *st = NULL;
  int nst = 0, cap = 0, root = -1;
  mlc_status s = NULL;
  if (!last_use || !is_ret || !released) {
    s = mlc_oom();
    goto done;
  }
  for (int i = 0; i < nv; i++) last_use[i] = -1;
  for (int i = 0; i < f->nrets; i++) is_ret[f->rets[i]->id] = 1;
  int pos = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int k = 0; k < f->blocks[bi].n; k++, pos++) {
      mlc_binding *b = f->blocks[bi].bindings[k];
      for (int a = 0; a < b->nargs; a++) last_use[b->args[a]->id] = pos;
    }
  if ((s = extend_loops(f, nv, last_use))) goto done;
  pos = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int k = 0; k < f->blocks[bi].n; k++, pos++) {
      mlc_binding *b = f->blocks[bi].bindings[k];
      for (int o = 0; o < b->nouts; o++) {
        mlc_value *v = b->outs[o];
        v->storage = -1;
        if (is_ret[v->id]) continue;
        mlc_value *in = in_place_arg(b, pos, last_use, released);
        if (in) {
          v->storage = in->storage;
          released[in->id] = 1; /* its storage now holds v */
          continue;
        }
        int64_t need = value_bytes(v);
        int id = pick(st, root, need);
        if (id >= 0) take(st, &root, id);
        if (id < 0) {
          if (nst == cap) {
            cap = cap ? cap * 2 : 16;
            storage *ns = mlc_mem_realloc(st, sizeof *st * (size_t)cap);
            if (!ns) {
              s = mlc_oom();
              goto done;
            }
            st = ns;
          }
          id = nst++;
          st[id].bytes = 0;
          st[id].free = 0;
          st[id].prio = mix(id);
        }
        if (need < 0 || st[id].bytes < 0)
          st[id].bytes = -1;
        else if (need > st[id].bytes)
          st[id].bytes = need;
        v->storage = id;
      }
      /* Release the inputs whose last use this was, then dead outputs. */
      for (int a = 0; a < b->nargs; a++) {
        mlc_value *v = b->args[a];
        if (v->kind == MLC_VALUE_VAR && v->storage >= 0 && last_use[v->id] == pos &&
            !released[v->id]) {
          released[v->id] = 1;
          release(st, &root, v->storage);
        }
      }
      for (int o = 0; o < b->nouts; o++) {
        mlc_value *v = b->outs[o];
        if (v->storage >= 0 && last_use[v->id] < 0) {
          released[v->id] = 1;
          release(st, &root, v->storage);
        }
      }
    }
  f->nstorages = nst;
done:
  mlc_mem_free(last_use);
  mlc_mem_free(is_ret);
  mlc_mem_free(released);
  mlc_mem_free(st);
  return s;
}

mlc_status mlc_pass_plan_memory(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)ctx;
  for (int i = 0; i < m->nfuncs; i++) MLC_RETURN_IF_ERROR(plan_func(m, m->funcs[i]));
  return NULL;
}
